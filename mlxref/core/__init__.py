"""``import mlxref.core as mx``: the public face, mirroring ``mlx.core``."""

from .array import array  # noqa: F401
from .dtypes import (  # noqa: F401
    Dtype,
    bool_,
    float32,
    float64,
    floating,
    generic,
    inexact,
    int32,
    int64,
    integer,
    issubdtype,
    number,
    promote_types,
    signedinteger,
)
from .graph import (  # noqa: F401
    async_eval,
    eval,
    get_active_memory,
    get_peak_memory,
    reset_peak_memory,
)
from .ops import *  # noqa: F401,F403
from .transforms import (  # noqa: F401,E402
    checkpoint,
    custom_function,
    grad,
    jvp,
    value_and_grad,
    vjp,
    vmap,
)
from . import random  # noqa: F401
