"""Primitives of MLX's quantization family: ``ConvertFP8`` (fp8 e4m3 bytes
to and from floats).

Read alongside: mlx/fast_primitives.h (``ConvertFP8``), mlx/ops.cpp
(``from_fp8``, ``to_fp8``) and mlx/backend/cpu/unary_ops.h (``ToFP8``,
``FromFP8``: the bit manipulations mlxref/core/dtypes.py mirrors).
"""

import array as _pyarray
import math
from types import SimpleNamespace

from .. import dtypes as _dt
from .. import ops
from ..scalar import apply, sympy
from ..backend.cpu.matmul import dot as _dot
from ..backend.cpu.matmul import dot_float32
from ..backend.cpu.rounding import rounding
from .base import Primitive, make_array, vmap_by_examples
from .masked_mm import gather_mm_grad, scatter_back

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


# ---------------------------------------------------------------------------
# Matrix products with quantized weights (mlx/backend/cpu/quantized.cpp)
# ---------------------------------------------------------------------------

# E2M1 (fp4) values by their 4-bit code: MLX's ``FP4_LUT``.
FP4_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
            -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def unpack_levels(words, bits):
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


def _e8m0_scale(code):
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


class _QuantizedProduct(Primitive):
    """What QuantizedMatmul and GatherQMM share: the parameters, and the CPU
    kernels of mlx/backend/cpu/quantized.cpp on one pair of matrices.

    The kernels compute in the input type ``T`` (float32, float16 or
    bfloat16), rounding every step to it. "affine": each weight is
    ``scale * level + bias`` (two roundings), and each output a dot product
    summed left to right from 0 (``_qmm`` and ``_qmm_t`` take the same order
    over the inner dimension). The fp modes: the code's value (E2M1 or e4m3)
    times the group's scale (a power of two, or an e4m3 value for "nvfp4"),
    taken as ``scale * (group's dot product)`` per group when ``transpose``
    (``fp_qmm_t``) and ``(x * scale) * value`` per term otherwise (``fp_qmm``).
    """

    abstract = True

    def __init__(self, group_size, bits, mode, transpose):
        self.group_size = group_size
        self.bits = bits
        self.mode = mode
        self.transpose = bool(transpose)

    def params(self):
        return {"group_size": self.group_size, "bits": self.bits, "mode": self.mode,
                "transpose": self.transpose}

    def _outer(self, w):
        """N: the output's last dimension (MLX's ``w_outer_dims``)."""
        return w.shape[-2] if self.transpose else w.shape[-1] * 32 // self.bits

    def _check_kernel(self, dtype):
        """The CPU kernels' own limits, raised when MLX evaluates."""
        if dtype not in (_dt.float32, _dt.float16, _dt.bfloat16):
            raise RuntimeError("[quantized_matmul] only floating types are supported")
        if self.mode == "affine":
            if self.bits not in (1, 2, 3, 4, 5, 6, 8):
                raise RuntimeError("Quantization bits must be 1, 2, 3, 4, 5, 6 or 8.")
            if self.group_size not in (32, 64, 128):
                raise RuntimeError("Quantization group size must be 32, 64 or 128.")

    def _matrices(self, x, w, scales, biases):
        """Row-lists per matrix of x (M x K), the decoded weights and the
        scales (and biases) of each matrix of w."""
        k = x.shape[-1]
        m = x.shape[-2] if x.ndim > 1 else 1
        x_data = x.data()
        xs = [[x_data[r:r + k] for r in range(s, s + m * k, k)]
              for s in range(0, len(x_data), m * k)] if k else []
        rows, cols = w.shape[-2], w.shape[-1]
        w_data = w.data()
        n_w = w.size // (rows * cols) if rows * cols else 0
        levels = [[unpack_levels(w_data[(i * rows + r) * cols:(i * rows + r + 1) * cols], self.bits)
                   for r in range(rows)] for i in range(n_w)]
        groups = scales.shape[-1]
        per = [[g[r * groups:(r + 1) * groups] for r in range(rows)]
               for g in (scales.data()[i * rows * groups:(i + 1) * rows * groups]
                         for i in range(n_w))]
        bias = None
        if biases is not None:
            b = biases.data()
            bias = [[b[(i * rows + r) * groups:(i * rows + r + 1) * groups] for r in range(rows)]
                    for i in range(n_w)]
        return xs, levels, per, bias, m, k

    def _product(self, x_rows, levels, scales, biases, k, n, dtype):
        """One matrix product: the rows of x times one quantized matrix."""
        rnd = _exact_or(rounding(dtype))
        gs = self.group_size
        if self.mode == "affine":
            # the weights as T holds them: scale * level + bias, two roundings
            wd = [[rnd(rnd(s[c // gs] * q) + b[c // gs]) for c, q in enumerate(lv)]
                  for lv, s, b in zip(levels, scales, biases)]
            cols = wd if self.transpose else [list(c) for c in zip(*wd)]
            if dtype is _dt.float32:  # the same roundings, in C where it can
                return [dot_float32(row, col) for row in x_rows for col in cols]
            return [_dot(row, col, rnd) for row in x_rows for col in cols]
        cast = (lambda v: v) if dtype is _dt.float32 else dtype.cast
        decode = ((lambda c: FP4_E2M1[c]) if self.bits == 4
                  else _dt.fp8_e4m3_to_float)
        if gs == 16:
            scale_of = _dt.fp8_e4m3_to_float
        else:
            scale_of = _e8m0_scale
        values = [[cast(decode(q)) for q in lv] for lv in levels]
        sc = [[cast(scale_of(s)) for s in row] for row in scales]
        out = []
        if self.transpose:  # fp_qmm_t: a dot product per group, scaled, summed
            for row in x_rows:
                for v, s in zip(values, sc):
                    acc = 0
                    for g in range(k // gs):
                        part = _dot(row[g * gs:(g + 1) * gs], v[g * gs:(g + 1) * gs], rnd)
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

    def _evaluate(self, x, w, scales, biases, pairs, n, dtype):
        """The products of x's matrix i and w's matrix j for each (i, j) in
        ``pairs``, concatenated."""
        self._check_kernel(dtype)
        xs, levels, per, bias, m, k = self._matrices(x, w, scales, biases)
        out = []
        for i, j in pairs:
            if k == 0 or not xs:
                out.extend([0.0] * (m * n))
                continue
            out.extend(self._product(xs[i], levels[j], per[j], bias[j] if bias else None,
                                     k, n, dtype))
        return out


class QuantizedMatmul(_QuantizedProduct):
    """``x @ dequantize(w).T`` (``transpose``) or ``x @ dequantize(w)``: inputs
    ``x, w, scales[, biases]`` (biases for "affine" only), MLX's
    ``QuantizedMatmul``. Output batch i uses x's matrix i and w's matrix i
    (w's only one when it is 2-D, as MLX's kernel reads it).

    MLX's rules: the vjp for ``x`` is the product with the transposed
    weights; for the affine scales and biases, sums per group of
    ``cotᵀ @ x`` (times the levels, for the scales); none for ``w`` (its
    error) nor for an fp mode's scales. MLX's jvp is only for ``x`` and it
    has no vmap ("NYI"): mlxref adds the jvp for the affine scales and
    biases and a per-example vmap, which the symbolic checks verify.
    """

    def output_shapes(self, inputs):
        x, w = inputs[0], inputs[1]
        return [x.shape[:-1] + (self._outer(w),)]

    def eval(self, inputs):
        x, w, scales = inputs[:3]
        biases = inputs[3] if self.mode == "affine" else None
        m = x.shape[-2] if x.ndim > 1 else 1
        count = x.size // (m * x.shape[-1]) if x.shape[-1] and m else 0
        if x.shape[-1] == 0:
            count = math.prod(x.shape[:-2]) if x.ndim > 2 else 1
        pairs = [(i, i if w.ndim > 2 else 0) for i in range(count)]
        return [self._evaluate(x, w, scales, biases, pairs, self._outer(w), x.dtype)]

    def _biases(self, primals):
        return primals[3] if self.mode == "affine" else None

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        x, w, scales = primals[:3]
        dsb = None
        out = []
        for arg in argnums:
            if arg == 0:
                out.append(ops.quantized_matmul(
                    cot, w, scales, self._biases(primals), not self.transpose,
                    self.group_size, self.bits, self.mode))
            elif arg == 1:
                raise RuntimeError(
                    "[QuantizedMatmul::vjp] no gradient wrt the quantized weights.")
            else:
                if self.mode != "affine":
                    raise ValueError("[QuantizedMatmul::vjp] no gradient wrt scales in "
                                     f"{self.mode} quantization.")
                if dsb is None:
                    fc = ops.flatten(cot, 0, -w.ndim)
                    fx = ops.flatten(x, 0, -w.ndim)
                    dw = (ops.matmul(ops.swapaxes(fc, -1, -2), fx) if self.transpose
                          else ops.matmul(ops.swapaxes(fx, -1, -2), fc))
                    dsb = ops.unflatten(dw, -1, (-1, self.group_size))
                out.append(_scale_or_bias_grad(self, dsb, w, scales, primals[3], arg))
        return out

    def jvp(self, primals, tangents, argnums):
        """MLX's jvp for x; for the affine scales and biases (which MLX
        refuses) the product with the tangents in their place."""
        return _affine_jvp(self, primals, tangents, argnums, "[QuantizedMatmul::jvp] No JVP wrt "
                           "the quantized matrix yet.")

    def vmap(self, inputs, axes):
        """MLX has none ("NYI"): ``vmap_by_examples``."""
        return vmap_by_examples(self, inputs, axes)


def _affine_jvp(prim, primals, tangents, argnums, message):
    """The jvp of a quantized product: linear in x, and in the affine scales
    and biases together (``x @ (s q + b)``), so the node with x's tangent,
    plus the node with the scales' and biases' tangents (zeros for the one
    without). The weights (and an fp mode's scales, and indices) have none."""
    given = dict(zip(argnums, tangents))
    if any(i not in (0, 2, 3) for i in given) or (
            prim.mode != "affine" and any(i != 0 for i in given)):
        raise RuntimeError(message)
    out = None
    if 0 in given:
        out = make_array(prim, [given[0]] + list(primals[1:]))
    if 2 in given or 3 in given:
        s, b = (given.get(i, ops.zeros_like(primals[i])) for i in (2, 3))
        term = make_array(prim, [primals[0], primals[1], s, b] + list(primals[4:]))
        out = term if out is None else ops.add(out, term)
    return [out]


def _scale_or_bias_grad(prim, dsb, w, scales, biases, arg):
    """MLX's affine gradients from ``dsb`` (the weights' gradient, grouped):
    the biases' is its sum per group, the scales' the sum of it times the
    levels (``dequantize`` with unit scales and zero biases)."""
    if arg == 3:
        return ops.sum(dsb, -1)
    levels = ops.dequantize(w, ops.ones_like(scales), ops.zeros_like(biases),
                            prim.group_size, prim.bits, prim.mode)
    return ops.sum(ops.multiply(dsb, ops.unflatten(levels, -1, (-1, prim.group_size))), -1)


class GatherQMM(_QuantizedProduct):
    """``quantized_matmul`` of x's matrix ``lhs_indices[i]`` and w's matrix
    ``rhs_indices[i]`` for every i: inputs ``x, w, scales[, biases],
    lhs_indices, rhs_indices`` (uint32, one shape), MLX's ``GatherQMM``.

    MLX's rules: the vjp for ``x`` gathers the transposed product and adds it
    back into x's matrices; the affine scales' and biases' come from
    ``gather_mm_grad``; none for ``w``, the fp scales, the indices. MLX has
    no jvp and no vmap ("NYI"): mlxref's are QuantizedMatmul's.
    """

    def __init__(self, group_size, bits, mode, transpose, left_sorted=False,
                 right_sorted=False):
        super().__init__(group_size, bits, mode, transpose)
        self.left_sorted = bool(left_sorted)
        self.right_sorted = bool(right_sorted)

    def output_shapes(self, inputs):
        x, w, lhs = inputs[0], inputs[1], inputs[-2]
        return [lhs.shape + (x.shape[-2], self._outer(w))]

    def eval(self, inputs):
        x, w, scales = inputs[:3]
        biases = inputs[3] if self.mode == "affine" else None
        lhs, rhs = inputs[-2].data(), inputs[-1].data()
        n_x = x.size // (x.shape[-2] * x.shape[-1]) if x.shape[-2] * x.shape[-1] else 0
        n_w = w.size // (w.shape[-2] * w.shape[-1]) if w.shape[-2] * w.shape[-1] else 0
        for i, j in zip(lhs, rhs):
            if i >= n_x or j >= n_w:  # MLX reads past the buffers
                raise IndexError(f"[gather_qmm] Index ({i}, {j}) out of range for {n_x} "
                                 f"matrices of x and {n_w} of w.")
        return [self._evaluate(x, w, scales, biases, list(zip(lhs, rhs)), self._outer(w),
                               x.dtype)]

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        x, w, scales = primals[:3]
        lhs, rhs = primals[-2], primals[-1]
        biases = primals[3] if self.mode == "affine" else None
        m, k = cot.shape[-2], x.shape[-1]
        is_sorted = self.left_sorted or self.right_sorted
        no_broadcast = rhs.size * m * k == x.size
        dsb = None
        out = []
        for arg in argnums:
            if arg == 0:
                g = ops.gather_qmm(cot, w, scales, biases, None, rhs, not self.transpose,
                                   self.group_size, self.bits, self.mode,
                                   sorted_indices=is_sorted)
                out.append(scatter_back(g, x, lhs, is_sorted and no_broadcast))
            elif arg > 3:
                raise RuntimeError(
                    "[GatherQMM::vjp] cannot compute the gradient wrt the indices.")
            elif arg == 1:
                raise RuntimeError("[GatherQMM::vjp] no gradient wrt the quantized weights.")
            else:
                if self.mode != "affine":
                    raise ValueError("[GatherQMM::vjp] no gradient wrt scales in "
                                     f"{self.mode} quantization.")
                if dsb is None:
                    from_grad = gather_mm_grad(x, cot, lhs, rhs, is_sorted, w.shape[:-2])
                    dsb = ops.unflatten(from_grad, -1, (-1, self.group_size))
                out.append(_scale_or_bias_grad(self, dsb, w, scales, primals[3], arg))
        return out

    def jvp(self, primals, tangents, argnums):
        """MLX has none ("NYI"): as QuantizedMatmul's (``_affine_jvp``)."""
        return _affine_jvp(self, primals, tangents, argnums, "GatherQMM::jvp NYI")

    def vmap(self, inputs, axes):
        """MLX has none ("NYI"): ``vmap_by_examples``."""
        return vmap_by_examples(self, inputs, axes)


def _to_fp4_e2m1(v):
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


def _to_e8m0(v):
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


def quantize_dequantize(data, dtype, group_size, bits):
    """MLX's ``fp_quantize_dequantize`` (mlx/backend/cpu/quantized.cpp): each
    group of ``data`` rounded to its fp4 or fp8 grid in float32, as
    ``qqmm`` sees its ``x``."""
    f32 = rounding(_dt.float32)
    cast = (lambda v: v) if dtype is _dt.float32 else dtype.cast
    out = []
    for start in range(0, len(data), group_size):
        group = data[start:start + group_size]
        scale = f32(max(abs(v) for v in group) / (6.0 if bits == 4 else 448.0))
        if group_size == 16:
            scale = _dt.fp8_e4m3_to_float(_dt.float_to_fp8_e4m3(scale))
        else:
            scale = _e8m0_scale(_to_e8m0(scale))
        for v in group:
            el = 0.0 if scale == 0 else f32(v / scale)
            if bits == 8:
                value = _dt.fp8_e4m3_to_float(_dt.float_to_fp8_e4m3(el))
            else:
                value = FP4_E2M1[_to_fp4_e2m1(el)]
            out.append(cast(f32(scale * value)))
    return out


class QQMatmul(_QuantizedProduct):
    """``qqmm``: x rounded to the mode's grid, times the quantized w
    transposed (inputs ``x, w[, scales][, global_scale_x, global_scale_w]``),
    MLX's ``QQMatmul``. MLX's CPU build evaluates only a quantized w with one
    row of x (the global scales unused): ``quantize_dequantize`` of x, then
    ``fp_qmm_t``. Its vjp is MLX's (which asks for ``qqmm`` of unquantized
    operands: on the CPU, an error); no jvp ("QQMM::jvp NYI"), no vmap.
    """

    def __init__(self, group_size, bits, mode):
        super().__init__(group_size, bits, mode, True)

    def params(self):
        return {"group_size": self.group_size, "bits": self.bits, "mode": self.mode}

    def output_shapes(self, inputs):
        return [inputs[0].shape[:-1] + (inputs[1].shape[-2],)]

    def eval(self, inputs):
        x, w = inputs[0], inputs[1]
        if w.dtype is not _dt.uint32 or x.shape[-2] != 1:
            raise RuntimeError("[QQMatmul] NYI for the general case")
        data = quantize_dequantize(x.data(), x.dtype, self.group_size, self.bits)
        xhat = SimpleNamespace(shape=x.shape, ndim=x.ndim, data=lambda: data)
        return [self._evaluate(xhat, w, inputs[2], None, [(0, 0)], w.shape[-2], x.dtype)]

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        amax = (ops.astype(ops.max(ops.abs(cot)), _dt.float32) if len(primals) == 4
                else None)
        out = []
        for arg in argnums:
            if arg == 0:
                out.append(ops.qqmm(cot, ops.swapaxes(primals[1], -1, -2), None,
                                    self.group_size, self.bits, self.mode, amax,
                                    primals[3] if len(primals) == 4 else None))
            elif arg == 1:
                out.append(ops.qqmm(ops.swapaxes(cot, -1, -2), ops.swapaxes(primals[0], -1, -2),
                                    None, self.group_size, self.bits, self.mode, amax,
                                    primals[2] if len(primals) == 4 else None))
            else:
                out.append(ops.zeros_like(primals[arg]))
        return out

    def jvp(self, primals, tangents, argnums):
        raise RuntimeError("QQMM::jvp NYI")


class GatherQQMM(QQMatmul):
    """``gather_qqmm``'s node (inputs ``x, w, lhs_indices, rhs_indices[,
    scales][, global scales]``), without transform rules, as MLX's.

    MLX's CPU build evaluates none of it ("[GatherQQMM] NYI"). mlxref
    evaluates what QQMatmul's CPU kernel would (a quantized w and one row
    per matrix of x: each pair's ``qqmm``) and raises MLX's error otherwise.
    """

    def output_shapes(self, inputs):
        x, w, lhs = inputs[0], inputs[1], inputs[2]
        return [lhs.shape + (x.shape[-2], w.shape[-2])]

    def eval(self, inputs):
        x, w, lhs, rhs = inputs[:4]
        if w.dtype is not _dt.uint32 or x.shape[-2] != 1 or len(inputs) < 5:
            raise RuntimeError("[GatherQQMM] NYI")
        data = quantize_dequantize(x.data(), x.dtype, self.group_size, self.bits)
        xhat = SimpleNamespace(shape=x.shape, ndim=x.ndim, data=lambda: data)
        return [self._evaluate(xhat, w, inputs[4], None, list(zip(lhs.data(), rhs.data())),
                               w.shape[-2], x.dtype)]

    def vjp(self, primals, cotangents, argnums, outputs):
        return Primitive.vjp(self, primals, cotangents, argnums, outputs)

    def jvp(self, primals, tangents, argnums):
        return Primitive.jvp(self, primals, tangents, argnums)
