"""The LU factorization with partial pivoting, as LAPACK's ``getrf`` computes it.

Read alongside: mlx/backend/cpu/luf.cpp (``luf_impl``: LAPACK's getrf on each
matrix, then the pivots turned into ``row_indices``).

MLX's CPU build links the reference LAPACK 3.10, whose ``getrf`` works on
matrices smaller than 64 with the recursive ``getrf2``; mlxref does the same
operations on each element in the same order, rounding every step to the
dtype (float32 or float64), so the pivots and the row order are LAPACK's
and the values agree to an ulp or so. SymPy expressions go through the same
steps, unrounded (a comparison SymPy cannot decide does not pivot).
Read next: mlxref/core/primitives/solvers.py (``LUF``).
"""

from ... import dtypes as _dt
from .lapack import decided, matrices
from .rounding import rounding, unrounded

# LAPACK's safe minimum (dlamch 'S'): the smallest normal number of the dtype.
_SAFE_MIN = {_dt.float32: 2.0**-126, _dt.float64: 2.0**-1022}


def luf(data, shape, dtype):
    """``LU`` (``shape`` (..., m, n): unit lower ``L`` below the diagonal,
    ``U`` on and above it), the pivots (min(m, n) per matrix, from 0) and
    the row indices (m per matrix: row i of ``A`` is row ``row_indices[i]``
    of ``L U``), as flat lists, for the matrices of ``data`` (``dtype``). A
    singular matrix raises nothing: a zero pivot is left in ``U``."""
    m, n = shape[-2:]
    rounded = rounding(dtype) or unrounded
    lu, pivots, order = [], [], []
    for rows in matrices(data, shape):
        piv = _getrf(rows, m, n, rounded, _SAFE_MIN.get(dtype, 0.0))
        for row in rows:
            lu.extend(row)
        pivots.extend(piv)
        order.extend(_row_indices(piv, m))
    return lu, pivots, order


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
            if decided(v > best):
                p, best = i, v
        pivots.append(p)
        pivot = m[p][k]
        if pivot != 0:
            m[k], m[p] = m[p], m[k]
            if decided(abs(pivot) < safe_min):
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
