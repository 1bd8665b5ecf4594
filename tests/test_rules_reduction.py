"""vjp and jvp rules of the reductions, the matrix product and the creation
primitives: Reduce (sum, prod, max, min, all, any), ArgReduce, Scan (cumsum),
LogSumExp, Softmax, Matmul, Full and Arange.

Each rule is compared with real MLX 0.32.4 (values, shape and dtype of every
vjp and jvp) and checked numerically to second order with ``check_grads``.
"""

import pytest
from support import assert_same_as_mlx, needs_mlx, real_mx

import mlxref.core as mx
from mlxref.core.primitives.creation import Arange, Full
from mlxref.core.primitives.reduction import ArgReduce, Reduce
from mlxref.testing import check_grads

# --- inputs ---------------------------------------------------------------------------

NAN = float("nan")
V = [0.5, -1.25, 2.0, 0.75]  # (4,)
M = [[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]  # (2, 3): a tie and a zero in it
T = [  # (2, 2, 4)
    [[1.0, 3.0, 0.5, 3.0], [2.0, 0.0, -1.0, 2.0]],
    [[0.0, 0.0, 1.0, 2.0], [1.5, -2.0, -2.0, 1.0]],
]
ZEROS = [[0.0, 0.0, 2.0], [0.0, 1.0, 2.0], [3.0, -1.0, 2.0]]  # two zeros, one zero, none
TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [NAN, 0.0, 5.0], [-1.0, 4.0, -1.0]]


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


# --- Reduce ---------------------------------------------------------------------------

REDUCE_CASES = {
    "sum all": (lambda m, x: m.sum(x), T),
    "sum axis 1": (lambda m, x: m.sum(x, axis=1), M),
    "sum negative axes, keepdims": (lambda m, x: m.sum(x, axis=(-1, 0), keepdims=True), T),
    "sum middle axis": (lambda m, x: m.sum(x, axis=1), T),
    "sum of ints": (lambda m, x: m.sum(x, axis=-1), [[1, 5, 5], [2, 0, 2]]),
    "prod vector": (lambda m, x: m.prod(x), V),
    "prod axis 0 keepdims": (lambda m, x: m.prod(x, axis=0, keepdims=True), M),
    "prod two axes": (lambda m, x: m.prod(x, axis=(0, 2)), T),
    "prod negative axes keepdims": (lambda m, x: m.prod(x, axis=(-1, -2), keepdims=True), T),
    "prod with zeros": (lambda m, x: m.prod(x, axis=-1), ZEROS),
    "prod with zeros, axis 0": (lambda m, x: m.prod(x, axis=0), ZEROS),
    "prod of ints": (lambda m, x: m.prod(x, axis=-1), [[1, 5, 5], [2, 0, 2]]),
    "max axis 1 (a tie)": (lambda m, x: m.max(x, axis=1), M),
    "max all": (lambda m, x: m.max(x), T),
    "max two axes": (lambda m, x: m.max(x, axis=(0, 2)), T),
    "max negative axis keepdims": (lambda m, x: m.max(x, axis=-2, keepdims=True), T),
    "min axis 0": (lambda m, x: m.min(x, axis=0), M),
    "min two axes keepdims": (lambda m, x: m.min(x, axis=(-1, 0), keepdims=True), T),
    "min all (ties)": (lambda m, x: m.min(x), T),
    "max of ints (ties)": (lambda m, x: m.max(x, axis=-1), [[1, 5, 5], [2, 0, 2]]),
}


@needs_mlx
@pytest.mark.parametrize("name", REDUCE_CASES)
def test_reduce_rules_match_mlx(name):
    f, x = REDUCE_CASES[name]
    _same_as_mlx(f, x)


@needs_mlx
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min_ties_match_mlx(kind, keepdims):
    # vjp: the cotangent is split evenly between tied positions (a nan row
    # gives nan everywhere); jvp: the tangent at the first arg max / arg min.
    f = lambda m, x: getattr(m, kind)(x, axis=-1, keepdims=keepdims)  # noqa: E731
    _same_as_mlx(f, TIES)


def test_max_vjp_splits_ties_but_jvp_picks_the_first():
    x = mx.array([1.0, 3.0, 3.0])
    _, (vjp,) = mx.vjp(mx.max, [x], [mx.array(1.0)])
    assert vjp.tolist() == [0.0, 0.5, 0.5]
    _, (jvp,) = mx.jvp(mx.max, [x], [mx.array([10.0, 20.0, 30.0])])
    assert jvp.item() == 20.0


def test_prod_vjp_with_zeros():
    x = mx.array([[0.0, 0.0, 2.0], [0.0, 3.0, 2.0], [4.0, 3.0, 2.0]])
    _, (vjp,) = mx.vjp(lambda a: mx.prod(a, axis=1), [x], [mx.ones((3,))])
    assert vjp.tolist() == [[0.0, 0.0, 0.0], [6.0, 0.0, 0.0], [6.0, 8.0, 12.0]]


@needs_mlx
@pytest.mark.parametrize("op", ["all", "any"])
def test_all_any_vjp_is_zero_like_mlx(op):
    f = lambda m, x: getattr(m, op)(x, axis=1)  # noqa: E731
    (vjps, jvp), (mlx_vjps, _) = _both(f, [M])
    assert_same_as_mlx(vjps[0], mlx_vjps[0])
    assert vjps[0].tolist() == [[0.0] * 3] * 2


@needs_mlx
def test_all_jvp_is_zero_where_mlx_uses_the_prod_formula():
    # A deliberate difference: MLX 0.32's Reduce::jvp sends all / any through
    # its prod branch, so all(x) of a float x gets a non-zero tangent.
    x, t = [1.0, 2.0], [1.0, 1.0]
    _, (theirs,) = real_mx.jvp(real_mx.all, [real_mx.array(x)], [real_mx.array(t)])
    _, (ours,) = mx.jvp(mx.all, [mx.array(x)], [mx.array(t)])
    assert theirs.item() == 3.0
    assert ours.item() == 0.0 and ours.dtype is mx.float32 and ours.shape == ()


# --- ArgReduce --------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.argmax(x, axis=1),
        lambda m, x: m.argmin(x, axis=-1, keepdims=True),
        lambda m, x: m.argmax(x),
    ],
)
def test_arg_reduce_rules_are_zero_like_mlx(f):
    (vjps, jvp), (mlx_vjps, mlx_jvp) = _both(lambda m, x: f(m, x), [T])
    assert_same_as_mlx(vjps[0], mlx_vjps[0])
    assert_same_as_mlx(jvp, mlx_jvp)  # uint32 zeros, argmax's dtype


@needs_mlx
def test_arg_reduce_inside_a_differentiable_program():
    f = lambda m, x: m.sum(x, axis=1) * m.argmax(x, axis=1).astype(m.float32)  # noqa: E731
    _same_as_mlx(f, M)


# --- Scan (cumsum) ------------------------------------------------------------------------

SCAN_CASES = {
    "axis 1": (lambda m, x: m.cumsum(x, axis=1), T),
    "negative axis, reverse": (lambda m, x: m.cumsum(x, axis=-1, reverse=True), T),
    "exclusive": (lambda m, x: m.cumsum(x, axis=0, inclusive=False), M),
    "reverse exclusive": (lambda m, x: m.cumsum(x, axis=1, reverse=True, inclusive=False), M),
    "flattened": (lambda m, x: m.cumsum(x), T),
    "flattened reverse exclusive": (lambda m, x: m.cumsum(x, reverse=True, inclusive=False), M),
    "ints": (lambda m, x: m.cumsum(x, axis=-1), [[1, 5, 5], [2, 0, 2]]),
}


@needs_mlx
@pytest.mark.parametrize("name", SCAN_CASES)
def test_cumsum_rules_match_mlx(name):
    f, x = SCAN_CASES[name]
    _same_as_mlx(f, x)


# --- LogSumExp and Softmax -----------------------------------------------------------------

SOFT_CASES = {
    "logsumexp last axis": (lambda m, x: m.logsumexp(x, axis=-1), T),
    "logsumexp all": (lambda m, x: m.logsumexp(x), M),
    "logsumexp axis 0 keepdims": (lambda m, x: m.logsumexp(x, axis=0, keepdims=True), T),
    "logsumexp two axes": (lambda m, x: m.logsumexp(x, axis=(0, 2)), T),
    "logsumexp negative axes keepdims": (
        lambda m, x: m.logsumexp(x, axis=(-2, -1), keepdims=True), T),
    "softmax last axis": (lambda m, x: m.softmax(x, axis=-1), T),
    "softmax all": (lambda m, x: m.softmax(x), M),
    "softmax axis 1": (lambda m, x: m.softmax(x, axis=1), T),
    "softmax two axes": (lambda m, x: m.softmax(x, axis=(0, 2)), T),
    "softmax precise": (lambda m, x: m.softmax(x, axis=-1, precise=True), M),
    "softmax times x": (lambda m, x: m.softmax(x, axis=0) * x, M),
}


@needs_mlx
@pytest.mark.parametrize("name", SOFT_CASES)
def test_logsumexp_softmax_rules_match_mlx(name):
    f, x = SOFT_CASES[name]
    _same_as_mlx(f, x)


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


# --- Full and Arange --------------------------------------------------------------------


@needs_mlx
def test_full_jvp_matches_mlx():
    (_, jvp), (_, mlx_jvp) = _both(lambda m, x: m.full((2, 3), x), [B3])
    assert_same_as_mlx(jvp, mlx_jvp)


@needs_mlx
def test_full_vjp_is_the_identity_not_mlx_cotangent_times_value():
    # A deliberate difference: MLX 0.32's Full::vjp multiplies the cotangent
    # by the filled value, so its gradient of sum(full((3,), x)) at x = 2 is 6.
    # The derivative is 3; mlxref's rule is the identity (Broadcast sums).
    theirs = real_mx.grad(lambda x: real_mx.full((3,), x).sum())(real_mx.array(2.0))
    ours = mx.grad(lambda x: mx.full((3,), x).sum())(mx.array(2.0))
    assert theirs.item() == 6.0
    assert ours.item() == 3.0 and ours.dtype is mx.float32


def test_full_vjp_sums_over_the_broadcast_axes():
    x = mx.array([1.0, 2.0, 3.0])
    cot = mx.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    _, (vjp,) = mx.vjp(lambda a: mx.full((2, 3), a), [x], [cot])
    assert vjp.tolist() == [11.0, 22.0, 33.0]
    assert isinstance(mx.full((2, 3), x).primitive(), Full)


@needs_mlx
def test_arange_in_a_graph_matches_mlx():
    _same_as_mlx(lambda m, x: x * m.arange(3) + m.sum(m.arange(2.0, 5.0)), B3)


def test_arange_and_argreduce_rules_directly():
    # Arange has no inputs, so no tape holds it; its rules are the base class's.
    a = mx.arange(3)
    with pytest.raises(ValueError, match=r"^\[Primitive::vjp\] Not implemented for Arange\.$"):
        Arange(0, 3, 1, mx.int32).vjp([], [a], [], [a])
    with pytest.raises(ValueError, match=r"^\[Primitive::jvp\] Not implemented for Arange\.$"):
        Arange(0, 3, 1, mx.int32).jvp([], [], [])
    x = mx.array(T)
    (zero,) = ArgReduce("argmax", 1, False).jvp([x], [mx.ones_like(x)], [0])
    assert zero.shape == (2, 4) and zero.dtype is mx.uint32


# --- composed ops: mean, var, std ---------------------------------------------------------

COMPOSED_CASES = {
    "mean": (lambda m, x: m.mean(x, axis=1), T),
    "mean keepdims, negative axes": (lambda m, x: m.mean(x, axis=(-1, 0), keepdims=True), T),
    "var": (lambda m, x: m.var(x, axis=-1), T),
    "var ddof 1": (lambda m, x: m.var(x, axis=(0, 2), ddof=1), T),
    "std": (lambda m, x: m.std(x, axis=0, keepdims=True), M),
    "std all": (lambda m, x: m.std(x), T),
}


@needs_mlx
@pytest.mark.parametrize("name", COMPOSED_CASES)
def test_mean_var_std_gradients_match_mlx(name):
    f, x = COMPOSED_CASES[name]
    _same_as_mlx(f, x)
    theirs = real_mx.grad(lambda a: f(real_mx, a).sum())(real_mx.array(x))
    ours = mx.grad(lambda a: f(mx, a).sum())(mx.array(x))
    assert_same_as_mlx(ours, theirs)


# --- second order ---------------------------------------------------------------------------

SECOND_ORDER = {
    "sum of squares": lambda m, x: m.sum(m.square(m.sum(x, axis=0))),
    "prod": lambda m, x: m.prod(x, axis=1).sum(),
    "max": lambda m, x: m.sum(m.square(m.max(x * x, axis=0))),
    "logsumexp": lambda m, x: m.logsumexp(x * x, axis=-1).sum(),
    "softmax": lambda m, x: (m.softmax(x, axis=-1) * x).sum(),
    "cumsum": lambda m, x: m.sum(m.square(m.cumsum(x, axis=1, reverse=True))),
    "matmul": lambda m, x: m.sum(m.square(x @ m.swapaxes(x, 0, 1))),
    "var": lambda m, x: m.var(x * x, axis=1).sum(),
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
    "sum": (lambda x: mx.sum(x, axis=1), [X]),
    "sum keepdims": (lambda x: mx.sum(x, axis=(0, -1), keepdims=True), [X3]),
    "prod": (lambda x: mx.prod(x, axis=0), [X]),
    "prod two axes keepdims": (lambda x: mx.prod(x, axis=(0, 2), keepdims=True), [X3]),
    "cumsum": (lambda x: mx.cumsum(x, axis=1), [X]),
    "cumsum reverse exclusive": (lambda x: mx.cumsum(x, axis=0, reverse=True, inclusive=False),
                                 [X]),
    "cumsum flattened": (lambda x: mx.cumsum(x, reverse=True), [X]),
    "logsumexp": (lambda x: mx.logsumexp(x, axis=-1), [X]),
    "logsumexp two axes keepdims": (lambda x: mx.logsumexp(x, axis=(0, 2), keepdims=True), [X3]),
    "softmax": (lambda x: mx.softmax(x, axis=-1), [X]),
    "softmax axis 0": (lambda x: mx.softmax(x, axis=0), [X]),
    "matmul": (lambda a, b: a @ b, [X, mx.swapaxes(X, 0, 1)]),
    "matmul batched": (lambda a, b: a @ b, [X3, X3[:1]]),
    "matvec": (lambda a, b: a @ b, [X, X[0]]),
    "full": (lambda x: mx.full((2, 3), x), [X[0]]),
    "arange": (lambda x: x * mx.arange(3), [X]),
    "mean": (lambda x: mx.mean(x, axis=1), [X]),
    "var": (lambda x: mx.var(x, axis=0, ddof=1), [X]),
    "std": (lambda x: mx.std(x, axis=-1, keepdims=True), [X]),
}


@pytest.mark.parametrize("name", CHECKED)
def test_check_grads_second_order(name):
    f, args = CHECKED[name]
    check_grads(f, args, order=2)


MAX_MIN = {
    "max": (lambda x: mx.max(x, axis=-1), [X]),
    "max two axes": (lambda x: mx.max(x, axis=(0, 1)), [X3]),
    "min keepdims": (lambda x: mx.min(x, axis=0, keepdims=True), [X]),
    "min all": (lambda x: mx.min(x), [X3]),
}


@pytest.mark.parametrize("name", MAX_MIN)
def test_check_grads_max_min(name):
    # Second order in reverse mode only: the jvp of max / min reads the tangent
    # at argmax(x) with take_along_axis, and differentiating that again reaches
    # the index, which MLX refuses (next test).
    f, args = MAX_MIN[name]
    check_grads(f, args, order=1)
    check_grads(f, args, order=2, modes=("rev",))


@needs_mlx
@pytest.mark.parametrize("outer", ["jvp", "vjp"])
def test_differentiating_the_jvp_of_max_raises_like_mlx(outer):
    messages = []
    for lib in (mx, real_mx):
        x = lib.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]])
        t = lib.ones_like(x)

        def tangent(a, lib=lib, t=t):
            return lib.jvp(lambda y: lib.max(y, axis=-1), [a], [t])[1][0]

        with pytest.raises(ValueError) as info:
            if outer == "jvp":
                lib.jvp(tangent, [x], [t])
            else:
                lib.vjp(tangent, [x], [lib.ones((2,))])
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"[gather_axis] Cannot calculate {outer.upper()} with respect")


def test_rules_keep_the_shape_and_dtype_of_their_inputs():
    x = mx.array(T)
    for f in (
        lambda a: mx.sum(a, axis=1),
        lambda a: mx.prod(a, axis=(0, 2)),
        lambda a: mx.max(a, axis=-1),
        lambda a: mx.cumsum(a),
        lambda a: mx.logsumexp(a, axis=0),
        lambda a: mx.softmax(a, axis=1),
        lambda a: mx.all(a, axis=0),
        lambda a: mx.argmin(a, axis=2),
    ):
        out = f(x)
        _, (vjp,) = mx.vjp(f, [x], [mx.ones_like(out)])
        _, (jvp,) = mx.jvp(f, [x], [mx.ones_like(x)])
        assert vjp.shape == x.shape and vjp.dtype is mx.float32
        assert jvp.shape == out.shape


def test_reduce_rule_is_per_kind():
    # The primitive is one class; its rules dispatch on the kind.
    x = mx.array(M)
    for kind, expected in (("sum", [[1.0] * 3] * 2), ("and", [[0.0] * 3] * 2)):
        out = mx.array([True, True]) if kind == "and" else mx.sum(x, axis=1)
        (vjp,) = Reduce(kind, (1,), False).vjp([x], [mx.ones_like(out)], [0], [out])
        assert vjp.tolist() == expected
