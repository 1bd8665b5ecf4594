"""What every op does before it builds a node, after its arguments are arrays
(mlxref/core/convert.py ``to_arrays``): cast, broadcast, check axes and shape
arguments.

Read alongside: mlx/ops.cpp (``broadcast_shapes``, ``broadcast_arrays``,
``astype``) and python/src/ops.cpp (the bindings whose errors
``incompatible_arguments`` and ``to_shape`` reproduce).

The checks MLX's bindings make before an op runs live here too, one helper
each, so that a bad argument gets MLX's exception type from a check naming
the op and the value, never an error from deep inside: an ``int`` parameter
takes a Python int (or anything with ``__index__``) of 32 bits, not a float
(``is_c_int``, ``is_int``, ``c_int``, ``c_ints``; ``normalize_axis`` for axes); a
``float`` one anything with ``__float__`` but a string (``check_float``); an
``array`` one only an mx.array (``check_array``); a ``Callable`` one a
callable (``check_callable``). Each raises the binding's TypeError through
``incompatible_argument``, the one place its words are written.
tests/test_bad_arguments.py compares them with MLX for every public function.

An op that would return one of its inputs unchanged (``astype`` to the same
dtype, ``broadcast_to`` the same shape...) returns a new handle of it
(``copy.copy``), as MLX's Python binding hands back a new ``array`` object: so
``b = a.astype(a.dtype); b[0] = 1`` leaves ``a`` alone, as in MLX.
"""

import copy
import math
import operator
import reprlib

from .. import dtypes as _dt
from ..array import array
from ..convert import scalar_or_array
from ..printing import format_shape
from ..primitives.base import AsType, StopGradient, make_array
from ..primitives.creation import Full
from ..primitives.shape import Broadcast, BroadcastAxes
from ..transforms.tape import in_dynamic_tracing
from .docs import shared_doc

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# mlxref holds an array's elements in one Python list; it stops at this many.
MAX_ELEMENTS = INT32_MAX
_INT64 = range(-(2**63), 2**63)


_ASTYPE = "astype(a: array, dtype: Dtype, /, *, stream: StreamOrDevice = None) -> array"


@shared_doc
def astype(a, /, dtype, *, stream=None):
    """``mx.astype``: ``a``'s values converted to ``dtype``.

    Floats become integers by truncation toward zero, integers that do not fit
    wrap around (as C casts do), nonzero becomes True. An ``AsType`` node only
    when the dtype changes (otherwise a new handle of ``a``).

    Arguments:
    - ``a``: the array.
    - ``dtype``: the target Dtype (``mx.int32``...).

    Errors: ``TypeError`` ("astype(): incompatible function arguments") when
    ``a`` is not an array or ``dtype`` not a Dtype (a string is not one).

    >>> mx.astype(mx.array([1.7, -1.7]), mx.int32)
    array([1, -1], dtype=int32)
    >>> mx.astype(mx.array([300]), mx.uint8)
    array([44], dtype=uint8)
    """
    if not isinstance(a, array) or not isinstance(dtype, _dt.Dtype):
        raise incompatible_arguments(_ASTYPE, (a, dtype), None if stream is None else
                                     {"stream": stream})
    if a.dtype is dtype:
        return copy.copy(a)
    return make_array(AsType(dtype), [a])


def broadcast_shapes(*shapes):
    """``mx.broadcast_shapes``: the shape that arrays of all the given ``shapes`` broadcast to, as a tuple.

    Shapes are aligned at their last axes; each pair of sizes must be equal or
    one of them 1. Like MLX, it folds the shapes pairwise, so the error names
    the pair that fails. As MLX's binding reads them: the first shape may be any
    sequence of integers (NumPy's and 0-d integer arrays too); each later one a
    tuple, or a list or range of Python ints; the dimensions come back as ints.

    Arguments:
    - ``shapes``: one or more shapes.

    Errors: ``ValueError`` for shapes that do not broadcast (MLX:
    "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."), for no shape
    ("[broadcast_shapes] Must provide at least one shape.") and for a later
    shape that is not a sequence ("[broadcast_shapes] Expects a sequence of
    shapes (tuple or list of ints).").

    >>> mx.broadcast_shapes((2, 1), (1, 3), (4, 1, 1))
    (4, 2, 3)
    """
    if not shapes:
        raise ValueError("[broadcast_shapes] Must provide at least one shape.")
    out = ()
    for k, shape in enumerate(shapes):
        if k and not (isinstance(shape, tuple) or (
                isinstance(shape, (list, range)) and all(type(d) is int for d in shape))):
            raise ValueError(
                "[broadcast_shapes] Expects a sequence of shapes (tuple or list of ints).")
        shape = _shape_from_sequence(shape)
        out = _broadcast_pair(out, shape) if k else shape
    return out


def _shape_from_sequence(shape):
    """A sequence of integers (anything with ``__index__`` but a bool array) as
    a tuple of ints that fit 32 bits: MLX's cast to its ``Shape``, which
    raises ``std::bad_cast`` for what is not one."""
    if isinstance(shape, (str, bytes, dict)) or not hasattr(shape, "__len__"):
        raise RuntimeError("std::bad_cast")
    dims = []
    for d in shape:
        if isinstance(d, array) and d.dtype is _dt.bool_:
            raise RuntimeError("std::bad_cast")
        try:
            d = operator.index(d)
        except TypeError:
            raise RuntimeError("std::bad_cast") from None
        if not INT32_MIN <= d <= INT32_MAX:
            raise OverflowError(
                f"Integer value {d} is outside the supported range [{INT32_MIN}, {INT32_MAX}]."
            )
        dims.append(d)
    return tuple(dims)


def _broadcast_pair(a, b):
    ndim = max(len(a), len(b))
    pa, pb = (1,) * (ndim - len(a)) + a, (1,) * (ndim - len(b)) + b
    out = []
    for m, n in zip(pa, pb):
        if m != n and m != 1 and n != 1:
            raise ValueError(
                f"[broadcast_shapes] Shapes {format_shape(a)} and {format_shape(b)} cannot be broadcast."
            )
        out.append(n if m == 1 else m)
    return tuple(out)


_BROADCAST_TO = (
    "broadcast_to(a: scalar | array, /, shape: Sequence[int], *, "
    "stream: StreamOrDevice = None) -> array"
)


@shared_doc
def broadcast_to(a, /, shape, *, stream=None):
    """``mx.broadcast_to``: ``a`` expanded to ``shape``: new leading axes and its size-1 axes repeat its elements.

    A ``Broadcast`` node only when the shape changes; its gradient sums the
    cotangent back over the repeated axes.

    Arguments:
    - ``a``: an array or a Python scalar.
    - ``shape``: the target shape, which ``a``'s shape must broadcast to.

    Errors: ``ValueError`` when ``a`` does not broadcast to ``shape`` (MLX:
    "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast.") or for a
    negative dimension ("[broadcast_to] Negative dimensions not allowed.").

    >>> mx.broadcast_to(mx.array([1, 2]), (2, 2))
    array([[1, 2],
           [1, 2]], dtype=int32)
    """
    shape = to_shape(shape, _BROADCAST_TO, (a, shape))
    a = scalar_or_array(a)
    if a.shape == shape:
        return copy.copy(a)
    if any(d < 0 for d in shape):
        raise ValueError("[broadcast_to] Negative dimensions not allowed.")
    if broadcast_shapes(a.shape, shape) != shape:
        raise ValueError(
            f"Cannot broadcast array of shape {format_shape(a.shape)} into shape "
            f"{format_shape(shape)}."
        )
    return make_array(Broadcast(shape), [a])


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape (MLX's ``broadcast_arrays``),
    as the elementwise ops need their inputs; the shapes are known to fit."""
    if in_dynamic_tracing():
        return dynamic_broadcast_arrays(arrays)
    first = arrays[0].shape
    for a in arrays[1:]:  # (a loop: this runs for every elementwise op)
        if a.shape != first:
            break
    else:
        return list(arrays)
    shape = broadcast_shapes(*[a.shape for a in arrays])
    return [a if a.shape == shape else make_array(Broadcast(shape), [a]) for a in arrays]


def dynamic_broadcast_arrays(arrays, ignore_axes=()):
    """MLX's ``broadcast_arrays`` while ``compile(..., shapeless=True)`` traces:
    every array becomes a node whose shape is read from all of them again at
    each replay (``Broadcast`` with the others as extra inputs, or
    ``BroadcastAxes`` when ``ignore_axes`` keep their own sizes), the others
    behind a StopGradient, so only the first input gets a cotangent."""
    arrays = list(arrays)
    if len(arrays) <= 1:
        return arrays
    shapes_only = [make_array(StopGradient(), [a]) for a in arrays]
    if ignore_axes:
        primitive = BroadcastAxes(ignore_axes)
    else:
        primitive = Broadcast(broadcast_shapes(*[x.shape for x in arrays]))
    return [make_array(primitive, [a] + shapes_only[:i] + shapes_only[i + 1:])
            for i, a in enumerate(arrays)]


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python (or made at run time)


def type_name(value):
    if isinstance(value, array):
        return "mlx.core.array"
    if isinstance(value, _dt.Dtype):
        return "mlx.core.Dtype"
    t = type(value)
    if t.__module__ == "builtins" or not t.__flags__ & _HEAP_TYPE:
        return t.__name__  # a built-in or C type (NumPy's ndarray) prints its own name
    module = t.__module__  # mlxref's own classes (Device, Stream...) print as MLX's
    if module == "mlxref.core" or module.startswith("mlxref.core."):
        module = "mlx" + module[len("mlxref"):]
    return f"{module}.{t.__name__}"  # nanobind: the module and the bare name


def incompatible_arguments(signature, args=None, kwargs=None):
    """The TypeError MLX's bindings raise for arguments of the wrong Python type.

    ``signature`` is the function's signature as MLX prints it (name first).
    MLX then lists the types of the positional ``args`` and of the ``kwargs``,
    which depend on how the call was spelled: mlxref's callers pass required
    arguments as positional and optional ones, where they differ from their
    default, as keyword arguments. With ``args`` None that line is left out.
    """
    name = signature.split("(", 1)[0]
    message = (
        f"{name}(): incompatible function arguments. The following argument types "
        f"are supported:\n    1. {signature}"
    )
    if args is None:
        return TypeError(message)
    types = [type_name(a) for a in args]
    if kwargs:
        given = ", ".join(f"{k}: {type_name(v)}" for k, v in kwargs.items())
        types.append(f"kwargs = {{ {given} }}")
    return TypeError(f"{message}\n\nInvoked with types: {', '.join(types)}")


def incompatible_argument(op, name, expected, value, shown=None):
    """The TypeError MLX's binding of ``op`` raises for a ``value`` of its
    parameter ``name`` that it does not take (its first words are MLX's; the
    rest says what was ``expected`` and what came: ``shown``, or the value)."""
    shown = reprlib.repr(value) if shown is None else shown
    return TypeError(f"{op}(): incompatible function arguments: {name} must be {expected}, "
                     f"got {shown}.")


def check_callable(fun, op, name="fun"):
    """``fun``, if it can be called; else the TypeError MLX's binding of the
    transform ``op`` raises for its ``Callable`` parameter ``name``."""
    if not callable(fun):
        raise incompatible_argument(op, name, "callable", fun)
    return fun


def check_dims(op, shape):
    """``shape``, after MLX's check on dimensions an op computes (a
    concatenation's sum, a repeat's product...): each must fit a 32-bit int,
    or an OverflowError names it (the mx::Shape check of mlx/utils.cpp)."""
    for d in shape:
        if not INT32_MIN <= d <= INT32_MAX:
            raise OverflowError(
                f"[{op}] Shape dimension {d} is outside the supported range [{INT32_MIN}, "
                f"{INT32_MAX}]. MLX currently uses 32-bit integers for shape dimensions."
            )
    return shape


def to_shape(shape, signature, args, kwargs=None):
    """A shape argument as a tuple of ints, or the error MLX raises for it.

    ``signature`` is the op's, as for ``incompatible_arguments``: zeros, ones
    and full take ``int | Sequence[int]`` (and their binding raises
    ``std::bad_cast`` for what it cannot read as ints), the others
    ``Sequence[int]``. MLX keeps dimensions in 32-bit ints. mlxref also
    refuses more than MAX_ELEMENTS elements, at once, rather than start
    filling a list of them (MLX would allocate such an array lazily).
    """
    takes_int = "shape: int |" in signature
    if takes_int and isinstance(shape, int):
        if shape not in _INT64:
            raise RuntimeError("std::bad_cast")
        if not INT32_MIN <= shape <= INT32_MAX:
            raise OverflowError(
                f"Shape dimension {shape} is outside the supported range [{INT32_MIN}, "
                f"{INT32_MAX}]. MLX currently uses 32-bit integers for shape dimensions."
            )
        shape = (shape,)
    elif not isinstance(shape, (list, tuple)) or not all(
        isinstance(index_value(d), int) and index_value(d) in _INT64  # NumPy's integers too
        for d in shape
    ):
        if takes_int and shape is not None:
            raise RuntimeError("std::bad_cast")
        raise incompatible_arguments(signature, args, kwargs)
    else:
        shape = [index_value(d) for d in shape]
    for d in shape:
        if not INT32_MIN <= d <= INT32_MAX:
            raise OverflowError(
                f"Integer value {d} is outside the supported range [{INT32_MIN}, {INT32_MAX}]."
            )
    shape = tuple(map(int, shape))  # a bool is a dimension to MLX
    size = math.prod(shape)
    if size > MAX_ELEMENTS and min(shape) >= 0:
        name = signature.split("(", 1)[0]
        raise ValueError(
            f"[{name}] Shape {format_shape(shape)} has {size} elements; mlxref holds an "
            f"array's elements in one Python list and stops at {MAX_ELEMENTS}."
        )
    return shape


def index_value(x):
    """An integer argument as MLX's bindings read one: a Python int (a bool
    is one), or anything with ``__index__`` (NumPy's integers, a 0-d integer
    array) as an int; None for anything else (a float, a string...)."""
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def plain_ints(x):
    """``x`` with each integer that is not a Python int (NumPy's: anything with
    ``__index__`` but an array) made one, also inside a list or tuple, as
    MLX's bindings read integer arguments; everything else as it is, for the
    op's own checks."""
    if type(x) in (list, tuple):
        return type(x)(plain_ints(v) for v in x)
    if x is None or isinstance(x, (int, float, complex, str, bytes, array)):
        return x
    try:
        return operator.index(x)
    except TypeError:
        return x


def is_c_int(value):
    """Whether MLX's bindings read ``value`` as a C ``int``: a Python int (a
    bool is one) or anything with ``__index__`` (NumPy's integers), that fits
    32 bits. A float never is, not even 1.0."""
    value = index_value(value)
    return value is not None and INT32_MIN <= value <= INT32_MAX


def is_int(value):
    """A Python int (a bool is one, as MLX's bindings take it for an int) that
    fits 32 bits: ``is_c_int`` without NumPy's integers, where mlxref's check
    of a binding never took them."""
    return isinstance(value, int) and is_c_int(value)


def c_int(value, op, name):
    """``value`` as the int MLX's binding of ``op`` reads for its ``int``
    parameter ``name``, or the TypeError the binding raises instead (for a
    float, None, a string, an int past 32 bits)."""
    if not is_c_int(value):
        raise incompatible_argument(op, name, "an int (32 bits)", value)
    return int(index_value(value))


def c_ints(values, op, name):
    """A ``Sequence[int]`` parameter ``name`` of ``op``: a list or tuple of
    ints (as ``c_int`` reads each) as a tuple, or the binding's TypeError."""
    if not isinstance(values, (list, tuple)) or not all(is_c_int(v) for v in values):
        raise incompatible_argument(op, name, "a sequence of ints (32 bits)", values)
    return tuple(int(index_value(v)) for v in values)


def is_c_float(value):
    """Whether MLX's bindings read ``value`` as a C ``float``: a Python int or
    float (a bool too), or anything with ``__float__`` or ``__index__`` (a
    NumPy number, a one-element array); never a string, a complex or None."""
    if value is None or isinstance(value, (str, bytes, complex)):
        return False
    return hasattr(type(value), "__float__") or hasattr(type(value), "__index__")


def check_float(value, op, name):
    """``value``, if ``op``'s binding reads it for its ``float`` parameter
    ``name`` (``is_c_float``); else the TypeError the binding raises."""
    if not is_c_float(value):
        raise incompatible_argument(op, name, "a float", value)
    return value


def check_array(value, op, name):
    """``value``, if it is an mx.array: a parameter MLX's binding types
    ``array`` takes no Python scalar, list or NumPy array; else the TypeError
    the binding raises, naming ``op`` and ``name``."""
    if not isinstance(value, array):
        raise incompatible_argument(op, name, "an array", value,
                                    f"{type_name(value)} {reprlib.repr(value)}")
    return value


def normalize_axis(axis, ndim, message):
    """A non-negative axis, or IndexError(``message``) formatted with axis and
    ndim; TypeError for what is not an int of 32 bits."""
    if isinstance(axis, bool) or not is_c_int(axis):
        raise TypeError(f"axis must be an int (32 bits), got {axis!r}.")
    axis = index_value(axis)
    if axis < -ndim or axis >= ndim:
        raise IndexError(message.format(axis=axis, ndim=ndim))
    return axis % ndim if ndim else axis


def float_dtype(dtype):
    """The dtype a float-valued op (exp, sin, divide...) gives: ints and bools
    become float32, floating and complex dtypes stay (MLX's ``at_least_float``)."""
    return dtype if dtype.is_inexact else _dt.float32


def filled_like(a, vals):
    """MLX's C++ ``full_like``: ``vals`` broadcast against ``a`` (under shapeless
    compile, against its shape at each replay), then a Full node."""
    return make_array(Full(), [broadcast_arrays(a, vals)[1]])
