"""MLX's quantization family: ``ConvertFP8`` (``ToFP8``, ``FromFP8``: fp8 e4m3
codes to and from floats) and the products with quantized weights,
``QuantizedMatmul``, ``GatherQMM``, ``QQMatmul`` and ``GatherQQMM``.

Read alongside: mlx/primitives.h, mlx/fast_primitives.h and
mlx/primitives.cpp (the classes and their rules) and mlx/ops.cpp
(``from_fp8``, ``to_fp8``, ``quantized_matmul``, ``gather_qmm``, ``qqmm``,
``gather_qqmm``: the checks before the nodes are built).
Read next: mlxref/core/backend/cpu/quantized.py (the kernels: unpacking, the
modes' scales and values, the products in the input type's roundings).
"""

from .. import dtypes as _dt
from .. import ops
from ..backend.cpu import quantized as kernel
from .base import Primitive, make_array, vmap_by_examples, vmap_in_place
from .masked_mm import gather_mm_grad, scatter_back


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
        return [kernel.convert_fp8(inputs[0].data(), self.to_fp8)]

    vmap = vmap_in_place


class ToFP8(ConvertFP8):
    """float16, bfloat16 or float32 values to uint8 fp8 codes."""

    to_fp8 = True

    def __init__(self):
        super().__init__(_dt.uint8)


class FromFP8(ConvertFP8):
    """uint8 fp8 codes to ``dtype`` (float16, bfloat16 or float32)."""

    to_fp8 = False


class QuantizedProduct(Primitive):
    """What QuantizedMatmul, GatherQMM and the QQ products share: the
    quantization's parameters (``group_size``, ``bits``, ``mode``) and
    whether w is transposed."""

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


class QuantizedMatmul(QuantizedProduct):
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
        biases = inputs[3].data() if self.mode == "affine" else None
        return [kernel.quantized_matmul(x.data(), x.shape, w.data(), w.shape, scales.data(),
                                        scales.shape, biases, x.dtype, self.group_size,
                                        self.bits, self.mode, self.transpose)]

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        x, w, scales = primals[:3]
        biases = primals[3] if self.mode == "affine" else None
        dsb = None
        out = []
        for arg in argnums:
            if arg == 0:
                out.append(ops.quantized_matmul(cot, w, scales, biases, not self.transpose,
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

    vmap = vmap_by_examples  # MLX has none ("NYI")


class GatherQMM(QuantizedProduct):
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
        biases = inputs[3].data() if self.mode == "affine" else None
        lhs, rhs = inputs[-2].data(), inputs[-1].data()
        return [kernel.gather_qmm(x.data(), x.shape, w.data(), w.shape, scales.data(),
                                  scales.shape, biases, lhs, rhs, x.dtype, self.group_size,
                                  self.bits, self.mode, self.transpose)]

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

    vmap = vmap_by_examples  # MLX has none ("NYI")


class QQMatmul(QuantizedProduct):
    """``qqmm``: x rounded to the mode's grid, times the quantized w
    transposed (inputs ``x, w[, scales][, global_scale_x, global_scale_w]``),
    MLX's ``QQMatmul`` (what its CPU build evaluates: ``quantized.qqmm``). Its
    vjp is MLX's (which asks for ``qqmm`` of unquantized operands: on the
    CPU, an error); no jvp ("QQMM::jvp NYI"), no vmap.
    """

    def __init__(self, group_size, bits, mode):
        super().__init__(group_size, bits, mode, True)

    def params(self):
        return {"group_size": self.group_size, "bits": self.bits, "mode": self.mode}

    def output_shapes(self, inputs):
        return [inputs[0].shape[:-1] + (inputs[1].shape[-2],)]

    def eval(self, inputs):
        x, w = inputs[0], inputs[1]
        scales = inputs[2] if len(inputs) > 2 else None  # given whenever w is quantized
        return [kernel.qqmm(x.data(), x.shape, w.data(), w.shape, w.dtype,
                            None if scales is None else scales.data(),
                            None if scales is None else scales.shape, x.dtype,
                            self.group_size, self.bits, self.mode)]

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
    scales][, global scales]``), without transform rules, as MLX's; each
    pair's ``qqmm`` where QQMatmul's CPU kernel would evaluate it
    (``quantized.gather_qqmm``: MLX's CPU build evaluates none of it)."""

    def output_shapes(self, inputs):
        x, w, lhs = inputs[0], inputs[1], inputs[2]
        return [lhs.shape + (x.shape[-2], w.shape[-2])]

    def eval(self, inputs):
        x, w, lhs, rhs = inputs[:4]
        scales = inputs[4] if len(inputs) > 4 else None
        return [kernel.gather_qqmm(x.data(), x.shape, w.data(), w.shape, w.dtype,
                                   None if scales is None else scales.data(),
                                   None if scales is None else scales.shape, lhs.data(),
                                   rhs.data(), x.dtype, self.group_size, self.bits,
                                   self.mode)]

    def vjp(self, primals, cotangents, argnums, outputs):
        return Primitive.vjp(self, primals, cotangents, argnums, outputs)

    def jvp(self, primals, tangents, argnums):
        return Primitive.jvp(self, primals, tangents, argnums)


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
