"""``Sequential``, mirroring python/mlx/nn/layers/containers.py."""

from .base import Module

__all__ = ["Sequential"]


class Sequential(Module):
    """Calls its modules (or plain callables) in order; they live in ``self.layers``."""

    def __init__(self, *modules):
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
