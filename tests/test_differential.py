"""Differential tests: each program runs on mlxref.core and on real mlx.core.

A program is ``program(m, *arrays)`` written against a module ``m`` (either
library), fed arrays built from the same Python lists. Values, vjp, jvp,
grad/value_and_grad, vmap, custom_function and checkpoint results are compared
with a float32 tolerance. Where mlxref deliberately differs from MLX (README,
"Where mlxref differs from MLX") a test states both behaviours.
"""

import math

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, needs_mlx, real_mx

pytestmark = needs_mlx

RTOL, ATOL = 1e-4, 1e-5

A23 = [[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]]
B23 = [[-0.3, 0.8, 1.1], [0.6, -1.4, 0.2]]
C32 = [[0.4, -0.2], [1.0, 0.5], [-0.7, 0.9]]
V3 = [0.3, -0.6, 1.2]
V4 = [0.9, -0.4, 0.1, 1.7]
POS23 = [[0.5, 1.25, 2.0], [1.5, 0.25, 0.75]]


# --- the programs ---------------------------------------------------------------

def p_chain(m, x):
    return m.sin(x) * m.exp(x) + m.tanh(x) / 2.0


def p_poly(m, x, y):
    return x * x * y - 3.0 * x + y ** 2


def p_log_sqrt(m, x):
    return m.log(x) + m.sqrt(x) * m.abs(x - 1.0)


def p_broadcast_row(m, x, v):
    return x * v + v


def p_broadcast_col(m, x, c):
    return m.maximum(x, m.reshape(c, (2, 1))) - m.minimum(x, 0.5)


def p_sum_axis(m, x):
    return m.sum(x * x, axis=1)


def p_mean_keepdims(m, x):
    return x - m.mean(x, axis=0, keepdims=True)


def p_max_min(m, x):
    return m.max(x, axis=0) * m.min(x, axis=1, keepdims=True)


def p_prod_var(m, x):
    return m.prod(x, axis=1) + m.var(x, axis=1)


def p_matmul(m, x, c):
    return m.matmul(x, c)


def p_matmul_op(m, x, y):
    return x @ m.transpose(y) + 1.0


def p_softmax(m, x):
    return m.softmax(x, axis=-1)


def p_logsumexp(m, x):
    return m.logsumexp(x, axis=0)


def p_logsumexp_keep(m, x):
    return x - m.logsumexp(x, axis=1, keepdims=True)


def p_index_int(m, x):
    return x[1] * x[0, 2]


def p_slice(m, x):
    return x[:, 1:] * 2.0 - x[::-1, :2]


def p_gather(m, v):
    return v[m.array([2, 0, 0, 3])] * v[1]


def p_take(m, x):
    return m.take(x, m.array([2, 0]), axis=1)


def p_concat_stack(m, x, y):
    return m.stack([m.concatenate([x, y], axis=0), m.concatenate([y, x], axis=0)], axis=1)


def p_reshape_transpose(m, x):
    return m.transpose(m.reshape(x, (3, 2)), (1, 0)) * x


def p_where(m, x, y):
    return m.where(x > y, x * y, x - y)


def p_clip(m, x):
    return m.clip(x, -0.5, 1.0) * x


def p_cumsum(m, x):
    return m.cumsum(x, axis=1) * x


def p_cumsum_rev(m, v):
    return m.cumsum(v * v, reverse=True)


def p_outer(m, v):
    return m.expand_dims(v, 0) * m.squeeze(m.expand_dims(m.expand_dims(v, 1), 2), 2)


def p_scalar_out(m, x, y):
    return m.sum(m.sigmoid(x) * y)


def p_power_div(m, x, y):
    return m.power(x, 1.5) / (1.0 + y * y)


PROGRAMS = [
    ("chain", p_chain, [A23]),
    ("poly", p_poly, [A23, B23]),
    ("log_sqrt", p_log_sqrt, [POS23]),
    ("broadcast_row", p_broadcast_row, [A23, V3]),
    ("broadcast_col", p_broadcast_col, [A23, [0.1, -0.2]]),
    ("sum_axis", p_sum_axis, [A23]),
    ("mean_keepdims", p_mean_keepdims, [A23]),
    ("max_min", p_max_min, [A23]),
    ("prod_var", p_prod_var, [A23]),
    ("matmul", p_matmul, [A23, C32]),
    ("matmul_op", p_matmul_op, [A23, B23]),
    ("softmax", p_softmax, [A23]),
    ("logsumexp", p_logsumexp, [A23]),
    ("logsumexp_keep", p_logsumexp_keep, [A23]),
    ("index_int", p_index_int, [A23]),
    ("slice", p_slice, [A23]),
    ("gather", p_gather, [V4]),
    ("take", p_take, [A23]),
    ("concat_stack", p_concat_stack, [A23, B23]),
    ("reshape_transpose", p_reshape_transpose, [A23]),
    ("where", p_where, [A23, B23]),
    ("clip", p_clip, [A23]),
    ("cumsum", p_cumsum, [A23]),
    ("cumsum_rev", p_cumsum_rev, [V4]),
    ("outer", p_outer, [V3]),
    ("scalar_out", p_scalar_out, [A23, B23]),
    ("power_div", p_power_div, [POS23, B23]),
]
IDS = [p[0] for p in PROGRAMS]


# --- helpers --------------------------------------------------------------------

def arrays(m, lists):
    return [m.array(a, dtype=m.float32) for a in lists]


def pattern(shape, k=0):
    """Deterministic float values of a given shape, as nested Python lists."""
    n = 1
    for s in shape:
        n *= s
    flat = [((i * 5 + k * 3) % 7 - 3) * 0.25 + 0.1 for i in range(n)]

    def build(dims, off):
        if not dims:
            return flat[off]
        step = _count(dims[1:])
        return [build(dims[1:], off + i * step) for i in range(dims[0])]

    return build(list(shape), 0)


def _count(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def same(ours, theirs):
    """Recursively compare (lists/tuples of) mlxref arrays with MLX arrays."""
    if isinstance(ours, (list, tuple)):
        assert isinstance(theirs, (list, tuple)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    else:
        assert_same_as_mlx(ours, theirs, rtol=RTOL, atol=ATOL)


def both(run):
    """``run(m)`` on both libraries; compare."""
    same(run(mx), run(real_mx))


def scalarize(m, fn):
    return lambda *xs: m.sum(fn(m, *xs))


# --- (a) values -----------------------------------------------------------------

@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_values(name, fn, args):
    both(lambda m: fn(m, *arrays(m, args)))


# --- (b) vjp --------------------------------------------------------------------

@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_vjp(name, fn, args):
    out_shape = fn(real_mx, *arrays(real_mx, args)).shape
    cot = pattern(out_shape, 1)

    def run(m):
        outs, grads = m.vjp(
            lambda *xs: fn(m, *xs), arrays(m, args), [m.array(cot, dtype=m.float32)]
        )
        return list(outs) + list(grads)

    both(run)


# --- (c) jvp --------------------------------------------------------------------

@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_jvp(name, fn, args):
    shapes = [a.shape for a in arrays(real_mx, args)]
    tans = [pattern(s, 2 + i) for i, s in enumerate(shapes)]

    def run(m):
        outs, jv = m.jvp(lambda *xs: fn(m, *xs), arrays(m, args), arrays(m, tans))
        return list(outs) + list(jv)

    both(run)


# --- (d) grad / value_and_grad -------------------------------------------------

@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_grad_all_argnums(name, fn, args):
    argnums = tuple(range(len(args)))
    both(lambda m: list(m.grad(scalarize(m, fn), argnums=argnums)(*arrays(m, args))))


@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_value_and_grad_last_argnum(name, fn, args):
    argnums = (len(args) - 1,)

    def run(m):
        value, grads = m.value_and_grad(scalarize(m, fn), argnums=argnums)(*arrays(m, args))
        return [value] + list(grads)

    both(run)


@pytest.mark.parametrize("name,fn,args", [p for p in PROGRAMS if len(p[2]) == 2],
                         ids=[p[0] for p in PROGRAMS if len(p[2]) == 2])
def test_grad_reversed_argnums(name, fn, args):
    both(lambda m: list(m.grad(scalarize(m, fn), argnums=(1, 0))(*arrays(m, args))))


def test_grad_of_grad():
    def run(m):
        f = lambda x: m.sum(m.sin(x) * x * x)
        return m.grad(lambda x: m.sum(m.grad(f)(x) * m.cos(x)))(m.array(V3))

    both(run)


# --- (e) vmap -------------------------------------------------------------------

def batched(m, lists, axes):
    """Stack three variants of each input along its axis (None: unbatched)."""
    out = []
    for a, ax in zip(arrays(m, lists), axes):
        if ax is None:
            out.append(a)
        else:
            out.append(m.stack([a, a * 0.5 + 0.3, 1.0 - a], axis=ax))
    return out


VMAP_CASES = []
for _name, _fn, _args in PROGRAMS:
    n = len(_args)
    VMAP_CASES.append((_name + "-in0-out0", _fn, _args, (0,) * n, 0))
    last = tuple(len(real_mx.array(a).shape) for a in _args) if real_mx is not None else (0,) * n
    VMAP_CASES.append((_name + "-inlast-out0", _fn, _args, last, 0))
    if n == 2:
        VMAP_CASES.append((_name + "-in(1,None)-out0", _fn, _args, (1, None), 0))
        VMAP_CASES.append((_name + "-in(None,0)-out0", _fn, _args, (None, 0), 0))


@pytest.mark.parametrize("name,fn,args,in_axes,out_axes", VMAP_CASES,
                         ids=[c[0] for c in VMAP_CASES])
def test_vmap(name, fn, args, in_axes, out_axes):
    def run(m):
        g = m.vmap(lambda *xs: fn(m, *xs), in_axes=in_axes, out_axes=out_axes)
        return g(*batched(m, args, in_axes))

    both(run)


NONSCALAR = (
    [p for p in PROGRAMS if p[1](real_mx, *arrays(real_mx, p[2])).ndim >= 1]
    if real_mx is not None else []
)


@pytest.mark.parametrize("name,fn,args", NONSCALAR, ids=[p[0] for p in NONSCALAR])
def test_vmap_out_axis_last(name, fn, args):
    out_ndim = fn(real_mx, *arrays(real_mx, args)).ndim

    def run(m):
        axes = (0,) * len(args)
        g = m.vmap(lambda *xs: fn(m, *xs), in_axes=axes, out_axes=out_ndim)
        return g(*batched(m, args, axes))

    both(run)


@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_vmap_of_grad(name, fn, args):
    """Per-example gradients: vmap(grad) with the first input batched."""
    def run(m):
        axes = (0,) + (None,) * (len(args) - 1)
        g = m.vmap(m.grad(scalarize(m, fn)), in_axes=axes)
        return g(*batched(m, args, axes))

    both(run)


def test_vmap_nested_axes():
    def run(m):
        f = lambda x, y: m.sum(x * y, axis=-1)
        g = m.vmap(m.vmap(f, in_axes=(0, None)), in_axes=(None, 1), out_axes=1)
        return g(m.array(A23), m.array(C32))

    both(run)


# --- (f) custom_function --------------------------------------------------------

def make_custom(m):
    """The same decorated code for both libraries: a scaled-sine with a
    deliberately non-standard vjp (2*cos) so the rule is seen to be used."""

    @m.custom_function
    def f(x, y):
        return m.sin(x) * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        x, y = primals
        return 2.0 * m.cos(x) * y * cotangent, m.sin(x) * cotangent

    return f


@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_custom_function_vjp(name, fn, args):
    def run(m):
        f = make_custom(m)

        def loss(*xs):
            out = fn(m, *xs)
            return m.sum(f(out, out + 1.0))

        argnums = tuple(range(len(args)))
        value, grads = m.value_and_grad(loss, argnums=argnums)(*arrays(m, args))
        return [value] + list(grads)

    both(run)


def test_custom_function_direct_vjp():
    def run(m):
        f = make_custom(m)
        outs, grads = m.vjp(f, [m.array(V3), m.array([2.0, 3.0, 4.0])],
                            [m.array([1.0, -1.0, 0.5])])
        return list(outs) + list(grads)

    both(run)


# --- (g) checkpoint under grad -------------------------------------------------

@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=IDS)
def test_checkpoint_grad(name, fn, args):
    def run(m):
        inner = m.checkpoint(lambda *xs: fn(m, *xs))
        loss = lambda *xs: m.sum(m.exp(inner(*xs) * 0.5))
        argnums = tuple(range(len(args)))
        value, grads = m.value_and_grad(loss, argnums=argnums)(*arrays(m, args))
        return [value] + list(grads)

    both(run)


# --- deliberate differences: each test states MLX's behaviour and mlxref's -----

def test_difference_vjp_of_full():
    """MLX 0.32 multiplies the vjp of full by the fill value; mlxref's is the identity."""
    cot = [1.0, 1.0, 1.0]
    _, (theirs,) = real_mx.vjp(lambda x: real_mx.full((3,), x), [real_mx.array(2.0)],
                               [real_mx.array(cot)])
    _, (ours,) = mx.vjp(lambda x: mx.full((3,), x), [mx.array(2.0)], [mx.array(cot)])
    assert theirs.item() == pytest.approx(6.0)  # MLX: 3 * fill value
    assert ours.item() == pytest.approx(3.0)  # mlxref: sum of cotangents
    # mlxref agrees with the same program written without full:
    _, (ref,) = real_mx.vjp(lambda x: x * real_mx.ones((3,)), [real_mx.array(2.0)],
                            [real_mx.array(cot)])
    assert_same_as_mlx(ours, ref)


def test_difference_jvp_of_all_any():
    """MLX's jvp of all/any falls into its prod rule; mlxref's is zero."""
    for name in ("all", "any"):
        _, (theirs,) = real_mx.jvp(lambda x: getattr(real_mx, name)(x),
                                   [real_mx.array([1.0, 2.0])], [real_mx.array([1.0, 1.0])])
        _, (ours,) = mx.jvp(lambda x: getattr(mx, name)(x),
                            [mx.array([1.0, 2.0])], [mx.array([1.0, 1.0])])
        assert ours.item() == 0.0
        if name == "all":
            assert theirs.item() == pytest.approx(3.0)  # d/dt prod(x + t) at t=0


def test_difference_extra_cotangents():
    """MLX ignores cotangents beyond the outputs; mlxref raises."""
    primals, cots = [[1.0, 2.0]], [[1.0, 1.0], [5.0, 5.0]]
    _, (theirs,) = real_mx.vjp(lambda x: x * 2.0, arrays(real_mx, primals),
                               arrays(real_mx, cots))
    assert theirs.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="cotangents"):
        mx.vjp(lambda x: x * 2.0, arrays(mx, primals), arrays(mx, cots))


def test_difference_non_array_output():
    """A function returning a float: MLX raises std::bad_cast, mlxref a TypeError."""
    for transform, third in (("vjp", [1.0]), ("jvp", [[1.0, 1.0]])):
        with pytest.raises(RuntimeError, match="bad_cast"):
            getattr(real_mx, transform)(lambda x: 3.0, [real_mx.array([1.0, 2.0])],
                                        arrays(real_mx, third))
        with pytest.raises(TypeError, match="must return an array"):
            getattr(mx, transform)(lambda x: 3.0, [mx.array([1.0, 2.0])], arrays(mx, third))


def test_difference_vmap_grad_checkpoint():
    """MLX 0.32 has no vmap rule for Depends; mlxref's vmap(grad(checkpoint(f)))
    equals MLX's vmap(grad(f)) without the checkpoint."""
    x = [[1.0, 2.0], [3.0, 4.0]]

    def g(m, ckpt):
        body = lambda y: m.sin(y) * y
        inner = m.checkpoint(body) if ckpt else body
        return m.vmap(m.grad(lambda y: m.sum(inner(y))))

    with pytest.raises(ValueError, match="Depends"):
        g(real_mx, True)(real_mx.array(x))
    assert_same_as_mlx(g(mx, True)(mx.array(x)), g(real_mx, False)(real_mx.array(x)),
                       rtol=RTOL, atol=ATOL)


def test_difference_logsumexp_bool_non_last_axis():
    """logsumexp of a bool array over axis 0: MLX's is off; mlxref's equals
    MLX's own logsumexp of the same values as float32."""
    b = [[True, False], [True, True], [False, False]]
    want = [math.log(2 * math.e + 1), math.log(math.e + 2)]
    theirs = real_mx.logsumexp(real_mx.array(b), axis=0)
    ours = mx.logsumexp(mx.array(b), axis=0)
    assert not all(abs(t - w) < 1e-4 for t, w in zip(theirs.tolist(), want))
    assert ours.tolist() == pytest.approx(want, rel=1e-5)
    as_float = real_mx.logsumexp(real_mx.array(b).astype(real_mx.float32), axis=0)
    assert_same_as_mlx(ours, as_float, rtol=RTOL, atol=ATOL)


def test_difference_out_of_bounds_index_mlxref_only():
    """Out-of-bounds indices and a zero slice step: mlxref raises. MLX is NOT run
    here: it reads stray memory or segfaults (a[5]) and dies with a
    floating-point exception (a[::0])."""
    a = mx.array(V3)
    with pytest.raises(IndexError, match="5"):
        a[5]
    # take is lazy: the error comes when the result is evaluated
    with pytest.raises(IndexError, match="7"):
        mx.take(a, mx.array([0, 7])).tolist()
    with pytest.raises(IndexError, match="7"):
        a[mx.array([0, 7])].tolist()
    with pytest.raises(ValueError):
        a[::0]
    # In bounds, the two agree.
    assert_same_as_mlx(a[2], real_mx.array(V3)[2])
