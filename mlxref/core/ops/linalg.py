"""Matrix products and clip: matmul (a primitive), inner, outer, vecdot and clip (composed).

Read alongside: mlx/ops.cpp (``matmul``, ``tensordot``, ``inner``, ``outer``,
``vecdot``, ``clip``) and python/src/ops.cpp for the Python signatures.

``matmul`` does all the shape work before it builds the ``Matmul`` node: a 1-D
operand gets a unit dimension (``a`` in front, ``b`` at the end) that is
removed again from the result; a stack of matrices times one matrix is
flattened into one tall matrix (so the matrix is not copied per batch); any
other batch dimensions are broadcast against each other. The ``Matmul``
primitive then only multiplies two arrays of equal batch shape.
"""

import math

from .. import dtypes as _dt
from ..array import _fmt_shape, array
from ..primitives.base import make_array
from ..primitives.linalg import Matmul
from .common import astype, broadcast_shapes, broadcast_to, incompatible_arguments
from .creation import check_scalar_or_array
from .elementwise import conjugate, maximum, minimum, multiply
from .reduction import sum as _sum
from .shape import expand_dims, flatten, reshape, squeeze, transpose

__all__ = ["matmul", "inner", "outer", "vecdot", "clip"]

_SIGNATURES = {
    "matmul": "matmul(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array",
    "inner": "inner(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array",
    "outer": "outer(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array",
    "vecdot": "vecdot(a: array, b: array, /, *, axis: int = -1, stream: StreamOrDevice = None)"
    " -> array",
    "clip": "clip(a: array, /, a_min: scalar | array | None, a_max: scalar | array | None, "
    "*, stream: StreamOrDevice = None) -> array",
}


def _require_arrays(name, *args):
    for x in args:
        if not isinstance(x, array):
            raise incompatible_arguments(_SIGNATURES[name], args)


def matmul(a, b, /, *, stream=None):
    """``mx.matmul`` (``a @ b``): matrix product with numpy's rules for 1-D and batched inputs.

    Only floating point and complex inputs are supported, as in MLX.
    """

    _require_arrays("matmul", a, b)
    a_ndim, b_ndim = a.ndim, b.ndim
    if a_ndim == 0 or b_ndim == 0:
        raise ValueError(
            "[matmul] Got 0 dimension input. Inputs must have at least one dimension."
        )
    x = expand_dims(a, 0) if a_ndim == 1 else a
    y = expand_dims(b, 1) if b_ndim == 1 else b
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(
            f"[matmul] Last dimension of first input with shape {_fmt_shape(x.shape)} "
            "must match second to last dimension of second input with shape "
            f"{_fmt_shape(y.shape)}."
        )
    out_type = _dt.promote_types(a.dtype, b.dtype)
    if not out_type.is_inexact:
        raise ValueError(
            f"[matmul] Only inexact types are supported but {a.dtype.name} and "
            f"{b.dtype.name} were provided which results in {out_type.name}, which "
            "is not a floating point type."
        )
    # Cast only what needs it: x and y just feed the node (no new handles).
    if x.dtype is not out_type:
        x = astype(x, out_type)
    if y.dtype is not out_type:
        y = astype(y, out_type)

    if a_ndim > 2 and b_ndim <= 2:
        # A stack of matrices times one matrix: one tall matrix product, so
        # the matrix is not copied for every batch (MLX: flatten / unflatten).
        rows = x.shape[:-1]
        x = flatten(x, 0, -2)
        out = reshape(make_array(Matmul(), [x, y]), rows + (y.shape[-1],))
    else:
        if a_ndim > 2 or b_ndim > 2:
            batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
            x = broadcast_to(x, batch + x.shape[-2:])
            y = broadcast_to(y, batch + y.shape[-2:])
        out = make_array(Matmul(), [x, y])

    # Remove the unit dimensions added to 1-D operands.
    axes = []
    if a_ndim == 1:
        axes.append(out.ndim - 2)
    if b_ndim == 1:
        axes.append(out.ndim - 1)
    return squeeze(out, axes) if axes else out


def inner(a, b, /, *, stream=None):
    """``mx.inner``: sums of products over the last axes of ``a`` and ``b``.

    Composed as MLX's ``tensordot(a, b, [-1], [-1])``: ``a`` as a matrix of its
    rows, ``b`` transposed into a matrix of columns, one matmul, then the
    result reshaped to ``a.shape[:-1] + b.shape[:-1]``. (MLX also applies the
    identity transpose to ``a``; mlxref skips identity transposes.) A 0-d
    operand makes it a plain multiply.
    """

    _require_arrays("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    k = a.shape[-1]
    if k != b.shape[-1]:
        raise ValueError("[inner] a and b must have the same last dimension.")
    x = reshape(a, (math.prod(a.shape[:-1]), k))
    if b.ndim > 1:
        b = transpose(b, (b.ndim - 1,) + tuple(range(b.ndim - 1)))
    y = reshape(b, (k, math.prod(b.shape[1:])))
    return reshape(matmul(x, y), a.shape[:-1] + b.shape[1:])


def outer(a, b, /, *, stream=None):
    """``mx.outer``: every element of ``a`` (flattened) times every element of ``b``.

    Composed as in MLX: ``a`` reshaped to a column times ``b`` flattened. Any
    dtype works (it is a multiply, not a matmul).
    """

    _require_arrays("outer", a, b)
    return multiply(reshape(a, (a.size, 1)), flatten(b))


def vecdot(a, b, /, *, axis=-1, stream=None):
    """``mx.vecdot``: ``sum(conj(a) * b, axis)``, composed as MLX does.

    ``axis`` must name the same axis of both (counted from the end when
    negative); the rest broadcasts as in ``multiply``. As MLX 0.32.4: an
    axis outside ``a`` is an IndexError, one that names a different axis of
    ``b`` a ValueError.
    """
    if not isinstance(a, array) or not isinstance(b, array) or type(axis) is not int:
        kwargs = {"axis": axis} if axis != -1 else None
        raise incompatible_arguments(_SIGNATURES["vecdot"], (a, b), kwargs)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("[vecdot] inputs must be at least 1D.")
    ax = axis + a.ndim if axis < 0 else axis
    if ax < 0 or ax >= a.ndim:
        raise IndexError("[vecdot] axis is out of bounds.")
    if (axis + b.ndim != ax) if axis < 0 else (axis >= b.ndim):
        raise ValueError("[vecdot] axis is out of bounds.")
    if a.shape[ax] != b.shape[ax]:
        raise ValueError("[vecdot] a and b must have the same size along axis.")
    return _sum(multiply(conjugate(a), b), ax)


def clip(a, /, a_min, a_max, *, stream=None):
    """``mx.clip``: ``minimum(maximum(a, a_min), a_max)``; one bound may be None.

    The bounds are weakly typed when they are Python scalars, as in any
    binary op (``clip(int32 array, 2.5, 8)`` is float32).
    """
    if not isinstance(a, array):
        raise incompatible_arguments(_SIGNATURES["clip"], (a, a_min, a_max))
    if a_min is None and a_max is None:
        raise ValueError("At most one of a_min and a_max may be None")
    result = a
    if a_min is not None:
        result = maximum(result, check_scalar_or_array(a_min))
    if a_max is not None:
        result = minimum(result, check_scalar_or_array(a_max))
    return result
