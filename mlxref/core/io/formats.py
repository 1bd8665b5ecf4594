"""Saving and loading: ``save`` (.npy), ``savez``/``savez_compressed`` (.npz),
``save_safetensors`` and ``load``, in pure Python from the formats' specifications.

Read alongside: python/src/load.cpp (the Python bindings: file names and
objects, extensions, formats, messages), mlx/io/load.cpp (.npy) and
mlx/io/safetensors.cpp. The formats: NumPy's .npy (numpy.lib.format: magic,
version, a header dict padded with spaces, then the raw little-endian
elements), .npz (a zip of .npy files, one per name) and safetensors (an 8-byte
little-endian header length, a JSON header naming each tensor's dtype, shape
and data offsets, then the bytes).

As in MLX: bfloat16 is written to .npy as ``'<V2'`` (two raw bytes, which MLX
reads back as bfloat16); safetensors has no float64 (MLX: "received invalid
dtype"); a path gets ``.npy``/``.npz``/``.safetensors`` appended when it does
not end so; ``load`` infers the format from the extension (GGUF, ``.gguf``:
read by gguf.py). A .npy or safetensors file loaded by path is read as MLX
reads it: ``load`` opens the file and reads its header (a safetensors
header's offsets are checked against the file's size there); a ``Load`` node
per array reads its elements at eval, through the file ``load`` opened
(``OpenFile``, one per file, closed once the last of its arrays is evaluated
or dropped). So, as in MLX, arrays loaded from a file that is then deleted
or replaced (a ``tempfile.TemporaryDirectory()`` closed before the arrays are
used) still evaluate to what the file held; a file rewritten in place gives
its new bytes; one cut short fails at eval; and the bytes count in the
memory model only from eval on. .npz, GGUF and any file object are read at
``load`` (MLX evaluates what it loads from a file object at once). A
truncated or corrupted file gets one error naming the file and what is wrong.

The dicts ``load`` returns list their keys in the order MLX's C++ maps give
them to Python (mlxref/core/unordered_map.py): safetensors' keys inserted
sorted (MLX parses the header into a sorted JSON object), .npz's in the
order of the zip's members, GGUF's in the file's order. ``savez`` and
``save_gguf`` write their members in that order too (MLX writes them from
such a map), so a file saved and loaded again lists its keys as MLX's does.
"""

import ast
import io as _io
import json
import math
import os
import struct
import zipfile

from .. import dtypes as _dt
from ..array import array
from ..ops.common import incompatible_arguments
from ..ops.shape import transpose
from ..primitives.base import make_array
from ..primitives.creation import Load
from ..unordered_map import reordered
from .common import (
    CODES,
    check_bad_cast,
    check_file,
    Corrupt,
    decode,
    from_bytes,
    is_path,
    to_bytes,
    with_extension,
    write,
)
from .gguf import read_gguf

_NPY_MAGIC = b"\x93NUMPY"
# safetensors' dtype names (MLX writes C64 for complex64, not yet in the spec).
_SAFETENSORS = {
    _dt.float32: "F32", _dt.bfloat16: "BF16", _dt.float16: "F16", _dt.int64: "I64",
    _dt.int32: "I32", _dt.int16: "I16", _dt.int8: "I8", _dt.uint64: "U64",
    _dt.uint32: "U32", _dt.uint16: "U16", _dt.uint8: "U8", _dt.bool_: "BOOL",
    _dt.complex64: "C64",
}
# MLX reads the 8-bit float formats as their raw bytes, uint8.
_FROM_SAFETENSORS = dict({v: k for k, v in _SAFETENSORS.items()},
                         F8_E4M3=_dt.uint8, F8_E8M0=_dt.uint8)


# --- .npy ---------------------------------------------------------------------------


def _npy_descr(dtype):
    """The array-protocol type string MLX writes (mlx/io/load.cpp)."""
    if dtype is _dt.bfloat16:
        return "<V2"
    kind = {"bool": "b", "complex64": "c"}.get(dtype.name, dtype.name[0])
    return ("|" if dtype.size == 1 else "<") + kind + str(dtype.size)


def _npy_bytes(a):
    """A whole .npy file (format version 1.0, header padded to 64 bytes)."""
    shape = repr(tuple(a.shape))
    header = f"{{'descr': '{_npy_descr(a.dtype)}', 'fortran_order': False, 'shape': {shape}, }}"
    pad = -(len(_NPY_MAGIC) + 4 + len(header) + 1) % 64
    header = (header + " " * pad + "\n").encode("latin1")
    return _NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(header)) + header + to_bytes(a)


# The array-protocol type strings MLX reads (without the byte-order character).
_NPY_DTYPES = {"V2": _dt.bfloat16, "b1": _dt.bool_, "c8": _dt.complex64}
_NPY_DTYPES.update({_npy_descr(d)[1:]: d for d in CODES if d is not _dt.bool_})


def _npy_dtype(descr):
    """mlx/io/load.cpp ``dtype_from_array_protocol``: (dtype, big endian)."""
    dtype = _NPY_DTYPES.get(descr[1:] if descr[:1] in "<>|=" else descr)
    if dtype is None:
        raise Corrupt(f"its dtype {descr!r} is not one MLX reads (Unsupported array "
                       "protocol type-string)", ValueError)
    return dtype, descr[:1] == ">"


def _npy_header(raw):
    """(dtype, big endian, fortran order, shape, data offset) from the start of
    a .npy file (``raw`` holds at least its header)."""
    if raw[:6] != _NPY_MAGIC:
        raise Corrupt("it is not a .npy file (no NumPy magic string at its start)")
    if len(raw) < 10 or raw[6] not in (1, 2, 3):
        raise Corrupt("its .npy header is truncated or of an unknown version")
    if raw[6] == 1:
        (length,), start = struct.unpack("<H", raw[8:10]), 10
    else:
        if len(raw) < 12:
            raise Corrupt("its .npy header is truncated")
        (length,), start = struct.unpack("<I", raw[8:12]), 12
    text = raw[start:start + length]
    if len(text) < length:
        raise Corrupt(f"its .npy header should be {length} bytes but the file ends "
                       f"after {len(text)}")
    try:
        header = _parse_header(text.decode("latin1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
        if not (isinstance(descr, str) and isinstance(fortran, bool) and isinstance(shape, tuple)
                and all(type(d) is int and d >= 0 for d in shape)):
            raise ValueError
    except (ValueError, KeyError, TypeError, SyntaxError):
        raise Corrupt("its .npy header is not a dict with 'descr', 'fortran_order' and "
                       f"'shape': {text[:80]!r}") from None
    dtype, big = _npy_dtype(descr)
    return dtype, big, fortran, shape, start + length


def _npy_truncated(need, have):
    return (f"its header promises {need} bytes of data but the file holds {have} "
            "(truncated?)")


def _read_npy(raw):
    """An array from the bytes of a .npy file."""
    dtype, big, fortran, shape, offset = _npy_header(raw)
    need = math.prod(shape) * dtype.size
    body = raw[offset:offset + need]
    if len(body) < need:
        raise Corrupt(_npy_truncated(need, len(body)))
    if not fortran:
        return from_bytes(body, dtype, shape, big)
    # Column-major: read as the reversed shape, then transpose (as MLX does).
    return transpose(from_bytes(body, dtype, shape[::-1], big))


class OpenFile:
    """A file ``load`` opened, read by its arrays' ``Load`` nodes at eval (MLX's
    ``io::ParallelFileReader``, shared by the arrays of one file).

    It holds the operating system's descriptor of the file, not its name: what
    eval reads is what that file holds then, whatever happened to the name
    (deleted, or another file renamed over it). The descriptor is closed when
    the last ``Load`` node holding it goes (evaluated, or dropped unevaluated).
    """

    def __init__(self, name):
        self.name = name
        self.fd = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0))

    def size(self):
        return os.fstat(self.fd).st_size

    def read_at(self, offset, n):
        """Up to ``n`` bytes from byte ``offset`` (fewer where the file ends)."""
        parts = []
        while n > 0:
            if hasattr(os, "pread"):
                part = os.pread(self.fd, n, offset)
            else:  # (Windows: no pread; mlxref evaluates one node at a time)
                os.lseek(self.fd, offset, os.SEEK_SET)
                part = os.read(self.fd, n)
            if not part:
                break
            parts.append(part)
            offset, n = offset + len(part), n - len(part)
        return b"".join(parts)

    def __del__(self):
        fd, self.fd = getattr(self, "fd", None), None
        if fd is not None:
            os.close(fd)


def _open(name):
    try:
        return OpenFile(name)
    except OSError:
        raise RuntimeError(f"[load] Failed to open file {name}") from None


def _reader(file, op, offset, dtype, shape, big_endian=False, short=None):
    """The function a ``Load`` node calls at eval: the elements of ``dtype`` and
    ``shape`` at ``offset`` in ``file`` (an ``OpenFile``), or a RuntimeError
    naming the file if they are not all there (any more)."""
    n = math.prod(shape)
    need = n * dtype.size

    def read():
        try:
            body = file.read_at(offset, need)
        except OSError as e:
            raise RuntimeError(f"[{op}] Cannot load {file.name}: it could not be read at "
                               f"eval ({e}).") from None
        if len(body) < need:
            what = short(need, len(body)) if short else (
                f"{need} bytes of data at byte {offset} were wanted but the file holds "
                f"{len(body)} there (it changed since it was loaded?)")
            raise RuntimeError(f"[{op}] Cannot load {file.name}: {what}.") from None
        return decode(body, dtype, n, big_endian)

    return read


def _load_npy_lazily(name):
    """An array read from the .npy file at path ``name`` when it is evaluated.

    As in MLX (mlx/io/load.cpp ``load``): the file is opened and its header
    read now, so a bad header fails here; the elements are read through the
    open file by a ``Load`` node at eval, so a file cut short in its data fails
    there (a RuntimeError), and the bytes are counted in the memory model only
    from then on.
    """
    file = _open(name)
    head = file.read_at(0, 12)
    if head[:6] == _NPY_MAGIC and len(head) >= 10:
        start = 10 if head[6] == 1 else 12
        length = struct.unpack("<H", head[8:10])[0] if head[6] == 1 else (
            struct.unpack("<I", head[8:12])[0] if len(head) == 12 else 0)
        head = file.read_at(0, start + length)
    dtype, big, fortran, shape, offset = _npy_header(head)
    read_shape = shape[::-1] if fortran else shape
    read = _reader(file, "load_npy", offset, dtype, read_shape, big, _npy_truncated)
    out = make_array(Load(read, read_shape, dtype, name), [])
    return transpose(out) if fortran else out


def _parse_header(text):
    """The header dict of a .npy file: Python literals only."""
    value = ast.literal_eval(text.strip())
    if not isinstance(value, dict):
        raise ValueError
    return value


# --- safetensors ----------------------------------------------------------------


def _safetensors_bytes(arrays, metadata):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = dict(metadata)
    for key, a in arrays.items():
        if a.dtype not in _SAFETENSORS:
            raise RuntimeError("[save_safetensors] received invalid dtype.")
        blob = to_bytes(a)
        header[key] = {"dtype": _SAFETENSORS[a.dtype], "shape": list(a.shape),
                       "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the spec allows space padding; aligns the data
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def _safetensors_header(raw, size):
    """(JSON header, its length) of a safetensors file of ``size`` bytes whose
    first bytes ``raw`` holds (at least the header, when the file has it)."""
    if size < 8:
        raise Corrupt(f"it is {size} bytes long, shorter than a safetensors header")
    (length,) = struct.unpack("<Q", raw[:8])
    if length == 0 or length >= 100_000_000:
        raise Corrupt(f"its JSON header length ({length}) is invalid: not a safetensors file?")
    if size < 8 + length:
        raise Corrupt(f"the JSON header is {length} bytes long but the file is only "
                       f"{size} bytes (an incomplete download or a corrupt file?)")
    try:
        header = json.loads(raw[8:8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Corrupt(f"its JSON header does not parse ({e})") from None
    if not isinstance(header, dict):
        raise Corrupt("its JSON header is not an object")
    return header, length


def _read_safetensors(raw, size=None, tensor=None):
    """(arrays, metadata) from a safetensors file. ``raw`` holds its bytes; or
    only its start, with ``size`` the file's length and ``tensor(offset,
    dtype, shape)`` making the array whose data is at ``offset`` in the file."""
    size = len(raw) if size is None else size
    header, length = _safetensors_header(raw, size)
    if tensor is None:
        def tensor(offset, dtype, shape):
            return from_bytes(raw[offset:offset + math.prod(shape) * dtype.size], dtype, shape)
    data_size = size - 8 - length
    arrays, metadata = {}, {}
    # MLX parses the header into a JSON object whose keys are sorted, and
    # goes through them in that order into its maps.
    for key, item in sorted(header.items()):
        if key == "__metadata__":
            if not isinstance(item, (dict, type(None))):
                raise Corrupt("its __metadata__ is not an object")
            metadata.update(sorted((item or {}).items()))
            continue
        try:
            dtype = _FROM_SAFETENSORS.get(item["dtype"])
            shape, (begin, end) = tuple(item["shape"]), item["data_offsets"]
            if not all(type(d) is int and d >= 0 for d in shape + (begin, end)):
                raise TypeError
        except (KeyError, TypeError, ValueError):
            raise Corrupt(f"its entry for tensor {key!r} is not a dtype, shape and two "
                           "data offsets") from None
        if dtype is None:
            raise Corrupt(f"tensor {key!r} has the dtype {item['dtype']!r}, which MLX "
                           "does not read")
        need = math.prod(shape) * dtype.size
        if end < begin or end - begin != need:
            raise Corrupt(f"tensor {key!r} has invalid data offsets ({begin}, {end}): "
                           f"expecting {need} bytes")
        if end > data_size:
            raise Corrupt(f"tensor {key!r} has data offsets ({begin}, {end}) beyond the "
                           f"{data_size} bytes of data (an incomplete download or a "
                           "corrupt file?)")
        arrays[key] = tensor(8 + length + begin, dtype, shape)
    return reordered(arrays), reordered(metadata)


def _load_safetensors_lazily(name):
    """(arrays, metadata) of the safetensors file at path ``name``, as MLX
    loads it (mlx/io/safetensors.cpp): the file is opened and its header read
    and checked now (offsets beyond the file fail here); each tensor is a
    ``Load`` node reading through the open file at eval."""
    file = _open(name)
    raw, size = file.read_at(0, 8), file.size()
    if len(raw) == 8:
        (length,) = struct.unpack("<Q", raw)
        raw += file.read_at(8, min(length, 100_000_000))

    def tensor(offset, dtype, shape):
        return make_array(Load(_reader(file, "load_safetensors", offset, dtype, shape),
                               shape, dtype, name), [])

    return _read_safetensors(raw, size, tensor)


# --- files --------------------------------------------------------------------------


def _check_array(value, signature, args):
    if not isinstance(value, array):
        raise incompatible_arguments(signature, args)


def save(file, arr):
    """``mx.save``: one array to a .npy file (``.npy`` appended to a path without it)."""
    _check_array(arr, "save(file: file | str | pathlib.Path, arr: array) -> None", [file, arr])
    write(file, _npy_bytes(arr), ".npy", "save")


def _savez(file, args, kwargs, compression, op):
    arrays = {}
    for k, v in kwargs.items():
        check_bad_cast(v, op, k)
        arrays[k] = v
    for i, v in enumerate(args):
        name = f"arr_{i}"
        check_bad_cast(v, op, name)
        if name in arrays:
            raise ValueError(f"[savez] Cannot use un-named variables and keyword {name}")
        arrays[name] = v
    check_file(file, op)
    if is_path(file):
        file = with_extension(file, ".npz")
    elif not hasattr(file, "write"):  # MLX's savez is Python code that calls file.write
        raise AttributeError(f"[{op}] file must be a path or a file object: "
                             f"'{type(file).__name__}' object has no attribute 'write'")
    with zipfile.ZipFile(file, "w", compression=compression) as z:
        for k, a in reordered(arrays).items():  # the order of MLX's map of them
            z.writestr(k + ".npy", _npy_bytes(a))


def savez(file, *args, **kwargs):
    """``mx.savez``: arrays to an uncompressed .npz; positional ones are named ``arr_i``."""
    _savez(file, args, kwargs, zipfile.ZIP_STORED, "savez")


def savez_compressed(file, *args, **kwargs):
    """``mx.savez_compressed``: as ``savez``, deflated."""
    _savez(file, args, kwargs, zipfile.ZIP_DEFLATED, "savez_compressed")


def save_safetensors(file, arrays, metadata=None):
    """``mx.save_safetensors``: a dict of arrays, and string metadata, to safetensors."""
    if not isinstance(arrays, dict):
        raise incompatible_arguments(
            "save_safetensors(file: file | str | pathlib.Path, arrays: dict[str, array], "
            "metadata: dict[str, str] | None = None)", [file, arrays])
    if metadata is not None and not (
            isinstance(metadata, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise ValueError(
            "[save_safetensors] Metadata must be a dictionary with string keys and values")
    for k, v in arrays.items():
        check_bad_cast(v, "save_safetensors", repr(k))
    write(file, _safetensors_bytes(arrays, metadata), ".safetensors", "save_safetensors")


def _read_all(file, op):
    """(bytes, label) of a path or a binary file object."""
    if is_path(file):
        name = os.fspath(file)
        try:
            with open(name, "rb") as f:
                return f.read(), name
        except OSError:
            if op == "load_gguf":  # mlx/io/gguf.cpp: an invalid_argument
                raise ValueError(f"[load_gguf] Failed to open {name}") from None
            raise RuntimeError(f"[load] Failed to open file {name}") from None
    if hasattr(file, "read"):
        raw = file.read()
        if not isinstance(raw, (bytes, bytearray)):
            raise ValueError(f"[{op}] Input must be a file-like object, or string")
        return bytes(raw), getattr(file, "name", type(file).__name__)
    raise ValueError(f"[{op}] Input must be a file-like object, or string")


def _read_npz(raw):
    arrays = {}
    try:
        with zipfile.ZipFile(_io.BytesIO(raw)) as z:
            for name in z.namelist():
                key = name[:-4] if len(name) > 4 and name.endswith(".npy") else name
                if key in arrays:  # MLX's map keeps the first of two members of one name
                    continue
                try:
                    arrays[key] = _read_npy(z.read(name))
                except Corrupt as e:
                    raise Corrupt(f"its member {name!r}: {e}", e.error) from None
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError) as e:
        raise Corrupt(f"it is not a readable zip (.npz) file ({e})", ValueError) from None
    except Exception as e:  # zlib errors of a damaged deflated member
        if type(e).__name__ == "error" and type(e).__module__ == "zlib":
            raise Corrupt(f"a compressed member is damaged ({e})", ValueError) from None
        raise
    return reordered(arrays)


def load(file, /, format=None, return_metadata=False, *, stream=None):
    """``mx.load``: the array (.npy), dict (.npz, .safetensors) or, with
    ``return_metadata=True`` (safetensors), ``(dict, metadata)`` in ``file``."""
    check_file(file, "load")
    if format is None:
        if is_path(file):
            name = os.fspath(file)
        elif hasattr(file, "read"):
            name = getattr(file, "name", None)
            if not isinstance(name, str):
                raise AttributeError(f"'{type(file).__name__}' object has no attribute 'name'")
        else:
            raise ValueError(
                "[load] Input must be a file-like object opened in binary mode, or string")
        if "." not in name:
            raise ValueError("[load] Could not infer file format from extension")
        format = name[name.rfind(".") + 1:]
    if return_metadata and format in ("npy", "npz"):
        raise ValueError(f"[load] metadata not supported for format {format}")
    if format not in ("npy", "npz", "safetensors", "gguf"):
        raise ValueError(f"[load] Unknown file format {format}")
    op = {"npy": "load_npy", "npz": "load_npz", "safetensors": "load_safetensors",
          "gguf": "load_gguf"}[format]
    if format == "gguf" and not is_path(file):
        raise ValueError("[load_gguf] Input must be a string")
    if format in ("npy", "safetensors") and is_path(file):  # read at eval, as in MLX
        name = os.fspath(file)
        try:
            if format == "npy":
                return _load_npy_lazily(name)
            arrays, metadata = _load_safetensors_lazily(name)
        except Corrupt as e:
            raise e.error(f"[{op}] Cannot load {name}: {e}.") from None
        return (arrays, metadata) if return_metadata else arrays
    raw, label = _read_all(file, op)
    try:
        if format == "npy":
            return _read_npy(raw)
        if format == "npz":
            return _read_npz(raw)
        read = read_gguf if format == "gguf" else _read_safetensors
        arrays, metadata = read(raw)
    except Corrupt as e:
        raise e.error(f"[{op}] Cannot load {label}: {e}.") from None
    return (arrays, metadata) if return_metadata else arrays
