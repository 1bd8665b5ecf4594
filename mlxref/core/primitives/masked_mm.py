"""Matrix products of chosen blocks and matrices: ``GatherMM``,
``SegmentedMM`` and ``BlockMaskedMM``.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (their rules, and
``gather_mm_grad``) and mlx/ops.cpp (``block_masked_mm``, ``gather_mm``,
``segmented_mm``: the ops that broadcast and cast before they build the nodes).
Read next: mlxref/core/backend/cpu/masked_mm.py (the CPU kernels).
"""

import math

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.masked_mm import block_masked_mm, gather_mm, segmented_mm
from .base import Primitive, multilinear_jvp, no_gradient_error, vmap_by_examples


class GatherMM(Primitive):
    """``a[lhs_indices[i]] @ b[rhs_indices[i]]`` for every i: inputs ``a``
    (*A, M, K), ``b`` (*B, K, N) and the two uint32 index arrays of one shape
    S (flat indices into A and B); the output is S + (M, N).

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
        return [gather_mm(a.data(), a.shape, b.data(), b.shape, a.dtype, lhs.data(),
                          rhs.data())]

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
                raise no_gradient_error("GatherMM", "VJP")
        return out

    def jvp(self, primals, tangents, argnums):
        """MLX has no jvp for GatherMM; the product is linear in a and in b."""
        if any(i > 1 for i in argnums):
            raise ValueError("[GatherMM] Cannot calculate JVP with respect to indices.")
        return multilinear_jvp(self, primals, tangents, argnums)

    vmap = vmap_by_examples  # MLX has none


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
        return [segmented_mm(a.data(), a.shape, b.data(), b.shape, a.dtype, segments.data())]

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

    vmap = vmap_by_examples


class BlockMaskedMM(Primitive):
    """``a @ b`` with blocks of ``block_size`` masked: inputs ``a``, ``b``,
    then ``mask_out`` (over the output's blocks) if given, then ``mask_lhs``
    and ``mask_rhs`` (over a's and b's blocks) if given, all broadcast to the
    batch shape. A bool mask zeroes the blocks it marks False; a float mask
    multiplies each block by its value.

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

    def output_shapes(self, inputs):
        a, b = inputs[0], inputs[1]
        return [a.shape[:-1] + b.shape[-1:]]

    def eval(self, inputs):
        a, b = inputs[0], inputs[1]
        masks = [(m.data(), m.shape, m.dtype) for m in inputs[2:]]
        return [block_masked_mm(a.data(), a.shape, b.data(), b.shape, a.dtype,
                                self.block_size, masks, self.shared)]

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
                raise no_gradient_error("BlockMaskedMM", "VJP", "masks")
        return out

    jvp = multilinear_jvp
    vmap = vmap_by_examples


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
