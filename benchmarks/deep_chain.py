"""Workload 1: the gradient through a chain of N scalar ops.

The chain repeats one step of four elementwise primitives on a 0-d float array,

    x = x + sin(x) * SCALE + SHIFT        # Sin, Multiply, Add, Add

so N ops are N / 4 steps and the graph is N nodes deep (every node is on the
path from the input to the output; ``x`` fans out twice per step, so the
backward pass also accumulates cotangents). The step is chosen so the
gradient neither vanishes nor explodes: its derivative ``1 + SCALE * cos(x)``
averages out to about 1 while ``x`` drifts upwards by about SHIFT per step.

The program, ``chain(mx, x, n_ops)`` and its ``value_and_grad_step(mx)``, is
written once and run on two array modules. Columns per N, run interleaved in
one process (``harness.run_workload``):

- ``mlxref``: ``value_and_grad_step(mlxref.core)``: ``mx.value_and_grad`` of the
  chain, with ``mx.eval`` of value and gradient (the graph is built inside
  the clock);
- ``mlxref compile``: ``mx.compile`` of the same ``value_and_grad`` (traced,
  once per N, in the warm-up, then served from compile's cache), which must
  equal the ``mlxref`` column bit for bit (``check_exact``);
- ``mlxref forward only``: the lazy forward alone (build and ``mx.eval``);
- ``hand-written floats``: the same recurrence on Python floats with the
  derivative written by hand: the floor for pure Python, and the reference
  every other column must equal (to 1e-9; the float32 columns to
  ``FLOAT32_TOLERANCE``);
- ``micrograd-style Value``: one ``scalar_graph.ClosureValue`` per number;
- ``MLX (<device>)``: ``value_and_grad_step(mlx.core)``, MLX's own transforms
  (``mlxref.backends.metal``), when installed; float32, so it must agree to
  ``FLOAT32_TOLERANCE``.
"""

import math
import sys
from functools import partial

import mlxref.core as mx
from mlxref.backends import metal

from . import harness
from .scalar_graph import ClosureValue

OPS_PER_STEP = 4
SCALE = 0.01
SHIFT = 0.05
X0 = 0.3

SIZES = (10_000, 20_000, 40_000, 100_000)
QUICK_SIZES = (10_000, 20_000)
# mlxref and real MLX compute in float32. Over 10,000 steps x grows to ~490, where
# float32 holds it only to ~3e-5, so every cos(x) in the gradient's product
# of 1 + 0.01 cos(x) is slightly off; measured against the double-precision
# reference: value to 1e-4, gradient to 1e-2 (at N = 40k) relative error.
FLOAT32_TOLERANCE = 2e-2
COMPILED = "mlxref compile"
REPEATS = 5
QUICK_REPEATS = 1


def _steps(n_ops):
    if n_ops <= 0 or n_ops % OPS_PER_STEP:
        raise ValueError(f"the chain length must be a positive multiple of {OPS_PER_STEP}")
    return n_ops // OPS_PER_STEP


def chain(mx, x, n_ops):
    """The chain on the array module ``mx`` (``mlxref.core`` or ``mlx.core``): N lazy nodes."""
    for _ in range(_steps(n_ops)):
        x = x + mx.sin(x) * SCALE + SHIFT
    return x


def value_and_grad_step(mx, compiled=False):
    """The timed step on ``mx``: its ``value_and_grad`` of the chain (under
    ``mx.compile`` when ``compiled``), evaluated.

    ``step(n_ops, x0)`` starts from a new 0-d array, so the graph is built
    inside the clock (compiled: traced once per N, then replayed), and
    returns ``(value, gradient)`` floats.
    """
    value_and_grad = mx.value_and_grad(partial(chain, mx))
    if compiled:
        value_and_grad = mx.compile(value_and_grad)

    def step(n_ops, x0=X0):
        value, grad = value_and_grad(mx.array(x0), n_ops)
        mx.eval(value, grad)
        return value.item(), grad.item()

    return step


mlxref_value_and_grad = value_and_grad_step(mx)
mlxref_compiled = value_and_grad_step(mx, compiled=True)  # one cache for every use


def mlxref_forward(n_ops, x0=X0):
    """Build the chain and evaluate it: the value, a float."""
    y = chain(mx, mx.array(x0), n_ops)
    mx.eval(y)
    return y.item()


def reference_value_and_grad(n_ops, x0=X0):
    """The same chain on Python floats, differentiated by hand.

    The backward pass combines terms in the order mlxref's vjp rules do
    (the Add passes the cotangent through, Multiply scales it by SCALE, Sin by
    cos(x), and the two paths into ``x`` are summed), so the results agree to
    the last bit or nearly so.
    """
    xs = []
    x = x0
    sin, cos = math.sin, math.cos
    for _ in range(_steps(n_ops)):
        xs.append(x)
        x = x + sin(x) * SCALE + SHIFT
    g = 1.0
    for xi in reversed(xs):
        g = g + (g * SCALE) * cos(xi)
    return x, g


def value_chain(n_ops, x0=X0):
    """The chain on micrograd-style ``ClosureValue`` nodes, then ``backward()``."""
    x = start = ClosureValue(x0)
    for _ in range(_steps(n_ops)):
        x = x + x.sin() * SCALE + SHIFT
    x.backward()
    return x.data, start.grad


def check_exact(n_ops):
    """The compiled mlxref value and gradient, which must equal the uncompiled
    ones bit for bit; ``harness.Mismatch`` otherwise."""
    return harness.check_exact(f"deep chain N={n_ops}", mlxref_compiled(n_ops),
                               mlxref_value_and_grad(n_ops))


def check(n_ops):
    """Run mlxref (and compiled, which must equal it exactly) and the reference
    once; raise ``harness.Mismatch`` if they differ."""
    check_exact(n_ops)
    got = mlxref_value_and_grad(n_ops)
    want = reference_value_and_grad(n_ops)
    harness.check_close(f"deep chain N={n_ops} value", got[0], want[0], FLOAT32_TOLERANCE)
    harness.check_close(f"deep chain N={n_ops} gradient", got[1], want[1], FLOAT32_TOLERANCE)
    return got, want


def _chain_length(n_ops):
    _steps(n_ops)  # rejects lengths that are not whole steps
    return n_ops


def _one(n):
    return (n,)


def implementations():
    """The report's columns (``harness.Column``); each takes N and returns (value, gradient)."""
    out = [
        harness.Column("mlxref", _one, mlxref_value_and_grad, tol=FLOAT32_TOLERANCE),
        harness.Column(COMPILED, _one, mlxref_compiled, tol=FLOAT32_TOLERANCE),
        harness.Column("mlxref forward only", _one, mlxref_forward, expect=lambda want: want[0],
                       tol=FLOAT32_TOLERANCE),
        harness.Column("hand-written floats", _one, reference_value_and_grad),
        harness.Column("micrograd-style Value", _one, value_chain),
    ]
    if metal.available():
        out.append(harness.Column(metal.label(), _one, value_and_grad_step(metal.core()),
                                  tol=FLOAT32_TOLERANCE))
    return out


def run(quick=False, repeats=None, sizes=None):
    """Median time per column and N, interleaved over the repeats (``harness.run_workload``).

    Adds, per N that has a half-size row, mlxref's doubling ratio
    ``t(N) / t(N/2)`` in wall and CPU time (``doubling``). ``check_exact``
    first, at every N.
    """
    for n in sizes or (QUICK_SIZES if quick else SIZES):
        harness.progress(f"deep chain N={n}: compiled equals uncompiled?")
        check_exact(n)
    res = harness.run_workload(
        "deep chain", sys.modules[__name__], _chain_length, reference_value_and_grad,
        quick, repeats, sizes,
    )
    by_n = {row["n"]: row for row in res["rows"]}
    res["doubling"] = {}
    for row in res["rows"]:
        half = by_n.get(row["n"] // 2) if row["n"] % 2 == 0 else None
        if half and "mlxref" in row["median_s"] and "mlxref" in half["median_s"]:
            res["doubling"][row["n"]] = {
                "wall": row["median_s"]["mlxref"] / half["median_s"]["mlxref"],
                "cpu": row["median_cpu_s"]["mlxref"] / half["median_cpu_s"]["mlxref"],
                "gc_s": row["median_gc_s"]["mlxref"],
            }
    res["gradient"] = {row["n"]: reference_value_and_grad(row["n"])[1] for row in res["rows"]}
    return res


TARGET_DOUBLING = 2.2


def table(res):
    out = [harness.columns_table(res, size_header="N ops")]
    if res["doubling"]:
        rows = [
            [
                f"{harness.fmt_size(n // 2)} → {harness.fmt_size(n)}",
                harness.fmt_ratio(d["wall"]),
                "yes" if d["wall"] <= TARGET_DOUBLING else "**no**",
                harness.fmt_ratio(d["cpu"]),
                harness.fmt_time(d["gc_s"]),
            ]
            for n, d in sorted(res["doubling"].items())
        ]
        out += [
            "",
            f"mlxref when N doubles (target: at most {TARGET_DOUBLING}x the time):",
            "",
            harness.markdown_table(
                ["N", "t(N) / t(N/2)", f"≤ {TARGET_DOUBLING}x?", "in CPU time", "GC time at N"], rows
            ),
        ]
    return "\n".join(out)
