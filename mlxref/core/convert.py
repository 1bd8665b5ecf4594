"""Python values in and out of arrays: ``mx.array(...)``, an op's arguments,
``tolist()``, NumPy and buffers.

Read alongside: python/src/convert.cpp (``create_array``, ``get_shape``,
``validate_shape``, ``array_from_list``, ``nd_array_to_mlx``, ``tolist``),
python/src/utils.cpp (``to_array``, ``to_arrays``: Python scalars are weakly
typed; an ndarray met by an array takes the array's dtype) and
python/src/utils.h (``is_comparable_with_array``, what operators accept).

``create_array`` is what ``mx.array(val, dtype)`` does: a nested list's shape
is read down its first elements and every element is checked against it; the
dtype is inferred from the Python scalars (bool < int32 < int64 < float32 <
complex64) unless given; the elements are converted and stored as the dtype
holds them. An mx.array inside a list makes the result a lazy stack.

An op's arguments become arrays here, once per op: ``to_array`` for an
argument that is an array on its own, ``to_arrays`` for operands that meet
(a Python scalar takes the dtype of the array it meets: ``weak_scalar_dtype``),
``scalar_or_array`` for a ``scalar | array`` argument given a dtype.

mlxref never imports NumPy itself: an object is NumPy's when its type's module
is ``numpy`` (or one of its submodules), and then NumPy is already in
``sys.modules``. ``to_numpy`` (``np.array(a)``, through ``array.__array__``)
is only ever called by NumPy, so it finds NumPy there too.

MLX maps NumPy's dtypes to its own by name, except float64 (to float32, as a
Python float) and complex128 (to complex64); ``mx.array(x, dtype=...)`` casts
the NumPy values as MLX's ``static_cast`` does (``dtypes.convert``).

Read next: mlxref/core/array.py (the handle these values go into),
mlxref/core/ops/common.py (what an op does with its arrays next).
"""

import math
import numbers
import struct
import sys

from . import dtypes as _dt
from .array import array, elements, from_data
from .scalar import is_symbolic

_INIT = ("__init__(self: array, val: scalar | list | tuple | DLPackCompatible | array, "
         "dtype: Dtype | None = None)")


def create_array(val, dtype=None, handle=None):
    """``mx.array(val, dtype)``: an array from a scalar, nested lists or tuples,
    an array, a NumPy array or a buffer (python/src/convert.cpp ``create_array``).
    ``handle`` is the array being initialised, which MLX's binding error for
    ``mx.array(None)`` lists among the argument types."""
    if dtype is not None and not isinstance(dtype, _dt.Dtype):
        raise TypeError(f"[array] dtype must be an mlx.core.Dtype, got {dtype!r}.")
    flat, shape = None, ()
    if isinstance(val, (list, tuple)):
        flat, shape = [], _list_shape(val)
        if _validate_list(val, shape, 0, flat):
            # A list holding mx.arrays (at any depth): MLX makes each element an
            # array of its own and stacks them, lazily (python/src/convert.cpp).
            val = ops.stack([array(v, dtype) for v in val])
    if isinstance(val, array):
        # MLX's mx.array(a) is astype(a, dtype): a's own descriptor when the
        # dtype does not change, else a lazy cast.
        return ops.astype(val, dtype or val.dtype)
    if is_numpy(val):
        return from_data(*from_numpy(val, dtype))
    if val is None:
        raise ops.common.incompatible_arguments(_INIT, (handle, val))
    if flat is None and not is_scalar(val):
        buffer = from_buffer(val, dtype)
        if buffer is None:
            raise _invalid_type(val)
        return from_data(*buffer)
    if flat is None:
        flat = [val]
    inferred = _scalars_dtype(flat)
    if dtype is not None and shape and inferred in (_dt.int32, _dt.int64):
        _check_list_ints(flat, dtype)
    dtype = dtype or inferred
    if dtype.is_inexact and dtype is not _dt.float64 and isinstance(val, (list, tuple)):
        # MLX reads a list's ints as C floats, through double: above 2**53
        # they round twice, where a scalar rounds once (python/src/convert.cpp).
        flat = [float(v) if type(v) is int else v for v in flat]
    return from_data(dtype.store(_dt.convert(flat, None, dtype)), shape, dtype)


# --- nested lists ---------------------------------------------------------------------


def _scalars_dtype(flat):
    """The dtype MLX infers for Python scalars (``flat``, normalised in place:
    int and float subclasses become plain ints and floats)."""
    kinds = set()
    for i, v in enumerate(flat):
        if isinstance(v, bool):
            kinds.add(_dt.bool_)
        elif isinstance(v, int):
            kinds.add(_dt.int32 if -(2**31) <= v < 2**31 else int64_dtype(v))
            flat[i] = int(v)  # a subclass (IntEnum...) as a plain int
        elif isinstance(v, float) or is_symbolic(v):
            kinds.add(_dt.float32)
            if isinstance(v, float):
                flat[i] = float(v)  # a subclass (NumPy's float64...) as a plain float
        elif isinstance(v, complex):
            kinds.add(_dt.complex64)
        else:
            raise _invalid_type(v)
    dtype = _dt.bool_ if kinds else _dt.float32  # an empty list is float32, as in MLX
    for k in kinds:
        dtype = _dt.promote_types(dtype, k)
    return dtype


def _invalid_type(v):
    """MLX's ValueError for an element it cannot read (python/src/convert.cpp)."""
    return ValueError(
        f"Invalid type {ops.common.type_name(v)} received in array initialization.")


def _list_shape(value):
    """MLX's ``get_shape`` (python/src/convert.cpp): the lengths down the first
    elements, and then the shape of an array met there."""
    shape = []
    while True:
        shape.append(len(value))
        if not value:
            return tuple(shape)
        first = value[0]
        if isinstance(first, (list, tuple)):
            value = first
            continue
        if isinstance(first, array):
            shape.extend(first.shape)
        return tuple(shape)


_NON_UNIFORM = "Initialization encountered non-uniform length."


def _validate_list(value, shape, depth, flat):
    """MLX's ``validate_shape``: every element agrees with ``shape``; Python
    scalars are appended to ``flat``. True when an mx.array is met.

    As MLX: a tuple among lists is an element of an invalid type, and a list
    whose first element is a tuple reads its other elements as tuples too.
    """
    if depth >= len(shape):
        raise ValueError("Initialization encountered extra dimension.")
    if len(value) != shape[depth]:
        raise ValueError(_NON_UNIFORM)
    if not value:
        return False
    has_array = False
    tuples = isinstance(value[0], tuple)
    for v in value:
        if isinstance(v, list) or (tuples and isinstance(v, tuple)):
            has_array = _validate_list(v, shape, depth + 1, flat) or has_array
        elif tuples:
            raise RuntimeError(
                "[array] A sequence whose first element is a tuple holds an element "
                f"of type {type(v).__name__}; MLX reads each of its elements as a tuple "
                "(MLX itself raises RuntimeError: std::bad_cast)."
            )
        elif isinstance(v, array):
            if v.shape != shape[depth + 1:]:
                raise ValueError(_NON_UNIFORM)
            has_array = True
        else:
            if not is_scalar(v):
                raise _invalid_type(v)
            if depth + 1 != len(shape):
                raise ValueError(_NON_UNIFORM)
            flat.append(v)
    return has_array


def int64_dtype(v, op="array"):
    """int64 for a Python int that fits in it; else a clear error (MLX: std::bad_cast)."""
    if not -(2**63) <= v < 2**63:
        shown = v if v.bit_length() <= 128 else f"of {v.bit_length()} bits"
        raise RuntimeError(
            f"[{op}] The Python integer {shown} does not fit in int64, the widest "
            "integer MLX converts a Python int through (MLX itself raises "
            "RuntimeError: std::bad_cast)."
        )
    return _dt.int64


def _check_list_ints(flat, dtype):
    """MLX reads the ints of a list given a ``dtype`` through one C type
    (python/src/convert.cpp ``array_from_list``): uint32 for uint32, uint64
    for uint64, a 32-bit int for the narrower types and bool (which then wrap,
    ``[300]`` as uint8 is ``[44]``); an int outside it is its
    ``std::bad_cast``. (A scalar goes through int64: ``mx.array(-1, uint32)``
    wraps.)"""
    if dtype is _dt.int64 or dtype.is_inexact:
        return
    if dtype.is_unsigned and dtype.size >= 4:
        low, high, ctype = 0, 2 ** (8 * dtype.size), dtype.name
    else:
        low, high, ctype = -(2**31), 2**31, "a 32-bit int"
    for v in flat:
        if type(v) is int and not low <= v < high:
            raise RuntimeError(
                f"[array] The Python integer {v} in a list does not fit in {ctype}, "
                f"which MLX reads a list's ints through for {dtype.name} (MLX itself "
                "raises RuntimeError: std::bad_cast)."
            )


def nested(flat, shape):
    """A flat row-major list as nested lists of the given shape."""
    if len(shape) == 1:
        return list(flat)
    step = math.prod(shape[1:])
    return [nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


# --- operands: Python values as an op's arguments -------------------------------------
# python/src/utils.cpp (``to_array``, ``to_arrays``) and utils.h
# (``is_comparable_with_array``): what every op does first with its arguments.

SCALARS = (bool, int, float, complex)
_FLOAT32_INTS = range(-(2**24), 2**24 + 1)  # every int here is exactly a float32


def is_scalar(x):
    """A Python number (a subclass too) or a SymPy expression."""
    return type(x) in SCALARS or isinstance(x, SCALARS) or is_symbolic(x)


def default_dtype_of_scalar(value):
    """The dtype ``mx.array(value)`` gives a Python scalar (an int that does
    not fit int32 is int64)."""
    if isinstance(value, bool):
        return _dt.bool_
    if isinstance(value, int):
        return _dt.int32 if -(2**31) <= value < 2**31 else _dt.int64
    if isinstance(value, complex):
        return _dt.complex64
    return _dt.float32


def weak_scalar_dtype(value, other):
    """The dtype a Python scalar takes when it meets an array of dtype ``other``.

    Python scalars are weakly typed (python/src/utils.cpp ``to_array``): they
    adopt the array's dtype when they fit its category, so ``int8 array * 2``
    stays int8 and ``float16 array * 2.5`` stays float16, but ``int32 array *
    2.5`` is float32, ``bool array + 1`` is int32 and anything plus ``1j`` is
    complex64.
    """
    if isinstance(value, bool):
        return other
    if isinstance(value, int):
        return other if other is not _dt.bool_ else _dt.int32
    if isinstance(value, complex):
        return _dt.complex64
    return other if other.is_inexact else _dt.float32


def _check_int_fits(value, dtype):
    """MLX's check on a Python int converted for an array of ``dtype``
    (python/src/utils.cpp ``to_array``): an integer type narrower than 64 bits
    must hold it. So ``uint8 array + 300`` and ``full((2,), 300, uint8)``
    raise, where ``mx.array(300, dtype=uint8)`` wraps; next to a bool, int64
    or uint64 array the int just wraps (``uint64 array + -1`` adds 2**64 - 1,
    ``bool array + 2**40`` adds 0 as an int32), as in MLX."""
    if type(value) is int and dtype.is_integer and dtype.size < 8:
        info = _dt.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise ValueError(f"Converting {value} to {dtype.name} would result in overflow.")


def scalar_array(value, dtype, meets=None):
    """A 0-d array holding one Python scalar (or SymPy expression) as ``dtype``.

    ``meets`` is the dtype of the array the scalar meets in an op (default
    ``dtype``): a Python int must fit it (``_check_int_fits``).
    """
    if type(value) not in SCALARS:
        if is_symbolic(value):
            return from_data([value], (), dtype)
        for plain in SCALARS:  # a subclass (NumPy's float64...)
            if isinstance(value, plain):
                value = plain(value)
                break
    t = type(value)
    if t is int:
        int64_dtype(value)
        _check_int_fits(value, meets or dtype)
    if dtype is _dt.float32 and (t is float or (t is int and value in _FLOAT32_INTS)):
        # The common case (x * 2.0, x / n, maximum(x, 0)): what convert and
        # store give, in one rounding (an int this small is a float32 already).
        return from_data([dtype.cast(value)], (), dtype)
    return from_data(dtype.store(_dt.convert([value], None, dtype)), (), dtype)


def not_an_operand(value):
    """The exception MLX's bindings raise for ``value`` where an array or a
    Python scalar is expected: TypeError for None, which no type of the
    binding takes ("incompatible function arguments"), ValueError for any
    other value, which its ``to_array`` cannot read (python/src/utils.cpp)."""
    if value is None:
        return TypeError("incompatible function arguments: an array or a scalar is expected "
                         "here, not None.")
    return ValueError(f"Invalid type {type(value).__name__} received in array initialization.")


def to_array(x):
    """An array from an array (itself), a Python scalar, a nested list, a NumPy
    array or a buffer: an op's argument that is an array on its own."""
    if isinstance(x, array):
        return x
    if x is None:
        raise not_an_operand(x)
    if is_numpy(x):
        return array(x)
    if isinstance(x, numbers.Number) and not isinstance(x, SCALARS):
        x = float(x) if isinstance(x, numbers.Real) else x
    return array(x)


def scalar_or_array(value, dtype=None):
    """MLX's ``to_array(value, dtype)`` for ``scalar | array`` arguments.

    An array is returned as it is, whatever ``dtype`` says. A Python scalar
    gets ``dtype`` if it suits it, as a weakly typed scalar does
    (``weak_scalar_dtype``): a float never becomes an integer (it is float32
    then), an int never becomes bool (it is int32 then) and must fit the
    integer dtype, and an int that does not fit int32 is int64 by default.
    """
    if isinstance(value, array):
        return value
    if not is_scalar(value) and is_numpy(value):
        return array(value, dtype)
    if is_scalar(value):
        if dtype is None:
            return scalar_array(value, default_dtype_of_scalar(value))
        return scalar_array(value, weak_scalar_dtype(value, dtype), meets=dtype)
    raise not_an_operand(value)


def to_arrays(*values):
    """An op's arguments as arrays of one promoted dtype (not yet broadcast).

    Python scalars are weakly typed: they take the dtype of the arrays they
    meet when it fits (``int32 array * 2`` is int32, ``int32 array * 2.5`` is
    float32), as MLX's ``to_arrays`` makes them.
    """
    if len(values) == 2:  # the common cases first: two arrays, or an array and a number
        a, b = values
        ta, tb = type(a), type(b)
        if ta is array and tb is array and a.dtype is b.dtype:
            return [a, b]
        if ta is array and tb in SCALARS:
            meets = a.dtype
            if tb is float and meets is _dt.float32:  # x * 0.5, the commonest: scalar_array's
                return [a, from_data([meets.cast(b)], (), meets)]  # float32 case, directly
            dtype = _dt.promote_types(meets, weak_scalar_dtype(b, meets))
            return [a if meets is dtype else ops.astype(a, dtype), scalar_array(b, dtype, meets)]
        if tb is array and ta in SCALARS:
            meets = b.dtype
            if ta is float and meets is _dt.float32:
                return [from_data([meets.cast(a)], (), meets), b]
            dtype = _dt.promote_types(meets, weak_scalar_dtype(a, meets))
            return [scalar_array(a, dtype, meets), b if meets is dtype else ops.astype(b, dtype)]
    if any(type(v) not in SCALARS and is_numpy(v) for v in values):
        values = _numpy_operands(values)
    for v in values:
        if v is None or isinstance(v, (list, tuple)):  # MLX takes arrays and scalars here
            raise not_an_operand(v)
    strong = [to_array(v) for v in values if not is_scalar(v)]
    meets = None  # the arrays' dtype, which Python ints must fit
    if strong:
        dtype = strong[0].dtype
        for a in strong[1:]:
            dtype = _dt.promote_types(dtype, a.dtype)
        meets = dtype
        for v in values:
            if is_scalar(v):
                dtype = _dt.promote_types(dtype, weak_scalar_dtype(v, dtype))
    else:
        dtype = _dt.bool_
        for v in values:
            dtype = _dt.promote_types(dtype, default_dtype_of_scalar(v))
    it = iter(strong)
    out = []
    for v in values:
        a = scalar_array(v, dtype, meets) if is_scalar(v) else next(it)
        out.append(ops.astype(a, dtype))
    return out


def _numpy_operands(values):
    """NumPy operands as arrays (python/src/utils.cpp ``to_arrays``): next to an
    mlx array they take its dtype (``int32 array + np.float32(1.5)`` is int32);
    otherwise their own. A NumPy float64 scalar is a Python float: weak, as in MLX."""
    meets = next((v.dtype for v in values if isinstance(v, array)), None)
    out = []
    for v in values:
        if type(v) not in SCALARS and is_numpy(v):
            v = float(v) if isinstance(v, float) else array(v, meets)
        out.append(v)
    return out


def is_comparable_with_array(other):
    """MLX's ``is_comparable_with_array``: an array, a number, or what converts to one."""
    return (isinstance(other, (array, numbers.Number)) or is_symbolic(other)
            or hasattr(other, "__mlx_array__") or hasattr(other, "__array__"))


_OPERANDS = (array,) + SCALARS  # (the common operands, accepted without a call)


def operand(what, other):
    """``other``, checked for an operator of MLX's array (``is_comparable_with_array``,
    ``throw_invalid_operation``): a string, list, tuple, dict... is refused with
    MLX's message (None is left to the op, whose TypeError MLX's binding also
    raises)."""
    if type(other) in _OPERANDS or other is None or is_comparable_with_array(other):
        return other
    kind = type(other)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    raise ValueError(f"Cannot perform {what} on an mlx.core.array and {name}")


def bitwise_operand(what, a, other):
    """``other``, checked for one of MLX's bitwise operators on ``a``: a float
    on either side (a Python int is weakly typed by ``a``, so ``float array &
    1`` is one) is refused with the operator's own message, before the op's."""
    operand(what, other)
    if isinstance(other, array):
        dtype = other.dtype
    elif type(other) in SCALARS:
        dtype = weak_scalar_dtype(other, a.dtype)
    else:
        return other  # the op converts it, or says why it cannot
    if a.dtype.is_inexact or dtype.is_inexact:
        raise ValueError(f"Floating point types not allowed with {what}.")
    return other


# --- NumPy ---------------------------------------------------------------------------

# NumPy's dtype names -> the dtype MLX gives an ndarray of that dtype.
FROM_NUMPY = {
    "bool": _dt.bool_, "uint8": _dt.uint8, "uint16": _dt.uint16, "uint32": _dt.uint32,
    "uint64": _dt.uint64, "int8": _dt.int8, "int16": _dt.int16, "int32": _dt.int32,
    "int64": _dt.int64, "float16": _dt.float16, "float32": _dt.float32,
    "float64": _dt.float32, "complex64": _dt.complex64, "complex128": _dt.complex64,
}
# ... and the dtype those values have before MLX casts them (float64 stays float64).
_SOURCE = dict(FROM_NUMPY, float64=_dt.float64, complex128=_dt.complex64)


def is_numpy(value):
    """Is ``value`` a NumPy ndarray or NumPy scalar? (Imports nothing.)"""
    return type(value).__module__.split(".")[0] == "numpy" and "numpy" in sys.modules and (
        isinstance(value, (sys.modules["numpy"].ndarray, sys.modules["numpy"].generic))
    )


def from_numpy(value, dtype=None):
    """``(flat, shape, dtype)`` of a NumPy ndarray or scalar, cast to ``dtype``
    (default: MLX's dtype for the NumPy one), ready to store."""
    np = sys.modules["numpy"]
    nd = np.asarray(value)
    name = nd.dtype.name
    if name not in FROM_NUMPY:
        raise ValueError(
            f"[array] Cannot convert a NumPy array of dtype {nd.dtype} to an mlx array: "
            "MLX takes bool, (u)int8-64, float16/32/64 and complex64/128 "
            "(MLX itself raises RuntimeError: std::bad_cast)."
        )
    for d in nd.shape:  # before copying anything (python/src/convert.cpp check_shape_dim)
        if d > 2**31 - 1:
            raise OverflowError(
                f"Shape dimension {d} is outside the supported range [-2147483648, "
                "2147483647]. MLX currently uses 32-bit integers for shape dimensions.")
    source = _SOURCE[name]
    dtype = dtype or FROM_NUMPY[name]
    flat = nd.ravel(order="C").tolist()
    if source is _dt.complex64:
        flat = [complex(v) for v in flat]
    return dtype.store(_dt.convert(flat, source, dtype)), tuple(nd.shape), dtype


def to_numpy(a, dtype=None, copy=None):
    """``a.__array__(dtype, copy)``: a new ndarray of ``a``'s dtype and shape.

    bfloat16 has no NumPy dtype (MLX raises NumPy's ValueError about the buffer
    format). mlxref holds its elements in a Python list, so an ndarray is always
    a copy: ``copy=False`` raises as NumPy 2 asks (MLX shares its buffer there).
    """
    np = sys.modules["numpy"]
    if a.dtype is _dt.bfloat16:
        raise ValueError(
            "bfloat16 arrays cannot be converted to NumPy ('bfloat16' is not a "
            "valid PEP 3118 buffer format string)."
        )
    if copy is False:
        raise ValueError(
            "Unable to avoid copy while creating an array as requested: mlxref "
            "holds an array's elements in a Python list, so NumPy always gets a copy."
        )
    data = elements(a)
    out = np.array(data, dtype=a.dtype.name if a.dtype is not _dt.bool_ else "bool")
    out.shape = a.shape  # in place: the ndarray owns its data, as NumPy's copies do
    return out if dtype is None else out.astype(dtype)


# --- Python's buffer protocol: bytes, bytearray, memoryview, array.array ------------

# A buffer's struct format -> (the dtype MLX gives it, the dtype its values have).
# MLX reads any buffer as an ndarray (nanobind) and maps its format as NumPy's
# dtype: a C double becomes float32, as a NumPy float64 does.
_FROM_FORMAT = {
    "?": _dt.bool_, "b": _dt.int8, "B": _dt.uint8, "h": _dt.int16, "H": _dt.uint16,
    "i": _dt.int32, "I": _dt.uint32, "q": _dt.int64, "Q": _dt.uint64,
    "l": _dt.int64 if struct.calcsize("l") == 8 else _dt.int32,
    "L": _dt.uint64 if struct.calcsize("L") == 8 else _dt.uint32,
    "e": _dt.float16, "f": _dt.float32, "d": _dt.float32,
}


def from_buffer(value, dtype=None):
    """``(flat, shape, dtype)`` of an object with Python's buffer protocol, as
    MLX reads it (a copy: mlxref's elements live in a Python list), or None
    when ``value`` has no buffer. Read through ``memoryview``, so strided
    views work; formats MLX cannot read raise its ``std::bad_cast``."""
    try:
        view = memoryview(value)
    except TypeError:
        return None
    fmt = view.format.lstrip("@")
    if fmt not in _FROM_FORMAT:
        raise RuntimeError(
            f"[array] Cannot read a buffer of format {view.format!r} (MLX itself raises "
            "RuntimeError: std::bad_cast); MLX takes bool, (u)int8-64, float16, float32 "
            "and float64 buffers."
        )
    source = _dt.float64 if fmt == "d" else _FROM_FORMAT[fmt]
    dtype = dtype or _FROM_FORMAT[fmt]
    flat = view.tolist()
    for _ in range(view.ndim - 1):
        flat = [v for row in flat for v in row]
    if view.ndim == 0:
        flat = [flat]
    return dtype.store(_dt.convert(flat, source, dtype)), tuple(view.shape), dtype


from . import ops  # noqa: E402  (ops needs the array class, which this module's importer defines)
