"""How drawings look (issue 16): walk edges, colours, values, layout, to_graphviz().

Each test reproduces one defect the issue reported. DOT is parsed statement
by statement (``statements``); values are compared with the array's own
``tolist()`` and with how real MLX prints a big array.
"""

import ast
import pathlib
import re
import shutil
import subprocess

import pytest

import mlxref.core as mx
from mlxref import cli, viz
from mlxref.viz import dot as viz_dot
from mlxref.viz import render
from mlxref.viz.figures import FIGURES

HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed")
README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
BACKWARD_FIGURES = ("mlp_grad", "custom_function", "conv_vjp", "checkpoint")


@pytest.fixture(scope="module")
def figures():
    return {name: make() for name, make in FIGURES.items()}


def statements(dot_text):
    """{"nodes": {name: attrs}, "edges": [(tail, head, attrs)]} of a DOT text."""
    nodes, edges = {}, []
    for line in dot_text.splitlines():
        m = re.match(r'^\t+("[^"]*"|\S+) -> ("[^"]*"|\S+)(?: \[(.*)\])?$', line)
        if m:
            edges.append((m[1].strip('"'), m[2].strip('"'), m[3] or ""))
            continue
        m = re.match(r'^\t+("[^"]*"|\S+) \[(.*)\]$', line)
        if m and m[1] not in ("graph", "node", "edge"):
            nodes[m[1].strip('"')] = m[2]
    return {"nodes": nodes, "edges": edges}


def label_rows(attrs):
    """The text rows of an HTML-like label, tags removed."""
    label = re.search(r"label=<(.*)>", attrs)[1]
    return [re.sub(r"<[^>]+>", "", row).replace("&gt;", ">").replace("&lt;", "<")
            for row in re.findall(r"<TD[^>]*>((?:(?!<TD|</TD>).)*)</TD>", label)]


# --- 1. the walk: its edges, colours and the backward nodes' steps -------------------


@pytest.mark.parametrize("name, walk, back", [("seed_vjp", "vjp", True),
                                              ("mlp_grad", "vjp", True),
                                              ("seed_jvp", "jvp", False),
                                              ("vmap_grad", "vmap", False)])
def test_walk_edges_are_in_the_walk_colour_and_direction(figures, name, walk, back):
    """Before: only the label text was coloured; the edges stayed grey and pointed forward."""
    colour = viz_dot.NOTE_COLOURS[walk]
    g = figures[name].graph
    walked = {(e.src.name, e.dst.name) for e in g.edges if e.notes}
    assert walked
    for tail, head, attrs in statements(figures[name].to_dot())["edges"]:
        if (tail, head) in walked:
            assert f'color="{colour}"' in attrs, (tail, head, attrs)
            assert ("dir=back" in attrs) == back, (tail, head, attrs)
        else:
            assert f'color="{colour}"' not in attrs and "dir=back" not in attrs


def test_a_frame_colours_only_the_edges_walked_so_far(figures):
    frames = figures["seed_vjp"].frames()
    first = statements(frames[0])["edges"]
    coloured = [(t, h) for t, h, a in first if "dir=back" in a]
    assert coloured == [("sin_1", "mul_3"), ("exp_2", "mul_3")]  # step 1 visits mul_3
    assert all("dir=back" in a for t, h, a in statements(frames[-1])["edges"])


@pytest.mark.parametrize("name", BACKWARD_FIGURES)
def test_backward_nodes_say_which_vjp_step_made_them(figures, name):
    """Before: backward nodes did not say which step created them."""
    d = figures[name]
    g = d.graph
    nodes = statements(d.to_dot())["nodes"]
    text = re.sub(r"\n#\s*", " ", d.to_text())  # a matrix's later rows joined to its line
    backward = [n for n in g.nodes if n.part == "backward"]
    assert backward
    for n in backward:
        made = re.search(r"made at vjp step (\d+)|the seed cotangent|made before the walk",
                         " ".join(label_rows(nodes[n.name])))
        assert made, n.name
        assert re.search(rf"^{n.name} = .*{re.escape(made[0])}", text, re.M)
    # A gradient exists by the last step that sends its input a cotangent.
    last_sent = {}
    for step in g.steps:
        for edge, _ in step.contributions:
            last_sent[edge.src.name] = step.number
    gradients = [n for n in backward if n.gradient_of is not None]
    assert gradients
    for n in gradients:
        k = int(n.made.rsplit(" ", 1)[1]) if n.made[-1].isdigit() else 1
        assert 1 <= k <= last_sent.get(n.gradient_of.name, len(g.steps)), n.name
    # and the frames agree: a node appears in the frame of the step that made it
    frames = d.frames()
    for n in backward:
        k = int(n.made.rsplit(" ", 1)[1]) if n.made[-1].isdigit() else 1
        shown = [not re.search(r"style=invis", statements(f)["nodes"][n.name]) for f in frames]
        assert shown == [i >= k for i in range(1, len(frames) + 1)], n.name


def _colours(dot_text):
    return set(re.findall(r"#[0-9a-fA-F]{6}", dot_text)) - {"#ffffff"}


def test_every_colour_means_one_thing(figures):
    """Before: the vmap walk was green, like the inputs (and the cut red, like vjp)."""
    walk = set(viz_dot.NOTE_COLOURS.values())
    looks = {c for pair in viz_dot.LOOKS.values() for c in pair}
    boxes = {c for look in viz_dot.CLUSTER_LOOKS.values() for c in look[:3] if c}
    others = {c for k, c in viz_dot.PALETTE.items() if k not in viz_dot.NOTE_COLOURS}
    assert len(walk) == 3 and not walk & (looks | boxes | others)
    assert not set(dict(viz_dot.LOOKS).get("input")) & set(viz_dot.LOOKS["output"])
    known = walk | looks | boxes | others | {"#7e57c2"}  # the cross edge's index label
    for name, d in figures.items():
        for text in [d.to_dot()] + d.frames():
            assert _colours(text) <= known, (name, _colours(text) - known)
        # a walk's colour shows up only in drawings of that walk
        used = _colours(d.to_dot()) & walk
        expected = {viz_dot.NOTE_COLOURS[viz_dot.graph_walk(d.graph)]} if d.graph.steps else set()
        assert used == expected, name


def _legend(d):
    title = re.search(r"graph \[label=<(.*?)> labelloc", d.to_dot())[1]
    rows = [re.sub(r"<[^>]+>", "", r) for r in title.split("<BR/>")[1:]]
    return [item for row in rows for item in row.split(" · ")]


def test_the_legend_says_the_same_for_every_transform_and_in_the_readme(figures):
    phrases = set(viz_dot.LEGEND.values())
    readme = " ".join(README.read_text().split())
    seen = set()
    for name, d in figures.items():
        items = _legend(d)
        assert items and set(items) <= phrases, (name, set(items) - phrases)
        colours = [i.split(":")[0] for i in items]
        assert len(colours) == len(set(colours)), name  # no colour named twice
        seen |= set(items)
    assert any("teal" in i for i in seen)
    for phrase in phrases:
        assert phrase in readme, f"README.md does not give the legend item {phrase!r}"


# --- 2. values ---------------------------------------------------------------------


def _literal(rows):
    return ast.literal_eval(" ".join(rows))


def test_a_small_matrix_is_shown_whole_row_by_row():
    """Before: values were cut to 3 elements and flattened."""
    w = mx.array([[0.5, -1.25], [2.0, 3.5], [-0.75, 4.0]])
    d = viz.trace(lambda w: mx.sum(w * w), [w], transform="grad")
    rows = label_rows(statements(d.to_dot())["nodes"]["w"])
    start = next(i for i, r in enumerate(rows) if r.startswith("[["))
    value_rows = rows[start:start + 3]
    assert [r.strip().startswith("[") for r in value_rows] == [True] * 3  # one row each
    assert _literal(value_rows) == w.tolist()
    # the text listing: the later rows on comment lines, under the first
    text = d.to_text()
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("w = input"))
    first = lines[i].split(": ", 1)[1]
    rest = [line[1:] for line in lines[i + 1:i + 3]]
    assert all(line.startswith("#") for line in lines[i + 1:i + 3])
    assert lines[i].index("[[") + 1 == rest[0].index("[") + 1  # lined up
    assert _literal([first] + rest) == w.tolist()
    gradient = text[text.index("gradient w: "):].split(": ", 1)[1].splitlines()[:3]
    assert _literal(gradient) == (2 * w).tolist()


def test_values_option_and_the_summary_as_mlx_prints_it():
    mlx = pytest.importorskip("mlx.core")
    big = mx.arange(2000.0).reshape(40, 50)
    mx.eval(big)
    d = viz.draw(big, names={"a": big})
    ours = " ".join(label_rows(statements(d.to_dot())["nodes"]["a"])[3:])
    printed = str(mlx.arange(2000.0).reshape(40, 50))
    theirs = printed[len("array("):printed.rindex(", dtype")]
    assert " ".join(ours.split()) == " ".join(theirs.split())
    # values=N: up to N elements whole, beyond that the summary
    v = mx.arange(13.0)
    mx.eval(v)
    whole = viz.draw(v, names={"v": v}, values=13).to_text()
    assert "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]" in whole
    cut = viz.draw(v, names={"v": v}, values=12).to_text()
    assert "[0, 1, 2, ..., 10, 11, 12]" in cut
    assert "[0, ..., 12]" in viz.draw(v, names={"v": v}, values=2).to_text()
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match=r"\[viz.draw\] values must be"):
            viz.draw(v, values=bad)


def test_walk_values_are_whole_in_the_steps():
    x = mx.array([[1.0, 2.0], [3.0, 4.0]])
    d = viz.trace(lambda x: mx.sum(mx.sin(x)), [x], transform="vjp")
    text = d.to_text()
    step = next(line for line in text.splitlines() if re.match(r" +\d+\. sin_", line))
    sent = step.split("+= ", 1)[1]
    rows = ast.literal_eval(sent)
    assert [len(r) for r in rows] == [2, 2]  # rows, not a flat list
    assert sum(rows, []) == pytest.approx(sum(mx.cos(x).tolist(), []), rel=1e-4)


# --- 3. layout -----------------------------------------------------------------------


def _positions(dot_text):
    out = subprocess.run(["dot", "-Tplain"], input=dot_text.encode("utf-8"),
                         capture_output=True, check=True).stdout.decode("utf-8")
    xy = {}
    for line in out.splitlines():
        p = line.split()
        if p[0] == "node":
            xy[p[1].strip('"')] = (float(p[2]), float(p[3]))
    return xy


@needs_dot
@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_the_forward_graph_comes_before_the_backward_graph(rankdir):
    """Before: the README's MLP figure put the backward graph on the left."""
    for name in BACKWARD_FIGURES:
        d = FIGURES[name]()
        d.graph.layout = viz_dot.check_layout(rankdir)
        xy = _positions(d.to_dot())
        forward = [xy[n.name] for n in d.graph.nodes if n.part == "forward"]
        backward = [xy[n.name] for n in d.graph.nodes if n.part == "backward"]
        if rankdir == "TB":  # left of it
            assert max(x for x, _ in forward) < min(x for x, _ in backward), name
        else:  # above it (plain's y grows upwards)
            assert min(y for _, y in forward) > max(y for _, y in backward), name


def test_rankdir_size_and_dpi_options():
    f = FIGURES["seed_vjp"]
    default = re.search(r"graph \[.*\]", f().to_dot())[0]
    assert "rankdir=TB" in default and " size=" not in default and "dpi=" not in default
    x = mx.array(0.5)
    d = viz.trace(lambda x: mx.sin(x) * mx.exp(x), [x], transform="vjp", rankdir="LR",
                  size=(4, 3.5), dpi=72)
    attrs = re.search(r"graph \[.*\]", d.to_dot())[0]
    assert "rankdir=LR" in attrs and 'size="4,3.5"' in attrs and "dpi=72" in attrs
    assert 'size="5,5"' in viz.draw(mx.sin(x), size=5).to_dot()
    for option, bad in [("rankdir", "BT"), ("size", (0, 3)), ("size", (1, 2, 3)), ("dpi", -5),
                        ("dpi", "high")]:
        with pytest.raises(ValueError, match=rf"\[viz.trace\] {option} must"):
            viz.trace(lambda x: mx.sin(x), [x], **{option: bad})


@needs_dot
def test_size_and_dpi_reach_the_picture(tmp_path):
    x = mx.array(0.5)
    d = viz.trace(lambda x: mx.sin(x) * mx.exp(x), [x], transform="vjp", size=(1, 1), dpi=50)
    svg = pathlib.Path(d.render(tmp_path / "a.svg")).read_text()
    width = float(re.search(r'<svg width="([\d.]+)pt"', svg)[1])
    assert width <= 72 * 1 + 1  # scaled down to fit one inch


def test_cli_passes_the_look_options(capsys):
    code = cli.main(["graph", "x @ y", "--at", "x=[[1.0, 2.0], [3.0, 4.0]]",
                     "--at", "y=[[1.0], [2.0]]", "--values", "2", "--rankdir", "LR",
                     "--size", "4,5", "--dpi", "72", "--format", "dot"])
    out = capsys.readouterr().out
    assert code == 0
    graph = re.search(r"graph \[.*\]", out)[0]
    assert "rankdir=LR" in graph and 'size="4,5"' in graph and "dpi=72" in graph
    code = cli.main(["graph", "x * 2", "--at", "x=[1.0, 2.0, 3.0, 4.0, 5.0]", "--values", "2"])
    assert code == 0 and "[1, ..., 5]" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--values", "0"], "--values must be a whole number above 0, not '0'"),
    (["--values", "many"], "--values must be a whole number above 0, not 'many'"),
    (["--rankdir", "BT"], "--rankdir must be TB or LR, not 'BT'"),
    (["--size", "4"], "--size must be W,H in inches, both above 0, not '4'"),
    (["--size", "4,-1"], "--size must be W,H in inches, both above 0, not '4,-1'"),
    (["--dpi", "0"], "--dpi must be a number above 0, not '0'"),
])
def test_cli_refuses_a_bad_look_option_in_one_line(capsys, args, message):
    code = cli.main(["graph", "sin(x)", "--at", "x=0.5"] + args)
    err = capsys.readouterr().err
    assert code == 2 and err == f"mlxref: error: {message}\n"


# --- 4. graphviz, the Python package ---------------------------------------------------


def test_to_graphviz_is_the_drawing_and_can_be_restyled(figures):
    graphviz = pytest.importorskip("graphviz")
    d = figures["mlp_grad"]
    g = d.to_graphviz()
    assert isinstance(g, graphviz.Digraph)
    assert g.source == d.to_dot()
    g.attr(bgcolor="lightyellow")
    g.node("w1", color="blue")
    assert "bgcolor=lightyellow" in g.source and "bgcolor" not in d.to_dot()
    assert d.to_graphviz().source == d.to_dot()  # each call: a new Digraph


def test_a_colon_in_a_name_is_not_a_port():
    d = viz.trace(lambda x: mx.sin(x), [mx.array(1.0)], transform="vjp", names=["a:b"])
    edges = statements(d.to_dot())["edges"]
    assert [(t, h) for t, h, _ in edges] == [("a:b", "sin_1")]
    assert '"a:b" -> sin_1 [label=<0<BR/>' in d.to_dot()


def test_rendering_and_notebooks_go_through_to_graphviz(monkeypatch, tmp_path):
    x = mx.array(0.5)
    d = viz.trace(lambda x: mx.sin(x), [x], transform="vjp")
    seen = []
    monkeypatch.setattr(render, "dot_binary", lambda: "/bin/dot")
    monkeypatch.setattr(render, "run_dot", lambda text, fmt: seen.append(text) or b"<svg/>")
    styled = d.to_graphviz()
    styled.attr(bgcolor="grey")
    monkeypatch.setattr(type(d), "to_graphviz", lambda self: styled)
    d.render(tmp_path / "a.svg")
    d._repr_svg_()
    assert seen == [styled.source, styled.source]
