"""The Walsh-Hadamard transform along the last axis: ``Hadamard``.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Hadamard`` and its
rules) and mlx/ops.cpp (``hadamard_transform``, which builds the node).
Read next: mlxref/core/backend/cpu/hadamard.py (MLX's matrices, the
butterflies and their roundings).
"""

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.hadamard import decompose_hadamard, hadamard, hadamard_matrix
from .base import Primitive


class Hadamard(Primitive):
    """``scale * H @ x`` along the last axis, H the size's Hadamard matrix
    (Sylvester's for a power of two; MLX's 12, 20 or 28 point matrix times a
    power of two otherwise). ``scale`` is a float32.

    MLX's rules: jvp and vjp are the transform of the tangent or cotangent
    (the vjp is exact for symmetric H: powers of two and 12; for 20 and 28,
    whose matrices are not symmetric, MLX's vjp is wrong and mlxref applies
    Hᵀ); vmap transforms the batch in place, moving it to the front if it is
    the last axis.
    """

    def __init__(self, scale):
        self.scale = _dt.float32.cast(float(scale))

    def params(self):
        return {"scale": self.scale}

    def eval(self, inputs):
        (x,) = inputs
        return [hadamard(x.data(), x.shape[-1], x.dtype, self.scale)]

    def jvp(self, primals, tangents, argnums):
        return [ops.hadamard_transform(tangents[0], self.scale)]

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        n, m = decompose_hadamard(cot.shape[-1])
        if m in (1, 12):  # H is symmetric: MLX's rule
            return [ops.hadamard_transform(cot, self.scale)]
        # (H_m ⊗ H_n)ᵀ: H_n (symmetric) on the fast axis, then H_mᵀ, then the scale
        y = ops.reshape(cot, cot.shape[:-1] + (m, n))
        if n > 1:
            y = ops.hadamard_transform(y, 1.0)
        y = ops.matmul(ops.swapaxes(y, -1, -2), array(hadamard_matrix(m), y.dtype))
        y = ops.reshape(ops.swapaxes(y, -1, -2), cot.shape)
        return [ops.multiply(y, array(self.scale, y.dtype))]

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        if ax == x.ndim - 1:
            return [ops.hadamard_transform(ops.moveaxis(x, ax, 0), self.scale)], [0]
        return [ops.hadamard_transform(x, self.scale)], [ax]
