"""Workload "gelu": ``value_and_grad`` of ``sum(gelu(x))``, plain and under ``mx.compile`` (issue 18).

``gelu(x) = x * (1 + erf(x / sqrt(2))) / 2`` is a chain of elementwise ops,
and so is its gradient: what ``mx.compile`` fuses into ``Compiled`` nodes
(mlxref/core/primitives/compiled.py). The input is ``n`` float32 values
evenly spaced in [-4, 4] (``make_input``). The program, ``loss(mx, x)``, is
written once and run on two array modules; the columns, from the same input,
run interleaved in one process:

- ``mlxref``: ``mx.value_and_grad`` of the loss and ``mx.eval``, unfused;
- ``mlxref compile``: ``mx.compile`` of the same ``value_and_grad``, traced
  and fused during the warm-up, then served from compile's cache;
- ``MLX compile (<device>)``: ``mx.compile(mx.value_and_grad(...))`` on real
  MLX (``mlxref.backends.metal``), when installed.

Before any time is reported, every column's value and gradient must equal
the hand-written double-precision reference (``reference``) to
``FLOAT32_TOLERANCE``, and the compiled mlxref column must equal the
uncompiled one bit for bit (``check_exact``): fusion may change the speed,
never a result. ``speedup`` is the uncompiled time over the compiled time;
issue 18's target is ``TARGET``.
"""

import math
import struct
import sys
from functools import partial

import mlxref.core as mx
from mlxref.backends import metal

from . import harness

SIZES = (100_000,)
QUICK_SIZES = (10_000,)
REPEATS = 5
QUICK_REPEATS = 2
FLOAT32_TOLERANCE = 1e-5
TARGET = 2.0  # issue 18: compile makes mlxref at least this much faster here
COMPILED = "mlxref compile"


def make_input(n):
    """``n`` float32 values evenly spaced in [-4, 4], as Python floats."""
    if n == 1:
        return [0.5]
    values = [-4.0 + 8.0 * i / (n - 1) for i in range(n)]
    return list(struct.unpack(f"{n}f", struct.pack(f"{n}f", *values)))


# --- the program, on mlxref and on MLX ------------------------------------------------


def gelu(mx, x):
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


def loss(mx, x):
    return mx.sum(gelu(mx, x))


def step(mx, compiled):
    """The timed step on the array module ``mx``: ``value_and_grad`` of the
    loss (under ``mx.compile`` when ``compiled``), evaluated."""
    fn = mx.value_and_grad(partial(loss, mx))
    return harness.evaluated(mx, mx.compile(fn) if compiled else fn)


def mlxref_prepare(x):
    a = mx.array(x)
    mx.eval(a)
    return (a,)


def result(out):
    """``[value, gradient list]``."""
    value, grad = out
    return [value.item(), grad.tolist()]


# --- the hand-written reference, in double precision ----------------------------------


def reference(x):
    """``[sum(gelu(x)), gelu'(x)]`` by hand: gelu'(x) = Phi(x) + x * phi(x)."""
    phi = [(1 + math.erf(v / math.sqrt(2))) / 2 for v in x]
    density = [math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in x]
    return [sum(v * p for v, p in zip(x, phi)), [p + v * d for v, p, d in zip(x, phi, density)]]


def implementations():
    """The report's columns (``harness.Column``), each checked against ``reference``."""
    out = [
        harness.Column("mlxref", mlxref_prepare, step(mx, False), result, tol=FLOAT32_TOLERANCE),
        harness.Column(COMPILED, mlxref_prepare, step(mx, True), result, tol=FLOAT32_TOLERANCE),
    ]
    if metal.available():
        out.append(harness.Column(f"MLX compile ({metal.device()})", lambda x: (metal.array(x),),
                                  step(metal.core(), True), result, tol=FLOAT32_TOLERANCE))
    return out


def check_exact(n):
    """The compiled mlxref column's value and gradient, which must equal the
    uncompiled column's bit for bit; ``harness.Mismatch`` otherwise."""
    (a,) = mlxref_prepare(make_input(n))
    return harness.check_exact(f"gelu n={n}", result(step(mx, True)(a)), result(step(mx, False)(a)))


def check(n):
    """One result per column at size ``n``: all equal the reference, and the compiled
    mlxref column the uncompiled one exactly; ``harness.Mismatch`` otherwise."""
    check_exact(n)
    return harness.check_columns(f"gelu n={n}", make_input(n), reference, implementations())


def run(quick=False, repeats=None, sizes=None):
    """Median time per column and size, interleaved (``harness.run_workload``), after
    ``check_exact`` at every size; ``speedup`` per size: uncompiled over compiled time."""
    chosen = sizes or (QUICK_SIZES if quick else SIZES)
    for n in chosen:
        harness.progress(f"gelu n={n:,}: compiled equals uncompiled?")
        check_exact(n)
    res = harness.run_workload("gelu", sys.modules[__name__], make_input, reference,
                               quick, repeats, chosen)
    res["speedup"] = {str(row["n"]): row["median_s"]["mlxref"] / row["median_s"][COMPILED]
                      for row in res["rows"]
                      if "mlxref" in row["median_s"] and COMPILED in row["median_s"]}
    res["speedup_cpu"] = {str(row["n"]): row["median_cpu_s"]["mlxref"] / row["median_cpu_s"][COMPILED]
                          for row in res["rows"]
                          if "mlxref" in row["median_cpu_s"] and COMPILED in row["median_cpu_s"]}
    res["target"] = TARGET
    return res


def table(res):
    lines = [harness.columns_table(res)]
    for n, ratio in res["speedup"].items():
        met = "met" if ratio >= res["target"] else "not met"
        cpu = res["speedup_cpu"].get(n)
        lines += ["", f"n = {harness.fmt_size(int(n))}: compile makes mlxref "
                      f"{ratio:.2f}x faster in wall time ({cpu:.2f}x in CPU time); "
                      f"target {res['target']:g}x: {met}."]
    return "\n".join(lines)
