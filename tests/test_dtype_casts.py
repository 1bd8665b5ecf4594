"""Casts between MLX's fourteen dtypes (``astype``) at each type's boundary values.

The whole 14 x 14 table is compared with real MLX element by element: the
same value, the same Python type, the same sign of zero, nan for nan. The
other tests run the same assertions on mlxref and, when it is installed, on
MLX, with expected values computed from the inputs (exact rational rounding
in ``support.nearest``, independent of mlxref's code).
"""

import math

import pytest

import mlxref.core as mx

from support import nearest, needs_mlx, real_mx

LIBS = [mx] + ([real_mx] if real_mx is not None else [])

NAMES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "float16", "bfloat16", "float32", "float64", "complex64"]
INTEGERS = NAMES[1:9]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
inf, nan = math.inf, math.nan

def _exact_in(v, name):
    """Whether the Python value ``v`` is exactly a value of dtype ``name``."""
    if name == "bool_":
        return type(v) is bool
    if name in INTEGERS:
        info = mx.iinfo(getattr(mx, name))
        return type(v) is int and info.min <= v <= info.max
    if type(v) is not float:
        return False
    return v != v or not math.isfinite(v) or nearest(v, name) == v


# Boundary values: zeros, ones, ties, each type's limits, 2**24, 2**53, 2**63,
# 65504 / 65520, subnormals, infinities and nan.
_FLOAT_VALUES = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.1, -0.1, 127.5, 128.0, -128.5,
    -129.0, 255.5, 256.0, 65504.0, 65505.0, 65519.0, 65519.99, 65520.0, 65536.0, -65520.0,
    2.0**24 - 1, 2.0**24, 2.0**24 + 1, 2.0**24 + 2, 2.0**24 + 3, 2.0**31 - 1, 2.0**31, -(2.0**31),
    -(2.0**31) - 1, 2.0**32 - 1, 2.0**32, 2.0**32 + 5, 2.0**40 + 7, -(2.0**40) - 7, 2.0**53 - 1,
    2.0**53, 2.0**53 + 2, 2.0**63 - 1024, 2.0**63, -(2.0**63), 2.0**63 + 2048,
    -(2.0**63) - 2048, 2.0**64 - 2048, 2.0**64, 1e20, -1e20,
    3.4028234663852886e38, 3.4028235677973362e38, 3.4028235677973366e38, 3.3895313892515355e38,
    1.7976931348623157e308, -1.7976931348623157e308, 2.0**-14, 2.0**-24, 2.0**-25,
    3 * 2.0**-26, 2.0**-126, 2.0**-133, 2.0**-149, 2.0**-150, 3 * 2.0**-151, 2.0**-1022,
    5e-324, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-8,
    1 + 3 * 2.0**-8, 1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-24, 1 + 2.0**-24 + 2.0**-60,
    1 + 2.0**-24 + 2.0**-50, inf, -inf, nan,
]
_INT_VALUES = [
    0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65504, 65519,
    65520, 65535, 65536, 2**24 + 1, 2**24 + 3, 2**31 - 1, 2**31, -(2**31), 2**32 - 1, 2**32,
    2**53 + 1, 2**53 + 3, 2**60 + 2**36, 2**60 + 2**36 + 1, 2**60 + 2**36 - 1,
    -(2**60) - 2**36 - 1, ((2**24 + 1) << 39) + 1, 2**63 - 1, -(2**63), -(2**63) + 1, 2**63,
    2**64 - 1, 2**64 - 2**39, 2**63 + 2**39 + 1,
]


def _sources(name):
    if name == "bool_":
        return [False, True]
    if name == "complex64":
        reals = [v for v in _FLOAT_VALUES if _exact_in(v, "float32")][::3]
        return [complex(r, i) for r in reals for i in (0.0, -0.0, 1.5, nan, inf)] + [1j, -2j]
    if name in INTEGERS:
        return [v for v in _INT_VALUES if _exact_in(v, name)]
    values = [v for v in _FLOAT_VALUES if _exact_in(v, name)]
    return values + [float(v) for v in _INT_VALUES if _exact_in(float(v), name)]


def _build(lib, name, values):
    """The same array on either library (MLX takes no Python int above 2**63)."""
    if name == "uint64":
        wrapped = [v - 2**64 if v >= 2**63 else v for v in values]
        return lib.array(wrapped, dtype=lib.int64).astype(lib.uint64)
    if name in ("float16", "bfloat16"):  # exact values: no rounding on the way
        return lib.array(values, dtype=lib.float32).astype(getattr(lib, name))
    return lib.array(values, dtype=getattr(lib, name))


def _same(x, y):
    """Equal as stored: the same Python type and value, zeros of one sign, nan for nan."""
    if type(x) is not type(y):
        return False
    if type(x) is complex:
        return _same(x.real, y.real) and _same(x.imag, y.imag)
    if type(x) is float:
        if x != x or y != y:
            return x != x and y != y
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
    return x == y


def _differences(values, ours, theirs):
    return [(v, a, b) for v, a, b in zip(values, ours, theirs) if not _same(a, b)]


# --- the table, against MLX ------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("source", NAMES)
def test_every_cast_from_a_dtype_matches_mlx(source):
    values = _sources(source)
    ours, theirs = _build(mx, source, values), _build(real_mx, source, values)
    assert _differences(values, ours.tolist(), theirs.tolist()) == []  # the same inputs
    failures = {}
    for target in NAMES:
        got = ours.astype(getattr(mx, target)).tolist()
        if target == "uint32" and source in FLOATS + ["complex64"]:
            # MLX's vectorized copy of a contiguous run gives other bits for
            # out-of-range values than one element does; mlxref gives every
            # element the one-element result (see the next test).
            want = [theirs[i : i + 1].astype(real_mx.uint32).tolist()[0] for i in range(len(values))]
        else:
            want = theirs.astype(getattr(real_mx, target)).tolist()
        diffs = _differences(values, got, want)
        if diffs:
            failures[target] = diffs[:5]
    assert failures == {}, f"astype from {source}: (value, mlxref, MLX) per target {failures}"


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_a_float_out_of_uint32_range_keeps_the_low_bits_of_its_int64(lib):
    # One element at a time (a slice of one), as MLX's scalar loop converts:
    # through int64, whose nan and overflow value is -2**63 (low bits 0).
    values = [nan, -inf, inf, 2.0**32 + 5, 2.0**40 + 7, -(2.0**31) - 1, -5.0, 2.0**64]
    x = lib.array(values, dtype=lib.float64)
    got = [x[i : i + 1].astype(lib.uint32).tolist()[0] for i in range(len(values))]
    int64 = [int(v) if math.isfinite(v) and -(2**63) <= v < 2**63 else -(2**63) for v in values]
    assert got == [v % 2**32 for v in int64]


# --- properties, on both libraries -------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("source", ["int64", "uint64"])
def test_a_wide_integer_rounds_once_to_float32(lib, source):
    # Through a Python float (double) these would round twice: 2**60 + 2**36 + 1
    # would become 2**60 rather than 2**60 + 2**37.
    values = [2**60 + 2**36 + 1, 2**60 + 2**36, 2**60 + 3 * 2**36, ((2**24 + 1) << 38) + 1,
              2**63 - 1, 2**53 + 1]
    if source == "int64":
        values += [-(2**60) - 2**36 - 1, -(2**63)]
    else:
        values += [2**64 - 1, 2**63 + 2**39 + 1]
    x = _build(lib, source, values)
    once = [nearest(v, "float32") for v in values]
    assert once[0] != nearest(float(values[0]), "float32")  # the case double rounding gets wrong
    assert x.astype(lib.float32).tolist() == once
    # float16 and bfloat16 round that float32 again, as MLX's types convert from float.
    assert x.astype(lib.bfloat16).tolist() == [nearest(v, "bfloat16") for v in once]
    assert x.astype(lib.float16).tolist() == [nearest(v, "float16") for v in once]
    assert x.astype(lib.complex64).tolist() == [complex(v, 0.0) for v in once]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_float64_to_float16_rounds_through_float32(lib):
    values = [1 + 2.0**-11 + 2.0**-40, -(1 + 2.0**-11 + 2.0**-40), 65519.99, 65520.0,
              2.0**-25 + 2.0**-60, 2.0**-25, 3 * 2.0**-26, 1e-10, 70000.0]
    got = lib.array(values, dtype=lib.float64).astype(lib.float16).tolist()
    want = [nearest(nearest(v, "float32"), "float16") for v in values]
    assert want[0] != nearest(values[0], "float16")  # rounding once would give 1 + 2**-10
    assert [(g, math.copysign(1, g)) for g in got] == [(w, math.copysign(1, w)) for w in want]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_a_float_to_an_integer_truncates_and_overflows_to_the_minimum(lib):
    values = [1.5, -1.5, -0.5, 0.0, -0.0, 2.5, 1e9, -(2.0**31), nan, inf, -inf, 2.0**31, 1e10]
    got = lib.array(values, dtype=lib.float64).astype(lib.int32).tolist()
    low = mx.iinfo(mx.int32).min
    assert got == [int(v) if math.isfinite(v) and low <= v < -low else low for v in values]
    # 8- and 16-bit types keep the low bits of that int32.
    got = lib.array(values, dtype=lib.float64).astype(lib.int8).tolist()
    as_int32 = [int(v) if math.isfinite(v) and low <= v < -low else low for v in values]
    assert got == [(v + 128) % 256 - 128 for v in as_int32]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_bool_and_complex_casts(lib):
    b = lib.array([False, True])
    assert [(v, type(v)) for v in b.astype(lib.int8).tolist()] == [(0, int), (1, int)]
    assert b.astype(lib.float16).tolist() == [0.0, 1.0]
    values = [1j, 0j, complex(0.0, nan), complex(2.5, -1.0), complex(-0.0, 3.0), complex(-7.75, 0)]
    z = lib.array(values, dtype=lib.complex64)
    # to bool: either part nonzero; to a real type: the real part.
    assert z.astype(lib.bool_).tolist() == [v != 0 for v in values]
    assert _differences(values, z.astype(lib.float32).tolist(), [v.real for v in values]) == []
    assert z.astype(lib.int32).tolist() == [int(v.real) for v in values]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_python_ints_to_float32_round_once_as_scalars_and_twice_in_lists(lib):
    v = 2**60 + 2**36 + 1
    once, twice = nearest(v, "float32"), nearest(float(v), "float32")
    assert once != twice
    assert lib.array(v, dtype=lib.float32).item() == once
    assert (lib.array([1.0], dtype=lib.float32) * v).tolist() == [once]  # a weak scalar
    # A list is read as C floats through double (python/src/convert.cpp).
    assert lib.array([v], dtype=lib.float32).tolist() == [twice]
