"""``mx.linalg``'s norms, solvers and factorizations: ``norm`` (also
``mx.matrix_norm``), ``solve``, ``solve_triangular``, ``cholesky``,
``cholesky_inv``, ``lu``, ``lu_factor``, ``det``, ``slogdet`` and ``cross``.

Read alongside: mlx/linalg.cpp (each function, and the helpers
``vector_norm``, ``matrix_norm``, ``validate_solve``, ``lu_helper``,
``det_raw_small``, ``slogdet_impl``) and python/src/linalg.cpp (the Python
signatures). Two of them build a primitive (``Cholesky``, ``LUF``: see
mlxref/core/primitives/solvers.py); the others are MLX's compositions, step
for step, so their dtypes, errors and derivatives are those of the ops they
are made of:

- ``solve`` is ``lu``, the right-hand side's rows put in the pivots' order
  (``argsort`` and ``take_along_axis``), then two ``solve_triangular``;
- ``solve_triangular`` is ``tri_inv(a) @ b``;
- ``det`` multiplies the elements out up to 3 x 3 and beyond that is
  ``sign * exp(logabsdet)`` from ``slogdet``, which reads the diagonal of
  ``U`` and the pivots' parity from ``lu_factor``.

These ops live in ``mx.linalg`` only (mlxref/core/linalg.py), as in MLX:
this module exports nothing to ``mx``.
Read next: mlxref/core/primitives/solvers.py (``Cholesky``, ``LUF``).
"""

import builtins
import math

from .. import dtypes as _dt
from ..array import array
from ..printing import format_shape
from ..primitives.base import make_array, make_arrays
from ..primitives.solvers import LUF, Cholesky
from .common import astype, broadcast_shapes, broadcast_to, incompatible_arguments, is_c_int
from .creation import arange, eye, tril, triu, zeros_like
from .diagonal import diagonal
from .docs import shared_doc
from .elementwise import (
    abs, add, equal, exp, less, log, multiply, negative, not_equal, power, remainder, sign,
    sqrt, square, stop_gradient, subtract, where,
)
from .factorizations import svd
from .indexing import take_along_axis
from .linalg import matmul, tri_inv
from .reduction import any, max, min, sum
from .shape import (
    concatenate, expand_dims, flatten, moveaxis, reshape, slice_axis, split, squeeze, swapaxes,
)
from .sort import argsort

__all__ = []  # mx.linalg's (mlxref/core/linalg.py), not mx's

_SIGNATURES = {
    "norm": "norm(a: array, /, ord: None | int | float | str = None, axis: None | int | "
    "list[int] = None, keepdims: bool = False, *, stream: StreamOrDevice = None) -> array",
    "solve": "solve(a: array, b: array, *, stream: StreamOrDevice = None) -> array",
    "solve_triangular": "solve_triangular(a: array, b: array, *, upper: bool = False, "
    "stream: StreamOrDevice = None) -> array",
    "cholesky": "cholesky(a: array, upper: bool = False, *, stream: StreamOrDevice = None) "
    "-> array",
    "cholesky_inv": "cholesky_inv(a: array, upper: bool = False, *, stream: StreamOrDevice = "
    "None) -> array",
    "lu": "lu(a: array, *, stream: StreamOrDevice = None) -> tuple[array, array, array]",
    "lu_factor": "lu_factor(a: array, *, stream: StreamOrDevice = None) -> tuple[array, array]",
    "det": "det(a: array, *, stream: StreamOrDevice = None) -> array",
    "slogdet": "slogdet(a: array, *, stream: StreamOrDevice = None) -> tuple[array, array]",
    "cross": "cross(a: array, b: array, axis: int = -1, *, stream: StreamOrDevice = None) "
    "-> array",
}


def _at_least_float(dtype):
    """MLX's ``at_least_float`` in mlx/linalg.cpp: inexact dtypes stay, the
    others are promoted with float32 (so int64 gives float32)."""
    return dtype if dtype.is_inexact else _dt.promote_types(dtype, _dt.float32)


def _check_float(dtype, prefix):
    if dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"{prefix} Arrays must have type float32 or float64. "
                         f"Received array with type {dtype.name}.")


def _check_matrices(a, prefix):
    if a.ndim < 2:
        raise ValueError(f"{prefix} Arrays must have >= 2 dimensions. "
                         f"Received array with {a.ndim} dimensions.")


# --- norm ------------------------------------------------------------------------------


def _l2_norm(a, axis, keepdims):
    """``sqrt(sum(|a|²))`` over ``axis`` (``abs(a) * abs(a)`` for complex ``a``)."""
    if a.dtype.is_complex:
        return sqrt(sum(multiply(abs(a), abs(a)), axis, keepdims))
    return sqrt(sum(square(a), axis, keepdims))


def _vector_norm(a, ord, axis, keepdims):
    dtype = _at_least_float(a.dtype)
    if ord == 0.0:
        return astype(sum(not_equal(a, array(0)), axis, keepdims), dtype)
    if ord == 1.0:
        return astype(sum(abs(a), axis, keepdims), dtype)
    if ord == 2.0:
        return _l2_norm(a, axis, keepdims)
    if ord == math.inf:
        return astype(max(abs(a), axis, keepdims), dtype)
    if ord == -math.inf:
        return astype(min(abs(a), axis, keepdims), dtype)
    return power(sum(power(abs(a), array(ord, dtype)), axis, keepdims), array(1.0 / ord, dtype))


def _singular_values(a, row_axis, col_axis):
    """The singular values of the matrices on (row_axis, col_axis)."""
    if row_axis > col_axis:
        matrices = moveaxis(moveaxis(a, row_axis, -1), col_axis, -1)
    else:
        matrices = moveaxis(moveaxis(a, col_axis, -1), row_axis, -2)
    return svd(matrices, compute_uv=False)


def _keep(out, row_axis, col_axis, keepdims):
    return expand_dims(out, sorted((row_axis, col_axis))) if keepdims else out


def _matrix_norm(a, ord, axis, keepdims):
    dtype = _at_least_float(a.dtype)
    row_axis = axis[0] + a.ndim if axis[0] < 0 else axis[0]
    col_axis = axis[1] + a.ndim if axis[1] < 0 else axis[1]
    if ord in (1.0, -1.0):  # the largest (smallest) column sum
        col_axis -= not keepdims and col_axis > row_axis and col_axis > 0
        pick = max if ord == 1.0 else min
        return astype(pick(sum(abs(a), row_axis, keepdims), col_axis, keepdims), dtype)
    if ord in (math.inf, -math.inf):  # the largest (smallest) row sum
        row_axis -= not keepdims and row_axis > col_axis and row_axis > 0
        pick = max if ord == math.inf else min
        return astype(pick(sum(abs(a), col_axis, keepdims), row_axis, keepdims), dtype)
    if ord in (2.0, -2.0):  # the largest (smallest) singular value
        values = _singular_values(a, row_axis, col_axis)
        out = max(values, -1) if ord == 2.0 else min(values, -1)
        return astype(_keep(out, row_axis, col_axis, keepdims), dtype)
    raise ValueError(f"[linalg::norm] Invalid ord {ord:g} for matrix norm.")


def _matrix_norm_named(a, ord, axis, keepdims):
    if ord in ("f", "fro"):
        return _l2_norm(a, axis, keepdims)
    if ord == "nuc":
        row_axis = axis[0] + a.ndim if axis[0] < 0 else axis[0]
        col_axis = axis[1] + a.ndim if axis[1] < 0 else axis[1]
        out = sum(_singular_values(a, row_axis, col_axis), -1)
        return _keep(out, row_axis, col_axis, keepdims)
    raise ValueError(f"[linalg::norm] Invalid ord value '{ord}' for matrix norm.")


def _is_int_list(axis):
    return isinstance(axis, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in axis)


@shared_doc
def norm(a, /, ord=None, axis=None, keepdims=False, *, stream=None):
    """``mx.linalg.norm`` (also ``mx.matrix_norm``, the same function): a vector norm over one axis or a matrix norm over two.

    Composed as mlx/linalg.cpp composes it. ``ord`` None is the 2-norm of the
    flattened array (no ``axis``) or of the axes given (one or two: the
    Frobenius norm for two). A number is a vector norm when there is one axis
    (``a``'s only one, when ``axis`` is None) — 0 counts the nonzero elements,
    ±inf is the largest (smallest) magnitude, others are
    ``sum(|a|**ord)**(1/ord)`` — and a matrix norm when there are two: ±1 and
    ±inf are the largest (smallest) column and row sums of magnitudes, ±2 the
    largest (smallest) singular value (from ``svd``). The strings "fro" (or
    "f") and "nuc" (the sum of the singular values) need two axes. The results
    are floats (integers give float32; complex64 stays complex64, as in MLX,
    even for ord 0 and 1).

    Arguments:
    - ``a``: the array.
    - ``ord``: None, a number (int or float, ``mx.inf`` included) or "fro",
      "f", "nuc" (default None).
    - ``axis``: None, an int or a list of one or two ints: the axes reduced
      (default None: every axis).
    - ``keepdims``: keep the reduced axes with size 1 (default False).

    Errors: ``ValueError`` for more than two axes (MLX: "[linalg::norm] Received
    too many axes for norm."), a number ``ord`` that is no matrix norm (MLX:
    "[linalg::norm] Invalid ord 3 for matrix norm."), another string (MLX:
    "[linalg::norm] Invalid ord value 'x' for matrix norm.") or a string with
    one axis (MLX: "[linalg::norm] Norm 'nuc' only supported for matrices, but
    received 1 axis/axes.").

    >>> a = mx.array([[3.0, -4.0], [0.0, 0.0]])
    >>> mx.linalg.norm(a), mx.linalg.norm(a, ord=1, axis=1)
    (array(5, dtype=float32), array([7, 0], dtype=float32))
    >>> mx.linalg.norm(a, ord=mx.inf)
    array(7, dtype=float32)
    """
    ord_ok = ord is None or isinstance(ord, (int, float, str))
    axis_ok = axis is None or (isinstance(axis, int) and not isinstance(axis, bool)) or \
        _is_int_list(axis)
    if not isinstance(a, array) or not ord_ok or not axis_ok or not isinstance(keepdims, bool):
        kwargs = {k: v for k, v in (("axis", axis), ("keepdims", keepdims))
                  if v is not None and v is not False}
        args = (a,) if ord is None else (a, ord)
        raise incompatible_arguments(_SIGNATURES["norm"], args, kwargs)
    if isinstance(axis, int):
        axis = [axis]
    elif axis is not None:
        axis = list(axis)
    if ord is None:
        if axis is None:
            out = norm(flatten(a), None, [0], keepdims)
            # flatten left one axis: keepdims restores all of a's, as ones
            return reshape(out, (1,) * a.ndim) if keepdims else out
        if len(axis) > 2:
            raise ValueError("[linalg::norm] Received too many axes for norm.")
        return _l2_norm(a, axis, keepdims)
    axes = list(range(a.ndim)) if axis is None else axis
    if isinstance(ord, str):
        if len(axes) != 2:
            raise ValueError(f"[linalg::norm] Norm '{ord}' only supported for matrices, but "
                             f"received {len(axes)} axis/axes.")
        return _matrix_norm_named(a, ord, axes, keepdims)
    ord = float(ord)
    if len(axes) == 1:
        return _vector_norm(a, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(a, ord, axes, keepdims)
    raise ValueError("[linalg::norm] Received too many axes for norm.")


# --- cholesky and cholesky_inv --------------------------------------------------------------


def _square_factor_checks(a, name, upper, what):
    if not isinstance(a, array) or not isinstance(upper, bool):
        raise incompatible_arguments(_SIGNATURES[name], (a,) if upper is False else (a, upper))
    prefix = f"[linalg::{name}]"
    _check_float(a.dtype, prefix)
    _check_matrices(a, prefix)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{prefix} {what} only defined for square matrices.")


@shared_doc
def cholesky(a, upper=False, *, stream=None):
    """``mx.linalg.cholesky``: the Cholesky factor of each symmetric positive definite matrix in the last two axes: lower ``L`` with ``L Lᵀ = a``, or upper ``U`` with ``Uᵀ U = a``.

    Only the triangle the factor lives in is read from ``a``. One ``Cholesky``
    node (float32 or float64), computed in double and rounded once. A matrix
    that is not positive definite raises nothing: the factor holds what
    LAPACK's ``potrf2`` leaves, as MLX's does. MLX has no vjp for it, and
    neither has mlxref ("Not implemented").

    Arguments:
    - ``a``: float32 or float64, at least two dimensions, square matrices.
    - ``upper``: return the upper factor instead of the lower (default False).

    Errors: ``ValueError`` for another dtype (MLX: "[linalg::cholesky] Arrays
    must have type float32 or float64. Received array with type int32."), fewer
    than two dimensions, or matrices that are not square (MLX:
    "[linalg::cholesky] Cholesky decomposition is only defined for square
    matrices.").

    >>> a = mx.array([[4.0, 2.0], [2.0, 3.0]])
    >>> mx.linalg.cholesky(a)
    array([[2, 0],
           [1, 1.41421]], dtype=float32)
    >>> mx.linalg.cholesky(a, upper=True)
    array([[2, 1],
           [0, 1.41421]], dtype=float32)
    """
    _square_factor_checks(a, "cholesky", upper, "Cholesky decomposition is")
    return make_array(Cholesky(upper), [a])


@shared_doc
def cholesky_inv(a, upper=False, *, stream=None):
    """``mx.linalg.cholesky_inv``: the inverse of a matrix ``A`` given its Cholesky factor ``a``.

    For a lower factor (``A = a aᵀ``) it is ``tri_inv(a)ᵀ tri_inv(a)``; for an
    upper one (``A = aᵀ a``) ``tri_inv(a) tri_inv(a)ᵀ``, composed as in
    mlx/linalg.cpp. Only the factor's triangle of ``a`` is read.

    Arguments:
    - ``a``: the Cholesky factor, float32 or float64, square matrices in the
      last two axes.
    - ``upper``: ``a`` is an upper factor (default False: lower).

    Errors: ``ValueError`` as ``cholesky``'s, e.g. for matrices that are not
    square (MLX: "[linalg::cholesky_inv] Cholesky inverse is only defined for
    square matrices.").

    >>> L = mx.array([[2.0, 0.0], [1.0, 1.0]])
    >>> mx.linalg.cholesky_inv(L)
    array([[0.5, -0.5],
           [-0.5, 1]], dtype=float32)
    """
    _square_factor_checks(a, "cholesky_inv", upper, "Cholesky inverse is")
    inverse = tri_inv(a, upper)
    if upper:
        return matmul(inverse, swapaxes(inverse, -1, -2))
    return matmul(swapaxes(inverse, -1, -2), inverse)


# --- lu and lu_factor ------------------------------------------------------------------


def _luf(a, name):
    """MLX's ``validate_lu`` and ``lu_helper``: the three outputs of one LUF node."""
    if not isinstance(a, array):
        raise incompatible_arguments(_SIGNATURES[name], (a,))
    prefix = f"[linalg::{name}]"
    _check_float(a.dtype, prefix)
    _check_matrices(a, prefix)
    if a.shape[-1] == 0 or a.shape[-2] == 0:  # MLX's CPU build dies of a division by zero
        raise ValueError(f"{prefix} Cannot factor an empty matrix of shape "
                         f"{format_shape(a.shape)}.")
    return make_arrays(LUF(), [a])


@shared_doc
def lu(a, *, stream=None):
    """``mx.linalg.lu``: the LU factorization with partial pivoting of each matrix in the last two axes, ``(p, L, U)`` with ``a = L[p] @ U``.

    ``p`` is the row order (uint32), ``L`` unit lower triangular (M x K) and
    ``U`` upper triangular (K x N), K = min(M, N). Composed of one ``LUF``
    node's packed result, as MLX's ``lu``; the pivots are LAPACK's (the largest
    magnitude in each column). mlxref gives square matrices a vjp and a jvp,
    which MLX lacks.

    Arguments:
    {float_matrices}

    Errors: {float_matrices_errors}. An empty matrix raises a ``ValueError``, where
    MLX's CPU build dies.

    >>> mx.linalg.lu(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    (array([1, 0], dtype=uint32), array([[1, 0],
           [0.333333, 1]], dtype=float32), array([[3, 4],
           [0, 0.666667]], dtype=float32))
    """
    lu_, _, rows = _luf(a, "lu")
    lower, upper = tril(lu_, -1), triu(lu_, 0)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    if n != k:
        lower = slice_axis(lower, lower.ndim - 1, 0, k)
    elif m != k:
        upper = slice_axis(upper, upper.ndim - 2, 0, k)
    return rows, add(lower, eye(m, k)), upper


@shared_doc
def lu_factor(a, *, stream=None):
    """``mx.linalg.lu_factor``: the LU factorization in LAPACK's compact form, ``(LU, pivots)``.

    ``LU`` holds ``U`` on and above the diagonal and ``L`` below it (its unit
    diagonal left out); ``pivots[i]`` is the row that step ``i`` swapped with
    row ``i`` (uint32, counted from 0). Two of one ``LUF`` node's outputs.

    Arguments:
    {float_matrices}

    Errors: {float_matrices_errors}.

    >>> mx.linalg.lu_factor(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    (array([[3, 4],
           [0.333333, 0.666667]], dtype=float32), array([1, 1], dtype=uint32))
    """
    lu_, pivots, _ = _luf(a, "lu_factor")
    return lu_, pivots


# --- solve and solve_triangular --------------------------------------------------------------


def _validate_solve(a, b, name):
    """MLX's ``validate_solve``."""
    prefix = f"[linalg::{name}]"
    if a.ndim < 2:
        raise ValueError(f"{prefix} First input must have >= 2 dimensions. "
                         f"Received array with {a.ndim} dimensions.")
    if b.ndim < 1:
        raise ValueError(f"{prefix} Second input must have >= 1 dimensions. "
                         f"Received array with {b.ndim} dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{prefix} First input must be a square matrix. "
                         f"Received array with shape {format_shape(a.shape)}.")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else -1]:
        raise ValueError(
            f"{prefix} Last dimension of first input with shape {format_shape(a.shape)} must "
            f"match second to last dimension of second input with shape {format_shape(b.shape)}."
        )
    out_type = _dt.promote_types(a.dtype, b.dtype)
    if out_type not in (_dt.float32, _dt.float64):
        raise ValueError(f"{prefix} Input arrays must promote to float32 or float64.  Received "
                         f"arrays with type {a.dtype.name} and {b.dtype.name}.")


@shared_doc
def solve(a, b, *, stream=None):
    """``mx.linalg.solve``: the solution ``x`` of ``a @ x = b`` for each square matrix ``a`` in the last two axes.

    As MLX composes it: the LU factorization of ``a``, ``b``'s rows put in the
    pivots' order, then a lower and an upper triangular solve (each
    ``tri_inv(...) @ ...``). ``a`` itself must be float32 or float64 (``lu``'s
    check). As in MLX, ``b`` must have as many dimensions as ``a`` (or be a
    vector beside a single matrix): the rows are gathered with
    ``take_along_axis``, which does not broadcast a batch in. The gradient stops
    at LU's row order.

    Arguments:
    - ``a``: square matrices in the last two axes.
    - ``b``: a vector or matrices with as many rows as ``a``.

    Errors: ``ValueError`` for a matrix that is not square (MLX:
    "[linalg::solve] First input must be a square matrix. Received array with
    shape (2,3)."), sizes that do not match (MLX: "[linalg::solve] Last
    dimension of first input with shape (2,2) must match second to last
    dimension of second input with shape (3).") or dtypes that do not promote to
    float32 or float64 (MLX: "[linalg::solve] Input arrays must promote to
    float32 or float64.  Received arrays with type int32 and int32."). A
    singular ``a`` raises ``RuntimeError`` when evaluated (MLX:
    "[Inverse::eval_cpu] triangular inversion failed with error code 2").

    >>> a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    >>> mx.linalg.solve(a, mx.array([5.0, 11.0]))
    array([1, 2], dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(b, array):
        raise incompatible_arguments(_SIGNATURES["solve"], (a, b))
    _validate_solve(a, b, "solve")
    order, lower, upper = lu(a)
    # (The row order is piecewise constant in ``a``: no gradient flows into it.
    # MLX has no vjp for LUF, so there the question never comes up; without
    # this stop, take_along_axis's vjp would refuse its indices.)
    perm = stop_gradient(argsort(order, -1))
    take_axis = -1
    if b.ndim >= 2:
        perm = expand_dims(perm, -1)
        take_axis = -2
    pb = take_along_axis(b, perm, take_axis)
    return solve_triangular(upper, solve_triangular(lower, pb, upper=False), upper=True)


@shared_doc
def solve_triangular(a, b, *, upper=False, stream=None):
    """``mx.linalg.solve_triangular``: the solution ``x`` of ``a @ x = b`` for each triangular matrix ``a``.

    Composed as in mlx/linalg.cpp: ``tri_inv(a, upper) @ b``. Only the lower
    triangle of ``a`` (or the upper one, with ``upper=True``) is read.

    Arguments:
    - ``a``: triangular matrices in the last two axes (float32 or float64).
    - ``b``: a vector or matrices with as many rows as ``a``.
    - ``upper``: read the upper triangle instead of the lower (default False).

    Errors: ``ValueError`` as ``solve``'s (with "[linalg::solve_triangular]"),
    e.g. for a 0-d ``b`` (MLX: "[linalg::solve_triangular] Second input must
    have >= 1 dimensions. Received array with 0 dimensions.").

    >>> mx.linalg.solve_triangular(mx.array([[2.0, 0.0], [1.0, 4.0]]), mx.array([2.0, 9.0]))
    array([1, 2], dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(b, array) or not isinstance(upper, bool):
        raise incompatible_arguments(_SIGNATURES["solve_triangular"], (a, b),
                                     {"upper": upper} if upper is not False else None)
    _validate_solve(a, b, "solve_triangular")
    return matmul(tri_inv(a, upper), b)


# --- det and slogdet -------------------------------------------------------------------


def _validate_det(a, name):
    if not isinstance(a, array):
        raise incompatible_arguments(_SIGNATURES[name], (a,))
    prefix = f"[linalg::{name}]"
    if a.dtype.is_complex:
        raise ValueError(f"{prefix} Complex inputs are not supported.")
    _check_matrices(a, prefix)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{prefix} Only defined for square matrices.")
    return astype(a, _at_least_float(a.dtype))


def _det_small(a):
    """MLX's ``det_raw_small``: the determinant of matrices up to 3 x 3,
    multiplied out from their elements (1 for 0 x 0: the empty product)."""
    n = a.shape[-1]
    if n == 0:
        return broadcast_to(array(1.0, a.dtype), a.shape[:-2])

    def element(i, j):
        row = slice_axis(slice_axis(a, a.ndim - 2, i, i + 1), a.ndim - 1, j, j + 1)
        return squeeze(squeeze(row, -1), -1)

    if n == 1:
        return element(0, 0)

    def minor(i, j, k, l):  # a_ik a_jl - a_il a_jk
        return subtract(multiply(element(i, k), element(j, l)),
                        multiply(element(i, l), element(j, k)))

    if n == 2:
        return minor(0, 1, 0, 1)
    # the expansion along the first row
    return add(subtract(multiply(element(0, 0), minor(1, 2, 1, 2)),
                        multiply(element(0, 1), minor(1, 2, 0, 2))),
               multiply(element(0, 2), minor(1, 2, 0, 1)))


def _slogdet(a):
    """MLX's ``slogdet_impl``: ``(sign, log|det|)``. Up to 3 x 3 from the
    determinant itself; beyond, from the LU factorization: ``log|det|`` is
    the sum of ``log|u_ii|``, the sign is -1 to the number of pivots that
    swapped a row plus the number of negative ``u_ii``; a zero ``u_ii``
    gives sign 0 and ``log|det|`` -inf."""
    n = a.shape[-1]
    dtype = a.dtype
    if n <= 3:
        raw = _det_small(a)
        return sign(raw), log(abs(raw))
    lu_, pivots = lu_factor(a)
    diag = diagonal(lu_, 0, -2, -1)
    k = builtins.min(a.shape[-2], a.shape[-1])
    parity = astype(sum(not_equal(pivots, arange(0, k, dtype=_dt.uint32)), -1), _dt.int32)
    negatives = astype(sum(less(diag, array(0.0, dtype)), -1), _dt.int32)
    total = add(parity, negatives)
    two = array(2, _dt.int32)
    sign_ = astype(subtract(array(1, _dt.int32), multiply(two, remainder(total, two))), dtype)
    logabsdet = sum(log(abs(diag)), -1)
    singular = any(equal(diag, array(0.0, dtype)), -1)
    sign_ = where(singular, array(0.0, dtype), sign_)
    logabsdet = where(singular, array(-math.inf, dtype), logabsdet)
    return sign_, logabsdet


@shared_doc
def slogdet(a, *, stream=None):
    """``mx.linalg.slogdet``: the sign and the log of the absolute value of each determinant, ``(sign, logabsdet)`` with ``det = sign * exp(logabsdet)``.

    As MLX's ``slogdet_impl``: up to 3 x 3 from the determinant multiplied
    out; beyond (where the determinant itself may overflow or underflow),
    from ``lu_factor``: ``logabsdet`` is the sum of ``log|u_ii|`` and the sign
    -1 to the number of row swaps plus the number of negative ``u_ii``. A
    singular matrix gives sign 0 and ``logabsdet`` -inf. Integers and bools
    are computed as float32. Differentiable at every size (beyond 3 x 3 through
    ``LUF``'s rules, which MLX lacks).

    Arguments:
    - ``a``: square matrices in the last two axes (not complex).

    Errors: ``ValueError`` for complex input (MLX: "[linalg::slogdet] Complex
    inputs are not supported."), fewer than two dimensions or matrices that are
    not square (MLX: "[linalg::slogdet] Only defined for square matrices.").

    >>> mx.linalg.slogdet(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    (array(-1, dtype=float32), array(0.693147, dtype=float32))
    """
    return _slogdet(_validate_det(a, "slogdet"))


@shared_doc
def det(a, *, stream=None):
    """``mx.linalg.det``: the determinant of each square matrix in the last two axes.

    As MLX composes it: multiplied out from the elements up to 3 x 3, else
    ``sign * exp(logabsdet)`` from ``slogdet``. Integers and bools are computed
    as float32. Its gradient is the textbook ``det(a) a⁻ᵀ``, here from the rules
    of the ops it is made of (``LUF``'s beyond 3 x 3, where MLX 0.32 has none).

    Arguments:
    - ``a``: square matrices in the last two axes (not complex).

    Errors: ``ValueError`` for complex input (MLX: "[linalg::det] Complex inputs
    are not supported."), fewer than two dimensions (MLX: "[linalg::det] Arrays
    must have >= 2 dimensions. Received array with 1 dimensions.") or matrices
    that are not square (MLX: "[linalg::det] Only defined for square
    matrices.").

    >>> mx.linalg.det(mx.array([[1, 2], [3, 4]]))
    array(-2, dtype=float32)
    """
    a = _validate_det(a, "det")
    if a.shape[-1] <= 3:
        return _det_small(a)
    sign_, logabsdet = _slogdet(a)
    return multiply(sign_, exp(logabsdet))


# --- cross -----------------------------------------------------------------------------


@shared_doc
def cross(a, b, axis=-1, *, stream=None):
    """``mx.linalg.cross``: the cross product of the 3-vectors of ``a`` and ``b`` along ``axis``.

    A 2-vector counts as a 3-vector whose third component is 0. The other axes
    broadcast, and the dtypes are promoted (integers stay integers). Composed of
    splits, products and a concatenation, as MLX's.

    Arguments:
    - ``a``: an array whose ``axis`` has size 2 or 3.
    - ``b``: an array whose ``axis`` has size 2 or 3.
    - ``axis``: the axis holding the vectors (default -1).

    Errors: ``ValueError`` when ``axis`` has another size (MLX:
    "[linalg::cross] The specified axis must have size 2 or 3."); ``IndexError``
    when it is out of range (MLX: "[linalg::cross] Axis 1 is out of bounds for
    array with 1 dimensions.").

    >>> mx.linalg.cross(mx.array([1, 2, 3]), mx.array([4, 5, 6]))
    array([-3, 6, -3], dtype=int32)
    >>> mx.linalg.cross(mx.array([1.0, 0.0, 0.0]), mx.array([0.0, 1.0, 0.0]))
    array([0, 0, 1], dtype=float32)
    """
    if (not isinstance(a, array) or not isinstance(b, array) or not isinstance(axis, int)
            or not is_c_int(axis)):
        raise incompatible_arguments(_SIGNATURES["cross"], (a, b),
                                     {"axis": axis} if axis != -1 else None)
    for x in (a, b):
        if axis < -x.ndim or axis >= x.ndim:
            raise IndexError(f"[linalg::cross] Axis {axis} is out of bounds for array with "
                             f"{x.ndim} dimensions.")
        if x.shape[axis] not in (2, 3):
            raise ValueError("[linalg::cross] The specified axis must have size 2 or 3.")
    a_2d, b_2d = a.shape[axis] == 2, b.shape[axis] == 2
    out_type = _dt.promote_types(a.dtype, b.dtype)
    a_shape, b_shape = list(a.shape), list(b.shape)
    a_shape[axis] = b_shape[axis] = 3
    out_shape = list(broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    if axis < 0:
        axis += len(out_shape)
    out_shape[axis] = 2 if a_2d else 3
    a_ = broadcast_to(astype(a, out_type), tuple(out_shape))
    out_shape[axis] = 2 if b_2d else 3
    b_ = broadcast_to(astype(b, out_type), tuple(out_shape))
    x = split(a_, 2 if a_2d else 3, axis)
    y = split(b_, 2 if b_2d else 3, axis)
    if a_2d and b_2d:
        zero = zeros_like(x[0])
        parts = [zero, zero]
    elif b_2d:
        parts = [negative(multiply(x[2], y[1])), multiply(x[2], y[0])]
    elif a_2d:
        parts = [multiply(x[1], y[2]), negative(multiply(x[0], y[2]))]
    else:
        parts = [subtract(multiply(x[1], y[2]), multiply(x[2], y[1])),
                 subtract(multiply(x[2], y[0]), multiply(x[0], y[2]))]
    parts.append(subtract(multiply(x[0], y[1]), multiply(x[1], y[0])))
    return concatenate(parts, axis)
