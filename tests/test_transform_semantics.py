"""What MLX's transforms do to the caller's objects, and the ops they need.

- grad writes its tracers into the caller's lists and dicts and puts the
  originals back afterwards; what the function assigned there stays.
- vmap's errors for axes (types and messages).
- mx.addmm (the AddMM primitive) and mx.linalg.inv / tri_inv (Inverse): values,
  errors, and their rules against composed ops.
- async_eval keeps a kernel's error for synchronize.
- buffer donation: a chain of elementwise ops on an array nothing else holds
  never holds two buffers (get_peak_memory does not grow).

Each comparison runs the same program on mlxref and on real MLX.
"""

import pytest
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx, real_mx

import mlxref.core as mx


# --- addmm ---------------------------------------------------------------------

_A = [[1.0, 2.0, -1.0], [3.0, 4.0, 0.5]]
_B = [[0.5, 1.0], [2.0, -1.0], [1.0, 3.0]]


@pytest.mark.parametrize("build", [
    lambda m: m.addmm(m.array([[1.0, 2.0], [3.0, 4.0]]), m.array(_A), m.array(_B)),
    lambda m: m.addmm(m.array([1.0, -2.0]), m.array(_A), m.array(_B), 2.0, 0.25),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_B), alpha=0.1, beta=-3),
    lambda m: m.addmm(m.array([float("nan"), 1.0]), m.array(_A), m.array(_B), beta=0.0),
    lambda m: m.addmm(m.array([1.0, 2.0]), m.array([1.0, 2.0, 3.0]), m.array(_B)),
    lambda m: m.addmm(m.array([1.0, 2.0]), m.array(_A), m.array([1.0, 2.0, 3.0])),
    lambda m: m.addmm(m.array(1.0), m.array([1.0, 2.0]), m.array([3.0, 4.0])),
    lambda m: m.addmm(m.array([1.0, 2.0]), m.ones((3, 2, 3)), m.array(_B)),
    lambda m: m.addmm(m.ones((3, 1, 2)), m.ones((3, 2, 3)), m.ones((1, 3, 2))),
    lambda m: m.addmm(m.array(1.0, m.float16), m.array(_A, m.float16), m.array(_B, m.bfloat16)),
    lambda m: m.addmm(m.array(1.0), m.array(_A, m.complex64), m.array(_B)),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_B), alpha=m.array(2.0)),
])
@needs_mlx
def test_addmm_values(build):
    ours, theirs = both(build)
    assert_same_as_mlx(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda m: m.addmm(1.0, m.array(_A), m.array(_B)),
    lambda m: m.addmm(m.array(1.0), m.array(2.0), m.array(_B)),
    lambda m: m.addmm(m.array([1, 2]), m.array([[1, 2]]), m.array([[1], [2]])),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_A)),
    lambda m: m.addmm(m.array([1.0, 2.0, 3.0]), m.array(_A), m.array(_B)),
    lambda m: m.addmm(m.ones((4, 3, 2, 2)), m.ones((3, 2, 2)), m.ones((1, 2, 2))),
    lambda m: m.addmm(m.array(1.0), m.array(_A), m.array(_B), alpha="x"),
])
@needs_mlx
def test_addmm_errors(call):
    assert_same_error(call)


def _addmm_rules(m):
    a = m.array(_A)
    b = m.array(_B)
    c = m.array([[1.0, -1.0], [0.5, 2.0]])
    ta, tb, tc = m.ones_like(a), m.full(b.shape, 0.5), m.array([[1.0, 2.0], [3.0, 4.0]])
    jvp = m.jvp(lambda a, b, c: m.addmm(c, a, b), [a, b, c], [ta, tb, tc])[1][0]
    vjp = m.vjp(lambda a, b, c: m.addmm(c, a, b, 2.0, 3.0), [a, b, c], [tc])[1]
    return [jvp] + list(vjp)


@needs_mlx
def test_addmm_rules_match_mlx():
    for ours, theirs in zip(_addmm_rules(mx), _addmm_rules(real_mx)):
        assert_same_as_mlx(ours, theirs)


def test_addmm_jvp_keeps_alpha_and_beta():
    # MLX 0.32 leaves alpha and beta out of the tangent; mlxref gives the
    # derivative of alpha a@b + beta c, the same as the composed ops'.
    a, b, c = mx.array(_A), mx.array(_B), mx.array([[1.0, -1.0], [0.5, 2.0]])
    ta, tb, tc = mx.ones_like(a), mx.full(b.shape, 0.5), mx.array([[1.0, 2.0], [3.0, 4.0]])
    got = mx.jvp(lambda a, b, c: mx.addmm(c, a, b, 2.0, 3.0), [a, b, c], [ta, tb, tc])[1][0]
    want = mx.jvp(lambda a, b, c: 2.0 * (a @ b) + 3.0 * c, [a, b, c], [ta, tb, tc])[1][0]
    assert mx.allclose(got, want).item()


@pytest.mark.parametrize("in_axes, shapes", [
    ((None, 0, None), ((3,), (2, 3, 4), (4, 3))),
    ((None, 1, None), ((2,), (2, 3, 4), (4, 2))),
    ((2, 0, 1), ((3, 3, 2), (2, 3, 4), (4, 2, 3))),
    ((0, None, None), ((2, 3, 2), (3, 4), (4, 2))),  # only c batched: MLX fails
])
def test_addmm_vmap_matches_a_loop(in_axes, shapes):
    mx.random.seed(3)
    c, a, b = (mx.random.uniform(shape=s) for s in shapes)
    out = mx.vmap(mx.addmm, in_axes=in_axes)(c, a, b)
    size = next(x.shape[ax] for x, ax in zip((c, a, b), in_axes) if ax is not None)

    def pick(x, ax, i):
        return x if ax is None else mx.take(x, i, axis=ax)

    want = mx.stack([mx.addmm(*(pick(x, ax, i) for x, ax in zip((c, a, b), in_axes)))
                     for i in range(size)])
    assert out.shape == want.shape
    assert mx.allclose(out, want, rtol=1e-5, atol=1e-6).item()


# --- linalg.inv and tri_inv ------------------------------------------------------

_M = [[4.0, 7.0, 2.0], [3.0, 6.0, 1.0], [2.0, 5.0, 3.0]]


@pytest.mark.parametrize("build", [
    lambda m: m.linalg.inv(m.array(_M)),
    lambda m: m.linalg.inv(m.array([_M, [[2.0, 0, 0], [0, 0, 1.0], [0, 3.0, 0]]])),
    lambda m: m.linalg.inv(m.array([[1.0, 2.0], [3.0, 4.0]], m.float64)),
    lambda m: m.linalg.inv(m.array([[1e-30, 0.0], [0.0, 1e-30]])),
    lambda m: m.linalg.inv(m.array([[float("nan"), 0.0], [0.0, 1.0]])),
    lambda m: m.linalg.tri_inv(m.array(_M)),
    lambda m: m.linalg.tri_inv(m.array(_M), upper=True),
    lambda m: m.vmap(m.linalg.inv, in_axes=2)(m.stack([m.array(_M), 2 * m.array(_M)], axis=2)),
])
@needs_mlx
def test_inv_values(build):
    ours, theirs = both(build)
    assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(m.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0]])),
    lambda m: m.linalg.inv(m.array([1.0, 2.0])),
    lambda m: m.linalg.inv(m.array([[1, 2], [3, 4]])),
    lambda m: m.linalg.inv(m.array([[1, 2], [3, 4]], m.float16)),
    lambda m: m.linalg.inv([[1.0, 2.0], [3.0, 4.0]]),
    # singular: raised when evaluated, with LAPACK's first zero pivot
    lambda m: m.eval(m.linalg.inv(m.array([[1.0, 2.0], [2.0, 4.0]]))),
    lambda m: m.eval(m.linalg.inv(m.zeros((2, 2)))),
    lambda m: m.eval(m.linalg.inv(m.array([[[1.0, 0], [0, 1.0]], [[1.0, 0], [0, 0.0]]]))),
    lambda m: m.eval(m.linalg.tri_inv(m.array([[1.0, 5.0], [3.0, 0.0]]))),
])
@needs_mlx
def test_inv_errors(call):
    assert_same_error(call)


def test_inv_of_a_singular_matrix_is_lazy():
    a = mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]))  # no error yet
    with pytest.raises(RuntimeError, match=r"LU factorization failed with error code 2"):
        mx.eval(a)


def test_inv_rules_are_the_derivative():
    # MLX 0.32 has no vjp or jvp for Inverse; mlxref's are checked against
    # finite differences here (and against SymPy in check-rules).
    a = mx.array(_M, mx.float64)
    t = mx.array([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.1, 0.0]], mx.float64)
    eps = 1e-6
    fd = (mx.linalg.inv(a + eps * t) - mx.linalg.inv(a - eps * t)) / (2 * eps)
    jvp = mx.jvp(mx.linalg.inv, [a], [t])[1][0]
    assert mx.allclose(jvp, fd, rtol=1e-6, atol=1e-8).item()
    g = mx.array([[1.0, 0.0, 2.0], [0.0, -1.0, 0.0], [0.5, 0.0, 1.0]], mx.float64)
    vjp = mx.vjp(mx.linalg.inv, [a], [g])[1][0]
    # <vjp, t> = <g, jvp>
    assert abs((vjp * t).sum().item() - (g * jvp).sum().item()) < 1e-9


def test_tri_inv_gradient_stays_in_its_triangle():
    a = mx.array(_M)
    g = mx.grad(lambda x: mx.linalg.tri_inv(x).sum())(a)
    assert g.tolist()[0][1:] == [0.0, 0.0] and g.tolist()[1][2] == 0.0
