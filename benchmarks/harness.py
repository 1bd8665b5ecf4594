"""Timing, checking and reporting helpers shared by the workloads."""

import gc
import math
import statistics
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


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


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
