"""Workload 2: one training step (loss and all gradients) of a small ReLU MLP.

The model is ``sizes = (2, 16, 16, 1)``: dense layers ``h @ W + b`` with
``W`` of shape (fan_in, fan_out), ReLU between them (``mx.maximum(h, 0)``) and
none after the last; the loss is the mean squared error over a batch of 32.
The implementations compute the same loss and the gradient with respect to
every parameter, from the same seeded weights and data:

- ``mlxref``: ``value_and_grad_step(mlxref.core)``: ``mx.value_and_grad`` of
  ``loss(mx, params, X, Y)`` over a dict of arrays, then ``mx.eval`` of the
  loss and the gradients;
- ``mlxref compile``: the same under ``mx.compile`` (traced in the warm-up,
  then served from compile's cache: one node running the generated program),
  which must equal the ``mlxref`` column bit for bit (``check_exact``);
- ``mlxref matmul kernels``: the step's eight matrix products alone, on the
  operands the mlxref step's ``Matmul`` nodes read, through the kernel those
  nodes call (``matmul_operands``, ``matmul_kernels_step``); checked on the
  three that are the weights' gradients. Every mlxref step, compiled or not,
  makes these calls, so ``mlxref / mlxref matmul kernels`` is the most
  compile could speed it up, and issue 30's two targets together (mlxref at
  most the lists', compile at least 2x) need the kernels alone at most half
  the lists' step;
- ``lists``: a hand-written forward and backward over Python lists (list
  comprehensions and ``sum(map(mul, ...))``): the floor for pure Python;
- ``micrograd-style Value``: the MLP built from ``scalar_graph.ClosureValue``
  nodes, one per number, in micrograd's design (a closure per node): the
  reference the issue's "at least 30x faster" target is measured against;
- ``lean scalar Value``: the same on ``scalar_graph.Value``, a leaner scalar
  graph (local partials stored, no closures), for context only: no target;
- ``MLX (<device>)``: the same program on real MLX,
  ``value_and_grad_step(mlx.core)`` (``mlxref.backends.metal``), when it is
  installed, labelled with the device it ran on. It and ``mlxref`` compute
  in float32, so they are checked to ``FLOAT32_TOLERANCE`` rather than 1e-9.

All must agree (``check``) before their times mean anything.
"""

import random
from functools import partial
from operator import mul

import mlxref.core as mx
from mlxref.backends import metal
from mlxref.core.backend.cpu.matmul import matmul as cpu_matmul

from . import harness
from .scalar_graph import ClosureValue, Value

SIZES = (2, 16, 16, 1)
BATCH = 32
SEED = 0
REPEATS = 21
QUICK_REPEATS = 7
TARGET_VS_LISTS = 1.0  # issue 30: mlxref / lists at most
TARGET_SCALAR_VS_MLXREF = 30.0  # micrograd-style Value / mlxref at least
TARGET_COMPILE = 2.0  # issue 30: mlxref / mlxref compile at least
COMPILED = "mlxref compile"
KERNELS = "mlxref matmul kernels"  # the step's matrix products alone
FLOAT32_TOLERANCE = 1e-5  # mlxref and real MLX compute in float32


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


# --- the program, on mlxref and on MLX -----------------------------------------------


def loss(mx, params, X, Y):
    """The MLP's mean squared error, on the array module ``mx`` (mlxref's or MLX's)."""
    h = X
    last = n_layers(params)
    for layer in range(1, last + 1):
        h = h @ params[f"W{layer}"] + params[f"b{layer}"]
        if layer < last:
            h = mx.maximum(h, 0)
    d = h - Y
    return mx.mean(d * d)


def value_and_grad_step(mx, compiled=False):
    """The timed step on ``mx``: ``(loss array, {name: gradient array})``,
    evaluated; under ``mx.compile`` when ``compiled``."""
    fn = mx.value_and_grad(partial(loss, mx))
    return harness.evaluated(mx, mx.compile(fn) if compiled else fn)


def inputs(array, params, X, Y):
    """The problem as arrays made by ``array`` (``mx.array``, ``metal.array``), untimed."""
    return {k: array(v) for k, v in params.items()}, array(X), array(Y)


def step_result(step_output):
    """The output of a ``value_and_grad_step`` as ``(loss float, {name: nested lists})``."""
    value, grads = step_output
    return value.item(), {k: v.tolist() for k, v in grads.items()}


# --- the step's matrix products alone: what no mlxref step can go below ------------


def matmul_operands(params, X, Y):
    """``(operands, names)``: the operands of every ``Matmul`` node of the mlxref
    step's graph (three forward, five in the backward pass), evaluated, as
    ``(a elements, b elements, a shape, b shape, dtype)`` in the order the
    nodes were built, and for each the weight whose gradient it is, with its
    number of columns (None for the others). These are the kernel calls any evaluation of the step makes,
    compiled or not, on the same lists. Untimed."""
    p, x, y = inputs(mx.array, params, X, Y)
    value, grads = mx.value_and_grad(partial(loss, mx))(p, x, y)
    gradient_of = {g.id(): (k, g.shape[-1]) for k, g in grads.items()}
    found, seen, stack = [], set(), [value, *grads.values()]
    while stack:
        a = stack.pop()
        if a.id() in seen or not a.has_primitive():
            continue
        seen.add(a.id())
        if a.primitive().name == "Matmul":
            found.append(a)
        stack.extend(a.inputs())
    found.sort(key=lambda a: a.id())
    pairs = [a.inputs() for a in found]  # (evaluating a product detaches its node)
    mx.eval(pairs)
    operands = [(u.data(), v.data(), u.shape, v.shape, u.dtype) for u, v in pairs]
    return operands, [gradient_of.get(a.id()) for a in found]


def matmul_kernels_step(operands, names):
    """Every matrix product of one step through mlxref's kernel
    (``backend.cpu.matmul.matmul``) and nothing else: ``{weight: its
    gradient's elements}``, the other products computed and dropped."""
    products = [cpu_matmul(*args) for args in operands]
    return {name: out for name, out in zip(names, products) if name}


def matmul_kernels_result(products):
    """The kernels column's output as ``(None, {weight: nested lists})``, to
    compare with the lists' weight gradients (``check_step`` skips the loss)."""
    return None, {k: _nested(v, columns) for (k, columns), v in products.items()}


def only_weights(step_output):
    """The lists' ``(loss, grads)`` as the kernels column gives it: the weights' gradients."""
    return None, {k: v for k, v in step_output[1].items() if k.startswith("W")}


def _nested(flat, columns):
    return [flat[i : i + columns] for i in range(0, len(flat), columns)]


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


def check_exact(sizes=SIZES, batch=BATCH, seed=SEED):
    """The compiled mlxref step's ``(loss, grads)``, which must equal the
    uncompiled step's bit for bit; ``harness.Mismatch`` otherwise."""
    p, x, y = inputs(mx.array, *make_problem(sizes, batch, seed))
    return harness.check_exact("mlp step", step_result(value_and_grad_step(mx, True)(p, x, y)),
                               step_result(value_and_grad_step(mx)(p, x, y)))


def check(sizes=SIZES, batch=BATCH, seed=SEED):
    """One step of each implementation; raise ``harness.Mismatch`` unless all
    agree (and the compiled mlxref step is the uncompiled one exactly).

    Returns ``{implementation name: ...}`` (see ``implementations()``), each a
    ``(loss, grads)`` pair of floats and nested lists.
    """
    check_exact(sizes, batch, seed)
    return harness.check_columns(
        "mlp step", make_problem(sizes, batch, seed), lambda p: lists_step(*p),
        implementations(), compare=check_step,
    )


def check_step(what, got, want, tol):
    """Raise ``harness.Mismatch`` unless the ``(loss, {name: gradient})`` pairs agree."""
    (loss, grads), (want_loss, want_grads) = got, want
    if want_loss is not None:  # (the kernels column gives no loss)
        harness.check_close(f"{what}: loss", loss, want_loss, tol)
    if sorted(grads) != sorted(want_grads):
        raise harness.Mismatch(f"{what}: gradient keys {sorted(grads)}")
    for k in want_grads:
        harness.check_close(f"{what}: gradient {k}", grads[k], want_grads[k], tol)


def _spread(prepare):
    return lambda problem: prepare(*problem)


def implementations():
    """The report's columns (``harness.Column``); real MLX's only when it is installed."""
    out = [
        harness.Column("lists", lambda problem: problem, lists_step),
        harness.Column("mlxref", _spread(partial(inputs, mx.array)), value_and_grad_step(mx),
                       step_result, tol=FLOAT32_TOLERANCE),
        harness.Column(COMPILED, _spread(partial(inputs, mx.array)),
                       value_and_grad_step(mx, compiled=True), step_result, tol=FLOAT32_TOLERANCE),
        harness.Column(KERNELS, _spread(matmul_operands), matmul_kernels_step,
                       matmul_kernels_result, tol=FLOAT32_TOLERANCE, expect=only_weights),
        harness.Column("lean scalar Value", _spread(scalar_inputs), scalar_step, scalar_result),
        harness.Column("micrograd-style Value", _spread(closure_scalar_inputs), scalar_step,
                       scalar_result),
    ]
    if metal.available():
        out.append(harness.Column(metal.label(), _spread(partial(inputs, metal.array)),
                                  value_and_grad_step(metal.core()), step_result,
                                  tol=FLOAT32_TOLERANCE))
    return out


def run(quick=False, repeats=None, sizes=None, batch=None, seed=SEED):
    """Median time of one step per implementation, interleaved (``harness.run_columns``).

    Round 0 warms up, is not timed, and checks every implementation against
    the lists reference. Each later round times every implementation once,
    in turn, so a slow spell of the machine hits all of them alike.
    """
    sizes, batch = sizes or SIZES, batch or BATCH
    harness.progress("mlp step: compiled equals uncompiled?")
    check_exact(sizes, batch, seed)
    problem = make_problem(sizes, batch, seed)
    cols = harness.run_columns(
        "mlp step",
        (batch,),
        lambda _: problem,
        lambda p: lists_step(*p),
        implementations(),
        repeats or (QUICK_REPEATS if quick else REPEATS),
        compare=check_step,
    )
    row = cols["rows"][0]
    res = {
        "sizes": list(sizes),
        "batch": batch,
        "seed": seed,
        "repeats": cols["repeats"],
        "loss": lists_step(*problem)[0],
        "mlx_device": metal.device() if metal.available() else None,
        "median_s": row["median_s"],
        "median_cpu_s": row["median_cpu_s"],
        "median_gc_s": row["median_gc_s"],
        "samples_s": row["samples_s"],
        "errors": {k.rsplit(" n=", 1)[0]: e for k, e in cols["errors"].items()},
    }
    m, c = res["median_s"], res["median_cpu_s"]
    if "mlxref" in m and "lists" in m:
        res["mlxref_over_lists"] = m["mlxref"] / m["lists"]
        res["cpu_mlxref_over_lists"] = c["mlxref"] / c["lists"]
    if "mlxref" in m and COMPILED in m:
        res["compile_speedup"] = m["mlxref"] / m[COMPILED]
        res["cpu_compile_speedup"] = c["mlxref"] / c[COMPILED]
    if "mlxref" in m and KERNELS in m and "lists" in m:
        res["compile_bound"] = m["mlxref"] / m[KERNELS]
        res["cpu_compile_bound"] = c["mlxref"] / c[KERNELS]
        res["kernels_over_lists"] = m[KERNELS] / m["lists"]
        res["cpu_kernels_over_lists"] = c[KERNELS] / c["lists"]
    for name, key in scalar_ratios():
        if "mlxref" in m and name in m:
            res[key] = m[name] / m["mlxref"]
            res["cpu_" + key] = c[name] / c["mlxref"]
    return res


def scalar_ratios():
    """``(column, result key)`` of the ratios to mlxref that the table reports."""
    out = [
        ("micrograd-style Value", "closure_scalar_graph_over_mlxref"),
        ("lean scalar Value", "scalar_graph_over_mlxref"),
    ]
    if metal.available():
        out.append((metal.label(), "mlx_over_mlxref"))
    return out
TARGETED = "micrograd-style Value"  # the only scalar graph with a target


def table(res):
    m, c, g = res["median_s"], res["median_cpu_s"], res["median_gc_s"]
    headers = ["implementation", "median step", "vs lists", "vs mlxref", "of which GC", "CPU time"]
    rows = []
    for name in [c.name for c in implementations()]:
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
    if "compile_speedup" in res:
        a = res["compile_speedup"]
        ratios.append(["mlxref / mlxref compile", f"{a:.2f}x", f"{res['cpu_compile_speedup']:.2f}x",
                       f"≥ {TARGET_COMPILE:g}x", "yes" if a >= TARGET_COMPILE else "**no**"])
    if "compile_bound" in res:
        # A compiled step still makes every product: mlxref / kernels bounds
        # what compile can give; both targets at once need kernels / lists
        # at most 1 / TARGET_COMPILE.
        a, b = res["compile_bound"], res["kernels_over_lists"]
        ratios.append(["mlxref / mlxref matmul kernels (compile's ceiling)", f"{a:.2f}x",
                       f"{res['cpu_compile_bound']:.2f}x", f"≥ {TARGET_COMPILE:g}x",
                       "yes" if a >= TARGET_COMPILE else "**no**"])
        ratios.append(["mlxref matmul kernels / lists (both targets need)", f"{b:.2f}x",
                       f"{res['cpu_kernels_over_lists']:.2f}x",
                       f"≤ {TARGET_VS_LISTS / TARGET_COMPILE:g}x",
                       "yes" if b <= TARGET_VS_LISTS / TARGET_COMPILE else "**no**"])
    for name, key in scalar_ratios():
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
