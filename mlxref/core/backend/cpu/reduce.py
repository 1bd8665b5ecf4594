"""The reductions' kernel: runs of elements, and MLX's accumulators over them.

Read alongside: mlx/backend/cpu/reduce.cpp (``reduction_op``,
``contiguous_reduce``, ``strided_reduce`` and the ``SumReduce``... structs)
and mlx/backend/common/reduce.cpp (``get_reduction_plan``).

The elements that meet in one output element are brought together by moving
the reduced axes to the end (``_axes_last_indices``), so that each output
reads one contiguous run of a list (``groups``); the kernels that map a run
element for element (scan, softmax, sort) put the runs back (``ungroup``).

MLX's CPU build on x86-64 has no SIMD lanes (mlx/backend/cpu/simd/type.h: its
Simd is one element wide there), so a reduction folds each output's elements
left to right into one accumulator (reduce.cpp ``contiguous_reduce``,
``strided_reduce``). The accumulator of a float32, float16 or bfloat16 sum or
product is a float32, and every partial result is rounded to it: so
``3e38 + 3e38 - 3e38`` is inf, as in MLX, where a double would give 3e38.
These folds round each partial by storing it in a one-element
``array('f')`` (C's cast). They are exact, and three times slower than
Python's ``sum``; so a float32 sum, which training runs on every step, is
formed in double and rounded once unless one of its partial sums could
overflow (``reduction_op``). That differs from MLX in the last bits only.
Read next: arg_reduce.py, scan.py, softmax.py and sort.py (the other kernels
over runs), mlxref/core/primitives/reduction.py (the rules).
"""

import array as _pyarray
import math

from ... import dtypes as _dt
from ... import scalar as _scalar
from .binary import complex_greater
from .copy import row_major_strides, strided_indices
from .rounding import in_double, norm


# --- runs -------------------------------------------------------------------------


def _axes_last_indices(shape, axes):
    """Flat indices of an array of ``shape`` read with ``axes`` moved to the end.

    The kept axes come first (in order), then ``axes`` (sorted). Element ``k``
    of the result is the flat position that lands at ``k``, so every run of
    ``prod(shape[a] for a in axes)`` consecutive indices feeds one output.
    """
    axes = sorted(axes)
    order = [d for d in range(len(shape)) if d not in axes] + axes
    strides = row_major_strides(shape)
    return strided_indices([shape[d] for d in order], [strides[d] for d in order])


def trailing(axes, ndim):
    """Are ``axes`` the last ones already? Then no element has to move."""
    return list(axes) == list(range(ndim - len(axes), ndim))


def groups(data, shape, axes):
    """The runs of the elements ``data`` (of an array of ``shape``) that
    reduce to one output element each.

    Returned in row-major order of the kept axes. A reduced axis of size 0
    gives empty runs (``sum`` of them is 0, ``prod`` 1).
    """
    group = math.prod(shape[d] for d in axes)
    count = math.prod(n for d, n in enumerate(shape) if d not in axes)
    if not trailing(axes, len(shape)):
        data = [data[i] for i in _axes_last_indices(shape, axes)]
    return [data[k * group : (k + 1) * group] for k in range(count)]


def ungroup(runs, shape, axes):
    """The inverse of ``groups`` for runs mapped element for element (scan,
    softmax, sort): one flat list in the row-major layout of ``shape``."""
    flat = [v for run in runs for v in run]
    if trailing(axes, len(shape)):
        return flat
    out = [None] * len(flat)
    for i, v in zip(_axes_last_indices(shape, axes), flat):
        out[i] = v
    return out


def cast(values, dtype):
    """Numbers take ``dtype``'s Python type (1 for True, 0.0 for 0); SymPy stays."""
    return list(map(dtype.cast, values))  # cast leaves SymPy as it is


# --- accumulators -------------------------------------------------------------------


def sum_float32(run):
    """``sum(run)`` in a float32 accumulator, starting from 0 as MLX's does."""
    cell = _pyarray.array("f", (0.0,))
    acc = 0.0
    for v in run:
        cell[0] = acc + v
        acc = cell[0]
    return acc


def prod_float32(run):
    """``prod(run)`` in a float32 accumulator: an overflowing partial is inf and
    an underflowing one 0 (or subnormal) for good, as in MLX."""
    cell = _pyarray.array("f", (1.0,))
    acc = 1.0
    for v in run:
        cell[0] = acc * v
        acc = cell[0]
    return acc


_ACCUMULATE_IN_FLOAT32 = (_dt.float32, _dt.float16, _dt.bfloat16)


def _segment(shape, axes):
    """The length of the runs MLX sums separately, or None for one fold per output.

    MLX's plan for a row-contiguous input (backend/common/reduce.cpp
    ``get_reduction_plan``) merges neighbouring reduced axes (of size > 1)
    into blocks. When there are several blocks and the last one is
    contiguous in memory (nothing after it but size-1 axes), reduce.cpp folds
    each contiguous run from 0 on its own and adds the run's total to the
    output: ``(x0 + x1) + (x2 + x3)`` rather than ``((x0 + x1) + x2) + x3``.
    Otherwise (all axes, one block, or a strided last block) each output is
    one left-to-right fold over its elements in row-major order.
    """
    if len(axes) == len(shape) or 0 in shape:
        return None
    blocks = []  # [size, last axis of the block]
    for i, ax in enumerate(axes):
        if i and ax - 1 == axes[i - 1] and shape[ax] > 1:
            blocks[-1] = [blocks[-1][0] * shape[ax], ax]
        else:
            blocks.append([shape[ax], ax])
    blocks = [b for b in blocks if b[0] != 1]
    if len(blocks) < 2 or math.prod(shape[blocks[-1][1] + 1 :]) != 1:
        return None
    return blocks[-1][0]


def _by_segments(fold, segment):
    """``fold`` applied to each ``segment``-long piece of a run, then to the results."""
    if segment is None:
        return fold
    return lambda run: fold([fold(run[i : i + segment]) for i in range(0, len(run), segment)])


def _complex_extreme(better):
    """MLX's CPU max or min fold on complex64: an element replaces the running
    one when it is better or holds a nan; a nan left at the end reads nan+0j."""

    def fold(group):
        acc = group[0]
        for v in group[1:]:
            if v != v or better(v, acc):
                acc = v
        return acc if acc == acc else complex(math.nan, 0.0)

    return fold


# --- the kernel ---------------------------------------------------------------------


def reduction_op(kind, fold, data, shape, axes, dtype, out_dtype):
    """The reduction ``kind`` ("sum", "prod", "max", "min", "and", "or") of the
    elements ``data`` of an array of ``shape`` and ``dtype`` over ``axes``
    (sorted), as MLX's CPU kernel forms it, cast to ``out_dtype``.

    ``fold`` is the reduction of one run in its plainest form (the primitive's
    math, which SymPy elements take). complex64's max and min follow MLX's
    order on complex64 (``binary.complex_greater``; a nan wins, and reads nan+0j).
    A max or min over an empty axis raises the op's error (for a node built by hand).
    """
    empty = [d for d in axes if shape[d] == 0]
    if kind in ("max", "min") and empty:
        raise ValueError(f"[{kind}] Cannot {kind} reduce over axis {empty[0]} with size 0.")
    if kind in ("sum", "prod") and math.prod(shape[d] for d in axes) == 1:
        # Every reduced axis has size 1: MLX's op casts instead of reducing
        # (compute_reduce_shape's ``is_noop``), so a -0.0 stays -0.0.
        return cast(data, out_dtype)
    if list(axes) == list(range(len(axes))):
        # Leading axes (a bias gradient, say): output j folds column j of
        # the rows, top to bottom (reduce.cpp's strided_reduce order).
        inner = math.prod(shape[len(axes) :])
        # Every axis reduced: one run, the list itself (no fold writes to its run).
        runs = [data] if inner == 1 else [data[j::inner] for j in range(inner)]
    else:
        runs = groups(data, shape, axes)
    if dtype is _dt.complex64 and kind in ("max", "min"):
        if kind == "max":
            fold = _complex_extreme(complex_greater)
        else:
            fold = _complex_extreme(lambda a, b: complex_greater(b, a))
    if kind not in ("sum", "prod"):
        return cast(list(map(fold, runs)), out_dtype)
    numeric = fold
    if dtype in _ACCUMULATE_IN_FLOAT32:
        numeric = sum_float32 if kind == "sum" else prod_float32
        if kind == "sum" and dtype is _dt.float32:
            # Every partial sum of a run of n is at most sqrt(n) |x|. (hypot
            # is the cheapest exact bound found, at 2-3 times the sum: max and
            # min, struct's exponent bytes and hypot by chunks cost as much.)
            group = len(data) // max(len(runs), 1)
            if in_double(lambda: norm(data) * math.sqrt(group)):
                numeric = fold  # in double, rounded once by the store
    numeric = _by_segments(numeric, _segment(shape, axes))
    return cast(_scalar.apply(numeric, fold, runs), out_dtype)  # SymPy: exact
