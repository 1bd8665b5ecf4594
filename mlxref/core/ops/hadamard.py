"""``hadamard_transform``: the Walsh-Hadamard transform along the last axis.

Read alongside: mlx/ops.cpp (``hadamard_transform``) and python/src/ops.cpp
(its signature). The node is mlxref/core/primitives/hadamard.py's.
"""

import math

from .. import dtypes as _dt
from ..array import array
from ..primitives.base import make_array
from ..primitives.hadamard import Hadamard
from .common import astype, incompatible_arguments
from .docs import shared_doc
from .elementwise import multiply

__all__ = ["hadamard_transform"]

_SIGNATURE = ("hadamard_transform(a: array, scale: float | None = None, "
              "stream: StreamOrDevice = None) -> array")


@shared_doc
def hadamard_transform(a, /, scale=None, *, stream=None):
    """``mx.hadamard_transform``: the Walsh-Hadamard transform of ``a`` along its last axis: ``scale * H @ x`` for each vector ``x``, with ``H`` the n x n Hadamard matrix of +1 and -1 entries.

    Sizes ``n = m * 2**k`` with m in (1, 12, 20, 28) are supported (other sizes
    raise when evaluated, as in MLX). ``scale`` defaults to ``1 / sqrt(n)``,
    which makes the transform orthonormal. Integer inputs become float32; a size
    of 1 is just the scale (``a`` itself for a scale of 1). One ``Hadamard`` node.

    Arguments:
    - ``a``: a non-empty array.
    - ``scale``: the factor applied to the result (default: ``1 / sqrt(n)``).

    Errors: ``ValueError`` for an empty array (MLX: "[hadamard_transform] Does
    not support empty arrays.") and, when evaluated, for an unsupported size
    ("[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).").

    >>> mx.hadamard_transform(mx.array([1.0, 2.0, 3.0, 4.0]), scale=1.0)
    array([10, -2, -4, 0], dtype=float32)
    >>> mx.hadamard_transform(mx.array([[1.0, 0.0], [0.0, 1.0]]), 1.0)
    array([[1, 1],
           [1, -1]], dtype=float32)
    """
    if not isinstance(a, array) or not (scale is None or isinstance(scale, (int, float))):
        raise incompatible_arguments(_SIGNATURE, (a,), None if scale is None else
                                     {"scale": scale})
    if a.size == 0:
        raise ValueError("[hadamard_transform] Does not support empty arrays.")
    n = a.shape[-1] if a.ndim else 1
    scale = _dt.float32.cast(1.0 / math.sqrt(n) if scale is None else float(scale))
    dtype = a.dtype if _dt.issubdtype(a.dtype, _dt.floating) else _dt.float32
    if n == 1:
        return a if scale == 1 else multiply(a, array(scale, dtype))
    return make_array(Hadamard(scale), [astype(a, dtype)])
