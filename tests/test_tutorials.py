"""The tutorials run: every tutorials/*.md is a doctest, and what it cites exists.

Three checks per Markdown file in tutorials/:

- **Doctests.** Every ```python block with ``>>>`` prompts runs, and its output
  must match (ELLIPSIS and NORMALIZE_WHITESPACE, nothing else), so no printed
  number can drift. A chapter (``NN-*.md`` and ``common-mistakes.md``) must
  hold at least one example; the index and guides may hold none. Where the
  docs extra is installed, the numbered chapters run once, as notebooks, in
  tests/manual/test_manual.py (each in its own kernel, its cells' outputs checked
  with doctest's checker and these flags): that run is their doctest, and
  this file runs doctest on the other files.
- **Citations.** Code is cited as ``path/to/file.py:name`` inside backticks,
  where ``name`` is a top-level function or class of that file, or
  ``Class.method`` (defined in that class's own body, not inherited). The file
  must exist and define the name; this is checked with ``ast``, without
  importing anything. A link around a citation must point at its file.
- **Images and links.** Every relative link and image target must exist,
  and so must the heading a ``#anchor`` names (as GitHub spells it). A
  numbered chapter embeds at least one figure from diagrams/ and cites at
  least one function.

The doctests need neither matplotlib nor Graphviz. The cycle collector is
paused while a file runs (after a collection), so that garbage from earlier
tests cannot be freed in the middle of a memory measurement; what the
worker's earlier test files left is frozen (``support.frozen_heap``), so
that collection is quick.
"""

import ast
import doctest
import gc
import pathlib
import re

import pytest

from support import chapters_run_as_notebooks, frozen_heap  # noqa: F401  (the fixture)

ROOT = pathlib.Path(__file__).resolve().parent.parent
TUTORIALS = ROOT / "tutorials"
FILES = sorted(TUTORIALS.glob("*.md"))
# the numbered chapters' doctests are their notebook runs where those run
# (tests/manual/test_manual.py)
DOCTESTS = [p for p in FILES if not (chapters_run_as_notebooks() and re.match(r"\d\d-", p.name))]

# `mlxref/core/transforms/vjp.py:_vjp`, `mlxref/core/primitives/shape.py:Broadcast.vjp`
CITATION = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.py):([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)`")
# [text](target) and ![alt](target); the target ends at whitespace or ")"
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.MULTILINE | re.DOTALL)


def is_chapter(path):
    return bool(re.match(r"\d\d-", path.name)) or path.name == "common-mistakes.md"


def prose(path):
    """The file's text outside fenced code blocks."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def citations(path):
    return CITATION.findall(prose(path))


def links(path):
    """(is_image, text, target) for every Markdown link and image outside code."""
    return [(bang == "!", text, target) for bang, text, target in LINK.findall(prose(path))]


def anchors(md_path):
    """The anchors GitHub gives the headings of a Markdown file.

    GitHub lowercases a heading's text, drops everything but letters,
    digits, spaces, hyphens and underscores, turns spaces into hyphens, and
    numbers repeats (``-1``, ``-2``...).
    """
    found, counts = set(), {}
    for line in prose(md_path).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def defined_names(py_path):
    """Top-level function and class names, and ``Class.method`` for methods."""
    tree = ast.parse(py_path.read_text(encoding="utf-8"), filename=str(py_path))
    names = set()
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in tree.body:
        if isinstance(node, defs):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, defs):
                    names.add(f"{node.name}.{item.name}")
    return names


def test_there_are_tutorials():
    names = {p.name for p in FILES}
    assert "README.md" in names
    assert "common-mistakes.md" in names
    assert sum(1 for p in FILES if re.match(r"\d\d-", p.name)) >= 7


@pytest.mark.usefixtures("frozen_heap")  # so this collection walks only this file's objects
@pytest.mark.parametrize("path", DOCTESTS, ids=[p.name for p in DOCTESTS])
def test_doctests(path):
    gc.collect()
    gc.disable()
    try:
        result = doctest.testfile(
            str(path),
            module_relative=False,
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
            verbose=False,
        )
    finally:
        gc.enable()
    if is_chapter(path):
        assert result.attempted > 0, f"{path.name} has no doctest examples"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {path.name}"


@pytest.mark.parametrize("path", FILES + [ROOT / "README.md"],
                         ids=[p.name for p in FILES] + ["the top README.md"])
def test_citations_exist(path):
    missing = []
    cache = {}
    for file, name in citations(path):
        py = ROOT / file
        if not py.is_file():
            missing.append(f"{file}:{name} (no such file)")
            continue
        if file not in cache:
            cache[file] = defined_names(py)
        if name not in cache[file]:
            missing.append(f"{file}:{name} (not defined there)")
    assert not missing, f"{path.name} cites code that does not exist: {missing}"
    if re.match(r"\d\d-", path.name):
        assert citations(path), f"{path.name} cites no code"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_links_and_images_exist(path):
    broken = []
    for is_image, text, target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path.resolve()
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target} (no such heading)")
        cited = CITATION.fullmatch(text)
        if cited and resolved != (ROOT / cited.group(1)).resolve():
            broken.append(f"{text} links to {target}")
    assert not broken, f"{path.name} has broken links or images: {broken}"
    if re.match(r"\d\d-", path.name):
        figures = [t for img, _, t in links(path) if img and "diagrams/" in t]
        assert figures, f"{path.name} embeds no figure from diagrams/"


def test_citation_checker_catches_a_missing_name():
    """The checker itself: a real method passes, an inherited or invented one does not."""
    names = defined_names(ROOT / "mlxref/core/primitives/shape.py")
    assert "Broadcast.vjp" in names
    assert "Broadcast.nonexistent" not in names
    elementwise = defined_names(ROOT / "mlxref/core/primitives/elementwise.py")
    assert "Unary.vjp" in elementwise and "Sin.vjp" not in elementwise
    text = "see `mlxref/core/transforms/vjp.py:_vjp` and `mlxref/core/primitives/shape.py:Broadcast.vjp`"
    assert CITATION.findall(text) == [
        ("mlxref/core/transforms/vjp.py", "_vjp"),
        ("mlxref/core/primitives/shape.py", "Broadcast.vjp"),
    ]
