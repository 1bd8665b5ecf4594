"""Primitives that move elements without changing them: broadcast, reshape, ...

Read alongside: mlx/primitives.h (``Broadcast``, ``Reshape``, ``Transpose``,
``Slice``, ``Concatenate``, ``Split``, ...). Each one computes the flat indices
its output reads from (``strided_indices``) and gathers.
"""

from .base import Primitive, row_major_strides, strided_indices


class Broadcast(Primitive):
    """Repeat an array along new or size-1 axes to reach ``shape``.

    Its vjp is the one place where broadcasting is undone: it sums the
    cotangent over the broadcast axes.
    """

    def __init__(self, shape):
        self.shape = tuple(shape)

    def params(self):
        return {"shape": self.shape}

    def output_shapes(self, inputs):
        return [self.shape]

    def eval(self, inputs):
        (x,) = inputs
        lead = len(self.shape) - x.ndim
        in_strides = row_major_strides(x.shape)
        strides = [0] * lead + [
            0 if n == 1 and m != 1 else s
            for n, m, s in zip(x.shape, self.shape[lead:], in_strides)
        ]
        data = x._data
        return [[data[i] for i in strided_indices(self.shape, strides)]]
