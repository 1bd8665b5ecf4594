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
- ``submitted_regions``: one file of a submission (read by
  ``read_submitted``: a regular UTF-8 file, no links, at most
  ``MAX_SUBMITTED_BYTES``), strictly: a marker is the exact ASCII line, a line
  that only looks like one, markers that do not pair up and control
  characters in a region are problems of the task they concern. Any code may
  sit inside a region (a syntax error included); the grader matches the
  regions to the reference's.

Around them, the task table that the course modules share: ``tasks`` (ids,
titles and regions), ``choose`` (the ids of ``--tasks``), ``marker`` (a
task's pytest marker), ``NEEDS`` (tasks whose tests also need another task),
``project_root`` (the instructor's checkout) and ``HIDDEN`` (where its hidden
tests are).

Read next: mlxref/course/assignment.py (list and make), then grader.py.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # mlxref/
# The instructor's hidden tests, relative to the project root: make leaves them
# out, grade runs them, the leak check fails a copy that holds them.
HIDDEN = "tests/course/hidden"

# A marker line: ASCII digits, spaces and tabs (a submitted one must also
# hold no ``_UNSAFE`` character, ``submitted_regions``).
_BEGIN = re.compile(
    r"^(?P<indent>[ \t]*)# BEGIN TASK (?P<id>[0-9]+\.[0-9]+): (?P<title>\S.*?)[ \t]*$")
_END = re.compile(r"^(?P<indent>[ \t]*)# END TASK (?P<id>[0-9]+\.[0-9]+)[ \t]*$")
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


# --- a submission's files -------------------------------------------------------------

# The largest submitted file the grader reads: generous for a course's source
# file (mlxref's largest is under 100 KB), small enough to read at once.
MAX_SUBMITTED_BYTES = 1 << 20


class Refused(ValueError):
    """Why a submitted file, or a task's regions in it, cannot be graded: one line."""


def read_submitted(root, relative):
    """The text of the submitted file ``root``/``relative`` (a posix path), as data.

    Only a regular file with one link, reached without a symbolic link on its
    path inside ``root``, of at most ``MAX_SUBMITTED_BYTES`` and in UTF-8 is
    read; anything else raises ``Refused`` with the reason ("it" is the file).
    Each step of the path is opened with ``O_NOFOLLOW`` relative to the
    directory before it and the file is checked again on its open descriptor,
    so a link swapped in between a check and the read is refused too;
    ``O_NONBLOCK`` keeps a FIFO from blocking the open, and the read stops
    after the cap (``/dev/zero``). A UTF-8 byte-order mark is dropped, as
    Python drops it.
    """
    parts = relative.split("/")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    data, fd = b"", None
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        for k, name in enumerate(parts):
            last = k == len(parts) - 1
            here = "it" if last else "/".join(parts[: k + 1])
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise Refused(f"{here} does not exist") from None
            if stat.S_ISLNK(info.st_mode):
                raise Refused(f"{here} is a symbolic link; the grader follows no links")
            if not last and not stat.S_ISDIR(info.st_mode):
                raise Refused(f"{here} is not a directory")
            if last and not stat.S_ISREG(info.st_mode):
                raise Refused(f"it is {_kind(info.st_mode)}, not a regular file")
            opened = os.open(name, flags | (0 if last else os.O_DIRECTORY), dir_fd=fd)
            os.close(fd)
            fd = opened
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"it is {_kind(info.st_mode)}, not a regular file")
        if info.st_nlink != 1:
            raise Refused(f"it has {info.st_nlink} hard links; the grader reads only a file "
                          f"of its own")
        while len(data) <= MAX_SUBMITTED_BYTES:
            chunk = os.read(fd, MAX_SUBMITTED_BYTES + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as exc:  # ELOOP: a link swapped in since the check; EACCES ...
        raise Refused(f"it cannot be read: {exc.strerror}") from None
    finally:
        if fd is not None:
            os.close(fd)
    if len(data) > MAX_SUBMITTED_BYTES:
        raise Refused(f"it holds more than {MAX_SUBMITTED_BYTES} bytes, the cap on a "
                      f"submitted file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"it is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                      f"{exc.start})") from None
    return text[1:] if text.startswith("\ufeff") else text


def _kind(mode):
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "a special file"


# --- a submission's regions -----------------------------------------------------------

# What a submitted region and its markers may not hold: control characters
# (but the tab), which Python and a reader of lines read differently (a form
# feed resets Python's count of indentation; \v, \x1c-\x1e, \x85, U+2028 and
# U+2029 end a line for str.splitlines, not for Python; Python refuses NUL),
# and the bidirectional overrides, which show a reader other code than runs.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_NAMES = {"\x00": "NUL", "\x0b": "vertical tab", "\x0c": "form feed",
                  "\x85": "next line", "\x1c": "file separator", "\x1e": "record separator"}

# Letters of Cyrillic and Greek that look like the Latin ones of BEGIN, END
# and TASK (NFKC folds the fullwidth and mathematical forms; any other
# non-ASCII letter counts as a lookalike of any letter, ``_looks_like_marker``).
_CONFUSABLES = str.maketrans({
    "\u0410": "A", "\u0430": "a", "\u0412": "B", "\u0415": "E", "\u0435": "e",
    "\u041a": "K", "\u043a": "k", "\u041d": "H", "\u0422": "T", "\u0442": "t",
    "\u0405": "S", "\u0455": "s", "\u0406": "I", "\u0456": "i", "\u04c0": "I",
    "\u050c": "G", "\u0501": "d", "\u0391": "A", "\u0392": "B", "\u0395": "E",
    "\u0399": "I", "\u039a": "K", "\u039d": "N", "\u03a4": "T", "\u03b9": "i",
    "\u03ba": "k", "\u03bd": "v", "\u0261": "g",
})


def _word(word):
    return "".join(f"[{c}~]" for c in word)


_LOOKALIKE = re.compile(rf"(?<![a-z~])(?P<word>{_word('begin')}|{_word('end')})"
                        rf"[^a-z0-9~]*(?P<task>{_word('task')})(?![a-z~])")


def _looks_like_marker(line):
    """Whether ``line`` reads "begin task" or "end task" to a person: any case,
    any spacing and punctuation, invisible characters dropped, homoglyphs
    folded. Each word must keep one ASCII letter (a comment in another script
    followed by "task" is no marker)."""
    folded = unicodedata.normalize("NFKC", line).translate(_CONFUSABLES)
    folded = "".join(
        c if c.isascii() else "~" if c.isalpha() else c
        for c in folded if unicodedata.category(c) not in ("Cc", "Cf")
    ).lower()
    return any(m.group("word").strip("~") and m.group("task").strip("~")
               for m in _LOOKALIKE.finditer(folded))


def _named(char):
    name = _CONTROL_NAMES.get(char) or unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name.lower()})" if name else "")


def _not_a_marker(line):
    """Why a line that looks like a marker is not one."""
    unsafe = _UNSAFE.search(line)
    if unsafe:
        return f"it holds the character {_named(unsafe.group())}"
    odd = [c for c in line if not c.isascii()]
    if odd:
        return f"it holds the non-ASCII character {odd[0]!r}, {_named(odd[0])}"
    return "it is not written exactly as a marker"


class SubmittedRegion:
    """A region of a submitted file, as found by scanning marker lines only (no
    parse of the whole file, which may not be valid Python): its lines, and its
    function (None when the file does not parse outside its regions)."""

    def __init__(self, task, begin, end, indent, lines):
        self.task, self.begin, self.end, self.indent, self.lines = task, begin, end, indent, lines
        self.function = None


class Submitted:
    """A submitted file's regions, and the problems of its markers: ``problems``
    is {task id, or None for every task of the file: [(line, message)]}."""

    def __init__(self, regions, problems):
        self.regions, self.problems = regions, problems

    def problems_of(self, task_id):
        """The messages (``line N: ...``) that fail ``task_id`` in this file, by line."""
        found = self.problems.get(task_id, []) + self.problems.get(None, [])
        return [message for _, message in sorted(found)]


def submitted_regions(text):
    """The marked regions of a submitted file, read strictly (a ``Submitted``).

    The file's lines are Python's: CRLF and a lone CR end a line as LF does
    (so a file saved on Windows grades), and nothing else does. A marker line
    is exactly the reference's ASCII form, ``# BEGIN TASK <id>: <title>`` or
    ``# END TASK <id>``, alone on its line. These fail the task they concern
    (or, naming none, every task of the file), each with a one-line message:
    a line that looks like a marker and is not one (a homoglyph, ``#BEGIN``,
    other spacing, a control character, a marker after code or in a string);
    a control character inside a region (``_UNSAFE``); a BEGIN inside an
    open region, an END without its BEGIN or with another id, a BEGIN with no
    END; a marker that Python reads as part of a string. The code inside a
    region may be anything else, a syntax error included.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found, open_, problems = [], None, {}

    def problem(number, message, *task_ids):
        for task_id in task_ids or (None,):
            problems.setdefault(task_id, []).append((number, f"line {number}: {message}"))

    for number, line in enumerate(lines, 1):
        begin, end = (None, None) if _UNSAFE.search(line) else (_BEGIN.match(line),
                                                                 _END.match(line))
        if begin:
            if open_ is not None:
                problem(number, f"BEGIN TASK {begin.group('id')} inside the TASK {open_[0]} "
                        f"region opened at line {open_[1]}", open_[0], begin.group("id"))
            open_ = (begin.group("id"), number, begin.group("indent"))
        elif end:
            if open_ is None:
                problem(number, f"END TASK {end.group('id')} without a BEGIN", end.group("id"))
            elif end.group("id") != open_[0]:
                problem(number, f"END TASK {end.group('id')} closes the TASK {open_[0]} region "
                        f"opened at line {open_[1]}", open_[0], end.group("id"))
            else:
                found.append(SubmittedRegion(open_[0], open_[1], number, open_[2],
                                             lines[open_[1]: number - 1]))
            open_ = None
        elif _looks_like_marker(line):
            named = re.search(r"[0-9]+\.[0-9]+", unicodedata.normalize("NFKC", line))
            tasks_ = {named.group()} if named else set()
            if open_ is not None:
                tasks_.add(open_[0])
            problem(number, f"this line looks like a task marker but is not one: "
                    f"{_not_a_marker(line)}; a marker line reads exactly "
                    f"'# BEGIN TASK <id>: <title>' or '# END TASK <id>'", *sorted(tasks_))
        elif open_ is not None and _UNSAFE.search(line):
            problem(number, f"the character {_named(_UNSAFE.search(line).group())} in the "
                    f"TASK {open_[0]} region; a region holds printable text and tabs only",
                    open_[0])
    if open_ is not None:
        problem(open_[1], f"BEGIN TASK {open_[0]} has no END", open_[0])
    # The function of each region: the file parsed with every region emptied
    # (a syntax error inside a region does not hide where it is).
    emptied = list(lines)
    for r in reversed(found):
        emptied[r.begin: r.end - 1] = [r.indent + "pass"] * (r.end - 1 - r.begin)
    try:
        tree = ast.parse("\n".join(emptied))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None:
        spans = _function_spans(tree)
        strings = [(node.lineno, node.end_lineno) for node in ast.walk(tree)
                   if isinstance(node, (ast.Constant, ast.JoinedStr))
                   and isinstance(getattr(node, "value", ""), (str, bytes))
                   and node.end_lineno > node.lineno]
        for r in found:
            r.function = _function_at(spans, r.begin)
            for number in (r.begin, r.end):
                if any(first <= number <= last for first, last in strings):
                    problem(number, f"this TASK {r.task} marker is inside a string, not a "
                            f"comment", r.task)
    return Submitted(found, problems)


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
