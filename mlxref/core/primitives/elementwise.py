"""Elementwise primitives: unary, binary and the ternary Select.

Read alongside: mlx/primitives.h (``Abs`` ... ``Tanh``, ``Add`` ... ``Select``)
and mlx/primitives.cpp, where each class's vjp, jvp and vmap sit together.

Each class states its math once, as ``scalar(ns, *elements)`` against a scalar
namespace (``mlxref.core.scalar``): Python floats normally, SymPy expressions
when the symbolic checks run. The ops layer has already broadcast the inputs to
one shape and promoted them to one dtype, so ``eval`` is a single list
comprehension.
"""

from .. import scalar as _scalar
from .base import Primitive


class Unary(Primitive):
    """An elementwise function of one array; ``scalar(ns, x)`` is its math."""

    def eval(self, inputs):
        (x,) = inputs
        out = _scalar.apply(self.scalar, x._data)
        if not x._dtype.is_float and x._dtype.category == "int":
            out = [int(v) for v in out]
        return [out]


class Binary(Primitive):
    """An elementwise function of two same-shape arrays; ``scalar(ns, a, b)``."""

    def eval(self, inputs):
        a, b = inputs
        out = _scalar.apply(self.scalar, a._data, b._data)
        if a._dtype.category != "float":
            cast = a._dtype.cast  # int ** -1 truncates; bool + bool stays bool
            out = [cast(v) for v in out]
        return [out]


class Comparison(Binary):
    """A binary op with a bool result."""

    def eval(self, inputs):
        a, b = inputs
        return [_scalar.apply(self.scalar, a._data, b._data)]


# --- unary -------------------------------------------------------------------------


class Abs(Unary):
    scalar = staticmethod(lambda ns, x: abs(x))


class Negative(Unary):
    scalar = staticmethod(lambda ns, x: -x)


class Sign(Unary):
    scalar = staticmethod(lambda ns, x: ns.sign(x))


class Square(Unary):
    scalar = staticmethod(lambda ns, x: x * x)


class Sqrt(Unary):
    scalar = staticmethod(lambda ns, x: ns.sqrt(x))


class Rsqrt(Unary):
    scalar = staticmethod(lambda ns, x: ns.divide(1.0, ns.sqrt(x)))


class Exp(Unary):
    scalar = staticmethod(lambda ns, x: ns.exp(x))


class Expm1(Unary):
    scalar = staticmethod(lambda ns, x: ns.expm1(x))


class Log(Unary):
    """Natural, base-2 or base-10 logarithm (one class, as in MLX)."""

    _scalars = {
        "e": lambda ns, x: ns.log(x),
        "2": lambda ns, x: ns.divide(ns.log(x), ns.log(2.0)),
        "10": lambda ns, x: ns.divide(ns.log(x), ns.log(10.0)),
    }

    def __init__(self, base="e"):
        self.base = base
        self.scalar = self._scalars[base]

    @property
    def name(self):
        return "Log" if self.base == "e" else "Log" + self.base


class Log1p(Unary):
    scalar = staticmethod(lambda ns, x: ns.log1p(x))


class Sin(Unary):
    scalar = staticmethod(lambda ns, x: ns.sin(x))


class Cos(Unary):
    scalar = staticmethod(lambda ns, x: ns.cos(x))


class Tan(Unary):
    scalar = staticmethod(lambda ns, x: ns.tan(x))


class ArcSin(Unary):
    scalar = staticmethod(lambda ns, x: ns.arcsin(x))


class ArcCos(Unary):
    scalar = staticmethod(lambda ns, x: ns.arccos(x))


class ArcTan(Unary):
    scalar = staticmethod(lambda ns, x: ns.arctan(x))


class Sinh(Unary):
    scalar = staticmethod(lambda ns, x: ns.sinh(x))


class Cosh(Unary):
    scalar = staticmethod(lambda ns, x: ns.cosh(x))


class Tanh(Unary):
    scalar = staticmethod(lambda ns, x: ns.tanh(x))


class ArcSinh(Unary):
    scalar = staticmethod(lambda ns, x: ns.arcsinh(x))


class ArcCosh(Unary):
    scalar = staticmethod(lambda ns, x: ns.arccosh(x))


class ArcTanh(Unary):
    scalar = staticmethod(lambda ns, x: ns.arctanh(x))


class Sigmoid(Unary):
    scalar = staticmethod(lambda ns, x: ns.sigmoid(x))


class Erf(Unary):
    scalar = staticmethod(lambda ns, x: ns.erf(x))


class ErfInv(Unary):
    scalar = staticmethod(lambda ns, x: ns.erfinv(x))


class Floor(Unary):
    scalar = staticmethod(lambda ns, x: ns.floor(x))


class Ceil(Unary):
    scalar = staticmethod(lambda ns, x: ns.ceil(x))


class Round(Unary):
    """Round half to even. ``decimals`` is MLX's parameter of ``mx.round``."""

    def __init__(self, decimals=0):
        self.decimals = decimals
        self.scalar = lambda ns, x: ns.round(x, decimals)

    def params(self):
        return {"decimals": self.decimals} if self.decimals else {}


class LogicalNot(Unary):
    scalar = staticmethod(lambda ns, x: not x)


# --- binary ------------------------------------------------------------------------


class Add(Binary):
    scalar = staticmethod(lambda ns, a, b: a + b)


class Subtract(Binary):
    scalar = staticmethod(lambda ns, a, b: a - b)


class Multiply(Binary):
    scalar = staticmethod(lambda ns, a, b: a * b)


class Divide(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.divide(a, b))


class FloorDivide(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.floor_divide(a, b))


class Remainder(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.remainder(a, b))


class Power(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.power(a, b))


class Maximum(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.maximum(a, b))


class Minimum(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.minimum(a, b))


class ArcTan2(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.arctan2(a, b))


class LogAddExp(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.logaddexp(a, b))


class Equal(Comparison):
    scalar = staticmethod(lambda ns, a, b: a == b)


class NotEqual(Comparison):
    scalar = staticmethod(lambda ns, a, b: a != b)


class Less(Comparison):
    scalar = staticmethod(lambda ns, a, b: a < b)


class LessEqual(Comparison):
    scalar = staticmethod(lambda ns, a, b: a <= b)


class Greater(Comparison):
    scalar = staticmethod(lambda ns, a, b: a > b)


class GreaterEqual(Comparison):
    scalar = staticmethod(lambda ns, a, b: a >= b)


class LogicalAnd(Comparison):
    scalar = staticmethod(lambda ns, a, b: bool(a) and bool(b))


class LogicalOr(Comparison):
    scalar = staticmethod(lambda ns, a, b: bool(a) or bool(b))


# --- ternary -----------------------------------------------------------------------


class Select(Primitive):
    """``where(condition, x, y)``: inputs already broadcast to one shape."""

    def eval(self, inputs):
        c, x, y = inputs
        return [[xv if cv else yv for cv, xv, yv in zip(c._data, x._data, y._data)]]
