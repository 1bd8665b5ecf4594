"""The sort family (mlxref/core/primitives/sort.py: Sort, ArgSort, Partition, ArgPartition,
SearchSorted; backend/cpu/sort.py; MLX's mlx/backend/cpu/sort.cpp): sort, argsort,
partition, argpartition, topk, searchsorted, median and unique, with real MLX as the
oracle.

The outputs must be MLX's element for element: the order of ties, where nans
and negative zeros go, and, for partition and argpartition, the order MLX's
CPU kernel leaves on either side of ``kth``. Then the rules (gradients, second
derivatives, jvp, vmap) and the errors for a bad axis, kth or k. searchsorted,
median and unique run each program on mlxref and on MLX: the outputs must
agree in shape, dtype and every element, and a bad call must raise MLX's
exception type and message; then their rules, compared with MLX's where MLX
has them.
"""

import random

import pytest
import sympy

import mlxref.core as mx
from mlxref.core.backend.cpu import sort as sort_kernel
from support import (assert_same_array, assert_same_as_mlx, assert_same_result, binding_error,
                     needs_mlx, real_mx, tied_elements, typed_array)

pytestmark = needs_mlx

NAN = float("nan")
INF = float("inf")
DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64", "complex64"]


def _data(dtype_name, rng, shape):
    """Elements for ``dtype_name`` with many ties; floats add nans and both zeros."""
    n = 1
    for d in shape:
        n *= d
    if dtype_name == "bool_":
        flat = [rng.random() < 0.5 for _ in range(n)]
    elif dtype_name.startswith(("uint", "int")):
        flat = [rng.randint(0, 6) for _ in range(n)]
    elif dtype_name == "complex64":
        flat = [complex(rng.choice([0.0, 1.0, -1.0, NAN]), rng.choice([0.0, 2.0, NAN]))
                for _ in range(n)]
    else:
        flat = [rng.choice([NAN, -0.0, 0.0, 1.5, -2.0, 3.0, float("inf"), float(rng.randint(-9, 9))])
                for _ in range(n)]
    for d in reversed(shape[1:]):
        flat = [flat[i : i + d] for i in range(0, len(flat), d)]
    return flat


def _pair(data, dtype_name):
    """The same array in mlxref and in MLX."""
    return (mx.array(data).astype(getattr(mx, dtype_name)),
            real_mx.array(data).astype(getattr(real_mx, dtype_name)))


def _both(fn, ours, theirs):
    return fn(mx, ours), fn(real_mx, theirs)


# --- forward ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_sort_and_argsort_are_mlx_for_every_dtype(dtype_name):
    rng = random.Random(DTYPES.index(dtype_name))
    ours, theirs = _pair(_data(dtype_name, rng, (3, 9)), dtype_name)
    for kw in ({}, {"axis": 0}, {"axis": -2}, {"axis": None}):
        assert_same_array(*_both(lambda m, a: m.sort(a, **kw), ours, theirs))
        assert_same_array(*_both(lambda m, a: m.argsort(a, **kw), ours, theirs))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_partition_and_argpartition_are_mlx_for_every_dtype(dtype_name):
    rng = random.Random(100 + DTYPES.index(dtype_name))
    ours, theirs = _pair(_data(dtype_name, rng, (2, 11)), dtype_name)
    for kth, kw in ((0, {}), (5, {}), (-1, {}), (1, {"axis": 0}), (-7, {"axis": None})):
        assert_same_array(*_both(lambda m, a: m.partition(a, kth, **kw), ours, theirs))
        assert_same_array(*_both(lambda m, a: m.argpartition(a, kth, **kw), ours, theirs))


def test_partition_order_is_mlx_on_many_inputs():
    """Not only the kth element: the whole output, as MLX's nth_element leaves it."""
    rng = random.Random(7)
    for trial in range(60):
        n = rng.choice([1, 2, 3, 4, 5, 8, 16, 17, 40, 100])
        values = rng.choice([[0.0, 1.0, 2.0], list(range(-50, 50)), [NAN, 0.0, -0.0, 1.0]])
        data = [float(rng.choice(values)) for _ in range(n)]
        if trial % 5 == 0:
            data.sort(reverse=trial % 10 == 0)
        kth = rng.randrange(-n, n)
        ours, theirs = _pair(data, "float32")
        assert_same_array(*_both(lambda m, a: m.partition(a, kth), ours, theirs))
        assert_same_array(*_both(lambda m, a: m.argpartition(a, kth), ours, theirs))


def _median_of_three_killer(n, kth):
    """An input that defeats the median-of-three pivot (McIlroy's adversary):
    elements get their values only when a comparison needs them, always so
    that the pivot is nearly the smallest; the rest are larger than all."""
    gas = n
    value = [gas] * n
    state = {"solid": 0, "candidate": 0}

    def freeze(i):
        value[i] = state["solid"]
        state["solid"] += 1

    def less(i, j):
        if value[i] == gas and value[j] == gas:
            freeze(i if i == state["candidate"] else j)
        if value[i] == gas:
            state["candidate"] = i
        elif value[j] == gas:
            state["candidate"] = j
        return value[i] < value[j]

    sort_kernel.nth_element(list(range(n)), kth, less)
    for i in range(n):
        if value[i] == gas:
            freeze(i)
    return [float(v) for v in value]


def test_partition_is_mlx_where_the_selection_falls_back_to_a_heap(monkeypatch):
    calls = []
    heap_select = sort_kernel.heap_select
    monkeypatch.setattr(sort_kernel, "heap_select",
                        lambda *args: calls.append(1) or heap_select(*args))
    for n, kth in ((50, 25), (120, 119), (200, 66)):
        data = _median_of_three_killer(n, kth)
        calls.clear()
        ours, theirs = _pair(data, "float32")
        assert_same_array(*_both(lambda m, a: m.partition(a, kth), ours, theirs))
        assert calls, "the input did not reach the heap selection"
        assert_same_array(*_both(lambda m, a: m.argpartition(a, kth), ours, theirs))


def test_ties_nans_and_negative_zero_in_order():
    """The order MLX documents and keeps: stable, -0.0 and 0.0 equal, nans last."""
    data = [3.0, NAN, -0.0, 0.0, 1.0, -0.0, NAN, -1.0]
    ours, theirs = _pair(data, "float32")
    assert_same_array(*_both(lambda m, a: m.sort(a), ours, theirs))
    assert repr(mx.sort(ours).tolist()) == repr([-1.0, -0.0, 0.0, -0.0, 1.0, 3.0, NAN, NAN])
    assert mx.argsort(ours).tolist() == [7, 2, 3, 5, 4, 0, 1, 6]


@pytest.mark.parametrize("dtype_name", ["int32", "float16", "float32", "complex64"])
def test_topk_is_mlx(dtype_name):
    rng = random.Random(3)
    ours, theirs = _pair(_data(dtype_name, rng, (3, 7)), dtype_name)
    for k, kw in ((1, {}), (3, {}), (0, {}), (7, {}), (2, {"axis": 0}), (3, {"axis": 0}),
                  (5, {"axis": None}), (21, {"axis": None}), (True, {"axis": -2})):
        assert_same_array(*_both(lambda m, a: m.topk(a, k, **kw), ours, theirs))


def test_topk_of_every_element_is_the_input_unordered():
    a = mx.array([3.0, 1.0, 2.0])
    out = mx.topk(a, 3)
    assert out is not a and out.tolist() == [3.0, 1.0, 2.0]
    assert out.primitive() is a.primitive()
    sliced = mx.topk(a, 2)  # MLX's composition: a Slice of a Partition
    assert sliced.primitive().name == "Slice"
    assert sliced.inputs()[0].primitive().name == "Partition"


def test_empty_and_scalar_inputs():
    for shape, fn in (((0,), lambda m, a: m.sort(a)), ((2, 0), lambda m, a: m.argsort(a)),
                      ((3, 0), lambda m, a: m.topk(a, 0)), ((3, 0), lambda m, a: m.topk(a, 0, 0)),
                      ((), lambda m, a: m.sort(a, axis=None)),
                      ((), lambda m, a: m.partition(a, 0, axis=None))):
        assert_same_array(*_both(fn, mx.zeros(shape), real_mx.zeros(shape)))


def test_array_methods_are_those_mlx_has():
    for name in ("sort", "argsort", "partition", "argpartition", "topk"):
        assert hasattr(mx.array, name) == hasattr(real_mx.array, name)


# --- rules ------------------------------------------------------------------------


X = [3.0, 1.0, 2.0, 5.0, -1.0, 4.0]
FUNCTIONS = {
    "sort": lambda m, a: m.sort(a),
    "sort axis 0": lambda m, a: m.sort(m.reshape(a, (2, 3)), axis=0),
    "sort flat": lambda m, a: m.sort(m.reshape(a, (3, 2)), axis=None),
    "partition": lambda m, a: m.partition(a, 2),
    "partition axis 0": lambda m, a: m.partition(m.reshape(a, (3, 2)), -1, axis=0),
    "topk": lambda m, a: m.topk(a, 2),
    "topk axis 0": lambda m, a: m.topk(m.reshape(a, (3, 2)), 2, axis=0),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_vjp_jvp_and_second_derivative_are_mlx(name):
    fn = FUNCTIONS[name]
    ours, theirs = mx.array(X), real_mx.array(X)
    out_shape = fn(mx, ours).shape
    cot = [float(i + 1) * (-1) ** i for i in range(len(fn(mx, ours).reshape(-1).tolist()))]
    tan = [0.5, -1.0, 2.0, 1.5, 3.0, -0.25]

    def vjp(m, a):
        return m.vjp(lambda y: fn(m, y), [a], [m.array(cot).reshape(out_shape)])[1][0]

    def jvp(m, a):
        return m.jvp(lambda y: fn(m, y), [a], [m.array(tan)])[1][0]

    def hvp(m, a):
        def f(y):
            return m.sum(fn(m, y) ** 3)

        return m.grad(lambda y: m.sum(m.grad(f)(y) * m.array(tan)))(a)

    for rule in (vjp, jvp, hvp):
        assert_same_as_mlx(*_both(rule, ours, theirs))


def test_index_outputs_have_mlx_zero_rules():
    x, t = [3.0, 1.0, 2.0], [1.0, 1.0, 1.0]
    for fn in (lambda m, a: m.argsort(a), lambda m, a: m.argpartition(a, 1)):
        ours = mx.jvp(lambda a: fn(mx, a), [mx.array(x)], [mx.array(t)])
        theirs = real_mx.jvp(lambda a: fn(real_mx, a), [real_mx.array(x)], [real_mx.array(t)])
        assert_same_array(ours[0][0], theirs[0][0])
        assert_same_array(
            ours[1][0], theirs[1][0])  # argpartition's: the tangent's dtype, as in MLX
        ours = mx.vjp(lambda a: fn(mx, a), [mx.array(x)], [mx.ones(3, mx.uint32)])[1][0]
        theirs = real_mx.vjp(lambda a: fn(real_mx, a), [real_mx.array(x)],
                             [real_mx.ones(3, real_mx.uint32)])[1][0]
        assert_same_array(ours, theirs)


@pytest.mark.parametrize("in_axes", [0, 1, -1])
def test_vmap_is_mlx(in_axes):
    rows = [[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, -0.0, 4.0], [NAN, 2.0, 2.0, 7.0]]
    for fn in (lambda m, a: m.sort(a), lambda m, a: m.argsort(a, axis=0),
               lambda m, a: m.partition(a, 1), lambda m, a: m.argpartition(a, -1),
               lambda m, a: m.topk(a, 2), lambda m, a: m.sort(a, axis=None)):
        ours = mx.vmap(lambda a: fn(mx, a), in_axes=in_axes)(mx.array(rows))
        theirs = real_mx.vmap(lambda a: fn(real_mx, a), in_axes=in_axes)(real_mx.array(rows))
        assert_same_array(ours, theirs)


def test_vmap_of_a_batched_axis_before_the_sorted_one():
    data = [[[3.0, 1.0], [2.0, 0.0]], [[5.0, 6.0], [-1.0, 4.0]]]
    for fn in (lambda m, a: m.sort(a, axis=0), lambda m, a: m.partition(a, 0, axis=-1),
               lambda m, a: m.topk(a, 1, axis=0)):
        for in_axes in (0, 1, 2):
            ours = mx.vmap(lambda a: fn(mx, a), in_axes=in_axes)(mx.array(data))
            theirs = real_mx.vmap(lambda a: fn(real_mx, a), in_axes=in_axes)(real_mx.array(data))
            assert_same_array(ours, theirs)


# --- errors -----------------------------------------------------------------------


def _error(lib, call):
    try:
        call(lib)
    except Exception as e:  # noqa: BLE001 - compared with MLX's
        # MLX's third line of a TypeError ("Invoked with types: ...") depends on the call
        return type(e).__name__, str(e).split("\n")[:2]
    return None


def test_errors_are_mlx_messages():
    calls = [
        lambda m: m.sort(m.array([1, 2]), axis=1),
        lambda m: m.sort(m.array(1.0)),
        lambda m: m.sort([1, 2]),
        lambda m: m.sort(m.array([1, 2]), axis=1.0),
        lambda m: m.argsort(m.array([[1, 2]]), axis=-3),
        lambda m: m.partition(m.array([1, 2]), 5),
        lambda m: m.partition(m.array([[1, 2]]), 5, axis=-1),
        lambda m: m.partition(m.zeros((3, 2)), 7, axis=None),
        lambda m: m.partition(m.zeros((0,)), 0),
        lambda m: m.partition(m.array([[1, 2]]), 1, axis=3),
        lambda m: m.partition(m.array([1, 2]), 2**31),
        lambda m: m.partition(m.array([1, 2]), 1.0),
        lambda m: m.argpartition(m.array([1, 2]), -3),
        lambda m: m.argpartition(m.array([[1, 2]]), 2, axis=-1),
        lambda m: m.argpartition(m.zeros((2,)), kth=1, axis=-2),
        lambda m: m.topk(m.array([1, 2]), 3),
        lambda m: m.topk(m.array([1, 2]), -1),
        lambda m: m.topk(m.array([[1, 2]]), 3, axis=-1),
        lambda m: m.topk(m.zeros((3, 2)), 7, axis=None),
        lambda m: m.topk(m.array(1.0), 1),
        lambda m: m.topk(m.array([1, 2]), 1.0),
        lambda m: m.topk(m.array([1, 2]), 1, axis="0"),
    ]
    for call in calls:
        theirs = _error(real_mx, call)
        assert theirs is not None
        assert _error(mx, call) == theirs


def test_symbolic_elements_cannot_be_ordered():

    a, b = sympy.symbols("a b", real=True)
    x = mx.array([a, b, a + 1, b - 1, a * b], mx.float64)
    for name, call in (("sort", lambda x: mx.sort(x)), ("partition", lambda x: mx.partition(x, 0)),
                       ("argpartition", lambda x: mx.argpartition(x, 1))):
        with pytest.raises(TypeError, match=rf"\[{name}\] Cannot order symbolic elements"):
            mx.eval(call(x))


# === searchsorted, median and unique, against MLX ========================================

# --- searchsorted --------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_every_dtype_and_side(dtype_name, side):
    rng = random.Random(DTYPES.index(dtype_name))
    seq = sorted(tied_elements(dtype_name, rng, 7), key=lambda v: (v != v, v.real if isinstance(
        v, complex) else v, v.imag if isinstance(v, complex) else 0))
    values = tied_elements(dtype_name, rng, 6) + seq[:3]
    assert_same_result(lambda m: m.searchsorted(typed_array(m, seq, dtype_name),
                                                typed_array(m, values, dtype_name), side=side))


def test_searchsorted_promotes_and_keeps_the_values_shape():
    assert_same_result(
        lambda m: m.searchsorted(m.array([1, 2, 3], m.int8), m.array([[2.5, -1.0], [3.0, 9.0]])))
    assert_same_result(
        lambda m: m.searchsorted(m.array([1, 2, 3], m.uint8), m.array([-1, 2], m.int8)))
    assert_same_result(lambda m: m.searchsorted(m.array([1, 2, 2, 4]), m.array(2), "right"))
    assert_same_result(lambda m: m.searchsorted(m.array([True, True]), m.array([False, True])))


def test_searchsorted_nans_empty_and_unsorted():
    for side in ("left", "right"):
        assert_same_result(
            lambda m: m.searchsorted(m.array([1.0, NAN]), m.array([NAN, 3.0, 0.0]), side))
        assert_same_result(
            lambda m: m.searchsorted(m.array([], m.float32), m.array([1.0, NAN]), side))
        assert_same_result(lambda m: m.searchsorted(m.array([1, 2]), m.zeros((0, 3)), side))
        # not sorted: whatever MLX's binary search finds
        assert_same_result(
            lambda m: m.searchsorted(m.array([5, 1, 4, 2, 3, 0]), m.arange(-1, 7), side))


def test_searchsorted_errors():
    a = lambda m: m.array([1, 2, 3])  # noqa: E731
    assert assert_same_result(lambda m: m.searchsorted(a(m), a(m), "middle"))[0] is ValueError
    assert assert_same_result(lambda m: m.searchsorted(m.array([[1]]), a(m)))[0] is ValueError
    assert assert_same_result(lambda m: m.searchsorted(m.array(1), a(m)))[0] is ValueError
    for bad in (lambda m: m.searchsorted(a(m), 2), lambda m: m.searchsorted([1, 2], a(m)),
                lambda m: m.searchsorted(a(m), a(m), side=None),
                lambda m: m.searchsorted(a(m), a(m), side=1)):
        assert assert_same_result(bad)[0] is TypeError


def test_searchsorted_rules():
    seq = lambda m: m.array([1.0, 2.0, 2.0, 4.0])  # noqa: E731
    vals = lambda m: m.array([1.5, 2.0, 9.0])  # noqa: E731
    assert_same_result(lambda m: m.grad(lambda v: m.searchsorted(seq(m), v).sum())(vals(m)))
    assert_same_result(
        lambda m: m.vjp(lambda s, v: m.searchsorted(s, v, "right"), [seq(m), vals(m)],
                        [m.array([1, 2, 3], m.uint32)]))
    assert_same_result(lambda m: m.jvp(lambda s, v: m.searchsorted(s, v), [seq(m), vals(m)],
                                       [seq(m), vals(m)]))
    grid = lambda m: m.array([[0.0, 2.0, 5.0], [3.0, 4.0, 1.0]])  # noqa: E731
    for axis in (0, 1, -1):
        assert_same_result(lambda m: m.vmap(lambda v: m.searchsorted(seq(m), v, "right"),
                                            in_axes=axis)(grid(m)))
    err = assert_same_result(lambda m: m.vmap(lambda s: m.searchsorted(s, m.array([2.0])))(grid(m)))
    assert err[0] is ValueError


# --- median --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_median_every_dtype(dtype_name):
    rng = random.Random(100 + DTYPES.index(dtype_name))
    data = tied_elements(dtype_name, rng, 24)
    x = lambda m: typed_array(m, data, dtype_name).reshape(2, 3, 4)  # noqa: E731
    for kw in ({}, {"axis": 0}, {"axis": -1}, {"axis": (0, 2)}, {"axis": [-1, 1]},
               {"axis": (2, 1, 0), "keepdims": True}, {"axis": 1, "keepdims": True}):
        assert_same_result(lambda m: m.median(x(m), **kw))


def test_median_even_odd_nan_and_small_shapes():
    assert_same_result(lambda m: m.median(m.array([3, 1, 2, 4])))
    assert_same_result(lambda m: m.median(m.array([3, 1, 2])))
    assert_same_result(lambda m: m.median(m.array([[1.0, NAN], [1.0, 2.0]]), axis=1))
    assert_same_result(lambda m: m.median(m.array([1, 2], m.float16)))
    assert_same_result(lambda m: m.median(m.array([65504.0, 65504.0], m.float16)))
    assert_same_result(lambda m: m.median(m.array(3.0)))
    assert_same_result(lambda m: m.median(m.array(3), axis=[]))
    assert_same_result(lambda m: m.median(m.zeros((0, 2)), axis=1))
    assert_same_result(lambda m: m.median(m.zeros((0, 2)), axis=1, keepdims=True))


def test_median_errors():
    b = lambda m: m.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])  # noqa: E731
    assert assert_same_result(lambda m: m.median(m.zeros((0,))))[0] is ValueError
    assert assert_same_result(lambda m: m.median(m.zeros((2, 0))))[0] is ValueError
    assert assert_same_result(lambda m: m.median(b(m), axis=(0, -2)))[0] is ValueError
    assert assert_same_result(lambda m: m.median(b(m), axis=5))[0] is IndexError
    assert assert_same_result(lambda m: m.median(b(m), axis=-3))[0] is IndexError
    assert assert_same_result(lambda m: m.median(m.array(1.0), axis=0))[0] is IndexError
    assert assert_same_result(lambda m: m.median(b(m), axis=[]))[0] is ValueError
    for bad in (lambda m: m.median(b(m), axis=1.0), lambda m: m.median(b(m), keepdims=1),
                lambda m: m.median([1.0, 2.0])):
        assert assert_same_result(bad)[0] is TypeError


def test_median_rules():
    for data in ([3.0, 1.0, 2.0, 4.0], [3.0, 1.0, 1.0, 4.0], [3.0, 1.0, NAN], [5.0, 1.0, 2.0]):
        assert_same_result(lambda m: m.grad(lambda x: m.median(x))(m.array(data)))
    x = lambda m: m.array([[3.0, 1.0, 2.0], [0.5, 0.5, 7.0]])  # noqa: E731
    assert_same_result(lambda m: m.vjp(lambda a: m.median(a, axis=-1, keepdims=True), [x(m)],
                                       [m.array([[2.0], [3.0]])]))
    assert_same_result(
        lambda m: m.vjp(lambda a: m.median(a, axis=0), [x(m)], [m.array([1.0, 2.0, 3.0])]))
    assert_same_result(lambda m: m.jvp(lambda a: m.median(a, axis=1), [x(m)], [x(m) * 2 + 1]))
    assert_same_result(lambda m: m.grad(lambda a: m.grad(lambda b: m.median(b * b))(a).sum())(x(m)))
    for axis in (0, 1):
        assert_same_result(lambda m: m.vmap(lambda a: m.median(a), in_axes=axis)(x(m)))
        assert_same_result(lambda m: m.vmap(lambda a: m.median(a, axis=0, keepdims=True),
                                            in_axes=axis)(m.reshape(m.arange(12.0), (2, 3, 2))))


# --- unique --------------------------------------------------------------------------

ALL = dict(return_index=True, return_inverse=True, return_counts=True)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_unique_every_dtype(dtype_name):
    rng = random.Random(300 + DTYPES.index(dtype_name))
    data = tied_elements(dtype_name, rng, 12)
    x = lambda m: typed_array(m, data, dtype_name).reshape(3, 4)  # noqa: E731
    for size in (0, 1, 3, 12, 15):
        assert_same_result(lambda m: m.unique(x(m), size, **ALL))
    assert_same_result(lambda m: m.unique(x(m), 14, **ALL, fill_value=1))


def test_unique_outputs_and_options():
    a = lambda m: m.array([2, 1, 2, 3, 1])  # noqa: E731
    assert_same_result(lambda m: m.unique(a(m), 3))
    assert_same_result(lambda m: m.unique(a(m), 5))
    assert_same_result(lambda m: m.unique(a(m), 4, True, True, True, fill_value=0))
    assert_same_result(
        lambda m: m.unique(a(m), 2, True, True, True))          # truncated: inverse clamped
    assert_same_result(lambda m: m.unique(a(m), 0, True, True, True))
    assert_same_result(lambda m: m.unique(a(m), 3, return_inverse=True))
    assert_same_result(lambda m: m.unique(a(m), 3, return_index=True))
    assert_same_result(lambda m: m.unique(a(m), 3, return_counts=True, fill_value=None))
    assert_same_result(
        lambda m: m.unique(a(m), 4, fill_value=2.5))               # cast to a's dtype
    assert_same_result(lambda m: m.unique(a(m), 4, fill_value=m.array([7.5])))
    assert_same_result(lambda m: m.unique(a(m).astype(m.float16), 6, fill_value=100000))
    assert_same_result(
        lambda m: m.unique(m.array([[3.0, NAN], [NAN, 1.0]]), 4, **ALL))  # nans apart
    assert_same_result(lambda m: m.unique(m.array([0.0, -0.0, 1.0]), 3, **ALL))
    assert_same_result(lambda m: m.unique(m.array([[2, 1], [1, 5]]), 3, return_inverse=True))
    assert_same_result(lambda m: m.unique(m.array(5), 2, **ALL))
    assert_same_result(lambda m: m.unique(m.array([5, 5, 5]), 3, return_counts=True))
    assert_same_result(lambda m: m.unique(m.zeros((0,)), 2, **ALL, fill_value=7))
    assert_same_result(lambda m: m.unique(m.zeros((0, 2)), 0, **ALL))


def test_unique_errors():
    a = lambda m: m.array([2, 1, 2])  # noqa: E731
    assert assert_same_result(lambda m: m.unique(a(m), -1))[0] is ValueError
    assert assert_same_result(lambda m: m.unique(m.zeros((0,)), 2, **ALL))[0] is ValueError
    assert assert_same_result(lambda m: m.unique(a(m), 4,
                                                 fill_value=m.array([2.5, 1.0])))[0] is ValueError
    for bad in (lambda m: m.unique(a(m), 3, 1), lambda m: m.unique(a(m), 3.0),
                lambda m: m.unique([1, 2], 3)):
        assert assert_same_result(bad)[0] is TypeError
    for fill in ("x", [1], (2,)):
        assert assert_same_result(lambda m: m.unique(a(m), 3, fill_value=fill))[0] is ValueError
    assert_same_result(lambda m: m.unique(a(m), 4, fill_value=1 + 2j))
    assert_same_result(lambda m: m.unique(a(m), 4, fill_value=True))


def test_unique_rules():
    x = lambda m: m.array([2.0, 1.0, 2.0])  # noqa: E731
    assert_same_result(lambda m: m.grad(lambda a: m.unique(a, 3).sum())(x(m)))
    assert_same_result(
        lambda m: m.grad(lambda a: (m.unique(a, 4, fill_value=0.0) * m.arange(4)).sum())(x(m)))
    cot = lambda m: [m.array([1.0, 2.0, 3.0]), m.array([1, 1, 1], m.uint32),  # noqa: E731
                     m.array([1, 1, 1], m.uint32), m.array([1, 1, 1], m.int32)]
    assert_same_result(lambda m: m.vjp(lambda a: m.unique(a, 3, **ALL), [x(m)], cot(m)))
    # the fill value is differentiable and batchable too
    for fill in ((lambda m: m.array(5.0)), (lambda m: m.array([5.0]))):
        assert_same_result(
            lambda m: m.grad(lambda f: (m.unique(x(m), 4, fill_value=f) * m.arange(4)).sum())(
                fill(m)))
    assert_same_result(
        lambda m: m.vmap(lambda f: m.unique(x(m), 4, fill_value=f))(m.array([5.0, 6.0])))
    assert_same_result(
        lambda m: m.vmap(lambda a: m.unique(a, 2, fill_value=9))(m.array([[1, 1], [2, 3]])))
    batch = lambda m: m.array([[2.0, 1.0, 2.0], [0.0, 0.0, 0.0]])  # noqa: E731
    for axis in (0, 1):
        assert_same_result(
            lambda m: m.vmap(lambda a: m.unique(a, 3, **ALL), in_axes=axis)(batch(m)))
    # MLX 0.32.4 has no jvp for it ("[scatter] JVP not yet implemented"); mlxref's
    # values are a gather, so the tangent is gathered the same way.
    assert binding_error(lambda: real_mx.jvp(lambda a: real_mx.unique(a, 3, **ALL), [x(real_mx)],
                                             [real_mx.array([1.0, 2.0, 3.0])])) is not None
    outs, tangents = mx.jvp(lambda a: mx.unique(a, 3, **ALL), [x(mx)], [mx.array([1.0, 2.0, 3.0])])
    assert tangents[0].tolist() == [2.0, 1.0, 2.0]
    assert [t.tolist() for t in tangents[1:]] == [[0, 0, 0]] * 3
