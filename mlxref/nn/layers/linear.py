"""``Identity``, ``Linear`` and ``Bilinear``, mirroring python/mlx/nn/layers/linear.py.

Read next: quantized.py (``to_quantized`` turns a ``Linear`` into a
``QuantizedLinear``) and embedding.py.
"""

import math

from ... import core as mx
from .base import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input; any constructor arguments are ignored."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def __call__(self, x):
        return x


class Linear(Module):
    """``y = x @ W.T + b``, with ``W`` of shape ``(output_dims, input_dims)``.

    ``W`` and ``b`` start uniform in ``[-k, k)``, ``k = 1 / sqrt(input_dims)``,
    drawn from ``mlxref.core.random`` (weight first, then bias).

    >>> import mlxref.core as mx
    >>> layer = Linear(3, 2)
    >>> layer.weight.shape, layer.bias.shape, layer(mx.ones((5, 3))).shape
    ((2, 3), (2,), (5, 2))
    >>> sorted(Linear(3, 2, bias=False).parameters())
    ['weight']
    """

    def __init__(self, input_dims, output_dims, bias=True):
        super().__init__()
        k = math.sqrt(1.0 / input_dims)
        self.weight = mx.random.uniform(low=-k, high=k, shape=(output_dims, input_dims))
        if bias:
            self.bias = mx.random.uniform(low=-k, high=k, shape=(output_dims,))

    def _extra_repr(self):
        return (
            f"input_dims={self.weight.shape[1]}, output_dims={self.weight.shape[0]}, "
            f"bias={'bias' in self}"
        )

    def __call__(self, x):
        # MLX fuses this into ``addmm(bias, x, W.T)``; the bits agree (addmm
        # rounds its product before adding, as MLX's gemm), and two nodes
        # draw the formula.
        y = x @ self["weight"].T
        if "bias" in self:
            y = y + self["bias"]
        return y

    def to_quantized(self, group_size=None, bits=None, mode="affine", quantize_input=False):
        """A ``QuantizedLinear`` holding this layer's weight quantized, or with
        ``quantize_input`` a ``QQLinear`` (see quantized.py)."""
        from .quantized import QQLinear, QuantizedLinear  # quantized.py imports this module

        if quantize_input:
            if mode not in ["nvfp4", "mxfp8"]:
                raise ValueError(
                    "Quantized activations are only supported for 'nvfp4' and 'mxfp8' "
                    f"modes, got {mode}."
                )
            return QQLinear.from_linear(self, group_size, bits, mode)
        return QuantizedLinear.from_linear(self, group_size, bits, mode)


class Bilinear(Module):
    """``y[o] = x1 @ W[o] @ x2 + b[o]`` with ``W`` of shape ``(output_dims, input2_dims,
    input1_dims)``: one bilinear form per output, so ``y[o] = sum_ij x2_i W[o,i,j] x1_j``.

    Initialised like ``Linear`` with ``k = 1 / sqrt(input1_dims)``.
    """

    def __init__(self, input1_dims, input2_dims, output_dims, bias=True):
        super().__init__()
        k = math.sqrt(1.0 / input1_dims)
        self.weight = mx.random.uniform(
            low=-k, high=k, shape=(output_dims, input2_dims, input1_dims)
        )
        if bias:
            self.bias = mx.random.uniform(low=-k, high=k, shape=(output_dims,))

    def _extra_repr(self):
        out, in2, in1 = self.weight.shape
        return (
            f"input1_dims={in1}, input2_dims={in2}, output_dims={out}, bias={'bias' in self}"
        )

    def __call__(self, x1, x2):
        out, in2, in1 = self.weight.shape
        batch = x1.shape[:-1]
        # (n, in1) @ (in1, out*in2) -> (n, out, in2), then contract with x2 over in2.
        x1w = (x1.reshape(-1, in1) @ self.weight.reshape(out * in2, in1).T).reshape(-1, out, in2)
        y = (x1w @ x2.reshape(-1, in2, 1)).reshape(*batch, out)
        if "bias" in self:
            y = y + self.bias
        return y
