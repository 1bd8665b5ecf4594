"""The singular value decomposition by one-sided Jacobi rotations.

Read alongside: mlx/backend/cpu/svd.cpp (``svd_impl``: LAPACK's gesdd, one
matrix at a time).

Each matrix is factored in double precision (floats and complexes as they
are, SymPy Floats for the symbolic checks); the store rounds the results to
the dtype. The singular vectors' signs are Jacobi's, not LAPACK's.
Read next: mlxref/core/primitives/factorizations.py (``SVD``, its rules).
"""

import math

from .lapack import abs2, conj, eps, finite, flat, has_nan, identity, matrices, norm, sqrt


def svd(data, shape):
    """U (..., m, m), S (..., k) in descending order and Vᴴ (..., n, n),
    k = min(m, n), as flat lists, for the matrices of ``data`` (``shape``
    (..., m, n)). A nan raises MLX's RuntimeError: LAPACK's gesdd refuses
    it (error code -4, its argument A). An infinite element makes every
    output nan (MLX's S and Vt are nan, its U garbage)."""
    if has_nan(data):
        raise RuntimeError("[SVD::eval_cpu] SVD failed with error code -4")
    m, n = shape[-2:]
    u_out, s_out, vh_out = [], [], []
    for mat in matrices(data, shape):
        u, s, vh = _svd(mat, m, n)
        u_out += flat(u)
        s_out += s
        vh_out += flat(vh)
    return u_out, s_out, vh_out


def _transpose(rows, ncols):
    return [[row[j] for row in rows] for j in range(ncols)]


def _svd(a, m, n):
    """The SVD of the m x n matrix ``a``: U (m x m), s (min(m, n)), Vᴴ (n x n).

    One-sided Jacobi (Hestenes): for m >= n, rotate pairs of columns of
    ``W = A V`` (V starting at I) until every pair is orthogonal; then the
    column norms are the singular values and the normalized columns are U's.
    A complex pair is first given a common phase, so its rotation is real.
    (A real pair is rotated as it is: dividing by a phase of -1 would flip
    signs, which must not depend on how far the iteration went.)
    For m < n it factors Aᴴ and swaps the roles of U and V. The values are
    sorted in descending order; U is completed to a square unitary matrix by
    Gram-Schmidt on the unit vectors.
    """
    if not finite(flat(a)):  # an infinity (svd refused a nan): nothing but nan
        return [[math.nan] * m for _ in range(m)], [math.nan] * min(m, n), [
            [math.nan] * n for _ in range(n)]
    if m < n:
        u, s, vh = _svd([[conj(a[i][j]) for i in range(m)] for j in range(n)], n, m)
        return ([[conj(x) for x in row] for row in _transpose(vh, m)], s,
                [[conj(x) for x in row] for row in _transpose(u, n)])
    w = _transpose(a, n)  # the columns of A
    v = identity(n)  # the columns of V
    tolerance = eps(a[0][0]) if m and n else 2.0**-52
    for _ in range(100):
        rotated = False
        for p in range(n):
            for q in range(p + 1, n):
                alpha = sum((abs2(x) for x in w[p]), 0)
                beta = sum((abs2(x) for x in w[q]), 0)
                gamma = sum((conj(x) * y for x, y in zip(w[p], w[q])), 0)
                g = sqrt(abs2(gamma))
                if g == 0 or g <= tolerance * sqrt(alpha * beta):
                    continue
                rotated = True
                if isinstance(gamma, complex):
                    phase = gamma / g  # w_q over the phase makes the pair's product real
                    w[q] = [x / phase for x in w[q]]
                    v[q] = [x / phase for x in v[q]]
                    gamma = g
                zeta = (beta - alpha) / (2 * gamma)
                t = 1 / (zeta + sqrt(1 + zeta * zeta)) if zeta >= 0 else (
                    -1 / (-zeta + sqrt(1 + zeta * zeta)))
                c = 1 / sqrt(1 + t * t)
                s = c * t
                for cols in (w, v):
                    cols[p], cols[q] = ([c * x - s * y for x, y in zip(cols[p], cols[q])],
                                        [s * x + c * y for x, y in zip(cols[p], cols[q])])
        if not rotated:
            break
    sigma = [norm(col) for col in w]
    order = sorted(range(n), key=lambda j: -sigma[j])
    u_cols = [[x / sigma[j] for x in w[j]] for j in order if sigma[j] != 0]
    u_cols = _complete_basis(u_cols, m)
    vh = [[conj(x) for x in v[j]] for j in order]
    return _transpose(u_cols, m), [sigma[j] for j in order], vh


def _complete_basis(columns, m):
    """``columns`` (orthonormal) and then unit vectors e_0, e_1, ...
    orthonormalized against them (twice, for accuracy) until there are m."""
    columns = list(columns)
    for i in range(m):
        if len(columns) == m:
            break
        e = [1.0 if r == i else 0.0 for r in range(m)]
        for _ in range(2):
            for col in columns:
                dot = sum(conj(c) * x for c, x in zip(col, e))
                e = [x - dot * c for x, c in zip(e, col)]
        size = norm(e)
        if size > 1e-6:
            columns.append([x / size for x in e])
    return columns
