"""Primitives that create arrays: ``Arange`` (no inputs) and ``Full``.

Read alongside: mlx/primitives.h (``Arange``, ``Full``), mlx/ops.cpp
(``arange``, ``full``) and mlx/backend/cpu/arange.h.

Everything else in the creation family (zeros, ones, eye, linspace, ...) is
composed from these and other ops, as in MLX.
"""

import math

from .base import Copy, Primitive, make_array


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
        if self.dtype.is_inexact:
            start, step = float(self.start), float(self.step)
            return [[start + i * step for i in range(size)]]
        # MLX's CPU kernel casts start and start + step to the integer type
        # first (truncating), then steps by their difference: so
        # arange(0, 3, 0.5, dtype=int32) is six zeros.
        first = int(self.start)
        step = int(self.start + self.step) - first
        return [[first + i * step for i in range(size)]]


class Full(Copy):
    """A contiguous copy of its (already broadcast and cast) input.

    ``full``, ``zeros``, ``ones`` and their ``_like`` versions end in this
    node. As a ``Copy``, it shares its input's element list (lists are never
    mutated), and its derivative is the identity in both modes; the summing
    over the broadcast axes happens in the ``Broadcast`` node below it.

    MLX 0.32's ``Full::vjp`` returns ``cotangent * input`` instead, so there
    ``grad(lambda x: mx.full((3,), x).sum())(mx.array(2.0))`` is 6, where the
    derivative is 3. mlxref does not mirror that: its rule is the identity,
    which the SymPy check and finite differences confirm. (``Full::jvp``
    is the identity in MLX too.)
    """

    def vmap(self, inputs, axes):
        """MLX's Full::vmap: the input is already broadcast to the example's
        shape (the ``Broadcast`` node below got the batch axis), so the batched
        copy is a copy of the batched input, on the same batch axis."""
        return [make_array(Full(), inputs)], list(axes)
