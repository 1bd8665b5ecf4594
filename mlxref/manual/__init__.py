"""The mlxref manual: every op and primitive with its rules typeset from the code.

    python -m mlxref.manual [--out build] [--no-notebooks]   (what ``make docs`` runs)

``build`` assembles a Sphinx source tree in ``build/manual-src``: the
hand-written pages and ``conf.py`` from ``tutorials/manual/``, and the pages
``pages.py`` generates from the code. Then the tutorial chapters become
executed notebooks in ``build/notebooks`` (``notebooks.py``), each made a
page of the manual (``tutorials/<chapter>.md``: prose, code, outputs) beside
a copy of the notebook in the tree's ``_extra/notebooks`` (Sphinx copies
``_extra`` as it is), to download. Last, Sphinx with MyST and the Sphinx
Book Theme turns the tree into static HTML in ``build/docs`` (warnings are
errors; no script, font or style is fetched at view time: formulas are
MathML). With ``--no-notebooks`` the Tutorials page lists the chapters and
says the notebooks were not built. ``make docs`` prints a line as each step
starts. Needs the ``docs`` extra (Sphinx, MyST, the Sphinx Book Theme,
jupytext, nbclient, ipykernel) and Graphviz's ``dot``.

``check_coverage`` fails the build when an op or a primitive would have no
entry, an op no description or no example (``examples.py``), or a primitive
no check case to show its rules from; so does an example that prints
something else than its docstring says, and an op
with neither a drawing of its vjp walk nor a stated reason for having none
(``pages.draw_walks``). The modules,
in reading order: ``catalogue.py`` (what is listed), ``rules.py`` (the
formulas), ``links.py`` (code and MLX links), ``pages.py`` (the pages),
``notebooks.py``. Beside the build, ``mlx_docs.py`` runs the code of MLX's
own documentation pages on real MLX and on mlxref, and compares what they
print (``python -m mlxref.manual.mlx_docs MLX_GIT_DIR``).
"""

import argparse
import importlib
import pathlib
import shutil
import sys

from . import catalogue, examples, links, pages
from . import notebooks as nbs

ROOT = links.ROOT
SOURCES = ROOT / "tutorials" / "manual"
CHAPTERS = nbs.chapters()


class MissingEntry(ValueError):
    pass


def check_coverage(ops, prims, written):
    """Raise MissingEntry naming what has no entry: an op or a primitive not on
    any written page (``written``: {family: page text}), or a primitive no
    symbolic case uses (its rules could not be shown)."""
    text = "\n".join(written.values())
    missing = [f"op {op.name}" for op in ops if f"({pages.op_label(op.name)})=" not in text]
    missing += [f"primitive {p.__name__}" for p in prims
                if f"({pages.prim_label(p)})=" not in text]
    missing += [f"primitive {n} (no check case: add one in mlxref/symbolic/)"
                for n in catalogue.missing_cases(prims)]
    missing += [f"op {op.name} (its docstring has no {examples.lacks(op)})"
                for op in ops if examples.lacks(op)]
    if missing:
        raise MissingEntry("the manual has no entry for " + ", ".join(missing))


def _quiet(message):
    pass


def _say(message):
    """``make docs``'s progress: one line per step, as it starts."""
    print(f"mlxref manual: {message}", file=sys.stderr, flush=True)


def generate(src, primitives=None, verdicts=None, mlx_src=None, say=_quiet):
    """Write the Sphinx source tree into ``src``. ``primitives``: only these
    and the ops that build them (all by default: the whole manual). ``verdicts``:
    check-rules' results by name (default: run check-rules on them). ``say``:
    called with a line as each step starts (``_say`` prints it)."""
    from .. import cli, symbolic

    src = pathlib.Path(src)
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(SOURCES, src)
    ops, prims = catalogue.public_ops(), catalogue.primitives()
    if primitives is not None:  # these primitives, and the ops that build one of them
        ops = [op for op in ops if set(op.primitives) & set(primitives)]
        prims = [p for p in prims if p in primitives]
    if verdicts is None:
        say(f"running the rules of {len(prims)} primitives on SymPy symbols (check-rules)")
        verdicts = {r.primitive: r for r in symbolic.check_all(primitives=prims)}
    mlx_lines = links.mlx_lines(mlx_src)
    say(f"running the examples of {len(ops)} ops")
    failed = examples.check(ops)
    if failed:
        raise MissingEntry("an op's example prints something else than its docstring says: "
                           + "; ".join(map(str, failed)))
    say(f"drawing the vjp walks of {len(ops)} ops")
    try:
        walks = pages.draw_walks(ops, prims, src / "families" / "walks")
    except catalogue.NoSample as e:  # an op with neither a drawing nor a reason
        raise MissingEntry(f"the manual has no drawing for {e}") from None
    say(f"writing the pages of {len(ops)} ops and {len(prims)} primitives "
        "(formulas from the rules run on symbols)")
    written, source_files = {}, []
    known = {pages.op_label(op.name) for op in ops} | {pages.prim_label(p) for p in prims}
    families = catalogue.families(ops, prims)
    for family, (fops, fprims) in families.items():
        for p in fprims:
            source_files += [s[2] for s in links.rule_sources(p)]
        written[family] = pages.family_page(family, fops, fprims, verdicts, mlx_lines, walks,
                                             known)
        (src / "families" / f"{family}.md").write_text(written[family], encoding="utf-8")
    check_coverage(ops, prims, written)
    (src / "families" / "index.md").write_text(pages.family_index(families), encoding="utf-8")
    names = [m.stem for m in sorted((ROOT / "mlxref/core/transforms").glob("*.py"))
             if m.stem != "__init__"]
    if set(names) != set(pages.TRANSFORMS):
        raise MissingEntry("the manual's transforms (pages.TRANSFORMS) are not the modules of "
                           f"mlxref/core/transforms: {sorted(set(names) ^ set(pages.TRANSFORMS))}")
    (src / "transforms").mkdir()
    drawn = pages.draw_transform_walks(src / "transforms" / "walks")
    for name in pages.TRANSFORMS:
        module = importlib.import_module(f"mlxref.core.transforms.{name}")
        (src / "transforms" / f"{name}.md").write_text(
            pages.transform_page(name, module, mlx_src, drawn[name]), encoding="utf-8")
    source_files += pages.transform_sources()
    _index(src / "transforms" / "index.md", "Transforms", list(pages.TRANSFORMS))
    (src / "api").mkdir()
    for name in pages.PACKAGES:
        module = importlib.import_module(f"mlxref.{name}")
        (src / "api" / f"{name}.md").write_text(pages.package_page(module), encoding="utf-8")
    _index(src / "api" / "index.md", "nn, optimizers, utils, testing", list(pages.PACKAGES))
    (src / "cli.md").write_text(pages.cli_page(cli.build_parser()), encoding="utf-8")
    (src / "differs.md").write_text(pages.differs_page(ROOT / "README.md"), encoding="utf-8")
    (src / "tutorials.md").write_text(nbs.tutorials_page(CHAPTERS), encoding="utf-8")
    _stamp_hand_written(src)
    links.write_source_pages(src / "_extra", source_files, pages.stamp().strip("*"))
    return ops, prims


def _index(path, title, entries):
    toc = "\n".join(entries)
    path.write_text(f"# {title}\n\n{pages.stamp()}\n\n```{{toctree}}\n:maxdepth: 1\n\n{toc}\n```\n",
                    encoding="utf-8")


def _stamp_hand_written(src):
    """Put the version line under the title of each page copied from tutorials/manual."""
    for page in sorted(SOURCES.glob("*.md")):
        target = src / page.name
        title, _, rest = target.read_text(encoding="utf-8").partition("\n")
        target.write_text(f"{title}\n\n{pages.stamp()}\n{rest}", encoding="utf-8")


def sphinx(src, out):
    """Sphinx's HTML build, warnings as errors; raises on failure."""
    from sphinx.cmd.build import build_main

    status = build_main(["-W", "--keep-going", "-q", "-b", "html", "-d",
                         str(pathlib.Path(out).parent / "manual-doctrees"), str(src), str(out)])
    if status:
        raise RuntimeError(f"sphinx-build failed ({status}): see the warnings above")


def build(out="build", notebooks=True, primitives=None, verdicts=None, say=_quiet):
    """The manual in ``out/docs``. ``notebooks``: True for every chapter, False for none,
    or a list of chapters: each is executed into ``out/notebooks/<chapter>.ipynb``, then
    written as the page ``tutorials/<chapter>.md`` of the Sphinx tree, beside a copy of
    the notebook in its ``_extra/notebooks`` (Sphinx copies them into ``docs/notebooks``),
    and listed on the Tutorials page. ``say``: as ``generate``'s."""
    out = pathlib.Path(out)
    src = out / "manual-src"
    generate(src, primitives, verdicts, say=say)
    chapters = CHAPTERS if notebooks is True else list(notebooks or [])
    if chapters:
        written = nbs.write_notebooks(chapters, out / "notebooks", ROOT, say=say)
        (src / "_extra" / "notebooks").mkdir(parents=True, exist_ok=True)
        built = {p.stem for p in written}
        for ipynb in written:
            shutil.copy(ipynb, src / "_extra" / "notebooks" / ipynb.name)
            nbs.write_page(ipynb, src / "tutorials" / (ipynb.stem + ".md"), built)
        code = [f for chapter in chapters for f in nbs.code_links(chapter)]
        links.write_source_pages(src / "_extra", code, pages.stamp().strip("*"))
        (src / "tutorials.md").write_text(
            nbs.tutorials_page(CHAPTERS, built), encoding="utf-8")
    say("Sphinx: writing the HTML")
    sphinx(src, out / "docs")
    return out / "docs" / "index.html"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mlxref.manual",
                                     description="Build the mlxref manual (make docs).")
    parser.add_argument("--out", default="build", help="the build directory (default: build)")
    parser.add_argument("--no-notebooks", action="store_true",
                        help="skip writing and executing the tutorial notebooks")
    args = parser.parse_args(argv)
    try:
        index = build(args.out, notebooks=not args.no_notebooks, say=_say)
    except ImportError as e:
        print(f"mlxref manual: error: {e}: the manual needs the docs extra "
              "(pip install -e '.[docs]', Python 3.11 or later)", file=sys.stderr)
        return 2
    except (MissingEntry, RuntimeError) as e:
        print(f"mlxref manual: error: {e}", file=sys.stderr)
        return 2
    print(f"the manual: {index}")
    return 0
