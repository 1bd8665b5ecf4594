"""Matrix products and clip: matmul and addmm (primitives), inner, outer,
vecdot and clip (composed); and the inverses ``mx.linalg`` offers (``inv``,
``tri_inv``).

Read alongside: mlx/ops.cpp (``matmul``, ``addmm``, ``tensordot``, ``inner``,
``outer``, ``vecdot``, ``clip``), mlx/linalg.cpp (``inv_impl``) and
python/src/ops.cpp and python/src/linalg.cpp for the Python signatures.

``matmul`` does all the shape work before it builds the ``Matmul`` node: a 1-D
operand gets a unit dimension (``a`` in front, ``b`` at the end) that is
removed again from the result; a stack of matrices times one matrix is
flattened into one tall matrix (so the matrix is not copied per batch); any
other batch dimensions are broadcast against each other. The ``Matmul``
primitive then only multiplies two arrays of equal batch shape.
Read next: mlxref/core/primitives/linalg.py (``Matmul``, ``AddMM``, ``Inverse``).
"""

import math

from .. import dtypes as _dt
from ..array import array
from ..printing import format_shape
from ..primitives.base import make_array
from ..primitives.linalg import AddMM, Inverse, Matmul
from ..transforms.tape import in_dynamic_tracing
from .common import (astype, broadcast_shapes, broadcast_to, dynamic_broadcast_arrays,
                     incompatible_arguments)
from .creation import check_scalar_or_array
from .elementwise import add, conjugate, maximum, minimum, multiply
from .reduction import sum as _sum
from .shape import expand_dims, flatten, reshape, squeeze, transpose

# inv and tri_inv are mx.linalg's (mlxref/core/linalg.py), not mx's.
__all__ = ["matmul", "addmm", "inner", "outer", "vecdot", "clip"]

_SIGNATURES = {
    "matmul": "matmul(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array",
    "addmm": "addmm(c: array, a: array, b: array, /, alpha: float = 1.0, beta: float = 1.0,  "
    "*, stream: StreamOrDevice = None) -> array",
    "inv": "inv(a: array, *, stream: StreamOrDevice = None) -> array",
    "tri_inv": "tri_inv(a: array, upper: bool = False, *, stream: StreamOrDevice = None) -> array",
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
            f"[matmul] Last dimension of first input with shape {format_shape(x.shape)} "
            "must match second to last dimension of second input with shape "
            f"{format_shape(y.shape)}."
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

    if a_ndim > 2 and b_ndim <= 2 and not in_dynamic_tracing():
        # A stack of matrices times one matrix: one tall matrix product, so
        # the matrix is not copied for every batch (MLX: flatten / unflatten).
        rows = x.shape[:-1]
        x = flatten(x, 0, -2)
        out = reshape(make_array(Matmul(), [x, y]), rows + (y.shape[-1],))
    else:
        if (a_ndim > 2 or b_ndim > 2) and in_dynamic_tracing():
            x, y = dynamic_broadcast_arrays([x, y], (-2, -1))
        elif a_ndim > 2 or b_ndim > 2:
            batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
            x = broadcast_to(x, batch + x.shape[-2:])
            y = broadcast_to(y, batch + y.shape[-2:])
        out = make_array(Matmul(), [x, y])
    return drop_vector_axes(out, a_ndim, b_ndim)


def drop_vector_axes(out, a_ndim, b_ndim):
    """``out`` without the unit dimensions a product added to 1-D operands."""
    axes = []
    if a_ndim == 1:
        axes.append(out.ndim - 2)
    if b_ndim == 1:
        axes.append(out.ndim - 1)
    return squeeze(out, axes) if axes else out


def _as_float(x):
    """A Python float from what nanobind reads as a C float (a real number, or
    anything with ``__float__`` such as a one-element array), else None."""
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def addmm(c, a, b, /, alpha=1.0, beta=1.0, *, stream=None):
    """``mx.addmm``: ``alpha * (a @ b) + beta * c``, one ``AddMM`` node.

    The shape work is ``matmul``'s (1-D operands, batch broadcasting, a stack
    of matrices times one matrix as one tall product); ``c`` is broadcast to
    the product's shape. Real floating types only; complex64 is composed of
    ``matmul``, ``multiply`` and ``add``, as in MLX.
    """
    alpha_f, beta_f = _as_float(alpha), _as_float(beta)
    if not all(isinstance(x, array) for x in (c, a, b)) or alpha_f is None or beta_f is None:
        optional = {k: v for k, v in (("alpha", alpha), ("beta", beta)) if v != 1.0}
        raise incompatible_arguments(_SIGNATURES["addmm"], (c, a, b), optional)
    in_a_ndim, in_b_ndim = a.ndim, b.ndim
    if in_a_ndim == 0 or in_b_ndim == 0:
        raise ValueError(
            "[addmm] Got 0 dimension input. Inputs must have at least one dimension."
        )
    out_type = _dt.result_type(a, b, c)
    if out_type is _dt.complex64:
        return add(multiply(matmul(a, b), array(alpha_f)), multiply(array(beta_f), c))
    if in_a_ndim == 1:
        a = expand_dims(a, 0)
    if in_b_ndim == 1:
        b = expand_dims(b, 1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"[addmm] Last dimension of first input with shape {format_shape(a.shape)} "
            "must match second to last dimension of second input with shape "
            f"{format_shape(b.shape)}."
        )
    if not _dt.issubdtype(out_type, _dt.floating):
        raise ValueError(
            f"[addmm] Only real floating point types are supported but {c.dtype.name}, "
            f"{a.dtype.name} and {b.dtype.name} were provided which results in "
            f"{out_type.name}, which is not a real floating point type."
        )
    a, b, c = (x if x.dtype is out_type else astype(x, out_type) for x in (a, b, c))
    primitive = AddMM(alpha_f, beta_f)

    if a.ndim > 2 and b.ndim == 2 and c.ndim <= 1:
        # A stack of matrices times one matrix: one tall product, as matmul.
        out_shape = a.shape[:-1] + (b.shape[-1],)
        if in_b_ndim == 1:
            out_shape = out_shape[:-1]
        a = reshape(a, (-1, a.shape[-1]))
        c = broadcast_to(c, (a.shape[0], b.shape[1]))
        return reshape(make_array(primitive, [a, b, c]), out_shape)

    if a.ndim > 2 or b.ndim > 2:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = broadcast_to(a, batch + a.shape[-2:])
        b = broadcast_to(b, batch + b.shape[-2:])
    out_shape = a.shape[:-1] + b.shape[-1:]
    # c broadcasts against the result as the user sees it (1-D operands'
    # unit axes removed), then gets those unit axes back.
    adjusted = list(out_shape)
    if in_a_ndim == 1 or in_b_ndim == 1:
        del adjusted[len(adjusted) - (2 if in_a_ndim == 1 else 1):
                     len(adjusted) - (0 if in_b_ndim == 1 else 1)]
    c = broadcast_to(c, broadcast_shapes(c.shape, tuple(adjusted)))
    if in_a_ndim == 1 or in_b_ndim == 1:
        shape = list(c.shape)
        if in_b_ndim == 1:
            shape.append(1)
        if in_a_ndim == 1:
            shape.append(shape[-1])
            shape[-2] = 1
        c = reshape(c, tuple(shape))
    if c.shape != out_shape:
        raise ValueError("[addmm] input c must broadcast to the output shape")
    return drop_vector_axes(make_array(primitive, [a, b, c]), in_a_ndim, in_b_ndim)


def _inv(a, tri, upper, name):
    """MLX's ``inv_impl``: the checks, then one ``Inverse`` node."""
    if a.dtype not in (_dt.float32, _dt.float64):
        raise ValueError(
            "[linalg::inv] Arrays must have type float32 or float64. "
            f"Received array with type {a.dtype.name}."
        )
    if a.ndim < 2:
        raise ValueError(
            "[linalg::inv] Arrays must have >= 2 dimensions. "
            f"Received array with {a.ndim} dimensions."
        )
    if a.shape[-1] != a.shape[-2]:
        raise ValueError("[linalg::inv] Inverses are only defined for square matrices.")
    if a.shape[-1] == 0:  # MLX's CPU build dies of a floating point exception
        raise ValueError(f"[linalg::{name}] Cannot invert an empty matrix of shape "
                         f"{format_shape(a.shape)}.")
    return make_array(Inverse(tri, upper), [a])


def inv(a, *, stream=None):
    """``mx.linalg.inv``: the inverse of each matrix in the last two axes
    (float32 or float64). A singular matrix raises MLX's RuntimeError when
    the result is evaluated, not here."""
    if not isinstance(a, array):
        raise incompatible_arguments(_SIGNATURES["inv"], (a,))
    return _inv(a, False, True, "inv")


def tri_inv(a, upper=False, *, stream=None):
    """``mx.linalg.tri_inv``: the inverse of each triangular matrix in the
    last two axes; only the ``upper`` (or lower) triangle of ``a`` is read."""
    if not isinstance(a, array) or not isinstance(upper, bool):
        raise incompatible_arguments(_SIGNATURES["tri_inv"], (a,),
                                     {"upper": upper} if upper is not False else None)
    return _inv(a, True, upper, "tri_inv")


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
