"""Workload 1: the gradient through a chain of N scalar ops.

The chain repeats one step of four elementwise primitives on a 0-d float array,

    x = x + sin(x) * SCALE + SHIFT        # Sin, Multiply, Add, Add

so N ops are N / 4 steps and the graph is N nodes deep (every node is on the
path from the input to the output; ``x`` fans out twice per step, so the
backward pass also accumulates cotangents). The step is chosen so the
gradient neither vanishes nor explodes: its derivative ``1 + SCALE * cos(x)``
averages out to about 1 while ``x`` drifts upwards by about SHIFT per step.

Measured per N: the lazy forward alone (build and ``mx.eval``), and
``mx.value_and_grad`` of the chain with ``mx.eval`` of value and gradient.
The reference is the same recurrence on Python floats with the derivative
written by hand (the floor for pure Python, also timed for scale).
"""

import math

import mlxref.core as mx

from . import harness

OPS_PER_STEP = 4
SCALE = 0.01
SHIFT = 0.05
X0 = 0.3

SIZES = (25_000, 50_000, 100_000)
QUICK_SIZES = (10_000, 20_000)
REPEATS = 5
QUICK_REPEATS = 1


def _steps(n_ops):
    if n_ops <= 0 or n_ops % OPS_PER_STEP:
        raise ValueError(f"the chain length must be a positive multiple of {OPS_PER_STEP}")
    return n_ops // OPS_PER_STEP


def chain(x, n_ops):
    """The chain on an mlxref array: N lazy nodes, nothing evaluated."""
    for _ in range(_steps(n_ops)):
        x = x + mx.sin(x) * SCALE + SHIFT
    return x


def mlxref_forward(n_ops, x0=X0):
    """Build the chain and evaluate it: the value, a float."""
    y = chain(mx.array(x0), n_ops)
    mx.eval(y)
    return y.item()


_value_and_grad = mx.value_and_grad(chain)


def mlxref_value_and_grad(n_ops, x0=X0):
    """``mx.value_and_grad`` of the chain, evaluated: ``(value, gradient)`` floats."""
    value, grad = _value_and_grad(mx.array(x0), n_ops)
    mx.eval(value, grad)
    return value.item(), grad.item()


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


def check(n_ops):
    """Run mlxref and the reference once; raise ``harness.Mismatch`` if they differ."""
    got = mlxref_value_and_grad(n_ops)
    want = reference_value_and_grad(n_ops)
    harness.check_close(f"deep chain N={n_ops} value", got[0], want[0])
    harness.check_close(f"deep chain N={n_ops} gradient", got[1], want[1])
    return got, want


def run(quick=False, repeats=None):
    """Time every size; returns a list of result dicts (one per N).

    Per N and repeat: the forward alone, value_and_grad, and the float
    reference, each checked. Medians are over the repeats; ``*_cpu_s`` is CPU
    time and ``*_gc_s`` the part of the wall time spent in the cyclic GC.
    """
    sizes = QUICK_SIZES if quick else SIZES
    repeats = repeats or (QUICK_REPEATS if quick else REPEATS)
    results = []
    for n in sizes:
        row = {"n_ops": n, "steps": _steps(n), "repeats": repeats}
        try:
            fwd, vag, ref = [], [], []
            for r in range(repeats):
                harness.progress(f"deep chain N={n}: repeat {r + 1}/{repeats}")
                t, _ = harness.timed(mlxref_forward, n)
                fwd.append(t)
                t, got = harness.timed(mlxref_value_and_grad, n)
                vag.append(t)
                t, want = harness.timed(reference_value_and_grad, n)
                ref.append(t)
                harness.check_close(f"deep chain N={n} value", got[0], want[0])
                harness.check_close(f"deep chain N={n} gradient", got[1], want[1])
            med = harness.median
            row.update(
                value=got[0],
                gradient=got[1],
                reference_gradient=want[1],
                forward_s=med([t.wall for t in fwd]),
                forward_cpu_s=med([t.cpu for t in fwd]),
                value_and_grad_s=med([t.wall for t in vag]),
                value_and_grad_cpu_s=med([t.cpu for t in vag]),
                value_and_grad_gc_s=med([t.gc for t in vag]),
                reference_s=med([t.wall for t in ref]),
                samples={
                    "forward_s": [t.wall for t in fwd],
                    "value_and_grad_s": [t.wall for t in vag],
                    "value_and_grad_cpu_s": [t.cpu for t in vag],
                    "value_and_grad_gc_s": [t.gc for t in vag],
                    "reference_s": [t.wall for t in ref],
                },
            )
            harness.progress(
                f"deep chain N={n}: value_and_grad {harness.fmt_time(row['value_and_grad_s'])}"
            )
        except harness.Mismatch:
            raise
        except Exception as exc:  # noqa: BLE001 - reported in the table, not hidden
            row["error"] = f"{type(exc).__name__}: {exc}"
            harness.progress(f"deep chain N={n}: {row['error']}")
        results.append(row)
    by_n = {r["n_ops"]: r for r in results}
    for r in results:
        half = by_n.get(r["n_ops"] // 2)
        if half and "error" not in r and "error" not in half:
            r["ratio_vs_half"] = r["value_and_grad_s"] / half["value_and_grad_s"]
            r["cpu_ratio_vs_half"] = r["value_and_grad_cpu_s"] / half["value_and_grad_cpu_s"]
            r["non_gc_ratio_vs_half"] = _non_gc(r) / _non_gc(half)
    return results


def _non_gc(row):
    """Median over repeats of (wall time - time in the cyclic GC) of value_and_grad."""
    samples = row["samples"]
    return harness.median(
        [w - g for w, g in zip(samples["value_and_grad_s"], samples["value_and_grad_gc_s"])]
    )


TARGET_DOUBLING = 2.2


def table(results):
    headers = [
        "N ops",
        "forward (build+eval)",
        "value_and_grad + eval",
        "per op",
        "of which GC",
        "t(N)/t(N/2)",
        f"≤ {TARGET_DOUBLING}x?",
        "CPU time",
        "CPU t(N)/t(N/2)",
        "t(N)/t(N/2) without GC",
        "float reference",
        "gradient",
    ]
    rows = []
    for r in results:
        if "error" in r:
            rows.append([f"{r['n_ops']:,}", "-", f"**{r['error']}**"] + ["-"] * (len(headers) - 3))
            continue
        ratio = r.get("ratio_vs_half")
        rows.append(
            [
                f"{r['n_ops']:,}",
                harness.fmt_time(r["forward_s"]),
                harness.fmt_time(r["value_and_grad_s"]),
                harness.fmt_time(r["value_and_grad_s"] / r["n_ops"]),
                harness.fmt_time(r["value_and_grad_gc_s"]),
                harness.fmt_ratio(ratio),
                "-" if ratio is None else ("yes" if ratio <= TARGET_DOUBLING else "**no**"),
                harness.fmt_time(r["value_and_grad_cpu_s"]),
                harness.fmt_ratio(r.get("cpu_ratio_vs_half")),
                harness.fmt_ratio(r.get("non_gc_ratio_vs_half")),
                harness.fmt_time(r["reference_s"]),
                f"{r['gradient']:.12g}",
            ]
        )
    return harness.markdown_table(headers, rows)
