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

The kernels that run user-written GPU source (``metal_kernel``,
``cuda_kernel``, ``precompiled_cuda_kernel``) and ``gated_delta_update``
raise an error naming the function.
"""

from . import dtypes as _dt
from . import ops
from .array import array
from .printing import format_shape
from .convert import to_array

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


def rms_norm(x, weight, eps, *, stream=None):
    """Root mean square normalization over the last axis (mlx/fast.cpp ``rms_norm``).

    MLX's kernel and its CPU fallback compute in float32 whatever ``x``'s
    dtype: ``x * rsqrt(mean(x**2, -1) + eps)`` with ``x`` cast to float32,
    then the result is cast to the output dtype (``x``'s, promoted with
    ``weight``'s) before the weight multiplies it in that dtype.
    """
    x = to_array(x)
    _check_input("rms_norm", x)
    if weight is not None:
        weight = to_array(weight)
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


def layer_norm(x, weight, bias, eps, *, stream=None):
    """Layer normalization over the last axis (mlx/fast.cpp ``layer_norm``).

    As in MLX, the mean and the variance ``mean((x - mu)**2)`` are computed
    in float32 whatever ``x``'s dtype; the normalized ``x`` is cast to the
    output dtype (``x``'s promoted with ``weight``'s and ``bias``'s) before
    the weight and the bias are applied in that dtype.
    """
    x = to_array(x)
    _check_input("layer_norm", x)
    if weight is not None:
        weight = to_array(weight)
        _check_norm_param("layer_norm", "weight", weight, x)
    if bias is not None:
        bias = to_array(bias)
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


def rope(a, dims, *, traditional, base, scale, offset, freqs=None, stream=None):
    """Rotary positional encoding of the first ``dims`` features (mlx/fast.cpp ``rope``).

    Positions ``(arange(T) + offset) * scale`` and the angles
    ``positions * inv_freqs`` are float32 (``inv_freqs`` is
    ``exp(-i * log(base) / (dims/2))`` or ``1 / freqs``); their cosines and
    sines are cast to ``a``'s dtype and the rotation is done in that dtype.
    ``traditional`` rotates the pairs ``(x[2i], x[2i+1])``, otherwise
    ``(x[i], x[i + dims/2])``. An ``offset`` vector gives one offset per
    example of the batch (axis 0).
    """
    x = to_array(a)
    offset = to_array(offset)
    if freqs is not None:
        freqs = ops.astype(to_array(freqs), _dt.float32)
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


def scaled_dot_product_attention(q, k, v, *, scale, mask=None, sinks=None,
                                 force_fused=False, stream=None):
    """``softmax(scale * q @ k.T + mask) @ v`` per head (mlx/fast.cpp ``scaled_dot_product_attention``).

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
    """
    q, k, v = to_array(q), to_array(k), to_array(v)
    name = "[scaled_dot_product_attention]"
    mask_arr = None
    do_causal = False
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"{name} invalid mask option '{mask}'. Must be 'causal', or an array.")
        do_causal = True
    elif mask is not None:
        mask_arr = to_array(mask)
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
        sinks = to_array(sinks)
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


def cross_entropy(logits, targets, *, stream=None):
    """``logsumexp(logits, -1) - logits[..., targets]`` as float32 (MLX 0.32.4 ``fast.cross_entropy``).

    MLX's GPU kernel accumulates in float32; its CPU fallback, which mlxref
    follows, reduces in the logits' dtype and casts the loss to float32.
    Targets must lie in ``[0, logits.shape[-1])``.
    """
    logits, targets = to_array(logits), to_array(targets)
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


def _no_gpu(fn):
    def unavailable(*args, **kwargs):
        raise RuntimeError(f"[{fn}] mx.fast.{fn} needs real MLX's GPU kernels; "
                           "mlxref computes on the CPU in Python and cannot run it.")
    unavailable.__name__ = unavailable.__qualname__ = fn
    unavailable.__doc__ = f"``mx.fast.{fn}``: raises; it needs real MLX's GPU kernels."
    return unavailable


metal_kernel = _no_gpu("metal_kernel")
cuda_kernel = _no_gpu("cuda_kernel")
precompiled_cuda_kernel = _no_gpu("precompiled_cuda_kernel")
gated_delta_update = _no_gpu("gated_delta_update")
