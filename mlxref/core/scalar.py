"""The scalar namespaces that elementwise math is written against.

Every elementwise primitive names its math once, as a function of these
namespaces: ``Exp`` has ``op = "exp"``. ``NUMERIC.exp`` works on Python floats,
with IEEE results where ``math`` would raise (``log(0)`` is ``-inf``,
``sqrt(-1)`` is ``nan``, ``1/0`` is ``inf``), as MLX does. ``SYMBOLIC.exp`` is
the same function on SymPy expressions: that is how ``mlxref.symbolic`` checks
every derivative rule exactly. ``apply`` maps one over element lists.
"""

import functools
import math
import operator
import sys

inf = math.inf
nan = math.nan


class _Numeric:
    """Scalar math on Python floats, never raising for domain errors."""

    name = "numeric"
    pi = math.pi

    # Python's own operators: they run in C, on numbers and SymPy alike.
    add = staticmethod(operator.add)
    subtract = staticmethod(operator.sub)
    multiply = staticmethod(operator.mul)
    negative = staticmethod(operator.neg)
    abs = staticmethod(abs)
    equal = staticmethod(operator.eq)
    not_equal = staticmethod(operator.ne)
    less = staticmethod(operator.lt)
    less_equal = staticmethod(operator.le)
    greater = staticmethod(operator.gt)
    greater_equal = staticmethod(operator.ge)
    square = staticmethod(lambda x: x * x)

    @staticmethod
    def rsqrt(x):
        return _Numeric.divide(1, _Numeric.sqrt(x))

    @staticmethod
    def log2(x):
        return _Numeric.divide(_Numeric.log(x), math.log(2))

    @staticmethod
    def log10(x):
        return _Numeric.divide(_Numeric.log(x), math.log(10))

    @staticmethod
    def exp(x):
        try:
            return math.exp(x)
        except OverflowError:
            return inf

    @staticmethod
    def expm1(x):
        try:
            return math.expm1(x)
        except OverflowError:
            return inf

    @staticmethod
    def log(x):
        if x > 0:
            return math.log(x) if x != inf else inf
        return -inf if x == 0 else nan

    @staticmethod
    def log1p(x):
        if x > -1:
            return math.log1p(x) if x != inf else inf
        return -inf if x == -1 else nan

    @staticmethod
    def sqrt(x):
        if x >= 0:
            return math.sqrt(x)
        return nan

    sin = staticmethod(lambda x: math.sin(x) if math.isfinite(x) else nan)
    cos = staticmethod(lambda x: math.cos(x) if math.isfinite(x) else nan)
    tan = staticmethod(lambda x: math.tan(x) if math.isfinite(x) else nan)
    arcsin = staticmethod(lambda x: math.asin(x) if -1 <= x <= 1 else nan)
    arccos = staticmethod(lambda x: math.acos(x) if -1 <= x <= 1 else nan)
    arctan = staticmethod(math.atan)
    arctan2 = staticmethod(math.atan2)
    tanh = staticmethod(math.tanh)
    arcsinh = staticmethod(math.asinh)
    arccosh = staticmethod(lambda x: math.acosh(x) if x >= 1 else nan)

    @staticmethod
    def sinh(x):
        try:
            return math.sinh(x)
        except OverflowError:
            return inf if x > 0 else -inf

    @staticmethod
    def cosh(x):
        try:
            return math.cosh(x)
        except OverflowError:
            return inf

    @staticmethod
    def arctanh(x):
        if -1 < x < 1:
            return math.atanh(x)
        if x == 1:
            return inf
        return -inf if x == -1 else nan

    erf = staticmethod(math.erf)

    @staticmethod
    def erfinv(y):
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

    @staticmethod
    def floor(x):
        if not math.isfinite(x):
            return x
        r = float(math.floor(x))
        return math.copysign(r, x) if r == 0 else r  # floor(-0.0) is -0.0, as in C

    @staticmethod
    def ceil(x):
        if not math.isfinite(x):
            return x
        r = float(math.ceil(x))
        return math.copysign(r, x) if r == 0 else r  # ceil(-0.5) is -0.0, as in C

    @staticmethod
    def round(x, decimals=0):
        if not math.isfinite(x):
            return x
        return float(round(x, decimals))  # half to even, like MLX

    @staticmethod
    def sign(x):
        # nan compares false both ways, so its sign is 0, as in MLX.
        s = (x > 0) - (x < 0)
        return float(s) if isinstance(x, float) else s

    @staticmethod
    def divide(a, b):
        try:
            return a / b
        except ZeroDivisionError:
            if a != a or a == 0:
                return nan
            return math.copysign(inf, a) * math.copysign(1.0, b)

    @staticmethod
    def floor_divide(a, b):
        if isinstance(a, int) and isinstance(b, int):
            if b == 0:
                return 0  # integer division by zero: MLX's result is unspecified
            return a // b
        # MLX computes floor(a / b); Python's float // differs at the edges
        # (inf // 1.0 is nan, 0.5 // -inf is -1.0; MLX gives inf and -0.0).
        return _Numeric.floor(_Numeric.divide(a, b))

    @staticmethod
    def remainder(a, b):
        try:
            return a % b
        except ZeroDivisionError:
            if isinstance(a, int) and isinstance(b, int):
                return 0
            return nan

    @staticmethod
    def power(a, b):
        if isinstance(a, int) and isinstance(b, int) and b < 0:
            return 0  # MLX: an integer to a negative integer power is 0 (even 1 ** -1)
        try:
            r = a**b
        except ZeroDivisionError:
            return inf
        except OverflowError:
            return inf
        if isinstance(r, complex):
            return nan
        return r

    @staticmethod
    def maximum(a, b):
        if a != a or b != b:
            return nan
        return a if a >= b else b

    @staticmethod
    def minimum(a, b):
        if a != a or b != b:
            return nan
        return a if a <= b else b

    @staticmethod
    def logaddexp(a, b):
        hi = _Numeric.maximum(a, b)
        if hi in (inf, -inf) or hi != hi:  # inf - inf would make logaddexp(inf, inf) nan
            return hi
        lo = a if hi is b else b
        return hi + math.log1p(_Numeric.exp(lo - hi)) if lo != -inf else hi

    @staticmethod
    def sigmoid(x):
        # BEGIN TASK 1.1: sigmoid's forward rule, stable for any x
        if x >= 0:
            return 1.0 / (1.0 + _Numeric.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)
        # END TASK 1.1

    @staticmethod
    def where(c, a, b):
        return a if _truth_value(c) else b

    @staticmethod
    def logical_not(x):
        return not _truth_value(x)

    @staticmethod
    def truth(x):
        return x

    logical_and = staticmethod(lambda a, b: _truth_value(a) and _truth_value(b))
    logical_or = staticmethod(lambda a, b: _truth_value(a) or _truth_value(b))


def _truth_value(v):
    """``bool(v)`` for a number; TypeError for anything else.

    A SymPy expression (a 0/1 ``Piecewise`` indicator) is always truthy to
    Python, so ``a if c else b`` would silently pick ``a``: raising sends the
    whole list to the symbolic namespace instead.
    """
    if isinstance(v, (bool, int, float)):
        return bool(v)
    raise TypeError(f"no numeric truth value for {v!r}")


def _symbolic_condition(c):
    """A SymPy condition from a value: a comparison as it is, anything else as c != 0."""
    import sympy
    from sympy.logic.boolalg import BooleanAtom, BooleanFunction

    if isinstance(c, (sympy.core.relational.Relational, BooleanFunction, BooleanAtom)):
        return c
    if not isinstance(c, sympy.Basic):  # a plain number: its truth value
        return sympy.true if c else sympy.false
    return sympy.Ne(c, 0)


def _symbolic_round():
    """SymPy has no round-half-to-even of an expression: a function that has one."""
    import sympy

    class round_half_even(sympy.Function):  # noqa: N801 (prints like a function)
        @classmethod
        def eval(cls, x, decimals):
            if x.is_Number and decimals.is_Integer:
                return sympy.Rational(round(sympy.Rational(x) * 10**decimals)) / 10**decimals

    return lambda x, decimals=0: round_half_even(x, decimals)


class _Symbolic:
    """The same names, on SymPy expressions (imported only when first used)."""

    name = "symbolic"

    def __getattr__(self, name):
        import sympy

        indicator = lambda r: sympy.Piecewise((1, r), (0, True))  # noqa: E731
        table = {
            "pi": sympy.pi,
            "add": operator.add,
            "subtract": operator.sub,
            "multiply": operator.mul,
            "negative": operator.neg,
            "abs": sympy.Abs,
            "square": lambda x: x * x,
            "rsqrt": lambda x: 1 / sympy.sqrt(x),
            "log2": lambda x: sympy.log(x) / sympy.log(2),
            "log10": lambda x: sympy.log(x) / sympy.log(10),
            # A symbolic boolean is a 0/1 indicator, so masks can multiply.
            "equal": lambda a, b: indicator(sympy.Eq(a, b)),
            "not_equal": lambda a, b: indicator(sympy.Ne(a, b)),
            "less": lambda a, b: indicator(a < b),
            "less_equal": lambda a, b: indicator(a <= b),
            "greater": lambda a, b: indicator(a > b),
            "greater_equal": lambda a, b: indicator(a >= b),
            "exp": sympy.exp,
            "expm1": lambda x: sympy.exp(x) - 1,
            "log": sympy.log,
            "log1p": lambda x: sympy.log(1 + x),
            "sqrt": sympy.sqrt,
            "sin": sympy.sin,
            "cos": sympy.cos,
            "tan": sympy.tan,
            "arcsin": sympy.asin,
            "arccos": sympy.acos,
            "arctan": sympy.atan,
            "arctan2": sympy.atan2,
            "sinh": sympy.sinh,
            "cosh": sympy.cosh,
            "tanh": sympy.tanh,
            "arcsinh": sympy.asinh,
            "arccosh": sympy.acosh,
            "arctanh": sympy.atanh,
            "erf": sympy.erf,
            "erfinv": sympy.erfinv,
            "floor": sympy.floor,
            "ceil": sympy.ceiling,
            "round": _symbolic_round(),
            "sign": sympy.sign,
            "divide": lambda a, b: a / b,
            "floor_divide": lambda a, b: sympy.floor(a / b),
            # a - b * floor(a / b), which SymPy differentiates (Mod it does not)
            "remainder": lambda a, b: a - b * sympy.floor(a / b),
            "power": lambda a, b: a**b,
            "maximum": sympy.Max,
            "minimum": sympy.Min,
            "logaddexp": lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)),
            "sigmoid": lambda x: 1 / (1 + sympy.exp(-x)),
            # A symbolic boolean is a 0/1 indicator, so masks can multiply.
            "truth": lambda r: sympy.Piecewise((1, r), (0, True)),
            "where": lambda c, a, b: sympy.Piecewise((a, _symbolic_condition(c)), (b, True)),
            "logical_not": lambda x: indicator(sympy.Not(_symbolic_condition(x))),
            "logical_and": lambda a, b: indicator(
                sympy.And(_symbolic_condition(a), _symbolic_condition(b))
            ),
            "logical_or": lambda a, b: indicator(
                sympy.Or(_symbolic_condition(a), _symbolic_condition(b))
            ),
        }
        if name not in table:
            raise AttributeError(name)
        value = table[name]
        setattr(self, name, value)
        return value


NUMERIC = _Numeric()
SYMBOLIC = _Symbolic()


def _is_expression(value):
    return type(value) not in (float, int, bool) and "sympy" in sys.modules and isinstance(
        value, sys.modules["sympy"].Basic
    )


# A few hot ops as whole-list comprehensions: the same math as NUMERIC's
# function, without a Python call per element (ReLU is maximum(x, 0)).
# x != x is the NaN test: a NaN on either side gives NaN, as in MLX.
LIST_KERNELS = {
    "maximum": lambda a, b: [x if (x >= y or x != x) else y for x, y in zip(a, b)],
    "minimum": lambda a, b: [x if (x <= y or x != x) else y for x, y in zip(a, b)],
}


def apply(op, *datas):
    """``op`` mapped over equal-length lists, in the right namespace.

    ``op`` names a function of the namespaces ("exp"), or is a function
    ``op(ns, *elements)`` written against one. Lists of numbers use
    ``NUMERIC``. A list whose first element is a SymPy expression uses
    ``SYMBOLIC``, and so does one that makes ``NUMERIC`` raise ``TypeError``
    further down (``math`` cannot convert an expression, and an expression has
    no numeric truth value).
    """
    if not any(d and _is_expression(d[0]) for d in datas):
        kernel = LIST_KERNELS.get(op) if isinstance(op, str) else None
        if kernel is not None:
            try:
                return kernel(*datas)
            except TypeError:
                pass
        numeric = getattr(NUMERIC, op) if isinstance(op, str) else functools.partial(op, NUMERIC)
        try:
            return list(map(numeric, *datas))
        except TypeError:
            pass
    symbolic = getattr(SYMBOLIC, op) if isinstance(op, str) else functools.partial(op, SYMBOLIC)
    return list(map(symbolic, *datas))
