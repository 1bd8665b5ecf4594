"""Elementwise ops: type promotion, weak scalars, values, domain edges, operators.

Expected values come from ``math`` (or are written by hand); the dtype tables
were checked against real MLX 0.32.4, and the ``@needs_mlx`` tests compare every
elementwise op with it on a fixed grid of inputs.
"""

import math
import operator
import re

import pytest

import mlxref.core as mx

from support import assert_array, assert_same_as_mlx, both, close, needs_mlx
from mlxref.core.array import from_data

DTYPES = ["bool_", "int32", "int64", "float32", "float64"]

UNARY_OPS = (
    "abs negative sign square sqrt rsqrt reciprocal exp expm1 log log1p log2 log10 "
    "sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh sigmoid "
    "erf erfinv floor ceil round logical_not stop_gradient"
).split()
BINARY_OPS = (
    "add subtract multiply divide floor_divide remainder power maximum minimum arctan2 "
    "logaddexp equal not_equal less less_equal greater greater_equal logical_and logical_or"
).split()
COMPARISONS = "equal not_equal less less_equal greater greater_equal".split()
LOGICAL = "logical_and logical_or".split()


def _from_flat(values, shape, dtype=mx.float32):
    """An array of any shape from a flat list (size-0 shapes like (0, 3) included),
    built without the shape ops, which are not under test here."""
    return from_data([dtype.cast(v) for v in values], shape, dtype)


def _nested(flat, shape):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


# --- promotion ----------------------------------------------------------------------

# The dtype a Python scalar takes next to an array of each dtype (it is "weak").
WEAK = {
    True: {"bool_": "bool_", "int32": "int32", "int64": "int64", "float32": "float32", "float64": "float64"},
    2: {"bool_": "int32", "int32": "int32", "int64": "int64", "float32": "float32", "float64": "float64"},
    2.5: {"bool_": "float32", "int32": "float32", "int64": "float32", "float32": "float32", "float64": "float64"},
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5])
def test_weak_python_scalars(dtype, scalar):
    want = getattr(mx, WEAK[scalar][dtype])
    a = mx.array([1, 0], getattr(mx, dtype))
    for r in (a + scalar, scalar + a, mx.multiply(a, scalar), mx.maximum(scalar, a)):
        assert r.dtype is want
    assert (a == scalar).dtype is mx.bool_ and (scalar < a).dtype is mx.bool_
    assert mx.where(mx.array([True, False]), a, scalar).dtype is want
    assert mx.where(mx.array([True, False]), scalar, a).dtype is want


def test_scalar_only_arguments():
    r = mx.add(1, 2)
    assert r.dtype is mx.int32 and r.shape == () and r.item() == 3
    r = mx.add(1, 2.0)
    assert r.dtype is mx.float32 and r.item() == 3.0 and type(r.item()) is float
    assert mx.add(True, 1).dtype is mx.int32 and mx.add(True, 1).item() == 2
    assert mx.add(True, True).dtype is mx.bool_ and mx.add(True, True).item() is True
    assert mx.divide(7, 2).dtype is mx.float32 and mx.divide(7, 2).item() == 3.5
    assert mx.exp(1).dtype is mx.float32 and math.isclose(mx.exp(1).item(), math.e, rel_tol=1e-6)
    assert mx.abs(-3).dtype is mx.int32 and mx.abs(-3).item() == 3
    assert mx.less(1, 2.5).dtype is mx.bool_ and mx.less(1, 2.5).item() is True


def test_mixed_int_float_results():
    r = mx.array([1, 2, -3]) * 2.5
    assert_array(r, [2.5, 5.0, -7.5], dtype=mx.float32)
    assert_array(mx.array([1, 2]) * 2, [2, 4], dtype=mx.int32)
    assert_array(mx.array([1.5], mx.float64) * 2.5, [3.75], dtype=mx.float64)
    assert_array(mx.array([True, False]) + 1, [2, 1], dtype=mx.int32)
    assert_array(mx.array([True, False]) * 1.5, [1.5, 0.0], dtype=mx.float32)
    assert_array(mx.array([1], mx.int64) + 1, [2], dtype=mx.int64)
    assert_array(mx.array([1.5]) + mx.array([2], mx.int64), [3.5], dtype=mx.float32)


def test_divide_of_ints_is_float32():
    assert_array(mx.array([1, 3, -7]) / mx.array([2, 4, 2]), [0.5, 0.75, -3.5], dtype=mx.float32)
    assert_array(mx.divide(mx.array([3], mx.int64), mx.array([2], mx.int64)), [1.5], dtype=mx.float32)
    assert_array(mx.array([True]) / mx.array([True]), [1.0], dtype=mx.float32)
    assert_array(mx.array([1, 2]) / 4, [0.25, 0.5], dtype=mx.float32)


def test_negative_of_bool_raises():
    msg = "[negative] Not supported for bool, use logical_not instead."
    with pytest.raises(ValueError, match=re.escape(msg)):
        -mx.array([True, False])
    with pytest.raises(ValueError, match=re.escape(msg)):
        mx.negative(mx.array(True))


# --- unary values -------------------------------------------------------------------


def _erfinv(y):
    lo, hi = -6.0, 6.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


# op -> (reference on one float, three in-domain inputs)
UNARY = {
    "abs": (abs, [-2.5, 0.0, 3.0]),
    "negative": (lambda x: -x, [-2.5, 0.0, 3.0]),
    "sign": (lambda x: float((x > 0) - (x < 0)), [-2.5, 0.0, 3.0]),
    "square": (lambda x: x * x, [-1.5, 0.0, 3.0]),
    "sqrt": (math.sqrt, [0.0, 0.25, 4.0]),
    "rsqrt": (lambda x: 1 / math.sqrt(x), [0.25, 1.0, 4.0]),
    "reciprocal": (lambda x: 1 / x, [-2.0, 0.5, 4.0]),
    "exp": (math.exp, [-1.0, 0.0, 2.0]),
    "expm1": (math.expm1, [-1e-3, 0.0, 1.0]),
    "log": (math.log, [0.5, 1.0, 10.0]),
    "log1p": (math.log1p, [-0.5, 0.0, 1e-4]),
    "log2": (math.log2, [0.5, 1.0, 8.0]),
    "log10": (math.log10, [0.01, 1.0, 1000.0]),
    "sin": (math.sin, [-1.0, 0.0, 0.5]),
    "cos": (math.cos, [-1.0, 0.0, 0.5]),
    "tan": (math.tan, [-1.0, 0.0, 0.5]),
    "arcsin": (math.asin, [-0.5, 0.0, 0.9]),
    "arccos": (math.acos, [-0.5, 0.0, 0.9]),
    "arctan": (math.atan, [-2.0, 0.0, 1.5]),
    "sinh": (math.sinh, [-2.0, 0.0, 1.5]),
    "cosh": (math.cosh, [-2.0, 0.0, 1.5]),
    "tanh": (math.tanh, [-2.0, 0.0, 1.5]),
    "arcsinh": (math.asinh, [-2.0, 0.0, 1.5]),
    "arccosh": (math.acosh, [1.0, 2.0, 10.0]),
    "arctanh": (math.atanh, [-0.5, 0.0, 0.9]),
    "sigmoid": (lambda x: 1 / (1 + math.exp(-x)), [-3.0, 0.0, 2.0]),
    "erf": (math.erf, [-1.0, 0.0, 0.5]),
    "erfinv": (_erfinv, [-0.9, 0.0, 0.5]),
    "floor": (lambda x: float(math.floor(x)), [-1.5, 0.5, 2.7]),
    "ceil": (lambda x: float(math.ceil(x)), [-1.5, 0.5, 2.2]),
    "round": (lambda x: float(round(x)), [-1.5, 0.4, 2.6]),
    "logical_not": (lambda x: not x, [0.0, 1.5, -1.0]),
    "stop_gradient": (lambda x: x, [-2.5, 0.0, 3.0]),
}

SHAPES = [(), (3,), (2, 3), (0, 3)]


def test_unary_table_covers_every_unary_op():
    assert sorted(UNARY) == sorted(UNARY_OPS)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary_values(op, shape):
    ref, inputs = UNARY[op]
    flat = {(): inputs[:1], (3,): inputs, (2, 3): inputs + inputs[::-1], (0, 3): []}[shape]
    x = _from_flat(flat, shape)
    out = getattr(mx, op)(x)
    want_dtype = mx.bool_ if op == "logical_not" else mx.float32
    assert out.dtype is want_dtype and out.shape == shape
    expected = [ref(v) for v in flat]
    got = out.tolist()
    assert close(got, _nested(expected, shape)), (got, expected)
    py_type = bool if op == "logical_not" else float
    assert all(type(v) is py_type for v in out.data())


# ops whose result keeps an integer input's dtype; every other numeric op is float.
INT_PRESERVING = {"abs", "negative", "sign", "square", "floor", "ceil", "round", "stop_gradient"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary_result_dtypes(op, dtype):
    dt = getattr(mx, dtype)
    if op == "negative" and dt is mx.bool_:
        return  # raises; see test_negative_of_bool_raises
    out = getattr(mx, op)(mx.array([1, 0, 1], dt))
    if op == "logical_not":
        want = mx.bool_
    elif op in INT_PRESERVING or dt.is_float:
        want = dt
    else:
        want = mx.float32  # like MLX's at_least_float: int64 too becomes float32
    assert out.dtype is want
    py_type = {"bool": bool, "int32": int, "int64": int}.get(want.name, float)
    assert all(type(v) is py_type for v in out.tolist())


def test_int_unary_values():
    a = mx.array([-3, 0, 2])
    assert_array(mx.abs(a), [3, 0, 2], dtype=mx.int32)
    assert_array(-a, [3, 0, -2], dtype=mx.int32)
    assert_array(mx.sign(a), [-1, 0, 1], dtype=mx.int32)
    assert_array(mx.square(a), [9, 0, 4], dtype=mx.int32)
    assert_array(mx.sqrt(mx.array([4, 9])), [2.0, 3.0], dtype=mx.float32)
    assert_array(mx.reciprocal(mx.array([2, 4])), [0.5, 0.25], dtype=mx.float32)
    assert_array(mx.abs(mx.array([True, False])), [True, False], dtype=mx.bool_)
    assert_array(mx.logical_not(mx.array([2, 0])), [False, True], dtype=mx.bool_)


def test_floor_ceil_round_of_ints_return_the_ints():
    for dt in (mx.int32, mx.int64):
        a = mx.array([-3, 0, 7], dt)
        for op in (mx.floor, mx.ceil, mx.round):
            assert_array(op(a), [-3, 0, 7], dtype=dt)


def test_round_half_to_even_and_decimals():
    a = mx.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.5, 2.4999])
    assert mx.round(a).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 4.0, 2.0]
    assert math.copysign(1.0, mx.round(a).tolist()[3]) == -1.0  # -0.5 rounds to -0.0
    assert_array(mx.round(mx.array([1.234, -5.678, 0.25]), 1), [1.2, -5.7, 0.2], dtype=mx.float32)
    assert_array(mx.round(mx.array([1234.5, -5678.0]), -2), [1200.0, -5700.0], dtype=mx.float32)
    # MLX composes round(x, decimals) from multiplies and a cast back, so ints round too.
    assert_array(mx.round(mx.array([15, -25, 123, 150]), -1), [20, -20, 120, 150], dtype=mx.int32)
    assert_array(mx.round(mx.array([15, -25, 123]), 1), [15, -25, 123], dtype=mx.int32)


@pytest.mark.parametrize(
    "op, x, expected",
    [
        ("log", [0.0, -1.0, math.inf], [-math.inf, math.nan, math.inf]),
        ("log2", [0.0, -1.0], [-math.inf, math.nan]),
        ("log10", [0.0, -1.0], [-math.inf, math.nan]),
        ("log1p", [-1.0, -2.0], [-math.inf, math.nan]),
        ("sqrt", [-1.0, math.inf], [math.nan, math.inf]),
        ("rsqrt", [0.0, -1.0], [math.inf, math.nan]),
        ("reciprocal", [0.0, -0.0], [math.inf, -math.inf]),
        ("arctanh", [1.0, -1.0, 2.0], [math.inf, -math.inf, math.nan]),
        ("arcsin", [2.0, -1.5], [math.nan, math.nan]),
        ("arccos", [2.0], [math.nan]),
        ("arccosh", [0.5], [math.nan]),
        ("erfinv", [1.0, -1.0, 1.5], [math.inf, -math.inf, math.nan]),
        ("exp", [1000.0, -math.inf], [math.inf, 0.0]),
        ("sigmoid", [-1000.0, 1000.0], [0.0, 1.0]),
        ("sign", [math.nan, -0.0, -math.inf], [0.0, 0.0, -1.0]),  # MLX: sign(nan) is 0
        ("floor", [math.inf, -math.inf], [math.inf, -math.inf]),
        ("sin", [math.inf], [math.nan]),
        ("tanh", [math.inf, -math.inf], [1.0, -1.0]),
        ("abs", [-math.inf], [math.inf]),
    ],
)
def test_unary_domain_edges(op, x, expected):
    assert_array(getattr(mx, op)(mx.array(x)), expected, dtype=mx.float32)


# --- binary values ------------------------------------------------------------------

# op -> (reference on two floats, inputs a, inputs b)
_A, _B = [1.5, -2.0, 3.0], [0.5, 4.0, -2.0]
BINARY = {
    "add": (operator.add, _A, _B),
    "subtract": (operator.sub, _A, _B),
    "multiply": (operator.mul, _A, _B),
    "divide": (operator.truediv, _A, _B),
    "floor_divide": (lambda a, b: float(math.floor(a / b)), [7.5, -7.5, 3.0], [2.0, 2.0, -0.5]),
    "remainder": (lambda a, b: a - b * math.floor(a / b), [7.5, -7.5, 7.5], [2.0, 2.0, -2.0]),
    "power": (operator.pow, [0.5, 2.0, 3.0], [2.0, -1.0, 0.5]),
    "maximum": (max, _A, _B),
    "minimum": (min, _A, _B),
    "arctan2": (math.atan2, _A, _B),
    "logaddexp": (lambda a, b: math.log(math.exp(a) + math.exp(b)), _A, _B),
    "equal": (operator.eq, [1.0, 2.0, 3.0], [1.0, -2.0, 3.5]),
    "not_equal": (operator.ne, [1.0, 2.0, 3.0], [1.0, -2.0, 3.5]),
    "less": (operator.lt, [1.0, 2.0, 3.0], [1.0, -2.0, 3.5]),
    "less_equal": (operator.le, [1.0, 2.0, 3.0], [1.0, -2.0, 3.5]),
    "greater": (operator.gt, [1.0, 2.0, 3.0], [1.0, -2.0, 3.5]),
    "greater_equal": (operator.ge, [1.0, 2.0, 3.0], [1.0, -2.0, 3.5]),
    "logical_and": (lambda a, b: bool(a) and bool(b), [0.0, 1.0, 2.5], [1.0, -1.0, 0.0]),
    "logical_or": (lambda a, b: bool(a) or bool(b), [0.0, 1.0, 0.0], [0.0, -1.0, 3.0]),
}


def test_binary_table_covers_every_binary_op():
    assert sorted(BINARY) == sorted(BINARY_OPS)


def _binary_cases(a, b):
    """(shape_a, flat_a, shape_b, flat_b, out_shape, expected pairs) per layout."""
    two_a, two_b = a + a[::-1], b + b[::-1]
    col = a[:2]  # a (2, 1) column broadcast against b of shape (3,)
    return {
        "scalar": ((), a[:1], (), b[:1], (), [(a[0], b[0])]),
        "vector": ((3,), a, (3,), b, (3,), list(zip(a, b))),
        "matrix": ((2, 3), two_a, (2, 3), two_b, (2, 3), list(zip(two_a, two_b))),
        "column_by_row": ((2, 1), col, (3,), b, (2, 3), [(x, y) for x in col for y in b]),
        "scalar_by_matrix": ((), a[:1], (2, 3), two_b, (2, 3), [(a[0], y) for y in two_b]),
        "empty": ((0, 3), [], (3,), b, (0, 3), []),
        "empty_both": ((0, 3), [], (0, 1), [], (0, 3), []),
    }


@pytest.mark.parametrize(
    "layout", ["scalar", "vector", "matrix", "column_by_row", "scalar_by_matrix", "empty", "empty_both"]
)
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_values(op, layout):
    ref, a, b = BINARY[op]
    sa, fa, sb, fb, shape, pairs = _binary_cases(a, b)[layout]
    out = getattr(mx, op)(_from_flat(fa, sa), _from_flat(fb, sb))
    is_bool = op in COMPARISONS or op in LOGICAL
    assert out.dtype is (mx.bool_ if is_bool else mx.float32)
    assert out.shape == shape
    expected = [ref(x, y) for x, y in pairs]
    got = out.tolist()
    assert close(got, _nested(expected, shape)), (got, expected)
    py_type = bool if is_bool else float
    assert all(type(v) is py_type for v in out.data())


def test_int_binary_values():
    a, b = mx.array([7, -7, 7, -7, 0]), mx.array([2, 2, -2, -2, 3])
    assert_array(a + b, [9, -5, 5, -9, 3], dtype=mx.int32)
    assert_array(a * b, [14, -14, -14, 14, 0], dtype=mx.int32)
    # floor division and remainder: the remainder takes the divisor's sign.
    assert_array(a // b, [3, -4, -4, 3, 0], dtype=mx.int32)
    assert_array(a % b, [1, 1, -1, -1, 0], dtype=mx.int32)
    assert_array(mx.power(mx.array([2, 3, -2]), mx.array([3, 2, 3])), [8, 9, -8], dtype=mx.int32)
    assert_array(mx.maximum(a, b), [7, 2, 7, -2, 3], dtype=mx.int32)
    assert_array(mx.minimum(a, b), [2, -7, -2, -7, 0], dtype=mx.int32)
    assert_array(mx.arctan2(mx.array([1]), mx.array([1])), [math.pi / 4], dtype=mx.float32)


def test_bool_binary_values():
    t, f = mx.array([True, True, False, False]), mx.array([True, False, True, False])
    assert_array(t + f, [True, True, True, False], dtype=mx.bool_)
    assert_array(t * f, [True, False, False, False], dtype=mx.bool_)
    assert_array(t - f, [False, True, True, False], dtype=mx.bool_)
    assert_array(mx.maximum(t, f), [True, True, True, False], dtype=mx.bool_)
    assert_array(mx.logical_and(t, f), [True, False, False, False], dtype=mx.bool_)
    assert_array(mx.logical_or(t, f), [True, True, True, False], dtype=mx.bool_)
    assert_array(t & f, [True, False, False, False], dtype=mx.bool_)
    assert_array(t | f, [True, True, True, False], dtype=mx.bool_)
    assert_array(~t, [False, False, True, True], dtype=mx.bool_)


@pytest.mark.parametrize(
    "op, a, b, expected",
    [
        ("divide", [1.0, -1.0, 0.0, 1.0], [0.0, 0.0, 0.0, -0.0], [math.inf, -math.inf, math.nan, -math.inf]),
        ("floor_divide", [1.0, -1.0, 0.0], [0.0, 0.0, 0.0], [math.inf, -math.inf, math.nan]),
        # MLX computes floor(a / b): inf // 1 is inf (Python's // gives nan).
        ("floor_divide", [math.inf, -math.inf, 0.5], [1.0, 2.0, -math.inf], [math.inf, -math.inf, -0.0]),
        ("floor_divide", [-7.5, 7.5], [2.0, -2.0], [-4.0, -4.0]),
        ("remainder", [-7.5, 7.5, 1.0], [2.0, -2.0, 0.0], [0.5, -0.5, math.nan]),
        ("power", [0.0, -8.0, 2.0, 0.0], [-1.0, 1 / 3, 0.5, 0.0], [math.inf, math.nan, math.sqrt(2), 1.0]),
        ("maximum", [math.nan, 1.0], [1.0, math.nan], [math.nan, math.nan]),
        ("minimum", [math.nan, 1.0], [1.0, math.nan], [math.nan, math.nan]),
        ("logaddexp", [math.inf, -math.inf, math.inf, 1000.0], [math.inf, -math.inf, -math.inf, 1000.0],
         [math.inf, -math.inf, math.inf, 1000.0 + math.log(2)]),
        ("arctan2", [0.0, 1.0, -1.0], [-1.0, 0.0, 0.0], [math.pi, math.pi / 2, -math.pi / 2]),
        ("equal", [math.nan, 0.0], [math.nan, -0.0], [False, True]),
        ("not_equal", [math.nan], [math.nan], [True]),
    ],
)
def test_binary_domain_edges(op, a, b, expected):
    assert_array(getattr(mx, op)(mx.array(a), mx.array(b)), expected)


def test_negative_zero_results():
    assert math.copysign(1.0, mx.floor_divide(mx.array(0.5), mx.array(-math.inf)).item()) == -1.0
    assert math.copysign(1.0, (mx.array(-0.0) * 1.0).item()) == -1.0
    signs = [math.copysign(1.0, v) for v in mx.ceil(mx.array([-0.5, -0.0, 0.3])).tolist()]
    assert signs == [-1.0, -1.0, 1.0]  # ceil(-0.5) is -0.0, as in MLX
    signs = [math.copysign(1.0, v) for v in mx.floor(mx.array([-0.0, 0.3])).tolist()]
    assert signs == [-1.0, 1.0]


def test_int_floor_divide_of_negatives_and_power_of_negative_exponent():
    assert_array(mx.floor_divide(mx.array([-7, 7, -7, -1]), mx.array([2, -2, -2, 3])), [-4, -4, 3, -1], dtype=mx.int32)
    # MLX: an integer raised to a negative integer power is 0, even 1 ** -1.
    assert_array(mx.power(mx.array([1, -1, 2, 0]), mx.array([-1, -1, -2, -3])), [0, 0, 0, 0], dtype=mx.int32)
    assert_array(mx.power(mx.array([True, False]), -3), [0, 0], dtype=mx.int32)


def test_broadcast_error():
    msg = "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."
    with pytest.raises(ValueError, match=re.escape(msg)):
        mx.add(mx.array([1, 2]), mx.array([1, 2, 3]))
    with pytest.raises(ValueError, match=re.escape("[broadcast_shapes] Shapes (2,3) and (2) cannot be broadcast.")):
        mx.less(_from_flat(range(6), (2, 3)), mx.array([1.0, 2.0]))


# --- where --------------------------------------------------------------------------


def test_where():
    c = mx.array([True, False, True])
    assert_array(mx.where(c, mx.array([1, 2, 3]), mx.array([-1, -2, -3])), [1, -2, 3], dtype=mx.int32)
    # the condition is cast to bool; x and y are promoted and broadcast together
    out = mx.where(mx.array([[1], [0]]), mx.array([1, 2, 3]), 2.5)
    assert_array(out, [[1.0, 2.0, 3.0], [2.5, 2.5, 2.5]], dtype=mx.float32, shape=(2, 3))
    assert_array(mx.where(mx.array([0.5, 0.0]), True, False), [True, False], dtype=mx.bool_)
    assert_array(mx.where(True, 1, 2), 1, dtype=mx.int32, shape=())
    assert_array(mx.where(mx.array([True]), mx.array([1], mx.int64), mx.array([2.0])), [1.0], dtype=mx.float32)
    e = mx.where(_from_flat([], (0, 3), mx.bool_), 1.0, mx.array([1.0, 2.0, 3.0]))
    assert e.shape == (0, 3) and e.tolist() == []


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY_OPS + BINARY_OPS + ["where"])
def test_output_dtypes_agree_with_the_node_the_op_built(op, dtype):
    # make_array (used by the rules) takes the dtype from output_dtypes: bool for a
    # comparison, x's for where, the input's for the rest.
    if op == "negative" and dtype == "bool_":
        return  # raises; see test_negative_of_bool_raises
    a = mx.array([1, 0, 1], getattr(mx, dtype))
    arity = 1 if op in UNARY_OPS else 2 if op in BINARY_OPS else 3
    out = getattr(mx, op)(*[a] * arity)
    if out.primitive() is None:
        return  # floor, ceil, round of ints: the input itself
    assert out.primitive().output_dtypes(list(out.inputs())) == [out.dtype]


def test_where_broadcast_error_names_the_failing_pair():
    msg = "[broadcast_shapes] Shapes (3) and (2) cannot be broadcast."
    with pytest.raises(ValueError, match=re.escape(msg) + "$"):
        mx.where(mx.array([True, True, False]), mx.array([1, 2]), 1)


# --- operators ----------------------------------------------------------------------


def test_arithmetic_operators_and_reflected_forms():
    a = mx.array([1.0, 2.0, 4.0])
    assert_array(a + 1, [2.0, 3.0, 5.0], dtype=mx.float32)
    assert_array(1 + a, [2.0, 3.0, 5.0])
    assert_array(a - 1, [0.0, 1.0, 3.0])
    assert_array(2 - a, [1.0, 0.0, -2.0])
    assert_array(a * 3, [3.0, 6.0, 12.0])
    assert_array(3 * a, [3.0, 6.0, 12.0])
    assert_array(a / 2, [0.5, 1.0, 2.0])
    assert_array(1 / a, [1.0, 0.5, 0.25])
    assert_array(a // 3, [0.0, 0.0, 1.0])
    assert_array(7 // a, [7.0, 3.0, 1.0])
    assert_array(a % 3, [1.0, 2.0, 1.0])
    assert_array(7 % a, [0.0, 1.0, 3.0])
    assert_array(a**2, [1.0, 4.0, 16.0])
    assert_array(2**a, [2.0, 4.0, 16.0], dtype=mx.float32)
    assert_array(-a, [-1.0, -2.0, -4.0])
    assert_array(abs(mx.array([-1.5, 2.0])), [1.5, 2.0])
    i = mx.array([2, 3])
    assert_array(2**i, [4, 8], dtype=mx.int32)
    assert_array(2.0**i, [4.0, 8.0], dtype=mx.float32)
    assert_array(7 // mx.array([2, -3]), [3, -3], dtype=mx.int32)
    assert_array(7 % mx.array([2, -3]), [1, -2], dtype=mx.int32)
    assert_array(a + mx.array([[1.0], [2.0]]), [[2.0, 3.0, 5.0], [3.0, 4.0, 6.0]], shape=(2, 3))


def test_comparison_operators_and_reflected_forms():
    a = mx.array([1, 2, 3])
    assert_array(a == 2, [False, True, False], dtype=mx.bool_)
    assert_array(a != 2, [True, False, True], dtype=mx.bool_)
    assert_array(a < 2, [True, False, False], dtype=mx.bool_)
    assert_array(a <= 2, [True, True, False], dtype=mx.bool_)
    assert_array(a > 2, [False, False, True], dtype=mx.bool_)
    assert_array(a >= 2, [False, True, True], dtype=mx.bool_)
    assert_array(2 == a, [False, True, False], dtype=mx.bool_)
    assert_array(1.5 < a, [False, True, True], dtype=mx.bool_)
    assert_array(2.5 >= a, [True, True, False], dtype=mx.bool_)
    assert_array(a == mx.array([[1], [3]]), [[True, False, False], [False, False, True]])


def test_bitwise_operators_are_logical_on_bools_and_refuse_other_dtypes():
    t, f = mx.array([True, True, False]), mx.array([True, False, False])
    assert_array(t & f, [True, False, False], dtype=mx.bool_)
    assert_array(t | f, [True, True, False], dtype=mx.bool_)
    assert_array(~t, [False, False, True], dtype=mx.bool_)
    with pytest.raises(ValueError, match=re.escape("Floating point types not allowed with bitwise and.")):
        mx.array([1.5]) & mx.array([1.0])
    with pytest.raises(ValueError, match=re.escape("Floating point types not allowed with bitwise inversion.")):
        ~mx.array([1.5])


def test_lists_are_not_op_arguments():
    with pytest.raises(ValueError, match=re.escape("Invalid type list received in array initialization.")):
        mx.add(mx.array([1, 2]), [1, 2])


# --- against real MLX ---------------------------------------------------------------

_FLOAT_GRID = [-3.5, -2.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5, 2.5, 3.0, 10.0,
               math.inf, -math.inf, math.nan]
_INT_GRID = [-7, -3, -2, -1, 0, 1, 2, 3, 5, 8]
_UNARY_GRIDS = {
    "float32": _FLOAT_GRID,
    "float64": [-2.5, -0.5, 0.0, 0.5, 0.9, 1.0, 3.0],
    "int32": _INT_GRID,
    "int64": [-3, 0, 1, 4],
    "bool_": [True, False],
}




@needs_mlx
@pytest.mark.parametrize("dtype", sorted(_UNARY_GRIDS))
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary_matches_mlx(op, dtype):
    grid = _UNARY_GRIDS[dtype]
    pair = both(lambda m: getattr(m, op)(m.array(grid, getattr(m, dtype))))
    if pair:
        assert_same_as_mlx(*pair)


def _pairs(a_values, b_values):
    return [a for a in a_values for _ in b_values], [b for _ in a_values for b in b_values]


_BINARY_GRIDS = {
    "float32": _pairs([-2.5, -1.0, -0.0, 0.0, 0.5, 2.0, 3.0, math.inf, math.nan],
                      [-2.0, -0.5, 0.0, 1.0, 1.5, 3.0, -math.inf]),
    # no zero divisor: integer division by zero is undefined in MLX
    "int32": _pairs([-7, -2, 0, 1, 3, 8], [-3, -1, 1, 2, 3, 5]),
    "int64": _pairs([-7, 0, 3], [-2, 1, 3]),
    "float64": _pairs([-1.5, 0.0, 2.0], [-2.0, 0.5, 3.0]),
    "bool_": _pairs([True, False], [True, False]),
}


@needs_mlx
@pytest.mark.parametrize("dtype", sorted(_BINARY_GRIDS))
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary_matches_mlx(op, dtype):
    a, b = _BINARY_GRIDS[dtype]
    if dtype == "bool_" and op in ("floor_divide", "remainder"):
        a, b = a[::2], b[::2]  # keep only True divisors (dividing by False is undefined)
    pair = both(lambda m: getattr(m, op)(m.array(a, getattr(m, dtype)), m.array(b, getattr(m, dtype))))
    if pair:
        assert_same_as_mlx(*pair)


@needs_mlx
@pytest.mark.parametrize("op", BINARY_OPS + ["where"])
def test_promotion_matches_mlx(op):
    def build(m, x, y):
        if op == "where":
            return m.where(m.array([True, False]), x, y)
        return getattr(m, op)(x, y)

    values = {"bool_": [True, False], "int32": [3, -2], "int64": [4, 1],
              "float32": [1.5, -2.0], "float64": [0.5, 2.0]}
    if op in ("floor_divide", "remainder"):
        values["bool_"] = [True, True]  # dividing an integer by zero is undefined in MLX
    for da in DTYPES:
        for db in DTYPES + [True, 2, -3, 2.5]:
            for swap in (False, True):
                def run(m):
                    x = m.array(values[da], getattr(m, da))
                    y = m.array(values[db], getattr(m, db)) if isinstance(db, str) else db
                    return build(m, y, x) if swap else build(m, x, y)

                pair = both(run)
                if pair:
                    assert_same_as_mlx(*pair)


@needs_mlx
def test_operators_match_mlx():
    cases = [
        lambda m: 2 - m.array([2, 3]),
        lambda m: 2 ** m.array([2, 3]),
        lambda m: 2.0 ** m.array([2, 3]),
        lambda m: 7 // m.array([2, -3]),
        lambda m: 7 % m.array([2, -3]),
        lambda m: 7.5 / m.array([2, -3]),
        lambda m: m.array([2, -3]) * 2.5,
        lambda m: m.array([True, False]) + True,
        lambda m: m.array([True, False]) * 1.5,
        lambda m: abs(m.array([-1, 2])),
        lambda m: -m.array([-1, 2.5]),
        lambda m: 1.5 < m.array([1, 2]),
        lambda m: m.array([1, 2]) != 2,
        lambda m: ~m.array([True, False]),
        lambda m: m.array([True, False]) | m.array([False, False]),
        lambda m: m.round(m.array([0.5, 1.5, 2.5, -0.5, 123.456]), 1),
        lambda m: m.round(m.array([15, -25, 123]), -1),
        lambda m: m.where(m.array([[1], [0]]), m.array([1, 2, 3]), m.array(7.0)),
        lambda m: m.add(m.array([[1], [2]]), m.array([1, 2, 3])),
        lambda m: m.add(m.array([[1.0, 2.0]]), m.array([[]])),
    ]
    for build in cases:
        pair = both(build)
        if pair:
            assert_same_as_mlx(*pair)
