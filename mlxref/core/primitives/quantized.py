"""Primitives of MLX's quantization family: ``ConvertFP8`` (fp8 e4m3 bytes
to and from floats).

Read alongside: mlx/fast_primitives.h (``ConvertFP8``), mlx/ops.cpp
(``from_fp8``, ``to_fp8``) and mlx/backend/cpu/unary_ops.h (``ToFP8``,
``FromFP8``: the bit manipulations mlxref/core/dtypes.py mirrors).
"""

from .. import dtypes as _dt
from ..scalar import apply, sympy
from .base import Primitive, make_array

_SYMBOLIC = {}


def _symbolic(to_fp8):
    """A SymPy function for the conversion, evaluated on numbers: the symbolic
    checks carry ``to_fp8(x)`` through and compare it at a point."""
    if to_fp8 not in _SYMBOLIC:
        if to_fp8:
            def value(x):
                return sympy.Integer(_dt.float_to_fp8_e4m3(_dt.float32.cast(float(x))))
        else:
            def value(x):
                return sympy.Float(_dt.fp8_e4m3_to_float(int(x)), 30)

        def evaluate(cls, x):
            return value(x) if x.is_Number else None

        name = "to_fp8" if to_fp8 else "from_fp8"
        _SYMBOLIC[to_fp8] = type(name, (sympy.Function,), {"eval": classmethod(evaluate)})
    return _SYMBOLIC[to_fp8]


class ConvertFP8(Primitive):
    """Elementwise fp8 (e4m3) conversion, MLX's ``fast::ConvertFP8``, whose
    name is ToFP8 or FromFP8 by direction: here two subclasses of those names.

    MLX defines no vjp or jvp for it (both raise MLX's message here too: the
    codes are integers, and the conversion is piecewise constant). Its vmap
    rule, which MLX also lacks, is an elementwise map's: the batch axis
    stays where it is.
    """

    abstract = True  # a family: ToFP8 and FromFP8
    to_fp8 = None

    def __init__(self, dtype):
        self.dtype = dtype

    def output_dtypes(self, inputs):
        return [self.dtype]

    def eval(self, inputs):
        convert = _dt.float_to_fp8_e4m3 if self.to_fp8 else _dt.fp8_e4m3_to_float
        return [apply(convert, _symbolic(self.to_fp8), inputs[0].data())]

    def vmap(self, inputs, axes):
        return [make_array(self, inputs)], list(axes)


class ToFP8(ConvertFP8):
    """float16, bfloat16 or float32 values to uint8 fp8 codes."""

    to_fp8 = True

    def __init__(self):
        super().__init__(_dt.uint8)


class FromFP8(ConvertFP8):
    """uint8 fp8 codes to ``dtype`` (float16, bfloat16 or float32)."""

    to_fp8 = False
