"""The discrete Fourier transform's kernel: which lines are transformed, in which order.

Read alongside: mlx/backend/cpu/fft.cpp (``FFT::eval_cpu``, which hands the
whole transform to pocketfft's ``c2c``, ``r2c`` and ``c2r`` with a float32
scale of ``1 / n`` for an inverse) and mlx/3rdparty/pocketfft.h (those three
functions and ``general_nd``).

Numbers are transformed as MLX's CPU does, so the float32 bits are MLX's:

- complex to complex: one axis after another in the order of ``axes``,
  every line along it by pocketfft's plan (pocketfft.py); the scale is
  multiplied in by the first axis's transforms, and each axis's results are
  float32 before the next axis reads them;
- real to complex (rfft): the last of ``axes`` first, as reals to half a
  spectrum, then the other axes complex to complex;
- complex to real (irfft): the other axes complex to complex first, then the
  last axis from half a spectrum to ``n`` reals, with the scale. Only the
  real parts of the zero (and, for even n, the n/2) frequency are read.

On SymPy elements the transform is the plain sum with SymPy's exact
cosines and sines as twiddle factors, divided by the number of points for an
inverse, so ``mlxref.symbolic`` can check the rules exactly.
Read next: pocketfft.py (the float32 plans); mlxref/core/primitives/fft.py
(the FFT primitive and its rules).
"""

import math
import struct

from ...scalar import is_symbolic, sympy
from . import pocketfft
from .copy import row_major_strides

_FLOAT32 = struct.Struct("f")


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
    if any(is_symbolic(v) for v in data):
        return _exact(data, tuple(shape), list(axes), inverse, real, n)
    shape, axes, forward = tuple(shape), list(axes), not inverse
    out_shape = list(shape)
    if real and inverse:
        out_shape[axes[-1]] = n
    # MLX: ``1.0f / nelem``, in float32, multiplied in by pocketfft.
    scale = _FLOAT32.unpack(_FLOAT32.pack(1.0 / math.prod(out_shape[ax] for ax in axes)))[0] \
        if inverse else 1.0
    if not real:
        return _complex_axes(data, shape, axes, forward, scale)[0]
    if forward:  # r2c: the last axis, then the others
        data, shape = _along_axis(data, shape, axes[-1], shape[axes[-1]] // 2 + 1, _real_to_half)
        return _complex_axes(data, shape, axes[:-1], True, 1.0)[0]
    data, shape = _complex_axes(data, shape, axes[:-1], False, 1.0)  # c2r: the others, then the last
    return _along_axis(data, shape, axes[-1], n, lambda half: _half_to_real(half, n, scale))[0]


def _complex_axes(data, shape, axes, forward, scale):
    """``general_nd``: every axis in turn, the scale on the first one only."""
    for ax in axes:
        data, shape = _along_axis(
            data, shape, ax, shape[ax],
            lambda line, s=scale: pocketfft.complex_line([complex(v) for v in line], forward, s))
        scale = 1.0
    return data, shape


def _real_to_half(line):
    """``general_r2c`` on one line: its halfcomplex spectrum ``[r0, r1, i1,
    ...]`` unpacked into the first ``n // 2 + 1`` frequencies."""
    h = pocketfft.real_line([v.real for v in line], True)
    n = len(h)
    return [complex(h[0], 0.0)] + [complex(h[i], h[i + 1] if i + 1 < n else 0.0)
                                    for i in range(1, n, 2)]


def _half_to_real(half, n, scale):
    """``general_c2r`` on one line: the first ``n // 2 + 1`` frequencies
    packed as a halfcomplex spectrum (the imaginary parts of the zero and,
    for even n, the n/2 frequency dropped), then transformed to n reals."""
    half = [complex(v) for v in half]
    packed = [half[0].real]
    for k in range(1, (n - 1) // 2 + 1):
        packed += [half[k].real, half[k].imag]
    if n % 2 == 0 and n > 1:
        packed.append(half[n // 2].real)
    return pocketfft.real_line(packed, False, scale)


# --- symbols: the exact sums --------------------------------------------------------------


def dft(x, sign):
    """The plain sum ``X_k = sum_j x_j exp(sign 2 pi i j k / n)`` with
    SymPy's exact twiddle factors (``sign`` -1: forward, +1: inverse, unscaled)."""
    n = len(x)
    w = []
    for k in range(n):
        angle = 2 * sympy.pi * sympy.Rational(k, n)
        w.append(sympy.cos(angle) + sign * sympy.I * sympy.sin(angle))
    return [sum(x[j] * w[(j * k) % n] for j in range(n)) for k in range(n)]


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


def _exact(data, shape, axes, inverse, real, n):
    """The transform of SymPy elements, never rounded: the same axes in the
    same order as for numbers, each line by the plain sum."""
    sign = 1 if inverse else -1
    complex_axes = list(axes)
    if real and inverse:  # the last axis comes last: complex to real
        complex_axes = complex_axes[:-1]
    elif real:  # the last axis comes first: real to half a spectrum
        m = shape[axes[-1]] // 2 + 1
        data, shape = _along_axis(data, shape, axes[-1], m, lambda v: dft(v, -1)[:m])
        complex_axes = complex_axes[:-1]
    for ax in complex_axes:
        data, shape = _along_axis(data, shape, ax, shape[ax], lambda v: dft(v, sign))
    if real and inverse:
        data, shape = _along_axis(data, shape, axes[-1], n,
                                  lambda v: [_re(y) for y in dft(_hermitian(v, n), 1)])
    if inverse:
        count = math.prod(shape[ax] for ax in axes)
        data = [v / count for v in data]
    return data
