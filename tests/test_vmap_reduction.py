"""vmap through the reduction, matmul and creation primitives.

Reduce (sum, prod, max, min, all, any), ArgReduce, Scan (cumsum), LogSumExp,
Softmax, Matmul and Full. Each op is vmapped over every batch-axis position
of its input (and -1), with two output axes, and compared with real MLX; then
with a Python loop (the vmapped result is the stack of the op on each
example); then nested vmaps, per-example gradients (``vmap(grad(...))``) and
the rules called directly on unbatched inputs.

Batch size 3 and example dimensions 2, 4, 5 are all different, so a batch
axis put in the wrong place changes the result's shape.
"""

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, close, needs_mlx, real_mx

BATCH = 3


def values(n, seed=0):
    """``n`` distinct numbers of moderate size (so argmax has no ties and prod
    stays small)."""
    return [(((i + seed) * 37) % 101 - 50) / 32 for i in range(n)]


def make(m, shape, seed=0):
    n = 1
    for d in shape:
        n *= d
    return m.array(values(n, seed)).reshape(shape)


def batched_shape(shape, ax):
    """The shape of a batch of examples of ``shape`` stacked on axis ``ax``."""
    ax = ax % (len(shape) + 1)
    return shape[:ax] + (BATCH,) + shape[ax:]


def axis_positions(ndim):
    """Every position a batch axis can take in an example of ``ndim`` axes, and -1."""
    return list(range(ndim + 1)) + [-1]


# (id, example shape of a, example shape of b)
MATMUL = [
    ("vec.vec", (4,), (4,)),
    ("mat.vec", (2, 4), (4,)),
    ("vec.mat", (4,), (4, 5)),
    ("mat.mat", (2, 4), (4, 5)),
    ("batch-broadcast", (2, 1, 4), (1, 4, 5)),
    ("stack.mat", (2, 2, 4), (4, 5)),
    ("mat.stack", (2, 4), (2, 4, 5)),
]


def matmul_axes(shape_a, shape_b):
    """Every (in_axes for a, in_axes for b) with at least one batched operand."""
    pa = list(range(len(shape_a) + 1)) + [None]
    pb = list(range(len(shape_b) + 1)) + [None]
    return [(x, y) for x in pa for y in pb if (x, y) != (None, None)]


def matmul_inputs(m, shape_a, shape_b, axes):
    a = make(m, shape_a if axes[0] is None else batched_shape(shape_a, axes[0]), 1)
    b = make(m, shape_b if axes[1] is None else batched_shape(shape_b, axes[1]), 2)
    return a, b


# --- against MLX -----------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("shape_a,shape_b", [c[1:] for c in MATMUL], ids=[c[0] for c in MATMUL])
def test_matmul_every_in_axes_matches_mlx(shape_a, shape_b):
    for axes in matmul_axes(shape_a, shape_b):
        for out_ax in (0, -1):
            ours = mx.vmap(mx.matmul, in_axes=axes, out_axes=out_ax)(
                *matmul_inputs(mx, shape_a, shape_b, axes))
            theirs = real_mx.vmap(real_mx.matmul, in_axes=axes, out_axes=out_ax)(
                *matmul_inputs(real_mx, shape_a, shape_b, axes))
            try:
                assert_same_as_mlx(ours, theirs)
            except AssertionError as e:
                raise AssertionError(f"in_axes={axes} out_axes={out_ax}: {e}") from None


@needs_mlx
def test_matmul_negative_in_axes_match_mlx():
    for axes in [(-1, None), (None, -1), (-1, -2), (-2, 0)]:
        a = make(mx, (2, 4, BATCH) if axes[0] == -1 else (2, BATCH, 4) if axes[0] == -2
                 else (2, 4), 1)
        b = make(mx, (4, 5) if axes[1] is None else (4, 5, BATCH) if axes[1] == -1
                 else (4, BATCH, 5) if axes[1] == -2 else (BATCH, 4, 5), 2)
        ra = real_mx.array(a.tolist())
        rb = real_mx.array(b.tolist())
        assert_same_as_mlx(mx.vmap(mx.matmul, in_axes=axes)(a, b),
                           real_mx.vmap(real_mx.matmul, in_axes=axes)(ra, rb))


# --- against a loop over the examples -------------------------------------------------------


def examples(shape, seed=0):
    return [make(mx, shape, seed + 7 * b) for b in range(BATCH)]


def assert_stack_of(got, per_example, out_ax):
    want = mx.stack(per_example, out_ax)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype is want.dtype, (got.dtype, want.dtype)
    assert close(got.tolist(), want.tolist(), rtol=1e-12, atol=1e-12), (got, want)


@pytest.mark.parametrize("shape_a,shape_b", [c[1:] for c in MATMUL], ids=[c[0] for c in MATMUL])
def test_matmul_equals_a_loop(shape_a, shape_b):
    a_s, b_s = examples(shape_a, 1), examples(shape_b, 2)
    for ax_a, ax_b in matmul_axes(shape_a, shape_b):
        a = a_s[0] if ax_a is None else mx.stack(a_s, ax_a)
        b = b_s[0] if ax_b is None else mx.stack(b_s, ax_b)
        got = mx.vmap(mx.matmul, in_axes=(ax_a, ax_b))(a, b)
        per_example = [
            a_s[0 if ax_a is None else i] @ b_s[0 if ax_b is None else i] for i in range(BATCH)
        ]
        assert_stack_of(got, per_example, 0)


# --- nested vmap ----------------------------------------------------------------------


@needs_mlx
def test_nested_vmap_of_matmul_is_an_outer_batch_matching_mlx():
    def nested(m):
        inner = m.vmap(m.matmul, in_axes=(0, None))
        return m.vmap(inner, in_axes=(None, 2), out_axes=-1)

    a, b = (2, 3, 4), (4, 5, 6)  # inner batch 2 over a, outer batch 6 over b's last axis
    ours = nested(mx)(make(mx, a, 1), make(mx, b, 2))
    theirs = nested(real_mx)(make(real_mx, a, 1), make(real_mx, b, 2))
    assert ours.shape == (2, 3, 5, 6)
    assert_same_as_mlx(ours, theirs)

