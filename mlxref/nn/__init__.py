"""``import mlxref.nn as nn``: mlx.nn in pure Python (python/mlx/nn/).

- ``layers/``: ``Module`` (base.py) and every layer and activation of MLX,
  one family per module; all of them are importable from here.
- ``losses``: MLX's loss functions (``nn.losses.cross_entropy``, ...).
- ``init``: MLX's initializers (``nn.init.he_uniform()``, ...).
- ``utils``: ``value_and_grad`` and ``checkpoint`` over a model's trainable
  parameters; ``average_gradients`` over the processes of a group.
"""

from . import init, losses  # noqa: F401
from .layers import *  # noqa: F401,F403
from .layers import (  # noqa: F401  (the modules too, as mlx.nn.activations etc.)
    activations, base, containers, convolution, distributed, dropout, embedding, linear,
    normalization, pooling, positional_encoding, quantized, recurrent, transformer, upsample)
from .utils import average_gradients, checkpoint, value_and_grad  # noqa: F401
