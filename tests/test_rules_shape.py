"""vjp and jvp rules of the shape and indexing primitives, against real MLX 0.32.

Each program is written once against a module ``m`` (mlxref.core or mlx.core)
so the very same code runs on both libraries; index arrays are constants built
inside the program. Inputs, cotangents and tangents are fixed Python lists.
"""

import pytest
from support import assert_array, assert_same_as_mlx, needs_mlx, real_mx

import mlxref.core as mx
from mlxref.testing import check_grads


def _values(shape, seed):
    """A fixed, irregular flat list of floats for ``shape``."""
    n = 1
    for d in shape:
        n *= d
    return [((k * 7 + seed * 5) % 11) / 4.0 - 1.2 + 0.1 * k for k in range(n)]


def _make(m, shape, seed):
    return m.array(_values(shape, seed)).reshape(shape) if shape else m.array(_values((), seed)[0])


def _set(m, x, index, v):
    y = m.array(x)
    y[index] = v
    return y


# name -> (program(m, *xs), input shapes)
PROGRAMS = {
    "reshape": (lambda m, x: m.reshape(x, (3, 2)), [(2, 3)]),
    "reshape_infer": (lambda m, x: m.reshape(x, (-1, 4)), [(2, 2, 2)]),
    "flatten": (lambda m, x: m.flatten(x, 1, 2), [(2, 2, 3)]),
    "flatten_all": (lambda m, x: m.flatten(x), [(2, 3)]),
    "transpose": (lambda m, x: m.transpose(x, (2, 0, 1)), [(2, 3, 2)]),
    "transpose_default": (lambda m, x: m.transpose(x), [(2, 3, 2)]),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, -1), [(2, 3, 2)]),
    "moveaxis": (lambda m, x: m.moveaxis(x, 0, -1), [(2, 3, 2)]),
    "expand_dims": (lambda m, x: m.expand_dims(x, (0, -1)), [(2, 3)]),
    "squeeze": (lambda m, x: m.squeeze(x), [(1, 3, 1)]),
    "squeeze_axis": (lambda m, x: m.squeeze(x, -1), [(2, 3, 1)]),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (2, 3, 4)), [(3, 1)]),
    "broadcast_binary": (lambda m, x, y: x * y + y, [(2, 1), (3,)]),
    "concatenate": (lambda m, x, y: m.concatenate([x, y], axis=-1), [(2, 1), (2, 3)]),
    "concatenate_three": (lambda m, x, y: m.concatenate([y, x * x, y], axis=0), [(1, 2), (2, 2)]),
    "concatenate_none": (lambda m, x, y: m.concatenate([x, y], axis=None), [(2, 2), (3,)]),
    "stack": (lambda m, x, y: m.stack([x, y], axis=1), [(2, 3), (2, 3)]),
    "split_sections": (lambda m, x: m.split(x, 2, axis=1)[0] * m.split(x, 2, axis=1)[1],
                       [(2, 4)]),
    "split_indices": (lambda m, x: m.concatenate(m.split(x, [1, 3])[::2]), [(5, 2)]),
    "split_pieces_used_twice": (
        lambda m, x: (lambda p: p[0] * p[2] + p[1])(m.split(x, 3, axis=-1)), [(2, 3)]),
    "pad": (lambda m, x: m.pad(x, ((1, 2), (0, 1))), [(2, 3)]),
    "pad_value": (lambda m, x: m.pad(x, 1, constant_values=3.0), [(2, 2)]),
    "pad_edge": (lambda m, x: m.pad(x, (1, 2), mode="edge"), [(2, 3)]),
    "pad_reflect": (lambda m, x: m.pad(x, 1, mode="reflect"), [(2, 3)]),
    "repeat": (lambda m, x: m.repeat(x, 2, axis=1), [(2, 3)]),
    "repeat_flat": (lambda m, x: m.repeat(x, 3), [(2, 2)]),
    "tile": (lambda m, x: m.tile(x, (2, 1, 2)), [(2, 3)]),
    "take_repeated": (lambda m, x: m.take(x, m.array([2, 0, 2, 2]), axis=1), [(2, 3)]),
    "take_flat_2d_indices": (lambda m, x: m.take(x, m.array([[0, 5], [5, -1]])), [(2, 3)]),
    "take_int": (lambda m, x: m.take(x, 1, axis=0), [(2, 3)]),
    "take_along_axis": (
        lambda m, x: m.take_along_axis(x, m.array([[0, 2, 2], [1, 1, 0]]), axis=1), [(2, 3)]),
    "take_along_axis_broadcast": (
        lambda m, x: m.take_along_axis(x, m.array([[1, 0, 1]]), axis=0), [(2, 3)]),
    "take_along_axis_none": (
        lambda m, x: m.take_along_axis(x, m.array([5, 0, 5]), axis=None), [(2, 3)]),
    "getitem_int": (lambda m, x: x[1], [(3, 2)]),
    "getitem_ints": (lambda m, x: x[-1, 2], [(2, 3)]),
    "getitem_slices": (lambda m, x: x[1:, ::2], [(3, 4)]),
    "getitem_negative_steps": (lambda m, x: x[::-1, 3:0:-2], [(3, 4)]),
    "getitem_array": (lambda m, x: x[m.array([0, 2, 0])], [(3, 2)]),
    "getitem_two_arrays": (lambda m, x: x[m.array([1, 0, 1]), m.array([2, 2, 0])], [(2, 3)]),
    "getitem_slice_then_array": (lambda m, x: x[:, m.array([0, 0, 2])], [(2, 3)]),
    "getitem_array_then_slice": (lambda m, x: x[m.array([[0], [1]]), 1:3], [(2, 3)]),
    "getitem_none_ellipsis": (lambda m, x: x[None, ..., 1], [(2, 3, 2)]),
    "getitem_ellipsis_none": (lambda m, x: x[..., None, ::-1], [(2, 3)]),
    "getitem_mixed": (lambda m, x: x[1, None, m.array([0, 0])], [(2, 3)]),
    "setitem_slice": (lambda m, x, v: _set(m, x, slice(1, 3), v), [(4,), (2,)]),
    "setitem_negative_step": (
        lambda m, x, v: _set(m, x, (slice(None, None, -1), 0), v), [(3, 2), (3,)]),
    "setitem_int_broadcast": (lambda m, x, v: _set(m, x, 0, v), [(3, 2), ()]),
    "setitem_array": (lambda m, x, v: _set(m, x, m.array([2, 0]), v), [(3, 2), (2, 2)]),
    "setitem_mask": (lambda m, x, v: _set(m, x, m.array([True, False, True]), v), [(3,), (2,)]),
    "setitem_mask_rows": (
        lambda m, x, v: _set(m, x, m.array([False, True, True]), v), [(3, 2), (2,)]),
    "setitem_then_math": (
        lambda m, x, v: m.sin(_set(m, x * x, (slice(0, 1), slice(1, None)), v * x[0, 0])),
        [(2, 3), (2,)]),
}

# Programs whose jvp MLX 0.32 cannot compute ("[scatter] JVP not yet
# implemented"); mlxref's jvp for them is checked by check_grads instead.
SCATTERS = {"setitem_array"}

NAMES = sorted(PROGRAMS)


def _inputs(m, shapes):
    return [_make(m, s, i) for i, s in enumerate(shapes)]


def _ours(name):
    f, shapes = PROGRAMS[name]
    return (lambda *xs: f(mx, *xs)), _inputs(mx, shapes), shapes


def _theirs(name):
    f, shapes = PROGRAMS[name]
    return (lambda *xs: f(real_mx, *xs)), _inputs(real_mx, shapes)


@needs_mlx
@pytest.mark.parametrize("name", NAMES)
def test_vjp_matches_mlx(name):
    f, xs, _ = _ours(name)
    g, ys = _theirs(name)
    out_shape = f(*xs).shape
    outs, vjps = mx.vjp(f, xs, [_make(mx, out_shape, 9)])
    touts, tvjps = real_mx.vjp(g, ys, [_make(real_mx, out_shape, 9)])
    assert_same_as_mlx(outs[0], touts[0])
    assert len(vjps) == len(tvjps)
    for ours, theirs in zip(vjps, tvjps):
        assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("name", [n for n in NAMES if n not in SCATTERS])
def test_jvp_matches_mlx(name):
    f, xs, shapes = _ours(name)
    g, ys = _theirs(name)
    tangents = [_make(mx, s, 3 + i) for i, s in enumerate(shapes)]
    their_tangents = [_make(real_mx, s, 3 + i) for i, s in enumerate(shapes)]
    outs, jvps = mx.jvp(f, xs, tangents)
    touts, tjvps = real_mx.jvp(g, ys, their_tangents)
    assert_same_as_mlx(outs[0], touts[0])
    assert_same_as_mlx(jvps[0], tjvps[0])


@pytest.mark.parametrize("name", NAMES)
def test_check_grads_order_2(name):
    f, xs, _ = _ours(name)
    check_grads(f, xs, order=2)


# --- things MLX does not do, or does differently ------------------------------------


@needs_mlx
def test_scatter_jvp_is_implemented_where_mlx_has_none():
    g, ys = _theirs("setitem_array")
    with pytest.raises(RuntimeError, match=r"\[scatter\] JVP not yet implemented"):
        real_mx.jvp(g, ys, [real_mx.ones((3, 2)), real_mx.ones((2, 2))])
    f, xs, _ = _ours("setitem_array")
    t_x = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    t_v = mx.array([[10.0, 20.0], [30.0, 40.0]])
    _, (jv,) = mx.jvp(f, xs, [t_x, t_v])
    # Rows 2 and 0 take the update's tangent; row 1 keeps x's.
    assert_array(jv, [[30, 40], [3, 4], [10, 20]], dtype=mx.float32)


def test_scatter_update_window_spanning_a_slice():
    # x[idx, 0:2] = v: the update window is (1, 2). MLX's rule uses (1, 1) and
    # fails with "[reshape] Cannot reshape array of size 2 into shape (2,2)".
    def f(x, v):
        return _set(mx, x, (mx.array([1, 0]), slice(0, 2)), v)

    x = mx.arange(12.0).reshape(3, 4)
    v = mx.array([[10.0, 11.0], [12.0, 13.0]])
    _, (gx, gv) = mx.vjp(f, [x, v], [mx.arange(12.0).reshape(3, 4)])
    assert_array(gx, [[0, 0, 2, 3], [0, 0, 6, 7], [8, 9, 10, 11]])
    assert_array(gv, [[4, 5], [0, 1]], shape=(2, 2))
    check_grads(f, [x, v], order=2)


@needs_mlx
def test_scatter_with_repeated_indices_gives_every_update_the_cotangent():
    # As MLX: under replace, both updates at index 1 get the cotangent there,
    # though only the last one reaches the output.
    def prog(m):
        return lambda x, v: _set(m, x, m.array([1, 1]), v)

    x, v = [1.0, -2.0, 3.0], [5.0, 6.0]
    cot = [1.0, 2.0, 3.0]
    _, ours = mx.vjp(prog(mx), [mx.array(x), mx.array(v)], [mx.array(cot)])
    _, theirs = real_mx.vjp(prog(real_mx), [real_mx.array(x), real_mx.array(v)],
                            [real_mx.array(cot)])
    assert_array(ours[1], [2, 2])
    for a, b in zip(ours, theirs):
        assert_same_as_mlx(a, b)


def test_pad_value_gets_the_border_cotangent():
    # MLX 0.32 hands back the array's gradient for the pad value (wrong shape);
    # mlxref gives the derivative: the sum of the cotangent outside the window.
    def f(x, v):
        return mx.pad(x, ((1, 0), (0, 2)), constant_values=v)

    x, v = mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array(0.5)
    cot = mx.arange(12.0).reshape(3, 4)
    _, (gx, gv) = mx.vjp(f, [x, v], [cot])
    assert_array(gx, [[4, 5], [8, 9]], shape=(2, 2))
    assert_array(gv, 66 - 26, shape=())
    _, (jv,) = mx.jvp(f, [x, v], [mx.zeros((2, 2)), mx.array(1.0)])
    assert_array(jv, [[1, 1, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]])
    check_grads(f, [x, v], order=2)


def test_split_siblings_without_cotangent_get_zeros():
    x = mx.arange(6.0)
    _, (g,) = mx.vjp(lambda a: mx.split(a, 3)[1], [x], [mx.array([5.0, 7.0])])
    assert_array(g, [0, 0, 5, 7, 0, 0])
    _, (g,) = mx.vjp(lambda a: mx.split(a, [1, 4]), [x],
                     [mx.array([1.0]), mx.array([2.0, 3.0, 4.0]), mx.array([5.0, 6.0])])
    assert_array(g, [1, 2, 3, 4, 5, 6])
    _, jvps = mx.jvp(lambda a: mx.split(a, [1, 4]), [x], [mx.arange(6.0) * 10])
    assert [t.tolist() for t in jvps] == [[0.0], [10.0, 20.0, 30.0], [40.0, 50.0]]


def test_broadcast_vjp_sums_to_the_input_shape():
    x = mx.array([[1.0], [2.0]])  # (2, 1) -> (3, 2, 4)
    _, (g,) = mx.vjp(lambda a: mx.broadcast_to(a, (3, 2, 4)), [x], [mx.ones((3, 2, 4))])
    assert_array(g, [[12], [12]], shape=(2, 1), dtype=mx.float32)


# --- index gradients: MLX refuses them ----------------------------------------------

_GATHER_VJP = (
    r"^\[gather\] Cannot calculate VJP with respect to indices\. Use stop_gradient on "
    r"indices to stop gradients from being computed\.$"
)


def _index_programs(m):
    x = m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    i = m.array([1, 0, 1])
    j = m.array([[2, 0, 1], [0, 0, 0]])
    return {
        "take": (lambda a, idx: m.take(a, idx, axis=1).sum(), [x, i]),
        "getitem": (lambda a, idx: a[idx].sum(), [x, i]),
        "take_along_axis": (lambda a, idx: m.take_along_axis(a, idx, axis=1).sum(), [x, j]),
        "setitem": (lambda a, idx: _set(m, a, idx[:2], 7.0).sum(), [x, i]),
        "mask": (lambda a, idx: _set(m, a, a > 2, 0.0).sum(), [x, i]),
    }


_VJP_MESSAGES = {
    "take": _GATHER_VJP,
    "getitem": _GATHER_VJP,
    "take_along_axis": _GATHER_VJP.replace("gather", "gather_axis"),
    "setitem": _GATHER_VJP.replace("gather", "scatter"),
    "mask": _GATHER_VJP.replace("gather", "masked_scatter").replace("indices", "mask"),
}


@pytest.mark.parametrize("name", sorted(_VJP_MESSAGES))
def test_grad_with_respect_to_indices_raises(name):
    f, args = _index_programs(mx)[name]
    argnums = 0 if name == "mask" else 1
    with pytest.raises(ValueError, match=_VJP_MESSAGES[name]):
        mx.grad(f, argnums=argnums)(*args)


@needs_mlx
@pytest.mark.parametrize("name", sorted(_VJP_MESSAGES))
def test_grad_with_respect_to_indices_raises_in_mlx_too(name):
    f, args = _index_programs(real_mx)[name]
    argnums = 0 if name == "mask" else 1
    with pytest.raises(ValueError, match=_VJP_MESSAGES[name]):
        real_mx.grad(f, argnums=argnums)(*args)


@pytest.mark.parametrize("m", [mx, pytest.param(real_mx, marks=needs_mlx)],
                         ids=["mlxref", "mlx"])
def test_jvp_with_respect_to_indices_raises(m):
    x = m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    i = m.array([1, 0, 1])
    j = m.array([[2, 0, 1], [0, 0, 0]])
    message = _GATHER_VJP.replace("VJP", "JVP")
    with pytest.raises(ValueError, match=message):
        m.jvp(lambda idx: m.take(x, idx, axis=1), [i], [m.ones((3,), m.int32)])
    with pytest.raises(ValueError, match=message.replace("gather", "gather_axis")):
        m.jvp(lambda a, idx: m.take_along_axis(a, idx, axis=1), [x, j],
              [m.ones((2, 3)), m.ones((2, 3), m.int32)])
    with pytest.raises(ValueError, match=r"^\[masked_scatter\] invalid arg index in JVP$"):
        m.jvp(lambda a: _set(m, a, a > 2, 0.0), [x], [m.ones((2, 3))])


def test_stop_gradient_on_indices_lets_the_data_gradient_through():
    x = mx.array([3.0, 1.0, 2.0])

    def f(a):
        return mx.take(a, mx.stop_gradient(mx.argmax(a, keepdims=True))).sum()

    assert_array(mx.grad(f)(x), [1, 0, 0])
