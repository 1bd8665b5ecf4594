"""Elementwise primitives: unary, binary and the ternary Select.

Read alongside: mlx/primitives.h (``Abs`` ... ``Tanh``, ``Add`` ... ``Select``)
and mlx/primitives.cpp, where each class's vjp, jvp and vmap sit together;
MLX's per-element math is in mlx/backend/cpu/unary_ops.h and binary_ops.h.

Each class holds its math side by side, like micrograd's ``__mul__`` and its
``_backward``:

- ``numeric``: the forward rule on Python numbers, with IEEE results where
  ``math`` would raise (``log(0)`` is ``-inf``, ``sqrt(-1)`` is ``nan``,
  ``1/0`` is ``inf``), as in MLX;
- ``symbolic``: the same function on SymPy expressions, which is how
  ``mlxref.symbolic`` checks every derivative rule exactly;
- ``derivative(x, out)`` (unary) or ``partial(i, a, b, out)`` (binary),
  written with mlxref ops so gradients can be differentiated again.

The ops layer has already broadcast the inputs to one shape and promoted them
to one dtype, so ``eval`` maps the math over the element lists with ``apply``.
Read next: mlxref/core/scalar.py (``apply``) and mlxref/symbolic/elementwise.py
(the symbolic check of each class).
"""

import functools
import math
import operator

from .. import dtypes as _dt
from .. import ops
from ..scalar import apply, is_symbolic, sympy  # sympy is imported at its first use
from .base import Primitive, make_array, vmap_elementwise

inf, nan = math.inf, math.nan


class Unary(Primitive):
    """An elementwise function of one array: ``numeric(x)`` and ``symbolic(x)``.

    Its Jacobian is diagonal, so a subclass also gives ``derivative(x, out)``, the
    elementwise f'(x) as an array, and both modes multiply by it: the vjp
    scales the cotangent, the jvp scales the tangent.
    """

    abstract = True  # a family, not a primitive of its own

    def derivative(self, x, out):
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
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
        return [apply(self.numeric, self.symbolic, x.data())]


class Binary(Primitive):
    """An elementwise function of two same-shape arrays: ``numeric(a, b)`` and ``symbolic(a, b)``.

    A subclass also gives ``partial(i, a, b, out)``: d out/d a or d out/d b as an
    array. The vjp scales the cotangent by the partial of each requested
    input; the jvp sums tangent times partial over the inputs that have one.
    """

    abstract = True  # a family, not a primitive of its own
    numeric_lists = None  # or ``numeric`` over whole lists, for speed (Maximum, Minimum)

    def partial(self, i, a, b, out):
        """d out / d a (``i`` = 0) or d out / d b (``i`` = 1), elementwise."""
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
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
        return [apply(self.numeric, self.symbolic, a.data(), b.data(),
                      numeric_lists=self.numeric_lists)]


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
        return [apply(self.numeric, self.symbolic, a.data(), b.data())]


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


# --- unary -------------------------------------------------------------------------


class Abs(Unary):
    numeric = staticmethod(abs)
    symbolic = staticmethod(lambda x: sympy.Abs(x))

    def derivative(self, x, out):
        return ops.sign(x)


class Negative(Unary):
    numeric = symbolic = staticmethod(operator.neg)

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

    symbolic = staticmethod(lambda x: sympy.sign(x))

    derivative = None  # piecewise constant: MLX's gradient is zero


class Square(Unary):
    numeric = staticmethod(lambda x: x * x)
    symbolic = numeric  # the same on SymPy expressions

    def derivative(self, x, out):
        return ops.multiply(2, x)


class Sqrt(Unary):
    numeric = staticmethod(lambda x: math.sqrt(x) if x >= 0 else nan)
    symbolic = staticmethod(lambda x: sympy.sqrt(x))

    def derivative(self, x, out):
        return ops.divide(0.5, out)


class Rsqrt(Unary):
    numeric = staticmethod(lambda x: Divide.numeric(1, Sqrt.numeric(x)))
    symbolic = staticmethod(lambda x: 1 / sympy.sqrt(x))

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
    symbolic = staticmethod(lambda x: sympy.exp(x))

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

    def numeric(self, x):
        ln = math.log(x) if x > 0 else (-inf if x == 0 else nan)
        return ln / self.LN_BASE[self.base]

    def symbolic(self, x):
        return sympy.log(x) if self.base == "e" else sympy.log(x) / sympy.log(int(self.base))

    def derivative(self, x, out):
        return ops.reciprocal(ops.multiply(x, self.LN_BASE[self.base]))


class Log1p(Unary):
    numeric = staticmethod(lambda x: math.log1p(x) if x > -1 else (-inf if x == -1 else nan))
    symbolic = staticmethod(lambda x: sympy.log(1 + x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(x, 1))


class Sin(Unary):
    numeric = staticmethod(lambda x: math.sin(x) if math.isfinite(x) else nan)
    symbolic = staticmethod(lambda x: sympy.sin(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.cos(x)
        # END TASK 2.2


class Cos(Unary):
    numeric = staticmethod(lambda x: math.cos(x) if math.isfinite(x) else nan)
    symbolic = staticmethod(lambda x: sympy.cos(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.negative(ops.sin(x))
        # END TASK 2.2


class Tan(Unary):
    numeric = staticmethod(lambda x: math.tan(x) if math.isfinite(x) else nan)
    symbolic = staticmethod(lambda x: sympy.tan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.square(ops.cos(x)))


class ArcSin(Unary):
    numeric = staticmethod(lambda x: math.asin(x) if -1 <= x <= 1 else nan)
    symbolic = staticmethod(lambda x: sympy.asin(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(1, ops.square(x)))


class ArcCos(Unary):
    numeric = staticmethod(lambda x: math.acos(x) if -1 <= x <= 1 else nan)
    symbolic = staticmethod(lambda x: sympy.acos(x))

    def derivative(self, x, out):
        return ops.negative(ops.rsqrt(ops.subtract(1, ops.square(x))))


class ArcTan(Unary):
    numeric = staticmethod(math.atan)
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

    symbolic = staticmethod(lambda x: sympy.sinh(x))

    def derivative(self, x, out):
        return ops.cosh(x)


class Cosh(Unary):
    numeric = staticmethod(_inf_on_overflow(math.cosh))
    symbolic = staticmethod(lambda x: sympy.cosh(x))

    def derivative(self, x, out):
        return ops.sinh(x)


class Tanh(Unary):
    numeric = staticmethod(math.tanh)
    symbolic = staticmethod(lambda x: sympy.tanh(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.subtract(1, ops.square(out))
        # END TASK 2.4


class ArcSinh(Unary):
    numeric = staticmethod(math.asinh)
    symbolic = staticmethod(lambda x: sympy.asinh(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.add(ops.square(x), 1))


class ArcCosh(Unary):
    numeric = staticmethod(lambda x: math.acosh(x) if x >= 1 else nan)
    symbolic = staticmethod(lambda x: sympy.acosh(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(ops.square(x), 1))


class ArcTanh(Unary):
    @staticmethod
    def numeric(x):
        if -1 < x < 1:
            return math.atanh(x)
        if x == 1:
            return inf
        return -inf if x == -1 else nan

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

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.multiply(out, ops.subtract(1, out))
        # END TASK 2.4


class Erf(Unary):
    numeric = staticmethod(math.erf)
    symbolic = staticmethod(lambda x: sympy.erf(x))

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


# --- binary ------------------------------------------------------------------------


class Add(Binary):
    numeric = symbolic = staticmethod(operator.add)

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0] for _ in argnums]

    def jvp(self, primals, tangents, argnums):
        return [tangents[0] if len(tangents) == 1 else ops.add(tangents[0], tangents[1])]


class Subtract(Binary):
    numeric = symbolic = staticmethod(operator.sub)

    def vjp(self, primals, cotangents, argnums, outputs):
        cot = cotangents[0]
        return [cot if i == 0 else ops.negative(cot) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        signed = [t if i == 0 else ops.negative(t) for i, t in zip(argnums, tangents)]
        return [signed[0] if len(signed) == 1 else ops.add(signed[0], signed[1])]


class Multiply(Binary):
    numeric = symbolic = staticmethod(operator.mul)

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return b if i == 0 else a
        # END TASK 2.3


class Divide(Binary):
    @staticmethod
    def numeric(a, b):
        try:
            return a / b
        except ZeroDivisionError:
            if a != a or a == 0:
                return nan
            return math.copysign(inf, a) * math.copysign(1.0, b)

    symbolic = staticmethod(lambda a, b: a / b)

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return ops.reciprocal(b) if i == 0 else ops.negative(ops.divide(out, b))
        # END TASK 2.3


class FloorDivide(Binary):
    @staticmethod
    def numeric(a, b):
        if isinstance(a, int) and isinstance(b, int):
            if b == 0:
                return 0  # integer division by zero: MLX's result is unspecified
            return a // b
        # MLX computes floor(a / b); Python's float // differs at the edges
        # (inf // 1.0 is nan, 0.5 // -inf is -1.0; MLX gives inf and -0.0).
        return Floor.numeric(Divide.numeric(a, b))

    symbolic = staticmethod(lambda a, b: sympy.floor(a / b))

    def partial(self, i, a, b, out):
        return ops.zeros_like(a)  # piecewise constant


class Remainder(Binary):
    @staticmethod
    def numeric(a, b):
        try:
            return a % b
        except ZeroDivisionError:
            if isinstance(a, int) and isinstance(b, int):
                return 0
            return nan

    # a - b * floor(a / b), which SymPy differentiates (Mod it does not)
    symbolic = staticmethod(lambda a, b: a - b * sympy.floor(a / b))

    def partial(self, i, a, b, out):
        # a % b = a - b * floor(a / b)
        return ops.ones_like(a) if i == 0 else ops.negative(ops.floor(ops.divide(a, b)))


class Power(Binary):
    @staticmethod
    def numeric(a, b):
        if isinstance(a, int) and isinstance(b, int) and b < 0:
            return 0  # MLX: an integer to a negative integer power is 0 (even 1 ** -1)
        try:
            r = a**b
        except (ZeroDivisionError, OverflowError):
            return inf
        return nan if isinstance(r, complex) else r

    symbolic = staticmethod(lambda a, b: a**b)

    def partial(self, i, a, b, out):
        if i == 0:
            return ops.multiply(b, ops.power(a, ops.subtract(b, 1)))
        # d/db is log(a) * a**b, taken as 0 where a == 0 (as MLX does).
        log_a = ops.where(ops.equal(a, 0), ops.zeros_like(a), ops.log(a))
        return ops.multiply(log_a, out)


class Maximum(Binary):
    # x != x is the nan test: a nan on either side gives nan, as in MLX. The
    # same over whole lists is one comprehension, with no call per element
    # (ReLU is maximum(x, 0)).
    moves_elements = True  # each result is an input element, of the same dtype
    numeric = staticmethod(lambda a, b: a if a >= b or a != a else b)
    numeric_lists = staticmethod(lambda a, b: [x if x >= y or x != x else y for x, y in zip(a, b)])
    symbolic = staticmethod(lambda a, b: sympy.Max(a, b))

    def partial(self, i, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        return (ops.greater(a, b) if i == 0 else ops.less_equal(a, b)).astype(a.dtype)


class Minimum(Binary):
    # As Maximum's.
    moves_elements = True
    numeric = staticmethod(lambda a, b: a if a <= b or a != a else b)
    numeric_lists = staticmethod(lambda a, b: [x if x <= y or x != x else y for x, y in zip(a, b)])
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

    symbolic = staticmethod(lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)))

    def partial(self, i, a, b, out):
        return ops.exp(ops.subtract(a if i == 0 else b, out))


class Equal(Comparison):
    numeric = staticmethod(operator.eq)
    symbolic = staticmethod(lambda a, b: _indicator(sympy.Eq(a, b)))


class NotEqual(Comparison):
    numeric = staticmethod(operator.ne)
    symbolic = staticmethod(lambda a, b: _indicator(sympy.Ne(a, b)))


class Less(Comparison):
    numeric = staticmethod(operator.lt)
    symbolic = staticmethod(lambda a, b: _indicator(a < b))


class LessEqual(Comparison):
    numeric = staticmethod(operator.le)
    symbolic = staticmethod(lambda a, b: _indicator(a <= b))


class Greater(Comparison):
    numeric = staticmethod(operator.gt)
    symbolic = staticmethod(lambda a, b: _indicator(a > b))


class GreaterEqual(Comparison):
    numeric = staticmethod(operator.ge)
    symbolic = staticmethod(lambda a, b: _indicator(a >= b))


class LogicalAnd(Comparison):
    numeric = staticmethod(lambda a, b: _truth(a) and _truth(b))
    symbolic = staticmethod(lambda a, b: _indicator(sympy.And(_condition(a), _condition(b))))


class LogicalOr(Comparison):
    numeric = staticmethod(lambda a, b: _truth(a) or _truth(b))
    symbolic = staticmethod(lambda a, b: _indicator(sympy.Or(_condition(a), _condition(b))))


# --- ternary -----------------------------------------------------------------------


class Select(Primitive):
    """``where(condition, x, y)``: inputs already broadcast to one shape.

    The cotangent goes to ``x`` where the condition holds and to ``y``
    elsewhere; the condition itself gets a zero gradient. On SymPy elements
    the result is a ``Piecewise``: a symbolic condition (x > 0) has no truth value.
    """

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
