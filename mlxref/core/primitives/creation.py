"""Primitives that create arrays: ``Arange`` (no inputs), ``Full``,
``RandomBits`` (random bits from a key) and ``Load`` (a file's elements).

Read alongside: mlx/primitives.h (``Arange``, ``Full``, ``RandomBits``,
``Load``) and mlx/ops.cpp (``arange``, ``full``). The rest of the family
(zeros, ones, eye, linspace, ...) is composed from these and other ops, as in MLX.
Read next: mlxref/core/backend/cpu/arange.py and threefry.py (their kernels),
mlxref/core/ops/creation.py (the ops).
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..backend.cpu.arange import arange
from ..backend.cpu.threefry import random_bits
from .base import Copy, Primitive, make_array, vmap_in_place


def arange_size(start, stop, step):
    """The number of elements ``arange(start, stop, step)`` has (MLX's rule)."""
    return max(math.ceil((stop - start) / step), 0)


class Arange(Primitive):
    """``[start, start + step, ...)`` below ``stop``; a node with no inputs.

    MLX's Arange reads the dtype from its output array; an mlxref primitive
    gives its outputs' dtypes (``output_dtypes``), so it keeps the dtype
    itself (not printed: it is the node's dtype anyway).

    It has no inputs, so it never depends on a vmapped input and never has
    its ``vmap`` rule called; the rule raises MLX's default message.
    """

    def __init__(self, start, stop, step, dtype):
        self.start, self.stop, self.step = start, stop, step
        self.dtype = dtype

    def params(self):
        return {"start": self.start, "stop": self.stop, "step": self.step}

    def output_shapes(self, inputs):
        return [(arange_size(self.start, self.stop, self.step),)]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        size = arange_size(self.start, self.stop, self.step)
        return [arange(self.start, self.step, size, self.dtype)]


class Full(Copy):
    """A contiguous copy of its (already broadcast and cast) input.

    ``full``, ``zeros``, ``ones`` and their ``_like`` versions end in this
    node. Its derivative is the identity in both modes, as a ``Copy``'s; the
    summing over the broadcast axes happens in the ``Broadcast`` node below
    it. Unlike a ``Copy`` it makes a new list: the broadcast below is a view
    of a one-element buffer (``Primitive.view``), and MLX's ``Full`` copies it
    into a buffer of its own, which the memory counters must see.

    MLX 0.32's ``Full::vjp`` returns ``cotangent * input`` instead, so there
    ``grad(lambda x: mx.full((3,), x).sum())(mx.array(2.0))`` is 6, where the
    derivative is 3. mlxref does not mirror that: its rule is the identity,
    which the SymPy check and finite differences confirm. (``Full::jvp``
    is the identity in MLX too.)
    """

    def eval(self, inputs):
        return [list(inputs[0].data())]

    # MLX's Full::vmap: the input is already broadcast to the example's shape
    # (the Broadcast node below got the batch axis), so: a copy of it, in place.
    vmap = vmap_in_place


_BITS_DTYPES = {1: _dt.uint8, 2: _dt.uint16, 4: _dt.uint32}


class RandomBits(Primitive):
    """``shape`` random unsigned integers of ``width`` bytes from a uint32 key.

    The input is a key of shape ``(2,)``, or under vmap a stack of keys
    ``(..., 2)``: each key fills its share of the output, in order. A key's
    share is ``bytes`` bytes of Threefry hashes (the kernel:
    mlxref/core/backend/cpu/threefry.py).

    The bits are integers of the key: MLX defines no vjp or jvp for them
    (so they raise its message). The vmap rule is MLX's: the key's batch
    axis becomes an axis of the output shape, at the same place.
    """

    def __init__(self, shape, width):
        self.shape, self.width = tuple(shape), width

    def params(self):
        return {"shape": self.shape, "width": self.width}

    def output_shapes(self, inputs):
        return [self.shape]

    def output_dtypes(self, inputs):
        return [_BITS_DTYPES[self.width]]

    def vmap(self, inputs, axes):
        (key,), (kax,) = inputs, axes
        if kax is None:
            return [make_array(self, [key])], [None]
        if kax == key.ndim - 1:  # the last axis holds the key pair: batch the one before
            order = list(range(key.ndim))
            order[kax], order[kax - 1] = order[kax - 1], order[kax]
            key = ops.transpose(key, order)
            kax -= 1
        shape = self.shape[:kax] + (key.shape[kax],) + self.shape[kax:]
        return [make_array(RandomBits(shape, self.width), [key])], [kax]

    def eval(self, inputs):
        return [random_bits(inputs[0].data(), math.prod(self.shape), self.width)]


class Load(Primitive):
    """Elements read from a file when the node is evaluated; no inputs.

    MLX's ``Load`` (mlx/primitives.h) reads its bytes from a reader at an
    offset; here ``read`` is a function (made by mlxref/core/io) returning
    the flat elements, already as ``dtype`` stores them, or raising the
    error for a file that cannot be read (MLX's errors at eval, too).
    ``source`` names the file in the node's repr.

    Like ``Arange`` it has no inputs, so a transform never calls its rules.
    """

    moves_elements = True  # ``read`` gives stored values

    def __init__(self, read, shape, dtype, source):
        self.read, self.shape, self.dtype, self.source = read, tuple(shape), dtype, source

    def params(self):
        return {"file": self.source}

    def output_shapes(self, inputs):
        return [self.shape]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        return [self.read()]
