"""``Embedding``, mirroring python/mlx/nn/layers/embedding.py."""

import math

from ... import core as mx
from .base import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``dims``: ``y = weight[x]``.

    The table starts normal with standard deviation ``1 / sqrt(dims)``.
    ``as_linear(x) = x @ weight.T`` reuses the table as an output projection
    (tied weights).
    """

    def __init__(self, num_embeddings, dims):
        super().__init__()
        self.weight = mx.random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x):
        return self.weight[x]

    def as_linear(self, x):
        """``x @ weight.T``: scores against every embedding."""
        return x @ self.weight.T

    def to_quantized(self, group_size=None, bits=None, mode="affine", quantize_input=False):
        """A ``QuantizedEmbedding`` holding this table quantized (see quantized.py)."""
        from .quantized import QuantizedEmbedding  # quantized.py imports this module

        if quantize_input:
            raise ValueError("Quantized input is not supported.")
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode)
