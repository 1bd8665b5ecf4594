"""Drawing ``mx.compile``: the graph it traced, simplified and fused, side by side.

Read alongside: mlxref/core/transforms/compile.py, whose steps ``stages``
runs one at a time on the entry ``compile_trace`` makes, as ``mx.compile``
does (``compile_dfs``, ``compile_simplify``, ``compile_fuse``), and
mlxref/core/primitives/compiled.py (``Compiled`` and its ``source``).

``stages(fun, inputs)`` traces ``fun`` on placeholders, as ``mx.compile``
does on a cache miss, and keeps the tape after each step (a ``Stage``: each
node with its inputs as they were then; the later steps rebind those lists
and never change the values in them, so a copy of the lists is a snapshot).
``record`` draws the three tapes side by side, each in a box of its own:

- traced: every primitive ``compile_dfs`` found between the placeholders and
  the outputs (arrays with data are constants);
- simplified: what ``compile_simplify`` kept: equal scalar constants merged,
  copies and stop_gradients dropped, equivalent nodes on the same inputs merged;
- fused: each ``Compiled`` node of ``compile_fuse`` is a box holding the
  primitives it fused (its ``tape``, broadcasts included), in order.

Three boxes rather than two: simplify and fuse are separate steps with their
own rules, and a reader should see which one removed a node. A node keeps
the name it has in the traced graph in every box (``mul_3`` is the same
multiply in all three), so it can be followed from box to box; in DOT its id
is prefixed by its box (``simplified.mul_3``). The generated source of each
``Compiled`` goes in ``Graph.sources``: after the text listing, under the
drawing in the HTML page, each step's function named after its op
(``named_source``: ``exp_s1(t0)``, ``sin_f4(x0)``, where the source itself
says ``s1`` and ``f4``). Inputs show the arguments' values, and the outputs
the results of the compiled function (``compile_replace``: the fused nodes
run their generated source). The stages are drawn whatever compile's mode
(``mx.disable_compile()``): they show what compile does when it is on.

Read next: ``shrink.py`` (``collapse`` folds each Compiled box into one node).
"""

import re

from ..core.primitives.compiled import Compiled
from ..core.transforms.compile import (
    compile_fuse,
    compile_replace,
    compile_simplify,
    compile_trace,
)
from . import record
from .model import Edge, Graph, Node


class Stage:
    """The tape after one step: ``nodes`` are ``(node, its inputs then)``;
    ``inputs`` the placeholders' values, ``outputs`` the outputs' values."""

    def __init__(self, name, step, entry):
        self.name, self.step = name, step
        self.nodes = [(node, list(node.inputs)) for node in entry.tape]
        self.inputs = list(entry.inputs)
        self.outputs = list(entry.outputs)


def stages(fun, inputs):
    """``fun(*inputs)`` traced and compiled as ``mx.compile`` does, one step
    at a time: ``(stages, entry)``, the entry as compile caches it."""
    entry = compile_trace(fun, tuple(inputs))  # (eval inside fails with MLX's message)
    found = [Stage("traced", "compile_dfs", entry)]
    compile_simplify(entry)
    found.append(Stage("simplified", "compile_simplify", entry))
    compile_fuse(entry)
    found.append(Stage("fused", "compile_fuse", entry))
    return found, entry


def _names(traced, input_names):
    """id(TapeValue) -> name for every value of the traced tape: the inputs by
    ``input_names``, the rest numbered 1..n in tape order (``const_1``,
    ``mul_2``), as ``record.Builder`` names the nodes of a graph."""
    names = {id(v): n for v, n in zip(traced.inputs, input_names)}
    used = set(input_names)
    count = 0

    def name(v, short):
        nonlocal count
        if id(v) in names:
            return
        count += 1
        text = f"{short}_{count}"
        while text in used:
            text += "_"
        used.add(text)
        names[id(v)] = text

    for node, inputs in traced.nodes:
        for x in inputs:
            name(x, "const")
        op = record.op_name(node.primitive)
        for v in node.outputs:
            name(v, record.SHORT_NAMES.get(op, op))
    for v in traced.outputs:
        name(v, "const")
    return names


class _Drawer:
    """Builds the one Graph of the three stages."""

    def __init__(self, title, names, real_inputs, values):
        self.graph = Graph(title=title, mode="compile")
        self.names = names
        self.real_inputs = real_inputs  # the arguments, for the inputs' values
        self.values = values
        self.specs = []  # clusters, for record.resolve_clusters
        self.known = {}  # stage name -> {id(TapeValue): its Node in that stage}
        self.last = None  # the stage drawn before, for what simplify removed

    def node(self, stage, label, kind, shape, dtype, primitive=None, value=None):
        n = Node(name=f"{stage}.{label}", label=label, kind=kind, uid=len(self.graph.nodes) + 1,
                 shape=tuple(shape), dtype=dtype.name, value=value, part=stage)
        if primitive is not None:
            n.op = record.op_name(primitive)
            n.params = record.format_params(primitive)
            n.collective = record.collective(primitive)
        self.graph.nodes.append(n)
        return n

    def leaf(self, stage, v, known):
        """The Node of an input or constant ``v`` in ``stage`` (made once)."""
        if id(v) not in known:
            if v.index is not None:
                known[id(v)] = self.node(stage, self.names[id(v)], "input", v.shape, v.dtype,
                                         value=record.preview(self.real_inputs[v.index],
                                                              self.values))
            else:
                known[id(v)] = self.node(stage, self.names[id(v)], "constant", v.shape, v.dtype,
                                         value=record.preview(v.array, self.values))
        return known[id(v)]

    def edges(self, dst, sources):
        for i, src in enumerate(sources):
            self.graph.edges.append(Edge(src=src, dst=dst, index=i))

    def nodes_of(self, stage, inputs, known):
        """The Nodes of ``inputs``, a constant's made here (before its reader)."""
        return [known[id(x)] if id(x) in known else self.leaf(stage, x, known) for x in inputs]

    def stage(self, stage, by_primitive):
        """Draw one stage; ``by_primitive`` maps a fused primitive to its
        (simplified) node, for the names and shapes of a Compiled's steps."""
        known = self.known[stage.name] = {}
        for v in stage.inputs:
            self.leaf(stage.name, v, known)
        fused = 0
        for node, inputs in stage.nodes:
            if isinstance(node.primitive, Compiled):
                fused += 1
                self.compiled(stage.name, node, inputs, by_primitive, known, fused)
                continue
            sources = self.nodes_of(stage.name, inputs, known)
            for k, v in enumerate(node.outputs):
                n = self.node(stage.name, self.names[id(v)], "op", v.shape, v.dtype,
                              node.primitive)
                if len(node.outputs) > 1:
                    n.sibling = (k, len(node.outputs))
                known[id(v)] = n
                self.edges(n, sources)
        for v in stage.outputs:
            out = known[id(v)] if id(v) in known else self.leaf(stage.name, v, known)
            out.output = True
        members = [n for n in self.graph.nodes if n.part == stage.name]
        self.specs.append(("stage", stage.name, self.stage_label(stage), members))
        self.last = stage

    def stage_label(self, stage):
        """"simplified (compile_simplify): 7 nodes; gone: exp_5, neg_6, exp_7"."""
        count = len(stage.nodes)
        text = f"{stage.name} ({stage.step}): {count} node{'' if count == 1 else 's'}"
        compiled = [node for node, _ in stage.nodes if isinstance(node.primitive, Compiled)]
        if compiled:
            steps = sum(len(node.primitive.tape) for node in compiled)
            return text + f", {len(compiled)} of them Compiled, fusing {steps} primitives"
        if stage.name == "simplified":
            kept = {id(node) for node, _ in stage.nodes}
            gone = [self.names[id(node.outputs[0])] for node, _ in self.last.nodes
                    if id(node) not in kept]
            text += ("; gone: " + ", ".join(gone[:6]) + (", …" if len(gone) > 6 else "")
                     if gone else "; nothing to merge or drop")
        return text

    def compiled(self, stage, node, inputs, by_primitive, known, number):
        """A Compiled node as the box of its steps, named by their traced names."""
        p = node.primitive
        anchor = f"compiled_{number}"
        outside = self.nodes_of(stage, inputs, known)  # before the box, as its inputs
        steps = []
        for j, (primitive, refs, dtype) in enumerate(p.tape):
            sources = [steps[r - p.n_inputs] if r >= p.n_inputs else outside[r] for r in refs]
            original = by_primitive.get(id(primitive))
            if original is not None:
                v = original.outputs[0]
                label, shape = self.names[id(v)], v.shape
            else:  # pragma: no cover - every step is a node of the simplified tape
                label, shape = f"{anchor}_step{j}", node.outputs[0].shape
            n = self.node(stage, label, "op", shape, dtype, primitive)
            n.tags.append(f"in {anchor}")
            self.edges(n, sources)
            steps.append(n)
        for v, k in zip(node.outputs, p.outputs):
            known[id(v)] = steps[k]
        self.specs.append(("fused", anchor, _compiled_label(anchor, p), steps))
        self.graph.sources.append((f"{anchor}: {p.name}, its generated source (Compiled.source, "
                                   "each step's function named after its op)", named_source(p)))


def named_source(primitive):
    """``Compiled.source`` with each step's function named after its op: the
    loop calls ``f4`` (step 4's scalar rule) and ``s1`` (step 1's ``eval`` on
    whole lists), which say nothing to a reader of the drawing; shown, they
    are ``sin_f4`` and ``exp_s1``. Only calls are renamed (``f32[0]`` is the
    float32 slot, not a step)."""
    ops = [record.op_name(p) for p, _, _ in primitive.tape]

    def named(match):
        kind, j = match[1], int(match[2])
        return f"{ops[j]}_{kind}{j}(" if j < len(ops) else match[0]

    return re.sub(r"\b([fs])(\d+)\(", named, primitive.source)


def _compiled_label(anchor, primitive):
    """"compiled_1, 8 primitives fused:" and MLX's name for the node, cut into
    lines of about 40 characters between primitive names."""
    lines = ["Compiled"]
    for p, _, _ in primitive.tape:
        if len(lines[-1]) + len(p.name) > 40:
            lines.append("")
        lines[-1] += p.name
    count = len(primitive.tape)
    return "\n".join([f"{anchor}, {count} primitives fused:"] + lines)


def trace(fun, leaves, names, title, values=record.VALUES):
    """The Graph of ``mx.compile(fun)(*leaves)``: its three stages; returns
    ``(graph, arrays evaluated)`` (the caller forgets the latter)."""
    computed = record.evaluate(list(leaves))
    found, entry = stages(fun, list(leaves))
    traced, simplified, fused = found
    d = _Drawer(title, _names(traced, names), list(leaves), values)
    by_primitive = {id(node.primitive): node for node, _ in simplified.nodes}
    for stage in found:
        d.stage(stage, by_primitive)
    # The results, as the compiled function computes them (its fused loops).
    results = compile_replace(entry, list(leaves))
    computed += record.evaluate(results)
    for v, a in zip(fused.outputs, results):
        node = d.known["fused"][id(v)]
        if node.kind == "op":
            node.value = record.preview(a, values)
        d.graph.results.append(("compiled output", node, record.preview(a, values)))
    record.resolve_clusters(d.graph, d.specs)
    d.graph.edges.sort(key=lambda e: (e.dst.uid, e.index))
    return d.graph, computed
