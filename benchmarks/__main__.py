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

from . import checkpoint_memory, deep_chain, harness, mlp, seed_grad

WORKLOADS = ("seed", "chain", "mlp", "checkpoint")


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

    if "seed" in only:
        harness.progress("seed gradient")
        try:
            seed = seed_grad.run(quick=args.quick, repeats=args.repeats)
        except harness.Mismatch as exc:
            seed, failed = None, True
            results["seed_grad"] = {"mismatch": str(exc)}
            sections += ["", "## Seed gradient", "", f"**MISMATCH**: {exc}"]
        if seed is not None:
            results["seed_grad"] = seed
            failed |= bool(seed["errors"])
            sections += [
                "",
                "## Seed gradient: grad of sum(sin(x) * exp(x)) over n elements",
                "",
                f"x evenly spaced in [-2, 2]; median of {seed['repeats']} interleaved "
                "repeats (after one warm-up). Every column's gradient equals the "
                f"hand-written lists reference to 1e-9 (real MLX, float32, to "
                f"{seed_grad.MLX_TOLERANCE:g}).",
                "",
                seed_grad.table(seed),
            ]

    if "chain" in only:
        harness.progress("deep chain")
        try:
            chain = deep_chain.run(quick=args.quick, repeats=args.repeats)
        except harness.Mismatch as exc:
            chain, failed = None, True
            results["deep_chain"] = {"mismatch": str(exc)}
            sections += ["", "## Deep chain", "", f"**MISMATCH**: {exc}"]
        if chain is not None:
            results["deep_chain"] = chain
            failed |= any("error" in r for r in chain)
            sections += [
                "",
                "## Deep chain: value_and_grad through N scalar ops",
                "",
                f"Step `x = x + sin(x) * {deep_chain.SCALE} + {deep_chain.SHIFT}` "
                f"({deep_chain.OPS_PER_STEP} primitives) on a 0-d float32 array, from "
                f"x0 = {deep_chain.X0}; {chain[0]['repeats']} repeat(s) per N. Target: "
                f"doubling N costs at most {deep_chain.TARGET_DOUBLING}x. Every value and "
                "gradient equals the float reference to 1e-9.",
                "",
                deep_chain.table(chain),
            ]

    if "mlp" in only:
        harness.progress("mlp")
        try:
            res = mlp.run(quick=args.quick, repeats=args.repeats)
        except harness.Mismatch as exc:
            res, failed = None, True
            results["mlp"] = {"mismatch": str(exc)}
            sections += ["", "## MLP step", "", f"**MISMATCH**: {exc}"]
        if res is not None:
            results["mlp"] = res
            failed |= bool(res["errors"])
            sizes = "-".join(str(s) for s in res["sizes"])
            sections += [
                "",
                f"## MLP step: value_and_grad of a {sizes} ReLU MLP, batch {res['batch']}, MSE",
                "",
                f"Median of {res['repeats']} interleaved repeats (after one warm-up); "
                f"seed {res['seed']}, loss {res['loss']:.12g}. The loss and every "
                "gradient agree across the implementations to 1e-9"
                + (
                    f" (real MLX, float32, to {mlp.MLX_TOLERANCE:g}; device: {res['mlx_device']})."
                    if res["mlx_device"]
                    else "."
                ),
                "",
                mlp.table(res),
            ]

    if "checkpoint" in only:
        harness.progress("checkpoint memory")
        res = checkpoint_memory.run(quick=args.quick)
        results["checkpoint_memory"] = res
        failed |= res["max_gradient_difference"] > 1e-9
        sections += [
            "",
            f"## checkpoint: peak memory of a gradient through {res['layers']} tanh layers",
            "",
            f"Batch {res['batch']}, width {res['width']}; `mx.get_peak_memory()` over the "
            "gradient's evaluation, above the memory alive before it.",
            "",
            checkpoint_memory.table(res),
        ]

    print("\n".join(sections))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
        harness.progress(f"wrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
