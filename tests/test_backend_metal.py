"""mlxref.backends.metal: real MLX as the benchmarks' timing column.

Each backend function must return a positive time and the same values as
mlxref computes for the same program (float32 on MLX's side: rtol 1e-4).
The backend is never used to compute mlxref's results; here mlxref is the
reference and MLX is checked against it.
"""

import math
import os
import sys

import pytest

import mlxref.core as mx
from mlxref.backends import metal

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import checkpoint_memory, deep_chain, harness, mlp  # noqa: E402

needs_mlx = pytest.mark.skipif(
    not metal.available(), reason=f"mlx is not installed ({metal.install_hint()})"
)

RTOL = 1e-4


def assert_close(got, want):
    g, w = harness.flatten(got), harness.flatten(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert math.isclose(a, b, rel_tol=RTOL, abs_tol=RTOL * 1e-2), (a, b)


def test_install_hint_is_one_line():
    assert metal.install_hint() == "pip install -e '.[metal]'"


def test_available_matches_importability():
    try:
        import mlx.core  # noqa: F401
    except Exception:  # noqa: BLE001
        assert metal.available() is False
    else:
        assert metal.available() is True


@needs_mlx
def test_device_label():
    import mlx.core as real

    want = "Metal GPU" if real.metal.is_available() else "MLX CPU build"
    assert metal.device() == want
    assert metal.label() == f"MLX ({want})"


@needs_mlx
@pytest.mark.parametrize("n", [1, 7, 100])
def test_seed_grad_matches_mlxref(n):
    t, got = metal.seed_grad(n)
    assert t > 0
    x = mx.array(metal.seed_input(n))
    want = mx.grad(lambda v: mx.sum(mx.sin(v) * mx.exp(v)))(x).tolist()
    assert_close(got, want)


@needs_mlx
def test_mlp_step_matches_mlxref():
    params, X, Y = mlp.make_problem(sizes=(2, 3, 4, 1), batch=5, seed=1)
    t, (loss, grads) = metal.mlp_step(params, X, Y)
    assert t > 0
    want_loss, want_grads = mlp.mlxref_result(mlp.mlxref_step(*mlp.mlxref_inputs(params, X, Y)))
    assert math.isclose(loss, want_loss, rel_tol=RTOL)
    assert sorted(grads) == sorted(want_grads)
    for k in want_grads:
        assert_close(grads[k], want_grads[k])


@needs_mlx
def test_chain_grad_matches_mlxref():
    t, (value, grad) = metal.chain_grad(400)
    assert t > 0
    want_value, want_grad = deep_chain.mlxref_value_and_grad(400)
    assert math.isclose(value, want_value, rel_tol=RTOL)
    assert math.isclose(grad, want_grad, rel_tol=RTOL)


@needs_mlx
def test_chain_grad_rejects_partial_steps():
    with pytest.raises(ValueError):
        metal.chain_grad(5)


@needs_mlx
def test_vmap_grad_matches_mlxref():
    w, X, y = metal.vmap_input(batch=6, dim=4)
    t, got = metal.vmap_grad(w, X, y)
    assert t > 0

    def loss(w, x, y):
        d = mx.tanh(mx.sum(x * w)) - y
        return d * d

    want = mx.vmap(mx.grad(loss), in_axes=(None, 0, 0))(mx.array(w), mx.array(X), mx.array(y))
    assert_close(got, want.tolist())
    assert len(got) == 6 and len(got[0]) == 4


@needs_mlx
def test_checkpoint_peaks_match_mlxref_gradient_and_shrink_the_peak():
    # The benchmark's size: smaller problems drown in MLX's allocation granularity.
    weights, x = checkpoint_memory.make_problem()
    want = mx.grad(checkpoint_memory.loss_plain)(x, weights).tolist()
    ratios = []
    for _ in range(3):  # MLX's scheduler makes its peak vary from run to run: the best of 3
        out = metal.checkpoint_peaks(x.tolist(), [w.tolist() for w in weights],
                                     checkpoint_memory.BLOCK)
        assert sorted(out) == ["checkpoint", "plain"]
        for key, (peak, grad) in out.items():
            assert peak > 0, key
            assert_close(grad, want)
        ratios.append(out["checkpoint"][0] / out["plain"][0])
    # Measured 0.65-0.74 over repeated runs; 1.0 would mean nothing was checkpointed.
    assert min(ratios) < 0.9, ratios


def test_functions_raise_a_clear_error_without_mlx(monkeypatch):
    monkeypatch.setattr(metal, "_mx", None)
    assert metal.available() is False
    with pytest.raises(RuntimeError, match=r"pip install -e '\.\[metal\]'"):
        metal.seed_grad(3)
    with pytest.raises(RuntimeError, match=r"pip install"):
        metal.checkpoint_peaks([[0.0]], [[[1.0]]], 1)
