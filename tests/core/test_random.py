"""mx.random (mlxref/core/random.py; MLX's mlx/random.cpp) against real MLX: the same key or
seed gives MLX's numbers; and the samplers' own properties (determinism, ranges, sample
statistics, broadcasting, errors).

Every sampler's numbers are MLX's, bit for bit (their erfinv, log and log1p
are MLX's float32 kernels: MLX's polynomial, the C library's logf and
log1pf). Also: the global key sequence,
argsort (which permutation needs), gradients and vmap through the samplers,
nn.Linear's initial weights, and MLX's error messages.
"""

import math
import re

import pytest

import mlxref.core as mx
import mlxref.nn as nn
from mlxref.utils import tree_flatten
from support import assert_array, assert_same_array, needs_mlx, real_mx


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


SEEDS = [0, 1, 12345, 2**40 + 7]
SHAPES = [(), (1,), (3,), (2, 3), (4, 5)]


def _lib_key(lib, seed):
    return lib.random.key(seed)


# Each sampler, as the same call on either library; shape-dependent ones take the shape.
SAMPLERS = {
    "uniform": lambda m, s, k: m.random.uniform(shape=s, key=k),
    "uniform bounds": lambda m, s, k: m.random.uniform(-2, 3.5, s, key=k),
    "uniform float16": lambda m, s, k: m.random.uniform(shape=s, dtype=m.float16, key=k),
    "uniform bfloat16": lambda m, s, k: m.random.uniform(shape=s, dtype=m.bfloat16, key=k),
    "normal": lambda m, s, k: m.random.normal(s, key=k),
    "normal loc scale": lambda m, s, k: m.random.normal(s, loc=1.5, scale=0.25, key=k),
    "normal float16": lambda m, s, k: m.random.normal(s, dtype=m.float16, key=k),
    "normal float64": lambda m, s, k: m.random.normal(s, dtype=m.float64, key=k),
    "normal complex64": lambda m, s, k: m.random.normal(s, dtype=m.complex64, key=k),
    "randint": lambda m, s, k: m.random.randint(-5, 100, s, key=k),
    "randint uint8": lambda m, s, k: m.random.randint(0, 200, s, dtype=m.uint8, key=k),
    "bernoulli": lambda m, s, k: m.random.bernoulli(0.3, s, key=k),
    "truncated_normal": lambda m, s, k: m.random.truncated_normal(-1, 2, s, key=k),
    "gumbel": lambda m, s, k: m.random.gumbel(s, key=k),
    "laplace": lambda m, s, k: m.random.laplace(s, key=k),
    "laplace loc scale": lambda m, s, k: m.random.laplace(s, loc=0.5, scale=2.0, key=k),
    "laplace float16": lambda m, s, k: m.random.laplace(s, dtype=m.float16, key=k),
}


@needs_mlx
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_each_sampler_gives_mlx_values_for_several_keys_and_shapes(name):
    for seed in SEEDS:
        for shape in SHAPES + [(300,)]:
            ours = SAMPLERS[name](mx, shape, mx.random.key(seed))
            theirs = SAMPLERS[name](real_mx, shape, real_mx.random.key(seed))
            assert_same_array(ours, theirs)  # every element by repr


@needs_mlx
def test_keys_and_split_are_mlx_words():
    for seed in SEEDS + [2**64 - 1]:
        assert_same_array(mx.random.key(seed), real_mx.random.key(seed), rtol=1e-6, atol=0.0)
        for num in (0, 1, 2, 3, 7):
            assert_same_array(mx.random.split(mx.random.key(seed), num),
                              real_mx.random.split(real_mx.random.key(seed), num),
                              rtol=1e-6, atol=0.0)
        # a key made any way is a key: split a split
        k = mx.random.split(mx.random.key(seed))[1]
        rk = real_mx.random.split(real_mx.random.key(seed))[1]
        assert_same_array(mx.random.split(k, 4), real_mx.random.split(rk, 4), rtol=1e-6, atol=0.0)


def test_narrow_bits_are_the_bytes_of_the_words():
    key = mx.random.key(5)
    for n in (1, 3, 4, 6, 9):
        words = mx.random.bits((math.ceil(n / 4),), 4, key).tolist()
        raw = b"".join(w.to_bytes(4, "little") for w in words)
        assert mx.random.bits((n,), 1, key).tolist() == list(raw[:n])
        assert mx.random.bits((n,), 1, key).dtype is mx.uint8
    for n in (1, 2, 3, 5):
        words = mx.random.bits((math.ceil(n / 2),), 4, key).tolist()
        raw = b"".join(w.to_bytes(4, "little") for w in words)
        halves = [int.from_bytes(raw[2 * i : 2 * i + 2], "little") for i in range(n)]
        assert mx.random.bits((n,), 2, key).tolist() == halves
    # the words of (n, 2) bits are split's
    assert mx.random.bits((3, 2), key=key).tolist() == mx.random.split(key, 3).tolist()


@needs_mlx
def test_the_global_sequence_follows_seed_as_in_mlx():
    def draws(m):
        return [m.random.uniform(shape=(2,)), m.random.normal((3,)),
                m.random.randint(0, 10, (4,)), m.random.bernoulli(0.5, (3,)),
                m.random.split(m.random.state[0]), m.random.permutation(5)]

    for seed in (0, 3, 2**33 + 1):
        mx.random.seed(seed)
        real_mx.random.seed(seed)
        for ours, theirs in zip(draws(mx), draws(real_mx)):
            assert_same_array(ours, theirs, rtol=1e-6, atol=0.0)
        assert_same_array(mx.random.state[0], real_mx.random.state[0], rtol=1e-6, atol=0.0)
    mx.random.seed(7)
    first = mx.random.uniform().item()
    assert mx.random.uniform().item() != first  # the state moved on
    mx.random.seed(7)
    assert mx.random.uniform().item() == first


@needs_mlx
def test_categorical_both_paths_and_permutation():
    logits = [[0.1, 1.0, 2.0, -1.0], [3.0, 0.0, 0.0, 1.0]]
    calls = [
        lambda m, k: m.random.categorical(m.array(logits), key=k),
        lambda m, k: m.random.categorical(m.array(logits), axis=0, key=k),
        lambda m, k: m.random.categorical(m.array(logits), num_samples=5, key=k),
        lambda m, k: m.random.categorical(m.array(logits), shape=(3, 2), key=k),
        # one distribution with a shape: MLX's inverse-CDF path
        lambda m, k: m.random.categorical(m.array(logits[0]), shape=(7,), key=k),
        lambda m, k: m.random.categorical(m.array([logits[1]]), num_samples=6, key=k),
        lambda m, k: m.random.categorical(m.array([0.0, float("-inf"), 2.0]), key=k),
        lambda m, k: m.random.categorical(m.array([1.0, float("inf"), float("inf")]),
                                          shape=(6,), key=k),
        lambda m, k: m.random.permutation(10, key=k),
        lambda m, k: m.random.permutation(m.arange(12).reshape(3, 4), key=k),
        lambda m, k: m.random.permutation(m.arange(12).reshape(3, 4), axis=-1, key=k),
        lambda m, k: m.random.permutation(0, key=k),
    ]
    for seed in SEEDS:
        for call in calls:
            assert_same_array(call(mx, mx.random.key(seed)),
                              call(real_mx, real_mx.random.key(seed)), rtol=1e-6, atol=0.0)


@needs_mlx
def test_multivariate_normal_is_mlx_to_float32_rounding():
    mean = [[1.0, 2.0], [0.0, -1.0]]
    cov = [[2.0, 0.5], [0.5, 1.0]]
    for seed in SEEDS[:3]:
        for shape in [(), (2,), (3, 2)]:
            ours = mx.random.multivariate_normal(mx.array(mean), mx.array(cov), shape,
                                                 key=mx.random.key(seed))
            theirs = real_mx.random.multivariate_normal(real_mx.array(mean), real_mx.array(cov),
                                                        shape, key=real_mx.random.key(seed))
            # MLX's float32 SVD and mlxref's double square root differ by a few ulps
            assert_same_array(ours, theirs, rtol=2e-5, atol=1e-6)


@needs_mlx
def test_gradients_reach_the_parameters_as_in_mlx():
    def fns(m, k):
        return [
            (lambda lo, hi: m.random.uniform(lo, hi, (3,), key=k).sum(), (0.5, 2.0)),
            (lambda lo, sc: m.random.normal((3,), loc=lo, scale=sc, key=k).sum(), (0.5, 2.0)),
            (lambda a, b: m.random.truncated_normal(a, b, (4,), key=k).sum(), (-0.5, 1.5)),
            (lambda lo, sc: (m.random.randint(0, 5, (3,), key=k) * lo * sc).sum(), (1.0, 2.0)),
        ]

    ours_all = fns(mx, mx.random.key(3))
    theirs_all = fns(real_mx, real_mx.random.key(3))
    for (f, args), (g, _) in zip(ours_all, theirs_all):
        ours = mx.grad(f, argnums=(0, 1))(*(mx.array(a) for a in args))
        theirs = real_mx.grad(g, argnums=(0, 1))(*(real_mx.array(a) for a in args))
        for o, t in zip(ours, theirs):
            assert_same_array(o, t, rtol=1e-6, atol=0.0)
    # logits and mean get their gradients through add
    g = mx.grad(lambda m: mx.random.multivariate_normal(m, mx.eye(2), (3,),
                                                        key=mx.random.key(1)).sum())
    assert g(mx.zeros((2,))).tolist() == [3.0, 3.0]


@needs_mlx
def test_vmap_over_keys_is_mlx():
    ks, rks = mx.random.split(mx.random.key(9), 4), real_mx.random.split(real_mx.random.key(9), 4)
    calls = [
        (lambda m: (lambda k: m.random.uniform(shape=(3,), key=k)), {}),
        (lambda m: (lambda k: m.random.normal((2, 2), key=k)), {}),
        (lambda m: (lambda k: m.random.randint(0, 9, (5,), key=k)), {}),
        (lambda m: (lambda k: m.random.bernoulli(0.5, (3,), key=k)), {"in_axes": 1,
                                                                      "out_axes": 1}),
        (lambda m: (lambda k: m.random.split(k, 3)), {}),
        (lambda m: (lambda k: m.random.permutation(6, key=k)), {}),
    ]
    for make, kw in calls:
        key_in = ks.T if kw.get("in_axes") == 1 else ks
        rkey_in = rks.T if kw.get("in_axes") == 1 else rks
        assert_same_array(mx.vmap(make(mx), **kw)(key_in),
                          real_mx.vmap(make(real_mx), **kw)(rkey_in), rtol=1e-6, atol=0.0)


@needs_mlx
def test_the_bits_have_no_derivative_rules_as_in_mlx():
    for m in (mx, real_mx):
        with pytest.raises(ValueError) as e:
            m.grad(lambda x: m.random.uniform(key=x.astype(m.uint32)).sum())(m.array([1.0, 2.0]))
        assert str(e.value) == "[Primitive::vjp] Not implemented for RandomBits."


@needs_mlx
def test_linear_under_seed_0_has_mlx_weights():
    import mlx.nn as real_nn
    import mlx.utils as real_utils

    mx.random.seed(0)
    real_mx.random.seed(0)
    ours = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    theirs = real_nn.Sequential(real_nn.Linear(4, 3), real_nn.ReLU(), real_nn.Linear(3, 2))
    a, b = tree_flatten(ours.parameters()), real_utils.tree_flatten(theirs.parameters())
    assert [k for k, _ in a] == [k for k, _ in b]
    for (_, x), (_, y) in zip(a, b):
        assert_same_array(x, y, rtol=1e-6, atol=0.0)


@needs_mlx
def test_argsort_is_mlx():
    nan = float("nan")
    cases = [
        ([3.0, 1.0, 2.0, 1.0], {}), ([[3.0, 1.0, nan, 1.0], [2.0, 5.0, 0.0, -1.0]], {}),
        ([[3.0, 1.0, nan, 1.0], [2.0, 5.0, 0.0, -1.0]], {"axis": 0}),
        ([[3, 1], [2, 5]], {"axis": None}), ([[[1, 0], [0, 1]]], {"axis": -2}), ([], {}),
        (2.5, {"axis": None}),
    ]
    for data, kw in cases:
        assert_same_array(mx.argsort(mx.array(data), **kw),
                          real_mx.argsort(real_mx.array(data), **kw), rtol=1e-6, atol=0.0)
    rows = [[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]
    for in_axes in (0, 1):
        assert_same_array(mx.vmap(mx.argsort, in_axes=in_axes)(mx.array(rows)),
                          real_mx.vmap(real_mx.argsort, in_axes=in_axes)(real_mx.array(rows)),
                          rtol=1e-6, atol=0.0)


def _message(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split("\n")[:2]
    return None


@needs_mlx
def test_errors_are_mlx_messages():
    calls = [
        lambda m: m.argsort(m.array([[1, 2]]), axis=2),
        lambda m: m.argsort(m.array(1.0)),
        lambda m: m.argsort([1, 2]),
        lambda m: m.random.key(-1),
        lambda m: m.random.key(2**64),
        lambda m: m.random.seed(1.5),
        lambda m: m.random.split(m.array([1, 2])),
        lambda m: m.random.split(m.array([1, 2, 3], m.uint32)),
        lambda m: m.random.split(m.random.key(0), -1),
        lambda m: m.random.uniform(key=m.array([1, 2])),
        lambda m: m.random.uniform(key=3),
        lambda m: m.random.uniform(shape=(2,), key=m.zeros((2, 2), m.uint32)),
        lambda m: m.random.uniform(dtype=m.float64),
        lambda m: m.random.uniform(dtype=m.int32),
        lambda m: m.random.uniform(m.zeros((3,)), 1, (3, 2)),
        lambda m: m.random.uniform(shape=(2, -1)),
        lambda m: m.random.normal(dtype=m.int32),
        lambda m: m.random.normal(shape=(-1,)),
        lambda m: m.random.randint(0, 5, dtype=m.float32),
        lambda m: m.random.bernoulli(m.array([1, 0])),
        lambda m: m.random.bernoulli(m.array([0.5, 0.2]), (3,)),
        lambda m: m.random.truncated_normal(0, 1, dtype=m.int32),
        lambda m: m.random.truncated_normal(0, 1, dtype=m.float64),
        lambda m: m.random.gumbel(dtype=m.int32),
        lambda m: m.random.gumbel(dtype=m.float64),
        lambda m: m.random.laplace(dtype=m.int32),
        lambda m: m.random.categorical(m.array([1.0, 2.0]), axis=1),
        lambda m: m.random.categorical(m.array([[1.0, 2.0]]), shape=(3,), num_samples=2),
        lambda m: m.random.categorical(m.array([[1.0, 2.0], [1.0, 2.0]]), shape=(3,)),
        lambda m: m.random.permutation(-1),
        lambda m: m.random.multivariate_normal(m.zeros((2,)), m.eye(2), dtype=m.float16),
        lambda m: m.random.multivariate_normal(m.zeros(()), m.eye(2)),
        lambda m: m.random.multivariate_normal(m.zeros((2,)), m.zeros((2,))),
        lambda m: m.random.multivariate_normal(m.zeros((2,)), m.zeros((2, 3))),
        lambda m: m.random.multivariate_normal(m.zeros((3,)), m.eye(2)),
    ]
    for call in calls:
        ours, theirs = _message(lambda: call(mx)), _message(lambda: call(real_mx))
        assert theirs is not None
        assert ours == theirs, (ours, theirs)


def test_where_mlx_crashes_a_clear_error():
    # MLX reads x.shape(axis) unchecked ("SmallVector out of range.")
    with pytest.raises(IndexError, match=r"\[permutation\] Axis 2 is out of bounds"):
        mx.random.permutation(mx.zeros((2, 2)), axis=2)
    with pytest.raises(ValueError, match=r"\[bits\] Bit width must be in \{1, 2, 4\} but got 3"):
        mx.random.bits((2,), 3, mx.random.key(0))


# --- the samplers' own properties ----------------------------------------------------------


def test_same_seed_same_values_different_seed_different_values():
    mx.random.seed(42)
    first = (mx.random.uniform(shape=(5,)).tolist(), mx.random.normal((5,)).tolist(),
             mx.random.randint(0, 1000, (5,)).tolist())
    mx.random.seed(42)
    again = (mx.random.uniform(shape=(5,)).tolist(), mx.random.normal((5,)).tolist(),
             mx.random.randint(0, 1000, (5,)).tolist())
    assert first == again
    mx.random.seed(43)
    other = (mx.random.uniform(shape=(5,)).tolist(), mx.random.normal((5,)).tolist(),
             mx.random.randint(0, 1000, (5,)).tolist())
    assert other[0] != first[0] and other[1] != first[1] and other[2] != first[2]
    # successive draws differ
    mx.random.seed(42)
    assert mx.random.uniform(shape=(5,)).tolist() != mx.random.uniform(shape=(5,)).tolist()


def test_a_key_gives_the_same_values_every_time():
    a = mx.random.uniform(shape=(4,), key=mx.random.key(7)).tolist()
    mx.random.uniform(shape=(3,))  # the global sequence does not matter
    assert mx.random.uniform(shape=(4,), key=mx.random.key(7)).tolist() == a
    assert mx.random.uniform(shape=(4,), key=mx.random.key(8)).tolist() != a
    k = mx.array([0, 3], mx.uint32)
    assert mx.random.normal((3,), key=k).tolist() == mx.random.normal((3,), key=k).tolist()
    assert mx.random.randint(0, 100, (6,), key=k).tolist() == \
        mx.random.randint(0, 100, (6,), key=k).tolist()


def test_uniform():
    mx.random.seed(0)
    u = mx.random.uniform(shape=(1000,))
    assert u.shape == (1000,) and u.dtype is mx.float32
    values = u.tolist()
    assert all(0.0 <= v < 1.0 for v in values)
    assert abs(sum(values) / 1000 - 0.5) < 0.05
    assert len(set(values)) > 990
    v = mx.random.uniform(-3, -1, (500,)).tolist()
    assert all(-3.0 <= x < -1.0 for x in v)
    assert min(v) < -2.9 and max(v) > -1.1
    s = mx.random.uniform()
    assert s.shape == () and 0.0 <= s.item() < 1.0
    assert mx.random.uniform(0, 1, (0,)).shape == (0,)
    assert mx.random.uniform(0, 1, [2, 3]).shape == (2, 3)


def test_uniform_with_array_bounds_broadcasts():
    low = mx.array([0.0, 10.0, 100.0])
    out = mx.random.uniform(low, low + 1, (4, 3))
    assert out.shape == (4, 3) and out.dtype is mx.float32
    for row in out.tolist():
        for lo, x in zip([0.0, 10.0, 100.0], row):
            assert lo <= x < lo + 1
    out = mx.random.uniform(mx.array([1, 2]), mx.array([[3], [4]]), (2, 2))
    for i, row in enumerate(out.tolist()):
        for j, x in enumerate(row):
            assert 1 + j <= x < 3 + i
    assert out.dtype is mx.float32


def test_uniform_errors():
    with raises(ValueError, "[uniform] Cannot generate random values of shape () from "
                "broadcasted shape (3)."):
        mx.random.uniform(mx.zeros((3,)), 1)
    with raises(ValueError, "[broadcast_shapes] Shapes (3,2) and (3) cannot be broadcast."):
        mx.random.uniform(mx.zeros((3,)), 1, (3, 2))
    with raises(ValueError, "[uniform] Can only generate uniform numbers with real floating "
                "point type."):
        mx.random.uniform(0, 1, (2,), mx.int32)
    with raises(RuntimeError, "[uniform] Unsupported type."):
        mx.random.uniform(0, 1, (2,), mx.float64)
    with raises(ValueError, "[bits] Negative dimensions not allowed."):
        mx.random.uniform(0, 1, (-2,))
    with raises(ValueError, "Invalid type list received in array initialization."):
        mx.random.uniform(0, [1, 2], (2,))
    with raises(TypeError, "uniform(): incompatible function arguments."):
        mx.random.uniform(0, 1, 3)


def test_normal_statistics():
    mx.random.seed(1)
    values = mx.random.normal((10000,)).tolist()
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    assert abs(mean) < 0.05 and abs(std - 1.0) < 0.05
    values = mx.random.normal((10000,), loc=3.0, scale=0.5).tolist()
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    assert abs(mean - 3.0) < 0.03 and abs(std - 0.5) < 0.03


def test_normal_shapes_dtypes_and_array_parameters():
    z = mx.random.normal()
    assert z.shape == () and z.dtype is mx.float32
    assert mx.random.normal((2, 3), mx.float64).dtype is mx.float64
    assert mx.random.normal([0, 2]).shape == (0, 2)
    # loc broadcasts against the draws: one draw, three means
    out = mx.random.normal((), loc=mx.array([1.0, 2.0, 3.0]), key=mx.random.key(5)).tolist()
    assert len(out) == 3 and abs(out[1] - out[0] - 1.0) < 1e-6 and abs(out[2] - out[0] - 2.0) < 1e-6
    assert_array(mx.random.normal([2, 2], scale=0), [[0.0, 0.0], [0.0, 0.0]], mx.float32)
    base = mx.random.normal((3,), key=mx.random.key(9)).tolist()
    scaled = mx.random.normal((3,), loc=1, scale=mx.array([1.0, 2.0, 3.0]),
                              key=mx.random.key(9)).tolist()
    for i in range(3):
        assert abs(scaled[i] - (1 + (i + 1) * base[i])) < 1e-6
    assert mx.random.normal((3,), loc=mx.array([1, 2, 3])).dtype is mx.float32


def test_normal_errors():
    with raises(ValueError, "[normal] Only floating point and complex64 types are supported."):
        mx.random.normal((3,), mx.int32)
    with raises(ValueError, "[bits] Negative dimensions not allowed."):
        mx.random.normal((-1,))
    with raises(ValueError, "Invalid type list received in array initialization."):
        mx.random.normal(loc=[1.0])


def test_randint():
    mx.random.seed(3)
    r = mx.random.randint(0, 10, (2000,))
    assert r.shape == (2000,) and r.dtype is mx.int32
    values = r.tolist()
    assert all(isinstance(v, int) and 0 <= v < 10 for v in values)
    assert set(values) == set(range(10))
    neg = mx.random.randint(-5, -1, (200,)).tolist()
    assert set(neg) == {-5, -4, -3, -2}
    assert mx.random.randint(0, 10).shape == ()
    assert mx.random.randint(0, 10, (5,), mx.int64).dtype is mx.int64
    b = mx.random.randint(0, 2, (200,), mx.bool_)
    assert b.dtype is mx.bool_ and set(b.tolist()) == {True, False}
    # high <= low: MLX clamps to low
    assert_array(mx.random.randint(5, 5, (3,)), [5, 5, 5], mx.int32)
    assert_array(mx.random.randint(5, 2, (3,)), [5, 5, 5], mx.int32)
    # float bounds: floor of a uniform in [0.5, 3.7), clamped to [0, 2]
    assert set(mx.random.randint(0.5, 3.7, (300,)).tolist()) == {0, 1, 2}
    per_column = mx.random.randint(mx.array([0, 10]), 20, (50, 2)).tolist()
    assert all(0 <= x < 20 and 10 <= y < 20 for x, y in per_column)


def test_randint_and_seed_errors():
    with raises(ValueError, "[randint] randint only accepts integer dtypes and bool."):
        mx.random.randint(0, 10, (5,), mx.float32)
    with raises(ValueError, "[broadcast_shapes] Shapes (3) and (2) cannot be broadcast."):
        mx.random.randint(mx.array([0, 10]), 20, (3,))
    with raises(ValueError, "[bits] Negative dimensions not allowed."):
        mx.random.randint(0, 10, (-1,))
    with raises(TypeError, "seed(): incompatible function arguments. The following argument "
                "types are supported:\n    1. seed(seed: int) -> None\n\n"
                "Invoked with types: float"):
        mx.random.seed(1.5)
    with raises(TypeError, "seed(): incompatible function arguments."):
        mx.random.seed(-1)


def test_random_bits_are_a_node_on_the_key_and_the_arithmetic_is_lazy():
    key = mx.random.key(1)
    u = mx.random.uniform(2.0, 3.0, (3,), key=key)
    # low + (high - low) * u: lazy, down to the RandomBits node whose one input is the key
    assert u.data() is None and u.primitive().name == "Add"
    found = []
    stack = [u]
    while stack:
        node = stack.pop()
        if node.primitive() is not None and node.primitive().name == "RandomBits":
            found.append(node)
        stack.extend(node.inputs())
    assert len(found) == 1
    (bits,) = found
    assert bits.dtype is mx.uint32 and bits.shape == (3,)
    assert len(bits.inputs()) == 1 and bits.inputs()[0].id() == key.id()


@needs_mlx
def test_random_shapes_and_dtypes_match_mlx():
    cases = [
        ("uniform", (), {}), ("uniform", (0, 1, (2, 3)), {}), ("uniform", (2, 3, [4]), {}),
        ("normal", ((3,),), {}), ("normal", ((2,),), {"dtype": "float64"}),
        ("normal", ((),), {"loc": "array3"}), ("randint", (0, 10, (5,)), {}),
        ("randint", (0, 2, (5,)), {"dtype": "bool_"}),
        ("randint", (0, 10, (2, 2)), {"dtype": "int64"}),
    ]
    for name, args, kwargs in cases:
        def conv(lib):
            kw = {}
            for k, v in kwargs.items():
                kw[k] = getattr(lib, v) if k == "dtype" else lib.array([1.0, 2.0, 3.0])
            return kw
        ours = getattr(mx.random, name)(*args, **conv(mx))
        theirs = getattr(real_mx.random, name)(*args, **conv(real_mx))
        assert ours.shape == theirs.shape, name
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1], name
