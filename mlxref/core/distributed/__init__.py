"""``mx.distributed``: groups of processes and the collectives between them.

Read alongside: mlx/distributed/ (distributed.h, ops.h) and
python/src/distributed.cpp, which binds these names.

The package mirrors MLX's folder: distributed.py holds the groups, the
back-end interface and ``init``; ops.py the operations users call;
primitives.py the collectives as nodes of the graph with their rules;
ring.py MLX's ring back-end over TCP; the kernels that call a back-end are in
mlxref/core/backend/cpu/distributed.py.

Read next: mlxref/core/distributed/distributed.py.
"""

from .distributed import Group, init, is_available
from .ops import (all_gather, all_max, all_min, all_sum, recv, recv_like, send,
                  sum_scatter)

__all__ = ["Group", "all_gather", "all_max", "all_min", "all_sum", "init", "is_available",
           "recv", "recv_like", "send", "sum_scatter"]
