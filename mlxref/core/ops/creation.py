"""Creation ops: zeros, ones, full, their ``_like`` forms, arange, linspace, eye, identity.

Read alongside: mlx/ops.cpp (``arange``, ``linspace``, ``full``, ``full_like``,
``zeros``, ``ones``, ``eye``, ``tri``) and python/src/ops.cpp for the Python
signatures and argument conversion.

As in MLX, ``full`` is a ``Full`` node over the value broadcast to the shape,
and ``zeros`` / ``ones`` are ``full`` of a scalar. ``arange`` is the one op
here with its own primitive (``Arange``, which has no inputs). ``linspace`` is
composed from arange and arithmetic exactly as MLX composes it. MLX builds
``eye`` by scattering ones into zeros; mlxref compares a column of row indices
with a row of column indices instead (the way MLX builds ``tri``), which needs
no scatter and gives the same array.
"""

import math

from .. import dtypes as _dt
from .. import convert
from ..array import array, elements, from_data
from ..convert import scalar_or_array
from ..scalar import is_symbolic
from ..primitives.base import make_array
from ..primitives.creation import Arange, Full, arange_size
from .common import (
    INT32_MAX,
    astype,
    broadcast_shapes,
    broadcast_to,
    filled_like,
    incompatible_arguments,
    is_int,
    plain_ints,
    to_shape,
)
from .docs import shared_doc
from .elementwise import add, divide, equal, greater_equal, multiply, subtract, where

__all__ = [
    "zeros", "ones", "full", "zeros_like", "ones_like", "arange", "linspace", "eye",
    "identity", "asarray", "from_dlpack", "empty", "empty_like", "full_like", "tri", "tril", "triu"
]

# The signatures MLX prints when Python arguments have the wrong types.
_SIGNATURES = {
    "zeros": "zeros(shape: int | Sequence[int], dtype: Dtype | None = float32, *, "
    "stream: StreamOrDevice = None) -> array",
    "ones": "ones(shape: int | Sequence[int], dtype: Dtype | None = float32, *, "
    "stream: StreamOrDevice = None) -> array",
    "full": "full(shape: int | Sequence[int], vals: scalar | array, dtype: Dtype | None = None, "
    "*, stream: StreamOrDevice = None) -> array",
    "zeros_like": "zeros_like(a: array, /, dtype: Dtype | None = None, *, "
    "stream: StreamOrDevice = None) -> array",
    "ones_like": "ones_like(a: array, /, dtype: Dtype | None = None, *, "
    "stream: StreamOrDevice = None) -> array",
    "arange": "arange(start : int | float, stop : None | int | float, step : None | int | float, "
    "dtype: Dtype | None = None, *, stream: StreamOrDevice = None) -> array\n"
    "    2. arange(stop : int | float, step : None | int | float = None, "
    "dtype: Dtype | None = None, *, stream: StreamOrDevice = None) -> array",
    "linspace": "linspace(start: scalar, stop: scalar, num: int | None = 50, "
    "endpoint: bool = True, dtype: Dtype | None = float32, "
    "stream: StreamOrDevice = None) -> array",
    "eye": "eye(n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = float32, *, "
    "stream: StreamOrDevice = None) -> array",
    "identity": "identity(n: int, dtype: Dtype | None = float32, *, "
    "stream: StreamOrDevice = None) -> array",
    "full_like": "full_like(a: array, vals: scalar | array, dtype: Dtype | None = None, *, "
    "stream: StreamOrDevice = None) -> array",
    "tri": "tri(n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = None, *, "
    "stream: StreamOrDevice = None) -> array",
    "tril": "tril(x: array, k: int = 0, *, stream: StreamOrDevice = None) -> array",
    "triu": "triu(x: array, k: int = 0, *, stream: StreamOrDevice = None) -> array",
}


# --- argument checking shared with ops/linalg.py and random.py ------------------


def is_number(value):
    return isinstance(value, (bool, int, float, complex)) or is_symbolic(value)


def check_dtype(dtype, signature, args):
    """``dtype`` must be an mlxref Dtype (or None, where the op allows it)."""
    if dtype is not None and not isinstance(dtype, _dt.Dtype):
        raise incompatible_arguments(signature, args)


def check_scalar_or_array(value):
    """``value`` itself, if MLX accepts it as ``scalar | array`` (a list is not)."""
    if isinstance(value, array) or is_number(value):
        return value
    raise convert.not_an_operand(value)


# --- full, zeros, ones ---------------------------------------------------------------


def _full(shape, vals):
    """MLX's ``full(shape, vals)``: Full over ``vals`` broadcast to ``shape``."""
    if any(d < 0 for d in shape):
        raise ValueError("[full] Negative dimensions not allowed.")
    return make_array(Full(), [broadcast_to(vals, shape)])


@shared_doc
def full(shape, vals, dtype=None, *, stream=None):
    """``mx.full``: an array of ``shape`` with every element equal to ``vals`` (a scalar, or an array broadcast to ``shape``).

    As MLX builds it: one ``Full`` node over ``vals`` broadcast to ``shape``
    (``zeros`` and ``ones`` are this op with a scalar). MLX 0.32 quirk, kept: the
    dtype is that of ``vals`` after conversion, so ``dtype`` is ignored when
    ``vals`` is an array, and a float scalar with an integer ``dtype`` stays
    float32 (see ``scalar_or_array``).

    Arguments:
    - ``shape``: an int or a sequence of ints.
    - ``vals``: a Python scalar or an array (its dtype wins, see above).
    - ``dtype``: the dtype a Python scalar is converted to (default: the scalar's own: int32, float32 or bool).

    Errors: ``ValueError`` {negative_dims}, for ``vals`` that does not broadcast to
    ``shape`` ("[broadcast_shapes] Shapes (3) and (2) cannot be broadcast.") and for a
    list ``vals`` ("Invalid type list received in array initialization.").

    >>> mx.full((2, 2), 7)
    array([[7, 7],
           [7, 7]], dtype=int32)
    >>> mx.full((2, 3), mx.array([1.5, 2, 3]))
    array([[1.5, 2, 3],
           [1.5, 2, 3]], dtype=float32)
    """
    sig = _SIGNATURES["full"]
    check_dtype(dtype, sig, (shape, vals, dtype))
    shape = to_shape(shape, sig, (shape, vals, dtype))
    return _full(shape, scalar_or_array(vals, dtype))


@shared_doc
def zeros(shape, dtype=_dt.float32, *, stream=None):
    """``mx.zeros`` (also ``mx.empty``): an array of ``shape`` filled with zeros.

    ``mx.empty`` is the same function: MLX leaves an empty array's memory
    uninitialised, and mlxref fills it with zeros. Composed as ``full(shape, 0)``.

    Arguments:
    {fill_arguments}

    Errors: {fill_errors}.

    >>> mx.zeros((2, 3))
    array([[0, 0, 0],
           [0, 0, 0]], dtype=float32)
    >>> mx.zeros(3, mx.int32)
    array([0, 0, 0], dtype=int32)
    """
    sig = _SIGNATURES["zeros"]
    check_dtype(dtype, sig, (shape, dtype))
    dtype = dtype or _dt.float32
    return _full(to_shape(shape, sig, (shape, dtype)), array(0, dtype))


@shared_doc
def ones(shape, dtype=_dt.float32, *, stream=None):
    """``mx.ones``: an array of ``shape`` filled with ones.

    Composed as ``full(shape, 1)`` in ``dtype``.

    Arguments:
    {fill_arguments}

    Errors: {fill_errors}.

    >>> mx.ones((2, 2), mx.bool_)
    array([[True, True],
           [True, True]], dtype=bool)
    """
    sig = _SIGNATURES["ones"]
    check_dtype(dtype, sig, (shape, dtype))
    dtype = dtype or _dt.float32
    return _full(to_shape(shape, sig, (shape, dtype)), array(1, dtype))


@shared_doc
def zeros_like(a, /, dtype=None, *, stream=None):
    """``mx.zeros_like`` (also ``mx.empty_like``): an array of zeros with ``a``'s shape, in ``a``'s dtype unless ``dtype`` is given.

    ``mx.empty_like`` is the same function (mlxref never leaves memory
    uninitialised).

    Arguments:
    - ``a``: {like_a}
    - ``dtype``: {like_dtype}

    Errors: {like_errors}.

    >>> mx.zeros_like(mx.array([1, 2, 3]))
    array([0, 0, 0], dtype=int32)
    """
    sig = _SIGNATURES["zeros_like"]
    if not isinstance(a, array):
        raise incompatible_arguments(sig, (a, dtype))
    check_dtype(dtype, sig, (a, dtype))
    return filled_like(a, array(0, dtype or a.dtype))


@shared_doc
def ones_like(a, /, dtype=None, *, stream=None):
    """``mx.ones_like``: an array of ones with ``a``'s shape, in ``a``'s dtype unless ``dtype`` is given.

    Arguments:
    - ``a``: {like_a}
    - ``dtype``: {like_dtype}

    Errors: {like_errors}.

    >>> mx.ones_like(mx.array([1.5, 2]), mx.int32)
    array([1, 1], dtype=int32)
    """
    sig = _SIGNATURES["ones_like"]
    if not isinstance(a, array):
        raise incompatible_arguments(sig, (a, dtype))
    check_dtype(dtype, sig, (a, dtype))
    return filled_like(a, array(1, dtype or a.dtype))


# MLX's aliases (python/src/ops.cpp): nothing is left uninitialised in mlxref either.
empty = zeros
empty_like = zeros_like


@shared_doc
def full_like(a, /, vals, dtype=None, *, stream=None):
    """``mx.full_like``: an array with ``a``'s shape filled with ``vals``, in ``dtype`` (default: ``a``'s dtype).

    As MLX's ``full_like`` (mlx/ops.cpp): a scalar ``vals`` is converted in that
    dtype as a weak scalar would be, broadcast against ``a``, then cast, so a
    float fill of an integer array is truncated.

    Arguments:
    - ``a``: {like_a}
    - ``vals``: a Python scalar, or an array that broadcasts to ``a``'s shape.
    - ``dtype``: {like_dtype}

    Errors: {like_errors}; ``ValueError`` when ``vals`` does not broadcast with ``a``
    (MLX: "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast.") or is a list
    (MLX: "Invalid type list received in array initialization.").

    >>> mx.full_like(mx.array([1, 2, 3]), 2.5)
    array([2, 2, 2], dtype=int32)
    >>> mx.full_like(mx.zeros((2,)), 0.5)
    array([0.5, 0.5], dtype=float32)
    """
    sig = _SIGNATURES["full_like"]
    if not isinstance(a, array) or not (dtype is None or isinstance(dtype, _dt.Dtype)):
        raise incompatible_arguments(sig, (a, vals), {"dtype": dtype} if dtype else None)
    dtype = dtype or a.dtype
    vals = scalar_or_array(check_scalar_or_array(vals), dtype)
    broadcast_shapes(a.shape, vals.shape)  # MLX broadcasts both (and so checks them)
    return filled_like(a, astype(vals, dtype))


# --- arange and linspace -----------------------------------------------------------------


def typed_arange(start, stop, step, dtype):
    """MLX's C++ ``arange(start, stop, step, dtype)``: checks, then an Arange
    node (``arange`` is the Python binding's overloads, which end here)."""
    if dtype is _dt.bool_:
        raise ValueError("bool not supported for arange.")
    if any(math.isnan(v) for v in (start, stop, step)) or math.isinf(start) or math.isinf(stop):
        raise ValueError("[arange] Cannot compute length.")
    if step == 0:
        raise ValueError("[arange] step must be nonzero.")
    if math.isinf(step):
        # An infinite step: one element if the range is not empty, else none.
        if (step > 0 and start < stop) or (step < 0 and start > stop):
            return array([start], dtype)
    size = arange_size(start, stop, step)
    if size > INT32_MAX:
        raise ValueError("[arange] Maximum size exceeded.")
    return make_array(Arange(start, stop, step, dtype), [])


@shared_doc
def arange(*args, stream=None, **kwargs):
    """``mx.arange``: the numbers ``start, start + step, ...`` up to but excluding ``stop``, as a 1-D array.

    Called as ``arange(stop)``, ``arange(start, stop)`` or ``arange(start,
    stop, step)``. MLX binds two overloads, ``arange(start, stop, step=None,
    dtype=None)`` and ``arange(stop, step=None, dtype=None)``, and Python's call
    picks the first whose parameters it fills: so ``arange(1, step=2)`` is a
    stop of 1, while ``arange(start=1, step=2)`` fits neither (no stop) and
    raises a ``TypeError``, as in MLX. The result is one ``Arange`` node (a
    primitive with no inputs); a range that runs the wrong way is empty.

    Arguments:
    - ``start``: the first number (default: 0).
    - ``stop``: the end, not included.
    - ``step``: the distance between numbers, positive or negative (default: 1).
    - ``dtype``: the element type (default: int32 when every number given is
      an int (int64 if one does not fit int32), float32 when one is a float).

    Errors: ``ValueError`` for a zero step (MLX: "[arange] step must be
    nonzero."), an infinite or nan bound ("[arange] Cannot compute length."), a
    bool dtype ("bool not supported for arange.") or more than 2**31 - 1
    elements ("[arange] Maximum size exceeded.").

    >>> mx.arange(5)
    array([0, 1, 2, 3, 4], dtype=int32)
    >>> mx.arange(1, 2, 0.25)
    array([1, 1.25, 1.5, 1.75], dtype=float32)
    """
    sig = _SIGNATURES["arange"]
    for names in (("start", "stop", "step", "dtype"), ("stop", "step", "dtype")):
        bound = dict(zip(names, args))
        if len(args) > len(names) or any(k not in names or k in bound for k in kwargs):
            continue
        bound.update(kwargs)
        if "stop" in bound and ("start" in bound or names[0] == "stop"):
            break
    else:
        raise incompatible_arguments(sig, args, kwargs)
    start, stop, step, dtype = (bound.get(k) for k in ("start", "stop", "step", "dtype"))
    given = tuple(v for v in (start, stop, step) if v is not None)
    if (start is None and stop is None) or (names[0] == "start" and start is None):
        raise incompatible_arguments(sig, args, kwargs)
    if not all(isinstance(v, (bool, int, float)) for v in given):
        raise incompatible_arguments(sig, args, kwargs)
    check_dtype(dtype, sig, given + (dtype,))
    if stop is None or start is None:  # arange(stop) / arange(stop=...)
        stop = start if stop is None else stop
        start = 0
        inferred = (stop,) if step is None else (stop, step)
    else:
        inferred = (start, stop) if step is None else (start, stop, step)
    if dtype is None:
        dtype = _dt.bool_
        for v in inferred:
            dtype = _dt.promote_types(dtype, convert.default_dtype_of_scalar(v))
    return typed_arange(start, stop, 1 if step is None else step, dtype)


def _as_number(value, signature, args):
    """A ``scalar`` argument (a Python number or a one-element array) as a number."""
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, array) and value.size == 1:
        return value.item()
    raise incompatible_arguments(signature, args)


@shared_doc
def linspace(start, stop, num=50, endpoint=True, dtype=_dt.float32, stream=None):
    """``mx.linspace``: ``num`` evenly spaced numbers from ``start`` to ``stop`` (``stop`` included unless ``endpoint`` is False).

    Composed as in MLX: ``t = arange(num) / (num - 1)`` (or ``/ num`` without
    the endpoint), then ``(1 - t) * start + t * stop`` in float32 (float64 for
    a float64 ``dtype``), cast to ``dtype``.

    Arguments:
    - ``start``: the first number (a Python number or a one-element array).
    - ``stop``: the last number, or the end of the range without ``endpoint``.
    - ``num``: how many numbers (default: 50).
    - ``endpoint``: whether ``stop`` is the last number (default: True).
    - ``dtype``: {float32_dtype}

    Errors: ``ValueError`` for a negative ``num`` (MLX: "[linspace] number of
    samples, -1, must be non-negative."); ``TypeError`` for a ``num`` that is
    not an int.

    >>> mx.linspace(0, 1, 5)
    array([0, 0.25, 0.5, 0.75, 1], dtype=float32)
    >>> mx.linspace(0, 1, 4, endpoint=False)
    array([0, 0.25, 0.5, 0.75], dtype=float32)
    """
    num = plain_ints(num)
    sig = _SIGNATURES["linspace"]
    args = (start, stop, num, endpoint, dtype)
    start = _as_number(start, sig, args)
    stop = _as_number(stop, sig, args)
    if not is_int(num) or not isinstance(endpoint, bool):
        raise incompatible_arguments(sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.float32
    if num < 0:
        raise ValueError(f"[linspace] number of samples, {num}, must be non-negative.")
    inner = _dt.float64 if dtype is _dt.float64 else _dt.float32
    if num == 1:
        return astype(array([start], inner), dtype)
    denominator = num - 1 if endpoint else num
    t = divide(typed_arange(0, num, 1, inner), array(denominator, inner))
    t_bar = subtract(array(1, inner), t)
    return astype(
        add(multiply(t_bar, array(start, inner)), multiply(t, array(stop, inner))),
        dtype,
    )


# --- tri, tril, triu ------------------------------------------------------------------


def _tri(n, m, k, dtype):
    """MLX's ``tri``: ``arange(n)[:, None] >= arange(-k, m - k)[None]``, cast."""
    rows = typed_arange(0, n, 1, _dt.int32).reshape(-1, 1)
    cols = typed_arange(-k, m - k, 1, _dt.int32).reshape(1, -1)
    return astype(greater_equal(rows, cols), dtype)


@shared_doc
def tri(n, m=None, k=0, dtype=None, *, stream=None):
    """``mx.tri``: an ``n`` x ``m`` array with ones at and below diagonal ``k`` and zeros above it.

    As MLX composes it: a column of row indices compared (``>=``) with a row of
    column indices shifted by ``k``, cast to ``dtype``.

    Arguments:
    - ``n``: the number of rows.
    - ``m``: the number of columns (default: ``n``).
    - ``k``: the diagonal: {diagonals}
    - ``dtype``: {float32_dtype}

    Errors: ``TypeError`` ("tri(): incompatible function arguments") when ``n``,
    ``m`` or ``k`` is not an int.

    >>> mx.tri(3)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]], dtype=float32)
    >>> mx.tri(2, 3, k=1, dtype=mx.int32)
    array([[1, 1, 0],
           [1, 1, 1]], dtype=int32)
    """
    n, m, k = plain_ints(n), plain_ints(m), plain_ints(k)
    sig = _SIGNATURES["tri"]
    given = {"m": m, "k": k, "dtype": dtype}
    kwargs = {name: v for name, v in given.items() if v != (0 if name == "k" else None)}
    if not is_int(n) or not (m is None or is_int(m)) or not is_int(k):
        raise incompatible_arguments(sig, (n,), kwargs)
    if dtype is not None and not isinstance(dtype, _dt.Dtype):
        raise incompatible_arguments(sig, (n,), kwargs)
    return _tri(n, n if m is None else m, k, dtype or _dt.float32)


def _triangle(x, k, name):
    sig = _SIGNATURES[name]
    if not isinstance(x, array) or not is_int(k):
        raise incompatible_arguments(sig, (x, k))
    if x.ndim < 2:
        raise ValueError(f"[{name}] array must be at least 2-D")
    n, m = x.shape[-2], x.shape[-1]
    zero = array(0, x.dtype)
    if name == "tril":
        return where(_tri(n, m, k, _dt.bool_), x, zero)
    return where(_tri(n, m, k - 1, _dt.bool_), zero, x)


@shared_doc
def tril(x, k=0, *, stream=None):
    """``mx.tril``: ``x`` with the elements above diagonal ``k`` of its last two axes set to zero.

    As MLX composes it: a ``where`` on ``tri``'s mask (batched over the leading axes).

    Arguments:
    - ``x``: an array of at least two dimensions.
    - ``k``: the last diagonal kept: {diagonals}

    Errors: ``ValueError`` for fewer than two dimensions (MLX: "[tril] array
    must be at least 2-D"); ``TypeError`` when ``k`` is not an int.

    >>> mx.tril(mx.arange(9).reshape(3, 3), -1)
    array([[0, 0, 0],
           [3, 0, 0],
           [6, 7, 0]], dtype=int32)
    """
    k = plain_ints(k)
    return _triangle(x, k, "tril")


@shared_doc
def triu(x, k=0, *, stream=None):
    """``mx.triu``: ``x`` with the elements below diagonal ``k`` of its last two axes set to zero.

    As MLX composes it: a ``where`` on ``tri(k - 1)``'s mask (batched over the
    leading axes).

    Arguments:
    - ``x``: an array of at least two dimensions.
    - ``k``: the first diagonal kept: {diagonals}

    Errors: ``ValueError`` for fewer than two dimensions (MLX: "[triu] array
    must be at least 2-D"); ``TypeError`` when ``k`` is not an int.

    >>> mx.triu(mx.arange(9).reshape(3, 3), 1)
    array([[0, 1, 2],
           [0, 0, 5],
           [0, 0, 0]], dtype=int32)
    """
    k = plain_ints(k)
    return _triangle(x, k, "triu")


# --- eye and identity ------------------------------------------------------------------


def _eye(n, m, k, dtype):

    if n < 0 or m < 0:
        raise ValueError("[eye] N and M must be positive integers.")
    if n == 0 or m == 0 or k >= m or -k >= n:
        return zeros((n, m), dtype)
    # Element (i, j) is on the k-th diagonal when i == j - k.
    rows = typed_arange(0, n, 1, _dt.int32).reshape(n, 1)
    columns = typed_arange(-k, m - k, 1, _dt.int32)
    return astype(equal(rows, columns), dtype)


@shared_doc
def eye(n, m=None, k=0, dtype=_dt.float32, *, stream=None):
    """``mx.eye``: an ``n`` x ``m`` matrix with ones on diagonal ``k`` and zeros elsewhere.

    MLX scatters ones into zeros; mlxref compares a column of row indices with a
    row of column indices instead (as ``tri`` does), which needs no scatter and
    gives the same array.

    Arguments:
    - ``n``: the number of rows.
    - ``m``: the number of columns (default: ``n``).
    - ``k``: the diagonal: {diagonals}
    - ``dtype``: {float32_dtype}

    Errors: ``ValueError`` for a negative size (MLX: "[eye] N and M must be
    positive integers."); ``TypeError`` when ``n``, ``m`` or ``k`` is not an int.

    >>> mx.eye(2, 3, k=1)
    array([[0, 1, 0],
           [0, 0, 1]], dtype=float32)
    """
    n, m, k = plain_ints(n), plain_ints(m), plain_ints(k)
    sig = _SIGNATURES["eye"]
    args = tuple(v for v in (n, m) if v is not None) + (k, dtype)
    if not is_int(n) or not (m is None or is_int(m)) or not is_int(k):
        raise incompatible_arguments(sig, args)
    check_dtype(dtype, sig, args)
    return _eye(int(n), int(n if m is None else m), int(k), dtype or _dt.float32)


@shared_doc
def identity(n, dtype=_dt.float32, *, stream=None):
    """``mx.identity``: the ``n`` x ``n`` identity matrix (``eye(n)``).

    Arguments:
    - ``n``: the number of rows and columns.
    - ``dtype``: {float32_dtype}

    Errors: ``ValueError`` for a negative ``n`` (MLX: "[eye] N and M must be
    positive integers.").

    >>> mx.identity(2, mx.int32)
    array([[1, 0],
           [0, 1]], dtype=int32)
    """
    n = plain_ints(n)
    sig = _SIGNATURES["identity"]
    if not is_int(n):
        raise incompatible_arguments(sig, (n, dtype))
    check_dtype(dtype, sig, (n, dtype))
    return _eye(int(n), int(n), 0, dtype or _dt.float32)


_ASARRAY = ("asarray(a: scalar | array | Sequence | DLPackCompatible, dtype: Dtype | None = "
            "None, *, copy: bool | None = None) -> array")


def asarray(a, /, dtype=None, *, copy=None):
    """``mx.asarray``: ``a`` as an array, as ``mx.array(a, dtype)`` makes it (python/src/ops.cpp ``create_array``).

    A Python int becomes int32 (int64 when it does not fit), a float float32, a
    bool bool; nested lists must be rectangular. MLX shares memory only with
    DLPack and NumPy inputs; mlxref holds its elements in Python lists and never
    shares, so ``copy=False`` is always MLX's "Unable to avoid copy" error (MLX
    gives it for an mx.array too).

    Arguments:
    - ``a``: a scalar, a (nested) list or tuple, an array, or a NumPy array.
    - ``dtype``: the element type (default: inferred from ``a`` as above).
    - ``copy``: True or None copy; False raises (see above).

    Errors: ``ValueError`` for ragged lists (MLX: "Initialization encountered
    non-uniform length."), for a string ("Invalid type str received in array
    initialization.") and for ``copy=False`` ("Unable to avoid copy while
    creating an array as requested.").

    >>> mx.asarray([1, 2.5])
    array([1, 2.5], dtype=float32)
    >>> mx.asarray([[1, 2], [3, 4]], mx.int8)
    array([[1, 2],
           [3, 4]], dtype=int8)
    """
    if dtype is not None and not isinstance(dtype, _dt.Dtype) or copy not in (None, True, False):
        kwargs = {} if copy is None else {"copy": copy}
        raise incompatible_arguments(_ASARRAY, (a,) if dtype is None else (a, dtype), kwargs)
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    return array(a, dtype)


# --- DLPack ------------------------------------------------------------------------

_FROM_DLPACK = "from_dlpack(x: DLPackCompatible, /, *, copy: bool | None = None) -> array"


def from_dlpack(x, /, *, copy=None):
    """``mx.from_dlpack``: a new array with the values of ``x`` (an object that offers its memory), always a copy.

    Of an mlx array, the copy is a new leaf, as MLX's is: it evaluates ``x`` and
    a gradient does not flow back through it. MLX adopts a CPU buffer where it
    can; mlxref's elements live in a Python list, so it copies, and
    ``copy=False`` gets the error MLX's CPU build gives when it cannot adopt one.
    mlxref reads what it can read in pure Python: mlx arrays, NumPy arrays
    (through NumPy, which ``x`` brings) and objects with Python's buffer protocol
    (as MLX does); a DLPack capsule of any other library is C memory it cannot
    read (a ``NotImplementedError`` naming its type).

    Arguments:
    - ``x``: an mlx array, a NumPy array or a buffer-protocol object.
    - ``copy``: None or True copy; False raises (see above).

    Errors: ``ValueError`` for ``copy=False`` (MLX: "[convert] Cannot import a
    CPU array without a copy."); ``TypeError`` ("from_dlpack(): incompatible
    function arguments") for a list or another object without a buffer.

    >>> mx.from_dlpack(mx.array([1, 2]))
    array([1, 2], dtype=int32)
    """
    if copy is not None and not isinstance(copy, bool):
        raise incompatible_arguments(_FROM_DLPACK, (x,), {"copy": copy})
    if isinstance(x, array):
        readable = True
    elif convert.is_numpy(x):
        readable = x.dtype.name in convert.FROM_NUMPY and x.dtype.isnative
    else:
        readable = False
        try:
            memoryview(x).release()
            readable = True
        except TypeError:
            if hasattr(x, "__dlpack__"):
                raise NotImplementedError(
                    f"[from_dlpack] mlxref cannot read the DLPack capsule of a "
                    f"{type(x).__module__}.{type(x).__qualname__}: it is C memory, which "
                    "pure Python cannot read. Convert it to a NumPy array or a list first."
                ) from None
    if not readable:
        kwargs = {"copy": copy} if copy is not None else None
        raise incompatible_arguments(_FROM_DLPACK, (x,), kwargs)
    if convert.is_numpy(x) and any(s < 0 for s in getattr(x, "strides", ())):
        raise ValueError("Cannot convert DLPack arrays with negative strides to mlx array.")
    if copy is False:
        raise ValueError("[convert] Cannot import a CPU array without a copy.")
    if isinstance(x, array):  # MLX reads the evaluated buffer: a new leaf, off the graph
        return from_data(list(elements(x)), x.shape, x.dtype)
    return array(x)
