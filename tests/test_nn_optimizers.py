"""mlxref.nn and mlxref.optimizers against mlx.nn and mlx.optimizers.

The same model is built in both libraries and mlxref's initial weights are
copied into MLX, so forward passes, losses, gradients from
``nn.value_and_grad`` and several optimizer steps can be compared value for
value. The MLX-free tests (structure, freezing, a small training run, the
docstrings) run everywhere.
"""

import doctest
import importlib
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


def raises_like_mlx(ours_call, theirs_call):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as theirs:
        theirs_call()
    with pytest.raises(type(theirs.value)) as ours:
        ours_call()
    assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------------
# Module structure (no MLX needed)


def test_module_is_a_dict_of_parameters():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.relu)
    assert isinstance(model, dict) and model.state is model
    assert shapes(model.parameters()) == {
        "layers": [{"weight": (3, 2), "bias": (3,)}, {}, {"weight": (1, 3), "bias": (1,)}, {}]
    }
    # Plain attributes are not items; private keys are never parameters.
    lin = nn.Linear(2, 2, bias=False)
    lin.scale = 3
    lin._hidden = mx.zeros((2,))
    assert lin.scale == 3 and "scale" not in lin
    assert sorted(lin) == ["_hidden", "weight"]
    assert list(lin.parameters()) == ["weight"]
    del lin.weight
    assert "weight" not in lin
    with pytest.raises(AttributeError):
        lin.weight
    # An attribute that becomes an array moves into the dict.
    lin.scale = mx.array(2.0)
    assert "scale" in lin and "scale" not in lin.__dict__ and lin.scale.item() == 2.0


def test_children_leaf_modules_and_named_modules():
    inner = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    model = nn.Sequential(inner, nn.Linear(2, 1))
    kids = model.children()
    assert kids == {"layers": [inner, model.layers[1]]}
    leaves = [path for path, _ in tree_flatten(model.leaf_modules(), is_leaf=nn.Module.is_module)]
    assert leaves == ["layers.0.layers.0", "layers.0.layers.1", "layers.1"]
    names = [path for path, _ in model.named_modules()]
    assert sorted(names) == sorted(
        ["", "layers.0", "layers.0.layers.0", "layers.0.layers.1", "layers.1"]
    )
    assert len(model.modules()) == 5
    assert model.train(False) is model and not inner.layers[1].training
    assert model.train().layers[1].training and not model.eval().training


def test_linear_init_and_forward():
    mx.random.seed(3)
    layer = nn.Linear(4, 3)
    k = 1 / math.sqrt(4)
    for a in (layer.weight, layer.bias):
        assert a.dtype is mx.float32
        assert all(-k <= v < k for v in a.flatten().tolist())
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,)
    mx.random.seed(3)
    again = nn.Linear(4, 3)
    assert again.weight.tolist() == layer.weight.tolist()
    assert again.bias.tolist() == layer.bias.tolist()
    x = mx.array(data(2, 4))
    want = [
        [sum(xi * wi for xi, wi in zip(row, w)) + b for w, b in
         zip(layer.weight.tolist(), layer.bias.tolist())]
        for row in x.tolist()
    ]
    assert close(layer(x).tolist(), want)
    assert repr(layer) == "Linear(input_dims=4, output_dims=3, bias=True)"
    assert repr(nn.Linear(2, 5, bias=False)) == "Linear(input_dims=2, output_dims=5, bias=False)"


def test_update_and_load_weights():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    new = mx.ones((1, 2))
    assert model.update({"layers": [{}, {}, {"weight": new}]}) is model
    assert model.layers[2].weight is new
    with pytest.raises(ValueError, match='does not have parameter named "nope"'):
        model.update({"nope": new})
    with pytest.raises(ValueError, match="List index 3 is out of bounds"):
        model.update({"layers": [{}, {}, {}, {}]})
    with pytest.raises(ValueError, match="Received invalid type: int"):
        model.update({"layers": [{"weight": 1}]})
    model.update({"nope": new, "layers": [{}, {}, {}, {}]}, strict=False)

    weights = [(k, v + 1) for k, v in tree_flatten(model.parameters())]
    model.load_weights(weights)
    assert model.layers[0].bias is weights[1][1]
    with pytest.raises(ValueError, match="Missing 1 parameters"):
        model.load_weights(weights[:-1])
    with pytest.raises(ValueError, match="Expected shape"):
        model.load_weights(weights[:-1] + [("layers.2.bias", mx.zeros((3,)))])
    model.load_weights([("layers.2.bias", mx.zeros((1,)))], strict=False)
    assert model.layers[2].bias.tolist() == [0.0]


def test_apply_maps_parameters():
    layer = nn.Linear(2, 2)
    before = layer.weight.tolist()
    layer.apply(lambda a: a * 2)
    assert close(layer.weight.tolist(), [[2 * v for v in row] for row in before])


def test_freeze_unfreeze_changes_trainable_parameters_and_grads():
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    x, y = mx.array(data(4, 2)), mx.array(data(4, 1, 1.0))
    loss_and_grad = nn.value_and_grad(model, lambda: nn.losses.mse_loss(model(x), y))

    def grad_keys():
        return [k for k, _ in tree_flatten(loss_and_grad()[1])]

    def trainable_keys():
        return [k for k, _ in tree_flatten(model.trainable_parameters())]

    everything = ["layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias"]
    assert trainable_keys() == grad_keys() == everything

    model.freeze(keys="bias")
    assert trainable_keys() == grad_keys() == ["layers.0.weight", "layers.2.weight"]
    assert [k for k, _ in tree_flatten(model.parameters())] == everything

    model.unfreeze(keys=["bias"])
    model.layers[0].freeze()
    assert trainable_keys() == grad_keys() == ["layers.2.weight", "layers.2.bias"]
    assert shapes(loss_and_grad()[1]) == {
        "layers": [{}, {}, {"weight": (1, 3), "bias": (1,)}]
    }

    model.unfreeze()
    model.freeze(recurse=False)  # the Sequential owns no arrays of its own
    assert trainable_keys() == everything
    model.freeze(recurse=False, keys="layers")
    assert trainable_keys() == grad_keys() == []
    model.unfreeze(recurse=False, keys="layers")
    assert trainable_keys() == everything

    model.freeze()
    assert model.trainable_parameters() == {"layers": [{}, {}, {}]}
    model.unfreeze()
    assert trainable_keys() == everything

    with pytest.raises(KeyError, match="Module doesn't contain member nope."):
        model.freeze(keys="nope", strict=True)
    with pytest.raises(KeyError, match="Module doesn't contain member bias."):
        model.freeze(keys="bias", strict=True, recurse=False)
    model.freeze(keys="bias", strict=True)  # "bias" exists somewhere: fine
    assert "bias" in model._no_grad  # as in MLX, every module records the key
    assert model.freeze() is model and model.unfreeze() is model


def test_value_and_grad_puts_tracers_in_the_model():
    layer = nn.Linear(2, 1)
    original = layer.weight
    seen = []

    def loss(x):
        seen.append((layer.weight, layer.weight.is_tracer()))
        return layer(x).sum(), "aux"

    (value, aux), grads = nn.value_and_grad(layer, loss)(mx.ones((3, 2)))
    assert aux == "aux"
    inside, was_tracer = seen[0]
    assert inside is not original and was_tracer
    assert layer.weight is inside and not layer.weight.is_tracer()  # kept after the call
    assert layer.weight.tolist() == original.tolist()
    assert grads["weight"].tolist() == [[3.0, 3.0]] and grads["bias"].tolist() == [3.0]


def test_checkpoint_gives_the_same_gradients():
    mx.random.seed(1)
    model = mlp(nn)
    x, y = mx.array(data(6, 3)), mx.array(data(6, 4, 0.5))
    plain = nn.value_and_grad(model, lambda: nn.losses.mse_loss(model(x), y))()
    ckpt = nn.checkpoint(model)
    checked = nn.value_and_grad(model, lambda: nn.losses.mse_loss(ckpt(x), y))()
    assert close(plain[0].item(), checked[0].item())
    for (k1, g1), (k2, g2) in zip(tree_flatten(plain[1]), tree_flatten(checked[1])):
        assert k1 == k2 and close(g1.tolist(), g2.tolist())


def test_loss_errors():
    a = mx.zeros((2, 3))
    with pytest.raises(ValueError, match="Invalid reduction"):
        nn.losses.mse_loss(a, a, reduction="max")
    with pytest.raises(ValueError, match="does not match"):
        nn.losses.mse_loss(a, mx.zeros((3, 2)))
    with pytest.raises(ValueError, match="Label smoothing must be in"):
        nn.losses.cross_entropy(a, mx.array([0, 1]), label_smoothing=1.0)
    with pytest.raises(ValueError, match="Targets shape"):
        nn.losses.cross_entropy(a, mx.array([0, 1, 2]))
    with pytest.raises(ValueError, match="Weights with shape"):
        nn.losses.cross_entropy(a, mx.array([0, 1]), weights=mx.ones((3,)))


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


@pytest.mark.parametrize(
    "name", ["mlxref.nn.layers.base", "mlxref.nn.losses", "mlxref.nn.utils",
             "mlxref.optimizers.optimizers"]
)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------
# Against real MLX


@needs_mlx
def test_structure_matches_mlx():
    def build(lib):
        return lib.Sequential(
            lib.Linear(2, 3),
            lib.ReLU(),
            lib.Sequential(lib.Linear(3, 3, bias=False), lib.Sigmoid()),
            lib.relu,
            lib.Linear(3, 1),
        )

    ours, theirs = twin(build)
    assert shapes(ours.parameters()) == shapes(theirs.parameters())
    assert repr(ours) == repr(theirs)

    def names(tree):
        return tree_map(lambda m: type(m).__name__, tree, is_leaf=nn.Module.is_module)

    def real_names(tree):
        return tree_map(lambda m: type(m).__name__, tree, is_leaf=real_nn.Module.is_module)

    assert names(ours.children()) == real_names(theirs.children())
    assert names(ours.leaf_modules()) == real_names(theirs.leaf_modules())
    assert [k for k, _ in ours.named_modules()] == [k for k, _ in theirs.named_modules()]

    for action in [
        lambda m: m.freeze(keys="bias"),
        lambda m: m.unfreeze(keys="bias"),
        lambda m: m.layers[2].freeze(),
        lambda m: m.freeze(recurse=False, keys=["layers"]),
        lambda m: m.unfreeze(recurse=False),
        lambda m: m.freeze(keys=["weight"], strict=True),
        lambda m: m.unfreeze(),
        lambda m: m.freeze(),
    ]:
        action(ours)
        action(theirs)
        assert shapes(ours.trainable_parameters()) == shapes(theirs.trainable_parameters())
        for (_, a), (_, b) in zip(ours.named_modules(), theirs.named_modules()):
            assert a._no_grad == b._no_grad

    raises_like_mlx(lambda: ours.freeze(keys="nope", strict=True),
                    lambda: theirs.freeze(keys="nope", strict=True))
    raises_like_mlx(lambda: ours.update({"nope": mx.zeros(())}),
                    lambda: theirs.update({"nope": real_mx.zeros(())}))


@needs_mlx
@pytest.mark.parametrize("act", ["tanh", "relu", "sigmoid"])
def test_forward_matches_mlx(act):
    ours, theirs = twin(lambda lib: mlp(lib, act))
    x = data(7, 3)
    assert_same_as_mlx(ours(mx.array(x)), theirs(real_mx.array(x)))
    fn = {"tanh": "tanh", "relu": "relu", "sigmoid": "sigmoid"}[act]
    xs = [[-2.0, -0.5, 0.0], [0.25, 1.0, 3.0]]
    assert_same_as_mlx(getattr(nn, fn)(mx.array(xs)), getattr(real_nn, fn)(real_mx.array(xs)))
    nb_ours, nb_theirs = twin(lambda lib: lib.Linear(3, 2, bias=False))
    assert_same_as_mlx(nb_ours(mx.array(x)), nb_theirs(real_mx.array(x)))


@needs_mlx
@pytest.mark.parametrize("reduction", [None, "none", "mean", "sum"])
def test_mse_loss_matches_mlx(reduction):
    p, t = data(4, 3), data(4, 3, 2.0)
    kw = {} if reduction is None else {"reduction": reduction}
    assert_same_as_mlx(
        nn.losses.mse_loss(mx.array(p), mx.array(t), **kw),
        real_nn.losses.mse_loss(real_mx.array(p), real_mx.array(t), **kw),
    )


def _softmax_rows(rows):
    out = []
    for r in rows:
        e = [math.exp(v) for v in r]
        out.append([v / sum(e) for v in e])
    return out


CE_CASES = {
    "indices": (data(5, 4), [0, 3, 1, 2, 3], {}),
    "indices-mean": (data(5, 4), [0, 3, 1, 2, 3], {"reduction": "mean"}),
    "indices-sum": (data(5, 4), [0, 3, 1, 2, 3], {"reduction": "sum"}),
    "indices-weights": (data(5, 4), [0, 3, 1, 2, 3],
                        {"weights": [0.5, 1.0, 2.0, 0.0, 1.5], "reduction": "mean"}),
    "indices-smoothing": (data(5, 4), [0, 3, 1, 2, 3], {"label_smoothing": 0.1}),
    "indices-axis0": (data(4, 5), [0, 3, 1, 2, 3], {"axis": 0}),
    "indices-3d": ([data(3, 4, 0.0), data(3, 4, 1.0)], [[0, 1, 3], [2, 2, 0]], {"axis": -1}),
    "probs": (data(5, 4), _softmax_rows(data(5, 4, 3.0)), {}),
    "probs-onehot-sum": (data(3, 4), [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]],
                         {"reduction": "sum"}),
    "probs-smoothing-mean": (data(5, 4), _softmax_rows(data(5, 4, 3.0)),
                             {"label_smoothing": 0.2, "reduction": "mean"}),
    "probs-axis0": (data(4, 5), _softmax_rows(data(5, 4, 1.0)), {"axis": 0}),
}


@needs_mlx
@pytest.mark.parametrize("case", list(CE_CASES))
def test_cross_entropy_matches_mlx(case):
    logits, targets, kw = CE_CASES[case]
    if case == "probs-axis0":  # probabilities along axis 0: transpose the rows
        targets = [list(col) for col in zip(*targets)]
    ours_kw = {k: mx.array(v) if k == "weights" else v for k, v in kw.items()}
    theirs_kw = {k: real_mx.array(v) if k == "weights" else v for k, v in kw.items()}
    ours = nn.losses.cross_entropy(mx.array(logits), mx.array(targets), **ours_kw)
    theirs = real_nn.losses.cross_entropy(real_mx.array(logits), real_mx.array(targets),
                                          **theirs_kw)
    assert_same_as_mlx(ours, theirs)
    # and its gradient with respect to the logits
    g_ours = mx.grad(lambda z: nn.losses.cross_entropy(z, mx.array(targets), **ours_kw).sum())(
        mx.array(logits))
    g_theirs = real_mx.grad(
        lambda z: real_nn.losses.cross_entropy(z, real_mx.array(targets), **theirs_kw).sum()
    )(real_mx.array(logits))
    assert_same_as_mlx(g_ours, g_theirs)


@needs_mlx
def test_loss_errors_match_mlx():
    a, ra = mx.zeros((2, 3)), real_mx.zeros((2, 3))
    raises_like_mlx(lambda: nn.losses.mse_loss(a, a, reduction="max"),
                    lambda: real_nn.losses.mse_loss(ra, ra, reduction="max"))
    raises_like_mlx(lambda: nn.losses.cross_entropy(a, mx.array([0, 1]), label_smoothing=-0.1),
                    lambda: real_nn.losses.cross_entropy(ra, real_mx.array([0, 1]),
                                                         label_smoothing=-0.1))
    raises_like_mlx(lambda: nn.losses.cross_entropy(a, mx.array([0, 1]), weights=mx.ones((3,))),
                    lambda: real_nn.losses.cross_entropy(ra, real_mx.array([0, 1]),
                                                         weights=real_mx.ones((3,))))


def _losses(lib, xmod, x, y_reg, y_cls):
    return {
        "mse": lambda m: lib.losses.mse_loss(m(xmod.array(x)), xmod.array(y_reg)),
        "ce-index": lambda m: lib.losses.cross_entropy(
            m(xmod.array(x)), xmod.array(y_cls), reduction="mean"),
        "ce-probs": lambda m: lib.losses.cross_entropy(
            m(xmod.array(x)), xmod.array(_softmax_rows(y_reg)), reduction="sum"),
    }


@needs_mlx
@pytest.mark.parametrize("loss", ["mse", "ce-index", "ce-probs"])
@pytest.mark.parametrize("frozen", [False, True])
def test_value_and_grad_matches_mlx(loss, frozen):
    ours, theirs = twin(mlp)
    if frozen:
        ours.layers[0].freeze(keys="weight")
        theirs.layers[0].freeze(keys="weight")
    x, y_reg, y_cls = data(6, 3), data(6, 4, 0.5), [0, 1, 2, 3, 1, 0]
    f_ours = _losses(nn, mx, x, y_reg, y_cls)[loss]
    f_theirs = _losses(real_nn, real_mx, x, y_reg, y_cls)[loss]
    v_ours, g_ours = nn.value_and_grad(ours, lambda: f_ours(ours))()
    v_theirs, g_theirs = real_nn.value_and_grad(theirs, lambda: f_theirs(theirs))()
    assert_same_as_mlx(v_ours, v_theirs)
    assert_trees_same(g_ours, g_theirs)
    assert ("weight" in g_ours["layers"][0]) is not frozen


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
