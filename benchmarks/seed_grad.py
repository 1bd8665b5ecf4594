"""Workload: the seed function's gradient, ``grad(sum(sin(x) * exp(x)))``, over n elements.

The input is ``n`` points evenly spaced in [-2, 2] (``metal.seed_input``).
Columns, from the same input, run interleaved in one process:

- ``mlxref``: ``mx.grad`` of ``mx.sum(mx.sin(x) * mx.exp(x))`` and ``mx.eval``;
- ``lists``: a hand-written forward (``sin``, ``exp``, product, sum) and
  backward (``cos(x) * exp(x) + sin(x) * exp(x)`` by the chain rule) over
  Python lists: the floor for pure Python;
- ``micrograd-style Value``: one ``scalar_graph.ClosureValue`` node per
  number, summed as a chain of additions, then ``backward()``; it is skipped
  above ``VALUE_MAX_N`` elements when that limit is set;
- ``MLX (<device>)``: real MLX (``mlxref.backends.metal``), when installed.

Every column's gradient must equal the lists reference (to 1e-9, MLX's
float32 to 1e-5) before any time is reported.
"""

import math
import sys

import mlxref.core as mx
from mlxref.backends import metal

from . import harness
from .scalar_graph import ClosureValue

SIZES = (10, 100, 1000, 10_000)
QUICK_SIZES = (10, 100, 1000)
REPEATS = 7
QUICK_REPEATS = 3
VALUE_MAX_N = None  # None: run the Value column at every size
MLX_TOLERANCE = 1e-5


# --- mlxref ---------------------------------------------------------------------------


def _seed_loss(x):
    return mx.sum(mx.sin(x) * mx.exp(x))


_mlxref_grad = mx.grad(_seed_loss)


def mlxref_prepare(x):
    a = mx.array(x)
    mx.eval(a)
    return (a,)


def mlxref_step(x):
    g = _mlxref_grad(x)
    mx.eval(g)
    return g


def mlxref_result(g):
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
        harness.Column("mlxref", mlxref_prepare, mlxref_step, mlxref_result),
        harness.Column("lists", lambda x: (x,), lists_step),
        harness.Column("micrograd-style Value", value_prepare, value_step, value_result,
                       max_size=VALUE_MAX_N),
    ]
    if metal.available():
        out.append(
            harness.Column(metal.label(), metal.seed_grad_prepare, metal.seed_grad_run,
                           lambda g: g.tolist(), tol=MLX_TOLERANCE)
        )
    return out


def check(n):
    """One gradient per column at size ``n``; raise ``harness.Mismatch`` unless all agree."""
    return harness.check_columns(
        f"seed gradient n={n}", metal.seed_input(n), lists_step, implementations()
    )


def run(quick=False, repeats=None, sizes=None):
    """Median time per column and size, interleaved over the repeats (``harness.run_workload``)."""
    return harness.run_workload(
        "seed gradient", sys.modules[__name__], metal.seed_input, lists_step,
        quick, repeats, sizes,
    )


def table(res):
    return harness.columns_table(res)
