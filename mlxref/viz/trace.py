"""Recording a transform: run it under a listener, then turn its walk into overlays.

``trace(fun, args, transform=...)`` calls the real transform (``mx.vjp``,
``mx.jvp``, ``mx.value_and_grad``, ``mx.vmap``) with a listener on the
traversal events of ``mlxref/core/transforms/events.py``:

1. The *main walk* is the first ``Begin`` of the transform's kind announced
   after the function has returned (walks announced while it ran belong to
   transforms inside it, e.g. the ``grad`` inside ``vmap(grad(f))``).
2. A ``Begin`` announced during the main walk is a *nested* walk: a vjp rule
   that runs a transform itself. ``checkpoint``'s rule re-runs the function
   under ``vjp``; the graph that nested walk traced is the recomputed region.
   A ``Step`` belongs to the innermost walk whose tape holds its node, and
   a nested walk ends when its parent takes its next step.
3. The drawing is the graph between the main walk's primals (the tracers,
   drawn as the named inputs) and its outputs; for grad, value_and_grad and
   checkpoint also the backward graph behind the gradients, in a second
   cluster. Then every value that can be is evaluated, and each step becomes
   notes on nodes and edges (see ``model.py``).

``"compile"`` makes no walk: ``compiled.py`` draws compile's stages instead.

The arguments may be trees, as for the transforms (lists, tuples, dicts,
nested, and ``nn`` modules, whose parameters are swapped in for the call):
the transform sees their arrays as flat arguments (``_Args``), each drawn as
an input named by its path (``params.w``, ``model.layers.0.weight``).
``fun`` runs inside ``record.recording()``, so printing inside it cuts
nothing; afterwards the arrays the trace evaluated are detached, as
``mx.eval`` would, so the trace leaves no history behind.

Read next: ``compiled.py``, ``shrink.py``, then ``dot.py``.
"""

import contextlib
import inspect

from .. import core as mx
from ..core.transforms import events
from . import compiled, record, scopes
from ..core.distributed.primitives import AllGather, AllReduce
from ..core.primitives.base import StopGradient
from .model import StepInfo
from ..core.transforms.trees import arrays as flatten_arrays
from .record import Builder, evaluate, preview
from ..core.transforms import trees

TRANSFORMS = ("graph", "vjp", "jvp", "grad", "value_and_grad", "vmap", "checkpoint", "compile")
WALK_KIND = {"vjp": "vjp", "checkpoint": "vjp", "grad": "vjp", "value_and_grad": "vjp",
             "jvp": "jvp", "vmap": "vmap"}
BACKWARD = ("grad", "value_and_grad", "checkpoint")


class _Log:
    """The listener: every event, and whether the traced function had returned."""

    def __init__(self):
        self.events = []
        self.returned = False

    def __call__(self, event):
        self.events.append((self.returned, event))

    def marking(self, fun):
        def marked(*args):
            out = fun(*args)
            self.returned = True
            return out

        return marked


class _Walk:
    def __init__(self, begin):
        self.begin = begin
        self.tape_ids = {o.id() for node in begin.tape for o in node.outputs()}
        self.steps = []


def split_walks(logged, kind):
    """The main walk and the nested walks, each nested one with the node whose
    step ran it (its owner)."""
    main, stack, nested = None, [], []
    for returned, event in logged:
        if main is None:
            if returned and isinstance(event, events.Begin) and event.kind == kind:
                main = _Walk(event)
                stack = [main]
            continue
        if isinstance(event, events.Begin):
            stack.append(_Walk(event))
            continue
        depth = len(stack) - 1
        while depth >= 0 and event.node.id() not in stack[depth].tape_ids:
            depth -= 1
        if depth < 0:
            continue
        nested.extend((w, event.node) for w in stack[depth + 1 :])
        del stack[depth + 1 :]
        stack[depth].steps.append(event)
    nested.extend((w, None) for w in stack[1:])
    return main, nested


def input_names(fun, args, names):
    """Display names: given ones, else the function's parameter names, else arg0..."""
    if names is None:
        names = []
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
    names = [str(n) for n in list(names)[: len(args)]]
    names += [f"arg{i}" for i in range(len(names), len(args))]
    seen = set()
    for i, n in enumerate(names):
        if n in seen:
            names[i] = f"{n}_{i}"
        seen.add(names[i])
    return names


def _argnums(argnums, default):
    if argnums is None:
        return list(default)
    if isinstance(argnums, int):
        return [argnums]
    return sorted(argnums)


def _as_arrays(values, like, what):
    """Cotangents or tangents: arrays, numbers or lists; a scalar fills the shape."""
    if isinstance(values, dict):
        raise TypeError(f"[viz.trace] {what} must be a list, not a dict.")
    if not isinstance(values, (list, tuple)) or (
        len(like) == 1 and not isinstance(values[0], (mx.array, list, tuple, int, float))
    ):
        values = [values]
    if len(values) != len(like):
        raise ValueError(f"[viz.trace] Expected {len(like)} {what}, got {len(values)}.")
    out = []
    for v, ref in zip(values, like):
        a = v if isinstance(v, mx.array) else mx.array(v, dtype=ref.dtype)
        if a.shape != ref.shape and a.size == 1:
            a = mx.full(ref.shape, a.reshape(()), dtype=ref.dtype)
        out.append(a)
    return out


def _partial(fun, args, argnums):
    """``fun`` of the arrays at ``argnums``, the other arguments fixed."""

    def call(*primals):
        full = list(args)
        for i, p in zip(argnums, primals):
            full[i] = p
        return fun(*full)

    return call


class _Args:
    """The arguments as the flat list of arrays the transforms see.

    Each argument is an array or a tree (lists, tuples, dicts, ``nn``
    modules); ``leaves`` are its arrays in tree order, ``names`` theirs (the
    argument's name, then the path: ``params.w``; the bare path when the name
    is empty), ``groups[i]`` the positions of argument ``i``'s arrays.
    ``call(*leaves)`` puts the leaves back into the trees (a module gets them
    through ``update`` for the call, then its own parameters back) and calls
    ``fun``.
    """

    def __init__(self, fun, args, names):
        from ..nn.layers import Module  # nn builds on core only

        self.fun, self.args, self.leaves, self.names, self.groups = fun, args, [], [], []
        self.modules = [isinstance(a, Module) for a in args]
        for arg, name in zip(args, names):
            pairs = [(name, arg)] if isinstance(arg, mx.array) else record.named_arrays(arg, name)
            self.groups.append(range(len(self.leaves), len(self.leaves) + len(pairs)))
            self.leaves += [a for _, a in pairs]
            self.names += [n for n, _ in pairs]
        self.names = _unique(self.names)

    def nums(self, argnums):
        """The leaf positions of the arguments at ``argnums``."""
        return [k for i in argnums for k in self.groups[i]]

    def call(self, *leaves):
        rebuilt, restore = [], []
        for arg, group, module in zip(self.args, self.groups, self.modules):
            mine = [leaves[k] for k in group]
            if isinstance(arg, mx.array):
                rebuilt.append(mine[0])
            elif module:
                original = arg.parameters()
                restore.append((arg, original))
                arg.update(trees.replace_arrays(original, mine))
                rebuilt.append(arg)
            else:
                rebuilt.append(trees.replace_arrays(arg, mine))
        try:
            return self.fun(*rebuilt)
        finally:
            for module, original in restore:
                module.update(original)


def _unique(names):
    seen, out = set(), []
    for i, n in enumerate(names):
        n = f"{n}_{i}" if n in seen else n
        seen.add(n)
        out.append(n)
    return out


def _leaf_axes(in_axes, flat):
    """vmap's ``in_axes`` (an int or None for all, or one per argument, each
    an int, None or a tree prefix of its argument) as one axis per leaf."""
    count = len(flat.args)
    if count == 1 and isinstance(in_axes, (tuple, list)) and len(in_axes) == 1:
        in_axes = in_axes[0]
    if not isinstance(in_axes, (tuple, list)):
        return [in_axes] * len(flat.leaves)
    prefix = ValueError("[tree_map] Additional input tree is not a valid prefix of the "
                        "first tree.")  # MLX's words for an in_axes that does not fit
    if len(in_axes) != count:
        raise prefix
    axes = []
    for ax, arg, module in zip(in_axes, flat.args, flat.modules):
        tree = arg.parameters() if module else arg
        try:  # each axis once per array under it; those lists flatten into the axes
            axes += trees.flatten(trees.map_tree(lambda a, sub: [a] * len(trees.arrays(sub)),
                                                 ax, tree), strict=False)
        except (KeyError, IndexError, TypeError):
            raise prefix from None
    return axes


def _title(transform, fun, names, argnums, shown):
    """E.g. "grad of loss(w, x) with respect to w", "vjp of checkpoint(f)(x)".
    ``shown``: the names in the parentheses (a nameless argument is left out)."""
    fname = getattr(fun, "__name__", "f")
    fname = "f" if fname == "<lambda>" else fname
    arguments = f"({', '.join(shown)})"
    if transform == "graph":
        return f"graph of {fname}{arguments}"
    if transform == "checkpoint":
        title = f"vjp of checkpoint({fname}){arguments}"
    else:
        title = f"{transform} of {fname}{arguments}"
    if argnums is not None:
        title += " with respect to " + ", ".join(names[i] for i in argnums)
    return title


def trace(fun, args, transform="graph", argnums=None, cotangents=None, tangents=None,
          in_axes=0, names=None, title=None, values=record.VALUES, modules=True):
    """Run ``transform`` of ``fun`` on ``args`` and record it; returns a Graph.

    ``modules``: True watches the calls of the ``nn.Module`` arguments' modules
    (``scopes.py``); an ``nn.Module`` watches that one too (a model the
    function reaches without being given it), its paths bare; False none."""
    if transform not in TRANSFORMS:
        raise ValueError(
            f"[viz.trace] Unknown transform {transform!r}; expected one of {', '.join(TRANSFORMS)}."
        )
    args = list(args)
    arg_names = input_names(fun, args, names)
    flat = _Args(fun, args, arg_names)
    start = record.next_id()
    if transform == "compile":  # no walk: compile's stages (compiled.py)
        shown = [n for n in arg_names if n]
        graph, computed = compiled.trace(flat.call, flat.leaves, flat.names,
                                         title or _title(transform, fun, arg_names, None, shown),
                                         values)
        return _leave_no_history(graph, computed, start)
    log = _Log()
    watched = _watched_modules(modules, flat, arg_names)
    watch = scopes.Watch(watched) if watched else contextlib.nullcontext()
    with record.recording(), watch:  # fun may print: that must not cut the graph to draw
        user_nums, results = _run(log, flat, transform, argnums, cotangents, tangents, in_axes)
    calls = watch.calls if watched else []

    wrt = user_nums if (argnums is not None or transform in ("grad", "value_and_grad")) else None
    shown = [n for n in arg_names if n]
    b = Builder(transform, title or _title(transform, fun, arg_names, wrt, shown),
                values=values)
    leaves, names = flat.leaves, flat.names
    for i, (a, n) in enumerate(zip(leaves, names)):
        b.name_input(a, n, i)
    if transform == "graph":
        outputs = results["outputs"]
        record.warn_evaluated(outputs, "viz.trace")
        forward = b.add(outputs + leaves, inputs=leaves)
        for o in outputs:
            b.node(o).output = True
        computed = evaluate([n.array for n in forward])
        _set_values(b)
        _scope_clusters(b, calls)
        return _leave_no_history(b.finish(), computed, start)

    main, nested = split_walks(log.events, WALK_KIND[transform])
    if main is None:  # pragma: no cover - every transform announces its walk
        raise RuntimeError(f"[viz.trace] The {transform} transform announced no walk.")
    begin = main.begin
    axes = _leaf_axes(in_axes, flat) if transform == "vmap" else None
    _name_primals(b, begin, leaves, names, axes)
    # The primals too, so an input the outputs do not depend on is still drawn.
    forward = b.add(list(begin.outputs) + list(begin.primals), inputs=list(begin.primals) + leaves)
    for o in begin.outputs:
        b.node(o).output = True
    backward = []
    if transform in BACKWARD:
        backward = b.add(results["gradients"], part="backward")
        b.add_cluster("forward", None, "forward: the traced graph", forward)
        b.add_cluster("backward", None, "backward: the graph the vjp walk built", backward)

    # Values: the transform has run, so the traced graph can be evaluated.
    todo = [n.array for n in forward + backward]
    for step in main.steps:
        todo += [x for x in _step_arrays(step) if isinstance(x, mx.array)]
    for role in ("gradients", "jvps", "tangents", "batched"):
        todo += results.get(role, [])
    computed = evaluate(todo)
    _set_values(b)

    _off_tape(b, main, forward)
    if WALK_KIND[transform] == "vjp":
        _vjp_notes(b, main, results["gradients"], backward)
    elif transform == "jvp":
        _jvp_notes(b, main, results["tangents"], results["jvps"])
    else:
        _vmap_notes(b, main, forward, axes, results["batched"])
    _recomputed(b, nested, set(map(id, forward)))
    _scope_clusters(b, calls)
    return _leave_no_history(b.finish(), computed, start)


def _watched_modules(modules, flat, arg_names):
    """``[(path, module)]`` to watch (``trace``'s ``modules``): each module argument's
    modules, named as its parameters are (``model.layers.0``, or ``layers.0``
    when the argument's name is ""), and the model given as ``modules``."""
    from ..nn.layers import Module  # nn builds on core only

    if modules is False or modules is None:
        return []
    if modules is not True and not isinstance(modules, Module):
        raise TypeError(f"[viz.trace] modules must be True, False or an nn.Module, "
                        f"not {type(modules).__name__}.")
    watched = []
    for arg, name, is_module in zip(flat.args, arg_names, flat.modules):
        if is_module:
            watched += scopes.model_modules(arg, name)
    if isinstance(modules, Module):
        watched += scopes.model_modules(modules, "")
    return watched


def _scope_clusters(b, calls):
    """Each node's scope (the module call that made it), and a box per scope."""
    if not calls:
        return
    names = {id(b.node_of[i]): n for i, n in b.names.items() if i in b.node_of}
    scopes.assign(b.graph, calls, names)
    for spec in scopes.cluster_specs(b.graph):
        b.add_cluster(*spec)


def _leave_no_history(graph, computed, start):
    """Detach what the trace evaluated, and the drawn arrays it created and
    evaluated, as ``mx.eval`` would have: a later drawing of the caller's
    arrays is not changed by this one."""
    record.forget(computed + [n.array for n in graph.nodes
                              if n.array is not None and n.array.id() >= start])
    return graph


def _run(log, flat, transform, argnums, cotangents, tangents, in_axes):
    """Call the transform of ``flat.call`` on the leaves with ``log`` listening;
    returns (the arguments' argnums used, results by role)."""
    fun, args = flat.call, flat.leaves
    f = mx.checkpoint(fun) if transform == "checkpoint" else fun
    marked = log.marking(f)
    if transform == "graph":
        return None, {"outputs": flatten_arrays(marked(*args))}
    if transform == "vmap":
        axes = tuple(_leaf_axes(in_axes, flat))
        with events.listen(log):
            return None, {"batched": flatten_arrays(mx.vmap(marked, in_axes=axes)(*args))}
    user_nums = _argnums(argnums, [0] if transform in ("grad", "value_and_grad")
                         else range(len(flat.args)))
    _check_argnums(user_nums, len(flat.args))
    nums = flat.nums(user_nums)
    if transform in ("grad", "value_and_grad"):
        with events.listen(log):
            vag = mx.value_and_grad(_partial(marked, args, nums), argnums=list(range(len(nums))))
            _, grads = vag(*[args[i] for i in nums])
        return user_nums, {"gradients": flatten_arrays(grads)}

    primals = [args[i] for i in nums]
    trees_given = any(not isinstance(flat.args[i], mx.array) for i in user_nums)
    if transform == "jvp":
        if tangents is not None and trees_given:
            tangents = trees.flatten(tangents, strict=False)
        tans = ([mx.ones_like(p) for p in primals] if tangents is None
                else _as_arrays(tangents, primals, "tangents"))
        with events.listen(log):
            _, jvps = mx.jvp(_partial(marked, args, nums), primals, tans)
        return user_nums, {"jvps": jvps, "tangents": tans}
    # vjp and checkpoint: one cotangent per output that is not a stop_gradient;
    # a first call (not recorded) tells their shapes.
    outs = flatten_arrays(_partial(f, args, nums)(*primals))
    outs = [o for o in outs if not isinstance(o.primitive(), StopGradient)]
    cots = ([mx.ones_like(o) for o in outs] if cotangents is None
            else _as_arrays(cotangents, outs, "cotangents"))
    with events.listen(log):
        _, vjps = mx.vjp(_partial(marked, args, nums), primals, cots)
    return user_nums, {"gradients": vjps}


def _check_argnums(argnums, count):
    """argnums name the arguments (not the arrays in them): each once, and in range."""
    for i in argnums:
        if not isinstance(i, int) or not -count <= i < count:
            raise ValueError(f"[viz.trace] Can't differentiate argument index {i!r}: the "
                             f"function is called with {count} positional arguments.")
    if len({i % count for i in argnums}) < len(argnums):
        raise ValueError(f"[viz.trace] Duplicate argument index in argnums {argnums}.")


def _name_primals(b, begin, leaves, names, axes):
    """Give the walk's primals (tracers or vmap placeholders) the inputs' names."""
    if axes is not None:  # vmap: one placeholder per mapped leaf
        mapped = [i for i, ax in enumerate(axes) if ax is not None]
        for p, i in zip(begin.primals, mapped):
            b.name_input(p, names[i], i)
        return
    position = {}
    for i, a in enumerate(leaves):
        position.setdefault(a.id(), i)
    for p in begin.primals:
        if p.inputs() and p.inputs()[0].id() in position:  # a tracer copies its primal
            i = position[p.inputs()[0].id()]
            b.name_input(p, names[i], i)


def _step_arrays(step):
    """The cotangents and vjps, or tangents and jvps, a step saw."""
    if isinstance(step, events.VjpStep):
        return list(step.cotangents) + list(step.vjps)
    if isinstance(step, events.JvpStep):
        return list(step.tangents) + list(step.jvps)
    return []


def _set_values(b):
    for node in b.graph.nodes:
        node.value = preview(node.array, b.values)


def _text(b, a):
    return preview(a, b.values) or "(not evaluated)"


def _edge_index(b):
    return {(id(e.dst), e.index): e for e in b.graph.edges}


def _off_tape(b, main, forward):
    """Grey what the vjp or jvp walk never visits (vmap batches every node).

    That is more than what is off the tape: the tape also holds the graph
    behind a stop_gradient, which the vjp walk then skips for want of a
    cotangent.
    """
    if main.begin.kind == "vmap":
        return
    visited = {o.id() for step in main.steps for o in step.node.outputs()}
    visited |= {p.id() for p in main.begin.primals}
    for node in forward:
        if node.array.id() not in visited:
            node.off_tape = True


def collective_rule(a, kind):
    """What the rule of a collective node ``a`` did at a step of a ``kind``
    walk, in words (two lines); "" for any other node. The rules are MLX's
    (mlxref/core/distributed/primitives.py): an all-reduce's cotangent passes
    through, an all-gather's is this rank's block; tangents and batches go
    through the same collective as the values."""
    primitive = a.primitive()
    if not isinstance(primitive, (AllReduce, AllGather)):
        return ""
    op = record.op_name(primitive)
    if kind == "jvp":
        return f"{op}'s jvp: the tangent goes through {op} too\n(it communicates)"
    if kind == "vmap":
        return f"{op}'s vmap: the batched input goes through {op}\n(it communicates)"
    if isinstance(primitive, AllReduce):
        return (f"{op}'s vjp: the cotangent passes through unchanged\n"
                "(no communication: each rank keeps its own)")
    x, rank = a.inputs()[0], primitive.group.rank()
    if not x.shape:
        return f"{op}'s vjp: the cotangent's element [{rank}]\n(rank {rank}'s; no communication)"
    start = rank * x.shape[0]
    return (f"{op}'s vjp: the cotangent's slice [{start}:{start + x.shape[0]}] on axis 0\n"
            f"(rank {rank}'s block; no communication)")


def _note_step(b, edges, k, kind, node, at_nodes, on_edges, prefix=""):
    """Step ``k`` of a walk visited ``node``: ``at_nodes`` is one text per output
    (noted on its node as "step k · {prefix}{text}"), ``on_edges`` one
    ``(argument index, text)`` per input that received something (noted on
    that edge as "{prefix}{text}"). A collective's node also notes what its
    rule did (``collective_rule``)."""
    nodes = [b.node(o) for o in node.outputs()]
    remark = collective_rule(node, kind)
    for n, text in zip(nodes, at_nodes):
        if n is not None:
            n.visited.append(k)
            n.notes.append((k, f"step {k} · {prefix}{text}"))
            if remark:
                n.notes.append((k, remark))
    contributions = []
    dst = b.node(node)
    for i, text in on_edges:
        edge = edges.get((id(dst), i))
        if edge is not None:
            edge.notes.append((k, prefix + text))
            contributions.append((edge, text))
    b.graph.steps.append(StepInfo(k, kind, nodes, list(at_nodes), contributions, remark))


def _vjp_notes(b, main, gradients, backward):
    edges = _edge_index(b)
    watermark, marks = 0, []
    for k, step in enumerate(main.steps, 1):
        _note_step(b, edges, k, "vjp", step.node, [_text(b, c) for c in step.cotangents],
                   [(i, _text(b, v)) for i, v in zip(step.argnums, step.vjps)], "cotangent ")
        watermark = max([watermark] + [v.id() for v in step.vjps])
        marks.append(watermark)
    last = len(main.steps)
    for p, g in zip(main.begin.primals, gradients):
        node = b.node(p)
        if node is not None:
            node.notes.append((last, f"gradient {_text(b, g)}"))
            b.graph.results.append(("gradient", node, _text(b, g)))
        gnode = b.node(g)
        if gnode is not None and gnode.part == "backward" and node is not None:
            gnode.output = True
            gnode.gradient_of = node
    seeds = {c.id() for c in main.steps[0].cotangents} if main.steps else set()
    for node in backward:  # a backward node appears in the frame of the step that built it
        node.reveal = next((k for k, m in enumerate(marks, 1) if node.uid <= m), max(last, 1))
        node.made = f"made at vjp step {node.reveal}"
        if node.uid <= max(seeds, default=-1):  # ids grow: made before the walk began
            node.made = "the seed cotangent" if node.uid in seeds else "made before the walk"


def _jvp_notes(b, main, tangents, jvps):
    edges = _edge_index(b)
    for p, t in zip(main.begin.primals, tangents):
        node = b.node(p)
        if node is not None:
            node.notes.append((0, f"tangent {_text(b, t)}"))
    for k, step in enumerate(main.steps, 1):
        _note_step(b, edges, k, "jvp", step.node, [_text(b, t) for t in step.jvps],
                   [(i, _text(b, t)) for i, t in zip(step.argnums, step.tangents)], "tangent ")
    for o, t in zip(main.begin.outputs, jvps):
        node = b.node(o)
        if node is not None:
            b.graph.results.append(("jvp", node, _text(b, t)))


def _axis(ax):
    return "unbatched" if ax is None else f"batch axis {ax}"


def _vmap_notes(b, main, forward, axes, batched):
    edges = _edge_index(b)
    mapped = [ax for ax in axes if ax is not None]
    for p, ax in zip(main.begin.primals, mapped):
        node = b.node(p)
        if node is not None:
            node.notes.append((0, f"{_axis(ax)} (in_axes)"))
    for k, step in enumerate(main.steps, 1):
        _note_step(b, edges, k, "vmap", step.node, [_axis(ax) for ax in step.out_axes],
                   [(i, f"axis {ax}") for i, ax in enumerate(step.in_axes) if ax is not None])
    primals = {p.id() for p in main.begin.primals}
    for node in forward:
        if not node.visited and node.array.id() not in primals:
            node.notes.append((0, "unbatched"))
    for o, v in zip(main.begin.outputs, batched):
        node = b.node(o)
        if node is not None:
            node.notes.append((len(main.steps), f"batched: {v.shape} {_text(b, v)}"))
            b.graph.results.append(("batched output", node, f"{v.shape} {_text(b, v)}"))


def _recomputed(b, nested, forward_ids):
    """Mark the graphs nested walks traced: the regions a vjp rule recomputed."""
    for walk, owner in nested:
        if not walk.begin.outputs:
            continue
        primal_ids = {p.id() for p in walk.begin.primals}
        arrays = record.collect(walk.begin.outputs, primal_ids)
        nodes = [b.node(a) for a in arrays]
        nodes = [n for n in nodes if n is not None and id(n) not in forward_ids]
        if not nodes:
            continue
        owner_node = b.node(owner) if owner is not None else None
        for n in nodes:
            n.tags.append("recomputed")

        def label(owner_node=owner_node, kind=walk.begin.kind):
            who = f" of {owner_node.name}" if owner_node is not None else ""
            return f"recomputed: the function re-run by the {kind} rule{who}"

        b.add_cluster("recompute", owner_node or nodes[0], label, nodes)
