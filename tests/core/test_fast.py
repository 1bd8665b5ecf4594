"""``mx.fast`` (mlxref/core/fast.py; MLX's mlx/fast.cpp): layer_norm, rms_norm, rope,
scaled_dot_product_attention, cross_entropy and gated_delta_update against real MLX
(values, dtypes, gradients of every array input, vmap, error messages), and the
GPU-only functions' errors.
"""

import random
import re

import pytest

import mlxref.core as mx
import mlxref.core.backend.cpu.reduce as reduce_kernel
from support import assert_same_array, assert_same_as_mlx, needs_mlx, real_mx

pytestmark = needs_mlx


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def data(shape, seed, lo=-2.0, hi=2.0):
    rng = random.Random(seed)
    n = 1
    for d in shape:
        n *= d
    return [rng.uniform(lo, hi) for _ in range(n)], tuple(shape)


def both(shape, seed, dtype="float32", lo=-2.0, hi=2.0):
    """The same values as an mlxref array and a real-MLX array."""
    flat, shape = data(shape, seed, lo, hi)
    ours = mx.reshape(mx.array(flat, getattr(mx, dtype)), shape)
    theirs = real_mx.reshape(real_mx.array(flat, getattr(real_mx, dtype)), shape)
    return ours, theirs


def same(ours, theirs, rtol=1e-5, atol=1e-5):
    assert_same_as_mlx(ours, theirs, rtol=rtol, atol=atol)


def check_grads(f_ours, f_theirs, ours, theirs, rtol=1e-4, atol=1e-5):
    """The gradients of sum(f * c) for a fixed c with respect to every input."""
    argnums = list(range(len(ours)))
    out = f_theirs(*theirs)
    cot_o, cot_t = both(out.shape, 99)

    def lo(*a):
        return mx.sum(f_ours(*a) * cot_o)

    def lt(*a):
        return real_mx.sum(f_theirs(*a) * cot_t)

    go = mx.grad(lo, argnums=argnums)(*ours)
    gt = real_mx.grad(lt, argnums=argnums)(*theirs)
    for a, b in zip(go, gt):
        same(a, b, rtol, atol)


# --- rms_norm and layer_norm ------------------------------------------------------


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 2e-3), ("bfloat16", 2e-2)])
def test_norms_values_and_dtypes(dtype, tol):
    xo, xt = both((2, 3, 8), 1, dtype)
    wo, wt = both((8,), 2, dtype)
    bo, bt = both((8,), 3, dtype)
    same(mx.fast.rms_norm(xo, wo, 1e-5), real_mx.fast.rms_norm(xt, wt, 1e-5), tol, tol)
    same(mx.fast.rms_norm(xo, None, 1e-3), real_mx.fast.rms_norm(xt, None, 1e-3), tol, tol)
    same(mx.fast.layer_norm(xo, wo, bo, 1e-5), real_mx.fast.layer_norm(xt, wt, bt, 1e-5), tol, tol)
    same(mx.fast.layer_norm(xo, None, bo, 1e-5), real_mx.fast.layer_norm(xt, None, bt, 1e-5), tol, tol)
    same(mx.fast.layer_norm(xo, wo, None, 1e-5), real_mx.fast.layer_norm(xt, wt, None, 1e-5), tol, tol)
    same(mx.fast.layer_norm(xo, None, None, 1e-5), real_mx.fast.layer_norm(xt, None, None, 1e-5),
         tol, tol)


def test_norms_promote_with_weight_and_bias_only_with_weight():
    xo, xt = both((2, 4), 4, "float16")
    wo, wt = both((4,), 5)
    same(mx.fast.rms_norm(xo, wo, 1e-5), real_mx.fast.rms_norm(xt, wt, 1e-5), 1e-3, 1e-3)
    same(mx.fast.layer_norm(xo, wo, None, 1e-5), real_mx.fast.layer_norm(xt, wt, None, 1e-5),
         1e-3, 1e-3)
    # a float32 bias without a weight does not promote the float16 result
    out = mx.fast.layer_norm(xo, None, wo, 1e-5)
    assert out.dtype is mx.float16
    same(out, real_mx.fast.layer_norm(xt, None, wt, 1e-5), 1e-2, 1e-2)
    # integer inputs with a float weight are fine; their result is the weight's
    io = mx.array([[1, 2, 3, 4]], mx.int32)
    it = real_mx.array([[1, 2, 3, 4]], real_mx.int32)
    same(mx.fast.rms_norm(io, wo, 1e-5), real_mx.fast.rms_norm(it, wt, 1e-5))


def test_norm_gradients():
    xo, xt = both((3, 6), 6)
    wo, wt = both((6,), 7)
    bo, bt = both((6,), 8)
    check_grads(lambda x, w: mx.fast.rms_norm(x, w, 1e-5),
                lambda x, w: real_mx.fast.rms_norm(x, w, 1e-5), [xo, wo], [xt, wt])
    check_grads(lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5),
                lambda x, w, b: real_mx.fast.layer_norm(x, w, b, 1e-5),
                [xo, wo, bo], [xt, wt, bt])
    check_grads(lambda x: mx.fast.layer_norm(x, None, None, 1e-5),
                lambda x: real_mx.fast.layer_norm(x, None, None, 1e-5), [xo], [xt])


def test_norm_jvp_and_vmap():
    xo, xt = both((4, 5), 9)
    wo, wt = both((5,), 10)
    to, tt = both((4, 5), 11)
    (_, jo), (_, jt) = (
        mx.jvp(lambda x: mx.fast.rms_norm(x, wo, 1e-5), [xo], [to]),
        real_mx.jvp(lambda x: real_mx.fast.rms_norm(x, wt, 1e-5), [xt], [tt]),
    )
    same(jo[0], jt[0], 1e-4, 1e-5)
    # vmap over axis 1 of x, with the weight batched too
    wbo, wbt = both((3, 5), 12)
    xbo, xbt = both((4, 3, 5), 13)
    same(mx.vmap(lambda x, w: mx.fast.layer_norm(x, w, None, 1e-5), in_axes=(1, 0))(xbo, wbo),
         real_mx.vmap(lambda x, w: real_mx.fast.layer_norm(x, w, None, 1e-5), in_axes=(1, 0))(xbt, wbt))
    same(mx.vmap(lambda x: mx.fast.rms_norm(x, None, 1e-5), in_axes=1)(xbo),
         real_mx.vmap(lambda x: real_mx.fast.rms_norm(x, None, 1e-5), in_axes=1)(xbt))


def test_norm_errors():
    x = mx.ones((2, 4))
    with raises(ValueError, "[rms_norm] Input must have at least 1 dimension but got input with "
                "0 dimensions."):
        mx.fast.rms_norm(mx.array(1.0), None, 1e-5)
    with raises(ValueError, "[rms_norm] (*weight) must have 1 dimension but has 2 dimensions."):
        mx.fast.rms_norm(x, mx.ones((2, 4)), 1e-5)
    with raises(ValueError, "[rms_norm] (*weight) must have the same size as the last dimension "
                "of x but has 5 elements."):
        mx.fast.rms_norm(x, mx.ones((5,)), 1e-5)
    with raises(ValueError, "[rms_norm] Received unsupported type int32."):
        mx.fast.rms_norm(mx.ones((2, 3), mx.int32), None, 1e-5)
    with raises(ValueError, "[layer_norm] bias must have 1 dimension but has 2 dimensions."):
        mx.fast.layer_norm(x, None, mx.ones((2, 4)), 1e-5)
    with raises(ValueError, "[layer_norm] weight must have the same size as the last dimension "
                "of x but has 5 elements."):
        mx.fast.layer_norm(x, mx.ones((5,)), None, 1e-5)
    with raises(ValueError, "[layer_norm] Received unsupported type int32."):
        mx.fast.layer_norm(mx.ones((4,), mx.int32), None, None, 1e-5)


# --- rope --------------------------------------------------------------------------


ROPE_CASES = [
    # shape, dims, traditional, base, scale, offset
    ((2, 3, 5, 8), 8, False, 10000.0, 1.0, 0),
    ((2, 3, 5, 8), 8, True, 10000.0, 1.0, 3),
    ((2, 5, 8), 6, False, 500.0, 0.5, 2),
    ((2, 5, 8), 4, True, 10000.0, 2.0, 1),
    ((2, 2, 2, 4, 6), 6, False, 10000.0, 1.0, 7),
]


@pytest.mark.parametrize("shape,dims,trad,base,scale,offset", ROPE_CASES)
def test_rope_values(shape, dims, trad, base, scale, offset):
    xo, xt = both(shape, 20)
    same(mx.fast.rope(xo, dims, traditional=trad, base=base, scale=scale, offset=offset),
         real_mx.fast.rope(xt, dims, traditional=trad, base=base, scale=scale, offset=offset),
         1e-5, 1e-5)


def test_rope_offsets_as_arrays_freqs_and_half_precision():
    xo, xt = both((2, 3, 4, 8), 21)
    kw = dict(traditional=False, base=10000.0, scale=1.0)
    same(mx.fast.rope(xo, 8, offset=mx.array([1, 5]), **kw),
         real_mx.fast.rope(xt, 8, offset=real_mx.array([1, 5]), **kw))
    same(mx.fast.rope(xo, 8, offset=mx.array(4, mx.uint8), **kw),
         real_mx.fast.rope(xt, 8, offset=real_mx.array(4, real_mx.uint8), **kw))
    fo, ft = both((3,), 22, lo=0.5, hi=4.0)
    same(mx.fast.rope(xo, 6, traditional=True, base=None, scale=1.5, offset=2, freqs=fo),
         real_mx.fast.rope(xt, 6, traditional=True, base=None, scale=1.5, offset=2, freqs=ft))
    ho, ht = both((1, 2, 6, 8), 23, "float16")
    out = mx.fast.rope(ho, 8, offset=3, **kw)
    assert out.dtype is mx.float16
    same(out, real_mx.fast.rope(ht, 8, offset=3, **kw), 2e-3, 2e-3)


def test_rope_gradient_jvp_and_vmap():
    xo, xt = both((2, 2, 3, 6), 24)
    fo, ft = both((2,), 25, lo=0.5, hi=3.0)
    check_grads(lambda x: mx.fast.rope(x, 6, traditional=True, base=10000.0, scale=1.0, offset=2),
                lambda x: real_mx.fast.rope(x, 6, traditional=True, base=10000.0, scale=1.0,
                                            offset=2), [xo], [xt])
    # the frequencies are differentiable too in MLX's CPU fallback
    check_grads(lambda x, f: mx.fast.rope(x, 4, traditional=False, base=None, scale=1.0,
                                          offset=1, freqs=f),
                lambda x, f: real_mx.fast.rope(x, 4, traditional=False, base=None, scale=1.0,
                                               offset=1, freqs=f), [xo, fo], [xt, ft])
    to, tt = both((2, 2, 3, 6), 26)
    _, jo = mx.jvp(lambda x: mx.fast.rope(x, 6, traditional=False, base=100.0, scale=1.0,
                                          offset=0), [xo], [to])
    _, jt = real_mx.jvp(lambda x: real_mx.fast.rope(x, 6, traditional=False, base=100.0,
                                                    scale=1.0, offset=0), [xt], [tt])
    same(jo[0], jt[0])
    same(mx.vmap(lambda x: mx.fast.rope(x, 6, traditional=False, base=100.0, scale=1.0,
                                        offset=1), in_axes=3)(mx.moveaxis(xo, 0, 3)),
         real_mx.vmap(lambda x: real_mx.fast.rope(x, 6, traditional=False, base=100.0, scale=1.0,
                                                  offset=1), in_axes=3)(real_mx.moveaxis(xt, 0, 3)))


def test_rope_errors():
    x = mx.ones((2, 3, 4))
    kw = dict(traditional=False, base=10000.0, scale=1.0)
    cases = [
        (lambda: mx.fast.rope(mx.ones((2, 4)), 4, offset=0, **kw),
         "[rope] Input must have at least 3 dimensions but got input with 2 dimensions."),
        (lambda: mx.fast.rope(mx.ones((2, 3, 4), mx.int32), 4, offset=0, **kw),
         "[rope] Input must be a floating type but got int32."),
        (lambda: mx.fast.rope(x, 4, offset=mx.zeros((2, 2), mx.int32), **kw),
         "[rope] offset must have at most one dimension but has shape (2,2)."),
        (lambda: mx.fast.rope(x, 4, offset=mx.zeros((3,), mx.int32), **kw),
         "[rope] offset must be a scalar or vector with 2 elements but has shape (3)."),
        (lambda: mx.fast.rope(x, 4, offset=1.5, **kw),
         "[rope] offset must be an integer but got type float32."),
        (lambda: mx.fast.rope(x, 0, offset=0, **kw), "[rope] dims must be positive but got 0."),
        (lambda: mx.fast.rope(x, 3, offset=0, **kw), "[rope] dims must be even but got 3."),
        (lambda: mx.fast.rope(x, 6, offset=0, **kw),
         "[rope] dims must not exceed the input's last dimension (4) but got 6."),
        (lambda: mx.fast.rope(x, 4, traditional=False, base=None, scale=1.0, offset=0,
                              freqs=mx.ones((3,))),
         "[rope] freqs must be one dimensional with size 2 but got shape (3)."),
        (lambda: mx.fast.rope(x, 4, offset=0, freqs=mx.ones((2,)), **kw),
         "[rope] Only one of base or freqs can have a value."),
        (lambda: mx.fast.rope(x, 4, traditional=False, base=None, scale=1.0, offset=0),
         "[rope] Neither base nor freqs has a value."),
    ]
    for call, msg in cases:
        with raises(ValueError, msg):
            call()


# --- scaled_dot_product_attention ----------------------------------------------------


def sdpa_inputs(nq, nkv, tq, tkv, d=4, dv=3, dtype="float32", seed=30):
    qo, qt = both((2, nq, tq, d), seed, dtype)
    ko, kt = both((2, nkv, tkv, d), seed + 1, dtype)
    vo, vt = both((2, nkv, tkv, dv), seed + 2, dtype)
    return (qo, ko, vo), (qt, kt, vt)


@pytest.mark.parametrize("nq,nkv,tq,tkv", [(2, 2, 3, 5), (4, 2, 3, 3), (4, 1, 1, 4), (3, 3, 4, 2)])
@pytest.mark.parametrize("mask", [None, "causal"])
def test_sdpa_values_gqa_and_causal(nq, nkv, tq, tkv, mask):
    ours, theirs = sdpa_inputs(nq, nkv, tq, tkv)
    same(mx.fast.scaled_dot_product_attention(*ours, scale=0.7, mask=mask),
         real_mx.fast.scaled_dot_product_attention(*theirs, scale=0.7, mask=mask))


def test_sdpa_array_masks_sinks_and_half_precision():
    ours, theirs = sdpa_inputs(4, 2, 3, 5)
    flat, _ = data((3, 5), 40)
    bools = [v > -0.5 for v in flat]
    bo = mx.reshape(mx.array(bools), (3, 5))
    bt = real_mx.reshape(real_mx.array(bools), (3, 5))
    same(mx.fast.scaled_dot_product_attention(*ours, scale=0.5, mask=bo),
         real_mx.fast.scaled_dot_product_attention(*theirs, scale=0.5, mask=bt))
    # an additive mask with a head axis, and one broadcast over the heads
    for shape in [(4, 3, 5), (2, 1, 3, 5)]:
        ao, at = both(shape, 41)
        same(mx.fast.scaled_dot_product_attention(*ours, scale=0.5, mask=ao),
             real_mx.fast.scaled_dot_product_attention(*theirs, scale=0.5, mask=at))
    so, st = both((4,), 42)
    same(mx.fast.scaled_dot_product_attention(*ours, scale=0.5, mask="causal", sinks=so),
         real_mx.fast.scaled_dot_product_attention(*theirs, scale=0.5, mask="causal", sinks=st))
    ours, theirs = sdpa_inputs(2, 2, 3, 4, dtype="float16")
    out = mx.fast.scaled_dot_product_attention(*ours, scale=0.5)
    assert out.dtype is mx.float16
    same(out, real_mx.fast.scaled_dot_product_attention(*theirs, scale=0.5), 2e-3, 2e-3)


def test_sdpa_gradients_of_q_k_v_mask_and_sinks():
    ours, theirs = sdpa_inputs(4, 2, 3, 4, d=3, dv=2)
    ao, at = both((4, 3, 4), 43)
    so, st = both((4,), 44)
    check_grads(lambda q, k, v, m, s: mx.fast.scaled_dot_product_attention(
                    q, k, v, scale=0.6, mask=m, sinks=s),
                lambda q, k, v, m, s: real_mx.fast.scaled_dot_product_attention(
                    q, k, v, scale=0.6, mask=m, sinks=s),
                [*ours, ao, so], [*theirs, at, st])
    check_grads(lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0,
                                                                     mask="causal"),
                lambda q, k, v: real_mx.fast.scaled_dot_product_attention(q, k, v, scale=1.0,
                                                                          mask="causal"),
                list(ours), list(theirs))


def test_sdpa_vmap():
    ours, theirs = sdpa_inputs(2, 1, 3, 4)
    f_o = mx.vmap(lambda q, k, v: mx.fast.scaled_dot_product_attention(q, k, v, scale=0.5,
                                                                       mask="causal"),
                  in_axes=(1, None, None))
    f_t = real_mx.vmap(lambda q, k, v: real_mx.fast.scaled_dot_product_attention(
        q, k, v, scale=0.5, mask="causal"), in_axes=(1, None, None))
    same(f_o(mx.expand_dims(ours[0], 1), *ours[1:]),
         f_t(real_mx.expand_dims(theirs[0], 1), *theirs[1:]))


def test_sdpa_errors():
    q, k = mx.ones((1, 4, 3, 8)), mx.ones((1, 2, 5, 8))
    S = mx.fast.scaled_dot_product_attention
    name = "[scaled_dot_product_attention] "
    cases = [
        (lambda: S(q[0], k, k, scale=1.0), "input with shape (4,3,8) expected to be rank 4"),
        (lambda: S(q, k, k, scale=1.0, mask="foo"),
         "invalid mask option 'foo'. Must be 'causal', or an array."),
        (lambda: S(q, k, mx.ones((1, 3, 5, 8)), scale=1.0),
         "keys, values expected to have matching n_kv_heads; found keys with n_heads 2 for "
         "values with n_heads 3."),
        (lambda: S(q, mx.ones((1, 3, 5, 8)), mx.ones((1, 3, 5, 8)), scale=1.0),
         "n_heads must be a multiple of n_kv_heads, found n_heads 4 for n_kv_heads 3."),
        (lambda: S(q, mx.ones((2, 2, 5, 8)), mx.ones((2, 2, 5, 8)), scale=1.0),
         "mismatching batch dimension for input with shape (2,2,5,8)."),
        (lambda: S(q, mx.ones((1, 2, 5, 7)), k, scale=1.0),
         "query, keys expected to have matching last dimension; found query shape (1,4,3,8) "
         "for keys shape (1,2,5,7)."),
        (lambda: S(mx.ones((1, 1, 1, 1), mx.int32), mx.ones((1, 1, 1, 1), mx.int32),
                   mx.ones((1, 1, 1, 1), mx.int32), scale=1.0), "Received unsupported type int32."),
        (lambda: S(q, k, k, scale=1.0, mask=mx.ones((1, 1, 1, 1, 5))),
         "the mask with shape (1,1,1,1,5) expected to have at most rank 4."),
        (lambda: S(q, k, k, scale=1.0, mask=mx.ones((3, 5), mx.float64)),
         "Mask type must promote to output type float32."),
        (lambda: S(q, k, k, scale=1.0, sinks=mx.ones((2,))), "Received invalid shape for sinks (2)."),
        (lambda: S(q, k, k, scale=1.0, sinks=mx.ones((4,), mx.float64)),
         "Type of sinks must promote to output type float32."),
        (lambda: S(q, k, k, scale=1.0, force_fused=True),
         "force_fused=True but no fused kernel is available in CPU backend."),
    ]
    for call, msg in cases:
        with raises(ValueError, name + msg):
            call()
    with raises(ValueError, "[broadcast_shapes] Shapes (3,4) and (1,4,3,5) cannot be broadcast."):
        S(q, k, k, scale=1.0, mask=mx.ones((3, 4)))


# --- cross_entropy -------------------------------------------------------------------


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 5e-3), ("bfloat16", 3e-2)])
def test_cross_entropy_values_and_gradient(dtype, tol):
    lo, lt = both((3, 2, 6), 50, dtype, -4.0, 4.0)
    targets = [[0, 5], [3, 2], [1, 4]]
    out = mx.fast.cross_entropy(lo, mx.array(targets))
    assert out.dtype is mx.float32
    same(out, real_mx.fast.cross_entropy(lt, real_mx.array(targets)), tol, tol)
    if dtype == "float32":
        check_grads(lambda x: mx.fast.cross_entropy(x, mx.array(targets)),
                    lambda x: real_mx.fast.cross_entropy(x, real_mx.array(targets)), [lo], [lt])
        same(mx.vmap(lambda x: mx.fast.cross_entropy(x, mx.array([0, 5])))(lo),
             real_mx.vmap(lambda x: real_mx.fast.cross_entropy(x, real_mx.array([0, 5])))(lt))


def test_cross_entropy_errors():
    C = mx.fast.cross_entropy
    with raises(ValueError, "[cross_entropy] targets shape (3) does not match logits shape (2,5) "
                "with the last axis removed."):
        C(mx.ones((2, 5)), mx.array([1, 2, 3]))
    with raises(ValueError, "[cross_entropy] targets must be integer class indices but got float32."):
        C(mx.ones((2, 5)), mx.array([1.0, 2.0]))
    with raises(ValueError, "[cross_entropy] Received unsupported logits type int32."):
        C(mx.ones((2, 5), mx.int32), mx.array([1, 2]))
    with raises(ValueError, "[cross_entropy] logits must have at least 1 dimension but got input "
                "with 0 dimensions."):
        C(mx.array(1.0), mx.array(1))
    # MLX reads an out-of-range class as a logit of 0; mlxref says which index is wrong
    with raises(IndexError, "Index 7 is out of bounds for axis 1 with size 5"):
        C(mx.ones((2, 5)), mx.array([1, 7])).tolist()


# --- gated_delta_update ----------------------------------------------------------------


def gdu_inputs(B, T, Hk, Hv, Dk, Dv, dtype="float32", seed=60, state=False, mask=False):
    """q, k, v, gamma, beta (and an initial state, a mask) for mlxref and for MLX."""
    shapes = [(B, T, Hk, Dk), (B, T, Hk, Dk), (B, T, Hv, Dv), (B, T, Hv), (B, T, Hv)]
    ranges = [(-1.0, 1.0), (-0.6, 0.6), (-2.0, 2.0), (0.5, 1.0), (0.0, 1.0)]
    pairs = [both(sh, seed + i, dtype, lo, hi) for i, (sh, (lo, hi)) in enumerate(zip(shapes, ranges))]
    ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    kw_ours, kw_theirs = {}, {}
    if state:
        kw_ours["initial_state"], kw_theirs["initial_state"] = both((B, Hv, Dv, Dk), seed + 9)
    if mask:
        keep = [[(b + 2 * t) % 3 != 1 for t in range(T)] for b in range(B)]
        kw_ours["mask"], kw_theirs["mask"] = mx.array(keep), real_mx.array(keep)
    return ours, theirs, kw_ours, kw_theirs


GDU_SHAPES = [(1, 1, 1, 1, 2, 3), (2, 3, 1, 1, 3, 2), (1, 4, 1, 2, 2, 2), (2, 3, 2, 4, 3, 1)]


@pytest.mark.parametrize("B,T,Hk,Hv,Dk,Dv", GDU_SHAPES)
@pytest.mark.parametrize("state,mask", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float16", 2e-3)])
def test_gated_delta_update_values(B, T, Hk, Hv, Dk, Dv, state, mask, dtype, tol):
    ours, theirs, kw_o, kw_t = gdu_inputs(B, T, Hk, Hv, Dk, Dv, dtype, state=state, mask=mask)
    got = mx.fast.gated_delta_update(*ours, **kw_o)
    want = real_mx.fast.gated_delta_update(*theirs, **kw_t)
    assert type(got) is type(want) is list and len(got) == len(want) == 2
    for o, t in zip(got, want):
        same(o, t, tol, tol)


def test_gated_delta_update_is_mlx_bit_for_bit_when_sums_fold_in_float32(monkeypatch):
    # MLX folds each float32 sum in float32; mlxref usually forms it in double
    # (backend/cpu/reduce.py). Folding as MLX does, every value and gradient
    # must be MLX's exactly: the same ops, in the same order and dtypes.
    monkeypatch.setattr(reduce_kernel, "in_double", lambda f: False)
    for i, (B, T, Hk, Hv, Dk, Dv) in enumerate(GDU_SHAPES):
        for dtype in ("float32", "float16", "bfloat16"):
            ours, theirs, kw_o, kw_t = gdu_inputs(B, T, Hk, Hv, Dk + 3, Dv, dtype, seed=70 + i,
                                                  state=i % 2 == 0, mask=i > 1)
            assert_same_array(mx.fast.gated_delta_update(*ours, **kw_o),
                              real_mx.fast.gated_delta_update(*theirs, **kw_t))
            cot_o, cot_t = both((B * T * Hv * Dv + B * Hv * Dv * (Dk + 3),), 79)

            def loss(lib, cot, kw):
                def f(*a):
                    out, final = lib.fast.gated_delta_update(*a, **kw)
                    flat = lib.concatenate([out.flatten().astype(lib.float32), final.flatten()])
                    return lib.sum(flat * cot)
                return f

            argnums = [0, 1, 2, 3, 4]
            assert_same_array(mx.grad(loss(mx, cot_o, kw_o), argnums=argnums)(*ours),
                              real_mx.grad(loss(real_mx, cot_t, kw_t), argnums=argnums)(*theirs))


def gdu_flat(lib, **kw):
    """gated_delta_update as one array (outputs, then the final state), for check_grads."""
    def f(*a):
        *inputs, state = a
        out, final = lib.fast.gated_delta_update(*inputs, initial_state=state, **kw)
        return lib.concatenate([out.flatten(), final.flatten()])
    return f


@pytest.mark.parametrize("Hk,Hv,mask", [(1, 1, False), (1, 2, True), (2, 2, True)])
def test_gated_delta_update_gradients_of_every_input(Hk, Hv, mask):
    ours, theirs, kw_o, kw_t = gdu_inputs(2, 3, Hk, Hv, 3, 2, state=True, mask=mask)
    check_grads(gdu_flat(mx, **{k: v for k, v in kw_o.items() if k == "mask"}),
                gdu_flat(real_mx, **{k: v for k, v in kw_t.items() if k == "mask"}),
                ours + [kw_o["initial_state"]], theirs + [kw_t["initial_state"]])


def test_gated_delta_update_vmap_and_jvp():
    ours, theirs, _, _ = gdu_inputs(3, 2, 1, 2, 2, 2)
    # a batch of 3 problems, each with B = 1; only q and v mapped
    f_o = mx.vmap(lambda q, k, v, g, b: mx.fast.gated_delta_update(q[None], k, v[None], g, b),
                  in_axes=(0, None, 0, None, None))
    f_t = real_mx.vmap(lambda q, k, v, g, b: real_mx.fast.gated_delta_update(
        q[None], k, v[None], g, b), in_axes=(0, None, 0, None, None))
    sub_o = [ours[0], ours[1][:1], ours[2], ours[3][:1], ours[4][:1]]
    sub_t = [theirs[0], theirs[1][:1], theirs[2], theirs[3][:1], theirs[4][:1]]
    for o, t in zip(f_o(*sub_o), f_t(*sub_t)):
        same(o, t)
    tangents_o, tangents_t = zip(*[both(x.shape, 90 + i) for i, x in enumerate(ours)])
    _, jvp_o = mx.jvp(lambda *a: mx.fast.gated_delta_update(*a), ours, list(tangents_o))
    _, jvp_t = real_mx.jvp(lambda *a: real_mx.fast.gated_delta_update(*a), theirs, list(tangents_t))
    for o, t in zip(jvp_o, jvp_t):
        same(o, t, 1e-4, 1e-5)


@pytest.mark.parametrize("dtypes,state_dtype", [
    # q and k decide the dtype: v and beta are cast down to it
    (("float16", "float16", "float32", "float16", "float32"), None),
    (("float32", "float16", "float16", "float16", "float16"), "float16"),
    (("int32", "int32", "int32", "int32", "int32"), None),           # not floating: float32
    (("bfloat16", "float16", "bfloat16", "bfloat16", "bfloat16"), None),
    (("float64", "float64", "float64", "float64", "float64"), "float16"),  # state stays float64
    (("bool_", "bool_", "float16", "float16", "float16"), "float64"),
])
def test_gated_delta_update_dtypes(dtypes, state_dtype, monkeypatch):
    # exact, with the sums folded as MLX folds them (see the bit-for-bit test)
    monkeypatch.setattr(reduce_kernel, "in_double", lambda f: False)
    shapes = [(1, 2, 1, 3), (1, 2, 1, 3), (1, 2, 2, 2), (1, 2, 2), (1, 2, 2)]
    ours, theirs = [], []
    for i, (sh, dt) in enumerate(zip(shapes, dtypes)):
        o, t = both(sh, 100 + i, "float32", 0.1, 0.9)
        ours.append(o.astype(getattr(mx, dt)))
        theirs.append(t.astype(getattr(real_mx, dt)))
    kw_o, kw_t = {}, {}
    if state_dtype:
        so, st = both((1, 2, 2, 3), 109)
        kw_o["initial_state"] = so.astype(getattr(mx, state_dtype))
        kw_t["initial_state"] = st.astype(getattr(real_mx, state_dtype))
    assert_same_array(mx.fast.gated_delta_update(*ours, stream=mx.cpu, **kw_o),
                      real_mx.fast.gated_delta_update(*theirs, stream=real_mx.cpu, **kw_t))


def gdu_error(lib, shapes, **kw):
    """The exception gated_delta_update raises on arrays of ``shapes`` (kw: name -> shape)."""
    arrays = [lib.ones(sh) for sh in shapes]
    extra = {name: lib.ones(sh, dtype=lib.bool_ if name == "mask" else lib.float32)
             for name, sh in kw.items()}
    with pytest.raises(Exception) as info:
        lib.eval(lib.fast.gated_delta_update(*arrays, **extra))
    return type(info.value), str(info.value)


def test_gated_delta_update_errors_as_mlx_raises_them():
    base = [(2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 4, 5), (2, 3, 4), (2, 3, 4)]

    def changed(i, axis, size):
        shapes = list(base)
        shape = list(shapes[i])
        shape[axis] = size
        shapes[i] = tuple(shape)
        return shapes

    cases = [(changed(1, 3, 3), {}),     # the keys' size is not the queries'
             (changed(0, 3, 7), {}),
             (changed(2, 2, 3), {}),     # value heads that the state's heads do not match
             (changed(2, 0, 7), {}),     # a batch that does not broadcast
             (changed(3, 2, 7), {}),
             (changed(4, 0, 3), {}),
             (changed(2, 1, 1), {}),     # fewer steps than q
             (changed(3, 1, 2), {}),
             ([(2, 0, 2, 4), (2, 0, 2, 4), (2, 0, 4, 5), (2, 0, 4), (2, 0, 4)], {}),
             (base, {"initial_state": (2, 4, 4, 5)}),  # the state is [B, Hv, Dv, Dk]
             (base, {"mask": (3, 3)}),
             (base, {"mask": (2, 1)}),
             (base, {"mask": (3,)})]
    for shapes, kw in cases:
        assert gdu_error(mx, shapes, **kw) == gdu_error(real_mx, shapes, **kw), (shapes, kw)
    q = mx.ones((1, 1, 1, 2))
    q_t = real_mx.ones((1, 1, 1, 2))
    with pytest.raises(TypeError) as ours:
        mx.fast.gated_delta_update(q.tolist(), q, q, mx.ones((1, 1, 1)), mx.ones((1, 1, 1)),
                                   mask=[[True]])
    with pytest.raises(TypeError) as theirs:
        real_mx.fast.gated_delta_update(q_t.tolist(), q_t, q_t, real_mx.ones((1, 1, 1)),
                                        real_mx.ones((1, 1, 1)), mask=[[True]])
    assert str(ours.value) == str(theirs.value)


def test_gated_delta_update_checks_ranks_that_mlx_does_not():
    # MLX reads past a shape ("SmallVector out of range.") or fails in a later
    # broadcast; mlxref raises the same type and names the input.
    base = [(2, 3, 2, 4), (2, 3, 2, 4), (2, 3, 4, 5), (2, 3, 4), (2, 3, 4)]
    name = "[gated_delta_update] "
    cases = [(0, (3, 2, 4), IndexError,
              "q must have 4 dimensions [B, T, Hk, Dk] but has shape (3,2,4)."),
             (2, (), IndexError, "v must have 4 dimensions [B, T, Hv, Dv] but has shape ()."),
             (1, (2, 3, 2, 4, 1), ValueError,
              "k must have 4 dimensions [B, T, Hk, Dk] but has shape (2,3,2,4,1)."),
             (3, (2, 3), ValueError,
              "gamma must have 3 dimensions [B, T, Hv] but has shape (2,3)."),
             (4, (), IndexError, "beta must have 3 dimensions [B, T, Hv] but has shape ().")]
    for i, shape, exc, msg in cases:
        shapes = list(base)
        shapes[i] = shape
        with raises(exc, name + msg):
            mx.fast.gated_delta_update(*[mx.ones(sh) for sh in shapes])
        with pytest.raises(exc):
            real_mx.eval(real_mx.fast.gated_delta_update(*[real_mx.ones(sh) for sh in shapes]))
    arrays = [mx.ones(sh) for sh in base]
    with raises(ValueError, name + "mask must have 2 dimensions [B, T] but has shape (2,3,4)."):
        mx.fast.gated_delta_update(*arrays, mask=mx.ones((2, 3, 4), mx.bool_))
    with pytest.raises(ValueError):
        real_mx.eval(real_mx.fast.gated_delta_update(*[real_mx.ones(sh) for sh in base],
                                                     mask=real_mx.ones((2, 3, 4), real_mx.bool_)))
    # MLX divides the value heads by q's heads: with none it dies of SIGFPE
    with raises(ValueError, name + "q must have at least one head but has shape (2,3,0,4)."):
        mx.fast.gated_delta_update(mx.ones((2, 3, 0, 4)), *arrays[1:])


def test_gpu_only_functions_name_themselves():
    # (metal_kernel returns a kernel, as MLX's: tests/core/test_metal_kernel.py)
    kernel = dict(name="k", input_names=["a"], output_names=["b"], source="b[0] = a[0];")
    compiled = dict(name="k", compiled_source=b"", inputs=[mx.ones(1)], output_shapes=[(1,)],
                    output_dtypes=[mx.float32], scalars=[], grid=(1, 1, 1),
                    threadgroup=(1, 1, 1))
    for name, arguments in [("cuda_kernel", kernel), ("precompiled_cuda_kernel", compiled)]:
        assert hasattr(real_mx.fast, name)
        with raises(RuntimeError, f"mx.fast.{name} needs real MLX's GPU kernels"):
            getattr(mx.fast, name)(**arguments)
    ours = {n for n in dir(mx.fast) if not n.startswith("_")}
    theirs = {n for n in dir(real_mx.fast) if not n.startswith("_")}
    assert theirs <= ours
