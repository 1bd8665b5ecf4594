"""Forward mode: ``mx.jvp``, the Jacobian-vector product.

Read alongside: mlx/transforms.cpp ``jvp``. Like MLX, it traces the whole
function first and then walks the same tape as vjp, forwards: each node's
primitive turns the tangents of its inputs into tangents of its outputs
(``Primitive.jvp``). Outputs the walk never reached get ``zeros_like``.

One forward pass gives one Jacobian column (J v), so forward mode wins when
outputs outnumber inputs; reverse mode gives one row (uᵀ J) per pass.
"""

from .. import graph
from . import events
from .tape import build_tape, make_tracer
from .vjp import _flat_arrays, call_flat


def jvp(fun, primals, tangents):
    """``mx.jvp(fun, primals, tangents) -> (outputs, jvps)``; both flat lists.

    >>> import mlxref.core as mx
    >>> outputs, jvps = mx.jvp(lambda x: x * x, [mx.array(3.0)], [mx.array(1.0)])
    >>> jvps
    [array(6, dtype=float32)]
    """
    primals = _flat_arrays("jvp", "primals", primals)
    tangents = _flat_arrays("jvp", "tangents", tangents)
    return jvp_impl(lambda *xs: call_flat("jvp", fun, xs), primals, tangents)


def jvp_impl(fun, primals, tangents):
    with graph.cycle_collector_paused():  # see graph.cycle_collector_paused
        return _jvp(fun, primals, tangents)


def _jvp(fun, primals, tangents):
    if len(primals) != len(tangents):
        raise ValueError("[jvp] Number of inputs does not match number of tangents.")
    for p, t in zip(primals, tangents):
        if p.shape != t.shape:
            raise ValueError("[jvp] Input shape does not match shape of tangent.")
    with graph.InTracing("grad"):
        tracers = [make_tracer(p) for p in primals]
        outputs = fun(*tracers)

    tape, _ = build_tape(outputs, tracers, tracers)
    tan = {id(tr): t for tr, t in zip(tracers, tangents)}

    listening = events.active()
    if listening:
        events.announce(events.Begin("jvp", tracers, outputs, tape))
    with graph.RetainGraph():
        # BEGIN TASK 4.2: the jvp walk: the tape forwards
        for position, node in enumerate(tape):
            inputs = list(node._inputs)
            argnums = [i for i, x in enumerate(inputs) if id(x) in tan]
            incoming = [tan[id(inputs[i])] for i in argnums]
            produced = node._primitive.jvp(inputs, incoming, argnums)
            if listening:
                events.announce(events.Step("jvp", position, node, argnums, incoming, produced))
            for o, t in zip(node.outputs(), produced):
                tan[id(o)] = t
        # END TASK 4.2

    from ..ops.creation import zeros_like

    jvps = [tan[id(o)] if id(o) in tan else zeros_like(o) for o in outputs]
    return list(outputs), jvps
