"""Integers as MLX computes them: wrapping, power, division, bitwise ops, argmax.

Every test that takes ``m`` runs its assertions twice: on mlxref and, when it
is installed, on MLX itself. Expected values come from the inputs, through
``wrap`` (C's two's-complement store) and Python's unbounded ints. Where MLX
kills the process (SIGFPE) or gives a layout-dependent result, the MLX side
runs in a subprocess or documents both of its answers, and mlxref raises.
"""

import array as pyarray
import itertools
import math
import operator
import re
import signal
import subprocess
import sys
import time

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
WIDE_SIGNED = ["int32", "int64"]  # divided by the processor's 32- or 64-bit division


@pytest.fixture(params=[pytest.param("mlxref"), pytest.param("mlx", marks=needs_mlx)])
def m(request):
    """The library under test: mlxref, then real MLX."""
    return mx if request.param == "mlxref" else real_mx


# --- values and what a C integer stores ---------------------------------------------------


def bits(name):
    return int(name.lstrip("uint"))


def unsigned(name):
    return name.startswith("u")


def limits(name):
    b = bits(name)
    return (0, 2**b - 1) if unsigned(name) else (-(2 ** (b - 1)), 2 ** (b - 1) - 1)


def wrap(v, name):
    """``v`` as the dtype ``name`` stores it: modulo 2**bits, two's complement."""
    if name == "bool_":
        return bool(v)
    b = bits(name)
    v &= (1 << b) - 1
    return v - (1 << b) if not unsigned(name) and v >= 1 << (b - 1) else v


def edges(name):
    """The boundary values of a dtype: its limits, around them, and around 0."""
    if name == "bool_":
        return [False, True]
    lo, hi = limits(name)
    return sorted(v for v in {lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi} if lo <= v <= hi)


def make(m, values, name):
    """An array of ``values`` as dtype ``name``, built through int64 (MLX takes
    no Python int above 2**63 - 1, so uint64's top half comes in negative)."""
    if name == "bool_":
        return m.array(values, m.bool_)
    return m.array([v - 2**64 if v >= 2**63 else v for v in values], m.int64).astype(
        getattr(m, name)
    )


def dtype_name(a):
    return str(a.dtype).split(".")[-1]


def grid(name):
    """Every pair of boundary values: two equal-length lists."""
    pairs = list(itertools.product(edges(name), repeat=2))
    return [p[0] for p in pairs], [p[1] for p in pairs]


def f32(v):
    return pyarray.array("f", [v])[0]


def same_floats(got, want):
    return all((g != g and w != w) or g == w for g, w in zip(got, want)) and len(got) == len(want)


# --- add, subtract, multiply, negative, abs, square, sign: they wrap -----------------------

UNARY = {
    "negative": operator.neg,
    "abs": abs,
    "square": lambda x: x * x,
    "sign": lambda x: (x > 0) - (x < 0),
}
BINARY = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "maximum": max,
    "minimum": min,
}


@pytest.mark.parametrize("name", INTS)
def test_unary_ops_wrap_at_the_boundaries(m, name):
    # abs(INT_MIN) is INT_MIN; negative and abs of unsigned values are
    # computed modulo 2**bits (-1 as uint8 is 255) and abs is the identity.
    x = make(m, edges(name), name)
    for op, f in UNARY.items():
        got = getattr(m, op)(x)
        assert dtype_name(got) == name, op
        assert got.tolist() == [wrap(f(v), name) for v in edges(name)], op


@pytest.mark.parametrize("name", INTS)
def test_binary_ops_wrap_at_the_boundaries(m, name):
    xs, ys = grid(name)
    a, b = make(m, xs, name), make(m, ys, name)
    for op, f in BINARY.items():
        got = getattr(m, op)(a, b)
        assert dtype_name(got) == name, op
        assert got.tolist() == [wrap(f(x, y), name) for x, y in zip(xs, ys)], op


def _accumulator(name):
    """MLX's sum and prod dtype: the integers narrower than 64 bits become
    int32 or uint32; bool counts as int32."""
    if name == "bool_":
        return "int32"
    if bits(name) == 64:
        return name
    return "uint32" if unsigned(name) else "int32"


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_reductions_accumulate_and_wrap_as_mlx(m, name):
    vals = edges(name)
    nonzero = [v for v in vals if v] * 3  # a product worth wrapping
    x, nz = make(m, vals, name), make(m, nonzero, name)
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


# --- power: modular, whatever the exponent ------------------------------------------------


@pytest.mark.parametrize("name", INTS)
def test_integer_power_is_repeated_squaring_in_the_type(m, name):
    # MLX squares and multiplies in the type itself: the result is a ** e
    # modulo 2**bits, and a negative exponent of a signed type gives 0.
    bases, exps = grid(name)
    got = m.power(make(m, bases, name), make(m, exps, name))
    assert dtype_name(got) == name
    assert got.tolist() == [
        0 if e < 0 else wrap(pow(a, e, 2 ** bits(name)), name) for a, e in zip(bases, exps)
    ]


def test_negative_integer_exponents_give_zero_even_for_one(m):
    got = m.power(m.array([2, 1, -1, 0, -1]), m.array([-1, -1, -3, -1, -2]))
    assert got.tolist() == [0, 0, 0, 0, 0]
    assert (m.array([2, 3]) ** -1).tolist() == [0, 0]


def test_the_largest_int32_power_is_instant(m):
    big = 2**31 - 1
    start = time.perf_counter()
    got = m.power(m.array(big), m.array(big)).item()
    assert time.perf_counter() - start < 2.0  # a 2**31-bit intermediate would never finish
    assert got == wrap(pow(big, big, 2**32), "int32")


def test_bool_power_and_mixed_power(m):
    t, f = True, False
    got = m.power(m.array([t, f, t, f]), m.array([t, t, f, f]))
    assert dtype_name(got) == "bool" and got.tolist() == [t**t, f**t, t**f, f**f] == [1, 0, 1, 1]
    # uint8 meets int8 in int16, where -1 is a negative exponent.
    mixed = m.power(m.array([2], m.uint8), m.array([-1], m.int8))
    assert dtype_name(mixed) == "int16" and mixed.tolist() == [0]
    assert dtype_name(m.array([2, 3]) ** 2.0) == "float32"


# --- division: floor_divide, remainder, divide --------------------------------------------


def _division_grid(name):
    xs, ys = grid(name)
    if name in WIDE_SIGNED:  # INT_MIN // -1 kills MLX: see the tests below
        lo = limits(name)[0]
        keep = [(x, y) for x, y in zip(xs, ys) if not (x == lo and y == -1)]
        xs, ys = [k[0] for k in keep], [k[1] for k in keep]
    return xs, ys


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_floor_divide_and_remainder_floor_and_survive_a_zero_divisor(m, name):
    # Python's floored // and %, wrapped; a zero divisor gives x // 0 == 0 and
    # x % 0 == x (MLX 0.32.4's CPU kernel), and the narrow types' INT_MIN // -1 wraps.
    xs, ys = _division_grid(name)
    a, b = make(m, xs, name), make(m, ys, name)
    quotient = [wrap(x // y, name) if y else wrap(0, name) for x, y in zip(xs, ys)]
    remainder = [wrap(x % y, name) if y else x for x, y in zip(xs, ys)]
    for got, want in [(m.floor_divide(a, b), quotient), (a // b, quotient),
                      (m.remainder(a, b), remainder), (a % b, remainder)]:
        assert dtype_name(got) == ("bool" if name == "bool_" else name)
        assert got.tolist() == want


def test_division_by_a_scalar_zero_and_negative_divisors(m):
    a = m.array([-7, 7, 3])
    assert (a // 0).tolist() == [0, 0, 0] and (a % 0).tolist() == [-7, 7, 3]
    assert (a // -2).tolist() == [-7 // -2, 7 // -2, 3 // -2]
    assert (a % -2).tolist() == [-7 % -2, 7 % -2, 3 % -2]
    assert (7 // m.array([2, 0, -2])).tolist() == [7 // 2, 0, 7 // -2]


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_divide_of_integers_is_float32(m, name):
    xs, ys = grid(name)
    got = m.divide(make(m, xs, name), make(m, ys, name))
    assert dtype_name(got) == "float32"

    def want(x, y):
        if y:
            return f32(f32(x) / f32(y))
        return math.nan if x == 0 else math.copysign(math.inf, x)

    assert same_floats(got.tolist(), [want(x, y) for x, y in zip(xs, ys)])


def test_floor_divide_and_remainder_with_floats_and_mixed_types(m):
    assert (m.array([7, -7]) // 2.5).tolist() == [math.floor(7 / 2.5), math.floor(-7 / 2.5)]
    assert (m.array([7, -7]) % 2.5).tolist() == [7 % 2.5, -7 % 2.5]
    got = m.array([-7], m.int8) // m.array([2], m.uint8)  # they meet in int16
    assert dtype_name(got) == "int16" and got.tolist() == [-7 // 2]


@pytest.mark.parametrize("op, symbol", [("floor_divide", "//"), ("remainder", "%")])
@pytest.mark.parametrize("name", WIDE_SIGNED)
def test_int_min_divided_by_minus_one_raises(op, symbol, name):
    lo = limits(name)[0]
    a, b = make(mx, [5, lo], name), make(mx, [2, -1], name)
    message = (f"[{op}] Integer overflow: {lo} {symbol} -1 in {name} (the quotient {-lo} "
               "does not fit). MLX's CPU kernel stops the process with SIGFPE here.")
    with pytest.raises(OverflowError, match=re.escape(message)):
        getattr(mx, op)(a, b).tolist()


@needs_mlx
@pytest.mark.parametrize("op", ["floor_divide", "remainder"])
@pytest.mark.parametrize("name", WIDE_SIGNED)
def test_mlx_dies_of_sigfpe_on_int_min_divided_by_minus_one(op, name):
    lo = limits(name)[0]
    code = (f"import mlx.core as mx\n"
            f"a = mx.array([{lo}], mx.int64).astype(mx.{name})\n"
            f"mx.eval(mx.{op}(a, mx.array([-1], mx.{name})))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGFPE


# --- bitwise ops -----------------------------------------------------------------------------

LOGICAL = {"bitwise_and": operator.and_, "bitwise_or": operator.or_,
           "bitwise_xor": operator.xor}


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_and_or_xor_invert(m, name):
    xs, ys = grid(name)
    a, b = make(m, xs, name), make(m, ys, name)
    dtype = "bool" if name == "bool_" else name
    for op, f in LOGICAL.items():
        got = getattr(m, op)(a, b)
        assert dtype_name(got) == dtype
        assert got.tolist() == [wrap(f(x, y), name) for x, y in zip(xs, ys)], op
    inverted = m.bitwise_invert(make(m, edges(name), name))  # of a bool: logical not
    want = [not v if name == "bool_" else wrap(~v, name) for v in edges(name)]
    assert dtype_name(inverted) == dtype and inverted.tolist() == want


def _counts(name):
    """Shift counts C defines: 0 up to the width of the C type the value is
    shifted as (8- and 16-bit types are shifted as 32-bit ints)."""
    width = 64 if bits(name) == 64 else 32
    return sorted({0, 1, bits(name) - 1, bits(name), bits(name) + 1, width - 1} & set(range(width)))


@pytest.mark.parametrize("name", INTS)
def test_shifts_by_counts_c_defines(m, name):
    pairs = list(itertools.product(edges(name), _counts(name)))
    xs, cs = [p[0] for p in pairs], [p[1] for p in pairs]
    a, c = make(m, xs, name), make(m, cs, name)
    for op, f in [("left_shift", operator.lshift), ("right_shift", operator.rshift)]:
        got = getattr(m, op)(a, c)
        assert dtype_name(got) == name
        assert got.tolist() == [wrap(f(x, k), name) for x, k in zip(xs, cs)], op
    assert (a << c).tolist() == m.left_shift(a, c).tolist()
    assert (a >> c).tolist() == m.right_shift(a, c).tolist()


@pytest.mark.parametrize("op", ["left_shift", "right_shift"])
@pytest.mark.parametrize("name, count", [("int32", 40), ("int8", 32), ("uint32", 32),
                                         ("int64", 64), ("int16", -1), ("int32", -33)])
def test_shift_counts_cpp_leaves_undefined_raise(op, name, count):
    width = 64 if bits(name) == 64 else 32
    message = (f"[{op}] Shift count {count} is out of range for {name}: C++ defines shifts "
               f"by 0 to {width - 1} only, and MLX's CPU build gives different results for "
               "this count depending on the arrays' layout.")
    with pytest.raises(ValueError, match=re.escape(message)):
        getattr(mx, op)(make(mx, [1, 2], name), make(mx, [1, count], name)).tolist()


@needs_mlx
def test_mlx_shift_beyond_the_width_depends_on_the_layout():
    # Why mlxref raises: element by element x86's shl takes the count modulo
    # 32; where the compiler vectorised the loop (a long array shifted by one
    # count) the result is 0.
    one, forty = real_mx.array([1], real_mx.int32), real_mx.array([40], real_mx.int32)
    assert (one << forty).tolist() == [1 << (40 % 32)]
    assert (real_mx.array([1] * 64, real_mx.int32) << 40).tolist() == [0] * 64


def test_shifts_of_bools_are_uint8(m):
    b = m.array([True, False])
    for got in (m.left_shift(b, b), m.right_shift(b, m.array([False, False])), b << b):
        assert dtype_name(got) == "uint8"
    assert (b << b).tolist() == [2, 0]
    assert dtype_name(m.left_shift(True, False)) == "uint8"


def test_mlx_names_and_aliases(m):
    names = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "left_shift",
             "right_shift", "bitwise_left_shift", "bitwise_right_shift"]
    assert all(callable(getattr(m, n)) for n in names)
    x, c = m.array([3, -5]), m.array([2, 1])
    assert m.bitwise_left_shift(x, c).tolist() == m.left_shift(x, c).tolist() == [12, -10]
    assert m.bitwise_right_shift(x, c).tolist() == m.right_shift(x, c).tolist() == [0, -3]


@needs_mlx
def test_mlxref_has_every_bitwise_name_mlx_has():
    wanted = [n for n in dir(real_mx) if "bitwise" in n or "shift" in n or "invert" in n]
    assert wanted and [n for n in wanted if not hasattr(mx, n)] == []


# (op, a, b, expected dtype): promotion and weakly typed Python scalars.
PROMOTIONS = [
    ("bitwise_and", ("int32", [5, -3]), ("uint8", [5, 3]), "int32"),
    ("bitwise_or", ("int8", [5, -3]), ("uint8", [5, 3]), "int16"),
    ("bitwise_xor", ("uint16", [5, 3]), ("uint64", [6, 1]), "uint64"),
    ("left_shift", ("int8", [5, -3]), ("uint8", [2, 3]), "int16"),
    ("right_shift", ("uint32", [50, 3]), ("int8", [2, 1]), "int64"),
    ("bitwise_and", ("bool_", [True, False]), ("int16", [3, 3]), "int16"),
    ("bitwise_and", ("uint8", [5, 3]), 1, "uint8"),
    ("bitwise_or", 1, ("uint8", [5, 3]), "uint8"),
    ("bitwise_xor", ("bool_", [True, False]), 1, "int32"),
    ("bitwise_and", ("bool_", [True, False]), True, "bool"),
    ("left_shift", ("bool_", [True, False]), 1, "int32"),
    ("left_shift", ("int64", [5, -3]), 3, "int64"),
    ("bitwise_and", 12, 10, "int32"),
    ("bitwise_or", True, False, "bool"),
]
PYTHON_OPS = {"bitwise_and": operator.and_, "bitwise_or": operator.or_,
              "bitwise_xor": operator.xor, "left_shift": operator.lshift,
              "right_shift": operator.rshift}


@pytest.mark.parametrize("op, a, b, dtype", PROMOTIONS)
def test_bitwise_promotion_and_weak_scalars(m, op, a, b, dtype):
    def operand(x):
        return make(m, x[1], x[0]) if isinstance(x, tuple) else x

    def values(x):
        return x[1] if isinstance(x, tuple) else [x] * 2

    got = getattr(m, op)(operand(a), operand(b))
    assert dtype_name(got) == dtype
    want = [wrap(PYTHON_OPS[op](x, y), "bool_" if dtype == "bool" else dtype)
            for x, y in zip(values(a), values(b))]
    assert got.tolist() == (want if got.ndim else want[0])


ERRORS = [
    (lambda m: m.bitwise_and(m.array([1.0]), m.array([2.0])), RuntimeError,
     "[bitwise_and] Only allowed on integer or boolean types but got types float32 and float32."),
    (lambda m: m.bitwise_or(m.array([1]), 1.5), RuntimeError,
     "[bitwise_or] Only allowed on integer or boolean types but got types int32 and float32."),
    (lambda m: m.left_shift(m.array([1]), m.array([1.0])), RuntimeError,
     "[left_shift] Only allowed on integer or boolean types but got types int32 and float32."),
    (lambda m: m.right_shift(m.array([1]), m.array([1.0])), RuntimeError,
     "[right_shift] Only allowed on integer or boolean types but got types float32 and float32."),
    (lambda m: m.bitwise_xor(m.array([1j]), m.array([1j])), RuntimeError,
     "[bitwise_xor] Only allowed on integer or boolean types but got types complex64 and "
     "complex64."),
    (lambda m: m.bitwise_and(m.array([1], m.uint8), 300), ValueError,
     "Converting 300 to uint8 would result in overflow."),
    (lambda m: m.bitwise_and([1, 2], 3), ValueError,
     "Invalid type list received in array initialization."),
    (lambda m: m.bitwise_invert(m.array([1.5])), ValueError,
     "[bitwise_invert] Bitwise inverse only allowed on integer types."),
    (lambda m: ~m.array([1.5]), ValueError,
     "Floating point types not allowed with bitwise inversion."),
    (lambda m: ~m.array([1j]), ValueError,
     "Floating point types not allowed with bitwise inversion."),
    (lambda m: m.array([1.5]) & 1, ValueError, "Floating point types not allowed with bitwise and."),
    (lambda m: m.array([1]) & 1.0, ValueError, "Floating point types not allowed with bitwise and."),
    (lambda m: m.array([1.5]) | m.array([True]), ValueError,
     "Floating point types not allowed with bitwise or."),
    (lambda m: m.array([1]) ^ m.array([1.5]), ValueError,
     "Floating point types not allowed with bitwise xor."),
    (lambda m: m.array([1.5]) << 1, ValueError, "Floating point types not allowed with left shift."),
    (lambda m: m.array([1.5]) >> 1, ValueError, "Floating point types not allowed with right shift."),
]


@pytest.mark.parametrize("case, error, message", ERRORS)
def test_bitwise_errors(m, case, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        case(m)


def test_operators_and_no_reflected_forms(m):
    a, b = m.array([12, -7]), m.array([True, False])
    assert (a & 10).tolist() == [12 & 10, -7 & 10]
    assert (a | 3).tolist() == [12 | 3, -7 | 3]
    assert (a ^ 5).tolist() == [12 ^ 5, -7 ^ 5]
    assert (a << 2).tolist() == [12 << 2, -7 << 2] and (a >> 1).tolist() == [12 >> 1, -7 >> 1]
    assert (~a).tolist() == [~12, ~(-7)]
    assert dtype_name(~b) == "bool" and (~b).tolist() == [False, True]  # logical not
    assert dtype_name(b & 1) == "int32" and (b | m.array([False, False])).tolist() == [True, False]
    # MLX's array has no __rand__, __ror__, __rxor__, __rlshift__ or __rrshift__.
    for reflected in (lambda: 1 & a, lambda: True | b, lambda: 3 ^ a, lambda: 2 << a,
                      lambda: 2 >> a):
        with pytest.raises(TypeError, match="unsupported operand type"):
            reflected()


def test_bitwise_rules_as_mlx_has_them(m):
    i, j = m.array([5, -3]), m.array([1, 2])
    _, vjps = m.vjp(lambda a, b: m.bitwise_and(a, b), [i, j], [m.array([1, 1])])
    assert [(dtype_name(v), v.tolist()) for v in vjps] == [("int32", [0, 0])] * 2
    _, (tangent,) = m.jvp(lambda a: m.left_shift(a, j), [i], [m.array([1.0, 1.0])])
    assert dtype_name(tangent) == "float32" and tangent.tolist() == [0.0, 0.0]
    grads = m.grad(lambda x: m.bitwise_or(x.astype(m.int32), 3).astype(m.float32).sum()
                   + x.sum())(m.array([1.5, 2.5]))
    assert grads.tolist() == [1.0, 1.0]
    for transform, cot in [(m.vjp, [i]), (m.jvp, [i])]:
        name = "vjp" if transform is m.vjp else "jvp"
        with pytest.raises(ValueError, match=re.escape(
                f"[Primitive::{name}] Not implemented for BitwiseInvert.")):
            transform(m.bitwise_invert, [i], cot)


def test_bitwise_vmap(m):
    x = m.array([[1, 2], [3, 4]])
    assert m.vmap(m.bitwise_invert)(x).tolist() == [[~1, ~2], [~3, ~4]]
    got = m.vmap(m.left_shift, in_axes=(1, 0))(x, m.array([[3, 1], [2, 0]]))
    assert got.tolist() == [[1 << 3, 3 << 1], [2 << 2, 4 << 0]]


def test_bitwise_vmap_with_an_unbatched_operand():
    # Each example's row meets the same unbatched operand.
    x, y = mx.array([[1, 2], [3, 4], [5, 6]]), mx.array([3, 1])
    got = mx.vmap(mx.bitwise_and, in_axes=(0, None))(x, y)
    assert got.tolist() == [[1 & 3, 2 & 1], [3 & 3, 4 & 1], [5 & 3, 6 & 1]]
    got = mx.vmap(lambda a, b: a | b, in_axes=(None, 0))(mx.array([8, 8]), x)
    assert got.tolist() == [[8 | 1, 8 | 2], [8 | 3, 8 | 4], [8 | 5, 8 | 6]]


@needs_mlx
def test_mlx_bitwise_vmap_does_not_broadcast_an_unbatched_operand():
    # MLX's BitwiseBinary::vmap builds its output from the first operand's
    # shape without broadcasting the second: the unbatched one (here of shape
    # (1, 2)) is read past its end, so the values are garbage (it can crash;
    # nothing is evaluated here). mlxref broadcasts, as every other binary op.
    x = real_mx.array([[1, 2], [3, 4], [5, 6]])
    got = real_mx.vmap(lambda a, b: a | b, in_axes=(None, 0))(real_mx.array([8, 8]), x)
    assert got.shape == (1, 2)  # not (3, 2)
    added = real_mx.vmap(real_mx.add, in_axes=(None, 0))(real_mx.array([8, 8]), x)
    assert added.shape == (3, 2)


# --- argmax and argmin are uint32 -------------------------------------------------------------


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
