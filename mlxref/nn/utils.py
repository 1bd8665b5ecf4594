"""Transforms over a model's parameters, and gradients across processes: mlx.nn.utils.

Read alongside: python/mlx/nn/utils.py. The model is not a function argument,
so both transforms differentiate a wrapper that takes the trainable
parameters, puts them into the model with ``model.update`` (the tracers of
the transform, while it runs) and then calls ``fn``. The model keeps those
arrays afterwards, as in MLX; outside the transform they are ordinary arrays.

For training on several processes, ``average_gradients`` averages a tree of
gradients over a ``mx.distributed`` group (data parallelism: every rank has
the whole model and its own batch), and ``clip_grad_norm_sharded`` clips
gradients of which each rank holds a shard by their global norm (see
``fully_shard`` in layers/distributed.py, which is read next).
"""

import functools
import itertools

from .. import core as mx
from ..utils import tree_flatten, tree_map, tree_reduce, tree_unflatten

__all__ = ["value_and_grad", "checkpoint", "average_gradients", "clip_grad_norm_sharded"]


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


def _batches_by_bytes(sizes, itemsize, all_reduce_size):
    """The indices of ``sizes`` in consecutive batches, each closed as soon as its
    bytes reach ``all_reduce_size`` (so every batch but the last holds at least
    that much); the last batch holds what is left."""
    batches, batch, nbytes = [], [], 0
    for i, size in enumerate(sizes):
        batch.append(i)
        nbytes += size * itemsize
        if nbytes >= all_reduce_size:
            batches.append(batch)
            batch, nbytes = [], 0
    if batch:
        batches.append(batch)
    return batches


def average_gradients(gradients, group=None, all_reduce_size=32 * 1024**2,
                      communication_stream=None):
    """The tree ``gradients`` averaged over the processes of ``group`` (default: the
    global group): ``all_sum(g) / N`` for each gradient ``g``.

    Many small all-reduces cost more than a few big ones, so the gradients are
    flattened and concatenated into batches of at least ``all_reduce_size``
    bytes (the last may be smaller), each batch is all-summed once and split
    back. ``all_reduce_size <= 0`` sends every gradient on its own, and so do
    gradients of different dtypes (they cannot share one array). On a group of
    one nothing is sent and ``gradients`` itself is returned.

    >>> import mlxref.core as mx
    >>> grads = {"w": mx.ones((2, 2)), "b": mx.zeros((2,))}
    >>> average_gradients(grads) is grads
    True
    """
    group = group or mx.distributed.init()
    n = group.size()
    if n == 1:
        return gradients

    # mx.distributed.all_sum is looked up at each call, so that a test (MLX's
    # included) can wrap it and count the calls.
    if all_reduce_size <= 0:
        return tree_map(
            lambda g: mx.distributed.all_sum(g, group=group, stream=communication_stream) / n,
            gradients,
        )

    flat = tree_flatten(gradients)
    if not flat:
        return gradients
    keys = [k for k, _ in flat]
    grads = [g for _, g in flat]
    if any(g.dtype != grads[0].dtype for g in grads):
        # As MLX: one all_sum per gradient, and the stream is not passed on.
        return average_gradients(gradients, group, 0)

    sizes = [g.size for g in grads]
    averaged = []
    for batch in _batches_by_bytes(sizes, grads[0].dtype.size, all_reduce_size):
        one = mx.concatenate([grads[i].reshape(-1) for i in batch])
        one = mx.distributed.all_sum(one, stream=communication_stream, group=group) / n
        offsets = list(itertools.accumulate(sizes[i] for i in batch))[:-1]
        for i, part in zip(batch, mx.split(one, offsets)):
            averaged.append((keys[i], part.reshape(grads[i].shape)))
    return tree_unflatten(averaged)


def clip_grad_norm_sharded(gradients, max_norm, group=None):
    """``(clipped, norm)``: ``optimizers.clip_grad_norm`` for gradients sharded over
    ``group`` (default: the global group), each rank holding a part of them.

    The global norm is ``sqrt(all_sum(local sum of squares))``; every shard is
    scaled by ``min(max_norm / (norm + 1e-6), 1)``, the same factor on every
    rank. Returns the local shards, scaled, and the global norm.

    >>> import mlxref.core as mx
    >>> clipped, norm = clip_grad_norm_sharded({"g": mx.array([3.0, 4.0])}, max_norm=1.0)
    >>> norm, clipped["g"]
    (array(5, dtype=float32), array([0.6, 0.8], dtype=float32))
    """
    local_squares = tree_reduce(lambda total, g: total + g.square().sum(), gradients, 0.0)
    norm = mx.sqrt(mx.distributed.all_sum(local_squares, group=group))
    scale = mx.minimum(max_norm / (norm + 1e-6), 1.0)
    return tree_map(lambda g: g * scale, gradients), norm
