"""The text listing: one line per node, then the walk in visit order.

    # vjp of f(x)
    x = input  # () float32: 0.5
    sin_1 = sin x  # () float32: 0.47943
    exp_2 = exp x  # () float32: 1.6487
    mul_3 = multiply sin_1 exp_2  # () float32: 0.79044; output

Every name is bound once, and before it is used (nodes are listed in creation
order), like the jaxprs of Autodidax. A matrix value is written row by row:
its later rows are comment lines lined up under the first, e.g.

    w = input  # (2, 2) float32: [[1, 2],
    #                             [3, 4]]

and in the walk's one-line steps the rows follow each other. It prints in any terminal and diffs in a
test. After the nodes comes the walk: for vjp each step's cotangent and what
it sends to each input (``[1] exp_2 += 0.47943``: argument 1), for jvp the
tangents coming in and going out, for vmap the batch axes (a drawing folded
by module lists the walk a box at a time: "steps 2–6 of 43: the vjp walk
visits gelu#6"). Each node made by a module's call says which (``in
layers.3``); a folded call is one line, ``layers.3 = Linear gelu#3  # 20
parameters; in (2, 4) → out (2, 4); 6 nodes folded``. A compile drawing
lists its three stages one after the other (each binds its names once), a
Compiled node's steps under a ``# compiled_1, ...`` line, then the generated
source of each Compiled (``Graph.sources``).

Read next: ``render.py``.
"""

from .dot import caption, describe, folded, shape_text, visible_notes
from .record import shorten

HEADINGS = {
    "vjp": "vjp walk (reverse order): cotangent of each node -> cotangent sent to each input",
    "jvp": "jvp walk (forward order): tangents of the inputs -> tangent of each node",
    "vmap": "vmap walk (forward order): batch axes of the inputs -> batch axis of each node",
}
PARTS = {"forward": "# forward: the traced graph",
         "backward": "# backward: the graph the vjp walk built"}


def node_line(node, operands):
    if node.kind == "summary":
        return f"# … {node.folded} more nodes"
    if node.kind == "fold":
        return f"{node.shown} = {' '.join([node.op] + operands)}  # {'; '.join(node.tags)}; " \
               f"{describe(node)}"
    op = node.op if node.kind == "op" else node.kind
    if node.params:
        op += f"[{shorten(node.params)}]"
    words = [op] + operands
    comment = shape_text(node)
    if node.value is not None:
        comment += f": {node.value}"
    tags = []
    if node.sibling is not None:
        tags.append(f"output {node.sibling[0]} of {node.sibling[1]}")
    if node.output:
        tags.append("output")
    if node.off_tape:
        tags.append("off the tape")
    if node.collective:
        tags.append(node.collective)
    if node.cluster is not None and node.cluster.kind == "custom" and not node.custom:
        tags.append(f"inside {node.cluster.anchor}")
    if node.scope is not None:
        tags.append(f"in {node.scope.path}")
    if node.folded:
        tags.append(folded(node.folded))
    tags += node.tags
    if node.gradient_of is not None:
        tags.append(f"gradient of {node.gradient_of.name}")
    if node.made:
        tags.append(node.made)
    tags += [t for t in visible_notes(node.notes, None)
             if t == "unbatched" or t.endswith("(in_axes)")]
    if tags:
        comment += "; " + ", ".join(tags)
    return hang(f"{node.shown} = {' '.join(words)}  # {comment}", "#")


def to_text(graph):
    producers = {}
    for e in graph.edges:
        producers.setdefault(id(e.dst), []).append(e)
    lines = [f"# {graph.title}"]
    if graph.mode == "compile":
        lines += stage_lines(graph, producers)
    else:
        lines += part_lines(graph, producers)
    if graph.steps and graph.frame_steps is not None:  # folded by module: a line per box
        lines.append("")
        lines.append(HEADINGS[graph.steps[0].kind].split(":")[0] + ", box by box:")
        lines += [f"  {caption(graph, k)}" for k in graph.frame_steps]
    elif graph.steps:
        lines.append("")
        lines.append(HEADINGS[graph.steps[0].kind])
        for step in graph.steps:
            lines.append(step_line(step))
    if graph.results:
        lines.append("")
        for label, node, text in graph.results:
            lines.append(hang(f"{label} {node.shown}: {text}", " "))
    for heading, text in graph.sources:
        lines += ["", f"# {heading}", text.rstrip("\n")]
    return "\n".join(lines) + "\n"


def operands_of(node, producers):
    return [e.src.shown if e.src.kind != "summary" else "…" for e in producers.get(id(node), ())]


def part_lines(graph, producers):
    """The nodes, the forward graph first, then the backward graph; the outputs."""
    lines = []
    part = None
    split = any(n.part == "backward" for n in graph.nodes)
    for node in graph.nodes:
        if split and node.kind != "summary" and node.part != part:
            part = node.part
            lines.append(PARTS[part])
        lines.append(node_line(node, operands_of(node, producers)))
    outputs = [n.shown for n in graph.nodes if n.output and n.part == "forward"]
    lines.append(f"outputs: {' '.join(outputs)}")
    return lines


def stage_lines(graph, producers):
    """compile's stages one after the other, each under its box's label and
    with its outputs; a Compiled node's steps under a line naming it."""
    lines = []
    stage = fused = None

    def outputs():
        shown = [n.shown for n in graph.nodes if n.output and n.part == stage]
        lines.append(f"outputs: {' '.join(shown)}")

    for node in graph.nodes:
        if node.kind != "summary" and node.part != stage:
            if stage is not None:
                outputs()
            stage, fused = node.part, None
            box = next((c for c in graph.clusters if c.kind == "stage" and c.anchor == stage),
                       None)
            lines.append(f"# {box.label if box is not None else stage}")
        if node.cluster is not None and node.cluster.kind == "fused" and node.cluster is not fused:
            fused = node.cluster
            lines.append(f"# {fused.heading}")
        lines.append(node_line(node, operands_of(node, producers)))
    if stage is not None:
        outputs()
    return lines


def hang(text, lead):
    """A matrix value's later rows lined up under its first (a multi-line value
    starts with "[[", after a space): each later line starts with ``lead``."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    column = lines[0].rindex(" [[") + 1
    return "\n".join([lines[0]] + [lead.ljust(column) + line for line in lines[1:]])


def one_line(text):
    """A value on one line: its rows follow each other."""
    return text.replace("\n ", " ").replace("\n", " ")


def step_line(step):
    names = ", ".join(n.shown for n in step.nodes if n is not None)
    if step.kind == "vjp":
        sent = "  ".join(f"[{e.index}] {e.src.shown} += {one_line(t)}"
                         for e, t in step.contributions)
        got = ", ".join(one_line(t) for t in step.at_nodes)
        line = f"  {step.number:>3}. {names}  cotangent {got}  ->  {sent or '(nothing)'}"
    else:
        got = "  ".join(f"[{e.index}] {e.src.shown} {one_line(t)}" for e, t in step.contributions)
        out = ", ".join(one_line(t) for t in step.at_nodes)
        line = f"  {step.number:>3}. {names}  {got or '(no input)'}  ->  {out}"
    return f"{line}  # {one_line(step.remark)}" if step.remark else line
