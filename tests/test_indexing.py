"""Indexing: a[index], a[index] = v (``ops.setitem``), take, take_along_axis.

Expected values come from the definition (numpy's indexing rules written as
Python loops over nested lists) or from real MLX.
"""

import re

import pytest

import mlxref.core as mx
from mlxref.core.ops.indexing import getitem, setitem
from support import assert_array, assert_new_handle, assert_same_as_mlx, needs_mlx, real_mx
from mlxref.core.array import elements


def arange(n, shape=None, dtype=None):
    a = mx.array(list(range(n)), dtype)
    return a if shape is None else mx.reshape(a, shape)


A = [[0, 1, 2], [3, 4, 5]]  # arange(6).reshape(2, 3)


def B(x, y, z):  # arange(24).reshape(2, 3, 4)
    return 12 * x + 4 * y + z


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


@pytest.fixture
def a():
    return arange(6, (2, 3))


@pytest.fixture
def b():
    return arange(24, (2, 3, 4))


I = [1, 0]  # noqa: E741


# --- basic indexing: ints, slices, None, ... ----------------------------------------------


def test_int_indices(a, b):
    assert_array(a[1], A[1], mx.int32, (3,))
    assert_array(a[-1], A[1])
    assert_array(a[-2], A[0])
    assert_array(b[1, 2, 3], B(1, 2, 3), shape=())
    assert_array(b[-1, -2, -3], B(1, 1, 1), shape=())
    assert_array(b[1, :, 2], [B(1, y, 2) for y in range(3)])
    assert_array(a[mx.array(1)], A[1], shape=(3,))
    assert getitem(a, 1).tolist() == A[1]


def test_slices(a, b):
    assert_new_handle(a[:], a)
    assert_array(a[1:], [A[1]], shape=(1, 3))
    assert_array(a[::-1], [A[1], A[0]])
    assert_array(a[:, ::-2], [[2, 0], [5, 3]])
    assert_array(a[::-1, ::-2], [[5, 3], [2, 0]])
    assert_array(a[1:-5:-1], [A[1], A[0]])
    assert a[5:10].shape == (0, 3)
    assert_array(a[-10:], A)
    assert_array(a[:, 10:-10:-1], [r[::-1] for r in A])
    assert_array(a[:, ::5], [[0], [3]])
    want = [[[B(x, y, z) for z in range(4)[::-3]] for y in range(3)[::2]] for x in range(2)[1:]]
    assert_array(b[1:, ::2, ::-3], want, shape=(1, 2, 2))


def test_none_and_ellipsis(a, b):
    assert_array(a[None], [A], shape=(1, 2, 3))
    assert_new_handle(a[...], a)
    assert_new_handle(a[()], a)
    assert a[:, None].shape == (2, 1, 3)
    assert_array(a[None, 1, None], [[A[1]]], shape=(1, 1, 3))
    assert_array(a[..., 1], [1, 4])
    assert_array(a[1, ...], A[1])
    assert a[..., None].shape == (2, 3, 1)
    assert a[None, ..., None].shape == (1, 2, 3, 1)
    assert_array(b[0, ..., 1], [B(0, y, 1) for y in range(3)])
    assert_array(b[..., 0, 1], [B(x, 0, 1) for x in range(2)])
    assert_array(b[:, None, 1], [[[B(x, 1, z) for z in range(4)]] for x in range(2)])


def test_scalar_and_empty_arrays():
    s = mx.array(3)
    assert_array(s[None], [3], shape=(1,))
    assert_new_handle(s[...], s)
    assert_new_handle(s[()], s)
    assert s[None, ..., None].shape == (1, 1)
    assert mx.zeros((0, 3))[:, 1].shape == (0,)
    assert mx.zeros((2, 0))[1].shape == (0,)
    assert mx.zeros((0, 3))[mx.array([], mx.int32)].shape == (0, 3)


def test_basic_index_errors(a, b):
    s = mx.array(3)
    with raises(ValueError, "too many indices for array: array is 0-dimensional"):
        s[0]
    with raises(ValueError, "too many indices for array: array is 0-dimensional"):
        s[:]
    with raises(ValueError, "Too many indices for array with 0 dimensions."):
        s[0,]
    with raises(ValueError, "Too many indices for array with 2 dimensions."):
        a[0, 0, 0]
    with raises(ValueError, "Too many indices for array with 3 dimensions."):
        b[mx.array([0]), 0, 0, 0]
    with raises(ValueError, "An index can only have a single ellipsis (...)"):
        b[..., 0, ...]
    with raises(ValueError, "Cannot index mlx array using the given type."):
        a[1.0]
    with raises(ValueError, "Cannot index mlx array using the given type."):
        a["a"]
    with raises(ValueError, "Cannot index mlx array using the given type."):
        a[True]
    with raises(ValueError, "Cannot index mlx array using the given type yet"):
        a[0, 1.0]
    with raises(ValueError, "Cannot index mlx array using the given type yet"):
        a[(0, 1),]
    with raises(ValueError, "Slice indices must be integers or None."):
        a[0.5:]
    with raises(ValueError, "Slice indices must be integers or None."):
        a[True:]
    with raises(ValueError, "slice step cannot be zero"):  # MLX crashes here
        a[::0]


def test_int_index_out_of_bounds_is_an_error_at_once(a):
    # MLX returns garbage (or crashes); mlxref raises before building anything.
    with raises(IndexError, "Index 5 is out of bounds for axis 0 with size 2."):
        a[5]
    with raises(IndexError, "Index -3 is out of bounds for axis 0 with size 2."):
        a[-3]
    with raises(IndexError, "Index 7 is out of bounds for axis 1 with size 3."):
        a[0, 7]
    with raises(IndexError, "Index 7 is out of bounds for axis 1 with size 3."):
        a[mx.array([0]), 7]


# --- integer arrays -----------------------------------------------------------------------


def test_one_array_index(a):
    i = mx.array(I)
    assert_array(a[i], [A[1], A[0]], mx.int32, (2, 3))
    assert_array(a[[1, 0]], [A[1], A[0]])
    assert_array(a[[[1], [0]]], [[A[1]], [A[0]]], shape=(2, 1, 3))
    assert_array(a[:, [2, 0]], [[2, 0], [5, 3]])
    assert_array(a[mx.array([-1])], [A[1]])
    assert_array(a[mx.array([1], mx.int64)], [A[1]])
    assert a[mx.array([], mx.int32)].shape == (0, 3)


def test_adjacent_array_indices_stay_in_place(b):
    i = mx.array(I)
    # b[:, i, i]: the broadcast index dims replace axes 1 and 2
    assert_array(b[:, i, i], [[B(x, k, k) for k in I] for x in range(2)], shape=(2, 2))
    # an int counts as an array index
    assert_array(b[:, i, 0], [[B(x, k, 0) for k in I] for x in range(2)])
    assert_array(b[0, i, 1:3], [[B(0, k, z) for z in (1, 2)] for k in I])
    assert_array(
        b[1:, i, 1:3], [[[B(x, k, z) for z in (1, 2)] for k in I] for x in (1,)], shape=(1, 2, 2)
    )
    assert b[None, i, i].shape == (1, 2, 4)
    assert b[i, i, None].shape == (2, 1, 4)


def test_separated_array_indices_go_first(b):
    i = mx.array(I)
    assert_array(b[i, :, i], [[B(k, y, k) for y in range(3)] for k in I], shape=(2, 3))
    assert_array(b[i, :, 0], [[B(k, y, 0) for y in range(3)] for k in I])
    assert_array(b[0, :, i], [[B(0, y, k) for y in range(3)] for k in I], shape=(2, 3))
    # a None between two array indices separates them too
    assert_array(b[i, None, i], [[[B(k, k, z) for z in range(4)]] for k in I], shape=(2, 1, 4))
    assert b[None, i, :, i].shape == (2, 1, 3)


def test_broadcast_array_indices(b):
    rows = mx.array([[0], [1]])
    cols = mx.array([0, 2])
    want = [[[B(r, c, z) for z in range(4)] for c in (0, 2)] for r in (0, 1)]
    assert_array(b[rows, cols], want, shape=(2, 2, 4))
    m = mx.array([[0, 1], [1, 0]])
    assert_array(b[m, 1], [[[B(x, 1, z) for z in range(4)] for x in r] for r in ([0, 1], [1, 0])])


def test_array_index_with_slices(b):
    i = mx.array(I)
    assert_array(b[i, ::-1], [[[B(k, y, z) for z in range(4)] for y in (2, 1, 0)] for k in I])
    assert_array(
        b[:, ::2, i], [[[B(x, y, k) for k in I] for y in (0, 2)] for x in range(2)], shape=(2, 2, 2)
    )
    assert_array(b[..., i], [[[B(x, y, k) for k in I] for y in range(3)] for x in range(2)])


def test_array_index_errors(a):
    with raises(ValueError, "too many indices for array: array is 0-dimensional"):
        mx.array(3)[mx.array([0])]
    with raises(ValueError, "boolean indices are not yet supported"):
        a[mx.array([True, False])]
    with raises(ValueError, "boolean indices are not yet supported"):
        a[[True, False]]
    with raises(ValueError, "[Gather] Boolean indices not supported."):
        a[mx.array([True, False]), 0]
    with raises(ValueError, "[gather] Got indices with invalid dtype. Indices must be integral."):
        a[mx.array([0.0])]
    with raises(ValueError, "[gather] Got indices with invalid dtype. Indices must be integral."):
        a[[]]
    with raises(ValueError, "[take] Cannot do a non-empty take from an empty axis."):
        mx.zeros((0, 3))[0]


def test_array_index_out_of_bounds_is_an_error_at_eval(a):
    out = a[mx.array([0, 5])]  # lazy: nothing is read yet
    assert out.shape == (2, 3)
    with raises(IndexError, "Index 5 is out of bounds for axis 0 with size 2."):
        out.tolist()
    with raises(IndexError, "Index -4 is out of bounds for axis 1 with size 3."):
        a[:, mx.array([-4])].tolist()


# --- take, take_along_axis --------------------------------------------------------------------


def test_take(a, b):
    assert_array(mx.take(a, mx.array([4, 0])), [4, 0], mx.int32, (2,))
    assert_array(mx.take(a, mx.array([1, 0]), axis=0), [A[1], A[0]])
    assert_array(mx.take(a, mx.array([2, 0, 1]), axis=-1), [[2, 0, 1], [5, 3, 4]])
    t = mx.take(a, mx.array([[0, 1], [1, 0]]), axis=1)
    assert_array(t, [[[0, 1], [1, 0]], [[3, 4], [4, 3]]])
    t = mx.take(b, mx.array([[0, 1], [2, 0]]), axis=1)
    assert t.shape == (2, 2, 2, 4)
    assert t.tolist() == [
        [[[B(x, y, z) for z in range(4)] for y in row] for row in ([0, 1], [2, 0])]
        for x in range(2)
    ]
    t = mx.take(b, mx.array(1), axis=2)
    assert_array(t, [[B(x, y, 1) for y in range(3)] for x in range(2)])
    assert_array(mx.take(a, mx.array([-1, -3]), axis=1), [[2, 0], [5, 3]])
    assert_array(mx.take(mx.array(5), mx.array([0, 0])), [5, 5])
    assert mx.take(mx.zeros((0, 3)), mx.array([], mx.int32), axis=0).shape == (0, 3)


def test_take_int(a):
    assert_array(mx.take(a, 4), 4, shape=())
    assert_array(mx.take(a, 1, axis=1), [1, 4])
    assert_array(mx.take(a, 1, axis=0), A[1])
    # MLX fails in squeeze for a negative int; mlxref counts it from the end
    assert_array(mx.take(a, -1, axis=1), [2, 5])
    assert_array(mx.take(mx.array(5), 0), 5, shape=())


def test_take_errors(a):
    with raises(IndexError, "[take] Received invalid axis 2 for array with 2 dimensions."):
        mx.take(a, mx.array([0]), axis=2)
    with raises(IndexError, "[take] Received invalid axis -3 for array with 2 dimensions."):
        mx.take(a, 0, axis=-3)
    with raises(IndexError, "[take] Received invalid axis 0 for array with 0 dimensions."):
        mx.take(mx.array(5), mx.array([0]), axis=0)
    with raises(ValueError, "[take] Cannot do a non-empty take from an empty axis."):
        mx.take(mx.zeros((0, 3)), mx.array([0]), axis=0)
    with raises(ValueError, "[take] Cannot do a non-empty take from an array with zero elements."):
        mx.take(mx.zeros((0, 3)), 0, axis=0)
    with raises(ValueError, "[gather] Got indices with invalid dtype. Indices must be integral."):
        mx.take(a, mx.array([0.0]), axis=0)
    with raises(ValueError, "[Gather] Boolean indices not supported."):
        mx.take(a, mx.array([True]), axis=0)
    with raises(IndexError, "[take] Index 7 is out of bounds for axis 0 with size 6."):
        mx.take(a, 7)
    with raises(IndexError, "[take] Index 3 is out of bounds for axis 1 with size 3."):
        mx.take(a, 3, axis=1)
    with raises(IndexError, "[take] Index 5 is out of bounds for axis 0 with size 2."):
        mx.take(mx.array([1, 2]), mx.array([5])).tolist()
    with pytest.raises(TypeError):
        mx.take(a, [0, 1], axis=0)


def test_take_along_axis(a, b):
    assert_array(mx.take_along_axis(a, mx.array([[0], [2]]), axis=1), [[0], [5]], mx.int32)
    assert_array(mx.take_along_axis(a, mx.array([[0], [2]])), [[0], [5]])  # axis=-1
    assert_array(mx.take_along_axis(a, mx.array([[1, 0, 1]]), axis=0), [[3, 1, 5]])
    assert_array(mx.take_along_axis(a, mx.array([5, 0]), axis=None), [5, 0])
    # indices broadcast against a on the other axes, and a against indices
    assert_array(mx.take_along_axis(a, mx.array([[0, 1]]), axis=1), [[0, 1], [3, 4]])
    col = mx.array([[0], [1], [2]])
    assert_array(mx.take_along_axis(col, mx.array([[2, 0]]), axis=0), [[2, 0]], shape=(1, 2))
    assert_array(mx.take_along_axis(a, mx.array([[-1], [-2]]), axis=1), [[2], [4]])
    idx = [[[3, 0]], [[1, 2]]]
    want = [[[B(x, y, k) for k in idx[x][0]] for y in range(3)] for x in range(2)]
    assert_array(mx.take_along_axis(b, mx.array(idx), axis=-1), want, shape=(2, 3, 2))


def test_take_along_axis_errors(a):
    with raises(
        ValueError, "[take_along_axis] Indices of dimension 1 does not match array of dimension 2."
    ):
        mx.take_along_axis(a, mx.array([0]), axis=1)
    msg = "[take_along_axis] Axis 2 is out of bounds for array with 2 dimensions."
    with raises(IndexError, msg):
        mx.take_along_axis(a, mx.array([[0]]), axis=2)
    with raises(ValueError, "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."):
        mx.take_along_axis(a, mx.array([[0], [1], [0]]), axis=1)
    with raises(
        ValueError, "[take_along_axis] Got indices with invalid dtype. Indices must be integral."
    ):
        mx.take_along_axis(a, mx.array([[0.0]]), axis=1)
    out = mx.take_along_axis(a, mx.array([[7], [-2]]), axis=1)
    with raises(IndexError, "[take_along_axis] Index 7 is out of bounds for axis 1 with size 3."):
        out.tolist()


# --- a[index] = v ----------------------------------------------------------------------------


def test_setitem_returns_a_new_array_and_leaves_a_alone(a):
    before = a.tolist()
    data = elements(a)
    out = setitem(a, 1, 9)
    assert out is not a and out.shape == (2, 3) and out.dtype is mx.int32
    assert out.tolist() == [A[0], [9, 9, 9]]
    assert a.tolist() == before and a.data() is data and data == [0, 1, 2, 3, 4, 5]


def test_setitem_with_ints_and_slices(a, b):
    assert setitem(a, -1, mx.array([7, 8, 9])).tolist() == [A[0], [7, 8, 9]]
    assert setitem(a, slice(None, None, -1), mx.array([[1, 2, 3]])).tolist() == [[1, 2, 3]] * 2
    assert setitem(a, slice(1, None), mx.array([[[1, 2, 3]]])).tolist() == [A[0], [1, 2, 3]]
    assert setitem(a, slice(5, 9), 4).tolist() == A
    assert setitem(a, (0, slice(1, None)), mx.array([7, 8])).tolist() == [[0, 7, 8], A[1]]
    assert setitem(a, (-1, -3), 100).tolist() == [A[0], [100, 4, 5]]
    assert setitem(a, (slice(None), slice(None, None, -2)), mx.array([[10, 20]])).tolist() == [
        [20, 1, 10],
        [20, 4, 10],
    ]
    out = setitem(b, (0, ..., 1), 50)
    assert out.tolist() == [
        [[50 if (x, z) == (0, 1) else B(x, y, z) for z in range(4)] for y in range(3)]
        for x in range(2)
    ]
    assert setitem(a, (1, None), mx.array([[5, 6, 7]])).tolist() == [A[0], [5, 6, 7]]


def test_setitem_whole_array(a):
    assert setitem(a, None, 5).tolist() == [[5] * 3] * 2
    assert setitem(a, ..., mx.array([[[1, 2, 3]]])).tolist() == [[1, 2, 3]] * 2
    assert setitem(a, (), mx.array([[1], [2]])).tolist() == [[1] * 3, [2] * 3]
    s = mx.array(3.0)
    assert_array(setitem(s, ..., 1), 1.0, mx.float32, ())
    # MLX keeps the value's dtype for these; an assignment keeps a's
    assert_array(setitem(a, ..., mx.array([1.5, 2.5, 3.5])), [[1, 2, 3]] * 2, mx.int32)


def test_setitem_casts_to_the_array_dtype(a):
    assert_array(setitem(a, 0, 2.7), [[2, 2, 2], A[1]], mx.int32)
    assert_array(setitem(a, 0, mx.array([1.5, 2.5, 3.5])), [[1, 2, 3], A[1]], mx.int32)
    assert_array(setitem(mx.zeros((2, 3)), 0, 7), [[7.0] * 3, [0.0] * 3], mx.float32)
    assert_array(setitem(a > 2, 0, 5), [[True] * 3] * 2, mx.bool_)
    assert_array(setitem(a, mx.array([1]), 2.5), [A[0], [2, 2, 2]], mx.int32)


def test_setitem_with_arrays(a, b):
    i = mx.array(I)
    assert setitem(a, i, mx.array([[1, 2, 3], [4, 5, 6]])).tolist() == [[4, 5, 6], [1, 2, 3]]
    # repeated indices: the last write wins
    out = setitem(a, mx.array([0, 0]), mx.array([[1, 2, 3], [4, 5, 6]]))
    assert out.tolist() == [[4, 5, 6], A[1]]
    assert setitem(a, [1], 9).tolist() == [A[0], [9, 9, 9]]
    assert setitem(a, mx.array([-1]), 9).tolist() == [A[0], [9, 9, 9]]
    assert setitem(a, (i, i), mx.array([10, 20])).tolist() == [[20, 1, 2], [3, 10, 5]]
    assert setitem(a, (slice(None), i), mx.array([[1], [2]])).tolist() == [[1, 1, 2], [2, 2, 5]]
    assert setitem(a, (i, 2), mx.array([10, 20])).tolist() == [[0, 1, 20], [3, 4, 10]]
    out = setitem(b, (i, slice(None), 1), mx.array([[10], [20]]))
    new = {1: 10, 0: 20}
    want = [
        [[new[x] if z == 1 else B(x, y, z) for z in range(4)] for y in range(3)] for x in range(2)
    ]
    assert out.tolist() == want
    assert setitem(a, (slice(None), mx.array([], mx.int32)), 1).tolist() == A


def test_setitem_with_a_boolean_mask(a, b):
    assert setitem(a, mx.array([True, False]), 9).tolist() == [[9] * 3, A[1]]
    mask = mx.array([[True, False, True], [False, False, True]])
    assert setitem(a, mask, mx.array([1, 2, 3])).tolist() == [[1, 1, 2], [3, 4, 3]]
    assert setitem(a, [True, False], 9).tolist() == [[9] * 3, A[1]]
    assert setitem(a, True, 9).tolist() == [[9] * 3] * 2
    assert setitem(a, False, 9).tolist() == A
    out = setitem(b, mx.array([True, False]), mx.array([[1, 2, 3, 4]]))
    assert out.tolist()[0] == [[1, 2, 3, 4]] * 3 and out.tolist()[1] == b.tolist()[1]
    assert_array(setitem(mx.zeros((2,)), mx.array([True, False]), 2.5), [2.5, 0.0], mx.float32)


def test_setitem_errors(a):
    with raises(ValueError, "Too many indices for array with 2 dimensions."):
        setitem(a, (0, 0, 0), 1)
    with raises(ValueError, "too many indices for array: array is 0-dimensional"):
        setitem(mx.array(3), 0, 1)
    with raises(ValueError, "[broadcast_shapes] Shapes (2) and (1,3) cannot be broadcast."):
        setitem(a, 0, mx.array([1, 2]))
    with raises(ValueError, "[broadcast_shapes] Shapes (2) and (2,3) cannot be broadcast."):
        setitem(a, mx.array(I), mx.array([1, 2]))
    with raises(ValueError, "Cannot broadcast array of shape (2,3) into shape (1,3)."):
        setitem(a, 0, mx.array([[1, 2, 3], [1, 2, 3]]))
    msg = "[squeeze] Cannot squeeze axis -3 with size 2 which is not equal to 1."
    with raises(ValueError, msg):
        setitem(a, (None, 0), mx.array([[1], [2]]))
    with raises(ValueError, "Cannot index mlx array using the given type."):
        setitem(a, 1.0, 1)
    with raises(ValueError, "Invalid type list received in array initialization."):
        setitem(a, 0, [1, 2, 3])
    with raises(ValueError, "[scatter] Got indices with invalid dtype. Indices must be integral."):
        setitem(a, mx.array([0.0]), 1)
    with raises(ValueError, "[scatter] Boolean indices not supported."):
        setitem(a, (mx.array([True, False]), 0), 5)
    with raises(
        ValueError,
        "[masked_scatter] The boolean mask should have the same shape as the beginning of the "
        "indexed array but the mask has shape (3) and the array has shape (2,3)",
    ):
        setitem(a, mx.array([True, False, True]), 1)
    short = setitem(a, mx.array([[True, True, True], [True, False, False]]), mx.array([1, 2]))
    msg = "[MaskedScatter::eval_cpu] Source does not have enough elements for mask."
    with raises(RuntimeError, msg):
        short.tolist()


def test_setitem_out_of_bounds(a):
    with raises(IndexError, "Index 5 is out of bounds for axis 0 with size 2."):
        setitem(a, 5, 1)
    with raises(IndexError, "Index -4 is out of bounds for axis 1 with size 3."):
        setitem(a, (0, -4), 1)
    out = setitem(a, (mx.array(I), mx.array([0, 3])), 1)  # lazy
    with raises(IndexError, "Index 3 is out of bounds for axis 1 with size 3."):
        out.tolist()


def test_setitem_syntax(a):
    a[1] = 9
    assert a.tolist() == [A[0], [9, 9, 9]]


def test_setitem_leaves_earlier_consumers_with_the_old_value():
    # MLX swaps the array's descriptor: a node built from `a` before the
    # assignment keeps reading the old value; an alias sees the new one.
    a = mx.array([1, 2, 3])
    before = a + 1
    alias = a
    a[0] = 5
    assert before.tolist() == [2, 3, 4]
    assert alias.tolist() == [5, 2, 3]
    assert a.tolist() == [5, 2, 3]


# --- against real MLX -------------------------------------------------------------------------

GET_CASES = [
    lambda a, b, m: a[1],
    lambda a, b, m: a[-1],
    lambda a, b, m: b[1, -2],
    lambda a, b, m: b[1, 2, 3],
    lambda a, b, m: a[::-1, ::-2],
    lambda a, b, m: a[1:-5:-1],
    lambda a, b, m: a[:, 10:-10:-1],
    lambda a, b, m: a[5:10],
    lambda a, b, m: b[1:, ::2, ::-3],
    lambda a, b, m: b[-1:0:-1, 1:, -3:],
    lambda a, b, m: a[None, 1, None],
    lambda a, b, m: b[:, None, 1],
    lambda a, b, m: b[0, ..., 1],
    lambda a, b, m: b[..., None, 2],
    lambda a, b, m: b[None, ..., None],
    lambda a, b, m: a[m.array([1, 0])],
    lambda a, b, m: a[[1, 0, 1]],
    lambda a, b, m: a[[[1], [0]]],
    lambda a, b, m: a[:, [2, 0]],
    lambda a, b, m: a[m.array([-1, -2])],
    lambda a, b, m: a[m.array(1)],
    lambda a, b, m: b[:, m.array([1, 0]), m.array([1, 0])],
    lambda a, b, m: b[m.array([1, 0]), :, m.array([1, 0])],
    lambda a, b, m: b[m.array([1, 0]), :, 0],
    lambda a, b, m: b[:, m.array([1, 0]), 0],
    lambda a, b, m: b[0, :, m.array([2, 3])],
    lambda a, b, m: b[m.array([1, 0]), None, m.array([1, 0])],
    lambda a, b, m: b[m.array([1, 0]), m.array([1, 0]), None],
    lambda a, b, m: b[None, m.array([1, 0]), :, m.array([1, 0])],
    lambda a, b, m: b[m.array([[0, 1], [1, 0]]), 1],
    lambda a, b, m: b[m.array([[0], [1]]), m.array([0, 2])],
    lambda a, b, m: b[m.array([1, 0]), ::-1],
    lambda a, b, m: b[:, ::2, m.array([1, 0])],
    lambda a, b, m: b[1:, m.array([1, 0]), 1:3],
    lambda a, b, m: b[..., m.array([3, 0])],
    lambda a, b, m: b[m.array([1, 0]), ..., 1],
    lambda a, b, m: b[None, :, m.array([1, 0]), None],
    lambda a, b, m: b[1:2, None, m.array([2, 1])],
    lambda a, b, m: b[m.array([[0, 1]]), m.array([[1], [2]]), 3],
    lambda a, b, m: m.zeros((0, 3))[:, 1],
    lambda a, b, m: m.take(b, m.array([[0, 1], [2, 0]]), axis=1),
    lambda a, b, m: m.take(b, m.array([3, -1, 0])),
    lambda a, b, m: m.take(b, 3, axis=2),
    lambda a, b, m: m.take(b, 1, axis=-2),
    lambda a, b, m: m.take_along_axis(b, m.array([[[3, 0]], [[1, 2]]]), axis=-1),
    lambda a, b, m: m.take_along_axis(b, m.array([[[2], [0], [1], [1]]]).reshape(1, 1, 4), axis=1),
    lambda a, b, m: m.take_along_axis(a, m.array([5, 0, 3]), axis=None),
]


def _inputs(m):
    a = m.array([[0, 1, 2], [3, 4, 5]])
    b = m.reshape(m.array(list(range(24))), (2, 3, 4))
    return a, b, m


@needs_mlx
@pytest.mark.parametrize("case", range(len(GET_CASES)))
def test_getitem_matches_mlx(case):
    f = GET_CASES[case]
    assert_same_as_mlx(f(*_inputs(mx)), f(*_inputs(real_mx)))


SET_CASES = [
    (lambda m: 1, lambda m: 9),
    (lambda m: -1, lambda m: m.array([7, 8, 9, 10])),
    (lambda m: slice(None, None, -1), lambda m: m.array([[1, 2, 3, 4]])),
    (lambda m: (0, slice(1, None)), lambda m: m.array([7.5, 8.5, 9.5, 10.5])),
    (lambda m: (slice(None), slice(None, None, -2)), lambda m: m.array([[10], [20]])),
    (lambda m: (slice(None, None, -1), 1), lambda m: m.array([10, 20, 30, 40])),
    (lambda m: (1, None, slice(None), 2), lambda m: m.array([1, 2, 3])),
    (lambda m: (0, Ellipsis, 1), lambda m: 50),
    (lambda m: (Ellipsis, 1), lambda m: m.array([1, 2, 3])),
    (lambda m: None, lambda m: m.array([[1], [2], [3]])),
    (lambda m: Ellipsis, lambda m: m.array([[[1, 2, 3, 4]]])),
    (lambda m: m.array([1, 0]), lambda m: m.array([[[1, 2, 3, 4]], [[5, 6, 7, 8]]])),
    (lambda m: m.array([0, 0]), lambda m: m.array([[[1]], [[2]]])),
    (lambda m: [1], lambda m: 9),
    (lambda m: m.array([[0], [1]]), lambda m: 3),
    (lambda m: (m.array([1, 0]), m.array([1, 0])), lambda m: m.array([[10], [20]])),
    (lambda m: (slice(None), m.array([2, 0])), lambda m: m.array([[1], [2]])),
    (lambda m: (m.array([1, 0]), slice(None), 1), lambda m: m.array([[10], [20]])),
    (lambda m: (m.array([1, 0]), 2), lambda m: m.array([[10], [20]])),
    (lambda m: (m.array([1, 0]), slice(None, None, -1)), lambda m: m.array([[[1], [2], [3]]])),
    (
        lambda m: (slice(None), m.array([0, 2]), slice(1, 3)),
        lambda m: m.array([[[1, 2]], [[3, 4]]]),
    ),
    (lambda m: (m.array([0, 1]), None, m.array([0, 1])), lambda m: m.array([[[7]], [[8]]])),
    (lambda m: (m.array([1, 0]), None, slice(None), 0), lambda m: 3),
    (lambda m: (slice(None), 1, m.array([1, 0])), lambda m: m.array([[1, 2], [3, 4]])),
    (lambda m: (None, 0, m.array([1, 0]), slice(1, 3)), lambda m: m.array([[5, 6], [7, 8]])),
    (lambda m: (slice(0, 2), m.array([1, 0]), slice(None, None, 2)), lambda m: m.array([5, 6])),
    (lambda m: (m.array([[0], [1]]), m.array([0, 2])), lambda m: m.array([1, 2, 3, 4])),
    (lambda m: (Ellipsis, m.array([1, 0])), lambda m: m.array([1, 2])),
    (lambda m: (slice(1, None), m.array([1, 0])), lambda m: m.array([4, 3, 2, 1])),
    (lambda m: (m.array([1, 0]), m.array([1, 0]), m.array([3, 0])), lambda m: 0),
    (lambda m: m.array([True, False]), lambda m: m.array([[1, 2, 3, 4]])),
    (
        lambda m: m.array([[True, False, True], [False, True, False]]),
        lambda m: m.reshape(m.array(list(range(16))), (4, 4)),
    ),
]


@needs_mlx
@pytest.mark.parametrize("case", range(len(SET_CASES)))
def test_setitem_matches_mlx(case):
    index, value = SET_CASES[case]
    theirs = real_mx.reshape(real_mx.array(list(range(24))), (2, 3, 4))
    theirs[index(real_mx)] = value(real_mx)
    ours = setitem(arange(24, (2, 3, 4)), index(mx), value(mx))
    assert_same_as_mlx(ours, theirs)


GET_ERRORS = [
    lambda a, b, m: a[0, 0, 0],
    lambda a, b, m: m.array(3)[0],
    lambda a, b, m: m.array(3)[0,],
    lambda a, b, m: a[m.array([True, False])],
    lambda a, b, m: a[m.array([True, False]), 0],
    lambda a, b, m: a[m.array([0.0])],
    lambda a, b, m: a[1.5],
    lambda a, b, m: a[0, 1.5],
    lambda a, b, m: a[..., ...],
    lambda a, b, m: a[0.5:],
    lambda a, b, m: m.zeros((0, 3))[0],
    lambda a, b, m: m.take(a, m.array([0]), axis=-3),
    lambda a, b, m: m.take(m.zeros((0, 3)), 0, axis=0),
    lambda a, b, m: m.take_along_axis(a, m.array([[0]]), axis=2),
    lambda a, b, m: m.take_along_axis(a, m.array([0]), axis=1),
    lambda a, b, m: m.take_along_axis(a, m.array([[0], [1], [0]]), axis=1),
]


@needs_mlx
@pytest.mark.parametrize("case", range(len(GET_ERRORS)))
def test_index_errors_match_mlx(case):
    f = GET_ERRORS[case]
    with pytest.raises(Exception) as theirs:
        f(*_inputs(real_mx))
    with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
        f(*_inputs(mx))
