"""Symbolic cases for the quantization family (ToFP8, FromFP8, the quantized
products QuantizedMatmul and GatherQMM, and QQMatmul and GatherQQMM) and for
``Load``, the node a .npy file loaded by path is until it is evaluated.

The quantized weights are constant codes (4-bit levels 0 to 15); x and the
affine scales and biases are the symbols, as float32 (the kernels' type; a
symbol is not rounded). One group of 32 (16 for nvfp4) is the smallest
product there is.
"""

import os
import tempfile

from .. import core as mx
from ..core.backend.cpu.quantized import FP4_E2M1
from ..core.primitives import creation as C
from ..core.primitives import quantized as Q

from . import Case

F32 = mx.float32
# one row of 32 4-bit codes (levels 0, 1 and 2: few constants for SymPy), and
# two matrices of them
_LEVELS = mx.array([[0x21021021, 0x02102102, 0x10210210, 0x21021021]], mx.uint32)
_LEVELS2 = mx.stack([_LEVELS, _LEVELS[:, ::-1]])
_ROW = mx.array([FP4_E2M1])  # on the fp4 grid, with a largest magnitude of 6: exact


def _padded(x):
    """x as float32, its last axis filled up to 32 with zeros (constants)."""
    pad = mx.zeros(x.shape[:-1] + (32 - x.shape[-1],), F32)
    return mx.concatenate([x.astype(F32), pad], -1)


_QQ = ("a constant node (x is rounded to the fp4 grid: piecewise constant; MLX's rules "
       "do not run on the CPU), so its own rules never run")
_NOTE = "MLX defines no vjp or jvp for it; symbols go through as to_fp8(x), compared at a point"
def _loaded():
    """Three constants, as a lazy ``Load`` node of a .npy file. The file's path
    is the same in every process (the manual's drawing of this case shows it,
    and drawings are byte-identical across builds); each process writes it
    whole and renames it into place, so processes reading it never see half
    a file, and the few bytes stay in the temporary folder."""
    path = os.path.join(tempfile.gettempdir(), "mlxref-symbolic-constants.npy")
    if not os.path.exists(path):
        mine = f"{path}.{os.getpid()}.npy"
        mx.save(mine, mx.array([0.5, -2.0, 3.0]))
        os.replace(mine, path)
    return mx.load(path)


CASES = [
    Case(C.Load, lambda x: x * _loaded(), ((3,),),
         note="no inputs: never on a tape, so its own rules never run"),
    Case(Q.ToFP8, lambda x: mx.to_fp8(x.astype(mx.float32)).astype(mx.float32), ((3,),),
         raises=True, note=_NOTE),
    Case(Q.FromFP8, lambda x: mx.from_fp8(x.astype(mx.uint8), mx.float32), ((3,),),
         raises=True, note=_NOTE.replace("to_fp8", "from_fp8")),
    Case(Q.QuantizedMatmul, lambda x, s, b: mx.quantized_matmul(
        _padded(x), _LEVELS, s.astype(F32), b.astype(F32), group_size=32),
        ((1, 2), (1, 1), (1, 1)), note="affine, transposed: x (2 symbols, the rest "
        "constant), scales and biases"),
    Case(Q.QuantizedMatmul, lambda x, s, b: mx.quantized_matmul(
        x.astype(F32), _LEVELS[:, :1], s.astype(F32), b.astype(F32), False, group_size=32,
        bits=1), ((1, 1), (1, 1), (1, 1)), note="affine, 1 bit, not transposed"),
    Case(Q.QuantizedMatmul, lambda x: mx.quantized_matmul(
        _padded(x), _LEVELS, mx.array([[126]], mx.uint8), mode="mxfp4"),
        ((1, 2),), note="mxfp4: x only (the scales are uint8 exponents)"),
    Case(Q.GatherQMM, lambda x, s, b: mx.gather_qmm(
        _padded(x), _LEVELS2, s.astype(F32), b.astype(F32), mx.array([1, 1]),
        mx.array([0, 1]), group_size=32), ((2, 1, 1), (2, 1, 1), (2, 1, 1)),
        note="affine: x, scales and biases through the scatter-add vjps"),
    Case(Q.GatherQMM, lambda x: mx.gather_qmm(
        _padded(x), _LEVELS2, mx.array([[[127]], [[125]]], mx.uint8), None, None,
        mx.array([0, 1]), mode="mxfp4", sorted_indices=True), ((1, 1, 1),),
        note="mxfp4, sorted rhs indices"),
    Case(Q.QQMatmul, lambda x: x * mx.qqmm(_ROW, _LEVELS[:, :2], mx.array([[56]], mx.uint8)),
         ((1,),), note=_QQ),
    Case(Q.GatherQQMM, lambda x: x * mx.gather_qqmm(
        _ROW[None], _LEVELS2[:, :, :2], mx.array([[[56]], [[48]]], mx.uint8), None,
        mx.array([1, 0])), ((2, 1, 1),), note=_QQ),
]
