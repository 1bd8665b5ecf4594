"""Normalisation layers, mirroring python/mlx/nn/layers/normalization.py.

Every one computes ``(x - mean) / sqrt(var + eps)`` over some axes, then an
optional affine ``weight * x + bias`` per feature (the last axis, MLX's
channels-last layout). They differ in the axes:

- ``LayerNorm``: the last axis (``mx.fast.layer_norm``); ``RMSNorm`` skips the mean.
- ``GroupNorm``: each group of features together with all positions.
- ``InstanceNorm``: each feature over the positions (axes 1 .. ndim-2).
- ``BatchNorm``: each feature over the batch and the positions; it keeps
  running averages of mean and variance in training and uses them in eval.

>>> import mlxref.core as mx
>>> bn = BatchNorm(2)
>>> _ = bn(mx.array([[0.0, 1.0], [2.0, 5.0]]))
>>> bn.running_mean, bn.running_var  # 0.9 * old + 0.1 * (mean, unbiased var)
(array([0.1, 0.3], dtype=float32), array([1.1, 1.7], dtype=float32))
"""

from ... import core as mx
from .base import Module

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm", "BatchNorm"]


def _check_eps(name, eps):
    if eps <= 0.0:
        raise ValueError(f"[{name}] 'eps' must be positive but got {eps}.")


def _normalize(x, axes, eps):
    """``(x - mean) / sqrt(var + eps)``, the statistics taken over ``axes``."""
    mean = mx.mean(x, axis=axes, keepdims=True)
    var = mx.var(x, axis=axes, keepdims=True)
    return (x - mean) * mx.rsqrt(var + eps)


def _normalize_float32(x, axes, eps):
    """``_normalize`` with float32 statistics, as MLX's ``mx.fast.layer_norm``: the
    variance of float16 entries of size 512 already overflows float16."""
    return _normalize(x.astype(mx.float32), axes, eps).astype(x.dtype)


def _affine(module, x):
    return module.weight * x + module.bias if "weight" in module else x


class LayerNorm(Module):
    """Normalise over the last axis ``dims``, then ``weight * x + bias`` if ``affine``."""

    def __init__(self, dims, eps=1e-5, affine=True, bias=True):
        super().__init__()
        _check_eps("LayerNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        return mx.fast.layer_norm(x, self.get("weight"), self.get("bias"), self.eps)


class RMSNorm(Module):
    """``weight * x / sqrt(mean(x ** 2) + eps)`` over the last axis."""

    def __init__(self, dims, eps=1e-5):
        super().__init__()
        _check_eps("RMSNorm", eps)
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self):
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x):
        return mx.fast.rms_norm(x, self["weight"], self.eps)


class GroupNorm(Module):
    """Split the ``dims`` features into ``num_groups`` groups; normalise each group
    over its features and all positions of one example.

    MLX's default groups interleave features (feature ``f`` is in group
    ``f % num_groups``); ``pytorch_compatible=True`` takes consecutive
    features instead (group ``f // (dims / num_groups)``), as PyTorch does.
    """

    def __init__(self, num_groups, dims, eps=1e-5, affine=True, pytorch_compatible=False):
        super().__init__()
        _check_eps("GroupNorm", eps)
        if num_groups <= 0:
            raise ValueError(f"The number of groups ({num_groups}) must be a positive integer.")
        if dims <= 0:
            raise ValueError(f"The number of features ({dims}) must be a positive integer.")
        if dims % num_groups != 0:
            raise ValueError(
                f"The number of features ({dims}) must be evenly divisible"
                f" by the number of groups ({num_groups})."
            )
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self):
        return (
            f"{self.num_groups}, {self.dims}, eps={self.eps}, "
            f"affine={'weight' in self}, pytorch_compatible={self.pytorch_compatible}"
        )

    def __call__(self, x):
        batch, *rest, dims = x.shape
        groups = self.num_groups
        if self.pytorch_compatible:
            # (batch, positions, groups, group_size): a group is consecutive features.
            x = x.reshape(batch, -1, groups, dims // groups)
            x = _normalize_float32(x, (1, 3), self.eps)
        else:
            # (batch, positions * group_size, groups): feature f lands in group f % groups.
            x = x.reshape(batch, -1, groups)
            x = _normalize(x, 1, self.eps)
        return _affine(self, x.reshape(batch, *rest, dims))


class InstanceNorm(Module):
    """Normalise each feature of each example over its positions (axes 1 .. ndim-2)."""

    def __init__(self, dims, eps=1e-5, affine=False):
        super().__init__()
        _check_eps("InstanceNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self):
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x):
        if x.ndim < 3:
            raise ValueError(
                f"InstanceNorm expects inputs with at least 3 dimensions"
                f" (N, ..., C) but the input has {x.ndim} dimensions."
            )
        return _affine(self, _normalize_float32(x, tuple(range(1, x.ndim - 1)), self.eps))


class BatchNorm(Module):
    """Normalise each feature over the batch and positions (every axis but the last).

    In training the batch's statistics are used and, with
    ``track_running_stats``, ``running = (1 - momentum) * running + momentum *
    batch`` (the variance unbiased); in eval the running ones are used. The
    running statistics are arrays of the module but always frozen.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True):
        super().__init__()
        _check_eps("BatchNorm", eps)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def unfreeze(self, *args, **kwargs):
        """``Module.unfreeze``, but the running statistics stay frozen."""
        super().unfreeze(*args, **kwargs)
        if self.track_running_stats:
            self.freeze(keys=["running_mean", "running_var"], recurse=False)
        return self

    def _extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={'weight' in self}, track_running_stats={self.track_running_stats}"
        )

    def __call__(self, x):
        if x.ndim < 2 or x.ndim > 4:
            raise ValueError(
                f"Expected input tensor to have 2, 3 or 4 dimensions, but got {x.ndim}"
            )
        axes = tuple(range(x.ndim - 1))
        if self.training and x.size // x.shape[-1] == 1:
            raise ValueError("BatchNorm training requires more than one value per channel.")
        mean, var = mx.mean(x, axis=axes), mx.var(x, axis=axes)
        if self.training and self.track_running_stats:
            m = self.momentum
            unbiased = mx.var(x, axis=axes, ddof=1)
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * unbiased
        elif self.track_running_stats:
            mean, var = self.running_mean, self.running_var
        return _affine(self, (x - mean) * mx.rsqrt(var + self.eps))
