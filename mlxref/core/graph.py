"""Evaluation of lazy graphs, and the tracing state.

Read alongside: mlx/transforms.cpp ``eval_impl`` (evaluation and ``detach``)
and mlx/transforms_impl.h (``InTracing``, ``RetainGraph``).

An array is either *evaluated* (it holds its elements) or a *node* (it holds
its primitive and its inputs). ``eval_arrays`` finds the unevaluated part of
the graph behind the requested arrays with an iterative depth-first search,
computes each node once in post-order, and then ``detach``es it: the node drops
its primitive and inputs, so intermediates nothing else refers to are freed at
once. Arrays that are being traced by a transform keep their graph
(``is_tracer``). ``mx.eval`` itself, which takes trees, is in
``transforms/eval.py``, as MLX's is in transforms.cpp.

Each computed list is handed to the allocator's bookkeeping through
``array.set_data``, and an elementwise node may take over a dying input's
buffer (``allocator.donate``): mlxref/core/backend/cpu/allocator.py.

Not in MLX: ``charging(charge)`` hands each evaluation's nodes to ``charge``
before any is computed, so a caller (mlxref.viz's work budget) can refuse it.

Read next: mlxref/core/transforms/eval.py (``mx.eval``),
mlxref/core/backend/cpu/allocator.py (the memory counters and donation).
"""

import contextvars
import gc
import threading

from .backend.cpu import allocator

# --- tracing state -------------------------------------------------------------
# Each is a context variable, so threads (and asyncio tasks) never see each
# other's transforms. MLX keeps the same state in thread-locals.

_tracing = contextvars.ContextVar("mlxref_tracing", default=0)
_retain_graph = contextvars.ContextVar("mlxref_retain_graph", default=0)
_dynamic = contextvars.ContextVar("mlxref_dynamic_tracing", default=0)


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


def in_tracing():
    return _tracing.get() > 0


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
            gc.enable()


# --- errors kept for synchronize ------------------------------------------------

# A kernel's failure inside ``async_eval``, kept until ``synchronize`` (MLX
# runs the kernel on its stream's thread and rethrows its error there).
_deferred = []
_deferred_lock = threading.Lock()


def defer_error(error):
    """Keep ``error`` (a kernel's RuntimeError from ``async_eval``) for ``synchronize``."""
    with _deferred_lock:
        _deferred.append(error)


def raise_deferred():
    """Raise the first error ``async_eval`` kept, forgetting them all; else nothing."""
    with _deferred_lock:
        errors = _deferred[:]
        _deferred.clear()
    if errors:
        raise errors[0]


# --- eval -------------------------------------------------------------------------

# A work budget (not in MLX): ``charging(charge)`` makes ``eval_arrays`` call
# ``charge(nodes)`` with the nodes it is about to compute, before it computes
# any (their shapes and primitives say what they cost), so the caller can
# refuse the work before it is done. mlxref.viz switches it on while it
# evaluates what it draws (mlxref/viz/limits.py says what a node costs).
_charge = contextvars.ContextVar("mlxref_charge", default=None)


class charging:
    """Context manager: ``charge`` sees the nodes of every evaluation in this thread inside
    the block, before they are computed."""

    __slots__ = ("charge", "_token")

    def __init__(self, charge):
        self.charge = charge

    def __enter__(self):
        self._token = _charge.set(self.charge)
        return self.charge

    def __exit__(self, exc_type, exc, traceback):
        _charge.reset(self._token)


def current_charge():
    """The ``charge`` in force in this thread, or None."""
    return _charge.get()


# One evaluation at a time: a second thread asking for the same node waits and
# then finds it computed, so every node is computed exactly once.
_eval_lock = threading.RLock()


def _unevaluated_postorder(outputs):
    """The unevaluated nodes behind ``outputs``, inputs before their consumers.

    Iterative, so a chain 100,000 nodes deep needs no recursion. Inputs are
    visited in argument order, so each branch is computed just before the node
    that consumes it: intermediates live as briefly as the order allows.
    """
    order = []
    seen = set()
    for out in outputs:
        if out.is_available() or out.id() in seen:
            continue
        seen.add(out.id())
        stack = [(out, iter(out.inputs()))]
        while stack:
            node, inputs = stack[-1]
            for x in inputs:
                if not x.is_available():
                    key = x.id()
                    if key not in seen:
                        seen.add(key)
                        stack.append((x, iter(x.inputs())))
                        break
            else:
                stack.pop()
                order.append(node)
    return order


def eval_arrays(outputs):
    """Evaluate a flat list of arrays (MLX's ``eval_impl``)."""
    charge = _charge.get()
    with _eval_lock, cycle_collector_paused():
        order = _unevaluated_postorder(outputs)
        if charge is not None:
            charge(order)
        for i, node in enumerate(order):
            order[i] = None  # the order must not keep intermediates alive
            if node.is_available():  # computed already as a sibling
                continue
            primitive = node.primitive()
            if primitive is None:
                raise ValueError(
                    "[eval] Attempting to eval an array during function "
                    "transformations like compile or vmap is not allowed."
                )
            outputs = node.outputs()
            inputs = node.inputs()
            results = primitive.eval(inputs)
            kept = node.is_tracer()  # tracers keep their graph for the transform
            if primitive.donates and not kept and len(outputs) == 1:
                allocator.donate(inputs, outputs[0], results[0])
            for out, data in zip(outputs, results):
                if out.is_available():  # a sibling kept from an earlier eval (see array._sibling)
                    continue
                # What a kernel stores: the results rounded or wrapped to the
                # output's dtype (mlxref/core/dtypes.py). A primitive that only
                # moves its inputs' elements has nothing to round.
                if primitive.view:  # shares its input's buffer in MLX
                    out.set_data(data, view_of=inputs[0].data())
                else:
                    out.set_data(data if primitive.moves_elements else out.dtype.store(data))
            # Let go of this node's lists, so the next node can find its input's
            # list referred to by that input alone (``allocator.donate``).
            inputs = results = data = None
            if not kept:
                for out in outputs:
                    out.detach()
