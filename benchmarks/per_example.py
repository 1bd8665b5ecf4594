"""Workload: per-example gradients with ``vmap(grad)``.

A regression problem of ``batch`` examples with ``DIM`` features
(``make_input``: deterministic, no randomness). One example's loss is

    loss(w, x, y) = (tanh(sum(x * w)) - y) ** 2

and the workload is its gradient with respect to ``w`` for every example
separately: a ``batch x DIM`` matrix, as used for per-example gradient
clipping or influence scores. The program, ``example_loss(mx, w, x, y)``
and its ``per_example_step(mx)``, is written once and run on two array modules.
Columns, run interleaved in one process:

- ``mlxref``: ``per_example_step(mlxref.core)``:
  ``mx.vmap(mx.grad(loss), in_axes=(None, 0, 0))`` and ``mx.eval``: one
  batched graph whatever the batch size;
- ``mlxref compile``: the same under ``mx.compile`` (traced in the warm-up),
  which must equal the ``mlxref`` column bit for bit (``check_exact``);
- ``mlxref grad, looped``: ``mx.grad(loss)`` called once per example in a
  Python loop and the results stacked: what ``vmap`` saves;
- ``lists``: the gradient ``2 (tanh(s) - y) (1 - tanh(s)^2) x`` written by
  hand over Python lists: the floor for pure Python, and the reference;
- ``micrograd-style Value``: one ``scalar_graph.ClosureValue`` graph per
  example, then ``backward()``;
- ``MLX (<device>)``: ``per_example_step(mlx.core)``, MLX's own ``vmap(grad)``
  (``mlxref.backends.metal``), when installed.

Every column must equal the lists reference to 1e-9 (mlxref and real MLX,
which compute in float32, to ``FLOAT32_TOLERANCE``) before any time is reported.
"""

import math
import sys
from functools import partial

import mlxref.core as mx
from mlxref.backends import metal

from . import harness
from .scalar_graph import ClosureValue

DIM = 8
SIZES = (10, 100, 1000)  # batch sizes
QUICK_SIZES = (10, 100)
REPEATS = 7
QUICK_REPEATS = 3
FLOAT32_TOLERANCE = 1e-5
COMPILED = "mlxref compile"


def make_input(batch, dim=DIM):
    """``(w, X, y)`` as Python lists: a deterministic per-example regression problem."""
    w = [math.sin(1.0 + j) * 0.5 for j in range(dim)]
    X = [[math.cos(0.7 * i + 0.3 * j) for j in range(dim)] for i in range(batch)]
    y = [math.sin(0.5 * i) * 0.5 for i in range(batch)]
    return w, X, y


# --- the program, on mlxref and on MLX ------------------------------------------------


def example_loss(mx, w, x, y):
    """One example's loss, on the array module ``mx`` (``mlxref.core`` or ``mlx.core``)."""
    d = mx.tanh(mx.sum(x * w)) - y
    return d * d


def per_example_step(mx, compiled=False):
    """The timed step on ``mx``: ``vmap(grad(loss), in_axes=(None, 0, 0))``,
    evaluated; under ``mx.compile`` when ``compiled``."""
    per_example = mx.vmap(mx.grad(partial(example_loss, mx)), in_axes=(None, 0, 0))
    return harness.evaluated(mx, mx.compile(per_example) if compiled else per_example)


_one_example = mx.grad(partial(example_loss, mx))


def mlxref_prepare(data):
    args = tuple(mx.array(v) for v in data)
    mx.eval(*args)
    return args


def looped_step(w, X, y):
    g = mx.stack([_one_example(w, X[i], y[i]) for i in range(X.shape[0])])
    mx.eval(g)
    return g


def array_result(g):
    return g.tolist()


# --- hand-written lists --------------------------------------------------------------


def lists_step(data):
    """Every example's gradient with respect to ``w``, by hand: a ``batch x dim`` list."""
    w, X, y = data
    tanh = math.tanh
    out = []
    for x, target in zip(X, y):
        t = tanh(sum([a * b for a, b in zip(x, w)]))
        # d/dw (t - y)^2 = 2 (t - y) * (1 - t^2) * x
        scale = 2.0 * (t - target) * (1.0 - t * t)
        out.append([scale * a for a in x])
    return out


# --- micrograd-style Value -------------------------------------------------------------


def value_step(w, X, y):
    """One scalar graph per example; returns the gradients as a ``batch x dim`` list."""
    out = []
    for x, target in zip(X, y):
        ws = [ClosureValue(v) for v in w]
        s = ws[0] * x[0]
        for wj, xj in zip(ws[1:], x[1:]):
            s = s + wj * xj
        d = s.tanh() - target
        (d * d).backward()
        out.append([wj.grad for wj in ws])
    return out


# --- the report ------------------------------------------------------------------------


def implementations():
    """The report's columns (``harness.Column``), each checked against the lists reference."""
    out = [
        harness.Column("mlxref", mlxref_prepare, per_example_step(mx), array_result,
                       tol=FLOAT32_TOLERANCE),
        harness.Column(COMPILED, mlxref_prepare, per_example_step(mx, compiled=True),
                       array_result, tol=FLOAT32_TOLERANCE),
        harness.Column("mlxref grad, looped", mlxref_prepare, looped_step, array_result,
                       tol=FLOAT32_TOLERANCE),
        harness.Column("lists", lambda data: (data,), lists_step),
        harness.Column("micrograd-style Value", lambda data: data, value_step),
    ]
    if metal.available():
        out.append(
            harness.Column(metal.label(), lambda data: tuple(map(metal.array, data)),
                           per_example_step(metal.core()), array_result, tol=FLOAT32_TOLERANCE)
        )
    return out


def check_exact(batch):
    """The compiled mlxref gradients at ``batch``, which must equal the
    uncompiled ones bit for bit; ``harness.Mismatch`` otherwise."""
    args = mlxref_prepare(make_input(batch))
    return harness.check_exact(f"per-example gradients batch={batch}",
                               per_example_step(mx, True)(*args).tolist(),
                               per_example_step(mx)(*args).tolist())


def check(batch):
    """One result per column; raise ``harness.Mismatch`` unless all equal the
    lists reference (and the compiled mlxref column the uncompiled one exactly)."""
    check_exact(batch)
    return harness.check_columns(
        f"per-example gradients batch={batch}", make_input(batch), lists_step, implementations()
    )


def run(quick=False, repeats=None, sizes=None):
    """Median time per column and batch size, interleaved (``harness.run_workload``),
    after ``check_exact`` at every size."""
    for batch in sizes or (QUICK_SIZES if quick else SIZES):
        harness.progress(f"per-example gradients batch={batch}: compiled equals uncompiled?")
        check_exact(batch)
    res = harness.run_workload(
        "per-example gradients", sys.modules[__name__], make_input, lists_step,
        quick, repeats, sizes,
    )
    res["dim"] = DIM
    return res


def table(res):
    return harness.columns_table(res, size_header="batch")
