"""Max and average pooling, mirroring python/mlx/nn/layers/pooling.py.

A pooling layer pads the spatial axes (with ``-inf`` for max, 0 for
average), views the input as windows with ``mx.as_strided`` — shape ``(N,
*out_positions, *kernel, C)`` — and reduces the kernel axes with ``mx.max``
or ``mx.mean``. The window view costs no copy, and its vjp scatters each
window's cotangent back into the input.

>>> import mlxref.core as mx
>>> MaxPool1d(kernel_size=2)(mx.array([[[1.0], [3.0], [2.0], [0.0]]])).reshape(-1)
array([3, 2], dtype=float32)
"""

import math

from ... import core as mx
from .base import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"]


def sliding_windows(x, window_shape, window_strides):
    """``x`` ``(N, *spatial, C)`` as windows ``(N, *positions, *window_shape, C)``.

    ``windows[n, p..., k..., c] = x[n, p * stride + k ..., c]``.
    """
    if x.ndim < 3:
        raise ValueError(
            f"To extract sliding windows at least 1 spatial dimension "
            f"(3 total) is needed but the input only has {x.ndim} dimensions."
        )
    spatial = x.shape[1:-1]
    if not (len(spatial) == len(window_shape) == len(window_strides)):
        raise ValueError(
            f"To extract sliding windows the window shapes and strides must have "
            f"the same number of spatial dimensions as the signal but the signal "
            f"has {len(spatial)} dims and the window shape has {len(window_shape)} "
            f"and strides have {len(window_strides)}."
        )
    # Row-major element strides of x: stride of axis i = product of the sizes after it.
    strides = [math.prod(x.shape[i + 1:]) for i in range(x.ndim)]
    positions = [(n - w) // s + 1 for n, w, s in zip(spatial, window_shape, window_strides)]
    shape = [x.shape[0], *positions, *window_shape, x.shape[-1]]
    step = [a * s for a, s in zip(strides[1:-1], window_strides)]
    return mx.as_strided(x, shape, [strides[0], *step, *strides[1:-1], strides[-1]])


def _per_axis(value, n, name, owner):
    message = (f"[{owner}] '{name}' must be an integer or a tuple containing "
               f"{n} integer{'s' if n > 1 else ''}")
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(message)
        return list(value)
    if not isinstance(value, int):
        raise ValueError(message)
    return [value] * n


class _Pool(Module):
    """Pad, view as windows, reduce the window axes; subclasses set the three class attributes."""

    _ndim = 1
    _reduce = staticmethod(mx.max)
    _padding_value = -float("inf")

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        owner, n = type(self).__name__, self._ndim
        kernel = _per_axis(kernel_size, n, "kernel_size", owner)
        stride = kernel if stride is None else _per_axis(stride, n, "stride", owner)
        padding = _per_axis(padding, n, "padding", owner)
        for name, values in (("kernel_size", kernel), ("stride", stride)):
            if any(v <= 0 for v in values):
                raise ValueError(
                    f"[{owner}] '{name}' must be positive but got {tuple(values)}."
                )
        if any(p < 0 for p in padding):
            raise ValueError(
                f"[{owner}] 'padding' must be non-negative but got {tuple(padding)}."
            )
        self._kernel_size, self._stride, self._padding = kernel, stride, padding

    def _extra_repr(self):
        return (f"kernel_size={tuple(self._kernel_size)}, stride={tuple(self._stride)}, "
                f"padding={tuple(self._padding)}")

    def __call__(self, x):
        if any(p > 0 for p in self._padding):
            pads = [(0, 0), *((p, p) for p in self._padding), (0, 0)]
            x = mx.pad(x, pads, constant_values=self._padding_value)
        windows = sliding_windows(x, self._kernel_size, self._stride)
        window_axes = tuple(range(-self._ndim - 1, -1))
        return self._reduce(windows, window_axes)


class _MaxPool(_Pool):
    _reduce = staticmethod(mx.max)
    _padding_value = -float("inf")


class _AvgPool(_Pool):
    _reduce = staticmethod(mx.mean)
    _padding_value = 0


class MaxPool1d(_MaxPool):
    """``y[n, t, c] = max_k x[n, t * stride + k - padding, c]`` over ``(N, L, C)``."""

    _ndim = 1


class MaxPool2d(_MaxPool):
    """``MaxPool1d`` over the two spatial axes of ``(N, H, W, C)``."""

    _ndim = 2


class MaxPool3d(_MaxPool):
    """``MaxPool1d`` over the three spatial axes of ``(N, D, H, W, C)``."""

    _ndim = 3


class AvgPool1d(_AvgPool):
    """``y[n, t, c] = mean_k x[n, t * stride + k - padding, c]`` (padding counts as 0)."""

    _ndim = 1


class AvgPool2d(_AvgPool):
    """``AvgPool1d`` over the two spatial axes of ``(N, H, W, C)``."""

    _ndim = 2


class AvgPool3d(_AvgPool):
    """``AvgPool1d`` over the three spatial axes of ``(N, D, H, W, C)``."""

    _ndim = 3
