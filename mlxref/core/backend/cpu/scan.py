"""The scans' kernel: running sums, products, maxima and minima in the dtype.

Read alongside: mlx/backend/cpu/scan.cpp (``contiguous_scan``,
``strided_scan``, and ``scan_dispatch``: each reduce type's ``op`` and
``init``).

MLX keeps a scan's running value in the output's dtype at every step, unlike
a reduction's float32 accumulator: ``scan_step`` is the ``op`` that rounds or
wraps each partial result as the dtype holds it. The walk along one run is
``Scan._scan`` in mlxref/core/primitives/reduction.py (a course task), which
``scan_op`` is given and runs over every run.
Read next: reduce.py (the runs), mlxref/core/primitives/reduction.py
(``Scan``'s rules).
"""

import math
import operator

from ... import dtypes as _dt
from ... import scalar as _scalar
from .binary import complex_greater, complex_logaddexp, logaddexp, logaddexp_float32
from .reduce import cast, groups, ungroup
from .rounding import rounding
from .unary import FLOAT32_KERNEL_DTYPES


def scan_init(reduce_type, dtype):
    """The first output of an exclusive scan (MLX's ``init`` in scan.cpp): the
    identity of the step, or for max and min the extreme of the dtype
    (-inf / inf for floats, MLX's complex limits for complex64)."""
    if reduce_type in ("sum", "prod"):
        return dtype.cast(0 if reduce_type == "sum" else 1)
    low = reduce_type != "min"  # max and logaddexp start from the bottom
    if dtype is _dt.complex64:
        if reduce_type == "logaddexp":
            return complex(-math.inf, 0.0)
        return complex(-math.inf, -math.inf) if low else complex(math.inf, math.inf)
    if dtype.is_inexact:
        return -math.inf if low else math.inf
    if dtype is _dt.bool_:
        return not low
    info = _dt.iinfo(dtype)
    return info.min if low else info.max


def _extreme_step(kind, dtype):
    """One step of cummax / cummin as scan.cpp's ``op`` takes it in ``dtype``:
    the new element ``v`` unless it loses to the running value ``acc``
    (``x < y ? y : x`` for max: a tie keeps the new element, so ``[0.0, -0.0]``
    gives ``-0.0``). In the real float dtypes a nan on either side gives nan.
    (MLX 0.32.4 gives 0.0 there in float16 and bfloat16: its
    ``numeric_limits<float16_t>::quiet_NaN()`` is not specialised; mlxref
    keeps the nan.) complex64 compares real parts, then imaginary parts,
    with no nan rule, as MLX. SymPy elements of unknown order: ``sympy.Max`` /
    ``Min``."""
    if dtype is _dt.complex64:
        def less(a, b):
            return complex_greater(b, a)
    else:
        less = operator.lt
    if kind == "max":
        def plain(acc, v):
            return acc if less(v, acc) else v
        symbolic = "Max"
    else:
        def plain(acc, v):
            return v if less(v, acc) else acc
        symbolic = "Min"

    def step(acc, v):
        try:
            return plain(acc, v)
        except TypeError:
            return getattr(_scalar.sympy, symbolic)(acc, v)

    if not dtype.is_float:
        return step
    return lambda acc, v: math.nan if acc != acc or v != v else step(acc, v)


def _logaddexp_step(dtype, symbolic):
    """One step of logcumsumexp as scan.cpp's ``op``, MLX's elementwise
    ``LogAddExp``, computes it in ``dtype`` (float32, float16 and bfloat16:
    its float32 kernel, rounded at each step); ``symbolic`` on SymPy elements."""
    if dtype is _dt.complex64:
        return lambda acc, v: dtype.cast(complex_logaddexp(acc, v))
    if dtype in FLOAT32_KERNEL_DTYPES:
        rounded = rounding(dtype)

        def numeric(acc, v):
            return rounded(logaddexp_float32([acc], [v], dtype)[0])
    else:
        numeric = logaddexp

    def step(acc, v):
        if _scalar.is_symbolic(acc) or _scalar.is_symbolic(v):
            return symbolic(acc, v)
        return numeric(acc, v)

    return step


def scan_step(reduce_type, dtype, logaddexp_symbolic):
    """The function that combines the running value with the next element,
    as scan.cpp's ``op`` for ``reduce_type`` ("sum", "prod", "max", "min",
    "logaddexp": the elementwise LogAddExp, ``logaddexp_symbolic`` on SymPy
    elements) does in ``dtype``: every partial result is rounded as
    ``dtype`` holds it (float16 sums in float16, unlike a Reduce), so
    ``cumsum([65504, 65504, -65504])`` in float16 is ``[65504, inf, inf]``.
    Integers wrap the same whether at each step or at the end (the store);
    products keep only the bits the dtype has, so they stay small. cummax and
    cummin follow MLX's order on complex64 (``binary.complex_greater``)."""
    if reduce_type == "logaddexp":
        return _logaddexp_step(dtype, logaddexp_symbolic)
    if reduce_type in ("max", "min"):
        return _extreme_step(reduce_type, dtype)
    combine = operator.add if reduce_type == "sum" else operator.mul
    if reduce_type == "prod" and dtype.is_integer:
        bits = (1 << (8 * dtype.size)) - 1
        return lambda total, v: (total * v) & bits
    rounded = rounding(dtype)
    if rounded is None:
        return combine
    return lambda total, v: rounded(combine(total, v))


def scan_op(scan_row, step, reduce_type, data, shape, axis, dtype):
    """The scan of the elements ``data`` (of an array of ``shape``) along
    ``axis`` (None: the flattened array), in the output's ``dtype``: each run
    scanned by ``scan_row(run, init, step)`` from ``reduce_type``'s
    ``scan_init``, combining with ``step``."""
    rows = [data] if axis is None else groups(data, shape, (axis,))
    init = scan_init(reduce_type, dtype)
    if rows and rows[0] and _scalar.is_symbolic(rows[0][0]):
        # SymPy rows start from SymPy's number, so that the output is a
        # list of expressions from its first element on (``scalar.apply``
        # decides by the first element).
        init = _scalar.sympy.sympify(init)
    runs = [scan_row(row, init, step) for row in rows]
    if axis is None:
        return cast(runs[0], dtype)
    return cast(ungroup(runs, shape, (axis,)), dtype)
