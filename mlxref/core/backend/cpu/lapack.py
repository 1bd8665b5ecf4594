"""What the linear algebra kernels share in place of LAPACK: a matrix as a
list of rows, and the few number functions their algorithms need.

Read alongside: mlx/backend/cpu/lapack.h (the LAPACK routines MLX's kernels
call: geqrf/orgqr, gesdd, syevd/heevd, geev, potrf, getrf, getri, trtri).

mlxref does not call LAPACK: each kernel (qrf, svd, eigh, eig, cholesky,
luf, inverse) is a short algorithm a reader can follow, on one matrix at a
time held as a list of rows. Where the order or the signs of a result are a
convention (eigenvalues, eigenvectors, Q and R), the kernel takes LAPACK's
steps, so that it lands on LAPACK's choice: ``reflector`` (LAPACK's
larfg) and ``givens`` (lartg) below are the two building blocks. The
functions here work on floats, complex numbers and SymPy numbers alike: the
symbolic checks (mlxref.symbolic) run the iterative algorithms on SymPy
``Float`` numbers of 50 digits ("high precision points": an iteration cannot
run on symbols), and LU and Cholesky on SymPy expressions.
Read next: qrf.py, svd.py, eigh.py, eig.py (double precision, rounded once
by the store), cholesky.py, luf.py, inverse.py (each step rounded to the dtype).
"""

import cmath
import math

from ...scalar import is_symbolic, sympy


def sqrt(v):
    """The square root of a real v >= 0 (or of a complex number)."""
    if is_symbolic(v):
        return sympy.sqrt(v)
    return cmath.sqrt(v) if isinstance(v, complex) else math.sqrt(v)


def abs2(v):
    """|v|², without a square root."""
    return (v * v.conjugate()).real if isinstance(v, complex) else v * v


def norm(values):
    """The Euclidean norm of a vector of floats, complexes or SymPy numbers."""
    return sqrt(sum((abs2(v) for v in values), 0))


def eps(sample, dtype=None):
    """The relative precision the iterations stop at (LAPACK's lamch("P"), an
    ulp of 1): double's, or single's for a float32 or complex64 ``dtype`` (the
    kernels compute in double but decide what is negligible as MLX's
    single-precision LAPACK routines do, so they take the same steps), or
    10^-45 for the 50-digit SymPy Floats of the rule checks."""
    if is_symbolic(sample):
        return sympy.Float("1e-45", 50)
    return 2.0**-23 if _single(dtype) else 2.0**-52


def tiny(sample, dtype=None):
    """The smallest positive normal number (LAPACK's "safe minimum"), of
    single precision for a float32 or complex64 ``dtype``, or 10^-300 for the
    SymPy Floats of the rule checks."""
    if is_symbolic(sample):
        return sympy.Float("1e-300", 50)
    return 2.0**-126 if _single(dtype) else 2.0**-1022


def _single(dtype):
    return dtype is not None and dtype.name in ("float32", "complex64")


def sign(a, b):
    """|a| with the sign of b (Fortran's SIGN, which LAPACK's choices of a
    sign are written with; -0.0 counts as negative, as in gfortran)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.copysign(a, b)
    return abs(a) if b >= 0 else -abs(a)


def reflector(alpha, x):
    """The Householder reflection ``H = I - tau v vᴴ``, ``v = (1, w)``, with
    ``Hᴴ (alpha, x) = (beta, 0)`` and beta real: ``(beta, tau, w)``, by
    LAPACK's rule (larfg): beta has the sign opposite to alpha's real part,
    and there is no reflection (tau = 0) when x is zero and alpha real."""
    xnorm = norm(x)
    alpha_r, alpha_i = (alpha.real, alpha.imag) if isinstance(alpha, complex) else (alpha, 0)
    if xnorm == 0 and alpha_i == 0:
        return alpha, 0 * alpha, list(x)
    beta = -sign(sqrt(abs2(alpha) + xnorm * xnorm), alpha_r)
    if isinstance(alpha, complex):
        tau = complex((beta - alpha_r) / beta, -alpha_i / beta)
    else:
        tau = (beta - alpha) / beta
    scale = 1 / (alpha - beta)
    return beta, tau, [v * scale for v in x]


def givens(f, g):
    """The plane rotation ``(c, s, r)`` of real f and g with ``c f + s g = r``,
    ``-s f + c g = 0``, c >= 0 and r of f's sign (LAPACK 3.10's lartg)."""
    if g == 0:
        return 1 + 0 * f, 0 * f, f
    if f == 0:
        return 0 * g, sign(1 + 0 * g, g), abs(g)
    d = sqrt(f * f + g * g)
    return abs(f) / d, sign(1 / d, f) * g, sign(d, f)


def reflect(m, rows, v, tau, columns):
    """``m <- (I - tau v vᴴ) m`` on ``rows`` (v's support), for ``columns``."""
    if tau == 0:
        return
    for c in columns:
        dot = tau * sum(conj(x) * m[r][c] for r, x in zip(rows, v))
        for r, x in zip(rows, v):
            m[r][c] -= x * dot


def rotate_rows(m, i, c, s, columns):
    """Rows i and i + 1 of m by the plane rotation (c, s), for ``columns``
    (LAPACK's rot)."""
    for k in columns:
        x, y = m[i][k], m[i + 1][k]
        m[i][k], m[i + 1][k] = c * x + s * y, c * y - s * x


def rotate_columns(m, i, c, s, rows):
    """Columns i and i + 1 of m by the plane rotation (c, s), for ``rows``."""
    for r in rows:
        x, y = m[r][i], m[r][i + 1]
        m[r][i], m[r][i + 1] = c * x + s * y, c * y - s * x


def has_nan(data):
    return any(v != v for v in data)


def finite(data):
    """No nan and no infinity (SymPy numbers are finite)."""
    return all(is_symbolic(v) or cmath.isfinite(v) for v in data)


def conj(v):
    return v.conjugate()


def decided(condition):
    """A comparison's truth, or False when SymPy cannot decide it (the
    symbolic checks use inputs for which the undecided comparisons would
    come out False: no pivoting, a positive definite matrix)."""
    try:
        return bool(condition)
    except TypeError:
        return False


def identity(n):
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def matrices(data, shape):
    """Each matrix of the flat list ``data`` of ``shape`` (..., m, n) as a
    list of m rows."""
    m, n = shape[-2:]
    rows = [data[r * n : (r + 1) * n] for r in range(math.prod(shape[:-1]))]
    return [rows[b * m : (b + 1) * m] for b in range(math.prod(shape[:-2]))]


def flat(rows):
    return [v for row in rows for v in row]
