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
from .docs import shared_doc

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


@shared_doc
def array_equal(a, b, /, *, equal_nan=False, stream=None):
    """``mx.array_equal``: a 0-d bool, True when ``a`` and ``b`` have one shape and equal elements.

    The elements are compared in the promoted dtype, so an int32 and a float32 array
    holding the same numbers are equal; the dtypes need not match. Arrays of different
    shapes are not equal (no broadcasting). As in MLX, it is one ``Equal`` node (that
    may count two nans as equal) reduced by ``all``.

    Arguments:
    - ``a``, ``b``: arrays or Python scalars.
    - ``equal_nan``: a bool (default False); True counts two nans as equal (for float
      and complex dtypes).

    Errors: ``TypeError`` when ``equal_nan`` is not a bool (MLX: "array_equal():
    incompatible function arguments. ..."); ``ValueError`` {not_an_array}.

    >>> mx.array_equal(mx.array([1, 2, 3]), mx.array([1.0, 2.0, 3.0]))
    array(True, dtype=bool)
    >>> mx.array_equal(mx.array([1.0, mx.nan]), mx.array([1.0, mx.nan]), equal_nan=True)
    array(True, dtype=bool)
    """
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


@shared_doc
def isclose(a, b, /, rtol=1e-5, atol=1e-8, *, equal_nan=False, stream=None):
    """``mx.isclose``: True where ``|a - b| <= atol + rtol * |b|``, elementwise, as a bool array.

    ``a`` and ``b`` are broadcast together. Infinities are close only to an infinity of
    the same sign; nans are close to nothing, or to each other with ``equal_nan``. As
    MLX composes it: ``atol`` and ``rtol`` become float32 scalars (strong, so an int or
    float16 ``b`` gives a float32 right side), and ``a - b`` is taken in the promoted
    dtype (so it wraps for unsigned integers). The test is not symmetric: ``rtol``
    scales ``|b|``.

    Arguments:
    {close_arguments}

    Errors: {close_errors}.

    >>> mx.isclose(mx.array([1.0, 2.0, mx.inf, mx.nan]), mx.array([1.000001, 2.1, mx.inf, mx.nan]))
    array([True, False, True, False], dtype=bool)
    >>> mx.isclose(mx.array([1.0]), mx.array([1.5]), rtol=0.5)
    array([True], dtype=bool)
    """
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


@shared_doc
def allclose(a, b, /, rtol=1e-5, atol=1e-8, *, equal_nan=False, stream=None):
    """``mx.allclose``: a 0-d bool, True when ``isclose(a, b)`` holds for every element.

    ``all(isclose(a, b, rtol, atol, equal_nan=equal_nan))``: the same test, the same
    broadcasting, reduced to one answer.

    Arguments:
    {close_arguments}

    Errors: {close_errors}.

    >>> mx.allclose(mx.array([1.0, 2.0]), mx.array([1.0, 2.00001]))
    array(True, dtype=bool)
    >>> mx.allclose(mx.array([1.0, 2.0]), mx.array([1.0, 2.1]), atol=0.2)
    array(True, dtype=bool)
    """
    _check_close_args("allclose", a, b, rtol, atol, equal_nan)
    return _reduction.all(isclose(a, b, rtol, atol, equal_nan=equal_nan))


@shared_doc
def isnan(a, /, *, stream=None):
    """``mx.isnan``: True where an element of ``a`` is nan, as a bool array.

    Composed as ``a != a`` (nan is the one value unequal to itself); a complex number is
    nan when either part is. Integer and bool arrays hold no nan: the result is all
    False, with no comparison.

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.isnan(mx.array([1.0, mx.nan, mx.inf]))
    array([False, True, False], dtype=bool)
    """
    a = scalar_or_array(a)
    if _exact_only(a):
        return _creation.full(a.shape, False, _dt.bool_)
    return _ew.not_equal(a, a)


@shared_doc
def isinf(a, /, *, stream=None):
    """``mx.isinf``: True where an element of ``a`` is +inf or -inf, as a bool array.

    Composed as ``isposinf(a) | isneginf(a)``; a complex number is infinite when either
    part is. Integer and bool arrays give all False.

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.isinf(mx.array([1.0, mx.nan, mx.inf, -mx.inf]))
    array([False, False, True, True], dtype=bool)
    """
    a = scalar_or_array(a)
    if _exact_only(a):
        return _creation.full(a.shape, False, _dt.bool_)
    if a.dtype is _dt.complex64:
        return _ew.logical_or(isinf(_ew.real(a)), isinf(_ew.imag(a)))
    return _ew.logical_or(isposinf(a), isneginf(a))


@shared_doc
def isfinite(a, /, *, stream=None):
    """``mx.isfinite``: True where an element of ``a`` is neither inf nor nan, as a bool array.

    Composed as ``not (isinf(a) or isnan(a))``. Integer and bool arrays give all True.

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.isfinite(mx.array([1.0, mx.nan, mx.inf, -mx.inf]))
    array([True, False, False, False], dtype=bool)
    """
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


@shared_doc
def isposinf(a, /, *, stream=None):
    """``mx.isposinf``: True where an element of ``a`` is +inf, as a bool array.

    Composed as ``a == inf`` with inf in ``a``'s dtype, so for complex64 only
    ``inf + 0j`` counts. Integer and bool arrays give all False.

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.isposinf(mx.array([1.0, mx.nan, mx.inf, -mx.inf]))
    array([False, False, True, False], dtype=bool)
    """
    return _equals_infinity(a, math.inf)


@shared_doc
def isneginf(a, /, *, stream=None):
    """``mx.isneginf``: True where an element of ``a`` is -inf, as a bool array.

    Composed as ``a == -inf`` in ``a``'s dtype (as ``isposinf``). Integer and bool
    arrays give all False.

    Arguments:
    - ``a``: an array or a Python scalar.

    Errors: ``ValueError`` {not_an_array}.

    >>> mx.isneginf(mx.array([1.0, mx.nan, mx.inf, -mx.inf]))
    array([False, False, False, True], dtype=bool)
    """
    return _equals_infinity(a, -math.inf)


@shared_doc
def nan_to_num(a, /, nan=0.0, posinf=None, neginf=None, *, stream=None):
    """``mx.nan_to_num``: ``a`` with each nan, +inf and -inf replaced by a finite number.

    By default nan becomes 0 and the infinities the dtype's largest and lowest finite
    values. Composed of ``where``s over ``isnan``, ``isposinf`` and ``isneginf``.
    Integer and bool arrays come back as they are. The replacement values pass through a
    C float first (MLX's argument type), so ``nan=1e10`` is inf in float16.

    Arguments:
    - ``a``: an array or a Python scalar: float32, float16 or bfloat16 (or an integer or
      bool dtype).
    - ``nan``: the value for nan, a float (default 0).
    - ``posinf``: the value for +inf (default: the dtype's largest finite value).
    - ``neginf``: the value for -inf (default: the dtype's lowest finite value).

    Errors: ``ValueError`` for float64 and complex64 (MLX: "[nan_to_num] Does not yet
    support given type: float64.") and {not_an_array}; ``TypeError`` when a replacement
    is not a number ("nan_to_num(): incompatible function arguments. ...").

    >>> mx.nan_to_num(mx.array([1.0, mx.nan, mx.inf, -mx.inf]))
    array([1, 0, 3.40282e+38, -3.40282e+38], dtype=float32)
    >>> mx.nan_to_num(mx.array([mx.nan, mx.inf]), nan=-1.0, posinf=100.0)
    array([-1, 100], dtype=float32)
    """
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
