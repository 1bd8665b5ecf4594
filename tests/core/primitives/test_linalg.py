"""The linalg family (mlxref/core/primitives/linalg.py: Matmul, AddMM, Inverse;
ops/linalg.py; MLX's mlx/primitives.cpp and mlx/backend/cpu/matmul.cpp, inverse.cpp):
matmul (and ``@``), inner, outer, clip, addmm, linalg.inv and tri_inv, vecdot.

Expected values are worked out by hand, then compared with real MLX over vector,
matrix, batched and broadcast-batch shapes; then Matmul's vjp and jvp against MLX's
and checked numerically to second order with ``check_grads``; its vmap over every
batch-axis position, against MLX and against a loop over the examples; complex64
and the integer dtypes.
"""

import itertools
import random
import re

import pytest

import mlxref.core as mx
from mlxref.core.array import from_data
from mlxref.core.primitives.linalg import Matmul
from mlxref.testing import check_grads
from support import (BATCH, assert_array, assert_both, assert_rules_same_as_mlx, assert_same_as_mlx,
                     assert_same_error, assert_stack_of, batched_shape, both,
                     check_second_derivative_against_mlx, close, each_lib, fd_cube, fd_matrix, ids,
                     needs_mlx, real_mx, spread_array, spread_examples)


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def empty(shape, dtype=mx.float32):
    return from_data([], shape, dtype)


A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]  # (2, 3)
B = [[1.0, -1.0], [0.0, 2.0], [3.0, 0.5]]  # (3, 2)
# A @ B by hand: row 0: [1 + 0 + 9, -1 + 4 + 1.5], row 1: [4 + 0 + 18, -4 + 10 + 3]
AB = [[10.0, 4.5], [22.0, 9.0]]


# --- matmul ------------------------------------------------------------------------


def test_matmul_of_matrices():
    assert_array(mx.matmul(mx.array(A), mx.array(B)), AB, mx.float32, (2, 2))
    assert_array(mx.array(A) @ mx.array(B), AB, mx.float32, (2, 2))
    # (3, 2) @ (2, 3): element (i, j) = sum_k B[i][k] A[k][j]
    expected = [[sum(B[i][k] * A[k][j] for k in range(2)) for j in range(3)] for i in range(3)]
    assert_array(mx.array(B) @ mx.array(A), expected, mx.float32, (3, 3))


def test_matmul_with_vectors_removes_the_added_dimensions():
    v = mx.array([1.0, 2.0, 3.0])
    assert_array(mx.matmul(v, v), 14.0, mx.float32, ())  # 1 + 4 + 9
    assert_array(mx.matmul(mx.array(A), v), [14.0, 32.0], mx.float32, (2,))  # A v
    assert_array(mx.matmul(v, mx.array(B)), [10.0, 4.5], mx.float32, (2,))  # v B
    # a vector times a stack of matrices: (3,) @ (2, 3, 2) -> (2, 2)
    stack = mx.array([B, [[2.0 * x for x in row] for row in B]])
    assert_array(mx.matmul(v, stack), [[10.0, 4.5], [20.0, 9.0]], mx.float32, (2, 2))
    # a stack of matrices times a vector: (2, 2, 3) @ (3,) -> (2, 2)
    stack_a = mx.array([A, [[-x for x in row] for row in A]])
    assert_array(mx.matmul(stack_a, v), [[14.0, 32.0], [-14.0, -32.0]], mx.float32, (2, 2))


def test_matmul_batched_stack_times_matrix():
    # (2, 2, 3) @ (3, 2): each matrix of the stack times B
    neg_a = [[-x for x in row] for row in A]
    out = mx.matmul(mx.array([A, neg_a]), mx.array(B))
    neg_ab = [[-x for x in row] for row in AB]
    assert_array(out, [AB, neg_ab], mx.float32, (2, 2, 2))


def test_matmul_batched_with_broadcast_batch_dims():
    # (2, 1, 2, 3) @ (3, 3, 2) -> (2, 3, 2, 2): a[i, 0] @ b[j]
    a_vals = [[A], [[[2.0 * x for x in row] for row in A]]]
    b_vals = [B, [[0.0, 0.0]] * 3, [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]]
    out = mx.matmul(mx.array(a_vals), mx.array(b_vals))

    def mm(x, y):
        return [[sum(x[i][k] * y[k][j] for k in range(len(y))) for j in range(len(y[0]))]
                for i in range(len(x))]

    expected = [[mm(a_vals[i][0], b_vals[j]) for j in range(3)] for i in range(2)]
    assert_array(out, expected, mx.float32, (2, 3, 2, 2))
    # (1, 2, 3) @ (2, 3, 2): the batch of a broadcasts
    out = mx.matmul(mx.array([A]), mx.array([B, B]))
    assert_array(out, [AB, AB], mx.float32, (2, 2, 2))


def test_matmul_dtypes():
    ints = mx.array([[1, 2], [3, 4]])
    floats = mx.array([[1.0, 0.0], [0.0, 1.0]])
    assert_array(mx.matmul(ints, floats), [[1, 2], [3, 4]], mx.float32)
    f64 = mx.array([[1.0, 2.0]], mx.float64)
    assert_array(mx.matmul(f64, mx.array([[3.0], [4.0]])), [[11.0]], mx.float64, (1, 1))
    assert_array(mx.matmul(mx.array([[2.0]]), mx.array([[3]], mx.int64)), [[6.0]], mx.float32)


def test_matmul_with_size_zero_dimensions():
    assert_array(mx.matmul(empty((0, 3)), mx.array(B)), [], mx.float32, (0, 2))
    # an empty inner dimension: sums of nothing are zero
    assert_array(mx.matmul(empty((2, 0)), empty((0, 3))), [[0.0] * 3] * 2, mx.float32, (2, 3))
    assert_array(mx.matmul(empty((0,)), empty((0,))), 0.0, mx.float32, ())


def test_matmul_is_lazy_and_builds_one_matmul_node():
    a, b = mx.array(A), mx.array(B)
    out = mx.matmul(a, b)
    assert out.data() is None
    assert isinstance(out.primitive(), Matmul)
    assert ids(out.inputs()) == ids([a, b])
    mx.eval(out)
    assert_array(out, AB)


def test_matmul_of_sympy_expressions():
    sympy = pytest.importorskip("sympy")
    x = sympy.symbols("x0:6")
    a = mx.array([[x[0], x[1]], [x[2], x[3]]])
    b = mx.array([[x[4]], [x[5]]])
    got = mx.matmul(a, b).tolist()
    assert sympy.expand(got[0][0] - (x[0] * x[4] + x[1] * x[5])) == 0
    assert sympy.expand(got[1][0] - (x[2] * x[4] + x[3] * x[5])) == 0


def test_matmul_of_a_larger_random_matrix():
    rng = random.Random(7)
    n, k, m = 9, 13, 5
    a = [[rng.uniform(-1, 1) for _ in range(k)] for _ in range(n)]
    b = [[rng.uniform(-1, 1) for _ in range(m)] for _ in range(k)]
    expected = [[sum(a[i][t] * b[t][j] for t in range(k)) for j in range(m)] for i in range(n)]
    assert_array(mx.array(a) @ mx.array(b), expected, mx.float32, (n, m))


ZERO_DIM = "[matmul] Got 0 dimension input. Inputs must have at least one dimension."


def test_matmul_errors():
    with raises(ValueError, ZERO_DIM):
        mx.matmul(mx.array(1.0), mx.array([1.0]))
    with raises(ValueError, ZERO_DIM):
        mx.matmul(mx.array([1.0]), mx.array(1.0))
    with raises(ValueError, "[matmul] Last dimension of first input with shape (2,3) must match "
                "second to last dimension of second input with shape (2,3)."):
        mx.matmul(mx.array(A), mx.array(A))
    # 1-D operands are reported with their added dimension
    with raises(ValueError, "[matmul] Last dimension of first input with shape (1,2) must match "
                "second to last dimension of second input with shape (3,1)."):
        mx.matmul(mx.array([1.0, 2.0]), mx.array([1.0, 2.0, 3.0]))
    with raises(ValueError, "with shape (2,3) must match second to last dimension of second "
                "input with shape (2,1)."):
        mx.matmul(mx.array(A), mx.array([1.0, 2.0]))
    with raises(ValueError, "[matmul] Only inexact types are supported but int32 and int32 were "
                "provided which results in int32, which is not a floating point type."):
        mx.matmul(mx.array([[1, 2]]), mx.array([[1], [2]]))
    with raises(ValueError, "[matmul] Only inexact types are supported but bool and bool were "
                "provided which results in bool, which is not a floating point type."):
        mx.matmul(mx.array([True]), mx.array([False]))
    with raises(ValueError, "[broadcast_shapes] Shapes (2,2) and (3) cannot be broadcast."):
        mx.matmul(empty((2, 2, 2, 0)), empty((3, 0, 2)))
    with raises(TypeError, "matmul(): incompatible function arguments. The following argument "
                "types are supported:\n    1. matmul(a: array, b: array, /, *, stream: "
                "StreamOrDevice = None) -> array\n\nInvoked with types: mlx.core.array, float"):
        mx.matmul(mx.array(A), 2.0)
    with raises(TypeError, "Invoked with types: list, list"):
        mx.matmul([[1.0]], [[1.0]])


# --- inner and outer -----------------------------------------------------------------


def test_inner():
    v, w = mx.array([1.0, 2.0, 3.0]), mx.array([4.0, 5.0, 6.0])
    assert_array(mx.inner(v, w), 32.0, mx.float32, ())
    # (2, 3) with (2, 3): out[i][j] = A[i] . A[j]
    expected = [[sum(x * y for x, y in zip(r, s)) for s in A] for r in A]
    assert_array(mx.inner(mx.array(A), mx.array(A)), expected, mx.float32, (2, 2))
    # (2, 2, 3) with (3,): a dot product per row
    assert_array(mx.inner(mx.array([A, A]), mx.array([1.0, 0.0, -1.0])),
                 [[-2.0, -2.0], [-2.0, -2.0]], mx.float32, (2, 2))
    # (3,) with (2, 2, 3): out[i][j] = v . b[i][j]
    b = [[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]]
    assert_array(mx.inner(mx.array([1.0, 2.0, 3.0]), mx.array(b)), [[1.0, 2.0], [3.0, 6.0]],
                 mx.float32, (2, 2))
    # a 0-d operand makes it a multiply (any dtype)
    assert_array(mx.inner(mx.array(2), mx.array([[1, 2]])), [[2, 4]], mx.int32, (1, 2))
    assert_array(mx.inner(mx.array(2), mx.array(3)), 6, mx.int32, ())


def test_inner_errors():
    with raises(ValueError, "[inner] a and b must have the same last dimension."):
        mx.inner(mx.array(A), mx.array(B))
    with raises(ValueError, "[matmul] Only inexact types are supported but int32 and int32"):
        mx.inner(mx.array([1, 2]), mx.array([3, 4]))
    with raises(TypeError, "inner(): incompatible function arguments."):
        mx.inner(mx.array([1.0]), 3)


def test_outer():
    assert_array(mx.outer(mx.array([1.0, 2.0, 3.0]), mx.array([4.0, 5.0])),
                 [[4.0, 5.0], [8.0, 10.0], [12.0, 15.0]], mx.float32, (3, 2))
    # both inputs are flattened: (2, 2) x (3,) -> (4, 3)
    assert_array(mx.outer(mx.array([[1, 2], [3, 4]]), mx.array([1, 0, -1])),
                 [[1, 0, -1], [2, 0, -2], [3, 0, -3], [4, 0, -4]], mx.int32, (4, 3))
    assert_array(mx.outer(mx.array(2.0), mx.array(3.0)), [[6.0]], mx.float32, (1, 1))
    assert_array(mx.outer(mx.array([True, False]), mx.array([1.5, 2.0])),
                 [[1.5, 2.0], [0.0, 0.0]], mx.float32, (2, 2))
    assert_array(mx.outer(empty((0,)), mx.array([1.0, 2.0, 3.0])), [], mx.float32, (0, 3))
    with raises(TypeError, "outer(): incompatible function arguments."):
        mx.outer(2.0, [1, 2])


# --- clip ------------------------------------------------------------------------------


def test_clip():
    a = mx.array([1, 5, 9])
    assert_array(mx.clip(a, 2, 8), [2, 5, 8], mx.int32, (3,))
    assert_array(mx.clip(a, None, 8), [1, 5, 8], mx.int32)
    assert_array(mx.clip(a, 2, None), [2, 5, 9], mx.int32)
    assert_array(mx.clip(a, a_min=4, a_max=None), [4, 5, 9], mx.int32)
    # Python scalars are weakly typed; a float bound makes it float32
    assert_array(mx.clip(a, 2.5, 8), [2.5, 5.0, 8.0], mx.float32)
    assert_array(mx.clip(mx.array([True, False]), 1, None), [1, 1], mx.int32)
    # array bounds broadcast
    assert_array(mx.clip(a, mx.array([[2], [6]]), 8), [[2, 5, 8], [6, 6, 8]], mx.int32, (2, 3))
    assert_array(mx.clip(mx.array([1.5, 3.0]), 2, mx.array(2.5)), [2.0, 2.5], mx.float32)
    assert_array(mx.clip(mx.array(-3.0), -1.0, 1.0), -1.0, mx.float32, ())
    assert_array(mx.clip(empty((0, 2)), 0.0, 1.0), [], mx.float32, (0, 2))


def test_clip_errors():
    with raises(ValueError, "At most one of a_min and a_max may be None"):
        mx.clip(mx.array([1.0]), None, None)
    with raises(ValueError, "Invalid type list received in array initialization."):
        mx.clip(mx.array([1.0]), [0.0], None)
    with raises(TypeError, "clip(): incompatible function arguments."):
        mx.clip([1.0, 2.0], 0.0, 1.0)


# --- against real MLX ----------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 2)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (3, 3, 2)),
    ((1, 2, 3), (4, 3, 1)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 2)),
    ((2, 0, 3), (3, 4)),
]


def _pair(shape, seed, dtype="float32"):
    rng = random.Random(seed)
    n = 1
    for d in shape:
        n *= d
    if dtype == "int32":
        flat = [rng.randint(-5, 5) for _ in range(n)]
    else:
        flat = [round(rng.uniform(-2, 2), 3) for _ in range(n)]
    ours = from_data(flat, shape, getattr(mx, dtype))
    theirs = real_mx.array(flat, getattr(real_mx, dtype)).reshape(shape)
    return ours, theirs


@needs_mlx
def test_matmul_matches_mlx():
    for seed, (sa, sb) in enumerate(MATMUL_SHAPES):
        a, ra = _pair(sa, seed)
        b, rb = _pair(sb, seed + 100)
        assert_same_as_mlx(mx.matmul(a, b), real_mx.matmul(ra, rb))
        assert_same_as_mlx(a @ b, ra @ rb)


@needs_mlx
def test_matmul_errors_match_mlx():
    cases = [((2, 3), (2, 3)), ((2,), (3,)), ((2,), (3, 4)), ((5, 2, 3), (4,)),
             ((5, 2, 3), (4, 3, 1)), ((2, 2, 2, 3), (3, 3, 2))]
    for sa, sb in cases:
        a, ra = _pair(sa, 1)
        b, rb = _pair(sb, 2)
        with pytest.raises(ValueError) as theirs:
            real_mx.matmul(ra, rb)
        with raises(ValueError, str(theirs.value)):
            mx.matmul(a, b)


@needs_mlx
def test_inner_outer_clip_match_mlx():
    shapes = [((3,), (3,)), ((2, 3), (4, 3)), ((2, 3, 4), (5, 4)), ((4,), (2, 3, 4)),
              ((), (2, 3)), ((2, 2), ()), ((0, 3), (2, 3))]
    for seed, (sa, sb) in enumerate(shapes):
        a, ra = _pair(sa, seed)
        b, rb = _pair(sb, seed + 50)
        assert_same_as_mlx(mx.inner(a, b), real_mx.inner(ra, rb))
        assert_same_as_mlx(mx.outer(a, b), real_mx.outer(ra, rb))
    for dtype in ["float32", "int32"]:
        a, ra = _pair((3, 4), 3, dtype)
        b, rb = _pair((3, 4), 4, dtype)
        assert_same_as_mlx(mx.outer(a, b), real_mx.outer(ra, rb))
        lo, rlo = _pair((4,), 5, dtype)
        for a_min, a_max in itertools.product([None, -1, 0.5, "array"], [None, 1, 1.5]):
            if a_min is None and a_max is None:
                continue
            ours_min, theirs_min = (lo, rlo) if a_min == "array" else (a_min, a_min)
            assert_same_as_mlx(mx.clip(a, ours_min, a_max), real_mx.clip(ra, theirs_min, a_max))


# --- addmm ---------------------------------------------------------------------

_A = [[1.0, 2.0, -1.0], [3.0, 4.0, 0.5]]
_B = [[0.5, 1.0], [2.0, -1.0], [1.0, 3.0]]


@pytest.mark.parametrize("build", [
    lambda m: m.addmm(m.array([[1.0, 2.0], [3.0, 4.0]]), m.array(_A), m.array(_B)),
    lambda m: m.addmm(m.array([1.0, -2.0]), m.array(_A), m.array(_B), 2.0, 0.25),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_B), alpha=0.1, beta=-3),
    lambda m: m.addmm(m.array([float("nan"), 1.0]), m.array(_A), m.array(_B), beta=0.0),
    lambda m: m.addmm(m.array([1.0, 2.0]), m.array([1.0, 2.0, 3.0]), m.array(_B)),
    lambda m: m.addmm(m.array([1.0, 2.0]), m.array(_A), m.array([1.0, 2.0, 3.0])),
    lambda m: m.addmm(m.array(1.0), m.array([1.0, 2.0]), m.array([3.0, 4.0])),
    lambda m: m.addmm(m.array([1.0, 2.0]), m.ones((3, 2, 3)), m.array(_B)),
    lambda m: m.addmm(m.ones((3, 1, 2)), m.ones((3, 2, 3)), m.ones((1, 3, 2))),
    lambda m: m.addmm(m.array(1.0, m.float16), m.array(_A, m.float16), m.array(_B, m.bfloat16)),
    lambda m: m.addmm(m.array(1.0), m.array(_A, m.complex64), m.array(_B)),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_B), alpha=m.array(2.0)),
])
@needs_mlx
def test_addmm_values(build):
    ours, theirs = both(build)
    assert_same_as_mlx(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda m: m.addmm(1.0, m.array(_A), m.array(_B)),
    lambda m: m.addmm(m.array(1.0), m.array(2.0), m.array(_B)),
    lambda m: m.addmm(m.array([1, 2]), m.array([[1, 2]]), m.array([[1], [2]])),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_A)),
    lambda m: m.addmm(m.array([1.0, 2.0, 3.0]), m.array(_A), m.array(_B)),
    lambda m: m.addmm(m.ones((4, 3, 2, 2)), m.ones((3, 2, 2)), m.ones((1, 2, 2))),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_B), alpha="x"),
])
@needs_mlx
def test_addmm_errors(call):
    assert_same_error(call)


def _linear_addmm(m, dtype_name, alpha, beta):
    """``addmm`` as ``nn.Linear`` calls it (a transposed weight), beside the
    same sum written as ops; random operands, so many sums are inexact."""
    dtype = getattr(m, dtype_name)
    x = m.random.normal((8, 64), key=m.random.key(1)).astype(dtype)
    w = m.random.normal((16, 64), key=m.random.key(2)).astype(dtype)
    bias = m.random.normal((16,), key=m.random.key(3)).astype(dtype)
    return (m.addmm(bias, x, w.T, alpha=alpha, beta=beta).tolist(),
            (alpha * (x @ w.T) + beta * bias).tolist())


ALPHA_BETA = [(1.0, 1.0), (2.0, 0.5), (0.3, 1.7), (-1.1, 3.0)]


@pytest.mark.parametrize("alpha, beta", ALPHA_BETA)
def test_float32_addmm_is_the_rounded_product_then_the_bias(alpha, beta):
    # The product leaves its float32 accumulator before c joins it, so the
    # fused op and the ops written out agree to the bit: a sharded layer on
    # one rank gives what nn.Linear gives. (Formed in double with c, they
    # differed in the last bit of some elements.)
    fused, written_out = _linear_addmm(mx, "float32", alpha, beta)
    assert fused == written_out


@needs_mlx
@pytest.mark.parametrize("alpha, beta", ALPHA_BETA)
def test_mlx_float32_addmm_of_a_transposed_weight_is_the_product_then_the_bias(alpha, beta):
    # The property the test above gives mlxref, seen in MLX (OpenBLAS's sgemm).
    fused, written_out = _linear_addmm(real_mx, "float32", alpha, beta)
    assert fused == written_out


@needs_mlx
@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("alpha, beta", ALPHA_BETA)
def test_half_addmm_is_mlx_s_to_the_bit(dtype_name, alpha, beta):
    # The half types' float32 accumulator takes alpha * acc + beta * c before
    # the one rounding to the half type, so here fused and written out differ.
    ours, theirs = _linear_addmm(mx, dtype_name, alpha, beta), _linear_addmm(real_mx, dtype_name, alpha, beta)
    assert ours[0] == theirs[0]
    assert ours[0] != ours[1]


def _addmm_rules(m):
    a = m.array(_A)
    b = m.array(_B)
    c = m.array([[1.0, -1.0], [0.5, 2.0]])
    ta, tb, tc = m.ones_like(a), m.full(b.shape, 0.5), m.array([[1.0, 2.0], [3.0, 4.0]])
    jvp = m.jvp(lambda a, b, c: m.addmm(c, a, b), [a, b, c], [ta, tb, tc])[1][0]
    vjp = m.vjp(lambda a, b, c: m.addmm(c, a, b, 2.0, 3.0), [a, b, c], [tc])[1]
    return [jvp] + list(vjp)


@needs_mlx
def test_addmm_rules_match_mlx():
    for ours, theirs in zip(_addmm_rules(mx), _addmm_rules(real_mx)):
        assert_same_as_mlx(ours, theirs)


def test_addmm_jvp_keeps_alpha_and_beta():
    # MLX 0.32 leaves alpha and beta out of the tangent; mlxref gives the
    # derivative of alpha a@b + beta c, the same as the composed ops'.
    a, b, c = mx.array(_A), mx.array(_B), mx.array([[1.0, -1.0], [0.5, 2.0]])
    ta, tb, tc = mx.ones_like(a), mx.full(b.shape, 0.5), mx.array([[1.0, 2.0], [3.0, 4.0]])
    got = mx.jvp(lambda a, b, c: mx.addmm(c, a, b, 2.0, 3.0), [a, b, c], [ta, tb, tc])[1][0]
    want = mx.jvp(lambda a, b, c: 2.0 * (a @ b) + 3.0 * c, [a, b, c], [ta, tb, tc])[1][0]
    assert mx.allclose(got, want).item()


@pytest.mark.parametrize("in_axes, shapes", [
    ((None, 0, None), ((3,), (2, 3, 4), (4, 3))),
    ((None, 1, None), ((2,), (2, 3, 4), (4, 2))),
    ((2, 0, 1), ((3, 3, 2), (2, 3, 4), (4, 2, 3))),
    ((0, None, None), ((2, 3, 2), (3, 4), (4, 2))),  # only c batched: MLX fails
])
def test_addmm_vmap_matches_a_loop(in_axes, shapes):
    mx.random.seed(3)
    c, a, b = (mx.random.uniform(shape=s) for s in shapes)
    out = mx.vmap(mx.addmm, in_axes=in_axes)(c, a, b)
    size = next(x.shape[ax] for x, ax in zip((c, a, b), in_axes) if ax is not None)

    def pick(x, ax, i):
        return x if ax is None else mx.take(x, i, axis=ax)

    want = mx.stack([mx.addmm(*(pick(x, ax, i) for x, ax in zip((c, a, b), in_axes)))
                     for i in range(size)])
    assert out.shape == want.shape
    assert mx.allclose(out, want, rtol=1e-5, atol=1e-6).item()


# --- linalg.inv and tri_inv ------------------------------------------------------

_M = [[4.0, 7.0, 2.0], [3.0, 6.0, 1.0], [2.0, 5.0, 3.0]]


@pytest.mark.parametrize("build", [
    lambda m: m.linalg.inv(m.array(_M)),
    lambda m: m.linalg.inv(m.array([_M, [[2.0, 0, 0], [0, 0, 1.0], [0, 3.0, 0]]])),
    lambda m: m.linalg.inv(m.array([[1.0, 2.0], [3.0, 4.0]], m.float64)),
    lambda m: m.linalg.inv(m.array([[1e-30, 0.0], [0.0, 1e-30]])),
    lambda m: m.linalg.inv(m.array([[float("nan"), 0.0], [0.0, 1.0]])),
    lambda m: m.linalg.tri_inv(m.array(_M)),
    lambda m: m.linalg.tri_inv(m.array(_M), upper=True),
    lambda m: m.vmap(m.linalg.inv, in_axes=2)(m.stack([m.array(_M), 2 * m.array(_M)], axis=2)),
])
@needs_mlx
def test_inv_values(build):
    ours, theirs = both(build)
    assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0]])),
    lambda m: m.linalg.inv(m.array([1.0, 2.0])),
    lambda m: m.linalg.inv(m.array([[1, 2], [3, 4]])),
    lambda m: m.linalg.inv(m.array([[1, 2], [3, 4]], m.float16)),
    lambda m: m.linalg.inv([[1.0, 2.0], [3.0, 4.0]]),
    # singular: raised when evaluated, with LAPACK's first zero pivot
    lambda m: m.eval(m.linalg.inv(m.array([[1.0, 2.0], [2.0, 4.0]]))),
    lambda m: m.eval(m.linalg.inv(m.zeros((2, 2)))),
    lambda m: m.eval(m.linalg.inv(m.array([[[1.0, 0], [0, 1.0]], [[1.0, 0], [0, 0.0]]]))),
    lambda m: m.eval(m.linalg.tri_inv(m.array([[1.0, 5.0], [3.0, 0.0]]))),
])
@needs_mlx
def test_inv_errors(call):
    assert_same_error(call)


def test_inv_of_a_singular_matrix_is_lazy():
    a = mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]))  # no error yet
    with pytest.raises(RuntimeError, match=r"LU factorization failed with error code 2"):
        mx.eval(a)


def test_inv_rules_are_the_derivative():
    # MLX 0.32 has no vjp or jvp for Inverse; mlxref's are checked against
    # finite differences here (and against SymPy in check-rules).
    a = mx.array(_M, mx.float64)
    t = mx.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.1, 0.0]], mx.float64)
    eps = 1e-6
    fd = (mx.linalg.inv(a + eps * t) - mx.linalg.inv(a - eps * t)) / (2 * eps)
    jvp = mx.jvp(mx.linalg.inv, [a], [t])[1][0]
    assert mx.allclose(jvp, fd, rtol=1e-6, atol=1e-8).item()
    g = mx.array([[1.0, 0.0, 2.0], [0.0, -1.0, 0.0], [0.5, 0.0, 1.0]], mx.float64)
    vjp = mx.vjp(mx.linalg.inv, [a], [g])[1][0]
    # <vjp, t> = <g, jvp>
    assert abs((vjp * t).sum().item() - (g * jvp).sum().item()) < 1e-9


def test_tri_inv_gradient_stays_in_its_triangle():
    a = mx.array(_M)
    g = mx.grad(lambda x: mx.linalg.tri_inv(x).sum())(a)
    assert g.tolist()[0][1:] == [0.0, 0.0] and g.tolist()[1][2] == 0.0


# === Matmul's rules: vjp and jvp against MLX's ==========================================

T = [  # (2, 2, 4)
    [[1.0, 3.0, 0.5, 3.0], [2.0, 0.0, -1.0, 2.0]],
    [[0.0, 0.0, 1.0, 2.0], [1.5, -2.0, -2.0, 1.0]],
]

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
    assert_rules_same_as_mlx(lambda m, x, y: m.matmul(x, y), a, b)


@needs_mlx
def test_matmul_wrt_one_input():
    # Only one argument traced: the jvp has one term, the vjp one product.
    assert_rules_same_as_mlx(lambda m, a: m.matmul(a, m.array(B32)), A23)
    assert_rules_same_as_mlx(lambda m, b: m.matmul(m.array(A23), b), B32)


@needs_mlx
def test_matmul_of_a_matrix_with_itself():
    assert_rules_same_as_mlx(lambda m, x: x @ m.swapaxes(x, -1, -2), T)


# --- second order ---------------------------------------------------------------------------

SECOND_ORDER = {
    "matmul": lambda m, x: m.sum(m.square(x @ m.swapaxes(x, 0, 1))),
}


@needs_mlx
@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives_match_mlx(name):
    check_second_derivative_against_mlx(SECOND_ORDER[name])


# --- finite differences, to second order ------------------------------------------------------

X, X3 = fd_matrix(), fd_cube()  # float64, no ties, no zeros

CHECKED = {
    "matmul": (lambda a, b: a @ b, [X, mx.swapaxes(X, 0, 1)]),
    "matmul batched": (lambda a, b: a @ b, [X3, X3[:1]]),
    "matvec": (lambda a, b: a @ b, [X, X[0]]),
}


@pytest.mark.parametrize("name", CHECKED)
def test_check_grads_second_order(name):
    f, args = CHECKED[name]
    check_grads(f, args, order=2)


# === vmap of Matmul: every batch-axis position, against MLX and against a loop =========

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
    a = spread_array(m, shape_a if axes[0] is None else batched_shape(shape_a, axes[0]), 1)
    b = spread_array(m, shape_b if axes[1] is None else batched_shape(shape_b, axes[1]), 2)
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
        a = spread_array(mx, (2, 4, BATCH) if axes[0] == -1 else (2, BATCH, 4) if axes[0] == -2
                 else (2, 4), 1)
        b = spread_array(mx, (4, 5) if axes[1] is None else (4, 5, BATCH) if axes[1] == -1
                 else (4, BATCH, 5) if axes[1] == -2 else (BATCH, 4, 5), 2)
        ra = real_mx.array(a.tolist())
        rb = real_mx.array(b.tolist())
        assert_same_as_mlx(mx.vmap(mx.matmul, in_axes=axes)(a, b),
                           real_mx.vmap(real_mx.matmul, in_axes=axes)(ra, rb))


# --- against a loop over the examples -------------------------------------------------------


@pytest.mark.parametrize("shape_a,shape_b", [c[1:] for c in MATMUL], ids=[c[0] for c in MATMUL])
def test_matmul_equals_a_loop(shape_a, shape_b):
    a_s, b_s = spread_examples(shape_a, 1), spread_examples(shape_b, 2)
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
    ours = nested(mx)(spread_array(mx, a, 1), spread_array(mx, b, 2))
    theirs = nested(real_mx)(spread_array(real_mx, a, 1), spread_array(real_mx, b, 2))
    assert ours.shape == (2, 3, 5, 6)
    assert_same_as_mlx(ours, theirs)


# --- complex64: matmul and the ops around it, against MLX ------------------------------
# MLX's convention: the jvp multiplies the tangent by f'(z), the vjp multiplies the
# cotangent by conj(f'(z)).

Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j, -1.5 - 2.5j]
W = [0.5 - 1j, 2 + 0.5j, -1 + 1j, 0.75 + 0.125j]


@needs_mlx
def test_softmax_matmul_and_friends_match_mlx():
    a = [[1 + 2j, 1 - 1j], [3 + 0j, 0j]]
    for build in [
        lambda m: m.softmax(m.array(a), axis=1),
        lambda m: m.softmax(m.array(a), axis=0),
        lambda m: m.logsumexp(m.array(a), axis=0, keepdims=True),
        lambda m: m.var(m.array(a), axis=1, ddof=1),
        lambda m: m.array(a) @ m.array([[0.5 - 1j], [2 + 0.5j]]),
        lambda m: m.array(a) @ m.array([[1.5, 2.0], [-1.0, 0.5]]),
        lambda m: m.inner(m.array(Z), m.array(W)),
        lambda m: m.outer(m.array(Z[:2]), m.array([1.0, 2.0])),
        lambda m: m.clip(m.array([1 + 2j, -1 + 0j, 5 + 5j]), 0, 3),
        lambda m: m.where(m.array([True, False]), m.array([1 + 1j, 2 + 2j]), 0.5),
    ]:
        assert_both(build, rtol=3e-6, atol=1e-6)


def test_vjp_of_matmul_and_prod_conjugate():
    a, b = mx.array([[1 + 2j, 1j]]), mx.array([[0.5 - 1j], [2 + 0j]])
    cot = mx.array([[1 - 1j]])
    _, (va, vb) = mx.vjp(mx.matmul, [a, b], [cot])
    assert close(va.tolist(), [[(1 - 1j) * (0.5 + 1j), (1 - 1j) * 2]])
    assert close(vb.tolist(), [[(1 - 2j) * (1 - 1j)], [-1j * (1 - 1j)]])
    _, (vp,) = mx.vjp(lambda z: z.prod(), [mx.array(Z[:3])], [mx.array(1 - 1j)])
    others = [Z[1] * Z[2], Z[0] * Z[2], Z[0] * Z[1]]
    assert close(vp.tolist(), [(1 - 1j) * o.conjugate() for o in others], rtol=1e-5)


# --- integer dtypes ---------------------------------------------------------------------


@each_lib
@pytest.mark.parametrize("name", ["int32", "uint8", "bool_"])
def test_integer_matmul_is_refused(m, name):
    a = m.array([[1, 2], [3, 4]], getattr(m, name))
    with pytest.raises(ValueError, match=r"\[matmul\] Only inexact types are supported"):
        m.matmul(a, a)


# --- vecdot and the array API namespace ---------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m: m.vecdot(m.array([[1.0, 2, 3], [4, 5, 6]]), m.array([[1.0, 0, 2]])),
    lambda m: m.vecdot(m.array([[1.0, 2, 3], [4, 5, 6]]), m.array([[1.0, 2, 3], [4, 5, 6]]), axis=0),
    lambda m: m.vecdot(m.array([1, 2]), m.array([3, 4])),
    lambda m: m.vecdot(m.array([1 + 2j, 2]), m.array([3, 4j])),
    lambda m: m.vecdot(m.array([True, False]), m.array([True, True])),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([1.0, 0, 2])),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([1.0, 0, 2]), axis=0),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([1.0, 0, 2]), axis=1),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array(1.0)),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([[1.0, 2, 3]]), axis=2),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([[1.0, 2, 3]]), axis=-3),
    lambda m: m.vecdot(m.array([1, 2]), m.array([3, 4, 5])),
    lambda m: m.vecdot([1, 2], [3, 4]),
    lambda m: m.grad(lambda a: m.vecdot(a, m.array([2.0, -1.0])))(m.array([1.0, 3.0])),
])
def test_vecdot_as_in_mlx(case):
    assert_both(case, rtol=1e-5)


@needs_mlx
def test_matmul_of_half_types_and_near_float32_overflow_is_mlx_bit_for_bit():
    # MLX's CPU kernel rounds every product and partial sum to float32: exactly what
    # mlxref follows for float16, bfloat16, and float32 whose partial sums may overflow.
    # Shapes reach every path of the kernel (K <= 4, N = 1, the rest).
    import random

    rng = random.Random(11)
    draws = {
        "normal": lambda: rng.gauss(0, 2),
        "big": lambda: rng.choice([1, -1]) * rng.uniform(100, 250),
        "cancel": lambda: rng.choice([300.0, -300.0, 1.0, -1.0, 0.001]),
        "overflow": lambda: rng.choice([3e38, -3e38, 2e38, 1e20, -1e20, 1.0, 1e19]),
    }
    for dtype, modes in [("float16", ("normal", "big", "cancel")),
                         ("bfloat16", ("normal", "big", "cancel")), ("float32", ("overflow",))]:
        for mode in modes:
            for m, k, n in [(1, 3, 1), (2, 2, 3), (4, 1, 5), (3, 5, 1), (5, 17, 4), (16, 32, 16)]:
                a = [draws[mode]() for _ in range(m * k)]
                b = [draws[mode]() for _ in range(k * n)]
                ours = mx.array(a, getattr(mx, dtype)).reshape(m, k) @ mx.array(
                    b, getattr(mx, dtype)).reshape(k, n)
                theirs = real_mx.array(a, getattr(real_mx, dtype)).reshape(m, k) @ real_mx.array(
                    b, getattr(real_mx, dtype)).reshape(k, n)
                assert repr(ours.tolist()) == repr(theirs.tolist()), (dtype, mode, m, k, n)
