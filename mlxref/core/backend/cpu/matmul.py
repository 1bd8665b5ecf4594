"""Dot products in MLX's CPU kernels' order and type.

Read alongside: mlx/backend/cpu/gemms/ (the float32 products and sums) and
mlx/backend/cpu/matmul.cpp.
"""

import array as _pyarray
from operator import mul

from ... import dtypes as _dt
from .reduce import sum_float32
from .rounding import FLOAT32_SAFE, norm, rounding


to_float32 = rounding(_dt.float32)


def dot(row, col, rnd):
    """``row · col`` formed left to right from 0, each product and each
    partial sum rounded by ``rnd`` (a dtype's rounding): MLX's CPU kernels'
    order, in their type."""
    acc = 0
    for u, v in zip(row, col):
        acc = rnd(acc + rnd(u * v))
    return acc


def float32(v):
    """float32 rounding for numbers; SymPy expressions as they are."""
    return to_float32(v) if type(v) is float else v


def dot_float32(row, col):
    """``row · col`` as MLX's CPU kernel forms it: each product rounded to
    float32, then added left to right into a float32 accumulator.

    ``dot(row, col, float32)``, without a call per step: ``array("f")``
    rounds the products in C, and the float32 sum of a reduction adds them
    (``reduce.sum_float32``). SymPy elements take ``dot`` itself."""
    try:
        products = _pyarray.array("f", map(mul, row, col))
    except TypeError:  # SymPy expressions
        return dot(row, col, float32)
    return sum_float32(products)


def float32_steps(dtype, a_data, b_data):
    """Whether a product must follow MLX's float32 roundings step by step
    (``dot_float32``) rather than be formed in double and rounded once: for
    the half types, and for float32 when a partial sum could leave float32's
    range (every partial sum is at most |A| |B|: Cauchy-Schwarz)."""
    return dtype in (_dt.float16, _dt.bfloat16) or (
        dtype is _dt.float32 and not norm(a_data) * norm(b_data) < FLOAT32_SAFE)
