"""The layers of mlxref.nn, one family per module, as in python/mlx/nn/layers/.

Start with base.py (``Module``), then linear.py and containers.py; the
others are independent families: activations, convolution (and its
transpose), pooling, upsample, normalization, dropout, embedding,
positional_encoding, transformer, recurrent, quantized and distributed
(linear layers sharded over the processes of a ``mx.distributed`` group).
"""

from .activations import *  # noqa: F401,F403
from .activations import __all__ as _activations
from .base import Module
from .containers import Sequential
from .convolution import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                          ConvTranspose3d)
from .distributed import (AllToShardedLinear, FullyShardedModule, QuantizedAllToShardedLinear,
                          QuantizedShardedToAllLinear, ShardedToAllLinear, fully_shard)
from .dropout import Dropout, Dropout2d, Dropout3d
from .embedding import Embedding
from .linear import Bilinear, Identity, Linear
from .normalization import BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RMSNorm
from .pooling import AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d
from .positional_encoding import ALiBi, RoPE, SinusoidalPositionalEncoding
from .quantized import QQLinear, QuantizedEmbedding, QuantizedLinear, quantize
from .recurrent import GRU, LSTM, RNN
from .transformer import (MultiHeadAttention, Transformer, TransformerDecoder,
                          TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .upsample import Upsample

__all__ = [
    *_activations, "Module", "Sequential", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "AllToShardedLinear", "FullyShardedModule",
    "QuantizedAllToShardedLinear", "QuantizedShardedToAllLinear", "ShardedToAllLinear",
    "fully_shard", "Dropout", "Dropout2d", "Dropout3d", "Embedding",
    "Bilinear", "Identity", "Linear", "BatchNorm", "GroupNorm", "InstanceNorm", "LayerNorm",
    "RMSNorm", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "ALiBi", "RoPE", "SinusoidalPositionalEncoding", "QQLinear", "QuantizedEmbedding",
    "QuantizedLinear", "quantize", "GRU", "LSTM", "RNN", "MultiHeadAttention", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer", "Upsample",
]
