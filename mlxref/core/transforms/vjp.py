"""Reverse mode: ``mx.vjp``, the vector-Jacobian product.

Read alongside: mlx/transforms.cpp ``vjp`` (the same steps, under the same
names) and python/src/transforms.cpp (the binding). The algorithm:

1. Copy each primal into a tracer and call the function on the tracers.
2. Pair the outputs with the cotangents, skipping outputs made by
   stop_gradient (that is how ``value_and_grad`` ignores auxiliary outputs).
3. Build the tape: the nodes between the primals and the outputs that depend
   on a primal (``calc_grad``), in topological order (``tape.build_tape``).
4. Walk the tape in reverse. Each node's primitive turns the cotangents of its
   outputs into the vjps of its inputs (``Primitive.vjp``); vjps that reach
   the same array are summed with ``add`` in ``cotan_map``.
5. A primal the walk never reached gets ``zeros_like``.

``vjp`` returns ``(outputs, vjps)``: the function's outputs, and one product
per primal, shaped like that primal. The vjps are the products with respect
to the inputs, not the cotangents that were passed in.
"""

from .. import ops
from ..ops.common import check_callable
from ..printing import format_shape
from ..primitives.base import StopGradient
from . import events
from .tape import RetainGraph, build_tape, cycle_collector_paused, trace
from .trees import flat_arrays


def vjp(fun, primals, cotangents):
    """``mx.vjp(fun, primals, cotangents) -> (outputs, vjps)``; both flat lists.

    ``fun`` is called as ``fun(*primals)`` and returns an array or a list/tuple
    of arrays; ``cotangents`` has one array per output, outputs produced by
    ``stop_gradient`` taking none (as in MLX, a cotangent left over is not
    used; one more than there are outputs is an error).

    >>> import mlxref.core as mx
    >>> outputs, vjps = mx.vjp(lambda x: x * x, [mx.array(3.0)], [mx.array(1.0)])
    >>> vjps
    [array(6, dtype=float32)]
    """
    check_callable(fun, "vjp")
    primals = flat_arrays("vjp", "primals", primals)
    cotangents = flat_arrays("vjp", "cotangents", cotangents)
    with cycle_collector_paused():
        # 1. Tracers, and the function's outputs on them.
        tracers, outputs = trace("vjp", fun, primals)

        # 2. Pair the outputs with the cotangents.
        output_cotan_pairs = _pair(outputs, cotangents)

        # 3. The tape.
        tape, calc_grad = build_tape(outputs, tracers, tracers)

        # 4. Walk it in reverse, accumulating the vjps per array.
        cotan_map = {}
        for i, j in output_cotan_pairs:
            cotan_map[outputs[i].id()] = ops.astype(cotangents[j], outputs[i].dtype)
        listening = events.active()
        if listening:
            events.announce(events.Begin("vjp", tracers, outputs, tape))
        # BEGIN TASK 4.1: the vjp walk: the tape in reverse
        for position, a in enumerate(reversed(tape)):
            outs = a.outputs()
            # Loops, as in MLX (each comprehension would be a call per node).
            cotangents, reached = [], False
            for o in outs:
                cotangent = cotan_map.pop(o.id(), None)
                reached = reached or cotangent is not None
                cotangents.append(cotangent)
            if not reached:  # no output of this node leads to the outputs
                continue
            for i, o in enumerate(outs):
                if cotangents[i] is None:
                    cotangents[i] = ops.zeros_like(o)
            inputs = a.inputs()
            argnums, keys = [], []
            for k, x in enumerate(inputs):
                key = x.id()
                if key in calc_grad:
                    argnums.append(k)
                    keys.append(key)
            with RetainGraph():  # a rule may evaluate; the graph must survive it
                vjps = a.primitive().vjp(inputs, cotangents, argnums, outs)
            if listening:
                events.announce(events.VjpStep(position, a, argnums, cotangents, vjps))
            for key, v in zip(keys, vjps):
                cotan_map[key] = ops.add(cotan_map[key], v) if key in cotan_map else v
        # END TASK 4.1

        # 5. One vjp per primal, zeros where the walk never arrived.
        vjps = [cotan_map[t.id()] if t.id() in cotan_map else ops.zeros_like(t) for t in tracers]
    return outputs, vjps


def _pair(outputs, cotangents):
    """``(output index, cotangent index)`` for each output not made by stop_gradient."""
    pairs = []
    for i, out in enumerate(outputs):
        if isinstance(out.primitive(), StopGradient):
            continue
        j = len(pairs)
        if j >= len(cotangents):
            raise _count_error(outputs, cotangents)
        if out.shape != cotangents[j].shape:
            msg = (
                f"[vjp] Output shape {format_shape(out.shape)} does not match "
                f"cotangent shape {format_shape(cotangents[j].shape)}."
            )
            if len(outputs) == 1 and out.size == 1:
                msg += " If you are using grad your function must return a scalar."
            raise ValueError(msg)
        pairs.append((i, j))
    if len(cotangents) > len(outputs):  # MLX ignores these silently
        raise _count_error(outputs, cotangents)
    return pairs


def _count_error(outputs, cotangents):
    return ValueError(
        f"[vjp] Number of outputs to compute gradients for ({len(outputs)}) "
        f"does not match number of cotangents ({len(cotangents)})."
    )
