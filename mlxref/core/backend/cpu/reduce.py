"""The reductions' accumulators, as MLX's CPU kernels keep them.

Read alongside: mlx/backend/cpu/reduce.cpp.
"""

import array as _pyarray


def sum_float32(run):
    """``sum(run)`` in a float32 accumulator, starting from 0 as MLX's does."""
    cell = _pyarray.array("f", (0.0,))
    acc = 0.0
    for v in run:
        cell[0] = acc + v
        acc = cell[0]
    return acc
