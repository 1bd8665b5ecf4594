"""Issue 14's shape, creation and alias ops, with real MLX as the oracle.

flip, roll, unstack, atleast_1d/2d/3d, meshgrid, broadcast_arrays, diff,
tri/tril/triu, empty, empty_like, full_like, contiguous, as_strided,
tensordot, kron, the window functions, convolve, and the aliases (acos ...
atanh, atan2, pow, concat, permute_dims, matrix_transpose, positive,
logical_xor). Each case is run on both libraries: the same shape, dtype and
values (float sums to a tolerance), or the same error type and message.
Gradients (grad, jvp) and vmap are compared the same way.
"""

import numpy as np
import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, both, needs_mlx

cases = {}

A = lambda m: m.arange(6).reshape(2, 3)
cases['flip2'] = lambda m: m.flip(A(m), 2)
cases['flip00'] = lambda m: m.flip(A(m), (0, 0))
cases['flipall'] = lambda m: m.flip(A(m))
cases['flip-1'] = lambda m: m.flip(A(m), -1)
cases['flip0d'] = lambda m: m.flip(m.array(3))
cases['flipempty'] = lambda m: m.flip(m.zeros((0, 2)), 0)
cases['flipf'] = lambda m: m.flip(A(m), 1.0)
for sh in [1, -7, 0, 3, 6, 100]:
    cases[f'roll{sh}'] = lambda m, sh=sh: m.roll(A(m), sh)
    cases[f'roll{sh}ax'] = lambda m, sh=sh: m.roll(A(m), sh, 1)
    cases[f'roll{sh}axs'] = lambda m, sh=sh: m.roll(A(m), sh, (0, -1))
cases['rollbadax'] = lambda m: m.roll(A(m), 1, 2)
cases['rollfew'] = lambda m: m.roll(A(m), (1,), (0, 1))
cases['rolltup'] = lambda m: m.roll(A(m), (1, 2))
cases['rolltupax'] = lambda m: m.roll(A(m), (1, 3), 1)
cases['rollempty'] = lambda m: m.roll(m.zeros((0, 3)), 2, 0)
cases['rollf'] = lambda m: m.roll(A(m), 1.5)
cases['rollax'] = lambda m: m.roll(A(m), (1,2), (1,0))
cases['unstack'] = lambda m: m.unstack(A(m), axis=-1)
cases['unstack2'] = lambda m: m.unstack(A(m), axis=2)
cases['unstack0'] = lambda m: m.unstack(m.zeros((0, 2)))
cases['unstack0d'] = lambda m: m.unstack(m.array(1))
cases['unstackpos'] = lambda m: m.unstack(A(m), 0)
cases['at1'] = lambda m: m.atleast_1d(m.array(1), m.array([1]))
cases['at1one'] = lambda m: m.atleast_1d(m.array(1.5))
cases['at1none'] = lambda m: m.atleast_1d()
cases['at2'] = lambda m: m.atleast_2d(m.array(1), m.array([1, 2]), A(m))
cases['at3'] = lambda m: m.atleast_3d(m.array(1), m.array([1, 2]), A(m), m.zeros((1, 2, 3, 4)))
cases['mesh'] = lambda m: m.meshgrid(m.arange(2), m.arange(3))
cases['meshij'] = lambda m: m.meshgrid(m.arange(2), m.arange(3.0), indexing='ij')
cases['meshbad'] = lambda m: m.meshgrid(m.arange(2), indexing='q')
cases['mesh0'] = lambda m: m.meshgrid()
cases['mesh1'] = lambda m: m.meshgrid(m.arange(2))
cases['mesh2d'] = lambda m: m.meshgrid(m.zeros((2, 2)), m.arange(3))
cases['mesh3s'] = lambda m: m.meshgrid(m.arange(2), m.arange(3), m.arange(4), sparse=True)
cases['mesh3'] = lambda m: m.meshgrid(m.arange(2), m.arange(3), m.arange(4))
cases['meshe'] = lambda m: m.meshgrid(m.zeros(0), m.arange(3))
cases['ba'] = lambda m: m.broadcast_arrays(m.zeros((2, 1)), m.arange(3))
cases['ba1'] = lambda m: m.broadcast_arrays(m.zeros((2, 1)))
cases['ba0'] = lambda m: m.broadcast_arrays()
cases['babad'] = lambda m: m.broadcast_arrays(m.zeros((2, 1)), m.zeros((3, 3)))
cases['diff'] = lambda m: m.diff(m.array([1, 4, 9, 16.0]))
cases['diff2'] = lambda m: m.diff(A(m) ** 2, 2, 1)
cases['diff0ax'] = lambda m: m.diff(A(m), axis=0)
cases['diffbad'] = lambda m: m.diff(A(m), 1, 2)
cases['diffneg'] = lambda m: m.diff(A(m), -1)
cases['diffbig'] = lambda m: m.diff(A(m), 5)
cases['diff0d'] = lambda m: m.diff(m.array(1))
cases['diffn0'] = lambda m: m.diff(A(m), 0)
cases['diffbool'] = lambda m: m.diff(m.array([True, False]))
cases['diffu'] = lambda m: m.diff(m.array([3, 1], m.uint8))
cases['concat'] = lambda m: m.concat([A(m), A(m)], None)
cases['concat1'] = lambda m: m.concat([A(m), A(m)], axis=-1)
cases['pd'] = lambda m: m.permute_dims(A(m))
cases['pd2'] = lambda m: m.permute_dims(m.zeros((1, 2, 3)), (2, 0, 1))
cases['mt'] = lambda m: m.matrix_transpose(A(m))
cases['cont'] = lambda m: m.contiguous(A(m).T)
cases['as1'] = lambda m: m.as_strided(A(m), (2, 2), (1, 1), 1)
cases['as2'] = lambda m: m.as_strided(A(m).T)
cases['as3'] = lambda m: m.as_strided(A(m), (3, 2, 2), (1, 0, 2))
cases['as4'] = lambda m: m.as_strided(A(m), (6,))
cases['as5'] = lambda m: m.as_strided(A(m), (0, 3), (1, 1))
cases['as6'] = lambda m: m.as_strided(A(m), (-1, 3), (1, 1))

X = lambda m: m.array(np.arange(1, 7, dtype=np.float32).reshape(2, 3) / 4)


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _loss(m, outs):
    # A weighted sum of squares, so that each output element gets its own cotangent.
    total = 0
    for k, y in enumerate(outs):
        weights = m.arange(1, y.size + 1).reshape(y.shape).astype(m.float32) + k
        total = total + (y * y * weights).sum()
    return total


RULED = {
    'flip': lambda m, x: m.flip(x, -1),
    'roll': lambda m, x: m.roll(x, 2, 1),
    'rollflat': lambda m, x: m.roll(x, -1),
    'unstack': lambda m, x: m.unstack(x, axis=1),
    'at3': lambda m, x: m.atleast_3d(x),
    'mesh': lambda m, x: m.meshgrid(x[0], x[1, :2]),
    'diff': lambda m, x: m.diff(x, 2, -1),
    'as': lambda m, x: m.as_strided(x, (3, 2), (1, 1), 1),
    'cont': lambda m, x: m.contiguous(x.T),
    'ba': lambda m, x: m.broadcast_arrays(x, x[:1]),
}
for n, f in RULED.items():
    cases['grad_' + n] = lambda m, f=f: m.grad(lambda x: _loss(m, _as_list(f(m, x))))(X(m))
    cases['jvp_' + n] = lambda m, f=f: m.jvp(lambda x: _as_list(f(m, x)), [X(m)], [X(m) * 3 - 1])[1]
    if n != 'as':  # MLX has no vmap for AsStrided (tested below)
        cases['vmap_' + n] = lambda m, f=f: m.vmap(lambda x: _as_list(f(m, x)), in_axes=1)(
            m.stack([X(m), X(m) * 2, X(m) + 1], 1))
cases['vmap_as'] = lambda m: m.vmap(lambda x: m.as_strided(x, (2,), (1,)))(X(m))


A6 = lambda m: m.arange(6.).reshape(2, 3)
cases['asneg'] = lambda m: m.as_strided(A6(m), (3,), (-1,), 4)
cases['asneg2'] = lambda m: m.as_strided(A6(m), (2, 2), (-2, 1), 3)
cases['asoff'] = lambda m: m.as_strided(A6(m), offset=-1)
cases['gas'] = lambda m: m.grad(lambda x: (m.as_strided(x, (2, 2), (-2, 1), 3) ** 2).sum())(A6(m))
cases['gba'] = lambda m: m.grad(lambda x, y: sum((z ** 2).sum() for z in m.broadcast_arrays(x, y)), argnums=(0, 1))(A6(m)[:, :1], A6(m)[0])
cases['gmesh'] = lambda m: m.grad(lambda x, y: sum((z ** 3).sum() for z in m.meshgrid(x, y, indexing='ij')), argnums=(0, 1))(A6(m)[0], A6(m)[1, :2])
cases['vmesh'] = lambda m: m.vmap(lambda x: m.meshgrid(x, x[:2])[0])(A6(m))
cases['vdiff'] = lambda m: m.vmap(lambda x: m.diff(x, 1, 0), in_axes=1)(A6(m))
cases['vroll'] = lambda m: m.vmap(lambda x: m.roll(x, 1), in_axes=1)(A6(m))
cases['cont2'] = lambda m: m.contiguous(A6(m), True)
cases['contb'] = lambda m: m.contiguous([1])
cases['diff0'] = lambda m: m.diff(m.zeros((0, 3)), 1, 0)
cases['rollneg'] = lambda m: m.roll(A6(m), (-1, 5), (-1, -2))
cases['flipneg'] = lambda m: m.flip(A6(m), [-1, 0])

DTYPES = ['bool_', 'uint8', 'int16', 'int64', 'float16', 'bfloat16', 'float64', 'complex64']
DTYPED = {
    'flip': lambda m, x: m.flip(x, 0),
    'roll': lambda m, x: m.roll(x, 1, -1),
    'diff': lambda m, x: m.diff(x),
    'as_strided': lambda m, x: m.as_strided(x, (2, 2), (2, 1)),
    'contiguous': lambda m, x: m.contiguous(x.T),
}
for _dtype in DTYPES:
    for _op, _f in DTYPED.items():
        cases[f'dtype_{_op}_{_dtype}'] = lambda m, f=_f, d=_dtype: f(
            m, m.array([[0, 1, 2], [3, 0, 5]]).astype(getattr(m, d)))

# MLX's binding takes unstack's axis by keyword only; Python's message differs.
del cases["unstackpos"]
# MLX has no vmap for AsStrided: mlxref has one (tested below against the
# per-example results instead).
del cases["vmap_as"]


def _compare(ours, theirs):
    if isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _compare(o, t)
    else:
        assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5)


@needs_mlx
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_mlx(name):
    result = both(cases[name])
    if result is not None:
        _compare(*result)


def test_new_handles_and_nodes():
    a = mx.arange(6).reshape(2, 3)
    for b in (mx.positive(a), mx.atleast_1d(a), mx.atleast_2d(a)):
        assert b is not a and b.id() == a.id()
    c = mx.contiguous(a.T)
    assert c.id() != a.T.id() and mx.array_equal(c, a.T)


def test_as_strided_refuses_reads_outside_the_array():
    # MLX reads past its buffer here; mlxref names the element.
    with pytest.raises(ValueError, match=r"\[as_strided\] The view reads element 6 of an array of 6"):
        mx.as_strided(mx.arange(6), (2, 2), (3, 3))
    with pytest.raises(ValueError, match=r"element -1"):
        mx.as_strided(mx.arange(6), (2,), (-1,))


def test_as_strided_vmap_views_each_example():
    x = mx.arange(12.0).reshape(3, 4)
    out = mx.vmap(lambda r: mx.as_strided(r, (3, 2), (1, 1)), in_axes=0)(x)
    want = mx.stack([mx.as_strided(x[i], (3, 2), (1, 1)) for i in range(3)])
    assert out.shape == (3, 3, 2) and mx.array_equal(out, want)
    out = mx.vmap(lambda r: mx.as_strided(r, (2,), (1,), 1), in_axes=1)(x)
    assert out.shape == (4, 2) and mx.array_equal(out, mx.stack([x[1:, i] for i in range(4)]))


def test_as_strided_vjp_adds_overlapping_reads():
    g = mx.grad(lambda x: mx.as_strided(x, (3, 2), (1, 1)).sum())(mx.arange(4.0))
    assert g.tolist() == [1.0, 2.0, 2.0, 1.0]


def test_atleast_and_meshgrid_refuse_non_arrays():
    # MLX's bindings fail their cast with a bare "std::bad_cast" here.
    with pytest.raises(TypeError, match=r"\[atleast_2d\] Expected arrays, got list"):
        mx.atleast_2d([1])
    with pytest.raises(TypeError, match=r"\[meshgrid\] Expected arrays, got int"):
        mx.meshgrid(mx.arange(2), 3)


def test_as_strided_needs_a_stride_per_axis():
    # MLX reads past the end of the strides it was given here.
    with pytest.raises(ValueError, match=r"\[as_strided\] Got 1 strides for a shape of 2 dimensions"):
        mx.as_strided(mx.arange(6), (2, 2), (1,))

