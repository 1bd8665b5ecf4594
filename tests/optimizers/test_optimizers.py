"""mlxref.optimizers against mlx.optimizers: every optimizer, schedule, clip_grad_norm, training.

Each optimizer is run for several steps on the same parameters and the same
gradients (deterministic numbers built once as Python lists and given to both
libraries); after every step the updated parameters must agree with MLX's to
float32 tolerance, and at the end the whole state must have MLX's layout (the
same tree, keys, shapes and dtypes, ``"step"`` included) and values. The
schedules are compared step by step, alone and driving an optimizer; the
errors are compared message for message. The doctests of the package run
everywhere; everything else needs MLX.

The optimizers also train a small model (the MLP of tests/nn/test_layers.py,
built in both libraries with mlxref's initial weights): ``update`` steps on
it, ``apply_gradients`` with gradients for part of it and a 50-step training
run match MLX's; without MLX, the state's keys and the constructors' errors
are checked, and a training run must lower the loss.
"""

import doctest
import importlib
import math

import pytest
from nn.test_layers import assert_same_shapes_and_values, data, mlp, shapes, twin
from support import assert_same_as_mlx, close, error_of, needs_mlx, real_mx

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


def numbers(shape, phase):
    """Deterministic values in [-1, 1] with ``shape``, as a nested list (a float for ``()``)."""
    size = math.prod(shape)
    flat = [math.sin(0.7 * i + phase) + 0.1 * math.cos(2.3 * i * phase) for i in range(size)]
    flat = [max(-1.0, min(1.0, x)) for x in flat]
    for n in reversed(shape[1:]):
        flat = [flat[i : i + n] for i in range(0, len(flat), n)]
    return flat[0] if shape == () else flat


SHAPES = {
    "w": (3, 4),  # a wide matrix
    "tall": (5, 2),
    "b": (4,),
    "layers": [{"k": (2, 3, 4)}, {"conv": (2, 3, 2, 2)}, {"s": ()}],
}


def lists(phase, shapes=SHAPES):
    """A tree of nested lists with the structure of ``shapes``; ``phase`` varies the values."""
    leaves = iter(range(100))
    return tree_map(lambda s: numbers(s, phase + 0.37 * next(leaves)), shapes,
                    is_leaf=lambda s: isinstance(s, tuple))


def is_data(x):
    """A number or a non-empty nested list of numbers: one array (``[]`` and ``{}`` are trees)."""
    return isinstance(x, (int, float)) or (
        isinstance(x, list) and len(x) > 0 and all(is_data(v) for v in x))


def as_arrays(tree, dtype="float32"):
    """The same tree of lists as mlxref arrays and as MLX arrays."""
    ours = tree_map(lambda x: mx.array(x, getattr(mx, dtype)), tree, is_leaf=is_data)
    theirs = tree_map(lambda x: real_mx.array(x, getattr(real_mx, dtype)), tree, is_leaf=is_data)
    return ours, theirs


def layout(tree):
    """The tree with each array replaced by (shape, dtype name): its layout, containers kept."""
    return tree_map(lambda a: (tuple(a.shape), str(a.dtype).split(".")[-1]), tree)


def assert_trees_same(ours, theirs, rtol=1e-5, atol=1e-6):
    """Same layout (containers, keys, shapes, dtypes) and the same values."""
    assert layout(ours) == layout(theirs)
    flat_theirs = dict(tree_flatten(theirs))
    for path, a in tree_flatten(ours):
        assert_same_as_mlx(a, flat_theirs[path], rtol=rtol, atol=atol)


def same_error_as_mlx(call):
    """``call(mlxref.optimizers)`` raises what ``call(mlx.optimizers)`` raises, message and all."""
    assert error_of(lambda: call(optim)) == error_of(lambda: call(real_optim))


def run_both(make, steps=4, shapes=SHAPES, dtype="float32", rtol=1e-5, atol=1e-6):
    """Run ``make(lib)``'s optimizer in both libraries; compare every step and the final state."""
    opt_ours, opt_theirs = make(optim), make(real_optim)
    params_ours, params_theirs = as_arrays(lists(0.0, shapes), dtype)
    for step in range(1, steps + 1):
        grads_ours, grads_theirs = as_arrays(lists(1.1 * step, shapes), dtype)
        params_ours = opt_ours.apply_gradients(grads_ours, params_ours)
        params_theirs = opt_theirs.apply_gradients(grads_theirs, params_theirs)
        assert_trees_same(params_ours, params_theirs, rtol, atol)
    assert list(opt_ours.state) == list(opt_theirs.state)
    assert_trees_same(opt_ours.state, opt_theirs.state, rtol, atol)
    return opt_ours, opt_theirs


# ----------------------------------------------------------------------
# Every optimizer, step by step

OPTIMIZERS = {
    "sgd": lambda o: o.SGD(0.1),
    "sgd-momentum-wd": lambda o: o.SGD(0.05, momentum=0.8, weight_decay=0.01),
    "sgd-dampening": lambda o: o.SGD(0.1, momentum=0.5, dampening=0.3),
    "sgd-nesterov": lambda o: o.SGD(0.1, momentum=0.9, weight_decay=0.1, nesterov=True),
    "rmsprop": lambda o: o.RMSprop(0.01),
    "rmsprop-alpha-eps": lambda o: o.RMSprop(0.05, alpha=0.9, eps=1e-3),
    "adagrad": lambda o: o.Adagrad(0.1),
    "adagrad-eps": lambda o: o.Adagrad(0.1, eps=0.5),
    "adadelta": lambda o: o.AdaDelta(1.0),
    "adadelta-rho-eps": lambda o: o.AdaDelta(0.5, rho=0.5, eps=1e-3),
    "adam": lambda o: o.Adam(0.01),
    "adam-bias-correction": lambda o: o.Adam(0.02, betas=[0.8, 0.99], eps=1e-3,
                                             bias_correction=True),
    "adamw": lambda o: o.AdamW(0.01),
    "adamw-bias-correction": lambda o: o.AdamW(0.01, weight_decay=0.1, bias_correction=True),
    "adamax": lambda o: o.Adamax(0.01),
    "adamax-betas": lambda o: o.Adamax(0.05, betas=[0.5, 0.9], eps=1e-4),
    "lion": lambda o: o.Lion(0.01),
    "lion-wd": lambda o: o.Lion(0.01, betas=[0.8, 0.9], weight_decay=0.5),
    "adafactor": lambda o: o.Adafactor(),
    "adafactor-beta1-wd": lambda o: o.Adafactor(beta_1=0.9, weight_decay=0.1),
    "adafactor-warmup": lambda o: o.Adafactor(warmup_init=True, clip_threshold=0.5),
    "adafactor-absolute": lambda o: o.Adafactor(0.05, relative_step=False,
                                                scale_parameter=False, decay_rate=-0.5),
    "muon": lambda o: o.Muon(0.02),
    "muon-plain": lambda o: o.Muon(0.02, momentum=0.9, weight_decay=0.0, nesterov=False,
                                   ns_steps=3),
}


@needs_mlx
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_and_state_match_mlx(name):
    opt, _ = run_both(OPTIMIZERS[name])
    assert opt.step.dtype is mx.uint64 and opt.step.item() == 4


@needs_mlx
def test_every_mlx_optimizer_is_tested_here():
    def classes(module):
        return {n for n in dir(module) if isinstance(getattr(module, n), type)
                and issubclass(getattr(module, n), module.Optimizer)}

    assert classes(optim) == classes(real_optim)
    tested = {type(make(optim)).__name__ for make in OPTIMIZERS.values()}
    assert tested == classes(optim) - {"Optimizer", "MultiOptimizer"}


@needs_mlx
@pytest.mark.parametrize("name", ["sgd-nesterov", "adam-bias-correction", "adamw", "adamax",
                                  "lion-wd", "adafactor-beta1-wd", "muon", "adadelta"])
def test_float16_parameters_match_mlx(name):
    # Same dtypes all the way (the learning rate is cast to the gradient's).
    # A float16 ulp is ~1e-3 relative; the state stays float16 too.
    shapes = {"w": (3, 4), "b": (4,)}
    run_both(OPTIMIZERS[name], steps=3, shapes=shapes, dtype="float16", rtol=2e-3, atol=2e-3)


SCHEDULED = {
    "sgd": lambda o, lr: o.SGD(lr, momentum=0.8, weight_decay=0.01),
    "adam": lambda o, lr: o.Adam(lr, bias_correction=True),
    "adafactor": lambda o, lr: o.Adafactor(lr, relative_step=False, scale_parameter=False),
    "lion": lambda o, lr: o.Lion(lr),
}


@needs_mlx
@pytest.mark.parametrize("name", list(SCHEDULED))
def test_scheduled_learning_rate_matches_mlx(name):
    # The optimizer calls the schedule with the step before incrementing it, as MLX does.
    ours, theirs = run_both(lambda o: SCHEDULED[name](o, o.cosine_decay(0.1, 3, end=0.01)),
                            steps=5)
    assert_same_as_mlx(ours.learning_rate, theirs.learning_rate)


@needs_mlx
def test_init_gives_mlx_state_layout_with_empty_containers():
    # A model's parameters have empty dicts and lists for parameterless layers.
    tree = {"a": {}, "l": [{}, {"w": [[1.0, 2.0]]}, []], "b": [0.5]}
    for make in OPTIMIZERS.values():
        opt_ours, opt_theirs = make(optim), make(real_optim)
        p_ours, p_theirs = as_arrays(tree)
        opt_ours.init(p_ours)
        opt_theirs.init(p_theirs)
        assert list(opt_ours.state) == list(opt_theirs.state)
        assert_trees_same(opt_ours.state, opt_theirs.state)


@needs_mlx
def test_init_keeps_existing_state_and_adds_new_parameters():
    p_ours, p_theirs = as_arrays({"w": [1.0, 2.0]})
    opt_ours, opt_theirs = optim.Adam(0.1), real_optim.Adam(0.1)
    opt_ours.apply_gradients(p_ours, p_ours)
    opt_theirs.apply_gradients(p_theirs, p_theirs)
    more_ours, more_theirs = as_arrays({"w": [1.0, 2.0], "x": [[3.0]]})
    opt_ours.init(more_ours)
    opt_theirs.init(more_theirs)
    assert_trees_same(opt_ours.state, opt_theirs.state)
    assert opt_ours.state["w"]["m"].tolist() != [0.0, 0.0]


# ----------------------------------------------------------------------
# MultiOptimizer


def _multi(o):
    return o.MultiOptimizer(
        [o.Muon(0.02), o.Adam(0.01), o.SGD(0.1, momentum=0.9)],
        [lambda path, w: w.ndim >= 2, lambda path, w: path.startswith("layers")],
    )


@needs_mlx
def test_multi_optimizer_matches_mlx():
    opt_ours, _ = run_both(_multi)
    assert list(opt_ours.state) == ["states"] and len(opt_ours.state["states"]) == 3
    # Each parameter went to the first optimizer whose filter took it.
    muon, adam, sgd = (dict(tree_flatten(s)) for s in opt_ours.state["states"])
    assert "w.v" in muon and "layers.2.s.m" in adam and "b.v" in sgd
    assert "b.v" not in muon and "w.m" not in adam


@needs_mlx
def test_multi_optimizer_with_an_optimizer_that_gets_nothing():
    def make(o):
        return o.MultiOptimizer([o.Adam(0.01), o.SGD(0.1)], [lambda path, w: w.ndim > 9])

    opt_ours, _ = run_both(make, steps=2)
    assert opt_ours.state["states"][0]["step"].item() == 2


@needs_mlx
def test_multi_optimizer_state_and_learning_rate():
    ours, theirs = _multi(optim), _multi(real_optim)
    ours.learning_rate = 0.5
    theirs.learning_rate = 0.5
    assert_same_as_mlx(ours.learning_rate, theirs.learning_rate)
    assert [s["learning_rate"].item() for s in ours.state["states"]] == [0.5] * 3
    # Assigning a state gives each optimizer its part.
    states = [{"step": mx.array(7, mx.uint64), "learning_rate": mx.array(0.25)}] * 3
    ours.state = {"states": states}
    assert [o.step.item() for o in ours.optimizers] == [7, 7, 7]
    assert error_of(lambda: setattr(ours, "state", {"states": [{}]})) == error_of(
        lambda: setattr(theirs, "state", {"states": [{}]}))
    same_error_as_mlx(lambda o: o.MultiOptimizer([o.SGD(0.1)], [lambda p, w: True]))


# ----------------------------------------------------------------------
# Schedules


SCHEDULES = {
    "exponential_decay": lambda o: o.exponential_decay(0.1, 0.9),
    "step_decay": lambda o: o.step_decay(0.1, 0.5, 3),
    "cosine_decay": lambda o: o.cosine_decay(0.1, 7),
    "cosine_decay-end": lambda o: o.cosine_decay(0.2, 5, end=0.05),
    "linear_schedule": lambda o: o.linear_schedule(0.0, 0.1, 6),
    "linear_schedule-down": lambda o: o.linear_schedule(1.0, 0.25, 4),
    "join_schedules": lambda o: o.join_schedules(
        [o.linear_schedule(0.0, 0.1, 3), o.cosine_decay(0.1, 5), o.exponential_decay(0.01, 0.5)],
        [3, 7]),
}


@needs_mlx
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_matches_mlx(name):
    ours, theirs = SCHEDULES[name](optim), SCHEDULES[name](real_optim)
    for step in range(12):
        # What an optimizer passes (a uint64 array), and a plain int.
        got = ours(mx.array(step, mx.uint64))
        want = theirs(real_mx.array(step, real_mx.uint64))
        assert_same_as_mlx(got, want)
        got, want = ours(step), theirs(step)
        if isinstance(want, real_mx.array):
            assert_same_as_mlx(got, want)
        else:
            assert type(got) is type(want) and got == want


@needs_mlx
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_drives_an_optimizer_like_mlx(name):
    ours = optim.Adam(learning_rate=SCHEDULES[name](optim))
    theirs = real_optim.Adam(learning_rate=SCHEDULES[name](real_optim))
    for _ in range(9):
        assert_same_as_mlx(ours.learning_rate, theirs.learning_rate)
        ours.update({}, {})
        theirs.update({}, {})
    assert_trees_same(ours.state, theirs.state)


@needs_mlx
def test_schedule_errors_match_mlx():
    for call in [lambda o: o.step_decay(0.1, 0.9, 0), lambda o: o.cosine_decay(0.1, 0),
                 lambda o: o.linear_schedule(0.0, 1.0, 0), lambda o: o.join_schedules([], []),
                 lambda o: o.join_schedules([lambda s: 1], [2])]:
        same_error_as_mlx(call)


# ----------------------------------------------------------------------
# clip_grad_norm


CLIP_CASES = {
    "clipped": ({"a": [[3.0, -4.0]], "b": [[[12.0]]]}, "float32", 1.0),
    "not-clipped": ({"a": [0.1, 0.2], "b": [[0.3]]}, "float32", 10.0),
    "zero-max": ({"a": [0.1, -0.2]}, "float32", 0.0),
    "nested": (lists(0.5), "float32", 0.7),
    "float16-large": ({"a": [300.0, -400.0], "b": [[250.0, 100.0]]}, "float16", 1.0),
    "int32": ({"a": [3, 4]}, "int32", 1.0),
}


@needs_mlx
@pytest.mark.parametrize("case", list(CLIP_CASES))
def test_clip_grad_norm_matches_mlx(case):
    tree, dtype, max_norm = CLIP_CASES[case]
    ours, theirs = as_arrays(tree, dtype)
    clipped_ours, norm_ours = optim.clip_grad_norm(ours, max_norm)
    clipped_theirs, norm_theirs = real_optim.clip_grad_norm(theirs, max_norm)
    # float16 squares sum in float32: 500 squared would overflow float16.
    assert_same_as_mlx(norm_ours, norm_theirs)
    assert_trees_same(clipped_ours, clipped_theirs, rtol=1e-3 if dtype == "float16" else 1e-5)


@needs_mlx
def test_clip_grad_norm_error_matches_mlx():
    same_error_as_mlx(lambda o: o.clip_grad_norm({"a": [1.0]}, -1.0))


# ----------------------------------------------------------------------
# Constructor checks, message for message


@needs_mlx
def test_constructor_errors_match_mlx():
    for call in [
        lambda o: o.SGD(0.1, nesterov=True),
        lambda o: o.RMSprop(0.1, alpha=-0.1),
        lambda o: o.RMSprop(0.1, eps=0.0),
        lambda o: o.Adagrad(0.1, eps=-1.0),
        lambda o: o.AdaDelta(0.1, rho=-1.0),
        lambda o: o.AdaDelta(0.1, eps=0.0),
        lambda o: o.Adam(0.1, betas=[1.0, 0.9]),
        lambda o: o.Adam(0.1, eps=-1e-8),
        lambda o: o.AdamW(0.1, betas=[0.9, -0.1]),
        lambda o: o.Adamax(0.1, betas=[0.9, 1.5]),
        lambda o: o.Lion(0.1, betas=[0.9, 1.0]),
    ]:
        same_error_as_mlx(call)


# ----------------------------------------------------------------------
# Training a model (tests/nn/test_layers.py's MLP) as MLX does


MLP_OPTIMIZERS = {
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
@pytest.mark.parametrize("name", list(MLP_OPTIMIZERS))
def test_optimizer_steps_match_mlx(name):
    ours, theirs = twin(mlp)
    opt_ours, opt_theirs = MLP_OPTIMIZERS[name](optim), MLP_OPTIMIZERS[name](real_optim)
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
        assert_same_shapes_and_values(ours.parameters(), theirs.parameters())
        assert opt_ours.step.item() == opt_theirs.step.item() == step
    # The state has MLX's layout and values (but "step" is int64, not uint64).
    state_ours = {k: v for k, v in opt_ours.state.items() if k != "step"}
    state_theirs = {k: v for k, v in opt_theirs.state.items() if k != "step"}
    assert list(opt_ours.state) == list(opt_theirs.state)
    assert_same_shapes_and_values(state_ours, state_theirs)


@needs_mlx
def test_apply_gradients_and_partial_gradients_match_mlx():
    # Gradients for a subset of a model's parameters update only that subset.
    ours, theirs = twin(mlp)
    grads = {"layers": [{"bias": data(1, 5)[0]}, {}, {}]}
    opt_ours, opt_theirs = optim.Adam(0.1), real_optim.Adam(0.1)
    new_ours = opt_ours.apply_gradients(tree_map(mx.array, grads), ours)
    new_theirs = opt_theirs.apply_gradients(tree_map(real_mx.array, grads), theirs)
    assert_same_shapes_and_values(new_ours, new_theirs)
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
    assert_same_shapes_and_values(ours.parameters(), theirs.parameters(), rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------
# Without MLX


@pytest.mark.parametrize("name", ["mlxref.optimizers.optimizers",
                                  "mlxref.optimizers.schedulers"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0


def test_adafactor_factored_estimate_is_the_separable_outer_product():
    # Independent of MLX: v[i, j] ~ row[i] * col[j] / mean(row), inverted and rooted.
    row, col = [[1.0, 4.0, 9.0], [16.0, 25.0, 36.0]], [[1.0, 4.0], [9.0, 16.0]]
    got = optim.Adafactor()._approximate_exp_moving_avg(mx.array(row), mx.array(col)).tolist()
    for b in range(2):
        mean = sum(row[b]) / 3
        want = [[1 / math.sqrt(r / mean) / math.sqrt(c) for c in col[b]] for r in row[b]]
        assert all(math.isclose(x, y, rel_tol=1e-6) for gx, wy in zip(got[b], want)
                   for x, y in zip(gx, wy))


def test_muon_orthogonalizes_a_matrix_update():
    # Newton-Schulz pushes singular values towards 1: rows of a wide update
    # become nearly orthonormal (Muon's coefficients stop near, not at, 1).
    from mlxref.optimizers.momentum import _newton_schulz

    x = _newton_schulz(mx.array(numbers((3, 5), 0.3)), steps=5)
    gram = (x @ x.T).tolist()
    for i in range(3):
        assert 0.6 < gram[i][i] < 1.3
        assert all(abs(gram[i][j]) < 0.3 for j in range(3) if j != i)


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
