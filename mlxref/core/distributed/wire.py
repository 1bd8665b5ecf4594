"""What the ring back-end puts on a socket, and how it combines what it receives.

Read alongside: mlx/distributed/reduction_ops.h (``SumOp``, ``MaxOp``,
``MinOp``) and, in mlx/distributed/ring/ring.cpp, the raw buffers that
``SocketThread`` sends and receives.

MLX writes an array's bytes to the socket as they sit in memory and reads
exactly as many as the receiver expects. mlxref sends the same bytes
(little-endian, mlxref.core.io.common's ``encode``/``decode``), each message
behind a 12-byte header: the tag ``MLXR`` and the message's length. The
receiver knows the length from the shape and dtype; a header that is not ours
or announces another length is a malformed message, refused before a byte of
it is decoded. Nothing received is ever unpickled or executed: it is read as
numbers of the dtype and nothing else.

The reductions combine a received list (``inputs``) into this rank's list
(``outputs``) exactly as MLX's ops do, ``*output = op(*output, *input)`` in the
dtype: float16 and bfloat16 sums are rounded to the dtype at each addition
(MLX's half types add in float32 and round back, which is the correctly
rounded sum: float32 has more than twice their precision), integers wrap,
``bool`` sums are ``or``. ``std::max(out, in)`` keeps ``out`` unless
``out < in``, so a nan reaches the result only from the rank whose list is
being reduced into, and ``max(0.0, -0.0)`` keeps the first; complex64 is
ordered by real part, then imaginary part (mlx/types/complex.h).

Read next: ring.py, which sends these messages around the ring.
"""

import struct

from .. import dtypes as _dt
from ..backend.cpu.binary import complex_greater
from ..io.common import decode, encode

__all__ = ["HEADER", "MAGIC", "frame", "read_header", "to_wire", "from_wire",
           "sum_op", "max_op", "min_op", "REDUCE_OPS"]

# --- the messages ------------------------------------------------------------------

MAGIC = b"MLXR"
HEADER = struct.Struct("<4sQ")  # tag, payload length in bytes


def frame(payload):
    """The header that goes before ``payload`` on the socket."""
    return HEADER.pack(MAGIC, len(payload))


def read_header(raw, expected):
    """The payload length a received header announces, checked: a message
    that is not ours or not ``expected`` bytes long raises ValueError, saying
    what arrived (ring.py names the operation and the peer)."""
    tag, length = HEADER.unpack(raw)
    if tag != MAGIC:
        raise ValueError(f"malformed message (header {raw!r} is not an mlxref ring header)")
    if length != expected:
        raise ValueError(f"malformed message of {length} bytes where {expected} were expected")
    return length


def to_wire(data, dtype):
    """The bytes of the elements ``data`` of ``dtype``, as MLX holds them in memory."""
    return encode(data, dtype)


def from_wire(raw, dtype, count):
    """The ``count`` elements of ``dtype`` in ``raw``, after checking its length."""
    if len(raw) != count * dtype.size:
        raise ValueError(f"malformed message of {len(raw)} bytes where "
                         f"{count * dtype.size} were expected")
    return decode(raw, dtype, count)


# --- the reductions (reduction_ops.h) ------------------------------------------------


def sum_op(inputs, outputs, dtype):
    """MLX's ``SumOp``: ``*output += *input`` in ``dtype``, as a new list."""
    if dtype is _dt.bool_:
        return [o or i for o, i in zip(outputs, inputs)]
    # One addition in double is exact for the integers and halves, and rounding it to
    # float32 gives float32's own sum (53 >= 2 * 24 + 2 bits), so the dtype's store
    # rounds (or wraps) to what MLX's addition in the dtype gives.
    return dtype.store([o + i for o, i in zip(outputs, inputs)])


def _less(dtype):
    if dtype is _dt.complex64:
        return lambda a, b: complex_greater(b, a)  # complex64_t's operator<
    return lambda a, b: a < b


def max_op(inputs, outputs, dtype):
    """MLX's ``MaxOp``: ``*output = std::max(*output, *input)``."""
    less = _less(dtype)
    return [i if less(o, i) else o for o, i in zip(outputs, inputs)]


def min_op(inputs, outputs, dtype):
    """MLX's ``MinOp``: ``*output = std::min(*output, *input)``."""
    less = _less(dtype)
    return [i if less(i, o) else o for o, i in zip(outputs, inputs)]


REDUCE_OPS = {"all_sum": sum_op, "all_max": max_op, "all_min": min_op}
