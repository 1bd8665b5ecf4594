"""The factorizations behind ``mx.linalg``'s solvers: Cholesky and LU.

Read alongside: mlx/primitives.h (``Cholesky``, ``LUF``), mlx/primitives.cpp
(``Cholesky::vmap``; MLX defines no other rule for either),
mlx/backend/cpu/cholesky.cpp and mlx/backend/cpu/luf.cpp, which call
LAPACK's ``potrf`` and ``getrf``. MLX's CPU build links the reference
LAPACK 3.10, whose ``potrf`` and ``getrf`` work on matrices smaller than 64
with the recursive ``potrf2`` and ``getrf2``; mlxref follows their order of
operations, rounding every step to the dtype (float32 or float64), so the
pivots, the row order and what a matrix that is not positive definite leaves
behind are LAPACK's, and the values agree to an ulp or so.

The ops that build these nodes are in mlxref/core/ops/solvers.py.
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..scalar import sympy
from ..backend.cpu.rounding import rounding, unrounded
from .base import Primitive, make_arrays


def _sqrt(v):
    """The square root of a number, or of a SymPy expression."""
    try:
        return math.sqrt(v)
    except TypeError:
        return sympy.sqrt(v)


def _decided(condition):
    """A comparison's truth, or False when SymPy cannot decide it (the
    symbolic checks use inputs for which the undecided comparisons would
    come out False: no pivoting, a positive definite matrix)."""
    try:
        return bool(condition)
    except TypeError:
        return False


def _potrf2(m, start, n, rounded):
    """LAPACK's recursive ``potrf2``, in place, on the n x n block of the
    lists of rows ``m`` that starts at (start, start): its lower triangle
    becomes ``L`` with ``L Lᵀ`` the block. Returns LAPACK's ``info``: 0, or
    the position (from 1) of the first pivot that is not positive, where it
    stops, leaving what it has not reached as it was.

    (The lower triangle of a row-major matrix is the upper one of LAPACK's
    column-major view: this is ``potrf2`` with ``uplo = 'U'``, written in the
    row-major terms.) Halve the block: factor the leading n1 x n1 block;
    solve for the block below it (``trsm``: one division per element, after
    subtracting the products in order); subtract each finished dot product
    from the trailing block (``syrk``); factor that.
    """
    if n == 1:
        v = m[start][start]
        if _decided(v <= 0) or v != v:  # not positive, or nan
            return 1
        m[start][start] = rounded(_sqrt(v))
        return 0
    n1 = n // 2
    info = _potrf2(m, start, n1, rounded)
    if info:
        return info
    mid, end = start + n1, start + n
    for i in range(mid, end):  # trsm: row i of the block below, left to right
        row = m[i]
        for j in range(start, mid):
            t = row[j]
            for k in range(start, j):
                t = rounded(t - rounded(m[j][k] * row[k]))
            row[j] = rounded(t / m[j][j])
    for j in range(mid, end):  # syrk: the trailing lower triangle
        for i in range(mid, j + 1):
            t = 0.0
            for k in range(start, mid):
                t = rounded(t + rounded(m[i][k] * m[j][k]))
            m[j][i] = rounded(m[j][i] - t)
    info = _potrf2(m, mid, n - n1, rounded)
    return info + n1 if info else 0


class Cholesky(Primitive):
    """The Cholesky factor of each symmetric positive definite matrix in the
    last two axes (MLX's ``Cholesky``): lower ``L`` with ``L Lᵀ = A``, or,
    ``upper``, ``U`` with ``Uᵀ U = A``. Only that triangle of ``A`` is read;
    the other triangle of the result is zero.

    As MLX's CPU build, a matrix that is not positive definite raises
    nothing: LAPACK stops at the first pivot that is not positive and the
    result holds what it had computed by then (``[[1, 2], [2, 1]]`` gives
    ``[[1, 0], [2, -3]]``). MLX defines vmap only: its vjp and jvp raise
    "Not implemented", and so do mlxref's.
    """

    def __init__(self, upper=False):
        self.upper = bool(upper)

    def params(self):
        return {"upper": self.upper}

    def eval(self, inputs):
        (a,) = inputs
        n = a.shape[-1]
        data = a.data()
        rounded = rounding(a.dtype) or unrounded
        if n == 0:
            return [[]]
        out = []
        for start in range(0, len(data), n * n):
            rows = [data[start + i * n : start + (i + 1) * n] for i in range(n)]
            if self.upper:  # the upper triangle, read as the lower one of the transpose
                rows = [list(col) for col in zip(*rows)]
            _potrf2(rows, 0, n, rounded)
            lower = [[v if j <= i else 0.0 for j, v in enumerate(row)] for i, row in enumerate(rows)]
            if self.upper:
                lower = [list(col) for col in zip(*lower)]
            for row in lower:
                out.extend(row)
        return [out]

    def vmap(self, inputs, axes):
        """MLX's rule: the batch axis to the front; the factor is batched there."""
        (x,), (ax,) = inputs, axes
        return [ops.solvers.cholesky(ops.moveaxis(x, ax, 0), upper=self.upper)], [0]


# LAPACK's safe minimum (dlamch 'S'): the smallest normal number of the dtype.
_SAFE_MIN = {_dt.float32: 2.0**-126, _dt.float64: 2.0**-1022}


def _getrf(m, rows, cols, rounded, safe_min):
    """LAPACK's ``getrf`` (LU with partial pivoting), in place on the lists of
    rows ``m``: returns the pivots, row k having been swapped with row
    ``pivots[k]`` at step k (0-based).

    Each step k: the pivot is the first element of largest magnitude in
    column k at or below the diagonal (``idamax``); unless it is zero, its
    row is swapped into place and the column below it multiplied by its
    reciprocal (divided by it when the reciprocal would overflow); then
    the trailing block loses ``l_ik u_kj``. The recursive ``getrf2`` that
    LAPACK runs does these same operations on each element, in the same
    order.
    """
    pivots = []
    for k in range(min(rows, cols)):
        p, best = k, abs(m[k][k])
        for i in range(k + 1, rows):
            v = abs(m[i][k])
            if _decided(v > best):
                p, best = i, v
        pivots.append(p)
        pivot = m[p][k]
        if pivot != 0:
            m[k], m[p] = m[p], m[k]
            if _decided(abs(pivot) < safe_min):
                for i in range(k + 1, rows):
                    m[i][k] = rounded(m[i][k] / pivot)
            else:
                scale = rounded(1 / pivot)
                for i in range(k + 1, rows):
                    m[i][k] = rounded(m[i][k] * scale)
        top = m[k]
        for i in range(k + 1, rows):
            row = m[i]
            factor = row[k]
            for j in range(k + 1, cols):
                row[j] = rounded(row[j] - rounded(factor * top[j]))
    return pivots


def _row_indices(pivots, rows):
    """MLX's ``row_indices`` from LAPACK's pivots (mlx/backend/cpu/luf.cpp):
    the swaps undone from the last, applied to 0, 1, ..., rows - 1, so that
    row i of ``A`` is row ``row_indices[i]`` of ``L U``."""
    order = list(range(rows))
    for j in range(len(pivots) - 1, -1, -1):
        p = pivots[j]
        order[j], order[p] = order[p], order[j]
    return order


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
        m, n = a.shape[-2:]
        data = a.data()
        rounded = rounding(a.dtype) or unrounded
        lu, pivots, order = [], [], []
        for start in range(0, len(data), m * n):
            rows = [data[start + i * n : start + (i + 1) * n] for i in range(m)]
            piv = _getrf(rows, m, n, rounded, _SAFE_MIN.get(a.dtype, 0.0))
            for row in rows:
                lu.extend(row)
            pivots.extend(piv)
            order.extend(_row_indices(piv, m))
        return [lu, pivots, order]

    def vmap(self, inputs, axes):
        """The primitive factors every matrix of a batch: the batch axis goes
        to the front and stays there, for all three outputs."""
        (x,), (ax,) = inputs, axes
        return make_arrays(self, [ops.moveaxis(x, ax, 0)]), [0, 0, 0]

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
