"""The scalar namespaces that elementwise math is written against.

Every elementwise primitive states its math once, as a function of a namespace
``ns`` and Python scalars, e.g. ``lambda ns, x: ns.exp(x)``. ``NUMERIC`` runs it
on floats with IEEE results where ``math`` would raise (``log(0)`` is ``-inf``,
``sqrt(-1)`` is ``nan``, ``1/0`` is ``inf``), as MLX does. ``SYMBOLIC`` runs the
same function on SymPy expressions: that is how ``mlxref.symbolic`` checks every
derivative rule exactly. Arithmetic operators (+, -, *, /) need no namespace.
"""

import math

inf = math.inf
nan = math.nan


class _Numeric:
    """Scalar math on Python floats, never raising for domain errors."""

    name = "numeric"
    pi = math.pi

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
        if x >= 0:
            return 1.0 / (1.0 + _Numeric.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)

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
    """A SymPy Boolean from a condition: a Relational as it is, an indicator as c != 0."""
    import sympy

    return c if isinstance(c, sympy.logic.boolalg.Boolean) else sympy.Ne(c, 0)


class _Symbolic:
    """The same names, on SymPy expressions (imported only when first used)."""

    name = "symbolic"

    def __getattr__(self, name):
        import sympy

        table = {
            "pi": sympy.pi,
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
            "round": lambda x, decimals=0: sympy.Function("round")(x),
            "sign": sympy.sign,
            "divide": lambda a, b: a / b,
            "floor_divide": lambda a, b: sympy.floor(a / b),
            "remainder": sympy.Mod,
            "power": lambda a, b: a**b,
            "maximum": sympy.Max,
            "minimum": sympy.Min,
            "logaddexp": lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)),
            "sigmoid": lambda x: 1 / (1 + sympy.exp(-x)),
            # A symbolic boolean is a 0/1 indicator, so masks can multiply.
            "truth": lambda r: sympy.Piecewise((1, r), (0, True)),
            "where": lambda c, a, b: sympy.Piecewise((a, _symbolic_condition(c)), (b, True)),
            # a Relational stays a Boolean (x > 0 -> x <= 0); an indicator stays 0/1
            "logical_not": lambda x: (
                sympy.Not(x) if isinstance(x, sympy.logic.boolalg.Boolean) else 1 - x
            ),
            "logical_and": lambda a, b: sympy.And(_symbolic_condition(a), _symbolic_condition(b)),
            "logical_or": lambda a, b: sympy.Or(_symbolic_condition(a), _symbolic_condition(b)),
        }
        if name not in table:
            raise AttributeError(name)
        value = table[name]
        setattr(self, name, value)
        return value


NUMERIC = _Numeric()
SYMBOLIC = _Symbolic()


def apply(fn, *datas):
    """Run the scalar function ``fn(ns, *elements)`` over equal-length lists.

    The numeric namespace is tried first; a SymPy element makes it raise
    ``TypeError`` (``math`` cannot convert an expression, and ``if x > 0`` has no
    truth value), and the whole list is then redone symbolically.
    """
    try:
        if len(datas) == 1:
            return [fn(NUMERIC, x) for x in datas[0]]
        return [fn(NUMERIC, *xs) for xs in zip(*datas)]
    except TypeError:
        if len(datas) == 1:
            return [fn(SYMBOLIC, x) for x in datas[0]]
        return [fn(SYMBOLIC, *xs) for xs in zip(*datas)]
