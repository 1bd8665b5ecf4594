"""Slices: a window of an array, at fixed or at computed starts.

Read alongside: mlx/backend/common/slicing.cpp (``prepare_slice``: the
window's offset and strides, then ``slice``) and mlx/backend/cpu/primitives.cpp
(``compute_dynamic_offset``, ``DynamicSlice::eval_cpu``,
``DynamicSliceUpdate::eval_cpu``).

MLX's slice is a view; mlxref gathers the window's elements into a new list
(``copy.gather_strided``). The starts of a dynamic slice come from an integer
array: one outside the array is an ``IndexError`` here, where MLX reads or
writes out of bounds.
Read next: mlxref/core/backend/cpu/indexing.py (slice updates, gather, scatter).
"""

from .copy import gather_strided, row_major_strides, write_strided


def prepare_slice(shape, start_indices, strides):
    """The window's flat offset and per-axis flat strides in an array of ``shape``."""
    in_strides = row_major_strides(shape)
    offset = sum(s * k for s, k in zip(start_indices, in_strides))
    return offset, [st * k for st, k in zip(strides, in_strides)]


def slice_data(data, shape, start_indices, strides, out_shape):
    """The elements of the window ``start_indices::strides`` of ``out_shape``."""
    offset, window_strides = prepare_slice(shape, start_indices, strides)
    return gather_strided(data, out_shape, window_strides, offset)


def dynamic_offset(shape, axes, starts, window, op):
    """The flat offset and strides of the window of shape ``window`` that
    starts at ``starts`` on ``axes`` (at 0 on the others); an IndexError
    naming ``op`` when it does not fit."""
    first = [0] * len(shape)
    for ax, v in zip(axes, starts):
        if v < 0 or v + window[ax] > shape[ax]:
            raise IndexError(
                f"[{op}] Start index {v} on axis {ax} does not fit a window of "
                f"size {window[ax]} in an axis of size {shape[ax]}."
            )
        first[ax] = v
    strides = row_major_strides(shape)
    return sum(s * k for s, k in zip(first, strides)), strides


def dynamic_slice(data, shape, axes, starts, slice_size, op):
    """The window of ``slice_size`` at ``starts`` on ``axes``."""
    offset, strides = dynamic_offset(shape, axes, starts, slice_size, op)
    return gather_strided(data, slice_size, strides, offset)


def dynamic_slice_update(data, shape, update, update_shape, axes, starts, op):
    """``data`` with the window of ``update_shape`` at ``starts`` on ``axes``
    replaced by ``update``."""
    offset, strides = dynamic_offset(shape, axes, starts, update_shape, op)
    return write_strided(list(data), update, update_shape, strides, offset)
