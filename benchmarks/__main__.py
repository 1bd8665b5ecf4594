"""``python -m benchmarks [--quick] [--json PATH] [--only NAME] [--repeats K]``.

Prints a Markdown report on stdout and progress on stderr. Exits 1 when an
implementation disagrees with its reference (or raised), so ``make bench``
fails loudly instead of reporting the speed of a wrong answer; missing a
speed target is reported, not an error.
"""

import argparse
import datetime
import json
import platform
import sys

from mlxref.backends import metal

from . import (
    charlm, checkpoint_memory, compile_gelu, costs, deep_chain, drawing_limits, examples,
    grading, harness, lsq, mlp, per_example, seed_grad,
)

WORKLOADS = ("costs", "seed", "chain", "mlp", "lsq", "vmap", "checkpoint", "drawing", "charlm",
             "gelu", "grading", "examples")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (< 1 minute)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--only", choices=WORKLOADS, action="append", help="run only this workload")
    parser.add_argument("--repeats", type=int, help="override the number of timed repeats")
    args = parser.parse_args(argv)
    only = args.only or WORKLOADS

    results = {
        "meta": {
            "quick": args.quick,
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "machine": platform.machine(),
            "platform": platform.platform(),
            "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "timer": "time.perf_counter, median over repeats",
            "mlx_device": metal.device() if metal.available() else None,
        }
    }
    failed = False
    sections = [
        "# mlxref benchmarks" + (" (--quick)" if args.quick else ""),
        "",
        f"Python {platform.python_version()} ({platform.python_implementation()}) on "
        f"{platform.machine()}; times are medians of `time.perf_counter` over repeats.",
    ]
    if metal.available():
        sections += ["", f"Real MLX runs on: **{metal.device()}**."]
    else:
        line = f"Real MLX is not installed, so it has no column; to get it: {metal.install_hint()}"
        sections += ["", line]
        results["meta"]["mlx_missing"] = line

    for name in [n for n in WORKLOADS if n in only]:  # in order, each once
        key, title, run, disagrees, describe = _WORKLOAD_TABLE[name]
        harness.progress(title)
        try:
            res = run(args)
        except harness.Mismatch as exc:
            results[key] = {"mismatch": str(exc)}
            sections += ["", f"## {title}", "", f"**MISMATCH**: {exc}"]
            failed = True
            continue
        results[key] = res
        failed |= disagrees(res)
        sections += [""] + describe(res)

    print("\n".join(sections))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
        harness.progress(f"wrote {args.json}")
    return 1 if failed else 0


# --- one entry per workload: how to run it, when it disagrees, how to report it ---

COMPILED = (" The `mlxref compile` column is the mlxref step under `mx.compile` (traced in "
            "the warm-up, then served from compile's cache), checked equal to the `mlxref` "
            "column bit for bit before any time is taken.")


def _describe_seed(seed):
    return [
        "## Seed gradient: grad of sum(sin(x) * exp(x)) over n elements",
        "",
        f"x evenly spaced in [-2, 2]; median of {seed['repeats']} interleaved "
        "repeats (after one warm-up). Every column's gradient equals the "
        f"hand-written lists reference to 1e-9 (mlxref and real MLX, in float32, to "
        f"{seed_grad.FLOAT32_TOLERANCE:g})." + COMPILED,
        "",
        seed_grad.table(seed),
    ]


def _describe_chain(chain):
    return [
        "## Deep chain: value_and_grad through N scalar ops",
        "",
        f"Step `x = x + sin(x) * {deep_chain.SCALE} + {deep_chain.SHIFT}` "
        f"({deep_chain.OPS_PER_STEP} primitives) on a 0-d array, from "
        f"x0 = {deep_chain.X0}; median of {chain['repeats']} interleaved repeat(s) per N "
        "(after one warm-up). Every value and gradient equals the hand-written float "
        f"reference to 1e-9 (mlxref and real MLX, in float32, to {deep_chain.FLOAT32_TOLERANCE:g})."
        + COMPILED,
        "",
        deep_chain.table(chain),
    ]


def _describe_vmap(res):
    return [
        "## Per-example gradients: vmap(grad) of (tanh(sum(x * w)) - y)^2",
        "",
        f"The gradient with respect to w (dimension {res['dim']}) for every example "
        f"of a batch; median of {res['repeats']} interleaved repeats (after one "
        "warm-up). Every column equals the hand-written lists reference to 1e-9 "
        f"(mlxref and real MLX, in float32, to {per_example.FLOAT32_TOLERANCE:g})." + COMPILED,
        "",
        per_example.table(res),
    ]


def _describe_mlp(res):
    sizes = "-".join(str(s) for s in res["sizes"])
    mlx = (
        f" (mlxref and real MLX, in float32, to {mlp.FLOAT32_TOLERANCE:g}; device: {res['mlx_device']})."
        if res["mlx_device"]
        else "."
    )
    return [
        f"## MLP step: value_and_grad of a {sizes} ReLU MLP, batch {res['batch']}, MSE",
        "",
        f"Median of {res['repeats']} interleaved repeats (after one warm-up); "
        f"seed {res['seed']}, loss {res['loss']:.12g}. The loss and every "
        "gradient agree across the implementations to 1e-9" + mlx + COMPILED,
        "",
        mlp.table(res),
    ]


def _describe_lsq(res):
    mlx = (f" (real MLX, in float32, to {lsq.FLOAT32_TOLERANCE:g}; device: {res['mlx_device']})"
           if res["mlx_device"] else "")
    return [
        f"## Least squares: one grad step of MLX's linear-regression example ({res['features']} features)",
        "",
        "`w - lr * grad(0.5 * mean(square(X @ w - y)))`, evaluated; `lists` is the same update "
        "by hand, two `sum(map(mul, ...))` passes (X's columns sliced outside the clock). "
        f"Median of {res['repeats']} interleaved repeats (after one warm-up). Every column's "
        f"new w equals the double-precision reference to {lsq.FLOAT32_TOLERANCE:g}" + mlx + ".",
        "",
        lsq.table(res),
    ]


def _describe_examples(res):
    return [
        "## MLX's examples: linear_regression.py and logistic_regression.py, unchanged",
        "",
        f"{res.get('iterations', examples.ITERATIONS):,} iterations each, read from MLX_GIT_DIR "
        "and run in a fresh interpreter with both generators seeded with 0; CPU seconds of "
        "the child. mlxref prints what real MLX prints, apart from the throughput"
        + (f" (after so few iterations, to {examples.QUICK_TOLERANCE:g} relative)."
           if res.get("iterations") == examples.QUICK_ITERATIONS else "."),
        "",
        examples.table(res),
    ]


def _describe_checkpoint(res):
    return [
        f"## checkpoint: peak memory of a gradient through {res['layers']} tanh layers",
        "",
        f"Batch {res['batch']}, width {res['width']}; `mx.get_peak_memory()` over the "
        "gradient's evaluation, above the memory alive before it.",
        "",
        checkpoint_memory.table(res),
    ]


def _describe_charlm(res):
    c = res["config"]
    mlx = (f"; real MLX's agree with them to {charlm.FLOAT32_TOLERANCE:g} (device: {res['mlx_device']})"
           if res["mlx_device"] else "")
    return [
        "## Character-level LM step: chapter 12's transformer, one AdamW step",
        "",
        f"`tutorials/examples/char_lm.py` with context {c['context']}, {c['dims']} dims, "
        f"{c['heads']} heads, {c['layers']} block(s); value_and_grad of the mean cross "
        "entropy, the AdamW update and eval, per batch size. Median of "
        f"{res['repeats']} interleaved repeats (after one warm-up), each from a model "
        "freshly built from the seed. mlxref's own loss and gradients are the reference "
        "(the mlxref column's warm-up must reproduce them exactly: the run is "
        "deterministic)" + mlx + ".",
        "",
        charlm.table(res),
    ]


def _describe_gelu(res):
    return [
        "## Compile: value_and_grad of sum(gelu(x)), gelu(x) = x * (1 + erf(x / sqrt(2))) / 2",
        "",
        "x evenly spaced in [-4, 4] (float32); `mlxref` is unfused, `mlxref compile` is "
        "`mx.compile(mx.value_and_grad(loss))` (traced in the warm-up), and real MLX's "
        f"column compiles the same way. Median of {res['repeats']} interleaved repeats "
        "(after one warm-up). Every column's value and gradient equal the hand-written "
        f"double-precision reference to {compile_gelu.FLOAT32_TOLERANCE:g}, and the "
        "compiled mlxref column equals the uncompiled one bit for bit.",
        "",
        compile_gelu.table(res),
    ]


# name: (JSON key, title, run(args), disagrees(result), describe(result) -> lines)
def _describe_drawing(res):
    return [
        "## Drawing limits: the drawings a lecturer found too slow, with the default limits",
        "",
        "Each row is one `mlxref graph` command in a child process: wall time, peak "
        f"memory (max RSS) and exit status (2: refused in one line). Target: under "
        f"{drawing_limits.SECONDS:g} s and {drawing_limits.MEGABYTES:g} MB each. Load average "
        f"{res['load']:.1f} on {res['cpus']} CPUs when it ended. "
        "`python -m benchmarks.drawing_limits` adds a column with the limits raised.",
        "",
        drawing_limits.table(res),
    ]


def _describe_grading(res):
    return [
        "## Grading: `mlxref assignment grade` of an honest submission, three tasks",
        "",
        "This checkout graded against itself, in a child process; median of "
        f"{res['repeats']} runs (after one warm-up). Every task earns full points. "
        f"Load average {res['load']:.1f} on {res['cpus']} CPUs when it ended.",
        "",
        grading.table(res),
    ]


_WORKLOAD_TABLE = {
    "costs": ("costs", "Where the time goes", costs.run, lambda r: False, costs.describe),
    "seed": ("seed_grad", "Seed gradient",
             lambda a: seed_grad.run(quick=a.quick, repeats=a.repeats),
             lambda r: bool(r["errors"]), _describe_seed),
    "chain": ("deep_chain", "Deep chain",
              lambda a: deep_chain.run(quick=a.quick, repeats=a.repeats),
              lambda r: bool(r["errors"]), _describe_chain),
    "mlp": ("mlp", "MLP step",
            lambda a: mlp.run(quick=a.quick, repeats=a.repeats),
            lambda r: bool(r["errors"]), _describe_mlp),
    "lsq": ("lsq", "Least-squares step",
            lambda a: lsq.run(quick=a.quick, repeats=a.repeats),
            lambda r: bool(r["errors"]), _describe_lsq),
    "examples": ("examples", "MLX's examples",
                 lambda a: examples.run(quick=a.quick),
                 lambda r: False, _describe_examples),
    "vmap": ("per_example", "Per-example gradients",
             lambda a: per_example.run(quick=a.quick, repeats=a.repeats),
             lambda r: bool(r["errors"]), _describe_vmap),
    "checkpoint": ("checkpoint_memory", "checkpoint memory",
                   lambda a: checkpoint_memory.run(quick=a.quick),
                   lambda r: r["max_gradient_difference"] > 1e-9, _describe_checkpoint),
    "drawing": ("drawing_limits", "Drawing limits", lambda a: drawing_limits.measure(),
                lambda r: False, _describe_drawing),
    "charlm": ("charlm", "Character-level LM step",
               lambda a: charlm.run(quick=a.quick, repeats=a.repeats),
               lambda r: bool(r["errors"]), _describe_charlm),
    "gelu": ("compile_gelu", "Compile: gelu",
             lambda a: compile_gelu.run(quick=a.quick, repeats=a.repeats),
             lambda r: bool(r["errors"]), _describe_gelu),
    "grading": ("grading", "Grading three tasks",
                lambda a: grading.run(quick=a.quick, repeats=a.repeats),
                lambda r: False, _describe_grading),
}


if __name__ == "__main__":
    sys.exit(main())
