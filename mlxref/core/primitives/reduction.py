"""Reduction primitives: Reduce, ArgReduce, Scan (cumsum), LogSumExp, Softmax.

Read alongside: mlx/primitives.h (``Reduce``, ``ArgReduce``, ``Scan``,
``LogSumExp``, ``Softmax``) and mlx/backend/cpu/reduce.cpp, arg_reduce.cpp,
scan.cpp, logsumexp.cpp, softmax.cpp for the forward rules.

Every class here works the same way: the elements that meet in one output
element are brought together by moving the reduced axes to the end
(``_axes_last_indices``), so each output reads one contiguous run of a list
(``_groups``); scan and softmax put their mapped runs back (``_ungroup``).

Where mlxref's primitives differ from MLX's, on purpose, for readability:

- ``Reduce``, ``ArgReduce`` and ``LogSumExp`` take ``keepdims``. MLX's
  reductions always keep the reduced axes (size 1) and the op squeezes them
  afterwards; mlxref folds that squeeze into the primitive, so a reduction is
  one node in a drawing. Its rules put the axes back first
  (``_with_reduced_axes``, an ``expand_dims``) and then read like MLX's.
- ``ArgReduce(axis=None)`` and ``Scan(axis=None)`` reduce / scan the array as
  if flattened. MLX's ops ``flatten`` first and always give the primitive an
  int axis.
- ``LogSumExp`` and ``Softmax`` take ``axes``. MLX's primitives work on the
  last axis only; over other axes ``mx.logsumexp`` and ``mx.softmax`` are
  composed of max, subtract, exp, sum (and log). The ops module still follows
  MLX's choice of path where it changes the result's dtype (softmax).

The derivative rules sit with each class and are written with mlxref ops, so
a gradient is a lazy graph that can be differentiated again.
"""

import functools
import math
import operator

from .. import ops
from .. import scalar as _scalar
from .. import dtypes as _dt
from .base import Primitive, make_array, row_major_strides, strided_indices


# --- the shared helpers -------------------------------------------------------------


def _axes_last_indices(shape, axes):
    """Flat indices of an array of ``shape`` read with ``axes`` moved to the end.

    The kept axes come first (in order), then ``axes`` (sorted). Element ``k``
    of the result is the flat position that lands at ``k``, so every run of
    ``prod(shape[a] for a in axes)`` consecutive indices feeds one output.
    """
    axes = sorted(axes)
    order = [d for d in range(len(shape)) if d not in axes] + axes
    strides = row_major_strides(shape)
    return strided_indices([shape[d] for d in order], [strides[d] for d in order])


def _trailing(axes, ndim):
    """Are ``axes`` the last ones already? Then no element has to move."""
    return list(axes) == list(range(ndim - len(axes), ndim))


def _groups(x, axes):
    """The runs of ``x``'s elements that reduce to one output element each.

    Returned in row-major order of the kept axes. A reduced axis of size 0
    gives empty runs (``sum`` of them is 0, ``prod`` 1).
    """
    shape = x.shape
    group = math.prod(shape[d] for d in axes)
    count = math.prod(n for d, n in enumerate(shape) if d not in axes)
    data = x.data()
    if not _trailing(axes, len(shape)):
        data = [data[i] for i in _axes_last_indices(shape, axes)]
    return [data[k * group : (k + 1) * group] for k in range(count)]


def _ungroup(runs, shape, axes):
    """The inverse of ``_groups`` for runs mapped element for element (scan,
    softmax): one flat list in the row-major layout of ``shape``."""
    flat = [v for run in runs for v in run]
    if _trailing(axes, len(shape)):
        return flat
    out = [None] * len(flat)
    for i, v in zip(_axes_last_indices(shape, axes), flat):
        out[i] = v
    return out


def _cast(values, dtype):
    """Numbers take ``dtype``'s Python type (1 for True, 0.0 for 0); SymPy stays."""
    return list(map(dtype.cast, values))  # cast leaves SymPy as it is


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _shift_axes(axes, ax):
    """Per-example ``axes`` as axes of the batched array, whose batch axis is ``ax``."""
    return tuple(d + 1 if d >= ax else d for d in axes)


def _out_batch_axis(ax, axes, keepdims):
    """Where batch axis ``ax`` lands once the (batched array's) ``axes`` are
    reduced: each removed axis before it moves it one to the left."""
    return ax if keepdims else ax - sum(1 for d in axes if d < ax)


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
    if not _trailing(axes, ndim):
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
    if not _trailing(axes, ndim):
        back = [0] * ndim
        for position, d in enumerate(order):
            back[d] = position
        y = ops.transpose(y, back)
    return y


def _exclusive_prod(x, axes):
    """Each element of ``x`` replaced by the product of the *other* elements of
    its run over ``axes``: d prod / d x_i, with no division, so zeros are safe.

    MLX multiplies two exclusive cumprods (from the left and from the right).
    mlxref's Scan only sums, so here row ``i`` of an ``n x n`` copy of each run
    has its own element ``i`` replaced by 1 and the row is multiplied out: the
    same numbers (one zero in a run: only that position gets a non-zero
    gradient; two zeros: all zero), at O(n^2) cost, which a reference can pay.
    """
    runs = _to_last(x, axes)
    n = runs.shape[-1]
    copies = ops.broadcast_to(ops.expand_dims(runs, -2), runs.shape[:-1] + (n, n))
    others = ops.where(ops.eye(n, dtype=_dt.bool_), 1, copies)
    return _from_last(ops.prod(others, axis=-1), x.shape, axes)


# --- the scalar folds ---------------------------------------------------------------
# Each takes one run of elements. max and min propagate nan, as MLX does; on
# SymPy elements, whose order is unknown, they fall back to sympy.Max / Min.


def _arg_best(better):
    """The fold that finds the index of the first element ``better`` than all
    before it; a nan beats everything (MLX's CPU rule for argmax and argmin)."""

    def fold(group):
        best = 0
        for i, v in enumerate(group):
            if v != v:
                return i
            if better(v, group[best]):
                best = i
        return best

    return fold


_argmax, _argmin = _arg_best(operator.gt), _arg_best(operator.lt)


def _sum(group):
    return sum(group)  # 0 for an empty run; 0 + expr is expr in SymPy


def _max(group):
    try:
        return group[_argmax(group)]
    except TypeError:  # SymPy symbols cannot be compared
        return functools.reduce(_scalar.sympy.Max, group)


def _min(group):
    try:
        return group[_argmin(group)]
    except TypeError:
        return functools.reduce(_scalar.sympy.Min, group)


def _all(group):
    return all(bool(v) for v in group)


def _any(group):
    return any(bool(v) for v in group)


# --- Reduce -------------------------------------------------------------------------


class Reduce(Primitive):
    """``sum``, ``prod``, ``max``, ``min``, ``all`` (kind "and"), ``any`` ("or").

    ``axes`` are non-negative and sorted. With ``keepdims`` the reduced axes
    stay as size 1 (see the module docstring for how MLX does this).
    """

    _names = {"sum": "Sum", "prod": "Prod", "max": "Max", "min": "Min", "and": "And", "or": "Or"}
    _folds = {"sum": _sum, "prod": math.prod, "max": _max, "min": _min, "and": _all, "or": _any}

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
        """``sum`` and ``prod`` count booleans as int32; ``all`` and ``any``
        give bool; the others keep the input's dtype (mlx/ops.cpp ``sum``...)."""
        dtype = inputs[0].dtype
        if self.kind in ("and", "or"):
            return [_dt.bool_]
        if self.kind in ("sum", "prod") and dtype is _dt.bool_:
            return [_dt.int32]
        return [dtype]

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's Reduce::vjp, kind by kind.

        - sum: the cotangent broadcast back over the reduced axes.
        - prod: the cotangent times the product of the other elements.
        - max / min: the cotangent goes to every position equal to the result,
          split evenly between ties (``cot / count * mask``).
        - all / any: zero.
        """
        # BEGIN TASK 2.5: vjp of the reductions: sum, prod, max, min
        (x,) = primals
        if self.kind in ("and", "or"):
            return [ops.zeros_like(x)]
        cot = _with_reduced_axes(cotangents[0], self.axes, self.keepdims)
        if self.kind == "sum":
            return [ops.broadcast_to(cot, x.shape)]
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
        """MLX's Reduce::vmap: the batch axis stays where it is and the reduced
        axes at or after it shift by one. Without ``keepdims`` the batch axis
        then moves left by the number of reduced axes before it."""
        # BEGIN TASK 5.2: vmap of the reductions
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        shifted = _shift_axes(self.axes, ax)
        out = make_array(Reduce(self.kind, shifted, self.keepdims), [x])
        return [out], [_out_batch_axis(ax, shifted, self.keepdims)]
        # END TASK 5.2

    def eval(self, inputs):
        (x,) = inputs
        if self.kind in ("max", "min") and any(x.shape[d] == 0 for d in self.axes):
            # The op refuses this; a primitive built by hand gets the same message.
            d = next(d for d in self.axes if x.shape[d] == 0)
            raise ValueError(
                f"[{self.kind}] Cannot {self.kind} reduce over axis {d} with size 0."
            )
        if self.kind == "sum" and list(self.axes) == list(range(len(self.axes))):
            # Summing leading axes (a bias gradient, say): add up columns.
            inner = math.prod(x.shape[len(self.axes) :])
            data = x.data()
            rows = [data[i : i + inner] for i in range(0, len(data), inner)] if data else []
            out = [sum(column) for column in zip(*rows)] if rows else [0] * inner
        else:
            fold = self._folds[self.kind]
            out = [fold(g) for g in _groups(x, self.axes)]
        return [_cast(out, self.output_dtypes(inputs)[0])]


# --- ArgReduce ----------------------------------------------------------------------


class ArgReduce(Primitive):
    """``argmax`` / ``argmin`` along one ``axis`` (``None``: the flattened array).

    The result's elements are Python ints (int32 in mlxref; MLX's is uint32).
    """

    _folds = {"argmax": _argmax, "argmin": _argmin}

    def __init__(self, kind, axis, keepdims=False):
        if kind not in self._folds:
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
        return [_dt.int32]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[0])]  # an index is piecewise constant

    def jvp(self, primals, tangents, argnums):
        # MLX's zero is uint32, its argmax dtype; mlxref's argmax is int32.
        return [ops.zeros(self.output_shapes(primals)[0], _dt.int32)]

    def vmap(self, inputs, axes):
        """MLX's ArgReduce::vmap for an int ``axis``: shift it past the batch
        axis. ``axis=None`` (the flattened example; MLX's op flattens before
        its primitive) reduces axis 1 of ``(batch, example size)``."""
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        if self.axis is not None:
            (axis,) = _shift_axes((self.axis,), ax)
            out = make_array(ArgReduce(self.kind, axis, self.keepdims), [x])
            return [out], [_out_batch_axis(ax, (axis,), self.keepdims)]
        example_ndim = x.ndim - 1
        out = make_array(ArgReduce(self.kind, 1), [_flat_examples(x, ax)])
        if self.keepdims:
            out = ops.reshape(out, out.shape + (1,) * example_ndim)
        return [out], [0]

    def eval(self, inputs):
        (x,) = inputs
        if x.size == 0:
            raise ValueError(f"[{self.kind}] Cannot {self.kind} reduce zero size array.")
        fold = self._folds[self.kind]
        try:
            return [[fold(g) for g in _groups(x, self._axes(x.ndim))]]
        except TypeError:
            raise TypeError(
                f"[{self.kind}] Cannot order symbolic elements; {self.kind} needs numbers."
            ) from None


# --- Scan ---------------------------------------------------------------------------


class Scan(Primitive):
    """The cumulative sum along ``axis`` (``None``: the flattened array).

    MLX's ``Scan`` also does cumprod, cummax, cummin and logcumsumexp (its
    ``reduce_type``); mlxref implements the sum, which ``mx.cumsum`` builds.
    ``reverse`` runs from the end; ``inclusive=False`` shifts by one so that
    each output leaves out its own element (the first is 0).
    """

    def __init__(self, axis, reverse=False, inclusive=True):
        self.axis = axis
        self.reverse = reverse
        self.inclusive = inclusive

    @property
    def name(self):
        return "CumSum"  # MLX's Scan::name() for a sum

    def params(self):
        return {"axis": self.axis, "reverse": self.reverse, "inclusive": self.inclusive}

    def output_shapes(self, inputs):
        x = inputs[0]
        return [(x.size,) if self.axis is None else x.shape]

    def output_dtypes(self, inputs):
        dtype = inputs[0].dtype
        return [_dt.int32 if dtype is _dt.bool_ else dtype]  # a running count of booleans

    def vjp(self, primals, cotangents, argnums, outputs):
        """A cumsum of the cotangent in the other direction (same ``inclusive``).

        Output ``j`` sums inputs ``i <= j``, so input ``i`` collects the
        cotangents of outputs ``j >= i``: a reverse scan.
        """
        (x,) = primals
        axis = 0 if self.axis is None else self.axis  # axis=None: the output is flat
        cot = ops.cumsum(cotangents[0], axis, reverse=not self.reverse, inclusive=self.inclusive)
        return [cot if self.axis is not None else ops.reshape(cot, x.shape)]

    def jvp(self, primals, tangents, argnums):
        return [ops.cumsum(tangents[0], self.axis, reverse=self.reverse, inclusive=self.inclusive)]

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
            (axis,) = _shift_axes((self.axis,), ax)
        return [make_array(Scan(axis, self.reverse, self.inclusive), [x])], [ax]

    def eval(self, inputs):
        (x,) = inputs
        (out_dtype,) = self.output_dtypes(inputs)
        zero = out_dtype.cast(0)
        if self.axis is None:
            return [_cast(self._scan(x.data(), zero), out_dtype)]
        axes = (self.axis,)
        runs = [self._scan(row, zero) for row in _groups(x, axes)]
        return [_cast(_ungroup(runs, x.shape, axes), out_dtype)]

    def _scan(self, row, zero):
        # BEGIN TASK 1.3: cumsum's forward rule: a running sum of one run
        if self.reverse:
            row = row[::-1]
        out = []
        total = None  # starting from the first element keeps SymPy results clean
        for v in row:
            if not self.inclusive:
                out.append(zero if total is None else total)
            total = v if total is None else total + v
            if self.inclusive:
                out.append(total)
        return out[::-1] if self.reverse else out
        # END TASK 1.3


# --- LogSumExp and Softmax ---------------------------------------------------------


def _logsumexp(group):
    """log(sum(exp(group))) of a run of numbers, stable: the max is taken out first.

    Then no exp overflows and the sum is at least 1. An infinite (or nan) max
    is the answer itself, as MLX's ``where(isinf(maxval), maxval, out)``: all
    -inf gives -inf, any +inf gives +inf.
    """
    # BEGIN TASK 1.2: logsumexp's forward rule: take the max out first
    m = _max(group)
    if m != m or m in (math.inf, -math.inf):
        return m
    return m + math.log(sum(math.exp(v - m) for v in group))
    # END TASK 1.2


def _logsumexp_symbolic(group):
    """The plain formula: SymPy elements have no max to take out."""
    return _scalar.sympy.log(sum(_scalar.sympy.exp(v) for v in group))


def _softmax(group):
    """exp(group) / sum(exp(group)), stable the same way (a -inf or +inf max gives nan)."""
    m = _max(group)
    e = [math.exp(v - m) for v in group]
    total = sum(e)
    return [v / total for v in e]


def _softmax_symbolic(group):
    """The plain formula, as for logsumexp."""
    e = [_scalar.sympy.exp(v) for v in group]
    total = sum(e)
    return [v / total for v in e]


class LogSumExp(Primitive):
    """``logsumexp`` over ``axes`` (sorted, non-negative), with ``keepdims``.

    mlxref's LogSumExp takes the axes directly; MLX's primitive reduces the
    last axis and ``mx.logsumexp`` composes the other cases (module docstring).
    The input is already a float array (the op casts).
    """

    def __init__(self, axes, keepdims=False):
        self.axes = tuple(axes)
        self.keepdims = keepdims

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
        """As Reduce's rule. (MLX's primitive only reduces the last axis, so
        its rule swaps a trailing batch axis out of the way; mlxref's takes
        any axes and simply shifts them.)"""
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        shifted = _shift_axes(self.axes, ax)
        out = make_array(LogSumExp(shifted, self.keepdims), [x])
        return [out], [_out_batch_axis(ax, shifted, self.keepdims)]

    def eval(self, inputs):
        (x,) = inputs
        if x.size == 0:
            raise ValueError("[logsumexp] Received empty array.")
        # scalar.apply maps over the runs: each "element" it passes is one run.
        return [_scalar.apply(_logsumexp, _logsumexp_symbolic, _groups(x, self.axes))]


class Softmax(Primitive):
    """``softmax`` over ``axes`` (sorted, non-negative); the output has x's shape.

    ``precise`` is MLX's flag for accumulating half-precision inputs in
    float32; mlxref always computes in Python floats, so it only prints.
    """

    def __init__(self, axes, precise=False):
        self.axes = tuple(axes)
        self.precise = precise

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
        return [make_array(Softmax(_shift_axes(self.axes, ax), self.precise), [x])], [ax]

    def eval(self, inputs):
        (x,) = inputs
        runs = _scalar.apply(_softmax, _softmax_symbolic, _groups(x, self.axes))
        return [_ungroup(runs, x.shape, self.axes)]
