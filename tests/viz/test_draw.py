"""mlxref.viz: drawings of graphs and of the walks transforms make over them.

The golden DOT files are the committed diagrams/*.dot (``make diagrams``
regenerates them); the text listings are golden files in tests/viz/golden/. After
an intended change to the drawings, regenerate both and read the diff:

    make diagrams
    MLXREF_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/viz/test_draw.py -q
"""

import difflib
import doctest
import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import mlxref.core as mx
from mlxref import viz
from mlxref.viz import GraphvizMissing

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("MLXREF_UPDATE_GOLDEN") == "1"
HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed")
INSTALL = "install Graphviz (the 'dot' binary): apt-get install graphviz / brew install graphviz"


def check_golden(name, text):
    """Compare with tests/viz/golden/<name>; MLXREF_UPDATE_GOLDEN=1 rewrites the file."""
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"{path} is missing: run with MLXREF_UPDATE_GOLDEN=1"
    expected = path.read_bytes().decode("utf-8")
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            f"golden/{name}", "now"))
        pytest.fail(f"{name} differs from its golden file "
                    f"(MLXREF_UPDATE_GOLDEN=1 regenerates it):\n{diff}")


# --- the examples: the canonical figures (mlxref/viz/figures.py) ------------------

from mlxref.viz.figures import FIGURES as EXAMPLES  # noqa: E402
from mlxref.viz.figures import OTHER_FIGURES  # noqa: E402
from mlxref.viz.figures import chain, seed, uses_custom  # noqa: E402,F401

DIAGRAMS = pathlib.Path(__file__).resolve().parents[2] / "diagrams"


@pytest.fixture(scope="module")
def drawings():
    return {name: make() for name, make in EXAMPLES.items()}


# --- golden files ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_committed_diagrams_are_current(drawings, name):
    """diagrams/<name>.dot is what the figure draws today (make diagrams regenerates it)."""
    committed = (DIAGRAMS / f"{name}.dot").read_text()
    assert drawings[name].to_dot() == committed, f"diagrams/{name}.dot is stale: run make diagrams"


@pytest.mark.parametrize("name", list(OTHER_FIGURES))
def test_committed_figures_that_are_not_graphs_are_current(name):
    """diagrams/ring_allreduce.dot too: the ring's figure as ring.py runs it today."""
    committed = (DIAGRAMS / f"{name}.dot").read_text()
    assert OTHER_FIGURES[name]().to_dot() == committed, f"diagrams/{name}.dot is stale: run make diagrams"


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_golden_text(drawings, name):
    check_golden(f"{name}.txt", drawings[name].to_text())


def test_seed_listing_reads_like_the_docs(drawings):
    text = drawings["seed_graph"].to_text()
    assert "mul_3 = multiply sin_1 exp_2  # () float32: 0.79044; output" in text
    vjp = drawings["seed_vjp"].to_text()
    assert "gradient x: 2.2373" in vjp
    # reverse order: the output first, with a cotangent of one
    assert re.search(r"1\. mul_3  cotangent 1  ->  \[0\] sin_1 \+= 1.6487  \[1\] exp_2", vjp)
    jvp = drawings["seed_jvp"].to_text()
    assert "1. sin_1  [0] x 1  ->  0.87758" in jvp and "jvp mul_3: 2.2373" in jvp


def _bindings(text):
    """(name, operands) for each node line of a listing; None where a new
    listing starts (a compile drawing lists its three stages one after the other)."""
    out = []
    for line in text.splitlines():
        if re.match(r"# (traced|simplified|fused) \(compile_", line):
            out.append((None, []))
        if line.startswith("#") or " = " not in line or line.startswith(" "):
            continue
        name, rest = line.split(" = ", 1)
        rest = re.sub(r"\[[^\]]*\]", "", rest.split("  # ")[0])
        out.append((name, rest.split()[1:]))
    return out


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_listing_binds_each_name_once_before_use(drawings, name):
    bound = set()
    for node, operands in _bindings(drawings[name].to_text()):
        if node is None:
            bound = set()
            continue
        assert node not in bound, node
        for op in operands:
            assert op in bound, f"{node} uses {op} before it is bound"
        bound.add(node)


# --- determinism -------------------------------------------------------------------


def test_two_runs_are_identical():
    for make in EXAMPLES.values():
        a, b = make(), make()
        assert a.to_dot() == b.to_dot() and a.to_text() == b.to_text()
        assert a.frames() == b.frames()


def test_names_do_not_depend_on_arrays_made_before():
    before = EXAMPLES["mlp_grad"]().to_dot()
    junk = [mx.sin(mx.array([1.0, 2.0])) * i for i in range(50)]
    mx.eval(junk)
    assert EXAMPLES["mlp_grad"]().to_dot() == before


def test_same_text_in_a_fresh_process():
    code = ("import mlxref.core as mx; from mlxref import viz; "
            "print(viz.trace(lambda x: mx.sin(x) * mx.exp(x), [mx.array(0.5)], "
            "transform='vjp').to_dot(), end='')")
    outs = []
    for hashseed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                              check=True)
        outs.append(done.stdout)
    here = viz.trace(lambda x: mx.sin(x) * mx.exp(x), [mx.array(0.5)], transform="vjp")
    assert outs[0] == outs[1] == here.to_dot().encode("utf-8")


# --- nodes and edges -----------------------------------------------------------------


def test_a_times_a_draws_two_edges():
    x = mx.array(3.0)
    d = viz.draw(x * x, names={"x": x})
    edges = re.findall(r'^\tx -> mul_1 \[label=<(\d)', d.to_dot(), re.M)
    assert edges == ["0", "1"]
    assert "mul_1 = multiply x x" in d.to_text()


def test_draw_evaluates_nothing_and_marks_inputs_outputs_constants():
    x = mx.array([1.0, 2.0, 3.0])
    y = mx.exp(x) * 2.0
    d = viz.draw({"y": y, "s": mx.sum(y)}, names={"x": x})
    assert y.data() is None  # draw did not evaluate
    text = d.to_text()
    assert "x = input  # (3,) float32: [1, 2, 3]" in text
    assert re.search(r"const_\d = constant  # \(\) float32: 2", text)
    assert "mul_4 = multiply exp_1 broadcast_3  # (3,) float32; output" in text
    assert "broadcast_3 = broadcast[shape=(3,)] const_2  # (3,) float32\n" in text  # no value
    dot = d.to_dot()
    assert 'shape=note' in dot and 'peripheries=2' in dot and 'style="rounded,filled,bold"' in dot
    # with no names, every leaf is an input
    assert "input_1 = input" in viz.draw(mx.sin(mx.array(1.0))).to_text()


def test_off_the_tape_is_greyed_and_stop_gradient_is_a_cut():
    def f(x):
        return mx.sin(mx.stop_gradient(x * x)) + x

    d = viz.trace(f, [mx.array(0.5)], transform="vjp")
    text = d.to_text()
    assert "stop_gradient_2 = stop_gradient mul_1  # () float32: 0.25; off the tape" in text
    assert "add_4 = add sin_3 x" in text and "gradient x: 1" in text
    dot = d.to_dot()
    cut = re.search(r'^\tmul_1 -> stop_gradient_2 \[(.*)\]$', dot, re.M).group(1)
    assert "cut" in cut and 'style=dashed' in cut and "#212121" in cut
    grey = re.search(r'^\tsin_3 \[(.*)\]$', dot, re.M).group(1)
    assert 'fillcolor="#f5f5f5"' in grey and 'fontcolor="#9e9e9e"' in grey
    assert 'fontcolor' not in re.search(r'^\tadd_4 \[(.*)\]$', dot, re.M).group(1)


def test_multi_output_primitive_gets_one_node_per_output():
    x = mx.array([1.0, 2.0, 3.0, 4.0])
    a, b = mx.split(x, 2)
    d = viz.draw(a * b, names={"x": x})
    text = d.to_text()
    assert "split_1 = split[indices=(2,), axis=0] x  # (2,) float32; output 0 of 2" in text
    assert "split_2 = split[indices=(2,), axis=0] x  # (2,) float32; output 1 of 2" in text


# --- overlays ---------------------------------------------------------------------------


def test_vjp_overlay_numbers_steps_in_reverse_with_cotangents(drawings):
    dot = drawings["seed_vjp"].to_dot()
    assert "step 1 · cotangent 1<" in dot and "step 3 · cotangent 1.6487" in dot
    assert re.search(r'^\tx -> sin_1 \[label=<0<BR/><FONT COLOR="#c62828">cotangent 1.4469', dot,
                     re.M)
    assert "gradient 2.2373" in dot


def test_jvp_overlay_numbers_steps_forward_with_tangents(drawings):
    dot = drawings["seed_jvp"].to_dot()
    assert "step 1 · tangent 0.87758" in dot and "step 3 · tangent 2.2373" in dot
    assert "tangent 1<" in dot  # the seed on x


def test_grad_draws_forward_and_backward_side_by_side(drawings):
    dot = drawings["mlp_grad"].to_dot()
    forward = dot.index('subgraph cluster_forward')
    backward = dot.index('subgraph cluster_backward')
    assert forward < backward
    assert "constraint=false" in dot  # backward reads forward values without moving them
    text = drawings["mlp_grad"].to_text()
    for name in ("w1", "b1", "w2", "b2"):
        assert f"gradient of {name}" in text and f"gradient {name}: " in text
    assert "x = input  # (2,) float32: [1, 2]; off the tape" in text


def test_vmap_overlay_gives_every_node_a_batch_axis(drawings):
    text = drawings["vmap_grad"].to_text()
    assert "w = input  # (2,) float32: [0.5, -0.25]; unbatched" in text
    assert "x = input  # (2,) float32; batch axis 0 (in_axes)" in text
    assert "1. mul_3  [1] x axis 0  ->  batch axis 0" in text
    assert "batched output mul_11: (3, 2)" in text
    nodes = [n for n in drawings["vmap_grad"].graph.nodes]
    for n in nodes:  # every node says its axis
        assert any("axis" in t or t == "unbatched" for _, t in n.notes), n.name


def test_checkpoint_cluster_and_recomputed_region(drawings):
    d = drawings["checkpoint"]
    dot, text = d.to_dot(), d.to_text()
    assert 'subgraph cluster_custom_checkpoint_7' in dot
    assert 'subgraph cluster_recompute_checkpoint_7' in dot
    assert 'label="recomputed: the function re-run by the vjp rule of checkpoint_7"' in dot
    assert "sin_1 = sin x  # (2,) float32: [0.47943, -0.84147]; off the tape, inside checkpoint_7" \
        in text
    recomputed = [n for n, _ in _bindings(text) if re.search(rf"^{n} = .*recomputed", text, re.M)]
    assert recomputed == ["copy_11", "sin_12", "mul_13", "sin_14"]
    assert "gradient x: [0.43182, -1.8051]" in text


def test_custom_function_cluster(drawings):
    d = drawings["custom_function"]
    assert 'label="custom_function custom_3: custom vjp"' in d.to_dot()
    assert "sin_1 = sin x  # (2,) float32: [0.47943, -0.84147]; off the tape, inside custom_3" \
        in d.to_text()


def test_trace_options():
    x, w = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])

    def f(x, w):
        return mx.sum(x * w)

    d = viz.trace(f, [x, w], transform="vjp", argnums=[1], cotangents=[2.0])
    assert d.title == "vjp of f(x, w) with respect to w"
    assert "gradient w: [2, 4]" in d.to_text()
    d = viz.trace(f, [x, w], transform="jvp", tangents=[mx.array([1.0, 0.0]), 0.0])
    assert "jvp sum_2: 3" in d.to_text()
    d = viz.trace(f, [x, w], transform="value_and_grad", argnums=1, names=["a", "b"])
    assert "gradient b: [1, 2]" in d.to_text()
    with pytest.raises(ValueError, match="Unknown transform"):
        viz.trace(f, [x, w], transform="hessian")


# --- large graphs ------------------------------------------------------------------------


def test_collapse_folds_custom_functions_checkpoints_and_recomputation():
    d = viz.trace(chain, [mx.array([0.5, -1.0])], transform="checkpoint", collapse=True)
    text = d.to_text()
    assert "checkpoint_7 = checkpoint x  # () float32: 0.68433; output, 6 nodes folded" in text
    assert "sin_1" not in text and "sin_12" not in text
    assert "recomputed_checkpoint_7 = recomputed depends_10" in text
    assert "shape=box3d" in d.to_dot()
    d = viz.trace(uses_custom, [mx.array([0.5, -1.0])], transform="grad", collapse=True)
    assert "custom_3 = custom_function x  # (2,) float32: [0.47943, -0.84147]; 2 nodes folded" \
        in d.to_text()
    assert "cluster_custom" not in d.to_dot()


def test_max_nodes_keeps_a_summary_node():
    x = mx.array(0.1)
    y = x
    for _ in range(40):
        y = mx.sin(y) + x
    d = viz.draw(y, names={"x": x}, max_nodes=6)
    dot = d.to_dot()
    assert len(re.findall(r"^\t+(?!graph )\S+ \[label", dot, re.M)) == 7
    assert "… 75 more nodes" in dot and "# … 75 more nodes" in d.to_text()
    assert re.search(r'^\tx \[', dot, re.M) and re.search(r'^\tadd_80 \[', dot, re.M)  # kept


def test_a_10000_node_chain_draws():
    x = mx.array(1.0)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    d = viz.draw(y, names={"x": x})
    assert len(d.graph.nodes) == 20_001  # x, 10,000 constants, 10,000 multiplies
    assert d.to_dot().count(" -> ") == 20_000
    assert d.to_text().splitlines()[-2].startswith("mul_20000 = multiply mul_19998 const_19999")


# --- frames, files, notebooks ------------------------------------------------------


def test_frames_one_per_step_with_the_visited_node_highlighted(drawings):
    frames = drawings["seed_vjp"].frames()
    assert len(frames) == 3
    for frame, name in zip(frames, ["mul_3", "exp_2", "sin_1"]):
        attrs = re.search(rf'^\t+{name} \[(.*)\]$', frame, re.M).group(1)
        assert "penwidth=3" in attrs
    # later notes are drawn in the background colour, so the layout stays put
    assert '<FONT COLOR="#ffffff" POINT-SIZE="10">step 3 · cotangent 1.6487' in frames[0]
    assert drawings["seed_graph"].frames() == [drawings["seed_graph"].to_dot()]
    # grad: backward nodes appear in the frame of the step that built them
    grad = viz.trace(seed, [mx.array(0.5)], transform="grad").frames()
    assert re.search(r'^\t+cos_8 \[.*style=invis', grad[1], re.M)
    assert not re.search(r'^\t+cos_8 \[.*style=invis', grad[2], re.M)


@needs_dot
def test_svg_rendered_with_dot(drawings, tmp_path):
    for name in ("seed_vjp", "checkpoint"):
        path = drawings[name].render(tmp_path / f"{name}.svg")
        root = ET.parse(path).getroot()
        titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
        for node in drawings[name].graph.nodes:
            assert node.name in titles
    png = drawings["seed_vjp"].render(tmp_path / "seed.png")
    assert pathlib.Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = drawings["seed_vjp"].render(tmp_path / "seed.out", "pdf")
    assert pathlib.Path(pdf).read_bytes()[:5] == b"%PDF-"
    bundle = drawings["seed_vjp"]._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml") and "text/plain" in bundle
    assert "<svg" in drawings["seed_vjp"]._repr_svg_()


@needs_dot
def test_write_steps(drawings, tmp_path):
    d = drawings["mlp_grad"]
    paths = d.write_steps(tmp_path / "steps")
    assert len(paths) == len(d.graph.steps) == 11
    assert [os.path.basename(p) for p in paths] == [f"{i:03d}.svg" for i in range(11)]
    ET.parse(paths[-1])


def test_dot_and_text_formats_need_no_binary(drawings, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    d = drawings["seed_vjp"]
    d.render(tmp_path / "a.dot")
    d.render(tmp_path / "a.txt")
    d.render(tmp_path / "b.out", "text")
    assert (tmp_path / "a.dot").read_text() == d.to_dot()
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.out").read_text() == d.to_text()
    with pytest.raises(ValueError, match="Unknown format"):
        d.render(tmp_path / "a.gif")


@pytest.mark.parametrize("fmt", ["svg", "png", "pdf", "html"])
def test_missing_dot_writes_the_dot_text_and_says_what_to_install(drawings, tmp_path,
                                                                     monkeypatch, fmt):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("dot") is None
    d = drawings["seed_vjp"]
    with pytest.raises(GraphvizMissing) as info:
        d.render(tmp_path / f"out.{fmt}")
    assert str(info.value) == INSTALL and "\n" not in str(info.value)
    assert (tmp_path / "out.dot").read_text() == d.to_dot()
    assert not (tmp_path / f"out.{fmt}").exists()


def test_missing_dot_in_notebooks_and_steps(drawings, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    d = drawings["seed_vjp"]
    assert d._repr_svg_() is None
    assert d._repr_mimebundle_() == {"text/plain": d.to_text()}
    with pytest.raises(GraphvizMissing):
        d.write_steps(tmp_path / "steps")
    assert sorted(os.listdir(tmp_path / "steps")) == ["000.dot", "001.dot", "002.dot"]


def test_module_docstring_example():
    result = doctest.testmod(viz, verbose=False)
    assert result.attempted > 0 and result.failed == 0
