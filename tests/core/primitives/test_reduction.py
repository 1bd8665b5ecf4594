"""The reduction family (mlxref/core/primitives/reduction.py: Reduce, ArgReduce, Scan,
LogSumExp, Softmax; backend/cpu/reduce.py, arg_reduce.py, scan.py, softmax.py; MLX's
mlx/primitives.cpp and mlx/backend/cpu/reduce.cpp, arg_reduce.cpp, scan.cpp,
softmax.cpp): the reductions, mean, var and std, argmax and argmin, logsumexp and
softmax, the scans (cumsum, cumprod, cummax, cummin, logcumsumexp), count_nonzero and
minmax; their vjp, jvp and vmap rules against MLX's; and their accumulators, dtype by
dtype.

Expected values are written by hand (``math`` for the transcendental ones); the
last tests of the first part compare every reduction with real MLX 0.32.4 over a
grid of shapes, axes and dtypes.

The rules: each is compared with real MLX 0.32.4 (values, shape and dtype of
every vjp and jvp) and checked numerically to second order with ``check_grads``.
vmap: each op is vmapped over every batch-axis position of its input (and -1),
with two output axes, and compared with real MLX; then with a Python loop (the
vmapped result is the stack of the op on each example); then nested vmaps,
per-example gradients (``vmap(grad(...))``) and the rules called directly on
unbatched inputs.

The scans' values, dtypes and errors are compared with MLX on every direction
(``reverse``, ``inclusive``) and axis; gradients through zeros (cumprod) and
ties (cummax, cummin) against MLX's vjp, and every jvp against the Jacobian
the vjp gives (MLX 0.32.4 has no jvp for cumprod, cummax and cummin).

Dtype by dtype, what MLX's CPU build stores: the result dtypes of sum and prod
(integers widen to 32 bits), the accumulators (float32 for the sums, products
and matrix products of float32, float16 and bfloat16; the dtype itself for a
cumsum, a scatter-add and a half-precision softmax), overflow to inf and
wrap-around on the way, nan and signed zeros. The rule tests run the same
assertions on mlxref and, when it is installed, on real MLX, with expected
values worked out here from the inputs (``_f32``, ``_f16``, ``_bf16`` round as C
does). Then mlxref is compared with MLX over every dtype at its boundary values.
"""

import array as pyarray
import itertools
import math
import random
import re
import struct

import pytest

import mlxref.core as mx
from mlxref.core.array import from_data
from mlxref.core.primitives import creation as C
from mlxref.core.primitives import linalg as L
from mlxref.core.primitives import reduction as P
from mlxref.core.primitives import reduction as R
from mlxref.core.primitives.reduction import Reduce, Scan
from mlxref.testing import check_grads
from support import (BATCH, assert_array, assert_both, assert_new_handle, assert_rules_same_as_mlx,
                     assert_same_as_mlx, assert_same_error, assert_same_result, assert_stack_of,
                     batched_shape, both, check_second_derivative_against_mlx,
                     check_unary_vmap_against_loop, check_unary_vmap_against_mlx, close, dtype_name,
                     each_lib, fd_cube, fd_matrix, flat, int_array, int_bits, int_edges,
                     is_unsigned, needs_mlx, real_mx, rules_in_both, same_value, spread_array,
                     spread_examples, spread_values, tied_elements, typed_array, wrap)

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


# === the rules: vjp and jvp against MLX's, and check_grads ===============================

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
    assert_rules_same_as_mlx(f, x)


@needs_mlx
@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_min_ties_match_mlx(kind, keepdims):
    # vjp: the cotangent is split evenly between tied positions (a nan row
    # gives nan everywhere); jvp: the tangent at the first arg max / arg min.
    f = lambda m, x: getattr(m, kind)(x, axis=-1, keepdims=keepdims)  # noqa: E731
    assert_rules_same_as_mlx(f, TIES)


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
    (vjps, jvp), (mlx_vjps, _) = rules_in_both(f, [M])
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
    (vjps, jvp), (mlx_vjps, mlx_jvp) = rules_in_both(lambda m, x: f(m, x), [T])
    assert_same_as_mlx(vjps[0], mlx_vjps[0])
    assert_same_as_mlx(jvp, mlx_jvp)  # uint32 zeros, argmax's dtype


@needs_mlx
def test_arg_reduce_inside_a_differentiable_program():
    f = lambda m, x: m.sum(x, axis=1) * m.argmax(x, axis=1).astype(m.float32)  # noqa: E731
    assert_rules_same_as_mlx(f, M)


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
    assert_rules_same_as_mlx(f, x)


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
    assert_rules_same_as_mlx(f, x)


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
    assert_rules_same_as_mlx(f, x)
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
    "var": lambda m, x: m.var(x * x, axis=1).sum(),
}


@needs_mlx
@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_derivatives_match_mlx(name):
    check_second_derivative_against_mlx(SECOND_ORDER[name])


# --- finite differences, to second order ------------------------------------------------------

X, X3 = fd_matrix(), fd_cube()  # float64, no ties, no zeros

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


# === vmap: against MLX and against a loop over the examples ==============================

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
]


# --- against MLX -----------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("f,shape", [c[1:] for c in UNARY], ids=[c[0] for c in UNARY])
def test_unary_ops_match_mlx(f, shape):
    check_unary_vmap_against_mlx(f, shape)


@needs_mlx
def test_unbatched_operand_inside_the_function_matches_mlx():
    # The second operand of each op is a constant of the function: unbatched.
    def f(m, x):
        w = m.array(spread_values(20, 5)).reshape(4, 5)
        s = m.softmax(x @ w, axis=0)
        return m.cumsum(s, axis=1) + m.logsumexp(x @ w, axis=-1, keepdims=True)

    x = batched_shape((2, 4), 1)
    ours = mx.vmap(lambda v: f(mx, v), in_axes=1, out_axes=2)(spread_array(mx, x))
    theirs = real_mx.vmap(lambda v: f(real_mx, v), in_axes=1, out_axes=2)(spread_array(real_mx, x))
    assert_same_as_mlx(ours, theirs)


# --- against a loop over the examples -------------------------------------------------------


@pytest.mark.parametrize("f,shape", [c[1:] for c in UNARY], ids=[c[0] for c in UNARY])
def test_unary_ops_equal_a_loop(f, shape):
    check_unary_vmap_against_loop(f, shape)


def test_batched_argmax_is_uint32():
    # MLX's argmax is uint32, batched or not.
    got = mx.vmap(lambda x: mx.argmax(x, axis=0))(spread_array(mx, (BATCH, 2, 4)))
    assert got.dtype is mx.uint32 and got.shape == (BATCH, 4)


# --- nested vmap ----------------------------------------------------------------------


@needs_mlx
def test_nested_vmap_of_sum_and_cumsum_matches_mlx():
    def f(m, x):
        return m.cumsum(m.sum(x, axis=0), axis=0, reverse=True)

    def nested(m):
        return m.vmap(m.vmap(lambda x: f(m, x), in_axes=1, out_axes=1), in_axes=-1)

    shape = (2, 5, 4, BATCH)  # inner batch axis 1 (size 5), outer -1 (size 3)
    assert_same_as_mlx(
        nested(mx)(spread_array(mx, shape)), nested(real_mx)(spread_array(real_mx, shape)))


@needs_mlx
def test_nested_vmap_of_softmax_and_argmax_matches_mlx():
    def f(m, x):
        return m.softmax(x, axis=0) * m.argmax(x, axis=0).astype(x.dtype)

    def nested(m):
        return m.vmap(m.vmap(lambda x: f(m, x), in_axes=0), in_axes=2, out_axes=1)

    shape = (5, 2, BATCH, 4)
    assert_same_as_mlx(
        nested(mx)(spread_array(mx, shape)), nested(real_mx)(spread_array(real_mx, shape)))


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
    w = spread_array(mx, (4, 3), 3)
    xs = spread_examples((2, 4), 4)
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

    ws, xs = spread_examples((4, 3), 5), spread_examples((2, 4), 6)
    g = mx.grad(loss, argnums=(0, 1))
    gw, gx = mx.vmap(g, in_axes=(2, 0), out_axes=(0, -1))(mx.stack(ws, 2), mx.stack(xs, 0))
    loop = [g(w, x) for w, x in zip(ws, xs)]
    assert_stack_of(gw, [p[0] for p in loop], 0)
    assert_stack_of(gx, [p[1] for p in loop], -1)


# --- the rules called directly ------------------------------------------------------------


def test_rules_on_an_unbatched_input_give_an_unbatched_output():
    # vmap never does this (a node on its tape has a batched input), but a
    # rule asked to must not invent a batch axis.
    x = spread_array(mx, (2, 4))
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
    (out,), (ax,) = L.Matmul().vmap([x, spread_array(mx, (4, 5), 1)], [None, None])
    assert ax is None and out.tolist() == (x @ spread_array(mx, (4, 5), 1)).tolist()


def test_reduce_rule_keeps_the_batch_axis_in_place():
    # MLX's placement: the batch axis is not moved; reduced axes before it shift it left.
    x = spread_array(mx, (2, BATCH, 4, 5))  # batch on axis 1
    (out,), (ax,) = R.Reduce("sum", (0, 2)).vmap([x], [1])  # example axes 0 and 2
    assert (out.shape, ax) == ((BATCH, 4), 0)
    assert out.tolist() == mx.sum(x, axis=(0, 3)).tolist()
    (out,), (ax,) = R.Reduce("sum", (0, 2), keepdims=True).vmap([x], [1])
    assert (out.shape, ax) == ((1, BATCH, 4, 1), 1)


# === the scans: cumprod, cummax, cummin, logcumsumexp ====================================

SCANS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
DIRECTIONS = list(itertools.product([False, True], [False, True]))  # (reverse, inclusive)
ROWS = [[1.0, 0.0, 2.0, 3.0], [-1.0, 2.0, 2.0, 0.5]]


def _scan(lib, name, x, **kw):
    return getattr(lib, name)(x, **kw)


# --- forward: values and dtypes --------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
def test_every_direction_and_axis_matches_mlx(name, axis):
    for reverse, inclusive in DIRECTIONS:
        def build(lib):
            return _scan(lib, name, lib.array(ROWS), axis=axis, reverse=reverse,
                         inclusive=inclusive)

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("dtype", ["bool_", "int8", "uint8", "int16", "uint32", "int64",
                                   "uint64", "float16", "bfloat16", "float64", "complex64"])
def test_result_dtypes_and_exclusive_starts_match_mlx(name, dtype):
    """cumprod of bool stays bool, logcumsumexp of integers is float32, and an
    exclusive cummax of uint8 starts from 0, of int8 from -128, of floats from -inf."""
    values = [3, 0, 2, 5, 1]
    for reverse, inclusive in DIRECTIONS:
        def build(lib):
            x = lib.array(values).astype(getattr(lib, dtype))
            return _scan(lib, name, x, reverse=reverse, inclusive=inclusive)

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs, rtol=1e-2 if dtype == "bfloat16" else 1e-5)


@needs_mlx
def test_integer_products_wrap_as_mlx():
    ours, theirs = both(lambda lib: lib.cumprod(lib.array([200, 2, 3, 7, 255], lib.uint8)))
    assert ours.tolist() == theirs.tolist() == [200, 144, 176, 208, 48]
    ours, theirs = both(lambda lib: lib.cumprod(lib.array([2**20, 2**15, 3], lib.int32)))
    assert ours.tolist() == theirs.tolist()


@needs_mlx
def test_cumprod_dtype_casts_first():
    ours, theirs = both(lambda lib: lib.cumprod(lib.array([True, True, False]), dtype=lib.int32))
    assert_same_as_mlx(ours, theirs)
    assert ours.dtype is mx.int32


@needs_mlx
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_nan_and_signed_zero_in_float32(name):
    """A nan makes every later output nan; a tie keeps the newer element
    (so -0.0 and 0.0 come out as MLX's)."""
    for values in ([1.0, math.nan, 3.0, -2.0], [0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]):
        for reverse, inclusive in DIRECTIONS:
            ours, theirs = both(lambda lib: _scan(lib, name, lib.array(values), reverse=reverse,
                                                  inclusive=inclusive))
            got, want = ours.tolist(), theirs.tolist()
            assert close(got, want)
            assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in want]


@needs_mlx
def test_logcumsumexp_is_stable_and_handles_infinities():
    for values in ([1000.0, 1000.0, -5.0], [1.0, -math.inf, 3.0, math.inf, 2.0],
                   [-math.inf, -math.inf]):
        for reverse, inclusive in DIRECTIONS:
            ours, theirs = both(lambda lib: lib.logcumsumexp(
                lib.array(values), reverse=reverse, inclusive=inclusive))
            assert_same_as_mlx(ours, theirs)


@needs_mlx
def test_complex_scans_order_as_mlx():
    values = [1 + 2j, 1 + 3j, 0 + 5j, 2 - 1j]
    for name in ("cumprod", "cummax", "cummin"):
        ours, theirs = both(lambda lib: _scan(lib, name, lib.array(values), inclusive=False))
        assert_same_as_mlx(ours, theirs)


def test_a_scalar_scans_as_one_element_and_empty_stays_empty():
    assert mx.cummin(mx.array(3.0)).shape == (1,)
    out = mx.cumprod(mx.zeros((0, 3)), axis=0, inclusive=False)
    assert out.shape == (0, 3) and out.tolist() == []


def test_methods_and_aliases():
    x = mx.array([[2.0, 1.0], [3.0, 0.5]])
    for name in ("cumprod", "cummax", "cummin", "logcumsumexp"):
        method = getattr(x, name)(axis=0, reverse=True)
        assert method.tolist() == getattr(mx, name)(x, axis=0, reverse=True).tolist()
    assert mx.cumulative_sum is mx.cumsum and mx.cumulative_prod is mx.cumprod
    if real_mx is not None:
        assert hasattr(real_mx, "cumulative_sum") and hasattr(real_mx, "cumulative_prod")


def test_primitive_names_are_mlxs():
    x = mx.array([1.0, 2.0])
    names = [_scan(mx, n, x).primitive().name for n in SCANS]
    assert names == ["CumSum", "CumProd", "CumMax", "CumMin", "CumLogAddExp"]
    with pytest.raises(ValueError, match="Unknown reduce type"):
        Scan(0, reduce_type="mean")


# --- bad arguments ---------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
def test_bad_axes_and_argument_types_give_mlxs_errors(name):
    assert_same_error(lambda lib: _scan(lib, name, lib.array([[1.0, 2.0]]), axis=2))
    assert_same_error(lambda lib: _scan(lib, name, lib.array([[1.0, 2.0]]), axis=-3))
    assert_same_error(lambda lib: _scan(lib, name, lib.array(1.0), axis=0))
    # TypeErrors: MLX's first two lines (its last, "Invoked with types", depends
    # on how the call was spelled).
    for a, bad in (([1.0, 2.0], {}), ([1.0], {"axis": 1.0}), ([1.0], {"reverse": 1}),
                   ([1.0], {"inclusive": None})):
        ours = str(pytest.raises(TypeError, _scan, mx, name,
                                 mx.array(a) if bad else a, **bad).value)
        theirs = str(pytest.raises(TypeError, _scan, real_mx, name,
                                   real_mx.array(a) if bad else a, **bad).value)
        assert theirs.startswith(ours.split("\n\n")[0]) and "supported:" in ours


# --- gradients -------------------------------------------------------------------------

GRAD_INPUTS = [
    [2.0, 0.0, 3.0, 0.0, 5.0],  # two zeros
    [2.0, 1.0, 0.0, 4.0, 5.0],  # one zero
    [1.0, 3.0, 3.0, 2.0, 3.0],  # ties
    [0.5, -1.0, 2.0, 1.5, 0.25],
]
COT = [1.0, -2.0, 0.5, 3.0, 1.5]


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
def test_vjp_matches_mlx_through_zeros_and_ties(name):
    for values in GRAD_INPUTS:
        for reverse, inclusive in DIRECTIONS:
            def build(lib):
                f = lambda a: _scan(lib, name, a, reverse=reverse, inclusive=inclusive)  # noqa: E731
                return lib.vjp(f, [lib.array(values)], [lib.array(COT)])[1][0]

            ours, theirs = both(build)
            assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5)


@needs_mlx
def test_vjp_along_an_inner_axis_and_of_the_flattened_array():
    x = [[1.0, 3.0, 3.0], [4.0, 0.0, 4.0]]
    for name in ("cumprod", "cummax", "cummin", "logcumsumexp"):
        for axis in (None, 0, 1):
            def build(lib):
                f = lambda a: _scan(lib, name, a, axis=axis, reverse=True).sum()  # noqa: E731
                return lib.grad(f)(lib.array(x))

            ours, theirs = both(build)
            assert_same_as_mlx(ours, theirs)


def test_cummax_ties_go_to_the_latest_element_in_scan_order():
    x = mx.array([3.0, 3.0, 1.0, 5.0, 5.0])
    cot = mx.array([10.0, 1.0, 1.0, 100.0, 1000.0])
    assert mx.vjp(mx.cummax, [x], [cot])[1][0].tolist() == [10.0, 2.0, 0.0, 100.0, 1000.0]
    # From the end: element 3 ties element 4 and comes later in scan order, so
    # outputs 0 to 3 are all taken from it.
    back = mx.vjp(lambda a: mx.cummax(a, reverse=True), [x], [cot])[1][0]
    assert back.tolist() == [0.0, 0.0, 0.0, 112.0, 1000.0]


def test_logcumsumexp_vjp_is_stable():
    """Exponents of 1000 would overflow a direct exp; MLX's sign split does not."""
    g = mx.vjp(mx.logcumsumexp, [mx.array([1000.0, -1000.0, 5.0])],
               [mx.array([1.0, -1.0, 2.0])])[1][0]
    assert close(g.tolist(), [2.0, 0.0, 0.0], atol=1e-4)


def _jacobian_times(f, x, t):
    """J t from the vjp's rows: what every jvp must agree with."""
    n = x.size
    rows = [mx.vjp(f, [x], [mx.array([1.0 if k == j else 0.0 for k in range(n)])])[1][0]
            for j in range(n)]
    tl = t.tolist()
    return [sum(r.tolist()[i] * tl[i] for i in range(n)) for r in rows]


@pytest.mark.parametrize("name", SCANS)
def test_jvp_agrees_with_the_vjp(name):
    t = mx.array([0.3, -1.0, 2.0, 0.7, 1.1])
    for values in GRAD_INPUTS:
        for reverse, inclusive in DIRECTIONS:
            f = lambda a: _scan(mx, name, a, reverse=reverse, inclusive=inclusive)  # noqa: E731
            x = mx.array(values)
            got = mx.jvp(f, [x], [t])[1][0].tolist()
            assert close(got, _jacobian_times(f, x, t), rtol=1e-5, atol=1e-5), (name, values)


@needs_mlx
def test_logcumsumexp_jvp_matches_mlx():
    for reverse, inclusive in DIRECTIONS:
        def build(lib):
            f = lambda a: lib.logcumsumexp(a, reverse=reverse, inclusive=inclusive)  # noqa: E731
            return lib.jvp(f, [lib.array(GRAD_INPUTS[0])], [lib.array(COT)])[1][0]

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
def test_complex_cumprod_vjp_conjugates_and_logcumsumexp_refuses():
    """MLX's Scan::vjp forgets the conjugate for complex64 (its Reduce::vjp does
    not); mlxref's is the convention's: cot times conj(d out / d x)."""
    x, c = [1 + 2j, 0.5 - 1j, 2 + 0.5j], [1 + 0j, 1j, 0.5 + 0.5j]
    ours = mx.vjp(mx.cumprod, [mx.array(x)], [mx.array(c)])[1][0].tolist()
    others = [[math.prod(x[k] for k in range(j + 1) if k != i) if i <= j else 0
               for i in range(3)] for j in range(3)]
    want = [sum(c[j] * others[j][i].conjugate() for j in range(3)) for i in range(3)]
    assert close(ours, want)
    theirs = real_mx.vjp(real_mx.cumprod, [real_mx.array(x)], [real_mx.array(c)])[1][0]
    assert not close(theirs.tolist(), want)
    with pytest.raises(ValueError, match="VJP is not supported for complex"):
        mx.vjp(mx.logcumsumexp, [mx.array(x)], [mx.array(c)])
    assert_same_error(lambda lib: lib.jvp(lib.logcumsumexp, [lib.array(x)], [lib.array(c)]))


@needs_mlx
def test_second_order_cumprod_and_cummax():
    for name in ("cumprod", "cummax"):
        def build(lib):
            f = lambda a: (_scan(lib, name, a) * lib.array([1.0, 2.0, 3.0])).sum()  # noqa: E731
            return lib.grad(lambda a: (lib.grad(f)(a) ** 2).sum())(lib.array([2.0, 3.0, 0.5]))

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
def test_vmap_matches_mlx(name):
    x = [[1.0, 2.0, 0.0], [3.0, 3.0, -1.0]]
    for in_axes, axis in ((0, 0), (1, 0), (1, None), (0, -1)):
        def build(lib):
            f = lambda a: _scan(lib, name, a, axis=axis, inclusive=False)  # noqa: E731
            return lib.vmap(f, in_axes=in_axes)(lib.array(x))

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


# === count_nonzero and minmax, against MLX =================================================

ALL_DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
              "float16", "bfloat16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("dtype_name", ALL_DTYPES)
def test_count_nonzero_and_minmax_every_dtype(dtype_name):
    rng = random.Random(200 + ALL_DTYPES.index(dtype_name))
    data = tied_elements(dtype_name, rng, 12)
    x = lambda m: typed_array(m, data, dtype_name).reshape(3, 4)  # noqa: E731
    for kw in ({}, {"axis": 0}, {"axis": -1, "keepdims": True}, {"axis": (0, 1)},
               {"axis": []}):
        assert_same_result(lambda m: m.count_nonzero(x(m), **kw))
        assert_same_result(lambda m: m.minmax(x(m), **kw))
    assert_same_result(
        lambda m: m.count_nonzero(x(m), 1))  # axis by position, as MLX's binding takes it
    assert_same_result(lambda m: m.minmax(x(m), 1, True))


def test_count_nonzero_and_minmax_edges_and_errors():
    assert_same_result(lambda m: m.count_nonzero(m.array([NAN, -0.0, 0.0])))
    assert_same_result(lambda m: m.count_nonzero(m.zeros((0, 3)), axis=0))
    assert_same_result(lambda m: m.count_nonzero(m.zeros((0, 3))))
    assert_same_result(lambda m: m.count_nonzero(m.array(0.0)))
    assert_same_result(lambda m: m.count_nonzero(m.array([[1, 0]]), True))  # a bool axis is axis 1
    assert_same_result(lambda m: m.minmax(m.array([1.0, NAN])))
    assert_same_result(lambda m: m.minmax(m.array([[1, 5], [7, -2]], m.int8), axis=-2))
    b = lambda m: m.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])  # noqa: E731
    for op in ("count_nonzero", "minmax"):
        assert assert_same_result(lambda m: getattr(m, op)(b(m), axis=2))[0] is IndexError
        assert assert_same_result(lambda m: getattr(m, op)(b(m), axis=(0, 0)))[0] is ValueError
        assert assert_same_result(lambda m: getattr(m, op)([1, 2]))[0] is TypeError
        assert assert_same_result(lambda m: getattr(m, op)(b(m), axis=1.0))[0] is TypeError
        assert assert_same_result(lambda m: getattr(m, op)(b(m), keepdims=1))[0] is TypeError
    assert assert_same_result(lambda m: m.minmax(m.zeros((0,))))[0] is ValueError
    assert assert_same_result(lambda m: m.minmax(m.zeros((2, 0)), axis=1))[0] is ValueError


def test_count_nonzero_and_minmax_rules():
    b = lambda m: m.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])  # noqa: E731
    assert_same_result(lambda m: m.grad(lambda x: m.count_nonzero(x).astype(m.float32))(b(m)))
    assert_same_result(lambda m: m.vjp(lambda x: m.count_nonzero(x, axis=1), [b(m)],
                                       [m.array([1, 1], m.int32)]))
    assert_same_result(lambda m: m.jvp(lambda x: m.count_nonzero(x), [b(m)], [b(m)]))
    ties = lambda m: m.array([1.0, 3.0, 3.0, 1.0])  # noqa: E731
    assert_same_result(lambda m: m.grad(lambda x: m.minmax(x)[0] + 2 * m.minmax(x)[1])(ties(m)))
    assert_same_result(lambda m: m.vjp(lambda x: m.minmax(x, axis=1), [b(m)],
                                       [m.array([1.0, 2.0]), m.array([3.0, 4.0])]))
    assert_same_result(lambda m: m.jvp(lambda x: m.minmax(x, axis=0), [b(m)], [b(m) + 1]))
    for axis in (0, 1):
        assert_same_result(lambda m: m.vmap(m.count_nonzero, in_axes=axis)(b(m)))
        assert_same_result(lambda m: m.vmap(lambda x: m.minmax(x), in_axes=axis)(b(m)))
        assert_same_result(lambda m: m.vmap(lambda x: m.count_nonzero(x, axis=0, keepdims=True),
                                            in_axes=axis)(m.reshape(m.arange(12) % 3, (2, 3, 2))))


# === accumulators, dtype by dtype ==========================================================

# --- rounding as C does, for the expected values ---------------------------------------


def _f32(v):
    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:  # beyond float32's range: C's cast gives inf
        return math.copysign(inf, v)


def _f16(v):
    try:
        return struct.unpack("e", struct.pack("e", v))[0]
    except OverflowError:
        return math.copysign(inf, v)


def _bf16(v):
    """float32's top 16 bits, rounded to nearest even (nan stays nan)."""
    if v != v:
        return v
    (bits,) = struct.unpack("I", struct.pack("f", _f32(v)))
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return struct.unpack("f", struct.pack("I", bits & 0xFFFFFFFF))[0]


def _fold(values, op, rounded, start):
    acc = start
    for v in values:
        acc = rounded(op(acc, v))
    return acc


def _add(a, b):
    return a + b


def assert_values(got, want):
    got, want = flat(got), flat(want)
    assert len(got) == len(want) and all(map(same_value, got, want)), f"got {got}, want {want}"


# --- result dtypes ------------------------------------------------------------------------

WIDENED = {"bool_": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
           "uint16": "uint32"}


@each_lib
@pytest.mark.parametrize("name", ["bool_", "uint8", "uint16", "uint32", "uint64", "int8",
                                  "int16", "int32", "int64", "float16", "bfloat16", "float32"])
def test_sum_and_prod_widen_small_integers_cumsum_keeps_them(m, name):
    a = m.array([1, 0, 1], getattr(m, name))
    kept = name.rstrip("_")
    assert dtype_name(m.sum(a)) == WIDENED.get(name, kept)
    assert dtype_name(m.prod(a, axis=0)) == WIDENED.get(name, kept)
    assert dtype_name(m.cumsum(a)) == ("int32" if name == "bool_" else kept)
    assert dtype_name(m.max(a)) == kept
    inexact = name in ("float16", "bfloat16")
    assert dtype_name(m.mean(a)) == (kept if inexact else "float32")
    assert dtype_name(m.var(a)) == (kept if inexact else "float32")


# --- integers wrap around -------------------------------------------------------------


def _wrap(v, bits, signed):
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


@each_lib
def test_integer_sums_products_and_cumsums_wrap_around(m):
    big = [2**31 - 1, 1, 5]
    assert m.sum(m.array(big, m.int32)).item() == _wrap(sum(big), 32, True)
    assert m.sum(m.array([255, 255, 255], m.uint8)).item() == 765  # in uint32: no wrap
    u32 = [2**32 - 1, 2]
    assert m.sum(m.array(u32, m.uint32)).item() == _wrap(sum(u32), 32, False)
    assert m.prod(m.array([100, 100, 100], m.int8)).item() == 100**3  # int32
    assert m.prod(m.array([2**16, 2**16 + 1], m.uint32)).item() == _wrap(
        2**16 * (2**16 + 1), 32, False)
    i64 = [2**62, 2**62, 2**62]
    assert m.sum(m.array(i64, m.int64)).item() == _wrap(sum(i64), 64, True)
    steps = [200, 100, 250]
    want = [_wrap(sum(steps[: i + 1]), 8, False) for i in range(3)]
    assert m.cumsum(m.array(steps, m.uint8)).tolist() == want
    steps = [100, 100, -120]
    want = [_wrap(sum(steps[: i + 1]), 8, True) for i in range(3)]
    assert m.cumsum(m.array(steps, m.int8)).tolist() == want


@each_lib
def test_mean_of_small_integers_sums_in_int32(m):
    a = m.array([127, 127, 127], m.int8)
    assert m.mean(a).item() == 127.0
    assert m.mean(m.array([[True, False], [True, True]]), axis=0).tolist() == [1.0, 0.5]


# --- float accumulators ---------------------------------------------------------------


@each_lib
def test_float32_partial_sums_overflow_as_mlx(m):
    x = [3e38, 3e38, -3e38]
    want = _fold(x, _add, _f32, 0.0)
    assert want == inf
    assert_values(m.sum(m.array(x)).item(), want)
    assert_values(m.sum(m.array([[v] for v in x]), axis=0).tolist(), [want])
    assert_values(m.cumsum(m.array(x)).tolist(), [_fold(x[: i + 1], _add, _f32, 0.0)
                                                   for i in range(3)])
    ones = m.array([[1.0], [1.0], [1.0]])
    assert_values((m.array([x]) @ ones).tolist(), [[want]])
    # 1e20 * 1e20 overflows float32: inf - inf
    assert_values((m.array([[1e20, -1e20]]) @ m.array([[1e20], [1e20]])).item(), nan)
    assert_values(m.sum(m.array([3e38, 3e38, -inf])).item(), nan)


@each_lib
def test_float32_products_round_every_step(m):
    for x in ([1e30, 1e30, 1e-30], [1e-30, 1e-30, 1e30], [1e-20, 1e-20, 1e10, 1e10]):
        x = [_f32(v) for v in x]
        assert_values(m.prod(m.array(x)).item(), _fold(x, lambda a, b: a * b, _f32, 1.0))


@each_lib
@pytest.mark.parametrize("name, rounded", [("float16", _f16), ("bfloat16", _bf16)])
def test_half_sums_accumulate_in_float32_cumsums_in_the_half_type(m, name, rounded):
    dtype = getattr(m, name)
    biggest = rounded(65504.0) if name == "float16" else rounded(3.3895313892515355e38)
    for x in ([1.0] * 4097, [biggest, biggest, -biggest], [2048.0] + [1.0] * 20):
        a = m.array(x, dtype)
        assert_values(m.sum(a).item(), rounded(_fold(x, _add, _f32, 0.0)))
        assert_values(m.sum(m.reshape(a, (len(x), 1)), axis=0).tolist(),
                      [rounded(_fold(x, _add, _f32, 0.0))])
        assert_values(m.cumsum(a)[-1].item(), _fold(x, _add, rounded, 0.0))
        assert_values(m.prod(a).item(), rounded(_fold(x, lambda p, v: p * v, _f32, 1.0)))


@each_lib
@pytest.mark.parametrize("name, rounded", [("float16", _f16), ("bfloat16", _bf16)])
def test_half_matmul_accumulates_in_float32(m, name, rounded):
    dtype = getattr(m, name)
    row = [rounded(v) for v in (65504.0, 65504.0, -65504.0, 0.5, 2.0**-12)]
    col = [rounded(v) for v in (1.0, 1.0, 1.0, 3.0, 1.0)]
    got = m.array([row], dtype) @ m.array([[v] for v in col], dtype)
    want = rounded(_fold([u * v for u, v in zip(row, col)], _add, _f32, 0.0))
    assert_values(got.item(), want)


@each_lib
def test_scatter_add_of_a_gradient_rounds_every_addition(m):
    # The gradient of x[idx] with a repeated index adds the cotangents in x's dtype.
    idx = m.array([0, 0, 0])
    for dtype, rounded, big in ((m.float16, _f16, 65504.0), (m.float32, _f32, 3e38)):
        w = [big, big, -big]
        g = m.grad(lambda x: m.sum(x[idx] * m.array(w, dtype)))(m.zeros((2,), dtype))
        assert_values(g.tolist(), [_fold(w, _add, rounded, 0.0), 0.0])
    w = [1.0] + [2.0**-11] * 4
    g = m.grad(lambda x: m.sum(x[m.array([0] * 5)] * m.array(w, m.float16)))(
        m.zeros((1,), m.float16))
    assert_values(g.tolist(), [_fold(w, _add, _f16, 0.0)])


# --- the order MLX adds in ------------------------------------------------------------


@each_lib
def test_float64_sums_add_left_to_right_and_in_runs_over_separate_axes(m):
    # Exact float64 arithmetic shows the order: sum over (0, 2) adds each
    # row's contiguous run first, then the runs (MLX's reduction plan).
    x = [[[1.0, 1.0]], [[1.0, 1e16]]]  # shape (2, 1, 2): 2 + 1e16 differs from 1 + 1 + 1e16
    a = m.array(x, m.float64)
    kw = {"stream": m.cpu} if m is real_mx else {}
    runs = [_fold(r[0], _add, float, 0.0) for r in x]
    flat = [v for r in x for v in r[0]]
    assert _fold(runs, _add, float, 0.0) != _fold(flat, _add, float, 0.0)
    assert_values(m.sum(a, axis=(0, 2), **kw).tolist(), [_fold(runs, _add, float, 0.0)])
    assert_values(m.sum(a, **kw).item(), _fold(flat, _add, float, 0.0))
    b = m.array([[v] for v in flat], m.float64)
    assert_values(m.sum(b, axis=0, **kw).tolist(), [_fold(flat, _add, float, 0.0)])


# --- signed zeros, nan and infinities -------------------------------------------------


@each_lib
def test_signed_zeros(m):
    assert_values(m.sum(m.array([-0.0])).item(), -0.0)  # a size-1 axis: no reduction
    assert_values(m.sum(m.array([-0.0, -0.0])).item(), 0.0 + -0.0 + -0.0)
    assert_values(m.sum(m.array([[-0.0, -0.0], [-0.0, -0.0]]), axis=0).tolist(), [0.0, 0.0])
    assert_values(m.cumsum(m.array([-0.0, -0.0])).tolist(), [-0.0, -0.0])
    assert_values(m.cumsum(m.array([-0.0, 1.0]), inclusive=False).tolist(), [0.0, 0.0])
    assert_values(m.cumsum(m.array([-0.0, -0.0]), reverse=True, inclusive=False).tolist(),
                  [0.0, 0.0])
    assert_values((m.array([[-0.0]]) @ m.array([[1.0]])).item(), 0.0)
    assert_values(m.prod(m.array([-0.0, 1.0])).item(), -0.0)
    # max and min keep the first of equal elements
    assert_values(m.max(m.array([0.0, -0.0])).item(), 0.0)
    assert_values(m.max(m.array([-0.0, 0.0])).item(), -0.0)
    assert_values(m.min(m.array([[-0.0, 1.0], [0.0, 1.0]]), axis=0).tolist(), [-0.0, 1.0])


@each_lib
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_nan_and_infinities(m, name):
    dtype = getattr(m, name)
    a = m.array([[1.0, nan, 3.0], [-inf, 2.0, inf], [nan, -inf, inf]], dtype)
    assert_values(m.max(a, axis=1).tolist(), [nan, inf, nan])
    assert_values(m.min(a, axis=0).tolist(), [nan, nan, 3.0])
    assert m.argmax(a, axis=1).tolist() == [1, 2, 0]  # the first nan, else the first max
    assert m.argmin(a, axis=0).tolist() == [2, 0, 0]
    assert_values(m.sum(a, axis=1).tolist(), [nan, nan, nan])
    assert_values(m.logsumexp(a, axis=1).tolist(), [nan, inf, nan])
    assert_values(m.logsumexp(m.array([-inf, -inf], dtype)).item(), -inf)
    assert_values(m.softmax(a, axis=1).tolist(), [[nan] * 3] * 3)
    assert_values(m.softmax(m.array([-inf, -inf], dtype)).tolist(), [nan, nan])
    assert_values(m.softmax(m.array([0.0, -inf], dtype)).tolist(), [1.0, 0.0])


@each_lib
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_softmax_gives_exact_zeros_far_below_the_max(m, name):
    kw = {"stream": m.cpu} if m is real_mx and name == "float64" else {}
    out = m.softmax(m.array([0.0, -100.0, -88.5], getattr(m, name)), **kw)
    assert_values(out.tolist(), [1.0, 0.0, 0.0])


# --- half-precision softmax and logsumexp ---------------------------------------------


def _softmax_half(x, rounded, precise):
    """MLX's softmax kernel: without ``precise`` every step is in the half type."""
    step = rounded if not precise else _f32
    top = max(x)
    e = [step(math.exp(step(v - top))) for v in x]
    total = _fold(e, _add, step, 0.0)
    scale = step(1 / total)
    return [rounded(step(v * scale)) for v in e]


@each_lib
@pytest.mark.parametrize("name, rounded", [("float16", _f16), ("bfloat16", _bf16)])
@pytest.mark.parametrize("precise", [False, True])
def test_half_softmax_accumulates_in_its_own_type_unless_precise(m, name, rounded, precise):
    x = [rounded(v) for v in (0.0, -1.0, -2.5, 1.0, 0.25, -0.75, 0.5)]
    got = m.softmax(m.array(x, getattr(m, name)), precise=precise).tolist()
    assert_values(got, _softmax_half(x, rounded, precise))


@each_lib
@pytest.mark.parametrize("name, rounded", [("float16", _f16), ("bfloat16", _bf16)])
def test_half_softmax_and_logsumexp_over_a_leading_axis_round_every_op(m, name, rounded):
    # Over axis 0 MLX composes max, subtract, exp, sum, log / divide, each in the dtype.
    x = [rounded(v) for v in (0.0, -1.0, -2.5, 1.0, 0.25)]
    a = m.array([[v] for v in x], getattr(m, name))
    top = max(x)
    e = [rounded(math.exp(rounded(v - top))) for v in x]
    total = rounded(_fold(e, _add, _f32, 0.0))
    assert_values(m.softmax(a, axis=0).tolist(), [[rounded(v / total)] for v in e])
    want = rounded(rounded(math.log(total)) + top)
    assert_values(m.logsumexp(a, axis=0).tolist(), [want])


# --- against MLX, at every dtype's boundary values ------------------------------------

DTYPES = ["bool_", "uint8", "uint16", "uint32", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
# (smallest normal, smallest subnormal) of each float dtype
TINY = {"float16": (2.0**-14, 2.0**-24), "bfloat16": (2.0**-126, 2.0**-133),
        "float32": (2.0**-126, 2.0**-149), "float64": (2.0**-1022, 5e-324)}


def boundary_values(name):
    if name == "bool_":
        return [True, False]
    if name in TINY:
        biggest = float(real_mx.finfo(getattr(real_mx, name)).max)
        return [0.0, -0.0, 1.0, -1.0, biggest, -biggest, *TINY[name], inf, -inf, nan]
    info = real_mx.iinfo(getattr(real_mx, name))
    return sorted({0, 1, info.max, info.min, info.max - 1, -1 if info.min else 2})


def _rows(name, length):
    vals = boundary_values(name)
    return [list(r) for r in itertools.product(vals, repeat=length)]


OPS = {
    "sum": lambda m, a: m.sum(a, axis=1),
    "sum0": lambda m, a: m.sum(a, axis=0),
    "prod": lambda m, a: m.prod(a, axis=1),
    "max": lambda m, a: m.max(a, axis=1),
    "min0": lambda m, a: m.min(a, axis=0),
    "all": lambda m, a: m.all(a, axis=1),
    "any": lambda m, a: m.any(a, axis=1),
    "argmax": lambda m, a: m.argmax(a, axis=1),
    "argmin0": lambda m, a: m.argmin(a, axis=0),
    "cumsum": lambda m, a: m.cumsum(a, axis=1),
    "cumsum0": lambda m, a: m.cumsum(a, axis=0, reverse=True),
    "cumsum_exclusive": lambda m, a: m.cumsum(a, axis=1, inclusive=False),
    "mean": lambda m, a: m.mean(a, axis=1),
    "var": lambda m, a: m.var(a, axis=1),
    "logsumexp": lambda m, a: m.logsumexp(a, axis=1),
    "softmax": lambda m, a: m.softmax(a, axis=1),
    "softmax0": lambda m, a: m.softmax(a, axis=0),
    "matmul": lambda m, a: a @ m.swapaxes(a, 0, 1),
}

# Where mlxref may differ from MLX in the last bits (never in overflow, nan,
# inf or the sign of zero): its float32 sums and matrix products are formed in
# double and rounded once, and its exp is Python's (MLX's is a float32
# polynomial, for float64 too). Integer and bool inputs reach mean and var
# through float32 arithmetic, and logsumexp and softmax through exp.
EXP_OPS = {"logsumexp", "softmax", "softmax0"}
FLOAT32_SUM_OPS = {"sum", "sum0", "mean", "var", "matmul"}


def _last_bits_allowed(op, name):
    if name == "float32":
        return op in FLOAT32_SUM_OPS | EXP_OPS
    if name == "float64":
        return op in EXP_OPS
    if name in ("float16", "bfloat16"):
        return False
    return op in EXP_OPS | {"mean", "var"}


def _run(m, op, rows, name):
    """``(dtype name, nested list)`` of ``op`` on ``rows``, or ``("error", message)``."""
    try:
        if m is real_mx:
            with real_mx.stream(real_mx.cpu):  # float64 runs on the CPU only
                out = OPS[op](m, m.array(rows, getattr(m, name)))
                return dtype_name(out), out.tolist()
        out = OPS[op](m, m.array(rows, getattr(m, name)))
        return dtype_name(out), out.tolist()
    except (ValueError, TypeError, RuntimeError) as e:
        return "error", str(e).split("\n")[0]


def _close_as_stored(got, want):
    """Equal, or both finite non-zero and within float32's last bits."""
    if same_value(got, want):
        return True
    if any(v != v or v in (inf, -inf) or v == 0 for v in (got, want)):
        return False
    return abs(got - want) <= 4e-7 * abs(want)


@needs_mlx
@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_boundary_values_match_mlx(op, name):
    rows = _rows(name, 2) if name != "bool_" else _rows(name, 3)
    if op == "matmul" and name not in ("float16", "bfloat16", "float32", "float64"):
        rows = rows[:4]  # only the error message
    ours, theirs = _run(mx, op, rows, name), _run(real_mx, op, rows, name)
    if ours[0] == "error" or theirs[0] == "error":
        assert ours == theirs
        return
    if not op.startswith("arg"):  # argmax's uint32 is another change's
        assert ours[0] == theirs[0], f"dtype {ours[0]}, MLX {theirs[0]}"
    got, want = flat(ours[1]), flat(theirs[1])
    assert len(got) == len(want)
    if name == "uint32" and op == "softmax0":
        # MLX subtracts the max in uint32 over a leading axis, which wraps
        # around (documented): nan cast to uint32 where mlxref gives 0.
        return
    loose = _last_bits_allowed(op, name)
    for i, (g, w) in enumerate(zip(got, want)):
        ok = _close_as_stored(g, w) if loose else same_value(g, w)
        assert ok, f"{op} {name}: element {i}: mlxref {g!r}, MLX {w!r}"


RANDOM_OPS = {
    "sum all": lambda m, a: m.sum(a),
    "sum (0,)": lambda m, a: m.sum(a, axis=0),
    "sum (1,)": lambda m, a: m.sum(a, axis=1),
    "sum (0, 2)": lambda m, a: m.sum(a, axis=(0, 2)),
    "prod (2,)": lambda m, a: m.prod(a * 0.125 + 1, axis=2),
    "cumsum 1": lambda m, a: m.cumsum(a, axis=1),
    "cumsum 2 reverse": lambda m, a: m.cumsum(a, axis=2, reverse=True),
    "mean (1, 2)": lambda m, a: m.mean(a, axis=(1, 2)),
    "matmul": lambda m, a: a @ m.swapaxes(a, 1, 2),
}


@needs_mlx
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", list(RANDOM_OPS))
def test_random_data_matches_mlx_bit_for_bit(op, name):
    # Seeded values of mixed sizes, so that the roundings of the accumulator show.
    rng = random.Random(12)
    data = [[[rng.uniform(-1, 1) * 10 ** rng.randint(-2, 4) for _ in range(9)]
             for _ in range(6)] for _ in range(3)]
    with real_mx.stream(real_mx.cpu):
        a = real_mx.array(data, getattr(real_mx, name))
        theirs = RANDOM_OPS[op](real_mx, a)
        want = flat(theirs.tolist())
        exact = flat(RANDOM_OPS[op](real_mx, a.astype(real_mx.float64)).tolist())
    ours = RANDOM_OPS[op](mx, mx.array(data, getattr(mx, name)))
    assert dtype_name(ours) == dtype_name(theirs)
    got = flat(ours.tolist())
    if name == "float32" and op.split()[0] in FLOAT32_SUM_OPS:
        # Rounded once from double: never further from the exact value than
        # MLX's float32 accumulation, give or take one float32 ulp.
        for g, w, e in zip(got, want, exact):
            assert abs(g - e) <= abs(w - e) + abs(e) * 2.0**-23, (g, w, e)
    else:
        assert_values(got, want)


# === integers: sums and products wrap; argmax is uint32 ====================================

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.fixture(params=[pytest.param("mlxref"), pytest.param("mlx", marks=needs_mlx)])
def m(request):
    """The library under test: mlxref, then real MLX."""
    return mx if request.param == "mlxref" else real_mx


def f32(v):
    return pyarray.array("f", [v])[0]


def _accumulator(name):
    """MLX's sum and prod dtype: the integers narrower than 64 bits become
    int32 or uint32; bool counts as int32."""
    if name == "bool_":
        return "int32"
    if int_bits(name) == 64:
        return name
    return "uint32" if is_unsigned(name) else "int32"


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_reductions_accumulate_and_wrap_as_mlx(m, name):
    vals = int_edges(name)
    nonzero = [v for v in vals if v] * 3  # a product worth wrapping
    x, nz = int_array(m, vals, name), int_array(m, nonzero, name)
    out = _accumulator(name)
    checks = [
        (m.sum(x), out, wrap(sum(vals), out)),
        (m.sum(m.reshape(x, (1, -1)), axis=1), out, [wrap(sum(vals), out)]),
        (m.prod(nz), out, wrap(math.prod(nonzero), out)),
        (m.mean(x), "float32", f32(f32(wrap(sum(vals), out)) * f32(1 / len(vals)))),
    ]
    if name != "bool_":
        running = list(itertools.accumulate(vals))
        checks += [
            (m.cumsum(x), name, [wrap(v, name) for v in running]),
            (m.max(x), name, max(vals)),
            (m.min(x), name, min(vals)),
        ]
    for got, dtype, want in checks:
        assert dtype_name(got) == dtype
        assert got.tolist() == want


# --- argmax and argmin are uint32 ------------------------------------------------------------


def test_argmax_and_argmin_are_uint32_and_index(m):
    x = m.array([[1, 3, 2], [5, 0, 1]])
    rows = m.argmax(x, axis=1)
    assert dtype_name(rows) == "uint32" and rows.tolist() == [1, 0]
    assert dtype_name(m.argmin(x)) == "uint32" and m.argmin(x).item() == 4
    assert dtype_name(x.argmax()) == "uint32"
    v = m.array([10, 20, 30])
    assert v[m.argmax(m.array([1, 3, 2]))].item() == 20
    assert v[m.array([2, 0], m.uint32)].tolist() == [30, 10]
    assert v[m.array([2, 0], m.uint64)].tolist() == [30, 10]
    assert m.take(v, m.array([2, 0], m.uint8)).tolist() == [30, 10]
    best = m.take_along_axis(x, m.argmax(x, axis=1, keepdims=True), axis=1)
    assert best.tolist() == [[3], [5]]
    w = m.array([1, 2, 3])
    w[m.array([1], m.uint32)] = 7
    assert w.tolist() == [1, 7, 3]


def test_batched_and_differentiated_argmax(m):
    x = m.array([[1, 3, 2], [5, 0, 1]])
    batched = m.vmap(m.argmax)(x)
    assert dtype_name(batched) == "uint32" and batched.tolist() == [1, 0]
    kept = m.vmap(lambda r: m.argmin(r, keepdims=True), in_axes=1)(x)
    assert dtype_name(kept) == "uint32" and kept.tolist() == [[0], [1], [1]]
    _, tangent = m.jvp(m.argmax, [m.array([1.0, 3.0, 2.0])], [m.array([1.0, 1.0, 1.0])])
    assert dtype_name(tangent[0]) == "uint32" and tangent[0].item() == 0
    # max's jvp reads the tangent at the argmax
    _, (t,) = m.jvp(lambda a: m.max(a, axis=1), [m.array([[1.0, 3.0, 2.0]])],
                    [m.array([[10.0, 20.0, 30.0]])])
    assert t.tolist() == [20.0]


def test_arithmetic_on_argmax_is_uint32_arithmetic(m):
    i = m.argmax(m.array([1, 3, 2]))
    assert dtype_name(i + 1) == "uint32" and (i + 1).item() == 2
    assert (i - 5).item() == wrap(1 - 5, "uint32")
    assert dtype_name(i + m.array(1)) == "int64"  # uint32 meets int32 in int64
    assert dtype_name(i + 0.5) == "float32"
    assert dtype_name(m.mean(m.argmax(m.array([[1, 3], [5, 0]]), axis=1))) == "float32"
    with pytest.raises(ValueError, match=re.escape("Converting -1 to uint32 would result in overflow.")):
        i * -1


# === complex64 =============================================================================

REDUCTIONS = "sum prod mean max min argmax argmin all any var std logsumexp cumsum".split()

NANS = [1 + 2j, 1 - 1j, complex(nan, 0), 3 + 0j, complex(1, nan), -2 + 5j]


@needs_mlx
@pytest.mark.parametrize("op", REDUCTIONS)
def test_complex_reductions_match_mlx(op):
    def build(m, values, **kw):
        out = getattr(m, op)(m.array(values), **kw)
        return out.astype(m.int32) if op in ("argmax", "argmin") else out  # MLX: uint32

    assert_both(lambda m: build(m, [[1 + 2j, -0.5 + 0.25j, 3 - 1j], [2j, 1 + 0j, -1 - 1j]]),
                rtol=1e-5, atol=1e-6)
    assert_both(lambda m: build(m, [[1 + 2j, -0.5 + 0.25j, 3 - 1j], [2j, 1 + 0j, -1 - 1j]], axis=0),
                rtol=1e-5, atol=1e-6)
    if op in ("max", "min", "argmax", "argmin"):
        # nan in either part: MLX's rules for which element (or nan + 0j) comes out
        for values in ([1 + 2j, complex(nan, 0), 3], [1 + 2j, complex(1, nan), 3],
                       [complex(1, nan), 1 + 2j, 3], [complex(2, nan), complex(nan, 2)], NANS):
            assert_both(lambda m: build(m, values), rtol=1e-5, atol=1e-6)
