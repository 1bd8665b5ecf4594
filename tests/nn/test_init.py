"""mlxref.nn.init: the distributions the initializers promise, and MLX's draws.

The statistics are computed here in plain Python from the drawn values and
compared with the formulas (std ``gain * sqrt(2 / (fan_in + fan_out))``
etc.); since ``mx.random`` is MLX's generator, under the same seed every
initializer also draws exactly MLX's values.
"""

import doctest
import math

import pytest
from support import assert_same_as_mlx, close, needs_mlx, real_mx

import mlxref.core as mx
import mlxref.nn as nn

if real_mx is not None:
    import mlx.nn as real_nn
else:  # pragma: no cover
    real_nn = None


def flat(a):
    out = a.tolist()
    while out and isinstance(out[0], list):
        out = [v for row in out for v in row]
    return out


def mean_std(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def draw(make, shape, *args, **kwargs):
    mx.random.seed(4)
    return make(mx.zeros(shape), *args, **kwargs)


@pytest.mark.parametrize(
    "make,shape,args,expected_mean,expected_std,limit",
    [
        # (out, in) = (40, 30): fan_in 30, fan_out 40
        (nn.init.glorot_normal(), (40, 30), {}, 0.0, math.sqrt(2 / 70), None),
        (nn.init.glorot_uniform(), (40, 30), {"gain": 2.0}, 0.0, 2 * math.sqrt(2 / 70),
         2 * math.sqrt(6 / 70)),
        (nn.init.he_normal(), (40, 30), {}, 0.0, math.sqrt(1 / 30), None),
        (nn.init.he_normal(), (40, 30), {"mode": "fan_out", "gain": 3.0}, 0.0,
         3 * math.sqrt(1 / 40), None),
        (nn.init.he_uniform(), (40, 30), {}, 0.0, math.sqrt(1 / 30), math.sqrt(3 / 30)),
        # (out, kh, kw, in) = (8, 3, 3, 5): receptive field 9, fan_in 45, fan_out 72
        (nn.init.he_uniform(), (8, 3, 3, 5), {"mode": "fan_out"}, 0.0, math.sqrt(1 / 72),
         math.sqrt(3 / 72)),
        (nn.init.glorot_normal(), (8, 3, 3, 5), {}, 0.0, math.sqrt(2 / 117), None),
        (nn.init.normal(mean=1.0, std=0.5), (30, 40), {}, 1.0, 0.5, None),
        (nn.init.uniform(low=-2.0, high=4.0), (30, 40), {}, 1.0, 6 / math.sqrt(12), None),
    ],
)
def test_initializers_have_the_promised_spread(make, shape, args, expected_mean, expected_std,
                                               limit):
    values = flat(draw(make, shape, **args))
    assert len(values) == math.prod(shape)
    mean, std = mean_std(values)
    # >= 360 draws: the sample std is within 8% and the mean within 4 standard errors.
    assert abs(std / expected_std - 1) < 0.08
    assert abs(mean - expected_mean) < 4 * expected_std / math.sqrt(len(values))
    if limit is not None:  # uniform in [-limit, limit): the extremes come close to it
        assert 0.9 * limit < max(abs(v) for v in values) <= limit


def test_constant_identity_sparse_orthogonal():
    assert flat(nn.init.constant(-0.5, mx.float16)(mx.zeros((2, 3)))) == [-0.5] * 6
    assert nn.init.constant(2)(mx.zeros((2,))).dtype == mx.float32
    eye = nn.init.identity()(mx.zeros((3, 3))).tolist()
    assert eye == [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]
    with pytest.raises(ValueError, match="must be a square matrix"):
        nn.init.identity()(mx.zeros((2, 3)))
    sparse = draw(nn.init.sparse(0.25, std=2.0), (6, 8)).tolist()
    assert all(sum(v == 0 for v in row) == 2 for row in sparse)  # ceil(0.25 * 8) per row
    q = draw(nn.init.orthogonal(gain=2.0), (3, 5))
    gram = (q @ q.T).tolist()  # rows orthogonal, of norm 2
    assert close(gram, [[4.0 if i == j else 0.0 for j in range(3)] for i in range(3)],
                 atol=1e-5)
    tall = draw(nn.init.orthogonal(), (5, 3))
    assert close((tall.T @ tall).tolist(), [[float(i == j) for j in range(3)]
                                            for i in range(3)], atol=1e-5)


@needs_mlx
@pytest.mark.parametrize(
    "name,settings,shape,call",
    [
        ("constant", (0.25,), (2, 3), {}),
        ("normal", (0.5, 2.0), (3, 4), {}),
        ("uniform", (-1.0, 3.0), (3, 4), {}),
        ("identity", (), (4, 4), {}),
        ("glorot_normal", (), (3, 2, 4), {"gain": 0.5}),
        ("glorot_uniform", (), (5, 4), {}),
        ("he_normal", (), (5, 4), {"mode": "fan_out"}),
        ("he_uniform", (), (2, 3, 3, 4), {"gain": 2.0}),
        ("sparse", (0.5,), (4, 6), {}),
        ("orthogonal", (1.5,), (4, 6), {}),
    ],
)
def test_initializers_draw_mlxs_values(name, settings, shape, call):
    mx.random.seed(21)
    real_mx.random.seed(21)
    ours = getattr(nn.init, name)(*settings)(mx.zeros(shape), **call)
    theirs = getattr(real_nn.init, name)(*settings)(real_mx.zeros(shape), **call)
    assert_same_as_mlx(ours, theirs, rtol=1e-4, atol=1e-5)


@needs_mlx
@pytest.mark.parametrize(
    "program",
    [
        lambda init, lib: init.glorot_uniform()(lib.zeros((3,))),
        lambda init, lib: init.he_normal()(lib.zeros((3, 2)), mode="fan"),
        lambda init, lib: init.sparse(0.5)(lib.zeros((2, 2, 2))),
        lambda init, lib: init.orthogonal()(lib.zeros((2,))),
        lambda init, lib: init.identity()(lib.zeros((2, 2, 2))),
    ],
)
def test_initializer_errors_match_mlx(program):
    with pytest.raises(Exception) as theirs:
        program(real_nn.init, real_mx)
    with pytest.raises(type(theirs.value)) as ours:
        program(nn.init, mx)
    assert str(ours.value) == str(theirs.value)


def test_initializers_are_mlxs():
    if real_nn is not None:
        theirs = {n for n in dir(real_nn.init) if not n.startswith("_")
                  and callable(getattr(real_nn.init, n))}
        assert set(nn.init.__all__) == theirs - {"Callable", "Literal"}


def test_docstring_examples():
    result = doctest.testmod(nn.init, verbose=False)
    assert result.attempted > 0 and result.failed == 0
