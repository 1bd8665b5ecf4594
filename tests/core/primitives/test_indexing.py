"""The indexing family (mlxref/core/primitives/indexing.py: Slice, SliceUpdate,
DynamicSlice, DynamicSliceUpdate, Gather, GatherAxis, Scatter, MaskedScatter;
ops/indexing.py; MLX's mlx/ops.cpp, mlx/primitives.cpp and mlx/backend/cpu/indexing.cpp):
a[index], a[index] = v (``ops.setitem``, boolean masks and NumPy indices included), take,
take_along_axis, ``x.at[index].add(v)`` and friends, put_along_axis, mx.slice and
mx.slice_update.

Expected values come from the definition (numpy's indexing rules written as
Python loops over nested lists) or from real MLX; vmap's results are also checked
against a loop over the examples.
"""

import math
import re

import pytest

try:
    import numpy as np
except ImportError:  # not in a student copy's venv (mlxref assignment make)
    np = None

import mlxref.core as mx
from mlxref.core.array import elements
from mlxref.core.ops.indexing import getitem, setitem
from mlxref.core.primitives import indexing as P
from mlxref.testing import check_grads
from support import (EXAMPLES, assert_array, assert_both, assert_new_handle, assert_same_as_mlx,
                     check_jvp_against_mlx, check_nested_vmap, check_rule_grads,
                     check_vjp_against_mlx, check_vmap_against_loop, check_vmap_against_mlx,
                     check_vmap_of_grad, close, index_kind, kind_array, needs_mlx, real_mx,
                     rule_case, set_item, vmap_configs)


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


# === x.at[index].add(v) and friends, put_along_axis, mx.slice and mx.slice_update with
# array starts: values, dtypes, gradients and errors, with real MLX as the oracle
# wherever MLX has the rule (and gets it right). Where MLX has no rule (the vjp of a
# scatter-prod, any scatter jvp, the jvp of a slice update with prod/max/min), the
# rules are checked against the definition: finite differences of mlxref's own forward
# computation in float64, and the vjp/jvp transpose identity. ========================

OPS = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]


def both(build, *inputs):
    """``build(m, *arrays)`` run with mlxref and real MLX on the same (list, dtype) inputs."""
    ours = build(mx, *(mx.array(v, getattr(mx, d)) for v, d in inputs))
    theirs = build(real_mx, *(real_mx.array(v, getattr(real_mx, d)) for v, d in inputs))
    return ours, theirs


def index_for(m, kind):
    """One index of each kind, built with the module ``m`` (for a (4, 3) array)."""
    return {
        "int": 1,
        "negative int": -1,
        "slice": slice(1, 3),
        "strided slice": slice(None, None, -2),
        "array": m.array([2, 0]),
        "array with duplicates": m.array([1, 3, 1, 1]),
        "list": [0, 0, 3],
        "tuple of arrays": (m.array([0, 0, 2]), m.array([1, 1, 2])),
        "array and slice": (m.array([3, 3]), slice(0, 2)),
        "int and array": (2, m.array([0, 2, 0])),
        "slice and array": (slice(None), m.array([1, 1])),
        "ellipsis": (Ellipsis, 1),
        "none": (None, slice(1, 2)),
        "2-d array": m.array([[0, 1], [1, 0]]),
    }[kind]


KINDS = ["int", "negative int", "slice", "strided slice", "array", "array with duplicates",
         "list", "tuple of arrays", "array and slice", "int and array", "slice and array",
         "ellipsis", "none", "2-d array"]

X = [[1.5, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 2.0, -3.5], [-0.25, 1.0, 6.0]]


# --- values --------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kind", KINDS)
def test_every_op_and_index_kind_matches_mlx(op, kind):
    def build(m, x):
        return getattr(x.at[index_for(m, kind)], op)(m.array(1.75))

    ours, theirs = both(build, (X, "float32"))
    assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("op", OPS)
def test_updates_at_a_repeated_index_all_apply(op):
    # x.at[[0, 0, 2]] combines every update into the element it names, in order.
    v = [3.0, -2.0, 0.5]

    def build(m, x, v):
        return getattr(x.at[m.array([0, 0, 2])], op)(v)

    ours, theirs = both(build, ([1.0, 2.0, 4.0], "float32"), (v, "float32"))
    assert_same_as_mlx(ours, theirs)
    # and from the definition, for add and multiply
    if op == "add":
        assert_array(ours, [1 + 3 - 2, 2, 4 + 0.5])
    if op == "multiply":
        assert_array(ours, [1 * 3 * -2, 2, 4 * 0.5])


def test_the_source_array_is_left_alone():
    x = mx.array([1.0, 2.0])
    y = x.at[0].add(5)
    assert x.tolist() == [1.0, 2.0] and y.tolist() == [6.0, 2.0]


@needs_mlx
@pytest.mark.parametrize("dtype,op,x,v", [
    ("float16", "add", [0.0, 1.0], [0.0004, 0.0004, 0.0004, 2049.0]),
    ("bfloat16", "add", [256.0, 1.0], [0.5, 0.5, 0.5, 0.5]),
    ("bfloat16", "multiply", [1.01, 3.0], [1.01, 1.01, 1.01, 1.01]),
    ("float16", "multiply", [60000.0, 1.0], [2.0, 0.5, 1.0, 1.0]),
    ("int32", "divide", [7, 8], [2, 2, 1, 1]),
    ("int32", "multiply", [7, 8], [2.5, 3.9, 1, 1]),
    ("uint8", "subtract", [1, 2], [2, 3, 0, 0]),
    ("int8", "add", [100, 0], [20, 20, 0, 0]),
    ("bool_", "add", [False, True], [True, False, False, False]),
    ("float32", "maximum", [float("nan"), 1.0], [5.0, 1.0, 0.0, 0.0]),
    ("float32", "maximum", [1.0, 1.0], [float("nan"), 1.0, 0.0, 0.0]),
    ("float32", "minimum", [float("nan"), 1.0], [5.0, -1.0, 2.0, 2.0]),
])
def test_dtypes_as_mlx_holds_them(dtype, op, x, v):
    # Sums and products at one element round at every step (the float16 sum
    # of 0.0004 three times, then 2049); integers wrap; int divide multiplies
    # by the reciprocal cast to the integer dtype (0); a nan may stay or go
    # as MLX's ``old > u ? old : u`` has it.
    v_dtype = "float32" if dtype.startswith(("float", "bfloat")) else dtype
    if isinstance(v[0], float) and v_dtype != "float32":
        v_dtype = "float32"

    def build(m, x, v):
        return getattr(x.at[m.array([0, 0, 1, 1])], op)(v)

    ours, theirs = both(build, (x, dtype), (v, v_dtype))
    assert_same_as_mlx(ours, theirs, rtol=0, atol=0)


def test_float16_scatter_add_rounds_after_each_addition():
    # 2048 + 1 is 2048 in float16, three times; once summed first it would be 2051 -> 2052.
    x = mx.array([2048.0], mx.float16)
    y = x.at[mx.array([0, 0, 0])].add(mx.array([1.0, 1.0, 1.0], mx.float16))
    assert y.tolist() == [2048.0]


@needs_mlx
def test_scalar_python_values_and_broadcast_updates():
    def build(m, x):
        return x.at[m.array([0, 2]), 1:].add(m.array([10.0, 20.0]))

    ours, theirs = both(build, (X, "float32"))
    assert_same_as_mlx(ours, theirs)
    ours, theirs = both(lambda m, x: x.at[1].multiply(2), (X, "int32"))
    assert_same_as_mlx(ours, theirs)


# --- ArrayAt and errors ------------------------------------------------------------


@needs_mlx
def test_array_at_is_an_arrayat():
    x = mx.zeros((2,))
    assert isinstance(x.at, mx.ArrayAt) and isinstance(x.at[0], mx.ArrayAt)
    assert type(x.at).__name__ == type(real_mx.zeros((2,)).at).__name__ == "ArrayAt"
    names = [n for n in dir(real_mx.ArrayAt) if not n.startswith("_")]
    assert all(callable(getattr(x.at[0], n)) for n in names)


@needs_mlx
@pytest.mark.parametrize("call", [
    lambda m, x: x.at.add(1),
    lambda m, x: x.at[0].add("a"),
    lambda m, x: x.at[0.5].add(1),
    lambda m, x: x.at[m.array([0.0])].add(1),
    lambda m, x: x.at[m.array([0]), m.array([0]), m.array([0])].add(1),
    lambda m, x: x.at[m.array([0, 1])].add(m.ones((3, 3))),
    lambda m, x: m.array(1.0).at[0].add(1),
])
def test_errors_are_mlxs(call):
    x = mx.zeros((2, 2))
    try:
        call(real_mx, real_mx.zeros((2, 2)))
    except Exception as e:  # noqa: BLE001 - whatever MLX raises is the expected
        expected = (type(e), str(e))
    else:
        pytest.fail("MLX accepts it")
    with pytest.raises(expected[0]) as info:
        mx.eval(call(mx, x))
    assert str(info.value) == expected[1]


def test_a_boolean_index_and_an_index_out_of_bounds_are_clear_errors():
    # MLX: a SystemError with no message, and silently nothing, respectively.
    x = mx.zeros((3,))
    with raises(ValueError, "[scatter] Boolean indices not supported."):
        x.at[mx.array([True, False, True])].add(1)
    with raises(IndexError, "Index 3 is out of bounds for axis 0 with size 3."):
        mx.eval(x.at[mx.array([3])].add(1))
    with raises(IndexError, "Index 5 is out of bounds for axis 0 with size 3."):
        x.at[5].add(1)


@needs_mlx
def test_a_missing_value_is_a_type_error():
    with pytest.raises(TypeError, match=re.escape("maximum(): incompatible function arguments")):
        real_mx.zeros((2,)).at[0].maximum(None)
    with pytest.raises(TypeError, match=re.escape("maximum(): incompatible function arguments")):
        mx.zeros((2,)).at[0].maximum(None)


# --- gradients ---------------------------------------------------------------------------


def f64(values):
    return mx.array(values, mx.float64)


def numeric_jacobian(f, args, argnum, eps=1e-6):
    """d f(args).flatten() / d args[argnum].flatten(), by central differences (float64)."""
    x = args[argnum]
    base = x.reshape(-1).tolist()
    columns = []
    for i in range(len(base)):
        vals = []
        for sign in (1, -1):
            moved = list(base)
            moved[i] += sign * eps
            a = list(args)
            a[argnum] = f64(moved).reshape(x.shape)
            vals.append(f(*a).reshape(-1).tolist())
        columns.append([(p - q) / (2 * eps) for p, q in zip(*vals)])
    return columns  # columns[i][j] = d f_j / d x_i


def check_rules_by_definition(f, args):
    """vjp and jvp of ``f`` at ``args`` against central differences, and the
    transpose identity <J t, c> = <t, J^T c>."""
    out = f(*args)
    cot = f64([0.5 + 0.25 * k for k in range(out.size)]).reshape(out.shape)
    _, vjps = mx.vjp(f, list(args), [cot])
    tangents = [f64([1.0 - 0.5 * k for k in range(a.size)]).reshape(a.shape) for a in args]
    _, (jvp,) = mx.jvp(f, list(args), tangents)
    c = cot.reshape(-1).tolist()
    expected_jvp = [0.0] * out.size
    for n, a in enumerate(args):
        jac = numeric_jacobian(f, args, n)
        expected_vjp = [sum(cj * dj for cj, dj in zip(c, col)) for col in jac]
        assert close(vjps[n].reshape(-1).tolist(), expected_vjp, 1e-6, 1e-6), (n, vjps[n])
        t = tangents[n].reshape(-1).tolist()
        for i, col in enumerate(jac):
            expected_jvp = [e + t[i] * d for e, d in zip(expected_jvp, col)]
    assert close(jvp.reshape(-1).tolist(), expected_jvp, 1e-6, 1e-6), jvp
    lhs = sum(a * b for a, b in zip(jvp.reshape(-1).tolist(), c))
    rhs = sum(sum(a * b for a, b in zip(v.reshape(-1).tolist(), t.reshape(-1).tolist()))
              for v, t in zip(vjps, tangents))
    assert math.isclose(lhs, rhs, rel_tol=1e-9)


V3 = [[2.0, -0.5, 1.5], [3.0, 0.25, -2.0]]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("index", ["slice", "array", "array with duplicates", "array and slice"])
def test_vjp_and_jvp_of_every_op_by_definition(op, index):
    # Every op and index kind, duplicates included, away from max/min ties.
    idx = {"slice": slice(1, 3), "array": mx.array([3, 1]),
           "array with duplicates": mx.array([1, 1]),
           "array and slice": (mx.array([0, 0]), slice(0, 3))}[index]

    def f(x, v):
        return getattr(x.at[idx], op)(v)

    x = f64([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0], [2.2, 1.9, -3.5], [-0.3, 1.1, 6.0]])
    check_rules_by_definition(f, [x, f64(V3)])


def test_scatter_prod_with_zero_updates_at_one_element():
    # One zero among the updates at an element: only that update gets a
    # gradient (the product of the others); two zeros: none does. No division.
    idx = mx.array([0, 0, 0, 1, 1, 1, 2])

    def f(x, v):
        return x.at[idx].multiply(v)

    x = f64([2.0, 3.0, 5.0])
    v = f64([0.0, 4.0, 0.5, 0.0, 0.0, 7.0, 0.0])
    _, (gx, gv) = mx.vjp(f, [x, v], [f64([1.0, 1.0, 1.0])])
    assert gx.tolist() == [0.0, 0.0, 0.0]
    assert gv.tolist() == [2 * 4 * 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0]
    _, (t,) = mx.jvp(f, [x, v], [f64([1.0, 1.0, 1.0]), f64([1.0] * 7)])
    assert t.tolist() == [2 * 4 * 0.5, 0.0, 5.0 + 0.0]
    check_rules_by_definition(f, [x, f64([0.0, 4.0, 0.5, 1.5, 0.0, 7.0, 3.0])])


@needs_mlx
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("kind", ["slice", "array", "array with duplicates", "tuple of arrays",
                                  "int", "slice and array"])
def test_gradients_match_mlx_where_it_has_the_rule(op, kind):
    # MLX has every vjp but scatter-prod's (multiply, divide with an index array).
    # (With a slice after the index arrays, ``x.at[idx, 0:2]``, MLX gathers a
    # window of the wrong size: a reshape error, or wrong max/min gradients.
    # test_vjp_and_jvp_of_every_op_by_definition covers that case.)
    scatter_prod = op in ("multiply", "divide") and kind not in ("slice", "int")
    if scatter_prod:
        pytest.skip("MLX: [scatter] VJP not implemented for scatter_prod")
    v = {"tuple of arrays": [0.5], "int": [0.5], "slice and array": [[0.5, 7.0]]}.get(
        kind, [[0.5, 7.0, -1.5]])

    def grads(m, x, v):
        def f(x, v):
            return (getattr(x.at[index_for(m, kind)], op)(v) * m.array(X, m.float32)).sum()
        return m.grad(f, argnums=(0, 1))(x, v)

    ours = grads(mx, mx.array(X), mx.array(v))
    theirs = grads(real_mx, real_mx.array(X), real_mx.array(v))
    for o, t in zip(ours, theirs):
        assert_same_as_mlx(o, t)


@needs_mlx
def test_max_and_min_ties_give_every_side_the_cotangent_as_mlx():
    def grads(m, op, idx):
        x, v = m.array([2.0, 1.0]), m.array([2.0, 2.0])
        return m.grad(lambda x, v: getattr(x.at[idx], op)(v).sum(), argnums=(0, 1))(x, v)

    for op in ("maximum", "minimum"):
        for idx in ([0, 0], slice(0, 2)):
            ours = grads(mx, op, mx.array(idx) if isinstance(idx, list) else idx)
            theirs = grads(real_mx, op, real_mx.array(idx) if isinstance(idx, list) else idx)
            for o, t in zip(ours, theirs):
                assert_same_as_mlx(o, t)


@needs_mlx
def test_jvp_of_slice_add_matches_mlx_and_scatter_jvp_exists():
    def jvp(m, idx):
        x, v = m.array([1.0, 2.0, 3.0]), m.array([2.0, 5.0])
        return m.jvp(lambda x, v: x.at[idx].add(v), (x, v), (m.ones(3), m.ones(2)))[1][0]

    assert_same_as_mlx(jvp(mx, slice(0, 2)), jvp(real_mx, slice(0, 2)))
    with pytest.raises(RuntimeError, match="JVP not yet implemented"):
        jvp(real_mx, real_mx.array([0, 0]))
    assert jvp(mx, mx.array([0, 0])).tolist() == [3.0, 1.0, 1.0]


def test_gradient_with_respect_to_indices_is_refused():
    x, idx = mx.array([1.0, 2.0]), mx.array([0, 0])
    with raises(ValueError, "[scatter] Cannot calculate VJP with respect to indices."):
        mx.vjp(lambda x, i: x.at[i].add(1.0), [x, idx], [mx.ones(2)])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("batched", [(0, 0), (0, None), (None, 0), (1, 0)])
def test_vmap_is_the_loop_over_examples(op, batched):
    xs = mx.array([[1.0, -2.0, 3.0], [4.0, 0.5, -1.0]])
    vs = mx.array([[0.5, 2.0], [-3.0, 1.5]])
    idx = mx.array([2, 2])
    x_ax, v_ax = batched
    xb = xs.T if x_ax == 1 else (xs[0] if x_ax is None else xs)
    vb = vs[0] if v_ax is None else vs

    def f(x, v):
        return getattr(x.at[idx], op)(v)

    got = mx.vmap(f, in_axes=(x_ax, v_ax))(xb, vb)
    want = [f(xs[b] if x_ax is not None else xs[0], vs[b] if v_ax is not None else vs[0])
            .tolist() for b in range(2)]
    assert_array(got, want)
    got = mx.vmap(lambda x, v: getattr(x.at[1:], op)(v), in_axes=(x_ax, v_ax))(xb, vb)
    want = [getattr((xs[b] if x_ax is not None else xs[0]).at[1:], op)(
        vs[b] if v_ax is not None else vs[0]).tolist() for b in range(2)]
    assert_array(got, want)


# --- put_along_axis -------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m, a: m.put_along_axis(a, m.array([[0], [2]]), m.array([[-1.0], [-2.0]]), axis=1),
    lambda m, a: m.put_along_axis(a, m.array([[1, 0, 1]]), m.array([[9.0, 8.0, 7.0]]), axis=0),
    lambda m, a: m.put_along_axis(a, m.array([[0, 0]]), m.array([[1.0, 2.0]]), axis=-1),
    lambda m, a: m.put_along_axis(a, m.array([0, 4, 4]), m.array([5.0, 6.0, 7.0]), axis=None),
    lambda m, a: m.put_along_axis(a[:1], m.array([[0], [1]]), m.array([[7.0], [8.0]]), axis=1),
    lambda m, a: m.put_along_axis(a, m.array([[-1], [0]]), m.array([[[3.0]]]), axis=1),
])
def test_put_along_axis_matches_mlx(case):
    ours, theirs = both(case, ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32"))
    assert_same_as_mlx(ours, theirs)


@needs_mlx
def test_put_along_axis_gradients_match_mlx():
    def grads(m):
        a, v = m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), m.array([[7.0, 8.0], [9.0, 1.0]])
        w = m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        idx = m.array([[2, 0], [1, 1]])
        return m.grad(lambda a, v: (m.put_along_axis(a, idx, v, axis=1) * w).sum(),
                      argnums=(0, 1))(a, v)

    for o, t in zip(grads(mx), grads(real_mx)):
        assert_same_as_mlx(o, t)


@needs_mlx
@pytest.mark.parametrize("call", [
    lambda m, a: m.put_along_axis(a, m.array([0]), m.array(1.0), axis=1),
    lambda m, a: m.put_along_axis(a, m.array([[0]]), m.array(1.0), axis=2),
    lambda m, a: m.put_along_axis(a, m.array([[0]]), m.array(1.0), axis=-3),
    lambda m, a: m.put_along_axis(a, m.array([[0], [1]]), m.array(1.0), axis=None),
])
def test_put_along_axis_errors_are_mlxs(call):
    try:
        call(real_mx, real_mx.zeros((2, 3)))
    except Exception as e:  # noqa: BLE001
        expected = (type(e), str(e))
    else:
        pytest.fail("MLX accepts it")
    with pytest.raises(expected[0]) as info:
        call(mx, mx.zeros((2, 3)))
    assert str(info.value) == expected[1]


def test_put_along_axis_float_indices_fail_when_built():
    # MLX fails only at evaluation ("[ScatterAxis::eval_cpu] Cannot scatter with indices type.").
    with raises(ValueError, "[put_along_axis] Got indices with invalid dtype."):
        mx.put_along_axis(mx.zeros((2, 3)), mx.array([[0.5]]), mx.array(1.0), axis=1)


# --- mx.slice and mx.slice_update with array starts ---------------------------------------


A34 = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


@needs_mlx
@pytest.mark.parametrize("case", [
    lambda m, a: m.slice(a, m.array([1, 2]), (0, 1), (2, 2)),
    lambda m, a: m.slice(a, m.array(1), (1,), (3, 2)),
    lambda m, a: m.slice(a, m.array([2]), (-2,), (1, 4)),
    lambda m, a: m.slice(a, m.array([0, 1], m.uint8), (1, 0), (2, 1)),
    lambda m, a: m.slice_update(a, m.zeros((2, 2), m.int32), m.array(1), (0,)),
    lambda m, a: m.slice_update(a, m.array([70, 80]), m.array(1), (0,)),
    lambda m, a: m.slice_update(a, m.array(7), m.array(1), (1,)),
    lambda m, a: m.slice_update(a, m.array([[7], [8], [9]]), m.array(3), (1,)),
    lambda m, a: m.slice_update(a, m.array([[1.5, 2.5]]), m.array([2, 1]), (0, 1)),
])
def test_slice_and_slice_update_match_mlx(case):
    ours, theirs = both(case, (A34, "int32"))
    assert_same_as_mlx(ours, theirs, rtol=0, atol=0)
    assert ours.dtype is mx.int32


@needs_mlx
def test_slice_and_slice_update_gradients_match_mlx():
    def grads(m):
        x, u = m.arange(6.0).reshape(2, 3), m.array([[1.0, 2.0], [3.0, 4.0]])
        gx = m.grad(lambda x: (m.slice(x, m.array(1), (1,), (2, 2)) ** 2).sum())(x)
        gxu = m.grad(lambda x, u: (m.slice_update(x, u, m.array(1), (1,)) ** 2).sum(),
                     argnums=(0, 1))(x, u)
        jx = m.jvp(lambda x: m.slice(x, m.array(1), (1,), (2, 2)), (x,), (x + 1,))[1][0]
        ju = m.jvp(lambda x, u: m.slice_update(x, u, m.array(1), (1,)), (x, u), (x + 1, u))[1][0]
        return [gx, *gxu, jx, ju]

    for o, t in zip(grads(mx), grads(real_mx)):
        assert_same_as_mlx(o, t)


@needs_mlx
def test_vmap_of_slice_and_slice_update():
    x = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    ours, theirs = both(lambda m, x: m.vmap(lambda r: m.slice(r, m.array(1), (0,), (2,)))(x),
                        (x, "float32"))
    assert_same_as_mlx(ours, theirs)
    # MLX 0.32's DynamicSliceUpdate vmap writes only the first example; here every one.
    got = mx.vmap(lambda r: mx.slice_update(r, mx.zeros((1,)), mx.array(1), (0,)))(mx.array(x))
    assert got.tolist() == [[0.0, 0.0, 2.0], [3.0, 0.0, 5.0]]
    got = mx.vmap(lambda r, u: mx.slice_update(r, u, mx.array(2), (0,)),
                  in_axes=(None, 0))(mx.array(x[0]), mx.array([[7.0], [8.0]]))
    assert got.tolist() == [[0.0, 1.0, 7.0], [0.0, 1.0, 8.0]]
    with raises(ValueError, "[DynamicSlice::vmap] vmap over start indices not yet supported."):
        mx.vmap(lambda s: mx.slice(mx.array(x), s, (0,), (1, 3)))(mx.array([0, 1]))


@needs_mlx
@pytest.mark.parametrize("call", [
    lambda m, a: m.slice(a, m.array(1), (0,), (2,)),
    lambda m, a: m.slice(a, m.array(1.0), (0,), (2, 2)),
    lambda m, a: m.slice(a, m.array([1, 1]), (0,), (2, 2)),
    lambda m, a: m.slice(a, m.array(1), (2,), (2, 2)),
    lambda m, a: m.slice(a, m.array(1), (0,), (4, 2)),
    lambda m, a: m.slice(a, m.array([1, 1]), (0, 0), (2, 2)),
    lambda m, a: m.slice(a, m.array([[1]]), (0,), (2, 2)),
    lambda m, a: m.slice(a, m.array([1, 1, 1]), (0, 1, 2), (2, 2)),
    lambda m, a: m.slice_update(a, m.zeros((1,)), m.array(1.0), (0,)),
    lambda m, a: m.slice_update(a, m.zeros((1,)), m.array(1), (-3,)),
])
def test_slice_errors_are_mlxs(call):
    try:
        call(real_mx, real_mx.array(A34))
    except Exception as e:  # noqa: BLE001
        expected = (type(e), str(e))
    else:
        pytest.fail("MLX accepts it")
    with pytest.raises(expected[0]) as info:
        call(mx, mx.array(A34))
    assert str(info.value) == expected[1]


def test_a_start_that_does_not_fit_is_an_index_error():
    # MLX reads and writes out of bounds here.
    a = mx.array(A34)
    with raises(IndexError, "[slice] Start index 2 on axis 0 does not fit a window of size 2"):
        mx.eval(mx.slice(a, mx.array(2), (0,), (2, 2)))
    with raises(IndexError, "[slice_update] Start index -1 on axis 1"):
        mx.eval(mx.slice_update(a, mx.zeros((1, 1), mx.int32), mx.array(-1), (1,)))


def test_gradient_with_respect_to_start_is_refused():
    a = mx.array([1.0, 2.0, 3.0])
    with raises(ValueError, "[DynamicSlice::vjp] Not supported for start indices."):
        mx.vjp(lambda s: mx.slice(a, s, (0,), (1,)), [mx.array(1)], [mx.ones(1)])


# --- the primitives built -----------------------------------------------------------------


@pytest.mark.parametrize("op,reduce_type", [("add", "sum"), ("subtract", "sum"),
                                            ("multiply", "prod"), ("divide", "prod"),
                                            ("maximum", "max"), ("minimum", "min")])
def test_each_update_is_one_primitive_of_mlxs_name(op, reduce_type):
    x = mx.zeros((3, 2))
    scatter = getattr(x.at[mx.array([0, 0])], op)(mx.array(2.0))
    window = getattr(x.at[1:], op)(mx.array(2.0))
    assert isinstance(scatter.primitive(), P.Scatter)
    assert scatter.primitive().reduce_type == reduce_type
    assert isinstance(window.primitive(), P.SliceUpdate)
    assert window.primitive().reduce_type == reduce_type
    assert isinstance(mx.slice(x, mx.array(1), (0,), (1, 2)).primitive(), P.DynamicSlice)
    assert isinstance(mx.slice_update(x, mx.ones((1, 2)), mx.array(1), (0,)).primitive(),
                      P.DynamicSliceUpdate)


# --- a[mask] = v ------------------------------------------------------------------------


def _assigned(a, index, value):
    a[index] = value
    return a


_MASKS = {
    "numpy 3-d, leading 1": lambda m: _assigned(m.arange(1000).reshape(10, 10, 10),
                                           np.zeros((1, 10, 10), bool), 0),
    "numpy 3-d, trailing 1": lambda m: _assigned(m.arange(1000).reshape(10, 10, 10),
                                            np.zeros((10, 10, 1), bool), 0),
    "numpy too long": lambda m: _assigned(m.arange(30).reshape(10, 3), np.zeros((11,), bool), 0),
    "numpy rows": lambda m: _assigned(m.arange(6).reshape(2, 3), np.array([True, False]), 9),
    "numpy 2-d": lambda m: _assigned(m.array([[1.0, 2], [3, 4]]), np.array([[True, False], [False, True]]),
                                m.array([7.0, 8.0])),
    "list": lambda m: _assigned(m.array([1.0, 2, 3]), [True, False, True], m.array([5.0, 6.0])),
    "0-d array": lambda m: _assigned(m.array([1.0, 2, 3]), m.array(True), 5.0),
    "True": lambda m: _assigned(m.array([1.0, 2, 3]), True, 5.0),
    "False": lambda m: _assigned(m.array([1.0, 2, 3]), False, 5.0),
    "numpy int array": lambda m: _assigned(m.arange(6), np.array([0, 2]), 9),
    "numpy 0-d int": lambda m: _assigned(m.arange(6), np.array(2), 7),
    "numpy int64": lambda m: _assigned(m.arange(6), np.int64(2), 7),
    "get with numpy ints": lambda m: m.arange(6)[np.array([0, 2])],
}


@needs_mlx
@pytest.mark.parametrize("name", list(_MASKS))
def test_boolean_masks_and_numpy_indices_as_in_mlx(name):
    if np is None and "numpy" in name:
        pytest.skip("needs NumPy")
    assert_both(_MASKS[name])


# === vjp and jvp of the indexing primitives against MLX's, and check_grads to second order
# Each program is written once against a module ``m`` (mlxref.core or mlx.core); index
# arrays are constants built inside the program. ========================================

# name -> (program(m, *xs), input shapes)
RULE_PROGRAMS = {
    "take_repeated": (lambda m, x: m.take(x, m.array([2, 0, 2, 2]), axis=1), [(2, 3)]),
    "take_flat_2d_indices": (lambda m, x: m.take(x, m.array([[0, 5], [5, -1]])), [(2, 3)]),
    "take_int": (lambda m, x: m.take(x, 1, axis=0), [(2, 3)]),
    "take_along_axis": (
        lambda m, x: m.take_along_axis(x, m.array([[0, 2, 2], [1, 1, 0]]), axis=1), [(2, 3)]),
    "take_along_axis_broadcast": (
        lambda m, x: m.take_along_axis(x, m.array([[1, 0, 1]]), axis=0), [(2, 3)]),
    "take_along_axis_none": (
        lambda m, x: m.take_along_axis(x, m.array([5, 0, 5]), axis=None), [(2, 3)]),
    "getitem_int": (lambda m, x: x[1], [(3, 2)]),
    "getitem_ints": (lambda m, x: x[-1, 2], [(2, 3)]),
    "getitem_slices": (lambda m, x: x[1:, ::2], [(3, 4)]),
    "getitem_negative_steps": (lambda m, x: x[::-1, 3:0:-2], [(3, 4)]),
    "getitem_array": (lambda m, x: x[m.array([0, 2, 0])], [(3, 2)]),
    "getitem_two_arrays": (lambda m, x: x[m.array([1, 0, 1]), m.array([2, 2, 0])], [(2, 3)]),
    "getitem_slice_then_array": (lambda m, x: x[:, m.array([0, 0, 2])], [(2, 3)]),
    "getitem_array_then_slice": (lambda m, x: x[m.array([[0], [1]]), 1:3], [(2, 3)]),
    "getitem_none_ellipsis": (lambda m, x: x[None, ..., 1], [(2, 3, 2)]),
    "getitem_ellipsis_none": (lambda m, x: x[..., None, ::-1], [(2, 3)]),
    "getitem_mixed": (lambda m, x: x[1, None, m.array([0, 0])], [(2, 3)]),
    "setitem_slice": (lambda m, x, v: set_item(m, x, slice(1, 3), v), [(4,), (2,)]),
    "setitem_negative_step": (
        lambda m, x, v: set_item(m, x, (slice(None, None, -1), 0), v), [(3, 2), (3,)]),
    "setitem_int_broadcast": (lambda m, x, v: set_item(m, x, 0, v), [(3, 2), ()]),
    "setitem_array": (lambda m, x, v: set_item(m, x, m.array([2, 0]), v), [(3, 2), (2, 2)]),
    "setitem_mask": (lambda m, x, v: set_item(m, x, m.array([True, False, True]), v), [(3,), (2,)]),
    "setitem_mask_rows": (
        lambda m, x, v: set_item(m, x, m.array([False, True, True]), v), [(3, 2), (2,)]),
    "setitem_then_math": (
        lambda m, x, v: m.sin(set_item(m, x * x, (slice(0, 1), slice(1, None)), v * x[0, 0])),
        [(2, 3), (2,)]),
}

# Programs whose jvp MLX 0.32 cannot compute ("[scatter] JVP not yet
# implemented"); mlxref's jvp for them is checked by check_grads instead.
SCATTERS = {"setitem_array"}

RULE_NAMES = sorted(RULE_PROGRAMS)


@needs_mlx
@pytest.mark.parametrize("name", RULE_NAMES)
def test_vjp_matches_mlx(name):
    check_vjp_against_mlx(*RULE_PROGRAMS[name])


@needs_mlx
@pytest.mark.parametrize("name", [n for n in RULE_NAMES if n not in SCATTERS])
def test_jvp_matches_mlx(name):
    check_jvp_against_mlx(*RULE_PROGRAMS[name])


@pytest.mark.parametrize("name", RULE_NAMES)
def test_check_grads_order_2(name):
    check_rule_grads(*RULE_PROGRAMS[name])


# --- things MLX does not do, or does differently ------------------------------------


@needs_mlx
def test_scatter_jvp_is_implemented_where_mlx_has_none():
    g, ys = rule_case(real_mx, *RULE_PROGRAMS["setitem_array"])
    with pytest.raises(RuntimeError, match=r"\[scatter\] JVP not yet implemented"):
        real_mx.jvp(g, ys, [real_mx.ones((3, 2)), real_mx.ones((2, 2))])
    f, xs = rule_case(mx, *RULE_PROGRAMS["setitem_array"])
    t_x = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    t_v = mx.array([[10.0, 20.0], [30.0, 40.0]])
    _, (jv,) = mx.jvp(f, xs, [t_x, t_v])
    # Rows 2 and 0 take the update's tangent; row 1 keeps x's.
    assert_array(jv, [[30, 40], [3, 4], [10, 20]], dtype=mx.float32)


def test_scatter_update_window_spanning_a_slice():
    # x[idx, 0:2] = v: the update window is (1, 2). MLX's rule uses (1, 1) and
    # fails with "[reshape] Cannot reshape array of size 2 into shape (2,2)".
    def f(x, v):
        return set_item(mx, x, (mx.array([1, 0]), slice(0, 2)), v)

    x = mx.arange(12.0).reshape(3, 4)
    v = mx.array([[10.0, 11.0], [12.0, 13.0]])
    _, (gx, gv) = mx.vjp(f, [x, v], [mx.arange(12.0).reshape(3, 4)])
    assert_array(gx, [[0, 0, 2, 3], [0, 0, 6, 7], [8, 9, 10, 11]])
    assert_array(gv, [[4, 5], [0, 1]], shape=(2, 2))
    check_grads(f, [x, v], order=2)


@needs_mlx
def test_scatter_with_repeated_indices_gives_every_update_the_cotangent():
    # As MLX: under replace, both updates at index 1 get the cotangent there,
    # though only the last one reaches the output.
    def prog(m):
        return lambda x, v: set_item(m, x, m.array([1, 1]), v)

    x, v = [1.0, -2.0, 3.0], [5.0, 6.0]
    cot = [1.0, 2.0, 3.0]
    _, ours = mx.vjp(prog(mx), [mx.array(x), mx.array(v)], [mx.array(cot)])
    _, theirs = real_mx.vjp(prog(real_mx), [real_mx.array(x), real_mx.array(v)],
                            [real_mx.array(cot)])
    assert_array(ours[1], [2, 2])
    for a, b in zip(ours, theirs):
        assert_same_as_mlx(a, b)


# --- index gradients: MLX refuses them ----------------------------------------------

_GATHER_VJP = (
    r"^\[gather\] Cannot calculate VJP with respect to indices\. Use stop_gradient on "
    r"indices to stop gradients from being computed\.$"
)


def _index_programs(m):
    x = m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    i = m.array([1, 0, 1])
    j = m.array([[2, 0, 1], [0, 0, 0]])
    return {
        "take": (lambda a, idx: m.take(a, idx, axis=1).sum(), [x, i]),
        "getitem": (lambda a, idx: a[idx].sum(), [x, i]),
        "take_along_axis": (lambda a, idx: m.take_along_axis(a, idx, axis=1).sum(), [x, j]),
        "setitem": (lambda a, idx: set_item(m, a, idx[:2], 7.0).sum(), [x, i]),
        "mask": (lambda a, idx: set_item(m, a, a > 2, 0.0).sum(), [x, i]),
    }


_VJP_MESSAGES = {
    "take": _GATHER_VJP,
    "getitem": _GATHER_VJP,
    "take_along_axis": _GATHER_VJP.replace("gather", "gather_axis"),
    "setitem": _GATHER_VJP.replace("gather", "scatter"),
    "mask": _GATHER_VJP.replace("gather", "masked_scatter").replace("indices", "mask"),
}


@pytest.mark.parametrize("name", sorted(_VJP_MESSAGES))
def test_grad_with_respect_to_indices_raises(name):
    f, args = _index_programs(mx)[name]
    argnums = 0 if name == "mask" else 1
    with pytest.raises(ValueError, match=_VJP_MESSAGES[name]):
        mx.grad(f, argnums=argnums)(*args)


@needs_mlx
@pytest.mark.parametrize("name", sorted(_VJP_MESSAGES))
def test_grad_with_respect_to_indices_raises_in_mlx_too(name):
    f, args = _index_programs(real_mx)[name]
    argnums = 0 if name == "mask" else 1
    with pytest.raises(ValueError, match=_VJP_MESSAGES[name]):
        real_mx.grad(f, argnums=argnums)(*args)


@pytest.mark.parametrize("m", [mx, pytest.param(real_mx, marks=needs_mlx)],
                         ids=["mlxref", "mlx"])
def test_jvp_with_respect_to_indices_raises(m):
    x = m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    i = m.array([1, 0, 1])
    j = m.array([[2, 0, 1], [0, 0, 0]])
    message = _GATHER_VJP.replace("VJP", "JVP")
    with pytest.raises(ValueError, match=message):
        m.jvp(lambda idx: m.take(x, idx, axis=1), [i], [m.ones((3,), m.int32)])
    with pytest.raises(ValueError, match=message.replace("gather", "gather_axis")):
        m.jvp(lambda a, idx: m.take_along_axis(a, idx, axis=1), [x, j],
              [m.ones((2, 3)), m.ones((2, 3), m.int32)])
    with pytest.raises(ValueError, match=r"^\[masked_scatter\] invalid arg index in JVP$"):
        m.jvp(lambda a: set_item(m, a, a > 2, 0.0), [x], [m.ones((2, 3))])


def test_stop_gradient_on_indices_lets_the_data_gradient_through():
    x = mx.array([3.0, 1.0, 2.0])

    def f(a):
        return mx.take(a, mx.stop_gradient(mx.argmax(a, keepdims=True))).sum()

    assert_array(mx.grad(f)(x), [1, 0, 0])


# --- vmap: each program against real MLX and against a loop over the examples --------
# (support.py's check_vmap_against_mlx and check_vmap_against_loop; the shape programs
# are in test_shape.py). Index arrays, masks and values are arguments too, so they are
# batched like the data: gather with batched indices and/or source, scatter with any of
# source, indices and updates batched.

# name -> (program(m, *args), [(kind, example shape)], [(in_axes, out_axes)])
VMAP_PROGRAMS = {
    "slice": (
        lambda m, x: x[1:3, ::-2], [("f", (4, 3))],
        [((0,), 0), ((1,), 1), ((2,), -1), ((-1,), 2)]),
    "slice_int_none": (
        lambda m, x: x[..., None, 1], [("f", (2, 3))], [((0,), 0), ((1,), -1), ((2,), 1)]),
    "slice_update": (
        lambda m, x, v: set_item(m, x, (slice(None, None, -1), 1), v), [("f", (3, 2)), ("f", (3,))],
        [((0, None), 0), ((None, 0), 1), ((1, 0), -1), ((2, 1), 0), ((-1, -1), 2),
         ((0, 0), 0)]),
    "slice_update_scalar_value": (
        lambda m, x, v: set_item(m, x, slice(1, 3), v), [("f", (4, 2)), ("f", ())],
        [((None, 0), 0), ((1, 0), 1), ((2, None), -1)]),
    # take: batched source, batched indices, both (and a negative index)
    "take": (
        lambda m, x, i: m.take(x, i, axis=1), [("f", (2, 3, 2)), (index_kind(3, -3), (2, 2))],
        [((0, None), 0), ((2, None), -1), ((-1, None), 1), ((None, 0), 0), ((None, 2), 1),
         ((0, 0), 0), ((3, 1), 2), ((1, -1), -1)]),
    "take_flat": (
        lambda m, x, i: m.take(x, i), [("f", (2, 3)), (index_kind(6), (4,))],
        [((0, None), 0), ((None, 1), 1), ((2, 0), 0)]),
    "take_along_axis": (
        lambda m, x, i: m.take_along_axis(x, i, axis=0), [("f", (3, 2)), (index_kind(3), (2, 2))],
        [((0, None), 0), ((2, None), 1), ((None, 0), -1), ((None, 2), 0), ((1, 1), 2),
         ((-1, 0), 0)]),
    "take_along_axis_broadcast": (
        lambda m, x, i: m.take_along_axis(x, i, axis=-1),
        [("f", (2, 3)), (index_kind(3, -3), (1, 4))],
        [((0, None), 0), ((None, 1), 1), ((2, 0), -1)]),
    # getitem with array indices (Gather)
    "getitem_array_slice": (
        lambda m, x, i: x[i, 1:], [("f", (3, 4)), (index_kind(3), (2,))],
        [((0, None), 0), ((2, None), -1), ((None, 0), 1), ((1, 1), 0), ((-1, 0), 2)]),
    "getitem_two_arrays": (
        lambda m, x, i, j: x[i, :, j],
        [("f", (3, 2, 4)), (index_kind(3), (2, 1)), (index_kind(4), (3,))],
        [((0, None, None), 0), ((None, 0, None), 0), ((None, None, 1), -1),
         ((3, 2, None), 1), ((1, 0, 0), 0), ((None, 1, 0), 2)]),
    # setitem with arrays (Scatter), including source batch axes >= 2 (MLX #4321)
    "setitem_array": (
        lambda m, x, i, v: set_item(m, x, i, v),
        [("f", (4, 3)), (index_kind(4), (2,)), ("f", (2, 3))],
        [((0, None, None), 0), ((1, None, None), 1), ((None, 0, None), 0),
         ((None, None, 0), -1), ((None, None, 2), 0), ((0, 0, 0), 0), ((1, 0, 2), 2),
         ((None, 1, 1), 1), ((2, None, None), 0), ((-1, 1, None), -1), ((2, 0, 1), 0)]),
    "setitem_array_slice": (
        lambda m, x, i, v: set_item(m, x, (i, slice(0, 2)), v),
        [("f", (3, 3)), (index_kind(3), (2,)), ("f", (2, 2))],
        [((0, None, None), 0), ((None, 0, None), 1), ((None, None, 1), 0), ((1, 0, 2), -1),
         ((2, None, 0), 0), ((2, 1, None), 1)]),
    "setitem_scalar_value": (
        lambda m, x, i, v: set_item(m, x, (slice(None), i), v),
        [("f", (2, 3, 2)), (index_kind(3), (2,)), ("f", ())],
        [((0, None, None), 0), ((None, 0, 0), 1), ((3, None, 0), -1), ((2, 0, None), 0)]),
    # setitem with a boolean mask (MaskedScatter); a scalar value fits any mask
    "setitem_mask": (
        lambda m, x, k, v: set_item(m, x, k, v), [("f", (2, 3)), ("b", (2, 3)), ("f", ())],
        [((0, None, None), 0), ((None, 0, None), 1), ((None, None, 0), 0),
         ((2, 1, 0), -1), ((0, 0, 0), 0)]),
    "setitem_mask_rows": (
        lambda m, x, v: set_item(m, x, m.array([False, True, True]), v),
        [("f", (3, 2)), ("f", (2, 2))],
        [((0, None), 0), ((None, 0), 0), ((2, 1), -1), ((1, 2), 1)]),
}


def _vmap_mlx_bug(name, in_axes):
    """Why MLX 0.32.4 is wrong for this program and in_axes, or None (mlxref is right
    there: test_vmap_matches_loop checks it)."""
    if name.startswith("slice_update") and in_axes[1] is None:
        # SliceUpdate::vmap gives an unbatched update a size-1 batch axis and
        # never broadcasts it: only the first example gets the update.
        return "SliceUpdate::vmap: an unbatched update is written into example 0 only"
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


@pytest.mark.parametrize("src_ax", [2, -1])
@pytest.mark.parametrize("upd_ax", [None, 0, 1])
def test_scatter_batch_axis_two(src_ax, upd_ax):
    # The case of MLX #4321 (vmap of scatter wrong for a batch axis >= 2),
    # spelled out: example b writes row i[b] of its own (3, 2) slice. The
    # installed MLX 0.32.4 gets these right too; both are checked.
    x = mx.zeros((3, 2, EXAMPLES))
    i = mx.array([b % 3 for b in range(EXAMPLES)])
    rows = [[float(b + 1), float(-b)] for b in range(EXAMPLES)]
    v = mx.array(rows[0]) if upd_ax is None else mx.moveaxis(mx.array(rows), 0, upd_ax)
    f = mx.vmap(lambda x, i, v: set_item(mx, x, i, v), in_axes=(src_ax, 0, upd_ax))
    got = f(x, i, v)
    want = [[(rows[0] if upd_ax is None else rows[b]) if r == b % 3 else [0.0, 0.0]
             for r in range(3)] for b in range(EXAMPLES)]
    assert got.tolist() == want
    if real_mx is not None:
        g = real_mx.vmap(lambda x, i, v: set_item(real_mx, x, i, v),
                         in_axes=(src_ax, 0, upd_ax))
        assert_same_as_mlx(got, g(real_mx.array(x.tolist()), real_mx.array(i.tolist()),
                                  real_mx.array(v.tolist())))


# name -> (program(m, *args), specs, inner in_axes, outer in_axes, out axes (inner, outer))
NESTED = {
    "take": (lambda m, x, i: m.take(x, i, axis=0), [("f", (4, 2)), (index_kind(4), (3,))],
             (0, None), (1, 0), (1, 0)),
    "take_along_axis": (lambda m, x, i: m.take_along_axis(x, i, axis=1),
                        [("f", (2, 3)), (index_kind(3), (2, 2))], (1, 0), (None, 1), (0, -1)),
    "setitem": (lambda m, x, i, v: set_item(m, x, i, v),
                [("f", (4, 2)), (index_kind(4), (2,)), ("f", (2, 2))],
                (0, None, 0), (1, 0, None), (0, 1)),
}


@pytest.mark.parametrize("name", list(NESTED))
def test_nested_vmap(name):
    check_nested_vmap(*NESTED[name])


def _w(m, shape):
    return kind_array(m, "f", shape, 11)


# vmap of grad: per-example gradients through the rules' own vjps.
# name -> (loss(m, *args), specs, argnums, in_axes)
GRADS = {
    "take": (lambda m, x, i: (m.take(x, i, axis=1) ** 2).sum(),
             [("f", (2, 3)), (index_kind(3), (4,))], 0, (0, None)),
    "take_batched_indices": (
        lambda m, x, i: (m.take(x, i, axis=1) * _w(m, (2, 4))).sum(),
        [("f", (2, 3)), (index_kind(3), (4,))], 0, (1, 0)),
    "take_along_axis": (
        lambda m, x, i: (m.take_along_axis(x, i, axis=0) ** 3).sum(),
        [("f", (3, 2)), (index_kind(3), (2, 2))], 0, (-1, 0)),
    "getitem": (lambda m, x, i: (m.sin(x[i, 1:]) * x[0, :1]).sum(),
                [("f", (3, 3)), (index_kind(3), (2,))], 0, (2, 0)),
    "setitem": (
        lambda m, x, i, v: (set_item(m, x, i, v * v) * _w(m, (4, 3))).sum(),
        [("f", (4, 3)), (index_kind(4), (2,)), ("f", (2, 3))], (0, 2), (1, None, 0)),
    "slice_update": (
        lambda m, x, v: (set_item(m, x, slice(1, 3), m.exp(v)) ** 2).sum(),
        [("f", (4, 2)), ("f", (2, 2))], (0, 1), (0, -1)),
    "slice_update_unbatched_zeros": (  # its vjp slice-updates (unbatched) zeros into x's cot
        lambda m, x, v: (set_item(m, x, slice(1, 3), m.exp(v)) ** 2).sum(),
        [("f", (4, 2)), ("f", (2, 2))], 0, (0, None)),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_vmap_of_grad(name):
    # The vjp of a slice update writes unbatched zeros into a batched cotangent:
    # MLX's SliceUpdate::vmap bug again (see _vmap_mlx_bug).
    bug = "MLX's SliceUpdate::vmap" if name.startswith("slice_update") else None
    check_vmap_of_grad(*GRADS[name], mlx_bug=bug)
