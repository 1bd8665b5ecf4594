"""Wrong answers of the usual kinds fail their task, with a message that says what is wrong.

Each wrong answer is written into its task's region of a submission (the
reference's files with that region's code replaced: test_grader.py's
``submit``) and graded by ``mlxref assignment grade`` (mlxref/course/grader.py)
against this checkout: the task's visible and hidden tests, in the grader's
child process. The kinds: a sign error, a missing unbroadcast, the wrong
axis, the wrong dtype, returning the cotangent, ignoring argnums and the
naive logsumexp. The wrong dtype passes every visible test: only the hidden
ones catch it, and a hidden test's failure says only that a result differs
from the reference's, or which exception the student's code raised.

One grading serves two sets of checks: each kind's own message (the values,
the shape or the dtype it got wrong), and what the grader shows of any
failing task: the values or the student's lines, never the reference's
answer. Two submissions hold the answers (two answers to one task cannot
share one), so the suite grades twice: one child process per task graded,
once per test run however many pytest-xdist workers share the tests.
"""

import re

import pytest

from mlxref.course import grader, regions
from support import computed_once
from course.test_grader import submit, table

ROOT = regions.project_root()

# kind -> (task, {function: the region's new body}, what the failure must say)
WRONG = {
    "the naive logsumexp": ("1.2", {"_logsumexp": """
        return math.log(sum(math.exp(v) for v in group))
        """}, [r"(OverflowError|ValueError)", r"what = 'logsumexp\(\[\[.*\]\], axis=1\)'"]),
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
               r"hidden test failed: a result differs from the reference's"]),
    "a missing unbroadcast": ("4.3", {"Broadcast.vjp": """
        (x,), (cot,) = primals, cotangents
        return [ops.sum(cot, axis=list(range(cot.ndim - x.ndim)))]
        """}, [r"Broadcast\(\(2, 3, 4\)\)\.vjp for x of shape \(3, 1\): expected shape \(3, 1\), "
               r"received \(3, 4\)"]),
    "the wrong axis": ("5.2", {"shift_axes": "return tuple(axes)\n"},
                       [r"\.vmap, batch axis \d: expected shape \(.*\), received \(.*\)"]),
    "the wrong dtype": ("5.2", {"Reduce.vmap": """
        (x,), (ax,) = inputs, axes
        if ax is None:
            return _unbatched(self, x)
        axes_b = shift_axes(self.axes, ax)
        result = ops.astype(make_array(Reduce(self.kind, axes_b, self.keepdims), [x]), x.dtype)
        return [result], [_out_batch_axis(ax, axes_b, self.keepdims)]
        """}, [r"hidden test failed: a result differs from the reference's"]),
}
COPIES = [["the naive logsumexp", "returning the cotangent", "a sign error",
           "a missing unbroadcast", "the wrong axis"],
          ["ignoring argnums", "the wrong dtype"]]


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    """[(kinds, {task: the grader's result}, collection errors)], one per
    submission, graded once per test run (not once per xdist worker)."""
    def grade_all():
        out = []
        for kinds in COPIES:
            bodies = {(WRONG[k][0], function): code
                      for k in kinds for function, code in WRONG[k][1].items()}
            sub = submit(tmp_path_factory.mktemp("wrong") / "sub", ROOT, bodies)
            results, errors = grader.grade(sub, ",".join(WRONG[k][0] for k in kinds),
                                           reference=ROOT, timeout=120)
            out.append((kinds, results, errors))
        return out

    return computed_once(tmp_path_factory, "wrong_answers", grade_all)


@pytest.fixture(scope="module")
def graded(grades):
    """{kind of wrong answer: {test id: failure message or None}} of its task."""
    return {kind: {r["name"]: None if r["passed"] else (r["message"] or "")
                   for r in results[WRONG[kind][0]]["results"]}
            for kinds, results, _ in grades for kind in kinds}


@pytest.mark.parametrize("kind", sorted(WRONG))
def test_a_wrong_answer_fails_with_a_helpful_message(graded, kind):
    task, _, patterns = WRONG[kind]
    results = graded[kind]
    hidden = [t for t in results if t.startswith(regions.HIDDEN + "/")]
    assert hidden, f"task {task} ran no hidden tests"
    failures = "\n".join(m for m in results.values() if m)
    assert failures, f"{kind} (task {task}) passed every test"
    for pattern in patterns:
        assert re.search(pattern, failures), f"{kind}: no message matches {pattern!r}:\n{failures}"
    # A visible test says what is wrong; a hidden one only that it failed (its
    # inputs and values stay hidden: the wrong dtype is caught there alone).
    visible = "\n".join(m for t, m in results.items() if m and t not in hidden)
    if visible:
        assert "expected" in visible and any(w in visible for w in ("received", "got", "Error"))
    for t in hidden:
        assert results[t] is None or re.fullmatch(
            r"hidden test failed: (a result differs from the reference's|your code raised "
            r"(NotImplementedError|an exception))", results[t]), results[t]


def test_the_wrong_dtype_passes_the_visible_tests(graded):
    results = graded["the wrong dtype"]
    visible = {t: m for t, m in results.items() if not t.startswith(regions.HIDDEN + "/")}
    assert visible and all(m is None for m in visible.values()), visible
    assert any(m for t, m in results.items() if t.startswith(regions.HIDDEN + "/"))


def test_a_failing_task_shows_the_values_or_the_students_lines_never_the_answer(grades):
    """What the grader prints of each failing task: the values or the
    student's line, and the student's code, never the reference's answer.
    (test_grader.py tests the grader on a throwaway reference; this is
    the real one, with its own tests.)"""
    for kinds, results, errors in grades:
        assert errors == []
        assert list(results) == [WRONG[k][0] for k in kinds]
        for task_id, r in results.items():
            assert not r["passed"] and r["failures"] > 0, (task_id, r)
            text = "\n".join(r["messages"])
            if any(not x["passed"] and not x["hidden"] for x in r["results"]):
                assert ("expected" in text and any(w in text for w in (
                    "received", "got", "Error"))) or "in your code:" in text, text
            (yours,) = [m for m in r["messages"] if m.startswith("your code:")]
            # The student's regions hold their answer and, in a region they
            # left alone, the reference's lines: those are theirs to see.
            theirs = {line.split(" | ", 1)[1].strip() for line in yours.split("\n")
                      if " | " in line}
            assert "return" in " ".join(theirs), yours
            for reference_region in table(ROOT)[task_id][1]:
                answer = (ROOT / reference_region.path).read_text().split("\n")[
                    reference_region.begin: reference_region.end - 1]
                for line in answer:
                    if len(line.strip()) > 12 and line.strip() not in theirs:
                        assert line.strip() not in text, (task_id, line)
