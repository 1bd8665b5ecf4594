"""Evaluation: ``mx.eval``, ``mx.async_eval``, and the evaluation of a lazy graph.

Read alongside: mlx/transforms.cpp (``eval_impl``, ``eval`` and
``async_eval``, and ``array::detach`` in mlx/array.cpp) and
python/src/transforms.cpp (``eval`` and ``async_eval`` flatten their
arguments to arrays).

An array is either *evaluated* (it holds its elements) or a *node* (it holds
its primitive and its inputs). ``eval_arrays`` (MLX's ``eval_impl``) finds the
unevaluated part of the graph behind the requested arrays with an iterative
depth-first search, computes each node once in post-order, and then
``detach``es it: the node drops its primitive and inputs, so intermediates
nothing else refers to are freed at once. Arrays that are being traced by a
transform keep their graph (``is_tracer``: the tracing state is in
transforms/tape.py, as MLX's is in transforms_impl.h).

Each computed list is handed to the allocator's bookkeeping through
``array.set_data``, and an elementwise node may take over a dying input's
buffer (``allocator.donate``): mlxref/core/backend/cpu/allocator.py. Before
computing anything, the allocator's ``check_lists`` refuses a node whose
element list would not fit in memory (mlxref's own: MLX's arrays are buffers).

Not in MLX: ``charging(charge)`` hands each evaluation's nodes to ``charge``
before any is computed, so a caller (mlxref.viz's work budget) can refuse it.

Read next: mlxref/core/backend/cpu/allocator.py (the memory counters and
donation), mlxref/core/transforms/tape.py (the tracing state).
"""

import contextvars
import threading

from ..backend.cpu import allocator
from . import trees
from .tape import cycle_collector_paused, in_tracing, retain_graph

# --- eval_impl -------------------------------------------------------------------

# A work budget (not in MLX): ``charging(charge)`` makes ``eval_arrays`` call
# ``charge(nodes)`` with the nodes it is about to compute, before it computes
# any (their shapes and primitives say what they cost), so the caller can
# refuse the work before it is done. mlxref.viz switches it on while it
# evaluates what it draws (mlxref/viz/budget.py says what a node costs).
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
        allocator.check_lists(order)  # a list that would not fit is refused before any is made
        if charge is not None:
            charge(order)
        # Whether a node keeps its graph (``array.is_tracer``) depends on the
        # tracing state, which no kernel changes: read it once, not per node.
        keep_all, tracing = retain_graph(), in_tracing()
        for i, node in enumerate(order):
            order[i] = None  # the order must not keep intermediates alive
            if node.is_available():  # computed already as a sibling
                continue
            primitive = node.primitive()
            if primitive is None:
                if node.is_tracer():  # a placeholder of the trace running now
                    raise ValueError(
                        "[eval] Attempting to eval an array during function "
                        "transformations like compile or vmap is not allowed."
                    )
                # One a trace left behind (a compiled function that stored it
                # in a list, say): MLX's message for an impure function.
                raise RuntimeError(
                    "[eval] Attempting to eval an array without a primitive.\n"
                    "If you are compiling a function, make sure all the inputs and "
                    "outputs are captured:\n"
                    "https://ml-explore.github.io/mlx/build/html/usage/compile.html"
                    "#pure-functions.\n"
                    "If you are not using compile, this may be a bug. Please file an "
                    "issue here:\nhttps://github.com/ml-explore/mlx/issues.")
            outputs = node.outputs()
            inputs = node.inputs()
            results = primitive.eval(inputs)
            kept = keep_all or (tracing and node.is_tracer())  # tracers keep their graph
            if primitive.donates and not kept and len(outputs) == 1:
                allocator.donate(inputs, node, results[0])
            for out, data in zip(outputs, results):
                if out is not node and out.is_available():
                    continue  # a sibling kept from an earlier eval (see array._sibling)
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


# --- mx.eval and mx.async_eval ---------------------------------------------------


def eval(*args):
    """``mx.eval(*args)``: evaluate every array in the given trees.

    Each argument may be an array or a (nested) list, tuple or dict; leaves that
    are not arrays are ignored. Returns ``None``.
    """
    eval_arrays(trees.arrays(args))


def async_eval(*args):
    """``mx.async_eval(*args)``: schedule evaluation and return ``None``.

    mlxref computes in Python, at once (its streams are bookkeeping:
    mlxref/core/device.py), so it evaluates now; the API and the error
    inside transforms are MLX's. A kernel that fails (a RuntimeError, such
    as a singular matrix's inverse) fails where it does in MLX, which runs
    it on the stream's thread: the error is raised by the next
    ``mx.synchronize``, and the array stays unevaluated (evaluating it
    again raises it again). MLX 0.32 raised it here.
    """
    if in_tracing():
        raise ValueError("[async_eval] Not allowed inside a graph transformation.")
    try:
        eval_arrays(trees.arrays(args))
    except RuntimeError as error:
        defer_error(error)
