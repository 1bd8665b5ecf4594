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
"""

import math
from operator import mul

from .. import ops
from .base import Primitive, make_array


class Matmul(Primitive):
    """``a @ b`` for ``a`` of shape (*batch, M, K) and ``b`` of shape (*batch, K, N)."""

    def output_shapes(self, inputs):
        a, b = inputs
        return [a.shape[:-1] + b.shape[-1:]]

    def vjp(self, primals, cotangents, argnums, outputs):
        """``cot @ bᵀ`` for ``a`` (M x N times N x K) and ``aᵀ @ cot`` for ``b``.

        Transposes swap the last two axes only; the batch axes are equal, so
        nothing needs un-broadcasting here (``Broadcast.vjp`` does that for
        the batch axes the op broadcast).
        """
        a, b = primals
        (cot,) = cotangents
        return [
            ops.matmul(cot, ops.swapaxes(b, -1, -2)) if i == 0
            else ops.matmul(ops.swapaxes(a, -1, -2), cot)
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
        out = []
        for i in range(count):
            a_start, b_start = i * a_step, i * b_step
            b_end = b_start + b_step
            if k == 1:  # an outer product: no sums to form
                row = b_data[b_start:b_end]
                out.extend([u * v for u in a_data[a_start : a_start + m] for v in row])
                continue
            # Column j of this batch's B: elements j, j + n, j + 2n, ...
            columns = [b_data[b_start + j : b_end : n] for j in range(n)]
            rows = [a_data[r : r + k] for r in range(a_start, a_start + a_step, k)]
            out.extend([sum(map(mul, row, col)) for row in rows for col in columns])
        return [out]
