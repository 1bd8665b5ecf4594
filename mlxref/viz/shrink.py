"""Large graphs: fold clusters (``collapse``) and keep at most N nodes (``max_nodes``).

Both rewrite a recorded Graph in place, after the nodes have their names, so
a node is called the same in the full and in the shrunk drawing.

- ``collapse``: each outermost custom_function or checkpoint cluster becomes
  its CustomTransforms node alone ("12 nodes folded"), and each region a vjp
  rule recomputed, and each Compiled node's box (compile), one "fold" node.
- ``max_nodes``: keep the outputs, then the nodes the walk visited (those
  with walk notes, in step order), then the inputs, then the nodes nearest
  the outputs (breadth-first, in argument order); everything else is one
  summary node ("… 37 more nodes") that takes over their edges.
- ``fit``: the node limit of rendering (``budget.py``): a copy of a graph
  larger than the limit, collapsed and then cut to the limit, and the line
  that says so.

Read next: ``dot.py``.
"""

import copy

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
    hidden = len(graph.nodes) - len(kept)
    summary = Node(name="more_nodes", kind="summary", uid=graph.nodes[-1].uid + 1, folded=hidden)
    edges, seen_edges = [], set()
    for e in graph.edges:
        src_kept, dst_kept = id(e.src) in kept, id(e.dst) in kept
        if src_kept and dst_kept:
            edges.append(e)
            continue
        if dst_kept:
            key, e = (id(e.dst), e.index), Edge(src=summary, dst=e.dst, index=e.index)
        elif src_kept:
            key, e = (id(e.src), None), Edge(src=e.src, dst=summary)
        else:
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


def fit(graph, limit):
    """``(graph, None)`` when it has at most ``limit`` nodes; else a shrunk copy (the
    recorded arrays shared, not copied) and one line saying what was done."""
    count = sum(n.kind != "summary" for n in graph.nodes)  # a summary node: cut already
    if count <= limit:
        return graph, None
    memo = {id(n.array): n.array for n in graph.nodes if n.array is not None}
    small = copy.deepcopy(graph, memo)
    collapse(small)
    max_nodes(small, limit)
    how = "collapsed" + (f", {small.hidden:,} nodes in a summary node" if small.hidden else "")
    return small, (f"[viz] the graph has {count:,} nodes, over max_nodes={limit:,} for dot: "
                   f"drawn {how}; {raise_with('max_nodes')}")
