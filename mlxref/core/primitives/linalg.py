"""The matrix primitives: the matrix product, the fused ``c + a @ b``, and the inverse.

Read alongside: mlx/primitives.h (``Matmul``, ``AddMM``, ``Inverse``),
mlx/primitives.cpp (their rules), mlx/backend/cpu/inverse.cpp and
mlx/ops.cpp (``matmul``, ``addmm``),
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
(``dot_float32``) for the half types and whenever a partial sum could leave
float32's range, where they decide the result: ``[3e38, 3e38, -3e38] @ [1, 1,
1]`` is inf in MLX, and ``[1e20, -1e20] @ [1e20, 1e20]`` nan.
"""

import math
from operator import mul

from .. import ops
from ..array import array
from ..printing import format_shape
from ..backend.cpu.matmul import dot_float32, float32_steps, to_float32
from ..backend.cpu.rounding import rounding
from .base import Primitive, batch_size, make_array, move_batch_axis


class Matmul(Primitive):
    """``a @ b`` for ``a`` of shape (*batch, M, K) and ``b`` of shape (*batch, K, N)."""

    def output_shapes(self, inputs):
        a, b = inputs
        if a.shape[-1] != b.shape[-2]:
            # Only a shapeless compile's replay gets here (the op checks
            # first); MLX's kernel then reads past the end of its inputs.
            raise ValueError(
                f"[matmul] Last dimension of first input with shape {format_shape(a.shape)} "
                "must match second to last dimension of second input with shape "
                f"{format_shape(b.shape)}.")
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
        if float32_steps(a.dtype, a_data, b_data):
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
        """``eval`` with MLX's float32 roundings (``dot_float32``): slower, exact."""
        out = []
        for i in range(count):
            b_start = i * k * n
            columns = [b_data[b_start + j : b_start + k * n : n] for j in range(n)]
            for r in range(i * m * k, (i + 1) * m * k, k):
                row = a_data[r : r + k]
                out.extend([dot_float32(row, col) for col in columns])
        return out


def _scaled(x, factor):
    """``factor * x`` (a scalar of x's dtype times x), or ``x`` when factor is 1."""
    return x if factor == 1 else ops.multiply(array(factor, x.dtype), x)


class AddMM(Primitive):
    """``alpha * (a @ b) + beta * c`` for ``a`` (*batch, M, K), ``b`` (*batch, K, N)
    and ``c`` (*batch, M, N), in that input order (MLX's ``AddMM``).

    ``mx.addmm`` has already broadcast ``c`` to the output's shape. As BLAS's
    gemm, a ``beta`` of 0 does not read ``c`` at all (a nan there is ignored).
    """

    def __init__(self, alpha, beta):
        # C floats in MLX (``const float& alpha``): rounded to float32.
        self.alpha = to_float32(float(alpha))
        self.beta = to_float32(float(beta))

    def params(self):
        return {"alpha": self.alpha, "beta": self.beta}

    def output_shapes(self, inputs):
        a, b, _ = inputs
        return [a.shape[:-1] + b.shape[-1:]]

    def eval(self, inputs):
        a, b, c = inputs
        (product,) = Matmul().eval([a, b])
        if self.alpha != 1:
            product = [self.alpha * p for p in product]
        if self.beta == 0:
            return [product]
        c_data = c.data() if self.beta == 1 else [self.beta * v for v in c.data()]
        return [[p + v for p, v in zip(product, c_data)]]

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's rule: ``alpha cot @ bᵀ`` for ``a``, ``aᵀ @ alpha cot`` for ``b``,
        ``beta cot`` for ``c`` (transposes of the last two axes)."""
        a, b, _ = primals
        (cot,) = cotangents
        rules = {
            0: lambda: ops.matmul(_scaled(cot, self.alpha), ops.swapaxes(b, -1, -2)),
            1: lambda: ops.matmul(ops.swapaxes(a, -1, -2), _scaled(cot, self.alpha)),
            2: lambda: _scaled(cot, self.beta),
        }
        return [rules[i]() for i in argnums]

    def jvp(self, primals, tangents, argnums):
        """MLX's rule, the tangents' terms ``alpha t_a @ b``, ``alpha a @ t_b`` and
        ``beta t_c`` each added to the ones before (a product by ``addmm``), but
        scaled: MLX 0.32 leaves ``alpha`` and ``beta`` out of the tangent (its
        jvp is wrong unless both are 1)."""
        a, b, _ = primals
        out = None
        for i, t in zip(argnums, tangents):
            if i == 2:
                term = _scaled(t, self.beta)
                out = term if out is None else ops.add(out, term)
                continue
            x, y = (t, b) if i == 0 else (a, t)
            if out is None:
                out = _scaled(ops.matmul(x, y), self.alpha)
            else:
                out = ops.addmm(out, x, y, self.alpha, 1.0)
        return [out]

    def vmap(self, inputs, axes):
        """MLX's rule: each batched input's batch axis to the front, then
        ``addmm`` broadcasts the batch dimensions; batched on axis 0. When only
        ``c`` is batched MLX's rule fails ("input c must broadcast to the
        output shape"); mlxref broadcasts ``a`` along the batch first."""
        size = batch_size(inputs, axes)
        a, b, c = (x if ax is None else ops.moveaxis(x, ax, 0) for x, ax in zip(inputs, axes))
        if axes[0] is None and axes[1] is None:
            a = move_batch_axis(a, None, size)
        return [ops.addmm(c, a, b, self.alpha, self.beta)], [0]


def _triangle(n, upper, dtype):
    """A constant (n, n) mask of the upper or lower triangle, diagonal included."""
    rows = [[1 if (j >= i if upper else j <= i) else 0 for j in range(n)] for i in range(n)]
    return array(rows, dtype)


class Inverse(Primitive):
    """The inverse of each matrix in the last two axes (MLX's ``Inverse``).

    ``tri``: the matrix is triangular (``upper`` or lower) and only that
    triangle is read (``linalg.tri_inv``); the other triangle of the result
    is zero. A singular matrix raises MLX's RuntimeError when it is
    evaluated, with LAPACK's error code: the position (from 1) of the first
    zero pivot.

    How MLX's CPU build computes it: LAPACK's getrf and getri (LU with
    partial pivoting) on the row-major data read as column-major, which is
    the transpose; the inverse of the transpose, read back row-major, is the
    inverse. mlxref does the same pivoting on the transpose, written as one
    Gauss-Jordan elimination, rounding every step to the dtype (float32 or
    float64): the pivots, so the singular cases and their codes, are
    LAPACK's; the values agree to a few float32 ulps.
    """

    mlx_has_vjp = False

    def __init__(self, tri=False, upper=True):
        self.tri = bool(tri)
        self.upper = bool(upper)

    def params(self):
        return {"tri": self.tri, "upper": self.upper} if self.tri else {}

    def eval(self, inputs):
        (a,) = inputs
        n = a.shape[-1]
        data = a.data()
        rounded = rounding(a.dtype) or (lambda v: v)
        out = []
        for start in range(0, len(data), n * n):
            # The transpose (LAPACK's column-major view), masked to its triangle.
            m = [[data[start + j * n + i] for j in range(n)] for i in range(n)]
            if self.tri:
                # Column-major "upper" of the transpose is the lower triangle
                # of the matrix, and the other way round (MLX's uplo swap).
                m = [[v if (j >= i) != self.upper or i == j else 0.0 for j, v in enumerate(row)]
                     for i, row in enumerate(m)]
            inv = self._gauss_jordan(m, n, rounded)
            out.extend(inv[j][i] for i in range(n) for j in range(n))
        return [out]

    def _gauss_jordan(self, m, n, rounded):
        """The inverse of the n x n list of rows ``m``: ``[m | I]`` reduced to
        ``[I | m⁻¹]``. Partial pivoting (LAPACK's i?amax: the first largest
        magnitude at or below the diagonal), none for a triangular matrix
        (its pivots are its diagonal) or for symbolic elements."""
        aug = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(m)]
        numeric = all(isinstance(v, (int, float)) for row in m for v in row)
        for k in range(n):
            p = k
            if numeric and not self.tri:
                for i in range(k + 1, n):
                    if abs(aug[i][k]) > abs(aug[p][k]):
                        p = i
            if aug[p][k] == 0:
                what = "triangular inversion" if self.tri else "LU factorization"
                raise RuntimeError(
                    f"[Inverse::eval_cpu] {what} failed with error code {k + 1}"
                )
            aug[k], aug[p] = aug[p], aug[k]
            pivot = aug[k][k]
            aug[k] = [rounded(v / pivot) for v in aug[k]]
            for i in range(n):
                if i != k:  # (every row, as LAPACK updates them: a nan pivot spreads)
                    factor = aug[i][k]
                    aug[i] = [rounded(v - rounded(factor * w)) for v, w in zip(aug[i], aug[k])]
        return [row[n:] for row in aug]

    def _mask(self, x):
        """``x`` restricted to the triangle the primitive reads (all of it if not tri)."""
        if not self.tri:
            return x
        return ops.multiply(x, _triangle(x.shape[-1], self.upper, x.dtype))

    def vjp(self, primals, cotangents, argnums, outputs):
        """With ``B = A⁻¹`` the vjp is ``-Bᵀ G Bᵀ`` (restricted
        to the triangle read, for tri_inv). MLX 0.32 defines no vjp for
        Inverse ("Not implemented"); this is the derivative."""
        (cot,) = cotangents
        bt = ops.swapaxes(outputs[0], -1, -2)
        return [self._mask(ops.negative(ops.matmul(ops.matmul(bt, cot), bt)))]

    def jvp(self, primals, tangents, argnums):
        """``-B dA B`` with ``B = A⁻¹`` (dA restricted to the triangle read, for
        tri_inv). MLX 0.32 defines no jvp for Inverse; this is the derivative."""
        (t,) = tangents
        b = make_array(self, primals)
        return [ops.negative(ops.matmul(ops.matmul(b, self._mask(t)), b))]

    def vmap(self, inputs, axes):
        """The primitive inverts every matrix of a batch: the batch axis goes
        to the front (it must not be one of the last two) and stays there."""
        (x,), (ax,) = inputs, axes
        return [make_array(self, [ops.moveaxis(x, ax, 0)])], [0]
