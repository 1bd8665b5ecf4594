"""``mx.checkpoint`` (mlxref/core/transforms/checkpoint.py; MLX's mlx/transforms.cpp):
values, gradients, the transforms over it, and the memory it saves.

Every checkpointed function is built by a factory taking the module ``m``
(``mlxref.core`` or ``mlx.core``), so the same code runs on both libraries
and real MLX 0.32.4 is the oracle for values and messages. Where MLX crashes
(``checkpoint`` of a function with no array output segfaults) or has no rule
(``Depends`` has no vmap / jvp rule) the tests show MLX's behaviour (never
calling it where it would crash) and assert mlxref's better one.
"""

import re
import sys
from pathlib import Path

import pytest

import mlxref.core as mx
from support import (LIBS, assert_array, assert_same_array, assert_same_tree, real_mx,
                     same_tree_in_both, vector_batch, vector_x, vector_y)

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository's root

from benchmarks import checkpoint_memory  # noqa: E402

X, Y, BATCH = vector_x, vector_y, vector_batch


# =====================================================================================
# checkpoint
# =====================================================================================


def layer_of(m, calls=None):
    def f(x, w):
        if calls is not None:
            calls.append(1)
        return m.tanh(x * w) * m.sin(x) + x * x * w

    return f


def test_checkpoint_value_and_gradient_equal_the_plain_function():
    def program(m, wrap):
        f = wrap(m, layer_of(m))
        value = f(X(m), Y(m))
        grads = m.grad(lambda x, w: f(x, w).sum(), argnums=(0, 1))(X(m), Y(m))
        return value, grads

    plain = program(mx, lambda m, f: f)
    ckpt = same_tree_in_both(lambda m: program(m, lambda m, f: m.checkpoint(f)))
    assert_array(ckpt[0], plain[0].tolist())
    for a, b in zip(ckpt[1], plain[1]):
        assert_array(a, b.tolist())


def test_checkpointed_function_runs_twice_under_grad_once_without():
    for m in LIBS:
        calls = []
        f = m.checkpoint(layer_of(m, calls))
        m.eval(f(X(m), Y(m)))
        assert len(calls) == 1, m
        calls.clear()
        m.eval(m.grad(lambda x: f(x, Y(m)).sum())(X(m)))
        assert len(calls) == 2, m
        calls.clear()
        m.eval(m.grad(lambda x: layer_of(m, calls)(x, Y(m)).sum())(X(m)))
        assert len(calls) == 1, m


def test_checkpoint_gradients_reach_every_array_input_keywords_included():
    def program(m):
        ck = m.checkpoint(lambda a, bs, c=None: (a * bs[0] + bs[1] * c * a).sum() + (c * c).sum())
        return m.grad(lambda a, b0, b1, c: ck(a, [b0, b1], c=c), argnums=(0, 1, 2, 3))(
            X(m), Y(m), m.array([2.0, 3.0, 4.0]), m.array([1.0, -1.0, 0.5])
        )

    ga, gb0, gb1, gc = same_tree_in_both(program)
    assert_array(ga, [1.5 + 2.0, 0.3 - 3.0, -0.7 + 2.0])
    assert_array(gb0, [0.5, -1, 2])
    assert_array(gb1, [0.5, 1, 1])
    assert_array(gc, [2 * 0.5 + 2 * 1, 3 * -1.0 - 2 * 1, 4 * 2.0 + 2 * 0.5])  # b1 * a + 2c


def test_checkpoint_non_array_leaves_pass_through():
    def program(m):
        ck = m.checkpoint(lambda a, n, s, opts: (a * n * opts["k"], n, s))
        out = ck(X(m), 3, "x", {"k": 2.0})
        g = m.grad(lambda a: ck(a, 3, "x", {"k": 2.0})[0].sum())(X(m))
        return out, g

    (value, n, s), g = same_tree_in_both(program)
    assert n == 3 and s == "x"
    assert_array(value, [3, -6, 12])
    assert_array(g, [6, 6, 6])


def test_checkpoint_of_a_function_without_array_outputs_raises():
    # MLX 0.32.4 segfaults here (custom_function reads outputs[0] of an empty vector),
    # so only mlxref is called.
    message = "[checkpoint] The function must return at least one array"
    for fun in (lambda a: 1.0, lambda a: (3, "x"), lambda a: None):
        with pytest.raises(ValueError, match=re.escape(message)):
            mx.checkpoint(fun)(X(mx))


def plain_and_checkpointed(m):
    f = layer_of(m)
    g = lambda x: f(x, Y(m))  # noqa: E731
    return g, m.checkpoint(g)


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(lambda m, f: m.grad(lambda x: m.grad(lambda y: f(y).sum())(x).sum())(X(m)),
                     id="grad_grad"),
        pytest.param(lambda m, f: m.jvp(f, [X(m)], [m.array([1.0, -2.0, 0.5])]), id="jvp"),
        pytest.param(lambda m, f: m.vmap(f)(BATCH(m)), id="vmap"),
        pytest.param(lambda m, f: m.grad(lambda x: m.vmap(f)(x).sum())(BATCH(m)), id="grad_vmap"),
        pytest.param(lambda m, f: m.vjp(f, [X(m)], [m.array([1.0, 2.0, 3.0])]), id="vjp"),
    ],
)
def test_checkpoint_under_transforms_equals_plain_and_mlx(transform):
    ours = same_tree_in_both(lambda m: transform(m, plain_and_checkpointed(m)[1]))
    plain = transform(mx, plain_and_checkpointed(mx)[0])
    assert_same_array(ours, plain, rtol=1e-5, atol=1e-6)


BEYOND_MLX = {
    "vmap_grad": (
        lambda m, f: m.vmap(m.grad(lambda x: f(x).sum()))(BATCH(m)),
        "[Primitive::vmap] Not implemented for Depends.",
    ),
    "jvp_grad": (
        lambda m, f: m.jvp(m.grad(lambda x: f(x).sum()), [X(m)], [m.array([1.0, -2.0, 0.5])]),
        "[Primitive::jvp] Not implemented for Depends.",
    ),
}


@pytest.mark.parametrize("name", sorted(BEYOND_MLX))
def test_checkpoint_transforms_beyond_mlx(name):
    transform, mlx_message = BEYOND_MLX[name]
    ours = transform(mx, plain_and_checkpointed(mx)[1])
    plain = transform(mx, plain_and_checkpointed(mx)[0])
    assert_same_array(ours, plain, rtol=1e-5, atol=1e-6)
    if real_mx is not None:
        with pytest.raises(ValueError) as info:
            transform(real_mx, plain_and_checkpointed(real_mx)[1])
        assert str(info.value) == mlx_message
        # ... and the plain function's result agrees with MLX's.
        assert_same_tree(plain, transform(real_mx, plain_and_checkpointed(real_mx)[0]))


def test_vmap_grad_checkpoint_of_a_function_of_the_input_only():
    f = lambda x: mx.tanh(x * 2.0) * mx.sin(x)  # noqa: E731
    ours = mx.vmap(mx.grad(lambda x: mx.checkpoint(f)(x).sum()))(BATCH(mx))
    plain = mx.vmap(mx.grad(lambda x: f(x).sum()))(BATCH(mx))
    assert_array(ours, plain.tolist())


def test_vmap_grad_checkpoint_with_an_unbatched_array_argument():
    w = Y(mx)
    ck = mx.checkpoint(layer_of(mx))
    ours = mx.vmap(mx.grad(lambda x: ck(x, w).sum()))(BATCH(mx))
    plain = mx.vmap(mx.grad(lambda x: layer_of(mx)(x, w).sum()))(BATCH(mx))
    assert_array(ours, plain.tolist())


# --- memory: the benchmark's inequality, small ----------------------------------------------


def test_checkpoint_halves_the_peak_memory_of_a_gradient():
    # 32 layers, batch 8, width 16, blocks of 4 (the benchmark has batch 16, width 32).
    # Peak (in activations of B x W): about L + 3 without checkpoint, and
    # L/K + K + 3 with blocks of K, so 16 layers in blocks of 4 give only 11/19 = 0.58;
    # 32 layers give 15/35 = 0.43.
    weights, x = checkpoint_memory.make_problem(layers=32, batch=8, width=16)
    plain, g_plain = checkpoint_memory.peak_of_gradient(
        mx, checkpoint_memory.loss_plain, x, weights
    )
    ckpt, g_ckpt = checkpoint_memory.peak_of_gradient(
        mx, lambda mx, x, w: checkpoint_memory.loss_checkpointed(mx, x, w, 4), x, weights
    )
    assert plain > 0
    assert ckpt <= 0.5 * plain, (ckpt, plain, ckpt / plain)
    assert_array(g_ckpt, g_plain.tolist(), rtol=1e-9, atol=1e-12)
