"""Elementwise primitives: unary, binary and the ternary Select.

Read alongside: mlx/primitives.h (``Abs`` ... ``Tanh``, ``Add`` ... ``Select``)
and mlx/primitives.cpp, where each class's vjp, jvp and vmap sit together.
Each class holds its math side by side, like micrograd's ``__mul__`` and its
``_backward``: ``numeric`` on Python numbers (``numeric_complex`` on complex64
elements; None where MLX refuses complex input), ``symbolic`` on SymPy
expressions (how ``mlxref.symbolic`` checks every rule exactly), and
``derivative(x, out)`` or ``partial(i, a, b, out)`` written with mlxref ops,
so gradients can be differentiated again. The ops layer has already broadcast
the inputs to one shape and promoted them to one dtype.

Complex inputs follow MLX's convention: the jvp multiplies the tangent by
f'(z), the vjp the cotangent by conj(f'(z)) (mlx/primitives.cpp, "The vjp
conjugates the jvp's multiplier"), so the gradient of a real-valued L(z) is
dL/dx + i dL/dy. Abs, Real, Imag and Conjugate have rules of their own.
Read next: mlxref/core/backend/cpu/unary.py and binary.py (how MLX computes
each op for every dtype: its float32 kernels, the complex edge cases) and
mlxref/symbolic/elementwise.py (the symbolic check of each class).
"""

import cmath
import itertools
import math
import operator

from .. import dtypes as _dt
from .. import ops
from ..backend.cpu import binary, unary
from ..scalar import (MAPPED_FROM, apply, condition, indicator, mapped, sympy,  # sympy: at first use
                      truth)
from .base import (Primitive, make_array, make_arrays, vjp_zeros, vmap_elementwise,
                   vmap_in_place)

inf, nan = math.inf, math.nan
_COMPLEX64 = _dt.complex64
M_2_SQRTPI = 1.12837916709551257390  # 2 / sqrt(pi), C's M_2_SQRTPI, as MLX's erf rules take it


class Unary(Primitive):
    """An elementwise function of one array: ``numeric(x)`` and ``symbolic(x)``.

    Its Jacobian is diagonal, so a subclass also gives ``derivative(x, out)``, the
    elementwise f'(x) as an array, and both modes multiply by it: the vjp
    scales the cotangent, the jvp scales the tangent.
    """

    donates = True  # MLX's unary kernel reuses a donatable input (allocator.donate)

    abstract = True  # a family, not a primitive of its own
    # Or ``numeric`` over a whole list, for speed: a C function mapped over
    # it, with ``numeric`` itself where that would differ (``scalar.mapped``).
    numeric_lists = None
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

    vmap = vmap_in_place

    def eval(self, inputs):
        (x,) = inputs
        data, dtype = x.data(), x.dtype
        # Evaluation stores the results as the dtype holds them: abs and
        # square of ints give ints again, and wrap. (The name only names a
        # refusal of complex64.)
        return [unary.unary_op(data, dtype, self.numeric, self.symbolic,
                               self.float32_kernel, self.numeric_complex,
                               self.name if dtype is _COMPLEX64 else None,
                               _numeric_lists(self, data))]


class UnaryOwnForm(Unary):
    """An elementwise function of one array whose MLX rule is not written as
    the tangent times the derivative: ``apply_derivative(t, x, out)`` builds
    MLX's graph for a tangent or cotangent ``t`` (``t / cos(x)²`` for tan,
    not ``t * (1 / cos(x)²)``), so the vjp and jvp give MLX's bits.
    ``derivative`` stays: complex inputs take MLX's conjugate convention
    through it, as every Unary does.
    """

    abstract = True  # a family, not a primitive of its own

    def apply_derivative(self, t, x, out):
        raise NotImplementedError

    def vjp(self, primals, cotangents, argnums, outputs):
        if primals[0].dtype is _COMPLEX64:
            return super().vjp(primals, cotangents, argnums, outputs)
        return [self.apply_derivative(cotangents[0], primals[0], outputs[0])]

    def jvp(self, primals, tangents, argnums):
        x = primals[0]
        if x.dtype is _COMPLEX64:
            return super().jvp(primals, tangents, argnums)
        return [self.apply_derivative(tangents[0], x, make_array(self, [x]))]


class Binary(Primitive):
    """An elementwise function of two same-shape arrays: ``numeric(a, b)`` and ``symbolic(a, b)``.

    A subclass also gives ``partial(i, a, b, out)``: d out/d a or d out/d b as an
    array. The vjp scales the cotangent by the partial of each requested
    input; the jvp sums tangent times partial over the inputs that have one.
    """

    donates = True  # MLX's binary kernel reuses a donatable input (allocator.donate)

    abstract = True  # a family, not a primitive of its own
    numeric_lists = None  # or ``numeric`` over whole lists, for speed (as Unary's)
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

    vmap = vmap_elementwise

    def eval(self, inputs):
        a, b = inputs
        # Evaluation stores the results as the dtype holds them: int + int
        # wraps, bool + bool is a bool again.
        data, dtype = a.data(), a.dtype
        return [binary.binary_op(data, b.data(), dtype, self.numeric, self.symbolic,
                                 self.float32_kernel, _numeric_lists(self, data),
                                 self.numeric_complex,
                                 self.name if dtype is _COMPLEX64 else None)]


class Comparison(Binary):
    """A binary op with a bool result: its gradient is zero (MLX's rule).

    On SymPy expressions the result is a 0/1 indicator (``scalar.indicator``),
    so masks can multiply. The jvp's zero keeps the tangent's float dtype rather
    than bool (MLX #3081).
    """

    abstract = True  # a family, not a primitive of its own
    # Nothing to store: the results are Python bools (or SymPy indicators)
    # already, as a bool array holds them.
    moves_elements = True

    def output_dtypes(self, inputs):
        return [_dt.bool_]

    vjp = vjp_zeros

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros(primals[0].shape, tangents[0].dtype)]


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
    numeric = staticmethod(unary.sign)
    numeric_complex = staticmethod(unary.complex_sign)

    @staticmethod
    def symbolic(x):
        x = sympy.sympify(x)
        # z / |z| for a complex element (x + I*y), which SymPy can simplify; it
        # leaves sign(x + I*y) alone.
        return x / sympy.Abs(x) if x.has(sympy.I) else sympy.sign(x)

    derivative = None  # piecewise constant: MLX's gradient is zero


class Square(Unary):
    numeric = staticmethod(lambda x: x * x)
    numeric_lists = staticmethod(lambda xs: list(map(operator.mul, xs, xs)))
    numeric_complex = staticmethod(lambda z: binary.complex_mul(z, z))
    symbolic = numeric  # the same on SymPy expressions
    expression = "{0} * {0}"

    def derivative(self, x, out):
        return ops.multiply(2, x)


class Sqrt(Unary):
    numeric = staticmethod(lambda x: math.sqrt(x) if x >= 0 else nan)
    numeric_lists = staticmethod(lambda xs: mapped(math.sqrt, Sqrt.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(cmath.sqrt)
    symbolic = staticmethod(lambda x: sympy.sqrt(x))

    def mlx_state(self):
        return [False]  # MLX's Sqrt holds recip (rsqrt is its Sqrt with recip = True)

    def derivative(self, x, out):
        return ops.divide(0.5, out)


class Rsqrt(UnaryOwnForm):
    mlx_name = "Sqrt"  # MLX's rsqrt is its Sqrt primitive with recip = True
    numeric = staticmethod(lambda x: Divide.numeric(1, Sqrt.numeric(x)))
    numeric_lists = staticmethod(
        lambda xs: Divide.numeric_lists([1] * len(xs), Sqrt.numeric_lists(xs)))
    # MLX: 1 / sqrt(z), the square root stored as complex64 first.
    numeric_complex = staticmethod(
        lambda z: binary.complex_div(1, _dt.complex64.cast(cmath.sqrt(z))))
    symbolic = staticmethod(lambda x: 1 / sympy.sqrt(x))
    float32_kernel = staticmethod(unary.rsqrt_float32)

    def mlx_state(self):
        return [True]

    def derivative(self, x, out):
        return ops.multiply(-0.5, ops.divide(out, x))

    def apply_derivative(self, t, x, out):
        return ops.multiply(ops.multiply(-0.5, t), ops.divide(out, x))  # MLX's: (-0.5 t) (out / x)


class Exp(Unary):
    numeric = staticmethod(unary.exp)
    numeric_lists = staticmethod(lambda xs: mapped(math.exp, unary.exp, xs))
    numeric_complex = staticmethod(unary.complex_exp)
    symbolic = staticmethod(lambda x: sympy.exp(x))
    float32_kernel = staticmethod(unary.exp_float32)

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return out
        # END TASK 2.4


class Expm1(Unary):
    numeric = staticmethod(unary.expm1)
    numeric_lists = staticmethod(lambda xs: mapped(math.expm1, unary.expm1, xs))
    symbolic = staticmethod(lambda x: sympy.exp(x) - 1)

    def derivative(self, x, out):
        return ops.add(out, 1)

    def jvp(self, primals, tangents, argnums):
        # MLX's jvp is t exp(x) (its vjp: cotangent (out + 1), as the derivative).
        x = primals[0]
        if x.dtype is _COMPLEX64:
            return super().jvp(primals, tangents, argnums)
        return [ops.multiply(tangents[0], ops.exp(x))]


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
        return unary.log(x, self.base)

    def numeric_lists(self, xs):
        return unary.log_lists(xs, self.base)

    def float32_kernel(self, data, dtype):
        return unary.LOG_KERNELS[self.base](data, dtype)

    def numeric_complex(self, z):
        ln = unary.complex_log(z)
        scale = self.LN_BASE[self.base]
        return ln if scale == 1.0 else complex(ln.real / scale, ln.imag / scale)

    def symbolic(self, x):
        return sympy.log(x) if self.base == "e" else sympy.log(x) / sympy.log(int(self.base))

    def derivative(self, x, out):
        return ops.reciprocal(ops.multiply(x, self.LN_BASE[self.base]))


class Log1p(UnaryOwnForm):
    numeric = staticmethod(lambda x: math.log1p(x) if x > -1 else (-inf if x == -1 else nan))
    numeric_lists = staticmethod(
        lambda xs: mapped(math.log1p, Log1p.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_log1p)
    symbolic = staticmethod(lambda x: sympy.log(1 + x))
    float32_kernel = staticmethod(unary.libm_float32("log1pf"))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(x, 1))

    def apply_derivative(self, t, x, out):
        return ops.divide(t, ops.add(1.0, x))


class Sin(Unary):
    # + 0.0: MLX's sin (simd/math.h) takes the sign from x < 0, so sin(-0.0) is 0.0.
    numeric = staticmethod(lambda x: math.sin(x) + 0.0 if math.isfinite(x) else nan)

    @staticmethod
    def numeric_lists(xs):
        out = mapped(math.sin, Sin.numeric, xs, nan_result=True)
        # math.sin keeps -0.0 (numeric's + 0.0 makes it 0.0; every other
        # result it leaves alone): only a list with a zero needs the sum.
        if 0.0 in out:
            return list(map(operator.add, out, itertools.repeat(0.0)))
        return out
    numeric_complex = staticmethod(unary.complex_sin)
    symbolic = staticmethod(lambda x: sympy.sin(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.cos(x)
        # END TASK 2.2


class Cos(Unary):
    numeric = staticmethod(lambda x: math.cos(x) if math.isfinite(x) else nan)
    numeric_lists = staticmethod(lambda xs: mapped(math.cos, Cos.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_cos)
    symbolic = staticmethod(lambda x: sympy.cos(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.2: sin and cos derivatives
        return ops.negative(ops.sin(x))
        # END TASK 2.2


class Tan(UnaryOwnForm):
    numeric = staticmethod(lambda x: math.tan(x) if math.isfinite(x) else nan)
    numeric_lists = staticmethod(lambda xs: mapped(math.tan, Tan.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_tan)
    symbolic = staticmethod(lambda x: sympy.tan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.square(ops.cos(x)))

    def apply_derivative(self, t, x, out):
        return ops.divide(t, ops.square(ops.cos(x)))


class ArcSin(Unary):
    numeric = staticmethod(lambda x: math.asin(x) if -1 <= x <= 1 else nan)
    numeric_lists = staticmethod(lambda xs: mapped(math.asin, ArcSin.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_arcsin)
    symbolic = staticmethod(lambda x: sympy.asin(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.subtract(1, ops.square(x)))


class ArcCos(Unary):
    numeric = staticmethod(lambda x: math.acos(x) if -1 <= x <= 1 else nan)
    numeric_lists = staticmethod(lambda xs: mapped(math.acos, ArcCos.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_arccos)
    symbolic = staticmethod(lambda x: sympy.acos(x))

    def derivative(self, x, out):
        return ops.negative(ops.rsqrt(ops.subtract(1, ops.square(x))))


class ArcTan(Unary):
    numeric = staticmethod(math.atan)
    numeric_complex = staticmethod(unary.complex_arctan)
    symbolic = staticmethod(lambda x: sympy.atan(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.add(1, ops.square(x)))


class Sinh(Unary):
    numeric = staticmethod(unary.sinh)
    numeric_lists = staticmethod(lambda xs: mapped(math.sinh, unary.sinh, xs))
    numeric_complex = staticmethod(unary.complex_sinh)
    symbolic = staticmethod(lambda x: sympy.sinh(x))

    def derivative(self, x, out):
        return ops.cosh(x)


class Cosh(Unary):
    numeric = staticmethod(unary.cosh)
    numeric_lists = staticmethod(lambda xs: mapped(math.cosh, unary.cosh, xs))
    numeric_complex = staticmethod(unary.complex_cosh)
    symbolic = staticmethod(lambda x: sympy.cosh(x))

    def derivative(self, x, out):
        return ops.sinh(x)


class Tanh(Unary):
    numeric = staticmethod(math.tanh)
    numeric_complex = staticmethod(unary.complex_tanh)
    symbolic = staticmethod(lambda x: sympy.tanh(x))

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.subtract(1, ops.square(out))
        # END TASK 2.4


class ArcSinh(Unary):
    numeric = staticmethod(math.asinh)
    numeric_complex = staticmethod(unary.complex_arcsinh)
    symbolic = staticmethod(lambda x: sympy.asinh(x))

    def derivative(self, x, out):
        return ops.rsqrt(ops.add(ops.square(x), 1))


class ArcCosh(Unary):
    numeric = staticmethod(lambda x: math.acosh(x) if x >= 1 else nan)
    numeric_lists = staticmethod(
        lambda xs: mapped(math.acosh, ArcCosh.numeric, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_arccosh)
    symbolic = staticmethod(lambda x: sympy.acosh(x))

    def derivative(self, x, out):
        if x.dtype is _COMPLEX64:
            # 1 / (sqrt(z - 1) sqrt(z + 1)): rsqrt(z^2 - 1) takes the other
            # branch where Re z < 0 (MLX's gradient there is this one).
            roots = ops.multiply(ops.sqrt(ops.subtract(x, 1)), ops.sqrt(ops.add(x, 1)))
            return ops.reciprocal(roots)
        return ops.rsqrt(ops.subtract(ops.square(x), 1))


class ArcTanh(UnaryOwnForm):
    numeric = staticmethod(unary.arctanh)
    numeric_lists = staticmethod(
        lambda xs: mapped(math.atanh, unary.arctanh, xs, nan_result=True))
    numeric_complex = staticmethod(unary.complex_arctanh)
    symbolic = staticmethod(lambda x: sympy.atanh(x))

    def derivative(self, x, out):
        return ops.reciprocal(ops.subtract(1, ops.square(x)))

    def apply_derivative(self, t, x, out):
        return ops.divide(t, ops.subtract(1.0, ops.square(x)))


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
    float32_kernel = staticmethod(unary.sigmoid_float32)

    def derivative(self, x, out):
        # BEGIN TASK 2.4: exp, tanh and sigmoid derivatives from the output
        return ops.multiply(out, ops.subtract(1, out))
        # END TASK 2.4


class Erf(UnaryOwnForm):
    numeric = staticmethod(math.erf)
    symbolic = staticmethod(lambda x: sympy.erf(x))
    float32_kernel = staticmethod(unary.erf_float32)

    def derivative(self, x, out):
        return ops.multiply(M_2_SQRTPI, ops.exp(ops.negative(ops.square(x))))

    def apply_derivative(self, t, x, out):
        # MLX's: (2/sqrt(pi) t) exp(-x²)
        return ops.multiply(ops.multiply(M_2_SQRTPI, t), ops.exp(ops.negative(ops.square(x))))


class ErfInv(UnaryOwnForm):
    numeric = staticmethod(unary.erfinv)
    symbolic = staticmethod(lambda y: sympy.erfinv(y))
    float32_kernel = staticmethod(unary.erfinv_float32)

    def derivative(self, x, out):
        return ops.multiply(1.0 / M_2_SQRTPI, ops.exp(ops.square(out)))

    def apply_derivative(self, t, x, out):
        # MLX's: (sqrt(pi)/2 t) exp(erfinv(x)²)
        return ops.multiply(ops.multiply(1.0 / M_2_SQRTPI, t), ops.exp(ops.square(out)))


class Floor(Unary):
    numeric = staticmethod(unary.floor)
    numeric_lists = staticmethod(unary.floor_lists)
    symbolic = staticmethod(lambda x: sympy.floor(x))

    derivative = None  # piecewise constant: MLX's gradient is zero


class Ceil(Unary):
    numeric = staticmethod(unary.ceil)
    numeric_lists = staticmethod(unary.ceil_lists)
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

    def numeric_lists(self, xs):
        # round in C; it gives an infinity or a nan back as it is, as numeric does.
        return list(map(float, map(round, xs, itertools.repeat(self.decimals))))

    def numeric_complex(self, z):
        return complex(self.numeric(z.real), self.numeric(z.imag))  # each part (MLX's rint)

    def symbolic(self, x):
        return unary.round_half_even()(x, self.decimals)

    derivative = None  # piecewise constant: MLX's gradient is zero


class LogicalNot(Unary):
    numeric = staticmethod(lambda x: not truth(x))
    symbolic = staticmethod(lambda x: indicator(sympy.Not(condition(x))))

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
    numeric_complex = staticmethod(binary.complex_mul)
    expression = "{0} * {1}"

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return b if i == 0 else a
        # END TASK 2.3


class Divide(Binary):
    expression = "{0} / {1}"  # x / 0 raises: numeric gives IEEE's inf or nan
    expression_raises = True

    numeric = staticmethod(binary.divide)
    numeric_lists = staticmethod(binary.divide_lists)
    numeric_complex = staticmethod(binary.complex_div)
    symbolic = staticmethod(lambda a, b: a / b)

    def partial(self, i, a, b, out):
        # BEGIN TASK 2.3: multiply and divide partials
        return ops.reciprocal(b) if i == 0 else ops.negative(ops.divide(out, b))
        # END TASK 2.3


class FloorDivide(Binary):
    """``a // b``, floored: ``floor(a / b)``, with the quotient rounded to the
    dtype first (integers: ``binary.floor_divide``)."""

    numeric = staticmethod(binary.floor_divide)
    float32_kernel = staticmethod(binary.floor_divide_float32)
    symbolic = staticmethod(lambda a, b: sympy.floor(a / b))

    def partial(self, i, a, b, out):
        return ops.zeros_like(a)  # piecewise constant

    def eval(self, inputs):
        a, b = inputs
        binary.check_integer_division("floor_divide", a.data(), b.data(), a.dtype)
        return super().eval(inputs)


class Remainder(Binary):
    """``a % b`` with the divisor's sign (Python's ``%``), a zero keeping
    ``a``'s sign (integers: ``binary.remainder``)."""

    numeric = staticmethod(binary.remainder)
    numeric_lists = staticmethod(binary.remainder_lists)
    # a - b * floor(a / b), which SymPy differentiates (Mod it does not)
    symbolic = staticmethod(lambda a, b: a - b * sympy.floor(a / b))

    def partial(self, i, a, b, out):
        # a % b = a - b * floor(a / b)
        return ops.ones_like(a) if i == 0 else ops.negative(ops.floor(ops.divide(a, b)))

    def eval(self, inputs):
        a, b = inputs
        binary.check_integer_division("remainder", a.data(), b.data(), a.dtype)
        return super().eval(inputs)


class DivMod(Primitive):
    """``divmod(a, b)``: two outputs, the quotient ``a // b`` and the remainder
    ``a % b`` (MLX's ``DivMod``; its kernel is in mlx/backend/cpu/binary.cpp).

    Each output is FloorDivide's and Remainder's forward rule, which MLX's
    kernel matches, except that an integer divided by zero raises (MLX's
    process dies: ``binary.check_integer_division``) and bool gives the
    quotient ``a`` and the remainder False, whatever ``b`` is (True // False
    is True, where floor_divide gives False).

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
        binary.check_integer_division("divmod", a.data(), b.data(), a.dtype)
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
    """``a ** b`` (integers: MLX's kernel, ``binary.integer_power``)."""

    numeric = staticmethod(binary.power)
    numeric_lists = staticmethod(binary.power_lists)  # bool or floating arrays (eval)
    numeric_complex = staticmethod(binary.complex_pow)
    symbolic = staticmethod(lambda a, b: a**b)

    def partial(self, i, a, b, out):
        if i == 0:
            return ops.multiply(ops.power(a, ops.subtract(b, 1)), b)
        # d/db is log(a) * a**b, taken as 0 where a**b is 0 (MLX's "0 * log 0
        # -> 0"), so at a = 0 and b <= 0 it is log(0) * a**b, as in MLX.
        return ops.where(out, ops.multiply(ops.log(a), out), 0.0)

    def eval(self, inputs):
        a, b = inputs
        if not a.dtype.is_integer:
            return super().eval(inputs)
        return [binary.integer_power(a.data(), b.data(), a.dtype, self.symbolic)]


class Maximum(Binary):
    moves_elements = True  # each result is an input element, of the same dtype
    # A nan on either side wins; a tie gives b, as MLX's (binary.maximum says why).
    numeric = staticmethod(lambda a, b: a if a > b or a != a else b)
    numeric_lists = staticmethod(binary.maximum)
    numeric_complex = staticmethod(binary.complex_maximum)
    symbolic = staticmethod(lambda a, b: sympy.Max(a, b))

    def partial(self, i, a, b, out):
        # Ties send the whole gradient to b, as in MLX.
        return (ops.greater(a, b) if i == 0 else ops.less_equal(a, b)).astype(a.dtype)


class Minimum(Binary):
    moves_elements = True
    numeric = staticmethod(lambda a, b: a if a < b or a != a else b)
    numeric_lists = staticmethod(binary.minimum)
    numeric_complex = staticmethod(binary.complex_minimum)
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

    # MLX's rules: vjp a = b (u / (a² + b²)), vjp b = -a (u / (a² + b²)); jvp
    # (b ta - a tb) / (a² + b²). The partials above are the same derivative.
    def vjp(self, primals, cotangents, argnums, outputs):
        a, b = primals
        scaled = ops.divide(cotangents[0], ops.add(ops.square(a), ops.square(b)))
        return [ops.multiply(b if i == 0 else ops.negative(a), scaled) for i in argnums]

    def jvp(self, primals, tangents, argnums):
        a, b = primals
        if len(argnums) == 2:
            numerator = ops.subtract(ops.multiply(b, tangents[0]), ops.multiply(a, tangents[1]))
        elif argnums[0] == 0:
            numerator = ops.multiply(b, tangents[0])
        else:
            numerator = ops.negative(ops.multiply(a, tangents[0]))
        return [ops.divide(numerator, ops.add(ops.square(a), ops.square(b)))]


class LogAddExp(Binary):
    numeric = staticmethod(binary.logaddexp)
    float32_kernel = staticmethod(binary.logaddexp_float32)
    numeric_complex = staticmethod(binary.complex_logaddexp)
    symbolic = staticmethod(lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)))

    def partial(self, i, a, b, out):
        if a.dtype is _COMPLEX64:
            # MLX's rules go through sigmoid(a - b), which refuses complex input.
            raise ValueError("[sigmoid] Not supported for complex64.")
        # MLX's: s = sigmoid(a - b) for a, 1 - s for b (not exp(a - out): the
        # same derivative, other last bits).
        s = ops.sigmoid(ops.subtract(a, b))
        return s if i == 0 else ops.subtract(1.0, s)


class Equal(Comparison):
    """``a == b``; with ``equal_nan`` (``array_equal(..., equal_nan=True)``)
    two nans are equal too: MLX's ``NaNEqual`` (mlx/backend/cpu/binary_ops.h),
    where a complex number is nan when either part is."""

    symbolic = staticmethod(lambda a, b: indicator(sympy.Eq(a, b)))

    def __init__(self, equal_nan=False):
        self.equal_nan = equal_nan
        if equal_nan:
            self.numeric = self.numeric_complex = binary.nan_equal

    numeric = numeric_complex = staticmethod(operator.eq)

    @property
    def name(self):
        return "NaNEqual" if self.equal_nan else "Equal"


class NotEqual(Comparison):
    numeric = numeric_complex = staticmethod(operator.ne)
    symbolic = staticmethod(lambda a, b: indicator(sympy.Ne(a, b)))


class Less(Comparison):
    numeric = staticmethod(operator.lt)
    numeric_complex = staticmethod(lambda a, b: binary.complex_greater(b, a))
    symbolic = staticmethod(lambda a, b: indicator(a < b))


class LessEqual(Comparison):
    numeric = staticmethod(operator.le)
    numeric_complex = staticmethod(lambda a, b: binary.complex_greater_equal(b, a))
    symbolic = staticmethod(lambda a, b: indicator(a <= b))


class Greater(Comparison):
    numeric = staticmethod(operator.gt)
    numeric_complex = staticmethod(binary.complex_greater)
    symbolic = staticmethod(lambda a, b: indicator(a > b))


class GreaterEqual(Comparison):
    numeric = staticmethod(operator.ge)
    numeric_complex = staticmethod(binary.complex_greater_equal)
    symbolic = staticmethod(lambda a, b: indicator(a >= b))


class LogicalAnd(Comparison):
    numeric = staticmethod(lambda a, b: truth(a) and truth(b))
    symbolic = staticmethod(lambda a, b: indicator(sympy.And(condition(a), condition(b))))


class LogicalOr(Comparison):
    numeric = staticmethod(lambda a, b: truth(a) or truth(b))
    symbolic = staticmethod(lambda a, b: indicator(sympy.Or(condition(a), condition(b))))


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
        return binary.bitwise_function(self.op, _BITWISE[self.op][1])(a, b)

    vjp = vjp_zeros
    jvp = Comparison.jvp

    def eval(self, inputs):
        a, b = inputs
        if self.op in ("left_shift", "right_shift"):
            binary.check_shift_counts(self.op, b.data(), a.dtype)
        # Python's ints shift and mask like two's complement; the store wraps.
        return [binary.binary_op(a.data(), b.data(), a.dtype, _BITWISE[self.op][1],
                                 self.symbolic)]


class BitwiseInvert(Unary):
    """MLX's ``BitwiseInvert``: ``~x`` of an integer (``~`` of a bool is
    ``logical_not``). MLX defines no vjp or jvp for it, so both raise."""

    numeric = staticmethod(operator.invert)
    symbolic = staticmethod(lambda x: binary.bitwise_function("invert", operator.invert)(x))

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

    numeric = staticmethod(lambda c, x, y: x if truth(c) else y)
    symbolic = staticmethod(lambda c, x, y: sympy.Piecewise((x, condition(c)), (y, True)))

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

    vmap = vmap_elementwise

    def eval(self, inputs):
        c, x, y = inputs
        return [apply(self.numeric, self.symbolic, c.data(), x.data(), y.data())]


# --- the whole-list forms, beside the rules they were written for --------------------

# Each class's ``numeric`` as written above, where the class gives
# ``numeric_lists``: evaluation maps the whole-list form only while the class's
# rule is still this one. A ``numeric`` set later (a course task's answer, a
# test's monkeypatch) runs as it is, element by element.
_LISTS_RULE = {cls: vars(cls)["numeric"] for cls in list(globals().values())
               if isinstance(cls, type) and vars(cls).get("numeric_lists") is not None}


def _numeric_lists(primitive, data):
    """``primitive.numeric_lists`` for ``data``, or None: for a short list
    (a 0-d op: the checks would cost more than they save, ``scalar.mapped``)
    and where the class's rule is not the one it was written beside."""
    if len(data) < MAPPED_FROM:
        return None
    cls = type(primitive)
    return primitive.numeric_lists if _LISTS_RULE.get(cls) is vars(cls).get("numeric") else None
