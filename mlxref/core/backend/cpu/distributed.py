"""The collectives' kernels: hand the input's elements to the group's back-end.

Read alongside: mlx/backend/cpu/distributed.cpp (``AllReduce::eval_cpu`` and
the others) and mlx/distributed/distributed.cpp's ``detail`` functions, which
call the group's ``GroupImpl``.

The back-end (mlxref/core/distributed/distributed.py's ``GroupImpl``: the ring
or MPI) does the communicating and the arithmetic, in MLX's order and in the
dtype. A kernel checks that what came back is what MLX's output buffer would
hold, its length, so that a back-end's mistake surfaces here and not as an
array of the wrong size.

Read next: mlxref/core/distributed/ring.py (the ring back-end).
"""


def _checked(result, count, operation):
    if len(result) != count:
        raise RuntimeError(
            f"[distributed] {operation} returned {len(result)} elements but "
            f"{count} were expected.")
    return result


def all_reduce(group, reduce_type, data, dtype):
    """The elementwise ``reduce_type`` ("sum", "max", "min") of ``data`` over
    ``group``'s ranks (a GroupImpl)."""
    operation = f"all_{reduce_type}"
    return _checked(getattr(group, operation)(data, dtype), len(data), operation)


def all_gather(group, data, dtype):
    """Every rank's ``data``, concatenated in rank order."""
    return _checked(group.all_gather(data, dtype), len(data) * group.size(), "all_gather")


def sum_scatter(group, data, dtype):
    """This rank's block of the sum of ``data`` over the ranks."""
    return _checked(group.sum_scatter(data, dtype), len(data) // group.size(), "sum_scatter")


def send(group, data, dtype, dst):
    """Send ``data`` to rank ``dst``."""
    group.send(data, dtype, dst)


def recv(group, count, dtype, src):
    """The ``count`` elements rank ``src`` sends."""
    return _checked(group.recv(count, dtype, src), count, "recv")
