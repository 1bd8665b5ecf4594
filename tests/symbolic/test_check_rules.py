"""mlxref.symbolic (the SymPy cross-check of every rule) and ``mlxref check-rules``.

Most tests run single cases or a handful (fast); one test runs the full
``check_all()`` once: the "check-rules is green" guarantee.
"""

import gc
import math
import re

import pytest

import mlxref.core as mx
from mlxref import cli, symbolic
from mlxref.core.primitives import elementwise as E
from mlxref.core.primitives.base import Primitive, make_array
from mlxref.symbolic import Case, Result, check_case
from support import frozen_heap  # noqa: F401  (the fixture)

V = ((3,),)


def _uncovered():
    """Primitives with no Case, computed without running any check. (A class
    another test defined and dropped lives on in a reference cycle until the
    collector runs: collect it first, whatever ran before in this process.)"""
    gc.collect()
    covered = {case.primitive for case in symbolic.all_cases()}
    return [p for p in symbolic.all_primitives()
            if p not in covered and p.__name__ not in symbolic.SKIPPED]


# --- (a) the registry -------------------------------------------------------------------


def test_every_primitive_has_a_case():
    assert _uncovered() == []


def test_every_case_is_for_a_registered_primitive():
    primitives = set(symbolic.all_primitives())
    strays = [c for c in symbolic.all_cases() if c.primitive not in primitives]
    assert strays == [], [(c.primitive, c.note) for c in strays]


def test_all_primitives_are_concrete_primitive_classes_sorted_by_name():
    prims = symbolic.all_primitives()
    assert len(prims) == len(set(prims))
    names = [p.__name__ for p in prims]
    assert names == sorted(names)
    for p in prims:
        assert issubclass(p, Primitive) and p is not Primitive
        assert not p.__dict__.get("abstract", False)
    # the families are not primitives of their own; their members are
    assert E.Unary not in prims and E.Binary not in prims and E.Comparison not in prims
    for member in (E.Sin, E.Add, E.Less, E.Select):
        assert member in prims


def test_every_concrete_primitive_in_the_primitive_modules_is_listed():
    import importlib
    import inspect
    import pkgutil

    from mlxref.core import primitives

    prims = set(symbolic.all_primitives())
    for info in pkgutil.iter_modules(primitives.__path__):
        module = importlib.import_module(f"{primitives.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            own = cls.__module__ == module.__name__
            concrete = cls is not Primitive and not cls.__dict__.get("abstract", False)
            if own and issubclass(cls, Primitive) and concrete:
                assert cls in prims, cls


@pytest.fixture
def orphan_primitive(frozen_heap):
    """A Primitive subclass with no Case; removed (and checked gone) afterwards."""

    class Orphan(Primitive):
        def eval(self, inputs):
            return [inputs[0].data()]

    class OrphanFamily(Primitive):
        abstract = True

    holder = [Orphan, OrphanFamily]
    yield holder
    holder.clear()
    del Orphan, OrphanFamily
    gc.collect()
    names = {p.__name__ for p in symbolic.all_primitives()}
    assert "Orphan" not in names, "the test's primitive class is still alive"


def test_a_new_primitive_without_a_case_is_reported(orphan_primitive, monkeypatch):
    orphan, family = orphan_primitive
    assert orphan in symbolic.all_primitives()
    assert family not in symbolic.all_primitives()  # abstract: not a primitive
    assert _uncovered() == [orphan]
    # check_all reports it, without checking anything else: with no cases at all,
    # every primitive is "no symbolic check" and nothing runs.
    monkeypatch.setattr(symbolic, "all_cases", lambda: [])
    results = {r.primitive: r for r in symbolic.check_all()}
    assert set(results) == {p.__name__ for p in symbolic.all_primitives()}
    r = results["Orphan"]
    assert not r.ok
    assert r.detail == "no symbolic check"
    assert "no symbolic check" in symbolic.format_table([r])


def test_a_new_primitive_with_a_case_is_checked(orphan_primitive, monkeypatch):
    orphan, _ = orphan_primitive
    from mlxref.core.array import array

    def build(x):
        return make_array(orphan(), [x])

    case = Case(orphan, build, V)
    monkeypatch.setattr(symbolic, "all_cases", lambda: [case])
    monkeypatch.setattr(symbolic, "all_primitives", lambda: [orphan])
    (r,) = symbolic.check_all()
    # it has no vjp or jvp: the check runs and reports MLX's message
    assert r.primitive == "Orphan" and not r.ok
    assert "Not implemented for Orphan" in r.detail


# --- (b) check_case -----------------------------------------------------------------


def test_a_correct_case_passes_by_simplify():
    r = check_case(Case(E.Exp, mx.exp, V))
    assert isinstance(r, Result)
    assert (r.primitive, r.forward, r.vjp, r.jvp, r.method, r.detail) == (
        "Exp", True, True, True, "simplify", "")
    assert r.ok


def test_a_binary_case_with_broadcasting_passes():
    r = check_case(Case(E.Multiply, mx.multiply, ((2, 1), (3,))))
    assert r.ok and r.method == "simplify"


def test_a_case_sympy_cannot_simplify_falls_back_to_rational_points():
    r = check_case(Case(E.ArcCosh, mx.arccosh, ((1,),), "above_one"))
    assert r.ok and r.method == "rational points"


def test_a_zero_rule_case_passes_as_zero_rule():
    r = check_case(Case(E.Floor, mx.floor, V, zero=True))
    assert r.ok and r.method == "zero rule"


def test_a_zero_rule_claimed_for_a_differentiable_primitive_fails():
    r = check_case(Case(E.Exp, mx.exp, V, zero=True))
    assert r.method == "zero rule"
    assert r.forward and not r.vjp and not r.jvp and not r.ok


def test_a_broken_derivative_fails_vjp_and_jvp(monkeypatch):
    monkeypatch.setattr(E.Exp, "derivative", lambda self, x, out: x)
    r = check_case(Case(E.Exp, mx.exp, V))
    assert r.forward  # the forward is untouched
    assert r.vjp is False and r.jvp is False and not r.ok


def test_a_broken_vjp_alone_fails_only_the_vjp(monkeypatch):
    monkeypatch.setattr(E.Exp, "vjp", lambda self, p, c, a, o: [c[0] * p[0]])
    r = check_case(Case(E.Exp, mx.exp, V))
    assert (r.forward, r.vjp, r.jvp) == (True, False, True)


def test_a_broken_jvp_alone_fails_only_the_jvp(monkeypatch):
    monkeypatch.setattr(E.Exp, "jvp", lambda self, p, t, a: [t[0] * 2])
    r = check_case(Case(E.Exp, mx.exp, V))
    assert (r.forward, r.vjp, r.jvp) == (True, True, False)


def _singular_values_case():
    from mlxref.core.primitives import factorizations as F
    return Case(F.SVD, lambda a: mx.linalg.svd(a, compute_uv=False), ((3, 2),), points=True)


def test_an_iterative_algorithm_is_checked_at_high_precision_points():
    r = check_case(_singular_values_case())
    assert r.ok and r.method == "high-precision points"


def test_high_precision_points_catch_a_wrong_jvp_and_a_vjp_that_is_not_its_adjoint(monkeypatch):
    from mlxref.core.primitives import factorizations as F
    right_jvp, right_vjp = F.SVD.jvp, F.SVD.vjp
    # A jvp off by a factor: the central difference disagrees.
    monkeypatch.setattr(F.SVD, "jvp", lambda self, p, t, a: [o * 2 for o in right_jvp(self, p, t, a)])
    r = check_case(_singular_values_case())
    assert (r.forward, r.jvp) == (True, False) and not r.ok
    # The right jvp, and a vjp that is not its adjoint.
    monkeypatch.setattr(F.SVD, "jvp", right_jvp)
    monkeypatch.setattr(F.SVD, "vjp", lambda self, p, c, a, o: [g * 1.5 for g in right_vjp(self, p, c, a, o)])
    r = check_case(_singular_values_case())
    assert (r.forward, r.vjp, r.jvp) == (True, False, True)


def test_a_numeric_forward_that_disagrees_with_the_symbolic_one_fails_forward(monkeypatch):
    # Only the float version of exp is wrong: the symbolic run (and so vjp and
    # jvp, checked on expressions) is right, the comparison at a point is not.
    monkeypatch.setattr(E.Exp, "numeric", staticmethod(lambda v: 1.01 * math.exp(v)))
    # (float64: float32 arrays take MLX's float32 kernel, Exp.float32_kernel.)
    assert mx.exp(mx.array(0.0, mx.float64)).item() == pytest.approx(1.01)
    r = check_case(Case(E.Exp, mx.exp, V))
    assert (r.forward, r.vjp, r.jvp, r.ok) == (False, True, True, False)


def test_a_rule_that_raises_is_reported_with_its_message(monkeypatch):
    def derivative(self, x, out):
        raise RuntimeError("the rule broke here")

    monkeypatch.setattr(E.Exp, "derivative", derivative)
    r = check_case(Case(E.Exp, mx.exp, V))
    assert not r.ok
    assert r.detail == "RuntimeError: the rule broke here"
    assert "the rule broke here" in symbolic.format_table([r])


def test_compiled_is_checked_as_a_primitive_without_rules(monkeypatch):
    # MLX's Compiled throws for vjp, jvp and vmap: its cases check the fused
    # forward and that each transform raises MLX's RuntimeError.
    from mlxref.core.primitives.compiled import Compiled
    from mlxref.symbolic import elementwise as cases

    (case, *_) = [c for c in cases.CASES if c.primitive is Compiled]
    r = check_case(case)
    assert (r.forward, r.vjp, r.jvp, r.vmap, r.method) == (True, True, True, True, "no rule")
    # Another error, or a rule that runs, fails the check.
    def another_error(self, *args):
        raise RuntimeError("[Compiled] Another message.")

    def a_rule(self, inputs, axes):
        return [make_array(E.Sin(), [inputs[0]])], [axes[0]]

    monkeypatch.setattr(Compiled, "vjp", another_error)
    monkeypatch.setattr(Compiled, "vmap", a_rule)
    r = check_case(case)
    assert (r.forward, r.vjp, r.jvp, r.vmap) == (True, False, True, False)


def test_a_case_whose_program_does_not_use_its_primitive_says_so():
    r = check_case(Case(E.Exp, mx.sin, V))
    assert not r.ok
    assert "does not use the primitive" in r.detail


def test_cases_of_one_primitive_are_combined(monkeypatch):
    cases = [Case(E.Log, mx.log, V, "positive"), Case(E.Log, mx.log2, V, "positive")]
    monkeypatch.setattr(symbolic, "all_cases", lambda: cases)
    monkeypatch.setattr(symbolic, "all_primitives", lambda: [E.Log])
    (r,) = symbolic.check_all()
    assert r.primitive == "Log" and r.cases == 2 and r.ok


def test_one_failing_case_fails_its_primitive(monkeypatch):
    cases = [Case(E.Log, mx.log, V, "positive"), Case(E.Log, mx.exp, V)]
    monkeypatch.setattr(symbolic, "all_cases", lambda: cases)
    monkeypatch.setattr(symbolic, "all_primitives", lambda: [E.Log])
    (r,) = symbolic.check_all()
    assert not r.ok and "does not use the primitive" in r.detail


# --- (c) the command line -------------------------------------------------------------

FEW = [
    Case(E.Exp, mx.exp, V),
    Case(E.Sin, mx.sin, V),
    Case(E.Add, mx.add, ((2, 1), (3,))),
    Case(E.Floor, mx.floor, V, zero=True),
]


@pytest.fixture
def few_cases(monkeypatch):
    monkeypatch.setattr(symbolic, "all_cases", lambda: list(FEW))
    monkeypatch.setattr(symbolic, "all_primitives", lambda: [E.Add, E.Exp, E.Floor, E.Sin])


def _rows(out):
    lines = out.splitlines()
    header = lines[0].split()
    assert header[0] == "primitive"
    # the columns, in order (other columns, e.g. vmap, may sit between them)
    positions = [header.index(c) for c in ("primitive", "cases", "forward", "vjp", "jvp", "method")]
    assert positions == sorted(positions)
    rows = {}
    for line in lines[1:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = dict(zip(header, cells))
    return header, rows, lines


def test_check_rules_prints_the_table_and_exits_0(few_cases, capsys):
    assert cli.main(["check-rules"]) == 0
    out = capsys.readouterr().out
    header, rows, lines = _rows(out)
    assert list(rows) == ["Add", "Exp", "Floor", "Sin"]
    for name, row in rows.items():
        assert row["cases"] == "1"
        assert row["forward"] == row["vjp"] == row["jvp"] == "ok", row
    assert rows["Exp"]["method"] == "simplify"
    assert re.search(r"^Floor\s.*zero rule$", out, re.M)
    assert lines[-1] == "all 4 primitives pass"


def test_check_rules_with_a_broken_rule_exits_1_and_names_it(few_cases, monkeypatch, capsys):
    monkeypatch.setattr(E.Exp, "derivative", lambda self, x, out: x)
    assert cli.main(["check-rules"]) == 1
    out = capsys.readouterr().out
    _, rows, lines = _rows(out)
    assert rows["Exp"]["vjp"] == "FAIL" and rows["Exp"]["jvp"] == "FAIL"
    assert rows["Exp"]["forward"] == "ok"
    assert rows["Sin"]["vjp"] == "ok"
    assert lines[-1] == "1 of 4 primitives FAILED: Exp"


def test_check_rules_names_every_failure_and_its_message(few_cases, monkeypatch, capsys):
    def boom(self, x, out):
        raise RuntimeError("boom")

    monkeypatch.setattr(E.Exp, "derivative", boom)
    monkeypatch.setattr(E.Sin, "derivative", lambda self, x, out: mx.sin(x))
    assert cli.main(["check-rules", "--seed", "3"]) == 1
    out = capsys.readouterr().out
    assert "RuntimeError: boom" in out
    assert out.splitlines()[-1] == "2 of 4 primitives FAILED: Exp, Sin"


def test_check_rules_reports_a_primitive_without_a_case(monkeypatch, capsys):
    monkeypatch.setattr(symbolic, "all_cases", lambda: [FEW[0]])
    monkeypatch.setattr(symbolic, "all_primitives", lambda: [E.Exp, E.Sin])
    assert cli.main(["check-rules"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^Sin\s.*no symbolic check", out, re.M)
    assert out.splitlines()[-1] == "1 of 2 primitives FAILED: Sin"


def test_check_rules_rejects_a_bad_seed(capsys):
    assert cli.main(["check-rules", "--seed", "x"]) == 2
    assert "invalid int value" in capsys.readouterr().err


# --- the guarantee: check-rules is green ------------------------------------------------


SHARDS = 6  # check_all is a minute of CPU: in shards, pytest-xdist spreads it over the cores


@pytest.mark.parametrize("shard", range(SHARDS))
def test_check_all_passes_for_every_primitive(shard):
    primitives = symbolic.all_primitives()[shard::SHARDS]
    results = symbolic.check_all(primitives=primitives)
    assert [r.primitive for r in results] == [p.__name__ for p in primitives]
    failed = [r for r in results if not r.ok]  # a primitive without a case fails too
    assert failed == [], symbolic.format_table(failed)


def test_the_load_case_reads_one_file_whatever_the_process():
    # the manual draws this case: a path with a random folder in it made every build differ
    import subprocess
    import sys

    from mlxref.symbolic import quantized

    here = quantized._loaded()
    there = subprocess.run(
        [sys.executable, "-c", "from mlxref.symbolic import quantized; "
                               "print(quantized._loaded().primitive().params()['file'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert here.primitive().params()["file"] == there
    assert here.tolist() == [0.5, -2.0, 3.0]


def test_check_rules_name_checks_one_primitive_and_says_which_rule_failed_on_which_case(
        few_cases, monkeypatch, capsys):
    # A wrong derivative: d sin(x)/dx written as sin(x). The failure names the rule
    # (vjp, jvp), the case, the element, and both values.
    monkeypatch.setattr(E.Sin, "derivative", lambda self, x, out: mx.sin(x))
    assert cli.main(["check-rules", "Sin"]) == 1
    out = capsys.readouterr().out
    _, rows, lines = _rows(out)
    assert list(rows) == ["Sin"]  # that primitive only
    assert rows["Sin"]["vjp"] == rows["Sin"]["jvp"] == "FAIL" and rows["Sin"]["forward"] == "ok"
    (case,) = [x for x in lines if x.startswith("  case 1 (sin on (3,) (real)): ")]
    assert case == ("  case 1 (sin on (3,) (real)): "
                    "vjp: input 0 element 0: expected ua0*cos(a0), received ua0*sin(a0); "
                    "jvp: element 0: expected ta0*cos(a0), received ta0*sin(a0)")
    assert lines[-1] == "1 of 1 primitives FAILED: Sin"


def test_check_rules_name_reports_a_broken_vmap_rule_with_both_values(few_cases, monkeypatch,
                                                                      capsys):
    def vmap(self, inputs, axes):
        return [make_array(E.Sin(), [inputs[0]])], [axes[0]]

    monkeypatch.setattr(E.Exp, "vmap", vmap)
    assert cli.main(["check-rules", "exp"]) == 1  # the name's case does not matter
    out = capsys.readouterr().out
    assert "  case 1 (exp on (3,) (real)): vmap: in_axes (0,): example 0 element 0: " \
           "expected exp(v0a0), received sin(v0a0)" in out


def test_check_rules_unknown_name_is_one_line_and_exit_2(capsys):
    assert cli.main(["check-rules", "Sine"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == ("mlxref: error: check-rules: no primitive named 'Sine' "
                                    "(did you mean Sin, Sinh, Sign?); `mlxref check-rules` lists them all")
