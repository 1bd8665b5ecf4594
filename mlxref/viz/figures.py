"""The canonical figures: what ``make diagrams`` draws into diagrams/.

Each figure is a small program and the transform drawn over it. The tests
compare the committed ``diagrams/<name>.dot`` with what these produce today,
so the pictures in the README and the tutorials cannot drift from the code.
"""

import pathlib

from .. import core as mx
from .. import nn
from . import limits, trace
from .ring import ring_allreduce


def seed(x):
    """The seed example: f(x) = sin(x) * exp(x)."""
    return mx.sin(x) * mx.exp(x)


def mlp_loss(w1, b1, w2, b2, x, y):
    """A two-layer MLP's squared error on one example."""
    h = mx.tanh(w1 @ x + b1)
    return mx.sum(mx.square(w2 @ h + b2 - y))


def example_loss(w, x, y):
    """A per-example loss, for per-example gradients with vmap(grad)."""
    return mx.square(mx.sum(w * x) - y)


def block(x):
    return mx.sin(x) * x


def chain(x):
    """Two blocks; drawn with transform="checkpoint" (the whole chain checkpointed)."""
    return mx.sum(block(block(x)))


@mx.custom_function
def clipped_sin(x):
    return mx.sin(x)


@clipped_sin.vjp
def clipped_sin_vjp(primals, cotangent, output):
    return mx.clip(cotangent * mx.cos(primals), -0.5, 0.5)


def uses_custom(x):
    """A custom_function with a custom vjp, inside a loss."""
    return mx.sum(clipped_sin(x) * x)


def naive_softmax(z):
    """Softmax straight from its formula: in float32, exp overflows (chapter 10)."""
    e = mx.exp(z)
    return e / mx.sum(e)


def conv_loss(x, w):
    """A strided 1-D convolution, summed: its input gradient is chapter 11's subject."""
    return mx.sum(mx.conv1d(x, w, stride=2))


def conv_args():
    return [mx.array([[[1.0], [2.0], [3.0], [4.0], [5.0]]]), mx.array([[[1.0], [0.0], [-1.0]]])]


def quantized_loss(x, w_q, scales, biases):
    """A product with 4-bit weights, summed: its gradient is chapter 13's."""
    return mx.sum(mx.quantized_matmul(x, w_q, scales, biases, group_size=32, bits=4))


def quantized_args():
    w = ((mx.arange(64, dtype=mx.float32) - 24) / 20).reshape(2, 32)
    return [mx.ones((1, 32)), *mx.quantize(w, group_size=32, bits=4)]


def tanh_by_hand(x):
    """tanh from its definition, summed: compile merges the repeated exps and
    negatives, then fuses the elementwise rest into one Compiled (chapter 14)."""
    return mx.sum((mx.exp(x) - mx.exp(-x)) / (mx.exp(x) + mx.exp(-x)))


class DeepMLP(nn.Module):
    """Six Linear(4, 4) layers, each followed by gelu, summed: issue 32's model,
    227 nodes in its grad; drawn by module, 29 (24 of them boxes).
    ``mlxref graph mlxref/viz/figures.py:DeepMLP --shape x=2,4 --transform grad -o deep.png``."""

    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 4) for _ in range(6)]

    def __call__(self, x):
        for layer in self.layers:
            x = nn.gelu(layer(x))
        return mx.sum(x)


def deep_mlp_args():
    """A batch of two inputs and the model, its weights drawn after ``mx.random.seed(0)``."""
    mx.random.seed(0)
    return [mx.array([[0.5, -1.0, 2.0, 0.25], [-0.5, 1.5, 0.0, -2.0]]), DeepMLP()]


def forward(x, model):
    """``model(x)``: a model's forward, the model an argument so its weights are inputs."""
    return model(x)


def mlp_args():
    return [mx.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]]), mx.array([0.0, 0.1, -0.1]),
            mx.array([[1.0, -1.0, 0.5]]), mx.array([0.2]), mx.array([1.0, 2.0]),
            mx.array([0.5])]


FIGURES = {
    "seed_graph": lambda: trace(seed, [mx.array(0.5)]),
    "seed_vjp": lambda: trace(seed, [mx.array(0.5)], transform="vjp"),
    "seed_jvp": lambda: trace(seed, [mx.array(0.5)], transform="jvp"),
    "mlp_grad": lambda: trace(mlp_loss, mlp_args(), transform="grad", argnums=(0, 1, 2, 3)),
    "vmap_grad": lambda: trace(
        mx.grad(example_loss),
        [mx.array([0.5, -0.25]), mx.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]),
         mx.array([1.0, 0.0, 2.0])],
        transform="vmap", in_axes=(None, 0, 0), title="vmap(grad(example_loss))(w, x, y)"),
    "checkpoint": lambda: trace(chain, [mx.array([0.5, -1.0])], transform="checkpoint"),
    "custom_function": lambda: trace(uses_custom, [mx.array([0.5, -1.0])], transform="grad"),
    "softmax_overflow": lambda: trace(naive_softmax, [mx.array([10.0, 100.0, 1000.0])],
                                      transform="graph"),
    "conv_vjp": lambda: trace(conv_loss, conv_args(), transform="grad"),
    "quantized_grad": lambda: trace(quantized_loss, quantized_args(), transform="grad",
                                    values=4),
    "compile_tanh": lambda: trace(tanh_by_hand, [mx.array([-1.0, 0.0, 0.5, 2.0])],
                                  transform="compile"),
    "mlp_modules": lambda: trace(forward, deep_mlp_args(), names=["x", ""], transform="grad",
                                 collapse=True, title="grad of DeepMLP(x), by module"),
}

# Figures that are not graphs: chapter 15's ring all_sum (3 ranks, rank r
# holding 10 r + 1, 10 r + 2, ...), drawn by ``viz.ring_allreduce``.
OTHER_FIGURES = {
    "ring_allreduce": lambda: ring_allreduce(3),
}

STEPPERS = ("seed_vjp", "seed_jvp")  # figures that also get an HTML stepper


def write_figures(directory, names=None, svg=True):
    """Write ``<name>.dot`` (and ``.svg``, which needs Graphviz) for each figure; return the paths."""
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with limits(timeout=120):  # small, known graphs: a busy machine must not fail them
        for name in names or {**FIGURES, **OTHER_FIGURES}:
            drawing = FIGURES[name]() if name in FIGURES else OTHER_FIGURES[name]()
            dot_path = out / f"{name}.dot"
            dot_path.write_text(drawing.to_dot())
            written.append(dot_path)
            if svg:
                written.append(pathlib.Path(drawing.render(out / f"{name}.svg", "svg")))
                if name in STEPPERS:
                    written.append(pathlib.Path(drawing.render(out / f"{name}.html", "html")))
    return written
