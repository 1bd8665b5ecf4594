"""NumPy interop: ``mx.array(ndarray or NumPy scalar)``, ``np.array(a)`` through
``__array__``, NumPy operands in ops, and mlxref not importing NumPy itself.

Each behaviour is run on mlxref and, where installed, on real MLX (``LIBS``):
the same call must give the same dtype, shape and values. Where mlxref must
differ (``copy=False``: its elements are a Python list), the test says so.
"""

import math
import subprocess
import sys

import pytest

import mlxref.core as mx

from support import needs_mlx, real_mx

np = pytest.importorskip("numpy")

LIBS = [mx] + ([real_mx] if real_mx is not None else [])

# NumPy dtype -> the mlx dtype MLX gives an ndarray of it.
DTYPE_MAP = {
    "bool": "bool_", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "float16": "float16", "float32": "float32", "float64": "float32",
    "complex64": "complex64", "complex128": "complex64",
}
SAMPLES = {
    "bool": [True, False], "uint8": [0, 255], "uint16": [65535, 1], "uint32": [2**32 - 1, 7],
    "uint64": [2**64 - 1, 3], "int8": [-128, 127], "int16": [-32768, 5], "int32": [-(2**31), 9],
    "int64": [-(2**63), 2**63 - 1], "float16": [0.5, -65504.0], "float32": [1e-45, 3.5],
    "float64": [0.1, 1e30], "complex64": [1 + 2j, -1j], "complex128": [0.1 + 0.2j, 3],
}


def _dtype_name(d):
    return str(d).split(".")[-1]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", list(DTYPE_MAP))
def test_array_from_ndarray_maps_the_dtype_and_keeps_the_values(lib, name):
    nd = np.array(SAMPLES[name], dtype=name)
    a = lib.array(nd)
    assert a.dtype == getattr(lib, DTYPE_MAP[name]) and a.shape == (2,)
    # the values, as the mapped dtype holds them (float64 -> float32 rounds)
    want = nd.astype(np.dtype(_dtype_name(a.dtype).replace("bool_", "bool"))).tolist()
    got = a.tolist()
    assert [complex(v) for v in got] == [complex(v) for v in want] or got == want


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", list(DTYPE_MAP))
def test_array_from_numpy_scalar(lib, name):
    s = np.dtype(name).type(SAMPLES[name][1])
    a = lib.array(s)
    assert a.shape == () and a.dtype == getattr(lib, DTYPE_MAP[name])


def test_ndarray_dtype_and_values_match_mlx():
    if real_mx is None:
        pytest.skip("needs mlx")
    cases = [
        (np.array([1.5, -2.7, 1e40]), None), (np.array([1.5, -2.7]), "int32"),
        (np.array([300, -1]), "uint8"), (np.array([2**40]), "int32"),
        (np.array([1, 2]), "float16"), (np.array([0.1]), "float64"),
        (np.array([[1, 2, 3], [4, 5, 6]])[:, ::2], None), (np.arange(6).reshape(2, 3).T, None),
        (np.zeros((0, 3)), None), (np.array(5), None), (np.float32(2.5), "int32"),
        (np.array([1 + 2j]), "float32"),
    ]
    for nd, dt in cases:
        ours = mx.array(nd, dtype=getattr(mx, dt) if dt else None)
        theirs = real_mx.array(nd, dtype=getattr(real_mx, dt) if dt else None)
        assert ours.shape == theirs.shape and _dtype_name(ours.dtype) == _dtype_name(theirs.dtype)
        assert repr(ours.tolist()) == repr(theirs.tolist()), (nd, dt)


def test_big_endian_ndarray_keeps_its_values():
    """MLX raises std::bad_cast here; mlxref reads the values."""
    a = mx.array(np.array([1, -2], ">i4"))
    assert a.dtype == mx.int32 and a.tolist() == [1, -2]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_a_dimension_beyond_int32_is_mlx_overflow_error(lib):
    nd = np.lib.stride_tricks.as_strided(np.zeros(1, np.bool_), shape=(2**31,), strides=(0,))
    with pytest.raises(OverflowError) as info:
        lib.array(nd)
    assert str(info.value) == (
        "Shape dimension 2147483648 is outside the supported range [-2147483648, "
        "2147483647]. MLX currently uses 32-bit integers for shape dimensions.")


def test_unsupported_ndarray_dtype_is_a_clear_error():
    with pytest.raises(ValueError, match="dtype <U1"):
        mx.array(np.array(["a"]))
    with pytest.raises(ValueError, match="dtype object"):
        mx.array(np.array([{}], dtype=object))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", [n for n in DTYPE_MAP if n not in ("float64", "complex128")]
                         + ["float64_mlx"])
def test_np_array_of_an_array(lib, name):
    name = "float64" if name == "float64_mlx" else name
    mlx_name = "bool_" if name == "bool" else name
    values = {"uint64": [2**62 + 1, 3], "float32": [1.5, -2.0]}.get(name, SAMPLES[name])
    a = lib.array([values, values[::-1]], getattr(lib, mlx_name))
    for n in (np.array(a), np.asarray(a)):
        assert type(n) is np.ndarray and n.dtype == np.dtype(name) and n.shape == (2, 2)
        assert n.tolist() == a.tolist()
    n = np.array(a)
    assert n.flags.owndata and n.flags.writeable
    n[0, 0] = n[1, 0]  # a copy: the array does not change
    assert a.tolist()[0][0] == values[0]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_np_array_with_dtype_scalar_and_lazy(lib):
    a = lib.array([1.5, 2.5]) * 2  # unevaluated
    assert np.array(a, dtype=np.int32).tolist() == [3, 5]
    assert np.array(a, dtype=np.int32).dtype == np.int32
    assert np.array(lib.array(3.0)).shape == ()
    assert np.array(lib.array(True)).dtype == np.bool_
    assert np.array(a, copy=True).tolist() == [3.0, 5.0]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_bfloat16_to_numpy_is_a_value_error_naming_bfloat16(lib):
    with pytest.raises(ValueError, match="bfloat16"):
        np.array(lib.array([1.0], lib.bfloat16))


def test_copy_false_raises_as_numpy_2_requires():
    """MLX shares its buffer with NumPy; mlxref's elements are a Python list, so
    ``copy=False`` cannot be honoured and raises, as NumPy 2 asks."""
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.asarray(mx.array([1.0]), copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        mx.array([1.0]).__array__(copy=False)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_numpy_operands_in_ops(lib):
    i32, f16 = lib.array([1, 2]), lib.array([1, 2], lib.float16)
    # next to an array, a NumPy operand takes the array's dtype ...
    assert (i32 + np.float32(1.5)).dtype == lib.int32
    assert (i32 + np.float32(1.5)).tolist() == [2, 3]
    assert (i32 + np.array(3, np.int64)).dtype == lib.int32
    assert (f16 * np.array([2.0], np.float32)).dtype == lib.float16
    assert lib.maximum(i32, np.int64(2)).dtype == lib.int32
    # ... except a NumPy float64 scalar, a Python float: weakly typed
    assert (i32 + np.float64(1.5)).dtype == lib.float32
    assert (i32 + np.float64(1.5)).tolist() == [2.5, 3.5]
    # two NumPy operands keep their mapped dtypes
    out = lib.add(np.array([1.0]), np.array([2], np.int8))
    assert out.dtype == lib.float32 and out.tolist() == [3.0]
    assert math.isclose(lib.exp(np.array([1.0])).item(), math.e, rel_tol=1e-6)
    # NumPy on the left converts the array through __array__
    r = np.float32(1) + lib.array(1.0)
    assert type(r) is np.float32 and r == 2.0
    assert type(np.array([1.0]) + lib.array(1.0)) is np.ndarray


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_array_namespace_is_the_core_module(lib):
    assert lib.array([1.0]).__array_namespace__() is lib
    assert lib.array([1.0]).__array_namespace__(api_version=None) is lib


def test_mlxref_does_not_import_numpy():
    code = (
        "import sys, mlxref.core as mx, mlxref.nn, mlxref.utils\n"
        "a = mx.array([1.0, 2.0]) * 2; mx.eval(a); mx.grad(lambda x: (x * x).sum())(a)\n"
        "import io; f = io.BytesIO(); mx.save(f, a); f.seek(0); mx.load(f, format='npy')\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_numpy_scalars_in_lists_and_full(lib):
    pytest.importorskip("sympy")  # with SymPy loaded, a float subclass must still be a number
    a = lib.array([np.float64(1.5), 2])
    assert a.dtype == lib.float32 and a.tolist() == [1.5, 2.0]
    assert lib.array([np.float64(1.5)], lib.float16).tolist() == [1.5]
    assert (lib.array([1.0]) * np.float64(2)).tolist() == [2.0]
    assert lib.full((2,), np.float32(2.5)).tolist() == [2.5, 2.5]
    out = lib.full((2,), np.float32(2.5), lib.int32)
    assert out.dtype == lib.int32 and out.tolist() == [2, 2]
    out = lib.full((2,), np.float64(2.5), lib.int32)  # a Python float: stays float32
    assert out.dtype == lib.float32 and out.tolist() == [2.5, 2.5]
    assert lib.full((2,), np.int64(3)).dtype == lib.int64
