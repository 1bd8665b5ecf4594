"""Comparisons of whole arrays and the nan/inf tests: compositions of other ops.

Read alongside: mlx/ops.cpp (``array_equal``, ``isnan``, ``isinf``,
``isfinite``, ``isposinf``, ``isneginf``, ``nan_to_num``, ``allclose``,
``isclose``) and their bindings in python/src/ops.cpp. As in MLX, only
``array_equal`` builds a node of its own (an ``Equal`` that may count two
nans as equal); the others are compositions, so their gradients, jvps and
vmaps are those of the ops they are made of.
"""

import copy
import math

from .. import dtypes as _dt
from ..array import array
from ..convert import scalar_or_array, to_arrays
from ..primitives import elementwise as P
from ..primitives.base import make_array
from . import creation as _creation
from . import elementwise as _ew
from . import reduction as _reduction
from .common import incompatible_arguments

__all__ = [
    "array_equal", "allclose", "isclose", "isnan", "isinf", "isfinite", "isposinf",
    "isneginf", "nan_to_num",
]

_SIGNATURES = {
    "array_equal": "array_equal(a: scalar | array, b: scalar | array, equal_nan: bool = False, "
                   "stream: StreamOrDevice = None) -> array",
    "isclose": "isclose(a: array, b: array, /, rtol: float = 1e-05, atol: float = 1e-08, *, "
               "equal_nan: bool = False, stream: StreamOrDevice = None) -> array",
    "allclose": "allclose(a: array, b: array, /, rtol: float = 1e-05, atol: float = 1e-08, *, "
                "equal_nan: bool = False, stream: StreamOrDevice = None) -> array",
    "nan_to_num": "nan_to_num(a: scalar | array, nan: float = 0, posinf: float | None = None, "
                  "neginf: float | None = None, *, stream: StreamOrDevice = None) -> array",
}


def _is_float_arg(v):
    """What MLX's binding takes for a ``float`` argument (a C double)."""
    return type(v) in (bool, int, float) and (type(v) is not int or abs(v) < 2**1024)


def _exact_only(a):
    """True for the dtypes that hold no nan or inf (integers and bool)."""
    return not a.dtype.is_inexact


def array_equal(a, b, /, *, equal_nan=False, stream=None):
    """``mx.array_equal``: a 0-d bool, True when the shapes match and every
    pair of elements (in the promoted dtype) is equal; with ``equal_nan``, two
    nans count as equal (for float and complex dtypes). No broadcasting."""
    if type(equal_nan) is not bool:
        raise incompatible_arguments(_SIGNATURES["array_equal"], (a, b),
                                     {"equal_nan": equal_nan})
    a, b = to_arrays(a, b)
    if a.shape != b.shape:
        return array(False)
    equal_nan = equal_nan and a.dtype.is_inexact
    return _reduction.all(make_array(P.Equal(equal_nan), [a, b]))


def _check_close_args(name, a, b, rtol, atol, equal_nan):
    kwargs = {k: v for k, v, default in (("rtol", rtol, 1e-5), ("atol", atol, 1e-8),
                                         ("equal_nan", equal_nan, False))
              if not (type(v) is type(default) and v == default)}
    if (not isinstance(a, array) or not isinstance(b, array) or not _is_float_arg(rtol)
            or not _is_float_arg(atol) or type(equal_nan) is not bool):
        raise incompatible_arguments(_SIGNATURES[name], (a, b), kwargs)


def isclose(a, b, /, rtol=1e-5, atol=1e-8, *, equal_nan=False, stream=None):
    """``mx.isclose``: ``|a - b| <= atol + rtol * |b|`` elementwise (broadcast),
    infinities equal when of the same sign, nans equal only with ``equal_nan``.

    As MLX composes it: ``atol`` and ``rtol`` become float32 scalars (strong,
    so an int or float16 ``b`` gives a float32 right side), and ``a - b`` is
    taken in the promoted dtype (so it wraps for unsigned integers)."""
    _check_close_args("isclose", a, b, rtol, atol, equal_nan)
    rhs = _ew.add(array(float(atol)), _ew.multiply(array(float(rtol)), _ew.abs(b)))
    lhs = _ew.abs(_ew.subtract(a, b))
    out = _ew.less_equal(lhs, rhs)
    a_pos, b_pos, a_neg, b_neg = isposinf(a), isposinf(b), isneginf(a), isneginf(b)
    any_inf = _ew.logical_or(_ew.logical_or(a_pos, a_neg), _ew.logical_or(b_pos, b_neg))
    both_inf = _ew.logical_or(_ew.logical_and(a_pos, b_pos), _ew.logical_and(a_neg, b_neg))
    out = _ew.logical_and(out, _ew.logical_not(any_inf))
    out = _ew.logical_or(out, both_inf)
    if equal_nan:
        out = _ew.logical_or(out, _ew.logical_and(isnan(a), isnan(b)))
    return out


def allclose(a, b, /, rtol=1e-5, atol=1e-8, *, equal_nan=False, stream=None):
    """``mx.allclose``: ``all(isclose(a, b, rtol, atol, equal_nan))``, a 0-d bool."""
    _check_close_args("allclose", a, b, rtol, atol, equal_nan)
    return _reduction.all(isclose(a, b, rtol, atol, equal_nan=equal_nan))


def isnan(a, /, *, stream=None):
    """``mx.isnan``: ``a != a``; all False for integers and bool."""
    a = scalar_or_array(a)
    if _exact_only(a):
        return _creation.full(a.shape, False, _dt.bool_)
    return _ew.not_equal(a, a)


def isinf(a, /, *, stream=None):
    """``mx.isinf``: +-inf; a complex number is infinite when either part is."""
    a = scalar_or_array(a)
    if _exact_only(a):
        return _creation.full(a.shape, False, _dt.bool_)
    if a.dtype is _dt.complex64:
        return _ew.logical_or(isinf(_ew.real(a)), isinf(_ew.imag(a)))
    return _ew.logical_or(isposinf(a), isneginf(a))


def isfinite(a, /, *, stream=None):
    """``mx.isfinite``: neither inf nor nan; all True for integers and bool."""
    a = scalar_or_array(a)
    if _exact_only(a):
        return _creation.full(a.shape, True, _dt.bool_)
    return _ew.logical_not(_ew.logical_or(isinf(a), isnan(a)))


def _equals_infinity(a, value):
    a = scalar_or_array(a)
    if _exact_only(a):
        return _creation.full(a.shape, False, _dt.bool_)
    # MLX compares with inf in a's own dtype (for complex64: inf + 0j).
    return _ew.equal(a, array(value, a.dtype))


def isposinf(a, /, *, stream=None):
    """``mx.isposinf``: ``a == +inf`` (in ``a``'s dtype: complex ``inf+0j`` only)."""
    return _equals_infinity(a, math.inf)


def isneginf(a, /, *, stream=None):
    """``mx.isneginf``: ``a == -inf`` (in ``a``'s dtype)."""
    return _equals_infinity(a, -math.inf)


def nan_to_num(a, nan=0.0, posinf=None, neginf=None, *, stream=None):
    """``mx.nan_to_num``: nan, +inf and -inf replaced (by default with 0 and
    the dtype's largest and lowest finite values). Integers and bool come
    back as they are; float64 and complex64 are refused, as in MLX. The
    replacement values pass through a C float first (MLX's argument type),
    so ``nan=1e10`` is inf in float16."""
    if not _is_float_arg(nan) or not all(v is None or _is_float_arg(v) for v in (posinf, neginf)):
        kwargs = {k: v for k, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf))
                  if v is not None and not (k == "nan" and type(v) is float and v == 0.0)}
        raise incompatible_arguments(_SIGNATURES["nan_to_num"], (a,), kwargs)
    a = scalar_or_array(a)
    dtype = a.dtype
    if not dtype.is_inexact:
        return copy.copy(a)
    if dtype not in (_dt.float32, _dt.float16, _dt.bfloat16):
        raise ValueError(f"[nan_to_num] Does not yet support given type: {dtype.name}.")
    largest = _dt.finfo(dtype).max
    nan, posinf, neginf = (_c_float(v) for v in (
        nan, largest if posinf is None else posinf, -largest if neginf is None else neginf))
    out = _ew.where(isnan(a), array(nan, dtype), a)
    out = _ew.where(isposinf(a), array(posinf, dtype), out)
    return _ew.where(isneginf(a), array(neginf, dtype), out)


def _c_float(v):
    """A Python number as a C float holds it (inf beyond float32's range)."""
    try:
        return _dt.float32.cast(float(v))
    except OverflowError:
        return math.copysign(math.inf, v)
