"""Ops of MLX's quantization family: ``from_fp8``, ``to_fp8``, ``quantize``,
``dequantize``, and the products with quantized weights ``quantized_matmul``,
``gather_qmm``, ``qqmm`` and ``gather_qqmm``.

Read alongside: mlx/ops.cpp (``from_fp8``, ``to_fp8``, ``quantize``,
``dequantize`` and their helpers: their checks and messages),
mlx/backend/cpu/quantized.cpp (``quantize``, MLX's CPU kernel for "affine")
and python/src/ops.cpp (their signatures). quantize and dequantize are no
primitives here: they are MLX's fallback compositions, which MLX's CPU runs
(or, for "affine" quantize, matches bit for bit) and which MLX differentiates
and batches.
"""

import math

from .. import dtypes as _dt
from ..array import array
from ..backend.cpu.quantized import FP4_E2M1
from ..printing import format_shape
from ..primitives.base import make_array
from ..primitives.quantized import (FromFP8, GatherQMM, GatherQQMM, QQMatmul, QuantizedMatmul,
                                   ToFP8)
from .common import (astype, broadcast_arrays, broadcast_shapes, broadcast_to,
                     incompatible_arguments, is_int)
from .creation import arange
from .docs import shared_doc
from .elementwise import (abs, add, bitwise_and, divide, equal, greater, left_shift, less, log2,
                          maximum, multiply, negative, not_equal, power, right_shift, round,
                          subtract, where)
from .indexing import take
from .linalg import clip
from .reduction import argmin
from .reduction import max as _max
from .reduction import min as _min
from .reduction import sum as _sum
from .shape import concatenate, expand_dims, flatten, reshape, squeeze, unflatten, view

__all__ = ["from_fp8", "to_fp8", "quantize", "dequantize", "quantized_matmul", "gather_qmm",
           "qqmm", "gather_qqmm"]

_FROM = "from_fp8(x: array, dtype: Dtype = bfloat16, *, stream: StreamOrDevice = None) -> array"
_TO = "to_fp8(x: array, *, stream: StreamOrDevice = None) -> array"


@shared_doc
def from_fp8(x, /, dtype=_dt.bfloat16, *, stream=None):
    """``mx.from_fp8``: decode 8-bit floats: each uint8 of ``x`` read as an fp8 (e4m3) number and returned as ``dtype``.

    e4m3 has a sign bit, 4 exponent bits and 3 mantissa bits (largest finite
    magnitude 448). One ``FromFP8`` node; the inverse of ``to_fp8``.

    Arguments:
    - ``x``: a uint8 array of fp8 codes.
    - ``dtype``: the output type, a real floating type (default bfloat16).

    Errors: ``ValueError`` for an ``x`` that is not uint8 (MLX: "[from_fp8] Input
    must have type uint8 but x.dtype() == float32.") or a ``dtype`` that is not
    floating (MLX: "[from_fp8] Only real floating types are supported but dtype
    == int32."). float64 raises a ``ValueError`` too, where MLX's CPU kernel
    writes garbage.

    >>> mx.from_fp8(mx.array([56, 29, 194, 126], mx.uint8), mx.float32)
    array([1, 0.101562, -2.5, 448], dtype=float32)
    """
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


@shared_doc
def to_fp8(x, /, *, stream=None):
    """``mx.to_fp8``: encode each float of ``x`` as an 8-bit float (e4m3), returned as its uint8 code.

    Rounded to the nearest e4m3 value (ties to even) and saturating at ±448
    (inf and nan too). One ``ToFP8`` node; ``from_fp8`` decodes it.

    Arguments:
    - ``x``: a float16, bfloat16 or float32 array.

    Errors: ``ValueError`` for an ``x`` that is not floating (MLX: "[to_fp8] Only
    real floating types are supported but x.dtype() == int32."). float64
    raises a ``ValueError`` too, where MLX's CPU kernel reads garbage.

    >>> codes = mx.to_fp8(mx.array([1.0, 0.1, -2.5, 500.0]))
    >>> codes, mx.from_fp8(codes)
    (array([56, 29, 194, 126], dtype=uint8), array([1, 0.101562, -2.5, 448], dtype=bfloat16))
    """
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


# ---------------------------------------------------------------------------
# quantize / dequantize: compositions, as MLX builds them (mlx/ops.cpp)
# ---------------------------------------------------------------------------

_QUANTIZE = (
    "quantize(w: array, /, group_size: int | None = None, bits: int | None = None, "
    "mode: str = 'affine', *, global_scale: array | None = None, "
    "stream: StreamOrDevice = None) -> tuple[array, array, array]")
_DEQUANTIZE = (
    "dequantize(w: array, /, scales: array, biases: array | None = None, "
    "group_size: int | None = None, bits: int | None = None, mode: str = 'affine', "
    "global_scale: array | None = None, dtype: Dtype | None = None, *, "
    "stream: StreamOrDevice = None) -> array")

# mode: (default group size, default bits), as quantization_params_from_mode
_MODES = {"affine": (64, 4), "mxfp4": (32, 4), "mxfp8": (32, 8), "nvfp4": (16, 4)}


def _check_binding(signature, args, kwargs):
    """The binding's type checks (python/src/ops.cpp): ``w`` and ``scales``
    arrays, group_size and bits ints or None, mode a str, global_scale an
    array or None, dtype a Dtype or None. The message lists ``w`` and
    ``scales`` as positional, the rest as keywords (``incompatible_arguments``)."""
    ok = (isinstance(args[0], array)
          and all(v is None or is_int(v)
                  for v in (kwargs["group_size"], kwargs["bits"]))
          and isinstance(kwargs["mode"], str)
          and (kwargs["global_scale"] is None or isinstance(kwargs["global_scale"], array)))
    if "scales" in kwargs:
        args = args + (kwargs.pop("scales"),)
        ok = ok and isinstance(args[1], array) and (
            kwargs["biases"] is None or isinstance(kwargs["biases"], array)) and (
            kwargs["dtype"] is None or isinstance(kwargs["dtype"], _dt.Dtype))
    if not ok:
        given = {k: v for k, v in kwargs.items() if v is not None and k != "mode"}
        if kwargs["mode"] != "affine":
            given["mode"] = kwargs["mode"]
        raise incompatible_arguments(signature, list(args), given or None)


def _mode(mode, tag):
    """``string_to_quantization_mode``: the mode's name, or MLX's error."""
    if mode not in _MODES:
        raise ValueError(f"[{tag}] Invalid quantization mode '{mode}'.")
    return mode


def _params(mode, group_size, bits):
    """``quantization_params_from_mode``: the mode's defaults fill what is None."""
    gs, b = _MODES[mode]  # int(): a bool is an int to the binding
    return (gs if group_size is None else int(group_size)), (b if bits is None else int(bits))


def _check_global_scale(tag, mode, global_scale):
    """``validate_global_scale``: only nvfp4 takes one, a float32 scalar."""
    if global_scale is None:
        return
    if mode != "nvfp4":
        raise ValueError(
            f"[{tag}] Global scale is only supported for 'nvfp4' quantization mode.")
    if global_scale.size != 1:
        raise ValueError(f"[{tag}] Global scale must be a scalar but got shape "
                         f"{format_shape(global_scale.shape)}.")
    if global_scale.dtype is not _dt.float32:
        raise ValueError(f"[{tag}] Global scale must have dtype float32 but got "
                         f"{global_scale.dtype.name}.")


def _check_fp_params(tag, mode, group_size, bits, error=ValueError):
    """The fixed group size and bits of the fp modes (``fp_quantize``).
    ``error``: the exception raised (qqmm's is MLX's RuntimeError: its CPU
    kernel has no other sizes, "NYI for the general case")."""
    expected_gs = 16 if mode == "nvfp4" else 32
    expected_bits = 8 if mode == "mxfp8" else 4
    if group_size != expected_gs:
        raise error(f"[{tag}] {mode} quantization requires group size "
                    f"{expected_gs} but got {group_size}.")
    if bits != expected_bits:
        raise error(f"[{tag}] {mode} quantization requires bits to be "
                    f"{expected_bits} but got {bits}.")


def _pow2(n):
    return n > 0 and n & (n - 1) == 0


@shared_doc
def quantize(w, /, group_size=None, bits=None, mode="affine", global_scale=None, *,
             stream=None):
    """``mx.quantize``: quantize the matrix ``w`` group by group along its last axis: ``[w_q, scales, biases]`` for "affine", ``[w_q, scales]`` for "mxfp4", "mxfp8" and "nvfp4".

    Each run of ``group_size`` consecutive elements of a row shares one scale
    (and, for "affine", one bias); each element becomes a ``bits``-bit code,
    and the codes are packed into uint32 words from the lowest bits up
    (``w_q`` has ``w.shape[-1] * bits / 32`` columns). "affine" maps the codes
    ``0 .. 2**bits - 1`` evenly onto the group's range, putting the edge of
    larger magnitude exactly on a code (the scale may be negative); the fp modes
    store fp4 (E2M1) or fp8 (e4m3) values with a shared power-of-two ("mx")
    or e4m3 ("nvfp4") scale. As mlx/ops.cpp ``quantize``: MLX's CPU kernel for
    "affine" computes exactly what its fallback composition does, and MLX
    differentiates and batches the fallback, so here both are that composition;
    the fp modes are compositions on MLX's CPU too. Returns a list, as MLX.

    Arguments:
    - ``w``: a floating array of at least 2 dimensions, its last divisible by
      ``group_size``.
    - ``group_size``: 32, 64 or 128 for "affine"; 32 for "mxfp4" and "mxfp8",
      16 for "nvfp4" (default None: 64, 32, 32, 16).
    - ``bits``: 1-6 or 8 for "affine"; for the fp modes their own, 8 for
      "mxfp8" and 4 for the others (default None: 4 for "affine", else the
      mode's).
    - ``mode``: {quant_mode}
    - ``global_scale``: a float32 scalar for "nvfp4" (default None).

    Errors: ``ValueError`` for another mode (MLX: "[quantize] Invalid
    quantization mode 'x'."), another group size (MLX: "[quantize] The requested
    group size 16 is not supported. The supported group sizes are 32, 64, and
    128."), another number of bits (MLX: "[quantize] The requested number of
    bits 7 is not supported. The supported bits are 1, 2, 3, 4, 5, 6 and 8."),
    fewer than 2 dimensions, a last axis the group size does not divide, an
    integer ``w`` (MLX: "[quantize] Only real floating types can be quantized
    but w has type int32.") or fp-mode sizes other than the mode's (MLX:
    "[quantize] mxfp8 quantization requires bits to be 8 but got 4.").

    >>> w = mx.arange(32, dtype=mx.float32).reshape(1, 32)
    >>> w_q, scales, biases = mx.quantize(w, group_size=32, bits=4)
    >>> w_q.shape, scales, biases
    ((1, 4), array([[-2.06667]], dtype=float32), array([[31]], dtype=float32))
    """
    _check_binding(_QUANTIZE, (w,), {"group_size": group_size, "bits": bits, "mode": mode,
                                     "global_scale": global_scale})
    mode = _mode(mode, "quantize")
    group_size, bits = _params(mode, group_size, bits)
    if not _dt.issubdtype(w.dtype, _dt.floating):
        raise ValueError("[quantize] Only real floating types can be quantized "
                         f"but w has type {w.dtype.name}.")
    if w.ndim < 2:
        raise ValueError("[quantize] The matrix to be quantized must have at least 2 "
                         f"dimension but it has only {w.ndim}.")
    if w.shape[-1] % group_size != 0:
        raise ValueError(
            "[quantize] The last dimension of the matrix needs to be divisible by the "
            f"quantization group size {group_size}. However the provided  matrix has "
            f"shape {format_shape(w.shape)}")
    _check_global_scale("quantize", mode, global_scale)
    if mode == "affine":
        return _affine_quantize(w, group_size, bits)
    _check_fp_params("quantize", mode, group_size, bits)
    return _fp_quantize(w, group_size, bits, global_scale)


def _affine_quantize(w, group_size, bits):
    """``affine_quantize`` (MLX 0.32.4, with 1-bit support): per group, the
    scale and bias that put the edge of larger magnitude exactly on a level
    (for 1 bit: the min and the max), then ``pack_and_quantize``."""
    if group_size not in (32, 64, 128):
        raise ValueError(
            f"[quantize] The requested group size {group_size} is not supported. "
            "The supported group sizes are 32, 64, and 128.")
    if not 1 <= bits <= 8 or bits == 7:
        raise ValueError(
            f"[quantize] The requested number of bits {bits} is not supported. "
            "The supported bits are 1, 2, 3, 4, 5, 6 and 8.")
    if w.dtype is _dt.float64:  # MLX raises this when it evaluates
        raise RuntimeError("[fast::Quantize::eval_cpu] Only supports floating point inputs")
    f32 = _dt.float32
    zero = array(0, f32)
    n_bins = array((1 << bits) - 1, f32)
    wshape = w.shape[:-1] + (-1,)
    packed = reshape(w, (-1, w.shape[-1] // group_size, group_size))
    # MLX's CPU kernel skips nans in a group's max and min (std::max, std::min)
    nan = not_equal(packed, packed)
    w_max = astype(_max(where(nan, -math.inf, packed), -1, keepdims=True), f32)
    w_min = astype(_min(where(nan, math.inf, packed), -1, keepdims=True), f32)
    eps = array(1e-7, f32)
    if bits == 1:  # level 0 is the group's min, level 1 its max
        scales, biases = maximum(subtract(w_max, w_min), eps), w_min
    else:
        mask = greater(abs(w_min), abs(w_max))
        scales = maximum(divide(subtract(w_max, w_min), n_bins), eps)
        scales = where(mask, scales, negative(scales))
        edge = where(mask, w_min, w_max)
        q0 = round(divide(edge, scales))
        scales = where(not_equal(q0, zero), divide(edge, q0), scales)
        biases = where(equal(q0, zero), zero, edge)
    packed = _pack_and_quantize(packed, scales, biases, bits)
    return [reshape(packed, wshape), reshape(astype(scales, w.dtype), wshape),
            reshape(astype(biases, w.dtype), wshape)]


def _pack_and_quantize(w, scales, biases, bits):
    """``pack_and_quantize``: the levels, clipped to ``[0, 2**bits - 1]``, packed
    into uint32 words from the lowest bits up, as one little-endian stream of
    ``bits``-bit fields (a 3-, 5- or 6-bit field may straddle two words)."""
    u32 = _dt.uint32
    levels = clip(round(divide(subtract(w, biases), scales)),
                  array(0, w.dtype), array((1 << bits) - 1, w.dtype))
    levels = astype(levels, u32)
    if _pow2(bits):
        shifts = power(array(2, u32), arange(0, 32, bits, u32))
        levels = reshape(levels, (levels.shape[0], -1, 32 // bits))
        return _sum(multiply(levels, shifts), 2)
    bits_of = bitwise_and(right_shift(expand_dims(levels, -1), arange(bits, dtype=u32)),
                          array([1], u32))
    bits_of = reshape(bits_of, bits_of.shape[:-2] + (-1, 32))
    return _sum(left_shift(bits_of, arange(32, dtype=u32)), -1)


def _fp_quantize(w, group_size, bits, global_scale):
    """``fp_quantize``'s composition: a shared power-of-two (e8m0) or e4m3
    scale per group, then each value to its nearest E2M1 code (fp4, ties to the
    lower code) or to e4m3 (fp8)."""
    maxval = 6.0 if bits == 4 else 448.0
    new_shape = w.shape[:-1] + (-1,)
    wq = reshape(w, (-1, group_size))
    scales = divide(_max(abs(wq), -1, keepdims=True), array(maxval, w.dtype))
    if group_size == 16:
        scale_encode = (divide(array(448.0 * 6.0, _dt.float32), global_scale)
                        if global_scale is not None else array(1.0, _dt.float32))
        scales = to_fp8(multiply(scales, scale_encode))
        wq = multiply(divide(wq, from_fp8(scales, w.dtype)), scale_encode)
    else:
        z = array(0, scales.dtype)
        exponent = astype(round(log2(scales)), _dt.int32)
        # MLX 0.32.4 rounds the exponent up where 2**exponent < the scale, so
        # that the group's max stays representable
        decoded = power(array(2.0, _dt.float32), astype(exponent, _dt.float32))
        exponent = where(less(decoded, astype(scales, _dt.float32)),
                         add(exponent, array(1, _dt.int32)), exponent)
        scales = where(equal(scales, z), z, exponent)
        wq = divide(wq, power(array(2.0, w.dtype), scales))
        scales = astype(add(scales, array(127, _dt.int32)), _dt.uint8)
    if bits == 4:
        lut = array(FP4_E2M1, w.dtype)
        wq = argmin(abs(subtract(expand_dims(wq, -1), lut)), -1)
        shifts = power(array(2, _dt.uint32), arange(0, 32, 4, _dt.uint32))
        wq = _sum(multiply(reshape(wq, (-1, 4, 8)), shifts), -1)
    else:
        wq = view(to_fp8(wq), _dt.uint32)
    return [reshape(wq, new_shape), reshape(scales, new_shape)]


@shared_doc
def dequantize(w, /, scales, biases=None, group_size=None, bits=None, mode="affine",
               global_scale=None, dtype=None, *, stream=None):
    """``mx.dequantize``: the matrix a ``quantize`` result stands for: each unpacked code times its group's scale, plus its bias for "affine".

    The fp modes decode fp4 (E2M1) or fp8 (e4m3) codes and multiply by the
    group's scale. As mlx/ops.cpp ``dequantize``, ``affine_dequantize`` and
    ``fp_dequantize``: on MLX's CPU all are compositions of ops, so their
    gradients and batching are those ops'. The output has ``dtype``, else the
    scales' and biases' type ("affine") or bfloat16.

    Arguments:
    - ``w``: the packed codes, uint32, at least 2 dimensions.
    - ``scales``: one scale per group (uint8 exponents or e4m3 codes for the fp
      modes).
    - ``biases``: one bias per group for "affine", None otherwise (default None).
    - ``group_size``: as given to ``quantize`` (default None: the mode's).
    - ``bits``: as given to ``quantize`` (default None: the mode's).
    - ``mode``: {quant_mode}
    - ``global_scale``: the float32 scalar ``quantize`` got for "nvfp4"
      (default None).
    - ``dtype``: the output type, a real floating type (default None).

    Errors: ``ValueError`` for an ``w`` that is not uint32 (MLX: "[dequantize]
    The matrix should be given as a uint32"), affine without biases (MLX:
    "[dequantize] Biases must be provided for affine quantization."), fp-mode
    scales that are not uint8 (MLX: "[dequantize] Scale type must be uint8 but
    received type float32.") or shapes that do not fit the group size and bits
    (MLX: "[dequantize] Shape of scales and biases does not match the matrix
    given the quantization parameters. Provided matrix of shape (1,4) and
    scales/biases of shape (1,1) with group_size=64 and bits=4.").

    >>> w = mx.arange(32, dtype=mx.float32).reshape(1, 32)
    >>> w_q, scales, biases = mx.quantize(w, group_size=32, bits=4)
    >>> mx.dequantize(w_q, scales, biases, group_size=32, bits=4)[0, :6]
    array([0, 0, 2.06667, 2.06667, 4.13334, 4.13334], dtype=float32)
    """
    _check_binding(_DEQUANTIZE, (w,), {
        "scales": scales, "biases": biases, "group_size": group_size, "bits": bits,
        "mode": mode, "global_scale": global_scale, "dtype": dtype})
    out_type, mode = _mode_with_type("dequantize", scales, biases, dtype, mode)
    group_size, bits = _params(mode, group_size, bits)
    if bits <= 0:
        raise ValueError(f"[dequantize] Invalid value for bits: {bits}")
    if group_size <= 0:
        raise ValueError(f"[dequantize] Invalid value for group_size: {group_size}")
    if w.dtype is not _dt.uint32:
        raise ValueError("[dequantize] The matrix should be given as a uint32")
    if w.ndim < 2:
        raise ValueError("[dequantize] The matrix to be dequantized must have at least "
                         f"2 dimension but it has only {w.ndim}.")
    _check_global_scale("dequantize", mode, global_scale)
    if mode == "affine":
        return astype(_affine_dequantize(w, scales, biases, group_size, bits), out_type)
    _check_fp_params("dequantize", mode, group_size, bits)
    return _fp_dequantize(w, scales, group_size, bits, out_type, global_scale)


def _mode_with_type(tag, scales, biases, out_type, mode):
    """``validate_mode_with_type``: the output dtype and the mode, or MLX's errors."""
    mode = _mode(mode, tag)
    if out_type is not None and not _dt.issubdtype(out_type, _dt.floating):
        raise ValueError(f"[{tag}] Only real floating types are supported but "
                         f"output dtype == {out_type.name}.")
    if mode == "affine":
        if biases is None:
            raise ValueError(f"[{tag}] Biases must be provided for affine quantization.")
        dtype = _dt.result_type(scales, biases)
        if not _dt.issubdtype(dtype, _dt.floating):
            raise ValueError(
                f"[{tag}] Only real floating types are supported but scales.dtype() == "
                f"{scales.dtype.name} and biases.dtype() == {biases.dtype.name}.")
        return (dtype if out_type is None else out_type), mode
    if scales.dtype is not _dt.uint8:
        raise ValueError(f"[{tag}] Scale type must be uint8 but received type "
                         f"{scales.dtype.name}.")
    if biases is not None:
        raise ValueError(f"[{tag}] Biases must be null for quantization mode '{mode}'.")
    return (_dt.bfloat16 if out_type is None else out_type), mode


def _affine_dequantize(w, scales, biases, group_size, bits):
    """``affine_dequantize``'s checks and composition: unpack the ``bits``-bit
    fields, then ``level * scale + bias`` per group."""
    if not w.ndim == scales.ndim == biases.ndim or not (
            w.shape[:-1] == scales.shape[:-1] == biases.shape[:-1]):
        raise ValueError("[dequantize] Shape of scales and biases does not match the matrix")
    out_size = w.shape[-1] * 32 // bits
    if out_size != scales.shape[-1] * group_size:
        raise ValueError(
            "[dequantize] Shape of scales and biases does not match the matrix given the "
            f"quantization parameters. Provided matrix of shape {format_shape(w.shape)} and "
            f"scales/biases of shape {format_shape(scales.shape)} with "
            f"group_size={group_size} and bits={bits}.")
    if bits > 32:
        raise ValueError(f"[dequantize] bits={bits} does not fit in the uint32 words "
                         "(MLX shifts them by negative amounts: its result is garbage).")
    u32 = _dt.uint32
    if _pow2(bits):
        w = concatenate([
            expand_dims(right_shift(left_shift(w, array(32 - (start + bits), u32)),
                                    array(32 - bits, u32)), -1)
            for start in range(0, 32, bits)], -1)
    else:
        w = bitwise_and(right_shift(expand_dims(w, -1), arange(32, dtype=u32)), array([1], u32))
        w = reshape(w, w.shape[:-2] + (-1, bits))
        w = _sum(left_shift(w, arange(bits, dtype=u32)), -1)
    w = reshape(w, w.shape[:-2] + (-1, group_size) if _pow2(bits)
                else w.shape[:-1] + (-1, group_size))
    w = add(multiply(w, expand_dims(scales, -1)), expand_dims(biases, -1))
    return reshape(w, scales.shape[:-1] + (-1,))


def _fp_dequantize(w, scales, group_size, bits, out_type, global_scale):
    """``fp_dequantize``'s checks and composition: fp4 codes through the E2M1
    table (low nibble first) or fp8 bytes through ``from_fp8``, times the
    group's scale (2**(e - 127), or e4m3 divided by the global encoding)."""
    if w.ndim != scales.ndim or w.shape[:-1] != scales.shape[:-1]:
        raise ValueError("[dequantize] Shape of scales does not match the matrix")
    if w.shape[-1] * 32 // bits != scales.shape[-1] * group_size:
        raise ValueError(
            "[dequantize] Shape of scales does not match the matrix given the "
            f"quantization parameters. Provided matrix of shape {format_shape(w.shape)} "
            f"and scales of shape {format_shape(scales.shape)}.")
    wshape = w.shape[:-1] + (-1,)
    if bits == 4:
        lut = array(FP4_E2M1, out_type)
        out = view(reshape(w, (-1, 4)), _dt.int8)
        lo = expand_dims(take(lut, bitwise_and(out, array(0x0F, _dt.int8)), 0), -1)
        hi = expand_dims(take(lut, right_shift(out, array(4, _dt.int8)), 0), -1)
        out = concatenate([lo, hi], -1)
    else:
        out = from_fp8(view(w, _dt.uint8), out_type)
    out = reshape(out, (-1, group_size))
    scales = reshape(scales, (-1, 1))
    if group_size == 16:
        inv = (divide(global_scale, array(448.0 * 6.0, out_type))
               if global_scale is not None else array(1.0, out_type))
        scales = multiply(from_fp8(scales, out_type), inv)
    else:
        scales = subtract(astype(scales, out_type), array(127, out_type))
        scales = power(array(2.0, out_type), scales)
    return reshape(multiply(out, scales), wshape)


# ---------------------------------------------------------------------------
# products with quantized weights (mlx/ops.cpp): quantized_matmul, gather_qmm,
# qqmm, gather_qqmm
# ---------------------------------------------------------------------------

_QMM = (
    "quantized_matmul(x: array, w: array, /, scales: array, biases: array | None = None, "
    "transpose: bool = True, group_size: int | None = None, bits: int | None = None, "
    "mode: str = 'affine', *, stream: StreamOrDevice = None) -> array")
_GATHER_QMM = (
    "gather_qmm(x: array, w: array, /, scales: array, biases: array | None = None, "
    "lhs_indices: array | None = None, rhs_indices: array | None = None, "
    "transpose: bool = True, group_size: int | None = None, bits: int | None = None, "
    "mode: str = 'affine', global_scale: array | None = None, *, "
    "sorted_indices: bool = False, stream: StreamOrDevice = None) -> array")
_QQMM = (
    "qqmm(x: array, w: array, scales: array | None = None, group_size: int | None = None, "
    "bits: int | None = None, mode: str = 'nvfp4', global_scale_x: array | None = None, "
    "global_scale_w: array | None = None, *, stream: StreamOrDevice = None) -> array")
_GATHER_QQMM = (
    "gather_qqmm(x: array, w: array, /, scales: array | None = None, "
    "lhs_indices: array | None = None, rhs_indices: array | None = None, "
    "group_size: int | None = None, bits: int | None = None, mode: str = 'nvfp4', "
    "global_scale_x: array | None = None, global_scale_w: array | None = None, *, "
    "sorted_indices: bool = False, stream: StreamOrDevice = None) -> array")


def _check_args(signature, args, optional, defaults, required=()):
    """The binding's type checks: ``args`` arrays, the ``required`` keyword
    arguments too, each optional argument of the type its default says (an
    array or None, an int or None, a bool, a str); else MLX's TypeError, with
    the arrays and the required ones listed as given positionally, the rest
    as keywords where they differ from the defaults."""
    kinds = {"array": lambda v: v is None or isinstance(v, array),
             "int": lambda v: v is None or is_int(v),
             "bool": lambda v: isinstance(v, bool),
             "str": lambda v: isinstance(v, str)}
    ok = all(isinstance(a, array) for a in args) and all(
        isinstance(optional[k], array) for k in required) and all(
        kinds[defaults[k][0]](v) for k, v in optional.items())
    if not ok:
        given = {k: v for k, v in optional.items() if k not in required and v is not (
            defaults[k][1]) and not (isinstance(v, (bool, int, str)) and v == defaults[k][1])}
        args = list(args) + [optional[k] for k in required]
        raise incompatible_arguments(signature, args, given or None)


_AFFINE_OPTIONAL = {"scales": ("array", None), "biases": ("array", None),
                    "lhs_indices": ("array", None), "rhs_indices": ("array", None),
                    "transpose": ("bool", True), "group_size": ("int", None),
                    "bits": ("int", None), "mode": ("str", "affine"),
                    "global_scale": ("array", None), "sorted_indices": ("bool", False)}


def _quantized_input(tag, w, scales, group_size, bits, biases=None):
    """``validate_quantized_input``: w is uint32 and its shape fits the scales'."""
    if w.dtype is not _dt.uint32:
        raise ValueError(f"[{tag}] The weight matrix should be uint32 but received "
                         f"{w.dtype.name}")
    if biases is not None and scales.shape != biases.shape:
        raise ValueError(
            f"[{tag}] Scales and biases should have the same shape. Received scales with "
            f"shape {format_shape(scales.shape)} and biases with {format_shape(biases.shape)}")
    if w.ndim < 2 or w.shape[:-2] != scales.shape[:w.ndim - 2]:
        raise ValueError(
            f"[{tag}] Weight and scales should have the same batch shape. Received weight "
            f"with shape {format_shape(w.shape)}, scales with {format_shape(scales.shape)}.")
    if w.shape[-1] * 32 // bits != scales.shape[-1] * group_size:
        raise ValueError(
            f"[{tag}] The shapes of the weight and scales are incompatible based on bits "
            f"and group_size. w.shape() == {format_shape(w.shape)} and scales.shape() == "
            f"{format_shape(scales.shape)} with group_size={group_size} and bits={bits}")


def _quantized_dims(tag, x, w, scales, biases, transpose, group_size, bits):
    """``extract_quantized_matmul_dims``: the expanded w's (inner, outer)
    dimensions, the inner one x's last."""
    _quantized_input(tag, w, scales, group_size, bits, biases)
    if x.ndim == 0:  # MLX reads x.shape(-1)
        raise IndexError("SmallVector out of range.")
    inner = w.shape[-1] * 32 // bits if transpose else w.shape[-2]
    outer = w.shape[-2] if transpose else w.shape[-1] * 32 // bits
    if inner != x.shape[-1]:
        raise ValueError(
            f"[{tag}] Last dimension of first input with shape (..., {x.shape[-1]}) does "
            f"not match the expanded quantized matrix ({inner}, {outer}) computed from "
            f"shape {format_shape(w.shape)} with group_size={group_size}, bits={bits} and "
            f"transpose={'true' if transpose else 'false'}")
    return inner, outer


def _qmm_setup(tag, x, w, scales, biases, transpose, group_size, bits, mode):
    """What quantized_matmul and gather_qmm check and compute before their
    nodes: the mode, its parameters, the output dtype and the inputs cast to
    it ("affine": x, scales and biases promoted together; fp modes: x's)."""
    out_type, mode = _mode_with_type(tag, scales, biases, None, mode)
    group_size, bits = _params(mode, group_size, bits)
    if x.ndim > 1 and x.shape[-2] == 0:  # MLX divides by x's zero rows: the process dies
        raise ValueError(f"[{tag}] x of shape {format_shape(x.shape)} has no rows (MLX's CPU "
                         "kernel divides by zero on it).")
    _quantized_dims(tag, x, w, scales, biases, transpose, group_size, bits)
    out_type = _dt.promote_types(x.dtype, out_type) if mode == "affine" else x.dtype
    if not _dt.issubdtype(out_type, _dt.floating):
        raise ValueError(f"[{tag}] Only real floating types are supported but "
                         f"x.dtype() == {x.dtype.name}.")
    if mode != "affine":  # MLX's kernels assume the mode's own sizes
        _check_fp_params(tag, mode, group_size, bits)
        return mode, group_size, bits, out_type, [x, w, scales]
    return mode, group_size, bits, out_type, [
        astype(x, out_type), w, astype(scales, out_type), astype(biases, out_type)]


def _broadcast_batch(inputs):
    """The inputs broadcast against each other in all but their last two axes."""
    batch = broadcast_shapes(*[a.shape[:-2] for a in inputs])
    return [a if a.shape[:-2] == batch else broadcast_to(a, batch + a.shape[-2:])
            for a in inputs]


@shared_doc
def quantized_matmul(x, w, /, scales, biases=None, transpose=True, group_size=None,
                     bits=None, mode="affine", *, stream=None):
    """``mx.quantized_matmul``: the product of ``x`` with a quantized matrix: ``x @ dequantize(w).T`` (``transpose``, the default) or ``x @ dequantize(w)``.

    One ``QuantizedMatmul`` node (mlx/ops.cpp ``quantized_matmul``), bit for bit
    with MLX's CPU kernel in every mode. "affine" promotes ``x`` with the
    scales and biases; the fp modes ("mxfp4", "mxfp8", "nvfp4") keep ``x``'s
    dtype (their node takes no global scale: MLX's kernel ignores it). Batch
    axes of ``x`` and ``w`` broadcast.

    Arguments:
    - ``x``: the left factor, of a floating type.
    - ``w``: the packed codes (uint32), as ``quantize`` returns them.
    - ``scales``: the group scales.
    - ``biases``: the group biases ("affine"), else None (default None).
    - ``transpose``: multiply by the transpose of the dequantized ``w``
      (default True).
    - ``group_size``: as given to ``quantize`` (default None: the mode's).
    - ``bits``: as given to ``quantize`` (default None: the mode's).
    - ``mode``: {quant_mode}

    Errors: ``ValueError`` for a ``w`` that is not uint32 (MLX:
    "[quantized_matmul] The weight matrix should be uint32 but received
    float32"), affine without biases, or sizes that do not fit (MLX:
    "[quantized_matmul] Last dimension of first input with shape (..., 16) does
    not match the expanded quantized matrix (32, 2) computed from shape (2,4)
    with group_size=32, bits=4 and transpose=true"). An ``x`` with 0 rows raises
    a ``ValueError``, where MLX's CPU build dies.

    >>> w = mx.array([[1.0], [2.0]]) * mx.ones((2, 32))
    >>> w_q, scales, biases = mx.quantize(w, group_size=32, bits=4)
    >>> mx.quantized_matmul(mx.ones((1, 32)), w_q, scales, biases, group_size=32, bits=4)
    array([[32, 64]], dtype=float32)
    """
    _check_args(_QMM, (x, w), {"scales": scales, "biases": biases, "transpose": transpose,
                               "group_size": group_size, "bits": bits, "mode": mode},
                _AFFINE_OPTIONAL, ("scales",))
    mode, group_size, bits, out_type, inputs = _qmm_setup(
        "quantized_matmul", x, w, scales, biases, transpose, group_size, bits, mode)
    if x.ndim > 2 and w.ndim > 2:
        inputs = _broadcast_batch(inputs)
    return make_array(QuantizedMatmul(group_size, bits, mode, transpose), inputs)


def indices_or_default(tag, indices, x):
    """MLX's ``indices_or_default``: uint32 indices, or each matrix of x in turn."""
    if x.ndim < 2:
        raise ValueError(f"{tag} Input must have at least two dimensions but got input "
                         f"with shape {format_shape(x.shape)}.")
    if indices is not None:
        if not _dt.issubdtype(indices.dtype, _dt.integer):
            raise ValueError(f"{tag} Got indices with invalid dtype. Indices must be integral.")
        return astype(indices, _dt.uint32)
    batch = x.shape[:-2]
    return reshape(arange(math.prod(batch), dtype=_dt.uint32), batch)


@shared_doc
def gather_qmm(x, w, /, scales, biases=None, lhs_indices=None, rhs_indices=None,
               transpose=True, group_size=None, bits=None, mode="affine", global_scale=None,
               *, sorted_indices=False, stream=None):
    """``mx.gather_qmm``: ``quantized_matmul`` of the matrices of ``x`` and ``w`` the index arrays pick, one product per index pair.

    ``lhs_indices`` picks matrices of ``x`` and ``rhs_indices`` of ``w`` (from
    their batch axes, flattened); where one is None, each matrix in turn. The
    two index arrays broadcast together, and the result has their shape
    followed by each product's. One ``GatherQMM`` node; with neither index
    array it is ``quantized_matmul``. ``global_scale`` (one float32 per
    matrix of ``w``, "nvfp4" only) is checked as MLX 0.32.4 checks it, then
    refused as its CPU build refuses it. ``sorted_indices`` is a promise that
    the indices are sorted (a hint for MLX's GPU kernels).

    Arguments:
    - ``x``: the left factors, at least 2-D.
    - ``w``: the packed codes of the right factors (uint32), at least 2-D.
    - ``scales``, ``biases``: as in ``quantized_matmul`` (biases default None).
    - ``lhs_indices``: integer indices into ``x``'s matrices (default None).
    - ``rhs_indices``: integer indices into ``w``'s matrices (default None).
    - ``transpose``: as in ``quantized_matmul`` (default True).
    - ``group_size``, ``bits``, ``mode``: as in ``quantized_matmul``.
    - ``global_scale``: see above (default None).
    - ``sorted_indices``: see above (default False).

    Errors: ``ValueError`` as ``quantized_matmul``'s, and for float indices
    (MLX: "[gather_qmm] Got indices with invalid dtype. Indices must be
    integral."). Indices out of range raise an error, where MLX reads past the
    array.

    >>> w = mx.array([[[1.0]], [[3.0]]]) * mx.ones((2, 2, 32))
    >>> w_q, scales, biases = mx.quantize(w, group_size=32, bits=4)
    >>> mx.gather_qmm(mx.ones((1, 32)), w_q, scales, biases, rhs_indices=mx.array([1, 0, 1]), group_size=32, bits=4)
    array([[[96, 96]],
           [[32, 32]],
           [[96, 96]]], dtype=float32)
    """
    _check_args(_GATHER_QMM, (x, w), {
        "scales": scales, "biases": biases, "lhs_indices": lhs_indices,
        "rhs_indices": rhs_indices, "transpose": transpose, "group_size": group_size,
        "bits": bits, "mode": mode, "global_scale": global_scale,
        "sorted_indices": sorted_indices}, _AFFINE_OPTIONAL, ("scales",))
    no_indices = lhs_indices is None and rhs_indices is None
    if global_scale is not None and no_indices:
        raise ValueError("[gather_qmm] Global scale is not supported without indices.")
    if no_indices:
        return quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode)
    mode, group_size, bits, out_type, inputs = _qmm_setup(
        "gather_qmm", x, w, scales, biases, transpose, group_size, bits, mode)
    if global_scale is not None:
        if mode != "nvfp4":
            raise ValueError(
                "[gather_qmm] Global scale is only supported for 'nvfp4' quantization mode.")
        if global_scale.dtype is not _dt.float32:
            raise ValueError("[gather_qmm] Global scale must have dtype float32 but got "
                             f"{global_scale.dtype.name}.")
        if global_scale.shape != w.shape[:-2]:
            raise ValueError(
                "[gather_qmm] Global scale must have one entry per expert with shape "
                f"{format_shape(w.shape[:-2])} but got {format_shape(global_scale.shape)}.")
        raise ValueError("[gather_qmm] Global scale is only supported on the GPU.")
    lhs = indices_or_default("[gather_qmm]", lhs_indices, x)
    rhs = indices_or_default("[gather_qmm]", rhs_indices, w)
    lhs, rhs = broadcast_arrays(lhs, rhs)
    inputs[0] = astype(inputs[0], out_type)
    primitive = GatherQMM(group_size, bits, mode, transpose,
                          sorted_indices and rhs_indices is None,
                          sorted_indices and lhs_indices is None)
    return make_array(primitive, inputs + [lhs, rhs])



_QQ_OPTIONAL = {"scales": ("array", None), "lhs_indices": ("array", None),
                "rhs_indices": ("array", None), "group_size": ("int", None),
                "bits": ("int", None), "mode": ("str", "nvfp4"),
                "global_scale_x": ("array", None), "global_scale_w": ("array", None),
                "sorted_indices": ("bool", False)}


def _qqmm_dims(x, w, scales, group_size, bits):
    """``extract_qqmm_dims``: a float w's last dimension must be x's; a
    quantized one's expanded shape must fit x (``transpose``)."""
    if w.dtype is not _dt.uint32:
        if x.shape[-1] != w.shape[-1]:
            raise ValueError(
                f"[qqmm] Last dimension of first input with shape {format_shape(x.shape)} must "
                f"match last dimension of second input with shape {format_shape(w.shape)}.")
        return w.shape[-1], w.shape[-2]
    return _quantized_dims("qqmm", x, w, scales, None, True, group_size, bits)


def _qq_mode(tag, mode):
    """The mode by name; "affine" too, as MLX accepts it, but MLX's CPU kernel
    would treat the affine codes as fp4 (its result is garbage): an error."""
    if mode not in _MODES:
        raise ValueError(f"[{tag}] Invalid quantization mode '{mode}'.")
    if mode == "affine":
        raise ValueError(f"[{tag}] mode 'affine' is not supported: MLX's CPU kernel reads "
                         "the affine codes as fp4 values (its result is garbage).")
    return mode


@shared_doc
def qqmm(x, w, /, scales=None, group_size=None, bits=None, mode="nvfp4", global_scale_x=None,
         global_scale_w=None, *, stream=None):
    """``mx.qqmm``: ``x`` quantized (and dequantized) in ``mode``, times the quantized ``w`` transposed.

    One ``QQMatmul`` node of ``x``'s dtype (mlx/ops.cpp ``qqmm``). 2-D inputs
    (``x`` may be 1-D, or N-D with a 2-D ``w``: its rows are flattened). MLX's
    CPU build evaluates it only for a quantized ``w`` and one row of ``x``;
    otherwise it raises "[QQMatmul] NYI for the general case", and so does
    mlxref. "affine" is refused: MLX's CPU kernel would read affine codes as
    fp4 values.

    Arguments:
    - ``x``: the left factor, float16, bfloat16 or float32.
    - ``w``: the right factor: packed codes (uint32) from ``quantize`` in
      ``mode``, or a float matrix.
    - ``scales``: ``w``'s group scales when it is quantized (default None).
    - ``group_size``, ``bits``: the mode's sizes (default None: the mode's).
    - ``mode``: "nvfp4" (default), "mxfp4" or "mxfp8".
    - ``global_scale_x``, ``global_scale_w``: float32 scalars for "nvfp4",
      both or neither (default None).

    Errors: ``ValueError`` for a quantized ``w`` without scales (MLX: "[qqmm]
    Scales must be provided if second argument is quantized."), shapes that do
    not fit the mode's sizes (MLX: "[qqmm] The shapes of the weight and scales
    are incompatible based on bits and group_size. w.shape() == (2,4) and
    scales.shape() == (2,2) with group_size=32 and bits=4"), or inputs of more
    than 2 dimensions; ``RuntimeError`` when evaluating more than one row (MLX:
    "[QQMatmul] NYI for the general case").

    >>> w_q, scales = mx.quantize(mx.ones((2, 32)), mode="nvfp4")
    >>> mx.qqmm(mx.array([[1.0, -2.0] * 16]), w_q, scales)
    array([[-17.0156, -17.0156]], dtype=float32)
    """
    _check_args(_QQMM, (x, w), {"scales": scales, "group_size": group_size, "bits": bits,
                                "mode": mode, "global_scale_x": global_scale_x,
                                "global_scale_w": global_scale_w}, _QQ_OPTIONAL)
    mode = _qq_mode("qqmm", mode)
    group_size, bits = _params(mode, group_size, bits)
    in_ndim, in_shape = x.ndim, x.shape
    if x.ndim == 0 or w.ndim == 0:  # MLX: "SmallVector out of range."
        raise IndexError(f"[qqmm] x and w must have at least one dimension, but x.ndim() == "
                         f"{x.ndim} and w.ndim() == {w.ndim}.")
    if x.ndim == 1:
        x = expand_dims(x, 0)
    elif w.ndim == 2 and x.ndim > 2:
        x = flatten(x, 0, -2)
    if x.ndim > 2 or w.ndim > 2:
        raise ValueError(f"[qqmm] Only 2D inputs are supported but x.ndim() == {x.ndim} and "
                         f"w.ndim() == {w.ndim}.")
    if w.dtype is _dt.uint32:
        if scales is None:
            raise ValueError("[qqmm] Scales must be provided if second argument is quantized.")
        _quantized_input("qqmm", w, scales, group_size, bits)
    elif not _dt.issubdtype(w.dtype, _dt.floating) or w.dtype is _dt.float64:
        raise ValueError("[qqmm] Only real floating types except float64 are supported but "
                         f"second argument dtype == {w.dtype.name}.")
    if not _dt.issubdtype(x.dtype, _dt.floating) or x.dtype is _dt.float64:
        raise ValueError("[qqmm] Only real floating types except float64 are supported but "
                         f"first argument dtype == {x.dtype.name}.")
    _check_global_scale("qqmm", mode, global_scale_x)
    _check_global_scale("qqmm", mode, global_scale_w)
    if mode == "nvfp4" and (global_scale_x is None) != (global_scale_w is None):
        raise ValueError("[qqmm] For nvfp4 mode, either both global_scale_x and "
                         "global_scale_w must be provided, or neither.")
    _check_fp_params("qqmm", mode, group_size, bits, RuntimeError)
    _qqmm_dims(x, w, scales, group_size, bits)
    inputs = [x, w] + ([scales] if scales is not None else [])
    if global_scale_x is not None and global_scale_w is not None:
        inputs += [global_scale_x, global_scale_w]
    out = make_array(QQMatmul(group_size, bits, mode), inputs)
    if in_ndim > 2:
        return unflatten(out, 0, in_shape[:-1])
    return squeeze(out, 0) if in_ndim == 1 else out


@shared_doc
def gather_qqmm(x, w, /, scales=None, lhs_indices=None, rhs_indices=None, group_size=None,
                bits=None, mode="nvfp4", global_scale_x=None, global_scale_w=None, *,
                sorted_indices=False, stream=None):
    """``mx.gather_qqmm``: ``qqmm`` of the matrices of ``x`` and ``w`` the index arrays pick, one product per index pair.

    One ``GatherQQMM`` node (mlx/ops.cpp ``gather_qqmm``), the indices as in
    ``gather_qmm``. MLX's CPU build evaluates none of it: it raises
    "[GatherQQMM] NYI". mlxref evaluates it for one row per matrix of ``x``
    (and raises that error otherwise), so the example prints only the shape,
    which both compute.

    Arguments:
    - ``x``: the left factors, at least 2-D.
    - ``w``: the right factors: packed codes (uint32) or floats, at least 2-D.
    - ``scales``: ``w``'s group scales when it is quantized (default None).
    - ``lhs_indices``, ``rhs_indices``: integer indices into the matrices of
      ``x`` and ``w`` (default None: each in turn).
    - ``group_size``, ``bits``, ``mode``: as in ``qqmm`` (mode default "nvfp4").
    - ``global_scale_x``, ``global_scale_w``: as in ``qqmm`` (default None).
    - ``sorted_indices``: the indices are sorted (a hint; default False).

    Errors: ``ValueError`` for another mode (MLX: "[gather_qqmm] Invalid
    quantization mode 'x'.") or float indices (MLX: "[gather_qqmm] Got indices
    with invalid dtype. Indices must be integral."); ``RuntimeError`` when
    evaluated with several rows per matrix (MLX: "[GatherQQMM] NYI", always).

    >>> w_q, scales = mx.quantize(mx.ones((2, 32)), mode="nvfp4")
    >>> out = mx.gather_qqmm(mx.ones((2, 1, 32)), mx.stack([w_q, w_q]), mx.stack([scales, scales]))
    >>> out.shape
    (2, 1, 2)
    """
    _check_args(_GATHER_QQMM, (x, w), {
        "scales": scales, "lhs_indices": lhs_indices, "rhs_indices": rhs_indices,
        "group_size": group_size, "bits": bits, "mode": mode,
        "global_scale_x": global_scale_x, "global_scale_w": global_scale_w,
        "sorted_indices": sorted_indices}, _QQ_OPTIONAL)
    if mode not in _MODES:
        raise ValueError(f"[gather_qqmm] Invalid quantization mode '{mode}'.")
    group_size, bits = _params(mode, group_size, bits)
    lhs = indices_or_default("[gather_qqmm]", lhs_indices, x)
    rhs = indices_or_default("[gather_qqmm]", rhs_indices, w)
    lhs, rhs = broadcast_arrays(lhs, rhs)
    inputs = [x, w, lhs, rhs] + ([scales] if scales is not None else [])
    if global_scale_x is not None and global_scale_w is not None:
        inputs += [global_scale_x, global_scale_w]
    if w.dtype is _dt.uint32 and scales is None:  # MLX dereferences the missing scales
        raise ValueError("[gather_qqmm] Scales must be provided if second argument is "
                         "quantized.")
    _qqmm_dims(x, w, scales, group_size, bits)
    return make_array(GatherQQMM(group_size, bits, mode), inputs)
