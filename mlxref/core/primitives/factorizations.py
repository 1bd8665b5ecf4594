"""The matrix factorizations of ``mx.linalg``: QR, the SVD, and the
eigendecompositions of symmetric (``Eigh``) and general (``Eig``) matrices.

Read alongside: mlx/primitives.h (``QRF``, ``SVD``, ``Eigh``, ``Eig``),
mlx/primitives.cpp (their vmap rules: MLX 0.32 has no vjp or jvp for any of
them, and no vmap for ``QRF``; mlxref's textbook rules take real inputs) and
mlx/linalg.cpp (``qr``, ``svd``, ``eigh``, ``eig``: the checks and shapes).
Read next: mlxref/core/backend/cpu/qrf.py, svd.py, eigh.py, eig.py (the
algorithms, which also run on the SymPy Floats of the symbolic checks).
"""

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.eig import eig
from ..backend.cpu.eigh import eigh
from ..backend.cpu.qrf import qrf
from ..backend.cpu.svd import svd
from .base import Primitive, make_arrays, vmap_leading


class QRF(Primitive):
    """``Q, R = mx.linalg.qr(a)``: Q (..., m, k) with orthonormal columns and R
    (..., k, n) upper triangular, k = min(m, n) (MLX's ``QRF``).

    MLX has no vjp, jvp or vmap for QRF. mlxref's rules are the textbook ones
    for a full-rank A (R's first k x k block invertible): for m >= n,
    ``dR = (C - Ω) R`` and ``dQ = dA R⁻¹ - Q (C - Ω)`` with ``C = Qᵀ dA R⁻¹`` and
    Ω the skew-symmetric matrix with C's strictly lower triangle; for m < n,
    A = [X | Y] and R = [R1 | R2] with X = Q R1 square, and
    ``dR2 = Qᵀ (dY - dQ R2)``.
    """

    mlx_has_vjp = False

    def output_shapes(self, inputs):
        (a,) = inputs
        *batch, m, n = a.shape
        k = min(m, n)
        return [tuple(batch) + (m, k), tuple(batch) + (k, n)]

    def output_dtypes(self, inputs):
        return [inputs[0].dtype, inputs[0].dtype]

    def eval(self, inputs):
        (a,) = inputs
        return list(qrf(a.data(), a.shape))

    @staticmethod
    def _r_inverse(r):
        return ops.linalg.tri_inv(r, upper=True)

    def jvp(self, primals, tangents, argnums):
        (a,), (da,) = primals, tangents
        q, r = make_arrays(self, [a])
        m, n = a.shape[-2:]
        if m >= n:
            return list(self._square_jvp(q, r, da))
        x_dot, y_dot = da[..., :, :m], da[..., :, m:]
        dq, dr1 = self._square_jvp(q, r[..., :, :m], x_dot)
        dr2 = _mm(_mT(q), ops.subtract(y_dot, _mm(dq, r[..., :, m:])))
        return [dq, ops.concatenate([dr1, dr2], -1)]

    def _square_jvp(self, q, r, da):
        """(dQ, dR) for m >= n (R square and invertible)."""
        r_inv = self._r_inverse(r)
        da_r = _mm(da, r_inv)
        c = _mm(_mT(q), da_r)
        lower = ops.tril(c, -1)
        c_minus_omega = ops.add(ops.subtract(c, lower), _mT(lower))  # C - Ω
        return ops.subtract(da_r, _mm(q, c_minus_omega)), _mm(c_minus_omega, r)

    def vjp(self, primals, cotangents, argnums, outputs):
        """The adjoint of the jvp: for m >= n, ``Ā = (gQ + Q W) R⁻ᵀ`` with W the
        symmetric matrix with the lower triangle of ``R gRᵀ - gQᵀ Q``; for
        m < n, ``Ȳ = Q gR2`` and X̄ is that rule for ``gQ + Y gR2ᵀ`` and gR1."""
        (a,) = primals
        g_q, g_r = cotangents
        q, r = outputs
        m, n = a.shape[-2:]
        if m >= n:
            return [self._square_vjp(q, r, g_q, g_r)]
        y = a[..., :, m:]
        g_r2 = g_r[..., :, m:]
        g_x = self._square_vjp(q, r[..., :, :m], ops.add(g_q, _mm(y, _mT(g_r2))),
                               g_r[..., :, :m])
        return [ops.concatenate([g_x, _mm(q, g_r2)], -1)]

    def _square_vjp(self, q, r, g_q, g_r):
        m_ = ops.subtract(_mm(r, _mT(g_r)), _mm(_mT(g_q), q))
        lower = ops.tril(m_, -1)
        w = ops.add(ops.tril(m_), _mT(lower))
        return _mm(ops.add(g_q, _mm(q, w)), _mT(self._r_inverse(r)))

    vmap = vmap_leading  # MLX has none


class SVD(Primitive):
    """``U, S, Vt = mx.linalg.svd(a)`` (``compute_uv``), or just ``S``: U (..., m, m),
    S (..., k) in descending order, Vt (..., n, n), k = min(m, n) (MLX's ``SVD``).

    Each pair u_i, v_i may be the negative of MLX's (backend/cpu/svd.py).

    MLX has no vjp or jvp for SVD; mlxref's are the textbook ones (J.
    Townsend, "Differentiating the Singular Value Decomposition", 2016) for
    real inputs with distinct nonzero singular values: ``dS = diag(U₁ᵀ dA V₁)``
    and, with ``P = U₁ᵀ dA V₁`` and ``F[i, j] = 1 / (s_j² - s_i²)``,
    ``dU₁ = U₁ (F ∘ (P S + S Pᵀ)) + (I - U₁U₁ᵀ) dA V₁ S⁻¹`` and
    ``dV₁ = V₁ (F ∘ (S P + Pᵀ S)) + (I - V₁V₁ᵀ) dAᵀ U₁ S⁻¹`` (U₁, V₁ the first
    k singular vectors). The other columns of a square U or V (a basis of
    the complement, not unique) get the least change that keeps it
    orthonormal: ``dU₂ = -U₁ dU₁ᵀ U₂``; the vjp is the exact adjoint.
    """

    mlx_has_vjp = False

    def __init__(self, compute_uv=True):
        self.compute_uv = bool(compute_uv)

    def params(self):
        return {"compute_uv": self.compute_uv}

    def output_shapes(self, inputs):
        (a,) = inputs
        *batch, m, n = a.shape
        batch = tuple(batch)
        s_shape = batch + (min(m, n),)
        if not self.compute_uv:
            return [s_shape]
        return [batch + (m, m), s_shape, batch + (n, n)]

    def output_dtypes(self, inputs):
        dtype = inputs[0].dtype
        real = _dt.float32 if dtype is _dt.complex64 else dtype
        return [dtype, real, dtype] if self.compute_uv else [real]

    def eval(self, inputs):
        (a,) = inputs
        u, s, vh = svd(a.data(), a.shape)
        return [u, s, vh] if self.compute_uv else [s]

    def _factors(self, a, outputs=None):
        """U₁ (m x k), S (k), V₁ (n x k), U, V."""
        u, s, vt = outputs if outputs is not None and self.compute_uv else make_arrays(
            SVD(True), [a])
        k = s.shape[-1]
        v = _mT(vt)
        return u[..., :, :k], s, v[..., :, :k], u, v

    def jvp(self, primals, tangents, argnums):
        (a,), (da,) = primals, tangents
        _real_only("svd", a)
        u1, s, v1, u, v = self._factors(a)
        k = s.shape[-1]
        p = _mm(_mT(u1), da, v1)
        ds = _diag_part(p)
        if not self.compute_uv:
            return [ds]
        f = _gap_inverse(ops.square(s))
        s_row, s_col = ops.expand_dims(s, -2), ops.expand_dims(s, -1)  # (X S), (S X)
        inv_s = ops.expand_dims(ops.reciprocal(s), -2)
        m, n = a.shape[-2:]
        du1 = ops.add(_mm(u1, ops.multiply(f, ops.add(ops.multiply(p, s_row),
                                                      ops.multiply(s_col, _mT(p))))),
                      ops.multiply(_mm(ops.subtract(ops.eye(m, dtype=a.dtype), _mm(u1, _mT(u1))),
                                       da, v1), inv_s))
        dv1 = ops.add(_mm(v1, ops.multiply(f, ops.add(ops.multiply(s_col, p),
                                                      ops.multiply(_mT(p), s_row)))),
                      ops.multiply(_mm(ops.subtract(ops.eye(n, dtype=a.dtype), _mm(v1, _mT(v1))),
                                       _mT(da), u1), inv_s))
        du = self._complete(du1, u1, u[..., :, k:])
        dv = self._complete(dv1, v1, v[..., :, k:])
        return [du, ds, _mT(dv)]

    @staticmethod
    def _complete(d1, x1, x2):
        """[dX₁ | -X₁ dX₁ᵀ X₂]: the tangent of the whole square factor."""
        if x2.shape[-1] == 0:
            return d1
        return ops.concatenate([d1, ops.negative(_mm(x1, _mT(d1), x2))], -1)

    def vjp(self, primals, cotangents, argnums, outputs):
        (a,) = primals
        _real_only("svd", a)
        u1, s, v1, u, v = self._factors(a, outputs)
        k = s.shape[-1]
        if not self.compute_uv:
            (g_s,) = cotangents
            return [_mm(u1, _diag_embed(g_s), _mT(v1))]
        g_u, g_s, g_vt = cotangents
        g_v = _mT(g_vt)
        # The adjoint of dX₂ = -X₁ dX₁ᵀ X₂ adds -X₂ gX₂ᵀ X₁ to gX₁.
        g_u1 = ops.subtract(g_u[..., :, :k], _mm(u[..., :, k:], _mT(g_u[..., :, k:]), u1))
        g_v1 = ops.subtract(g_v[..., :, :k], _mm(v[..., :, k:], _mT(g_v[..., :, k:]), v1))
        m, n = a.shape[-2:]
        f = _gap_inverse(ops.square(s))
        s_row, s_col = ops.expand_dims(s, -2), ops.expand_dims(s, -1)
        inv_s = ops.expand_dims(ops.reciprocal(s), -2)
        j = ops.multiply(f, ops.subtract(_mm(_mT(u1), g_u1), _mm(_mT(g_u1), u1)))
        kk = ops.multiply(f, ops.subtract(_mm(_mT(v1), g_v1), _mm(_mT(g_v1), v1)))
        core = ops.add(ops.add(ops.multiply(j, s_row), _diag_embed(g_s)),
                       ops.multiply(s_col, kk))
        out = _mm(u1, core, _mT(v1))
        out = ops.add(out, _mm(ops.subtract(ops.eye(m, dtype=a.dtype), _mm(u1, _mT(u1))),
                               ops.multiply(g_u1, inv_s), _mT(v1)))
        out = ops.add(out, _mm(ops.multiply(u1, inv_s), _mT(g_v1),
                               ops.subtract(ops.eye(n, dtype=a.dtype), _mm(v1, _mT(v1)))))
        return [out]

    vmap = vmap_leading


class Eigh(Primitive):
    """``w, V = mx.linalg.eigh(a, UPLO)`` (``compute_eigenvectors``), or just ``w``
    (``eigvalsh``): the eigenvalues in ascending order and the eigenvectors as
    columns, of the Hermitian matrix one triangle of ``a`` holds: the lower
    one when ``UPLO`` starts with "L", else the upper one (MLX passes LAPACK
    ``uplo[0] == 'L'``). The signs of the eigenvectors are Jacobi's, not
    LAPACK's (backend/cpu/eigh.py).

    MLX has no vjp or jvp for Eigh; mlxref's are the textbook ones for real
    inputs with distinct eigenvalues. The matrix read is
    ``S = K + Kᵀ``, K the triangle read with its diagonal halved; then
    ``dw = diag(Vᵀ dS V)`` and ``dV = V (F ∘ (Vᵀ dS V))`` with
    ``F[i, j] = 1 / (w_j - w_i)``. The vjp is the adjoint: ``G = V (diag(gw) +
    F ∘ (Vᵀ gV)) Vᵀ``, and the triangle read gets ``G + Gᵀ`` (half of it on the
    diagonal); the other triangle gets zero.
    """

    mlx_has_vjp = False

    def __init__(self, uplo="L", compute_eigenvectors=True):
        self.uplo = uplo
        self.compute_eigenvectors = bool(compute_eigenvectors)

    @property
    def lower(self):
        return self.uplo[:1] == "L"

    def params(self):
        return {"uplo": self.uplo, "compute_eigenvectors": self.compute_eigenvectors}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [shape[:-1], shape] if self.compute_eigenvectors else [shape[:-1]]

    def output_dtypes(self, inputs):
        dtype = inputs[0].dtype
        real = _dt.float32 if dtype is _dt.complex64 else dtype
        return [real, dtype] if self.compute_eigenvectors else [real]

    def eval(self, inputs):
        (a,) = inputs
        w, v = eigh(a.data(), a.shape, self.lower, a.dtype)
        return [w, v] if self.compute_eigenvectors else [w]

    def _mask(self, n, dtype):
        """The triangle read, its diagonal halved."""
        rows = [[0.5 if i == j else (1.0 if (i > j) == self.lower else 0.0) for j in range(n)]
                for i in range(n)]
        return array(rows, dtype)

    def _decomposition(self, a, outputs=None):
        if outputs is not None and self.compute_eigenvectors:
            return outputs
        return make_arrays(Eigh(self.uplo, True), [a])

    def jvp(self, primals, tangents, argnums):
        (a,), (da,) = primals, tangents
        _real_only("eigh", a)
        w, v = self._decomposition(a)
        k = ops.multiply(da, self._mask(a.shape[-1], a.dtype))
        p = _mm(_mT(v), ops.add(k, _mT(k)), v)
        dw = _diag_part(p)
        if not self.compute_eigenvectors:
            return [dw]
        return [dw, _mm(v, ops.multiply(_gap_inverse(w), p))]

    def vjp(self, primals, cotangents, argnums, outputs):
        (a,) = primals
        _real_only("eigh", a)
        w, v = self._decomposition(a, outputs)
        inner = _diag_embed(cotangents[0])
        if self.compute_eigenvectors:
            inner = ops.add(inner, ops.multiply(_gap_inverse(w), _mm(_mT(v), cotangents[1])))
        g = _mm(v, inner, _mT(v))
        return [ops.multiply(ops.add(g, _mT(g)), self._mask(a.shape[-1], a.dtype))]

    vmap = vmap_leading


class Eig(Primitive):
    """``w, V = mx.linalg.eig(a)`` (``compute_eigenvectors``), or just ``w``
    (``eigvals``): the eigenvalues and unit eigenvectors (columns) of a
    general square matrix, both complex64 whatever the input (MLX's ``Eig``),
    in the order and the phases backend/cpu/eig.py says.

    No vjp or jvp: MLX has none, and the eigenvectors' derivative depends on
    a normalization (of a complex phase) that is a convention, not a
    function of A; both raise MLX's "Not implemented".
    """

    def __init__(self, compute_eigenvectors=True):
        self.compute_eigenvectors = bool(compute_eigenvectors)

    def params(self):
        return {"compute_eigenvectors": self.compute_eigenvectors}

    def output_shapes(self, inputs):
        shape = inputs[0].shape
        return [shape[:-1], shape] if self.compute_eigenvectors else [shape[:-1]]

    def output_dtypes(self, inputs):
        return [_dt.complex64]

    def eval(self, inputs):
        (a,) = inputs
        w, v = eig(a.data(), a.shape, a.dtype)
        return [w, v] if self.compute_eigenvectors else [w]

    vmap = vmap_leading


# --- the rules' building blocks (mlxref ops) ---------------------------------------


def _mT(x):
    return ops.swapaxes(x, -1, -2)


def _mm(*factors):
    out = factors[0]
    for f in factors[1:]:
        out = ops.matmul(out, f)
    return out


def _gap_inverse(values):
    """``F`` with ``F[i, j] = 1 / (values[j] - values[i])`` off the diagonal and
    0 on it: ``(1 - I) / (gap + I)``, so the diagonal never divides by zero."""
    n = values.shape[-1]
    eye = ops.eye(n, dtype=values.dtype)
    gap = ops.subtract(ops.expand_dims(values, -2), ops.expand_dims(values, -1))
    return ops.divide(ops.subtract(1, eye), ops.add(gap, eye))


def _diag_embed(values):
    """A batch of diagonal matrices from a batch of vectors."""
    n = values.shape[-1]
    return ops.multiply(ops.expand_dims(values, -2), ops.eye(n, dtype=values.dtype))


def _diag_part(x):
    return ops.diagonal(x, 0, -2, -1)


def _real_only(name, x):
    if x.dtype is _dt.complex64:
        raise ValueError(f"[linalg::{name}] mlxref's derivative rule takes real inputs only "
                         "(MLX has no rule for it at all).")
