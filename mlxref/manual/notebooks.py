"""The tutorial chapters as Jupyter notebooks, executed, checked, and as pages of the manual.

The Markdown chapters (tutorials/NN-*.md) stay the single source. Each
```python block with ``>>>`` prompts becomes code cells (other blocks,
shell commands among them, stay text in the prose): doctest's own parser
reads the examples, and their statements, without the expected output (the
kernel prints its own), go in one cell, cut after each example whose
expected output is a ``Traceback``: that cell is tagged
``raises-exception`` and the block's later statements run in the next cell,
as they do in the chapter. A statement marked ``doctest: +SKIP`` is left
out. Figures the prose embeds (``![...](../diagrams/x.svg)``) become cell
attachments, so the notebook shows them anywhere; links to other chapters
point at their notebooks. A first Markdown cell says what the notebook
needs (mlxref importable; the checkout's root as the working directory
where a chapter imports from ``tutorials/``), and a first code cell makes
every expression statement show its ``repr`` and an error only its last
line, as the prompts do. ``jupytext`` turns the text into a notebook and
``nbclient`` runs it in a fresh kernel, from the checkout's root. The
notebook is the same on every build: cells numbered, no timings, streams
joined (``tidy``).

``mismatches`` compares what each cell printed with what the chapter says
it prints, as doctest does; the tests run the chapters with a cell per
example (``each``), so each example's output is checked on its own (the same ``OutputChecker`` and flags as
tests/test_tutorials.py: ELLIPSIS, NORMALIZE_WHITESPACE; the exception
line of a cell that raises; stderr is not compared, doctest does not see
it either). The tests run every chapter this way, once: that run is the
chapter's doctest. A kernel costs about 1.1 s of CPU to start and import
mlxref, before the chapter runs.

``write_page`` renders an executed notebook to one offline HTML page of the
manual with nbconvert's ``basic`` template (cells and outputs, no script)
inside a page of our own: its style sheet inline, the manual's version
stamp, links back to the manual and to the ``.ipynb``; links to chapters go
to their pages, links to code to the manual's source pages (``links.py``).
Attachments and SVG outputs become ``data:`` images; nothing is fetched at
view time (no MathJax, require.js or fonts, which nbconvert's lab and
classic templates load). ``tutorials_page`` is the manual's "Tutorials"
page.

Read next: ``__init__.py`` (``build``).
"""

import base64
import copy
import doctest
import functools
import html
import mimetypes
import pathlib
import re
from typing import NamedTuple

from . import links, pages

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
CHAPTER_LINK = re.compile(r"\]\((\d\d-[\w-]+)\.md(#[^)\s]*)?\)")
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")  # [text](target)
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE  # tests/test_tutorials.py's
SETUP = ('# Show every statement\'s value as repr() at the >>> prompt does, and an error\n'
         '# as its last line, as the chapter does\n'
         'get_ipython().ast_node_interactivity = "all"\n'
         'get_ipython().display_formatter.formatters["text/plain"].pprint = False\n'
         'get_ipython().InteractiveTB.set_mode("Minimal")')


def chapters(directory=links.ROOT / "tutorials"):
    """The tutorial chapters, in order: ``NN-*.md``."""
    return sorted(pathlib.Path(directory).glob("[0-9][0-9]-*.md"))


class Cell(NamedTuple):
    code: str
    want: str  # what the statements print, as doctest expects it
    exc_msg: str | None  # the exception line, when the last statement raises


def doctest_cells(block, each=False):
    """The Cells of a doctest block: a cell ends after each example that raises, or,
    with ``each``, after every example (each output checked on its own, as doctest
    checks it)."""
    cells, code, want = [], [], []
    for example in doctest.DocTestParser().get_examples(block):
        if example.options.get(doctest.SKIP):
            continue
        code.append(example.source)
        if example.exc_msg is None and not each:
            want.append(example.want)
            continue
        if example.exc_msg is None:
            cells.append(Cell(example.source.rstrip("\n"), example.want, None))
            code = []
            continue
        cells.append(Cell("".join(code).rstrip("\n"), "".join(want), example.exc_msg))
        code, want = [], []
    if code:
        cells.append(Cell("".join(code).rstrip("\n"), "".join(want), None))
    return cells


def chapter(path, each=False):
    """(Markdown, Cells): the chapter with its doctest blocks as code fences, one per
    Cell, and the Cells in order; links to other chapters point at their notebooks.
    ``each``: a cell per example (``doctest_cells``), for the tests' check."""
    cells = []

    def replace(m):
        if m.group(1) != "python" or ">>>" not in m.group(2):  # shell commands, listings
            return "```text\n" + m.group(2) + "```\n"
        found = doctest_cells(m.group(2), each)
        cells.extend(found)
        return "\n".join("```python" + (' tags=["raises-exception"]' if c.exc_msg else "")
                         + f"\n{c.code}\n```\n" for c in found)
    text = FENCE.sub(replace, pathlib.Path(path).read_text(encoding="utf-8"))
    return CHAPTER_LINK.sub(r"](\1.ipynb\2)", text), cells


def preface(path, cells):
    """The first cell's text: what the notebook needs."""
    path = pathlib.Path(path)
    text = (f"*Chapter {path.stem[:2]} of the mlxref tutorials, made from "
            f"`tutorials/{path.name}` by `make docs`.* It needs `mlxref` importable: "
            "`pip install -e .` in a checkout of mlxref, then open the notebook in that "
            "environment's Jupyter (in Colab: clone or upload the checkout, `%cd` into it, "
            "`!pip install -e .`). Its figures are attached to the notebook, so they show "
            "wherever it is opened.")
    if any('"tutorials/' in c.code for c in cells):
        text += (" Run it from the checkout's root (the kernel's working directory): it "
                 "imports code from `tutorials/`.")
    return text


def notebook(path, each=False):
    """The chapter as a notebook (``each``: a cell per example, as ``chapter``)."""
    import jupytext
    import nbformat

    text, cells = chapter(path, each)
    nb = jupytext.reads(text, fmt="md")
    nb.cells[:0] = [nbformat.v4.new_markdown_cell(preface(path, cells)),
                    nbformat.v4.new_code_cell(SETUP)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    base = pathlib.Path(path).parent
    for n, cell in enumerate(nb.cells):
        cell.id = f"cell-{n}"  # the same notebook on every build
        if cell.cell_type != "markdown":
            continue
        attachments = {}

        def attach(m, attachments=attachments):
            target = (base / m.group(2)).resolve()
            kind = mimetypes.guess_type(target.name)[0]
            if re.match(r"https?:", m.group(2)) or not target.is_file() or not kind:
                return m.group(0)
            data = base64.b64encode(target.read_bytes()).decode("ascii")
            attachments[target.name] = {kind: data}
            return f"![{m.group(1)}](attachment:{target.name})"

        cell.source = IMAGE.sub(attach, cell.source)
        if attachments:
            cell["attachments"] = attachments
    return nb


def execute(nb, cwd, timeout=900):
    from nbclient import NotebookClient

    # The kernel logs errors only (not ipykernel's note that local TCP is unencrypted).
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   extra_arguments=["--log-level=ERROR"],
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return tidy(nb)


def tidy(nb):
    """The same outputs on every run: a stream is not cut where the kernel's flushes
    fell, and the kernel's process id is out of the warnings' cell names."""
    for cell in nb.cells:
        outputs = []
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                out.text = re.sub(r"(/ipykernel_)\d+/", r"\1/", out.text)
                if outputs and outputs[-1].output_type == "stream" and outputs[-1].name == out.name:
                    outputs[-1].text += out.text
                    continue
            outputs.append(out)
        if cell.cell_type == "code":
            cell.outputs = outputs
    return nb


def _printed(outputs):
    """(stdout and values as doctest would see them, the exception line or None)."""
    got, exc = [], None
    for out in outputs:
        if out.output_type == "stream" and out.name == "stdout":
            got.append(out.text)
        elif out.output_type == "execute_result":
            got.append(out.data.get("text/plain", "") + "\n")
        elif out.output_type == "error":
            exc = f"{out.ename}: {out.evalue}\n"
    return "".join(got), exc


def mismatches(nb, cells):
    """[(code, expected, got)] for each code cell of the executed ``nb`` whose output is
    not what its Cell (``chapter(path)[1]``) expects, compared as doctest compares."""
    code = [c for c in nb.cells if c.cell_type == "code"][1:]  # after SETUP
    if len(code) != len(cells):
        raise ValueError(f"the notebook has {len(code)} code cells, the chapter {len(cells)}")
    checker, bad = doctest.OutputChecker(), []
    for cell, expected in zip(code, cells):
        got, exc = _printed(cell.outputs)
        fine = checker.check_output(expected.want, got, OPTIONS) and (
            exc is None if expected.exc_msg is None
            else exc is not None and checker.check_output(expected.exc_msg, exc, OPTIONS))
        if not fine:
            bad.append((expected.code, expected.want + (expected.exc_msg or ""),
                        got + (exc or "")))
    return bad


def write_notebooks(chapters, out_dir, cwd, run=True):
    """Write each chapter as ``out_dir/<chapter>.ipynb`` (executed if ``run``)."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapters:
        nb = notebook(path)
        if run:
            try:
                execute(nb, cwd)
            except CellExecutionError as e:  # the build says which chapter, in one line
                raise RuntimeError(f"{pathlib.Path(path).name} failed as a notebook: "
                                   f"{e.ename}: {e.evalue}") from None
        target = out_dir / (pathlib.Path(path).stem + ".ipynb")
        nbformat.write(nb, str(target))
        written.append(target)
    return written


STYLE = """body{font-family:Georgia,serif;max-width:1000px;margin:0 auto;padding:0 1em 3em;
color:#222;line-height:1.45}
p.manual{font-size:90%;color:#555;border-bottom:1px solid #ddd;padding:.6em 0}
div.cell{margin:.4em 0}div.prompt{display:none}
div.input_area{background:#f6f6f2;border:1px solid #e4e4dc;border-radius:3px}
div.input_area pre,div.output_area pre{margin:0;padding:.4em .6em;white-space:pre-wrap;
font-size:88%}
div.output_area pre{border-left:3px solid #ccd}div.output_stderr pre{background:#fdd}
div.output_error pre{background:#fee}
div.rendered_html img,div.output_area svg,div.output_area img{max-width:100%;height:auto}
a.anchor-link{display:none}table{border-collapse:collapse}td,th{padding:.2em .5em}
code{background:#f2f2ee;padding:0 .2em}
"""


def code_links(chapter):
    """The checkout's Python files the chapter links to, relative to the checkout."""
    base = pathlib.Path(chapter).parent
    text = pathlib.Path(chapter).read_text(encoding="utf-8")
    found = [_source_file(base, target) for bang, _, target in LINK.findall(text) if not bang]
    return [f for f in found if f]


def _source_file(base, target):
    """The Python file of the checkout a link from ``base`` points at, relative to the
    checkout (as ``links.source_page`` takes it); None for any other target."""
    path = (base / target.partition("#")[0]).resolve()
    if path.suffix == ".py" and path.is_file() and path.is_relative_to(links.ROOT):
        return path.relative_to(links.ROOT).as_posix()
    return None


@functools.cache
def _exporter():  # one for the build: its templates compile once
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="basic")


def _page_link(m, chapter_dir, built):
    """A Markdown link of a chapter, as the notebook's page in the manual has it."""
    bang, text, target = m.groups()
    if bang or re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # figures, web addresses, anchors
        return m.group(0)
    file, _, anchor = target.partition("#")
    other = re.fullmatch(r"(\d\d-[\w-]+)\.ipynb", file)  # another chapter
    if other:
        if other.group(1) not in built:
            return text
        return f"[{text}]({other.group(1)}.html{'#' + anchor if anchor else ''})"
    source = _source_file(chapter_dir, file)
    if source:
        return f"[{text}](../{links.source_page(source)})"
    return text  # a file of the checkout the manual does not carry


def write_page(ipynb, target, built=None, chapter_dir=links.ROOT / "tutorials"):
    """``target``: the executed notebook ``ipynb`` as one offline HTML page of the manual,
    placed one level below the manual's index (``notebooks/<chapter>.html``). Links to
    the other chapters in ``built`` (stems; default all) go to their pages, links to the
    checkout's Python files (relative to ``chapter_dir``) to the manual's source pages
    (``links.source_page``: the build writes those of ``code_links``); other links to
    the checkout's files become their text."""
    import nbformat
    from pygments.formatters import HtmlFormatter

    ipynb, target = pathlib.Path(ipynb), pathlib.Path(target)
    built = {p.stem for p in chapters(chapter_dir)} if built is None else built
    nb = copy.deepcopy(nbformat.read(str(ipynb), as_version=4))
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = LINK.sub(lambda m: _page_link(m, chapter_dir, built), cell.source)
    body, _ = _exporter().from_notebook_node(nb)
    title = next((c.source.splitlines()[0].lstrip("# ") for c in nb.cells
                  if c.cell_type == "markdown" and c.source.startswith("# ")), ipynb.stem)
    style = STYLE + HtmlFormatter().get_style_defs(".highlight")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>\n<style>{style}</style></head><body>\n"
        f'<p class="manual">{html.escape(pages.stamp().strip("*"))} &#183; '
        '<a href="../index.html">the manual</a> &#183; <a href="../tutorials.html">'
        f'the tutorials</a> &#183; <a href="{ipynb.name}" download>this notebook '
        f"({html.escape(ipynb.name)})</a></p>\n<main>\n{body}\n</main>\n</body></html>\n",
        encoding="utf-8")
    return target


def tutorials_page(chapters, built=()):
    """The manual's Tutorials page: each chapter's title, and links to its page and its
    notebook where ``built`` (the chapters' stems) has it."""
    items = []
    for path in chapters:
        path = pathlib.Path(path)
        title = html.escape(path.read_text(encoding="utf-8").partition("\n")[0].lstrip("# "))
        if path.stem in built:
            items.append(f'<li><a href="notebooks/{path.stem}.html">{title}</a> '
                         f'(<a href="notebooks/{path.stem}.ipynb" download>{path.stem}.ipynb'
                         "</a>)</li>")
        else:
            items.append(f"<li>{title}</li>")
    if built:
        intro = ("Each chapter of the course (`tutorials/NN-*.md` in the checkout), run as a "
                 "Jupyter notebook when this manual was built: read it here with its "
                 "outputs, or download the notebook to run it in Jupyter or Colab.")
    else:
        intro = ("This build has no notebooks (`python -m mlxref.manual --no-notebooks`): "
                 "the chapters are `tutorials/NN-*.md` in the checkout; `make docs` "
                 "writes them as notebooks and links them here.")
    return (f"# Tutorials\n\n{pages.stamp()}\n\n{intro}\n\n"
            + pages.html_block("<ul class=\"chapters\">\n" + "\n".join(items) + "\n</ul>"))
