"""``mlxref assignment``: the task table, and make -> grade checked end to end.

The round trip: a student copy with two tasks stubbed fails exactly those two
tasks; the reference passes every task; a copy with ALL tasks stubbed still
imports, and fails every test of every task (so each task's tests really
exercise its regions). Grading splices each task's regions into a clean copy
of the reference and runs its tests in a child process (mlxref/course/grader.py;
test_grader.py and test_grader_attacks.py test it on its own).
"""

import array
import ast
import configparser
import contextlib
import importlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import computed_once

import mlxref.core as mx
from mlxref.course import assignment, grader
from mlxref.course.regions import NEEDS, find_regions, marker, project_root, tasks
from mlxref.cli import main

ROOT = project_root()
TASKS = tasks()
PAIR = ["2.3", "4.3"]  # two tasks no other task's tests need


def test_at_least_ten_tasks_each_registered_hinted_and_tested():
    assert len(TASKS) >= 10
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    markers = config["tool:pytest"]["markers"].splitlines()
    registered = {line.split(":")[0].strip() for line in markers}
    tests = (ROOT / "tests" / "course" / "test_tasks.py").read_text()
    for task_id, (title, regions) in TASKS.items():
        name = marker(task_id)
        assert name in registered, f"the marker of task {task_id} is not in setup.cfg"
        assert f"@pytest.mark.{name}\n" in tests, f"task {task_id} has no tests"
        for r in regions:
            assert (task_id, r.function) in assignment.HINTS, f"no stub text for {r.place}"
    places = {(r.task, r.function) for _, regions in TASKS.values() for r in regions}
    assert set(assignment.HINTS) == places, "stub texts for regions that do not exist"
    for task_id, needs in NEEDS.items():
        assert task_id in TASKS and set(needs) <= set(TASKS)


def test_list_prints_id_title_and_existing_functions(capsys):
    assert main(["assignment", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(TASKS)
    for line, (task_id, (title, regions)) in zip(lines, TASKS.items()):
        assert line.startswith(f"{task_id} ") and title in line
        for r in regions:
            assert r.place in line
            module = importlib.import_module(r.path[: -len(".py")].replace("/", "."))
            target = module
            for part in r.function.split("."):
                target = getattr(target, part)  # the cited function exists
            assert callable(target)
    assert lines[0].startswith("1.1  sigmoid's forward rule")
    assert "mlxref/core/transforms/vjp.py:vjp" in next(x for x in lines if x.startswith("4.1"))


def test_every_region_stubs_to_one_raise_at_its_indentation():
    for task_id, (title, regions) in TASKS.items():
        for r in regions:
            lines = (ROOT / r.path).read_text().split("\n")
            assert lines[r.begin - 1] == f"{r.indent}# BEGIN TASK {task_id}: {title}"
            assert lines[r.end - 1] == f"{r.indent}# END TASK {task_id}"
            stub = assignment.stub(r)
            assert stub.startswith(f'{r.indent}raise NotImplementedError("Task {task_id}: ')
            body = lines[: r.begin] + [stub] + lines[r.end - 1 :]
            ast.parse("\n".join(body))  # valid Python with only this region stubbed


def test_bad_markers_are_reported(tmp_path):
    (tmp_path / "mlxref").mkdir()
    source = tmp_path / "mlxref" / "m.py"
    source.write_text("def f():\n    # BEGIN TASK 1.1: f\n    return 1\n")
    with pytest.raises(ValueError, match="TASK 1.1 has no END"):
        find_regions(tmp_path)
    source.write_text("def f():\n    # BEGIN TASK 1.1: f\n    return 1\n# END TASK 1.1\n")
    with pytest.raises(ValueError, match="not indented like its BEGIN"):
        find_regions(tmp_path)
    source.write_text("def f():\n    # BEGIN TASK 1.1\n    return 1\n    # END TASK 1.1\n")
    with pytest.raises(ValueError, match="a marker must read"):
        find_regions(tmp_path)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["make", "--tasks", "2.3,9.9", "--out", "{tmp}/new"], "Unknown task '9.9'"),
        (["make", "--tasks", "2.3", "--out", "{tmp}/full"], "is not an empty directory"),
        (["grade", "{tmp}/missing"], "No such directory"),
        (["grade", "{tmp}/full"], "is not an mlxref project"),
        (["grade", str(ROOT), "--tasks", "x"], "Unknown task 'x'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, argv, message):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file.txt").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    r = subprocess.run([sys.executable, "-m", "mlxref", "assignment", *argv],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "new").exists()


def _failing(results):
    return sorted(t for t, r in results.items() if not r["passed"])


def test_round_trip(tmp_path, capsys):
    # 1. A student copy with two tasks stubbed.
    student = tmp_path / "student"
    assert main(["assignment", "make", "--tasks", ",".join(PAIR), "--out", str(student)]) == 0
    assert "2 task(s) to implement" in capsys.readouterr().out
    for name in ("setup.cfg", "pyproject.toml", "Makefile", "README.md", "ASSIGNMENT.md",
                 "tests/course/test_tasks.py", "mlxref/course/assignment.py"):
        assert (student / name).is_file(), name
    for skipped in (".git", ".venv", ".pytest_cache", "mlxref.egg-info"):
        assert not (student / skipped).exists(), skipped
    assert not list(student.rglob("__pycache__"))
    stubbed = {r.path for t in PAIR for r in TASKS[t][1]}
    for path in {r.path for _, regions in TASKS.values() for r in regions} - stubbed:
        assert (student / path).read_bytes() == (ROOT / path).read_bytes(), path
    divide = (student / "mlxref/core/primitives/elementwise.py").read_text()
    assert '        raise NotImplementedError("Task 2.3: return d (a / b) / da' in divide
    assert "# BEGIN TASK 2.3: multiply and divide partials" in divide
    # Its venv holds only what the tasks need (no docs stack, no MLX, no NumPy), its `make
    # test` tries no Chromium, and `make task T=ID` collects one file, not the suite.
    if shutil.which("make"):
        plan = subprocess.run(["make", "-n", "venv", "test", "task", f"T={PAIR[0]}"],
                              cwd=student, capture_output=True, text=True).stdout
        assert "pip install -q --no-compile -e '.[course]'" in plan, plan
        assert "chromium" not in plan and "MLXREF_NEED_CHROMIUM" not in plan
        assert (f"pytest -p no:cacheprovider tests/course/test_tasks.py -m {marker(PAIR[0])}"
                in plan)
    config = configparser.ConfigParser()
    config.read(student / "setup.cfg")
    assert config["options.extras_require"]["course"].split() == [
        "pytest", "pytest-xdist>=3.2", "hypothesis"]
    assert f"make task T={PAIR[0]}" in (student / "ASSIGNMENT.md").read_text()

    # 2. Grade it: exactly those two tasks fail, and a task left implemented passes.
    graded = ["2.2"] + PAIR
    r = subprocess.run(
        [sys.executable, "-m", "mlxref", "assignment", "grade", str(student), "--json",
         "--tasks", ",".join(graded)],
        capture_output=True, text=True,
    )
    assert r.returncode == 1, r.stderr
    results = json.loads(r.stdout)["tasks"]
    assert list(results) == graded
    assert _failing(results) == PAIR
    for task_id in PAIR:
        assert results[task_id]["failures"] == results[task_id]["tests"] > 0
        assert results[task_id]["points"] == 0



# Grading every task at once: the grade's trusted process records and replays the
# tests once, and the whole submission's copy holds every task, as for a class.


def test_the_reference_passes_every_task():
    results, errors = grader.grade(ROOT, "ALL")
    assert list(results) == list(TASKS)
    assert _failing(results) == [] and errors == []
    assert all(r["tests"] > 0 for r in results.values())


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    """A copy with every task stubbed, made once per test run (test_leaks.py
    checks such a copy for leaks: not again here)."""
    def make():
        out = tmp_path_factory.mktemp("all") / "all"
        assert main(["assignment", "make", "--tasks", "ALL", "--out", str(out),
                     "--no-check-leaks"]) == 0
        return str(out)

    return Path(computed_once(tmp_path_factory, "assignment_everything", make))


@pytest.fixture(scope="module")
def graded_6_2(everything, tmp_path_factory):
    """``mlxref assignment grade`` of task 6.2 in that copy: its exit status and
    what it printed, run once per test run for the two tests that read it."""
    def grade():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            status = main(["assignment", "grade", str(everything), "--tasks", "6.2"])
        return status, printed.getvalue()

    return computed_once(tmp_path_factory, "assignment_graded_6_2", grade)


def test_the_copy_with_every_task_stubbed_imports(everything, graded_6_2):
    r = subprocess.run(
        [sys.executable, "-c", "import mlxref, mlxref.core, mlxref.cli; print(mlxref.__file__)"],
        cwd=everything, env={"PYTHONPATH": str(everything)}, capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(everything / "mlxref" / "__init__.py")
    status, table = graded_6_2
    assert status == 1
    assert "6.2   checkpoint: recompute in the backward pass" in table
    assert "0 of 1 tasks pass" in table


def test_the_command_grade_prints_to_see_why_runs_as_printed(everything, graded_6_2, tmp_path):
    # On main it read `cd DIR && python -m pytest tests -m task6_2`: no `python` on a
    # Debian PATH, or one without pytest, and the whole suite collected (15 s) for one task.
    status, printed = graded_6_2
    assert status == 1
    (line,) = [x for x in printed.splitlines() if x.startswith("to see why: ")]
    command = line[len("to see why: "):]
    assert command == (f"cd {everything} && {sys.executable} -m pytest "
                       "tests/course/test_tasks.py -m task6_2")
    # from another directory, with no venv on the PATH
    r = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 1, r.stdout + r.stderr
    summary = r.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ failed, \d+ deselected in [\d.]+s", summary), summary
    assert "Task 6.2: " in r.stdout  # the stub's message: what to implement


def test_the_command_to_see_why_names_the_venv_relative_to_the_copy(tmp_path, monkeypatch):
    copy = tmp_path / "copy"
    (copy / "tests").mkdir(parents=True)
    (copy / "tests" / "test_x.py").write_text("import pytest\n@pytest.mark.task2_1\n"
                                              "def test_x():\n    pass\n")
    python = copy / ".venv" / "bin" / "python"
    assert grader.rerun_command(copy, "2.1", python) == (
        f"cd {copy} && .venv/bin/python -m pytest tests/test_x.py -m task2_1")
    monkeypatch.chdir(copy)
    assert grader.rerun_command(copy, "2.1", python) == (
        ".venv/bin/python -m pytest tests/test_x.py -m task2_1")
    assert grader.rerun_command(copy, "3.1", "/usr/bin/python3") == (
        "/usr/bin/python3 -m pytest tests -m task3_1")  # no file uses the marker


def test_every_task_stubbed_fails_every_test(everything):
    results, errors = grader.grade(everything, "ALL")
    assert errors == [] and list(results) == list(TASKS)
    for task_id, result in results.items():
        assert result["failures"] == result["tests"] > 0, (task_id, result)


def test_a_failing_assert_shows_the_arrays_values():
    # tests/conftest.py: pytest's reprlib picked repr_array (array.array's) by the
    # type's name, and the message hid the values behind "raised in repr()".
    from _pytest._io.saferepr import saferepr

    a = mx.array([[1.0, 2.0], [3.0, 4.0]]) * 2
    shown = saferepr(a)
    assert "raised in repr" not in shown and shown == repr(a)
    assert "[[2, 4]," in shown and "[6, 8]]" in shown
    assert saferepr(array.array("d", [1.5])) == "array('d', [1.5])"
