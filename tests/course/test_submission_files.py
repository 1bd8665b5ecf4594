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

Every test checks that the attacked task fails with a one-line reason naming
the file and that the grade returns within its time (``graded``). The tests
of whole files, and one test of each kind of region problem, grade an honest
task beside the attacked one and check that it keeps its points; the tables
of control characters, lookalikes and markers that do not nest grade the
attacked task alone, which keeps this file within the suite's time.
"""

import os
import shutil
import socket
import threading

import pytest
from course.test_grader import build_reference, region, submit, table

from mlxref.course import grader, regions

ELEMENTWISE = "mlxref/core/primitives/elementwise.py"  # tasks 1.1, 2.2, 2.3 ...
VJP = "mlxref/core/transforms/vjp.py"  # task 4.1

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
    4.1 too: a task in a file of its own, for the attacks on a whole file."""
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


def lines_of(reference, path=ELEMENTWISE):
    return (reference / path).read_text().split("\n")


def write(submission, path, text):
    (submission / path).parent.mkdir(parents=True, exist_ok=True)
    (submission / path).write_text(text, newline="")
    return submission


# --- the files -----------------------------------------------------------------------


@pytest.mark.parametrize("target", ["reference", "/dev/zero"])
def test_a_file_linked_to_the_references_file_or_dev_zero_is_refused(tmp_path, reference,
                                                                     target):
    """On main the link was followed: the reference's answer earned full marks,
    and /dev/zero was read until the grader died of a MemoryError."""
    if target == "/dev/zero" and not os.path.exists(target):
        pytest.skip("no /dev/zero")
    sub = honest(tmp_path / "sub", reference, VJP)
    (sub / ELEMENTWISE).parent.mkdir(parents=True)
    os.symlink(reference / ELEMENTWISE if target == "reference" else target, sub / ELEMENTWISE)
    results = graded(sub, reference, "2.3,4.1")
    refused(results, "2.3", ELEMENTWISE, "symbolic link", others=["4.1"])


def test_a_directory_linked_to_the_references_is_refused(tmp_path, reference):
    """A link higher up the path: mlxref/core/primitives -> the reference's."""
    sub = honest(tmp_path / "sub", reference, VJP)
    os.symlink(reference / "mlxref/core/primitives", sub / "mlxref/core/primitives")
    results = graded(sub, reference, "2.3,4.1")
    refused(results, "2.3", ELEMENTWISE, "mlxref/core/primitives is a symbolic link",
            others=["4.1"])


def test_a_hard_link_to_the_references_file_is_refused(tmp_path, reference):
    sub = honest(tmp_path / "sub", reference, VJP)
    (sub / ELEMENTWISE).parent.mkdir(parents=True)
    os.link(reference / ELEMENTWISE, sub / ELEMENTWISE)
    results = graded(sub, reference, "2.3,4.1")
    refused(results, "2.3", ELEMENTWISE, "hard links", others=["4.1"])


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
def test_a_special_file_is_refused(tmp_path, reference, kind):
    """On main a FIFO hung the grader (open waits for a writer)."""
    sub = honest(tmp_path / "sub", reference, VJP)
    target = sub / ELEMENTWISE
    target.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        try:
            server.bind(str(target))
        except OSError:  # a path too long for a socket's address
            pytest.skip("cannot bind a socket at " + str(target))
        server.close()
    else:
        target.mkdir()
    results = graded(sub, reference, "2.3,4.1")
    refused(results, "2.3", ELEMENTWISE, {"fifo": "a FIFO", "socket": "a socket",
                                          "directory": "a directory"}[kind],
            "not a regular file", others=["4.1"])


def test_an_oversized_file_is_refused_after_a_bounded_read(tmp_path, reference):
    sub = honest(tmp_path / "sub", reference, VJP)
    text = (reference / ELEMENTWISE).read_text()
    write(sub, ELEMENTWISE, text + "#" * regions.MAX_SUBMITTED_BYTES + "\n")
    results = graded(sub, reference, "2.3,4.1")
    refused(results, "2.3", ELEMENTWISE, "more than", "bytes", others=["4.1"])


def test_bytes_that_are_not_utf8_are_refused(tmp_path, reference):
    sub = honest(tmp_path / "sub", reference, VJP)
    data = (reference / ELEMENTWISE).read_bytes()
    (sub / ELEMENTWISE).parent.mkdir(parents=True)
    (sub / ELEMENTWISE).write_bytes(data[:100] + b"\xff\xfe" + data[100:])
    results = graded(sub, reference, "2.3,4.1")
    refused(results, "2.3", ELEMENTWISE, "not UTF-8", "byte 0xff at offset 100",
            others=["4.1"])


# --- line ends ------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_an_honest_file_with_windows_or_old_mac_line_ends_grades(tmp_path, reference, end):
    sub = tmp_path / "sub"
    # A UTF-8 byte-order mark too, as Windows editors write.
    write(sub, ELEMENTWISE, "\ufeff" + (reference / ELEMENTWISE).read_text().replace("\n", end))
    results = graded(sub, reference, "1.1,2.3")
    assert all(r["passed"] and r["points"] == r["max_points"] for r in results.values()), results


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


@pytest.mark.parametrize("char, name", [
    ("\f", "U+000C"), ("\v", "U+000B"), ("\x1c", "U+001C"), ("\x1e", "U+001E"),
    ("\x85", "U+0085"), ("\u2028", "U+2028"), ("\u2029", "U+2029"), ("\x00", "U+0000"),
    ("\u202e", "U+202E"),
])
def test_a_control_character_in_a_region_is_refused(tmp_path, reference, char, name):
    """A form feed at a line's start resets Python's column count (on main,
    the rest of the line ran at module level); the other characters end a
    line for ``str.splitlines`` but not for Python, or reorder what a reader sees."""
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    lines[r.begin] = r.indent + char + lines[r.begin].lstrip()
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {r.begin + 1}", name)


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_form_feed_on_a_marker_line_is_refused(tmp_path, reference, where):
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    marker = lines[r.end - 1]
    lines[r.end - 1] = ("\f" + marker) if where == "before" else (marker + "\f")
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {r.end}", "U+000C")


# --- lookalike markers ----------------------------------------------------------------


@pytest.mark.parametrize("lookalike", [
    "# B\u0415GIN TASK 2.3: multiply and divide partials",  # Cyrillic IE
    "# \uff22\uff25\uff27\uff29\uff2e TASK 2.3: multiply and divide partials",  # fullwidth
    "#BEGIN TASK 2.3: multiply and divide partials",
    "#  BEGIN TASK 2.3: multiply and divide partials",
    "# BEGIN  TASK 2.3: multiply and divide partials",
    "# BEGIN TASK 2.3 multiply and divide partials",
    "# begin task 2.3: multiply and divide partials",
    "# BEG\u200bIN TASK 2.3: multiply and divide partials",  # a zero-width space
    "x = 1  # BEGIN TASK 2.3: multiply and divide partials",
])
def test_a_lookalike_begin_marker_is_reported(tmp_path, reference, lookalike):
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    lines[r.begin - 1] = r.indent + lookalike
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {r.begin}", "looks like a task marker")


@pytest.mark.parametrize("line", [
    "# END TASK 2.3 (done)",
    "# \u0415ND TASK 2.3",
    "return s  # '# END TASK 2.3'",
])
def test_a_lookalike_end_marker_inside_a_region_is_reported(tmp_path, reference, line):
    """On main a line like these was ignored, or the region ran on to the
    next task's END marker (half-matched)."""
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    lines[r.begin] = r.indent + line
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {r.begin + 1}", "looks like a task marker")


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


def _nested(reference, case):
    """The lines of elementwise.py with one marker mistake, and the line it is at."""
    r = region(reference, "2.3", "Multiply.partial")
    lines = lines_of(reference)
    begin, end = lines[r.begin - 1], lines[r.end - 1]
    if case == "nested BEGIN":
        lines[r.begin: r.begin] = [begin]
        return lines, r.begin + 1
    if case == "END without BEGIN":
        lines[r.begin - 1] = r.indent + "pass"
        return lines, r.end
    if case == "opened twice":
        lines[r.end: r.end] = [begin, r.indent + "return a", end]
        return lines, r.end + 1
    if case == "mismatched ids":
        lines[r.end - 1] = end.replace("2.3", "2.2")
        return lines, r.end
    if case == "no END":
        del lines[r.end - 1]
        divide = region(reference, "2.3", "Divide.partial")
        return lines, divide.begin - 1
    raise AssertionError(case)


@pytest.mark.parametrize("case, words", [
    ("nested BEGIN", "inside the TASK 2.3 region opened at line"),
    ("END without BEGIN", "END TASK 2.3 without a BEGIN"),
    ("opened twice", "two TASK 2.3 regions in Multiply.partial"),
    ("mismatched ids", "END TASK 2.2 closes the TASK 2.3 region opened at line"),
    ("no END", "inside the TASK 2.3 region opened at line"),
])
def test_markers_that_do_not_nest_are_reported(tmp_path, reference, case, words):
    lines, at = _nested(reference, case)
    sub = write(tmp_path / "sub", ELEMENTWISE, "\n".join(lines))
    results = graded(sub, reference, "2.3")
    refused(results, "2.3", f"{ELEMENTWISE}, line {at}", words)


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
