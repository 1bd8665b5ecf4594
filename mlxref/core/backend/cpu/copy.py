"""Copies: strided reads and writes, and the primitives that only move elements.

Read alongside: mlx/backend/cpu/copy.cpp (``copy_general``: walk an input's
strides, write a contiguous output; ``copy_cpu_inplace``: write into a
strided window of the output), mlx/backend/common/utils.h (``elem_to_loc``,
the row-major strides of a shape), and the ``eval_cpu`` of ``AsType``,
``Concatenate``, ``Split``, ``Pad`` and ``View`` in mlx/backend/cpu/primitives.cpp,
which are copies into or out of windows.

mlxref has no views: a transpose, a slice or a broadcast builds a new list,
gathered from the input's list along the strides MLX's view would have.
Read next: mlxref/core/backend/cpu/slicing.py (windows), then
mlxref/core/primitives/shape.py (the primitives that call these).
"""

import math

from ... import dtypes as _dt


def row_major_strides(shape):
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def strided_indices(shape, strides, offset=0):
    """Flat indices of a strided view: element ``i`` of the result is taken from
    ``offset + sum(index[d] * strides[d])``.

    Transpose (permuted strides), slicing (an offset and scaled strides) and
    broadcasting (stride 0 on new axes) are all this one loop, so every data-
    moving primitive gathers its elements as ``[data[i] for i in indices]``.
    """
    indices = [offset]
    for n, s in zip(shape, strides):
        indices = [i + k * s for i in indices for k in range(n)]
    return indices


def gather_strided(data, shape, strides, offset=0):
    """``[data[i] for i in strided_indices(shape, strides, offset)]``, faster.

    The innermost axis is copied with one slice per row (or one repetition,
    for a stride of 0), so the per-element work happens in C.
    """
    if not shape:
        return [data[offset]]
    n, s = shape[-1], strides[-1]
    rows = strided_indices(shape[:-1], strides[:-1], offset)
    if n == 0:
        return []
    out = []
    if s == 0:
        for i in rows:
            out += [data[i]] * n
    elif s > 0:
        for i in rows:
            out += data[i : i + n * s : s]
    else:
        for i in rows:  # walk forwards from the last element read, then reverse
            out += data[i + (n - 1) * s : i + 1 : -s][::-1]
    return out


def write_strided(out, data, shape, strides, offset=0):
    """``out`` (a list the caller owns) with the elements of ``data``, of
    ``shape``, written at ``strided_indices(shape, strides, offset)``: the
    inverse of ``gather_strided``."""
    for i, v in zip(strided_indices(shape, strides, offset), data):
        out[i] = v
    return out


def astype(data, dtype, to):
    """The elements of ``dtype`` converted to ``to`` (mlxref/core/dtypes.py
    ``convert``), stored as ``to`` holds them."""
    out = _dt.convert(data, dtype, to)
    if dtype is _dt.bool_ and to.is_float and not _dt.holds_symbolic(out):
        # What the store would give, without its rounding pass: 0 and 1 are
        # exact (ReLU's mask in every gradient is such a cast).
        return [1.0 if v else 0.0 for v in out]
    return to.store(out)


def view(data, dtype, to):
    """The bytes of the elements of ``dtype`` read as elements of ``to``."""
    if any(not isinstance(v, (bool, int, float, complex)) for v in data):
        # A symbol has no bits: it keeps its name through a view that maps
        # each element to one element (so a view and its inverse give the
        # symbol back), and nothing else is defined.
        if dtype.size != to.size:
            raise ValueError(
                f"[view] A symbolic array cannot be viewed as {to.name}: "
                f"{dtype.name} and {to.name} differ in size."
            )
        return list(data)
    return _dt.from_bytes(_dt.to_bytes(data, dtype), to)


def broadcast(data, shape, out_shape):
    """The elements of an array of ``shape`` broadcast to ``out_shape``
    (repeated along new leading axes, stride 0 along its size-1 axes), in
    row-major order."""
    lead = len(out_shape) - len(shape)
    if out_shape[lead:] == shape:  # only new leading axes: repeat the list
        return data * math.prod(out_shape[:lead])
    strides = [0] * lead + [
        0 if n == 1 and m != 1 else s
        for n, m, s in zip(shape, out_shape[lead:], row_major_strides(shape))
    ]
    return gather_strided(data, out_shape, strides)


def transpose(data, shape, axes):
    """The elements with the axes permuted: output axis ``i`` is axis ``axes[i]``."""
    in_strides = row_major_strides(shape)
    return gather_strided(data, [shape[ax] for ax in axes], [in_strides[ax] for ax in axes])


def concatenate(datas, shapes, axis):
    """The arrays (their elements and shapes) joined along ``axis``.

    Row-major: for every index of the axes before ``axis``, each input
    contributes one contiguous block of prod(shape[axis:]) elements.
    """
    outer = math.prod(shapes[0][:axis])
    blocks = [(data, math.prod(shape[axis:])) for data, shape in zip(datas, shapes)]
    out = []
    for o in range(outer):
        for data, n in blocks:
            out.extend(data[o * n : (o + 1) * n])
    return out


def split(data, shape, axis, out_shapes):
    """The pieces of ``out_shapes`` cut one after the other along ``axis``."""
    strides = row_major_strides(shape)
    outs, start = [], 0
    for piece in out_shapes:
        outs.append(gather_strided(data, piece, strides, start * strides[axis]))
        start += piece[axis]
    return outs


def pad(data, shape, value, out_shape, axes, low_pad_size):
    """An array of ``out_shape`` filled with the one element ``value``, the
    elements of ``data`` (of ``shape``) written where they sit after the
    ``low_pad_size`` elements before each of ``axes``."""
    out_strides = row_major_strides(out_shape)
    offset = sum(lo * out_strides[ax] for ax, lo in zip(axes, low_pad_size))
    return write_strided([value] * math.prod(out_shape), data, shape, out_strides, offset)
