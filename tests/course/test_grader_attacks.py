"""Each way issue 15 forged a score or escaped the grader, tried again, and defeated.

A submission is graded against a throwaway instructor checkout (see
test_grader.py), never against this one. Every test checks the three
things an instructor needs: the task fails or is refused, the grade ends
within its limits, and nothing outside the task's scratch copy changes (the
instructor's files, the submission, and a file beside them).

Most attacks are first refused by the static check, before anything runs;
the tests also run them with the check turned off (``check=False``) to show
that the child process defeats them on its own: an unknown token on the
result lines, no ``mlx`` and no package metadata, an audit hook that refuses
writes, deletions and new processes outside the copy, and a wall-clock limit
that kills the whole process tree.

Attacks that cannot reach each other's task (the skips; the audit hook,
planted bytecode and libm; the hidden tests' source looked for and what the
tests compare with patched; hidden inputs spelled by a class's name and by a
choice of Python's types) sit in different tasks of one submission, graded
once: each task is graded in a copy and children of its own, and each test
asserts its own task's reasons.
"""

import hashlib
import json
import os
import sys
import time

import pytest
from course.test_grader import (  # noqa: F401  (the fixture)
    reference, region, region_code, submit, table,
)
from support import computed_once

from mlxref.course import grader, regions, sandbox

SLEEPER = "3599.25"  # the argument that names a detached process of these tests


def snapshot(*roots):
    """A digest of every file under ``roots``: what must not change."""
    digest = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest


def sleepers():
    """The pids of processes started with SLEEPER among their arguments."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if SLEEPER.encode() in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def refused(tmp_path, reference, task_id, function, code):  # noqa: F811
    sub = submit(tmp_path / "refused", reference, {(task_id, function): code})
    with pytest.raises(grader.Problem) as info:
        grader.splice(task_id, table(reference)[task_id][1], reference, sub)
    return str(info.value)


STUB = "raise NotImplementedError('Task 1.1: the stub, unchanged')"


def test_files_beside_the_regions_are_never_used(tmp_path, reference):  # noqa: F811
    """sitecustomize.py, _mlxref_grader.py and conftest.py at the top of the
    submission, a conftest that passes every test, and the student's own
    tests edited to pass: none of them is read, the stub still fails."""
    sub = submit(tmp_path / "sub", reference, {("1.1", "Sigmoid.numeric"): STUB})
    flag = tmp_path / "pwned"
    forge = (f"import pathlib\npathlib.Path({str(flag)!r}).write_text('ran')\n"
             "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
             "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
             "    outcome.get_result().outcome = 'passed'\n")
    for name in ("sitecustomize.py", "_mlxref_grader.py", "conftest.py", "usercustomize.py",
                 "tests/conftest.py", "tests/course/hidden/conftest.py"):
        (sub / name).parent.mkdir(parents=True, exist_ok=True)
        (sub / name).write_text(forge)
    (sub / "tests" / "test_fake_tasks.py").write_text(
        "import pytest\n\n@pytest.mark.task1_1\ndef test_sigmoid_values():\n    pass\n")
    (sub / "pytest.ini").write_text("[pytest]\naddopts = -p _mlxref_grader\n")
    (sub / "mlxref" / "__init__.py").write_text(forge)
    before = snapshot(reference, sub)
    results, _ = grader.grade(sub, "1.1", reference=reference, timeout=120)
    r = results["1.1"]
    # The stub's tests fail (only the sandbox's test, which calls no sigmoid, passes).
    assert not r["passed"] and r["points"] < r["max_points"]
    assert [x["name"] for x in r["results"] if x["passed"]] == [
        "tests/test_sandbox.py::test_the_sandbox_around_the_tests"]
    # The stub is named once, under "your code", not under every test.
    assert any("still raises the stub's NotImplementedError" in m for m in r["messages"])
    assert any("your code:" in m and "Task 1.1: the stub, unchanged" in m for m in r["messages"])
    assert not flag.exists()
    assert snapshot(reference, sub) == before


@pytest.mark.parametrize("task_id, function, code, words", [
    ("1.1", "Sigmoid.numeric",
     "import atexit\natexit.register(print, 'forged')\nreturn 0.5", "'import atexit'"),
    ("2.2", "Sin.derivative",
     "from importlib import metadata\nreturn metadata.files('mlxref')", "'from importlib import"),
    ("2.3", "Multiply.partial", "import mlx.core as real\nreturn real.ones(1)",
     "'import mlx.core'"),
    ("1.1", "Sigmoid.numeric", "import signal\nsignal.signal(14, 1)\nwhile True:\n    pass",
     "'import signal'"),
    ("2.3", "Divide.partial", "import subprocess\nsubprocess.Popen(['sleep', '9'])\nreturn b",
     "'import subprocess'"),
    ("2.3", "Divide.partial",
     ("from mlxref.course import assignment\nassignment.Path(assignment.__file__).unlink()\nreturn b"),
     "'.Path'"),
    ("2.3", "Divide.partial", "with open('/tmp/x', 'a') as f:\n    f.write('x')\nreturn b",
     "the name 'open'"),
    ("2.3", "Divide.partial", "return [c for c in ().__class__.__base__.__subclasses__()]",
     "'.__class__'"),
    # A match pattern's keywords read attributes, and are plain strings in the tree: a
    # red-team reached __import__ through a traceback's frame's f_builtins this way.
    ("2.3", "Divide.partial",
     "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    err = e\n"
     "match err:\n    case object(__traceback__=tb):\n        pass\nreturn b",
     "the attribute '.__traceback__'"),
    ("2.3", "Divide.partial",
     "match b:\n    case object(tb_frame=f):\n        pass\nreturn b",
     "the attribute '.tb_frame'"),
    ("2.3", "Divide.partial", "class C:\n    def __eq__(self, other):\n        return True\n"
     "return C()", "the name '__eq__'"),
    # An attribute named by a string: the tree holds no dunder attribute to refuse.
    ("2.3", "Divide.partial", "from mlxref.core.ops.common import operator\n"
     "g = operator.attrgetter('__glo' + 'bals__')\nreturn b", "'operator'"),
    ("2.3", "Divide.partial", "return '{0.__class__}'.format(b)", "'.format'"),
    # SymPy's parser evaluates text as Python: a red team ran arbitrary code through it.
    ("2.3", "Divide.partial", "import mlxref.symbolic as s\n"
     "s.sympy.parsing.sympy_parser.parse_expr('1')\nreturn b", "'.sympy'"),
    # The grader's own judge, imported in the child to rewrite the answers it
    # sends (a third red team sent answers nested 975 deep, and named functions
    # for the trusted replay to import), by any of its names.
    ("2.3", "Divide.partial", "from mlxref.course import judge as J\nJ.to_data = repr\n"
     "return b", "'from mlxref.course import ...'"),
    ("2.3", "Divide.partial", "from ...course import judge\nreturn b",
     "'from ...course import ...'"),
    ("2.3", "Divide.partial", "from mlxref import course\nreturn b",
     "'from mlxref import course' is not allowed"),
    ("2.3", "Divide.partial", "import mlxref\nx = mlxref.course\nreturn b",
     "the attribute '.course'"),
    ("2.3", "Divide.partial", "import mlxref.cli.main\nreturn b", "'import mlxref.cli.main'"),
    # a module the region imports itself is a module: its functions stay
    ("2.3", "Divide.partial", "from mlxref.core import ops as o\no.divide = o.multiply\n"
     "return b", "assigning to 'o...divide' changes a module"),
    # A fourth red team reached sys through a module's private import (argparse's
    # ``_sys``, imported by mlxref.launch), then the child's ctypes, and called
    # libc's system by its address: private attributes, and the launcher.
    ("2.3", "Divide.partial", "from mlxref.core.ops import common\n"
     "box = common.argparse._sys.modules\nreturn b", "the attribute '._sys' is private"),
    ("2.3", "Divide.partial", "from mlxref.core.backend.cpu import libm\n"
     "f = libm._C_FUNCTIONS\nreturn b", "the attribute '._C_FUNCTIONS' is private"),
    ("2.3", "Divide.partial", "from mlxref.core.backend.cpu.libm import _c_functions\nreturn b",
     "import _c_functions' is not allowed"),
    ("2.3", "Divide.partial", "from mlxref.launch import argparse\nreturn b",
     "'from mlxref.launch import ...'"),
    ("2.3", "Divide.partial", "import mlxref.as_mlx\nreturn b", "'import mlxref.as_mlx'"),
    # The fifth: the same private attribute read by a match pattern's keyword.
    ("2.3", "Divide.partial", "from mlxref.core import device as dv\n"
     "match dv.platform.collections:\n    case object(_sys=s):\n        pass\nreturn b",
     "the attribute '._sys' is private"),
    # Standard-library functions that import or evaluate what a string names, each
    # reachable through public attributes of mlxref's modules.
    ("2.3", "Divide.partial", "import mlxref.symbolic as s\n"
     "f = s.pkgutil.resolve_name('ctypes:CFUNCTYPE')\nreturn b", "the attribute '.pkgutil'"),
    ("2.3", "Divide.partial", "from mlxref.viz.dot import quoting\n"
     "def f(x: 'exec(1)'):\n    pass\nquoting.typing.get_type_hints(f)\nreturn b",
     "a type annotation is not allowed"),
    ("2.3", "Divide.partial", "from mlxref.core.backend.cpu import binary\n"
     "g = binary.functools.singledispatch(abs)\nreturn b", "the attribute '.singledispatch'"),
    ("2.3", "Divide.partial", "from mlxref.viz import budget\n"
     "C = budget.dataclasses.make_dataclass('C', [('x', 'exec(1)')])\nreturn b",
     "the attribute '.dataclasses'"),
    # The third: a metaclass made with type() and a pattern whose positional part
    # reads the attribute __match_args__ names, built at run time.
    ("2.3", "Divide.partial", "u = '_' * 2\n"
     "M = type('M', (type,), {u + 'instancecheck' + u: lambda c, i: True})\n"
     "C = M('C', (), {u + 'match_args' + u: (u + 'globals' + u,)})\n"
     "match b:\n    case C(g):\n        pass\nreturn b", "a match statement is not allowed"),
    ("2.3", "Divide.partial", "u = '_' * 2\nM = type('M', (), {})\nreturn b", "the name 'type'"),
    # The fourth: mpmath's alias of exec, through mlxref.symbolic.
    ("2.3", "Divide.partial", "from mlxref.symbolic import mpmath as mp\n"
     "mp.libmp.backend.exec_('1')\nreturn b", "'from mlxref.symbolic import mpmath'"),
])
def test_the_static_check_refuses_each_attack(
        tmp_path, reference, task_id, function, code, words):  # noqa: F811
    message = refused(tmp_path, reference, task_id, function, code)
    r = region(reference, task_id, function)
    assert words in message and f"{r.path}, line " in message, message


# A skip, or an exception named like one, raised by each of three tasks of one
# submission: (task, the region, the tests it fails)
SKIPS = {
    "import pytest\npytest.skip('no answer')": (
        "2.3", "Divide.partial", ["tests/test_fake_tasks.py::test_divide_partials",
                                  "tests/course/hidden/test_hidden_2_3.py::"
                                  "test_divide_partial_b_random"]),
    "class Skipped(Exception):\n    pass\nraise Skipped('no answer')": (
        "1.1", "Sigmoid.numeric", ["tests/test_fake_tasks.py::test_sigmoid_values",
                                   "tests/course/hidden/test_fake_tasks.py::test_sigmoid_far_out"]),
    "class Skipped(BaseException):\n    pass\nraise Skipped('no answer')": (
        "2.2", "Sin.derivative", ["tests/test_fake_tasks.py::test_sin_derivative"]),
}


@pytest.fixture(scope="module")
def skips_graded(tmp_path_factory, reference):  # noqa: F811
    """The grade of a submission holding each of ``SKIPS`` in its task, the
    static check off, graded once per test run."""
    def grade():
        sub = submit(tmp_path_factory.mktemp("skips") / "sub", reference,
                     {(task_id, function): how for how, (task_id, function, _) in SKIPS.items()})
        return grader.grade(sub, "1.1,2.2,2.3", reference=reference, timeout=120,
                            check=False)[0]

    return computed_once(tmp_path_factory, "attacks_skips", grade)


@pytest.mark.parametrize("how", list(SKIPS))
def test_a_skip_raised_by_graded_code_is_no_pass(skips_graded, how):
    """With the static check off (as if escaped), the region raises pytest's skip
    or an exception named like it: on main a skip counted as a pass. Now no test
    runs next to graded code (pytest is not even importable there), and an
    exception comes back as data, raised again in the replay as one of its own."""
    task_id, _, attacked = SKIPS[how]
    r = skips_graded[task_id]
    tests = {x["name"]: x for x in r["results"]}
    assert not r["passed"] and r["points"] < r["max_points"]
    attacked = [tests[n] for n in attacked]
    assert not any(t["passed"] for t in attacked), attacked
    assert "skipped" not in "\n".join(r["messages"])


def test_with_the_check_off_the_child_still_defeats_them(tmp_path, reference):  # noqa: F811
    """The same attacks run (check=False): forged result lines at exit, the
    reference read through importlib.metadata, real MLX as an answer key, a
    file deleted outside the copy, the instructor's assignment.py appended
    to, and a detached child process."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    flag = tmp_path / "pwned"
    instructor = reference / "mlxref" / "course" / "assignment.py"
    sub = submit(tmp_path / "sub", reference, {
        ("1.1", "Sigmoid.numeric"): (
            "import atexit, json, sys\n"
            "def forge():\n"
            "    for k in range(3):\n"
            "        sys.__stdout__.write('x' * 32 + ' ' + json.dumps({'test': str(k), "
            "'tasks': ['task1_1'], 'hidden': False, 'failed': False, 'message': None}) + '\\n')\n"
            f"    open({str(flag)!r}, 'w').write('forged')\n"
            "atexit.register(forge)\nforge()\n" + STUB),
        ("2.2", "Sin.derivative"): (
            "from importlib import metadata\n"
            "dist = metadata.distribution('mlxref')\n"
            "return dist.locate_file('mlxref/core/primitives/elementwise.py').read_text()"),
        ("2.2", "Cos.derivative"): (  # the other tasks' copies, the grader's memory
            "import os\nwork = os.path.dirname(os.getcwd())\nread = []\n"
            "for name in os.listdir(os.path.dirname(work)):\n"
            "    path = os.path.join(os.path.dirname(work), name, 'src', 'mlxref', '__init__.py')\n"
            "    if name != os.path.basename(work) and os.path.exists(path):\n"
            "        try:\n            read.append(open(path).read())\n"
            "        except PermissionError:\n            pass\n"
            "for pid in (os.getppid(), 1):\n"
            "    try:\n        read.append(open(f'/proc/{pid}/cmdline').read())\n"
            "    except PermissionError:\n        pass\n"
            "raise RuntimeError(f'read {len(read)} files')"),
        ("2.3", "Multiply.partial"): "import mlx.core as real\nreturn real.ones(2)",
        ("2.3", "Divide.partial"): (
            "import os, subprocess\nerrors = []\n"
            f"for attack in (lambda: os.remove({str(victim)!r}),\n"
            f"               lambda: open({str(instructor)!r}, 'a').write('# pwned'),\n"
            f"               lambda: subprocess.Popen(['sleep', '{SLEEPER}'], "
            "start_new_session=True),\n"
            f"               lambda: os.system('sleep {SLEEPER} &')):\n"
            "    try:\n        attack()\n    except Exception as exc:\n"
            "        errors.append(type(exc).__name__ + ': ' + str(exc))\n"
            "raise RuntimeError(' | '.join(errors))"),
    })
    before = snapshot(reference, sub)
    start = time.monotonic()
    results, _ = grader.grade(sub, "1.1,2.2,2.3", reference=reference, timeout=120,
                              check=False)
    assert time.monotonic() - start < 180
    assert [t for t, r in results.items() if r["passed"]] == []
    one = results["1.1"]
    assert one["tests"] == 3 and not any(x["name"] in "012" for x in one["results"])
    two = "\n".join(results["2.2"]["messages"])
    assert "PackageNotFoundError" in two, two
    assert "RuntimeError: read 0 files" in two, two
    three = "\n".join(results["2.3"]["messages"])
    assert "No module named 'mlx' (the grader does not let graded code import it)" in three
    for refusal in (f"change {victim} (os.remove)", f"write {instructor}",
                    "use subprocess.Popen", "use os.system"):
        assert f"PermissionError: the grader does not let graded code {refusal}" in three
    assert not flag.exists() and victim.read_text() == "keep me"
    assert snapshot(reference, sub) == before
    assert sleepers() == []


# Three attacks on the child's own machinery, each in a task of one submission graded
# with the static check off: (task, region, code)
MACHINERY = {
    # The third red team, past the static check, swapped the hook's code for a
    # function that allows everything, then ran a shell.
    "the audit hook's code": ("1.1", "Sigmoid.numeric", (
        "import os, sys\nerrors = []\n"
        "hook = sys.modules['__main__']._audit\n"
        "try:\n    hook.__code__ = (lambda event, args: None).__code__\n"
        "except PermissionError as e:\n    errors.append(str(e))\n"
        "try:\n    os.system('true')\nexcept PermissionError as e:\n    errors.append(str(e))\n"
        "raise RuntimeError(' | '.join(errors))")),
    # On main the audit hook let graded code write compiled files anywhere in its
    # copy, and a .pyc planted beside a module is imported in place of its source.
    "bytecode planted in the copy": ("2.2", "Sin.derivative", (
        "import os, mlxref\n"
        "target = os.path.join(os.path.dirname(mlxref.__file__), '__pycache__', 'x.pyc')\n"
        "try:\n"
        "    with open(target, 'wb') as f:\n"
        "        f.write(b'planted')\n"
        "except OSError as e:\n"
        "    raise ValueError(type(e).__name__ + ' for ' + 'the plant') from None\n"
        "raise ValueError('the plant ' + 'took')")),
    # (code the static check allows)
    "the C library's log": ("2.3", "Divide.partial", (
        "from mlxref.core.backend.cpu import libm\n"
        "raise RuntimeError(f'libm: {libm.AVAILABLE}')")),
}


@pytest.fixture(scope="module")
def machinery_graded(tmp_path_factory, reference):  # noqa: F811
    """{task: its messages} of the submission holding ``MACHINERY``, and whether
    the reference and the submission are unchanged, graded once per test run."""
    def grade():
        sub = submit(tmp_path_factory.mktemp("machinery") / "sub", reference,
                     {(task_id, function): code for task_id, function, code in MACHINERY.values()})
        before = snapshot(reference, sub)
        results, _ = grader.grade(sub, "1.1,2.2,2.3", reference=reference, timeout=120,
                                  check=False)
        return {t: "\n".join(r["messages"]) for t, r in results.items()}, \
            snapshot(reference, sub) == before

    return computed_once(tmp_path_factory, "attacks_machinery", grade)


def test_with_the_check_off_the_audit_hook_keeps_its_code(machinery_graded):
    """Replacing a function's code is refused, and the hook still refuses the shell."""
    messages, unchanged = machinery_graded
    one = messages[MACHINERY["the audit hook's code"][0]]
    assert ("RuntimeError: the grader does not let graded code replace a function's code | "
            "the grader does not let graded code use os.system") in one, one
    assert unchanged


def test_graded_code_computes_log_with_the_c_library_as_every_run_does(machinery_graded):
    """The child loads mlxref's libm before its audit hook (which refuses
    ctypes): graded code's float32 log is the C library's logf, MLX's and the
    reference's, not the stand-in."""
    messages, _ = machinery_graded
    three = messages[MACHINERY["the C library's log"][0]]
    assert "RuntimeError: libm: True" in three, three


def test_bytecode_written_into_the_copy_is_refused(machinery_graded):
    """Now the copy's compiled files are as read-only as its sources."""
    messages, unchanged = machinery_graded
    two = messages[MACHINERY["bytecode planted in the copy"][0]]
    assert "PermissionError for the plant" in two and "the plant took" not in two, two
    assert unchanged


def test_a_loop_that_ignores_sigalrm_or_catches_the_timeout_is_killed(tmp_path,
                                                                        reference):  # noqa: F811
    sub = submit(tmp_path / "sub", reference, {
        ("1.1", "Sigmoid.numeric"):
            "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass",
        ("2.2", "Sin.derivative"):  # passes the static check
            "while True:\n    try:\n        while True:\n            pass\n"
            "    except BaseException:\n        pass",
    })
    before = snapshot(reference, sub)
    start = time.monotonic()
    results, _ = grader.grade(sub, "1.1,2.2", reference=reference, timeout=2.5, check=False)
    assert time.monotonic() - start < 40
    for task_id in ("1.1", "2.2"):
        r = results[task_id]
        assert not r["passed"]
        assert any("stopped at the wall-clock limit of 2.5 s" in m for m in r["messages"]), r
    assert snapshot(reference, sub) == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_detached_processes_die_with_the_task(tmp_path):
    """A child that starts a process in a session of its own (double fork,
    setsid) and exits, or loops until the wall-clock limit: either way the
    process is dead when the run returns."""
    spawn = (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['sleep', '{SLEEPER}'])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
    )
    env = sandbox.clean_environment(str(tmp_path))
    for tail, expected in (("", 0), ("while True:\n    pass\n", sandbox.TIMED_OUT)):
        status, _, _ = sandbox.run([sandbox.python(), "-I", "-S", "-c", spawn + tail], env,
                                   str(tmp_path), "", 2)
        assert status == expected
        assert sleepers() == []


# --- issue 29: the judge (mlxref/course/judge.py) ------------------------------------------
# Each attack runs with the static check off (``check=False``): code that escaped it.

HIDDEN_2_3_NAME = "tests/course/hidden/test_hidden_2_3.py::test_divide_partial_b_random"


def _judged(tmp_path, reference, body):  # noqa: F811
    """Grade 2.3 with ``body`` as Divide.partial, the check off: (2.3's result,
    every text the grader produced about it)."""
    results, text = _judged_all(tmp_path / "sub", reference,
                                {("2.3", "Divide.partial"): body})
    return results["2.3"], text


def _judged_all(submission, reference, bodies):  # noqa: F811
    """Grade the tasks of ``bodies`` ({(task, region): code}) of a submission
    at ``submission``, the check off: (their results, every text the grader
    produced about them). Nothing outside the scratch copies changes."""
    sub = submit(submission, reference, bodies)
    before = snapshot(reference, sub)
    spec = ",".join(sorted({task_id for task_id, _ in bodies}))
    results, _ = grader.grade(sub, spec, reference=reference, timeout=120, check=False)
    assert snapshot(reference, sub) == before
    text = grader.format_grades(sub, results, []) + grader.grades_json(results) + \
        json.dumps(grader.gradescope(results))
    return results, text


def _the_hidden(r):
    """The one hidden test of the throwaway checkout's 2.3, as graded."""
    (hidden,) = [x for x in r["results"] if x["hidden"]]
    return hidden


# Two attacks, each in a task of one submission graded once: the hidden tests' source
# looked for from 1.1 (on every hidden file under the grade's scratch directory),
# and what the tests compare with patched from 2.3
LEAK = (
    "import os\n"
    "found = []\n"
    # the grade's scratch directory: every task's copy is under it
    "for d, _, files in os.walk(os.path.dirname(os.path.dirname(os.getcwd()))):\n"
    "    for f in files:\n"
    "        if ('hidden' in d or 'hidden' in f) and f.endswith('.py'):\n"
    "            try:\n"
    "                found.append(open(os.path.join(d, f)).read())\n"
    "            except (OSError, ValueError):\n"
    "                pass\n"
    "raise ValueError('LE' + 'AK: ' + ' '.join(found)[:3000])"
)
PATCH = (
    "import sys\n"
    "for m in list(sys.modules.values()):\n"
    "    if getattr(m, 'close', None) is not None and 'support' in repr(m):\n"
    "        m.close = lambda *args, **kwargs: True\n"
    "    if getattr(m, '__name__', '').startswith(('test_', 'tests.')):\n"
    "        m.close = lambda *args, **kwargs: True\n"
    "return a * 0"
)


@pytest.fixture(scope="module")
def leak_and_patch(tmp_path_factory, reference):  # noqa: F811
    return computed_once(tmp_path_factory, "attacks_leak_and_patch", lambda: _judged_all(
        tmp_path_factory.mktemp("leak") / "sub", reference,
        {("1.1", "Sigmoid.numeric"): LEAK, ("2.3", "Divide.partial"): PATCH}))


def test_the_hidden_tests_source_never_reaches_a_visible_message(leak_and_patch):
    """On main the hidden tests were copied into each task's scratch copy, and
    code that escaped the static check put their source into a visible test's
    failure message (a red team did, through Gradescope's output). Now the
    copy has none, and the answering child gets inputs only."""
    results, text = leak_and_patch
    r = results["1.1"]
    assert not r["passed"] and "LEAK: " in text  # the message did reach the output
    for secret in ("sympy.diff", "test_divide_partial_b_random(a, b)", "max_examples=15",
                   "1 / (1 + math.exp(-v))) < 1e-12"):
        assert secret not in text, secret
    hidden = [x for x in r["results"] if x["hidden"]]
    assert [x["message"] for x in hidden] == ["hidden test failed: your code raised an exception"]


def test_patching_what_the_tests_compare_with_earns_no_hidden_point(leak_and_patch):
    """On main a wrong answer that replaced, in every loaded module, the
    function the tests compare with (here support.close) passed the hidden
    test as well as the visible ones. The hidden test's comparison is not in
    the graded code's process any more: the wrong answer fails it."""
    results, _ = leak_and_patch
    r = results["2.3"]
    hidden = _the_hidden(r)
    assert hidden["name"] == HIDDEN_2_3_NAME and not hidden["passed"]
    assert hidden["message"] == "hidden test failed: a result differs from the reference's"
    # the visible test's comparison is not there either: it is replayed outside
    tests = {x["name"]: x for x in r["results"]}
    divide = tests["tests/test_fake_tasks.py::test_divide_partials"]
    assert not divide["passed"] and "expected [0.25, 0.125], received [0.0, 0.0]" in \
        divide["message"], divide
    assert not r["passed"] and r["points"] == round(r["max_points"] / 3, 2)


def test_a_visible_verdict_cannot_be_forged_from_the_sandbox(tmp_path, reference):  # noqa: F811
    """On main the visible tests ran in the child beside the graded code, which
    (past the static check) could write a passing record for each test on the
    result channel with the child's token, and exit: 0.5 of 1 point with
    zeros for answers (a red team's A08; this one earned 0.67 of 1). Now the
    child answers calls and the visible tests are replayed outside it: the
    same record is a line out of place, and the test it forged fails."""
    forge = (
        "import __main__ as m\n"
        "m._emit({'test': 'tests/test_fake_tasks.py::test_divide_partials', 'failed': False,"
        " 'message': None})\n"
        "m._finish(0)"
    )
    r, text = _judged(tmp_path, reference, forge)
    tests = {x["name"]: x for x in r["results"]}
    assert not tests["tests/test_fake_tasks.py::test_divide_partials"]["passed"]
    assert not _the_hidden(r)["passed"]
    assert r["points"] < r["max_points"] / 2, r["points"]


def test_what_the_answering_child_says_carries_no_hidden_input(tmp_path, reference):  # noqa: F811
    """The child that answers the hidden tests' calls sees their inputs. What
    it can say that a student sees is fixed text: an exception's type only
    when it is one of Python's own (on main a hidden test's failure showed
    any type's name, so a class named after the inputs spelled them out), no
    path from its last record and no line of its stderr."""
    # 1.1's hidden test spells its inputs with a class named after them, 2.3's
    # chooses a type among Python's own by them (a third red team read 4 bits of
    # each hidden input from "your code raised ArithmeticError"): one grade
    spell = (
        "if abs(x) in (30.0, 0.5):  # the hidden test's inputs\n"
        "    digits = str(int(abs(float(x)) * 1000))\n"
        "    raise type('seen' + digits, (Exception,), {})()\n"
        + region_code(reference, "1.1", "Sigmoid.numeric")
    )
    choose = (
        "if b.size == 1:  # the hidden test's inputs\n"
        "    raise [ArithmeticError, LookupError, EOFError, BufferError][int(b.tolist()[0]) % 4]\n"
        "return -a / (b * b)"
    )
    results, text = _judged_all(tmp_path / "sub", reference, {
        ("1.1", "Sigmoid.numeric"): spell, ("2.3", "Divide.partial"): choose})
    for task_id in ("1.1", "2.3"):
        (hidden,) = [x for x in results[task_id]["results"] if x["hidden"]]
        assert hidden["message"] == "hidden test failed: your code raised an exception"
    assert "seen" + "0" not in text and not any("seen" + d in text for d in "123456789")
    assert not any("raised " + name in text for name in (
        "ArithmeticError", "LookupError", "EOFError", "BufferError"))
    forge = (
        "import os, sys\n"
        "if b.size == 1:  # the hidden test's inputs\n"
        "    import __main__ as m, json\n"
        "    sys.stderr.write('Fatal Python error: se' + 'en' + str(b.tolist()) + '\\n')\n"
        "    m._emit({'done': True, 'status': 0, 'mlxref': '/se' + 'en' + str(b.tolist())})\n"
        "    os._exit(0)\n"
        "return -a / (b * b)"
    )
    r, text = _judged(tmp_path / "2", reference, forge)
    hidden = _the_hidden(r)
    assert not hidden["passed"] and "/seen[" not in text and ": seen[" not in text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_run_dies_with_the_grader(tmp_path):
    """On main a grader killed mid-run (a Gradescope timeout, a ^C that
    became SIGKILL) left each run's supervisor and child going until their
    own wall-clock limit; a red team saw them outlive it. Now the supervisor
    is told when its parent dies, and stops the run as the parent's SIGTERM
    would."""
    import signal
    import subprocess

    code = ("from mlxref.course import sandbox\n"
            f"env = sandbox.clean_environment({str(tmp_path)!r})\n"
            f"sandbox.run(['/bin/sleep', '{SLEEPER}'], env, {str(tmp_path)!r}, '', 600)\n")
    grader_process = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        while not sleepers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sleepers(), "the run did not start"
    finally:
        grader_process.send_signal(signal.SIGKILL)
        grader_process.wait()
    deadline = time.monotonic() + 10
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = sleepers()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_the_answering_child_sees_one_call_at_a_time(tmp_path, reference):  # noqa: F811
    """On main the child got every call of the task at once, and a red team
    read one call's expected result from a later call's inputs. Now call k + 1
    is sent only once call k is answered: while it answers, nothing more
    waits on its stdin."""
    peek = (
        "import os, select, sys\n"
        "if b.size == 1:  # the hidden test's inputs\n"
        "    waiting, _, _ = select.select([sys.stdin], [], [], 0.2)\n"
        "    if waiting:\n"
        "        raise ZeroDivisionError\n"
        "return -out / b"
    )
    r, _ = _judged(tmp_path, reference, peek)
    assert _the_hidden(r)["passed"], _the_hidden(r)["message"]


def test_sympy_parses_no_text_in_the_children(tmp_path, reference):  # noqa: F811
    """A second red team escaped the static check without naming SymPy:
    ``Exp.symbolic("...")`` hands a string to sympy.exp, whose parser runs it
    as Python. The children refuse SymPy's parsing before graded code runs
    (the static check on, as a student faces it)."""
    sub = submit(tmp_path / "sub", reference, {("2.3", "Divide.partial"): (
        "from mlxref.core.primitives.elementwise import Exp\n"
        "Exp.symbolic('1 + 1')\n"
        "return -out / b")})
    results, _ = grader.grade(sub, "2.3", reference=reference, timeout=120)
    r = results["2.3"]
    assert not r["passed"]
    assert any("does not let graded code parse text with SymPy" in m for m in r["messages"])
    assert _the_hidden(r)["message"] == "hidden test failed: your code raised an exception"


def test_the_answering_child_chooses_no_word_of_its_failure(tmp_path, reference):  # noqa: F811
    """A run that ends by its own choice (an exit status, a signal) could spell
    hidden inputs with the number: the hidden test's reason names no number
    (on main the status was shown)."""
    r, text = _judged(tmp_path, reference, (
        "import os\n"
        "if b.size == 1:  # the hidden test's inputs\n"
        "    os._exit(3 + 4)\n"
        "return -out / b"))
    assert _the_hidden(r)["message"] == \
        "hidden test failed: its run ended before it answered every call"
    assert "status 7" not in text


DELEGATED = {  # 2.1's vjp and 3.1's jvp, each computed with the other
    ("2.1", "Unary.vjp"): "return self.jvp(primals, cotangents, [0])",
    ("2.1", "Binary.vjp"): "return [self.jvp(primals, [cotangents[0]], [i])[0] for i in argnums]",
    ("3.1", "Unary.jvp"):
        "return self.vjp(primals, tangents, argnums, [make_array(self, [primals[0]])])",
    ("3.1", "Binary.jvp"): (
        "out = make_array(self, list(primals))\n"
        "parts = [self.vjp(primals, [t], [i], [out])[0] for i, t in zip(argnums, tangents)]\n"
        "return [parts[0] if len(parts) == 1 else ops.add(parts[0], parts[1])]"),
}
WHOLE = "not with yours (does this task call another task's code?)"


def test_tasks_that_hand_their_work_to_each_other_earn_nothing(tmp_path):
    """Each task is graded in a copy where the other tasks have the
    reference's code. On main, 2.1's vjp computed with ``self.jvp`` and 3.1's
    jvp with ``self.vjp`` each got the other's reference there, and both
    earned full marks (a red team's A07), though in the submission they call
    each other forever. Now a call that ran only its task's code on the
    reference must be answered the same with the student's code for every
    other task (graded against this checkout's own tests)."""
    root = regions.project_root()
    results, _ = grader.grade(submit(tmp_path / "sub", root, DELEGATED), "2.1,3.1",
                              reference=root, timeout=120)
    for task_id in ("2.1", "3.1"):
        r = results[task_id]
        assert r["points"] < 0.5 * r["max_points"], (task_id, r["points"], r["messages"])
        visible = [x for x in r["results"] if not x["hidden"]]
        assert visible and all(WHOLE in x["message"] for x in visible), visible
        assert "hidden test failed: a result differs when your other tasks' code runs too" in {
            x["message"] for x in r["results"] if x["hidden"]}


def test_a_task_handed_to_a_stub_or_to_a_task_failed_on_purpose_earns_nothing(tmp_path):
    """A third red team got past the first form of this check, which gave the
    whole submission the reference's code for every task that did not pass:
    2.1 computed with ``self.jvp`` earned 1 of 1 beside a 3.1 left a stub
    (A21), graded alone, and beside a 3.1 that fails one test on purpose
    (A22). Now the whole submission is the student's code for every task, and
    holds every call that ran only its task on the reference, or that ran a
    task in the student's copy that the reference's run did not."""
    root = regions.project_root()
    stub = {key: code for key, code in DELEGATED.items() if key[0] == "2.1"}
    stub[("3.1", "Unary.jvp")] = "raise NotImplementedError('Task 3.1: not yet')"
    results, _ = grader.grade(submit(tmp_path / "stub", root, stub), "2.1", reference=root,
                              timeout=120)
    r = results["2.1"]
    visible = [x for x in r["results"] if not x["hidden"]]
    unary = [x for x in visible if "Unary" in x["name"] or "unary" in x["name"]]
    assert unary and not any(x["passed"] for x in unary), visible
    # red team 4 still found 0.12 of it in a test whose calls run other tasks'
    # code on the reference (2.1's derivatives go through 2.3's rules and 4.1's
    # walk), which the whole submission did not answer: now a call that ran a
    # task its reference's run did not (3.1, here) is held to it too. Only the
    # binary tests pass: Binary.vjp is handed to this submission's Binary.jvp,
    # which is right (the reference's text)
    passing = [x["name"] for x in r["results"] if x["passed"]]
    assert passing and all("binary" in n for n in passing), passing
    # 2.1 handed to a 3.1 that is right (the reference's own code, here) is the
    # student's own code all the way: it passes
    alone, _ = grader.grade(submit(tmp_path / "alone", root, {
        ("2.1", "Unary.vjp"): DELEGATED[("2.1", "Unary.vjp")]}), "2.1", reference=root,
        timeout=120)
    assert [x["name"] for x in alone["2.1"]["results"] if not x["passed"]] == []


# Modules through which graded code could run text, import by name, walk the heap
# or reach the system: no chain of public attributes the static check allows may
# lead to one from an mlxref module a task may import (red teams reached sys
# through argparse's ``_sys`` and collections' ``_sys``, and pkgutil, typing and
# dataclasses through public ones).
DANGEROUS_MODULES = frozenset(
    "sys os posix io _io ctypes _ctypes importlib pkgutil subprocess gc typing types inspect "
    "pickle marshal runpy code codeop pdb timeit cProfile profile pydoc doctest unittest "
    "dataclasses logging warnings threading multiprocessing socket signal shutil tempfile "
    "pathlib linecache traceback weakref".split())


# And the builtins that run text or read attributes by name, under any alias
# (mpmath's ``exec_``, found by a fourth red team through mlxref.symbolic).
DANGEROUS_BUILTINS = ("exec", "eval", "compile", "getattr", "setattr", "delattr", "open",
                      "__import__", "vars", "globals", "locals", "breakpoint", "input")


def test_no_allowed_attribute_chain_reaches_a_dangerous_module():
    import builtins
    import collections
    import importlib
    import pkgutil
    import types

    import mlxref

    allowed = []
    for info in pkgutil.walk_packages(mlxref.__path__, "mlxref."):
        if sandbox._importable(info.name) and not info.name.endswith("__main__"):
            allowed.append((info.name, importlib.import_module(info.name)))
    seen, queue, found = set(), collections.deque((n, m, 0) for n, m in allowed), []
    while queue:
        path, module, depth = queue.popleft()
        if id(module) in seen:
            continue
        seen.add(id(module))
        if module.__name__.split(".")[0] in DANGEROUS_MODULES | {"builtins"}:
            found.append(f"{path} is {module.__name__}")
            continue
        found += [f"{path}.{name} is {value.__name__}"
                  for name, value in list(vars(module).items())
                  if any(value is getattr(builtins, b) for b in DANGEROUS_BUILTINS)
                  and sandbox._refused_attribute(name) is None]
        if depth < 6:
            queue.extend((f"{path}.{name}", value, depth + 1)
                         for name, value in list(vars(module).items())
                         if isinstance(value, types.ModuleType)
                         and sandbox._refused_attribute(name) is None)
    assert found == []
