"""``import mlxref.core as mx``: the public face, mirroring ``mlx.core``."""

from .array import array  # noqa: F401
from .dtypes import (  # noqa: F401
    Dtype,
    DtypeCategory,
    bfloat16,
    bool_,
    can_cast,
    complex64,
    complexfloating,
    finfo,
    float16,
    float32,
    float64,
    floating,
    generic,
    iinfo,
    inexact,
    int8,
    int16,
    int32,
    int64,
    integer,
    isdtype,
    issubdtype,
    number,
    result_type,
    signedinteger,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
)
from .graph import get_active_memory, get_peak_memory, reset_peak_memory  # noqa: F401
from .ops import *  # noqa: F401,F403
from .transforms import (  # noqa: F401,E402
    async_eval,
    checkpoint,
    custom_function,
    eval,
    grad,
    jvp,
    value_and_grad,
    vjp,
    vmap,
)
from . import random  # noqa: F401
from .io import load, save, save_gguf, save_safetensors, savez, savez_compressed  # noqa: F401
