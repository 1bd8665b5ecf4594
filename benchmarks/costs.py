"""Where the time goes: a profile of three steps, split by what each cost is for.

``python -m benchmarks --only costs`` runs, under ``cProfile``, one step of

- ``chain``: ``value_and_grad`` of the deep scalar chain (``deep_chain.py``,
  ``CHAIN_OPS`` ops on a 0-d float32 array);
- ``mlp``: the MLP step (``mlp.py``: 2-16-16-1, batch 32);
- ``least squares``: ``lsq.STEPS`` steps of MLX's
  ``examples/python/linear_regression.py`` (``lsq.py``: ``grad`` of
  ``0.5 * mean(square(X @ w - y))`` for a 1000x100 float32 ``X``, then
  ``w - lr * grad`` evaluated),

and sorts every function the profile saw into one of the costs below (``COSTS``,
by module and function: ``cost_of``). A built-in function (``sum``, ``map``,
``struct.pack``...) counts where its callers are: ``sum`` called by a matmul
kernel is the kernel's loop. The report gives each cost's share of the profiled
time and the Python-level calls it made per step (a call is what pure Python
pays most for: about 800 machine instructions on CPython 3.11, measured with
``valgrind --tool=callgrind``, whatever the function does). The calls are
exact and repeatable; the shares move a little from run to run, and
``cProfile`` charges every call a little, so costs made of many small calls
(the descriptor, the counters) read somewhat larger than they are.
"""

import cProfile
import pstats
import time

import mlxref.core as mx

from . import deep_chain, harness, lsq, mlp

CHAIN_OPS = 4_000
QUICK_CHAIN_OPS = 400
REPEATS, QUICK_REPEATS = 5, 2

# (name, [(module path, function names or None for all of the module's)]): the first
# entry naming a function's module and name decides its cost.
COSTS = (
    ("memory counters and donation", [
        ("core/backend/cpu/allocator.py", None),
        ("core/array.py", {"set_data", "is_donatable", "release_data", "__del__"}),
    ]),
    ("Dtype.store", [("core/dtypes.py", {"holds_symbolic", "_each"}),
                     ("core/dtypes.py", "_store")]),
    ("promotion and conversion", [
        ("core/convert.py", None), ("core/dtypes.py", None),
        ("core/ops/common.py", {"astype", "broadcast_arrays", "broadcast_shapes",
                                "_broadcast_pair", "float_dtype", "to_shape",
                                "_shape_from_sequence", "dynamic_broadcast_arrays"}),
    ]),
    ("the handle and descriptor", [("core/array.py", None)]),
    ("the transform's walk", [
        ("core/transforms/", None),
        ("core/primitives/", {"vjp", "jvp", "vmap", "derivative", "partial"}),
    ]),
    ("the kernel's element loop", [
        ("core/backend/cpu/", None), ("core/scalar.py", None),
        ("core/primitives/", {"eval"}),
    ]),
    ("the op and its node", [("core/primitives/", None), ("core/ops/", None)]),
)
OTHER = "the program itself (benchmark, nn, optimizers)"


def cost_of(filename, function):
    """The cost (a name from ``COSTS``) a Python function's time counts as."""
    path = filename.replace("\\", "/")
    if "/mlxref/" in path:
        path = path.split("/mlxref/", 1)[1]
        for name, places in COSTS:
            for module, functions in places:
                if not path.startswith(module):
                    continue
                if (functions is None
                        or (isinstance(functions, str) and function.startswith(functions))
                        or (not isinstance(functions, str) and function in functions)):
                    return name
    return OTHER


def split(stats):
    """``{cost: [seconds, Python calls]}`` of a ``pstats.Stats``; built-ins go to their callers."""
    totals = {name: [0.0, 0] for name, _ in COSTS}
    totals[OTHER] = [0.0, 0]
    for (filename, _, function), (_, calls, tottime, _, callers) in stats.stats.items():
        if filename != "~":
            cost = totals[cost_of(filename, function)]
            cost[0] += tottime
            cost[1] += calls
            continue
        # A built-in: its time, split among its callers as cProfile recorded it.
        for (cfile, _, cfunction), (_, _, ctottime, _) in callers.items():
            totals[OTHER if cfile == "~" else cost_of(cfile, cfunction)][0] += ctottime
    return totals


# --- the three steps ----------------------------------------------------------------


def chain_step(quick=False):
    """``step()`` of the deep chain, with ``(value, grad)`` as its result."""
    n_ops = QUICK_CHAIN_OPS if quick else CHAIN_OPS
    step = deep_chain.value_and_grad_step(mx)
    return lambda: step(n_ops)


def mlp_step(quick=False):
    params, X, Y = mlp.make_problem()
    step = mlp.value_and_grad_step(mx)
    inputs = mlp.inputs(mx.array, params, X, Y)
    return lambda: step(*inputs)


def least_squares_step(quick=False):
    """``lsq.STEPS`` steps of MLX's linear-regression loop (``lsq.step``)."""
    w, X, y = lsq.mlxref_prepare(lsq.make_input((lsq.QUICK_SIZES if quick else lsq.SIZES)[0]))
    loop = lsq.step(mx)
    return lambda: loop(w, X, y)


STEPS = (("chain", chain_step), ("mlp", mlp_step), ("least squares", least_squares_step))


def run(args):
    """Profile one step of each workload: ``{workload: {"cpu": s, "costs": {cost: [share, calls]}}}``."""
    repeats = args.repeats or (QUICK_REPEATS if args.quick else REPEATS)
    results = {"chain_ops": QUICK_CHAIN_OPS if args.quick else CHAIN_OPS,
               "lsq_examples": (lsq.QUICK_SIZES if args.quick else lsq.SIZES)[0], "steps": {}}
    for name, make in STEPS:
        harness.progress(f"costs: {name}")
        step = make(args.quick)
        step()  # warm-up
        cpu = []
        for _ in range(repeats):
            t = time.process_time()
            step()
            cpu.append(time.process_time() - t)
        profile = cProfile.Profile()
        profile.runcall(step)
        totals = split(pstats.Stats(profile))
        whole = sum(seconds for seconds, _ in totals.values()) or 1.0
        results["steps"][name] = {
            "cpu": harness.median(cpu),
            "costs": {cost: [seconds / whole, calls] for cost, (seconds, calls) in totals.items()},
        }
    return results


def table(res):
    names = list(res["steps"])
    rows = []
    for cost in [name for name, _ in COSTS] + [OTHER]:
        row = [cost]
        for name in names:
            share, calls = res["steps"][name]["costs"][cost]
            row.append(f"{100 * share:.0f}% ({calls:,} calls)")
        rows.append(row)
    rows.append(["CPU time of one step, unprofiled"]
                + [harness.fmt_time(res["steps"][n]["cpu"]) for n in names])
    return harness.markdown_table(["cost"] + names, rows, right=range(1, len(names) + 1))


def describe(res):
    return [
        "## Where the time goes: one step of three workloads, by cost",
        "",
        f"`chain`: value_and_grad of {res['chain_ops']:,} scalar ops; `mlp`: the MLP "
        f"step below; `least squares`: {lsq.STEPS} steps of MLX's linear-regression "
        f"example ({res['lsq_examples']}x{lsq.FEATURES} float32). Share of the time `cProfile` saw, and "
        "the Python-level calls made, per step (benchmarks/costs.py says how each "
        "function is sorted).",
        "",
        table(res),
    ]
