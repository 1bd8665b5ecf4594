"""Writing a Graph as Graphviz DOT text: the drawing itself, and one frame per step.

Everything is written in a fixed order (nodes by creation order, edges by
consumer then argument index, clusters by their first node), so the same
graph always gives byte-identical text and tests compare it with files.

How a drawing reads (the legend under the title says it too):

- inputs are green, constants grey "notes", outputs orange with a double
  border; operations white boxes; the backward graph of grad is lavender;
- an edge goes from an input of an operation to it, labelled with the
  argument index (``a * a`` has edges 0 and 1);
- a stop_gradient's input edge is a dashed red cut: no derivative crosses it;
- vjp notes are red, jvp notes blue, vmap notes green; nodes the walk never
  looks at are greyed; in a frame, the node being visited has a thick border
  (and the SVG class ``visiting``, which the HTML stepper scrolls to) and
  backward nodes not built yet are invisible (they keep their place, so the
  layout does not jump between frames).

Read next: ``text.py`` (the same graph as a listing), ``render.py``.
"""

from .record import wrap

NOTE_COLOURS = {"vjp": "#c62828", "jvp": "#1565c0", "vmap": "#2e7d32"}
RESULT_COLOUR = "#6a1b9a"

# (fill, border) per look
LOOKS = {
    "op": ("#ffffff", "#455a64"),
    "input": ("#dcedc8", "#33691e"),
    "constant": ("#eceff1", "#78909c"),
    "output": ("#ffe0b2", "#e65100"),
    "backward": ("#ede7f6", "#5e35b1"),
    "custom": ("#fff8e1", "#a67c00"),
    "fold": ("#fff3e0", "#ef6c00"),
    "summary": ("#fafafa", "#9e9e9e"),
    "off": ("#f5f5f5", "#bdbdbd"),
}

CLUSTER_LOOKS = {
    "forward": 'style="rounded"; color="#90a4ae"; fontcolor="#455a64"',
    "backward": 'style="rounded,filled"; fillcolor="#faf7fd"; color="#9575cd"; fontcolor="#5e35b1"',
    "custom": 'style="rounded,dashed,filled"; fillcolor="#fffdf3"; color="#c9a227"; '
              'fontcolor="#8d6e00"',
    "recompute": 'style="rounded,filled"; fillcolor="#fff3e0"; color="#ef6c00"; penwidth=2; '
                 'fontcolor="#e65100"',
}

LEGEND = {
    "vjp": "red: the vjp walk (reverse step numbers, cotangents on nodes and edges)",
    "jvp": "blue: the jvp walk (forward step numbers, tangents on nodes and edges)",
    "vmap": "green: the batch axis of every node (from the vmap walk)",
    "grad": "grey box: the forward graph and the vjp walk (red) · purple box: the backward "
            "graph the walk built; dotted edges read forward values",
}
LEGEND["value_and_grad"] = LEGEND["checkpoint"] = LEGEND["grad"]


def legend(graph):
    """What the colours mean, for what this drawing holds."""
    kinds = {n.kind for n in graph.nodes}
    items = []
    if "input" in kinds:
        items.append("green: inputs")
    if "constant" in kinds:
        items.append("grey notes: constants")
    if any(n.output for n in graph.nodes):
        items.append("orange, double border: outputs")
    items.append("edge labels: argument index")
    if any(e.style == "cut" for e in graph.edges):
        items.append("dashed red: stop_gradient cut")
    if any(n.off_tape for n in graph.nodes):
        items.append("greyed: never visited by the walk")
    lines = [LEGEND[graph.mode]] if graph.mode in LEGEND else []
    return lines + [" · ".join(items)]


def quote(text):
    """A DOT double-quoted string."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def html(text):
    """Text for an HTML-like label."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def shape_text(node):
    return f"{node.shape!r} {node.dtype}"


def visible_notes(notes, frame):
    return [text for step, text in notes if frame is None or step <= frame]


def frame_notes(notes, frame):
    """``(text, shown)`` for every note. A frame keeps the notes of later steps
    as text in the background colour, so every node has its final size in
    every frame and the layout does not move while stepping."""
    return [(text, frame is None or step <= frame) for step, text in notes]


def folded(count):
    return f"{count} node{'' if count == 1 else 's'} folded"


def describe(node):
    """The second label line, or lines where the parameters are long: what made the node."""
    if node.kind == "summary":
        return f"… {node.folded} more nodes"
    if node.kind == "fold":
        return folded(node.folded)
    words = node.op if node.kind == "op" else node.kind
    if node.params:
        words += " (" + "\n".join(wrap(node.params)) + ")"
    if node.sibling is not None:
        words += f" · output {node.sibling[0]} of {node.sibling[1]}"
    if node.folded:
        words += f" · {folded(node.folded)}"
    return words


def node_label(node, notes, colour, fill):
    """An HTML-like label: a one-column table, one row per line."""
    rows = [f"<B>{html(node.name)}</B>"]
    if node.kind == "fold":
        rows += [html(node.tags[0]), html(describe(node))]
    elif node.kind == "summary":
        rows = [html(describe(node))]
    else:
        rows += [f'<FONT POINT-SIZE="9">{html(line)}</FONT>' for line in describe(node).split("\n")]
        rows.append(f'<FONT POINT-SIZE="9">{html(shape_text(node))}</FONT>')
        if node.value is not None:
            rows.append(html(node.value))
        for text, shown in notes:
            c = RESULT_COLOUR if text.startswith("gradient") else colour
            c = c if shown else fill
            rows.append(f'<FONT COLOR="{c}" POINT-SIZE="10">{html(text)}</FONT>')
        if node.gradient_of is not None:
            rows.append(f'<FONT COLOR="{RESULT_COLOUR}" POINT-SIZE="10">'
                        f"gradient of {html(node.gradient_of.name)}</FONT>")
    cells = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{cells}</TABLE>>'


def node_attrs(graph, node, frame):
    colour = NOTE_COLOURS.get(graph_walk(graph), RESULT_COLOUR)
    notes = frame_notes(node.notes, frame)
    if node.off_tape:
        look = "off"
    elif node.kind in ("input", "constant", "fold", "summary"):
        look = node.kind
    elif node.output:
        look = "output"
    elif node.custom:
        look = "custom"
    elif node.part == "backward":
        look = "backward"
    else:
        look = "op"
    fill, border = LOOKS[look]
    if node.output and node.kind != "summary" and not node.off_tape:
        fill, border = LOOKS["output"]
    attrs = [f"label={node_label(node, notes, colour, fill)}"]
    shape, style = "box", "rounded,filled"
    if node.kind == "constant":
        shape, style = "note", "filled"
    elif node.kind == "fold" or (node.custom and node.folded):
        shape, style = "box3d", "filled"
    elif node.kind == "summary":
        style = "rounded,dashed,filled"
    elif node.kind == "input":
        style = "rounded,filled,bold"
    if node.output and node.kind != "summary":
        attrs.append("peripheries=2")
    if frame is not None and node.reveal > frame:
        style = "invis"
    visiting = frame is not None and frame in node.visited
    if visiting:  # the node this frame's step visits
        border = colour
    attrs += [f"shape={shape}", f'style="{style}"', f'fillcolor="{fill}"', f'color="{border}"']
    if visiting:
        attrs += ["penwidth=3", 'class="visiting"']
    if node.off_tape:
        attrs.append('fontcolor="#9e9e9e"')
    return attrs


def edge_attrs(graph, edge, frame):
    colour = NOTE_COLOURS.get(graph_walk(graph), RESULT_COLOUR)
    rows = [] if edge.index is None else [str(edge.index)]
    attrs = []
    if edge.style == "cut":
        rows[0:1] = [f"{rows[0]} ✂ cut" if rows else "✂ cut"]
        attrs += ['color="#d32f2f"', 'fontcolor="#d32f2f"', 'style="dashed"', "penwidth=1.5"]
    elif edge.style == "cross":
        attrs += ['color="#9575cd"', 'fontcolor="#7e57c2"', 'style="dotted"', "constraint=false",
                  "labeldistance=1.8", "labelangle=35"]
    elif edge.src.kind == "summary" or edge.dst.kind == "summary":
        attrs += ['color="#9e9e9e"', 'style="dashed"']
    rows = [html(r) for r in rows]
    for text, shown in frame_notes(edge.notes, frame):
        rows.append(f'<FONT COLOR="{colour if shown else "#ffffff"}">{html(text)}</FONT>')
    if rows:
        # A cross edge is long: its index sits by its head, clear of the forward labels.
        key = "headlabel" if edge.style == "cross" else "label"
        attrs.insert(0, f"{key}=<{'<BR/>'.join(rows)}>")
    if frame is not None and (edge.src.reveal > frame or edge.dst.reveal > frame):
        attrs = [a for a in attrs if not a.startswith("style=")] + ['style="invis"']
    return attrs


def graph_walk(graph):
    """The kind of walk a mode draws: "vjp", "jvp", "vmap" or None."""
    return {"vjp": "vjp", "grad": "vjp", "value_and_grad": "vjp", "checkpoint": "vjp",
            "jvp": "jvp", "vmap": "vmap"}.get(graph.mode)


def title_label(graph, frame):
    rows = [f'<B>{html(graph.title)}</B>']
    if frame is not None and graph.steps:
        step = graph.steps[frame - 1]
        names = ", ".join(n.name for n in step.nodes if n is not None)
        rows.append(f'<FONT COLOR="{NOTE_COLOURS[step.kind]}">step {frame} of '
                    f'{len(graph.steps)}: the {step.kind} walk visits {html(names)}</FONT>')
    for text in legend(graph):
        rows.append(f'<FONT POINT-SIZE="9" COLOR="#616161">{html(text)}</FONT>')
    return "<" + "<BR/>".join(rows) + ">"


def to_dot(graph, frame=None):
    """The DOT text; ``frame`` k (1-based) shows the walk up to its k-th step."""
    out = ["digraph mlxref {"]
    out.append(f"  graph [label={title_label(graph, frame)}, labelloc=t, labeljust=l, "
               'fontname="Helvetica", fontsize=12, rankdir=TB, newrank=true, '
               "nodesep=0.35, ranksep=0.45];")
    out.append('  node [fontname="Helvetica", fontsize=11, margin="0.12,0.05"];')
    out.append('  edge [fontname="Helvetica", fontsize=9, color="#616161", arrowsize=0.7];')

    members = {}  # id(cluster) or None -> nodes
    for node in graph.nodes:
        members.setdefault(id(node.cluster) if node.cluster is not None else None, []).append(node)
    children = {}
    for c in graph.clusters:
        children.setdefault(id(c.parent) if c.parent is not None else None, []).append(c)

    def write_nodes(key, indent):
        for node in members.get(key, ()):
            out.append(f"{indent}{quote(node.name)} [{', '.join(node_attrs(graph, node, frame))}];")

    write_nodes(None, "  ")
    # Clusters, nested, without recursion: ("open", cluster, depth) / ("close", depth).
    stack = [("open", c, 1) for c in reversed(children.get(None, []))]
    while stack:
        item = stack.pop()
        if item[0] == "close":
            out.append("  " * item[1] + "}")
            continue
        _, c, depth = item
        indent = "  " * depth
        out.append(f"{indent}subgraph {quote(c.key)} {{")
        out.append(f"{indent}  label={quote(c.label)}; {CLUSTER_LOOKS[c.kind]};")
        write_nodes(id(c), indent + "  ")
        stack.append(("close", depth))
        stack.extend(("open", child, depth + 1) for child in reversed(children.get(id(c), [])))
    for edge in graph.edges:
        attrs = edge_attrs(graph, edge, frame)
        tail = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"  {quote(edge.src.name)} -> {quote(edge.dst.name)}{tail};")
    out.append("}")
    return "\n".join(out) + "\n"


def frames(graph):
    """One DOT text per step of the walk; the drawing itself when there is none."""
    if not graph.steps:
        return [to_dot(graph)]
    return [to_dot(graph, k) for k in range(1, len(graph.steps) + 1)]
