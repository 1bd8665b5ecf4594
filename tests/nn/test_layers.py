"""mlxref.nn's layers, Module API and nn.value_and_grad against mlx.nn, value for value.

Each case builds the same layer in both libraries, copies mlxref's
parameters (running statistics included) into MLX's, and compares the
outputs on the same deterministic inputs, then the gradients of a weighted
sum of the outputs with respect to the parameters and the inputs. The
reprs are compared too. The MLX-free tests check the properties a reader
can see in the docstrings (dropout scaling, frozen quantized weights,
running statistics).

A small model (an MLP) is built in both libraries with mlxref's initial
weights, so its forward pass, its MSE and cross-entropy losses and their
gradients from ``nn.value_and_grad`` compare value for value. The MLX-free
tests of the Module API (a dict of parameters, children, update and
load_weights, freezing, ``nn.checkpoint``, the docstrings) run everywhere.
The optimizers that train such a model are tested in
tests/optimizers/test_optimizers.py, which shares this file's model helpers.
"""

import doctest
import importlib
import math

import pytest
from support import assert_same_as_mlx, close, needs_mlx, real_mx

import mlxref.core as mx
import mlxref.nn as nn
from mlxref.utils import tree_flatten, tree_map

if real_mx is not None:
    import mlx.nn as real_nn
else:  # pragma: no cover
    real_nn = None


def values(shape, phase=0.0):
    """Deterministic values in [-1.5, 1.5] shaped ``shape``, as nested lists."""
    n = math.prod(shape)
    flat = [1.5 * math.sin(1.7 * i + phase) for i in range(n)]
    if not shape:
        return flat[0]

    def nest(items, dims):
        if len(dims) == 1:
            return items
        step = len(items) // dims[0]
        return [nest(items[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]

    return nest(flat, list(shape))


def to_real(a):
    return real_mx.array(a.tolist(), dtype=getattr(real_mx, a.dtype.name))


def twin(build):
    """``build(mlxref.nn)`` and ``build(mlx.nn)``, the latter holding the former's arrays."""
    ours = build(nn)
    theirs = build(real_nn)
    theirs.update(tree_map(to_real, ours.parameters()), strict=False)
    return ours, theirs


def assert_trees_same(ours, theirs, rtol=1e-4, atol=1e-5):
    flat_theirs = dict(tree_flatten(theirs))
    flat_ours = dict(tree_flatten(ours))
    assert flat_ours.keys() == flat_theirs.keys()
    for path, a in flat_ours.items():
        assert_same_as_mlx(a, flat_theirs[path], rtol=rtol, atol=atol)


def outputs_of(result):
    return list(result) if isinstance(result, tuple) else [result]


def weighted_sum(lib, result):
    """A scalar that depends on every output entry differently."""
    total = 0
    for k, y in enumerate(outputs_of(result)):
        weights = lib.sin(lib.arange(y.size, dtype=lib.float32) + k).reshape(y.shape)
        total = total + (y * weights).sum()
    return total


def data(rows, cols, phase=0.0):
    """Deterministic inputs in [-1, 1], the same list for both libraries."""
    return [[math.sin(1.3 * i + 0.7 * j + phase) for j in range(cols)] for i in range(rows)]


def mlp(lib, act="tanh"):
    """A 3-5-4 MLP with one activation, built with ``lib`` (mlxref.nn or mlx.nn)."""
    layer = {"tanh": lib.Tanh, "relu": lib.ReLU, "sigmoid": lib.Sigmoid}[act]
    return lib.Sequential(lib.Linear(3, 5), layer(), lib.Linear(5, 4))


def shapes(tree):
    return tree_map(lambda a: tuple(a.shape), tree)


def assert_same_shapes_and_values(ours, theirs, rtol=1e-5, atol=1e-5):
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


# (id, build(nn), input shapes (ints: float inputs; ("int", shape, high): indices), call)
CASES = [
    ("linear", lambda nn: nn.Linear(3, 4), [(2, 3)], None),
    ("linear_nobias", lambda nn: nn.Linear(3, 4, bias=False), [(2, 5, 3)], None),
    ("bilinear", lambda nn: nn.Bilinear(3, 2, 4), [(5, 3), (5, 2)], None),
    ("identity", lambda nn: nn.Identity(7, x=1), [(2, 3)], None),
    ("embedding", lambda nn: nn.Embedding(6, 4), [("int", (2, 3), 6)], None),
    ("embedding_as_linear", lambda nn: nn.Embedding(6, 4), [(3, 4)],
     lambda m, x: m.as_linear(x)),
    ("conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), [(2, 7, 3)], None),
    ("conv1d_groups", lambda nn: nn.Conv1d(4, 6, 2, dilation=2, groups=2), [(1, 6, 4)], None),
    ("conv2d", lambda nn: nn.Conv2d(2, 3, (2, 3), stride=(1, 2), padding=1), [(1, 4, 5, 2)],
     None),
    ("conv3d", lambda nn: nn.Conv3d(2, 2, 2, bias=False), [(1, 3, 3, 3, 2)], None),
    # Not with output_padding: MLX 0.32.4's input gradient then has the wrong shape.
    ("conv_transpose1d", lambda nn: nn.ConvTranspose1d(3, 2, 3, stride=2, dilation=2),
     [(1, 4, 3)], None),
    ("conv_transpose2d", lambda nn: nn.ConvTranspose2d(2, 3, 2, stride=2, padding=1),
     [(1, 3, 3, 2)], None),
    ("conv_transpose3d", lambda nn: nn.ConvTranspose3d(2, 2, 2), [(1, 2, 2, 2, 2)], None),
    ("max_pool1d", lambda nn: nn.MaxPool1d(3, stride=2, padding=1), [(2, 7, 3)], None),
    ("avg_pool1d", lambda nn: nn.AvgPool1d(2), [(2, 6, 3)], None),
    ("max_pool2d", lambda nn: nn.MaxPool2d((2, 3), stride=1), [(1, 4, 5, 2)], None),
    ("avg_pool2d", lambda nn: nn.AvgPool2d(2, stride=(1, 2), padding=1), [(1, 4, 5, 2)], None),
    ("max_pool3d", lambda nn: nn.MaxPool3d(2), [(1, 4, 4, 4, 1)], None),
    ("avg_pool3d", lambda nn: nn.AvgPool3d(2, stride=1), [(1, 3, 3, 3, 2)], None),
    ("upsample_nearest", lambda nn: nn.Upsample(2), [(1, 2, 3, 2)], None),
    ("upsample_nearest_frac", lambda nn: nn.Upsample(1.5), [(1, 4, 3, 1)], None),
    ("upsample_linear", lambda nn: nn.Upsample((2, 1.5), mode="linear"), [(1, 3, 2, 2)], None),
    ("upsample_linear_corners", lambda nn: nn.Upsample(2.5, mode="linear", align_corners=True),
     [(2, 3, 1)], None),
    ("upsample_cubic", lambda nn: nn.Upsample(2, mode="cubic"), [(1, 3, 3, 1)], None),
    ("upsample_cubic_corners", lambda nn: nn.Upsample(1.5, mode="cubic", align_corners=True),
     [(1, 4, 2)], None),
    ("upsample_linear_antialias", lambda nn: nn.Upsample(0.5, mode="linear", antialias=True),
     [(1, 6, 4, 1)], None),
    ("upsample_cubic_antialias", lambda nn: nn.Upsample(0.5, mode="cubic", antialias=True),
     [(1, 8, 2)], None),
    ("layer_norm", lambda nn: nn.LayerNorm(4), [(2, 3, 4)], None),
    ("layer_norm_nobias", lambda nn: nn.LayerNorm(4, bias=False, eps=1e-3), [(3, 4)], None),
    ("rms_norm", lambda nn: nn.RMSNorm(4), [(2, 3, 4)], None),
    ("group_norm", lambda nn: nn.GroupNorm(2, 4), [(2, 3, 3, 4)], None),
    ("group_norm_pytorch", lambda nn: nn.GroupNorm(2, 6, pytorch_compatible=True),
     [(2, 5, 6)], None),
    ("instance_norm", lambda nn: nn.InstanceNorm(3, affine=True), [(2, 4, 3)], None),
    ("batch_norm", lambda nn: nn.BatchNorm(3), [(4, 3)], None),
    ("batch_norm_4d", lambda nn: nn.BatchNorm(2, affine=False, momentum=0.3),
     [(2, 3, 2, 2)], None),
    ("batch_norm_eval", lambda nn: nn.BatchNorm(3).eval(), [(2, 5, 3)], None),
    ("dropout_eval", lambda nn: nn.Dropout(0.5).eval(), [(3, 4)], None),
    ("attention", lambda nn: nn.MultiHeadAttention(4, 2, bias=True), [(2, 3, 4), (2, 5, 4),
                                                                      (2, 5, 4)], None),
    ("attention_dims", lambda nn: nn.MultiHeadAttention(4, 2, key_input_dims=3, value_dims=6,
                                                        value_output_dims=5),
     [(1, 2, 4), (1, 3, 3), (1, 3, 3)], None),
    ("attention_causal", lambda nn: nn.MultiHeadAttention(4, 1), [(1, 3, 4)],
     lambda m, x: m(x, x, x, mask=m.create_additive_causal_mask(3))),
    ("encoder_layer", lambda nn: nn.TransformerEncoderLayer(4, 2, mlp_dims=6), [(1, 3, 4)],
     lambda m, x: m(x, None)),
    ("encoder_layer_post_norm", lambda nn: nn.TransformerEncoderLayer(4, 2, norm_first=False),
     [(1, 3, 4)], lambda m, x: m(x, None)),
    ("decoder_layer", lambda nn: nn.TransformerDecoderLayer(4, 1, mlp_dims=3, norm_first=False),
     [(1, 2, 4), (1, 3, 4)], lambda m, x, mem: m(x, mem, None, None)),
    ("transformer", lambda nn: nn.Transformer(4, 2, 1, 1, mlp_dims=4),
     [(1, 3, 4), (1, 2, 4)], lambda m, s, t: m(s, t, None, None, None)),
    ("transformer_checkpoint", lambda nn: nn.TransformerEncoder(2, 4, 2, mlp_dims=4,
                                                                checkpoint=True),
     [(1, 3, 4)], lambda m, x: m(x, None)),
    ("rope", lambda nn: nn.RoPE(4), [(1, 2, 3, 6)], lambda m, x: m(x, offset=2)),
    ("rope_traditional", lambda nn: nn.RoPE(4, traditional=True, base=100, scale=0.5),
     [(2, 3, 4)], None),
    ("sinusoidal", lambda nn: nn.SinusoidalPositionalEncoding(6), [(2, 3)], None),
    ("sinusoidal_options", lambda nn: nn.SinusoidalPositionalEncoding(
        4, min_freq=0.01, max_freq=2, scale=1.0, cos_first=True, full_turns=True), [(5,)],
     None),
    ("alibi", lambda nn: nn.ALiBi(), [(1, 3, 2, 4)], lambda m, x: m(x, offset=1)),
    ("alibi_6_heads", lambda nn: nn.ALiBi(), [(1, 6, 2, 2)], None),
    ("rnn", lambda nn: nn.RNN(3, 4), [(2, 3, 3)], None),
    ("rnn_relu_hidden", lambda nn: nn.RNN(3, 2, bias=False, nonlinearity=nn.relu),
     [(3, 3), (2,)], None),
    ("gru", lambda nn: nn.GRU(3, 4), [(2, 3, 3)], None),
    ("gru_hidden", lambda nn: nn.GRU(2, 3, bias=False), [(4, 2), (3,)], None),
    ("lstm", lambda nn: nn.LSTM(3, 2), [(2, 3, 3)], None),
    ("lstm_hidden_cell", lambda nn: nn.LSTM(2, 3), [(1, 2, 2), (1, 3), (1, 3)], None),
    ("prelu", lambda nn: nn.PReLU(3, init=0.1), [(2, 3)], None),
    ("sequential", lambda nn: nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Dropout(0.0),
                                            nn.Linear(4, 2), nn.LogSoftmax()), [(2, 3)], None),
]


def make_inputs(specs, lib):
    out = []
    for k, spec in enumerate(specs):
        if spec and spec[0] == "int":
            _, shape, high = spec
            n = math.prod(shape)
            out.append(lib.array([(7 * i + 3) % high for i in range(n)]).reshape(shape))
        else:
            out.append(lib.array(values(spec, phase=0.3 * k)))
    return out


def run(module, call, inputs):
    return call(module, *inputs) if call else module(*inputs)


@needs_mlx
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_layer_matches_mlx(case):
    _, build, specs, call = case
    ours, theirs = twin(build)
    if not isinstance(ours, nn.RNN):  # its repr shows its nonlinearity function's address
        assert repr(ours) == repr(theirs)
    xs, real_xs = make_inputs(specs, mx), make_inputs(specs, real_mx)
    for y, real_y in zip(outputs_of(run(ours, call, xs)),
                         outputs_of(run(theirs, call, real_xs))):
        assert_same_as_mlx(y, real_y, rtol=1e-4, atol=1e-5)
    # Layers that update state in the forward pass (BatchNorm) updated the same way.
    assert_trees_same(ours.parameters(), theirs.parameters())

    floats = [i for i, s in enumerate(specs) if not (s and s[0] == "int")]

    def loss(lib, module, call):
        def f(params, *float_xs):
            module.update(params)
            args = list(xs if lib is mx else real_xs)
            for i, x in zip(floats, float_xs):
                args[i] = x
            return weighted_sum(lib, run(module, call, args))

        return f

    argnums = list(range(1 + len(floats)))
    grads = mx.grad(loss(mx, ours, call), argnums=argnums)(
        ours.trainable_parameters(), *[xs[i] for i in floats])
    real_grads = real_mx.grad(loss(real_mx, theirs, call), argnums=argnums)(
        theirs.trainable_parameters(), *[real_xs[i] for i in floats])
    if len(argnums) == 1:  # both libraries return the bare gradient then
        grads, real_grads = (grads,), (real_grads,)
    assert_trees_same(grads[0], real_grads[0], rtol=1e-3, atol=1e-4)
    for g, real_g in zip(grads[1:], real_grads[1:]):
        assert_same_as_mlx(g, real_g, rtol=1e-3, atol=1e-4)


ACTIVATION_FUNCTIONS = [
    ("sigmoid", {}), ("relu", {}), ("relu2", {}), ("relu6", {}), ("leaky_relu", {}),
    ("leaky_relu", {"negative_slope": 0.2}), ("log_softmax", {}), ("log_softmax", {"axis": 0}),
    ("elu", {}), ("elu", {"alpha": 0.5}), ("softmax", {}), ("softplus", {}), ("softsign", {}),
    ("softshrink", {}), ("softshrink", {"lambd": 1.0}), ("celu", {"alpha": 2.0}), ("silu", {}),
    ("log_sigmoid", {}), ("gelu", {}), ("gelu_approx", {}), ("gelu_fast_approx", {}),
    ("glu", {}), ("glu", {"axis": 0}), ("step", {}), ("step", {"threshold": 0.5}), ("selu", {}),
    ("mish", {}), ("hardswish", {}), ("hard_tanh", {}), ("hard_tanh", {"min_val": -0.5,
                                                                      "max_val": 2.0}),
    ("hard_shrink", {}), ("softmin", {}), ("tanh", {}),
]


@needs_mlx
@pytest.mark.parametrize("name,kwargs", ACTIVATION_FUNCTIONS,
                         ids=[f"{n}-{'-'.join(k)}" for n, k in ACTIVATION_FUNCTIONS])
def test_activation_functions_match_mlx(name, kwargs):
    x = values((4, 6))
    y = getattr(nn, name)(mx.array(x), **kwargs)
    real_y = getattr(real_nn, name)(real_mx.array(x), **kwargs)
    assert_same_as_mlx(y, real_y, rtol=1e-5, atol=1e-6)
    if name != "step":
        g = mx.grad(lambda a: weighted_sum(mx, getattr(nn, name)(a, **kwargs)))(mx.array(x))
        real_g = real_mx.grad(
            lambda a: weighted_sum(real_mx, getattr(real_nn, name)(a, **kwargs)))(
            real_mx.array(x))
        assert_same_as_mlx(g, real_g, rtol=1e-4, atol=1e-5)


ACTIVATION_LAYERS = [
    ("GLU", {"axis": 0}), ("Sigmoid", {}), ("Mish", {}), ("ReLU", {}), ("ReLU2", {}),
    ("ReLU6", {}), ("LeakyReLU", {"negative_slope": 0.3}), ("ELU", {"alpha": 0.7}),
    ("Softmax", {}), ("Softplus", {}), ("Softsign", {}), ("Softshrink", {"lambd": 0.2}),
    ("CELU", {"alpha": 1.5}), ("SiLU", {}), ("LogSoftmax", {}), ("LogSigmoid", {}),
    ("PReLU", {}), ("GELU", {}), ("GELU", {"approx": "precise"}), ("GELU", {"approx": "tanh"}),
    ("GELU", {"approx": "fast"}), ("Tanh", {}), ("Hardswish", {}), ("Step", {"threshold": 0.1}),
    ("SELU", {}), ("HardTanh", {}), ("HardShrink", {"lambd": 0.9}), ("Softmin", {}),
]


@needs_mlx
@pytest.mark.parametrize("name,kwargs", ACTIVATION_LAYERS,
                         ids=[f"{n}-{'-'.join(map(str, k.values()))}"
                              for n, k in ACTIVATION_LAYERS])
def test_activation_layers_match_mlx(name, kwargs):
    ours, theirs = twin(lambda lib: getattr(lib, name)(**kwargs))
    assert repr(ours) == repr(theirs)
    x = values((4, 6), phase=1.0)
    assert_same_as_mlx(ours(mx.array(x)), theirs(real_mx.array(x)), rtol=1e-5, atol=1e-6)


def test_activation_lists_are_mlxs():
    tested = {n for n, _ in ACTIVATION_FUNCTIONS} | {n for n, _ in ACTIVATION_LAYERS}
    assert tested | {"prelu"} == set(nn.activations.__all__)  # prelu: through PReLU
    if real_nn is not None:
        module = real_nn.layers.activations
        theirs = {n for n in dir(module) if not n.startswith("_")
                  and callable(getattr(module, n))}
        assert theirs - {"Any", "Module", "partial"} == set(nn.activations.__all__)


# ----------------------------------------------------------------------
# Dropout, BatchNorm, quantized layers: what a student can check by hand


def test_dropout_scales_kept_entries_and_is_identity_in_eval():
    mx.random.seed(3)
    layer = nn.Dropout(0.25)
    y = layer(mx.ones((200, 10))).tolist()
    kept = [v for row in y for v in row if v != 0]
    assert all(close(v, 1 / 0.75) for v in kept)
    assert 0.65 < len(kept) / 2000 < 0.85
    x = mx.array(values((3, 4)))
    assert layer.eval()(x) is x
    channels = nn.Dropout2d(0.5)(mx.ones((2, 3, 3, 8))).tolist()
    for n in range(2):  # one decision per (example, channel): the 3x3 positions agree
        for c in range(8):
            assert len({channels[n][i][j][c] for i in range(3) for j in range(3)}) == 1


@needs_mlx
@pytest.mark.parametrize("name,shape", [("Dropout", (4, 5)), ("Dropout2d", (2, 2, 3, 4)),
                                        ("Dropout3d", (2, 2, 2, 2, 3))])
def test_dropout_masks_match_mlx_under_a_seed(name, shape):
    # mx.random is MLX's generator, so the same seed draws the same mask.
    mx.random.seed(11)
    real_mx.random.seed(11)
    x = values(shape)
    ours = getattr(nn, name)(0.4)(mx.array(x))
    theirs = getattr(real_nn, name)(0.4)(real_mx.array(x))
    assert_same_as_mlx(ours, theirs)


def test_batch_norm_running_statistics_and_modes():
    bn = nn.BatchNorm(2, momentum=0.5)
    x = mx.array([[1.0, 0.0], [3.0, 4.0], [5.0, 2.0]])
    bn(x)
    # mean (3, 2), unbiased variance (4, 4); 0.5 * old + 0.5 * new.
    assert close(bn.running_mean.tolist(), [1.5, 1.0])
    assert close(bn.running_var.tolist(), [2.5, 2.5])
    assert sorted(bn.trainable_parameters()) == ["bias", "weight"]
    bn.unfreeze()
    assert sorted(bn.trainable_parameters()) == ["bias", "weight"]
    y = bn.eval()(x).tolist()
    assert close(y[0], [(1.0 - 1.5) / math.sqrt(2.5 + 1e-5), (0.0 - 1.0) / math.sqrt(2.5 + 1e-5)])
    with pytest.raises(ValueError, match="more than one value per channel"):
        bn.train()(mx.ones((1, 2)))


def test_quantized_layers_are_frozen_and_close_to_the_float_layer():
    mx.random.seed(0)
    lin = nn.Linear(64, 8)
    q = lin.to_quantized(group_size=32, bits=8)
    assert isinstance(q, nn.QuantizedLinear)
    assert sorted(q.trainable_parameters()) == ["bias"]
    x = mx.array(values((3, 64)))
    err = mx.abs(q(x) - lin(x)).max().item()
    assert err < 0.05
    emb = nn.Embedding(10, 64)
    qe = emb.to_quantized(group_size=64, bits=8)
    ids = mx.array([1, 4, 9])
    assert mx.abs(qe(ids) - emb(ids)).max().item() < 0.02
    assert qe.trainable_parameters() == {}
    with pytest.raises(ValueError, match="Quantized input is not supported"):
        emb.to_quantized(quantize_input=True)


@needs_mlx
@pytest.mark.parametrize("mode,group_size,bits", [("affine", 32, 4), ("affine", 64, 8),
                                                  ("mxfp4", 32, 4), ("mxfp8", 32, 8)])
def test_quantize_model_matches_mlx(mode, group_size, bits):
    def build(lib):
        return lib.Sequential(lib.Embedding(5, 64), lib.Linear(64, 32), lib.ReLU())

    ours, theirs = twin(build)
    nn.quantize(ours, group_size, bits, mode=mode)
    real_nn.quantize(theirs, group_size, bits, mode=mode)
    assert repr(ours) == repr(theirs)
    assert_trees_same(ours.parameters(), theirs.parameters(), rtol=0, atol=0)
    ids = [[0, 3], [4, 1]]
    assert_same_as_mlx(ours(mx.array(ids)), theirs(real_mx.array(ids)), rtol=1e-4, atol=1e-5)
    e, real_e = ours.layers[0], theirs.layers[0]
    x = values((2, 64))
    assert_same_as_mlx(e.as_linear(mx.array(x)), real_e.as_linear(real_mx.array(x)),
                       rtol=1e-4, atol=1e-4)


def test_quantize_predicate():
    model = nn.Sequential(nn.Embedding(5, 64), nn.ReLU(), nn.Linear(64, 64))
    nn.quantize(model, class_predicate=lambda path, m: path == "layers.2" and {"bits": 8})
    assert [type(m).__name__ for m in model.layers] == ["Embedding", "ReLU", "QuantizedLinear"]
    assert model.layers[2].bits == 8
    with pytest.raises(ValueError, match="Unable to quantize model of type"):
        nn.quantize(model, class_predicate=lambda path, m: isinstance(m, nn.ReLU))
    with pytest.raises(ValueError, match="Invalid quantization mode 'int3'"):
        nn.QuantizedLinear(64, 8, mode="int3")


# ----------------------------------------------------------------------
# Module API


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4))
        self.heads = {"a": nn.Linear(4, 2), "b": [nn.LayerNorm(4), nn.Linear(4, 1)]}
        self.scale = mx.ones((2,))


def real_net():
    class RealNet(real_nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = real_nn.Sequential(real_nn.Linear(3, 4), real_nn.ReLU(),
                                              real_nn.Linear(4, 4))
            self.heads = {"a": real_nn.Linear(4, 2),
                          "b": [real_nn.LayerNorm(4), real_nn.Linear(4, 1)]}
            self.scale = real_mx.ones((2,))

    return RealNet()


@needs_mlx
def test_module_walks_match_mlx():
    ours, theirs = Net(), real_net()
    theirs.update(tree_map(to_real, ours.parameters()))
    assert repr(ours).replace("Net", "RealNet", 1) == repr(theirs)
    assert [p for p, _ in ours.named_modules()] == [p for p, _ in theirs.named_modules()]
    assert [type(m).__name__ for m in ours.modules()][1:] == \
        [type(m).__name__ for m in theirs.modules()][1:]
    shapes = lambda t: tree_map(lambda a: tuple(a.shape), t)  # noqa: E731
    assert shapes(ours.parameters()) == shapes(theirs.parameters())
    assert tree_map(lambda m: type(m).__name__, ours.leaf_modules(), is_leaf=nn.Module.is_module) \
        == tree_map(lambda m: type(m).__name__, theirs.leaf_modules(),
                    is_leaf=real_nn.Module.is_module)
    ours.freeze(keys=["bias"]).unfreeze(keys="bias", recurse=False)
    theirs.freeze(keys=["bias"]).unfreeze(keys="bias", recurse=False)
    assert shapes(ours.trainable_parameters()) == shapes(theirs.trainable_parameters())
    ours.set_dtype(mx.float16)
    theirs.set_dtype(real_mx.float16)
    assert tree_map(lambda a: a.dtype.name, ours.parameters()) == \
        tree_map(lambda a: str(a.dtype).split(".")[-1], theirs.parameters())


@needs_mlx
def test_update_modules_matches_mlx():
    ours, theirs = Net(), real_net()
    ours.update_modules({"heads": {"b": [{}, nn.Linear(4, 3)]}, "encoder": {"layers": [
        {}, nn.GELU()]}})
    theirs.update_modules({"heads": {"b": [{}, real_nn.Linear(4, 3)]}, "encoder": {"layers": [
        {}, real_nn.GELU()]}})
    assert repr(ours).replace("Net", "RealNet", 1) == repr(theirs)
    for bad in ({"nothing": nn.ReLU()}, {"scale": nn.Linear(1, 1)},
                {"heads": {"b": [{}, {}, nn.ReLU()]}}):
        real_bad = tree_map(lambda m: real_nn.Linear(1, 1) if m else real_nn.ReLU(), bad,
                            is_leaf=nn.Module.is_module)
        with pytest.raises(ValueError) as real_error:
            real_net().update_modules(real_bad)
        with pytest.raises(ValueError) as our_error:
            Net().update_modules(bad)
        assert str(our_error.value) == str(real_error.value)
    # An empty module where an array is (a module without parameters is an empty dict,
    # equal to the "nothing here" marker {}) is ignored by both.
    Net().update_modules({"nothing": nn.ReLU(), "scale": nn.ReLU()}, strict=False)
    real_net().update_modules({"scale": real_nn.ReLU()})
    Net().update_modules({"scale": nn.ReLU()})


@needs_mlx
@pytest.mark.parametrize("suffix", [".npz", ".safetensors"])
def test_save_and_load_weights_both_ways(tmp_path, suffix):
    ours, theirs = twin(lambda lib: lib.Sequential(lib.Linear(3, 2), lib.BatchNorm(2)))
    ours.save_weights(str(tmp_path / f"ours{suffix}"))
    fresh = real_nn.Sequential(real_nn.Linear(3, 2), real_nn.BatchNorm(2))
    fresh.load_weights(str(tmp_path / f"ours{suffix}"))
    assert_trees_same(ours.parameters(), fresh.parameters(), rtol=0, atol=0)
    theirs.save_weights(str(tmp_path / f"theirs{suffix}"))
    back = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm(2))
    back.load_weights(str(tmp_path / f"theirs{suffix}"))
    assert_trees_same(back.parameters(), theirs.parameters(), rtol=0, atol=0)
    with pytest.raises(ValueError, match="Unsupported file extension"):
        ours.save_weights(str(tmp_path / "w.bin"))
    with pytest.raises(ValueError, match="Missing 1 parameters"):
        nn.Sequential(nn.Linear(3, 2), nn.BatchNorm(2), nn.Linear(2, 1, bias=False)) \
            .load_weights(str(tmp_path / f"theirs{suffix}"))
    part = nn.Sequential(nn.Linear(3, 2))
    part.load_weights(str(tmp_path / f"theirs{suffix}"), strict=False)
    assert_same_as_mlx(part.layers[0].weight, theirs.layers[0].weight, rtol=0, atol=0)


LAYER_ERRORS = [
    lambda nn: nn.LayerNorm(3, eps=0.0),
    lambda nn: nn.RMSNorm(3, eps=-1.0),
    lambda nn: nn.GroupNorm(0, 4),
    lambda nn: nn.GroupNorm(3, 4),
    lambda nn: nn.GroupNorm(2, 0),
    lambda nn: nn.BatchNorm(3, eps=0),
    lambda nn: nn.InstanceNorm(3)(nn.Linear(2, 2).weight),
    lambda nn: nn.BatchNorm(3)(nn.Linear(3, 3).weight[0]),
    lambda nn: nn.Dropout(1.0),
    lambda nn: nn.Dropout2d(0.5)(nn.Linear(3, 3).weight),
    lambda nn: nn.Dropout3d(-0.1),
    lambda nn: nn.Conv1d(3, 2, 2, groups=2),
    lambda nn: nn.MaxPool2d((2, 2, 2)),
    lambda nn: nn.AvgPool1d(0),
    lambda nn: nn.MaxPool1d(2, padding=-1),
    lambda nn: nn.AvgPool3d(2.0),
    lambda nn: nn.Upsample(2, mode="area"),
    lambda nn: nn.Upsample(2, antialias=True),
    lambda nn: nn.Upsample(2, mode="linear", align_corners=True, antialias=True),
    lambda nn: nn.Upsample((2, 2, 2))(nn.Linear(3, 3).weight[None, :, :, None]),
    lambda nn: nn.Upsample(2)(nn.Linear(3, 3).weight),
    lambda nn: nn.GELU(approx="exact"),
    lambda nn: nn.MultiHeadAttention(5, 2),
    lambda nn: nn.SinusoidalPositionalEncoding(3),
    lambda nn: nn.RNN(2, 2, nonlinearity=3),
    lambda nn: nn.Linear(64, 8).to_quantized(quantize_input=True),
    lambda nn: nn.QuantizedLinear(64, 8, mode="int4"),
    lambda nn: nn.Linear(2, 2).update({"w": nn.Linear(2, 2).weight}),
    lambda nn: nn.Linear(2, 2).load_weights([("weight", nn.Linear(3, 2).weight),
                                             ("bias", nn.Linear(3, 2).bias)]),
    lambda nn: nn.Linear(2, 2).freeze(keys="w", strict=True),
]


@needs_mlx
@pytest.mark.parametrize("program", LAYER_ERRORS, ids=[str(i) for i in range(len(LAYER_ERRORS))])
def test_layer_errors_match_mlx(program):
    with pytest.raises(Exception) as theirs:
        program(real_nn)
    with pytest.raises(type(theirs.value)) as ours:
        program(nn)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["base", "activations", "linear", "normalization", "pooling",
                                  "positional_encoding", "quantized"])
def test_docstring_examples(name):
    result = doctest.testmod(getattr(nn.layers, name), verbose=False)
    assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------
# Module structure, freezing, nn.value_and_grad (no MLX needed)


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


@pytest.mark.parametrize(
    "name", ["mlxref.nn.layers.base", "mlxref.nn.losses", "mlxref.nn.utils",
             "mlxref.optimizers.optimizers"]
)
def test_training_api_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------
# A model, its losses and nn.value_and_grad against real MLX


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
    assert_same_shapes_and_values(g_ours, g_theirs)
    assert ("weight" in g_ours["layers"][0]) is not frozen
