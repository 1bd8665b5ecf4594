"""Elementwise primitives: unary, binary and the ternary Select.

Read alongside: mlx/primitives.h (``Abs`` ... ``Tanh``, ``Add`` ... ``Select``)
and mlx/primitives.cpp, where each class's vjp, jvp and vmap sit together;
MLX's per-element math is in mlx/backend/cpu/unary_ops.h and binary_ops.h.

Each class holds its math side by side, like micrograd's ``__mul__`` and its
``_backward``:

- ``numeric``: the forward rule on Python numbers, with IEEE results where
  ``math`` would raise (``log(0)`` is ``-inf``, ``sqrt(-1)`` is ``nan``,
  ``1/0`` is ``inf``), as in MLX;
- ``numeric_complex``: the forward rule on complex64 elements (Python
  complex numbers), as MLX's ``std::complex<float>`` kernels compute it;
  None where MLX refuses complex input (its ops raise first);
- ``symbolic``: the same function on SymPy expressions, which is how
  ``mlxref.symbolic`` checks every derivative rule exactly;
- ``derivative(x, out)`` (unary) or ``partial(i, a, b, out)`` (binary),
  written with mlxref ops so gradients can be differentiated again.

The ops layer has already broadcast the inputs to one shape and promoted them
to one dtype, so ``eval`` maps the math over the element lists with ``apply``.
Evaluation then stores each result as the dtype holds it (``Dtype.store``),
so ``numeric`` may compute in double: for float16, bfloat16 and float32 that
is the correctly rounded result, and MLX's too where its kernel is correctly
rounded. Where MLX's float32 kernel is not (exp, sigmoid, erf, logaddexp;
rsqrt and floor_divide round twice: see "MLX's float32 kernels" below), the
class also gives ``float32_kernel``, which those three dtypes use instead of
``numeric``; float64 keeps the exact math.

Complex inputs follow MLX's convention for derivatives: the jvp multiplies
the tangent by f'(z), and the vjp multiplies the cotangent by the conjugate
of the jvp's multiplier, conj(f'(z)) (mlx/primitives.cpp, "The vjp conjugates
the jvp's multiplier"). So the gradient of a real-valued loss L(z) is
dL/dx + i dL/dy: ``grad(lambda z: abs(z) ** 2)`` is ``2 z``. The non-holomorphic
primitives (Abs, Real, Imag, Conjugate) have rules of their own.
Read next: mlxref/core/scalar.py (``apply``) and mlxref/symbolic/elementwise.py
(the symbolic check of each class).
"""

import cmath
import functools
import math
import operator

from .. import dtypes as _dt
from .. import ops
from ..scalar import apply, is_symbolic, sympy  # sympy is imported at its first use
from .base import (
    Primitive,
    make_array,
    make_arrays,
    vmap_elementwise,
)

inf, nan = math.inf, math.nan
_COMPLEX64 = _dt.complex64


def _complex_numeric(primitive):
    """``primitive.numeric_complex``, or MLX's refusal of complex input."""
    numeric = primitive.numeric_complex
    if numeric is None:
        raise ValueError(f"[{primitive.name}] Not supported for complex64.")
    return numeric

# The dtypes whose elements MLX's CPU kernels compute in float32 arithmetic
# (float16 and bfloat16 convert to float and back, mlx/types/fp16.h and bf16.h).
FLOAT32_KERNEL_DTYPES = frozenset((_dt.float32, _dt.float16, _dt.bfloat16))


class Unary(Primitive):
    """An elementwise function of one array: ``numeric(x)`` and ``symbolic(x)``.

    Its Jacobian is diagonal, so a subclass also gives ``derivative(x, out)``, the
    elementwise f'(x) as an array, and both modes multiply by it: the vjp
    scales the cotangent, the jvp scales the tangent.
    """

    donates = True  # MLX's unary kernel reuses a donatable input (allocator.donate)

    abstract = True  # a family, not a primitive of its own
    # Or ``float32_kernel(data, dtype)``: MLX's results for a whole list of
    # float32, float16 or bfloat16 elements, where they are not ``numeric``'s.
    float32_kernel = None
    numeric_complex = None  # the forward rule on complex64 elements, if MLX has one
    # Or ``numeric`` as a Python expression of ``{0}``, which ``Compiled``
    # writes inline into its generated code (see ``expression`` in Binary).
    expression = None
    expression_raises = False

    def derivative(self, x, out):
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
        if primals[0].dtype is _COMPLEX64 and self.derivative is not None:
            # MLX's convention for complex inputs: the cotangent times conj(f'(z)).
            d = self.derivative(primals[0], outputs[0])
            return [ops.multiply(cotangents[0], ops.conjugate(d))]
        # BEGIN TASK 2.1: elementwise vjp: the cotangent times the derivative
        if self.derivative is None:  # piecewise constant: MLX's gradient is zero
            return [ops.zeros_like(primals[0])]
        return [ops.multiply(cotangents[0], self.derivative(primals[0], outputs[0]))]
        # END TASK 2.1

    def jvp(self, primals, tangents, argnums):
        # BEGIN TASK 3.1: elementwise jvp: the tangents times the derivatives
        if self.derivative is None:
            return [ops.zeros_like(tangents[0])]
        # The output again, as a fresh node of this primitive: a rule that uses
        # it (exp, tanh, sigmoid...) stays differentiable for higher orders.
        x = primals[0]
        out = make_array(self, [x])
        return [ops.multiply(tangents[0], self.derivative(x, out))]
        # END TASK 3.1

    def vmap(self, inputs, axes):
        return [make_array(self, inputs)], list(axes)

    def eval(self, inputs):
        (x,) = inputs
        # Evaluation stores the results as the dtype holds them: abs and
        # square of ints give ints again, and wrap.
        if x.dtype is _COMPLEX64:
            return [apply(_complex_numeric(self), self.symbolic, x.data())]
        kernel = None
        if self.float32_kernel is not None and x.dtype in FLOAT32_KERNEL_DTYPES:
            kernel = functools.partial(self.float32_kernel, dtype=x.dtype)
        return [apply(self.numeric, self.symbolic, x.data(), numeric_lists=kernel)]


class Binary(Primitive):
    """An elementwise function of two same-shape arrays: ``numeric(a, b)`` and ``symbolic(a, b)``.

    A subclass also gives ``partial(i, a, b, out)``: d out/d a or d out/d b as an
    array. The vjp scales the cotangent by the partial of each requested
    input; the jvp sums tangent times partial over the inputs that have one.
    """

    donates = True  # MLX's binary kernel reuses a donatable input (allocator.donate)

    abstract = True  # a family, not a primitive of its own
    numeric_lists = None  # or ``numeric`` over whole lists, for speed (Maximum, Minimum)
    float32_kernel = None  # or ``float32_kernel(a, b, dtype)``, as Unary's
    numeric_complex = None  # the forward rule on complex64 elements, if MLX has one
    # Or ``numeric`` as a Python expression of ``{0}`` and ``{1}``: what
    # ``Compiled`` writes inline into its generated code, saving a call per
    # element. It gives ``numeric``'s results where it does not raise; where
    # it raises ZeroDivisionError (Divide's ``/``), ``numeric`` is used.
    expression = None
    expression_raises = False  # True: the generated code falls back to ``numeric``

    def partial(self, i, a, b, out):
        """d out / d a (``i`` = 0) or d out / d b (``i`` = 1), elementwise."""
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
        if primals[0].dtype is _COMPLEX64:
            # MLX's convention for complex inputs: the cotangent times conj(d out / d input).
            a, b = primals
            return [ops.multiply(cotangents[0], ops.conjugate(self.partial(i, a, b, outputs[0])))
                    for i in argnums]
        # BEGIN TASK 2.1: elementwise vjp: the cotangent times the derivative
        a, b = primals
        return [ops.multiply(cotangents[0], self.partial(i, a, b, outputs[0])) for i in argnums]
        # END TASK 2.1

    def jvp(self, primals, tangents, argnums):
        # BEGIN TASK 3.1: elementwise jvp: the tangents times the derivatives
        a, b = primals
        out = make_array(self, [a, b])
        result = None
        for i, t in zip(argnums, tangents):
            term = ops.multiply(t, self.partial(i, a, b, out))
            result = term if result is None else ops.add(result, term)
        return [result]
        # END TASK 3.1

    def vmap(self, inputs, axes):
        return vmap_elementwise(self, inputs, axes)

    def eval(self, inputs):
        a, b = inputs
        # Evaluation stores the results as the dtype holds them: int + int
        # wraps, bool + bool is a bool again.
        if a.dtype is _COMPLEX64:
            return [apply(_complex_numeric(self), self.symbolic, a.data(), b.data())]
        lists = self.numeric_lists
        if self.float32_kernel is not None and a.dtype in FLOAT32_KERNEL_DTYPES:
            lists = functools.partial(self.float32_kernel, dtype=a.dtype)
        return [apply(self.numeric, self.symbolic, a.data(), b.data(), numeric_lists=lists)]


class Comparison(Binary):
    """A binary op with a bool result: its gradient is zero (MLX's rule).

    On SymPy expressions the result is a 0/1 indicator (``_indicator``), so
    masks can multiply. The jvp's zero keeps the tangent's float dtype rather
    than bool (MLX #3081).
    """

    abstract = True  # a family, not a primitive of its own
    # Nothing to store: the results are Python bools (or SymPy indicators)
    # already, as a bool array holds them.
    moves_elements = True

    def output_dtypes(self, inputs):
        return [_dt.bool_]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[0].shape, tangents[0].dtype)]

    def vmap(self, inputs, axes):
        return vmap_elementwise(self, inputs, axes)

    def eval(self, inputs):
        a, b = inputs
        numeric = self.numeric if a.dtype is not _COMPLEX64 else _complex_numeric(self)
        return [apply(numeric, self.symbolic, a.data(), b.data())]


# --- truth values, numeric and symbolic (comparisons, logical ops, Select) ---------


def _truth(v):
    """``bool(v)`` for a number; TypeError for anything else.

    A SymPy expression (a 0/1 ``Piecewise`` indicator) is always truthy to
    Python, so ``a if c else b`` would silently pick ``a``: raising sends the
    whole list to the symbolic function instead.
    """
    if isinstance(v, (bool, int, float)):
        return bool(v)
    raise TypeError(f"no numeric truth value for {v!r}")


def _indicator(condition):
    """A SymPy condition as a 0/1 expression: a symbolic bool that masks can multiply."""
    return sympy.Piecewise((1, condition), (0, True))


def _condition(c):
    """A SymPy condition from a value: a comparison as it is, anything else as c != 0."""
    boolean = (sympy.core.relational.Relational, sympy.logic.boolalg.BooleanFunction,
               sympy.logic.boolalg.BooleanAtom)
    if isinstance(c, boolean):
        return c
    if not isinstance(c, sympy.Basic):  # a plain number: its truth value
        return sympy.true if c else sympy.false
    return sympy.Ne(c, 0)


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


def _exp_float32(data):
    """MLX's float32 ``exp`` (simd/math.h), to within one float32 ulp.

    MLX computes 2**y for y = x * 1.442695f rounded to float32: that rounding
    is its largest error (up to ~60 ulp of the true exp as |x| nears 88), and
    is followed here. Then 0 where y < -126.5 (x below about -87.68: no
    smaller subnormals), 0 below x = -88 and inf above x = 88 (not 88.72).
    MLX's polynomial for 2**f differs from exp2 in the last bit for about one
    result in fifteen; ``_exp_float32_exact`` follows it, at ten times the cost.
    """
    exp2, top = math.exp2, _EXP_TOP
    y = _f32([x * _LOG2E for x in data])
    # nan fails every comparison and stays nan.
    return [exp2(v) if -126.5 <= v <= top else (inf if v > top else 0.0 if v == v else v)
            for v in y]


def _exp_float32_exact(data):
    """MLX's float32 ``exp``, bit for bit: 2**floor(y + 1/2) times its
    polynomial at the rest of y, each step rounded as its float32 code rounds.
    For erf, whose result cancels against 1 so that every bit of exp shows."""
    y = _f32([x * _LOG2E for x in data])
    ipart = [math.floor(v + 0.5) if -126.5 <= v <= 128.0 else -127 for v in y]
    fpart = [v - i if i != -127 else 0.0 for v, i in zip(y, ipart)]  # exact in float32
    p = _horner_f32(_EXP2_POLY, fpart)
    # MLX builds 2**ipart from its exponent bits: -127 gives 0.0.
    powers = _f32([math.ldexp(q, i) if i != -127 else 0.0 for q, i in zip(p, ipart)])
    # nan stays nan, x above 88 gives inf, x below -88 gives 0.
    return [q if -88.0 <= x <= 88.0 else (inf if x > 88.0 else 0.0 if x == x else x)
            for x, q in zip(data, powers)]


# --- complex64 arithmetic, as MLX's kernels compute it ------------------------------
# MLX's complex64 is C++'s std::complex<float> (mlx/types/complex.h). Products
# are GCC's inline multiply in float32, with C99 Annex G's recovery of
# infinities (libgcc's __mulsc3) when both parts come out nan; quotients are
# libgcc's __divsc3, which forms the quotient in double. Both are reproduced
# here to the bit. The functions (exp, log, sin...) are glibc's cexpf,
# clogf...: mlxref computes them with ``cmath`` in double and rounds once, so
# their last bit or two may differ from MLX's.

_round32 = _dt.float32.cast  # one float rounded to float32


def _copysign_box(v):
    """C99 Annex G's "box" of a factor: ±1 for an infinity, ±0 otherwise."""
    return math.copysign(1.0 if math.isinf(v) else 0.0, v)


def _nan_to_zero(v):
    return math.copysign(0.0, v) if v != v else v


def _complex_mul(a, b):
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


def _complex_div(a, b):
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


_complex_log = _complex_ieee(cmath.log, pole=lambda z: complex(-inf, math.atan2(z.imag, z.real)))
_complex_exp = _complex_ieee(
    cmath.exp, overflow=lambda z: complex(_times(inf, math.cos(z.imag)),
                                          _times(inf, math.sin(z.imag)))
)


def _complex_log1p(z):
    """MLX's complex log1p (mlx/backend/cpu/simd/base_simd.h): accurate near 0."""
    x, y = z.real, z.imag
    theta = math.atan2(y, x + 1)
    if abs(z) < 0.5:
        r = x * (2 + x) + y * y
        return complex(x, theta) if r == 0 else complex(0.5 * math.log1p(r), theta)
    return complex(_real_ln(_round32(math.hypot(x + 1, y))), theta)  # |1 + z| in float32, as MLX


def _complex_pow(a, b):
    """C++'s std::pow on complex64: exp(b * log(a)), each step in complex64."""
    log_a = _dt.complex64.cast(_complex_log(a))
    return _complex_exp(_dt.complex64.cast(_complex_mul(b, log_a)))


def _complex_sign(z):
    """MLX's sign of a complex number: z / |z|, each part divided by the float32
    magnitude; a zero stays as it is."""
    if z == 0:
        return z
    r = _round32(abs(z))
    return complex(z.real / r, z.imag / r)


def _complex_greater(a, b):
    """MLX's order on complex64: by real part, then by imaginary part."""
    return a.real > b.real or (a.real == b.real and a.imag > b.imag)


def _complex_greater_equal(a, b):
    return a.real > b.real or (a.real == b.real and a.imag >= b.imag)


def _complex_maximum(a, b):
    # A nan in either part of ``a`` wins; a nan only in ``b`` wins if ``a`` is not greater.
    return a if a != a or _complex_greater(a, b) else b


def _complex_minimum(a, b):
    return a if a != a or _complex_greater(b, a) else b


def _complex_logaddexp(a, b):
    """MLX's formula, on complex64: max + log1p(exp(min - max)) in its order."""
    hi, lo = _complex_maximum(a, b), _complex_minimum(a, b)
    if lo == -inf or hi == inf:
        return hi
    return hi + _complex_log1p(_complex_exp(lo - hi))


def _sin_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(Cosh.numeric(y), math.sin(x)), _times(Sinh.numeric(y), math.cos(x)))


def _cos_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(Cosh.numeric(y), math.cos(x)), -_times(Sinh.numeric(y), math.sin(x)))


def _sinh_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(Sinh.numeric(x), math.cos(y)), _times(Cosh.numeric(x), math.sin(y)))


def _cosh_overflow(z):
    x, y = z.real, z.imag
    return complex(_times(Cosh.numeric(x), math.cos(y)), _times(Sinh.numeric(x), math.sin(y)))


def _atanh_pole(z):  # atanh(±1): ±inf
    return complex(math.copysign(inf, z.real), math.copysign(0.0, z.imag))


def _atan_pole(z):  # atan(±i) = -i atanh(∓1)
    return complex(math.copysign(0.0, z.real), math.copysign(inf, z.imag))


# --- unary -------------------------------------------------------------------------


class Abs(Unary):
    """|x|. On complex64 its output is complex64 too (|z| + 0j) and ``mx.abs``
    casts it to float32, as MLX's op does; the rules are MLX's for a real
    function of a complex input."""

    numeric = numeric_complex = staticmethod(abs)
    symbolic = staticmethod(lambda x: sympy.Abs(x))

    def derivative(self, x, out):
        return ops.sign(x)

    def vjp(self, primals, cotangents, argnums, outputs):
        if primals[0].dtype is _COMPLEX64:
            # The cotangent (real: it comes through the cast to float32) times
            # sign(z) = z / |z|, with no conjugate: d|z| = Re(conj(sign z) dz).
            return [ops.multiply(cotangents[0], ops.sign(primals[0]))]
        return super().vjp(primals, cotangents, argnums, outputs)

    def jvp(self, primals, tangents, argnums):
        if primals[0].dtype is _COMPLEX64:
            # |z| is real, so its tangent is real: Re(t * conj(sign z)) (float32).
            t = ops.multiply(tangents[0], ops.conjugate(ops.sign(primals[0])))
            return [ops.real(t)]
        return super().jvp(primals, tangents, argnums)


class Negative(Unary):
    numeric = numeric_complex = symbolic = staticmethod(operator.neg)
    expression = "-{0}"

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.negative(cotangents[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.negative(tangents[0])]


class Sign(Unary):
    @staticmethod
    def numeric(x):
        # nan compares false both ways, so its sign is 0, as in MLX.
        s = (x > 0) - (x < 0)
        return float(s) if isinstance(x, float) else s

    numeric_complex = staticmethod(_complex_sign)
    @staticmethod
    def symbolic(x):
        x = sympy.sympify(x)
        # z / |z| for a complex element (x + I*y), which SymPy can simplify; it
        # leaves sign(x + I*y) alone.
        return x / sympy.Abs(x) if x.has(sympy.I) else sympy.sign(x)

    derivative = None  # piecewise constant: MLX's gradient is zero


class Square(Unary):
    numeric = staticmethod(lambda x: x * x)
    numeric_complex = staticmethod(lambda z: _complex_mul(z, z))
    symbolic = numeric  # the same on SymPy expressions
    expression = "{0} * {0}"

    def derivative(self, x, out):
        return ops.multiply(2, x)


class Sqrt(Unary):
    numeric = staticmethod(lambda x: math.sqrt(x) if x >= 0 else nan)
    numeric_complex = staticmethod(cmath.sqrt)
    symbolic = staticmethod(lambda x: sympy.sqrt(x))

    def derivative(self, x, out):
        return ops.divide(0.5, out)


class Rsqrt(Unary):
    numeric = staticmethod(lambda x: Divide.numeric(1, Sqrt.numeric(x)))
    # MLX: 1 / sqrt(z), the square root stored as complex64 first.
    numeric_complex = staticmethod(lambda z: _complex_div(1, _dt.complex64.cast(cmath.sqrt(z))))
    symbolic = staticmethod(lambda x: 1 / sympy.sqrt(x))

    @staticmethod
    def float32_kernel(data, dtype):
        # MLX's rsqrt is 1 / sqrt(x) with the root rounded to the dtype first.
        roots = dtype.store([math.sqrt(x) if x >= 0 else nan for x in data])
        return [1.0 / r if r else math.copysign(inf, r) for r in roots]

    def derivative(self, x, out):
        return ops.multiply(-0.5, ops.divide(out, x))


def _inf_on_overflow(f):
    """``f`` on floats, giving inf where ``math`` raises OverflowError (MLX's IEEE result)."""

    def numeric(x):
        try:
            return f(x)
        except OverflowError:
            return inf

    return numeric


class Exp(Unary):
    numeric = staticmethod(_inf_on_overflow(math.exp))
    numeric_complex = staticmethod(_complex_exp)
    symbolic = staticmethod(lambda x: sympy.exp(x))

    @staticmethod
    def float32_kernel(data, dtype):
        return _exp_float32(data)

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return out
        # END TASK 2.4


class Expm1(Unary):
    numeric = staticmethod(_inf_on_overflow(math.expm1))
    symbolic = staticmethod(lambda x: sympy.exp(x) - 1)

    def derivative(self, x, out):
        return ops.add(out, 1)


class Log(Unary):
    """Natural, base-2 or base-10 logarithm (one class, as in MLX): ln(x) / ln(base)."""

    LN_BASE = {"e": 1.0, "2": math.log(2.0), "10": math.log(10.0)}

    def __init__(self, base="e"):
        self.base = base

    @property
    def name(self):
        return "Log" if self.base == "e" else "Log" + self.base

    def params(self):
        return {"base": self.base}

    def mlx_state(self):
        return [("2", "10", "e").index(self.base)]  # MLX's enum Log::Base {two, ten, e}

    def numeric(self, x):
        if not x > 0:
            return -inf if x == 0 else nan
        # The C library's log2 and log10, as MLX calls them (ln / ln(10) is
        # not correctly rounded: log10(1000) would be 2.9999999999999996).
        return math.log(x) if self.base == "e" else self._LOGS[self.base](x)

    _LOGS = {"2": math.log2, "10": math.log10}

    def numeric_complex(self, z):
        ln = _complex_log(z)
        scale = self.LN_BASE[self.base]
        return ln if scale == 1.0 else complex(ln.real / scale, ln.imag / scale)

    def symbolic(self, x):
        return sympy.log(x) if self.base == "e" else sympy.log(x) / sympy.log(int(self.base))

    def derivative(self, x, out):
        return ops.reciprocal(ops.multiply(x, self.LN_BASE[self.base]))


class Log1p(Unary):
    numeric = staticmethod(lambda x: math.log1p(x) if x > -1 else (-inf if x == -1 else nan))
    numeric_complex = staticmethod(_complex_log1p)
    symbolic = staticmethod(lambda x: sympy.log(1 + x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(x, 1))


class Sin(Unary):
    # + 0.0: MLX's sin (simd/math.h) takes the sign from x < 0, so sin(-0.0) is 0.0.
    numeric = staticmethod(lambda x: math.sin(x) + 0.0 if math.isfinite(x) else nan)
    numeric_complex = staticmethod(_complex_ieee(cmath.sin, overflow=_sin_overflow))
    symbolic = staticmethod(lambda x: sympy.sin(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.cos(x)
        # END TASK 2.2


class Cos(Unary):
    numeric = staticmethod(lambda x: math.cos(x) if math.isfinite(x) else nan)
    numeric_complex = staticmethod(_complex_ieee(cmath.cos, overflow=_cos_overflow))
    symbolic = staticmethod(lambda x: sympy.cos(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.negative(ops.sin(x))
        # END TASK 2.2


class Tan(Unary):
    numeric = staticmethod(lambda x: math.tan(x) if math.isfinite(x) else nan)
    numeric_complex = staticmethod(_complex_ieee(cmath.tan))
    symbolic = staticmethod(lambda x: sympy.tan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.square(ops.cos(x)))


class ArcSin(Unary):
    numeric = staticmethod(lambda x: math.asin(x) if -1 <= x <= 1 else nan)
    numeric_complex = staticmethod(_complex_ieee(cmath.asin))
    symbolic = staticmethod(lambda x: sympy.asin(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(1, ops.square(x)))


class ArcCos(Unary):
    numeric = staticmethod(lambda x: math.acos(x) if -1 <= x <= 1 else nan)
    numeric_complex = staticmethod(_complex_ieee(cmath.acos))
    symbolic = staticmethod(lambda x: sympy.acos(x))

    def derivative(self, x, out):
        return ops.negative(ops.rsqrt(ops.subtract(1, ops.square(x))))


class ArcTan(Unary):
    numeric = staticmethod(math.atan)
    numeric_complex = staticmethod(_complex_ieee(cmath.atan, pole=_atan_pole))
    symbolic = staticmethod(lambda x: sympy.atan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(1, ops.square(x)))


class Sinh(Unary):
    @staticmethod
    def numeric(x):
        try:
            return math.sinh(x)
        except OverflowError:
            return inf if x > 0 else -inf

    numeric_complex = staticmethod(_complex_ieee(cmath.sinh, overflow=_sinh_overflow))
    symbolic = staticmethod(lambda x: sympy.sinh(x))

    def derivative(self, x, out):
        return ops.cosh(x)


class Cosh(Unary):
    numeric = staticmethod(_inf_on_overflow(math.cosh))
    numeric_complex = staticmethod(_complex_ieee(cmath.cosh, overflow=_cosh_overflow))
    symbolic = staticmethod(lambda x: sympy.cosh(x))

    def derivative(self, x, out):
        return ops.sinh(x)


class Tanh(Unary):
    numeric = staticmethod(math.tanh)
    numeric_complex = staticmethod(_complex_ieee(cmath.tanh))
    symbolic = staticmethod(lambda x: sympy.tanh(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.subtract(1, ops.square(out))
        # END TASK 2.4


class ArcSinh(Unary):
    numeric = staticmethod(math.asinh)
    numeric_complex = staticmethod(_complex_ieee(cmath.asinh))
    symbolic = staticmethod(lambda x: sympy.asinh(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.add(ops.square(x), 1))


class ArcCosh(Unary):
    numeric = staticmethod(lambda x: math.acosh(x) if x >= 1 else nan)
    numeric_complex = staticmethod(_complex_ieee(cmath.acosh))
    symbolic = staticmethod(lambda x: sympy.acosh(x))

    def derivative(self, x, out):
        if x.dtype is _COMPLEX64:
            # 1 / (sqrt(z - 1) sqrt(z + 1)): rsqrt(z^2 - 1) takes the other
            # branch where Re z < 0 (MLX's gradient there is this one).
            roots = ops.multiply(ops.sqrt(ops.subtract(x, 1)), ops.sqrt(ops.add(x, 1)))
            return ops.reciprocal(roots)
        return ops.rsqrt(ops.subtract(ops.square(x), 1))


class ArcTanh(Unary):
    @staticmethod
    def numeric(x):
        if -1 < x < 1:
            return math.atanh(x)
        if x == 1:
            return inf
        return -inf if x == -1 else nan

    numeric_complex = staticmethod(_complex_ieee(cmath.atanh, pole=_atanh_pole))
    symbolic = staticmethod(lambda x: sympy.atanh(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.subtract(1, ops.square(x)))


class Sigmoid(Unary):
    @staticmethod
    def numeric(x):
        # BEGIN TASK 1.1: sigmoid's forward rule, stable for any x
        if x >= 0:
            return 1.0 / (1.0 + Exp.numeric(-x))
        e = math.exp(x)
        return e / (1.0 + e)
        # END TASK 1.1

    symbolic = staticmethod(lambda x: 1 / (1 + sympy.exp(-x)))

    @staticmethod
    def float32_kernel(data, dtype):
        # MLX (unary_ops.h): y = 1 / (1 + exp(|x|)), then y for x < 0 and 1 - y
        # otherwise. exp's result is rounded to the dtype: float16's overflows
        # above |x| = 11.09, so sigmoid is 0 below -11.09 and 1 above it.
        e = dtype.store(_exp_float32([abs(x) for x in data]))
        y = _f32([1.0 / d for d in _f32([1.0 + v for v in e])])
        return [q if x < 0 else 1.0 - q for x, q in zip(data, y)]

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.multiply(out, ops.subtract(1, out))
        # END TASK 2.4


class Erf(Unary):
    numeric = staticmethod(math.erf)
    symbolic = staticmethod(lambda x: sympy.erf(x))

    @staticmethod
    def float32_kernel(data, dtype):
        """MLX's erf (simd/math.h): Abramowitz and Stegun's 7.1.26 in float32,
        1 - t * poly(t) * exp(-x**2) with t = 1 / (1 + 0.3275911 |x|). The
        subtraction cancels near 0, where it is off from erf by up to
        ~1e-7 (erf(1e-7) is 0.0), so every bit of exp counts."""
        t = _f32([1.0 / d for d in _f32([_ERF_P * abs(x) + 1.0 for x in data])])
        r = _horner_f32(_ERF_POLY, t)
        e = _exp_float32_exact(_f32([-(x * x) for x in data]))
        et = _f32([-v * u for v, u in zip(e, t)])
        result = dtype.store(_f32([v * q + 1.0 for v, q in zip(et, r)]))
        return [v if x > 0 else -v for x, v in zip(data, result)]

    def derivative(self, x, out):
        return ops.multiply(2 / math.sqrt(math.pi), ops.exp(ops.negative(ops.square(x))))


class ErfInv(Unary):
    @staticmethod
    def numeric(y):
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

    symbolic = staticmethod(lambda y: sympy.erfinv(y))

    def derivative(self, x, out):
        return ops.multiply(math.sqrt(math.pi) / 2, ops.exp(ops.square(out)))


def _to_integer(rounding, x):
    """``rounding(x)`` (math.floor or math.ceil) as a float; inf and nan stay as they are."""
    if not math.isfinite(x):
        return x
    r = float(rounding(x))
    return math.copysign(r, x) if r == 0 else r  # floor(-0.0), ceil(-0.5): -0.0, as in C


class Floor(Unary):
    numeric = staticmethod(lambda x: _to_integer(math.floor, x))
    symbolic = staticmethod(lambda x: sympy.floor(x))

    derivative = None  # piecewise constant: MLX's gradient is zero


class Ceil(Unary):
    numeric = staticmethod(lambda x: _to_integer(math.ceil, x))
    symbolic = staticmethod(lambda x: sympy.ceiling(x))

    derivative = None  # piecewise constant: MLX's gradient is zero


class Round(Unary):
    """Round half to even. ``decimals`` is MLX's parameter of ``mx.round``."""

    def __init__(self, decimals=0):
        self.decimals = decimals

    def params(self):
        return {"decimals": self.decimals} if self.decimals else {}

    def numeric(self, x):
        return float(round(x, self.decimals)) if math.isfinite(x) else x  # half to even, like MLX

    def numeric_complex(self, z):
        return complex(self.numeric(z.real), self.numeric(z.imag))  # each part (MLX's rint)

    def symbolic(self, x):
        return _round_half_even()(x, self.decimals)

    derivative = None  # piecewise constant: MLX's gradient is zero


@functools.cache
def _round_half_even():
    """SymPy has no round-half-to-even of an expression: a function that has one."""

    class round_half_even(sympy.Function):  # noqa: N801 (prints like a function)
        @classmethod
        def eval(cls, x, decimals):
            if x.is_Number and decimals.is_Integer:
                return sympy.Rational(round(sympy.Rational(x) * 10**decimals)) / 10**decimals

    return round_half_even


class LogicalNot(Unary):
    numeric = staticmethod(lambda x: not _truth(x))
    symbolic = staticmethod(lambda x: _indicator(sympy.Not(_condition(x))))

    derivative = None  # piecewise constant: MLX's gradient is zero


class Conjugate(Unary):
    """The complex conjugate (``mx.conj``; the op leaves real arrays alone).

    Not holomorphic: its jvp conjugates the tangent and its vjp the cotangent.
    """

    numeric = numeric_complex = staticmethod(lambda z: z.conjugate())
    symbolic = staticmethod(lambda z: sympy.conjugate(z))

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.conjugate(cotangents[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.conjugate(tangents[0])]


class Real(Unary):
    """The real part of a complex64 array, as float32 (``mx.real``, ``a.real``)."""

    numeric = numeric_complex = staticmethod(lambda z: z.real)
    symbolic = staticmethod(lambda z: sympy.re(z))

    def output_dtypes(self, inputs):
        return [_dt.float32]

    def vjp(self, primals, cotangents, argnums, outputs):
        # d Re(z) = Re(dz): the real cotangent goes back as cot + 0j.
        return [ops.astype(cotangents[0], primals[0].dtype)]

    def jvp(self, primals, tangents, argnums):
        return [ops.real(tangents[0])]


class Imag(Unary):
    """The imaginary part of a complex64 array, as float32 (``mx.imag``, ``a.imag``)."""

    numeric = numeric_complex = staticmethod(lambda z: z.imag)
    symbolic = staticmethod(lambda z: sympy.im(z))

    def output_dtypes(self, inputs):
        return [_dt.float32]

    def vjp(self, primals, cotangents, argnums, outputs):
        # d Im(z) = Re(conj(i) dz): the real cotangent goes back as i * cot.
        return [ops.multiply(1j, cotangents[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.imag(tangents[0])]


# --- binary ------------------------------------------------------------------------


class Add(Binary):
    numeric = numeric_complex = symbolic = staticmethod(operator.add)
    expression = "{0} + {1}"

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0] for _ in argnums]

    def jvp(self, primals, tangents, argnums):
        return [tangents[0] if len(tangents) == 1 else ops.add(tangents[0], tangents[1])]


class Subtract(Binary):
    numeric = numeric_complex = symbolic = staticmethod(operator.sub)
    expression = "{0} - {1}"

    def vjp(self, primals, cotangents, argnums, outputs):
        cot = cotangents[0]
        return [cot if i == 0 else ops.negative(cot) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        signed = [t if i == 0 else ops.negative(t) for i, t in zip(argnums, tangents)]
        return [signed[0] if len(signed) == 1 else ops.add(signed[0], signed[1])]


class Multiply(Binary):
    numeric = symbolic = staticmethod(operator.mul)
    numeric_complex = staticmethod(_complex_mul)
    expression = "{0} * {1}"

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return b if i == 0 else a
        # END TASK 2.3


class Divide(Binary):
    expression = "{0} / {1}"  # x / 0 raises: numeric gives IEEE's inf or nan
    expression_raises = True

    @staticmethod
    def numeric(a, b):
        try:
            return a / b
        except ZeroDivisionError:
            if a != a or a == 0:
                return nan
            return math.copysign(inf, a) * math.copysign(1.0, b)

    numeric_complex = staticmethod(_complex_div)
    symbolic = staticmethod(lambda a, b: a / b)

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return ops.reciprocal(b) if i == 0 else ops.negative(ops.divide(out, b))
        # END TASK 2.3


def _check_division_overflow(op, a, b):
    """MLX's CPU kernel divides int32 and int64 with the processor's division,
    which traps (SIGFPE, the process dies) on the one quotient that does not
    fit: the type's minimum divided by -1. mlxref raises instead. (int8 and
    int16 are divided as C ints, so there the quotient just wraps.)"""
    dtype = a.dtype
    if dtype is not _dt.int32 and dtype is not _dt.int64:
        return
    low, xs, ys = _dt.iinfo(dtype).min, a.data(), b.data()
    if low in xs and -1 in ys and any(x == low and y == -1 for x, y in zip(xs, ys)):
        symbol = "%" if op == "remainder" else "//"
        raise OverflowError(
            f"[{op}] Integer overflow: {low} {symbol} -1 in {dtype.name} (the quotient "
            f"{-low} does not fit). MLX's CPU kernel stops the process with SIGFPE here."
        )


class FloorDivide(Binary):
    """``a // b``, floored. On integers, as MLX 0.32.4's CPU kernel: the floored
    quotient (Python's ``//``) and 0 for a zero divisor."""

    @staticmethod
    def numeric(a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a // b if b else 0  # MLX: x // 0 is 0 for integers and bools
        # MLX computes floor(a / b); Python's float // differs at the edges
        # (inf // 1.0 is nan, 0.5 // -inf is -1.0; MLX gives inf and -0.0).
        return Floor.numeric(Divide.numeric(a, b))

    @staticmethod
    def float32_kernel(a, b, dtype):
        # MLX's floor_divide of floats is floor(divide(a, b)) (ops.cpp): two
        # ops, so the quotient is rounded to the dtype before the floor, and
        # float16's 1e-5 // -60000 is -0.0 (the quotient underflows), not -1.0.
        quotients = dtype.store(list(map(Divide.numeric, a, b)))
        return list(map(Floor.numeric, quotients))

    symbolic = staticmethod(lambda a, b: sympy.floor(a / b))

    def partial(self, i, a, b, out):
        return ops.zeros_like(a)  # piecewise constant

    def eval(self, inputs):
        _check_division_overflow("floor_divide", *inputs)
        return super().eval(inputs)


class Remainder(Binary):
    """``a % b`` with the divisor's sign (Python's ``%``). On integers, as MLX
    0.32.4's CPU kernel: ``x % 0`` is ``x``."""

    @staticmethod
    def numeric(a, b):
        try:
            r = a % b
        except ZeroDivisionError:
            if isinstance(a, int) and isinstance(b, int):
                return a  # MLX: x % 0 is x for integers and bools
            return nan
        # MLX adjusts C's remainder(a, b), whose zero has a's sign; Python's
        # float % gives its zero b's sign: remainder(0.0, -1.0) is 0.0 in MLX.
        return math.copysign(0.0, a) if r == 0 and type(r) is float else r

    # a - b * floor(a / b), which SymPy differentiates (Mod it does not)
    symbolic = staticmethod(lambda a, b: a - b * sympy.floor(a / b))

    def partial(self, i, a, b, out):
        # a % b = a - b * floor(a / b)
        return ops.ones_like(a) if i == 0 else ops.negative(ops.floor(ops.divide(a, b)))

    def eval(self, inputs):
        _check_division_overflow("remainder", *inputs)
        return super().eval(inputs)


class DivMod(Primitive):
    """``divmod(a, b)``: two outputs, the quotient ``a // b`` and the remainder
    ``a % b`` (MLX's ``DivMod``; its kernel is in mlx/backend/cpu/binary.cpp).

    Each output is FloorDivide's and Remainder's forward rule, which MLX's
    kernel matches (a float quotient is ``floor(a / b)`` with ``a / b``
    rounded to the dtype, a float remainder has the divisor's sign and a
    zero keeps ``a``'s sign), except where that kernel differs:

    - an integer divided by zero: MLX's kernel divides with the processor's
      division and the process dies (SIGFPE), where floor_divide and
      remainder give 0 and ``a``; mlxref raises ZeroDivisionError;
    - bool: MLX gives the quotient ``a`` and the remainder False, whatever
      ``b`` is (True // False is True, where floor_divide gives False).

    The rules are the derivatives, as SymPy checks them: the quotient is
    piecewise constant, the remainder's are Remainder's (1 and -floor(a / b)).
    MLX's own vjp and jvp give zeros for the remainder too, and its vmap
    returns one batch axis for two outputs (mlx/primitives.cpp ``DivMod``).
    """

    def output_shapes(self, inputs):
        return [inputs[0].shape, inputs[0].shape]

    def output_dtypes(self, inputs):
        return [inputs[0].dtype, inputs[0].dtype]

    def eval(self, inputs):
        a, b = inputs
        if a.dtype is _dt.bool_:
            return [list(a.data()), [False] * len(a.data())]
        if a.dtype.is_integer and 0 in b.data():
            raise ZeroDivisionError(
                f"[divmod] Integer division by zero in {a.dtype.name}. MLX's CPU kernel "
                "stops the process with SIGFPE here (floor_divide gives 0 and "
                "remainder gives a)."
            )
        _check_division_overflow("divmod", a, b)
        return FloorDivide().eval(inputs) + Remainder().eval(inputs)

    def vjp(self, primals, cotangents, argnums, outputs):
        # The quotient adds nothing (its derivative is zero almost everywhere).
        return Remainder().vjp(primals, cotangents[1:], argnums, outputs[1:])

    def jvp(self, primals, tangents, argnums):
        return FloorDivide().jvp(primals, tangents, argnums) + Remainder().jvp(
            primals, tangents, argnums)

    def vmap(self, inputs, axes):
        # MLX's DivMod::vmap: the inputs batched as for any binary op (the
        # elementwise rule's, read off the node it makes), then one DivMod.
        (quotient,), _ = vmap_elementwise(FloorDivide(), inputs, axes)
        return make_arrays(self, quotient.inputs()), [0, 0]


class Power(Binary):
    """``a ** b``. On integers, MLX's CPU kernel multiplies by repeated squaring
    in the type itself, so the result is ``a ** b`` modulo 2**bits (computed
    here as Python's three-argument ``pow``: time bounded by the width, however
    large ``b`` is), and a negative exponent gives 0 (even ``1 ** -1``)."""

    @staticmethod
    def numeric(a, b):
        if isinstance(a, int) and isinstance(b, int) and b < 0:
            return 0  # MLX: an integer to a negative integer power is 0 (even 1 ** -1)
        try:
            r = a**b
        except (ZeroDivisionError, OverflowError):  # C's pow: ±0 ** negative, or too large
            if not float(b).is_integer():
                return nan if a < 0 else inf
            return math.copysign(inf, a) if int(b) % 2 else inf  # (-0.0) ** -1 is -inf
        return nan if isinstance(r, complex) else r

    numeric_complex = staticmethod(_complex_pow)
    symbolic = staticmethod(lambda a, b: a**b)

    def partial(self, i, a, b, out):
        if i == 0:
            return ops.multiply(b, ops.power(a, ops.subtract(b, 1)))
        # d/db is log(a) * a**b, taken as 0 where a == 0 (as MLX does).
        log_a = ops.where(ops.equal(a, 0), ops.zeros_like(a), ops.log(a))
        return ops.multiply(log_a, out)

    def eval(self, inputs):
        a, b = inputs
        if not a.dtype.is_integer:
            return super().eval(inputs)
        modulus = 1 << (8 * a.dtype.size)  # the store then wraps to the signed range

        def numeric(x, e):
            return 0 if e < 0 else pow(x, e, modulus)

        return [apply(numeric, self.symbolic, a.data(), b.data())]


class Maximum(Binary):
    # x != x is the nan test: a nan on either side gives nan, as in MLX. The
    # same over whole lists is one comprehension, with no call per element
    # (ReLU is maximum(x, 0)).
    moves_elements = True  # each result is an input element, of the same dtype
    # a > b, not >=: a tie gives b, as MLX's (a > b) ? a : b does, so
    # maximum(0.0, -0.0) is -0.0.
    numeric = staticmethod(lambda a, b: a if a > b or a != a else b)
    numeric_lists = staticmethod(lambda a, b: [x if x > y or x != x else y for x, y in zip(a, b)])
    numeric_complex = staticmethod(_complex_maximum)
    symbolic = staticmethod(lambda a, b: sympy.Max(a, b))

    def partial(self, i, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        return (ops.greater(a, b) if i == 0 else ops.less_equal(a, b)).astype(a.dtype)


class Minimum(Binary):
    moves_elements = True
    # As Maximum's: minimum(-0.0, 0.0) is 0.0.
    numeric = staticmethod(lambda a, b: a if a < b or a != a else b)
    numeric_lists = staticmethod(lambda a, b: [x if x < y or x != x else y for x, y in zip(a, b)])
    numeric_complex = staticmethod(_complex_minimum)
    symbolic = staticmethod(lambda a, b: sympy.Min(a, b))

    def partial(self, i, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        return (ops.less(a, b) if i == 0 else ops.greater_equal(a, b)).astype(a.dtype)


class ArcTan2(Binary):
    numeric = staticmethod(math.atan2)
    symbolic = staticmethod(lambda a, b: sympy.atan2(a, b))

    def partial(self, i, a, b, out):
        denominator = ops.add(ops.square(a), ops.square(b))
        return ops.divide(b, denominator) if i == 0 else ops.negative(ops.divide(a, denominator))


class LogAddExp(Binary):
    @staticmethod
    def numeric(a, b):
        hi = Maximum.numeric(a, b)
        if hi in (inf, -inf) or hi != hi:  # inf - inf would make logaddexp(inf, inf) nan
            return hi
        lo = a if hi is b else b
        return hi + math.log1p(Exp.numeric(lo - hi)) if lo != -inf else hi

    @staticmethod
    def float32_kernel(a, b, dtype):
        # MLX (binary_ops.h): hi + log1p(exp(lo - hi)), each step rounded to
        # the dtype, with MLX's exp: logaddexp(0, -88.5) is 0.0, not 3.7e-39.
        # The sum cancels when hi is near -log(2), so every bit of exp counts.
        hi = Maximum.numeric_lists(a, b)
        lo = Minimum.numeric_lists(a, b)
        e = dtype.store(_exp_float32_exact(dtype.store([u - v for u, v in zip(lo, hi)])))
        logs = dtype.store([math.log1p(v) for v in e])
        return [v if u == -inf or v == inf else v + q for u, v, q in zip(lo, hi, logs)]

    numeric_complex = staticmethod(_complex_logaddexp)
    symbolic = staticmethod(lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)))

    def partial(self, i, a, b, out):
        if a.dtype is _COMPLEX64:
            # MLX's rules go through sigmoid(a - b), which refuses complex input.
            raise ValueError("[sigmoid] Not supported for complex64.")
        return ops.exp(ops.subtract(a if i == 0 else b, out))


class Equal(Comparison):
    """``a == b``; with ``equal_nan`` (``array_equal(..., equal_nan=True)``)
    two nans are equal too: MLX's ``NaNEqual`` (mlx/backend/cpu/binary_ops.h),
    where a complex number is nan when either part is."""

    symbolic = staticmethod(lambda a, b: _indicator(sympy.Eq(a, b)))

    def __init__(self, equal_nan=False):
        self.equal_nan = equal_nan
        if equal_nan:
            self.numeric = self.numeric_complex = _nan_equal

    numeric = numeric_complex = staticmethod(operator.eq)

    @property
    def name(self):
        return "NaNEqual" if self.equal_nan else "Equal"


def _nan_equal(a, b):
    return a == b or (cmath.isnan(a) and cmath.isnan(b))


class NotEqual(Comparison):
    numeric = numeric_complex = staticmethod(operator.ne)
    symbolic = staticmethod(lambda a, b: _indicator(sympy.Ne(a, b)))


class Less(Comparison):
    numeric = staticmethod(operator.lt)
    numeric_complex = staticmethod(lambda a, b: _complex_greater(b, a))
    symbolic = staticmethod(lambda a, b: _indicator(a < b))


class LessEqual(Comparison):
    numeric = staticmethod(operator.le)
    numeric_complex = staticmethod(lambda a, b: _complex_greater_equal(b, a))
    symbolic = staticmethod(lambda a, b: _indicator(a <= b))


class Greater(Comparison):
    numeric = staticmethod(operator.gt)
    numeric_complex = staticmethod(_complex_greater)
    symbolic = staticmethod(lambda a, b: _indicator(a > b))


class GreaterEqual(Comparison):
    numeric = staticmethod(operator.ge)
    numeric_complex = staticmethod(_complex_greater_equal)
    symbolic = staticmethod(lambda a, b: _indicator(a >= b))


class LogicalAnd(Comparison):
    numeric = staticmethod(lambda a, b: _truth(a) and _truth(b))
    symbolic = staticmethod(lambda a, b: _indicator(sympy.And(_condition(a), _condition(b))))


class LogicalOr(Comparison):
    numeric = staticmethod(lambda a, b: _truth(a) or _truth(b))
    symbolic = staticmethod(lambda a, b: _indicator(sympy.Or(_condition(a), _condition(b))))


# --- bitwise ------------------------------------------------------------------------


# MLX's BitwiseBinary::Op: each op's name (MLX's ``name()``) and its C operator.
_BITWISE = {
    "and": ("BitwiseAnd", operator.and_),
    "or": ("BitwiseOr", operator.or_),
    "xor": ("BitwiseXor", operator.xor),
    "left_shift": ("LeftShift", operator.lshift),
    "right_shift": ("RightShift", operator.rshift),
    "invert": ("BitwiseInvert", operator.invert),
}


@functools.cache
def _bitwise_function(op):
    """SymPy has no bitwise ops: a function that prints as ``bitwise_and(x, y)``
    and applies the op once its arguments are numbers, to their integer parts
    (what a cast to an integer dtype keeps, C's truncation)."""
    fn = _BITWISE[op][1]

    def eval(cls, *args):
        if all(a.is_Number for a in args):
            return sympy.Integer(fn(*map(int, args)))

    return type(f"bitwise_{op}", (sympy.Function,), {"eval": classmethod(eval)})


def _check_shift_counts(op, x, counts):
    """A shift by a negative count, or by the C type's width or more, is
    undefined in C++. C shifts 8- and 16-bit integers as 32-bit ints, so
    ``uint8 >> 9`` is well defined (0), but ``int32 << 40`` is not: MLX's CPU
    build gives ``1 << 40`` as 256 (the count taken modulo 32, x86's ``shl``)
    when it shifts element by element and 0 when its compiler vectorised the
    loop (one array broadcast against a long one). mlxref raises instead."""
    counts = counts.data()
    if not counts or is_symbolic(counts[0]):
        return
    width = 64 if x.dtype.size == 8 else 32
    low, high = min(counts), max(counts)
    if low < 0 or high >= width:
        bad = low if low < 0 else high
        raise ValueError(
            f"[{op}] Shift count {bad} is out of range for {x.dtype.name}: C++ defines "
            f"shifts by 0 to {width - 1} only, and MLX's CPU build gives different "
            f"results for this count depending on the arrays' layout."
        )


class BitwiseBinary(Binary):
    """MLX's ``BitwiseBinary``: and, or, xor, left and right shift (its ``op``)
    of integers or bools, both inputs of the output's dtype.

    The result is piecewise constant: its vjp is zeros like each input and
    its jvp zeros in the tangent's dtype, as MLX's.
    """

    def __init__(self, op):
        if op not in _BITWISE or op == "invert":
            raise ValueError(f"[BitwiseBinary] Unknown op {op!r}.")
        self.op = op

    @property
    def name(self):
        return _BITWISE[self.op][0]

    def numeric(self, a, b):
        return _BITWISE[self.op][1](a, b)

    def symbolic(self, a, b):
        return _bitwise_function(self.op)(a, b)

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[0].shape, tangents[0].dtype)]

    def eval(self, inputs):
        a, b = inputs
        if self.op in ("left_shift", "right_shift"):
            _check_shift_counts(self.op, a, b)
        # Python's ints shift and mask like two's complement; the store wraps.
        return [apply(_BITWISE[self.op][1], self.symbolic, a.data(), b.data())]


class BitwiseInvert(Unary):
    """MLX's ``BitwiseInvert``: ``~x`` of an integer (``~`` of a bool is
    ``logical_not``). MLX defines no vjp or jvp for it, so both raise."""

    numeric = staticmethod(operator.invert)
    symbolic = staticmethod(lambda x: _bitwise_function("invert")(x))

    vjp = Primitive.vjp
    jvp = Primitive.jvp


# --- ternary -----------------------------------------------------------------------


class Select(Primitive):
    """``where(condition, x, y)``: inputs already broadcast to one shape.

    The cotangent goes to ``x`` where the condition holds and to ``y``
    elsewhere; the condition itself gets a zero gradient. On SymPy elements
    the result is a ``Piecewise``: a symbolic condition (x > 0) has no truth value.
    """

    donates = True  # MLX's ternary kernel reuses a donatable input (allocator.donate)

    numeric = staticmethod(lambda c, x, y: x if _truth(c) else y)
    symbolic = staticmethod(lambda c, x, y: sympy.Piecewise((x, _condition(c)), (y, True)))

    def output_dtypes(self, inputs):
        return [inputs[1].dtype]

    def vjp(self, primals, cotangents, argnums, outputs):
        c, cot = primals[0], cotangents[0]
        zero = ops.zeros_like(cot)
        routes = [
            lambda: ops.zeros_like(primals[0]),
            lambda: ops.where(c, cot, zero),
            lambda: ops.where(c, zero, cot),
        ]
        return [routes[i]() for i in argnums]

    def jvp(self, primals, tangents, argnums):
        c = primals[0]
        t = dict(zip(argnums, tangents))
        zero = ops.zeros(c.shape, tangents[0].dtype if 0 not in t else primals[1].dtype)
        return [ops.where(c, t.get(1, zero), t.get(2, zero))]

    def eval(self, inputs):
        c, x, y = inputs
        return [apply(self.numeric, self.symbolic, c.data(), x.data(), y.data())]

    def vmap(self, inputs, axes):
        return vmap_elementwise(self, inputs, axes)
