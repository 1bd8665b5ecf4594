"""``mx.fast``: MLX's fused kernels, as the compositions MLX's CPU runs.

Read alongside: mlx/fast.cpp (each op's checks and its ``fallback`` lambda),
mlx/fast_primitives.h and python/src/fast.cpp (the bindings). On the GPU MLX
runs one fused kernel per op (RMSNorm, LayerNorm, RoPE,
ScaledDotProductAttention), each with a hand-written vjp; on the CPU
``use_fallback`` is true, and MLX builds the ``fallback`` graph of ordinary
ops instead, which the transforms then differentiate and vmap like any other
graph. mlxref does what MLX's CPU does: each op here checks its arguments
with MLX's messages and composes mlxref ops in the fallback's order and
dtypes, so values, gradients (for every array input, offsets and masks
included) and vmap agree with MLX on the CPU. The GPU kernels' own vjps
(e.g. ``RMSNorm::vjp``) compute the same derivatives in another order.

``gated_delta_update`` (newer than the mirror's mlx/fast.cpp) is composed
the same way: its CPU fallback is a loop over the time steps, whose ops,
order and dtypes were read off the graphs MLX 0.32.4 exports
(``mx.export_to_dot``) and checked against its values and gradients.
The kernels that run user-written GPU source cannot run here.
``metal_kernel`` returns a callable, as MLX's does, that raises when called,
as on MLX's CPU build, but under ``export_function`` records the kernel as a
``CustomKernel`` node (primitives/fast.py) with the source MLX generates for
it (mlx/backend/common/metal_kernel.cpp), so the export can run where there
is a GPU. ``cuda_kernel`` and ``precompiled_cuda_kernel`` raise an error
naming the function.
"""

from . import device
from . import dtypes as _dt
from . import ops
from .array import array
from .printing import format_shape
from .convert import to_array
from .ops.common import (c_int, check_array, check_float, incompatible_argument,
                         incompatible_arguments, is_c_float, is_c_int)
from .ops.docs import shared_doc
from .primitives.base import make_arrays
from .primitives.fast import CustomKernel
from .transforms.tape import in_export_tracing

__all__ = [
    "cross_entropy",
    "cuda_kernel",
    "gated_delta_update",
    "layer_norm",
    "metal_kernel",
    "precompiled_cuda_kernel",
    "rms_norm",
    "rope",
    "scaled_dot_product_attention",
]


def _check_norm_param(name, label, p, x):
    if p.ndim != 1:
        raise ValueError(f"[{name}] {label} must have 1 dimension but has {p.ndim} dimensions.")
    if p.size != x.shape[-1]:
        raise ValueError(
            f"[{name}] {label} must have the same size as the last dimension of"
            f" x but has {p.size} elements.")


def _check_input(name, x):
    if x.ndim == 0:
        raise ValueError(
            f"[{name}] Input must have at least 1 dimension but got input with 0 dimensions.")


def _check_floating(name, dtype):
    if not _dt.issubdtype(dtype, _dt.floating):
        raise ValueError(f"[{name}] Received unsupported type {dtype.name}.")


@shared_doc
def rms_norm(x, weight, eps, *, stream=None):
    """``mx.fast.rms_norm``: each vector along the last axis divided by its root mean square, then multiplied by ``weight``: ``weight * x / sqrt(mean(x**2) + eps)``.

    As mlx/fast.cpp ``rms_norm`` (its CPU fallback, which MLX also
    differentiates on the CPU): MLX's kernel and its fallback compute in float32
    whatever ``x``'s dtype: ``x * rsqrt(mean(x**2, -1) + eps)`` with ``x`` cast
    to float32, then the result is cast to the output dtype (``x``'s, promoted
    with ``weight``'s) before the weight multiplies it in that dtype.

    Arguments:
    - ``x``: the input, at least 1-D, of a floating type.
    - ``weight``: a 1-D array of ``x.shape[-1]`` scales, or None (no scaling).
    - ``eps``: a float added to the mean square (for numerical safety).

    Errors: ``ValueError`` for a 0-d ``x`` (MLX: "[rms_norm] Input must have at
    least 1 dimension but got input with 0 dimensions."), a ``weight`` of the
    wrong size (MLX: "[rms_norm] (*weight) must have the same size as the last
    dimension of x but has 3 elements.") or rank, or a type that is not floating
    (MLX: "[rms_norm] Received unsupported type int32.").

    >>> mx.fast.rms_norm(mx.array([3.0, 4.0]), None, 0.0)
    array([0.848528, 1.13137], dtype=float32)
    """
    check_array(x, "rms_norm", "x")
    check_float(eps, "rms_norm", "eps")
    _check_input("rms_norm", x)
    if weight is not None:
        check_array(weight, "rms_norm", "weight")
        _check_norm_param("rms_norm", "(*weight)", weight, x)
    out_type = _dt.result_type(x, weight) if weight is not None else x.dtype
    _check_floating("rms_norm", out_type)
    y = ops.astype(x, _dt.float32)
    y = ops.multiply(y, ops.rsqrt(ops.add(ops.mean(ops.square(y), -1, keepdims=True),
                                          array(eps, _dt.float32))))
    y = ops.astype(y, out_type)
    if weight is not None:
        y = ops.multiply(y, ops.astype(weight, out_type))
    return y


@shared_doc
def layer_norm(x, weight, bias, eps, *, stream=None):
    """``mx.fast.layer_norm``: each vector along the last axis normalized to mean 0 and variance 1, then scaled by ``weight`` and shifted by ``bias``.

    That is ``(x - mean) / sqrt(var + eps) * weight + bias``, as mlx/fast.cpp
    ``layer_norm`` (its CPU fallback). As in MLX, the mean and the variance
    ``mean((x - mu)**2)`` are computed in float32 whatever ``x``'s dtype; the
    normalized ``x`` is cast to the output dtype (``x``'s promoted with
    ``weight``'s and ``bias``'s) before the weight and the bias are applied in
    that dtype.

    Arguments:
    - ``x``: the input, at least 1-D, of a floating type.
    - ``weight``: a 1-D array of ``x.shape[-1]`` scales, or None.
    - ``bias``: a 1-D array of ``x.shape[-1]`` offsets, or None.
    - ``eps``: a float added to the variance.

    Errors: ``ValueError`` for a 0-d ``x``, a ``weight`` or ``bias`` of the
    wrong rank (MLX: "[layer_norm] weight must have 1 dimension but has 2
    dimensions.") or size (MLX: "[layer_norm] bias must have the same size as
    the last dimension of x but has 3 elements."), or a type that is not
    floating.

    >>> x = mx.array([[1.0, 2.0, 3.0, 4.0]])
    >>> mx.fast.layer_norm(x, None, None, 1e-5)
    array([[-1.34164, -0.447212, 0.447212, 1.34164]], dtype=float32)
    """
    check_array(x, "layer_norm", "x")
    check_float(eps, "layer_norm", "eps")
    _check_input("layer_norm", x)
    if weight is not None:
        check_array(weight, "layer_norm", "weight")
        _check_norm_param("layer_norm", "weight", weight, x)
    if bias is not None:
        check_array(bias, "layer_norm", "bias")
        _check_norm_param("layer_norm", "bias", bias, x)
    # MLX promotes the bias only together with a weight.
    if weight is None:
        out_type = x.dtype
    elif bias is None:
        out_type = _dt.result_type(x, weight)
    else:
        out_type = _dt.result_type(x, weight, bias)
    _check_floating("layer_norm", out_type)
    y = ops.astype(x, _dt.float32)
    xc = ops.subtract(y, ops.mean(y, -1, keepdims=True))
    v = ops.mean(ops.square(xc), -1, keepdims=True)
    y = ops.astype(ops.multiply(xc, ops.rsqrt(ops.add(v, array(eps, _dt.float32)))), out_type)
    if weight is not None:
        y = ops.multiply(y, ops.astype(weight, out_type))
    if bias is not None:
        y = ops.add(y, ops.astype(bias, out_type))
    return y


@shared_doc
def rope(a, dims, *, traditional, base, scale, offset, freqs=None, stream=None):
    """``mx.fast.rope``: rotary positional encoding: each pair of the first ``dims`` features of the token at position ``t`` rotated by the angle ``t * theta_i``.

    As mlx/fast.cpp ``rope``: positions ``(arange(T) + offset) * scale`` and
    the angles ``positions * inv_freqs`` are float32 (``inv_freqs`` is
    ``exp(-i * log(base) / (dims/2))`` or ``1 / freqs``); their cosines and
    sines are cast to ``a``'s dtype and the rotation is done in that dtype.
    ``traditional`` rotates the pairs ``(x[2i], x[2i+1])``, otherwise
    ``(x[i], x[i + dims/2])``. The features past ``dims`` are left as they are.
    An ``offset`` vector gives one offset per example of the batch (axis 0).

    Arguments:
    - ``a``: the input, ``(..., T, D)`` with at least 3 dimensions (the
      second-to-last axis is the position).
    - ``dims``: how many features to rotate, even, at most ``D``.
    - ``traditional``: the pairing, as above (keyword only).
    - ``base``: the base of the frequencies, or None when ``freqs`` is given
      (keyword only).
    - ``scale``: the positions' factor (keyword only).
    - ``offset``: the position of the first token: an int or an integer array
      of one per example (keyword only).
    - ``freqs``: ``dims / 2`` frequencies to use instead of ``base`` (default None).

    Errors: ``ValueError`` for fewer than 3 dimensions (MLX: "[rope] Input must
    have at least 3 dimensions but got input with 2 dimensions."), an odd
    ``dims`` (MLX: "[rope] dims must be even but got 3."), both or neither of
    ``base`` and ``freqs`` (MLX: "[rope] Only one of base or freqs can have a
    value.", "[rope] Neither base nor freqs has a value.") or a float offset
    (MLX: "[rope] offset must be an integer but got type float32.").

    >>> x = mx.ones((1, 3, 2))
    >>> mx.fast.rope(x, 2, traditional=False, base=10000.0, scale=1.0, offset=0)
    array([[[1, 1],
            [-0.301169, 1.38177],
            [-1.32544, 0.493151]]], dtype=float32)
    """
    x = check_array(a, "rope", "a")
    dims = c_int(dims, "rope", "dims")
    if not isinstance(traditional, bool):
        raise incompatible_argument("rope", "traditional", "a bool", traditional)
    if base is not None:
        check_float(base, "rope", "base")
    check_float(scale, "rope", "scale")
    offset = to_array(offset)
    if freqs is not None:
        freqs = ops.astype(check_array(freqs, "rope", "freqs"), _dt.float32)
        if base is not None:
            raise ValueError("[rope] Only one of base or freqs can have a value.")
    elif base is None:
        raise ValueError("[rope] Neither base nor freqs has a value.")
    if x.ndim < 3:
        raise ValueError(
            f"[rope] Input must have at least 3 dimensions but got input with {x.ndim} dimensions.")
    if not _dt.issubdtype(x.dtype, _dt.floating):
        raise ValueError(f"[rope] Input must be a floating type but got {x.dtype.name}.")
    if offset.ndim > 1:
        raise ValueError(
            f"[rope] offset must have at most one dimension but has shape {format_shape(offset.shape)}.")
    if offset.size != 1 and offset.size != x.shape[0]:
        raise ValueError(
            f"[rope] offset must be a scalar or vector with {x.shape[0]} elements but has shape "
            f"{format_shape(offset.shape)}.")
    if not _dt.issubdtype(offset.dtype, _dt.integer):
        raise ValueError(f"[rope] offset must be an integer but got type {offset.dtype.name}.")
    if offset.dtype.size != 4:
        offset = ops.astype(offset, _dt.int32)
    if dims <= 0:
        raise ValueError(f"[rope] dims must be positive but got {dims}.")
    if dims % 2 != 0:
        raise ValueError(f"[rope] dims must be even but got {dims}.")
    if dims > x.shape[-1]:
        raise ValueError(
            f"[rope] dims must not exceed the input's last dimension ({x.shape[-1]}) but got {dims}.")
    if freqs is not None and (freqs.ndim != 1 or freqs.shape[0] != dims // 2):
        raise ValueError(
            f"[rope] freqs must be one dimensional with size {dims // 2} but got shape "
            f"{format_shape(freqs.shape)}.")

    shape = x.shape
    if x.ndim == 3:
        x = ops.expand_dims(x, 1)
    elif x.ndim > 4:
        x = ops.flatten(x, 1, x.ndim - 3)
    B, N, T = x.shape[:3]
    t = x.dtype
    half = dims // 2
    if offset.size > 1:
        offset = ops.expand_dims(offset, [-1, -2])
    positions = ops.multiply(ops.add(ops.arange(T, dtype=_dt.float32), offset),
                             array(scale, _dt.float32))
    if freqs is not None:
        inv_freqs = ops.reciprocal(freqs)
    else:
        # MLX computes std::log(base) / half_dims in float (single precision).
        step = ops.divide(ops.log(array(float(base), _dt.float32)), half)
        inv_freqs = ops.exp(ops.multiply(ops.arange(0, -half, -1, dtype=_dt.float32), step))
    theta = ops.multiply(ops.expand_dims(positions, -1), inv_freqs)
    coss = ops.astype(ops.cos(theta), t)
    sins = ops.astype(ops.sin(theta), t)

    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
    else:
        x1, x2 = x[..., :half], x[..., half:dims]
    o1 = ops.subtract(ops.multiply(x1, coss), ops.multiply(x2, sins))
    o2 = ops.add(ops.multiply(x1, sins), ops.multiply(x2, coss))
    if traditional:
        out = ops.reshape(ops.concatenate([ops.expand_dims(o1, -1), ops.expand_dims(o2, -1)], -1),
                          (B, N, T, dims))
        outs = [out]
    else:
        outs = [o1, o2]
    if dims < x.shape[-1]:
        outs.append(x[..., dims:])
    return ops.reshape(ops.concatenate(outs, -1), shape)


@shared_doc
def scaled_dot_product_attention(q, k, v, *, scale, mask=None, sinks=None,
                                 force_fused=False, stream=None):
    """``mx.fast.scaled_dot_product_attention``: attention per head, ``softmax(scale * q @ kᵀ + mask) @ v``.

    As mlx/fast.cpp ``scaled_dot_product_attention`` (its CPU fallback).
    ``q`` is ``[B, N_q, T_q, D]``, ``k`` and ``v`` are ``[B, N_kv, T_kv, D]``
    and ``[B, N_kv, T_kv, D_v]`` with ``N_kv`` dividing ``N_q`` (grouped
    query attention: query head ``h`` uses kv head ``h // (N_q // N_kv)``,
    without tiling ``k`` and ``v``). ``mask`` is None, ``"causal"`` (query
    ``i`` sees keys ``j <= i + T_kv - T_q``), a boolean array (False sets the
    score to the dtype's lowest finite value) or an additive array; arrays
    broadcast to ``[B, N_q, T_q, T_kv]``. ``sinks`` (one logit per query
    head) joins each softmax as an extra column that is then dropped. The
    softmax is computed in float32 (``precise=True``) whatever the inputs'
    dtype; ``q`` is scaled in its own dtype before the product.

    Arguments:
    - ``q``: the queries, ``[B, N_q, T_q, D]``.
    - ``k``: the keys, ``[B, N_kv, T_kv, D]``.
    - ``v``: the values, ``[B, N_kv, T_kv, D_v]``.
    - ``scale``: the factor of the scores, usually ``1 / sqrt(D)`` (keyword only).
    - ``mask``: None, "causal" or an array, as above (default None).
    - ``sinks``: None or one logit per query head (default None).
    - ``force_fused``: demand MLX's fused kernel, which the CPU has not: True
      raises, as in MLX (default False).

    Errors: ``ValueError`` for inputs that are not 4-D (MLX:
    "[scaled_dot_product_attention] input with shape (1,2) expected to be rank
    4"), a query size that differs from the keys', head counts that do not
    divide, another mask string (MLX: "[scaled_dot_product_attention] invalid
    mask option 'x'. Must be 'causal', or an array.") or ``force_fused=True``
    (MLX: "[scaled_dot_product_attention] force_fused=True but no fused kernel
    is available in CPU backend.").

    >>> q = mx.array([1.0, 0.0]).reshape(1, 1, 1, 2)
    >>> k = mx.array([[1.0, 0.0], [0.0, 1.0]]).reshape(1, 1, 2, 2)
    >>> mx.fast.scaled_dot_product_attention(q, k, k * 10, scale=1.0)
    array([[[[7.31059, 2.68941]]]], dtype=float32)
    """
    for label, x in (("q", q), ("k", k), ("v", v)):
        check_array(x, "scaled_dot_product_attention", label)
    check_float(scale, "scaled_dot_product_attention", "scale")
    name = "[scaled_dot_product_attention]"
    mask_arr = None
    do_causal = False
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"{name} invalid mask option '{mask}'. Must be 'causal', or an array.")
        do_causal = True
    elif mask is not None:
        mask_arr = check_array(mask, "scaled_dot_product_attention", "mask")
    for tensor in (q, k, v):
        if tensor.ndim != 4:
            raise ValueError(f"{name} input with shape {format_shape(tensor.shape)} expected to be rank 4")
    if mask_arr is not None and mask_arr.ndim > 4:
        raise ValueError(f"{name} the mask with shape {format_shape(mask_arr.shape)} "
                         "expected to have at most rank 4.")
    for tensor in (k, v):
        if tensor.shape[0] != q.shape[0]:
            raise ValueError(f"{name} mismatching batch dimension for input with shape "
                             f"{format_shape(tensor.shape)}.")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{name} query, keys expected to have matching last dimension; found query "
                         f"shape {format_shape(q.shape)} for keys shape {format_shape(k.shape)}.")
    n_q_heads, n_kv_heads = q.shape[-3], k.shape[-3]
    if k.shape[-3] != v.shape[-3]:
        raise ValueError(f"{name} keys, values expected to have matching n_kv_heads; found keys with "
                         f"n_heads {k.shape[-3]} for values with n_heads {v.shape[-3]}.")
    if n_q_heads % n_kv_heads != 0:
        raise ValueError(f"{name} n_heads must be a multiple of n_kv_heads, found n_heads "
                         f"{n_q_heads} for n_kv_heads {n_kv_heads}.")
    final_type = _dt.result_type(q, k, v)
    if not _dt.issubdtype(final_type, _dt.floating):
        raise ValueError(f"{name} Received unsupported type {final_type.name}.")
    q, k, v = (ops.astype(t, final_type) for t in (q, k, v))
    if mask_arr is not None:
        if _dt.promote_types(mask_arr.dtype, final_type) != final_type:
            raise ValueError(f"{name} Mask type must promote to output type {final_type.name}.")
        if mask_arr.dtype != _dt.bool_:
            mask_arr = ops.astype(mask_arr, final_type)
        mask_arr = ops.broadcast_to(mask_arr, q.shape[:-1] + (k.shape[-2],))
    if sinks is not None:
        sinks = check_array(sinks, "scaled_dot_product_attention", "sinks")
        if _dt.promote_types(sinks.dtype, final_type) != final_type:
            raise ValueError(f"{name} Type of sinks must promote to output type {final_type.name}.")
        if sinks.ndim != 1 or sinks.shape[0] != n_q_heads:
            raise ValueError(f"{name} Received invalid shape for sinks {format_shape(sinks.shape)}.")
        sinks = ops.astype(sinks, final_type)
    if force_fused:
        raise ValueError(f"{name} force_fused=True but no fused kernel is available in CPU backend.")

    q = ops.multiply(array(scale, q.dtype), q)
    n_repeats = n_q_heads // n_kv_heads
    if n_repeats > 1:
        q = ops.unflatten(q, 1, (n_kv_heads, n_repeats))
        k = ops.expand_dims(k, 2)
        v = ops.expand_dims(v, 2)
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2))
    if do_causal or mask_arr is not None:
        if do_causal:
            kL, qL = k.shape[-2], q.shape[-2]
            q_idx = ops.expand_dims(ops.arange(kL - qL, kL), 1)
            m = ops.greater_equal(q_idx, ops.expand_dims(ops.arange(0, kL), 0))
        else:
            m = mask_arr
        if n_repeats > 1 and m.ndim >= 3:
            if m.shape[-3] == 1:
                m = ops.expand_dims(m, -3)
            else:
                m = ops.unflatten(m, -3, (n_kv_heads, n_repeats))
        if m.dtype == _dt.bool_:
            scores = ops.where(m, scores, array(_dt.finfo(scores.dtype).min, scores.dtype))
        else:
            scores = ops.add(scores, m)
    if sinks is not None:
        s = ops.expand_dims(sinks, [0, 2, 3])
        if scores.ndim == 5:
            s = ops.unflatten(s, 1, (n_kv_heads, n_repeats))
        s = ops.broadcast_to(s, scores.shape[:-1] + (1,))
        scores = ops.concatenate([s, scores], -1)
    scores = ops.softmax(scores, [-1], precise=True)
    if sinks is not None:
        scores = scores[..., 1:]
    out = ops.matmul(scores, v)
    if n_repeats > 1:
        out = ops.flatten(out, 1, 2)
    return out


@shared_doc
def cross_entropy(logits, targets, *, stream=None):
    """``mx.fast.cross_entropy``: the cross-entropy loss of each row of ``logits`` against its target class, ``logsumexp(logits, -1) - logits[..., target]``.

    As MLX 0.32.4's ``fast.cross_entropy``: the loss is float32 whatever the
    logits' dtype. MLX's GPU kernel accumulates in float32; its CPU fallback,
    which mlxref follows, reduces in the logits' dtype and casts the loss to
    float32. Targets must lie in ``[0, logits.shape[-1])``: mlxref raises when
    evaluating one outside (MLX reads its logit as 0).

    Arguments:
    - ``logits``: ``(..., C)``, of a floating type.
    - ``targets``: integer class indices of shape ``logits.shape[:-1]``.

    Errors: ``ValueError`` for float targets (MLX: "[cross_entropy] targets
    must be integer class indices but got float32."), targets of another shape
    (MLX: "[cross_entropy] targets shape (1) does not match logits shape (2,2)
    with the last axis removed."), integer logits or 0-d logits.

    >>> logits = mx.array([[0.0, 0.0], [1.0, 3.0]])
    >>> mx.fast.cross_entropy(logits, mx.array([0, 1]))
    array([0.693147, 0.126928], dtype=float32)
    """
    check_array(logits, "cross_entropy", "logits")
    check_array(targets, "cross_entropy", "targets")
    name = "[cross_entropy]"
    if logits.ndim == 0:
        raise ValueError(f"{name} logits must have at least 1 dimension but got input with 0 dimensions.")
    if not _dt.issubdtype(logits.dtype, _dt.floating):
        raise ValueError(f"{name} Received unsupported logits type {logits.dtype.name}.")
    if not _dt.issubdtype(targets.dtype, _dt.integer):
        raise ValueError(f"{name} targets must be integer class indices but got {targets.dtype.name}.")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"{name} targets shape {format_shape(targets.shape)} does not match logits "
                         f"shape {format_shape(logits.shape)} with the last axis removed.")
    picked = ops.squeeze(ops.take_along_axis(logits, ops.expand_dims(targets, -1), -1), -1)
    return ops.astype(ops.subtract(ops.logsumexp(logits, -1), picked), _dt.float32)


_GATED_DELTA_UPDATE = (
    "gated_delta_update(q: mlx.core.array, k: mlx.core.array, v: mlx.core.array, "
    "gamma: mlx.core.array, beta: mlx.core.array, initial_state: mlx.core.array | None = None, "
    "mask: mlx.core.array | None = None, stream: mlx.core.Stream | mlx.core.ThreadLocalStream | "
    "mlx.core.Device | mlx.core.DeviceType | None = None) -> list[mlx.core.array]")


def _check_gated_delta_rank(label, x, ndim, layout):
    # MLX checks no rank: a q or v with too few axes dies reading a size that
    # is not there (IndexError "SmallVector out of range."), a 0-d array in its
    # first squeeze (IndexError), other ranks in a broadcast (ValueError).
    # mlxref raises the same types with a message that names the input.
    if x.ndim != ndim:
        short = x.ndim == 0 or (label in ("q", "v") and x.ndim < ndim)
        raise (IndexError if short else ValueError)(
            f"[gated_delta_update] {label} must have {ndim} dimensions {layout} but has shape "
            f"{format_shape(x.shape)}.")


def _at_step(x, t):
    """``x[:, t]``: the slice of time step ``t`` of a ``[B, T, ...]`` input."""
    return ops.squeeze(x[:, t:t + 1], 1)


@shared_doc
def gated_delta_update(q, k, v, gamma, beta, initial_state=None, mask=None, stream=None):
    """``mx.fast.gated_delta_update``: the gated delta rule, a linear-attention recurrence that carries one ``Dv x Dk`` state matrix per value head along the sequence; returns ``[outputs, final_state]``.

    As MLX 0.32.4's CPU computes it (a loop over the time steps built from
    ordinary ops, which MLX also differentiates on the CPU). For each batch
    ``b`` and value head ``h`` the state ``S`` (``[Dv, Dk]``, zeros unless
    ``initial_state`` is given) goes through the steps ``t = 0 .. T-1``::

        S     = gamma[t] * S                  # decay, elementwise
        delta = beta[t] * (v[t] - S @ k[t])   # how far S maps k[t] from v[t]
        S     = S + outer(delta, k[t])        # move S toward v[t] along k[t]
        out[t] = S @ q[t]                     # read the updated state

    ``q`` is used as given (no ``1/sqrt(Dk)`` scaling). When ``Hv > Hk``,
    value head ``h`` reads the key and query head ``h // (Hv // Hk)`` (as
    ``mx.repeat(k, Hv // Hk, axis=2)``). Where ``mask[b, t]`` is False the
    step is skipped: the state stays as it was (not even decayed) and
    ``out[t]`` is 0. Types: ``q`` and ``k`` decide the output dtype (their
    promotion, float32 if it is not floating); ``v``, ``gamma`` and ``beta``
    are first cast to it (a float32 ``v`` with float16 ``q``, ``k`` loses
    its bits), then every step computes in float32 (float64 and complex64
    stay so), the state included, and each output row is cast back. Shapes
    are read from ``q`` (``B``, ``T``, ``Hk``, ``Dk``) and ``v`` (``Hv``,
    ``Dv``); the other inputs broadcast against them as the ops they enter
    do. Values and gradients are MLX's bit for bit, but for the sums over
    ``Dk``: MLX folds them in float32, mlxref's ``sum`` forms a float32 sum
    in double and rounds it once (backend/cpu/reduce.py), so float32 results
    can differ in their last bits.

    Arguments:
    - ``q``, ``k``: queries and keys, ``[B, T, Hk, Dk]``.
    - ``v``: values, ``[B, T, Hv, Dv]``.
    - ``gamma``: the decay of each step and value head, ``[B, T, Hv]``
      (a factor, not its log).
    - ``beta``: the update rate of each step and value head, ``[B, T, Hv]``.
    - ``initial_state``: the state to start from, ``[B, Hv, Dv, Dk]``
      (default None: zeros).
    - ``mask``: a ``[B, T]`` array, cast to bool: False skips the step
      (default None).

    Errors: ``TypeError`` for an argument that is not an array (MLX's
    "incompatible function arguments" message). MLX checks no ranks and fails
    later; mlxref checks them first and names the input: ``IndexError`` for
    a ``q`` or ``v`` with fewer than 4 dimensions or any 0-d input (MLX:
    "SmallVector out of range."), ``ValueError`` for other wrong ranks (MLX:
    "[broadcast_shapes] ..."); a ``mask`` with fewer than 2 dimensions
    raises MLX's IndexError ("[squeeze] Axis 1 is out of bounds for array
    with 1 dimensions."), one with more a ``ValueError`` (MLX broadcasts it
    into outputs of the wrong rank). A ``q`` with 0 heads raises
    ``ValueError`` (MLX dies dividing by zero). Sizes that do not fit raise
    where MLX's ops raise, with their messages: a key size other than the
    query's ("[broadcast_shapes] Shapes (1,1,2,2) and (1,1,1,3) cannot be
    broadcast."), an input with fewer time steps than ``q`` ("[squeeze]
    Cannot squeeze axis 1 with size 0 which is not equal to 1.") or
    ``T = 0`` ("[stack] No arrays provided for stacking").

    >>> k = mx.array([[1.0, 0.0], [0.0, 1.0]]).reshape(1, 2, 1, 2)
    >>> v = mx.array([2.0, 3.0]).reshape(1, 2, 1, 1)
    >>> half = mx.full((1, 2, 1), 0.5)
    >>> out, state = mx.fast.gated_delta_update(k, k, v, half, half)
    >>> out.flatten(), state.flatten()
    (array([1, 1.5], dtype=float32), array([0.5, 1.5], dtype=float32))
    """
    named = {"initial_state": initial_state, "mask": mask}
    if not (all(isinstance(x, array) for x in (q, k, v, gamma, beta))
            and all(x is None or isinstance(x, array) for x in named.values())):
        raise incompatible_arguments(
            _GATED_DELTA_UPDATE, (q, k, v, gamma, beta),
            {key: x for key, x in named.items() if x is not None})
    for label, x, ndim, layout in (("q", q, 4, "[B, T, Hk, Dk]"), ("k", k, 4, "[B, T, Hk, Dk]"),
                                   ("v", v, 4, "[B, T, Hv, Dv]"), ("gamma", gamma, 3, "[B, T, Hv]"),
                                   ("beta", beta, 3, "[B, T, Hv]")):
        _check_gated_delta_rank(label, x, ndim, layout)
    if mask is not None and mask.ndim < 2:
        raise IndexError(f"[squeeze] Axis 1 is out of bounds for array with {mask.ndim} dimensions.")
    if mask is not None and mask.ndim > 2:
        raise ValueError(f"[gated_delta_update] mask must have 2 dimensions [B, T] but has shape "
                         f"{format_shape(mask.shape)}.")
    B, T, Hk, Dk = q.shape
    Hv, Dv = v.shape[2:]
    if Hk == 0:
        raise ValueError(f"[gated_delta_update] q must have at least one head but has shape "
                         f"{format_shape(q.shape)}.")

    dtype = _dt.result_type(q, k)
    if not _dt.issubdtype(dtype, _dt.inexact):
        dtype = _dt.float32
    state_dtype = _dt.promote_types(dtype, _dt.float32)

    def widen(x):
        return ops.astype(x, state_dtype)

    q, k, v, gamma, beta = (ops.astype(x, dtype) for x in (q, k, v, gamma, beta))
    q = ops.repeat(q, Hv // Hk, 2)
    k = ops.repeat(k, Hv // Hk, 2)
    if initial_state is None:
        state = ops.zeros((B, Hv, Dv, Dk), state_dtype)
    else:
        state = widen(initial_state)
    if mask is not None:
        mask = ops.astype(mask, _dt.bool_)

    outputs = []
    for t in range(T):
        k_t = _at_step(k, t)
        decayed = ops.multiply(state, widen(ops.expand_dims(_at_step(gamma, t), (-2, -1))))
        predicted = ops.sum(ops.multiply(decayed, widen(ops.expand_dims(k_t, -2))), -1)
        delta = ops.multiply(ops.subtract(widen(_at_step(v, t)), predicted),
                             widen(ops.expand_dims(_at_step(beta, t), -1)))
        updated = ops.add(decayed, ops.multiply(ops.expand_dims(delta, -1),
                                                widen(ops.expand_dims(k_t, -2))))
        if mask is not None:
            keep = _at_step(mask, t)
            updated = ops.where(ops.expand_dims(keep, (-3, -2, -1)), updated, state)
        state = updated
        out = ops.sum(ops.multiply(state, widen(ops.expand_dims(_at_step(q, t), -2))), -1)
        if mask is not None:
            out = ops.where(ops.expand_dims(keep, (-2, -1)), out, array(0, state_dtype))
        outputs.append(ops.astype(out, dtype))
    return [ops.stack(outputs, 1), state]


def _bind_kernel_arguments(fn, **arguments):
    """MLX's binding's TypeError for an argument of ``fn`` it does not take."""
    for name, value in arguments.items():
        if not _KERNEL_ARGUMENTS[name](value):
            raise TypeError(f"{fn}(): incompatible function arguments: {name} cannot be "
                            f"{value!r}.")


def _no_gpu(fn, **arguments):
    """The error of every call of a kernel written in GPU source, once its
    ``arguments`` bind as MLX's binding binds them (else its TypeError)."""
    _bind_kernel_arguments(fn, **arguments)
    return RuntimeError(f"[{fn}] mx.fast.{fn} needs real MLX's GPU kernels; "
                        "mlxref computes on the CPU in Python and cannot run it.")


def _sequence_of(test):
    return lambda v: isinstance(v, (list, tuple)) and all(test(x) for x in v)


def _int_triple(v):
    return isinstance(v, (list, tuple)) and len(v) == 3 and all(is_c_int(x) for x in v)


# What MLX's bindings of the kernels take for each argument.
_KERNEL_ARGUMENTS = {
    "name": lambda v: isinstance(v, str),
    "input_names": _sequence_of(lambda x: isinstance(x, str)),
    "output_names": _sequence_of(lambda x: isinstance(x, str)),
    "source": lambda v: isinstance(v, str),
    "header": lambda v: isinstance(v, str),
    "ensure_row_contiguous": lambda v: isinstance(v, bool),
    "atomic_outputs": lambda v: isinstance(v, bool),
    "shared_memory": is_c_int,
    "compiled_source": lambda v: isinstance(v, bytes),
    "inputs": _sequence_of(lambda x: x is not None and not isinstance(x, (str, list, tuple))),
    "output_shapes": _sequence_of(_sequence_of(is_c_int)),
    "output_dtypes": _sequence_of(lambda x: isinstance(x, _dt.Dtype)),
    "scalars": _sequence_of(lambda x: True),
    "grid": _int_triple,
    "threadgroup": _int_triple,
    "init_value": lambda v: v is None or is_c_float(v),
    "template": lambda v: v is None or _sequence_of(
        lambda x: isinstance(x, (list, tuple)) and len(x) == 2 and isinstance(x[0], str))(v),
    "verbose": lambda v: isinstance(v, bool),
    "stream": lambda v: v is None or device.is_stream_or_device(v),
    "compile_options": lambda v: True,  # checked by _compile_options, with MLX's messages
}


@shared_doc
def metal_kernel(name, input_names, output_names, source, header="", ensure_row_contiguous=True,
                 atomic_outputs=False, compile_options=None):
    """``mx.fast.metal_kernel``: a custom GPU kernel written in Metal Shading Language, returned as a callable that mlxref can export but not run.

    In MLX the source's body becomes a Metal kernel over the named inputs and
    outputs; calling the kernel with arrays, output shapes and dtypes, a grid
    and a threadgroup runs it on an Apple GPU. mlxref computes on the CPU in
    Python and has no Metal compiler, so it does what MLX's CPU build does:
    the call raises ``RuntimeError`` ("[metal_kernel] No Metal back-end.")
    except while ``mx.export_function`` traces, where it records a
    ``CustomKernel`` node holding the kernel MLX would compile (its name and
    full source, as ``verbose=True`` prints them), so the exported function
    runs on a machine with a GPU. Evaluating that node raises.

    Arguments (MLX's, taken as MLX takes them):
    {kernel_arguments}
    - ``atomic_outputs``: make the outputs atomic (default False).
    - ``compile_options``: None or ``{{"math_mode": "safe" | "relaxed" | "fast"}}``
      (default None: safe).

    The kernel's own arguments, all keyword only: ``inputs`` (arrays or
    scalars, one per input name), ``output_shapes`` and ``output_dtypes`` (one
    per output name), ``grid`` and ``threadgroup`` (3-tuples), ``template``
    (``(name, bool | int | Dtype)`` pairs, default None), ``init_value``
    (default None), ``verbose`` (print the generated source, default False)
    and ``stream`` (the GPU, when exporting).

    Errors: ``ValueError`` for no output names, a bad compile option, a list
    of the wrong length, a template value of another type or, when exporting,
    a stream that is not the GPU's (MLX's messages, e.g. "[metal_kernel]
    Expected `inputs` to have size 1 but got size 2."); ``RuntimeError`` for a
    call outside an export; ``TypeError`` for arguments MLX's binding refuses.

    >>> kernel = mx.fast.metal_kernel(
    ...     name="copy", input_names=["a"], output_names=["out"],
    ...     source="uint i = thread_position_in_grid.x; out[i] = a[i];")
    >>> kernel(inputs=[mx.ones(2)], output_shapes=[(2,)], output_dtypes=[mx.float32],
    ...        grid=(2, 1, 1), threadgroup=(2, 1, 1))
    Traceback (most recent call last):
    RuntimeError: [metal_kernel] No Metal back-end.
    """
    _bind_kernel_arguments("metal_kernel", name=name, input_names=input_names,
                           output_names=output_names, source=source, header=header,
                           ensure_row_contiguous=ensure_row_contiguous,
                           atomic_outputs=atomic_outputs)
    math_mode = _compile_options(compile_options)
    if not output_names:
        raise ValueError("[metal_kernel] Must specify at least one output.")
    return MetalKernel(name, list(input_names), list(output_names), source, header,
                       ensure_row_contiguous, atomic_outputs, math_mode)


_MATH_MODES = ("safe", "relaxed", "fast")  # MLX's MathMode, numbered in this order


def _compile_options(options):
    """The math mode ``compile_options`` asks for, as MLX stores it (0 safe, 1
    relaxed, 2 fast), or MLX's error for another dict or value."""
    if options is None:
        return 0
    if not isinstance(options, dict):
        raise ValueError("[metal_kernel] Expected `compile_options` to be a dict.")
    mode = 0
    for key, value in options.items():
        if key != "math_mode":
            raise ValueError(f"[metal_kernel] Unknown compile option `{key}`.")
        if value not in _MATH_MODES:
            raise ValueError("[metal_kernel] Expected math_mode to be 'safe', 'relaxed', "
                             "or 'fast'.")
        mode = _MATH_MODES.index(value)
    return mode


# The type names MLX's generated Metal source gives each dtype (mlx/backend/common/
# compiled.cpp, get_type_string).
_METAL_TYPES = {
    "float32": "float", "float16": "float16_t", "bfloat16": "bfloat16_t", "float64": "double",
    "complex64": "complex64_t", "bool": "bool", "int8": "int8_t", "int16": "int16_t",
    "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t",
    "uint32": "uint32_t", "uint64": "uint64_t",
}

# The thread attributes a kernel's source may read, with their Metal types, in
# the order the generated signature lists them.
_METAL_ATTRIBUTES = (
    ("dispatch_quadgroups_per_threadgroup", "uint"),
    ("dispatch_simdgroups_per_threadgroup", "uint"),
    ("dispatch_threads_per_threadgroup", "uint3"),
    ("grid_origin", "uint3"), ("grid_size", "uint3"),
    ("quadgroup_index_in_threadgroup", "uint"), ("quadgroups_per_threadgroup", "uint"),
    ("simdgroup_index_in_threadgroup", "uint"), ("simdgroups_per_threadgroup", "uint"),
    ("thread_execution_width", "uint"), ("thread_index_in_quadgroup", "uint"),
    ("thread_index_in_simdgroup", "uint"), ("thread_index_in_threadgroup", "uint"),
    ("thread_position_in_grid", "uint3"), ("thread_position_in_threadgroup", "uint3"),
    ("threadgroup_position_in_grid", "uint3"), ("threadgroups_per_grid", "uint3"),
    ("threads_per_grid", "uint3"), ("threads_per_simdgroup", "uint"),
    ("threads_per_threadgroup", "uint3"),
)

# An input of fewer elements goes to Metal's constant address space.
_MAX_CONSTANT_ARRAY_SIZE = 8


class MetalKernel:
    """What ``metal_kernel`` returns: call it with the kernel's arguments
    (keyword only) to get its outputs, a list of arrays.

    As MLX's (mlx/backend/common/metal_kernel.cpp, and PyCustomKernelFunction in
    python/src/fast.cpp): the inputs become arrays, the template arguments and
    the lengths are checked, then, having no GPU, it raises unless
    ``export_function`` is tracing; there it writes the kernel MLX would
    compile (``kernel_source``) and records it as a ``CustomKernel`` node.
    """

    def __init__(self, name, input_names, output_names, source, header,
                 ensure_row_contiguous, atomic_outputs, math_mode):
        self.name, self.input_names, self.output_names = name, input_names, output_names
        self.source, self.header = source, header
        self.ensure_row_contiguous, self.atomic_outputs = ensure_row_contiguous, atomic_outputs
        self.math_mode = math_mode
        # which of <input>_shape, _strides and _ndim the source reads
        self.shape_infos = [tuple(f"{n}{part}" in source for part in ("_shape", "_strides", "_ndim"))
                            for n in input_names]
        self.attributes = [f"  {kind} {attr} [[{attr}]]"
                           for attr, kind in _METAL_ATTRIBUTES if attr in source]

    def __call__(self, *, inputs, output_shapes, output_dtypes, grid, threadgroup,
                 template=None, init_value=None, verbose=False, stream=None):
        _bind_kernel_arguments("metal_kernel", inputs=inputs, output_shapes=output_shapes,
                               output_dtypes=output_dtypes, grid=grid, threadgroup=threadgroup,
                               template=template, init_value=init_value, verbose=verbose,
                               stream=stream)
        inputs = [to_array(x) for x in inputs]
        template = [(n, _template_value(v)) for n, v in template or ()]
        for label, given, expected in (("inputs", inputs, self.input_names),
                                       ("output_shapes", output_shapes, self.output_names),
                                       ("output_dtypes", output_dtypes, self.output_names)):
            if len(given) != len(expected):
                raise ValueError(f"[metal_kernel] Expected `{label}` to have size "
                                 f"{len(expected)} but got size {len(given)}.\n")
        if not in_export_tracing():
            raise RuntimeError("[metal_kernel] No Metal back-end.")
        if stream is not None and _device_type(stream) is not device.gpu:
            raise ValueError("[metal_kernel] Only supports the GPU.")
        kernel_name, source = self.kernel_source(inputs, output_dtypes, template)
        if verbose:
            print(f"Generated source code for `{self.name}`:\n```\n{source}\n```")
        primitive = CustomKernel(
            kernel_name, source, grid, threadgroup, self.shape_infos, self.ensure_row_contiguous,
            None if init_value is None else float(init_value), (), False, 0, self.math_mode,
            [x.shape for x in inputs], [tuple(s) for s in output_shapes], output_dtypes)
        return make_arrays(primitive, inputs)

    def kernel_source(self, inputs, output_dtypes, template):
        """``(kernel name, Metal source)``: the kernel MLX compiles for these inputs'
        dtypes and sizes, these output dtypes and template arguments."""
        kernel_name = "custom_kernel_" + self.name
        if template:
            values = "<" + ", ".join(_template_text(v) for _, v in template) + ">"
            # "<float, 3>" -> "_float_3": MLX's template hash, its last character dropped
            kernel_name += "_" + values.replace("<", "_").replace(">", "_").replace(", ", "_")[:-1]
        for x in inputs:
            kernel_name += "_" + _METAL_TYPES[x.dtype.name]
            kernel_name += "s" if x.ndim == 0 else "c" if x.size < _MAX_CONSTANT_ARRAY_SIZE else ""
        for dtype in output_dtypes:
            kernel_name += "_" + _METAL_TYPES[dtype.name]
        lines = [self.header]
        if template:
            kinds = {bool: "bool", int: "int"}
            lines.append("template <" + ", ".join(f"{kinds.get(type(v), 'typename')} {n}"
                                                  for n, v in template) + ">\n")
        lines.append(f"[[kernel]] void {kernel_name}(\n")
        index = 0
        for name, x, (shape, strides, ndim) in zip(self.input_names, inputs, self.shape_infos):
            where = "constant" if x.size < _MAX_CONSTANT_ARRAY_SIZE else "device"
            ref = "&" if x.ndim == 0 else "*"
            lines.append(f"  const {where} {_METAL_TYPES[x.dtype.name]}{ref} {name} "
                         f"[[buffer({index})]],\n")
            index += 1
            if x.ndim > 0:
                for wanted, kind, suffix in ((shape, "int*", "_shape"),
                                             (strides, "int64_t*", "_strides"),
                                             (ndim, "int&", "_ndim")):
                    if wanted:
                        lines.append(f"  const constant {kind} {name}{suffix} "
                                     f"[[buffer({index})]],\n")
                        index += 1
        for name, dtype in zip(self.output_names, output_dtypes):
            kind = _METAL_TYPES[dtype.name]
            kind = f"atomic<{kind}>" if self.atomic_outputs else kind
            # MLX closes the list at the output whose buffer index reaches the
            # number of arrays less one; the shape buffers count in that index,
            # so with them an earlier output closes it too (MLX's text, kept).
            last = index >= len(inputs) + len(self.output_names) - 1 and not self.attributes
            lines.append(f"  device {kind}* {name} [[buffer({index})]]"
                         + (") {\n" if last else ",\n"))
            index += 1
        for k, attribute in enumerate(self.attributes):
            lines.append(attribute + (") {\n" if k == len(self.attributes) - 1 else ",\n"))
        lines.append(self.source + "\n}\n")
        if template:
            instance = kernel_name + values
            lines.append(f'\ntemplate [[host_name("{kernel_name}")]] [[kernel]] '
                         f"decltype({instance}) {instance};\n")
        return kernel_name, "".join(lines)


def _template_value(value):
    if isinstance(value, (bool, int, _dt.Dtype)):
        return value
    raise ValueError("[metal_kernel] Invalid template argument. Must be `mlx.core.Dtype`, "
                     "`int` or `bool`.")


def _template_text(value):
    """A template argument as MLX writes it: a bool as 1 or 0, a dtype as its Metal type."""
    if isinstance(value, _dt.Dtype):
        return _METAL_TYPES[value.name]
    return str(int(value))


def _device_type(stream):
    """The device type of a ``stream=`` argument, without making a stream."""
    if isinstance(stream, (device.Stream, device.ThreadLocalStream)):
        return stream.device.type
    return device.Device(stream).type if not isinstance(stream, device.Device) else stream.type


@shared_doc
def cuda_kernel(name, input_names, output_names, source, header="", ensure_row_contiguous=True,
                shared_memory=0):
    """``mx.fast.cuda_kernel``: a custom GPU kernel written in CUDA, returned as a callable; mlxref cannot run it.

    In MLX the source's body becomes a CUDA kernel over the named inputs and
    outputs, run on an NVIDIA GPU when called. mlxref computes on the CPU in
    Python: the call raises a ``RuntimeError`` naming the function, as MLX's
    builds without CUDA do ("[cuda_kernel] No CUDA back-end.").

    Arguments (MLX's, taken as MLX takes them):
    {kernel_arguments}
    - ``shared_memory``: bytes of dynamic shared memory (default 0).

    Errors: ``RuntimeError`` whenever the arguments bind (``TypeError`` when they do
    not, as in MLX).

    >>> mx.fast.cuda_kernel(  # doctest: +IGNORE_EXCEPTION_DETAIL
    ...     name="k", input_names=["a"], output_names=["o"], source="")
    Traceback (most recent call last):
    RuntimeError: [cuda_kernel] mx.fast.cuda_kernel needs real MLX's GPU kernels; mlxref computes on the CPU in Python and cannot run it.
    """
    raise _no_gpu("cuda_kernel", name=name, input_names=input_names, output_names=output_names,
                  source=source, header=header, ensure_row_contiguous=ensure_row_contiguous,
                  shared_memory=shared_memory)


@shared_doc
def precompiled_cuda_kernel(*, name, compiled_source, inputs, output_shapes, output_dtypes,
                            scalars, grid, threadgroup, shared_memory=0, init_value=None,
                            ensure_row_contiguous=False, stream=None):
    """``mx.fast.precompiled_cuda_kernel``: run a compiled CUDA kernel (PTX or cubin bytes) on arrays; mlxref cannot run it.

    In MLX it launches the kernel on an NVIDIA GPU with the inputs, scalars,
    grid and threadgroup given and returns its outputs. mlxref computes on the
    CPU in Python: the call raises a ``RuntimeError`` naming the function, as
    MLX's builds without CUDA do ("[cuda_kernel] No CUDA back-end.").

    Its arguments are MLX's, all keyword only.

    Arguments:
    - ``name``: the kernel's name.
    - ``compiled_source``: the compiled kernel, bytes.
    - ``inputs``: the arrays (or scalars) passed in.
    - ``output_shapes``, ``output_dtypes``: one per output.
    - ``scalars``: extra scalar arguments.
    - ``grid``, ``threadgroup``: the launch sizes, 3-tuples.
    - ``shared_memory``: bytes of dynamic shared memory (default 0).
    - ``init_value``: a value to fill the outputs with first (default None).
    - ``ensure_row_contiguous``: copy inputs to row-major first (default False).

    Errors: ``RuntimeError`` whenever the arguments bind (``TypeError`` when they do
    not, as in MLX).

    >>> mx.fast.precompiled_cuda_kernel(  # doctest: +IGNORE_EXCEPTION_DETAIL
    ...     name="k", compiled_source=b"", inputs=[mx.ones(2)], output_shapes=[(2,)],
    ...     output_dtypes=[mx.float32], scalars=[], grid=(1, 1, 1), threadgroup=(1, 1, 1))
    Traceback (most recent call last):
    RuntimeError: [precompiled_cuda_kernel] mx.fast.precompiled_cuda_kernel needs real MLX's GPU kernels; mlxref computes on the CPU in Python and cannot run it.
    """
    raise _no_gpu("precompiled_cuda_kernel", name=name, compiled_source=compiled_source,
                  inputs=inputs, output_shapes=output_shapes, output_dtypes=output_dtypes,
                  scalars=scalars, grid=grid, threadgroup=threadgroup,
                  shared_memory=shared_memory, init_value=init_value,
                  ensure_row_contiguous=ensure_row_contiguous)

