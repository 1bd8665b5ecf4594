"""Quantized layers and ``quantize``, mirroring python/mlx/nn/layers/quantized.py.

A quantized layer stores its weight as ``mx.quantize`` returns it — packed
integers ``weight``, per-group ``scales`` and (``"affine"`` mode) ``biases``
— and multiplies with ``mx.quantized_matmul`` (or gathers rows and
``mx.dequantize``\\s them). The packed arrays are frozen: they are not
trained. ``quantize(model)`` swaps every leaf module that has a
``to_quantized`` method (``Linear``, ``Embedding``) for its quantized twin.

>>> import mlxref.core as mx
>>> import mlxref.nn as nn
>>> model = nn.Sequential(nn.Linear(64, 8), nn.ReLU())
>>> nn.quantize(model, group_size=32, bits=4)
>>> model.layers[0]
QuantizedLinear(input_dims=64, output_dims=8, bias=True, group_size=32, bits=4, mode=affine)
"""

import math

from ... import core as mx
from ...utils import tree_map_with_path
from .base import Module

__all__ = ["quantize", "QuantizedLinear", "QuantizedEmbedding", "QQLinear"]

# (group_size, bits) when not given, per mode.
_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode, group_size, bits):
    if mode not in _MODE_DEFAULTS:
        raise ValueError(
            f"Invalid quantization mode '{mode}'. "
            f"Valid modes are: {', '.join(_MODE_DEFAULTS)}."
        )
    default_group_size, default_bits = _MODE_DEFAULTS[mode]
    return group_size or default_group_size, bits or default_bits


def _store_quantized(layer, weight):
    """Set ``layer.weight``, ``layer.scales`` and ``layer.biases`` (None without) from ``weight``."""
    layer.weight, layer.scales, *biases = mx.quantize(
        weight, layer.group_size, layer.bits, mode=layer.mode
    )
    layer.biases = biases[0] if biases else None


def quantize(model, group_size=None, bits=None, *, mode="affine", quantize_input=False,
             class_predicate=None):
    """Replace, in place, the leaf modules of ``model`` that ``class_predicate(path, module)``
    picks (by default those with ``to_quantized``) by ``module.to_quantized(...)``.

    The predicate may return a dict of keyword arguments for ``to_quantized``
    instead of ``True``.
    """
    class_predicate = class_predicate or (lambda _, m: hasattr(m, "to_quantized"))

    def maybe_quantize(path, m):
        choice = class_predicate(path, m)
        if not choice:
            return m
        if not hasattr(m, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(m)}")
        if isinstance(choice, bool):
            kwargs = {"group_size": group_size, "bits": bits, "mode": mode}
            if quantize_input:
                kwargs["quantize_input"] = quantize_input
            return m.to_quantized(**kwargs)
        if isinstance(choice, dict):
            kwargs = dict(choice)
            if not kwargs.get("quantize_input", True):
                kwargs.pop("quantize_input")
            return m.to_quantized(**kwargs)
        raise ValueError(
            "``class_predicate`` must return a bool"
            " or a dict of parameters to pass to ``to_quantized``"
        )

    leaves = tree_map_with_path(maybe_quantize, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)


class QuantizedEmbedding(Module):
    """``Embedding`` with a quantized table: ``y = dequantize(weight[x])``."""

    def __init__(self, num_embeddings, dims, group_size=None, bits=None, mode="affine"):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        _store_quantized(self, mx.random.normal(shape=(num_embeddings, dims),
                                                scale=math.sqrt(1 / dims)))
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def _quantization(self):
        return {"group_size": self.group_size, "bits": self.bits, "mode": self.mode}

    def __call__(self, x):
        biases = self.get("biases")
        return mx.dequantize(
            self["weight"][x],
            scales=self["scales"][x],
            biases=None if biases is None else biases[x],
            **self._quantization(),
        )

    def as_linear(self, x):
        """``x @ dequantize(weight).T``, as one quantized matmul."""
        return mx.quantized_matmul(x, self["weight"], scales=self["scales"],
                                   biases=self.get("biases"), transpose=True,
                                   **self._quantization())

    def _extra_repr(self):
        return (
            f"{self.num_embeddings}, {self.dims}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_embedding(cls, embedding_layer, group_size=None, bits=None, mode="affine"):
        """The quantized copy of ``embedding_layer``'s table."""
        num_embeddings, dims = embedding_layer.weight.shape
        layer = cls(num_embeddings, dims, group_size, bits, mode=mode)
        _store_quantized(layer, embedding_layer.weight)
        return layer


class QuantizedLinear(Module):
    """``Linear`` with a quantized weight: ``y = x @ dequantize(weight).T + bias``."""

    def __init__(self, input_dims, output_dims, bias=True, group_size=None, bits=None,
                 mode="affine"):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        k = math.sqrt(1 / input_dims)
        _store_quantized(self, mx.random.uniform(low=-k, high=k,
                                                 shape=(output_dims, input_dims)))
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self):
        out_dims, packed = self.weight.shape
        return (
            f"input_dims={packed * 32 // self.bits}, output_dims={out_dims}, "
            f"bias={'bias' in self}, group_size={self.group_size}, bits={self.bits}, "
            f"mode={self.mode}"
        )

    def __call__(self, x):
        y = mx.quantized_matmul(x, self["weight"], scales=self["scales"],
                                biases=self.get("biases"), transpose=True,
                                group_size=self.group_size, bits=self.bits, mode=self.mode)
        if "bias" in self:
            y = y + self["bias"]
        return y

    @classmethod
    def from_linear(cls, linear_layer, group_size=None, bits=None, mode="affine"):
        """The quantized copy of ``linear_layer`` (its bias kept as is)."""
        output_dims, input_dims = linear_layer.weight.shape
        layer = cls(input_dims, output_dims, False, group_size, bits, mode=mode)
        _store_quantized(layer, linear_layer.weight)
        if "bias" in linear_layer:
            layer.bias = linear_layer.bias
        return layer


class QQLinear(Module):
    """A linear layer (no bias) that quantizes both the weight and the input: ``mx.qqmm``.

    In training it keeps the float weight; ``eval()`` quantizes it and
    ``train()`` dequantizes it back.
    """

    def __init__(self, input_dims, output_dims, group_size=None, bits=None, mode="nvfp4"):
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        k = math.sqrt(1 / input_dims)
        self.weight = mx.random.uniform(low=-k, high=k, shape=(output_dims, input_dims))
        self._quantized = False

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape
        if self.weight.dtype == mx.uint32:
            in_dims = in_dims * 32 // self.bits
        return (
            f"input_dims={in_dims}, output_dims={out_dims}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    def quantize(self):
        """Replace the float weight by its quantized form (idempotent)."""
        if not self._quantized:
            self.weight, self.scales = mx.quantize(self.weight, self.group_size, self.bits,
                                                   mode=self.mode)
            self._quantized = True

    def dequantize(self):
        """Replace the quantized weight by its float form (idempotent)."""
        if self._quantized:
            self.weight = mx.dequantize(self.weight, scales=self.scales,
                                        group_size=self.group_size, bits=self.bits,
                                        mode=self.mode)
            del self.scales
            self._quantized = False

    def _set_training_mode(self, mode):
        super()._set_training_mode(mode)
        if self._training:
            self.dequantize()
        else:
            self.quantize()

    @classmethod
    def from_linear(cls, linear_layer, group_size=None, bits=None, mode="nvfp4"):
        """A ``QQLinear`` holding ``linear_layer``'s float weight (which must have no bias)."""
        output_dims, input_dims = linear_layer.weight.shape
        if linear_layer.get("bias") is not None:
            raise NotImplementedError("QQLinear does not support bias yet.")
        layer = cls(input_dims, output_dims, group_size, bits, mode=mode)
        layer.weight = linear_layer.weight
        layer.train(linear_layer.training)
        return layer

    def __call__(self, x):
        return mx.qqmm(x, self["weight"], scales=self.get("scales"),
                       group_size=self.group_size, bits=self.bits, mode=self.mode)
