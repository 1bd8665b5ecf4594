"""Strided reads: the copy kernel every data-moving primitive uses.

Read alongside: mlx/backend/cpu/copy.cpp (``copy_general``: walk an input's
strides, write a contiguous output) and mlx/backend/common/utils.h
(``elem_to_loc``, the row-major strides of a shape).

mlxref has no views: a transpose, a slice or a broadcast builds a new list,
gathered from the input's list along the strides MLX's view would have.
Read next: mlxref/core/primitives/shape.py (the primitives that call it).
"""


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
