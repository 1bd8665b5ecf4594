"""``mx.linalg``: the linear algebra MLX keeps in its own namespace.

Read alongside: python/src/linalg.cpp (the bindings) and mlx/linalg.cpp. The
ops live with the other matrix ops in ``ops/linalg.py``; this module only
names the ones mlxref has under MLX's ``mx.linalg``.
"""

from .ops.linalg import inv, tri_inv
from .ops.solvers import (cholesky, cholesky_inv, cross, det, lu, lu_factor, norm, slogdet,
                          solve, solve_triangular)

__all__ = ["inv", "tri_inv",
           "cholesky", "cholesky_inv", "cross", "det", "lu", "lu_factor", "norm", "slogdet",
           "solve", "solve_triangular"]
