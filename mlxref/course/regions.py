"""The task regions of the reference source: the one place that reads the markers.

A solution region is a block of lines between a comment line
``# BEGIN TASK 2.2: sin and cos derivatives`` and a comment line
``# END TASK 2.2``, both at the block's own indentation (see
``Sin.derivative`` in mlxref/core/primitives/elementwise.py). A task may have
several regions (2.2 is ``Sin.derivative`` and ``Cos.derivative``); a region
is named by the function that holds it.

Two readers of the markers, for two kinds of source:

- ``find_regions``: the reference (or a student copy), strictly. A marker
  that is malformed, unbalanced or nested is an error, and a task has one title.
- ``submitted_regions``: one file of a submission, tolerantly. Any code may
  sit inside a region (a syntax error included), and markers that do not pair
  up are skipped; the grader matches what it finds to the reference's regions.

Around them, the task table that the course modules share: ``tasks`` (ids,
titles and regions), ``choose`` (the ids of ``--tasks``), ``marker`` (a
task's pytest marker), ``NEEDS`` (tasks whose tests also need another task),
``project_root`` (the instructor's checkout) and ``HIDDEN`` (where its hidden
tests are).

Read next: mlxref/course/assignment.py (list and make), then grader.py.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # mlxref/
# The instructor's hidden tests, relative to the project root: make leaves them
# out, grade runs them, the leak check fails a copy that holds them.
HIDDEN = "tests/course/hidden"

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN TASK (?P<id>\d+\.\d+): (?P<title>\S.*?)\s*$")
_END = re.compile(r"^(?P<indent>[ \t]*)# END TASK (?P<id>\d+\.\d+)\s*$")
_ANY_MARKER = re.compile(r"^[ \t]*# (BEGIN|END) TASK\b")

# A task whose tests cannot avoid another task's code (the checkpoint's
# recomputation *is* a vjp walk). Every other task's tests use only code
# outside the other tasks' regions.
NEEDS = {"3.2": ("2.5",), "6.2": ("4.1",)}


@dataclass(frozen=True)
class Region:
    """One marked block: lines ``begin`` and ``end`` are the marker lines (1-based)."""

    task: str
    title: str
    path: str  # relative to the project root: mlxref/core/...
    function: str  # the qualified name of the function that holds it
    begin: int
    end: int
    indent: str

    @property
    def place(self):
        return f"{self.path}:{self.function}"


def task_key(task_id):
    return tuple(int(p) for p in task_id.split("."))


def marker(task_id):
    """The pytest marker of a task: ``2.3`` -> ``task2_3``."""
    return "task" + task_id.replace(".", "_")


# --- the reference's regions ----------------------------------------------------------


def find_regions(root=None):
    """Every marked region under ``root``/mlxref (default: this package's own), in file order."""
    package = PACKAGE if root is None else Path(root) / "mlxref"
    regions = []
    for path in sorted(package.rglob("*.py")):
        regions += _file_regions(path, path.relative_to(package.parent).as_posix())
    titles = {}
    for r in regions:
        if titles.setdefault(r.task, r.title) != r.title:
            raise ValueError(
                f"[assignment] Task {r.task} has two titles: {titles[r.task]!r} and {r.title!r} "
                f"({r.path}:{r.begin})."
            )
    return regions


def _file_regions(path, relative):
    lines = path.read_text(encoding="utf-8").split("\n")
    if not any(_ANY_MARKER.match(line) for line in lines):
        return []
    functions = _function_spans(ast.parse("\n".join(lines), filename=str(path)))
    regions, open_ = [], None
    for number, line in enumerate(lines, 1):
        if not _ANY_MARKER.match(line):
            continue
        where = f"{relative}:{number}"
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin:
            if open_ is not None:
                raise ValueError(
                    f"[assignment] {where}: BEGIN TASK inside TASK {open_.group('id')}."
                )
            open_, open_line = begin, number
        elif end:
            if open_ is None or end.group("id") != open_.group("id"):
                raise ValueError(
                    f"[assignment] {where}: END TASK {end.group('id')} without its BEGIN."
                )
            if end.group("indent") != open_.group("indent"):
                raise ValueError(f"[assignment] {where}: END TASK is not indented like its BEGIN.")
            regions.append(Region(open_.group("id"), open_.group("title"), relative,
                                  _function_at(functions, open_line), open_line, number,
                                  open_.group("indent")))
            open_ = None
        else:
            raise ValueError(
                f"[assignment] {where}: a marker must read '# BEGIN TASK <id>: <title>' or "
                f"'# END TASK <id>'."
            )
    if open_ is not None:
        raise ValueError(
            f"[assignment] {relative}:{open_line}: TASK {open_.group('id')} has no END."
        )
    return regions


def _function_spans(tree):
    """(first line, last line, qualified name) of every function in a module."""
    spans = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    spans.append((child.lineno, child.end_lineno, name))
                visit(child, name + ".")

    visit(tree, "")
    return spans


def _function_at(spans, line):
    """The qualified name of the innermost function holding ``line`` (a marker's)."""
    inner = [f for f in spans if f[0] < line <= f[1]]
    return max(inner)[2] if inner else "<module>"


# --- a submission's regions -----------------------------------------------------------


class SubmittedRegion:
    """A region of a submitted file, as found by scanning marker lines only (no
    parse of the whole file, which may not be valid Python): its lines, and its
    function (None when the file does not parse outside its regions)."""

    def __init__(self, task, begin, end, indent, lines):
        self.task, self.begin, self.end, self.indent, self.lines = task, begin, end, indent, lines
        self.function = None


def submitted_regions(text):
    """The marked regions of a submitted file, tolerant of any code inside them."""
    lines = text.split("\n")
    found, open_ = [], None
    for number, line in enumerate(lines, 1):
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin and open_ is None:
            open_ = (begin.group("id"), number, begin.group("indent"))
        elif end and open_ is not None and end.group("id") == open_[0]:
            found.append(SubmittedRegion(open_[0], open_[1], number, open_[2],
                                         lines[open_[1]: number - 1]))
            open_ = None
    # The function of each region: the file parsed with every region emptied
    # (a syntax error inside a region does not hide where it is).
    emptied = list(lines)
    for r in reversed(found):
        emptied[r.begin: r.end - 1] = [r.indent + "pass"] * (r.end - 1 - r.begin)
    try:
        spans = _function_spans(ast.parse("\n".join(emptied)))
    except SyntaxError:
        spans = None
    for r in found:
        if spans is not None:
            r.function = _function_at(spans, r.begin)
    return found


# --- the task table -------------------------------------------------------------------


def tasks(regions=None):
    """{task id: (title, [regions])}, ordered by id."""
    regions = find_regions() if regions is None else regions
    out = {}
    for r in sorted(regions, key=lambda r: task_key(r.task)):
        out.setdefault(r.task, (r.title, []))[1].append(r)
    return out


def choose(spec, known, command):
    """The task ids in ``spec`` ("2.1,2.3" or "ALL"), checked against ``known``."""
    if spec.strip().upper() == "ALL":
        return list(known)
    chosen = []
    for item in spec.split(","):
        item = item.strip()
        if item not in known:
            raise ValueError(
                f"[assignment {command}] Unknown task {item!r}; the tasks are "
                f"{', '.join(known)} (see 'mlxref assignment list')."
            )
        if item not in chosen:
            chosen.append(item)
    return sorted(chosen, key=task_key)


def project_root():
    """The source checkout this mlxref was installed from (``pip install -e``)."""
    root = PACKAGE.parent
    if not ((root / "setup.cfg").is_file() or (root / "pyproject.toml").is_file()) or not (
        root / "tests"
    ).is_dir():
        raise ValueError(
            f"[assignment make] {PACKAGE} is not in a source checkout (no setup.cfg and tests/ "
            f"next to it); install the reference with 'pip install -e' to make student copies."
        )
    return root
