"""GGUF: ``save_gguf`` and ``load`` of .gguf files, in pure Python from the
format's specification (ggml's docs/gguf.md).

Read alongside: mlx/io/gguf.cpp (which dtypes and metadata MLX writes and
reads, its checks and messages), mlx/io/gguf_quants.cpp (the quantized
tensors) and gguflib.c of antirez/gguf-tools, the C library MLX parses and
writes the files with.

The layout: ``GGUF``, a uint32 version (MLX writes 3), the uint64 counts of
tensors and of metadata pairs; each metadata pair (a string key, a uint32
value type, the value; an array value is an element type, a uint64 length
and the elements); each tensor's info (name, uint32 number of dimensions,
the uint64 dimensions innermost first, uint32 tensor type, uint64 offset
into the data section); then the data section, which starts, as each tensor
in it does, at a multiple of the alignment (``general.alignment``, default
32). Everything is little-endian; a string is a uint64 length then UTF-8.

As in MLX: tensors are float32, float16, int8, int16 or int32 (MLX's
writer's dtypes); metadata values are strings, lists of strings and arrays
(0-d ones as a single value, 1-D ones as a GGUF array) of the integer,
float32 and bool dtypes; on loading, a float64 metadata value becomes
float32, bfloat16 tensors become float16, and Q4_0, Q4_1 and Q8_0 tensors
named ``NAME.weight`` become MLX's affine quantization with group size 32
(``NAME.weight`` packed into uint32, ``NAME.scales`` and ``NAME.biases`` in
float16); Q2_K and Q6_K tensors are dequantized to float16 as gguflib does
it. Q4_K is refused: gguflib (so MLX) decodes it wrongly. Unlike MLX: arrays MLX cannot make row-contiguous (a strided
slice) are saved; a float64 metadata value is read as 8 bytes (MLX's reader
steps over only 4, and misreads what follows); and what MLX crashes on or
reads silently wrong (more than 8 dimensions, an unknown tensor type, a
zero alignment, a truncated key) is one error naming the file.

Orders, as MLX's C++ maps give them (mlxref/core/unordered_map.py): ``load``
inserts the metadata and the tensors (a quantized one as its weight, scales
and biases) in the file's order and returns them in the maps' order;
``save_gguf`` writes them in the order of the maps made from its dicts.
"""

import math
import os
import struct

from .. import dtypes as _dt
from ..array import array, from_data
from ..ops.common import incompatible_arguments
from ..unordered_map import reordered
from .common import check_bad_cast, check_file, Corrupt, decode, from_bytes, is_path, to_bytes

_MAGIC = b"GGUF"
_ALIGNMENT = 32  # gguflib's default, when the file has no general.alignment
_MAX_DIMS = 8  # gguflib's GGUF_TENSOR_MAX_DIM

# Metadata value types: (name, struct code, mlxref dtype). FLOAT64 loads as
# float32 (mlx/io/gguf.cpp ``set_mx_value_from_gguf``).
_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _FLOAT32, _BOOL = range(8)
_STRING, _ARRAY, _UINT64, _INT64, _FLOAT64 = range(8, 13)
_VALUES = {
    _UINT8: ("uint8", "B", _dt.uint8), _INT8: ("int8", "b", _dt.int8),
    _UINT16: ("uint16", "H", _dt.uint16), _INT16: ("int16", "h", _dt.int16),
    _UINT32: ("uint32", "I", _dt.uint32), _INT32: ("int32", "i", _dt.int32),
    _FLOAT32: ("float32", "f", _dt.float32), _BOOL: ("bool", "B", _dt.bool_),
    _UINT64: ("uint64", "Q", _dt.uint64), _INT64: ("int64", "q", _dt.int64),
    _FLOAT64: ("float64", "d", _dt.float32),
}
# The metadata type MLX writes for an array's dtype.
_VALUE_OF_DTYPE = {dtype: t for t, (_, _, dtype) in _VALUES.items() if t != _FLOAT64}

# Tensor types: name, weights per block, bytes per block (gguflib's table,
# except q2_k: its table says 82 bytes where its decoder, like GGML, steps 84).
_TENSOR_TYPES = [
    ("f32", 1, 4), ("f16", 1, 2), ("q4_0", 32, 18), ("q4_1", 32, 20),
    ("q4_2 deprecated", 0, 0), ("q4_3 deprecated", 0, 0), ("q5_0", 32, 22),
    ("q5_1", 32, 24), ("q8_0", 32, 34), ("q8_1", 32, 40), ("q2_k", 256, 84),
    ("q3_k", 256, 110), ("q4_k", 256, 144), ("q5_k", 256, 176), ("q6_k", 256, 210),
    ("q8_k", 256, 292), ("iq2_xxs", 256, 66), ("iq2_xs", 256, 74), ("iq3_xxs", 256, 98),
    ("iq1_s", 256, 110), ("iq4_nl", 256, 50), ("iq3_s", 256, 110), ("iq2_s", 256, 82),
    ("iq4_xs", 256, 136), ("i8", 1, 1), ("i16", 1, 2), ("i32", 1, 4), ("i64", 1, 8),
    ("f64", 1, 8), ("iq1_m", 256, 56), ("bf16", 1, 2),
]
_F32, _F16, _Q4_0, _Q4_1, _Q8_0 = 0, 1, 2, 3, 8
_I8, _I16, _I32, _BF16 = 24, 25, 26, 30
# The types MLX reads as they are (mlx/io/gguf.cpp ``gguf_type_to_dtype``),
# which are also the ones it writes.
_TENSOR_DTYPES = {_F32: _dt.float32, _F16: _dt.float16, _I8: _dt.int8, _I16: _dt.int16,
                  _I32: _dt.int32}
_TENSOR_TYPE_OF_DTYPE = {d: t for t, d in _TENSOR_DTYPES.items()}
_Q2_K, _Q4_K, _Q6_K = 10, 12, 14


# --- writing ------------------------------------------------------------------------


def _string(text):
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _metadata_value(value):
    """(value type, bytes) of one metadata value, as mlx/io/gguf.cpp ``save_gguf``
    writes it; its errors, in its order."""
    if isinstance(value, str):
        return _STRING, _string(value)
    if isinstance(value, list):
        return _ARRAY, struct.pack("<IQ", _STRING, len(value)) + b"".join(map(_string, value))
    if value.ndim > 1:
        raise RuntimeError("[save_gguf] Cannot save arrays with more than one dimension.")
    if value.size == 0:
        raise RuntimeError("[save_gguf] Cannot save empty arrays.")
    kind = _VALUE_OF_DTYPE.get(value.dtype)
    if kind is None:
        raise ValueError(f"[save_gguf] array type {value.dtype.name} not support for metadata.")
    data = to_bytes(value)
    if value.ndim == 0:
        return kind, data
    return _ARRAY, struct.pack("<IQ", kind, value.size) + data


def _check_metadata(metadata):
    """MLX's binding casts the dict to str -> array | str | list[str] first:
    anything else is its ``std::bad_cast``."""
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise RuntimeError(f"[save_gguf] The metadata key {key!r} is not a str "
                               "(MLX itself raises RuntimeError: std::bad_cast).")
        ok = isinstance(value, (str, array)) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value))
        if not ok:
            raise RuntimeError(
                f"[save_gguf] The metadata value of {key!r} is a {type(value).__name__}, not "
                "an array, a str or a list of str (MLX itself raises RuntimeError: "
                "std::bad_cast).")


def _gguf_bytes(arrays, metadata):
    """A whole GGUF (version 3) file."""
    pairs = [_string(k) + struct.pack("<I", kind) + raw
             for k, (kind, raw) in ((k, _metadata_value(v)) for k, v in metadata.items())]
    alignment = metadata.get("general.alignment")
    if isinstance(alignment, array) and alignment.dtype is _dt.uint32 and alignment.ndim == 0:
        alignment = alignment.item()  # readers place the data by it, so the writer does too
    else:
        alignment = _ALIGNMENT
    if alignment == 0:
        raise ValueError("[save_gguf] general.alignment must not be 0.")
    infos, blobs, offset = [], [], 0
    for key, a in arrays.items():
        kind = _TENSOR_TYPE_OF_DTYPE.get(a.dtype)
        if kind is None:
            raise RuntimeError(f"[save_gguf] dtype {a.dtype.name} is not supported")
        if a.ndim > _MAX_DIMS:
            raise ValueError(
                f"[save_gguf] Cannot save {key!r} with {a.ndim} dimensions: GGUF readers "
                f"(gguflib, which MLX uses) take at most {_MAX_DIMS} (MLX writes the file and "
                "then aborts loading it).")
        offset += -offset % alignment
        infos.append(_string(key) + struct.pack(f"<I{a.ndim}QIQ", a.ndim, *a.shape[::-1],
                                                kind, offset))
        blob = to_bytes(a)
        blobs.append(blob)
        offset += len(blob)
    head = (_MAGIC + struct.pack("<IQQ", 3, len(arrays), len(metadata)) + b"".join(pairs)
            + b"".join(infos))
    out = bytearray(head)
    for blob in blobs:  # each tensor starts at a multiple of the alignment
        out += bytes(-len(out) % alignment)
        out += blob
    return bytes(out)


def save_gguf(file, arrays, metadata=None):
    """``mx.save_gguf``: a dict of arrays, and metadata (str, list of str or
    array values), to a GGUF file (``.gguf`` appended to a path without it)."""
    if not isinstance(arrays, dict) or not isinstance(metadata, (dict, type(None))):
        raise incompatible_arguments(
            "save_gguf(file: file | str | pathlib.Path, arrays: dict[str, array], metadata: "
            "dict[str, array | str | list[str]])", [file, arrays] + (
                [] if metadata is None else [metadata]))
    check_file(file, "save_gguf")
    if not is_path(file):
        raise ValueError("[save_gguf] Input must be a string")
    for k, v in arrays.items():
        if not isinstance(k, str):
            raise RuntimeError(f"[save_gguf] The key {k!r} is not a str (MLX itself "
                               "raises RuntimeError: std::bad_cast).")
        check_bad_cast(v, "save_gguf", repr(k))
    metadata = metadata or {}
    _check_metadata(metadata)
    name = os.fsdecode(os.fspath(file))
    if not name.endswith(".gguf"):
        name += ".gguf"
    data = _gguf_bytes(reordered(arrays), reordered(metadata))  # as MLX's maps hold them
    with open(name, "wb") as f:
        f.write(data)


# --- reading ------------------------------------------------------------------------


class _Reader:
    """Bounds-checked little-endian reads from the bytes of a file."""

    def __init__(self, raw):
        self.raw, self.pos = raw, 0

    def take(self, n, what):
        if n > len(self.raw) - self.pos:
            raise Corrupt(f"{what} extends past the end of the file (at byte {self.pos}, "
                           f"{n} bytes wanted, {len(self.raw) - self.pos} left): an "
                           "incomplete download or a corrupt file?")
        self.pos += n
        return self.raw[self.pos - n:self.pos]

    def unpack(self, fmt, what):
        fmt = "<" + fmt
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def string(self, what):
        (n,) = self.unpack("Q", what)
        raw = self.take(n, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Corrupt(f"{what} is not UTF-8 text") from None


def _read_value(r, kind, what):
    """One metadata value of type ``kind``, as MLX returns it."""
    if kind == _STRING:
        return r.string(what)
    if kind == _ARRAY:
        inner, n = r.unpack("IQ", what)
        if inner == _ARRAY:
            raise Corrupt(f"{what} is an array of arrays (MLX: Only supports loading "
                           "1-layer of nested arrays)", ValueError)
        if inner == _STRING:
            return [r.string(what) for _ in range(n)]
        if inner not in _VALUES:
            raise Corrupt(f"{what} is an array of unknown value type {inner}")
        return _read_numbers(r, inner, n, (n,), what)
    if kind not in _VALUES:
        raise Corrupt(f"{what} has an unknown value type {kind} ([load_gguf] Received "
                       "unexpected type.)")
    return _read_numbers(r, kind, 1, (), what)


def _read_numbers(r, kind, n, shape, what):
    _, code, dtype = _VALUES[kind]
    values = list(struct.unpack(f"<{n}{code}", r.take(n * struct.calcsize(code), what)))
    if dtype is _dt.bool_:
        values = [v != 0 for v in values]
    return from_data(dtype.store(values), shape, dtype)


def _quantized(name, kind, shape, raw):
    """(weight, scales, biases) of a Q4_0, Q4_1 or Q8_0 tensor, as
    mlx/io/gguf_quants.cpp unpacks them: blocks of 32 weights, each with a
    float16 scale (and, in Q4_1, a float16 minimum)."""
    if not shape:
        raise Corrupt(f"the quantized tensor {name!r} has no dimensions")
    if shape[-1] % 32:
        raise Corrupt(f"the quantized tensor {name!r} has a last dimension of {shape[-1]}, "
                       "not a multiple of 32 (MLX: incompatible last dim shape)")
    blocks = math.prod(shape) // 32
    block_bytes = _TENSOR_TYPES[kind][2]
    head = 4 if kind == _Q4_1 else 2
    scales, biases, packed = [], [], bytearray()
    for b in range(blocks):
        block = raw[b * block_bytes:(b + 1) * block_bytes]
        scale = struct.unpack("<e", block[:2])[0]
        scales.append(scale)
        quants = block[head:]
        if kind == _Q8_0:
            biases.append(-128 * scale)
            packed += bytes(q ^ 0x80 for q in quants)  # int8 + 128, as uint8
        else:
            biases.append(struct.unpack("<e", block[2:4])[0] if kind == _Q4_1 else -8 * scale)
            # GGML: weight j in the low nibble of byte j, weight j + 16 in its
            # high nibble; MLX: weight i in nibble i % 2 of byte i // 2.
            w = [q & 0xF for q in quants] + [q >> 4 for q in quants]
            packed += bytes(w[i] | (w[i + 1] << 4) for i in range(0, 32, 2))
    weights = list(struct.unpack(f"<{len(packed) // 4}I", packed))
    per_word = 8 if kind != _Q8_0 else 4
    prefix = name[:len(name) - len(".weight")] if len(name) >= len(".weight") else name
    group_shape = shape[:-1] + (shape[-1] // 32,)
    return {
        name: from_data(weights, shape[:-1] + (shape[-1] // per_word,), _dt.uint32),
        prefix + ".scales": from_data(_dt.float16.store(scales), group_shape, _dt.float16),
        prefix + ".biases": from_data(_dt.float16.store(biases), group_shape, _dt.float16),
    }


def _f32(v):
    """``v`` rounded to float32, as each C float operation rounds."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _half(raw, at):
    return struct.unpack_from("<e", raw, at)[0]


def _q6_k(block):
    """The 256 weights of a Q6_K super-block (gguflib's ``gguf_q6_k_to_float``):
    6-bit quants (4 low bits in L, 2 high bits in H) less 32, times an 8-bit
    sub-block scale times a float16 super-scale."""
    super_scale = _half(block, 208)
    out = []
    for cluster in range(2):
        low, high = block[64 * cluster:64 * cluster + 64], block[128 + 32 * cluster:160 + 32 * cluster]
        scales = struct.unpack_from("<8b", block, 192 + 8 * cluster)
        for j in range(128):
            q = ((low[j % 64] >> (j // 64 * 4)) & 0xF) | (((high[j % 32] >> (j // 32 * 2)) & 3) << 4)
            out.append(_f32(_f32(super_scale * scales[j // 16]) * (q - 32)))
    return out


def _q2_k(block):
    """The 256 weights of a Q2_K super-block (gguflib's ``gguf_q2_k_to_float``):
    2-bit quants times a 4-bit sub-block scale, less a 4-bit sub-block min, the
    two scaled by float16 scales of scales and of mins."""
    d_all, m_all = _half(block, 80), _half(block, 82)
    out = []
    for cluster in range(2):
        for j in range(128):
            if j % 16 == 0:
                packed = block[cluster * 8 + j // 16]
                scale, low = _f32(d_all * (packed & 0xF)), _f32(m_all * (packed >> 4))
            q = (block[16 + j % 32 + cluster * 32] >> (j // 32 * 2)) & 3
            out.append(_f32(_f32(q * scale) - low))
    return out


_K_DECODERS = {_Q2_K: _q2_k, _Q6_K: _q6_k}


def _k_quantized(kind, shape, raw):
    """A Q2_K or Q6_K tensor as float16, as gguflib converts it for MLX (each
    value computed in float32, then rounded to float16)."""
    n = math.prod(shape)
    size = _TENSOR_TYPES[kind][2]
    values = []
    for b in range(-(-n // 256)):
        values += _K_DECODERS[kind](raw[b * size:(b + 1) * size])
    return _dt.float16.store(values[:n])


def _tensor(name, kind, shape, raw):
    """The arrays one tensor loads as (one, or a quantized triplet)."""
    if kind in _TENSOR_DTYPES:
        return {name: from_bytes(raw, _TENSOR_DTYPES[kind], shape)}
    if kind in (_Q4_0, _Q4_1, _Q8_0):
        return _quantized(name, kind, shape, raw)
    if kind == _BF16:  # gguflib converts it to float16 for MLX
        flat = decode(raw, _dt.bfloat16, math.prod(shape))
        return {name: from_data(_dt.float16.store(flat), shape, _dt.float16)}
    if kind in _K_DECODERS:  # gguflib dequantizes them to float16 for MLX
        return {name: from_data(_k_quantized(kind, shape, raw), shape, _dt.float16)}
    type_name = _TENSOR_TYPES[kind][0]
    if kind == _Q4_K:
        raise Corrupt(
            f"tensor {name!r} is of type q4_k, which MLX reads wrongly (gguflib scales the "
            "high nibbles of each 32 bytes with the low nibbles' sub-block scale and min, "
            "where GGML uses the next sub-block's), and mlxref does not read",
            NotImplementedError)
    raise Corrupt(f"tensor {name!r} is of type {type_name}, which MLX does not read "
                   "([load_gguf] gguf_tensor_to_f16 failed)")


def read_gguf(raw):
    """(arrays, metadata) from the bytes of a GGUF file."""
    r = _Reader(raw)
    if raw[:4] != _MAGIC:
        raise Corrupt("it is not a GGUF file (it does not start with 'GGUF')")
    version, n_tensors, n_pairs = r.unpack("4xIQQ", "the GGUF header")
    if version not in (2, 3):
        raise Corrupt(f"its GGUF version is {version}; MLX reads versions 2 and 3")
    metadata, alignment = {}, _ALIGNMENT
    for i in range(n_pairs):
        key = r.string(f"metadata key {i}")
        (kind,) = r.unpack("I", f"the type of metadata {key!r}")
        metadata[key] = _read_value(r, kind, f"metadata {key!r}")
        if key == "general.alignment" and kind == _UINT32:
            alignment = metadata[key].item()
    if alignment == 0:
        raise Corrupt("its general.alignment is 0")
    infos = []
    for i in range(n_tensors):
        name = r.string(f"the name of tensor {i}")
        (ndim,) = r.unpack("I", f"tensor {name!r}")
        if ndim > _MAX_DIMS:
            raise Corrupt(f"tensor {name!r} has {ndim} dimensions, more than the "
                           f"{_MAX_DIMS} GGUF readers take")
        *dims, kind, offset = r.unpack(f"{ndim}QIQ", f"tensor {name!r}")
        if kind >= len(_TENSOR_TYPES) or _TENSOR_TYPES[kind][1] == 0:
            raise Corrupt(f"tensor {name!r} has an unknown tensor type {kind}")
        infos.append((name, tuple(dims[::-1]), kind, offset))
    data_start = r.pos + (-r.pos % alignment)
    arrays = {}
    for name, shape, kind, offset in infos:
        start = data_start + offset
        _, per_block, block_bytes = _TENSOR_TYPES[kind]
        nbytes = -(-math.prod(shape) // per_block) * block_bytes
        if start > len(raw):
            raise Corrupt(f"tensor {name!r} has a data offset past the end of the file: "
                           "an incomplete download or a corrupt file?")
        if nbytes > len(raw) - start:
            raise Corrupt(f"tensor {name!r} extends past the end of the file: an "
                           "incomplete download or a corrupt file?")
        for key, value in _tensor(name, kind, shape, raw[start:start + nbytes]).items():
            if key in arrays:
                raise Corrupt(f"it has two tensors named {key!r} (a quantized tensor's "
                               "scales and biases count too)")
            arrays[key] = value
    return reordered(arrays), reordered(metadata)  # the order of MLX's maps of them
