"""Multi-head attention and the Transformer, mirroring python/mlx/nn/layers/transformer.py.

``MultiHeadAttention`` projects queries, keys and values, splits the
features into heads and calls ``mx.fast.scaled_dot_product_attention``
(``softmax(q k^T / sqrt(d) + mask) v``). The encoder and decoder layers
are residual blocks ``x + sublayer(norm(x))`` (``norm_first``, the default)
or ``norm(x + sublayer(x))``.
"""

import math

from ... import core as mx
from ..utils import checkpoint as checkpoint_module
from .activations import relu
from .base import Module
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm

__all__ = ["MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


class MultiHeadAttention(Module):
    """``out_proj(concat_h softmax(q_h k_h^T / sqrt(d_h) + mask) v_h)`` with ``q = query_proj(queries)``,
    ``k = key_proj(keys)``, ``v = value_proj(values)`` split into ``num_heads`` heads."""

    def __init__(self, dims, num_heads, query_input_dims=None, key_input_dims=None,
                 value_input_dims=None, value_dims=None, value_output_dims=None, bias=False):
        super().__init__()
        if dims % num_heads != 0:
            raise ValueError(
                "The input feature dimensions should be divisible by the "
                f"number of heads ({dims} % {num_heads}) != 0"
            )
        query_input_dims = query_input_dims or dims
        key_input_dims = key_input_dims or dims
        value_input_dims = value_input_dims or key_input_dims
        value_dims = value_dims or dims
        value_output_dims = value_output_dims or dims
        self.num_heads = num_heads
        self.query_proj = Linear(query_input_dims, dims, bias=bias)
        self.key_proj = Linear(key_input_dims, dims, bias=bias)
        self.value_proj = Linear(value_input_dims, value_dims, bias=bias)
        self.out_proj = Linear(value_dims, value_output_dims, bias=bias)

    def _heads(self, x):
        """``(B, L, heads * d)`` -> ``(B, heads, L, d)``."""
        return mx.unflatten(x, -1, (self.num_heads, -1)).transpose(0, 2, 1, 3)

    def __call__(self, queries, keys, values, mask=None):
        queries = self._heads(self.query_proj(queries))
        keys = self._heads(self.key_proj(keys))
        values = self._heads(self.value_proj(values))
        scale = math.sqrt(1 / queries.shape[-1])
        out = mx.fast.scaled_dot_product_attention(queries, keys, values, scale=scale,
                                                   mask=mask)
        return self.out_proj(out.transpose(0, 2, 1, 3).flatten(-2, -1))

    @staticmethod
    def create_additive_causal_mask(N, dtype=mx.float32):
        """``(N, N)``: 0 where key ``j <= i`` (query), the dtype's lowest value where ``j > i``."""
        indices = mx.arange(N)
        future = indices[:, None] < indices[None]
        return future.astype(dtype) * mx.finfo(dtype).min


def _residual(x, norm, sublayer, norm_first):
    return x + sublayer(norm(x)) if norm_first else norm(x + sublayer(x))


class TransformerEncoderLayer(Module):
    """Self-attention then an MLP ``linear2(activation(linear1(x)))``, each a residual block."""

    def __init__(self, dims, num_heads, mlp_dims=None, dropout=0.0, activation=relu,
                 norm_first=True):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout2(self.activation(self.linear1(x))))

    def __call__(self, x, mask):
        x = _residual(x, self.ln1, lambda y: self.dropout1(self.attention(y, y, y, mask)),
                      self.norm_first)
        return _residual(x, self.ln2, self._mlp, self.norm_first)


class TransformerDecoderLayer(Module):
    """Self-attention, attention to ``memory``, then an MLP, each a residual block."""

    def __init__(self, dims, num_heads, mlp_dims=None, dropout=0.0, activation=relu,
                 norm_first=True):
        super().__init__()
        mlp_dims = mlp_dims or dims * 4
        self.self_attention = MultiHeadAttention(dims, num_heads)
        self.cross_attention = MultiHeadAttention(dims, num_heads)
        self.ln1 = LayerNorm(dims)
        self.ln2 = LayerNorm(dims)
        self.ln3 = LayerNorm(dims)
        self.linear1 = Linear(dims, mlp_dims)
        self.linear2 = Linear(mlp_dims, dims)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation
        self.norm_first = norm_first

    def _mlp(self, x):
        return self.linear2(self.dropout3(self.activation(self.linear1(x))))

    def __call__(self, x, memory, x_mask, memory_mask):
        x = _residual(x, self.ln1,
                      lambda y: self.dropout1(self.self_attention(y, y, y, x_mask)),
                      self.norm_first)
        x = _residual(x, self.ln2,
                      lambda y: self.dropout2(self.cross_attention(y, memory, memory,
                                                                   memory_mask)),
                      self.norm_first)
        return _residual(x, self.ln3, self._mlp, self.norm_first)


class TransformerEncoder(Module):
    """``num_layers`` encoder layers, then a ``LayerNorm``; ``checkpoint`` recomputes each
    layer's activations in the backward pass instead of keeping them."""

    def __init__(self, num_layers, dims, num_heads, mlp_dims=None, dropout=0.0,
                 activation=relu, norm_first=True, checkpoint=False):
        super().__init__()
        self.layers = [
            TransformerEncoderLayer(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x, mask):
        for layer in self.layers:
            x = (checkpoint_module(layer) if self.checkpoint else layer)(x, mask)
        return self.ln(x)


class TransformerDecoder(Module):
    """``num_layers`` decoder layers, then a ``LayerNorm``."""

    def __init__(self, num_layers, dims, num_heads, mlp_dims=None, dropout=0.0,
                 activation=relu, norm_first=True, checkpoint=False):
        super().__init__()
        self.layers = [
            TransformerDecoderLayer(dims, num_heads, mlp_dims, dropout, activation, norm_first)
            for _ in range(num_layers)
        ]
        self.ln = LayerNorm(dims)
        self.checkpoint = checkpoint

    def __call__(self, x, memory, x_mask, memory_mask):
        for layer in self.layers:
            call = checkpoint_module(layer) if self.checkpoint else layer
            x = call(x, memory, x_mask, memory_mask)
        return self.ln(x)


class Transformer(Module):
    """An encoder over ``src`` and a decoder over ``tgt`` attending to the encoder's output;
    ``custom_encoder``/``custom_decoder`` replace either."""

    def __init__(self, dims=512, num_heads=8, num_encoder_layers=6, num_decoder_layers=6,
                 mlp_dims=None, dropout=0.0, activation=relu, custom_encoder=None,
                 custom_decoder=None, norm_first=True, checkpoint=False):
        super().__init__()
        settings = (dims, num_heads, mlp_dims, dropout, activation, norm_first, checkpoint)
        # ``is None``, not ``or``: a module without parameters is an empty dict, falsy.
        if custom_encoder is None:
            custom_encoder = TransformerEncoder(num_encoder_layers, *settings)
        if custom_decoder is None:
            custom_decoder = TransformerDecoder(num_decoder_layers, *settings)
        self.encoder = custom_encoder
        self.decoder = custom_decoder

    def __call__(self, src, tgt, src_mask, tgt_mask, memory_mask):
        memory = self.encoder(src, src_mask)
        return self.decoder(tgt, memory, tgt_mask, memory_mask)
