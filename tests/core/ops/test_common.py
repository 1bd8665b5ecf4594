"""How the ops read their arguments as MLX's bindings do (mlxref/core/ops/common.py; MLX's
python/src/ops.cpp and mlx/ops.cpp), compared with real MLX: behaviours MLX's own
test_ops.py checks that mlxref lacked.

arange's two overloads, broadcast_shapes as its binding reads shapes, NumPy
integers where an op takes an int, dimensions an op computes that overflow 32
bits, and put_along_axis into an empty array.
Each case runs on both libraries (same values, or the same error type and
message); the arrays of 2**30 elements are never evaluated.
"""

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx, real_mx

# NumPy is not in a student copy's venv (mlxref assignment make): these tests skip there
np = pytest.importorskip("numpy")

# --- arange: MLX's overloads (start, stop, step) and (stop, step) ----------------------

ARANGE = {
    "stop": lambda m: m.arange(4),
    "stop_kw": lambda m: m.arange(stop=3),
    "stop_step_kw": lambda m: m.arange(stop=2, step=0.5),
    "positional_stop_step_kw": lambda m: m.arange(1, step=2),
    "start_none_step": lambda m: m.arange(-3, None, -1),
    "start_stop_kw": lambda m: m.arange(start=1, stop=None),
    "all_kw": lambda m: m.arange(stop=4, start=1, step=1, dtype=m.int16),
    "start_and_stop_kw": lambda m: m.arange(1, stop=4),
    "start_kw_step_kw": lambda m: m.arange(start=1, step=2),
    "start_kw_only": lambda m: m.arange(start=1),
    "start_twice": lambda m: m.arange(1, start=4),
    "none_start": lambda m: m.arange(None, 5),
    "nothing": lambda m: m.arange(),
    "too_many": lambda m: m.arange(1, 2, 3, m.int32, 5),
    "unknown_kw": lambda m: m.arange(5, foo=1),
    "zero_step": lambda m: m.arange(0, 5, 0),
}


def test_arange_start_keyword_needs_a_stop():
    with pytest.raises(TypeError, match="Invoked with types: kwargs = { start: int, step: int }"):
        mx.arange(start=1, step=2)
    assert mx.arange(1, step=2).tolist() == [0]


# --- broadcast_shapes --------------------------------------------------------------------

BROADCAST_SHAPES = [
    ((1, 2, 3), (3,)),
    ((5, 0), (0, 5, 0)),
    ([2, 3], (1, 3)),
    ((2,), range(1, 2)),
    ((2,), range(2), [1, 1]),
    ((True, 2),),
    ((np.int64(2),), (np.int32(1),)),
    ((2,), (np.int64(1),)),
    (np.array([2, 3]),),
    ((2, 3), (4, 3), (5,)),
    (),
    (3,),
    ((2,), 3),
    ("ab",),
    ((2,), "a"),
    ((2.0,),),
    ((1,), (2.0,)),
    ((1,), [2.5]),
    ((1,), np.array([2, 3])),
    ((2,), [True]),
    ((2,), [np.int64(1)]),
    (None,),
    ((1,), None),
    ({2: 1},),
    ((2**31,),),
]


@needs_mlx
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=[repr(s) for s in BROADCAST_SHAPES])
def test_broadcast_shapes_matches_mlx(shapes):
    result = both(lambda m: m.broadcast_shapes(*shapes))
    if result is not None:
        ours, theirs = result
        assert ours == theirs
        assert all(type(d) is int for d in ours)


def test_broadcast_shapes_needs_a_shape():
    with pytest.raises(ValueError, match="Must provide at least one shape"):
        mx.broadcast_shapes()
    assert mx.broadcast_shapes((4, 1, 6), (5, 6)) == (4, 5, 6)


# --- NumPy integers as int arguments ---------------------------------------------------------

I, J = np.int32(1), np.int64(2)
NUMPY_INTS = {
    "topk": lambda m: m.topk(m.arange(12).reshape(3, 4), J),
    "topk_uint8": lambda m: m.topk(m.arange(4), np.uint8(2)),
    "topk_array_k": lambda m: m.topk(m.arange(4), m.array(2)),
    "reshape_list": lambda m: m.reshape(m.arange(12), [J, 6]),
    "reshape_tuple": lambda m: m.reshape(m.arange(12), (J, -1)),
    "reshape_array_dim": lambda m: m.reshape(m.arange(12), [m.array(2), 6]),
    "reshape_overflow": lambda m: m.reshape(m.arange(12), [np.int64(2**31), 6]),
    "sum": lambda m: m.sum(m.arange(12).reshape(3, 4), axis=I),
    "sum_list": lambda m: m.sum(m.arange(12).reshape(3, 4), axis=[I]),
    "transpose": lambda m: m.transpose(m.arange(12).reshape(3, 4), [I, 0]),
    "zeros_list": lambda m: m.zeros([J, I]),
    "expand_dims": lambda m: m.expand_dims(m.arange(3), I),
    "squeeze": lambda m: m.squeeze(m.ones((1, 2)), np.int8(0)),
    "split": lambda m: m.split(m.arange(12).reshape(3, 4), J, axis=I),
    "repeat": lambda m: m.repeat(m.arange(3), J, 0),
    "moveaxis": lambda m: m.moveaxis(m.arange(12).reshape(3, 4), I, 0),
    "swapaxes": lambda m: m.swapaxes(m.arange(12).reshape(3, 4), I, 0),
    "cumsum": lambda m: m.cumsum(m.arange(12).reshape(3, 4), I),
    "eye": lambda m: m.eye(J),
    "tri": lambda m: m.tri(J),
    "tril": lambda m: m.tril(m.arange(12).reshape(3, 4), I),
    "pad": lambda m: m.pad(m.arange(3), J),
    "roll": lambda m: m.roll(m.arange(12).reshape(3, 4), J, I),
    "tile": lambda m: m.tile(m.arange(3), [J]),
    "linspace": lambda m: m.linspace(0, 1, J),
    "round": lambda m: m.round(m.array(1.26), J),
    "diagonal": lambda m: m.diagonal(m.arange(12).reshape(3, 4), I),
    "diag": lambda m: m.diag(m.arange(12).reshape(3, 4), I),
    "unflatten": lambda m: m.unflatten(m.arange(12).reshape(3, 4), I, [J, J]),
    "as_strided": lambda m: m.as_strided(m.arange(12), [J], [I]),
    "std": lambda m: m.std(m.arange(12.0).reshape(3, 4), I, ddof=I),
    "flatten": lambda m: m.flatten(m.arange(12).reshape(3, 2, 2), I),
    "take_axis": lambda m: m.take(m.arange(12).reshape(3, 4), 2, I),
}

# What stays refused: floats, strings, NumPy bools. (mlxref's TypeError leaves
# out MLX's last line for some ops, "Invoked with types: ...".)
NOT_INTS = {
    "topk_float": lambda m: m.topk(m.arange(4), np.float32(2)),
    "topk_str": lambda m: m.topk(m.arange(4), "2"),
    "reshape_float": lambda m: m.reshape(m.arange(4), [np.float32(2), 2]),
    "reshape_str": lambda m: m.reshape(m.arange(4), ["2", 2]),
    "reshape_np_bool": lambda m: m.reshape(m.arange(4), [np.bool_(True), 4]),
    "sum_np_bool": lambda m: m.sum(m.arange(4), axis=np.bool_(False)),
    "expand_dims_float": lambda m: m.expand_dims(m.arange(4), np.float64(0)),
}


@needs_mlx
@pytest.mark.parametrize("name", list(ARANGE) + list(NUMPY_INTS))
def test_values_or_errors_match_mlx(name):
    result = both({**ARANGE, **NUMPY_INTS}[name])
    if result is not None:
        ours, theirs = result
        for x, y in zip(*(v if isinstance(v, list) else [v] for v in (ours, theirs))):
            assert_same_as_mlx(x, y)


@needs_mlx
@pytest.mark.parametrize("name", list(NOT_INTS))
def test_other_numbers_are_not_int_arguments(name):
    for lib in (real_mx, mx):
        with pytest.raises(TypeError) as info:
            NOT_INTS[name](lib)
        assert "incompatible function arguments" in str(info.value)


def test_numpy_integer_shape_entries_become_ints():
    out = mx.reshape(mx.arange(6), [np.int64(3), np.int32(2)])
    assert out.shape == (3, 2) and all(type(d) is int for d in out.shape)
    assert mx.topk(mx.arange(5), np.int16(2)).tolist() == [3, 4]
    with pytest.raises(TypeError):
        mx.topk(mx.arange(4), np.float64(2.0))


# --- dimensions an op computes must fit 32 bits -------------------------------------------

BIG = 2**30
OVERFLOWS = {
    "concatenate3": (lambda m: m.concatenate([m.zeros(BIG)] * 3), 3 * BIG),
    "concatenate2": (lambda m: m.concatenate([m.zeros(BIG)] * 2), 2 * BIG),
    "repeat": (lambda m: m.repeat(m.zeros(BIG), 2), 2 * BIG),
    "tile": (lambda m: m.tile(m.zeros(BIG), 3), 3 * BIG),
    "pad": (lambda m: m.pad(m.zeros(BIG), BIG), 3 * BIG),
    "kron": (lambda m: m.kron(m.zeros(2**16), m.zeros(2**16)), 2**32),
}


@pytest.mark.parametrize("name", list(OVERFLOWS))
def test_computed_dimension_overflow_is_named(name):
    build, dim = OVERFLOWS[name]
    kind, message = assert_same_error(build)
    assert kind is OverflowError and str(dim) in message
    assert message.startswith(f"[{name.rstrip('0123456789')}] Shape dimension {dim} ")


def test_a_large_stack_is_still_fine():
    # three axes of 2**30 are no single overflowing dimension (never evaluated)
    assert mx.stack([mx.zeros(BIG)] * 3).shape == (3, BIG)


# --- put_along_axis into an empty array ---------------------------------------------------


@needs_mlx
def test_put_along_axis_into_an_empty_array_takes_any_indices():
    def run(m):
        a = m.array([], m.float32)
        return m.put_along_axis(a, a, a, axis=None)

    ours, theirs = both(run)
    assert_same_as_mlx(ours, theirs)
    # with something to write, float indices are still refused (MLX: when evaluated)
    with pytest.raises(ValueError, match="Indices must be integral"):
        mx.put_along_axis(mx.zeros(3), mx.array([1.0]), mx.array([1.0]), axis=0)
