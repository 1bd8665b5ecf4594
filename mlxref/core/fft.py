"""``mx.fft``: the discrete Fourier transforms MLX keeps in their own namespace.

Read alongside: python/src/fft.cpp (the bindings) and mlx/fft.cpp. The ops
live in ``ops/fft.py`` and the one primitive, ``FFT``, in
``primitives/fft.py``; this module only names them as ``mx.fft`` does.
"""

from .ops.fft import (fft, fft2, fftfreq, fftn, fftshift, ifft, ifft2, ifftn, ifftshift, irfft,
                      irfft2, irfftn, istft, rfft, rfft2, rfftfreq, rfftn, stft)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq", "stft", "istft"]
