"""The array's methods, properties and operators that MLX code uses, print options,
constants, ``view`` and ``asarray``: each compared with real MLX."""

import math

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx
from test_comparisons import same

pytestmark = needs_mlx

ALL_DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
              "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


def _repr_same(program):
    ours, theirs = program(mx), program(real_mx)
    assert ours == theirs, f"mlxref: {ours!r}\nMLX:    {theirs!r}"


# --- the surface ---------------------------------------------------------------------


# What mlxref's array still lacks of MLX's, and why: other ops (issue 14),
# NumPy/DLPack interop, and `.at` (other parts of issue 13).
NOT_YET = {"cummax", "cummin", "cumprod", "logcumsumexp", "diag", "diagonal", "at",
           "__array__", "__dlpack__", "__dlpack_device__"}


def test_the_array_has_mlxs_methods():
    missing = set(dir(real_mx.array)) - set(dir(mx.array))
    assert missing <= NOT_YET, sorted(missing - NOT_YET)


def test_constants():
    for name in ("pi", "e", "inf", "euler_gamma"):
        ours, theirs = getattr(mx, name), getattr(real_mx, name)
        assert type(ours) is float and ours == theirs, name
    assert type(mx.nan) is float and math.isnan(mx.nan)
    assert mx.newaxis is None and real_mx.newaxis is None
    same(lambda M: M.array([1, 2])[M.newaxis, :, M.newaxis])


# --- print options -----------------------------------------------------------------


PRINTED = [
    lambda M: M.array([1.23456789, -2.5, math.nan, math.inf, -math.inf, 1e10, 1e-7]),
    lambda M: M.array([1 + 2.5j, 1 - 3j, complex(0, -0.0), complex(math.nan, math.nan)]),
    lambda M: M.array([1.5, 2.5, 65504], M.float16),
    lambda M: M.array(3.14159, M.bfloat16),
    lambda M: M.array([[0.1, 0.25], [1 / 3, 2.0]], M.float64),
    lambda M: M.array([True, False]),
    lambda M: M.array([1, -2], M.int8),
    lambda M: -M.array(math.nan),
]


@pytest.mark.parametrize("precision", [-1, 0, 1, 3, 10, -2])
def test_repr_with_each_precision(precision):
    try:
        for M in (mx, real_mx):
            M.set_printoptions(precision=precision)
        for build in PRINTED:
            _repr_same(lambda M: repr(build(M)))
        _repr_same(lambda M: M.get_printoptions().precision)
    finally:
        for M in (mx, real_mx):
            M.set_printoptions()


def test_printoptions_context_and_options_objects():
    x = [1.23456, 2.0]
    for M in (mx, real_mx):
        M.set_printoptions(precision=4)
    try:
        _repr_same(lambda M: repr(M.array(x)))

        def inside(M):
            with M.printoptions(precision=1) as ctx:
                return type(ctx).__name__, repr(M.array(x)), M.get_printoptions().precision

        _repr_same(inside)
        _repr_same(lambda M: (repr(M.array(x)), M.get_printoptions().precision))

        def options(M):
            got = M.get_printoptions()
            got.precision = 9  # a copy: the printer keeps its own
            made = M.PrintOptions(5), M.PrintOptions(precision=2), M.PrintOptions()
            return ([o.precision for o in made], M.get_printoptions().precision,
                    type(got).__name__)

        _repr_same(options)
        _repr_same(lambda M: (M.set_printoptions(True), M.get_printoptions().precision))
        _repr_same(lambda M: (M.set_printoptions(), M.get_printoptions().precision))
    finally:
        for M in (mx, real_mx):
            M.set_printoptions()


@pytest.mark.parametrize("call", [
    lambda M: M.set_printoptions(precision=1.5),
    lambda M: M.set_printoptions("a"),
    lambda M: M.set_printoptions(precision=2**40),
    lambda M: M.set_printoptions(3, 4),
    lambda M: M.set_printoptions(foo=3),
    lambda M: M.printoptions(precision="x"),
    lambda M: M.PrintOptions("a"),
    lambda M: setattr(M.PrintOptions(), "precision", "a"),
])
def test_printoptions_errors(call):
    def outcome(M):
        try:
            call(M)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return None

    _repr_same(outcome)
    assert mx.get_printoptions().precision == -1


# --- view ----------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["int32", "float32", "uint8", "float16", "complex64"])
@pytest.mark.parametrize("target", ALL_DTYPES)
def test_view_between_dtypes(source, target):
    values = {"int32": [[1, -2, 3, 1 << 30], [0, -1, 7, 2**31 - 1]],
              "float32": [[1.5, -0.0, math.inf, 3.0e-41], [2.0, -7.25, 1e30, 0.1]],
              "uint8": [[1, 2, 3, 4, 255, 0, 128, 63], [0, 0, 128, 63, 7, 7, 7, 7]],
              "float16": [[1.5, -0.0, 65504, 6e-8], [2.0, -7.25, math.inf, 0.1]],
              "complex64": [[1 + 2j, -3.5j], [0.25, 1e20 - 1j]]}[source]
    same(lambda M: M.array(values, getattr(M, source)).view(getattr(M, target)))
    same(lambda M: M.view(M.array(values, getattr(M, source)), getattr(M, target)))


def test_view_scalars_errors_and_identity():
    same(lambda M: M.view(M.array(1.0), M.int32))
    same(lambda M: M.view(1.5, M.uint32))
    same(lambda M: M.view(M.array(1.0), M.int16))
    same(lambda M: M.view(M.array([1, 2, 3], M.int16), M.int32))
    same(lambda M: M.view(M.array([-1, 2], M.int8), M.bool_))
    a = mx.array([1, 2])
    b = a.view(mx.int32)
    assert b is not a and b.id() == a.id()


def test_view_under_transforms():
    x = [[1, 2], [3, 4]]
    same(lambda M: M.vmap(lambda v: M.view(v, M.int16))(M.array(x)))
    same(lambda M: M.vmap(lambda v: M.view(v, M.int16), in_axes=1)(M.array(x)))
    same(lambda M: M.vmap(lambda v: M.view(v, M.int64))(M.array([[1, 2, 3, 4]] * 2)))
    same(lambda M: M.vmap(lambda v: M.view(v, M.uint32), in_axes=0)(M.array([1.0, 2.0])))
    # MLX defines no derivative for reinterpreted bits
    same(lambda M: M.grad(lambda v: M.view(v, M.int32).astype(M.float32).sum())(
        M.array([1.0])))
    same(lambda M: M.jvp(lambda v: M.view(v, M.uint32), [M.array([1.0])], [M.array([1.0])]))


# --- operators: in place, unary plus, the old division names --------------------------


def test_in_place_operators_rebind_the_array_object():
    def program(M):
        a = M.array([1, 2, 3])
        alias, before = a, a * 1
        a += 1
        a *= 3
        a -= M.array([1, 1, 1])
        a //= 2
        a %= 5
        a **= 2
        a |= 8
        a ^= 3
        a &= 14
        a <<= 2
        a >>= 1
        assert alias is a
        f = M.array([1.0, 2.0])
        f /= 4
        f += 0.5j  # the dtype follows the result
        m = M.array([[1.0, 2.0], [3.0, 4.0]])
        m @= M.array([[0.0, 1.0], [1.0, 0.0]])
        i = M.array([1, 2])
        i += 0.5  # an int32 array becomes float32
        return a, alias, before, f, m, i

    same(program)


@pytest.mark.parametrize("call", [
    lambda M: M.array([1, 2]).__itruediv__(2),
    lambda M: M.array([1, 2]).__iadd__("x"),
    lambda M: M.array([1.5]).__iand__(1),
    lambda M: M.array([1.5]).__ilshift__(1),
    lambda M: M.array([1, 2]).__ior__([1]),
    lambda M: M.array([1, 2]).__imatmul__(M.array([1, 2])),
    lambda M: M.array([1, 2]) + "x",
    lambda M: M.array([1, 2]) - [1],
    lambda M: M.array([1, 2]) <= (1, 2),
    lambda M: M.array([1, 2]) ** {1: 2},
    lambda M: M.array([1, 2]) ^ "x",
])
def test_operator_errors(call):
    same(call)


def test_equality_with_what_is_not_an_array():
    for other in ([1, 2], (1, 2), "x", {1: 2}):
        _repr_same(lambda M: (M.array([1, 2]) == other, M.array([1, 2]) != other))
    for M in (mx, real_mx):  # None is refused by both (each with its own message)
        with pytest.raises(TypeError):
            M.array([1]) == None  # noqa: E711,B015
    same(lambda M: M.array([1, 2]) == M.array([1, 3]))
    same(lambda M: M.array([1, 2]) != 2.0)


def test_unary_plus_and_old_division_names():
    same(lambda M: +M.array([1, -2]))
    same(lambda M: M.array([1, 2]).__div__(2))
    same(lambda M: M.array([1, 2]).__rdiv__(2))
    a = mx.array([1.0])
    b = +a
    assert b is not a and b.id() == a.id()


# --- methods and properties ------------------------------------------------------------


@pytest.mark.parametrize("name", ["log1p", "log2", "log10"])
def test_log_methods(name):
    same(lambda M: getattr(M.array([0.5, 1.0, 8.0, 100.0]), name)())
    same(lambda M: getattr(M.array([1, 16], M.int16), name)())
    same(lambda M: M.grad(lambda v: getattr(v, name)().sum())(M.array([0.5, 2.0])))


def test_matrix_transpose_property():
    same(lambda M: M.arange(6).reshape(1, 2, 3).mT)
    same(lambda M: M.arange(4).reshape(2, 2).mT)
    same(lambda M: M.array([1, 2]).mT)
    same(lambda M: M.grad(lambda v: (v.mT * M.array([[1.0, 2.0], [3.0, 4.0]])).sum())(
        M.zeros((2, 2))))


def test_bytes_format_and_namespace():
    for dtype in ALL_DTYPES:
        _repr_same(lambda M: bytes(M.array([1, 0, 3], getattr(M, dtype))))
    _repr_same(lambda M: bytes(M.array([[1.5, -2.25]], M.bfloat16)))
    _repr_same(lambda M: bytes(M.array([1 - 2j])))
    _repr_same(lambda M: f"{M.array(0.1)} {M.array(3):04d} {M.array(True)} {M.array(2.5):.3f}")
    _repr_same(lambda M: f"{M.array([1.5, 2])}")
    same(lambda M: format(M.array([1.0]), ".2f"))
    assert mx.array([1]).__array_namespace__() is mx
    same(lambda M: M.array([1]).__array_namespace__("2023.12"))


def test_itemsize_nbytes_and_scalar_conversions():
    for dtype in ALL_DTYPES:
        _repr_same(lambda M: (M.array([1, 2, 3], getattr(M, dtype)).itemsize,
                              M.array([[1, 2, 3]], getattr(M, dtype)).nbytes))
    _repr_same(lambda M: (complex(M.array(1 - 2j)), float(M.array(2.5, M.float16)),
                          int(M.array(7, M.uint8))))


# --- asarray -------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda M: M.asarray([1, 2]),
    lambda M: M.asarray([1, 2], M.float16),
    lambda M: M.asarray(2.5),
    lambda M: M.asarray(M.array([1, 2]), M.float32),
    lambda M: M.asarray([M.array(1), M.array(2)]),
    lambda M: M.asarray([1, 2], copy=False),
    lambda M: M.asarray(M.array([1, 2]), copy=False),
    lambda M: M.asarray(M.array([1, 2]), copy=True),
    lambda M: M.asarray(M.array([1, 2]), "x"),
])
def test_asarray(call):
    same(call)


def test_asarray_of_an_array_is_a_new_handle():
    a = mx.array([1, 2])
    for b in (mx.asarray(a), mx.asarray(a, copy=True)):
        assert b is not a
        b[0] = 5
    assert a.tolist() == [1, 2]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "uint64", "complex64", "bool_"])
def test_pickle_round_trip_keeps_values_dtype_and_memory_count(dtype):
    import gc
    import pickle

    a = mx.array([[1, 0], [3, 2]], dtype=getattr(mx, dtype)) * 1  # a lazy array: pickle evaluates it
    state = pickle.dumps(a)
    gc.collect()  # other tests' garbage goes now, not in the middle of the count
    gc.disable()
    try:
        before = mx.get_active_memory()
        b = pickle.loads(state)
        assert (b.dtype, b.shape, b.tolist()) == (a.dtype, a.shape, a.tolist())
        assert mx.get_active_memory() == before + a.nbytes  # a new array's bytes, counted
        del b
        assert mx.get_active_memory() == before  # and returned: nothing freed twice or left over
    finally:
        gc.enable()
