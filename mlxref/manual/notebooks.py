"""The tutorial chapters as Jupyter notebooks, executed, checked, and as pages of the manual.

The Markdown chapters (tutorials/NN-*.md) stay the single source. Each
```python block with ``>>>`` prompts becomes code cells (other blocks,
shell commands among them, stay text in the prose): doctest's own parser
reads the examples, and their statements, without the expected output (the
kernel prints its own), go in code cells: a cell ends after each example
that prints something, so each output sits under its statement, and after
each example whose expected output is a ``Traceback``: that cell is tagged
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

``page`` turns an executed notebook into a MyST page of the manual
(``tutorials/<chapter>.md`` in the Sphinx tree), so the chapters have the
manual's look, sidebar and search: the chapter's prose, each code cell and
its outputs under it, figures and drawn outputs as files beside the page;
the notebook's own first cells (what it needs, the display settings) are
left out. Links to chapters go to their pages, links to code to the
manual's source pages (``links.py``). ``tutorials_page`` is the manual's
"Tutorials" page.

Read next: ``__init__.py`` (``build``).
"""

import base64
import doctest
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
    """The Cells of a doctest block: a cell ends after each example that prints
    something or raises, so that each output sits under the statement that printed
    it; with ``each``, after every example (each output checked on its own, as
    doctest checks it)."""
    cells, code, want = [], [], []
    for example in doctest.DocTestParser().get_examples(block):
        if example.options.get(doctest.SKIP):
            continue
        code.append(example.source)
        want.append(example.want if example.exc_msg is None else "")
        if each or example.want or example.exc_msg is not None:
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


def write_notebooks(chapters, out_dir, cwd, run=True, say=lambda message: None):
    """Write each chapter as ``out_dir/<chapter>.ipynb`` (executed if ``run``);
    ``say`` is called with a line as each chapter starts."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for n, path in enumerate(chapters, 1):
        say(f"notebook {n}/{len(chapters)}: {pathlib.Path(path).name}")
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


def _page_link(m, chapter_dir, built):
    """A Markdown link of a chapter, as the chapter's page in the manual has it:
    to another built chapter's page, to the manual's page of a source file
    (raw HTML: Sphinx does not know those pages), or plain text for a file of
    the checkout the manual does not carry."""
    bang, text, target = m.groups()
    if bang or re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # figures, web addresses, anchors
        return m.group(0)
    file, _, anchor = target.partition("#")
    other = re.fullmatch(r"(\d\d-[\w-]+)\.ipynb", file)  # another chapter
    if other:
        if other.group(1) not in built:
            return text
        return f"[{text}]({other.group(1)}.md{'#' + anchor if anchor else ''})"
    source = _source_file(chapter_dir, file)
    if source:
        return f'<a href="../{links.source_page(source)}">{text}</a>'
    return text  # a file of the checkout the manual does not carry


OUTPUT = "```{{code-block}} text\n:class: output{}\n\n{}\n```\n"  # a cell's printed text


def page(ipynb, built=None, chapter_dir=links.ROOT / "tutorials"):
    """(MyST Markdown, {file name: bytes}): the executed notebook ``ipynb`` as a page
    of the manual, for ``tutorials/<chapter>.md`` in the Sphinx tree, so that the
    chapters share the manual's look, sidebar and search. Its title, the version
    stamp and a link to download the notebook; then the chapter's prose and each
    code cell with its outputs under it (the notebook's first cells, what it
    needs and the display settings, are the notebook's, not the page's). Printed
    text and values go in an ``output`` block, an exception as its last line
    (``stderr`` blocks for warnings); figures (attachments) and drawn outputs
    (SVG, PNG) become files in ``<chapter>/``, the dict's keys. Links to the other
    chapters in ``built`` (stems; default all) go to their pages, links to the
    checkout's Python files to the manual's source pages (``links.py``), other
    links to the checkout's files become their text."""
    import nbformat

    ipynb = pathlib.Path(ipynb)
    built = {p.stem for p in chapters(chapter_dir)} if built is None else built
    nb = nbformat.read(str(ipynb), as_version=4)
    files, parts, stem = {}, [], ipynb.stem

    def figure(name, data):
        files[name] = data
        return f"{stem}/{name}"

    for n, cell in enumerate(nb.cells[2:]):  # after the preface and SETUP
        if cell.cell_type == "markdown":
            text = cell.source
            for name, bundle in sorted(cell.get("attachments", {}).items()):
                (kind, data), = bundle.items()
                text = text.replace(f"](attachment:{name})",
                                    f"]({figure(name, base64.b64decode(data))})")
            parts.append(LINK.sub(lambda m: _page_link(m, chapter_dir, built), text) + "\n")
            continue
        parts.append(f"```python\n{cell.source}\n```\n")
        printed = []  # text outputs in a row, shown as one block

        def flush():
            if printed:
                parts.append(OUTPUT.format("", "\n".join(printed)))
                printed.clear()
        for k, out in enumerate(cell.outputs):
            data = out.get("data", {})
            if out.output_type == "stream" and out.name == "stderr":
                flush()
                parts.append(OUTPUT.format(" stderr", out.text.rstrip("\n")))
            elif out.output_type == "stream":
                printed.append(out.text.rstrip("\n"))
            elif out.output_type == "error":
                printed.append(f"{out.ename}: {out.evalue}")
            elif "image/svg+xml" in data or "image/png" in data:
                flush()
                svg = "image/svg+xml" in data
                raw = (data["image/svg+xml"].encode("utf-8") if svg
                       else base64.b64decode(data["image/png"]))
                name = f"out-{n}-{k}.{'svg' if svg else 'png'}"
                parts.append(f"![The output of the cell above]({figure(name, raw)})\n")
            elif "text/plain" in data:
                printed.append(data["text/plain"])
        flush()
    title, _, rest = "\n".join(parts).partition("\n")
    download = (f'This chapter is `tutorials/{stem}.md` in the checkout, run as a notebook '
                f'when the manual was built: <a href="../notebooks/{stem}.ipynb" download>'
                f"download {stem}.ipynb</a> to run it in Jupyter (it needs `mlxref` "
                "importable: `pip install -e .` in a checkout).")
    return f"{title}\n\n{pages.stamp()}\n\n{download}\n{rest}", files


def write_page(ipynb, target, built=None, chapter_dir=links.ROOT / "tutorials"):
    """Write ``page``'s Markdown to ``target`` (``tutorials/<chapter>.md`` of the Sphinx
    tree) and its figures beside it, in ``tutorials/<chapter>/``."""
    text, files = page(ipynb, built, chapter_dir)
    target = pathlib.Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    for name, data in files.items():
        (target.parent / pathlib.Path(ipynb).stem).mkdir(exist_ok=True)
        (target.parent / pathlib.Path(ipynb).stem / name).write_bytes(data)
    return target


def tutorials_page(chapters, built=()):
    """The manual's Tutorials page: each chapter's title, linked to its page where
    ``built`` (the chapters' stems) has it, with its notebook to download; the
    built chapters' pages are in its (hidden) tree, so the sidebar lists them."""
    items = []
    for path in chapters:
        path = pathlib.Path(path)
        title = html.escape(path.read_text(encoding="utf-8").partition("\n")[0].lstrip("# "))
        if path.stem in built:
            items.append(f'<li><a href="tutorials/{path.stem}.html">{title}</a> '
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
                 "writes them as notebooks and makes each a page here.")
    toc = "".join(f"tutorials/{pathlib.Path(p).stem}\n" for p in chapters
                  if pathlib.Path(p).stem in built)
    return (f"# Tutorials\n\n{pages.stamp()}\n\n{intro}\n\n"
            + pages.html_block("<ul class=\"chapters\">\n" + "\n".join(items) + "\n</ul>")
            + (f"\n```{{toctree}}\n:hidden:\n\n{toc}```\n" if toc else ""))
