"""Primitives that move elements without changing them: broadcast, reshape, ...

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Broadcast``,
``Reshape``, ``Transpose``, ``Concatenate``, ``Split``, ``Pad``, ...).
Read next: mlxref/core/backend/cpu/copy.py (their kernels: copies along
strides), mlxref/core/primitives/indexing.py (slices, gather, scatter).
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.copy import (broadcast, concatenate, gather_strided, pad, split, transpose,
                               view)
from ..printing import format_shape
from .base import (Primitive, SharedBuffer, batch_size, make_array, make_arrays,
                   move_batch_axis, multilinear_jvp, vmap_in_place)
from .indexing import Scatter, Slice


class Broadcast(Primitive):
    """Repeat an array along new or size-1 axes to reach ``shape``.

    **This vjp is the one place in mlxref where broadcasting is undone.** The
    ops layer broadcasts the inputs of every elementwise op with an explicit
    ``Broadcast`` node, so ``Add.vjp``, ``Multiply.vjp``, ... hand back
    cotangents of the broadcast shape and never reduce anything themselves.
    The reduction happens here, once: the cotangent is summed over the axes
    the broadcast added in front and over the axes it stretched from size 1
    (kept, with size 1), which gives exactly the input's shape. No other rule
    repeats it.

    Under ``compile(..., shapeless=True)`` (MLX's dynamic tracing) the ops
    broadcast with the other operands as extra inputs, each behind a
    StopGradient: the output shape is then theirs and the first input's
    broadcast together, read again whenever the trace is replayed on new
    shapes. Those inputs lend only their shapes (``BroadcastAxes`` holds the
    rules for that form).
    """

    view = True  # MLX's broadcast is a view of its input's buffer (stride 0)
    moves_elements = True

    def __init__(self, shape):
        self.shape = tuple(shape)

    def params(self):
        return {"shape": self.shape}

    def output_shapes(self, inputs):
        if len(inputs) > 1:  # shapeless compile's form: the operands' common shape
            return BroadcastAxes(()).output_shapes(inputs)
        if ops.broadcast_shapes(inputs[0].shape, self.shape) != self.shape:
            raise ValueError("[Broadcast] Unable to infer broadcast shape")
        return [self.shape]

    def eval(self, inputs):
        return [broadcast(inputs[0].data(), inputs[0].shape, self.output_shapes(inputs)[0])]

    def vjp(self, primals, cotangents, argnums, outputs):
        if len(primals) > 1:
            return BroadcastAxes(()).vjp(primals, cotangents, argnums, outputs)
        # Unbroadcasting (MLX: ``broadcast_vjp``). Every output element copied
        # from one input element, so that element's cotangent is the sum of
        # the cotangents of all its copies.
        # BEGIN TASK 4.3: unbroadcasting: Broadcast's vjp
        (x,), (cot,) = primals, cotangents
        lead = cot.ndim - x.ndim
        stretched = [lead + d for d, n in enumerate(x.shape) if n != cot.shape[lead + d]]
        if stretched:  # axes stretched from size 1: summed, and kept as size 1
            cot = ops.sum(cot, axis=stretched, keepdims=True)
        return [ops.sum(cot, axis=list(range(lead)))]  # new leading axes: summed away
        # END TASK 4.3

    def jvp(self, primals, tangents, argnums):
        if len(primals) > 1:
            return BroadcastAxes(()).jvp(primals, tangents, argnums)
        return [ops.broadcast_to(tangents[0], self.shape)]

    def vmap(self, inputs, axes):
        if len(inputs) > 1:
            return BroadcastAxes(()).vmap(inputs, axes)
        # The example's axes are right-aligned in ``shape``: the batch axis
        # stays where it is, shifted by the axes the broadcast adds in front.
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [ops.broadcast_to(x, self.shape)], [None]
        lead = len(self.shape) - (x.ndim - 1)
        out_ax = ax + lead
        shape = self.shape[:out_ax] + (x.shape[ax],) + self.shape[out_ax:]
        return [ops.broadcast_to(x, shape)], [out_ax]


class BroadcastAxes(Primitive):
    """The first input broadcast against the others, except on ``ignore_axes``
    (negative: counted from the end), where it keeps its own sizes.

    Built only while ``compile(..., shapeless=True)`` traces (MLX's
    ``BroadcastAxes``, and ``Broadcast`` with several inputs, which defers its
    rules here): the inputs after the first come through a StopGradient and
    lend only their shapes, so the output shape follows the inputs whenever
    the trace is replayed. Matmul broadcasts its batch axes this way,
    ignoring the two matrix axes.
    """

    view = True
    moves_elements = True

    def __init__(self, ignore_axes):
        self.ignore_axes = tuple(ignore_axes)

    def params(self):
        return {"ignore_axes": self.ignore_axes}

    def output_shapes(self, inputs):
        shape = ()
        for x in inputs:
            kept = list(x.shape)
            for ax in reversed(self.ignore_axes):
                del kept[x.ndim + ax]
            shape = ops.broadcast_shapes(shape, tuple(kept))
        shape = list(shape)
        dims = len(self.ignore_axes) + len(shape)
        for ax in self.ignore_axes:
            shape.insert(dims + ax, inputs[0].shape[ax])
        return [tuple(shape)]

    def eval(self, inputs):
        return [broadcast(inputs[0].data(), inputs[0].shape, self.output_shapes(inputs)[0])]

    def vjp(self, primals, cotangents, argnums, outputs):
        # The first input's cotangent is Broadcast's (summed over what was
        # broadcast); the others lent only their shapes.
        (unbroadcast,) = Broadcast(cotangents[0].shape).vjp(
            primals[:1], cotangents, [0], outputs)
        return [unbroadcast if i == 0 else ops.zeros_like(primals[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        t = tangents[argnums.index(0)] if 0 in argnums else ops.zeros_like(primals[0])
        return [make_array(self, [t] + list(primals[1:]))]

    def vmap(self, inputs, axes):
        # Every batched input gets the batch axis first, in front of as many
        # axes as the widest example has; unbatched inputs stay right-aligned.
        ndim = 1 + max(x.ndim - (ax is not None) for x, ax in zip(inputs, axes))
        moved = []
        for x, ax in zip(inputs, axes):
            if ax is not None:
                extra = ndim - x.ndim
                if extra:
                    x = ops.expand_dims(x, list(range(extra)))
                    ax += extra
                x = ops.moveaxis(x, ax, 0)
            moved.append(x)
        batched = any(ax is not None for ax in axes)
        return [make_array(self, moved)], [0 if batched else None]


def reshape_output_shape(size, shape):
    """MLX's ``Reshape::output_shape``: infer one -1, then check the size."""
    shape = list(shape)
    known, infer = 1, None
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise ValueError("[reshape] Reshape can only infer one dimension.")
            infer = i
        else:
            known *= d
    if infer is not None:
        if known == 0:
            raise ValueError("[reshape] Cannot infer the shape of an empty array")
        shape[infer] = size // known
        known *= shape[infer]
    # MLX accepts e.g. (-2, -3) for size 6 and makes an array with negative
    # dimensions; mlxref refuses any negative dimension with the size message.
    if known != size or any(d < 0 for d in shape):
        raise ValueError(
            f"[reshape] Cannot reshape array of size {size} into shape {format_shape(shape)}."
        )
    return tuple(shape)


class Reshape(SharedBuffer):
    """The same elements in row-major order under a new shape."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def params(self):
        return {"shape": self.shape}

    def output_shapes(self, inputs):
        # Checked again here, as MLX's Reshape::output_shape: a shapeless
        # compile replays the node on inputs of another size.
        return [reshape_output_shape(inputs[0].size, self.shape)]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.reshape(cotangents[0], primals[0].shape)]

    def jvp(self, primals, tangents, argnums):
        return [ops.reshape(tangents[0], self.shape)]

    def vmap(self, inputs, axes):
        # Row-major order only makes sense with the batch axis first.
        # BEGIN TASK 5.3: vmap of reshape
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [ops.reshape(x, self.shape)], [None]
        x = ops.moveaxis(x, ax, 0)
        return [ops.reshape(x, (x.shape[0],) + self.shape)], [0]
        # END TASK 5.3


class Flatten(SharedBuffer):
    """Merge the axes ``start_axis..end_axis`` (inclusive) into one."""

    def __init__(self, start_axis, end_axis):
        self.start_axis = start_axis
        self.end_axis = end_axis

    def params(self):
        return {"start_axis": self.start_axis, "end_axis": self.end_axis}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        s, e = self.start_axis, self.end_axis
        return [shape[:s] + (math.prod(shape[s : e + 1]),) + shape[e + 1 :]]

    def vjp(self, primals, cotangents, argnums, outputs):
        # MLX unflattens the merged axis; reshaping to the input's shape is the same.
        return [ops.reshape(cotangents[0], primals[0].shape)]

    def jvp(self, primals, tangents, argnums):
        return [ops.flatten(tangents[0], self.start_axis, self.end_axis)]

    def vmap(self, inputs, axes):
        # A batch axis before or after the merged range just shifts it (or
        # is shifted by it); one inside the range is moved to the front first.
        (x,), (ax,) = inputs, axes
        s, e = self.start_axis, self.end_axis
        if ax is None:
            return [ops.flatten(x, s, e)], [None]
        if ax <= s:
            return [ops.flatten(x, s + 1, e + 1)], [ax]
        if ax <= e:
            return [ops.flatten(ops.moveaxis(x, ax, 0), s + 1, e + 1)], [0]
        return [ops.flatten(x, s, e)], [ax - (e - s)]


class Unflatten(SharedBuffer):
    """Split axis ``axis`` into the axes ``shape`` (MLX's ``Unflatten``; the
    inverse of Flatten: the elements stay where they are)."""

    def __init__(self, axis, shape):
        self.axis = axis
        self.shape = tuple(shape)

    def params(self):
        return {"axis": self.axis, "shape": self.shape}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [shape[: self.axis] + self.shape + shape[self.axis + 1 :]]

    def vjp(self, primals, cotangents, argnums, outputs):
        # MLX flattens the new axes back into one.
        return [ops.flatten(cotangents[0], self.axis, self.axis + len(self.shape) - 1)]

    jvp = multilinear_jvp

    def vmap(self, inputs, axes):
        # A batch axis at or before ``axis`` shifts it; one after it is shifted
        # by the new axes.
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [make_array(self, [x])], [None]
        if ax <= self.axis:
            return [make_array(Unflatten(self.axis + 1, self.shape), [x])], [ax]
        return [make_array(self, [x])], [ax + len(self.shape) - 1]


class Transpose(Primitive):
    """Permute the axes: output axis ``i`` is input axis ``axes[i]``."""

    view = True  # MLX's transpose is a view of its input's buffer
    moves_elements = True

    def __init__(self, axes):
        self.axes = tuple(axes)

    def params(self):
        return {"axes": self.axes}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [tuple(shape[ax] for ax in self.axes)]

    def eval(self, inputs):
        return [transpose(inputs[0].data(), inputs[0].shape, self.axes)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # The inverse permutation: input axis axes[i] came from output axis i.
        inverse = [0] * len(self.axes)
        for i, ax in enumerate(self.axes):
            inverse[ax] = i
        return [ops.transpose(cotangents[0], inverse)]

    def jvp(self, primals, tangents, argnums):
        return [ops.transpose(tangents[0], self.axes)]

    def vmap(self, inputs, axes):
        # Keep the batch axis in place and permute the others around it.
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [ops.transpose(x, self.axes)], [None]
        perm = [d + 1 if d >= ax else d for d in self.axes]
        perm.insert(ax, ax)
        return [ops.transpose(x, perm)], [ax]


class ExpandDims(SharedBuffer):
    """Insert size-1 axes at the (sorted, non-negative) output positions ``axes``."""

    def __init__(self, axes):
        self.axes = tuple(axes)

    def params(self):
        return {"axes": self.axes}

    def output_shapes(self, inputs):
        shape = list(inputs[0].shape)
        for ax in self.axes:
            shape.insert(ax, 1)
        return [tuple(shape)]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.squeeze(cotangents[0], self.axes)]

    def jvp(self, primals, tangents, argnums):
        return [ops.expand_dims(tangents[0], self.axes)]

    def vmap(self, inputs, axes):
        # ``axes`` are sorted positions in the example's output; each one
        # lands before the batch axis (pushing it right) or after it (shifted).
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [ops.expand_dims(x, self.axes)], [None]
        new_axes = []
        for d in self.axes:
            if d < ax:
                new_axes.append(d)
                ax += 1
            else:
                new_axes.append(d + 1)
        return [ops.expand_dims(x, new_axes)], [ax]


class Squeeze(SharedBuffer):
    """Remove the (sorted, non-negative) size-1 axes ``axes``."""

    def __init__(self, axes):
        self.axes = tuple(axes)

    def params(self):
        return {"axes": self.axes}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [tuple(n for d, n in enumerate(shape) if d not in self.axes)]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.expand_dims(cotangents[0], self.axes)]

    def jvp(self, primals, tangents, argnums):
        return [ops.squeeze(tangents[0], self.axes)]

    def vmap(self, inputs, axes):
        # ``axes`` are the example's input axes: those before the batch axis
        # pull it left, the others are shifted past it.
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [ops.squeeze(x, self.axes)], [None]
        new_axes = [d + 1 if d >= ax else d for d in self.axes]
        out_ax = ax - sum(1 for d in self.axes if d < ax)
        return [ops.squeeze(x, new_axes)], [out_ax]


class Concatenate(Primitive):
    """Join same-dtype arrays along ``axis``; all other axes match."""

    moves_elements = True

    def __init__(self, axis):
        self.axis = axis

    def params(self):
        return {"axis": self.axis}

    def output_shapes(self, inputs):
        shape = list(inputs[0].shape)
        shape[self.axis] = sum(x.shape[self.axis] for x in inputs)
        return [tuple(shape)]

    def eval(self, inputs):
        return [concatenate([x.data() for x in inputs], [x.shape for x in inputs], self.axis)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # Input i owns the window [offsets[i], offsets[i + 1]) of the axis.
        (cot,) = cotangents
        offsets = [0]
        for x in primals:
            offsets.append(offsets[-1] + x.shape[self.axis])
        grads = []
        for i in argnums:
            start, stop = [0] * cot.ndim, list(cot.shape)
            start[self.axis], stop[self.axis] = offsets[i], offsets[i + 1]
            grads.append(make_array(Slice(start, stop, [1] * cot.ndim), [cot]))
        return grads

    def jvp(self, primals, tangents, argnums):
        # Inputs without a tangent contribute zeros of their shape.
        given = dict(zip(argnums, tangents))
        dtype = tangents[0].dtype
        parts = [
            given[i] if i in given else ops.zeros(x.shape, dtype) for i, x in enumerate(primals)
        ]
        return [ops.concatenate(parts, self.axis)]

    def vmap(self, inputs, axes):
        # Every input batched on axis 0 (unbatched ones broadcast along it),
        # then one concatenation along the shifted axis.
        if all(ax is None for ax in axes):
            return [ops.concatenate(list(inputs), self.axis)], [None]
        size = batch_size(inputs, axes)
        front = [move_batch_axis(x, ax, size) for x, ax in zip(inputs, axes)]
        return [ops.concatenate(front, self.axis + 1)], [0]


class Split(Primitive):
    """Cut an array along ``axis`` at the sorted positions ``indices``: one output per piece."""

    moves_elements = True

    def __init__(self, indices, axis):
        self.indices = tuple(indices)
        self.axis = axis

    def params(self):
        return {"indices": self.indices, "axis": self.axis}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        cuts = (0,) + self.indices + (shape[self.axis],)
        return [shape[: self.axis] + (stop - start,) + shape[self.axis + 1 :]
                for start, stop in zip(cuts[:-1], cuts[1:])]

    def eval(self, inputs):
        (x,) = inputs
        return split(x.data(), x.shape, self.axis, self.output_shapes(inputs))

    def vjp(self, primals, cotangents, argnums, outputs):
        # One cotangent per piece (the transform fills pieces nobody used with
        # zeros), joined back in order.
        return [ops.concatenate(list(cotangents), self.axis)]

    def jvp(self, primals, tangents, argnums):
        return make_arrays(Split(self.indices, self.axis), tangents)

    def vmap(self, inputs, axes):
        # The same cuts on the axis as it sits in the batched input; every
        # piece keeps the input's batch axis.
        (x,), (ax,) = inputs, axes
        axis = self.axis + 1 if ax is not None and ax <= self.axis else self.axis
        outs = make_arrays(Split(self.indices, axis), [x])
        return outs, [ax] * len(outs)


class Pad(Primitive):
    """Surround an array with a constant: inputs are the array and a 0-d pad value.

    ``low[i]`` and ``high[i]`` elements are added before and after axis ``axes[i]``.
    """

    moves_elements = True

    def __init__(self, axes, low_pad_size, high_pad_size):
        self.axes = tuple(axes)
        self.low_pad_size = tuple(low_pad_size)
        self.high_pad_size = tuple(high_pad_size)

    def params(self):
        return {
            "axes": self.axes,
            "low_pad_size": self.low_pad_size,
            "high_pad_size": self.high_pad_size,
        }

    def output_shapes(self, inputs):
        shape = list(inputs[0].shape)
        for ax, lo, hi in zip(self.axes, self.low_pad_size, self.high_pad_size):
            shape[ax] += lo + hi
        return [tuple(shape)]

    def eval(self, inputs):
        x, value = inputs
        (out_shape,) = self.output_shapes(inputs)
        return [pad(x.data(), x.shape, value.data()[0], out_shape, self.axes, self.low_pad_size)]

    def _inner(self, cot):
        """The window of the padded array where the input sits."""
        start, stop = [0] * cot.ndim, list(cot.shape)
        for ax, lo, hi in zip(self.axes, self.low_pad_size, self.high_pad_size):
            start[ax], stop[ax] = lo, cot.shape[ax] - hi
        return make_array(Slice(start, stop, [1] * cot.ndim), [cot])

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        value = primals[1]
        grads = []
        for i in argnums:
            if i == 0:
                grads.append(self._inner(cot))
            else:
                # The pad value fills every position outside the window.
                # MLX 0.32 has no rule for it (it hands back the array's
                # gradient, of the wrong shape); this is the true derivative.
                border = ops.subtract(ops.sum(cot), ops.sum(self._inner(cot)))
                grads.append(ops.reshape(border, value.shape))
        return grads

    def jvp(self, primals, tangents, argnums):
        # Pad the array's tangent with the pad value's tangent (zero when the
        # pad value is a constant, which is MLX's rule).
        x, value = primals
        given = dict(zip(argnums, tangents))
        dtype = tangents[0].dtype
        tx = given[0] if 0 in given else ops.zeros(x.shape, dtype)
        tv = ops.astype(given[1], dtype) if 1 in given else ops.zeros(value.shape, dtype)
        return [make_array(self, [tx, tv])]

    def vmap(self, inputs, axes):
        # A batched array: the same padding on its shifted axes.
        # A batched pad value: MLX refuses ("[Pad::vmap] Vmap over padding
        # value is not supported."); mlxref goes further and selects, per
        # example, between the padded array and that example's value.
        (x, value), (ax, vax) = inputs, axes
        if vax is None:
            if ax is None:
                pad_axes = self.axes
            else:
                pad_axes = tuple(d + 1 if d >= ax else d for d in self.axes)
            prim = Pad(pad_axes, self.low_pad_size, self.high_pad_size)
            return [make_array(prim, [x, value])], [ax]
        size = value.shape[vax]
        fill = ops.astype(ops.reshape(value, (size,)), x.dtype)  # one 0-d value per example
        zero = ops.zeros((), x.dtype)
        # The array padded with zeros, and a mask of where its elements sit.
        if ax is None:
            (padded,), _ = self.vmap([x, zero], [None, None])
            example = x.shape
        else:
            (padded,), _ = self.vmap([ops.moveaxis(x, ax, 0), zero], [0, None])
            example = x.shape[:ax] + x.shape[ax + 1 :]
        mask = make_array(self, [ops.ones(example, _dt.bool_), array(False)])
        fill = ops.reshape(fill, (size,) + (1,) * mask.ndim)
        return [ops.where(mask, padded, fill)], [0]


class View(Primitive):
    """``view(a, dtype)``: the same bytes read as another dtype (MLX's ``View``).

    The op (``mx.view``) has already worked out the shape: the last axis
    shrinks or grows by the ratio of the sizes. MLX defines no vjp or jvp
    for it (reinterpreted bits have no derivative), and neither does mlxref:
    both raise MLX's ``Not implemented for View <dtype>``.
    """

    def __init__(self, dtype):
        self.dtype = dtype

    @property
    def name(self):
        return f"View {self.dtype.name}"  # MLX's View::name()

    def params(self):
        return {"dtype": self.dtype}

    def output_shapes(self, inputs):
        (x,) = inputs
        ratio_in, ratio_out = x.dtype.size, self.dtype.size
        if not x.shape or ratio_in == ratio_out:
            return [x.shape]
        last = x.shape[-1] * ratio_in // ratio_out
        return [x.shape[:-1] + (last,)]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def vmap(self, inputs, axes):
        """MLX's View::vmap views the batched array. When the batch axis is the
        last one and the sizes differ, that would regroup bytes across
        examples, so it is moved to the front first (MLX's CPU result is
        the same: its view of a non-contiguous input copies it first)."""
        (x,), (ax,) = inputs, axes
        if ax is not None and ax == x.ndim - 1 and x.dtype.size != self.dtype.size:
            x, ax = ops.moveaxis(x, ax, 0), 0
        return [make_array(View(self.dtype), [x])], [ax]

    def eval(self, inputs):
        (x,) = inputs
        return [view(x.data(), x.dtype, self.dtype)]


class AsStrided(Primitive):
    """``as_strided``: a view of the flat (row-major) input with ``shape``,
    ``strides`` and ``offset``: output element ``index`` is input element
    ``offset + sum(index[d] * strides[d])`` (MLX's ``AsStrided``).

    The op flattens the input first (MLX's ``as_strided`` does, to force a
    row-major copy), so the strides count elements of that flat list. MLX
    reads past the buffer for an index outside it; the op refuses those.
    The vjp is MLX's: the cotangents added (scatter-add) at the indices an
    ``as_strided`` of ``arange`` gives, so an element read twice gets both.
    MLX has no vmap rule for it (its vmap raises); mlxref's puts the batch
    axis first and views each example's flat block: one more leading axis
    with the block's length as its stride.
    """

    view = True  # MLX's as_strided is a view of its input's buffer
    moves_elements = True

    def __init__(self, shape, strides, offset):
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.offset = offset

    def params(self):
        return {"shape": self.shape, "strides": self.strides, "offset": self.offset}

    def output_shapes(self, inputs):
        return [self.shape]

    def eval(self, inputs):
        return [gather_strided(inputs[0].data(), self.shape, self.strides, self.offset)]

    def vjp(self, primals, cotangents, argnums, outputs):
        (x,), (cot,) = primals, cotangents
        idx = ops.arange(x.size)
        idx = ops.reshape(make_array(AsStrided(self.shape, self.strides, self.offset), [idx]), (-1,))
        zeros = ops.zeros((x.size,), x.dtype)
        flat = ops.reshape(cot, (cot.size, 1))
        return [ops.reshape(make_array(Scatter([0], "sum"), [zeros, idx, flat]), x.shape)]

    jvp = multilinear_jvp

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [make_array(self, [x])], [None]
        x = ops.moveaxis(x, ax, 0)
        n = x.size // x.shape[0] if x.shape[0] else 0
        prim = AsStrided((x.shape[0],) + self.shape, (n,) + self.strides, self.offset)
        return [make_array(prim, [ops.flatten(x)])], [0]


class Contiguous(SharedBuffer):
    """``contiguous``: a row-major copy (MLX's ``Contiguous``). mlxref's element
    lists are always row-major, so it is the identity on the values; the node
    stays, as in MLX, and its rules pass everything through."""

    def __init__(self, allow_col_major=False):
        self.allow_col_major = allow_col_major

    def params(self):
        return {"allow_col_major": self.allow_col_major}

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0]]

    def jvp(self, primals, tangents, argnums):
        return [tangents[0]]

    vmap = vmap_in_place
