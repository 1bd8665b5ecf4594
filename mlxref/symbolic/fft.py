"""Symbolic cases for the Fourier transform primitive (FFT).

Tiny transforms, so the exact twiddle factors (SymPy's cosines and sines of
multiples of 2 pi / n) stay small: a complex fft of a power-of-two length
and of length 3, an inverse, the real transforms rfft and irfft (the halved
and doubled frequencies of their vjps) of even and odd lengths, a
zero-padded one, and two-axis rfft2 and irfft2.
"""

from .. import core as mx
from ..core.primitives import fft as F
from . import Case

CASES = [
    Case(F.FFT, lambda x: mx.fft.fft(x), ((4,),), domain="complex",
         note="fft of length 4"),
    Case(F.FFT, lambda x: mx.fft.ifft(x, axis=0), ((3, 1),), domain="complex",
         note="ifft of length 3 along the first axis"),
    Case(F.FFT, lambda x: mx.fft.rfft(x), ((3,),), note="rfft of odd length"),
    Case(F.FFT, lambda x: mx.fft.rfft(x, n=4), ((3,),), note="rfft zero-padded to 4"),
    Case(F.FFT, lambda x: mx.fft.irfft(x), ((3,),), domain="complex",
         note="irfft to 4 points (zero and n/2 frequencies read once)"),
    Case(F.FFT, lambda x: mx.fft.irfft(x, n=3), ((2,),), domain="complex",
         note="irfft to an odd length"),
    Case(F.FFT, lambda x: mx.fft.rfft2(x), ((2, 3),), note="rfft2: two axes, the last real"),
    Case(F.FFT, lambda x: mx.fft.irfft2(x, s=(2, 2), axes=(0, 1)), ((2, 2),),
         domain="complex", note="irfft2, the first axis complex"),
]
