"""Workload: the seed function's gradient, ``grad(sum(sin(x) * exp(x)))``, over n elements.

The input is ``n`` points evenly spaced in [-2, 2] (``make_input``). The
program, ``loss(mx, x)`` and its ``grad_step(mx)``, is written once and run on
two array modules. Columns, from the same input, run interleaved in one process:

- ``mlxref``: ``grad_step(mlxref.core)``: ``mx.grad`` of the loss and ``mx.eval``;
- ``mlxref compile``: the same under ``mx.compile`` (traced in the warm-up),
  which must equal the ``mlxref`` column bit for bit (``check_exact``);
- ``lists``: a hand-written forward (``sin``, ``exp``, product, sum) and
  backward (``cos(x) * exp(x) + sin(x) * exp(x)`` by the chain rule) over
  Python lists: the floor for pure Python;
- ``micrograd-style Value``: one ``scalar_graph.ClosureValue`` node per
  number, summed as a chain of additions, then ``backward()``; it is skipped
  above ``VALUE_MAX_N`` elements when that limit is set;
- ``MLX (<device>)``: ``grad_step(mlx.core)``, MLX's own ``grad`` and ``eval``
  (``mlxref.backends.metal``), when installed.

Every column's gradient must equal the lists reference (to 1e-9; mlxref's
and MLX's, computed in float32, to 1e-5) before any time is reported.
"""

import math
import sys
from functools import partial

import mlxref.core as mx
from mlxref.backends import metal

from . import harness
from .scalar_graph import ClosureValue

SIZES = (10, 100, 1000, 10_000)
QUICK_SIZES = (10, 100, 1000)
REPEATS = 7
QUICK_REPEATS = 3
VALUE_MAX_N = None  # None: run the Value column at every size
FLOAT32_TOLERANCE = 1e-5
COMPILED = "mlxref compile"


def make_input(n):
    """The input vector: ``n`` points evenly spaced in [-2, 2] (Python floats)."""
    if n == 1:
        return [0.5]
    return [-2.0 + 4.0 * i / (n - 1) for i in range(n)]


# --- the program, on mlxref and on MLX ------------------------------------------------


def loss(mx, x):
    """The seed function on the array module ``mx`` (``mlxref.core`` or ``mlx.core``)."""
    return mx.sum(mx.sin(x) * mx.exp(x))


def grad_step(mx, compiled=False):
    """The timed step on ``mx``: its ``grad`` of ``loss``, evaluated; under
    ``mx.compile`` when ``compiled``."""
    fn = mx.grad(partial(loss, mx))
    return harness.evaluated(mx, mx.compile(fn) if compiled else fn)


def mlxref_prepare(x):
    a = mx.array(x)
    mx.eval(a)
    return (a,)


def array_result(g):
    return g.tolist()


# --- hand-written lists ------------------------------------------------------------


def lists_step(x):
    """Forward ``sum(sin(x) * exp(x))`` and its gradient, by hand: the gradient list."""
    sin, cos, exp = math.sin, math.cos, math.exp
    s = [sin(v) for v in x]
    e = [exp(v) for v in x]
    _ = sum([a * b for a, b in zip(s, e)])  # the forward value (not returned)
    # Backward: d/ds (s * e) = e, d/de = s; sin' = cos, exp' = exp.
    return [cos(v) * b + a * b for v, a, b in zip(x, s, e)]


# --- micrograd-style Value ---------------------------------------------------------


def value_prepare(x):
    return ([ClosureValue(v) for v in x],)


def value_step(xs):
    total = None
    for v in xs:
        term = v.sin() * v.exp()
        total = term if total is None else total + term
    total.backward()
    return xs


def value_result(xs):
    return [v.grad for v in xs]


def implementations():
    """The report's columns (``harness.Column``), each checked against the lists reference."""
    out = [
        harness.Column("mlxref", mlxref_prepare, grad_step(mx), array_result,
                       tol=FLOAT32_TOLERANCE),
        harness.Column(COMPILED, mlxref_prepare, grad_step(mx, compiled=True), array_result,
                       tol=FLOAT32_TOLERANCE),
        harness.Column("lists", lambda x: (x,), lists_step),
        harness.Column("micrograd-style Value", value_prepare, value_step, value_result,
                       max_size=VALUE_MAX_N),
    ]
    if metal.available():
        out.append(
            harness.Column(metal.label(), lambda x: (metal.array(x),), grad_step(metal.core()),
                           array_result, tol=FLOAT32_TOLERANCE)
        )
    return out


def check_exact(n):
    """The compiled mlxref gradient at size ``n``, which must equal the
    uncompiled one bit for bit; ``harness.Mismatch`` otherwise."""
    (a,) = mlxref_prepare(make_input(n))
    return harness.check_exact(f"seed gradient n={n}", grad_step(mx, True)(a).tolist(),
                               grad_step(mx)(a).tolist())


def check(n):
    """One gradient per column at size ``n``; raise ``harness.Mismatch`` unless
    all agree (and the compiled mlxref column is the uncompiled one exactly)."""
    check_exact(n)
    return harness.check_columns(
        f"seed gradient n={n}", make_input(n), lists_step, implementations()
    )


def run(quick=False, repeats=None, sizes=None):
    """Median time per column and size, interleaved over the repeats
    (``harness.run_workload``), after ``check_exact`` at every size."""
    for n in sizes or (QUICK_SIZES if quick else SIZES):
        harness.progress(f"seed gradient n={n}: compiled equals uncompiled?")
        check_exact(n)
    return harness.run_workload(
        "seed gradient", sys.modules[__name__], make_input, lists_step,
        quick, repeats, sizes,
    )


def table(res):
    return harness.columns_table(res)
