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
    """``(name, prepare(x) -> args, step, result(out), tolerance)`` for each column."""
    out = [
        ("mlxref", mlxref_prepare, mlxref_step, mlxref_result, harness.TOLERANCE),
        ("lists", lambda x: (x,), lists_step, lambda g: g, harness.TOLERANCE),
        ("micrograd-style Value", value_prepare, value_step, value_result, harness.TOLERANCE),
    ]
    if metal.available():
        out.append(
            (metal.label(), metal.seed_grad_prepare, metal.seed_grad_run,
             lambda g: g.tolist(), MLX_TOLERANCE)
        )
    return out


def check(n):
    """One gradient per column at size ``n``; raise ``harness.Mismatch`` unless all agree."""
    x = metal.seed_input(n)
    want = lists_step(x)
    results = {}
    for name, prepare, step, result, tol in implementations():
        got = result(step(*prepare(x)))
        harness.check_close(f"seed gradient n={n} ({name} vs lists)", got, want, tol)
        results[name] = got
    return results


def run(quick=False, repeats=None, sizes=None):
    """Median time per column and size, interleaved over the repeats (round 0 warms up)."""
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    repeats = repeats or (QUICK_REPEATS if quick else REPEATS)
    impls = implementations()
    names = [name for name, *_ in impls]
    rows, skipped, errors = [], {}, {}
    for n in sizes:
        x = metal.seed_input(n)
        want = lists_step(x)
        samples = {name: [] for name in names}
        for name, prepare, step, result, tol in impls:
            if name == "micrograd-style Value" and VALUE_MAX_N is not None and n > VALUE_MAX_N:
                skipped.setdefault(name, []).append(n)
        for r in range(repeats + 1):
            harness.progress(f"seed n={n}: round {r}/{repeats}" + (" (warm-up)" if r == 0 else ""))
            for name, prepare, step, result, tol in impls:
                if n in skipped.get(name, ()) or (name, n) in errors:
                    continue
                try:
                    args = prepare(x)
                    t, out = harness.timed(step, *args)
                    if r == 0:
                        harness.check_close(
                            f"seed gradient n={n} ({name} vs lists)", result(out), want, tol
                        )
                    else:
                        samples[name].append(t)
                except harness.Mismatch:
                    raise
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    errors[(name, n)] = f"{type(exc).__name__}: {exc}"
                    harness.progress(f"seed n={n} {name}: {errors[(name, n)]}")
                del args
        ran = [name for name in names if samples[name]]
        rows.append(
            {
                "n": n,
                "median_s": {k: harness.median([t.wall for t in samples[k]]) for k in ran},
                "median_cpu_s": {k: harness.median([t.cpu for t in samples[k]]) for k in ran},
                "samples_s": {k: [t.wall for t in samples[k]] for k in ran},
            }
        )
    for row in rows:
        m = row["median_s"]
        if "mlxref" in m:
            row["over_mlxref"] = {k: v / m["mlxref"] for k, v in m.items()}
    scaling = {}
    by_n = {row["n"]: row["median_s"] for row in rows}
    for name in names:
        scaling[name] = {
            f"{n}->{10 * n}": by_n[10 * n][name] / by_n[n][name]
            for n in sizes
            if 10 * n in by_n and name in by_n[n] and name in by_n[10 * n]
        }
    return {
        "sizes": list(sizes),
        "repeats": repeats,
        "columns": names,
        "mlx_device": metal.device() if metal.available() else None,
        "rows": rows,
        "scaling": scaling,
        "skipped": {k: v for k, v in skipped.items()},
        "errors": {f"{name} n={n}": e for (name, n), e in errors.items()},
    }


def table(res):
    names = res["columns"]
    headers = ["n"] + [f"{k}" for k in names] + [f"{k} / mlxref" for k in names if k != "mlxref"]
    rows = []
    for row in res["rows"]:
        m, ratio = row["median_s"], row.get("over_mlxref", {})
        n = row["n"]

        def cell(k):
            if f"{k} n={n}" in res["errors"]:
                return "**error**"
            if n in res["skipped"].get(k, ()):
                return "skipped"
            return harness.fmt_time(m.get(k))

        rows.append(
            [f"{n:,}"]
            + [cell(k) for k in names]
            + [harness.fmt_ratio(ratio.get(k)) for k in names if k != "mlxref"]
        )
    out = [harness.markdown_table(headers, rows)]
    steps = [f"{n}->{10 * n}" for n in res["sizes"] if 10 * n in res["sizes"]]
    if steps:
        srows = [
            [k] + [harness.fmt_ratio(res["scaling"].get(k, {}).get(s)) for s in steps]
            for k in names
        ]
        out += [
            "",
            "Scaling: time(10n) / time(n) per column (10x is linear; a fixed per-call "
            "cost shows as less than 10x).",
            "",
            harness.markdown_table(["column"] + [f"n {s.replace('->', ' → ')}" for s in steps], srows),
        ]
    for k, ns in res["skipped"].items():
        out += ["", f"{k} skipped at n = {', '.join(f'{n:,}' for n in ns)} (too slow)."]
    for k, e in res["errors"].items():
        out += ["", f"**{k}: {e}**"]
    return "\n".join(out)
