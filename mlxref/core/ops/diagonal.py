"""Diagonals: diagonal, diag, trace.

Read alongside: mlx/ops.cpp (``diagonal``, ``diag``, ``trace``) and their
bindings in python/src/ops.cpp. As in MLX none of them is a primitive:

- ``diagonal`` is one ``Gather`` of the two axes at ``(i, i + offset)``,
  then a squeeze of the two gathered axes and a move of the diagonal to the
  end;
- ``diag`` of a vector is a ``Scatter`` of it into a square of zeros; of a
  matrix, its ``diagonal``;
- ``trace`` is the sum of the diagonal (after a cast to ``dtype``).

So their derivatives and batching are those of ``Gather``, ``Scatter`` and
``Reduce``: the cotangent of a diagonal is scattered back onto it, and a
``vmap`` of ``diag`` scatters each example into its own square.
"""

from .. import dtypes as _dt
from ..array import array
from .common import INT32_MAX, INT32_MIN, astype, incompatible_arguments, plain_ints
from .creation import arange, zeros
from .docs import shared_doc
from .indexing import gather, scatter
from .reduction import sum as _sum
from .shape import moveaxis, reshape, squeeze

__all__ = ["diagonal", "diag", "trace"]

_SIGNATURES = {
    "diagonal": "diagonal(a: array, offset: int = 0, axis1: int = 0, axis2: int = 1, "
    "stream: StreamOrDevice = None) -> array",
    "diag": "diag(a: array, /, k: int = 0, *, stream: StreamOrDevice = None) -> array",
    "trace": "trace(a: array, /, offset: int = 0, axis1: int = 0, axis2: int = 1, "
    "dtype: Dtype | None = None, *, stream: StreamOrDevice = None) -> array",
}
_DEFAULTS = {"offset": 0, "axis1": 0, "axis2": 1, "k": 0, "dtype": None}


def _check_args(op, a, **optional):
    """The binding's type checks: ``a`` an array, every other argument a C int
    (nanobind takes a bool as an int, as Python does). The message lists the
    arguments that differ from their defaults as keywords."""
    ints = [v for k, v in optional.items() if k != "dtype"]
    dtype = optional.get("dtype")
    if (isinstance(a, array)
            and all(isinstance(v, int) and INT32_MIN <= v <= INT32_MAX for v in ints)
            and (dtype is None or isinstance(dtype, _dt.Dtype))):
        return
    given = {k: v for k, v in optional.items()
             if not (type(v) is type(_DEFAULTS[k]) and v == _DEFAULTS[k])}
    raise incompatible_arguments(_SIGNATURES[op], (a,), given)


def _diagonal_axes(op, a, axis1, axis2):
    """MLX's checks for ``diagonal`` and ``trace``: the two axes, made non-negative."""
    ndim = a.ndim
    if ndim < 2:
        raise ValueError(
            f"[{op}] Array must have at least two dimensions, but got {ndim} dimensions."
        )
    axes = []
    for name, axis in (("axis1", axis1), ("axis2", axis2)):
        ax = axis + ndim if axis < 0 else axis
        if not 0 <= ax < ndim:
            raise IndexError(f"[{op}] Invalid {name} {axis} for array with {ndim} dimensions.")
        axes.append(ax)
    if axes[0] == axes[1]:
        raise ValueError(f"[{op}] axis1 and axis2 cannot be the same axis")
    return axes


@shared_doc
def diagonal(a, offset=0, axis1=0, axis2=1, stream=None):
    """``mx.diagonal``: the elements ``a[..., i, ..., i + offset, ...]`` on the diagonal of each 2-D slice over ``axis1`` and ``axis2``, as a new last axis.

    The other axes keep their order, in front. ``offset`` > 0 is above the main
    diagonal, < 0 below it; an ``offset`` past the edge gives an empty
    diagonal. As MLX builds it: one ``Gather`` of the two axes at ``(i, i +
    offset)``, a squeeze, and a move of the diagonal to the end.

    Arguments:
    - ``a``: an array of at least two dimensions.
    - ``offset``: the diagonal's offset from the main one (default: 0).
    - ``axis1``: the axis of the first index (default: 0).
    - ``axis2``: the axis of the second index (default: 1).

    Errors: ``ValueError`` for fewer than two dimensions (MLX: "[diagonal] Array
    must have at least two dimensions, but got 1 dimensions.") or the same axis
    twice ("[diagonal] axis1 and axis2 cannot be the same axis"); ``IndexError``
    for an axis out of range ("[diagonal] Invalid axis2 2 for array with 2
    dimensions.").

    >>> mx.diagonal(mx.arange(9).reshape(3, 3), 1)
    array([1, 5], dtype=int32)
    >>> mx.diagonal(mx.arange(8).reshape(2, 2, 2), 0, 1, 2)
    array([[0, 3],
           [4, 7]], dtype=int32)
    """
    offset, axis1, axis2 = plain_ints(offset), plain_ints(axis1), plain_ints(axis2)
    _check_args("diagonal", a, offset=offset, axis1=axis1, axis2=axis2)
    ax1, ax2 = _diagonal_axes("diagonal", a, axis1, axis2)
    start1, start2 = max(-offset, 0), max(offset, 0)
    size = max(min(a.shape[ax1] - start1, a.shape[ax2] - start2), 0)
    indices = [arange(start1, start1 + size), arange(start2, start2 + size)]
    window = list(a.shape)
    window[ax1] = window[ax2] = 1
    out = gather(a, indices, [ax1, ax2], window, "diagonal")
    return moveaxis(squeeze(out, (ax1 + 1, ax2 + 1)), 0, -1)


@shared_doc
def diag(a, /, k=0, *, stream=None):
    """``mx.diag``: a 1-D ``a`` placed on diagonal ``k`` of a square matrix of zeros, or the diagonal ``k`` of a 2-D ``a``.

    The square has side ``len(a) + |k|``. As MLX builds it: a vector is a
    ``Scatter`` into zeros; a matrix gives its ``diagonal``.

    Arguments:
    - ``a``: a 1-D or 2-D array.
    - ``k``: the diagonal: {diagonals}

    Errors: ``ValueError`` for another number of dimensions (MLX: "[diag] array
    must be 1-D or 2-D, got array with 3 dimensions.").

    >>> mx.diag(mx.array([1, 2]), 1)
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]], dtype=int32)
    >>> mx.diag(mx.arange(9).reshape(3, 3))
    array([0, 4, 8], dtype=int32)
    """
    k = plain_ints(k)
    _check_args("diag", a, k=k)
    if a.ndim == 1:
        n = a.size + abs(k)
        out = zeros((n, n), a.dtype)
        if a.size == 0:
            return out  # nothing to place (and MLX's scatter refuses a 0 x 0 array)
        start1, start2 = max(0, -k), max(0, k)
        indices = [arange(start1, start1 + a.size, dtype=_dt.uint32),
                   arange(start2, start2 + a.size, dtype=_dt.uint32)]
        return scatter(out, indices, reshape(a, (a.size, 1, 1)), [0, 1], "diag")
    if a.ndim == 2:
        return diagonal(a, k, 0, 1)
    raise ValueError(f"[diag] array must be 1-D or 2-D, got array with {a.ndim} dimensions.")


@shared_doc
def trace(a, /, offset=0, axis1=0, axis2=1, dtype=None, *, stream=None):
    """``mx.trace``: the sum of the diagonal at ``offset`` of each 2-D slice of ``a`` over ``axis1`` and ``axis2``.

    ``sum(diagonal(a, offset, axis1, axis2), -1)``, the diagonal cast to
    ``dtype`` (default: ``a``'s) before summing, so that the sum's own rule then
    widens small integers and bools to int32, as MLX's does.

    Arguments:
    - ``a``: an array of at least two dimensions.
    - ``offset``: the diagonal's offset from the main one (default: 0).
    - ``axis1``: the axis of the first index (default: 0).
    - ``axis2``: the axis of the second index (default: 1).
    - ``dtype``: the dtype the diagonal is cast to before the sum (default: ``a``'s).

    Errors: those of ``diagonal``, named for trace (MLX: "[trace] Array must
    have at least two dimensions, but got 1 dimensions.").

    >>> mx.trace(mx.arange(9).reshape(3, 3))
    array(12, dtype=int32)
    >>> mx.trace(mx.array([[True, True], [False, True]]))
    array(2, dtype=int32)
    """
    offset, axis1, axis2 = plain_ints(offset), plain_ints(axis1), plain_ints(axis2)
    _check_args("trace", a, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype)
    _diagonal_axes("trace", a, axis1, axis2)
    d = diagonal(a, offset, axis1, axis2)
    return _sum(astype(d, a.dtype if dtype is None else dtype), -1)
