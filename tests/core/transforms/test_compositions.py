"""Transforms composed with each other: vmap, grad, vjp, jvp, custom_function, checkpoint.

Each composition is checked three ways where it can be: against a plain
Python loop or central finite differences (so it runs without MLX), against
another route to the same quantity (a Jacobian by rows and by columns), and
against real MLX 0.32.4 running the same program. The last part runs
``mlxref.testing.check_grads`` (finite differences, forward against reverse,
to second order) over random but seeded compositions that include vmap and
checkpoint.
"""

import math
import random

import pytest
from support import assert_array, assert_same_as_mlx, needs_mlx, real_mx

import mlxref.core as mx
from mlxref.testing import check_grads

LIBS = [mx] + ([real_mx] if real_mx is not None else [])

W_VALUES = [[0.5, -1.0, 2.0], [1.5, 0.3, -0.7], [0.2, 0.1, 0.9], [-0.4, 1.1, 0.6]]  # 4 x 3
BATCH_VALUES = [[0.3, -0.8, 1.2], [1.0, 0.5, -0.25], [-1.5, 0.2, 0.7], [0.05, 2.0, -0.6]]


def loss(m, w, x):
    """A per-example loss: R^{4x3} x R^3 -> R."""
    h = m.tanh(w @ x)
    return (h * h).sum() + m.sin(x).sum() * (w * w).sum() * 0.1


def check_same_as_mlx(program):
    """Run ``program`` on mlxref and, when it is installed, on MLX; compare; return ours."""
    ours = program(mx)
    if real_mx is not None:
        theirs = program(real_mx)
        if isinstance(theirs, (list, tuple)):
            for a, b in zip(ours, theirs):
                assert_same_as_mlx(a, b, rtol=1e-4, atol=1e-5)
        else:
            assert_same_as_mlx(ours, theirs, rtol=1e-4, atol=1e-5)
    return ours


# --- vmap and grad ----------------------------------------------------------------------


def test_vmap_of_grad_gives_per_example_gradients():
    def program(m):
        per_example = m.vmap(m.grad(lambda w, x: loss(m, w, x)), in_axes=(None, 0))
        return per_example(m.array(W_VALUES), m.array(BATCH_VALUES))

    batched = check_same_as_mlx(program)
    assert batched.shape == (4, 4, 3)
    w = mx.array(W_VALUES)
    for i, row in enumerate(BATCH_VALUES):
        one = mx.grad(lambda w, x: loss(mx, w, x))(w, mx.array(row))
        assert_array(batched[i], one.tolist())


def test_vmap_of_grad_with_respect_to_the_mapped_argument():
    def program(m):
        return m.vmap(m.grad(lambda x, w: loss(m, w, x)), in_axes=(0, None))(
            m.array(BATCH_VALUES), m.array(W_VALUES)
        )

    batched = check_same_as_mlx(program)
    for i, row in enumerate(BATCH_VALUES):
        one = mx.grad(lambda x: loss(mx, mx.array(W_VALUES), x))(mx.array(row))
        assert_array(batched[i], one.tolist())


def test_grad_of_vmap_equals_sum_of_grads():
    def program(m):
        total = lambda w, xs: m.vmap(lambda x: loss(m, w, x))(xs).sum()  # noqa: E731
        return m.grad(total, argnums=(0, 1))(m.array(W_VALUES), m.array(BATCH_VALUES))

    gw, gxs = check_same_as_mlx(program)
    w = mx.array(W_VALUES)
    expected = None
    for i, row in enumerate(BATCH_VALUES):
        one_w, one_x = mx.grad(lambda w, x: loss(mx, w, x), argnums=(0, 1))(w, mx.array(row))
        expected = one_w if expected is None else expected + one_w
        assert_array(gxs[i], one_x.tolist())
    assert_array(gw, expected.tolist())


def test_value_and_grad_of_vmap():
    def program(m):
        total = lambda xs: m.vmap(lambda x: m.exp(x) * x)(xs).sum()  # noqa: E731
        value, g = m.value_and_grad(total)(m.array(BATCH_VALUES))
        return value, g

    value, g = check_same_as_mlx(program)
    flat = [v for row in BATCH_VALUES for v in row]
    assert_array(value, sum(math.exp(v) * v for v in flat), rtol=1e-6)
    assert_array(g, [[math.exp(v) * (1 + v) for v in row] for row in BATCH_VALUES])


def test_nested_vmap_equals_a_double_loop():
    # Pairwise: f(a_i, b_j) for every i, j, outer map over b, inner over a.
    def f(m, a, b):
        return m.tanh(a * b).sum() + (a @ b)

    def program(m):
        a, b = m.array(BATCH_VALUES), m.array(W_VALUES)
        return m.vmap(m.vmap(lambda x, y: f(m, x, y), in_axes=(0, None)), in_axes=(None, 0))(a, b)

    out = check_same_as_mlx(program)
    assert out.shape == (4, 4)
    for j, brow in enumerate(W_VALUES):
        for i, arow in enumerate(BATCH_VALUES):
            expected = f(mx, mx.array(arow), mx.array(brow)).item()
            assert abs(out[j, i].item() - expected) < 1e-9


def test_nested_vmap_of_grad():
    def program(m):
        g = m.grad(lambda x, y: (m.sin(x * y) * x).sum())
        return m.vmap(m.vmap(g, in_axes=(0, None)), in_axes=(None, 0))(
            m.array(BATCH_VALUES), m.array(W_VALUES)
        )

    out = check_same_as_mlx(program)
    assert out.shape == (4, 4, 3)
    for j, brow in enumerate(W_VALUES):
        for i, arow in enumerate(BATCH_VALUES):
            expected = [math.cos(a * b) * a * b + math.sin(a * b) for a, b in zip(arow, brow)]
            assert_array(out[j, i], expected)


# --- a Jacobian two ways -----------------------------------------------------------------

A_VALUES = [[0.5, -1.0, 2.0], [1.5, 0.3, -0.7], [0.2, 0.1, 0.9], [-0.4, 1.1, 0.6]]
POINT = [0.3, -0.8, 1.2]


def r3_to_r4(m, x):
    a = m.array(A_VALUES)
    return m.tanh(a @ x) * (x * x).sum() + m.sin(a @ (x * 2.0)) - m.exp(a @ x) * 0.1


def jacobian_rows(m, x):
    """Row i is J^T e_i: vmap of vjp over the 4 output cotangents."""
    return m.vmap(lambda u: m.vjp(lambda y: r3_to_r4(m, y), [x], [u])[1][0])(m.eye(4))


def jacobian_columns(m, x):
    """Column j is J e_j: vmap of jvp over the 3 input tangents, batch on axis 1."""
    return m.vmap(lambda v: m.jvp(lambda y: r3_to_r4(m, y), [x], [v])[1][0], out_axes=1)(m.eye(3))


def finite_difference_jacobian(x, eps=1e-6):
    columns = []
    for j in range(3):
        step = [eps if k == j else 0.0 for k in range(3)]
        plus = r3_to_r4(mx, mx.array([a + s for a, s in zip(x, step)], mx.float64)).tolist()
        minus = r3_to_r4(mx, mx.array([a - s for a, s in zip(x, step)], mx.float64)).tolist()
        columns.append([(p - q) / (2 * eps) for p, q in zip(plus, minus)])
    return [[columns[j][i] for j in range(3)] for i in range(4)]


def test_jacobian_by_rows_and_by_columns_agree_with_finite_differences():
    x = mx.array(POINT, mx.float64)  # float64, to compare with double-precision differences
    rows, columns = jacobian_rows(mx, x), jacobian_columns(mx, x)
    assert rows.shape == columns.shape == (4, 3)
    assert_array(rows, columns.tolist(), rtol=1e-9, atol=1e-12)
    assert_array(rows, finite_difference_jacobian(POINT), rtol=1e-6, atol=1e-7)


@needs_mlx
@pytest.mark.parametrize("route", [jacobian_rows, jacobian_columns])
def test_jacobian_matches_mlx(route):
    assert_same_as_mlx(route(mx, mx.array(POINT)), route(real_mx, real_mx.array(POINT)),
                       rtol=1e-4, atol=1e-5)


def test_jacobian_of_a_batch_by_nested_vmap():
    # vmap over points of (vmap of vjp): a batch of Jacobians.
    def program(m):
        return m.vmap(lambda p: jacobian_rows(m, p))(m.array(BATCH_VALUES[:2]))

    jacobians = check_same_as_mlx(program)
    assert jacobians.shape == (2, 4, 3)
    for i in range(2):
        expected = finite_difference_jacobian(BATCH_VALUES[i])
        # float32 Jacobians against double-precision differences
        assert_array(jacobians[i], expected, rtol=1e-5, atol=1e-6)


# --- custom_function inside compositions ---------------------------------------------------


def custom_of(m, log):
    @m.custom_function
    def f(x):
        return m.sin(x)

    @f.vjp
    def f_vjp(primals, cotangent, output):
        log.append("vjp")
        return 100.0 * cotangent * primals

    @f.vmap
    def f_vmap(inputs, axes):
        log.append("vmap")
        return m.sin(inputs) + 1000.0, axes

    return f


def test_vmap_of_a_custom_function_uses_its_vmap_rule():
    for m in LIBS:
        log = []
        out = m.vmap(lambda x: custom_of(m, log)(x) * 2.0)(m.array(BATCH_VALUES))
        assert log == ["vmap"], m
        assert abs(out[1, 2].item() - 2 * (math.sin(-0.25) + 1000.0)) < 1e-3
    check_same_as_mlx(lambda m: m.vmap(custom_of(m, []))(m.array(BATCH_VALUES)))


def test_grad_of_a_custom_function_uses_its_vjp_only():
    for m in LIBS:
        log = []
        g = m.grad(lambda x: (custom_of(m, log)(x) * 3.0).sum())(m.array(POINT))
        assert log == ["vjp"], m
        assert_array(mx.array(g.tolist()), [300.0 * v for v in POINT], rtol=1e-6)


def test_vmap_of_grad_of_a_custom_function():
    # The custom vjp builds the gradient graph; vmap then batches that graph.
    def program(m):
        return m.vmap(m.grad(lambda x: custom_of(m, [])(x).sum()))(m.array(BATCH_VALUES))

    out = check_same_as_mlx(program)
    assert_array(out, [[100.0 * v for v in row] for row in BATCH_VALUES], rtol=1e-6)


def test_grad_of_vmap_of_a_custom_function():
    # vmap's rule gives sin + 1000 with no vjp of its own: grad goes through the rule's graph.
    def program(m):
        return m.grad(lambda xs: m.vmap(custom_of(m, []))(xs).sum())(m.array(BATCH_VALUES))

    out = check_same_as_mlx(program)
    assert_array(out, [[math.cos(v) for v in row] for row in BATCH_VALUES])


# --- checkpoint inside compositions -----------------------------------------------------------


def block(m, x):
    w = m.array(A_VALUES[:3])
    return m.tanh(w @ x) * m.sin(x) + x


def test_checkpoint_under_grad_grad_jvp_and_vmap():
    def programs(m, f):
        x = m.array(POINT)
        t = m.array([1.0, -0.5, 2.0])
        return [
            m.grad(lambda y: f(y).sum())(x),
            m.grad(lambda y: m.grad(lambda z: f(z).sum())(y).sum())(x),
            m.jvp(f, [x], [t])[1][0],
            m.vmap(f)(m.array(BATCH_VALUES)),
            m.grad(lambda ys: m.vmap(f)(ys).sum())(m.array(BATCH_VALUES)),
            m.vmap(m.grad(lambda y: f(y).sum()))(m.array(BATCH_VALUES)),
            m.jvp(m.grad(lambda y: f(y).sum()), [x], [t])[1][0],
        ]

    plain = programs(mx, lambda y: block(mx, y))
    ckpt = programs(mx, mx.checkpoint(lambda y: block(mx, y)))
    for a, b in zip(ckpt, plain):
        assert_array(a, b.tolist(), rtol=1e-9, atol=1e-12)
    if real_mx is not None:
        theirs = programs(real_mx, lambda y: block(real_mx, y))
        for a, b in zip(plain, theirs):
            assert_same_as_mlx(a, b, rtol=1e-4, atol=1e-5)


def test_checkpoint_of_a_vmapped_function_and_vmap_of_checkpoint_agree():
    def program(m, inner):
        return m.grad(lambda xs: inner(m, xs).sum())(m.array(BATCH_VALUES))

    a = check_same_as_mlx(
        lambda m: program(m, lambda m, xs: m.checkpoint(m.vmap(lambda y: block(m, y)))(xs))
    )
    b = check_same_as_mlx(
        lambda m: program(m, lambda m, xs: m.vmap(m.checkpoint(lambda y: block(m, y)))(xs))
    )
    c = program(mx, lambda m, xs: m.vmap(lambda y: block(m, y))(xs))
    assert_array(a, c.tolist(), rtol=1e-9, atol=1e-12)
    assert_array(b, c.tolist(), rtol=1e-9, atol=1e-12)


# --- check_grads over random compositions -----------------------------------------------------

UNARY = [
    ("sin", lambda x: mx.sin(x)),
    ("tanh", lambda x: mx.tanh(x)),
    ("square", lambda x: x * x),
    ("exp_half", lambda x: mx.exp(x * 0.5)),
    ("cos_plus", lambda x: mx.cos(x) + x),
    ("sigmoid", lambda x: 1.0 / (1.0 + mx.exp(-x))),
]


def random_chain(rng, width):
    """A random function of rows of ``width``: 2-4 unary ops and one ``@`` by a fixed matrix."""
    steps = [rng.choice(UNARY) for _ in range(rng.randint(2, 4))]
    w = mx.array([[rng.uniform(-1.0, 1.0) for _ in range(width)] for _ in range(width)], mx.float64)
    where = rng.randrange(len(steps) + 1)

    def g(x):
        for i, (_, op) in enumerate(steps):
            if i == where:
                x = x @ w
            x = op(x)
        return x @ w if where == len(steps) else x

    g.__name__ = "_".join(name for name, _ in steps)
    return g


COMPOSITIONS = {
    "sum_of_vmap": lambda g: lambda x: mx.vmap(g)(x).sum(),
    "checkpoint": lambda g: lambda x: mx.checkpoint(g)(x),
    "vmap_of_checkpoint": lambda g: lambda x: mx.vmap(mx.checkpoint(g))(x),
    "checkpoint_of_vmap": lambda g: lambda x: mx.checkpoint(mx.vmap(g))(x),
    "vmap_on_axis_1": lambda g: lambda x: mx.vmap(g, in_axes=1, out_axes=1)(x.T),
    "vmap_of_grad": lambda g: lambda x: mx.vmap(mx.grad(lambda y: g(y).sum()))(x),
    "vmap_of_grad_of_checkpoint": lambda g: lambda x: mx.vmap(
        mx.grad(lambda y: mx.checkpoint(g)(y).sum())
    )(x),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_check_grads_of_random_compositions(name, seed):
    rng = random.Random(1000 * seed + sorted(COMPOSITIONS).index(name))
    width = 3
    g = random_chain(rng, width)
    x = mx.array([[rng.uniform(-1.0, 1.0) for _ in range(width)] for _ in range(2)], mx.float64)
    check_grads(COMPOSITIONS[name](g), [x], order=2, seed=seed)


def test_random_chains_are_deterministic():
    a = random_chain(random.Random(7), 3)
    b = random_chain(random.Random(7), 3)
    x = mx.array([0.1, -0.2, 0.3], mx.float64)
    assert a.__name__ == b.__name__
    assert a(x).tolist() == b(x).tolist()
