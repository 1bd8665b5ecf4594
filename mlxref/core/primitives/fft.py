"""The discrete Fourier transform primitive, ``FFT``.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``FFT``: its vjp,
jvp and vmap) and mlx/fft.cpp (``fft_impl``), which pads or crops the input
to the sizes asked for, casts it, builds the node and scales the result. So
the primitive only transforms whole axes:

- ``real`` False: complex64 in, complex64 out, the same shape;
- ``real`` and not ``inverse`` (rfft): float32 in; the last of ``axes``
  keeps its first ``n // 2 + 1`` frequencies (the rest are their conjugates);
- ``real`` and ``inverse`` (irfft): such a half spectrum in, float32 out,
  ``n`` long on the last of ``axes``. MLX reads ``n`` from the output array's
  shape; mlxref keeps it on the primitive.

Read next: mlxref/core/backend/cpu/fft.py (the kernel: MLX's pocketfft plans
in float32, the plain sum on symbols).
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.fft import fft
from .base import Primitive, make_array


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
        return [fft(x.data(), x.shape, self.axes, self.inverse, self.real, self.n)]

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
