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
from .docs import shared_doc
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


@shared_doc
def qr(a, *, stream=None):
    """``mx.linalg.qr``: the QR factorization of each matrix in the last two axes, ``(Q, R)`` with ``a = Q @ R``.

    ``Q`` (..., m, k) has orthonormal columns and ``R`` (..., k, n) is upper
    triangular, k = min(m, n), so tall and wide matrices both work. Q and R are
    LAPACK's (Householder reflections: the diagonal of R may be negative). One
    ``QRF`` node, computed in double and rounded once; mlxref gives it a vjp, a
    jvp and a vmap rule, which MLX lacks.

    Arguments:
    {float_matrices}

    Errors: {float_matrices_errors}.

    >>> mx.linalg.qr(mx.array([[3.0, 1.0], [4.0, 2.0]]))
    (array([[-0.6, -0.8],
           [-0.8, 0.6]], dtype=float32), array([[-5, -2.2],
           [0, 0.4]], dtype=float32))
    """
    _check_args("qr", a)
    _check_dtype("qr", a, False)
    _check_ndim("qr", a)
    return tuple(make_arrays(QRF(), [a]))


@shared_doc
def svd(a, compute_uv=True, *, stream=None):
    """``mx.linalg.svd``: the singular value decomposition of each matrix in the last two axes, ``(U, S, Vt)`` with ``a = U[..., :k] * S @ Vt[..., :k, :]``.

    ``U`` (m x m) and ``Vt`` (n x n) are square and orthogonal (unitary for
    complex64), ``S`` holds the k = min(m, n) singular values in descending
    order, real (float32 for a complex64 input). With ``compute_uv=False``
    only ``S`` is returned. One ``SVD`` node, computed in double and rounded
    once. The signs of the singular vectors are not fixed by the math; the
    README's "Where mlxref differs" says how mlxref's compare with MLX's.
    mlxref gives it a vjp and a jvp (Townsend's formulas), which MLX lacks.

    Arguments:
    - ``a``: float32, float64 or complex64, at least two dimensions.
    - ``compute_uv``: also return ``U`` and ``Vt`` (default True).

    Errors: ``ValueError`` for another dtype (MLX: "[linalg::svd] Arrays must
    have type float32, float64 or complex64. Received array with type int32.")
    or fewer than two dimensions (MLX: "[linalg::svd] Input array must have >= 2
    dimensions. Received array with 1 dimensions.").

    >>> a = mx.array([[2.0, 0.0], [0.0, 1.0]])
    >>> mx.linalg.svd(a, compute_uv=False)
    array([2, 1], dtype=float32)
    """
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


@shared_doc
def eigh(a, UPLO="L", *, stream=None):
    """``mx.linalg.eigh``: the eigenvalues and eigenvectors of each Hermitian (real symmetric) matrix in the last two axes, ``(w, V)`` with ``a @ V = V * w``.

    The eigenvalues ``w`` are real and ascending; the columns of ``V`` are
    orthonormal eigenvectors. Only one triangle of ``a`` is read: the lower one
    (``UPLO`` starting with "L", the default) or else the upper one, the other
    taken as its mirror image. One ``Eigh`` node, computed in double and rounded
    once. mlxref gives it a vjp and a jvp, which MLX lacks. The sign of each
    eigenvector is not fixed by the math: mlxref's are LAPACK's, as MLX's; the
    README's "Where mlxref differs" says where they can still differ.

    Arguments:
    {square_matrices}
    - ``UPLO``: "L" (default) or "U": the triangle read.

    Errors: {eig_errors}. A NaN read by it gives NaNs (MLX returns finite, wrong
    eigenvalues).

    >>> mx.linalg.eigh(mx.array([[2.0, 0.0], [0.0, 1.0]]))
    (array([1, 2], dtype=float32), array([[0, 1],
           [1, 0]], dtype=float32))
    """
    _check_uplo("eigh", a, UPLO)
    _validate_eig("eigh", a, {"UPLO": UPLO} if UPLO != "L" else None)
    return tuple(make_arrays(Eigh(UPLO, True), [a]))


@shared_doc
def eigvalsh(a, UPLO="L", *, stream=None):
    """``mx.linalg.eigvalsh``: the eigenvalues of each Hermitian (real symmetric) matrix in the last two axes, real and ascending.

    ``eigh``'s ``w`` without the eigenvectors (the same ``Eigh`` primitive, told
    to skip them). Only one triangle of ``a`` is read, as in ``eigh``: the
    example's matrix is not symmetric, so the two triangles give two different
    symmetric matrices.

    Arguments:
    {square_matrices}
    - ``UPLO``: "L" (default) or "U": the triangle read.

    Errors: {eig_errors}.

    >>> a = mx.array([[1.0, 5.0], [2.0, 1.0]])
    >>> mx.linalg.eigvalsh(a), mx.linalg.eigvalsh(a, UPLO="U")
    (array([-1, 3], dtype=float32), array([-4, 6], dtype=float32))
    """
    _check_uplo("eigvalsh", a, UPLO)
    _validate_eig("eigvalsh", a, {"UPLO": UPLO} if UPLO != "L" else None)
    return make_array(Eigh(UPLO, False), [a])


@shared_doc
def eig(a, *, stream=None):
    """``mx.linalg.eig``: the eigenvalues and eigenvectors of each square matrix in the last two axes, ``(w, V)`` with ``a @ V = V * w``.

    Both are complex64, since a real matrix can have complex eigenvalues; the
    columns of ``V`` are unit eigenvectors. The order of the eigenvalues and the
    phase of each eigenvector are not fixed by the math: mlxref's are LAPACK's,
    as MLX's; the README's "Where mlxref differs" says where they can still
    differ. One ``Eig`` node; as
    in MLX it has no vjp ("Not implemented").

    Arguments:
    {square_matrices}

    Errors: {eig_errors}. A NaN in ``a`` raises when evaluated (MLX aborts the process).

    >>> mx.linalg.eig(mx.array([[2.0, 0.0], [0.0, 1.0]]))
    (array([2+0j, 1+0j], dtype=complex64), array([[1+0j, 0+0j],
           [0+0j, 1+0j]], dtype=complex64))
    """
    _validate_eig("eig", a)
    return tuple(make_arrays(Eig(True), [a]))


@shared_doc
def eigvals(a, *, stream=None):
    """``mx.linalg.eigvals``: the eigenvalues of each square matrix in the last two axes, complex64.

    ``eig``'s ``w`` without the eigenvectors (the same ``Eig`` primitive, told
    to skip them): a real matrix can have complex eigenvalues, as the rotation
    in the example has. Their order is not fixed by the math: mlxref's is
    LAPACK's, as MLX's.

    Arguments:
    {square_matrices}

    Errors: {eig_errors}.

    >>> mx.linalg.eigvals(mx.array([[0.0, -1.0], [1.0, 0.0]]))
    array([0+1j, 0-1j], dtype=complex64)
    """
    _validate_eig("eigvals", a)
    return make_array(Eig(False), [a])


@shared_doc
def pinv(a, *, stream=None):
    """``mx.linalg.pinv``: the Moore-Penrose pseudo-inverse of each matrix in the last two axes, an (n x m) matrix for an (m x n) one.

    Composed from ``svd`` as MLX does: ``V[:, :k] diag(1/S) U[:, :k]ᵀ``, where
    singular values at or below ``10 max(m, n) eps`` times the largest count as
    zero (their reciprocal is taken as 0). An empty input gives zeros of the
    transposed shape.

    Arguments:
    {float_matrices}

    Errors: {float_matrices_errors}.

    >>> mx.linalg.pinv(mx.array([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]))
    array([[1, 0, 0],
           [0, 0, 0.5]], dtype=float32)
    """
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
