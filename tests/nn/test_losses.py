"""mlxref.nn.losses against mlx.nn.losses: values, gradients, reductions and errors.

Every loss runs on the same deterministic inputs in both libraries, with
each reduction, and its gradient with respect to the predictions is
compared too. The MLX-free tests check a few values worked by hand.
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


def grid(rows, cols, phase=0.0, low=-2.0, high=2.0):
    """Deterministic values in [low, high]."""
    mid, half = (low + high) / 2, (high - low) / 2
    return [[mid + half * math.sin(1.3 * i + 0.7 * j + phase) for j in range(cols)]
            for i in range(rows)]


def probabilities(rows, cols, phase=0.0):
    out = []
    for row in grid(rows, cols, phase):
        e = [math.exp(v) for v in row]
        out.append([v / sum(e) for v in e])
    return out


def signs(rows, cols):
    return [[1.0 if (i + 2 * j) % 3 else -1.0 for j in range(cols)] for i in range(rows)]


# (name, differentiated argument's data, other arguments' data (lists or ("int", data)), kwargs)
CASES = [
    ("cross_entropy", grid(3, 4), [("int", [0, 3, 1])], {}),
    ("cross_entropy", grid(3, 4), [probabilities(3, 4, 1.0)], {}),
    ("cross_entropy", grid(3, 4), [("int", [2, 0, 1])], {"label_smoothing": 0.3}),
    ("cross_entropy", grid(3, 4), [("int", [1, 1, 0, 2])], {"axis": 0}),
    ("cross_entropy", grid(3, 4), [("int", [0, 3, 1])], {"weights": [0.5, 1.0, 2.0]}),
    ("binary_cross_entropy", grid(2, 3), [probabilities(2, 3, 0.5)], {}),
    ("binary_cross_entropy", grid(2, 3), [probabilities(2, 3, 0.5)],
     {"weights": grid(2, 3, 2.0, 0.0, 1.0)}),
    ("binary_cross_entropy", probabilities(2, 3), [[[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]],
     {"with_logits": False}),
    ("l1_loss", grid(3, 2), [grid(3, 2, 1.0)], {}),
    ("mse_loss", grid(3, 2), [grid(3, 2, 1.0)], {}),
    ("nll_loss", grid(3, 4), [("int", [3, 0, 2])], {}),
    ("gaussian_nll_loss", grid(2, 3), [grid(2, 3, 1.0), grid(2, 3, 2.0, 0.0, 1.0)], {}),
    ("gaussian_nll_loss", grid(2, 3), [grid(2, 3, 1.0), grid(2, 3, 2.0, 0.0, 1.0)],
     {"full": True, "eps": 0.3}),
    ("kl_div_loss", [[math.log(p) for p in row] for row in probabilities(2, 4)],
     [[[math.log(p) for p in row] for row in probabilities(2, 4, 2.0)]], {}),
    ("smooth_l1_loss", grid(3, 3), [grid(3, 3, 1.0)], {}),
    ("smooth_l1_loss", grid(3, 3), [grid(3, 3, 1.0)], {"beta": 0.5}),
    ("triplet_loss", grid(3, 4), [grid(3, 4, 1.0), grid(3, 4, 2.0)], {}),
    ("triplet_loss", grid(3, 4), [grid(3, 4, 1.0), grid(3, 4, 2.0)],
     {"p": 1, "margin": 2.0, "axis": 0}),
    ("hinge_loss", grid(2, 3), [signs(2, 3)], {}),
    ("huber_loss", grid(3, 3), [grid(3, 3, 1.0)], {}),
    ("huber_loss", grid(3, 3), [grid(3, 3, 1.0)], {"delta": 0.4}),
    ("log_cosh_loss", grid(2, 3), [grid(2, 3, 1.0)], {}),
    ("cosine_similarity_loss", grid(3, 4), [grid(3, 4, 1.0)], {}),
    ("cosine_similarity_loss", grid(3, 4), [grid(3, 4, 1.0)], {"axis": 0, "eps": 0.5}),
    ("margin_ranking_loss", grid(2, 3), [grid(2, 3, 1.0), signs(2, 3)], {"margin": 0.2}),
]


def to_lib(lib, data):
    if isinstance(data, tuple) and data[0] == "int":
        return lib.array(data[1])
    return lib.array(data)


def call(lib, losses, name, x, others, kwargs, reduction):
    kwargs = {k: lib.array(v) if isinstance(v, list) else v for k, v in kwargs.items()}
    if reduction is not None:
        kwargs["reduction"] = reduction
    return getattr(losses, name)(x, *[to_lib(lib, o) for o in others], **kwargs)


@needs_mlx
@pytest.mark.parametrize("reduction", [None, "none", "mean", "sum"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_loss_matches_mlx(case, reduction):
    name, x, others, kwargs = case
    ours = call(mx, nn.losses, name, mx.array(x), others, kwargs, reduction)
    theirs = call(real_mx, real_nn.losses, name, real_mx.array(x), others, kwargs, reduction)
    assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-6)
    if reduction == "sum":
        g = mx.grad(lambda a: call(mx, nn.losses, name, a, others, kwargs, "sum"))(mx.array(x))
        real_g = real_mx.grad(
            lambda a: call(real_mx, real_nn.losses, name, a, others, kwargs, "sum"))(
            real_mx.array(x))
        assert_same_as_mlx(g, real_g, rtol=1e-4, atol=1e-6)


def test_losses_are_mlxs():
    names = {c[0] for c in CASES}
    assert names == set(nn.losses.__all__)
    if real_nn is not None:
        theirs = {n for n in dir(real_nn.losses) if not n.startswith("_")
                  and callable(getattr(real_nn.losses, n))}
        assert names == theirs - {"Literal", "Optional", "Reduction", "get_args"}


ERRORS = [
    lambda mx, L: L.mse_loss(mx.zeros((2,)), mx.zeros((3,))),
    lambda mx, L: L.l1_loss(mx.zeros((2,)), mx.zeros((2, 1))),
    lambda mx, L: L.smooth_l1_loss(mx.zeros((2,)), mx.zeros((3,))),
    lambda mx, L: L.binary_cross_entropy(mx.zeros((2,)), mx.zeros((3,))),
    lambda mx, L: L.binary_cross_entropy(mx.zeros((2,)), mx.zeros((2,)), mx.ones((3,))),
    lambda mx, L: L.cross_entropy(mx.zeros((2, 3)), mx.array([0, 1, 2])),
    lambda mx, L: L.cross_entropy(mx.zeros((2, 3)), mx.zeros((2, 2))),
    lambda mx, L: L.cross_entropy(mx.zeros((2, 3)), mx.array([0, 1]), label_smoothing=1.0),
    lambda mx, L: L.cross_entropy(mx.zeros((2, 3)), mx.array([0, 1]), weights=mx.ones((3,))),
    lambda mx, L: L.gaussian_nll_loss(mx.zeros((2,)), mx.zeros((3,)), mx.ones((2,))),
    lambda mx, L: L.gaussian_nll_loss(mx.zeros((2,)), mx.zeros((2,)), mx.ones((3,))),
    lambda mx, L: L.margin_ranking_loss(mx.zeros((2,)), mx.zeros((2,)), mx.ones((3,))),
    lambda mx, L: L.mse_loss(mx.zeros((2,)), mx.zeros((2,)), reduction="max"),
    lambda mx, L: L.hinge_loss(mx.zeros((2,)), mx.zeros((2,)), reduction="avg"),
]


@needs_mlx
@pytest.mark.parametrize("program", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_loss_errors_match_mlx(program):
    with pytest.raises(Exception) as theirs:
        program(real_mx, real_nn.losses)
    with pytest.raises(type(theirs.value)) as ours:
        program(mx, nn.losses)
    assert str(ours.value) == str(theirs.value)


def test_losses_by_hand():
    L = nn.losses
    # log(e^0 + e^ln3) - ln3 = ln(4/3)
    assert close(L.cross_entropy(mx.array([[0.0, math.log(3)]]), mx.array([1])).tolist(),
                 [math.log(4 / 3)])
    # |d| = 2 > beta = 1: 2 - 0.5; |d| = 0.5: 0.125 / 1.
    assert close(L.smooth_l1_loss(mx.array([2.0, 0.5]), mx.array([0.0, 0.0]),
                                  reduction="none").tolist(), [1.5, 0.125])
    assert close(L.huber_loss(mx.array([3.0]), mx.array([0.0]), delta=2.0).tolist(), [4.0])
    assert close(L.hinge_loss(mx.array([0.25, 2.0]), mx.array([1.0, -1.0])).tolist(),
                 [0.75, 3.0])
    assert close(L.log_cosh_loss(mx.array([1.0]), mx.array([0.0])).tolist(),
                 [math.log(math.cosh(1.0))])
    assert close(L.binary_cross_entropy(mx.array([0.0]), mx.array([1.0])).item(), math.log(2))
    assert L.mse_loss(mx.ones((2,)), mx.zeros((2,)), reduction="sum").item() == 2.0


def test_docstring_examples():
    result = doctest.testmod(nn.losses, verbose=False)
    assert result.attempted > 0 and result.failed == 0
