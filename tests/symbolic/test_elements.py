"""SymPy expressions flow through every elementwise primitive.

The symbolic cross-checks of the derivative rules rely on arrays whose
elements are SymPy expressions: each primitive's forward rule must give the
exact expression (``exp(x)``, ``log(x)/log(2)``, ``Max(x, y)``), not crash and
not round it to a float. The registry test at the end fails when an
elementwise primitive is added without a case here.
"""

import inspect

import pytest

sympy = pytest.importorskip("sympy")

import mlxref.core as mx  # noqa: E402
from mlxref.core.primitives import base as B  # noqa: E402
from mlxref.core.primitives import elementwise as P  # noqa: E402

x, y, z = sympy.symbols("x y z")

def _int(a):
    return a.astype(mx.int32)


# (name, primitive class the op builds, op on arrays X, Y, Z, expected in x, y, z).
# A SymPy expression is compared exactly (up to float coefficients like 1.0/x).
# A Python function is a truth table: the result (a Relational, a Boolean or a
# 0/1 Piecewise indicator, whichever the engine uses) is evaluated at sample
# points.
CASES = [
    ("abs", P.Abs, lambda X, Y, Z: mx.abs(X), sympy.Abs(x)),
    ("negative", P.Negative, lambda X, Y, Z: mx.negative(X), -x),
    ("sign", P.Sign, lambda X, Y, Z: mx.sign(X), sympy.sign(x)),
    ("square", P.Square, lambda X, Y, Z: mx.square(X), x**2),
    ("sqrt", P.Sqrt, lambda X, Y, Z: mx.sqrt(X), sympy.sqrt(x)),
    ("rsqrt", P.Rsqrt, lambda X, Y, Z: mx.rsqrt(X), 1 / sympy.sqrt(x)),
    ("reciprocal", P.Divide, lambda X, Y, Z: mx.reciprocal(X), 1 / x),
    ("exp", P.Exp, lambda X, Y, Z: mx.exp(X), sympy.exp(x)),
    ("expm1", P.Expm1, lambda X, Y, Z: mx.expm1(X), sympy.exp(x) - 1),
    ("log", P.Log, lambda X, Y, Z: mx.log(X), sympy.log(x)),
    ("log2", P.Log, lambda X, Y, Z: mx.log2(X), sympy.log(x) / sympy.log(2)),
    ("log10", P.Log, lambda X, Y, Z: mx.log10(X), sympy.log(x) / sympy.log(10)),
    ("log1p", P.Log1p, lambda X, Y, Z: mx.log1p(X), sympy.log(1 + x)),
    ("sin", P.Sin, lambda X, Y, Z: mx.sin(X), sympy.sin(x)),
    ("cos", P.Cos, lambda X, Y, Z: mx.cos(X), sympy.cos(x)),
    ("tan", P.Tan, lambda X, Y, Z: mx.tan(X), sympy.tan(x)),
    ("arcsin", P.ArcSin, lambda X, Y, Z: mx.arcsin(X), sympy.asin(x)),
    ("arccos", P.ArcCos, lambda X, Y, Z: mx.arccos(X), sympy.acos(x)),
    ("arctan", P.ArcTan, lambda X, Y, Z: mx.arctan(X), sympy.atan(x)),
    ("sinh", P.Sinh, lambda X, Y, Z: mx.sinh(X), sympy.sinh(x)),
    ("cosh", P.Cosh, lambda X, Y, Z: mx.cosh(X), sympy.cosh(x)),
    ("tanh", P.Tanh, lambda X, Y, Z: mx.tanh(X), sympy.tanh(x)),
    ("arcsinh", P.ArcSinh, lambda X, Y, Z: mx.arcsinh(X), sympy.asinh(x)),
    ("arccosh", P.ArcCosh, lambda X, Y, Z: mx.arccosh(X), sympy.acosh(x)),
    ("arctanh", P.ArcTanh, lambda X, Y, Z: mx.arctanh(X), sympy.atanh(x)),
    ("sigmoid", P.Sigmoid, lambda X, Y, Z: mx.sigmoid(X), 1 / (1 + sympy.exp(-x))),
    ("erf", P.Erf, lambda X, Y, Z: mx.erf(X), sympy.erf(x)),
    ("erfinv", P.ErfInv, lambda X, Y, Z: mx.erfinv(X), sympy.erfinv(x)),
    ("floor", P.Floor, lambda X, Y, Z: mx.floor(X), sympy.floor(x)),
    ("ceil", P.Ceil, lambda X, Y, Z: mx.ceil(X), sympy.ceiling(x)),
    # SymPy has no round-half-to-even of an expression: check mlxref's at sample
    # points (5/2 -> 2, -3/2 -> -2) against Python's round, which is half to even.
    ("round", P.Round, lambda X, Y, Z: mx.round(X), lambda a, b, c: round(a)),
    ("logical_not", P.LogicalNot, lambda X, Y, Z: mx.logical_not(X > Y), lambda a, b, c: a <= b),
    ("stop_gradient", B.StopGradient, lambda X, Y, Z: mx.stop_gradient(X), x),
    ("add", P.Add, lambda X, Y, Z: mx.add(X, Y), x + y),
    ("subtract", P.Subtract, lambda X, Y, Z: mx.subtract(X, Y), x - y),
    ("multiply", P.Multiply, lambda X, Y, Z: mx.multiply(X, Y), x * y),
    ("divide", P.Divide, lambda X, Y, Z: mx.divide(X, Y), x / y),
    ("floor_divide", P.FloorDivide, lambda X, Y, Z: mx.floor_divide(X, Y), sympy.floor(x / y)),
    ("remainder", P.Remainder, lambda X, Y, Z: mx.remainder(X, Y), sympy.Mod(x, y)),
    ("divmod quotient", P.DivMod, lambda X, Y, Z: mx.divmod(X, Y)[0], sympy.floor(x / y)),
    ("divmod remainder", P.DivMod, lambda X, Y, Z: mx.divmod(X, Y)[1], sympy.Mod(x, y)),
    ("power", P.Power, lambda X, Y, Z: mx.power(X, Y), x**y),
    ("maximum", P.Maximum, lambda X, Y, Z: mx.maximum(X, Y), sympy.Max(x, y)),
    ("minimum", P.Minimum, lambda X, Y, Z: mx.minimum(X, Y), sympy.Min(x, y)),
    ("arctan2", P.ArcTan2, lambda X, Y, Z: mx.arctan2(X, Y), sympy.atan2(x, y)),
    ("logaddexp", P.LogAddExp, lambda X, Y, Z: mx.logaddexp(X, Y),
     sympy.log(sympy.exp(x) + sympy.exp(y))),
    ("equal", P.Equal, lambda X, Y, Z: mx.equal(X, Y), lambda a, b, c: a == b),
    ("not_equal", P.NotEqual, lambda X, Y, Z: mx.not_equal(X, Y), lambda a, b, c: a != b),
    ("less", P.Less, lambda X, Y, Z: mx.less(X, Y), lambda a, b, c: a < b),
    ("less_equal", P.LessEqual, lambda X, Y, Z: mx.less_equal(X, Y), lambda a, b, c: a <= b),
    ("greater", P.Greater, lambda X, Y, Z: mx.greater(X, Y), lambda a, b, c: a > b),
    ("greater_equal", P.GreaterEqual, lambda X, Y, Z: mx.greater_equal(X, Y),
     lambda a, b, c: a >= b),
    ("logical_and", P.LogicalAnd, lambda X, Y, Z: mx.logical_and(X > Y, Y > Z),
     lambda a, b, c: a > b and b > c),
    ("logical_or", P.LogicalOr, lambda X, Y, Z: mx.logical_or(X > Y, Y > Z),
     lambda a, b, c: a > b or b > c),
    ("where", P.Select, lambda X, Y, Z: mx.where(X > Y, X, Y), lambda a, b, c: max(a, b)),
    ("where_of_logical", P.Select,
     lambda X, Y, Z: mx.where(mx.logical_not(X > Y), Z, X), lambda a, b, c: c if a <= b else a),
    # bitwise ops of the inputs cast to int32 (on a symbol the cast keeps it; a
    # number's integer part is what the bitwise function uses)
    ("bitwise_and", P.BitwiseBinary, lambda X, Y, Z: mx.bitwise_and(_int(X), _int(Y)),
     lambda a, b, c: int(a) & int(b)),
    ("bitwise_or", P.BitwiseBinary, lambda X, Y, Z: mx.bitwise_or(_int(X), _int(Y)),
     lambda a, b, c: int(a) | int(b)),
    ("bitwise_xor", P.BitwiseBinary, lambda X, Y, Z: _int(X) ^ _int(Y),
     lambda a, b, c: int(a) ^ int(b)),
    ("left_shift", P.BitwiseBinary, lambda X, Y, Z: _int(X) << _int(mx.abs(Y)),
     lambda a, b, c: int(a) << int(abs(b))),
    ("right_shift", P.BitwiseBinary, lambda X, Y, Z: mx.right_shift(_int(X), _int(mx.abs(Y))),
     lambda a, b, c: int(a) >> int(abs(b))),
    ("bitwise_invert", P.BitwiseInvert, lambda X, Y, Z: ~_int(X), lambda a, b, c: ~int(a)),
    # complex64 (x is a SymPy symbol with no assumptions: a complex number)
    ("real", P.Real, lambda X, Y, Z: mx.real(X.astype(mx.complex64)), sympy.re(x)),
    ("imag", P.Imag, lambda X, Y, Z: mx.imag(X.astype(mx.complex64)), sympy.im(x)),
    ("conj", P.Conjugate, lambda X, Y, Z: mx.conj(X.astype(mx.complex64)), sympy.conjugate(x)),
    # operators, with weakly typed Python scalars
    ("2 - x", P.Subtract, lambda X, Y, Z: 2 - X, 2 - x),
    ("x ** 2", P.Power, lambda X, Y, Z: X**2, x**2),
    ("2 ** x", P.Power, lambda X, Y, Z: 2**X, 2**x),
    ("x / 4", P.Divide, lambda X, Y, Z: X / 4, x / 4),
]


def _symbols():
    return mx.array([x]), mx.array([y]), mx.array([z])


_SAMPLES = [("2", "1", "0"), ("1", "2", "3"), ("3", "2", "1"), ("0", "0", "1"),
            ("-1", "2", "-5"), ("5/2", "1/2", "1/2"), ("-3/2", "-3/2", "7/2"), ("1/3", "0", "-1")]


def _as_number(v):
    if isinstance(v, (bool, sympy.logic.boolalg.BooleanAtom)):
        return float(bool(v))
    return float(v)


def _matches(got, expected):
    if callable(expected):
        if not isinstance(got, sympy.Basic) or not got.free_symbols:
            return False  # a constant cannot be this table of values
        for sample in _SAMPLES:
            a, b, c = (sympy.Rational(v) for v in sample)
            value = got.subs({x: a, y: b, z: c})
            if _as_number(value) != float(expected(*(float(v) for v in (a, b, c)))):
                return False
        return True
    if not isinstance(got, sympy.Expr):
        return False
    got = _exact(got)
    if got == expected or sympy.expand(got - expected) == 0:
        return True
    # Otherwise equal to 30 digits at sample points: this catches a float stand-in
    # for an exact constant (1.4426950408889634*log(x) is not log(x)/log(2)).
    for a, b, c in [("0.3", "0.7", "0.2"), ("2.5", "-1.5", "4")]:
        at = {x: sympy.Rational(a), y: sympy.Rational(b), z: sympy.Rational(c)}
        g, e = got.evalf(30, subs=at), expected.evalf(30, subs=at)
        if not abs(g - e) <= sympy.Float("1e-25", 30) * (1 + abs(e)):
            return False
    return True


def _exact(expression):
    """Integer-valued floats (1.0/x, x**2.0: Python scalars cast to float32) as Integers."""
    return expression.xreplace(
        {f: sympy.Integer(int(f)) for f in expression.atoms(sympy.Float) if float(f).is_integer()}
    )


@pytest.mark.parametrize("name, primitive, build, expected", CASES, ids=[c[0] for c in CASES])
def test_symbolic_element(name, primitive, build, expected):
    X, Y, Z = _symbols()
    out = build(X, Y, Z)
    assert type(out.primitive()) is primitive
    assert out.shape == (1,)
    (got,) = out.tolist()
    assert _matches(got, expected), f"{name}: got {got!r}, expected {expected!r}"


def test_symbolic_elements_broadcast_and_chain():
    X, Y, _ = _symbols()
    out = mx.exp(X * mx.array([[1.0], [2.0]])) + Y  # (1,) * (2, 1) -> (2, 1)
    assert out.shape == (2, 1)
    got = out.tolist()
    assert _exact(got[0][0]) == sympy.exp(x) + y
    assert _exact(got[1][0]) == sympy.exp(2 * x) + y
    mixed = mx.array([x, 2.0]) + 1
    assert mixed.tolist()[1] == 3.0 and _exact(mixed.tolist()[0]) == x + 1


def _elementwise_primitive_classes():
    """Every concrete elementwise primitive class defined in primitives.elementwise
    (families, such as Unary, say ``abstract = True``)."""
    bases = (P.Unary, P.Binary, P.Comparison)
    found, stack = set(), list(bases)
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__ == P.__name__ and not sub.__dict__.get("abstract", False):
                found.add(sub)
    found.update(
        cls
        for _, cls in inspect.getmembers(P, inspect.isclass)
        if cls.__module__ == P.__name__ and issubclass(cls, B.Primitive)
        and not cls.__dict__.get("abstract", False)
    )
    return found


def test_every_elementwise_primitive_has_a_symbolic_case():
    covered = {case[1] for case in CASES}
    missing = sorted(c.__name__ for c in _elementwise_primitive_classes() - covered)
    assert not missing, f"elementwise primitives without a SymPy case: {missing}"
    assert P.Select in covered and P.Exp in covered  # the scan found the usual ones
    assert len(_elementwise_primitive_classes()) >= 45
