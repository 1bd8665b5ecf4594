"""argmax and argmin: the index of the best element of each run.

Read alongside: mlx/backend/cpu/arg_reduce.cpp (``arg_reduce``: one pass
along the axis, keeping the index of the best element so far).

A nan is better than every number: the first nan of a run is its argmax and
its argmin, as on MLX's CPU. complex64 follows MLX's order (real part, then
imaginary part), in which the first nan replaces a non-nan best.
Read next: reduce.py (the runs), mlxref/core/primitives/reduction.py
(``ArgReduce``'s rules).
"""

import operator

from ... import dtypes as _dt
from .binary import complex_greater
from .reduce import groups


def _arg_best(better, best_of):
    """The fold that finds the index of the first element ``better`` than all
    before it; a nan beats everything (MLX's CPU rule for argmax and argmin).

    Without a nan (``sum`` is nan when there is one), ``best_of`` (``max`` or
    ``min``, in C) makes the same comparisons: it keeps the first element no
    later one is ``better`` than; ``index`` then finds its place, as every
    element equal to it comes no earlier (an earlier equal one, -0.0 before
    0.0, would have been kept instead)."""

    def fold(group):
        if group:
            total = sum(group)
            if total == total:
                return group.index(best_of(group))
        best = 0
        for i, v in enumerate(group):
            if v != v:
                return i
            if better(v, group[best]):
                best = i
        return best

    return fold


argmax, argmin = _arg_best(operator.gt, max), _arg_best(operator.lt, min)


def _complex_arg_best(better):
    """MLX's argmax / argmin on complex64: the first nan replaces a non-nan
    best, and a better element replaces the best (even a nan one)."""

    def fold(group):
        best = 0
        for i, v in enumerate(group):
            current = group[best]
            if (v != v and current == current) or better(v, current):
                best = i
        return best

    return fold


def arg_reduce(kind, data, shape, axes, dtype):
    """The index of the best element of each run of ``data`` (an array of
    ``shape`` and ``dtype``) over ``axes``: ``kind`` "argmax" or "argmin".
    complex64 follows ``complex_greater``, MLX's order on complex64. An
    empty array raises the op's error (for a node built by hand)."""
    if not data:
        raise ValueError(f"[{kind}] Cannot {kind} reduce zero size array.")
    if dtype is not _dt.complex64:
        fold = argmax if kind == "argmax" else argmin
    elif kind == "argmax":
        fold = _complex_arg_best(complex_greater)
    else:
        fold = _complex_arg_best(lambda a, b: complex_greater(b, a))
    try:
        return [fold(g) for g in groups(data, shape, axes)]
    except TypeError:
        raise TypeError(f"[{kind}] Cannot order symbolic elements; {kind} needs numbers.") from None
