"""``mx.depends``: outputs equal to some arrays that wait for others.

Read alongside: mlx/ops.cpp (``depends``), its binding in python/src/ops.cpp
and the ``Depends`` primitive (mlxref/core/primitives/custom.py, where
checkpoint uses it too). The outputs are ``inputs`` again; the
``dependencies`` only have to be computed first. Their cotangents are zero.
"""

from ..array import array
from ..primitives.custom import depends as _depends

__all__ = ["depends"]


def _array_or_arrays(x):
    """The binding's cast: one array, or a sequence of arrays (``std::bad_cast``
    for anything else)."""
    if isinstance(x, array):
        return [x], False
    if isinstance(x, (list, tuple)) and all(isinstance(v, array) for v in x):
        return list(x), True
    raise RuntimeError("std::bad_cast")


def depends(inputs, dependencies):
    """``mx.depends``: ``inputs`` (an array, or a list of them) again, as
    outputs that depend on ``dependencies`` (an array or a list). Returns an
    array for an array, a list for a list. (MLX crashes on an empty list of
    inputs; mlxref says so.)"""
    inputs, as_list = _array_or_arrays(inputs)
    dependencies, _ = _array_or_arrays(dependencies)
    if not inputs:
        raise ValueError("[depends] inputs must hold at least one array.")
    outputs = _depends(inputs, dependencies)
    return outputs if as_list else outputs[0]
