"""Wrong answers of the usual kinds fail their task, with a message that says what is wrong.

Each wrong answer is written into its task's region of a student copy made
by ``mlxref assignment make`` (the other regions keep the reference's code,
as a grade splices one task into the reference), the hidden tests are put
back, and the task's visible and hidden tests run with pytest in a
subprocess, as a grader runs them. The kinds: a sign error, a missing
unbroadcast, the wrong axis, the wrong dtype, returning the cotangent,
ignoring argnums and the naive logsumexp. The wrong dtype passes every
visible test: only the hidden ones catch it.

Two copies hold the answers (two answers to one task cannot share a copy),
so the suite runs pytest twice, not once per answer.
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from mlxref import assignment

ROOT = assignment.project_root()

# kind -> (task, {function: the region's new body}, what the failure must say)
WRONG = {
    "the naive logsumexp": ("1.2", {"_logsumexp": """
        return math.log(sum(math.exp(v) for v in group))
        """}, [r"_logsumexp\(\[.*\]\): expected -?[0-9.e+]+, received (OverflowError|ValueError)"]),
    "returning the cotangent": ("2.1", {"Unary.vjp": """
        return [cotangents[0]]
        """}, [r"ArcTan\.vjp.*expected \[.*\], received \[.*\]"]),
    "ignoring argnums": ("2.1", {"Binary.vjp": """
        a, b = primals
        return [ops.multiply(cotangents[0], self.partial(i, a, b, outputs[0])) for i in (0, 1)]
        """}, [r"argnums \[1\]: expected 1 cotangent"]),
    "a sign error": ("2.3", {"Divide.partial": """
        return ops.reciprocal(b) if i == 0 else ops.divide(out, b)
        """}, [r"d\(a/b\)/db at a=.*: expected \[-?[0-9.]+, .*\], received \[.*\]",
               r"Divide\.partial\(1\).*expected"]),
    "a missing unbroadcast": ("4.3", {"Broadcast.vjp": """
        (x,), (cot,) = primals, cotangents
        return [ops.sum(cot, axis=list(range(cot.ndim - x.ndim)))]
        """}, [r"Broadcast\(\(2, 3, 4\)\)\.vjp for x of shape \(3, 1\): expected shape \(3, 1\), "
               r"received \(3, 4\)"]),
    "the wrong axis": ("5.2", {"_shift_axes": "return tuple(axes)\n"},
                       [r"_shift_axes\(\(\d.*\), \d\): expected \(.*\), received \(.*\)"]),
    "the wrong dtype": ("5.2", {"Reduce.vmap": """
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        axes_b = _shift_axes(self.axes, ax)
        result = ops.astype(make_array(Reduce(self.kind, axes_b, self.keepdims), [x]), x.dtype)
        return [result], [_out_batch_axis(ax, axes_b, self.keepdims)]
        """}, [r"expected dtype (mlx\.core\.)?(int32|uint32|bool), received "
               r"(mlx\.core\.)?(int8|float32|uint8|float16)"]),
}
COPIES = [["the naive logsumexp", "returning the cotangent", "a sign error",
           "a missing unbroadcast", "the wrong axis"],
          ["ignoring argnums", "the wrong dtype"]]


def _splice(copy, task, bodies):
    """Write ``bodies`` (function -> code) into the task's regions of ``copy``."""
    regions = {r.function: r for r in assignment.tasks(assignment.find_regions(copy))[task][1]}
    for function, body in bodies.items():
        r = regions[function]
        path = copy / r.path
        lines = path.read_text().split("\n")
        code = [r.indent + line for line in textwrap.dedent(body).strip("\n").split("\n")]
        lines[r.begin : r.end - 1] = code
        path.write_text("\n".join(lines))
        regions = {q.function: q for q in
                   assignment.tasks(assignment.find_regions(copy))[task][1]}


def _run(copy, tasks):
    """Run the tasks' visible and hidden tests in ``copy``: {test id: failure message or None}."""
    report = copy / "report.xml"
    hidden = sorted(f"tests/hidden/test_hidden_{t.split('.')[0]}.py" for t in set(tasks))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(copy)
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_tasks.py", *hidden, "-q",
         "-m", " or ".join(assignment.marker(t) for t in sorted(set(tasks))),
         "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
         f"--junitxml={report}", "-o", "junit_family=xunit1"],
        cwd=copy, env=env, capture_output=True, text=True, timeout=600,
    )
    assert report.is_file(), r.stdout + r.stderr
    results = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        name = f"{case.get('classname')}.{case.get('name')}"
        results[name] = None if failure is None else (failure.get("message", "") + "\n"
                                                      + (failure.text or ""))
    return results


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{kind of wrong answer: {test id: failure message or None}} of its task."""
    out = {}
    for kinds in COPIES:
        copy = tmp_path_factory.mktemp("wrong") / "copy"
        assignment.make("1.1", copy, check_leaks=False)  # the other regions: the reference's
        shutil.copytree(ROOT / "tests" / "hidden", copy / "tests" / "hidden")
        for kind in kinds:
            task, bodies, _ = WRONG[kind]
            _splice(copy, task, bodies)
        results = _run(copy, [WRONG[k][0] for k in kinds])
        for kind in kinds:
            name = "TestHidden" + WRONG[kind][0].replace(".", "_")
            visible = "TestTask" + WRONG[kind][0].replace(".", "_")
            out[kind] = {t: m for t, m in results.items()
                         if t.split(".")[-2] in (name, visible)}
    return out


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_a_wrong_answer_fails_with_a_helpful_message(graded, kind):
    task, _, patterns = WRONG[kind]
    results = graded[kind]
    hidden = [t for t in results if "TestHidden" in t]
    assert hidden, f"task {task} ran no hidden tests"
    failures = "\n".join(m for m in results.values() if m)
    assert failures, f"{kind} (task {task}) passed every test"
    for pattern in patterns:
        assert re.search(pattern, failures), f"{kind}: no message matches {pattern!r}:\n{failures}"
    assert "expected" in failures and ("received" in failures or "Error" in failures)


def test_the_wrong_dtype_passes_the_visible_tests(graded):
    results = graded["the wrong dtype"]
    visible = {t: m for t, m in results.items() if "TestTask" in t}
    assert visible and all(m is None for m in visible.values()), visible
    assert any(m for t, m in results.items() if "TestHidden" in t)
