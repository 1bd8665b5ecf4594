"""Primitives that read or write elements at computed positions: slices,
dynamic slices, gather, scatter.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Slice``,
``SliceUpdate``, ``DynamicSlice``, ``DynamicSliceUpdate``, ``Gather``,
``GatherAxis``, ``Scatter``, ``MaskedScatter``). Each primitive is told the
name of the op that built it, for its out-of-bounds message.
Read next: mlxref/core/backend/cpu/indexing.py and slicing.py (their kernels).
"""

from .. import dtypes as _dt
from .. import ops
from ..array import array, from_data
from ..backend.cpu.indexing import gather, gather_axis, masked_scatter, scatter, slice_update
from ..backend.cpu.slicing import dynamic_slice, dynamic_slice_update, slice_data
from .base import (Primitive, batch_size, make_array, move_batch_axis, multilinear_jvp,
                   no_gradient_error)

REDUCE_TYPES = ("none", "sum", "prod", "max", "min")
"""MLX's ``Scatter::ReduceType`` / ``SliceUpdate::ReduceType`` (None, Sum, Prod, Max, Min)."""


def _check_reduce(reduce_type, op):
    if reduce_type not in REDUCE_TYPES:
        raise ValueError(f"[{op}] Unknown reduce type {reduce_type!r}.")
    return reduce_type


def _tangent(given, i, x, dtype):
    """The tangent of input ``i`` (``x``) as ``dtype``; zeros if it has none."""
    return ops.astype(given[i], dtype) if i in given else ops.zeros(x.shape, dtype)


def _where_equal(a, b, x):
    """``x`` where ``a == b``, else zero."""
    return ops.where(ops.equal(a, b), x, array(0, x.dtype))


class _StridedWindow(Primitive):
    """What Slice and SliceUpdate share: the window ``start:stop:strides`` per axis."""

    abstract = True  # a family, not a primitive of its own

    def __init__(self, start_indices, end_indices, strides):
        self.start_indices = tuple(start_indices)
        self.end_indices = tuple(end_indices)
        self.strides = tuple(strides)

    def params(self):
        return {"start_indices": self.start_indices, "end_indices": self.end_indices,
                "strides": self.strides}

    def _params(self):
        return self.start_indices, self.end_indices, self.strides

    def _slice(self, x):
        """The window of ``x``."""
        return make_array(Slice(*self._params()), [x])

    def _batched(self, ax, size):
        """The window with a whole batch axis of ``size`` inserted at ``ax``:
        start 0, stop its size, step 1."""
        start, stop, strides = (list(p) for p in self._params())
        start.insert(ax, 0)
        stop.insert(ax, size)
        strides.insert(ax, 1)
        return start, stop, strides


class Slice(_StridedWindow):
    """``a[start:stop:stride]`` on every axis.

    start/stop are already normalised the way ``slice.indices`` does it, so
    axis ``d`` takes ``len(range(start[d], stop[d], strides[d]))`` elements.
    """

    view = True  # MLX's slice is a view of its input's buffer
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
        return [slice_data(x.data(), x.shape, self.start_indices, self.strides, shape)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # The cotangent goes back into the window it came from; elements the
        # slice skipped get zero (MLX: slice_update of zeros).
        (x,), (cot,) = primals, cotangents
        return [make_array(SliceUpdate(*self._params()), [ops.zeros(x.shape, cot.dtype), cot])]

    jvp = multilinear_jvp

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        window = self._params() if ax is None else self._batched(ax, x.shape[ax])
        return [make_array(Slice(*window), [x])], [ax]


class SliceUpdate(_StridedWindow):
    """``src`` with the strided window ``start:stop:strides`` replaced by, or
    combined with, ``update``: MLX's ``SliceUpdate`` with its reduce type
    ("none" replaces; "sum", "prod", "max", "min" are ``slice_update_add`` etc.
    in mlx/ops.cpp, what ``x.at[slices].add(v)`` and friends build).

    Inputs: ``src`` and ``update``, already cast and broadcast to the window's shape.
    """

    moves_elements = True

    def __init__(self, start_indices, end_indices, strides, reduce_type="none"):
        super().__init__(start_indices, end_indices, strides)
        self.reduce_type = _check_reduce(reduce_type, "slice_update")

    def params(self):
        return {"reduce_type": self.reduce_type, **super().params()}

    def _same(self, reduce_type=None):
        return SliceUpdate(*self._params(), reduce_type or self.reduce_type)

    def eval(self, inputs):
        src, update = inputs
        return [slice_update(src.data(), src.shape, src.dtype, update.data(), update.shape,
                             self.start_indices, self.strides, self.reduce_type)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # As MLX's SliceUpdate::vjp. src: "none" zeroes the overwritten window,
        # "sum" passes the cotangent, "prod" multiplies the window by the
        # update, "max"/"min" keep it where the result is src's value. update:
        # the cotangent's window, times src's window for "prod", kept where the
        # result is the update for "max"/"min" (ties give both sides the cotangent).
        src, update = primals
        (cot,) = cotangents
        (out,) = outputs
        r = self.reduce_type
        grads = []
        for i in argnums:
            if i == 0:
                if r == "none":
                    zeros = ops.zeros(update.shape, cot.dtype)
                    grads.append(make_array(self._same(), [cot, zeros]))
                elif r == "sum":
                    grads.append(cot)
                elif r == "prod":
                    grads.append(make_array(self._same(), [cot, ops.astype(update, cot.dtype)]))
                else:
                    grads.append(_where_equal(out, src, cot))
            else:
                window = self._slice(cot)
                if r == "prod":
                    src_w = self._slice(src)
                    window = ops.multiply(window, ops.astype(src_w, cot.dtype))
                elif r in ("max", "min"):
                    out_w = self._slice(out)
                    window = _where_equal(out_w, update, window)
                grads.append(window)
        return grads

    def jvp(self, primals, tangents, argnums):
        # "none" and "sum": the same update applied to the tangents (zeros for
        # a constant input). MLX 0.32 has no rule for the others; here: "prod"
        # is t_src * update in the window plus src * t_update; "max"/"min" pass
        # the tangent of whichever side the result equals (both on a tie, the
        # transpose of the vjp above).
        src, update = primals
        given = dict(zip(argnums, tangents))
        dtype = tangents[0].dtype
        t_src, t_upd = _tangent(given, 0, src, dtype), _tangent(given, 1, update, dtype)
        r = self.reduce_type
        if r in ("none", "sum"):
            return [make_array(self._same(), [t_src, t_upd])]
        if r == "prod":
            scaled = make_array(self._same(), [t_src, ops.astype(update, dtype)])
            src_w = ops.astype(self._slice(src), dtype)
            return [make_array(self._same("sum"), [scaled, ops.multiply(src_w, t_upd)])]
        out = make_array(self._same(), [src, update])
        out_w = self._slice(out)
        kept = _where_equal(out, src, t_src)
        return [make_array(self._same("sum"), [kept, _where_equal(out_w, update, t_upd)])]

    def vmap(self, inputs, axes):
        # src and update batched on one axis (src's if it has one; the unbatched
        # one broadcast along it), and the window spans all of that axis.
        (src, update), (src_ax, upd_ax) = inputs, axes
        if src_ax is None and upd_ax is None:
            return [make_array(self._same(), [src, update])], [None]
        size = batch_size(inputs, axes)
        ax = upd_ax if src_ax is None else src_ax
        src = move_batch_axis(src, src_ax, size, ax)
        update = move_batch_axis(update, upd_ax, size, ax)
        prim = SliceUpdate(*self._batched(ax, size), self.reduce_type)
        return [make_array(prim, [src, update])], [ax]


class _DynamicWindow(Primitive):
    """What DynamicSlice and DynamicSliceUpdate share: a window whose start on
    ``axes`` is read from an integer array input (0 on the other axes)."""

    abstract = True  # a family, not a primitive of its own
    moves_elements = True

    def __init__(self, axes):
        self.axes = tuple(axes)

    def params(self):
        return {"axes": self.axes}

    def _no_start_rule(self, mode):
        return ValueError(f"[{type(self).__name__}::{mode}] Not supported for start indices.")


class DynamicSlice(_DynamicWindow):
    """``mx.slice(a, start, axes, slice_size)``: the window of ``slice_size``
    starting at the (array) ``start`` on ``axes``. Inputs: ``a`` and ``start``."""

    op = "slice"

    def __init__(self, axes, slice_size):
        super().__init__(axes)
        self.slice_size = tuple(slice_size)

    def params(self):
        return {"axes": self.axes, "slice_size": self.slice_size}

    def output_shapes(self, inputs):
        return [self.slice_size]

    def eval(self, inputs):
        a, start = inputs
        return [dynamic_slice(a.data(), a.shape, self.axes, start.data(), self.slice_size,
                              self.op)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # The cotangent written back into its window of zeros (as MLX).
        a, start = primals
        if list(argnums) != [0]:
            raise self._no_start_rule("vjp")
        (cot,) = cotangents
        zeros = ops.zeros(a.shape, cot.dtype)
        return [make_array(DynamicSliceUpdate(self.axes), [zeros, cot, start])]

    def jvp(self, primals, tangents, argnums):
        if list(argnums) != [0]:
            raise self._no_start_rule("jvp")
        return [make_array(DynamicSlice(self.axes, self.slice_size), [tangents[0], primals[1]])]

    def vmap(self, inputs, axes):
        # The batch axis is one more whole axis of the window (as MLX; MLX has
        # no rule for batched starts, and neither has mlxref).
        (a, start), (ax, start_ax) = inputs, axes
        if start_ax is not None:
            raise ValueError("[DynamicSlice::vmap] vmap over start indices not yet supported.")
        if ax is None:
            return [make_array(DynamicSlice(self.axes, self.slice_size), inputs)], [None]
        slice_axes = [d + 1 if d >= ax else d for d in self.axes]
        size = list(self.slice_size)
        size.insert(ax, a.shape[ax])
        return [make_array(DynamicSlice(slice_axes, size), [a, start])], [ax]


class DynamicSliceUpdate(_DynamicWindow):
    """``mx.slice_update(a, update, start, axes)``: ``a`` with the window of
    ``update``'s shape, starting at the (array) ``start`` on ``axes``, replaced
    by ``update``. Inputs: ``a``, ``update`` (cast, with a's number of axes), ``start``."""

    op = "slice_update"

    def eval(self, inputs):
        src, update, start = inputs
        return [dynamic_slice_update(src.data(), src.shape, update.data(), update.shape,
                                     self.axes, start.data(), self.op)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # src: the cotangent with the window zeroed; update: the cotangent's window.
        src, update, start = primals
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i == 0:
                zeros = ops.zeros(update.shape, cot.dtype)
                grads.append(make_array(DynamicSliceUpdate(self.axes), [cot, zeros, start]))
            elif i == 1:
                grads.append(make_array(DynamicSlice(self.axes, update.shape), [cot, start]))
            else:
                raise self._no_start_rule("vjp")
        return grads

    def jvp(self, primals, tangents, argnums):
        src, update, start = primals
        given = dict(zip(argnums, tangents))
        if 2 in given:
            raise self._no_start_rule("jvp")
        dtype = tangents[0].dtype
        t_src, t_upd = _tangent(given, 0, src, dtype), _tangent(given, 1, update, dtype)
        return [make_array(DynamicSliceUpdate(self.axes), [t_src, t_upd, start])]

    def vmap(self, inputs, axes):
        # src and update batched on axis 0 (the unbatched one broadcast along
        # it); the window spans all of it. (MLX 0.32's rule updates only the
        # first example.)
        (src, update, start), (src_ax, upd_ax, start_ax) = inputs, axes
        if start_ax is not None:
            raise ValueError(
                "[DynamicSliceUpdate::vmap] vmap over start indices not yet supported."
            )
        if src_ax is None and upd_ax is None:
            return [make_array(DynamicSliceUpdate(self.axes), inputs)], [None]
        size = batch_size(inputs, axes)
        src = move_batch_axis(src, src_ax, size, 0)
        update = move_batch_axis(update, upd_ax, size, 0)
        prim = DynamicSliceUpdate([d + 1 for d in self.axes])
        return [make_array(prim, [src, update, start])], [0]


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
        return [gather(a.data(), a.shape, self.axes, [x.data() for x in indices],
                       self.slice_sizes, self.op)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # Every window read adds its cotangent back where it was read from:
        # a scatter-*add* into zeros, so an index read twice gets both.
        a, indices = primals[0], primals[1:]
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i > 0:
                raise no_gradient_error("gather", "VJP")
            zeros = ops.zeros(a.shape, cot.dtype)
            grads.append(make_array(Scatter(self.axes, "sum"), [zeros, *indices, cot]))
        return grads

    def jvp(self, primals, tangents, argnums):
        if list(argnums) != [0]:
            raise no_gradient_error("gather", "JVP")
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
        positions = _positions(size, idx_ndim, 0, indices[0].dtype)
        positions = ops.broadcast_to(ops.moveaxis(positions, 0, out_ax), indices[0].shape)
        slice_sizes.insert(a_ax, 1)
        out = self._gather(a, indices + [positions], gather_axes + [a_ax], slice_sizes)
        return [ops.squeeze(out, idx_ndim + a_ax)], [out_ax]

    def _gather(self, a, indices, axes, slice_sizes):
        return make_array(Gather(axes, slice_sizes, self.op), [a, *indices])


def _positions(n, ndim, axis, dtype):
    """``arange(n)`` laid along ``axis`` of an ``ndim``-d array (size 1 elsewhere)."""
    shape = [1] * ndim
    shape[axis] = n
    return from_data(list(range(n)), tuple(shape), dtype)


def along_axis_indices(indices, axis):
    """One index array per axis that, with ``indices`` on ``axis``, names for
    each position p of ``indices`` the element p with its ``axis`` coordinate
    replaced by ``indices[p]``: what turns an along-axis scatter (``GatherAxis``'s
    vjp, ``put_along_axis``) into a ``Scatter`` over every axis."""
    return [indices if d == axis else
            ops.broadcast_to(_positions(n, indices.ndim, d, indices.dtype), indices.shape)
            for d, n in enumerate(indices.shape)]


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
        return [gather_axis(a.data(), a.shape, self.axis, indices.data(), indices.shape,
                            self.op)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # A scatter-add of the cotangent into zeros (MLX uses ScatterAxis; here
        # it is a Scatter over every axis: position p of the output was read
        # from a[p with axis replaced by indices[p]]).
        a, indices = primals
        (cot,) = cotangents
        grads = []
        for i in argnums:
            if i > 0:
                raise no_gradient_error("gather_axis", "VJP")
            index_arrays = along_axis_indices(indices, self.axis)
            updates = ops.reshape(cot, cot.shape + (1,) * a.ndim)
            axes = list(range(a.ndim))
            zeros = ops.zeros(a.shape, cot.dtype)
            grads.append(make_array(Scatter(axes, "sum"), [zeros, *index_arrays, updates]))
        return grads

    def jvp(self, primals, tangents, argnums):
        if list(argnums) != [0]:
            raise no_gradient_error("gather_axis", "JVP")
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


def _update_window(indices, updates):
    """The shape of one update's window: the axes of ``updates`` after the index axes."""
    return updates.shape[(indices[0].ndim if indices else 0):]


class Scatter(Primitive):
    """``mlx::core::scatter``: the inverse of ``Gather``. For each position of the
    index arrays, the window ``updates[position]`` is combined into ``a``
    starting at those indices on ``axes``, position after position.

    Inputs: ``a``, one index array per axis (all one shape), and ``updates`` of
    shape ``index_shape + window_shape`` (``window_shape`` has ``a.ndim`` axes).
    ``reduce_type`` is MLX's ``Scatter::ReduceType``: "none" replaces (later
    positions win where windows overlap), "sum", "prod", "max" and "min"
    combine (``scatter_add`` etc. in mlx/ops.cpp), so an element hit twice
    gets both updates.
    """

    def __init__(self, axes, reduce_type="none", op="scatter"):
        self.axes = tuple(axes)
        self.reduce_type = _check_reduce(reduce_type, "scatter")
        self.op = op

    def params(self):
        return {"reduce_type": self.reduce_type, "axes": self.axes}

    def eval(self, inputs):
        a, indices, updates = inputs[0], inputs[1:-1], inputs[-1]
        window = _update_window(indices, updates)
        return [scatter(a.data(), a.shape, a.dtype, self.axes, [x.data() for x in indices],
                        updates.data(), window, self.reduce_type, self.op)]

    def _same(self, reduce_type=None):
        return Scatter(self.axes, reduce_type or self.reduce_type, self.op)

    def _gather(self, x, indices, window):
        """What each update's window sees of ``x`` (an array of a's shape)."""
        return make_array(Gather(self.axes, window, self.op), [x, *indices])

    def _others_product(self, a, indices, updates, dtype):
        """For each update, the product of the *other* updates that land on the
        same element, without dividing by a zero update: the product of the
        nonzero ones and the number of zeros, per element of ``a``."""
        window = _update_window(indices, updates)
        u = ops.astype(updates, dtype)
        is_zero = ops.equal(u, array(0, dtype))
        nonzero = ops.where(is_zero, array(1, dtype), u)
        ones = ops.ones(a.shape, dtype)
        prod = self._gather(make_array(self._same("prod"), [ones, *indices, nonzero]),
                            indices, window)
        zeros = self._gather(
            make_array(self._same("sum"), [ops.zeros(a.shape, dtype), *indices,
                                           ops.astype(is_zero, dtype)]), indices, window)
        zero = array(0, dtype)
        without_self = ops.where(ops.equal(zeros, zero), ops.divide(prod, nonzero), zero)
        only_zero = ops.where(ops.equal(zeros, array(1, dtype)), prod, zero)
        return ops.where(is_zero, only_zero, without_self)

    def vjp(self, primals, cotangents, argnums, outputs):
        # As MLX's Scatter::vjp for "none", "sum", "max" and "min":
        # a: "sum" keeps every element of a, so the cotangent passes through;
        #    "none" overwrote the windows, so they get zero; "max"/"min" keep
        #    it where the result is a's own value.
        # updates: the cotangent read back from each window (a gather); for
        #    "max"/"min" only where the result is that update (a tie gives
        #    every side the cotangent, as MLX). As in MLX, when windows overlap
        #    under "none" every update gets the cotangent, even the ones a
        #    later update overwrote.
        # MLX has no rule for "prod" ("VJP not implemented for scatter_prod").
        # Here: a gets the cotangent times every update at its element (the
        # same scatter-prod of the cotangent); an update gets the cotangent
        # times a and the other updates at its element (divided by nothing,
        # so a zero update is handled).
        a, indices, updates = primals[0], primals[1:-1], primals[-1]
        (cot,) = cotangents
        (out,) = outputs
        r = self.reduce_type
        window = _update_window(indices, updates)
        grads = []
        for i in argnums:
            if i == 0:
                if r == "sum":
                    grads.append(cot)
                elif r == "none":
                    zeros = ops.zeros(updates.shape, cot.dtype)
                    grads.append(make_array(self._same(), [cot, *indices, zeros]))
                elif r == "prod":
                    upd = ops.astype(updates, cot.dtype)
                    grads.append(make_array(self._same(), [cot, *indices, upd]))
                else:
                    grads.append(_where_equal(out, a, cot))
            elif i == len(primals) - 1:
                # MLX takes the window from the cotangent's shape with the indexed
                # axes set to 1; for an update that spans a slice after the index
                # arrays (``x[idx, 0:2] = v``) that window is too small and MLX
                # fails with a reshape error. The update's own window is right.
                g = self._gather(cot, indices, window)
                if r == "prod":
                    seen = self._gather(ops.astype(a, cot.dtype), indices, window)
                    others = self._others_product(a, indices, updates, cot.dtype)
                    g = ops.multiply(g, ops.multiply(seen, others))
                elif r in ("max", "min"):
                    g = _where_equal(self._gather(out, indices, window), updates, g)
                grads.append(g)
            else:
                raise no_gradient_error("scatter", "VJP")
        return grads

    def jvp(self, primals, tangents, argnums):
        # MLX 0.32 has no rule here ("[scatter] JVP not yet implemented").
        # "none" and "sum" are linear in (a, updates): the same scatter of the
        # tangents, zeros standing in for an input without one. "prod": the
        # product rule, t_a times the updates plus, per update, its tangent
        # times a and the other updates. "max"/"min": the tangents of every
        # side the result equals (the transpose of the vjp).
        a, indices, updates = primals[0], primals[1:-1], primals[-1]
        given = dict(zip(argnums, tangents))
        if any(0 < i < len(primals) - 1 for i in given):
            raise no_gradient_error("scatter", "JVP")
        dtype = tangents[0].dtype
        t_a, t_u = _tangent(given, 0, a, dtype), _tangent(given, len(primals) - 1, updates, dtype)
        r = self.reduce_type
        if r in ("none", "sum"):
            return [make_array(self._same(), [t_a, *indices, t_u])]
        window = _update_window(indices, updates)
        if r == "prod":
            scaled = make_array(self._same(), [t_a, *indices, ops.astype(updates, dtype)])
            seen = self._gather(ops.astype(a, dtype), indices, window)
            others = self._others_product(a, indices, updates, dtype)
            per_update = ops.multiply(t_u, ops.multiply(seen, others))
            return [make_array(self._same("sum"), [scaled, *indices, per_update])]
        out = make_array(self._same(), [a, *indices, updates])
        kept = _where_equal(out, a, t_a)
        chosen = _where_equal(self._gather(out, indices, window), updates, t_u)
        return [make_array(self._same("sum"), [kept, *indices, chosen])]

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
        positions = _positions(size, len(index_shape), 0,
                               indices[0].dtype if indices else _dt.int32)
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
        batches = a.shape[0] if a.ndim else 1
        return [masked_scatter(a.data(), batches, mask.data(), values.data())]

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
                raise no_gradient_error("masked_scatter", "VJP", "mask")
        return grads

    @staticmethod
    def _values_vjp(a, mask, values, cot):
        if values.size == 0:
            return ops.zeros(values.shape, cot.dtype)
        batches = a.shape[0] if a.ndim else 1
        per_mask = mask.size // batches if batches else 0
        per_value = values.size // batches if batches else 0
        m = ops.reshape(mask, (batches, per_mask))
        # The rank of each true position within its batch (exclusive cumsum),
        # offset to that batch's values; unmasked positions point at 0 and add 0.
        rank = ops.cumsum(ops.astype(m, _dt.int32), axis=1, inclusive=False)
        first = from_data([b * per_value for b in range(batches)], (batches, 1), _dt.int32)
        target = ops.where(m, ops.add(rank, first), array(0, _dt.int32))
        contrib = ops.where(m, ops.reshape(cot, (batches, per_mask)), array(0, cot.dtype))
        flat = make_array(Scatter([0], "sum"), [
            ops.zeros((values.size,), cot.dtype),
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
        t_a = given[0] if 0 in given else ops.zeros(a.shape, dtype)
        t_v = ops.astype(given[2], dtype) if 2 in given else ops.zeros(values.shape, dtype)
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
