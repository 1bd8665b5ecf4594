"""Workload "lsq": one gradient step of least squares, MLX's linear-regression example (issue 30).

The step of MLX's ``examples/python/linear_regression.py`` (1000 examples of
100 float32 features): ``loss(w) = 0.5 * mean(square(X @ w - y))``, its
gradient by ``mx.grad``, then ``w - lr * grad``, evaluated. Its cost is two
dot-product passes over X: ``X @ w`` forward, ``Xᵀ @ r`` backward. A timed
call runs ``STEPS`` steps of the example's loop (each from the ``w`` the last
one left), so that what a loop pays once (mlxref's first look at X, whose
norm it then remembers: backend/cpu/rounding.py) is shared as in the
example. The columns, from the same seeded data and run interleaved in one
process:

- ``mlxref``: ``step(mlxref.core)``;
- ``lists``: the same update by hand over Python lists, two passes of
  ``sum(map(mul, ...))`` (rows of X, then its columns, sliced beforehand,
  outside the clock): the pure-Python floor issue 30 measures mlxref against
  (``TARGET_VS_LISTS``);
- ``MLX (<device>)``: ``step(mlx.core)`` on real MLX, when installed.

Every column's new ``w`` must equal the double-precision reference
(``reference``) to ``FLOAT32_TOLERANCE`` before any time is reported.
"""

import random
import struct
import sys
from operator import mul

import mlxref.core as mx
from mlxref.backends import metal

from . import harness

FEATURES = 100
SIZES = (1000,)  # examples: the rows of X
QUICK_SIZES = (1000,)
REPEATS = 21
QUICK_REPEATS = 5
STEPS = 10  # steps of the loop per timed call
LR = 0.01
SEED = 0
FLOAT32_TOLERANCE = 1e-5
TARGET_VS_LISTS = 1.5  # issue 30: mlxref / lists at most


def _float32(values):
    return list(struct.unpack(f"{len(values)}f", struct.pack(f"{len(values)}f", *values)))


def make_input(n, features=FEATURES, seed=SEED):
    """``(X, y, w)`` as float32 values in Python lists: X (n rows of
    ``features``) and w_star normal, y = X w_star + noise, w small."""
    rng = random.Random(seed)
    w_star = [rng.gauss(0, 1) for _ in range(features)]
    X = [_float32([rng.gauss(0, 1) for _ in range(features)]) for _ in range(n)]
    y = _float32([sum(map(mul, row, w_star)) + 1e-2 * rng.gauss(0, 1) for row in X])
    w = _float32([1e-2 * rng.gauss(0, 1) for _ in range(features)])
    return X, y, w


# --- the program, on mlxref and on MLX -----------------------------------------------


def loss(mx, w, X, y):
    return 0.5 * mx.mean(mx.square(X @ w - y))


def step(mx):
    """``STEPS`` turns of the example's loop on the array module ``mx``: the
    gradient, the update and ``mx.eval``; returns the last ``w``."""
    grad_fn = mx.grad(lambda w, X, y: loss(mx, w, X, y))

    def loop(w, X, y):
        for _ in range(STEPS):
            w = w - LR * grad_fn(w, X, y)
            mx.eval(w)
        return w

    return loop


def mlxref_prepare(data):
    X, y, w = data
    arrays = mx.array(w), mx.array(X), mx.array(y)
    mx.eval(*arrays)
    return arrays


def mlx_prepare(data):
    X, y, w = data
    return metal.array(w), metal.array(X), metal.array(y)


# --- by hand ------------------------------------------------------------------------


def lists_prepare(data):
    """The rows of X, its columns (sliced here, outside the clock), y and w."""
    X, y, w = data
    columns = [[row[j] for row in X] for j in range(len(w))]
    return X, columns, y, w


def lists_step(rows, columns, y, w):
    """``STEPS`` times ``w - lr * Xᵀ (X w - y) / n``: one pass over the rows,
    one over the columns, each time."""
    n = len(rows)
    for _ in range(STEPS):
        residuals = [sum(map(mul, row, w)) - t for row, t in zip(rows, y)]
        w = [v - LR * (sum(map(mul, col, residuals)) / n) for v, col in zip(w, columns)]
    return w


def reference(data):
    """The last ``w`` in double precision (``lists_step`` on the same data)."""
    return lists_step(*lists_prepare(data))


def implementations():
    """The report's columns (``harness.Column``), each checked against ``reference``."""
    out = [
        harness.Column("mlxref", mlxref_prepare, step(mx), lambda w: w.tolist(), tol=FLOAT32_TOLERANCE),
        harness.Column("lists", lists_prepare, lists_step),
    ]
    if metal.available():
        out.append(harness.Column(metal.label(), mlx_prepare, step(metal.core()), lambda w: w.tolist(),
                                  tol=FLOAT32_TOLERANCE))
    return out


def check(n):
    """One result per column for ``n`` examples; ``harness.Mismatch`` unless all equal the reference."""
    return harness.check_columns(f"lsq n={n}", make_input(n), reference, implementations())


def run(quick=False, repeats=None, sizes=None):
    """Median time per column (``harness.run_workload``), and mlxref over lists in CPU time."""
    res = harness.run_workload("lsq", sys.modules[__name__], make_input, reference, quick, repeats,
                               sizes)
    res["features"] = FEATURES
    res["steps"] = STEPS
    res["target"] = TARGET_VS_LISTS
    res["vs_lists_cpu"] = {str(row["n"]): row["median_cpu_s"]["mlxref"] / row["median_cpu_s"]["lists"]
                           for row in res["rows"]
                           if "mlxref" in row["median_cpu_s"] and "lists" in row["median_cpu_s"]}
    return res


def table(res):
    lines = [f"Times are for {res['steps']} steps.", "", harness.columns_table(res, size_header="examples")]
    for n, ratio in res["vs_lists_cpu"].items():
        met = "met" if ratio <= res["target"] else "not met"
        lines += ["", f"{n} examples: mlxref takes {ratio:.2f}x the lists' CPU time; "
                      f"target at most {res['target']:g}x: {met}."]
    return "\n".join(lines)
