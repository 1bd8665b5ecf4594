"""Workload 2: one training step (loss and all gradients) of a small ReLU MLP.

The model is ``sizes = (2, 16, 16, 1)``: dense layers ``h @ W + b`` with
``W`` of shape (fan_in, fan_out), ReLU between them (``mx.maximum(h, 0)``) and
none after the last; the loss is the mean squared error over a batch of 32.
Three implementations compute the same loss and the gradient with respect to
every parameter, from the same seeded weights and data:

- ``mlxref``: ``mx.value_and_grad`` over a dict of arrays, then ``mx.eval``
  of the loss and the gradients;
- ``lists``: a hand-written forward and backward over Python lists (list
  comprehensions and ``sum(map(mul, ...))``): the floor for pure Python;
- ``micrograd-style Value``: the MLP built from ``scalar_graph.ClosureValue``
  nodes, one per number, in micrograd's design (a closure per node): the
  reference the issue's "at least 30x faster" target is measured against;
- ``lean scalar Value``: the same on ``scalar_graph.Value``, a leaner scalar
  graph (local partials stored, no closures), for context only: no target;
- ``MLX (<device>)``: real MLX (``mlxref.backends.metal``) when it is
  installed, labelled with the device it ran on; float32, so it is checked
  to ``MLX_TOLERANCE`` rather than 1e-9.

All must agree (``check``) before their times mean anything.
"""

import random
from operator import mul

import mlxref.core as mx
from mlxref.backends import metal

from . import harness
from .scalar_graph import ClosureValue, Value

SIZES = (2, 16, 16, 1)
BATCH = 32
SEED = 0
REPEATS = 21
QUICK_REPEATS = 7
TARGET_VS_LISTS = 1.5  # mlxref / lists at most
TARGET_SCALAR_VS_MLXREF = 30.0  # micrograd-style Value / mlxref at least
MLX_TOLERANCE = 1e-5  # real MLX computes in float32
MLX_NAME = metal.label() if metal.available() else None


# --- the problem: weights and data, as nested Python lists -----------------------


def make_problem(sizes=SIZES, batch=BATCH, seed=SEED):
    """``(params, X, Y)``: params maps "W1", "b1", ... to nested lists of floats.

    Weights are uniform in ±1/sqrt(fan_in), biases uniform in ±0.1, inputs
    uniform in ±1 and the targets a smooth function of the inputs.
    """
    rng = random.Random(seed)
    params = {}
    for layer, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:]), start=1):
        bound = fan_in**-0.5
        params[f"W{layer}"] = [
            [rng.uniform(-bound, bound) for _ in range(fan_out)] for _ in range(fan_in)
        ]
        params[f"b{layer}"] = [rng.uniform(-0.1, 0.1) for _ in range(fan_out)]
    X = [[rng.uniform(-1.0, 1.0) for _ in range(sizes[0])] for _ in range(batch)]
    Y = [[_target(row, k) for k in range(sizes[-1])] for row in X]
    return params, X, Y


def _target(row, k):
    s = 0.0
    for i, v in enumerate(row):
        s += (-1.0) ** (i + k) * v * (i + 1)
    return 0.5 * s * s - 0.25


def n_layers(params):
    return len(params) // 2


# --- mlxref ---------------------------------------------------------------------------


def mlxref_loss(params, X, Y):
    h = X
    last = n_layers(params)
    for layer in range(1, last + 1):
        h = h @ params[f"W{layer}"] + params[f"b{layer}"]
        if layer < last:
            h = mx.maximum(h, 0)
    d = h - Y
    return mx.mean(d * d)


mlxref_value_and_grad = mx.value_and_grad(mlxref_loss)


def mlxref_inputs(params, X, Y):
    """The problem as materialised mlxref arrays (built once, outside the timing)."""
    return {k: mx.array(v) for k, v in params.items()}, mx.array(X), mx.array(Y)


def mlxref_step(params, X, Y):
    """Loss and gradients, evaluated: ``(loss array, {name: gradient array})``."""
    loss, grads = mlxref_value_and_grad(params, X, Y)
    mx.eval(loss, grads)
    return loss, grads


def mlxref_result(step_output):
    """The output of ``mlxref_step`` as ``(loss float, {name: nested lists})``."""
    loss, grads = step_output
    return loss.item(), {k: v.tolist() for k, v in grads.items()}


# --- hand-written, over lists ------------------------------------------------------


def lists_step(params, X, Y):
    """Loss and gradients by hand: ``(loss float, {name: nested lists})``.

    Matrices are lists of rows. A product ``A @ W`` takes the columns of ``W``
    once (``zip(*W)``) and forms every element as ``sum(map(mul, row, col))``.
    """
    last = n_layers(params)
    acts = [X]  # the input of each layer (post-ReLU)
    h = X
    for layer in range(1, last + 1):
        W, b = params[f"W{layer}"], params[f"b{layer}"]
        cols = list(zip(*W))
        z = [[sum(map(mul, row, col)) + bj for col, bj in zip(cols, b)] for row in h]
        if layer < last:
            h = [[v if v > 0.0 else 0.0 for v in r] for r in z]
            acts.append(h)
        else:
            h = z
    diffs = [[o - t for o, t in zip(orow, trow)] for orow, trow in zip(h, Y)]
    count = len(diffs) * len(diffs[0])
    loss = sum(d * d for r in diffs for d in r) / count
    scale = 2.0 / count
    delta = [[scale * d for d in r] for r in diffs]  # d loss / d (pre-activation)
    grads = {}
    for layer in range(last, 0, -1):
        a_in, W = acts[layer - 1], params[f"W{layer}"]
        delta_cols = list(zip(*delta))
        grads[f"W{layer}"] = [
            [sum(map(mul, a_col, d_col)) for d_col in delta_cols] for a_col in zip(*a_in)
        ]
        grads[f"b{layer}"] = [sum(d_col) for d_col in delta_cols]
        if layer > 1:
            # Back through W (d_in = delta @ W.T), then through the ReLU.
            delta = [
                [sum(map(mul, d_row, w_row)) if a > 0.0 else 0.0 for w_row, a in zip(W, a_row)]
                for d_row, a_row in zip(delta, a_in)
            ]
    return loss, {k: grads[k] for k in params}


# --- micrograd-style scalar graph ------------------------------------------------


def scalar_inputs(params, X, Y, node=Value):
    """The parameters as ``node`` objects (they persist across steps, as in micrograd)."""
    return {k: _to_values(v, node) for k, v in params.items()}, X, Y


def closure_scalar_inputs(params, X, Y):
    return scalar_inputs(params, X, Y, ClosureValue)


def _to_values(x, node):
    if isinstance(x, list):
        return [_to_values(v, node) for v in x]
    return node(x)


def scalar_step(params, X, Y):
    """Forward on scalar nodes, then ``backward``: ``(loss node, params)``.

    The node class is whatever ``params`` hold (``Value`` or ``ClosureValue``).
    """
    last = n_layers(params)
    h = X  # the first layer multiplies Values by plain floats
    for layer in range(1, last + 1):
        W, b = params[f"W{layer}"], params[f"b{layer}"]
        cols = list(zip(*W))
        out = []
        for row in h:
            zs = []
            for col, bj in zip(cols, b):
                z = bj
                for w, x in zip(col, row):
                    z = z + w * x
                zs.append(z.relu() if layer < last else z)
            out.append(zs)
        h = out
    total = None
    count = 0
    for orow, trow in zip(h, Y):
        for o, t in zip(orow, trow):
            d = o - t
            total = d * d if total is None else total + d * d
            count += 1
    loss = total * (1.0 / count)
    loss.backward()
    return loss, params


def scalar_result(step_output):
    loss, params = step_output
    return loss.data, {k: _grads_of(v) for k, v in params.items()}


def _grads_of(x):
    if isinstance(x, list):
        return [_grads_of(v) for v in x]
    return x.grad


# --- checking and timing -------------------------------------------------------------


def check(sizes=SIZES, batch=BATCH, seed=SEED):
    """One step of each implementation; raise ``harness.Mismatch`` unless all agree.

    Returns ``{implementation name: ...}`` (see ``IMPLEMENTATIONS``), each a
    ``(loss, grads)`` pair of floats and nested lists.
    """
    params, X, Y = make_problem(sizes, batch, seed)
    results = {
        "lists": lists_step(params, X, Y),
        "mlxref": mlxref_result(mlxref_step(*mlxref_inputs(params, X, Y))),
        "lean scalar Value": scalar_result(scalar_step(*scalar_inputs(params, X, Y))),
        "micrograd-style Value": scalar_result(
            scalar_step(*closure_scalar_inputs(params, X, Y))
        ),
    }
    if MLX_NAME is not None:
        results[MLX_NAME] = metal.mlp_result(metal.mlp_run(*metal.mlp_prepare(params, X, Y)))
    _compare(results)
    return results


def _compare(results):
    want_loss, want_grads = results["lists"]
    for name, (loss, grads) in results.items():
        if name == "lists":
            continue
        tol = MLX_TOLERANCE if name == MLX_NAME else harness.TOLERANCE
        harness.check_close(f"mlp loss ({name} vs lists)", loss, want_loss, tol)
        if sorted(grads) != sorted(want_grads):
            raise harness.Mismatch(f"mlp gradients ({name}): keys {sorted(grads)}")
        for k in want_grads:
            harness.check_close(
                f"mlp gradient {k} ({name} vs lists)", grads[k], want_grads[k], tol
            )


IMPLEMENTATIONS = (
    # name, prepare(params, X, Y) -> step args, step, result(step output)
    ("lists", lambda p, X, Y: (p, X, Y), lists_step, lambda out: out),
    ("mlxref", mlxref_inputs, mlxref_step, mlxref_result),
    ("lean scalar Value", scalar_inputs, scalar_step, scalar_result),
    ("micrograd-style Value", closure_scalar_inputs, scalar_step, scalar_result),
) + (
    ((MLX_NAME, metal.mlp_prepare, metal.mlp_run, metal.mlp_result),)
    if MLX_NAME is not None
    else ()
)


def run(quick=False, repeats=None, sizes=None, batch=None, seed=SEED):
    """Median time of one step per implementation, interleaved over the repeats.

    Round 0 warms up, is not timed, and provides the results that are
    compared. Each later round times every implementation once, in turn, so
    a slow spell of the machine hits all of them alike.
    """
    repeats = repeats or (QUICK_REPEATS if quick else REPEATS)
    sizes, batch = sizes or SIZES, batch or BATCH
    params, X, Y = make_problem(sizes, batch, seed)
    samples = {name: [] for name, *_ in IMPLEMENTATIONS}
    outputs, errors = {}, {}
    prepared = {name: prepare(params, X, Y) for name, prepare, _, _ in IMPLEMENTATIONS}
    for r in range(repeats + 1):
        harness.progress(f"mlp: round {r}/{repeats}" + (" (warm-up)" if r == 0 else ""))
        for name, _, step, result in IMPLEMENTATIONS:
            if name in errors:
                continue
            try:
                t, out = harness.timed(step, *prepared[name])
            except Exception as exc:  # noqa: BLE001 - reported in the table
                errors[name] = f"{type(exc).__name__}: {exc}"
                harness.progress(f"mlp {name}: {errors[name]}")
                continue
            if r == 0:
                outputs[name] = result(out)
            else:
                samples[name].append(t)
            del out
    _compare(outputs)  # raises on any disagreement among those that ran
    ran = [n for n, s in samples.items() if s]
    med = harness.median
    res = {
        "sizes": list(sizes),
        "batch": batch,
        "seed": seed,
        "repeats": repeats,
        "loss": outputs["lists"][0],
        "mlx_device": metal.device() if MLX_NAME is not None else None,
        "median_s": {n: med([t.wall for t in samples[n]]) for n in ran},
        "median_cpu_s": {n: med([t.cpu for t in samples[n]]) for n in ran},
        "median_gc_s": {n: med([t.gc for t in samples[n]]) for n in ran},
        "samples_s": {n: [t.wall for t in samples[n]] for n in ran},
        "errors": errors,
    }
    m, c = res["median_s"], res["median_cpu_s"]
    if "mlxref" in m and "lists" in m:
        res["mlxref_over_lists"] = m["mlxref"] / m["lists"]
        res["cpu_mlxref_over_lists"] = c["mlxref"] / c["lists"]
    for name, key in SCALAR_RATIOS:
        if "mlxref" in m and name in m:
            res[key] = m[name] / m["mlxref"]
            res["cpu_" + key] = c[name] / c["mlxref"]
    return res


SCALAR_RATIOS = (
    ("micrograd-style Value", "closure_scalar_graph_over_mlxref"),
    ("lean scalar Value", "scalar_graph_over_mlxref"),
) + (((MLX_NAME, "mlx_over_mlxref"),) if MLX_NAME is not None else ())
TARGETED = "micrograd-style Value"  # the only scalar graph with a target


def table(res):
    m, c, g = res["median_s"], res["median_cpu_s"], res["median_gc_s"]
    headers = ["implementation", "median step", "vs lists", "vs mlxref", "of which GC", "CPU time"]
    rows = []
    for name, *_ in IMPLEMENTATIONS:
        if name in res["errors"]:
            rows.append([name, f"**{res['errors'][name]}**"] + ["-"] * (len(headers) - 2))
            continue
        t = m[name]
        rows.append(
            [
                name,
                harness.fmt_time(t),
                harness.fmt_ratio(t / m["lists"]) if "lists" in m else "-",
                harness.fmt_ratio(t / m["mlxref"]) if "mlxref" in m else "-",
                harness.fmt_time(g[name]),
                harness.fmt_time(c[name]),
            ]
        )
    out = [harness.markdown_table(headers, rows)]
    ratios = []
    if "mlxref_over_lists" in res:
        a = res["mlxref_over_lists"]
        ratios.append(
            [
                "mlxref / lists",
                f"{a:.2f}x",
                f"{res['cpu_mlxref_over_lists']:.2f}x",
                f"≤ {TARGET_VS_LISTS}x",
                "yes" if a <= TARGET_VS_LISTS else "**no**",
            ]
        )
    for name, key in SCALAR_RATIOS:
        if key in res:
            b = res[key]
            ratios.append(
                [
                    f"{name} / mlxref",
                    f"{b:.1f}x" if b >= 10 else f"{b:.2f}x",
                    f"{res['cpu_' + key]:.1f}x" if res["cpu_" + key] >= 10 else f"{res['cpu_' + key]:.2f}x",
                    f"≥ {TARGET_SCALAR_VS_MLXREF:g}x" if name == TARGETED else "(context)",
                    ("yes" if b >= TARGET_SCALAR_VS_MLXREF else "**no**")
                    if name == TARGETED
                    else "-",
                ]
            )
    if ratios:
        out += [
            "",
            harness.markdown_table(
                ["ratio", "measured (wall)", "measured (CPU)", "target", "met?"], ratios
            ),
        ]
    return "\n".join(out)
