"""Shape ops: reshape, transpose, squeeze, concatenate, split, pad, repeat, tile ...

Read alongside: mlx/ops.cpp (``reshape``, ``flatten``, ``squeeze``,
``expand_dims``, ``concatenate``, ``stack``, ``split``, ``pad``, ``repeat``,
``tile``, ``moveaxis``, ``swapaxes``, ``transpose``) and python/src/ops.cpp for
the argument forms each accepts. MLX composes ``swapaxes``, ``moveaxis``
(transpose), ``stack`` (expand_dims + concatenate), ``repeat`` and ``tile``
(expand_dims / reshape + broadcast + reshape) and the non-constant ``pad``
modes (slice_update of slices); so does mlxref. The primitives are in
``mlxref.core.primitives.shape``.
"""

import copy

from .. import dtypes as _dt
from ..array import array, from_data
from ..printing import format_shape
from ..primitives import shape as P
from ..primitives.base import make_array, make_arrays
from ..primitives.indexing import Slice, SliceUpdate
from ..transforms.tape import in_dynamic_tracing
from .common import (astype, broadcast_to, c_int, check_array, check_dims, incompatible_argument,
                     incompatible_arguments, index_value, is_c_int, normalize_axis, plain_ints,
                     to_shape)
from .common import broadcast_shapes as _broadcast_shapes
from .common import dynamic_broadcast_arrays
from ..convert import scalar_or_array
from .docs import shared_doc
from .elementwise import add, maximum, minimum, multiply, subtract

_Array = array

__all__ = [
    "reshape", "flatten", "unflatten", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
    "broadcast_to", "concatenate", "stack", "split", "pad", "repeat", "tile", "view",
    "concat", "permute_dims", "matrix_transpose", "flip", "roll", "unstack", "atleast_1d",
    "atleast_2d", "atleast_3d", "meshgrid", "broadcast_arrays", "diff", "contiguous", "as_strided",
]


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool) and is_c_int(x)


def _is_int64(x):
    # as_strided's strides and offset are 64-bit in MLX
    return isinstance(x, int) and not isinstance(x, bool) and -(2**63) <= x < 2**63


def _check_array(a, op):
    # MLX's bindings take only an mx.array here (no lists or Python scalars).
    check_array(a, op, "a")


def _int_tuple(values, op, name):
    """A tuple of Python ints from a sequence of integers (NumPy's too: their
    ``__index__``) that fit 32 bits, or a TypeError."""
    if not isinstance(values, (list, tuple)) or not all(
            not isinstance(v, bool) and is_c_int(v) for v in values):
        raise incompatible_argument(op, name, "a sequence of ints (32 bits)", values)
    return tuple(index_value(v) for v in values)


def _axis_message(op):
    return "[" + op + "] Axis {axis} is out of bounds for array with {ndim} dimensions."


# --- reshape, flatten --------------------------------------------------------------


_RESHAPE = "reshape(a: array, /, shape: Sequence[int], *, stream: StreamOrDevice = None) -> array"


@shared_doc
def reshape(a, /, shape, *, stream=None):
    """``mx.reshape``: the elements of ``a``, in row-major order, arranged in ``shape``.

    One entry of ``shape`` may be -1: it is inferred from the size. A shape equal
    to ``a``'s returns a copy of ``a`` without a node; otherwise one ``Reshape``
    node. Inside ``mx.compile(..., shapeless=True)`` the -1 is kept and inferred
    again at each call, as in MLX.

    Arguments:
    - ``a``: the array.
    - ``shape``: a sequence of ints whose product is ``a.size`` (one may be -1).

    Errors: ``ValueError`` when the sizes differ (MLX: "[reshape] Cannot reshape
    array of size 6 into shape (4,2).") or for two -1 entries ("[reshape]
    Reshape can only infer one dimension."); ``TypeError`` when ``a`` is not an
    array.

    >>> mx.reshape(mx.arange(6), (2, 3))
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)
    >>> mx.reshape(mx.arange(6), (-1, 2)).shape
    (3, 2)
    """
    _check_array(a, "reshape")
    shape = to_shape(shape, _RESHAPE, (a, shape))
    if a.shape == shape:
        return copy.copy(a)
    if in_dynamic_tracing():  # MLX keeps the -1, inferred again at each replay
        return make_array(P.Reshape(shape), [a])
    return make_array(P.Reshape(P.reshape_output_shape(a.size, shape)), [a])


@shared_doc
def flatten(a, /, start_axis=0, end_axis=-1, *, stream=None):
    """``mx.flatten``: ``a`` with the axes ``start_axis`` to ``end_axis`` (both included) merged into one.

    Negative axes count from the end; an axis past either end is clamped to it.
    A 0-d array becomes shape (1,); merging a single axis returns ``a``. One
    ``Flatten`` node otherwise.

    Arguments:
    - ``a``: the array.
    - ``start_axis``: the first axis merged (default: 0).
    - ``end_axis``: the last axis merged (default: -1, the last).

    Errors: ``ValueError`` when ``start_axis`` comes after ``end_axis`` (MLX:
    "[flatten] start_axis must be less than or equal to end_axis").

    >>> mx.flatten(mx.arange(6).reshape(2, 3))
    array([0, 1, 2, 3, 4, 5], dtype=int32)
    >>> mx.flatten(mx.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    _check_array(a, "flatten")
    start_axis = c_int(start_axis, "flatten", "start_axis")
    end_axis = c_int(end_axis, "flatten", "end_axis")
    ndim = a.ndim
    start = start_axis + (ndim if start_axis < 0 else 0)
    end = end_axis + (ndim if end_axis < 0 else 0)
    start = max(0, start)
    end = min(ndim - 1, end)
    if ndim == 0:
        return reshape(a, (1,))
    if end < start:
        raise ValueError("[flatten] start_axis must be less than or equal to end_axis")
    if start >= ndim:
        raise ValueError(
            f"[flatten] Invalid start_axis {start_axis} for array with {ndim} dimensions."
        )
    if end < 0:
        raise ValueError(f"[flatten] Invalid end_axis {end_axis} for array with {ndim} dimensions.")
    if start == end:
        return copy.copy(a)
    return make_array(P.Flatten(start, end), [a])


_UNFLATTEN = (
    "unflatten(a: array, /, axis: int, shape: Sequence[int], *, stream: StreamOrDevice = None)"
    " -> array"
)


@shared_doc
def unflatten(a, /, axis, shape, *, stream=None):
    """``mx.unflatten``: ``a`` with axis ``axis`` split into several axes of sizes ``shape``.

    As MLX's ``unflatten`` (mlx/ops.cpp), an ``Unflatten`` node; a one-entry
    ``shape`` returns ``a``. Where MLX divides by zero (a -1 beside a zero
    entry; the process dies) or makes negative dimensions (``(-2, -3)``),
    mlxref raises ValueError.

    Arguments:
    - ``a``: the array.
    - ``axis``: the axis split (negative counts from the end).
    - ``shape``: the sizes it becomes, whose product is that axis's size (one may be -1).

    Errors: ``IndexError`` for an axis out of range (MLX: "[unflatten] Invalid
    axes 2 for array with 1 dimensions."); ``ValueError`` for sizes that do not
    multiply to the axis ("[Unflatten] Cannot unflatten axis 0 with size 6 into
    shape (4,1).") and for an empty ``shape`` ("[unflatten] Shape to unflatten to
    cannot be empty.").

    >>> mx.unflatten(mx.arange(6), 0, (2, 3))
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)
    """
    axis, shape = plain_ints(axis), plain_ints(shape)
    if not isinstance(a, array) or not _is_int(axis):
        raise incompatible_arguments(_UNFLATTEN, (a, axis, shape))
    shape = list(to_shape(shape, _UNFLATTEN, (a, axis, shape)))
    if not shape:
        raise ValueError("[unflatten] Shape to unflatten to cannot be empty.")
    ndim = a.ndim
    ax = axis + ndim if axis < 0 else axis
    if ax < 0 or ax >= ndim:
        raise IndexError(f"[unflatten] Invalid axes {ax} for array with {ndim} dimensions.")
    size, infer = 1, None
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise ValueError("[Unflatten] Can only infer one dimension.")
            infer = i
        else:
            size *= d
    if infer is not None:
        if size == 0:
            raise ValueError(
                f"[unflatten] Cannot infer the -1 in shape {format_shape(shape)} beside a "
                "zero entry (MLX divides by zero here and the process dies)."
            )
        shape[infer] = a.shape[ax] // size
        size *= shape[infer]
    if size != a.shape[ax] or any(d < 0 for d in shape):
        raise ValueError(
            f"[Unflatten] Cannot unflatten axis {axis} with size {a.shape[ax]} into shape "
            f"{format_shape(shape)}."
        )
    if len(shape) == 1:
        return copy.copy(a)
    return make_array(P.Unflatten(ax, shape), [a])


# --- transposes ------------------------------------------------------------------------


@shared_doc
def transpose(a, /, axes=None, *, stream=None):
    """``mx.transpose``: ``a`` with its axes permuted: output axis ``i`` is input axis ``axes[i]``.

    One ``Transpose`` node. ``a.T`` is ``transpose(a)``; ``mx.permute_dims`` is
    the array API's name for this op.

    Arguments:
    - ``a``: the array.
    - ``axes``: a permutation of the axes, negative ones counting from the end (default: the axes reversed).

    Errors: ``ValueError`` when ``axes`` has the wrong length (MLX: "[transpose]
    Received 1 axes for array with 2 dimensions.") or repeats an axis
    ("[transpose] Repeat axes not allowed."); ``IndexError`` for an axis out of
    range ("[transpose] Invalid axis (2) for array with 2 dimensions.").

    >>> mx.transpose(mx.arange(6).reshape(2, 3))
    array([[0, 3],
           [1, 4],
           [2, 5]], dtype=int32)
    >>> mx.transpose(mx.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    _check_array(a, "transpose")
    ndim = a.ndim
    if axes is None:
        axes = tuple(range(ndim - 1, -1, -1))
    axes = [ax + ndim if ax < 0 else ax for ax in _int_tuple(axes, "transpose", "axes")]
    if len(axes) != ndim:
        raise ValueError(f"[transpose] Received {len(axes)} axes for array with {ndim} dimensions.")
    seen = set()
    for ax in axes:
        if ax < 0 or ax >= ndim:
            raise IndexError(f"[transpose] Invalid axis ({ax}) for array with {ndim} dimensions.")
        if ax in seen:
            raise ValueError("[transpose] Repeat axes not allowed.")
        seen.add(ax)
    return make_array(P.Transpose(axes), [a])


def _check_axis(ax, ndim, op):
    if not _is_int(ax):
        raise incompatible_argument(op, "axis", "an int", ax)
    if ax < -ndim or ax >= ndim:
        raise IndexError(f"[{op}] Invalid axis {ax} for array with {ndim} dimensions.")
    return ax + ndim if ax < 0 else ax


@shared_doc
def swapaxes(a, /, axis1, axis2, *, stream=None):
    """``mx.swapaxes``: ``a`` with axes ``axis1`` and ``axis2`` exchanged.

    A ``Transpose`` node with the two axes swapped in the identity permutation.

    Arguments:
    - ``a``: the array.
    - ``axis1``: one axis (negative counts from the end).
    - ``axis2``: the other axis.

    Errors: ``IndexError`` for an axis out of range (MLX: "[swapaxes] Invalid
    axis 3 for array with 3 dimensions.").

    >>> mx.swapaxes(mx.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    axis1, axis2 = plain_ints(axis1), plain_ints(axis2)
    _check_array(a, "swapaxes")
    ndim = a.ndim
    axis1 = _check_axis(axis1, ndim, "swapaxes")
    axis2 = _check_axis(axis2, ndim, "swapaxes")
    order = list(range(ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return make_array(P.Transpose(order), [a])  # a permutation: nothing for transpose to check


@shared_doc
def moveaxis(a, /, source, destination, *, stream=None):
    """``mx.moveaxis``: ``a`` with axis ``source`` moved to position ``destination``, the other axes keeping their order.

    A ``Transpose`` node (none when the two are equal).

    Arguments:
    - ``a``: the array.
    - ``source``: the axis moved (negative counts from the end).
    - ``destination``: its position in the result.

    Errors: ``IndexError`` for an axis out of range (MLX: "[moveaxis] Invalid
    axis 3 for array with 3 dimensions.").

    >>> mx.moveaxis(mx.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    source, destination = plain_ints(source), plain_ints(destination)
    _check_array(a, "moveaxis")
    ndim = a.ndim
    source = _check_axis(source, ndim, "moveaxis")
    destination = _check_axis(destination, ndim, "moveaxis")
    if source == destination:
        return copy.copy(a)
    order = list(range(ndim))
    order.pop(source)
    order.insert(destination, source)
    return make_array(P.Transpose(order), [a])  # a permutation: nothing for transpose to check


# --- size-1 axes ---------------------------------------------------------------------


def _axes_arg(axis, op):
    if _is_int(axis):
        return (axis,)
    return _int_tuple(axis, op, "axis")


@shared_doc
def expand_dims(a, /, axis, *, stream=None):
    """``mx.expand_dims``: ``a`` with new axes of size 1 inserted at the positions ``axis`` of the result.

    One ``ExpandDims`` node (none for an empty ``axis``).

    Arguments:
    - ``a``: the array.
    - ``axis``: an int or a sequence of ints: positions in the result, negative ones counting from its end.

    Errors: ``IndexError`` for a position out of range (MLX: "[expand_dims]
    Axis 3 is out of bounds for array with 2 dimensions."); ``ValueError`` for a
    repeated one ("[expand_dims] Received duplicate axes.").

    >>> mx.expand_dims(mx.array([1, 2]), 0)
    array([[1, 2]], dtype=int32)
    >>> mx.expand_dims(mx.array([1, 2]), (0, 2)).shape
    (1, 2, 1)
    """
    axis = plain_ints(axis)
    _check_array(a, "expand_dims")
    axes = _axes_arg(axis, "expand_dims")
    if not axes:
        return copy.copy(a)
    out_ndim = a.ndim + len(axes)
    normalized = {normalize_axis(ax, out_ndim, _axis_message("expand_dims")) for ax in axes}
    if len(normalized) != len(axes):
        raise ValueError("[expand_dims] Received duplicate axes.")
    return make_array(P.ExpandDims(sorted(normalized)), [a])


@shared_doc
def squeeze(a, /, axis=None, *, stream=None):
    """``mx.squeeze``: ``a`` with the axes of size 1 listed in ``axis`` removed (default: every axis of size 1).

    One ``Squeeze`` node.

    Arguments:
    - ``a``: the array.
    - ``axis``: an int or a sequence of ints, each an axis of size 1 (default: all of them).

    Errors: ``ValueError`` for an axis whose size is not 1 (MLX: "[squeeze]
    Cannot squeeze axis 1 with size 2 which is not equal to 1."); ``IndexError``
    for an axis out of range ("[squeeze] Axis 3 is out of bounds for array with
    3 dimensions.").

    >>> mx.squeeze(mx.zeros((1, 2, 1))).shape
    (2,)
    >>> mx.squeeze(mx.zeros((1, 2, 1)), 2).shape
    (1, 2)
    """
    axis = plain_ints(axis)
    _check_array(a, "squeeze")
    if axis is None:
        axes = tuple(d for d, n in enumerate(a.shape) if n == 1)
    else:
        given = _axes_arg(axis, "squeeze")
        if not given and not _is_int(axis):
            return copy.copy(a)
        normalized = set()
        for ax in given:
            d = normalize_axis(ax, a.ndim, _axis_message("squeeze"))
            if a.shape[d] != 1:
                raise ValueError(
                    f"[squeeze] Cannot squeeze axis {ax} with size {a.shape[d]} "
                    "which is not equal to 1."
                )
            normalized.add(d)
        if len(normalized) != len(given):
            raise ValueError("[squeeze] Received duplicate axes.")
        axes = tuple(sorted(normalized))
    return make_array(P.Squeeze(axes), [a])


# --- strided slices: MLX's slice and slice_update, the building blocks of indexing ---


def _normalize_slice(shape, start, stop, strides):
    """MLX's ``normalize_slice``, done with ``slice.indices``: clamped bounds and output shape."""
    starts, stops, out_shape = [], [], []
    for n, s, e, st in zip(shape, start, stop, strides):
        s, e, st = slice(s, e, st).indices(n)
        starts.append(s)
        stops.append(e)
        out_shape.append(len(range(s, e, st)))
    has_neg_strides = any(st < 0 for st in strides)
    return starts, stops, list(strides), tuple(out_shape), has_neg_strides


def strided_slice(a, start, stop, strides):
    """MLX's ``slice(a, start, stop, strides)``; no node when it would copy ``a`` unchanged."""
    starts, stops, strides, out_shape, neg = _normalize_slice(a.shape, start, stop, strides)
    if not neg and out_shape == a.shape:
        return copy.copy(a)
    return make_array(Slice(starts, stops, strides), [a])


# The op a slice update that covers all of ``src`` is (no SliceUpdate node, as
# in MLX), per reduce type; also what ``x.at[index].add(v)`` and friends build
# when the index holds no array (``setitem`` in ops/indexing.py).
WHOLE_UPDATE = {"sum": add, "prod": multiply, "max": maximum, "min": minimum}


def strided_slice_update(src, update, start, stop, strides, reduce_type="none"):
    """MLX's ``slice_update``: ``src`` with a strided window replaced by ``update``,
    or combined with it (``slice_update_add`` / ``_prod`` / ``_max`` / ``_min``
    for ``reduce_type`` "sum", "prod", "max", "min")."""
    starts, stops, strides, upd_shape, neg = _normalize_slice(src.shape, start, stop, strides)
    upd = broadcast_to(update.astype(src.dtype), upd_shape)
    if not neg and upd_shape == src.shape:
        # The window is all of src: no SliceUpdate, as in MLX.
        return upd if reduce_type == "none" else WHOLE_UPDATE[reduce_type](src, upd)
    return make_array(SliceUpdate(starts, stops, strides, reduce_type), [src, upd])


# --- joining and splitting ----------------------------------------------------------


def _array_list(arrays, op):
    if not isinstance(arrays, (list, tuple)) or not all(isinstance(x, array) for x in arrays):
        raise TypeError(
            f"{op}(): incompatible function arguments: expected a list of arrays, got {arrays!r}."
        )
    return list(arrays)


@shared_doc
def concatenate(arrays, /, axis=0, *, stream=None):
    """``mx.concatenate``: the arrays joined end to end along ``axis``.

    The arrays must agree on every other axis; their dtypes are promoted to a
    common one. One ``Concatenate`` node (a single array comes back as a copy).
    ``mx.concat`` is the array API's name for this op.

    Arguments:
    - ``arrays``: a list or tuple of arrays with the same number of dimensions.
    - ``axis``: the axis joined along; ``None`` flattens every array first (default: 0).

    Errors: ``ValueError`` for no arrays (MLX: "[concatenate] No arrays provided
    for concatenation"), for different numbers of dimensions or shapes that
    differ off ``axis`` ("[concatenate] All the input array dimensions must match
    exactly except for the concatenation axis. ..."); ``IndexError`` for an axis
    out of range ("[concatenate] Axis 1 is out of bounds for array with 1
    dimensions.").

    >>> mx.concatenate([mx.array([1, 2]), mx.array([3])])
    array([1, 2, 3], dtype=int32)
    >>> mx.concatenate([mx.array([[1, 2]]), mx.array([[3.5]])], None)
    array([1, 2, 3.5], dtype=float32)
    """
    arrays = _array_list(arrays, "concatenate")
    if axis is None:
        arrays = [flatten(x) for x in arrays]
        axis = 0
    if not arrays:
        raise ValueError("[concatenate] No arrays provided for concatenation")
    if len(arrays) == 1:
        return copy.copy(arrays[0])
    ndim = arrays[0].ndim
    ax = normalize_axis(axis, ndim, _axis_message("concatenate"))
    shape = arrays[0].shape
    for x in arrays:
        if x.ndim != ndim:
            raise ValueError(
                "[concatenate] All the input arrays must have the same number of "
                f"dimensions. However, got arrays with dimensions {ndim} and {x.ndim}."
            )
        if any(x.shape[d] != shape[d] for d in range(ndim) if d != ax):
            shapes = "".join(f"{format_shape(y.shape)}, " for y in arrays)
            raise ValueError(
                "[concatenate] All the input array dimensions must match exactly "
                "except for the concatenation axis. However, the provided shapes are "
                f"{shapes}and the concatenation axis is {axis}."
            )
    check_dims("concatenate", [sum(x.shape[ax] for x in arrays)])
    dtype = arrays[0].dtype
    for x in arrays[1:]:
        dtype = _dt.promote_types(dtype, x.dtype)
    return make_array(P.Concatenate(ax), [x.astype(dtype) for x in arrays])


@shared_doc
def stack(arrays, /, axis=0, *, stream=None):
    """``mx.stack``: the arrays, all of one shape, joined along a new axis ``axis``.

    Composed as in MLX: ``expand_dims`` of each array, then ``concatenate``.

    Arguments:
    - ``arrays``: a list or tuple of arrays of the same shape.
    - ``axis``: the position of the new axis in the result (default: 0).

    Errors: ``ValueError`` for shapes that differ (MLX: "[stack] All arrays must
    have the same shape") or no arrays ("[stack] No arrays provided for
    stacking").

    >>> mx.stack([mx.array([1, 2]), mx.array([3, 4])])
    array([[1, 2],
           [3, 4]], dtype=int32)
    >>> mx.stack([mx.array([1, 2]), mx.array([3, 4])], axis=1)
    array([[1, 3],
           [2, 4]], dtype=int32)
    """
    arrays = _array_list(arrays, "stack")
    if axis is None:
        axis = 0
    if not arrays:
        raise ValueError("[stack] No arrays provided for stacking")
    if any(x.shape != arrays[0].shape for x in arrays):
        raise ValueError("[stack] All arrays must have the same shape")
    ax = normalize_axis(axis, arrays[0].ndim + 1, _axis_message("stack"))
    return concatenate([expand_dims(x, ax) for x in arrays], axis)


def slice_axis(a, axis, start, stop):
    """``a[start:stop]`` along ``axis``, all of every other axis."""
    starts = [0] * a.ndim
    stops = list(a.shape)
    starts[axis], stops[axis] = start, stop
    return strided_slice(a, starts, stops, [1] * a.ndim)


def _split_at(a, indices, ax):
    if not indices:
        return [copy.copy(a)]
    n = a.shape[ax]
    # As MLX: one Split node for a few sorted cut points inside the axis,
    # otherwise one slice per piece (which also handles negative or unsorted cuts).
    few_sorted = len(indices) < 10 and list(indices) == sorted(indices)
    if few_sorted and indices[0] > 0 and indices[-1] < n:
        return make_arrays(P.Split(indices, ax), [a])
    pieces = []
    start = 0
    for i in range(len(indices) + 1):
        stop = indices[i] if i < len(indices) else n
        pieces.append(slice_axis(a, ax, start, stop))
        start = stop
    return pieces


@shared_doc
def split(a, /, indices_or_sections, axis=0, *, stream=None):
    """``mx.split``: ``a`` cut along ``axis`` into a list of arrays: ``n`` equal pieces, or pieces cut before each of the given indices.

    As in MLX, a few sorted cuts inside the axis make one ``Split`` node with
    several outputs; other cuts (negative, unsorted, ten or more) are one slice
    per piece.

    Arguments:
    - ``a``: the array.
    - ``indices_or_sections``: an int ``n`` (the axis must divide into ``n``
      equal parts), or a sequence of ints, the indices where pieces start.
    - ``axis``: the axis cut (default: 0).

    Errors: ``ValueError`` when ``n`` does not divide the axis (MLX: "Array split
    does not result in sub arrays with equal size: attempting 4 splits along axis
    0 for shape (6).") or is not positive ("[split] num_splits must be positive
    and non-zero but got 0."); ``IndexError`` for an axis out of range.

    >>> mx.split(mx.arange(6), 3)
    [array([0, 1], dtype=int32), array([2, 3], dtype=int32), array([4, 5], dtype=int32)]
    >>> mx.split(mx.arange(6), [1, 4])
    [array([0], dtype=int32), array([1, 2, 3], dtype=int32), array([4, 5], dtype=int32)]
    """
    indices_or_sections, axis = plain_ints(indices_or_sections), plain_ints(axis)
    _check_array(a, "split")
    ax = normalize_axis(axis, a.ndim, _axis_message("split"))
    if _is_int(indices_or_sections):
        sections = indices_or_sections
        if sections <= 0:
            raise ValueError(
                f"[split] num_splits must be positive and non-zero but got {sections}."
            )
        size, rem = divmod(a.shape[ax], sections)
        if rem:
            raise ValueError(
                "Array split does not result in sub arrays with equal size: attempting "
                f"{sections} splits along axis {axis} for shape {format_shape(a.shape)}."
            )
        indices = tuple((i + 1) * size for i in range(sections - 1))
    else:
        indices = _int_tuple(indices_or_sections, "split", "indices_or_sections")
    return _split_at(a, indices, ax)


# --- padding ------------------------------------------------------------------------------


def _pad_widths(pad_width, ndim):
    """The (low, high) pair for every axis, from pad's four argument forms."""
    if _is_int(pad_width):
        return [(pad_width, pad_width)] * ndim
    if isinstance(pad_width, (list, tuple)):
        if len(pad_width) == 1 and _is_int(pad_width[0]):
            return [(pad_width[0], pad_width[0])] * ndim
        if len(pad_width) == 2 and all(_is_int(p) for p in pad_width):
            return [tuple(pad_width)] * ndim
        if all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(_is_int(v) for v in p)
            for p in pad_width
        ):
            if len(pad_width) == 1:
                return [tuple(pad_width[0])] * ndim
            return [tuple(p) for p in pad_width]
    raise incompatible_argument(
        "pad", "pad_width", "an int, (int,), (int, int) or a list of (int, int) pairs", pad_width)


def _zeros(shape, dtype):
    return broadcast_to(array(0, dtype), shape)


def _flip(a, axis):
    starts = [0] * a.ndim
    stops = list(a.shape)
    strides = [1] * a.ndim
    starts[axis], stops[axis], strides[axis] = -1, -a.shape[axis] - 1, -1
    return strided_slice(a, starts, stops, strides)


def _window(a_ndim, out_shape, axis, start, stop):
    starts = [0] * a_ndim
    stops = list(out_shape)
    starts[axis], stops[axis] = start, stop
    return starts, stops


def _edge_pad(a, low, high, out_shape):
    ones = [1] * a.ndim
    stops = [n + lo for n, lo in zip(a.shape, low)]
    padded = strided_slice_update(_zeros(out_shape, a.dtype), a, list(low), stops, ones)
    for axis in range(a.ndim):
        if low[axis] > 0:
            starts, stops = _window(a.ndim, out_shape, axis, low[axis], low[axis] + 1)
            edge = strided_slice(padded, starts, stops, ones)
            starts, stops = _window(a.ndim, out_shape, axis, 0, low[axis])
            padded = strided_slice_update(padded, edge, starts, stops, ones)
        if high[axis] > 0:
            starts, stops = _window(a.ndim, out_shape, axis, -high[axis] - 1, -high[axis])
            edge = strided_slice(padded, starts, stops, ones)
            starts, stops = _window(a.ndim, out_shape, axis, -high[axis], out_shape[axis])
            padded = strided_slice_update(padded, edge, starts, stops, ones)
    return padded


def _reflect_pad(a, low, high, out_shape, include_edge):
    ones = [1] * a.ndim
    stops = [n + lo for n, lo in zip(a.shape, low)]
    padded = strided_slice_update(_zeros(out_shape, a.dtype), a, list(low), stops, ones)
    for axis in range(a.ndim):
        n, lo, hi = a.shape[axis], low[axis], high[axis]
        if lo == 0 and hi == 0:
            continue
        if n == 0:
            mode = "symmetric" if include_edge else "reflect"
            raise ValueError(f"[pad] Cannot pad empty axis {axis} using mode '{mode}'.")
        # reflect skips the edge value (period 2(n-1)); symmetric repeats it (period 2n).
        offset = 1 if (not include_edge and n > 1) else 0
        tile_len = n - offset
        filled, remaining = lo, lo
        while remaining > 0:
            chunk = min(remaining, tile_len)
            start = filled + offset
            starts, stops = _window(a.ndim, out_shape, axis, start, start + chunk)
            piece = _flip(strided_slice(padded, starts, stops, ones), axis)
            starts, stops = _window(a.ndim, out_shape, axis, filled - chunk, filled)
            padded = strided_slice_update(padded, piece, starts, stops, ones)
            filled -= chunk
            remaining -= chunk
        filled, remaining = lo + n, hi
        while remaining > 0:
            chunk = min(remaining, tile_len)
            stop = filled - offset
            starts, stops = _window(a.ndim, out_shape, axis, stop - chunk, stop)
            piece = _flip(strided_slice(padded, starts, stops, ones), axis)
            starts, stops = _window(a.ndim, out_shape, axis, filled, filled + chunk)
            padded = strided_slice_update(padded, piece, starts, stops, ones)
            filled += chunk
            remaining -= chunk
    return padded


_PAD = (
    "pad(a: array, pad_width: int | tuple[int] | tuple[int, int] | list[tuple[int, int]], "
    "mode: Literal['constant', 'edge', 'reflect', 'symmetric'] = 'constant', "
    "constant_values: scalar | array = 0, *, stream: StreamOrDevice = None) -> array"
)


@shared_doc
def pad(a, /, pad_width, mode="constant", constant_values=0, *, stream=None):
    """``mx.pad``: ``a`` with ``low`` elements added before and ``high`` after it on every axis.

    ``mode`` "constant" fills with ``constant_values`` (one ``Pad`` node);
    "edge" repeats the edge element, "reflect" mirrors the array without its
    edge element and "symmetric" with it; those three are composed of slices and
    slice updates, as in MLX. A ``constant_values`` array of more than one
    element raises (MLX pads with its first element).

    Arguments:
    - ``a``: the array.
    - ``pad_width``: an int (both sides of every axis), ``(n,)``, ``(low,
      high)`` for every axis, or a list of one ``(low, high)`` pair per axis.
    - ``mode``: "constant", "edge", "reflect" or "symmetric" (default: "constant").
    - ``constant_values``: the fill of "constant", a scalar or a one-element
      array, cast to ``a``'s dtype (default: 0).

    Errors: ``ValueError`` for a negative width (MLX: "Invalid low padding size
    (-1) passed to pad for axis 0. Padding sizes must be non-negative"), the
    wrong number of pairs ("Invalid number of padding sizes passed to pad with
    axes of size 2") or another mode ("Invalid padding mode (wrap) passed to
    pad").

    >>> mx.pad(mx.array([1, 2]), (1, 2), constant_values=9)
    array([9, 1, 2, 9, 9], dtype=int32)
    >>> mx.pad(mx.array([[1, 2], [3, 4]]), [(0, 1), (1, 0)])
    array([[0, 1, 2],
           [0, 3, 4],
           [0, 0, 0]], dtype=int32)
    >>> mx.pad(mx.array([1, 2, 3]), 1, mode="reflect")
    array([2, 1, 2, 3, 2], dtype=int32)
    """
    pad_width = plain_ints(pad_width)
    _check_array(a, "pad")
    if constant_values is None:
        optional = {} if mode == "constant" else {"mode": mode}
        raise incompatible_arguments(_PAD, (a, pad_width), {**optional, "constant_values": None})
    value = astype(scalar_or_array(constant_values, a.dtype), a.dtype)
    widths = _pad_widths(pad_width, a.ndim)
    if len(widths) != a.ndim:
        raise ValueError(
            f"Invalid number of padding sizes passed to pad with axes of size {a.ndim}"
        )
    low = [lo for lo, _ in widths]
    high = [hi for _, hi in widths]
    out_shape = list(a.shape)
    for i, (lo, hi) in enumerate(widths):
        if lo < 0:
            raise ValueError(
                f"Invalid low padding size ({lo}) passed to pad for axis {i}. "
                "Padding sizes must be non-negative"
            )
        if hi < 0:
            raise ValueError(
                f"Invalid high padding size ({hi}) passed to pad for axis {i}. "
                "Padding sizes must be non-negative"
            )
        out_shape[i] += lo + hi
    out_shape = tuple(check_dims("pad", out_shape))
    if mode == "constant":
        if value.size != 1:  # MLX would pad with the first element
            raise ValueError(
                "[pad] constant_values must be a scalar or an array of one element, "
                f"but got an array of shape {format_shape(value.shape)}."
            )
        return make_array(P.Pad(range(a.ndim), low, high), [a, value])
    if mode == "edge":
        return _edge_pad(a, low, high, out_shape)
    if mode == "reflect":
        return _reflect_pad(a, low, high, out_shape, False)
    if mode == "symmetric":
        return _reflect_pad(a, low, high, out_shape, True)
    raise ValueError(f"Invalid padding mode ({mode}) passed to pad")


# --- repeat, tile ---------------------------------------------------------------------------


@shared_doc
def repeat(array, /, repeats, axis=None, *, stream=None):
    """``mx.repeat``: each element of ``array`` repeated ``repeats`` times in a row along ``axis``.

    Composed as in MLX: ``expand_dims`` after ``axis``, ``broadcast_to`` that
    new axis of size ``repeats``, and ``reshape`` it into ``axis``.

    Arguments:
    - ``array``: the array (named so in MLX).
    - ``repeats``: how many times each element appears (a non-negative int).
    - ``axis``: the axis repeated along (default: None, the flattened array).

    Errors: ``ValueError`` for a negative ``repeats`` (MLX: "[repeat] Number of
    repeats cannot be negative"); {axis_bounds_error}.

    >>> mx.repeat(mx.array([1, 2]), 3)
    array([1, 1, 1, 2, 2, 2], dtype=int32)
    >>> mx.repeat(mx.array([[1, 2], [3, 4]]), 2, axis=1)
    array([[1, 1, 2, 2],
           [3, 3, 4, 4]], dtype=int32)
    """
    repeats, axis = plain_ints(repeats), plain_ints(axis)
    arr = array  # the parameter is named ``array`` in MLX; the class is ``_Array`` here
    _check_array(arr, "repeat")
    if not _is_int(repeats):
        raise incompatible_argument("repeat", "repeats", "an int", repeats)
    if axis is None:
        arr = flatten(arr)
        axis = 0
    axis = normalize_axis(axis, arr.ndim, _axis_message("repeat"))
    if repeats < 0:
        raise ValueError("[repeat] Number of repeats cannot be negative")
    if repeats == 0:
        shape = list(arr.shape)
        shape[axis] = 0
        return from_data([], tuple(shape), arr.dtype)
    if repeats == 1:
        return copy.copy(arr)
    check_dims("repeat", [arr.shape[axis] * repeats])
    shape = list(arr.shape)
    shape.insert(axis + 1, repeats)
    out = broadcast_to(expand_dims(arr, axis + 1), tuple(shape))
    shape.pop(axis + 1)
    shape[axis] *= repeats
    return reshape(out, tuple(shape))


@shared_doc
def tile(a, reps, /, *, stream=None):
    """``mx.tile``: ``a`` laid out ``reps[i]`` times side by side along each axis ``i``.

    With fewer ``reps`` than axes, the leading axes are repeated once; with
    more, ``a`` gets leading axes of size 1. Composed as in MLX: reshape (a
    size-1 axis before each repeated one), broadcast those axes to ``reps``,
    reshape them away.

    Arguments:
    - ``a``: the array.
    - ``reps``: an int or a sequence of ints, aligned with the last axes.

    Errors: ``ValueError`` for a negative repetition (MLX: "[broadcast_to]
    Negative dimensions not allowed.").

    >>> mx.tile(mx.array([1, 2]), 2)
    array([1, 2, 1, 2], dtype=int32)
    >>> mx.tile(mx.array([1, 2]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int32)
    """
    reps = plain_ints(reps)
    _check_array(a, "tile")
    reps = [reps] if _is_int(reps) else list(_int_tuple(reps, "tile", "reps"))
    shape = list(a.shape)
    if len(reps) < len(shape):
        reps = [1] * (len(shape) - len(reps)) + reps
    if len(reps) > len(shape):
        shape = [1] * (len(reps) - len(shape)) + shape
    expand_shape, broad_shape, final_shape = [], [], []
    for n, r in zip(shape, reps):
        if r != 1:
            expand_shape.append(1)
            broad_shape.append(r)
        expand_shape.append(n)
        broad_shape.append(n)
        final_shape.append(r * n)
    check_dims("tile", final_shape)
    x = reshape(a, tuple(expand_shape))
    x = broadcast_to(x, tuple(broad_shape))
    return reshape(x, tuple(final_shape))


_VIEW = "view(a: scalar | array, dtype: Dtype, stream: StreamOrDevice = None) -> array"


@shared_doc
def view(a, /, dtype, *, stream=None):
    """``mx.view``: the bytes of ``a`` read as elements of ``dtype`` (mlx/ops.cpp ``view``).

    The last axis shrinks (or grows) by the ratio of the element sizes; a 0-d
    array can only change to a dtype of its own size. Same dtype: ``a``. One
    ``View`` node; bytes are little-endian, as on MLX's machines.

    Arguments:
    - ``a``: an array or a Python scalar.
    - ``dtype``: the dtype the bytes are read as.

    Errors: ``ValueError`` for a 0-d array and a dtype of another size (MLX:
    "[view] Changing the type of a scalar is only allowed for types with the same
    size.") and for a last axis whose bytes do not divide into the larger dtype
    ("[view] When viewing as a larger dtype, the size in bytes of the last axis
    must be a multiple of the requested type size.").

    >>> mx.view(mx.array([1.0]), mx.int32)
    array([1065353216], dtype=int32)
    >>> mx.view(mx.array([1, 2], mx.int16), mx.int8)
    array([1, 0, 2, 0], dtype=int8)
    """
    if not isinstance(dtype, _dt.Dtype):
        raise incompatible_arguments(_VIEW, (a, dtype))
    a = scalar_or_array(a)
    if a.dtype is dtype:
        return copy.copy(a)
    size_in, size_out = a.dtype.size, dtype.size
    if a.ndim == 0 and size_in != size_out:
        raise ValueError("[view] Changing the type of a scalar is only allowed"
                         " for types with the same size.")
    if size_in < size_out and a.shape[-1] % (size_out // size_in) != 0:
        raise ValueError("[view] When viewing as a larger dtype, the size in bytes of the last"
                         " axis must be a multiple of the requested type size.")
    return make_array(P.View(dtype), [a])


# --- issue 14: aliases, flips, rolls, grids, differences, strided views ---------------

_CONCAT = (
    "concat(arrays: list[array], axis: int | None = 0, *, stream: StreamOrDevice = None) -> array"
)


@shared_doc
def concat(arrays, /, axis=0, *, stream=None):
    """``mx.concat``: the arrays joined end to end along ``axis``; the array API's name for ``mx.concatenate``.

    Arguments:
    - ``arrays``: a list or tuple of arrays with the same number of dimensions.
    - ``axis``: the axis joined along; ``None`` flattens every array first (default: 0).

    Errors: those of ``concatenate`` (MLX: "[concatenate] No arrays provided
    for concatenation"); ``TypeError`` when ``axis`` is neither an int nor None.

    >>> mx.concat([mx.array([1]), mx.array([2, 3])])
    array([1, 2, 3], dtype=int32)
    """
    if axis is not None and not _is_int(axis):
        raise incompatible_arguments(_CONCAT, (arrays, axis))
    return concatenate(arrays, axis)


@shared_doc
def permute_dims(a, /, axes=None, *, stream=None):
    """``mx.permute_dims``: ``a`` with its axes permuted; the array API's name for ``mx.transpose``.

    Arguments:
    - ``a``: the array.
    - ``axes``: a permutation of the axes (default: the axes reversed).

    Errors: those of ``transpose`` (MLX: "[transpose] Repeat axes not allowed.").

    >>> mx.permute_dims(mx.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(a, axes)


@shared_doc
def matrix_transpose(a, /, *, stream=None):
    """``mx.matrix_transpose``: ``a`` with its last two axes exchanged (each matrix of a batch transposed).

    ``swapaxes(a, -1, -2)``; ``a.mT`` is this op. (The python/src/ops.cpp
    that mlxref reads beside it binds the name to ``transpose``, which
    reverses every axis; MLX 0.32.4 as released swaps the last two, and so
    does mlxref.)

    Arguments:
    - ``a``: an array of at least two dimensions.

    Errors: ``ValueError`` for fewer than two dimensions (MLX:
    "[matrix_transpose] Input array must have at least 2 dimensions.").

    >>> mx.matrix_transpose(mx.arange(6).reshape(2, 3))
    array([[0, 3],
           [1, 4],
           [2, 5]], dtype=int32)
    >>> mx.matrix_transpose(mx.zeros((2, 3, 4))).shape
    (2, 4, 3)
    """
    _check_array(a, "matrix_transpose")
    if a.ndim < 2:
        raise ValueError("[matrix_transpose] Input array must have at least 2 dimensions.")
    return swapaxes(a, -1, -2)


@shared_doc
def flip(a, /, axis=None, *, stream=None):
    """``mx.flip``: ``a`` with the order of its elements reversed along ``axis``.

    MLX's ``flip`` (mlx/ops.cpp) is one Slice with stride -1 on each flipped
    axis; an axis named twice is flipped once.

    Arguments:
    - ``a``: the array.
    - ``axis``: {axes}

    Errors: {axis_bounds_error}.

    >>> mx.flip(mx.array([1, 2, 3]))
    array([3, 2, 1], dtype=int32)
    >>> mx.flip(mx.array([[1, 2], [3, 4]]), 1)
    array([[2, 1],
           [4, 3]], dtype=int32)
    """
    axis = plain_ints(axis)
    _check_array(a, "flip")
    if axis is None:
        axes = tuple(range(a.ndim))
    elif _is_int(axis):
        axes = (axis,)
    elif isinstance(axis, (list, tuple)) and all(_is_int(v) for v in axis):
        axes = tuple(axis)
    else:
        raise incompatible_arguments(
            "flip(a: array, /, axis: None | int | Sequence[int] = None, *, "
            "stream: StreamOrDevice = None) -> array", (a, axis))
    starts, stops, strides = [0] * a.ndim, list(a.shape), [1] * a.ndim
    for ax in axes:
        d = normalize_axis(ax, a.ndim, _axis_message("flip"))
        starts[d], stops[d], strides[d] = a.shape[d] - 1, -a.shape[d] - 1, -1
    return strided_slice(a, starts, stops, strides)


_ROLL = (
    "roll(a: array, shift: int | tuple[int], axis: None | int | tuple[int] = None, /, *, "
    "stream: StreamOrDevice = None) -> array"
)


def _roll_axes(a, shifts, axes):
    """MLX's ``roll(a, shift, axes)``: per axis, split where the last ``shift``
    elements start and concatenate the two pieces the other way round."""
    if not axes:
        return copy.copy(a)
    if len(shifts) < len(axes):
        raise ValueError(
            "[roll] At least one shift value per axis is required, "
            f"{len(shifts)} provided for {len(axes)} axes."
        )
    out = a
    for sh, ax in zip(shifts, axes):
        d = ax + a.ndim if ax < 0 else ax
        if d < 0 or d >= a.ndim:
            raise IndexError(f"[roll] Invalid axis {ax} for array with {a.ndim} dimensions.")
        n = a.shape[d]
        if n == 0:
            continue
        cut = (-sh) % n if sh < 0 else n - sh % n
        first, second = _split_at(out, (cut,), d)  # one piece may be empty, as in MLX
        out = concatenate([second, first], d)
    return out


@shared_doc
def roll(a, /, shift, axis=None, *, stream=None):
    """``mx.roll``: the elements of ``a`` shifted by ``shift`` places along ``axis``; elements leaving one end come back at the other.

    As MLX composes it: a split and a concatenate per axis. Without ``axis``
    the flattened array is rolled by the total of the shifts and reshaped;
    with one axis and several shifts, the total is used on that axis; with
    several axes, each gets its own shift (one int shifts them all alike).

    Arguments:
    - ``a``: the array.
    - ``shift``: an int or a tuple of ints; positive moves elements to higher indices.
    - ``axis``: an int, a tuple of ints, or None for the flattened array (default: None).

    Errors: ``IndexError`` for an axis out of range (MLX: "[roll] Invalid axis 2
    for array with 2 dimensions."); ``ValueError`` for fewer shifts than axes
    ("[roll] At least one shift value per axis is required, 1 provided for 2
    axes.").

    >>> mx.roll(mx.arange(5), 2)
    array([3, 4, 0, 1, 2], dtype=int32)
    >>> mx.roll(mx.arange(6).reshape(2, 3), 1, 1)
    array([[2, 0, 1],
           [5, 3, 4]], dtype=int32)
    """
    shift, axis = plain_ints(shift), plain_ints(axis)
    _check_array(a, "roll")
    if _is_int(shift):
        shifts = (shift,)
    elif isinstance(shift, (list, tuple)) and all(_is_int(v) for v in shift):
        shifts = tuple(shift)
    else:
        raise incompatible_arguments(_ROLL, (a, shift) if axis is None else (a, shift, axis))
    if axis is None:
        return reshape(_roll_axes(flatten(a), (sum(shifts),), (0,)), a.shape)
    if _is_int(axis):
        return _roll_axes(a, (sum(shifts),), (axis,))
    if isinstance(axis, (list, tuple)) and all(_is_int(v) for v in axis):
        if _is_int(shift):
            shifts = shifts * len(axis)
        return _roll_axes(a, shifts, tuple(axis))
    raise incompatible_arguments(_ROLL, (a, shift, axis))


@shared_doc
def unstack(x, /, *, axis=0, stream=None):
    """``mx.unstack``: the slices of ``x`` along ``axis``, that axis removed, as a tuple.

    As MLX builds it: ``split`` into size-1 pieces, each squeezed. A zero-size
    axis gives an empty tuple.

    Arguments:
    - ``x``: the array.
    - ``axis``: the axis taken apart, keyword-only (default: 0).

    Errors: ``IndexError`` for an axis out of range (MLX: "[unstack] Axis 2 is
    out of bounds for array with 2 dimensions.").

    >>> mx.unstack(mx.array([[1, 2], [3, 4]]))
    (array([1, 2], dtype=int32), array([3, 4], dtype=int32))
    >>> mx.unstack(mx.array([[1, 2], [3, 4]]), axis=1)
    (array([1, 3], dtype=int32), array([2, 4], dtype=int32))
    """
    axis = plain_ints(axis)
    _check_array(x, "unstack")
    if not _is_int(axis):
        raise incompatible_arguments(
            "unstack(x: array, /, *, axis: int = 0, stream: StreamOrDevice = None) -> "
            "tuple[array, ...]", (x,), {"axis": axis})
    ax = normalize_axis(axis, x.ndim, _axis_message("unstack"))
    n = x.shape[ax]
    if n == 0:
        return ()
    return tuple(squeeze(p, ax) for p in split(x, n, ax))


def _array_args(arrays, op):
    for x in arrays:
        if not isinstance(x, array):
            # MLX's binding fails its cast here with a bare "std::bad_cast".
            raise RuntimeError(f"[{op}] Expected arrays, got {type(x).__name__} {x!r}.")
    return list(arrays)


def _atleast(arrays, op, shape_of):
    arrays = _array_args(arrays, op)
    outs = [reshape(x, shape_of(x)) if shape_of(x) is not None else copy.copy(x) for x in arrays]
    return outs[0] if len(outs) == 1 else outs


@shared_doc
def atleast_1d(*arys, stream=None):
    """``mx.atleast_1d``: each array with at least one dimension: a 0-d array becomes shape (1,), the others are returned as they are.

    {atleast_result}

    Arguments:
    {atleast_arys}

    Errors: {atleast_errors}.

    >>> mx.atleast_1d(mx.array(1))
    array([1], dtype=int32)
    >>> mx.atleast_1d(mx.array(1), mx.array([2, 3]))
    [array([1], dtype=int32), array([2, 3], dtype=int32)]
    """
    return _atleast(arys, "atleast_1d", lambda x: (1,) if x.ndim == 0 else None)


@shared_doc
def atleast_2d(*arys, stream=None):
    """``mx.atleast_2d``: each array with at least two dimensions: 0-d becomes (1, 1), (n,) becomes (1, n), others are returned as they are.

    {atleast_result}

    Arguments:
    {atleast_arys}

    Errors: {atleast_errors}.

    >>> mx.atleast_2d(mx.array([1, 2]))
    array([[1, 2]], dtype=int32)
    """
    return _atleast(arys, "atleast_2d",
                    lambda x: (1, 1) if x.ndim == 0 else (1,) + x.shape if x.ndim == 1 else None)


@shared_doc
def atleast_3d(*arys, stream=None):
    """``mx.atleast_3d``: each array with at least three dimensions: 0-d becomes (1, 1, 1), (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1).

    {atleast_result}

    Arguments:
    {atleast_arys}

    Errors: {atleast_errors}.

    >>> mx.atleast_3d(mx.array([1, 2])).shape
    (1, 2, 1)
    >>> mx.atleast_3d(mx.zeros((2, 3))).shape
    (2, 3, 1)
    """
    def shape_of(x):
        if x.ndim == 0:
            return (1, 1, 1)
        if x.ndim == 1:
            return (1, x.shape[0], 1)
        if x.ndim == 2:
            return x.shape + (1,)
        return None
    return _atleast(arys, "atleast_3d", shape_of)


@shared_doc
def broadcast_arrays(*arrays, stream=None):
    """``mx.broadcast_arrays``: the arrays broadcast to their common shape, as a list.

    An array already of that shape comes back as it is; the others are
    ``broadcast_to`` the shape ``broadcast_shapes`` gives.

    Arguments:
    - ``arrays``: the arrays.

    Errors: ``ValueError`` for shapes that do not broadcast (MLX:
    "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast.").

    >>> mx.broadcast_arrays(mx.array([[1], [2]]), mx.array([3, 4, 5]))
    [array([[1, 1, 1],
           [2, 2, 2]], dtype=int32), array([[3, 4, 5],
           [3, 4, 5]], dtype=int32)]
    """
    arrays = _array_args(arrays, "broadcast_arrays")
    if len(arrays) <= 1:
        return arrays
    shape = _broadcast_shapes(*[x.shape for x in arrays])
    if in_dynamic_tracing():
        return dynamic_broadcast_arrays(arrays)
    return [x if x.shape == shape else broadcast_to(x, shape) for x in arrays]


@shared_doc
def meshgrid(*arrays, sparse=False, indexing="xy", stream=None):
    """``mx.meshgrid``: coordinate grids from 1-D coordinate arrays, as a tuple: output ``i`` holds array ``i``'s values along its own axis, repeated along the others.

    As MLX's ``meshgrid``: array ``i`` is reshaped to have its elements on
    axis ``i`` (with "xy" indexing, the first two arrays go to axes 1 and 0),
    then broadcast against the others unless ``sparse``. An input of more than
    one axis is flattened by that reshape.

    Arguments:
    - ``arrays``: the coordinate arrays.
    - ``sparse``: keep each output with size-1 axes instead of broadcasting (default: False).
    - ``indexing``: "xy" (Cartesian: the first array varies along columns) or "ij" (matrix) (default: "xy").

    Errors: ``ValueError`` for another ``indexing`` (MLX: "[meshgrid] Invalid
    indexing value. Valid values are 'xy' and 'ij'.").

    >>> mx.meshgrid(mx.array([1, 2, 3]), mx.array([4, 5]))
    (array([[1, 2, 3],
           [1, 2, 3]], dtype=int32), array([[4, 4, 4],
           [5, 5, 5]], dtype=int32))
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("[meshgrid] Invalid indexing value. Valid values are 'xy' and 'ij'.")
    arrays = _array_args(arrays, "meshgrid")
    n = len(arrays)
    shapes = []
    for i, x in enumerate(arrays):
        shape = [1] * n
        shape[i] = x.size
        shapes.append(shape)
    if indexing == "xy" and n > 1:
        shapes[0][0], shapes[0][1] = 1, arrays[0].size
        shapes[1][0], shapes[1][1] = arrays[1].size, 1
    outs = [reshape(x, tuple(s)) for x, s in zip(arrays, shapes)]
    if not sparse:
        outs = broadcast_arrays(*outs)
    return tuple(outs)


_DIFF = "diff(a: array, /, n: int = 1, axis: int = -1, *, stream: StreamOrDevice = None) -> array"


@shared_doc
def diff(a, /, n=1, axis=-1, *, stream=None):
    """``mx.diff``: the ``n``-th discrete difference of ``a`` along ``axis`` (``a[1:] - a[:-1]``, ``n`` times).

    Each step is a slice without the first element minus a slice without the
    last, so the axis shrinks by ``n`` (to at least 0); ``n=0`` returns ``a``.

    Arguments:
    - ``a``: the array.
    - ``n``: how many times to take the difference (default: 1).
    - ``axis``: the axis (default: -1, the last).

    Errors: ``ValueError`` for a negative ``n`` (MLX: "[diff] Order `n` must be
    non-negative."); ``IndexError`` for an axis out of range ("[diff] Axis is
    out of bounds for the array.").

    >>> mx.diff(mx.array([1, 4, 9, 16]))
    array([3, 5, 7], dtype=int32)
    >>> mx.diff(mx.array([1, 4, 9, 16]), 2)
    array([2, 2], dtype=int32)
    """
    n, axis = plain_ints(n), plain_ints(axis)
    if not isinstance(a, array) or not _is_int(n) or not _is_int(axis):
        raise incompatible_arguments(_DIFF, (a, n, axis))
    ax = axis + a.ndim if axis < 0 else axis
    if ax < 0 or ax >= a.ndim:
        raise IndexError("[diff] Axis is out of bounds for the array.")
    if n < 0:
        raise ValueError("[diff] Order `n` must be non-negative.")
    x = a
    for _ in range(n):
        size = x.shape[ax]
        upper = slice_axis(x, ax, 1, size)
        lower = slice_axis(x, ax, 0, max(size - 1, 0))
        x = subtract(upper, lower)
    return x


_CONTIGUOUS = (
    "contiguous(a: array, /, allow_col_major: bool = False, *, stream: StreamOrDevice = None) "
    "-> array"
)


@shared_doc
def contiguous(a, /, allow_col_major=False, *, stream=None):
    """``mx.contiguous``: a copy of ``a`` whose elements lie in row-major order in memory.

    One ``Contiguous`` node, as in MLX; mlxref's arrays are always row-major, so
    it never changes a value (MLX copies a transposed or strided view).

    Arguments:
    - ``a``: the array.
    - ``allow_col_major``: accept a column-major array as it is (default: False).

    Errors: ``TypeError`` when ``a`` is not an array or ``allow_col_major`` not a bool.

    >>> mx.contiguous(mx.arange(4).reshape(2, 2).T)
    array([[0, 2],
           [1, 3]], dtype=int32)
    """
    if not isinstance(a, array) or not isinstance(allow_col_major, bool):
        raise incompatible_arguments(
            _CONTIGUOUS, (a,), {"allow_col_major": allow_col_major} if allow_col_major else None)
    return make_array(P.Contiguous(allow_col_major), [a])


_AS_STRIDED = (
    "as_strided(a: array, /, shape: Sequence[int] | None = None, strides: Sequence[int] | None "
    "= None, offset: int = 0, *, stream: StreamOrDevice = None) -> array"
)


@shared_doc
def as_strided(a, /, shape=None, strides=None, offset=0, *, stream=None):
    """``mx.as_strided``: a view of ``a``'s row-major elements through ``shape`` and ``strides``: element ``index`` of the result is ``a.flatten()[offset + sum(index * strides)]``.

    As MLX builds it: ``flatten`` then one ``AsStrided`` node. Strides count
    elements, not bytes. MLX reads whatever lies past the buffer for an index
    outside it (or a ``strides`` shorter than ``shape``); mlxref raises a
    ValueError naming the index instead.

    Arguments:
    - ``a``: the array.
    - ``shape``: the result's shape (default: ``a``'s shape).
    - ``strides``: one stride per axis of ``shape``, in elements (default: ``shape``'s row-major strides).
    - ``offset``: the flat index of the first element (default: 0).

    Errors: ``ValueError`` for a read outside ``a`` (mlxref's own message) and
    for a negative dimension; ``TypeError`` for a negative ``offset`` (MLX's
    binding refuses it).

    >>> mx.as_strided(mx.arange(6), (3, 2), (1, 1))
    array([[0, 1],
           [1, 2],
           [2, 3]], dtype=int32)
    >>> mx.as_strided(mx.arange(6), (2, 2), (2, 1), 1)
    array([[1, 2],
           [3, 4]], dtype=int32)
    """
    shape, strides, offset = plain_ints(shape), plain_ints(strides), plain_ints(offset)
    given = {"shape": shape, "strides": strides, "offset": offset}
    kwargs = {k: v for k, v in given.items() if v is not None and (k != "offset" or v != 0)}
    args = ((a,), kwargs or None)
    if not isinstance(a, array) or not _is_int64(offset) or offset < 0:
        raise incompatible_arguments(_AS_STRIDED, *args)
    if shape is not None and not (
        isinstance(shape, (list, tuple)) and all(_is_int64(v) for v in shape)
    ):
        raise incompatible_arguments(_AS_STRIDED, *args)
    # MLX's dimensions are 32-bit (past that its process aborts)
    shape = a.shape if shape is None else check_dims("as_strided", tuple(shape))
    if strides is None:
        strides = []
        step = 1
        for d in reversed(shape):
            strides.insert(0, step)
            step *= d
    elif not isinstance(strides, (list, tuple)) or not all(_is_int64(v) for v in strides):
        raise incompatible_arguments(_AS_STRIDED, *args)
    if len(strides) != len(shape):
        raise ValueError(
            f"[as_strided] Got {len(strides)} strides for a shape of {len(shape)} dimensions."
        )
    if any(d < 0 for d in shape):
        raise ValueError("[as_strided] Negative dimensions not allowed.")
    if all(d > 0 for d in shape):
        lo = offset + sum(min(0, (d - 1) * s) for d, s in zip(shape, strides))
        hi = offset + sum(max(0, (d - 1) * s) for d, s in zip(shape, strides))
        if lo < 0 or hi >= a.size:
            bad = lo if lo < 0 else hi
            raise ValueError(
                f"[as_strided] The view reads element {bad} of an array of {a.size} elements "
                f"(shape {format_shape(shape)}, strides {format_shape(strides)}, offset {offset})."
            )
    return make_array(P.AsStrided(shape, strides, offset), [flatten(a)])
