"""The eigendecomposition of a Hermitian matrix by cyclic Jacobi rotations.

Read alongside: mlx/backend/cpu/eigh.cpp (``eigh_impl``: LAPACK's syevd for
real matrices, heevd for complex ones, reading the triangle ``uplo`` names).

Each matrix is decomposed in double precision (floats and complexes as they
are, SymPy Floats for the symbolic checks); the store rounds the results to
the dtype. The eigenvectors' signs are Jacobi's, not LAPACK's.
Read next: mlxref/core/primitives/factorizations.py (``Eigh``, its rules).
"""

import math

from .lapack import abs2, conj, eps, finite, flat, identity, matrices, sqrt


def eigh(data, shape, lower):
    """The eigenvalues (..., n), ascending, and the eigenvectors (..., n, n),
    as columns, as flat lists, of the Hermitian matrices whose ``lower``
    (else upper) triangle ``data`` (``shape`` (..., n, n)) holds. A nan or
    an infinity in the triangle read makes every output nan (MLX 0.32
    returns finite, wrong eigenvalues for a nan on the diagonal)."""
    n = shape[-1]
    w_out, v_out = [], []
    for mat in matrices(data, shape):
        w, v = _eigh(mat, n, lower)
        w_out += w
        v_out += flat(v)
    return w_out, v_out


def _eigh(a, n, lower):
    """The eigenvalues (ascending) and eigenvectors (columns) of the Hermitian
    matrix whose ``lower`` (else upper) triangle ``a`` holds (the other triangle
    is not read, and neither is the imaginary part of the diagonal, as LAPACK).

    Cyclic Jacobi: each off-diagonal pair (p, q) in turn is zeroed by a
    rotation ``J`` (A ← Jᴴ A J, V ← V J) until the off-diagonal part is
    negligible. A complex element first has its phase moved into column q.
    """
    h = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i == j:
                h[i][i] = a[i][i].real if isinstance(a[i][i], complex) else a[i][i]
            elif (i > j) == lower:
                h[i][j] = a[i][j]
                h[j][i] = conj(a[i][j])
    if not finite(flat(h)):  # a nan or an infinity read: nothing but nan
        return [math.nan] * n, [[math.nan] * n for _ in range(n)]
    v = identity(n)
    tolerance = eps(h[0][0]) if n else 0
    for _ in range(100):
        off = sum((abs2(h[i][j]) for i in range(n) for j in range(n) if i != j), 0)
        total = sum((abs2(x) for row in h for x in row), 0)
        if not off > tolerance * tolerance * total:  # (nan, from a nan read, stops it too)
            break
        for p in range(n):
            for q in range(p + 1, n):
                if h[p][q] != 0:
                    _jacobi_rotate(h, v, p, q, n)
    values = [h[i][i].real if isinstance(h[i][i], complex) else h[i][i] for i in range(n)]
    order = sorted(range(n), key=lambda i: values[i])
    return [values[i] for i in order], [[v[r][i] for i in order] for r in range(n)]


def _jacobi_rotate(h, v, p, q, n):
    """Zero ``h[p][q]`` (and ``h[q][p]``) by a rotation in the (p, q) plane."""
    g = h[p][q]
    if isinstance(g, complex):  # D = diag(.., 1/phase at q, ..): h[p][q] becomes real
        g = sqrt(abs2(g))
        phase = h[p][q] / g
        for i in range(n):
            h[i][q] = h[i][q] / phase
            v[i][q] = v[i][q] / phase
        for j in range(n):
            h[q][j] = h[q][j] * phase
    for i in (p, q):  # a Hermitian matrix's diagonal is real (rounding aside)
        if isinstance(h[i][i], complex):
            h[i][i] = h[i][i].real
    theta = (h[q][q] - h[p][p]) / (2 * g)
    t = 1 / (theta + sqrt(theta * theta + 1)) if theta >= 0 else (
        -1 / (-theta + sqrt(theta * theta + 1)))
    c = 1 / sqrt(t * t + 1)
    s = t * c
    for rows in (h, v):  # columns p and q: X ← X J
        for i in range(n):
            x, y = rows[i][p], rows[i][q]
            rows[i][p], rows[i][q] = c * x - s * y, s * x + c * y
    for j in range(n):  # rows p and q: h ← Jᵀ h
        x, y = h[p][j], h[q][j]
        h[p][j], h[q][j] = c * x - s * y, s * x + c * y
    h[p][q] = h[q][p] = 0 * g
