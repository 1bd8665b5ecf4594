"""Dropout layers, mirroring python/mlx/nn/layers/dropout.py.

In training each kept entry is scaled by ``1 / (1 - p)`` so that the
expected output equals the input; in eval (``model.eval()``) they return
their input. ``Dropout2d`` and ``Dropout3d`` drop whole channels: the mask
has size 1 along the 2 (or 3) spatial axes before the channels.
"""

from ... import core as mx
from .base import Module

__all__ = ["Dropout", "Dropout2d", "Dropout3d"]


class Dropout(Module):
    """Zero each entry with probability ``p`` in training; scale the rest by ``1/(1-p)``."""

    _spatial_axes = 0  # how many axes before the channels share one mask entry
    _ndims = None  # the numbers of dimensions the input may have (None: any)

    def __init__(self, p=0.5):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self):
        return f"p={1 - self._p_1}"

    def __call__(self, x):
        if self._ndims is not None and x.ndim not in self._ndims:
            raise ValueError(
                f"Received input with {x.ndim} dimensions. "
                f"Expected {self._ndims[0]} or {self._ndims[1]} dimensions."
            )
        if self._p_1 == 1 or not self.training:
            return x
        mask_shape = list(x.shape)
        for axis in range(2, 2 + self._spatial_axes):
            mask_shape[-axis] = 1
        mask = mx.random.bernoulli(p=self._p_1, shape=mask_shape)
        return (mask * x) * (1 / self._p_1)


class Dropout2d(Dropout):
    """``Dropout`` of whole channels of ``(N, H, W, C)`` or ``(H, W, C)`` inputs."""

    _spatial_axes = 2
    _ndims = (3, 4)


class Dropout3d(Dropout):
    """``Dropout`` of whole channels of ``(N, D, H, W, C)`` or ``(D, H, W, C)`` inputs."""

    _spatial_axes = 3
    _ndims = (4, 5)
