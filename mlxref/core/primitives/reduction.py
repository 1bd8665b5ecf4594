"""Reduction primitives: ArgReduce, Reduce, NumberOfElements, Scan (cumsum,
cumprod, cummax, cummin, logcumsumexp), LogSumExp, Softmax.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (these classes' vjp,
jvp and vmap rules). Each ``eval`` calls a kernel of mlxref/core/backend/cpu/
(reduce.py, arg_reduce.py, scan.py, softmax.py: MLX's mlx/backend/cpu/
reduce.cpp, arg_reduce.cpp, scan.cpp, softmax.cpp).

Where these primitives differ from MLX's, on purpose, for readability:
``Reduce``, ``ArgReduce`` and ``LogSumExp`` take ``keepdims`` (MLX's keep the
reduced axes and the op squeezes them; here a reduction is one node in a
drawing, and its rules put the axes back first: ``_with_reduced_axes``).
``ArgReduce(axis=None)`` and ``Scan(axis=None)`` work on the array as if
flattened (MLX's ops ``flatten`` first). ``LogSumExp`` and ``Softmax`` take
``axes``: MLX's work on the last axis, and its ops compose the other cases of
max, subtract, exp, sum and log (the op still follows MLX's choice of path
where it changes the result's dtype, and eval its roundings).
Read next: mlxref/core/backend/cpu/reduce.py, mlxref/core/ops/reduction.py.
"""

import functools
import math
import operator

from .. import ops
from .. import scalar as _scalar
from .. import dtypes as _dt
from ..backend.cpu.arg_reduce import arg_reduce, argmax, argmin
from ..backend.cpu.reduce import reduction_op, trailing
from ..backend.cpu.rounding import unrounded
from ..backend.cpu.scan import scan_op, scan_step
from ..backend.cpu.softmax import logsumexp, softmax
from .base import Primitive, jvp_zeros, make_array, vjp_zeros
from .elementwise import LogAddExp
from .indexing import GatherAxis


class ArgReduce(Primitive):
    """``argmax`` / ``argmin`` along one ``axis`` (``None``: the flattened array).

    The result is uint32, as MLX's.
    """

    def __init__(self, kind, axis, keepdims=False):
        if kind not in ("argmax", "argmin"):
            raise ValueError(f"[ArgReduce] Unknown reduction {kind!r}.")
        self.kind = kind
        self.axis = axis
        self.keepdims = keepdims

    def params(self):
        return {"kind": self.kind, "axis": self.axis, "keepdims": self.keepdims}

    def _axes(self, ndim):
        return tuple(range(ndim)) if self.axis is None else (self.axis,)

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [_reduced_shape(shape, self._axes(len(shape)), self.keepdims)]

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    vjp = vjp_zeros  # an index is piecewise constant
    jvp = jvp_zeros  # in the output's dtype, as MLX's

    def vmap(self, inputs, axes):
        """MLX's ArgReduce::vmap for an int ``axis``: shift it past the batch
        axis. ``axis=None`` (the flattened example; MLX's op flattens before
        its primitive) reduces axis 1 of ``(batch, example size)``."""
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        if self.axis is not None:
            (axis,) = shift_axes((self.axis,), ax)
            out = make_array(ArgReduce(self.kind, axis, self.keepdims), [x])
            return [out], [_out_batch_axis(ax, (axis,), self.keepdims)]
        example_ndim = x.ndim - 1
        out = make_array(ArgReduce(self.kind, 1), [_flat_examples(x, ax)])
        if self.keepdims:
            out = ops.reshape(out, out.shape + (1,) * example_ndim)
        return [out], [0]

    def eval(self, inputs):
        (x,) = inputs
        return [arg_reduce(self.kind, x.data(), x.shape, self._axes(x.ndim), x.dtype)]


# --- shapes and batch axes ----------------------------------------------------------


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def shift_axes(axes, ax):
    """Per-example ``axes`` (non-negative ints, sorted) as the same axes of the
    batched array, whose batch axis is ``ax``: a tuple, sorted. Every vmap rule
    of this module and of sort.py uses it."""
    # BEGIN TASK 5.2: vmap of the reductions
    return tuple(d + 1 if d >= ax else d for d in axes)
    # END TASK 5.2


def _out_batch_axis(ax, axes, keepdims):
    """The batch axis of the output when the batched array, batched on ``ax``,
    is reduced over its ``axes`` (which do not include ``ax``), with or
    without ``keepdims``."""
    # BEGIN TASK 5.2: vmap of the reductions
    return ax if keepdims else ax - sum(1 for d in axes if d < ax)
    # END TASK 5.2


def _flat_examples(x, ax):
    """``x`` with its batch axis ``ax`` in front and each example flattened:
    shape ``(batch, example size)`` (the ``axis=None`` cases)."""
    x = ops.moveaxis(x, ax, 0)
    return ops.reshape(x, (x.shape[0], math.prod(x.shape[1:])))


def _unbatched(primitive, x):
    """The node itself, for an input that is not batched (output not batched)."""
    return [make_array(primitive, [x])], [None]


# --- helpers for the derivative rules -------------------------------------------------


def _with_reduced_axes(a, axes, keepdims):
    """``a``, shaped like a reduction's output, with the reduced axes as size 1."""
    return a if keepdims else ops.expand_dims(a, list(axes))


def _to_last(x, axes):
    """``x`` with ``axes`` moved to the end and merged into one: ``(*kept, n)``.

    MLX's Reduce rules do the same (``transpose`` then ``flatten``) to treat
    several reduced axes as one.
    """
    ndim = x.ndim
    if not trailing(axes, ndim):
        x = ops.transpose(x, [d for d in range(ndim) if d not in axes] + list(axes))
    if len(axes) == 1:
        return x
    kept = x.shape[: ndim - len(axes)]
    return ops.reshape(x, kept + (math.prod(x.shape[ndim - len(axes) :]),))


def _from_last(y, shape, axes):
    """The inverse of ``_to_last``: ``y`` of shape ``(*kept, n)`` back to ``shape``."""
    ndim = len(shape)
    order = [d for d in range(ndim) if d not in axes] + list(axes)
    if len(axes) != 1:
        y = ops.reshape(y, tuple(shape[d] for d in order))
    if not trailing(axes, ndim):
        back = [0] * ndim
        for position, d in enumerate(order):
            back[d] = position
        y = ops.transpose(y, back)
    return y


def _exclusive_prod(x, axes):
    """Each element of ``x`` replaced by the product of the *other* elements of
    its run over ``axes`` (d prod / d x_i): an array of ``x``'s shape and
    dtype, written with mlxref ops (Reduce's vjp and jvp for prod use it).

    Mirrors MLX's Reduce::vjp, which divides by nothing: a run with one zero
    gives a non-zero value only at that zero, a run with two zeros gives
    zeros, and no element is ever inf or nan that the products are not.
    """
    # BEGIN TASK 2.5: vjp of the reductions: sum, prod, max, min
    runs = _to_last(x, axes)
    left = ops.cumprod(runs, axis=-1, inclusive=False)
    right = ops.cumprod(runs, axis=-1, reverse=True, inclusive=False)
    return _from_last(ops.multiply(left, right), x.shape, axes)
    # END TASK 2.5


def _scan_window(x, axis, start, stop):
    """``x[..., start:stop, ...]`` on ``axis``."""
    return x[(slice(None),) * axis + (slice(start, stop),)]


# --- Reduce -------------------------------------------------------------------------


class Reduce(Primitive):
    """``sum``, ``prod``, ``max``, ``min``, ``all`` (kind "and"), ``any`` ("or").

    ``axes`` are non-negative and sorted. With ``keepdims`` the reduced axes
    stay as size 1 (see the module docstring for how MLX does this).
    """

    _names = {"sum": "Sum", "prod": "Prod", "max": "Max", "min": "Min", "and": "And", "or": "Or"}

    def __init__(self, kind, axes, keepdims=False):
        if kind not in self._names:
            raise ValueError(f"[Reduce] Unknown reduction {kind!r}.")
        self.kind = kind
        self.axes = tuple(axes)
        self.keepdims = keepdims

    @property
    def name(self):
        return self._names[self.kind]  # MLX's Reduce::name()

    def params(self):
        return {"axes": self.axes, "keepdims": self.keepdims}

    def output_shapes(self, inputs):
        return [_reduced_shape(inputs[0].shape, self.axes, self.keepdims)]

    def output_dtypes(self, inputs):
        """``all`` and ``any`` give bool; ``sum`` and ``prod`` widen integers to
        32 bits (int8, int16 and bool to int32, uint8 and uint16 to uint32;
        64-bit ones stay); the others keep the input's dtype (mlx/ops.cpp
        ``sum``, ``prod``)."""
        dtype = inputs[0].dtype
        if self.kind in ("and", "or"):
            return [_dt.bool_]
        if self.kind in ("sum", "prod") and dtype.size < 4 and not dtype.is_inexact:
            return [_dt.uint32 if dtype.is_unsigned else _dt.int32]
        return [dtype]

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's Reduce::vjp, kind by kind.

        - sum: the cotangent broadcast back over the reduced axes.
        - prod: the cotangent times the product of the other elements.
        - max / min: the cotangent goes to every position equal to the result,
          split evenly between ties (``cot / count * mask``).
        - all / any: zero.
        """
        if self.kind == "prod" and primals[0].dtype is _dt.complex64:
            # MLX's convention for complex inputs: the conjugate of the other factors.
            cot = _with_reduced_axes(cotangents[0], self.axes, self.keepdims)
            return [ops.multiply(ops.conjugate(_exclusive_prod(primals[0], self.axes)), cot)]
        # BEGIN TASK 2.5: vjp of the reductions: sum, prod, max, min
        (x,) = primals
        if self.kind in ("and", "or"):
            return [ops.zeros_like(x)]
        cot = _with_reduced_axes(cotangents[0], self.axes, self.keepdims)
        if self.kind == "sum":  # (against x itself, so a shapeless compile replays it)
            return [ops.broadcast_arrays(cot, x)[0]]
        if self.kind == "prod":
            return [ops.multiply(_exclusive_prod(x, self.axes), cot)]
        out = _with_reduced_axes(outputs[0], self.axes, self.keepdims)
        mask = ops.equal(x, out)
        count = ops.sum(mask, list(self.axes), keepdims=True)
        return [ops.multiply(ops.divide(cot, count), mask)]
        # END TASK 2.5

    def jvp(self, primals, tangents, argnums):
        """MLX's Reduce::jvp.

        - sum: the sum of the tangent.
        - prod: the sum of tangent times the product of the other elements.
        - max / min: the tangent at the *first* arg max / arg min. Unlike the
          vjp, ties are not split (MLX's quirk, mirrored): on ``[1, 3, 3]``
          the vjp of max gives ``[0, 0.5, 0.5]`` but the jvp reads ``t[1]``.
          The index is not behind ``stop_gradient``, so differentiating this
          tangent again reaches ``take_along_axis`` with respect to its
          indices and raises, as in MLX.
        - all / any: zero, in the tangent's dtype. (MLX 0.32 falls through to
          the prod formula here and returns a non-zero float tangent for
          ``all(x)`` of a float ``x``; mlxref gives the zero its vjp gives.)
        """
        # BEGIN TASK 3.2: jvp of the reductions: sum, prod, max, min
        (x,) = primals
        (t,) = tangents
        out_shape = self.output_shapes(primals)[0]
        axes = list(self.axes)
        if self.kind in ("and", "or"):
            return [ops.zeros(out_shape, t.dtype)]
        if self.kind == "sum":
            return [ops.sum(t, axes, keepdims=self.keepdims)]
        if self.kind == "prod":
            return [ops.sum(ops.multiply(_exclusive_prod(x, self.axes), t), axes,
                            keepdims=self.keepdims)]
        pick = ops.argmax if self.kind == "max" else ops.argmin
        index = pick(_to_last(x, self.axes), axis=-1, keepdims=True)
        picked = ops.take_along_axis(_to_last(t, self.axes), index, axis=-1)
        return [ops.reshape(picked, out_shape)]
        # END TASK 3.2

    def vmap(self, inputs, axes):
        """MLX's Reduce::vmap: one Reduce of the batched array, whose batch
        axis is not moved (no transpose); returns ``([output], [its batch
        axis])``, or ``[None]`` for an unbatched input."""
        # BEGIN TASK 5.2: vmap of the reductions
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        shifted = shift_axes(self.axes, ax)
        out = make_array(Reduce(self.kind, shifted, self.keepdims), [x])
        return [out], [_out_batch_axis(ax, shifted, self.keepdims)]
        # END TASK 5.2

    def eval(self, inputs):
        (x,) = inputs
        (out_dtype,) = self.output_dtypes(inputs)
        return [reduction_op(self.kind, _FOLDS[self.kind], x.data(), x.shape, self.axes, x.dtype,
                             out_dtype)]


class NumberOfElements(Primitive):
    """The number of elements along ``axes`` of the input (or its inverse), as
    a 0-d array of ``dtype``: ``mean`` and ``var`` divide by it.

    MLX's ``NumberOfElements``: the ops build it only while
    ``compile(..., shapeless=True)`` traces, behind a StopGradient, so a
    replay on another shape counts again (otherwise the count is a constant).
    It reads its input's shape, never its elements: the derivatives are zero.
    """

    def __init__(self, axes, inverted, dtype):
        self.axes, self.inverted, self.dtype = tuple(axes), inverted, dtype

    def params(self):
        return {"axes": self.axes, "inverted": self.inverted, "dtype": self.dtype.name}

    def output_shapes(self, inputs):
        return [()]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        count = float(math.prod(inputs[0].shape[ax] for ax in self.axes))
        if self.inverted:
            count = 1.0 / count if count else float("inf")  # as C++'s 1.0 / 0
        return [[count]]

    vjp = vjp_zeros
    jvp = jvp_zeros

    def vmap(self, inputs, axes):
        # The count of one example: its axes, past the batch axis (MLX's rule).
        (x,), (ax,) = inputs, axes
        shifted = self.axes if ax is None else shift_axes(self.axes, ax)
        return [make_array(NumberOfElements(shifted, self.inverted, self.dtype), [x])], [None]


class Scan(Primitive):
    """MLX's ``Scan``: the running sum, product, max, min or logaddexp
    (``reduce_type`` "sum", "prod", "max", "min", "logaddexp": MLX's
    ``Scan::ReduceType``) along ``axis`` (``None``: the flattened array).

    ``reverse`` runs from the end; ``inclusive=False`` shifts by one so that
    each output leaves out its own element (the first output is the step's
    starting value: 0, 1, the dtype's lowest or highest value, -inf).
    ``mx.cumsum``, ``cumprod``, ``cummax``, ``cummin`` and ``logcumsumexp``
    build it.
    """

    _names = {"sum": "CumSum", "prod": "CumProd", "max": "CumMax", "min": "CumMin",
              "logaddexp": "CumLogAddExp"}

    def __init__(self, axis, reverse=False, inclusive=True, reduce_type="sum"):
        if reduce_type not in self._names:
            raise ValueError(f"[Scan] Unknown reduce type {reduce_type!r}.")
        self.axis = axis
        self.reverse = reverse
        self.inclusive = inclusive
        self.reduce_type = reduce_type

    @property
    def name(self):
        return self._names[self.reduce_type]  # MLX's Scan::name()

    def params(self):
        return {"axis": self.axis, "reverse": self.reverse, "inclusive": self.inclusive}

    def output_shapes(self, inputs):
        x = inputs[0]
        return [(x.size,) if self.axis is None else x.shape]

    def output_dtypes(self, inputs):
        dtype = inputs[0].dtype
        if dtype is _dt.bool_ and self.reduce_type == "sum":
            return [_dt.int32]  # a running count of booleans
        return [dtype]

    def _same(self, reduce_type, x, axis, reverse):
        """The scan of ``reduce_type`` of ``x`` on ``axis`` in direction
        ``reverse``, with this scan's ``inclusive``."""
        return make_array(Scan(axis, reverse, self.inclusive, reduce_type), [x])

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's Scan::vjp, type by type (``axis=None``: on the flat output,
        reshaped back).

        - sum: a cumsum of the cotangent in the other direction. Output ``j``
          sums inputs ``i <= j``, so input ``i`` collects the cotangents of
          outputs ``j >= i``: a reverse scan.
        - prod: ``cumsum(cot * out) / x`` in the other direction, which is
          right before the first zero of the run; the first zero itself gets
          the same sum with that zero replaced by 1; every element after it,
          0 (their products all hold the zero).
        - max / min: each output's cotangent goes to the element that holds
          the running extreme there; on a tie, to the latest element in scan
          order (as MLX 0.32.4, whose test_cummax_grad says so).
        - logaddexp: ``sum_j cot_j exp(x_i - out_j)`` over the outputs ``j``
          that include ``i``, formed as MLX does, stably: the cotangent split
          by sign and taken into logs, so that the sum is a logcumsumexp.
        """
        (x,), (cot,), (out,) = primals, cotangents, outputs
        if self.axis is None:
            flat = ops.reshape(x, (x.size,))
            return [ops.reshape(self._vjp(flat, cot, out, 0), x.shape)]
        return [self._vjp(x, cot, out, self.axis)]

    def _vjp(self, x, cot, out, axis):
        back = not self.reverse
        if self.reduce_type == "sum":
            return self._same("sum", cot, axis, back)
        if self.reduce_type == "prod":
            if x.dtype is _dt.complex64:
                # MLX's convention for complex inputs, which its Scan::vjp
                # misses (Reduce's keeps it): the conjugate of the other factors.
                x, out = ops.conjugate(x), ops.conjugate(out)
            first_zero, eq_zero = self._first_zero(x, out, axis)
            one = ops.where(first_zero, 1, x)
            with_one = self._same("sum", ops.multiply(self._same("prod", one, axis, self.reverse),
                                                      cot), axis, back)
            grad = ops.divide(self._same("sum", ops.multiply(out, cot), axis, back), x)
            return ops.where(first_zero, with_one, ops.where(eq_zero, 0, grad))
        if self.reduce_type == "logaddexp":
            if x.dtype is _dt.complex64:
                # MLX 0.32.4 returns wrong numbers here (its sign split of the
                # cotangent means nothing for complex numbers).
                raise ValueError("[logcumsumexp] VJP is not supported for complex inputs.")
            return self._by_sign(cot, ops.negative(out), x, axis, back)
        owner, window = self._owners(x, out, axis)
        return GatherAxis(axis).vjp([x, owner], [window(cot)], [0], [])[0]

    def _by_sign(self, v, before, after, axis, reverse):
        """``sum_i v_i exp(before_i + after_j)`` over the elements ``i`` of each
        output ``j``'s scan, formed stably as MLX's Scan::vjp forms
        logcumsumexp's: ``v`` split by sign into the logs of its positive and
        of its negative part (-inf elsewhere; MLX writes the dtype's lowest
        number, which gives the same sums), each part a logcumsumexp, and the
        difference of their exps."""
        log_abs = ops.log(ops.abs(v))
        parts = []
        for sign in (ops.greater, ops.less):
            log_part = ops.add(ops.where(sign(v, 0), log_abs, -math.inf), before)
            scan = self._same("logaddexp", log_part, axis, reverse)
            parts.append(ops.exp(ops.add(scan, after)))
        return ops.subtract(*parts)

    def _first_zero(self, x, out, axis):
        """Where the first zero of each run is (it turns the inclusive product
        to 0 while the exclusive one is not yet), and where the inclusive
        product is 0: MLX's masks for cumprod's rules."""
        other = make_array(Scan(axis, self.reverse, not self.inclusive, "prod"), [x])
        inclusive, exclusive = (out, other) if self.inclusive else (other, out)
        eq_zero = ops.equal(inclusive, 0)
        return ops.logical_and(eq_zero, ops.not_equal(exclusive, 0)), eq_zero

    def _owners(self, x, out, axis):
        """For cummax / cummin: the index along ``axis`` of the element each
        output was taken from, and the function that cuts an array like the
        output down to the positions that have one (an exclusive scan's first
        output is the starting value, taken from no element).

        As MLX: mark the positions where the input equals the running extreme
        of an inclusive scan with their index, and carry the latest mark
        along in scan order (a cummax of the marks, or from the end a cummin).
        The indices are constant where the input is, so they sit behind
        ``stop_gradient``.
        """
        n = x.shape[axis]
        if self.inclusive:
            start, stop = 0, n

            def window(a):
                return a
            extremes = out
        else:
            # The exclusive output shifted by one is the inclusive one of the
            # elements before the last in scan order.
            start, stop = (1, n) if self.reverse else (0, max(n - 1, 0))
            x = _scan_window(x, axis, start, stop)
            shift = -1 if self.reverse else 1

            def window(a):
                return _scan_window(a, axis, start + shift, stop + shift)
            extremes = window(out)
        index = ops.arange(start, max(stop, start), dtype=_dt.int32)
        index = ops.reshape(index, tuple(-1 if d == axis else 1 for d in range(x.ndim)))
        marks = ops.where(ops.equal(x, extremes), index, n if self.reverse else -1)
        carried = make_array(Scan(axis, self.reverse, True, "min" if self.reverse else "max"),
                             [marks])
        return ops.stop_gradient(ops.astype(carried, _dt.uint32)), window

    def jvp(self, primals, tangents, argnums):
        """The tangent of each type (MLX 0.32.4 has only the sum's: for the
        others its jvp raises; mlxref's are checked by SymPy).

        - sum: the cumsum of the tangent.
        - prod: ``out * cumsum(t / x)`` on outputs whose product holds no zero;
          where it holds exactly one, the tangent of that zero times the
          product of the others (a cumprod with the zero replaced by 1); two
          or more zeros give 0 (that cumprod is 0 too).
        - max / min: the tangent of the element each output was taken from
          (ties as in the vjp); an exclusive scan's first output has tangent 0.
        - logaddexp: ``sum_i t_i exp(x_i - out_j)``, split by sign as the vjp.
        """
        (x,), (t,) = primals, tangents
        axis = self.axis
        if axis is None:
            x, t, axis = ops.reshape(x, (x.size,)), ops.reshape(t, (t.size,)), 0
        forward = self.reverse
        if self.reduce_type == "sum":
            return [self._same("sum", t, axis, forward)]
        out = self._same(self.reduce_type, x, axis, self.reverse)
        if self.reduce_type == "prod":
            first_zero, _ = self._first_zero(x, out, axis)
            zero = ops.equal(x, 0)
            safe = ops.where(zero, ops.zeros_like(t), ops.divide(t, ops.where(zero, 1, x)))
            regular = ops.multiply(out, self._same("sum", safe, axis, forward))
            with_one = self._same("prod", ops.where(first_zero, 1, x), axis, forward)
            at_zero = ops.multiply(with_one,
                                   self._same("sum", ops.where(first_zero, t, 0), axis, forward))
            return [ops.where(ops.equal(out, 0), at_zero, regular)]
        if self.reduce_type == "logaddexp":
            if x.dtype is _dt.complex64:
                raise ValueError("[logcumsumexp] JVP is not supported for complex inputs.")
            terms = self._by_sign(t, x, ops.negative(out), axis, forward)
            return [ops.where(ops.isneginf(out), 0, terms)]
        owner, window = self._owners(x, out, axis)
        picked = ops.take_along_axis(t, owner, axis=axis)
        if not self.inclusive and x.shape[axis] > 0:
            widths = [(0, 0)] * x.ndim
            widths[axis] = (0, 1) if self.reverse else (1, 0)
            picked = ops.pad(picked, widths)
        return [picked]

    def vmap(self, inputs, axes):
        """MLX's Scan::vmap for an int ``axis``: shift it past the batch axis.
        ``axis=None`` (a flat output per example) scans axis 1 of
        ``(batch, example size)``."""
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        if self.axis is None:
            x, ax, axis = _flat_examples(x, ax), 0, 1
        else:
            (axis,) = shift_axes((self.axis,), ax)
        return [make_array(Scan(axis, self.reverse, self.inclusive, self.reduce_type), [x])], [ax]

    def eval(self, inputs):
        (x,) = inputs
        (dtype,) = self.output_dtypes(inputs)
        step = scan_step(self.reduce_type, dtype, LogAddExp.symbolic)
        return [scan_op(self._scan, step, self.reduce_type, x.data(), x.shape, self.axis, dtype)]

    def _scan(self, row, zero, add=operator.add):
        # BEGIN TASK 1.3: cumsum's forward rule: a running sum of one run
        # As scan.cpp: an inclusive scan starts from its first element, an
        # exclusive one from 0 (so its second output is 0 + x0: 0.0, not -0.0).
        if self.reverse:
            row = row[::-1]
        out = []
        total = None if self.inclusive else zero
        for v in row:
            if not self.inclusive:
                out.append(total)
            total = v if total is None else add(total, v)
            if self.inclusive:
                out.append(total)
        return out[::-1] if self.reverse else out
        # END TASK 1.3


# --- the math of one run, in its plainest form ----------------------------------------
# What a reduction computes on one run of elements, on numbers and on SymPy
# expressions alike; the kernels take it where they need no step of their own.
# max and min propagate nan, as MLX does; on SymPy elements, whose order is
# unknown, they fall back to sympy.Max / Min.


def _sum(group):
    return sum(group)  # 0 for an empty run; 0 + expr is expr in SymPy


def _max(group):
    try:
        return group[argmax(group)]
    except TypeError:  # SymPy symbols cannot be compared
        return functools.reduce(_scalar.sympy.Max, group)


def _min(group):
    try:
        return group[argmin(group)]
    except TypeError:
        return functools.reduce(_scalar.sympy.Min, group)


def _all(group):
    return all(bool(v) for v in group)


def _any(group):
    return any(bool(v) for v in group)


_FOLDS = {"sum": _sum, "prod": math.prod, "max": _max, "min": _min, "and": _all, "or": _any}


def _logsumexp(group, rounded=unrounded, exp=math.exp, total=sum):
    """log(sum(exp(group))) of a run of numbers, stable: no exp overflows.

    An infinite (or nan) max is the answer itself, as MLX's
    ``where(isinf(maxval), maxval, out)``: all -inf gives -inf, any +inf gives
    +inf. ``rounded``, ``exp`` and ``total`` are each step as the dtype's path
    computes it: by default in float64; for MLX's composed float16 and bfloat16
    path (below), each result rounded to the dtype, its exp and a float32 sum.
    """
    # BEGIN TASK 1.2: logsumexp's forward rule: take the max out first
    m = _max(group)
    if m != m or m in (math.inf, -math.inf):
        return m
    e = [rounded(exp(rounded(v - m))) for v in group]
    return rounded(rounded(math.log(rounded(total(e)))) + m)
    # END TASK 1.2


def _logsumexp_symbolic(group):
    """The plain formula: SymPy elements have no max to take out."""
    return _scalar.sympy.log(sum(_scalar.sympy.exp(v) for v in group))


def _softmax_symbolic(group):
    """The plain formula, as for logsumexp."""
    e = [_scalar.sympy.exp(v) for v in group]
    total = sum(e)
    return [v / total for v in e]


class LogSumExp(Primitive):
    """``logsumexp`` over ``axes`` (sorted, non-negative), with ``keepdims``.

    mlxref's LogSumExp takes the axes directly; MLX's primitive reduces the
    last axis and ``mx.logsumexp`` composes the other cases (module docstring).
    ``composed`` says the op took MLX's composed path, whose roundings eval
    follows for float16 and bfloat16 (the kernel computes in float32 and
    rounds once, as mlxref's double does). The input is already a float
    array (the op casts).
    """

    def __init__(self, axes, keepdims=False, composed=False):
        self.axes = tuple(axes)
        self.keepdims = keepdims
        self.composed = composed

    def params(self):
        return {"axes": self.axes, "keepdims": self.keepdims}

    def output_shapes(self, inputs):
        return [_reduced_shape(inputs[0].shape, self.axes, self.keepdims)]

    def _softmax(self, x):
        # MLX's rules call softmax(x, precise=True) over the same axes.
        return make_array(Softmax(self.axes, precise=True), [x])

    def vjp(self, primals, cotangents, argnums, outputs):
        (x,) = primals
        cot = _with_reduced_axes(cotangents[0], self.axes, self.keepdims)
        return [ops.multiply(cot, self._softmax(x))]

    def jvp(self, primals, tangents, argnums):
        (x,) = primals
        product = ops.multiply(tangents[0], self._softmax(x))
        return [ops.sum(product, list(self.axes), keepdims=self.keepdims)]

    def vmap(self, inputs, axes):
        """The batch axis moved to the front, out of the way of the reduced
        axes, which all move one to the right; the output is batched on axis 0.
        (MLX's primitive only reduces the last axis, so its rule swaps a
        trailing batch axis out of the way; mlxref's takes any axes.)"""
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        batched = LogSumExp(tuple(d + 1 for d in self.axes), self.keepdims, self.composed)
        return [make_array(batched, [ops.moveaxis(x, ax, 0)])], [0]

    def eval(self, inputs):
        (x,) = inputs
        return [logsumexp(x.data(), x.shape, self.axes, x.dtype, self.composed, _logsumexp,
                          _logsumexp_symbolic)]


class Softmax(Primitive):
    """``softmax`` over ``axes`` (sorted, non-negative); the output has x's shape.

    ``precise`` is MLX's flag for accumulating half-precision inputs in
    float32; ``composed`` says the op took MLX's composed path (any axes but
    the last). The kernel follows the roundings of each (backend/cpu/softmax.py).
    """

    def __init__(self, axes, precise=False, composed=False):
        self.axes = tuple(axes)
        self.precise = precise
        self.composed = composed

    def params(self):
        return {"axes": self.axes, "precise": self.precise}

    def _apply_jacobian(self, s, v):
        """``s * (v - sum(s * v))`` over the axes: the (symmetric) Jacobian of
        softmax, ``diag(s) - s sᵀ``, applied to ``v``."""
        sv = ops.multiply(s, v)
        return ops.subtract(sv, ops.multiply(s, ops.sum(sv, list(self.axes), keepdims=True)))

    def vjp(self, primals, cotangents, argnums, outputs):
        return [self._apply_jacobian(outputs[0], cotangents[0])]

    def jvp(self, primals, tangents, argnums):
        # The output again, as a fresh node, so the tangent stays differentiable.
        (x,) = primals
        s = make_array(self, [x])
        return [self._apply_jacobian(s, tangents[0])]

    def vmap(self, inputs, axes):
        """The softmax axes shift past the batch axis, which stays in place
        (MLX's Softmax::vmap, for its last-axis-only primitive, picks -1 or -2)."""
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        batched = Softmax(shift_axes(self.axes, ax), self.precise, self.composed)
        return [make_array(batched, [x])], [ax]

    def eval(self, inputs):
        (x,) = inputs
        return [softmax(x.data(), x.shape, self.axes, x.dtype, self.precise, self.composed,
                        _softmax_symbolic)]
