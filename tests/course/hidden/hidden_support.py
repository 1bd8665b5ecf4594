"""Shared helpers of the hidden tests: the instructor's, never in a student copy.

The tests in this directory are marked with their task (``task2_3``) like
tests/course/test_tasks.py, and ``mlxref assignment grade`` runs them with the
visible ones; ``mlxref assignment make`` leaves this directory out and
``--check-leaks`` fails a copy that holds it. Where the visible tests check a
rule on the handful of inputs in their source, these draw the inputs
(hypothesis): shapes, axes, dtypes and values, so an answer tuned to the
visible examples fails. The draws are derandomized, so every submission is
graded on the same inputs, and no example database is written; a failing
draw is not shrunk.

Expected values are computed here from the inputs (the elements the arrays
actually hold, after rounding to their dtype), never by mlxref's own rules:
real MLX is not importable where grades run.
"""

import itertools
import math

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

import mlxref.core as mx
from course import programs
from mlxref.course.judge import run

# No shrinking: a failing draw is reported as drawn, so a wrong answer fails
# in about the time a right one passes (a grade has a time limit).
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=False,
                    phases=(Phase.explicit, Phase.generate))
FEW = settings(SETTINGS, max_examples=8)

FLOATS = (mx.float16, mx.bfloat16, mx.float32, mx.float64)
WIDE = (mx.float32, mx.float64)


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=3):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims,
                    max_size=max_dims).map(tuple)


def nested(flat, shape):
    """A flat list as nested lists of ``shape`` (a scalar for shape ())."""
    if not shape:
        return flat[0]
    step = math.prod(shape[1:])
    return [nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def flat(x):
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in flat(item)]
    return [x]


def draw_array(draw, shape, dtype=mx.float32, lo=-3.0, hi=3.0, integers=False):
    """An mlxref array of ``shape`` and ``dtype`` with drawn elements."""
    n = math.prod(shape)
    if integers:
        values = draw(st.lists(st.integers(int(lo), int(hi)), min_size=n, max_size=n))
    else:
        values = draw(st.lists(st.floats(lo, hi, allow_nan=False, allow_infinity=False),
                               min_size=n, max_size=n))
    return mx.array(nested(values, shape) if shape else values[0], dtype)


def elements(a):
    """The elements an array holds, as a flat list of Python numbers."""
    return flat(a.tolist())


def indices(shape):
    return list(itertools.product(*(range(n) for n in shape)))


def tolerance(dtype, tol=1e-9):
    return max(tol, 16 * mx.finfo(dtype).eps) if dtype.is_inexact else tol


def _close(x, y, tol):
    if isinstance(x, bool) or isinstance(y, bool):
        return bool(x) == bool(y)
    x, y = float(x), float(y)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= tol * (1 + abs(y))


def _show(values, limit=12):
    text = repr(values)
    return text if len(text) < 400 else text[:400] + " ..."


def expect(got, expected, what, shape=None, dtype=None, tol=1e-9):
    """``got`` is an mlxref array (of ``shape`` and ``dtype`` when given) holding
    the flat ``expected`` values; the message says which and what was received."""
    assert isinstance(got, mx.array), f"{what}: expected an mlxref array, received {got!r}"
    if shape is not None:
        assert got.shape == tuple(shape), (
            f"{what}: expected shape {tuple(shape)}, received {got.shape}"
        )
    if dtype is not None:
        assert got.dtype == dtype, f"{what}: expected dtype {dtype}, received {got.dtype}"
    values = elements(got)
    tol = tolerance(got.dtype, tol)
    wrong = [k for k, (g, e) in enumerate(zip(values, expected)) if not _close(g, e, tol)]
    assert len(values) == len(expected) and not wrong, (
        f"{what}: expected {_show(expected)}, received {_show(values)}"
        + (f" (first difference at flat index {wrong[0]})" if wrong else "")
    )


def call(f, *args, what, expected):
    """``run(f, *args)``, or a failure that says what was expected where it
    raised (an OverflowError from a formula that is not stable, say)."""
    try:
        return run(f, *args)
    except (ArithmeticError, ValueError) as e:
        raise AssertionError(
            f"{what}: expected {expected!r}, received {type(e).__name__}: {e}"
        ) from None


def expect_float(got, expected, what, tol=1e-12):
    assert isinstance(got, (int, float)), f"{what}: expected a float, received {got!r}"
    assert _close(got, expected, tol), f"{what}: expected {expected!r}, received {got!r}"


def derivatives_at(build, shapes, mode, domain="real"):
    """The derivatives of ``build`` on fixed inputs of ``shapes`` (values in
    [0.3, 2] for the domain "positive", of both signs otherwise), first order,
    by vjp (``mode`` "vjp") or jvp ("jvp"), computed by the graded code and
    judged against the reference's: the numeric counterpart of the SymPy check
    of the same case (``mlxref check-rules``), whose verdict would be computed
    next to the graded code."""
    args = []
    for i, shape in enumerate(shapes):
        n = math.prod(shape)
        values = [0.3 + (0.37 * k + 0.11 * i) % 1.7 for k in range(n)]
        if domain != "positive":
            values = [v if k % 2 else -v for k, v in enumerate(values)]
        args.append(nested(values, shape) if shape else values[0])
    run(programs.derivatives, build, args, order=1, modes="rev" if mode == "vjp" else "fwd",
        tol=1e-4)
