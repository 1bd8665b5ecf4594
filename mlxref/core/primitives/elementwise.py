"""Elementwise primitives: unary, binary and the ternary Select.

Read alongside: mlx/primitives.h (``Abs`` ... ``Tanh``, ``Add`` ... ``Select``)
and mlx/primitives.cpp, where each class's vjp, jvp and vmap sit together.

Each class names its math once, as ``op``: a function of the scalar namespaces
in ``mlxref.core.scalar`` (``NUMERIC.exp`` on Python floats, ``SYMBOLIC.exp``
on SymPy expressions when the symbolic checks run). The ops layer has already
broadcast the inputs to one shape and promoted them to one dtype, so ``eval``
maps ``op`` over the element lists.
"""

import math

from .. import ops
from .. import dtypes as _dt
from .. import scalar as _scalar
from ..array import array
from .base import Primitive, make_array, vmap_elementwise


def _keep_dtype(out, dtype):
    """Results cast back to an integer or bool dtype (SymPy expressions stay)."""
    if dtype.category == "float" or not out or _scalar._is_expression(out[0]):
        return out
    return list(map(dtype.cast, out))


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
        # abs, sign, square: ints stay int, bools stay bool
        return [_keep_dtype(_scalar.apply(self.op, x.data()), x.dtype)]


class Binary(Primitive):
    """An elementwise function of two same-shape arrays; ``scalar(ns, a, b)``.

    A subclass gives ``partial(i, a, b, out)``: d out/d a or d out/d b as an
    array. The vjp scales the cotangent by the partial of each requested
    input; the jvp sums tangent times partial over the inputs that have one.
    """

    abstract = True  # a family, not a primitive of its own

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
        # int ** -1 truncates; bool + bool stays bool
        return [_keep_dtype(_scalar.apply(self.op, a.data(), b.data()), a.dtype)]


class Comparison(Binary):
    """A binary op with a bool result: its gradient is zero (MLX's rule).

    The jvp's zero keeps the tangent's float dtype rather than bool (MLX #3081).
    """

    abstract = True  # a family, not a primitive of its own

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.zeros_like(primals[i]) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[0].shape, tangents[0].dtype)]

    def output_dtypes(self, inputs):
        return [_dt.bool_]

    def vmap(self, inputs, axes):
        return vmap_elementwise(self, inputs, axes)

    def eval(self, inputs):
        a, b = inputs
        return [_scalar.apply(self.op, a.data(), b.data())]


# --- unary -------------------------------------------------------------------------


class Abs(Unary):
    op = "abs"

    def derivative(self, x, out):
        return ops.sign(x)


class Negative(Unary):
    op = "negative"

    def vjp(self, primals, cotangents, argnums, outputs):
        return [ops.negative(cotangents[0])]

    def jvp(self, primals, tangents, argnums):
        return [ops.negative(tangents[0])]


class Sign(Unary):
    op = "sign"

    derivative = None  # piecewise constant: MLX's gradient is zero


class Square(Unary):
    op = "square"

    def derivative(self, x, out):
        return ops.multiply(2, x)


class Sqrt(Unary):
    op = "sqrt"

    def derivative(self, x, out):
        return ops.divide(0.5, out)


class Rsqrt(Unary):
    op = "rsqrt"

    def derivative(self, x, out):
        return ops.multiply(-0.5, ops.divide(out, x))


class Exp(Unary):
    op = "exp"

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return out
        # END TASK 2.4


class Expm1(Unary):
    op = "expm1"

    def derivative(self, x, out):
        return ops.add(out, 1)


class Log(Unary):
    """Natural, base-2 or base-10 logarithm (one class, as in MLX)."""

    def __init__(self, base="e"):
        self.base = base
        self.op = {"e": "log", "2": "log2", "10": "log10"}[base]

    @property
    def name(self):
        return "Log" if self.base == "e" else "Log" + self.base

    def params(self):
        return {"base": self.base}

    def derivative(self, x, out):
        scale = {"e": 1.0, "2": math.log(2.0), "10": math.log(10.0)}[self.base]
        return ops.reciprocal(ops.multiply(x, scale))


class Log1p(Unary):
    op = "log1p"

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(x, 1))


class Sin(Unary):
    op = "sin"

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.cos(x)
        # END TASK 2.2


class Cos(Unary):
    op = "cos"

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.negative(ops.sin(x))
        # END TASK 2.2


class Tan(Unary):
    op = "tan"

    def derivative(self, x, out):
        return ops.reciprocal(ops.square(ops.cos(x)))


class ArcSin(Unary):
    op = "arcsin"

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(1, ops.square(x)))


class ArcCos(Unary):
    op = "arccos"

    def derivative(self, x, out):
        return ops.negative(ops.rsqrt(ops.subtract(1, ops.square(x))))


class ArcTan(Unary):
    op = "arctan"

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(1, ops.square(x)))


class Sinh(Unary):
    op = "sinh"

    def derivative(self, x, out):
        return ops.cosh(x)


class Cosh(Unary):
    op = "cosh"

    def derivative(self, x, out):
        return ops.sinh(x)


class Tanh(Unary):
    op = "tanh"

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.subtract(1, ops.square(out))
        # END TASK 2.4


class ArcSinh(Unary):
    op = "arcsinh"

    def derivative(self, x, out):
        return ops.rsqrt(ops.add(ops.square(x), 1))


class ArcCosh(Unary):
    op = "arccosh"

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(ops.square(x), 1))


class ArcTanh(Unary):
    op = "arctanh"

    def derivative(self, x, out):
        return ops.reciprocal(ops.subtract(1, ops.square(x)))


class Sigmoid(Unary):
    op = "sigmoid"

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.multiply(out, ops.subtract(1, out))
        # END TASK 2.4


class Erf(Unary):
    op = "erf"

    def derivative(self, x, out):
        return ops.multiply(2 / math.sqrt(math.pi), ops.exp(ops.negative(ops.square(x))))


class ErfInv(Unary):
    op = "erfinv"

    def derivative(self, x, out):
        return ops.multiply(math.sqrt(math.pi) / 2, ops.exp(ops.square(out)))


class Floor(Unary):
    op = "floor"

    derivative = None  # piecewise constant: MLX's gradient is zero


class Ceil(Unary):
    op = "ceil"

    derivative = None  # piecewise constant: MLX's gradient is zero


class Round(Unary):
    """Round half to even. ``decimals`` is MLX's parameter of ``mx.round``."""

    op = "round"

    def __init__(self, decimals=0):
        self.decimals = decimals

    def eval(self, inputs):
        return [_scalar.apply(self.op, inputs[0].data(), [self.decimals] * inputs[0].size)]

    def params(self):
        return {"decimals": self.decimals} if self.decimals else {}

    derivative = None  # piecewise constant: MLX's gradient is zero


class LogicalNot(Unary):
    op = "logical_not"

    derivative = None  # piecewise constant: MLX's gradient is zero


# --- binary ------------------------------------------------------------------------


class Add(Binary):
    op = "add"

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0] for _ in argnums]

    def jvp(self, primals, tangents, argnums):
        return [tangents[0] if len(tangents) == 1 else ops.add(tangents[0], tangents[1])]


class Subtract(Binary):
    op = "subtract"

    def vjp(self, primals, cotangents, argnums, outputs):
        cot = cotangents[0]
        return [cot if i == 0 else ops.negative(cot) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        signed = [t if i == 0 else ops.negative(t) for i, t in zip(argnums, tangents)]
        return [signed[0] if len(signed) == 1 else ops.add(signed[0], signed[1])]


class Multiply(Binary):
    op = "multiply"

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return b if i == 0 else a
        # END TASK 2.3


class Divide(Binary):
    op = "divide"

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return ops.reciprocal(b) if i == 0 else ops.negative(ops.divide(out, b))
        # END TASK 2.3


class FloorDivide(Binary):
    op = "floor_divide"

    def partial(self, i, a, b, out):
        return ops.zeros_like(a)  # piecewise constant


class Remainder(Binary):
    op = "remainder"

    def partial(self, i, a, b, out):
        # a % b = a - b * floor(a / b)
        return ops.ones_like(a) if i == 0 else ops.negative(ops.floor(ops.divide(a, b)))


class Power(Binary):
    op = "power"

    def partial(self, i, a, b, out):
        if i == 0:
            return ops.multiply(b, ops.power(a, ops.subtract(b, 1)))
        # d/db is log(a) * a**b, taken as 0 where a == 0 (as MLX does).
        log_a = ops.where(ops.equal(a, 0), ops.zeros_like(a), ops.log(a))
        return ops.multiply(log_a, out)


class Maximum(Binary):
    op = "maximum"

    def partial(self, i, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        return (ops.greater(a, b) if i == 0 else ops.less_equal(a, b)).astype(a.dtype)


class Minimum(Binary):
    op = "minimum"

    def partial(self, i, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        return (ops.less(a, b) if i == 0 else ops.greater_equal(a, b)).astype(a.dtype)


class ArcTan2(Binary):
    op = "arctan2"

    def partial(self, i, a, b, out):
        denominator = ops.add(ops.square(a), ops.square(b))
        return ops.divide(b, denominator) if i == 0 else ops.negative(ops.divide(a, denominator))


class LogAddExp(Binary):
    op = "logaddexp"

    def partial(self, i, a, b, out):
        return ops.exp(ops.subtract(a if i == 0 else b, out))


class Equal(Comparison):
    op = "equal"


class NotEqual(Comparison):
    op = "not_equal"


class Less(Comparison):
    op = "less"


class LessEqual(Comparison):
    op = "less_equal"


class Greater(Comparison):
    op = "greater"


class GreaterEqual(Comparison):
    op = "greater_equal"


class LogicalAnd(Comparison):
    op = "logical_and"


class LogicalOr(Comparison):
    op = "logical_or"


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
        return [_scalar.apply("where", c.data(), x.data(), y.data())]

    def output_dtypes(self, inputs):
        return [inputs[1].dtype]

    def vmap(self, inputs, axes):
        return vmap_elementwise(self, inputs, axes)
