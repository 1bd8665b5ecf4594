"""Elementwise ops at each dtype's boundary values, against real MLX.

Every unary and binary op runs on the same inputs in mlxref and in MLX, for
float16, bfloat16, float32 and float64, and for the integer and bool dtypes
where the op is not integer arithmetic (exp of an int array is float32;
comparisons, maximum and minimum stay integers). The inputs are zeros of both
signs, ±1, halves, each type's max, smallest normal and smallest subnormal,
±inf, nan, the edges where exp overflows and underflows (±88 in float32, ±11
in float16) and a fixed random sample.

Results must be identical, nan for nan and zeros of one sign, except for the
transcendental functions: MLX calls the C library's float functions (or its
own polynomials) where mlxref rounds the double result once, so those may
differ by the ulps in ``ULPS``. The named tests below spell out the cases the
comparison covers (signed zeros, nan, exp's clamps) on both libraries, with
the expected values computed from the inputs.
"""

import itertools
import math
import random
import struct
from fractions import Fraction

import pytest

import mlxref.core as mx

from support import FLOAT_FORMATS, nearest, needs_mlx, real_mx

LIBS = [mx] + ([real_mx] if real_mx is not None else [])
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTEGERS = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]
inf, nan = math.inf, math.nan

UNARY = (
    "abs negative sign square sqrt rsqrt reciprocal exp expm1 log log2 log10 log1p sin cos "
    "tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh sigmoid erf erfinv "
    "floor ceil round logical_not"
).split()
BINARY = (
    "add subtract multiply divide floor_divide remainder power maximum minimum arctan2 "
    "logaddexp equal not_equal less less_equal greater greater_equal logical_and logical_or"
).split()
INTEGER_ARITHMETIC = {"abs", "negative", "square", "add", "subtract", "multiply",
                      "floor_divide", "remainder", "power"}  # tested elsewhere for ints

# How many ulps of the dtype a transcendental function may differ by from
# MLX's (float32; float16, bfloat16 and float64 match to one ulp). Each is the
# C library's float function (tanhf, log10f...) against the correctly rounded
# result; sigmoid is MLX's exp to within an ulp (``unary.exp_float32``).
TRANSCENDENTAL = set(
    "exp expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh "
    "arccosh arctanh sigmoid erf erfinv arctan2 power logaddexp".split()
)
ULPS = {"log10": 2, "tanh": 2, "sinh": 2, "cosh": 2, "arccosh": 2, "arctanh": 2,
        "erfinv": 2, "sigmoid": 2}
# MLX's float64 exp, sin, cos, erf, erfinv, sigmoid and logaddexp run its
# float32 kernels (mlx/backend/cpu/simd/math.h); mlxref keeps float64 exact.
# test_mlx_runs_some_float64_ops_in_float32 shows the difference.
FLOAT64_IN_FLOAT32 = {"exp", "sin", "cos", "erf", "erfinv", "sigmoid", "logaddexp"}

def _order(name, v):
    """The float ``v``'s place among the values of dtype ``name`` (an integer)."""
    if name == "float64":
        bits, width = struct.unpack("<q", struct.pack("<d", v))[0], 64
    elif name == "float16":
        bits, width = struct.unpack("<h", struct.pack("<e", v))[0], 16
    else:
        bits, width = struct.unpack("<i", struct.pack("<f", v))[0], 32
        if name == "bfloat16":
            bits, width = bits >> 16, 16
    return bits if bits >= 0 else -(1 << (width - 1)) - bits


def _ulps(name, x, y):
    """How far apart two results of dtype ``name`` are: 0 when stored alike."""
    if type(x) is not float or type(y) is not float:
        return 0 if (x, type(x)) == (y, type(y)) else inf
    if x != x or y != y:
        return 0 if x != x and y != y else inf
    if x == y:
        return 0 if math.copysign(1, x) == math.copysign(1, y) else inf
    if math.isinf(x) or math.isinf(y):
        return inf
    return abs(_order(name, x) - _order(name, y))


def _limits(name):
    info = mx.finfo(getattr(mx, name))
    bits = FLOAT_FORMATS[name][0]
    subnormal = info.smallest_normal * 2.0 ** (1 - bits)
    return [info.max, -info.max, info.smallest_normal, -info.smallest_normal, subnormal,
            -subnormal, info.smallest_normal / 2, 1 + info.eps, 1 - info.eps / 2]


BOUNDARY = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0, -2.0, 3.0, 0.1, -0.1, 1e-5,
    -1e-5, 0.75, -0.75, 10.0, -10.0, 88.0, -88.0, 88.7, 88.73, 89.0, -87.3, -87.7, -88.5,
    -89.0, -103.0, -104.0, 11.0, 11.1, -11.0, -11.1, -17.0, -10.4, 10.4, 710.0, -710.0, -745.2,
    -746.0, 1e10, -1e10, 1e30, 0.9999, -0.9999, 1.0001, 30.0, -30.0, 9.0, -9.0, 15.0, 20.0,
    -20.0, 3.14159, 1e-20, 5e-8, 1e-3, -1e-3, 100.0, 1e5, -1e5, 65504.0, 7.0, -7.0,
    inf, -inf, nan,
]
_rng = random.Random(12)
SAMPLE = [_rng.choice((-1, 1)) * 10 ** _rng.uniform(-6, 2) for _ in range(120)]


def _inputs(name):
    return BOUNDARY + _limits(name) + SAMPLE


def _build(lib, name, values):
    """Float values rounded to ``name`` the same way on both libraries (MLX's
    own cast from float64), or integers as they are."""
    if name == "uint64":
        return lib.array([v - 2**64 if v >= 2**63 else v for v in values], dtype=lib.int64).astype(
            lib.uint64)
    if name in INTEGERS:
        return lib.array(values, dtype=getattr(lib, name))
    return (real_mx.array(values, dtype=real_mx.float64).astype(getattr(real_mx, name))
            if lib is real_mx else lib.array(values, dtype=lib.float64).astype(getattr(lib, name)))


def _run(lib, op, *arrays):
    try:
        return getattr(lib, op)(*arrays)
    except (ValueError, TypeError, RuntimeError):
        return None


def _compare(op, name, inputs, ours, theirs, tolerance=None):
    """The inputs where mlxref's result is further from MLX's than allowed."""
    if theirs is None:
        assert ours is None, f"MLX refuses {op} on {name}; mlxref gives {ours}"
        return []
    assert ours is not None, f"mlxref refuses {op} on {name}"
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1], (ours.dtype, theirs.dtype)
    out = ours.dtype.name if ours.dtype.is_float else name
    if tolerance is None:
        tolerance = ULPS.get(op, 1) if op in TRANSCENDENTAL else 0
    bad = []
    for x, a, b in zip(inputs, ours.tolist(), theirs.tolist()):
        if op == "logaddexp" and _ulps(out, a, b) not in (0, inf):
            # hi + log1p(...) cancels near hi = -log(2): an ulp of log1pf's
            # result, at the size of the inputs, is the difference allowed.
            scale = max(abs(x[0]), abs(x[1]), 1.0)
            if abs(a - b) <= math.ldexp(scale, 1 - FLOAT_FORMATS[out][0]):
                continue
        if _ulps(out, a, b) > tolerance:
            bad.append((x, a, b))
    return bad


# --- everything against MLX -------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("name", FLOATS)
def test_unary_ops_on_floats_match_mlx(name):
    values = _inputs(name)
    ours, theirs = _build(mx, name, values), _build(real_mx, name, values)
    inputs = theirs.tolist()
    assert [_ulps(name, a, b) for a, b in zip(ours.tolist(), inputs)] == [0] * len(values)
    failures = {}
    for op in UNARY:
        if name == "float64" and op in FLOAT64_IN_FLOAT32:
            continue
        bad = _compare(op, name, inputs, _run(mx, op, ours), _run(real_mx, op, theirs))
        if bad:
            failures[op] = bad[:4]
    assert failures == {}, f"{name}: (input, mlxref, MLX) {failures}"


@needs_mlx
@pytest.mark.parametrize("name", FLOATS)
def test_binary_ops_on_floats_match_mlx(name):
    values = BOUNDARY + _limits(name)
    pairs = list(itertools.product(values, values)) + list(zip(SAMPLE, reversed(SAMPLE)))
    a_values, b_values = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = _build(mx, name, a_values), _build(mx, name, b_values)
    theirs = _build(real_mx, name, a_values), _build(real_mx, name, b_values)
    inputs = list(zip(theirs[0].tolist(), theirs[1].tolist()))
    failures = {}
    for op in BINARY:
        if name == "float64" and op in FLOAT64_IN_FLOAT32:
            continue
        bad = _compare(op, name, inputs, _run(mx, op, *ours), _run(real_mx, op, *theirs))
        if bad:
            failures[op] = bad[:4]
    assert failures == {}, f"{name}: ((a, b), mlxref, MLX) {failures}"


def _integer_inputs(name):
    if name == "bool_":
        return [False, True]
    info = mx.iinfo(getattr(mx, name))
    candidates = [0, 1, 2, 3, 7, 100, 127, 255, 1000, 65504, 65519, 65520, 2**24 + 1,
                  2**31 - 1, 2**53 + 1, 2**63 - 1, -1, -2, -128, -(2**31), -(2**63),
                  info.max, info.min, info.max - 1, info.min + 1]
    return sorted({v for v in candidates if info.min <= v <= info.max})


@needs_mlx
@pytest.mark.parametrize("name", INTEGERS)
def test_ops_on_integers_and_bools_match_mlx(name):
    values = _integer_inputs(name)
    pairs = list(itertools.product(values, values))
    a_values, b_values = [p[0] for p in pairs], [p[1] for p in pairs]
    failures = {}
    for op in UNARY:
        if op in INTEGER_ARITHMETIC:
            continue
        ours, theirs = _run(mx, op, _build(mx, name, values)), _run(real_mx, op, _build(real_mx, name, values))
        bad = _compare(op, name, values, ours, theirs)
        if bad:
            failures[op] = bad[:4]
    for op in BINARY:
        if op in INTEGER_ARITHMETIC:
            continue
        ours = _run(mx, op, _build(mx, name, a_values), _build(mx, name, b_values))
        theirs = _run(real_mx, op, _build(real_mx, name, a_values), _build(real_mx, name, b_values))
        bad = _compare(op, name, pairs, ours, theirs)
        if bad:
            failures[op] = bad[:4]
    assert failures == {}, f"{name}: (input, mlxref, MLX) {failures}"


@needs_mlx
def test_mlx_runs_some_float64_ops_in_float32():
    # MLX's float64 exp, sin, cos, erf and erfinv are its float32 kernels,
    # widened; mlxref gives the double result (math's), a documented difference.
    values = [0.1, 0.7, -1.3, 2.9, 88.5, -88.5, 1e30, 0.9999999999999999]
    x64 = real_mx.array(values, dtype=real_mx.float64)
    ours = mx.array(values, dtype=mx.float64)
    for op, exact in [("exp", math.exp), ("sin", math.sin), ("cos", math.cos), ("erf", math.erf)]:
        mlx64 = getattr(real_mx, op)(x64).tolist()
        mlx32 = getattr(real_mx, op)(x64.astype(real_mx.float32)).tolist()
        assert mlx64 == mlx32, op
        want = [exact(v) if op != "exp" or v < 709 else inf for v in values]
        assert getattr(mx, op)(ours).tolist() == want, op
    assert real_mx.erfinv(x64).tolist()[-1] == inf  # 0.9999999999999999 is 1.0 in float32
    assert math.isfinite(mx.erfinv(ours).tolist()[-1])


# --- the cases the issue names, on both libraries ----------------------------------------


def _signs(values):
    return [(v, math.copysign(1.0, v)) if v == v else "nan" for v in values]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", FLOATS)
def test_signed_zeros(lib, name):
    dt = getattr(lib, name)

    def a(*values):
        return lib.array(list(values), dtype=dt)

    def check(result, want):
        assert _signs(result.tolist()) == _signs(want)

    check(lib.power(a(-0.0, 0.0, -0.0, -0.0), a(-1.0, -1.0, -2.0, 3.0)), [-inf, inf, inf, -0.0])
    check(lib.negative(a(0.0, -0.0)), [-0.0, 0.0])
    check(lib.multiply(a(-0.0, 0.0), a(1.0, -1.0)), [-0.0, -0.0])
    check(lib.sqrt(a(-0.0, 0.0)), [-0.0, 0.0])
    check(lib.abs(a(-0.0)), [0.0])
    check(lib.rsqrt(a(-0.0, 0.0)), [-inf, inf])
    check(lib.divide(a(1.0, -1.0), a(-0.0, -0.0)), [-inf, inf])
    check(lib.floor(a(-0.0, -0.5)), [-0.0, -1.0])
    check(lib.ceil(a(-0.5, -0.0)), [-0.0, -0.0])
    check(lib.round(a(-0.5, -0.4, 0.5, -2.5)), [-0.0, -0.0, 0.0, -2.0])
    # remainder: the sign of b, but a zero keeps a's sign (C's remainder).
    x, y = [0.0, -0.0, -3.0, 3.0, 5.0, -5.0, 5.5, -5.5], [-1.0, 1.0, 3.0, -3.0, -3.0, 3.0, 2.0, -2.0]
    want = []
    for u, v in zip(x, y):
        r = u - v * math.floor(u / v)
        want.append(math.copysign(0.0, u) if r == 0 else r)
    check(lib.remainder(a(*x), a(*y)), want)
    # floor_divide of floats is floor(divide): the quotient is rounded to the
    # dtype first, so float16's 1e-5 // -60000 is -0.0 (the quotient underflows).
    x, y = [-0.0, nearest(1e-5, name), 7.0], [1.0, -60000.0, -2.0]
    quotients = [nearest(Fraction(u) / Fraction(v), name) if u else -0.0 for u, v in zip(x, y)]
    check(lib.floor_divide(a(*x), a(*y)), [float(math.floor(q)) if q else q for q in quotients])
    # maximum and minimum: a tie gives b (MLX's (a > b) ? a : b).
    check(lib.maximum(a(0.0, -0.0), a(-0.0, 0.0)), [-0.0, 0.0])
    check(lib.minimum(a(0.0, -0.0), a(-0.0, 0.0)), [-0.0, 0.0])
    # MLX's sin takes its sign from x < 0: sin(-0.0) is 0.0.
    check(lib.sin(a(-0.0, 0.0)), [0.0, 0.0])


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", FLOATS)
def test_nan_propagates(lib, name):
    dt = getattr(lib, name)
    x = lib.array([nan, 1.0, nan, -inf], dtype=dt)
    y = lib.array([1.0, nan, nan, nan], dtype=dt)
    for op in ("maximum", "minimum", "add", "arctan2", "logaddexp", "remainder"):
        assert all(v != v for v in getattr(lib, op)(x, y).tolist()), op
    # C's pow: 1 ** nan and nan ** 0 are 1.
    assert lib.power(lib.array([1.0, nan, nan], dtype=dt), lib.array([nan, 0.0, 1.0], dtype=dt)
                     ).tolist()[:2] == [1.0, 1.0]
    assert lib.equal(x, y).tolist() == [False] * 4
    assert lib.not_equal(x, y).tolist() == [True] * 4
    for op in ("less", "less_equal", "greater", "greater_equal"):
        assert getattr(lib, op)(x, y).tolist() == [False] * 4, op
    assert lib.sign(lib.array([nan], dtype=dt)).tolist() == [0.0]
    for op in ("floor", "ceil", "round", "sqrt", "exp", "sigmoid", "erf", "tanh"):
        assert getattr(lib, op)(lib.array([nan], dtype=dt)).tolist()[0] != 0.0, op
    assert math.isnan(lib.clip(lib.array([nan], dtype=dt), 0.0, 1.0).item())


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_float32_exp_overflows_at_88_and_underflows_early(lib):
    x = lib.array([88.0, 88.5, 88.7, 89.0, -87.3, -87.6, -87.7, -88.0, -88.5, -104.0])
    got = lib.exp(x).tolist()
    # Above 88 MLX gives inf although exp(88.5) < float32's max; below about
    # -87.68 (2**y with y < -126.5) it gives 0, where exp has subnormals.
    assert got[0] == pytest.approx(math.exp(88.0), rel=1e-5) and got[1:4] == [inf] * 3
    assert 0 < got[4] and 0 < got[5] and got[6:] == [0.0] * 4
    assert math.exp(-88.5) > 2.0**-149 and math.exp(88.5) < 3.4e38  # truth differs
    # sigmoid and logaddexp use that exp.
    assert lib.sigmoid(lib.array([-88.5])).item() == 0.0
    assert lib.logaddexp(lib.array([0.0]), lib.array([-88.5])).item() == 0.0


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_float16_sigmoid_and_exp_round_exp_to_float16(lib):
    x = lib.array([-11.0, -11.1, -12.0, 11.1, 12.0], dtype=lib.float16)
    assert lib.exp(x).tolist()[3:] == [inf, inf]  # exp(11.1) > 65504
    s = lib.sigmoid(x).tolist()
    # 1 / (1 + exp(|x|)) with exp rounded to float16: 0 once exp overflows.
    assert s[0] > 0 and s[1:3] == [0.0, 0.0] and s[3:] == [1.0, 1.0]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_erf_near_zero_is_mlx_polynomial(lib):
    # MLX's erf is 1 - t * poly(t) * exp(-x**2) in float32: near 0 it cancels,
    # erf(1e-7) is 0.0 and erf(-1e-7) is -0.0, where the truth is 1.13e-7.
    got = lib.erf(lib.array([1e-7, -1e-7, 0.5])).tolist()
    assert _signs(got[:2]) == _signs([0.0, -0.0])
    assert got[2] == pytest.approx(math.erf(0.5), rel=1e-6)


def _f16_grid():
    rng = random.Random(3)
    values = [rng.choice((-1, 1)) * 2.0 ** rng.uniform(-24, 15.9) for _ in range(300)]
    return [nearest(v, "float16") for v in values] + [65504.0, 2.0**-24, 1.0, 3.0]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_precision_arithmetic_is_float32_arithmetic_rounded(lib, name):
    # MLX computes float16 and bfloat16 in float32 and rounds; mlxref in double
    # and rounds through float32: the same, since a float32 result of two
    # halves rounds once more (+ - * are exact in double, / and sqrt round
    # twice harmlessly, 53 >= 2 * 24 + 2).
    values = [nearest(v, name) for v in _f16_grid()]
    a, b = values, values[1:] + values[:1]
    x, y = lib.array(a, dtype=getattr(lib, name)), lib.array(b, dtype=getattr(lib, name))

    def expect(exact):
        return [nearest(nearest(v, "float32"), name) for v in exact]

    fa, fb = [Fraction(v) for v in a], [Fraction(v) for v in b]
    assert lib.add(x, y).tolist() == expect([u + v for u, v in zip(fa, fb)])
    assert lib.subtract(x, y).tolist() == expect([u - v for u, v in zip(fa, fb)])
    assert lib.multiply(x, y).tolist() == expect([u * v for u, v in zip(fa, fb)])
    assert lib.divide(x, y).tolist() == expect([u / v for u, v in zip(fa, fb)])
    # sqrt to 100 bits past the point (math.isqrt), then rounded.
    roots = [Fraction(math.isqrt(int(abs(u) * 4**100)), 2**100) for u in fa]
    assert lib.sqrt(lib.abs(x)).tolist() == expect(roots)
