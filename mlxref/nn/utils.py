"""Transforms over a model's parameters, mirroring mlx.nn.utils.

Read alongside: python/mlx/nn/utils.py. The model is not a function argument,
so both transforms differentiate a wrapper that takes the trainable
parameters, puts them into the model with ``model.update`` (the tracers of
the transform, while it runs) and then calls ``fn``. The model keeps those
arrays afterwards, as in MLX; outside the transform they are ordinary arrays.
"""

import functools

from .. import core as mx

__all__ = ["value_and_grad", "checkpoint"]


def value_and_grad(model, fn):
    """Return ``f(*args, **kwargs) -> (fn(*args, **kwargs), grads)``.

    ``grads`` has the structure of ``model.trainable_parameters()``: frozen
    parameters get no gradient, and ``fn`` may return ``(loss, aux...)`` as
    with ``mx.value_and_grad``.

    >>> import mlxref.core as mx
    >>> import mlxref.nn as nn
    >>> layer = nn.Linear(2, 1)
    >>> w, b = mx.array([[1.0, 2.0]]), mx.array([0.5])
    >>> layer.update({"weight": w, "bias": b})  # doctest: +ELLIPSIS
    Linear(...)
    >>> loss, grads = nn.value_and_grad(layer, lambda x: layer(x).sum())(mx.ones((3, 2)))
    >>> loss, grads["weight"], grads["bias"]
    (array(10.5, dtype=float32), array([[3, 3]], dtype=float32), array([3], dtype=float32))
    """

    def with_params(params, *args, **kwargs):
        model.update(params)
        return fn(*args, **kwargs)

    transformed = mx.value_and_grad(with_params)

    @functools.wraps(fn)
    def value_and_grads(*args, **kwargs):
        return transformed(model.trainable_parameters(), *args, **kwargs)

    return value_and_grads


def checkpoint(module, fn=None):
    """``mx.checkpoint`` with respect to ``module``'s trainable parameters and ``fn``'s inputs.

    ``fn`` defaults to the module itself (looked up at call time, so a
    replaced ``__call__`` is honoured).
    """
    if fn is None:
        fn = module

    def with_params(params, *args, **kwargs):
        module.update(params)
        return fn(*args, **kwargs)

    checkpointed = mx.checkpoint(with_params)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return checkpointed(module.trainable_parameters(), *args, **kwargs)

    return call
