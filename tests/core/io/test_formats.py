"""Saving and loading .npy, .npz and safetensors (mlxref/core/io/formats.py; MLX's mlx/io/load.cpp
and safetensors.cpp), between mlxref, real MLX and NumPy (GGUF: tests/core/io/test_gguf.py);
a .npy or safetensors loaded by path is opened at load and read at eval; the keys come in
MLX's order; an fp8 tensor loads as its uint8 codes.

Every dtype goes each way: written by mlxref and read by MLX (and NumPy), written
by MLX (and NumPy) and read by mlxref. The values are compared exactly
(their ``repr``, so nan, -0.0 and the Python types count). Then the
arguments MLX's ``save``/``load`` take (paths, pathlib, file objects, the
extensions they append, ``format=``, ``return_metadata=``), their errors, and
damaged files, which get one error naming the file and what is wrong.
"""

import gc
import io
import math
import os
import pathlib
import struct
import tempfile
import zipfile

import pytest

import mlxref.core as mx
from mlxref.core.transforms.tape import cycle_collector_paused

from support import needs_mlx, real_mx, same_array
from mlxref.core.array import from_data

VALUES = {
    "bool_": [[True, False], [False, True]],
    "uint8": [[0, 255], [7, 128]], "uint16": [[1, 65535], [0, 3]],
    "uint32": [[1, 2**32 - 1], [0, 5]], "uint64": [[1, 2**62 + 5], [0, 9]],
    "int8": [[-128, 127], [0, -1]], "int16": [[-32768, 32767], [0, 1]],
    "int32": [[-(2**31), 2**31 - 1], [0, 6]], "int64": [[-(2**62), 2**62 + 3], [0, -7]],
    "float16": [[1.5, -65504.0], [math.inf, 6e-8]],
    "bfloat16": [[1.5, 3e38], [-math.inf, 1e-40]],
    "float32": [[1e-45, math.nan], [-0.0, 3.4e38]],
    "float64": [[1e300, 0.1], [-5e-324, math.nan]],
    "complex64": [[1 + 2j, -3j], [0, complex(math.inf, -0.0)]],
}
NAMES = list(VALUES)
NO_NUMPY = {"bfloat16"}
NO_SAFETENSORS = {"float64"}


def _mine(name):
    return mx.array(VALUES[name], getattr(mx, name))


@pytest.mark.parametrize("name", NAMES)
def test_npy_round_trip(tmp_path, name):
    a = _mine(name).T  # a transposed (lazy) array saves its values
    mx.save(tmp_path / "a", a)
    assert same_array(mx.load(str(tmp_path / "a.npy")), a)


@pytest.mark.parametrize("name", NAMES)
def test_npy_header_follows_the_format(tmp_path, name):
    mx.save(tmp_path / "a.npy", _mine(name))
    raw = (tmp_path / "a.npy").read_bytes()
    assert raw[:8] == b"\x93NUMPY\x01\x00"
    (n,) = struct.unpack("<H", raw[8:10])
    assert (10 + n) % 64 == 0 and raw[10 + n - 1:10 + n] == b"\n"
    header = raw[10:10 + n].decode("latin1")
    descr = "<V2" if name == "bfloat16" else None
    if descr is None:
        np = pytest.importorskip("numpy")
        descr = np.dtype(name.rstrip("_")).str
    assert header.startswith(f"{{'descr': '{descr}', 'fortran_order': False, 'shape': (2, 2), }}")
    assert len(raw) == 10 + n + 4 * _mine(name).itemsize


@needs_mlx
@pytest.mark.parametrize("name", NAMES)
def test_npy_between_mlxref_and_mlx(tmp_path, name):
    mx.save(tmp_path / "ours", _mine(name))
    real_mx.save(str(tmp_path / "theirs"), real_mx.array(VALUES[name], getattr(real_mx, name)))
    assert same_array(real_mx.load(str(tmp_path / "ours.npy")), _mine(name))
    assert same_array(mx.load(tmp_path / "theirs.npy"), _mine(name))
    # MLX writes a transposed array column-major (fortran_order True): read back transposed
    real_mx.save(str(tmp_path / "t.npy"), real_mx.array(VALUES[name], getattr(real_mx, name)).T)
    assert same_array(mx.load(tmp_path / "t.npy"), _mine(name).T)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in NO_NUMPY])
def test_npy_and_npz_between_mlxref_and_numpy(tmp_path, name):
    np = pytest.importorskip("numpy")
    a = _mine(name)
    mx.save(tmp_path / "a.npy", a)
    n = np.load(tmp_path / "a.npy")
    assert n.dtype == np.dtype(name.rstrip("_")) and repr(n.tolist()) == repr(a.tolist())
    np.save(tmp_path / "n.npy", n)
    np.save(tmp_path / "f.npy", np.asfortranarray(n))
    np.savez_compressed(tmp_path / "n.npz", n, named=n)
    assert same_array(mx.load(tmp_path / "n.npy"), a) and same_array(mx.load(tmp_path / "f.npy"), a)
    z = mx.load(tmp_path / "n.npz")
    assert sorted(z) == ["arr_0", "named"] and same_array(z["arr_0"], a) and same_array(
        z["named"], a)
    mx.savez(tmp_path / "m", a, named=a)
    with np.load(tmp_path / "m.npz") as z:
        assert repr(z["arr_0"].tolist()) == repr(a.tolist()) == repr(z["named"].tolist())


def test_big_endian_and_scalar_and_empty_npy(tmp_path):
    np = pytest.importorskip("numpy")
    np.save(tmp_path / "b.npy", np.array([[1, -2]], ">i4"))
    assert same_array(mx.load(tmp_path / "b.npy"), mx.array([[1, -2]]))
    for a in (mx.array(2.5), mx.zeros((0, 3)), mx.zeros((2, 0, 1), mx.int8)):
        mx.save(tmp_path / "s.npy", a)
        assert same_array(mx.load(tmp_path / "s.npy"), a)
        assert np.load(tmp_path / "s.npy").shape == a.shape


@needs_mlx
def test_npz_between_mlxref_and_mlx(tmp_path):
    ours = {n: _mine(n) for n in NAMES}
    mx.savez(tmp_path / "a", *ours.values(), extra=mx.array(1))
    mx.savez_compressed(str(tmp_path / "c.npz"), **ours)
    with zipfile.ZipFile(tmp_path / "c.npz") as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}
    loaded = real_mx.load(str(tmp_path / "a.npz"))
    assert sorted(loaded) == sorted([f"arr_{i}" for i in range(len(NAMES))] + ["extra"])
    assert all(same_array(loaded[f"arr_{i}"], ours[n]) for i, n in enumerate(NAMES))
    loaded = real_mx.load(str(tmp_path / "c.npz"))
    assert all(same_array(loaded[n], ours[n]) for n in NAMES)
    real_mx.savez_compressed(str(tmp_path / "r"),
                             **{n: real_mx.array(VALUES[n], getattr(real_mx, n)) for n in NAMES})
    loaded = mx.load(tmp_path / "r.npz")
    assert all(same_array(loaded[n], ours[n]) for n in NAMES)


@needs_mlx
def test_safetensors_between_mlxref_and_mlx(tmp_path):
    names = [n for n in NAMES if n not in NO_SAFETENSORS]
    ours = {n: _mine(n) for n in names}
    mx.save_safetensors(tmp_path / "a", ours, metadata={"k": "v", "x": ""})
    arrays, meta = real_mx.load(str(tmp_path / "a.safetensors"), return_metadata=True)
    assert meta == {"k": "v", "x": ""} and all(same_array(arrays[n], ours[n]) for n in names)
    real_mx.save_safetensors(str(tmp_path / "r"),
                             {n: real_mx.array(VALUES[n], getattr(real_mx, n)) for n in names},
                             metadata={"m": "1"})
    arrays, meta = mx.load(tmp_path / "r.safetensors", return_metadata=True)
    assert meta == {"m": "1"} and all(same_array(arrays[n], ours[n]) for n in names)
    assert mx.load(tmp_path / "r.safetensors").keys() == arrays.keys()


def test_safetensors_layout(tmp_path):
    mx.save_safetensors(str(tmp_path / "a.safetensors"),
                        {"w": mx.array([1.0, 2.0]), "b": mx.array([1], mx.bfloat16)})
    raw = (tmp_path / "a.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    import json

    header = json.loads(raw[8:8 + n])
    assert header == {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                      "b": {"dtype": "BF16", "shape": [1], "data_offsets": [8, 10]}}
    assert raw[8 + n:] == struct.pack("<2f", 1.0, 2.0) + b"\x80\x3f"


@pytest.mark.parametrize("lib", [mx] + ([real_mx] if real_mx else []), ids=lambda m: m.__name__)
def test_files_objects_paths_and_extensions(tmp_path, lib):
    a = lib.array([1.0, 2.0])
    lib.save(str(tmp_path / "x.txt"), a)  # .npy is appended
    lib.savez(str(tmp_path / "z.bin"), a=a)
    lib.save_safetensors(str(tmp_path / "s"), {"a": a})
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["s.safetensors", "x.txt.npy", "z.bin.npz"]
    lib.save(pathlib.Path(tmp_path / "p"), a)
    assert lib.load(pathlib.Path(tmp_path / "p.npy")).tolist() == [1.0, 2.0]
    for save, fmt in ((lambda f: lib.save(f, a), "npy"), (lambda f: lib.savez(f, a=a), "npz"),
                      (lambda f: lib.save_safetensors(f, {"a": a}), "safetensors")):
        f = io.BytesIO()
        save(f)
        f.seek(0)
        out = lib.load(f, format=fmt)
        assert (out if fmt == "npy" else out["a"]).tolist() == [1.0, 2.0]
    with open(tmp_path / "x.txt.npy", "rb") as f:  # a named file object: format from its name
        assert lib.load(f).tolist() == [1.0, 2.0]
    with pytest.raises(AttributeError, match="name"):
        lib.load(io.BytesIO(b""))
    assert lib.load(str(tmp_path / "s.safetensors"), return_metadata=True)[1] == {}


ERRORS = [
    (lambda L, d: L.load(d + "/nope.npy"), RuntimeError, "[load] Failed to open file"),
    (lambda L, d: L.load(d + "/x.foo"), ValueError, "[load] Unknown file format foo"),
    (lambda L, d: L.load(d + "/x"), ValueError, "[load] Could not infer file format from extension"),
    (lambda L, d: L.load(d + "/x.npy", format="bar"), ValueError, "[load] Unknown file format bar"),
    (lambda L, d: L.load(d + "/x.npy", return_metadata=True), ValueError,
     "[load] metadata not supported for format npy"),
    (lambda L, d: L.load(d + "/x.npz", return_metadata=True), ValueError,
     "[load] metadata not supported for format npz"),
    (lambda L, d: L.load(3), ValueError,
     "[load] Input must be a file-like object opened in binary mode, or string"),
    (lambda L, d: L.load(3, format="npy"), ValueError,
     "[load_npy] Input must be a file-like object, or string"),
    (lambda L, d: L.save(3, L.array(1)), ValueError, "[save] Input must be a file-like object, or string"),
    (lambda L, d: L.save(d + "/q", [1, 2]), TypeError, "save(): incompatible function arguments"),
    (lambda L, d: L.savez(d + "/q", L.array(1), arr_0=L.array(2)), ValueError,
     "[savez] Cannot use un-named variables and keyword arr_0"),
    (lambda L, d: L.save_safetensors(d + "/q", [L.array(1)]), TypeError,
     "save_safetensors(): incompatible function arguments"),
    (lambda L, d: L.save_safetensors(d + "/q", {"a": L.array(1)}, metadata={"k": 1}), ValueError,
     "[save_safetensors] Metadata must be a dictionary with string keys and values"),
    (lambda L, d: L.save_safetensors(d + "/q", {"a": L.array([1.0], L.float64)}), RuntimeError,
     "[save_safetensors] received invalid dtype."),
    (lambda L, d: L.load(d + "/nope.gguf"), ValueError, "[load_gguf] Failed to open "),
    (lambda L, d: L.load(io.BytesIO(b"GGUF"), format="gguf"), ValueError,
     "[load_gguf] Input must be a string"),
    (lambda L, d: L.save_gguf(io.BytesIO(), {"a": L.array(1.0)}), ValueError,
     "[save_gguf] Input must be a string"),
    (lambda L, d: L.save_gguf(d + "/q", [L.array(1.0)]), TypeError,
     "save_gguf(): incompatible function arguments"),
    (lambda L, d: L.from_fp8(L.array([1.0])), ValueError,
     "[from_fp8] Input must have type uint8 but x.dtype() == float32."),
    (lambda L, d: L.from_fp8(L.array([1], L.uint8), L.int32), ValueError,
     "[from_fp8] Only real floating types are supported but dtype == int32."),
    (lambda L, d: L.from_fp8(L.array([1], L.uint8), dtype="float32"), TypeError,
     "from_fp8(): incompatible function arguments"),
    (lambda L, d: L.to_fp8(L.array([1, 2])), ValueError,
     "[to_fp8] Only real floating types are supported but x.dtype() == int32."),
    (lambda L, d: L.to_fp8(L.array([1j])), ValueError,
     "[to_fp8] Only real floating types are supported but x.dtype() == complex64."),
    (lambda L, d: L.to_fp8(1.0), TypeError, "to_fp8(): incompatible function arguments"),
]


@pytest.mark.parametrize("lib", [mx] + ([real_mx] if real_mx else []), ids=lambda m: m.__name__)
@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_mlx_errors_for_bad_arguments(tmp_path, lib, case):
    call, error, message = ERRORS[case]
    with pytest.raises(error) as info:
        call(lib, str(tmp_path))
    assert str(info.value).startswith(message)


def test_not_arrays_are_clear_errors(tmp_path):
    """MLX raises ``std::bad_cast`` for these."""
    with pytest.raises(RuntimeError, match=r"\[savez\] arr_0 is a list, not an mlx array"):
        mx.savez(str(tmp_path / "q"), [1])
    with pytest.raises(RuntimeError, match=r"\[save_safetensors\] 'a' is a int, not an mlx array"):
        mx.save_safetensors(str(tmp_path / "q"), {"a": 1})


def _damaged(tmp_path):
    """(file name, bytes, exception, what the message says) for damaged files."""
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    mx.save(tmp_path / "good.npy", a)
    npy = (tmp_path / "good.npy").read_bytes()
    mx.savez(tmp_path / "good", a=a)
    npz = (tmp_path / "good.npz").read_bytes()
    mx.save_safetensors(tmp_path / "good", {"a": a})
    st = (tmp_path / "good.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", st[:8])
    wrong_offsets = st[:8] + st[8:8 + n].replace(b"[0,16]", b"[0,12]") + st[8 + n:]
    return [
        ("cut.npy", npy[:-3], RuntimeError, "header promises 16 bytes of data but the file holds 13"),
        ("head.npy", npy[:20], RuntimeError, "header should be"),
        ("magic.npy", b"garbage!" * 4, RuntimeError, "not a .npy file"),
        ("empty.npy", b"", RuntimeError, "not a .npy file"),
        ("hdr.npy", npy[:10] + b"{'descr': [}" + npy[22:], RuntimeError, "header is not a dict"),
        ("c16.npy", npy.replace(b"'<f4'", b"'<U1'"), ValueError, "'<U1' is not one MLX reads"),
        ("cut.npz", npz[:-30], ValueError, "not a readable zip"),
        ("junk.npz", b"PK\x03\x04junk", ValueError, "not a readable zip"),
        ("member.npz", _zip_with(b"\x93NUMPY\x01\x00"), RuntimeError, "member 'a.npy'"),
        ("cut.safetensors", st[:-2], RuntimeError, "beyond the 14 bytes of data"),
        ("head.safetensors", st[:20], RuntimeError, f"JSON header is {n} bytes long but the file is only 20"),
        ("tiny.safetensors", b"\x01", RuntimeError, "shorter than a safetensors header"),
        ("json.safetensors", struct.pack("<Q", 3) + b"{x}", RuntimeError, "JSON header does not parse"),
        ("list.safetensors", struct.pack("<Q", 2) + b"[]", RuntimeError, "not an object"),
        ("offs.safetensors", wrong_offsets, RuntimeError, "invalid data offsets (0, 12): expecting 16"),
        ("dtype.safetensors", st.replace(b'"F32"', b'"F64"'), RuntimeError, "'F64'"),
    ]


def _zip_with(member):
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w") as z:
        z.writestr("a.npy", member)
    return f.getvalue()


def test_damaged_files_get_one_clear_error_naming_the_file(tmp_path):
    for name, raw, error, says in _damaged(tmp_path):
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises(error) as info:
            mx.eval(mx.load(str(path)))  # a .npy cut short in its data fails at eval
        message = str(info.value)
        assert str(path) in message and says in message, (name, message)
        assert info.value.__cause__ is None and info.value.__suppress_context__


@needs_mlx
def test_real_mlx_rejects_the_same_damaged_files(tmp_path):
    """The expected failures are failures in MLX too (there, some only at eval), of
    the same exception type; except a garbled .npy header, which MLX reads by
    character positions and so loads silently (mlxref parses it)."""
    for name, raw, error, _ in _damaged(tmp_path):
        if name == "hdr.npy":
            continue
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises(error):
            real_mx.eval(real_mx.load(str(path)))


def test_symbolic_arrays_are_not_saved(tmp_path):
    sympy = pytest.importorskip("sympy")
    a = from_data([sympy.Symbol("x")], (1,), mx.float32)
    with pytest.raises(ValueError, match="symbolic"):
        mx.save(tmp_path / "s.npy", a)


# --- a .npy loaded by path is read at eval ------------------------------------------


def _cut_npy(tmp_path, name, lib):
    """A .npy whose header promises 16 float32 but whose data is gone."""
    lib.save(str(tmp_path / name), lib.arange(16, dtype=lib.float32))
    raw = (tmp_path / name).read_bytes()
    (tmp_path / name).write_bytes(raw[:-64])
    return str(tmp_path / name)


@pytest.mark.parametrize("lib", [mx] + ([real_mx] if real_mx else []), ids=lambda m: m.__name__)
def test_a_npy_cut_short_fails_at_eval_not_at_load(tmp_path, lib):
    path = _cut_npy(tmp_path, "cut.npy", lib)
    out = lib.load(path, stream=lib.cpu)  # the header is whole: no error yet
    assert out.shape == (16,) and out.dtype == lib.float32
    with pytest.raises(RuntimeError) as info:
        lib.eval(out)
    if lib is mx:
        assert str(info.value) == (f"[load_npy] Cannot load {path}: its header promises 64 "
                                   "bytes of data but the file holds 0 (truncated?).")
    # ... also when another stream consumes it, and the failure does not stick
    streams = lib.new_stream(lib.cpu), lib.new_stream(lib.cpu)
    out = lib.add(lib.load(path, stream=streams[0]), 1.0, stream=streams[1])
    with pytest.raises(RuntimeError):
        lib.eval(out)
    lib.synchronize()
    for s in streams:
        # MLX keeps the failed read's error on its stream and raises it again
        # at the next call that waits for every stream (a clear_cache in a
        # later test of the same worker): take it here.
        try:
            lib.synchronize(s)
        except RuntimeError:
            pass
    lib.save(str(tmp_path / "ok.npy"), lib.ones(2))  # later loads are unaffected
    assert lib.load(str(tmp_path / "ok.npy")).tolist() == [1.0, 1.0]


def test_a_safetensors_file_cut_after_load_fails_at_eval(tmp_path):
    """Its offsets are checked against the file at load (as in MLX); a file cut
    between load and eval fails at eval with one error naming it."""
    mx.save_safetensors(tmp_path / "s", {"x": mx.ones(8)})
    path = str(tmp_path / "s.safetensors")
    x = mx.load(path)["x"]
    raw = (tmp_path / "s.safetensors").read_bytes()
    (tmp_path / "s.safetensors").write_bytes(raw[:-8])
    with pytest.raises(RuntimeError, match=r"^\[load_safetensors\] Cannot load .*s\.safetensors: "
                       r"32 bytes of data at byte \d+ were wanted but the file holds 24"):
        mx.eval(x)
    with pytest.raises(RuntimeError, match="beyond the 24 bytes of data"):
        mx.load(path)


@pytest.mark.parametrize("lib", [mx] + ([real_mx] if real_mx else []), ids=lambda m: m.__name__)
def test_a_cut_header_or_a_file_object_fails_at_load(tmp_path, lib):
    path = _cut_npy(tmp_path, "cut.npy", lib)
    with open(path, "rb") as f:  # a file object is read (and evaluated) at once
        with pytest.raises(RuntimeError):
            lib.load(f)
    (tmp_path / "head.npy").write_bytes((tmp_path / "cut.npy").read_bytes()[:30])
    with pytest.raises(RuntimeError):
        lib.load(str(tmp_path / "head.npy"))


def test_a_loaded_npy_or_safetensors_is_a_load_node_until_eval(tmp_path):
    mx.save(tmp_path / "a.npy", mx.arange(256, dtype=mx.float32))
    mx.save_safetensors(tmp_path / "s", {"x": mx.ones(8, mx.int16), "y": mx.array([2.5])})
    gc.collect()  # no other test's arrays freed mid-measurement
    with cycle_collector_paused():
        before = mx.get_active_memory()
        a = mx.load(tmp_path / "a.npy")
        s = mx.load(tmp_path / "s.safetensors")
        for x in (a, s["x"], s["y"]):
            assert not x.is_available() and type(x.primitive()).__name__ == "Load"
            assert x.inputs() == ()
        assert mx.get_active_memory() == before  # no bytes until read
        mx.eval(a, s)
        assert mx.get_active_memory() == before + 1024 + 16 + 4
    assert a.tolist() == list(range(256))
    assert s["x"].tolist() == [1] * 8 and s["y"].tolist() == [2.5]
    # Fortran order: the column-major bytes are read, then transposed
    np = pytest.importorskip("numpy")
    np.save(tmp_path / "f.npy", np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3)))
    assert mx.load(tmp_path / "f.npy").tolist() == [[0, 1, 2], [3, 4, 5]]
    # transforms see a constant
    assert mx.grad(lambda x: (x * mx.load(tmp_path / "a.npy")[:3]).sum())(
        mx.ones(3)).tolist() == [0.0, 1.0, 2.0]


LIBS = [mx] + ([real_mx] if real_mx else [])


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_arrays_outlive_the_folder_they_were_loaded_from(lib):
    """``load`` opens the file: weights loaded from a temporary folder that is
    then removed still evaluate (MLX's docs load weights so)."""
    with tempfile.TemporaryDirectory() as folder:
        lib.save(os.path.join(folder, "w.npy"), lib.arange(4, dtype=lib.float32))
        lib.save_safetensors(os.path.join(folder, "w"), {"a": lib.array([1.5, 2.5]),
                                                         "b": lib.array([7], lib.int16)})
        npy = lib.load(os.path.join(folder, "w.npy"))
        st = lib.load(os.path.join(folder, "w.safetensors"))
    assert npy.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert st["a"].tolist() == [1.5, 2.5] and st["b"].tolist() == [7]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
def test_eval_reads_the_file_load_opened_as_it_is_then(tmp_path, lib, fmt):
    """Replaced by another file of the same name: the opened file's bytes.
    Rewritten in place: its new bytes (MLX reads the data at eval)."""
    path = str(tmp_path / f"w.{fmt}")

    def save(values):
        if fmt == "npy":
            lib.save(path, lib.array(values))
        else:
            lib.save_safetensors(path, {"w": lib.array(values)})

    def load():
        return lib.load(path) if fmt == "npy" else lib.load(path)["w"]

    save([1.0, 2.0])
    replaced = load()
    os.remove(path)
    save([3.0, 4.0])
    rewritten = load()
    with open(path, "r+b") as f:
        f.seek(-4, os.SEEK_END)
        f.write(struct.pack("<f", 9.0))
    assert replaced.tolist() == [1.0, 2.0]
    assert rewritten.tolist() == [3.0, 9.0]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc")
def test_the_file_is_closed_once_its_arrays_are_evaluated_or_dropped(tmp_path):
    mx.save_safetensors(tmp_path / "s", {"x": mx.ones(3), "y": mx.zeros(2)})
    path = str(tmp_path / "s.safetensors")

    def open_files():  # this file's descriptors: others (a worker's pipes) come and go
        found = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                found += os.readlink(f"/proc/self/fd/{fd}") == path
            except OSError:  # closed while listed
                pass
        return found

    before = open_files()
    assert before == 0
    loaded = mx.load(path)
    assert open_files() == before + 1  # one for the file, shared by its arrays
    mx.eval(loaded["x"])
    assert open_files() == before + 1
    mx.eval(loaded["y"])
    assert open_files() == before
    doubled = mx.load(path)["x"] * 2  # dropped unevaluated, but read by a node
    assert open_files() == before + 1
    mx.eval(doubled)
    assert open_files() == before
    mx.load(path)
    assert open_files() == before


# --- the order of the keys -----------------------------------------------------------

# Enough names to make MLX's map grow (13, then 29 buckets) and a saved .npz
# and its load order differ from the names' order.
KEYS = [f"layers.{i}.{part}" for i in range(9) for part in ("weight", "bias")] + ["é", "arr"]


@pytest.mark.mlx
@needs_mlx
def test_safetensors_keys_and_metadata_come_in_mlxs_order(tmp_path):
    for lib in (mx, real_mx):
        path = str(tmp_path / f"{lib.__name__}.safetensors")
        lib.save_safetensors(path, {k: lib.array([i]) for i, k in enumerate(KEYS)},
                             {k: "v" for k in reversed(KEYS)})
        ours, theirs = mx.load(path, return_metadata=True), real_mx.load(path, return_metadata=True)
        assert list(ours[0]) == list(theirs[0]) and list(ours[1]) == list(theirs[1])
        assert list(ours[0]) != sorted(KEYS) and list(ours[0]) != KEYS


@pytest.mark.mlx
@needs_mlx
def test_npz_members_are_written_and_loaded_in_mlxs_order(tmp_path):
    for lib in (mx, real_mx):
        path = str(tmp_path / f"{lib.__name__}.npz")
        lib.savez(path, lib.array([0]), lib.array([1]), **{k: lib.array([2]) for k in KEYS})
        assert list(mx.load(path)) == list(real_mx.load(path))
    names = [zipfile.ZipFile(str(tmp_path / f"{lib.__name__}.npz")).namelist()
             for lib in (mx, real_mx)]
    assert names[0] == names[1]


# --- fp8 (e4m3) tensors in safetensors (to_fp8, from_fp8: primitives/test_quantized.py) ---


@needs_mlx
def test_f8_e4m3_safetensors_load_as_uint8_codes(tmp_path):
    codes = bytes([0x00, 0x7E, 0xFE, 0xB6, 0x2E, 0x83, 0xBA, 0x01])
    header = b'{"t":{"dtype":"F8_E4M3","shape":[2,4],"data_offsets":[0,8]}}'
    header += b" " * (-len(header) % 8)
    (tmp_path / "f8.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + codes)
    ours = mx.load(str(tmp_path / "f8.safetensors"))["t"]
    theirs = real_mx.load(str(tmp_path / "f8.safetensors"))["t"]
    assert ours.dtype == mx.uint8 and ours.tolist() == theirs.tolist() == [
        list(codes[:4]), list(codes[4:])]
    assert repr(mx.from_fp8(ours).tolist()) == repr(real_mx.from_fp8(theirs).tolist())
