"""A submission is data: each attack through the submission's files, refused (issue 29).

The grader reads a submission's files as text and nothing else: regular
UTF-8 files of at most ``regions.MAX_SUBMITTED_BYTES``, never through a
symbolic link (of the file or of a directory above it), never a FIFO, a
socket or a device (mlxref/course/regions.py, ``read_submitted``). The task
regions in that text are read strictly (``submitted_regions``): a marker line
is exactly the reference's ASCII form, a line that looks like a marker but is
not one is reported, markers nest and pair or the task fails, and a region
holds no control character that Python and the region reader could read
differently. CRLF and lone CR line ends are read as Python reads them, so an
honest file saved on Windows grades.

Each problem is found while the submission is read, before anything runs,
and ``grade`` reports it as the task's one-line message: the one
``grader.splice`` raises. So the tables (control characters, lookalike
markers, markers that do not nest) check each case's message on
``grader.splice`` alone, and every attack and every kind of problem is also
graded end to end, beside an honest task that must keep its points, in a
grade that must return within its time (``graded``). The attacks on whole
files sit in different files of two submissions, one kind of region problem
in each file of a third (a file's problems concern the tasks of that file
only), so that three grades serve them all; the honest files with Windows or
old Mac line ends, the lone CR and the region inside a string are graded on
their own.
"""

import os
import shutil
import socket
import threading

import pytest
from course.test_grader import build_reference, region, submit, table
from support import computed_once

from mlxref.course import grader, regions

ELEMENTWISE = "mlxref/core/primitives/elementwise.py"  # tasks 1.1, 2.2, 2.3 ...
REDUCTION = "mlxref/core/primitives/reduction.py"  # task 1.2 ...
SHAPE = "mlxref/core/primitives/shape.py"  # task 4.3 ...
BASE = "mlxref/core/primitives/base.py"  # task 5.1
CUSTOM = "mlxref/core/primitives/custom.py"  # task 6.1
VJP = "mlxref/core/transforms/vjp.py"  # task 4.1
JVP = "mlxref/core/transforms/jvp.py"  # task 4.2
CHECKPOINT = "mlxref/core/transforms/checkpoint.py"  # task 6.2

VJP_TEST = '''
import pytest

import mlxref.core as mx
from course import programs
from mlxref.course.judge import run
from support import close


@pytest.mark.task4_1
def test_grad_of_a_sum_of_squares():
    got = run(programs.grad_of_sum_of_squares, mx.array([1.0, 2.0])).tolist()
    assert close(got, [2.0, 4.0]), f"grad of sum(x * x) at [1, 2]: expected [2, 4], received {got}"
'''

VJP_PROGRAM = '''

def grad_of_sum_of_squares(x):
    import mlxref.core as mx

    return mx.grad(lambda x: (x * x).sum())(x)
'''


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The throwaway instructor checkout of test_grader.py, with a test of task
    4.1 too: a task in a file of its own, graded honestly beside each attack."""
    root = build_reference(tmp_path_factory.mktemp("instructor"))
    (root / "tests" / "test_vjp_task.py").write_text(VJP_TEST)
    with open(root / "tests" / "course" / "programs.py", "a") as f:
        f.write(VJP_PROGRAM)
    return root


def honest(directory, reference, *paths):
    """A submission at ``directory`` holding the reference's own ``paths``: its answers."""
    for path in paths:
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(reference / path, directory / path)
    return directory


def graded(submission, reference, spec, limit=240):
    """The grade of ``spec``, which must return within ``limit`` seconds (a
    FIFO or /dev/zero must not hang the grader)."""
    out = {}

    def run():
        try:
            out["results"] = grader.grade(submission, spec, reference=reference,
                                          timeout=120)[0]
        except BaseException as exc:  # noqa: B036  (reported below)
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"the grade of {spec} did not return in {limit} s"
    assert "error" not in out, f"the grader crashed: {out.get('error')!r}"
    return out["results"]


def refused(results, task_id, *words, others=()):
    """Task ``task_id`` failed with one message, one line, holding ``words``;
    the tasks in ``others`` passed with full marks."""
    r = results[task_id]
    assert not r["passed"] and r["points"] == 0 and r["tests"] == 0, r
    (message,) = r["messages"]
    assert "\n" not in message, message
    for w in words:
        assert w in message, message
    for other in others:
        assert results[other]["passed"], results[other]
        assert results[other]["points"] == results[other]["max_points"]
    return message


def problem(submission, reference, task_id="2.3"):
    """The one-line reason ``grade`` gives for ``task_id`` of ``submission``
    when reading it refuses the task: what ``grader.splice`` raises."""
    with pytest.raises(grader.Problem) as info:
        grader.splice(task_id, table(reference)[task_id][1], reference, submission)
    message = str(info.value)
    assert "\n" not in message, message
    return message


def lines_of(reference, path=ELEMENTWISE):
    return (reference / path).read_text().split("\n")


def write(submission, path, text):
    (submission / path).parent.mkdir(parents=True, exist_ok=True)
    (submission / path).write_text(text, newline="")
    return submission


def changed(submission, reference, task_id, function, change, *args):
    """Write the reference's file of ``task_id``'s region in ``function`` into
    ``submission`` with ``change(lines, region, *args)`` made to it; returns
    the line ``change`` says the problem is at."""
    r = region(reference, task_id, function)
    lines = lines_of(reference, r.path)
    at = change(lines, r, *args)
    write(submission, r.path, "\n".join(lines))
    return at


# --- the files -----------------------------------------------------------------------
# Each attack on a whole file, in a file of its own: tasks of different files are
# read apart. Two submissions hold them (a directory linked takes all of
# mlxref/core/primitives); each is graded once, with an honest task 4.1 beside.


def _linked(sub, reference, path, target):
    (sub / path).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(reference / path if target == "reference" else target, sub / path)


def _special(sub, reference, path, kind):
    target = sub / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        try:
            server.bind(str(target))
        except OSError:  # a path too long for a socket's address
            return False
        finally:
            server.close()
    else:
        target.mkdir()
    return True


def _hard_linked(sub, reference, path):
    (sub / path).parent.mkdir(parents=True, exist_ok=True)
    os.link(reference / path, sub / path)


def _oversized(sub, reference, path):
    write(sub, path, (reference / path).read_text() + "#" * regions.MAX_SUBMITTED_BYTES + "\n")


def _not_utf8(sub, reference, path):
    data = (reference / path).read_bytes()
    (sub / path).parent.mkdir(parents=True, exist_ok=True)
    (sub / path).write_bytes(data[:100] + b"\xff\xfe" + data[100:])


# attack: (submission, task, file, how it is made, what the message says)
FILES = {
    # On main the link was followed: the reference's answer earned full marks.
    "a link to the reference's file": (
        "links", "2.3", ELEMENTWISE, lambda s, r, p: _linked(s, r, p, "reference"),
        ["symbolic link"]),
    # On main /dev/zero was read until the grader died of a MemoryError.
    "a link to /dev/zero": (
        "directory", "6.2", CHECKPOINT, lambda s, r, p: _linked(s, r, p, "/dev/zero"),
        ["symbolic link"]),
    # A link higher up the path: mlxref/core/primitives -> the reference's.
    "a directory linked to the reference's": (
        "directory", "2.3", ELEMENTWISE,
        lambda s, r, p: os.symlink(r / "mlxref/core/primitives", s / "mlxref/core/primitives"),
        ["mlxref/core/primitives is a symbolic link"]),
    "a hard link to the reference's file": (
        "directory", "4.2", JVP, _hard_linked, ["hard links"]),
    # On main a FIFO hung the grader (open waits for a writer).
    "a FIFO": ("links", "1.2", REDUCTION, lambda s, r, p: _special(s, r, p, "fifo"),
               ["a FIFO", "not a regular file"]),
    "a socket": ("links", "4.3", SHAPE, lambda s, r, p: _special(s, r, p, "socket"),
                 ["a socket", "not a regular file"]),
    "a directory": ("links", "5.1", BASE, lambda s, r, p: _special(s, r, p, "directory"),
                    ["a directory", "not a regular file"]),
    "an oversized file, read only to the cap": (
        "links", "6.1", CUSTOM, _oversized, ["more than", "bytes"]),
    "bytes that are not UTF-8": (
        "links", "4.2", JVP, _not_utf8, ["not UTF-8", "byte 0xff at offset 100"]),
}


def _made(attack):
    """Whether this machine can make the attack's file."""
    return attack != "a link to /dev/zero" or os.path.exists("/dev/zero")


@pytest.fixture(scope="module")
def files_graded(tmp_path_factory, reference):
    """{submission: (its grade, the attacks it holds)}: each submission of
    ``FILES`` graded once per test run, 4.1 honest beside its attacks."""
    def grade_all():
        out = {}
        for name in sorted({a[0] for a in FILES.values()}):
            sub = honest(tmp_path_factory.mktemp(name) / "sub", reference, VJP)
            made = []
            for attack, (where, _, path, how, _) in FILES.items():
                if where == name and _made(attack) and how(sub, reference, path) is not False:
                    made.append(attack)
            spec = ",".join(sorted({FILES[a][1] for a in made}, key=regions.task_key) + ["4.1"])
            out[name] = (graded(sub, reference, spec), made)
        return out

    return computed_once(tmp_path_factory, "submission_files_attacks", grade_all)


@pytest.mark.parametrize("attack", list(FILES))
def test_a_file_that_is_not_plain_text_fails_its_task_alone(files_graded, attack):
    where, task_id, path, _, words = FILES[attack]
    results, made = files_graded[where]
    if attack not in made:
        pytest.skip(f"cannot make {attack} here")
    refused(results, task_id, f"cannot grade {path}: ", *words, others=["4.1"])


# --- line ends ------------------------------------------------------------------------


ENDS = {"\r\n": (ELEMENTWISE, ["1.1", "2.3"]), "\r": (VJP, ["4.1"])}  # end: (file, its tasks)


@pytest.fixture(scope="module")
def ends_graded(tmp_path_factory, reference):
    def grade_all():
        sub = tmp_path_factory.mktemp("ends") / "sub"
        for end, (path, _) in ENDS.items():
            # A UTF-8 byte-order mark too, as Windows editors write.
            write(sub, path, "\ufeff" + (reference / path).read_text().replace("\n", end))
        return graded(sub, reference, ",".join(t for _, tasks in ENDS.values() for t in tasks))

    return computed_once(tmp_path_factory, "submission_files_ends", grade_all)


@pytest.mark.parametrize("end", list(ENDS))
def test_an_honest_file_with_windows_or_old_mac_line_ends_grades(ends_graded, end):
    for task_id in ENDS[end][1]:
        r = ends_graded[task_id]
        assert r["passed"] and r["points"] == r["max_points"], (task_id, r)


def test_a_lone_cr_inside_a_region_splits_the_line_as_python_does(tmp_path, reference):
    """Python reads a lone CR as a line end: the text after it is a line of
    its own, here less indented than the region (on main, one line for the
    region reader and two for the compiler: the second at module level)."""
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    lines[r.begin] = lines[r.begin] + "\rprint('at module level')"
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "1.1,2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {r.begin + 2}", "indented less",
            others=["1.1"])


# --- control characters ---------------------------------------------------------------
# Each kind of region problem changes one line of a task's file: ``change(lines, r,
# case)`` makes it, in the region ``r``, and returns the line the message names.


def _control(lines, r, char):
    lines[r.begin] = r.indent + char + lines[r.begin].lstrip()
    return r.begin + 1


@pytest.mark.parametrize("char, name", [
    ("\f", "U+000C"), ("\v", "U+000B"), ("\x1c", "U+001C"), ("\x1e", "U+001E"),
    ("\x85", "U+0085"), ("\u2028", "U+2028"), ("\u2029", "U+2029"), ("\x00", "U+0000"),
    ("\u202e", "U+202E"),
])
def test_a_control_character_in_a_region_is_refused(tmp_path, reference, char, name):
    """A form feed at a line's start resets Python's column count (on main,
    the rest of the line ran at module level); the other characters end a
    line for ``str.splitlines`` but not for Python, or reorder what a reader sees."""
    at = changed(tmp_path, reference, "2.3", "Multiply.partial", _control, char)
    message = problem(tmp_path, reference)
    assert f"{ELEMENTWISE}, line {at}:" in message and name in message, message


def _form_feed(lines, r, where):
    marker = lines[r.end - 1]
    lines[r.end - 1] = ("\f" + marker) if where == "before" else (marker + "\f")
    return r.end


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_form_feed_on_a_marker_line_is_refused(tmp_path, reference, where):
    at = changed(tmp_path, reference, "2.3", "Multiply.partial", _form_feed, where)
    message = problem(tmp_path, reference)
    assert f"{ELEMENTWISE}, line {at}:" in message and "U+000C" in message, message


# --- lookalike markers ----------------------------------------------------------------


def _begin(lines, r, lookalike):
    lines[r.begin - 1] = r.indent + lookalike.format(id=r.task, title=r.title)
    return r.begin


@pytest.mark.parametrize("lookalike", [
    "# B\u0415GIN TASK {id}: {title}",  # Cyrillic IE
    "# \uff22\uff25\uff27\uff29\uff2e TASK {id}: {title}",  # fullwidth
    "#BEGIN TASK {id}: {title}",
    "#  BEGIN TASK {id}: {title}",
    "# BEGIN  TASK {id}: {title}",
    "# BEGIN TASK {id} {title}",
    "# begin task {id}: {title}",
    "# BEG\u200bIN TASK {id}: {title}",  # a zero-width space
    "x = 1  # BEGIN TASK {id}: {title}",
])
def test_a_lookalike_begin_marker_is_reported(tmp_path, reference, lookalike):
    at = changed(tmp_path, reference, "2.3", "Multiply.partial", _begin, lookalike)
    message = problem(tmp_path, reference)
    assert f"{ELEMENTWISE}, line {at}:" in message, message
    assert "looks like a task marker" in message, message


def _end(lines, r, line):
    lines[r.begin] = r.indent + line.format(id=r.task)
    return r.begin + 1


@pytest.mark.parametrize("line", [
    "# END TASK {id} (done)",
    "# \u0415ND TASK {id}",
    "return s  # '# END TASK {id}'",
])
def test_a_lookalike_end_marker_inside_a_region_is_reported(tmp_path, reference, line):
    """On main a line like these was ignored, or the region ran on to the
    next task's END marker (half-matched)."""
    at = changed(tmp_path, reference, "2.3", "Multiply.partial", _end, line)
    message = problem(tmp_path, reference)
    assert f"{ELEMENTWISE}, line {at}:" in message, message
    assert "looks like a task marker" in message, message


def test_a_region_inside_a_string_is_refused(tmp_path, reference):
    """The markers and the answer inside a docstring: for Python they are no
    comments at all."""
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    lines[r.begin - 1: r.begin - 1] = [r.indent + '"""']
    lines[r.end + 1: r.end + 1] = [r.indent + '"""', r.indent + "return b"]
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "1.1,2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {r.begin + 1}", "inside a string",
            others=["1.1"])


# --- nesting --------------------------------------------------------------------------


def _nested(lines, r, case):
    """One marker mistake at the region ``r``, followed in its file by
    another region of its task (for "no END"): the line it is at."""
    begin, end = lines[r.begin - 1], lines[r.end - 1]
    if case == "nested BEGIN":
        lines[r.begin: r.begin] = [begin]
        return r.begin + 1
    if case == "END without BEGIN":
        lines[r.begin - 1] = r.indent + "pass"
        return r.end
    if case == "opened twice":
        lines[r.end: r.end] = [begin, r.indent + "return a", end]
        return r.end + 1
    if case == "mismatched ids":
        lines[r.end - 1] = end.replace(r.task, "2.2")
        return r.end
    if case == "no END":
        del lines[r.end - 1]
        return next(k for k in range(r.end - 1, len(lines))
                    if lines[k].strip().startswith(f"# BEGIN TASK {r.task}:")) + 1
    raise AssertionError(case)


@pytest.mark.parametrize("case, words", [
    ("nested BEGIN", "inside the TASK 2.3 region opened at line"),
    ("END without BEGIN", "END TASK 2.3 without a BEGIN"),
    ("opened twice", "two TASK 2.3 regions in Multiply.partial"),
    ("mismatched ids", "END TASK 2.2 closes the TASK 2.3 region opened at line"),
    ("no END", "inside the TASK 2.3 region opened at line"),
])
def test_markers_that_do_not_nest_are_reported(tmp_path, reference, case, words):
    at = changed(tmp_path, reference, "2.3", "Multiply.partial", _nested, case)
    if case == "no END":  # the next BEGIN of 2.3 is Divide.partial's
        assert at == region(reference, "2.3", "Divide.partial").begin - 1
    message = problem(tmp_path, reference)
    assert f"{ELEMENTWISE}, line {at}:" in message and words in message, message


# --- each kind, graded ------------------------------------------------------------------
# One case of each table above, each in a task of a file of its own, graded at
# once beside the honest 1.1 (in 2.3's file) and 4.1: the grade's message for
# each task is the one the tables check, and the honest tasks keep their points.

# kind: (task, function, change, its case, what the message says)
KINDS = {
    "a control character": ("2.3", "Multiply.partial", _control, "\f", "U+000C"),
    # (in a task whose next region follows: without its END, a region runs on to it)
    "a form feed on a marker line": ("6.1", "CustomTransforms.vjp", _form_feed, "after",
                                     "U+000C"),
    "a lookalike BEGIN marker": ("4.2", "jvp", _begin, "# B\u0415GIN TASK {id}: {title}",
                                 "looks like a task marker"),
    "a lookalike END marker": ("4.3", "Broadcast.vjp", _end, "# END TASK {id} (done)",
                               "looks like a task marker"),
    "markers that do not nest": ("1.2", "_logsumexp", _nested, "mismatched ids",
                                 "END TASK 2.2 closes the TASK 1.2 region opened at line"),
}


@pytest.fixture(scope="module")
def kinds_graded(tmp_path_factory, reference):
    """(the grade, {task: (the line its problem is at, what ``grader.splice``
    says)}), graded once per test run."""
    def grade_all():
        sub = honest(tmp_path_factory.mktemp("kinds") / "sub", reference, VJP)
        found = {}
        for task_id, function, change, case, _ in KINDS.values():
            at = changed(sub, reference, task_id, function, change, case)
            found[task_id] = (at, problem(sub, reference, task_id))
        spec = ",".join(sorted(set(found) | {"1.1", "4.1"}, key=regions.task_key))
        return graded(sub, reference, spec), found

    return computed_once(tmp_path_factory, "submission_files_kinds", grade_all)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_of_region_problem_fails_its_task_alone(kinds_graded, reference, kind):
    task_id, function, _, _, words = KINDS[kind]
    results, found = kinds_graded
    at, said = found[task_id]
    path = region(reference, task_id, function).path
    message = refused(results, task_id, f"{path}, line {at}:", words, others=["1.1", "4.1"])
    assert message == said


# --- the reader on its own ------------------------------------------------------------


def test_every_file_of_the_reference_reads_without_a_problem():
    """No line of the reference's task files looks like a marker without being one."""
    root = regions.project_root()
    for path in sorted({r.path for r in regions.find_regions(root)}):
        found = regions.submitted_regions(regions.read_submitted(root, path))
        assert found.problems == {}, (path, found.problems)
        assert [(s.task, s.begin, s.end) for s in found.regions] == [
            (r.task, r.begin, r.end) for r in regions.find_regions(root) if r.path == path]


def test_a_submission_is_spliced_with_python_s_line_numbers(tmp_path, reference):
    """CRLF ends: the region's lines and the splice are those Python numbers."""
    r = region(reference, "2.3", "Multiply.partial")
    sub = submit(tmp_path / "sub", reference, {("2.3", "Multiply.partial"): "return a + b"})
    text = (sub / ELEMENTWISE).read_text()
    (sub / ELEMENTWISE).write_text("# one more line\n" + text.replace("\n", "\r\n"),
                                   newline="")
    files, spans = grader.splice("2.3", table(reference)["2.3"][1], reference, sub)
    assert files[ELEMENTWISE].split("\n")[r.begin] == r.indent + "return a + b"
    assert "\r" not in files[ELEMENTWISE]
    first = next(s for s in spans if s["first"] == r.begin + 1)
    assert first["student_first"] == r.begin + 2
