"""The benchmarks' workloads, once each at a tiny size: results only, never timings.

Each workload's mlxref result must equal its hand-written reference (to 1e-9
in double precision; mlxref computes in float32, so to the workload's
``FLOAT32_TOLERANCE``),
so neither the benchmark code nor the references can rot unnoticed. The list-
based MLP reference is itself checked against central differences of its loss.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import (  # noqa: E402
    charlm, compile_gelu, costs, deep_chain, drawing_limits, examples, grading, harness, lsq, mlp,
    per_example, seed_grad,
)
from benchmarks.scalar_graph import ClosureValue, Value  # noqa: E402
import mlxref.core as mx  # noqa: E402
from support import frozen_heap  # noqa: E402, F401  (the fixture)

TINY_CHAIN = 40  # ops: 10 steps
TINY_MLP = {"sizes": (2, 3, 4, 1), "batch": 5, "seed": 1}
TINY_SEED = (2, 20)


# The harness runs a full collection before every measurement. In the suite's
# process the heap holds everything earlier tests left, and each collection
# walked all of it (47 s for the quick report, 1 s alone): frozen_heap moves it
# out of the collector's reach while this file runs.
pytestmark = pytest.mark.usefixtures("frozen_heap")


def test_deep_chain_matches_the_float_reference():
    (value, grad), (ref_value, ref_grad) = deep_chain.check(TINY_CHAIN)
    # float32: within its rounding of the double-precision reference, not equal to it
    assert 0 < abs(value - ref_value) <= 1e-6 * abs(ref_value)
    assert abs(grad - ref_grad) <= 1e-6 * abs(ref_grad)
    # The gradient must be informative: neither vanished nor trivially one.
    assert 0.5 < grad < 2.0 and grad != 1.0


def test_deep_chain_forward_matches_the_float_reference():
    value = deep_chain.mlxref_forward(TINY_CHAIN)
    want = deep_chain.reference_value_and_grad(TINY_CHAIN)[0]
    assert abs(value - want) <= 1e-6 * abs(want)


def test_deep_chain_columns_agree_with_the_float_reference():
    results = harness.check_columns(
        "chain", TINY_CHAIN, deep_chain.reference_value_and_grad, deep_chain.implementations()
    )
    want = deep_chain.reference_value_and_grad(TINY_CHAIN)
    assert results["micrograd-style Value"] == pytest.approx(want, rel=1e-12)
    assert results["mlxref forward only"] == pytest.approx(want[0], rel=1e-6)


def test_deep_chain_rejects_lengths_that_are_not_whole_steps():
    with pytest.raises(ValueError):
        deep_chain.reference_value_and_grad(deep_chain.OPS_PER_STEP + 1)


MLP_NAMES = {"mlxref", mlp.COMPILED, mlp.KERNELS, "lists", "lean scalar Value",
             "micrograd-style Value"} | (
    {mlp.metal.label()} if mlp.metal.available() else set()
)


def test_mlp_implementations_agree():
    results = mlp.check(**TINY_MLP)  # raises unless all agree (real MLX: to 1e-5)
    assert set(results) == MLP_NAMES
    want_loss, want_grads = results["lists"]
    assert sorted(want_grads) == ["W1", "W2", "W3", "b1", "b2", "b3"]
    assert harness.check_exact("mlp", results[mlp.COMPILED], results["mlxref"])
    for name in ("mlxref", "lean scalar Value", "micrograd-style Value"):
        loss, grads = results[name]
        tol = mlp.FLOAT32_TOLERANCE if name == "mlxref" else 1e-9  # mlxref is float32
        assert abs(loss - want_loss) <= tol, name
        for k, g in want_grads.items():
            assert harness.max_error(grads[k], g) <= tol, (name, k)
    # The kernels column: the three weights' gradients, from the products alone.
    loss, grads = results[mlp.KERNELS]
    assert loss is None and sorted(grads) == ["W1", "W2", "W3"]
    for k, g in grads.items():
        assert harness.max_error(g, want_grads[k]) <= mlp.FLOAT32_TOLERANCE, k
    # Not a degenerate problem: some gradient of every parameter is nonzero.
    for k, g in want_grads.items():
        assert any(v != 0.0 for v in harness.flatten(g)), k


def test_mlp_list_reference_matches_central_differences():
    params, X, Y = mlp.make_problem(**TINY_MLP)
    _, grads = mlp.lists_step(params, X, Y)
    h = 1e-6
    for k, value in params.items():
        rows = value if isinstance(value[0], list) else [value]
        g_rows = grads[k] if isinstance(grads[k][0], list) else [grads[k]]
        for row, g_row in zip(rows, g_rows):
            for j in range(len(row)):
                saved = row[j]
                row[j] = saved + h
                up = mlp.lists_step(params, X, Y)[0]
                row[j] = saved - h
                down = mlp.lists_step(params, X, Y)[0]
                row[j] = saved
                assert abs((up - down) / (2 * h) - g_row[j]) <= 1e-6, (k, j)


@pytest.mark.parametrize("node", [Value, ClosureValue])
def test_scalar_graph_backward_is_iterative_and_accumulates_fan_out(node):
    x = node(0.5)
    y = x
    for _ in range(5000):  # far deeper than the recursion limit
        y = y * 1.0 + x * 0.0
    y = y * y + x  # d/dx (x^2 + x) = 2x + 1, through a 10,000-deep graph
    y.backward()
    assert y.data == 0.75 and x.grad == 2.0


def test_benchmark_cli_quick_report(tmp_path, monkeypatch, capsys):
    # The report and JSON machinery, on the tiny workloads with one repeat.
    # Its times are neither printed by the test nor checked.
    from benchmarks import __main__ as cli

    monkeypatch.setattr(deep_chain, "QUICK_SIZES", (TINY_CHAIN, 2 * TINY_CHAIN))
    monkeypatch.setattr(per_example, "QUICK_SIZES", (2, 6))
    monkeypatch.setattr(per_example, "QUICK_REPEATS", 1)
    monkeypatch.setattr(mlp, "SIZES", TINY_MLP["sizes"])
    monkeypatch.setattr(mlp, "BATCH", TINY_MLP["batch"])
    monkeypatch.setattr(mlp, "QUICK_REPEATS", 1)
    monkeypatch.setattr(seed_grad, "QUICK_SIZES", TINY_SEED)
    monkeypatch.setattr(seed_grad, "QUICK_REPEATS", 1)
    # One refused drawing (a budget of 1 element operation), in a child process.
    monkeypatch.setattr(drawing_limits, "cases",
                        lambda directory: [("x + x", ["x + x", "--at", "x=3", "--max-work", "1"])])
    monkeypatch.setattr(charlm, "CONFIG", charlm.char_lm.TINY)
    monkeypatch.setattr(charlm, "QUICK_SIZES", (2,))
    monkeypatch.setattr(charlm, "QUICK_REPEATS", 1)
    monkeypatch.setattr(compile_gelu, "QUICK_SIZES", (30,))
    monkeypatch.setattr(compile_gelu, "QUICK_REPEATS", 1)
    monkeypatch.setattr(grading, "TASKS", ("1.1",))
    monkeypatch.setattr(lsq, "QUICK_SIZES", (30,))
    monkeypatch.setattr(lsq, "QUICK_REPEATS", 1)
    monkeypatch.setattr(lsq, "STEPS", 1)
    monkeypatch.setattr(costs, "QUICK_CHAIN_OPS", TINY_CHAIN)
    monkeypatch.delenv("MLX_GIT_DIR", raising=False)
    path = tmp_path / "out.json"
    assert cli.main(["--quick", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "## Deep chain" in out and "## MLP step" in out and "| mlxref " in out
    import json

    data = json.loads(path.read_text())
    assert [r["n"] for r in data["deep_chain"]["rows"]] == [TINY_CHAIN, 2 * TINY_CHAIN]
    assert list(data["deep_chain"]["doubling"]) == [str(2 * TINY_CHAIN)]
    assert [r["n"] for r in data["per_example"]["rows"]] == [2, 6]
    assert "## Per-example gradients" in out and "## checkpoint" in out
    columns = {"mlxref", "lists", "micrograd-style Value"}
    assert columns <= set(data["per_example"]["columns"])
    for key in ("seed_grad", "deep_chain", "per_example"):
        res = data[key]
        # Every column that ran has a time and a scaling ratio between the two sizes.
        for name in res["columns"]:
            assert all(name in row["median_s"] for row in res["rows"]), (key, name)
            assert len(res["scaling"][name]) == 1, (key, name)
    assert set(data["mlp"]["median_s"]) == MLP_NAMES
    assert data["mlp"]["sizes"] == list(TINY_MLP["sizes"])
    assert [r["n"] for r in data["seed_grad"]["rows"]] == list(TINY_SEED)
    assert "## Seed gradient" in out
    ((title, seconds, mb, status),) = data["drawing_limits"]["rows"]
    assert (title, status) == ("x + x", 2) and seconds > 0 and mb > 0
    assert "## Drawing limits" in out and "| x + x |" in out
    assert "## Character-level LM step" in out
    assert data["charlm"]["config"]["dims"] == charlm.char_lm.TINY.dims
    assert [r["n"] for r in data["charlm"]["rows"]] == [2]
    assert set(data["charlm"]["rows"][0]["median_s"]) == MLP_NAMES & {"mlxref", mlp.metal.label()}
    assert "| mlxref / mlxref compile " in out and data["mlp"]["compile_speedup"] > 0
    assert "## Compile: value_and_grad of sum(gelu(x))" in out and "target 2x" in out
    assert list(data["compile_gelu"]["speedup"]) == ["30"]
    assert "## Grading" in out and data["grading"]["tasks"] == ["1.1"]
    assert "## Least squares" in out and [r["n"] for r in data["lsq"]["rows"]] == [30]
    assert "## MLX's examples" in out and "Skipped: no MLX git dir" in out
    assert data["grading"]["wall"] > 0 and data["grading"]["per_task"] == data["grading"]["wall"]
    assert "## Where the time goes" in out and data["costs"]["chain_ops"] == TINY_CHAIN
    assert f"`least squares`: {lsq.STEPS} steps" in out
    assert set(data["costs"]["steps"]) == {"chain", "mlp", "least squares"}


def test_charlm_columns_agree_on_a_real_step(monkeypatch):
    import math

    monkeypatch.setattr(charlm, "CONFIG", charlm.char_lm.TINY)
    problem = charlm.make_input(2)
    vocab_size, inputs, targets = problem
    assert len(inputs) == 2 and len(inputs[0]) == charlm.char_lm.TINY.context
    # raises unless mlxref reproduces its reference and MLX (if installed) matches it
    results = harness.check_columns("charlm", problem, charlm.reference, charlm.implementations())
    assert set(results) == MLP_NAMES & {"mlxref", mlp.metal.label()}
    loss, *grads = results["mlxref"]
    assert abs(loss - math.log(vocab_size)) < 0.5  # a model starting from chance
    assert all(any(v != 0.0 for v in harness.flatten(g)) for g in grads)


@pytest.mark.parametrize("n", [1, 5, 50])
def test_seed_gradient_columns_agree_with_the_closed_form(n):
    import math

    results = seed_grad.check(n)  # raises unless every column equals the lists reference
    assert {"mlxref", "lists", "micrograd-style Value"} <= set(results)
    x = seed_grad.make_input(n)
    want = [math.exp(v) * (math.sin(v) + math.cos(v)) for v in x]
    assert harness.max_error(results["lists"], want) <= 1e-12


@pytest.mark.parametrize("n", [1, 40])
def test_gelu_columns_agree_with_the_closed_form_and_compile_changes_no_bit(n):
    results = compile_gelu.check(n)  # raises unless every column equals the reference
    assert {"mlxref", compile_gelu.COMPILED} <= set(results)
    assert results["mlxref"] == results[compile_gelu.COMPILED]  # bit for bit
    # The reference against central differences of its own value, in double.
    x = compile_gelu.make_input(n)
    h = 1e-6
    for i in range(0, n, 7):
        up, down = list(x), list(x)
        up[i] += h
        down[i] -= h
        slope = (compile_gelu.reference(up)[0] - compile_gelu.reference(down)[0]) / (2 * h)
        assert abs(slope - compile_gelu.reference(x)[1][i]) < 1e-6
    if n > 1:  # gelu' goes from about 0 at -4 to about 1 at 4
        assert abs(results["mlxref"][1][0]) < 1e-3 and abs(results["mlxref"][1][-1] - 1) < 1e-3


def test_gelu_check_exact_raises_when_compile_changes_a_bit(monkeypatch):
    # A compiled column fed 1 + 2**-23 for 1.0 (one element, one ulp): the
    # benchmark must refuse to time it.
    step = compile_gelu.step

    def nudged(lib, compiled):
        run = step(lib, compiled)
        return (lambda a: run(a + lib.array([0.0] * 5 + [2.0**-23] + [0.0] * 3))) if compiled else run

    monkeypatch.setattr(compile_gelu, "step", nudged)
    with pytest.raises(harness.Mismatch, match="compiled mlxref differs from uncompiled"):
        compile_gelu.check_exact(9)


@pytest.mark.parametrize("batch", [1, 3, 17])
def test_per_example_columns_agree_with_the_hand_written_gradient(batch):
    results = per_example.check(batch)  # raises unless every column equals the lists one
    assert {"mlxref", "mlxref grad, looped", "lists", "micrograd-style Value"} <= set(results)
    want = results["lists"]
    assert len(want) == batch and all(len(row) == per_example.DIM for row in want)
    # Per example, not summed: rows differ, and each is a multiple of that example's x.
    w, X, y = per_example.make_input(batch)
    for row, x in zip(want, X):
        scale = row[0] / x[0]
        assert row == pytest.approx([scale * v for v in x], rel=1e-12)
    if batch > 1:
        assert want[0] != want[1]


def test_compiled_columns_equal_the_uncompiled_ones_bit_for_bit():
    # Each raises harness.Mismatch unless compile changes no bit.
    assert seed_grad.check_exact(20) == seed_grad.grad_step(mx)(
        *seed_grad.mlxref_prepare(seed_grad.make_input(20))).tolist()
    assert deep_chain.check_exact(TINY_CHAIN) == deep_chain.mlxref_value_and_grad(TINY_CHAIN)
    assert per_example.check_exact(3) is not None
    assert mlp.check_exact(**TINY_MLP) is not None
    for columns in (seed_grad.implementations(), deep_chain.implementations(),
                    per_example.implementations(), mlp.implementations()):
        assert "mlxref compile" in [c.name for c in columns]


def test_check_exact_compares_bits():
    assert harness.check_exact("x", {"a": [1.0, float("nan")]}, {"a": [1.0, float("nan")]})
    for compiled, plain in [([-0.0], [0.0]), ([1.0 + 2.0**-52], [1.0]), ([1.0], [1.0, 2.0])]:
        with pytest.raises(harness.Mismatch, match="compiled mlxref differs from uncompiled"):
            harness.check_exact("x", compiled, plain)


def test_per_example_list_reference_matches_central_differences():
    w, X, y = per_example.make_input(4)
    grads = per_example.lists_step((w, X, y))
    h = 1e-6

    def loss(w, x, t):
        import math

        return (math.tanh(sum(a * b for a, b in zip(x, w))) - t) ** 2

    for g, x, t in zip(grads, X, y):
        for j in range(len(w)):
            up = w[:j] + [w[j] + h] + w[j + 1 :]
            down = w[:j] + [w[j] - h] + w[j + 1 :]
            assert abs((loss(up, x, t) - loss(down, x, t)) / (2 * h) - g[j]) <= 1e-7


# --- the harness: columns run side by side ------------------------------------------------


def _square_columns(extra=()):
    return [
        harness.Column("mlxref", lambda n: (n,), lambda n: [float(i * i) for i in range(n)]),
        harness.Column("lists", lambda n: (n,), lambda n: [float(i) ** 2 for i in range(n)]),
        *extra,
    ]


def test_run_columns_reports_times_ratios_scaling_skips_and_errors():
    def broken(n):
        raise KeyError("boom")

    cols = _square_columns(
        [
            harness.Column("small only", lambda n: (n,), lambda n: [i * i for i in range(n)],
                           max_size=3),
            harness.Column("broken", lambda n: (n,), broken),
        ]
    )
    res = harness.run_columns("squares", (2, 4, 8), lambda n: n,
                              lambda n: [i * i for i in range(n)], cols, repeats=2)
    assert res["columns"] == ["mlxref", "lists", "small only", "broken"]
    assert [row["n"] for row in res["rows"]] == [2, 4, 8]
    first = res["rows"][0]
    assert set(first["median_s"]) == {"mlxref", "lists", "small only"}
    assert all(len(s) == 2 for s in first["samples_s"].values())
    assert first["over_mlxref"]["mlxref"] == 1.0
    assert first["over_mlxref"]["lists"] == first["median_s"]["lists"] / first["median_s"]["mlxref"]
    assert set(res["scaling"]["mlxref"]) == {"2->4", "4->8"}
    assert res["scaling"]["small only"] == {}  # it ran at n=2 only
    assert res["skipped"] == {"small only": [4, 8]}
    assert set(res["errors"]) == {"broken n=2", "broken n=4", "broken n=8"}
    assert res["errors"]["broken n=2"] == "KeyError: 'boom'"
    table = harness.columns_table(res, size_header="n")
    assert "**error**" in table and "skipped" in table and "2 → 4 (2x the size)" in table
    assert "small only skipped at n = 4, 8." in table and "**broken n=8: KeyError: 'boom'**" in table


def test_run_columns_raises_when_a_column_disagrees():
    wrong = harness.Column("wrong", lambda n: (n,), lambda n: [float(i * i + 1) for i in range(n)])
    with pytest.raises(harness.Mismatch, match=r"squares n=3 \(wrong\)"):
        harness.run_columns("squares", (3,), lambda n: n, lambda n: [i * i for i in range(n)],
                            _square_columns([wrong]), repeats=1)
    with pytest.raises(harness.Mismatch, match=r"squares \(wrong\)"):
        harness.check_columns("squares", 3, lambda n: [i * i for i in range(n)],
                              _square_columns([wrong]))


def test_fmt_ratio_keeps_small_ratios_readable():
    assert harness.fmt_ratio(1.234) == "1.23x"
    assert harness.fmt_ratio(0.00183) == "0.00183x"
    assert harness.fmt_ratio(None) == "-"


def test_without_mlx_the_report_says_how_to_get_it_and_runs_the_other_columns(
    tmp_path, monkeypatch, capsys
):
    from benchmarks import __main__ as cli

    monkeypatch.setattr(mlp.metal, "_mx", None)
    monkeypatch.setattr(per_example, "QUICK_SIZES", (2, 4))
    monkeypatch.setattr(mlp, "SIZES", TINY_MLP["sizes"])
    monkeypatch.setattr(mlp, "BATCH", TINY_MLP["batch"])
    path = tmp_path / "out.json"
    argv = ["--quick", "--only", "vmap", "--only", "mlp", "--repeats", "1", "--json", str(path)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    hint = "Real MLX is not installed, so it has no column; to get it: pip install -e '.[metal]'"
    assert out.count(hint) == 1 and "MLX (" not in out
    import json

    data = json.loads(path.read_text())
    assert data["meta"]["mlx_missing"] == hint and data["meta"]["mlx_device"] is None
    assert data["per_example"]["columns"] == [
        "mlxref", "mlxref compile", "mlxref grad, looped", "lists", "micrograd-style Value"
    ]
    assert set(data["mlp"]["median_s"]) == MLP_NAMES - {"MLX (MLX CPU build)", "MLX (Metal GPU)"}


def test_benchmark_cli_runs_one_workload(tmp_path, monkeypatch, capsys):
    # --only and --repeats: one workload's report and JSON, nothing else.
    import json

    from benchmarks import __main__ as cli

    monkeypatch.setattr(seed_grad, "QUICK_SIZES", TINY_SEED)
    path = tmp_path / "bench.json"
    assert cli.main(["--quick", "--only", "seed", "--repeats", "1", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "## Seed gradient" in out and "| mlxref " in out and "## MLP" not in out
    assert [r["n"] for r in json.loads(path.read_text())["seed_grad"]["rows"]] == list(TINY_SEED)


def test_lsq_columns_agree_with_the_double_precision_step(monkeypatch):
    monkeypatch.setattr(lsq, "STEPS", 2)
    results = lsq.check(30)  # raises unless every column equals the reference
    want = lsq.reference(lsq.make_input(30))
    assert len(want) == lsq.FEATURES
    assert harness.max_error(results["mlxref"], want) <= lsq.FLOAT32_TOLERANCE
    assert results["lists"] == want
    # The step moved w: a broken gradient could not pass as a no-op.
    w = lsq.make_input(30)[2]
    assert harness.max_error(want, w) > 1e-4


def test_examples_run_mlx_scripts_unchanged_but_for_their_iterations(tmp_path, monkeypatch):
    # A stand-in for MLX's repository: a work tree holding one example.
    script = tmp_path / "examples" / "python" / "tiny.py"
    script.parent.mkdir(parents=True)
    script.write_text(
        "import mlx.core as mx\n"
        "num_iters = 10_000\n"
        "w = mx.random.normal((3,))\n"
        "for _ in range(num_iters):\n"
        "    w = w - 0.5 * mx.grad(lambda w: mx.sum(mx.square(w)))(w)\n"
        "print(f'Sum {mx.sum(w).item():.5f}, first {mx.random.normal((1,)).item():.5f} "
        "Throughput 12.5 (it/s)')\n")
    monkeypatch.setattr(examples, "QUICK_ITERATIONS", 2)
    res = examples.run(quick=True, git_dir=str(tmp_path), examples=("tiny",))
    (row,) = res["rows"]
    out = row["output"]["mlxref"]
    # Seeded with 0: the same numbers as a seeded run in this process
    import mlxref.core as mx
    mx.random.seed(0)
    w = mx.random.normal((3,))
    for _ in range(2):
        w = w - 0.5 * mx.grad(lambda w: mx.sum(mx.square(w)))(w)
    want = f"Sum {mx.sum(w).item():.5f}, first {mx.random.normal((1,)).item():.5f}"
    assert out.startswith(want) and row["cpu_s"]["mlxref"] > 0
    if examples.metal.available():
        assert examples.agree(out, row["output"]["mlx"], examples.QUICK_TOLERANCE)
    assert "tiny" in examples.table(res)


def test_examples_compare_all_but_the_throughput():
    ours = "Loss 0.16620, Accuracy 0.98100 Throughput 66.94851 (it/s)\n"
    assert examples.agree(ours, ours.replace("66.94851", "1041.58936"))
    assert not examples.agree(ours, ours.replace("0.16620", "0.16621"))
    assert examples.agree(ours, ours.replace("0.16620", "0.16621"), tolerance=1e-4)
    assert not examples.agree(ours, ours.replace("0.16620", "0.17620"), tolerance=1e-4)
    assert not examples.agree(ours, ours.replace("Accuracy", "Acc"), tolerance=1e-4)
    with pytest.raises(RuntimeError):
        examples.with_iterations("num_iters = 5\nnum_iters = 6\n", 1)


def test_examples_skip_in_one_line_without_a_git_dir(monkeypatch):
    monkeypatch.delenv("MLX_GIT_DIR", raising=False)
    res = examples.run(quick=True)
    assert set(res) == {"skipped"} and "git clone" in res["skipped"]
    assert examples.table(res).count("\n") == 0


def test_costs_sort_every_function_of_the_engine_by_what_it_pays_for():
    where = {
        ("mlxref/core/backend/cpu/allocator.py", "donate"): "memory counters and donation",
        ("mlxref/core/array.py", "set_data"): "memory counters and donation",
        ("mlxref/core/array.py", "inputs"): "the handle and descriptor",
        ("mlxref/core/dtypes.py", "_store_float32"): "Dtype.store",
        ("mlxref/core/dtypes.py", "promote_types"): "promotion and conversion",
        ("mlxref/core/convert.py", "to_arrays"): "promotion and conversion",
        ("mlxref/core/ops/common.py", "broadcast_arrays"): "promotion and conversion",
        ("mlxref/core/transforms/vjp.py", "vjp"): "the transform's walk",
        ("mlxref/core/primitives/elementwise.py", "vjp"): "the transform's walk",
        ("mlxref/core/primitives/elementwise.py", "eval"): "the kernel's element loop",
        ("mlxref/core/backend/cpu/matmul.py", "matmul"): "the kernel's element loop",
        ("mlxref/core/primitives/base.py", "make_array"): "the op and its node",
        ("mlxref/core/ops/elementwise.py", "add"): "the op and its node",
        ("benchmarks/mlp.py", "loss"): costs.OTHER,
    }
    for (filename, function), cost in where.items():
        assert costs.cost_of("/x/" + filename, function) == cost, (filename, function)


def test_costs_split_a_real_profile_and_charge_builtins_to_their_callers():
    import cProfile
    import pstats

    x = costs.mx.arange(2000, dtype=costs.mx.float32) / 7
    profile = cProfile.Profile()
    profile.runcall(lambda: costs.mx.eval(costs.mx.sum(costs.mx.sin(x) * 2.0)))
    stats = pstats.Stats(profile)
    totals = costs.split(stats)
    assert set(totals) == {name for name, _ in costs.COSTS} | {costs.OTHER}
    # Every second of the profile lands in exactly one cost.
    whole = sum(tottime for _, _, tottime, _, _ in stats.stats.values())
    assert sum(seconds for seconds, _ in totals.values()) == pytest.approx(whole, rel=1e-3)
    # sin's element loop (math.sin, a built-in) is the kernel's; it made calls.
    assert totals["the kernel's element loop"][0] > 0
    assert totals["the op and its node"][1] > 0 and totals["memory counters and donation"][1] > 0


def test_mlp_kernels_column_makes_every_product_of_the_step():
    params, X, Y = mlp.make_problem(**TINY_MLP)
    operands, names = mlp.matmul_operands(params, X, Y)
    # Three forward products, and per layer a weight's gradient and (but for
    # the first layer, whose input is data) the product that carries the
    # cotangent back: the graph's Matmul nodes, each once.
    assert len(operands) == 3 + 3 + 2
    assert sorted(n[0] for n in names if n) == ["W1", "W2", "W3"]
    batch = TINY_MLP["batch"]
    for (a, b, a_shape, b_shape, dtype), name in zip(operands, names):
        assert len(a) == a_shape[0] * a_shape[1] and len(b) == b_shape[0] * b_shape[1]
        assert (a_shape[1] == batch) == (name is not None)  # a gradient sums over the batch
