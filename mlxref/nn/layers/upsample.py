"""``Upsample``, mirroring python/mlx/nn/layers/upsample.py.

Resizes the spatial axes of ``x`` ``(N, *spatial, C)`` by ``scale_factor``
(output size ``int(scale * size)``), one axis at a time: output position
``j`` of an axis reads the input at the fractional position ``s_j`` (see
``_source_positions``) and mixes a few input positions ("taps") around it:

- ``"nearest"``: the one nearest to ``s_j``;
- ``"linear"``: ``floor(s_j)`` and ``ceil(s_j)``, weighted by distance;
- ``"cubic"``: four, weighted by the cubic convolution kernel (a = -0.75).

With ``antialias`` and a scale below 1, the linear or cubic kernel is
widened by ``1 / scale`` (a low-pass filter), its taps renormalised; the
cubic kernel then uses a = -0.5, as PyTorch.

MLX mixes all axes at once (a product of weights); mixing axis after axis
gives the same values up to rounding.
"""

import math

from ... import core as mx
from .base import Module

__all__ = ["Upsample", "upsample_nearest", "upsample_linear", "upsample_cubic"]


def _source_positions(size, scale, align_corners):
    """Where each output position samples the input, in input coordinates."""
    out = int(scale * size)
    j = mx.arange(out, dtype=mx.float32)
    if align_corners:  # first and last positions of input and output coincide
        return j * ((size - 1) / max(out - 1, 1))
    # Pixel centres: output centre j + 1/2 sits at input centre (j + 1/2) / scale.
    step = 1 / scale
    return j * step - ((out - 1) * step - size + 1) / 2


def _nearest_taps(size, scale, align_corners):
    out = int(scale * size)
    j = mx.arange(out, dtype=mx.float32)
    if out > size:
        index = ((j + 0.5) * (size / out) - 0.5).round()
    else:
        index = j * (size / out)
    return [(index.astype(mx.uint32), None)]


def _linear_taps(size, scale, align_corners):
    s = mx.clip(_source_positions(size, scale, align_corners), a_min=0, a_max=size - 1)
    left, right = mx.floor(s), mx.ceil(s)
    w = s - left
    return [(left.astype(mx.uint32), 1 - w), (right.astype(mx.uint32), w)]


def _cubic_weight(x, a):
    """The cubic convolution kernel at distance ``x >= 0`` (support 2)."""
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    outer = (((x - 5) * x + 8) * x - 4) * a
    return mx.where(x <= 1.0, inner, mx.where(x <= 2.0, outer, 0.0))


def _cubic_taps(size, scale, align_corners):
    s = _source_positions(size, scale, align_corners)
    base = mx.floor(s)
    taps = []
    for offset in (0, 1, -1, 2):
        index = base + offset
        taps.append((mx.clip(index, a_min=0, a_max=size - 1).astype(mx.uint32),
                     _cubic_weight(mx.abs(s - index), -0.75)))
    return taps


def _antialiased_taps(kernel, radius):
    """Taps of ``kernel`` widened by ``1 / scale`` when downscaling, renormalised."""

    def taps(size, scale, align_corners):
        s = _source_positions(size, scale, align_corners)
        widen = 1.0 / scale if scale < 1 else 1.0
        reach = math.ceil(radius * widen) + 1
        indices, weights = [], []
        for k in range(-reach + 1, reach):
            index = mx.floor(s) + k
            w = kernel(mx.abs(s - index) / widen)
            weights.append(mx.where((index >= 0) & (index < size), w, 0.0))
            indices.append(index)
        total = sum(weights)
        total = mx.where(total > 0, total, 1.0)
        return [(mx.clip(i, a_min=0, a_max=size - 1).astype(mx.uint32), w / total)
                for i, w in zip(indices, weights)]

    return taps


def _triangle(x):
    return mx.maximum(1.0 - x, 0.0)


_TAPS = {
    ("nearest", False): _nearest_taps,
    ("linear", False): _linear_taps,
    ("cubic", False): _cubic_taps,
    ("linear", True): _antialiased_taps(_triangle, 1.0),
    ("cubic", True): _antialiased_taps(lambda x: _cubic_weight(x, -0.5), 2.0),
}


def _resample(x, scale_factor, taps_fn, align_corners):
    dims = x.ndim - 2
    if dims != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    for i, scale in enumerate(scale_factor):
        axis = i + 1
        # Weights broadcast along the axes after ``axis``.
        trailing = (1,) * (x.ndim - axis - 1)
        parts = []
        for index, weight in taps_fn(x.shape[axis], scale, align_corners):
            part = mx.take(x, index, axis=axis)
            parts.append(part if weight is None else part * weight.reshape(-1, *trailing))
        x = sum(parts[1:], parts[0])
    return x


def _check_antialias(align_corners, antialias):
    if antialias and align_corners:
        raise ValueError(
            "[Upsample] antialias=True with align_corners=True is not "
            "supported. Use align_corners=False for antialiased interpolation."
        )


def upsample_nearest(x, scale_factor):
    """Nearest-neighbour resize; integer scales repeat each element ``scale`` times."""
    if tuple(map(int, scale_factor)) == tuple(scale_factor):
        if x.ndim - 2 != len(scale_factor):
            raise ValueError("A scale needs to be provided for each spatial dimension")
        for i, scale in enumerate(scale_factor):
            x = mx.repeat(x, int(scale), axis=i + 1)
        return x
    return _resample(x, scale_factor, _nearest_taps, False)


def upsample_linear(x, scale_factor, align_corners=False, antialias=False):
    """(Bi/tri)linear resize."""
    _check_antialias(align_corners, antialias)
    return _resample(x, scale_factor, _TAPS["linear", antialias], align_corners)


def upsample_cubic(x, scale_factor, align_corners=False, antialias=False):
    """(Bi)cubic resize."""
    _check_antialias(align_corners, antialias)
    return _resample(x, scale_factor, _TAPS["cubic", antialias], align_corners)


class Upsample(Module):
    """Resize the spatial axes by ``scale_factor`` (one number, or one per spatial axis)
    with ``mode`` ``"nearest"``, ``"linear"`` or ``"cubic"``."""

    def __init__(self, scale_factor, mode="nearest", align_corners=False, antialias=False):
        super().__init__()
        if mode not in ["nearest", "linear", "cubic"]:
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if antialias and mode == "nearest":
            raise ValueError(
                "[Upsample] Antialiasing is not supported for nearest neighbor upsampling"
            )
        if isinstance(scale_factor, (list, tuple)):
            scale_factor = tuple(map(float, scale_factor))
        else:
            scale_factor = float(scale_factor)
        _check_antialias(align_corners, antialias)
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self):
        text = (f"scale_factor={self.scale_factor}, mode={self.mode!r}, "
                f"align_corners={self.align_corners}")
        return text + (", antialias=True" if self.antialias else "")

    def __call__(self, x):
        dims = x.ndim - 2
        if dims <= 0:
            raise ValueError(
                f"[Upsample] The input should have at least 1 spatial "
                f"dimension which means it should be at least 3D but "
                f"{x.ndim}D was provided"
            )
        scale_factor = self.scale_factor
        if isinstance(scale_factor, tuple):
            if len(scale_factor) != dims:
                raise ValueError(
                    f"[Upsample] One scale per spatial dimension is required but "
                    f"scale_factor={scale_factor} and the number of spatial "
                    f"dimensions were {dims}"
                )
        else:
            scale_factor = (scale_factor,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, scale_factor)
        if self.mode == "linear":
            return upsample_linear(x, scale_factor, self.align_corners, self.antialias)
        return upsample_cubic(x, scale_factor, self.align_corners, self.antialias)
