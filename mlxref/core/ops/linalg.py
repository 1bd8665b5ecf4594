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
                     incompatible_arguments, is_c_int)
from .creation import check_scalar_or_array
from .docs import shared_doc
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


@shared_doc
def matmul(a, b, /, *, stream=None):
    """``mx.matmul`` (``a @ b``): the matrix product of ``a`` and ``b``, with NumPy's rules for 1-D and batched inputs.

    A 1-D ``a`` is a row vector and a 1-D ``b`` a column vector; the unit axis
    each adds is removed from the result. Beyond two dimensions the leading
    (batch) axes broadcast against each other, and each pair of matrices is
    multiplied. Only floating point and complex inputs are supported, as in MLX
    (the two dtypes are promoted first). A stack of matrices times one matrix is
    computed as one tall product, as MLX does, so the matrix is not copied per
    batch. One ``Matmul`` node.

    Arguments:
    - ``a``: an array of at least one dimension.
    - ``b``: an array of at least one dimension; its second-to-last axis (its
      only one, if 1-D) must match ``a``'s last.

    Errors: ``ValueError`` for a 0-d input (MLX: "[matmul] Got 0 dimension
    input. Inputs must have at least one dimension."), sizes that do not match
    (MLX: "[matmul] Last dimension of first input with shape (2,3) must match
    second to last dimension of second input with shape (2,3).") or integer
    inputs (MLX: "[matmul] Only inexact types are supported but int32 and int32
    were provided which results in int32, which is not a floating point type.").

    >>> a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    >>> a @ a
    array([[7, 10],
           [15, 22]], dtype=float32)
    >>> mx.matmul(a, mx.array([1.0, 1.0]))
    array([3, 7], dtype=float32)
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


@shared_doc
def addmm(c, a, b, /, alpha=1.0, beta=1.0, *, stream=None):
    """``mx.addmm``: ``alpha * (a @ b) + beta * c`` as one fused ``AddMM`` node.

    The shape work is ``matmul``'s (1-D operands, batch broadcasting, a stack
    of matrices times one matrix as one tall product); ``c`` is broadcast to
    the product's shape. Real floating types only; complex64 is composed of
    ``matmul``, ``multiply`` and ``add``, as in MLX.

    Arguments:
    - ``c``: the array added, broadcastable to the shape of ``a @ b``.
    - ``a``: the left factor, at least 1-D.
    - ``b``: the right factor, at least 1-D.
    - ``alpha``: the product's factor, a float (default 1.0).
    - ``beta``: ``c``'s factor, a float (default 1.0).

    Errors: ``ValueError`` for a 0-d ``a`` or ``b``, sizes that do not match
    (as ``matmul``'s, with "[addmm]"), a ``c`` that does not broadcast (MLX:
    "[broadcast_shapes] Shapes (3) and (2,2) cannot be broadcast.") or integer
    inputs (MLX: "[addmm] Only real floating point types are supported but
    int32, int32 and int32 were provided which results in int32, which is not a
    real floating point type.").

    >>> a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    >>> mx.addmm(mx.array([1.0, -1.0]), a, a, alpha=2.0, beta=3.0)
    array([[17, 17],
           [33, 41]], dtype=float32)
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


@shared_doc
def inv(a, *, stream=None):
    """``mx.linalg.inv``: the inverse of each square matrix in the last two axes of ``a``.

    float32 or float64, any batch of leading axes. One ``Inverse`` node,
    computed in double and rounded once, so the last bits can differ from
    LAPACK's. mlxref gives it a vjp (``-Bᵀ G Bᵀ``) and a jvp (``-B dA B``),
    which MLX lacks. A singular matrix raises MLX's ``RuntimeError`` when the
    result is evaluated, not here.

    Arguments:
    - ``a``: an array of at least two dimensions whose last two are equal.

    Errors: ``ValueError`` for another dtype (MLX: "[linalg::inv] Arrays must
    have type float32 or float64. Received array with type int32."), fewer than
    two dimensions, or matrices that are not square (MLX: "[linalg::inv]
    Inverses are only defined for square matrices."); when evaluated, a singular
    matrix raises ``RuntimeError`` (MLX: "[Inverse::eval_cpu] LU factorization
    failed with error code 2"). An empty matrix raises a ``ValueError``, where
    MLX's CPU build dies.

    >>> mx.linalg.inv(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[-2, 1],
           [1.5, -0.5]], dtype=float32)
    """
    if not isinstance(a, array):
        raise incompatible_arguments(_SIGNATURES["inv"], (a,))
    return _inv(a, False, True, "inv")


@shared_doc
def tri_inv(a, upper=False, *, stream=None):
    """``mx.linalg.tri_inv``: the inverse of each triangular matrix in the last two axes of ``a``.

    Only the lower triangle of ``a`` (or the upper one, with ``upper=True``)
    is read: the other one is taken as zeros, whatever it holds. The result is
    triangular too. One ``Inverse`` node; the checks and errors are ``inv``'s.

    Arguments:
    - ``a``: float32 or float64, at least two dimensions, square matrices.
    - ``upper``: read the upper triangle instead of the lower (default False).

    Errors: ``ValueError`` as ``inv``'s (MLX's messages say "[linalg::inv]").

    >>> mx.linalg.tri_inv(mx.array([[2.0, 0.0], [1.0, 4.0]]))
    array([[0.5, 0],
           [-0.125, 0.25]], dtype=float32)
    >>> mx.linalg.tri_inv(mx.array([[2.0, 7.0], [1.0, 4.0]]), upper=True)
    array([[0.5, -0.875],
           [0, 0.25]], dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(upper, bool):
        raise incompatible_arguments(_SIGNATURES["tri_inv"], (a,),
                                     {"upper": upper} if upper is not False else None)
    return _inv(a, True, upper, "tri_inv")


@shared_doc
def inner(a, b, /, *, stream=None):
    """``mx.inner``: the sums of products over the last axes of ``a`` and ``b``, for every pair of their other positions.

    For vectors it is the dot product; the result's shape is
    ``a.shape[:-1] + b.shape[:-1]``. Composed as MLX's ``tensordot(a, b, [-1],
    [-1])``: ``a`` as a matrix of its rows, ``b`` transposed into a matrix of
    columns, one matmul (so integer inputs raise ``matmul``'s error), then the
    result reshaped. (MLX also applies the identity transpose to ``a``; mlxref
    skips identity transposes.) A 0-d operand makes it a plain multiply.

    Arguments:
    - ``a``: an array.
    - ``b``: an array with ``a``'s last dimension.

    Errors: ``ValueError`` when the last dimensions differ (MLX: "[inner] a and b
    must have the same last dimension.") or the inputs are integers (``matmul``'s
    "Only inexact types are supported" message).

    >>> a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    >>> mx.inner(a, a)
    array([[5, 11],
           [11, 25]], dtype=float32)
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


@shared_doc
def outer(a, b, /, *, stream=None):
    """``mx.outer``: every element of ``a`` (flattened) times every element of ``b`` (flattened), a ``(a.size, b.size)`` matrix.

    Composed as in MLX: ``a`` reshaped to a column times ``b`` flattened. Any
    dtype works (it is a multiply, not a matmul), with ``multiply``'s promotion.

    Arguments:
    - ``a``: an array (flattened).
    - ``b``: an array (flattened).

    >>> mx.outer(mx.array([1, 2]), mx.array([1, 10, 100]))
    array([[1, 10, 100],
           [2, 20, 200]], dtype=int32)
    """

    _require_arrays("outer", a, b)
    return multiply(reshape(a, (a.size, 1)), flatten(b))


@shared_doc
def vecdot(a, b, /, axis=-1, *, stream=None):
    """``mx.vecdot``: the dot products of ``a`` and ``b`` along ``axis``, ``sum(conj(a) * b, axis)``.

    Composed as MLX does: complex ``a`` is conjugated, the product is
    broadcast as in ``multiply`` and summed over ``axis``, which disappears
    from the result. ``axis`` must name the same axis of both arrays, so a
    negative one needs arrays with as many dimensions.

    Arguments:
    - ``a``: an array of at least one dimension.
    - ``b``: an array of at least one dimension, the same size along ``axis``.
    - ``axis``: the axis summed (counted from the end when negative; default -1).

    Errors: as MLX 0.32.4, an ``axis`` outside ``a`` is an ``IndexError``
    (MLX: "[vecdot] axis is out of bounds."), one that names a different axis
    of ``b`` a ``ValueError`` with the same message; sizes that differ along
    it raise ``ValueError`` (MLX: "[vecdot] a and b must have the same size
    along axis."), and so does a 0-d input (MLX: "[vecdot] inputs must be at
    least 1D.").

    >>> mx.vecdot(mx.array([1 + 2j, 3]), mx.array([1j, 1]))
    array(5+1j, dtype=complex64)
    >>> a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    >>> mx.vecdot(a, a, axis=0)
    array([10, 20], dtype=float32)
    """
    if (not isinstance(a, array) or not isinstance(b, array) or type(axis) is not int
            or not is_c_int(axis)):
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


@shared_doc
def clip(a, /, a_min, a_max, *, stream=None):
    """``mx.clip``: the elements of ``a`` limited to ``[a_min, a_max]``, ``minimum(maximum(a, a_min), a_max)``.

    One bound may be None (no limit on that side). The bounds broadcast
    against ``a``; they are weakly typed when they are Python scalars, as in any
    binary op (``clip(int32 array, 2.5, 8)`` is float32).

    Arguments:
    - ``a``: the array.
    - ``a_min``: the lower bound (a scalar, an array or None).
    - ``a_max``: the upper bound (a scalar, an array or None).

    Errors: ``ValueError`` when both bounds are None (MLX: "At most one of a_min
    and a_max may be None").

    >>> mx.clip(mx.arange(6), 1, 4)
    array([1, 1, 2, 3, 4, 4], dtype=int32)
    >>> mx.clip(mx.array([-2.0, 0.5, 3.0]), -1, None)
    array([-1, 0.5, 3], dtype=float32)
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
