"""The kernels of the gathered, block-masked and segmented matrix products.

Read alongside: mlx/backend/cpu/masked_mm.cpp (``mask_matrix``,
``segmented_mm`` and the ``eval_cpu`` of ``BlockMaskedMM``, ``GatherMM`` and
``SegmentedMM``) and mlx/backend/cpu/gemms/cblas.cpp (the sgemm they call).

MLX's CPU kernels multiply with BLAS's sgemm, whose float32 dot products
are formed left to right in a float32 accumulator on the build checked.
As mlxref's ``Matmul``, a float32 product whose partial sums cannot leave
float32's range is formed in double and rounded once (fast; the last bits
may differ from MLX's); the others, and the half types', follow MLX's
float32 roundings step by step (``matmul.dot_float32``).
Read next: mlxref/core/primitives/masked_mm.py (the primitives and their rules).
"""

import math
from operator import mul

from ... import dtypes as _dt
from .matmul import dot_float32, float32_steps, to_float32


def _matrices(data, shape):
    """The matrices of the row-major ``data`` of ``shape`` (its last two
    axes) as lists of rows."""
    rows, cols = shape[-2], shape[-1]
    if rows * cols == 0:
        return [[[] for _ in range(rows)] for _ in range(math.prod(shape[:-2]))]
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


def mask_matrix(x_rows, mask, block, rows, cols):
    """``x`` (a list of row lists) with the blocks its mask turns off zeroed
    (a bool mask) or scaled by the mask's value (a float mask's values other
    than 1), as MLX's ``mask_matrix``. ``mask`` is (its flat values, its
    number of columns)."""
    flat_mask, tcols = mask
    out = [list(r) for r in x_rows]
    for r in range(rows):
        for c in range(cols):
            v = flat_mask[(r // block) * tcols + c // block]
            if v != 1:
                out[r][c] = 0.0 if v is False or v is True else to_float32(out[r][c] * v)
    return out


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


def block_masked_mm(a_data, a_shape, b_data, b_shape, dtype, block_size, masks, shared):
    """``BlockMaskedMM::eval_cpu``: each batch's ``a @ b`` with its operands'
    blocks masked first and the product's blocks after. ``masks`` holds the
    (data, shape, dtype) of the inputs after a and b: ``mask_out`` if given,
    then ``mask_lhs`` and ``mask_rhs`` if given. ``shared`` holds a's and b's
    own batch shapes where they were broadcast along the batch (else None)."""
    if dtype is not _dt.float32:
        raise RuntimeError("[BlockMaskedMM::eval] Currently only supports float32.")
    has_op_mask = len(masks) > 1
    has_out_mask = len(masks) in (1, 3)
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    count = math.prod(a_shape[:-2])
    if k == 0:
        return [0.0] * (count * m * n)
    bs = block_size
    am, bm = _matrices(a_data, a_shape), _matrices(b_data, b_shape)

    def per_matrix(mask):
        data, shape, mask_dtype = mask
        rows, cols = shape[-2], shape[-1]
        if mask_dtype is _dt.bool_:
            data = [bool(v) for v in data]
        return [(data[s:s + rows * cols], cols) for s in range(0, len(data), rows * cols)]

    lhs_masks = per_matrix(masks[-2]) if has_op_mask else None
    rhs_masks = per_matrix(masks[-1]) if has_op_mask else None
    if has_op_mask and masks[-1][2] is _dt.bool_:
        for own, found, name, operand in zip(shared, (lhs_masks, rhs_masks),
                                             ("mask_lhs", "mask_rhs"), "ab"):
            if own is not None:
                _check_shared(found, a_shape[:-2], own, name, operand)
    out_masks = per_matrix(masks[0]) if has_out_mask else None
    out = []
    for i in range(count):
        ai, bi = am[i], bm[i]
        if has_op_mask:
            ai = mask_matrix(ai, lhs_masks[i], bs, m, k)
            bi = mask_matrix(bi, rhs_masks[i], bs, k, n)
        c = _product(ai, bi, n, dtype)
        if has_out_mask:
            rows = [c[r * n:(r + 1) * n] for r in range(m)]
            c = [v for row in mask_matrix(rows, out_masks[i], bs, m, n) for v in row]
        out.extend(c)
    return out


def gather_mm(a_data, a_shape, b_data, b_shape, dtype, lhs_indices, rhs_indices):
    """``GatherMM::eval_cpu``: a's matrix ``lhs_indices[i]`` times b's matrix
    ``rhs_indices[i]`` for every i, concatenated."""
    if dtype is not _dt.float32:
        raise RuntimeError("[GatherMM::eval] Currently only supports float32.")
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    if k == 0:
        return [0.0] * (len(lhs_indices) * m * n)
    am, bm = _matrices(a_data, a_shape), _matrices(b_data, b_shape)
    out = []
    for i, j in zip(lhs_indices, rhs_indices):
        if i >= len(am) or j >= len(bm):  # MLX's kernel reads past its buffers
            raise IndexError(f"[gather_mm] Index ({i}, {j}) out of range for {len(am)} "
                             f"matrices of a and {len(bm)} of b.")
        out.extend(_product(am[i], bm[j], n, dtype))
    return out


def segmented_mm(a_data, a_shape, b_data, b_shape, dtype, segments):
    """``SegmentedMM::eval_cpu``: ``a[:, s:e] @ b[s:e, :]`` for each segment
    ``(s, e)`` of the flat ``segments`` pairs, zeros for an empty one."""
    m, k, n = a_shape[0], a_shape[1], b_shape[1]
    if dtype in (_dt.float16, _dt.bfloat16) and m > 1 and any(
            (s, e) != (0, k) for s, e in zip(segments[::2], segments[1::2]) if e > s):
        raise ValueError(
            f"[segmented_mm] {dtype.name} segments shorter than the inner dimension "
            f"{k} with more than one row: MLX's CPU kernel reads the rows after the "
            "first at the wrong place (its result is wrong); use float32.")
    out = []
    for i in range(0, len(segments), 2):
        start, end = segments[i], segments[i + 1]
        if end <= start:
            out.extend([0.0] * (m * n))
            continue
        if end > k:  # MLX's kernel reads past its buffers
            raise ValueError(f"[segmented_mm] Segment ({start}, {end}) is out of range "
                             f"for an inner dimension of {k}.")
        rows = [a_data[r * k + start:r * k + end] for r in range(m)]
        cols = [b_data[start * n + j:end * n:n] for j in range(n)]
        dot = _dot_for(dtype, rows, cols)
        out.extend(dot(row, col) for row in rows for col in cols)
    return out
