"""What vjp, jvp and vmap share: tracers, the tape, and flat lists of arrays.

Read alongside: mlx/transforms.cpp, the first half of ``vjp`` and of ``jvp``
(``make_tracer`` and the depth-first search that builds the ``tape``), and
python/src/transforms.cpp, whose bindings check that primals and cotangents
are lists of arrays.

The tape is the part of the recorded graph between the primals and the
outputs that depends on a primal being differentiated, in topological order.
The search never crosses a primal (what made the primals is invisible) and
never enters a StopGradient node, so gradient flow stops there.
"""

import copy

from .. import graph
from ..array import array
from ..primitives.base import Copy, StopGradient, make_array


def make_tracer(primal):
    """A fresh node standing for ``primal`` inside a transform (a Copy of it)."""
    tracer = make_array(Copy(), [primal])
    tracer.set_tracer(True)
    return tracer


def trace(tag, fun, primals):
    """``(tracers, outputs)``: a tracer per primal, and ``fun``'s outputs on them.

    ``fun`` gets handles of its own, as MLX's binding hands a Python function
    new array objects: an assignment inside it (``x[i] = v``) re-points its
    handle, and the tracer stays the primal.
    """
    tracers = [make_tracer(p) for p in primals]
    with graph.InTracing():
        outputs = call_flat(tag, fun, [copy.copy(t) for t in tracers])
    return tracers, outputs


def build_tape(outputs, primals, calc_grad, through_stop_gradient=False):
    """The nodes between ``primals`` and ``outputs`` that depend on ``calc_grad``.

    ``primals`` are tracers; ``calc_grad`` are the ones being differentiated.
    Returns ``(tape, calc_grad_ids)``: the tape in topological order (one
    entry per primitive application; siblings share it) and the ids of every
    array that depends on a differentiated primal. Iterative, so deep graphs
    are fine. Differentiation stops at StopGradient nodes; vmap, which must
    batch them too, passes ``through_stop_gradient=True``.
    """
    cache = {p.id() for p in primals}
    calc_grad_ids = {p.id() for p in calc_grad}
    tape = []
    # (Plain loops rather than generator expressions: this visits every node.)
    for out in outputs:
        if out.id() in cache:
            continue
        for o in out.outputs():
            cache.add(o.id())
        stack = [(out, iter(out.inputs()))]
        while stack:
            a, inputs = stack[-1]
            for x in inputs:
                if x.id() not in cache:
                    for o in x.outputs():
                        cache.add(o.id())
                    stack.append((x, iter(x.inputs())))
                    break
            else:
                stack.pop()
                if not through_stop_gradient and isinstance(a.primitive(), StopGradient):
                    continue
                for x in a.inputs():
                    if x.id() in calc_grad_ids:  # a depends on a differentiated primal
                        tape.append(a)
                        for o in a.outputs():
                            calc_grad_ids.add(o.id())
                        break
    return tape, calc_grad_ids


def flat_arrays(tag, what, values):
    """``values`` as a list, if it is a flat list or tuple of arrays (MLX's binding check)."""
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, array) for v in values):
        raise TypeError(
            f"{tag}(): {what} must be a flat list of arrays, got {type(values).__name__}: "
            f"{values!r}."
        )
    return list(values)


def call_flat(tag, fun, args):
    """Call ``fun(*args)`` and return its outputs as a list of arrays."""
    out = fun(*args)
    if isinstance(out, array):
        return [out]
    if isinstance(out, (list, tuple)) and all(isinstance(o, array) for o in out):
        return list(out)
    # MLX raises "RuntimeError: std::bad_cast" here.
    raise TypeError(
        f"[{tag}] The function must return an array or a list or tuple of arrays; "
        f"but {type(out).__name__} was returned."
    )
