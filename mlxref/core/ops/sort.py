"""Sorting and selection: sort, argsort, partition, argpartition, topk,
searchsorted, median, unique.

Read alongside: mlx/ops.cpp (``sort``, ``argsort``, ``partition``,
``argpartition``, ``topk``, ``searchsorted``, ``median``) and python/src/ops.cpp
(their bindings: ``axis=None`` flattens the array first). The primitives are in
``mlxref.core.primitives.sort``.

``median`` is composed as MLX composes it: the reduced axes moved to the back
and flattened, a sort, the middle element (the mean of the two middle ones
for an even count), and a nan wherever the run held one. ``unique`` (MLX
0.32.4's, whose source is not in the MLX repository's history mlxref reads) is
composed of argsort, comparisons, cumsum and gathers; its outputs have the
fixed ``size`` the caller gives, so nothing is evaluated to build it.

As in MLX, ``topk`` is not a primitive: it partitions at ``-k`` and slices
off the last ``k`` elements, so its elements come in the order the partition
leaves them (not sorted), and asking for every element returns the array
itself, unordered.
"""

import builtins
import copy
import math

from .. import dtypes as _dt
from ..array import array
from ..printing import format_shape
from ..primitives import sort as P
from ..primitives.base import make_array
from ..convert import is_scalar, scalar_array
from .common import astype, float_dtype, incompatible_arguments, is_c_int, normalize_axis
from .creation import arange, full, zeros
from .comparison import isnan
from .docs import shared_doc
from .elementwise import add, equal, less, minimum, multiply, not_equal, stop_gradient, where
from .indexing import take
from .reduction import any, cumsum, sum
from .shape import concatenate, expand_dims, reshape, slice_axis, squeeze, transpose

__all__ = [
    "sort", "argsort", "partition", "argpartition", "topk", "searchsorted", "median", "unique"
]

# MLX's Python bindings (nanobind) reject a wrongly typed argument with this
# TypeError before the op runs (see ops/reduction.py).
_SIGNATURES = {
    "sort": "sort(a: array, /, axis: None | int = -1, *, stream: StreamOrDevice = None) -> array",
    "argsort": "argsort(a: array, /, axis: None | int = -1, *, stream: StreamOrDevice = None) "
    "-> array",
    "partition": "partition(a: array, /, kth: int, axis: None | int = -1, *, "
    "stream: StreamOrDevice = None) -> array",
    "argpartition": "argpartition(a: array, /, kth: int, axis: None | int = -1, *, "
    "stream: StreamOrDevice = None) -> array",
    "topk": "topk(a: array, /, k: int, axis: None | int = -1, *, stream: StreamOrDevice = None) "
    "-> array",
    "searchsorted": "searchsorted(sorted_sequence: array, values: array, /, side: str = 'left', "
    "*, stream: StreamOrDevice = None) -> array",
    "median": "median(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = "
    "False, *, stream: StreamOrDevice = None) -> array",
    "unique": "unique(a: array, /, size: int, return_index: bool = False, return_inverse: bool "
    "= False, return_counts: bool = False, fill_value: scalar | array | None = None, *, "
    "stream: StreamOrDevice = None) -> array | tuple[array, ...]",
}


def _checked(op, a, axis, *counts):
    """The binding's conversions: ``a`` an array, ``axis`` None or a C int, the
    counts (``kth``, ``k``) C ints (a bool is one). ``axis=None`` flattens ``a``
    (MLX's ops without an axis); then the op works on axis 0."""
    if not isinstance(a, array) or not (axis is None or is_c_int(axis)):
        raise incompatible_arguments(_SIGNATURES[op])
    if not all(is_c_int(n) for n in counts):
        raise incompatible_arguments(_SIGNATURES[op])
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = int(axis)
    ax = normalize_axis(axis, a.ndim, f"[{op}] Axis {{axis}} is out of bounds for array with "
                        "{ndim} dimensions.")
    return a, axis, ax, [int(n) for n in counts]


@shared_doc
def sort(a, /, axis=-1, *, stream=None):
    """``mx.sort``: the elements of ``a`` in ascending order along ``axis``.

    Stable, with nans last; complex64 sorts by real part, then imaginary part.
    ``axis=None`` sorts the flattened array (MLX flattens first). One ``Sort``
    node; its gradient goes back to each element's original place.

    Arguments:
    - ``a``: the array.
    - ``axis``: {sort_axis}

    Errors: {axis_bounds_error}.

    >>> mx.sort(mx.array([2.0, float("nan"), 1.0]))
    array([1, 2, nan], dtype=float32)
    >>> mx.sort(mx.array([[3, 1], [0, 2]]), axis=0)
    array([[0, 1],
           [3, 2]], dtype=int32)
    """
    a, _, ax, _ = _checked("sort", a, axis)
    return make_array(P.Sort(ax), [a])


@shared_doc
def argsort(a, /, axis=-1, *, stream=None):
    """``mx.argsort``: the indices (uint32) that put ``a`` in ascending order along ``axis``: ``take_along_axis(a, argsort(a, axis), axis)`` is ``sort(a, axis)``.

    ``axis=None`` sorts the flattened array, as MLX's op does (it flattens
    first). The sort is stable (equal elements keep their order), with nans
    last. One ``ArgSort`` node.

    Arguments:
    - ``a``: the array.
    - ``axis``: {sort_axis}

    Errors: {axis_bounds_error}.

    >>> mx.argsort(mx.array([2, 1, 2, 1]))
    array([1, 3, 0, 2], dtype=uint32)
    """
    a, _, ax, _ = _checked("argsort", a, axis)
    return make_array(P.ArgSort(ax), [a])


def _kth(op, kth, a, axis, ax):
    """MLX's check of ``kth`` (negative counts from the end). Its message
    names the axis as given and, for ``partition``, lacks a space."""
    n = a.shape[ax]
    k = kth + n if kth < 0 else kth
    if not 0 <= k < n:
        gap = "" if op == "partition" else " "
        raise ValueError(f"[{op}] Received invalid kth {kth}{gap}along axis {axis} "
                         f"for array with shape: {format_shape(a.shape)}")
    return k


@shared_doc
def partition(a, /, kth, axis=-1, *, stream=None):
    """``mx.partition``: ``a`` rearranged along ``axis`` so that element ``kth`` is the one a sort would put there, with no larger element before it and no smaller one after.

    The order within each side is the one MLX's CPU kernel leaves (see
    ``mlxref.core.primitives.sort``; MLX's macOS build may differ), so do not
    rely on it. One ``Partition`` node.

    Arguments:
    - ``a``: the array.
    - ``kth``: the position placed, negative counting from the end.
    - ``axis``: {sort_axis}

    Errors: ``ValueError`` for ``kth`` outside the axis (MLX, with its missing
    space: "[partition] Received invalid kth 3along axis -1 for array with shape:
    (3)"); {axis_bounds_error}.

    >>> mx.partition(mx.array([3, 1, 2]), 1)
    array([1, 2, 3], dtype=int32)
    """
    a, axis, ax, (kth,) = _checked("partition", a, axis, kth)
    return make_array(P.Partition(_kth("partition", kth, a, axis, ax), ax), [a])


@shared_doc
def argpartition(a, /, kth, axis=-1, *, stream=None):
    """``mx.argpartition``: the indices (uint32) that partition ``a`` around position ``kth`` along ``axis``: ``take_along_axis(a, argpartition(a, kth, axis), axis)`` is a ``partition``.

    Equal elements are told apart by index. The order within each side is the
    one MLX's CPU kernel leaves. One ``ArgPartition`` node.

    Arguments:
    - ``a``: the array.
    - ``kth``: the position placed, negative counting from the end.
    - ``axis``: {sort_axis}

    Errors: ``ValueError`` for ``kth`` outside the axis (MLX: "[argpartition]
    Received invalid kth 5 along axis -1 for array with shape: (3)");
    {axis_bounds_error}.

    >>> mx.argpartition(mx.array([3, 1, 2]), 1)
    array([1, 2, 0], dtype=uint32)
    """
    a, axis, ax, (kth,) = _checked("argpartition", a, axis, kth)
    return make_array(P.ArgPartition(_kth("argpartition", kth, a, axis, ax), ax), [a])


@shared_doc
def topk(a, /, k, axis=-1, *, stream=None):
    """``mx.topk``: the ``k`` largest elements of ``a`` along ``axis``, in no particular order.

    As in MLX, not a primitive: ``partition(a, -k)`` followed by a slice of the
    last ``k`` elements, so they come in the order the partition leaves them;
    ``k`` equal to the axis size returns ``a`` itself, unordered.

    Arguments:
    - ``a``: the array.
    - ``k``: how many elements, from 0 to the axis size.
    - ``axis``: {sort_axis}

    Errors: ``ValueError`` for a ``k`` larger than the axis (MLX: "[topk]
    Received invalid k=5 along axis -1 for array with shape: (4)"); {axis_bounds_error}.

    >>> mx.sort(mx.topk(mx.array([3, 1, 4, 2]), 2))
    array([3, 4], dtype=int32)
    >>> mx.topk(mx.array([[3, 1], [0, 2]]), 1, axis=0)
    array([[3, 2]], dtype=int32)
    """
    a, axis, ax, (k,) = _checked("topk", a, axis, k)
    n = a.shape[ax]
    if not 0 <= k <= n:
        raise ValueError(f"[topk] Received invalid k={k} along axis {axis} "
                         f"for array with shape: {format_shape(a.shape)}")
    if k == n:
        return copy.copy(a)
    return slice_axis(partition(a, -k, ax), ax, n - k, n)


@shared_doc
def searchsorted(sorted_sequence, values, /, side="left", *, stream=None):
    """``mx.searchsorted``: for each of ``values``, the index (uint32) in the 1-D ``sorted_sequence`` where it would go to keep it sorted.

    The first such index for ``side='left'``, the last for ``'right'``. Both
    arrays are cast to their promoted dtype first, as MLX does; nans sort after
    every number. The result has ``values``' shape. One ``SearchSorted`` node.

    Arguments:
    - ``sorted_sequence``: a 1-D array in ascending order.
    - ``values``: an array of the values to place.
    - ``side``: "left" or "right" (default: "left").

    Errors: ``ValueError`` for another side (MLX: "[searchsorted] Invalid side
    'middle'. Expected 'left' or 'right'.") or a sequence that is not 1-D
    ("[searchsorted] The sorted sequence must be 1-D but has 2 dimensions.").

    >>> mx.searchsorted(mx.array([1, 3, 5]), mx.array([0, 3, 6]))
    array([0, 1, 3], dtype=uint32)
    >>> mx.searchsorted(mx.array([1, 3, 5]), mx.array([3]), side="right")
    array([2], dtype=uint32)
    """
    if not (isinstance(sorted_sequence, array) and isinstance(values, array)
            and isinstance(side, str)):
        raise incompatible_arguments(_SIGNATURES["searchsorted"])
    if side not in ("left", "right"):
        raise ValueError(f"[searchsorted] Invalid side '{side}'. Expected 'left' or 'right'.")
    if sorted_sequence.ndim != 1:
        raise ValueError("[searchsorted] The sorted sequence must be 1-D but has "
                         f"{sorted_sequence.ndim} dimensions.")
    dtype = _dt.promote_types(sorted_sequence.dtype, values.dtype)
    return make_array(P.SearchSorted(side == "right"),
                      [astype(sorted_sequence, dtype), astype(values, dtype)])


@shared_doc
def median(a, /, axis=None, keepdims=False, *, stream=None):
    """``mx.median``: the middle value of the elements of ``a`` over ``axis``: the middle one after sorting, or the mean of the two middle ones for an even count.

    Ints and bools give float32; a nan in a run makes its median nan (as
    ``max`` and ``mean``). Composed as MLX composes it: the reduced axes moved
    to the back and flattened, a sort, the middle slice(s). The gradient goes
    through the sort to the one or two middle elements (half each for an even
    count), and nowhere for a run with a nan.

    Arguments:
    {reduce_arguments}

    Errors: ``ValueError`` over an empty axis (MLX: "[median] Cannot take median
    along empty axis.") or an axis named twice ("[median] Received duplicate
    axis."); ``IndexError`` for an axis out of range ("[median] axis 1 is out of
    bounds for array with 1 dimensions.").

    >>> mx.median(mx.array([4.0, 1.0, 3.0, 2.0]))
    array(2.5, dtype=float32)
    >>> mx.median(mx.array([[1, 5], [3, 2]]), axis=0)
    array([2, 3.5], dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(keepdims, bool):
        raise incompatible_arguments(_SIGNATURES["median"])
    if axis is None:
        axes = list(range(a.ndim))
    elif is_c_int(axis):
        axes = [int(axis)]
    elif isinstance(axis, (list, tuple)) and builtins.all(is_c_int(ax) for ax in axis):
        axes = [int(ax) for ax in axis]
    else:
        raise incompatible_arguments(_SIGNATURES["median"])
    ndim = a.ndim
    chosen = set()
    for ax in axes:
        if ax < -ndim or ax >= ndim:
            raise IndexError(f"[median] axis {ax} is out of bounds for array with {ndim} "
                             "dimensions.")
        chosen.add(ax % ndim if ndim else ax)
    if len(chosen) != len(axes):
        raise ValueError("[median] Received duplicate axis.")
    if not chosen and ndim:
        # MLX flattens the axes from ndim to ndim - 1: an empty range.
        raise ValueError("[flatten] start_axis must be less than or equal to end_axis")
    sorted_axes = sorted(chosen)
    kept = [d for d in range(ndim) if d not in chosen]
    count = math.prod(a.shape[d] for d in sorted_axes)
    flat = reshape(transpose(a, kept + sorted_axes), [a.shape[d] for d in kept] + [count])
    if count == 0:
        raise ValueError("[median] Cannot take median along empty axis.")
    dtype = float_dtype(a.dtype)
    ordered = sort(flat, -1)
    last, mid = flat.ndim - 1, count // 2
    out = astype(slice_axis(ordered, last, mid, mid + 1), dtype)
    if count % 2 == 0:
        lower = astype(slice_axis(ordered, last, mid - 1, mid), dtype)
        out = multiply(add(out, lower), scalar_array(0.5, dtype))
    if a.dtype.is_inexact:
        # The sort put any nan last, where the middle never reaches it.
        out = where(any(isnan(flat), -1, keepdims=True), scalar_array(math.nan, dtype), out)
    out = squeeze(out, -1)
    return expand_dims(out, sorted_axes) if keepdims else out


def _fill(value, dtype):
    """``unique``'s fill value, cast to the input's dtype (an array of one element
    or a Python scalar)."""
    return astype(reshape(value, ()) if isinstance(value, array) else array(value), dtype)


@shared_doc
def unique(a, /, size, return_index=False, return_inverse=False, return_counts=False,
           fill_value=None, *, stream=None):
    """``mx.unique``: the ``size`` smallest distinct elements of the flattened ``a``, sorted, padded with ``fill_value`` when there are fewer.

    ``size`` is fixed by the caller, so the result's shape is known without
    evaluating ``a``. Padding defaults to the first (smallest) element. Optional
    outputs, in this order: ``index`` (uint32: where each first occurs in the
    flattened ``a``; padding repeats the first's), ``inverse`` (uint32, shaped
    like ``a``: the entry each element is, clamped to the last entry when the
    output is truncated) and ``counts`` (int32, 0 for padding). As in MLX, each
    nan is an element of its own, -0.0 equals 0.0, and ``fill_value`` is cast to
    ``a``'s dtype. Composed of argsort, comparisons, cumsum and gathers. The
    values are a gather of ``a``, so a gradient reaches the first occurrence of
    each (and of the first one for padding without a ``fill_value``).

    Arguments:
    - ``a``: the array (flattened).
    - ``size``: how many entries the outputs have.
    - ``return_index``: also return ``index`` (default: False).
    - ``return_inverse``: also return ``inverse`` (default: False).
    - ``return_counts``: also return ``counts`` (default: False).
    - ``fill_value``: the padding, a scalar or a one-element array (default: the first entry).

    Errors: ``ValueError`` for a negative size (MLX: "[unique] Received negative
    size -1."), for an empty ``a`` with a positive size and no fill ("[unique] A
    fill value is required for an empty input with a non-zero size.") and for a
    fill of several elements.

    >>> mx.unique(mx.array([3, 1, 3, 2]), 5, fill_value=0)
    array([1, 2, 3, 0, 0], dtype=int32)
    >>> mx.unique(mx.array([3, 1, 3, 2]), 3, return_index=True, return_counts=True)
    (array([1, 2, 3], dtype=int32), array([1, 3, 0], dtype=uint32), array([1, 1, 2], dtype=int32))
    """
    flags = (return_index, return_inverse, return_counts)
    if (not isinstance(a, array) or not is_c_int(size)
            or not builtins.all(isinstance(f, bool) for f in flags)):
        raise incompatible_arguments(_SIGNATURES["unique"])
    if not (fill_value is None or isinstance(fill_value, array) or is_scalar(fill_value)):
        # MLX's binding makes an array of it, taking no list or tuple there
        raise ValueError(f"Invalid type {type(fill_value).__name__} received in array "
                         "initialization.")
    size = int(size)
    if size < 0:
        raise ValueError(f"[unique] Received negative size {size}.")
    if isinstance(fill_value, array) and fill_value.size != 1:
        raise ValueError("[unique] Fill value must have one element, but got shape "
                         f"{format_shape(fill_value.shape)}.")
    flat = reshape(a, (-1,))
    n = flat.size
    if n == 0:
        if size > 0 and fill_value is None:
            raise ValueError("[unique] A fill value is required for an empty input with a "
                             "non-zero size.")
        values = full((size,), _fill(fill_value, a.dtype), a.dtype) if size else zeros((0,), a.dtype)
        index = zeros((size,), _dt.uint32)
        inverse = zeros(a.shape, _dt.uint32)
        counts = zeros((size,), _dt.int32)
    else:
        # Only the values are differentiable: the indices are cut from the graph.
        order = argsort(stop_gradient(flat))
        ordered = take(stop_gradient(flat), order)
        # A new element where the sorted one differs from the one before (a
        # nan differs from everything, itself included).
        new = concatenate([full((1,), True, _dt.bool_),
                           not_equal(ordered[1:], ordered[:-1])])
        group = cumsum(astype(new, _dt.int32)) - 1          # the entry of each sorted element
        slots = arange(size, dtype=_dt.int32)
        below = less(expand_dims(group, 0), expand_dims(slots, 1))  # (size, n)
        first = sum(below, 1)                               # where each entry starts
        filled = less(slots, add(slice_axis(group, 0, n - 1, n), 1))
        first_index = take(order, minimum(first, n - 1))
        index = where(filled, first_index, take(order, 0)) if size else first_index
        index = astype(index, _dt.uint32)
        values = take(flat, index)
        if fill_value is not None:
            values = where(filled, values, _fill(fill_value, a.dtype))
        counts = sum(equal(expand_dims(group, 0), expand_dims(slots, 1)), 1)
        rank = argsort(order)                               # each element's place in the sort
        inverse = take(minimum(group, size - 1) if size else zeros((n,), _dt.int32), rank)
        inverse = reshape(astype(inverse, _dt.uint32), a.shape)
    extra = [out for out, asked in zip((index, inverse, counts), flags) if asked]
    return (values, *extra) if extra else values
