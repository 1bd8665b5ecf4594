"""``mx.get_active_memory`` and the other memory functions of MLX's Python module.

Read alongside: mlx/memory.h (the functions) and python/src/memory.cpp (their
bindings, which take a limit as a C ``size_t``). They read and set what the
allocator keeps (mlxref/core/backend/cpu/allocator.py, as MLX's CPU build
keeps it in mlx/backend/no_gpu/allocator.cpp).

Read next: mlxref/core/backend/cpu/allocator.py.
"""

from .backend.cpu.allocator import memory
from .ops.common import incompatible_arguments


def get_active_memory():
    """``mx.get_active_memory()``: bytes of element data held by live arrays."""
    return memory.active


def get_peak_memory():
    """``mx.get_peak_memory()``: the most ``get_active_memory()`` has been since the last reset."""
    return memory.peak


def reset_peak_memory():
    """``mx.reset_peak_memory()``: set the peak to 0; the next allocation raises it again."""
    memory.peak = 0


def get_cache_memory():
    """``mx.get_cache_memory()``: always 0. MLX keeps freed buffers in a cache to
    reuse; mlxref's element lists go back to Python when the last array holding
    them goes, so there is never anything cached."""
    return 0


def clear_cache():
    """``mx.clear_cache()``: empty the cache, which in mlxref is always empty."""


_SIZE_T = range(2**64)


def _limit(name, limit):
    if not isinstance(limit, int) or isinstance(limit, bool) or limit not in _SIZE_T:
        raise incompatible_arguments(f"{name}(limit: int) -> int", (limit,))
    return limit


def set_memory_limit(limit):
    """``mx.set_memory_limit(limit)``: record ``limit`` (bytes) and return the limit
    it replaces. The first one is MLX's CPU default, 0.8 x the machine's RAM.
    Recorded only: mlxref, like MLX's CPU build, never waits or fails on it."""
    limit = _limit("set_memory_limit", limit)
    with memory.lock:
        memory.memory_limit, old = limit, memory.memory_limit
    return old


def get_memory_limit():
    """``mx.get_memory_limit()``: the limit ``set_memory_limit`` last recorded."""
    return memory.memory_limit


def set_cache_limit(limit):
    """``mx.set_cache_limit(limit)``: record ``limit`` (bytes) and return the one it
    replaces (MLX's default: 32 MiB). mlxref caches nothing, so it has no effect."""
    limit = _limit("set_cache_limit", limit)
    with memory.lock:
        memory.cache_limit, old = limit, memory.cache_limit
    return old


def set_wired_limit(limit):
    """``mx.set_wired_limit(limit)``: wiring memory is a Metal matter; as in MLX's
    CPU build the argument is checked, nothing is recorded and 0 is returned."""
    _limit("set_wired_limit", limit)
    return 0
