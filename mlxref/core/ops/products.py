"""Tensor products composed from existing ops: ``tensordot`` and ``kron``.

Read alongside: mlx/ops.cpp (``tensordot``, ``kron``) and python/src/ops.cpp
for their argument forms. MLX composes both, and so does mlxref: tensordot is
a transpose and reshape of each operand to a matrix, one matmul, and a
reshape; kron is a multiply of two reshapes that interleave the axes. Their
derivatives are those of the ops they are made of.
Read next: mlxref/core/ops/einsum.py (the general contraction, also one matmul per step).
"""

from ..array import array
from .common import check_dims, incompatible_arguments, is_c_int
from .docs import shared_doc
from .elementwise import multiply
from .linalg import matmul
from .shape import reshape, transpose

__all__ = ["tensordot", "kron"]

_TENSORDOT = (
    "tensordot(a: array, b: array, /, axes: int | list[Sequence[int]] = 2, *, "
    "stream: StreamOrDevice = None) -> array"
)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool) and is_c_int(x)


def _contract(a, b, axes_a, axes_b):
    """MLX's ``tensordot(a, b, axes_a, axes_b)``: the free axes of ``a``, then
    the contracted ones, as one (free, contracted) matrix; ``b`` the other way
    round; a matmul; the free axes unfolded."""
    if len(axes_a) != len(axes_b):
        raise ValueError("[tensordot] axes must have the same size.")
    for ax, x in [(d, a) for d in axes_a] + [(d, b) for d in axes_b]:
        if not -x.ndim <= ax < x.ndim:
            # MLX indexes past its shape here ("SmallVector out of range").
            raise IndexError(f"[tensordot] Axis {ax} is out of bounds for an array with "
                             f"{x.ndim} dimensions.")
    csize = 1
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError("[tensordot] a and b must have the same shape on the contracted axes.")
        csize *= a.shape[i]
    contracted_a = {d % a.ndim for d in axes_a}
    contracted_b = {d % b.ndim for d in axes_b}
    free_a = [d for d in range(a.ndim) if d not in contracted_a]
    free_b = [d for d in range(b.ndim) if d not in contracted_b]
    size_a = size_b = 1
    for d in free_a:
        size_a *= a.shape[d]
    for d in free_b:
        size_b *= b.shape[d]
    out_shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    x = reshape(transpose(a, free_a + [d % a.ndim for d in axes_a]), (size_a, csize))
    y = reshape(transpose(b, [d % b.ndim for d in axes_b] + free_b), (csize, size_b))
    return reshape(matmul(x, y), out_shape)


@shared_doc
def tensordot(a, b, /, axes=2, *, stream=None):
    """``mx.tensordot``: the sum of the products of ``a`` and ``b`` over pairs of contracted axes: the last ``axes`` axes of ``a`` with the first ``axes`` of ``b``, or the axes listed in ``[axes_a, axes_b]``.

    The result has ``a``'s free axes, then ``b``'s. As MLX composes it: each
    operand transposed and reshaped to a matrix, one ``matmul``, a reshape; so
    integer operands fail as ``matmul``'s do.

    Arguments:
    - ``a``: the first array.
    - ``b``: the second array.
    - ``axes``: an int (how many trailing axes of ``a`` meet as many leading
      axes of ``b``) or two lists of axes, paired in order (default: 2).

    Errors: ``ValueError`` when contracted sizes differ (MLX: "[tensordot] a and
    b must have the same shape on the contracted axes."), for lists of different
    lengths ("[tensordot] axes must have the same size."), a negative int ("[tensordot]
    axis must be greater or equal to 0.") or one larger than either number of
    dimensions ("[tensordot] axis must be less than the number of dimensions of a
    and b.").

    >>> mx.tensordot(mx.ones((2, 3)), mx.ones((3, 4)), 1)
    array([[3, 3, 3, 3],
           [3, 3, 3, 3]], dtype=float32)
    >>> mx.tensordot(mx.arange(6.0).reshape(2, 3), mx.arange(6.0).reshape(3, 2), [[0, 1], [1, 0]])
    array(50, dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(b, array):
        raise incompatible_arguments(_TENSORDOT, (a, b, axes))
    if _is_int(axes):
        if axes < 0:
            raise ValueError("[tensordot] axis must be greater or equal to 0.")
        if axes > min(a.ndim, b.ndim):
            raise ValueError(
                "[tensordot] axis must be less than the number of dimensions of a and b.")
        return _contract(a, b, list(range(-axes, 0)), list(range(axes)))
    if not isinstance(axes, (list, tuple)) or not all(
        isinstance(x, (list, tuple)) and all(_is_int(v) for v in x) for x in axes
    ):
        raise incompatible_arguments(_TENSORDOT, (a, b, axes))
    if len(axes) != 2:
        raise ValueError("[tensordot] axes must be a list of two lists.")
    return _contract(a, b, list(axes[0]), list(axes[1]))


@shared_doc
def kron(a, b, *, stream=None):
    """``mx.kron``: the Kronecker product of ``a`` and ``b``: every element of ``a`` times the whole of ``b``, laid out block by block.

    The shorter shape is padded with leading 1s; the result's size on each axis
    is the product of the two sizes. As MLX composes it: ``a`` reshaped to put
    its axes at the even positions of 2 * ndim axes, ``b`` at the odd ones,
    multiplied (broadcasting makes every pair), and each pair of axes merged.

    Arguments:
    - ``a``: the first array.
    - ``b``: the second array.

    Errors: ``ValueError`` for an empty operand (MLX: "[kron] Input arrays
    cannot be empty.").

    >>> mx.kron(mx.array([1, 2]), mx.array([1, 10]))
    array([1, 10, 2, 20], dtype=int32)
    >>> mx.kron(mx.eye(2), mx.array([[1, 2], [3, 4]]))
    array([[1, 2, 0, 0],
           [3, 4, 0, 0],
           [0, 0, 1, 2],
           [0, 0, 3, 4]], dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(b, array):
        raise incompatible_arguments(
            "kron(a: array, b: array, *, stream: StreamOrDevice = None) -> array", (a, b))
    if a.size == 0 or b.size == 0:
        raise ValueError("[kron] Input arrays cannot be empty.")
    ndim = max(a.ndim, b.ndim)
    a_shape, b_shape, out_shape = [1] * (2 * ndim), [1] * (2 * ndim), [1] * ndim
    for k in range(1, a.ndim + 1):
        a_shape[2 * (ndim - k)] = a.shape[-k]
        out_shape[ndim - k] *= a.shape[-k]
    for k in range(1, b.ndim + 1):
        b_shape[2 * (ndim - k) + 1] = b.shape[-k]
        out_shape[ndim - k] *= b.shape[-k]
    check_dims("kron", out_shape)
    return reshape(multiply(reshape(a, tuple(a_shape)), reshape(b, tuple(b_shape))),
                   tuple(out_shape))
