"""The fourteen dtypes (mlxref/core/dtypes.py; MLX's mlx/dtype.h and types/): names, sizes,
promotion, categories, limits, what each one stores, and the casts between them,
compared with real MLX wherever it is installed.

This file holds the dtype objects, the storing of values (Python floats and ints
included), which every op shares, and ``astype``; the elementwise, reduction and
complex behaviours of each dtype are tested with their ops.

Casts between the fourteen dtypes are checked at each type's boundary values:
the whole 14 x 14 table is compared with real MLX element by element: the
same value, the same Python type, the same sign of zero, nan for nan. The
other cast tests run the same assertions on mlxref and, when it is installed, on
MLX, with expected values computed from the inputs (exact rational rounding
in ``support.nearest``, independent of mlxref's code).

Python ints meeting arrays, or building them, as MLX computes them: every test
that takes ``m`` runs its assertions twice, on mlxref and, when it is
installed, on MLX itself; expected values come through ``wrap`` (C's
two's-complement store).
"""

import math
import re
import struct

import pytest

import mlxref.core as mx
from mlxref.core import dtypes
from support import dtype_name, nearest, needs_mlx, real_mx, same_value, wrap

LIBS = [mx] + ([real_mx] if real_mx is not None else [])

NAMES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "float16", "bfloat16", "float32", "float64", "complex64"]
CATEGORIES = ["generic", "number", "integer", "signedinteger", "unsignedinteger",
              "inexact", "floating", "complexfloating"]


def name_of(dtype):
    return str(dtype).split(".")[-1]


def test_every_dtype_is_there_once_with_its_size_and_repr():
    got = [getattr(mx, n) for n in NAMES]
    assert len(set(map(id, got))) == 14
    bits = {"bool_": 8, "complex64": 64}
    for n, d in zip(NAMES, got):
        want_bits = bits.get(n) or int("".join(c for c in n if c.isdigit()))
        assert d.size * 8 == want_bits
        assert repr(d) == f"mlx.core.{n.rstrip('_')}" == str(d)


@needs_mlx
def test_sizes_and_reprs_are_mlxs():
    for n in NAMES:
        assert getattr(mx, n).size == getattr(real_mx, n).size
        assert repr(getattr(mx, n)) == repr(getattr(real_mx, n))
    for c in CATEGORIES:
        assert repr(getattr(mx, c)) == repr(getattr(real_mx, c))


@needs_mlx
@pytest.mark.parametrize("a", NAMES)
def test_promotion_of_every_pair_is_mlxs(a):
    for b in NAMES:
        want = name_of(real_mx.result_type(getattr(real_mx, a), getattr(real_mx, b)))
        assert name_of(mx.result_type(getattr(mx, a), getattr(mx, b))) == want, (a, b)
        # and an op on two arrays of those dtypes has that dtype
        x, y = mx.zeros((2,), getattr(mx, a)), mx.ones((2,), getattr(mx, b))
        assert name_of((x + y).dtype) == want, (a, b)
        assert (x == y).dtype is mx.bool_


def test_promotion_is_symmetric_and_each_dtype_meets_itself():
    for a in NAMES:
        da = getattr(mx, a)
        assert mx.result_type(da, da) is da
        for b in NAMES:
            db = getattr(mx, b)
            assert mx.result_type(da, db) is mx.result_type(db, da)


SCALARS = [True, 2, -3, 2.5, 1j]


@needs_mlx
@pytest.mark.parametrize("a", NAMES)
def test_weakly_typed_python_scalars_promote_as_in_mlx(a):
    for s in SCALARS:
        if a in ("uint8", "uint16", "uint32") and s == -3:  # uint64 wraps, as in MLX
            for m in (mx, real_mx):
                with pytest.raises(ValueError, match=f"Converting -3 to {a} would result in overflow"):
                    m.zeros((1,), getattr(m, a)) + s
            continue
        ours = mx.zeros((1,), getattr(mx, a)) + s
        theirs = real_mx.zeros((1,), getattr(real_mx, a)) + s
        assert name_of(ours.dtype) == name_of(theirs.dtype), (a, s)
        assert ours.tolist() == theirs.tolist(), (a, s)
        assert name_of((s * mx.ones((1,), getattr(mx, a))).dtype) == name_of(theirs.dtype)


@needs_mlx
@pytest.mark.parametrize("a", NAMES)
def test_float_valued_ops_give_mlxs_dtype(a):
    for op in ("divide", "arctan2", "logaddexp", "exp", "sqrt"):
        args = 1 if op in ("exp", "sqrt") else 2
        try:
            want = name_of(getattr(real_mx, op)(*[real_mx.ones((1,), getattr(real_mx, a))] * args).dtype)
        except Exception:  # noqa: BLE001 - MLX refuses it for this dtype; so do we
            continue
        got = getattr(mx, op)(*[mx.ones((1,), getattr(mx, a))] * args)
        assert name_of(got.dtype) == want, (op, a)


# --- categories and queries ---------------------------------------------------------


@needs_mlx
def test_issubdtype_for_every_dtype_and_category_is_mlxs():
    names = NAMES + CATEGORIES
    for a in names:
        for b in names:
            want = real_mx.issubdtype(getattr(real_mx, a), getattr(real_mx, b))
            assert mx.issubdtype(getattr(mx, a), getattr(mx, b)) == want, (a, b)


def test_issubdtype_follows_the_tree():
    assert mx.issubdtype(mx.float16, mx.floating) and mx.issubdtype(mx.floating, mx.number)
    assert mx.issubdtype(mx.uint8, mx.unsignedinteger) and mx.issubdtype(mx.uint8, mx.integer)
    assert not mx.issubdtype(mx.uint8, mx.signedinteger)
    assert mx.issubdtype(mx.complex64, mx.inexact) and not mx.issubdtype(mx.complex64, mx.floating)
    assert mx.issubdtype(mx.bool_, mx.generic) and not mx.issubdtype(mx.bool_, mx.number)
    assert not mx.issubdtype(mx.floating, mx.float32)


KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]


@needs_mlx
def test_isdtype_for_every_dtype_and_kind_is_mlxs():
    for n in NAMES:
        for k in KINDS + [(k1, k2) for k1, k2 in zip(KINDS, KINDS[1:])]:
            assert mx.isdtype(getattr(mx, n), k) == real_mx.isdtype(getattr(real_mx, n), k), (n, k)
        assert mx.isdtype(getattr(mx, n), (mx.int8, "bool")) == real_mx.isdtype(
            getattr(real_mx, n), (real_mx.int8, "bool"))


@needs_mlx
def test_bad_arguments_to_the_queries_raise_mlxs_errors():
    def error(m, call):
        with pytest.raises(Exception) as info:
            call(m)
        return type(info.value), str(info.value)

    calls = [
        lambda m: m.isdtype(m.float32, "blah"),
        lambda m: m.isdtype(m.float32, 3),
        lambda m: m.finfo(m.int32),
        lambda m: m.iinfo(m.float32),
        lambda m: m.result_type(),
        lambda m: m.result_type(1.0),
    ]
    for call in calls:
        assert error(mx, call) == error(real_mx, call)


@needs_mlx
def test_can_cast_and_result_type_of_arrays_are_mlxs():
    for a in NAMES:
        for b in NAMES:
            da, db = getattr(mx, a), getattr(mx, b)
            ra, rb = getattr(real_mx, a), getattr(real_mx, b)
            assert mx.can_cast(da, db) == real_mx.can_cast(ra, rb), (a, b)
        assert mx.can_cast(mx.zeros((1,), getattr(mx, a)), mx.float32) == real_mx.can_cast(
            real_mx.zeros((1,), getattr(real_mx, a)), real_mx.float32)
    assert mx.result_type(mx.array([1], mx.int8), mx.float16) is mx.float16


@needs_mlx
@pytest.mark.parametrize("n", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_finfo_is_mlxs(n):
    ours, theirs = mx.finfo(getattr(mx, n)), real_mx.finfo(getattr(real_mx, n))
    for field in ("min", "max", "eps", "smallest_normal", "bits"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert name_of(ours.dtype) == name_of(theirs.dtype)
    assert repr(ours) == repr(theirs)


@needs_mlx
@pytest.mark.parametrize("n", [n for n in NAMES if "int" in n])
def test_iinfo_is_mlxs(n):
    ours, theirs = mx.iinfo(getattr(mx, n)), real_mx.iinfo(getattr(real_mx, n))
    assert (ours.min, ours.max, name_of(ours.dtype)) == (theirs.min, theirs.max, name_of(theirs.dtype))
    assert repr(ours) == repr(theirs)


def test_finfo_limits_are_what_the_dtype_stores():
    for d in (mx.float16, mx.bfloat16, mx.float32):
        f = mx.finfo(d)
        assert mx.array(f.max, d).item() == f.max  # the largest value is stored exactly
        assert mx.array(f.max * 2, d).item() == math.inf  # and twice it overflows
        assert mx.array(f.smallest_normal, d).item() == f.smallest_normal
        assert mx.array(1 + f.eps, d).item() == 1 + f.eps
        assert mx.array(1 + f.eps / 2, d).item() == 1  # a tie rounds to even


# --- what each dtype stores ----------------------------------------------------------


def test_float32_stores_the_nearest_float32():
    a = mx.array(0.1)
    assert a.item() == struct.unpack("f", struct.pack("f", 0.1))[0] != 0.1
    assert mx.array(1e39).item() == math.inf and mx.array(-1e39).item() == -math.inf
    sub = mx.array(1e-40).item()  # a subnormal, kept
    assert 0 < sub != 1e-40 and sub == struct.unpack("f", struct.pack("f", 1e-40))[0]
    assert mx.array(1e-46).item() == 0.0 and math.copysign(1, mx.array(-1e-46).item()) == -1
    assert mx.array(0.1, mx.float64).item() == 0.1


def test_results_are_stored_as_the_dtype_holds_them():
    x = mx.array([0.1, 3e38])
    assert (x + x).tolist() == [struct.unpack("f", struct.pack("f", 0.2))[0], math.inf]
    stored = x.tolist()[0]
    assert (x * 3).tolist()[0] == struct.unpack("f", struct.pack("f", stored * 3))[0]
    assert mx.exp(mx.array(100.0)).item() == math.inf
    assert mx.exp(mx.array(100.0, mx.float64)).item() == math.exp(100.0)
    i = mx.array(2147483647)
    assert (i + 1).item() == -2147483648 and (i + 1).dtype is mx.int32
    assert (mx.array(255, mx.uint8) + 1).item() == 0


@needs_mlx
def test_the_issues_examples_equal_mlx():
    programs = [
        lambda m: m.exp(m.array(100.0)),
        lambda m: m.sum(m.array([3e38, 3e38, -3e38])),
        lambda m: m.array(2147483647) + 1,
        lambda m: m.array(0.1),
        lambda m: m.array(65519.99, m.float16),
        lambda m: m.array(3.14159265, m.bfloat16),
        lambda m: m.array([1e-8, 3e-8], m.float16) * 1,
    ]
    for program in programs:
        ours, theirs = program(mx), program(real_mx)
        assert ours.tolist() == theirs.tolist()
        assert name_of(ours.dtype) == name_of(theirs.dtype)


BOUNDARY = [0.0, -0.0, 1.0, -1.0, 0.1, 65504.0, 65519.99, 65520.0, 1e-8, 6e-5, 3e38, 3.4e38,
            3.5e38, 1e-40, 1e-46, 1 + 2**-8, 1 + 3 * 2**-9, math.inf, -math.inf, math.nan]


@needs_mlx
@pytest.mark.parametrize("n", ["float16", "bfloat16", "float32", "float64"])
def test_python_floats_are_stored_as_mlx_stores_them(n):
    ours = mx.array(BOUNDARY, getattr(mx, n)).tolist()
    theirs = real_mx.array(BOUNDARY, getattr(real_mx, n)).tolist()
    assert all(same_value(a, b) for a, b in zip(ours, theirs)), list(zip(BOUNDARY, ours, theirs))


@needs_mlx
@pytest.mark.parametrize("n", [n for n in NAMES if "int" in n])
def test_python_ints_are_stored_as_mlx_stores_them(n):
    values = [0, 1, -1, 127, 128, 255, 256, -129, 32767, 65535, 65536, 2**31 - 1, 2**31,
              -(2**31) - 1, 2**32 + 5, 2**63 - 1, -(2**63)]
    for v in values:
        # A scalar wraps; a list element first goes through a C type whose
        # range MLX checks (std::bad_cast), which mlxref says in words.
        assert mx.array(v, getattr(mx, n)).item() == real_mx.array(v, getattr(real_mx, n)).item()
        try:
            want = real_mx.array([0, v], getattr(real_mx, n)).tolist()
        except RuntimeError:
            with pytest.raises(RuntimeError, match="does not fit in"):
                mx.array([0, v], getattr(mx, n))
        else:
            assert mx.array([0, v], getattr(mx, n)).tolist() == want


@needs_mlx
def test_python_ints_that_do_not_fit_raise():
    for program in [lambda m: m.array(1, m.int32) + 2**40,
                    lambda m: m.array(1, m.int8) + 300,
                    lambda m: m.array(1, m.uint8) + (-1),
                    lambda m: m.full((2,), 300, dtype=m.uint8)]:
        with pytest.raises(ValueError) as theirs:
            program(real_mx)
        with pytest.raises(ValueError) as ours:
            program(mx)
        assert str(ours.value) == str(theirs.value)
    # Beyond int64 MLX raises an unhelpful RuntimeError (std::bad_cast); so does
    # mlxref, saying what is wrong.
    for program in [lambda m: m.array(2**70), lambda m: m.array([1, 2**63]),
                    lambda m: m.array(1.0) + 2**70]:
        with pytest.raises(RuntimeError):
            program(real_mx)
        with pytest.raises(RuntimeError, match="does not fit in int64"):
            program(mx)


def test_a_symbolic_element_is_never_rounded():
    import sympy

    x = sympy.Symbol("x")
    third = sympy.Rational(1, 3)
    got = mx.sin(mx.array([x, third])).tolist()
    assert got == [sympy.sin(x), sympy.sin(third)]
    assert dtypes.float32.store([third, 0.1])[0] is third


def test_stored_elements_have_the_dtypes_python_type():
    want = {"b": bool, "u": int, "i": int, "f": float, "V": float, "c": complex}
    for n in NAMES:
        d = getattr(mx, n)
        a = mx.array([1, 0, 1], mx.int32).astype(d) + mx.array([0, 0, 1], mx.int32).astype(d)
        assert {type(v) for v in a.tolist()} == {want[d.kind]}, n


# --- complex64 meets the other dtypes ----------------------------------------------


def test_promotion_with_complex64():
    z = mx.array([1j])
    for dtype in (mx.bool_, mx.uint8, mx.int32, mx.int64, mx.float16, mx.bfloat16,
                  mx.float32, mx.float64):
        assert (mx.array([1], dtype) + z).dtype is mx.complex64
        assert (mx.array([1], dtype) * 1j).dtype is mx.complex64
    assert (z + 2.5).dtype is mx.complex64 and (2 * z).dtype is mx.complex64
    assert mx.divide(mx.array([1, 2]), z).dtype is mx.complex64
    assert (mx.array([[1j]]) @ mx.array([[2]])).tolist() == [[2j]]


# === casts: astype between the fourteen dtypes ===================================

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


def _differences(values, ours, theirs):
    return [(v, a, b) for v, a, b in zip(values, ours, theirs) if not same_value(a, b)]


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


# --- Python ints that do not fit ---------------------------------------------------------


@pytest.fixture(params=[pytest.param("mlxref"), pytest.param("mlx", marks=needs_mlx)])
def m(request):
    """The library under test: mlxref, then real MLX."""
    return mx if request.param == "mlxref" else real_mx


def test_python_ints_meeting_arrays(m):
    assert dtype_name(m.array([0], m.uint8) - 1) == "uint8"
    assert (m.array([0], m.uint8) - 1).tolist() == [wrap(-1, "uint8")]
    assert (m.array([1], m.uint8) + 255).tolist() == [wrap(256, "uint8")]
    for case, value, name in [(lambda: m.array([1]) + 2**40, 2**40, "int32"),
                              (lambda: m.array([1]) + 2**31, 2**31, "int32"),
                              (lambda: m.array([1], m.uint8) + 256, 256, "uint8"),
                              (lambda: m.array([1], m.uint8) * -1, -1, "uint8"),
                              (lambda: m.array([1], m.int8) + 200, 200, "int8"),
                              (lambda: m.array([1], m.uint32) == -1, -1, "uint32"),
                              (lambda: m.full((2,), 300, m.uint8), 300, "uint8"),
                              (lambda: m.full((2,), -1, m.uint32), -1, "uint32")]:
        with pytest.raises(ValueError, match=re.escape(
                f"Converting {value} to {name} would result in overflow.")):
            case()
    # MLX checks only the integer types narrower than 64 bits, so next to a
    # uint64 (or int64, or bool) array a Python int wraps.
    assert (m.array([1], m.uint64) + -1).tolist() == [0]
    assert (m.array([3], m.uint64) * -1).tolist() == [wrap(-3, "uint64")]
    assert m.full((2,), -1, m.uint64).tolist() == [wrap(-1, "uint64")] * 2
    bool_sum = m.array([True]) + 2**40
    assert dtype_name(bool_sum) == "int32" and bool_sum.tolist() == [1 + wrap(2**40, "int32")]
    assert (m.array([1], m.int64) + 2**62).tolist() == [1 + 2**62]
    # Python ints alone are int32, or int64 when they do not fit
    both = m.add(2**31, 1)
    assert dtype_name(both) == "int64" and both.item() == 2**31 + 1
    assert m.add(2**31 - 1, 1).item() == wrap(2**31, "int32")
    # a float16 array takes a big int as infinity
    assert (m.array([1], m.float16) + 2**40).tolist() == [math.inf]
    assert m.full((1,), -(2**40), m.float16).tolist() == [-math.inf]


def test_python_ints_building_arrays(m):
    assert m.array(300, m.uint8).item() == wrap(300, "uint8")  # a scalar wraps
    assert m.array(-1, m.uint32).item() == wrap(-1, "uint32")
    assert m.array([300, -1], m.uint8).tolist() == [wrap(300, "uint8"), wrap(-1, "uint8")]
    assert m.array([70000], m.int16).tolist() == [wrap(70000, "int16")]
    assert dtype_name(m.array([1, 2**40])) == "int64"
    assert dtype_name(m.array(2**31)) == "int64"
    assert m.array([2, 0, -1], m.bool_).tolist() == [True, False, True]
    assert m.array(70000, m.float16).item() == math.inf
    assert m.array([1, 2**40], m.float16).tolist() == [1.0, math.inf]


@pytest.mark.parametrize("case", [
    lambda m: m.array(2**70),
    lambda m: m.array(2**63),
    lambda m: m.array([1], m.int64) + 2**63,
    lambda m: m.array([1.0]) + 2**70,
    lambda m: m.array([-1], m.uint32),  # a list's ints go through uint32 for uint32
    lambda m: m.array([1, 2**32], m.uint32),
    lambda m: m.array([-1], m.uint64),
    lambda m: m.array([2**31], m.int8),  # ... and through a 32-bit int for int8
    lambda m: m.array([True, -(2**31) - 1], m.uint16),
    lambda m: m.array([2**40], m.bool_),
])
def test_python_ints_mlx_cannot_convert(m, case):
    # MLX raises std::bad_cast; mlxref says which int did not fit.
    with pytest.raises(RuntimeError, match="std::bad_cast" if m is real_mx else "does not fit"):
        case(m)
