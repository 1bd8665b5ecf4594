"""The array's node, read through MLX's public methods, and the one node constructor.

An array is a handle to a descriptor (mlx/array.h): handles that share a
descriptor are one array (``id()``), a node keeps its own handle of each input,
and ``a[i] = v`` points ``a`` at a new descriptor. Every node is built by
``make_arrays`` from its primitive's ``output_shapes`` and ``output_dtypes``.
"""

import copy

import pytest

import mlxref.core as mx
from mlxref.core.primitives import elementwise as E
from mlxref.core.primitives.base import Primitive, make_array, make_arrays
from mlxref.core.primitives.shape import Split
from support import ids


def test_a_node_reads_like_mlx_array_h():
    a, b = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    c = a * b
    assert c.has_primitive() and isinstance(c.primitive(), E.Multiply)
    assert ids(c.inputs()) == ids([a, b])
    assert c.siblings() == () and ids(c.outputs()) == [c.id()]
    assert not c.is_available() and c.data() is None
    mx.eval(c)
    assert c.is_available() and c.data() == [3.0, 8.0]
    assert not c.has_primitive() and c.inputs() == ()  # detached once evaluated
    assert not a.has_primitive() and a.is_available()  # data from the start


def test_siblings_and_outputs_of_a_multi_output_primitive():
    x = mx.arange(6.0)
    parts = mx.split(x, [2, 5])
    assert [p.shape for p in parts] == [(2,), (3,), (1,)]
    first, middle, last = parts
    assert isinstance(middle.primitive(), Split)
    assert ids(middle.outputs()) == ids(parts)  # in the primitive's order
    assert ids(middle.siblings()) == ids([first, last])  # the others, not itself
    mx.eval(middle)  # one evaluation computes every sibling
    assert all(p.is_available() for p in parts) and last.tolist() == [5.0]


def test_ids_are_unique_and_increase_in_creation_order():
    xs = [mx.array(1.0), mx.array(2.0)]
    xs.append(xs[0] + xs[1])
    assert xs[0].id() < xs[1].id() < xs[2].id()


def test_handles_share_a_descriptor_and_assignment_repoints_one_handle():
    a = mx.array([1, 2, 3])
    b = copy.copy(a)
    assert b is not a and b.id() == a.id()
    before = a + 0  # built from a's descriptor as it is now
    a[0] = 9
    after = a + 0
    assert a.id() != b.id()  # a points at a new descriptor
    assert b.tolist() == [1, 2, 3] and before.tolist() == [1, 2, 3]
    assert a.tolist() == [9, 2, 3] and after.tolist() == [9, 2, 3]


def test_a_node_keeps_its_input_after_the_input_handle_is_reassigned():
    a = mx.array([1.0, 2.0])
    y = mx.exp(a)
    a[1] = 0.0
    assert y.inputs()[0].id() != a.id()
    assert y.tolist() == pytest.approx([2.718281828459045, 7.38905609893065])


def test_make_arrays_takes_shapes_and_dtypes_from_the_primitive():
    a = mx.array([[1, 2, 3]])
    out = make_array(E.Less(), [a, a])
    assert out.shape == (1, 3) and out.dtype is mx.bool_  # Comparison.output_dtypes
    pieces = make_arrays(Split((1,), 1), [a])
    assert [p.shape for p in pieces] == [(1, 1), (1, 2)]
    assert [p.dtype for p in pieces] == [mx.int32, mx.int32]


def test_a_primitive_of_ones_own_gets_its_output_from_its_first_input():
    class Twice(Primitive):
        def eval(self, inputs):
            return [[2 * v for v in inputs[0].data()]]

    y = make_array(Twice(), [mx.array([[1.5], [2.0]])])
    assert y.shape == (2, 1) and y.dtype is mx.float32
    assert y.tolist() == [[3.0], [4.0]]


def test_a_shape_error_surfaces_when_the_node_is_built():
    class Wrong(Primitive):
        def output_shapes(self, inputs):
            raise ValueError("[Wrong] no shape for these inputs")

    with pytest.raises(ValueError, match=r"\[Wrong\]"):
        make_array(Wrong(), [mx.array([1.0])])
