"""Tests of the reduction family: sum prod mean var std max min argmax argmin
all any logsumexp cumsum softmax.

Expected values are worked out by hand or with ``math``; the last tests compare
with real MLX over many shapes, axes, dtypes and keepdims.
"""

import itertools
import math
import re

import pytest

import mlxref.core as mx
from mlxref.core.primitives import reduction as P
from support import assert_array, assert_new_handle, assert_same_as_mlx, needs_mlx, real_mx
from mlxref.core.array import from_data

inf, nan = math.inf, math.nan


def empty(shape, dtype=mx.float32):
    # The creation family (mx.zeros) is written elsewhere; build a size-0 array directly.
    return from_data([], shape, dtype)


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


I = [[1, 2, 3], [4, 5, 6]]  # noqa: E741
F = [[1.0, -2.0, 3.5], [0.5, 5.0, -6.0]]
B = [[True, False, True], [True, True, True]]


# --- sum, prod, max, min, all, any ----------------------------------------------------


def test_sum_over_axes_and_dtypes():
    a = mx.array(I)
    assert_array(mx.sum(a), 21, mx.int32, ())
    assert_array(mx.sum(a, axis=0), [5, 7, 9], mx.int32, (3,))
    assert_array(mx.sum(a, axis=-1), [6, 15], mx.int32, (2,))
    assert_array(mx.sum(a, axis=[1]), [6, 15], mx.int32, (2,))
    assert_array(mx.sum(a, axis=(1, 0)), 21, mx.int32, ())
    assert_array(mx.sum(a, 1, True), [[6], [15]], mx.int32, (2, 1))
    assert_array(mx.sum(a, keepdims=True), [[21]], mx.int32, (1, 1))
    assert_array(mx.sum(mx.array(B), axis=1), [2, 3], mx.int32)
    assert_array(mx.sum(mx.array(F), axis=0), [1.5, 3.0, -2.5], mx.float32)
    assert_array(mx.sum(mx.array(F, mx.float64), axis=1), [2.5, -0.5], mx.float64)
    assert_array(mx.sum(mx.array([1, 2], mx.int64)), 3, mx.int64)
    assert_array(a.sum(axis=0), [5, 7, 9], mx.int32)


def test_sum_of_a_middle_axis_of_a_3d_array():
    # a[i][j][k] = 100 i + 10 j + k, shape (2, 3, 4); sum over j: 300 i + 30 + 3 k
    a = mx.array([[[100 * i + 10 * j + k for k in range(4)] for j in range(3)] for i in range(2)])
    expected = [[300 * i + 30 + 3 * k for k in range(4)] for i in range(2)]
    assert_array(mx.sum(a, axis=1), expected, mx.int32, (2, 4))
    # over (0, 2): sum_i sum_k = 4*100 + 2*(0+1+2+3) + 8*10 j
    assert_array(mx.sum(a, axis=(0, 2)), [412 + 80 * j for j in range(3)], mx.int32, (3,))
    kept = mx.sum(a, axis=(0, 2), keepdims=True)
    assert_array(kept, [[[412], [492], [572]]], mx.int32, (1, 3, 1))


def test_prod():
    a = mx.array(I)
    assert_array(mx.prod(a), 720, mx.int32)
    assert_array(mx.prod(a, axis=0), [4, 10, 18], mx.int32)
    assert_array(mx.prod(mx.array(B), axis=1), [0, 1], mx.int32)
    kept = mx.prod(mx.array(F), axis=-1, keepdims=True)
    assert_array(kept, [[-7.0], [-15.0]], mx.float32, (2, 1))


def test_max_min():
    a = mx.array(F)
    assert_array(mx.max(a), 5.0, mx.float32, ())
    assert_array(mx.min(a), -6.0, mx.float32, ())
    assert_array(mx.max(a, axis=0), [1.0, 5.0, 3.5], mx.float32)
    assert_array(mx.min(a, axis=1, keepdims=True), [[-2.0], [-6.0]], mx.float32, (2, 1))
    assert_array(mx.max(mx.array(I), axis=-1), [3, 6], mx.int32)
    assert_array(mx.max(mx.array([[True, False]]), axis=1), [True], mx.bool_)
    assert_array(mx.min(mx.array([[True, False]]), axis=1), [False], mx.bool_)


def test_max_min_propagate_nan():
    a = mx.array([[1.0, nan, 3.0], [1.0, 2.0, 3.0]])
    assert_array(mx.max(a, axis=1), [nan, 3.0])
    assert_array(mx.min(a, axis=1), [nan, 1.0])
    assert_array(mx.max(a, axis=0), [1.0, nan, 3.0])
    assert math.isnan(mx.max(mx.array([nan, 1.0])).item())
    assert math.isnan(mx.min(mx.array([5.0, nan])).item())


def test_all_any():
    a = mx.array(B)
    assert_array(mx.all(a), False, mx.bool_, ())
    assert_array(mx.any(a), True, mx.bool_, ())
    assert_array(mx.all(a, axis=1), [False, True], mx.bool_)
    assert_array(mx.all(a, axis=0, keepdims=True), [[True, False, True]], mx.bool_, (1, 3))
    assert_array(mx.any(mx.array([[0.0, -0.0], [0.0, 2.0]]), axis=-1), [False, True], mx.bool_)
    assert_array(mx.all(mx.array([nan, 1.0])), True, mx.bool_)  # nan is non-zero
    assert_array(mx.all(mx.array(I)), True, mx.bool_)


def test_empty_axes_reduce_nothing():
    b = mx.array(B)
    assert_new_handle(mx.sum(b, axis=()), b)  # as in MLX: the input itself, still bool
    assert_new_handle(mx.prod(b, axis=[]), b)
    assert_new_handle(mx.max(b, axis=()), b)
    assert_new_handle(mx.min(b, axis=()), b)
    assert_array(mx.all(mx.array(I), axis=()), [[True] * 3] * 2, mx.bool_, (2, 3))
    assert_array(mx.any(mx.array([0, 2]), axis=()), [False, True], mx.bool_)
    assert_array(mx.mean(mx.array(I), axis=()), I, mx.float32, (2, 3))
    assert_array(mx.var(mx.array(I), axis=()), [[0.0] * 3] * 2, mx.float32)
    assert_array(mx.logsumexp(mx.array([[1, 2]]), axis=()), [[1.0, 2.0]], mx.float32)
    assert_array(mx.softmax(mx.array([[1, 2]]), axis=()), [[1, 1]], mx.int32)


def test_scalar_inputs():
    s = mx.array(3.0)
    for op in (mx.sum, mx.prod, mx.max, mx.min, mx.mean, mx.logsumexp):
        assert_array(op(s), 3.0, mx.float32, ())
    assert_array(mx.sum(mx.array(3.0), keepdims=True), 3.0, mx.float32, ())
    assert_array(mx.var(s), 0.0, mx.float32, ())
    assert_array(mx.std(s), 0.0, mx.float32, ())
    assert_array(mx.all(mx.array(0)), False, mx.bool_, ())
    assert_array(mx.argmax(s), 0, mx.uint32, ())
    assert_array(mx.argmin(mx.array(True)), 0, mx.uint32, ())
    assert_array(mx.softmax(s), 1.0, mx.float32, ())
    assert_array(mx.softmax(mx.array(7)), 1, mx.int32, ())
    assert_array(mx.cumsum(s), [3.0], mx.float32, (1,))


def test_size_zero_reductions():
    e = empty((2, 0))
    assert_array(mx.sum(e), 0.0, mx.float32, ())
    assert_array(mx.sum(e, axis=1), [0.0, 0.0], mx.float32, (2,))
    assert_array(mx.sum(e, axis=0), [], mx.float32, (0,))
    assert_array(mx.sum(empty((2, 0), mx.int32), axis=1), [0, 0], mx.int32)
    assert_array(mx.prod(e, axis=1), [1.0, 1.0], mx.float32)
    assert_array(mx.prod(empty((0,), mx.bool_)), 1, mx.int32)
    assert_array(mx.all(e, axis=1), [True, True], mx.bool_)
    assert_array(mx.any(e), False, mx.bool_)
    assert_array(mx.max(e, axis=0), [], mx.float32, (0,))
    assert_array(mx.mean(e, axis=1), [nan, nan], mx.float32)  # 0 * (1/0)
    assert_array(mx.var(e), nan, mx.float32)
    assert_array(mx.std(e, axis=0), [], mx.float32, (0,))
    out = mx.softmax(empty((0, 3), mx.int32))
    assert out.shape == (0, 3) and out.dtype is mx.int32
    assert_array(mx.cumsum(e, axis=1), [[], []], mx.float32, (2, 0))
    assert_array(mx.cumsum(e), [], mx.float32, (0,))


def test_ops_are_lazy():
    a = mx.array(F)
    outs = [
        mx.sum(a, axis=0), mx.max(a), mx.argmax(a, axis=1), mx.cumsum(a),
        mx.logsumexp(a), mx.softmax(a, axis=0), mx.mean(a), mx.var(a), mx.all(a),
    ]
    assert all(o.data() is None for o in outs)
    mx.eval(outs)
    assert all(o.data() is not None for o in outs)


# --- mean, var, std ---------------------------------------------------------------------


def test_mean():
    assert_array(mx.mean(mx.array(I)), 3.5, mx.float32, ())
    assert_array(mx.mean(mx.array(I), axis=0), [2.5, 3.5, 4.5], mx.float32)
    assert_array(mx.mean(mx.array(B), axis=1, keepdims=True), [[2 / 3], [1.0]], mx.float32, (2, 1))
    assert_array(mx.mean(mx.array(F, mx.float64), axis=-1), [2.5 / 3, -0.5 / 3], mx.float64)
    assert_array(mx.mean(mx.array([1, 2], mx.int64)), 1.5, mx.float32)


def _var(xs, ddof=0):
    m = math.fsum(xs) / len(xs)
    return math.fsum((x - m) ** 2 for x in xs) / (len(xs) - ddof)


def test_var_std():
    rows = F
    assert_array(mx.var(mx.array(F), axis=1), [_var(r) for r in rows], mx.float32)
    assert_array(mx.var(mx.array(F), axis=1, ddof=1), [_var(r, 1) for r in rows], mx.float32)
    assert_array(mx.std(mx.array(F), axis=1), [math.sqrt(_var(r)) for r in rows], mx.float32)
    cols = [list(c) for c in zip(*F)]
    kept = mx.var(mx.array(F), axis=0, keepdims=True)
    assert_array(kept, [[_var(c) for c in cols]], shape=(1, 3))
    assert_array(mx.std(mx.array(F), 0, False, 1), [math.sqrt(_var(c, 1)) for c in cols])
    flat = [x for r in F for x in r]
    assert_array(mx.var(mx.array(F)), _var(flat), mx.float32, ())
    assert_array(mx.var(mx.array(I), ddof=True), 3.5, mx.float32)  # ddof=True is 1, as in MLX
    assert_array(mx.var(mx.array(I), ddof=-1), 17.5 / 7, mx.float32)


def test_var_of_bool_and_too_large_ddof():
    # B has five True out of six: var = p (1 - p) with p = 5/6.
    assert_array(mx.var(mx.array(B)), 5 / 6 * 1 / 6, mx.float32)
    # n - ddof <= 0 divides by max(n - ddof, 0) = 0: inf, or nan for zero spread.
    assert_array(mx.var(mx.array(I), axis=1, ddof=3), [inf, inf], mx.float32)
    assert_array(mx.std(mx.array(I), axis=0, ddof=5), [inf, inf, inf], mx.float32)
    assert_array(mx.var(mx.array([[2.0, 2.0]]), axis=1, ddof=2), [nan])


def test_var_is_composed_like_mlx():
    out = mx.std(mx.array(F), axis=0)
    assert out.primitive().name == "Sqrt"
    assert mx.mean(mx.array(F)).primitive().name == "Multiply"
    assert mx.var(mx.array(F), ddof=1).primitive().name == "Divide"


# --- argmax, argmin ---------------------------------------------------------------------


def test_argmax_argmin():
    a = mx.array([[1, 9, 9], [8, 2, 0]])
    assert_array(mx.argmax(a), 1, mx.uint32, ())  # the first of the two 9s, flattened
    assert_array(mx.argmin(a), 5, mx.uint32, ())
    assert_array(mx.argmax(a, axis=0), [1, 0, 0], mx.uint32, (3,))
    assert_array(mx.argmax(a, axis=-1), [1, 0], mx.uint32, (2,))
    assert_array(mx.argmin(a, axis=1, keepdims=True), [[0], [2]], mx.uint32, (2, 1))
    assert_array(mx.argmax(a, keepdims=True), [[1]], mx.uint32, (1, 1))
    assert_array(mx.argmax(mx.array([True, False, True])), 0, mx.uint32)
    assert_array(mx.argmin(mx.array([[3.0, 1.0, 1.0]]), axis=True), [1])  # axis=True is axis 1


def test_argmax_argmin_pick_the_first_nan():
    assert_array(mx.argmax(mx.array([1.0, nan, 3.0])), 1)
    assert_array(mx.argmin(mx.array([1.0, nan, 3.0])), 1)
    assert_array(mx.argmax(mx.array([nan, 5.0, nan])), 0)
    assert_array(mx.argmin(mx.array([[0.0, 5.0], [2.0, nan]]), axis=1), [0, 1])


# --- logsumexp ----------------------------------------------------------------------------


def _lse(xs):
    m = max(xs)
    return m + math.log(math.fsum(math.exp(x - m) for x in xs))


def test_logsumexp_values():
    a = mx.array(F)
    assert_array(mx.logsumexp(a, axis=1), [_lse(r) for r in F], mx.float32, (2,))
    assert_array(mx.logsumexp(a, axis=0, keepdims=True), [[_lse(c) for c in zip(*F)]], shape=(1, 3))
    assert_array(mx.logsumexp(a), _lse([x for r in F for x in r]), mx.float32, ())
    assert_array(mx.logsumexp(mx.array(I), axis=-1), [_lse([1, 2, 3]), _lse([4, 5, 6])], mx.float32)
    assert_array(mx.logsumexp(mx.array([[True, False, True]])), _lse([1, 0, 1]), mx.float32)
    assert_array(mx.logsumexp(mx.array([1.0, 2.0], mx.float64)), _lse([1, 2]), mx.float64)


def test_logsumexp_is_stable_and_handles_infinities():
    # The result is float32: within its rounding of the exact value.
    assert_array(mx.logsumexp(mx.array([1000.0, 1000.0])), 1000 + math.log(2), rtol=1e-7)
    assert_array(mx.logsumexp(mx.array([-1000.0, -1000.0])), -1000 + math.log(2), rtol=1e-7)
    assert_array(mx.logsumexp(mx.array([-inf, -inf])), -inf)
    assert_array(mx.logsumexp(mx.array([[-inf], [-inf]]), axis=0), [-inf])
    assert_array(mx.logsumexp(mx.array([inf, 1.0])), inf)
    assert_array(mx.logsumexp(mx.array([inf, -inf])), inf)
    assert_array(mx.logsumexp(mx.array([-inf, 1.0])), 1.0)
    assert_array(mx.logsumexp(mx.array([nan, 1.0])), nan)
    assert_array(mx.logsumexp(mx.array([inf, -inf, nan]), axis=()), [inf, -inf, nan])


# --- softmax ------------------------------------------------------------------------------


def _softmax(xs):
    e = [math.exp(x) for x in xs]
    return [v / math.fsum(e) for v in e]


def test_softmax_values():
    a = mx.array(F)
    assert_array(mx.softmax(a, axis=-1), [_softmax(r) for r in F], mx.float32, (2, 3))
    cols = [_softmax(c) for c in zip(*F)]
    assert_array(mx.softmax(a, axis=0), [list(r) for r in zip(*cols)], mx.float32, (2, 3))
    flat = _softmax([x for r in F for x in r])
    assert_array(mx.softmax(a), [flat[:3], flat[3:]], mx.float32)
    assert_array(mx.softmax(a, axis=(0, 1), precise=True), [flat[:3], flat[3:]], mx.float32)
    assert_array(mx.softmax(mx.array([1000.0, 1001.0])), _softmax([0.0, 1.0]))


def test_softmax_dtype_follows_mlx_paths():
    i = mx.array(I)
    # Over the last axis: MLX's Softmax primitive, float result.
    assert_array(mx.softmax(i, axis=1), [_softmax([1, 2, 3])] * 2, mx.float32)
    assert_array(mx.softmax(mx.array([1, 2, 3])), _softmax([1, 2, 3]), mx.float32)
    row = mx.array([[1, 2, 3]])
    assert_array(mx.softmax(row, axis=(-2, -1)), [_softmax([1, 2, 3])], mx.float32)
    # Otherwise composed and cast back to the input's dtype: ints truncate to 0.
    assert_array(mx.softmax(i), [[0, 0, 0], [0, 0, 0]], mx.int32)
    assert_array(mx.softmax(i, axis=0), [[0, 0, 0], [0, 0, 0]], mx.int32)
    assert_array(mx.softmax(mx.array([[1, 2, 3]]), axis=(1, 0)), [[0, 0, 0]], mx.int32)
    assert_array(mx.softmax(mx.array([[True, False, True]]), axis=0), [[True] * 3], mx.bool_)


def test_softmax_of_infinities_is_nan():
    assert_array(mx.softmax(mx.array([-inf, -inf])), [nan, nan])
    assert_array(mx.softmax(mx.array([inf, 1.0])), [nan, nan])
    assert_array(mx.softmax(mx.array([-inf, 0.0])), [0.0, 1.0])


# --- cumsum -------------------------------------------------------------------------------


def test_cumsum():
    a = mx.array(I)
    assert_array(mx.cumsum(a), [1, 3, 6, 10, 15, 21], mx.int32, (6,))
    assert_array(mx.cumsum(a, reverse=True), [21, 20, 18, 15, 11, 6], mx.int32)
    assert_array(mx.cumsum(a, axis=0), [[1, 2, 3], [5, 7, 9]], mx.int32, (2, 3))
    assert_array(mx.cumsum(a, axis=-1), [[1, 3, 6], [4, 9, 15]], mx.int32)
    assert_array(mx.cumsum(a, axis=0, inclusive=False), [[0, 0, 0], [1, 2, 3]], mx.int32)
    assert_array(mx.cumsum(a, axis=1, reverse=True), [[6, 5, 3], [15, 11, 6]], mx.int32)
    assert_array(mx.cumsum(a, axis=1, inclusive=False, reverse=True), [[5, 3, 0], [11, 6, 0]])
    assert_array(mx.cumsum(mx.array(F), axis=1), [[1.0, -1.0, 2.5], [0.5, 5.5, -0.5]], mx.float32)
    assert_array(a.cumsum(0), [[1, 2, 3], [5, 7, 9]], mx.int32)


def test_cumsum_dtypes():
    b = mx.array([True, True, False])
    assert_array(mx.cumsum(b), [1, 2, 2], mx.int32)
    assert_array(mx.cumsum(b, inclusive=False), [0, 1, 2], mx.int32)
    assert_array(mx.cumsum(b, dtype=mx.float32), [1.0, 2.0, 2.0], mx.float32)
    assert_array(mx.cumsum(mx.array([1, 2, 3]), dtype=mx.bool_), [1, 2, 3], mx.int32)
    assert_array(mx.cumsum(mx.array([1.5, 2.5]), dtype=mx.int32), [1, 3], mx.int32)
    f64 = mx.array([1.5, 2.5], mx.float64)
    assert_array(mx.cumsum(f64, inclusive=False), [0.0, 1.5], mx.float64)


def test_cumsum_of_a_middle_axis():
    a = mx.array([[[100 * i + 10 * j + k for k in range(2)] for j in range(3)] for i in range(2)])
    expected = [[[sum(100 * i + 10 * jj + k for jj in range(j + 1)) for k in range(2)]
                 for j in range(3)] for i in range(2)]
    assert_array(mx.cumsum(a, axis=1), expected, mx.int32, (2, 3, 2))


# --- primitives ---------------------------------------------------------------------------


def test_primitive_names_and_params():
    a = mx.array(F)
    names = [
        (mx.sum(a, axis=1), "Sum"), (mx.prod(a), "Prod"), (mx.max(a), "Max"), (mx.min(a), "Min"),
        (mx.all(a), "And"), (mx.any(a), "Or"), (mx.argmax(a), "ArgReduce"),
        (mx.cumsum(a), "CumSum"), (mx.logsumexp(a), "LogSumExp"), (mx.softmax(a), "Softmax"),
    ]
    for out, name in names:
        assert out.primitive().name == name
    p = mx.sum(a, axis=(-1, 0), keepdims=True).primitive()
    assert isinstance(p, P.Reduce) and p.axes == (0, 1) and p.keepdims is True
    assert mx.argmin(a, axis=-1).primitive().axis == 1
    assert mx.cumsum(a, axis=-1).primitive().params() == {
        "axis": 1, "reverse": False, "inclusive": True}


def test_symbolic_elements():
    sympy = pytest.importorskip("sympy")
    x, y, z, w = sympy.symbols("x y z w")
    a = mx.array([[x, y], [z, w]])
    assert mx.sum(a, axis=0).tolist() == [x + z, y + w]
    assert mx.prod(a).tolist() == x * y * z * w
    assert mx.max(a, axis=1).tolist() == [sympy.Max(x, y), sympy.Max(z, w)]
    assert mx.min(a).tolist() == sympy.Min(x, y, z, w)
    lse = mx.logsumexp(a, axis=1).tolist()
    assert sympy.simplify(lse[0] - sympy.log(sympy.exp(x) + sympy.exp(y))) == 0
    sm = mx.softmax(a, axis=0).tolist()
    assert sympy.simplify(sm[1][0] - sympy.exp(z) / (sympy.exp(x) + sympy.exp(z))) == 0
    assert mx.cumsum(a, axis=1).tolist() == [[x, x + y], [z, z + w]]
    m = mx.mean(a).tolist()
    assert sympy.simplify(m - (x + y + z + w) / 4) == 0
    v = mx.var(a, axis=1).tolist()
    assert sympy.simplify(v[0] - (x - y) ** 2 / 4) == 0


# --- errors -------------------------------------------------------------------------------


def test_invalid_axis_messages():
    a = mx.array(I)
    for op in (mx.sum, mx.prod, mx.max, mx.min, mx.all, mx.any, mx.logsumexp, mx.softmax):
        with raises(IndexError, "Invalid axis 2 for array with 2 dimensions."):
            op(a, axis=2)
        with raises(IndexError, "Invalid axis -3 for array with 2 dimensions."):
            op(a, axis=(0, -3))
    for op in (mx.argmax, mx.argmin):
        with raises(IndexError, "Invalid axis -3 for array with 2 dimensions."):
            op(a, axis=-3)
    with raises(IndexError, "Invalid axis 0 for array with 0 dimensions."):
        mx.sum(mx.array(3.0), axis=0)
    for op in (mx.mean, mx.var, mx.std):
        with raises(IndexError, "[mean] axis 2 is out of bounds for array with 2 dimensions."):
            op(a, axis=2)
        with raises(IndexError, "[mean] axis -5 is out of bounds for array with 2 dimensions."):
            op(a, axis=[0, -5])
    with raises(IndexError, "[cumsum] Axis 2 is out of bounds for array with 2 dimensions."):
        mx.cumsum(a, axis=2)
    with raises(IndexError, "[cumsum] Axis 0 is out of bounds for array with 0 dimensions."):
        mx.cumsum(mx.array(1.0), axis=0)
    # MLX's fast-path test for softmax / logsumexp reads a.shape(axis) first.
    with raises(IndexError, "SmallVector out of range."):
        mx.softmax(mx.array([[1.0, 2.0]]), axis=[-3, -2, -1])
    with raises(IndexError, "SmallVector out of range."):
        mx.logsumexp(mx.array([[1.0, 2.0]]), axis=[-3, -2, -1])


def test_duplicate_axes():
    a = mx.array(I)
    for op in (mx.sum, mx.prod, mx.max, mx.min, mx.all, mx.any, mx.mean, mx.var, mx.std,
               mx.logsumexp, mx.softmax):
        with raises(ValueError, "Duplicate axes detected in reduction."):
            op(a, axis=(0, -2))


def test_empty_reduction_errors():
    with raises(ValueError, "[max] Cannot max reduce over axis 1 with size 0."):
        mx.max(empty((2, 0)))
    with raises(ValueError, "[min] Cannot min reduce over axis 0 with size 0."):
        mx.min(empty((0, 0)))
    with raises(ValueError, "[max] Cannot max reduce over axis 1 with size 0."):
        mx.max(empty((3, 0, 0)), axis=(2, 1))
    with raises(IndexError, "Invalid axis 5 for array with 2 dimensions."):
        mx.min(empty((0, 3)), axis=(5, 0))  # the axes are checked before the sizes
    for op in ("argmax", "argmin"):
        with raises(ValueError, f"[{op}] Cannot {op} reduce zero size array."):
            getattr(mx, op)(empty((2, 0)), axis=0)
        with raises(ValueError, f"[{op}] Cannot {op} reduce zero size array."):
            getattr(mx, op)(empty((2, 0)), axis=7)  # the size is checked first
    with raises(ValueError, "[logsumexp] Received empty array."):
        mx.logsumexp(empty((2, 0)), axis=0)
    with raises(ValueError, "[logsumexp] Received empty array."):
        mx.logsumexp(empty((0,)), axis=())


def test_zero_dim_errors():
    with raises(ValueError, "[logsumexp] Received non-empty axes for array with 0 dimensions."):
        mx.logsumexp(mx.array(1.0), axis=0)
    with raises(ValueError, "[softmax] Received non-empty axes for array with 0 dimensions."):
        mx.softmax(mx.array(1.0), axis=[0])
    with raises(ValueError, "cannot create std::vector larger than max_size()"):
        mx.argmax(mx.array(1.0), keepdims=True)  # an MLX quirk, mirrored


def test_bad_argument_types():
    a = mx.array(I)
    prefix = "{}(): incompatible function arguments. The following argument types are supported:"
    cases = [
        ("sum", lambda: mx.sum([[1, 2]])),
        ("sum", lambda: mx.sum(a, axis=1.0)),
        ("prod", lambda: mx.prod(a, axis=[1.0])),
        ("max", lambda: mx.max(a, keepdims=1)),
        ("mean", lambda: mx.mean(3)),
        ("var", lambda: mx.var(a, ddof=1.5)),
        ("std", lambda: mx.std(a, ddof=2**40)),
        ("sum", lambda: mx.sum(a, axis=2**31)),
        ("argmax", lambda: mx.argmax(a, axis=(0,))),
        ("argmin", lambda: mx.argmin(a, axis=[1])),
        ("cumsum", lambda: mx.cumsum(a, axis=(0,))),
        ("cumsum", lambda: mx.cumsum(a, dtype="float32")),
        ("cumsum", lambda: mx.cumsum(a, reverse=1)),
        ("softmax", lambda: mx.softmax(a, precise=1)),
        ("logsumexp", lambda: mx.logsumexp(2.0)),
    ]
    for name, call in cases:
        with raises(TypeError, prefix.format(name)):
            call()


# --- against real MLX ---------------------------------------------------------------------


def _values(shape, dtype, seed):
    """Deterministic small values: ints in 0..3 (so products stay in int32)."""
    n = math.prod(shape)
    raw = [((i * 7 + seed * 13) % 11) for i in range(n)]
    if dtype == "float32":
        vals = [(v - 5) * 0.37 for v in raw]
    elif dtype == "int32":
        vals = [v % 4 for v in raw]
    else:
        vals = [v % 3 != 0 for v in raw]

    def nest(flat, shape):
        if not shape:
            return flat[0]
        step = len(flat) // shape[0] if shape[0] else 0
        return [nest(flat[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])]

    return nest(vals, shape)


def _compare(ours_fn, theirs_fn):
    """Same result (shape, dtype, values) or the same error (type and message)."""
    try:
        theirs = theirs_fn()
        real_mx.eval(theirs)
    except (ValueError, IndexError) as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            ours_fn()
        return
    assert_same_as_mlx(ours_fn(), theirs)


SHAPES = [(), (4,), (1, 3), (2, 3), (3, 1, 2), (2, 3, 4), (2, 0)]
AXES = [None, 0, -1, 1, (0, -1), (), [2, 0], (1, 0), 3]


def _mlx_array(values, shape, dtype):
    if math.prod(shape) == 0:
        return real_mx.zeros(shape, getattr(real_mx, dtype))
    return real_mx.array(values, dtype=getattr(real_mx, dtype))


def _our_array(values, shape, dtype):
    if math.prod(shape) == 0:
        return empty(shape, getattr(mx, dtype))
    return mx.array(values, getattr(mx, dtype))


@needs_mlx
def test_reductions_match_mlx():
    ops = ["sum", "prod", "max", "min", "all", "any", "mean", "var", "std", "logsumexp"]
    for seed, (shape, dtype) in enumerate(itertools.product(SHAPES, ["float32", "int32", "bool_"])):
        vals = _values(shape, dtype.rstrip("_"), seed)
        ours, theirs = _our_array(vals, shape, dtype), _mlx_array(vals, shape, dtype)
        for name, axis, keepdims in itertools.product(ops, AXES, [False, True]):
            if name == "logsumexp" and dtype == "bool_":
                continue  # MLX's bool bug off the last axis: test_logsumexp_of_bool
            kw = {"axis": axis, "keepdims": keepdims}
            _compare(lambda: getattr(mx, name)(ours, **kw),
                     lambda: getattr(real_mx, name)(theirs, **kw))
        for name, ddof in itertools.product(["var", "std"], [1, 2]):
            _compare(lambda: getattr(mx, name)(ours, axis=-1, ddof=ddof),
                     lambda: getattr(real_mx, name)(theirs, axis=-1, ddof=ddof))


def test_logsumexp_of_bool():
    # MLX 0.32.4 computes logsumexp over a non-last axis as max + log(sum(exp(a - max)))
    # with a bool subtraction (False - True is True), so it gets 1 + log(1 + e) here.
    # mlxref gives the true value, log(e + 1), as MLX itself does over the last axis.
    b = mx.array([[True], [False]])
    assert_array(mx.logsumexp(b, axis=0), [math.log(math.e + 1)], mx.float32)
    assert_array(mx.logsumexp(mx.array([[True, False]]), axis=1), [math.log(math.e + 1)])


@needs_mlx
def test_logsumexp_of_bool_over_the_last_axis_matches_mlx():
    vals = [[True, False, True], [False, False, True]]
    for axis in [-1, 1, None]:
        _compare(lambda: mx.logsumexp(mx.array([vals[0]]), axis=axis),
                 lambda: real_mx.logsumexp(real_mx.array([vals[0]]), axis=axis))
    _compare(lambda: mx.logsumexp(mx.array(vals), axis=-1),
             lambda: real_mx.logsumexp(real_mx.array(vals), axis=-1))


@needs_mlx
def test_argreduce_softmax_cumsum_match_mlx():
    for seed, (shape, dtype) in enumerate(itertools.product(SHAPES, ["float32", "int32", "bool_"])):
        vals = _values(shape, dtype.rstrip("_"), seed)
        ours, theirs = _our_array(vals, shape, dtype), _mlx_array(vals, shape, dtype)
        arg_cases = itertools.product(["argmax", "argmin"], [None, 0, -1, 2], [False, True])
        for name, axis, keepdims in arg_cases:
            if axis is None and keepdims and not shape:
                continue  # MLX's C++ length error, checked in test_zero_dim_errors
            kw = {"axis": axis, "keepdims": keepdims}
            _compare(lambda: getattr(mx, name)(ours, **kw),
                     lambda: getattr(real_mx, name)(theirs, **kw))
        for axis, precise in itertools.product(AXES, [False, True]):
            _compare(lambda: mx.softmax(ours, axis=axis, precise=precise),
                     lambda: real_mx.softmax(theirs, axis=axis, precise=precise))
        scan_cases = itertools.product([None, 0, -1, 1, 3], [False, True], [False, True])
        for axis, reverse, inclusive in scan_cases:
            kw = {"axis": axis, "reverse": reverse, "inclusive": inclusive}
            _compare(lambda: mx.cumsum(ours, **kw), lambda: real_mx.cumsum(theirs, **kw))
        _compare(lambda: mx.cumsum(ours, dtype=mx.float32),
                 lambda: real_mx.cumsum(theirs, dtype=real_mx.float32))


@needs_mlx
def test_special_values_match_mlx():
    rows = [
        [1.0, nan, 3.0], [-inf, -inf, -inf], [inf, 1.0, -2.0], [-inf, 0.5, 2.0], [1e3, 1e3, -1e3]
    ]
    ours, theirs = mx.array(rows), real_mx.array(rows)
    for name in ["max", "min", "sum", "logsumexp", "mean", "all", "any"]:
        for axis in [0, 1]:
            _compare(lambda: getattr(mx, name)(ours, axis=axis),
                     lambda: getattr(real_mx, name)(theirs, axis=axis))
    for name in ["argmax", "argmin"]:
        _compare(lambda: getattr(mx, name)(ours, axis=1),
                 lambda: getattr(real_mx, name)(theirs, axis=1))
    for axis in [0, 1, None]:
        _compare(lambda: mx.softmax(ours, axis=axis), lambda: real_mx.softmax(theirs, axis=axis))
        _compare(lambda: mx.cumsum(ours, axis=axis), lambda: real_mx.cumsum(theirs, axis=axis))
