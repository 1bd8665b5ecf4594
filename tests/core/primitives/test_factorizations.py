"""Tests of mx.linalg's factorizations: qr, svd, eigh, eigvalsh, eig, eigvals, pinv.

Values are compared with real MLX where MLX's are deterministic (Q and R,
singular values, eigenvalues, pinv, the zero-size cases, the errors), and up
to sign (or by the defining equations) where mlxref's signs are not LAPACK's:
singular vectors. Eigenvectors and the order of eig's eigenvalues follow
LAPACK's steps, and are compared with MLX's as they are. MLX has no
derivative rules for these primitives, so the gradients and jvps are checked
against closed forms and central differences in float64, and MLX's own
"Not implemented" is checked where mlxref keeps it (Eig).
"""

import re

import pytest

import mlxref.core as mx
from mlxref.core.primitives.factorizations import QRF, SVD, Eig, Eigh
from support import needs_mlx, real_mx

# NumPy is not in a student copy's venv (mlxref assignment make): these tests skip there
np = pytest.importorskip("numpy")

RNG = np.random.default_rng(7)
GENERAL = {shape: RNG.standard_normal(shape) for shape in
           [(2, 2), (3, 2), (2, 3), (4, 4), (2, 3, 3), (2, 2, 4), (3, 1), (1, 3)]}


def _np(x):
    return np.array(x.tolist())


def _both(values, dtype="float32"):
    """The same values as an mlxref array and a real MLX array."""
    return (mx.array(values.tolist(), getattr(mx, dtype)),
            real_mx.array(values.tolist(), getattr(real_mx, dtype)))


def _symmetric(shape):
    a = RNG.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


def _align_signs(x, reference, axis):
    """``x`` with each column (axis=-2 sums) or row flipped to match ``reference``'s
    sign: singular vectors and eigenvectors are unique only up to sign."""
    dots = np.sum(x * reference, axis=axis, keepdims=True)
    return x * np.where(dots < 0, -1.0, 1.0)


cpu = None if real_mx is None else real_mx.cpu


# --- qr -----------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("shape", list(GENERAL))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qr_is_mlxs_householder_qr(shape, dtype):
    ours, theirs = _both(GENERAL[shape], dtype)
    q, r = mx.linalg.qr(ours)
    rq, rr = real_mx.linalg.qr(theirs, stream=cpu)
    k = min(shape[-2:])
    assert q.shape == tuple(rq.shape) == shape[:-1] + (k,)
    assert r.shape == tuple(rr.shape) == shape[:-2] + (k, shape[-1])
    assert q.dtype is r.dtype is getattr(mx, dtype)
    # Householder with LAPACK's signs: the same factors, not just the same product
    np.testing.assert_allclose(_np(q), np.array(rq), atol=2e-6)
    np.testing.assert_allclose(_np(r), np.array(rr), atol=5e-6)
    np.testing.assert_allclose(_np(q) @ _np(r), GENERAL[shape], atol=1e-5)
    assert np.all(np.tril(_np(r), -1) == 0)


@needs_mlx
@pytest.mark.parametrize("rows", [[[0.0, 1.0], [0.0, 2.0]], [[-3.0, 1.0], [0.0, 2.0]],
                                  [[1.0, 2.0], [0.0, 0.0], [0.0, 5.0]]])
def test_qr_leaves_a_column_that_is_already_reduced(rows):
    # LAPACK reflects nothing when a column is zero below the diagonal, so
    # R keeps that element's sign (and a zero column stays zero)
    q, r = mx.linalg.qr(mx.array(rows))
    rq, rr = real_mx.linalg.qr(real_mx.array(rows), stream=cpu)
    assert q.tolist() == rq.tolist() and r.tolist() == rr.tolist()


@needs_mlx
@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4), (5, 0), (0, 5)])
def test_qr_of_empty_matrices(shape):
    q, r = mx.linalg.qr(mx.zeros(shape))
    rq, rr = real_mx.linalg.qr(real_mx.zeros(shape), stream=cpu)
    assert (q.shape, r.shape) == (tuple(rq.shape), tuple(rr.shape))


# --- svd ----------------------------------------------------------------------------


def _check_svd(a, u, s, vt):
    """The factors' shapes, orthogonality and product."""
    m, n = a.shape[-2:]
    k = min(m, n)
    u, s, vt = _np(u), _np(s), _np(vt)
    assert u.shape == a.shape[:-2] + (m, m) and vt.shape == a.shape[:-2] + (n, n)
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=1e-5)
    np.testing.assert_allclose(np.conj(np.swapaxes(u, -1, -2)) @ u,
                               np.broadcast_to(np.eye(m), u.shape), atol=1e-5)
    np.testing.assert_allclose(vt @ np.conj(np.swapaxes(vt, -1, -2)),
                               np.broadcast_to(np.eye(n), vt.shape), atol=1e-5)
    assert np.all(np.diff(s, axis=-1) <= 0)  # descending


@needs_mlx
@pytest.mark.parametrize("shape", list(GENERAL))
def test_svd_matches_mlx_up_to_the_signs_of_the_vectors(shape):
    ours, theirs = _both(GENERAL[shape])
    u, s, vt = mx.linalg.svd(ours)
    ru, rs, rvt = real_mx.linalg.svd(theirs, stream=cpu)
    assert (u.dtype, s.dtype, vt.dtype) == (mx.float32,) * 3
    np.testing.assert_allclose(_np(s), np.array(rs), atol=2e-6)
    _check_svd(GENERAL[shape], u, s, vt)
    k = min(shape[-2:])
    np.testing.assert_allclose(_align_signs(_np(u)[..., :k], np.array(ru)[..., :k], -2),
                               np.array(ru)[..., :k], atol=1e-5)
    np.testing.assert_allclose(_align_signs(_np(vt)[..., :k, :], np.array(rvt)[..., :k, :], -1),
                               np.array(rvt)[..., :k, :], atol=1e-5)
    values = mx.linalg.svd(ours, compute_uv=False)
    assert values.tolist() == s.tolist() and values.dtype is mx.float32


@needs_mlx
def test_svd_of_complex_and_float64_matrices():
    a = RNG.standard_normal((2, 3, 4)) + 1j * RNG.standard_normal((2, 3, 4))
    u, s, vt = mx.linalg.svd(mx.array(a.tolist(), mx.complex64))
    assert (u.dtype, s.dtype, vt.dtype) == (mx.complex64, mx.float32, mx.complex64)
    rs = real_mx.linalg.svd(real_mx.array(a.astype(np.complex64)), compute_uv=False, stream=cpu)
    np.testing.assert_allclose(_np(s), np.array(rs), atol=1e-5)
    _check_svd(a, u, s, vt)
    b = GENERAL[(3, 2)]
    u, s, vt = mx.linalg.svd(mx.array(b.tolist(), mx.float64))
    assert s.dtype is mx.float64
    np.testing.assert_allclose(_np(s), np.linalg.svd(b, compute_uv=False), rtol=1e-13)


@needs_mlx
def test_svd_of_a_rank_deficient_matrix_completes_u():
    a = [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]  # rank 1
    u, s, vt = mx.linalg.svd(mx.array(a))
    rs = real_mx.linalg.svd(real_mx.array(a), compute_uv=False, stream=cpu)
    np.testing.assert_allclose(_np(s), np.array(rs), atol=1e-6)
    _check_svd(np.array(a), u, s, vt)


@needs_mlx
@pytest.mark.parametrize("shape", [(0, 4, 4), (3, 0, 0), (2, 5, 0), (2, 0, 5), (5, 0), (0, 5)])
def test_svd_of_empty_matrices_is_the_identity(shape):
    u, s, vt = mx.linalg.svd(mx.zeros(shape))
    ru, rs, rvt = real_mx.linalg.svd(real_mx.zeros(shape), stream=cpu)
    for ours, theirs in ((u, ru), (s, rs), (vt, rvt)):
        assert ours.shape == tuple(theirs.shape) and ours.tolist() == theirs.tolist()
    assert mx.linalg.svd(mx.zeros(shape), compute_uv=False).shape == tuple(rs.shape)


# --- eigh ---------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("shape", [(2, 2), (4, 4), (3, 3, 3), (1, 1)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_mlx_up_to_the_signs_of_the_vectors(shape, uplo):
    a = _symmetric(shape)
    ours, theirs = _both(a)
    w, v = mx.linalg.eigh(ours, UPLO=uplo)
    rw, rv = real_mx.linalg.eigh(theirs, UPLO=uplo, stream=cpu)
    assert (w.shape, v.shape) == (tuple(rw.shape), tuple(rv.shape))
    np.testing.assert_allclose(_np(w), np.array(rw), atol=5e-6)
    np.testing.assert_allclose(_align_signs(_np(v), np.array(rv), -2), np.array(rv), atol=1e-5)
    assert mx.linalg.eigvalsh(ours, UPLO=uplo).tolist() == w.tolist()


@needs_mlx
@pytest.mark.parametrize("uplo", ["L", "U", "l", "u", "X", "LU", "UL", ""])
def test_eigh_reads_the_triangle_mlx_reads(uplo):
    # MLX passes LAPACK "lower" only when UPLO starts with "L" ("l" is upper)
    a = [[1.0, 999.0], [2.0, 3.0]]
    ours = mx.linalg.eigvalsh(mx.array(a), UPLO=uplo)
    theirs = real_mx.linalg.eigvalsh(real_mx.array(a), UPLO=uplo, stream=cpu)
    np.testing.assert_allclose(_np(ours), np.array(theirs), rtol=1e-6)


@needs_mlx
def test_eigh_of_a_hermitian_matrix():
    a = RNG.standard_normal((2, 4, 4)) + 1j * RNG.standard_normal((2, 4, 4))
    a = a + np.conj(np.swapaxes(a, -1, -2))
    w, v = mx.linalg.eigh(mx.array(a.tolist(), mx.complex64))
    rw = real_mx.linalg.eigvalsh(real_mx.array(a.astype(np.complex64)), stream=cpu)
    assert (w.dtype, v.dtype) == (mx.float32, mx.complex64)
    np.testing.assert_allclose(_np(w), np.array(rw), atol=1e-5)
    np.testing.assert_allclose(a @ _np(v), _np(w)[..., None, :] * _np(v), atol=1e-5)


@needs_mlx
@pytest.mark.parametrize("shape", [(0, 4, 4), (3, 0, 0), (0, 0)])
def test_eigh_and_eig_of_empty_matrices(shape):
    for name in ("eigh", "eig"):
        ours = getattr(mx.linalg, name)(mx.zeros(shape))
        theirs = getattr(real_mx.linalg, name)(real_mx.zeros(shape), stream=cpu)
        assert [(o.shape, o.dtype.name) for o in ours] == [
            (tuple(t.shape), str(t.dtype).split(".")[-1]) for t in theirs]


# --- eig ----------------------------------------------------------------------------


def _check_eig(a, w, v):
    w, v = _np(w), _np(v)
    np.testing.assert_allclose(a @ v, w[..., None, :] * v, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=1e-6)


@needs_mlx
@pytest.mark.parametrize("rows", [[[1.0, 1.0], [3.0, 4.0]], [[1.0, -1.0], [1.0, 1.0]],
                                  [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [4.0, 1.0, 5.0]],
                                  [[0.0, 1.0], [-1.0, 0.0]], [[2.0, 1.0], [0.0, 2.0]]])
def test_eig_matches_mlx_as_a_set(rows):
    w, v = mx.linalg.eig(mx.array(rows))
    rw = real_mx.linalg.eigvals(real_mx.array(rows), stream=cpu)
    assert (w.dtype, v.dtype) == (mx.complex64, mx.complex64)
    np.testing.assert_allclose(np.sort_complex(_np(w)), np.sort_complex(np.array(rw)), atol=1e-5)
    if rows != [[2.0, 1.0], [0.0, 2.0]]:  # (a Jordan block has one eigenvector)
        _check_eig(np.array(rows), w, v)
    assert mx.linalg.eigvals(mx.array(rows)).tolist() == w.tolist()


def test_eig_of_a_real_matrix_gives_real_eigenvalues_exactly_and_pairs_in_lapacks_order():
    # the rotation by 90 degrees, block-diagonal with a real eigenvalue 3
    w, v = mx.linalg.eig(mx.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]]))
    values = w.tolist()
    assert 3.0 + 0j in values and [x.imag for x in values if x.imag != 0] == [1.0, -1.0]
    real_column = _np(v)[:, values.index(3.0 + 0j)]
    assert np.all(real_column.imag == 0)


@needs_mlx
def test_eig_of_random_and_complex_matrices():
    a = RNG.standard_normal((3, 5, 5))
    w, v = mx.linalg.eig(mx.array(a.tolist()))
    rw = real_mx.linalg.eigvals(real_mx.array(a.astype(np.float32)), stream=cpu)
    np.testing.assert_allclose(np.sort_complex(_np(w)), np.sort_complex(np.array(rw)), atol=1e-4)
    _check_eig(a, w, v)
    c = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    w, v = mx.linalg.eig(mx.array(c.tolist(), mx.complex64))
    _check_eig(c, w, v)
    w, v = mx.linalg.eig(mx.array(a[0].tolist(), mx.float64))
    assert w.dtype is mx.complex64  # MLX's: complex64 whatever the input


# --- eig and eigh in LAPACK's order and signs -------------------------------------------
# The kernels take LAPACK's steps (syevd, geev), so the order of the eigenvalues
# and the sign (phase) of each eigenvector are MLX's. The arithmetic is double
# where MLX's LAPACK is single, so where a sign hangs on rounding noise (a
# repeated eigenvalue, the last rotation of a converged complex pair) it can
# still differ: the random cases ask for most matrices, not all.

DOCS_MATRIX = [[1.0, -2.0], [-2.0, 1.0]]  # the matrix of MLX's docstring examples


def _same_columns(ours, theirs, tol=1e-4):
    """Per matrix of a batch: are all the eigenvectors MLX's, signs included?"""
    return np.abs(_np(ours) - np.array(theirs)).max(axis=(-2, -1)) <= tol


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("name", ["eigvals", "eig", "eigvalsh", "eigh"])
def test_mlxs_docs_examples_print_what_mlx_prints(name):
    ours = getattr(mx.linalg, name)(mx.array(DOCS_MATRIX), stream=mx.cpu)
    theirs = getattr(real_mx.linalg, name)(real_mx.array(DOCS_MATRIX), stream=cpu)
    assert repr(ours) == repr(theirs)


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("rows", [
    [[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [0.0, 0.0, 6.0]],  # triangular: balancing permutes
    [[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]],
    [[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]],
    [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]],  # a pair and a real eigenvalue
    [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [4.0, 1.0, 5.0]],
    [[1.0, 1e3], [1e-3, 1.0]],  # balancing scales it
    [[1.0, 1.0], [3.0, 4.0]], [[2.0, 1.0], [0.0, 2.0]]])
def test_eig_gives_mlxs_order_and_phases(rows):
    w, v = mx.linalg.eig(mx.array(rows))
    rw, rv = real_mx.linalg.eig(real_mx.array(rows), stream=cpu)
    np.testing.assert_allclose(_np(w), np.array(rw), atol=1e-5)
    np.testing.assert_allclose(_np(v), np.array(rv), atol=1e-5)


@pytest.mark.mlx
@needs_mlx
def test_eig_of_random_matrices_gives_mlxs_order_and_mostly_its_phases():
    rng = np.random.default_rng(33)
    matches = []
    for n in range(2, 7):
        a = rng.standard_normal((16, n, n)).astype(np.float32)
        w, v = mx.linalg.eig(mx.array(a.tolist()))
        rw, rv = real_mx.linalg.eig(real_mx.array(a), stream=cpu)
        np.testing.assert_allclose(_np(w), np.array(rw), atol=1e-4)  # the order, always
        matches += list(_same_columns(v, rv))
    assert np.mean(matches) >= 0.85  # (the Jacobi-era kernel: 22%)


@pytest.mark.mlx
@needs_mlx
def test_eigh_of_random_matrices_gives_mlxs_signs():
    rng = np.random.default_rng(33)
    matches = []
    for n in range(2, 7):
        a = rng.standard_normal((16, n, n)).astype(np.float32)
        a = (a + np.swapaxes(a, -1, -2)) / 2
        for uplo in ("L", "U"):
            w, v = mx.linalg.eigh(mx.array(a.tolist()), UPLO=uplo)
            rw, rv = real_mx.linalg.eigh(real_mx.array(a), UPLO=uplo, stream=cpu)
            np.testing.assert_allclose(_np(w), np.array(rw), atol=1e-5)
            matches += list(_same_columns(v, rv))
    assert np.mean(matches) >= 0.95  # (the Jacobi-era kernel: 18%)
    a64 = rng.standard_normal((8, 5, 5))  # float64: LAPACK's dsyevd
    a64 = a64 + np.swapaxes(a64, -1, -2)
    _, v = mx.linalg.eigh(mx.array(a64.tolist(), mx.float64))
    _, rv = real_mx.linalg.eigh(real_mx.array(a64, real_mx.float64), stream=cpu)
    assert np.all(_same_columns(v, rv, 1e-12))


@pytest.mark.mlx
@needs_mlx
def test_complex_eigh_and_eig_give_mlxs_order_and_phases():
    rng = np.random.default_rng(34)
    h = rng.standard_normal((6, 4, 4)) + 1j * rng.standard_normal((6, 4, 4))
    h = (h + np.conj(np.swapaxes(h, -1, -2))).astype(np.complex64)
    _, v = mx.linalg.eigh(mx.array(h.tolist(), mx.complex64))
    _, rv = real_mx.linalg.eigh(real_mx.array(h), stream=cpu)
    assert np.all(_same_columns(v, rv))
    c = (rng.standard_normal((6, 4, 4)) + 1j * rng.standard_normal((6, 4, 4))).astype(np.complex64)
    w, v = mx.linalg.eig(mx.array(c.tolist(), mx.complex64))
    rw, rv = real_mx.linalg.eig(real_mx.array(c), stream=cpu)
    np.testing.assert_allclose(_np(w), np.array(rw), atol=1e-4)
    # MLX 0.32 returns the conjugates of A's eigenvectors (the left eigenvectors
    # of Aᵀ, as geev gives them); mlxref returns A's: the same phases, conjugated
    assert np.all(_same_columns(mx.conjugate(v), rv))
    _check_eig(c.astype(np.complex128), w, v)


# --- pinv ---------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("rows", [[[1.0, 2.0, 3.0], [6.0, -5.0, 4.0], [-9.0, 8.0, 7.0]],
                                  [[4.0, 1.0], [4.0, 1.0]], GENERAL[(3, 2)].tolist(),
                                  GENERAL[(2, 2, 4)].tolist(), [[0.0, 0.0], [0.0, 0.0]]])
def test_pinv_matches_mlx(rows):
    ours = mx.linalg.pinv(mx.array(rows))
    theirs = real_mx.linalg.pinv(real_mx.array(rows), stream=cpu)
    assert ours.shape == tuple(theirs.shape) and ours.dtype is mx.float32
    np.testing.assert_allclose(_np(ours), np.array(theirs), atol=2e-5)


@needs_mlx
@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (0, 2, 2), (2, 0, 0), (0, 4, 3)])
def test_pinv_of_empty_matrices_has_the_transposed_shape(shape):
    ours = mx.linalg.pinv(mx.zeros(shape))
    assert ours.shape == tuple(real_mx.linalg.pinv(real_mx.zeros(shape), stream=cpu).shape)


# --- errors -------------------------------------------------------------------------

BAD = [
    ("qr", [[1, 2], [3, 4]], {}), ("qr", [1.0, 2.0], {}), ("qr", 1.0, {}),
    ("qr", [[1.0 + 1j]], {}), ("svd", [[1, 2]], {}), ("svd", [1.0], {}),
    ("eigh", [[1.0, 2.0, 3.0]], {}), ("eigh", [1.0], {}), ("eigvalsh", [[1, 2], [3, 4]], {}),
    ("eig", [[1.0, 2.0, 3.0]], {}), ("eigvals", [1.0], {}), ("eigvals", [[True]], {}),
    ("pinv", [[1.0 + 0j]], {}), ("pinv", [2.0], {}),
]


@needs_mlx
@pytest.mark.parametrize("name,value,kwargs", BAD)
def test_bad_arguments_raise_mlxs_errors(name, value, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(real_mx.linalg, name)(real_mx.array(value), stream=cpu, **kwargs)
    with pytest.raises(type(theirs.value), match=re.escape(str(theirs.value))):
        getattr(mx.linalg, name)(mx.array(value), **kwargs)


@needs_mlx
@pytest.mark.parametrize("name,args,kwargs", [
    ("qr", ([[1.0]],), {}), ("svd", (mx.eye(2),), {"compute_uv": 1}),
    ("eigh", (mx.eye(2),), {"UPLO": 1}), ("eigvalsh", ([[1.0]],), {}),
    ("eigvals", (2,), {}), ("pinv", (None,), {}),
])
def test_wrong_argument_types_raise_mlxs_type_errors(name, args, kwargs):
    def real_args(values):
        return [real_mx.eye(2) if isinstance(v, mx.array) else v for v in values]
    with pytest.raises(TypeError) as theirs:
        getattr(real_mx.linalg, name)(*real_args(args), **kwargs)
    with pytest.raises(TypeError, match=re.escape(str(theirs.value))):
        getattr(mx.linalg, name)(*args, **kwargs)


# --- derivatives ---------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("name,primitive", [("qr", "QRF"), ("svd", "SVD"), ("eigh", "Eigh"),
                                            ("eig", "Eig")])
def test_mlx_has_no_rules_for_the_factorizations(name, primitive):
    def f(lib):
        return lambda a: lib.sum(lib.real(getattr(lib.linalg, name)(a)[0]))
    with pytest.raises(ValueError, match=re.escape(f"Not implemented for {primitive}.")):
        real_mx.grad(f(real_mx))(real_mx.eye(2))
    if name == "eig":  # mlxref keeps MLX's error: an eigenvector's phase is a convention
        with pytest.raises(ValueError, match=re.escape("[Primitive::vjp] Not implemented for Eig.")):
            mx.grad(f(mx))(mx.eye(2))
        with pytest.raises(ValueError, match=re.escape("[Primitive::jvp] Not implemented for Eig.")):
            mx.jvp(f(mx), [mx.eye(2)], [mx.eye(2)])
    else:
        assert mx.grad(f(mx))(mx.eye(2) + 0.5 * mx.array(GENERAL[(2, 2)].tolist())).shape == (2, 2)


def test_gradient_of_the_sum_of_squared_eigenvalues_reads_one_triangle():
    # sum(w²) = |S|² for the symmetric S the triangle makes: d/dA_ij is 4 A_ij
    # below the diagonal, 2 A_ii on it, 0 above (that triangle is not read)
    a = mx.array(GENERAL[(4, 4)].tolist(), mx.float64)
    g = mx.grad(lambda x: mx.sum(mx.square(mx.linalg.eigvalsh(x))))(a)
    an = GENERAL[(4, 4)]
    expected = 4 * np.tril(an, -1) + 2 * np.diag(np.diag(an))
    np.testing.assert_allclose(_np(g), expected, atol=1e-10)
    g = mx.grad(lambda x: mx.sum(mx.square(mx.linalg.eigh(x, UPLO="U")[0])))(a)
    expected = 4 * np.triu(an, 1) + 2 * np.diag(np.diag(an))
    np.testing.assert_allclose(_np(g), expected, atol=1e-10)


def test_gradient_of_the_nuclear_norm_is_u_vt():
    an = GENERAL[(3, 2)]
    a = mx.array(an.tolist(), mx.float64)
    g = mx.grad(lambda x: mx.sum(mx.linalg.svd(x, compute_uv=False)))(a)
    u, _, vt = np.linalg.svd(an, full_matrices=False)
    np.testing.assert_allclose(_np(g), u @ vt, atol=1e-10)
    g = mx.grad(lambda x: mx.sum(mx.square(mx.linalg.svd(x)[1])))(a)  # |A|²
    np.testing.assert_allclose(_np(g), 2 * an, atol=1e-10)


def test_gradient_of_pinv_of_an_invertible_matrix_is_the_inverses():
    a = mx.array(GENERAL[(2, 2)].tolist(), mx.float64)
    weights = mx.array([[1.0, -2.0], [0.5, 3.0]], mx.float64)
    g = mx.grad(lambda x: mx.sum(weights * mx.linalg.pinv(x)))(a)
    g_inv = mx.grad(lambda x: mx.sum(weights * mx.linalg.inv(x)))(a)
    np.testing.assert_allclose(_np(g), _np(g_inv), atol=1e-9)


def _weights(out):
    return mx.array(RNG.standard_normal(out.shape).tolist(), mx.float64)


def _svd_first_rows(u, s, vt):
    """U, S and the first rows of Vt: the rest of Vt, a basis of A's null
    space, is not a function of A."""
    return mx.concatenate([u.reshape(-1), s, vt[: s.shape[0]].reshape(-1)])


PROGRAMS = {
    "qr tall": (lambda a: mx.concatenate([o.reshape(-1) for o in mx.linalg.qr(a)]), (4, 3)),
    "qr wide": (lambda a: mx.concatenate([o.reshape(-1) for o in mx.linalg.qr(a)]), (2, 4)),
    "svd square": (lambda a: mx.concatenate([o.reshape(-1) for o in mx.linalg.svd(a)]), (3, 3)),
    "svd wide": (lambda a: _svd_first_rows(*mx.linalg.svd(a)), (2, 4)),
    "eigh": (lambda a: mx.concatenate([o.reshape(-1) for o in mx.linalg.eigh(a)]), (4, 4)),
    "pinv": (lambda a: mx.linalg.pinv(a), (3, 2)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_vjp_and_jvp_agree_with_central_differences(name):
    program, shape = PROGRAMS[name]
    x = RNG.standard_normal(shape)
    a = mx.array(x.tolist(), mx.float64)
    t = RNG.standard_normal(shape)
    _, (jt,) = mx.jvp(program, [a], [mx.array(t.tolist(), mx.float64)])
    h = 1e-6
    plus = _np(program(mx.array((x + h * t).tolist(), mx.float64)))
    minus = _np(program(mx.array((x - h * t).tolist(), mx.float64)))
    np.testing.assert_allclose(_np(jt), (plus - minus) / (2 * h), atol=1e-6)
    u = _weights(jt)
    _, (g,) = mx.vjp(program, [a], [u])
    np.testing.assert_allclose(np.sum(_np(g) * t), np.sum(_np(u) * _np(jt)), rtol=1e-9)


def test_rules_of_complex_inputs_raise_a_clear_error():
    c = mx.array([[1.0 + 1j, 2.0], [0.5j, 3.0]], mx.complex64)
    with pytest.raises(ValueError, match=re.escape("[linalg::svd] mlxref's derivative rule")):
        mx.vjp(lambda x: mx.linalg.svd(x, compute_uv=False), [c], [mx.ones((2,))])


# --- vmap ---------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "pinv"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_the_examples_one_by_one(op, axis):
    fn = (lambda a: mx.linalg.svd(a, compute_uv=False)) if op == "svdvals" else getattr(
        mx.linalg, op)
    examples = [mx.array(_symmetric((3, 3)).tolist()) for _ in range(2)]
    out = mx.vmap(fn, in_axes=axis)(mx.stack(examples, axis))
    outs = out if isinstance(out, tuple) else (out,)
    for b, example in enumerate(examples):
        want = fn(example)
        for got, w in zip(outs, want if isinstance(want, tuple) else (want,)):
            assert got[b].tolist() == w.tolist()


@needs_mlx
def test_vmap_of_svd_and_eigvalsh_match_mlx():
    x = RNG.standard_normal((3, 2, 4))  # vmapped over the middle axis
    ours, theirs = _both(x)
    s = mx.vmap(lambda a: mx.linalg.svd(a, compute_uv=False), in_axes=1)(ours)
    rs = real_mx.vmap(lambda a: real_mx.linalg.svd(a, compute_uv=False, stream=cpu),
                      in_axes=1)(theirs)
    np.testing.assert_allclose(_np(s), np.array(rs), atol=2e-6)
    sym = np.stack([_symmetric((3, 3)) for _ in range(2)], 1)  # vmapped over the middle axis
    ours, theirs = _both(sym)
    w = mx.vmap(mx.linalg.eigvalsh, in_axes=1)(ours)
    rw = real_mx.vmap(lambda a: real_mx.linalg.eigvalsh(a, stream=cpu), in_axes=1)(theirs)
    np.testing.assert_allclose(_np(w), np.array(rw), atol=5e-6)


def test_the_primitives_name_mlxs():
    a = mx.eye(2)
    assert isinstance(mx.linalg.qr(a)[0].primitive(), QRF)
    assert isinstance(mx.linalg.svd(a)[0].primitive(), SVD)
    assert isinstance(mx.linalg.eigvalsh(a).primitive(), Eigh)
    assert isinstance(mx.linalg.eigvals(a).primitive(), Eig)


# --- non-finite inputs ----------------------------------------------------------------

NAN, INF = float("nan"), float("inf")


@needs_mlx
@pytest.mark.parametrize("name", ["svd", "pinv"])
def test_a_nan_makes_svd_raise_lapacks_error_as_in_mlx(name):
    rows = [[1.0, NAN], [2.0, 3.0]]
    with pytest.raises(RuntimeError) as theirs:
        real_mx.eval(getattr(real_mx.linalg, name)(real_mx.array(rows), stream=cpu))
    assert "error code -4" in str(theirs.value)
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value))):
        mx.eval(getattr(mx.linalg, name)(mx.array(rows)))


def test_a_nan_makes_eig_raise_where_mlx_aborts_the_process():
    # MLX 0.32's LAPACK call (gebal) prints "illegal value" and exits
    with pytest.raises(ValueError, match=re.escape("[linalg::eig] The matrix has a nan")):
        mx.eval(mx.linalg.eigvals(mx.array([[NAN, 1.0], [2.0, 3.0]])))


@needs_mlx
def test_an_infinity_makes_eig_nan_as_in_mlx():
    rows = [[1.0, INF], [2.0, 3.0]]
    ours = mx.linalg.eigvals(mx.array(rows)).tolist()
    theirs = real_mx.linalg.eigvals(real_mx.array(rows), stream=cpu).tolist()
    assert all(np.isnan(v.real) and np.isnan(v.imag) for v in ours + theirs)


@needs_mlx
def test_a_nan_read_by_eigh_makes_it_nan_where_mlx_is_silently_finite():
    rows = [[NAN, 1.0], [1.0, 3.0]]
    theirs = real_mx.linalg.eigvalsh(real_mx.array(rows), stream=cpu).tolist()
    assert not any(np.isnan(theirs))  # MLX 0.32 drops the nan
    w, v = mx.linalg.eigh(mx.array(rows))
    assert np.all(np.isnan(_np(w))) and np.all(np.isnan(_np(v)))
    # a nan in the triangle not read changes nothing
    w = mx.linalg.eigvalsh(mx.array([[2.0, NAN], [1.0, 3.0]]))
    theirs = real_mx.linalg.eigvalsh(real_mx.array([[2.0, NAN], [1.0, 3.0]]), stream=cpu)
    np.testing.assert_allclose(_np(w), np.array(theirs), rtol=1e-6)
