"""Forward mode: ``mx.jvp``, the Jacobian-vector product.

Read alongside: mlx/transforms.cpp ``jvp``. Like MLX, it traces the whole
function first and then walks the same tape as vjp, forwards: each node's
primitive turns the tangents of its inputs into the tangents of its outputs
(``Primitive.jvp``), kept in ``tan_map``. Outputs the walk never reached get
``zeros_like``.

One forward pass gives one Jacobian column (J v), so forward mode wins when
outputs outnumber inputs; reverse mode gives one row (uᵀ J) per pass.
"""

from .. import ops
from ..ops.common import check_callable
from . import events
from .tape import RetainGraph, build_tape, cycle_collector_paused, trace
from .trees import flat_arrays


def jvp(fun, primals, tangents):
    """``mx.jvp(fun, primals, tangents) -> (outputs, jvps)``; both flat lists.

    >>> import mlxref.core as mx
    >>> outputs, jvps = mx.jvp(lambda x: x * x, [mx.array(3.0)], [mx.array(1.0)])
    >>> jvps
    [array(6, dtype=float32)]
    """
    check_callable(fun, "jvp")
    primals = flat_arrays("jvp", "primals", primals)
    tangents = flat_arrays("jvp", "tangents", tangents)
    if len(primals) != len(tangents):
        raise ValueError("[jvp] Number of inputs does not match number of tangents.")
    for p, t in zip(primals, tangents):
        if p.shape != t.shape:
            raise ValueError("[jvp] Input shape does not match shape of tangent.")
    with cycle_collector_paused():
        tracers, outputs = trace("jvp", fun, primals)

        tape, _ = build_tape(outputs, tracers, tracers)
        tan_map = {t.id(): tangent for t, tangent in zip(tracers, tangents)}

        listening = events.active()
        if listening:
            events.announce(events.Begin("jvp", tracers, outputs, tape))
        # BEGIN TASK 4.2: the jvp walk: the tape forwards
        for position, a in enumerate(tape):
            inputs = a.inputs()
            argnums = [k for k, x in enumerate(inputs) if x.id() in tan_map]
            tangents = [tan_map[inputs[k].id()] for k in argnums]
            with RetainGraph():  # a rule may evaluate; the graph must survive it
                jvps = a.primitive().jvp(inputs, tangents, argnums)
            if listening:
                events.announce(events.JvpStep(position, a, argnums, tangents, jvps))
            for o, t in zip(a.outputs(), jvps):
                tan_map[o.id()] = t
        # END TASK 4.2

        jvps = [tan_map[o.id()] if o.id() in tan_map else ops.zeros_like(o) for o in outputs]
    return outputs, jvps
