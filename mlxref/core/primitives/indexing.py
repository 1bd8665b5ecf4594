"""Primitives that read or write elements at computed positions.

Read alongside: mlx/primitives.h (``Slice``, ``SliceUpdate``, ``Gather``,
``GatherAxis``, ``Scatter``, ``MaskedScatter``) and mlx/backend/cpu/indexing.cpp
for what their ``eval`` does.

Positions are flat row-major offsets: a strided window is ``strided_indices``,
and an index array contributes ``index * stride`` of the axis it indexes.
Negative indices count from the end, as in MLX's kernels. An index outside its
axis is an ``IndexError`` here (MLX reads or writes out of bounds); each
primitive is told the name of the op that built it, for that message.
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..array import array
from .base import (
    Primitive,
    batch_size,
    gather_strided,
    make_array,
    move_batch_axis,
    rounding,
    row_major_strides,
    strided_indices,
)

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


def _index_offsets(a_shape, axes, index_arrays, op):
    """Flat offset in ``a`` selected by each position of the (same-shape) index arrays."""
    strides = row_major_strides(a_shape)
    n = math.prod(index_arrays[0].shape) if index_arrays else 1
    offsets = [0] * n
    for ax, idx in zip(axes, index_arrays):
        s = strides[ax]
        values = _wrapped(idx.data(), ax, a_shape[ax], op)
        offsets = [o + v * s for o, v in zip(offsets, values)]
    return offsets


def _index_error(op, mode, what="indices"):
    """MLX's refusal to differentiate with respect to integer indices (or a mask)."""
    return ValueError(
        f"[{op}] Cannot calculate {mode} with respect to {what}. "
        f"Use stop_gradient on {what} to stop gradients from being computed."
    )


def _zeros(shape, dtype):
    return ops.zeros(shape, dtype)


def _batch_positions(size, ndim, dtype):
    """``arange(size)`` laid along axis 0 of an ``ndim``-d array (size 1 elsewhere)."""
    return array._from_data(list(range(size)), (size,) + (1,) * (ndim - 1), dtype)


class _StridedWindow(Primitive):
    """What Slice and SliceUpdate share: the window ``start:stop:strides`` per axis."""

    abstract = True  # a family, not a primitive of its own

    def __init__(self, start_indices, end_indices, strides):
        self.start_indices = tuple(start_indices)
        self.end_indices = tuple(end_indices)
        self.strides = tuple(strides)

    def params(self):
        return {
            "start_indices": self.start_indices,
            "end_indices": self.end_indices,
            "strides": self.strides,
        }

    def _params(self):
        return self.start_indices, self.end_indices, self.strides

    def _window(self, shape):
        """The window's flat offset and per-axis flat strides in an array of ``shape``."""
        in_strides = row_major_strides(shape)
        offset = sum(s * k for s, k in zip(self.start_indices, in_strides))
        return offset, [st * k for st, k in zip(self.strides, in_strides)]


class Slice(_StridedWindow):
    """``a[start:stop:stride]`` on every axis.

    start/stop are already normalised the way ``slice.indices`` does it, so
    axis ``d`` takes ``len(range(start[d], stop[d], strides[d]))`` elements.
    """

    moves_elements = True


    def output_shapes(self, inputs):
        return [
            tuple(
                len(range(s, e, st))
                for s, e, st in zip(self.start_indices, self.end_indices, self.strides)
            )
        ]

    def eval(self, inputs):
        (x,) = inputs
        (shape,) = self.output_shapes(inputs)
        offset, strides = self._window(x.shape)
        return [gather_strided(x.data(), shape, strides, offset)]


    def vjp(self, primals, cotangents, argnums, outputs):
        # The cotangent goes back into the window it came from; elements the
        # slice skipped get zero (MLX: slice_update of zeros).
        (x,), (cot,) = primals, cotangents
        return [make_array(SliceUpdate(*self._params()), [_zeros(x.shape, cot.dtype), cot])]

    def jvp(self, primals, tangents, argnums):
        return [make_array(Slice(*self._params()), tangents)]

    def vmap(self, inputs, axes):
        # The whole batch axis, taken in order: start 0, stop its size, step 1.
        (x,), (ax,) = inputs, axes
        start, stop, strides = (list(p) for p in self._params())
        if ax is not None:
            start.insert(ax, 0)
            stop.insert(ax, x.shape[ax])
            strides.insert(ax, 1)
        return [make_array(Slice(start, stop, strides), [x])], [ax]


class SliceUpdate(_StridedWindow):
    """``src`` with the strided window ``start:stop:strides`` replaced by ``update``.

    Inputs: ``src`` and ``update``, already cast and broadcast to the window's shape.
    """

    moves_elements = True


    def eval(self, inputs):
        src, update = inputs
        offset, strides = self._window(src.shape)
        out = list(src.data())  # a copy: element lists are never mutated
        for i, v in zip(strided_indices(update.shape, strides, offset), update.data()):
            out[i] = v
        return [out]


    def vjp(self, primals, cotangents, argnums, outputs):
        # src: the cotangent, with the overwritten window zeroed;
        # update: the cotangent's window.
        src, update = primals
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i == 0:
                zeros = _zeros(update.shape, cot.dtype)
                grads.append(make_array(SliceUpdate(*self._params()), [cot, zeros]))
            else:
                grads.append(make_array(Slice(*self._params()), [cot]))
        return grads

    def jvp(self, primals, tangents, argnums):
        # The same update applied to the tangents (zeros for a constant input).
        src, update = primals
        given = dict(zip(argnums, tangents))
        dtype = tangents[0].dtype
        t_src = given[0] if 0 in given else _zeros(src.shape, dtype)
        t_upd = ops.astype(given[1], dtype) if 1 in given else _zeros(update.shape, dtype)
        return [make_array(SliceUpdate(*self._params()), [ops.astype(t_src, dtype), t_upd])]

    def vmap(self, inputs, axes):
        # src and update batched on one axis (src's if it has one; the unbatched
        # one broadcast along it), and the window spans all of that axis.
        (src, update), (src_ax, upd_ax) = inputs, axes
        start, stop, strides = (list(p) for p in self._params())
        if src_ax is None and upd_ax is None:
            return [make_array(SliceUpdate(start, stop, strides), [src, update])], [None]
        size = batch_size(inputs, axes)
        ax = upd_ax if src_ax is None else src_ax
        src = move_batch_axis(src, src_ax, size, ax)
        update = move_batch_axis(update, upd_ax, size, ax)
        start.insert(ax, 0)
        stop.insert(ax, size)
        strides.insert(ax, 1)
        return [make_array(SliceUpdate(start, stop, strides), [src, update])], [ax]


class Gather(Primitive):
    """``mlx::core::gather``: for each position of the broadcast index arrays, the
    window of shape ``slice_sizes`` that starts at those indices on ``axes``
    (and at 0 on the other axes).

    Inputs: ``a``, then one index array per axis, all of one shape. The output
    shape is ``index_shape + slice_sizes``.
    """

    moves_elements = True

    def __init__(self, axes, slice_sizes, op="gather"):
        self.axes = tuple(axes)
        self.slice_sizes = tuple(slice_sizes)
        self.op = op  # only for the out-of-bounds message

    def params(self):
        return {"axes": self.axes, "slice_sizes": self.slice_sizes}

    def output_shapes(self, inputs):
        index_shape = inputs[1].shape if len(inputs) > 1 else ()
        return [tuple(index_shape) + self.slice_sizes]

    def eval(self, inputs):
        a, indices = inputs[0], inputs[1:]
        window = strided_indices(self.slice_sizes, row_major_strides(a.shape))
        if not window:
            return [[]]
        bases = _index_offsets(a.shape, self.axes, indices, self.op)
        data = a.data()
        return [[data[b + w] for b in bases for w in window]]

    def vjp(self, primals, cotangents, argnums, outputs):
        # Every window read adds its cotangent back where it was read from:
        # a scatter-*add* into zeros, so an index read twice gets both.
        a, indices = primals[0], primals[1:]
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i > 0:
                raise _index_error("gather", "VJP")
            zeros = _zeros(a.shape, cot.dtype)
            grads.append(make_array(Scatter(self.axes, "sum"), [zeros, *indices, cot]))
        return grads

    def jvp(self, primals, tangents, argnums):
        if list(argnums) != [0]:
            raise _index_error("gather", "JVP")
        return [make_array(Gather(self.axes, self.slice_sizes), [tangents[0], *primals[1:]])]

    def vmap(self, inputs, axes):
        a, indices = inputs[0], list(inputs[1:])
        a_ax, idx_axes = axes[0], list(axes[1:])
        gather_axes = list(self.axes)
        slice_sizes = list(self.slice_sizes)
        batched_idx = [ax for ax in idx_axes if ax is not None]
        if a_ax is None and not batched_idx:
            return [self._gather(a, indices, gather_axes, slice_sizes)], [None]
        size = batch_size(inputs, axes)
        if a_ax is not None:
            gather_axes = [d + 1 if d >= a_ax else d for d in gather_axes]
        if not batched_idx:
            # Only the source: its batch axis is one more (whole) window axis,
            # which lands after the index axes in the output.
            slice_sizes.insert(a_ax, size)
            out = self._gather(a, indices, gather_axes, slice_sizes)
            return [out], [len(indices[0].shape if indices else ()) + a_ax]
        # Batched indices: every index array batched on one axis (unbatched ones
        # broadcast along it); the output's index axes carry the batch.
        out_ax = batched_idx[0]
        indices = [move_batch_axis(x, ax, size, out_ax) for x, ax in zip(indices, idx_axes)]
        if a_ax is None:
            return [self._gather(a, indices, gather_axes, slice_sizes)], [out_ax]
        # Both: example b reads from slice b of the source, i.e. one more index
        # array, b itself, on the source's batch axis (window 1, squeezed away).
        idx_ndim = indices[0].ndim
        positions = _batch_positions(size, idx_ndim, indices[0].dtype)
        positions = ops.broadcast_to(ops.moveaxis(positions, 0, out_ax), indices[0].shape)
        slice_sizes.insert(a_ax, 1)
        out = self._gather(a, indices + [positions], gather_axes + [a_ax], slice_sizes)
        return [ops.squeeze(out, idx_ndim + a_ax)], [out_ax]

    def _gather(self, a, indices, axes, slice_sizes):
        return make_array(Gather(axes, slice_sizes, self.op), [a, *indices])


class GatherAxis(Primitive):
    """``take_along_axis``: ``out[..., i, ...] = a[..., indices[..., i, ...], ...]`` on ``axis``.

    Inputs: ``a`` and ``indices``, broadcast against each other on every axis but ``axis``.
    """

    moves_elements = True

    def __init__(self, axis, op="take_along_axis"):
        self.axis = axis
        self.op = op

    def params(self):
        return {"axis": self.axis}

    def output_shapes(self, inputs):
        return [inputs[1].shape]

    def eval(self, inputs):
        a, indices = inputs
        strides = row_major_strides(a.shape)
        base_strides = [0 if d == self.axis else s for d, s in enumerate(strides)]
        bases = strided_indices(indices.shape, base_strides)
        values = _wrapped(indices.data(), self.axis, a.shape[self.axis], self.op)
        s = strides[self.axis]
        data = a.data()
        return [[data[b + v * s] for b, v in zip(bases, values)]]

    def vjp(self, primals, cotangents, argnums, outputs):
        # A scatter-add of the cotangent into zeros (MLX uses ScatterAxis; here
        # it is a Scatter over every axis: position p of the output was read
        # from a[p with axis replaced by indices[p]]).
        a, indices = primals
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i > 0:
                raise _index_error("gather_axis", "VJP")
            index_arrays = []
            for d, n in enumerate(indices.shape):
                if d == self.axis:
                    index_arrays.append(indices)
                    continue
                shape = [1] * indices.ndim
                shape[d] = n
                positions = array._from_data(list(range(n)), tuple(shape), indices.dtype)
                index_arrays.append(ops.broadcast_to(positions, indices.shape))
            updates = ops.reshape(cot, cot.shape + (1,) * a.ndim)
            axes = list(range(a.ndim))
            zeros = _zeros(a.shape, cot.dtype)
            grads.append(make_array(Scatter(axes, "sum"), [zeros, *index_arrays, updates]))
        return grads

    def jvp(self, primals, tangents, argnums):
        if list(argnums) != [0]:
            raise _index_error("gather_axis", "JVP")
        (t,), indices = tangents, primals[1]
        return [make_array(GatherAxis(self.axis), [t, indices])]

    def vmap(self, inputs, axes):
        # Source and indices batched on axis 0 (the unbatched one broadcast
        # along it, as they must match on every axis but ``axis``).
        (a, indices), (a_ax, idx_ax) = inputs, axes
        if a_ax is None and idx_ax is None:
            return [make_array(GatherAxis(self.axis, self.op), [a, indices])], [None]
        size = batch_size(inputs, axes)
        a = move_batch_axis(a, a_ax, size, 0)
        indices = move_batch_axis(indices, idx_ax, size, 0)
        return [make_array(GatherAxis(self.axis + 1, self.op), [a, indices])], [0]


class Scatter(Primitive):
    """``mlx::core::scatter``: the inverse of ``Gather``. For each position of the
    index arrays, the window ``updates[position]`` is written into ``a`` starting
    at those indices on ``axes``; later positions win where windows overlap.

    Inputs: ``a``, one index array per axis (all one shape), and ``updates`` of
    shape ``index_shape + window_shape`` (``window_shape`` has ``a.ndim`` axes).
    ``reduce_type`` "none" replaces; "sum" adds (what a gather's vjp needs).
    """

    def __init__(self, axes, reduce_type="none", op="scatter"):
        if reduce_type not in ("none", "sum"):
            raise ValueError(f"[scatter] Unknown reduce type {reduce_type!r}.")
        self.axes = tuple(axes)
        self.reduce_type = reduce_type
        self.op = op

    def params(self):
        return {"reduce_type": self.reduce_type, "axes": self.axes}

    def eval(self, inputs):
        a, indices, updates = inputs[0], inputs[1:-1], inputs[-1]
        out = list(a.data())
        index_ndim = indices[0].ndim if indices else 0
        window_shape = updates.shape[index_ndim:]
        strides = row_major_strides(a.shape)
        window = strided_indices(window_shape, strides)
        if not window:
            return [out]
        bases = _index_offsets(a.shape, self.axes, indices, self.op)
        upd = updates.data()
        n = len(window)
        add = self.reduce_type == "sum"
        # MLX's scatter adds in the array's dtype (backend/cpu/indexing.cpp), so
        # updates that meet at one position are rounded after each addition.
        rounded = rounding(a.dtype) if add else None
        for p, b in enumerate(bases):
            for k, w in enumerate(window):
                if rounded is not None:
                    out[b + w] = rounded(out[b + w] + upd[p * n + k])
                else:
                    out[b + w] = out[b + w] + upd[p * n + k] if add else upd[p * n + k]
        return [out]

    def vjp(self, primals, cotangents, argnums, outputs):
        # a: "sum" keeps every element of a, so the cotangent passes through;
        #    "none" overwrote the windows, so they get zero.
        # updates: the cotangent read back from each window (a gather). As in
        #    MLX, when windows overlap under "none" every update gets the
        #    cotangent, even the ones a later update overwrote.
        indices, updates = primals[1:-1], primals[-1]
        (cot,) = cotangents
        index_ndim = indices[0].ndim if indices else 0
        window = updates.shape[index_ndim:]
        grads = []
        for i in argnums:
            if i == 0:
                if self.reduce_type == "sum":
                    grads.append(cot)
                else:
                    zeros = _zeros(updates.shape, cot.dtype)
                    grads.append(make_array(Scatter(self.axes, "none"), [cot, *indices, zeros]))
            elif i == len(primals) - 1:
                # MLX takes the window from the cotangent's shape with the indexed
                # axes set to 1; for an update that spans a slice after the index
                # arrays (``x[idx, 0:2] = v``) that window is too small and MLX
                # fails with a reshape error. The update's own window is right.
                grads.append(make_array(Gather(self.axes, window), [cot, *indices]))
            else:
                raise _index_error("scatter", "VJP")
        return grads

    def jvp(self, primals, tangents, argnums):
        # MLX 0.32 has no rule here ("[scatter] JVP not yet implemented"). The
        # scatter is linear in (a, updates), so its jvp is the same scatter of
        # the tangents, zeros standing in for an input without one.
        a, indices, updates = primals[0], primals[1:-1], primals[-1]
        given = dict(zip(argnums, tangents))
        if any(0 < i < len(primals) - 1 for i in given):
            raise _index_error("scatter", "JVP")
        dtype = tangents[0].dtype
        t_a = given[0] if 0 in given else _zeros(a.shape, dtype)
        last = len(primals) - 1
        t_u = ops.astype(given[last], dtype) if last in given else _zeros(updates.shape, dtype)
        prim = Scatter(self.axes, self.reduce_type)
        return [make_array(prim, [ops.astype(t_a, dtype), *indices, t_u])]

    def vmap(self, inputs, axes):
        # Everything batched on axis 0 (unbatched inputs broadcast along it),
        # and one more index array, the example's own number, on that axis:
        # example b writes only into slice b of the batched ``a``. (MLX's rule
        # loses track of the batch axis of ``a`` when it is 2 or more, MLX
        # #4321; here every batch axis is moved to the front first.)
        a, indices, updates = inputs[0], list(inputs[1:-1]), inputs[-1]
        if all(ax is None for ax in axes):
            return [make_array(Scatter(self.axes, self.reduce_type, self.op), inputs)], [None]
        size = batch_size(inputs, axes)
        a = move_batch_axis(a, axes[0], size, 0)
        indices = [move_batch_axis(x, ax, size, 0) for x, ax in zip(indices, axes[1:-1])]
        index_shape = indices[0].shape if indices else (size,)
        positions = _batch_positions(size, len(index_shape), indices[0].dtype if indices
                                     else _dt.int32)
        indices.append(ops.broadcast_to(positions, index_shape))
        # updates: (batch,) + index shape + a window with a size-1 batch axis.
        updates = ops.expand_dims(move_batch_axis(updates, axes[-1], size, 0), len(index_shape))
        prim = Scatter([d + 1 for d in self.axes] + [0], self.reduce_type, self.op)
        return [make_array(prim, [a, *indices, updates])], [0]


class MaskedScatter(Primitive):
    """``a[mask] = values``: the positions where ``mask`` is true take the elements
    of ``values`` in row-major order, batch by batch along axis 0.

    Inputs: ``a``, ``mask`` (bool, a's shape) and ``values`` (leading axis the batch).
    """

    moves_elements = True

    def eval(self, inputs):
        a, mask, values = inputs
        out = list(a.data())
        batches = a.shape[0] if a.ndim else 1
        if batches == 0:
            return [out]
        m, v = mask.data(), values.data()
        per_mask = len(m) // batches
        per_value = len(v) // batches
        for b in range(batches):
            used = 0
            for i in range(b * per_mask, (b + 1) * per_mask):
                if m[i]:
                    if used >= per_value:
                        raise RuntimeError(
                            "[MaskedScatter::eval_cpu] Source does not have enough "
                            "elements for mask."
                        )
                    out[i] = v[b * per_value + used]
                    used += 1
        return [out]

    def vjp(self, primals, cotangents, argnums, outputs):
        # a: the cotangent where the mask is false (masked positions were
        #    overwritten). values: value k of a batch went to the k-th true
        #    position of that batch, so it collects the cotangent there.
        a, mask, values = primals
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i == 0:
                grads.append(ops.where(mask, array(0, cot.dtype), cot))
            elif i == 2:
                grads.append(self._values_vjp(a, mask, values, cot))
            else:
                raise _index_error("masked_scatter", "VJP", "mask")
        return grads

    @staticmethod
    def _values_vjp(a, mask, values, cot):
        if values.size == 0:
            return _zeros(values.shape, cot.dtype)
        batches = a.shape[0] if a.ndim else 1
        per_mask = mask.size // batches if batches else 0
        per_value = values.size // batches if batches else 0
        m = ops.reshape(mask, (batches, per_mask))
        # The rank of each true position within its batch (exclusive cumsum),
        # offset to that batch's values; unmasked positions point at 0 and add 0.
        rank = ops.cumsum(ops.astype(m, _dt.int32), axis=1, inclusive=False)
        first = array._from_data([b * per_value for b in range(batches)], (batches, 1), _dt.int32)
        target = ops.where(m, ops.add(rank, first), array(0, _dt.int32))
        contrib = ops.where(m, ops.reshape(cot, (batches, per_mask)), array(0, cot.dtype))
        flat = make_array(Scatter([0], "sum"), [
            _zeros((values.size,), cot.dtype),
            ops.reshape(target, (-1,)),
            ops.reshape(contrib, (-1, 1)),
        ])
        return ops.reshape(flat, values.shape)

    def jvp(self, primals, tangents, argnums):
        # The same masked scatter of the tangents (zeros for an input without one).
        a, mask, values = primals
        given = dict(zip(argnums, tangents))
        if 1 in given:
            raise ValueError("[masked_scatter] invalid arg index in JVP")
        dtype = tangents[0].dtype
        t_a = given[0] if 0 in given else _zeros(a.shape, dtype)
        t_v = ops.astype(given[2], dtype) if 2 in given else _zeros(values.shape, dtype)
        return [make_array(MaskedScatter(), [ops.astype(t_a, dtype), mask, t_v])]

    def vmap(self, inputs, axes):
        # The primitive already works batch by batch along axis 0: put the vmap
        # axis in front of it (unbatched inputs broadcast), merge the two, and
        # split them again afterwards.
        if all(ax is None for ax in axes):
            return [make_array(MaskedScatter(), inputs)], [None]
        size = batch_size(inputs, axes)
        a, mask, values = (ops.flatten(move_batch_axis(x, ax, size, 0), 0, 1)
                           for x, ax in zip(inputs, axes))
        out = make_array(MaskedScatter(), [a, mask, values])
        return [ops.reshape(out, (size, -1) + a.shape[1:])], [0]
