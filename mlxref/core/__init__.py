"""``import mlxref.core as mx``: the public face, mirroring ``mlx.core``."""

import math as _math

from .. import __version__  # noqa: F401  mlxref's own version, in MLX's "major.minor.patch" form

from .array import array  # noqa: F401
from .printing import (  # noqa: F401
    PrintOptions,
    get_printoptions,
    printoptions,
    set_printoptions,
)
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
from .memory import (  # noqa: F401
    clear_cache,
    get_active_memory,
    get_cache_memory,
    get_memory_limit,
    get_peak_memory,
    reset_peak_memory,
    set_cache_limit,
    set_memory_limit,
    set_wired_limit,
)
from .ops import *  # noqa: F401,F403
from .transforms.grad import grad, value_and_grad  # noqa: F401,E402
from .transforms.jvp import jvp  # noqa: F401,E402
from .transforms.vjp import vjp  # noqa: F401,E402
from .transforms.vmap import vmap  # noqa: F401,E402
from .transforms.checkpoint import checkpoint  # noqa: F401,E402
from .transforms.custom_function import custom_function  # noqa: F401,E402
from .transforms.eval import async_eval, eval  # noqa: F401,E402,A004
from .transforms.compile import compile, disable_compile, enable_compile  # noqa: F401,E402,A004
from .transforms.export import export_function, exporter, import_function  # noqa: F401,E402
from .graph_utils import export_to_dot  # noqa: F401,E402
from .device import (  # noqa: F401,E402
    Device,
    DeviceType,
    Stream,
    StreamContext,
    ThreadLocalStream,
    clear_streams,
    cpu,
    default_device,
    default_stream,
    device_count,
    device_info,
    gpu,
    is_available,
    new_stream,
    new_thread_local_stream,
    new_thread_unsafe_stream,
    set_default_device,
    set_default_stream,
    stream,
    synchronize,
)
# ``from .ops import *`` bound ``linalg`` to ops/linalg.py (the matmul family);
# ``mx.linalg`` is the namespace module core/linalg.py, imported next.
del linalg  # noqa: F821
from . import cuda, distributed, fast, fft, linalg, metal, random  # noqa: F401,E402
from .io import load, save, save_gguf, save_safetensors, savez, savez_compressed  # noqa: F401,E402

# MLX's array-API alias, at the top level only (python/src/linalg.cpp).
from .linalg import norm as matrix_norm  # noqa: E402

# MLX's constants (python/src/constants.cpp): Python floats, and None for newaxis.
pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
euler_gamma = 0.5772156649015329
newaxis = None
