"""array_equal, allclose, isclose, the nan/inf tests and nan_to_num (mlxref/core/ops/comparison.py;
MLX's mlx/ops.cpp), against real MLX.

Each check runs the same program on mlxref and on MLX and compares what comes
out: the shape, dtype and elements, or the exception's type and message.
"""

import math

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx, same_in_both

pytestmark = needs_mlx

INF, NAN = math.inf, math.nan

# One list of values per dtype kind, with nan and infinities where the dtype has them.
FLOATS = [0.0, 1.0, -1.5, 1e-7, INF, -INF, NAN, 3.0e4]
COMPLEX = [0j, 1 + 1j, complex(INF, 0), complex(-INF, 0), complex(INF, 1), complex(0, INF),
           complex(NAN, 0), complex(1, NAN)]
INTS = [0, 1, 2, 3, 5, 7, 100, 127]
BOOLS = [True, False, True, True, False, False, True, False]
ALL_DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
              "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


def _values(dtype):
    if dtype == "bool_":
        return BOOLS
    if dtype == "complex64":
        return COMPLEX
    if dtype.startswith(("float", "bfloat")):
        return FLOATS
    return INTS


# --- isnan, isinf, isfinite, isposinf, isneginf ----------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf"])
def test_classification_of_every_dtype(name, dtype):
    out = same_in_both(lambda M: getattr(M, name)(M.array(_values(dtype), getattr(M, dtype))))
    assert out[2] == "bool"


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "isposinf", "isneginf"])
def test_classification_of_scalars_and_shapes(name):
    same_in_both(lambda M: getattr(M, name)(INF))
    same_in_both(lambda M: getattr(M, name)(NAN))
    same_in_both(lambda M: getattr(M, name)(3))
    same_in_both(lambda M: getattr(M, name)(M.array([[INF, 1.0], [NAN, -INF]])))
    same_in_both(lambda M: getattr(M, name)([1.0, NAN]))  # a list is refused


def test_classification_under_grad_jvp_and_vmap():
    x = [1.0, INF, NAN, -2.0]
    # The masks have zero derivative; multiplying by them keeps the others.
    same_in_both(lambda M: M.grad(lambda v: (M.isfinite(v) * v).sum())(M.array(x)))
    same_in_both(lambda M: M.jvp(lambda v: M.where(M.isnan(v), 0.0, v), [M.array(x)],
                                 [M.array([1.0, 1.0, 1.0, 1.0])])[1][0])
    same_in_both(lambda M: M.vmap(M.isinf)(M.array([[1.0, INF], [-INF, NAN]])))
    same_in_both(lambda M: M.vmap(M.isneginf, in_axes=1)(M.array([[1.0, INF], [-INF, NAN]])))


# --- array_equal ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_array_equal_within_each_dtype(dtype):
    for equal_nan in (False, True):
        same_in_both(lambda M: M.array_equal(M.array(_values(dtype), getattr(M, dtype)),
                                             M.array(_values(dtype), getattr(M, dtype)),
                                             equal_nan=equal_nan))


def test_array_equal_promotes_and_needs_equal_shapes():
    same_in_both(lambda M: M.array_equal(M.array([1, 2, 3]), M.array([1.0, 2.0, 3.0])))
    same_in_both(lambda M: M.array_equal(M.array([1, 2, 3], M.uint8), M.array([1, 2, 3], M.int64)))
    same_in_both(lambda M: M.array_equal(M.array([True, False]), M.array([1, 0])))
    same_in_both(lambda M: M.array_equal(M.array([1, 2]), M.array([[1, 2]])))  # no broadcasting
    same_in_both(lambda M: M.array_equal(M.array([]), M.array([])))
    same_in_both(lambda M: M.array_equal(1, 1.0))
    same_in_both(lambda M: M.array_equal(M.array(2, M.float16), 2))
    same_in_both(lambda M: M.array_equal(M.array([1, 2], M.float16), M.array([1, 2.001])))


def test_array_equal_equal_nan():
    nan_pair = [[1.0, NAN], [1.0, NAN]]
    same_in_both(lambda M: M.array_equal(M.array(nan_pair[0]), M.array(nan_pair[1])))
    same_in_both(
        lambda M: M.array_equal(M.array(nan_pair[0]), M.array(nan_pair[1]), equal_nan=True))
    same_in_both(
        lambda M: M.array_equal(M.array([NAN], M.bfloat16), M.array([NAN]), equal_nan=True))
    # complex: a number is nan when either part is
    same_in_both(lambda M: M.array_equal(M.array([complex(NAN, 1)]), M.array([complex(1, NAN)]),
                                         equal_nan=True))
    same_in_both(lambda M: M.array_equal(M.array([1, 2]), M.array([1, 2]), equal_nan=True))


def test_array_equal_node_and_errors():
    out = mx.array_equal(mx.array([1.0]), mx.array([1.0]), equal_nan=True)
    (node,) = out.inputs()
    assert node.primitive().name == "NaNEqual"
    assert mx.equal(mx.array(1), 1).primitive().name == "Equal"
    same_in_both(lambda M: M.array_equal(M.array([1.0]), M.array([1.0]), equal_nan=1))
    for M in (mx, real_mx):  # equal_nan is keyword-only (Python's own message in mlxref)
        with pytest.raises(TypeError):
            M.array_equal(M.array([1.0]), M.array([1.0]), True)
    same_in_both(lambda M: M.array_equal([1], [1]))


def test_array_equal_under_transforms():
    same_in_both(lambda M: M.grad(lambda v: M.array_equal(v, v) * v.sum())(M.array([1.0, 2.0])))
    same_in_both(lambda M: M.vmap(M.array_equal, in_axes=(0, None))(
        M.array([[1, 2], [1, 3]]), M.array([1, 2])))


# --- isclose and allclose -----------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_isclose_within_each_dtype(dtype):
    values = _values(dtype)
    shifted = values[1:] + values[:1]
    for equal_nan in (False, True):
        same_in_both(lambda M: M.isclose(M.array(values, getattr(M, dtype)),
                                         M.array(shifted, getattr(M, dtype)), equal_nan=equal_nan))
        same_in_both(lambda M: M.isclose(M.array(values, getattr(M, dtype)),
                                         M.array(values, getattr(M, dtype)), equal_nan=equal_nan))
    same_in_both(lambda M: M.allclose(M.array(values, getattr(M, dtype)),
                                      M.array(values, getattr(M, dtype)), equal_nan=True))


def test_isclose_tolerances_infinities_and_broadcasting():
    a = [1.0, 1.0001, 1.01, INF, -INF, INF, NAN, 0.0]
    b = [1.0, 1.0, 1.0, INF, -INF, -INF, NAN, 1e-9]
    same_in_both(lambda M: M.isclose(M.array(a), M.array(b)))
    same_in_both(lambda M: M.isclose(M.array(a), M.array(b), rtol=1e-3))
    same_in_both(lambda M: M.isclose(M.array(a), M.array(b), 0.0, 0.02))
    same_in_both(lambda M: M.isclose(M.array(a), M.array(b), rtol=1, atol=True, equal_nan=True))
    same_in_both(lambda M: M.isclose(M.array([[1.0], [2.0]]), M.array([1.0, 2.0, 3.0])))
    same_in_both(lambda M: M.isclose(M.array([1.0, 2.0]), M.array([1.0, 2.0, 3.0])))
    same_in_both(lambda M: M.allclose(M.array(a), M.array(b), equal_nan=True))
    same_in_both(lambda M: M.allclose(M.array(a[:3]), M.array(b[:3]), rtol=0.02))
    same_in_both(lambda M: M.allclose(M.array(a[:3]), M.array(b[:3])))


def test_isclose_mixed_dtypes():
    # unsigned subtraction wraps (|1 - 2| is 255 in uint8); float16 and int
    # inputs meet float32 tolerances
    same_in_both(lambda M: M.isclose(M.array([1, 2], M.uint8), M.array([2, 2], M.uint8)))
    same_in_both(
        lambda M: M.isclose(M.array([1, 2], M.uint8), M.array([2, 2], M.uint8), atol=300.0))
    same_in_both(lambda M: M.isclose(M.array([1, 2]), M.array([1.0000001, 2.5], M.float16)))
    same_in_both(lambda M: M.isclose(M.array([1.0, 2.0], M.bfloat16), M.array([1.004, 2.0])))
    same_in_both(lambda M: M.isclose(M.array([1 + 1j, 2j]), M.array([1.0, 2j])))
    same_in_both(lambda M: M.isclose(M.array([True, False]), M.array([True, True])))


def test_isclose_and_allclose_refuse_what_mlx_refuses():
    for name in ("isclose", "allclose"):
        same_in_both(lambda M: getattr(M, name)(1.0, 1))  # scalars are not arrays here
        same_in_both(lambda M: getattr(M, name)(M.array([1.0]), [1.0]))
        same_in_both(lambda M: getattr(M, name)(M.array([1.0]), M.array([1.0]), rtol="a"))
        same_in_both(lambda M: getattr(M, name)(M.array([1.0]), M.array([1.0]), equal_nan=1))


def test_isclose_and_allclose_under_transforms():
    x = [1.0, 2.0, INF]
    same_in_both(lambda M: M.grad(lambda v: (M.isclose(v, M.array([1.0, 2.5, INF])) * v).sum())(
        M.array(x)))
    same_in_both(lambda M: M.vmap(lambda u, v: M.allclose(u, v), in_axes=(0, None))(
        M.array([[1.0, 2.0], [1.0, 3.0]]), M.array([1.0, 2.0])))


# --- nan_to_num ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nan_to_num_defaults_for_every_dtype(dtype):
    # float64 and complex64 are refused by MLX 0.32.4; integers come back as they are
    same_in_both(lambda M: M.nan_to_num(M.array(_values(dtype), getattr(M, dtype))))


def test_nan_to_num_replacements():
    x = [1.0, NAN, INF, -INF, -0.5]
    same_in_both(lambda M: M.nan_to_num(M.array(x), nan=7.0, posinf=100.0, neginf=-3))
    same_in_both(lambda M: M.nan_to_num(M.array(x), 2.5))
    same_in_both(
        lambda M: M.nan_to_num(M.array(x, M.float16), nan=1e10, posinf=True))  # C float, then f16
    same_in_both(lambda M: M.nan_to_num(M.array(x, M.bfloat16), neginf=-1e39))
    same_in_both(lambda M: M.nan_to_num(M.array(x), posinf=1e300))  # beyond a C float: inf
    same_in_both(lambda M: M.nan_to_num(NAN))
    same_in_both(lambda M: M.nan_to_num(3))
    same_in_both(lambda M: M.nan_to_num(M.array(x), nan="a"))
    same_in_both(lambda M: M.nan_to_num(M.array(x), posinf=[1.0]))
    same_in_both(lambda M: M.nan_to_num([1.0, NAN]))


def test_nan_to_num_under_transforms():
    x = [1.0, NAN, INF, -2.0]
    same_in_both(lambda M: M.grad(lambda v: M.nan_to_num(v).sum())(M.array(x)))
    same_in_both(lambda M: M.jvp(M.nan_to_num, [M.array(x)], [M.array([2.0, 2.0, 2.0, 2.0])])[1][0])
    same_in_both(lambda M: M.vmap(M.nan_to_num, in_axes=1)(M.array([[1.0, NAN], [INF, -INF]])))


def test_integer_passthrough_is_a_new_handle():
    a = mx.array([1, 2])
    b = mx.nan_to_num(a)
    assert b is not a and b.id() == a.id()
