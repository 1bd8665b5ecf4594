"""The manual (mlxref/manual/): it builds, covers every op and primitive, stays offline.

One Sphinx build per session (``manual`` fixture): the manual of a few
primitives and the ops that build them, with warnings as errors, and every
other page (transforms, nn, optimizers, utils, testing, the CLI, the
differences from MLX). ``make docs`` builds the same pages for every
primitive; what that costs is in the README ("The manual"). Coverage is
checked on the whole code: every op real MLX has and mlxref implements has
an entry, every primitive has a check case to show its rules from, and a
primitive added without one fails the coverage check. Every op is drawn
(the vjp walk of its sample call, with the gradients real MLX computes,
known differences aside) or has a stated reason real MLX confirms; the
factorizations' formulas, on named outputs, are checked against an
independent SymPy product and against the rule on numbers. The session's build
renders one tutorial chapter (04) as a page; every chapter runs as
a notebook in its own kernel, a cell per example, each example's output
checked as doctest checks it
(that run is the chapter's doctest: tests/test_tutorials.py leaves the
numbered chapters to it). Headless Chromium shows an op page's formulas
typeset as MathML (subscripts lowered) and its drawing, a transform page; at a
reader's 1280x800, a family page's op table and "On this page" contents beside
the site's tree, a chapter's page with the tree, its code, each output under its
code, and its figure; and the search page finds chapter 04 by a word of its
prose. ``make
test`` installs Chromium where it can (the Makefile's ``try-chromium``
target); without one those tests skip with one line, except under CI
(.ci/run sets MLXREF_NEED_CHROMIUM), where they fail (tests/support.py's
``chromium_or_skip``).
"""

import base64
import fcntl
import gc
import html
import importlib
import os
import inspect
import pathlib
import re
import shutil
import warnings

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

import mlxref.core as mx  # noqa: E402
from mlxref import manual  # noqa: E402
from mlxref.core.primitives.base import Primitive  # noqa: E402
from mlxref.core.primitives.elementwise import Sin  # noqa: E402
from mlxref.core.primitives.linalg import Matmul  # noqa: E402
from mlxref.manual import catalogue, links, pages  # noqa: E402
from support import chromium_or_skip  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOME = [Sin, Matmul]
JVP = ROOT / "tutorials" / "04-jvp.md"  # the one chapter the session's build renders


@pytest.fixture(scope="session")
def manual_build(tmp_path_factory):
    """Built once per run: pytest-xdist's workers share one build, under a lock."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "manual"
    with open(shared / "manual.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        index = out / "docs" / "index.html"
        if not index.is_file():
            index = manual.build(out, notebooks=[JVP], primitives=SOME)
    return out, index


def _html(out):  # the pages: not the Chromium tests' probes, which come and go, nor the
    # theme's templates that Sphinx copies into _static
    return sorted(p for p in (out / "docs").rglob("*.html")
                  if not p.name.startswith("_probe_") and "_static" not in p.parts)


def test_the_manual_builds_with_warnings_as_errors(manual_build):
    out, index = manual_build
    assert index.is_file()
    for page in ("families/elementwise", "families/linalg", "transforms/vjp", "api/nn",
                 "cli", "differs"):
        assert (out / "docs" / f"{page}.html").is_file(), page


def test_a_warning_fails_the_build(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser"]\n')
    (src / "index.md").write_text("# Title\n\n[a link to nothing](#no-such-label)\n")
    with pytest.raises(RuntimeError, match="sphinx-build failed"):
        manual.sphinx(src, tmp_path / "out")


def test_an_op_page_shows_rules_as_mathml_with_links_and_a_drawing(manual_build):
    out, _ = manual_build
    page = (out / "docs" / "families" / "elementwise.html").read_text(encoding="utf-8")
    assert 'id="op-sin"' in page and 'id="prim-sin"' in page
    assert "mlx.core.sin.html" in page
    # sin's rules, as the engine computed them on symbols: cos(a0) in the vjp and jvp
    rules = page[page.index('id="prim-sin"'):]
    maths = re.findall(r"<math.*?</math>", rules, re.S)
    assert len(maths) >= 4  # forward, vjp, jvp, vmap
    assert "<mi>vjp</mi>" in maths[1] and "<mi>cos</mi>" in maths[1]
    assert "<mi>jvp</mi>" in maths[2] and "<mi>cos</mi>" in maths[2]
    # written once, for one element i, under a reader's names: u_i the cotangent, da_i the
    # tangent, a_i^(n) the element of example n of a batch (tests/manual/test_rules_forms.py)
    assert "<msub><mi>u</mi><mi>i</mi></msub>" in maths[1] and "<mi>ua</mi>" not in maths[1]
    assert "<msub><mi>da</mi><mi>i</mi></msub>" in maths[2]
    assert "<msubsup><mi>a</mi><mi>i</mi><mi>(n)</mi></msubsup>" in maths[3]
    # the drawing of sin's vjp walk is an SVG file in the build (drawn by Graphviz's dot);
    # the primitive Sin points to it rather than drawing its own
    if shutil.which("dot"):
        (img,) = re.findall(r'<img[^>]+src="([^"]+op-sin\.svg)"', page)
        assert (out / "docs" / "families" / img).resolve().is_file()
        assert 'href="#op-sin"' in rules
    # every source link lands on a line that exists, on the rule's first line
    for href in set(re.findall(r'class="source" href="([^"]+)"', page)):
        path, line = href.split("#L")
        source = (out / "docs" / "families" / path).resolve().read_text(encoding="utf-8")
        assert f'id="L{line}"' in source, href
    start = next(s for s in links.rule_sources(Sin) if s[0] == "derivative")[3]
    assert f"elementwise.html#L{start}" in rules
    src_line = (ROOT / "mlxref/core/primitives/elementwise.py").read_text().splitlines()[start - 1]
    assert "def derivative" in src_line
    # MLX's primitives.cpp at the commit of the reference notes
    assert f"blob/{links.MLX_COMMIT}/mlx/primitives.cpp" in rules


# --- each op's vjp walk, and the factorizations' formulas ---------------------------


def outputs_of(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _inexact(dtype):
    return "float" in str(dtype) or "complex" in str(dtype)


# Ops whose drawn gradients differ from MLX's, and why.
MLX_DIFFERS = {
    "divmod": "the remainder has its derivative (README: divmod)",
    "full": "MLX's Full::vjp multiplies by the fill value (primitives.creation.Full)",
    "full_like": "the same Full (README: full_like's gradient reaches the fill value)",
}
# Ops MLX has no vjp for and mlxref has (README: the linear algebra, SegmentedMM's vjp;
# MLX's solve fails on the gather of LU's row order, where mlxref stops the gradient).
MLX_HAS_NO_VJP = {
    "linalg.cholesky_inv", "linalg.eigh", "linalg.eigvalsh", "linalg.inv", "linalg.lu",
    "linalg.lu_factor", "linalg.pinv", "linalg.qr", "linalg.solve", "linalg.solve_triangular",
    "linalg.svd", "linalg.tri_inv", "segmented_mm"}


def _vjp(m, sample, outputs):
    """The vjp of the sample call in ``m`` with the cotangents the drawings use: 1, 2, 3..."""
    grads = m.vjp(lambda *xs: sample.call(m, *xs), sample.inputs(m),
                  catalogue.counting(m, outputs))[1]
    m.eval(grads)
    return grads


def test_every_op_is_drawn_or_says_why_and_mlx_agrees_with_the_reason():
    mlx = pytest.importorskip("mlx.core")
    np = pytest.importorskip("numpy")
    drawn, reasons, confirmed, no_vjp_in_mlx, differ = set(), {}, set(), set(), set()
    says_own_rule = set()  # ops whose entry says the walk runs a vjp MLX does not have
    for op in catalogue.public_ops():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            drawing, reason = pages.op_walk(op)
        assert (drawing is None) != (reason is None), op.name
        if drawing is not None:
            drawn.add(op.name)
            if pages.own_rules(drawing):
                says_own_rule.add(op.name)
            assert len(drawing.graph.nodes) <= pages.LOOK["max_nodes"] + 1, op.name
        else:
            reasons[op.name] = reason
        if op.name in catalogue.NOT_DRAWN:
            continue
        sample = catalogue.sample(op)
        try:
            catalogue.resolve(mlx, op.name)
        except AttributeError:
            continue  # mlxref's own name for one of MLX's (dynamic_slice)
        # real MLX takes the same call and computes the same shapes and dtypes
        ours_out = outputs_of(sample.call(mx, *sample.inputs(mx)))
        their_out = outputs_of(sample.call(mlx, *sample.inputs(mlx)))
        assert [tuple(o.shape) for o in ours_out] == [tuple(o.shape) for o in their_out], op.name
        assert [str(o.dtype).rsplit(".")[-1] for o in ours_out] == [
            str(o.dtype).rsplit(".")[-1] for o in their_out], op.name
        if drawing is not None:
            # the gradients drawn are MLX's, where MLX has a vjp
            grads = _vjp(mx, sample, ours_out)
            try:
                theirs_grads = _vjp(mlx, sample, their_out)
            except ValueError:
                no_vjp_in_mlx.add(op.name)
                continue
            if not all(np.allclose(np.array(g.tolist(), dtype=complex),
                                   np.array(h.tolist(), dtype=complex),
                                   rtol=1e-3, atol=1e-4, equal_nan=True)
                       for g, h in zip(grads, theirs_grads)):
                differ.add(op.name)
            continue
        # ... and says the same about why there is no walk
        if "integer arrays only" in reason:
            assert sample.integers or not sample.shapes
            if sample.integers:
                float_inputs = catalogue.Sample(sample.shapes, sample.call).inputs(mlx)
                with pytest.raises((ValueError, RuntimeError, TypeError)):
                    mlx.eval(sample.call(mlx, *float_inputs))
        elif reason.startswith("returns "):
            assert not any(_inexact(o.dtype) for o in their_out), op.name
        else:
            assert "has no vjp" in reason, (op.name, reason)
            with pytest.raises(ValueError, match="Not implemented"):
                inputs = sample.inputs(mlx)
                mlx.vjp(lambda *xs: sample.call(mlx, *xs), inputs,
                        [mlx.ones_like(o) for o in their_out])
        confirmed.add(op.name)
    # where the drawn gradients are not MLX's, it is a known difference
    assert differ == set(MLX_DIFFERS), differ
    assert no_vjp_in_mlx == MLX_HAS_NO_VJP, no_vjp_in_mlx
    # ... and the manual says so under exactly those drawings (Primitive.mlx_has_vjp)
    assert says_own_rule == MLX_HAS_NO_VJP, says_own_rule
    # the ops left without a drawing are exactly those with a stated reason:
    # NOT_DRAWN's, or one real MLX confirmed above
    without = {op.name for op in catalogue.public_ops()} - drawn
    assert without == set(reasons) == set(catalogue.NOT_DRAWN) | confirmed
    for name in ("sin", "matmul", "sort", "conv2d", "linalg.svd", "logsumexp", "softmax", "std",
                 "linalg.norm", "take", "fast.rope"):
        assert name in drawn, name
    for name in ("argmax", "equal", "zeros", "random.key", "bitwise_and", "linalg.cholesky",
                 "linalg.eig"):
        assert name in reasons, name


def test_an_op_no_call_works_for_fails_by_name():
    op = catalogue.Op("nothing_works", lambda a, b: (_ for _ in ()).throw(ValueError("no")))
    with pytest.raises(catalogue.NoSample, match="op nothing_works"):
        pages.op_walk(op)


def test_the_sample_calls_read_as_a_reader_writes_them():
    ops = {op.name: op for op in catalogue.public_ops()}
    assert catalogue.sample(ops["conv2d"]).text("conv2d") == "mx.conv2d(x, w)"
    assert catalogue.sample(ops["sin"]).text("sin") == "mx.sin(a)"
    assert catalogue.sample(ops["random.uniform"]).text("random.uniform") == (
        "mx.random.uniform(low, high, (2,), key=mx.random.key(7))")


def test_a_check_cases_program_reads_as_written():
    from mlxref.core.primitives.sort import Sort

    cases = pages.rules.cases_by_primitive()
    # the lambda, not the Case(...) line holding it; an op given as the program is its name
    assert pages._case_source(cases[Matmul][0]) == "lambda a, b: a @ b  # matrix . matrix"
    assert pages._case_source(cases[Sin][0], shapes=True) == "mx.sin  # inputs (3,)"
    assert pages._case_source(cases[Sort][1], shapes=True) == (
        "lambda x: mx.sort(offsets(x, [[0.0, 2.0], [1.0, 0.0]]), axis=1)"
        "  # sort of a middle axis, with a tie; inputs (2,)")


def test_op_drawings_are_byte_identical_across_runs(tmp_path):
    if not shutil.which("dot"):
        pytest.skip("no Graphviz here")
    ops = [op for op in catalogue.public_ops() if op.name in ("std", "conv2d")]
    runs = []
    for run in range(2):
        walks = pages.draw_walks(ops, [], tmp_path / f"run{run}" / "walks")
        runs.append({name: (tmp_path / f"run{run}" / w.image).read_bytes()
                     for name, w in walks.items()})
    assert runs[0] == runs[1] and len(runs[0]) == 2
    assert all(len(svg) < 60_000 for svg in runs[0].values())


def test_svd_singular_values_vjp_is_u1_diag_g_v1t_in_the_named_outputs():
    import sympy

    from mlxref.core.primitives.factorizations import SVD
    from mlxref.manual import rules
    from mlxref.symbolic.factorizations import CASES

    case = next(c for c in CASES if c.primitive is SVD and c.note == "singular values only")
    eval_before = SVD.eval
    f = rules.formulas(case)
    assert SVD.eval is eval_before  # the real forward is back
    (label, shape, elements) = f["vjp"][0]
    assert shape == (3, 2)
    # independently: U1 diag(g) V1^T from the same symbols (V's element [j, k] is Vjk)
    U = sympy.Matrix(3, 2, lambda i, k: sympy.Symbol(f"U{i}{k}", real=True))
    V = sympy.Matrix(2, 2, lambda j, k: sympy.Symbol(f"V{j}{k}", real=True))
    g = sympy.diag(*[sympy.Symbol(f"ua{k}", real=True) for k in range(2)])
    expected = U * g * V.T
    assert [sympy.expand(e) for e in elements] == [sympy.expand(e) for e in expected]
    assert [str(e) for e in f["forward"][0][2]] == ["s0", "s1"]


def test_the_named_rules_are_the_rules_that_run_on_numbers():
    """The SVD's full vjp written on named U, s, V, given a matrix's own factors,
    is mlxref's vjp of that matrix."""
    import sympy

    from mlxref.core.primitives.factorizations import SVD
    from mlxref.manual import rules
    from mlxref.symbolic.factorizations import CASES

    case = next(c for c in CASES if c.primitive is SVD and c.shapes == ((2, 2),))
    (_, _, elements) = rules.formulas(case)["vjp"][0]
    a = mx.array([[0.9, 0.3], [0.2, 0.5]], mx.float64)
    u, s, vt = mx.linalg.svd(a)
    cot = mx.array([0.1 * (k + 1) for k in range(10)], mx.float64)
    (numeric,) = mx.vjp(case.build, [a], [cot])[1]
    values = {sympy.Symbol(f"ua{k}", real=True): cot.tolist()[k] for k in range(10)}
    for i in range(2):
        for j in range(2):
            values[sympy.Symbol(f"U{i}{j}", real=True)] = u.tolist()[i][j]
            values[sympy.Symbol(f"V{j}{i}", real=True)] = vt.tolist()[i][j]
        values[sympy.Symbol(f"s{i}", positive=True)] = s.tolist()[i]
    got = [float(e.subs(values)) for e in elements]
    assert got == pytest.approx(numeric.reshape(-1).tolist(), rel=1e-9, abs=1e-12)


def test_every_points_case_shows_formulas_or_says_why():
    from mlxref import symbolic
    from mlxref.manual import rules

    points = [c for c in symbolic.all_cases() if c.points]
    assert {c.primitive.__name__ for c in points} >= {"SVD", "QRF", "Eigh", "Eig"}
    for case in points:
        f = rules.formulas(case)
        if case.primitive not in rules.NAMED:
            assert f is None and "no formula is shown" in pages._formulas(case)
            continue
        assert f is not None and f["forward"][0][1] is not None, case.note
        if case.raises:
            assert f["vjp"][0][1] is None and "Not implemented" in f["vjp"][0][2]
        else:
            assert all(shape is not None for _, shape, _ in f["vjp"] + f["jvp"] + f["vmap"])
    svd = [c for c in points if c.primitive.__name__ == "SVD"]
    entry = pages._prim_entry(svd[0].primitive, svd, None, {}, None)
    assert entry.count("The check case's program") == len(svd) == 3
    assert "named, not computed" in entry and entry.count("<math") == 12  # 4 rules each


def test_every_page_says_what_it_was_built_from(manual_build):
    out, _ = manual_build
    stamp = f"Built from mlxref {mx.__version__}, compared with MLX {links.MLX_VERSION}"
    pages_ = [p for p in _html(out) if p.name not in ("genindex.html", "search.html")
              and "source" not in p.parts]
    assert len(pages_) > 20
    for page in pages_:
        assert stamp in page.read_text(encoding="utf-8"), page


def test_no_page_shows_a_memory_address(manual_build):
    # a default argument's repr (nn.Transformer's activation=relu) would differ every build
    out, _ = manual_build
    assert "activation=relu" in (out / "manual-src" / "api" / "nn.md").read_text(encoding="utf-8")
    for page in _html(out):
        assert not re.search(r" at 0x[0-9a-f]+", page.read_text(encoding="utf-8")), page


def test_the_pages_fetch_nothing_at_view_time(manual_build):
    out, _ = manual_build
    remote = re.compile(r"""<(script|link|img|iframe|source)\b[^>]*\b(src|href)=["']?(https?:)?//""",
                        re.I)
    for page in _html(out):
        text = page.read_text(encoding="utf-8")
        assert not remote.search(text), page
        assert "mathjax" not in text.lower(), page
    for style in (out / "docs" / "_static").rglob("*.css"):
        text = style.read_text(encoding="utf-8")
        assert not re.search(r"(url\(|@import)\s*['\"]?(https?:)?//", text), style
        # the theme's fonts (its icons) and imported sheets are files of the build
        for url in re.findall(r"(?:url\(|@import)\s*['\"]?([^'\")?#;]+)", text):
            if not url.startswith("data:"):
                assert (style.parent / url).is_file(), (style, url)


def test_every_public_op_of_mlx_that_mlxref_has_is_listed():
    mlx = pytest.importorskip("mlx.core")
    listed = {op.name for op in catalogue.public_ops()}
    expected = set()
    for space, mlx_module, ours in [("", mlx, mx)] + [
            (f"{n}.", getattr(mlx, n), getattr(mx, n)) for n in catalogue.NAMESPACES]:
        for name in dir(mlx_module):
            theirs = getattr(mlx_module, name)
            if (name.startswith("_") or type(theirs).__name__ != "nb_func"
                    or not callable(getattr(ours, name, None))):
                continue
            if space or getattr(ours, name).__module__.startswith("mlxref.core.ops"):
                expected.add(space + name)
    assert len(expected) > 200
    assert expected - listed == set()


def test_every_primitive_has_a_check_case_and_an_entry(manual_build):
    prims = catalogue.primitives()
    defined = set()  # every concrete Primitive class in mlxref/core/primitives/*.py
    for path in [*(ROOT / "mlxref" / "core" / "primitives").glob("*.py"),
                 ROOT / "mlxref" / "core" / "distributed" / "primitives.py"]:
        module = importlib.import_module(f"mlxref.core.{path.parent.name}.{path.stem}")
        defined |= {v for v in vars(module).values() if inspect.isclass(v)
                    and issubclass(v, Primitive) and v.__module__ == module.__name__
                    and not v.__dict__.get("abstract", False) and v is not Primitive}
    assert set(prims) == defined
    assert catalogue.missing_cases(prims) == []
    out, _ = manual_build
    written = {p.stem: p.read_text(encoding="utf-8")
               for p in (out / "manual-src" / "families").glob("*.md")}
    ops = [op for op in catalogue.public_ops() if set(op.primitives) & set(SOME)]
    manual.check_coverage(ops, SOME, written)  # the pages built hold all of them


def test_a_primitive_added_without_an_entry_fails():
    class Dummy(Primitive):
        def eval(self, inputs):
            return [list(inputs[0].data())]

    try:
        assert Dummy in catalogue.primitives()  # a new primitive is seen by the build
        with pytest.raises(manual.MissingEntry, match="primitive Dummy"):
            manual.check_coverage([], [Dummy], {"elementwise": "(prim-sin)=\n"})
        # a page entry is not enough: its rules need a check case
        with pytest.raises(manual.MissingEntry, match=r"Dummy \(no check case"):
            manual.check_coverage([], [Dummy], {"x": f"({pages.prim_label(Dummy)})=\n"})
    finally:
        del Dummy
        gc.collect()
    assert "Dummy" not in {p.__name__ for p in catalogue.primitives()}


def test_an_op_without_its_own_description_or_with_a_wrong_example_fails_the_build(
        monkeypatch, tmp_path):
    def bare(a):
        pass

    op = catalogue.Op("bare", bare)
    written = {"x": f"({pages.op_label('bare')})=\n"}
    with pytest.raises(manual.MissingEntry, match=r"op bare \(its docstring has no description"):
        manual.check_coverage([op], [], written)
    bare.__doc__ = "``mx.bare``: says what it does, shows nothing."
    with pytest.raises(manual.MissingEntry, match=r"op bare \(its docstring has no example"):
        manual.check_coverage([op], [], written)
    bare.__doc__ += "\n\n>>> mx.add(1, 2)\narray(3, dtype=int32)\n"
    manual.check_coverage([op], [], written)
    # the build runs every example: one that prints something else stops it, by name
    sin = next(o for o in catalogue.public_ops() if o.name == "sin")
    doc = sin.function.__doc__
    monkeypatch.setattr(sin.function, "__doc__", doc.replace("array([0, 1,", "array([0, 2,"))
    assert sin.function.__doc__ != doc
    with pytest.raises(manual.MissingEntry, match=r"sin: >>> mx\.sin\(.*expected array\(\[0, 2,"):
        manual.generate(tmp_path / "src", primitives=[Sin], verdicts={})


def test_the_cli_page_is_argparse_help():
    from mlxref import cli

    page = pages.cli_page(cli.build_parser())
    for command in ("demo", "diagrams", "check-rules", "graph", "assignment grade"):
        assert f"## `mlxref {command}`" in page
    assert "--max-nodes" in page


def test_a_docstring_reads_as_prose_with_its_code_kept():
    doc = ("Sums ``a * b`` over *batch, keeping __dims__ and <dtype> [0, 1] with ``x *\n"
           "y_z``.\n"
           "# not a heading\n\n"
           ">>> 1 + 1\n2\n\n    {\"indented\": \"kept *as* it is\"}\n\nAfter.")
    text = pages._prose(doc)
    lines = text.splitlines()
    # code spans untouched; markup characters outside them escaped
    assert lines[0] == ("Sums ``a * b`` over \\*batch, keeping \\_\\_dims\\_\\_ and "
                        "\\<dtype> \\[0, 1\\] with ``x *")
    assert lines[1:3] == ["y_z``.", "\\# not a heading"]  # a span over a line break is kept
    # the example is a Python block, the indented block is left as Markdown's code block
    assert lines[4:8] == ["```python", ">>> 1 + 1", "2", "```"]
    assert '    {"indented": "kept *as* it is"}' in lines and lines[-1] == "After."


def test_a_transform_page_links_its_code_and_mlx_functions(manual_build):
    out, _ = manual_build
    page = (out / "docs" / "transforms" / "vjp.html").read_text(encoding="utf-8")
    # the algorithm's steps are typeset as a list, not shown as raw text
    assert re.search(r"<ol[^>]*>\s*<li><p>Copy each primal", page)
    (href,) = set(re.findall(r'href="([^"]*vjp.html#L\d+)"', page))
    path, line = href.split("#L")
    source = (out / "docs" / "transforms" / path).resolve().read_text(encoding="utf-8")
    assert re.search(rf'id="L{line}"><a [^>]*>\s*{line}</a>  def vjp\(', source)
    mlx_text = links.mlx_file("mlx/transforms.cpp")
    if mlx_text is None:
        pytest.skip("no clone of MLX here: the links go to the file")
    (line,) = re.findall(r'href="[^"]*/blob/[0-9a-f]{40}/mlx/transforms.cpp#L(\d+)"', page)
    assert re.match(r"^\S.* vjp\($", mlx_text.splitlines()[int(line) - 1])
    with pytest.raises(ValueError, match="no_such_function is not defined in MLX"):
        links.mlx_definitions("mlx/transforms.cpp", ["no_such_function"])


# --- three pages in headless Chromium ------------------------------------------------

CHECK = """<script>
window.addEventListener("load", function () {
  var maths = document.querySelectorAll("math"), subs = document.querySelectorAll("msub");
  var lowered = Array.prototype.filter.call(subs, function (s) {
    var base = s.children[0].getBoundingClientRect(), sub = s.children[1].getBoundingClientRect();
    return sub.bottom > base.bottom && sub.top > base.top;  // typeset as a subscript
  });
  var images = Array.prototype.filter.call(document.images, function (i) {
    return /\\.svg$/.test(i.getAttribute("src")) && i.complete && i.naturalWidth > 0;
  });
  var out = document.createElement("pre");
  out.id = "results";
  out.textContent = JSON.stringify({
    math: maths.length,
    mathml: Array.prototype.every.call(maths, function (m) {
      return m instanceof MathMLElement && m.getBoundingClientRect().width > 0; }),
    subscripts: subs.length, lowered: lowered.length, svgs: images.length,
    sources: document.querySelectorAll("a.source").length});
  document.body.appendChild(out);
});
</script>"""


def _in_chromium(page, tmp_path, screenshot=False, check=CHECK, size="1200,2000"):
    import json
    import subprocess

    chromium = chromium_or_skip()
    probe = page.with_name("_probe_" + page.name)
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", check + "</body>"),
                     encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={size}"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    shot = tmp_path / "page.png"
    if screenshot:
        subprocess.run([chromium, *flags, f"--screenshot={shot}", probe.as_uri()],
                       capture_output=True, timeout=120)
    probe.unlink()
    (results,) = re.findall(r'<pre id="results"[^>]*>(.*?)</pre>', dom, re.S)  # the theme may add attributes
    return json.loads(html.unescape(results)), shot


def test_chromium_draws_an_op_page_formulas_as_mathml_and_its_drawing(manual_build, tmp_path):
    out, _ = manual_build
    got, shot = _in_chromium(out / "docs" / "families" / "elementwise.html", tmp_path,
                             screenshot=True)
    assert got["math"] >= 4 and got["mathml"]
    assert got["subscripts"] > 0 and got["lowered"] == got["subscripts"]
    assert got["svgs"] >= (1 if shutil.which("dot") else 0) and got["sources"] >= 5
    assert shot.stat().st_size > 10_000  # a screenshot with something on it


def test_chromium_draws_a_transform_page(manual_build, tmp_path):
    out, _ = manual_build
    page = out / "docs" / "transforms" / "vjp.html"
    got, _ = _in_chromium(page, tmp_path)
    assert got["math"] == 0 and got["mathml"]  # prose and code: nothing to typeset
    assert got["svgs"] == (1 if shutil.which("dot") else 0)  # the seed example's vjp walk
    assert "mlx/transforms.cpp vjp" in page.read_text(encoding="utf-8")


# --- the tutorials as notebooks, and as pages of the manual ------------------------

CHAPTERS = manual.CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_chapter_runs_as_a_notebook_printing_what_it_says(chapter):
    """The chapter's doctest, as a notebook in its own kernel (tests/test_tutorials.py
    leaves the numbered chapters to this test where it runs)."""
    from support import chapters_run_as_notebooks

    if not chapters_run_as_notebooks():
        pytest.skip("no docs extra: tests/test_tutorials.py runs this chapter's doctest")
    from mlxref.manual import notebooks

    # a cell per example: each one's output is checked on its own, as doctest checks it
    _, cells = notebooks.chapter(chapter, each=True)
    assert cells, f"{chapter.name} has no doctest examples"
    # an error outside a raises-exception cell raises here
    nb = notebooks.execute(notebooks.notebook(chapter, each=True), ROOT)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    raised = [c for c in code if any(o.output_type == "error" for o in c.outputs)]
    assert all("raises-exception" in c.metadata.get("tags", []) for c in raised)
    assert notebooks.mismatches(nb, cells) == []


def test_the_output_check_catches_wrong_values_and_exceptions():
    """``mismatches`` on outputs made here, as a kernel would send them (no kernel run)."""
    import nbformat
    from mlxref.manual import notebooks

    block = (">>> x = 2\n>>> x + 1\n3\n>>> print('a'); x\na\n2\n"
             ">>> int('z')\nTraceback (most recent call last):\n  ...\n"
             "ValueError: invalid literal for int() with base 10: 'z'\n>>> x * 2\n4\n")
    # the build's cells: each ends where something is printed, or raised
    cells = notebooks.doctest_cells(block)
    assert [(c.code, c.want, c.exc_msg is not None) for c in cells] == [
        ("x = 2\nx + 1", "3\n", False), ("print('a'); x", "a\n2\n", False),
        ("int('z')", "", True), ("x * 2", "4\n", False)]
    # the tests' cells: one per example, each with its own expected output
    each = notebooks.doctest_cells(block, each=True)
    assert [(c.code, c.want) for c in each] == [
        ("x = 2", ""), ("x + 1", "3\n"), ("print('a'); x", "a\n2\n"), ("int('z')", ""),
        ("x * 2", "4\n")]
    assert [c.exc_msg is not None for c in each] == [False, False, False, True, False]

    def run(value, printed, error, last):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(notebooks.SETUP)] + [
            nbformat.v4.new_code_cell(c.code) for c in cells])
        result = lambda text: nbformat.v4.new_output("execute_result", data={"text/plain": text})
        nb.cells[1].outputs = [result(value)]
        nb.cells[2].outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=printed),
            nbformat.v4.new_output("stream", name="stderr", text="a warning\n"), result("2")]
        nb.cells[3].outputs = ([nbformat.v4.new_output("error", ename=error[0],
                                                       evalue=error[1], traceback=[])]
                               if error else [])
        nb.cells[4].outputs = [result(last)]
        return [code for code, _, _ in notebooks.mismatches(nb, cells)]

    right = ("ValueError", "invalid literal for int() with base 10: 'z'")
    assert run("3", "a\n", right, "4") == []
    assert run("4", "a\n", right, "4") == [cells[0].code]  # a wrong value
    assert run("3", "b\n", right, "4") == [cells[1].code]  # a wrong print
    assert run("3", "a\n", None, "4") == [cells[2].code]  # no exception
    assert run("3", "a\n", ("TypeError", right[1]), "4") == [cells[2].code]
    assert run("3", "a\n", right, "5") == [cells[3].code]


def test_a_notebook_is_the_same_on_every_build():
    import nbformat
    from mlxref.manual import notebooks

    assert nbformat.writes(notebooks.notebook(JVP)) == nbformat.writes(notebooks.notebook(JVP))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1); print(2)")])
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="1\n"),
        nbformat.v4.new_output("stream", name="stdout", text="2\n"),
        nbformat.v4.new_output("stream", name="stderr", text="/tmp/ipykernel_4242/12.py:1: W\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "3"}),
        nbformat.v4.new_output("stream", name="stdout", text="4\n")]
    outputs = notebooks.tidy(nb).cells[0].outputs
    assert [o.get("text") for o in outputs] == ["1\n2\n", "/tmp/ipykernel_/12.py:1: W\n",
                                                None, "4\n"]


def test_a_notebook_says_what_it_needs_and_carries_its_figures(tmp_path):
    import nbformat
    from mlxref.manual import notebooks

    nb = notebooks.notebook(JVP)
    assert nb.cells[0].cell_type == "markdown" and "pip install -e ." in nb.cells[0].source
    assert "checkout's root" not in nb.cells[0].source  # 04 reads no file of the checkout
    assert "checkout's root" in notebooks.notebook(ROOT / "tutorials" / "12-char-lm.md"
                                                   ).cells[0].source
    # opened away from the checkout, the figure is still there: an attachment, the file's bytes
    path = tmp_path / "04-jvp.ipynb"
    nbformat.write(nb, str(path))
    nb = nbformat.read(str(path), as_version=4)
    (cell,) = [c for c in nb.cells if c.get("attachments")]
    assert "](attachment:seed_jvp.svg)" in cell.source and "](../diagrams" not in cell.source
    data = cell.attachments["seed_jvp.svg"]["image/svg+xml"]
    assert base64.b64decode(data) == (ROOT / "diagrams" / "seed_jvp.svg").read_bytes()
    assert "](03-vjp-and-grad.ipynb)" in "".join(c.source for c in nb.cells)


def test_the_tutorials_page_links_each_rendered_chapter(manual_build, tmp_path):
    out, _ = manual_build
    page = (out / "docs" / "tutorials.html").read_text(encoding="utf-8")
    links_ = set(re.findall(r'href="((?:tutorials|notebooks)/[^"]+)"', page))
    assert links_ == {"tutorials/04-jvp.html", "notebooks/04-jvp.ipynb"}
    for link in links_:
        assert (out / "docs" / link).is_file()
    for chapter in CHAPTERS:
        assert html.escape(chapter.read_text(encoding="utf-8").partition("\n")[0][2:]) in page
    html_ = (out / "docs" / "tutorials" / "04-jvp.html").read_text(encoding="utf-8")
    assert 'href="../notebooks/04-jvp.ipynb"' in html_
    # the code the chapter links to: the manual's source pages, written for it; the
    # other chapters were not built here: their links are text (make docs builds them all)
    assert "../source/mlxref.core.transforms.jvp.html" in html_
    assert "03-vjp-and-grad.html" not in html_ and "chapter\n03</a>" not in html_
    for href in re.findall(r'(?:href|src)="([^"#?]+)', html_):
        if not re.match(r"[a-z]+:", href):
            assert (out / "docs" / "tutorials" / href).resolve().is_file(), href
    # in a build of every chapter, a link to another chapter goes to its page
    from mlxref.manual import notebooks

    text, _ = notebooks.page(out / "notebooks" / "04-jvp.ipynb")
    assert "](03-vjp-and-grad.md)" in text
    assert "tutorials" in (out / "docs" / "index.html").read_text(encoding="utf-8")


def test_a_chapter_page_has_each_output_under_its_statement_and_no_settings_cell(manual_build):
    import nbformat
    from mlxref.manual import notebooks

    out, _ = manual_build
    nb = nbformat.read(str(out / "notebooks" / "04-jvp.ipynb"), as_version=4)
    assert nb.cells[1].source == notebooks.SETUP  # the notebook keeps its settings cell
    text, files = notebooks.page(out / "notebooks" / "04-jvp.ipynb", built={"04-jvp"})
    assert "ast_node_interactivity" not in text and "pip install -e ." in text
    assert "Chapter 04 of the mlxref tutorials" not in text  # the notebook's preface
    # every code cell shows, and what it printed follows it before any other code
    blocks = re.findall(r"^```(python|\{code-block\} text)\n(.*?)^```$", text, re.M | re.S)
    code = [c for c in nb.cells[2:] if c.cell_type == "code"]
    shown = []  # [code, the output blocks under it]
    for kind, block in blocks:
        if kind == "python":
            shown.append([block, ""])
        else:
            shown[-1][1] += block
    assert [s[0] for s in shown] == [c.source + "\n" for c in code]
    for (_, under), cell in zip(shown, code):
        for o in cell.outputs:
            printed = o.get("text") or o.get("data", {}).get("text/plain") or (
                f"{o.ename}: {o.evalue}")
            assert printed.strip() in under, cell.source
    assert len(code) > 10 and any("\n" in c.source for c in code)
    assert files == {"seed_jvp.svg": (ROOT / "diagrams" / "seed_jvp.svg").read_bytes()}


def test_without_notebooks_the_tutorials_page_says_so_and_builds(tmp_path):
    from mlxref.manual import notebooks

    src = tmp_path / "src"
    shutil.copytree(manual.SOURCES, src)  # conf.py, _static
    for hand_written in src.glob("*.md"):  # pages this toctree does not list
        hand_written.unlink()
    (src / "_extra").mkdir()
    (src / "index.md").write_text("# The manual\n\n```{toctree}\n\ntutorials\n```\n")
    page = notebooks.tutorials_page(CHAPTERS)
    assert "--no-notebooks" in page and "href" not in page
    (src / "tutorials.md").write_text(page, encoding="utf-8")
    manual.sphinx(src, tmp_path / "out")  # warnings are errors
    built = (tmp_path / "out" / "tutorials.html").read_text(encoding="utf-8")
    assert built.count("<li>") >= len(CHAPTERS)


# What a reader sees of a page at 1280x800: the site's tree on the left, "On this page"
# on the right, the page's tables, code blocks and outputs (each under a code block).
SITE_CHECK = """<script>
window.addEventListener("load", function () {
  function drawn(e) { var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }
  function onScreen(e) {
    var r = e.getBoundingClientRect();
    return drawn(e) && r.top < window.innerHeight && r.bottom > 0 && r.left < window.innerWidth
      && r.right > 0; }
  function count(list, test) { return Array.prototype.filter.call(list, test).length; }
  var article = document.querySelector("article");
  var nav = document.getElementById("pst-primary-sidebar");
  var toc = document.getElementById("pst-secondary-sidebar");
  var outputs = article.querySelectorAll("div.output");
  var table = article.querySelector("table");
  var out = document.createElement("pre");
  out.id = "results";
  out.textContent = JSON.stringify({
    sidebar: !!nav && onScreen(nav) && nav.getBoundingClientRect().left < 100,
    sidebar_links: nav ? count(nav.querySelectorAll("a"), onScreen) : 0,
    sidebar_current: nav ? count(nav.querySelectorAll("li.current > a"), onScreen) : 0,
    toc: !!toc && onScreen(toc) && toc.getBoundingClientRect().left > 900,
    toc_entries: toc ? count(toc.querySelectorAll("a.nav-link"), onScreen) : 0,
    table_on_screen: !!table && onScreen(table),
    table_rows: table ? table.querySelectorAll("tbody tr").length : 0,
    code: article.querySelectorAll("div.highlight-python").length,
    outputs: count(outputs, function (o) {
      return drawn(o) && o.textContent.trim().length > 0; }),
    outputs_under_code: count(outputs, function (o) {
      for (var p = o.previousElementSibling; p; p = p.previousElementSibling) {
        if (p.classList.contains("highlight-python")) return true;
        if (!p.classList.contains("output")) return false; }
      return false; }),
    images: article.querySelectorAll("img").length,
    images_drawn: count(article.querySelectorAll("img"), function (i) {
      return i.complete && i.naturalWidth > 0 && drawn(i); }),
    text: article.textContent});
  document.body.appendChild(out);
});
</script>"""
SCREEN = "1280,800"  # the reader's window


def test_chromium_shows_a_family_page_with_its_op_table_and_contents(manual_build, tmp_path):
    out, _ = manual_build
    page = out / "docs" / "families" / "elementwise.html"
    got, shot = _in_chromium(page, tmp_path, screenshot=True, check=SITE_CHECK, size=SCREEN)
    ops = [op for op in catalogue.public_ops() if Sin in op.primitives or Matmul in op.primitives]
    ops = [op for op in ops if op.family == "elementwise"]
    assert got["table_on_screen"] and got["table_rows"] == len(ops) > 0
    assert got["toc"] and got["toc_entries"] >= 2 + len(ops)  # Ops, Primitives, each op
    assert got["sidebar"] and got["sidebar_current"] >= 1  # the family, open in the tree
    assert shot.stat().st_size > 30_000  # a screenshot with something on it


def test_chromium_shows_a_chapter_page_with_the_sidebar_and_outputs(manual_build, tmp_path):
    import nbformat

    out, _ = manual_build
    page = out / "docs" / "tutorials" / "04-jvp.html"
    got, shot = _in_chromium(page, tmp_path, screenshot=True, check=SITE_CHECK, size=SCREEN)
    nb = nbformat.read(str(out / "docs" / "notebooks" / "04-jvp.ipynb"), as_version=4)
    code = [c for c in nb.cells[2:] if c.cell_type == "code"]
    assert got["sidebar"] and got["sidebar_current"] >= 1 and got["sidebar_links"] >= 5
    assert got["toc"] and got["toc_entries"] >= 3  # the chapter's sections
    assert got["code"] == len(code)
    assert got["outputs"] == got["outputs_under_code"] >= sum(1 for c in code if c.outputs) > 5
    assert got["images"] == got["images_drawn"] == 1  # the jvp walk
    printed = [o.text for c in code for o in c.outputs if o.output_type == "stream"]
    assert printed and all(line in got["text"] for t in printed for line in t.splitlines())
    assert f"Built from mlxref {mx.__version__}" in got["text"]
    assert shot.stat().st_size > 50_000


def test_chromium_search_finds_a_chapter_by_a_word_of_its_text(manual_build, tmp_path):
    import subprocess

    chromium = chromium_or_skip()
    out, _ = manual_build
    word = "perturbation"  # chapter 04's subject, in its prose only
    assert word in JVP.read_text(encoding="utf-8").lower()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={SCREEN}",
             "--virtual-time-budget=15000", "--dump-dom"]
    dom = subprocess.run([chromium, *flags, (out / "docs" / "search.html").as_uri() + "?q=" + word],
                         capture_output=True, text=True, timeout=120).stdout
    found = re.findall(r'<li[^>]*>\s*<a[^>]*href="([^"?#]+)', dom.split('id="search-results"')[-1])
    assert "tutorials/04-jvp.html" in found, found
    dom = subprocess.run([chromium, *flags, (out / "docs" / "search.html").as_uri() + "?q=zyzzyva"],
                         capture_output=True, text=True, timeout=120).stdout
    assert "tutorials/04-jvp.html" not in dom.split('id="search-results"')[-1]


def test_a_chapter_page_carries_svg_outputs_as_files(tmp_path):
    """A cell whose value is a drawing (``viz.Drawing``'s SVG output) is drawn in the page,
    from a file beside it."""
    import nbformat
    from mlxref import viz
    from mlxref.manual import notebooks

    if not shutil.which("dot"):
        pytest.skip("no Graphviz dot: a drawing has no SVG output")
    drawing = viz.trace(lambda x: mx.sin(x) * mx.exp(x), [mx.array(0.5)])
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("preface"), nbformat.v4.new_code_cell(notebooks.SETUP),
        nbformat.v4.new_markdown_cell("# 99 · A title\n\nSome prose."),
        nbformat.v4.new_code_cell("drawing")])
    nb.cells[3].outputs = [nbformat.v4.new_output(
        "execute_result", data=drawing._repr_mimebundle_(), execution_count=1)]
    nbformat.write(nb, str(tmp_path / "99-d.ipynb"))
    page = notebooks.write_page(tmp_path / "99-d.ipynb", tmp_path / "src" / "99-d.md")
    text = page.read_text(encoding="utf-8")
    (image,) = re.findall(r"!\[[^\]]*\]\((99-d/[^)]+\.svg)\)", text)
    assert (page.parent / image).read_text(encoding="utf-8") == drawing._repr_svg_()
    assert text.startswith("# 99 · A title\n\n" + pages.stamp()) and "preface" not in text


def test_a_chapter_that_fails_as_a_notebook_fails_the_build_in_one_line(tmp_path):
    from mlxref.manual import notebooks

    chapter = tmp_path / "99-broken.md"
    chapter.write_text("# 99 · Broken\n\n```python\n>>> 1 / 0\n0\n\n```\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match=r"^99-broken.md failed as a notebook: "
                                           r"ZeroDivisionError: division by zero$"):
        notebooks.write_notebooks([chapter], tmp_path / "out", ROOT)
