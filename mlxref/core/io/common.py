"""What the file formats share: the elements of an array as little-endian
bytes and back, paths and their extensions, and ``Corrupt``, the one error
a damaged file gets (``load`` names the file in it).

Read alongside: python/src/load.cpp (file names and objects, the extension
MLX appends, the messages for arguments of the wrong type).
"""

import math
import os
import struct

from .. import dtypes as _dt
from ..array import array, elements, from_data
from ..backend.cpu import allocator
from ..ops.common import incompatible_argument
from ..scalar import is_symbolic

# dtype -> (struct code, array-protocol kind): little-endian on disk, as MLX writes.
CODES = {
    _dt.bool_: "?", _dt.uint8: "B", _dt.uint16: "H", _dt.uint32: "I", _dt.uint64: "Q",
    _dt.int8: "b", _dt.int16: "h", _dt.int32: "i", _dt.int64: "q",
    _dt.float16: "e", _dt.float32: "f", _dt.float64: "d",
}

class Corrupt(Exception):
    """What is wrong with a file being loaded; ``load`` names the file and
    raises ``error`` (MLX's exception type for that fault)."""

    def __init__(self, message, error=RuntimeError):
        super().__init__(message)
        self.error = error


# --- elements <-> bytes ----------------------------------------------------------


def to_bytes(a):
    """The elements of ``a`` (evaluated), row-major and little-endian."""
    data = elements(a)
    if any(is_symbolic(v) for v in data):
        raise ValueError("[save] Cannot save an array of symbolic (SymPy) elements.")
    return encode(data, a.dtype)


def encode(data, dtype):
    """The elements ``data`` of ``dtype`` (as the dtype stores them) as
    little-endian bytes: what ``decode`` reads back."""
    n = len(data)
    if dtype is _dt.complex64:
        parts = []
        for v in data:
            parts += (v.real, v.imag)
        return struct.pack(f"<{2 * n}f", *parts)
    if dtype is _dt.bfloat16:  # the upper half of each float32 (exact: stored bf16)
        wide = struct.pack(f"<{n}f", *data)
        out = bytearray(2 * n)
        out[0::2], out[1::2] = wide[2::4], wide[3::4]
        return bytes(out)
    return struct.pack(f"<{n}{CODES[dtype]}", *data)


def from_bytes(raw, dtype, shape, big_endian=False):
    """An array of ``dtype`` and ``shape`` from its raw row-major bytes (refused,
    before they are decoded, when their list would not fit in memory)."""
    allocator.check_list("load", shape, dtype)
    return from_data(decode(raw, dtype, math.prod(shape), big_endian),
                            tuple(shape), dtype)


def decode(raw, dtype, n, big_endian=False):
    """The ``n`` elements of ``dtype`` in ``raw``, as the dtype stores them."""
    order = ">" if big_endian else "<"
    if dtype is _dt.complex64:
        parts = struct.unpack(f"{order}{2 * n}f", raw)
        data = [complex(parts[i], parts[i + 1]) for i in range(0, 2 * n, 2)]
    elif dtype is _dt.bfloat16:
        wide = bytearray(4 * n)
        hi, lo = (0, 1) if big_endian else (1, 0)
        wide[3::4], wide[2::4] = raw[hi::2], raw[lo::2]
        data = list(struct.unpack(f"<{n}f", wide))
    else:
        data = list(struct.unpack(f"{order}{n}{CODES[dtype]}", raw))
    return dtype.store(data)


def is_path(file):
    return isinstance(file, (str, os.PathLike))


def with_extension(file, ext):
    """MLX appends the extension to a path that does not end with it."""
    name = os.fspath(file)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    return name if name.endswith(ext) else name + ext


def check_file(file, op):
    """MLX's bindings take any object as a file, but not None (a TypeError)."""
    if file is None:
        raise incompatible_argument(op, "file", "a path or a file object", None)


def write(file, data, ext, op):
    check_file(file, op)
    if is_path(file):
        with open(with_extension(file, ext), "wb") as f:
            f.write(data)
    elif hasattr(file, "write"):
        file.write(data)
    else:
        raise ValueError(f"[{op}] Input must be a file-like object, or string")


def check_bad_cast(value, op, name):
    if not isinstance(value, array):
        raise RuntimeError(
            f"[{op}] {name} is a {type(value).__name__}, not an mlx array (MLX itself "
            "raises RuntimeError: std::bad_cast)."
        )
