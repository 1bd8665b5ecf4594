"""Gather, scatter and slice updates: elements read or written at computed positions.

Read alongside: mlx/backend/cpu/indexing.cpp (``gather``, ``gather_axis``,
``scatter`` with its ``None``/``Sum``/``Prod``/``Max``/``Min`` updates,
``masked_scatter_impl``, ``slice_update_impl``).

Positions are flat row-major offsets: a window is ``strided_indices``, and an
index array contributes ``index * stride`` of the axis it indexes. Negative
indices count from the end, as in MLX's kernels. An index outside its axis
is an ``IndexError`` here (MLX reads or writes out of bounds), naming the op
that built the primitive.
Read next: mlxref/core/primitives/indexing.py (the rules of these primitives).
"""

from ...scalar import is_symbolic, sympy  # sympy is imported at its first use
from .copy import row_major_strides, strided_indices
from .rounding import rounding
from .slicing import prepare_slice


def _out_of_bounds(op, index, axis, size):
    prefix = f"[{op}] " if op else ""
    return IndexError(f"{prefix}Index {index} is out of bounds for axis {axis} with size {size}.")


def _wrapped(values, axis, size, op):
    """Index values with negatives counted from the end; IndexError if outside the axis."""
    out = []
    for v in values:
        if v < -size or v >= size:
            raise _out_of_bounds(op, v, axis, size)
        out.append(v + size if v < 0 else v)
    return out


def _index_offsets(shape, axes, indices, op):
    """Flat offset in an array of ``shape`` selected by each position of the
    index arrays (``indices``: their element lists, all of one length)."""
    strides = row_major_strides(shape)
    offsets = [0] * (len(indices[0]) if indices else 1)
    for ax, idx in zip(axes, indices):
        s = strides[ax]
        values = _wrapped(idx, ax, shape[ax], op)
        offsets = [o + v * s for o, v in zip(offsets, values)]
    return offsets


def _combine(reduce_type, dtype):
    """``(old, update) -> new`` for one element, rounded as ``dtype`` holds it
    where MLX's kernel keeps the running value in ``dtype`` (sum, prod)."""
    rounded = rounding(dtype) if reduce_type in ("sum", "prod") else None
    if reduce_type == "none":
        return lambda old, u: u
    if reduce_type == "sum":
        op = lambda old, u: old + u
    elif reduce_type == "prod":
        op = lambda old, u: old * u
    elif reduce_type == "max":
        # ``old > u ? old : u`` as MLX's kernel: the update wins unless the old
        # value is strictly greater, so a nan on either side may stay or go.
        # SymPy's Max (Min) on expressions.
        return lambda old, u: (sympy.Max(old, u) if is_symbolic(old) or is_symbolic(u)
                               else old if old > u else u)
    else:
        return lambda old, u: (sympy.Min(old, u) if is_symbolic(old) or is_symbolic(u)
                               else old if old < u else u)
    if rounded is None:
        return op
    return lambda old, u: rounded(op(old, u))


def gather(data, shape, axes, indices, slice_sizes, op):
    """For each position of the index arrays, the window of ``slice_sizes``
    that starts at their values on ``axes`` (at 0 on the other axes)."""
    window = strided_indices(slice_sizes, row_major_strides(shape))
    if not window:
        return []
    bases = _index_offsets(shape, axes, indices, op)
    return [data[b + w] for b in bases for w in window]


def gather_axis(data, shape, axis, indices, index_shape, op):
    """``out[..., i, ...] = data[..., indices[..., i, ...], ...]`` on ``axis``."""
    strides = row_major_strides(shape)
    base_strides = [0 if d == axis else s for d, s in enumerate(strides)]
    bases = strided_indices(index_shape, base_strides)
    values = _wrapped(indices, axis, shape[axis], op)
    s = strides[axis]
    return [data[b + v * s] for b, v in zip(bases, values)]


def scatter(data, shape, dtype, axes, indices, updates, window_shape, reduce_type, op):
    """``data`` with each window of ``updates`` (one per position of the
    index arrays, of ``window_shape``) combined in at the indices on ``axes``,
    position after position."""
    out = list(data)
    window = strided_indices(window_shape, row_major_strides(shape))
    if not window:
        return out
    bases = _index_offsets(shape, axes, indices, op)
    n = len(window)
    # MLX's scatter combines in the array's dtype, so sums and products that
    # meet at one position are rounded after each step.
    combine = _combine(reduce_type, dtype)
    for p, b in enumerate(bases):
        for k, w in enumerate(window):
            out[b + w] = combine(out[b + w], updates[p * n + k])
    return out


def masked_scatter(data, batches, mask, values):
    """``data`` where ``mask`` is true taking the elements of ``values`` in
    row-major order, batch by batch (``batches`` blocks along axis 0)."""
    out = list(data)
    if batches == 0:
        return out
    per_mask = len(mask) // batches
    per_value = len(values) // batches
    for b in range(batches):
        used = 0
        for i in range(b * per_mask, (b + 1) * per_mask):
            if mask[i]:
                if used >= per_value:
                    raise RuntimeError(
                        "[MaskedScatter::eval_cpu] Source does not have enough "
                        "elements for mask."
                    )
                out[i] = values[b * per_value + used]
                used += 1
    return out


def slice_update(data, shape, dtype, update, update_shape, start_indices, strides, reduce_type):
    """``data`` with the window ``start_indices::strides`` (of ``update_shape``)
    replaced by, or combined with, ``update``."""
    offset, window_strides = prepare_slice(shape, start_indices, strides)
    out = list(data)  # a copy: element lists are never mutated
    combine = _combine(reduce_type, dtype)
    for i, v in zip(strided_indices(update_shape, window_strides, offset), update):
        out[i] = combine(out[i], v)
    return out
