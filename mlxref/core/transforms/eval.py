"""``mx.eval`` and ``mx.async_eval``: evaluate every array in some trees.

Read alongside: python/src/transforms.cpp (``eval`` and ``async_eval`` flatten
their arguments to arrays) and mlx/transforms.cpp ``eval_impl``, which is
``graph.eval_arrays`` here.
"""

from .. import graph
from . import trees


def eval(*args):
    """``mx.eval(*args)``: evaluate every array in the given trees.

    Each argument may be an array or a (nested) list, tuple or dict; leaves that
    are not arrays are ignored. Returns ``None``.
    """
    graph.eval_arrays(trees.arrays(args))


def async_eval(*args):
    """``mx.async_eval(*args)``: schedule evaluation and return ``None``.

    mlxref computes in Python, at once (its streams are bookkeeping:
    mlxref/core/device.py), so it evaluates now; the API and the error
    inside transforms are MLX's. A kernel that fails (a RuntimeError, such
    as a singular matrix's inverse) fails where it does in MLX, which runs
    it on the stream's thread: the error is raised by the next
    ``mx.synchronize``, and the array stays unevaluated (evaluating it
    again raises it again). MLX 0.32 raised it here.
    """
    if graph.in_tracing():
        raise ValueError("[async_eval] Not allowed inside a graph transformation.")
    try:
        graph.eval_arrays(trees.arrays(args))
    except RuntimeError as error:
        graph.defer_error(error)
