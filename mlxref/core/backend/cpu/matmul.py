"""The matrix product and ``c + a @ b``, and dot products in MLX's CPU
kernels' order and type.

Read alongside: mlx/backend/cpu/matmul.cpp (``Matmul::eval_cpu``,
``AddMM::eval_cpu``) and mlx/backend/cpu/gemms/ (the float32 products and
sums).

``matmul`` dominates the cost of training anything with mlxref, so it is
written for speed in plain Python: per batch, the columns of ``B`` are sliced
out once and every output element is ``sum(map(mul, row, column))``.
(Measured on 64x64: this is about twice as fast as ``sum(x * y for ...)`` and
three times as fast as accumulating rows ``axpy``-style.) Two shapes go
faster with the same additions: a matrix times a vector reads its rows from
one iterator (no slice per row), and for K <= 4 the per-output ``sum`` call
costs more than its terms, so K whole-matrix passes of ``map`` add the
products instead (``_matmul_axpy``). It needs only ``*`` and ``+``, so SymPy
expressions work too. Which float32 path runs is decided by the operands'
norms, remembered for long lists (``rounding.norm``): a training loop
multiplies by the same data every step, and its hypot would otherwise cost a
third of a matrix-vector product.

What MLX's CPU build stores (checked against it): each output element is the
dot product formed left to right in a float32 accumulator, each product and
each partial sum rounded to float32, for float32, float16 and bfloat16 inputs
(the half types' products are exact in float32). mlxref forms a float32 dot
product in double and rounds it once (the store), which is the fast path and
differs from MLX only in the last bits; it follows MLX's roundings exactly
(``dot_float32``) for the half types and whenever a partial sum could leave
float32's range, where they decide the result: ``[3e38, 3e38, -3e38] @ [1, 1,
1]`` is inf in MLX, and ``[1e20, -1e20] @ [1e20, 1e20]`` nan.
Read next: mlxref/core/primitives/linalg.py (``Matmul``, ``AddMM``: their rules).
"""

import array as _pyarray
import math
from itertools import chain, repeat
from operator import add, mul

from ... import dtypes as _dt
from ...scalar import is_symbolic
from .reduce import sum_float32
from .rounding import in_double, norm, rounding, unrounded


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
    range (every partial sum is at most |A| |B|: Cauchy-Schwarz). The norms
    of long operands are remembered (``rounding.norm``): a training loop
    multiplies by the same data every step."""
    return dtype in (_dt.float16, _dt.bfloat16) or (
        dtype is _dt.float32
        and not in_double(lambda: norm(a_data, remember=True) * norm(b_data, remember=True)))


# Up to this many terms per dot product, ``matmul`` adds whole matrices of
# products (``_matmul_axpy``) rather than calling ``sum`` per output element.
AXPY_MAX_K = 4


def matmul(a_data, b_data, a_shape, b_shape, dtype):
    """``a @ b`` as a flat list, for ``a`` of shape (*batch, M, K) and ``b`` of
    shape (*batch, K, N) (the same ``batch``: ``mx.matmul`` broadcast them)."""
    *batch, m, k = a_shape
    n = b_shape[-1]
    count = math.prod(batch)
    if k == 0:  # an empty sum: zeros (MLX's matmul only takes floats)
        return [0.0] * (count * m * n)
    a_step, b_step = m * k, k * n
    if float32_steps(dtype, a_data, b_data):
        return _matmul_float32(a_data, b_data, count, m, k, n)
    out = []
    for i in range(count):
        a_start, b_start = i * a_step, i * b_step
        a_end, b_end = a_start + a_step, b_start + b_step
        if k <= AXPY_MAX_K:
            out += _matmul_axpy(a_data[a_start:a_end], b_data[b_start:b_end], m, k, n)
        elif n == 1 and m and not (is_symbolic(a_data[a_start]) or is_symbolic(b_data[b_start])):
            # A matrix times a vector: the rows are read in turn from one
            # iterator, with no slice per row. ``map`` takes the column
            # first so that it stops after K elements of the row, not
            # K + 1; the products are ``v * u`` rather than ``u * v``, the
            # same numbers (IEEE's product, and Python's complex one,
            # commute).
            column = b_data[b_start:b_end]
            rows = iter(a_data[a_start:a_end]) if count > 1 else iter(a_data)
            out += [sum(map(mul, column, rows)) for _ in range(m)]
        else:
            # Column j of this batch's B: elements j, j + n, j + 2n, ...
            columns = [b_data[b_start + j : b_end : n] for j in range(n)]
            rows = [a_data[r : r + k] for r in range(a_start, a_end, k)]
            out += [sum(map(mul, row, col)) for row in rows for col in columns]
    return out


def _matmul_axpy(a_data, b_data, m, k, n):
    """``a @ b`` for a small K, as K whole-matrix passes: the running sums of
    all M x N outputs, plus a_ik * b_kj for k = 0, 1, ... in turn.

    Output (i, j) gets exactly the additions ``sum(map(mul, row, col))``
    performs, in its order: ``0 + p0`` (so -0.0 becomes 0.0, as MLX's
    accumulator starts from 0), then ``+ p1``, ``+ p2``... The passes are
    nested ``map``s, evaluated once at the end in C, with no Python call per
    output element (a ``sum`` call per output costs more than K <= 4 terms)."""
    sums = repeat(0, m * n)
    for t in range(k):
        # a_it repeated N times for each i (zip of N iterators over one
        # list), against row t of B repeated M times.
        a_column = a_data[t::k]
        sums = map(add, sums, map(mul, chain.from_iterable(zip(*[a_column] * n)),
                                  b_data[t * n : (t + 1) * n] * m))
    return list(sums)


def _matmul_float32(a_data, b_data, count, m, k, n):
    """``matmul`` with MLX's float32 roundings (``dot_float32``): slower, exact."""
    out = []
    for i in range(count):
        b_start = i * k * n
        columns = [b_data[b_start + j : b_start + k * n : n] for j in range(n)]
        for r in range(i * m * k, (i + 1) * m * k, k):
            row = a_data[r : r + k]
            out.extend([dot_float32(row, col) for col in columns])
    return out


def addmm(a_data, b_data, c_data, a_shape, b_shape, dtype, alpha, beta):
    """``alpha * (a @ b) + beta * c`` as a flat list, ``c`` of the product's
    shape. As BLAS's gemm, a ``beta`` of 0 does not read ``c`` at all (a nan
    there is ignored).

    For the float types the product is a float32 accumulator's before ``c``
    joins it, as in MLX's kernels (BLAS's ``sgemm`` for float32, the simd
    gemm's ``alpha * acc + beta * c`` in float32 for the half types): the
    product is rounded to float32, so are ``alpha`` and ``beta``'s products,
    and the store rounds their sum. So ``addmm(c, a, b)`` is ``a @ b + c``,
    bit for bit, as MLX's is for a transposed ``b`` (``nn.Linear``'s)."""
    product = matmul(a_data, b_data, a_shape, b_shape, dtype)
    accumulator = _dt.float32.store if dtype in _FLOAT32_ACCUMULATOR else unrounded
    product = accumulator(product)
    if alpha != 1:
        product = accumulator([alpha * p for p in product])
    if beta == 0:
        return product
    c_data = c_data if beta == 1 else accumulator([beta * v for v in c_data])
    return [p + v for p, v in zip(product, c_data)]


# The dtypes whose products MLX's CPU kernels accumulate in float32.
_FLOAT32_ACCUMULATOR = (_dt.float32, _dt.float16, _dt.bfloat16)
