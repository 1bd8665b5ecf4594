"""Convolutions: ``conv_general``, ``conv1d``, ``conv2d``, ``conv3d``,
``conv_transpose1d``, ``conv_transpose2d`` and ``conv_transpose3d``.

Read alongside: mlx/ops.cpp (``conv_general``, ``run_conv_checks``,
``conv_transpose_general`` and the ``conv*d`` wrappers) and python/src/ops.cpp
(the bindings: which arguments take an int, a tuple or a list).

Every op builds one ``Convolution`` node through ``conv_general``, as MLX's
do. A transposed convolution is a convolution with the strides as input
dilation, the kernel flipped and the padding moved to the other side of the
kernel (``conv_transpose_general``). Negative padding, which the transposed
ops can produce, is taken off the input with a slice before the node is built.
"""

from .. import dtypes as _dt
from ..array import array
from ..printing import format_shape
from ..primitives.base import make_array
from ..primitives.conv import Convolution, conv_out_shape
from .common import INT32_MAX, INT32_MIN, incompatible_arguments
from .docs import shared_doc

__all__ = ["conv1d", "conv2d", "conv3d", "conv_general", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]

_TAIL = "*, stream: StreamOrDevice = None) -> array"


def _signature(name, n, transpose):
    if n == 1:
        t = "int"
    else:
        t = "int | tuple[" + ", ".join(["int"] * n) + "]"
    extra = f"output_padding: {t} = 0, " if transpose else ""
    return (f"{name}(input: array, weight: array, /, stride: {t} = 1, padding: {t} = 0, "
            f"dilation: {t} = 1, {extra}groups: int = 1, {_TAIL}")


_GENERAL = ("conv_general(input: array, weight: array, /, stride: int | Sequence[int] = 1, "
            "padding: int | Sequence[int] | tuple[Sequence[int], Sequence[int]] = 0, "
            "kernel_dilation: int | Sequence[int] = 1, input_dilation: int | Sequence[int] "
            f"= 1, groups: int = 1, flip: bool = False, {_TAIL}")


def _is_int(v):
    return isinstance(v, int) and INT32_MIN <= v <= INT32_MAX


def _is_ints(v, n=None):
    return (isinstance(v, (list, tuple)) and (n is None or len(v) == n)
            and all(_is_int(d) for d in v))


def _run_conv_checks(x, w, n_dim, groups):
    """MLX's ``run_conv_checks``."""
    if not x.dtype.is_float or x.dtype.is_complex:
        raise ValueError(f"[conv] Invalid input array with type {x.dtype.name}. Convolution "
                         "currently only supports floating point types")
    if x.ndim != n_dim + 2:
        raise ValueError(f"[conv] Invalid input array with {x.ndim} dimensions for {n_dim}D "
                         f"convolution. Expected an array with {n_dim + 2} dimensions "
                         "following the format [N, ..., C_in].")
    if w.ndim != n_dim + 2:
        raise ValueError(f"[conv] Invalid weight array with {w.ndim} dimensions for {n_dim}D "
                         f"convolution. Expected an array with {n_dim + 2} dimensions "
                         "following the format [C_out, ..., C_in].")
    c_in = x.shape[n_dim + 1]
    if groups == 0:  # MLX divides by it: the process dies
        raise ValueError("[conv] The number of groups must not be 0.")
    if c_in % groups != 0:
        raise ValueError("[conv] The input channels must be divisible by the number of groups. "
                         f"Got input with shape {format_shape(x.shape)} and {groups} groups.")
    if groups > 1 and w.shape[0] % groups != 0:
        raise ValueError("[conv] If groups > 1, the output channels must be divisible by the "
                         f"number of groups. Got {w.shape[0]} output channels and {groups} "
                         "groups.")
    if c_in != groups * w.shape[n_dim + 1]:
        if groups == 1:
            raise ValueError("[conv] Expect the input channels in the input and weight array to "
                             f"match but got shapes - input: {format_shape(x.shape)} and weight: "
                             f"{format_shape(w.shape)}")
        raise ValueError(f"Given groups={groups} and weights of shape {format_shape(w.shape)}, "
                         f"expected to have {groups * w.shape[n_dim + 1]} input channels but "
                         f"got {c_in} input channels instead.")
    if c_in == 0:  # MLX's CPU kernel divides by zero here (the process dies)
        raise ValueError(f"[conv] Cannot convolve over 0 input channels (input with shape "
                         f"{format_shape(x.shape)}).")


def conv_general_impl(x, w, stride, padding_lo, padding_hi, kernel_dilation,
                      input_dilation, groups, flip):
    """MLX's C++ ``conv_general`` (``conv_general`` below is its Python
    binding): checks, promotion, negative padding, the node.
    Each parameter is a list of ints (one for every axis, or one for all)."""
    if groups != 1 and x.ndim not in (3, 4):
        raise ValueError("[conv] Can only handle groups != 1 in 1D or 2D convolutions.")
    spatial = x.ndim - 2
    if spatial < 1 or spatial > 3:
        raise ValueError("[conv] Only works for inputs with 1-3 spatial dimensions. The inputs "
                         "must be in the format [N, ..., C_in]")
    _run_conv_checks(x, w, spatial, groups)
    dtype = _dt.promote_types(x.dtype, w.dtype)
    x, w = x.astype(dtype), w.astype(dtype)

    def per_axis(values, default):
        values = list(values)
        if len(values) <= 1:
            return [values[0] if values else default] * spatial
        return values

    stride = per_axis(stride, 1)
    padding_lo = per_axis(padding_lo, 0)
    padding_hi = per_axis(padding_hi, 0)
    kernel_dilation = per_axis(kernel_dilation, 1)
    input_dilation = per_axis(input_dilation, 1)
    if any(p < 0 for p in padding_lo + padding_hi):
        index = [slice(None)] * x.ndim
        for i in range(min(spatial, len(padding_lo), len(padding_hi))):
            start = -padding_lo[i] if padding_lo[i] < 0 else 0
            stop = x.shape[i + 1] + min(padding_hi[i], 0)
            index[i + 1] = slice(start, stop)
            padding_lo[i], padding_hi[i] = max(padding_lo[i], 0), max(padding_hi[i], 0)
        x = x[tuple(index)]
    conv_out_shape(x.shape, w.shape, stride, padding_lo, padding_hi, kernel_dilation,
                   input_dilation)  # MLX's errors, before the node
    node = Convolution(stride, padding_lo, padding_hi, kernel_dilation, input_dilation,
                       groups, bool(flip))
    return make_array(node, [x, w])


@shared_doc
def conv_general(input, weight, /, stride=1, padding=0, kernel_dilation=1, input_dilation=1,
                 groups=1, flip=False, *, stream=None):
    """``mx.conv_general``: a convolution over 1 to 3 spatial axes with every option of MLX's ``Convolution``.

    The op the ``conv*d`` and ``conv_transpose*d`` functions are built on. As in
    MLX it is a cross-correlation: output position ``i`` is the sum over the
    kernel taps ``k`` and input channels of
    ``input[i * stride + k * kernel_dilation] * weight[k]`` (the input first
    dilated and padded), unless ``flip`` turns
    the kernel around, which makes it a true convolution. The input is
    channels-last, ``(N, *spatial, C_in)``; the weight is ``(C_out, *kernel,
    C_in / groups)``; the result is ``(N, *out_spatial, C_out)`` with the two
    dtypes promoted. One ``Convolution`` node; negative padding is a slice of
    the input before it.

    Arguments:
    - ``input``: the batch, ``(N, *spatial, C_in)``, of a floating type.
    - ``weight``: the kernels, ``(C_out, *kernel, C_in / groups)``.
    - ``stride``: the step between output positions: one int for every axis or
      one per axis (default 1).
    - ``padding``: zeros added around the input: one int, one per axis, or a
      pair ``(low, high)`` of lists, one number per axis on each side
      (default 0).
    - ``kernel_dilation``: the spacing between kernel taps (default 1).
    - ``input_dilation``: the spacing put between input elements, zeros in
      between (default 1; a transposed convolution uses its stride here).
    - ``groups``: the number of channel groups, each convolved with its own
      ``C_out / groups`` kernels (default 1; only in 1-D and 2-D).
    - ``flip``: turn the kernel around along its spatial axes (default False).

    Errors: ``ValueError`` for an input that is not floating (MLX: "[conv]
    Invalid input array with type int32. Convolution currently only supports
    floating point types"), for a stride list of the wrong length (MLX: "[conv]
    Invalid strides (1,1) for 1D convolution."), for input and weight channels
    that do not match, or an input smaller than the kernel after padding; a
    ``TypeError`` for an argument of the wrong type (MLX's "incompatible function
    arguments" message, with the signature).

    >>> x = mx.arange(4.0).reshape(1, 4, 1)
    >>> w = mx.array([1.0, 2.0]).reshape(1, 2, 1)
    >>> mx.conv_general(x, w, padding=([1], [0]), flip=True).reshape(-1)
    array([0, 1, 4, 7], dtype=float32)
    """
    def bad():
        given = {k: v for k, v, d in (("stride", stride, 1), ("padding", padding, 0),
                                      ("kernel_dilation", kernel_dilation, 1),
                                      ("input_dilation", input_dilation, 1),
                                      ("groups", groups, 1), ("flip", flip, False))
                 if v is not d and v != d}
        return incompatible_arguments(_GENERAL, (input, weight), given)

    if not isinstance(input, array) or not isinstance(weight, array):
        raise bad()
    lists = []
    for v in (stride, kernel_dilation, input_dilation):
        if _is_int(v):
            lists.append([v])
        elif _is_ints(v):
            lists.append(list(v))
        else:
            raise bad()
    if _is_int(padding):
        lo = hi = [padding]
    elif _is_ints(padding):
        lo = hi = list(padding)
    elif (isinstance(padding, (list, tuple)) and len(padding) == 2
          and _is_ints(padding[0]) and _is_ints(padding[1])):
        lo, hi = list(padding[0]), list(padding[1])
    else:
        raise bad()
    if not _is_int(groups) or not isinstance(flip, bool):
        raise bad()
    return conv_general_impl(input, weight, lists[0], lo, hi, lists[1], lists[2], groups, flip)


def _wrapped(name, n, transpose, input, weight, named, groups):
    """The checked per-axis parameters of a ``conv*d`` / ``conv_transpose*d`` call."""
    values = []
    for v in named.values():
        if _is_int(v):
            values.append([v] * n)
        elif n > 1 and _is_ints(v, n):
            values.append(list(v))
        else:
            values = None
            break
    if values is None or not _is_int(groups) or not isinstance(input, array) \
            or not isinstance(weight, array):
        given = {k: v for k, v in named.items() if v is not (0 if "padding" in k else 1)}
        if groups != 1:
            given["groups"] = groups
        raise incompatible_arguments(_signature(name, n, transpose), (input, weight), given)
    return values


def _conv(name, n, input, weight, stride, padding, dilation, groups):
    stride, padding, dilation = _wrapped(
        name, n, False, input, weight,
        {"stride": stride, "padding": padding, "dilation": dilation}, groups)
    return conv_general_impl(input, weight, stride, padding, padding, dilation, [1] * n,
                             groups, False)


def _conv_transpose(name, n, input, weight, stride, padding, dilation, output_padding,
                    groups):
    """MLX's ``conv_transpose_general``."""
    stride, padding, dilation, output_padding = _wrapped(
        name, n, True, input, weight,
        {"stride": stride, "padding": padding, "dilation": dilation,
         "output_padding": output_padding}, groups)
    if weight.ndim == 0 or input.ndim == 0:  # MLX: "SmallVector out of range."
        raise IndexError(f"[{name}] The input and the weight must have dimensions, but their "
                         f"shapes are {format_shape(input.shape)} and "
                         f"{format_shape(weight.shape)}.")
    if weight.ndim < n + 1 or input.ndim < n + 1:
        # MLX reads the shapes before its checks; let conv_general's raise.
        return conv_general_impl(input, weight, [1] * n, padding, padding, dilation, stride,
                                 groups, True)
    lo, hi = [], []
    for i in range(n):
        wt_size = 1 + dilation[i] * (weight.shape[1 + i] - 1)
        lo.append(wt_size - padding[i] - 1)
        conv_size = ((input.shape[1 + i] - 1) * stride[i] - 2 * padding[i]
                     + dilation[i] * (weight.shape[1 + i] - 1) + 1)
        out_size = 1 + stride[i] * (input.shape[1 + i] - 1)
        hi.append(conv_size - out_size + padding[i] + output_padding[i])
    return conv_general_impl(input, weight, [1] * n, lo, hi, dilation, stride, groups, True)


@shared_doc
def conv1d(input, weight, /, stride=1, padding=0, dilation=1, groups=1, *, stream=None):
    """``mx.conv1d``: slide each kernel along the one spatial axis of a channels-last batch and sum its products with the input.

    A cross-correlation (the kernel is not flipped), as in MLX: with stride
    ``s`` and dilation ``d``,
    ``out[n, i, o] = sum_k sum_c input[n, i*s + k*d, c] * weight[o, k, c]``
    over the zero-padded input. The output has
    ``(L + 2 padding - d (K - 1) - 1) // s + 1`` positions and ``C_out``
    channels. One ``Convolution`` node, built by ``conv_general``.

    Arguments:
    - ``input``: ``(N, L, C_in)``, of a floating type.
    - ``weight``: ``(C_out, K, C_in / groups)``.
    - ``stride``: the step between output positions (default 1).
    - ``padding``: zeros added at both ends (default 0).
    - ``dilation``: the spacing between kernel taps (default 1).
    - ``groups``: split the channels into this many groups, each with its own
      ``C_out / groups`` kernels (default 1).

    Errors: ``ValueError`` when the input is not floating (MLX: "[conv]
    Invalid input array with type int32. Convolution currently only supports
    floating point types"), is not 3-D, its channels do not match the weight's
    (MLX: "[conv] Expect the input channels in the input and weight array to
    match but got shapes - input: (1,5,2) and weight: (1,2,1)"), a stride is not
    positive (MLX: "[conv] Stride sizes must be positive. Got strides (0).") or
    the padded input is shorter than the kernel.

    >>> x = mx.arange(5.0).reshape(1, 5, 1)
    >>> w = mx.array([1.0, 2.0]).reshape(1, 2, 1)
    >>> mx.conv1d(x, w).reshape(-1)
    array([2, 5, 8, 11], dtype=float32)
    """
    return _conv("conv1d", 1, input, weight, stride, padding, dilation, groups)


@shared_doc
def conv2d(input, weight, /, stride=1, padding=0, dilation=1, groups=1, *, stream=None):
    """``mx.conv2d``: slide each kernel over the two spatial axes of a channels-last batch and sum its products with the input.

    A cross-correlation (the kernel is not flipped), as in MLX; each spatial
    axis follows ``conv1d``'s rule for its stride, padding and dilation. One
    ``Convolution`` node, built by ``conv_general``.

    Arguments:
    - ``input``: ``(N, H, W, C_in)``, of a floating type.
    - ``weight``: ``(C_out, KH, KW, C_in / groups)``.
    - ``stride``: an int for both axes or a pair (default 1).
    - ``padding``: zeros on both sides of each axis: an int or a pair (default 0).
    - ``dilation``: the spacing between kernel taps: an int or a pair (default 1).
    - ``groups``: split the channels into this many groups, each with its own
      ``C_out / groups`` kernels (default 1).

    Errors: ``ValueError`` as ``conv1d``'s, e.g. input channels that the groups
    do not divide (MLX: "[conv] The input channels must be divisible by the
    number of groups. Got input with shape (1,4,4,3) and 2 groups.").

    >>> x = mx.arange(16.0).reshape(1, 4, 4, 1)
    >>> mx.conv2d(x, mx.ones((1, 2, 2, 1)), stride=2).reshape(2, 2)
    array([[10, 18],
           [42, 50]], dtype=float32)
    """
    return _conv("conv2d", 2, input, weight, stride, padding, dilation, groups)


@shared_doc
def conv3d(input, weight, /, stride=1, padding=0, dilation=1, groups=1, *, stream=None):
    """``mx.conv3d``: slide each kernel over the three spatial axes of a channels-last batch and sum its products with the input.

    A cross-correlation (the kernel is not flipped), as in MLX; each spatial
    axis follows ``conv1d``'s rule for its stride, padding and dilation. One
    ``Convolution`` node, built by ``conv_general``.

    Arguments:
    - ``input``: ``(N, D, H, W, C_in)``, of a floating type.
    - ``weight``: ``(C_out, KD, KH, KW, C_in)``.
    - ``stride``: an int for every axis or a triple (default 1).
    - ``padding``: zeros on both sides of each axis: an int or a triple (default 0).
    - ``dilation``: the spacing between kernel taps: an int or a triple (default 1).
    - ``groups``: must be 1: MLX groups only 1-D and 2-D convolutions.

    Errors: ``ValueError`` as ``conv1d``'s, and for ``groups`` other than 1
    (MLX: "[conv] Can only handle groups != 1 in 1D or 2D convolutions.").

    >>> x = mx.arange(8.0).reshape(1, 2, 2, 2, 1)
    >>> mx.conv3d(x, mx.ones((1, 2, 2, 2, 1))).reshape(-1)
    array([28], dtype=float32)
    """
    return _conv("conv3d", 3, input, weight, stride, padding, dilation, groups)


@shared_doc
def conv_transpose1d(input, weight, /, stride=1, padding=0, dilation=1, output_padding=0,
                     groups=1, *, stream=None):
    """``mx.conv_transpose1d``: the transposed convolution (the input-gradient of ``conv1d``): each input element adds a scaled copy of the kernel to the output, copies ``stride`` apart.

    As MLX builds it (``conv_transpose_general``): ``conv_general`` with the
    stride as input dilation, the kernel flipped and the padding moved to the
    other side of the kernel. The output has ``(L - 1) stride - 2 padding +
    dilation (K - 1) + 1 + output_padding`` positions.

    Arguments:
    - ``input``: ``(N, L, C_in)``, of a floating type.
    - ``weight``: ``(C_out, K, C_in / groups)``.
    - ``stride``: how far apart the kernel copies land (default 1).
    - ``padding``: positions cut from both ends of the full result (default 0).
    - ``dilation``: the spacing between kernel taps (default 1).
    - ``output_padding``: positions added at the end (default 0).
    - ``groups``: channel groups, as in ``conv1d`` (default 1).

    Errors: ``ValueError`` as ``conv1d``'s (MLX's "[conv] ..." messages).

    >>> x = mx.array([1.0, 0.0, 3.0]).reshape(1, 3, 1)
    >>> w = mx.array([1.0, 2.0]).reshape(1, 2, 1)
    >>> mx.conv_transpose1d(x, w, stride=2).reshape(-1)
    array([1, 2, 0, 0, 3, 6], dtype=float32)
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, stride, padding, dilation,
                           output_padding, groups)


@shared_doc
def conv_transpose2d(input, weight, /, stride=1, padding=0, dilation=1, output_padding=0,
                     groups=1, *, stream=None):
    """``mx.conv_transpose2d``: the transposed convolution (the input-gradient of ``conv2d``): each input element adds a scaled copy of the kernel to the output, copies ``stride`` apart along each axis.

    As MLX builds it: ``conv_general`` with the strides as input dilation, the
    kernel flipped and the padding moved to the other side of the kernel; each
    axis has ``conv_transpose1d``'s output size.

    Arguments:
    - ``input``: ``(N, H, W, C_in)``, of a floating type.
    - ``weight``: ``(C_out, KH, KW, C_in / groups)``.
    - ``stride``: an int or a pair (default 1).
    - ``padding``: positions cut from both sides of each axis: an int or a pair
      (default 0).
    - ``dilation``: the spacing between kernel taps: an int or a pair (default 1).
    - ``output_padding``: positions added at the end of each axis: an int or a
      pair (default 0).
    - ``groups``: channel groups, as in ``conv2d`` (default 1).

    Errors: ``ValueError`` as ``conv2d``'s (MLX's "[conv] ..." messages).

    >>> x = mx.array([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 2, 2, 1)
    >>> mx.conv_transpose2d(x, mx.ones((1, 2, 2, 1))).reshape(3, 3)
    array([[1, 3, 2],
           [4, 10, 6],
           [3, 7, 4]], dtype=float32)
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, stride, padding, dilation,
                           output_padding, groups)


@shared_doc
def conv_transpose3d(input, weight, /, stride=1, padding=0, dilation=1, output_padding=0,
                     groups=1, *, stream=None):
    """``mx.conv_transpose3d``: the transposed convolution (the input-gradient of ``conv3d``): each input element adds a scaled copy of the kernel to the output, copies ``stride`` apart along each axis.

    As MLX builds it: ``conv_general`` with the strides as input dilation, the
    kernel flipped and the padding moved to the other side of the kernel; each
    axis has ``conv_transpose1d``'s output size.

    Arguments:
    - ``input``: ``(N, D, H, W, C_in)``, of a floating type.
    - ``weight``: ``(C_out, KD, KH, KW, C_in)``.
    - ``stride``: an int or a triple (default 1).
    - ``padding``: positions cut from both sides of each axis: an int or a
      triple (default 0).
    - ``dilation``: the spacing between kernel taps: an int or a triple (default 1).
    - ``output_padding``: positions added at the end of each axis: an int or a
      triple (default 0).
    - ``groups``: must be 1, as in ``conv3d``.

    Errors: ``ValueError`` as ``conv3d``'s, e.g. ``groups`` other than 1 (MLX:
    "[conv] Can only handle groups != 1 in 1D or 2D convolutions.").

    >>> x = mx.array([2.0]).reshape(1, 1, 1, 1, 1)
    >>> mx.conv_transpose3d(x, mx.ones((1, 2, 1, 2, 1))).reshape(2, 2)
    array([[2, 2],
           [2, 2]], dtype=float32)
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, stride, padding, dilation,
                           output_padding, groups)
