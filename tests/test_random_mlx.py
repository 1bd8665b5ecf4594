"""mx.random against real MLX: the same key or seed gives MLX's numbers.

Integers and keys must be equal; floats within rtol 1e-6 (mlxref's float32
erfinv and log1p may be an ulp from MLX's). Also: the global key sequence,
argsort (which permutation needs), gradients and vmap through the samplers,
nn.Linear's initial weights, and MLX's error messages.
"""

import math

import pytest

import mlxref.core as mx
import mlxref.nn as nn
from mlxref.utils import tree_flatten
from support import close, needs_mlx, real_mx

SEEDS = [0, 1, 12345, 2**40 + 7]
SHAPES = [(), (1,), (3,), (2, 3), (4, 5)]


def _lib_key(lib, seed):
    return lib.random.key(seed)


def _same(ours, theirs, rtol=1e-6, atol=0.0):
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
    a, b = ours.tolist(), theirs.tolist()
    if ours.dtype.is_inexact:
        assert close(a, b, rtol=rtol, atol=atol), (a, b)
    else:
        assert a == b


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
    # laplace: log1p(-|u|) may be an ulp from MLX's, and loc can cancel it down
    atol = 1e-6 if name.startswith("laplace") else 0.0
    for seed in SEEDS:
        for shape in SHAPES:
            ours = SAMPLERS[name](mx, shape, mx.random.key(seed))
            theirs = SAMPLERS[name](real_mx, shape, real_mx.random.key(seed))
            _same(ours, theirs, atol=atol)


@needs_mlx
def test_keys_and_split_are_mlx_words():
    for seed in SEEDS + [2**64 - 1]:
        _same(mx.random.key(seed), real_mx.random.key(seed))
        for num in (0, 1, 2, 3, 7):
            _same(mx.random.split(mx.random.key(seed), num),
                  real_mx.random.split(real_mx.random.key(seed), num))
        # a key made any way is a key: split a split
        k = mx.random.split(mx.random.key(seed))[1]
        rk = real_mx.random.split(real_mx.random.key(seed))[1]
        _same(mx.random.split(k, 4), real_mx.random.split(rk, 4))


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
            _same(ours, theirs)
        _same(mx.random.state[0], real_mx.random.state[0])
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
            _same(call(mx, mx.random.key(seed)), call(real_mx, real_mx.random.key(seed)))


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
            _same(ours, theirs, rtol=2e-5, atol=1e-6)


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
            _same(o, t)
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
        _same(mx.vmap(make(mx), **kw)(key_in), real_mx.vmap(make(real_mx), **kw)(rkey_in))


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
        _same(x, y)


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
        _same(mx.argsort(mx.array(data), **kw), real_mx.argsort(real_mx.array(data), **kw))
    rows = [[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]
    for in_axes in (0, 1):
        _same(mx.vmap(mx.argsort, in_axes=in_axes)(mx.array(rows)),
              real_mx.vmap(real_mx.argsort, in_axes=in_axes)(real_mx.array(rows)))


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
