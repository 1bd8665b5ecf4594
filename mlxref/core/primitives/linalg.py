"""The matrix primitives: the matrix product, the fused ``c + a @ b``, and the inverse.

Read alongside: mlx/primitives.h (``Matmul``, ``AddMM``, ``Inverse``),
mlx/primitives.cpp (their rules) and mlx/ops.cpp (``matmul``, ``addmm``),
which promotes 1-D operands and broadcasts the batch dimensions before it
builds the node, so the primitive only ever sees two arrays of shapes
``(*batch, M, K)`` and ``(*batch, K, N)`` with the same ``batch``.
Read next: mlxref/core/backend/cpu/matmul.py (the products in MLX's float32
steps) and inverse.py (LAPACK's pivots).
"""

from .. import ops
from ..array import array
from ..printing import format_shape
from ..backend.cpu.inverse import inverse
from ..backend.cpu.matmul import addmm, matmul, to_float32
from .base import Primitive, batch_size, make_array, move_batch_axis, vmap_leading


class Matmul(Primitive):
    """``a @ b`` for ``a`` of shape (*batch, M, K) and ``b`` of shape (*batch, K, N)."""

    def output_shapes(self, inputs):
        a, b = inputs
        if a.shape[-1] != b.shape[-2]:
            # Only a shapeless compile's replay gets here (the op checks
            # first); MLX's kernel then reads past the end of its inputs.
            raise ValueError(
                f"[matmul] Last dimension of first input with shape {format_shape(a.shape)} "
                "must match second to last dimension of second input with shape "
                f"{format_shape(b.shape)}.")
        return [a.shape[:-1] + b.shape[-1:]]

    def vjp(self, primals, cotangents, argnums, outputs):
        """``cot @ bᴴ`` for ``a`` (M x N times N x K) and ``aᴴ @ cot`` for ``b``.

        ᴴ is the conjugate transpose (the plain transpose for real arrays):
        MLX's convention for complex inputs. Transposes swap the last two axes
        only; the batch axes are equal, so nothing needs un-broadcasting here
        (``Broadcast.vjp`` does that for the batch axes the op broadcast).
        """
        a, b = primals
        (cot,) = cotangents
        return [
            ops.matmul(cot, ops.swapaxes(ops.conjugate(b), -1, -2)) if i == 0
            else ops.matmul(ops.swapaxes(ops.conjugate(a), -1, -2), cot)
            for i in argnums
        ]

    def jvp(self, primals, tangents, argnums):
        """The product rule: ``t_a @ b + a @ t_b`` (a term per input with a tangent)."""
        a, b = primals
        terms = [
            ops.matmul(t, b) if i == 0 else ops.matmul(a, t) for i, t in zip(argnums, tangents)
        ]
        return [terms[0] if len(terms) == 1 else ops.add(terms[0], terms[1])]

    def vmap(self, inputs, axes):
        """MLX's Matmul::vmap: each batched operand's batch axis goes to the
        front, and ``ops.matmul`` broadcasts it against the other operand's
        batch dimensions (an unbatched operand is shared by every example).
        The result is batched on axis 0.
        """
        a, b = inputs
        if axes[0] is None and axes[1] is None:  # nothing batched: the node itself
            return [make_array(self, inputs)], [None]
        a, b = (x if ax is None else ops.moveaxis(x, ax, 0) for x, ax in zip(inputs, axes))
        return [ops.matmul(a, b)], [0]

    def eval(self, inputs):
        a, b = inputs
        return [matmul(a.data(), b.data(), a.shape, b.shape, a.dtype)]


def _scaled(x, factor):
    """``factor * x`` (a scalar of x's dtype times x), or ``x`` when factor is 1."""
    return x if factor == 1 else ops.multiply(array(factor, x.dtype), x)


class AddMM(Primitive):
    """``alpha * (a @ b) + beta * c`` for ``a`` (*batch, M, K), ``b`` (*batch, K, N)
    and ``c`` (*batch, M, N), in that input order (MLX's ``AddMM``).

    ``mx.addmm`` has already broadcast ``c`` to the output's shape. As BLAS's
    gemm, a ``beta`` of 0 does not read ``c`` at all (a nan there is ignored).
    """

    def __init__(self, alpha, beta):
        # C floats in MLX (``const float& alpha``): rounded to float32.
        self.alpha = to_float32(float(alpha))
        self.beta = to_float32(float(beta))

    def params(self):
        return {"alpha": self.alpha, "beta": self.beta}

    def output_shapes(self, inputs):
        a, b, _ = inputs
        return [a.shape[:-1] + b.shape[-1:]]

    def eval(self, inputs):
        a, b, c = inputs
        return [addmm(a.data(), b.data(), c.data(), a.shape, b.shape, a.dtype, self.alpha,
                      self.beta)]

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's rule: ``alpha cot @ bᵀ`` for ``a``, ``aᵀ @ alpha cot`` for ``b``,
        ``beta cot`` for ``c`` (transposes of the last two axes)."""
        a, b, _ = primals
        (cot,) = cotangents
        rules = {
            0: lambda: ops.matmul(_scaled(cot, self.alpha), ops.swapaxes(b, -1, -2)),
            1: lambda: ops.matmul(ops.swapaxes(a, -1, -2), _scaled(cot, self.alpha)),
            2: lambda: _scaled(cot, self.beta),
        }
        return [rules[i]() for i in argnums]

    def jvp(self, primals, tangents, argnums):
        """MLX's rule, the tangents' terms ``alpha t_a @ b``, ``alpha a @ t_b`` and
        ``beta t_c`` each added to the ones before (a product by ``addmm``), but
        scaled: MLX 0.32 leaves ``alpha`` and ``beta`` out of the tangent (its
        jvp is wrong unless both are 1)."""
        a, b, _ = primals
        out = None
        for i, t in zip(argnums, tangents):
            if i == 2:
                term = _scaled(t, self.beta)
                out = term if out is None else ops.add(out, term)
                continue
            x, y = (t, b) if i == 0 else (a, t)
            if out is None:
                out = _scaled(ops.matmul(x, y), self.alpha)
            else:
                out = ops.addmm(out, x, y, self.alpha, 1.0)
        return [out]

    def vmap(self, inputs, axes):
        """MLX's rule: each batched input's batch axis to the front, then
        ``addmm`` broadcasts the batch dimensions; batched on axis 0. When only
        ``c`` is batched MLX's rule fails ("input c must broadcast to the
        output shape"); mlxref broadcasts ``a`` along the batch first."""
        size = batch_size(inputs, axes)
        a, b, c = (x if ax is None else ops.moveaxis(x, ax, 0) for x, ax in zip(inputs, axes))
        if axes[0] is None and axes[1] is None:
            a = move_batch_axis(a, None, size)
        return [ops.addmm(c, a, b, self.alpha, self.beta)], [0]


def _triangle(n, upper, dtype):
    """A constant (n, n) mask of the upper or lower triangle, diagonal included."""
    rows = [[1 if (j >= i if upper else j <= i) else 0 for j in range(n)] for i in range(n)]
    return array(rows, dtype)


class Inverse(Primitive):
    """The inverse of each matrix in the last two axes (MLX's ``Inverse``).

    ``tri``: the matrix is triangular (``upper`` or lower) and only that
    triangle is read (``linalg.tri_inv``); the other triangle of the result
    is zero. A singular matrix raises MLX's RuntimeError when it is
    evaluated (backend/cpu/inverse.py).
    """

    mlx_has_vjp = False

    def __init__(self, tri=False, upper=True):
        self.tri = bool(tri)
        self.upper = bool(upper)

    def params(self):
        return {"tri": self.tri, "upper": self.upper} if self.tri else {}

    def eval(self, inputs):
        (a,) = inputs
        return [inverse(a.data(), a.shape, self.tri, self.upper, a.dtype)]

    def _mask(self, x):
        """``x`` restricted to the triangle the primitive reads (all of it if not tri)."""
        if not self.tri:
            return x
        return ops.multiply(x, _triangle(x.shape[-1], self.upper, x.dtype))

    def vjp(self, primals, cotangents, argnums, outputs):
        """With ``B = A⁻¹`` the vjp is ``-Bᵀ G Bᵀ`` (restricted
        to the triangle read, for tri_inv). MLX 0.32 defines no vjp for
        Inverse ("Not implemented"); this is the derivative."""
        (cot,) = cotangents
        bt = ops.swapaxes(outputs[0], -1, -2)
        return [self._mask(ops.negative(ops.matmul(ops.matmul(bt, cot), bt)))]

    def jvp(self, primals, tangents, argnums):
        """``-B dA B`` with ``B = A⁻¹`` (dA restricted to the triangle read, for
        tri_inv). MLX 0.32 defines no jvp for Inverse; this is the derivative."""
        (t,) = tangents
        b = make_array(self, primals)
        return [ops.negative(ops.matmul(ops.matmul(b, self._mask(t)), b))]

    vmap = vmap_leading
