"""``mx.depends``: outputs equal to some arrays that wait for others.

Read alongside: mlx/ops.cpp (``depends``), its binding in python/src/ops.cpp
and the ``Depends`` primitive (mlxref/core/primitives/custom.py, where
checkpoint uses it too). The outputs are ``inputs`` again; the
``dependencies`` only have to be computed first. Their cotangents are zero.
"""

from ..array import array
from ..primitives.custom import depends as _depends
from .common import incompatible_argument

__all__ = ["depends"]


def _array_or_arrays(x, name):
    """The binding's cast: one array, or a sequence of arrays (``std::bad_cast``
    for anything else but None, which the binding itself refuses)."""
    if isinstance(x, array):
        return [x], False
    if isinstance(x, (list, tuple)) and all(isinstance(v, array) for v in x):
        return list(x), True
    if x is None:
        raise incompatible_argument("depends", name, "an array or a sequence of arrays", x)
    raise RuntimeError("std::bad_cast")


def depends(inputs, dependencies, /):
    """``mx.depends``: ``inputs`` again, as new arrays that are computed only after ``dependencies`` are.

    The outputs have the inputs' values; the ``dependencies`` only have to be
    evaluated first (one ``Depends`` node, which ``checkpoint`` also uses).
    Their cotangents are zero. Returns an array for an array, a list for a list.
    (MLX crashes on an empty list of inputs; mlxref raises ``ValueError``.)

    Arguments:
    - ``inputs``: an array, or a list or tuple of arrays.
    - ``dependencies``: an array, or a list or tuple of arrays.

    Errors: ``RuntimeError`` ("std::bad_cast", as MLX) for anything that is not
    an array or a sequence of arrays; ``TypeError`` for None.

    >>> mx.depends(mx.array([1, 2]), mx.array([3]))
    array([1, 2], dtype=int32)
    >>> mx.depends([mx.array(1), mx.array(2)], [mx.array(3)])
    [array(1, dtype=int32), array(2, dtype=int32)]
    """
    inputs, as_list = _array_or_arrays(inputs, "inputs")
    dependencies, _ = _array_or_arrays(dependencies, "dependencies")
    if not inputs:
        raise ValueError("[depends] inputs must hold at least one array.")
    outputs = _depends(inputs, dependencies)
    return outputs if as_list else outputs[0]
