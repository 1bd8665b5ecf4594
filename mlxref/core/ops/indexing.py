"""Indexing: take, take_along_axis, and what ``a[index]`` / ``a[index] = v`` do.

Read alongside: mlx/ops.cpp (``slice``, ``slice_update``, ``gather``, ``take``,
``take_along_axis``, ``scatter``, ``masked_scatter``) and python/src/indexing.cpp,
which this module follows function by function: ``getitem`` is
``mlx_get_item`` and ``setitem`` is ``mlx_set_item``.

How an index is served, as in MLX:

- ints and slices only: one ``Slice`` (then ``Squeeze`` / ``ExpandDims``);
- any integer array (or list): one ``Gather`` whose index arrays are reshaped
  so that they broadcast into numpy's "advanced indexing" layout: the array
  dimensions go first when array indices are separated by a slice or None,
  and in place of the first array index otherwise;
- ``a[index] = v``: a ``SliceUpdate`` for ints and slices, a ``Scatter`` when
  arrays are involved, a ``MaskedScatter`` for a boolean mask.

Python ints are checked against the axis size at once; integer arrays are
lazy, so ``Gather`` / ``Scatter`` check them when they evaluate. Both raise
``IndexError`` (MLX reads or writes out of bounds instead).

``getitem`` and ``setitem`` are not MLX functions; they are exported for
``array.__getitem__`` / ``array.__setitem__``.
"""

import copy
import math
import operator

from .. import dtypes as _dt
from .. import convert
from ..array import array, from_data
from ..printing import format_shape
from ..primitives import indexing as P
from ..primitives.base import make_array
from ..convert import is_scalar
from .common import (broadcast_arrays, broadcast_shapes, broadcast_to, c_int, c_ints, check_array,
                     incompatible_argument, incompatible_arguments, normalize_axis, plain_ints,
                     to_shape)
from .docs import shared_doc
from .elementwise import negative, reciprocal
from .shape import (
    WHOLE_UPDATE,
    expand_dims,
    flatten,
    reshape,
    squeeze,
    strided_slice,
    strided_slice_update,
    transpose,
)

__all__ = [
    "take", "take_along_axis", "put_along_axis", "getitem", "setitem", "ArrayAt",
    "dynamic_slice", "dynamic_slice_update",
]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


# --- small helpers ------------------------------------------------------------------


def _is_index_scalar(x):
    """A Python int (or anything with ``__index__``) but not a bool or an array."""
    if isinstance(x, (bool, array)):
        return False
    if getattr(x, "ndim", 0) and convert.is_numpy(x):
        return False  # an ndarray of more than 0 dimensions, as MLX's is_index_scalar
    return isinstance(x, int) or hasattr(type(x), "__index__")


def _int_value(x):
    v = operator.index(x)
    if v < _INT32_MIN or v > _INT32_MAX:
        raise ValueError("Slice indices must be 32-bit integers.")
    return v


def _checked_index(x, axis, size, op=""):
    """A Python int index with negatives counted from the end; IndexError outside the axis."""
    v = _int_value(x)
    if v < -size or v >= size:
        prefix = f"[{op}] " if op else ""
        raise IndexError(f"{prefix}Index {v} is out of bounds for axis {axis} with size {size}.")
    return v + size if v < 0 else v


def _slice_params(sl, size):
    """(start, stop, step) of a Python slice with numpy's defaults, not yet clamped.

    As MLX's ``get_slice_params``: a missing start is 0 (n-1 for a negative
    step), a missing stop is n (-n-1 for a negative step).
    """
    values = []
    for v in (sl.start, sl.stop, sl.step):
        if v is not None and not _is_index_scalar(v):
            raise ValueError("Slice indices must be integers or None.")
        values.append(None if v is None else _int_value(v))
    start, stop, step = values
    step = 1 if step is None else step
    if step == 0:
        # MLX divides by zero here (the process dies); Python's message instead.
        raise ValueError("slice step cannot be zero")
    if start is None:
        start = size - 1 if step < 0 else 0
    if stop is None:
        stop = -size - 1 if step < 0 else size
    return start, stop, step


def _index_array(values, shape=None):
    values = list(values)
    return from_data(values, (len(values),) if shape is None else tuple(shape), _dt.int32)


def _zero_dim_error():
    return ValueError("too many indices for array: array is 0-dimensional")


def _too_many(ndim):
    return ValueError(f"Too many indices for array with {ndim} dimensions.")


# --- the building blocks: slice, slice_update, gather, scatter --------------------


def _index_dtype(indices, op):
    dtype = indices[0].dtype
    for x in indices[1:]:
        dtype = _dt.promote_types(dtype, x.dtype)
    if dtype.is_inexact:
        raise ValueError(f"[{op}] Got indices with invalid dtype. Indices must be integral.")
    return dtype


def _check_index_arrays(a, indices, op, bool_op):
    """MLX's first checks in ``gather`` and ``scatter`` (it spells ``bool_op``
    differently in the second message)."""
    if len(indices) > a.ndim:
        raise ValueError(
            f"[{op}] Too many index arrays. Got {len(indices)} index arrays for input "
            f"with {a.ndim} dimensions."
        )
    if any(x.dtype is _dt.bool_ for x in indices):
        raise ValueError(f"[{bool_op}] Boolean indices not supported.")


def gather(a, indices, axes, slice_sizes, op="gather"):
    """MLX's C++ ``gather`` (mlx/ops.cpp; Python has no ``mx.gather``): ``op``
    names the caller in out-of-bounds messages."""
    _check_index_arrays(a, indices, "gather", "Gather")
    if len(slice_sizes) != a.ndim:
        raise ValueError(
            f"[gather] Got slice_sizes with size {len(slice_sizes)} for array with "
            f"{a.ndim} dimensions."
        )
    dtype = _index_dtype(indices, "gather")
    inputs = [x.astype(dtype) for x in broadcast_arrays(*indices)]
    if a.size == 0:
        idx_size = inputs[0].size if inputs else 1
        if idx_size != 0 and math.prod(slice_sizes) != 0:
            raise ValueError(
                "[gather] If the input is empty, either the indices must be empty or "
                "the total slice size must be 0."
            )
    elif any(s < 0 or s > n for s, n in zip(slice_sizes, a.shape)):
        raise ValueError(
            f"[gather] Slice sizes must be in [0, a.shape(i)]. Got {format_shape(slice_sizes)} "
            f"for array with shape {format_shape(a.shape)}."
        )
    return make_array(P.Gather(axes, slice_sizes, op), [a, *inputs])


def scatter(a, indices, updates, axes, op="", reduce_type="none"):
    """MLX's C++ ``scatter`` (and ``scatter_add`` / ``_prod`` / ``_max`` / ``_min`` for
    ``reduce_type`` "sum", "prod", "max", "min"). (For boolean indices MLX
    throws a bare C string, which Python shows as a SystemError; mlxref raises
    a ValueError.)"""
    _check_index_arrays(a, indices, "scatter", "scatter")
    inputs = broadcast_arrays(*indices)
    idx_shape = inputs[0].shape if inputs else ()
    if updates.ndim != a.ndim + len(idx_shape):
        raise ValueError(
            f"[scatter] Updates with {updates.ndim} dimensions does not match the sum of the "
            f"array ({a.ndim}) and indices ({len(idx_shape)}) dimensions."
        )
    if updates.shape[: len(idx_shape)] != idx_shape:
        raise ValueError(
            f"[scatter] Update shape {format_shape(updates.shape)} is not valid for broadcasted "
            f"index shape {format_shape(idx_shape)}."
        )
    if any(u > n for u, n in zip(updates.shape[len(idx_shape) :], a.shape)):
        raise ValueError(
            f"[scatter] Updates with shape {format_shape(updates.shape)} are too large for array "
            f"with shape {format_shape(a.shape)}."
        )
    dtype = _index_dtype(indices, "scatter")
    inputs = [x.astype(dtype) for x in inputs]
    return make_array(P.Scatter(axes, reduce_type, op), [a, *inputs, updates.astype(a.dtype)])


def _take(a, indices, axis, op):
    """MLX's ``take(a, indices, axis)`` for an index array: gather, transpose, squeeze."""
    if axis + a.ndim < 0 or axis >= a.ndim:
        raise IndexError(f"[take] Received invalid axis {axis} for array with {a.ndim} dimensions.")
    if a.shape[axis] == 0 and indices.size != 0:
        raise ValueError("[take] Cannot do a non-empty take from an empty axis.")
    axis = axis + a.ndim if axis < 0 else axis
    slice_sizes = list(a.shape)
    slice_sizes[axis] = 1
    out = gather(a, [indices], [axis], slice_sizes, op)
    k = indices.ndim
    if axis != 0:
        # Move the index dimensions to where ``axis`` was.
        order = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, out.ndim))
        out = transpose(out, order)
    return squeeze(out, k + axis)


# --- take, take_along_axis -------------------------------------------------------------


@shared_doc
def take(a, /, indices, axis=None, *, stream=None):
    """``mx.take``: the elements of ``a`` at ``indices`` along ``axis`` (default: of the flattened ``a``).

    The result has ``indices``' shape in place of ``axis``. An integer array is
    one ``Gather`` (then a transpose and a squeeze, as MLX builds it); a Python
    int is a one-element slice, squeezed. Negative indices count from the end.
    An index array out of bounds raises ``IndexError`` when it is evaluated (MLX
    reads whatever memory lies there), an int one at once.

    Arguments:
    - ``a``: the array.
    - ``indices``: a Python int or an integer array.
    - ``axis``: the axis indexed, or None for the flattened ``a`` (default: None).

    Errors: ``IndexError`` for an axis out of range (MLX: "[take] Received
    invalid axis 1 for array with 1 dimensions."); ``ValueError`` for float
    indices ("[gather] Got indices with invalid dtype. Indices must be
    integral.").

    >>> mx.take(mx.array([10, 20, 30]), mx.array([2, 0, -1]))
    array([30, 10, 30], dtype=int32)
    >>> mx.take(mx.array([[1, 2], [3, 4]]), mx.array([1, 0]), axis=1)
    array([[2, 1],
           [4, 3]], dtype=int32)
    """
    axis = plain_ints(axis)
    check_array(a, "take", "a")
    if axis is not None and (not isinstance(axis, int) or isinstance(axis, bool)):
        raise incompatible_argument("take", "axis", "an int", axis)
    if axis is not None:
        axis = c_int(axis, "take", "axis")
    if _is_index_scalar(indices):
        if axis is None:
            a, axis = flatten(a), 0
        if axis + a.ndim < 0 or axis >= a.ndim:
            raise IndexError(
                f"[take] Received invalid axis {axis} for array with {a.ndim} dimensions."
            )
        if a.size == 0:
            raise ValueError("[take] Cannot do a non-empty take from an array with zero elements.")
        axis = axis + a.ndim if axis < 0 else axis
        # MLX's int take is a slice of one element; it neither wraps negative
        # indices nor checks the bound (so take(a, -1, axis=1) fails in squeeze).
        index = _checked_index(indices, axis, a.shape[axis], "take")
        starts = [0] * a.ndim
        stops = list(a.shape)
        starts[axis], stops[axis] = index, index + 1
        return squeeze(strided_slice(a, starts, stops, [1] * a.ndim), axis)
    if not isinstance(indices, array):
        raise incompatible_argument("take", "indices", "an int or an array", indices,
                                    type(indices).__name__)
    if axis is None:
        a, axis = flatten(a), 0
    return _take(a, indices, axis, "take")


def _along_axis_checks(a, indices, axis, op, more=(), any_index_dtype=False):
    """What ``take_along_axis`` and ``put_along_axis`` check; the axis, wrapped.
    ``more``: further (name, argument) pairs that must be arrays.
    ``any_index_dtype``: skip the dtype check (put_along_axis into an empty
    array, whose kernel MLX never runs)."""
    for name, x in (("a", a), ("indices", indices), *more):
        if not isinstance(x, array):
            raise incompatible_argument(op, name, "an array", x, type(x).__name__)
    message = f"[{op}] Axis {{axis}} is out of bounds for array with {{ndim}} dimensions."
    axis = normalize_axis(axis, a.ndim, message)
    if indices.ndim != a.ndim:
        raise ValueError(
            f"[{op}] Indices of dimension {indices.ndim} does not match array "
            f"of dimension {a.ndim}."
        )
    if (indices.dtype is _dt.bool_ or indices.dtype.is_inexact) and not any_index_dtype:
        # MLX fails only when it evaluates ("Cannot gather/scatter with indices type").
        raise ValueError(f"[{op}] Got indices with invalid dtype. Indices must be integral.")
    return axis


@shared_doc
def take_along_axis(a, /, indices, axis=-1, *, stream=None):
    """``mx.take_along_axis``: the elements of ``a`` picked along ``axis`` by ``indices``: ``out[..., i, ...] = a[..., indices[..., i, ...], ...]``.

    ``indices`` has ``a``'s number of dimensions and broadcasts with ``a`` on
    every other axis (the pairing ``argsort`` and ``argpartition`` results are
    made for). ``axis=None`` uses the flattened ``a``. One ``GatherAxis`` node.

    Arguments:
    - ``a``: the array.
    - ``indices``: an integer array with ``a``'s number of dimensions.
    - ``axis``: the axis indexed, or None for the flattened ``a`` (default: -1).

    Errors: ``ValueError`` when the numbers of dimensions differ (MLX:
    "[take_along_axis] Indices of dimension 1 does not match array of dimension
    2."); ``IndexError`` for an axis out of range ("[take_along_axis] Axis 2 is
    out of bounds for array with 2 dimensions.").

    >>> mx.take_along_axis(mx.array([[10, 20], [30, 40]]), mx.array([[1], [0]]), axis=1)
    array([[20],
           [30]], dtype=int32)
    """
    if axis is None:
        a, axis = reshape(a, (-1,)) if isinstance(a, array) else a, 0
    axis = _along_axis_checks(a, indices, axis, "take_along_axis")
    a, indices = _broadcast_except(a, indices, axis)
    return make_array(P.GatherAxis(axis), [a, indices])


def _broadcast_except(a, indices, axis):
    """``a`` and ``indices`` broadcast against each other on every axis but ``axis``."""
    others = broadcast_shapes(
        a.shape[:axis] + a.shape[axis + 1 :], indices.shape[:axis] + indices.shape[axis + 1 :]
    )
    a = broadcast_to(a, others[:axis] + (a.shape[axis],) + others[axis:])
    indices = broadcast_to(indices, others[:axis] + (indices.shape[axis],) + others[axis:])
    return a, indices


# --- a[index] ------------------------------------------------------------------------------


def _is_valid_index(x):
    return (
        isinstance(x, (slice, array, list))
        or _is_index_scalar(x)
        or x is None
        or x is Ellipsis
    )


def _expand_ellipsis(shape, entries):
    """(number of non-None indices, indices with ``...`` replaced by full slices)."""
    indices = []
    before = 0
    i = 0
    has_ellipsis = False
    while i < len(entries):
        idx = entries[i]
        if not _is_valid_index(idx):
            raise ValueError("Cannot index mlx array using the given type yet")
        if idx is Ellipsis:
            has_ellipsis = True
            break
        indices.append(idx)
        before += idx is not None
        i += 1
    after = []
    for j in range(len(entries) - 1, i, -1):
        idx = entries[j]
        if not _is_valid_index(idx):
            raise ValueError("Cannot index mlx array using the given type yet")
        if idx is Ellipsis:
            raise ValueError("An index can only have a single ellipsis (...)")
        after.append(idx)
    non_none = before + sum(idx is not None for idx in after)
    if has_ellipsis:
        for _ in range(before, len(shape) - (non_none - before)):
            indices.append(slice(None))
            non_none += 1
    indices.extend(reversed(after))
    return non_none, indices


def _as_index_arrays(indices):
    return [array(idx) if isinstance(idx, list) else idx for idx in indices]


def _is_array_like_index(idx):
    return isinstance(idx, array) or _is_index_scalar(idx)


def _getitem_array(a, indices):
    if a.ndim == 0:
        raise _zero_dim_error()
    if indices.dtype is _dt.bool_:
        raise ValueError("boolean indices are not yet supported")
    return _take(a, indices, 0, "")


def _getitem_int(a, index):
    if a.ndim == 0:
        raise _zero_dim_error()
    n = a.shape[0]
    i = _checked_index(index, 0, n) if n > 0 else _int_value(index)
    return _take(a, array(i, _dt.int32), 0, "")


def _gather_nd(src, indices, gather_first):
    """MLX's ``mlx_gather_nd``: one Gather for the leading int / array / slice indices.

    Slices become ``arange`` index arrays. Every index array is reshaped so that
    they broadcast into the output layout: array dimensions first (then one per
    slice) when ``gather_first``, else the slices' dimensions first.
    """
    max_dims = 0
    num_slices = 0
    gather_indices = []
    is_slice = []
    for axis, idx in enumerate(indices):
        n = src.shape[axis]
        if isinstance(idx, slice):
            # Clamped like a plain slice (MLX uses the raw bounds here, so a
            # slice running past the axis reads out of bounds).
            start, stop, step = slice(*_slice_params(idx, n)).indices(n)
            gather_indices.append(_index_array(range(start, stop, step)))
            num_slices += 1
            is_slice.append(True)
        elif _is_index_scalar(idx):
            gather_indices.append(array(_checked_index(idx, axis, n), _dt.int32))
            is_slice.append(False)
        else:
            max_dims = max(max_dims, idx.ndim)
            gather_indices.append(idx)
            is_slice.append(False)

    slice_index = 0
    for i, g in enumerate(gather_indices):
        if gather_first:
            if is_slice[i]:
                shape = [1] * (max_dims + num_slices)
                shape[max_dims + slice_index] = g.shape[0]
                gather_indices[i] = reshape(g, shape)
                slice_index += 1
            else:
                gather_indices[i] = reshape(g, g.shape + (1,) * num_slices)
        elif i < num_slices:
            shape = [1] * (max_dims + num_slices)
            shape[i] = g.shape[0]
            gather_indices[i] = reshape(g, shape)

    axes = list(range(len(indices)))
    slice_sizes = [1] * len(indices) + list(src.shape[len(indices) :])
    out = gather(src, gather_indices, axes, slice_sizes, "")
    return squeeze(out, [max_dims + num_slices + ax for ax in axes]), max_dims


def _getitem_nd(src, entries):
    """MLX's ``mlx_get_item_nd``: a tuple index."""
    if len(entries) == 0:
        return copy.copy(src)
    non_none, indices = _expand_ellipsis(src.shape, entries)
    indices = _as_index_arrays(indices)
    if non_none > src.ndim:
        raise _too_many(src.ndim)

    # Gather first for the ints and arrays (when there is at least one array).
    remaining = []
    have_array = False
    have_non_array = False
    gather_first = False
    for idx in indices:
        if _is_array_like_index(idx):
            if have_array and have_non_array:
                gather_first = True
                break
            have_array = True
        else:
            have_non_array |= have_array
    have_array = have_array and any(isinstance(idx, array) for idx in indices)

    if have_array:
        last_array = max(i for i, idx in enumerate(indices) if _is_array_like_index(idx))
        gathered = [idx for idx in indices[: last_array + 1] if idx is not None]
        src, max_dims = _gather_nd(src, gathered, gather_first)
        # What is left to do: the Nones and the indices after the last array.
        if gather_first:
            remaining = [slice(None)] * max_dims
            for idx in indices[:last_array]:
                if idx is None:
                    remaining.append(None)
                elif isinstance(idx, slice):
                    remaining.append(slice(None))
        else:
            for idx in indices:
                if _is_array_like_index(idx):
                    break
                remaining.append(None if idx is None else slice(None))
            remaining += [slice(None)] * max_dims
        remaining += indices[last_array + 1 :]
        if not remaining:
            return src
    else:
        remaining = indices

    # One slice for every int and slice that is left.
    starts = [0] * src.ndim
    stops = list(src.shape)
    strides = [1] * src.ndim
    squeeze_needed = False
    unsqueeze_needed = False
    axis = 0
    for idx in remaining:
        if idx is None:
            unsqueeze_needed = True
            continue
        if not have_array and _is_index_scalar(idx):
            i = _checked_index(idx, axis, src.shape[axis])
            starts[axis], stops[axis] = i, i + 1
            squeeze_needed = True
        else:
            starts[axis], stops[axis], strides[axis] = _slice_params(idx, stops[axis])
        axis += 1
    src = strided_slice(src, starts, stops, strides)

    # Drop the int axes, then insert the None axes.
    if squeeze_needed or unsqueeze_needed:
        squeeze_axes, unsqueeze_axes = [], []
        for pos, idx in enumerate(remaining):
            if unsqueeze_needed and idx is None:
                unsqueeze_axes.append(pos - len(squeeze_axes))
            elif squeeze_needed and _is_index_scalar(idx):
                squeeze_axes.append(pos - len(unsqueeze_axes))
        if squeeze_axes:
            src = squeeze(src, squeeze_axes)
        if unsqueeze_axes:
            src = expand_dims(src, unsqueeze_axes)
    return src


def getitem(a, index):
    """``mx.getitem``: ``a[index]``, the part of ``a`` that ``index`` selects (NumPy's basic and advanced indexing).

    mlxref's name for what ``array.__getitem__`` does (python/src/indexing.cpp
    ``mlx_get_item``); MLX has no ``mx.getitem``. Ints and slices make one
    ``Slice`` (then ``Squeeze`` / ``ExpandDims``); integer arrays or lists make
    one ``Gather`` whose result dimensions go first when the array indices are
    separated by a slice or None, and in place of the first array index
    otherwise. A Python int out of range raises ``IndexError`` at once, an index
    array when it is evaluated (MLX reads out of bounds).

    Arguments:
    - ``a``: the array.
    - ``index``: an int, a slice, None, ``...``, an integer array or list, or a tuple of them.

    Errors: ``ValueError`` for more indices than axes (MLX: "Too many indices for
    array with 2 dimensions.") and for another type ("Cannot index mlx array
    using the given type.").

    >>> a = mx.arange(6).reshape(2, 3)
    >>> a[1, ::-1]
    array([5, 4, 3], dtype=int32)
    >>> a[:, mx.array([2, 0])]
    array([[2, 0],
           [5, 3]], dtype=int32)
    """
    if isinstance(index, slice):
        if a.ndim == 0:
            raise _zero_dim_error()
        if index.start is None and index.stop is None and index.step is None:
            return copy.copy(a)  # a new array, as in MLX: a[:][0] = 1 leaves a alone
        starts = [0] * a.ndim
        stops = list(a.shape)
        strides = [1] * a.ndim
        starts[0], stops[0], strides[0] = _slice_params(index, a.shape[0])
        return strided_slice(a, starts, stops, strides)
    if isinstance(index, array):
        return _getitem_array(a, index)
    if _is_index_scalar(index):
        return _getitem_int(a, index)
    if isinstance(index, tuple):
        return _getitem_nd(a, index)
    if index is Ellipsis:
        return copy.copy(a)
    if index is None:
        return expand_dims(a, 0)
    if isinstance(index, list):
        return _getitem_array(a, array(index))
    raise ValueError("Cannot index mlx array using the given type.")


# --- a[index] = value ------------------------------------------------------------------------


def _value_array(v, dtype):
    """The right-hand side of ``a[index] = v``: an array, or a scalar made one of ``dtype``."""
    if isinstance(v, array):
        return v
    if is_scalar(v):
        return array(v, dtype)
    if v is None:
        raise TypeError("__setitem__(): incompatible function arguments: the value cannot be None.")
    raise ValueError(f"Invalid type {type(v).__name__} received in array initialization.")


def _squeeze_leading_singletons(x):
    s = 0
    while s < x.ndim and x.shape[s] == 1:
        s += 1
    return squeeze(x, list(range(s)))


def _slice_update_args(src, obj, v):
    """MLX's ``mlx_compute_slice_update_args``: (update, start, stop, strides), or None
    when the index holds arrays (or ``src`` is 0-d) and a scatter is needed."""
    if src.ndim == 0 or not (isinstance(obj, (slice, tuple)) or _is_index_scalar(obj)):
        return None
    if isinstance(obj, tuple) and any(isinstance(idx, (array, list)) for idx in obj):
        return None

    update = _value_array(v, src.dtype)
    # Leading size-1 axes beyond src's rank say nothing: drop them.
    s = 0
    while s < update.ndim - 1 and update.shape[s] == 1 and update.ndim - s > src.ndim:
        s += 1
    update = squeeze(update, list(range(s)))

    starts = [0] * src.ndim
    stops = list(src.shape)
    strides = [1] * src.ndim
    if _is_index_scalar(obj):
        i = _checked_index(obj, 0, src.shape[0])
        starts[0], stops[0] = i, i + 1
        return update, starts, stops, strides
    if isinstance(obj, slice):
        starts[0], stops[0], strides[0] = _slice_params(obj, src.shape[0])
        return update, starts, stops, strides

    non_none, indices = _expand_ellipsis(src.shape, obj)
    if non_none > src.ndim:
        raise _too_many(src.ndim)
    if non_none == 0:
        return broadcast_to(update, src.shape), starts, stops, strides

    # Walk the indices from the back, lining them up with the update's axes: an
    # int gets a size-1 axis in the update, a None must have one and loses it.
    unspecified = src.ndim - non_none
    squeeze_dims, expand = [], []
    ax = non_none - 1
    upd_ax = update.ndim - unspecified - 1
    for i in range(len(indices) - 1, -1, -1):
        idx = indices[i]
        if isinstance(idx, slice):
            starts[ax], stops[ax], strides[ax] = _slice_params(idx, src.shape[ax])
            ax -= 1
            upd_ax -= 1
        elif _is_index_scalar(idx):
            k = _checked_index(idx, ax, src.shape[ax])
            starts[ax], stops[ax] = k, k + 1
            if upd_ax >= 0:
                expand.append(i - len(indices) - unspecified)
            ax -= 1
        elif idx is None:
            if upd_ax >= 0:
                squeeze_dims.append(i - len(indices) - unspecified)
            upd_ax -= 1
    update = squeeze(expand_dims(update, expand), squeeze_dims)
    return update, starts, stops, strides


def _boolean_mask(obj):
    if isinstance(obj, bool):
        return array(obj)
    if isinstance(obj, array) and obj.dtype is _dt.bool_:
        return obj
    if isinstance(obj, list) or (convert.is_numpy(obj) and obj.dtype.name == "bool"):
        mask = array(obj)
        if mask.dtype is _dt.bool_:
            return mask
    return None


def _masked_scatter(a, mask, value):
    """MLX's ``masked_scatter``: ``a[mask] = value``, values taken in row-major order."""
    if mask.dtype is not _dt.bool_:
        raise ValueError("[masked_scatter] The mask has to be boolean.")
    if mask.ndim > a.ndim:
        raise ValueError("[masked_scatter] The mask cannot have more dimensions than the target.")
    unmasked = a.ndim - mask.ndim
    if value.ndim > unmasked + 1:
        raise ValueError(
            "[masked_scatter] Value array shape must be broadcastable with the last "
            f"{unmasked} dimensions of the input."
        )
    if mask.shape != a.shape[: mask.ndim]:
        raise ValueError(
            "[masked_scatter] The boolean mask should have the same shape as the beginning "
            f"of the indexed array but the mask has shape {format_shape(mask.shape)} and the "
            f"array has shape {format_shape(a.shape)}"
        )
    trailing = a.shape[a.ndim - unmasked :]
    mask_size = mask.size
    if unmasked > 0:
        mask = broadcast_to(reshape(mask, mask.shape + (1,) * unmasked), a.shape)
    value = value.astype(a.dtype)
    # value: one leading axis of "how many", then the unmasked axes.
    if value.ndim < unmasked + 1:
        value = reshape(value, (1,) * (unmasked + 1 - value.ndim) + value.shape)
        value = broadcast_to(value, (mask_size,) + trailing)
    elif value.shape[1:] != trailing:
        value = broadcast_to(value, value.shape[:1] + trailing)
    a1, mask1, value1 = expand_dims(a, 0), expand_dims(mask, 0), expand_dims(value, 0)
    out = make_array(P.MaskedScatter(), [a1, mask1, value1])
    return squeeze(out, 0)


def _scatter_args_array(src, indices, update):
    if src.ndim == 0:
        raise _zero_dim_error()
    up = _squeeze_leading_singletons(update)
    up = broadcast_to(up, indices.shape + src.shape[1:])
    up = reshape(up, indices.shape + (1,) + src.shape[1:])
    return [indices], up, [0]


def _scatter_args_nd(src, entries, update):
    """MLX's ``mlx_scatter_args_nd``: index arrays, update and axes for a tuple index."""
    non_none, indices = _expand_ellipsis(src.shape, entries)
    indices = _as_index_arrays(indices)
    if non_none > src.ndim:
        raise _too_many(src.ndim)
    up = _squeeze_leading_singletons(update)
    if non_none == 0:
        return [], broadcast_to(up, src.shape), []

    # How many index dimensions the arrays, strided slices and Nones need.
    max_dim = 0
    arrays_first = False
    num_none = num_slices = num_arrays = num_strided = num_simple_post = 0
    have_array = have_non_array = False
    for idx in indices:
        if idx is None:
            have_non_array = have_array
            num_none += 1
        elif isinstance(idx, slice):
            have_non_array = have_array
            num_slices += 1
            if _slice_params(idx, 0)[2] != 1:
                num_strided += 1
                num_simple_post = 0
            else:
                num_simple_post += 1
        elif isinstance(idx, array):
            have_array = True
            if have_non_array:
                arrays_first = True
            max_dim = max(max_dim, idx.ndim)
            num_arrays += 1
            num_simple_post = 0
    idx_ndim = max_dim + num_none + num_slices - num_simple_post
    idx_ndim = idx_ndim or 1

    # One index array per non-None index. A plain slice after the arrays is
    # only its start (the update carries its length); other slices are aranges.
    arr_indices = []
    slice_num = array_num = ax = 0
    update_shape = [1] * non_none
    slice_shapes = []
    for idx in indices:
        if isinstance(idx, slice):
            n = src.shape[ax]
            ax += 1
            start, stop, step = slice(*_slice_params(idx, n)).indices(n)
            idx_shape = [1] * idx_ndim
            if array_num >= num_arrays and num_strided <= 0 and step == 1:
                arr_indices.append(_index_array([start], idx_shape))
                slice_shapes.append(max(stop - start, 0))
                update_shape[ax - 1] = slice_shapes[-1]
            else:
                positions = range(start, stop, step)
                idx_shape[slice_num + (max_dim if arrays_first else 0)] = len(positions)
                arr_indices.append(_index_array(positions, idx_shape))
                slice_num += 1
                num_strided -= 1
        elif _is_index_scalar(idx):
            arr_indices.append(array(_checked_index(idx, ax, src.shape[ax]), _dt.int32))
            ax += 1
        elif idx is None:
            slice_num += 1
        else:
            ax += 1
            idx_shape = [1] * idx_ndim
            start = (0 if arrays_first else slice_num) + max_dim - idx.ndim
            idx_shape[start : start + idx.ndim] = idx.shape
            arr_indices.append(reshape(idx, idx_shape))
            if not arrays_first:
                array_num += 1
                if array_num == num_arrays:
                    slice_num += max_dim

    arr_indices = broadcast_arrays(*arr_indices)
    idx_shape = arr_indices[0].shape
    rest = src.shape[non_none:]
    up = broadcast_to(up, idx_shape + tuple(slice_shapes) + rest)
    up = reshape(up, idx_shape + tuple(update_shape) + rest)
    return arr_indices, up, list(range(len(arr_indices)))


def _scatter_args(src, obj, v):
    """MLX's ``mlx_compute_scatter_args``: (index arrays, update, axes)."""
    vals = _value_array(v, src.dtype)
    if isinstance(obj, slice) or _is_index_scalar(obj):
        # Reached only for a 0-d src; otherwise ints and slices are slice updates.
        raise _zero_dim_error()
    if isinstance(obj, array):
        return _scatter_args_array(src, obj, vals)
    if isinstance(obj, tuple):
        return _scatter_args_nd(src, obj, vals)
    if obj is Ellipsis:
        return [], broadcast_to(_squeeze_leading_singletons(vals), src.shape), []
    if obj is None:
        return [], broadcast_to(vals, src.shape), []
    if isinstance(obj, list):
        return _scatter_args_array(src, array(obj), vals)
    raise ValueError("Cannot index mlx array using the given type.")


def setitem(a, index, value, reduce_type="none"):
    """``mx.setitem``: the array that ``a[index] = value`` makes: ``a`` with the part ``index`` selects replaced by ``value``.

    mlxref's name for what ``array.__setitem__`` does (python/src/indexing.cpp
    ``mlx_set_item``); MLX has no ``mx.setitem``. ``value`` is cast to ``a``'s
    dtype and broadcast to the region. Ints and slices make a ``SliceUpdate``,
    index arrays a ``Scatter`` (of repeated indices, the last write wins), a
    boolean mask a ``MaskedScatter``. Nothing is mutated: the result is a new
    lazy array, and ``array.__setitem__`` makes ``a`` stand for it.

    Arguments:
    - ``a``: the array.
    - ``index``: as for ``getitem``, or a boolean mask array.
    - ``value``: a scalar or an array that broadcasts to the selected region.
    - ``reduce_type``: "none" replaces; "sum", "prod", "max" or "min" combine
      instead (what ``a.at[index].add(v)`` and its siblings use) (default: "none").

    Errors: ``ValueError`` for a value that does not fit the region (MLX:
    "Cannot broadcast array of shape (2) into shape (1).").

    >>> a = mx.zeros(4, mx.int32)
    >>> a[1:3] = 7
    >>> a
    array([0, 7, 7, 0], dtype=int32)
    """
    args = _slice_update_args(a, index, value)
    if args is not None:
        update, starts, stops, strides = args
        return strided_slice_update(a, update, starts, stops, strides, reduce_type)
    if reduce_type != "none":
        # ``x.at[index].add(v)`` and friends (python/src/indexing.cpp,
        # ``mlx_add_item`` etc.): a boolean mask is an index array here.
        indices, updates, axes = _scatter_args(a, index, value)
        if indices:
            return scatter(a, indices, updates, axes, reduce_type=reduce_type)
        return WHOLE_UPDATE[reduce_type](a, updates)
    mask = _boolean_mask(index)
    if mask is not None:
        return _masked_scatter(a, mask, _value_array(value, a.dtype))
    indices, updates, axes = _scatter_args(a, index, value)
    if indices:
        return scatter(a, indices, updates, axes)
    # A full overwrite (``a[...] = v``). MLX keeps v's dtype here; the result
    # of an assignment keeps a's dtype.
    return updates.astype(a.dtype)


# --- x.at[index].add(v) and friends ---------------------------------------------


class ArrayAt:
    """``x.at``: MLX's ``ArrayAt`` (python/src/array.cpp, ``mlx_add_item`` etc. in
    python/src/indexing.cpp). ``x.at[index]`` keeps the index; its methods
    return a new array with the indexed elements combined with ``v``, where an
    element indexed twice gets both updates (``x.at[[0, 0]].add(1)`` adds 2),
    unlike ``x[index] += v``. ``x`` itself is unchanged.
    """

    __slots__ = ("_x", "_index", "_has_index")

    def __init__(self, x, index=None, has_index=False):
        self._x = x
        self._index = index
        self._has_index = has_index

    def __getitem__(self, index):
        return ArrayAt(self._x, index, True)

    def _apply(self, name, reduce_type, v, transform=None):
        if not self._has_index:
            raise ValueError("Must give indices to array.at (e.g. `x.at[0].add(4)`).")
        if v is None:
            raise TypeError(f"{name}(): incompatible function arguments: the value cannot be None.")
        if transform is not None:
            v = transform(_value_array(v, self._x.dtype))
        return setitem(self._x, self._index, v, reduce_type)

    def add(self, value):
        """``x`` with ``value`` added at the index (a scatter-add)."""
        return self._apply("add", "sum", value)

    def subtract(self, value):
        """A scatter-add of ``-value``, as MLX."""
        return self._apply("subtract", "sum", value, negative)

    def multiply(self, value):
        """``x`` times ``value`` at the index (a scatter-prod)."""
        return self._apply("multiply", "prod", value)

    def divide(self, value):
        """A scatter-prod of ``reciprocal(value)``, as MLX: for an integer ``x`` the
        reciprocal is cast to x's dtype first (so dividing by 2 gives 0)."""
        return self._apply("divide", "prod", value, reciprocal)

    def maximum(self, value):
        """The larger of ``x`` and ``value`` at the index (a scatter-max)."""
        return self._apply("maximum", "max", value)

    def minimum(self, value):
        """The smaller of ``x`` and ``value`` at the index (a scatter-min)."""
        return self._apply("minimum", "min", value)


# --- put_along_axis, and slice / slice_update with array starts -------------------


@shared_doc
def put_along_axis(a, /, indices, values, axis=None, *, stream=None):
    """``mx.put_along_axis``: ``a`` with ``values`` written at ``indices`` along ``axis``: ``out[..., indices[..., i, ...], ...] = values[..., i, ...]``.

    ``a``, ``indices`` and ``values`` broadcast against each other on every
    axis but ``axis`` (so the result can be larger than ``a``, as in MLX);
    ``values`` is cast to ``a``'s dtype. MLX builds a ``ScatterAxis`` (mlx/ops.cpp
    ``scatter_axis``); here it is a ``Scatter`` over every axis, one index array
    per axis (later positions win on a repeated index). With ``axis=None``,
    ``a`` is flattened, written, and reshaped back.

    Arguments:
    - ``a``: the array written into (it is not changed: the result is new).
    - ``indices``: an integer array with ``a``'s number of dimensions.
    - ``values``: an array that broadcasts to ``indices``' shape.
    - ``axis``: the axis written along, or None for the flattened ``a`` (default: None).

    Errors: ``ValueError`` when the numbers of dimensions differ (MLX:
    "[put_along_axis] Indices of dimension 1 does not match array of dimension
    2."); ``IndexError`` for an axis out of range ("[put_along_axis] Axis 3 is
    out of bounds for array with 2 dimensions.").

    >>> mx.put_along_axis(mx.zeros((2, 2), mx.int32), mx.array([[1], [0]]), mx.array([[5], [6]]), axis=1)
    array([[0, 5],
           [6, 0]], dtype=int32)
    """
    if axis is None:
        # Only ``a`` is flattened (as MLX's binding does).
        if isinstance(a, array):
            return reshape(put_along_axis(flatten(a), indices, values, 0), a.shape)
        axis = 0
    axis = _along_axis_checks(a, indices, axis, "put_along_axis", (("values", values),),
                              any_index_dtype=isinstance(a, array) and a.size == 0)
    if a.size == 0:
        return a
    upd = values.astype(a.dtype)
    if upd.ndim > indices.ndim:
        upd = squeeze(upd, tuple(range(upd.ndim - indices.ndim)))
    indices, upd = broadcast_arrays(indices, upd)
    a, indices = _broadcast_except(a, indices, axis)
    upd = broadcast_to(upd, indices.shape)
    index_arrays = P.along_axis_indices(indices, axis)
    upd = reshape(upd, upd.shape + (1,) * a.ndim)
    return scatter(a, index_arrays, upd, list(range(a.ndim)), "put_along_axis")


_SLICE = ("slice(a: array, start_indices: array, axes: Sequence[int], slice_size: "
          "Sequence[int], *, stream: StreamOrDevice = None) -> array")
_SLICE_UPDATE = ("slice_update(a: array, update: array, start_indices: array, axes: "
                 "Sequence[int], *, stream: StreamOrDevice = None) -> array")


def _dynamic_slice_inputs(a, start, axes, op):
    """MLX's ``normalize_dynamic_slice_inputs``: the checked axes (negatives wrapped)."""
    if not isinstance(a, array) or not isinstance(start, array):
        raise incompatible_arguments(_SLICE if op == "slice" else _SLICE_UPDATE)
    axes = list(c_ints(axes, op, "axes"))
    if start.size > a.ndim:
        raise ValueError(
            f"[{op}] Invalid number of starting positions for array with dimension {a.ndim}."
        )
    if start.ndim > 1:
        raise ValueError(
            f"[{op}] array of starting indices must be zero or one dimensional but has "
            f"dimension {start.ndim}."
        )
    if start.size != len(axes):
        raise ValueError(
            f"[{op}] Number of starting indices {start.size} does not match number of axes "
            f"{len(axes)}."
        )
    if not start.dtype.is_integer:
        raise ValueError(f"[{op}] Start indices must be integers, got type {start.dtype.name}.")
    out = []
    for ax in axes:
        new = ax + a.ndim if ax < 0 else ax
        if new < 0 or new >= a.ndim:
            raise IndexError(f"[{op}] Invalid axis {ax} for array with dimension {a.ndim}.")
        out.append(new)
    if len(set(out)) != len(out):
        raise ValueError(f"[{op}] Repeat axes not allowed.")
    return out


@shared_doc
def dynamic_slice(a, /, start_indices, axes, slice_size, *, stream=None):
    """``mx.slice``: the window of ``a`` of shape ``slice_size`` that starts at ``start_indices`` (an array) on ``axes`` and at 0 on the other axes.

    Unlike ``a[i:j]``, the start is an array, so it can be computed (or traced
    by ``mx.compile``) without fixing the window's place; the window's size is
    fixed. One ``DynamicSlice`` node. mlxref names the function
    ``dynamic_slice`` in its ops package (a module-level ``slice`` would hide
    Python's own); ``mx.slice`` is the same function. A window that does not fit
    is an ``IndexError`` when it is evaluated (MLX reads out of bounds).

    Arguments:
    - ``a``: the array.
    - ``start_indices``: a 0-d or 1-D integer array, one start per entry of ``axes``.
    - ``axes``: the axes the starts are on.
    - ``slice_size``: the window's shape, one size per axis of ``a``.

    Errors: ``ValueError`` for a window larger than ``a`` (MLX: "[slice] Invalid
    slice size (7) for array with shape (6).") or of a negative size (MLX makes
    an array of that negative shape) or float starts ("[slice] Start
    indices must be integers, got type float32."); ``IndexError`` for an axis out
    of range ("[slice] Invalid axis 1 for array with dimension 1.").

    >>> mx.slice(mx.arange(6), mx.array([2]), [0], (3,))
    array([2, 3, 4], dtype=int32)
    >>> mx.slice(mx.arange(12).reshape(3, 4), mx.array([1, 1]), [0, 1], (2, 2))
    array([[5, 6],
           [9, 10]], dtype=int32)
    """
    axes = _dynamic_slice_inputs(a, start_indices, axes, "slice")
    slice_size = to_shape(slice_size, _SLICE, (a, start_indices, axes, slice_size))
    if len(slice_size) != a.ndim:
        raise ValueError(f"[slice] Invalid slice size for array with {a.ndim} dimensions.")
    if any(s > n for s, n in zip(slice_size, a.shape)):
        raise ValueError(
            f"[slice] Invalid slice size {format_shape(slice_size)} for array with shape "
            f"{format_shape(a.shape)}."
        )
    if any(s < 0 for s in slice_size):  # MLX makes an array of that negative shape
        raise ValueError(
            f"[slice] Invalid slice size {format_shape(slice_size)}: sizes cannot be negative."
        )
    return make_array(P.DynamicSlice(axes, slice_size), [a, start_indices])


@shared_doc
def dynamic_slice_update(a, /, update, start_indices, axes, *, stream=None):
    """``mx.slice_update``: ``a`` with ``update`` written into the window that starts at ``start_indices`` (an array) on ``axes`` and at 0 on the other axes.

    ``update`` gets ``a``'s leading axes it lacks (size 1 on ``axes``) and is
    broadcast to that shape and cast to ``a``'s dtype, as in MLX. One
    ``DynamicSliceUpdate`` node. mlxref names the function
    ``dynamic_slice_update`` in its ops package; ``mx.slice_update`` is the same
    function.

    Arguments:
    - ``a``: the array written into (it is not changed: the result is new).
    - ``update``: the values written (an array; MLX takes no Python scalar here).
    - ``start_indices``: a 0-d or 1-D integer array, one start per entry of ``axes``.
    - ``axes``: the axes the starts are on.

    Errors: ``IndexError`` for an axis out of range (MLX: "[slice_update]
    Invalid axis 2 for array with dimension 1."); ``ValueError`` for float starts
    and for an ``update`` of more dimensions than ``a`` (MLX's process aborts).

    >>> mx.slice_update(mx.zeros(5, mx.int32), mx.array([7, 8]), mx.array([1]), [0])
    array([0, 7, 8, 0, 0], dtype=int32)
    """
    axes = _dynamic_slice_inputs(a, start_indices, axes, "slice_update")
    if not isinstance(update, array):
        raise incompatible_arguments(_SLICE_UPDATE, (a, update, start_indices, axes))
    if update.ndim > a.ndim:  # MLX's process aborts
        raise ValueError(f"[slice_update] The update has {update.ndim} dimensions, more than "
                         f"the {a.ndim} of the array it is written into.")
    shape = list(update.shape)
    diff = max(a.ndim - update.ndim, 0)
    shape = list(a.shape[:diff]) + shape
    for d in range(diff, a.ndim):
        shape[d] = min(shape[d], a.shape[d])
    for ax in axes:
        if ax < diff:
            shape[ax] = 1
    upd = broadcast_to(update.astype(a.dtype), tuple(shape))
    return make_array(P.DynamicSliceUpdate(axes), [a, upd, start_indices])
