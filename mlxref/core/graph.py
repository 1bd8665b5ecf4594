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

Not in MLX: ``charging(charge)`` hands each evaluation's nodes to ``charge``
before any is computed, so a caller (mlxref.viz's work budget) can refuse it.
"""

import contextvars
import gc
import os
import sys
import threading

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


# --- memory ---------------------------------------------------------------------


class _Memory:
    """Bytes of evaluated element data alive (elements x itemsize), like MLX.

    Arrays that share one element list (a reshape, a copy, stop_gradient, the
    outputs of a custom function) share one buffer, as they do in MLX, so it is
    counted once. A view (a broadcast, transpose or slice: ``Primitive.view``)
    has its own list in mlxref, but in MLX it shares its input's buffer, so it
    is counted as one more holder of that buffer: it costs nothing, and keeps
    the buffer alive after its input is gone. ``buffers`` maps a list's id to
    [holders of that list, buffer], and a buffer is [lists sharing it,
    nbytes]. The lock keeps the counts right when threads evaluate or free
    arrays at once.
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


def allocate(data, nbytes, view_of=None):
    """Count ``data`` (a new element list, one more holder of a counted one,
    or a view sharing the buffer of the counted list ``view_of``)."""
    key = id(data)
    _memory.lock.acquire()
    try:
        entry = _memory.buffers.get(key)
        if entry is not None:
            entry[0] += 1
            return
        source = _memory.buffers.get(id(view_of)) if view_of is not None else None
        if source is not None:
            buffer = source[1]
            buffer[0] += 1
        else:
            buffer = [1, nbytes]
            _memory.active += nbytes
            if _memory.active > _memory.peak:
                _memory.peak = _memory.active
        _memory.buffers[key] = [1, buffer]
    finally:
        _memory.lock.release()


def free(data):
    """One holder of ``data`` is gone; the last one lets go of its buffer, and
    the last list sharing a buffer returns its bytes."""
    key = id(data)
    _memory.lock.acquire()
    try:
        entry = _memory.buffers[key]
        entry[0] -= 1
        if entry[0] == 0:
            del _memory.buffers[key]
            buffer = entry[1]
            buffer[0] -= 1
            if buffer[0] == 0:
                _memory.active -= buffer[1]
    finally:
        _memory.lock.release()


def shares_buffer(data):
    """Does another list (a view) share ``data``'s buffer?"""
    entry = _memory.buffers.get(id(data))
    return entry is not None and entry[1][0] > 1


def get_active_memory():
    """``mx.get_active_memory()``: bytes of element data held by live arrays."""
    return _memory.active


def get_peak_memory():
    """``mx.get_peak_memory()``: the most ``get_active_memory()`` has been since the last reset."""
    return _memory.peak


def reset_peak_memory():
    """``mx.reset_peak_memory()``: set the peak to 0; the next allocation raises it again."""
    _memory.peak = 0


def _physical_memory():
    """Bytes of RAM, as mlx/backend/no_gpu/linux_memory.h reads them (0 if unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


class _Limits:
    """The limits MLX's CPU allocator keeps (mlx/backend/no_gpu/allocator.cpp).
    mlxref records them and hands them back; nothing enforces them (MLX's CPU
    allocator does not enforce its memory limit either)."""

    memory = int(0.8 * _physical_memory()) or 1 << 33
    cache = 32 << 20


_SIZE_T = range(2**64)


def _limit(name, limit):
    if not isinstance(limit, int) or isinstance(limit, bool) or limit not in _SIZE_T:
        from .ops.common import incompatible_arguments  # graph.py is imported before ops
        raise incompatible_arguments(f"{name}(limit: int) -> int", (limit,))
    return limit


def get_cache_memory():
    """``mx.get_cache_memory()``: always 0. MLX keeps freed buffers in a cache to
    reuse; mlxref's element lists go back to Python when the last array holding
    them goes, so there is never anything cached."""
    return 0


def clear_cache():
    """``mx.clear_cache()``: empty the cache, which in mlxref is always empty."""


def set_memory_limit(limit):
    """``mx.set_memory_limit(limit)``: record ``limit`` (bytes) and return the limit
    it replaces. The first one is MLX's CPU default, 0.8 x the machine's RAM.
    Recorded only: mlxref, like MLX's CPU build, never waits or fails on it."""
    limit = _limit("set_memory_limit", limit)
    with _memory.lock:
        _Limits.memory, old = limit, _Limits.memory
    return old


def get_memory_limit():
    """``mx.get_memory_limit()``: the limit ``set_memory_limit`` last recorded."""
    return _Limits.memory


def set_cache_limit(limit):
    """``mx.set_cache_limit(limit)``: record ``limit`` (bytes) and return the one it
    replaces (MLX's default: 32 MiB). mlxref caches nothing, so it has no effect."""
    limit = _limit("set_cache_limit", limit)
    with _memory.lock:
        _Limits.cache, old = limit, _Limits.cache
    return old


def set_wired_limit(limit):
    """``mx.set_wired_limit(limit)``: wiring memory is a Metal matter; as in MLX's
    CPU build the argument is checked, nothing is recorded and 0 is returned."""
    _limit("set_wired_limit", limit)
    return 0


# --- errors kept for synchronize ------------------------------------------------

# A kernel's failure inside ``async_eval``, kept until ``synchronize`` (MLX
# runs the kernel on its stream's thread and rethrows its error there).
_deferred = []


def defer_error(error):
    """Keep ``error`` (a kernel's RuntimeError from ``async_eval``) for ``synchronize``."""
    with _memory.lock:
        _deferred.append(error)


def raise_deferred():
    """Raise the first error ``async_eval`` kept, forgetting them all; else nothing."""
    with _memory.lock:
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


# MLX's is_donatable(in, out) (mlx/backend/common/utils.h): a buffer up to this
# many bytes larger than the output may still be reused for it.
_DONATION_EXTRA = 16384


def _refcount(obj):
    return sys.getrefcount(obj)


class _Holder:
    __slots__ = ("ref",)


def _sole_refcount():
    """What ``_refcount`` reports for an object one slot holds, read through a
    local name as ``_donate`` reads it: measured, not assumed, since what
    ``sys.getrefcount`` counts of its caller's frame differs between Pythons."""
    holder = _Holder()
    holder.ref = []
    ref = holder.ref
    return _refcount(ref)


_SOLE = _sole_refcount()


def _donate(inputs, node, result):
    """Buffer donation: let the output take over one input's buffer.

    MLX's elementwise and copy kernels write into an input's buffer instead of
    allocating one when nothing else can see that input (``is_donatable``: the
    node holds the only reference to the input's descriptor and the
    descriptor the only one to its buffer), the element sizes agree and the
    buffer is at most 16 KiB larger than the output; its slices and
    transposes are views of their input's buffer. So a chain ``abs(abs(x))``
    of a deleted ``x`` never holds two buffers, and ``get_peak_memory`` does
    not grow.

    mlxref's kernels compute a new list (lists are never mutated in place),
    so donation here means: the donor's list is released before the output's
    is counted, which is what MLX's counters see. (Python briefly held both
    lists while the kernel ran; the counters count arrays' buffers, as MLX's
    count its allocator's, and never a kernel's temporaries.) The reference
    counts stand for MLX's ``use_count``: an input handle of this node, its
    descriptor referred to by that handle alone, the list by that descriptor
    alone (reference counts, compared with ``_SOLE``).
    """
    (out,) = node.outputs()
    nbytes = out.size * out.dtype.size
    for x in inputs:
        d = x._desc
        data = d.data
        if (
            data is not None
            and data is not result
            and d.dtype.size == out.dtype.size
            and out.size <= len(data)  # (a compiled chain reads smaller inputs too)
            and len(data) * d.dtype.size <= nbytes + _DONATION_EXTRA
            and _refcount(d) == _SOLE  # held by x alone
            and _refcount(data) == _SOLE  # held by d alone
            and not shares_buffer(data)  # and no view shares its buffer
        ):
            d.data = None  # the node's handle is all that refers to it; it goes at detach
            free(data)
            return


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
                _donate(inputs, node, results[0])
            for out, data in zip(outputs, results):
                if out.is_available():  # a sibling kept from an earlier eval (see array._sibling)
                    continue
                # What a kernel stores: the results rounded or wrapped to the
                # output's dtype (mlxref/core/dtypes.py). A primitive that only
                # moves its inputs' elements has nothing to round.
                if primitive.view:  # shares its input's buffer in MLX
                    out._set_data(data, view_of=inputs[0].data())
                else:
                    out._set_data(data if primitive.moves_elements else out.dtype.store(data))
            # Let go of this node's lists, so the next node can find its input's
            # list referred to by that input alone (``_donate``).
            inputs = results = data = None
            if not kept:
                for out in outputs:
                    out.detach()
