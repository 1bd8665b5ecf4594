"""mx.array from lists, arrays and buffers; from_dlpack; a[mask] = v; and the
small ops divmod, degrees, radians, trunc, unflatten and vecdot, each against
real MLX (values, dtypes, errors, and the transforms' results)."""

import array as pyarray
import gc
import math
import re

import pytest

import mlxref
import mlxref.core as mx
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx, real_mx

np = pytest.importorskip("numpy")


def _exact(ours, theirs):
    """Same shape, dtype and elements, a zero's sign and nan included."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
    a, b = ours.reshape(-1).tolist(), theirs.reshape(-1).tolist()
    assert [repr(x) for x in a] == [repr(x) for x in b], f"got {a}, MLX gives {b}"


def _same(build, exact=True):
    """``build(lib)`` gives the same array (or list of arrays), or the same error."""
    pair = both(build)
    if pair is None:
        return
    ours, theirs = pair
    if not isinstance(ours, (list, tuple)):
        ours, theirs = [ours], [theirs]
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if exact:
            _exact(o, t)
        else:
            assert_same_as_mlx(o, t)


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
    _same(lambda m: m.array(value))


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
    _same(lambda m: _mixed(m, kind))


@needs_mlx
@pytest.mark.parametrize("x_t", ["bool_", "uint16", "int64", "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("y_t", ["uint8", "int32", "float32"])
def test_a_list_of_arrays_is_their_stack(x_t, y_t):
    def build(m):
        x, y = m.array([1.0], getattr(m, x_t)), m.array([2.0], getattr(m, y_t))
        return [m.array([x, y]), m.stack([x, y])]

    ours, theirs = both(build)
    _exact(ours[0], theirs[0])
    _exact(ours[0], ours[1])


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
    _same(lambda m: m.array(_buffers()[name]))


@needs_mlx
@pytest.mark.parametrize("name", ["bytes", "d", "bools", "2-d floats"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool_", "float16"])
def test_buffers_with_a_dtype_as_in_mlx(name, dtype):
    _same(lambda m: m.array(_buffers()[name], getattr(m, dtype)))


def test_bytes_of_an_array_round_trip_through_a_buffer():
    a = mx.array([[1, -2], [3, 4]], mx.int16)
    back = mx.array(memoryview(bytes(a)).cast("h", (2, 2)))
    assert back.dtype is mx.int16 and back.tolist() == a.tolist()


# --- a[mask] = v ------------------------------------------------------------------------


def _set(a, index, value):
    a[index] = value
    return a


_MASKS = {
    "numpy 3-d, leading 1": lambda m: _set(m.arange(1000).reshape(10, 10, 10),
                                           np.zeros((1, 10, 10), bool), 0),
    "numpy 3-d, trailing 1": lambda m: _set(m.arange(1000).reshape(10, 10, 10),
                                            np.zeros((10, 10, 1), bool), 0),
    "numpy too long": lambda m: _set(m.arange(30).reshape(10, 3), np.zeros((11,), bool), 0),
    "numpy rows": lambda m: _set(m.arange(6).reshape(2, 3), np.array([True, False]), 9),
    "numpy 2-d": lambda m: _set(m.array([[1.0, 2], [3, 4]]), np.array([[True, False], [False, True]]),
                                m.array([7.0, 8.0])),
    "list": lambda m: _set(m.array([1.0, 2, 3]), [True, False, True], m.array([5.0, 6.0])),
    "0-d array": lambda m: _set(m.array([1.0, 2, 3]), m.array(True), 5.0),
    "True": lambda m: _set(m.array([1.0, 2, 3]), True, 5.0),
    "False": lambda m: _set(m.array([1.0, 2, 3]), False, 5.0),
    "numpy int array": lambda m: _set(m.arange(6), np.array([0, 2]), 9),
    "numpy 0-d int": lambda m: _set(m.arange(6), np.array(2), 7),
    "numpy int64": lambda m: _set(m.arange(6), np.int64(2), 7),
    "get with numpy ints": lambda m: m.arange(6)[np.array([0, 2])],
}


@needs_mlx
@pytest.mark.parametrize("name", list(_MASKS))
def test_boolean_masks_and_numpy_indices_as_in_mlx(name):
    _same(_MASKS[name])


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
    _same(_DLPACK[name])


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


# --- divmod ---------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_divmod_of_floats_as_in_mlx(dtype):
    a = [7.5, -7.5, 1.0, -1.0, 0.0, -0.0, math.inf, 3.0, 1.0, -1.0, 5.0, -5.0, 1e-5, 100.0]
    b = [2.0, 2.0, 0.0, math.inf, -1.0, 1.0, 1.0, -0.0, math.inf, -math.inf, -2.5, 2.5, -6e4, 0.3]

    def build(m):
        d = getattr(m, dtype)
        return m.divmod(m.array(a, d), m.array(b, d))

    if dtype == "float64":  # real MLX computes float64 on the CPU stream only
        build_ = build

        def build(m):  # noqa: F811
            with m.stream(m.cpu):
                out = build_(m)
                m.eval(out)
            return out

    _same(build)


@needs_mlx
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "bool_"])
def test_divmod_of_integers_as_in_mlx(dtype):
    a = [7, -7, 7, -7, 0, 5, 1, 127]
    b = [2, 2, -2, -2, 3, 1, 1, -1]
    if dtype == "bool_":
        a, b = [True, False, True, False], [True, True, False, False]
    _same(lambda m: m.divmod(m.array(a, getattr(m, dtype)), m.array(b, getattr(m, dtype))))


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m: m.divmod(m.array([1, 2, 3]), 2.0),
    lambda m: m.divmod(5, m.array([1, 2, 3])),
    lambda m: m.divmod(1, 2),
    lambda m: m.divmod(m.array([[7], [-8]], m.int8), m.array([2, -3], m.int16)),
    lambda m: m.divmod(m.array([1, 2], m.float16), m.array([3], m.bfloat16)),
    lambda m: m.divmod(m.array([-128], m.int8), m.array([-1], m.int8)),
    lambda m: m.divmod(m.array([1j]), 2),
    lambda m: m.divmod(m.array([1, 2]), m.array([1, 2, 3])),
    lambda m: m.divmod("a", m.array([1, 2])),
    lambda m: m.divmod([1, 2], m.array([1, 2])),
])
def test_divmod_promotes_broadcasts_and_fails_as_in_mlx(case):
    _same(case)


def test_divmod_is_one_node_with_two_outputs_returned_as_a_list():
    out = mx.divmod(mx.array([7, 8]), 3)
    assert isinstance(out, list) and len(out) == 2
    q, r = out
    assert q.primitive() is r.primitive() and type(q.primitive()).__name__ == "DivMod"
    mx.eval(q)
    assert r.is_available() and r.tolist() == [1, 2]


def test_divmod_where_mlxs_kernel_dies_is_a_clear_error():
    # MLX: SIGFPE. floor_divide and remainder give 0 and a; divmod divides.
    with pytest.raises(ZeroDivisionError, match=r"\[divmod\] Integer division by zero in int8"):
        mx.eval(mx.divmod(mx.array([1, 2], mx.int8), mx.array([1, 0], mx.int8)))
    with pytest.raises(OverflowError, match=r"\[divmod\] Integer overflow"):
        mx.eval(mx.divmod(mx.array([-(2**31)]), mx.array([-1])))


@needs_mlx
def test_divmod_gradients_are_floor_divides_and_remainders():
    # MLX's DivMod vjp and jvp give zeros for the remainder too (mlx/primitives.cpp);
    # mlxref gives its derivatives, which are MLX's own rules for % and //.
    xs, ys = [3.0, -2.0, 7.5], [2.0, 3.0, -2.0]

    def grads(m, use_divmod):
        x, y = m.array(xs), m.array(ys)

        def f(x, y):
            if use_divmod:
                q, r = m.divmod(x, y)
            else:
                q, r = x // y, x % y
            return (3 * q + r * r).sum()

        return list(m.grad(f, argnums=(0, 1))(x, y))

    ours = grads(mx, True)
    theirs = grads(real_mx, False)
    for o, t in zip(ours, theirs):
        assert_same_as_mlx(o, t)
    ours_jvp = mx.jvp(lambda x: mx.divmod(x, mx.array(ys)), [mx.array(xs)],
                      [mx.array([1.0, 2.0, 3.0])])[1]
    theirs_jvp = real_mx.jvp(lambda x: [x // real_mx.array(ys), x % real_mx.array(ys)],
                             [real_mx.array(xs)], [real_mx.array([1.0, 2.0, 3.0])])[1]
    for o, t in zip(ours_jvp, theirs_jvp):
        assert_same_as_mlx(o, t)


@needs_mlx
def test_divmod_under_vmap_is_floor_divide_and_remainder_under_vmap():
    # MLX's DivMod::vmap gives one batch axis for two outputs, and breaks.
    a = [[5.0, 6.0], [7.0, -8.0]]
    b = [[2.0, 3.0], [4.0, 5.0]]
    ours = mx.vmap(lambda x, y: tuple(mx.divmod(x, y)), in_axes=(0, 1), out_axes=(0, 1))(
        mx.array(a), mx.array(b))
    theirs = real_mx.vmap(lambda x, y: (x // y, x % y), in_axes=(0, 1), out_axes=(0, 1))(
        real_mx.array(a), real_mx.array(b))
    for o, t in zip(ours, theirs):
        _exact(o, t)


def test_an_unevaluated_output_frees_its_inputs_at_once():
    # Two outputs of one node used to refer to each other, a cycle that kept the
    # input alive until Python's cycle collector ran (MLX's multi_output_leak test).
    gc.disable()
    try:
        base = mx.get_active_memory()
        a = mx.zeros((1000,))
        mx.eval(a)
        b, c = mx.divmod(a, a)
        del a, b, c
        assert mx.get_active_memory() == base
    finally:
        gc.enable()


def test_a_dropped_sibling_is_made_again_when_needed():
    q, r = mx.divmod(mx.array([7.0, -7.0]), 2.0)
    del r
    assert [o.shape for o in q.outputs()] == [(2,), (2,)]
    assert q.outputs()[1].tolist() == [1.0, 1.0]
    assert q.tolist() == [3.0, -4.0]
    pieces = mx.split(mx.arange(6.0), 3)
    middle = pieces[1]
    del pieces
    g = mx.grad(lambda x: (mx.split(x, 3)[1] ** 2).sum())(mx.arange(6.0))
    assert g.tolist() == [0.0, 0.0, 4.0, 6.0, 0.0, 0.0] and middle.tolist() == [2.0, 3.0]


# --- degrees, radians, trunc --------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("op", ["degrees", "radians"])
@pytest.mark.parametrize("case", [
    lambda m: m.array([1, 2, -3]),
    lambda m: m.array([1.0, 2.5], m.float16),
    lambda m: m.array([180.0, -90.0], m.bfloat16),
    lambda m: m.array([1.0 + 1j]),
    lambda m: m.array([True, False]),
    lambda m: 3,
    lambda m: 3.0,
    lambda m: [3.0],
])
def test_degrees_and_radians_as_in_mlx(op, case):
    _same(lambda m: getattr(m, op)(case(m)))


@needs_mlx
def test_degrees_of_float64_and_gradients_as_in_mlx():
    def build(m):
        with m.stream(m.cpu):
            out = m.radians(m.array([180.0, 1.0], m.float64))
            m.eval(out)
        return out

    _same(build)
    _same(lambda m: m.grad(lambda x: m.degrees(x).sum())(m.array([1.5, -2.0])))
    _same(lambda m: m.grad(lambda x: m.radians(x * x).sum())(m.array([1.5, -2.0])))


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m: m.trunc(m.array([1.5, -1.5, -0.0, 0.5, -0.5, math.inf, -2.0])),
    lambda m: m.trunc(m.array([1.7, -1.7], m.float16)),
    lambda m: m.trunc(m.array([1, -1])),
    lambda m: m.trunc(m.array([True])),
    lambda m: m.trunc(m.array([1j])),
    lambda m: m.trunc(2.5),
    lambda m: m.trunc([2.5]),
    lambda m: m.grad(lambda x: m.trunc(x).sum())(m.array([1.5, -0.5])),
])
def test_trunc_as_in_mlx(case):
    _same(case)


# --- unflatten ----------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m: m.unflatten(m.arange(12).reshape(6, 2), 0, (2, 3)),
    lambda m: m.unflatten(m.arange(12).reshape(6, 2), -2, (-1, 3)),
    lambda m: m.unflatten(m.arange(12).reshape(2, 6), 1, [3, 1, -1]),
    lambda m: m.unflatten(m.arange(6), 0, (6,)),
    lambda m: m.unflatten(m.zeros((0, 2)), 0, (0, 5)),
    lambda m: m.unflatten(m.zeros((6, 2)), 0, ()),
    lambda m: m.unflatten(m.zeros((6, 2)), 2, (2, 3)),
    lambda m: m.unflatten(m.zeros((6, 2)), -3, (2, 3)),
    lambda m: m.unflatten(m.zeros(()), 0, (1,)),
    lambda m: m.unflatten(m.zeros((6, 2)), 0, (-1, -1)),
    lambda m: m.unflatten(m.zeros((6, 2)), 0, (4, -1)),
    lambda m: m.unflatten(m.zeros((6, 2)), -2, (4, 2)),
    lambda m: m.unflatten([1, 2], 0, [2, 1]),
    lambda m: m.unflatten(m.zeros((6,)), 0, (2, 3.0)),
    lambda m: m.unflatten(m.zeros((6,)), 0, 6),
])
def test_unflatten_as_in_mlx(case):
    _same(case)


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m: m.grad(lambda x: (m.unflatten(x, 0, (2, 3)) ** 2).sum())(m.arange(12.0).reshape(6, 2)),
    lambda m: m.vmap(lambda x: m.unflatten(x, 0, (2, 3)), in_axes=1)(m.arange(12.0).reshape(6, 2)),
    lambda m: m.vmap(lambda x: m.unflatten(x, -1, (2, 1)))(m.arange(12.0).reshape(3, 2, 2)),
    lambda m: m.vmap(lambda x: m.unflatten(x, 0, (2, 2)), in_axes=2)(m.arange(12.0).reshape(4, 1, 3)),
    lambda m: m.jvp(lambda x: m.unflatten(x, 1, (2, 3)), [m.ones((1, 6))],
                    [m.arange(6.0).reshape(1, 6)])[1][0],
])
def test_unflatten_under_the_transforms_as_in_mlx(case):
    _same(case)


def test_unflatten_where_mlx_dies_or_makes_negative_sizes_is_a_clear_error():
    with pytest.raises(ValueError, match=r"\[unflatten\] Cannot infer the -1"):
        mx.unflatten(mx.zeros((0, 2)), 0, (0, -1))  # MLX divides by zero: SIGFPE
    with pytest.raises(ValueError, match=r"Cannot unflatten axis 0 with size 6 into shape \(-2,-3\)"):
        mx.unflatten(mx.zeros((6,)), 0, (-2, -3))  # MLX makes shape (-2, -3)


# --- vecdot and the array API namespace ---------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m: m.vecdot(m.array([[1.0, 2, 3], [4, 5, 6]]), m.array([[1.0, 0, 2]])),
    lambda m: m.vecdot(m.array([[1.0, 2, 3], [4, 5, 6]]), m.array([[1.0, 2, 3], [4, 5, 6]]), axis=0),
    lambda m: m.vecdot(m.array([1, 2]), m.array([3, 4])),
    lambda m: m.vecdot(m.array([1 + 2j, 2]), m.array([3, 4j])),
    lambda m: m.vecdot(m.array([True, False]), m.array([True, True])),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([1.0, 0, 2])),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([1.0, 0, 2]), axis=0),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([1.0, 0, 2]), axis=1),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array(1.0)),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([[1.0, 2, 3]]), axis=2),
    lambda m: m.vecdot(m.array([[1.0, 2, 3]]), m.array([[1.0, 2, 3]]), axis=-3),
    lambda m: m.vecdot(m.array([1, 2]), m.array([3, 4, 5])),
    lambda m: m.vecdot([1, 2], [3, 4]),
    lambda m: m.grad(lambda a: m.vecdot(a, m.array([2.0, -1.0])))(m.array([1.0, 3.0])),
])
def test_vecdot_as_in_mlx(case):
    _same(case, exact=False)


@needs_mlx
def test_the_array_namespace_has_what_mlxs_has():
    xp = mx.array(1.0).__array_namespace__()
    for name in ("result_type", "can_cast", "isdtype", "vecdot", "divmod", "unflatten"):
        assert hasattr(xp, name) and hasattr(real_mx, name), name
