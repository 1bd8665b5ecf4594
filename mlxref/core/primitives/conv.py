"""The convolution primitive: Convolution.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Convolution``:
``conv_out_shape``, its vjp and vmap rules), mlx/ops.cpp (``conv_general``,
which builds it) and mlx/backend/cpu/conv.cpp for the forward rule.

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

The derivative rules are written with mlxref ops (mostly convolutions with
other parameters), so a gradient is a lazy graph that can be differentiated
again.
"""

import math
import operator

from .. import ops
from ..printing import format_shape
from .base import Primitive, multilinear_jvp

_fmt = format_shape  # MLX prints a std::vector<int> as it prints a shape: (1,2)


def _dilate_size(size, dilation):
    return 1 + dilation * (size - 1)


def conv_out_shape(in_shape, wt_shape, strides, pads_lo, pads_hi, kernel_dilation,
                   input_dilation):
    """The output shape, or MLX's error for the parameters
    (``Convolution::conv_out_shape``)."""
    spatial = len(in_shape) - 2
    if len(strides) != spatial:
        raise ValueError(f"[conv] Invalid strides {_fmt(strides)} for {spatial}D convolution.")
    if len(pads_lo) != spatial or len(pads_hi) != spatial:
        raise ValueError(f"[conv] Invalid padding {_fmt(pads_lo)} | {_fmt(pads_hi)} for "
                         f"{spatial}D convolution.")
    if len(kernel_dilation) != spatial:
        raise ValueError(f"[conv] Invalid kernel dilation {_fmt(kernel_dilation)} for "
                         f"{spatial}D convolution.")
    if len(input_dilation) != spatial:
        raise ValueError(f"[conv] Invalid input dilation {_fmt(input_dilation)} for "
                         f"{spatial}D convolution.")
    out = [in_shape[0]]
    for i in range(spatial):
        if kernel_dilation[i] <= 0:
            raise ValueError("[conv] Kernel dilation sizes must be positive. Got kernel "
                             f"dilation {_fmt(kernel_dilation)}.")
        if input_dilation[i] <= 0:
            raise ValueError("[conv] Input dilation sizes must be positive. Got input "
                             f"dilation {_fmt(input_dilation)}.")
        if pads_lo[i] < 0 or pads_hi[i] < 0:
            raise ValueError("[conv] Padding sizes must be non-negative. Got padding "
                             f"{_fmt(pads_lo)} | {_fmt(pads_hi)}.")
        if strides[i] <= 0:
            raise ValueError(f"[conv] Stride sizes must be positive. Got strides {_fmt(strides)}.")
        kd = _dilate_size(wt_shape[i + 1], kernel_dilation[i])
        idl = _dilate_size(in_shape[i + 1], input_dilation[i])
        size = (idl + pads_lo[i] + pads_hi[i] - kd) // strides[i] + 1
        if size <= 0:
            raise ValueError(
                "[conv] Spatial dimensions of input after padding cannot be smaller than "
                f"weight spatial dimensions. Got error at axis {i + 1} for input with shape "
                f"{format_shape(in_shape)}, padding low {_fmt(pads_lo)}, padding high "
                f"{_fmt(pads_hi)}, and weight of shape {format_shape(wt_shape)}.")
        out.append(size)
    out.append(wt_shape[0])
    return tuple(out)


def _trim(x, lo, hi, dilation):
    """Negative padding taken off an input that is dilated: whole elements of
    ``x`` that no window reads are sliced off, and ``lo`` / ``hi`` (lists,
    changed in place) become the zeros left of the cut.

    MLX's ``conv_general`` slices ``-padding`` elements off the undilated
    input, which is not the same cut when the input is dilated; MLX's input
    gradient then has the wrong shape (MLX 0.32.4 returns a (1, 3, 2)
    gradient for a (1, 4, 2) input with stride 2, padding (0, 3), kernel
    dilation 2 and input dilation 3). mlxref gives the gradient.
    """
    index = [slice(None)] * x.ndim
    for i, s in enumerate(dilation):
        n = x.shape[1 + i]
        length = _dilate_size(n, s)
        start, stop = 0, n
        if lo[i] < 0:
            start = -(lo[i] // s)  # ceil(-lo / s): the elements before the first window
            lo[i] += start * s
        if hi[i] < 0:
            end = length + hi[i]  # dilated positions from here on are never read
            stop = max(start, -(-end // s))
            hi[i] = end - _dilate_size(stop, s) if stop > 0 else end
        index[1 + i] = slice(start, stop)
    return x[tuple(index)]


class Convolution(Primitive):
    """``conv_general(input, weight, ...)``: one node for every convolution op."""

    def __init__(self, stride, padding_lo, padding_hi, kernel_dilation, input_dilation,
                 groups, flip):
        self.stride = tuple(stride)
        self.padding_lo = tuple(padding_lo)
        self.padding_hi = tuple(padding_hi)
        self.kernel_dilation = tuple(kernel_dilation)
        self.input_dilation = tuple(input_dilation)
        self.groups = groups
        self.flip = flip

    def params(self):
        return {"stride": self.stride, "padding_lo": self.padding_lo,
                "padding_hi": self.padding_hi, "kernel_dilation": self.kernel_dilation,
                "input_dilation": self.input_dilation, "groups": self.groups,
                "flip": self.flip}

    def _conv(self, x, w, **changes):
        """``conv_general`` with this node's parameters, some of them changed."""
        p = self.params()
        p.update(changes)
        return ops.conv._conv_general(x, w, **p)

    def output_shapes(self, inputs):
        x, w = inputs
        return [conv_out_shape(x.shape, w.shape, self.stride, self.padding_lo,
                               self.padding_hi, self.kernel_dilation, self.input_dilation)]

    # --- forward ----------------------------------------------------------------

    def _taps(self, axis, in_size, k_size, out_size):
        """For each output position along spatial ``axis``: the (kernel tap,
        input position) pairs that read an input element (not a zero)."""
        s, lo = self.stride[axis], self.padding_lo[axis]
        kd, idl = self.kernel_dilation[axis], self.input_dilation[axis]
        taps = []
        for o in range(out_size):
            pairs = []
            for k in range(k_size):
                p = o * s + k * kd - lo
                if p >= 0 and p % idl == 0 and p // idl < in_size:
                    pairs.append((k_size - 1 - k if self.flip else k, p // idl))
            taps.append(pairs)
        return taps

    def eval(self, inputs):
        x, w = inputs
        xd, wd = x.data(), w.data()
        n_batch, c_in = x.shape[0], x.shape[-1]
        in_sp, k_sp = x.shape[1:-1], w.shape[1:-1]
        out_shape = self.output_shapes(inputs)[0]
        out_sp, c_out = out_shape[1:-1], out_shape[-1]
        groups = self.groups
        cg, og = c_in // groups, c_out // groups  # channels per group: in, out
        # (flat kernel offset, flat input offset) pairs for each output position,
        # combined axis by axis from the per-axis taps.
        per_axis = [self._taps(a, in_sp[a], k_sp[a], out_sp[a]) for a in range(len(in_sp))]
        positions = [[(0, 0)]]
        for a, taps in enumerate(per_axis):
            positions = [[(kf * k_sp[a] + k, xf * in_sp[a] + i)
                          for kf, xf in pos for k, i in pairs]
                         for pos in positions for pairs in taps]
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
                         for v in wd[(o * k_size + kf) * cg:(o * k_size + kf + 1) * cg]]
                        for o in range(c_out)]
                starts = [(base + xf) * c_in for _, xf in pos]
                for g in range(groups):
                    window = [v for s in starts for v in xd[s + g * cg:s + (g + 1) * cg]]
                    for o in range(g * og, (g + 1) * og):
                        out.append(sum(map(operator.mul, window, rows[o]), 0))
        return [out]

    # --- transforms -------------------------------------------------------------

    def _group_transpose(self, x, group_dim, ax_a, ax_b):
        """MLX's ``group_transpose`` in ``Convolution::vjp``: swap the channel
        axes within each group (all of them at once when ``groups`` is 1)."""
        if self.groups == 1:
            return ops.swapaxes(x, 0, -1)
        shape = list(x.shape)
        if group_dim < 0:
            group_dim += len(shape)
        shape.insert(group_dim, self.groups)
        shape[group_dim + 1] //= self.groups
        x = ops.swapaxes(ops.reshape(x, shape), ax_a, ax_b)
        return ops.flatten(x, group_dim, group_dim + 1)

    def vjp(self, primals, cotangents, argnums, outputs):
        x, w = primals
        (cotan,) = cotangents
        spatial = x.ndim - 2
        grads = []
        for a in argnums:
            if a == 0:
                # A transposed convolution of the cotangent: strides become
                # input dilations and the kernel runs the other way.
                lo, hi = [], []
                for i in range(spatial):
                    wt_size = _dilate_size(w.shape[1 + i], self.kernel_dilation[i])
                    lo.append(wt_size - self.padding_lo[i] - 1)
                    in_size = _dilate_size(x.shape[1 + i], self.input_dilation[i])
                    out_size = _dilate_size(cotan.shape[1 + i], self.stride[i])
                    # MLX's source adds padding_hi here; MLX 0.32.4 returns the
                    # input's shape for asymmetric padding too, which needs
                    # padding_lo (the last input position's window must fit).
                    hi.append(in_size - out_size + self.padding_lo[i])
                cotan_in = _trim(cotan, lo, hi, self.stride)
                grad = self._conv(cotan_in, self._group_transpose(w, 0, 1, -1),
                                  stride=self.input_dilation, padding_lo=lo, padding_hi=hi,
                                  input_dilation=self.stride, flip=not self.flip)
                grads.append(grad)
            else:
                # A convolution of the input by the cotangent, over the batch.
                hi = []
                for i in range(spatial):
                    in_size = _dilate_size(x.shape[1 + i], self.input_dilation[i])
                    out_size = _dilate_size(cotan.shape[1 + i], self.stride[i])
                    wt_size = _dilate_size(w.shape[1 + i], self.kernel_dilation[i])
                    hi.append(out_size - in_size + wt_size - self.padding_lo[i] - 1)
                grad = self._conv(self._group_transpose(x, -1, 0, -1),
                                  ops.swapaxes(cotan, 0, -1),
                                  stride=self.kernel_dilation, padding_hi=hi,
                                  kernel_dilation=self.stride, flip=False)
                if self.flip:
                    grad = ops.flip(grad, list(range(1, grad.ndim - 1)))
                grads.append(ops.swapaxes(grad, 0, -1))
        return grads

    def jvp(self, primals, tangents, argnums):
        """Linear in each input: the sum of the convolutions with one input
        replaced by its tangent. (MLX has no jvp rule here.)"""
        return multilinear_jvp(self, primals, tangents, argnums)

    def vmap(self, inputs, axes):
        x, w = inputs
        ax, aw = axes
        if ax is not None and aw is None:
            # Fold the batch into N, then split it off again.
            x = ops.moveaxis(x, ax, 0)
            out = self._conv(ops.flatten(x, 0, 1), w)
            return [ops.unflatten(out, 0, (x.shape[0], x.shape[1]))], [0]
        if ax is None and aw is not None:
            # Fold the batch into the output channels.
            w = ops.moveaxis(w, aw, 0)
            b, c_out = w.shape[0], w.shape[1]
            if self.groups == 1:
                out = self._conv(x, ops.flatten(w, 0, 1))
                return [ops.unflatten(out, -1, (b, c_out))], [out.ndim - 1]
            # With groups, each group's block of output channels must hold
            # that group's channels of every example: order them (group,
            # example, channel). MLX folds them as (example, channel), which
            # gives other examples' weights the wrong input channels: its
            # result differs from the per-example one (MLX 0.32.4).
            og = c_out // self.groups
            w = ops.reshape(w, (b, self.groups, og) + w.shape[2:])
            w = ops.flatten(ops.flatten(ops.swapaxes(w, 0, 1), 0, 1), 0, 1)
            out = self._conv(x, w)
            out = ops.unflatten(out, -1, (self.groups, b, og))
            out = ops.flatten(ops.swapaxes(out, -3, -2), -2, -1)
            return [out], [out.ndim - 2]
        if ax is not None and aw is not None:
            # Both batched: each example is a group of its own.
            b = x.shape[ax]
            x = ops.flatten(ops.moveaxis(x, ax, -2), -2, -1)
            w = ops.moveaxis(w, aw, 0)
            c_out = w.shape[1]
            out = self._conv(x, ops.flatten(w, 0, 1), groups=self.groups * b)
            out = ops.unflatten(out, -1, (b, c_out))
            return [out], [out.ndim - 2]
        return [self._conv(x, w)], [None]
