"""The shape family (mlxref/core/primitives/shape.py: Broadcast, Reshape, Flatten,
Unflatten, Transpose, ExpandDims, Squeeze, Concatenate, Split, Pad, AsStrided,
Contiguous...; ops/shape.py; MLX's mlx/ops.cpp and mlx/primitives.cpp): reshape,
flatten, unflatten, transpose, swapaxes, moveaxis, expand_dims, squeeze, broadcast_to,
concatenate, stack, split, pad, repeat, tile, flip, roll, unstack, atleast_1d/2d/3d,
meshgrid, broadcast_arrays, diff, contiguous, as_strided and the aliases concat,
permute_dims and matrix_transpose.

Expected values are worked out by hand; the tests marked ``needs_mlx`` compare with
real MLX (values, dtypes and errors, and the transforms' results); vmap's are also
checked against a loop over the examples.
"""

import re

import pytest

import mlxref.core as mx
from mlxref.core.ops import common
from mlxref.testing import check_grads
from support import (assert_array, assert_both, assert_new_handle, assert_same_as_mlx,
                     assert_stacked, case_x, check_case_against_mlx, check_jvp_against_mlx,
                     check_nested_vmap, check_rule_grads, check_vjp_against_mlx,
                     check_vmap_against_loop, check_vmap_against_mlx, check_vmap_of_grad,
                     dtype_cases, example_inputs, loop_over_examples, needs_mlx, real_mx,
                     rule_cases, vmap_configs)


def arange(n, shape=None, dtype=None):
    a = mx.array(list(range(n)), dtype)
    return a if shape is None else mx.reshape(a, shape)


A = [[0, 1, 2], [3, 4, 5]]  # arange(6).reshape(2, 3)


def B(x, y, z):  # arange(24).reshape(2, 3, 4)
    return 12 * x + 4 * y + z


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


# --- reshape, flatten ---------------------------------------------------------------


def test_reshape_keeps_row_major_order():
    a = arange(6, (2, 3))
    assert_array(mx.reshape(a, (3, 2)), [[0, 1], [2, 3], [4, 5]], mx.int32, (3, 2))
    assert_array(mx.reshape(a, [6]), [0, 1, 2, 3, 4, 5], shape=(6,))
    assert_array(a.reshape(3, 2), [[0, 1], [2, 3], [4, 5]])
    assert_array(a.reshape((1, 6)), [[0, 1, 2, 3, 4, 5]])


def test_reshape_infers_one_dimension():
    a = arange(6, (2, 3))
    assert mx.reshape(a, (-1,)).shape == (6,)
    assert mx.reshape(a, (3, -1)).shape == (3, 2)
    assert mx.reshape(a, (-1, 1, 2)).shape == (3, 1, 2)


def test_reshape_scalar_and_empty():
    assert_array(mx.reshape(mx.array(5.0), (1, 1)), [[5.0]], shape=(1, 1))
    assert_array(mx.reshape(mx.array([7]), ()), 7, shape=())
    assert mx.reshape(mx.zeros((0, 3)), (3, 0)).shape == (3, 0)
    assert mx.reshape(mx.zeros((0, 3)), (3, 0)).tolist() == [[], [], []]


def test_reshape_same_shape_is_the_same_array():
    a = arange(6, (2, 3))
    assert_new_handle(mx.reshape(a, (2, 3)), a)


def test_reshape_of_an_evaluated_array_shares_its_list():
    a = arange(6, (2, 3))
    r = mx.reshape(a, (3, 2))
    mx.eval(r)
    assert r.data() is a.data()


def test_reshape_errors():
    a = arange(6, (2, 3))
    with raises(ValueError, "[reshape] Cannot reshape array of size 6 into shape (4)."):
        mx.reshape(a, (4,))
    with raises(ValueError, "[reshape] Reshape can only infer one dimension."):
        mx.reshape(a, (-1, -1))
    with raises(ValueError, "[reshape] Cannot reshape array of size 6 into shape (1,4)."):
        mx.reshape(a, (-1, 4))
    with raises(ValueError, "[reshape] Cannot infer the shape of an empty array"):
        mx.reshape(mx.zeros((0, 3)), (-1, 0))
    # MLX accepts (-2, -3) and makes an array with negative dimensions; we refuse.
    with raises(ValueError, "[reshape] Cannot reshape array of size 6 into shape (-2,-3)."):
        mx.reshape(a, (-2, -3))
    with pytest.raises(TypeError):
        mx.reshape(a, 6)
    with pytest.raises(TypeError):
        mx.reshape([1, 2, 3], (3,))


def test_flatten():
    b = arange(24, (2, 3, 4))
    assert mx.flatten(b).shape == (24,)
    assert mx.flatten(b, 1).shape == (2, 12)
    assert mx.flatten(b, 0, 1).shape == (6, 4)
    assert mx.flatten(b, -2, -1).shape == (2, 12)
    assert mx.flatten(b, -10, 10).shape == (24,)  # clamped
    assert_new_handle(mx.flatten(b, 1, 1), b)
    assert_array(mx.flatten(arange(6, (2, 3))), [0, 1, 2, 3, 4, 5])
    assert_array(mx.flatten(mx.array(3)), [3], shape=(1,))
    assert_array(arange(4, (2, 2)).flatten(), [0, 1, 2, 3])


def test_flatten_errors():
    b = arange(24, (2, 3, 4))
    with raises(ValueError, "[flatten] start_axis must be less than or equal to end_axis"):
        mx.flatten(b, 2, 1)
    with raises(ValueError, "[flatten] start_axis must be less than or equal to end_axis"):
        mx.flatten(b, 5)


# --- transposes -------------------------------------------------------------------------


def test_transpose_default_reverses_axes():
    a = arange(6, (2, 3))
    assert_array(mx.transpose(a), [[0, 3], [1, 4], [2, 5]], mx.int32, (3, 2))
    assert_array(a.T, [[0, 3], [1, 4], [2, 5]])
    assert_array(a.transpose(), [[0, 3], [1, 4], [2, 5]])
    assert_array(mx.transpose(mx.array(1.5)), 1.5, shape=())


def test_transpose_with_axes():
    b = arange(24, (2, 3, 4))
    t = mx.transpose(b, (1, 2, 0))
    assert t.shape == (3, 4, 2)
    want = [[[B(x, y, z) for x in range(2)] for z in range(4)] for y in range(3)]
    assert t.tolist() == want
    assert mx.transpose(b, (-1, 0, 1)).tolist() == [
        [[B(x, y, z) for y in range(3)] for x in range(2)] for z in range(4)
    ]
    assert b.transpose(1, 0, 2).shape == (3, 2, 4)


def test_transpose_size_zero():
    assert mx.transpose(mx.zeros((0, 2))).shape == (2, 0)
    assert mx.transpose(mx.zeros((0, 2))).tolist() == [[], []]


def test_transpose_errors():
    b = arange(24, (2, 3, 4))
    with raises(ValueError, "[transpose] Received 2 axes for array with 3 dimensions."):
        mx.transpose(b, (0, 1))
    with raises(IndexError, "[transpose] Invalid axis (3) for array with 3 dimensions."):
        mx.transpose(b, (0, 1, 3))
    with raises(IndexError, "[transpose] Invalid axis (-1) for array with 3 dimensions."):
        mx.transpose(b, (0, 1, -4))
    with raises(ValueError, "[transpose] Repeat axes not allowed."):
        mx.transpose(b, (0, 0, 1))


def test_swapaxes_and_moveaxis():
    b = arange(24, (2, 3, 4))
    s = mx.swapaxes(b, 0, -1)
    assert s.shape == (4, 3, 2)
    assert s.tolist() == [[[B(x, y, z) for x in range(2)] for y in range(3)] for z in range(4)]
    assert b.swapaxes(0, 1).shape == (3, 2, 4)
    m = mx.moveaxis(b, 0, -1)
    assert m.shape == (3, 4, 2)
    assert m.tolist() == [[[B(x, y, z) for x in range(2)] for z in range(4)] for y in range(3)]
    assert mx.moveaxis(b, -1, 0).shape == (4, 2, 3)
    assert_new_handle(mx.moveaxis(b, 1, 1), b)
    assert b.moveaxis(2, 0).shape == (4, 2, 3)


def test_swapaxes_and_moveaxis_errors():
    b = arange(24, (2, 3, 4))
    with raises(IndexError, "[swapaxes] Invalid axis 3 for array with 3 dimensions."):
        mx.swapaxes(b, 0, 3)
    with raises(IndexError, "[moveaxis] Invalid axis -4 for array with 3 dimensions."):
        mx.moveaxis(b, 0, -4)
    with raises(IndexError, "[moveaxis] Invalid axis 3 for array with 3 dimensions."):
        mx.moveaxis(b, 3, 0)


# --- size-1 axes ---------------------------------------------------------------------


def test_expand_dims():
    a = arange(6, (2, 3))
    assert mx.expand_dims(a, 0).shape == (1, 2, 3)
    assert mx.expand_dims(a, -1).shape == (2, 3, 1)
    assert mx.expand_dims(a, (0, 2)).shape == (1, 2, 1, 3)
    assert mx.expand_dims(a, (0, -1)).shape == (1, 2, 3, 1)
    assert_new_handle(mx.expand_dims(a, []), a)
    assert_array(mx.expand_dims(mx.array(2), 0), [2], shape=(1,))
    assert_array(mx.expand_dims(a, 1), [[[0, 1, 2]], [[3, 4, 5]]])


def test_expand_dims_errors():
    a = arange(6, (2, 3))
    with raises(IndexError, "[expand_dims] Axis 3 is out of bounds for array with 3 dimensions."):
        mx.expand_dims(a, 3)
    with raises(IndexError, "[expand_dims] Axis -5 is out of bounds for array with 4 dimensions."):
        mx.expand_dims(a, (0, -5))
    with raises(ValueError, "[expand_dims] Received duplicate axes."):
        mx.expand_dims(a, (0, -4))


def test_squeeze():
    x = mx.zeros((1, 2, 1))
    assert mx.squeeze(x).shape == (2,)
    assert mx.squeeze(x, 0).shape == (2, 1)
    assert mx.squeeze(x, -1).shape == (1, 2)
    assert mx.squeeze(x, (0, 2)).shape == (2,)
    assert_new_handle(mx.squeeze(x, []), x)
    assert x.squeeze(0).shape == (2, 1)
    assert_array(mx.squeeze(mx.array([[7]])), 7, shape=())
    assert mx.squeeze(mx.zeros((2, 3))).shape == (2, 3)


def test_squeeze_errors():
    x = mx.zeros((1, 2, 1))
    with raises(ValueError, "[squeeze] Cannot squeeze axis 1 with size 2 which is not equal to 1."):
        mx.squeeze(x, 1)
    with raises(IndexError, "[squeeze] Axis 3 is out of bounds for array with 3 dimensions."):
        mx.squeeze(x, 3)
    with raises(ValueError, "[squeeze] Received duplicate axes."):
        mx.squeeze(x, (0, -3))


def test_broadcast_to_is_exported():
    assert mx.broadcast_to is common.broadcast_to
    assert_array(mx.broadcast_to(mx.array([1, 2]), (2, 2)), [[1, 2], [1, 2]])


# --- joining and splitting ----------------------------------------------------------


def test_concatenate():
    a = arange(6, (2, 3))
    assert_array(mx.concatenate([a, a]), A + A, mx.int32, (4, 3))
    assert_array(mx.concatenate([a, a], axis=1), [r + r for r in A], shape=(2, 6))
    assert_array(mx.concatenate((a, a), axis=-1), [r + r for r in A])
    assert_array(mx.concatenate([a, a], axis=None), list(range(6)) * 2, shape=(12,))
    assert_new_handle(mx.concatenate([a]), a)
    assert_array(mx.concatenate([mx.zeros((0, 3), mx.int32), a]), A, shape=(2, 3))


def test_concatenate_promotes_dtypes():
    a = arange(6, (2, 3))
    out = mx.concatenate([a, mx.array([[0.5, 1.5, 2.5]])])
    assert_array(out, A + [[0.5, 1.5, 2.5]], mx.float32, (3, 3))
    assert mx.concatenate([a > 2, a]).dtype is mx.int32
    assert_array(mx.concatenate([mx.array(1), mx.array(2.5)], axis=None), [1.0, 2.5], mx.float32)


def test_concatenate_errors():
    a = arange(6, (2, 3))
    with raises(ValueError, "[concatenate] No arrays provided for concatenation"):
        mx.concatenate([])
    with raises(
        ValueError,
        "[concatenate] All the input array dimensions must match exactly except for the "
        "concatenation axis. However, the provided shapes are (2,3), (3,2), and the "
        "concatenation axis is 0.",
    ):
        mx.concatenate([a, mx.zeros((3, 2))])
    with raises(
        ValueError,
        "[concatenate] All the input arrays must have the same number of dimensions. "
        "However, got arrays with dimensions 2 and 1.",
    ):
        mx.concatenate([a, mx.zeros((3,))])
    with raises(IndexError, "[concatenate] Axis 2 is out of bounds for array with 2 dimensions."):
        mx.concatenate([a, a], axis=2)
    with raises(IndexError, "[concatenate] Axis 0 is out of bounds for array with 0 dimensions."):
        mx.concatenate([mx.array(1), mx.array(2)])
    with pytest.raises(TypeError):
        mx.concatenate([[1, 2], [3]])


def test_stack():
    a = arange(6, (2, 3))
    assert_array(mx.stack([a, a]), [A, A], shape=(2, 2, 3))
    assert_array(mx.stack([a, a], axis=1), [[r, r] for r in A], shape=(2, 2, 3))
    assert_array(mx.stack([a, a], axis=-1), [[[v, v] for v in r] for r in A], shape=(2, 3, 2))
    assert mx.stack([a, a], axis=None).shape == (2, 2, 3)
    assert_array(mx.stack([mx.array(1), mx.array(2.0)]), [1.0, 2.0], mx.float32, (2,))


def test_stack_errors():
    a = arange(6, (2, 3))
    with raises(ValueError, "[stack] No arrays provided for stacking"):
        mx.stack([])
    with raises(ValueError, "[stack] All arrays must have the same shape"):
        mx.stack([a, mx.zeros((3, 2))])
    with raises(IndexError, "[stack] Axis 3 is out of bounds for array with 3 dimensions."):
        mx.stack([a, a], axis=3)


def test_split_into_sections():
    a = arange(6, (2, 3))
    parts = mx.split(a, 3, axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    assert [p.tolist() for p in parts] == [[[0], [3]], [[1], [4]], [[2], [5]]]
    assert [p.tolist() for p in mx.split(a, 2)] == [[A[0]], [A[1]]]
    assert [p.tolist() for p in a.split(3, axis=-1)] == [[[0], [3]], [[1], [4]], [[2], [5]]]


def test_split_is_one_multi_output_node():
    a = arange(6, (2, 3))
    parts = mx.split(a, [1, 2], axis=1)
    assert all(p.primitive() is parts[0].primitive() for p in parts)
    assert type(parts[0].primitive()).__name__ == "Split"
    parts[1].tolist()
    assert all(p.data() is not None for p in parts)  # evaluating one evaluates its siblings


def test_split_at_indices():
    a = arange(6, (2, 3))
    shapes = lambda parts: [p.shape for p in parts]  # noqa: E731
    assert shapes(mx.split(a, [1, 2], axis=1)) == [(2, 1), (2, 1), (2, 1)]
    assert shapes(mx.split(a, [2, 1], axis=1)) == [(2, 2), (2, 0), (2, 2)]
    assert shapes(mx.split(a, [1, 5], axis=1)) == [(2, 1), (2, 2), (2, 0)]
    assert [p.tolist() for p in mx.split(a, [-1], axis=1)] == [[[0, 1], [3, 4]], [[2], [5]]]
    assert [p.tolist() for p in mx.split(a, [2, 1], axis=1)][2] == [[1, 2], [4, 5]]
    assert shapes(mx.split(a, [1, 1], axis=-1)) == [(2, 1), (2, 0), (2, 2)]
    assert_new_handle(mx.split(a, [], axis=1)[0], a)
    assert shapes(mx.split(mx.zeros((0,)), 2)) == [(0,), (0,)]


def test_split_errors():
    a = arange(6, (2, 3))
    with raises(
        ValueError,
        "Array split does not result in sub arrays with equal size: attempting 4 splits "
        "along axis 1 for shape (2,3).",
    ):
        mx.split(a, 4, axis=1)
    with raises(ValueError, "[split] num_splits must be positive and non-zero but got 0."):
        mx.split(a, 0, axis=1)
    with raises(IndexError, "[split] Axis 2 is out of bounds for array with 2 dimensions."):
        mx.split(a, 2, axis=2)
    with raises(IndexError, "[split] Axis 0 is out of bounds for array with 0 dimensions."):
        mx.split(mx.array(1), 1)


# --- pad ---------------------------------------------------------------------------------


def test_pad_constant():
    a = arange(6, (2, 3))
    assert_array(
        mx.pad(a, ((1, 0), (0, 2))),
        [[0, 0, 0, 0, 0], [0, 1, 2, 0, 0], [3, 4, 5, 0, 0]],
        mx.int32,
    )
    p = mx.pad(a, 1, constant_values=9)
    assert p.tolist() == [[9] * 5, [9, 0, 1, 2, 9], [9, 3, 4, 5, 9], [9] * 5]
    # the constant takes the array's dtype
    assert mx.pad(a, 1, constant_values=2.5).tolist()[0] == [2] * 5
    p = mx.pad(mx.array([1.0]), 1, constant_values=mx.array(2.5))
    assert_array(p, [2.5, 1.0, 2.5], mx.float32)


def test_pad_width_forms():
    a = arange(6, (2, 3))
    assert mx.pad(a, 1).shape == (4, 5)
    assert mx.pad(a, (1,)).shape == (4, 5)
    assert mx.pad(a, (1, 2)).shape == (5, 6)
    assert mx.pad(a, [1, 2]).shape == (5, 6)
    assert mx.pad(a, [(1, 2)]).shape == (5, 6)
    assert mx.pad(a, [[1, 0], [0, 2]]).shape == (3, 5)
    assert_array(mx.pad(mx.array(1), 2), 1, shape=())
    assert mx.pad(mx.zeros((0, 2)), 1).tolist() == [[0.0] * 4] * 2


def test_pad_modes():
    x = mx.array([1, 2, 3])
    assert mx.pad(x, 2, mode="edge").tolist() == [1, 1, 1, 2, 3, 3, 3]
    assert mx.pad(x, 2, mode="reflect").tolist() == [3, 2, 1, 2, 3, 2, 1]
    assert mx.pad(x, 2, mode="symmetric").tolist() == [2, 1, 1, 2, 3, 3, 2]
    # longer than the axis: the reflection keeps bouncing
    assert mx.pad(x, (5, 0), mode="reflect").tolist() == [2, 1, 2, 3, 2, 1, 2, 3]
    assert mx.pad(x, (0, 4), mode="symmetric").tolist() == [1, 2, 3, 3, 2, 1, 1]
    assert mx.pad(mx.array([7]), 2, mode="reflect").tolist() == [7] * 5
    a = arange(6, (2, 3))
    assert mx.pad(a, ((1, 0), (1, 1)), mode="edge").tolist() == [
        [0, 0, 1, 2, 2],
        [0, 0, 1, 2, 2],
        [3, 3, 4, 5, 5],
    ]


def test_pad_errors():
    a = arange(6, (2, 3))
    with raises(ValueError, "Invalid number of padding sizes passed to pad with axes of size 2"):
        mx.pad(a, [(1, 1), (1, 1), (1, 1)])
    with raises(
        ValueError,
        "Invalid high padding size (-1) passed to pad for axis 0. "
        "Padding sizes must be non-negative",
    ):
        mx.pad(a, [(1, -1), (1, 1)])
    with raises(
        ValueError,
        "Invalid low padding size (-1) passed to pad for axis 0. "
        "Padding sizes must be non-negative",
    ):
        mx.pad(a, -1)
    with raises(ValueError, "Invalid padding mode (wrap) passed to pad"):
        mx.pad(a, 1, mode="wrap")
    with raises(ValueError, "[pad] Cannot pad empty axis 0 using mode 'reflect'."):
        mx.pad(mx.zeros((0, 2)), 1, mode="reflect")
    with pytest.raises(TypeError):
        mx.pad(a, (1, 2, 3))


# --- repeat, tile -------------------------------------------------------------------------


def test_repeat():
    a = arange(6, (2, 3))
    assert_array(mx.repeat(a, 2), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5], mx.int32)
    assert_array(mx.repeat(a, 2, axis=0), [A[0], A[0], A[1], A[1]])
    assert_array(mx.repeat(a, 2, axis=-1), [[0, 0, 1, 1, 2, 2], [3, 3, 4, 4, 5, 5]])
    assert mx.repeat(a, 0, axis=1).shape == (2, 0)
    assert_new_handle(mx.repeat(a, 1, axis=1), a)
    assert_array(mx.repeat(mx.array(2.5), 3), [2.5] * 3, mx.float32, (3,))


def test_repeat_errors():
    a = arange(6, (2, 3))
    with raises(ValueError, "[repeat] Number of repeats cannot be negative"):
        mx.repeat(a, -1, axis=0)
    with raises(IndexError, "[repeat] Axis 2 is out of bounds for array with 2 dimensions."):
        mx.repeat(a, 2, axis=2)
    with raises(IndexError, "[repeat] Axis 0 is out of bounds for array with 0 dimensions."):
        mx.repeat(mx.array(2), 3, axis=0)


def test_tile():
    a = arange(6, (2, 3))
    assert_array(mx.tile(a, 2), [r + r for r in A], shape=(2, 6))
    assert_array(mx.tile(a, (2, 1)), A + A, shape=(4, 3))
    assert mx.tile(a, (2, 1, 2)).shape == (2, 2, 6)
    assert mx.tile(a, (2, 1, 2)).tolist() == [[r + r for r in A]] * 2
    assert mx.tile(a, []).shape == (2, 3)
    assert mx.tile(a, (2, 0)).shape == (4, 0)
    assert_array(mx.tile(mx.array(2), 3), [2, 2, 2], shape=(3,))
    with raises(ValueError, "[broadcast_to] Negative dimensions not allowed."):
        mx.tile(a, -1)


def test_shape_ops_on_symbolic_elements():
    sympy = pytest.importorskip("sympy")
    x, y = sympy.symbols("x y")
    a = mx.array([[x, y], [y, x]])
    assert mx.transpose(mx.pad(a, ((0, 0), (1, 0)))).tolist() == [[0, 0], [x, y], [y, x]]
    assert mx.concatenate([a, a], axis=1).tolist()[0] == [x, y, x, y]


# --- against real MLX ------------------------------------------------------------------------

SHAPE_CASES = [
    lambda m, a, b: m.reshape(b, (4, -1)),
    lambda m, a, b: m.reshape(m.zeros((0, 3)), (3, 0)),
    lambda m, a, b: m.flatten(b, 1),
    lambda m, a, b: m.flatten(b, -3, -2),
    lambda m, a, b: m.flatten(m.array(3)),
    lambda m, a, b: m.transpose(b),
    lambda m, a, b: m.transpose(b, (2, 0, 1)),
    lambda m, a, b: m.transpose(b, (-1, -3, 1)),
    lambda m, a, b: b.T,
    lambda m, a, b: m.swapaxes(b, -1, 0),
    lambda m, a, b: m.moveaxis(b, 2, 0),
    lambda m, a, b: m.moveaxis(b, 0, -2),
    lambda m, a, b: m.expand_dims(b, (0, 3, -1)),
    lambda m, a, b: m.squeeze(m.reshape(a, (1, 2, 1, 3)), (0, -2)),
    lambda m, a, b: m.squeeze(m.reshape(a, (1, 2, 1, 3))),
    lambda m, a, b: m.broadcast_to(a, (2, 2, 3)),
    lambda m, a, b: m.concatenate([a, a * 2, a + 1], axis=-1),
    lambda m, a, b: m.concatenate([a, m.array([[0.5, 1.5, 2.5]])]),
    lambda m, a, b: m.concatenate([b, a], axis=None),
    lambda m, a, b: m.stack([a, a + 1, a + 2], axis=1),
    lambda m, a, b: m.stack([a, a.astype(m.float32)], axis=-1),
    lambda m, a, b: m.split(b, 2, axis=2)[1],
    lambda m, a, b: m.split(b, [1, 3], axis=-1)[1],
    lambda m, a, b: m.split(b, [3, 1], axis=2)[2],
    lambda m, a, b: m.split(b, [-3], axis=1)[0],
    lambda m, a, b: m.pad(b, ((0, 1), (2, 0), (1, 1))),
    lambda m, a, b: m.pad(a, 2, constant_values=-1),
    lambda m, a, b: m.pad(a.astype(m.float32), (1, 2), constant_values=0.5),
    lambda m, a, b: m.pad(b, ((1, 2), (0, 3), (2, 1)), mode="edge"),
    lambda m, a, b: m.pad(b, ((1, 1), (2, 4), (5, 0)), mode="reflect"),
    lambda m, a, b: m.pad(b, ((1, 2), (4, 2), (0, 6)), mode="symmetric"),
    lambda m, a, b: m.repeat(b, 3, axis=1),
    lambda m, a, b: m.repeat(a, 2),
    lambda m, a, b: m.repeat(b, 0, axis=-1),
    lambda m, a, b: m.tile(a, (2, 1, 3)),
    lambda m, a, b: m.tile(b, 2),
]


def _inputs(m):
    a = m.array([[0, 1, 2], [3, 4, 5]])
    b = m.reshape(m.array(list(range(24))), (2, 3, 4))
    return a, b


@needs_mlx
@pytest.mark.parametrize("case", range(len(SHAPE_CASES)))
def test_shape_ops_match_mlx(case):
    f = SHAPE_CASES[case]
    assert_same_as_mlx(f(mx, *_inputs(mx)), f(real_mx, *_inputs(real_mx)))


SHAPE_ERRORS = [
    lambda m, a, b: m.reshape(a, (4,)),
    lambda m, a, b: m.reshape(a, (-1, -1)),
    lambda m, a, b: m.flatten(b, 2, 1),
    lambda m, a, b: m.transpose(b, (0, 1)),
    lambda m, a, b: m.transpose(b, (0, 1, 5)),
    lambda m, a, b: m.transpose(b, (1, 1, 0)),
    lambda m, a, b: m.swapaxes(b, 3, 0),
    lambda m, a, b: m.moveaxis(b, 0, -4),
    lambda m, a, b: m.expand_dims(a, 3),
    lambda m, a, b: m.expand_dims(a, (1, 1)),
    lambda m, a, b: m.squeeze(a, 0),
    lambda m, a, b: m.squeeze(a, -3),
    lambda m, a, b: m.concatenate([a, b]),
    lambda m, a, b: m.concatenate([a, m.zeros((2, 2)), a]),
    lambda m, a, b: m.concatenate([a, a], axis=-3),
    lambda m, a, b: m.stack([a, b]),
    lambda m, a, b: m.stack([a, a], axis=-4),
    lambda m, a, b: m.split(b, 3, axis=-1),
    lambda m, a, b: m.split(b, -1),
    lambda m, a, b: m.pad(b, [(1, 1), (1, 1)]),
    lambda m, a, b: m.pad(a, [(0, 0), (-2, 1)]),
    lambda m, a, b: m.pad(a, 1, mode="circular"),
    lambda m, a, b: m.pad(m.zeros((2, 0)), 1, mode="symmetric"),
    lambda m, a, b: m.repeat(a, -2),
    lambda m, a, b: m.repeat(a, 2, axis=-3),
    lambda m, a, b: m.tile(a, (1, -2)),
]


@needs_mlx
@pytest.mark.parametrize("case", range(len(SHAPE_ERRORS)))
def test_shape_errors_match_mlx(case):
    f = SHAPE_ERRORS[case]
    with pytest.raises(Exception) as theirs:
        f(real_mx, *_inputs(real_mx))
    with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
        f(mx, *_inputs(mx))


# --- flip, roll, unstack, atleast_nd, meshgrid, broadcast_arrays, diff, the aliases
# concat, permute_dims and matrix_transpose, contiguous, as_strided: each case against
# real MLX (the same shape, dtype and values, float sums to a tolerance, or the same
# error type and message), and so are their gradients (grad, jvp) and vmap ---------------

cases = {}

A23 = lambda m: m.arange(6).reshape(2, 3)
cases['flip2'] = lambda m: m.flip(A23(m), 2)
cases['flip00'] = lambda m: m.flip(A23(m), (0, 0))
cases['flipall'] = lambda m: m.flip(A23(m))
cases['flip-1'] = lambda m: m.flip(A23(m), -1)
cases['flip0d'] = lambda m: m.flip(m.array(3))
cases['flipempty'] = lambda m: m.flip(m.zeros((0, 2)), 0)
cases['flipf'] = lambda m: m.flip(A23(m), 1.0)
for sh in [1, -7, 0, 3, 6, 100]:
    cases[f'roll{sh}'] = lambda m, sh=sh: m.roll(A23(m), sh)
    cases[f'roll{sh}ax'] = lambda m, sh=sh: m.roll(A23(m), sh, 1)
    cases[f'roll{sh}axs'] = lambda m, sh=sh: m.roll(A23(m), sh, (0, -1))
cases['rollbadax'] = lambda m: m.roll(A23(m), 1, 2)
cases['rollfew'] = lambda m: m.roll(A23(m), (1,), (0, 1))
cases['rolltup'] = lambda m: m.roll(A23(m), (1, 2))
cases['rolltupax'] = lambda m: m.roll(A23(m), (1, 3), 1)
cases['rollempty'] = lambda m: m.roll(m.zeros((0, 3)), 2, 0)
cases['rollf'] = lambda m: m.roll(A23(m), 1.5)
cases['rollax'] = lambda m: m.roll(A23(m), (1,2), (1,0))
cases['unstack'] = lambda m: m.unstack(A23(m), axis=-1)
cases['unstack2'] = lambda m: m.unstack(A23(m), axis=2)
cases['unstack0'] = lambda m: m.unstack(m.zeros((0, 2)))
cases['unstack0d'] = lambda m: m.unstack(m.array(1))
cases['unstackpos'] = lambda m: m.unstack(A23(m), 0)
cases['at1'] = lambda m: m.atleast_1d(m.array(1), m.array([1]))
cases['at1one'] = lambda m: m.atleast_1d(m.array(1.5))
cases['at1none'] = lambda m: m.atleast_1d()
cases['at2'] = lambda m: m.atleast_2d(m.array(1), m.array([1, 2]), A23(m))
cases['at3'] = lambda m: m.atleast_3d(m.array(1), m.array([1, 2]), A23(m), m.zeros((1, 2, 3, 4)))
cases['mesh'] = lambda m: m.meshgrid(m.arange(2), m.arange(3))
cases['meshij'] = lambda m: m.meshgrid(m.arange(2), m.arange(3.0), indexing='ij')
cases['meshbad'] = lambda m: m.meshgrid(m.arange(2), indexing='q')
cases['mesh0'] = lambda m: m.meshgrid()
cases['mesh1'] = lambda m: m.meshgrid(m.arange(2))
cases['mesh2d'] = lambda m: m.meshgrid(m.zeros((2, 2)), m.arange(3))
cases['mesh3s'] = lambda m: m.meshgrid(m.arange(2), m.arange(3), m.arange(4), sparse=True)
cases['mesh3'] = lambda m: m.meshgrid(m.arange(2), m.arange(3), m.arange(4))
cases['meshe'] = lambda m: m.meshgrid(m.zeros(0), m.arange(3))
cases['ba'] = lambda m: m.broadcast_arrays(m.zeros((2, 1)), m.arange(3))
cases['ba1'] = lambda m: m.broadcast_arrays(m.zeros((2, 1)))
cases['ba0'] = lambda m: m.broadcast_arrays()
cases['babad'] = lambda m: m.broadcast_arrays(m.zeros((2, 1)), m.zeros((3, 3)))
cases['diff'] = lambda m: m.diff(m.array([1, 4, 9, 16.0]))
cases['diff2'] = lambda m: m.diff(A23(m) ** 2, 2, 1)
cases['diff0ax'] = lambda m: m.diff(A23(m), axis=0)
cases['diffbad'] = lambda m: m.diff(A23(m), 1, 2)
cases['diffneg'] = lambda m: m.diff(A23(m), -1)
cases['diffbig'] = lambda m: m.diff(A23(m), 5)
cases['diff0d'] = lambda m: m.diff(m.array(1))
cases['diffn0'] = lambda m: m.diff(A23(m), 0)
cases['diffbool'] = lambda m: m.diff(m.array([True, False]))
cases['diffu'] = lambda m: m.diff(m.array([3, 1], m.uint8))
cases['concat'] = lambda m: m.concat([A23(m), A23(m)], None)
cases['concat1'] = lambda m: m.concat([A23(m), A23(m)], axis=-1)
cases['pd'] = lambda m: m.permute_dims(A23(m))
cases['pd2'] = lambda m: m.permute_dims(m.zeros((1, 2, 3)), (2, 0, 1))
cases['mt'] = lambda m: m.matrix_transpose(A23(m))
cases['mt3'] = lambda m: m.matrix_transpose(m.arange(24).reshape(2, 3, 4))  # last two axes only
cases['mt1'] = lambda m: m.matrix_transpose(m.arange(3))
cases['cont'] = lambda m: m.contiguous(A23(m).T)
cases['as1'] = lambda m: m.as_strided(A23(m), (2, 2), (1, 1), 1)
cases['as2'] = lambda m: m.as_strided(A23(m).T)
cases['as3'] = lambda m: m.as_strided(A23(m), (3, 2, 2), (1, 0, 2))
cases['as4'] = lambda m: m.as_strided(A23(m), (6,))
cases['as5'] = lambda m: m.as_strided(A23(m), (0, 3), (1, 1))
cases['as6'] = lambda m: m.as_strided(A23(m), (-1, 3), (1, 1))

RULED = {
    'flip': lambda m, x: m.flip(x, -1),
    'roll': lambda m, x: m.roll(x, 2, 1),
    'rollflat': lambda m, x: m.roll(x, -1),
    'unstack': lambda m, x: m.unstack(x, axis=1),
    'at3': lambda m, x: m.atleast_3d(x),
    'mesh': lambda m, x: m.meshgrid(x[0], x[1, :2]),
    'diff': lambda m, x: m.diff(x, 2, -1),
    'as': lambda m, x: m.as_strided(x, (3, 2), (1, 1), 1),
    'cont': lambda m, x: m.contiguous(x.T),
    'ba': lambda m, x: m.broadcast_arrays(x, x[:1]),
}
cases.update(rule_cases(RULED, without_vmap={'as'}))  # MLX has no vmap for AsStrided (tested below)
cases['vmap_as'] = lambda m: m.vmap(lambda x: m.as_strided(x, (2,), (1,)))(case_x(m))


A6 = lambda m: m.arange(6.).reshape(2, 3)
cases['asneg'] = lambda m: m.as_strided(A6(m), (3,), (-1,), 4)
cases['asneg2'] = lambda m: m.as_strided(A6(m), (2, 2), (-2, 1), 3)
cases['asoff'] = lambda m: m.as_strided(A6(m), offset=-1)
cases['gas'] = lambda m: m.grad(lambda x: (m.as_strided(x, (2, 2), (-2, 1), 3) ** 2).sum())(A6(m))
cases['gba'] = lambda m: m.grad(lambda x, y: sum((z ** 2).sum() for z in m.broadcast_arrays(x, y)), argnums=(0, 1))(A6(m)[:, :1], A6(m)[0])
cases['gmesh'] = lambda m: m.grad(lambda x, y: sum((z ** 3).sum() for z in m.meshgrid(x, y, indexing='ij')), argnums=(0, 1))(A6(m)[0], A6(m)[1, :2])
cases['vmesh'] = lambda m: m.vmap(lambda x: m.meshgrid(x, x[:2])[0])(A6(m))
cases['vdiff'] = lambda m: m.vmap(lambda x: m.diff(x, 1, 0), in_axes=1)(A6(m))
cases['vroll'] = lambda m: m.vmap(lambda x: m.roll(x, 1), in_axes=1)(A6(m))
cases['cont2'] = lambda m: m.contiguous(A6(m), True)
cases['contb'] = lambda m: m.contiguous([1])
cases['diff0'] = lambda m: m.diff(m.zeros((0, 3)), 1, 0)
cases['rollneg'] = lambda m: m.roll(A6(m), (-1, 5), (-1, -2))
cases['flipneg'] = lambda m: m.flip(A6(m), [-1, 0])

DTYPED = {
    'flip': lambda m, x: m.flip(x, 0),
    'roll': lambda m, x: m.roll(x, 1, -1),
    'diff': lambda m, x: m.diff(x),
    'as_strided': lambda m, x: m.as_strided(x, (2, 2), (2, 1)),
    'contiguous': lambda m, x: m.contiguous(x.T),
}
cases.update(dtype_cases(DTYPED))

# MLX's binding takes unstack's axis by keyword only; Python's message differs.
del cases["unstackpos"]
# MLX has no vmap for AsStrided: mlxref has one (tested below against the
# per-example results instead).
del cases["vmap_as"]


@needs_mlx
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_mlx(name):
    check_case_against_mlx(cases[name])


def test_new_handles_and_nodes():
    a = mx.arange(6).reshape(2, 3)
    for b in (mx.positive(a), mx.atleast_1d(a), mx.atleast_2d(a)):
        assert b is not a and b.id() == a.id()
    c = mx.contiguous(a.T)
    assert c.id() != a.T.id() and mx.array_equal(c, a.T)


def test_as_strided_refuses_reads_outside_the_array():
    # MLX reads past its buffer here; mlxref names the element.
    with pytest.raises(ValueError, match=r"\[as_strided\] The view reads element 6 of an array of 6"):
        mx.as_strided(mx.arange(6), (2, 2), (3, 3))
    with pytest.raises(ValueError, match=r"element -1"):
        mx.as_strided(mx.arange(6), (2,), (-1,))


def test_as_strided_vmap_views_each_example():
    x = mx.arange(12.0).reshape(3, 4)
    out = mx.vmap(lambda r: mx.as_strided(r, (3, 2), (1, 1)), in_axes=0)(x)
    want = mx.stack([mx.as_strided(x[i], (3, 2), (1, 1)) for i in range(3)])
    assert out.shape == (3, 3, 2) and mx.array_equal(out, want)
    out = mx.vmap(lambda r: mx.as_strided(r, (2,), (1,), 1), in_axes=1)(x)
    assert out.shape == (4, 2) and mx.array_equal(out, mx.stack([x[1:, i] for i in range(4)]))


def test_as_strided_vjp_adds_overlapping_reads():
    g = mx.grad(lambda x: mx.as_strided(x, (3, 2), (1, 1)).sum())(mx.arange(4.0))
    assert g.tolist() == [1.0, 2.0, 2.0, 1.0]


def test_atleast_and_meshgrid_refuse_non_arrays():
    # MLX's bindings fail their cast with a bare "std::bad_cast" here.
    with pytest.raises(RuntimeError, match=r"\[atleast_2d\] Expected arrays, got list"):
        mx.atleast_2d([1])
    with pytest.raises(RuntimeError, match=r"\[meshgrid\] Expected arrays, got int"):
        mx.meshgrid(mx.arange(2), 3)


def test_as_strided_needs_a_stride_per_axis():
    # MLX reads past the end of the strides it was given here.
    with pytest.raises(ValueError, match=r"\[as_strided\] Got 1 strides for a shape of 2 dimensions"):
        mx.as_strided(mx.arange(6), (2, 2), (1,))


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


# === vjp and jvp of the shape primitives against MLX's, and check_grads to second order
# Each program is written once against a module ``m`` (mlxref.core or mlx.core); inputs,
# cotangents and tangents are fixed Python lists. ==========================================

# name -> (program(m, *xs), input shapes)
RULE_PROGRAMS = {
    "reshape": (lambda m, x: m.reshape(x, (3, 2)), [(2, 3)]),
    "reshape_infer": (lambda m, x: m.reshape(x, (-1, 4)), [(2, 2, 2)]),
    "flatten": (lambda m, x: m.flatten(x, 1, 2), [(2, 2, 3)]),
    "flatten_all": (lambda m, x: m.flatten(x), [(2, 3)]),
    "transpose": (lambda m, x: m.transpose(x, (2, 0, 1)), [(2, 3, 2)]),
    "transpose_default": (lambda m, x: m.transpose(x), [(2, 3, 2)]),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, -1), [(2, 3, 2)]),
    "moveaxis": (lambda m, x: m.moveaxis(x, 0, -1), [(2, 3, 2)]),
    "expand_dims": (lambda m, x: m.expand_dims(x, (0, -1)), [(2, 3)]),
    "squeeze": (lambda m, x: m.squeeze(x), [(1, 3, 1)]),
    "squeeze_axis": (lambda m, x: m.squeeze(x, -1), [(2, 3, 1)]),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (2, 3, 4)), [(3, 1)]),
    "broadcast_binary": (lambda m, x, y: x * y + y, [(2, 1), (3,)]),
    "concatenate": (lambda m, x, y: m.concatenate([x, y], axis=-1), [(2, 1), (2, 3)]),
    "concatenate_three": (lambda m, x, y: m.concatenate([y, x * x, y], axis=0), [(1, 2), (2, 2)]),
    "concatenate_none": (lambda m, x, y: m.concatenate([x, y], axis=None), [(2, 2), (3,)]),
    "stack": (lambda m, x, y: m.stack([x, y], axis=1), [(2, 3), (2, 3)]),
    "split_sections": (lambda m, x: m.split(x, 2, axis=1)[0] * m.split(x, 2, axis=1)[1],
                       [(2, 4)]),
    "split_indices": (lambda m, x: m.concatenate(m.split(x, [1, 3])[::2]), [(5, 2)]),
    "split_pieces_used_twice": (
        lambda m, x: (lambda p: p[0] * p[2] + p[1])(m.split(x, 3, axis=-1)), [(2, 3)]),
    "pad": (lambda m, x: m.pad(x, ((1, 2), (0, 1))), [(2, 3)]),
    "pad_value": (lambda m, x: m.pad(x, 1, constant_values=3.0), [(2, 2)]),
    "pad_edge": (lambda m, x: m.pad(x, (1, 2), mode="edge"), [(2, 3)]),
    "pad_reflect": (lambda m, x: m.pad(x, 1, mode="reflect"), [(2, 3)]),
    "repeat": (lambda m, x: m.repeat(x, 2, axis=1), [(2, 3)]),
    "repeat_flat": (lambda m, x: m.repeat(x, 3), [(2, 2)]),
    "tile": (lambda m, x: m.tile(x, (2, 1, 2)), [(2, 3)]),
}

RULE_NAMES = sorted(RULE_PROGRAMS)


@needs_mlx
@pytest.mark.parametrize("name", RULE_NAMES)
def test_vjp_matches_mlx(name):
    check_vjp_against_mlx(*RULE_PROGRAMS[name])


@needs_mlx
@pytest.mark.parametrize("name", RULE_NAMES)
def test_jvp_matches_mlx(name):
    check_jvp_against_mlx(*RULE_PROGRAMS[name])


@pytest.mark.parametrize("name", RULE_NAMES)
def test_check_grads_order_2(name):
    check_rule_grads(*RULE_PROGRAMS[name])


# --- things MLX does not do, or does differently ------------------------------------


def test_pad_value_gets_the_border_cotangent():
    # MLX 0.32 hands back the array's gradient for the pad value (wrong shape);
    # mlxref gives the derivative: the sum of the cotangent outside the window.
    def f(x, v):
        return mx.pad(x, ((1, 0), (0, 2)), constant_values=v)

    x, v = mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array(0.5)
    cot = mx.arange(12.0).reshape(3, 4)
    _, (gx, gv) = mx.vjp(f, [x, v], [cot])
    assert_array(gx, [[4, 5], [8, 9]], shape=(2, 2))
    assert_array(gv, 66 - 26, shape=())
    _, (jv,) = mx.jvp(f, [x, v], [mx.zeros((2, 2)), mx.array(1.0)])
    assert_array(jv, [[1, 1, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]])
    check_grads(f, [x, v], order=2)


def test_split_siblings_without_cotangent_get_zeros():
    x = mx.arange(6.0)
    _, (g,) = mx.vjp(lambda a: mx.split(a, 3)[1], [x], [mx.array([5.0, 7.0])])
    assert_array(g, [0, 0, 5, 7, 0, 0])
    _, (g,) = mx.vjp(lambda a: mx.split(a, [1, 4]), [x],
                     [mx.array([1.0]), mx.array([2.0, 3.0, 4.0]), mx.array([5.0, 6.0])])
    assert_array(g, [1, 2, 3, 4, 5, 6])
    _, jvps = mx.jvp(lambda a: mx.split(a, [1, 4]), [x], [mx.arange(6.0) * 10])
    assert [t.tolist() for t in jvps] == [[0.0], [10.0, 20.0, 30.0], [40.0, 50.0]]


def test_broadcast_vjp_sums_to_the_input_shape():
    x = mx.array([[1.0], [2.0]])  # (2, 1) -> (3, 2, 4)
    _, (g,) = mx.vjp(lambda a: mx.broadcast_to(a, (3, 2, 4)), [x], [mx.ones((3, 2, 4))])
    assert_array(g, [[12], [12]], shape=(2, 1), dtype=mx.float32)


# --- vmap: each program against real MLX and against a loop over the examples --------
# (support.py's check_vmap_against_mlx and check_vmap_against_loop; the indexing
# programs are in test_indexing.py)

# name -> (program(m, *args), [(kind, example shape)], [(in_axes, out_axes)])
VMAP_PROGRAMS = {
    "broadcast_to": (
        lambda m, x: m.broadcast_to(x, (2, 3, 4)), [("f", (3, 1))],
        [((0,), 0), ((1,), -1), ((2,), 1), ((-1,), 2)]),
    "broadcast_binary": (
        lambda m, a, b: a * b - b, [("f", (2, 1)), ("f", (3,))],
        [((0, None), 0), ((None, 0), 1), ((1, -1), -1), ((-1, None), 2), ((None, 1), 0)]),
    "reshape": (
        lambda m, x: m.reshape(x, (3, 2)), [("f", (2, 3))],
        [((0,), 0), ((1,), 1), ((-1,), -1)]),
    "flatten": (
        lambda m, x: m.flatten(x, 1, 2), [("f", (2, 2, 3))],
        [((0,), 0), ((1,), 1), ((2,), 2), ((3,), -1), ((-2,), 0)]),
    "transpose": (
        lambda m, x: m.transpose(x, (2, 0, 1)), [("f", (2, 3, 4))],
        [((0,), 0), ((1,), 2), ((3,), -1), ((-2,), 1)]),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, -1), [("f", (2, 3))], [((0,), 1), ((2,), 0)]),
    "moveaxis": (
        lambda m, x: m.moveaxis(x, 0, -1), [("f", (2, 3, 4))], [((0,), 0), ((1,), -1), ((3,), 2)]),
    "expand_dims": (
        lambda m, x: m.expand_dims(x, (0, 2, -1)), [("f", (2, 3))],
        [((0,), 0), ((1,), 3), ((2,), -1), ((-1,), 1)]),
    "squeeze": (
        lambda m, x: m.squeeze(x, (0, 2)), [("f", (1, 3, 1, 2))],
        [((0,), 0), ((1,), 1), ((2,), -1), ((3,), 2), ((4,), 0)]),
    "concatenate": (
        lambda m, a, b: m.concatenate([a, b, a], axis=-1), [("f", (2, 1)), ("f", (2, 3))],
        [((0, None), 0), ((None, 1), 1), ((2, 0), -1), ((None, -1), 0), ((1, 2), 2)]),
    "stack": (
        lambda m, a, b: m.stack([a, b * b], axis=1), [("f", (2, 3)), ("f", (2, 3))],
        [((0, 0), 0), ((None, 2), 1), ((1, None), -1)]),
    "split": (  # several outputs of one Split node, each with its own out_axes
        lambda m, x: tuple(m.split(x, [1, 3], axis=1)), [("f", (2, 4))],
        [((0,), 0), ((1,), (1, 0, -1)), ((2,), -1), ((-3,), (2, 2, 0))]),
    "pad": (
        lambda m, x: m.pad(x, ((1, 0), (2, 1)), constant_values=-2.5), [("f", (2, 3))],
        [((0,), 0), ((1,), -1), ((2,), 1)]),
}


def _vmap_mlx_bug(name, in_axes):
    """Why MLX 0.32.4 is wrong for this program and in_axes, or None (mlxref is right
    there: test_vmap_matches_loop checks it)."""
    src_ax = in_axes[0]
    src_ax = None if src_ax is None else src_ax % (len(VMAP_PROGRAMS[name][1][0][1]) + 1)
    if name == "expand_dims" and src_ax == 2:
        # ExpandDims::vmap compares each axis with the original batch axis, not
        # with the one already shifted by the axes inserted before it: axis 2
        # is then taken to lie after the batch axis (axes (0, 2, -1), batch 2).
        return "ExpandDims::vmap: a wrong shape when an inserted axis passes the batch axis"
    return None


@needs_mlx
@pytest.mark.parametrize("name, in_axes, out_axes", vmap_configs(VMAP_PROGRAMS))
def test_vmap_matches_mlx(name, in_axes, out_axes):
    program, specs, _ = VMAP_PROGRAMS[name]
    check_vmap_against_mlx(program, specs, in_axes, out_axes, _vmap_mlx_bug(name, in_axes))


@pytest.mark.parametrize("name, in_axes, out_axes", vmap_configs(VMAP_PROGRAMS))
def test_vmap_matches_loop(name, in_axes, out_axes):
    program, specs, _ = VMAP_PROGRAMS[name]
    check_vmap_against_loop(program, specs, in_axes, out_axes)


def _pad_value(m, x, v):
    return m.pad(x, ((1, 0), (0, 2)), constant_values=v)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, 0), (1, 0), (-1, 0)])
def test_pad_with_batched_value_goes_further_than_mlx(in_axes):
    # MLX: "[Pad::vmap] Vmap over padding value is not supported."; mlxref pads
    # each example with its own value.
    specs = [("f", (2, 3)), ("f", ())]
    xs = example_inputs(mx, specs, in_axes)
    got = mx.vmap(lambda x, v: _pad_value(mx, x, v), in_axes=in_axes)(*xs)
    assert_stacked(got, 0, loop_over_examples(_pad_value, xs, in_axes))
    if real_mx is not None:
        theirs = example_inputs(real_mx, specs, in_axes)
        with pytest.raises(ValueError, match=r"\[Pad::vmap\] Vmap over padding value"):
            real_mx.vmap(lambda x, v: _pad_value(real_mx, x, v), in_axes=in_axes)(*theirs)


# name -> (program(m, *args), specs, inner in_axes, outer in_axes, out axes (inner, outer))
NESTED = {
    "concatenate_transpose": (
        lambda m, a, b: m.concatenate([a.T, b], axis=1), [("f", (2, 3)), ("f", (3, 3))],
        (1, None), (0, 2), (2, 0)),
}


@pytest.mark.parametrize("name", list(NESTED))
def test_nested_vmap(name):
    check_nested_vmap(*NESTED[name])


# vmap of grad: per-example gradients through the rules' own vjps.
# name -> (loss(m, *args), specs, argnums, in_axes)
GRADS = {
    "shape_ops": (
        lambda m, a, b: (m.pad(m.concatenate([a, b.T], axis=0), 1).reshape(-1, 2)[::2]
                         * m.broadcast_to(b[:1, :1], (8, 2))).sum(),
        [("f", (2, 3)), ("f", (3, 2))], (0, 1), (1, 0)),
    "split_squeeze": (
        lambda m, x: (lambda p: (m.squeeze(p[0], 2) * m.squeeze(p[2], (0, 2))).sum())(
            m.split(m.expand_dims(x, 0), 3, axis=2)), [("f", (2, 3))], 0, (0,)),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_vmap_of_grad(name):
    check_vmap_of_grad(*GRADS[name])
