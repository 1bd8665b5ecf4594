"""Convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d, conv_general) and the
Convolution primitive's rules, with real MLX as the oracle.

Each case runs on both libraries: the same shape, dtype and values (to a
float32 tolerance), or the same error type and message. Gradients are taken
for the input and the weight; vmap batches the input, the weight or both.
Where MLX has no rule (jvp) or a wrong one, the expected values still come
from MLX, computed another way.
"""

import pytest
from support import assert_same_as_mlx, both, needs_mlx, real_mx

import mlxref.core as mx


def data(m, shape, seed=0.0):
    """Deterministic, irregular values of ``shape`` (the same in both libraries)."""
    n = 1
    for d in shape:
        n *= d
    return m.sin(m.arange(n, dtype=m.float32) * 0.77 + seed).reshape(shape)


def compare(name, cases):
    result = both(cases[name])
    if result is None:
        return
    ours, theirs = result
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same_as_mlx(o, t, rtol=1e-5, atol=1e-5)
    else:
        assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5)


# name: (op as f(m, x, w), input shape, weight shape)
CONVS = {
    "1d": (lambda m, x, w: m.conv1d(x, w), (2, 6, 3), (4, 3, 3)),
    "1d_opts": (lambda m, x, w: m.conv1d(x, w, 2, 1, 2), (2, 9, 4), (3, 3, 4)),
    "1d_groups": (lambda m, x, w: m.conv1d(x, w, 1, 2, 1, 2), (2, 7, 4), (6, 3, 2)),
    "1d_depthwise": (lambda m, x, w: m.conv1d(x, w, groups=3), (1, 5, 3), (3, 2, 1)),
    "1d_bigpad": (lambda m, x, w: m.conv1d(x, w, 2, 4), (1, 4, 2), (2, 2, 2)),
    "2d": (lambda m, x, w: m.conv2d(x, w), (1, 4, 5, 2), (3, 2, 3, 2)),
    "2d_opts": (lambda m, x, w: m.conv2d(x, w, (2, 1), (1, 2), (1, 2)), (1, 6, 7, 3),
                (2, 3, 2, 3)),
    "2d_groups": (lambda m, x, w: m.conv2d(x, w, 1, 1, 1, 3), (1, 5, 5, 3), (3, 2, 2, 1)),
    "3d": (lambda m, x, w: m.conv3d(x, w, 1, 1, 1), (1, 4, 3, 4, 2), (2, 2, 2, 2, 2)),
    "3d_stride": (lambda m, x, w: m.conv3d(x, w, (2, 1, 2), (0, 1, 1), (1, 2, 1)),
                  (2, 5, 3, 4, 1), (2, 2, 2, 2, 1)),
    "general": (lambda m, x, w: m.conv_general(x, w, [2, 1], ([1, 0], [0, 2]), [1, 2],
                                               [2, 1], 1, True), (2, 5, 4, 2), (3, 2, 2, 2)),
    "general_list_pad": (lambda m, x, w: m.conv_general(x, w, 1, [1, 0], 1, 2),
                         (1, 3, 3, 1), (2, 2, 2, 1)),
    "general_neg_pad": (lambda m, x, w: m.conv_general(x, w, 1, ([-1], [-2]), 1, 1),
                        (1, 6, 2), (2, 2, 2)),
    "general_groups_flip": (lambda m, x, w: m.conv_general(x, w, 2, 1, 2, 1, 2, True),
                            (1, 7, 4), (4, 2, 2)),
    "t1d": (lambda m, x, w: m.conv_transpose1d(x, w, 2, 1, 1, 1), (2, 5, 3), (4, 3, 3)),
    "t1d_groups": (lambda m, x, w: m.conv_transpose1d(x, w, 2, 0, 2, 0, 2), (1, 5, 4),
                   (4, 3, 2)),
    "t1d_neg": (lambda m, x, w: m.conv_transpose1d(x, w, 1, 3), (1, 6, 2), (2, 2, 2)),
    "t2d": (lambda m, x, w: m.conv_transpose2d(x, w, (2, 1), (1, 0), 1, (1, 0)),
            (1, 4, 3, 2), (3, 3, 2, 2)),
    "t3d": (lambda m, x, w: m.conv_transpose3d(x, w, 2, 1), (1, 3, 2, 3, 2),
            (2, 2, 2, 2, 2)),
}

cases = {}
for _name, (_f, _sx, _sw) in CONVS.items():
    cases[_name] = lambda m, f=_f, sx=_sx, sw=_sw: f(m, data(m, sx), data(m, sw, 1.0))
    cases[f"grad_{_name}"] = lambda m, f=_f, sx=_sx, sw=_sw: m.grad(
        lambda x, w: (f(m, x, w) ** 2).sum(), argnums=(0, 1))(data(m, sx), data(m, sw, 1.0))

# dtypes: promotion, half types, and MLX's refusal of the others
cases["f16"] = lambda m: m.conv1d(data(m, (1, 5, 2)).astype(m.float16),
                                  data(m, (2, 2, 2)).astype(m.float16))
cases["bf16"] = lambda m: m.conv1d(data(m, (1, 5, 2)).astype(m.bfloat16),
                                   data(m, (2, 2, 2)).astype(m.bfloat16)).astype(m.float32)
cases["mixed"] = lambda m: m.conv1d(data(m, (1, 5, 2)).astype(m.float16), data(m, (2, 2, 2)))
cases["int_weight"] = lambda m: m.conv1d(data(m, (1, 5, 2)), m.ones((2, 2, 2), m.int32))
cases["int_input"] = lambda m: m.conv1d(m.ones((1, 5, 2), m.int32), data(m, (2, 2, 2)))
cases["complex"] = lambda m: m.conv1d(m.ones((1, 5, 2), m.complex64), data(m, (2, 2, 2)))
cases["empty_batch"] = lambda m: m.conv1d(m.ones((0, 5, 2)), m.ones((3, 2, 2)))

# errors, each with MLX's message
X1, W1 = (lambda m: m.ones((1, 5, 2))), (lambda m: m.ones((3, 2, 2)))
cases["e_stride0"] = lambda m: m.conv1d(X1(m), W1(m), stride=0)
cases["e_dilation0"] = lambda m: m.conv1d(X1(m), W1(m), dilation=0)
cases["e_input_dilation0"] = lambda m: m.conv_general(X1(m), W1(m), input_dilation=0)
cases["e_pad_lengths"] = lambda m: m.conv_general(X1(m), W1(m), padding=([1], [-1, 2]))
cases["e_strides_length"] = lambda m: m.conv_general(X1(m), W1(m), stride=[1, 1])
cases["e_kdil_length"] = lambda m: m.conv_general(X1(m), W1(m), kernel_dilation=[1, 1])
cases["e_idil_length"] = lambda m: m.conv_general(X1(m), W1(m), input_dilation=[1, 2])
cases["e_too_small"] = lambda m: m.conv1d(X1(m), m.ones((3, 9, 2)))
cases["e_channels"] = lambda m: m.conv1d(X1(m), m.ones((3, 2, 3)))
cases["e_groups_out"] = lambda m: m.conv1d(X1(m), m.ones((3, 2, 1)), groups=2)
cases["e_groups_in"] = lambda m: m.conv1d(X1(m), m.ones((3, 2, 1)), groups=3)
cases["e_groups_channels"] = lambda m: m.conv1d(m.ones((1, 5, 4)), m.ones((4, 2, 1)),
                                                groups=2)
cases["e_input_ndim"] = lambda m: m.conv1d(m.ones((5, 2)), W1(m))
cases["e_weight_ndim"] = lambda m: m.conv1d(X1(m), m.ones((2, 2)))
cases["e_conv2d_ndim"] = lambda m: m.conv2d(X1(m), W1(m))
cases["e_groups_3d"] = lambda m: m.conv3d(m.ones((1, 2, 2, 2, 2)), m.ones((2, 1, 1, 1, 1)),
                                          groups=2)
cases["e_4_spatial"] = lambda m: m.conv_general(m.ones((1, 2, 2, 2, 2, 2)),
                                                m.ones((2, 1, 1, 1, 1, 2)))
cases["e_list_input"] = lambda m: m.conv1d([1.0], W1(m))
cases["e_float_stride"] = lambda m: m.conv1d(X1(m), W1(m), stride=2.0)
cases["e_pair_conv1d"] = lambda m: m.conv1d(X1(m), W1(m), padding=(1, 1))
cases["e_triple_conv2d"] = lambda m: m.conv2d(m.ones((1, 3, 3, 1)), m.ones((1, 1, 1, 1)),
                                              dilation=(1, 1, 1))
cases["e_groups_negative"] = lambda m: m.conv1d(X1(m), W1(m), groups=-1)
cases["e_flip_int"] = lambda m: m.conv_general(X1(m), W1(m), flip=1)
cases["general_pad_list_of_lists"] = lambda m: m.conv_general(
    data(m, (1, 4, 2)), data(m, (1, 2, 2)), padding=[[1], [2]])
cases["f64"] = lambda m: m.conv1d(data(m, (1, 5, 2)).astype(m.float64),
                                  data(m, (2, 2, 2)).astype(m.float64))
cases["e_general_bad_pad"] = lambda m: m.conv_general(X1(m), W1(m), padding="same")
cases["e_transpose_stride0"] = lambda m: m.conv_transpose1d(X1(m), W1(m), stride=0)

# vmap: the input batched (folded into N), the weight batched (folded into the
# output channels), both (a grouped convolution); at other axes too
cases["v_input"] = lambda m: m.vmap(lambda x: m.conv1d(x, data(m, (3, 2, 2)), 2, 1))(
    data(m, (3, 2, 5, 2)))
cases["v_input_ax2"] = lambda m: m.vmap(lambda x: m.conv2d(x, data(m, (2, 2, 2, 1))),
                                        in_axes=2)(data(m, (1, 3, 2, 4, 1)))
cases["v_weight"] = lambda m: m.vmap(lambda w: m.conv1d(data(m, (2, 5, 2)), w, 1, 1),
                                     in_axes=0)(data(m, (3, 4, 2, 2)))
cases["v_weight_ax3"] = lambda m: m.vmap(lambda w: m.conv1d(data(m, (1, 5, 2)), w),
                                         in_axes=3)(data(m, (4, 2, 2, 3)))
cases["v_both"] = lambda m: m.vmap(lambda x, w: m.conv1d(x, w, 1, 1, 2))(
    data(m, (3, 2, 6, 2)), data(m, (3, 2, 2, 2), 1.0))
cases["v_both_groups"] = lambda m: m.vmap(lambda x, w: m.conv1d(x, w, groups=2),
                                          in_axes=(2, 1))(data(m, (1, 4, 3, 2)),
                                                          data(m, (2, 3, 2, 1), 1.0))
cases["v_both_2d"] = lambda m: m.vmap(lambda x, w: m.conv_transpose2d(x, w, 2))(
    data(m, (2, 1, 3, 3, 2)), data(m, (2, 2, 2, 2, 2), 1.0))
cases["v_both_3d"] = lambda m: m.vmap(lambda x, w: m.conv3d(x, w))(
    data(m, (2, 1, 2, 2, 2, 1)), data(m, (2, 1, 1, 1, 1, 1)))
cases["v_grad"] = lambda m: m.vmap(m.grad(lambda x, w: (m.conv1d(x, w, 2) ** 2).sum()))(
    data(m, (2, 1, 7, 2)), data(m, (2, 3, 3, 2), 1.0))

# convolve, now built on conv1d
for _mode in ("full", "same", "valid"):
    for _la, _lv in ((5, 3), (4, 4), (3, 6), (6, 2)):
        cases[f"convolve_{_mode}_{_la}_{_lv}"] = lambda m, mode=_mode, la=_la, lv=_lv: (
            m.convolve(data(m, (la,)), data(m, (lv,), 2.0), mode))
cases["grad_convolve"] = lambda m: m.grad(
    lambda a, v: (m.convolve(a, v, "same") ** 2).sum(), argnums=(0, 1))(
    data(m, (5,)), data(m, (4,), 1.0))


@needs_mlx
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_mlx(name):
    compare(name, cases)


# --- jvp: MLX has none; the tangent is a convolution with the tangent -------------


@needs_mlx
def test_mlx_has_no_jvp_but_mlxref_does():
    m = real_mx
    with pytest.raises(ValueError, match=r"Not implemented for Convolution"):
        m.jvp(lambda x: m.conv1d(x, m.ones((1, 2, 1))), [m.ones((1, 3, 1))],
              [m.ones((1, 3, 1))])


@needs_mlx
@pytest.mark.parametrize("name", sorted(CONVS))
def test_jvp_is_the_convolution_of_the_tangents(name):
    f, sx, sw = CONVS[name]

    def run(m):
        x, w = data(m, sx), data(m, sw, 1.0)
        tx, tw = data(m, sx, 2.0), data(m, sw, 3.0)
        if m is mx:
            return mx.jvp(lambda x, w: f(mx, x, w), [x, w], [tx, tw])[1][0]
        return f(m, tx, w) + f(m, x, tw)  # linear in each input

    assert_same_as_mlx(run(mx), run(real_mx), rtol=1e-5, atol=1e-5)


# --- where MLX is wrong --------------------------------------------------------------


def _dilate(m, x, d):
    """``x`` with ``d - 1`` zeros between its elements along axis 1."""
    n, length, c = x.shape
    y = m.concatenate([x[:, :, None, :], m.zeros((n, length, d - 1, c))], axis=2)
    return y.reshape(n, length * d, c)[:, : (length - 1) * d + 1]


@needs_mlx
@pytest.mark.parametrize("stride, lo, hi, kdil, idil", [
    (2, 0, 3, 2, 3), (3, 4, 5, 2, 2), (2, 1, 0, 1, 2), (1, 0, 2, 1, 3), (1, 2, 2, 1, 2)])
def test_input_gradient_with_input_dilation_and_uneven_padding(stride, lo, hi, kdil, idil):
    # MLX 0.32.4's input gradient has the wrong shape here (when the padding
    # is uneven, or larger than the kernel with an input dilation); the expected one is
    # MLX's gradient of the same convolution with the dilation written out.
    def loss(m, dilate):
        def f(x, w):
            if dilate:
                y = m.conv_general(_dilate(m, x, idil), w, stride, ([lo], [hi]), kdil, 1)
            else:
                y = m.conv_general(x, w, stride, ([lo], [hi]), kdil, idil)
            return (y * data(m, y.shape, 5.0)).sum()
        return m.grad(f, argnums=(0, 1))(data(m, (2, 4, 2)), data(m, (3, 2, 2), 1.0))

    ours = loss(mx, False)
    for o, t in zip(ours, loss(real_mx, True)):
        assert_same_as_mlx(o, t, rtol=1e-5, atol=1e-5)


@needs_mlx
def test_vmap_of_a_batched_weight_with_groups_is_per_example():
    # MLX folds the batch into the output channels across the groups, so its
    # result is not the per-example one; mlxref's is (computed by MLX).
    x, w = (lambda m: data(m, (1, 5, 4))), (lambda m: data(m, (3, 4, 2, 2), 1.0))
    ours = mx.vmap(lambda w: mx.conv1d(x(mx), w, groups=2))(w(mx))
    m = real_mx
    expected = m.stack([m.conv1d(x(m), w(m)[i], groups=2) for i in range(3)])
    assert_same_as_mlx(ours, expected, rtol=1e-5, atol=1e-5)
    assert not m.allclose(m.vmap(lambda w: m.conv1d(x(m), w, groups=2))(w(m)), expected)


def test_zero_input_channels_or_groups_is_an_error():
    # MLX's CPU kernel divides by zero in both cases and the process dies.
    with pytest.raises(ValueError, match=r"\[conv\] Cannot convolve over 0 input channels"):
        mx.conv1d(mx.ones((1, 5, 0)), mx.ones((3, 2, 0)))
    with pytest.raises(ValueError, match=r"\[conv\] The number of groups must not be 0"):
        mx.conv1d(mx.ones((1, 5, 2)), mx.ones((3, 2, 2)), groups=0)


def test_conv_transpose_is_the_input_gradient_of_conv():
    x, w = data(mx, (1, 5, 2)), data(mx, (3, 3, 2), 1.0)
    y = mx.conv1d(x, w, stride=2, padding=1)
    ct = data(mx, y.shape, 4.0)
    (gx,) = mx.vjp(lambda x: mx.conv1d(x, w, stride=2, padding=1), [x], [ct])[1]
    t = mx.conv_transpose1d(ct, mx.swapaxes(w, 0, 2), stride=2, padding=1, output_padding=0)
    assert t.shape == gx.shape and mx.allclose(t, gx, rtol=1e-5, atol=1e-6).item()


def test_transposed_convolution_gradient_with_output_padding_has_the_inputs_shape():
    # MLX 0.32.4's input gradient here is (1, 3, 3): short by the padding (README,
    # "Where mlxref differs from MLX"). mlxref's has the input's shape and agrees
    # with central differences, forwards and backwards.
    from mlxref.testing import check_grads

    x = mx.random.normal((1, 4, 3), key=mx.random.key(1)).astype(mx.float64)
    w = mx.random.normal((2, 3, 3), key=mx.random.key(2)).astype(mx.float64)

    def f(x):
        return mx.conv_transpose1d(x, w, stride=2, output_padding=1)

    assert f(x).shape == (1, 10, 2)
    assert mx.grad(lambda x: f(x).sum())(x).shape == x.shape
    check_grads(f, [x], order=1)
