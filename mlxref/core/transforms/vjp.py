"""Reverse mode: ``mx.vjp``, the vector-Jacobian product.

Read alongside: mlx/transforms.cpp ``vjp`` and python/src/transforms.cpp (the
binding). The algorithm, top to bottom:

1. Copy each primal into a tracer and call the function on the tracers.
2. Pair the outputs with the cotangents, skipping outputs made by
   stop_gradient (that is how ``value_and_grad`` ignores auxiliary outputs).
3. Build the tape: the nodes between the primals and the outputs that depend
   on a primal being differentiated (``tape.build_tape``).
4. Walk the tape in reverse. Each node's primitive turns the cotangents of its
   outputs into cotangents of its inputs (``Primitive.vjp``); cotangents that
   reach the same array are summed with ``add``.
5. A primal the walk never reached gets ``zeros_like``.

``vjp`` returns ``(outputs, vjps)``: the function's outputs, and one product
per primal, shaped like that primal. The vjps are the products with respect
to the inputs, not the cotangents that were passed in.
"""

from .. import graph
from ..array import _fmt_shape, array
from ..primitives.base import StopGradient
from . import events
from .tape import build_tape, make_tracer


def vjp(fun, primals, cotangents):
    """``mx.vjp(fun, primals, cotangents) -> (outputs, vjps)``; both flat lists.

    ``fun`` is called as ``fun(*primals)`` and returns an array or a list/tuple
    of arrays; ``cotangents`` has one array per output (outputs produced by
    ``stop_gradient`` take none).

    >>> import mlxref.core as mx
    >>> outputs, vjps = mx.vjp(lambda x: x * x, [mx.array(3.0)], [mx.array(1.0)])
    >>> vjps
    [array(6, dtype=float32)]
    """
    primals = _flat_arrays("vjp", "primals", primals)
    cotangents = _flat_arrays("vjp", "cotangents", cotangents)
    return vjp_impl(lambda *xs: call_flat("vjp", fun, xs), primals, cotangents)


def vjp_impl(fun, primals, cotangents, argnums=None, output_check=None):
    """The algorithm. ``fun`` takes the tracers positionally and returns a list.

    ``argnums`` picks the primals to differentiate (default: all).
    ``output_check(outputs)`` lets grad report its own errors before pairing.
    """
    with graph.cycle_collector_paused():
        return _vjp(fun, primals, cotangents, argnums, output_check)


def _vjp(fun, primals, cotangents, argnums, output_check):
    if argnums is None:
        argnums = range(len(primals))
    with graph.InTracing("grad"):
        tracers = [make_tracer(p) for p in primals]
        outputs = fun(*tracers)
    if output_check is not None:
        output_check(outputs)

    # 2. Pair outputs with cotangents, skipping stop_gradient outputs.
    differentiable = [o for o in outputs if not isinstance(o._primitive, StopGradient)]
    if len(differentiable) != len(cotangents):
        # MLX ignores extra cotangents silently; mlxref rejects both mismatches.
        raise ValueError(
            f"[vjp] Number of outputs to compute gradients for ({len(differentiable)}) "
            f"does not match number of cotangents ({len(cotangents)})."
        )
    for out, cot in zip(differentiable, cotangents):
        if out.shape != cot.shape:
            msg = (
                f"[vjp] Output shape {_fmt_shape(out.shape)} does not match "
                f"cotangent shape {_fmt_shape(cot.shape)}."
            )
            if len(outputs) == 1 and out.size == 1:
                msg += " If you are using grad your function must return a scalar."
            raise ValueError(msg)

    # 3. The tape.
    active = [tracers[i] for i in argnums]
    tape, depends = build_tape(differentiable, tracers, active)

    # 4. Walk it in reverse, accumulating cotangents per array.
    from ..ops.common import astype
    from ..ops.elementwise import add
    from ..ops.creation import zeros_like

    cotan = {}
    for out, cot in zip(differentiable, cotangents):
        cot = astype(cot, out.dtype)
        cotan[id(out)] = add(cotan[id(out)], cot) if id(out) in cotan else cot

    listening = events.active()
    if listening:
        events.announce(events.Begin("vjp", tracers, outputs, tape))
    with graph.RetainGraph():  # a rule may evaluate; the graph must survive it
        # BEGIN TASK 4.1: the vjp walk: the tape in reverse
        for position, node in enumerate(reversed(tape)):
            outs = node.outputs()
            if not any(id(o) in cotan for o in outs):
                continue
            incoming = [cotan.pop(id(o)) if id(o) in cotan else zeros_like(o) for o in outs]
            inputs = list(node._inputs)
            node_argnums = [i for i, x in enumerate(inputs) if id(x) in depends]
            produced = node._primitive.vjp(inputs, incoming, node_argnums, list(outs))
            if listening:
                events.announce(
                    events.Step("vjp", position, node, node_argnums, incoming, produced)
                )
            for i, v in zip(node_argnums, produced):
                key = id(inputs[i])
                cotan[key] = add(cotan[key], v) if key in cotan else v
        # END TASK 4.1

    # 5. Collect, with zeros for primals the walk never reached.
    vjps = [cotan.get(id(tracers[i])) for i in argnums]
    vjps = [v if v is not None else zeros_like(tracers[i]) for v, i in zip(vjps, argnums)]
    return list(outputs), vjps


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


def _flat_arrays(tag, what, values):
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, array) for v in values):
        raise TypeError(
            f"{tag}(): {what} must be a flat list of arrays, got {type(values).__name__}: "
            f"{values!r}."
        )
    return list(values)
