"""What the transforms share: the tracing state, tracers, and the tape.

Read alongside: mlx/transforms_impl.h (``InTracing``, ``RetainGraph``,
``InExportTracing``, ``in_tracing``, ``in_dynamic_tracing``, ``retain_graph``,
``in_export_tracing``: how a transform tells the rest of the engine that it
is tracing, so evaluation keeps the graph, the ops build shapeless nodes and
a GPU kernel is recorded for export) and mlx/transforms.cpp, the first
half of ``vjp`` and of ``jvp`` (``make_tracer`` and the depth-first search
that builds the ``tape``). As in MLX, where mlx/array.cpp and mlx/ops.cpp
include transforms_impl.h, the array (``is_tracer``) and the ops read the
tracing state here.

The tape is the part of the recorded graph between the primals and the
outputs that depends on a primal being differentiated, in topological order.
The search never crosses a primal (what made the primals is invisible) and
never enters a StopGradient node, so gradient flow stops there.

Read next: mlxref/core/transforms/vjp.py (the tape walked in reverse),
mlxref/core/transforms/eval.py (evaluation, which keeps a tracer's graph).
"""

import contextvars
import copy
import gc

from ..primitives.base import Copy, StopGradient, make_array
from .trees import call_flat

# --- tracing state -------------------------------------------------------------
# Each is a context variable, so threads (and asyncio tasks) never see each
# other's transforms. MLX keeps the same state in thread-locals.

_tracing = contextvars.ContextVar("mlxref_tracing", default=0)
_retain_graph = contextvars.ContextVar("mlxref_retain_graph", default=0)
_dynamic = contextvars.ContextVar("mlxref_dynamic_tracing", default=0)
_export_tracing = contextvars.ContextVar("mlxref_export_tracing", default=0)


class _Counting:
    """A context manager that counts itself in ``var`` while it is active."""

    __slots__ = ("_token",)  # (no instance dict: one is made around every vjp rule)
    var = None

    def __enter__(self):
        self._token = self.var.set(self.var.get() + 1)

    def __exit__(self, exc_type, exc, traceback):
        self.var.reset(self._token)


class InTracing(_Counting):
    """Context manager: a transform is tracing a function inside this block.

    ``InTracing(dynamic=True)`` (MLX's ``InTracing{dynamic}``): a shapeless
    compile or export is tracing. Ops then build nodes whose shapes follow
    their inputs when the trace is replayed on other shapes: broadcasts that
    read the other operands' shapes, ``NumberOfElements`` instead of a
    constant count, a reshape that infers its -1 again.
    """

    __slots__ = ("dynamic", "_dynamic_token")
    var = _tracing

    def __init__(self, dynamic=False):
        self.dynamic = dynamic

    def __enter__(self):
        super().__enter__()
        if self.dynamic:
            self._dynamic_token = _dynamic.set(_dynamic.get() + 1)

    def __exit__(self, exc_type, exc, traceback):
        if self.dynamic:
            _dynamic.reset(self._dynamic_token)
        super().__exit__(exc_type, exc, traceback)


class RetainGraph(_Counting):
    """Context manager: while active, ``eval`` detaches nothing.

    Used around vjp and jvp rules, and by ``mlxref.viz.recording()``, which
    keeps the history of what is computed inside it for drawings.
    """

    __slots__ = ()
    var = _retain_graph


class InExportTracing(_Counting):
    """Context manager: ``export_function`` is tracing a function inside this block
    (MLX's ``InExportTracing``). A kernel of Metal source, which mlxref cannot
    run, is then recorded as a node instead of refused (``mx.fast.metal_kernel``)."""

    __slots__ = ()
    var = _export_tracing


def in_tracing():
    return _tracing.get() > 0


def in_export_tracing():
    return _export_tracing.get() > 0


def in_dynamic_tracing():
    return _dynamic.get() > 0


def retain_graph():
    return _retain_graph.get() > 0


class cycle_collector_paused:
    """Pause Python's cycle collector while a graph is built, walked or evaluated.

    Graphs hold no reference cycles (only a multi-output node's siblings refer
    to each other, until evaluation drops them), so reference counting frees
    everything. Left running, the collector would rescan every live node again
    and again as a long chain grows, making a 100,000-op gradient superlinear.
    (A class rather than a generator: every eval and transform enters one.)
    """

    __slots__ = ("_was_enabled",)

    def __enter__(self):
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, exc_type, exc, traceback):
        if self._was_enabled:
            if gc.get_count()[0] > _YOUNG_AFTER_A_BIG_GRAPH and not gc.get_freeze_count():
                # Every object made during the pause (a graph of 20,000 ops is
                # 230,000 of them) is still in the youngest generation, which
                # the collector would scan in full at the next allocation,
                # finding no cycle: 5% of such a gradient's time. Move them to
                # the oldest generation unscanned instead (``freeze`` then
                # ``unfreeze``: two list moves), unless the program froze
                # objects of its own. (A cycle among them waits for the next
                # full collection; after a small graph nothing changes.)
                gc.freeze()
                gc.unfreeze()
            gc.enable()


# How many objects a pause must leave young before they are moved unscanned.
_YOUNG_AFTER_A_BIG_GRAPH = 50_000


# --- tracers and the tape -------------------------------------------------------


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
    with InTracing():
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
    # A stack entry holds a node, its inputs and how far the search has gone
    # through them.
    for out in outputs:
        if out.id() in cache:
            continue
        for o in out.outputs():
            cache.add(o.id())
        inputs = out.inputs()
        stack = [(out, inputs, iter(inputs))]
        while stack:
            a, inputs, rest = stack[-1]
            for x in rest:
                if x.id() not in cache:
                    for o in x.outputs():
                        cache.add(o.id())
                    x_inputs = x.inputs()
                    stack.append((x, x_inputs, iter(x_inputs)))
                    break
            else:
                stack.pop()
                if not through_stop_gradient and isinstance(a.primitive(), StopGradient):
                    continue
                for x in inputs:
                    if x.id() in calc_grad_ids:  # a depends on a differentiated primal
                        tape.append(a)
                        for o in a.outputs():
                            calc_grad_ids.add(o.id())
                        break
    return tape, calc_grad_ids

