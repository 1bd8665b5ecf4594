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
    incompatible_arguments, is_c_int
from .docs import shared_doc
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


@shared_doc
def block_masked_mm(a, b, /, block_size=64, mask_out=None, mask_lhs=None, mask_rhs=None, *,
                    stream=None):
    """``mx.block_masked_mm``: the matrix product ``a @ b`` in which whole ``block_size`` x ``block_size`` blocks of the output and of the operands are masked out (or scaled).

    ``mask_out`` has one entry per block of the output, ``mask_lhs`` per block
    of ``a`` and ``mask_rhs`` per block of ``b`` (each rounded up): a False (or
    0) block counts as zeros, a float mask scales its block. With no mask it is
    ``matmul``. Operands broadcast over batch axes as in ``matmul``; the result
    is a real floating type. One ``BlockMaskedMM`` node. MLX's CPU build takes
    float32 only (an error when evaluated).

    Arguments:
    - ``a``: the left operand (at least 1-D).
    - ``b``: the right operand (at least 1-D).
    - ``block_size``: 32 or 64 (default: 64).
    - ``mask_out``: a bool or float mask over the output's blocks (default: None).
    - ``mask_lhs``: a bool or float mask over ``a``'s blocks (default: None).
    - ``mask_rhs``: a bool or float mask over ``b``'s blocks (default: None).

    Errors: ``ValueError`` for another block size (MLX: "[block_masked_mm] Only
    block_sizes 32, 64 are supported.Got block size 16.") and for inner sizes
    that differ ("[block_masked_mm] Last dimension of first input with shape
    (4,2) must match second to last dimension of second input with shape
    (4,4).").

    >>> mx.block_masked_mm(mx.ones((2, 2)), mx.ones((2, 2)), 32, mx.array([[False]]))
    array([[0, 0],
           [0, 0]], dtype=float32)
    >>> mx.block_masked_mm(mx.ones((2, 2)), mx.ones((2, 2)), 32, None, mx.array([[2.0]]), mx.array([[3.0]]))
    array([[12, 12],
           [12, 12]], dtype=float32)
    """
    masks = (mask_out, mask_lhs, mask_rhs)
    if (not isinstance(a, array) or not isinstance(b, array) or type(block_size) is not int
            or not is_c_int(block_size)
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


@shared_doc
def gather_mm(a, b, /, lhs_indices=None, rhs_indices=None, *, sorted_indices=False,
              stream=None):
    """``mx.gather_mm``: the matrix products ``a[lhs_indices[i]] @ b[rhs_indices[i]]`` for every ``i``, where the indices pick matrices from the batch axes of ``a`` and ``b``.

    The two index arrays broadcast together and give the result's batch shape;
    where one is None, each matrix of that operand is taken in turn. With
    neither, it is ``matmul``. ``sorted_indices`` is a promise that the indices
    are sorted (MLX's GPU uses it; the values do not change). One ``GatherMM``
    node; an index out of range raises ``IndexError`` when evaluated (MLX reads
    out of bounds). MLX's CPU build takes float32 only (an error when evaluated).

    Arguments:
    - ``a``: the left operand (at least 1-D; its leading axes are the batch).
    - ``b``: the right operand (at least 1-D; its leading axes are the batch).
    - ``lhs_indices``: an integer array of flat indices into ``a``'s matrices (default: None).
    - ``rhs_indices``: an integer array of flat indices into ``b``'s matrices (default: None).
    - ``sorted_indices``: the indices are sorted, keyword-only (default: False).

    Errors: ``ValueError`` for float indices (MLX: "[gather_mm] Got indices with
    invalid dtype. Indices must be integral.") and for inner sizes that differ
    ("[gather_mm] Last dimension of first input with shape (2,2,3) must match
    second to last dimension of second input with shape (1,2,2).").

    >>> mx.gather_mm(mx.arange(8.0).reshape(2, 2, 2), mx.eye(2), mx.array([1, 0]))
    array([[[4, 5],
            [6, 7]],
           [[0, 1],
            [2, 3]]], dtype=float32)
    """
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


@shared_doc
def segmented_mm(a, b, /, segments, *, stream=None):
    """``mx.segmented_mm``: for each pair ``(s, e)`` in ``segments``, the product ``a[:, s:e] @ b[s:e, :]`` of the slices of the inner axis it names.

    The result has shape ``segments.shape[:-1] + (M, N)``; an empty segment
    gives zeros. One ``SegmentedMM`` node; the operands are cast to their
    floating result type.

    Arguments:
    - ``a``: an M x K matrix.
    - ``b``: a K x N matrix.
    - ``segments``: an integer array of shape (..., 2), each pair a start and an end on K.

    Errors: ``ValueError`` for operands that are not 2-D (MLX: "[segmented_mm]
    Batched matmul not supported"), ``segments`` not of shape (..., 2)
    ("[segmented_mm] The segments should have shape (..., 2) but (3) was
    provided."), float segments and integer operands ("[segmented_mm] Only real
    floating point types are supported ...").

    >>> mx.segmented_mm(mx.arange(8.0).reshape(2, 4), mx.ones((4, 1)), mx.array([[0, 2], [2, 4]]))
    array([[[1],
            [9]],
           [[5],
            [13]]], dtype=float32)
    """
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
