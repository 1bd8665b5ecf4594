"""Recording: from arrays to the graph model (one Node per array, one Edge per input).

``Builder.add`` walks the lazy graph behind some arrays, iteratively (a chain
100,000 nodes deep is fine), and stops at the arrays it is told are inputs.
``Builder.finish`` then gives the nodes their stable names, numbered 1..n in
creation order (``array.id()``) *within the drawing* (the forward graph first, then
the backward graph of a grad), so a name never depends on what else the
process created; and it puts each ``CustomTransforms`` node and the
inner function's graph behind it into a cluster.

micrograd's ``draw_dot`` is the bar: it sorts recursively, names nodes by
``id()`` and keeps parents in a set (so ``a + a`` draws one edge). Here the walk
is a loop, names follow creation order, and every input slot is its own edge.

Evaluation cuts the graph: as in MLX, an evaluated array drops its inputs.
``recording()`` keeps the history of what is evaluated inside it, so a graph
can be drawn after ``print(loss)``; ``warn_evaluated`` says in one line why an
output that was computed and then evaluated outside it has nothing to draw.
``named_arrays`` names the arrays of a tree (a model's parameters) by path.

Read next: ``trace.py`` (overlays from traversal events), then ``dot.py``.
"""

import re
import warnings

from ..core.array import creation_order, array as _Array
from ..core.printing import format_elements
from ..core.dtypes import Dtype
from ..core.primitives.base import StopGradient
from ..core.primitives.custom import CustomTransforms
from ..core.distributed.primitives import AllGather, AllReduce, DistPrimitive, Recv, Send
from ..core.transforms.eval import eval_arrays
from ..core.transforms.tape import RetainGraph, retain_graph
from .model import Cluster, Edge, Graph, Node

# Primitive names as MLX's Python API spells the op; any name not listed is
# simply lower-cased ("Matmul" -> "matmul", "LogSumExp" -> "logsumexp").
FULL_NAMES = {
    "StopGradient": "stop_gradient",
    "ExpandDims": "expand_dims",
    "SliceUpdate": "slice_update",
    "GatherAxis": "gather_axis",
    "MaskedScatter": "masked_scatter",
    "CustomTransforms": "custom_function",
    "FloorDivide": "floor_divide",
    "NotEqual": "not_equal",
    "LessEqual": "less_equal",
    "GreaterEqual": "greater_equal",
    "LogicalNot": "logical_not",
    "LogicalAnd": "logical_and",
    "LogicalOr": "logical_or",
    "ArgReduce": "arg_reduce",
    "And": "all",
    "Or": "any",
    "QuantizedMatmul": "quantized_matmul",
    "GatherQMM": "gather_qmm",
    "QQMatmul": "qqmm",
    "GatherQQMM": "gather_qqmm",
    "GatherMM": "gather_mm",
    "BlockMaskedMM": "block_masked_mm",
    "SegmentedMM": "segmented_mm",
    # the collectives (MLX names an all-reduce by its reduction, "Sum AllReduce")
    "Sum AllReduce": "all_sum",
    "Max AllReduce": "all_max",
    "Min AllReduce": "all_min",
    "AllGather": "all_gather",
    "Sum ReduceScatter": "sum_scatter",
}

# The short form used in node names (mul_3); anything not listed is the full name.
SHORT_NAMES = {
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "negative": "neg",
    "power": "pow",
    "custom_function": "custom",
    "quantized_matmul": "qmm",
}

VALUES = 12  # arrays up to this many elements are shown whole (``values=``)
EDGE = 3  # beyond that: this many leading and trailing items per axis, as MLX prints
PARAMS_WIDTH = 40


def op_name(primitive):
    """The full, lower-case name of a primitive: "multiply", "sum", "checkpoint"."""
    name = primitive.name
    if name.startswith("Compiled"):  # MLX's name lists the fused primitives: a parameter here
        return "compiled"
    return FULL_NAMES.get(name, name.lower())


def collective(primitive):
    """What a collective node does, in words: "" for any other node. On a
    group of one MLX builds no collective node, so every one drawn is a
    communication between processes, from this rank's side."""
    if not isinstance(primitive, DistPrimitive):
        return ""
    group = primitive.group
    ranks, rank = group.size(), group.rank()
    if isinstance(primitive, AllReduce):
        what = {"sum": "the sum", "max": "the maximum", "min": "the minimum"}
        does = f"{what[primitive.reduce_type]} over {ranks} ranks"
    elif isinstance(primitive, AllGather):
        does = f"the inputs of {ranks} ranks, in rank order"
    elif isinstance(primitive, Send):
        does = f"sends its input to rank {primitive.dst}"
    elif isinstance(primitive, Recv):
        does = f"what rank {primitive.src} sends"
    else:  # ReduceScatter
        does = f"block {rank} of the sum over {ranks} ranks"
    return f"collective: {does}; drawn on rank {rank}"


def format_params(primitive):
    parts = []
    for key, value in primitive.params().items():
        if isinstance(value, Dtype):
            value = value.name
        parts.append(f"{key}={value}" if isinstance(value, str) else f"{key}={value!r}")
    return ", ".join(parts)


def shorten(params):
    """Parameters on one line (the text listing): cut at ``PARAMS_WIDTH``."""
    return params if len(params) <= PARAMS_WIDTH else params[: PARAMS_WIDTH - 1] + "…"


def wrap(params):
    """Parameters on lines of about ``PARAMS_WIDTH`` characters (the drawings),
    broken between parameters, so every parameter stays readable."""
    lines = []
    for part in re.split(r", (?=\w+=)", params):
        if lines and len(lines[-1]) + 2 + len(part) <= PARAMS_WIDTH:
            lines[-1] += ", " + part
        else:
            lines.append(part)
    return lines


def format_scalar(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%.5g" % v
    text = str(v)  # a SymPy expression
    return text if len(text) <= 24 else text[:23] + "…"


def check_values(values, who):
    """``values=N``: how many elements an array may have to be shown whole."""
    if isinstance(values, bool) or not isinstance(values, int) or values < 1:
        raise ValueError(f"[{who}] values must be an integer of at least 1, not {values!r}.")
    return values


def format_value(data, shape, limit=VALUES):
    """The elements of an array (``data`` flat, row-major) laid out as MLX prints
    them (``mlxref.core.printing.format_elements``): one line per row of a matrix,
    nested brackets for more dimensions.

    Up to ``limit`` elements are all shown; beyond that every axis longer than
    ``2 * EDGE`` keeps its first and last items around "...", so a (40, 50)
    matrix reads ``[[0, 1, 2, ..., 47, 48, 49],`` then six more rows and a
    "...," line. Rows after the first are indented to line up under it.
    """
    return format_elements(data, shape, format_scalar, edge=max(1, min(EDGE, limit // 2)),
                           whole=len(data) <= limit)


def preview(a, limit=VALUES):
    """The value of an array that already has its data (see ``format_value``), else None."""
    if a is None or not a.is_available():
        return None
    return format_value(a.data(), tuple(a.shape), limit)


def collect(outputs, stop):
    """Every array behind ``outputs`` (siblings included), not walking past ``stop``.

    ``stop`` holds ids; those arrays are included but their inputs are not.
    Iterative depth-first search; the order does not matter (names sort later).
    """
    seen, found = set(), []
    stack = list(outputs)
    while stack:
        a = stack.pop()
        if a.id() in seen:
            continue
        for s in (a,) if a.id() in stop else a.outputs():
            if s.id() not in seen:
                seen.add(s.id())
                found.append(s)
        if a.id() not in stop:
            stack.extend(x for x in a.inputs() if x.id() not in seen)
    return found


class DrawingWarning(UserWarning):
    """A drawing has less in it than its caller computed (see ``warn_evaluated``)."""


def recording():
    """``with viz.recording(): ...``: arrays evaluated inside keep their graph.

    MLX's ``eval`` (and so ``print``, ``item``, ``tolist``) lets an evaluated
    array drop its inputs to free memory; inside this block nothing is dropped,
    so ``viz.draw(loss)`` after ``print(loss)`` draws what computed it, as
    micrograd does. The price is memory: every intermediate stays alive as long
    as what was computed from it (``checkpoint`` saves nothing inside). Per
    thread, like MLX's transform state.
    """
    return RetainGraph()


def warn_evaluated(outputs, who, inputs=()):
    """Warn (``DrawingWarning``, one line) about outputs that a primitive
    computed and evaluation then cut from their graph: each is drawn as one
    node with no inputs. An output named as an input is meant to be one."""
    named = {id(a) for a in inputs}
    cut = [i for i, o in enumerate(outputs)
           if not o.has_primitive() and o.is_detached() and id(o) not in named]
    if not cut:
        return
    which = "the array" if len(outputs) == 1 else (
        "output " + ", ".join(map(str, cut)) if len(cut) < len(outputs) else "every output")
    warnings.warn(
        f"{who}: {which} was evaluated (mx.eval, print, item) outside viz.recording(), "
        "so, as in MLX, it dropped the graph that computed it and is drawn as one node; "
        "compute it inside `with viz.recording():` to draw its graph",
        DrawingWarning, stacklevel=3)


def named_arrays(tree, name=""):
    """``[(name, array)]`` for the arrays of ``tree``, named by their path in it
    (``layers.0.weight``), after ``name`` when one is given (``params.w``);
    a module gives its ``parameters()``. Other leaves are left out."""
    from ..nn.layers import Module  # nn builds on core only; imported when used
    from ..utils import tree_flatten

    if isinstance(tree, Module):
        tree = tree.parameters()
    prefix = "." + name if name else ""
    return [(path, a) for path, a in tree_flatten(tree, prefix=prefix)
            if isinstance(a, _Array)]


def next_id():
    """Every array created from now on has an ``id()`` at least this large."""
    return next(creation_order)


def forget(arrays):
    """Detach the evaluated ``arrays`` as ``mx.eval`` would have, unless the
    caller is recording: what viz evaluated to show values keeps no graph."""
    if retain_graph():
        return
    for a in arrays:
        if a.is_available() and a.has_primitive():
            a.detach()


def evaluate(arrays):
    """Evaluate the arrays that can be, keeping every graph intact.

    Used by ``trace`` after the transform ran, so drawings show values. An
    array behind a vmap placeholder (no data, no primitive) cannot be
    evaluated and is skipped. Returns the arrays it computed (``forget``
    detaches them once the drawing is made).
    """
    ok = {}  # array id -> evaluable
    walked = []  # the evaluable arrays not evaluated yet (computed if behind ``todo``)
    for root in arrays:
        stack = [root]
        while stack:
            a = stack[-1]
            if a.id() in ok:
                stack.pop()
                continue
            if a.is_available() or not a.has_primitive():
                ok[a.id()] = a.is_available()
                stack.pop()
                continue
            pending = [x for x in a.inputs() if x.id() not in ok]
            if pending:
                stack.extend(pending)
                continue
            ok[a.id()] = all(ok[x.id()] for x in a.inputs())
            if ok[a.id()]:
                walked.extend(a.outputs())
            stack.pop()
    todo = [a for a in arrays if ok[a.id()] and not a.is_available()]
    with RetainGraph():
        eval_arrays(todo)
    return [a for a in walked if a.is_available()]


class Builder:
    """Collects nodes and edges, then names them and finds the custom clusters."""

    def __init__(self, mode, title, leaves_are_inputs=False, values=VALUES):
        self.graph = Graph(title=title, mode=mode)
        self.values = values  # arrays up to this many elements are shown whole
        self.node_of = {}  # array.id() -> Node
        self.names = {}  # array.id() -> display name given by the caller
        self.positions = {}  # array.id() -> argument position, to list inputs in order
        self.leaves_are_inputs = leaves_are_inputs
        self._clusters = []  # (kind, anchor, label, nodes), resolved in finish()

    def add(self, outputs, inputs=(), part="forward"):
        """Record the graph behind ``outputs``, stopping at ``inputs`` and at
        arrays already recorded (edges to those are "cross" edges when the
        part differs). Returns the new nodes."""
        input_ids = {a.id() for a in inputs}
        stop = input_ids | set(self.node_of)
        new = [a for a in collect(outputs, stop) if a.id() not in self.node_of]
        nodes = []
        for a in new:
            if a.id() in input_ids or (not a.has_primitive() and self.leaves_are_inputs):
                kind = "input"
            elif not a.has_primitive():
                kind = "constant"
            else:
                kind = "op"
            node = Node(name="", kind=kind, uid=a.id(), shape=tuple(a.shape),
                        dtype=a.dtype.name, value=preview(a, self.values), part=part, array=a)
            if kind == "op":
                node.op = op_name(a.primitive())
                node.params = format_params(a.primitive())
                node.collective = collective(a.primitive())
                if isinstance(a.primitive(), CustomTransforms):
                    node.custom = node.op
                outputs = a.outputs()
                if len(outputs) > 1:
                    node.sibling = ([o.id() for o in outputs].index(a.id()), len(outputs))
            self.node_of[a.id()] = node
            nodes.append(node)
        for node in nodes:
            if node.kind != "op":
                continue
            cut = isinstance(node.array.primitive(), StopGradient)
            for i, x in enumerate(node.array.inputs()):
                src = self.node_of[x.id()]
                style = "cut" if cut else ("cross" if src.part != node.part else "data")
                self.graph.edges.append(Edge(src=src, dst=node, index=i, style=style))
        self.graph.nodes.extend(nodes)
        return nodes

    def name_input(self, a, name, position):
        """Call input ``a`` ``name`` (the first name given wins)."""
        self.names.setdefault(a.id(), name)
        self.positions.setdefault(a.id(), position)

    def node(self, a):
        return self.node_of.get(a.id())

    def add_cluster(self, kind, anchor, label, nodes):
        """A box around ``nodes``, about ``anchor`` (a Node, or None for the one
        cluster of its kind); ``label`` may be a function called once names exist."""
        self._clusters.append((kind, anchor, label, list(nodes)))

    def finish(self):
        g = self.graph
        # Forward first; the named inputs first, in argument order; then creation order.
        position = self.positions

        def order(n):
            named = n.kind == "input" and n.array.id() in position
            return (n.part != "forward", not named, position.get(n.array.id(), 0), n.uid)

        g.nodes.sort(key=order)
        g.edges.sort(key=lambda e: (e.dst.uid, e.index))
        self._name_nodes()
        for node in g.nodes:
            if node.custom and (node.sibling is None or node.sibling[0] == 0):
                self._custom_cluster(node)
        resolve_clusters(g, self._clusters)
        return g

    def _name_nodes(self):
        used = set(self.names.values())
        n = 0
        for node in self.graph.nodes:
            given = self.names.get(node.array.id())
            if given is not None and node.kind == "input":
                node.name = given
                continue
            n += 1
            short = {"input": "input", "constant": "const"}.get(node.kind)
            name = f"{short or SHORT_NAMES.get(node.op, node.op)}_{n}"
            while name in used:  # only if a caller named an input like this
                name += "_"
            used.add(name)
            node.name = name

    def _custom_cluster(self, node):
        """The CustomTransforms node, its siblings and the inner function's graph.

        Its inputs are the function's inputs, then its outputs behind
        stop_gradient. The inner graph is what lies behind those, short of the
        function's inputs, keeping only nodes nothing outside it consumes.
        """
        g = self.graph
        a = node.array
        n = len(a.inputs()) - a.primitive().num_outputs  # the function's inputs come first
        siblings = [self.node_of[s.id()] for s in a.outputs() if s.id() in self.node_of]
        boundary = {id(self.node_of[x.id()]) for x in a.inputs()[:n]}
        producers, consumers = {}, {}
        for e in g.edges:
            producers.setdefault(id(e.dst), []).append(e.src)
            consumers.setdefault(id(e.src), []).append(e.dst)
        region = {}
        stack = [self.node_of[x.id()] for x in a.inputs()[n:]]
        while stack:
            m = stack.pop()
            if id(m) in region or id(m) in boundary or m.part != node.part or m.kind == "input":
                continue
            region[id(m)] = m
            stack.extend(producers.get(id(m), ()))
        inside = set(region) | {id(s) for s in siblings}
        changed = True
        # Drop what is also used outside (a value captured from outside); the
        # backward graph may read the outputs (checkpoint's Depends does).
        while changed:
            changed = False
            for key, m in list(region.items()):
                if any(id(c) not in inside and c.part == node.part
                       for c in consumers.get(id(m), ())):
                    del region[key]
                    inside.discard(key)
                    changed = True
        label = custom_label(node)
        self.add_cluster("custom", node, label, siblings + list(region.values()))


def custom_label(node):
    """"checkpoint" or "custom_function: custom vjp, jvp" (the rules that are set)."""
    if node.custom == "checkpoint":
        return f"checkpoint {node.name}: recomputed in the backward pass"
    given = node.array.primitive().custom_rules
    return f"custom_function {node.name}" + (f": custom {', '.join(given)}" if given else "")


def resolve_clusters(graph, specs):
    """Nest the clusters by containment and give each node its innermost one.

    ``specs`` are ``(kind, anchor, label, nodes)``; the anchor is a Node, a
    name, or None. A node in several clusters
    belongs to the smallest; a cluster's parent is the smallest larger cluster
    holding all of its nodes. Empty clusters are dropped.
    """
    clusters = []
    for kind, anchor, label, nodes in specs:
        nodes = [n for n in nodes if n is not None]
        if not nodes:
            continue
        first = min(nodes, key=lambda n: n.uid)
        anchor = "" if anchor is None else anchor if isinstance(anchor, str) else anchor.name
        key = f"cluster_{kind}" + (f"_{anchor}" if anchor else "")
        c = Cluster(key=key, kind=kind, anchor=anchor,
                    label=label() if callable(label) else label,
                    order=first.uid, members={id(n) for n in nodes})
        clusters.append(c)
    # Larger clusters first, so a later (smaller) one overrides a node's cluster.
    clusters.sort(key=lambda c: (-len(c.members), c.order, c.kind))
    for i, c in enumerate(clusters):
        for d in reversed(clusters[:i]):  # the smallest larger one first
            if c.members <= d.members:
                c.parent = d
                break
    by_id = {id(n): n for n in graph.nodes}
    for c in clusters:
        for key in c.members:
            by_id[key].cluster = c
    # The forward graph first (dot usually places it on the left), then creation order.
    first = {"forward": 0, "backward": 1}
    graph.clusters = sorted(clusters, key=lambda c: (first.get(c.kind, 2), c.order,
                                                     -len(c.members), c.kind))
