"""Reductions, scans and softmax: sum, prod, mean, var, std, max, min, argmax,
argmin, all, any, logsumexp, cumsum, cumprod, cummax, cummin, logcumsumexp,
softmax.

Read alongside: mlx/ops.cpp (``compute_reduce_shape``, ``sum`` ... ``softmax``,
``number_of_elements``) and python/src/ops.cpp (``get_reduce_axes``: ``axis=None``
means every axis). The primitives are in ``mlxref.core.primitives.reduction``.

As in MLX, ``mean``, ``var`` and ``std`` are not primitives: they are composed
of ``sum``, ``multiply`` / ``divide``, ``subtract``, ``square`` and ``sqrt``.

Differences from MLX 0.32.4, on purpose:

- A float32 ``sum`` (so ``mean``, ``var``, ``std``) is formed in double and
  rounded once; MLX's CPU build adds left to right in float32. The results
  differ in the last bits, never in overflow (see ``reduction_op`` in
  mlxref/core/backend/cpu/reduce.py).
- ``logsumexp`` and ``softmax`` of integers over any axes but the last:
  MLX subtracts the max in the integer type, which wraps around (uint8
  ``[0, 2]`` over axis 0 gives inf); mlxref subtracts in float.
- The graph is slightly smaller than MLX's: ``keepdims`` is a parameter of
  the reduction instead of a ``Squeeze`` after it, ``argmax(axis=None)`` and
  ``cumsum(axis=None)`` need no ``Flatten`` before them, and ``logsumexp`` /
  ``softmax`` are one node over any axes (see the primitives' docstring).
  Results, dtypes and errors are MLX's, including ``softmax`` keeping the
  input's dtype (ints give ints!) when it does not reduce the last axis.
"""

import builtins
import math

from .. import dtypes as _dt
import copy

from ..array import array
from ..primitives import reduction as P
from ..primitives.base import make_array
from ..transforms.tape import in_dynamic_tracing
from ..convert import scalar_array
from .common import astype, float_dtype, incompatible_arguments, index_value, is_c_int
from .docs import shared_doc
from .elementwise import abs as _abs
from .elementwise import (
    add, conjugate, divide, equal, exp, log, maximum, multiply, not_equal, real, sqrt, square,
    stop_gradient, subtract, where,
)
from .shape import reshape, squeeze

__all__ = [
    "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "all", "any",
    "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "cumulative_sum",
    "cumulative_prod", "softmax", "count_nonzero", "minmax"
]

# --- argument checks ------------------------------------------------------------------
# MLX's Python bindings (nanobind) reject a wrongly typed argument with this
# TypeError before the op runs. mlxref writes its first two lines (MLX's
# third line, "Invoked with types: ...", depends on how the call was spelled).

_SIGNATURES = {
    name: f"{name}(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = False, "
    "*, stream: StreamOrDevice = None) -> array"
    for name in ("sum", "prod", "mean", "max", "min", "all", "any", "logsumexp")
}
for _name in ("var", "std"):
    _SIGNATURES[_name] = (
        f"{_name}(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = False, "
        "ddof: int = 0, *, stream: StreamOrDevice = None) -> array"
    )
_SIGNATURES["count_nonzero"] = (
    "count_nonzero(a: array, /, *, axis: None | int | Sequence[int] = None, keepdims: bool = "
    "False, stream: StreamOrDevice = None) -> array"
)
_SIGNATURES["minmax"] = (
    "minmax(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = False, *, "
    "stream: StreamOrDevice = None) -> tuple[array, array]"
)
for _name in ("argmax", "argmin"):
    _SIGNATURES[_name] = (
        f"{_name}(a: array, /, axis: None | int = None, keepdims: bool = False, "
        "*, stream: StreamOrDevice = None) -> array"
    )
_SIGNATURES["cumsum"] = (
    "cumsum(a: array, /, axis: int | None = None, *, reverse: bool = False, "
    "inclusive: bool = True, dtype: Dtype | None = None, stream: StreamOrDevice = None) -> array"
)
_SIGNATURES["cumprod"] = _SIGNATURES["cumsum"].replace("cumsum", "cumprod")
for _name in ("cummax", "cummin", "logcumsumexp"):
    _SIGNATURES[_name] = (
        f"{_name}(a: array, /, axis: int | None = None, *, reverse: bool = False, "
        "inclusive: bool = True, stream: StreamOrDevice = None) -> array"
    )
_SIGNATURES["softmax"] = (
    "softmax(a: array, /, axis: None | int | Sequence[int] = None, *, precise: bool = False, "
    "stream: StreamOrDevice = None) -> array"
)


def _bad_arguments(op):
    return incompatible_arguments(_SIGNATURES[op])


def _check_args(op, a, keepdims=False, **flags):
    """``a`` must be an array and every flag a bool (MLX converts neither)."""
    if not isinstance(a, array):
        raise _bad_arguments(op)
    for value in (keepdims, *flags.values()):
        if not isinstance(value, bool):
            raise _bad_arguments(op)


def _axes_arg(op, axis, ndim):
    """MLX's ``get_reduce_axes``: None is every axis, an int is one, else a sequence."""
    if axis is None:
        return list(range(ndim))
    if is_c_int(axis):
        return [int(axis)]
    if isinstance(axis, (list, tuple)) and builtins.all(is_c_int(ax) for ax in axis):
        return [int(ax) for ax in axis]
    raise _bad_arguments(op)


def _single_axis_arg(op, axis):
    if axis is None or is_c_int(axis):
        return None if axis is None else int(axis)
    raise _bad_arguments(op)


def _reduce_axes(axes, shape, op_without_identity=None):
    """MLX's ``compute_reduce_shape``: the sorted, non-negative, checked axes.

    ``max`` and ``min`` have no identity element, so they name themselves here
    and an empty reduced axis is refused.
    """
    ndim = len(shape)
    normal = []
    for ax in axes:
        if ax < -ndim or ax >= ndim:
            raise IndexError(f"Invalid axis {ax} for array with {ndim} dimensions.")
        normal.append(ax % ndim)
    if len(set(normal)) != len(normal):
        raise ValueError("Duplicate axes detected in reduction.")
    normal.sort()
    if op_without_identity is not None:
        for ax in normal:
            if shape[ax] == 0:
                raise ValueError(
                    f"[{op_without_identity}] Cannot {op_without_identity} "
                    f"reduce over axis {ax} with size 0."
                )
    return tuple(normal)


# --- Reduce: sum, prod, max, min, all, any --------------------------------------------


def _reduce(kind, a, axes, keepdims):
    """A ``Reduce`` node over the (raw, unchecked) ``axes`` of ``a``."""
    if not axes:
        # Reducing over no axes changes nothing (MLX returns the input; all
        # and any cast it to bool).
        return astype(a, _dt.bool_) if kind in ("and", "or") else copy.copy(a)
    checked = _reduce_axes(axes, a.shape, kind if kind in ("max", "min") else None)
    return make_array(P.Reduce(kind, checked, keepdims), [a])


@shared_doc
def sum(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.sum``: the sum of the elements of ``a`` over ``axis`` (default: over every axis).

    The result's dtype: {reduce_dtype}. The sum over an empty axis is 0. One
    ``Reduce`` node; a float32 sum is formed in double and rounded once (MLX adds
    in float32, so the last bits can differ).

    Arguments:
    {reduce_arguments}

    Errors: {reduce_axis_errors}.

    >>> a = mx.array([[1, 2], [3, 4]])
    >>> mx.sum(a)
    array(10, dtype=int32)
    >>> mx.sum(a, axis=1, keepdims=True)
    array([[3],
           [7]], dtype=int32)
    """
    _check_args("sum", a, keepdims)
    return _reduce("sum", a, _axes_arg("sum", axis, a.ndim), keepdims)


@shared_doc
def prod(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.prod``: the product of the elements of ``a`` over ``axis`` (default: over every axis).

    The result's dtype is ``sum``'s: {reduce_dtype}, so an int8 product does not
    wrap at 8 bits. The product over an empty axis is 1. One ``Reduce`` node.

    Arguments:
    {reduce_arguments}

    Errors: {reduce_axis_errors}.

    >>> mx.prod(mx.array([[1, 2], [3, 4]]), axis=1)
    array([2, 12], dtype=int32)
    """
    _check_args("prod", a, keepdims)
    return _reduce("prod", a, _axes_arg("prod", axis, a.ndim), keepdims)


@shared_doc
def max(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.max``: the largest element of ``a`` over ``axis`` (default: over every axis).

    A nan anywhere in a run makes that result nan. One ``Reduce`` node; its
    gradient is shared equally by the elements that tie for the maximum.

    Arguments:
    {reduce_arguments}

    Errors: {empty_axis_error}; {reduce_axis_errors}.

    >>> mx.max(mx.array([[1, 5], [3, 2]]), axis=0)
    array([3, 5], dtype=int32)
    >>> mx.max(mx.array([1.0, float("nan"), 2.0]))
    array(nan, dtype=float32)
    """
    _check_args("max", a, keepdims)
    return _reduce("max", a, _axes_arg("max", axis, a.ndim), keepdims)


@shared_doc
def min(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.min``: the smallest element of ``a`` over ``axis`` (default: over every axis).

    As in ``max``, a nan makes the result of its run nan, and the elements that
    tie for the minimum share its gradient equally. One ``Reduce`` node.

    Arguments:
    {reduce_arguments}

    Errors: {empty_axis_error}; {reduce_axis_errors}.

    >>> mx.min(mx.array([[1, 5], [3, 2]]), axis=1)
    array([1, 2], dtype=int32)
    """
    _check_args("min", a, keepdims)
    return _reduce("min", a, _axes_arg("min", axis, a.ndim), keepdims)


@shared_doc
def all(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.all``: whether every element of ``a`` over ``axis`` is true (nonzero), as a bool array.

    True over an empty axis. One ``Reduce`` node (a bool cast of ``a`` when
    ``axis`` is empty).

    Arguments:
    {reduce_arguments}

    Errors: {reduce_axis_errors}.

    >>> mx.all(mx.array([[1, 0], [2, 3]]), axis=1)
    array([False, True], dtype=bool)
    >>> mx.all(mx.zeros((0,)))
    array(True, dtype=bool)
    """
    _check_args("all", a, keepdims)
    return _reduce("and", a, _axes_arg("all", axis, a.ndim), keepdims)


@shared_doc
def any(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.any``: whether some element of ``a`` over ``axis`` is true (nonzero), as a bool array.

    False over an empty axis; a nan is nonzero, so it counts as true. As in ``all``,
    one ``Reduce`` node (a bool cast of ``a`` when ``axis`` is empty).

    Arguments:
    {reduce_arguments}

    Errors: {reduce_axis_errors}.

    >>> mx.any(mx.array([[0, 0], [0, 3]]), axis=1)
    array([False, True], dtype=bool)
    """
    _check_args("any", a, keepdims)
    return _reduce("or", a, _axes_arg("any", axis, a.ndim), keepdims)


@shared_doc
def minmax(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.minmax``: the tuple ``(min(a, axis), max(a, axis))``.

    The two are the ``min`` and ``max`` ops over the same axes (their errors,
    rules and nans; ``min``'s errors come first).

    Arguments:
    {reduce_arguments}

    Errors: ``ValueError`` over an axis of size 0 (MLX: "[min] Cannot min reduce over
    axis 0 with size 0."); {reduce_axis_errors}.

    >>> mx.minmax(mx.array([[3, 1], [0, 5]]), axis=1)
    (array([1, 0], dtype=int32), array([3, 5], dtype=int32))
    """
    _check_args("minmax", a, keepdims)
    axes = _axes_arg("minmax", axis, a.ndim)
    return _reduce("min", a, axes, keepdims), _reduce("max", a, axes, keepdims)


@shared_doc
def count_nonzero(a, /, axis=None, *, keepdims=False, stream=None):
    """``mx.count_nonzero``: how many elements of ``a`` over ``axis`` are not zero, as int32.

    As MLX composes it: ``sum(astype(a != 0, int32))``; a nan counts, -0.0 does
    not. MLX's signature shows ``axis`` keyword-only, but its binding takes it
    by position too, and so does this one.

    Arguments:
    - ``a``: the array.
    - ``axis``: {axes}
    - ``keepdims``: keep the reduced axes with size 1, keyword-only (default: False).

    Errors: {reduce_axis_errors}.

    >>> mx.count_nonzero(mx.array([0, 1, 2, 0]))
    array(2, dtype=int32)
    >>> mx.count_nonzero(mx.array([[0, 1], [2, 3]]), axis=1)
    array([1, 2], dtype=int32)
    """
    _check_args("count_nonzero", a, keepdims)
    axes = _axes_arg("count_nonzero", axis, a.ndim)
    nonzero = astype(not_equal(a, scalar_array(0, a.dtype)), _dt.int32)
    return _reduce("sum", nonzero, axes, keepdims)


# --- mean, var, std: composed, as in mlx/ops.cpp -----------------------------------


def _number_of_elements(a, axes, inverted, dtype):
    """MLX's ``number_of_elements``: a constant array (its count, or 1 / count).

    1 / 0 is inf here, as in C++, so the mean of nothing is 0 * inf = nan.
    """
    if in_dynamic_tracing():  # counted again at every replay
        axes = [ax % a.ndim for ax in axes]
        return stop_gradient(make_array(P.NumberOfElements(axes, inverted, dtype), [a]))
    count = float(math.prod(a.shape[ax] for ax in axes))
    if inverted:
        count = 1.0 / count if count else float("inf")
    return scalar_array(count, dtype)


def _mean(a, axes, keepdims):
    ndim = a.ndim
    for ax in axes:
        if ax < -ndim or ax >= ndim:
            raise IndexError(
                f"[mean] axis {ax} is out of bounds for array with {ndim} dimensions."
            )
    normalizer = _number_of_elements(a, axes, True, float_dtype(a.dtype))
    return multiply(_reduce("sum", a, axes, keepdims), normalizer)


def _var(a, axes, keepdims, ddof):
    dtype = float_dtype(a.dtype)
    mu = _mean(a, axes, True)
    d = subtract(a, mu)
    if dtype is _dt.complex64:
        # The mean squared magnitude, a float32 (MLX: real(d * conj(d))).
        squares, dtype = real(multiply(d, conjugate(d))), _dt.float32
    else:
        squares = square(d)
    v = _reduce("sum", squares, axes, keepdims)
    if ddof != 0:
        # n - ddof, but never below 0: a variance with too few elements is inf (or nan).
        count = subtract(_number_of_elements(a, axes, False, dtype), array(ddof, dtype))
        return divide(v, maximum(count, array(0, dtype)))
    return multiply(v, _number_of_elements(a, axes, True, dtype))


@shared_doc
def mean(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.mean``: the arithmetic mean of the elements of ``a`` over ``axis`` (default: over every axis).

    As in MLX: ``sum`` times the constant 1/n; the mean over an empty axis is nan
    (0 times inf).

    Arguments:
    - ``a``: the array; integers and bools give a float32 mean.
    - ``axis``: {axes}
    - ``keepdims``: {keepdims}

    Errors: {mean_axis_errors}.

    >>> mx.mean(mx.array([1, 2, 3, 4]))
    array(2.5, dtype=float32)
    >>> mx.mean(mx.array([[1.0, 2.0], [3.0, 5.0]]), axis=1)
    array([1.5, 4], dtype=float32)
    """
    _check_args("mean", a, keepdims)
    return _mean(a, _axes_arg("mean", axis, a.ndim), keepdims)


@shared_doc
def var(a, /, axis=None, keepdims=False, ddof=0, *, correction=None, stream=None):
    """``mx.var``: the variance of the elements of ``a`` over ``axis``: the mean squared deviation from their mean, divided by ``n - ddof`` instead of ``n`` when ``ddof`` is not 0.

    Composed as in MLX from ``mean``, ``subtract``, ``square`` and ``sum``; ints
    and bools give float32, complex64 gives the float32 mean squared magnitude.
    With ``n - ddof <= 0`` the result is inf (or nan).

    Arguments:
    {reduce_arguments}
    - ``ddof``: the "delta degrees of freedom" subtracted from the count (default: 0).
    - ``correction``: the array API's name for ``ddof``, keyword only; an int, or None
      (the default) to use ``ddof``. Given, it wins over ``ddof``.

    Errors: {mean_axis_errors}.

    >>> mx.var(mx.array([1.0, 2.0, 3.0, 4.0]))
    array(1.25, dtype=float32)
    """
    _check_args("var", a, keepdims)
    ddof = ddof if correction is None else correction  # MLX 0.32.4: correction wins
    if not is_c_int(ddof):
        raise _bad_arguments("var")
    return _var(a, _axes_arg("var", axis, a.ndim), keepdims, index_value(ddof))


@shared_doc
def std(a, /, axis=None, keepdims=False, ddof=0, *, correction=None, stream=None):
    """``mx.std``: the standard deviation of the elements of ``a`` over ``axis``: ``sqrt(var(a, axis, keepdims, ddof))``.

    Arguments:
    {reduce_arguments}
    - ``ddof``: the "delta degrees of freedom" subtracted from the count (default: 0).
    - ``correction``: the array API's name for ``ddof``, keyword only; an int, or None
      (the default) to use ``ddof``. Given, it wins over ``ddof``.

    Errors: {mean_axis_errors}.

    >>> mx.std(mx.array([2, 4, 4, 4, 5, 5, 7, 9]))
    array(2, dtype=float32)
    """
    _check_args("std", a, keepdims)
    ddof = ddof if correction is None else correction  # MLX 0.32.4: correction wins
    if not is_c_int(ddof):
        raise _bad_arguments("std")
    return sqrt(_var(a, _axes_arg("std", axis, a.ndim), keepdims, index_value(ddof)))


# --- argmax, argmin ------------------------------------------------------------------


def _arg_reduce(kind, a, axis, keepdims):
    _check_args(kind, a, keepdims)
    axis = _single_axis_arg(kind, axis)
    if a.size == 0:
        raise ValueError(f"[{kind}] Cannot {kind} reduce zero size array.")
    if axis is None:
        if keepdims and a.ndim == 0:
            # MLX asks for a vector of ndim - 1 axes to expand; for a 0-d
            # array that size wraps around and C++ throws this.
            raise ValueError("cannot create std::vector larger than max_size()")
    else:
        (axis,) = _reduce_axes([axis], a.shape)
    return make_array(P.ArgReduce(kind, axis, keepdims), [a])


@shared_doc
def argmax(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.argmax``: the index of the largest element of ``a`` along ``axis``, as uint32.

    Ties give the first index; a nan counts as the largest (the first nan's
    index). ``axis=None`` indexes the flattened array. One ``ArgReduce`` node.

    Arguments:
    {arg_reduce_arguments}

    Errors: {arg_reduce_errors}.

    >>> mx.argmax(mx.array([1, 3, 2, 3]))
    array(1, dtype=uint32)
    >>> mx.argmax(mx.array([[1, 5], [7, 2]]), axis=1)
    array([1, 0], dtype=uint32)
    """
    return _arg_reduce("argmax", a, axis, keepdims)


@shared_doc
def argmin(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.argmin``: the index of the smallest element of ``a`` along ``axis``, as uint32.

    As in ``argmax``, ties give the first index and ``axis=None`` indexes the
    flattened array; a nan counts as the smallest (the first nan's index). One
    ``ArgReduce`` node.

    Arguments:
    {arg_reduce_arguments}

    Errors: {arg_reduce_errors}.

    >>> mx.argmin(mx.array([[1, 5], [7, 2]]), axis=0, keepdims=True)
    array([[0, 1]], dtype=uint32)
    """
    return _arg_reduce("argmin", a, axis, keepdims)


# --- logsumexp, softmax --------------------------------------------------------------


def _reduces_last_axis(axes, shape):
    """MLX's test for its fast path: the axes end at the last one, and any
    before it are consecutive and of size 1 (so the reduction is of the last
    axis in disguise)."""
    ndim = len(shape)
    if not axes or axes[-1] not in (ndim - 1, -1):
        return False
    for i in range(len(axes) - 2, -1, -1):
        if axes[i] + 1 != axes[i + 1]:
            return False
        if not -ndim <= axes[i] < ndim:
            raise IndexError("SmallVector out of range.")  # MLX's a.shape(axis)
        if shape[axes[i]] != 1:
            return False
    return True


@shared_doc
def logsumexp(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.logsumexp``: ``log(sum(exp(a)))`` over ``axis``, computed without overflow (the maximum is taken out first).

    Ints and bools give float32. One ``LogSumExp`` node over any axes (MLX
    composes it when the axes are not the last one).

    Arguments:
    - ``a``: a non-empty array.
    - ``axis``: {axes}
    - ``keepdims``: {keepdims}

    Errors: ``ValueError`` for an empty array (MLX: "[logsumexp] Received empty
    array."); {reduce_axis_errors}.

    >>> mx.logsumexp(mx.array([0.0, 0.0]))
    array(0.693147, dtype=float32)
    >>> mx.logsumexp(mx.array([1000.0, 1000.0]))
    array(1000.69, dtype=float32)
    """
    _check_args("logsumexp", a, keepdims)
    axes = _axes_arg("logsumexp", axis, a.ndim)
    if a.size == 0:
        raise ValueError("[logsumexp] Received empty array.")
    if a.ndim == 0 and axes:
        raise ValueError("[logsumexp] Received non-empty axes for array with 0 dimensions.")
    composed = not _reduces_last_axis(axes, a.shape)
    checked = _reduce_axes(axes, a.shape)
    lse = P.LogSumExp(checked, keepdims, composed)
    if a.dtype is _dt.complex64:
        return _complex_logsumexp(a, checked, keepdims)
    return make_array(lse, [astype(a, float_dtype(a.dtype))])


def _complex_logsumexp(a, axes, keepdims):
    """MLX's composition for complex64 (it has no LogSumExp kernel for it):
    max + log(sum(exp(a - max))), and the max itself where it is infinite."""
    axes = list(axes)
    maxval = stop_gradient(_reduce("max", a, axes, True))
    out = log(_reduce("sum", exp(subtract(a, maxval)), axes, keepdims))
    out = add(out, reshape(maxval, out.shape))
    if not keepdims:
        maxval = squeeze(maxval, axes)
    # isinf of a complex number: either part infinite, which is |z| == inf.
    return where(equal(_abs(maxval), float("inf")), maxval, out)


@shared_doc
def softmax(a, /, axis=None, *, precise=False, stream=None):
    """``mx.softmax``: ``exp(a) / sum(exp(a))`` over ``axis``, computed without overflow: the results over each run are positive and add up to 1.

    MLX uses its Softmax primitive (float result) when the reduction is over
    the last axis; otherwise it composes max, exp, sum and divide and casts
    the result back to the input's dtype, so softmax of an int array over
    axis 0 is an int array (of zeros, mostly). mlxref gives the same dtypes.

    Arguments:
    - ``a``: the array.
    - ``axis``: {axes}
    - ``precise``: accumulate a float16 or bfloat16 input in float32 (default: False).

    Errors: {reduce_axis_errors}.

    >>> mx.softmax(mx.array([0.0, 0.0]))
    array([0.5, 0.5], dtype=float32)
    >>> mx.softmax(mx.array([[1.0, 1.0], [1.0, 3.0]]), axis=0)
    array([[0.5, 0.119203],
           [0.5, 0.880797]], dtype=float32)
    """
    _check_args("softmax", a, precise=precise)
    axes = _axes_arg("softmax", axis, a.ndim)
    if a.size == 0:
        return copy.copy(a)
    if a.ndim == 0 and axes:
        raise ValueError("[softmax] Received non-empty axes for array with 0 dimensions.")
    last_axis = _reduces_last_axis(axes, a.shape)
    checked = _reduce_axes(axes, a.shape)
    if a.dtype is _dt.complex64:
        # MLX composes complex softmax: exp(a - max) / sum(exp(a - max)).
        a_max = stop_gradient(_reduce("max", a, list(checked), True))
        ex = exp(subtract(a, a_max))
        return divide(ex, _reduce("sum", ex, list(checked), True))
    out = make_array(P.Softmax(checked, precise, not last_axis), [astype(a, float_dtype(a.dtype))])
    return out if last_axis else astype(out, a.dtype)


# --- cumsum, cumprod, cummax, cummin, logcumsumexp ---------------------------------------


def _scan(op, reduce_type, a, axis, reverse, inclusive, dtype=None):
    """MLX's scan ops (mlx/ops.cpp ``cumsum`` ... ``logcumsumexp``): the checks
    of the binding and of the op, then one ``Scan`` node. ``axis=None`` scans
    the flattened array (MLX flattens first; mlxref's Scan takes ``None``).
    ``dtype`` (cumsum and cumprod only) casts the input first."""
    _check_args(op, a, reverse=reverse, inclusive=inclusive)
    axis = _single_axis_arg(op, axis)
    if dtype is not None and not isinstance(dtype, _dt.Dtype):
        raise _bad_arguments(op)
    if axis is not None:
        ndim = a.ndim
        if axis >= ndim or axis < -ndim:
            raise IndexError(
                f"[{op}] Axis {axis} is out of bounds for array with {ndim} dimensions."
            )
        axis %= ndim
    x = a if dtype is None else astype(a, dtype)
    return make_array(P.Scan(axis, reverse, inclusive, reduce_type), [x])


@shared_doc
def cumsum(a, /, axis=None, *, reverse=False, inclusive=True, dtype=None, stream=None):
    """``mx.cumsum`` (also ``mx.cumulative_sum``): the running sums of ``a`` along ``axis``: element ``i`` is the sum of elements ``0..i``.

    ``reverse`` sums from the end; an exclusive scan (``inclusive=False``)
    leaves element ``i`` out, so it starts at 0. ``dtype`` casts the input
    first. One ``Scan`` node. ``mx.cumulative_sum`` is the array API's name for
    the same function.

    Arguments:
    - ``a``: the array (bool is summed as int32).
    {scan_arguments}
    - ``dtype``: cast ``a`` to this dtype first (default: keep it).

    Errors: {axis_bounds_error}.

    >>> mx.cumsum(mx.array([1, 2, 3, 4]))
    array([1, 3, 6, 10], dtype=int32)
    >>> mx.cumsum(mx.array([1, 2, 3, 4]), reverse=True, inclusive=False)
    array([9, 7, 4, 0], dtype=int32)
    """
    return _scan("cumsum", "sum", a, axis, reverse, inclusive, dtype)


@shared_doc
def cumprod(a, /, axis=None, *, reverse=False, inclusive=True, dtype=None, stream=None):
    """``mx.cumprod`` (also ``mx.cumulative_prod``): the running products of ``a`` along ``axis``: element ``i`` is the product of elements ``0..i``.

    ``dtype`` casts the input first. An exclusive scan starts at 1. One ``Scan``
    node; its gradient is right through zeros, as MLX's. ``mx.cumulative_prod``
    is the array API's name for the same function.

    Arguments:
    - ``a``: the array, multiplied in its own dtype (bool stays bool; integers wrap
      around).
    {scan_arguments}
    - ``dtype``: cast ``a`` to this dtype first (default: keep it).

    Errors: {axis_bounds_error}.

    >>> mx.cumprod(mx.array([1, 2, 3, 4]))
    array([1, 2, 6, 24], dtype=int32)
    >>> mx.cumprod(mx.array([1, 2, 3, 4]), inclusive=False)
    array([1, 1, 2, 6], dtype=int32)
    """
    return _scan("cumprod", "prod", a, axis, reverse, inclusive, dtype)


@shared_doc
def cummax(a, /, axis=None, *, reverse=False, inclusive=True, stream=None):
    """``mx.cummax``: the running maximum of ``a`` along ``axis``: element ``i`` is the largest of elements ``0..i``.

    A nan makes every later output nan. An exclusive scan starts from the
    dtype's lowest value (-inf for floats). One ``Scan`` node.

    Arguments:
    - ``a``: the array (its dtype is kept).
    {scan_arguments}

    Errors: {axis_bounds_error}.

    >>> mx.cummax(mx.array([1, 3, 2, 5, 4]))
    array([1, 3, 3, 5, 5], dtype=int32)
    >>> mx.cummax(mx.array([1.0, 3.0, 2.0]), inclusive=False)
    array([-inf, 1, 3], dtype=float32)
    """
    return _scan("cummax", "max", a, axis, reverse, inclusive)


@shared_doc
def cummin(a, /, axis=None, *, reverse=False, inclusive=True, stream=None):
    """``mx.cummin``: the running minimum of ``a`` along ``axis``: element ``i`` is the smallest of elements ``0..i``.

    As in ``cummax``, a nan makes every later output nan; an exclusive scan starts
    from the dtype's highest value (inf for floats, 255 for uint8). One ``Scan`` node.

    Arguments:
    - ``a``: the array (its dtype is kept).
    {scan_arguments}

    Errors: {axis_bounds_error}.

    >>> mx.cummin(mx.array([4, 2, 3, 1]))
    array([4, 2, 2, 1], dtype=int32)
    >>> mx.cummin(mx.array([4, 2, 3, 1]), reverse=True)
    array([1, 1, 1, 1], dtype=int32)
    """
    return _scan("cummin", "min", a, axis, reverse, inclusive)


@shared_doc
def logcumsumexp(a, /, axis=None, *, reverse=False, inclusive=True, stream=None):
    """``mx.logcumsumexp``: the running ``log(sum(exp(a)))`` along ``axis``: element ``i`` is the log-sum-exp of elements ``0..i``.

    Each step is MLX's stable ``logaddexp``. An exclusive scan starts at -inf. One
    ``Scan`` node.

    Arguments:
    - ``a``: the array; integers and bools are cast to float32 first (MLX 0.32.4
      does; its C++ source of 0.32.1 kept the integer dtype).
    {scan_arguments}

    Errors: {axis_bounds_error}.

    >>> mx.logcumsumexp(mx.array([0.0, 0.0, 0.0]))
    array([0, 0.693147, 1.09861], dtype=float32)
    """
    dtype = float_dtype(a.dtype) if isinstance(a, array) else None
    return _scan("logcumsumexp", "logaddexp", a, axis, reverse, inclusive, dtype)


# MLX's aliases (python/src/ops.cpp), the Array API's names.
cumulative_sum = cumsum
cumulative_prod = cumprod
