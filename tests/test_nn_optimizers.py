"""mlxref.nn and mlxref.optimizers against mlx.nn and mlx.optimizers.

The same model is built in both libraries and mlxref's initial weights are
copied into MLX, so forward passes, losses, gradients from
``nn.value_and_grad`` and several optimizer steps can be compared value for
value. The MLX-free tests (structure, freezing, a small training run, the
docstrings) run everywhere.
"""

import math

import pytest
from support import assert_same_as_mlx, close, needs_mlx, real_mx

import mlxref.core as mx
import mlxref.nn as nn
import mlxref.optimizers as optim
from mlxref.utils import tree_flatten, tree_map

if real_mx is not None:
    import mlx.nn as real_nn
    import mlx.optimizers as real_optim
else:  # pragma: no cover
    real_nn = real_optim = None


# ----------------------------------------------------------------------
# Helpers


def data(rows, cols, phase=0.0):
    """Deterministic inputs in [-1, 1], the same list for both libraries."""
    return [[math.sin(1.3 * i + 0.7 * j + phase) for j in range(cols)] for i in range(rows)]


def mlp(lib, act="tanh"):
    """A 3-5-4 MLP with one activation, built with ``lib`` (mlxref.nn or mlx.nn)."""
    layer = {"tanh": lib.Tanh, "relu": lib.ReLU, "sigmoid": lib.Sigmoid}[act]
    return lib.Sequential(lib.Linear(3, 5), layer(), lib.Linear(5, 4))


def twin(build):
    """``build(mlxref.nn)`` and ``build(mlx.nn)`` holding mlxref's initial weights."""
    ours = build(nn)
    theirs = build(real_nn)
    theirs.update(tree_map(lambda a: real_mx.array(a.tolist()), ours.parameters()))
    real_mx.eval(theirs.parameters())
    return ours, theirs


def shapes(tree):
    return tree_map(lambda a: tuple(a.shape), tree)


def assert_trees_same(ours, theirs, rtol=1e-5, atol=1e-5):
    """Same structure (paths, empty containers included) and the same arrays."""
    assert shapes(ours) == shapes(theirs)
    flat_theirs = dict(tree_flatten(theirs))
    for path, a in tree_flatten(ours):
        assert_same_as_mlx(a, flat_theirs[path], rtol=rtol, atol=atol)


# ----------------------------------------------------------------------
# Optimizers (no MLX needed)


def test_optimizer_state_and_errors():
    model = nn.Linear(2, 2)
    opt = optim.Adam(learning_rate=0.01)
    opt.init(model.trainable_parameters())
    assert list(opt.state) == ["step", "learning_rate", "weight", "bias"]
    assert sorted(opt.state["weight"]) == ["m", "v"]
    assert opt.step.item() == 0 and close(opt.learning_rate.item(), 0.01)
    opt.learning_rate = 0.5
    assert opt.learning_rate.dtype is mx.float32 and opt.learning_rate.item() == 0.5
    # init keeps existing state and adds what is new.
    m = opt.state["weight"]["m"]
    opt.init({"weight": model.weight, "extra": [mx.zeros((1,))]})
    assert opt.state["weight"]["m"] is m and sorted(opt.state["extra"][0]) == ["m", "v"]
    # A schedule: any callable of the step.
    sched = optim.SGD(learning_rate=lambda step: 0.1 * (step + 1))
    grads = {"weight": mx.ones((2, 2)), "bias": mx.ones((2,))}
    sched.update(model, grads)
    assert close(sched.learning_rate.item(), 0.1)
    sched.update(model, grads)
    assert close(sched.learning_rate.item(), 0.2) and sched.step.item() == 2

    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD(0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD(0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Adam beta2 should be in"):
        optim.Adam(0.1, betas=[0.9, 1.0])
    with pytest.raises(ValueError, match="Adam epsilon should be >=0"):
        optim.Adam(0.1, eps=-1.0)
    with pytest.raises(NotImplementedError):
        optim.Optimizer().update(model, grads)


def test_training_an_mlp_lowers_the_loss():
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    pts = [(math.cos(0.4 * i), math.sin(0.9 * i)) for i in range(16)]
    x = mx.array([list(p) for p in pts])
    y = mx.array([[a * b + 0.5 * a] for a, b in pts])
    loss_and_grad = nn.value_and_grad(model, lambda: nn.losses.mse_loss(model(x), y))
    opt = optim.SGD(learning_rate=0.2, momentum=0.9)
    losses = []
    for _ in range(50):
        loss, grads = loss_and_grad()
        opt.update(model, grads)
        mx.eval(model.parameters(), opt.state)
        losses.append(loss.item())
    assert losses[-1] < 0.25 * losses[0]
    assert min(losses[-10:]) < min(losses[:10])


# ----------------------------------------------------------------------
# Against real MLX


OPTIMIZERS = {
    "sgd": lambda o: o.SGD(learning_rate=0.1),
    "sgd-wd": lambda o: o.SGD(learning_rate=0.1, weight_decay=0.05),
    "sgd-momentum": lambda o: o.SGD(learning_rate=0.1, momentum=0.9),
    "sgd-nesterov": lambda o: o.SGD(learning_rate=0.1, momentum=0.9, nesterov=True),
    "sgd-momentum-wd": lambda o: o.SGD(learning_rate=0.05, momentum=0.8, weight_decay=0.01),
    "sgd-dampening": lambda o: o.SGD(learning_rate=0.1, momentum=0.5, dampening=0.3),
    "sgd-nesterov-wd": lambda o: o.SGD(learning_rate=0.1, momentum=0.9, weight_decay=0.1,
                                       nesterov=True),
    "adam": lambda o: o.Adam(learning_rate=0.01),
    "adam-bias-correction": lambda o: o.Adam(learning_rate=0.01, bias_correction=True),
    "adam-betas-eps": lambda o: o.Adam(learning_rate=0.02, betas=[0.8, 0.99], eps=1e-3,
                                       bias_correction=True),
}


@needs_mlx
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_match_mlx(name):
    ours, theirs = twin(mlp)
    opt_ours, opt_theirs = OPTIMIZERS[name](optim), OPTIMIZERS[name](real_optim)
    x, y = data(6, 3), data(6, 4, 0.5)
    lg_ours = nn.value_and_grad(ours, lambda: nn.losses.mse_loss(ours(mx.array(x)), mx.array(y)))
    lg_theirs = real_nn.value_and_grad(
        theirs, lambda: real_nn.losses.mse_loss(theirs(real_mx.array(x)), real_mx.array(y)))
    for step in range(1, 6):
        l_ours, g_ours = lg_ours()
        l_theirs, g_theirs = lg_theirs()
        assert_same_as_mlx(l_ours, l_theirs)
        opt_ours.update(ours, g_ours)
        opt_theirs.update(theirs, g_theirs)
        mx.eval(ours.parameters(), opt_ours.state)
        real_mx.eval(theirs.parameters(), opt_theirs.state)
        assert_trees_same(ours.parameters(), theirs.parameters())
        assert opt_ours.step.item() == opt_theirs.step.item() == step
    # The state has MLX's layout and values (but "step" is int64, not uint64).
    state_ours = {k: v for k, v in opt_ours.state.items() if k != "step"}
    state_theirs = {k: v for k, v in opt_theirs.state.items() if k != "step"}
    assert list(opt_ours.state) == list(opt_theirs.state)
    assert_trees_same(state_ours, state_theirs)


@needs_mlx
def test_apply_gradients_and_partial_gradients_match_mlx():
    # Gradients for a subset of a model's parameters update only that subset.
    ours, theirs = twin(mlp)
    grads = {"layers": [{"bias": data(1, 5)[0]}, {}, {}]}
    opt_ours, opt_theirs = optim.Adam(0.1), real_optim.Adam(0.1)
    new_ours = opt_ours.apply_gradients(tree_map(mx.array, grads), ours)
    new_theirs = opt_theirs.apply_gradients(tree_map(real_mx.array, grads), theirs)
    assert_trees_same(new_ours, new_theirs)
    assert list(opt_ours.state) == list(opt_theirs.state)
    assert shapes(opt_ours.state["layers"]) == shapes(opt_theirs.state["layers"])


@needs_mlx
def test_training_run_matches_mlx():
    # The 2-8-1 MLP of test_training_an_mlp_lowers_the_loss, run in both libraries.
    ours, theirs = twin(lambda lib: lib.Sequential(lib.Linear(2, 8), lib.Tanh(), lib.Linear(8, 1)))
    pts = [(math.cos(0.4 * i), math.sin(0.9 * i)) for i in range(16)]
    x, y = [list(p) for p in pts], [[a * b + 0.5 * a] for a, b in pts]
    lg_ours = nn.value_and_grad(ours, lambda: nn.losses.mse_loss(ours(mx.array(x)), mx.array(y)))
    lg_theirs = real_nn.value_and_grad(
        theirs, lambda: real_nn.losses.mse_loss(theirs(real_mx.array(x)), real_mx.array(y)))
    opt_ours, opt_theirs = optim.SGD(0.2, momentum=0.9), real_optim.SGD(0.2, momentum=0.9)
    curve_ours, curve_theirs = [], []
    for _ in range(50):
        l_ours, g_ours = lg_ours()
        l_theirs, g_theirs = lg_theirs()
        opt_ours.update(ours, g_ours)
        opt_theirs.update(theirs, g_theirs)
        mx.eval(ours.parameters(), opt_ours.state)
        real_mx.eval(theirs.parameters(), opt_theirs.state)
        curve_ours.append(l_ours.item())
        curve_theirs.append(l_theirs.item())
    assert close(curve_ours, curve_theirs, rtol=1e-4, atol=1e-6)
    assert curve_ours[-1] < 0.25 * curve_ours[0]
    assert_trees_same(ours.parameters(), theirs.parameters(), rtol=1e-4, atol=1e-5)
