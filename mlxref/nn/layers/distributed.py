"""Layers whose parameters are split across the processes of a group, mirroring
python/mlx/nn/layers/distributed.py.

Read alongside: python/mlx/nn/layers/distributed.py; the collectives are
``mx.distributed``'s (mlxref/core/distributed/). Read next: ../utils.py
(``average_gradients``, ``clip_grad_norm_sharded``).

Tensor parallelism splits one linear layer ``y = x @ W.T + b`` (``W`` of shape
``(output_dims, input_dims)``) over the N ranks of a group; rank r keeps part r:

- ``AllToShardedLinear`` keeps rows r of ``W`` and of ``b``. Every rank has the
  whole ``x`` and computes its slice ``y[..., r]`` of the output: all in,
  sharded out, nothing sent forward. Backward, each rank's ``dx`` is only its
  rows' share, so ``sum_gradients`` (identity forward) all-sums ``dx``.
- ``ShardedToAllLinear`` keeps columns r of ``W`` (and all of ``b``). Rank r has
  the slice ``x[..., r]``; its product ``x_r @ W_r.T`` is a partial sum of the
  full product, so one ``all_sum`` gives every rank the whole ``y``, then ``b``
  is added once. Backward needs no communication (AllReduce's vjp passes the
  cotangent through).

An all-to-sharded layer followed by a sharded-to-all one (an MLP's two
matrices) costs one all_sum forward and one backward. The quantized twins
hold packed weights as ``QuantizedLinear`` does (quantized.py) and shard them
the same way. ``shard_linear`` makes such a layer from a ``Linear`` or
``QuantizedLinear``; ``shard_inplace`` shards any module's parameters by a
predicate and leaves the communication to the module's own code.

``fully_shard`` is the other split (as FSDP): each rank keeps 1/N of every
parameter along axis 0; a call gathers the full parameters (``all_gather``)
and the backward pass sums and scatters their gradients (``sum_scatter``,
divided by N: an average over the ranks' batches).

On a group of one everything here is the plain layer: the same parameters,
the same values, and no collective in the graph.
"""

import functools
import itertools
import math

from ... import core as mx
from ...utils import tree_flatten, tree_map_with_path, tree_unflatten
from .base import Module
from .linear import Linear

__all__ = [
    "sum_gradients", "shard_inplace", "shard_linear", "AllToShardedLinear",
    "ShardedToAllLinear", "QuantizedAllToShardedLinear", "QuantizedShardedToAllLinear",
    "FullyShardedModule", "fully_shard",
]

_SHARDINGS = ("all-to-sharded", "sharded-to-all")


@functools.lru_cache
def sum_gradients(group):
    """The identity whose vjp all-sums the cotangent over ``group`` (one function
    per group); on a group of one, the plain identity."""
    if group.size() == 1:
        return lambda x: x

    @mx.custom_function
    def identity(x):
        return x

    @identity.vjp
    def identity_vjp(x, cotangent, output):
        return mx.distributed.all_sum(cotangent, group=group)

    return identity


# ----------------------------------------------------------------------
# Splitting parameters


def _split(weight, segments, axis):
    """``mx.split(weight, segments, axis=axis)``, where ``segments`` may also be a
    list of fractions of the axis (``[0.5, 0.75]``) instead of indices."""
    if not isinstance(segments, int) and not isinstance(segments[0], int):
        length = weight.shape[axis]
        segments = [int(s * length) for s in segments]
    return mx.split(weight, segments, axis=axis)


def _shard(parameters, sharding_predicate, group=None):
    """A copy of the tree ``parameters`` holding this rank's part of each array.

    ``sharding_predicate(path, array)`` says how: None keeps the array whole;
    an axis splits it in N equal parts along that axis; ``(axis, segments)``
    first cuts it into ``segments`` (a fused QKV weight is 3 segments) and
    keeps part r of each segment, so every rank has its share of Q, K and V.
    """
    group = group or mx.distributed.init()
    n, r = group.size(), group.rank()

    def keep_part(path, a):
        if not isinstance(a, mx.array):
            return a
        how = sharding_predicate(path, a)
        if how is None:
            return a
        if isinstance(how, int):
            axis, segments = how, 1
        elif isinstance(how, tuple):
            axis, segments = how
        else:
            raise ValueError("The sharding function should return int or tuple[int, list]")
        parts = [_split(segment, n, axis)[r] for segment in _split(a, segments, axis)]
        return mx.contiguous(mx.concatenate(parts, axis=axis))

    return tree_map_with_path(keep_part, parameters)


def _all_to_sharded(segments):
    """The predicate of an all-to-sharded linear layer: the output rows of the weight
    (axis -2 of a matrix, 0 of a vector) and of the bias."""

    def rows(path, weight):
        if path.endswith("bias"):
            return -1, segments
        return max(weight.ndim - 2, 0), segments

    return rows


def _sharded_to_all(segments):
    """The predicate of a sharded-to-all linear layer: the input columns of the
    weight (and its quantization scales and biases); the bias stays whole."""

    def columns(path, weight):
        if path.endswith("bias"):
            return None
        return -1, segments

    return columns


def _check_sharding(sharding):
    if sharding not in _SHARDINGS:
        raise ValueError(
            f"Sharding type {sharding=} not supported, "
            "choose one of 'all-to-sharded' or 'sharded-to-all'"
        )


def shard_inplace(module, sharding, *, segments=1, group=None):
    """Replace ``module``'s parameters by this rank's shards of them.

    ``sharding`` is ``"all-to-sharded"``, ``"sharded-to-all"`` (the linear
    layers' splits, with ``segments``) or a predicate ``(path, array) -> None |
    axis | (axis, segments)``. The module's code is unchanged: it must do any
    communication itself (as ``all_sum`` after a sharded-to-all product).
    """
    if isinstance(sharding, str):
        _check_sharding(sharding)
        sharding = (_all_to_sharded if sharding == "all-to-sharded" else _sharded_to_all)(segments)
    module.update(_shard(module.parameters(), sharding, group))


def shard_linear(module, sharding, *, segments=1, group=None):
    """A new sharded layer holding this rank's part of ``module``: an
    ``AllToShardedLinear`` or ``ShardedToAllLinear`` for a ``Linear``, their
    quantized twins for anything else (a ``QuantizedLinear``). ``module`` is
    left as it was.

    >>> import mlxref.core as mx
    >>> import mlxref.nn as nn
    >>> shard_linear(nn.Linear(4, 6), "sharded-to-all")
    ShardedToAllLinear(input_dims=4, output_dims=6, bias=True)
    """
    _check_sharding(sharding)
    all_to_sharded = sharding == "all-to-sharded"
    if isinstance(module, Linear):
        cls = AllToShardedLinear if all_to_sharded else ShardedToAllLinear
        return cls.from_linear(module, segments=segments, group=group)
    cls = QuantizedAllToShardedLinear if all_to_sharded else QuantizedShardedToAllLinear
    return cls.from_quantized_linear(module, segments=segments, group=group)


# ----------------------------------------------------------------------
# Tensor-parallel linear layers


class _TensorParallelLinear(Module):
    """What the four tensor-parallel layers share: the group, the local weight's
    shape (the full one with the sharded side divided by N) and the repr."""

    shards_output = True  # all-to-sharded: rows of W; sharded-to-all: columns
    _sharding_predicate = staticmethod(_all_to_sharded)

    def _start(self, input_dims, output_dims, group):
        """Set ``self.group``; the local weight's shape, or MLX's error when the
        sharded side does not divide by N."""
        self.group = group or mx.distributed.init()
        n = self.group.size()
        if self.shards_output:
            if output_dims % n != 0:
                raise ValueError(
                    f"Cannot shard the output of size {output_dims} across {n} devices.")
            return output_dims // n, input_dims
        if input_dims % n != 0:
            raise ValueError(
                f"The input of size {input_dims} cannot be sharded across {n} devices.")
        return output_dims, input_dims // n

    def _local_input_dims(self):
        return self.weight.shape[1]

    def _extra_repr(self):
        out_dims, in_dims = self.weight.shape[0], self._local_input_dims()
        if self.shards_output:
            out_dims *= self.group.size()
        else:
            in_dims *= self.group.size()
        return f"input_dims={in_dims}, output_dims={out_dims}, bias={'bias' in self}"

    def _plus_bias(self, y):
        return y + self["bias"] if "bias" in self else y

    def _shard_from(self, layer, segments, group):
        """Load this rank's part of ``layer``'s parameters."""
        self.update(_shard(layer.parameters(), self._sharding_predicate(segments), group))
        return self


class _FloatTensorParallelLinear(_TensorParallelLinear):
    """A float weight (and bias) drawn as ``Linear`` draws them, before sharding."""

    def __init__(self, input_dims, output_dims, bias=True, group=None):
        super().__init__()
        k = math.sqrt(1.0 / input_dims)
        shape = self._start(input_dims, output_dims, group)
        self.weight = mx.random.uniform(low=-k, high=k, shape=shape)
        if bias:
            bias_dims = shape[0] if self.shards_output else output_dims
            self.bias = mx.random.uniform(low=-k, high=k, shape=(bias_dims,))

    @classmethod
    def from_linear(cls, linear_layer, *, segments=1, group=None):
        """This rank's part of ``linear_layer`` (its bias included when it has one)."""
        group = group or mx.distributed.init()
        output_dims, input_dims = linear_layer.weight.shape
        layer = cls(input_dims, output_dims, hasattr(linear_layer, "bias"), group)
        return layer._shard_from(linear_layer, segments, group)


class _QuantizedTensorParallelLinear(_TensorParallelLinear):
    """A quantized weight as ``QuantizedLinear`` holds it; frozen, with a zero bias."""

    def __init__(self, input_dims, output_dims, bias=True, group_size=64, bits=4,
                 mode="affine", group=None):
        super().__init__()
        self.group_size, self.bits, self.mode = group_size, bits, mode
        k = math.sqrt(1.0 / input_dims)
        shape = self._start(input_dims, output_dims, group)
        self.weight, self.scales, *biases = mx.quantize(
            mx.random.uniform(low=-k, high=k, shape=shape), group_size, bits, mode=mode)
        self.biases = biases[0] if biases else None
        if bias:
            self.bias = mx.zeros((shape[0] if self.shards_output else output_dims,))
        self.freeze()

    def unfreeze(self, *args, **kwargs):
        """Unfreeze submodules as asked; this layer's own parameters stay frozen."""
        super().unfreeze(*args, **kwargs)
        self.freeze(recurse=False)

    def _local_input_dims(self):
        return self.weight.shape[1] * 32 // self.bits

    def _extra_repr(self):
        return (f"{super()._extra_repr()}, group_size={self.group_size}, bits={self.bits}, "
                f"mode={self.mode}")

    def _product(self, x):
        return mx.quantized_matmul(
            x, self["weight"], scales=self["scales"], biases=self.get("biases"),
            transpose=True, group_size=self.group_size, bits=self.bits, mode=self.mode)

    @classmethod
    def from_quantized_linear(cls, quantized_linear_layer, *, segments=1, group=None):
        """This rank's part of ``quantized_linear_layer``, quantized the same way."""
        group = group or mx.distributed.init()
        q = quantized_linear_layer
        output_dims, packed = q.weight.shape
        layer = cls(packed * 32 // q.bits, output_dims, hasattr(q, "bias"),
                    group_size=q.group_size, bits=q.bits, mode=getattr(q, "mode", "affine"),
                    group=group)
        return layer._shard_from(q, segments, group)


class AllToShardedLinear(_FloatTensorParallelLinear):
    """Rank r of N computes outputs ``r*out/N .. (r+1)*out/N`` of a linear layer
    from the whole input; ``dx`` is all-summed in the backward pass.

    ``AllToShardedLinear(input_dims, output_dims, bias=True, group=None)``; its
    weight is ``(output_dims // N, input_dims)``. ``from_linear`` shards a ``Linear``.
    """

    def __call__(self, x):
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, self["weight"].T)
        return x @ self["weight"].T


class ShardedToAllLinear(_FloatTensorParallelLinear):
    """Rank r of N multiplies inputs ``r*in/N .. (r+1)*in/N`` by its columns of the
    weight; one ``all_sum`` gives every rank the whole output, then the bias is added.

    ``ShardedToAllLinear(input_dims, output_dims, bias=True, group=None)``; its
    weight is ``(output_dims, input_dims // N)``. ``from_linear`` shards a ``Linear``.
    """

    shards_output = False
    _sharding_predicate = staticmethod(_sharded_to_all)

    def __call__(self, x):
        return self._plus_bias(mx.distributed.all_sum(x @ self["weight"].T, group=self.group))


class QuantizedAllToShardedLinear(_QuantizedTensorParallelLinear):
    """``AllToShardedLinear`` with a quantized weight (frozen, as ``QuantizedLinear``).

    ``QuantizedAllToShardedLinear(input_dims, output_dims, bias=True, group_size=64,
    bits=4, mode="affine", group=None)``; ``from_quantized_linear`` shards a
    ``QuantizedLinear``.
    """

    def __call__(self, x):
        return self._plus_bias(self._product(sum_gradients(self.group)(x)))


class QuantizedShardedToAllLinear(_QuantizedTensorParallelLinear):
    """``ShardedToAllLinear`` with a quantized weight (frozen, as ``QuantizedLinear``).

    ``QuantizedShardedToAllLinear(input_dims, output_dims, bias=True, group_size=64,
    bits=4, mode="affine", group=None)``; ``from_quantized_linear`` shards a
    ``QuantizedLinear``.
    """

    shards_output = False
    _sharding_predicate = staticmethod(_sharded_to_all)

    def __call__(self, x):
        return self._plus_bias(mx.distributed.all_sum(self._product(x), group=self.group))


# ----------------------------------------------------------------------
# Fully sharded modules


def _make_gather_fn(group, full_shapes, shard_sizes, compute_dtype):
    """``gather(shards) -> full parameters``, one ``all_gather`` for all of them.

    Each rank flattens and concatenates its shards into one row; the gather
    stacks the N rows, and column block i of the stack, read row by row, is
    parameter i whole (its axis-0 parts in rank order). The vjp does the
    reverse with ``sum_scatter``: rank r gets row r of the summed cotangents,
    divided by N, cast back to each shard's dtype.
    """
    n = group.size()
    offsets = list(itertools.accumulate(shard_sizes))[:-1]
    shard_shapes = [(shape[0] // n, *shape[1:]) for shape in full_shapes]

    def cast(x, dtype):
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @mx.custom_function
    def gather(shards):
        row = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        stacked = mx.distributed.all_gather(row, group=group)
        blocks = mx.split(stacked, offsets, axis=1)
        return [b.reshape(shape) for b, shape in zip(blocks, full_shapes)]

    @gather.vjp
    def gather_vjp(shards, cotangents, outputs):
        stacked = mx.concatenate([c.reshape(n, -1) for c in cotangents], axis=1)
        row = mx.distributed.sum_scatter(stacked, group=group) / n
        blocks = mx.split(row, offsets, axis=1)
        return [cast(b.reshape(shape), s.dtype)
                for b, shape, s in zip(blocks, shard_shapes, shards)]

    return gather


def _maybe_shard(module, key, value):
    """The parameters a ``FullyShardedModule`` shards: all but those of a
    ``FullyShardedModule`` inside it, which shards its own."""
    if isinstance(value, FullyShardedModule):
        return False
    return Module.valid_parameter_filter(module, key, value)


class FullyShardedModule(Module):
    """``module`` with each parameter split along axis 0 over ``group``: rank r keeps
    part r of every parameter (and trains only that).

    A call gathers the full parameters into ``module`` (cast to
    ``compute_dtype`` if given), runs it and puts the shards back; in the
    backward pass each shard gets the average over the ranks of its gradient.
    Every parameter's axis 0 must divide by N. Made by ``fully_shard``.
    """

    def __init__(self, module, group=None, compute_dtype=None):
        super().__init__()
        group = group or mx.distributed.init()
        n = group.size()
        params = module.filter_and_map(_maybe_shard)
        flat = tree_flatten(params)
        for path, a in flat:
            if a.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if a.shape[0] % n != 0:
                raise ValueError(
                    f"Cannot shard parameter '{path}' with shape {a.shape} "
                    f"across {n} devices: axis 0 must be divisible by {n}.")
        # A plain attribute: a list item of the Module dict would be a child.
        object.__setattr__(self, "_paths", [path for path, _ in flat])
        full_shapes = [a.shape for _, a in flat]
        shard_sizes = [a.size // n for _, a in flat]
        module.update(_shard(params, lambda path, a: 0, group))
        self.module = module
        self._gather_fn = _make_gather_fn(group, full_shapes, shard_sizes, compute_dtype)

    def _extra_repr(self):
        return f"num_sharded_params={len(self._paths)}"

    def _gathered_call(self, fn, *args, **kwargs):
        shards = self.module.filter_and_map(_maybe_shard)
        fulls = self._gather_fn([a for _, a in tree_flatten(shards)])
        self.module.update(tree_unflatten(list(zip(self._paths, fulls))))
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(shards)

    def __call__(self, *args, **kwargs):
        return self._gathered_call(self.module, *args, **kwargs)

    def as_linear(self, *args, **kwargs):
        """The wrapped module's ``as_linear`` (a tied embedding) with the full parameters."""
        return self._gathered_call(self.module.as_linear, *args, **kwargs)


def fully_shard(module, *, group=None, compute_dtype=None):
    """``module`` wrapped in a ``FullyShardedModule``; ``module`` itself on a group
    of one, when it is already fully sharded, or when it has no parameter to shard.

    >>> import mlxref.nn as nn
    >>> layer = nn.Linear(4, 4)
    >>> fully_shard(layer) is layer
    True
    """
    group = group or mx.distributed.init()
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
