"""Python values in and out of arrays (mlxref/core/convert.py; MLX's python/src/convert.cpp):
mx.array from lists, arrays, buffers, ndarrays and NumPy scalars, ``from_dlpack``,
``np.array(a)`` through ``__array__``, NumPy operands in ops, and mlxref not
importing NumPy itself; each against real MLX (values, dtypes, errors).

Each behaviour is run on mlxref and, where installed, on real MLX (``LIBS``):
the same call must give the same dtype, shape and values. Where mlxref must
differ (``copy=False``: its elements are a Python list), the test says so.
"""

import array as pyarray
import math
import re
import subprocess
import sys

import pytest

import mlxref
import mlxref.core as mx
from support import (assert_both, assert_same_array, assert_same_error, both, flat, needs_mlx,
                     real_mx)

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


@needs_mlx
def test_the_array_namespace_has_what_mlxs_has():
    xp = mx.array(1.0).__array_namespace__()
    for name in ("result_type", "can_cast", "isdtype", "vecdot", "divmod", "unflatten"):
        assert hasattr(xp, name) and hasattr(real_mx, name), name


# --- the version ---------------------------------------------------------------------


def test_version_is_mlxrefs_own_in_mlxs_form():
    assert mx.__version__ == mlxref.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", mx.__version__)


# --- construction from lists -----------------------------------------------------------

_X = [1.0]  # stands for an array argument, made in each library

_LISTS = [
    [[0, 1], ["hello", 1]],
    ["hello", 1],
    [[0, 1], [[0, 1], 1]],
    [[[], []], [[]], [[], []]],
    [[[], []], [[1.0, 2.0], []], [[], []]],
    [[1, 2], [3]],
    [[1, 2], 3],
    [1, [2, 3]],
    [[1], []],
    [[], 1],
    [[1], [[2]]],
    [[1, 2], (3, 4)],
    [(1, 2), [3, 4]],
    ((1, 2), [3, 4]),
    [[True, False], [1, 3], [2, 4.0]],
    [2**40, 1],
    [None],
    [b"a"],
    [range(3)],
    [[], []],
    [[[], []], [[], []], [[], []]],
]


@needs_mlx
@pytest.mark.parametrize("value", _LISTS)
def test_lists_build_and_fail_as_in_mlx(value):
    assert_both(lambda m: m.array(value))


@needs_mlx
@pytest.mark.parametrize("value", ["hello", None, {1: 2}, {1, 2}, range(3), object])
def test_values_of_other_types_fail_as_in_mlx(value):
    assert_same_error(lambda m: m.array(value))


@needs_mlx
def test_a_class_defined_in_python_is_named_with_its_module():
    class Thing:
        pass

    kind, message = assert_same_error(lambda m: m.array([Thing()]))
    assert kind is ValueError and ".Thing received" in message
    assert_same_error(lambda m: m.array(m.float32))


def test_a_tuple_first_among_other_elements_is_a_clear_error():
    # MLX reads every element as a tuple there and raises std::bad_cast.
    with pytest.raises(RuntimeError, match="first element is a tuple"):
        mx.array([(1, 2), 3])


def _mixed(m, kind):
    x = m.array([1.0]).astype(m.bfloat16)
    y = m.array([1, 2], m.int8)
    cases = {
        "array then scalar": lambda: m.array([x, 1.0]),
        "scalar then array": lambda: m.array([1.0, x]),
        "ragged arrays": lambda: m.array([m.array([1, 2]), m.array([1, 2, 3])]),
        "array then longer list": lambda: m.array([y, [1, 2, 3]]),
        "list then shorter array": lambda: m.array([[1, 2, 3], y]),
        "array and list": lambda: m.array([y, [3, 400]]),
        "list and array": lambda: m.array([[3, 4.5], y]),
        "two dtypes": lambda: m.array([y, m.array([3, 4], m.uint8)]),
        "0-d and int": lambda: m.array([m.array(1), 2]),
        "int and 0-d float": lambda: m.array([2, m.array(1.5)]),
        "wide int": lambda: m.array([m.array(2), 2**40]),
        "bool array": lambda: m.array([m.array([True]), [2]]),
        "nested": lambda: m.array([[x, [2.0]], [[3.0], x]]),
        "inner 0-d": lambda: m.array([[m.array(1), 2], [3, 4.5]]),
        "with dtype": lambda: m.array([m.array([1, 2]), [1.5, 2]], m.int8),
        "empty": lambda: m.array([[], m.array([])]),
        "bad element": lambda: m.array([m.array([1.0]), "a"]),
    }
    return cases[kind]()


@needs_mlx
@pytest.mark.parametrize("kind", [
    "array then scalar", "scalar then array", "ragged arrays", "array then longer list",
    "list then shorter array", "array and list", "list and array", "two dtypes", "0-d and int",
    "int and 0-d float", "wide int", "bool array", "nested", "inner 0-d", "with dtype", "empty",
    "bad element"])
def test_lists_holding_arrays_as_in_mlx(kind):
    assert_both(lambda m: _mixed(m, kind))


@needs_mlx
@pytest.mark.parametrize("x_t", ["bool_", "uint16", "int64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("y_t", ["uint8", "int32", "float32"])
def test_a_list_of_arrays_is_their_stack(x_t, y_t):
    def build(m):
        x, y = m.array([1.0], getattr(m, x_t)), m.array([2.0], getattr(m, y_t))
        return [m.array([x, y]), m.stack([x, y])]

    ours, theirs = both(build)
    assert_same_array(ours[0], theirs[0])
    assert_same_array(ours[0], ours[1])


def test_a_list_of_arrays_stays_in_the_graph():
    g = mx.grad(lambda x: (3 * mx.array([x, mx.array([2.0])])).sum())(mx.array([1.0]))
    assert g.tolist() == [3.0]


# --- construction from buffers -----------------------------------------------------------


def _buffers():
    floats = pyarray.array("f", [1.5, -2.5, 3.0, 4.0, 5.0, 6.0])
    return {
        "bytes": b"Hello",
        "empty bytes": b"",
        "bytearray": bytearray([1, 2, 255]),
        "memoryview": memoryview(b"ab"),
        "strided": memoryview(b"abcdef")[::2],
        "2-d": memoryview(b"abcd").cast("B", (2, 2)),
        "2-d floats": memoryview(floats).cast("B").cast("f", (2, 3)),
        "bools": memoryview(b"\x01\x00\x01").cast("?"),
        "f": floats,
        "d": pyarray.array("d", [1.5, 1e300]),
        "b": pyarray.array("b", [1, -2]),
        "H": pyarray.array("H", [1, 65535]),
        "i": pyarray.array("i", [-(2**31), 7]),
        "I": pyarray.array("I", [2**32 - 1]),
        "l": pyarray.array("l", [-(2**40)]),
        "q": pyarray.array("q", [2**62]),
        "Q": pyarray.array("Q", [2**64 - 1]),
        "u": pyarray.array("u", "ab"),
    }


@needs_mlx
@pytest.mark.parametrize("name", list(_buffers()))
def test_buffers_read_as_in_mlx(name):
    assert_both(lambda m: m.array(_buffers()[name]))


@needs_mlx
@pytest.mark.parametrize("name", ["bytes", "d", "bools", "2-d floats"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool_", "float16"])
def test_buffers_with_a_dtype_as_in_mlx(name, dtype):
    assert_both(lambda m: m.array(_buffers()[name], getattr(m, dtype)))


def test_bytes_of_an_array_round_trip_through_a_buffer():
    a = mx.array([[1, -2], [3, 4]], mx.int16)
    back = mx.array(memoryview(bytes(a)).cast("h", (2, 2)))
    assert back.dtype is mx.int16 and back.tolist() == a.tolist()


# --- from_dlpack and __dlpack__ -------------------------------------------------------------

_DLPACK = {
    "float32": lambda m: m.from_dlpack(np.arange(3, dtype=np.float32)),
    "float64": lambda m: m.from_dlpack(np.array([1.5, 2.0])),
    "uint64": lambda m: m.from_dlpack(np.array([1, 2**64 - 1], dtype=np.uint64)),
    "transposed": lambda m: m.from_dlpack(np.arange(12, dtype=np.int32).reshape(3, 4).T),
    "stepped": lambda m: m.from_dlpack(np.arange(20, dtype=np.int32)[2:10:2]),
    "broadcast": lambda m: m.from_dlpack(np.broadcast_to(np.array([7], np.int32), (3,))),
    "scalar": lambda m: m.from_dlpack(np.float32(3)),
    "copy=True": lambda m: m.from_dlpack(np.arange(3, dtype=np.float32), copy=True),
    "copy=False": lambda m: m.from_dlpack(np.arange(3, dtype=np.float32), copy=False),
    "mlx array": lambda m: m.from_dlpack(m.array([1, 2])),
    "mlx array, copy=False": lambda m: m.from_dlpack(m.array([1, 2]), copy=False),
    "negative strides": lambda m: m.from_dlpack(np.arange(5, dtype=np.float32)[::-1]),
    "strings": lambda m: m.from_dlpack(np.array(["a"])),
    "big-endian": lambda m: m.from_dlpack(np.array([1, 2], dtype=">i8")),
    "bytes": lambda m: m.from_dlpack(b"abc"),
    "list": lambda m: m.from_dlpack([1, 2]),
    "copy of a wrong type": lambda m: m.from_dlpack(np.arange(2), copy="x"),
}


@needs_mlx
@pytest.mark.parametrize("name", list(_DLPACK))
def test_from_dlpack_as_in_mlx(name):
    assert_both(_DLPACK[name])


@needs_mlx
def test_from_dlpack_of_an_array_is_a_leaf_off_the_graph_as_in_mlx():
    def grads(m):
        x = m.array([1.0, 2.0])
        return [m.grad(lambda x: (m.from_dlpack(x) * x).sum())(x).tolist(),
                m.grad(lambda x: m.from_dlpack(x).sum())(x).tolist()]

    assert grads(mx) == grads(real_mx) == [[1.0, 2.0], [0.0, 0.0]]


def test_from_dlpack_copies_so_later_writes_are_not_seen():
    x = np.arange(3, dtype=np.float32)
    y = mx.from_dlpack(x)
    x += 10
    assert y.tolist() == [0.0, 1.0, 2.0]


def test_from_dlpack_of_another_librarys_capsule_is_a_clear_error():
    class Tensor:
        def __dlpack__(self, **kwargs):
            return object()

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(NotImplementedError, match=r"\[from_dlpack\].*Tensor"):
        mx.from_dlpack(Tensor())


@needs_mlx
def test_dlpack_device_is_the_cpu_as_in_mlxs_cpu_build():
    assert mx.array([1]).__dlpack_device__() == real_mx.array([1]).__dlpack_device__() == (1, 0)


def test_dlpack_export_is_a_clear_buffer_error():
    with pytest.raises(BufferError, match=r"__dlpack__.*Python list"):
        mx.array([1.0]).__dlpack__()
    with pytest.raises(BufferError):
        np.from_dlpack(mx.array([1.0]))


# --- complex numbers ---------------------------------------------------------------


def test_python_complex_numbers_make_complex64_arrays():
    a = mx.array([[1, 2.5], [3j, True]])
    assert a.dtype is mx.complex64 and a.shape == (2, 2)
    assert a.tolist() == [[1 + 0j, 2.5 + 0j], [3j, 1 + 0j]]
    assert all(type(v) is complex for v in flat(a.tolist()))
    b = mx.array(1 + 2j)
    assert b.item() == 1 + 2j and type(b.item()) is complex
    assert complex(b) == 1 + 2j
    with pytest.raises(TypeError):
        float(b)
    # each part is stored as a float32
    c = mx.array(0.1 + 0.2j).item()
    assert c.real == mx.float32.cast(0.1) and c.imag == mx.float32.cast(0.2)


@needs_mlx
def test_construction_and_conversion_match_mlx():
    for build in [
        lambda m: m.array([1, 2.5, 3j]),
        lambda m: m.array([True, 1j]),
        lambda m: m.array([[1 + 2j, 3], [4.5, 1e10j]]),
        lambda m: m.array(2, dtype=m.complex64),
        lambda m: m.array([1 + 2j]).real,
        lambda m: m.array([1 + 2j]).imag,
        lambda m: m.array([1 + 2j]).conj(),
        lambda m: m.real(m.array([1, 2])),
        lambda m: m.imag(m.array([1.0, 2.0])),
        lambda m: m.conj(m.array([True])),
        lambda m: m.zeros((2,), m.complex64),
        lambda m: m.ones((2,), dtype=m.complex64),
        lambda m: m.full((2,), 1j),
        lambda m: m.full((2,), 1 + 1j, dtype=m.float32),
        lambda m: m.arange(0, 1, 0.5, dtype=m.complex64),
        lambda m: m.linspace(0, 1, 3, dtype=m.complex64),
        lambda m: m.eye(2, dtype=m.complex64),
        lambda m: m.zeros_like(m.array([1j])),
        lambda m: m.array([1.0, 2.0])[m.array([0j])],
    ]:
        assert_both(build, rtol=1e-5, atol=1e-6)
    for build in [  # errors
        lambda m: m.array([1j]) & m.array([1j]),
        lambda m: ~m.array([1j]),
        lambda m: [1, 2][m.array(0j)],
        lambda m: m.arange(0, 3, 1j),
    ]:
        assert both(build) is None
    for m in LIBS:
        assert m.array([[1 + 2j, 3j]]).tolist() == [[1 + 2j, 3j]]
        with pytest.raises(TypeError, match="complex"):
            int(m.array(1 + 2j))
