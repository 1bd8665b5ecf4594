"""vmap rules of the shape and indexing primitives.

Each program is written once against a module ``m`` (mlxref.core or mlx.core),
so the very same code runs on both libraries. Three checks per program and
choice of ``in_axes`` / ``out_axes``:

- the batched result equals real MLX 0.32's (where MLX gets it right);
- it equals a Python loop: the program on each example, stacked;
- (for a few) nested vmap and vmap of grad, against MLX and against a loop.

Index arrays, masks and pad values are arguments too, so they are batched
like the data: gather with batched indices and/or source, scatter with any of
source, indices and updates batched.
"""

import pytest
from support import assert_same_as_mlx, close, needs_mlx, real_mx

import mlxref.core as mx

B = 5  # the batch size: unlike every axis size below, so a mixed-up axis shows


# --- inputs -------------------------------------------------------------------------


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _values(kind, shape, seed):
    """A fixed, irregular flat list for ``shape``: floats, ints in [lo, hi), or bools."""
    n = _prod(shape)
    if kind == "f":
        return [((k * 7 + seed * 5) % 11) / 4.0 - 1.2 + 0.1 * k for k in range(n)]
    if kind == "b":
        return [(k * 5 + seed * 3) % 7 < 3 for k in range(n)]
    lo, hi = kind
    return [lo + (k * 5 + seed * 3 + k * k) % (hi - lo) for k in range(n)]


def _make(m, kind, shape, seed):
    data = _values(kind, shape, seed)
    if kind == "f":
        a = m.array(data, m.float32)
    elif kind == "b":
        a = m.array(data, m.bool_)
    else:
        a = m.array(data, m.int32)
    return a.reshape(shape)


def _batched_shape(shape, ax):
    if ax is None:
        return shape
    ax = ax % (len(shape) + 1)
    return shape[:ax] + (B,) + shape[ax:]


def _inputs(m, specs, in_axes, seed=0):
    """One input per spec ``(kind, example shape)``, with a batch axis where ``in_axes`` says."""
    return [
        _make(m, kind, _batched_shape(shape, ax), seed + 3 * i)
        for i, ((kind, shape), ax) in enumerate(zip(specs, in_axes))
    ]


def _set(m, x, index, v):
    """``x`` with ``x[index] = v``, leaving the input array alone."""
    y = m.array(x)
    y[index] = v
    return y


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


F = "f"


def I(hi, lo=0):  # noqa: E743 - an index spec: ints in [lo, hi)
    return (lo, hi)


# name -> (program(m, *args), [(kind, example shape)], [(in_axes, out_axes)])
PROGRAMS = {
    "broadcast_to": (
        lambda m, x: m.broadcast_to(x, (2, 3, 4)), [(F, (3, 1))],
        [((0,), 0), ((1,), -1), ((2,), 1), ((-1,), 2)]),
    "broadcast_binary": (
        lambda m, a, b: a * b - b, [(F, (2, 1)), (F, (3,))],
        [((0, None), 0), ((None, 0), 1), ((1, -1), -1), ((-1, None), 2), ((None, 1), 0)]),
    "reshape": (
        lambda m, x: m.reshape(x, (3, 2)), [(F, (2, 3))],
        [((0,), 0), ((1,), 1), ((-1,), -1)]),
    "flatten": (
        lambda m, x: m.flatten(x, 1, 2), [(F, (2, 2, 3))],
        [((0,), 0), ((1,), 1), ((2,), 2), ((3,), -1), ((-2,), 0)]),
    "transpose": (
        lambda m, x: m.transpose(x, (2, 0, 1)), [(F, (2, 3, 4))],
        [((0,), 0), ((1,), 2), ((3,), -1), ((-2,), 1)]),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, -1), [(F, (2, 3))], [((0,), 1), ((2,), 0)]),
    "moveaxis": (
        lambda m, x: m.moveaxis(x, 0, -1), [(F, (2, 3, 4))], [((0,), 0), ((1,), -1), ((3,), 2)]),
    "expand_dims": (
        lambda m, x: m.expand_dims(x, (0, 2, -1)), [(F, (2, 3))],
        [((0,), 0), ((1,), 3), ((2,), -1), ((-1,), 1)]),
    "squeeze": (
        lambda m, x: m.squeeze(x, (0, 2)), [(F, (1, 3, 1, 2))],
        [((0,), 0), ((1,), 1), ((2,), -1), ((3,), 2), ((4,), 0)]),
    "concatenate": (
        lambda m, a, b: m.concatenate([a, b, a], axis=-1), [(F, (2, 1)), (F, (2, 3))],
        [((0, None), 0), ((None, 1), 1), ((2, 0), -1), ((None, -1), 0), ((1, 2), 2)]),
    "stack": (
        lambda m, a, b: m.stack([a, b * b], axis=1), [(F, (2, 3)), (F, (2, 3))],
        [((0, 0), 0), ((None, 2), 1), ((1, None), -1)]),
    "split": (  # several outputs of one Split node, each with its own out_axes
        lambda m, x: tuple(m.split(x, [1, 3], axis=1)), [(F, (2, 4))],
        [((0,), 0), ((1,), (1, 0, -1)), ((2,), -1), ((-3,), (2, 2, 0))]),
    "pad": (
        lambda m, x: m.pad(x, ((1, 0), (2, 1)), constant_values=-2.5), [(F, (2, 3))],
        [((0,), 0), ((1,), -1), ((2,), 1)]),
    "slice": (
        lambda m, x: x[1:3, ::-2], [(F, (4, 3))],
        [((0,), 0), ((1,), 1), ((2,), -1), ((-1,), 2)]),
    "slice_int_none": (
        lambda m, x: x[..., None, 1], [(F, (2, 3))], [((0,), 0), ((1,), -1), ((2,), 1)]),
    "slice_update": (
        lambda m, x, v: _set(m, x, (slice(None, None, -1), 1), v), [(F, (3, 2)), (F, (3,))],
        [((0, None), 0), ((None, 0), 1), ((1, 0), -1), ((2, 1), 0), ((-1, -1), 2),
         ((0, 0), 0)]),
    "slice_update_scalar_value": (
        lambda m, x, v: _set(m, x, slice(1, 3), v), [(F, (4, 2)), (F, ())],
        [((None, 0), 0), ((1, 0), 1), ((2, None), -1)]),
    # take: batched source, batched indices, both (and a negative index)
    "take": (
        lambda m, x, i: m.take(x, i, axis=1), [(F, (2, 3, 2)), (I(3, -3), (2, 2))],
        [((0, None), 0), ((2, None), -1), ((-1, None), 1), ((None, 0), 0), ((None, 2), 1),
         ((0, 0), 0), ((3, 1), 2), ((1, -1), -1)]),
    "take_flat": (
        lambda m, x, i: m.take(x, i), [(F, (2, 3)), (I(6), (4,))],
        [((0, None), 0), ((None, 1), 1), ((2, 0), 0)]),
    "take_along_axis": (
        lambda m, x, i: m.take_along_axis(x, i, axis=0), [(F, (3, 2)), (I(3), (2, 2))],
        [((0, None), 0), ((2, None), 1), ((None, 0), -1), ((None, 2), 0), ((1, 1), 2),
         ((-1, 0), 0)]),
    "take_along_axis_broadcast": (
        lambda m, x, i: m.take_along_axis(x, i, axis=-1), [(F, (2, 3)), (I(3, -3), (1, 4))],
        [((0, None), 0), ((None, 1), 1), ((2, 0), -1)]),
    # getitem with array indices (Gather)
    "getitem_array_slice": (
        lambda m, x, i: x[i, 1:], [(F, (3, 4)), (I(3), (2,))],
        [((0, None), 0), ((2, None), -1), ((None, 0), 1), ((1, 1), 0), ((-1, 0), 2)]),
    "getitem_two_arrays": (
        lambda m, x, i, j: x[i, :, j], [(F, (3, 2, 4)), (I(3), (2, 1)), (I(4), (3,))],
        [((0, None, None), 0), ((None, 0, None), 0), ((None, None, 1), -1),
         ((3, 2, None), 1), ((1, 0, 0), 0), ((None, 1, 0), 2)]),
    # setitem with arrays (Scatter), including source batch axes >= 2 (MLX #4321)
    "setitem_array": (
        lambda m, x, i, v: _set(m, x, i, v), [(F, (4, 3)), (I(4), (2,)), (F, (2, 3))],
        [((0, None, None), 0), ((1, None, None), 1), ((None, 0, None), 0),
         ((None, None, 0), -1), ((None, None, 2), 0), ((0, 0, 0), 0), ((1, 0, 2), 2),
         ((None, 1, 1), 1), ((2, None, None), 0), ((-1, 1, None), -1), ((2, 0, 1), 0)]),
    "setitem_array_slice": (
        lambda m, x, i, v: _set(m, x, (i, slice(0, 2)), v),
        [(F, (3, 3)), (I(3), (2,)), (F, (2, 2))],
        [((0, None, None), 0), ((None, 0, None), 1), ((None, None, 1), 0), ((1, 0, 2), -1),
         ((2, None, 0), 0), ((2, 1, None), 1)]),
    "setitem_scalar_value": (
        lambda m, x, i, v: _set(m, x, (slice(None), i), v), [(F, (2, 3, 2)), (I(3), (2,)),
                                                            (F, ())],
        [((0, None, None), 0), ((None, 0, 0), 1), ((3, None, 0), -1), ((2, 0, None), 0)]),
    # setitem with a boolean mask (MaskedScatter); a scalar value fits any mask
    "setitem_mask": (
        lambda m, x, k, v: _set(m, x, k, v), [(F, (2, 3)), ("b", (2, 3)), (F, ())],
        [((0, None, None), 0), ((None, 0, None), 1), ((None, None, 0), 0),
         ((2, 1, 0), -1), ((0, 0, 0), 0)]),
    "setitem_mask_rows": (
        lambda m, x, v: _set(m, x, m.array([False, True, True]), v), [(F, (3, 2)), (F, (2, 2))],
        [((0, None), 0), ((None, 0), 0), ((2, 1), -1), ((1, 2), 1)]),
}

CONFIGS = [
    pytest.param(name, in_axes, out_axes, id=f"{name}-{in_axes}-{out_axes}")
    for name, (_, _, configs) in PROGRAMS.items()
    for in_axes, out_axes in configs
]


def _vmapped(m, name, in_axes, out_axes):
    program, _, _ = PROGRAMS[name]
    return m.vmap(lambda *xs: program(m, *xs), in_axes=in_axes, out_axes=out_axes)


def _mlx_bug(name, in_axes):
    """Why MLX 0.32.4 is wrong for this program and in_axes, or None.

    mlxref is right there (``test_vmap_matches_loop`` checks it); these cases
    assert that MLX still differs, so a fixed MLX shows up as a failure.
    """
    src_ax = in_axes[0]
    src_ax = None if src_ax is None else src_ax % (len(PROGRAMS[name][1][0][1]) + 1)
    if name == "expand_dims" and src_ax == 2:
        # ExpandDims::vmap compares each axis with the original batch axis, not
        # with the one already shifted by the axes inserted before it: axis 2
        # is then taken to lie after the batch axis (axes (0, 2, -1), batch 2).
        return "ExpandDims::vmap: a wrong shape when an inserted axis passes the batch axis"
    if name.startswith("slice_update") and in_axes[1] is None:
        # SliceUpdate::vmap gives an unbatched update a size-1 batch axis and
        # never broadcasts it: only the first example gets the update.
        return "SliceUpdate::vmap: an unbatched update is written into example 0 only"
    return None


def _differs(ours, theirs):
    return any(
        tuple(o.shape) != tuple(t.shape) or not close(o.tolist(), t.tolist())
        for o, t in zip(ours, theirs)
    )


@needs_mlx
@pytest.mark.parametrize("name, in_axes, out_axes", CONFIGS)
def test_vmap_matches_mlx(name, in_axes, out_axes):
    specs = PROGRAMS[name][1]
    ours = _vmapped(mx, name, in_axes, out_axes)(*_inputs(mx, specs, in_axes))
    theirs = _vmapped(real_mx, name, in_axes, out_axes)(*_inputs(real_mx, specs, in_axes))
    ours, theirs = _leaves(ours), _leaves(theirs)
    assert len(ours) == len(theirs)
    if _mlx_bug(name, in_axes):
        assert _differs(ours, theirs), f"MLX now agrees: {_mlx_bug(name, in_axes)} is fixed"
        return
    for o, t in zip(ours, theirs):
        assert_same_as_mlx(o, t)


def _slice_example(x, ax, b):
    return x if ax is None else mx.take(x, b, axis=ax % x.ndim)


def _loop(program, xs, in_axes):
    """The program on each example, one list of outputs per example."""
    return [
        _leaves(program(mx, *[_slice_example(x, ax, b) for x, ax in zip(xs, in_axes)]))
        for b in range(B)
    ]


def _assert_stack(batched, out_axes, per_example, exact=True):
    batched = _leaves(batched)
    if not isinstance(out_axes, tuple):
        out_axes = (out_axes,) * len(batched)
    for k, (out, ax) in enumerate(zip(batched, out_axes)):
        front = mx.moveaxis(out, ax, 0)
        want = mx.stack([outs[k] for outs in per_example])
        assert front.shape == want.shape, f"shape {front.shape} vs loop {want.shape}"
        assert front.dtype == want.dtype
        if exact:  # shape ops move elements: the same values, bit for bit
            assert front.tolist() == want.tolist(), f"{front.tolist()} vs {want.tolist()}"
        else:
            assert close(front.tolist(), want.tolist())


@pytest.mark.parametrize("name, in_axes, out_axes", CONFIGS)
def test_vmap_matches_loop(name, in_axes, out_axes):
    program, specs, _ = PROGRAMS[name]
    xs = _inputs(mx, specs, in_axes)
    got = _vmapped(mx, name, in_axes, out_axes)(*xs)
    _assert_stack(got, out_axes, _loop(program, xs, in_axes))


# --- MLX quirks ------------------------------------------------------------------------


def _pad_value(m, x, v):
    return m.pad(x, ((1, 0), (0, 2)), constant_values=v)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, 0), (1, 0), (-1, 0)])
def test_pad_with_batched_value_goes_further_than_mlx(in_axes):
    # MLX: "[Pad::vmap] Vmap over padding value is not supported."; mlxref pads
    # each example with its own value.
    specs = [(F, (2, 3)), (F, ())]
    xs = _inputs(mx, specs, in_axes)
    got = mx.vmap(lambda x, v: _pad_value(mx, x, v), in_axes=in_axes)(*xs)
    _assert_stack(got, 0, _loop(_pad_value, xs, in_axes))
    if real_mx is not None:
        theirs = _inputs(real_mx, specs, in_axes)
        with pytest.raises(ValueError, match=r"\[Pad::vmap\] Vmap over padding value"):
            real_mx.vmap(lambda x, v: _pad_value(real_mx, x, v), in_axes=in_axes)(*theirs)


@pytest.mark.parametrize("src_ax", [2, -1])
@pytest.mark.parametrize("upd_ax", [None, 0, 1])
def test_scatter_batch_axis_two(src_ax, upd_ax):
    # The case of MLX #4321 (vmap of scatter wrong for a batch axis >= 2),
    # spelled out: example b writes row i[b] of its own (3, 2) slice. The
    # installed MLX 0.32.4 gets these right too; both are checked.
    x = mx.zeros((3, 2, B))
    i = mx.array([b % 3 for b in range(B)])
    rows = [[float(b + 1), float(-b)] for b in range(B)]
    v = mx.array(rows[0]) if upd_ax is None else mx.moveaxis(mx.array(rows), 0, upd_ax)
    f = mx.vmap(lambda x, i, v: _set(mx, x, i, v), in_axes=(src_ax, 0, upd_ax))
    got = f(x, i, v)
    want = [[(rows[0] if upd_ax is None else rows[b]) if r == b % 3 else [0.0, 0.0]
             for r in range(3)] for b in range(B)]
    assert got.tolist() == want
    if real_mx is not None:
        g = real_mx.vmap(lambda x, i, v: _set(real_mx, x, i, v), in_axes=(src_ax, 0, upd_ax))
        assert_same_as_mlx(got, g(real_mx.array(x.tolist()), real_mx.array(i.tolist()),
                                  real_mx.array(v.tolist())))


# --- nested vmap ---------------------------------------------------------------------------


NESTED = {
    # name -> (program(m, *args), specs, inner in_axes, outer in_axes, out axes (inner, outer))
    "take": (lambda m, x, i: m.take(x, i, axis=0), [(F, (4, 2)), (I(4), (3,))],
             (0, None), (1, 0), (1, 0)),
    "take_along_axis": (lambda m, x, i: m.take_along_axis(x, i, axis=1),
                        [(F, (2, 3)), (I(3), (2, 2))], (1, 0), (None, 1), (0, -1)),
    "setitem": (lambda m, x, i, v: _set(m, x, i, v), [(F, (4, 2)), (I(4), (2,)), (F, (2, 2))],
                (0, None, 0), (1, 0, None), (0, 1)),
    "concatenate_transpose": (
        lambda m, a, b: m.concatenate([a.T, b], axis=1), [(F, (2, 3)), (F, (3, 3))],
        (1, None), (0, 2), (2, 0)),
}

OUTER = 3  # the outer batch: a third size, so the two batch axes cannot be swapped silently


def _nested_inputs(m, specs, inner, outer):
    xs = []
    for k, ((kind, shape), ia, oa) in enumerate(zip(specs, inner, outer)):
        s = shape
        if ia is not None:
            s = s[:ia] + (B,) + s[ia:]
        if oa is not None:
            s = s[:oa] + (OUTER,) + s[oa:]
        xs.append(_make(m, kind, s, 7 * k + 1))
    return xs


def _nested(m, name):
    program, _, inner, outer, (out_in, out_out) = NESTED[name]
    f = m.vmap(lambda *xs: program(m, *xs), in_axes=inner, out_axes=out_in)
    return m.vmap(f, in_axes=outer, out_axes=out_out)


@pytest.mark.parametrize("name", list(NESTED))
def test_nested_vmap(name):
    program, specs, inner, outer, (out_in, out_out) = NESTED[name]
    xs = _nested_inputs(mx, specs, inner, outer)
    got = _nested(mx, name)(*xs)
    # a double loop: outer examples, then inner ones
    per_outer = []
    for o in range(OUTER):
        ys = [x if oa is None else mx.take(x, o, axis=oa) for x, oa in zip(xs, outer)]
        per_inner = [
            program(mx, *[y if ia is None else mx.take(y, b, axis=ia) for y, ia in zip(ys, inner)])
            for b in range(B)
        ]
        per_outer.append(mx.moveaxis(mx.stack(per_inner), 0, out_in))
    want = mx.moveaxis(mx.stack(per_outer), 0, out_out)
    assert got.shape == want.shape and got.tolist() == want.tolist()
    if real_mx is not None:
        theirs = _nested(real_mx, name)(*_nested_inputs(real_mx, specs, inner, outer))
        assert_same_as_mlx(got, theirs)


# --- vmap of grad: per-example gradients through the rules' own vjps ---------------------


def _w(m, shape):
    return _make(m, F, shape, 11)


GRADS = {
    # name -> (loss(m, *args), specs, argnums, in_axes)
    "take": (lambda m, x, i: (m.take(x, i, axis=1) ** 2).sum(), [(F, (2, 3)), (I(3), (4,))],
             0, (0, None)),
    "take_batched_indices": (
        lambda m, x, i: (m.take(x, i, axis=1) * _w(m, (2, 4))).sum(),
        [(F, (2, 3)), (I(3), (4,))], 0, (1, 0)),
    "take_along_axis": (
        lambda m, x, i: (m.take_along_axis(x, i, axis=0) ** 3).sum(),
        [(F, (3, 2)), (I(3), (2, 2))], 0, (-1, 0)),
    "getitem": (lambda m, x, i: (m.sin(x[i, 1:]) * x[0, :1]).sum(), [(F, (3, 3)), (I(3), (2,))],
                0, (2, 0)),
    "setitem": (
        lambda m, x, i, v: (_set(m, x, i, v * v) * _w(m, (4, 3))).sum(),
        [(F, (4, 3)), (I(4), (2,)), (F, (2, 3))], (0, 2), (1, None, 0)),
    "slice_update": (
        lambda m, x, v: (_set(m, x, slice(1, 3), m.exp(v)) ** 2).sum(),
        [(F, (4, 2)), (F, (2, 2))], (0, 1), (0, -1)),
    "slice_update_unbatched_zeros": (  # its vjp slice-updates (unbatched) zeros into x's cot
        lambda m, x, v: (_set(m, x, slice(1, 3), m.exp(v)) ** 2).sum(),
        [(F, (4, 2)), (F, (2, 2))], 0, (0, None)),
    "shape_ops": (
        lambda m, a, b: (m.pad(m.concatenate([a, b.T], axis=0), 1).reshape(-1, 2)[::2]
                         * m.broadcast_to(b[:1, :1], (8, 2))).sum(),
        [(F, (2, 3)), (F, (3, 2))], (0, 1), (1, 0)),
    "split_squeeze": (
        lambda m, x: (lambda p: (m.squeeze(p[0], 2) * m.squeeze(p[2], (0, 2))).sum())(
            m.split(m.expand_dims(x, 0), 3, axis=2)), [(F, (2, 3))], 0, (0,)),
}


# The vjp of a slice update writes unbatched zeros into a batched cotangent:
# MLX's SliceUpdate::vmap bug again (see _mlx_bug).
GRAD_MLX_BUGS = {"slice_update", "slice_update_unbatched_zeros"}


def _grad_vmapped(m, name):
    loss, _, argnums, in_axes = GRADS[name]
    return m.vmap(m.grad(lambda *xs: loss(m, *xs), argnums=argnums), in_axes=in_axes)


@pytest.mark.parametrize("name", list(GRADS))
def test_vmap_of_grad(name):
    loss, specs, argnums, in_axes = GRADS[name]
    xs = _inputs(mx, specs, in_axes)
    got = _grad_vmapped(mx, name)(*xs)
    g = mx.grad(lambda *xs: loss(mx, *xs), argnums=argnums)
    _assert_stack(got, 0, _loop(lambda m, *e: g(*e), xs, in_axes), exact=False)
    if real_mx is not None:
        theirs = _grad_vmapped(real_mx, name)(*_inputs(real_mx, specs, in_axes))
        if name in GRAD_MLX_BUGS:
            assert _differs(_leaves(got), _leaves(theirs)), "MLX's SliceUpdate::vmap is fixed"
            return
        for o, t in zip(_leaves(got), _leaves(theirs)):
            assert_same_as_mlx(o, t)
