"""The matrix factorizations of ``mx.linalg``: QR, the SVD, and the
eigendecompositions of symmetric (``Eigh``) and general (``Eig``) matrices.

Read alongside: mlx/primitives.h (``QRF``, ``SVD``, ``Eigh``, ``Eig``),
mlx/primitives.cpp (their vmap rules: MLX 0.32 has no vjp or jvp for any of
them, and no vmap for ``QRF``), mlx/linalg.cpp (``qr``, ``svd``, ``eigh``,
``eig``: the checks and output shapes) and mlx/backend/cpu/{qrf,svd,eigh,eig}.cpp,
which call LAPACK (geqrf/orgqr, gesdd, syevd/heevd, geev).

mlxref does not call LAPACK: each factorization is a short algorithm a
reader can follow, on one matrix at a time held as a list of rows of Python
numbers (float or complex, in double precision; the store rounds the results
to the dtype):

- QR: Householder reflections, with LAPACK's sign convention (``_qr``);
- SVD: one-sided Jacobi rotations of the columns (``_svd``);
- eigh: cyclic Jacobi rotations of the Hermitian matrix (``_eigh``);
- eig: Householder reduction to Hessenberg form, the shifted QR algorithm
  to the complex Schur form, and back substitution (``_eig``).

The same code runs on SymPy ``Float`` numbers of 50 digits, which is how
``mlxref.symbolic`` checks the derivative rules of these primitives ("high
precision points": an iterative algorithm cannot run on symbols).

Where MLX has no derivative rule, these give the textbook ones (for real
inputs): the eigenvalues and eigenvectors of a symmetric matrix, the singular
values and vectors, and Q and R. ``Eig`` keeps MLX's "Not implemented".
Every factorization vmaps: the batch axis goes to the front (the matrices
are the last two axes) and the outputs are batched on axis 0.
"""

import cmath
import math

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..scalar import is_symbolic, sympy
from .base import Primitive, make_arrays

# --- numbers: the few functions the algorithms need, for floats, complexes and
# SymPy Floats alike -------------------------------------------------------------


def _sqrt(v):
    """The square root of a real v >= 0 (or of a complex number)."""
    if is_symbolic(v):
        return sympy.sqrt(v)
    return cmath.sqrt(v) if isinstance(v, complex) else math.sqrt(v)


def _abs2(v):
    """|v|², without a square root."""
    return (v * v.conjugate()).real if isinstance(v, complex) else v * v


def _norm(values):
    return _sqrt(sum((_abs2(v) for v in values), 0))


def _eps(sample):
    """The relative precision the iterations stop at: double's, or 10^-45 for
    the 50-digit SymPy Floats of the rule checks."""
    if is_symbolic(sample):
        return sympy.Float("1e-45", 50)
    return 2.0**-52


def _has_nan(data):
    return any(v != v for v in data)


def _finite(data):
    """No nan and no infinity (SymPy numbers are finite)."""
    return all(is_symbolic(v) or cmath.isfinite(v) for v in data)


def _conj(v):
    return v.conjugate()


def _identity(n):
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def _matrices(a):
    """Each matrix of ``a`` (shape (..., m, n)) as a list of m rows."""
    m, n = a.shape[-2:]
    data = a.data()
    rows = [data[r * n : (r + 1) * n] for r in range(math.prod(a.shape[:-1]))]
    return [rows[b * m : (b + 1) * m] for b in range(math.prod(a.shape[:-2]))]


def _flat(rows):
    return [v for row in rows for v in row]


def _transpose(rows, ncols):
    return [[row[j] for row in rows] for j in range(ncols)]


# --- QR ---------------------------------------------------------------------------


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
        below = _norm([r[i][j] for i in range(j + 1, m)])
        if below == 0:
            reflectors.append(None)
            continue
        beta = _sqrt(alpha * alpha + below * below)
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


# --- SVD --------------------------------------------------------------------------


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
    if not _finite(_flat(a)):  # an infinity (SVD.eval refused a nan): nothing but nan
        return [[math.nan] * m for _ in range(m)], [math.nan] * min(m, n), [
            [math.nan] * n for _ in range(n)]
    if m < n:
        u, s, vh = _svd([[_conj(a[i][j]) for i in range(m)] for j in range(n)], n, m)
        return ([[_conj(x) for x in row] for row in _transpose(vh, m)], s,
                [[_conj(x) for x in row] for row in _transpose(u, n)])
    w = _transpose(a, n)  # the columns of A
    v = _identity(n)  # the columns of V
    eps = _eps(a[0][0]) if m and n else 2.0**-52
    for _ in range(100):
        rotated = False
        for p in range(n):
            for q in range(p + 1, n):
                alpha = sum((_abs2(x) for x in w[p]), 0)
                beta = sum((_abs2(x) for x in w[q]), 0)
                gamma = sum((_conj(x) * y for x, y in zip(w[p], w[q])), 0)
                g = _sqrt(_abs2(gamma))
                if g == 0 or g <= eps * _sqrt(alpha * beta):
                    continue
                rotated = True
                if isinstance(gamma, complex):
                    phase = gamma / g  # w_q over the phase makes the pair's product real
                    w[q] = [x / phase for x in w[q]]
                    v[q] = [x / phase for x in v[q]]
                    gamma = g
                zeta = (beta - alpha) / (2 * gamma)
                t = 1 / (zeta + _sqrt(1 + zeta * zeta)) if zeta >= 0 else (
                    -1 / (-zeta + _sqrt(1 + zeta * zeta)))
                c = 1 / _sqrt(1 + t * t)
                s = c * t
                for cols in (w, v):
                    cols[p], cols[q] = ([c * x - s * y for x, y in zip(cols[p], cols[q])],
                                        [s * x + c * y for x, y in zip(cols[p], cols[q])])
        if not rotated:
            break
    sigma = [_norm(col) for col in w]
    order = sorted(range(n), key=lambda j: -sigma[j])
    u_cols = [[x / sigma[j] for x in w[j]] for j in order if sigma[j] != 0]
    u_cols = _complete_basis(u_cols, m)
    vh = [[_conj(x) for x in v[j]] for j in order]
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
                dot = sum(_conj(c) * x for c, x in zip(col, e))
                e = [x - dot * c for x, c in zip(e, col)]
        size = _norm(e)
        if size > 1e-6:
            columns.append([x / size for x in e])
    return columns


# --- eigh -------------------------------------------------------------------------


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
                h[j][i] = _conj(a[i][j])
    if not _finite(_flat(h)):  # a nan or an infinity read: nothing but nan
        return [math.nan] * n, [[math.nan] * n for _ in range(n)]
    v = _identity(n)
    eps = _eps(h[0][0]) if n else 0
    for _ in range(100):
        off = sum((_abs2(h[i][j]) for i in range(n) for j in range(n) if i != j), 0)
        total = sum((_abs2(x) for row in h for x in row), 0)
        if not off > eps * eps * total:  # (nan, from a nan read, stops it too)
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
        g = _sqrt(_abs2(g))
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
    t = 1 / (theta + _sqrt(theta * theta + 1)) if theta >= 0 else (
        -1 / (-theta + _sqrt(theta * theta + 1)))
    c = 1 / _sqrt(t * t + 1)
    s = t * c
    for rows in (h, v):  # columns p and q: X ← X J
        for i in range(n):
            x, y = rows[i][p], rows[i][q]
            rows[i][p], rows[i][q] = c * x - s * y, s * x + c * y
    for j in range(n):  # rows p and q: h ← Jᵀ h
        x, y = h[p][j], h[q][j]
        h[p][j], h[q][j] = c * x - s * y, s * x + c * y
    h[p][q] = h[q][p] = 0 * g


# --- eig --------------------------------------------------------------------------


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
    z = [[complex(x) for x in row] for row in _identity(n)]
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
    size = _norm(x)
    big = max(abs(v) for v in x)
    pivot = next(v for v in x if abs(v) >= big * (1 - 1e-9))
    phase = pivot / abs(pivot)
    return [v / phase / size for v in x]


def _hessenberg(h, z, n):
    """``h ← P h P`` and ``z ← z P`` for Householder reflections P zeroing each
    column below its subdiagonal."""
    for k in range(n - 2):
        x = [h[i][k] for i in range(k + 1, n)]
        if _norm(x[1:]) == 0:
            continue
        size = _norm(x)
        phase = x[0] / abs(x[0]) if x[0] != 0 else 1
        v = [x[0] + phase * size] + x[1:]
        vv = sum(_abs2(e) for e in v)
        rows = range(k + 1, n)
        for c in range(n):  # P h: rows k+1..
            dot = sum(_conj(e) * h[r][c] for e, r in zip(v, rows))
            for e, r in zip(v, rows):
                h[r][c] -= 2 * e * dot / vv
        for mat in (h, z):  # (.) P: columns k+1..
            for r in range(n):
                dot = sum(mat[r][c] * e for e, c in zip(v, rows))
                for e, c in zip(v, rows):
                    mat[r][c] -= 2 * dot * _conj(e) / vv


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
        r = math.sqrt(_abs2(x) + _abs2(y))
        if r == 0:
            c, s = 1.0, 0j
        elif x == 0:
            c, s = 0.0, _conj(y) / abs(y)
        else:
            c, s = abs(x) / r, (x / abs(x)) * _conj(y) / r
        for j in range(k, n):
            u, w = h[k][j], h[k + 1][j]
            h[k][j], h[k + 1][j] = c * u + s * w, -_conj(s) * u + c * w
        rotations.append((k, c, s))
    for k, c, s in rotations:  # right: multiply back by the rotations' adjoints
        for mat, last in ((h, min(k + 2, hi + 1)), (z, n)):
            for i in range(last):
                u, w = mat[i][k], mat[i][k + 1]
                mat[i][k], mat[i][k + 1] = c * u + _conj(s) * w, -s * u + c * w
    for i in range(lo, hi + 1):
        h[i][i] += shift


# --- the rules' building blocks (mlxref ops) ---------------------------------------


def _mT(x):
    return ops.swapaxes(x, -1, -2)


def _mm(*factors):
    out = factors[0]
    for f in factors[1:]:
        out = ops.matmul(out, f)
    return out


def _gap_inverse(values):
    """``F`` with ``F[i, j] = 1 / (values[j] - values[i])`` off the diagonal and
    0 on it: ``(1 - I) / (gap + I)``, so the diagonal never divides by zero."""
    n = values.shape[-1]
    eye = ops.eye(n, dtype=values.dtype)
    gap = ops.subtract(ops.expand_dims(values, -2), ops.expand_dims(values, -1))
    return ops.divide(ops.subtract(1, eye), ops.add(gap, eye))


def _diag_embed(values):
    """A batch of diagonal matrices from a batch of vectors."""
    n = values.shape[-1]
    return ops.multiply(ops.expand_dims(values, -2), ops.eye(n, dtype=values.dtype))


def _diag_part(x):
    return ops.diagonal(x, 0, -2, -1)


def _real_only(name, x):
    if x.dtype is _dt.complex64:
        raise ValueError(f"[linalg::{name}] mlxref's derivative rule takes real inputs only "
                         "(MLX has no rule for it at all).")


# --- the primitives ---------------------------------------------------------------


class QRF(Primitive):
    """``Q, R = mx.linalg.qr(a)``: Q (..., m, k) with orthonormal columns and R
    (..., k, n) upper triangular, k = min(m, n) (MLX's ``QRF``).

    MLX has no vjp, jvp or vmap for QRF. mlxref's rules are the textbook ones
    for a full-rank A (R's first k x k block invertible): for m >= n,
    ``dR = (C - Ω) R`` and ``dQ = dA R⁻¹ - Q (C - Ω)`` with ``C = Qᵀ dA R⁻¹`` and
    Ω the skew-symmetric matrix with C's strictly lower triangle; for m < n,
    A = [X | Y] and R = [R1 | R2] with X = Q R1 square, and
    ``dR2 = Qᵀ (dY - dQ R2)``.
    """

    mlx_has_vjp = False

    def output_shapes(self, inputs):
        (a,) = inputs
        *batch, m, n = a.shape
        k = min(m, n)
        return [tuple(batch) + (m, k), tuple(batch) + (k, n)]

    def output_dtypes(self, inputs):
        return [inputs[0].dtype, inputs[0].dtype]

    def eval(self, inputs):
        (a,) = inputs
        m, n = a.shape[-2:]
        q_out, r_out = [], []
        for mat in _matrices(a):
            q, r = _qr(mat, m, n)
            q_out += _flat(q)
            r_out += _flat(r)
        return [q_out, r_out]

    @staticmethod
    def _r_inverse(r):
        return ops.linalg.tri_inv(r, upper=True)

    def jvp(self, primals, tangents, argnums):
        (a,), (da,) = primals, tangents
        q, r = make_arrays(self, [a])
        m, n = a.shape[-2:]
        if m >= n:
            return list(self._square_jvp(q, r, da))
        x_dot, y_dot = da[..., :, :m], da[..., :, m:]
        dq, dr1 = self._square_jvp(q, r[..., :, :m], x_dot)
        dr2 = _mm(_mT(q), ops.subtract(y_dot, _mm(dq, r[..., :, m:])))
        return [dq, ops.concatenate([dr1, dr2], -1)]

    def _square_jvp(self, q, r, da):
        """(dQ, dR) for m >= n (R square and invertible)."""
        r_inv = self._r_inverse(r)
        da_r = _mm(da, r_inv)
        c = _mm(_mT(q), da_r)
        lower = ops.tril(c, -1)
        c_minus_omega = ops.add(ops.subtract(c, lower), _mT(lower))  # C - Ω
        return ops.subtract(da_r, _mm(q, c_minus_omega)), _mm(c_minus_omega, r)

    def vjp(self, primals, cotangents, argnums, outputs):
        """The adjoint of the jvp: for m >= n, ``Ā = (gQ + Q W) R⁻ᵀ`` with W the
        symmetric matrix with the lower triangle of ``R gRᵀ - gQᵀ Q``; for
        m < n, ``Ȳ = Q gR2`` and X̄ is that rule for ``gQ + Y gR2ᵀ`` and gR1."""
        (a,) = primals
        g_q, g_r = cotangents
        q, r = outputs
        m, n = a.shape[-2:]
        if m >= n:
            return [self._square_vjp(q, r, g_q, g_r)]
        y = a[..., :, m:]
        g_r2 = g_r[..., :, m:]
        g_x = self._square_vjp(q, r[..., :, :m], ops.add(g_q, _mm(y, _mT(g_r2))),
                               g_r[..., :, :m])
        return [ops.concatenate([g_x, _mm(q, g_r2)], -1)]

    def _square_vjp(self, q, r, g_q, g_r):
        m_ = ops.subtract(_mm(r, _mT(g_r)), _mm(_mT(g_q), q))
        lower = ops.tril(m_, -1)
        w = ops.add(ops.tril(m_), _mT(lower))
        return _mm(ops.add(g_q, _mm(q, w)), _mT(self._r_inverse(r)))

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        return make_arrays(self, [ops.moveaxis(x, ax, 0)]), [0, 0]


class SVD(Primitive):
    """``U, S, Vt = mx.linalg.svd(a)`` (``compute_uv``), or just ``S``: U (..., m, m),
    S (..., k) in descending order, Vt (..., n, n), k = min(m, n) (MLX's ``SVD``).

    The signs of the singular vectors are those of one-sided Jacobi, not
    LAPACK's (each pair u_i, v_i may be the negative of MLX's). A nan raises
    MLX's RuntimeError (LAPACK's error code -4: its argument A); an infinite
    element makes every output nan (MLX's S and Vt are nan, its U garbage).

    MLX has no vjp or jvp for SVD; mlxref's are the textbook ones (J.
    Townsend, "Differentiating the Singular Value Decomposition", 2016) for
    real inputs with distinct nonzero singular values: ``dS = diag(U₁ᵀ dA V₁)``
    and, with ``P = U₁ᵀ dA V₁`` and ``F[i, j] = 1 / (s_j² - s_i²)``,
    ``dU₁ = U₁ (F ∘ (P S + S Pᵀ)) + (I - U₁U₁ᵀ) dA V₁ S⁻¹`` and
    ``dV₁ = V₁ (F ∘ (S P + Pᵀ S)) + (I - V₁V₁ᵀ) dAᵀ U₁ S⁻¹`` (U₁, V₁ the first
    k singular vectors). The other columns of a square U or V (a basis of
    the complement, not unique) get the least change that keeps it
    orthonormal: ``dU₂ = -U₁ dU₁ᵀ U₂``; the vjp is the exact adjoint.
    """

    mlx_has_vjp = False

    def __init__(self, compute_uv=True):
        self.compute_uv = bool(compute_uv)

    def params(self):
        return {"compute_uv": self.compute_uv}

    def output_shapes(self, inputs):
        (a,) = inputs
        *batch, m, n = a.shape
        batch = tuple(batch)
        s_shape = batch + (min(m, n),)
        if not self.compute_uv:
            return [s_shape]
        return [batch + (m, m), s_shape, batch + (n, n)]

    def output_dtypes(self, inputs):
        dtype = inputs[0].dtype
        real = _dt.float32 if dtype is _dt.complex64 else dtype
        return [dtype, real, dtype] if self.compute_uv else [real]

    def eval(self, inputs):
        (a,) = inputs
        if _has_nan(a.data()):  # LAPACK's gesdd refuses a nan (its 4th argument)
            raise RuntimeError("[SVD::eval_cpu] SVD failed with error code -4")
        m, n = a.shape[-2:]
        u_out, s_out, vh_out = [], [], []
        for mat in _matrices(a):
            u, s, vh = _svd(mat, m, n)
            u_out += _flat(u)
            s_out += s
            vh_out += _flat(vh)
        return [u_out, s_out, vh_out] if self.compute_uv else [s_out]

    def _factors(self, a, outputs=None):
        """U₁ (m x k), S (k), V₁ (n x k), U, V."""
        u, s, vt = outputs if outputs is not None and self.compute_uv else make_arrays(
            SVD(True), [a])
        k = s.shape[-1]
        v = _mT(vt)
        return u[..., :, :k], s, v[..., :, :k], u, v

    def jvp(self, primals, tangents, argnums):
        (a,), (da,) = primals, tangents
        _real_only("svd", a)
        u1, s, v1, u, v = self._factors(a)
        k = s.shape[-1]
        p = _mm(_mT(u1), da, v1)
        ds = _diag_part(p)
        if not self.compute_uv:
            return [ds]
        f = _gap_inverse(ops.square(s))
        s_row, s_col = ops.expand_dims(s, -2), ops.expand_dims(s, -1)  # (X S), (S X)
        inv_s = ops.expand_dims(ops.reciprocal(s), -2)
        m, n = a.shape[-2:]
        du1 = ops.add(_mm(u1, ops.multiply(f, ops.add(ops.multiply(p, s_row),
                                                      ops.multiply(s_col, _mT(p))))),
                      ops.multiply(_mm(ops.subtract(ops.eye(m, dtype=a.dtype), _mm(u1, _mT(u1))),
                                       da, v1), inv_s))
        dv1 = ops.add(_mm(v1, ops.multiply(f, ops.add(ops.multiply(s_col, p),
                                                      ops.multiply(_mT(p), s_row)))),
                      ops.multiply(_mm(ops.subtract(ops.eye(n, dtype=a.dtype), _mm(v1, _mT(v1))),
                                       _mT(da), u1), inv_s))
        du = self._complete(du1, u1, u[..., :, k:])
        dv = self._complete(dv1, v1, v[..., :, k:])
        return [du, ds, _mT(dv)]

    @staticmethod
    def _complete(d1, x1, x2):
        """[dX₁ | -X₁ dX₁ᵀ X₂]: the tangent of the whole square factor."""
        if x2.shape[-1] == 0:
            return d1
        return ops.concatenate([d1, ops.negative(_mm(x1, _mT(d1), x2))], -1)

    def vjp(self, primals, cotangents, argnums, outputs):
        (a,) = primals
        _real_only("svd", a)
        u1, s, v1, u, v = self._factors(a, outputs)
        k = s.shape[-1]
        if not self.compute_uv:
            (g_s,) = cotangents
            return [_mm(u1, _diag_embed(g_s), _mT(v1))]
        g_u, g_s, g_vt = cotangents
        g_v = _mT(g_vt)
        # The adjoint of dX₂ = -X₁ dX₁ᵀ X₂ adds -X₂ gX₂ᵀ X₁ to gX₁.
        g_u1 = ops.subtract(g_u[..., :, :k], _mm(u[..., :, k:], _mT(g_u[..., :, k:]), u1))
        g_v1 = ops.subtract(g_v[..., :, :k], _mm(v[..., :, k:], _mT(g_v[..., :, k:]), v1))
        m, n = a.shape[-2:]
        f = _gap_inverse(ops.square(s))
        s_row, s_col = ops.expand_dims(s, -2), ops.expand_dims(s, -1)
        inv_s = ops.expand_dims(ops.reciprocal(s), -2)
        j = ops.multiply(f, ops.subtract(_mm(_mT(u1), g_u1), _mm(_mT(g_u1), u1)))
        kk = ops.multiply(f, ops.subtract(_mm(_mT(v1), g_v1), _mm(_mT(g_v1), v1)))
        core = ops.add(ops.add(ops.multiply(j, s_row), _diag_embed(g_s)),
                       ops.multiply(s_col, kk))
        out = _mm(u1, core, _mT(v1))
        out = ops.add(out, _mm(ops.subtract(ops.eye(m, dtype=a.dtype), _mm(u1, _mT(u1))),
                               ops.multiply(g_u1, inv_s), _mT(v1)))
        out = ops.add(out, _mm(ops.multiply(u1, inv_s), _mT(g_v1),
                               ops.subtract(ops.eye(n, dtype=a.dtype), _mm(v1, _mT(v1)))))
        return [out]

    def vmap(self, inputs, axes):
        """MLX's SVD::vmap: the batch axis to the front."""
        (x,), (ax,) = inputs, axes
        outs = make_arrays(self, [ops.moveaxis(x, ax, 0)])
        return outs, [0] * len(outs)


class Eigh(Primitive):
    """``w, V = mx.linalg.eigh(a, UPLO)`` (``compute_eigenvectors``), or just ``w``
    (``eigvalsh``): the eigenvalues in ascending order and the eigenvectors as
    columns, of the Hermitian matrix one triangle of ``a`` holds: the lower
    one when ``UPLO`` starts with "L", else the upper one (MLX passes LAPACK
    ``uplo[0] == 'L'``). The signs of the eigenvectors are Jacobi's, not
    LAPACK's. A nan or an infinity in the triangle read makes every output
    nan (MLX 0.32 returns finite, wrong eigenvalues for a nan on the diagonal).

    MLX has no vjp or jvp for Eigh; mlxref's are the textbook ones for real
    inputs with distinct eigenvalues. The matrix read is
    ``S = K + Kᵀ``, K the triangle read with its diagonal halved; then
    ``dw = diag(Vᵀ dS V)`` and ``dV = V (F ∘ (Vᵀ dS V))`` with
    ``F[i, j] = 1 / (w_j - w_i)``. The vjp is the adjoint: ``G = V (diag(gw) +
    F ∘ (Vᵀ gV)) Vᵀ``, and the triangle read gets ``G + Gᵀ`` (half of it on the
    diagonal); the other triangle gets zero.
    """

    mlx_has_vjp = False

    def __init__(self, uplo="L", compute_eigenvectors=True):
        self.uplo = uplo
        self.compute_eigenvectors = bool(compute_eigenvectors)

    @property
    def lower(self):
        return self.uplo[:1] == "L"

    def params(self):
        return {"uplo": self.uplo, "compute_eigenvectors": self.compute_eigenvectors}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [shape[:-1], shape] if self.compute_eigenvectors else [shape[:-1]]

    def output_dtypes(self, inputs):
        dtype = inputs[0].dtype
        real = _dt.float32 if dtype is _dt.complex64 else dtype
        return [real, dtype] if self.compute_eigenvectors else [real]

    def eval(self, inputs):
        (a,) = inputs
        n = a.shape[-1]
        w_out, v_out = [], []
        for mat in _matrices(a):
            w, v = _eigh(mat, n, self.lower)
            w_out += w
            v_out += _flat(v)
        return [w_out, v_out] if self.compute_eigenvectors else [w_out]

    def _mask(self, n, dtype):
        """The triangle read, its diagonal halved."""
        rows = [[0.5 if i == j else (1.0 if (i > j) == self.lower else 0.0) for j in range(n)]
                for i in range(n)]
        return array(rows, dtype)

    def _decomposition(self, a, outputs=None):
        if outputs is not None and self.compute_eigenvectors:
            return outputs
        return make_arrays(Eigh(self.uplo, True), [a])

    def jvp(self, primals, tangents, argnums):
        (a,), (da,) = primals, tangents
        _real_only("eigh", a)
        w, v = self._decomposition(a)
        k = ops.multiply(da, self._mask(a.shape[-1], a.dtype))
        p = _mm(_mT(v), ops.add(k, _mT(k)), v)
        dw = _diag_part(p)
        if not self.compute_eigenvectors:
            return [dw]
        return [dw, _mm(v, ops.multiply(_gap_inverse(w), p))]

    def vjp(self, primals, cotangents, argnums, outputs):
        (a,) = primals
        _real_only("eigh", a)
        w, v = self._decomposition(a, outputs)
        inner = _diag_embed(cotangents[0])
        if self.compute_eigenvectors:
            inner = ops.add(inner, ops.multiply(_gap_inverse(w), _mm(_mT(v), cotangents[1])))
        g = _mm(v, inner, _mT(v))
        return [ops.multiply(ops.add(g, _mT(g)), self._mask(a.shape[-1], a.dtype))]

    def vmap(self, inputs, axes):
        """MLX's Eigh::vmap: the batch axis to the front."""
        (x,), (ax,) = inputs, axes
        outs = make_arrays(self, [ops.moveaxis(x, ax, 0)])
        return outs, [0] * len(outs)


class Eig(Primitive):
    """``w, V = mx.linalg.eig(a)`` (``compute_eigenvectors``), or just ``w``
    (``eigvals``): the eigenvalues and unit eigenvectors (columns) of a
    general square matrix, both complex64 whatever the input (MLX's ``Eig``).

    The order of the eigenvalues is the diagonal of the Schur form mlxref's
    QR algorithm reaches, which is not always LAPACK's; each eigenvector's
    largest component is real and positive (LAPACK makes it real).

    A nan raises a ValueError (MLX's LAPACK call aborts the process); an
    infinite element makes every output nan, as in MLX.

    No vjp or jvp: MLX has none, and the eigenvectors' derivative depends on
    a normalization (of a complex phase) that is a convention, not a
    function of A; both raise MLX's "Not implemented".
    """

    def __init__(self, compute_eigenvectors=True):
        self.compute_eigenvectors = bool(compute_eigenvectors)

    def params(self):
        return {"compute_eigenvectors": self.compute_eigenvectors}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [shape[:-1], shape] if self.compute_eigenvectors else [shape[:-1]]

    def output_dtypes(self, inputs):
        return [_dt.complex64]

    def eval(self, inputs):
        (a,) = inputs
        if _has_nan(a.data()):
            raise ValueError("[linalg::eig] The matrix has a nan element: MLX 0.32's LAPACK "
                             "call (gebal) aborts the process on it.")
        n = a.shape[-1]
        w_out, v_out = [], []
        for mat in _matrices(a):
            w, v = _eig(mat, n)
            w_out += w
            v_out += _flat(v)
        return [w_out, v_out] if self.compute_eigenvectors else [w_out]

    def vmap(self, inputs, axes):
        """MLX's Eig::vmap: the batch axis to the front."""
        (x,), (ax,) = inputs, axes
        outs = make_arrays(self, [ops.moveaxis(x, ax, 0)])
        return outs, [0] * len(outs)
