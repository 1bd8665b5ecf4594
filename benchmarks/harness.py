"""Timing, checking and reporting helpers shared by the workloads."""

import gc
import math
import statistics
import struct
import sys
import time


class Mismatch(AssertionError):
    """An implementation disagrees with its reference: its timing means nothing."""


def progress(message):
    """A progress line on stderr (stdout is reserved for the report)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


class _GcClock:
    """Wall time spent inside the cyclic garbage collector (via ``gc.callbacks``)."""

    def __init__(self):
        self.total = 0.0
        self.collections = 0
        self._start = None

    def __call__(self, phase, info):
        if phase == "start":
            self._start = time.perf_counter()
        elif self._start is not None:
            self.total += time.perf_counter() - self._start
            self.collections += 1
            self._start = None


class Timing:
    """One measurement: wall and CPU seconds, and the collector's share of the wall time."""

    __slots__ = ("wall", "cpu", "gc", "gc_collections")

    def __init__(self, wall, cpu, gc_time, gc_collections):
        self.wall, self.cpu, self.gc, self.gc_collections = wall, cpu, gc_time, gc_collections


def timed(fn, *args):
    """``(Timing, fn(*args))``: ``time.perf_counter`` (wall) and ``time.process_time`` (CPU).

    A full collection runs first (untimed), so garbage left by the previous
    measurement is not charged to this one. The collector stays enabled while
    ``fn`` runs (its cost is part of what a user pays) but its time is
    recorded separately. CPU time is less disturbed than wall time by other
    processes competing for the machine.
    """
    gc.collect()
    clock = _GcClock()
    gc.callbacks.append(clock)
    try:
        cpu0 = time.process_time()
        start = time.perf_counter()
        result = fn(*args)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu0
    finally:
        gc.callbacks.remove(clock)
    return Timing(wall, cpu, clock.total, clock.collections), result


def evaluated(mx, fn):
    """``fn`` followed by ``mx.eval`` of its outputs: the step a column times on ``mx``.

    ``mx`` is the array module the column runs on (``mlxref.core`` or ``mlx.core``),
    so both engines' steps are the same code: a transform, then ``eval``.
    """

    def step(*args):
        out = fn(*args)
        mx.eval(out)
        return out

    return step


def median(samples):
    return statistics.median(samples)


def flatten(x):
    """The scalars of a nested list/tuple (or a scalar) in order."""
    if isinstance(x, (list, tuple)):
        out = []
        stack = [iter(x)]
        while stack:
            for v in stack[-1]:
                if isinstance(v, (list, tuple)):
                    stack.append(iter(v))
                    break
                out.append(v)
            else:
                stack.pop()
        return out
    return [x]


def max_error(got, want):
    """The largest ``|got - want| / max(1, |want|)`` over matching scalars."""
    g, w = flatten(got), flatten(want)
    if len(g) != len(w):
        return math.inf
    worst = 0.0
    for a, b in zip(g, w):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return math.inf
            continue
        err = abs(a - b) / max(1.0, abs(b))
        if err > worst:
            worst = err
    return worst


TOLERANCE = 1e-9


def check_close(what, got, want, tol=TOLERANCE):
    """Raise ``Mismatch`` unless ``got`` equals ``want`` to ``tol``; returns the error."""
    err = max_error(got, want)
    if not err <= tol:
        raise Mismatch(f"{what}: max error {err:.3g} > {tol:g}\n  got:  {got!r}\n  want: {want!r}")
    return err


def check_exact(what, compiled, plain):
    """Raise ``Mismatch`` unless ``compiled`` (a compiled column's result:
    floats, nested lists and tuples, dicts of them) is ``plain`` (the
    uncompiled column's) bit for bit: compile may change the time, never a
    result. Floats are compared by their bits (-0.0 is not 0.0, nan is nan)."""
    if _bits(compiled) != _bits(plain):
        g, w = flatten(_values(compiled)), flatten(_values(plain))
        bad = sum(_bits(a) != _bits(b) for a, b in zip(g, w)) + abs(len(g) - len(w))
        raise Mismatch(f"{what}: compiled mlxref differs from uncompiled in {bad} of {len(w)} "
                       "numbers")
    return compiled


def _values(x):
    return [_values(x[k]) for k in sorted(x)] if isinstance(x, dict) else x


def _bits(x):
    x = _values(x)
    if isinstance(x, (list, tuple)):
        return [_bits(v) for v in x]
    return struct.pack("d", x) if isinstance(x, float) else (type(x), x)


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_ratio(r):
    """``1.23x``; ratios below 0.1 keep three significant digits (``0.00183x``)."""
    if r is None:
        return "-"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.3g}x"


def markdown_table(headers, rows, right=None):
    """A GitHub-flavoured Markdown table; ``right`` are the right-aligned columns."""
    right = set(range(1, len(headers))) if right is None else set(right)
    cells = [[str(c) for c in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row):
        parts = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = "|" + "|".join(
        ("-" * (widths[i] + 1) + ":") if i in right else ("-" * (widths[i] + 2))
        for i in range(len(headers))
    ) + "|"
    return "\n".join([line(cells[0]), rule] + [line(r) for r in cells[1:]])


# --- columns: several implementations of one workload, timed side by side -----------------


class Column:
    """One implementation of a workload: a column of the report.

    ``prepare(input) -> args`` runs outside the clock (converting the input
    to the implementation's own arrays); ``step(*args)`` is what is timed;
    ``result(out)`` turns its output into floats / nested lists, which must
    equal ``expect(reference)`` to ``tol``. ``max_size`` skips sizes above it.
    """

    def __init__(self, name, prepare, step, result=None, tol=TOLERANCE, expect=None, max_size=None):
        self.name, self.prepare, self.step = name, prepare, step
        self.result = result or (lambda out: out)
        self.expect = expect or (lambda want: want)
        self.tol, self.max_size = tol, max_size


def check_columns(tag, data, reference, columns, compare=None):
    """Run every column once on ``data``; raise ``Mismatch`` unless each equals the reference.

    Returns ``{column name: result}`` (floats / nested lists).
    """
    compare = compare or check_close
    want = reference(data)
    results = {}
    for c in columns:
        got = c.result(c.step(*c.prepare(data)))
        compare(f"{tag} ({c.name})", got, c.expect(want), c.tol)
        results[c.name] = got
    return results


def run_columns(tag, sizes, make_input, reference, columns, repeats, compare=None):
    """Median time of every column at every size, interleaved over the repeats.

    For each size, round 0 warms every column up and checks its result
    against ``reference(input)`` (``compare(what, got, want, tol)``, by default
    ``check_close``; a disagreement raises ``Mismatch``). Each later round times
    every column once, in turn, so a slow spell of the machine hits all of
    them alike. A column that raises is reported as an error at that size,
    not hidden.

    Returns ``{"sizes", "repeats", "columns", "rows", "scaling", "skipped",
    "errors"}``; each row has ``n`` and per-column ``median_s`` (wall),
    ``median_cpu_s``, ``median_gc_s``, ``samples_s`` and ``over_mlxref``.
    ``scaling`` maps each column to ``{"a->b": time(b) / time(a)}`` for
    consecutive sizes.
    """
    compare = compare or check_close
    names = [c.name for c in columns]
    rows, skipped, errors = [], {}, {}
    for n in sizes:
        data = make_input(n)
        want = reference(data)
        live = []
        for c in columns:
            if c.max_size is not None and n > c.max_size:
                skipped.setdefault(c.name, []).append(n)
            else:
                live.append(c)
        samples = {c.name: [] for c in live}
        for r in range(repeats + 1):
            progress(f"{tag} n={n:,}: round {r}/{repeats}" + (" (warm-up)" if r == 0 else ""))
            for c in live:
                if (c.name, n) in errors:
                    continue
                try:
                    args = c.prepare(data)
                    t, out = timed(c.step, *args)
                    if r == 0:
                        compare(f"{tag} n={n} ({c.name})", c.result(out), c.expect(want), c.tol)
                    else:
                        samples[c.name].append(t)
                except Mismatch:
                    raise
                except Exception as exc:  # noqa: BLE001 - reported in the table
                    errors[(c.name, n)] = f"{type(exc).__name__}: {exc}"
                    progress(f"{tag} n={n:,} {c.name}: {errors[(c.name, n)]}")
                args = out = None
        ran = [k for k in samples if samples[k]]
        row = {
            "n": n,
            "median_s": {k: median([t.wall for t in samples[k]]) for k in ran},
            "median_cpu_s": {k: median([t.cpu for t in samples[k]]) for k in ran},
            "median_gc_s": {k: median([t.gc for t in samples[k]]) for k in ran},
            "samples_s": {k: [t.wall for t in samples[k]] for k in ran},
        }
        if "mlxref" in row["median_s"]:
            base = row["median_s"]["mlxref"]
            row["over_mlxref"] = {k: v / base for k, v in row["median_s"].items()}
        rows.append(row)
    scaling = {}
    for name in names:
        scaling[name] = {
            f"{a['n']}->{b['n']}": b["median_s"][name] / a["median_s"][name]
            for a, b in zip(rows, rows[1:])
            if name in a["median_s"] and name in b["median_s"]
        }
    return {
        "sizes": list(sizes),
        "repeats": repeats,
        "columns": names,
        "rows": rows,
        "scaling": scaling,
        "skipped": skipped,
        "errors": {f"{name} n={n}": e for (name, n), e in errors.items()},
    }


def run_workload(tag, workload, make_input, reference, quick=False, repeats=None, sizes=None):
    """``run_columns`` with a workload module's own sizes, repeats and columns.

    ``workload`` provides ``SIZES``, ``QUICK_SIZES``, ``REPEATS``,
    ``QUICK_REPEATS`` and ``implementations()``, read at call time. The
    result also names the device real MLX ran on (``mlx_device``; None
    without ``mlx``).
    """
    from mlxref.backends import metal

    res = run_columns(
        tag,
        sizes or (workload.QUICK_SIZES if quick else workload.SIZES),
        make_input,
        reference,
        workload.implementations(),
        repeats or (workload.QUICK_REPEATS if quick else workload.REPEATS),
    )
    res["mlx_device"] = metal.device() if metal.available() else None
    return res


def fmt_size(n):
    return f"{n // 1000}k" if n >= 10_000 and n % 1000 == 0 else f"{n:,}"


def columns_table(res, size_header="n"):
    """The Markdown report of ``run_columns``: median times, ratios to mlxref, scaling."""
    names = res["columns"]
    others = [k for k in names if k != "mlxref"]
    headers = [size_header] + names + [f"{k} / mlxref" for k in others]
    rows = []
    for row in res["rows"]:
        m, ratio, n = row["median_s"], row.get("over_mlxref", {}), row["n"]

        def cell(k):
            if f"{k} n={n}" in res["errors"]:
                return "**error**"
            if n in res["skipped"].get(k, ()):
                return "skipped"
            return fmt_time(m.get(k))

        rows.append([fmt_size(n)] + [cell(k) for k in names] + [fmt_ratio(ratio.get(k)) for k in others])
    out = [markdown_table(headers, rows)]
    pairs = list(zip(res["sizes"], res["sizes"][1:]))
    if pairs:
        srows = [
            [k] + [fmt_ratio(res["scaling"].get(k, {}).get(f"{a}->{b}")) for a, b in pairs]
            for k in names
        ]
        sizes = [f"{fmt_size(a)} → {fmt_size(b)} ({b / a:g}x the size)" for a, b in pairs]
        out += [
            "",
            "Scaling: how each column's time grows from one size to the next "
            "(linear growth equals the size factor; a fixed per-call cost shows as less).",
            "",
            markdown_table(["column"] + sizes, srows),
        ]
    for k, ns in res["skipped"].items():
        out += ["", f"{k} skipped at {size_header} = {', '.join(fmt_size(n) for n in ns)}."]
    for k, e in res["errors"].items():
        out += ["", f"**{k}: {e}**"]
    return "\n".join(out)
