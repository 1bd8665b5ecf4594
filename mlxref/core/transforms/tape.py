"""What vjp and jvp share: tracers for the primals, and the tape.

Read alongside: mlx/transforms.cpp, the first half of ``vjp`` (``make_tracer``
and the depth-first search that builds ``tape``) and of ``jvp``.

The tape is the part of the recorded graph between the primals and the
outputs that depends on a primal being differentiated, in topological order.
The search never crosses a primal (what made the primals is invisible) and
never enters a StopGradient node, so gradient flow stops there.
"""

from ..array import array
from ..primitives.base import Copy, StopGradient


def make_tracer(primal):
    """A fresh node standing for ``primal`` inside a transform (a Copy of it)."""
    tracer = array._node(primal.shape, primal.dtype, Copy(), [primal])
    tracer._tracer = True
    return tracer


def build_tape(outputs, primals, active, through_stop_gradient=False):
    """The nodes between ``primals`` and ``outputs`` that depend on ``active``.

    ``primals`` are tracers; ``active`` are the ones being differentiated.
    Returns ``(tape, depends)``: the tape in topological order (one entry per
    primitive application; siblings share it) and the set of ids of every array
    that depends on an active primal. Iterative, so deep graphs are fine.
    Differentiation stops at StopGradient nodes; vmap, which must batch them
    too, passes ``through_stop_gradient=True``.
    """
    visited = {id(p) for p in primals}
    depends = {id(p) for p in active}
    tape = []
    for out in outputs:
        if id(out) in visited:
            continue
        stack = [(out, iter(out._inputs))]
        _visit(out, visited)
        while stack:
            node, inputs = stack[-1]
            for x in inputs:
                if id(x) not in visited:
                    _visit(x, visited)
                    stack.append((x, iter(x._inputs)))
                    break
            else:
                stack.pop()
                if not through_stop_gradient and isinstance(node._primitive, StopGradient):
                    continue
                if any(id(x) in depends for x in node._inputs):
                    tape.append(node)
                    depends.update(id(o) for o in node.outputs())
    return tape, depends


def _visit(node, visited):
    for o in node.outputs():
        visited.add(id(o))
