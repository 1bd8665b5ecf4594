"""Symbolic cases for the factorizations (QRF, SVD, Eigh, Eig).

Their forward rules iterate to convergence, so they cannot run on symbols:
every case is checked at "high-precision points" (``Case.points``; see
``_check_points``): the jvp against a central difference on 50-digit
numbers, the vjp as its adjoint. Each case's program returns every output
it checks, flattened and concatenated, so one check covers all of them.
The points are generic: distinct eigenvalues and singular values, and
full rank, where the textbook rules hold. The extra columns of a
rectangular SVD's square U (a basis of the complement, not a function of A)
are left out. Eig has MLX's "Not implemented" for both modes.
"""

from .. import core as mx
from ..core.primitives import factorizations as F
from . import Case


def _joined(*arrays):
    return mx.concatenate([a.reshape(-1) for a in arrays])


def _svd_thin(a):
    u, s, vt = mx.linalg.svd(a)
    k = s.shape[-1]
    return _joined(u[:, :k], s, vt[:k])


CASES = [
    Case(F.QRF, lambda a: _joined(*mx.linalg.qr(a)), ((3, 2),), points=True,
         note="qr of a tall matrix: Q and R"),
    Case(F.QRF, lambda a: _joined(*mx.linalg.qr(a)), ((2, 3),), points=True,
         note="qr of a wide matrix: R = [R1 | R2]"),
    Case(F.SVD, lambda a: mx.linalg.svd(a, compute_uv=False), ((3, 2),), points=True,
         note="singular values only"),
    Case(F.SVD, lambda a: _joined(*mx.linalg.svd(a)), ((2, 2),), points=True,
         note="U, S and Vt of a square matrix"),
    Case(F.SVD, _svd_thin, ((3, 2),), points=True,
         note="the first k singular vectors of a tall matrix"),
    Case(F.Eigh, lambda a: mx.linalg.eigvalsh(a), ((3, 3),), points=True,
         note="eigenvalues, lower triangle read"),
    Case(F.Eigh, lambda a: _joined(*mx.linalg.eigh(a, UPLO="U")), ((3, 3),), points=True,
         note="eigenvalues and eigenvectors, upper triangle read"),
    Case(F.Eig, lambda a: mx.real(mx.linalg.eigvals(a)), ((2, 2),), points=True, raises=True,
         note="no rule in MLX"),
]
