"""Elementwise ops: each converts, promotes and broadcasts, then builds one node.

Read alongside: mlx/ops.cpp (``exp``, ``add``, ``where`` ...) and their bindings
in python/src/ops.cpp. Their arguments become arrays in one step
(mlxref/core/convert.py): an operand is an array or a Python scalar, never a
list, as MLX's ``ScalarOrArray`` (``scalar_or_array``); two operands are
promoted together (``to_arrays``), except those of the logical ops, which MLX
converts one at a time. The primitives they build are in
``mlxref.core.primitives.elementwise``.

Each op's docstring says what it computes, its arguments and the errors MLX
raises for bad ones, and ends with an example whose output is MLX 0.32.4's
(``python -m mlxref.manual.examples`` runs them on mlxref, ``--mlx`` on MLX).
What many ops say alike (how two operands broadcast and promote, the errors
for a list or an int that does not fit, what ``stream`` does) is written once
in docs.py: a docstring names it as ``{operands}``..., and ``@shared_doc``
fills it in.
"""

import copy
import math

from .. import dtypes as _dt
from ..array import array
from ..convert import (
    default_dtype_of_scalar,
    is_scalar,
    scalar_or_array,
    to_array,
    to_arrays,
    weak_scalar_dtype,
)
from ..primitives import base as _base
from ..primitives import elementwise as P
from ..primitives.base import make_array
from .common import (
    INT32_MAX,
    INT32_MIN,
    astype,
    broadcast_arrays,
    float_dtype,
    filled_like,
    incompatible_arguments,
    plain_ints,
)
from .docs import shared_doc

__all__ = [
    "abs", "negative", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1",
    "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "erf", "erfinv",
    "floor", "ceil", "round", "trunc", "degrees", "radians", "logical_not", "stop_gradient", "add", "subtract", "multiply",
    "divide", "floor_divide", "remainder", "divmod", "power", "maximum", "minimum", "arctan2",
    "logaddexp", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "where", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "bitwise_invert",
    "real", "imag", "conj", "conjugate", "positive", "logical_xor", "pow", "acos", "asin", "atan",
    "atan2", "acosh", "asinh", "atanh"
]

# --- unary -------------------------------------------------------------------------


def _unary(primitive, a, operand_dtype=None):
    a = scalar_or_array(a)
    if operand_dtype is not None and a.dtype is not operand_dtype:
        a = astype(a, operand_dtype)
    return make_array(primitive, [a])


def _float_unary(primitive, a):
    a = scalar_or_array(a)
    return _unary(primitive, a, float_dtype(a.dtype))


def _real_only(name, a):
    """``a`` as an array, or MLX's refusal of complex64 (expm1, sigmoid, erf...)."""
    a = scalar_or_array(a)
    if a.dtype is _dt.complex64:
        raise ValueError(f"[{name}] Not supported for complex64.")
    return a


@shared_doc
def abs(a, /, *, stream=None):
    """``mx.abs``: the absolute value of each element of ``a``; of a complex number, its modulus.

    The result keeps ``a``'s dtype (integers wrap as in C: ``abs`` of int8 -128 is
    -128), except that complex64 gives float32. Bools come back as they are.

    Arguments:
    - ``a``: {same_dtype_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.abs(mx.array([-1.5, 0.0, 2.0]))
    array([1.5, 0, 2], dtype=float32)
    >>> mx.abs(mx.array([3+4j, -2j]))
    array([5, 2], dtype=float32)
    """
    a = scalar_or_array(a)
    out = _unary(P.Abs(), a)
    # MLX's Abs keeps the dtype (|z| + 0j) and the op casts complex64 to float32.
    return astype(out, _dt.float32) if a.dtype is _dt.complex64 else out


@shared_doc
def negative(a, /, *, stream=None):
    """``mx.negative``: ``-a``, each element's sign flipped.

    Integers wrap (``-(-128)`` in int8 is -128, unsigned ones wrap modulo their range).

    Arguments:
    - ``a``: {same_dtype_operand}

    Errors: ``ValueError`` for a bool array (MLX: "[negative] Not supported for bool,
    use logical_not instead.") and {not_an_array}.

    >>> mx.negative(mx.array([1, -2, 0]))
    array([-1, 2, 0], dtype=int32)
    """
    a = scalar_or_array(a)
    if a.dtype is _dt.bool_:
        raise ValueError("[negative] Not supported for bool, use logical_not instead.")
    return _unary(P.Negative(), a)


@shared_doc
def sign(a, /, *, stream=None):
    """``mx.sign``: -1, 0 or 1 for each element of ``a`` as it is negative, zero or positive.

    The result has ``a``'s dtype; bools come back as they are, and a complex number
    ``z`` gives ``z / |z|`` (0 for 0).

    Arguments:
    - ``a``: {same_dtype_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.sign(mx.array([-2.5, 0.0, 3.0]))
    array([-1, 0, 1], dtype=float32)
    >>> mx.sign(mx.array([3+4j]))
    array([0.6+0.8j], dtype=complex64)
    """
    return _unary(P.Sign(), a)


@shared_doc
def square(a, /, *, stream=None):
    """``mx.square``: ``a * a``, each element squared.

    The result has ``a``'s dtype (integers wrap on overflow).

    Arguments:
    - ``a``: {same_dtype_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.square(mx.array([1, -2, 3]))
    array([1, 4, 9], dtype=int32)
    """
    return _unary(P.Square(), a)


@shared_doc
def sqrt(a, /, *, stream=None):
    """``mx.sqrt``: the square root of each element of ``a``.

    A negative real gives nan; for complex64 it is the principal root.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.sqrt(mx.array([0.0, 1.0, 2.0, 4.0]))
    array([0, 1, 1.41421, 2], dtype=float32)
    >>> mx.sqrt(mx.array(-4+0j))
    array(0+2j, dtype=complex64)
    """
    return _float_unary(P.Sqrt(), a)


@shared_doc
def rsqrt(a, /, *, stream=None):
    """``mx.rsqrt``: ``1 / sqrt(a)``, the reciprocal square root of each element.

    One primitive of its own (``Rsqrt``), not a division of ``sqrt``; 0 gives inf.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.rsqrt(mx.array([1.0, 4.0, 0.25]))
    array([1, 0.5, 2], dtype=float32)
    """
    return _float_unary(P.Rsqrt(), a)


@shared_doc
def reciprocal(a, /, *, stream=None):
    """``mx.reciprocal``: ``1 / a`` for each element.

    Composed as MLX does: ``divide`` of a 1 of ``a``'s float dtype by ``a``, so 0 gives
    inf and the gradient is that of ``divide``.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.reciprocal(mx.array([2, 4, 0]))
    array([0.5, 0.25, inf], dtype=float32)
    """
    # MLX composes it: divide(1, a).
    a = scalar_or_array(a)
    return divide(array(1, float_dtype(a.dtype)), a)


@shared_doc
def exp(a, /, *, stream=None):
    """``mx.exp``: ``e`` raised to each element of ``a``.

    float32 overflows to inf above about 88.7 (``exp(100.0)`` is inf, as in MLX).

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.exp(mx.array([0.0, 1.0, -1.0]))
    array([1, 2.71828, 0.367879], dtype=float32)
    """
    return _float_unary(P.Exp(), a)


@shared_doc
def expm1(a, /, *, stream=None):
    """``mx.expm1``: ``exp(a) - 1`` for each element, accurate when ``a`` is near 0.

    Where ``exp(a) - 1`` loses every digit to rounding (``a = 1e-8`` in float32 gives
    0), ``expm1`` keeps them.

    Arguments:
    - ``a``: {real_float_operand}

    Errors: ``ValueError`` {no_complex} and {not_an_array}.

    >>> mx.expm1(mx.array([1e-8, 1.0]))
    array([1e-08, 1.71828], dtype=float32)
    """
    return _float_unary(P.Expm1(), _real_only("expm1", a))


@shared_doc
def log(a, /, *, stream=None):
    """``mx.log``: the natural logarithm of each element of ``a``.

    0 gives -inf and a negative real nan; complex64 gives the principal branch.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.log(mx.array([1.0, 2.718282, 0.0]))
    array([0, 1, -inf], dtype=float32)
    """
    return _float_unary(P.Log("e"), a)


@shared_doc
def log2(a, /, *, stream=None):
    """``mx.log2``: the base-2 logarithm of each element of ``a``.

    One ``Log`` primitive with base 2 (``log``, ``log2`` and ``log10`` share it).

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.log2(mx.array([1, 2, 8, 10]))
    array([0, 1, 3, 3.32193], dtype=float32)
    """
    return _float_unary(P.Log("2"), a)


@shared_doc
def log10(a, /, *, stream=None):
    """``mx.log10``: the base-10 logarithm of each element of ``a``.

    One ``Log`` primitive with base 10 (as ``log2``).

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.log10(mx.array([1.0, 10.0, 1000.0, 2.0]))
    array([0, 1, 3, 0.30103], dtype=float32)
    """
    return _float_unary(P.Log("10"), a)


@shared_doc
def log1p(a, /, *, stream=None):
    """``mx.log1p``: ``log(1 + a)`` for each element, accurate when ``a`` is near 0.

    Where ``log(1 + a)`` rounds ``1 + a`` to 1 first (``a = 1e-8`` in float32),
    ``log1p`` keeps the digits.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.log1p(mx.array([1e-8, 1.0]))
    array([1e-08, 0.693147], dtype=float32)
    """
    return _float_unary(P.Log1p(), a)


@shared_doc
def sin(a, /, *, stream=None):
    """``mx.sin``: the sine of each element of ``a`` (in radians).

    float32's pi is not π, so ``sin`` of it is about -8.7e-08, not 0 (the example's last
    value).

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.sin(mx.array([0.0, 1.5707964, 3.1415927]))
    array([0, 1, -8.74228e-08], dtype=float32)
    """
    return _float_unary(P.Sin(), a)


@shared_doc
def cos(a, /, *, stream=None):
    """``mx.cos``: the cosine of each element of ``a`` (in radians).

    As with ``sin(pi)``, the float32 number nearest pi/2 is not π/2: its cosine is about
    -4.4e-08.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.cos(mx.array([0.0, 1.5707964, 3.1415927]))
    array([1, -4.37114e-08, -1], dtype=float32)
    """
    return _float_unary(P.Cos(), a)


@shared_doc
def tan(a, /, *, stream=None):
    """``mx.tan``: the tangent of each element of ``a`` (in radians).

    No float32 number is an odd multiple of π/2, so the poles give large finite values
    (``tan`` of float32 pi/2 is about -2.3e+07), never inf.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.tan(mx.array([0.0, 0.7853982, -0.7853982]))
    array([0, 1, -1], dtype=float32)
    """
    return _float_unary(P.Tan(), a)


@shared_doc
def arcsin(a, /, *, stream=None):
    """``mx.arcsin`` (also ``mx.asin``): the inverse sine of each element of ``a``, in radians.

    Real results lie in [-pi/2, pi/2]; outside [-1, 1] a real input gives nan.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.arcsin(mx.array([0.0, 0.5, 1.0]))
    array([0, 0.523599, 1.5708], dtype=float32)
    """
    return _float_unary(P.ArcSin(), a)


@shared_doc
def arccos(a, /, *, stream=None):
    """``mx.arccos`` (also ``mx.acos``): the inverse cosine of each element of ``a``, in radians.

    Real results lie in [0, pi]; outside [-1, 1] a real input gives nan.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.arccos(mx.array([1.0, 0.5, -1.0]))
    array([0, 1.0472, 3.14159], dtype=float32)
    """
    return _float_unary(P.ArcCos(), a)


@shared_doc
def arctan(a, /, *, stream=None):
    """``mx.arctan`` (also ``mx.atan``): the inverse tangent of each element of ``a``, in radians.

    Real results lie in (-pi/2, pi/2); ``arctan2`` gives the angle in all four
    quadrants.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.arctan(mx.array([0.0, 1.0, -1.0]))
    array([0, 0.785398, -0.785398], dtype=float32)
    """
    return _float_unary(P.ArcTan(), a)


@shared_doc
def sinh(a, /, *, stream=None):
    """``mx.sinh``: the hyperbolic sine of each element of ``a``.

    An odd function; float32 overflows to inf or -inf beyond about 89.4 in magnitude.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.sinh(mx.array([0.0, 1.0, -1.0]))
    array([0, 1.1752, -1.1752], dtype=float32)
    """
    return _float_unary(P.Sinh(), a)


@shared_doc
def cosh(a, /, *, stream=None):
    """``mx.cosh``: the hyperbolic cosine of each element of ``a``.

    An even function, at least 1 for real inputs; float32 overflows to inf beyond
    about 89.4 in magnitude.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.cosh(mx.array([0.0, 1.0, -1.0]))
    array([1, 1.54308, 1.54308], dtype=float32)
    """
    return _float_unary(P.Cosh(), a)


@shared_doc
def tanh(a, /, *, stream=None):
    """``mx.tanh``: the hyperbolic tangent of each element of ``a``.

    Real results lie in [-1, 1]; large inputs saturate without overflow.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.tanh(mx.array([0.0, 1.0, -20.0]))
    array([0, 0.761594, -1], dtype=float32)
    """
    return _float_unary(P.Tanh(), a)


@shared_doc
def arcsinh(a, /, *, stream=None):
    """``mx.arcsinh`` (also ``mx.asinh``): the inverse hyperbolic sine of each element of ``a``.

    Defined for every real input (unlike ``arccosh`` and ``arctanh``); it grows like
    ``log(2 |a|)``, so ``arcsinh(1e30)`` is only about 69.8.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.arcsinh(mx.array([0.0, 1.0, -1.0]))
    array([0, 0.881374, -0.881374], dtype=float32)
    """
    return _float_unary(P.ArcSinh(), a)


@shared_doc
def arccosh(a, /, *, stream=None):
    """``mx.arccosh`` (also ``mx.acosh``): the inverse hyperbolic cosine of each element of ``a``.

    Real results are >= 0; a real input below 1 gives nan.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.arccosh(mx.array([1.0, 2.0, 10.0]))
    array([0, 1.31696, 2.99322], dtype=float32)
    """
    return _float_unary(P.ArcCosh(), a)


@shared_doc
def arctanh(a, /, *, stream=None):
    """``mx.arctanh`` (also ``mx.atanh``): the inverse hyperbolic tangent of each element of ``a``.

    1 and -1 give inf and -inf; a real input outside [-1, 1] gives nan.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.arctanh(mx.array([0.0, 0.5, -0.5]))
    array([0, 0.549306, -0.549306], dtype=float32)
    """
    return _float_unary(P.ArcTanh(), a)


@shared_doc
def sigmoid(a, /, *, stream=None):
    """``mx.sigmoid``: the logistic function ``1 / (1 + exp(-a))`` of each element.

    One primitive (``Sigmoid``), computed so that large inputs of either sign saturate
    to 0 or 1 instead of overflowing.

    Arguments:
    - ``a``: {real_float_operand}

    Errors: ``ValueError`` {no_complex} and {not_an_array}.

    >>> mx.sigmoid(mx.array([0.0, 2.0, -2.0]))
    array([0.5, 0.880797, 0.119203], dtype=float32)
    >>> mx.sigmoid(mx.array([-100.0, 100.0]))
    array([0, 1], dtype=float32)
    """
    return _float_unary(P.Sigmoid(), _real_only("sigmoid", a))


@shared_doc
def erf(a, /, *, stream=None):
    """``mx.erf``: the Gauss error function of each element of ``a``.

    ``erf(x)`` is ``2 / sqrt(pi)`` times the integral of ``exp(-t**2)`` from 0 to ``x``;
    results lie in [-1, 1].

    Arguments:
    - ``a``: {real_float_operand}

    Errors: ``ValueError`` {no_complex} and {not_an_array}.

    >>> mx.erf(mx.array([0.5, -2.0, 3.0]))
    array([0.5205, -0.995322, 0.999978], dtype=float32)
    """
    return _float_unary(P.Erf(), _real_only("erf", a))


@shared_doc
def erfinv(a, /, *, stream=None):
    """``mx.erfinv``: the inverse of ``erf`` for each element of ``a``.

    1 and -1 give inf and -inf; outside [-1, 1] the result is nan.

    Arguments:
    - ``a``: {real_float_operand}

    Errors: ``ValueError`` {no_complex} and {not_an_array}.

    >>> mx.erfinv(mx.array([0.0, 0.5, -0.9]))
    array([0, 0.476936, -1.16309], dtype=float32)
    """
    return _float_unary(P.ErfInv(), _real_only("erfinv", a))


def _integral_identity_or(primitive, a):
    # floor, ceil and round leave integers as they are (MLX returns the input).
    a = scalar_or_array(a)
    if not a.dtype.is_inexact:
        return copy.copy(a)
    return _unary(primitive, a)


@shared_doc
def floor(a, /, *, stream=None):
    """``mx.floor``: each element of ``a`` rounded down to the nearest integer.

    The result keeps ``a``'s float dtype; its gradient is zero.

    Arguments:
    - ``a``: {integral_operand}

    Errors: ``ValueError`` {no_complex} and {not_an_array}.

    >>> mx.floor(mx.array([-1.5, -0.5, 0.5, 1.5]))
    array([-2, -1, 0, 1], dtype=float32)
    """
    return _integral_identity_or(P.Floor(), _real_only("floor", a))


@shared_doc
def ceil(a, /, *, stream=None):
    """``mx.ceil``: each element of ``a`` rounded up to the nearest integer.

    The result keeps ``a``'s float dtype (``ceil(-0.5)`` is -0); its gradient is zero.

    Arguments:
    - ``a``: {integral_operand}

    Errors: ``ValueError`` {no_complex} and {not_an_array}.

    >>> mx.ceil(mx.array([-1.5, -0.5, 0.5, 1.5]))
    array([-1, -0, 1, 2], dtype=float32)
    """
    return _integral_identity_or(P.Ceil(), _real_only("ceil", a))


_TRUNC = "trunc(a: array, /, *, stream: StreamOrDevice = None) -> array"


@shared_doc
def trunc(a, /, *, stream=None):
    """``mx.trunc``: each element of ``a`` rounded toward zero.

    Composed as MLX does (mlx/ops.cpp): ``where(a < 0, ceil(a), floor(a))``; integer and
    bool arrays are returned as they are.

    Arguments:
    - ``a``: an array (not a Python scalar: MLX's ``trunc`` takes only arrays).

    Errors: ``TypeError`` when ``a`` is not an array (MLX: "trunc(): incompatible
    function arguments. ..."); ``ValueError`` for complex64 ("[trunc] Not supported for
    complex64.").

    >>> mx.trunc(mx.array([-1.7, -0.5, 0.5, 1.7]))
    array([-1, -0, 0, 1], dtype=float32)
    """
    if not isinstance(a, array):
        raise incompatible_arguments(_TRUNC, (a,))
    a = _real_only("trunc", a)
    if not a.dtype.is_inexact:
        return copy.copy(a)
    return where(less(a, array(0, a.dtype)), ceil(a), floor(a))


@shared_doc
def degrees(a, /, *, stream=None):
    """``mx.degrees``: each element of ``a``, an angle in radians, in degrees.

    Composed as MLX does: ``a`` times ``180 / pi`` held in ``a``'s float dtype (float32
    for integers and bools), so no primitive of its own.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.degrees(mx.array([0.0, 1.5707964, 3.1415927]))
    array([0, 90, 180], dtype=float32)
    """
    (a,) = to_arrays(a)  # a scalar or an array (MLX refuses a list here)
    return multiply(a, array(180.0 / math.pi, float_dtype(a.dtype)))


@shared_doc
def radians(a, /, *, stream=None):
    """``mx.radians``: each element of ``a``, an angle in degrees, in radians.

    Composed as ``degrees`` is: ``a`` times ``pi / 180`` in ``a``'s float dtype.

    Arguments:
    - ``a``: {float_operand}

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.radians(mx.array([0.0, 90.0, 180.0]))
    array([0, 1.5708, 3.14159], dtype=float32)
    """
    (a,) = to_arrays(a)  # a scalar or an array (MLX refuses a list here)
    return multiply(a, array(math.pi / 180.0, float_dtype(a.dtype)))


_ROUND = "round(a: array, /, decimals: int = 0, stream: StreamOrDevice = None) -> array"


@shared_doc
def round(a, /, decimals=0, *, stream=None):
    """``mx.round``: each element of ``a`` rounded to ``decimals`` decimal places, halves to even.

    With ``decimals`` 0 it is one ``Round`` node (integers and bools are returned as
    they are; complex64 rounds both parts). Otherwise it is composed as MLX does: scale
    by ``10**decimals``, round, scale back by the inverse, cast back to ``a``'s dtype.
    The scale and its inverse are C floats even for float64, so ``round`` of float64
    1.25 to 1 place is 1.2000000178813934, as in MLX; a negative ``decimals`` rounds
    integers to tens, hundreds...

    Arguments:
    - ``a``: an array or a Python scalar.
    - ``decimals``: an int (default 0); negative rounds to the left of the point.

    Errors: ``TypeError`` when ``decimals`` is not an int (MLX: "round(): incompatible
    function arguments. ..."); ``ValueError`` {not_an_array}.

    >>> mx.round(mx.array([0.5, 1.5, 2.5, -0.5]))
    array([0, 2, 2, -0], dtype=float32)
    >>> mx.round(mx.array([1.234, 5.678]), 2)
    array([1.23, 5.68], dtype=float32)
    >>> mx.round(mx.array([15, 25, 1234]), -1)
    array([20, 20, 1230], dtype=int32)
    """
    decimals = plain_ints(decimals)
    return rounded(a, decimals, _ROUND)


def rounded(a, decimals, signature):
    """``mx.round`` and ``array.round``, whose errors show their own ``signature``."""
    # MLX's binding takes decimals as a C int (a bool is one).
    if not isinstance(decimals, int) or not INT32_MIN <= decimals <= INT32_MAX:
        raise incompatible_arguments(signature, (a,), {"decimals": decimals})
    a = scalar_or_array(a)
    if decimals == 0:
        return _integral_identity_or(P.Round(), a)
    # MLX composes it (ops.cpp): scale, round to an integer, scale back, cast
    # back. So round(int array, -1) rounds the ints: round([15, 25], -1) is [20, 20].
    # Its scale and 1 / scale are C floats, even for float64: round(float64
    # 1.25, 1) is 1.2000000178813934 in MLX.
    dtype = float_dtype(a.dtype)
    try:
        scale = _dt.float32.cast(10.0**decimals)
    except OverflowError:
        scale = math.inf
    inverse = _dt.float32.cast(1 / scale) if scale else math.inf
    scaled = multiply(a, array(scale, dtype))
    return astype(multiply(round(scaled), array(inverse, dtype)), a.dtype)


@shared_doc
def positive(a, /, *, stream=None):
    """``mx.positive``: unary plus, ``a`` itself.

    MLX's ``positive`` (mlx/ops.cpp) returns its input array: mlxref returns a new
    handle on the same node, so no node is added.

    Arguments:
    - ``a``: an array (MLX's ``positive`` takes only arrays).

    Errors: ``TypeError`` when ``a`` is not an array (MLX: "positive(): incompatible
    function arguments. ...").

    >>> mx.positive(mx.array([1, -2]))
    array([1, -2], dtype=int32)
    """
    if not isinstance(a, array):
        raise incompatible_arguments(
            "positive(a: array, /, *, stream: StreamOrDevice = None) -> array", (a,)
        )
    return copy.copy(a)


@shared_doc
def logical_not(a, /, *, stream=None):
    """``mx.logical_not``: True where an element of ``a`` is zero (or False), else False.

    ``a`` is cast to bool first (any nonzero number, nan included, is True); the result
    is bool.

    Arguments:
    - ``a``: an array or a Python scalar of any dtype.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.logical_not(mx.array([True, False]))
    array([False, True], dtype=bool)
    >>> mx.logical_not(mx.array([0, 2, -1]))
    array([True, False, False], dtype=bool)
    """
    return _unary(P.LogicalNot(), a, _dt.bool_)


@shared_doc
def stop_gradient(a, /, *, stream=None):
    """``mx.stop_gradient``: ``a`` unchanged, as a constant for the transforms.

    One ``StopGradient`` node whose vjp and jvp are zero: a gradient does not flow
    through it (below, ``x * stop_gradient(x)`` differentiates as ``x * c``). Under
    ``vmap`` it stays a stop.

    Arguments:
    - ``a``: an array (MLX's ``stop_gradient`` takes only arrays).

    Errors: ``TypeError`` when ``a`` is not an array (MLX: "stop_gradient():
    incompatible function arguments. ...").

    >>> mx.stop_gradient(mx.array([1.0, 2.0]))
    array([1, 2], dtype=float32)
    >>> mx.grad(lambda x: (x * mx.stop_gradient(x)).sum())(mx.array([1.0, 2.0]))
    array([1, 2], dtype=float32)
    """
    if not isinstance(a, array):
        raise incompatible_arguments(
            "stop_gradient(a: array, /, *, stream: StreamOrDevice = None) -> array", (a,)
        )
    return _unary(_base.StopGradient(), a)


@shared_doc
def real(a, /, *, stream=None):
    """``mx.real``: the real part of each element of ``a``.

    A complex64 array gives float32; an array of any other dtype is returned as it is (a
    new handle, no node).

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.real(mx.array([1+2j, 3-4j]))
    array([1, 3], dtype=float32)
    """
    a = scalar_or_array(a)
    if a.dtype is not _dt.complex64:
        return copy.copy(a)
    return _unary(P.Real(), a)


@shared_doc
def imag(a, /, *, stream=None):
    """``mx.imag``: the imaginary part of each element of ``a``.

    A complex64 array gives float32; an array of any other dtype gives zeros of its own
    dtype (``zeros_like``, as MLX).

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.imag(mx.array([1+2j, 3-4j]))
    array([2, -4], dtype=float32)
    >>> mx.imag(mx.array([1, 2]))
    array([0, 0], dtype=int32)
    """
    a = scalar_or_array(a)
    if a.dtype is not _dt.complex64:
        return filled_like(a, array(0, a.dtype))  # zeros_like(a), as MLX's imag
    return _unary(P.Imag(), a)


@shared_doc
def conjugate(a, /, *, stream=None):
    """``mx.conjugate``: the complex conjugate of each element of ``a`` (``conj`` is the same op).

    A real array is returned as it is (a new handle, no node).

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.conjugate(mx.array([1+2j, 3-4j]))
    array([1-2j, 3+4j], dtype=complex64)
    """
    a = scalar_or_array(a)
    if a.dtype is not _dt.complex64:
        return copy.copy(a)
    return _unary(P.Conjugate(), a)


@shared_doc
def conj(a, /, *, stream=None):
    """``mx.conj``: the complex conjugate of each element of ``a`` (``conjugate``'s short name).

    Arguments:
    - ``a``: an array or a Python scalar; a real array is returned as it is.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.conj(mx.array([1+2j, 3-4j]))
    array([1-2j, 3+4j], dtype=complex64)
    >>> mx.conj(mx.array([1.0, 2.0]))
    array([1, 2], dtype=float32)
    """
    return conjugate(a)


# --- binary ------------------------------------------------------------------------


def _binary(primitive, a, b, operand_dtype=None):
    a, b = to_arrays(a, b)
    if operand_dtype is not None:
        a, b = astype(a, operand_dtype(a.dtype)), astype(b, operand_dtype(b.dtype))
    a, b = broadcast_arrays(a, b)
    return make_array(primitive, [a, b])


@shared_doc
def add(a, b, /, *, stream=None):
    """``mx.add``: ``a + b``, elementwise.

    Integers wrap at their width (int8 127 + 1 is -128); bools add as a logical or.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.add(mx.array([1, 2, 3]), 10)
    array([11, 12, 13], dtype=int32)
    >>> mx.add(mx.array([[1], [2]]), mx.array([10, 20, 30]))
    array([[11, 21, 31],
           [12, 22, 32]], dtype=int32)
    """
    return _binary(P.Add(), a, b)


@shared_doc
def subtract(a, b, /, *, stream=None):
    """``mx.subtract``: ``a - b``, elementwise.

    Integers wrap at their width (uint8 0 - 1 is 255).

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.subtract(mx.array([5, 3]), mx.array([1.5, 4.0]))
    array([3.5, -1], dtype=float32)
    """
    return _binary(P.Subtract(), a, b)


@shared_doc
def multiply(a, b, /, *, stream=None):
    """``mx.multiply``: ``a * b``, elementwise.

    Integers wrap at their width; bools multiply as a logical and.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.multiply(mx.array([1, 2, 3]), mx.array([2.0]))
    array([2, 4, 6], dtype=float32)
    """
    return _binary(P.Multiply(), a, b)


@shared_doc
def divide(a, b, /, *, stream=None):
    """``mx.divide``: ``a / b``, elementwise true division.

    Both operands are cast to the float dtype of their promoted dtype (integers and
    bools: float32) first, so ``1 / 2`` is 0.5; a nonzero number over 0 is inf or -inf.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.divide(mx.array([1, 2, 3]), 2)
    array([0.5, 1, 1.5], dtype=float32)
    >>> mx.divide(mx.array([1.0, -1.0]), 0.0)
    array([inf, -inf], dtype=float32)
    """
    return _binary(P.Divide(), a, b, operand_dtype=float_dtype)


@shared_doc
def floor_divide(a, b, /, *, stream=None):
    """``mx.floor_divide``: ``a // b``, the quotient rounded toward minus infinity.

    For integers it is Python's ``//`` (``-7 // 2`` is -4); for floats ``floor(a / b)``
    in the promoted dtype. MLX 0.32.4 divides complex64 without the floor, and so does
    mlxref.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.floor_divide(mx.array([7, -7, 7]), mx.array([2, 2, -2]))
    array([3, -4, -4], dtype=int32)
    >>> mx.floor_divide(mx.array([7.5, -7.5]), 2)
    array([3, -4], dtype=float32)
    """
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:  # MLX 0.32.4 divides complex numbers, with no floor
        return _binary(P.Divide(), a, b)
    return _binary(P.FloorDivide(), a, b)


@shared_doc
def remainder(a, b, /, *, stream=None):
    """``mx.remainder``: ``a % b``, the remainder of ``floor_divide``, with the sign of ``b``.

    As Python's ``%``: ``a - b * floor(a / b)``, so ``-7 % 2`` is 1 and ``7 % -2`` is
    -1.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` for complex64 (MLX: "[remainder] Complex type not
    supported."), {binary_errors}.

    >>> mx.remainder(mx.array([7, -7, 7]), mx.array([2, 2, -2]))
    array([1, 1, -1], dtype=int32)
    >>> mx.remainder(mx.array([5.5, -5.5]), 2)
    array([1.5, 0.5], dtype=float32)
    """
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:
        raise ValueError("[remainder] Complex type not supported.")
    return _binary(P.Remainder(), a, b)


@shared_doc
def divmod(a, b, /, *, stream=None):
    """``mx.divmod``: ``[a // b, a % b]``, both outputs of one ``DivMod`` node.

    The list MLX returns, with the values of ``floor_divide`` and ``remainder``;
    promoted and broadcast as they are. Its vjp is the true derivative (see the README's
    "Where mlxref differs"). An integer division by zero raises ``ZeroDivisionError``
    when evaluated (MLX dies of SIGFPE).

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` for complex64 (MLX: "[divmod] Complex type not supported."),
    {binary_errors}.

    >>> mx.divmod(mx.array([7, -7]), 2)
    [array([3, -4], dtype=int32), array([1, 1], dtype=int32)]
    """
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:
        raise ValueError("[divmod] Complex type not supported.")
    a, b = broadcast_arrays(a, b)
    return _base.make_arrays(P.DivMod(), [a, b])


@shared_doc
def power(a, b, /, *, stream=None):
    """``mx.power`` (also ``mx.pow``): ``a ** b``, elementwise.

    Each element of ``a`` raised to the matching element of ``b``, in the promoted
    dtype: integer powers stay integers (and wrap), so ``2 ** -1`` is 0 in int32; a
    negative real base with a fractional exponent gives nan.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.power(mx.array([2, 3, 4]), 2)
    array([4, 9, 16], dtype=int32)
    >>> mx.power(mx.array([4.0, 8.0]), 0.5)
    array([2, 2.82843], dtype=float32)
    """
    return _binary(P.Power(), a, b)


@shared_doc
def maximum(a, b, /, *, stream=None):
    """``mx.maximum``: the larger of ``a`` and ``b``, elementwise.

    A nan in either operand gives nan (Python's ``max`` would depend on the order).
    Complex numbers compare by real part, then imaginary part.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.maximum(mx.array([1, 5, 3]), mx.array([4, 2, 3]))
    array([4, 5, 3], dtype=int32)
    >>> mx.maximum(mx.array([-1.0, 2.0]), 0)
    array([0, 2], dtype=float32)
    """
    return _binary(P.Maximum(), a, b)


@shared_doc
def minimum(a, b, /, *, stream=None):
    """``mx.minimum``: the smaller of ``a`` and ``b``, elementwise.

    As in ``maximum``, a nan in either operand gives nan and complex numbers compare
    by real part first.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.minimum(mx.array([1, 5, 3]), mx.array([4, 2, 3]))
    array([1, 2, 3], dtype=int32)
    """
    return _binary(P.Minimum(), a, b)


@shared_doc
def arctan2(a, b, /, *, stream=None):
    """``mx.arctan2`` (also ``mx.atan2``): the angle of the point (``b``, ``a``), elementwise.

    In radians: ``arctan(a / b)`` with the quadrant taken from the signs of both, in
    [-pi, pi]; ``a`` is the y coordinate. Both operands are cast to their promoted float
    dtype (integers and bools: float32).

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {no_complex}, {binary_errors}.

    >>> mx.arctan2(mx.array([1.0, 1.0, -1.0]), mx.array([1.0, -1.0, -1.0]))
    array([0.785398, 2.35619, -2.35619], dtype=float32)
    """
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:
        raise ValueError("[arctan2] Not supported for complex64.")
    return _binary(P.ArcTan2(), a, b, operand_dtype=float_dtype)


@shared_doc
def logaddexp(a, b, /, *, stream=None):
    """``mx.logaddexp``: ``log(exp(a) + exp(b))``, elementwise, without overflow.

    One ``LogAddExp`` node that never forms ``exp`` of a large number, so
    ``logaddexp(1000, 1000)`` is 1000.69 where the plain formula gives inf. Both
    operands are cast to their promoted float dtype first.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.logaddexp(mx.array([0.0, 1000.0]), mx.array([0.0, 1000.0]))
    array([0.693147, 1000.69], dtype=float32)
    """
    return _binary(P.LogAddExp(), a, b, operand_dtype=float_dtype)


@shared_doc
def equal(a, b, /, *, stream=None):
    """``mx.equal``: ``a == b``, elementwise, as a bool array.

    {promoted} A nan equals nothing, not even another nan (``array_equal`` can count
    two nans as equal); complex numbers are equal when both parts are.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.equal(mx.array([1, 2, 3]), mx.array([1.0, 0.0, 3.0]))
    array([True, False, True], dtype=bool)
    """
    return _binary(P.Equal(), a, b)


@shared_doc
def not_equal(a, b, /, *, stream=None):
    """``mx.not_equal``: ``a != b``, elementwise, as a bool array.

    {promoted} A nan differs from everything, another nan included, so ``a != a`` is
    True exactly where ``a`` is nan (``isnan`` is made so).

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.not_equal(mx.array([1, 2, 3]), 2)
    array([True, False, True], dtype=bool)
    """
    return _binary(P.NotEqual(), a, b)


@shared_doc
def less(a, b, /, *, stream=None):
    """``mx.less``: ``a < b``, elementwise, as a bool array.

    {promoted} {ordering} Python's ``<`` on an array calls it.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.less(mx.array([1, 2, 3]), 2)
    array([True, False, False], dtype=bool)
    """
    return _binary(P.Less(), a, b)


@shared_doc
def less_equal(a, b, /, *, stream=None):
    """``mx.less_equal``: ``a <= b``, elementwise, as a bool array.

    {promoted} {ordering} So where a nan is involved it is not
    ``logical_not(greater(a, b))``, which is True there. Python's ``<=`` calls it.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.less_equal(mx.array([1, 2, 3]), 2)
    array([True, True, False], dtype=bool)
    """
    return _binary(P.LessEqual(), a, b)


@shared_doc
def greater(a, b, /, *, stream=None):
    """``mx.greater``: ``a > b``, elementwise, as a bool array.

    {promoted} {ordering} ``greater(a, b)`` is ``less(b, a)``; Python's ``>`` calls it.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.greater(mx.array([1, 2, 3]), 2)
    array([False, False, True], dtype=bool)
    """
    return _binary(P.Greater(), a, b)


@shared_doc
def greater_equal(a, b, /, *, stream=None):
    """``mx.greater_equal``: ``a >= b``, elementwise, as a bool array.

    {promoted} {ordering}

    ``greater_equal(a, b)`` is ``less_equal(b, a)``, and Python's ``>=`` on an array
    (or ``2 <= array``, reflected) calls it.

    Arguments:
    - ``a``, ``b``: {operands}

    Errors: ``ValueError`` {binary_errors}.

    >>> mx.greater_equal(mx.array([1, 2, 3]), 2)
    array([False, True, True], dtype=bool)
    """
    return _binary(P.GreaterEqual(), a, b)


def _as_bools(a, b):
    """Both operands cast to bool. MLX's binding converts each on its own
    (``to_array``, not ``to_arrays``), so an int next to a uint8 array is an
    int32, never an overflow."""
    return astype(scalar_or_array(a), _dt.bool_), astype(scalar_or_array(b), _dt.bool_)


@shared_doc
def logical_and(a, b, /, *, stream=None):
    """``mx.logical_and``: True where both ``a`` and ``b`` are nonzero (True), elementwise.

    Arguments:
    - ``a``, ``b``: {logical_operands}

    Errors: ``ValueError`` {broadcast} and {not_an_array}.

    >>> mx.logical_and(mx.array([True, True, False]), mx.array([True, False, False]))
    array([True, False, False], dtype=bool)
    >>> mx.logical_and(mx.array([0, 1, 2]), 3)
    array([False, True, True], dtype=bool)
    """
    return make_array(P.LogicalAnd(), broadcast_arrays(*_as_bools(a, b)))


@shared_doc
def logical_or(a, b, /, *, stream=None):
    """``mx.logical_or``: True where ``a`` or ``b`` (or both) is nonzero (True), elementwise.

    Arguments:
    - ``a``, ``b``: {logical_operands}

    Errors: ``ValueError`` {broadcast} and {not_an_array}.

    >>> mx.logical_or(mx.array([True, True, False]), mx.array([True, False, False]))
    array([True, True, False], dtype=bool)
    """
    return make_array(P.LogicalOr(), broadcast_arrays(*_as_bools(a, b)))


@shared_doc
def logical_xor(a, b, /, *, stream=None):
    """``mx.logical_xor``: True where exactly one of ``a`` and ``b`` is nonzero (True), elementwise.

    MLX's ``logical_xor`` (mlx/ops.cpp) is ``not_equal`` of the operands cast to bool;
    no primitive of its own.

    Arguments:
    - ``a``, ``b``: {logical_operands}

    Errors: ``ValueError`` {broadcast} and {not_an_array}.

    >>> mx.logical_xor(mx.array([True, True, False]), mx.array([True, False, False]))
    array([False, True, False], dtype=bool)
    """
    return not_equal(*_as_bools(a, b))


# --- bitwise -----------------------------------------------------------------------


def _own_dtype(x, other):
    """The dtype MLX's binding gives an operand before promotion (for messages):
    an array's own, a Python scalar's weak one next to an array."""
    if not is_scalar(x):
        return to_array(x).dtype
    if not is_scalar(other):
        return weak_scalar_dtype(x, other.dtype)
    return default_dtype_of_scalar(x)


def _bitwise(op, name, a, b, shift=False):
    """MLX's ``bitwise_impl``: both operands in their promoted dtype, which must
    be an integer type or bool. A shift of bools shifts uint8s (``left_shift``)."""
    x, y = to_arrays(a, b)
    dtypes = [_own_dtype(a, b), _own_dtype(b, a)]
    dtype = x.dtype
    if shift and dtype is _dt.bool_:
        dtype = _dt.uint8
    if name == "right_shift":  # MLX casts both operands before it checks them
        dtypes = [dtype, dtype]
    if not (dtype.is_integer or dtype is _dt.bool_):
        raise RuntimeError(
            f"[{name}] Only allowed on integer or boolean types but got types "
            f"{dtypes[0].name} and {dtypes[1].name}."
        )
    x, y = broadcast_arrays(astype(x, dtype), astype(y, dtype))
    return make_array(P.BitwiseBinary(op), [x, y])


@shared_doc
def bitwise_and(a, b, /, *, stream=None):
    """``mx.bitwise_and``: ``a & b``, the bits set in both, elementwise.

    Of bools it is a logical and; masking with ``2**k - 1`` keeps the low ``k`` bits.
    Python's ``&`` on an array calls it.

    Arguments:
    - ``a``, ``b``: {bitwise_operands}

    Errors: {bitwise_errors}.

    >>> mx.bitwise_and(mx.array([12, 10]), 6)
    array([4, 2], dtype=int32)
    """
    return _bitwise("and", "bitwise_and", a, b)


@shared_doc
def bitwise_or(a, b, /, *, stream=None):
    """``mx.bitwise_or``: ``a | b``, the bits set in either, elementwise.

    Of bools it is a logical or. Python's ``|`` calls it.

    Arguments:
    - ``a``, ``b``: {bitwise_operands}

    Errors: {bitwise_errors}.

    >>> mx.bitwise_or(mx.array([12, 10]), 6)
    array([14, 14], dtype=int32)
    """
    return _bitwise("or", "bitwise_or", a, b)


@shared_doc
def bitwise_xor(a, b, /, *, stream=None):
    """``mx.bitwise_xor``: ``a ^ b``, the bits set in exactly one, elementwise.

    Of bools it is a logical xor (``not_equal``), and ``x ^ x`` is 0 for every ``x``;
    Python's ``^`` on an array calls it.

    Arguments:
    - ``a``, ``b``: {bitwise_operands}

    Errors: {bitwise_errors}.

    >>> mx.bitwise_xor(mx.array([12, 10]), 6)
    array([10, 12], dtype=int32)
    """
    return _bitwise("xor", "bitwise_xor", a, b)


@shared_doc
def left_shift(a, b, /, *, stream=None):
    """``mx.left_shift`` (also ``mx.bitwise_left_shift``): ``a << b``, elementwise.

    The bits of ``a`` moved ``b`` places up; bits shifted past the dtype's width are
    lost (uint8 200 << 1 is 144). Bools are shifted as uint8, and the result is uint8.

    Arguments:
    - ``a``, ``b``: {bitwise_operands}

    Errors: {bitwise_errors}. {shift_count}

    >>> mx.left_shift(mx.array([1, 3, -1]), 2)
    array([4, 12, -4], dtype=int32)
    >>> mx.left_shift(mx.array([200], mx.uint8), 1)
    array([144], dtype=uint8)
    """
    return _bitwise("left_shift", "left_shift", a, b, shift=True)


@shared_doc
def right_shift(a, b, /, *, stream=None):
    """``mx.right_shift`` (also ``mx.bitwise_right_shift``): ``a >> b``, elementwise.

    The bits of ``a`` moved ``b`` places down; signed integers shift arithmetically (the
    sign is kept: -16 >> 2 is -4). Bools are shifted as uint8, and the result is uint8.

    Arguments:
    - ``a``, ``b``: {bitwise_operands}

    Errors: {bitwise_errors}. {shift_count}

    >>> mx.right_shift(mx.array([16, 7, -16]), 2)
    array([4, 1, -4], dtype=int32)
    """
    return _bitwise("right_shift", "right_shift", a, b, shift=True)


bitwise_left_shift = left_shift  # MLX's aliases (the array API's names)
bitwise_right_shift = right_shift


@shared_doc
def bitwise_invert(a, /, *, stream=None):
    """``mx.bitwise_invert``: ``~a``, every bit of each element flipped.

    For signed integers ``~x`` is ``-x - 1``; for unsigned ones, the largest value minus
    ``x``. Of a bool array it is ``logical_not``.

    Arguments:
    - ``a``: an integer or bool array, or a Python int.

    Errors: ``ValueError`` for a float or complex dtype (MLX: "[bitwise_invert] Bitwise
    inverse only allowed on integer types.") and {not_an_array}.

    >>> mx.bitwise_invert(mx.array([0, 5, -1]))
    array([-1, -6, 0], dtype=int32)
    >>> mx.bitwise_invert(mx.array([0, 5], mx.uint8))
    array([255, 250], dtype=uint8)
    """
    a = scalar_or_array(a)
    if a.dtype.is_inexact:
        raise ValueError("[bitwise_invert] Bitwise inverse only allowed on integer types.")
    if a.dtype is _dt.bool_:
        return logical_not(a)
    return _unary(P.BitwiseInvert(), a)


# --- ternary -----------------------------------------------------------------------


@shared_doc
def where(condition, x, y, /, *, stream=None):
    """``mx.where``: for each element, ``x`` where ``condition`` is True, else ``y``.

    ``condition`` is cast to bool (nonzero is True); ``x`` and ``y`` are promoted to one
    dtype as ``add``'s operands are, and all three are broadcast together. One
    ``Select`` node: the gradient goes to ``x`` where the condition holds and to ``y``
    elsewhere.

    Arguments:
    - ``condition``: an array or a Python scalar of any dtype.
    - ``x``, ``y``: arrays or Python scalars (the values to choose from).

    Errors: ``ValueError`` {broadcast} and {not_an_array}.

    >>> mx.where(mx.array([True, False, True]), mx.array([1, 2, 3]), mx.array([10, 20, 30]))
    array([1, 20, 3], dtype=int32)
    >>> x = mx.array([1.0, -2.0, 3.0])
    >>> mx.where(x > 0, x, 0)
    array([1, 0, 3], dtype=float32)
    """
    x, y = to_arrays(x, y)
    condition = astype(scalar_or_array(condition), _dt.bool_)
    condition, x, y = broadcast_arrays(condition, x, y)
    return make_array(P.Select(), [condition, x, y])


# MLX's aliases (python/src/ops.cpp binds the array API's names to the same functions).
acos = arccos
asin = arcsin
atan = arctan
atan2 = arctan2
acosh = arccosh
asinh = arcsinh
atanh = arctanh
pow = power
