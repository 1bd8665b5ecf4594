"""Evaluation of lazy graphs, the memory counters, and the tracing state.

Read alongside: mlx/transforms.cpp ``eval_impl`` (evaluation and ``detach``),
mlx/transforms_impl.h (``InTracing``, ``RetainGraph``) and mlx/memory.h.

An array is either *materialised* (it holds its elements) or a *node* (it holds
its primitive and its inputs). ``eval`` finds the unevaluated part of the graph
behind the requested arrays with an iterative depth-first search, computes each
node once in post-order, and then ``detach``es it: the node drops its primitive
and inputs, so intermediates nothing else refers to are freed at once. Arrays
that are being traced by a transform keep their graph (``is_tracer``).
"""

import contextlib
import contextvars
import gc

# --- tracing state -------------------------------------------------------------
# Each is a context variable, so threads (and asyncio tasks) never see each
# other's transforms. MLX keeps the same state in thread-locals.

_tracing = contextvars.ContextVar("mlxref_tracing", default=())  # stack of kinds
_retain_graph = contextvars.ContextVar("mlxref_retain_graph", default=0)


class InTracing:
    """Context manager: we are inside a transform of ``kind`` ("grad" or "vmap")."""

    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        self._token = _tracing.set(_tracing.get() + (self.kind,))
        return self

    def __exit__(self, *exc):
        _tracing.reset(self._token)


class RetainGraph:
    """Context manager: while active, ``eval`` detaches nothing (used by vjp rules)."""

    def __enter__(self):
        self._token = _retain_graph.set(_retain_graph.get() + 1)
        return self

    def __exit__(self, *exc):
        _retain_graph.reset(self._token)


def in_tracing():
    return bool(_tracing.get())


def in_grad_tracing():
    return "grad" in _tracing.get()


def in_vmap_tracing():
    return "vmap" in _tracing.get()


def retain_graph():
    return _retain_graph.get() > 0


@contextlib.contextmanager
def cycle_collector_paused():
    """Pause Python's cycle collector while a graph is built, walked or evaluated.

    Graphs hold no reference cycles (only a multi-output node's siblings refer
    to each other, until evaluation drops them), so reference counting frees
    everything. Left running, the collector would rescan every live node again
    and again as a long chain grows, making a 100,000-op gradient superlinear.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# --- memory ---------------------------------------------------------------------


class _Memory:
    """Bytes of materialised element data alive (elements x itemsize), like MLX.

    Arrays that share one element list (a reshape, a copy, stop_gradient, the
    outputs of a custom function) share one buffer, as they do in MLX, so it is
    counted once: ``buffers`` maps a list's id to [holders, nbytes].
    """

    active = 0
    peak = 0
    buffers = {}


def _allocate(data, nbytes):
    entry = _Memory.buffers.get(id(data))
    if entry is not None:
        entry[0] += 1
        return
    _Memory.buffers[id(data)] = [1, nbytes]
    _Memory.active += nbytes
    if _Memory.active > _Memory.peak:
        _Memory.peak = _Memory.active


def _free(data):
    entry = _Memory.buffers[id(data)]
    entry[0] -= 1
    if entry[0] == 0:
        del _Memory.buffers[id(data)]
        _Memory.active -= entry[1]


def get_active_memory():
    """``mx.get_active_memory()``: bytes of element data held by live arrays."""
    return _Memory.active


def get_peak_memory():
    """``mx.get_peak_memory()``: the most ``get_active_memory()`` has been since the last reset."""
    return _Memory.peak


def reset_peak_memory():
    """``mx.reset_peak_memory()``: set the peak to 0; the next allocation raises it again."""
    _Memory.peak = 0


# --- eval -------------------------------------------------------------------------


def _unevaluated_postorder(outputs):
    """The unevaluated nodes behind ``outputs``, inputs before their consumers.

    Iterative, so a chain 100,000 nodes deep needs no recursion. Inputs are
    visited in argument order, so each branch is computed just before the node
    that consumes it: intermediates live as briefly as the order allows.
    """
    order = []
    seen = set()
    for out in outputs:
        if out._data is not None or id(out) in seen:
            continue
        seen.add(id(out))
        stack = [(out, iter(out._inputs))]
        while stack:
            node, inputs = stack[-1]
            for x in inputs:
                if x._data is None and id(x) not in seen:
                    seen.add(id(x))
                    stack.append((x, iter(x._inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def eval_arrays(outputs):
    """Evaluate a flat list of arrays (the engine behind ``mx.eval``)."""
    with cycle_collector_paused():
        _eval_postorder(_unevaluated_postorder(outputs))


def _eval_postorder(order):
    # What ``array.is_tracer()`` asks, read once: tracers keep their graph.
    retain, tracing = retain_graph(), in_tracing()
    for i, node in enumerate(order):
        order[i] = None  # the tape must not keep intermediates alive
        if node._data is not None:  # computed already as a sibling
            continue
        if node._primitive is None:
            raise ValueError(
                "[eval] Attempting to eval an array during function "
                "transformations like compile or vmap is not allowed."
            )
        results = node._primitive.eval(node._inputs)
        siblings = node.outputs()
        for out, data in zip(siblings, results):
            out._set_data(data)
        if not (retain or (tracing and node._tracer)):
            for out in siblings:
                out._detach()


def _array_leaves(trees):
    from .array import array

    leaves = []
    stack = list(reversed(trees))
    while stack:
        t = stack.pop()
        if isinstance(t, array):
            leaves.append(t)
        elif isinstance(t, (list, tuple)):
            stack.extend(reversed(t))
        elif isinstance(t, dict):
            stack.extend(reversed(list(t.values())))
    return leaves


def eval(*args):
    """``mx.eval(*args)``: evaluate every array in the given trees.

    Each argument may be an array or a (nested) list, tuple or dict; leaves that
    are not arrays are ignored. Returns ``None``.
    """
    eval_arrays(_array_leaves(args))


def async_eval(*args):
    """``mx.async_eval(*args)``: schedule evaluation and return ``None``.

    mlxref has no streams, so it evaluates at once; the API and the error
    inside transforms are MLX's.
    """
    if in_tracing():
        raise ValueError("[async_eval] Not allowed inside a graph transformation.")
    eval_arrays(_array_leaves(args))
