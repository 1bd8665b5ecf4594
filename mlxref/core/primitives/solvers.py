"""The factorizations behind ``mx.linalg``'s solvers: Cholesky and LU.

Read alongside: mlx/primitives.h (``Cholesky``, ``LUF``), mlx/primitives.cpp
(``Cholesky::vmap``; MLX defines no other rule for either) and
mlx/linalg.cpp (``cholesky``, ``lu_helper``). The ops that build these nodes
are in mlxref/core/ops/solvers.py.
Read next: mlxref/core/backend/cpu/cholesky.py and luf.py (LAPACK's
``potrf2`` and ``getrf``, every step rounded to the dtype).
"""

from .. import dtypes as _dt
from .. import ops
from ..backend.cpu.cholesky import cholesky
from ..backend.cpu.luf import luf
from .base import Primitive, make_arrays, vmap_leading


class Cholesky(Primitive):
    """The Cholesky factor of each symmetric positive definite matrix in the
    last two axes (MLX's ``Cholesky``): lower ``L`` with ``L Lᵀ = A``, or,
    ``upper``, ``U`` with ``Uᵀ U = A``. Only that triangle of ``A`` is read;
    the other triangle of the result is zero.

    A matrix that is not positive definite raises nothing, as in MLX
    (backend/cpu/cholesky.py). MLX defines vmap only: its vjp and jvp raise
    "Not implemented", and so do mlxref's.
    """

    def __init__(self, upper=False):
        self.upper = bool(upper)

    def params(self):
        return {"upper": self.upper}

    def eval(self, inputs):
        (a,) = inputs
        return [cholesky(a.data(), a.shape, self.upper, a.dtype)]

    vmap = vmap_leading


class LUF(Primitive):
    """The LU factorization of each matrix in the last two axes (MLX's
    ``LUF``), three outputs: ``LU`` (the input's shape: unit lower ``L``
    below the diagonal, ``U`` on and above it), the ``pivots`` (uint32, one
    per step: LAPACK's, from 0) and the ``row_indices`` (uint32, one per
    row: row i of ``A`` is row ``row_indices[i]`` of ``L U``).

    A singular matrix raises nothing (a zero pivot is left in ``U``), as in
    MLX. MLX defines no vjp, jvp or vmap for LUF; mlxref's vmap batches it,
    and its vjp and jvp are the textbook derivatives of ``A = P L U`` for
    square matrices, which make ``det`` and ``slogdet`` differentiable at any
    size (MLX differentiates them only up to 3 x 3, where they are composed
    without LUF). The integer outputs have zero derivatives.
    """

    mlx_has_vjp = False

    def output_shapes(self, inputs):
        (a,) = inputs
        *batch, m, n = a.shape
        return [a.shape, tuple(batch) + (min(m, n),), tuple(batch) + (m,)]

    def output_dtypes(self, inputs):
        return [inputs[0].dtype, _dt.uint32, _dt.uint32]

    def eval(self, inputs):
        (a,) = inputs
        return list(luf(a.data(), a.shape, a.dtype))

    vmap = vmap_leading  # MLX has none

    def _factors(self, a, outputs):
        """``L``, ``U`` and the row order of the factorization of ``a``."""
        if a.shape[-1] != a.shape[-2]:
            raise ValueError(
                "[LUF] mlxref differentiates the LU factorization of square matrices "
                f"only; got matrices of shape ({a.shape[-2]}, {a.shape[-1]})."
            )
        lu, _, order = outputs
        n = a.shape[-1]
        lower = ops.add(ops.tril(lu, -1), ops.eye(n, dtype=a.dtype))
        return lower, ops.triu(lu), order

    @staticmethod
    def _rows(x, order):
        """The rows of ``x`` taken in ``order`` (per matrix of the batch)."""
        return ops.take_along_axis(x, ops.expand_dims(order, -1), axis=-2)

    def jvp(self, primals, tangents, argnums):
        """With ``A = P L U`` (``P`` the row order): ``X = L⁻¹ Pᵀ dA U⁻¹``, then
        ``dL = L tril(X, -1)`` and ``dU = triu(X) U``, so the packed ``LU``
        moves by ``L tril(X, -1) + triu(X) U``."""
        (a,), (t,) = primals, tangents
        outputs = make_arrays(self, [a])
        lower, upper, order = self._factors(a, outputs)
        x = self._rows(t, ops.argsort(order, axis=-1))  # Pᵀ dA
        x = ops.matmul(ops.matmul(ops.linalg.tri_inv(lower), x),
                       ops.linalg.tri_inv(upper, upper=True))
        d_lu = ops.add(ops.matmul(lower, ops.tril(x, -1)), ops.matmul(ops.triu(x), upper))
        return [d_lu, ops.zeros_like(outputs[1]), ops.zeros_like(outputs[2])]

    def vjp(self, primals, cotangents, argnums, outputs):
        """The transpose of jvp: ``Ā = P L⁻ᵀ (tril(Lᵀ G, -1) + triu(G Uᵀ)) U⁻ᵀ``
        for the cotangent ``G`` of ``LU``."""
        (a,) = primals
        g = cotangents[0]
        lower, upper, order = self._factors(a, outputs)
        inv_lower_t = ops.swapaxes(ops.linalg.tri_inv(lower), -1, -2)
        inv_upper_t = ops.swapaxes(ops.linalg.tri_inv(upper, upper=True), -1, -2)
        middle = ops.add(ops.tril(ops.matmul(ops.swapaxes(lower, -1, -2), g), -1),
                         ops.triu(ops.matmul(g, ops.swapaxes(upper, -1, -2))))
        return [self._rows(ops.matmul(ops.matmul(inv_lower_t, middle), inv_upper_t), order)]
