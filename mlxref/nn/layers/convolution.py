"""Convolutions and transposed convolutions, mirroring python/mlx/nn/layers/convolution.py
and convolution_transpose.py.

Channels last, as everywhere in MLX: inputs ``(N, *spatial, C_in)``, weights
``(C_out, *kernel, C_in / groups)``. The layers hold the weight (uniform in
``[-k, k)``, ``k = 1 / sqrt(C_in * prod(kernel))``) and a zero bias and call
``mx.conv1d/2d/3d`` or ``mx.conv_transpose1d/2d/3d`` (mlxref/core/ops).
"""

import math

from ... import core as mx
from .base import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]


def _per_axis(value, ndim):
    return (value,) * ndim if isinstance(value, int) else tuple(value)


class _Convolution(Module):
    """What every convolution layer shares; subclasses set ``_ndim`` and ``_op``."""

    _ndim = 1
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, output_padding=0):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError(
                f"The number of input channels ({in_channels}) must be "
                f"divisible by the number of groups ({groups})"
            )
        n = self._ndim
        kernel = _per_axis(kernel_size, n)
        k = math.sqrt(1 / (in_channels * math.prod(kernel)))
        self.weight = mx.random.uniform(
            low=-k, high=k, shape=(out_channels, *kernel, in_channels // groups)
        )
        if bias:
            self.bias = mx.zeros((out_channels,))
        # As MLX: ints stay ints in 1-D, become tuples from 2-D on; dilation stays as given.
        tup = (lambda v: v) if n == 1 else (lambda v: _per_axis(v, n))
        self.stride, self.padding = tup(stride), tup(padding)
        self.dilation = dilation
        self.groups = groups
        self.output_padding = tup(output_padding)

    def _extra_repr(self):
        kernel = self.weight.shape[1] if self._ndim == 1 else self.weight.shape[1:1 + self._ndim]
        text = (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={kernel}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, "
        )
        if self._transposed:
            text += f"output_padding={self.output_padding}, "
        elif self._ndim < 3:
            text += f"groups={self.groups}, "
        return text + f"bias={'bias' in self}"

    def __call__(self, x):
        if self._transposed:
            y = self._op(x, self.weight, self.stride, self.padding, self.dilation,
                         self.output_padding, self.groups)
        else:
            y = self._op(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        if "bias" in self:
            y = y + self.bias
        return y


class Conv1d(_Convolution):
    """``y[n, t, o] = b[o] + sum_{k, c} x[n, t * stride + k * dilation - padding, c] W[o, k, c]``."""

    _ndim = 1
    _op = staticmethod(mx.conv1d)


class Conv2d(_Convolution):
    """``Conv1d``'s sum over two spatial axes: inputs ``(N, H, W, C)``."""

    _ndim = 2
    _op = staticmethod(mx.conv2d)


class Conv3d(_Convolution):
    """``Conv1d``'s sum over three spatial axes: inputs ``(N, D, H, W, C)`` (no groups)."""

    _ndim = 3
    _op = staticmethod(mx.conv3d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         bias=bias)


class _ConvolutionTranspose(_Convolution):
    """The adjoint of a convolution: each input position scatters ``W`` into the output."""

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, output_padding=0, bias=True):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         bias=bias, output_padding=output_padding)


class ConvTranspose1d(_ConvolutionTranspose):
    """The transpose (the vjp with respect to the input) of ``Conv1d``, as a layer."""

    _ndim = 1
    _op = staticmethod(mx.conv_transpose1d)


class ConvTranspose2d(_ConvolutionTranspose):
    """The transpose of ``Conv2d``, as a layer."""

    _ndim = 2
    _op = staticmethod(mx.conv_transpose2d)


class ConvTranspose3d(_ConvolutionTranspose):
    """The transpose of ``Conv3d``, as a layer."""

    _ndim = 3
    _op = staticmethod(mx.conv_transpose3d)
