"""Symbolic cases for the convolution primitive (Convolution).

Both the input and the weight are symbols, so the vjp and jvp are checked
for each of them; the shapes are tiny (a few taps, one or two channels) and
the options are spread over the cases: stride, asymmetric padding, kernel
and input dilation, groups, flip, and the transposed convolution MLX builds
from them. The vmap check batches both inputs, which runs MLX's rule that
turns a batched weight into groups.
"""

from .. import core as mx
from ..core.primitives import conv as C
from . import Case

CASES = [
    Case(C.Convolution, lambda x, w: mx.conv1d(x, w), ((1, 3, 1), (1, 2, 1)),
         note="conv1d, one channel"),
    Case(C.Convolution, lambda x, w: mx.conv1d(x, w, stride=2, padding=1, dilation=2),
         ((1, 4, 1), (1, 2, 1)), note="conv1d with stride, padding and dilation"),
    Case(C.Convolution, lambda x, w: mx.conv1d(x, w, groups=2), ((1, 2, 2), (2, 2, 1)),
         note="conv1d with two groups"),
    Case(C.Convolution,
         lambda x, w: mx.conv_general(x, w, stride=2, padding=([0], [2]), kernel_dilation=1,
                                      input_dilation=2, flip=True),
         ((1, 2, 1), (1, 2, 1)), note="conv_general: input dilation, uneven padding, flip"),
    Case(C.Convolution, lambda x, w: mx.conv_transpose1d(x, w, stride=2, padding=1),
         ((1, 2, 1), (1, 3, 1)), note="conv_transpose1d"),
    Case(C.Convolution, lambda x, w: mx.conv2d(x, w, padding=(1, 0)),
         ((1, 2, 2, 1), (1, 2, 1, 1)), note="conv2d"),
]
