"""The tutorial chapters as Jupyter notebooks, executed, with their figures inline.

The Markdown chapters (tutorials/NN-*.md) stay the single source. Each
```python block with ``>>>`` prompts becomes one code cell (other blocks,
shell commands among them, stay text in the prose): the prompts'
statements without the expected output (the kernel prints its own). A
statement marked ``doctest: +SKIP`` is left out; a block whose expected
output is a ``Traceback`` is tagged ``raises-exception``, so the notebook
runs on past it as the chapter does. Figures the prose embeds
(``![...](../diagrams/x.svg)``) become cell attachments, so the notebook
shows them anywhere. ``jupytext`` turns the text into a notebook and
``nbclient`` runs it in a fresh kernel, from the checkout's root. A first
cell makes every expression statement show its value, as the prompts do.

Read next: ``__init__.py`` (``build``).
"""

import base64
import mimetypes
import pathlib
import re

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")


def doctest_to_code(block):
    """(code, raises) from a doctest block."""
    code, raises, skipping = [], False, False
    for line in block.splitlines():
        if line.startswith(">>> "):
            skipping = "doctest: +SKIP" in line
            if not skipping:
                code.append(line[4:])
        elif line.startswith("... ") or line == "...":
            if not skipping:
                code.append(line[4:])
        elif line.startswith(">>>"):
            code.append("")
        elif line.startswith("Traceback"):
            raises = True
    return "\n".join(code), raises


def chapter_text(path):
    """The chapter's Markdown with its doctest blocks turned into code."""
    def replace(m):
        if m.group(1) != "python" or ">>>" not in m.group(2):  # shell commands, listings
            return "```text\n" + m.group(2) + "```\n"
        code, raises = doctest_to_code(m.group(2))
        meta = ' tags=["raises-exception"]' if raises else ""
        return f"```python{meta}\n{code}\n```\n"
    return FENCE.sub(replace, pathlib.Path(path).read_text(encoding="utf-8"))


def notebook(path):
    import jupytext
    import nbformat

    nb = jupytext.reads(chapter_text(path), fmt="md")
    # Every expression statement shows its value, as at the chapter's prompts.
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        'get_ipython().ast_node_interactivity = "all"  # show every value, as >>> does'))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    base = pathlib.Path(path).parent
    for cell in nb.cells:
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

    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def write_notebooks(chapters, out_dir, cwd, run=True):
    """Write each chapter as ``out_dir/<chapter>.ipynb`` (executed if ``run``)."""
    import nbformat

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in chapters:
        nb = notebook(chapter)
        if run:
            execute(nb, cwd)
        target = out_dir / (pathlib.Path(chapter).stem + ".ipynb")
        nbformat.write(nb, str(target))
        written.append(target)
    return written
