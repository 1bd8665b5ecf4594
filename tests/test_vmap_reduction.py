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

import re

import pytest

import mlxref.core as mx
from mlxref.core.primitives import creation as C
from mlxref.core.primitives import linalg as L
from mlxref.core.primitives import reduction as R
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


# (id, f(m, x) written for either module, example shape)
UNARY = [
    ("sum", lambda m, x: m.sum(x, axis=1), (2, 4)),
    ("sum-two-axes-keepdims", lambda m, x: m.sum(x, axis=(0, 2), keepdims=True), (2, 4, 5)),
    ("sum-all", lambda m, x: m.sum(x), (2, 4)),
    ("sum-of-bool", lambda m, x: m.sum(x > 0, axis=0), (2, 4)),
    ("prod", lambda m, x: m.prod(x, axis=-1), (2, 4)),
    ("prod-keepdims", lambda m, x: m.prod(x, axis=0, keepdims=True), (2, 4)),
    ("max", lambda m, x: m.max(x, axis=0), (2, 4)),
    ("max-two-axes-keepdims", lambda m, x: m.max(x, axis=(0, 1), keepdims=True), (2, 4, 5)),
    ("min", lambda m, x: m.min(x, axis=-1), (2, 4)),
    ("min-all", lambda m, x: m.min(x), (4,)),
    ("all", lambda m, x: m.all(x > -1, axis=1), (2, 4)),
    ("any", lambda m, x: m.any(x > 1), (2, 4)),
    ("mean", lambda m, x: m.mean(x, axis=1), (2, 4)),
    ("var", lambda m, x: m.var(x, axis=(0, 2)), (2, 4, 5)),
    ("argmax", lambda m, x: m.argmax(x, axis=1).astype(m.int32), (2, 4)),
    ("argmin-keepdims", lambda m, x: m.argmin(x, axis=0, keepdims=True).astype(m.int32),
     (2, 4)),
    ("argmax-flat", lambda m, x: m.argmax(x).astype(m.int32), (2, 4)),
    ("argmin-flat-keepdims", lambda m, x: m.argmin(x, keepdims=True).astype(m.int32),
     (2, 4)),
    ("cumsum", lambda m, x: m.cumsum(x, axis=1), (2, 4)),
    ("cumsum-reverse", lambda m, x: m.cumsum(x, axis=0, reverse=True), (2, 4)),
    ("cumsum-exclusive", lambda m, x: m.cumsum(x, axis=-1, inclusive=False), (2, 4)),
    ("cumsum-flat", lambda m, x: m.cumsum(x, reverse=True), (2, 4)),
    ("cumsum-of-bool", lambda m, x: m.cumsum(x > 0, axis=1), (2, 4)),
    ("logsumexp", lambda m, x: m.logsumexp(x, axis=-1), (2, 4)),
    ("logsumexp-keepdims", lambda m, x: m.logsumexp(x, axis=0, keepdims=True), (2, 4)),
    ("logsumexp-all", lambda m, x: m.logsumexp(x), (2, 4)),
    ("logsumexp-two-axes", lambda m, x: m.logsumexp(x, axis=(0, 2)), (2, 4, 5)),
    ("softmax", lambda m, x: m.softmax(x, axis=-1), (2, 4)),
    ("softmax-axis0", lambda m, x: m.softmax(x, axis=0), (2, 4)),
    ("softmax-two-axes", lambda m, x: m.softmax(x, axis=(1, 2), precise=True), (2, 4, 5)),
    ("full-row", lambda m, x: m.full((2, 4), x), (4,)),
    ("full-scalar", lambda m, x: m.full((2, 4), x * 2), ()),
]

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
@pytest.mark.parametrize("f,shape", [c[1:] for c in UNARY], ids=[c[0] for c in UNARY])
def test_unary_ops_match_mlx(f, shape):
    for in_ax in axis_positions(len(shape)):
        for out_ax in (0, -1):
            x = batched_shape(shape, in_ax)
            ours = mx.vmap(lambda v: f(mx, v), in_axes=in_ax, out_axes=out_ax)(make(mx, x))
            theirs = real_mx.vmap(lambda v: f(real_mx, v), in_axes=in_ax, out_axes=out_ax)(
                make(real_mx, x))
            try:
                assert_same_as_mlx(ours, theirs)
            except AssertionError as e:
                raise AssertionError(f"in_axes={in_ax} out_axes={out_ax}: {e}") from None


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


@needs_mlx
def test_unbatched_operand_inside_the_function_matches_mlx():
    # The second operand of each op is a constant of the function: unbatched.
    def f(m, x):
        w = m.array(values(20, 5)).reshape(4, 5)
        s = m.softmax(x @ w, axis=0)
        return m.cumsum(s, axis=1) + m.logsumexp(x @ w, axis=-1, keepdims=True)

    x = batched_shape((2, 4), 1)
    ours = mx.vmap(lambda v: f(mx, v), in_axes=1, out_axes=2)(make(mx, x))
    theirs = real_mx.vmap(lambda v: f(real_mx, v), in_axes=1, out_axes=2)(make(real_mx, x))
    assert_same_as_mlx(ours, theirs)


# --- against a loop over the examples -------------------------------------------------------


def examples(shape, seed=0):
    return [make(mx, shape, seed + 7 * b) for b in range(BATCH)]


def assert_stack_of(got, per_example, out_ax):
    want = mx.stack(per_example, out_ax)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype is want.dtype, (got.dtype, want.dtype)
    assert close(got.tolist(), want.tolist(), rtol=1e-12, atol=1e-12), (got, want)


@pytest.mark.parametrize("f,shape", [c[1:] for c in UNARY], ids=[c[0] for c in UNARY])
def test_unary_ops_equal_a_loop(f, shape):
    xs = examples(shape)
    per_example = [f(mx, x) for x in xs]
    for in_ax in axis_positions(len(shape)):
        out_ax = -1 if in_ax % 2 else 0
        got = mx.vmap(lambda v: f(mx, v), in_axes=in_ax, out_axes=out_ax)(mx.stack(xs, in_ax))
        assert_stack_of(got, per_example, out_ax)


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


def test_batched_argmax_is_uint32():
    # MLX's argmax is uint32, batched or not.
    got = mx.vmap(lambda x: mx.argmax(x, axis=0))(make(mx, (BATCH, 2, 4)))
    assert got.dtype is mx.uint32 and got.shape == (BATCH, 4)


# --- nested vmap ----------------------------------------------------------------------


@needs_mlx
def test_nested_vmap_of_sum_and_cumsum_matches_mlx():
    def f(m, x):
        return m.cumsum(m.sum(x, axis=0), axis=0, reverse=True)

    def nested(m):
        return m.vmap(m.vmap(lambda x: f(m, x), in_axes=1, out_axes=1), in_axes=-1)

    shape = (2, 5, 4, BATCH)  # inner batch axis 1 (size 5), outer -1 (size 3)
    assert_same_as_mlx(nested(mx)(make(mx, shape)), nested(real_mx)(make(real_mx, shape)))


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


@needs_mlx
def test_nested_vmap_of_softmax_and_argmax_matches_mlx():
    def f(m, x):
        return m.softmax(x, axis=0) * m.argmax(x, axis=0).astype(x.dtype)

    def nested(m):
        return m.vmap(m.vmap(lambda x: f(m, x), in_axes=0), in_axes=2, out_axes=1)

    shape = (5, 2, BATCH, 4)
    assert_same_as_mlx(nested(mx)(make(mx, shape)), nested(real_mx)(make(real_mx, shape)))


# --- per-example gradients ---------------------------------------------------------------


LOSSES = [
    ("logsumexp-matmul", lambda m, w, x: m.logsumexp(x @ w)),
    ("softmax", lambda m, w, x: m.sum(m.softmax(x @ w, axis=-1) * m.array([1.0, -2.0, 0.5]))),
    ("softmax-axis0",
     lambda m, w, x: m.sum(m.softmax(w * m.expand_dims(m.max(x, axis=0), 1), axis=0) ** 2)),
    ("cumsum", lambda m, w, x: m.sum(m.cumsum(x @ w, axis=0) ** 2)),
    ("max-prod", lambda m, w, x: m.max(w * m.expand_dims(m.sum(x, axis=0), 1))
     + m.prod(w + m.expand_dims(m.min(x, axis=0), 1), axis=0).sum()),
    ("min-mean", lambda m, w, x: m.min(x @ w, axis=1).mean()),
]


@needs_mlx
@pytest.mark.parametrize("loss", [c[1] for c in LOSSES], ids=[c[0] for c in LOSSES])
def test_per_example_gradients(loss):
    # w: (4, 3), shared; x: a batch of (2, 4) examples on axis 1.
    w = make(mx, (4, 3), 3)
    xs = examples((2, 4), 4)
    g = mx.grad(lambda w, x: loss(mx, w, x))
    got = mx.vmap(g, in_axes=(None, 1))(w, mx.stack(xs, 1))
    assert_stack_of(got, [g(w, x) for x in xs], 0)

    rg = real_mx.grad(lambda w, x: loss(real_mx, w, x))
    theirs = real_mx.vmap(rg, in_axes=(None, 1))(
        real_mx.array(w.tolist()), real_mx.array(mx.stack(xs, 1).tolist()))
    assert_same_as_mlx(got, theirs)


def test_per_example_gradients_of_batched_parameters():
    # Both arguments batched (on different axes), and a Full node inside.
    def loss(w, x):
        return mx.sum(mx.full((2, 3), mx.logsumexp(x @ w, axis=0)) * mx.cumsum(x @ w, axis=1))

    ws, xs = examples((4, 3), 5), examples((2, 4), 6)
    g = mx.grad(loss, argnums=(0, 1))
    gw, gx = mx.vmap(g, in_axes=(2, 0), out_axes=(0, -1))(mx.stack(ws, 2), mx.stack(xs, 0))
    loop = [g(w, x) for w, x in zip(ws, xs)]
    assert_stack_of(gw, [p[0] for p in loop], 0)
    assert_stack_of(gx, [p[1] for p in loop], -1)


# --- the rules called directly ------------------------------------------------------------


def test_rules_on_an_unbatched_input_give_an_unbatched_output():
    # vmap never does this (a node on its tape has a batched input), but a
    # rule asked to must not invent a batch axis.
    x = make(mx, (2, 4))
    cases = [
        (R.Reduce("prod", (1,)), mx.prod(x, axis=1)),
        (R.ArgReduce("argmax", None, True), mx.argmax(x, keepdims=True)),
        (R.Scan(0, reverse=True), mx.cumsum(x, axis=0, reverse=True)),
        (R.LogSumExp((0, 1), True), mx.logsumexp(x, keepdims=True)),
        (R.Softmax((0,)), mx.softmax(x, axis=0)),
        (C.Full(), x),
    ]
    for primitive, want in cases:
        (out,), (ax,) = primitive.vmap([x], [None])
        assert ax is None, primitive
        assert out.shape == want.shape and out.dtype is want.dtype, primitive
        assert out.tolist() == want.tolist(), primitive
    (out,), (ax,) = L.Matmul().vmap([x, make(mx, (4, 5), 1)], [None, None])
    assert ax is None and out.tolist() == (x @ make(mx, (4, 5), 1)).tolist()


def test_reduce_rule_keeps_the_batch_axis_in_place():
    # MLX's placement: the batch axis is not moved; reduced axes before it shift it left.
    x = make(mx, (2, BATCH, 4, 5))  # batch on axis 1
    (out,), (ax,) = R.Reduce("sum", (0, 2)).vmap([x], [1])  # example axes 0 and 2
    assert (out.shape, ax) == ((BATCH, 4), 0)
    assert out.tolist() == mx.sum(x, axis=(0, 3)).tolist()
    (out,), (ax,) = R.Reduce("sum", (0, 2), keepdims=True).vmap([x], [1])
    assert (out.shape, ax) == ((1, BATCH, 4, 1), 1)


def test_arange_has_no_rule_but_never_needs_one():
    message = "[Primitive::vmap] Not implemented for Arange."
    with pytest.raises(ValueError, match=re.escape(message)):
        C.Arange(0, 3, 1, mx.int32).vmap([], [])
    got = mx.vmap(lambda x: x * mx.arange(4))(make(mx, (BATCH, 4)))
    assert got.tolist() == (make(mx, (BATCH, 4)) * mx.arange(4)).tolist()
