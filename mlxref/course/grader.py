"""``mlxref assignment grade``: each task graded on its own, in a clean copy of the reference.

For each task, the grader takes from the submission only the text between
``# BEGIN TASK id`` and ``# END TASK id`` of that task's regions (matched by
file and function), and splices it into a fresh temporary copy of the
instructor's reference (``mlxref`` and ``tests``) in which that task's
regions are replaced. Every other task keeps the reference's code, and no
other file of the submission is read: not its tests, not a ``conftest.py``,
not a ``sitecustomize.py``. The files holding the regions are read as data
(``regions.read_submitted``: regular UTF-8 files, no links, capped) and their
markers strictly (``regions.submitted_regions``); a problem there fails the
task it concerns, in one line.

Each region is parsed on its own first: a syntax error fails that task alone,
reported at the student's own line, and the static check of
``mlxref/course/sandbox.py`` refuses imports and calls that reach the system.
Then the task's tests run in a child process with limits (see
mlxref/course/sandbox.py): the reference's visible tests with the task's marker,
plus the hidden tests in the reference's ``tests/course/hidden/`` with that marker.

A task passes when it has tests and none fails; it then earns its ``POINTS``.
The results print as a table, as JSON, or as Gradescope's ``results.json``;
``classroom`` writes GitHub Classroom's autograding configuration.

Read next: mlxref/course/sandbox.py (the child process), tests/course/test_grader.py and
tests/course/test_grader_attacks.py (each attack from issue 15, defeated).
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import sandbox
from .regions import (
    HIDDEN, NEEDS, Refused, choose, find_regions, marker, project_root, read_submitted,
    submitted_regions, tasks,
)

# Points per task; a task not listed is worth 1.
POINTS = {
    "2.5": 2,
    "3.2": 2,
    "4.1": 3,
    "4.2": 2,
    "5.2": 2,
    "6.1": 2,
    "6.2": 2,
}

MEMORY = 4 << 30  # bytes of address space per task (RLIMIT_AS)
BLOCKED = ("mlx", "mlx_cpu", "mlx_metal")  # never importable by graded code

_COPIED = ("mlxref", "tests")  # what a task's scratch copy holds of the reference


def points(task_id):
    return POINTS.get(task_id, 1)


# --- splicing -------------------------------------------------------------------------


class Problem(Exception):
    """Why a task's code cannot run: reported as the task's message."""


def _student_regions(submission, task_id, regions):
    """{reference region: the submission's matching ``SubmittedRegion``}, or Problem.

    Each file is read as data (``regions.read_submitted``: a regular UTF-8
    file, no links, capped) and its markers strictly (``submitted_regions``);
    the first problem that concerns this task fails it, in one line."""
    matched, cache = {}, {}
    for r in regions:
        if r.path not in cache:
            try:
                cache[r.path] = submitted_regions(read_submitted(submission, r.path))
            except Refused as exc:
                raise Problem(f"cannot grade {r.path}: {exc}") from None
            problems = cache[r.path].problems_of(task_id)
            if problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise Problem(f"{r.path}, {problems[0]}{more}")
        mine = [s for s in cache[r.path].regions if s.task == task_id]
        same = [s for s in mine if s.function == r.function]
        if not same:  # the file does not parse outside the regions: match by order
            ours = [x for x in regions if x.path == r.path]
            index = ours.index(r)
            same = [mine[index]] if all(s.function is None for s in mine) and index < len(
                mine) else []
        if not same:
            raise Problem(
                f"{r.place}: no '# BEGIN TASK {task_id}' ... '# END TASK {task_id}' region "
                f"in this function in the submission (keep the markers)"
            )
        if len(same) > 1:
            raise Problem(f"{r.path}, line {same[1].begin}: two TASK {task_id} regions in "
                          f"{r.function} (lines {same[0].begin} and {same[1].begin}); keep one")
        matched[r] = same[0]
    functions = {(r.path, r.function) for r in regions}
    for path, found in cache.items():
        for s in found.regions:
            if s.task == task_id and s.function is not None and (path, s.function) not in \
                    functions:
                raise Problem(f"{path}, line {s.begin}: a TASK {task_id} region in "
                              f"{s.function}, where the reference has none")
    return matched


def _body(student, r):
    """The student's lines re-indented to the reference region's indentation."""
    body = []
    for k, line in enumerate(student.lines):
        if not line.strip():
            body.append("")
        elif line.startswith(student.indent):
            body.append(r.indent + line[len(student.indent):])
        else:
            raise Problem(f"{r.path}, line {student.begin + 1 + k}: this line is indented less "
                          f"than its region's '# BEGIN TASK' marker")
    return body


def splice(task_id, regions, reference, submission, check=True):
    """{relative path: text} of the reference files holding the task's regions,
    with the submission's code in them, and the line map of each region:
    ``[{"path", "first", "last", "student_first"}]`` (1-based lines of the
    spliced file and of the student's). Raises ``Problem``."""
    matched = _student_regions(Path(submission), task_id, regions)
    problems, files, spans = [], {}, []
    by_file = {}
    for r in regions:
        by_file.setdefault(r.path, []).append(r)
    for path, rs in by_file.items():
        lines = (Path(reference) / path).read_text(encoding="utf-8").split("\n")
        names = sandbox.module_names(ast.parse("\n".join(lines)))
        shift = 0
        for r in sorted(rs, key=lambda r: r.begin):
            student = matched[r]
            body = _body(student, r)
            if not any(b.strip() and not b.strip().startswith("#") for b in body):
                body.append(r.indent + "pass")  # an empty region does nothing
            problems += _check(body, r, student, names, check)
            first = r.begin + shift + 1
            lines[r.begin + shift: r.end - 1 + shift] = body
            spans.append({"path": path, "first": first, "last": first + len(body) - 1,
                          "student_first": student.begin + 1})
            shift += len(body) - (r.end - 1 - r.begin)
        files[path] = "\n".join(lines)
    if problems:
        raise Problem("\n".join(problems))
    for path, text in files.items():
        try:
            ast.parse(text)
        except SyntaxError as exc:  # e.g. a region that ends inside an open bracket
            line = _student_line(exc.lineno, [s for s in spans if s["path"] == path])
            raise Problem(f"{path}, line {line}: SyntaxError: {exc.msg}") from None
    return files, spans


def _student_line(lineno, spans):
    for s in spans:
        if s["first"] <= (lineno or 0) <= s["last"]:
            return s["student_first"] + lineno - s["first"]
    return f"{lineno} (in the reference, after your region)"


def _check(body, r, student, names, check):
    """Parse one region alone (inside a function, so return and yield are
    valid) and run the static check on it."""
    source = "def _region():\n" + "\n".join(
        "    " + line[len(r.indent):] if line.strip() else "" for line in body
    )

    def line_of(lineno):
        return student.begin + lineno - 1

    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"{r.path}, line {line_of(exc.lineno or 1)}: SyntaxError: {exc.msg}"]
    if not check:
        return []
    return [f"{r.path}, {p}" for p in sandbox.check_region(tree, line_of, names)]


# --- running a task -------------------------------------------------------------------


def _ignore(directory, names):
    # Compiled files are kept (copied with their sources' times, they stay
    # valid and save compiling mlxref in every task), except the spliced
    # files' own, removed after the copy: they hold the reference's answer.
    return {n for n in names if n in (".pytest_cache", ".hypothesis")}


def _marked_files(root):
    """{marker: the test files under root/tests whose code (not a string in it)
    uses that marker}, paths relative to ``root``: the hidden tests included."""
    found = {}
    for path in sorted((root / "tests").rglob("*.py")):
        if not (path.name.startswith("test_") or path.name.endswith("_test.py")):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "task" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                 and re.fullmatch(r"task\d+_\d+", node.attr)}
        for name in names:
            found.setdefault(name, []).append(path.relative_to(root).as_posix())
    return found


def _ini(known):
    return "[pytest]\naddopts =\nmarkers =\n" + "".join(
        f"    {marker(t)}: Task {t}\n" for t in known)


# Tasks are graded in threads, but CPython 3.11 counts the AST constructor's
# recursion for the whole interpreter: two threads in ast.parse at once can
# raise "SystemError: AST constructor recursion depth mismatch". Splicing
# (which parses) takes turns; only the child processes run side by side.
_PARSING = threading.Lock()


def _run_task(task_id, regions, reference, submission, scratch, known, options):
    result = {"passed": False, "points": 0, "max_points": points(task_id), "tests": 0,
              "failures": 0, "messages": [], "results": []}
    try:
        with _PARSING:
            files, spans = splice(task_id, regions, reference, submission, options["check"])
    except Problem as exc:
        result["messages"].append(str(exc))
        return result, []
    work = Path(scratch) / ("task-" + task_id)
    src = work / "src"
    for name in _COPIED:
        if (reference / name).is_dir():
            shutil.copytree(reference / name, src / name, ignore=_ignore)
    for path, text in files.items():
        target = src / path
        target.write_text(text, encoding="utf-8")
        for compiled in (target.parent / "__pycache__").glob(target.stem + ".*"):
            compiled.unlink()
    site = work / "site-packages"  # the name tells Hypothesis these are not the tests' code
    site.mkdir()
    for top, source in options["site"]:
        os.symlink(source, site / top)
    (work / "pytest.ini").write_text(_ini(known), encoding="utf-8")
    tests = options["tests"].get(marker(task_id), [])
    if not tests:
        result["messages"].append(f"no test uses the marker {marker(task_id)}")
        return result, []
    args = [str(src / t) for t in tests] + [
        "-m", marker(task_id), "-c", str(work / "pytest.ini"), "--rootdir", str(src),
        "-p", "no:cacheprovider", "-q", "--continue-on-collection-errors",
        # a hidden test file may share a visible file's name: each test
        # file is imported under a name of its own (tests/ is on sys.path).
        "--import-mode=importlib",
    ]
    if any(top == "_hypothesis_pytestplugin.py" for top, _ in options["site"]):
        # Hypothesis's pytest plugin is found through package metadata, which
        # the child has none of: named here.
        args += ["-p", "_hypothesis_pytestplugin"]
    env = sandbox.clean_environment(str(work))
    config = {
        "src": str(src), "site": str(site), "blocked": list(BLOCKED), "work": str(work),
        "readable": [source for _, source in options["site"]],
        # The other tasks' copies hold this task's answer: scratch is denied too.
        "deny": [str(reference), str(submission), str(scratch)],
        "hidden": HIDDEN + "/",
        "regions": [dict(s, file=str(src / s["path"])) for s in spans],
        "args": args,
    }
    token = secrets.token_hex(16)
    status, out, err = sandbox.run(
        [sandbox.python(), "-I", "-S", "-c", sandbox.CHILD], env, env["TMPDIR"],
        token + "\n" + json.dumps(config) + "\n", options["timeout"],
        cpu=options["timeout"] + 1, memory=options["memory"],
    )
    tests_seen, errors, done, started = {}, [], None, None
    for line in out.splitlines():
        if not line.startswith(token + " "):
            continue
        record = json.loads(line[len(token) + 1:])
        if "started" in record:
            started = record["started"]
        elif "test" in record:
            tests_seen[record["test"]] = record
        elif "collect_error" in record:
            errors.append(record["collect_error"])
            result["messages"].append(
                f"could not collect {record['collect_error']}: {record['message']}")
        elif record.get("done"):
            done = record
    for record in tests_seen.values():
        result["results"].append({"name": record["test"], "hidden": record["hidden"],
                                  "passed": not record["failed"],
                                  "message": record["message"]})
        if record["failed"]:
            label = "[hidden] " if record["hidden"] else ""
            result["messages"].append(f"{label}{record['test']}: {record['message']}")
    if done is None:
        if status == sandbox.TIMED_OUT:
            why = f"stopped at the wall-clock limit of {options['timeout']:g} s"
        elif status in (-9, -24):
            why = "stopped at the CPU-time limit"
        else:
            tail = err.strip().splitlines()[-1:] or ["no output"]
            why = f"the test run ended abnormally (status {status}): {tail[0][:300]}"
        if started is not None and started not in tests_seen:
            why += f", in {started}"
            label = "[hidden] " if started.startswith(HIDDEN + "/") else ""
            result["results"].append({"name": started, "hidden": bool(label), "passed": False,
                                      "message": why})
        result["messages"].append(why)
    elif done["mlxref"] is not None and not Path(done["mlxref"]).is_relative_to(src):
        result["messages"].append(f"the tests imported {done['mlxref']}, not the copy's mlxref")
        result["results"] = [dict(r, passed=False) for r in result["results"]]
    result["tests"] = len(result["results"])
    result["failures"] = sum(not r["passed"] for r in result["results"])
    result["passed"] = done is not None and result["tests"] > 0 and result["failures"] == 0 \
        and not errors and not result["messages"]
    if result["passed"]:
        result["points"] = result["max_points"]
    elif spans and result["tests"]:
        result["messages"].append(_your_code(spans, src))
    return result, errors


def _your_code(spans, src):
    """The student's own lines of the task, with their line numbers."""
    lines = ["your code:"]
    for s in spans:
        text = (src / s["path"]).read_text(encoding="utf-8").split("\n")
        lines.append(f"  {s['path']}:")
        for k in range(s["first"], s["last"] + 1):
            lines.append(f"  {s['student_first'] + k - s['first']:>5} | {text[k - 1]}")
    return "\n".join(lines)


def grade(directory=".", spec="ALL", timeout=60.0, *, reference=None, memory=MEMORY,
          jobs=None, check=True):
    """Grade the tasks in ``spec`` of the submission ``directory`` against the
    reference checkout ``reference`` (default: the one mlxref is installed
    from), each task in its own scratch copy and child process, with a
    wall-clock limit of ``timeout`` seconds and ``memory`` bytes per task.

    Returns ``({task id: {"passed", "points", "max_points", "tests",
    "failures", "messages", "results"}}, collection errors)``; ``results``
    lists each test: name, hidden, passed, message.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"[assignment grade] No such directory: {directory}.")
    directory = directory.resolve()
    if not (directory / "mlxref").is_dir():
        raise ValueError(
            f"[assignment grade] {directory} is not an mlxref project (no mlxref/ in it)."
        )
    reference = project_root() if reference is None else Path(reference).resolve()
    if not (reference / "mlxref").is_dir() or not (reference / "tests").is_dir():
        raise ValueError(
            f"[assignment grade] The reference {reference} has no mlxref/ and tests/."
        )
    table = tasks(find_regions(reference))
    chosen = choose(spec, list(table), "grade")
    if not timeout or timeout <= 0:
        raise ValueError("[assignment grade] --timeout must be a positive number of seconds.")
    with tempfile.TemporaryDirectory(prefix="mlxref-grade-") as scratch:
        options = {"timeout": float(timeout), "memory": memory, "check": check,
                   "tests": _marked_files(reference),
                   "site": _site(Path(scratch) / "site-packages")}
        jobs = jobs or min(len(chosen), os.cpu_count() or 1)

        def one(task_id):
            return _run_task(task_id, table[task_id][1], reference, directory, scratch,
                             list(table), options)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(one, chosen))
    results, errors = {}, []
    for task_id, (result, task_errors) in zip(chosen, outcomes):
        results[task_id] = result
        errors += [e for e in task_errors if e not in errors]
    missing = _stubbed(reference, table)
    for task_id, result in results.items():
        result["title"] = table[task_id][0]
        blocked = [t for t in NEEDS.get(task_id, ()) if t in missing]
        if blocked and not result["passed"]:
            result["needs"] = blocked
    return results, errors


_SITE = []


def _site(directory):
    """The (name, source) pairs of the packages the child may import (found once
    per process)."""
    if not _SITE:
        names = sandbox.site_packages(directory)
        _SITE.extend((name, os.readlink(directory / name)) for name in names)
    return list(_SITE)


def _stubbed(reference, table):
    """The tasks whose regions in ``reference`` are stubs (a student copy graded
    against itself, as GitHub Classroom does)."""
    stubbed = set()
    for task_id, (_, regions) in table.items():
        for r in regions:
            lines = (reference / r.path).read_text(encoding="utf-8").split("\n")
            if any("raise NotImplementedError(" in x for x in lines[r.begin: r.end - 1]):
                stubbed.add(task_id)
    return stubbed


# --- formats --------------------------------------------------------------------------


def score(results):
    return sum(r["points"] for r in results.values()), sum(
        r["max_points"] for r in results.values())


def format_grades(directory, results, collect_errors):
    """The score table that ``mlxref assignment grade`` prints, then each failing
    task's messages."""
    titles = {t: r.get("title") or "" for t, r in results.items()}
    width = max([len(x) for x in titles.values()] + [5])
    lines = [f"{'task':<4}  {'title':<{width}}  tests  failed  points  result"]
    for task_id, r in results.items():
        result = "pass" if r["passed"] else ("no tests" if r["tests"] == 0 else "FAIL")
        if r.get("needs"):
            result += f" (needs {', '.join(r['needs'])})"
        lines.append(
            f"{task_id:<4}  {titles[task_id]:<{width}}  {r['tests']:>5}  {r['failures']:>6}  "
            f"{r['points']:>2} / {r['max_points']:<2}  {result}"
        )
    passed = sum(r["passed"] for r in results.values())
    got, best = score(results)
    lines.append(f"{passed} of {len(results)} tasks pass: {got} of {best} points")
    for error in collect_errors:
        lines.append(f"could not collect {error}")
    for task_id, r in results.items():
        if r["messages"]:
            lines.append("")
            lines.append(f"task {task_id}:")
            for message in r["messages"]:
                lines += ["  " + x for x in message.splitlines()]
    failing = [t for t, r in results.items() if not r["passed"]]
    if failing:
        cd = "" if Path(directory).resolve() == Path.cwd().resolve() else f"cd {directory} && "
        lines.append("")
        lines.append(f"to see why: {cd}python -m pytest tests -m {marker(failing[0])}")
    return "\n".join(lines)


def grades_json(results):
    """``--json``: the score, and per task: passed, points, tests, failures, messages."""
    got, best = score(results)
    return json.dumps({
        "score": got, "max_score": best,
        "tasks": {t: {k: r[k] for k in ("passed", "points", "max_points", "tests",
                                        "failures", "messages")}
                  for t, r in results.items()},
    }, indent=2)


def gradescope(results, hidden="after_published"):
    """Gradescope's ``results.json``: one scored entry per task (its visible
    tests' failures in its output), and one entry per test, visible tests
    ``visible`` and hidden ones ``hidden`` (default ``after_published``)."""
    entries = []
    for task_id, r in results.items():
        shown = [x for x in r["results"] if not x["hidden"]]
        secret = [x for x in r["results"] if x["hidden"]]
        output = [f"{sum(x['passed'] for x in shown)} of {len(shown)} visible tests pass"]
        if secret:
            output.append(f"{sum(x['passed'] for x in secret)} of {len(secret)} hidden "
                          f"tests pass")
        output += [m for m in r["messages"] if not m.startswith("[hidden] ")]
        entries.append({"name": f"Task {task_id}: {r.get('title', '')}".rstrip(": "),
                        "score": r["points"], "max_score": r["max_points"],
                        "output": "\n".join(output), "visibility": "visible"})
        for x in r["results"]:
            entries.append({
                "name": f"{task_id} {x['name']}",
                "status": "passed" if x["passed"] else "failed",
                "output": x["message"] or "",
                "visibility": hidden if x["hidden"] else "visible",
            })
    got, best = score(results)
    return {"score": got, "max_score": best, "tests": entries}


def classroom(chosen, table, timeout=60.0):
    """GitHub Classroom's ``.github/classroom/autograding.json``: one test per
    task, running ``grade`` for that task (exit 0 when it passes)."""
    return {"tests": [
        {
            "name": f"Task {t}: {table[t][0]}",
            "setup": "make venv",
            "run": f".venv/bin/mlxref assignment grade --tasks {t} --timeout {timeout:g}",
            "input": "",
            "output": "",
            "comparison": "included",
            "timeout": max(1, int(timeout // 60) + 2),
            "points": points(t),
        }
        for t in chosen
    ]}
