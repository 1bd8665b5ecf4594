"""What the linear algebra kernels share in place of LAPACK: a matrix as a
list of rows, and the few number functions their algorithms need.

Read alongside: mlx/backend/cpu/lapack.h (the LAPACK routines MLX's kernels
call: geqrf/orgqr, gesdd, syevd/heevd, geev, potrf, getrf, getri, trtri).

mlxref does not call LAPACK: each kernel (qrf, svd, eigh, eig, cholesky,
luf, inverse) is a short algorithm a reader can follow, on one matrix at a
time held as a list of rows. The functions here work on floats, complex
numbers and SymPy numbers alike: the symbolic checks (mlxref.symbolic) run
the iterative algorithms on SymPy ``Float`` numbers of 50 digits ("high
precision points": an iteration cannot run on symbols), and LU and Cholesky
on SymPy expressions.
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


def eps(sample):
    """The relative precision the iterations stop at: double's, or 10^-45 for
    the 50-digit SymPy Floats of the rule checks."""
    if is_symbolic(sample):
        return sympy.Float("1e-45", 50)
    return 2.0**-52


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
