"""NumPy interop without depending on NumPy: ``mx.array(ndarray)`` and ``np.array(a)``.

Read alongside: python/src/convert.cpp (``nd_array_to_mlx``,
``dispatch_dlpack_dtype``, ``mlx_to_np_array``) and python/src/utils.cpp
(``to_array``, ``to_arrays``: an ndarray met by an array takes the array's dtype).

mlxref never imports NumPy itself: an object is NumPy's when its type's module
is ``numpy`` (or one of its submodules), and then NumPy is already in
``sys.modules``. ``to_numpy`` (``np.array(a)``, through ``array.__array__``)
is only ever called by NumPy, so it finds NumPy there too.

MLX maps NumPy's dtypes to its own by name, except float64 (to float32, as a
Python float) and complex128 (to complex64); ``mx.array(x, dtype=...)`` casts
the NumPy values as MLX's ``static_cast`` does (``dtypes.convert``).
"""

import struct
import sys

from . import dtypes as _dt

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
    data = a._eval()
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

