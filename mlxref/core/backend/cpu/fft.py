"""The discrete Fourier transform's kernel: Cooley-Tukey, Bluestein, the plain sum.

Read alongside: mlx/backend/cpu/fft.cpp (``FFT::eval_cpu``, which hands the
whole transform to pocketfft's ``c2c``, ``r2c`` and ``c2r``).

The forward transform is unnormalized, the inverse divides by the number of
points transformed, as MLX's kernel does (``norm`` is a multiply in
``fft_impl``, mlx/fft.cpp). The transform of one line is a radix-2
Cooley-Tukey FFT when the length is a power of two and the plain O(n^2) sum
otherwise (for long numeric lines, Bluestein's convolution by radix-2
transforms); all run in double precision (pocketfft works in float32) and
the result is stored as the dtype. On SymPy elements the twiddle factors are
SymPy's exact cosines and sines, so ``mlxref.symbolic`` can check the rules
exactly.
Read next: mlxref/core/primitives/fft.py (the FFT primitive and its rules).
"""

import cmath
import functools
import math

from ...scalar import is_symbolic, sympy
from .copy import row_major_strides


def _twiddle(k, n, sign, symbolic):
    """``exp(sign 2 pi i k / n)``; exact (SymPy) for symbolic elements."""
    if symbolic:
        angle = 2 * sympy.pi * sympy.Rational(k, n)
        return sympy.cos(angle) + sign * sympy.I * sympy.sin(angle)
    return cmath.exp(sign * 2j * math.pi * k / n)


@functools.lru_cache(maxsize=64)
def _twiddles(n, sign):
    """The numeric ``exp(sign 2 pi i k / n)`` for ``k < n``, computed once per length."""
    return tuple(_twiddle(k, n, sign, False) for k in range(n))


def dft(x, sign, symbolic):
    """The plain sum ``X_k = sum_j x_j exp(sign 2 pi i j k / n)``, for any length."""
    n = len(x)
    w = _twiddles(n, sign) if not symbolic else [_twiddle(k, n, sign, True) for k in range(n)]
    return [sum(x[j] * w[(j * k) % n] for j in range(n)) for k in range(n)]


def radix2(x, w):
    """Radix-2 Cooley-Tukey for a power-of-two length n, ``w`` the first n/2
    twiddles ``exp(sign 2 pi i k / n)``: the transform is built from the
    transforms of the even and of the odd elements (whose twiddles are every
    other one of ``w``), ``X_k = E_k + w_k O_k`` and ``X_{k+n/2} = E_k - w_k O_k``."""
    if len(x) == 1:
        return list(x)
    even = radix2(x[0::2], w[0::2])
    odd = radix2(x[1::2], w[0::2])
    t = [wk * o for wk, o in zip(w, odd)]
    return [e + tk for e, tk in zip(even, t)] + [e - tk for e, tk in zip(even, t)]


@functools.lru_cache(maxsize=16)
def _chirp(n, sign):
    """What Bluestein's method needs for length n, computed once per length:
    the chirp ``c_j = exp(sign pi i j^2 / n)``, the power of two ``m`` the
    convolution is done at, and the transform of ``conj(c)`` wrapped around it."""
    m = 1 << (2 * n - 2).bit_length()
    c = [cmath.exp(sign * 1j * math.pi * ((j * j) % (2 * n)) / n) for j in range(n)]
    b = [cj.conjugate() for cj in c] + [0j] * (m - 2 * n + 1) + [cj.conjugate()
                                                                  for cj in c[:0:-1]]
    return c, m, radix2(b, _twiddles(m, -1)[: m // 2])


def bluestein(x, sign):
    """The DFT of a numeric ``x`` of any length n as a convolution (Bluestein):
    ``jk = (j^2 + k^2 - (k - j)^2) / 2``, so with ``c_j = exp(sign pi i j^2 / n)``,
    ``X_k = c_k sum_j (x_j c_j) conj(c_{k-j})``, a convolution done with
    radix-2 transforms of a power of two at least 2n - 1 long. O(n log n)
    where the plain sum is O(n^2): what lets MLX's tests of long transforms run."""
    n = len(x)
    c, m, b_hat = _chirp(n, sign)
    a = [v * cj for v, cj in zip(x, c)] + [0j] * (m - n)
    a_hat = radix2(a, _twiddles(m, -1)[: m // 2])
    conv = radix2([p * q for p, q in zip(a_hat, b_hat)], _twiddles(m, 1)[: m // 2])
    return [ck * v / m for ck, v in zip(c, conv)]


def transform(x, sign, symbolic):
    """The DFT of the list ``x`` (``sign`` -1: forward, +1: inverse, unscaled).

    Radix-2 Cooley-Tukey for powers of two; other lengths take the plain sum
    (always for SymPy elements, whose twiddles are exact), or Bluestein's
    convolution when they are numbers and more than 16.
    """
    n = len(x)
    if n <= 1:
        return list(x)
    if n & (n - 1) == 0:
        w = _twiddles(n, sign)[: n // 2] if not symbolic else [
            _twiddle(k, n, sign, True) for k in range(n // 2)]
        return radix2(list(x), w)
    if symbolic or n <= 16:
        return dft(x, sign, symbolic)
    return bluestein(x, sign)


def _re(v):
    return sympy.re(v) if is_symbolic(v) else complex(v).real


def _hermitian(half, n):
    """The full spectrum of length ``n`` a real signal has, from its first
    ``n // 2 + 1`` frequencies: ``X_{n-k} = conj(X_k)``. As pocketfft, only the
    real parts of the zero (and, for even n, the n/2) frequency are read."""
    full = list(half[: n // 2 + 1])
    full[0] = _re(full[0])
    if n % 2 == 0:
        full[n // 2] = _re(full[n // 2])
    conj = [sympy.conjugate(v) if is_symbolic(v) else complex(v).conjugate()
            for v in full[1 : (n + 1) // 2]]
    return full + conj[::-1]


def _along_axis(data, shape, axis, out_size, line):
    """Apply ``line`` (a list -> list of ``out_size``) to every line of the
    row-major ``data`` of ``shape`` along ``axis``; the new data and shape."""
    n = shape[axis]
    stride = row_major_strides(shape)[axis]
    outer = math.prod(shape[:axis])
    out_shape = shape[:axis] + (out_size,) + shape[axis + 1 :]
    out = [0] * math.prod(out_shape)
    for o in range(outer):
        base, out_base = o * n * stride, o * out_size * stride
        for i in range(stride):
            result = line(data[base + i : base + i + n * stride : stride])
            out[out_base + i : out_base + i + out_size * stride : stride] = result
    return out, out_shape


def fft(data, shape, axes, inverse, real, n):
    """The transform over ``axes`` of the row-major ``data`` of ``shape``
    (``FFT::eval_cpu``): complex to complex, real to the half spectrum of the
    last axis (``real``), or such a half spectrum to ``n`` real points on the
    last axis (``real`` and ``inverse``)."""
    data = list(data)
    if not data:
        return []
    symbolic = any(is_symbolic(v) for v in data)
    sign = 1 if inverse else -1
    complex_axes = list(axes)
    if real and inverse:  # the last axis comes last: complex to real
        complex_axes = complex_axes[:-1]
    elif real:  # the last axis comes first: real to half a spectrum
        m = shape[axes[-1]] // 2 + 1
        data, shape = _along_axis(data, shape, axes[-1], m,
                                  lambda v: transform(v, -1, symbolic)[:m])
        complex_axes = complex_axes[:-1]
    for ax in complex_axes:
        data, shape = _along_axis(data, shape, ax, shape[ax],
                                  lambda v: transform(v, sign, symbolic))
    if real and inverse:
        data, shape = _along_axis(
            data, shape, axes[-1], n,
            lambda v: [_re(y) for y in transform(_hermitian(v, n), 1, symbolic)])
    if inverse:
        count = math.prod(shape[ax] for ax in axes)
        data = [v / count for v in data]
    return data
