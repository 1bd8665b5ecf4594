"""The grader (mlxref/course/grader.py, sandbox.py): each task on its own, in a clean copy.

The tests grade submissions against a small throwaway "instructor" checkout
(``fake_reference``): this project's mlxref, with a few tests of its own per
task, visible in tests/ and hidden in tests/course/hidden/. Nothing here touches
the real checkout. Each grade starts one child process per task, so the
tests keep to a few tasks each. test_grader_attacks.py reuses these
helpers for the attacks of issue 15, and test_wrong_answers.py grades
the usual mistakes against the real checkout and its own tests.
"""

import ast
import json
import math
import shutil
import textwrap
import time

import pytest

from mlxref.course import assignment, grader, regions, sandbox
from mlxref.cli import main

ROOT = regions.project_root()

VISIBLE = '''
import math

import pytest

import mlxref.core as mx
from course import programs
from mlxref.core.primitives.elementwise import Cos, Divide, Multiply, Sigmoid, Sin
from mlxref.course.judge import run
from support import close


@pytest.mark.task1_1
def test_sigmoid_values():
    for v in (-2.0, 0.0, 3.0):
        want = 1 / (1 + math.exp(-v))
        got = run(Sigmoid.numeric, v)
        assert close(got, want), f"sigmoid({v}): expected {want}, received {got}"


@pytest.mark.task2_2
def test_sin_derivative():
    x = mx.array([0.5, 1.0])
    want = [math.cos(0.5), math.cos(1.0)]
    got = run(programs.derivative, Sin, x, mx.sin(x))
    assert got.shape == (2,), f"d sin(x)/dx at x = [0.5, 1.0]: expected shape (2,), received {got}"
    assert close(got.tolist(), want), f"d sin(x)/dx at x = [0.5, 1.0]: expected {want}, " \\
        f"received {got.tolist()}"


@pytest.mark.task2_2
def test_cos_derivative_shape():
    x = mx.array([0.0, 1.0])
    assert len(run(programs.derivative, Cos, x, mx.cos(x)).shape) == 1


@pytest.mark.task2_3
def test_multiply_partials():
    a, b = mx.array([2.0, 3.0]), mx.array([5.0, 7.0])
    for i, want in ((0, [5.0, 7.0]), (1, [2.0, 3.0])):
        got = run(programs.partial, Multiply, i, a, b, a * b).tolist()
        assert close(got, want), f"d(a*b)/d{'ab'[i]} at a = [2, 3], b = [5, 7]: " \\
            f"expected {want}, received {got}"


@pytest.mark.task2_3
def test_divide_partials():
    a, b = mx.array([2.0, 3.0]), mx.array([4.0, 8.0])
    for i, want in ((0, [0.25, 0.125]), (1, [-0.125, -3 / 64])):
        got = run(programs.partial, Divide, i, a, b, a / b).tolist()
        assert close(got, want), f"d(a/b)/d{'ab'[i]} at a = [2, 3], b = [4, 8]: " \\
            f"expected {want}, received {got}"
'''

HIDDEN_2_3 = '''
import pytest
import sympy
from hypothesis import Phase, given, settings, strategies as st

import mlxref.core as mx
from course import programs
from mlxref.core.primitives.elementwise import Divide
from mlxref.course.judge import run
from support import close


@pytest.mark.task2_3
@settings(max_examples=15, phases=[Phase.generate], deadline=None)
@given(st.floats(0.5, 4.0), st.floats(0.5, 4.0))
def test_divide_partial_b_random(a, b):
    A, B = sympy.symbols("A B")
    want = float(sympy.diff(A / B, B).subs({A: a, B: b}))
    x, y = mx.array([a]), mx.array([b])
    got = run(programs.partial, Divide, 1, x, y, x / y).tolist()
    assert close(got, [want], rtol=1e-4), f"d(a/b)/db at a = {a}, b = {b}: " \\
        f"expected {[want]}, received {got}"
'''

HIDDEN_1_1 = '''
import math

import pytest

from mlxref.core.primitives.elementwise import Sigmoid
from mlxref.course.judge import run


@pytest.mark.task1_1
def test_sigmoid_far_out():
    for v in (-30.0, 0.5, 30.0):
        got = run(Sigmoid.numeric, v)
        assert abs(got - 1 / (1 + math.exp(-v))) < 1e-12, f"sigmoid({v}): received {got}"
'''

# The sandbox seen from inside: a program of the throwaway checkout looks around
# where it runs. Recorded on the reference (outside the sandbox: ``python`` without
# -I -S) it sees nothing to check; answered in the sandbox, what it reports as let
# through must be nothing.
SANDBOX = '''
import pytest

from course import programs
from mlxref.course.judge import run


@pytest.mark.task1_1
def test_the_sandbox_around_the_tests():
    seen = run(programs.look_around)
    assert not seen["sandboxed"] or seen["let through"] == [], seen["let through"]
'''

# The fake checkout's programs (tests/course/programs.py; mlxref/course/judge.py)
PROGRAMS = '''
import importlib.metadata
import os
import sys


def partial(primitive, i, a, b, out):
    return primitive().partial(i, a, b, out)


def derivative(primitive, x, out):
    return primitive().derivative(x, out)


def look_around():
    """What the sandbox let through, of what it must not (nothing to see outside it)."""
    import mlxref

    let, sandboxed = [], bool(sys.flags.isolated and sys.flags.no_site)
    if not sandboxed:  # the reference's recording run
        return {"sandboxed": False, "let through": let}
    try:
        import mlx.core  # noqa: F401
        let.append("import mlx")
    except ImportError as exc:
        if "does not let graded code import" not in str(exc):
            let.append("mlx refused by another: " + str(exc))
    try:
        importlib.metadata.distribution("mlxref")
        let.append("mlxref's metadata")
    except importlib.metadata.PackageNotFoundError:
        pass
    work = os.path.dirname(os.path.dirname(mlxref.__path__[0]))  # the task's directory
    let += ["sys.path " + p for p in sys.path if p and not p.startswith((work, sys.base_prefix))]
    # the hidden tests never reach the copy: the judge runs them (mlxref/course/judge.py)
    if os.path.exists(os.path.join(work, "src", "tests", "course", "hidden")):
        let.append("the hidden tests")
    if "PYTHONPATH" in os.environ or not os.environ["HOME"].startswith(work):
        let.append("the environment")
    for path in (os.path.join(os.path.dirname(work), "outside.txt"),
                 os.path.join(work, "src", "tests", "support.py")):  # test data
        try:
            open(path, "a").close()
            let.append("writing " + path)
        except PermissionError as exc:
            if "does not let graded code write" not in str(exc):
                let.append("write refused by another: " + str(exc))
    with open(os.path.join(os.environ["TMPDIR"], "scratch.txt"), "w") as f:
        f.write("allowed")  # the task's own temporary directory
    import numpy  # a package graded code may use
    if numpy.add(1, 2) != 3:
        let.append("numpy")
    return {"sandboxed": True, "let through": let}
'''


def build_reference(root):
    """A throwaway instructor checkout at ``root``: this mlxref, and the tests above."""
    shutil.copytree(ROOT / "mlxref", root / "mlxref",
                    ignore=shutil.ignore_patterns(".pytest_cache"))
    (root / "tests" / "course" / "hidden").mkdir(parents=True)
    for shared in ("support.py", "conftest.py"):
        shutil.copy(ROOT / "tests" / shared, root / "tests" / shared)
    (root / "tests" / "test_fake_tasks.py").write_text(VISIBLE)
    (root / "tests" / "test_sandbox.py").write_text(SANDBOX)
    (root / "tests" / "course" / "__init__.py").write_text("")
    (root / "tests" / "course" / "programs.py").write_text(PROGRAMS)
    # A hidden file may share a visible file's name.
    (root / "tests" / "course" / "hidden" / "test_fake_tasks.py").write_text(HIDDEN_1_1)
    (root / "tests" / "course" / "hidden" / "test_hidden_2_3.py").write_text(HIDDEN_2_3)
    (root / "setup.cfg").write_text("[metadata]\nname = fake\n")
    return root


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return build_reference(tmp_path_factory.mktemp("instructor"))


_TABLES = {}


def table(reference):
    """The reference's tasks, read once per reference."""
    if reference not in _TABLES:
        _TABLES[reference] = regions.tasks(regions.find_regions(reference))
    return _TABLES[reference]


def region(reference, task_id, function):
    (r,) = [r for r in table(reference)[task_id][1] if r.function == function]
    return r


def region_code(reference, task_id, function):
    """The reference's own code of a region: an honest answer."""
    r = region(reference, task_id, function)
    lines = (reference / r.path).read_text().split("\n")[r.begin: r.end - 1]
    return textwrap.dedent("\n".join(lines))


def submit(directory, reference, bodies, indent=None):
    """A submission at ``directory``: the reference's files with the regions in
    ``bodies`` ({(task, function): code}) holding that code instead."""
    edits = {}
    for (task_id, function), code in bodies.items():
        r = region(reference, task_id, function)
        edits.setdefault(r.path, []).append((r, code))
    for path, items in edits.items():
        lines = (reference / path).read_text().split("\n")
        for r, code in sorted(items, key=lambda item: -item[0].begin):
            pad = r.indent if indent is None else indent
            body = [pad + line if line.strip() else "" for line in
                    textwrap.dedent(code).strip("\n").split("\n")]
            if indent is not None:
                lines[r.begin - 1] = pad + lines[r.begin - 1].lstrip()
                lines[r.end - 1] = pad + lines[r.end - 1].lstrip()
            lines[r.begin: r.end - 1] = body
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines))
    (directory / "mlxref").mkdir(exist_ok=True)
    return directory


def grade(submission, reference, spec, **options):
    options.setdefault("timeout", 120)  # a ceiling only: a loaded machine is slow
    return grader.grade(submission, spec, reference=reference, **options)


# --- splicing and the static check (no child process) ----------------------------------------


def test_every_region_of_the_reference_passes_the_static_check():
    for task_id, (_, task_regions) in regions.tasks().items():
        files, spans = grader.splice(task_id, task_regions, ROOT, ROOT)
        for path, text in files.items():
            assert text == (ROOT / path).read_text(encoding="utf-8"), (task_id, path)
        assert len(spans) == len(task_regions)


def test_only_the_task_region_is_spliced_into_the_reference(tmp_path, reference):
    sub = submit(tmp_path / "sub", reference, {("2.3", "Multiply.partial"): "return a + b"})
    text = (sub / "mlxref/core/primitives/elementwise.py").read_text()
    # Outside the region, the submission's file says anything: it is not used.
    (sub / "mlxref/core/primitives/elementwise.py").write_text(
        "import os\nos.remove('/nonexistent')\n" + text.replace("class Sin(", "class Sine("))
    regions = table(reference)["2.3"][1]
    files, spans = grader.splice("2.3", regions, reference, sub)
    spliced = files["mlxref/core/primitives/elementwise.py"].split("\n")
    mine = region(reference, "2.3", "Multiply.partial")
    assert spliced[mine.begin] == mine.indent + "return a + b"
    reference_lines = (reference / mine.path).read_text().split("\n")
    assert spliced[: mine.begin] == reference_lines[: mine.begin]
    assert "class Sin(" in "\n".join(spliced) and "import os" not in "\n".join(spliced)
    # The line map points at the student's own numbering (two lines were added above).
    first = next(s for s in spans if s["first"] == mine.begin + 1)
    assert first["student_first"] == mine.begin + 1 + 2


def test_a_region_indented_differently_is_reindented(tmp_path, reference):
    code = "if i == 0:\n    return b\nreturn a"
    sub = submit(tmp_path / "sub", reference, {("2.3", "Multiply.partial"): code},
                 indent="  ")
    regions = table(reference)["2.3"][1]
    files, _ = grader.splice("2.3", regions, reference, sub)
    r = region(reference, "2.3", "Multiply.partial")
    lines = files[r.path].split("\n")
    assert lines[r.begin: r.begin + 3] == [r.indent + "if i == 0:", r.indent + "    return b",
                                             r.indent + "return a"]


def _problem(tmp_path, reference, code, task_id="2.3", function="Multiply.partial"):
    sub = submit(tmp_path / "sub", reference, {(task_id, function): code})
    regions = table(reference)[task_id][1]
    with pytest.raises(grader.Problem) as info:
        grader.splice(task_id, regions, reference, sub)
    r = region(reference, task_id, function)
    return str(info.value), r


@pytest.mark.parametrize("code, line, words", [
    ("import os\nreturn b", 1, "'import os': a task may import only mlxref's modules and math"),
    ("from subprocess import run\nreturn b", 1, "'from subprocess import ...'"),
    ("x = 1\nimport mlx.core as mx\nreturn b", 2, "'import mlx.core'"),
    ("import importlib.metadata\nreturn b", 1, "'import importlib.metadata'"),
    ("return open('f').read()", 1, "the name 'open'"),
    ("return eval('b')", 1, "the name 'eval'"),
    ("exec('x = 1')\nreturn b", 1, "the name 'exec'"),
    ("f = __import__\nreturn b", 1, "the name '__import__'"),
    ("return b.__class__", 1, "the attribute '.__class__'"),
    ("y = ().__class__.__bases__[0].__subclasses__()\nreturn b", 1, "'.__subclasses__'"),
    ("return getattr(b, 'x')", 1, "the name 'getattr'"),
    ("g = globals()\nreturn b", 1, "the name 'globals'"),
    ("return ops.sys", 1, "the attribute '.sys'"),
    ("x = 1\ny = 2\nreturn __builtins__", 3, "the name '__builtins__'"),
    ("ops.multiply = ops.add\nreturn b", 1, "assigning to 'ops...multiply'"),
    ("global ops\nreturn b", 1, "'global ops'"),
    ("from mlxref.core import save\nreturn b", 1, "import save"),
    ("import mlxref.core as mx\nmx.save('x', b)\nreturn b", 2, "the attribute '.save'"),
    ("return f'{b.__init__}'", 1, "'.__init__'"),
])
def test_the_static_check_names_the_construct_and_the_students_line(
        tmp_path, reference, code, line, words):
    message, r = _problem(tmp_path, reference, code)
    assert words in message, message
    assert f"{r.path}, line {r.begin + line}:" in message, message


# Code that parses but does not compile: the spliced file would not import, and
# every other task's calls in the copy holding all the student's code would fail.
@pytest.mark.parametrize("code, line", [
    ("if i:\n    continue\nreturn b", 2),
    ("x = [(yield v) for v in (a, b)]\nreturn b", 1),
    ("def h(u, u):\n    return u\nreturn b", 1),
    ("return ops.multiply(a=a, a=b)", 1),
])
def test_code_that_does_not_compile_is_refused_and_left_out_of_the_whole_copy(
        tmp_path, reference, code, line):
    message, r = _problem(tmp_path, reference, code)
    assert f"{r.path}, line {r.begin + line}: SyntaxError:" in message, message
    sub = tmp_path / "sub"  # _problem's submission: this task's region only
    files, _ = grader.splice_whole(table(reference), reference, sub)
    for path, text in files.items():
        compile(text, path, "exec", dont_inherit=True)
    spliced = files.get(r.path, (reference / r.path).read_text())
    assert spliced.split("\n")[r.begin:r.end - 1] == \
        (reference / r.path).read_text().split("\n")[r.begin:r.end - 1]


def test_the_static_check_allows_mlxref_math_and_plain_code(tmp_path, reference):
    code = ("import math\nfrom mlxref.core import ops as o\nfrom .. import dtypes\n"
            "k = [v for v in range(3) if math.isfinite(v)]\n"
            "return o.multiply(b, 1) if i == 0 else a")
    sub = submit(tmp_path / "sub", reference, {("2.3", "Multiply.partial"): code})
    regions = table(reference)["2.3"][1]
    grader.splice("2.3", regions, reference, sub)  # no Problem


def test_a_syntax_error_is_reported_at_the_students_line(tmp_path, reference):
    message, r = _problem(tmp_path, reference, "x = 1\nreturn b if i == 0 else (a")
    assert f"{r.path}, line {r.begin + 2}: SyntaxError" in message, message


def test_missing_markers_and_bad_indentation_are_reported(tmp_path, reference):
    r = region(reference, "2.3", "Divide.partial")
    sub = tmp_path / "sub"
    (sub / "mlxref/core/primitives").mkdir(parents=True)
    text = (reference / r.path).read_text().replace("# BEGIN TASK 2.3", "# BEGIN TAKS 2.3", 2)
    (sub / r.path).write_text(text)
    regions = table(reference)["2.3"][1]
    # A misspelt BEGIN is no marker: its END is one without a BEGIN.
    first = region(reference, "2.3", "Multiply.partial")
    with pytest.raises(grader.Problem, match=f"{r.path}, line {first.end}: END TASK 2.3 "
                       f"without a BEGIN"):
        grader.splice("2.3", regions, reference, sub)
    message, r = _problem(tmp_path / "2", reference, "x = 1\n        y = 2")
    assert "this line is indented less" not in message  # deeper is only a syntax error
    lines = (reference / r.path).read_text().split("\n")
    lines[r.begin] = "return b"  # less indented than the markers
    (tmp_path / "3" / "mlxref/core/primitives").mkdir(parents=True)
    (tmp_path / "3" / r.path).write_text("\n".join(lines))
    regions = table(reference)["2.3"][1]
    with pytest.raises(grader.Problem, match=f"line {r.begin + 1}: this line is indented less"):
        grader.splice("2.3", regions, reference, tmp_path / "3")


# --- grading --------------------------------------------------------------------------------


def test_the_reference_passes_with_visible_and_hidden_tests(tmp_path, reference):
    results, errors = grade(reference, reference, "1.1,2.3")
    assert errors == []
    for task_id in ("1.1", "2.3"):
        r = results[task_id]
        assert r["passed"] and r["failures"] == 0 and r["messages"] == [], r["messages"]
        assert r["points"] == r["max_points"] == grader.points(task_id)
        assert {x["hidden"] for x in r["results"]} == {False, True}
    names = [x["name"] for x in results["2.3"]["results"]]
    assert "tests/course/hidden/test_hidden_2_3.py::test_divide_partial_b_random" in names
    assert len(names) == 3

    # The formats, from the same results.
    data = json.loads(grader.grades_json(results))
    assert data["score"] == data["max_score"] == grader.points("1.1") + grader.points("2.3")
    assert set(data["tasks"]["2.3"]) == {"passed", "points", "max_points", "tests",
                                         "failures", "messages", "results"}
    assert [x["name"] for x in data["tasks"]["2.3"]["results"]] == names
    table = grader.format_grades(reference, results, errors)
    assert "2 of 2 tasks pass" in table and "to see why" not in table
    scope = grader.gradescope(results)
    assert scope["score"] == data["score"]
    tasks = [t for t in scope["tests"] if "max_score" in t]
    assert [t["name"].split(":")[0] for t in tasks] == ["Task 1.1", "Task 2.3"]
    hidden = [t for t in scope["tests"] if "hidden" in t["name"]]
    assert hidden and {t["visibility"] for t in hidden} == {"after_published"}
    visible = [t for t in scope["tests"] if "max_score" not in t and "hidden" not in t["name"]]
    assert visible and {t["visibility"] for t in visible} == {"visible"}


def test_one_task_per_copy_a_syntax_error_fails_only_its_task(tmp_path, reference):
    code = {("2.3", "Multiply.partial"): "return b if i == 0 else (a",
            ("1.1", "Sigmoid.numeric"): "return 0.5 if x == 0 else 1.0 / (1.0 + math.exp(-x))"}
    sub = submit(tmp_path / "sub", reference, code)  # both in elementwise.py
    results, _ = grade(sub, reference, "1.1,2.3")
    assert results["1.1"]["passed"], results["1.1"]
    bad = results["2.3"]
    assert not bad["passed"] and bad["points"] == 0
    r = region(reference, "2.3", "Multiply.partial")
    line = (sub / r.path).read_text().split("\n").index(r.indent + "return b if i == 0 else (a")
    assert bad["messages"] == [f"{r.path}, line {line + 1}: SyntaxError: '(' was never closed"]


def test_wrong_answers_fail_with_the_students_lines_and_the_values(tmp_path, reference):
    sub = submit(tmp_path / "sub", reference, {
        ("2.3", "Multiply.partial"): "return b if i == 0 else ops.negative(a)",  # a sign error
        ("2.3", "Divide.partial"): "return ops.reciprocal(b) if i == 0 else b.nonexistent",
    })
    results, _ = grade(sub, reference, "2.3")
    r = results["2.3"]
    assert not r["passed"] and r["failures"] == r["tests"] == 3
    text = "\n".join(r["messages"])
    assert ("d(a*b)/db at a = [2, 3], b = [5, 7]: expected [2.0, 3.0], received [-2.0, -3.0]"
            in text)
    divide = region(reference, "2.3", "Divide.partial")
    assert (f"{divide.path}, line {divide.begin + 1}, in partial: "
            f"return ops.reciprocal(b) if i == 0 else b.nonexistent") in text
    assert "AttributeError" in text
    assert "[hidden] tests/course/hidden/test_hidden_2_3.py::test_divide_partial_b_random" in text
    assert "your code:" in text and "b.nonexistent" in text
    # The reference's answer never appears, nor the hidden test's source.
    answer = (reference / divide.path).read_text().split("\n")[divide.begin: divide.end - 1]
    assert answer[0].strip() not in text
    assert "sympy.diff" not in text


def test_an_error_at_evaluation_is_the_students_with_their_lines(tmp_path, reference):
    code = ("class _Broken(Sin):\n    def eval(self, inputs):\n"
            "        raise ValueError('broken on purpose')\n"
            "return make_array(_Broken(), [ops.reshape(x, (1, 2))])")
    sub = submit(tmp_path / "sub", reference, {
        ("2.2", "Sin.derivative"): code,
        ("2.2", "Cos.derivative"): "return ops.reshape(ops.negative(ops.sin(x)), (1, 2))"})
    results, _ = grade(sub, reference, "2.2")
    # An assertion without a message shows the values: the student's array,
    # rebuilt from its answer, in pytest's own words.
    (plain,) = [m for m in results["2.2"]["messages"] if "test_cos_derivative_shape" in m]
    assert "assert 2 == 1" in plain
    assert "array([[-0, -0.841471]], dtype=float32).shape" in plain, plain
    # The lazy array fails when its answer is read in the sandbox: that is the
    # student's exception, at their line, with the values of the test.
    (message,) = [m for m in results["2.2"]["messages"] if "test_sin_derivative" in m]
    assert "ValueError: broken on purpose" in message
    sin = region(reference, "2.2", "Sin.derivative")
    assert f"line {sin.begin + 3}, in eval: raise ValueError('broken on purpose')" in message
    assert "the values in the test:" in message
    assert "want = [0.877582" in message and "x = array([0.5, 1], dtype=float32)" in message


def test_make_leaves_the_hidden_tests_out_and_writes_classroom(tmp_path, reference,
                                                               monkeypatch, capsys):
    monkeypatch.setattr(assignment, "project_root", lambda: reference)
    out = tmp_path / "copy"
    assert main(["assignment", "make", "--tasks", "2.3,1.1", "--out", str(out),
                 "--classroom"]) == 0
    assert "autograding.json" in capsys.readouterr().out
    assert (out / "tests" / "test_fake_tasks.py").is_file()
    assert not (out / "tests" / "course" / "hidden").exists()
    config = json.loads((out / ".github" / "classroom" / "autograding.json").read_text())
    assert [t["name"] for t in config["tests"]] == [
        "Task 1.1: sigmoid's forward rule, stable for any x",
        "Task 2.3: multiply and divide partials"]
    for t, task_id in zip(config["tests"], ("1.1", "2.3")):
        assert t["run"].startswith(f".venv/bin/mlxref assignment grade --tasks {task_id} ")
        assert t["points"] == grader.points(task_id) and t["timeout"] >= 1


def test_the_command_line_writes_json_and_gradescope(tmp_path, reference, capsys):
    sub = submit(tmp_path / "sub", reference, {
        ("1.1", "Sigmoid.numeric"): "raise NotImplementedError('Task 1.1: sigmoid')"})
    scope = tmp_path / "results.json"
    status = main(["assignment", "grade", str(sub), "--reference", str(reference), "--tasks",
                   "1.1", "--json", "--gradescope", str(scope), "--hidden-visibility", "hidden",
                   "--timeout", "120"])
    assert status == 1
    data = json.loads(capsys.readouterr().out)
    r = data["tasks"]["1.1"]
    # One of the three tests (the sandbox's, which calls no sigmoid) passes: a third of
    # the points, not full marks; the hidden test fails on what the stub raised.
    assert data["score"] == round(grader.points("1.1") / 3, 2)
    assert data["max_score"] == grader.points("1.1")
    assert not r["passed"] and (r["tests"], r["failures"]) == (3, 2)
    assert any("hidden test failed: your code raised NotImplementedError" in m
               for m in r["messages"])
    # The stub is named once, under "your code", not under every test.
    assert any("still raises the stub's NotImplementedError" in m for m in r["messages"])
    assert any("your code:" in m and "Task 1.1: sigmoid" in m for m in r["messages"])
    written = json.loads(scope.read_text())
    assert written["score"] == data["score"]
    assert {t["visibility"] for t in written["tests"] if "hidden" in t["name"]} == {"hidden"}
    assert main(["assignment", "grade", str(sub), "--reference", str(reference),
                 "--tasks", "1.1", "--timeout", "0"]) == 2
    assert "--timeout must be a positive number" in capsys.readouterr().err


def test_the_supervisor_reports_status_and_kills_at_the_wall_clock(tmp_path):
    env = sandbox.clean_environment(str(tmp_path))
    python = sandbox.python()
    assert sandbox.run([python, "-I", "-S", "-c", "import sys; sys.exit(3)"], env,
                       str(tmp_path), "", 10) == (3, "", "")
    status, out, _ = sandbox.run([python, "-I", "-S", "-c", "print(input())"], env,
                                 str(tmp_path), "token\n", 10)
    assert (status, out) == (0, "token\n")
    start = time.monotonic()
    status, _, _ = sandbox.run([python, "-I", "-S", "-c", "while True: pass"], env,
                               str(tmp_path), "", 1.5)
    assert status == sandbox.TIMED_OUT and time.monotonic() - start < 10
    status, _, err = sandbox.run(
        [python, "-I", "-S", "-c", "b = bytearray(3 << 30)"], env, str(tmp_path), "", 10,
        memory=1 << 30)
    assert status == 1 and "MemoryError" in err


def test_site_packages_links_what_graded_code_needs_and_never_mlx_or_pytest(tmp_path):
    names = sandbox.site_packages(tmp_path / "site")
    assert {"sympy", "numpy", "graphviz"} <= set(names)
    # no test runs in the child: the tests' own packages are not there to patch
    assert not {"pytest", "_pytest", "pluggy", "hypothesis"} & set(names)
    assert not [n for n in names if n.startswith("mlx") or n.endswith((".dist-info", ".pth"))]


def test_points_default_to_one():
    known = regions.tasks()
    assert grader.points("9.9") == 1
    assert all(isinstance(p, int) and p > 0 for p in grader.POINTS.values())
    assert set(grader.POINTS) <= set(known)
    assert math.isclose(sum(grader.points(t) for t in known),
                        len(known) + sum(p - 1 for p in grader.POINTS.values()))


def test_the_static_check_sees_every_node_of_a_region():
    tree = ast.parse("def _region():\n    x = 1\n    return (lambda: open)()\n")
    problems = sandbox.check_region(tree, lambda n: n + 100)
    assert problems == ["line 103: the name 'open' is not allowed in a task"]
