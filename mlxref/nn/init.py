"""Parameter initializers, mirroring python/mlx/nn/init.py.

Each function takes its settings and returns an ``initializer(a)`` that
returns a new array shaped like ``a`` (``a`` only lends its shape), drawn
from ``mlxref.core.random``. The Glorot and He initializers scale by the
fans of a weight ``(out, *receptive_field, in)``: ``fan_in = in *
receptive_field``, ``fan_out = out * receptive_field``.

>>> import mlxref.core as mx
>>> constant(0.5)(mx.zeros((2,)))
array([0.5, 0.5], dtype=float32)
>>> he_uniform()(mx.zeros((4, 3, 3, 2))).shape  # limit sqrt(3 / (2 * 9))
(4, 3, 3, 2)
"""

import math

from .. import core as mx

__all__ = ["constant", "normal", "uniform", "identity", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "sparse", "orthogonal"]


def constant(value, dtype=mx.float32):
    """Every entry ``value``."""

    def initializer(a):
        return mx.full(a.shape, value, dtype=dtype)

    return initializer


def normal(mean=0.0, std=1.0, dtype=mx.float32):
    """Entries drawn from ``N(mean, std^2)``."""

    def initializer(a):
        return mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)

    return initializer


def uniform(low=0.0, high=1.0, dtype=mx.float32):
    """Entries drawn uniformly from ``[low, high)``."""

    def initializer(a):
        return mx.random.uniform(low, high, a.shape, dtype=dtype)

    return initializer


def identity(dtype=mx.float32):
    """The identity matrix; ``a`` must be square."""

    def initializer(a):
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(f"The input array must be a square matrix but got shape {a.shape}.")
        return mx.eye(n=a.shape[0], dtype=dtype)

    return initializer


def _fans(a):
    """``(fan_in, fan_out)`` of a weight shaped ``(out, *receptive_field, in)``."""
    if a.ndim < 2:
        raise ValueError(
            "Glorot / He initialization requires at least 2 dimensional input"
            f" but input with {a.ndim} dimensions."
        )
    receptive_field = math.prod(a.shape[1:-1])
    return a.shape[-1] * receptive_field, a.shape[0] * receptive_field


def _fan(a, mode):
    fan_in, fan_out = _fans(a)
    if mode == "fan_in":
        return fan_in
    if mode == "fan_out":
        return fan_out
    raise ValueError(f"Invalid mode: {mode}. Valid modes are: fan_in, fan_out")


def glorot_normal(dtype=mx.float32):
    """``initializer(a, gain=1.0)``: ``N(0, std^2)`` with ``std = gain sqrt(2 / (fan_in + fan_out))``."""

    def initializer(a, gain=1.0):
        fan_in, fan_out = _fans(a)
        std = gain * math.sqrt(2.0 / (fan_in + fan_out))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def glorot_uniform(dtype=mx.float32):
    """``initializer(a, gain=1.0)``: uniform in ``[-l, l)``, ``l = gain sqrt(6 / (fan_in + fan_out))``
    (the same variance as ``glorot_normal``)."""

    def initializer(a, gain=1.0):
        fan_in, fan_out = _fans(a)
        limit = gain * math.sqrt(6.0 / (fan_in + fan_out))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def he_normal(dtype=mx.float32):
    """``initializer(a, mode="fan_in", gain=1.0)``: ``N(0, std^2)``, ``std = gain / sqrt(fan)``."""

    def initializer(a, mode="fan_in", gain=1.0):
        std = gain / math.sqrt(_fan(a, mode))
        return mx.random.normal(shape=a.shape, scale=std, dtype=dtype)

    return initializer


def he_uniform(dtype=mx.float32):
    """``initializer(a, mode="fan_in", gain=1.0)``: uniform in ``[-l, l)``,
    ``l = gain sqrt(3 / fan)`` (the same variance as ``he_normal``)."""

    def initializer(a, mode="fan_in", gain=1.0):
        limit = gain * math.sqrt(3.0 / _fan(a, mode))
        return mx.random.uniform(-limit, limit, a.shape, dtype=dtype)

    return initializer


def sparse(sparsity, mean=0.0, std=1.0, dtype=mx.float32):
    """``N(mean, std^2)`` entries, with ``ceil(sparsity * columns)`` of each row set to 0
    (the columns chosen at random)."""

    def initializer(a):
        if a.ndim != 2:
            raise ValueError("Only tensors with 2 dimensions are supported")
        rows, cols = a.shape
        num_zeros = int(math.ceil(sparsity * cols))
        # A random permutation of the columns in each row; its first num_zeros are zeroed.
        order = mx.argsort(mx.random.uniform(shape=a.shape), axis=1)
        out = mx.random.normal(shape=a.shape, scale=std, loc=mean, dtype=dtype)
        out[mx.arange(rows).reshape(rows, 1), order[:, :num_zeros]] = 0
        return out

    return initializer


def orthogonal(gain=1.0, dtype=mx.float32):
    """``gain`` times the first rows and columns of a random orthogonal ``n x n`` matrix,
    ``n = max(rows, cols)``: the ``Q`` of a normal matrix's QR, its columns' signs
    fixed by ``R``'s diagonal so that ``Q`` is uniformly (Haar) distributed."""

    def initializer(a):
        if a.ndim != 2:
            raise ValueError(
                f"Orthogonal initialization requires a 2D array but got a {a.ndim}D array."
            )
        rows, cols = a.shape
        n = max(rows, cols)
        q, r = mx.linalg.qr(mx.random.normal(shape=(n, n)), stream=mx.cpu)
        q = q * mx.sign(mx.diag(r))
        return (q[:rows, :cols] * gain).astype(dtype)

    return initializer
