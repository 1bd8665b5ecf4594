"""mx.linalg's norms, solvers and factorizations (mlxref/core/ops/solvers.py,
mlxref/core/primitives/solvers.py), compared with real MLX: values, dtypes,
pivots, gradients, jvp, vmap, batches, negative axes, empty inputs and the
error messages; where MLX has no derivative (LUF, so det beyond 3 x 3), with
the textbook one and finite differences.
"""

import math
import random

import pytest

import mlxref.core as mx
from support import (assert_both, assert_same_as_mlx, assert_same_error, both, close, needs_mlx,
                     real_mx)

pytestmark = needs_mlx


def _random(rng, shape, lo=-2.0, hi=2.0, ints=False):
    if not shape:
        return rng.randint(-3, 3) if ints else rng.uniform(lo, hi)
    return [_random(rng, shape[1:], lo, hi, ints) for _ in range(shape[0])]


def _spd(rng, n, batch=()):
    """Symmetric positive definite matrices: x xᵀ + n I."""
    x = _random(rng, batch + (n, n))

    def make(m):
        return [[sum(m[i][k] * m[j][k] for k in range(n)) + (n if i == j else 0)
                 for j in range(n)] for i in range(n)]

    if not batch:
        return make(x)
    return [make(m) for m in x]


# --- norm ---------------------------------------------------------------------------------

_M = [[1.0, -2.0, 3.0], [-4.0, 5.0, 0.0]]
_T = [[[1.0, -2.0], [0.0, 4.0]], [[-1.5, 2.5], [3.0, 0.0]], [[0.5, 0.0], [-2.0, 1.0]]]


@pytest.mark.parametrize("ord", [None, 0, 1, -1, 2, -2, 3, 0.5, -0.5, math.inf, -math.inf, True])
@pytest.mark.parametrize("axis", [None, 0, -1, [1]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms(ord, axis, keepdims):
    data = [3.0, -4.0, 0.0, 1.5] if axis in (None, 0, -1) else [[3.0, -4.0], [0.0, 1.5]]
    assert_both(lambda lib: lib.linalg.norm(lib.array(data), ord, axis, keepdims), rtol=1e-5)


@pytest.mark.parametrize("ord", [None, "fro", "f", 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("axis", [None, (0, 1), (1, 0), [-1, -2], [-2, 0]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms(ord, axis, keepdims):
    assert_both(lambda lib: lib.linalg.norm(lib.array(_M), ord, axis, keepdims), rtol=1e-5)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, math.inf, -math.inf, 2.5])
@pytest.mark.parametrize("axis", [(0, 2), (2, 0), (-1, 1), (1, -3), 1, -3])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norms_of_a_stack(ord, axis, keepdims):
    # the matrix norms on any two axes of a 3-D array, and vector norms on one
    assert_both(lambda lib: lib.linalg.norm(lib.array(_T), ord, axis, keepdims), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool_", "float16", "bfloat16",
                                   "float64", "complex64"])
@pytest.mark.parametrize("ord", [None, 0, 1, 3, math.inf])
def test_norm_dtypes(dtype, ord):
    # MLX's at_least_float: complex64 stays complex64 even for ord 0 and 1
    data = [3, 4, 0, 1] if dtype != "complex64" else [3 + 4j, 1j, 0j, -2]
    if dtype == "bool_":
        data = [True, False, True, True]
    if dtype == "uint8" and ord == 0:
        data = [3, 0, 250, 1]
    assert_both(lambda lib: lib.linalg.norm(lib.array(data, getattr(lib, dtype)), ord), rtol=1e-2)


def test_norm_of_matrices_and_empty_arrays():
    assert_both(lambda lib: lib.linalg.norm(lib.array(_T)), rtol=1e-5)  # all axes flattened
    assert_both(lambda lib: lib.linalg.norm(lib.array(_T), keepdims=True), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.array(3.0)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.array(-3.0), keepdims=True), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.array(_M), axis=[]), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.zeros((0,))), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.zeros((0, 3)), 1), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.zeros((2, 0)), "fro", axis=(0, 1)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.norm(lib.zeros((0, 3)), axis=1), rtol=1e-5)
    # composition's result
    assert_both(lambda lib: lib.linalg.norm(lib.array(_M), 1, axis=[0, 0]), rtol=1e-5)


def test_matrix_norm_is_the_top_level_alias():
    assert mx.matrix_norm is mx.linalg.norm
    assert real_mx.matrix_norm is real_mx.linalg.norm
    assert not hasattr(mx.linalg, "matrix_norm") and not hasattr(real_mx.linalg, "matrix_norm")
    assert mx.linalg.__name__ == "mlxref.core.linalg"


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norms_of_singular_values(ord):
    if getattr(mx.linalg, "svd", None) is None:
        with pytest.raises(NotImplementedError, match="no mx.linalg.svd"):
            mx.linalg.norm(mx.array(_M), ord)
        # the vector 2-norm needs no svd
        assert close(mx.linalg.norm(mx.array([3.0, 4.0]), 2).item(), 5.0)
        return
    assert_both(lambda lib: lib.linalg.norm(lib.array(_M), ord), rtol=1e-4)
    assert_both(lambda lib: lib.linalg.norm(lib.array(_T), ord, (2, 0), True), rtol=1e-4)


@pytest.mark.parametrize("ord", [None, 1, 3, -2.5, math.inf, "fro", -math.inf])
def test_norm_gradients(ord):
    data = [[1.0, -2.0, 3.0], [-4.0, 5.5, 0.5]]
    axis = (0, 1) if isinstance(ord, str) or ord in (None,) else -1
    assert_both(lambda lib: lib.grad(lambda x: lib.linalg.norm(x, ord, axis).sum())(
        lib.array(data)), rtol=1e-5)
    assert_both(lambda lib: lib.jvp(lambda x: lib.linalg.norm(x, ord, axis), [lib.array(data)],
                              [lib.array(data) * 0.5 - 1])[1][0], rtol=1e-5)
    assert_both(lambda lib: lib.vmap(lambda x: lib.linalg.norm(x, ord, -1), in_axes=1)(
        lib.array(data)), rtol=1e-5)


def test_norm_errors():
    a = [[1.0, 2.0], [3.0, 4.0]]
    cases = [
        lambda lib: lib.linalg.norm(lib.array(a), [1]),
        lambda lib: lib.linalg.norm(lib.array(a), axis=1.0),
        lambda lib: lib.linalg.norm(lib.array(a), keepdims=1),
        lambda lib: lib.linalg.norm([1.0, 2.0]),
        lambda lib: lib.linalg.norm(lib.array(a), 2, axis=[]),
        lambda lib: lib.linalg.norm(lib.zeros((2, 2, 2)), axis=[0, 1, 2]),
        lambda lib: lib.linalg.norm(lib.zeros((2, 2, 2)), 1),
        lambda lib: lib.linalg.norm(lib.array(3.0), 1),
        lambda lib: lib.linalg.norm(lib.array([1.0, 2.0]), "fro"),
        lambda lib: lib.linalg.norm(lib.array(a), "abc"),
        lambda lib: lib.linalg.norm(lib.array(a), 3),
        lambda lib: lib.linalg.norm(lib.array(a), 0.5),
        lambda lib: lib.linalg.norm(lib.array(a), 1e20),
        lambda lib: lib.linalg.norm(lib.array(a), 0),
        lambda lib: lib.linalg.norm(lib.array(a), float("nan")),
        lambda lib: lib.linalg.norm(lib.array(a), 1, axis=5),
        lambda lib: lib.linalg.norm(lib.array(a), axis=-3),
        lambda lib: lib.linalg.norm(lib.array(a), "fro", axis=[1, 1]),
        lambda lib: lib.linalg.norm(lib.zeros((0,)), math.inf),
    ]
    for program in cases:
        assert_same_error(program)


# --- lu and lu_factor ---------------------------------------------------------------------


def _lu_inputs():
    rng = random.Random(3)
    yield [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]
    yield [[0.0, 1.0], [1.0, 0.0]]
    yield [[2.0, 1.0], [-2.0, 3.0]]  # a tie in the first column: the first is kept
    yield [[1.0, 2.0], [2.0, 4.0]]  # singular: a zero pivot stays in U
    yield [[0.0, 0.0, 0.0]] * 3
    yield [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]  # wide
    yield [[1.0, 2.0], [4.0, 5.0], [7.0, 8.0]]  # tall
    yield [[5.0]]
    yield _random(rng, (5, 5), ints=True)  # small integers: ties in the Schur complements
    yield _random(rng, (4, 6))
    yield _random(rng, (6, 4))
    yield _random(rng, (2, 3, 4, 4))  # a batch


@pytest.mark.parametrize("data", list(_lu_inputs()))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lu_and_lu_factor_match_mlx(data, dtype):
    pair = both(lambda lib: lib.linalg.lu(lib.array(data, getattr(lib, dtype))))
    (p, lower, upper), (tp, tlower, tupper) = pair
    assert p.tolist() == tp.tolist() and p.dtype is mx.uint32  # the same pivoting
    assert_same_as_mlx(lower, tlower)
    assert_same_as_mlx(upper, tupper)
    pair = both(lambda lib: lib.linalg.lu_factor(lib.array(data, getattr(lib, dtype))))
    (lu, piv), (tlu, tpiv) = pair
    assert piv.tolist() == tpiv.tolist() and piv.dtype is mx.uint32
    assert_same_as_mlx(lu, tlu)
    # A = L[P] U, per matrix
    rows = mx.take_along_axis(lower, mx.expand_dims(p, -1), axis=-2)
    assert close((rows @ upper).tolist(), mx.array(data).tolist(), 1e-4, 1e-4)


def test_lu_values_exact_in_float32():
    # LAPACK's order of operations, each step rounded to float32: the same bits
    rng = random.Random(7)
    for n in (3, 6):
        data = _random(rng, (n, n))
        ours, theirs = both(lambda lib: lib.linalg.lu_factor(lib.array(data)))
        assert ours[0].tolist() == theirs[0].tolist()


def test_lu_of_empty_matrices():
    # MLX 0.32.4's CPU build dies (SIGFPE) on a 0-row or 0-column matrix
    for shape in [(0, 0), (3, 0), (0, 3), (2, 0, 3)]:
        with pytest.raises(ValueError, match=r"\[linalg::lu\] Cannot factor an empty matrix"):
            mx.linalg.lu(mx.zeros(shape))
    # an empty batch is fine
    assert_both(lambda lib: lib.linalg.lu(lib.zeros((0, 3, 3))), rtol=1e-5)


def test_lu_vmap_and_batches():
    rng = random.Random(11)
    stack = _random(rng, (3, 4, 4))
    for in_axis in (0, 1, 2, -1):
        x = mx.moveaxis(mx.array(stack), 0, in_axis)
        outs = mx.vmap(mx.linalg.lu, in_axes=in_axis)(x)
        direct = mx.linalg.lu(mx.array(stack))
        for got, want in zip(outs, direct):
            assert got.tolist() == want.tolist()
    outs = mx.vmap(mx.linalg.lu_factor, in_axes=1, out_axes=1)(mx.moveaxis(mx.array(stack), 0, 1))
    assert mx.moveaxis(outs[0], 1, 0).tolist() == mx.linalg.lu_factor(mx.array(stack))[0].tolist()


def test_lu_errors():
    for name in ("lu", "lu_factor"):
        for program in [
            lambda lib: getattr(lib.linalg, name)(lib.eye(2, dtype=lib.int32)),
            lambda lib: getattr(lib.linalg, name)(lib.eye(2, dtype=lib.float16)),
            lambda lib: getattr(lib.linalg, name)(lib.array([1.0, 2.0])),
            lambda lib: getattr(lib.linalg, name)([[1.0]]),
        ]:
            assert_same_error(program)


# --- LUF's derivative, and det / slogdet ----------------------------------------------------


def _numeric_jacobian_check(fun, x, direction, eps=1e-6):
    """jvp of ``fun`` at ``x`` (float64) against a central difference."""
    _, (t,) = mx.jvp(fun, [x], [direction])
    plus, minus = fun(x + eps * direction), fun(x - eps * direction)
    fd = ((plus - minus) / (2 * eps)).tolist()
    assert close(t.tolist(), fd, 1e-5, 1e-6), (t.tolist(), fd)


@pytest.mark.parametrize("n", [2, 4, 5])
def test_lu_factor_jvp_and_vjp_by_finite_differences(n):
    rng = random.Random(n)
    x = mx.array(_random(rng, (n, n)), mx.float64)
    d = mx.array(_random(rng, (n, n)), mx.float64)
    _numeric_jacobian_check(lambda a: mx.linalg.lu_factor(a)[0], x, d)
    # vjp is jvp's transpose: <G, J d> = <Jᵀ G, d>
    g = mx.array(_random(rng, (n, n)), mx.float64)
    _, (jd,) = mx.jvp(lambda a: mx.linalg.lu_factor(a)[0], [x], [d])
    _, (jtg,) = mx.vjp(lambda a: mx.linalg.lu_factor(a)[0], [x], [g])
    assert close((g * jd).sum().item(), (jtg * d).sum().item(), 1e-9, 1e-9)
    # the integer outputs have zero tangents
    _, tangents = mx.jvp(lambda a: mx.linalg.lu_factor(a), [x], [d])
    assert tangents[1].tolist() == [0] * n


def test_lu_factor_derivative_needs_square_matrices():
    with pytest.raises(ValueError, match=r"square matrices only; got matrices of shape \(2, 3\)"):
        mx.grad(lambda a: mx.linalg.lu_factor(a)[0].sum())(mx.ones((2, 3)))


def _det_inputs():
    rng = random.Random(5)
    for n in range(0, 6):
        yield _random(rng, (n, n))
    yield _random(rng, (2, 4, 4))
    yield _random(rng, (3, 2, 2))
    yield [[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]]
    yield [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]
    yield [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


@pytest.mark.parametrize("data", list(_det_inputs()))
def test_det_and_slogdet_match_mlx(data):
    assert_both(lambda lib: lib.linalg.det(lib.array(data)), rtol=1e-4, atol=1e-4)
    assert_both(lambda lib: lib.linalg.slogdet(lib.array(data)), rtol=1e-4, atol=1e-4)
    # (beyond 3 x 3 det is exp(logabsdet), and MLX's float64 exp on the CPU has
    # float32's precision: mlxref's is float64's, so the two differ there)
    assert_both(lambda lib: lib.linalg.det(lib.array(data, lib.float64)), rtol=1e-6, atol=1e-9)


def test_det_dtypes_and_empty_batches():
    assert_both(lambda lib: lib.linalg.det(lib.array([[1, 2], [3, 4]])), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.det(lib.eye(4, dtype=lib.int32)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.det(lib.eye(2, dtype=lib.bool_)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.det(lib.array([[1, 2], [3, 4]], lib.float16)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.slogdet(lib.array([[1, 2], [3, 4]], lib.int32)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.det(lib.zeros((2, 0, 0))), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.det(lib.zeros((0, 4, 4))), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.slogdet(lib.zeros((4, 4))), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.slogdet(lib.zeros((3, 3))), rtol=1e-5)


def test_det_gradients():
    rng = random.Random(2)
    for n in (1, 2, 3):  # composed without LUF: MLX differentiates these
        data = _random(rng, (n, n))
        assert_both(lambda lib: lib.grad(lib.linalg.det)(lib.array(data)), 1e-4, 1e-4)
        assert_both(lambda lib: lib.grad(lambda a: lib.linalg.slogdet(a)[1])(lib.array(data)),
              1e-4, 1e-4)
    # beyond 3 x 3 MLX has no rule (LUF); mlxref's is the textbook det(A) A⁻ᵀ
    for n in (4, 5):
        a = mx.array(_random(rng, (n, n)), mx.float64)
        want = mx.linalg.det(a) * mx.swapaxes(mx.linalg.inv(a), -1, -2)
        assert close(mx.grad(mx.linalg.det)(a).tolist(), want.tolist(), 1e-9, 1e-9)
        want = mx.swapaxes(mx.linalg.inv(a), -1, -2)  # d log|det| = A⁻ᵀ
        got = mx.grad(lambda x: mx.linalg.slogdet(x)[1])(a)
        assert close(got.tolist(), want.tolist(), 1e-9, 1e-9)
        _numeric_jacobian_check(mx.linalg.det, a, mx.array(_random(rng, (n, n)), mx.float64))


def test_mlx_has_no_derivative_for_lu_beyond_three():
    with pytest.raises(ValueError, match=r"\[Primitive::vjp\] Not implemented for LUF."):
        real_mx.grad(real_mx.linalg.det)(real_mx.eye(4) * 2)


def test_det_vmap():
    rng = random.Random(9)
    for n in (2, 4):
        stack = _random(rng, (3, n, n))
        got = mx.vmap(mx.linalg.det, in_axes=2)(mx.moveaxis(mx.array(stack), 0, 2))
        assert close(got.tolist(), mx.linalg.det(mx.array(stack)).tolist(), 1e-5, 1e-5)
        if n <= 3:  # MLX vmaps only the composition without LUF
            assert_both(lambda lib: lib.vmap(lib.linalg.det)(lib.array(stack)), 1e-4, 1e-4)


def test_det_errors():
    for name in ("det", "slogdet"):
        for program in [
            lambda lib: getattr(lib.linalg, name)(lib.array([[1j]])),
            lambda lib: getattr(lib.linalg, name)(lib.array([1.0, 2.0])),
            lambda lib: getattr(lib.linalg, name)(lib.ones((2, 3))),
            lambda lib: getattr(lib.linalg, name)(lib.eye(4, dtype=lib.float16)),
            lambda lib: getattr(lib.linalg, name)(1.0),
        ]:
            assert_same_error(program)


# --- cholesky and cholesky_inv ---------------------------------------------------------------


def _cholesky_inputs():
    rng = random.Random(13)
    yield _spd(rng, 1)
    yield _spd(rng, 3)
    yield _spd(rng, 5)
    yield _spd(rng, 3, (2,))
    # not positive definite: what LAPACK's recursive potrf2 leaves behind
    yield [[1.0, 2.0], [2.0, 1.0]]
    yield [[1.0, 2.0, 3.0], [2.0, 1.0, 0.0], [3.0, 0.0, 1.0]]
    yield [[4.0, 2.0, 3.0], [2.0, 1.0, 0.0], [3.0, 0.0, 5.0]]
    yield [[-4.0, 2.0], [2.0, 1.0]]
    yield [[1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 5.0, 6.0], [3.0, 5.0, 1.0, 7.0], [4.0, 6.0, 7.0, 1.0]]
    yield [[4.0, 2.0, 0.0, 1.0, 0.0], [2.0, 5.0, 1.0, 0.0, 2.0], [0.0, 1.0, 1.0, 0.0, 5.0],
           [1.0, 0.0, 0.0, 3.0, 1.0], [0.0, 2.0, 5.0, 1.0, 1.0]]


@pytest.mark.parametrize("data", list(_cholesky_inputs()))
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_matches_mlx(data, upper):
    assert_both(lambda lib: lib.linalg.cholesky(lib.array(data), upper=upper), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.cholesky(lib.array(data, lib.float64), upper), rtol=1e-5)


def test_cholesky_reads_one_triangle():
    lower_only = [[4.0, 99.0], [2.0, 5.0]]
    upper_only = [[4.0, 2.0], [-99.0, 5.0]]
    assert_both(lambda lib: lib.linalg.cholesky(lib.array(lower_only)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.cholesky(lib.array(upper_only), upper=True), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.cholesky(lib.zeros((0, 0))), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.cholesky(lib.zeros((2, 0, 0))), rtol=1e-5)


def test_cholesky_vmap_and_no_derivative():
    rng = random.Random(17)
    stack = _spd(rng, 3, (2,))
    for in_axis in (0, 1, 2):
        assert_both(lambda lib: lib.vmap(lib.linalg.cholesky, in_axes=in_axis)(
            lib.moveaxis(lib.array(stack), 0, in_axis)), rtol=1e-5)
    assert_same_error(lambda lib: lib.grad(lambda a: lib.linalg.cholesky(a).sum())(
        lib.array(stack[0])))
    assert_same_error(lambda lib: lib.jvp(lib.linalg.cholesky, [lib.array(stack[0])],
                                          [lib.array(stack[1])]))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inv(upper):
    rng = random.Random(19)
    for batch in ((), (2,)):
        data = _spd(rng, 3, batch)
        assert_both(lambda lib: lib.linalg.cholesky_inv(lib.linalg.cholesky(lib.array(data), upper),
                                                  upper), 1e-4, 1e-4)
    # differentiable through tri_inv's rule (MLX 0.32 has none for Inverse)
    factor = mx.linalg.cholesky(mx.array(_spd(rng, 3), mx.float64), upper)
    direction = mx.array(_random(rng, (3, 3)), mx.float64)
    _numeric_jacobian_check(lambda f: mx.linalg.cholesky_inv(f, upper), factor, direction)
    with pytest.raises(ValueError, match=r"Not implemented for Inverse"):
        real_mx.grad(lambda f: real_mx.linalg.cholesky_inv(f).sum())(real_mx.eye(2))


def test_cholesky_errors():
    for name in ("cholesky", "cholesky_inv"):
        for program in [
            lambda lib: getattr(lib.linalg, name)(lib.eye(2, dtype=lib.int32)),
            lambda lib: getattr(lib.linalg, name)(lib.array([1.0, 2.0])),
            lambda lib: getattr(lib.linalg, name)(lib.ones((2, 3))),
            lambda lib: getattr(lib.linalg, name)(lib.eye(2), 1),
            lambda lib: getattr(lib.linalg, name)([[1.0]]),
        ]:
            assert_same_error(program)


# --- solve and solve_triangular -------------------------------------------------------------

_A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]


def test_solve_matches_mlx():
    rng = random.Random(23)
    b = [1.0, 2.0, 3.0]
    assert_both(lambda lib: lib.linalg.solve(lib.array(_A), lib.array(b)), 1e-4, 1e-4)
    assert_both(lambda lib: lib.linalg.solve(lib.array(_A), lib.array([b, b[::-1]]).T), 1e-4, 1e-4)
    a4, b4 = _random(rng, (2, 4, 4)), _random(rng, (2, 4, 3))
    assert_both(lambda lib: lib.linalg.solve(lib.array(a4), lib.array(b4)), 1e-3, 1e-3)
    assert_both(lambda lib: lib.linalg.solve(lib.array(_A, lib.float64), lib.array(b)), 1e-9, 1e-9)
    assert_both(lambda lib: lib.linalg.solve(lib.array(_A), lib.array([1, 2, 3])), 1e-4, 1e-4)
    assert_both(lambda lib: lib.linalg.solve(lib.array(_A), lib.array(b, lib.float16)), 1e-4, 1e-4)
    # MLX gathers b's rows with take_along_axis, which does not broadcast a batch in
    assert_both(lambda lib: lib.linalg.solve(lib.array([_A, _A]), lib.array(b)), rtol=1e-5)
    assert_both(lambda lib: lib.linalg.solve(lib.array(_A), lib.ones((2, 3, 2))), rtol=1e-5)
    # singular
    assert_both(lambda lib: lib.linalg.solve(lib.ones((2, 2)), lib.ones((2,))), rtol=1e-5)


@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular_matches_mlx(upper):
    rng = random.Random(29)
    a = _random(rng, (2, 4, 4), 1.0, 3.0)  # only one triangle is read
    b = _random(rng, (2, 4, 2))
    assert_both(lambda lib: lib.linalg.solve_triangular(lib.array(a), lib.array(b), upper=upper),
          1e-4, 1e-4)
    assert_both(lambda lib: lib.linalg.solve_triangular(lib.array(a[0]), lib.array(b[0][0]),
                                                  upper=upper), 1e-4, 1e-4)
    # with respect to b, as MLX; with respect to a (MLX has no rule for
    # Inverse), by finite differences and vjp as jvp's transpose
    assert_both(lambda lib: lib.grad(lambda y: lib.linalg.solve_triangular(
        lib.array(a), y, upper=upper).sum())(lib.array(b)), 1e-3, 1e-3)
    x64, y64 = mx.array(a[0], mx.float64), mx.array(b[0], mx.float64)
    d = mx.array(_random(rng, (4, 4)), mx.float64)
    _numeric_jacobian_check(lambda m: mx.linalg.solve_triangular(m, y64, upper=upper), x64, d)
    g = mx.array(_random(rng, (4, 2)), mx.float64)
    _, (jd,) = mx.jvp(lambda m: mx.linalg.solve_triangular(m, y64, upper=upper), [x64], [d])
    _, (jtg,) = mx.vjp(lambda m: mx.linalg.solve_triangular(m, y64, upper=upper), [x64], [g])
    assert close((g * jd).sum().item(), (jtg * d).sum().item(), 1e-9, 1e-9)


def test_solve_gradients():
    b = [1.0, -2.0, 0.5]
    # with respect to b the path avoids LUF: MLX differentiates it
    assert_both(lambda lib: lib.grad(lambda y: lib.linalg.solve(lib.array(_A), y).sum())(
        lib.array(b)), 1e-4, 1e-4)
    # with respect to a, through LUF's rule: dx = -A⁻¹ dA x, so Ā = -A⁻ᵀ ḡ xᵀ
    a = mx.array(_A, mx.float64)
    y = mx.array(b, mx.float64)
    x = mx.linalg.solve(a, y)
    g = mx.grad(lambda m: mx.linalg.solve(m, y).sum())(a)
    inv_t = mx.swapaxes(mx.linalg.inv(a), -1, -2)
    want = -mx.outer(inv_t @ mx.ones((3,), mx.float64), x)
    assert close(g.tolist(), want.tolist(), 1e-9, 1e-9)
    # vmap over a batch of systems matches solving each
    stack = mx.array([_A, [[2.0, 0.0, 1.0], [1.0, 3.0, 0.0], [0.0, 1.0, 4.0]]])
    got = mx.vmap(mx.linalg.solve, in_axes=(0, None))(stack, mx.array(b))
    want = mx.stack([mx.linalg.solve(stack[i], mx.array(b)) for i in range(2)])
    assert close(got.tolist(), want.tolist(), 1e-5, 1e-5)


def test_solve_errors():
    a, b = _A, [1.0, 2.0, 3.0]
    for name in ("solve", "solve_triangular"):
        for program in [
            lambda lib: getattr(lib.linalg, name)(lib.array(b), lib.array(b)),
            lambda lib: getattr(lib.linalg, name)(lib.array(a), lib.array(1.0)),
            lambda lib: getattr(lib.linalg, name)(lib.ones((2, 3)), lib.array(b)),
            lambda lib: getattr(lib.linalg, name)(lib.array(a), lib.ones((2,))),
            lambda lib: getattr(lib.linalg, name)(lib.array(a), lib.ones((2, 3))),
            lambda lib: getattr(lib.linalg, name)(lib.array(a, lib.int32),
                                                  lib.array(b, lib.int32)),
            lambda lib: getattr(lib.linalg, name)(lib.array(a, lib.int32), lib.array(b)),
            lambda lib: getattr(lib.linalg, name)(a, lib.array(b)),
        ]:
            assert_same_error(program)


# --- cross ------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes,axis", [
    (((3,), (3,)), -1), (((2,), (3,)), -1), (((3,), (2,)), 0), (((2,), (2,)), -1),
    (((4, 3), (3,)), -1), (((2, 3), (4, 1, 3)), -1), (((3, 2), (3, 2)), 0),
    (((3, 2), (4, 3, 2)), -2), (((2, 4), (3, 4)), 0), (((0, 3), (0, 3)), 1),
])
def test_cross_matches_mlx(shapes, axis):
    rng = random.Random(31)
    x, y = (_random(rng, s) for s in shapes)
    assert_both(lambda lib: lib.linalg.cross(lib.array(x), lib.array(y), axis), rtol=1e-5)
    assert_both(lambda lib: lib.grad(lambda u, v: (lib.linalg.cross(u, v, axis) ** 2).sum(),
                               argnums=(0, 1))(lib.array(x), lib.array(y)), rtol=1e-5)


def test_cross_dtypes_vmap_and_errors():
    assert_both(lambda lib: lib.linalg.cross(lib.array([1, 2, 3]), lib.array([4, 5, 6])),
                rtol=1e-5)
    assert_both(lambda lib: lib.linalg.cross(lib.array([1, 2, 3]), lib.array([4.0, 5.0, 6.0])),
                rtol=1e-5)
    assert_both(lambda lib: lib.vmap(lib.linalg.cross, in_axes=(1, 0))(
        lib.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), lib.array([[1.0, 0.0, 0.0]] * 2)),
        rtol=1e-5)
    for program in [
        lambda lib: lib.linalg.cross(lib.array([1.0, 2, 3, 4]), lib.array([4.0, 5, 6])),
        lambda lib: lib.linalg.cross(lib.array([1.0, 2, 3]), lib.array([4.0, 5, 6]), axis=3),
        lambda lib: lib.linalg.cross(lib.array([1.0, 2, 3]), lib.array([4.0, 5, 6]), axis=-5),
        lambda lib: lib.linalg.cross(lib.ones((2, 3)), lib.ones((3, 3))),
        lambda lib: lib.linalg.cross(lib.ones((3,)), lib.ones((3,)), axis=1.0),
        lambda lib: lib.linalg.cross([1.0, 2.0, 3.0], lib.ones((3,))),
    ]:
        assert_same_error(program)
