"""Ops of MLX's quantization family: ``from_fp8`` and ``to_fp8``.

Read alongside: mlx/ops.cpp (``from_fp8``, ``to_fp8``: their checks and
messages) and python/src/ops.cpp (their signatures).
"""

from .. import dtypes as _dt
from ..array import array
from ..primitives.base import make_array
from ..primitives.quantized import FromFP8, ToFP8
from .common import incompatible_arguments

__all__ = ["from_fp8", "to_fp8"]

_FROM = "from_fp8(x: array, dtype: Dtype = bfloat16, *, stream: StreamOrDevice = None) -> array"
_TO = "to_fp8(x: array, *, stream: StreamOrDevice = None) -> array"


def from_fp8(x, dtype=_dt.bfloat16, *, stream=None):
    """``mx.from_fp8``: uint8 fp8 (e4m3) codes as ``dtype`` (default bfloat16)."""
    if not isinstance(x, array) or not isinstance(dtype, _dt.Dtype):
        raise incompatible_arguments(
            _FROM, [x], None if dtype is _dt.bfloat16 else {"dtype": dtype})
    if x.dtype is not _dt.uint8:
        raise ValueError(
            f"[from_fp8] Input must have type uint8 but x.dtype() == {x.dtype.name}.")
    if not _dt.issubdtype(dtype, _dt.floating):
        raise ValueError(
            f"[from_fp8] Only real floating types are supported but dtype == {dtype.name}.")
    if dtype is _dt.float64:  # MLX's kernel writes floats into the doubles' buffer
        raise ValueError(
            "[from_fp8] dtype float64 is not supported: MLX's CPU kernel writes float32 "
            "values into the float64 output (its result is garbage); use float32 and astype.")
    return make_array(FromFP8(dtype), [x])


def to_fp8(x, *, stream=None):
    """``mx.to_fp8``: float16, bfloat16 or float32 values as uint8 fp8 (e4m3)
    codes, rounded to nearest even and saturating at ±448 (inf and nan too)."""
    if not isinstance(x, array):
        raise incompatible_arguments(_TO, [x])
    if not _dt.issubdtype(x.dtype, _dt.floating):
        raise ValueError(
            f"[to_fp8] Only real floating types are supported but x.dtype() == {x.dtype.name}.")
    if x.dtype is _dt.float64:  # MLX's kernel reads the doubles' bytes as floats
        raise ValueError(
            "[to_fp8] float64 input is not supported: MLX's CPU kernel reads its bytes as "
            "float32 values (its result is garbage); cast to float32 first.")
    return make_array(ToFP8(), [x])
