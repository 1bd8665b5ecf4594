"""How arrays print: ``repr(a)``, ``mx.set_printoptions``, and shapes in messages.

Read alongside: python/src/print.cpp (``printoptions``), mlx/utils.h and
mlx/utils.cpp (``PrintFormatter``, ``print_array``, ``operator<<`` of a
shape). MLX prints floats as C++'s default stream does (%g), shows 3
elements at each end of an axis longer than 6, and writes shapes in its
messages as ``(2,3)``.

(Named ``printing``, not ``print``: ``from mlxref.core import *`` must not
bind a module over Python's ``print``.)
Read next: mlxref/core/array.py (``__repr__``).
"""

import math

from . import dtypes as _dt
from .scalar import is_symbolic


def format_shape(shape):
    """MLX writes shapes as (2,3) and (4)."""
    return "(" + ",".join(str(d) for d in shape) + ")"


_EDGE = 3  # MLX shows 3 elements at each end of any axis longer than 6

_INT32 = range(-(2**31), 2**31)


class PrintOptions:
    """``mx.PrintOptions(precision=-1)``: how arrays print (mlx/utils.h).

    ``precision`` is the one option MLX 0.32.4 has: -1 prints floats as C++'s
    default stream does (%g), any other value in fixed notation with that
    many decimals (a negative one other than -1: 6 decimals, as C++'s
    ``std::fixed`` with a negative precision)."""

    __slots__ = ("_precision",)

    def __init__(self, precision=-1):
        if not isinstance(precision, int) or precision not in _INT32:
            raise TypeError(
                "__init__(): incompatible function arguments. The following argument types "
                "are supported:\n    1. __init__(self, precision: int = -1) -> None\n\n"
                f"Invoked with types: mlx.core.PrintOptions, {type(precision).__name__}"
            )
        self._precision = int(precision)

    @property
    def precision(self):
        return self._precision

    @precision.setter
    def precision(self, value):
        if not isinstance(value, int) or value not in _INT32:
            raise TypeError(
                "(): incompatible function arguments. The following argument types are "
                "supported:\n    1. (self, arg: int, /) -> None\n\nInvoked with types: "
                f"mlx.core.PrintOptions, {type(value).__name__}"
            )
        self._precision = int(value)


_print_options = PrintOptions()  # MLX's global formatter's options

_PRINTOPTIONS_SIGNATURES = {
    name: f"{name}(precision: int = -1) -> {result}"
    for name, result in (("set_printoptions", "None"),
                         ("printoptions", "mlx.core._PrintOptionsContext"))
}


def _precision_arg(name, args, kwargs):
    """The ``precision`` argument of set_printoptions / printoptions, checked
    as MLX's binding checks it (a C int; a bool is one)."""
    if len(args) + len(kwargs) > 1 or set(kwargs) - {"precision"}:
        raise _print_arguments_error(name, args, kwargs)
    value = args[0] if args else kwargs.get("precision", -1)
    if not isinstance(value, int) or value not in _INT32:
        raise _print_arguments_error(name, args, kwargs)
    return int(value)


def _print_arguments_error(name, args, kwargs):
    types = [type(a).__name__ for a in args]
    if kwargs:
        types.append("kwargs = { " + ", ".join(f"{k}: {type(v).__name__}"
                                               for k, v in kwargs.items()) + " }")
    return TypeError(
        f"{name}(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. {_PRINTOPTIONS_SIGNATURES[name]}\n\nInvoked with types: "
        + ", ".join(types)
    )


def set_printoptions(*args, **kwargs):
    """``mx.set_printoptions(precision=-1)``: the precision every array prints
    with from now on (-1, the default, restores MLX's %g printing)."""
    _print_options.precision = _precision_arg("set_printoptions", args, kwargs)


def get_printoptions():
    """``mx.get_printoptions()``: a copy of the current PrintOptions."""
    return PrintOptions(_print_options.precision)


class _PrintOptionsContext:
    """What ``mx.printoptions`` returns: sets the options on enter, restores
    the ones it found there on exit (python/src/print.cpp)."""

    def __init__(self, options):
        self._new, self._old = options, None

    def __enter__(self):
        self._old = get_printoptions()
        _print_options.precision = self._new.precision
        return self

    def __exit__(self, *exc):
        _print_options.precision = self._old.precision


def printoptions(*args, **kwargs):
    """``with mx.printoptions(precision=3): ...``: the options for a block."""
    return _PrintOptionsContext(PrintOptions(_precision_arg("printoptions", args, kwargs)))


def _format_float(v):
    """A float as C++'s ``std::ostream`` writes it (MLX's printer): %g, or
    fixed with the precision set by ``set_printoptions``; a nan with its sign
    bit set as -nan."""
    if v != v:
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    precision = _print_options.precision
    if precision == -1:
        return "%g" % v
    return "%.*f" % (precision if precision >= 0 else 6, v)


def _format_scalar(v, dtype):
    if dtype is _dt.bool_:
        return "True" if v else "False"
    if is_symbolic(v):
        return str(v)
    if dtype.is_float:
        return _format_float(v)
    if dtype.is_complex:
        # MLX (mlx/utils.cpp): real part, then "+" and the imaginary part when
        # it is >= 0 (so -0 prints as +-0) or nan, else "-" and its magnitude.
        im = v.imag
        sign, im = ("+", im) if im >= 0 or im != im else ("-", -im)
        return f"{_format_float(v.real)}{sign}{_format_float(im)}j"
    return str(v)


def format_array(data, shape, dtype):
    """``repr(a)`` of an array of ``shape`` and ``dtype`` holding ``data``."""
    body = format_elements(data, shape, lambda v: _format_scalar(v, dtype),
                           indent=len("array("))
    return f"array({body}, dtype={dtype.name})"


def format_elements(data, shape, format_scalar, edge=_EDGE, whole=False, indent=0):
    """The elements ``data`` (flat, row-major) of an array of ``shape`` as MLX
    prints them: nested brackets, one line per row of the last two axes, and
    every axis longer than ``2 * edge`` cut to its first and last ``edge``
    items around "..." (unless ``whole``). An axis of length 0 prints as
    ``[]`` whatever the axes after it: ``(0, 2)`` is ``[]``, ``(2, 0, 3)`` is
    ``[[], []]`` on two lines. Lines after the first are indented
    by ``indent`` plus one space per open bracket. The drawings (viz/record.py)
    lay out values with it too."""
    if not shape:
        return format_scalar(data[0])

    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]

    def shown(n):
        if whole or n <= 2 * edge:
            return list(range(n))
        return list(range(edge)) + [None] + list(range(n - edge, n))

    def block(offset, dim):  # the lines of the sub-array at ``offset``, from axis ``dim`` on
        if shape[dim] == 0:  # MLX's printer stops at an empty axis: no axis below it shows
            return ["[]"]
        if dim == len(shape) - 1:
            parts = ["..." if i is None else format_scalar(data[offset + i])
                     for i in shown(shape[dim])]
            return ["[" + ", ".join(parts) + "]"]
        lines = []
        for i in shown(shape[dim]):
            if lines:
                lines[-1] += ","
            lines += ["..."] if i is None else block(offset + i * strides[dim], dim + 1)
        lines[-1] += "]"
        return ["[" + lines[0]] + [" " + line for line in lines[1:]]

    lines = block(0, 0)
    return "\n".join(lines[:1] + [" " * indent + line for line in lines[1:]])
