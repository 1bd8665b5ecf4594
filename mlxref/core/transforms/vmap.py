"""Vectorising map: ``mx.vmap``.

Read alongside: mlx/transforms.cpp ``vmap``, ``vmap_trace`` and
``vmap_replace``, and python/src/transforms.cpp ``py_vmap`` (trees of axes).
The algorithm, as MLX's two functions:

1. ``vmap_trace``: check the axes, then call the function on placeholders,
   arrays with the mapped axis removed and with neither data nor primitive
   (so ``eval`` inside vmap fails, as in MLX). Unmapped inputs are passed as
   they are.
2. ``vmap_replace``: walk the tape of nodes that depend on a placeholder in
   topological order; each node's primitive gets the batched inputs and their
   batch axes (``None`` for an input that is not batched) and returns batched
   outputs and their batch axes (``Primitive.vmap``), kept in ``tmap``. Then
   each output's batch axis moves to its ``out_axes``; an output that never
   depended on a mapped input is broadcast along a new batch axis.

MLX writes "not batched" as -1 inside its C++ rules; mlxref writes ``None``,
the same value users pass in ``in_axes``.
"""

import copy
import functools

from ..array import placeholder
from ..printing import format_shape
from ..ops.common import incompatible_arguments
from ..primitives.base import make_arrays, move_batch_axis
from . import events, trees
from .tape import InTracing, build_tape, cycle_collector_paused

_SIGNATURE = "vmap(fun: Callable[P, R], in_axes: object = 0, out_axes: object = 0) -> Callable[P, R]"
_PREFIX_ERROR = "[tree_map] Additional input tree is not a valid prefix of the first tree."
_AXIS_TYPE_ERROR = "[vmap] axis must be int or None."


class VmapAxisError(IndexError, ValueError):
    """An axis outside its array: MLX 0.32's binding raises IndexError, later
    versions (python/src/transforms.cpp ``axes_to_flat_tree``) ValueError with
    the same message; this is both, so code written for either runs."""


def vmap(fun, in_axes=0, out_axes=0):
    """Return ``fun`` vectorised over axis ``in_axes`` of its inputs.

    ``in_axes`` and ``out_axes`` are ints, ``None`` (in_axes only) or trees that
    are prefixes of the arguments and outputs. With a single positional
    argument, ``in_axes`` is matched against that argument itself, as in MLX.

    >>> import mlxref.core as mx
    >>> mx.vmap(lambda x: (x * x).sum())(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    array([5, 25], dtype=float32)
    """
    if not callable(fun):
        optional = {k: v for k, v in (("in_axes", in_axes), ("out_axes", out_axes)) if v != 0}
        raise incompatible_arguments(_SIGNATURE, [fun], optional)
    if in_axes is None or out_axes is None:  # nanobind refuses None for an object
        optional = {k: v for k, v in (("in_axes", in_axes), ("out_axes", out_axes)) if v != 0}
        raise incompatible_arguments(_SIGNATURE, [fun], optional)

    @functools.wraps(fun)
    def vectorized(*args, **kwargs):
        if kwargs:
            raise TypeError("[vmap] Keyword arguments are not supported.")
        inputs = trees.flatten(args)  # every leaf must be an array
        # With one argument MLX matches in_axes against the argument itself.
        axes = axes_for((in_axes,) if len(args) == 1 else in_axes, args,
                        single=args[0] if len(args) == 1 else None)
        axes = [ax + x.ndim if ax is not None and ax < 0 else ax for x, ax in zip(inputs, axes)]
        s_inputs, s_outputs_tree = vmap_trace(fun, args, inputs, axes)
        s_outputs = trees.flatten(s_outputs_tree)  # non-array outputs raise MLX's message
        outputs = vmap_replace(
            inputs, s_inputs, s_outputs, axes, axes_for(out_axes, s_outputs_tree)
        )
        return trees.unflatten(s_outputs_tree, outputs)

    return vectorized


def vmap_trace(fun, args, inputs, in_axes):
    """Call ``fun`` on the arguments ``args`` with each mapped input (the leaves
    ``inputs``, mapped on ``in_axes``) replaced by a placeholder of one example.

    Returns ``(s_inputs, s_outputs)``: the traced inputs and the output tree.
    """
    _vmap_size(inputs, in_axes)  # MLX's checks, before anything runs
    s_inputs = []
    for x, ax in zip(inputs, in_axes):
        if ax is None:
            s_inputs.append(x)
        else:
            # MLX's array(shape, dtype, nullptr, {}): neither data nor primitive.
            s_inputs.append(placeholder(x.shape[:ax] + x.shape[ax + 1 :], x.dtype))
    with InTracing():  # the function gets its own handles, as in vjp
        s_outputs = fun(*trees.unflatten(args, [copy.copy(s) for s in s_inputs]))
    return s_inputs, s_outputs


def vmap_replace(inputs, s_inputs, s_outputs, in_axes, out_axes):
    """Replay the traced graph batched; the outputs with their batch axes at ``out_axes``."""
    size = _vmap_size(inputs, in_axes)
    placeholders = [s for s, ax in zip(s_inputs, in_axes) if ax is not None]
    # tmap: id of a traced array -> (its batched value, its batch axis or None)
    tmap = {s.id(): (x, ax) for x, s, ax in zip(inputs, s_inputs, in_axes) if ax is not None}
    with cycle_collector_paused():
        tape, _ = build_tape(s_outputs, placeholders, placeholders, through_stop_gradient=True)
        listening = events.active()
        if listening:
            events.announce(events.Begin("vmap", placeholders, s_outputs, tape))
        for position, a in enumerate(tape):
            pairs = [tmap.get(x.id(), (x, None)) for x in a.inputs()]
            v_inputs = [v for v, _ in pairs]
            v_axes = [ax for _, ax in pairs]
            if all(ax is None for ax in v_axes):
                # A rule upstream (Depends, a custom vmap) returned an unbatched
                # output: this node is the same for every example, so it is
                # rebuilt on the replayed inputs, unbatched.
                v_outputs = make_arrays(a.primitive(), v_inputs)
                v_out_axes = [None] * len(v_outputs)
            else:
                v_outputs, v_out_axes = a.primitive().vmap(v_inputs, v_axes)
                if listening:
                    events.announce(events.VmapStep(position, a, v_axes, list(v_out_axes)))
            for out, v, ax in zip(a.outputs(), v_outputs, v_out_axes):
                tmap[out.id()] = (v, ax)
        return [
            _place_batch_axis(*tmap.get(s.id(), (s, None)), want, size)
            for s, want in zip(s_outputs, out_axes)
        ]


def _place_batch_axis(value, axis, want, size):
    """``value`` (batched on ``axis``, or not batched) with its batch axis at ``want``."""
    ndim = value.ndim + (1 if axis is None else 0)
    if want is None:
        raise ValueError("[vmap] out_axes must be ints: every output gets a batch axis.")
    if want < 0:  # reported normalised, as MLX does
        want += ndim
    if not 0 <= want < ndim:
        shape = value.shape if axis is None else value.shape[:axis] + value.shape[axis + 1 :]
        raise VmapAxisError(
            f"[vmap] Invalid output vectorization axis {want} for array with shape "
            f"{format_shape(shape)}"
        )
    if axis == want:
        return value
    return move_batch_axis(value, axis, size, want)


def _vmap_size(inputs, in_axes):
    """The common size of the mapped axes, with MLX's checks and messages: a
    negative axis counts from the end (and is reported normalised), and the
    sizes must agree."""
    sizes = []
    for x, ax in zip(inputs, in_axes):
        if ax is None:
            continue
        if not 0 <= ax < x.ndim:
            raise VmapAxisError(
                f"[vmap] Invalid vectorization axis {ax} for array with shape {format_shape(x.shape)}"
            )
        sizes.append(x.shape[ax])
    if not sizes:
        raise ValueError("At least one of in_axes must be non-None.")
    for n in sizes:
        if n != sizes[-1]:  # MLX names the first size that differs from the last one
            raise ValueError(f"[vmap] Inconsistent axis sizes: {n} and {sizes[-1]}.")
    return sizes[-1]


def axes_for(prefix, tree, single=None):
    """One axis (an int or None) per leaf of ``tree``, from the prefix tree ``prefix``.

    A one-element tuple stands for its axis only when what it is matched
    against is ``single`` (by default the whole tree) and that is an array.
    """
    single = tree if single is None else single
    out = []

    def leaf_axis(p, t):
        if p is not None and not isinstance(p, int):
            raise ValueError(_AXIS_TYPE_ERROR)
        return None if p is None else int(p)

    def walk(p, t):
        if not trees.is_container(t):
            if isinstance(p, tuple) and len(p) == 1:  # MLX takes (0,) for a single array
                if t is not single:  # ... only when the whole tree is that array
                    raise ValueError(_AXIS_TYPE_ERROR)
                p = p[0]
            out.append(leaf_axis(p, t))
            return
        if not trees.is_container(p):
            for leaf in trees.flatten(t, strict=False):
                out.append(leaf_axis(p, leaf))
            return
        if type(p) is not type(t) and not (isinstance(p, tuple) and isinstance(t, tuple)):
            raise ValueError(_PREFIX_ERROR)
        if isinstance(t, dict):
            if len(p) != len(t):
                raise ValueError(_PREFIX_ERROR)
            if set(p) != set(t):  # as many keys, not the same ones
                raise ValueError("[tree_visit] Tree is not a valid prefix tree of the first tree.")
            for k in t:
                walk(p[k], t[k])
        else:
            if len(p) != len(t):
                raise ValueError(_PREFIX_ERROR)
            for pi, ti in zip(p, t):
                walk(pi, ti)

    try:
        walk(prefix, tree)
    finally:
        del walk  # a recursive closure is a cycle: it would hold the tree's arrays
    return out
