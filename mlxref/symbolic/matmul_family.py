"""Symbolic cases for the gathered, masked and segmented matrix products
(GatherMM, BlockMaskedMM, SegmentedMM) and the Hadamard transform.

Tiny shapes: a couple of matrices of a few elements. The CPU kernels of
GatherMM and BlockMaskedMM take float32 only, so the symbols go in as
float32 (a symbol is not rounded). The index arrays, segments and bool
masks are constants: they have no derivative.
"""

from .. import core as mx
from ..core.primitives import hadamard as H
from ..core.primitives import masked_mm as M
from . import Case

F32 = mx.float32


def _gather(a, b):
    return mx.gather_mm(a.astype(F32), b.astype(F32), mx.array([1, 0, 1]), mx.array([0, 1, 1]))


def _gather_sorted(a, b):
    return mx.gather_mm(a.astype(F32), b.astype(F32), None, mx.array([0, 1, 1]),
                        sorted_indices=True)


def _masked(a, b, out, lhs, rhs):
    return mx.block_masked_mm(a.astype(F32), b.astype(F32), 32, out.astype(F32),
                              lhs.astype(F32), rhs.astype(F32))


def _masked_bool(a, b):
    return mx.block_masked_mm(a.astype(F32), b.astype(F32), 32, mx.array([[True]]),
                              mx.array([[True]]), mx.array([[True]]))


CASES = [
    Case(M.GatherMM, _gather, ((2, 1, 2), (2, 2, 1)), note="unsorted: scatter-add vjps"),
    Case(M.GatherMM, _gather_sorted, ((3, 1, 2), (2, 2, 1)),
         note="sorted rhs indices: the segmented_mm vjp for b"),
    Case(M.BlockMaskedMM, _masked, ((1, 1), (1, 1), (1, 1), (1, 1), (1, 1)),
         note="float masks: all five inputs differentiated (one product: float32 rounds "
              "each step, and the forward check allows a few roundings)"),
    Case(M.BlockMaskedMM, _masked_bool, ((1, 2), (2, 2)), note="bool masks (constants)"),
    Case(M.SegmentedMM, lambda a, b: mx.segmented_mm(a, b, mx.array([[0, 1], [1, 3], [2, 2]])),
         ((2, 3), (3, 1)), note="overlapping and empty segments"),
    Case(H.Hadamard, lambda x: mx.hadamard_transform(x.astype(F32), 1.0), ((2, 4),),
         note="2**k, unscaled (the 12, 20 and 28 point matrices take SymPy minutes: "
              "tests/core/primitives/test_hadamard.py checks them, and 20's transposed vjp)"),
    Case(H.Hadamard, lambda x: mx.hadamard_transform(x.astype(F32), 0.5), ((2,),),
         note="the scale, on the last butterfly"),
]
