"""Matrix products of chosen blocks and matrices: ``BlockMaskedMM``,
``GatherMM`` and ``SegmentedMM``.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (their rules, and
``gather_mm_grad``), mlx/backend/cpu/masked_mm.cpp (the CPU kernels) and
mlx/ops.cpp (``block_masked_mm``, ``gather_mm``, ``segmented_mm``: the
ops that broadcast and cast before they build the nodes).

MLX's CPU kernels multiply with BLAS's sgemm, whose float32 dot products
are formed left to right in a float32 accumulator on the build checked.
As mlxref's ``Matmul`` (mlxref/core/primitives/linalg.py), a float32
product whose partial sums cannot leave float32's range is formed in double
and rounded once (fast; the last bits may differ from MLX's); the others,
and the half types', follow MLX's float32 roundings step by step (``dot``).
"""

import math
from operator import mul

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.matmul import dot_float32, float32_steps, to_float32
from .base import Primitive, multilinear_jvp, vmap_by_examples

def _matrices(x):
    """The matrices of ``x`` (its last two axes) as lists of rows."""
    rows, cols = x.shape[-2], x.shape[-1]
    data = x.data()
    if rows * cols == 0:
        return [[[] for _ in range(rows)] for _ in range(math.prod(x.shape[:-2]))]
    return [[data[r:r + cols] for r in range(s, s + rows * cols, cols)]
            for s in range(0, len(data), rows * cols)]


def _dot_float64(row, col):
    return sum(map(mul, row, col)) if row else 0.0


def _dot_for(dtype, rows, cols):
    """The dot product an sgemm of these rows and columns is formed with:
    ``Matmul``'s choice (``float32_steps``)."""
    if float32_steps(dtype, [v for r in rows for v in r], [v for c in cols for v in c]):
        return dot_float32
    return _dot_float64


def _product(a_rows, b_rows, n, dtype):
    """One matrix product ``a @ b`` from their rows, a flat list."""
    cols = [[row[j] for row in b_rows] for j in range(n)]
    dot = _dot_for(dtype, a_rows, cols)
    return [dot(row, col) for row in a_rows for col in cols]


def gather_mm_grad(x, dy, lhs_indices, rhs_indices, is_sorted, batch_shape):
    """MLX's ``gather_mm_grad``: the gradient, for the weights ``w``, of
    ``gather_mm(x, w.T, lhs_indices, rhs_indices)``, of shape ``batch_shape +
    (N, K)`` (the transpose of w's). Sorted indices: one ``segmented_mm``
    over the runs of each matrix; otherwise a ``gather_mm`` added back into
    each matrix (shared by GatherMM's and GatherQMM's vjps)."""
    m, k, n = x.shape[-2], x.shape[-1], dy.shape[-1]
    count = math.prod(batch_shape)
    out_shape = tuple(batch_shape) + (n, k)
    if is_sorted:
        u32 = _dt.uint32
        segments = ops.zeros((count,), u32).at[ops.flatten(rhs_indices)].add(array(m, u32))
        segments = ops.cumsum(segments, 0)
        segments = ops.concatenate([array([0], u32), segments], 0)
        segments = ops.as_strided(segments, (count, 2), (1, 1), 0)
        return ops.reshape(ops.segmented_mm(ops.swapaxes(ops.flatten(dy, 0, -2), 0, 1),
                                            ops.flatten(x, 0, -2), segments), out_shape)
    dw = ops.gather_mm(ops.swapaxes(dy, -1, -2), x, None, lhs_indices)
    return ops.reshape(ops.zeros((count, n, k), dw.dtype).at[rhs_indices].add(dw), out_shape)


def scatter_back(g, x, lhs, direct):
    """The gradient of the matrices of ``x`` a gather read at ``lhs``, from the
    gathered gradient ``g``: ``g`` itself when ``direct`` (sorted indices
    that read each matrix once, in order), else ``g`` added back into a zero
    x at those indices (MLX's GatherMM and GatherQMM vjps)."""
    if direct:
        return g
    flat = ops.flatten(ops.zeros_like(x), 0, -3)
    return ops.reshape(flat.at[lhs].add(g), x.shape)


class GatherMM(Primitive):
    """``a[lhs_indices[i]] @ b[rhs_indices[i]]`` for every i: inputs ``a``
    (*A, M, K), ``b`` (*B, K, N) and the two uint32 index arrays of one shape
    S (flat indices into A and B); the output is S + (M, N). MLX's CPU
    kernel takes float32 only (its error when it evaluates anything else).

    MLX's vjp: for ``a``, the gathered product with bᵀ added back into a's
    matrices (or itself, for sorted indices that cover a once); for ``b``,
    ``gather_mm_grad``. None for the indices. MLX has no jvp and no vmap:
    mlxref's are the product rule and the per-example products.
    """

    def __init__(self, left_sorted=False, right_sorted=False):
        self.left_sorted = bool(left_sorted)
        self.right_sorted = bool(right_sorted)

    def params(self):
        return {"left_sorted": self.left_sorted, "right_sorted": self.right_sorted}

    def output_shapes(self, inputs):
        a, b, lhs = inputs[0], inputs[1], inputs[2]
        return [lhs.shape + (a.shape[-2], b.shape[-1])]

    def eval(self, inputs):
        a, b, lhs, rhs = inputs
        if a.dtype is not _dt.float32:
            raise RuntimeError("[GatherMM::eval] Currently only supports float32.")
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        if k == 0:
            return [[0.0] * (lhs.size * m * n)]
        am, bm = _matrices(a), _matrices(b)
        out = []
        for i, j in zip(lhs.data(), rhs.data()):
            if i >= len(am) or j >= len(bm):  # MLX's kernel reads past its buffers
                raise IndexError(f"[gather_mm] Index ({i}, {j}) out of range for {len(am)} "
                                 f"matrices of a and {len(bm)} of b.")
            out.extend(_product(am[i], bm[j], n, a.dtype))
        return [out]

    def vjp(self, primals, cotangents, argnums, outputs):
        a, b, lhs, rhs = primals
        (cot,) = cotangents
        m, k = cot.shape[-2], a.shape[-1]
        is_sorted = self.left_sorted or self.right_sorted
        no_broadcast = rhs.size * m * k == a.size
        out = []
        for arg in argnums:
            if arg == 0:
                g = ops.gather_mm(cot, ops.swapaxes(b, -1, -2), None, rhs,
                                  sorted_indices=is_sorted)
                out.append(scatter_back(g, a, lhs, is_sorted and no_broadcast))
            elif arg == 1:
                grad = gather_mm_grad(a, cot, lhs, rhs, is_sorted, b.shape[:-2])
                out.append(ops.swapaxes(grad, -1, -2))
            else:
                raise ValueError(
                    "[GatherMM] Cannot calculate VJP with respect to indices. "
                    "Use stop_gradient on indices to stop gradients from being computed.")
        return out

    def jvp(self, primals, tangents, argnums):
        """MLX has no jvp for GatherMM; the product is linear in a and in b."""
        if any(i > 1 for i in argnums):
            raise ValueError("[GatherMM] Cannot calculate JVP with respect to indices.")
        return multilinear_jvp(self, primals, tangents, argnums)

    def vmap(self, inputs, axes):
        """MLX has no vmap for GatherMM: ``vmap_by_examples``."""
        return vmap_by_examples(self, inputs, axes)


class SegmentedMM(Primitive):
    """``a[:, s:e] @ b[s:e, :]`` for each segment ``(s, e)`` of ``segments``
    (uint32, shape (..., 2)): inputs ``a`` (M, K), ``b`` (K, N), ``segments``;
    the output is segments.shape[:-1] + (M, N). An empty segment (e <= s)
    gives zeros. MLX defines no vjp, jvp or vmap for it; mlxref's are the
    derivatives of each segment's product and the per-example products."""

    mlx_has_vjp = False

    def output_shapes(self, inputs):
        a, b, segments = inputs
        return [segments.shape[:-1] + (a.shape[0], b.shape[1])]

    def eval(self, inputs):
        a, b, segments = inputs
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        a_data, b_data = a.data(), b.data()
        seg = segments.data()
        if a.dtype in (_dt.float16, _dt.bfloat16) and m > 1 and any(
                (s, e) != (0, k) for s, e in zip(seg[::2], seg[1::2]) if e > s):
            raise ValueError(
                f"[segmented_mm] {a.dtype.name} segments shorter than the inner dimension "
                f"{k} with more than one row: MLX's CPU kernel reads the rows after the "
                "first at the wrong place (its result is wrong); use float32.")
        out = []
        for i in range(0, len(seg), 2):
            start, end = seg[i], seg[i + 1]
            if end <= start:
                out.extend([0.0] * (m * n))
                continue
            if end > k:  # MLX's kernel reads past its buffers
                raise ValueError(f"[segmented_mm] Segment ({start}, {end}) is out of range "
                                 f"for an inner dimension of {k}.")
            rows = [a_data[r * k + start:r * k + end] for r in range(m)]
            cols = [b_data[start * n + j:end * n:n] for j in range(n)]
            dot = _dot_for(a.dtype, rows, cols)
            out.extend(dot(row, col) for row in rows for col in cols)
        return [out]

    @staticmethod
    def _columns(segments, k, dtype):
        """(..., 1, K) masks of the inner indices each segment sums over."""
        seg = ops.astype(segments, _dt.int32)
        ks = ops.arange(k, dtype=_dt.int32)
        inside = ops.logical_and(ops.greater_equal(ks, seg[..., 0:1]),
                                 ops.less(ks, seg[..., 1:2]))
        return ops.expand_dims(ops.astype(inside, dtype), -2)

    def vjp(self, primals, cotangents, argnums, outputs):
        """Segment i adds ``cot_i @ bᵀ`` to a's columns and ``aᵀ @ cot_i`` to
        b's rows inside it (a derivative MLX does not define)."""
        a, b, segments = primals
        (cot,) = cotangents
        mask = self._columns(segments, a.shape[1], a.dtype)
        axes = tuple(range(cot.ndim - 2))
        out = []
        for arg in argnums:
            if arg == 0:
                grad = ops.multiply(ops.matmul(cot, ops.transpose(b)), mask)
                out.append(ops.sum(grad, axes) if axes else grad)
            elif arg == 1:
                grad = ops.multiply(ops.matmul(ops.swapaxes(cot, -1, -2), a), mask)
                grad = ops.swapaxes(ops.sum(grad, axes) if axes else grad, -1, -2)
                out.append(grad)
            else:
                raise ValueError("[SegmentedMM] Cannot calculate VJP with respect to segments.")
        return out

    def jvp(self, primals, tangents, argnums):
        if any(i > 1 for i in argnums):
            raise ValueError("[SegmentedMM] Cannot calculate JVP with respect to segments.")
        return multilinear_jvp(self, primals, tangents, argnums)

    def vmap(self, inputs, axes):
        return vmap_by_examples(self, inputs, axes)


def _block_mask(x_rows, mask, block, rows, cols):
    """``x`` (a list of row lists) with the blocks its mask turns off zeroed
    (a bool mask) or scaled by the mask's value (a float mask's values other
    than 1), as MLX's ``mask_matrix``."""
    flat_mask, tcols = mask
    out = [list(r) for r in x_rows]
    for r in range(rows):
        for c in range(cols):
            v = flat_mask[(r // block) * tcols + c // block]
            if v != 1:
                out[r][c] = 0.0 if v is False or v is True else to_float32(out[r][c] * v)
    return out


class BlockMaskedMM(Primitive):
    """``a @ b`` with blocks of ``block_size`` masked: inputs ``a``, ``b``,
    then ``mask_out`` (over the output's blocks) if given, then ``mask_lhs``
    and ``mask_rhs`` (over a's and b's blocks) if given, all broadcast to the
    batch shape. A bool mask zeroes the blocks it marks False; a float mask
    multiplies each block by its value. MLX's CPU kernel takes float32 only.

    MLX's vjp (mlx/primitives.cpp ``BlockMaskedMM::vjp``), for a, b and the
    float masks, but for a float ``mask_out``: MLX's is the blocks' sums of
    the cotangent times the masked product, which is the gradient times the
    mask's value; mlxref's uses the product before the mask. MLX has no jvp
    and no vmap: mlxref's are the product rule (the result is linear in each
    input) and the per-example products.
    """

    def __init__(self, block_size, shared=(None, None)):
        self.block_size = block_size
        # a's and b's batch shapes where the op broadcast them along the batch
        # (else None): MLX's kernel then applies each batch's bool operand
        # mask to the one copy of the matrix those batches share
        self.shared = tuple(shared)

    def params(self):
        return {"block_size": self.block_size}

    @staticmethod
    def _check_shared(masks, batch, own, name, operand):
        """MLX's kernel masks a batch-broadcast operand in place, once per
        batch, in the buffer the broadcast batches share: bool masks that
        differ among them accumulate (a later batch sees the earlier ones'
        blocks masked too). That is silently wrong: an error here."""
        own = (1,) * (len(batch) - len(own)) + tuple(own)
        first = {}
        for i, mask in enumerate(masks):
            source, index, stride = 0, i, 1
            for d, o in zip(reversed(batch), reversed(own)):
                index, k = divmod(index, d)
                source += (k if o != 1 else 0) * stride
                stride *= o
            if first.setdefault(source, mask) != mask:
                raise ValueError(
                    f"[block_masked_mm] The boolean {name} differs along a batch that "
                    f"{operand} is broadcast along: MLX's CPU kernel masks the shared operand "
                    "once per batch (its result is wrong). Broadcast the operand first, or "
                    "use float masks.")

    def output_shapes(self, inputs):
        a, b = inputs[0], inputs[1]
        return [a.shape[:-1] + b.shape[-1:]]

    def eval(self, inputs):
        a, b = inputs[0], inputs[1]
        if a.dtype is not _dt.float32:
            raise RuntimeError("[BlockMaskedMM::eval] Currently only supports float32.")
        has_op_mask = len(inputs) > 3
        has_out_mask = len(inputs) in (3, 5)
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        count = math.prod(a.shape[:-2])
        if k == 0:
            return [[0.0] * (count * m * n)]
        bs = self.block_size
        am, bm = _matrices(a), _matrices(b)

        def masks(x):
            data, rows, cols = x.data(), x.shape[-2], x.shape[-1]
            if x.dtype is _dt.bool_:
                data = [bool(v) for v in data]
            return [(data[s:s + rows * cols], cols) for s in range(0, len(data), rows * cols)]

        lhs_masks = masks(inputs[-2]) if has_op_mask else None
        rhs_masks = masks(inputs[-1]) if has_op_mask else None
        if has_op_mask and inputs[-1].dtype is _dt.bool_:
            for own, found, name, operand in zip(self.shared, (lhs_masks, rhs_masks),
                                                 ("mask_lhs", "mask_rhs"), "ab"):
                if own is not None:
                    self._check_shared(found, a.shape[:-2], own, name, operand)
        out_masks = masks(inputs[2]) if has_out_mask else None
        out = []
        for i in range(count):
            ai, bi = am[i], bm[i]
            if has_op_mask:
                ai = _block_mask(ai, lhs_masks[i], bs, m, k)
                bi = _block_mask(bi, rhs_masks[i], bs, k, n)
            c = _product(ai, bi, n, a.dtype)
            if has_out_mask:
                rows = [c[r * n:(r + 1) * n] for r in range(m)]
                c = [v for row in _block_mask(rows, out_masks[i], bs, m, n) for v in row]
            out.extend(c)
        return [out]

    def vjp(self, primals, cotangents, argnums, outputs):
        """MLX's rule, step by step (its comment in mlx/primitives.cpp derives
        it): the operands' gradients are block-masked products with the
        cotangent; a float mask's is the sum over each block of the cotangent
        (or the unmasked operand gradient) times the masked value. As in
        MLX, only the last position in ``argnums`` decides whether an
        operand mask's gradient is wanted."""
        (cot,) = cotangents
        bs = self.block_size
        has_op_mask = len(primals) > 3
        has_out_mask = len(primals) in (3, 5)
        op_idx = 3 if has_out_mask else 2
        needs_lhs = needs_rhs = has_op_mask
        for arg in argnums:
            needs_lhs, needs_rhs = arg == op_idx, arg == op_idx + 1
        if ((needs_lhs and primals[op_idx].dtype is _dt.bool_)
                or (needs_rhs and primals[op_idx + 1].dtype is _dt.bool_)):
            raise ValueError(
                "[BlockMaskedMM] Cannot calculate VJP with respect to boolean masks. "
                "Use stop_gradient on masks to stop gradients from being computed.")

        def t(x):
            return ops.swapaxes(x, -1, -2)

        def expand_mask(mask, rows, cols):
            shape = mask.shape
            mask = ops.expand_dims(mask, (-3, -1))
            mask = ops.broadcast_to(mask, mask.shape[:-3] + (bs,) + mask.shape[-2:-1] + (bs,))
            mask = ops.reshape(mask, shape[:-2] + (shape[-2] * bs, shape[-1] * bs))
            return mask[..., :rows, :cols]

        def multiply_pad_reduce(p, q, pad_rows, pad_cols):
            r = ops.multiply(p, q)
            if pad_rows or pad_cols:
                widths = [(0, 0)] * (r.ndim - 2) + [(0, pad_rows), (0, pad_cols)]
                r = ops.pad(r, widths, constant_values=array(0, cot.dtype))
            r = ops.reshape(r, r.shape[:-2] + (r.shape[-2] // bs, bs, r.shape[-1] // bs, bs))
            return ops.sum(r, (-3, -1))

        m, n, k = cot.shape[-2], cot.shape[-1], primals[0].shape[-1]
        align_m, align_n, align_k = (-m) % bs, (-n) % bs, (-k) % bs
        a, b = primals[0], primals[1]
        out_mask = primals[2] if has_out_mask else None
        lhs_mask = primals[op_idx] if has_op_mask else None
        rhs_mask = primals[op_idx + 1] if has_op_mask else None
        unmasked = {}
        out = []
        for arg in argnums:
            if arg == 0:
                grad = ops.block_masked_mm(
                    cot, t(b), bs, lhs_mask if has_op_mask and not needs_lhs else None,
                    out_mask, t(rhs_mask) if has_op_mask else None)
                if needs_lhs:
                    unmasked[0] = grad
                    grad = ops.multiply(grad, expand_mask(lhs_mask, m, k))
                out.append(grad)
            elif arg == 1:
                grad = ops.block_masked_mm(
                    t(a), cot, bs, rhs_mask if has_op_mask and not needs_rhs else None,
                    t(lhs_mask) if has_op_mask else None, out_mask)
                if needs_rhs:
                    unmasked[1] = grad
                    grad = ops.multiply(grad, expand_mask(rhs_mask, k, n))
                out.append(grad)
            elif arg == 2 and has_out_mask:
                # the product before the output mask (MLX 0.32 multiplies by the
                # masked product: its gradient is off by the mask's own value)
                c = ops.block_masked_mm(a, b, bs, None, lhs_mask, rhs_mask)
                out.append(multiply_pad_reduce(cot, c, align_m, align_n))
            elif arg == op_idx and has_op_mask:
                if 0 not in unmasked:
                    unmasked[0] = ops.block_masked_mm(cot, t(b), bs, None, out_mask,
                                                      t(rhs_mask))
                out.append(multiply_pad_reduce(a, unmasked[0], align_m, align_k))
            elif arg == op_idx + 1 and has_op_mask:
                if 1 not in unmasked:
                    unmasked[1] = ops.block_masked_mm(t(a), cot, bs, None, t(lhs_mask),
                                                      out_mask)
                out.append(multiply_pad_reduce(b, unmasked[1], align_k, align_n))
            else:
                raise ValueError(
                    "[BlockMaskedMM] Cannot calculate VJP with respect to masks. "
                    "Use stop_gradient on masks to stop gradients from being computed.")
        return out

    def jvp(self, primals, tangents, argnums):
        return multilinear_jvp(self, primals, tangents, argnums)

    def vmap(self, inputs, axes):
        return vmap_by_examples(self, inputs, axes)
