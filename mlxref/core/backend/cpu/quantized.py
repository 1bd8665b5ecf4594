"""The quantized kernels: fp8 conversion, unpacking, and products with quantized weights.

Read alongside: mlx/backend/cpu/quantized.cpp (``extract_bits``,
``dequantize_scale``, ``_qmm``, ``_qmm_t``, ``fp_qmm``, ``fp_qmm_t``,
``fp_quantize_dequantize`` and the ``eval_cpu`` of ``QuantizedMatmul``,
``GatherQMM``, ``QQMatmul``, ``fast::ConvertFP8``) and
mlx/backend/cpu/unary_ops.h (``ToFP8``, ``FromFP8``: the bit manipulations
mlxref/core/dtypes.py mirrors).

The product kernels compute in the input type ``T`` (float32, float16 or
bfloat16), rounding every step to it. "affine": each weight is
``scale * level + bias`` (two roundings), and each output a dot product
summed left to right from 0 (``_qmm`` and ``_qmm_t`` take the same order
over the inner dimension). The fp modes ("mxfp4", "nvfp4", "mxfp8"): the
code's value (E2M1 or e4m3) times the group's scale (a power of two, or an
e4m3 value for "nvfp4"), taken as ``scale * (group's dot product)`` per group
when ``transpose`` (``fp_qmm_t``) and ``(x * scale) * value`` per term
otherwise (``fp_qmm``).
Read next: mlxref/core/primitives/quantized.py (the primitives and their rules).
"""

import array as _pyarray
import functools
import math

from ... import dtypes as _dt
from ...scalar import apply, sympy
from .matmul import dot, dot_float32
from .rounding import rounding

# E2M1 (fp4) values by their 4-bit code: MLX's ``FP4_LUT``.
FP4_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
            -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


# --- fp8 (e4m3) codes: fast::ConvertFP8 ------------------------------------------------


@functools.cache
def _symbolic(to_fp8):
    """A SymPy function for the conversion, evaluated on numbers: the symbolic
    checks carry ``to_fp8(x)`` through and compare it at a point."""
    if to_fp8:
        class to_fp8(sympy.Function):
            @classmethod
            def eval(cls, x):
                if x.is_Number:
                    return sympy.Integer(_dt.float_to_fp8_e4m3(_dt.float32.cast(float(x))))
                return None

        return to_fp8

    class from_fp8(sympy.Function):
        @classmethod
        def eval(cls, x):
            if x.is_Number:
                return sympy.Float(_dt.fp8_e4m3_to_float(int(x)), 30)
            return None

    return from_fp8


def convert_fp8(data, to_fp8):
    """``fast::ConvertFP8::eval_cpu``: floats to e4m3 codes (``to_fp8``) or back."""
    convert = _dt.float_to_fp8_e4m3 if to_fp8 else _dt.fp8_e4m3_to_float
    return apply(convert, _symbolic(to_fp8), data)


# --- unpacking ---------------------------------------------------------------------------


def extract_bits(words, bits):
    """The ``bits``-bit fields of one row of uint32 words, lowest bits first:
    the row as one little-endian bit stream (a 3-, 5- or 6-bit field may
    straddle two words, as MLX's ``extract_bits`` reads them from bytes)."""
    if 32 % bits == 0:
        mask, per = (1 << bits) - 1, 32 // bits
        return [(w >> (bits * p)) & mask for w in words for p in range(per)]
    stream = int.from_bytes(_pyarray.array("I", words).tobytes(), "little")
    mask = (1 << bits) - 1
    out = []
    for _ in range(len(words) * 32 // bits):
        out.append(stream & mask)
        stream >>= bits
    return out


def dequantize_scale(code):
    """MLX's ``dequantize_scale`` for 32-element groups: the bfloat16 whose
    bits are ``code << 7``, i.e. 2**(code - 127) (code 0 is 2**-127, 255 inf)."""
    if code == 255:
        return math.inf
    return math.ldexp(1.0, max(code, 0) - 127)


def _exact_or(rounded):
    """``rounded`` (a dtype's rounding of one number) for numbers, the
    identity for SymPy expressions (which ``rounded`` would first try to
    evaluate as floats: slow) and where there is no rounding."""
    if rounded is None:
        return lambda v: v
    return lambda v: rounded(v) if type(v) is float else v


# --- the products ------------------------------------------------------------------------


def _check_kernel(dtype, group_size, bits, mode):
    """The CPU kernels' own limits, raised when MLX evaluates."""
    if dtype not in (_dt.float32, _dt.float16, _dt.bfloat16):
        raise RuntimeError("[quantized_matmul] only floating types are supported")
    if mode == "affine":
        if bits not in (1, 2, 3, 4, 5, 6, 8):
            raise RuntimeError("Quantization bits must be 1, 2, 3, 4, 5, 6 or 8.")
        if group_size not in (32, 64, 128):
            raise RuntimeError("Quantization group size must be 32, 64 or 128.")


def _matrices(x, x_shape, w, w_shape, scales, scales_shape, biases, bits):
    """Row-lists per matrix of x (M x K), the decoded weights and the
    scales (and biases) of each matrix of w."""
    k = x_shape[-1]
    m = x_shape[-2] if len(x_shape) > 1 else 1
    xs = [[x[r:r + k] for r in range(s, s + m * k, k)]
          for s in range(0, len(x), m * k)] if k else []
    rows, cols = w_shape[-2], w_shape[-1]
    n_w = len(w) // (rows * cols) if rows * cols else 0
    levels = [[extract_bits(w[(i * rows + r) * cols:(i * rows + r + 1) * cols], bits)
               for r in range(rows)] for i in range(n_w)]
    groups = scales_shape[-1]
    per = [[g[r * groups:(r + 1) * groups] for r in range(rows)]
           for g in (scales[i * rows * groups:(i + 1) * rows * groups] for i in range(n_w))]
    bias = None
    if biases is not None:
        bias = [[biases[(i * rows + r) * groups:(i * rows + r + 1) * groups]
                 for r in range(rows)] for i in range(n_w)]
    return xs, levels, per, bias, m, k


def _product(x_rows, levels, scales, biases, k, n, dtype, group_size, bits, mode, transpose):
    """One matrix product: the rows of x times one quantized matrix."""
    rnd = _exact_or(rounding(dtype))
    gs = group_size
    if mode == "affine":
        # the weights as T holds them: scale * level + bias, two roundings
        wd = [[rnd(rnd(s[c // gs] * q) + b[c // gs]) for c, q in enumerate(lv)]
              for lv, s, b in zip(levels, scales, biases)]
        cols = wd if transpose else [list(c) for c in zip(*wd)]
        if dtype is _dt.float32:  # the same roundings, in C where it can
            return [dot_float32(row, col) for row in x_rows for col in cols]
        return [dot(row, col, rnd) for row in x_rows for col in cols]
    cast = (lambda v: v) if dtype is _dt.float32 else dtype.cast
    decode = (lambda c: FP4_E2M1[c]) if bits == 4 else _dt.fp8_e4m3_to_float
    scale_of = _dt.fp8_e4m3_to_float if gs == 16 else dequantize_scale
    values = [[cast(decode(q)) for q in lv] for lv in levels]
    sc = [[cast(scale_of(s)) for s in row] for row in scales]
    out = []
    if transpose:  # fp_qmm_t: a dot product per group, scaled, summed
        for row in x_rows:
            for v, s in zip(values, sc):
                acc = 0
                for g in range(k // gs):
                    part = dot(row[g * gs:(g + 1) * gs], v[g * gs:(g + 1) * gs], rnd)
                    acc = rnd(acc + rnd(s[g] * part))
                out.append(acc)
        return out
    for row in x_rows:  # fp_qmm: (x * scale) * value, term by term
        for j in range(n):
            acc = 0
            for kk in range(k):
                acc = rnd(acc + rnd(rnd(row[kk] * sc[kk][j // gs]) * values[kk][j]))
            out.append(acc)
    return out


def _products(x, x_shape, w, w_shape, scales, scales_shape, biases, pairs, dtype,
              group_size, bits, mode, transpose):
    """The products of x's matrix i and w's matrix j for each (i, j) in
    ``pairs``, concatenated."""
    _check_kernel(dtype, group_size, bits, mode)
    n = w_shape[-2] if transpose else w_shape[-1] * 32 // bits
    xs, levels, per, bias, m, k = _matrices(x, x_shape, w, w_shape, scales, scales_shape,
                                            biases, bits)
    out = []
    for i, j in pairs:
        if k == 0 or not xs:
            out.extend([0.0] * (m * n))
            continue
        out.extend(_product(xs[i], levels[j], per[j], bias[j] if bias else None, k, n, dtype,
                            group_size, bits, mode, transpose))
    return out


def quantized_matmul(x, x_shape, w, w_shape, scales, scales_shape, biases, dtype, group_size,
                     bits, mode, transpose):
    """``QuantizedMatmul::eval_cpu``: batch i of x times w's matrix i (w's
    only one when it is 2-D)."""
    m = x_shape[-2] if len(x_shape) > 1 else 1
    count = len(x) // (m * x_shape[-1]) if x_shape[-1] and m else 0
    if x_shape[-1] == 0:
        count = math.prod(x_shape[:-2]) if len(x_shape) > 2 else 1
    pairs = [(i, i if len(w_shape) > 2 else 0) for i in range(count)]
    return _products(x, x_shape, w, w_shape, scales, scales_shape, biases, pairs, dtype,
                     group_size, bits, mode, transpose)


def gather_qmm(x, x_shape, w, w_shape, scales, scales_shape, biases, lhs_indices,
               rhs_indices, dtype, group_size, bits, mode, transpose):
    """``GatherQMM::eval_cpu``: x's matrix ``lhs_indices[i]`` times w's
    matrix ``rhs_indices[i]`` for every i, concatenated."""
    n_x = len(x) // (x_shape[-2] * x_shape[-1]) if x_shape[-2] * x_shape[-1] else 0
    n_w = len(w) // (w_shape[-2] * w_shape[-1]) if w_shape[-2] * w_shape[-1] else 0
    for i, j in zip(lhs_indices, rhs_indices):
        if i >= n_x or j >= n_w:  # MLX reads past the buffers
            raise IndexError(f"[gather_qmm] Index ({i}, {j}) out of range for {n_x} "
                             f"matrices of x and {n_w} of w.")
    return _products(x, x_shape, w, w_shape, scales, scales_shape, biases,
                     list(zip(lhs_indices, rhs_indices)), dtype, group_size, bits, mode,
                     transpose)


# --- x rounded to the grid: qqmm -----------------------------------------------------------


def to_fp4_e2m1(v):
    """MLX's ``to_fp4_e2m1``: the E2M1 code nearest ``v`` (ties as its
    thresholds put them), nan to 6, the sign kept (-0.0 too)."""
    if v != v:
        return 0x7
    sign = 0x8 if math.copysign(1.0, v) < 0 else 0
    a = abs(v)
    for code, (edge, inclusive) in zip(range(7, 0, -1), (
            (5.0, False), (3.5, True), (2.5, False), (1.75, True), (1.25, False),
            (0.75, True), (0.25, False))):
        if a > edge or (inclusive and a == edge):
            return code | sign
    return sign


def to_fp8_e8m0(v):
    """MLX's ``to_fp8_e8m0`` as MLX 0.32.4's CPU build computes it: the
    exponent of the smallest power of two at or above ``v`` (log2 rounded
    up, so the group's largest value stays representable), biased by 127;
    255 for inf and nan."""
    if not math.isfinite(v):
        return 0xFF
    if v < 0:
        return 0
    n = -127 if v == 0 else math.ceil(math.log2(v))
    return min(max(n, -127), 127) + 127


def fp_quantize_dequantize(data, dtype, group_size, bits):
    """MLX's ``fp_quantize_dequantize``: each group of ``data`` rounded to
    its fp4 or fp8 grid in float32, as ``qqmm`` sees its ``x``."""
    f32 = rounding(_dt.float32)
    cast = (lambda v: v) if dtype is _dt.float32 else dtype.cast
    out = []
    for start in range(0, len(data), group_size):
        group = data[start:start + group_size]
        scale = f32(max(abs(v) for v in group) / (6.0 if bits == 4 else 448.0))
        if group_size == 16:
            scale = _dt.fp8_e4m3_to_float(_dt.float_to_fp8_e4m3(scale))
        else:
            scale = dequantize_scale(to_fp8_e8m0(scale))
        for v in group:
            el = 0.0 if scale == 0 else f32(v / scale)
            if bits == 8:
                value = _dt.fp8_e4m3_to_float(_dt.float_to_fp8_e4m3(el))
            else:
                value = FP4_E2M1[to_fp4_e2m1(el)]
            out.append(cast(f32(scale * value)))
    return out


def qqmm(x, x_shape, w, w_shape, w_dtype, scales, scales_shape, dtype, group_size, bits,
         mode):
    """``QQMatmul::eval_cpu``: only a quantized w with one row of x (the
    global scales unused): ``fp_quantize_dequantize`` of x, then ``fp_qmm_t``."""
    if w_dtype is not _dt.uint32 or x_shape[-2] != 1:
        raise RuntimeError("[QQMatmul] NYI for the general case")
    x = fp_quantize_dequantize(x, dtype, group_size, bits)
    return _products(x, x_shape, w, w_shape, scales, scales_shape, None, [(0, 0)], dtype,
                     group_size, bits, mode, True)


def gather_qqmm(x, x_shape, w, w_shape, w_dtype, scales, scales_shape, lhs_indices,
                rhs_indices, dtype, group_size, bits, mode):
    """What QQMatmul's CPU kernel would compute for each pair of matrices
    (a quantized w, its scales, one row per matrix of x); MLX's CPU build
    evaluates none of ``GatherQQMM`` ("[GatherQQMM] NYI")."""
    if w_dtype is not _dt.uint32 or x_shape[-2] != 1 or scales is None:
        raise RuntimeError("[GatherQQMM] NYI")
    x = fp_quantize_dequantize(x, dtype, group_size, bits)
    return _products(x, x_shape, w, w_shape, scales, scales_shape, None,
                     list(zip(lhs_indices, rhs_indices)), dtype, group_size, bits, mode, True)
