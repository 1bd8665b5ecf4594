"""mx.array from lists, arrays and buffers; from_dlpack; a[mask] = v; and the
small ops divmod, degrees, radians, trunc, unflatten and vecdot, each against
real MLX (values, dtypes, errors, and the transforms' results)."""

import math

import pytest

import mlxref.core as mx
from support import assert_both, assert_same_array, assert_same_as_mlx, needs_mlx, real_mx

np = pytest.importorskip("numpy")


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
    assert_both(_MASKS[name])


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

    assert_both(build)


@needs_mlx
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "bool_"])
def test_divmod_of_integers_as_in_mlx(dtype):
    a = [7, -7, 7, -7, 0, 5, 1, 127]
    b = [2, 2, -2, -2, 3, 1, 1, -1]
    if dtype == "bool_":
        a, b = [True, False, True, False], [True, True, False, False]
    assert_both(lambda m: m.divmod(m.array(a, getattr(m, dtype)), m.array(b, getattr(m, dtype))))


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
    assert_both(case)


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
        assert_same_array(o, t)


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
    assert_both(lambda m: getattr(m, op)(case(m)))


@needs_mlx
def test_degrees_of_float64_and_gradients_as_in_mlx():
    def build(m):
        with m.stream(m.cpu):
            out = m.radians(m.array([180.0, 1.0], m.float64))
            m.eval(out)
        return out

    assert_both(build)
    assert_both(lambda m: m.grad(lambda x: m.degrees(x).sum())(m.array([1.5, -2.0])))
    assert_both(lambda m: m.grad(lambda x: m.radians(x * x).sum())(m.array([1.5, -2.0])))


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
    assert_both(case)


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
    assert_both(case)


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
    assert_both(case)


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
    assert_both(case, rtol=1e-5)
