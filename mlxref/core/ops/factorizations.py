"""``mx.linalg``'s factorizations: ``qr``, ``svd``, ``eigh``, ``eigvalsh``, ``eig``,
``eigvals``, and ``pinv`` (composed from ``svd``).

Read alongside: mlx/linalg.cpp (``qr``, ``svd``, ``validate_eig``, ``eigh``,
``eigvalsh``, ``eig``, ``eigvals``, ``pinv``) and python/src/linalg.cpp for the
Python signatures. Each op checks its argument with MLX's messages and builds
one node of the primitive in primitives/factorizations.py. ``stream`` is
accepted and ignored, as in ``linalg.inv`` (mlxref has one device).
Read next: mlxref/core/primitives/factorizations.py (``QRF``, ``SVD``, ``Eigh``, ``Eig``).
"""

from .. import dtypes as _dt
from ..array import array
from ..primitives.base import make_array, make_arrays
from ..primitives.factorizations import QRF, SVD, Eig, Eigh
from .common import incompatible_arguments
from .creation import zeros
from .elementwise import greater, multiply, reciprocal, where
from .linalg import matmul
from .reduction import max as _max
from .shape import expand_dims, swapaxes

__all__ = []  # mx.linalg's (mlxref/core/linalg.py), not mx's

_LONG_STREAM = ("mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
                "mlx.core.DeviceType | None")
_SIGNATURES = {
    "qr": "qr(a: array, *, stream: StreamOrDevice = None) -> tuple[array, array]",
    "svd": "svd(a: array, compute_uv: bool = True, *, stream: StreamOrDevice = None) "
    "-> tuple[array, array, array]",
    "eigh": "eigh(a: array, UPLO: str = 'L', *, stream: StreamOrDevice = None) "
    "-> tuple[array, array]",
    "eigvalsh": f"eigvalsh(a: mlx.core.array, UPLO: str = 'L', *, stream: {_LONG_STREAM} = None)"
    " -> mlx.core.array",
    "eig": "eig(a: array, *, stream: StreamOrDevice = None) -> tuple[array, array]",
    "eigvals": f"eigvals(a: mlx.core.array, *, stream: {_LONG_STREAM} = None) -> mlx.core.array",
    "pinv": "pinv(a: array, *, stream: StreamOrDevice = None) -> array",
}


def _check_dtype(name, a, complex_ok):
    """MLX's check_float / check_float_or_complex."""
    allowed = (_dt.float32, _dt.float64) + ((_dt.complex64,) if complex_ok else ())
    if a.dtype not in allowed:
        kinds = "float32, float64 or complex64" if complex_ok else "float32 or float64"
        raise ValueError(f"[linalg::{name}] Arrays must have type {kinds}. "
                         f"Received array with type {a.dtype.name}.")


def _check_ndim(name, a, what="Arrays"):
    if a.ndim < 2:
        raise ValueError(f"[linalg::{name}] {what} must have >= 2 dimensions. "
                         f"Received array with {a.ndim} dimensions.")


def _check_args(name, a, optional=None):
    if not isinstance(a, array):
        raise incompatible_arguments(_SIGNATURES[name], (a,), optional)


def qr(a, *, stream=None):
    """``mx.linalg.qr``: ``(Q, R)`` with ``a = Q @ R``, Q (..., m, k) with
    orthonormal columns and R (..., k, n) upper triangular, k = min(m, n)
    (float32 or float64)."""
    _check_args("qr", a)
    _check_dtype("qr", a, False)
    _check_ndim("qr", a)
    return tuple(make_arrays(QRF(), [a]))


def svd(a, compute_uv=True, *, stream=None):
    """``mx.linalg.svd``: ``(U, S, Vt)`` with ``a = U[..., :k] * S @ Vt[:k]``
    (U square, S descending, Vt square), or only ``S`` when ``compute_uv`` is
    False. S is real (float32 for a complex64 input)."""
    if not isinstance(a, array) or not isinstance(compute_uv, bool):
        raise incompatible_arguments(_SIGNATURES["svd"], (a,),
                                     {"compute_uv": compute_uv} if compute_uv is not True else None)
    _check_dtype("svd", a, True)
    _check_ndim("svd", a, "Input array")
    if not compute_uv:
        return make_array(SVD(False), [a])
    return tuple(make_arrays(SVD(True), [a]))


def _validate_eig(name, a, optional=None):
    """MLX's ``validate_eig``."""
    _check_args(name, a, optional)
    _check_dtype(name, a, True)
    _check_ndim(name, a)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"[linalg::{name}] Only defined for square matrices.")


def _check_uplo(name, a, UPLO):
    if not isinstance(UPLO, str):
        raise incompatible_arguments(_SIGNATURES[name], (a,), {"UPLO": UPLO})


def eigh(a, UPLO="L", *, stream=None):
    """``mx.linalg.eigh``: ``(w, V)``, the eigenvalues (ascending, real) and
    eigenvectors (columns) of the Hermitian matrix held in the lower triangle
    of ``a`` (``UPLO`` starting with "L") or else the upper one."""
    _check_uplo("eigh", a, UPLO)
    _validate_eig("eigh", a, {"UPLO": UPLO} if UPLO != "L" else None)
    return tuple(make_arrays(Eigh(UPLO, True), [a]))


def eigvalsh(a, UPLO="L", *, stream=None):
    """``mx.linalg.eigvalsh``: the eigenvalues of ``eigh``, alone."""
    _check_uplo("eigvalsh", a, UPLO)
    _validate_eig("eigvalsh", a, {"UPLO": UPLO} if UPLO != "L" else None)
    return make_array(Eigh(UPLO, False), [a])


def eig(a, *, stream=None):
    """``mx.linalg.eig``: ``(w, V)``, the eigenvalues and unit eigenvectors
    (columns) of a square matrix, both complex64."""
    _validate_eig("eig", a)
    return tuple(make_arrays(Eig(True), [a]))


def eigvals(a, *, stream=None):
    """``mx.linalg.eigvals``: the eigenvalues of ``eig``, alone."""
    _validate_eig("eigvals", a)
    return make_array(Eig(False), [a])


def pinv(a, *, stream=None):
    """``mx.linalg.pinv``: the Moore-Penrose pseudo-inverse, composed from
    ``svd`` as MLX does: ``V[:, :k] diag(1/S) U[:, :k]ᵀ``, where singular values
    at or below ``10 max(m, n) eps`` times the largest count as zero. An empty
    input gives zeros of the transposed shape."""
    _check_args("pinv", a)
    _check_dtype("pinv", a, False)
    _check_ndim("pinv", a)
    m, n = a.shape[-2:]
    if a.size == 0:
        return zeros(a.shape[:-2] + (n, m), a.dtype)
    k = min(m, n)
    u, s, vt = svd(a)
    u = swapaxes(u[..., :, :k], -1, -2)
    v = swapaxes(vt[..., :k, :], -1, -2)
    s = expand_dims(s, -2)
    rcond = 10.0 * max(m, n) * _dt.finfo(a.dtype).eps
    cutoff = multiply(array(rcond, a.dtype), _max(s, -1, True))
    rs = where(greater(s, cutoff), reciprocal(s), array(0.0, a.dtype))
    return matmul(multiply(v, rs), u)
