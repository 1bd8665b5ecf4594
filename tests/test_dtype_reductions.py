"""Reductions, scans, softmax, logsumexp, matmul and scatter-add, dtype by dtype.

What MLX's CPU build stores: the result dtypes of sum and prod (integers widen
to 32 bits), the accumulators (float32 for the sums, products and matrix
products of float32, float16 and bfloat16; the dtype itself for a cumsum, a
scatter-add and a half-precision softmax), overflow to inf and wrap-around on
the way, nan and signed zeros. The rule tests run the same assertions on
mlxref and, when it is installed, on real MLX, with expected values worked out
here from the inputs (``_f32``, ``_f16``, ``_bf16`` round as C does). The last
tests compare mlxref with MLX over every dtype at its boundary values.
"""

import itertools
import math
import random
import struct

import pytest
from support import needs_mlx, real_mx

import mlxref.core as mx

LIBS = [mx] + ([real_mx] if real_mx is not None else [])
inf, nan = math.inf, math.nan


def lib_id(lib):
    return "mlxref" if lib is mx else "mlx"


each_lib = pytest.mark.parametrize("m", LIBS, ids=lib_id)


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


def _same(a, b):
    """Equal as stored values: nan equals nan, and 0.0 is not -0.0."""
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if a != a or b != b:
            return a != a and b != b
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def _flat(x):
    return [v for item in x for v in _flat(item)] if isinstance(x, list) else [x]


def assert_values(got, want):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want) and all(map(_same, got, want)), f"got {got}, want {want}"


def dtype_name(a):
    return str(a.dtype).split(".")[-1]


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


# --- matmul ------------------------------------------------------------------------------


@each_lib
@pytest.mark.parametrize("name", ["int32", "uint8", "bool_"])
def test_integer_matmul_is_refused(m, name):
    a = m.array([[1, 2], [3, 4]], getattr(m, name))
    with pytest.raises(ValueError, match=r"\[matmul\] Only inexact types are supported"):
        m.matmul(a, a)


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
    if _same(got, want):
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
    got, want = _flat(ours[1]), _flat(theirs[1])
    assert len(got) == len(want)
    if name == "uint32" and op == "softmax0":
        # MLX subtracts the max in uint32 over a leading axis, which wraps
        # around (documented): nan cast to uint32 where mlxref gives 0.
        return
    loose = _last_bits_allowed(op, name)
    for i, (g, w) in enumerate(zip(got, want)):
        ok = _close_as_stored(g, w) if loose else _same(g, w)
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
        want = _flat(theirs.tolist())
        exact = _flat(RANDOM_OPS[op](real_mx, a.astype(real_mx.float64)).tolist())
    ours = RANDOM_OPS[op](mx, mx.array(data, getattr(mx, name)))
    assert dtype_name(ours) == dtype_name(theirs)
    got = _flat(ours.tolist())
    if name == "float32" and op.split()[0] in FLOAT32_SUM_OPS:
        # Rounded once from double: never further from the exact value than
        # MLX's float32 accumulation, give or take one float32 ulp.
        for g, w, e in zip(got, want, exact):
            assert abs(g - e) <= abs(w - e) + abs(e) * 2.0**-23, (g, w, e)
    else:
        assert_values(got, want)
