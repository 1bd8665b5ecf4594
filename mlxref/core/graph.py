"""Evaluation of lazy graphs, the memory counters, and the tracing state.

Read alongside: mlx/transforms.cpp ``eval_impl`` (evaluation and ``detach``),
mlx/transforms_impl.h (``InTracing``, ``RetainGraph``) and mlx/memory.h.

An array is either *evaluated* (it holds its elements) or a *node* (it holds
its primitive and its inputs). ``eval_arrays`` finds the unevaluated part of
the graph behind the requested arrays with an iterative depth-first search,
computes each node once in post-order, and then ``detach``es it: the node drops
its primitive and inputs, so intermediates nothing else refers to are freed at
once. Arrays that are being traced by a transform keep their graph
(``is_tracer``). ``mx.eval`` itself, which takes trees, is in
``transforms/eval.py``, as MLX's is in transforms.cpp.

The search and the evaluation loop read each array's descriptor (``_desc``:
``data``, ``id``, ``primitive``, ``inputs``) directly, where the transforms
call ``is_available()``, ``id()``, ``primitive()``, ``inputs()``: they run
for every node, and in Python the method call costs more than the read
(MLX's accessors are inline).
"""

import contextvars
import gc
import threading

# --- tracing state -------------------------------------------------------------
# Each is a context variable, so threads (and asyncio tasks) never see each
# other's transforms. MLX keeps the same state in thread-locals.

_tracing = contextvars.ContextVar("mlxref_tracing", default=0)
_retain_graph = contextvars.ContextVar("mlxref_retain_graph", default=0)


class _Counting:
    """A context manager that counts itself in ``var`` while it is active."""

    __slots__ = ("_token",)  # (no instance dict: one is made around every vjp rule)
    var = None

    def __enter__(self):
        self._token = self.var.set(self.var.get() + 1)

    def __exit__(self, exc_type, exc, traceback):
        self.var.reset(self._token)


class InTracing(_Counting):
    """Context manager: a transform is tracing a function inside this block."""

    __slots__ = ()
    var = _tracing


class RetainGraph(_Counting):
    """Context manager: while active, ``eval`` detaches nothing (used around vjp rules)."""

    __slots__ = ()
    var = _retain_graph


def in_tracing():
    return _tracing.get() > 0


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


# --- memory ---------------------------------------------------------------------


class _Memory:
    """Bytes of evaluated element data alive (elements x itemsize), like MLX.

    Arrays that share one element list (a reshape, a copy, stop_gradient, the
    outputs of a custom function) share one buffer, as they do in MLX, so it is
    counted once: ``buffers`` maps a list's id to [holders, nbytes]. The lock
    keeps the counts right when threads evaluate or free arrays at once.
    """

    # One instance, ``_memory``: its slots are cheaper to update than class
    # attributes (every array allocates and frees through them).
    __slots__ = ("active", "peak", "buffers", "lock")

    def __init__(self):
        self.active = 0
        self.peak = 0
        self.buffers = {}
        self.lock = threading.Lock()  # nothing inside it can free an array, so it is never re-entered


_memory = _Memory()


# (acquire/release rather than ``with``: these run for every array, and the
# lock's __enter__/__exit__ cost more than the counting.)


def allocate(data, nbytes):
    """Count ``data`` (a new element list, or one more holder of a counted one)."""
    key = id(data)
    _memory.lock.acquire()
    try:
        entry = _memory.buffers.get(key)
        if entry is not None:
            entry[0] += 1
            return
        _memory.buffers[key] = [1, nbytes]
        _memory.active += nbytes
        if _memory.active > _memory.peak:
            _memory.peak = _memory.active
    finally:
        _memory.lock.release()


def free(data):
    """One holder of ``data`` is gone; the last one returns its bytes."""
    key = id(data)
    _memory.lock.acquire()
    try:
        entry = _memory.buffers[key]
        entry[0] -= 1
        if entry[0] == 0:
            del _memory.buffers[key]
            _memory.active -= entry[1]
    finally:
        _memory.lock.release()


def get_active_memory():
    """``mx.get_active_memory()``: bytes of element data held by live arrays."""
    return _memory.active


def get_peak_memory():
    """``mx.get_peak_memory()``: the most ``get_active_memory()`` has been since the last reset."""
    return _memory.peak


def reset_peak_memory():
    """``mx.reset_peak_memory()``: set the peak to 0; the next allocation raises it again."""
    _memory.peak = 0


# --- eval -------------------------------------------------------------------------

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
        desc = out._desc
        if desc.data is not None or desc.id in seen:
            continue
        seen.add(desc.id)
        stack = [(out, iter(desc.inputs))]
        while stack:
            node, inputs = stack[-1]
            for x in inputs:
                desc = x._desc
                if desc.data is None and desc.id not in seen:
                    seen.add(desc.id)
                    stack.append((x, iter(desc.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def eval_arrays(outputs):
    """Evaluate a flat list of arrays (MLX's ``eval_impl``)."""
    with _eval_lock, cycle_collector_paused():
        order = _unevaluated_postorder(outputs)
        # ``node.is_tracer()``, with the tracing state read once: an eval
        # leaves it as it found it.
        keep_graphs, tracing = retain_graph(), in_tracing()
        for i, node in enumerate(order):
            order[i] = None  # the order must not keep intermediates alive
            desc = node._desc
            if desc.data is not None:  # computed already as a sibling
                continue
            primitive = desc.primitive
            if primitive is None:
                raise ValueError(
                    "[eval] Attempting to eval an array during function "
                    "transformations like compile or vmap is not allowed."
                )
            outputs = node.outputs()
            for out, data in zip(outputs, primitive.eval(desc.inputs)):
                # What a kernel stores: the results rounded or wrapped to the
                # output's dtype (mlxref/core/dtypes.py). A primitive that only
                # moves its inputs' elements has nothing to round.
                out._set_data(data if primitive.moves_elements else out._desc.dtype.store(data))
            if not (keep_graphs or (tracing and desc.is_tracer)):  # tracers keep their graph
                for out in outputs:
                    out.detach()
