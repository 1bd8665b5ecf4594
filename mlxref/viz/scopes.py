"""Models drawn by module: which call of which module made each node.

A drawing of an ``nn.Module`` groups its nodes into one box per call of a
submodule (``layers.3``, ``blocks.0.attention.query_proj``) and per call of
one of nn's functions (``gelu#1``: the first call of ``nn.gelu`` from the
same caller), nested as the calls were. Folded, each box is one node
(``shrink.fold_scopes``).

How a call is seen: while ``trace`` runs the transform, ``Watch`` listens to
Python's calls and returns (``sys.setprofile``, in this thread only, chained
to a Python profiler already set, and removed afterwards; under a C
profiler such as cProfile nothing is watched, with a ``DrawingWarning``).
A call of a watched module's ``__call__`` (any class of its MRO that
defines one), or of a function of ``FUNCTION_MODULES`` or a static method
of ``LAYER_CLASSES``, notes the array ids handed out while it runs:
arrays are numbered in creation order (``array.id()``), so the nodes a call
made are those numbered between its start and its return. Nothing in ``nn``
changes: a module never knows it is watched, and its behaviour is MLX's.

Which scope a node belongs to (``assign``):

- a forward node: the innermost call during which it was created;
- a model's parameter (an input named ``layers.3.weight``): the first call of
  the module whose path is the longest one before the parameter's name;
- a backward node (the graph a grad's vjp walk built): the scope of the
  forward node the walk visited at the step that made it (``Node.made``:
  "made at vjp step k"), since that node's vjp rule made it. The seed
  cotangent and what was made before the walk belong to no scope, and so
  does what a ``checkpoint``'s rule makes when its checkpoint node was made
  outside the model's calls (``nn.TransformerEncoder(checkpoint=True)``);
- a function call holding every node of the module that called it (``ReLU``
  calling ``relu``) is no scope of its own: the module is the box;
- a call that made no node of the drawing is dropped (the first call ``vjp``
  makes to learn the outputs' shapes, a module that only reads a weight).

A module called twice is two scopes, ``blocks.0`` and ``blocks.0#2``; a
function's calls are numbered within their caller: ``gelu#1`` ... ``gelu#6``
in the model, ``blocks.0.attention.softmax#1`` inside a module.

Read next: ``shrink.py`` (``fold_scopes``: one box per innermost module
call, and as many levels up as it takes to fit the node limit).
"""

import inspect
import sys
import warnings

from ..core.array import array as _Array
from .model import Scope
from .record import DrawingWarning, next_id

# The functions whose calls are boxes, by the name a reader calls them:
# nn's activations and losses, mx.fast's composite ops, and the static
# methods of nn's layers (``nn.MultiHeadAttention.create_additive_causal_mask``).
FUNCTION_MODULES = (
    ("nn", "mlxref.nn.layers.activations"),
    ("nn.losses", "mlxref.nn.losses"),
    ("mx.fast", "mlxref.core.fast"),
)
LAYER_CLASSES = ("nn", "mlxref.nn")


def functions():
    """``{code object: "nn.gelu"}`` for the public functions of ``FUNCTION_MODULES``
    and the public static methods of the ``nn.Module`` classes of ``LAYER_CLASSES``."""
    found = {}
    for prefix, module_name in FUNCTION_MODULES:
        for name, value in vars(_module(module_name)).items():
            if (not name.startswith("_") and inspect.isfunction(value)
                    and value.__module__ == module_name):
                found[value.__code__] = f"{prefix}.{name}"
    prefix, module_name = LAYER_CLASSES
    module = _module(module_name)
    for class_name, cls in sorted(vars(module).items()):
        if inspect.isclass(cls) and issubclass(cls, module.Module):
            for name, value in vars(cls).items():
                if not name.startswith("_") and isinstance(value, staticmethod):
                    found.setdefault(value.__func__.__code__, f"{prefix}.{class_name}.{name}")
    return found


def _module(name):
    __import__(name)
    return sys.modules[name]


def model_modules(module, prefix):
    """``[(path, module)]`` for every submodule of ``module`` (``prefix.layers.3``),
    and the model itself when it has a name (``prefix``): a model drawn bare,
    its parameters named ``layers.0.weight``, is the whole drawing, no box."""
    lead = prefix + "." if prefix else ""
    return [(lead + path if path else prefix, m) for path, m in module.named_modules()
            if path or prefix]


class _Call:
    """One call seen while watching: who was called, and the ids it handed out."""

    __slots__ = ("owner", "path", "what", "kind", "parent", "start", "end")

    def __init__(self, owner, path, what, kind, parent, start):
        self.owner, self.path, self.what, self.kind = owner, path, what, kind
        self.parent, self.start, self.end = parent, start, None


class Watch:
    """``with Watch(modules): ...``: the calls of ``modules`` (``[(path, module)]``)
    and of nn's functions made inside, in order (``calls``)."""

    def __init__(self, modules):
        self.paths = {}  # id(module) -> (path, module): the first path a module has
        for path, m in modules:
            self.paths.setdefault(id(m), (path, m))
        self.codes = functions()  # code -> function name, or None for a module's __call__
        for _, m in self.paths.values():
            for cls in type(m).__mro__:
                call = vars(cls).get("__call__")
                if inspect.isfunction(call):
                    self.codes.setdefault(call.__code__, None)
        self.calls = []
        self._open = []  # [(frame, _Call or None)]: the watched frames running now
        self._previous = None

    def __enter__(self):
        self._previous = sys.getprofile()
        if self._previous is not None and not callable(self._previous):
            # A profiler written in C (cProfile) cannot be called from here, nor
            # set back by sys.setprofile: it keeps running, and nothing is watched.
            warnings.warn("viz.trace: a C profiler (cProfile) is running, so the calls of "
                          "the model's modules are not watched: the drawing has no module "
                          "boxes", DrawingWarning, stacklevel=3)
            self._watching = False
            return self
        self._watching = True
        sys.setprofile(self._event)
        return self

    def __exit__(self, *exc):
        if not self._watching:
            return False
        sys.setprofile(self._previous)
        for _, call in self._open:  # left by an exception: close them here
            if call is not None and call.end is None:
                call.end = next_id()
        self._open = []
        return False

    def _event(self, frame, event, arg):
        if self._previous is not None:
            self._previous(frame, event, arg)
        if event == "call":
            code = frame.f_code
            if code in self.codes:
                self._opened(frame, code)
        elif event == "return" and self._open and self._open[-1][0] is frame:
            _, call = self._open.pop()
            if call is not None:
                call.end = next_id()

    def _opened(self, frame, code):
        inner = next((c for _, c in reversed(self._open) if c is not None), None)
        name = self.codes[code]
        call = None
        if name is None:  # a module's __call__: whose?
            owner = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
            known = self.paths.get(id(owner))
            again = inner is not None and inner.owner is owner  # super().__call__: the same call
            if known is not None and known[1] is owner and not again:
                call = _Call(owner, known[0], type(owner).__name__, "module", inner, next_id())
        elif inner is None or inner.kind == "module":  # a function inside a function: its caller's
            call = _Call(code, "", name, "function", inner, next_id())
        if call is not None:
            self.calls.append(call)
        self._open.append((frame, call))


def _parameters(module):
    from ..utils import tree_flatten  # utils builds on core only

    return sum(a.size for _, a in tree_flatten(module.parameters()) if isinstance(a, _Array))


def assign(graph, calls, input_names):
    """Give the nodes of ``graph`` their scopes (see the module docstring) and
    set ``graph.scopes``. ``input_names``: ``{id(node): name}`` of named inputs.

    The forward nodes go by their ids; the backward nodes, made by the vjp
    walk, by ``Node.made`` and the steps (``graph.steps``): call this after the
    walk's notes are written."""
    if not calls:
        return
    calls = sorted(calls, key=lambda c: c.start)
    first_call = {}  # module path -> its first call
    for c in calls:
        if c.kind == "module":
            first_call.setdefault(c.path, c)
    held = {}  # id(_Call) -> the nodes it made itself
    for node in graph.nodes:
        if node.part != "forward":
            continue
        if node.kind == "input":
            name = input_names.get(id(node))
            call = _owner_of(name, first_call) if name else None
        else:
            call = _innermost(calls, node.uid)
        if call is not None:
            held.setdefault(id(call), []).append(node)
    children = {}
    for c in calls:
        children.setdefault(id(c.parent), []).append(c)
    holding = set()  # ids of the calls that made nodes, themselves or through their callees
    for c in reversed(calls):  # callees first
        if held.get(id(c)) or any(id(d) in holding for d in children.get(id(c), ())):
            holding.add(id(c))
    # A function call that holds every node of the module that called it is that module.
    merged = set()
    for c in calls:
        parent = c.parent
        if c.kind == "function" and parent is not None and parent.kind == "module":
            own = [n for n in held.get(id(parent), ()) if n.kind != "input"]  # weights aside
            if not own and not any(id(d) in holding for d in children[id(parent)] if d is not c):
                held.setdefault(id(parent), []).extend(held.pop(id(c), []))
                merged.add(id(c))
    scopes = _scopes([c for c in calls if id(c) in holding and id(c) not in merged])
    for call in calls:
        for node in held.get(id(call), ()):
            node.scope = scopes[id(call)]
    _backward(graph)
    graph.scopes = list(scopes.values())


def _innermost(calls, uid):
    """The innermost call during which array ``uid`` was made. The calls are
    nested intervals: the last one started before ``uid``, or the first of its
    callers still running then."""
    lo, hi = 0, len(calls)
    while lo < hi:
        mid = (lo + hi) // 2
        if calls[mid].start <= uid:
            lo = mid + 1
        else:
            hi = mid
    call = calls[lo - 1] if lo else None
    while call is not None and uid >= call.end:
        call = call.parent
    return call


def _owner_of(name, first_call):
    """The first call of the module whose path is the longest before ``name``."""
    parts = name.split(".")
    for k in range(len(parts) - 1, 0, -1):
        call = first_call.get(".".join(parts[:k]))
        if call is not None:
            return call
    return None


def _scopes(calls):
    """``{id(call): Scope}`` for ``calls`` (in start order), parents first, with
    their paths (repeated module calls ``#2``...; function calls ``#k``
    counted within their caller) and heights."""
    scopes, module_calls, function_calls = {}, {}, {}
    for c in calls:
        parent = c.parent
        while parent is not None and id(parent) not in scopes:  # a dropped caller: its caller
            parent = parent.parent
        parent_scope = scopes[id(parent)] if parent is not None else None
        if c.kind == "module":
            count = module_calls[c.path] = module_calls.get(c.path, 0) + 1
            path = c.path if count == 1 else f"{c.path}#{count}"
            parameters = _parameters(c.owner)
        else:
            key = (id(parent_scope), c.what)
            count = function_calls[key] = function_calls.get(key, 0) + 1
            lead = parent_scope.path + "." if parent_scope is not None else ""
            path = f"{lead}{c.what.rsplit('.', 1)[-1]}#{count}"
            parameters = 0
        scopes[id(c)] = Scope(path=path, kind=c.kind, what=c.what, parent=parent_scope,
                              parameters=parameters)
    for scope in reversed(list(scopes.values())):  # children before their parents
        if scope.parent is not None:
            scope.parent.height = max(scope.parent.height, scope.height + 1)
    return scopes


def _backward(graph):
    """Backward nodes: the scope of the forward node visited at the step that made them."""
    visited_at = {}
    for step in graph.steps:
        node = next((n for n in step.nodes if n is not None), None)
        visited_at[step.number] = node.scope if node is not None else None
    for node in graph.nodes:  # (the seed cotangent, and what was made before the walk: none)
        if node.part == "backward" and node.made == f"made at vjp step {node.reveal}":
            node.scope = visited_at.get(node.reveal)


def cluster_specs(graph):
    """``(kind, anchor, label, nodes)`` for ``record.resolve_clusters``: one box
    per scope and part of the graph (forward, backward), parents first."""
    held = {}  # (part, id(scope)) -> the nodes in the scope or inside it
    for node in graph.nodes:
        scope = node.scope
        while scope is not None:
            held.setdefault((node.part, id(scope)), []).append(node)
            scope = scope.parent
    specs = []
    for part in dict.fromkeys(n.part for n in graph.nodes):
        for scope in graph.scopes:
            nodes = held.get((part, id(scope)))
            if nodes:
                label = scope.label + (", backward" if part == "backward" else "")
                specs.append(("module", f"{part}.{scope.path}", label, nodes))
    return specs


def check_expand(expand, graph, who):
    """``expand`` as a tuple of scope paths of ``graph``; an unknown one is refused."""
    if expand is None:
        return ()
    if isinstance(expand, str):
        expand = (expand,)
    expand = tuple(expand)
    known = {s.path for s in graph.scopes}
    for path in expand:
        if not isinstance(path, str) or not any(_matches(path, k) for k in known):
            listed = ", ".join(s.path for s in graph.scopes) or "none: no model was traced"
            raise ValueError(f"[{who}] expand: no module or function call {path!r} in the "
                             f"drawing; its calls are: {listed}.")
    return expand


def _matches(path, scope_path):
    """``layers.3`` names the scope ``layers.3`` and its later calls (``layers.3#2``);
    ``gelu`` every call of gelu (``gelu#1``, ``gelu#2``...), ``gelu#2`` one."""
    base, _, number = scope_path.rpartition("#")
    return scope_path == path or ("#" not in path and base == path and number.isdigit())


def opened(graph):
    """The scopes ``graph.expand`` keeps open: those it names and what holds them."""
    found = set()
    for scope in graph.scopes:
        if any(_matches(path, scope.path) for path in graph.expand):
            s = scope
            while s is not None:
                found.add(id(s))
                s = s.parent
    return found
