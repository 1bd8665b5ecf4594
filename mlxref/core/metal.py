"""``mx.metal``: MLX's Metal namespace as its CPU build has it (python/src/metal.cpp,
mlx/backend/metal/no_metal.cpp). mlxref computes in Python on the CPU, so Metal is
not available.

The memory functions here are MLX's deprecated spellings of ``mx.get_active_memory``
and the rest: each says so on stderr the first time it is called, as MLX does,
and then does what the ``mx.`` function does. ``device_info()`` describes the gpu,
which here is ``{}``; ``start_capture``/``stop_capture`` do nothing, as without Metal.
"""

import sys

from . import device as _device
from . import memory as _memory
from .ops.common import incompatible_arguments

_warned = set()


def _deprecated(name):
    if name not in _warned:
        _warned.add(name)
        print(f"mx.metal.{name} is deprecated and will be removed in a future version. "
              f"Use mx.{name} instead.", file=sys.stderr)


def is_available():
    """``mx.metal.is_available()``: False."""
    return False


def get_active_memory():
    """Deprecated: ``mx.get_active_memory()``."""
    _deprecated("get_active_memory")
    return _memory.get_active_memory()


def get_peak_memory():
    """Deprecated: ``mx.get_peak_memory()``."""
    _deprecated("get_peak_memory")
    return _memory.get_peak_memory()


def reset_peak_memory():
    """Deprecated: ``mx.reset_peak_memory()``."""
    _deprecated("reset_peak_memory")
    _memory.reset_peak_memory()


def get_cache_memory():
    """Deprecated: ``mx.get_cache_memory()``."""
    _deprecated("get_cache_memory")
    return _memory.get_cache_memory()


def set_memory_limit(limit):
    """Deprecated: ``mx.set_memory_limit(limit)``."""
    _deprecated("set_memory_limit")
    return _memory.set_memory_limit(limit)


def set_cache_limit(limit):
    """Deprecated: ``mx.set_cache_limit(limit)``."""
    _deprecated("set_cache_limit")
    return _memory.set_cache_limit(limit)


def set_wired_limit(limit):
    """Deprecated: ``mx.set_wired_limit(limit)``."""
    _deprecated("set_wired_limit")
    return _memory.set_wired_limit(limit)


def clear_cache():
    """Deprecated: ``mx.clear_cache()``."""
    _deprecated("clear_cache")
    _memory.clear_cache()


def device_info():
    """Deprecated: ``mx.device_info(mx.gpu)``, which is ``{}`` without a gpu."""
    _deprecated("device_info")
    return _device.device_info(_device.gpu)


def start_capture(path):
    """``mx.metal.start_capture(path)``: nothing to capture without Metal."""
    if not isinstance(path, str):
        raise incompatible_arguments("start_capture(path: str) -> None", (path,))


def stop_capture():
    """``mx.metal.stop_capture()``: nothing to stop without Metal."""
