"""``import mlxref.nn as nn``: a small subset of mlx.nn.

``Module`` (a dict of parameters and submodules), the layers ``Linear``,
``Sequential``, ``Identity``, ``ReLU``, ``Tanh`` and ``Sigmoid``, the functions
``relu``, ``tanh`` and ``sigmoid``, ``losses.mse_loss`` and
``losses.cross_entropy``, and the transforms ``value_and_grad`` and
``checkpoint`` over a model's trainable parameters.
"""

from . import losses  # noqa: F401
from .layers import (  # noqa: F401
    Identity,
    Linear,
    Module,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
    relu,
    sigmoid,
    tanh,
)
from .utils import checkpoint, value_and_grad  # noqa: F401
