"""Models drawn by module (issue 32): mlxref/viz/scopes.py and shrink.fold_scopes.

Two models: ``figures.DeepMLP`` (six Linear(4, 4) layers with gelu between,
227 nodes in its grad) and chapter 12's transformer (tutorials/examples/
char_lm.py, the chapter's configuration). The box a node is put in is
checked against what the module computes on its own and against the module
calls seen by a second, independent watcher (a wrapper around each class's
``__call__``); the folded drawings against golden DOT files
(tests/viz/golden/*.dot, ``MLXREF_UPDATE_GOLDEN=1`` rewrites them); the node
limit by counting; readability by the pixel height of the labels, computed
from the layout ``dot`` makes. No wall time is asserted:
``python -m benchmarks.drawing_limits`` times these drawings.
"""

import cProfile
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import warnings

import pytest

import mlxref.core as mx
import mlxref.nn as nn
from mlxref import viz
from mlxref.cli import main
from mlxref.utils import tree_flatten
from mlxref.viz import budget, figures

from .test_draw import check_golden

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tutorials" / "examples"))
import char_lm  # noqa: E402

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed")


def deep_grad(**options):
    x, model = figures.deep_mlp_args()
    return viz.trace(figures.forward, [x, model], names=["x", ""], transform="grad", **options)


@pytest.fixture(scope="module")
def lm():
    """Chapter 12's model and its first batch of inputs."""
    libs = char_lm.libraries("mlxref")
    text = char_lm.read_text()
    vocab = char_lm.Vocabulary(text)
    model, _ = char_lm.build(libs, len(vocab), char_lm.CHAPTER)
    inputs, _ = char_lm.batches(vocab.encode(text), char_lm.CHAPTER)[0]
    return model, mx.array(inputs)


def lm_forward(lm, **options):
    model, x = lm
    return viz.trace(figures.forward, [x, model], names=["x", ""], **options)


def folded(drawing, limit=None):
    """The drawing dot is given (``for_dot``), folded past the node limit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", viz.LimitWarning)
        if limit is None:
            return drawing.for_dot()
        with viz.limits(max_nodes=limit):
            return drawing.for_dot()


def scope_nodes(graph, path, part="forward"):
    return [n for n in graph.nodes if n.scope is not None and n.scope.path == path
            and n.part == part]


def boundary(graph, nodes):
    """(the nodes feeding ``nodes`` from outside, the nodes of ``nodes`` read outside)."""
    inside = {id(n) for n in nodes}
    ins = [e.src for e in graph.edges if id(e.dst) in inside and id(e.src) not in inside
           and e.style != "cross"]
    outs = [e.src for e in graph.edges if id(e.src) in inside and id(e.dst) not in inside
            and e.style != "cross"]
    return ins, outs


# --- which box each node is in ---------------------------------------------------------


def test_each_node_is_in_the_box_of_the_call_that_made_it():
    x, model = figures.deep_mlp_args()
    d = viz.trace(figures.forward, [x, model], names=["x", ""])
    g = d.graph
    expected = [p for k in range(6) for p in (f"layers.{k}", f"gelu#{k + 1}")]
    assert [s.path for s in g.scopes] == expected
    assert [(s.kind, s.what) for s in g.scopes[:2]] == [("module", "Linear"),
                                                         ("function", "nn.gelu")]
    # What each box computes is what its module or function computes on its own.
    for k, layer in enumerate(model.layers):
        for path, compute in ((f"layers.{k}", layer), (f"gelu#{k + 1}", nn.gelu)):
            nodes = scope_nodes(g, path)
            ins, outs = boundary(g, nodes)
            data_in = [n for n in ins if n.kind != "input" or n.name == "x"]
            assert len(set(map(id, data_in))) == 1 and len(set(map(id, outs))) == 1, path
            assert outs[0].array.tolist() == compute(data_in[0].array).tolist(), path
    # A Linear holds its weight and bias (drawn inside its box), and the gelu none.
    assert sorted(n.name for n in scope_nodes(g, "layers.3") if n.kind == "input") == [
        "layers.3.bias", "layers.3.weight"]
    assert [n.scope for n in g.nodes if n.op == "sum"] == [None]  # the model's own sum
    assert "; in layers.3\n" in d.to_text() and "; in gelu#4\n" in d.to_text()


def test_backward_nodes_are_in_the_box_of_the_forward_node_whose_rule_made_them():
    g = deep_grad().graph
    visited = {s.number: s.nodes[0] for s in g.steps}
    backward = [n for n in g.nodes if n.part == "backward"]
    assert sum(n.scope is not None for n in backward) > 100
    for n in backward:
        if n.scope is not None:
            assert n.made == f"made at vjp step {n.reveal}"
            assert visited[n.reveal].scope is n.scope, n.name
        else:  # the seed cotangent, and the sum's rule: the model's own node
            assert n.made == "the seed cotangent" or visited[n.reveal].op == "sum"
    # vjp(layers.k) reads layers.k's transposed weight, never another layer's.
    for e in g.edges:
        if e.style == "cross" and e.dst.scope is not None and e.src.op == "transpose":
            assert e.src.scope is e.dst.scope, (e.src.name, e.dst.name)


@pytest.fixture
def calls_seen(monkeypatch):
    """The module calls made, seen by wrapping each nn class's ``__call__``."""
    seen = []

    def watch(cls):
        original = cls.__call__

        def call(self, *args, **kwargs):
            seen.append(self)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__call__", call)

    return seen, watch


def test_the_transformer_is_drawn_by_module_with_its_names_as_box_labels(lm, calls_seen):
    model, x = lm
    seen, watch = calls_seen
    for cls in {type(m) for _, m in model.named_modules()}:
        watch(cls)
    model(x)
    called = {id(m) for m in seen}
    dot = lm_forward(lm).to_dot()
    labels = dict(re.findall(r'subgraph "?cluster_module_forward\.([^"\s]+)"? \{\n\t*label="([^"]+)"',
                             dot))
    expected = {}
    for path, m in model.named_modules():
        if path and id(m) in called:
            count = sum(a.size for _, a in tree_flatten(m.parameters()))
            expected[path] = f"{path}: {type(m).__name__}" + (f", {count:,} parameters"
                                                              if count else "")
    modules = {p: label for p, label in labels.items() if "#" not in p}
    assert modules == expected
    assert "positions" not in modules  # its weight is read, the module never called
    # nn's functions get boxes of their own, except where they are all a module does.
    functions = sorted(p for p in labels if "#" in p)
    assert functions == ["blocks.0.attention.scaled_dot_product_attention#1",
                         "create_additive_causal_mask#1"]
    assert labels["create_additive_causal_mask#1"] == (
        "create_additive_causal_mask#1: nn.MultiHeadAttention.create_additive_causal_mask")


# --- folded drawings -------------------------------------------------------------------


def test_golden_dot_of_the_folded_drawings(lm):
    """The transformer's here; the six-layer model's grad is the figure
    diagrams/mlp_modules.dot (``collapse=True``), which folding it to fit the
    node limit must give too."""
    transformer = folded(lm_forward(lm))
    check_golden("char_lm_forward_folded.dot", transformer.to_dot())
    assert folded(lm_forward(lm)).to_dot() == transformer.to_dot()
    deep = folded(deep_grad(title="grad of DeepMLP(x), by module"))
    assert deep.to_dot() == (ROOT / "diagrams" / "mlp_modules.dot").read_text()
    # Every box has its path in bold, its class, parameters and shapes.
    assert ('<TR><TD><B>blocks.0.attention.query_proj</B></TD></TR><TR><TD>Linear</TD></TR>'
            '<TR><TD>256 parameters</TD></TR><TR><TD>in (4, 16, 16) → out (4, 16, 16)</TD>'
            '</TR><TR><TD>5 nodes folded</TD></TR>') in transformer.to_dot()


def test_a_folded_drawing_stays_within_the_node_limit(lm):
    drawings = {"deep grad": deep_grad(), "transformer forward": lm_forward(lm),
                "transformer grad": viz.trace(lambda x, model: mx.sum(model(x)),
                                              [lm[1], lm[0]], names=["x", ""],
                                              transform="grad", argnums=1)}
    for name, d in drawings.items():
        whole = len(d.graph.nodes)
        for limit in (80, 40, 20, 8):
            g = folded(d, limit).graph
            kept = [n for n in g.nodes if n.kind != "summary"]
            assert len(kept) <= limit, (name, limit)
            assert sum(n.folded if n.kind == "fold" else 1 for n in kept) + g.hidden == whole
    # Innermost calls first: at 80 nodes every Linear of the transformer is a box
    # and the attention block around them is open.
    g = folded(drawings["transformer forward"]).graph
    boxes = {n.name for n in g.nodes if n.kind == "fold"}
    assert {"blocks.0.attention.query_proj", "blocks.0.mlp.layers.0", "out"} <= boxes
    assert "blocks.0.attention" not in boxes and "blocks.0" not in boxes
    # Fewer nodes: the attention block and the MLP fold whole, then the transformer block.
    g = folded(drawings["transformer forward"], 20).graph
    boxes = {n.name for n in g.nodes if n.kind == "fold"}
    assert {"blocks.0.attention", "blocks.0.mlp"} <= boxes and "blocks.0" not in boxes
    assert g.hidden == 0
    g = folded(drawings["transformer forward"], 12).graph
    assert "blocks.0" in {n.name for n in g.nodes if n.kind == "fold"} and g.hidden == 0


def test_expand_draws_one_module_node_by_node(tmp_path):
    g = folded(deep_grad(expand=["layers.3"])).graph
    names = {n.name for n in g.nodes}
    assert {"layers.2", "layers.4", "vjp(layers.2)"} <= names  # folded
    assert not {"layers.3", "vjp(layers.3)"} & names  # open:
    assert {"layers.3.weight", "layers.3.bias"} <= names
    # x @ weight.T + bias, and its vjp with respect to x: the cotangent @ weight
    # (the cotangents of gelu's two paths added first).
    forward = sorted(n.op for n in g.nodes if n.kind == "op" and n.scope is not None
                     and n.scope.path == "layers.3" and n.part == "forward")
    backward = sorted(n.op for n in g.nodes if n.kind == "op" and n.scope is not None
                      and n.scope.path == "layers.3" and n.part == "backward")
    assert forward == ["add", "broadcast", "matmul", "transpose"]
    assert backward == ["add", "matmul", "transpose"]
    labels = re.findall(r'label="(layers\.3: [^"]+)"', folded(deep_grad(expand="layers.3")).to_dot())
    assert labels == ["layers.3: Linear, 20 parameters", "layers.3: Linear, 20 parameters, backward"]
    # The command line's --expand, with a node limit so the drawing is folded.
    out = tmp_path / "deep.dot"
    target = f"{ROOT / 'mlxref' / 'viz' / 'figures.py'}:DeepMLP"
    assert main(["graph", target, "--shape", "x=2,4", "--transform", "grad", "--expand",
                 "layers.3", "--max-nodes", "80", "-o", str(out)]) == 0
    text = out.read_text()
    assert '"layers.3.weight"' in text and re.search(r'^\t+"layers\.2" \[', text, re.M)
    assert not re.search(r'^\t+"layers\.3" \[', text, re.M)
    with pytest.raises(ValueError, match=r"\[viz.trace\] expand: no module or function call "
                                         r"'layers.9' in the drawing; its calls are: layers.0, "
                                         r"gelu#1, "):
        deep_grad(expand=["layers.9"])


def test_collapse_folds_each_innermost_call_and_steps_box_by_box():
    d = figures.FIGURES["mlp_modules"]()
    boxes = [n.name for n in d.graph.nodes if n.kind == "fold"]
    assert boxes == [p for k in range(6) for p in (f"layers.{k}", f"gelu#{k + 1}")] + [
        f"vjp({p})" for k in range(5, -1, -1) for p in (f"gelu#{k + 1}", f"layers.{k}")]
    # One frame per run of steps through one box: the sum, then each box in turn.
    captions = d.captions()
    assert len(d.frames()) == len(captions) == 13
    assert captions[:3] == ["step 1 of 43: the vjp walk visits sum_91",
                            "steps 2–6 of 43: the vjp walk visits gelu#6",
                            "steps 7–8 of 43: the vjp walk visits layers.5"]
    for frame, caption in zip(d.frames(), captions):
        box = caption.rsplit(" ", 1)[1]
        marked = re.findall(r'^\t+"?([^"\s]+)"? \[.*\bclass=visiting\b', frame, re.M)
        assert marked == [box]
    # The listing gives the walk box by box too.
    assert "\n  steps 21–22 of 43: the vjp walk visits layers.3\n" in d.to_text()
    # Unfolded (under the node limit), a frame per step, each saying whose call it is in.
    with viz.limits(max_nodes=300):
        captions = deep_grad().for_dot().captions()
    assert len(captions) == 43
    assert captions[20:22] == ["step 21 of 43: the vjp walk visits add_49, in layers.3",
                               "step 22 of 43: the vjp walk visits matmul_47, in layers.3"]
    assert captions[0] == "step 1 of 43: the vjp walk visits sum_91"


@needs_dot
def test_the_html_stepper_of_a_folded_model_has_a_frame_per_box(tmp_path):
    page = (tmp_path / "deep.html")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", viz.LimitWarning)
        deep_grad().render(page)
    content = page.read_text()
    assert content.count('<div class="frame"') == 13
    assert "steps 21–22 of 43: the vjp walk visits layers.3" in content


# --- what dot is given ------------------------------------------------------------------


def test_the_summary_node_of_a_collapsed_power_tower_takes_no_edges_in():
    """The collapsed 50-term x ** x grad: long edges from kept nodes up into the
    summary node made dot take seconds; it keeps only the edges out of it."""
    def tower(x):  # x ** x * x ** x * ..., 50 terms, as `mlxref graph` parses it
        y = x ** x
        for _ in range(49):
            y = y * x ** x
        return y

    d = viz.trace(tower, [mx.array(0.5)], transform="grad")
    assert len(d.graph.nodes) > 800  # ten times the node budget
    g = folded(d).graph
    summary = [n for n in g.nodes if n.kind == "summary"]
    assert len(summary) == 1 and len(g.nodes) == budget.Limits().max_nodes + 1
    assert not [e for e in g.edges if e.dst is summary[0]]
    assert len(g.edges) <= 2 * len(g.nodes)
    out = [e for e in g.edges if e.src is summary[0]]
    assert len({(id(e.dst), e.index) for e in out}) == len(out)  # one per argument left out


# --- readable at 100% -------------------------------------------------------------------


def _png_size(path):
    with open(path, "rb") as f:
        return struct.unpack(">II", f.read(24)[16:24])


@needs_dot
@pytest.mark.parametrize("which", ["deep grad", "transformer forward"])
def test_module_names_are_at_least_10_pixels_high_in_the_png(which, lm, tmp_path):
    d = deep_grad() if which == "deep grad" else lm_forward(lm)
    shown = folded(d)
    layout = json.loads(subprocess.run(["dot", "-Tjson0"], input=shown.to_dot().encode(),
                                       capture_output=True, check=True).stdout)
    bb = [float(v) for v in layout["bb"].split(",")]
    dpi = float(layout.get("dpi") or 96)
    width, height = budget.pixels_of(bb, dpi, layout.get("size"))
    png = tmp_path / "d.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error", viz.LimitWarning)  # not drawn smaller (max_pixels)
        warnings.filterwarnings("ignore", r"\[viz\] the graph has", viz.LimitWarning)
        d.render(png)
    png_width, png_height = _png_size(png)
    assert abs(png_width - width) <= 1 and abs(png_height - height) <= 1  # (dot's rounding)
    pixels_per_point = png_width / (bb[2] - bb[0] + 8)  # dpi / 72, and any scaling down
    boxes = {n.name for n in shown.graph.nodes if n.kind == "fold"}
    labels = 0
    for obj in layout["objects"]:
        if obj["name"].startswith("cluster_module"):  # a module's box: its label's height
            assert float(obj["lheight"]) * 72 * pixels_per_point >= 10, obj["name"]
            labels += 1
        elif obj["name"] in boxes:  # a folded module: its path, in the node's font
            assert float(obj["fontsize"]) * pixels_per_point >= 10, obj["name"]
            labels += 1
    assert labels >= 12
    svg = subprocess.run(["dot", "-Tsvg"], input=shown.to_dot().encode(), capture_output=True,
                         check=True).stdout.decode()
    for name in boxes:
        assert f">{name}</text>" in svg


# --- nn is not changed by being watched ------------------------------------------------


def test_watching_leaves_nn_and_the_profiler_as_they_were():
    x, model = figures.deep_mlp_args()
    linear = dict(vars(nn.Linear))
    before = mx.grad(lambda x: model(x))(x).tolist()
    events = []

    def profiler(frame, event, arg):
        events.append(event)

    sys.setprofile(profiler)
    try:
        d = deep_grad()
        assert sys.getprofile() is profiler  # given back
    finally:
        sys.setprofile(None)
    assert events.count("call") > 100  # it kept hearing the calls made while watched
    assert dict(vars(nn.Linear)) == linear and sorted(model.keys()) == ["layers"]
    assert mx.grad(lambda x: model(x))(x).tolist() == before
    assert d.graph.results[0][2] == viz.record.preview(mx.array(before))

    class Failing(nn.Module):  # raises inside a watched call: the watch still ends
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def __call__(self, x):
            return self.lin(x).reshape(3)

    with pytest.raises(ValueError, match=r"\[reshape\]"):
        viz.trace(figures.forward, [mx.ones((1, 2)), Failing()])
    assert sys.getprofile() is None


def test_under_cprofile_the_drawing_has_no_boxes_and_says_why():
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        with pytest.warns(viz.DrawingWarning, match="a C profiler"):
            d = deep_grad()
        assert isinstance(sys.getprofile(), cProfile.Profile)  # still running
    finally:
        profiler.disable()
    assert d.graph.scopes == [] and "cluster_module" not in d.to_dot()


def test_modules_option_names_and_repeated_calls():
    x, model = figures.deep_mlp_args()
    assert deep_grad(modules=False).graph.scopes == []
    # A model the function reaches without taking it: modules=model.
    d = viz.trace(lambda x: model(x), [x], modules=model)
    assert [s.path for s in d.graph.scopes][:2] == ["layers.0", "gelu#1"]
    # A named model argument: the model is a box too, its paths after the name.
    d = viz.trace(figures.forward, [x, model])
    assert [s.path for s in d.graph.scopes][:3] == ["model", "model.layers.0", "model.gelu#1"]
    weight = next(n for n in d.graph.nodes if n.name == "model.layers.0.weight")
    assert weight.scope.path == "model.layers.0"
    with pytest.raises(TypeError, match=r"\[viz.trace\] modules must be True, False or an "
                                        r"nn.Module, not str"):
        viz.trace(figures.forward, [x, model], modules="layers")

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def __call__(self, x):
            return nn.relu(self.lin(nn.relu(self.lin(x))))

    d = viz.trace(figures.forward, [mx.ones((1, 2)), Twice()], names=["x", ""])
    assert [s.path for s in d.graph.scopes] == ["lin", "relu#1", "lin#2", "relu#2"]
    assert [s.parameters for s in d.graph.scopes] == [6, 0, 6, 0]
