"""The benchmarks' workloads, once each at a tiny size: results only, never timings.

Each workload's mlxref result must equal its hand-written reference (to 1e-9),
so neither the benchmark code nor the references can rot unnoticed. The list-
based MLP reference is itself checked against central differences of its loss.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import deep_chain, harness, mlp, seed_grad  # noqa: E402
from benchmarks.scalar_graph import ClosureValue, Value  # noqa: E402

TINY_CHAIN = 40  # ops: 10 steps
TINY_MLP = {"sizes": (2, 3, 4, 1), "batch": 5, "seed": 1}
TINY_SEED = (2, 20)


def test_deep_chain_matches_the_float_reference():
    (value, grad), (ref_value, ref_grad) = deep_chain.check(TINY_CHAIN)
    assert abs(value - ref_value) <= 1e-9
    assert abs(grad - ref_grad) <= 1e-9
    # The gradient must be informative: neither vanished nor trivially one.
    assert 0.5 < grad < 2.0 and grad != 1.0


def test_deep_chain_forward_matches_the_float_reference():
    value = deep_chain.mlxref_forward(TINY_CHAIN)
    assert abs(value - deep_chain.reference_value_and_grad(TINY_CHAIN)[0]) <= 1e-9


def test_deep_chain_rejects_lengths_that_are_not_whole_steps():
    with pytest.raises(ValueError):
        deep_chain.reference_value_and_grad(deep_chain.OPS_PER_STEP + 1)


MLP_NAMES = {"mlxref", "lists", "lean scalar Value", "micrograd-style Value"} | (
    {mlp.MLX_NAME} if mlp.MLX_NAME else set()
)


def test_mlp_implementations_agree():
    results = mlp.check(**TINY_MLP)  # raises unless all agree (real MLX: to 1e-5)
    assert set(results) == MLP_NAMES
    want_loss, want_grads = results["lists"]
    assert sorted(want_grads) == ["W1", "W2", "W3", "b1", "b2", "b3"]
    for name in ("mlxref", "lean scalar Value", "micrograd-style Value"):
        loss, grads = results[name]
        assert abs(loss - want_loss) <= 1e-9, name
        for k, g in want_grads.items():
            assert harness.max_error(grads[k], g) <= 1e-9, (name, k)
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
    monkeypatch.setattr(mlp, "SIZES", TINY_MLP["sizes"])
    monkeypatch.setattr(mlp, "BATCH", TINY_MLP["batch"])
    monkeypatch.setattr(mlp, "QUICK_REPEATS", 1)
    monkeypatch.setattr(seed_grad, "QUICK_SIZES", TINY_SEED)
    monkeypatch.setattr(seed_grad, "QUICK_REPEATS", 1)
    path = tmp_path / "out.json"
    assert cli.main(["--quick", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "## Deep chain" in out and "## MLP step" in out and "| mlxref " in out
    import json

    data = json.loads(path.read_text())
    assert [r["n_ops"] for r in data["deep_chain"]] == [TINY_CHAIN, 2 * TINY_CHAIN]
    assert set(data["mlp"]["median_s"]) == MLP_NAMES
    assert data["mlp"]["sizes"] == list(TINY_MLP["sizes"])
    assert [r["n"] for r in data["seed_grad"]["rows"]] == list(TINY_SEED)
    assert "## Seed gradient" in out


@pytest.mark.parametrize("n", [1, 5, 50])
def test_seed_gradient_columns_agree_with_the_closed_form(n):
    import math

    results = seed_grad.check(n)  # raises unless every column equals the lists reference
    assert {"mlxref", "lists", "micrograd-style Value"} <= set(results)
    x = seed_grad.metal.seed_input(n)
    want = [math.exp(v) * (math.sin(v) + math.cos(v)) for v in x]
    assert harness.max_error(results["lists"], want) <= 1e-12
