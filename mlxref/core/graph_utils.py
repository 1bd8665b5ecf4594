"""``mx.export_to_dot``: a graph as Graphviz DOT text, and the names MLX gives its arrays.

Read alongside: mlx/graph_utils.cpp (``NodeNamer``, ``depth_first_traversal``,
``export_to_dot``) and python/src/export.cpp (``export_to_dot``: a path or an
object with ``write``; keyword arguments name arrays).

The text has the structure MLX writes: an input (an array without a
primitive) is a ``rank=source`` node; each primitive is a rectangle with an
edge from each of its inputs and one to each of its outputs; an output that
no other node reads is ``rank=sink``. Arrays are named as MLX names them (the
keyword names, then A, B, ..., Z, AA, AB, ...). MLX names a primitive's node
by its address in memory; mlxref numbers them 1, 2, ... in the order they
are written, so the text is the same on every run. (mlxref.viz draws the
same graph with shapes, dtypes and values.)

Read next: mlxref/core/transforms/export.py (``exporter``'s callback names
arrays with ``node_name`` too).
"""

import os

from .array import array
from .ops.common import incompatible_argument
from .primitives.compiled import CompiledProgram
from .transforms.trees import flatten as tree_flatten


def node_name(n):
    """MLX's ``NodeNamer`` name of the ``n``-th array named (from 0): A, B, ...,
    Z, AA, AB, ..., AZ, BA, ..."""
    letters = ""
    n += 1
    while n > 0:
        n, k = divmod(n - 1, 26)
        letters = chr(ord("A") + k) + letters
    return letters


class NodeNamer:
    """MLX's ``NodeNamer``: a name for each array, given (``set_name``) or the
    next in ``node_name``'s sequence, counting the given names too."""

    def __init__(self):
        self.names = {}

    def get_name(self, x):
        name = self.names.get(x.id())
        if name is None:
            name = self.names[x.id()] = node_name(len(self.names))
        return name

    def set_name(self, x, name):
        self.names[x.id()] = name


def depth_first_traversal(outputs):
    """MLX's ``depth_first_traversal``: every array behind ``outputs``, each
    after its inputs and once (an array's siblings count as visited with it).
    Iterative, so a graph 100,000 nodes deep needs no recursion."""
    seen = set()
    order = []

    def visit(x):
        seen.add(x.id())
        seen.update(s.id() for s in x.siblings())
        return (x, iter(x.inputs()))

    for out in outputs:
        if out.id() in seen:
            continue
        stack = [visit(out)]
        while stack:
            x, inputs = stack[-1]
            for a in inputs:
                if a.id() not in seen:
                    stack.append(visit(a))
                    break
            else:
                stack.pop()
                order.append(x)
    return order


def to_dot(namer, outputs):
    """The DOT text of the graph behind ``outputs`` (MLX's ``export_to_dot``)."""
    order = depth_first_traversal(outputs)
    nodes = {x.id(): _nodes(x) for x in order if x.has_primitive()}
    # Arrays a node reads are intermediates; the others are outputs.
    intermediate = {a.id() for drawn in nodes.values() for n in drawn for a in n[2]}
    numbers = {}  # a primitive's number, in the order they are written
    lines = ["digraph {"]
    for x in order:
        if not x.has_primitive():
            lines.append(f'{{ rank=source; "{namer.get_name(x)}"; }}')
            continue
        for key, primitive, inputs, outputs in nodes[x.id()]:
            node = numbers.setdefault(key, len(numbers) + 1)
            lines.append(f'{{ {node} [label ="{primitive.name}", shape=rectangle]; }}')
            for a in inputs:
                lines.append(f'"{namer.get_name(a)}" -> {node}')
            for a in outputs:
                rank = "" if a.id() in intermediate else "rank=sink; "
                lines.append(f'{{ {rank}"{namer.get_name(a)}"; }}')
                lines.append(f'{node} -> "{namer.get_name(a)}"')
    return "\n".join(lines) + "\n}"


def _nodes(x):
    """The nodes drawn for the primitive of ``x``: ``(key, primitive, inputs,
    outputs)``. One, but for a compiled function's program (mlxref's one node
    where MLX's call builds the tape's nodes: mlxref/core/transforms/program.py),
    whose tape is drawn as MLX draws it, its own values named as arrays are."""
    primitive = x.primitive()
    if not isinstance(primitive, CompiledProgram):
        return [(id(primitive), primitive, x.inputs(), x.outputs())]
    arrays = {"input": x.inputs(), "output": x.outputs()}

    def value(ref):
        kind, k = ref
        return arrays[kind][k] if kind in arrays else _Value((id(primitive), k))

    return [((id(primitive), n), step, [value(r) for r in operands], [value(r) for r in results])
            for n, (step, operands, results) in enumerate(primitive.tape)]


class _Value:
    """A value of a compiled program's own, drawn as an array: its ``id()``."""

    def __init__(self, key):
        self.key = key

    def id(self):
        return self.key


def export_to_dot(file, *args, **kwargs):
    """Write the graph behind the arrays ``args`` and ``kwargs`` as Graphviz DOT
    to ``file`` (a path or an object with ``write``); a keyword names its array
    (``x=x``).

    >>> import io
    >>> import mlxref.core as mx
    >>> x = mx.array(1.0)
    >>> out = io.StringIO()
    >>> mx.export_to_dot(out, mx.exp(x), x=x)
    >>> print(out.getvalue())
    digraph {
    { rank=source; "x"; }
    { 1 [label ="Exp", shape=rectangle]; }
    "x" -> 1
    { rank=sink; "B"; }
    1 -> "B"
    }
    """
    if file is None:  # MLX's binding takes any object for file, but not None
        raise incompatible_argument("export_to_dot", "file",
                                    "a path or an object with a write method", None)
    outputs = tree_flatten((args, kwargs))  # arrays only, in lists, tuples and dicts
    namer = NodeNamer()
    for name, a in kwargs.items():
        if not isinstance(a, array):  # MLX: a bare "std::bad_cast"
            raise RuntimeError(f"[export_to_dot] The keyword argument {name} names an array, "
                               f"so it must be one, not {type(a).__name__}.")
        namer.set_name(a, name)
    if isinstance(file, (str, os.PathLike)):
        with open(file, "w", encoding="utf-8") as f:
            f.write(to_dot(namer, outputs))
    elif hasattr(file, "write"):
        file.write(to_dot(namer, outputs))
    else:
        raise ValueError("[export_to_dot] Accepts file-like objects or strings "
                         "to be used as filenames.")
