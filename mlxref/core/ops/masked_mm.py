"""Matrix products of chosen blocks and matrices: ``block_masked_mm``,
``gather_mm``, ``segmented_mm``.

Read alongside: mlx/ops.cpp (``block_masked_mm``, ``gather_mm``,
``segmented_mm``, ``indices_or_default``: their checks and messages) and
python/src/ops.cpp (their signatures). Each does matmul's shape work (1-D
operands get a unit dimension that the result loses again), casts, then
builds one node (mlxref/core/primitives/masked_mm.py).
"""

from .. import dtypes as _dt
from ..array import array
from ..printing import format_shape
from ..primitives.base import make_array
from ..primitives.masked_mm import BlockMaskedMM, GatherMM, SegmentedMM
from .common import astype, broadcast_arrays, broadcast_shapes, broadcast_to, \
    incompatible_arguments
from .linalg import drop_vector_axes, matmul
from .quantized import indices_or_default
from .shape import expand_dims

__all__ = ["block_masked_mm", "gather_mm", "segmented_mm"]

_SIGNATURES = {
    "block_masked_mm": "block_masked_mm(a: array, b: array, /, block_size: int = 64, "
    "mask_out: array | None = None, mask_lhs: array | None = None, "
    "mask_rhs: array | None = None, *, stream: StreamOrDevice = None) -> array",
    "gather_mm": "gather_mm(a: array, b: array, /, lhs_indices: array | None = None, "
    "rhs_indices: array | None = None, "
    "*, sorted_indices: bool = False, stream: StreamOrDevice = None) -> array",
    "segmented_mm": "segmented_mm(a: array, b: array, /, segments: array, *, "
    "stream: StreamOrDevice = None) -> array",
}


def _operands(tag, a, b):
    """matmul's checks and casts, with ``tag``'s messages: the operands as
    matrices (a 1-D one gets a unit dimension) of their floating result type."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"[{tag}] Got 0 dimension input. Inputs must have at least one "
                         "dimension.")
    if a.ndim == 1:
        a = expand_dims(a, 0)
    if b.ndim == 1:
        b = expand_dims(b, 1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"[{tag}] Last dimension of first input with shape {format_shape(a.shape)} must "
            f"match second to last dimension of second input with shape "
            f"{format_shape(b.shape)}.")
    return (*_floating(tag, a, b),)


def _floating(tag, a, b):
    """a and b cast to their result type, which must be a real floating one."""
    out_type = _dt.result_type(a, b)
    if not _dt.issubdtype(out_type, _dt.floating):
        raise ValueError(
            f"[{tag}] Only real floating point types are supported but {a.dtype.name} and "
            f"{b.dtype.name} were provided which results in {out_type.name}, which is not "
            "a real floating point type.")
    return astype(a, out_type), astype(b, out_type), out_type


def block_masked_mm(a, b, /, block_size=64, mask_out=None, mask_lhs=None, mask_rhs=None, *,
                    stream=None):
    """``mx.block_masked_mm``: ``a @ b`` with masks over ``block_size`` blocks of
    the output (``mask_out``) and of the operands (``mask_lhs``, ``mask_rhs``):
    a False (or 0) block is zero, a float mask scales its block. With no mask
    it is ``matmul``. MLX's CPU build takes float32 only (an error when
    evaluated)."""
    masks = (mask_out, mask_lhs, mask_rhs)
    if (not isinstance(a, array) or not isinstance(b, array) or type(block_size) is not int
            or not all(m is None or isinstance(m, array) for m in masks)):
        given = {k: v for k, v in (("block_size", block_size), ("mask_out", mask_out),
                                   ("mask_lhs", mask_lhs), ("mask_rhs", mask_rhs))
                 if v is not None and not (k == "block_size" and v == 64)}
        raise incompatible_arguments(_SIGNATURES["block_masked_mm"], (a, b), given or None)
    if all(m is None for m in masks):
        return matmul(a, b)
    if block_size not in (32, 64):
        raise ValueError("[block_masked_mm] Only block_sizes 32, 64 are supported.Got block "
                         f"size {block_size}.")
    in_a_ndim, in_b_ndim = a.ndim, b.ndim
    a, b, out_type = _operands("block_masked_mm", a, b)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    # the batch shapes of operands broadcast along the batch (None if not)
    shared = tuple(None if x.shape[:-2] == batch else x.shape[:-2] for x in (a, b))
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    a = broadcast_to(a, batch + (m, k))
    b = broadcast_to(b, batch + (k, n))
    tm, tn, tk = (-(-d // block_size) for d in (m, n, k))

    def prepare(mask, rows, cols, dtype):
        return broadcast_to(astype(mask, dtype), batch + (rows, cols))

    inputs = [a, b]
    if mask_out is not None:
        if in_a_ndim == 1 or in_b_ndim == 1:
            axes = ([-2] if in_a_ndim == 1 else []) + ([-1] if in_b_ndim == 1 else [])
            mask_out = expand_dims(mask_out, axes)
        dtype = _dt.bool_ if mask_out.dtype is _dt.bool_ else out_type
        inputs.append(prepare(mask_out, tm, tn, dtype))
    if mask_lhs is not None or mask_rhs is not None:
        lhs = mask_lhs if mask_lhs is not None else array([True])
        rhs = mask_rhs if mask_rhs is not None else array([True])
        dtype = _dt.bool_ if lhs.dtype is _dt.bool_ and rhs.dtype is _dt.bool_ else out_type
        if in_a_ndim == 1:
            lhs = expand_dims(lhs, -2)
        if in_b_ndim == 1:
            rhs = expand_dims(rhs, -1)
        inputs += [prepare(lhs, tm, tk, dtype), prepare(rhs, tk, tn, dtype)]
    out = make_array(BlockMaskedMM(block_size, shared), inputs)
    return drop_vector_axes(out, in_a_ndim, in_b_ndim)


def gather_mm(a, b, /, lhs_indices=None, rhs_indices=None, *, sorted_indices=False,
              stream=None):
    """``mx.gather_mm``: ``a[lhs_indices[i]] @ b[rhs_indices[i]]`` for every i
    (indices into the matrices of a and b, broadcast together; each matrix
    in turn where one is None); with neither, ``matmul``. MLX's CPU build
    takes float32 only (an error when evaluated)."""
    if (not isinstance(a, array) or not isinstance(b, array)
            or not all(i is None or isinstance(i, array) for i in (lhs_indices, rhs_indices))
            or not isinstance(sorted_indices, bool)):
        given = {"sorted_indices": sorted_indices} if sorted_indices is not False else None
        raise incompatible_arguments(_SIGNATURES["gather_mm"], (a, b, lhs_indices, rhs_indices),
                                     given)
    if lhs_indices is None and rhs_indices is None:
        return matmul(a, b)
    in_a_ndim, in_b_ndim = a.ndim, b.ndim
    a, b, _ = _operands("gather_mm", a, b)
    lhs = indices_or_default("[gather_mm]", lhs_indices, a)
    rhs = indices_or_default("[gather_mm]", rhs_indices, b)
    lhs, rhs = broadcast_arrays(lhs, rhs)
    primitive = GatherMM(sorted_indices and rhs_indices is None,
                         sorted_indices and lhs_indices is None)
    out = make_array(primitive, [a, b, lhs, rhs])
    return drop_vector_axes(out, in_a_ndim, in_b_ndim)


def segmented_mm(a, b, /, segments, *, stream=None):
    """``mx.segmented_mm``: ``a[:, s:e] @ b[s:e, :]`` for each pair ``(s, e)``
    in ``segments`` (shape (..., 2)); the result has shape
    segments.shape[:-1] + (M, N)."""
    if not all(isinstance(x, array) for x in (a, b, segments)):
        raise incompatible_arguments(_SIGNATURES["segmented_mm"], (a, b, segments))
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("[segmented_mm] Batched matmul not supported")
    if segments.ndim < 1 or segments.shape[-1] != 2:
        raise ValueError("[segmented_mm] The segments should have shape (..., 2) but "
                         f"{format_shape(segments.shape)} was provided.")
    a, b, _ = _floating("segmented_mm", a, b)
    if not _dt.issubdtype(segments.dtype, _dt.integer):
        raise ValueError("[segmented_mm] Got segments with invalid dtype. Segments must be "
                         "integral.")
    if a.shape[1] != b.shape[0]:  # MLX reads past the smaller operand
        raise ValueError(f"[segmented_mm] The inner dimensions of a {format_shape(a.shape)} and "
                         f"b {format_shape(b.shape)} must match.")
    return make_array(SegmentedMM(), [a, b, astype(segments, _dt.uint32)])
