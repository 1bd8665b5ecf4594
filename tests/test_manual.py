"""The manual (mlxref/manual/): it builds, covers every op and primitive, stays offline.

One Sphinx build per session (``manual`` fixture): the manual of a few
primitives and the ops that build them, with warnings as errors, and every
other page (transforms, nn, optimizers, utils, testing, the CLI, the
differences from MLX). ``make docs`` builds the same pages for every
primitive; what that costs is in the README ("The manual"). Coverage is
checked on the whole code: every op real MLX has and mlxref implements has
an entry, every primitive has a check case to show its rules from, and a
primitive added without one fails the coverage check. The session's build
renders one tutorial chapter (04) as a notebook page; every chapter runs as
a notebook in its own kernel, its outputs checked as doctest checks them
(that run is the chapter's doctest: tests/test_tutorials.py leaves the
numbered chapters to it). Headless Chromium shows an op page's formulas
typeset as MathML (subscripts lowered) and its drawing, a transform page,
and a chapter's notebook page with its code, outputs and figure. ``make
test`` installs Chromium (the Makefile's ``chromium`` target) and sets
MLXREF_NEED_CHROMIUM, so there a missing Chromium fails those tests; other
runs skip them without one.
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

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

import mlxref.core as mx  # noqa: E402
from mlxref import manual  # noqa: E402
from mlxref.core.primitives.base import Primitive  # noqa: E402
from mlxref.core.primitives.elementwise import Sin  # noqa: E402
from mlxref.core.primitives.linalg import Matmul  # noqa: E402
from mlxref.manual import catalogue, links, pages  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
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


def _html(out):  # not the Chromium tests' probes, which come and go
    return sorted(p for p in (out / "docs").rglob("*.html") if not p.name.startswith("_probe_"))


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
    assert "<mi>vjp a</mi>" in maths[1] and "<mi>cos</mi>" in maths[1]
    assert "<mi>jvp f</mi>" in maths[2] and "<mi>cos</mi>" in maths[2]
    # the drawing of the vjp walk is an SVG file in the build (drawn by Graphviz's dot)
    if shutil.which("dot"):
        (img,) = re.findall(r'<img[^>]+src="([^"]+Sin[^"]*\.svg)"', page)
        assert (out / "docs" / "families" / img).resolve().is_file()
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


def test_every_page_says_what_it_was_built_from(manual_build):
    out, _ = manual_build
    stamp = f"Built from mlxref {mx.__version__} against MLX {links.MLX_VERSION}"
    pages_ = [p for p in _html(out) if p.name not in ("genindex.html", "search.html")
              and "source" not in p.parts]
    assert len(pages_) > 20
    for page in pages_:
        assert stamp in page.read_text(encoding="utf-8"), page


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
        assert not re.search(r"url\(\s*['\"]?(https?:)?//|@import|@font-face", text), style


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
    for path in (ROOT / "mlxref" / "core" / "primitives").glob("*.py"):
        module = importlib.import_module(f"mlxref.core.primitives.{path.stem}")
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


def test_the_cli_page_is_argparse_help():
    from mlxref import cli

    page = pages.cli_page(cli._build_parser())
    for command in ("demo", "diagrams", "check-rules", "graph", "assignment grade"):
        assert f"## `mlxref {command}`" in page
    assert "--max-nodes" in page


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


# the names the Makefile's `chromium` target looks for (macOS: the apps' binaries)
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
             "/Applications/Chromium.app/Contents/MacOS/Chromium",
             "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")


def _in_chromium(page, tmp_path, screenshot=False, check=CHECK):
    import json
    import subprocess

    chromium = next((shutil.which(n) for n in CHROMIUMS if shutil.which(n)), None)
    if chromium is None:  # `make test` installs it (its `chromium` target) and says so
        if os.environ.get("MLXREF_NEED_CHROMIUM"):
            pytest.fail("no Chromium here, and make test needs one: run `make chromium`")
        pytest.skip("no Chromium here")
    probe = page.with_name("_probe_" + page.name)
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", check + "</body>"),
                     encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,2000"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    shot = tmp_path / "page.png"
    if screenshot:
        subprocess.run([chromium, *flags, f"--screenshot={shot}", probe.as_uri()],
                       capture_output=True, timeout=120)
    probe.unlink()
    (results,) = re.findall(r'<pre id="results">(.*?)</pre>', dom, re.S)
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
    assert "mlx/transforms.cpp vjp" in page.read_text(encoding="utf-8")


# --- the tutorials as notebooks, and as pages of the manual ------------------------

CHAPTERS = sorted((ROOT / "tutorials").glob("[0-9][0-9]-*.md"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_chapter_runs_as_a_notebook_printing_what_it_says(chapter, request):
    """The chapter's doctest, as a notebook in its own kernel (tests/test_tutorials.py
    leaves the numbered chapters to this test where it runs)."""
    import nbformat
    from support import chapters_run_as_notebooks

    if not chapters_run_as_notebooks():
        pytest.skip("no docs extra: tests/test_tutorials.py runs this chapter's doctest")
    from mlxref.manual import notebooks

    _, cells = notebooks.chapter(chapter)
    assert cells, f"{chapter.name} has no doctest examples"
    if chapter == JVP:  # the session's build ran this one (manual.build, as make docs does)
        out, _ = request.getfixturevalue("manual_build")
        nb = nbformat.read(str(out / "notebooks" / "04-jvp.ipynb"), as_version=4)
    else:  # an error outside a raises-exception cell raises here
        nb = notebooks.execute(notebooks.notebook(chapter), ROOT)
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
    cells = notebooks.doctest_cells(block)
    assert [c.exc_msg is not None for c in cells] == [True, False]  # cut after the raise
    assert cells[1].code == "x * 2"

    def run(first, error, last):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(notebooks.SETUP)] + [
            nbformat.v4.new_code_cell(c.code) for c in cells])
        nb.cells[1].outputs = [
            nbformat.v4.new_output("execute_result", data={"text/plain": first[0]}),
            nbformat.v4.new_output("stream", name="stdout", text=first[1]),
            nbformat.v4.new_output("stream", name="stderr", text="a warning\n"),
            nbformat.v4.new_output("execute_result", data={"text/plain": "2"})] + (
            [nbformat.v4.new_output("error", ename=error[0], evalue=error[1], traceback=[])]
            if error else [])
        nb.cells[2].outputs = [nbformat.v4.new_output("execute_result",
                                                      data={"text/plain": last})]
        return [code for code, _, _ in notebooks.mismatches(nb, cells)]

    right = ("ValueError", "invalid literal for int() with base 10: 'z'")
    assert run(("3", "a\n"), right, "4") == []
    assert run(("4", "a\n"), right, "4") == [cells[0].code]  # a wrong value
    assert run(("3", "b\n"), right, "4") == [cells[0].code]  # a wrong print
    assert run(("3", "a\n"), None, "4") == [cells[0].code]  # no exception
    assert run(("3", "a\n"), ("TypeError", right[1]), "4") == [cells[0].code]
    assert run(("3", "a\n"), right, "5") == [cells[1].code]


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
    links_ = re.findall(r'href="(notebooks/[^"]+)"', page)
    assert links_ == ["notebooks/04-jvp.html", "notebooks/04-jvp.ipynb"]
    for link in links_:
        assert (out / "docs" / link).is_file()
    for chapter in CHAPTERS:
        assert html.escape(chapter.read_text(encoding="utf-8").partition("\n")[0][2:]) in page
    html_ = (out / "docs" / "notebooks" / "04-jvp.html").read_text(encoding="utf-8")
    assert 'href="../index.html"' in html_ and 'href="04-jvp.ipynb"' in html_
    # the code the chapter links to: the manual's source pages, written for it; the
    # other chapters were not built here: their links are text (make docs builds them all)
    assert "source/mlxref.core.transforms.jvp.html" in html_
    assert "03-vjp-and-grad.html" not in html_ and "chapter\n03</a>" not in html_
    for href in re.findall(r'href="([^"#]+)', html_):
        if not re.match(r"[a-z]+:", href):
            assert (out / "docs" / "notebooks" / href).resolve().is_file(), href
    # in a build of every chapter, a link to another chapter goes to its page
    from mlxref.manual import notebooks

    every = notebooks.write_page(out / "notebooks" / "04-jvp.ipynb", tmp_path / "04-jvp.html")
    assert 'href="03-vjp-and-grad.html"' in every.read_text(encoding="utf-8")
    assert "tutorials" in (out / "docs" / "index.html").read_text(encoding="utf-8")


def test_without_notebooks_the_tutorials_page_says_so_and_builds(tmp_path):
    from mlxref.manual import notebooks

    src = tmp_path / "src"
    shutil.copytree(manual.SOURCES, src)  # conf.py, _static
    (src / "_extra").mkdir()
    (src / "index.md").write_text("# The manual\n\n```{toctree}\n\ntutorials\n```\n")
    page = notebooks.tutorials_page(CHAPTERS)
    assert "--no-notebooks" in page and "href" not in page
    (src / "tutorials.md").write_text(page, encoding="utf-8")
    manual.sphinx(src, tmp_path / "out")  # warnings are errors
    built = (tmp_path / "out" / "tutorials.html").read_text(encoding="utf-8")
    assert built.count("<li>") >= len(CHAPTERS)


NOTEBOOK_CHECK = """<script>
window.addEventListener("load", function () {
  function drawn(e) { var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }
  var code = document.querySelectorAll("div.code_cell");
  var out = document.createElement("pre");
  out.id = "results";
  out.textContent = JSON.stringify({
    code: code.length,
    inputs: Array.prototype.filter.call(code, function (c) {
      var i = c.querySelector("div.input_area"); return i && drawn(i); }).length,
    outputs: Array.prototype.filter.call(document.querySelectorAll("div.output_area"), function (o) {
      return drawn(o) && o.textContent.trim().length > 0; }).length,
    images: document.images.length,
    images_drawn: Array.prototype.filter.call(document.images, function (i) {
      return i.complete && i.naturalWidth > 0 && drawn(i); }).length,
    text: document.body.textContent});
  document.body.appendChild(out);
});
</script>"""


def test_chromium_draws_a_chapter_notebook_with_its_outputs_and_figure(manual_build, tmp_path):
    import nbformat

    out, _ = manual_build
    page = out / "docs" / "notebooks" / "04-jvp.html"
    got, shot = _in_chromium(page, tmp_path, screenshot=True, check=NOTEBOOK_CHECK)
    nb = nbformat.read(str(out / "docs" / "notebooks" / "04-jvp.ipynb"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert got["code"] == got["inputs"] == len(code)  # every code cell, its code shown
    assert got["outputs"] == sum(1 for c in code for _ in c.outputs) > 5
    assert got["images"] == got["images_drawn"] == 1  # the jvp walk, from its attachment
    printed = [o.text for c in code for o in c.outputs if o.output_type == "stream"]
    assert printed and all(line in got["text"] for t in printed for line in t.splitlines())
    assert f"Built from mlxref {mx.__version__}" in got["text"]
    assert shot.stat().st_size > 50_000  # a screenshot with something on it


def test_a_notebook_page_draws_svg_outputs(tmp_path):
    """A cell whose value is a drawing (``viz.Drawing``'s SVG output) is drawn in the page,
    from a ``data:`` image (nbconvert's way: the SVG's ids stay apart from the page's)."""
    import nbformat
    from mlxref import viz
    from mlxref.manual import notebooks

    if not shutil.which("dot"):
        pytest.skip("no Graphviz dot: a drawing has no SVG output")
    drawing = viz.trace(lambda x: mx.sin(x) * mx.exp(x), [mx.array(0.5)])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("drawing")])
    nb.cells[0].outputs = [nbformat.v4.new_output(
        "execute_result", data=drawing._repr_mimebundle_(), execution_count=1)]
    nbformat.write(nb, str(tmp_path / "d.ipynb"))
    page = notebooks.write_page(tmp_path / "d.ipynb", tmp_path / "d.html")
    text = page.read_text(encoding="utf-8")
    (data,) = re.findall(r'<img [^>]*src="data:image/svg\+xml;base64,([^"]+)"', text)
    assert base64.b64decode(data).decode("utf-8") == drawing._repr_svg_()
    assert "<title>d</title>" in text


def test_a_chapter_that_fails_as_a_notebook_fails_the_build_in_one_line(tmp_path):
    from mlxref.manual import notebooks

    chapter = tmp_path / "99-broken.md"
    chapter.write_text("# 99 · Broken\n\n```python\n>>> 1 / 0\n0\n\n```\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match=r"^99-broken.md failed as a notebook: "
                                           r"ZeroDivisionError: division by zero$"):
        notebooks.write_notebooks([chapter], tmp_path / "out", ROOT)
