"""The unary kernels: exp, sigmoid, erf, sin... as MLX computes them, for every dtype.

Read alongside: mlx/backend/cpu/unary.cpp and unary.h (the dispatch over
dtypes), unary_ops.h (each op on one element), simd/math.h (MLX's own float32
exp and erf) and simd/base_simd.h (rsqrt, and log1p of a complex number).
The rules (shapes, the math in its plainest form, vjp, jvp and vmap) are in
mlxref/core/primitives/elementwise.py; ``Unary.eval`` is one call of
``unary_op``.

The primitive's ``numeric`` computes in double, and evaluation stores each
result as its dtype holds it (``Dtype.store``): for float16, bfloat16 and
float32 that is the correctly rounded result, and MLX's too where its kernel
is correctly rounded. Where MLX's float32 kernel is not (exp, sigmoid, erf;
rsqrt rounds twice), the primitive's ``float32_kernel`` is one of the
functions below, which those three dtypes use instead of ``numeric``;
float64 keeps the exact math.

Speed: ``numeric`` is a Python function called once per element. Most
primitives also give ``numeric_lists``, the same results over a whole list:
the C library function ``numeric`` calls (``math.sqrt``, ``math.log``...)
mapped over it in C, the list taking ``numeric`` per element only where that
function would differ, i.e. where it raises or returns a nan
(``scalar.mapped``); floor and ceil below set a zero's sign afterwards. The
float32 kernels pass whole lists too: every step rounds to float32 with one
``_f32`` pass in C.

MLX's complex64 is C++'s std::complex<float> (mlx/types/complex.h). Its
functions (exp, log, sin...) are glibc's cexpf, clogf...: mlxref computes
them with ``cmath`` in double and rounds once, so their last bit or two may
differ from MLX's; where cmath raises, the functions here give C99's IEEE
results (Annex G) instead.
Read next: binary.py (products, quotients, the order of complex numbers).
"""

import cmath
import functools
import math
import operator

from ... import dtypes as _dt
from ...scalar import apply, mapped, sympy  # sympy is imported at its first use
from . import libm, rounding

inf, nan = math.inf, math.nan

# The dtypes whose elements MLX's CPU kernels compute in float32 arithmetic
# (float16 and bfloat16 convert to float and back, mlx/types/fp16.h and bf16.h).
FLOAT32_KERNEL_DTYPES = frozenset((_dt.float32, _dt.float16, _dt.bfloat16))


def unary_op(data, dtype, numeric, symbolic, float32_kernel=None, numeric_complex=None,
             name=None, numeric_lists=None):
    """``numeric`` over the elements of ``data`` (of ``dtype``), or ``symbolic``
    over SymPy expressions; ``numeric_lists(data)``: the same over the whole
    list, for speed (``scalar.mapped``); ``float32_kernel(data, dtype)`` over
    a whole list of the dtypes MLX computes in float32, where the primitive
    has one; ``numeric_complex`` on complex64 (``complex_rule``)."""
    if dtype is _dt.complex64:
        return apply(complex_rule(numeric_complex, name), symbolic, data)
    if float32_kernel is not None and dtype in FLOAT32_KERNEL_DTYPES:
        numeric_lists = functools.partial(float32_kernel, dtype=dtype)
    return apply(numeric, symbolic, data, numeric_lists=numeric_lists)


def complex_rule(numeric_complex, name):
    """The rule on complex64 elements, or MLX's refusal of complex input by
    the primitive ``name`` when it has none."""
    if numeric_complex is None:
        raise ValueError(f"[{name}] Not supported for complex64.")
    return numeric_complex


# --- MLX's float32 kernels ----------------------------------------------------------
#
# MLX's CPU build computes float32, float16 and bfloat16 elements in float32.
# Most of its math is the C library's float functions, correctly rounded or
# within an ulp, which ``numeric`` in double followed by the store gives. A
# few kernels are MLX's own (mlx/backend/cpu/simd/math.h) or compose several
# roundings; those are followed here, over whole lists: every step rounds to
# float32 with one ``_f32`` pass in C, never a Python call per element.

_f32 = _dt.float32.store  # a list of doubles rounded to float32, in C

# MLX's constants, which are C floats: log2(e) and its polynomial for 2**f.
_LOG2E = _f32([1.442695])[0]
# y at x = 88: a float32 x is above 88 exactly when its y is above this.
_EXP_TOP = _f32([88.0 * _LOG2E])[0]
_EXP2_POLY = _f32([1.535336188319500e-4, 1.339887440266574e-3, 9.618437357674640e-3,
                   5.550332471162809e-2, 2.402264791363012e-1, 6.931472028550421e-1, 1.0])
_ERF_P = _f32([0.3275911])[0]
_ERF_POLY = _f32([1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592])


def _horner_f32(coefficients, t):
    """The polynomial ``coefficients`` (highest power first) at each ``t``, as
    MLX evaluates it: one float32 fused multiply-add per coefficient."""
    p = [coefficients[0]] * len(t)
    for c in coefficients[1:]:
        p = _f32([q * u + c for q, u in zip(p, t)])
    return p


def exp_float32(data, dtype):
    """MLX's float32 ``exp`` (simd/math.h), to within one float32 ulp; the
    store rounds it to ``dtype``, as MLX converts the float result back.

    MLX computes 2**y for y = x * 1.442695f rounded to float32: that rounding
    is its largest error (up to ~60 ulp of the true exp as |x| nears 88), and
    is followed here. Then 0 where y < -126.5 (x below about -87.68: no
    smaller subnormals), 0 below x = -88 and inf above x = 88 (not 88.72).
    MLX's polynomial for 2**f differs from exp2 in the last bit for about one
    result in fifteen; ``exp_float32_exact`` follows it, at ten times the cost,
    and is used instead with MLXREF_FLOAT32_STEPS set (rounding.py).
    """
    if rounding.FLOAT32_STEPS:
        return exp_float32_exact(data)
    exp2, top = math.exp2, _EXP_TOP
    y = _f32([x * _LOG2E for x in data])
    # nan fails every comparison and stays nan.
    return [exp2(v) if -126.5 <= v <= top else (inf if v > top else 0.0 if v == v else v)
            for v in y]


def exp_float32_exact(data):
    """MLX's float32 ``exp``, bit for bit: 2**floor(y + 1/2) times its
    polynomial at the rest of y, each step rounded as its float32 code rounds.
    For erf and logaddexp, whose results cancel against 1 so that every bit
    of exp shows."""
    y = _f32([x * _LOG2E for x in data])
    ipart = [math.floor(v + 0.5) if -126.5 <= v <= 128.0 else -127 for v in y]
    fpart = [v - i if i != -127 else 0.0 for v, i in zip(y, ipart)]  # exact in float32
    p = _horner_f32(_EXP2_POLY, fpart)
    # MLX builds 2**ipart from its exponent bits: -127 gives 0.0.
    powers = _f32([math.ldexp(q, i) if i != -127 else 0.0 for q, i in zip(p, ipart)])
    # nan stays nan, x above 88 gives inf, x below -88 gives 0.
    return [q if -88.0 <= x <= 88.0 else (inf if x > 88.0 else 0.0 if x == x else x)
            for x, q in zip(data, powers)]


def sigmoid_float32(data, dtype):
    # MLX (unary_ops.h): y = 1 / (1 + exp(|x|)), then y for x < 0 and 1 - y
    # otherwise. exp's result is rounded to the dtype: float16's overflows
    # above |x| = 11.09, so sigmoid is 0 below -11.09 and 1 above it.
    e = dtype.store(exp_float32([abs(x) for x in data], dtype))
    y = _f32([1.0 / d for d in _f32([1.0 + v for v in e])])
    return [q if x < 0 else 1.0 - q for x, q in zip(data, y)]


def erf_float32(data, dtype):
    """MLX's erf (simd/math.h): Abramowitz and Stegun's 7.1.26 in float32,
    1 - t * poly(t) * exp(-x**2) with t = 1 / (1 + 0.3275911 |x|). The
    subtraction cancels near 0, where it is off from erf by up to
    ~1e-7 (erf(1e-7) is 0.0), so every bit of exp counts."""
    t = _f32([1.0 / d for d in _f32([_ERF_P * abs(x) + 1.0 for x in data])])
    r = _horner_f32(_ERF_POLY, t)
    e = exp_float32_exact(_f32([-(x * x) for x in data]))
    et = _f32([-v * u for v, u in zip(e, t)])
    result = dtype.store(_f32([v * q + 1.0 for v, q in zip(et, r)]))
    return [v if x > 0 else -v for x, v in zip(data, result)]


# MLX's erfinv (simd/math.h, after Giles' single-precision approximation):
# two polynomials in w = log(1 - a**2), for |w| above and up to 6.125.
_ERFINV_TAIL = _f32([3.03697567e-10, 2.93243101e-8, 1.22150334e-6, 2.84108955e-5, 3.93552968e-4,
                     3.02698812e-3, 4.83185798e-3, -2.64646143e-1, 8.40016484e-1])
_ERFINV_CENTRE = _f32([5.43877832e-9, 1.43285448e-7, 1.22774793e-6, 1.12963626e-7, -5.61530760e-5,
                       -1.47697632e-4, 2.31468678e-3, 1.15392581e-2, -2.32015476e-1,
                       8.86226892e-1])
_ERFINV_SPLIT = 6.125


def erfinv_float32(data, dtype):
    """MLX's erfinv, bit for bit: ``a * p(w)``, ``w = log(fma(a, -a, 1))``,
    each step in float32, the logarithm the C library's ``logf`` (libm.py),
    ``p`` the polynomial of w's side of 6.125. Within about two float32 ulp
    of erfinv; ``random.normal`` draws through it, so its numbers are MLX's.
    ±inf at ±1 and nan beyond, as the float arithmetic gives them."""
    w = list(map(libm.logf, _f32([1.0 - a * a for a in data])))
    tail = [v for v in w if abs(v) > _ERFINV_SPLIT]
    centre = [v for v in w if not abs(v) > _ERFINV_SPLIT]
    tail, centre = iter(_horner_f32(_ERFINV_TAIL, tail)), iter(_horner_f32(_ERFINV_CENTRE, centre))
    p = [next(tail) if abs(v) > _ERFINV_SPLIT else next(centre) for v in w]
    return _f32([a * q for a, q in zip(data, p)])


def libm_float32(name):
    """The kernel of a function MLX takes from the C library (``log`` is
    ``logf`` on a float): that function (libm.py) over the list."""
    function = libm.function(name)

    def kernel(data, dtype):
        return list(map(function, data))

    return kernel


# The kernel of the logarithm of each base (Log's ``base``): the C library's.
LOG_KERNELS = {base: libm_float32(name)
               for base, name in (("e", "logf"), ("2", "log2f"), ("10", "log10f"))}


def _root(x):
    return math.sqrt(x) if x >= 0 else nan


def _reciprocal(one, r):
    return one / r if r else math.copysign(inf, r)


def rsqrt_float32(data, dtype):
    # MLX's rsqrt is 1 / sqrt(x) with the root rounded to the dtype first.
    # Both passes in C: a negative x (sqrt raises) or a nan (which sqrt
    # keeps with its sign) and a zero root (1.0 / 0.0 raises) send the list
    # to the rule per element (``scalar.mapped``).
    roots = dtype.store(mapped(math.sqrt, _root, data, nan_result=True))
    return mapped(operator.truediv, _reciprocal, [1.0] * len(roots), roots)


# --- real functions: IEEE results where ``math`` raises, C's signed zeros ---------------


def _inf_on_overflow(f):
    """``f`` on floats, giving inf where ``math`` raises OverflowError (MLX's IEEE result)."""

    def numeric(x):
        try:
            return f(x)
        except OverflowError:
            return inf

    return numeric


exp = _inf_on_overflow(math.exp)
expm1 = _inf_on_overflow(math.expm1)
cosh = _inf_on_overflow(math.cosh)


def sinh(x):
    """``math.sinh``, with ±inf where it overflows."""
    try:
        return math.sinh(x)
    except OverflowError:
        return inf if x > 0 else -inf


def _to_integer(rounding, x):
    """``rounding(x)`` (math.floor or math.ceil) as a float; inf and nan stay as they are."""
    if not math.isfinite(x):
        return x
    r = float(rounding(x))
    return math.copysign(r, x) if r == 0 else r  # floor(-0.0), ceil(-0.5): -0.0, as in C


def floor(x):
    return _to_integer(math.floor, x)


def ceil(x):
    return _to_integer(math.ceil, x)


def _to_integer_lists(rounding, scalar, data):
    """``scalar`` (floor or ceil) over a list in C: ``float(rounding(x))``,
    the integer converted back to the double it came from exactly; inf and
    nan, where ``math.floor`` raises, take ``scalar``."""
    try:
        return list(map(float, map(rounding, data)))
    except (ArithmeticError, ValueError, TypeError):
        return list(map(scalar, data))


# ``floor`` and ``ceil`` give a zero result x's sign (floor(-0.0) and
# ceil(-0.5) are -0.0): where one may be needed, ``copysign(r, x)``, which
# leaves every other result as it is (a nonzero floor or ceil has x's sign).
def floor_lists(data):
    out = _to_integer_lists(math.floor, floor, data)
    # floor is zero on [0, 1) and at -0.0: only a zero x needs the sign.
    return list(map(math.copysign, out, data)) if 0.0 in data else out


def ceil_lists(data):
    out = _to_integer_lists(math.ceil, ceil, data)
    return list(map(math.copysign, out, data)) if 0.0 in out else out


def sign(x):
    """-1, 0 or 1 (as a float for a float): nan compares false both ways, so
    its sign is 0, as in MLX."""
    s = (x > 0) - (x < 0)
    return float(s) if isinstance(x, float) else s


_LOGS = {"e": math.log, "2": math.log2, "10": math.log10}


def log(x, base):
    """The logarithm in ``base`` ("e", "2" or "10"): -inf at 0, nan below.
    The C library's log2 and log10, as MLX calls them (ln / ln(10) is not
    correctly rounded: log10(1000) would be 2.9999999999999996)."""
    if not x > 0:
        return -inf if x == 0 else nan
    return _LOGS[base](x)


def log_lists(data, base):
    """``log`` over a list, the C library's log in C: where it raises (x <= 0)
    or keeps a nan's sign, ``log`` per element (``scalar.mapped``)."""
    return mapped(_LOGS[base], functools.partial(log, base=base), data, nan_result=True)


def arctanh(x):
    """``math.atanh``, with ±inf at ±1 and nan outside [-1, 1], as C's."""
    if -1 < x < 1:
        return math.atanh(x)
    if x == 1:
        return inf
    return -inf if x == -1 else nan


def erfinv(y):
    """The inverse of erf in double: ±inf at ±1, nan outside [-1, 1]."""
    if not -1 <= y <= 1:
        return nan
    if y in (-1, 1):
        return y * inf
    # A rough start (Winitzki's approximation), then Newton steps on erf(x) = y.
    a = 0.147
    ln = math.log(1 - y * y)
    t = 2 / (math.pi * a) + ln / 2
    x = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)
    for _ in range(3):
        err = math.erf(x) - y
        x -= err / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


# --- SymPy -------------------------------------------------------------------------------


@functools.cache
def round_half_even():
    """SymPy has no round-half-to-even of an expression: a function that has one."""

    class round_half_even(sympy.Function):  # noqa: N801 (prints like a function)
        @classmethod
        def eval(cls, x, decimals):
            if x.is_Number and decimals.is_Integer:
                return sympy.Rational(round(sympy.Rational(x) * 10**decimals)) / 10**decimals

    return round_half_even


# --- complex64 functions ---------------------------------------------------------------

_round32 = _dt.float32.cast  # one float rounded to float32


def _complex_ieee(f, overflow=None, pole=None):
    """cmath's ``f`` with IEEE results where cmath raises instead: ``overflow(z)``
    where a finite input overflows, ``pole(z)`` at a pole (log 0, atanh 1),
    and nan+nanj otherwise (the infinite inputs cmath calls invalid)."""

    def numeric(z):
        try:
            return f(z)
        except (OverflowError, ValueError) as e:
            finite = math.isfinite(z.real) and math.isfinite(z.imag)
            handler = overflow if isinstance(e, OverflowError) else pole
            return handler(z) if finite and handler is not None else complex(nan, nan)

    return numeric


def _times(m, t):
    """``m * t`` where ``m`` may be infinite, keeping a zero ``t`` (C99 keeps
    exp(inf + 0j)'s imaginary part 0)."""
    return t if t == 0 else m * t


def _real_ln(v):
    return math.log(v) if v > 0 else (-inf if v == 0 else nan)


def _sin_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(cosh(y), math.sin(x)), _times(sinh(y), math.cos(x)))


def _cos_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(cosh(y), math.cos(x)), -_times(sinh(y), math.sin(x)))


def _sinh_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(sinh(x), math.cos(y)), _times(cosh(x), math.sin(y)))


def _cosh_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(cosh(x), math.cos(y)), _times(sinh(x), math.sin(y)))


def _atanh_pole(z):  # atanh(±1): ±inf
    return complex(math.copysign(inf, z.real), math.copysign(0.0, z.imag))


def _atan_pole(z):  # atan(±i) = -i atanh(∓1)
    return complex(math.copysign(0.0, z.real), math.copysign(inf, z.imag))


complex_log = _complex_ieee(cmath.log, pole=lambda z: complex(-inf, math.atan2(z.imag, z.real)))
complex_exp = _complex_ieee(
    cmath.exp, overflow=lambda z: complex(_times(inf, math.cos(z.imag)),
                                          _times(inf, math.sin(z.imag)))
)
complex_sin = _complex_ieee(cmath.sin, overflow=_sin_overflow)
complex_cos = _complex_ieee(cmath.cos, overflow=_cos_overflow)
complex_tan = _complex_ieee(cmath.tan)
complex_arcsin = _complex_ieee(cmath.asin)
complex_arccos = _complex_ieee(cmath.acos)
complex_arctan = _complex_ieee(cmath.atan, pole=_atan_pole)
complex_sinh = _complex_ieee(cmath.sinh, overflow=_sinh_overflow)
complex_cosh = _complex_ieee(cmath.cosh, overflow=_cosh_overflow)
complex_tanh = _complex_ieee(cmath.tanh)
complex_arcsinh = _complex_ieee(cmath.asinh)
complex_arccosh = _complex_ieee(cmath.acosh)
complex_arctanh = _complex_ieee(cmath.atanh, pole=_atanh_pole)


def complex_log1p(z):
    """MLX's complex log1p (mlx/backend/cpu/simd/base_simd.h): accurate near 0."""
    x, y = z.real, z.imag
    theta = math.atan2(y, x + 1)
    if abs(z) < 0.5:
        r = x * (2 + x) + y * y
        return complex(x, theta) if r == 0 else complex(0.5 * math.log1p(r), theta)
    return complex(_real_ln(_round32(math.hypot(x + 1, y))), theta)  # |1 + z| in float32, as MLX


def complex_sign(z):
    """MLX's sign of a complex number: z / |z|, each part divided by the float32
    magnitude; a zero stays as it is."""
    if z == 0:
        return z
    r = _round32(abs(z))
    return complex(z.real / r, z.imag / r)
