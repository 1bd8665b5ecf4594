"""Writing a Graph as Graphviz DOT: the drawing itself, and one frame per step.

``digraph(graph)`` builds a ``graphviz.Digraph`` (the Python package), and
``to_dot`` is that Digraph's source: one model, one writer, so the text, the
rendered files and the Digraph a user restyles (``Drawing.to_graphviz()``)
always agree. Everything is added in a fixed order (nodes by creation order,
edges by consumer then argument index, clusters by their first node), so the
same graph always gives byte-identical text and tests compare it with files.

How a drawing reads: every colour means one thing in every drawing
(``PALETTE``), and the legend under the title says what the colours present
mean, in the same words for every transform:

- inputs green, constants grey notes, outputs orange with a double border,
  operations white boxes;
- an edge goes from an input of an operation to it, labelled with the
  argument index (``a * a`` has edges 0 and 1);
- the walk is red (vjp), blue (jvp) or teal (vmap): its step numbers and
  values on the nodes, and the edges it sent something along, in that colour;
  a vjp walk's edges point the way the cotangents flow, from a node to its
  inputs (``dir=back``: the layout keeps the forward ranks);
- purple is the backward graph a grad built (each node says which vjp step
  made it), the gradients, and (dotted) the forward values it reads;
- a stop_gradient's input edge is a dashed black cut: no derivative crosses it;
- a collective (all_sum, all_gather...: it talks to the other processes when
  evaluated) is a light blue box with a bold border, saying what it does and
  on which rank the drawing was made;
- compile's stages are grey boxes side by side, and each Compiled node a
  slate box around the primitives it fused;
- a model's nodes are in bold boxes, one per call of a module or of an nn
  function, labelled with its path, class and parameter count
  (``layers.3: Linear, 20 parameters``); folded, each is a pink 3-D box
  with the same, the shapes going in and out, and the walk's steps through it;
- nodes the walk never looks at are greyed; in a frame, the node being
  visited has a thick border (and the SVG class ``visiting``, which the HTML
  stepper scrolls to) and backward nodes not built yet are invisible (they
  keep their place, so the layout does not jump between frames).

The layout options (``Graph.layout``): ``rankdir`` "TB" (default) or "LR",
``size`` (inches) and ``dpi``. The forward graph is placed before the backward
graph, and compile's stages in order: left of it in TB, above it in LR.

Read next: ``text.py`` (the same graph as a listing), ``render.py``.
"""

import graphviz
from graphviz import quoting

from .record import wrap

# Every colour the drawings use, and the one thing it means.
PALETTE = {
    "vjp": "#c62828",  # red: the vjp walk
    "jvp": "#1565c0",  # blue: the jvp walk
    "vmap": "#00838f",  # teal: the vmap walk
    "gradient": "#6a1b9a",  # purple: gradients (text)
    "cross": "#9575cd",  # purple: the backward graph reading a forward value
    "cut": "#212121",  # black: a stop_gradient cut
    "edge": "#616161",  # grey: a data edge
    "legend": "#616161",
    "hidden": "#9e9e9e",  # grey dashed: left out (max_nodes)
}
NOTE_COLOURS = {k: PALETTE[k] for k in ("vjp", "jvp", "vmap")}
RESULT_COLOUR = PALETTE["gradient"]
COLLECTIVE_COLOUR = "#01579b"  # the words saying what a collective does

# (fill, border) per look
LOOKS = {
    "op": ("#ffffff", "#455a64"),
    "input": ("#dcedc8", "#33691e"),
    "constant": ("#eceff1", "#78909c"),
    "output": ("#ffe0b2", "#e65100"),
    "backward": ("#ede7f6", "#5e35b1"),
    "custom": ("#fff8e1", "#a67c00"),
    "collective": ("#e1f5fe", "#01579b"),
    "fold": ("#fce4ec", "#ad1457"),
    "summary": ("#fafafa", "#9e9e9e"),
    "off": ("#f5f5f5", "#bdbdbd"),
}

# (fill or None, border, label colour, extra style) per kind of box
CLUSTER_LOOKS = {
    "forward": (None, "#90a4ae", "#455a64", "rounded"),
    "backward": ("#faf7fd", "#9575cd", "#5e35b1", "rounded,filled"),
    "custom": ("#fffdf3", "#c9a227", "#8d6e00", "rounded,dashed,filled"),
    "recompute": ("#efebe9", "#6d4c41", "#4e342e", "rounded,filled"),
    "stage": (None, "#90a4ae", "#455a64", "rounded"),  # a step of compile: as forward
    "module": (None, "#4f6d7a", "#263238", "rounded,bold"),  # one call of a module
    "fused": ("#eef3f8", "#37474f", "#263238", "rounded,filled"),
}

# What each look means, in the same words in every drawing (and in the README).
LEGEND = {
    "vjp": "red: the vjp walk (reverse step numbers, cotangents; its edges point the way "
           "cotangents flow)",
    "jvp": "blue: the jvp walk (forward step numbers, tangents)",
    "vmap": "teal: the vmap walk (the batch axis of every node)",
    "backward": "purple: the backward graph (each node says the vjp step that made it), "
                "gradients, and dotted: a forward value it reads",
    "recompute": "brown box: recomputed by the backward pass",
    "custom": "gold box: custom_function or checkpoint",
    "fused": "slate box: one Compiled node of compile, the primitives it fused",
    "module": "bold box: one call of a module (its path in the model) or of an nn function",
    "input": "green: inputs",
    "constant": "grey notes: constants",
    "output": "orange, double border: outputs",
    "collective": "light blue, bold: collectives (they talk to the other ranks)",
    "index": "edge labels: argument index",
    "cut": "dashed black: stop_gradient cut",
    "off": "greyed: never visited by the walk",
    "fold": "pink 3-D box: folded nodes",
    "summary": "dashed grey: nodes left out",
}
WALK_ITEMS = ("vjp", "jvp", "vmap", "backward", "recompute", "custom", "fused", "module")


def legend(graph):
    """What the colours present mean: the walk's line, then the nodes' line."""
    present = {"index"} | {n.kind for n in graph.nodes} | {c.kind for c in graph.clusters}
    present |= {"output"} if any(n.output for n in graph.nodes) else set()
    present |= {"off"} if any(n.off_tape for n in graph.nodes) else set()
    present |= {"cut"} if any(e.style == "cut" for e in graph.edges) else set()
    present |= {"custom"} if any(n.custom for n in graph.nodes) else set()
    present |= {"collective"} if any(n.collective for n in graph.nodes) else set()
    if graph_walk(graph):
        present.add(graph_walk(graph))
    walk = [LEGEND[k] for k in WALK_ITEMS if k in present]
    looks = [LEGEND[k] for k in LEGEND if k not in WALK_ITEMS and k in present]
    return [" · ".join(items) for items in (walk, looks) if items]


def html(text):
    """Text for an HTML-like label."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def plain(text):
    """Text for a quoted DOT string (the graphviz package adds the quotes)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def lines_cell(text, font=""):
    """A table cell's content: one line, or the rows of a matrix left-aligned
    in a nested table (so the rows line up and the block stays centred)."""
    close = "</FONT>" if font else ""
    lines = text.split("\n")
    if len(lines) == 1:
        return f"{font}{html(text)}{close}"
    rows = "".join(f'<TR><TD ALIGN="LEFT">{font}{html(line)}{close}</TD></TR>' for line in lines)
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">{rows}</TABLE>'


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
    small = '<FONT POINT-SIZE="9">'
    rows = [f"<B>{html(node.shown)}</B>"]
    if node.kind == "fold":
        rows += [html(node.op)] if node.scope is not None else []  # a module's class
        rows += [html(tag) for tag in node.tags] + [html(describe(node))]
        rows += [lines_cell(text, f'<FONT COLOR="{colour if shown else fill}" POINT-SIZE="10">')
                 for text, shown in notes]
    elif node.kind == "summary":
        rows = [html(describe(node))]
    else:
        rows += [lines_cell(line, small) for line in describe(node).split("\n")]
        rows.append(lines_cell(shape_text(node), small))
        if node.collective:
            rows.append(lines_cell(node.collective, f'<FONT COLOR="{COLLECTIVE_COLOUR}" '
                                                     'POINT-SIZE="9">'))
        if node.value is not None:
            rows.append(lines_cell(node.value))
        for text, shown in notes:
            c = RESULT_COLOUR if text.startswith("gradient") else colour
            c = c if shown else fill
            rows.append(lines_cell(text, f'<FONT COLOR="{c}" POINT-SIZE="10">'))
        purple = f'<FONT COLOR="{RESULT_COLOUR}" POINT-SIZE="10">'
        if node.gradient_of is not None:
            rows.append(lines_cell(f"gradient of {node.gradient_of.name}", purple))
        if node.made:
            rows.append(lines_cell(node.made, f'<FONT COLOR="{RESULT_COLOUR}" POINT-SIZE="9">'))
    cells = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{cells}</TABLE>>'


def node_attrs(graph, node, frame):
    """The node's attributes, in a fixed order: ``[(name, value)]``."""
    colour = NOTE_COLOURS.get(graph_walk(graph), RESULT_COLOUR)
    notes = frame_notes(node.notes, frame)
    if node.off_tape:
        look = "off"
    elif node.kind in ("input", "constant", "fold", "summary"):
        look = node.kind
    elif node.output:
        look = "output"
    elif node.collective:
        look = "collective"
    elif node.custom:
        look = "custom"
    elif node.part == "backward":
        look = "backward"
    else:
        look = "op"
    fill, border = LOOKS[look]
    if node.output and node.kind != "summary" and not node.off_tape:
        fill, border = LOOKS["output"]
    attrs = [("label", node_label(node, notes, colour, fill))]
    shape, style = "box", "rounded,filled"
    if node.kind == "constant":
        shape, style = "note", "filled"
    elif node.kind == "fold" or (node.custom and node.folded):
        shape, style = "box3d", "filled"
    elif node.kind == "summary":
        style = "rounded,dashed,filled"
    elif node.kind == "input" or node.collective:
        style = "rounded,filled,bold"
    if node.output and node.kind != "summary":
        attrs.append(("peripheries", "2"))
    if frame is not None and node.reveal > frame:
        style = "invis"
    visiting = frame is not None and frame in node.visited
    if visiting:  # the node this frame's step visits
        border = colour
    attrs += [("shape", shape), ("style", style), ("fillcolor", fill), ("color", border)]
    if visiting:
        attrs += [("penwidth", "3"), ("class", "visiting")]
    if node.off_tape:
        attrs.append(("fontcolor", "#9e9e9e"))
    return attrs


def edge_attrs(graph, edge, frame):
    """The edge's attributes ``[(name, value)]``. An edge the walk sent
    something along (by this frame) is in the walk's colour; a vjp walk's
    edge points back, from the consumer to its input, as its cotangent flows."""
    walk = graph_walk(graph)
    colour = NOTE_COLOURS.get(walk, RESULT_COLOUR)
    rows = [] if edge.index is None else [html(str(edge.index))]
    attrs = []
    shown = frame_notes(edge.notes, frame)
    if edge.style == "cut":
        rows[0:1] = [f"{rows[0]} ✂ cut" if rows else "✂ cut"]
        attrs += [("color", PALETTE["cut"]), ("fontcolor", PALETTE["cut"]), ("style", "dashed"),
                  ("penwidth", "1.5")]
    elif edge.style == "cross":
        attrs += [("color", PALETTE["cross"]), ("fontcolor", "#7e57c2"), ("style", "dotted"),
                  ("constraint", "false"), ("labeldistance", "1.8"), ("labelangle", "35")]
    elif edge.src.kind == "summary" or edge.dst.kind == "summary":
        attrs += [("color", PALETTE["hidden"]), ("style", "dashed")]
    elif any(on for _, on in shown):  # on the walk, by this frame
        attrs += [("color", colour), ("penwidth", "1.4")]
        if walk == "vjp":
            attrs.append(("dir", "back"))
    for text, on in shown:
        lines = "<BR/>".join(html(line) for line in text.split("\n"))
        rows.append(f'<FONT COLOR="{colour if on else "#ffffff"}">{lines}</FONT>')
    if rows:
        # A cross edge is long: its index sits by its head, clear of the forward labels.
        key = "headlabel" if edge.style == "cross" else "label"
        attrs.insert(0, (key, f"<{'<BR/>'.join(rows)}>"))
    if frame is not None and (edge.src.reveal > frame or edge.dst.reveal > frame):
        attrs = [a for a in attrs if a[0] != "style"] + [("style", "invis")]
    return attrs


def graph_walk(graph):
    """The kind of walk a mode draws: "vjp", "jvp", "vmap" or None."""
    return {"vjp": "vjp", "grad": "vjp", "value_and_grad": "vjp", "checkpoint": "vjp",
            "jvp": "jvp", "vmap": "vmap"}.get(graph.mode)


def frame_steps(graph):
    """The step each frame shows the walk up to: every step, or in a drawing
    folded by module the last step of each run of steps through one box."""
    if graph.frame_steps is not None:
        return list(graph.frame_steps)
    return [s.number for s in graph.steps]


def caption(graph, frame):
    """What the frame up to step ``frame`` shows, in one line: "step 3 of 9: the
    vjp walk visits mul_3" (", in layers.3" when a module's call made it), or
    "steps 4–8 of 9: ... visits layers.3" for a frame of a folded drawing that
    steps through a box."""
    step, count = graph.steps[frame - 1], len(graph.steps)
    names = ", ".join(n.name for n in step.nodes if n is not None)
    if graph.frame_steps is None:
        scope = next((n.scope for n in step.nodes if n is not None), None)
        where = f", in {scope.path}" if scope is not None else ""  # a model's module call
        return f"step {frame} of {count}: the {step.kind} walk visits {names}{where}"
    ends = graph.frame_steps
    at = ends.index(frame)
    first = ends[at - 1] + 1 if at else 1
    names = ", ".join(n.name for n in graph.nodes
                      if any(first <= k <= frame for k in n.visited)) or names  # else: left out
    steps = f"step {frame}" if first == frame else f"steps {first}–{frame}"
    return f"{steps} of {count}: the {step.kind} walk visits {names}"


def title_label(graph, frame):
    rows = [f'<B>{html(graph.title)}</B>']
    if frame is not None and graph.steps:
        kind = graph.steps[frame - 1].kind
        rows.append(f'<FONT COLOR="{NOTE_COLOURS[kind]}">{html(caption(graph, frame))}</FONT>')
    for text in legend(graph):
        rows.append(f'<FONT POINT-SIZE="9" COLOR="{PALETTE["legend"]}">{html(text)}</FONT>')
    return "<" + "<BR/>".join(rows) + ">"


RANKDIRS = ("TB", "LR")


def check_layout(rankdir="TB", size=None, dpi=None, who="viz"):
    """The layout options, checked: ``{"rankdir", "size", "dpi"}`` for ``Graph.layout``.

    ``size`` is the largest drawing in inches: one number (a square) or
    (width, height); Graphviz scales a larger drawing down to fit. ``dpi``
    sets the resolution of png output (and the px size of svg).
    """
    if rankdir not in RANKDIRS:
        raise ValueError(f"[{who}] rankdir must be 'TB' or 'LR', not {rankdir!r}.")
    layout = {"rankdir": rankdir}
    if size is not None:
        pair = tuple(size) if isinstance(size, (tuple, list)) else (size, size)
        if len(pair) != 2 or not all(_positive(v) for v in pair):
            raise ValueError(f"[{who}] size must be (width, height) in inches, both > 0, "
                             f"not {size!r}.")
        layout["size"] = ",".join("%g" % v for v in pair)
    if dpi is not None:
        if not _positive(dpi):
            raise ValueError(f"[{who}] dpi must be a number > 0, not {dpi!r}.")
        layout["dpi"] = "%g" % dpi
    return layout


def _positive(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")


def digraph(graph, frame=None):
    """The drawing as a ``graphviz.Digraph``; ``frame`` k (1-based) shows the
    walk up to its k-th step."""
    layout = graph.layout or {"rankdir": "TB"}
    attrs = [("label", title_label(graph, frame)), ("labelloc", "t"), ("labeljust", "l"),
             ("fontname", "Helvetica"), ("fontsize", "12"), ("rankdir", layout["rankdir"]),
             ("newrank", "true"), ("nodesep", "0.35"), ("ranksep", "0.45")]
    attrs += [(k, layout[k]) for k in ("size", "dpi") if k in layout]
    g = graphviz.Digraph("mlxref")
    g.attr("graph", _attributes=attrs)
    g.attr("node", _attributes=[("fontname", "Helvetica"), ("fontsize", "11"),
                                ("margin", "0.12,0.05")])
    g.attr("edge", _attributes=[("fontname", "Helvetica"), ("fontsize", "9"),
                                ("color", PALETTE["edge"]), ("arrowsize", "0.7")])

    boxes = {None: g}  # id(cluster) or None -> the Digraph its nodes go into
    for c in graph.clusters:
        box = graphviz.Digraph(c.key)
        fill, border, fontcolor, style = CLUSTER_LOOKS[c.kind]
        box.attr(_attributes=[("label", plain(c.label)), ("style", style)]
                 + ([("fillcolor", fill)] if fill else [])
                 + [("color", border), ("fontcolor", fontcolor)]
                 + ([("penwidth", "2")] if c.kind == "recompute" else []))
        boxes[id(c)] = box
    for node in graph.nodes:
        box = boxes[id(node.cluster) if node.cluster is not None else None]
        box.node(node.name, _attributes=node_attrs(graph, node, frame))
    # Nest the boxes, innermost first, so each is complete when added to its parent.
    depth = {}
    for c in graph.clusters:
        d, p = 0, c.parent
        while p is not None:
            d, p = d + 1, p.parent
        depth[id(c)] = d
    for c in sorted(graph.clusters, key=lambda c: -depth[id(c)]):  # stable: order kept
        parent = boxes[id(c.parent) if c.parent is not None else None]
        parent.subgraph(boxes[id(c)])
    _order_parts(g, graph)
    for edge in graph.edges:
        _edge(g, edge.src.name, edge.dst.name, edge_attrs(graph, edge, frame))
    return g


def _edge(g, tail, head, attrs):
    """``g.edge``, except that a ":" in a name (``names={"a:b": x}``) is part
    of the name, not the start of a port: such an edge is written quoted whole."""
    if ":" not in tail + head:
        g.edge(tail, head, _attributes=attrs)
        return
    ends = f"{quoting.quote(tail)} -> {quoting.quote(head)}"
    g.body.append(f"\t{ends} [{quoting.a_list(attributes=attrs)}]\n")


def _order_parts(g, graph):
    """The parts in order: the forward graph before the backward graph (left
    of it in TB, above it in LR), compile's traced, simplified and fused
    graphs one after the other. Graphviz orders clusters to cut crossings,
    which put the backward graph first in some drawings; an edge between two
    nodes of one rank is kept in order, though, so invisible anchors in a rank
    of their own, "(forward)" then "(backward)", each lead to its part's
    sources."""
    sources = {}  # part -> its nodes that nothing feeds, parts in order of their nodes
    fed = {id(e.dst) for e in graph.edges if e.style != "cross"}
    for node in graph.nodes:
        if node.kind != "summary" and id(node) not in fed:
            sources.setdefault(node.part, []).append(node)
    if len(sources) < 2:
        return
    hidden = [("style", "invis"), ("shape", "point"), ("width", "0"), ("height", "0"),
              ("label", "")]
    parts = list(sources)
    with g.subgraph() as rank:
        rank.attr(rank="same")
        for part in parts:
            rank.node(f"({part})", _attributes=hidden)
        for before, after in zip(parts, parts[1:]):
            rank.edge(f"({before})", f"({after})", _attributes=[("style", "invis")])
    for part in parts:
        for node in sources[part]:
            g.edge(f"({part})", node.name, _attributes=[("style", "invis"), ("weight", "0")])


def to_dot(graph, frame=None):
    """The DOT text (``digraph(graph, frame).source``)."""
    return digraph(graph, frame).source


def frames(graph):
    """One DOT text per frame of the walk (``frame_steps``); the drawing itself
    when there is no walk."""
    if not graph.steps:
        return [to_dot(graph)]
    return [to_dot(graph, k) for k in frame_steps(graph)]
