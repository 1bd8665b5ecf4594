"""The convolution primitive: Convolution.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Convolution``:
``conv_out_shape``, its vjp and vmap rules) and mlx/ops.cpp
(``conv_general``, which builds it). Layouts are channels-last, as in MLX:
input ``(N, *spatial, C_in)``, weight ``(C_out, *kernel, C_in / groups)``,
output ``(N, *out_spatial, C_out)``. The derivative rules are mostly
convolutions with other parameters.
Read next: mlxref/core/backend/cpu/conv.py (the forward loops: which input
element each kernel tap reads).
"""

from .. import ops
from ..backend.cpu.conv import conv
from ..printing import format_shape
from .base import Primitive, multilinear_jvp


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
        return ops.conv.conv_general_impl(x, w, **p)

    def output_shapes(self, inputs):
        x, w = inputs
        return [conv_out_shape(x.shape, w.shape, self.stride, self.padding_lo,
                               self.padding_hi, self.kernel_dilation, self.input_dilation)]

    def eval(self, inputs):
        x, w = inputs
        return [conv(x.data(), x.shape, w.data(), w.shape, self.output_shapes(inputs)[0],
                     self.stride, self.padding_lo, self.kernel_dilation, self.input_dilation,
                     self.groups, self.flip)]

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

    jvp = multilinear_jvp  # linear in each input (MLX has no jvp rule here)

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


def _dilate_size(size, dilation):
    return 1 + dilation * (size - 1)


def conv_out_shape(in_shape, wt_shape, strides, pads_lo, pads_hi, kernel_dilation,
                   input_dilation):
    """The output shape, or MLX's error for the parameters
    (``Convolution::conv_out_shape``). MLX prints a ``std::vector<int>`` as
    it prints a shape: ``(1,2)``."""
    spatial = len(in_shape) - 2
    if len(strides) != spatial:
        raise ValueError(f"[conv] Invalid strides {format_shape(strides)} for {spatial}D "
                         "convolution.")
    if len(pads_lo) != spatial or len(pads_hi) != spatial:
        raise ValueError(f"[conv] Invalid padding {format_shape(pads_lo)} | "
                         f"{format_shape(pads_hi)} for {spatial}D convolution.")
    if len(kernel_dilation) != spatial:
        raise ValueError(f"[conv] Invalid kernel dilation {format_shape(kernel_dilation)} for "
                         f"{spatial}D convolution.")
    if len(input_dilation) != spatial:
        raise ValueError(f"[conv] Invalid input dilation {format_shape(input_dilation)} for "
                         f"{spatial}D convolution.")
    out = [in_shape[0]]
    for i in range(spatial):
        if kernel_dilation[i] <= 0:
            raise ValueError("[conv] Kernel dilation sizes must be positive. Got kernel "
                             f"dilation {format_shape(kernel_dilation)}.")
        if input_dilation[i] <= 0:
            raise ValueError("[conv] Input dilation sizes must be positive. Got input "
                             f"dilation {format_shape(input_dilation)}.")
        if pads_lo[i] < 0 or pads_hi[i] < 0:
            raise ValueError("[conv] Padding sizes must be non-negative. Got padding "
                             f"{format_shape(pads_lo)} | {format_shape(pads_hi)}.")
        if strides[i] <= 0:
            raise ValueError("[conv] Stride sizes must be positive. Got strides "
                             f"{format_shape(strides)}.")
        kd = _dilate_size(wt_shape[i + 1], kernel_dilation[i])
        idl = _dilate_size(in_shape[i + 1], input_dilation[i])
        size = (idl + pads_lo[i] + pads_hi[i] - kd) // strides[i] + 1
        if size <= 0:
            raise ValueError(
                "[conv] Spatial dimensions of input after padding cannot be smaller than "
                f"weight spatial dimensions. Got error at axis {i + 1} for input with shape "
                f"{format_shape(in_shape)}, padding low {format_shape(pads_lo)}, padding high "
                f"{format_shape(pads_hi)}, and weight of shape {format_shape(wt_shape)}.")
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
