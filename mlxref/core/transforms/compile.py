"""``mx.compile``: trace once per input signature, simplify, fuse, replay.

Read alongside: mlx/compile.cpp (``compile``, ``compile_trace``,
``compile_dfs``, ``compile_simplify``, ``compile_fuse``, ``compile_replace``,
the same steps under the same names) and python/src/transforms.cpp
(``PyCompiledFun``: the arguments' trees, constants and captured state).
The algorithm:

1. Flatten the arguments: their arrays are the inputs; their tree structure
   and constants (ints, floats, strings, None) are part of the cache key,
   with the inputs' shapes (only their ranks when ``shapeless``) and dtypes,
   and the thread's default stream as the call finds it (a call under
   ``mx.stream(s)`` traces again). As in MLX, that stream is peeked, not
   made, and each thread has its own entries: on a thread where no op has
   run yet, the first entry is keyed by no stream, its trace makes the
   stream, and the second call traces again. ``inputs=`` adds the arrays of
   a captured tree (read at every call). An array the function reads from
   elsewhere (a global, a closure) is a constant of the trace: replacing it
   later changes nothing until something makes the function trace again, as
   MLX's compile page says (and, by that second trace, not when the page's
   example is a fresh program's first op).
2. ``compile_trace``: on a cache miss, call the function on placeholders
   (arrays with neither data nor primitive, so ``eval`` inside fails as in
   MLX); ``outputs=`` adds the arrays of a captured tree to the outputs.
   With ``shapeless`` the call runs under ``InTracing(dynamic=True)``
   (transforms/tape.py; MLX's dynamic tracing), so the ops build nodes that
   read their shapes from their inputs again at every replay (see
   ``ops.common.dynamic_broadcast_arrays`` and ``NumberOfElements``).
   ``trace_entry`` is steps 1 to 5 in one call.
3. ``compile_dfs``: the graph between the placeholders and the outputs as a
   tape of ``TapeNode``s (mlxref's own small copy, so the traced arrays are
   never rewired); arrays with data are constants.
4. ``compile_simplify``: merge scalar constants of the same value and dtype,
   drop Copy and StopGradient (those two classes only, as MLX: a Full
   stays), and merge nodes whose primitives are equivalent
   (``Primitive.is_equivalent``) on the same inputs.
5. ``compile_fuse``: walking the tape from the end, gather chains of
   elementwise primitives (and broadcasts) into one ``Compiled`` node,
   within MLX's limits (depth 11, 24 arrays), when every consumer of a fused
   array is in the chain; a broadcast also read outside it is split, the
   chain getting its own copy (mlxref/core/backend/cpu/compiled.py generates
   the chain's code).
6. ``compile_replace``: at every call, rebuild the tape's nodes on the real
   inputs (lazily, as any op); ``outputs=`` trees get their new arrays.
   mlxref's own, where it pays (transforms/program.py): the tape written
   once as one Python function (``compile_program``), and a call builds
   one node that runs it, the same kernels on the same lists without a
   node each; shapeless entries and one-node tapes replay their nodes.

When an input is a tracer (inside grad, vjp, jvp, vmap or another compile)
the function is simply called, as in MLX: that is how ``grad(compile(f))``
and ``vmap(compile(f))`` work (``Compiled``, as MLX's, has no rules).
``disable_compile()``, ``enable_compile()`` and the environment variable
``MLX_DISABLE_COMPILE`` switch compilation off and on.
"""

import copy
import functools
import math
import os
import struct
import threading

from ..array import array, placeholder
from ..device import default_device, peek_default_stream
from ..ops.common import incompatible_arguments
from ..primitives.base import Copy, StopGradient, make_arrays
from ..primitives.compiled import Compiled
from . import trees
from .program import compile_program
from .tape import InTracing

_SIGNATURE = ("compile(fun: Callable[P, R], inputs: object | None = None, "
              "outputs: object | None = None, shapeless: bool = False) -> Callable[P, R]")

MAX_COMPILE_DEPTH = 11
MAX_COMPILE_ARRAYS = 24

# MLX's CompileMode: disabled, no_simplify, no_fuse, enabled.
_MODES = ("disabled", "no_simplify", "no_fuse", "enabled")
_mode = ["disabled" if os.environ.get("MLX_DISABLE_COMPILE") is not None else "enabled"]


def disable_compile():
    """``mx.disable_compile()``: compiled functions call the function as it is."""
    _mode[0] = "disabled"


def enable_compile():
    """``mx.enable_compile()``: compile again (overrides ``MLX_DISABLE_COMPILE``)."""
    _mode[0] = "enabled"


def set_compile_mode(mode):
    """MLX's C++ ``set_compile_mode``: one of "disabled", "no_simplify",
    "no_fuse" (simplify but do not fuse) and "enabled"."""
    if mode not in _MODES:
        raise ValueError(f"[compile] Unknown compile mode {mode!r}; one of {', '.join(_MODES)}.")
    _mode[0] = mode


# Elementwise primitives MLX fuses (compile.cpp ``is_unary``, ``is_binary``,
# ``is_ternary``, ``is_broadcast``), by MLX's class names, which mlxref shares.
_FUSABLE = frozenset("""
    Abs ArcCos ArcCosh ArcSin ArcSinh ArcTan ArcTanh AsType Ceil Cos Conjugate Cosh
    Remainder Erf ErfInv Exp Floor Log Log1p LogicalNot Negative Round Sigmoid Sign
    Sin Sinh Square Sqrt Tan Tanh Expm1 Real Imag BitwiseInvert
    Add Divide Equal Greater GreaterEqual Less LessEqual LogicalAnd LogicalOr
    LogAddExp Maximum Minimum Multiply NotEqual Power Subtract BitwiseBinary ArcTan2
    Select Broadcast
""".split())


def is_fusable(primitive):
    return type(primitive).__name__ in _FUSABLE


def compile(fun, inputs=None, outputs=None, shapeless=False):  # noqa: A001 (MLX's name)
    """Return ``fun`` compiled: the same outputs, from a traced, simplified and
    fused graph that is traced once per input signature.

    >>> import mlxref.core as mx
    >>> f = mx.compile(lambda x: mx.exp(-x) * 2)
    >>> f(mx.array([0.0, 1.0]))
    array([2, 0.735759], dtype=float32)
    """
    if not callable(fun) or not isinstance(shapeless, bool):
        optional = {k: v for k, v in (("inputs", inputs), ("outputs", outputs),
                                      ("shapeless", shapeless)) if v not in (None, False)}
        raise incompatible_arguments(_SIGNATURE, [fun], optional)
    # This function's entries, a list per thread: MLX keys its cache by function,
    # and each thread has its own cache (``thread_local``).
    caches = threading.local()

    @functools.wraps(fun)
    def compiled(*args, **kwargs):
        if _mode[0] == "disabled":
            return fun(*args, **kwargs)
        flat, constants = _flatten_arguments(args, kwargs)
        flat = flat + (trees.arrays(inputs) if inputs is not None else [])
        if any(x.is_tracer() for x in flat):
            return fun(*args, **kwargs)
        cache = getattr(caches, "entries", None)
        if cache is None:
            cache = caches.entries = []
        entry = _find(cache, flat, shapeless, constants)
        if entry is None:
            entry = trace_entry(fun, args, kwargs, shapeless, inputs, outputs)
            entry.program = compile_program(entry)
            cache.append(entry)
        results = compile_replace(entry, flat)
        if outputs is not None:
            trees.fill(outputs, results[entry.num_outputs:])
        return trees.replace_arrays(entry.structure, results[: entry.num_outputs])

    return compiled


def trace_entry(fun, args, kwargs=None, shapeless=False, inputs=None, outputs=None):
    """What a compiled function does on a cache miss: ``compile_trace``, then
    ``compile_simplify`` and ``compile_fuse`` (as the compile mode allows).
    ``compile_replace(entry, arrays)`` replays the entry on the arrays of
    ``(args, kwargs)`` followed by those of ``inputs``."""
    entry = compile_trace(fun, args, kwargs, shapeless, inputs, outputs)
    if _mode[0] != "no_simplify":
        compile_simplify(entry)
    if _mode[0] not in ("no_simplify", "no_fuse"):
        compile_fuse(entry)
    return entry


# --- 1. arguments and the cache --------------------------------------------------------


def _flatten_arguments(args, kwargs):
    """The arrays of ``(args, kwargs)`` and the key of everything else (MLX's
    ``recurse`` in PyCompiledFun: structure and constants)."""
    arrays, key = [], []
    _flatten_into(args, arrays, key)
    _flatten_into(kwargs, arrays, key)
    return arrays, tuple(key)


def _flatten_into(obj, arrays, key):
    # (A module function, not a closure: a recursive closure is a reference
    # cycle, which would keep the caller's arrays alive until the cycle
    # collector runs, and so keep their buffers from being donated.)
    if isinstance(obj, (list, tuple)):
        key.append("[")
        for x in obj:
            _flatten_into(x, arrays, key)
        key.append("]")
    elif isinstance(obj, dict):
        key.append("{")
        for k, v in obj.items():
            key.append(k)
            _flatten_into(v, arrays, key)
        key.append("}")
    elif isinstance(obj, array):
        arrays.append(obj)
        key.append("a")
    elif isinstance(obj, str):
        key.append(("s", obj))
    elif isinstance(obj, int):
        key.append(("i", int(obj)))
    elif isinstance(obj, float):
        key.append(("f", struct.pack("d", obj)))  # bits: -0.0 and nan are keys too
    elif obj is None:
        key.append(None)
    else:
        raise ValueError(
            "[compile] Function arguments must be trees of arrays or constants "
            "(floats, ints, strings, or None), but received type "
            f"{type(obj).__module__ + '.' if type(obj).__module__ != 'builtins' else ''}"
            f"{type(obj).__qualname__}.")


class CacheEntry:
    """One traced signature: MLX's ``CacheEntry``."""

    def __init__(self, shapeless, inputs, constants):
        self.stream = _default_stream()
        self.shapeless = shapeless
        self.shapes = [x.shape for x in inputs]
        self.dtypes = [x.dtype for x in inputs]
        self.constants = constants
        self.inputs = []  # the placeholders' TapeValues
        self.outputs = []  # the outputs' TapeValues
        self.tape = []  # TapeNodes, inputs before consumers
        self.structure = None  # the output tree, arrays where the results go
        self.num_outputs = 0  # arrays in it (the captured outputs follow)
        self.program = None  # the nodes a call builds, if not the tape's (program.py)


def _default_stream():
    # Peeked, not made, as MLX 0.32.4 does: in a thread where no op has run yet the
    # first entry is keyed by None, its trace makes the stream, and the next call
    # misses that entry and traces again.
    return peek_default_stream(default_device())


def _find(cache, inputs, shapeless, constants):
    stream = _default_stream()
    for entry in cache:
        if (entry.stream == stream and entry.shapeless == shapeless
                and entry.constants == constants
                and len(entry.shapes) == len(inputs)
                and all(len(s) == x.ndim and (shapeless or s == x.shape) and d is x.dtype
                        for s, d, x in zip(entry.shapes, entry.dtypes, inputs))):
            return entry
    return None


# --- 2. trace ---------------------------------------------------------------------------


def compile_trace(fun, args, kwargs=None, shapeless=False, captured_inputs=None,
                  captured_outputs=None):
    """Steps 1 to 3: ``fun`` called on placeholders like the arrays of
    ``(args, kwargs)`` and of the captured inputs, and the graph it built
    between them and its outputs as a new cache entry's tape (``compile_dfs``),
    not yet simplified or fused. (mlxref.viz draws the steps one by one.)"""
    kwargs = {} if kwargs is None else kwargs
    flat, constants = _flatten_arguments(args, kwargs)
    originals = trees.arrays(captured_inputs) if captured_inputs is not None else []
    flat = flat + originals
    entry = CacheEntry(shapeless, flat, constants)
    placeholders = [placeholder(x.shape, x.dtype) for x in flat]
    # Their ids now: the function may update a captured one in place
    # (``state[0] *= 2`` points the handle at a new node).
    placeholder_ids = [p.id() for p in placeholders]
    num_args = len(trees.arrays(args))
    n_kw = len(trees.arrays(kwargs))
    if captured_inputs is not None:
        trees.fill(captured_inputs, placeholders[num_args + n_kw:])
    try:
        with InTracing(dynamic=shapeless):
            out_tree = fun(*trees.replace_arrays(args, placeholders[:num_args]),
                           **trees.replace_arrays(kwargs, placeholders[num_args:num_args + n_kw]))
        outs = trees.arrays(out_tree)
        entry.structure, entry.num_outputs = out_tree, len(outs)
        if captured_outputs is not None:
            outs = outs + trees.arrays(captured_outputs)
    finally:
        if captured_inputs is not None:  # MLX's tree_replace: the placeholders only
            back = {i: x for i, x in zip(placeholder_ids[num_args + n_kw:], originals)}
            trees.visit_update(captured_inputs, lambda a: back.get(a.id(), a))
    compile_dfs(entry, placeholders, placeholder_ids, outs, flat)
    return entry


# --- 3. the tape --------------------------------------------------------------------------


class TapeValue:
    """One array of the traced graph: an input (``index``), a constant
    (``array``) or output ``position`` of ``node``."""

    __slots__ = ("node", "position", "array", "index", "shape", "dtype")

    def __init__(self, shape, dtype, node=None, position=0, array=None, index=None):
        self.shape, self.dtype = shape, dtype
        self.node, self.position, self.array, self.index = node, position, array, index


class TapeNode:
    """One primitive applied to ``inputs`` (``TapeValue``s), giving ``outputs``."""

    __slots__ = ("primitive", "inputs", "outputs")

    def __init__(self, primitive, inputs, shapes, dtypes):
        self.primitive, self.inputs = primitive, list(inputs)
        self.outputs = [TapeValue(s, d, self, i) for i, (s, d) in enumerate(zip(shapes, dtypes))]


def compile_dfs(entry, placeholders, placeholder_ids, outs, originals):
    """The tape of the graph behind ``outs``, from the placeholders (known by
    the ids they had when the trace began) and constants."""
    original_ids = {x.id() for x in originals}
    values = {}
    for k, (p, i) in enumerate(zip(placeholders, placeholder_ids)):
        values[i] = TapeValue(p.shape, p.dtype, index=k)
    entry.inputs = [values[i] for i in placeholder_ids]
    tape = []
    for out in outs:
        stack = [out]
        while stack:
            a = stack[-1]
            if a.id() in values:
                stack.pop()
                continue
            if a.id() in original_ids:
                raise ValueError("[compile] Attempting to compile a function with "
                                 "uncaptured inputs is not allowed.")
            if a.is_available() or not a.has_primitive():
                # A handle of the entry's own: the constant is in use for as
                # long as the entry lives, so no kernel may donate its buffer.
                values[a.id()] = TapeValue(a.shape, a.dtype, array=copy.copy(a))
                stack.pop()
                continue
            pending = [x for x in a.inputs() if x.id() not in values]
            if pending:
                stack.extend(reversed(pending))
                continue
            stack.pop()
            siblings = a.outputs()
            node = TapeNode(a.primitive(), [values[x.id()] for x in a.inputs()],
                            [o.shape for o in siblings], [o.dtype for o in siblings])
            for o, v in zip(siblings, node.outputs):
                values[o.id()] = v
            tape.append(node)
    entry.tape = tape
    entry.outputs = [values[o.id()] for o in outs]


# --- 4. simplify ---------------------------------------------------------------------------


def _scalar_key(v):
    """Constants of one element with the same bits and dtype are the same (MLX
    compares the bits; repr tells -0.0 from 0.0 and keeps nan equal to nan)."""
    if v.array is None or v.array.ndim != 0:
        return None
    value = v.array.data()[0]
    if isinstance(value, float) and math.isnan(value):
        value = "nan"
    return (v.dtype, type(value), repr(value))


def compile_simplify(entry):
    """Merge equal scalar constants, drop no-ops, merge equivalent nodes."""
    outputs = entry.outputs
    output_ids = {id(v) for v in outputs}
    replace = {}  # id(TapeValue) -> the TapeValue standing for it

    def find(v):
        return replace.get(id(v), v)

    # Scalars of one value, no-ops, then equivalent nodes, in one pass over
    # the tape (inputs are canonical before their consumers are looked at).
    scalars = {}
    seen = {}  # (primitive class, input ids) -> nodes already kept
    tape = []
    for node in entry.tape:
        node.inputs = [find(x) for x in node.inputs]
        for x in node.inputs:
            key = _scalar_key(x)
            if key is not None:
                kept = scalars.setdefault(key, x)
                if kept is not x:
                    replace[id(x)] = kept
        node.inputs = [find(x) for x in node.inputs]
        # Exactly these two classes, as MLX's is_noop compares typeids: a Full
        # (a Copy subclass here) stays, as in MLX.
        if type(node.primitive) in (Copy, StopGradient):
            replace[id(node.outputs[0])] = node.inputs[0]
            continue
        key = (type(node.primitive), tuple(id(x) for x in node.inputs))
        twin = next((n for n in seen.get(key, ()) if n.primitive.is_equivalent(node.primitive)
                     and [(o.shape, o.dtype) for o in n.outputs]
                     == [(o.shape, o.dtype) for o in node.outputs]), None)
        if twin is not None and not any(id(o) in output_ids for o in node.outputs):
            for o, t in zip(node.outputs, twin.outputs):
                replace[id(o)] = t
            continue
        seen.setdefault(key, []).append(node)
        tape.append(node)
    entry.outputs = [find(v) for v in outputs]
    entry.tape = _live(tape, entry.outputs)


def _live(tape, outputs):
    """The nodes of ``tape`` some output depends on, in order."""
    needed = {id(v.node) for v in outputs if v.node is not None}
    kept = []
    for node in reversed(tape):
        if id(node) in needed:
            kept.append(node)
            needed.update(id(x.node) for x in node.inputs if x.node is not None)
    kept.reverse()
    return kept


# --- 5. fuse --------------------------------------------------------------------------------


def _parents(tape):
    """id(TapeValue) -> [(node, input position)] of the nodes reading it."""
    parents = {}
    for node in tape:
        for i, x in enumerate(node.inputs):
            parents.setdefault(id(x), []).append((node, i))
    return parents


def _split_one(a, parents, cache):
    """A copy of ``a``'s node, read by ``a``'s readers in the chain (``cache``)
    in its place; the readers outside the chain keep ``a``."""
    node = a.node
    twin = TapeNode(node.primitive, node.inputs, [a.shape], [a.dtype])
    b = twin.outputs[0]
    inside = [(p, k) for p, k in parents[id(a)] if id(p.outputs[0]) in cache]
    parents[id(a)] = [(p, k) for p, k in parents[id(a)] if id(p.outputs[0]) not in cache]
    for p, k in inside:
        p.inputs[k] = b
    parents[id(b)] = inside
    for k, x in enumerate(twin.inputs):
        parents[id(x)].append((twin, k))
    return b


def compile_fuse(entry):
    """Replace chains of fusable nodes by one ``Compiled`` node each (MLX's
    ``compile_fuse``: from the last node back, a chain grows through the
    inputs of a node while every reader of the input is in the chain)."""
    parents = _parents(entry.tape)
    output_ids = {id(v): k for k, v in enumerate(entry.outputs)}
    outputs = list(entry.outputs)
    new_tape = []
    fused = set()  # ids of the nodes already in a Compiled
    for node in reversed(entry.tape):
        if id(node) in fused:
            continue
        root = node.outputs[0]
        cache = {}  # id(TapeValue) -> TapeValue in the chain
        input_ids = set()

        def recurse(a, depth, shape):
            if id(a) in cache:
                return
            if (depth >= MAX_COMPILE_DEPTH or a.node is None or len(a.node.outputs) > 1
                    or not is_fusable(a.node.primitive)
                    or (id(a) in output_ids and a.shape != shape)):
                input_ids.add(id(a))
                return
            if depth > 0 and not all(id(p.outputs[0]) in cache for p, _ in parents[id(a)]):
                # Read outside the chain too. A broadcast is cheap to repeat:
                # the chain gets its own copy (MLX's ``split_one``).
                if (type(a.node.primitive).__name__ == "Broadcast"
                        and len(input_ids) < MAX_COMPILE_ARRAYS):
                    recurse(_split_one(a, parents, cache), depth, shape)
                else:
                    input_ids.add(id(a))
                return
            if id(a) in output_ids:
                input_ids.add(id(a))
            else:
                input_ids.discard(id(a))
            if len(input_ids) >= MAX_COMPILE_ARRAYS:
                return
            cache[id(a)] = a
            for x in a.node.inputs:
                recurse(x, depth + 1, shape)

        if len(node.outputs) == 1 and type(node.primitive).__name__ != "Broadcast":
            recurse(root, 0, root.shape)
        if len(cache) <= 1:
            new_tape.append(node)
            continue
        # Second walk: the chain in order, and its inputs.
        chain_inputs, steps, position = [], [], {}

        def recurse_tape(a):
            if id(a) not in cache:
                if id(a) not in position:
                    position[id(a)] = len(chain_inputs)
                    chain_inputs.append(a)
                return
            if id(a) in position:
                return
            for x in a.node.inputs:
                recurse_tape(x)
            position[id(a)] = None  # filled below
            steps.append(a)

        recurse_tape(root)
        n = len(chain_inputs)
        for j, a in enumerate(steps):
            position[id(a)] = n + j
        old_outputs = [a for a in steps[:-1] if id(a) in output_ids] + [root]
        for a in old_outputs:
            if a.shape != root.shape:
                raise RuntimeError("[compile] Compilation failed. Tried to fuse "
                                   "operations with different output shapes")
        primitive = Compiled(
            [(a.node.primitive, [position[id(x)] for x in a.node.inputs], a.dtype) for a in steps],
            [x.dtype for x in chain_inputs],
            [steps.index(a) for a in old_outputs],
            [math.prod(x.shape) for x in chain_inputs],
        )
        compiled = TapeNode(primitive, chain_inputs, [a.shape for a in old_outputs],
                            [a.dtype for a in old_outputs])
        fused.update(id(a.node) for a in steps)
        new_tape.append(compiled)
        # The chain's inputs are read by the new node; the readers of its
        # outputs (outside the chain) read the new node's outputs.
        # (An input or constant is never a chain's step: its readers are not
        # kept, which would cost a pass over all of them per chain.)
        for i, x in enumerate(chain_inputs):
            if x.node is None:
                continue
            kept = [(p, k) for p, k in parents.get(id(x), ()) if id(p.outputs[0]) not in cache]
            parents[id(x)] = kept + [(compiled, i)]
        for old, new in zip(old_outputs, compiled.outputs):
            for p, k in parents.pop(id(old), ()):
                if id(p.outputs[0]) not in cache:
                    p.inputs[k] = new
                    parents.setdefault(id(new), []).append((p, k))
            if id(old) in output_ids:
                outputs[output_ids[id(old)]] = new
                for k, v in enumerate(entry.outputs):
                    if v is old:
                        outputs[k] = new
    new_tape.reverse()
    entry.tape = new_tape
    entry.outputs = outputs


# --- 6. replace ---------------------------------------------------------------------------


def compile_replace(entry, inputs):
    """The traced tape rebuilt on the real ``inputs``: lazy arrays, as any op
    builds. Where the entry has a program (mlxref's own: program.py), its
    one node and the views after it stand for the tape's nodes."""
    real = {}
    for v, x in zip(entry.inputs, inputs):
        real[id(v)] = x

    def get(v):
        if v.array is not None:
            return v.array
        return real[id(v)]

    for node in entry.tape if entry.program is None else entry.program:
        # The primitive's output_shapes: the traced shapes again, or with
        # shapeless, the shapes of these inputs (and their errors).
        outs = make_arrays(node.primitive, [get(x) for x in node.inputs])
        for v, o in zip(node.outputs, outs):
            real[id(v)] = o
    return [get(v) for v in entry.outputs]
