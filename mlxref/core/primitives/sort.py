"""Sort and selection primitives: Sort, ArgSort, Partition, ArgPartition,
SearchSorted.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Sort``, ``ArgSort``,
``Partition``, ``ArgPartition``, ``SearchSorted``: their vjp, jvp and vmap rules).
Read next: mlxref/core/backend/cpu/sort.py (each ``eval``'s kernel, MLX's
mlx/backend/cpu/sort.cpp: how MLX orders nans, ties and complex numbers, and
libstdc++'s introselect for the partitions), mlxref/core/ops/sort.py (the
ops, and ``topk``, ``median``, ``unique`` composed from them).
"""

from .. import dtypes as _dt
from .. import ops
from ..backend.cpu.sort import argpartition, argsort, partition, searchsorted, sort
from .base import Primitive, jvp_zeros, make_array, vjp_zeros
from .reduction import shift_axes


class _AlongAxis(Primitive):
    """A primitive that reorders each run of elements along ``axis`` (MLX's
    four sort primitives). Its vmap rule, MLX's for all four, applies the same
    op along the axis shifted past the batch axis."""

    abstract = True

    def __init__(self, axis):
        self.axis = axis

    def params(self):
        return {"axis": self.axis}

    def _batched(self, axis):
        return type(self)(axis)

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        if ax is None:
            return [make_array(self, [x])], [None]
        (axis,) = shift_axes((self.axis,), ax)
        return [make_array(self._batched(axis), [x])], [ax]


class _Permuted(_AlongAxis):
    """A primitive whose output is ``x`` permuted along ``axis`` by the indices
    ``_order(x)`` (MLX's ``Sort`` and ``Partition``).

    MLX's rules: the permutation is locally constant, so it is cut from the
    graph by ``stop_gradient`` (a second derivative sees none of it). The jvp
    gathers the tangent with it; the vjp scatters the cotangent back to the
    positions the elements came from.
    """

    abstract = True

    def vjp(self, primals, cotangents, argnums, outputs):
        (x,) = primals
        order = ops.stop_gradient(self._order(x))
        return [ops.put_along_axis(ops.zeros_like(x), order, cotangents[0], self.axis)]

    def jvp(self, primals, tangents, argnums):
        order = ops.stop_gradient(self._order(primals[0]))
        return [ops.take_along_axis(tangents[0], order, self.axis)]


class Sort(_Permuted):
    """``x`` sorted along ``axis`` (MLX's ``Sort``): stable, nans last. The
    rules permute by ``argsort(x)``."""

    def _order(self, x):
        return ops.argsort(x, self.axis)

    def eval(self, inputs):
        (x,) = inputs
        return [sort(x.data(), x.shape, self.axis)]


class ArgSort(_AlongAxis):
    """The indices that sort ``x`` along ``axis`` (stably, nans last), as
    uint32 (MLX's ``ArgSort``). An index is piecewise constant: MLX's rules
    are zeros (the jvp's uint32)."""

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    vjp = vjp_zeros
    jvp = jvp_zeros

    def eval(self, inputs):
        (x,) = inputs
        return [argsort(x.data(), x.shape, self.axis)]


class Partition(_Permuted):
    """``x`` partitioned along ``axis`` around ``kth`` (MLX's ``Partition``):
    element ``kth`` of each run is the one a sort puts there, the smaller
    ones before it, the larger ones after (in the order backend/cpu/sort.py
    says). ``kth`` is non-negative here (the op adds the axis's size to a
    negative one). The rules permute by ``argpartition(x, kth)``."""

    def __init__(self, kth, axis):
        self.kth = kth
        self.axis = axis

    def params(self):
        return {"kth": self.kth, "axis": self.axis}

    def _batched(self, axis):
        return type(self)(self.kth, axis)

    def _order(self, x):
        return ops.argpartition(x, self.kth, self.axis)

    def eval(self, inputs):
        (x,) = inputs
        return [partition(x.data(), x.shape, self.axis, self.kth)]


class ArgPartition(Partition):
    """The indices that partition ``x`` along ``axis`` around ``kth``, as
    uint32 (MLX's ``ArgPartition``); ties are broken by index.

    MLX's rules: zeros. Its jvp gives ``zeros_like`` of the tangent, so of the
    tangent's dtype rather than uint32 (unlike ``ArgSort``'s); mlxref does
    the same.
    """

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    vjp = vjp_zeros

    def jvp(self, primals, tangents, argnums):
        return [ops.zeros_like(tangents[0])]

    def eval(self, inputs):
        (x,) = inputs
        return [argpartition(x.data(), x.shape, self.axis, self.kth)]


class SearchSorted(Primitive):
    """Where each value would go in a sorted 1-D sequence, as uint32 (MLX's
    ``SearchSorted``; inputs: the sequence, then the values, both already of
    one dtype): the first place whose element is not below the value
    (``right``: the first whose element is above it).

    MLX's rules: an index is piecewise constant, so the vjp is zeros for each
    input asked for and the jvp uint32 zeros shaped like the values. vmap
    batches the values only; a batched sequence is MLX's error.
    """

    moves_elements = True  # indices, which uint32 holds as they are

    def __init__(self, right):
        self.right = right

    def params(self):
        return {"right": self.right}

    def output_shapes(self, inputs):
        return [inputs[1].shape]

    def output_dtypes(self, inputs):
        return [_dt.uint32]

    def eval(self, inputs):
        return [searchsorted(inputs[0].data(), inputs[1].data(), self.right)]

    vjp = vjp_zeros
    jvp = jvp_zeros

    def vmap(self, inputs, axes):
        if axes[0] is not None:
            raise ValueError("[searchsorted] Cannot vmap over the sorted sequence, only over "
                             "the values being searched for.")
        return [make_array(SearchSorted(self.right), list(inputs))], [axes[1]]
