"""The eigendecomposition of a Hermitian matrix, by LAPACK's steps: a
tridiagonal reduction, then implicit QL / QR iterations.

Read alongside: mlx/backend/cpu/eigh.cpp (``eigh_impl``: LAPACK's syevd for
real matrices, heevd for complex ones). MLX hands LAPACK the row-major
matrix, which LAPACK reads as its transpose, so it names the other triangle
(``UPLO="L"`` becomes LAPACK's "U") and conjugates the complex eigenvectors
it gets back. For the small matrices this is written for (n <= 25) syevd
runs:

1. sytrd / hetrd: Householder reflections make the matrix tridiagonal,
   ``T = Qᴴ A Q`` (from the last column leftwards for "U", from the first
   rightwards for "L");
2. steqr: implicit QL or QR sweeps with Wilkinson's shift on T (QL when the
   block's last diagonal element is the larger, QR otherwise), the plane
   rotations gathered in Z; then a selection sort, ascending;
3. ormtr / unmtr: the eigenvectors are ``Q Z``.

Following these steps gives LAPACK's eigenvectors, signs included (syevd
switches to divide and conquer above n = 25; the signs there may differ).
Each matrix is decomposed in double precision (floats and complexes as they
are, SymPy Floats for the symbolic checks); the store rounds the results to
the dtype.
Read next: mlxref/core/primitives/factorizations.py (``Eigh``, its rules).
"""

import math

from .lapack import (abs2, conj, eps, finite, flat, givens, identity, matrices, reflect,
                     reflector, rotate_columns, sign, sqrt, tiny)


def eigh(data, shape, lower, dtype=None):
    """The eigenvalues (..., n), ascending, and the eigenvectors (..., n, n),
    as columns, as flat lists, of the Hermitian matrices whose ``lower``
    (else upper) triangle ``data`` (``shape`` (..., n, n), ``dtype``) holds,
    with the convergence tests of the LAPACK routine MLX calls for the dtype
    (single precision for float32 and complex64). A nan or
    an infinity in the triangle read makes every output nan (MLX 0.32
    returns finite, wrong eigenvalues for a nan on the diagonal)."""
    n = shape[-1]
    w_out, v_out = [], []
    for mat in matrices(data, shape):
        w, v = _eigh(mat, n, lower, dtype)
        w_out += w
        v_out += flat(v)
    return w_out, v_out


def _real(v):
    return v.real if isinstance(v, complex) else v


def _eigh(a, n, lower, dtype):
    """The eigenvalues (ascending) and eigenvectors (columns) of the Hermitian
    matrix whose ``lower`` (else upper) triangle ``a`` holds (the other triangle
    is not read, and neither is the imaginary part of the diagonal, as LAPACK)."""
    if n == 0:
        return [], []
    # What LAPACK is given: the transpose of the Hermitian matrix H the triangle
    # defines, i.e. conj(H), with the other triangle named.
    b = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i == j:
                b[i][i] = _real(a[i][i])
            elif (i > j) == lower:
                b[j][i] = a[i][j]
                b[i][j] = conj(a[i][j])
    if not finite(flat(b)):  # a nan or an infinity read: nothing but nan
        return [math.nan] * n, [[math.nan] * n for _ in range(n)]
    d, e, reflections = _tridiagonalize(b, n, upper=lower)
    z = identity(n)
    _tridiagonal_ql(d, e, z, n, eps(d[0], dtype) / 2, tiny(d[0], dtype))
    for k, v, tau in reversed(reflections):  # Z <- Q Z, Q the reflections' product
        reflect(z, range(k, k + len(v)), v, tau, range(n))
    return d, [[conj(x) for x in row] for row in z]  # (MLX conjugates heevd's vectors)


def _tridiagonalize(b, n, upper):
    """``T = Qᴴ B Q`` tridiagonal (LAPACK's sytd2 / hetd2): its diagonal d, its
    (real) off-diagonal e, and Q's reflections ``(k, v, tau)`` in the order
    made (Q is their product in that order for "L", the reverse for "U"; v
    lives on rows k..). "U" reduces the columns from the last leftwards,
    reading above the diagonal; "L" the columns from the first rightwards,
    reading below it. B is overwritten."""
    d, e, reflections = [0.0] * n, [0.0] * (n - 1), []
    for step in range(n - 1):
        if upper:  # column i + 1, rows 0..i: the element next to the diagonal is alpha
            i = n - 2 - step
            beta, tau, w = reflector(b[i][i + 1], [b[r][i + 1] for r in range(i)])
            v, k, done = w + [1], 0, i + 1
        else:  # column i, rows i+1..n-1
            i = step
            beta, tau, w = reflector(b[i + 1][i], [b[r][i] for r in range(i + 2, n)])
            v, k, done = [1] + w, i + 1, i
        e[i] = _real(beta)
        if tau != 0:  # B <- Hᴴ B H on the block the reflection touches
            block = range(k, k + len(v))
            p = [tau * sum(b[r][c] * x for c, x in zip(block, v)) for r in block]
            alpha = -tau * sum(conj(x) * y for x, y in zip(p, v)) / 2
            p = [x + alpha * y for x, y in zip(p, v)]
            for r, vr, pr in zip(block, v, p):
                for c, vc, pc in zip(block, v, p):
                    b[r][c] -= vr * conj(pc) + pr * conj(vc)
        d[done] = _real(b[done][done])  # (no later reflection touches it)
        reflections.append((k, v, tau))
    first = 0 if upper else n - 1
    d[first] = _real(b[first][first])
    return d, e, reflections


def _tridiagonal_ql(d, e, z, n, precision, safe_min):
    """The eigenvalues of the symmetric tridiagonal matrix (d, e) into d,
    ascending, and the rotations that make it diagonal gathered into the
    columns of z (LAPACK's steqr; ``precision`` is its lamch("E"), half an
    ulp of 1, and ``safe_min`` its safe minimum).

    A negligible e splits the matrix into blocks. In a block whose last
    diagonal element is at least as large in magnitude as its first, QL
    sweeps run from the bottom up and the eigenvalue at the top converges
    first; otherwise QR sweeps run the other way. Each sweep takes Wilkinson's
    shift from the 2 x 2 corner where eigenvalues converge and chases its
    bulge with plane rotations; a 2 x 2 block is solved outright. The
    eigenvalues are then sorted by selection, swapping z's columns.
    """
    iterations = 0
    start = 0
    while start < n:
        if start > 0:
            e[start - 1] = 0 * e[start - 1]
        end = start  # the block start..end ends at the first negligible e
        while end < n - 1:
            if e[end] == 0:
                break
            if abs(e[end]) <= sqrt(abs(d[end])) * sqrt(abs(d[end + 1])) * precision:
                e[end] = 0 * e[end]
                break
            end += 1
        l, last = start, end
        start = end + 1
        if last == l or all(x == 0 for x in d[l:last + 1] + e[l:last]):
            continue
        if abs(d[last]) < abs(d[l]):
            l, last = last, l
        while True:  # until the block l..last is diagonal
            step = 1 if last > l else -1  # QL sweeps upwards, QR downwards
            m = l  # the first negligible off-diagonal element from l on, or last
            while m != last:
                off = e[min(m, m + step)]
                if abs2(off) <= precision * precision * abs(d[m]) * abs(d[m + step]) + safe_min:
                    break
                m += step
            if m != last:
                e[min(m, m + step)] = 0 * e[0]
            if m == l:  # d[l] has converged
                l += step
            elif m == l + step:  # a 2 x 2 block: its rotation, outright
                top = min(l, m)
                big, small, c, s = _eig2(d[top], e[top], d[top + 1])
                rotate_columns(z, top, c, s, range(n))
                d[top], d[top + 1], e[top] = big, small, 0 * e[top]
                l += 2 * step
            else:
                iterations += 1
                if iterations > 30 * n:
                    raise RuntimeError("[Eigh::eval_cpu] Eigenvalue decomposition failed "
                                       f"with error code {sum(1 for x in e if x != 0)}")
                _sweep(d, e, z, l, m, step)
            if (last - l) * step < 0:
                break
    for i in range(n - 1):  # selection sort, ascending
        k = min(range(i, n), key=lambda j: (d[j], j))
        if k != i:
            d[i], d[k] = d[k], d[i]
            for row in z:
                row[i], row[k] = row[k], row[i]


def _sweep(d, e, z, l, m, step):
    """One implicit QL sweep (step 1: from m up to l) or QR sweep (step -1:
    from m down to l) on the block between l and m, with Wilkinson's shift
    from the 2 x 2 corner at l; its rotations go into z's columns."""
    near = l + step  # the corner is d[l], e[between l and near], d[near]
    corner = e[min(l, near)]
    p = d[l]
    g = (d[near] - p) / (2 * corner)
    r = sqrt(g * g + 1)
    g = d[m] - p + corner / (g + sign(r, g))
    s = c = 1 + 0 * p
    p = 0 * p
    for q in range(m, l, -step):  # from m towards l; d[q] is the element nearer m
        o = q - step
        lo = min(q, o)  # the plane (lo, lo + 1)
        f, b = s * e[lo], c * e[lo]
        c, s, r = givens(g, f)
        if q != m:
            e[lo + step] = r
        g = d[q] - p
        r = (d[o] - g) * s + 2 * c * b
        p = s * r
        d[q] = g + p
        g = c * r - b
        rotate_columns(z, lo, c, -s if step > 0 else s, range(len(z)))
    d[l] -= p
    e[min(l, near)] = g


def _eig2(a, b, c):
    """The eigenvalues of [[a, b], [b, c]], the larger in magnitude first, and
    the rotation (cs, sn) whose first row is the first one's eigenvector
    (LAPACK's laev2)."""
    total, diff, twice_b = a + c, a - c, b + b
    gap = sqrt(diff * diff + twice_b * twice_b)
    big, other = (a, c) if abs(a) > abs(c) else (c, a)
    if total < 0:
        rt1, sign1 = (total - gap) / 2, -1
        rt2 = (big / rt1) * other - (b / rt1) * b
    elif total > 0:
        rt1, sign1 = (total + gap) / 2, 1
        rt2 = (big / rt1) * other - (b / rt1) * b
    else:
        rt1, rt2, sign1 = gap / 2, -gap / 2, 1
    cs, sign2 = (diff + gap, 1) if diff >= 0 else (diff - gap, -1)
    if abs(cs) > abs(twice_b):
        ct = -twice_b / cs
        sn1 = 1 / sqrt(1 + ct * ct)
        cs1 = ct * sn1
    elif twice_b == 0:
        cs1, sn1 = 1 + 0 * a, 0 * a
    else:
        tn = -cs / twice_b
        cs1 = 1 / sqrt(1 + tn * tn)
        sn1 = tn * cs1
    if sign1 == sign2:
        cs1, sn1 = -sn1, cs1
    return rt1, rt2, cs1, sn1
