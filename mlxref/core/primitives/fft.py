"""The discrete Fourier transform primitive, ``FFT``.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``FFT``: its vjp,
jvp and vmap), mlx/backend/cpu/fft.cpp (which hands the work to pocketfft)
and mlx/fft.cpp (``fft_impl``), which pads or crops the input to the sizes
asked for, casts it, builds the node and scales the result. So the
primitive only transforms whole axes:

- ``real`` False: complex64 in, complex64 out, the same shape;
- ``real`` and not ``inverse`` (rfft): float32 in; the last of ``axes``
  keeps its first ``n // 2 + 1`` frequencies (the rest are their conjugates);
- ``real`` and ``inverse`` (irfft): such a half spectrum in, float32 out,
  ``n`` long on the last of ``axes``. MLX reads ``n`` from the output array's
  shape; mlxref keeps it on the primitive.

The forward transform is unnormalized, the inverse divides by the number of
points transformed, as MLX's kernel does (``norm`` is a multiply in
``fft_impl``). The transform of one line is a radix-2 Cooley-Tukey FFT when
the length is a power of two and the plain O(n^2) sum otherwise (for long
numeric lines, Bluestein's convolution by radix-2 transforms); all run in
double precision (pocketfft works in float32) and the result is stored as
the dtype. On SymPy elements the twiddle factors are SymPy's exact cosines
and sines, so ``mlxref.symbolic`` can check the rules exactly.
"""

import cmath
import functools
import math

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..scalar import is_symbolic, sympy
from ..backend.cpu.copy import row_major_strides
from .base import Primitive, make_array


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


def _dft(x, sign, symbolic):
    """The plain sum ``X_k = sum_j x_j exp(sign 2 pi i j k / n)``, for any length."""
    n = len(x)
    w = _twiddles(n, sign) if not symbolic else [_twiddle(k, n, sign, True) for k in range(n)]
    return [sum(x[j] * w[(j * k) % n] for j in range(n)) for k in range(n)]


def _radix2(x, w):
    """Radix-2 Cooley-Tukey for a power-of-two length n, ``w`` the first n/2
    twiddles ``exp(sign 2 pi i k / n)``: the transform is built from the
    transforms of the even and of the odd elements (whose twiddles are every
    other one of ``w``), ``X_k = E_k + w_k O_k`` and ``X_{k+n/2} = E_k - w_k O_k``."""
    if len(x) == 1:
        return list(x)
    even = _radix2(x[0::2], w[0::2])
    odd = _radix2(x[1::2], w[0::2])
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
    return c, m, _radix2(b, _twiddles(m, -1)[: m // 2])


def _bluestein(x, sign):
    """The DFT of a numeric ``x`` of any length n as a convolution (Bluestein):
    ``jk = (j^2 + k^2 - (k - j)^2) / 2``, so with ``c_j = exp(sign pi i j^2 / n)``,
    ``X_k = c_k sum_j (x_j c_j) conj(c_{k-j})``, a convolution done with
    radix-2 transforms of a power of two at least 2n - 1 long. O(n log n)
    where the plain sum is O(n^2): what lets MLX's tests of long transforms run."""
    n = len(x)
    c, m, b_hat = _chirp(n, sign)
    a = [v * cj for v, cj in zip(x, c)] + [0j] * (m - n)
    a_hat = _radix2(a, _twiddles(m, -1)[: m // 2])
    conv = _radix2([p * q for p, q in zip(a_hat, b_hat)], _twiddles(m, 1)[: m // 2])
    return [ck * v / m for ck, v in zip(c, conv)]


def _transform(x, sign, symbolic):
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
        return _radix2(list(x), w)
    if symbolic or n <= 16:
        return _dft(x, sign, symbolic)
    return _bluestein(x, sign)


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


class FFT(Primitive):
    """The DFT over ``axes`` (MLX's ``FFT``: axes, inverse, real).

    ``n`` is the length of the output's last transformed axis for an inverse
    real transform (irfft); it is not used otherwise.
    """

    def __init__(self, axes, inverse, real, n=None):
        self.axes = tuple(axes)
        self.inverse = bool(inverse)
        self.real = bool(real)
        self.n = n if self.real and self.inverse else None

    def params(self):
        p = {"axes": self.axes, "inverse": self.inverse, "real": self.real}
        if self.n is not None:
            p["n"] = self.n
        return p

    def output_shapes(self, inputs):
        shape = list(inputs[0].shape)
        if self.real:
            last = self.axes[-1]
            shape[last] = self.n if self.inverse else shape[last] // 2 + 1
        return [tuple(shape)]

    def output_dtypes(self, inputs):
        return [_dt.float32 if self.real and self.inverse else _dt.complex64]

    def eval(self, inputs):
        (x,) = inputs
        data, shape = list(x.data()), x.shape
        if not data:
            return [[]]
        symbolic = any(is_symbolic(v) for v in data)
        sign = 1 if self.inverse else -1
        axes = list(self.axes)
        if self.real and self.inverse:  # the last axis comes last: complex to real
            axes = axes[:-1]
        elif self.real:  # the last axis comes first: real to half a spectrum
            m = shape[axes[-1]] // 2 + 1
            data, shape = _along_axis(data, shape, axes[-1], m,
                                      lambda v: _transform(v, -1, symbolic)[:m])
            axes = axes[:-1]
        for ax in axes:
            data, shape = _along_axis(data, shape, ax, shape[ax],
                                      lambda v: _transform(v, sign, symbolic))
        if self.real and self.inverse:
            n = self.n
            data, shape = _along_axis(
                data, shape, self.axes[-1], n,
                lambda v: [_re(y) for y in _transform(_hermitian(v, n), 1, symbolic)])
        if self.inverse:
            count = math.prod(self.output_shapes(inputs)[0][ax] for ax in self.axes)
            data = [v / count for v in data]
        return [data]

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's rule: the adjoint of the transform, in MLX's convention for
        complex numbers (the conjugate transpose).

        - fft: ``n * ifftn(cot)``; ifft: ``fftn(cot) / n`` (n: the points transformed);
        - rfft: the cotangent of each frequency that stands for two (all but
          the zero and, for even n, the n/2 one) is halved, then
          ``n * irfftn(cot, n)``: the real part of the adjoint;
        - irfft: ``rfftn(cot)``, times ``2 / n`` for the frequencies that
          stand for two and ``1 / n`` for the others.

        MLX multiplies by ``1 / n`` (and ``2 / n``) rounded to float32; mlxref
        divides by ``n``, the same to an ulp, so the rule is exact on SymPy elements.
        """
        (x,), (cot,) = primals, cotangents
        axes = list(self.axes)
        last = axes[-1]
        count = math.prod((cot if self.inverse else x).shape[ax] for ax in axes)
        fft_ops = ops.fft
        if self.real:
            # The frequencies that stand for two: 0 < k < last, where last
            # is n/2 for even n and (n + 1)/2 for odd n (no n/2 frequency).
            n = cot.shape[last] if self.inverse else x.shape[last]
            m = x.shape[last] if self.inverse else cot.shape[last]
            double = [0 < k < m - 1 + n % 2 for k in range(m)]
            shape = [1] * x.ndim
            shape[last] = m
            if self.inverse:
                mask = ops.reshape(array([2.0 if d else 1.0 for d in double], _dt.complex64),
                                   shape)
                grad = ops.multiply(fft_ops.fft_impl(cot, None, axes, True, False), mask)
                return [ops.divide(grad, array(count, _dt.complex64))]
            mask = ops.reshape(array([0.5 if d else 1.0 for d in double], _dt.complex64),
                               shape)
            sizes = [x.shape[ax] for ax in axes]
            grad = fft_ops.fft_impl(ops.multiply(cot, mask), sizes, axes, True, True)
            return [ops.multiply(grad, array(count, x.dtype))]
        if self.inverse:
            return [ops.divide(fft_ops.fft_impl(cot, None, axes, False, False),
                               array(count, _dt.complex64))]
        return [ops.multiply(fft_ops.fft_impl(cot, None, axes, False, True),
                             array(count, _dt.complex64))]

    def jvp(self, primals, tangents, argnums):
        """The transform is linear: the tangent goes through the same
        transform. (MLX recomputes the sizes from the tangent: an irfft of odd
        length ``n`` then comes out ``n - 1`` long; mlxref keeps ``n``.)"""
        (x,), (t,) = primals, tangents
        return [make_array(self, [ops.astype(t, x.dtype)])]

    def vmap(self, inputs, axes):
        """MLX's rule: the same transform with the axes after the batch axis
        shifted by one; the batch axis stays where it is. (MLX's rule
        recomputes an irfft's length as ``2 (m - 1)``; mlxref's primitive
        carries ``n``, so an odd length needs nothing more.)"""
        (x,), (ax,) = inputs, axes
        if ax is None:  # nothing batched: the node itself
            return [make_array(self, [x])], [None]
        fft_axes = [a + 1 if a >= ax else a for a in self.axes]
        return [make_array(FFT(fft_axes, self.inverse, self.real, self.n), [x])], [ax]
