"""The inverse of a matrix (or of a triangular one), with LAPACK's pivots.

Read alongside: mlx/backend/cpu/inverse.cpp (``inverse_impl``, ``general_inv``:
LAPACK's getrf and getri; ``tri_inv``: trtri).

How MLX's CPU build computes it: LAPACK's getrf and getri (LU with partial
pivoting) on the row-major data read as column-major, which is the
transpose; the inverse of the transpose, read back row-major, is the
inverse. mlxref does the same pivoting on the transpose, written as one
Gauss-Jordan elimination, rounding every step to the dtype (float32 or
float64): the pivots, so the singular cases and their codes, are LAPACK's;
the values agree to a few float32 ulps.
Read next: mlxref/core/primitives/linalg.py (``Inverse``, its rules).
"""

from .rounding import rounding, unrounded


def inverse(data, shape, tri, upper, dtype):
    """The inverses of the matrices of ``data`` (``shape`` (..., n, n),
    ``dtype``), as a flat list. ``tri``: each matrix is triangular
    (``upper`` or lower) and only that triangle is read; the other triangle
    of the result is zero. A singular matrix raises MLX's RuntimeError,
    with LAPACK's error code: the position (from 1) of the first zero pivot."""
    n = shape[-1]
    rounded = rounding(dtype) or unrounded
    out = []
    for start in range(0, len(data), n * n):
        # The transpose (LAPACK's column-major view), masked to its triangle.
        m = [[data[start + j * n + i] for j in range(n)] for i in range(n)]
        if tri:
            # Column-major "upper" of the transpose is the lower triangle
            # of the matrix, and the other way round (MLX's uplo swap).
            m = [[v if (j >= i) != upper or i == j else 0.0 for j, v in enumerate(row)]
                 for i, row in enumerate(m)]
        inv = _gauss_jordan(m, n, rounded, tri)
        out.extend(inv[j][i] for i in range(n) for j in range(n))
    return out


def _gauss_jordan(m, n, rounded, tri):
    """The inverse of the n x n list of rows ``m``: ``[m | I]`` reduced to
    ``[I | m⁻¹]``. Partial pivoting (LAPACK's i?amax: the first largest
    magnitude at or below the diagonal), none for a triangular matrix
    (its pivots are its diagonal) or for symbolic elements."""
    aug = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(m)]
    numeric = all(isinstance(v, (int, float)) for row in m for v in row)
    for k in range(n):
        p = k
        if numeric and not tri:
            for i in range(k + 1, n):
                if abs(aug[i][k]) > abs(aug[p][k]):
                    p = i
        if aug[p][k] == 0:
            what = "triangular inversion" if tri else "LU factorization"
            raise RuntimeError(
                f"[Inverse::eval_cpu] {what} failed with error code {k + 1}"
            )
        aug[k], aug[p] = aug[p], aug[k]
        pivot = aug[k][k]
        aug[k] = [rounded(v / pivot) for v in aug[k]]
        for i in range(n):
            if i != k:  # (every row, as LAPACK updates them: a nan pivot spreads)
                factor = aug[i][k]
                aug[i] = [rounded(v - rounded(factor * w)) for v, w in zip(aug[i], aug[k])]
    return [row[n:] for row in aug]
