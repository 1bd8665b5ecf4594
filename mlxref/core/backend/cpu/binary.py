"""The binary kernels: divisions, powers, logaddexp and complex arithmetic as MLX computes them.

Read alongside: mlx/backend/cpu/binary.cpp and binary.h (the dispatch over
dtypes, DivMod's kernel), binary_ops.h (each op on two elements: LogAddExp,
NaNEqual...) and mlx/types/complex.h (complex64's products, quotients and
order). The rules are in mlxref/core/primitives/elementwise.py;
``Binary.eval`` is one call of ``binary_op``.

Where MLX's float32 kernel is not the correctly rounded result of the math
(logaddexp goes through MLX's own exp; floor_divide rounds the quotient
first), the primitive's ``float32_kernel`` is one of the functions below,
used for float32, float16 and bfloat16 as in unary.py. Divide, remainder
and power map the operator over the lists in C (``divide_lists``...), with
the rule per element where the operator would give something else.

MLX's complex64 is C++'s std::complex<float>. Products are GCC's inline
multiply in float32, with C99 Annex G's recovery of infinities (libgcc's
__mulsc3) when both parts come out nan; quotients are libgcc's __divsc3,
which forms the quotient in double. Both are reproduced here to the bit.

Integers: MLX's CPU kernel divides int32 and int64 with the processor's
division, which kills the process on some inputs, and shifts by counts C++
leaves undefined; mlxref raises instead (``check_integer_division``,
``check_shift_counts``).
Read next: unary.py (exp, log and log1p, which logaddexp and pow call).
"""

import cmath
import functools
import math
import operator

from ... import dtypes as _dt
from ...scalar import apply, is_symbolic, mapped, sympy  # sympy is imported at its first use
from . import libm
from .unary import (FLOAT32_KERNEL_DTYPES, complex_exp, complex_log, complex_log1p,
                    complex_rule, exp, exp_float32_exact, floor, floor_lists)

inf, nan = math.inf, math.nan


def binary_op(a, b, dtype, numeric, symbolic, float32_kernel=None, numeric_lists=None,
              numeric_complex=None, name=None):
    """``numeric`` over the elements of ``a`` and ``b`` (of ``dtype``), or
    ``symbolic`` over SymPy expressions. ``numeric_lists(a, b)``: the same
    over whole lists, for speed; ``float32_kernel(a, b, dtype)``: MLX's
    results for the dtypes it computes in float32, where they are not
    ``numeric``'s; ``numeric_complex`` on complex64 (``unary.complex_rule``)."""
    if dtype is _dt.complex64:
        return apply(complex_rule(numeric_complex, name), symbolic, a, b)
    if float32_kernel is not None and dtype in FLOAT32_KERNEL_DTYPES:
        numeric_lists = functools.partial(float32_kernel, dtype=dtype)
    return apply(numeric, symbolic, a, b, numeric_lists=numeric_lists)


# --- real numbers --------------------------------------------------------------------


def divide(a, b):
    """``a / b`` with IEEE's inf or nan for a zero divisor."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return nan
        return math.copysign(inf, a) * math.copysign(1.0, b)


def divide_lists(a, b):
    """``divide`` over whole lists: ``a / b`` in C, unless a divisor is zero."""
    return mapped(operator.truediv, divide, a, b)


def floor_divide(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a // b if b else 0  # MLX: x // 0 is 0 for integers and bools
    # MLX computes floor(a / b); Python's float // differs at the edges
    # (inf // 1.0 is nan, 0.5 // -inf is -1.0; MLX gives inf and -0.0).
    return floor(divide(a, b))


def floor_divide_float32(a, b, dtype):
    # MLX's floor_divide of floats is floor(divide(a, b)) (ops.cpp): two
    # ops, so the quotient is rounded to the dtype before the floor, and
    # float16's 1e-5 // -60000 is -0.0 (the quotient underflows), not -1.0.
    quotients = dtype.store(divide_lists(a, b))
    return floor_lists(quotients)


def remainder(a, b):
    try:
        r = a % b
    except ZeroDivisionError:
        if isinstance(a, int) and isinstance(b, int):
            return a  # MLX: x % 0 is x for integers and bools
        return nan
    # MLX adjusts C's remainder(a, b), whose zero has a's sign; Python's
    # float % gives its zero b's sign: remainder(0.0, -1.0) is 0.0 in MLX.
    return math.copysign(0.0, a) if r == 0 and type(r) is float else r


def remainder_lists(a, b):
    """``remainder`` over whole lists: ``a % b`` in C. A zero result (whose
    sign ``remainder`` sets) or a zero divisor sends the lists to
    ``remainder`` per element."""
    out = mapped(operator.mod, remainder, a, b)
    return list(map(remainder, a, b)) if 0.0 in out else out


def power(a, b):
    if isinstance(a, int) and isinstance(b, int) and b < 0:
        return 0  # MLX: an integer to a negative integer power is 0 (even 1 ** -1)
    try:
        r = a**b
    except (ZeroDivisionError, OverflowError):  # C's pow: ±0 ** negative, or too large
        if not float(b).is_integer():
            return nan if a < 0 else inf
        return math.copysign(inf, a) if int(b) % 2 else inf  # (-0.0) ** -1 is -inf
    return nan if isinstance(r, complex) else r


def power_lists(a, b):
    """``power`` over the elements of a bool or floating array: ``pow`` in C
    (``a**b`` calls the same ``PyNumber_Power``). Where ``pow`` raises (0 to
    a negative power, an overflow) or a result is complex (a negative base to
    a fractional power: the sum of the results is complex then), the lists
    take ``power`` per element. (Integer arrays take ``integer_power``: an int
    to a negative int power, 0 in ``power``, is never met here.)"""
    out = mapped(pow, power, a, b)
    if type(sum(out)) is complex:
        return list(map(power, a, b))
    return out


def integer_power(a, b, dtype, symbolic):
    """``a ** b`` of integers as MLX's CPU kernel forms it, by repeated
    squaring in the type itself: modulo 2**bits (Python's three-argument
    ``pow``, whose time is bounded by the width however large ``b`` is; the
    store then wraps to the signed range), and 0 for a negative exponent."""
    modulus = 1 << (8 * dtype.size)

    def numeric(x, e):
        return 0 if e < 0 else pow(x, e, modulus)

    return apply(numeric, symbolic, a, b)


# x != x is the nan test: a nan on either side gives nan, as in MLX. a > b,
# not >=: a tie gives b, as MLX's (a > b) ? a : b does, so maximum(0.0, -0.0)
# is -0.0 (and minimum(-0.0, 0.0) is 0.0). Over whole lists: one
# comprehension, with no call per element (ReLU is maximum(x, 0)).
def maximum(a, b):
    return [x if x > y or x != x else y for x, y in zip(a, b)]


def minimum(a, b):
    return [x if x < y or x != x else y for x, y in zip(a, b)]


def logaddexp(a, b):
    hi = a if a > b or a != a else b
    if hi in (inf, -inf) or hi != hi:  # inf - inf would make logaddexp(inf, inf) nan
        return hi
    lo = a if hi is b else b
    return hi + math.log1p(exp(lo - hi)) if lo != -inf else hi


def logaddexp_float32(a, b, dtype):
    # MLX (binary_ops.h): hi + log1p(exp(lo - hi)), each step rounded to
    # the dtype, with MLX's exp: logaddexp(0, -88.5) is 0.0, not 3.7e-39.
    # The sum cancels when hi is near -log(2), so every bit of exp counts,
    # and of log1p: the C library's log1pf, as MLX's (libm.py).
    hi = maximum(a, b)
    lo = minimum(a, b)
    e = dtype.store(exp_float32_exact(dtype.store([u - v for u, v in zip(lo, hi)])))
    logs = dtype.store(list(map(libm.function("log1pf"), e)))
    return [v if u == -inf or v == inf else v + q for u, v, q in zip(lo, hi, logs)]


# --- complex64 arithmetic ---------------------------------------------------------------

_round32 = _dt.float32.cast  # one float rounded to float32


def _copysign_box(v):
    """C99 Annex G's "box" of a factor: ±1 for an infinity, ±0 otherwise."""
    return math.copysign(1.0 if math.isinf(v) else 0.0, v)


def _nan_to_zero(v):
    return math.copysign(0.0, v) if v != v else v


def complex_mul(a, b):
    """``a * b`` as MLX multiplies complex64: each product rounded to float32
    before the sums. (In double, the difference would be rounded only once,
    and differ from MLX's in the last bit about half the time.)"""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    ac, bd, ad, bc = _round32(ar * br), _round32(ai * bi), _round32(ar * bi), _round32(ai * br)
    re, im = ac - bd, ad + bc
    if re == re or im == im:
        return complex(re, im)
    # Both nan: recover the infinities an infinite factor (or an overflow) lost.
    recalc = False
    if math.isinf(ar) or math.isinf(ai):
        ar, ai = _copysign_box(ar), _copysign_box(ai)
        br, bi = _nan_to_zero(br), _nan_to_zero(bi)
        recalc = True
    if math.isinf(br) or math.isinf(bi):
        br, bi = _copysign_box(br), _copysign_box(bi)
        ar, ai = _nan_to_zero(ar), _nan_to_zero(ai)
        recalc = True
    if not recalc and any(math.isinf(v) for v in (ac, bd, ad, bc)):
        ar, ai, br, bi = map(_nan_to_zero, (ar, ai, br, bi))
        recalc = True
    if recalc:
        re, im = inf * (ar * br - ai * bi), inf * (ar * bi + ai * br)
    return complex(re, im)


def complex_div(a, b):
    """``a / b`` as MLX divides complex64: libgcc's __divsc3, which forms the
    plain quotient (a c + b d) / (c^2 + d^2) ... in double (exact products of
    float32 parts), and C99 Annex G's results where both parts come out nan
    (a zero divisor, an infinite dividend or divisor)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    denominator = br * br + bi * bi
    if denominator != 0:
        re = (ar * br + ai * bi) / denominator
        im = (ai * br - ar * bi) / denominator
        if re == re or im == im:
            return complex(re, im)
    elif ar == ar or ai == ai:  # x / 0: ±inf times each part (so 0 / 0 is nan)
        scale = math.copysign(inf, br)
        return complex(scale * ar, scale * ai)
    if (math.isinf(ar) or math.isinf(ai)) and math.isfinite(br) and math.isfinite(bi):
        ar, ai = _copysign_box(ar), _copysign_box(ai)
        return complex(inf * (ar * br + ai * bi), inf * (ai * br - ar * bi))
    if (math.isinf(br) or math.isinf(bi)) and math.isfinite(ar) and math.isfinite(ai):
        br, bi = _copysign_box(br), _copysign_box(bi)
        return complex(0.0 * (ar * br + ai * bi), 0.0 * (ai * br - ar * bi))
    return complex(nan, nan)


def complex_pow(a, b):
    """C++'s std::pow on complex64: exp(b * log(a)), each step in complex64."""
    log_a = _dt.complex64.cast(complex_log(a))
    return complex_exp(_dt.complex64.cast(complex_mul(b, log_a)))


def complex_greater(a, b):
    """MLX's order on complex64: by real part, then by imaginary part."""
    return a.real > b.real or (a.real == b.real and a.imag > b.imag)


def complex_greater_equal(a, b):
    return a.real > b.real or (a.real == b.real and a.imag >= b.imag)


def complex_maximum(a, b):
    # A nan in either part of ``a`` wins; a nan only in ``b`` wins if ``a`` is not greater.
    return a if a != a or complex_greater(a, b) else b


def complex_minimum(a, b):
    return a if a != a or complex_greater(b, a) else b


def complex_logaddexp(a, b):
    """MLX's formula, on complex64: max + log1p(exp(min - max)) in its order."""
    hi, lo = complex_maximum(a, b), complex_minimum(a, b)
    if lo == -inf or hi == inf:
        return hi
    return hi + complex_log1p(complex_exp(lo - hi))


def nan_equal(a, b):
    """MLX's ``NaNEqual``: ``a == b``, or both nan (a complex number is nan
    when either part is)."""
    return a == b or (cmath.isnan(a) and cmath.isnan(b))


@functools.cache
def bitwise_function(op, fn):
    """SymPy has no bitwise ops: a function that prints as ``bitwise_and(x, y)``
    (``op`` is "and") and applies ``fn`` once its arguments are numbers, to
    their integer parts (what a cast to an integer dtype keeps, C's truncation)."""

    def eval(cls, *args):
        if all(a.is_Number for a in args):
            return sympy.Integer(fn(*map(int, args)))

    return type(f"bitwise_{op}", (sympy.Function,), {"eval": classmethod(eval)})


# --- integers: what MLX's kernel leaves to the processor ----------------------------------


def check_integer_division(op, a, b, dtype):
    """MLX's CPU kernel divides int32 and int64 with the processor's division,
    which traps (SIGFPE, the process dies) on the one quotient that does not
    fit: the type's minimum divided by -1. mlxref raises instead. (int8 and
    int16 are divided as C ints, so there the quotient just wraps.)

    ``divmod``'s kernel also divides by zero with the processor's division
    (floor_divide and remainder give 0 and ``a``): an integer divided by
    zero raises ZeroDivisionError there."""
    if op == "divmod" and dtype.is_integer and 0 in b:
        raise ZeroDivisionError(
            f"[divmod] Integer division by zero in {dtype.name}. MLX's CPU kernel "
            "stops the process with SIGFPE here (floor_divide gives 0 and "
            "remainder gives a)."
        )
    if dtype is not _dt.int32 and dtype is not _dt.int64:
        return
    low = _dt.iinfo(dtype).min
    if low in a and -1 in b and any(x == low and y == -1 for x, y in zip(a, b)):
        symbol = "%" if op == "remainder" else "//"
        raise OverflowError(
            f"[{op}] Integer overflow: {low} {symbol} -1 in {dtype.name} (the quotient "
            f"{-low} does not fit). MLX's CPU kernel stops the process with SIGFPE here."
        )


def check_shift_counts(op, counts, dtype):
    """A shift by a negative count, or by the C type's width or more, is
    undefined in C++. C shifts 8- and 16-bit integers as 32-bit ints, so
    ``uint8 >> 9`` is well defined (0), but ``int32 << 40`` is not: MLX's CPU
    build gives ``1 << 40`` as 256 (the count taken modulo 32, x86's ``shl``)
    when it shifts element by element and 0 when its compiler vectorised the
    loop (one array broadcast against a long one). mlxref raises instead."""
    if not counts or is_symbolic(counts[0]):
        return
    width = 64 if dtype.size == 8 else 32
    low, high = min(counts), max(counts)
    if low < 0 or high >= width:
        bad = low if low < 0 else high
        raise ValueError(
            f"[{op}] Shift count {bad} is out of range for {dtype.name}: C++ defines "
            f"shifts by 0 to {width - 1} only, and MLX's CPU build gives different "
            f"results for this count depending on the arrays' layout."
        )
