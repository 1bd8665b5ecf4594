"""``mlxref assignment make --check-leaks`` (mlxref/course/leaks.py): each kind of leak is
caught on a crafted student copy, and the reference's own copies have none.

Most tests build a tiny project pair by hand: a "reference" with two task
regions and a hidden test, and a student copy with the regions stubbed, into
which one leak is written at a time. The last ones run on copies made from
this checkout: every task stubbed is clean, and the leaks issue 15 listed
(the 2.1 hint, the d(a/b)/db formula, 5.2's helpers, 2.5's exclusive product)
are caught when put back.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from mlxref.course import assignment, leaks
from mlxref.cli import main

REFERENCE = {
    "mlxref/__init__.py": "",
    "mlxref/rules.py": '''
        from . import ops


        def _helper(x):
            return x


        class Scale:
            def vjp(self, primals, cotangents, argnums, outputs):
                # BEGIN TASK 1.1: scaling rule
                (x,), (cot,) = primals, cotangents
                scaled = ops.multiply(cot, ops.add(self.factor, ops.square(x)))
                return [ops.negative(ops.divide(scaled, outputs[0]))]
                # END TASK 1.1

            def partial(self, i, a, b, out):
                # BEGIN TASK 1.2: the other partial
                return ops.negative(ops.divide(out, b))
                # END TASK 1.2

            def common(self, primals):
                (x,), (cot,) = primals, primals
                return x
        ''',
    "tests/course/hidden/test_hidden_1.py": '''
        import pytest


        @pytest.mark.task1_1
        def test_scale():
            assert True
        ''',
    "README.md": "# A project\n\nThe rules are in `mlxref/rules.py`.\n",
}

STUBS = {
    "1.1": '        raise NotImplementedError("Task 1.1: return [the cotangent of x]")',
    "1.2": '        raise NotImplementedError("Task 1.2: return d (a / b) / db as an array")',
}


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _stubbed(text):
    """``text`` with each region replaced by its stub line."""
    lines, out, skipping = text.split("\n"), [], False
    for line in lines:
        if "# BEGIN TASK" in line:
            out += [line, STUBS[line.split("TASK ")[1].split(":")[0]]]
            skipping = True
        elif "# END TASK" in line:
            out.append(line)
            skipping = False
        elif not skipping:
            out.append(line)
    return "\n".join(out)


@pytest.fixture
def pair(tmp_path):
    """(reference, student copy): the copy has both tasks stubbed and no hidden tests."""
    reference, copy = tmp_path / "reference", tmp_path / "copy"
    _write(reference, REFERENCE)
    files = {k: v for k, v in REFERENCE.items() if not k.startswith("tests/course/hidden")}
    files["mlxref/rules.py"] = _stubbed(textwrap.dedent(REFERENCE["mlxref/rules.py"]))
    _write(copy, files)
    return reference, copy


def _append(path, text):
    path.write_text(path.read_text() + textwrap.dedent(text))


def _line(path, text):
    """The number of the first line of ``path`` holding ``text``."""
    return next(k for k, line in enumerate(path.read_text().split("\n"), 1) if text in line)


def _findings(pair):
    reference, copy = pair
    return leaks.check_leaks(copy, reference)


def test_a_clean_copy_has_no_findings(pair):
    # common() repeats a line of the answer, (x,), (cot,) = ..., that the
    # reference also holds outside the regions: an idiom, not a leak.
    assert _findings(pair) == []


def test_the_answers_lines_exactly(pair):
    _append(pair[1] / "mlxref" / "rules.py", '''

        def elsewhere(x, cot, factor):
            scaled = ops.multiply(cot, ops.add(self.factor, ops.square(x)))
            return scaled
        ''')
    (finding,) = _findings(pair)
    line = _line(pair[1] / "mlxref" / "rules.py", "scaled = ")
    assert finding.startswith(f"mlxref/rules.py:{line}: a line of task 1.1's answer")
    assert "(mlxref/rules.py:Scale.vjp:12) in elsewhere" in finding


def test_the_answers_lines_renamed_and_respaced(pair):
    _write(pair[1], {"mlxref/extra.py": '''
        from . import ops


        def other(p, q, r):
            s  =  ops.multiply( q , ops.add(self.factor,ops.square(p)) )  # the same line
            return s
        '''})
    (finding,) = _findings(pair)
    line = _line(pair[1] / "mlxref" / "extra.py", "s  =")
    assert finding.startswith(f"mlxref/extra.py:{line}: a line of task 1.1's answer")


def test_a_helper_that_does_the_tasks_work(pair):
    # A sibling rule that differs from the answer by one line.
    _write(pair[1], {"mlxref/sibling.py": '''
        from . import ops


        class Sibling:
            def vjp(self, primals, cotangents, argnums, outputs):
                """Like Scale's rule."""
                (y,), (c,) = primals, cotangents
                s = ops.multiply(c, ops.add(self.factor, ops.square(y)))
                return [ops.negative(ops.divide(s, outputs[1]))]
        '''})
    found = _findings(pair)
    line = _line(pair[1] / "mlxref" / "sibling.py", "def vjp")
    assert any(f.startswith(f"mlxref/sibling.py:{line}: function vjp does the work of task "
                            "1.1's Scale.vjp") for f in found), found


def test_a_hint_that_spells_out_the_code(pair):
    rules = pair[1] / "mlxref" / "rules.py"
    rules.write_text(rules.read_text().replace(
        "Task 1.1: return [the cotangent of x]",
        "Task 1.1: return [-(cot times (self.factor plus ops.square(x))) / outputs[0]]"))
    (finding,) = _findings(pair)
    line = _line(rules, "Task 1.1:")
    assert finding.startswith(f"mlxref/rules.py:{line}: the hint of Scale.vjp spells out task "
                              "1.1's")


def test_a_hint_or_a_document_that_gives_the_formula(pair):
    rules = pair[1] / "mlxref" / "rules.py"
    rules.write_text(rules.read_text().replace("d (a / b) / db as an array",
                                               "d (a / b) / db, which is -out/b"))
    _append(pair[1] / "README.md", "\nReuse the output: `d(a/b)/db = -out / b`.\n")
    found = _findings(pair)
    assert len(found) == 2, found
    line = _line(rules, "Task 1.2:")
    assert found[0] == (f"mlxref/rules.py:{line}: the hint of Scale.partial spells out task "
                        "1.2's answer (ops.negative(ops.divide(out, b)))")
    line = _line(pair[1] / "README.md", "Reuse the output")
    assert found[1] == (f"README.md:{line}: gives task 1.2's answer "
                        "(ops.negative(ops.divide(out, b)))")


def test_a_formula_that_is_not_the_answer_is_not_a_leak(pair):
    _append(pair[1] / "README.md", "\nThe quotient rule: `d(a/b)/da = 1/b`; `out = a / b`.\n")
    assert _findings(pair) == []


def test_hidden_tests_in_the_copy(pair):
    reference, copy = pair
    hidden = (reference / "tests" / "course" / "hidden" / "test_hidden_1.py").read_text()
    (copy / "tests").mkdir()
    (copy / "tests" / "test_mine.py").write_text(hidden)  # a hidden file, renamed
    _write(copy, {"tests/course/hidden/test_other.py": "def test_x():\n    pass\n"})
    assert _findings(pair) == [
        "tests/course/hidden/test_other.py: hidden tests are in the student copy",
        "tests/test_mine.py: a copy of the hidden test file tests/course/hidden/test_hidden_1.py",
    ]


def test_only_stubbed_tasks_are_looked_for(pair):
    reference, copy = pair
    rules = copy / "mlxref" / "rules.py"
    # Task 1.2 handed back implemented (not a task of this copy): its answer
    # elsewhere is no leak, and 1.1's still is.
    rules.write_text(rules.read_text().replace(STUBS["1.2"], "        return out"))
    _append(rules, "\n\ndef f(out, b):\n    return ops.negative(ops.divide(out, b))\n")
    assert _findings(pair) == []
    line = _line(rules, "def f(out, b)") + 1
    answer = _line(reference / "mlxref" / "rules.py", "return ops.negative(ops.divide(out, b))")
    assert leaks.check_leaks(copy, reference, tasks={"1.2"}) == [
        f"mlxref/rules.py:{line}: a line of task 1.2's answer "
        f"(mlxref/rules.py:Scale.partial:{answer}) in f"]


def test_not_a_copy(tmp_path):
    with pytest.raises(ValueError, match="is not a student copy"):
        leaks.check_leaks(tmp_path)


# --- copies of this checkout ----------------------------------------------------------------


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """A copy of this checkout with every task stubbed. It is checked clean at
    the end of test_the_issues_leaks_when_put_back (not by make as well: a
    check of every task takes seconds)."""
    out = tmp_path_factory.mktemp("leaks") / "all"
    assignment.make("ALL", out, check_leaks=False)
    return out


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))
    return text


def test_the_issues_leaks_when_put_back(student, capsys):
    elementwise = student / "mlxref/core/primitives/elementwise.py"
    reduction = student / "mlxref/core/primitives/reduction.py"
    guide = student / "tutorials/ASSIGNMENTS.md"
    hint = assignment.HINTS[("2.1", "Unary.vjp")]
    saved = [
        (elementwise, _edit(elementwise, hint, "return [cotangent of x]: cotangents[0] times "
                            "self.derivative(x, outputs[0]), or zeros when self.derivative is None")),
        (guide, _edit(guide, "reusing the output the forward pass already computed.",
                      "reusing the output (`d(a/b)/db = -out/b`).")),
        (reduction, reduction.read_text()),
    ]
    # 5.2's helpers and 2.5's exclusive product, left implemented under other names.
    _append(reduction, '''

        def _shift(axes, ax):
            return tuple(d + 1 if d >= ax else d for d in axes)


        def _other_prod(x, axes):
            runs = _to_last(x, axes)
            left = ops.cumprod(runs, axis=-1, inclusive=False)
            right = ops.cumprod(runs, axis=-1, reverse=True, inclusive=False)
            return _from_last(ops.multiply(left, right), x.shape, axes)
        ''')
    try:
        assert main(["assignment", "make", "--check-leaks", "--out", str(student)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert err[0].endswith("leaks answers (9):")  # 4 lines of _other_prod, 2 functions
        found = "\n".join(err[1:])
        for expected in [
            "the hint of Unary.vjp spells out task 2.1's answer",
            f"tutorials/ASSIGNMENTS.md:{_line(guide, 'd(a/b)/db = -out/b')}: gives task "
            "2.3's answer (ops.negative(ops.divide(out, b)))",
            "a line of task 5.2's answer (mlxref/core/primitives/reduction.py:shift_axes:",
            "a line of task 2.5's answer (mlxref/core/primitives/reduction.py:_exclusive_prod:",
            "function _other_prod does the work of task 2.5's _exclusive_prod",
        ]:
            assert expected in found, (expected, found)
    finally:
        for path, text in saved:
            path.write_text(text)
    assert main(["assignment", "make", "--check-leaks", "--out", str(student)]) == 0
    assert capsys.readouterr().out == f"no leaks found in {student}\n"


def test_every_path_to_a_stubbed_computation_runs_its_region(student):
    # The composed float16 logsumexp was a second copy of task 1.2's answer
    # with roundings added: now every dtype's logsumexp goes through the stub.
    script = (
        "import mlxref.core as mx\n"
        "for dtype in (mx.float32, mx.float64, mx.float16, mx.bfloat16):\n"
        "    for axis in (0, 1):\n"
        "        try:\n"
        "            mx.eval(mx.logsumexp(mx.ones((2, 3), dtype=dtype), axis=axis))\n"
        "        except NotImplementedError as e:\n"
        "            assert str(e).startswith('Task 1.2: '), e\n"
        "        else:\n"
        "            raise SystemExit(f'{dtype} axis {axis}: computed without task 1.2')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=student, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(student)})
    assert done.returncode == 0, done.stdout + done.stderr


def test_make_runs_the_check(tmp_path, monkeypatch):
    monkeypatch.setattr(leaks, "check_leaks", lambda copy, reference=None: ["x.py:1: a leak"])
    with pytest.raises(leaks.Leaks, match="x.py:1: a leak"):
        assignment.make("2.2", tmp_path / "a")
    assert assignment.make("2.2", tmp_path / "b", check_leaks=False)[0] == ["2.2"]


def test_the_cli_options(tmp_path, capsys):
    def run(*argv):
        status = main(["assignment", "make", *argv])
        return status, capsys.readouterr().err

    status, err = run("--check-leaks", "--tasks", "2.2", "--out", str(tmp_path))
    assert status == 2 and "drop --tasks" in err
    status, err = run("--out", str(tmp_path / "x"))
    assert status == 2 and "make needs --tasks" in err
    status, err = run("--check-leaks", "--out", str(tmp_path))
    assert status == 2 and "is not a student copy" in err
