"""Tests of the linalg family: matmul (and ``@``), inner, outer, clip.

Expected values are worked out by hand; the last tests compare with real MLX
over vector, matrix, batched and broadcast-batch shapes.
"""

import itertools
import random
import re

import pytest

import mlxref.core as mx
from mlxref.core.primitives.linalg import Matmul
from support import assert_array, assert_same_as_mlx, ids, needs_mlx, real_mx
from mlxref.core.array import from_data


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
