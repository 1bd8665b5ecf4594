"""The convolution's kernel: for each output element, the taps that read an input element.

Read alongside: mlx/backend/cpu/conv.cpp (``slow_conv_1D``, ``slow_conv_2D``,
``slow_conv_3D``: the loops over output positions and kernel taps).

Layouts are channels-last, as in MLX: the input is ``(N, *spatial, C_in)``,
the weight ``(C_out, *kernel, C_in / groups)`` and the output
``(N, *out_spatial, C_out)``. Along one spatial axis, output position ``o``
and kernel tap ``k`` read position ``p = o * stride + k * kernel_dilation -
padding_lo`` of the input with ``input_dilation - 1`` zeros between its
elements: an input element when ``p`` is a multiple of ``input_dilation``
inside the dilated input, a zero otherwise (padding or a hole). ``flip`` runs
the kernel taps backwards (a convolution rather than a cross-correlation).
Output channel ``o`` of group ``g`` (``groups`` blocks of ``C_out / groups``
channels) reads only input channels ``g * C_in / groups`` to the next block.
Read next: mlxref/core/primitives/conv.py (the Convolution primitive and its rules).
"""

import math
import operator


def taps(in_size, k_size, out_size, stride, padding_lo, kernel_dilation, input_dilation,
         flip):
    """For each output position along one spatial axis: the (kernel tap,
    input position) pairs that read an input element (not a zero)."""
    out = []
    for o in range(out_size):
        pairs = []
        for k in range(k_size):
            p = o * stride + k * kernel_dilation - padding_lo
            if p >= 0 and p % input_dilation == 0 and p // input_dilation < in_size:
                pairs.append((k_size - 1 - k if flip else k, p // input_dilation))
        out.append(pairs)
    return out


def conv(x_data, x_shape, w_data, w_shape, out_shape, stride, padding_lo, kernel_dilation,
         input_dilation, groups, flip):
    """The convolution of the row-major input ``x_data`` by the weights
    ``w_data`` into ``out_shape``: each output element the sum, over the
    taps that read input elements, of the input window times the weights."""
    n_batch, c_in = x_shape[0], x_shape[-1]
    in_sp, k_sp = x_shape[1:-1], w_shape[1:-1]
    out_sp, c_out = out_shape[1:-1], out_shape[-1]
    cg, og = c_in // groups, c_out // groups  # channels per group: in, out
    # (flat kernel offset, flat input offset) pairs for each output position,
    # combined axis by axis from the per-axis taps.
    per_axis = [taps(in_sp[a], k_sp[a], out_sp[a], stride[a], padding_lo[a],
                     kernel_dilation[a], input_dilation[a], flip) for a in range(len(in_sp))]
    positions = [[(0, 0)]]
    for a, axis_taps in enumerate(per_axis):
        positions = [[(kf * k_sp[a] + k, xf * in_sp[a] + i)
                      for kf, xf in pos for k, i in pairs]
                     for pos in positions for pairs in axis_taps]
    in_size, k_size = math.prod(in_sp), math.prod(k_sp)
    weights = {}  # the weight row of each output channel, per set of kernel taps
    out = []
    for n in range(n_batch):
        base = n * in_size
        for pos in positions:
            key = tuple(kf for kf, _ in pos)
            rows = weights.get(key)
            if rows is None:
                rows = weights[key] = [
                    [v for kf in key
                     for v in w_data[(o * k_size + kf) * cg:(o * k_size + kf + 1) * cg]]
                    for o in range(c_out)]
            starts = [(base + xf) * c_in for _, xf in pos]
            for g in range(groups):
                window = [v for s in starts for v in x_data[s + g * cg:s + (g + 1) * cg]]
                for o in range(g * og, (g + 1) * og):
                    out.append(sum(map(operator.mul, window, rows[o]), 0))
    return out
