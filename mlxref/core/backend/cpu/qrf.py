"""QR by Householder reflections, with LAPACK's conventions.

Read alongside: mlx/backend/cpu/qrf.cpp (``qrf_impl``: LAPACK's geqrf, then
orgqr for Q, one matrix at a time).

Each matrix is factored in double precision (floats as they are, SymPy
Floats for the symbolic checks); the store rounds Q and R to the dtype.
Read next: mlxref/core/primitives/factorizations.py (``QRF``, its rules).
"""

from .lapack import flat, matrices, norm, sqrt


def qrf(data, shape):
    """Q (..., m, k) and R (..., k, n), k = min(m, n), as flat lists, for the
    matrices of ``data`` (``shape`` (..., m, n))."""
    m, n = shape[-2:]
    q_out, r_out = [], []
    for mat in matrices(data, shape):
        q, r = _qr(mat, m, n)
        q_out += flat(q)
        r_out += flat(r)
    return q_out, r_out


def _qr(a, m, n):
    """Householder QR of the m x n matrix ``a`` (rows): Q (m x k) and R (k x n),
    k = min(m, n).

    Column j is reflected onto ``beta e_j`` by ``H = I - tau v vᵀ`` with LAPACK's
    dlarfg conventions: ``beta = -sign(alpha) |x|`` (alpha the diagonal
    element), and no reflection at all (tau = 0) when the column is already
    zero below the diagonal, so R's diagonal keeps that element's sign. Q is
    the first k columns of ``H_0 H_1 ... H_(k-1)`` (LAPACK's orgqr).
    """
    k = min(m, n)
    r = [list(row) for row in a]
    reflectors = []
    for j in range(k):
        alpha = r[j][j]
        below = norm([r[i][j] for i in range(j + 1, m)])
        if below == 0:
            reflectors.append(None)
            continue
        beta = sqrt(alpha * alpha + below * below)
        beta = beta if alpha < 0 else -beta
        tau = (beta - alpha) / beta
        v = [1] + [r[i][j] / (alpha - beta) for i in range(j + 1, m)]
        _reflect_rows(r, v, tau, j, range(j, n))
        for i in range(j + 1, m):
            r[i][j] = 0.0
        reflectors.append((v, tau))
    q = [[1.0 if i == j else 0.0 for j in range(k)] for i in range(m)]
    for j in reversed(range(k)):
        if reflectors[j] is not None:
            v, tau = reflectors[j]
            _reflect_rows(q, v, tau, j, range(k))
    return q, [row[:] for row in r[:k]]


def _reflect_rows(rows, v, tau, start, columns):
    """``rows[start:] = (I - tau v vᵀ) rows[start:]``, on the given columns."""
    for c in columns:
        dot = sum(v[i] * rows[start + i][c] for i in range(len(v)))
        if dot != 0:
            for i in range(len(v)):
                rows[start + i][c] = rows[start + i][c] - tau * v[i] * dot
