"""One task can never cost the run, and points mean something (issue 29).

Each attack runs in task 2.3's ``Divide.partial`` (with the static check off,
as if it had escaped it), beside an honest task 1.1 graded in the same run;
where two attacks cannot reach each other, the second runs in task 2.2's
``Cos.derivative`` of the same submission (each task is answered by children
of its own). Each test checks that the attacked tests fail with a one-line
reason, that 1.1 keeps its full points, and that ``grade`` returns within
its limits. The limits (``sandbox.PROCESSES``, ``OUTPUT_LIMIT``,
``DISK_LIMIT``...) are patched small: the attacks prove the cap without
writing gigabytes. Each line of the table of lines out of place on the
answer channel is read by ``grader._answers`` in the answering child's
output; two of them are also sent by a graded child, end to end. The two
expressions nested too deeply sit in two tasks of one submission.

Then partial credit (``grader.WEIGHTS``), hidden tests that show only their
name and a generic reason, and the JSON, Gradescope and exit status in
agreement.
"""

import copy
import json
import resource
import secrets
import textwrap
import time
import types
from concurrent.futures import ThreadPoolExecutor

import pytest
from course.test_grader import reference, region_code, submit  # noqa: F401  (the fixture)

from mlxref.course import grader, sandbox
from mlxref.cli import main

DIVIDE = "tests/test_fake_tasks.py::test_divide_partials"
MULTIPLY = "tests/test_fake_tasks.py::test_multiply_partials"
HIDDEN = "tests/course/hidden/test_hidden_2_3.py::test_divide_partial_b_random"
SIN = "tests/test_fake_tasks.py::test_sin_derivative"
COS = "tests/test_fake_tasks.py::test_cos_derivative_shape"

# Writes one line on the result channel: the child's private stdout and token
# (globals of its __main__), what code that escaped the static check can reach.
CHANNEL = "import __main__ as m, os\ndef send(data):\n    os.write(m._out.fileno(), data)\n"


# What a visible test's failure says when the child ended before answering its call
UNANSWERED = "your code's run ended before it answered this test's call: "


# Where an attack runs: the region, the inputs of the visible test it attacks (its
# visible child answered the task's earlier test's calls first), that test, and the
# task's tests that keep their points (the hidden one: answered by a child of its own)
SITES = {
    "2.3": ("Divide.partial", "b.tolist() == [4.0, 8.0]", DIVIDE, [MULTIPLY, HIDDEN]),
    "2.2": ("Cos.derivative", "x.tolist() == [0.0, 1.0]", COS, [SIN]),
}


def attack(tmp_path, reference, code, timeout=60, beside=None):  # noqa: F811
    """Grade 1.1 (honest) and 2.3 with ``code`` run first in Divide.partial
    when it gets the visible test_divide_partials's inputs; with ``beside``,
    2.2 too, with that code run first in Cos.derivative when it gets
    test_cos_derivative_shape's inputs (two attacks that cannot reach each
    other: each task is answered by children of its own). Returns {attacked
    task: its results by test name}. In each, the attacked test fails with a
    one-line reason and the others pass; 1.1 keeps its points."""
    codes = {"2.3": code} if beside is None else {"2.3": code, "2.2": beside}
    bodies = {}
    for task_id, body in codes.items():
        function, inputs, _, _ = SITES[task_id]
        bodies[(task_id, function)] = f"if {inputs}:\n" + textwrap.indent(body, "    ") + \
            "\n" + region_code(reference, task_id, function)
    sub = submit(tmp_path / "sub", reference, bodies)
    start = time.monotonic()
    results, _ = grader.grade(sub, ",".join(["1.1", *sorted(codes)]), reference=reference,
                              timeout=timeout, check=False)
    assert time.monotonic() - start < timeout + 60
    one = results["1.1"]
    assert one["passed"] and one["points"] == one["max_points"], one["messages"]
    attacked = {}
    for task_id in codes:
        _, _, test, kept = SITES[task_id]
        r = results[task_id]
        tests = attacked[task_id] = {x["name"]: x for x in r["results"]}
        assert not tests[test]["passed"] and all(tests[n]["passed"] for n in kept), tests
        assert r["points"] == round(r["max_points"] * len(kept) / len(tests), 2)
    return attacked


# Lines a child sends on its result channel in place of call k's answer (``m`` is its
# __main__: ``TOKEN``, and ``_k`` the call it is answering)
BAD_LINES = [
    "m.TOKEN.encode() + b' {not json\\n'",
    "m.TOKEN.encode() + b' \\xff\\xfe\\x00\\x80 garbage\\n'",
    "m.TOKEN.encode() + b' {\"answer\": 0, \"res'",
    "m.TOKEN.encode() + b' [' * 100000 + b'\\n'",
    "m.TOKEN.encode() + b' ' + json.dumps({'answer': 99, 'result': 1.0}).encode() + b'\\n'",
    "m.TOKEN.encode() + b' ' + json.dumps({'answer': 0, 'result': 1.0, 'extra': 1}).encode()"
    " + b'\\n'",
    # (these two first sent to the hidden tests' child)
    "m.TOKEN.encode() + b' ' + json.dumps({'answer': 5, 'result': 1.0}).encode() + b'\\n'",
    "m.TOKEN.encode() + b' ' + b'[' * 100000 + b'\\n'",
    # the current call's answer, well-formed but nested 975 deep: on the commit
    # before this row, the trusted replay died reading it, and every task's
    # visible tests failed (a third red team's A23)
    "m.TOKEN.encode() + b' {\"answer\": ' + str(m._k).encode() + b', \"result\": ' + "
    "b'[' * 975 + b']' * 975 + b'}\\n'",
]
MALFORMED = "it sent a malformed or out-of-order answer line"


def answered_around(line, k, count):
    """What ``grader._answers`` reads of a child that answered calls 0 .. k - 1,
    sent ``line`` (a row's expression) while answering call k, then went on
    answering (its stdout as ``sandbox.run`` decodes it): ``(answers, done, why)``.
    Read in a thread of its own, as the grader's threads read it: how deep a
    JSON value may nest depends on how deep the reader's stack already is."""
    token = secrets.token_hex(16)

    def answer(n):
        return f"{token} {json.dumps({'answer': n, 'result': [n, 0.5], 'entered': []})}\n"

    sent = eval(line, {"m": types.SimpleNamespace(TOKEN=token, _k=k), "json": json})
    out = "".join(answer(n) for n in range(k)) + sent.decode("utf-8", "replace") + "".join(
        answer(n) for n in range(k, count))
    with ThreadPoolExecutor(max_workers=1) as reader:
        return reader.submit(grader._answers, out, token, count).result()


@pytest.mark.parametrize("line", BAD_LINES)
def test_a_bad_answer_line_ends_the_answers_where_it_stands(line):
    """Each line out of place, read where a child sends it (the visible
    child of 2.3 answering its third call, or the hidden one its first): the
    answers before it are kept, none after it, and the reason is the one its
    test's failure gives."""
    for k, count in ((2, 4), (0, 15)):
        answers, done, why = answered_around(line, k, count)
        assert answers == [[n, 0.5] for n in range(k)] and done is None, (answers, done)
        assert why == MALFORMED


def test_a_bad_answer_line_fails_its_test_alone(tmp_path, reference):  # noqa: F811
    """On main (issue 29's start): a non-JSON or garbage line raised
    JSONDecodeError out of grade, and every task's grade was lost. Now the
    first line out of place ends the child's answers: the tests whose calls
    it had answered keep them, the attacked one fails saying why. Graded end
    to end for the first line of the table (in 2.3) and the red team's (in
    2.2); each line is read on its own above."""
    attacked = attack(tmp_path, reference, CHANNEL + "import json\nsend(" + BAD_LINES[0] + ")",
                      beside=CHANNEL + "import json\nsend(" + BAD_LINES[-1] + ")")
    for task_id, tests in attacked.items():
        test = SITES[task_id][2]
        assert tests[test]["message"] == UNANSWERED + MALFORMED, (task_id, tests[test])


def test_a_silent_death_fails_the_running_and_the_unrun_tests(tmp_path, reference):  # noqa: F811
    """On main: the task failed (no grade lost) and earned nothing; now the
    tests that passed before keep their points. An exit in 2.3, a SIGKILL in 2.2."""
    attacked = attack(tmp_path, reference, "import os\nos._exit(0)",
                      beside="import signal\nsignal.raise_signal(signal.SIGKILL)")
    assert attacked["2.3"][DIVIDE]["message"] == \
        UNANSWERED + "the test run ended abnormally (status 0)"
    assert attacked["2.2"][COS]["message"] == UNANSWERED + "the test run was killed by SIGKILL"


def test_a_200000_deep_expression_fails_its_task_alone(tmp_path, reference):  # noqa: F811
    """On main: MemoryError or RecursionError out of ast.parse in the grader:
    grade raised and every task's grade was lost. One expression of each kind,
    in tasks of two files (each file within the cap on its size), graded
    beside 1.1."""
    deep = {("2.3", "Divide.partial"): "return " + "-" * 200_000 + "b",  # MemoryError
            ("1.2", "_logsumexp"): "return x" + ".real" * 200_000}  # RecursionError
    sub = submit(tmp_path / "sub", reference, deep)
    results, _ = grader.grade(sub, "1.1,1.2,2.3", reference=reference, timeout=60)
    assert results["1.1"]["passed"]
    for task_id in ("1.2", "2.3"):
        (message,) = results[task_id]["messages"]
        assert "nested too deeply to parse" in message and "\n" not in message
        assert results[task_id]["points"] == 0


def test_a_fork_bomb_is_stopped_at_the_process_limit(tmp_path, reference,  # noqa: F811
                                                    monkeypatch):
    """Root ignores RLIMIT_NPROC: the supervisor counts the run's processes.
    On main: 300 processes ran until the wall-clock limit killed them."""
    monkeypatch.setattr(sandbox, "PROCESSES", 20)
    bomb = ("import _posixsubprocess, os\nr, w = os.pipe()\n_posixsubprocess.fork_exec("
            "[b'/bin/sh', b'-c', b'for i in $(seq 300); do sleep 30 & done; wait'], "
            "[b'/bin/sh'], True, (), None, None, -1, -1, -1, -1, -1, -1, r, w, False, "
            "False, -1, None, None, None, -1, None, False)\n"
            "import time\ntime.sleep(60)")
    start = time.monotonic()
    tests = attack(tmp_path, reference, bomb, timeout=50)["2.3"]
    assert time.monotonic() - start < 40
    assert tests[DIVIDE]["message"] == UNANSWERED + "stopped: it ran more than 20 processes at once"


def test_output_past_the_cap_never_reaches_the_grader_and_open_files_are_capped(
        tmp_path, reference, monkeypatch):  # noqa: F811
    """200 MB written on the result channel (in 2.3), with a cap of 2 MB: the
    run is stopped and the grader's memory does not grow by the output. On
    main the grader held all of it (one run pushed it to 800 MB). And 5000
    files opened (in 2.2): on main the run opened them all."""
    monkeypatch.setattr(sandbox, "OUTPUT_LIMIT", 2 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    attacked = attack(tmp_path, reference,
                      CHANNEL + "for _ in range(200):\n    send(b'x' * (1 << 20))", beside=(
                          "import os\nfiles = []\ntry:\n    for k in range(5000):\n"
                          "        files.append(open(os.devnull))\nexcept OSError:\n    pass\n"
                          "n = len(files)\nfor f in files:\n    f.close()\n"
                          "raise RuntimeError(f'opened {n} files')"))
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB
    assert grown < 64 << 10, grown
    tests = attacked["2.3"]
    assert tests[DIVIDE]["message"] == UNANSWERED + "stopped: it printed more than 2 MB"
    assert tests[MULTIPLY]["passed"]
    message = attacked["2.2"][COS]["message"]
    opened = int(message.split("opened ")[1].split(" files")[0])
    assert opened < sandbox.OPEN_FILES, message


def test_files_past_the_disk_cap_stop_the_run(tmp_path, reference, monkeypatch):  # noqa: F811
    """20 files of 1 MB with a cap of 4 MB in all (in 2.3), and one file of 3
    MB with a cap of 2 MB a file (in 2.2). On main nothing bounded the total
    (a run wrote 1.5 GB)."""
    monkeypatch.setattr(sandbox, "DISK_LIMIT", 4 << 20)
    monkeypatch.setattr(sandbox, "FILE_SIZE", 2 << 20)
    attacked = attack(tmp_path, reference, (
        "import os, time\nfor k in range(20):\n"
        "    with open(os.path.join(os.environ['TMPDIR'], f'f{k}'), 'wb') as f:\n"
        "        f.write(b'x' * (1 << 20))\ntime.sleep(2)"), beside=(
        "import os\nwith open(os.path.join(os.environ['TMPDIR'], 'big'), 'wb') as f:\n"
        "    f.write(b'x' * (3 << 20))"))
    tests = attacked["2.3"]
    assert tests[DIVIDE]["message"] == UNANSWERED + "stopped: it wrote more than 4 MB of files"
    assert tests[MULTIPLY]["passed"]
    assert "OSError: [Errno 27] File too large" in attacked["2.2"][COS]["message"]


# --- points ---------------------------------------------------------------------------------


def test_three_of_seven_earn_three_sevenths_or_the_rubrics_weights(monkeypatch):
    """On main a task earned its points only when every test passed."""
    result = {"max_points": 2, "results": [
        {"name": f"tests/t.py::test_{k}", "passed": k < 3} for k in range(7)]}
    grader._score("9.9", result)
    assert (result["points"], result["passed"], result["failures"]) == (0.86, False, 4)
    assert [x["points"] for x in result["results"]] == [0.29] * 3 + [0] * 4
    monkeypatch.setattr(grader, "WEIGHTS", {"tests/t.py::test_0": 4, "tests/t.py::test_6": 3})
    grader._score("9.9", result)  # 4 + 1 + 1 of 4 + 1 * 5 + 3 = 6 of 12
    assert result["points"] == 1 and result["results"][0]["points"] == round(2 * 4 / 12, 2)


def test_partial_credit_hidden_reasons_and_the_formats_agree(tmp_path, reference,  # noqa: F811
                                                              capsys, monkeypatch):
    """Multiply right, Divide wrong: 1 of 3 tests of 2.3 (then 2 of 4 with a
    weight); the hidden test's failure shows its name and a generic reason
    only (on main it showed its inputs and expected values); JSON, the table,
    Gradescope and the exit status agree: each printed from one grade of the
    submission (graded again for the weight, and for the right submission)."""
    sub = submit(tmp_path / "sub", reference, {("2.3", "Divide.partial"): "return a * 0"})
    graded, grade = {}, grader.grade

    def once(*args, **kwargs):  # the JSON, Gradescope's file and the table of one grade
        key = json.dumps([args, kwargs, grader.WEIGHTS], default=str, sort_keys=True)
        if key not in graded:
            graded[key] = grade(*args, **kwargs)
        return copy.deepcopy(graded[key])

    monkeypatch.setattr(grader, "grade", once)
    scope = tmp_path / "results.json"
    argv = ["assignment", "grade", str(sub), "--reference", str(reference), "--tasks",
            "1.1,2.3", "--timeout", "120"]
    assert main(argv + ["--json", "--gradescope", str(scope)]) == 1
    data = json.loads(capsys.readouterr().out)
    two = data["tasks"]["2.3"]
    assert two["points"] == round(grader.points("2.3") / 3, 2) and not two["passed"]
    assert [(x["name"], x["passed"]) for x in two["results"]] == [
        (MULTIPLY, True), (DIVIDE, False), (HIDDEN, False)]
    assert f"[hidden] {HIDDEN}: hidden test failed: a result differs from the reference's" \
        in two["messages"]
    written = json.loads(scope.read_text())
    assert written["score"] == data["score"] == grader.points("1.1") + two["points"]
    assert sum(t["score"] for t in written["tests"] if "score" in t) == written["score"]
    everything = json.dumps(data) + scope.read_text()
    for secret in ("sympy", "d(a/b)/db", "the values in the test"):
        assert secret not in everything, secret
    assert main(argv) == 1
    table = capsys.readouterr().out
    assert f"1 of 2 tasks pass: {data['score']:g} of {data['max_score']} points" in table
    assert "partial" in table and "sympy" not in table
    monkeypatch.setattr(grader, "WEIGHTS", {MULTIPLY: 2})
    assert main(argv + ["--json"]) == 1
    assert json.loads(capsys.readouterr().out)["tasks"]["2.3"]["points"] == round(
        grader.points("2.3") * 2 / 4, 2)
    right = submit(tmp_path / "right", reference, {
        ("2.3", "Divide.partial"): region_code(reference, "2.3", "Divide.partial")})
    assert main(argv[:2] + [str(right)] + argv[3:] + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["score"] == data["max_score"]


@pytest.mark.parametrize("line, why", [
    ("m.TOKEN.encode() + b' ' + json.dumps({'answer': 5, 'result': 1.0}).encode() + b'\\n'",
     MALFORMED),
])
def test_garbage_on_the_answer_channel_fails_the_hidden_test_alone(tmp_path, reference, line,
                                                                   why):  # noqa: F811
    """The child that answers the hidden tests' calls (mlxref/course/judge.py)
    writes on the same kind of channel: a line out of place ends its answers,
    the hidden test fails with the reason, the visible tests and the other
    task keep their points, and the grader does not raise. (Each line of
    ``BAD_LINES`` is read as the hidden child's first answer above.)"""
    code = ("if b.size == 1:  # the hidden test's inputs\n" +
            textwrap.indent(CHANNEL + "import json\nsend(" + line + ")", "    ") + "\n" +
            region_code(reference, "2.3", "Divide.partial"))
    sub = submit(tmp_path / "sub", reference, {("2.3", "Divide.partial"): code})
    results, _ = grader.grade(sub, "1.1,2.3", reference=reference, timeout=120, check=False)
    assert results["1.1"]["passed"]
    tests = {x["name"]: x for x in results["2.3"]["results"]}
    assert tests[DIVIDE]["passed"] and tests[MULTIPLY]["passed"]
    assert tests[HIDDEN]["message"] == f"hidden test failed: {why}"
