"""Drawing mx.compile (issue 18): the traced, simplified and fused graphs side by side.

The node counts of the drawing are compared with what ``mx.compile`` itself
builds in each of its modes (``no_simplify``, ``no_fuse``, ``enabled``): the
lazy graph it returns is counted independently of viz. A Compiled box must
hold exactly the primitives of the Compiled node compile made, in order, and
its generated source must be in the text and in the HTML page.
"""

import html
import importlib
import re
import shutil
import warnings

import pytest

import mlxref.core as mx
from mlxref import viz
from mlxref.cli import main
from mlxref.core.primitives.compiled import Compiled, CompiledProgram
from mlxref.viz.compiled import named_source
from mlxref.viz.record import collect, op_name, preview

compile_module = importlib.import_module("mlxref.core.transforms.compile")
HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed")


def f(x, y):
    """Repeated work for simplify (exp(-x) twice, the 2.0s), a reduction that
    ends one chain, and elementwise work on either side of it for fuse."""
    a = mx.exp(-x) * 2.0 + mx.sin(y) * mx.exp(-x)
    return mx.log(mx.sum(a * 2.0) + mx.cos(y))


X = mx.array([0.5, -1.0, 2.0])
Y = mx.array([1.0, 0.25, -3.0])


def _nodes(outputs):
    """The primitives of the unevaluated graph behind ``outputs``, each node
    once (siblings share their primitive), a compiled function's program's
    own in its place."""
    found = {id(a.primitive()): a.primitive() for a in collect(outputs, set())
             if a.has_primitive()}
    return [n for p in found.values()
            for n in (p.nodes if isinstance(p, CompiledProgram) else [p])]


@pytest.fixture(scope="module")
def compiled_by_mode():
    """The nodes mx.compile builds in each mode (a new compiled function each time)."""
    found = {}
    try:
        for mode in ("no_simplify", "no_fuse", "enabled"):
            compile_module.set_compile_mode(mode)
            found[mode] = _nodes([mx.compile(f)(X, Y)])
    finally:
        compile_module.set_compile_mode("enabled")
    return found


@pytest.fixture(scope="module")
def drawing():
    return viz.trace(f, [X, Y], transform="compile")


def _stage(graph, name):
    return [n for n in graph.nodes if n.part == name]


def _operations(nodes):
    """(op nodes outside Compiled boxes, {anchor: the op names in its box, in order})."""
    plain = [n for n in nodes if n.kind == "op"
             and (n.cluster is None or n.cluster.kind != "fused")]
    boxes = {}
    for n in nodes:
        if n.cluster is not None and n.cluster.kind == "fused":
            boxes.setdefault(n.cluster.anchor, []).append(n.op)
    return plain, boxes


def test_each_stage_has_the_nodes_compile_builds(drawing, compiled_by_mode):
    g = drawing.graph
    traced = _stage(g, "traced")
    # traced: every primitive of the uncompiled graph (no_simplify keeps them all)
    assert len([n for n in traced if n.kind == "op"]) == len(_nodes([f(X, Y)]))
    assert len([n for n in traced if n.kind == "op"]) == len(compiled_by_mode["no_simplify"])
    simplified = [n for n in _stage(g, "simplified") if n.kind == "op"]
    assert len(simplified) == len(compiled_by_mode["no_fuse"]) < len(_nodes([f(X, Y)]))
    assert sorted(n.op for n in simplified) == sorted(
        op_name(p) for p in compiled_by_mode["no_fuse"])
    plain, boxes = _operations(_stage(g, "fused"))
    fused = compiled_by_mode["enabled"]
    assert len(plain) + len(boxes) == len(fused)
    assert sorted(n.op for n in plain) == sorted(
        op_name(p) for p in fused if not isinstance(p, Compiled))
    # and the boxes' labels say so, with the counts
    labels = {c.anchor: c.label for c in g.clusters if c.kind == "stage"}
    assert labels["traced"].endswith(f": {len(_nodes([f(X, Y)]))} nodes")
    assert labels["simplified"].startswith(
        f"simplified (compile_simplify): {len(simplified)} nodes; gone: ")
    assert labels["fused"].startswith(f"fused (compile_fuse): {len(fused)} nodes, "
                                      f"{len(boxes)} of them Compiled")


def test_each_compiled_box_holds_exactly_its_fused_primitives(drawing, compiled_by_mode):
    _, boxes = _operations(_stage(drawing.graph, "fused"))
    made = [p for p in compiled_by_mode["enabled"] if isinstance(p, Compiled)]
    assert len(made) == len(boxes) == 2  # the chains before and after the sum
    expected = sorted([op_name(s) for s, _, _ in p.tape] for p in made)
    assert sorted(boxes.values()) == expected
    # The steps keep their traced names, so a node can be followed box to box.
    traced = {n.label for n in _stage(drawing.graph, "traced")}
    fused = [n for n in _stage(drawing.graph, "fused") if n.cluster.kind == "fused"]
    assert fused and all(n.label in traced for n in fused)
    # Inside a box, a step reads its box's other steps or the box's inputs only.
    for e in drawing.graph.edges:
        if e.dst in fused and e.src.cluster is not e.dst.cluster:
            assert e.src.cluster.kind == "stage", (e.src.name, e.dst.name)


def test_text_prints_the_listings_then_the_generated_source(drawing, compiled_by_mode):
    text = drawing.to_text()
    headings = [line for line in text.splitlines() if line.startswith("# ")]
    assert [h.split(" ")[1] for h in headings[1:4]] == ["traced", "simplified", "fused"]
    for p in compiled_by_mode["enabled"]:
        if isinstance(p, Compiled):
            assert named_source(p) in text
            assert f"{p.name}, its generated source" in text
    assert text.index("def kernel(") > text.index("\noutputs: ")
    # The output is what the compiled function computes, equal to the plain function's.
    plain = f(X, Y)
    mx.eval(plain)
    line = next(line for line in text.splitlines() if line.startswith("compiled output"))
    assert line.split(": ", 1)[1] == preview(plain)


@needs_dot
def test_html_shows_the_generated_source(drawing, tmp_path, compiled_by_mode):
    page = drawing.render(tmp_path / "compile.html")
    content = page.read_text()
    for p in compiled_by_mode["enabled"]:
        if isinstance(p, Compiled):
            assert f"<pre><code>{html.escape(named_source(p))}</code></pre>" in content
    assert "<svg" in content


def test_the_source_shown_names_each_function_after_its_op(compiled_by_mode):
    """The loop calls f<j> and s<j>; the drawing shows them as sin_f4 and exp_s1,
    each named after the primitive at step j of the Compiled's tape, and is
    otherwise the source itself."""
    compiled = [p for p in compiled_by_mode["enabled"] if isinstance(p, Compiled)]
    assert compiled
    renamed = 0
    for p in compiled:
        shown = named_source(p)
        calls = re.findall(r"\b([a-z0-9_]+)_([fs])(\d+)\(", shown)
        for op, kind, j in calls:
            assert op == p.tape[int(j)][0].name.lower(), (op, kind, j)
        assert not re.search(r"(?<![a-z0-9_])[fs]\d+\(", shown)  # no bare f4( or s1( is left
        assert re.sub(r"\b[a-z0-9]+_([fs]\d+)\(", r"\1(", shown) == p.source
        renamed += len(calls)
    # f(x, y) fuses an exp (a list step) and a sin (a scalar rule) into its first chain
    assert renamed >= 2 and "exp_s1(" in named_source(compiled[0])


def test_collapse_folds_each_compiled_box_into_one_node():
    d = viz.trace(f, [X, Y], transform="compile", collapse=True)
    fused = _stage(d.graph, "fused")
    folds = [n for n in fused if n.kind == "fold"]
    assert [n.label for n in folds] == ["compiled_1", "compiled_2"]
    assert not any(c.kind == "fused" for c in d.graph.clusters)
    assert all(n.op == "compiled" for n in folds)
    assert [n.output for n in folds] == [False, True]  # the log at the end is the output
    fused_text = d.to_text().split("# fused (compile_fuse)")[1]
    # the fold comes after the constant it reads: each name bound before it is used
    assert fused_text.index("const_") < fused_text.index("compiled_1 = compiled")
    assert "compiled_2 = compiled" in fused_text


def test_max_nodes_budget_shrinks_the_drawing_for_dot(drawing):
    with viz.limits(max_nodes=12), warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        small = drawing.for_dot()
    assert any(issubclass(w.category, viz.LimitWarning) for w in said)
    assert sum(n.kind != "summary" for n in small.graph.nodes) <= 12
    assert len(drawing.graph.nodes) > 12  # the drawing itself is whole


def test_max_work_budget_refuses_a_large_evaluation():
    big = mx.ones((400, 400))
    with viz.limits(max_work=1000), pytest.raises(viz.LimitExceeded, match="max_work"):
        viz.trace(lambda a: mx.exp(a) + 1, [big], transform="compile")


# --- the command line ---------------------------------------------------------------


def run(capsys, *argv):
    status = main(["graph", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


EXPR = ["exp(-x) * 2 + sin(x) * exp(-x)", "--at", "x=[0.5, -1.0]", "--transform", "compile"]


def test_cli_text_and_dot_are_byte_identical_across_runs(capsys):
    for output_format in ("text", "dot"):
        first = run(capsys, *EXPR, "--format", output_format)
        assert first[0] == 0 and first[2] == "", first
        assert run(capsys, *EXPR, "--format", output_format) == first
    _, out, _ = run(capsys, *EXPR)
    x = mx.array([0.5, -1.0])
    count = len(_nodes([mx.exp(-x) * 2 + mx.sin(x) * mx.exp(-x)]))
    assert out.startswith(f"# compile of f(x)\n# traced (compile_dfs): {count} nodes\n")
    assert "def kernel(n, in0, in1):" in out  # x and the constant 2


@needs_dot
def test_cli_files_are_byte_identical_across_runs(capsys, tmp_path):
    for suffix in ("svg", "html"):
        paths = [tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"]
        for p in paths:
            assert run(capsys, *EXPR, "-o", str(p)) == (0, "", "")
        assert paths[0].read_bytes() == paths[1].read_bytes()
    assert b"cluster_fused_compiled_1" in (tmp_path / "a.svg").read_bytes()


@pytest.mark.parametrize("argv, fragment", [
    (["sin(x)", "--at", "x=1", "--transform", "compile", "--wrt", "x"],
     "--wrt goes with --transform"),
    (["sin(x)", "--at", "x=1", "--transform", "compile", "--in-axes", "0"],
     "--in-axes goes with --transform vmap, not compile"),
    (["sin(x)", "--at", "x=1", "--transform", "compile", "--format", "svg"],
     "--format svg needs an output file"),
    (["sin(x) @ x", "--at", "x=[1.0, 2.0, 3.0]", "--at", "y=1", "--transform", "compile"],
     "there is no input 'y'"),
    (["x @ x", "--shape", "x=2,3", "--transform", "compile"], "[matmul]"),
])
def test_cli_errors_are_one_line(capsys, argv, fragment):
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith("mlxref: error: ") and err.count("\n") == 1, err
    assert fragment in err and "Traceback" not in err


def test_cli_eval_inside_compile_is_mlx_error(capsys, tmp_path):
    source = tmp_path / "evals.py"
    source.write_text("import mlxref.core as mx\n\ndef f(x):\n    return x * x.item()\n")
    status, out, err = run(capsys, f"{source}:f", "--at", "x=2.0", "--transform", "compile")
    assert (status, out) == (2, "")
    assert err == ("mlxref: error: [eval] Attempting to eval an array during function "
                   "transformations like compile or vmap is not allowed.\n")
