"""searchsorted, median, unique, minmax and count_nonzero, with real MLX as the oracle.

Each program runs on mlxref and on MLX: the outputs must agree in shape, dtype
and every element (nans and negative zeros included), and a bad call must
raise MLX's exception type and message. Then the rules: gradients, vjp, jvp
and vmap, compared with MLX's where MLX has them.
"""

import random

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx

pytestmark = needs_mlx

NAN = float("nan")
INF = float("inf")
DTYPES = ["bool_", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64", "complex64"]


def _flatten(x):
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flatten(item)]
    return [x]


def _same(ours, theirs):
    """Shape, dtype and every element; tuples and lists element by element."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
        return
    assert ours.shape == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1], (ours.dtype, theirs.dtype)
    # repr tells -0.0 from 0.0 and shows nan as nan on both sides
    assert repr(_flatten(ours.tolist())) == repr(_flatten(theirs.tolist())), (
        ours.tolist(), theirs.tolist())


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e), str(e).split("\n\nInvoked with")[0]
    return None


def check(program):
    """``program(lib)`` gives the same results with mlxref and MLX, or the
    same error (type, and message up to nanobind's "Invoked with" line)."""
    theirs_error = _error(lambda: program(real_mx))
    if theirs_error is not None:
        assert _error(lambda: program(mx)) == theirs_error
        return theirs_error
    _same(program(mx), program(real_mx))
    return None


def _array(lib, data, dtype_name):
    return lib.array(data).astype(getattr(lib, dtype_name))


def _data(dtype_name, rng, n):
    """Elements with ties; floats add nans, both zeros and infinities."""
    if dtype_name == "bool_":
        return [rng.random() < 0.5 for _ in range(n)]
    if dtype_name.startswith(("uint", "int")):
        return [rng.randint(0, 5) for _ in range(n)]
    if dtype_name == "complex64":
        return [complex(rng.choice([0.0, 1.0, -1.0]), rng.choice([0.0, 2.0])) for _ in range(n)]
    return [rng.choice([NAN, -0.0, 0.0, 1.5, -2.0, 3.0, INF, float(rng.randint(-4, 4))])
            for _ in range(n)]


# --- searchsorted --------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_every_dtype_and_side(dtype_name, side):
    rng = random.Random(DTYPES.index(dtype_name))
    seq = sorted(_data(dtype_name, rng, 7), key=lambda v: (v != v, v.real if isinstance(
        v, complex) else v, v.imag if isinstance(v, complex) else 0))
    values = _data(dtype_name, rng, 6) + seq[:3]
    check(lambda m: m.searchsorted(_array(m, seq, dtype_name),
                                   _array(m, values, dtype_name), side=side))


def test_searchsorted_promotes_and_keeps_the_values_shape():
    check(lambda m: m.searchsorted(m.array([1, 2, 3], m.int8), m.array([[2.5, -1.0], [3.0, 9.0]])))
    check(lambda m: m.searchsorted(m.array([1, 2, 3], m.uint8), m.array([-1, 2], m.int8)))
    check(lambda m: m.searchsorted(m.array([1, 2, 2, 4]), m.array(2), "right"))
    check(lambda m: m.searchsorted(m.array([True, True]), m.array([False, True])))


def test_searchsorted_nans_empty_and_unsorted():
    for side in ("left", "right"):
        check(lambda m: m.searchsorted(m.array([1.0, NAN]), m.array([NAN, 3.0, 0.0]), side))
        check(lambda m: m.searchsorted(m.array([], m.float32), m.array([1.0, NAN]), side))
        check(lambda m: m.searchsorted(m.array([1, 2]), m.zeros((0, 3)), side))
        # not sorted: whatever MLX's binary search finds
        check(lambda m: m.searchsorted(m.array([5, 1, 4, 2, 3, 0]), m.arange(-1, 7), side))


def test_searchsorted_errors():
    a = lambda m: m.array([1, 2, 3])  # noqa: E731
    assert check(lambda m: m.searchsorted(a(m), a(m), "middle"))[0] is ValueError
    assert check(lambda m: m.searchsorted(m.array([[1]]), a(m)))[0] is ValueError
    assert check(lambda m: m.searchsorted(m.array(1), a(m)))[0] is ValueError
    for bad in (lambda m: m.searchsorted(a(m), 2), lambda m: m.searchsorted([1, 2], a(m)),
                lambda m: m.searchsorted(a(m), a(m), side=None),
                lambda m: m.searchsorted(a(m), a(m), side=1)):
        assert check(bad)[0] is TypeError


def test_searchsorted_rules():
    seq = lambda m: m.array([1.0, 2.0, 2.0, 4.0])  # noqa: E731
    vals = lambda m: m.array([1.5, 2.0, 9.0])  # noqa: E731
    check(lambda m: m.grad(lambda v: m.searchsorted(seq(m), v).sum())(vals(m)))
    check(lambda m: m.vjp(lambda s, v: m.searchsorted(s, v, "right"), [seq(m), vals(m)],
                          [m.array([1, 2, 3], m.uint32)]))
    check(lambda m: m.jvp(lambda s, v: m.searchsorted(s, v), [seq(m), vals(m)],
                          [seq(m), vals(m)]))
    grid = lambda m: m.array([[0.0, 2.0, 5.0], [3.0, 4.0, 1.0]])  # noqa: E731
    for axis in (0, 1, -1):
        check(lambda m: m.vmap(lambda v: m.searchsorted(seq(m), v, "right"),
                               in_axes=axis)(grid(m)))
    err = check(lambda m: m.vmap(lambda s: m.searchsorted(s, m.array([2.0])))(grid(m)))
    assert err[0] is ValueError


# --- median --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_median_every_dtype(dtype_name):
    rng = random.Random(100 + DTYPES.index(dtype_name))
    data = _data(dtype_name, rng, 24)
    x = lambda m: _array(m, data, dtype_name).reshape(2, 3, 4)  # noqa: E731
    for kw in ({}, {"axis": 0}, {"axis": -1}, {"axis": (0, 2)}, {"axis": [-1, 1]},
               {"axis": (2, 1, 0), "keepdims": True}, {"axis": 1, "keepdims": True}):
        check(lambda m: m.median(x(m), **kw))


def test_median_even_odd_nan_and_small_shapes():
    check(lambda m: m.median(m.array([3, 1, 2, 4])))
    check(lambda m: m.median(m.array([3, 1, 2])))
    check(lambda m: m.median(m.array([[1.0, NAN], [1.0, 2.0]]), axis=1))
    check(lambda m: m.median(m.array([1, 2], m.float16)))
    check(lambda m: m.median(m.array([65504.0, 65504.0], m.float16)))
    check(lambda m: m.median(m.array(3.0)))
    check(lambda m: m.median(m.array(3), axis=[]))
    check(lambda m: m.median(m.zeros((0, 2)), axis=1))
    check(lambda m: m.median(m.zeros((0, 2)), axis=1, keepdims=True))


def test_median_errors():
    b = lambda m: m.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])  # noqa: E731
    assert check(lambda m: m.median(m.zeros((0,))))[0] is ValueError
    assert check(lambda m: m.median(m.zeros((2, 0))))[0] is ValueError
    assert check(lambda m: m.median(b(m), axis=(0, -2)))[0] is ValueError
    assert check(lambda m: m.median(b(m), axis=5))[0] is IndexError
    assert check(lambda m: m.median(b(m), axis=-3))[0] is IndexError
    assert check(lambda m: m.median(m.array(1.0), axis=0))[0] is IndexError
    assert check(lambda m: m.median(b(m), axis=[]))[0] is ValueError
    for bad in (lambda m: m.median(b(m), axis=1.0), lambda m: m.median(b(m), keepdims=1),
                lambda m: m.median([1.0, 2.0])):
        assert check(bad)[0] is TypeError


def test_median_rules():
    for data in ([3.0, 1.0, 2.0, 4.0], [3.0, 1.0, 1.0, 4.0], [3.0, 1.0, NAN], [5.0, 1.0, 2.0]):
        check(lambda m: m.grad(lambda x: m.median(x))(m.array(data)))
    x = lambda m: m.array([[3.0, 1.0, 2.0], [0.5, 0.5, 7.0]])  # noqa: E731
    check(lambda m: m.vjp(lambda a: m.median(a, axis=-1, keepdims=True), [x(m)],
                          [m.array([[2.0], [3.0]])]))
    check(lambda m: m.vjp(lambda a: m.median(a, axis=0), [x(m)], [m.array([1.0, 2.0, 3.0])]))
    check(lambda m: m.jvp(lambda a: m.median(a, axis=1), [x(m)], [x(m) * 2 + 1]))
    check(lambda m: m.grad(lambda a: m.grad(lambda b: m.median(b * b))(a).sum())(x(m)))
    for axis in (0, 1):
        check(lambda m: m.vmap(lambda a: m.median(a), in_axes=axis)(x(m)))
        check(lambda m: m.vmap(lambda a: m.median(a, axis=0, keepdims=True),
                               in_axes=axis)(m.reshape(m.arange(12.0), (2, 3, 2))))


# --- unique --------------------------------------------------------------------------

ALL = dict(return_index=True, return_inverse=True, return_counts=True)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_unique_every_dtype(dtype_name):
    rng = random.Random(300 + DTYPES.index(dtype_name))
    data = _data(dtype_name, rng, 12)
    x = lambda m: _array(m, data, dtype_name).reshape(3, 4)  # noqa: E731
    for size in (0, 1, 3, 12, 15):
        check(lambda m: m.unique(x(m), size, **ALL))
    check(lambda m: m.unique(x(m), 14, **ALL, fill_value=1))


def test_unique_outputs_and_options():
    a = lambda m: m.array([2, 1, 2, 3, 1])  # noqa: E731
    check(lambda m: m.unique(a(m), 3))
    check(lambda m: m.unique(a(m), 5))
    check(lambda m: m.unique(a(m), 4, True, True, True, fill_value=0))
    check(lambda m: m.unique(a(m), 2, True, True, True))          # truncated: inverse clamped
    check(lambda m: m.unique(a(m), 0, True, True, True))
    check(lambda m: m.unique(a(m), 3, return_inverse=True))
    check(lambda m: m.unique(a(m), 3, return_index=True))
    check(lambda m: m.unique(a(m), 3, return_counts=True, fill_value=None))
    check(lambda m: m.unique(a(m), 4, fill_value=2.5))               # cast to a's dtype
    check(lambda m: m.unique(a(m), 4, fill_value=m.array([7.5])))
    check(lambda m: m.unique(a(m).astype(m.float16), 6, fill_value=100000))
    check(lambda m: m.unique(m.array([[3.0, NAN], [NAN, 1.0]]), 4, **ALL))  # nans apart
    check(lambda m: m.unique(m.array([0.0, -0.0, 1.0]), 3, **ALL))
    check(lambda m: m.unique(m.array([[2, 1], [1, 5]]), 3, return_inverse=True))
    check(lambda m: m.unique(m.array(5), 2, **ALL))
    check(lambda m: m.unique(m.array([5, 5, 5]), 3, return_counts=True))
    check(lambda m: m.unique(m.zeros((0,)), 2, **ALL, fill_value=7))
    check(lambda m: m.unique(m.zeros((0, 2)), 0, **ALL))


def test_unique_errors():
    a = lambda m: m.array([2, 1, 2])  # noqa: E731
    assert check(lambda m: m.unique(a(m), -1))[0] is ValueError
    assert check(lambda m: m.unique(m.zeros((0,)), 2, **ALL))[0] is ValueError
    assert check(lambda m: m.unique(a(m), 4, fill_value=m.array([2.5, 1.0])))[0] is ValueError
    for bad in (lambda m: m.unique(a(m), 3, 1), lambda m: m.unique(a(m), 3.0),
                lambda m: m.unique([1, 2], 3)):
        assert check(bad)[0] is TypeError
    for fill in ("x", [1], (2,)):
        assert check(lambda m: m.unique(a(m), 3, fill_value=fill))[0] is ValueError
    check(lambda m: m.unique(a(m), 4, fill_value=1 + 2j))
    check(lambda m: m.unique(a(m), 4, fill_value=True))


def test_unique_rules():
    x = lambda m: m.array([2.0, 1.0, 2.0])  # noqa: E731
    check(lambda m: m.grad(lambda a: m.unique(a, 3).sum())(x(m)))
    check(lambda m: m.grad(lambda a: (m.unique(a, 4, fill_value=0.0) * m.arange(4)).sum())(x(m)))
    cot = lambda m: [m.array([1.0, 2.0, 3.0]), m.array([1, 1, 1], m.uint32),  # noqa: E731
                     m.array([1, 1, 1], m.uint32), m.array([1, 1, 1], m.int32)]
    check(lambda m: m.vjp(lambda a: m.unique(a, 3, **ALL), [x(m)], cot(m)))
    # the fill value is differentiable and batchable too
    for fill in ((lambda m: m.array(5.0)), (lambda m: m.array([5.0]))):
        check(lambda m: m.grad(lambda f: (m.unique(x(m), 4, fill_value=f) * m.arange(4)).sum())(
            fill(m)))
    check(lambda m: m.vmap(lambda f: m.unique(x(m), 4, fill_value=f))(m.array([5.0, 6.0])))
    check(lambda m: m.vmap(lambda a: m.unique(a, 2, fill_value=9))(m.array([[1, 1], [2, 3]])))
    batch = lambda m: m.array([[2.0, 1.0, 2.0], [0.0, 0.0, 0.0]])  # noqa: E731
    for axis in (0, 1):
        check(lambda m: m.vmap(lambda a: m.unique(a, 3, **ALL), in_axes=axis)(batch(m)))
    # MLX 0.32.4 has no jvp for it ("[scatter] JVP not yet implemented"); mlxref's
    # values are a gather, so the tangent is gathered the same way.
    assert _error(lambda: real_mx.jvp(lambda a: real_mx.unique(a, 3, **ALL), [x(real_mx)],
                                      [real_mx.array([1.0, 2.0, 3.0])])) is not None
    outs, tangents = mx.jvp(lambda a: mx.unique(a, 3, **ALL), [x(mx)], [mx.array([1.0, 2.0, 3.0])])
    assert tangents[0].tolist() == [2.0, 1.0, 2.0]
    assert [t.tolist() for t in tangents[1:]] == [[0, 0, 0]] * 3
