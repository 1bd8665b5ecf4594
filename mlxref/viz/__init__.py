"""Drawings of computation graphs and of the walks transforms make over them.

    >>> import mlxref.core as mx
    >>> from mlxref import viz
    >>> d = viz.trace(lambda x: mx.sin(x) * mx.exp(x), [mx.array(0.5)], transform="vjp")
    >>> print(d.to_text(), end="")
    # vjp of f(x)
    x = input  # () float32: 0.5
    sin_1 = sin x  # () float32: 0.47943
    exp_2 = exp x  # () float32: 1.6487
    mul_3 = multiply sin_1 exp_2  # () float32: 0.79044; output
    outputs: mul_3
    <BLANKLINE>
    vjp walk (reverse order): cotangent of each node -> cotangent sent to each input
        1. mul_3  cotangent 1  ->  [0] sin_1 += 1.6487  [1] exp_2 += 0.47943
        2. exp_2  cotangent 0.47943  ->  [0] x += 0.79044
        3. sin_1  cotangent 1.6487  ->  [0] x += 1.4469
    <BLANKLINE>
    gradient x: 2.2373

Two ways in:

- ``draw(arrays)``: the lazy graph behind arrays that are not evaluated yet,
  or evaluated inside ``with recording():`` (MLX's evaluation drops the
  graph behind an array; this block keeps it, so ``draw`` works after
  ``print(loss)``). ``params=model.parameters()`` draws a model's weights as
  inputs named by path (``layers.0.weight``).
- ``trace(fun, args, transform=...)``: run a transform and record its walk
  (``"graph"``, ``"vjp"``, ``"jvp"``, ``"grad"``, ``"value_and_grad"``,
  ``"vmap"``, ``"checkpoint"``: the vjp of ``mx.checkpoint(fun)``, or
  ``"compile"``: the graph ``mx.compile`` traced, simplified and fused, side
  by side, with each Compiled node's generated source). The
  arguments may be trees or models, as for the transforms; the trace leaves
  no history behind in the arrays it evaluated. A model (an ``nn.Module``
  argument, or ``modules=model``) is drawn by module: a box per call of a
  submodule (``layers.3``) or of an nn function (``gelu#1``), folded into one
  node each when the drawing is over the node limit (``expand=["layers.3"]``
  keeps one open; ``scopes.py``).

- ``ring_allreduce(ranks)``: run ring.py's all-reduce on that many ranks in
  this process and draw its steps (``ring.py``): which segment each rank
  sends where, with the values, through the reduce-scatter and all-gather.

``draw`` and ``trace`` return a ``Drawing``: ``to_dot()``, ``to_text()``, ``to_graphviz()`` (a
``graphviz.Digraph`` to restyle), ``frames()`` (one DOT text per step of the
walk), ``render(path, format)``, ``write_steps(dir)``; in a notebook it
displays itself. Both take the look's options: ``values=N`` (arrays up to N
elements shown whole, default 12; larger ones summarised as MLX prints them),
``rankdir`` ("TB" or "LR"), ``size`` (inches) and ``dpi``.

Limits (``budget.py``) hold on every path: evaluating what is drawn may
take ``max_work`` element operations (``LimitExceeded`` past it), ``dot`` is
given at most ``max_nodes`` nodes (a larger drawing is rendered collapsed:
a model folded by module, innermost calls first, then a summary node for
what is still over, with a ``LimitWarning``; ``to_text`` and ``to_dot`` stay
whole), runs for at most ``timeout`` seconds, and draws a PNG of at most
``max_pixels``. Raise them with ``with viz.limits(max_work=10**8,
timeout=60): ...``.

The package, one concern per module, in reading order: ``model.py`` (the
small graph model), ``record.py`` (arrays to model, names, clusters),
``trace.py`` (transforms and their events to overlays), ``scopes.py``
(which module call made each node), ``compiled.py`` (compile's stages),
``shrink.py`` (collapse, fold by module, max_nodes), ``dot.py`` (DOT
text), ``text.py`` (the listing), ``budget.py`` (the limits), ``render.py``
(the dot binary, files), ``stepper.py`` (the HTML page that steps through a
walk, following the visited node, a box at a time in a folded drawing),
``ring.py`` (the ring all-reduce's figure).

On a rank of a distributed run (``mlxref.launch``), a collective is a node
like any other, drawn in light blue with what it does and the rank the
drawing was made on, and each walk says what its rule did (an all_sum's
cotangent passes through; an all_gather's is this rank's slice). On one
process the collectives build no node, as in MLX: there is nothing to draw.
"""

import os
import warnings

from . import budget as _budget
from . import dot as _dot
from . import render as _render
from . import scopes as _scopes
from . import shrink as _shrink
from . import stepper as _stepper
from . import text as _text
from . import trace as _trace
from ..core.transforms.trees import arrays as flatten_arrays
from .budget import LimitExceeded, Limits, LimitWarning, limits
from .record import (
    VALUES, Builder, DrawingWarning, check_values, named_arrays, recording, warn_evaluated
)
from .render import FORMATS, GraphvizMissing

from .ring import RingFigure, ring_allreduce

__all__ = ["Drawing", "DrawingWarning", "GraphvizMissing", "LimitExceeded", "LimitWarning",
           "Limits", "RingFigure", "draw", "limits", "recording", "ring_allreduce", "trace"]


class Drawing:
    """A recorded graph, ready to be written in any format."""

    def __init__(self, graph, max_nodes=None):
        self.graph = graph
        self.max_nodes = max_nodes  # asked for: it also raises the node limit of rendering
        self._digraph = None

    def __repr__(self):
        return (f"<mlxref.viz.Drawing {self.graph.title!r}: {len(self.graph.nodes)} nodes, "
                f"{len(self.graph.steps)} steps>")

    @property
    def title(self):
        return self.graph.title

    def to_graphviz(self):
        """The drawing as a new ``graphviz.Digraph``, to restyle and render
        (``g.attr(bgcolor="white")``, ``g.node("x", color="red")``, ``g.render()``)."""
        if self._digraph is None:
            self._digraph = _dot.digraph(self.graph)
        return self._digraph.copy()

    def to_dot(self):
        """The DOT text (byte-identical on every run): ``to_graphviz().source``."""
        return self.to_graphviz().source

    def to_text(self):
        """One line per node, then the walk in visit order."""
        return _text.to_text(self.graph)

    def frames(self):
        """One DOT text per step of the walk (in a drawing folded by module, one
        per run of steps through one box); ``[to_dot()]`` when there is no walk."""
        return _dot.frames(self.graph)

    def captions(self):
        """One line per frame, saying which steps it shows."""
        if not self.graph.steps:
            return [self.graph.title]
        return [_dot.caption(self.graph, k) for k in _dot.frame_steps(self.graph)]

    def for_dot(self):
        """The drawing ``dot`` is given: this one, or, past the node limit (``max_nodes``
        of the drawing, else of ``viz.limits``), a collapsed copy, with a LimitWarning."""
        limit = self.max_nodes or _budget.current().max_nodes
        graph, line = _shrink.fit(self.graph, limit)
        if line is None:
            return self
        warnings.warn(line, LimitWarning, stacklevel=3)
        return Drawing(graph, max_nodes=limit)

    def render(self, path, format=None):
        """Write the drawing to ``path`` as dot, text, svg, png, pdf or html.

        ``format`` defaults to the suffix of ``path``. svg, png, pdf and html
        need Graphviz's ``dot``; without it the DOT text goes to ``path`` with
        a ``.dot`` suffix and GraphvizMissing is raised. Returns the path.
        """
        format = _render.format_of(path) if format is None else format
        if format not in FORMATS:
            raise ValueError(f"[viz.render] Unknown format {format!r}; expected one of "
                             f"{', '.join(FORMATS)}.")
        if format == "dot":
            _render.write(path, self.to_dot())
        elif format == "text":
            _render.write(path, self.to_text())
        elif _render.dot_binary() is None:
            _render.dot_fallback(path, self.to_dot())
        elif format == "html":
            shown = self.for_dot()
            _render.write(path, _stepper.html_page(shown.title, shown.frames(), shown.captions(),
                                                   shown.graph.sources))
        else:
            _render.write(path, _render.run_dot(self.for_dot().to_dot(), format))
        return path

    def write_steps(self, directory):
        """The frames as numbered SVG files 000.svg, 001.svg, ...; returns their paths.

        Without ``dot`` the frames are written as 000.dot, 001.dot, ... and
        GraphvizMissing is raised.
        """
        os.makedirs(directory, exist_ok=True)
        missing = _render.dot_binary() is None
        frames = self.frames() if missing else self.for_dot().frames()
        paths = []
        for i, frame in enumerate(frames):
            path = os.path.join(directory, f"{i:03d}.{'dot' if missing else 'svg'}")
            _render.write(path, frame if missing else _render.run_dot(frame, "svg"))
            paths.append(path)
        if missing:
            raise GraphvizMissing()
        return paths

    def _repr_svg_(self):
        if _render.dot_binary() is None:
            return None
        return _render.run_dot(self.for_dot().to_dot(), "svg").decode("utf-8")

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.to_text()}
        svg = self._repr_svg_()
        if svg is not None:
            bundle["image/svg+xml"] = svg
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle


def _finish(graph, collapse, max_nodes, layout, expand=()):
    graph.layout = layout
    graph.expand = expand
    if collapse:
        _shrink.collapse(graph)
        _shrink.fold_scopes(graph, level=0)
    if max_nodes is not None and len(graph.nodes) > max_nodes:
        _shrink.fold_scopes(graph, limit=max_nodes)
    _shrink.max_nodes(graph, max_nodes)
    graph.edges.sort(key=lambda e: (e.dst.uid, -1 if e.index is None else e.index, e.src.uid))
    return Drawing(graph, max_nodes=max_nodes)


def draw(arrays, names=None, params=None, collapse=False, max_nodes=None, title=None,
         values=VALUES, rankdir="TB", size=None, dpi=None):
    """The lazy graph behind an array or a list/tuple/dict tree of arrays.

    Nothing is evaluated: a value is shown only where an array already has
    its data. ``names`` (``{"x": x}``) marks inputs: the walk stops there and
    other leaves are constants; without it, every leaf is drawn as an input.
    ``params`` (a tree, such as ``model.parameters()``, or a model) marks more
    inputs, each named by its path (``layers.0.weight``), as torchviz's
    ``params=`` does: a weight is drawn as one input, never as the arithmetic
    that initialised it.

    An evaluated array has dropped its graph (as in MLX): drawing one that
    was computed warns (``DrawingWarning``) and draws one node. Compute inside
    ``with viz.recording():`` to draw after ``mx.eval`` or ``print``.

    ``values``, ``rankdir``, ``size`` and ``dpi``: as for ``trace``.
    """
    layout = _dot.check_layout(rankdir, size, dpi, "viz.draw")
    outputs = flatten_arrays(arrays)
    named = [(str(name), a) for name, a in dict(names or {}).items()]
    named += named_arrays(params if params is not None else {})
    warn_evaluated(outputs, "viz.draw", [a for _, a in named])
    b = Builder("graph", title or "graph", leaves_are_inputs=not names,
                values=check_values(values, "viz.draw"))
    for i, (name, a) in enumerate(named):
        b.name_input(a, name, i)
    b.add(outputs, inputs=[a for _, a in named])
    for o in outputs:
        b.node(o).output = True
    return _finish(b.finish(), collapse, max_nodes, layout)


def trace(fun, args, transform="graph", argnums=None, cotangents=None, tangents=None,
          in_axes=0, collapse=False, max_nodes=None, names=None, title=None, values=VALUES,
          rankdir="TB", size=None, dpi=None, modules=True, expand=None):
    """Run ``transform`` of ``fun`` on ``args`` and draw it.

    ``args`` holds ``fun``'s positional arguments: arrays, or trees of them
    (lists, tuples, dicts, nested), as the transforms take, or ``nn`` models
    (their parameters are the arrays). Each array is an input named by its
    path: ``params.w`` for ``{"w": ...}`` passed as ``params``,
    ``model.layers.0.weight``, or ``layers.0.weight`` when the argument's name
    is ``""``. ``argnums`` and ``in_axes`` go by argument, as in MLX; with
    tree arguments, ``tangents`` are one per array, in a flat list or in the
    arguments' structure.

    - ``"graph"``: the graph ``fun(*args)`` builds.
    - ``"vjp"``: reverse step numbers, cotangents on nodes and edges, nodes
      off the tape greyed. ``cotangents`` default to ones like each output.
    - ``"jvp"``: forward step numbers and tangents; ``tangents`` default to
      ones like each input.
    - ``"grad"`` / ``"value_and_grad"`` (``argnums`` default 0; ``fun`` returns
      a scalar): the forward graph with the vjp walk, and the backward graph
      it built, side by side.
    - ``"vmap"``: the batch axis of every node (``in_axes`` as ``mx.vmap``).
    - ``"checkpoint"``: the vjp of ``mx.checkpoint(fun)``, with the region its
      backward pass recomputes marked.
    - ``"compile"``: ``mx.compile(fun)``'s graph as traced, simplified and
      fused, side by side; each Compiled node a box of the primitives it
      fused, its generated source after the listing and under the HTML
      drawing (``collapse`` folds each box into one node).

    ``names`` are display names for the inputs (default: ``fun``'s parameter
    names). ``collapse`` folds custom functions, checkpoints and recomputed
    regions into one node each, and each innermost module call of a model
    into one box; ``max_nodes`` keeps at most that many nodes plus one
    summary node, a model folded by module first (as few levels as fit).

    ``modules``: an ``nn.Module`` argument is drawn by module (True, the
    default): each node in a box for the call of the submodule (``layers.3``,
    ``blocks.0.attention``) or of the nn function (``gelu#1``) that made it,
    the backward nodes of a grad in the box of the forward node whose rule
    made them (``scopes.py``). Give ``modules=model`` for a model ``fun``
    reaches without taking it as an argument; False draws no boxes.
    ``expand`` names module calls (``"layers.3"``, or a list) that a drawing
    folded by module keeps open, node by node; a name without its ``#k``
    opens every call (``"gelu"``: ``gelu#1``, ``gelu#2``...). Values of the traced graph are evaluated after the
    transform ran, so nodes show them: arrays of up to ``values`` elements
    whole (a matrix row by row), larger ones summarised as MLX prints them.
    All that evaluation (of lazy ``args`` too) counts against ``viz.limits``'
    ``max_work``: past it, LimitExceeded, before the work is done.

    The layout: ``rankdir`` "TB" (top to bottom, the default) or "LR" (left
    to right); ``size`` the largest drawing in inches (a number, or (width,
    height)); ``dpi`` the resolution of png output.
    """
    layout = _dot.check_layout(rankdir, size, dpi, "viz.trace")
    with _budget.counting_work():
        graph = _trace.trace(fun, args, transform=transform, argnums=argnums,
                             cotangents=cotangents, tangents=tangents, in_axes=in_axes,
                             names=names, title=title, values=check_values(values, "viz.trace"),
                             modules=modules)
    expand = _scopes.check_expand(expand, graph, "viz.trace")
    return _finish(graph, collapse, max_nodes, layout, expand)
