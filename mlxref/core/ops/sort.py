"""Sorting and selection: sort, argsort, partition, argpartition, topk.

Read alongside: mlx/ops.cpp (``sort``, ``argsort``, ``partition``,
``argpartition``, ``topk``) and python/src/ops.cpp (their bindings: ``axis=None``
flattens the array first). The primitives are in ``mlxref.core.primitives.sort``.

As in MLX, ``topk`` is not a primitive: it partitions at ``-k`` and slices
off the last ``k`` elements, so its elements come in the order the partition
leaves them (not sorted), and asking for every element returns the array
itself, unordered.
"""

import copy

from ..array import _fmt_shape, array
from ..primitives import sort as P
from ..primitives.base import make_array
from .common import incompatible_arguments, normalize_axis
from .reduction import _is_c_int
from .shape import _slice_axis, reshape

__all__ = ["sort", "argsort", "partition", "argpartition", "topk"]

# MLX's Python bindings (nanobind) reject a wrongly typed argument with this
# TypeError before the op runs (see ops/reduction.py).
_SIGNATURES = {
    "sort": "sort(a: array, /, axis: None | int = -1, *, stream: StreamOrDevice = None) -> array",
    "argsort": "argsort(a: array, /, axis: None | int = -1, *, stream: StreamOrDevice = None) "
    "-> array",
    "partition": "partition(a: array, /, kth: int, axis: None | int = -1, *, "
    "stream: StreamOrDevice = None) -> array",
    "argpartition": "argpartition(a: array, /, kth: int, axis: None | int = -1, *, "
    "stream: StreamOrDevice = None) -> array",
    "topk": "topk(a: array, /, k: int, axis: None | int = -1, *, stream: StreamOrDevice = None) "
    "-> array",
}


def _checked(op, a, axis, *counts):
    """The binding's conversions: ``a`` an array, ``axis`` None or a C int, the
    counts (``kth``, ``k``) C ints (a bool is one). ``axis=None`` flattens ``a``
    (MLX's ops without an axis); then the op works on axis 0."""
    if not isinstance(a, array) or not (axis is None or _is_c_int(axis)):
        raise incompatible_arguments(_SIGNATURES[op])
    if not all(_is_c_int(n) for n in counts):
        raise incompatible_arguments(_SIGNATURES[op])
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    axis = int(axis)
    ax = normalize_axis(axis, a.ndim, f"[{op}] Axis {{axis}} is out of bounds for array with "
                        "{ndim} dimensions.")
    return a, axis, ax, [int(n) for n in counts]


def sort(a, /, axis=-1, *, stream=None):
    """``mx.sort``: ``a`` sorted along ``axis`` (None: the flattened array).

    Stable, with nans last; complex64 sorts by real part, then imaginary part.
    """
    a, _, ax, _ = _checked("sort", a, axis)
    return make_array(P.Sort(ax), [a])


def argsort(a, /, axis=-1, *, stream=None):
    """``mx.argsort``: the indices that sort ``a`` along ``axis`` (uint32).

    ``axis=None`` sorts the flattened array, as MLX's op does (it flattens
    first). The sort is stable, with nans last.
    """
    a, _, ax, _ = _checked("argsort", a, axis)
    return make_array(P.ArgSort(ax), [a])


def _kth(op, kth, a, axis, ax):
    """MLX's check of ``kth`` (negative counts from the end). Its message
    names the axis as given and, for ``partition``, lacks a space."""
    n = a.shape[ax]
    k = kth + n if kth < 0 else kth
    if not 0 <= k < n:
        gap = "" if op == "partition" else " "
        raise ValueError(f"[{op}] Received invalid kth {kth}{gap}along axis {axis} "
                         f"for array with shape: {_fmt_shape(a.shape)}")
    return k


def partition(a, /, kth, axis=-1, *, stream=None):
    """``mx.partition``: ``a`` with element ``kth`` along ``axis`` in its sorted
    place, the smaller elements before it and the larger ones after.

    The order within each side is the one MLX's CPU kernel leaves (see
    ``mlxref.core.primitives.sort``).
    """
    a, axis, ax, (kth,) = _checked("partition", a, axis, kth)
    return make_array(P.Partition(_kth("partition", kth, a, axis, ax), ax), [a])


def argpartition(a, /, kth, axis=-1, *, stream=None):
    """``mx.argpartition``: the indices (uint32) that partition ``a`` around
    ``kth`` along ``axis``; equal elements are told apart by index."""
    a, axis, ax, (kth,) = _checked("argpartition", a, axis, kth)
    return make_array(P.ArgPartition(_kth("argpartition", kth, a, axis, ax), ax), [a])


def topk(a, /, k, axis=-1, *, stream=None):
    """``mx.topk``: the ``k`` largest elements along ``axis``, in no particular
    order: MLX's ``partition(a, -k)`` followed by a slice of the last ``k``.
    """
    a, axis, ax, (k,) = _checked("topk", a, axis, k)
    n = a.shape[ax]
    if not 0 <= k <= n:
        raise ValueError(f"[topk] Received invalid k={k} along axis {axis} "
                         f"for array with shape: {_fmt_shape(a.shape)}")
    if k == n:
        return copy.copy(a)
    return _slice_axis(partition(a, -k, ax), ax, n - k, n)
