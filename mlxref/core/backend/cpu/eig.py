"""The eigendecomposition of a general square matrix: Hessenberg reduction,
the shifted QR algorithm, back substitution.

Read alongside: mlx/backend/cpu/eig.cpp (``eig_impl``: LAPACK's geev, one
matrix at a time).

Each matrix is decomposed in complex double precision; the store rounds the
results to complex64. The order of the eigenvalues is the diagonal of the
Schur form this QR algorithm reaches, which is not always LAPACK's.
Read next: mlxref/core/primitives/factorizations.py (``Eig``).
"""

import cmath
import math

from .lapack import abs2, conj, flat, has_nan, identity, matrices, norm


def eig(data, shape):
    """The eigenvalues (..., n) and unit eigenvectors (..., n, n), as columns,
    as flat lists of complex numbers, of the matrices of ``data`` (``shape``
    (..., n, n)). A nan raises a ValueError: MLX 0.32's LAPACK call aborts
    the process on it; an infinite element makes every output nan, as in
    MLX. Each eigenvector's largest component is real and positive (LAPACK
    makes it real)."""
    if has_nan(data):
        raise ValueError("[linalg::eig] The matrix has a nan element: MLX 0.32's LAPACK "
                         "call (gebal) aborts the process on it.")
    n = shape[-1]
    w_out, v_out = [], []
    for mat in matrices(data, shape):
        w, v = _eig(mat, n)
        w_out += w
        v_out += flat(v)
    return w_out, v_out


def _eig(a, n):
    """The eigenvalues and unit eigenvectors (columns) of the general n x n
    matrix ``a``, in complex arithmetic.

    1. Householder reflections make ``H = Zᴴ A Z`` upper Hessenberg.
    2. The shifted QR algorithm makes H upper triangular (the Schur form
       ``T``): on the active block, subtract the Wilkinson shift (the
       eigenvalue of the trailing 2 x 2 block nearest its last element),
       factor with Givens rotations, multiply back in reverse order, add the
       shift; a negligible subdiagonal element splits the block.
    3. The eigenvalues are T's diagonal, top to bottom (LAPACK's order);
       the eigenvectors of T come by back substitution, times Z. Each is
       scaled to unit norm with its largest component real and positive
       (LAPACK makes it real; its sign is LAPACK's own). For a real matrix,
       an eigenvalue whose imaginary part is rounding (below 64 n eps |A|)
       is real, and so is its eigenvector, as LAPACK's real geev gives them;
       a conjugate pair side by side has the positive imaginary part first.
    """
    h = [[complex(x) for x in row] for row in a]
    z = [[complex(x) for x in row] for row in identity(n)]
    scale = max([abs(x) for row in h for x in row] + [0.0])
    if scale == math.inf:  # as MLX: nothing but nan
        nan = complex(math.nan, math.nan)
        return [nan] * n, [[nan] * n for _ in range(n)]
    eps = 2.0**-52
    _hessenberg(h, z, n)
    hi = n - 1
    steps = 0
    while hi > 0:
        lo = hi
        while lo > 0 and abs(h[lo][lo - 1]) > eps * (abs(h[lo][lo]) + abs(h[lo - 1][lo - 1])
                                                      or scale):
            lo -= 1
        if lo > 0:
            h[lo][lo - 1] = 0j
        if lo == hi:  # h[hi][hi] has converged
            hi -= 1
            steps = 0
            continue
        steps += 1
        if steps > 60 * n:
            raise RuntimeError("[linalg::eig] The QR algorithm did not converge.")
        shift = _wilkinson_shift(h, hi)
        if steps % 11 == 0:  # an exceptional shift breaks a cycle
            shift = h[hi][hi] + abs(h[hi][hi - 1])
        _shifted_qr_step(h, z, lo, hi, shift, n)
    values = [h[i][i] for i in range(n)]
    real = not any(isinstance(x, complex) for row in a for x in row)
    if real:  # a real eigenvalue of a real matrix is real, not real + (rounding) i
        values = [complex(w.real) if abs(w.imag) <= 64 * n * eps * scale else w for w in values]
    vectors = []
    for j in range(n):
        y = [0j] * n
        y[j] = 1 + 0j
        for i in range(j - 1, -1, -1):
            d = h[i][i] - values[j]
            if abs(d) <= eps * scale:
                d = eps * scale or eps
            y[i] = -sum(h[i][k] * y[k] for k in range(i + 1, j + 1)) / d
        x = [sum(z[r][k] * y[k] for k in range(j + 1)) for r in range(n)]
        x = _normalized(x)
        vectors.append([complex(e.real) for e in x] if real and values[j].imag == 0 else x)
    if real:  # a conjugate pair next to each other: the positive imaginary part first
        for j in range(n - 1):
            w0, w1 = values[j], values[j + 1]
            if w0.imag < 0 and abs(w0.conjugate() - w1) <= 64 * n * eps * scale:
                values[j], values[j + 1] = w1, w0
                vectors[j], vectors[j + 1] = vectors[j + 1], vectors[j]
    return values, [[vectors[j][r] for j in range(n)] for r in range(n)]


def _normalized(x):
    size = norm(x)
    big = max(abs(v) for v in x)
    pivot = next(v for v in x if abs(v) >= big * (1 - 1e-9))
    phase = pivot / abs(pivot)
    return [v / phase / size for v in x]


def _hessenberg(h, z, n):
    """``h ← P h P`` and ``z ← z P`` for Householder reflections P zeroing each
    column below its subdiagonal."""
    for k in range(n - 2):
        x = [h[i][k] for i in range(k + 1, n)]
        if norm(x[1:]) == 0:
            continue
        size = norm(x)
        phase = x[0] / abs(x[0]) if x[0] != 0 else 1
        v = [x[0] + phase * size] + x[1:]
        vv = sum(abs2(e) for e in v)
        rows = range(k + 1, n)
        for c in range(n):  # P h: rows k+1..
            dot = sum(conj(e) * h[r][c] for e, r in zip(v, rows))
            for e, r in zip(v, rows):
                h[r][c] -= 2 * e * dot / vv
        for mat in (h, z):  # (.) P: columns k+1..
            for r in range(n):
                dot = sum(mat[r][c] * e for e, c in zip(v, rows))
                for e, c in zip(v, rows):
                    mat[r][c] -= 2 * dot * conj(e) / vv


def _wilkinson_shift(h, hi):
    a, b, c, d = h[hi - 1][hi - 1], h[hi - 1][hi], h[hi][hi - 1], h[hi][hi]
    mean = (a + d) / 2
    root = cmath.sqrt((a - d) * (a - d) / 4 + b * c)
    first, second = mean + root, mean - root
    return first if abs(first - d) <= abs(second - d) else second


def _shifted_qr_step(h, z, lo, hi, shift, n):
    """One QR step on the block lo..hi: ``B - shift I = QR``, ``B ← RQ + shift I``,
    applied as the similarity ``Qᴴ h Q`` to the whole matrix (and ``z ← z Q``)."""
    for i in range(lo, hi + 1):
        h[i][i] -= shift
    rotations = []
    for k in range(lo, hi):  # left: Givens rotations make the block upper triangular
        x, y = h[k][k], h[k + 1][k]
        r = math.sqrt(abs2(x) + abs2(y))
        if r == 0:
            c, s = 1.0, 0j
        elif x == 0:
            c, s = 0.0, conj(y) / abs(y)
        else:
            c, s = abs(x) / r, (x / abs(x)) * conj(y) / r
        for j in range(k, n):
            u, w = h[k][j], h[k + 1][j]
            h[k][j], h[k + 1][j] = c * u + s * w, -conj(s) * u + c * w
        rotations.append((k, c, s))
    for k, c, s in rotations:  # right: multiply back by the rotations' adjoints
        for mat, last in ((h, min(k + 2, hi + 1)), (z, n)):
            for i in range(last):
                u, w = mat[i][k], mat[i][k + 1]
                mat[i][k], mat[i][k + 1] = c * u + conj(s) * w, -s * u + c * w
    for i in range(lo, hi + 1):
        h[i][i] += shift
