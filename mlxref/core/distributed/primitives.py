"""The collectives as primitives: ``AllReduce``, ``AllGather``, ``ReduceScatter``,
``Send`` and ``Recv``, with MLX's rules.

Read alongside: mlx/distributed/primitives.h and primitives.cpp (the classes
and their vjp, jvp and vmap rules), and mlx/backend/cpu/distributed.cpp (their
``eval_cpu``: what each output's buffer is).

Each holds its ``group`` (a ``Group``), so that its kernel knows whom to talk
to and its rules build their collectives on the same processes. The rules are
MLX's, and they are few: an all-reduce's cotangent passes through unchanged
(each rank's gradient is then its own; ``nn.average_gradients`` is what sums
them), its tangent and batch are reduced like its input; an all-gather's
cotangent is this rank's block of the output's. ``ReduceScatter``, ``Send`` and
``Recv`` have no derivative in MLX, and only ``Send`` can be batched: MLX's
``Primitive`` errors say so (primitives/base.py).

Read next: mlxref/core/backend/cpu/distributed.py (the kernels).
"""

import math

from .. import ops
from ..ops.shape import slice_axis
from ..backend.cpu import distributed as kernels
from ..primitives.base import Primitive
from . import ops as collectives


class DistPrimitive(Primitive):
    """A primitive that runs on a group of processes (MLX's ``DistPrimitive``)."""

    abstract = True

    def __init__(self, group):
        self.group = group

    def params(self):
        return {"group": f"rank {self.group.rank()} of {self.group.size()}"}


class AllReduce(DistPrimitive):
    """The elementwise sum, max or min over the group's ranks (``reduce_type``:
    "sum", "max" or "min", MLX's ``AllReduce::ReduceType``). Its output may take
    over its input's buffer, as MLX's ``eval_cpu`` donates it."""

    donates = True
    _OPS = {"sum": "all_sum", "max": "all_max", "min": "all_min"}

    def __init__(self, group, reduce_type):
        super().__init__(group)
        if reduce_type not in self._OPS:
            raise RuntimeError("Only all reduce sum, max and min are supported for now")
        self.reduce_type = reduce_type

    @property
    def name(self):
        return f"{self.reduce_type.capitalize()} AllReduce"

    def eval(self, inputs):
        (x,) = inputs
        return [kernels.all_reduce(self.group.impl(), self.reduce_type, x.data(), x.dtype)]

    def _reduce(self, x):
        return getattr(collectives, self._OPS[self.reduce_type])(x, group=self.group)

    def vjp(self, primals, cotangents, argnums, outputs):
        return list(cotangents)

    def jvp(self, primals, tangents, argnums):
        return [self._reduce(tangents[0])]

    def vmap(self, inputs, axes):
        return [self._reduce(inputs[0])], list(axes)


class AllGather(DistPrimitive):
    """The ranks' inputs concatenated along axis 0 in rank order (a scalar
    input gives a vector of one element per rank)."""

    moves_elements = True

    def output_shapes(self, inputs):
        shape, n = inputs[0].shape, self.group.size()
        return [(shape[0] * n,) + shape[1:] if shape else (n,)]

    def eval(self, inputs):
        (x,) = inputs
        return [kernels.all_gather(self.group.impl(), x.data(), x.dtype)]

    def vjp(self, primals, cotangents, argnums, outputs):
        # this rank's block of the cotangent: the part its input became
        x, (cot,) = primals[0], cotangents
        block = x.shape[0] if x.shape else 1
        start = self.group.rank() * block
        out = slice_axis(cot, 0, start, start + block)
        return [ops.squeeze(out, 0) if not x.shape else out]

    def jvp(self, primals, tangents, argnums):
        return [collectives.all_gather(tangents[0], group=self.group)]

    def vmap(self, inputs, axes):
        # MLX's rule: gathered along axis 0 wherever the batch axis is
        return [collectives.all_gather(inputs[0], group=self.group)], list(axes)


class ReduceScatter(DistPrimitive):
    """This rank's block along axis 0 of the sum over the ranks (MLX's
    ``ReduceScatter`` with ``ReduceType`` Sum, the only one its kernel runs)."""

    def __init__(self, group, reduce_type="sum"):
        super().__init__(group)
        self.reduce_type = reduce_type

    @property
    def name(self):
        return f"{self.reduce_type.capitalize()} ReduceScatter"

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [(shape[0] // self.group.size(),) + shape[1:]]

    def eval(self, inputs):
        if self.reduce_type != "sum":
            raise RuntimeError("Only scatter sum is supported for now")
        (x,) = inputs
        return [kernels.sum_scatter(self.group.impl(), x.data(), x.dtype)]


class Send(DistPrimitive):
    """Send the input to rank ``dst``. Its output is the input itself: MLX's
    kernel makes it share the input's buffer, so evaluating it costs no memory
    and depending on it orders the send before what uses it."""

    moves_elements = True
    view = True

    def __init__(self, group, dst):
        super().__init__(group)
        self.dst = dst

    def params(self):
        return {**super().params(), "dst": self.dst}

    def eval(self, inputs):
        (x,) = inputs
        kernels.send(self.group.impl(), x.data(), x.dtype, self.dst)
        return [x.data()]

    def vmap(self, inputs, axes):
        return [collectives.send(inputs[0], self.dst, group=self.group)], list(axes)


class Recv(DistPrimitive):
    """The array of ``shape`` and ``dtype`` that rank ``src`` sends: a node with
    no inputs (so no transform reaches it: its rules never run)."""

    moves_elements = True

    def __init__(self, group, src, shape, dtype):
        super().__init__(group)
        self.src, self.shape, self.dtype = src, tuple(shape), dtype

    def params(self):
        return {**super().params(), "src": self.src}

    def output_shapes(self, inputs):
        return [self.shape]

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        count = math.prod(self.shape)
        return [kernels.recv(self.group.impl(), count, self.dtype, self.src)]
