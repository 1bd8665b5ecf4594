"""The matrix product primitive.

Read alongside: mlx/primitives.h (``Matmul``) and mlx/ops.cpp (``matmul``),
which promotes 1-D operands and broadcasts the batch dimensions before it
builds the node, so the primitive only ever sees two arrays of shapes
``(*batch, M, K)`` and ``(*batch, K, N)`` with the same ``batch``.

``eval`` dominates the cost of training anything with mlxref, so it is written
for speed in plain Python: per batch, the columns of ``B`` are sliced out once
and every output element is ``sum(map(mul, row, column))``. (Measured on 64x64:
this is about twice as fast as ``sum(x * y for ...)`` and three times as fast as
accumulating rows ``axpy``-style.) It needs only ``*`` and ``+``, so SymPy
expressions work too.

What MLX's CPU build stores (checked against it): each output element is the
dot product formed left to right in a float32 accumulator, each product and
each partial sum rounded to float32, for float32, float16 and bfloat16 inputs
(the half types' products are exact in float32). mlxref forms a float32 dot
product in double and rounds it once (the store), which is the fast path and
differs from MLX only in the last bits; it follows MLX's roundings exactly
(``_dot_float32``) for the half types and whenever a partial sum could leave
float32's range, where they decide the result: ``[3e38, 3e38, -3e38] @ [1, 1,
1]`` is inf in MLX, and ``[1e20, -1e20] @ [1e20, 1e20]`` nan.
"""

import array as _pyarray
import math
from operator import mul

from .. import dtypes as _dt
from .. import ops
from .base import FLOAT32_SAFE, Primitive, make_array, norm


def _dot_float32(row, col):
    """``row · col`` as MLX's CPU kernel forms it: each product rounded to
    float32, then added left to right into a float32 accumulator (a
    one-element ``array('f')`` does each rounding, as C's cast)."""
    cell = _pyarray.array("f", (0.0,))
    acc = 0.0
    for u, v in zip(row, col):
        cell[0] = u * v
        cell[0] = acc + cell[0]
        acc = cell[0]
    return acc


class Matmul(Primitive):
    """``a @ b`` for ``a`` of shape (*batch, M, K) and ``b`` of shape (*batch, K, N)."""

    def output_shapes(self, inputs):
        a, b = inputs
        return [a.shape[:-1] + b.shape[-1:]]

    def vjp(self, primals, cotangents, argnums, outputs):
        """``cot @ bᴴ`` for ``a`` (M x N times N x K) and ``aᴴ @ cot`` for ``b``.

        ᴴ is the conjugate transpose (the plain transpose for real arrays):
        MLX's convention for complex inputs. Transposes swap the last two axes
        only; the batch axes are equal, so nothing needs un-broadcasting here
        (``Broadcast.vjp`` does that for the batch axes the op broadcast).
        """
        a, b = primals
        (cot,) = cotangents
        return [
            ops.matmul(cot, ops.swapaxes(ops.conjugate(b), -1, -2)) if i == 0
            else ops.matmul(ops.swapaxes(ops.conjugate(a), -1, -2), cot)
            for i in argnums
        ]

    def jvp(self, primals, tangents, argnums):
        """The product rule: ``t_a @ b + a @ t_b`` (a term per input with a tangent)."""
        a, b = primals
        terms = [
            ops.matmul(t, b) if i == 0 else ops.matmul(a, t) for i, t in zip(argnums, tangents)
        ]
        return [terms[0] if len(terms) == 1 else ops.add(terms[0], terms[1])]

    def vmap(self, inputs, axes):
        """MLX's Matmul::vmap: each batched operand's batch axis goes to the
        front, and ``ops.matmul`` broadcasts it against the other operand's
        batch dimensions (an unbatched operand is shared by every example).
        The result is batched on axis 0.
        """
        a, b = inputs
        if axes[0] is None and axes[1] is None:  # nothing batched: the node itself
            return [make_array(self, inputs)], [None]
        a, b = (x if ax is None else ops.moveaxis(x, ax, 0) for x, ax in zip(inputs, axes))
        return [ops.matmul(a, b)], [0]

    def eval(self, inputs):
        a, b = inputs
        *batch, m, k = a.shape
        n = b.shape[-1]
        count = math.prod(batch)
        if k == 0:  # an empty sum: zeros (MLX's matmul only takes floats)
            return [[0.0] * (count * m * n)]
        a_data, b_data = a.data(), b.data()
        a_step, b_step = m * k, k * n
        dtype = a.dtype
        # Every partial sum is at most |A| |B| (Cauchy-Schwarz, Frobenius norms).
        if dtype in (_dt.float16, _dt.bfloat16) or (
            dtype is _dt.float32 and not norm(a_data) * norm(b_data) < FLOAT32_SAFE
        ):
            return [self._eval_float32(a_data, b_data, count, m, k, n)]
        out = []
        for i in range(count):
            a_start, b_start = i * a_step, i * b_step
            b_end = b_start + b_step
            if k == 1:  # an outer product: no sums to form
                row = b_data[b_start:b_end]
                # 0 + u * v, as MLX's accumulator starts from 0: -0.0 becomes 0.0.
                out.extend([0 + u * v for u in a_data[a_start : a_start + m] for v in row])
                continue
            # Column j of this batch's B: elements j, j + n, j + 2n, ...
            columns = [b_data[b_start + j : b_end : n] for j in range(n)]
            rows = [a_data[r : r + k] for r in range(a_start, a_start + a_step, k)]
            out.extend([sum(map(mul, row, col)) for row in rows for col in columns])
        return [out]

    @staticmethod
    def _eval_float32(a_data, b_data, count, m, k, n):
        """``eval`` with MLX's float32 roundings (``_dot_float32``): slower, exact."""
        out = []
        for i in range(count):
            b_start = i * k * n
            columns = [b_data[b_start + j : b_start + k * n : n] for j in range(n)]
            for r in range(i * m * k, (i + 1) * m * k, k):
                row = a_data[r : r + k]
                out.extend([_dot_float32(row, col) for col in columns])
        return out
