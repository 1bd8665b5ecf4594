"""Large graphs: fold clusters and modules, keep at most N nodes.

Each rewrites a recorded Graph in place, after the nodes have their names, so
a node is called the same in the full and in the shrunk drawing.

- ``collapse``: each outermost custom_function or checkpoint cluster becomes
  its CustomTransforms node alone ("12 nodes folded"), and each region a vjp
  rule recomputed, and each Compiled node's box (compile), one "fold" node.
- ``fold_scopes``: a model's drawing by module (``scopes.py``). Level 0
  folds each innermost call (a ``Linear``, a ``LayerNorm``, a call of
  ``nn.gelu``: one that holds no other) into one box; level 1 also the
  calls holding only those (an attention block), and so on up. A box shows
  the path in bold, the class, the parameter count, the shapes going in and
  out, and the steps of the walk that went through it; the backward nodes
  each call's nodes made are a box of their own in the backward graph
  (``vjp(layers.3)``), and the forward values it reads are not drawn.
  ``level`` chooses the level; ``limit`` the finest level whose drawing has
  at most that many nodes. Innermost first, because the building blocks'
  insides are what a reader knows, and how the model wires them is what the
  drawing is for. ``Graph.expand`` names calls that stay open (their own
  nodes drawn, the calls inside them folded as the level says). A stepper
  of the folded drawing steps a box at a time (``Graph.frame_steps``:
  consecutive steps through one box are one frame).
- ``max_nodes``: keep the outputs, then the nodes the walk visited (those
  with walk notes, in step order), then the inputs, then the nodes nearest
  the outputs (breadth-first, in argument order); everything else is one
  summary node ("… 37 more nodes") that takes over the edges into kept nodes
  (an edge from a kept node into it would add nothing to read, and long
  edges back up the drawing are what makes ``dot`` slow).
- ``fit``: the node limit of rendering (``budget.py``): a copy of a graph
  larger than the limit, collapsed, folded by module to the finest level
  that fits, then cut to the limit, and the line that says so. Its nodes,
  notes and edges show the values of arrays small enough to be shown
  whole, and only the shapes of larger ones.

Read next: ``dot.py``.
"""

import copy

from . import scopes as _scopes
from .budget import raise_with
from .model import Edge, Node


def _inside(cluster, ancestor):
    while cluster is not None:
        if cluster is ancestor:
            return True
        cluster = cluster.parent
    return False


def collapse(graph):
    folding = ("custom", "recompute", "fused")
    folded = [c for c in graph.clusters
              if c.kind in folding
              and not any(_inside(c.parent, d) for d in graph.clusters if d.kind in folding)]
    for c in folded:
        members = [n for n in graph.nodes if _inside(n.cluster, c)]
        if c.kind == "custom":
            keep = [n for n in members if n.custom and n.cluster is c]
            rep = keep[0]
        elif c.kind == "fused":  # compile's stage "fused": the Compiled node itself
            rep = Node(name=f"{members[0].part}.{c.anchor}", label=c.anchor, kind="fold",
                       uid=members[0].uid, op="compiled", part=members[0].part)
            rep.tags.append(c.heading)
            rep.output = any(n.output for n in members)
            keep = [rep]
        else:
            rep = Node(name=f"recomputed_{c.anchor}", kind="fold", uid=members[0].uid,
                       op="recomputed", part=members[0].part,
                       reveal=min(n.reveal for n in members))
            rep.tags.append(c.label)
            keep = [rep]
        removed = {id(n) for n in members if n not in keep}
        for n in keep:
            n.folded = len(removed)
            n.cluster = c.parent
        _redirect(graph, removed, rep)
        # The fold takes the place of the first node it folds, so the order holds.
        nodes = []
        for n in graph.nodes:
            if n is members[0] and rep.kind == "fold":
                nodes.append(rep)
            if id(n) not in removed:
                nodes.append(n)
        graph.nodes = nodes
    gone = set(map(id, folded))
    graph.clusters = [c for c in graph.clusters
                      if id(c) not in gone and not any(_inside(c, d) for d in folded)]


def _redirect(graph, removed, rep):
    """Edges touching removed nodes now touch ``rep``; inner edges disappear."""
    edges, seen = [], set()
    for e in graph.edges:
        src_gone, dst_gone = id(e.src) in removed, id(e.dst) in removed
        if src_gone and dst_gone:
            continue
        if dst_gone:  # into the fold, from outside
            if e.src is rep or (rep.kind != "fold"):
                continue
            key = ("in", id(e.src))
            e = Edge(src=e.src, dst=rep, index=None, style=e.style)
        elif src_gone:  # out of the fold
            if e.dst is rep:
                continue
            key = ("out", id(e.dst), e.index)
            e = Edge(src=rep, dst=e.dst, index=e.index, style=e.style)
        else:
            edges.append(e)
            continue
        if key not in seen:
            seen.add(key)
            edges.append(e)
    graph.edges = edges


def fold_scopes(graph, level=None, limit=None):
    """Fold the calls of modules at ``level``, or at the finest level that
    leaves at most ``limit`` nodes (the coarsest when none does); see above.
    Returns the level folded, or None when nothing was."""
    if not graph.scopes:
        return None
    open_ = _scopes.opened(graph)
    if level is None:
        highest = max(s.height for s in graph.scopes)
        level = next((h for h in range(highest + 1)
                      if _count_folded(graph, h, open_) <= limit), highest)
    box_of = {}  # id(node) -> (scope, part) of the box it folds into
    for node in graph.nodes:
        scope = _folding(_inner(node), level, open_)
        if scope is not None:
            box_of[id(node)] = (scope, node.part)
    if not box_of:
        return None
    members = {}
    for node in graph.nodes:
        if id(node) in box_of:
            members.setdefault(box_of[id(node)], []).append(node)
    used = {n.name for n in graph.nodes if id(n) not in box_of}
    boxes = {key: _box(graph, key[0], key[1], nodes, used) for key, nodes in members.items()}
    for key, nodes in members.items():  # (the boxes' shapes in and out read the edges first)
        _redirect(graph, {id(n) for n in nodes}, boxes[key])
    # The forward values a backward box reads (dotted): each box of the backward
    # graph reads those of its module, and beside the boxes they only tangle.
    folded = {id(b) for b in boxes.values()}
    graph.edges = [e for e in graph.edges
                   if not (e.style == "cross" and (id(e.src) in folded or id(e.dst) in folded))]
    kept = []
    for node in graph.nodes:
        key = box_of.get(id(node))
        if key is None:
            kept.append(node)
        elif node is _first(members[key]):  # the box takes the place of its first operation
            kept.append(boxes[key])
    graph.nodes = kept
    _keep_used_clusters(graph)
    _frames_by_box(graph)
    return level


def _inner(node):
    """The scope whose folding takes ``node`` in: its own, or for a box already
    folded (a drawing folded twice) the one around it."""
    return node.scope.parent if node.kind == "fold" and node.scope is not None else node.scope


def _folding(scope, level, open_):
    """The outermost scope around ``scope`` (itself included) folded at ``level``."""
    found = None
    while scope is not None and scope.height <= level and id(scope) not in open_:
        found, scope = scope, scope.parent
    return found


def _first(nodes):
    """The first node that is not an input (a module's weights are listed with the
    inputs, before anything reads them), else the first."""
    return next((n for n in nodes if n.kind != "input"), nodes[0])


def _count_folded(graph, level, open_):
    """How many nodes the drawing has folded at ``level``."""
    boxes, count = set(), 0
    for node in graph.nodes:
        scope = _folding(_inner(node), level, open_)
        if scope is None:
            count += 1
        elif (id(scope), node.part) not in boxes:
            boxes.add((id(scope), node.part))
            count += 1
    return count


def _shapes(nodes):
    shown = [f"{n.shape!r}" for n in nodes[:3]]
    return ", ".join(shown + (["…"] if len(nodes) > 3 else []))


def _box(graph, scope, part, nodes, used):
    """The node a scope's nodes of one part fold into."""
    name = scope.path if part == "forward" else f"vjp({scope.path})"  # the backward graph's
    while name in used:
        name += "_"
    used.add(name)
    inside = {id(n) for n in nodes}
    ins, outs = {}, {}
    for e in graph.edges:
        if e.style == "cross":
            continue
        if id(e.dst) in inside and id(e.src) not in inside:
            ins.setdefault(id(e.src), e.src)
        elif id(e.src) in inside and id(e.dst) not in inside:
            outs.setdefault(id(e.src), e.src)
    for n in nodes:
        if n.output:
            outs.setdefault(id(n), n)
    flow = [f"in {_shapes(sorted(ins.values(), key=lambda n: n.uid))}" if ins else "",
            f"out {_shapes(sorted(outs.values(), key=lambda n: n.uid))}" if outs else ""]
    box = Node(name=name, kind="fold", uid=_first(nodes).uid, op=scope.what, part=part,
               reveal=min(n.reveal for n in nodes), folded=sum(map(represented, nodes)),
               scope=scope)
    if part == "forward" and scope.parameters:
        box.tags.append(f"{scope.parameters:,} parameters")
    if any(flow):
        box.tags.append(" → ".join(t for t in flow if t))
    box.output = any(n.output for n in nodes)
    box.visited = sorted({k for n in nodes for k in n.visited})
    if box.visited:
        kind = graph.steps[box.visited[0] - 1].kind
        many = len(box.visited) > 1
        box.notes.append((box.visited[0], f"{kind} step{'s' if many else ''} "
                                          f"{_ranges(box.visited)}"))
    box.cluster = _outside(graph, scope, part, nodes)
    return box


def _outside(graph, scope, part, nodes):
    """The innermost box (Cluster) holding a scope's nodes of one part, outside its own."""
    own = next((c for c in graph.clusters
                if c.kind == "module" and c.anchor == f"{part}.{scope.path}"), None)
    if own is not None:
        return own.parent
    return nodes[0].cluster  # pragma: no cover - every scope with nodes has its box


def _ranges(numbers):
    """[3, 4, 5, 9] -> "3–5, 9"."""
    runs = []
    for k in numbers:
        if runs and k == runs[-1][1] + 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in runs)


def _keep_used_clusters(graph):
    """Drop the clusters no node is in any more (a folded scope's own, and those inside it)."""
    used = set()
    for n in graph.nodes:
        c = n.cluster
        while c is not None and id(c) not in used:
            used.add(id(c))
            c = c.parent
    graph.clusters = [c for c in graph.clusters if id(c) in used]


def _frames_by_box(graph):
    """The stepper's frames of a folded drawing: one per run of steps through one box
    (or one node); ``graph.frame_steps`` holds the last step of each."""
    owner = {}  # step number -> the node it visited (a box holds its nodes' steps)
    for node in graph.nodes:
        for k in node.visited:
            owner.setdefault(k, node)
    ends = []
    for step in graph.steps:
        k = step.number
        if ends and owner.get(k) is not None and owner.get(k) is owner.get(ends[-1]):
            ends[-1] = k
        else:
            ends.append(k)
    if len(ends) < len(graph.steps):
        graph.frame_steps = ends


def represented(node):
    """How many recorded nodes ``node`` stands for: a fold its nodes, a custom
    function's node folded by ``collapse`` itself and its inner graph."""
    return node.folded if node.kind == "fold" else 1 + node.folded


def max_nodes(graph, limit):
    if limit is None or len(graph.nodes) <= limit:
        return
    producers = {}
    for e in graph.edges:
        producers.setdefault(id(e.dst), []).append(e.src)
    ordered, seen = [], set()

    def take(node):
        if id(node) not in seen:
            seen.add(id(node))
            ordered.append(node)

    for n in graph.nodes:
        if n.output:
            take(n)
    walked = [n for n in graph.nodes if n.notes]
    for n in sorted(walked, key=lambda n: min(step for step, _ in n.notes)):  # stable: ties in order
        take(n)
    for n in graph.nodes:
        if n.kind == "input":
            take(n)
    queue = [n for n in graph.nodes if n.output]
    head = 0
    while head < len(queue) and len(ordered) < limit:
        node = queue[head]
        head += 1
        for src in producers.get(id(node), ()):
            if id(src) not in seen:
                take(src)
                queue.append(src)
    for n in reversed(graph.nodes):
        take(n)
    kept = {id(n) for n in ordered[: max(limit, 0)]}
    hidden = sum(represented(n) for n in graph.nodes if id(n) not in kept)
    summary = Node(name="more_nodes", kind="summary", uid=graph.nodes[-1].uid + 1, folded=hidden)
    edges, seen_edges = [], set()
    for e in graph.edges:
        if id(e.src) in kept and id(e.dst) in kept:
            edges.append(e)
            continue
        if id(e.dst) in kept:
            key, e = (id(e.dst), e.index), Edge(src=summary, dst=e.dst, index=e.index)
        else:  # into the summary, or between hidden nodes: not drawn
            continue
        if key not in seen_edges:
            seen_edges.add(key)
            edges.append(e)
    graph.nodes = [n for n in graph.nodes if id(n) in kept] + [summary]
    graph.edges = edges
    graph.hidden = hidden
    used = {id(n.cluster) for n in graph.nodes if n.cluster is not None}
    for c in graph.clusters:  # a cluster is kept when it, or a cluster inside it, keeps a node
        if id(c) in used:
            p = c.parent
            while p is not None:
                used.add(id(p))
                p = p.parent
    graph.clusters = [c for c in graph.clusters if id(c) in used]


def _whole_values_only(graph):
    """A collapsed drawing shows only the values small enough to be shown whole:
    the summary of a (4, 16, 16) array is 28 lines of a node (and of each walk
    note and edge label that carries one), too tall to read beside the
    others. A summarised value (MLX's "...") gives way to its node's shape;
    a note keeps its words ("step 5 · cotangent …")."""
    for node in graph.nodes:
        if node.value is not None and "..." in node.value:
            node.value = None
        node.notes = [(step, _short(text)) for step, text in node.notes]
    for edge in graph.edges:
        edge.notes = [(step, _short(text)) for step, text in edge.notes]
    graph.results = [(label, node, _short(text)) for label, node, text in graph.results]


def _short(text):
    return text.split(" [", 1)[0] + " …" if "..." in text else text


def fit(graph, limit):
    """``(graph, None)`` when it has at most ``limit`` nodes; else a shrunk copy (the
    recorded arrays shared, not copied) and one line saying what was done."""
    count = sum(n.kind != "summary" for n in graph.nodes)  # a summary node: cut already
    if count <= limit:
        return graph, None
    memo = {id(n.array): n.array for n in graph.nodes if n.array is not None}
    small = copy.deepcopy(graph, memo)
    collapse(small)
    _whole_values_only(small)
    level = fold_scopes(small, limit=limit)
    max_nodes(small, limit)
    how = "collapsed"
    if level is not None:
        how += (", one box per innermost module call" if level == 0 else
                f", one box per module call holding up to {level} levels of calls")
    how += f", {small.hidden:,} nodes in a summary node" if small.hidden else ""
    return small, (f"[viz] the graph has {count:,} nodes, over max_nodes={limit:,} for dot: "
                   f"drawn {how}; {raise_with('max_nodes')}")
