"""The array class: construction, dtype inference, attributes, conversions, repr.

Expected values are written by hand; every repr string and error message was
checked against real MLX 0.32.4. The ``@needs_mlx`` tests compare with it
directly. Where mlxref deviates from MLX on purpose (TypeError naming the value
for bad element types, ragged lists naming the ragged element) the brief asks
for the more helpful message; the test says so.
"""

import math
import re
import sys

import pytest

import mlxref.core as mx
from mlxref.core.primitives.base import AsType

from support import assert_new_handle, needs_mlx, real_mx

# --- construction and dtype inference ---------------------------------------------


@pytest.mark.parametrize(
    "value, dtype, shape, elements",
    [
        (3, mx.int32, (), [3]),
        (-2.5, mx.float32, (), [-2.5]),
        (True, mx.bool_, (), [True]),
        ([1, 2, 3], mx.int32, (3,), [1, 2, 3]),
        ([1, 2.5], mx.float32, (2,), [1.0, 2.5]),
        ([True, 2], mx.int32, (2,), [1, 2]),
        ([True, 2.0], mx.float32, (2,), [1.0, 2.0]),
        ([True, False], mx.bool_, (2,), [True, False]),
        ((1, 2), mx.int32, (2,), [1, 2]),
        ([(1, 2), [3, 4]], mx.int32, (2, 2), [1, 2, 3, 4]),
        (((1.5,), (2.5,), (3.5,)), mx.float32, (3, 1), [1.5, 2.5, 3.5]),
        ([[[1], [2]], [[3], [4]]], mx.int32, (2, 2, 1), [1, 2, 3, 4]),
        ([], mx.float32, (0,), []),
        ((), mx.float32, (0,), []),
        ([[], []], mx.float32, (2, 0), []),
        ([[[]]], mx.float32, (1, 1, 0), []),
    ],
)
def test_construction_infers_shape_and_dtype(value, dtype, shape, elements):
    a = mx.array(value)
    assert a.dtype is dtype
    assert a.shape == shape
    assert a.data() == elements
    # Elements are stored as the dtype's Python type.
    want_type = {mx.bool_: bool, mx.int32: int, mx.float32: float}[dtype]
    assert all(type(v) is want_type for v in a.data())


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        ([1.7, -1.7, 0.2], mx.int32, [1, -1, 0]),  # casting to int truncates
        ([1, 0, 2], mx.bool_, [True, False, True]),
        ([0.0, -0.5], mx.bool_, [False, True]),
        ([True, False], mx.float32, [1.0, 0.0]),
        ([1, 2], mx.float64, [1.0, 2.0]),
        ([1, 2], mx.int64, [1, 2]),
        (2.5, mx.int64, 2),
        (3, mx.float32, 3.0),
    ],
)
def test_construction_with_explicit_dtype(value, dtype, expected):
    a = mx.array(value, dtype)
    assert a.dtype is dtype
    got = a.tolist()
    assert got == expected
    want_type = {mx.bool_: bool, mx.int64: int, mx.int32: int}.get(dtype, float)
    flat = got if isinstance(got, list) else [got]
    assert all(type(v) is want_type for v in flat)
    assert mx.array(value, dtype=dtype).dtype is dtype  # keyword form


def test_array_from_array_shares_its_descriptor():
    # As in MLX, mx.array(a) is astype(a, a.dtype): a new handle of a's node.
    a = mx.array([1, 2]) + 1  # an unevaluated node
    b = mx.array(a)
    assert a.data() is None and b.data() is None
    assert_new_handle(b, a)
    assert b.dtype is mx.int32 and b.shape == (2,)
    assert b.tolist() == [2, 3] and a.is_available()  # one node, evaluated once
    b[0] = 7  # assigning into b re-points b alone
    assert a.tolist() == [2, 3] and b.tolist() == [7, 3]


def test_array_from_array_with_dtype_is_a_lazy_cast():
    a = mx.array([1.5, -2.5, 0.0])
    b = mx.array(a, mx.int32)
    assert b.data() is None and isinstance(b.primitive(), AsType)
    assert b.dtype is mx.int32
    assert b.tolist() == [1, -2, 0]
    c = mx.array(a, dtype=mx.bool_)
    assert c.tolist() == [True, True, False]


def test_astype_is_lazy_and_converts():
    a = mx.array([1.9, -1.9, 0.0])
    b = a.astype(mx.int32)
    assert b.data() is None
    assert b.dtype is mx.int32 and b.tolist() == [1, -1, 0]
    assert a.astype(mx.bool_).tolist() == [True, True, False]
    f = mx.array([1, 0]).astype(mx.float64)
    assert f.dtype is mx.float64 and [type(v) for v in f.tolist()] == [float, float]
    with pytest.raises(TypeError):
        a.astype("float32")


# Ragged lists and elements of other types: tests/test_array_construction.py
# compares their errors with MLX's.


def test_dtype_must_be_a_dtype():
    with pytest.raises(TypeError):
        mx.array(1, dtype="float32")
    with pytest.raises(TypeError):
        mx.array(1, int)


def test_failed_construction_leaves_no_unraisable_error():
    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda info: seen.append(info.exc_value)
    try:
        with pytest.raises(TypeError):
            mx.array(1, dtype="float32")
        import gc

        gc.collect()
    finally:
        sys.unraisablehook = old
    assert seen == []


def test_large_python_ints_infer_int64():
    assert mx.array(2**31).dtype is mx.int64
    assert mx.array(-(2**31) - 1).dtype is mx.int64
    assert mx.array([1, 2**40]).dtype is mx.int64
    assert mx.array(2**31 - 1).dtype is mx.int32


def test_list_of_arrays_is_stacked():
    a = mx.array([mx.array([1, 2]), mx.array([3, 4])])
    assert a.shape == (2, 2) and a.dtype is mx.int32
    assert a.tolist() == [[1, 2], [3, 4]]


# --- attributes -------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, itemsize",
    [(mx.bool_, 1), (mx.int32, 4), (mx.int64, 8), (mx.float32, 4), (mx.float64, 8)],
)
def test_attributes(dtype, itemsize):
    a = mx.array([[1, 0, 1], [0, 1, 1]], dtype)
    assert a.shape == (2, 3) and a.ndim == 2 and a.size == 6
    assert a.dtype is dtype and a.itemsize == itemsize and a.nbytes == 6 * itemsize
    s = mx.array(1, dtype)
    assert s.shape == () and s.ndim == 0 and s.size == 1 and s.nbytes == itemsize
    e = mx.array([[], []], dtype)
    assert e.shape == (2, 0) and e.ndim == 2 and e.size == 0 and e.nbytes == 0


def test_attributes_of_an_unevaluated_node_need_no_evaluation():
    a = mx.array([[1.0, 2.0, 3.0]]) * 2
    assert (a.shape, a.ndim, a.size, a.dtype, a.nbytes) == ((1, 3), 2, 3, mx.float32, 12)
    assert a.data() is None


# --- conversions ------------------------------------------------------------------


def test_item():
    assert mx.array(7).item() == 7 and type(mx.array(7).item()) is int
    assert type(mx.array(7.0).item()) is float
    assert mx.array(True).item() is True
    assert mx.array([[2.5]]).item() == 2.5  # any size-1 array
    assert mx.array(3, mx.float32).item() == 3.0 and type(mx.array(3, mx.float32).item()) is float


@pytest.mark.parametrize("value", [[1, 2], [], [[1], [2]]])
def test_item_of_not_size_one_raises(value):
    msg = "[convert] Only length-1 arrays can be converted to Python scalars."
    with pytest.raises(ValueError, match=re.escape(msg)):
        mx.array(value).item()
    with pytest.raises(ValueError, match=re.escape(msg)):
        bool(mx.array(value))
    with pytest.raises(ValueError, match=re.escape(msg)):
        int(mx.array(value))
    with pytest.raises(ValueError, match=re.escape(msg)):
        float(mx.array(value))


def test_tolist():
    assert mx.array(3).tolist() == 3
    assert mx.array([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert mx.array([[[1.5], [2.5]]]).tolist() == [[[1.5], [2.5]]]
    assert mx.array([[], []]).tolist() == [[], []]
    assert mx.array([]).tolist() == []
    assert mx.array([True, False]).tolist() == [True, False]
    got = mx.array([1, 2], mx.float32).tolist()
    assert [type(v) for v in got] == [float, float]


def test_bool_int_float():
    assert bool(mx.array(0)) is False
    assert bool(mx.array([2.5])) is True
    assert bool(mx.array([[False]])) is False
    assert int(mx.array(2.7)) == 2 and int(mx.array(-2.7)) == -2
    assert float(mx.array(2)) == 2.0 and type(float(mx.array(2))) is float


def test_len_and_iter_of_0d_raise():
    assert len(mx.array([[1, 2, 3]])) == 1
    assert len(mx.array([1, 2, 3])) == 3
    assert len(mx.array([])) == 0
    with pytest.raises(TypeError, match=re.escape("len() 0-dimensional array.")):
        len(mx.array(1))
    with pytest.raises(TypeError, match=re.escape("iter() 0-dimensional array.")):
        iter(mx.array(1))


def test_index():
    assert [10, 20, 30][mx.array(1)] == 20
    assert [10, 20, 30][mx.array(-1, mx.int64)] == 30


def test_index_of_float_raises_mlx_message():
    msg = "Only 0-dimensional integer arrays can be converted to an index."
    with pytest.raises(TypeError, match=re.escape(msg)):
        [1, 2, 3][mx.array(1.0)]


# --- dtypes -----------------------------------------------------------------------


def test_dtype_repr_and_size():
    assert repr(mx.float32) == "mlx.core.float32" and str(mx.float32) == "mlx.core.float32"
    assert repr(mx.bool_) == "mlx.core.bool"
    assert [d.size for d in (mx.bool_, mx.int32, mx.int64, mx.float32, mx.float64)] == [
        1,
        4,
        8,
        4,
        8,
    ]
    assert mx.float32 == mx.float32 and mx.float32 != mx.int32


_DTYPE_NAMES = ["bool_", "int32", "int64", "float32", "float64"]
_CATEGORY_NAMES = ["floating", "inexact", "integer", "signedinteger", "number", "generic"]


def test_issubdtype():
    # Checked with MLX: mx.issubdtype(dtype, category) for each pair.
    expected = {
        "bool_": [False, False, False, False, False, True],
        "int32": [False, False, True, True, True, True],
        "int64": [False, False, True, True, True, True],
        "float32": [True, True, False, False, True, True],
        "float64": [True, True, False, False, True, True],
    }
    for name, row in expected.items():
        dt = getattr(mx, name)
        assert [mx.issubdtype(dt, getattr(mx, c)) for c in _CATEGORY_NAMES] == row, name
        assert [mx.issubdtype(dt, getattr(mx, o)) for o in _DTYPE_NAMES] == [
            o == name for o in _DTYPE_NAMES
        ]
    # Categories nest: floating < inexact < number < generic, signedinteger < integer.
    assert mx.issubdtype(mx.floating, mx.inexact)
    assert mx.issubdtype(mx.signedinteger, mx.number)
    assert not mx.issubdtype(mx.number, mx.integer)
    assert not mx.issubdtype(mx.floating, mx.float32)


@needs_mlx
def test_issubdtype_matches_mlx():
    for a in _DTYPE_NAMES + _CATEGORY_NAMES:
        for b in _DTYPE_NAMES + _CATEGORY_NAMES:
            ours = mx.issubdtype(getattr(mx, a), getattr(mx, b))
            theirs = real_mx.issubdtype(getattr(real_mx, a), getattr(real_mx, b))
            assert ours == theirs, (a, b)


# --- repr -------------------------------------------------------------------------
# Each case builds an array with either module (mlxref.core or mlx.core).

_REPR_CASES = {
    "int0d": (lambda m: m.array(1), "array(1, dtype=int32)"),
    "float0d": (lambda m: m.array(1.0), "array(1, dtype=float32)"),
    "bool0d": (lambda m: m.array(True), "array(True, dtype=bool)"),
    "pi": (lambda m: m.array(math.pi), "array(3.14159, dtype=float32)"),
    "ints": (lambda m: m.array([1, -2, 300]), "array([1, -2, 300], dtype=int32)"),
    "floats": (lambda m: m.array([1.5, 2.0, -3.25]), "array([1.5, 2, -3.25], dtype=float32)"),
    "small": (lambda m: m.array([1e-5, 1.0]), "array([1e-05, 1], dtype=float32)"),
    "tiny": (lambda m: m.array([1e-10, 2e-10]), "array([1e-10, 2e-10], dtype=float32)"),
    "big": (lambda m: m.array([1e10, 1.0]), "array([1e+10, 1], dtype=float32)"),
    "eight_digits": (lambda m: m.array([123456789.0]), "array([1.23457e+08], dtype=float32)"),
    "thirds": (lambda m: m.array([1 / 3, 2 / 3]), "array([0.333333, 0.666667], dtype=float32)"),
    "mixed": (
        lambda m: m.array([0.1, 100.0, 12345.678]),
        "array([0.1, 100, 12345.7], dtype=float32)",
    ),
    "million": (
        lambda m: m.array([0.5, 1e5, 1e6, 1e7]),
        "array([0.5, 100000, 1e+06, 1e+07], dtype=float32)",
    ),
    "e20": (lambda m: m.array([1e20, 1e-20]), "array([1e+20, 1e-20], dtype=float32)"),
    "inf_nan": (
        lambda m: m.array([math.inf, -math.inf, math.nan, 1.0]),
        "array([inf, -inf, nan, 1], dtype=float32)",
    ),
    "neg_zero": (lambda m: m.array([-0.0, 0.0]), "array([-0, 0], dtype=float32)"),
    "neg_zero0d": (lambda m: m.array(-0.0), "array(-0, dtype=float32)"),
    "bools": (lambda m: m.array([True, False]), "array([True, False], dtype=bool)"),
    "int2d": (
        lambda m: m.array([[1, 2], [3, 4]]),
        "array([[1, 2],\n       [3, 4]], dtype=int32)",
    ),
    "float2d": (
        lambda m: m.array([[1.5, 2], [3, 4]]),
        "array([[1.5, 2],\n       [3, 4]], dtype=float32)",
    ),
    "int3d": (
        lambda m: m.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]),
        "array([[[1, 2],\n        [3, 4]],\n       [[5, 6],\n        [7, 8]]], dtype=int32)",
    ),
    "empty": (lambda m: m.array([]), "array([], dtype=float32)"),
    "empty2d": (lambda m: m.array([[], []]), "array([[],\n       []], dtype=float32)"),
    "empty3d": (lambda m: m.array([[[]]]), "array([[[]]], dtype=float32)"),
    "float64": (
        lambda m: m.array([1.5, 2.0, 1 / 3], m.float64),
        "array([1.5, 2, 0.333333], dtype=float64)",
    ),
    "int64": (lambda m: m.array([1, 2**40], m.int64), "array([1, 1099511627776], dtype=int64)"),
    "int32_max": (lambda m: m.array([2**31 - 1]), "array([2147483647], dtype=int32)"),
    "cast_int": (lambda m: m.array(-3.7, m.int32), "array(-3, dtype=int32)"),
    "cast_bool": (lambda m: m.array([0, 2, -1], m.bool_), "array([False, True, True], dtype=bool)"),
    "six": (
        lambda m: m.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        "array([1, 2, 3, 4, 5, 6], dtype=float32)",
    ),
    "six_by_six": (
        lambda m: m.array([[i * 6 + j for j in range(6)] for i in range(6)]),
        "array([[0, 1, 2, 3, 4, 5],\n"
        "       [6, 7, 8, 9, 10, 11],\n"
        "       [12, 13, 14, 15, 16, 17],\n"
        "       [18, 19, 20, 21, 22, 23],\n"
        "       [24, 25, 26, 27, 28, 29],\n"
        "       [30, 31, 32, 33, 34, 35]], dtype=int32)",
    ),
    "computed": (lambda m: m.array([1, 2]) * 2.5, "array([2.5, 5], dtype=float32)"),
    "grid_30x50": (
        lambda m: m.array([[i * 50 + j for j in range(50)] for i in range(30)]),
        "array([[0, 1, 2, ..., 47, 48, 49],\n"
        "       [50, 51, 52, ..., 97, 98, 99],\n"
        "       [100, 101, 102, ..., 147, 148, 149],\n"
        "       ...,\n"
        "       [1350, 1351, 1352, ..., 1397, 1398, 1399],\n"
        "       [1400, 1401, 1402, ..., 1447, 1448, 1449],\n"
        "       [1450, 1451, 1452, ..., 1497, 1498, 1499]], dtype=int32)",
    ),
    "floats_1200": (
        lambda m: m.array([i / 7 for i in range(1200)]),
        "array([0, 0.142857, 0.285714, ..., 171, 171.143, 171.286], dtype=float32)",
    ),
    "thousand_and_one": (
        lambda m: m.array(list(range(1001))),
        "array([0, 1, 2, ..., 998, 999, 1000], dtype=int32)",
    ),
}

# MLX summarises every axis longer than 6 (first 3, "...", last 3), whatever the
# total size: mlx/utils.cpp print_subarray. mlxref summarises only above 1000
# elements.
_SUMMARY_REASON = (
    "array.py _format_array: MLX summarises each axis with more than 6 entries "
    "(3 ... 3) at any size, not arrays of more than 1000 elements"
)
_SUMMARISED_CASES = {
    "seven": (lambda m: m.array(list(range(7))), "array([0, 1, 2, ..., 4, 5, 6], dtype=int32)"),
    "thousand": (
        lambda m: m.array(list(range(1000))),
        "array([0, 1, 2, ..., 997, 998, 999], dtype=int32)",
    ),
    "bools_7": (
        lambda m: m.array([[True, False, True, True, False, True, False]]),
        "array([[True, False, True, ..., False, True, False]], dtype=bool)",
    ),
    "rows_17": (
        lambda m: m.array([[i for i in range(6)] for _ in range(17)]),
        "array([[0, 1, 2, 3, 4, 5],\n"
        "       [0, 1, 2, 3, 4, 5],\n"
        "       [0, 1, 2, 3, 4, 5],\n"
        "       ...,\n"
        "       [0, 1, 2, 3, 4, 5],\n"
        "       [0, 1, 2, 3, 4, 5],\n"
        "       [0, 1, 2, 3, 4, 5]], dtype=int32)",
    ),
    "cube_8": (
        lambda m: m.array([[[i * 100 + j * 10 + k for k in range(2)] for j in range(2)] for i in range(8)]),
        "array([[[0, 1],\n"
        "        [10, 11]],\n"
        "       [[100, 101],\n"
        "        [110, 111]],\n"
        "       [[200, 201],\n"
        "        [210, 211]],\n"
        "       ...,\n"
        "       [[500, 501],\n"
        "        [510, 511]],\n"
        "       [[600, 601],\n"
        "        [610, 611]],\n"
        "       [[700, 701],\n"
        "        [710, 711]]], dtype=int32)",
    ),
}


@pytest.mark.parametrize("name", sorted(_REPR_CASES))
def test_repr(name):
    build, expected = _REPR_CASES[name]
    a = build(mx)
    assert repr(a) == expected
    assert str(a) == expected


@pytest.mark.parametrize("name", sorted(_SUMMARISED_CASES))
def test_repr_summarised(name):
    build, expected = _SUMMARISED_CASES[name]
    assert repr(build(mx)) == expected


@needs_mlx
@pytest.mark.parametrize("name", sorted(_REPR_CASES))
def test_repr_matches_mlx(name):
    build, _ = _REPR_CASES[name]
    assert repr(build(mx)) == repr(build(real_mx))


@needs_mlx
@pytest.mark.parametrize("name", sorted(_SUMMARISED_CASES))
def test_repr_summarised_matches_mlx(name):
    build, _ = _SUMMARISED_CASES[name]
    assert repr(build(mx)) == repr(build(real_mx))


def test_repr_of_a_symbolic_array():
    sympy = pytest.importorskip("sympy")
    x = sympy.Symbol("x")
    assert repr(mx.array([x, 2 * x])) == "array([x, 2*x], dtype=float32)"
