"""The Cholesky factorization, as LAPACK's recursive ``potrf2`` computes it.

Read alongside: mlx/backend/cpu/cholesky.cpp (``cholesky_impl``: LAPACK's
potrf on each matrix, then the other triangle zeroed).

MLX's CPU build links the reference LAPACK 3.10, whose ``potrf`` works on
matrices smaller than 64 with the recursive ``potrf2``; mlxref follows its
order of operations, rounding every step to the dtype (float32 or float64),
so what a matrix that is not positive definite leaves behind is LAPACK's,
and the values agree to an ulp or so. SymPy expressions go through the same
steps, unrounded.
Read next: mlxref/core/primitives/solvers.py (``Cholesky``).
"""

import math

from ...scalar import sympy
from .lapack import decided, matrices
from .rounding import rounding, unrounded


def cholesky(data, shape, upper, dtype):
    """The Cholesky factors of the matrices of ``data`` (``shape`` (..., n, n),
    ``dtype``) as a flat list: lower ``L`` with ``L Lᵀ = A`` read from A's
    lower triangle, or, ``upper``, ``U`` with ``Uᵀ U = A`` read from its
    upper one; the other triangle is zero. A matrix that is not positive
    definite raises nothing: LAPACK stops at the first pivot that is not
    positive and the result holds what it had computed by then
    (``[[1, 2], [2, 1]]`` gives ``[[1, 0], [2, -3]]``)."""
    n = shape[-1]
    rounded = rounding(dtype) or unrounded
    if n == 0:
        return []
    out = []
    for rows in matrices(data, shape):
        if upper:  # the upper triangle, read as the lower one of the transpose
            rows = [list(col) for col in zip(*rows)]
        _potrf2(rows, 0, n, rounded)
        lower = [[v if j <= i else 0.0 for j, v in enumerate(row)] for i, row in enumerate(rows)]
        if upper:
            lower = [list(col) for col in zip(*lower)]
        for row in lower:
            out.extend(row)
    return out


def _sqrt(v):
    """The square root of a number, or of a SymPy expression."""
    try:
        return math.sqrt(v)
    except TypeError:
        return sympy.sqrt(v)


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
        if decided(v <= 0) or v != v:  # not positive, or nan
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
