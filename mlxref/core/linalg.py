"""``mx.linalg``: the linear algebra MLX keeps in its own namespace.

Read alongside: python/src/linalg.cpp (the bindings) and mlx/linalg.cpp. The
ops live with the other matrix ops in ``ops/linalg.py`` and the
factorizations in ``ops/factorizations.py``, the solvers and norms in
``ops/solvers.py``; this module only names the ones
mlxref has under MLX's ``mx.linalg`` (and no op imports it).
Read next: mlxref/core/ops/factorizations.py, ops/solvers.py.
"""

from .ops.factorizations import eig, eigh, eigvals, eigvalsh, pinv, qr, svd
from .ops.linalg import inv, tri_inv
from .ops.solvers import (cholesky, cholesky_inv, cross, det, lu, lu_factor, norm, slogdet,
                          solve, solve_triangular)

__all__ = ["inv", "tri_inv", "qr", "svd", "eigh", "eigvalsh", "eig", "eigvals", "pinv",
           "cholesky", "cholesky_inv", "cross", "det", "lu", "lu_factor", "norm", "slogdet",
           "solve", "solve_triangular"]
