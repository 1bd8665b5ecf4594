"""GGUF files (mlxref/core/io/gguf.py; MLX's mlx/io/gguf.cpp): ``mx.save_gguf`` and ``mx.load``
of .gguf, between mlxref and real MLX.

Tensors of every dtype MLX writes go each way, with metadata of every kind
(strings, lists of strings, 0-d and 1-D arrays); files built here byte by
byte from the format's specification (ggml's docs/gguf.md) test what MLX
reads but does not write: quantized Q4_0/Q4_1/Q8_0 tensors, bfloat16, other
alignments, metadata types. Damaged files get one clear error naming the file.
"""

import math
import pathlib
import random
import struct

import pytest

import mlxref.core as mx

from support import needs_mlx, real_mx, same_array

LIBS = [mx] + ([real_mx] if real_mx else [])
TENSOR_DTYPES = ["float32", "float16", "int8", "int16", "int32"]
SHAPES = [(), (1,), (5,), (0, 3), (2, 3, 1, 2)]
META_DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
               "float32", "bool_"]


def _values(dtype, shape, seed):
    rng = random.Random(seed)
    n = math.prod(shape)
    if dtype.startswith("float"):
        vals = [rng.uniform(-100, 100) for _ in range(n)]
        special = [math.inf, -0.0, math.nan, 1e-7]
        vals[:len(special)] = special[:n]
    elif dtype == "bool_":
        vals = [rng.random() < 0.5 for _ in range(n)]
    else:
        bits = int(dtype.lstrip("uint"))
        lo, hi = (0, 2**bits - 1) if dtype.startswith("u") else (-(2**(bits - 1)), 2**(bits - 1) - 1)
        hi = min(hi, 2**63 - 1)  # the widest Python int mx.array takes
        vals = [rng.randint(lo, hi) for _ in range(n)]
        vals[:2] = [lo, hi][:n]
    return vals


def _array(lib, dtype, shape, seed=0):
    flat = _values(dtype, shape, seed)
    return lib.array(flat, getattr(lib, dtype)).reshape(shape) if shape else lib.array(
        flat[0], getattr(lib, dtype))


def _assert_same_metadata(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for k, v in ours.items():
        w = theirs[k]
        if isinstance(v, (str, list)):
            assert v == w, k
        else:
            assert same_array(v, w), (k, v, w)


# --- round trips ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", TENSOR_DTYPES)
def test_every_tensor_dtype_round_trips(tmp_path, dtype):
    arrays = {f"t{i}": _array(mx, dtype, s, i) for i, s in enumerate(SHAPES)}
    arrays["transposed"] = _array(mx, dtype, (2, 3), 9).T
    arrays["broadcast"] = mx.broadcast_to(_array(mx, dtype, (3,), 8), (2, 3))
    arrays["strided"] = _array(mx, dtype, (7,), 7)[::3]  # MLX refuses this one
    mx.save_gguf(tmp_path / "a", arrays)  # .gguf appended; a pathlib path
    loaded = mx.load(str(tmp_path / "a.gguf"))
    assert sorted(loaded) == sorted(arrays)  # (in MLX's order: see below)
    assert all(same_array(loaded[k], arrays[k]) for k in arrays)


@needs_mlx
@pytest.mark.parametrize("dtype", TENSOR_DTYPES)
def test_tensors_between_mlxref_and_mlx(tmp_path, dtype):
    ours = {f"t{i}": _array(mx, dtype, s, i) for i, s in enumerate(SHAPES)}
    theirs = {f"t{i}": _array(real_mx, dtype, s, i) for i, s in enumerate(SHAPES)}
    mx.save_gguf(str(tmp_path / "ours.gguf"), ours)
    real_mx.save_gguf(str(tmp_path / "theirs.gguf"), theirs)
    by_mlx = real_mx.load(str(tmp_path / "ours.gguf"))
    by_us = mx.load(str(tmp_path / "theirs.gguf"))
    for k in ours:
        assert same_array(by_mlx[k], ours[k]) and same_array(by_us[k], ours[k]), k


def _metadata(lib):
    meta = {"name": "héllo wörld", "empty": "", "tokens": ["a", "", "bc✓"], "none": []}
    for i, d in enumerate(META_DTYPES):
        meta[f"{d}.scalar"] = _array(lib, d, (), i)
        meta[f"{d}.vector"] = _array(lib, d, (3,), i)
    return meta


@needs_mlx
def test_metadata_of_every_kind_between_mlxref_and_mlx(tmp_path):
    tensors = {"w": mx.ones((2, 2), mx.int32)}
    mx.save_gguf(str(tmp_path / "ours.gguf"), tensors, _metadata(mx))
    real_mx.save_gguf(str(tmp_path / "theirs.gguf"), {"w": real_mx.ones((2, 2), real_mx.int32)},
                      _metadata(real_mx))
    for path in ("ours.gguf", "theirs.gguf"):
        ours = mx.load(str(tmp_path / path), return_metadata=True)
        theirs = real_mx.load(str(tmp_path / path), return_metadata=True)
        assert same_array(ours[0]["w"], theirs[0]["w"])
        _assert_same_metadata(ours[1], theirs[1])
        _assert_same_metadata(ours[1], _metadata(mx))
    assert mx.load(str(tmp_path / "ours.gguf"), return_metadata=False).keys() == {"w"}
    assert mx.load(str(tmp_path / "ours.gguf"), return_metadata=True)[1]["none"] == []


@needs_mlx
def test_the_file_is_byte_for_byte_mlxs(tmp_path):
    """One tensor and one metadata pair: nothing left to an unordered map's order."""
    for ours_meta, theirs_meta in (({"k": "v"}, {"k": "v"}),
                                   ({"k": mx.array([1, 2], mx.int64)},
                                    {"k": real_mx.array([1, 2], real_mx.int64)}),
                                   ({"k": mx.array(2.5)}, {"k": real_mx.array(2.5)})):
        mx.save_gguf(str(tmp_path / "ours"), {"w": mx.array([[1.0, 2.0, 3.0]])}, ours_meta)
        real_mx.save_gguf(str(tmp_path / "theirs"), {"w": real_mx.array([[1.0, 2.0, 3.0]])},
                          theirs_meta)
        assert (tmp_path / "ours.gguf").read_bytes() == (tmp_path / "theirs.gguf").read_bytes()


@pytest.mark.mlx
@needs_mlx
def test_many_tensors_and_pairs_are_written_and_loaded_in_mlxs_order(tmp_path):
    """MLX writes the tensors and metadata pairs in the order of its C++ maps
    of them, and loads them into such maps (mlxref/core/unordered_map.py):
    the file is MLX's byte for byte, and the loaded dicts list their keys as
    MLX's do."""
    names = [f"blk.{i}.attn.weight" for i in range(15)]
    for lib, path in ((mx, "ours"), (real_mx, "theirs")):
        lib.save_gguf(str(tmp_path / path), {k: lib.array([float(i)] * (i + 1))
                                             for i, k in enumerate(names)},
                      {f"meta.{i}": "v" * i for i in range(14)})
    assert (tmp_path / "ours.gguf").read_bytes() == (tmp_path / "theirs.gguf").read_bytes()
    ours = mx.load(str(tmp_path / "ours.gguf"), return_metadata=True)
    theirs = real_mx.load(str(tmp_path / "ours.gguf"), return_metadata=True)
    assert list(ours[0]) == list(theirs[0]) and list(ours[1]) == list(theirs[1])
    assert list(ours[0]) != names


def test_the_layout_follows_the_specification(tmp_path):
    mx.save_gguf(str(tmp_path / "a.gguf"), {"ab": mx.array([1, 2, 3], mx.int16),
                                            "c": mx.array([[1.5, 2.0], [3.0, 4.0]])},
                 {"s": "xy"})
    raw = (tmp_path / "a.gguf").read_bytes()
    assert raw[:4] == b"GGUF" and struct.unpack("<IQQ", raw[4:24]) == (3, 2, 1)
    pos = 24
    assert struct.unpack("<Q", raw[pos:pos + 8]) == (1,) and raw[pos + 8:pos + 9] == b"s"
    assert struct.unpack("<IQ", raw[pos + 9:pos + 21]) == (8, 2) and raw[pos + 21:pos + 23] == b"xy"
    pos += 23
    infos = []
    for _ in range(2):
        (n,) = struct.unpack("<Q", raw[pos:pos + 8])
        name = raw[pos + 8:pos + 8 + n].decode()
        pos += 8 + n
        (ndim,) = struct.unpack("<I", raw[pos:pos + 4])
        dims = struct.unpack(f"<{ndim}Q", raw[pos + 4:pos + 4 + 8 * ndim])
        kind, offset = struct.unpack("<IQ", raw[pos + 4 + 8 * ndim:pos + 16 + 8 * ndim])
        pos += 16 + 8 * ndim
        infos.append((name, dims, kind, offset))
    # in the order of MLX's map of the dict (c before ab: see the test above);
    # dims innermost first; type 25 is I16, 0 is F32; each offset a multiple of 32
    assert infos == [("c", (2, 2), 0, 0), ("ab", (3,), 25, 32)]
    start = pos + (-pos % 32)
    assert raw[pos:start] == bytes(start - pos)
    assert raw[start:start + 16] == struct.pack("<4f", 1.5, 2.0, 3.0, 4.0)
    assert raw[start + 16:start + 32] == bytes(16)
    assert raw[start + 32:] == struct.pack("<3h", 1, 2, 3)


@needs_mlx
def test_a_general_alignment_places_the_data(tmp_path):
    meta = {"general.alignment": mx.array(64, mx.uint32)}
    arrays = {"a": mx.array([1, 2, 3], mx.int8), "b": mx.array([1.0, 2.0])}
    mx.save_gguf(str(tmp_path / "a.gguf"), arrays, meta)
    raw = (tmp_path / "a.gguf").read_bytes()
    assert raw.index(struct.pack("<2f", 1.0, 2.0)) % 64 == 0
    loaded, meta_back = real_mx.load(str(tmp_path / "a.gguf"), return_metadata=True)
    assert all(same_array(loaded[k], arrays[k]) for k in arrays)
    assert meta_back["general.alignment"].item() == 64
    # a file with 8-byte alignment, built by hand, reads the same in both
    path = tmp_path / "eight.gguf"
    path.write_bytes(_gguf([("general.alignment", 4, struct.pack("<I", 8))],
                           [("t", (3,), 24, b"\x01\x02\x03"), ("u", (2,), 26, struct.pack("<2i", 5, 6))],
                           alignment=8))
    ours, theirs = mx.load(str(path)), real_mx.load(str(path))
    assert ours["t"].tolist() == theirs["t"].tolist() == [1, 2, 3]
    assert ours["u"].tolist() == theirs["u"].tolist() == [5, 6]


# --- files built by hand: what MLX reads but does not write ----------------------------


def _string(s):
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def _gguf(pairs, tensors, alignment=32, version=3):
    """A GGUF file: ``pairs`` of (key, value type, value bytes) and ``tensors`` of
    (name, shape, tensor type, data bytes), data aligned to ``alignment``."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(pairs))
    head += b"".join(_string(k) + struct.pack("<I", t) + v for k, t, v in pairs)
    offset, infos = 0, b""
    for name, shape, kind, data in tensors:
        offset += -offset % alignment
        infos += _string(name) + struct.pack(f"<I{len(shape)}QIQ", len(shape), *shape[::-1],
                                             kind, offset)
        offset += len(data)
    out = bytearray(head + infos)
    for _, _, _, data in tensors:
        out += bytes(-len(out) % alignment) + data
    return bytes(out)


def _q_blocks(kind, rows, cols, seed):
    """Random Q4_0 (2), Q4_1 (3) or Q8_0 (8) blocks of a rows x cols tensor."""
    rng = random.Random(seed)
    out = b""
    for _ in range(rows * cols // 32):
        out += struct.pack("<e", rng.choice([0.5, -0.25, 3.0, 1e-3]))
        if kind == 3:
            out += struct.pack("<e", rng.choice([-1.25, 2.0]))
        if kind == 8:
            out += bytes(rng.randrange(256) for _ in range(32))
        else:
            out += bytes(rng.randrange(256) for _ in range(16))
    return out


def _dequantized(kind, blocks, cols):
    """The values the blocks encode, from GGML's block definitions."""
    size = {2: 18, 3: 20, 8: 34}[kind]
    out = []
    for b in range(len(blocks) // size):
        block = blocks[b * size:(b + 1) * size]
        (d,) = struct.unpack("<e", block[:2])
        if kind == 8:
            out += [d * q for q in struct.unpack("<32b", block[2:])]
            continue
        m = struct.unpack("<e", block[2:4])[0] if kind == 3 else None
        qs = block[4:] if kind == 3 else block[2:]
        nibbles = [q & 15 for q in qs] + [q >> 4 for q in qs]
        out += [d * q + m if kind == 3 else d * (q - 8) for q in nibbles]
    return [out[i:i + cols] for i in range(0, len(out), cols)]


def _unpack(weights, scales, biases, bits):
    """MLX's affine quantization (group size 32) back to values, from its definition."""
    per_word = 32 // bits
    rows = []
    for w_row, s_row, b_row in zip(weights.tolist(), scales.tolist(), biases.tolist()):
        q = [(w >> (bits * i)) & ((1 << bits) - 1) for w in w_row for i in range(per_word)]
        rows.append([s_row[j // 32] * v + b_row[j // 32] for j, v in enumerate(q)])
    return rows


@pytest.mark.parametrize("kind,bits", [(2, 4), (3, 4), (8, 8)], ids=["Q4_0", "Q4_1", "Q8_0"])
def test_quantized_tensors_load_as_mlxs_affine_triplet(tmp_path, kind, bits):
    rows, cols = 3, 64
    blocks = _q_blocks(kind, rows, cols, kind)
    path = tmp_path / "q.gguf"
    path.write_bytes(_gguf([], [("blk.0.weight", (rows, cols), kind, blocks),
                                ("norm", (2,), 0, struct.pack("<2f", 1.0, 2.0))]))
    loaded = mx.load(str(path))
    assert sorted(loaded) == ["blk.0.biases", "blk.0.scales", "blk.0.weight", "norm"]
    w, s, b = loaded["blk.0.weight"], loaded["blk.0.scales"], loaded["blk.0.biases"]
    assert w.dtype == mx.uint32 and w.shape == (rows, cols * bits // 32)
    assert s.dtype == b.dtype == mx.float16 and s.shape == b.shape == (rows, cols // 32)
    assert _unpack(w, s, b, bits) == _dequantized(kind, blocks, cols)
    if real_mx is not None:
        theirs = real_mx.load(str(path))
        assert sorted(theirs) == sorted(loaded)
        assert all(same_array(loaded[k], theirs[k]) for k in loaded)


@needs_mlx
def test_quantized_names_and_shapes_as_mlx_takes_them(tmp_path):
    """The scales and biases are named after the tensor's name less its last
    seven characters (MLX's reading of ``.weight``), and need a last dimension
    that is a multiple of 32."""
    for name in ("w", "abcdefghij", "x.weight"):
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(_gguf([], [(name, (2, 32), 8, _q_blocks(8, 2, 32, 1))]))
        ours, theirs = mx.load(str(path)), real_mx.load(str(path))
        assert sorted(ours) == sorted(theirs) and all(same_array(ours[k], theirs[k]) for k in ours)
    path = tmp_path / "odd.gguf"
    path.write_bytes(_gguf([], [("w.weight", (32, 2), 8, _q_blocks(8, 2, 32, 1))]))
    with pytest.raises(RuntimeError):
        real_mx.load(str(path))
    with pytest.raises(RuntimeError, match=r"last dimension of 2, not a multiple of 32") as info:
        mx.load(str(path))
    assert str(path) in str(info.value)


@needs_mlx
def test_bfloat16_tensors_load_as_float16_as_in_mlx(tmp_path):
    values = [1.0, -3.140625, 1e5, 65536.0, 1e-6, -0.0, math.inf, 2.0**-30]
    raw = mx.array(values, mx.bfloat16)
    data = b"".join(struct.pack("<f", v)[2:] for v in raw.tolist())
    path = tmp_path / "bf.gguf"
    path.write_bytes(_gguf([], [("b", (2, 4), 30, data)]))
    ours, theirs = mx.load(str(path))["b"], real_mx.load(str(path))["b"]
    assert ours.dtype == mx.float16 and same_array(ours, theirs)
    assert ours.tolist()[0][:2] == [1.0, -3.140625] and ours.tolist()[0][2] == math.inf


@needs_mlx
def test_other_metadata_types_as_mlx_reads_them(tmp_path):
    pairs = [("t", 7, b"\x01"), ("f", 6, struct.pack("<f", 0.5)),
             ("bools", 9, struct.pack("<IQ", 7, 3) + b"\x01\x00\x01"),
             ("i64", 11, struct.pack("<q", -(2**40))),
             ("u64s", 9, struct.pack("<IQ", 10, 2) + struct.pack("<2Q", 2**63, 1))]
    path = tmp_path / "m.gguf"
    path.write_bytes(_gguf(pairs, []))
    ours = mx.load(str(path), return_metadata=True)
    theirs = real_mx.load(str(path), return_metadata=True)
    assert ours[0] == theirs[0] == {}
    _assert_same_metadata(ours[1], theirs[1])
    # a float64 value loads as float32; MLX steps over only 4 of its 8 bytes
    # (and so misreads what follows): mlxref reads the 8
    path.write_bytes(_gguf([("d", 12, struct.pack("<d", 0.1)), ("s", 8, _string("after")),
                            ("ds", 9, struct.pack("<IQ", 12, 2) + struct.pack("<2d", 1.5, -2.0))],
                           []))
    _, meta = mx.load(str(path), return_metadata=True)
    assert same_array(meta["d"], mx.array(0.1, mx.float32)) and meta["s"] == "after"
    assert same_array(meta["ds"], mx.array([1.5, -2.0], mx.float32))


def _k_blocks(kind, n, seed):
    """``n`` random Q2_K (10) or Q6_K (14) super-blocks with modest float16 scales."""
    rng = random.Random(seed)
    size, scales_at = {10: (84, (80, 82)), 14: (210, (208,))}[kind]
    out = b""
    for _ in range(n):
        block = bytearray(rng.randrange(256) for _ in range(size))
        for at in scales_at:
            block[at:at + 2] = struct.pack("<e", rng.choice([0.01, -0.5, 1.0, 3e-4, 2.5]))
        out += bytes(block)
    return out


@needs_mlx
@pytest.mark.parametrize("kind", [10, 14], ids=["Q2_K", "Q6_K"])
def test_k_quants_load_as_float16_bit_for_bit_with_mlx(tmp_path, kind):
    path = tmp_path / "k.gguf"
    path.write_bytes(_gguf([], [("t", (2, 256), kind, _k_blocks(kind, 2, kind)),
                                ("short", (300,), kind, _k_blocks(kind, 2, 1))]))
    ours, theirs = mx.load(str(path)), real_mx.load(str(path))
    assert ours["t"].dtype == mx.float16 and ours["short"].shape == (300,)
    assert all(same_array(ours[k], theirs[k]) for k in ("t", "short"))


@needs_mlx
def test_q4_k_is_refused_because_mlx_reads_it_wrongly(tmp_path):
    """GGML's Q4_K: 8 sub-blocks of 32 weights, each 32 bytes holding two sub-blocks
    (low nibbles: sub-block 2i, high nibbles: 2i + 1), each with its own 6-bit
    scale and min. MLX (through gguflib) scales the high nibbles with sub-block
    2i's scale and min."""
    scales = bytes([1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8])  # sub-block j: scale j + 1, min 0
    block = struct.pack("<2e", 1.0, 1.0) + scales + bytes([0x11] * 128)  # every quant 1
    path = tmp_path / "q4k.gguf"
    path.write_bytes(_gguf([], [("t", (256,), 12, block)]))
    theirs = real_mx.load(str(path))["t"].tolist()
    assert theirs[32:64] == [1.0] * 32  # GGML: 2.0 (sub-block 1's scale)
    with pytest.raises(NotImplementedError, match="which MLX reads wrongly") as info:
        mx.load(str(path))
    assert str(path) in str(info.value)


def test_tensor_types_mlx_does_not_read(tmp_path):
    for kind, name, error in ((27, "i64", RuntimeError), (28, "f64", RuntimeError),
                              (6, "q5_0", RuntimeError), (12, "q4_k", NotImplementedError)):
        data = bytes(8 * 256) if kind in (27, 28) else bytes(256)
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(_gguf([], [("t", (256,), kind, data)]))
        with pytest.raises(error, match=rf"tensor 't' is of type {name}") as info:
            mx.load(str(path))
        assert str(path) in str(info.value)
        if real_mx is not None and error is RuntimeError:
            with pytest.raises(RuntimeError, match="gguf_tensor_to_f16 failed"):
                real_mx.load(str(path))


# --- errors ----------------------------------------------------------------------------


def _meta_errors(lib):
    return [
        ({"k": lib.array([[1, 2]])}, RuntimeError,
         "[save_gguf] Cannot save arrays with more than one dimension."),
        ({"k": lib.array([], lib.int32)}, RuntimeError, "[save_gguf] Cannot save empty arrays."),
        ({"k": lib.array(1, lib.float16)}, ValueError,
         "[save_gguf] array type float16 not support for metadata."),
        ({"k": lib.array([1], lib.bfloat16)}, ValueError,
         "[save_gguf] array type bfloat16 not support for metadata."),
        ({"k": lib.array(1j)}, ValueError,
         "[save_gguf] array type complex64 not support for metadata."),
        ({"k": lib.array([1.0], lib.float64)}, ValueError,
         "[save_gguf] array type float64 not support for metadata."),
    ]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_mlx_errors_for_bad_metadata_and_dtypes(tmp_path, lib):
    for meta, error, message in _meta_errors(lib):
        with pytest.raises(error) as info:
            lib.save_gguf(str(tmp_path / "m"), {"a": lib.ones(2)}, meta)
        assert str(info.value) == message
    for dtype in ("bool_", "uint8", "uint16", "uint32", "uint64", "int64", "float64",
                  "bfloat16", "complex64"):
        with pytest.raises(RuntimeError) as info:
            lib.save_gguf(str(tmp_path / "d"), {"a": lib.ones(2, getattr(lib, dtype))})
        assert str(info.value) == f"[save_gguf] dtype {dtype.rstrip('_')} is not supported"
    # values that are not an array, a str or a list of str: MLX's std::bad_cast
    for bad in ({"k": 3}, {"k": 2.5}, {"k": [1, 2]}, {"k": ["a", 1]}, {"k": True}, {1: "x"}):
        with pytest.raises(RuntimeError):
            lib.save_gguf(str(tmp_path / "b"), {"a": lib.ones(2)}, bad)
    with pytest.raises(RuntimeError):
        lib.save_gguf(str(tmp_path / "b"), {"a": 3})


def test_bad_types_are_named_clearly(tmp_path):
    with pytest.raises(RuntimeError, match=r"metadata value of 'k' is a int, not an array"):
        mx.save_gguf(str(tmp_path / "b"), {"a": mx.ones(2)}, {"k": 3})
    with pytest.raises(RuntimeError, match=r"\[save_gguf\] 'a' is a int, not an mlx array"):
        mx.save_gguf(str(tmp_path / "b"), {"a": 3})
    with pytest.raises(ValueError, match="at most 8"):  # MLX writes it, then aborts reading it
        mx.save_gguf(str(tmp_path / "b"), {"a": mx.ones((1,) * 9)})
    assert not (tmp_path / "b.gguf").exists()  # nothing half-written


def _damaged(tmp_path):
    """(name, bytes, what the message says) for damaged GGUF files."""
    mx.save_gguf(str(tmp_path / "good"), {"w": mx.array([[1.0, 2.0], [3.0, 4.0]])},
                 {"name": "model", "ids": mx.array([1, 2, 3])})
    good = (tmp_path / "good.gguf").read_bytes()
    n = len(good)
    return [
        ("empty.gguf", b"", "not a GGUF file"),
        ("magic.gguf", b"GGML" + good[4:], "not a GGUF file"),
        ("v1.gguf", good[:4] + struct.pack("<I", 1) + good[8:], "GGUF version is 1"),
        ("header.gguf", good[:10], "the GGUF header extends past the end of the file"),
        ("key.gguf", good[:30], "extends past the end of the file"),
        ("data.gguf", good[:n - 3], "tensor 'w' extends past the end of the file"),
        ("nodata.gguf", good[:n - 16], "tensor 'w' extends past the end of the file"),
        ("count.gguf", good[:16] + struct.pack("<Q", 99) + good[24:], "extends past the end"),
        ("type.gguf", _gguf([("k", 13, b"")], []), "unknown value type 13"),
        ("nested.gguf", _gguf([("k", 9, struct.pack("<IQ", 9, 1))], []), "array of arrays"),
        ("ttype.gguf", _gguf([], [("t", (1,), 31, b"\0")]), "unknown tensor type 31"),
        ("ndim.gguf", _gguf([], [("t", (1,) * 9, 0, b"\0" * 4)]), "9 dimensions"),
        ("align.gguf", _gguf([("general.alignment", 4, struct.pack("<I", 0))], []),
         "general.alignment is 0"),
        ("offset.gguf", _gguf([], [("t", (1,), 0, b"\0" * 4)])[:-4], "extends past"),
        ("utf8.gguf", b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 1) + b"\xff" + struct.pack("<IB", 7, 1),
         "not UTF-8"),
    ]


def test_damaged_files_get_one_clear_error_naming_the_file(tmp_path):
    for name, raw, says in _damaged(tmp_path):
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises((RuntimeError, ValueError)) as info:
            mx.load(str(path))
        message = str(info.value)
        assert message.startswith(f"[load_gguf] Cannot load {path}: ") and says in message, (
            name, message)
        assert info.value.__cause__ is None and info.value.__suppress_context__
    # every cut of a good file fails cleanly
    good = (tmp_path / "good.gguf").read_bytes()
    for cut in range(len(good)):
        (tmp_path / "cut.gguf").write_bytes(good[:cut])
        with pytest.raises((RuntimeError, ValueError), match=r"\[load_gguf\] Cannot load"):
            mx.load(str(tmp_path / "cut.gguf"))


@needs_mlx
def test_real_mlx_rejects_truncated_tensor_data_too(tmp_path):
    """Those of the damaged files MLX checks (others crash it or load wrongly)."""
    for name, raw, _ in _damaged(tmp_path):
        if name in ("empty.gguf", "magic.gguf", "data.gguf", "nodata.gguf", "type.gguf"):
            (tmp_path / name).write_bytes(raw)
            with pytest.raises(RuntimeError):
                real_mx.load(str(tmp_path / name))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_paths_extensions_and_format(tmp_path, lib):
    lib.save_gguf(str(tmp_path / "x.bin"), {"a": lib.array([1.0, 2.0])})  # .gguf appended
    lib.save_gguf(pathlib.Path(tmp_path / "p.gguf"), {"a": lib.array([3.0])}, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.gguf", "x.bin.gguf"]
    (tmp_path / "x.bin.gguf").rename(tmp_path / "x.weights")
    assert lib.load(str(tmp_path / "x.weights"), format="gguf")["a"].tolist() == [1.0, 2.0]
    assert lib.load(pathlib.Path(tmp_path / "p.gguf"))["a"].tolist() == [3.0]
    lib.save_gguf(str(tmp_path / "e"), {})
    assert (tmp_path / "e.gguf").read_bytes() == b"GGUF" + struct.pack("<IQQ", 3, 0, 0)
    assert lib.load(str(tmp_path / "e.gguf"), return_metadata=True) == ({}, {})
