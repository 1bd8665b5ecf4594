"""Activation functions and their layers, mirroring python/mlx/nn/layers/activations.py.

Each function is its formula on one line, built from mlxref.core ops, so
its gradient is whatever those ops' vjps give. Each layer class calls its
function; the few with settings (``LeakyReLU``, ``ELU``, ``GELU``, ...) keep
them as plain attributes, and ``PReLU`` keeps its slope as a parameter.

>>> import mlxref.core as mx
>>> relu6(mx.array([-1.0, 3.0, 9.0]))
array([0, 3, 6], dtype=float32)
>>> GELU(approx="tanh")
GELU()
"""

import math

from ... import core as mx
from .base import Module

__all__ = [
    "sigmoid", "relu", "relu2", "relu6", "leaky_relu", "log_softmax", "elu", "softmax",
    "softplus", "softsign", "softshrink", "celu", "silu", "log_sigmoid", "gelu",
    "gelu_approx", "gelu_fast_approx", "glu", "step", "selu", "prelu", "mish", "hardswish",
    "hard_tanh", "hard_shrink", "softmin", "tanh",
    "GLU", "Sigmoid", "Mish", "ReLU", "ReLU2", "ReLU6", "LeakyReLU", "ELU", "Softmax",
    "Softplus", "Softsign", "Softshrink", "CELU", "SiLU", "LogSoftmax", "LogSigmoid", "PReLU",
    "GELU", "Tanh", "Hardswish", "Step", "SELU", "HardTanh", "HardShrink", "Softmin",
]

# ----------------------------------------------------------------------
# Functions


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return mx.sigmoid(x)


def relu(x):
    """``max(x, 0)``."""
    return mx.maximum(x, 0)


def relu2(x):
    """``max(x, 0) ** 2``."""
    return mx.square(mx.maximum(x, 0))


def relu6(x):
    """``min(max(x, 0), 6)``."""
    return mx.minimum(mx.maximum(x, 0), 6.0)


def leaky_relu(x, negative_slope=0.01):
    """``max(negative_slope * x, x)``."""
    return mx.maximum(negative_slope * x, x)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``.

    ``x`` is shifted by its (constant) max first: for large equal entries
    ``logsumexp(x) = max + log n`` rounds to ``max`` and ``log n`` is lost.
    """
    x = x - mx.stop_gradient(mx.max(x, axis=axis, keepdims=True))
    return x - mx.logsumexp(x, axis=axis, keepdims=True)


def elu(x, alpha=1.0):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return mx.where(x > 0, x, alpha * (mx.exp(x) - 1))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    return mx.softmax(x, axis=axis)


def softplus(x):
    """``log(1 + exp(x))``, as ``logaddexp(x, 0)`` so that large ``x`` does not overflow."""
    return mx.logaddexp(x, 0)


def softsign(x):
    """``x / (1 + |x|)``."""
    return mx.divide(x, 1 + mx.abs(x))


def softshrink(x, lambd=0.5):
    """``x - sign(x) * lambd`` where ``|x| > lambd``, else 0."""
    return mx.where(mx.abs(x) > lambd, x - mx.sign(x) * lambd, 0)


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``."""
    return mx.maximum(x, 0.0) + alpha * (mx.exp(mx.minimum(x, 0.0) / alpha) - 1)


def silu(x):
    """``x * sigmoid(x)`` (the swish)."""
    return x * mx.sigmoid(x)


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-x)


def gelu(x):
    """``x * Phi(x)``, with ``Phi`` the standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``."""
    return x * (1 + mx.erf(x / math.sqrt(2))) / 2


def gelu_approx(x):
    """``gelu`` with ``Phi(x) ~ (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2``."""
    return 0.5 * x * (1 + mx.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def gelu_fast_approx(x):
    """``gelu`` with ``Phi(x) ~ sigmoid(1.702 x)``."""
    return x * mx.sigmoid(1.702 * x)


def glu(x, axis=-1):
    """Split ``x`` in halves ``a, b`` along ``axis``: ``a * sigmoid(b)``."""
    a, b = mx.split(x, indices_or_sections=2, axis=axis)
    return a * mx.sigmoid(b)


def step(x, threshold=0.0):
    """1 where ``x >= threshold``, else 0."""
    return mx.where(x >= threshold, 1, 0)


def selu(x):
    """``scale * elu(x, alpha)`` with the self-normalising constants 1.0507 and 1.67326."""
    return elu(x, 1.67326) * 1.0507


def prelu(x, alpha):
    """``max(0, x) + alpha * min(0, x)``: ``leaky_relu`` with a learnt slope."""
    return mx.maximum(0, x) + alpha * mx.minimum(0, x)


def mish(x):
    """``x * tanh(softplus(x))``."""
    return x * mx.tanh(softplus(x))


def hardswish(x):
    """``x * min(max(x + 3, 0), 6) / 6``."""
    return x * mx.minimum(mx.maximum(x + 3, 0), 6) / 6


def hard_tanh(x, min_val=-1.0, max_val=1.0):
    """``x`` clipped to ``[min_val, max_val]``."""
    return mx.minimum(mx.maximum(x, min_val), max_val)


def hard_shrink(x, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return mx.where(mx.abs(x) > lambd, x, 0)


def softmin(x, axis=-1):
    """``softmax(-x)``."""
    return mx.softmax(-x, axis=axis)


def tanh(x):
    """The hyperbolic tangent."""
    return mx.tanh(x)


# ----------------------------------------------------------------------
# Layers without settings: each calls its function.


class Sigmoid(Module):
    """``sigmoid`` as a layer."""

    def __call__(self, x):
        return sigmoid(x)


class Mish(Module):
    """``mish`` as a layer."""

    def __call__(self, x):
        return mish(x)


class ReLU(Module):
    """``relu`` as a layer."""

    def __call__(self, x):
        return relu(x)


class ReLU2(Module):
    """``relu2`` as a layer."""

    def __call__(self, x):
        return relu2(x)


class ReLU6(Module):
    """``relu6`` as a layer."""

    def __call__(self, x):
        return relu6(x)


class Softmax(Module):
    """``softmax`` over the last axis as a layer."""

    def __call__(self, x):
        return softmax(x)


class Softplus(Module):
    """``softplus`` as a layer."""

    def __call__(self, x):
        return softplus(x)


class Softsign(Module):
    """``softsign`` as a layer."""

    def __call__(self, x):
        return softsign(x)


class SiLU(Module):
    """``silu`` as a layer."""

    def __call__(self, x):
        return silu(x)


class LogSoftmax(Module):
    """``log_softmax`` over the last axis as a layer."""

    def __call__(self, x):
        return log_softmax(x)


class LogSigmoid(Module):
    """``log_sigmoid`` as a layer."""

    def __call__(self, x):
        return log_sigmoid(x)


class Tanh(Module):
    """``tanh`` as a layer."""

    def __call__(self, x):
        return tanh(x)


class Hardswish(Module):
    """``hardswish`` as a layer."""

    def __call__(self, x):
        return hardswish(x)


class SELU(Module):
    """``selu`` as a layer."""

    def __call__(self, x):
        return selu(x)


class HardTanh(Module):
    """``hard_tanh`` with its default bounds as a layer."""

    def __call__(self, x):
        return hard_tanh(x)


class Softmin(Module):
    """``softmin`` over the last axis as a layer."""

    def __call__(self, x):
        return softmin(x)


# ----------------------------------------------------------------------
# Layers with settings


class GLU(Module):
    """``glu`` along ``axis`` as a layer."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def __call__(self, x):
        return glu(x, self.axis)


class LeakyReLU(Module):
    """``leaky_relu`` with a fixed ``negative_slope``."""

    def __init__(self, negative_slope=1e-2):
        super().__init__()
        self._negative_slope = negative_slope

    def __call__(self, x):
        return leaky_relu(x, self._negative_slope)


class ELU(Module):
    """``elu`` with a fixed ``alpha``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return elu(x, self._alpha)


class CELU(Module):
    """``celu`` with a fixed ``alpha``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self._alpha = alpha

    def __call__(self, x):
        return celu(x, self._alpha)


class Softshrink(Module):
    """``softshrink`` with a fixed ``lambd``."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return softshrink(x, self.lambd)


class HardShrink(Module):
    """``hard_shrink`` with a fixed ``lambd``."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return hard_shrink(x, self.lambd)


class Step(Module):
    """``step`` with a fixed ``threshold``."""

    def __init__(self, threshold=0.0):
        super().__init__()
        self.threshold = threshold

    def __call__(self, x):
        return step(x, self.threshold)


class PReLU(Module):
    """``prelu`` with a learnt slope ``weight`` (``num_parameters`` of them, all ``init``)."""

    def __init__(self, num_parameters=1, init=0.25):
        super().__init__()
        self.weight = mx.full([num_parameters], init)

    def __call__(self, x):
        return prelu(x, self.weight)


class GELU(Module):
    """``gelu`` (``approx="none"``), ``gelu_approx`` (``"precise"`` or ``"tanh"``) or
    ``gelu_fast_approx`` (``"fast"``)."""

    _FUNCTIONS = {"none": gelu, "precise": gelu_approx, "tanh": gelu_approx,
                  "fast": gelu_fast_approx}

    def __init__(self, approx="none"):
        super().__init__()
        if approx not in self._FUNCTIONS:
            raise ValueError(
                f"The approximation should be in ['none', 'precise', 'tanh', 'fast'] "
                f"but '{approx}' was given"
            )
        self._act = self._FUNCTIONS[approx]

    def __call__(self, x):
        return self._act(x)
