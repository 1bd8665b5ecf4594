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

No test runs next to the student's code. The tests reach it only through
``judge.run`` (mlxref/course/judge.py), in four steps:

1. ``_record``: the chosen tasks' tests, visible and hidden, run on the
   reference in a trusted process, which records each call and its result.
2. ``_answer``: a child under OS isolation (mlxref/course/sandbox.py) gets a
   task's calls one at a time and answers them with the spliced copy, as
   data, on a size-capped, schema-checked channel (``_answers``). The
   visible tests' calls and the hidden tests' go to two children: the
   hidden inputs never reach a run whose words a student sees.
3. A hidden test passes when every call got the reference's result back
   (``judge.same``), decided here. A visible test is replayed (``_replay``)
   in a trusted process, its ``run`` calls returning the student's answers,
   so its own assertions give the verdict and the message.
4. ``_whole``: the calls that ran only their own task's code on the
   reference are answered again by a copy holding the student's code for
   every task; a test passes only if they get the same answers there
   (``_against_whole``), so a task cannot hand its work to another task's
   reference code.

A call that goes unanswered (the child died, hit a limit, or wrote a line
out of place) fails its test with a one-line reason, and nothing a run
prints, and no region, can make ``grade`` raise (``_answers``,
``_too_deep``). A task's ``POINTS`` are split over its tests by their
``WEIGHTS`` (1 each unless set); it passes when every test does.
The results print as a table, as JSON, or as Gradescope's ``results.json``,
all with the same score; ``classroom`` writes GitHub Classroom's
autograding configuration.

Read next: mlxref/course/judge.py (the three steps' data), mlxref/course/sandbox.py
(the child process), tests/course/test_grader.py and
tests/course/test_grader_attacks.py (each attack, defeated).
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import judge, sandbox
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

# How a task's points are split over its tests: each test's weight (default 1), by
# its name as the results show it ("tests/course/test_tasks.py::test_x"), or by that
# name without parameters ("[...]") for every case of a parametrized test. A task
# earns its POINTS times the passing tests' share of the weight.
WEIGHTS = {}

MEMORY = 4 << 30  # bytes of address space per task (RLIMIT_AS)
BLOCKED = ("mlx", "mlx_cpu", "mlx_metal")  # never importable by graded code

_COPIED = ("mlxref", "tests")  # what a task's scratch copy holds of the reference


def points(task_id):
    return POINTS.get(task_id, 1)


# --- splicing -------------------------------------------------------------------------


class Problem(Exception):
    """Why a task's code cannot run: reported as the task's message."""


def _student_regions(submission, task_id, regions, read=None):
    """{reference region: the submission's matching ``SubmittedRegion``}, or Problem.

    Each file is read as data (``regions.read_submitted``: a regular UTF-8
    file, no links, capped) and its markers strictly (``submitted_regions``);
    the first problem that concerns this task fails it, in one line. ``read``
    ({path: what ``submitted_regions`` found, or why the file was refused})
    keeps each file's reading for the next task's regions (``splice_whole``)."""
    matched, read = {}, {} if read is None else read
    for r in regions:
        if r.path not in read:
            try:
                read[r.path] = submitted_regions(read_submitted(submission, r.path))
            except Refused as exc:
                read[r.path] = exc
        if isinstance(read[r.path], Refused):
            raise Problem(f"cannot grade {r.path}: {read[r.path]}")
        problems = read[r.path].problems_of(task_id)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise Problem(f"{r.path}, {problems[0]}{more}")
        mine = [s for s in read[r.path].regions if s.task == task_id]
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
    for path in dict.fromkeys(r.path for r in regions):  # this task's files only
        for s in read[path].regions:
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
    return _spliced(_student_regions(Path(submission), task_id, regions), reference, check)


def splice_whole(table, reference, submission, check=True):
    """``splice`` of every task of ``table`` (``{task id: (title, regions)}``)
    at once, into one set of files. A task that does not splice on its own (a
    problem of its regions) keeps the reference's code. Each file is read
    once, for every task of it."""
    matched, read = {}, {}
    for task_id, (_, regions) in table.items():
        try:
            mine = _student_regions(Path(submission), task_id, regions, read)
            _spliced(mine, reference, check)  # the task splices on its own
        except Problem:
            continue
        matched.update(mine)
    return _spliced(matched, reference, check) if matched else ({}, [])


def _spliced(matched, reference, check):
    """``splice`` of the regions ``matched`` ({reference region: the
    submission's ``SubmittedRegion``})."""
    problems, files, spans = [], {}, []
    by_file = {}
    for r in matched:
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
            # compiled, not only parsed: some errors (``continue`` outside a
            # loop, a repeated argument name, ``yield`` in a comprehension)
            # appear only then, and would stop the whole copy from importing,
            # failing every other task's calls with this one's error.
            compile(text, path, "exec", dont_inherit=True)
        except SyntaxError as exc:  # e.g. a region that ends inside an open bracket
            line = _student_line(exc.lineno, [s for s in spans if s["path"] == path])
            raise Problem(f"{path}, line {line}: SyntaxError: {exc.msg}") from None
        except (RecursionError, MemoryError, SystemError) as exc:
            first = min(s["student_first"] for s in spans if s["path"] == path)
            raise Problem(_too_deep(path, first, exc)) from None
    return files, spans


def _too_deep(path, line, exc):
    """The one-line reason for code whose nesting CPython's parser cannot hold
    (``-`` repeated 200,000 times: MemoryError; ``a.b.b...``: RecursionError)."""
    return (f"{path}, line {line}: the region's code is nested too deeply to parse "
            f"({type(exc).__name__}); write it as several statements")


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
    except (RecursionError, MemoryError, SystemError) as exc:
        return [_too_deep(r.path, student.begin + 1, exc)]
    if not check:
        return []
    return [f"{r.path}, {p}" for p in sandbox.check_region(tree, line_of, names)]


# --- running a task -------------------------------------------------------------------


def _ignore(directory, names):
    # Compiled files are kept (copied with their sources' times, they stay
    # valid and save compiling mlxref in every task), except the spliced
    # files' own, removed after the copy: they hold the reference's answer.
    # No test runs in a copy (the judge records and replays them outside):
    # of tests/, only the modules the programs may import are copied, and
    # the hidden tests never are.
    hidden = Path(directory).as_posix().endswith("/" + str(Path(HIDDEN).parent))
    return {n for n in names if n in (".pytest_cache", ".hypothesis", "conftest.py") or
            n.startswith("test_") and n.endswith(".py") or hidden and n == Path(HIDDEN).name}


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


def _new_result(task_id):
    return {"passed": False, "points": 0, "max_points": points(task_id), "tests": 0,
            "failures": 0, "messages": [], "results": [], "replay": {}}


def _run_task(task_id, regions, reference, submission, scratch, options):
    """Steps 2 and 3 of one task (the visible tests' verdicts wait for the
    replay, ``_finish``): its result. Never raises: whatever goes wrong is the
    task's failure, with a one-line reason."""
    try:
        return _grade_task(task_id, regions, reference, submission, scratch, options)
    except Exception as exc:  # noqa: BLE001 (a bug of ours must cost this task only)
        result = _new_result(task_id)
        result["messages"].append(f"the grader could not grade task {task_id}: "
                                  f"{type(exc).__name__}: {str(exc)[:300]}")
        return result


def _grade_task(task_id, regions, reference, submission, scratch, options):
    result = _new_result(task_id)
    try:
        with _PARSING:
            files, spans = splice(task_id, regions, reference, submission, options["check"])
    except Problem as exc:
        result["messages"].append(str(exc))
        return result
    config, work = _copy(Path(scratch) / secrets.token_hex(8), files, spans, reference,
                         submission, scratch, options)
    if not options["tests"].get(marker(task_id)):
        result["messages"].append(f"no test uses the marker {marker(task_id)}")
        return result
    _answer_and_judge(result, config, work, options, task_id)
    result["spans"], result["src"] = spans, Path(config["src"])
    return result


def _copy(work, files, spans, reference, submission, scratch, options):
    """A scratch copy of the reference in ``work`` with the spliced ``files``
    in it, and the links to the packages graded code may import: the
    answering child's ``(config, work)``."""
    src = work / "src"
    for name in _COPIED:
        if (reference / name).is_dir():
            shutil.copytree(reference / name, src / name, ignore=_ignore)
    for path, text in files.items():
        target = src / path
        target.write_text(text, encoding="utf-8")
        for compiled in (target.parent / "__pycache__").glob(target.stem + ".*"):
            compiled.unlink()
    site = work / "site-packages"
    site.mkdir()
    for top, source in options["site"]:
        os.symlink(source, site / top)
    return {
        "src": str(src), "site": str(site), "blocked": list(BLOCKED), "work": str(work),
        "readable": [source for _, source in options["site"]],
        # The other tasks' copies hold this task's answer: scratch is denied too.
        "deny": [str(reference), str(submission), str(scratch)],
        "regions": [dict(s, file=str(src / s["path"])) for s in spans],
        "functions": options["functions"],
    }, work


def _child(config, work, options, calls=()):
    """Run the child (``sandbox.CHILD``) on ``config`` in ``work``, isolated
    where the machine allows: ``(token, (status, stdout, stderr))``. The child
    gets call k + 1 only after it answered call k: it never sees a later
    call's inputs, which may hold an earlier call's expected result, before
    it has answered."""
    env = sandbox.clean_environment(str(work))
    token = secrets.token_hex(16)
    argv = [sandbox.python(), "-I", "-S", "-c", sandbox.CHILD]
    if options["isolated"]:
        argv = sandbox.isolated(argv, work, [source for _, source in options["site"]],
                                frozen=[config["src"], config["site"]])
    stdin = token + "\n" + json.dumps(config) + "\n"
    lines = [judge.dumps(call) + "\n" for call in calls]
    answered = [0]

    def feed(line):  # the next call, once the last one sent is answered
        if not line.startswith(token + " "):
            return None
        if not line.startswith(f'{token} {{"answer": {answered[0]},'):
            return ""  # a line out of turn: no more calls, and the child reads the end
        answered[0] += 1
        return lines[answered[0]] if answered[0] < len(lines) else None

    return token, sandbox.run(
        argv, env, env["TMPDIR"], stdin + (lines[0] if lines else ""), options["timeout"],
        cpu=options["timeout"] + 1, memory=options["memory"], watch=str(work),
        feed=feed if lines else None,
    )


def _imported(result, done, src):
    """A run that imported another mlxref than the copy's fails every test of
    the task. The path is not shown: the answering child's records carry
    nothing a student sees (its path could spell out hidden inputs)."""
    if done is not None and done["mlxref"] is not None and not Path(
            done["mlxref"]).is_relative_to(src):
        result["messages"].append("the tests' child imported another mlxref, not the copy's")
        for x in result["results"]:
            x["passed"] = False


# --- the three steps: recorded on the reference, answered in the sandbox, judged or
# replayed outside it (mlxref/course/judge.py tells them)

_MAIN = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']; "
         "from mlxref.course import judge; sys.exit(judge.trusted_main(sys.argv[2]))")


def _trusted(reference, chosen, scratch, options):
    """The grade's trusted process (``judge.trusted_main``), started with the
    grade, which loads no submitted code: it records the visible tests, then
    the hidden ones, on the reference (``_record`` reads each part's calls as
    soon as it is written), then waits for the students' answers
    (``_answered``) and replays the visible tests on them (``_replay``):
    ``(status, stderr)``."""
    work = Path(scratch) / "trusted"
    work.mkdir(exist_ok=True)
    (work / "pytest.ini").write_text(_ini(options["known"]), encoding="utf-8")

    def args(hidden):
        files = _files(chosen, options, hidden)
        return [str(reference / f) for f in files] + [
            "-m", " or ".join(sorted(marker(t) for t in chosen)), "-c",
            str(work / "pytest.ini"), "--rootdir", str(reference), "-p", "no:cacheprovider",
            "-q", "--import-mode=importlib"] if files else []

    spec = {"visible": {"args": args(False), "calls": str(work / _CALLS[False])},
            "hidden": {"args": args(True), "calls": str(work / _CALLS[True])},
            "answers": str(work / "answers.json"), "verdicts": str(work / "verdicts.json")}
    (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    env = sandbox.clean_environment(str(work))
    # it waits for the answers as long as every task may take
    status, _, err = sandbox.run(
        [sys.executable, "-c", _MAIN, str(reference), str(work / "spec.json")], env, str(work),
        "", options["timeout"] * (len(chosen) + 1), cpu=2 * options["timeout"] + 1,
        memory=options["memory"])
    return status, err


_CALLS = {False: "calls.json", True: "hidden-calls.json"}  # each part's recording


def _files(chosen, options, hidden):
    """The test files of the chosen tasks, hidden or visible."""
    return sorted({f for t in chosen for f in options["tests"].get(marker(t), [])
                   if _hidden(f) == hidden})


def _record(chosen, scratch, options, hidden, running):
    """Step 1: the chosen tasks' hidden (or visible) tests run on the
    reference: ``({task id: [(test id, entry)]}, test files that could not be
    collected)``, each entry its test's calls with the reference's results
    (``judge.Recorder``), read as soon as ``running``, the trusted process
    (``_trusted``), has written them. A task whose tests could not be
    recorded gets one failed entry saying why (the instructor's problem)."""
    markers = {marker(t): t for t in chosen}
    files = _files(chosen, options, hidden)
    if not files:
        return {}, []
    out = Path(scratch) / "trusted" / _CALLS[hidden]
    while not out.exists() and not running.done():
        time.sleep(0.02)
    status, err = running.result() if not out.exists() else (0, "")
    try:
        recorded = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        why = _ended(status, err, options) if status else "it wrote no results"
        name = f"{HIDDEN}/" if hidden else files[0]
        return {t: [(name, {"markers": [], "passed": False, "calls": [],
                            "message": f"the reference's run failed: {why}"})]
                for t in chosen}, []
    found = {}
    for name, entry in recorded["tests"].items():
        for m in entry["markers"]:
            if m in markers:
                found.setdefault(markers[m], []).append((name, entry))
    return found, recorded["errors"]


def _hidden(name):
    return name.startswith(HIDDEN + "/")


def _answer(entries, config, work, options, shown):
    """Step 2 for some of a task's tests: every call of ``entries`` answered by
    the spliced copy in a sandboxed child of its own. ``(answer, done record)``:
    ``answer(call)`` is the graded code's data, or ``(why it has none,)``. Why
    a run ended early is told in full when ``shown``; else only a limit by
    name: not its stderr, exit status or signal, which the graded code chooses
    and could spell the calls' inputs with."""
    calls, index = [], {}
    for _, entry in entries:
        for call, _ in entry["calls"]:
            index.setdefault(judge.dumps(call), len(calls))
            if len(index) > len(calls):
                calls.append(call)
    if not calls:
        return None, None
    token, (status, out, err) = _child(dict(config, calls=len(calls)), work, options, calls)
    entered = []
    answers, done, why = _answers(out, token, len(calls), entered)
    if why is None and done is not None:
        why = "its run ended before it answered every call"
    elif why is None:
        why = _ended(status, err if shown else "", options) if shown or status in _LIMITS \
            else "its run ended before it answered every call"

    def answer(call, tasks=False):  # its data, or with ``tasks`` the tasks it ran
        k = index[judge.dumps(call)]
        if tasks:
            return entered[k] if k < len(entered) else None
        return answers[k] if k < len(answers) else (why,)
    return answer, done


def _answer_and_judge(result, config, work, options, task_id):
    """Steps 2 and 3 for one task. The visible tests' calls are answered by
    one child, their answers kept in ``result["replay"]`` for the replay; the
    hidden tests' by another, which is all they reach: each hidden test passes
    when every call of it got the reference's result back (``judge.same``)."""
    result["done"], result["answered"] = [], {}
    for hidden in (False, True):  # each waits for its own recording (grade)
        entries = []
        for name, entry in options["recorded"][hidden].result()[0].get(task_id, []):
            message = None
            if not entry["passed"]:  # the instructor's to fix: the grade cannot stand on it
                message = "the reference fails this test"
            elif not entry["calls"]:
                message = "this test calls no program (judge.run): it grades nothing"
            if message is None:
                entries.append((name, entry))
            else:
                result["results"].append({"name": name, "hidden": hidden, "passed": False,
                                          "message": message})
        answer, done = _answer(entries, config, work, options, shown=not hidden)
        if done is not None:
            result["done"].append(done)
        for name, entry in entries:
            got = [answer(call) for call, _ in entry["calls"]]
            result["answered"][name] = list(zip(
                [call for call, _ in entry["calls"]], got,
                entry.get("entered") or [None] * len(got),
                [answer(call, tasks=True) for call, _ in entry["calls"]]))
            if not hidden:
                result["replay"][name] = {
                    "calls": [[call, None if isinstance(a, tuple) else a]
                              for (call, _), a in zip(entry["calls"], got)],
                    "why": next((a[0] for a in got if isinstance(a, tuple)), None)}
                continue
            message = None
            for (call, want), a in zip(entry["calls"], got):
                message = a[0] if isinstance(a, tuple) else \
                    judge.same(a, want, call["tol"]) and _wrong(a, want)
                if message:
                    break
            result["results"].append({"name": name, "hidden": True, "passed": not message,
                                      "message": f"hidden test failed: {message}" if message
                                      else None})


def _replay(running, scratch, options):
    """Step 3 for the visible tests: each one ran again on the reference, in a
    trusted process, with ``judge.run`` giving back the graded code's answers
    (``judge.Replayer``): ``{test id: {"passed", "message"}}``, or why the
    replay failed."""
    status, err = running.result()
    try:
        return json.loads((Path(scratch) / "trusted" / "verdicts.json").read_text(
            encoding="utf-8"))
    except (OSError, ValueError):
        return _ended(status, err, options) if status else "it wrote no results"


def _answered(results, scratch):
    """Hand the replay the visible tests' answers: written whole, then renamed
    into place, so that it never reads half a file."""
    answers = {name: x for r in results.values() for name, x in r["replay"].items()}
    work = Path(scratch) / "trusted"
    work.mkdir(exist_ok=True)
    (work / "answers.part").write_text(judge.dumps(answers), encoding="utf-8")
    os.replace(work / "answers.part", work / "answers.json")


def _replayed(result, replayed):
    """The task's visible tests' verdicts, from the replay, before its hidden
    tests' in ``result["results"]``."""
    visible = []
    for name in result.pop("replay"):
        got = replayed.get(name) if isinstance(replayed, dict) else None
        if got is None:
            why = replayed if isinstance(replayed, str) else "it did not run"
            got = {"passed": False, "message": f"the grader could not replay it: {why}"}
        visible.append({"name": name, "hidden": False, "passed": got["passed"] is True,
                        "message": got["message"]})
    early = [x for x in result["results"] if not x["hidden"]]
    hidden = [x for x in result["results"] if x["hidden"]]
    result["results"] = early + visible + hidden


def _own(entry, task_id):
    """The calls of a test of ``task_id`` that ran no other task's region on
    the reference (``judge.Recorder``'s ``entered``)."""
    return [call for (call, _), entered in zip(entry["calls"], entry.get("entered") or [])
            if set(entered) <= {task_id}]


def _whole(table, chosen, reference, submission, scratch, options):
    """Step 2 for the whole submission: every task's regions spliced into one
    copy (``splice_whole``; a stub stays a stub), answering the calls of the
    chosen tasks' tests that ran only their own task's code on the reference
    (``_own``): ``(answer, the copy's config, its directory)``.

    A task is graded in a copy where every other task has the reference's
    code, so a task's code that hands its work to another task's (2.1's vjp
    computed with ``self.jvp``, 3.1's jvp with ``self.vjp``, or with a 3.1
    left a stub) gets the reference's answer there. The calls that need no
    other task's code must be answered the same with the student's own code
    for every other task (``_against_whole``), and so must every call whose
    run in the task's own copy ran a task that the reference's did not
    (``_strays``). The other calls that run other tasks' code (2.2's higher
    derivatives run through 2.3's rules and 4.1's walk) are not held to it,
    so that another task's mistakes cost no task its points."""
    with _PARSING:
        files, spans = splice_whole(table, reference, submission, options["check"])
    config, work = _copy(Path(scratch) / secrets.token_hex(8), files, spans, reference,
                         submission, scratch, options)
    pending = [(t, name, call) for hidden in (False, True) for t in chosen  # visible first
               for name, entry in options["recorded"][hidden].result()[0].get(t, [])
               if entry["passed"] for call in _own(entry, t)]
    return _answer_all(pending, config, work, options), config, work


def _answer_all(pending, config, work, options):
    """``pending`` calls ``(task id, test id, call)`` answered by the whole
    submission's copy, in one child, the visible tests' calls first (its
    answers are compared, never shown): ``answer`` as ``_answer`` gives it."""
    answers, ended = {}, {}
    while pending:
        # A run that ends early ends at one test's call: the other tests' calls
        # after it get a run of their own, so that no test's crash costs
        # another its points; after three, the task's calls go unanswered (each
        # run may take the wall-clock limit)
        answer, _ = _answer([("", {"calls": [[call, None] for *_, call in pending]})], config,
                            work, options, shown=False)
        for k, (task_id, name, call) in enumerate(pending):
            answers[judge.dumps(call)] = answer(call)
            if isinstance(answers[judge.dumps(call)], tuple):
                ended[task_id] = ended.get(task_id, 0) + 1
                pending = [(t, n, c) for t, n, c in pending[k + 1:]
                           if n != name and ended.get(t, 0) < 3]
                break
        else:
            pending = []
    return lambda call: answers.get(judge.dumps(call), (
        "its run ended before it answered every call",))


def _strays(task_id, result):
    """The calls of the task's passing tests that, in its own copy, ran a
    task whose region the reference's run of them did not (a task's work
    handed to another's code): ``[(task id, test id, call)]``."""
    return [(task_id, x["name"], call) for x in result["results"] if x["passed"]
            for call, _, reference, mine in result["answered"].get(x["name"], [])
            if reference is not None and mine is not None and not set(reference) <= {task_id}
            and not set(mine) <= set(reference) | {task_id}]


def _against_whole(task_id, result, whole, held):
    """Each test of the task that passed fails unless the whole submission
    (``_whole``) answered each of its calls that ``held`` picks as the task's
    own copy did (``judge.same``: to the call's tolerance)."""
    for x in result["results"]:
        calls = result["answered"].get(x["name"])
        if not x["passed"] or calls is None:
            continue
        for call, alone, reference, mine in calls:
            if not held(call, reference, mine):
                continue
            got = whole(call)
            why = got[0] if isinstance(got, tuple) else judge.same(got, alone, call["tol"])
            if why:
                x["passed"] = False
                x["message"] = ("hidden test failed: a result differs when your other tasks' "
                                "code runs too" if x["hidden"] else
                                f"it passes with the reference's code for the other tasks, "
                                f"not with yours (does this task call another task's "
                                f"code?): {why}")
                break


def _finish(task_id, result):
    """The task's messages and points, its verdicts complete."""
    result.pop("answered", None)
    for x in result["results"]:
        if not x["passed"]:
            result["messages"].append(f"[hidden] {x['name']}: {x['message']}" if x["hidden"]
                                      else f"{x['name']}: {x['message'] or 'failed'}")
    for done in result.pop("done", []):
        _imported(result, done, result["src"])
    _score(task_id, result)
    spans, src = result.pop("spans", None), result.pop("src", None)
    if not result["passed"] and spans and result["tests"]:
        result["messages"].append(_your_code(spans, src))


def _wrong(got, want):
    """What a hidden test's failing call did, without its inputs or the expected
    result: the exception the graded code raised, or that a result differs."""
    if isinstance(got, dict) and "error" in got and not (
            isinstance(want, dict) and "error" in want):
        # the stub's, or any: the exception's type, chosen by the graded code
        # among Python's dozens, could spell a few bits of the hidden inputs
        return "your code raised " + (
            "NotImplementedError" if got["error"] == "NotImplementedError" else "an exception")
    return "a result differs from the reference's"


def _task_names(names):
    return isinstance(names, list) and len(names) <= 64 and all(
        isinstance(n, str) and len(n) <= 20 for n in names)


def _answers(out, token, count, entered=None):
    """Step 2's result lines: ``(answers, done record or None, why they stop
    early or None)``; ``answers[k]`` is call k's data, in order, each once, and
    ``entered[k]`` the tasks it ran. The first line out of place ends the
    list: the calls after it did not answer."""
    answers, entered = [], [] if entered is None else entered
    for line in out.split("\n"):
        if not line.startswith(token + " "):
            continue  # the child's own stdout goes to stderr: not ours
        if len(line) > ANSWER_LIMIT:
            return answers, None, f"it sent an answer longer than {ANSWER_LIMIT} characters"
        try:
            value = json.loads(line[len(token) + 1:])
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and set(value) - {"entered"} == {"answer", "result"} and \
                value["answer"] == len(answers) < count and judge.bounded(value["result"]) \
                and _task_names(value.get("entered", [])):
            answers.append(value["result"])
            entered.append(value.get("entered"))
        elif isinstance(value, dict) and "done" in value and \
                record(line[len(token) + 1:]) is not None:
            return answers, value, None
        else:
            return answers, None, "it sent a malformed or out-of-order answer line"
    return answers, None, None


# --- the answer channel ---------------------------------------------------------------

ANSWER_LIMIT = 2 << 20  # characters of one answer line (judge.ITEMS)
_DONE = {"done": bool, "status": int, "mlxref": (str, type(None))}  # the child's last line


def record(text):
    """The child's last record (its text after the token) as a dict, or None
    when it is not exactly ``_DONE``'s keys and types."""
    if len(text) > 2000:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or set(value) != set(_DONE):
        return None
    for key, kind in _DONE.items():
        if not isinstance(value[key], kind) or isinstance(value[key], bool) and kind is int:
            return None
    return value


# The statuses of a run a limit stopped (``_ended`` names each)
_LIMITS = (sandbox.TIMED_OUT, sandbox.TOO_MANY_PROCESSES, sandbox.DISK_FULL,
           sandbox.TOO_MUCH_OUTPUT, -signal.SIGXCPU)


def _ended(status, err, options):
    """Why a run ended, in one line, for when it ended before its last record."""
    if status == sandbox.TIMED_OUT:
        return f"stopped at the wall-clock limit of {options['timeout']:g} s"
    if status == sandbox.TOO_MANY_PROCESSES:
        return f"stopped: it ran more than {sandbox.PROCESSES} processes at once"
    if status == sandbox.DISK_FULL:
        return f"stopped: it wrote more than {sandbox.DISK_LIMIT >> 20} MB of files"
    if status == sandbox.TOO_MUCH_OUTPUT:
        return f"stopped: it printed more than {sandbox.OUTPUT_LIMIT >> 20} MB"
    if status == -signal.SIGXCPU:
        return "stopped at the CPU-time limit"
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else -status
        return f"the test run was killed by {name}"
    # stderr may quote a hidden test's source: only the interpreter's own last words
    fatal = [x for x in err.splitlines() if x.startswith("Fatal Python error")]
    return f"the test run ended abnormally (status {status})" + (
        f": {fatal[-1][:200]}" if fatal else "")


# --- points ---------------------------------------------------------------------------


def weight(name):
    """A test's weight within its task: ``WEIGHTS`` by its name, or by its name
    without parameters (``[...]``), else 1."""
    if name in WEIGHTS:
        return WEIGHTS[name]
    return WEIGHTS.get(name.split("[")[0], 1)


def _score(task_id, result):
    """The task's points: its ``points`` split over its tests by weight, the
    passing tests' share, rounded to 2 decimals. ``passed`` when every test
    passed (full points)."""
    results = result["results"]
    total = sum(weight(x["name"]) for x in results)
    got = sum(weight(x["name"]) for x in results if x["passed"])
    result["tests"] = len(results)
    result["failures"] = sum(not x["passed"] for x in results)
    for x in results:
        x["points"] = round(result["max_points"] * weight(x["name"]) / total, 2) \
            if x["passed"] else 0
    result["points"] = round(result["max_points"] * got / total, 2) if total else 0
    if result["points"] == int(result["points"]):
        result["points"] = int(result["points"])
    result["passed"] = bool(results) and result["failures"] == 0


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
          jobs=None, check=True, exam=False):
    """Grade the tasks in ``spec`` of the submission ``directory`` against the
    reference checkout ``reference`` (default: the one mlxref is installed
    from), each task in its own scratch copy and child process, with a
    wall-clock limit of ``timeout`` seconds and ``memory`` bytes per task.

    Returns ``({task id: {"passed", "points", "max_points", "tests",
    "failures", "messages", "results"}}, collection errors)``; ``results``
    lists each test: name, hidden, passed, message.

    Each child runs under bubblewrap where the machine allows it
    (``sandbox.isolation()`` is None); elsewhere it runs with the Python-level
    layers only, and with ``exam=True`` grading refuses to run at all.
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
    if exam and sandbox.isolation() is not None:
        raise ValueError(f"[assignment grade] --exam needs OS isolation, and {sandbox.isolation()}.")
    with tempfile.TemporaryDirectory(prefix="mlxref-grade-") as scratch:
        options = {"timeout": float(timeout), "memory": memory, "check": check,
                   "isolated": sandbox.isolation() is None,
                   "tests": _marked_files(reference), "known": list(table),
                   "functions": [[r.path, r.function, r.task] for _, regions in table.values()
                                 for r in regions],
                   "site": _site(Path(scratch) / "site-packages")}
        jobs = jobs or min(len(chosen), os.cpu_count() or 1)

        def one(task_id):
            return _run_task(task_id, table[task_id][1], reference, directory, scratch,
                             options)

        # The tests are recorded on the reference while the tasks' copies are
        # made, and the replay loads meanwhile.
        with ThreadPoolExecutor(max_workers=4) as trusted:
            running = trusted.submit(_trusted, reference, chosen, scratch, options)
            options["recorded"] = {hidden: trusted.submit(
                _record, chosen, scratch, options, hidden, running) for hidden in (False, True)}
            whole = trusted.submit(_whole, table, chosen, reference, directory, scratch,
                                   options)
            try:
                with ThreadPoolExecutor(max_workers=jobs) as pool:
                    results = dict(zip(chosen, pool.map(one, chosen)))
            finally:
                _answered(results if "results" in locals() else {}, scratch)
            replayed = _replay(running, scratch, options)
            for result in results.values():
                _replayed(result, replayed)
            if len(table) > 1:
                answer, config, work = whole.result()
                for task_id, result in results.items():
                    _against_whole(task_id, result, answer, lambda call, reference, mine, t=task_id:
                                   reference is not None and set(reference) <= {t})
                strays = [s for t, r in results.items() for s in _strays(t, r)]
                if strays:
                    answer = _answer_all(strays, config, work, options)
                    held = {judge.dumps(call) for *_, call in strays}
                    for task_id, result in results.items():
                        _against_whole(task_id, result, answer,
                                       lambda call, *_: judge.dumps(call) in held)
            for task_id, result in results.items():
                _finish(task_id, result)
        errors = [e for hidden in (False, True) for e in options["recorded"][hidden].result()[1]]
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
    """(points earned, points possible) over the graded tasks."""
    got = round(sum(r["points"] for r in results.values()), 2)
    return int(got) if got == int(got) else got, sum(r["max_points"] for r in results.values())


def _verdict(r):
    if r["passed"]:
        return "pass"
    return "no tests" if r["tests"] == 0 else "partial" if r["points"] else "FAIL"


def format_grades(directory, results, collect_errors):
    """The score table that ``mlxref assignment grade`` prints, then each failing
    task's messages."""
    titles = {t: r.get("title") or "" for t, r in results.items()}
    width = max([len(x) for x in titles.values()] + [5])
    lines = [f"{'task':<4}  {'title':<{width}}  tests  failed    points  result"]
    for task_id, r in results.items():
        result = _verdict(r)
        if r.get("needs"):
            result += f" (needs {', '.join(r['needs'])})"
        lines.append(
            f"{task_id:<4}  {titles[task_id]:<{width}}  {r['tests']:>5}  {r['failures']:>6}  "
            f"{r['points']:>4g} / {r['max_points']:<2}  {result}"
        )
    passed = sum(r["passed"] for r in results.values())
    got, best = score(results)
    lines.append(f"{passed} of {len(results)} tasks pass: {got:g} of {best} points")
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
        lines.append("")
        lines.append(f"to see why: {rerun_command(directory, failing[0])}")
    return "\n".join(lines)


def rerun_command(directory, task_id, python=None):
    """The shell command that runs ``task_id``'s visible tests in ``directory``,
    exactly as printed, from any directory and without an activated venv.

    The interpreter is the one grading runs on (``python``, default
    ``sys.executable``: the venv's, which has pytest; shown relative to
    ``directory`` when it is inside it, as ``.venv/bin/python``). Only the test
    files that use the task's marker are named, so pytest collects one file,
    not the whole suite (seconds instead of 15 s); the hidden tests are not
    named, as the directory has none.
    """
    directory = Path(os.path.abspath(directory))
    python = Path(os.path.abspath(python or sys.executable))
    files = [f for f in _marked_files(directory).get(marker(task_id), [])
             if not f.startswith(HIDDEN + "/")] or ["tests"]
    shown = (python.relative_to(directory).as_posix() if python.is_relative_to(directory)
             else str(python))
    here = directory == Path(os.path.abspath(os.getcwd()))
    cd = "" if here else f"cd {shlex.quote(str(directory))} && "
    return (f"{cd}{shlex.quote(shown)} -m pytest {' '.join(shlex.quote(f) for f in files)} "
            f"-m {marker(task_id)}")


def grades_json(results):
    """``--json``: the score, and per task: passed (full points), points, tests,
    failures, messages, and each test's name, hidden, passed and points."""
    got, best = score(results)
    return json.dumps({
        "score": got, "max_score": best,
        "tasks": {t: {**{k: r[k] for k in ("passed", "points", "max_points", "tests",
                                          "failures", "messages")},
                      "results": [{k: x[k] for k in ("name", "hidden", "passed", "points")}
                                  for x in r["results"]]}
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
                "output": x["message"] or "",  # a hidden test's: its name and a reason
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
