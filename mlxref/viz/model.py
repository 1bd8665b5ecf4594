"""The small graph model every drawing is made of.

A drawing is recorded once into these plain objects (``record.py`` from the
arrays, ``trace.py`` from a transform's traversal events), shrunk if asked
(``shrink.py``), and then only read: ``dot.py`` writes Graphviz DOT and
``text.py`` the listing. Nothing here refers back to the engine, so the writers
never evaluate anything and always print the same text.

Overlays are *notes*: a line of text and the traversal step from which it is
shown. Frame ``k`` of a stepper shows the notes of steps ``0..k``; the final
drawing shows them all. A drawing of a model also has *scopes*: one per call
of a module (``layers.3``) or of one of nn's functions (``gelu#1``), each
node pointing at the innermost scope that made it (``scopes.py``). Read next:
``record.py``.
"""

from dataclasses import dataclass, field


@dataclass(eq=False)
class Node:
    """One array (or, after shrinking, a fold or the summary of hidden nodes).

    ``kind``: "input", "constant", "op", "fold" (a folded region) or "summary".
    ``part``: "forward", or "backward" for the graph a vjp walk built, or the
    stage of ``mx.compile`` it belongs to ("traced", "simplified", "fused").
    ``label``: the name shown, where it differs from ``name`` (the DOT id): a
    node of a compile stage shows its traced name in every stage.
    """

    name: str
    kind: str
    label: str = ""
    uid: int = 0
    op: str = ""  # the primitive's full name, e.g. "multiply"
    params: str = ""  # e.g. "axes=(0,), keepdims=False"
    shape: tuple = ()
    dtype: str = ""
    value: str = None  # the value as text (record.format_value), when it is known
    part: str = "forward"
    output: bool = False
    off_tape: bool = False  # greyed: the walk never visits it
    custom: str = ""  # "custom_function" or "checkpoint" for a CustomTransforms node
    collective: str = ""  # a collective node: what it does, from this rank (record.collective)
    sibling: tuple = None  # (position, count) of a multi-output primitive's output
    folded: int = 0  # how many nodes were folded into this one
    gradient_of: object = None  # the input Node this backward node is the gradient of
    cluster: object = None  # the innermost Cluster holding it
    scope: object = None  # the innermost Scope (module call) that made it (scopes.py)
    reveal: int = 0  # the first frame it exists in (backward nodes appear as built)
    made: str = ""  # backward nodes: which step of the vjp walk built it
    visited: list = field(default_factory=list)  # step numbers that visited it
    notes: list = field(default_factory=list)  # [(step, text)]
    tags: list = field(default_factory=list)  # extra words for the listing
    array: object = None  # the recorded array; writers never touch it

    @property
    def shown(self):
        """The name the writers print."""
        return self.label or self.name


@dataclass(eq=False)
class Edge:
    """Input ``index`` of ``dst`` is ``src`` (``index`` None: a summary edge).

    ``style``: "data"; "cut" (into a stop_gradient: no derivative crosses it);
    "cross" (a forward value the backward graph reads).
    """

    src: Node
    dst: Node
    index: int = None
    style: str = "data"
    notes: list = field(default_factory=list)  # [(step, text)]


@dataclass(eq=False)
class Cluster:
    """A box around nodes: "forward", "backward", "custom", "recompute", "module"
    (one call of a model's module, ``scopes.py``), or for compile, "stage" (one
    step's graph) and "fused" (one Compiled node's steps)."""

    key: str  # the DOT subgraph id, starting with "cluster_"
    kind: str
    label: str
    order: int  # emission order (creation order of its first node)
    anchor: str = ""  # the name of the node it is about (e.g. the checkpoint node)
    parent: object = None
    members: set = field(default_factory=set)  # ids of Nodes, used while building

    @property
    def heading(self):
        """The label on one line: its first line, then the others run together
        (a Compiled's name is cut between primitive names, not at spaces)."""
        first, _, rest = self.label.partition("\n")
        return f"{first} {rest.replace(chr(10), '')}" if rest else first


@dataclass(eq=False)
class Scope:
    """One call of a module of a model, or of one of nn's functions, that made nodes.

    ``path``: the module's path in the model (``layers.3``, ``blocks.0.attention``),
    ``#2`` after it for its second call; a function call is named after the
    function and numbered within its caller (``gelu#1``, ``attention.softmax#1``).
    ``what``: the module's class (``Linear``) or the function (``nn.gelu``).
    ``height``: how many levels of calls it holds (0: it calls no other
    module or function drawn as a scope, as a ``Linear``).
    """

    path: str
    kind: str  # "module" or "function"
    what: str
    parent: object = None
    height: int = 0
    parameters: int = 0  # elements of the module's parameters (its submodules' included)

    @property
    def label(self):
        """"layers.3: Linear, 20 parameters" or "gelu#1: nn.gelu"."""
        count = f", {self.parameters:,} parameters" if self.parameters else ""
        return f"{self.path}: {self.what}{count}"


@dataclass(eq=False)
class StepInfo:
    """One step of the traversal, for the listing and the frames.

    ``nodes`` are the outputs of the primitive visited; ``at_nodes`` one text
    per node (its cotangent, tangent or batch axis); ``contributions`` one
    ``(edge, text)`` per input that received something.
    """

    number: int  # 1, 2, ... in visit order
    kind: str  # "vjp", "jvp" or "vmap"
    nodes: list
    at_nodes: list
    contributions: list
    remark: str = ""  # what a collective's rule did (trace.collective_rule), else ""


@dataclass(eq=False)
class Graph:
    """Everything a writer needs."""

    title: str
    mode: str  # "graph", "vjp", "jvp", "vmap", "grad", "value_and_grad", "checkpoint", "compile"
    nodes: list = field(default_factory=list)  # in creation order
    edges: list = field(default_factory=list)  # by consumer, then argument index
    clusters: list = field(default_factory=list)
    steps: list = field(default_factory=list)  # StepInfo, in visit order
    results: list = field(default_factory=list)  # [(label, Node, text)] e.g. gradients
    sources: list = field(default_factory=list)  # [(heading, text)]: generated code shown
    hidden: int = 0  # nodes left out by max_nodes (counted in the summary node)
    scopes: list = field(default_factory=list)  # Scope, parents before their children
    expand: tuple = ()  # paths of scopes a folded drawing keeps open (``trace(expand=)``)
    frame_steps: list = None  # the last step of each frame, when frames group steps (shrink)
    layout: dict = field(default_factory=dict)  # rankdir, size, dpi (see dot.py)
