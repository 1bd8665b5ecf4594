"""The eigendecomposition of a general square matrix, by LAPACK's steps:
balancing, Hessenberg reduction, the QR algorithm, back substitution.

Read alongside: mlx/backend/cpu/eig.cpp (``eig_impl``: LAPACK's geev, one
matrix at a time). MLX hands geev the row-major matrix, which LAPACK reads
as its transpose Aᵀ, and asks for left eigenvectors: a left eigenvector u of
Aᵀ (``uᴴ Aᵀ = λ uᴴ``) is, conjugated, a right eigenvector of A. For the
small matrices this is written for (n <= 75) geev runs:

1. gebal: permutations isolate the eigenvalues that need no work, then
   powers of 2 scale rows against columns ("balancing");
2. gehrd, orghr: Householder reflections make the matrix upper Hessenberg,
   ``H = Qᴴ B Q``;
3. hseqr (lahqr): the QR algorithm on H with the reflections gathered in Q,
   deflating a negligible subdiagonal element as it appears, from the bottom
   up: for a real matrix Francis' double-shift steps to the real Schur form
   (2 x 2 blocks for complex pairs, standardized by lanv2, the eigenvalue with
   the positive imaginary part first), for a complex one single-shift steps
   to the triangular Schur form; the eigenvalues come in the order of the
   Schur form's diagonal;
4. trevc3: each left eigenvector of the Schur form by substitution, its
   first nonzero component 1, times Q; gebak undoes the balancing;
5. each vector is scaled to unit norm; a complex one is turned so that its
   largest component is real (for a real matrix with the sign of the real
   part it had, for a complex matrix positive).

Following these steps gives LAPACK's order and phases. Each matrix is
decomposed in double precision with the convergence tests of the LAPACK
routine MLX calls for the dtype (single precision for float32 and
complex64); the store rounds the results to complex64. SymPy numbers are
taken as floats: ``Eig`` has no rules to check.
Read next: mlxref/core/primitives/factorizations.py (``Eig``).
"""

import cmath
import math

from .lapack import (abs2, conj, eps, flat, givens, has_nan, identity, matrices, norm, reflect,
                     reflector, rotate_columns, rotate_rows, sign, tiny)


def eig(data, shape, dtype=None):
    """The eigenvalues (..., n) and unit eigenvectors (..., n, n), as columns,
    as flat lists of complex numbers, of the matrices of ``data`` (``shape``
    (..., n, n), ``dtype``). A nan raises a ValueError: MLX 0.32's LAPACK
    call aborts the process on it; an infinite element makes every output
    nan, as in MLX. For a complex matrix the eigenvectors are A's (MLX 0.32
    returns their conjugates: it passes on the left eigenvectors of Aᵀ as
    they are)."""
    if has_nan(data):
        raise ValueError("[linalg::eig] The matrix has a nan element: MLX 0.32's LAPACK "
                         "call (gebal) aborts the process on it.")
    n = shape[-1]
    w_out, v_out = [], []
    for mat in matrices(data, shape):
        w, v = _eig(mat, n, dtype)
        w_out += w
        v_out += flat(v)
    return w_out, v_out


def cabs1(v):
    """|re| + |im|: the cheap modulus LAPACK's complex routines compare."""
    return abs(v.real) + abs(v.imag)


def _eig(a, n, dtype):
    """The eigenvalues and unit eigenvectors (columns) of the n x n matrix
    ``a``, by geev's steps on its transpose."""
    is_complex = any(isinstance(x, complex) for row in a for x in row) or (
        dtype is not None and dtype.name == "complex64")
    number = complex if is_complex else float
    b = [[number(a[j][i]) for j in range(n)] for i in range(n)]  # what LAPACK reads
    if any(math.isinf(abs(x)) for row in b for x in row):  # as MLX: nothing but nan
        nan = complex(math.nan, math.nan)
        return [nan] * n, [[nan] * n for _ in range(n)]
    if n == 0:
        return [], []
    ulp, safe_min = eps(1.0, dtype), tiny(1.0, dtype)
    ilo, ihi, scale, swaps = _balance(b, n, ulp, safe_min)
    q = _hessenberg(b, n, ilo, ihi)
    if is_complex:
        _complex_schur(b, q, n, ilo, ihi, ulp, safe_min)
        values = [b[i][i] for i in range(n)]
        u = _complex_left_vectors(b, q, n, ulp, safe_min)
    else:
        values = _real_schur(b, q, n, ilo, ihi, ulp, safe_min)
        u = _real_left_vectors(b, q, n, values, ulp, safe_min)
    for vector in u:  # gebak: undo the scaling, then the permutations
        for i in range(ilo, ihi + 1):
            vector[i] /= scale[i]
        for i, j in reversed(swaps):
            vector[i], vector[j] = vector[j], vector[i]
    vectors = []
    for k, vector in enumerate(u):
        if is_complex:
            vectors.append(_normalized(vector, positive=True))
        elif values[k].imag > 0:
            vectors.append(_normalized(vector, positive=False))
        elif values[k].imag < 0:  # the pair's second: the first's conjugate
            vectors.append([conj(x) for x in vectors[-1]])
        else:
            size = norm(vector)
            vectors.append([x / size for x in vector])
    # A's right eigenvectors are the left eigenvectors of Aᵀ, conjugated
    return values, [[complex(conj(vectors[j][r])) for j in range(n)] for r in range(n)]


def _normalized(u, positive):
    """u at unit norm, turned so that its largest component (the first of
    the largest) is real: positive (zgeev) or with the sign of its real part
    (dgeev's rotation by lartg)."""
    size = norm(u)
    u = [x / size for x in u]
    big = max(abs2(x) for x in u)
    k = next(i for i, x in enumerate(u) if abs2(x) == big)
    if positive:
        turn = conj(u[k]) / abs(u[k])
    else:
        c, s, _ = givens(u[k].real, u[k].imag)
        turn = complex(c, -s)
    u = [x * turn for x in u]
    u[k] = complex(u[k].real, 0.0)
    return u


# --- 1. balancing -------------------------------------------------------------------


def _balance(b, n, ulp, safe_min):
    """gebal("B") on b, in place: ``(ilo, ihi, scale, swaps)``. Rows (from
    the bottom) and then columns (from the left) that isolate an eigenvalue
    are swapped out of the block ilo..ihi, the swaps listed in order; then
    each row and column of the block is scaled by a power of 2 (``scale``)
    until no scaling would cut the sum of their norms by 5%."""
    swaps = []
    low, high = 0, n - 1

    def swap(j, m):
        swaps.append((m, j))
        if j != m:
            for r in range(high + 1):
                b[r][j], b[r][m] = b[r][m], b[r][j]
            for c in range(low, n):
                b[j][c], b[m][c] = b[m][c], b[j][c]

    while True:  # a row with zeros off the diagonal (columns 0..high) goes to the bottom
        row = next((j for j in range(high, -1, -1)
                    if all(b[j][i] == 0 for i in range(high + 1) if i != j)), None)
        if row is None:
            break
        swap(row, high)
        if high == 0:
            return 0, 0, [1.0] * n, swaps
        high -= 1
    while True:  # a column with zeros off the diagonal (rows low..high) goes to the left
        column = next((j for j in range(low, high + 1)
                       if all(b[i][j] == 0 for i in range(low, high + 1) if i != j)), None)
        if column is None:
            break
        swap(column, low)
        low += 1
    scale = [1.0] * n
    small = safe_min / ulp
    small2, big, big2 = 2 * small, 1 / small, 1 / (2 * small)
    converged = False
    while not converged:
        converged = True
        for i in range(low, high + 1):
            c = norm([b[r][i] for r in range(low, high + 1)])
            r = norm([b[i][k] for k in range(low, high + 1)])
            ca = max(abs(b[k][i]) for k in range(high + 1))
            ra = max(abs(b[i][k]) for k in range(low, n))
            if c == 0 or r == 0:
                continue
            g, f, total = r / 2, 1.0, c + r
            while c < g and max(f, c, ca) < big2 and min(r, g, ra) > small2:
                f, c, ca, r, g, ra = f * 2, c * 2, ca * 2, r / 2, g / 2, ra / 2
            g = c / 2
            while g >= r and max(r, ra) < big2 and min(f, c, g, ca) > small2:
                f, c, g, ca, r, ra = f / 2, c / 2, g / 2, ca / 2, r * 2, ra * 2
            if c + r >= 0.95 * total:
                continue
            if f < 1 and scale[i] < 1 and f * scale[i] <= small:
                continue
            if f > 1 and scale[i] > 1 and scale[i] >= big / f:
                continue
            scale[i] *= f
            converged = False
            for k in range(low, n):
                b[i][k] /= f
            for k in range(high + 1):
                b[k][i] *= f
    return low, high, scale, swaps


# --- 2. Hessenberg reduction ---------------------------------------------------------


def _hessenberg(h, n, ilo, ihi):
    """``h <- Qᴴ h Q`` upper Hessenberg (gehd2) and Q (orghr): for each column
    i of the block, a reflection on rows i+1..ihi zeroes it below the
    subdiagonal."""
    reflections = []
    for i in range(ilo, ihi):
        beta, tau, w = reflector(h[i + 1][i], [h[r][i] for r in range(i + 2, ihi + 1)])
        v, rows = [1] + w, range(i + 1, ihi + 1)
        for r in range(ihi + 1):  # h <- h H
            dot = tau * sum(h[r][c] * x for c, x in zip(rows, v))
            for c, x in zip(rows, v):
                h[r][c] -= dot * conj(x)
        reflect(h, rows, v, conj(tau), range(i + 1, n))  # h <- Hᴴ h
        h[i + 1][i] = beta
        for r in range(i + 2, ihi + 1):
            h[r][i] = 0 * beta
        reflections.append((rows, v, tau))
    q = [[type(h[0][0])(x) for x in row] for row in identity(n)]
    for rows, v, tau in reversed(reflections):  # Q = H_ilo H_ilo+1 ... , applied to I
        reflect(q, rows, v, tau, range(n))
    return q


# --- 3. the QR algorithm -------------------------------------------------------------


def _negligible(h, k, ilo, ihi, ulp, small, size):
    """Is the subdiagonal element h[k][k-1] negligible (lahqr's test, after
    Ahues and Tisseur)? ``size`` is the modulus compared (abs or cabs1)."""
    if size(h[k][k - 1]) <= small:
        return True
    tst = size(h[k - 1][k - 1]) + size(h[k][k])
    if tst == 0:
        if k - 2 >= ilo:
            tst += abs(h[k - 1][k - 2].real)
        if k + 1 <= ihi:
            tst += abs(h[k + 1][k].real)
    if abs(h[k][k - 1].real) > ulp * tst:
        return False
    ab = max(size(h[k][k - 1]), size(h[k - 1][k]))
    ba = min(size(h[k][k - 1]), size(h[k - 1][k]))
    aa = max(size(h[k][k]), size(h[k - 1][k - 1] - h[k][k]))
    bb = min(size(h[k][k]), size(h[k - 1][k - 1] - h[k][k]))
    s = aa + ab
    return ba * (ab / s) <= max(small, ulp * (bb * (aa / s)))


def _deflation_point(h, i, ilo, ihi, ulp, small, size):
    """The start l of the unreduced block that ends at row i."""
    k = i
    while k > ilo and not _negligible(h, k, ilo, ihi, ulp, small, size):
        k -= 1
    return k


def _real_schur(h, z, n, ilo, ihi, ulp, safe_min):
    """The real Schur form of the real Hessenberg h (lahqr, wantt and wantz):
    Francis double-shift QR steps on the unreduced block at the bottom, whose
    last one or two rows deflate when their subdiagonal element is
    negligible; a 2 x 2 block is standardized (lanv2). z gathers the
    transformations. The eigenvalues, in the Schur form's order."""
    values = [complex(h[i][i]) for i in range(n)]  # (isolated by the balancing: the diagonal)
    if ilo == ihi:
        return values
    for j in range(ilo, ihi - 2):
        h[j + 2][j] = h[j + 3][j] = 0.0
    if ilo <= ihi - 2:
        h[ihi][ihi - 2] = 0.0
    nh = ihi - ilo + 1
    small = safe_min * (nh / ulp)
    i = ihi
    while i >= ilo:
        shifts = 0  # steps since the last deflation
        for _ in range(30 * max(10, nh) + 1):
            l = _deflation_point(h, i, ilo, ihi, ulp, small, abs)
            if l > ilo:
                h[l][l - 1] = 0.0
            if l >= i - 1:
                break
            shifts += 1
            _double_shift_step(h, z, n, l, i, shifts, ulp)
        else:
            raise RuntimeError(f"[Eig::eval_cpu] Eigenvalue decomposition failed with error "
                               f"code {i + 1}")
        if l == i:
            values[i] = complex(h[i][i])
        else:  # a 2 x 2 block: standardized, and its rotation applied to the rest
            (a, b, c, d), (w1, w2), (cs, sn) = _standardize(h[i - 1][i - 1], h[i - 1][i],
                                                              h[i][i - 1], h[i][i], ulp)
            h[i - 1][i - 1], h[i - 1][i], h[i][i - 1], h[i][i] = a, b, c, d
            values[i - 1], values[i] = w1, w2
            rotate_rows(h, i - 1, cs, sn, range(i + 1, n))
            rotate_columns(h, i - 1, cs, sn, range(i - 1))
            rotate_columns(z, i - 1, cs, sn, range(n))
        i = l - 1
    return values


def _double_shift_step(h, z, n, l, i, shifts, ulp):
    """One Francis double-shift step on the block l..i. The shifts are the
    eigenvalues of the trailing 2 x 2 block, or, every 10th step without
    deflation, an exceptional pair made from a subdiagonal element."""
    if shifts % 20 == 0:
        s = abs(h[i][i - 1]) + abs(h[i - 1][i - 2])
        h11, h12, h21 = 0.75 * s + h[i][i], -0.4375 * s, s
        h22 = h11
    elif shifts % 10 == 0:
        s = abs(h[l + 1][l]) + abs(h[l + 2][l + 1])
        h11, h12, h21 = 0.75 * s + h[l][l], -0.4375 * s, s
        h22 = h11
    else:
        h11, h21, h12, h22 = h[i - 1][i - 1], h[i][i - 1], h[i - 1][i], h[i][i]
    s = abs(h11) + abs(h12) + abs(h21) + abs(h22)
    if s == 0:
        rt1r = rt1i = rt2r = rt2i = 0.0
    else:
        h11, h21, h12, h22 = h11 / s, h21 / s, h12 / s, h22 / s
        tr = (h11 + h22) / 2
        det = (h11 - tr) * (h22 - tr) - h12 * h21
        rtdisc = math.sqrt(abs(det))
        if det >= 0:  # a complex pair
            rt1r = rt2r = tr * s
            rt1i, rt2i = rtdisc * s, -rtdisc * s
        else:  # two real shifts: both the one nearer h22
            rt1r, rt2r = tr + rtdisc, tr - rtdisc
            rt1r = rt2r = (rt1r if abs(rt1r - h22) <= abs(rt2r - h22) else rt2r) * s
            rt1i = rt2i = 0.0
    for m in range(i - 2, l - 1, -1):  # where to start: two small subdiagonal elements
        h21s = h[m + 1][m]
        s = abs(h[m][m] - rt2r) + abs(rt2i) + abs(h21s)
        h21s = h[m + 1][m] / s
        v = [h21s * h[m][m + 1] + (h[m][m] - rt1r) * ((h[m][m] - rt2r) / s) - rt1i * (rt2i / s),
             h21s * (h[m][m] + h[m + 1][m + 1] - rt1r - rt2r),
             h21s * h[m + 2][m + 1]]
        s = abs(v[0]) + abs(v[1]) + abs(v[2])
        v = [x / s for x in v]
        if m == l or abs(h[m][m - 1]) * (abs(v[1]) + abs(v[2])) <= ulp * abs(v[0]) * (
                abs(h[m - 1][m - 1]) + abs(h[m][m]) + abs(h[m + 1][m + 1])):
            break
    for k in range(m, i):  # chase the bulge down with 3 x 3 (at the end 2 x 2) reflections
        nr = min(3, i - k + 1)
        if k > m:
            v = [h[k + r][k - 1] for r in range(nr)]
        beta, t1, w = reflector(v[0], v[1:nr])
        if k > m:
            h[k][k - 1] = beta
            h[k + 1][k - 1] = 0.0
            if k < i - 1:
                h[k + 2][k - 1] = 0.0
        elif m > l:
            h[k][k - 1] *= 1 - t1
        rows = range(k, k + nr)
        v = [1.0] + w
        for j in range(k, n):
            total = t1 * sum(x * h[r][j] for r, x in zip(rows, v))
            for r, x in zip(rows, v):
                h[r][j] -= total * x
        for mat, last in ((h, min(k + 3, i)), (z, n - 1)):
            for j in range(last + 1):
                total = t1 * sum(mat[j][r] * x for r, x in zip(rows, v))
                for r, x in zip(rows, v):
                    mat[j][r] -= total * x


def _standardize(a, b, c, d, ulp):
    """The Schur factorization of the real 2 x 2 block [[a, b], [c, d]] by a
    rotation (cs, sn) (LAPACK's lanv2): real eigenvalues make it upper
    triangular; a complex pair leaves it with equal diagonal elements and
    off-diagonal ones of opposite signs. ``((a, b, c, d), (w1, w2), (cs, sn))``,
    w1 the eigenvalue with the positive imaginary part."""
    if c == 0:
        cs, sn = 1.0, 0.0
    elif b == 0:  # swap the rows and columns
        cs, sn = 0.0, 1.0
        a, b, c, d = d, -c, 0.0, a
    elif a - d == 0 and sign(1.0, b) != sign(1.0, c):
        cs, sn = 1.0, 0.0
    else:
        temp = a - d
        p = temp / 2
        bcmax = max(abs(b), abs(c))
        bcmis = min(abs(b), abs(c)) * sign(1.0, b) * sign(1.0, c)
        scale = max(abs(p), bcmax)
        z = (p / scale) * p + (bcmax / scale) * bcmis
        if z >= 4 * ulp:  # real eigenvalues
            z = p + sign(math.sqrt(scale) * math.sqrt(z), p)
            a = d + z
            d = d - (bcmax / z) * bcmis
            tau = math.hypot(c, z)
            cs, sn = z / tau, c / tau
            b, c = b - c, 0.0
        else:  # complex or nearly equal real eigenvalues: make the diagonal equal
            sigma = b + c
            tau = math.hypot(sigma, temp)
            cs = math.sqrt((1 + abs(sigma) / tau) / 2)
            sn = -(p / (tau * cs)) * sign(1.0, sigma)
            aa, bb = a * cs + b * sn, -a * sn + b * cs
            cc, dd = c * cs + d * sn, -c * sn + d * cs
            a, b = aa * cs + cc * sn, bb * cs + dd * sn
            c, d = -aa * sn + cc * cs, -bb * sn + dd * cs
            temp = (a + d) / 2
            a = d = temp
            if c != 0:
                if b != 0:
                    if sign(1.0, b) == sign(1.0, c):  # real after all
                        sab, sac = math.sqrt(abs(b)), math.sqrt(abs(c))
                        p = sign(sab * sac, c)
                        tau = 1 / math.sqrt(abs(b + c))
                        a, d = temp + p, temp - p
                        b, c = b - c, 0.0
                        cs1, sn1 = sab * tau, sac * tau
                        cs, sn = cs * cs1 - sn * sn1, cs * sn1 + sn * cs1
                else:
                    b, c = -c, 0.0
                    cs, sn = -sn, cs
    if c == 0:
        w1, w2 = complex(a), complex(d)
    else:
        im = math.sqrt(abs(b)) * math.sqrt(abs(c))
        w1, w2 = complex(a, im), complex(d, -im)
    return (a, b, c, d), (w1, w2), (cs, sn)


def _complex_schur(h, z, n, ilo, ihi, ulp, safe_min):
    """The Schur form of the complex Hessenberg h (LAPACK's complex lahqr,
    wantt and wantz): the subdiagonal is first made real; single-shift QR
    steps (Wilkinson's shift, or an exceptional one every 10th step without
    deflation) on the unreduced block at the bottom until its last
    subdiagonal element is negligible. z gathers the transformations."""
    if ilo == ihi:
        return
    for j in range(ilo, ihi - 2):
        h[j + 2][j] = h[j + 3][j] = 0j
    if ilo <= ihi - 2:
        h[ihi][ihi - 2] = 0j
    for i in range(ilo + 1, ihi + 1):  # a real subdiagonal, by a diagonal similarity
        if h[i][i - 1].imag != 0:
            sc = h[i][i - 1] / cabs1(h[i][i - 1])
            sc = conj(sc) / abs(sc)
            h[i][i - 1] = complex(abs(h[i][i - 1]))
            _scale_row(h, i, sc, range(i, n))
            _scale_column(h, i, conj(sc), range(min(n - 1, i + 1) + 1))
            _scale_column(z, i, conj(sc), range(n))
    nh = ihi - ilo + 1
    small = safe_min * (nh / ulp)
    i = ihi
    while i >= ilo:
        shifts = 0
        for _ in range(30 * max(10, nh) + 1):
            l = _deflation_point(h, i, ilo, ihi, ulp, small, cabs1)
            if l > ilo:
                h[l][l - 1] = 0j
            if l >= i:
                break
            shifts += 1
            _single_shift_step(h, z, n, l, i, shifts, ulp)
        else:
            raise RuntimeError(f"[Eig::eval_cpu] Eigenvalue decomposition failed with error "
                               f"code {i + 1}")
        i = l - 1


def _scale_row(m, i, factor, columns):
    for k in columns:
        m[i][k] *= factor


def _scale_column(m, i, factor, rows):
    for r in rows:
        m[r][i] *= factor


def _single_shift_step(h, z, n, l, i, shifts, ulp):
    """One single-shift QR step on the complex block l..i, keeping the
    subdiagonal real."""
    if shifts % 20 == 0:
        t = 0.75 * abs(h[i][i - 1].real) + h[i][i]
    elif shifts % 10 == 0:
        t = 0.75 * abs(h[l + 1][l].real) + h[l][l]
    else:  # Wilkinson's shift: the eigenvalue of the trailing 2 x 2 block nearer h[i][i]
        t = h[i][i]
        u = cmath.sqrt(h[i - 1][i]) * cmath.sqrt(h[i][i - 1])
        s = cabs1(u)
        if s != 0:
            x = (h[i - 1][i - 1] - t) / 2
            sx = cabs1(x)
            s = max(s, sx)
            y = s * cmath.sqrt((x / s) ** 2 + (u / s) ** 2)
            if sx > 0 and ((x / sx).real * y.real + (x / sx).imag * y.imag) < 0:
                y = -y
            t = t - u * (u / (x + y))
    for m in range(i - 1, l - 1, -1):  # where to start: a small subdiagonal product
        h11, h22 = h[m][m], h[m + 1][m + 1]
        h11s, h21 = h11 - t, h[m + 1][m].real
        s = cabs1(h11s) + abs(h21)
        v = [h11s / s, h21 / s]
        if m == l or abs(h[m][m - 1].real) * abs(v[1]) <= ulp * (
                cabs1(v[0]) * (cabs1(h11) + cabs1(h22))):
            break
    for k in range(m, i):  # chase the bulge down with 2 x 2 reflections
        if k > m:
            v = [h[k][k - 1], h[k + 1][k - 1]]
        beta, t1, (v2,) = reflector(v[0], [v[1]])
        if k > m:
            h[k][k - 1], h[k + 1][k - 1] = beta, 0j
        t2 = (t1 * v2).real
        for j in range(k, n):
            total = conj(t1) * h[k][j] + t2 * h[k + 1][j]
            h[k][j] -= total
            h[k + 1][j] -= total * v2
        for mat, last in ((h, min(k + 2, i)), (z, n - 1)):
            for j in range(last + 1):
                total = t1 * mat[j][k] + t2 * mat[j][k + 1]
                mat[j][k] -= total
                mat[j][k + 1] -= total * conj(v2)
        if k == m and m > l:  # keep h[m+1][m] real: a diagonal similarity
            temp = 1 - t1
            temp /= abs(temp)
            h[m + 1][m] *= conj(temp)
            if m + 2 <= i:
                h[m + 2][m + 1] *= temp
            for j in range(m, i + 1):
                if j != m + 1:
                    _scale_row(h, j, temp, range(j + 1, n))
                    _scale_column(h, j, conj(temp), range(j))
                    _scale_column(z, j, conj(temp), range(n))
    temp = h[i][i - 1]
    if temp.imag != 0:
        size = abs(temp)
        h[i][i - 1] = complex(size)
        temp /= size
        _scale_row(h, i, conj(temp), range(i + 1, n))
        _scale_column(h, i, temp, range(i))
        _scale_column(z, i, temp, range(n))


# --- 4. the left eigenvectors -----------------------------------------------------------


def _real_left_vectors(t, q, n, values, ulp, safe_min):
    """trevc3("L"): for each eigenvalue λ of the real Schur form t, its left
    eigenvector (``yᴴ t = λ yᴴ``) times q. y is zero above λ's row k and
    starts with 1 for a real λ = t[k][k]; for a pair λ = wr ± i wi in rows k,
    k + 1 it starts with (wi / t[k][k+1], i), or (1, -i wi / t[k+1][k]) when
    t[k+1][k] is the larger; the rest comes by substitution downwards (a
    near-singular pivot taken as smin). The pair's second vector is the
    first's conjugate."""
    small = safe_min * (n / ulp)
    vectors = []
    k = 0
    while k < n:
        wr, wi = values[k].real, values[k].imag
        smin = max(ulp * (abs(wr) + abs(wi)), small)
        y = [0.0] * n
        if wi == 0:
            y[k] = 1.0
            start, shift = k + 1, wr
        else:
            if abs(t[k][k + 1]) >= abs(t[k + 1][k]):
                y[k], y[k + 1] = complex(wi / t[k][k + 1]), 1j
            else:
                y[k], y[k + 1] = 1 + 0j, complex(0, -wi / t[k + 1][k])
            start, shift = k + 2, complex(wr, -wi)
        rhs = [-sum(y[r] * t[r][j] for r in range(k, start)) for j in range(n)]
        j = start
        while j < n:  # solve yᵀ (t - shift) = 0 column by column (a 2 x 2 block at once)
            if j + 1 < n and t[j + 1][j] != 0:
                b = [rhs[c] - sum(t[r][c] * y[r] for r in range(start, j)) for c in (j, j + 1)]
                m = [[t[j][j] - shift, t[j + 1][j]], [t[j][j + 1], t[j + 1][j + 1] - shift]]
                y[j], y[j + 1] = _solve2(m, b, smin)
                j += 2
            else:
                d = t[j][j] - shift
                if cabs1(d) < smin:
                    d = smin
                y[j] = (rhs[j] - sum(t[r][j] * y[r] for r in range(start, j))) / d
                j += 1
        u = [sum(q[r][c] * y[c] for c in range(k, n)) for r in range(n)]
        vectors.append(u)
        if wi != 0:
            vectors.append([conj(x) for x in u])
        k += 1 if wi == 0 else 2
    return vectors


def _solve2(m, b, smin):
    """The 2 x 2 system m x = b by elimination with complete pivoting, a
    pivot smaller than smin taken as smin (LAPACK's laln2)."""
    entries = [(0, 0), (1, 0), (0, 1), (1, 1)]  # (laln2 looks in column-major order)
    pi, pj = max(entries, key=lambda e: (cabs1(m[e[0]][e[1]]), -entries.index(e)))
    if cabs1(m[pi][pj]) < smin:
        return [b[0] / smin, b[1] / smin]
    oi, oj = 1 - pi, 1 - pj
    factor = m[oi][pj] / m[pi][pj]
    u22 = m[oi][oj] - factor * m[pi][oj]
    if cabs1(u22) < smin:
        u22 = smin
    x = [0, 0]
    x[oj] = (b[oi] - factor * b[pi]) / u22
    x[pj] = (b[pi] - m[pi][oj] * x[oj]) / m[pi][pj]
    return x


def _complex_left_vectors(t, q, n, ulp, safe_min):
    """trevc3("L") for the complex triangular t: for each diagonal element
    λ = t[k][k], y with y[k] = 1 and ``yᴴ (t - λ) = 0``, zero above k, by
    substitution downwards (a near-zero t[j][j] - λ taken as smin); then q y."""
    small = safe_min * (n / ulp)
    vectors = []
    for k in range(n):
        smin = max(ulp * cabs1(t[k][k]), small)
        y = [0j] * n
        y[k] = 1 + 0j
        for j in range(k + 1, n):
            d = t[j][j] - t[k][k]
            if cabs1(d) < smin:
                d = smin
            y[j] = (-conj(t[k][j]) - sum(conj(t[r][j]) * y[r] for r in range(k + 1, j))) / conj(d)
        vectors.append([sum(q[r][c] * y[c] for c in range(k, n)) for r in range(n)])
    return vectors
