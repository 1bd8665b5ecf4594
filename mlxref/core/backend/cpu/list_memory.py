"""What an array's element list costs in memory, and the error for one that would not fit.

Not in MLX, whose arrays are buffers of ``size x itemsize`` bytes that its
allocator hands out when an array is evaluated (mlx/allocator.h; on Metal a
buffer over the device's maximum is refused: "[metal::malloc] Attempting to
allocate ... bytes which is greater than the maximum allowed buffer size").
mlxref keeps the elements in a Python list: a pointer per slot, and the
number object each slot points at. A lazy ``mx.arange(0, 1, 1e-9)`` costs
nothing until it is evaluated, and then its billion floats would take 40 GB.
So evaluation checks first (``check_lists`` in allocator.py, with the limit
``array_limit()``: half the RAM, or ``MLXREF_MAX_ARRAY_BYTES``) and refuses
such an array with ``too_big``'s message, before any list is made.

Read alongside: mlxref/core/backend/cpu/allocator.py (the limit and the check).
"""

import math
import os
import sys

from ... import dtypes as _dt
from ...printing import format_shape

LIMIT_VARIABLE = "MLXREF_MAX_ARRAY_BYTES"

# CPython's small-object allocator hands out blocks in multiples of this (16
# bytes on 64-bit builds since 3.8): a float's 24 bytes take 32. Measured on
# CPython 3.11: the resident memory of a list of 4,000,000 distinct floats or
# complex numbers grows by 40 bytes an element, of ints below 2**60 that
# need no spare digit by 40, of larger ints by 56.
_BLOCK = 16


def _object_bytes(value):
    """The most bytes one more Python object equal to ``value`` takes: none
    when Python keeps one shared object for that value (``True``, ``False``,
    and the small ints, which ``int()`` hands back rather than making anew).
    An int a kernel computes may keep one digit more than its value needs
    (CPython sizes a sum or a bitwise result for the larger operand and a
    carry, and does not shrink it): measured, int32 elements near 2**30 that
    ``+`` and the int32 wrap made are 36-byte objects, where
    ``sys.getsizeof`` says 32."""
    if isinstance(value, bool):
        return 0
    size = sys.getsizeof(value)
    if isinstance(value, int):
        if int(str(value)) is int(str(value)):
            return 0
        size += sys.int_info.sizeof_digit
    return -(-size // _BLOCK) * _BLOCK


def _extremes(dtype):
    """The values of ``dtype`` whose Python objects are the largest (an int's
    object grows with its magnitude; every float, every complex is one size)."""
    bits = 8 * dtype.size
    if dtype is _dt.bool_:
        return (False, True)
    if dtype.is_unsigned:
        return (0, 2**bits - 1)
    if dtype.is_integer:
        return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return (0j,) if dtype.is_complex else (0.0,)


# The most bytes one element of each dtype costs in an evaluated list: its
# slot and the object it points at. (A list of one repeated value, as
# ``zeros`` makes, costs only its slots, but what is computed from it is made
# of new objects.)
_POINTER = sys.getsizeof([None]) - sys.getsizeof([])
ELEMENT_BYTES = {dtype: _POINTER + max(map(_object_bytes, _extremes(dtype)))
                 for dtype in _dt.ALL}


def parse_limit(value):
    """The limit ``MLXREF_MAX_ARRAY_BYTES`` sets: a whole number of bytes."""
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise ValueError(f"[eval] {LIMIT_VARIABLE} must be a whole number of bytes, not {value!r}.")
    return limit


def _amount(nbytes):
    if nbytes >= 10**9:
        return f"{nbytes / 1e9:.1f} GB"
    if nbytes >= 10**6:
        return f"{nbytes / 1e6:.1f} MB"
    return f"{nbytes:,} bytes"


def too_big(op, shape, dtype, limit, ram, primitive=None):
    """The RuntimeError refusing the element list of a ``shape`` array of
    ``dtype`` (computed by ``primitive``, when there is one) that would take
    more than ``limit`` bytes, on a machine with ``ram`` bytes (0: unknown)."""
    size = math.prod(shape)
    what = f"the {primitive.name} array" if primitive is not None else "an array"
    if LIMIT_VARIABLE in os.environ:
        source = f"set by {LIMIT_VARIABLE}"
    else:
        source = (f"half of this machine's {_amount(ram)} of RAM" if ram else
                  "this machine's RAM is unknown") + f"; {LIMIT_VARIABLE} sets another limit"
    return RuntimeError(
        f"[{op}] Cannot hold {what} of shape {format_shape(shape)} and dtype {dtype.name}: "
        f"as a Python list its {size:,} elements would take {_amount(size * ELEMENT_BYTES[dtype])} "
        f"({ELEMENT_BYTES[dtype]} bytes each, where MLX allocates {_amount(size * dtype.size)}), "
        f"more than the {_amount(limit)} mlxref lets one array take ({source})."
    )
