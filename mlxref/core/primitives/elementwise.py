"""Elementwise primitives: unary, binary and the ternary Select.

Read alongside: mlx/primitives.h (``Abs`` ... ``Tanh``, ``Add`` ... ``Select``)
and mlx/primitives.cpp, where each class's vjp, jvp and vmap sit together.

Each class states its math once, as ``scalar(ns, *elements)`` against a scalar
namespace (``mlxref.core.scalar``): Python floats normally, SymPy expressions
when the symbolic checks run. The ops layer has already broadcast the inputs to
one shape and promoted them to one dtype, so ``eval`` is a single list
comprehension.
"""

import math

from .. import ops
from .. import scalar as _scalar
from ..array import array
from .base import Primitive


class Unary(Primitive):
    """An elementwise function of one array; ``scalar(ns, x)`` is its math.

    Its Jacobian is diagonal, so a subclass gives ``derivative(x, out)``, the
    elementwise f'(x) as an array, and both modes multiply by it: the vjp
    scales the cotangent, the jvp scales the tangent.
    """

    abstract = True  # a family, not a primitive of its own

    def derivative(self, x, out):
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.multiply(cotangents[0], self.derivative(primals[0], outputs[0]))]

    def jvp(self, primals, tangents, argnums):
        # The output again, as a fresh node of this primitive: a rule that uses
        # it (exp, tanh, sigmoid...) stays differentiable for higher orders.
        x = primals[0]
        out = array._node(x.shape, x.dtype, self, [x])
        return [ops.multiply(tangents[0], self.derivative(x, out))]

    def eval(self, inputs):
        (x,) = inputs
        out = _scalar.apply(self.scalar, x._data)
        if x._dtype.category != "float":
            cast = x._dtype.cast  # abs, sign, square: ints stay int, bools stay bool
            try:
                out = [cast(v) for v in out]
            except TypeError:
                pass  # SymPy elements (logical_not of x > 0) stay symbolic
        return [out]


class Binary(Primitive):
    """An elementwise function of two same-shape arrays; ``scalar(ns, a, b)``.

    A subclass gives ``partials(a, b, out)``: the arrays d out/d a and
    d out/d b. The vjp scales the cotangent by the partial of each requested
    input; the jvp sums tangent times partial over the inputs that have one.
    """

    abstract = True  # a family, not a primitive of its own

    def partials(self, a, b, out):
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
        partials = self.partials(*primals, outputs[0])
        return [ops.multiply(cotangents[0], partials[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        a, b = primals
        out = array._node(a.shape, a.dtype, self, [a, b])
        partials = self.partials(a, b, out)
        result = None
        for i, t in zip(argnums, tangents):
            term = ops.multiply(t, partials[i])
            result = term if result is None else ops.add(result, term)
        return [result]

    def eval(self, inputs):
        a, b = inputs
        out = _scalar.apply(self.scalar, a._data, b._data)
        if a._dtype.category != "float":
            cast = a._dtype.cast  # int ** -1 truncates; bool + bool stays bool
            out = [cast(v) for v in out]
        return [out]


class Comparison(Binary):
    """A binary op with a bool result: its gradient is zero (MLX's rule).

    The jvp's zero keeps the tangent's float dtype rather than bool (MLX #3081).
    """

    abstract = True  # a family, not a primitive of its own

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[0].shape, tangents[0].dtype)]

    def eval(self, inputs):
        a, b = inputs
        compare = self.scalar
        return [_scalar.apply(lambda ns, x, y: ns.truth(compare(ns, x, y)), a._data, b._data)]


# --- unary -------------------------------------------------------------------------


class Abs(Unary):
    scalar = staticmethod(lambda ns, x: abs(x))

    def derivative(self, x, out):
        return ops.sign(x)


class Negative(Unary):
    scalar = staticmethod(lambda ns, x: -x)

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.negative(cotangents[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.negative(tangents[0])]


class Sign(Unary):
    scalar = staticmethod(lambda ns, x: ns.sign(x))

    def derivative(self, x, out):
        return ops.zeros_like(x)  # piecewise constant: MLX's gradient is zero


class Square(Unary):
    scalar = staticmethod(lambda ns, x: x * x)

    def derivative(self, x, out):
        return ops.multiply(2, x)


class Sqrt(Unary):
    scalar = staticmethod(lambda ns, x: ns.sqrt(x))

    def derivative(self, x, out):
        return ops.divide(0.5, out)


class Rsqrt(Unary):
    scalar = staticmethod(lambda ns, x: ns.divide(1, ns.sqrt(x)))

    def derivative(self, x, out):
        return ops.multiply(-0.5, ops.divide(out, x))


class Exp(Unary):
    scalar = staticmethod(lambda ns, x: ns.exp(x))

    def derivative(self, x, out):
        return out


class Expm1(Unary):
    scalar = staticmethod(lambda ns, x: ns.expm1(x))

    def derivative(self, x, out):
        return ops.add(out, 1)


class Log(Unary):
    """Natural, base-2 or base-10 logarithm (one class, as in MLX)."""

    _scalars = {
        "e": lambda ns, x: ns.log(x),
        # log(2), not log(2.0): symbolically it stays exact, log(x)/log(2).
        "2": lambda ns, x: ns.divide(ns.log(x), ns.log(2)),
        "10": lambda ns, x: ns.divide(ns.log(x), ns.log(10)),
    }

    def __init__(self, base="e"):
        self.base = base
        self.scalar = self._scalars[base]

    @property
    def name(self):
        return "Log" if self.base == "e" else "Log" + self.base

    def params(self):
        return {"base": self.base}

    def derivative(self, x, out):
        scale = {"e": 1.0, "2": math.log(2.0), "10": math.log(10.0)}[self.base]
        return ops.reciprocal(ops.multiply(x, scale))


class Log1p(Unary):
    scalar = staticmethod(lambda ns, x: ns.log1p(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(x, 1))


class Sin(Unary):
    scalar = staticmethod(lambda ns, x: ns.sin(x))

    def derivative(self, x, out):
        return ops.cos(x)


class Cos(Unary):
    scalar = staticmethod(lambda ns, x: ns.cos(x))

    def derivative(self, x, out):
        return ops.negative(ops.sin(x))


class Tan(Unary):
    scalar = staticmethod(lambda ns, x: ns.tan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.square(ops.cos(x)))


class ArcSin(Unary):
    scalar = staticmethod(lambda ns, x: ns.arcsin(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(1, ops.square(x)))


class ArcCos(Unary):
    scalar = staticmethod(lambda ns, x: ns.arccos(x))

    def derivative(self, x, out):
        return ops.negative(ops.rsqrt(ops.subtract(1, ops.square(x))))


class ArcTan(Unary):
    scalar = staticmethod(lambda ns, x: ns.arctan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(1, ops.square(x)))


class Sinh(Unary):
    scalar = staticmethod(lambda ns, x: ns.sinh(x))

    def derivative(self, x, out):
        return ops.cosh(x)


class Cosh(Unary):
    scalar = staticmethod(lambda ns, x: ns.cosh(x))

    def derivative(self, x, out):
        return ops.sinh(x)


class Tanh(Unary):
    scalar = staticmethod(lambda ns, x: ns.tanh(x))

    def derivative(self, x, out):
        return ops.subtract(1, ops.square(out))


class ArcSinh(Unary):
    scalar = staticmethod(lambda ns, x: ns.arcsinh(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.add(ops.square(x), 1))


class ArcCosh(Unary):
    scalar = staticmethod(lambda ns, x: ns.arccosh(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(ops.square(x), 1))


class ArcTanh(Unary):
    scalar = staticmethod(lambda ns, x: ns.arctanh(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.subtract(1, ops.square(x)))


class Sigmoid(Unary):
    scalar = staticmethod(lambda ns, x: ns.sigmoid(x))

    def derivative(self, x, out):
        return ops.multiply(out, ops.subtract(1, out))


class Erf(Unary):
    scalar = staticmethod(lambda ns, x: ns.erf(x))

    def derivative(self, x, out):
        return ops.multiply(2 / math.sqrt(math.pi), ops.exp(ops.negative(ops.square(x))))


class ErfInv(Unary):
    scalar = staticmethod(lambda ns, x: ns.erfinv(x))

    def derivative(self, x, out):
        return ops.multiply(math.sqrt(math.pi) / 2, ops.exp(ops.square(out)))


class Floor(Unary):
    scalar = staticmethod(lambda ns, x: ns.floor(x))

    def derivative(self, x, out):
        return ops.zeros_like(x)  # piecewise constant: MLX's gradient is zero


class Ceil(Unary):
    scalar = staticmethod(lambda ns, x: ns.ceil(x))

    def derivative(self, x, out):
        return ops.zeros_like(x)  # piecewise constant: MLX's gradient is zero


class Round(Unary):
    """Round half to even. ``decimals`` is MLX's parameter of ``mx.round``."""

    def __init__(self, decimals=0):
        self.decimals = decimals
        self.scalar = lambda ns, x: ns.round(x, decimals)

    def params(self):
        return {"decimals": self.decimals} if self.decimals else {}

    def derivative(self, x, out):
        return ops.zeros_like(x)  # piecewise constant: MLX's gradient is zero


class LogicalNot(Unary):
    scalar = staticmethod(lambda ns, x: ns.logical_not(x))

    def derivative(self, x, out):
        return ops.zeros_like(x)  # piecewise constant: MLX's gradient is zero


# --- binary ------------------------------------------------------------------------


class Add(Binary):
    scalar = staticmethod(lambda ns, a, b: a + b)

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0] for _ in argnums]

    def jvp(self, primals, tangents, argnums):
        return [tangents[0] if len(tangents) == 1 else ops.add(tangents[0], tangents[1])]


class Subtract(Binary):
    scalar = staticmethod(lambda ns, a, b: a - b)

    def vjp(self, primals, cotangents, argnums, outputs):
        cot = cotangents[0]
        return [cot if i == 0 else ops.negative(cot) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        signed = [t if i == 0 else ops.negative(t) for i, t in zip(argnums, tangents)]
        return [signed[0] if len(signed) == 1 else ops.add(signed[0], signed[1])]


class Multiply(Binary):
    scalar = staticmethod(lambda ns, a, b: a * b)

    def partials(self, a, b, out):
        return [b, a]


class Divide(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.divide(a, b))

    def partials(self, a, b, out):
        return [ops.reciprocal(b), ops.negative(ops.divide(out, b))]


class FloorDivide(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.floor_divide(a, b))

    def partials(self, a, b, out):
        return [ops.zeros_like(a), ops.zeros_like(b)]  # piecewise constant


class Remainder(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.remainder(a, b))

    def partials(self, a, b, out):
        # a % b = a - b * floor(a / b)
        return [ops.ones_like(a), ops.negative(ops.floor(ops.divide(a, b)))]


class Power(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.power(a, b))

    def partials(self, a, b, out):
        # d/db is log(a) * a**b, taken as 0 where a == 0 (as MLX does).
        d_a = ops.multiply(b, ops.power(a, ops.subtract(b, 1)))
        log_a = ops.where(ops.equal(a, 0), ops.zeros_like(a), ops.log(a))
        return [d_a, ops.multiply(log_a, out)]


class Maximum(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.maximum(a, b))

    def partials(self, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        mask = ops.greater(a, b)
        return [mask.astype(a.dtype), ops.logical_not(mask).astype(b.dtype)]


class Minimum(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.minimum(a, b))

    def partials(self, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        mask = ops.less(a, b)
        return [mask.astype(a.dtype), ops.logical_not(mask).astype(b.dtype)]


class ArcTan2(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.arctan2(a, b))

    def partials(self, a, b, out):
        denominator = ops.add(ops.square(a), ops.square(b))
        return [ops.divide(b, denominator), ops.negative(ops.divide(a, denominator))]


class LogAddExp(Binary):
    scalar = staticmethod(lambda ns, a, b: ns.logaddexp(a, b))

    def partials(self, a, b, out):
        return [ops.exp(ops.subtract(a, out)), ops.exp(ops.subtract(b, out))]


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
    scalar = staticmethod(lambda ns, a, b: ns.logical_and(a, b))


class LogicalOr(Comparison):
    scalar = staticmethod(lambda ns, a, b: ns.logical_or(a, b))


# --- ternary -----------------------------------------------------------------------


class Select(Primitive):
    """``where(condition, x, y)``: inputs already broadcast to one shape.

    The cotangent goes to ``x`` where the condition holds and to ``y``
    elsewhere; the condition itself gets a zero gradient.
    """

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
        # Through the scalar namespace: a symbolic condition (x > 0) gives a Piecewise.
        return [_scalar.apply(lambda ns, cv, xv, yv: ns.where(cv, xv, yv), c._data, x._data, y._data)]
