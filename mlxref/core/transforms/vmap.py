"""Vectorising map: ``mx.vmap``.

Read alongside: mlx/transforms.cpp ``vmap_trace`` and ``vmap_replace``, and
python/src/transforms.cpp ``py_vmap`` (trees of axes). The algorithm:

1. Trace: call the function on placeholders, arrays with the mapped axis
   removed and with neither data nor primitive (so ``eval`` inside vmap
   fails, as in MLX). Unmapped inputs are passed as they are.
2. Replay: walk the tape of nodes that depend on a placeholder in
   topological order; each node's primitive gets the batched inputs and their
   batch axes (``None`` for an input that is not batched) and returns batched
   outputs and their batch axes (``Primitive.vmap``).
3. Move each output's batch axis to its ``out_axes`` with ``moveaxis``.
4. An output that never depended on a mapped input is broadcast along a new
   batch axis.

MLX writes "not batched" as -1 inside its C++ rules; mlxref writes ``None``,
the same value users pass in ``in_axes``.
"""

import functools

from .. import graph
from ..array import _fmt_shape, array
from . import events, trees
from .tape import build_tape

_PREFIX_ERROR = "[tree_map] Additional input tree is not a valid prefix of the first tree."


def vmap(fun, in_axes=0, out_axes=0):
    """Return ``fun`` vectorised over axis ``in_axes`` of its inputs.

    ``in_axes`` and ``out_axes`` are ints, ``None`` (in_axes only) or trees that
    are prefixes of the arguments and outputs. With a single positional
    argument, ``in_axes`` is matched against that argument itself, as in MLX.

    >>> import mlxref.core as mx
    >>> mx.vmap(lambda x: (x * x).sum())(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    array([5, 25], dtype=float32)
    """
    if in_axes is None or out_axes is None:
        raise TypeError("vmap(): in_axes and out_axes must be ints or trees of them, not None.")

    @functools.wraps(fun)
    def vectorized(*args, **kwargs):
        if kwargs:
            raise TypeError("[vmap] Keyword arguments are not supported.")
        inputs = trees.flatten(args)  # every leaf must be an array
        # With one argument MLX matches in_axes against the argument itself.
        axes_tree = (in_axes,) if len(args) == 1 else in_axes
        axes = _axes_for(axes_tree, args)
        outputs_tree, batched, size = _vmap_flat(fun, args, inputs, axes)
        outputs = trees.flatten(outputs_tree)
        out_axes_flat = _axes_for(out_axes, outputs_tree)
        results = []
        for out, (value, axis), want in zip(outputs, batched, out_axes_flat):
            results.append(_place_batch_axis(value, axis, want, size))
        return trees.unflatten(outputs_tree, results)

    return vectorized


def _vmap_flat(fun, args, inputs, axes):
    """Trace ``fun`` on placeholders and replay it batched.

    Returns the per-example output tree, then ``(batched output, batch axis)``
    for each output leaf (axis ``None``: not batched), and the batch size.
    """
    size = _batch_size(inputs, axes)
    placeholders = []
    traced_inputs = []
    for x, ax in zip(inputs, axes):
        if ax is None:
            traced_inputs.append(x)
            continue
        shape = x.shape[:ax] + x.shape[ax + 1 :]
        p = array._placeholder(shape, x.dtype)
        placeholders.append((p, x, ax))
        traced_inputs.append(p)

    with graph.InTracing("vmap"):
        outputs_tree = fun(*trees.unflatten(args, traced_inputs))
    outputs = trees.flatten(outputs_tree)  # non-array outputs raise MLX's message

    with graph.cycle_collector_paused():
        batched = _replay(outputs, placeholders)
    return outputs_tree, batched, size


def _replay(outputs, placeholders):
    """Step 2: run each node's vmap rule on the batched inputs."""
    tape, _ = build_tape(
        outputs, [p for p, _, _ in placeholders], [p for p, _, _ in placeholders],
        through_stop_gradient=True,
    )
    batched = {id(p): (x, ax) for p, x, ax in placeholders}
    listening = events.active()
    if listening:
        events.announce(events.Begin("vmap", [p for p, _, _ in placeholders], outputs, tape))
    for position, node in enumerate(tape):
        inputs = list(node._inputs)
        pairs = [batched.get(id(x), (x, None)) for x in inputs]
        values = [v for v, _ in pairs]
        if all(a is None for _, a in pairs):
            # A rule upstream (Depends, a custom vmap) returned an unbatched
            # output: this node is the same for every example; rebuild it on
            # the replayed inputs, unbatched.
            outs = node.outputs()
            shapes, dtypes = [o.shape for o in outs], [o.dtype for o in outs]
            if len(outs) == 1:
                rebuilt = [array._node(shapes[0], dtypes[0], node._primitive, values)]
            else:
                rebuilt = array._nodes(shapes, dtypes, node._primitive, values)
            for out, value in zip(outs, rebuilt):
                batched[id(out)] = (value, None)
            continue
        in_axes = [a for _, a in pairs]
        values, axes = node._primitive.vmap(values, in_axes)
        if listening:  # for vmap, "incoming" and "produced" are batch axes
            argnums = [i for i, a in enumerate(in_axes) if a is not None]
            events.announce(events.Step("vmap", position, node, argnums, in_axes, list(axes)))
        for out, value, axis in zip(node.outputs(), values, axes):
            batched[id(out)] = (value, axis)
    return [batched.get(id(o), (o, None)) for o in outputs]


def _place_batch_axis(value, axis, want, size):
    """Steps 3 and 4: the batch axis of ``value`` moved to ``want``."""
    from ..ops.common import broadcast_to
    from ..ops.shape import expand_dims, moveaxis

    ndim = value.ndim + (1 if axis is None else 0)
    if want is None or not isinstance(want, int):
        raise ValueError("[vmap] out_axes must be ints: every output gets a batch axis.")
    if want < 0:  # reported normalised, as MLX does
        want += ndim
    if not 0 <= want < ndim:
        shape = value.shape if axis is None else value.shape[:axis] + value.shape[axis + 1 :]
        raise IndexError(
            f"[vmap] Invalid output vectorization axis {want} for array with shape "
            f"{_fmt_shape(shape)}"
        )
    if axis is None:  # never depended on a mapped input: broadcast it
        expanded = expand_dims(value, want)
        shape = list(expanded.shape)
        shape[want] = size
        return broadcast_to(expanded, tuple(shape))
    return value if axis == want else moveaxis(value, axis, want)


def _batch_size(inputs, axes):
    """Normalise ``axes`` in place and return the common size of the mapped axes.

    MLX's checks and messages: a negative axis counts from the end (and is
    reported normalised), and sizes must agree.
    """
    sizes = []
    for i, (x, ax) in enumerate(zip(inputs, axes)):
        if ax is None:
            continue
        if ax < 0:
            ax = axes[i] = ax + x.ndim
        if not 0 <= ax < x.ndim:
            raise IndexError(
                f"[vmap] Invalid vectorization axis {ax} for array with shape {_fmt_shape(x.shape)}"
            )
        sizes.append(x.shape[ax])
    if not sizes:
        raise ValueError("At least one of in_axes must be non-None.")
    last = sizes[-1]
    for n in sizes:
        if n != last:  # MLX names the first size that differs from the last one
            raise ValueError(f"[vmap] Inconsistent axis sizes: {n} and {last}.")
    return last


def _axes_for(prefix, tree):
    """One axis per leaf of ``tree``, from the prefix tree ``prefix``."""
    out = []

    def walk(p, t):
        if not trees.is_container(t):
            if isinstance(p, tuple) and len(p) == 1:  # MLX takes (0,) for a single array
                p = p[0]
            if p is not None and not isinstance(p, int):
                raise ValueError("[vmap] axis must be int or None.")
            out.append(None if p is None else int(p))
            return
        if not trees.is_container(p):
            if p is not None and not isinstance(p, int):
                raise ValueError("[vmap] axis must be int or None.")
            for leaf in trees.flatten(t, strict=False):
                walk(p, leaf)
            return
        if type(p) is not type(t) and not (isinstance(p, tuple) and isinstance(t, tuple)):
            raise ValueError(_PREFIX_ERROR)
        if isinstance(t, dict):
            if set(p) != set(t):
                raise ValueError(_PREFIX_ERROR)
            for k in t:
                walk(p[k], t[k])
        else:
            if len(p) != len(t):
                raise ValueError(_PREFIX_ERROR)
            for pi, ti in zip(p, t):
                walk(pi, ti)

    walk(prefix, tree)
    return out
