"""Elementwise ops: each converts, promotes and broadcasts, then builds one node.

Read alongside: mlx/ops.cpp (``exp``, ``add``, ``where`` ...). Their arguments
become arrays in one step (mlxref/core/convert.py ``to_array``, ``to_arrays``);
the primitives they build are in ``mlxref.core.primitives.elementwise``.
"""

import copy
import math

from .. import dtypes as _dt
from ..array import array
from ..convert import default_dtype_of_scalar, is_scalar, to_array, to_arrays, weak_scalar_dtype
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
    a = to_array(a)
    if operand_dtype is not None and a.dtype is not operand_dtype:
        a = astype(a, operand_dtype)
    return make_array(primitive, [a])


def _float_unary(primitive, a):
    a = to_array(a)
    return _unary(primitive, a, float_dtype(a.dtype))


def _real_only(name, a):
    """``a`` as an array, or MLX's refusal of complex64 (expm1, sigmoid, erf...)."""
    a = to_array(a)
    if a.dtype is _dt.complex64:
        raise ValueError(f"[{name}] Not supported for complex64.")
    return a


def abs(a, /, *, stream=None):
    a = to_array(a)
    out = _unary(P.Abs(), a)
    # MLX's Abs keeps the dtype (|z| + 0j) and the op casts complex64 to float32.
    return astype(out, _dt.float32) if a.dtype is _dt.complex64 else out


def negative(a, /, *, stream=None):
    a = to_array(a)
    if a.dtype is _dt.bool_:
        raise ValueError("[negative] Not supported for bool, use logical_not instead.")
    return _unary(P.Negative(), a)


def sign(a, /, *, stream=None):
    return _unary(P.Sign(), a)


def square(a, /, *, stream=None):
    return _unary(P.Square(), a)


def sqrt(a, /, *, stream=None):
    return _float_unary(P.Sqrt(), a)


def rsqrt(a, /, *, stream=None):
    return _float_unary(P.Rsqrt(), a)


def reciprocal(a, /, *, stream=None):
    # MLX composes it: divide(1, a).
    a = to_array(a)
    return divide(array(1, float_dtype(a.dtype)), a)


def exp(a, /, *, stream=None):
    return _float_unary(P.Exp(), a)


def expm1(a, /, *, stream=None):
    return _float_unary(P.Expm1(), _real_only("expm1", a))


def log(a, /, *, stream=None):
    return _float_unary(P.Log("e"), a)


def log2(a, /, *, stream=None):
    return _float_unary(P.Log("2"), a)


def log10(a, /, *, stream=None):
    return _float_unary(P.Log("10"), a)


def log1p(a, /, *, stream=None):
    return _float_unary(P.Log1p(), a)


def sin(a, /, *, stream=None):
    return _float_unary(P.Sin(), a)


def cos(a, /, *, stream=None):
    return _float_unary(P.Cos(), a)


def tan(a, /, *, stream=None):
    return _float_unary(P.Tan(), a)


def arcsin(a, /, *, stream=None):
    return _float_unary(P.ArcSin(), a)


def arccos(a, /, *, stream=None):
    return _float_unary(P.ArcCos(), a)


def arctan(a, /, *, stream=None):
    return _float_unary(P.ArcTan(), a)


def sinh(a, /, *, stream=None):
    return _float_unary(P.Sinh(), a)


def cosh(a, /, *, stream=None):
    return _float_unary(P.Cosh(), a)


def tanh(a, /, *, stream=None):
    return _float_unary(P.Tanh(), a)


def arcsinh(a, /, *, stream=None):
    return _float_unary(P.ArcSinh(), a)


def arccosh(a, /, *, stream=None):
    return _float_unary(P.ArcCosh(), a)


def arctanh(a, /, *, stream=None):
    return _float_unary(P.ArcTanh(), a)


def sigmoid(a, /, *, stream=None):
    return _float_unary(P.Sigmoid(), _real_only("sigmoid", a))


def erf(a, /, *, stream=None):
    return _float_unary(P.Erf(), _real_only("erf", a))


def erfinv(a, /, *, stream=None):
    return _float_unary(P.ErfInv(), _real_only("erfinv", a))


def _integral_identity_or(primitive, a):
    # floor, ceil and round leave integers as they are (MLX returns the input).
    a = to_array(a)
    if not a.dtype.is_inexact:
        return copy.copy(a)
    return _unary(primitive, a)


def floor(a, /, *, stream=None):
    return _integral_identity_or(P.Floor(), _real_only("floor", a))


def ceil(a, /, *, stream=None):
    return _integral_identity_or(P.Ceil(), _real_only("ceil", a))


_TRUNC = "trunc(a: array, /, *, stream: StreamOrDevice = None) -> array"


def trunc(a, /, *, stream=None):
    """``mx.trunc``: round toward zero. Composed as MLX does (mlx/ops.cpp):
    ``where(a < 0, ceil(a), floor(a))``; integers and bools are returned as they are."""
    if not isinstance(a, array):
        raise incompatible_arguments(_TRUNC, (a,))
    a = _real_only("trunc", a)
    if not a.dtype.is_inexact:
        return copy.copy(a)
    return where(less(a, array(0, a.dtype)), ceil(a), floor(a))


def degrees(a, /, *, stream=None):
    """``mx.degrees``: radians to degrees, composed as MLX does: ``a`` times
    ``180 / pi`` as an array of ``a``'s float dtype (ints and bools: float32)."""
    (a,) = to_arrays(a)  # a scalar or an array (MLX refuses a list here)
    return multiply(a, array(180.0 / math.pi, float_dtype(a.dtype)))


def radians(a, /, *, stream=None):
    """``mx.radians``: degrees to radians, ``a`` times ``pi / 180`` (as ``degrees``)."""
    (a,) = to_arrays(a)  # a scalar or an array (MLX refuses a list here)
    return multiply(a, array(math.pi / 180.0, float_dtype(a.dtype)))


_ROUND = "round(a: array, /, decimals: int = 0, stream: StreamOrDevice = None) -> array"


def round(a, /, decimals=0, *, stream=None):
    """``mx.round``: round to ``decimals`` places (a negative one rounds to tens...)."""
    decimals = plain_ints(decimals)
    return rounded(a, decimals, _ROUND)


def rounded(a, decimals, signature):
    """``mx.round`` and ``array.round``, whose errors show their own ``signature``."""
    # MLX's binding takes decimals as a C int (a bool is one).
    if not isinstance(decimals, int) or not INT32_MIN <= decimals <= INT32_MAX:
        raise incompatible_arguments(signature, (a,), {"decimals": decimals})
    a = to_array(a)
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


def positive(a, /, *, stream=None):
    """``mx.positive``: unary plus. MLX's ``positive`` (mlx/ops.cpp) returns
    the input array itself (a new handle on the same node), so no node."""
    if not isinstance(a, array):
        raise incompatible_arguments(
            "positive(a: array, /, *, stream: StreamOrDevice = None) -> array", (a,)
        )
    return copy.copy(a)


def logical_not(a, /, *, stream=None):
    return _unary(P.LogicalNot(), a, _dt.bool_)


def stop_gradient(a, /, *, stream=None):
    return _unary(_base.StopGradient(), a)


def real(a, /, *, stream=None):
    """``mx.real``: the real part, float32; a real array is returned as it is."""
    a = to_array(a)
    if a.dtype is not _dt.complex64:
        return copy.copy(a)
    return _unary(P.Real(), a)


def imag(a, /, *, stream=None):
    """``mx.imag``: the imaginary part, float32; zeros for a real array."""
    a = to_array(a)
    if a.dtype is not _dt.complex64:
        return filled_like(a, array(0, a.dtype))  # zeros_like(a), as MLX's imag
    return _unary(P.Imag(), a)


def conjugate(a, /, *, stream=None):
    """``mx.conjugate``: the complex conjugate; a real array is returned as it is."""
    a = to_array(a)
    if a.dtype is not _dt.complex64:
        return copy.copy(a)
    return _unary(P.Conjugate(), a)


def conj(a, /, *, stream=None):
    """``mx.conj``: ``conjugate``."""
    return conjugate(a)


# --- binary ------------------------------------------------------------------------


def _binary(primitive, a, b, operand_dtype=None):
    a, b = to_arrays(a, b)
    if operand_dtype is not None:
        a, b = astype(a, operand_dtype(a.dtype)), astype(b, operand_dtype(b.dtype))
    a, b = broadcast_arrays(a, b)
    return make_array(primitive, [a, b])


def add(a, b, /, *, stream=None):
    return _binary(P.Add(), a, b)


def subtract(a, b, /, *, stream=None):
    return _binary(P.Subtract(), a, b)


def multiply(a, b, /, *, stream=None):
    return _binary(P.Multiply(), a, b)


def divide(a, b, /, *, stream=None):
    return _binary(P.Divide(), a, b, operand_dtype=float_dtype)


def floor_divide(a, b, /, *, stream=None):
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:  # MLX 0.32.4 divides complex numbers, with no floor
        return _binary(P.Divide(), a, b)
    return _binary(P.FloorDivide(), a, b)


def remainder(a, b, /, *, stream=None):
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:
        raise ValueError("[remainder] Complex type not supported.")
    return _binary(P.Remainder(), a, b)


def divmod(a, b, /, *, stream=None):
    """``mx.divmod``: ``[a // b, a % b]``, the two outputs of one ``DivMod`` node
    (a list, as MLX returns). Promoted and broadcast as ``floor_divide``."""
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:
        raise ValueError("[divmod] Complex type not supported.")
    a, b = broadcast_arrays(a, b)
    return _base.make_arrays(P.DivMod(), [a, b])


def power(a, b, /, *, stream=None):
    return _binary(P.Power(), a, b)


def maximum(a, b, /, *, stream=None):
    return _binary(P.Maximum(), a, b)


def minimum(a, b, /, *, stream=None):
    return _binary(P.Minimum(), a, b)


def arctan2(a, b, /, *, stream=None):
    a, b = to_arrays(a, b)
    if a.dtype is _dt.complex64:
        raise ValueError("[arctan2] Not supported for complex64.")
    return _binary(P.ArcTan2(), a, b, operand_dtype=float_dtype)


def logaddexp(a, b, /, *, stream=None):
    return _binary(P.LogAddExp(), a, b, operand_dtype=float_dtype)


def equal(a, b, /, *, stream=None):
    return _binary(P.Equal(), a, b)


def not_equal(a, b, /, *, stream=None):
    return _binary(P.NotEqual(), a, b)


def less(a, b, /, *, stream=None):
    return _binary(P.Less(), a, b)


def less_equal(a, b, /, *, stream=None):
    return _binary(P.LessEqual(), a, b)


def greater(a, b, /, *, stream=None):
    return _binary(P.Greater(), a, b)


def greater_equal(a, b, /, *, stream=None):
    return _binary(P.GreaterEqual(), a, b)


def _to_bool(dtype):
    return _dt.bool_


def logical_and(a, b, /, *, stream=None):
    return _binary(P.LogicalAnd(), a, b, operand_dtype=_to_bool)


def logical_or(a, b, /, *, stream=None):
    return _binary(P.LogicalOr(), a, b, operand_dtype=_to_bool)


def logical_xor(a, b, /, *, stream=None):
    """``mx.logical_xor``: MLX's ``logical_xor`` (mlx/ops.cpp) is
    ``not_equal`` of the operands cast to bool; no primitive of its own."""
    a, b = to_arrays(a, b)
    return not_equal(astype(a, _dt.bool_), astype(b, _dt.bool_))


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


def bitwise_and(a, b, /, *, stream=None):
    return _bitwise("and", "bitwise_and", a, b)


def bitwise_or(a, b, /, *, stream=None):
    return _bitwise("or", "bitwise_or", a, b)


def bitwise_xor(a, b, /, *, stream=None):
    return _bitwise("xor", "bitwise_xor", a, b)


def left_shift(a, b, /, *, stream=None):
    return _bitwise("left_shift", "left_shift", a, b, shift=True)


def right_shift(a, b, /, *, stream=None):
    return _bitwise("right_shift", "right_shift", a, b, shift=True)


bitwise_left_shift = left_shift  # MLX's aliases (the array API's names)
bitwise_right_shift = right_shift


def bitwise_invert(a, /, *, stream=None):
    """``mx.bitwise_invert``: ``~`` of each integer; of a bool, ``logical_not``."""
    a = to_array(a)
    if a.dtype.is_inexact:
        raise ValueError("[bitwise_invert] Bitwise inverse only allowed on integer types.")
    if a.dtype is _dt.bool_:
        return logical_not(a)
    return _unary(P.BitwiseInvert(), a)


# --- ternary -----------------------------------------------------------------------


def where(condition, x, y, /, *, stream=None):
    """``mx.where``: elements of ``x`` where ``condition`` holds, else of ``y``."""
    x, y = to_arrays(x, y)
    condition = astype(to_array(condition), _dt.bool_)
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
