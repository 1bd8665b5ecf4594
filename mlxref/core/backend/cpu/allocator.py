"""The allocator's bookkeeping: the bytes arrays hold, the limits, and buffer donation.

Read alongside: mlx/allocator.h (``Buffer``, ``malloc``, ``free``),
mlx/backend/no_gpu/allocator.cpp (the CPU build's ``CommonAllocator``: active
and peak memory, the memory and cache limits), mlx/backend/no_gpu/linux_memory.h
(the machine's RAM) and mlx/backend/common/utils.h (``is_donatable``).

mlxref's elements live in Python lists, which Python allocates; what is kept
here is what MLX's allocator would count: ``allocate`` when an array gets its
elements (``array.set_data``), ``free`` when its descriptor goes. An array's
bytes are its elements times its itemsize. ``mx.get_active_memory`` and the
other functions MLX's Python module binds read this state (mlxref/core/memory.py).

An array's elements cost far more in a Python list than its itemsize says,
so evaluation refuses, before computing anything, an array whose list would
not fit in memory (``check_lists``; the costs and the message are in
list_memory.py).

Read next: mlxref/core/memory.py (``mx.get_active_memory``...),
mlxref/core/transforms/eval.py (``eval_arrays``, which donates and sets the
data).
"""

import math
import os
import sys
import threading

from .list_memory import ELEMENT_BYTES, LIMIT_VARIABLE, parse_limit, too_big


class _Memory:
    """Bytes of evaluated element data alive (elements x itemsize), like MLX.

    Arrays that share one element list (a reshape, a copy, stop_gradient, the
    outputs of a custom function) share one buffer, as they do in MLX, so it is
    counted once. A view (a broadcast, transpose or slice: ``Primitive.view``)
    has its own list in mlxref, but in MLX it shares its input's buffer, so it
    is counted as one more holder of that buffer: it costs nothing, and keeps
    the buffer alive after its input is gone. ``buffers`` maps a list's id to
    [holders of that list, buffer], and a buffer is [lists sharing it,
    nbytes]. The lock keeps the counts right when threads evaluate or free
    arrays at once.

    The limits are the ones MLX's CPU allocator keeps: mlxref records them and
    hands them back; nothing enforces them (MLX's CPU allocator does not
    enforce its memory limit either).
    """

    # One instance, ``memory``: its slots are cheaper to update than class
    # attributes (every array allocates and frees through them).
    __slots__ = ("active", "peak", "buffers", "lock", "memory_limit", "cache_limit")

    def __init__(self):
        self.active = 0
        self.peak = 0
        self.buffers = {}
        self.lock = threading.Lock()  # nothing inside it can free an array, so it is never re-entered
        self.memory_limit = int(0.8 * _physical_memory()) or 1 << 33
        self.cache_limit = 32 << 20


def _physical_memory():
    """Bytes of RAM, as mlx/backend/no_gpu/linux_memory.h reads them (0 if unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


memory = _Memory()


# (acquire/release rather than ``with``: these run for every array, and the
# lock's __enter__/__exit__ cost more than the counting.)


def allocate(data, nbytes, view_of=None):
    """Count ``data`` (a new element list, one more holder of a counted one,
    or a view sharing the buffer of the counted list ``view_of``)."""
    key = id(data)
    memory.lock.acquire()
    try:
        entry = memory.buffers.get(key)
        if entry is not None:
            entry[0] += 1
            return
        source = memory.buffers.get(id(view_of)) if view_of is not None else None
        if source is not None:
            buffer = source[1]
            buffer[0] += 1
        else:
            buffer = [1, nbytes]
            memory.active += nbytes
            if memory.active > memory.peak:
                memory.peak = memory.active
        memory.buffers[key] = [1, buffer]
    finally:
        memory.lock.release()


def free(data):
    """One holder of ``data`` is gone; the last one lets go of its buffer, and
    the last list sharing a buffer returns its bytes."""
    key = id(data)
    memory.lock.acquire()
    try:
        entry = memory.buffers[key]
        entry[0] -= 1
        if entry[0] == 0:
            del memory.buffers[key]
            buffer = entry[1]
            buffer[0] -= 1
            if buffer[0] == 0:
                memory.active -= buffer[1]
    finally:
        memory.lock.release()


def shares_buffer(data):
    """Does another list (a view) share ``data``'s buffer?"""
    entry = memory.buffers.get(id(data))
    return entry is not None and entry[1][0] > 1


# --- donation ---------------------------------------------------------------------

# MLX's is_donatable(in, out) (mlx/backend/common/utils.h): a buffer up to this
# many bytes larger than the output may still be reused for it.
DONATION_EXTRA = 16384


class _Holder:
    __slots__ = ("ref",)


def _sole_refcount():
    """What ``sys.getrefcount`` reports for an object one slot holds, read into a
    local name, as ``array.is_donatable`` reads a descriptor and its elements:
    measured, not assumed, since what it counts of its caller's frame differs
    between Pythons. Reference counts stand for MLX's ``use_count() == 1``."""
    holder = _Holder()
    holder.ref = []
    ref = holder.ref
    return sys.getrefcount(ref)


SOLE_REFCOUNT = _sole_refcount()


def donate(inputs, out, result):
    """Buffer donation: let the output ``out`` take over one input's buffer.

    MLX's elementwise and copy kernels write into an input's buffer instead of
    allocating one when nothing else can see that input (``is_donatable``: the
    node holds the only reference to the input's descriptor and the
    descriptor the only one to its buffer), the element sizes agree and the
    buffer is at most 16 KiB larger than the output; its slices and
    transposes are views of their input's buffer. So a chain ``abs(abs(x))``
    of a deleted ``x`` never holds two buffers, and ``get_peak_memory`` does
    not grow.

    mlxref's kernels compute a new list (``result``; lists are never mutated
    in place), so donation here means: the donor's list is released before
    the output's is counted, which is what MLX's counters see. (Python
    briefly held both lists while the kernel ran; the counters count arrays'
    buffers, as MLX's count its allocator's, and never a kernel's
    temporaries.) The donor is an input handle of this node that nothing else
    refers to (``array.is_donatable``); it goes when the node is detached.
    """
    itemsize = out.itemsize
    size = len(result)  # the output's elements, as its kernel computed them
    nbytes = size * itemsize
    if memory.active + nbytes <= memory.peak:
        # Counting the output will not raise the peak, so donating changes no
        # counter: the donor, which nothing else refers to, is freed when the
        # node is detached, and the active bytes end the same. (So on most
        # nodes donation costs nothing: only a new peak makes it matter.)
        return
    for x in inputs:
        if x.itemsize == itemsize and x.is_donatable():
            data = x.data()
            if (
                data is not result
                and size <= len(data)  # (a compiled chain reads smaller inputs too)
                and len(data) * itemsize <= nbytes + DONATION_EXTRA
            ):
                free(x.release_data())
                return


# --- what one array's element list may take ------------------------------------------

# MLX allocates an array's buffer when the array is evaluated. An mlxref list
# costs several times the itemsize (ELEMENT_BYTES: backend/cpu/list_memory.py),
# so evaluation asks ``check_lists`` first and refuses a list that would not
# fit, rather than fill memory for minutes until the process is killed. By
# default one list may take half the RAM: a kernel holds its inputs' lists
# and its output's at once.
_RAM = _physical_memory()
DEFAULT_ARRAY_LIMIT = _RAM // 2 or 1 << 33


def array_limit():
    """The most bytes one array's element list may take: ``MLXREF_MAX_ARRAY_BYTES``
    when it is set (read at every evaluation), else half the machine's RAM."""
    value = os.environ.get(LIMIT_VARIABLE)
    return DEFAULT_ARRAY_LIMIT if value is None else parse_limit(value)


def check_lists(arrays):
    """Refuse, before evaluation computes any of ``arrays``, the largest whose
    element list would take more than ``array_limit()``, naming its primitive
    (a RuntimeError, as MLX's allocator raises). One multiplication a node."""
    limit = array_limit()
    worst, worst_bytes = None, limit + 1
    for a in arrays:
        nbytes = math.prod(a.shape) * ELEMENT_BYTES[a.dtype]
        if nbytes >= worst_bytes:  # over the limit; of equals, the later (nearer the output)
            worst, worst_bytes = a, nbytes
    if worst is not None:
        raise too_big("eval", worst.shape, worst.dtype, limit, _RAM, worst.primitive())


def check_list(op, shape, dtype):
    """Refuse (naming ``op``) to make the element list of a ``shape`` array of
    ``dtype`` that would take more than ``array_limit()`` (``load`` asks before
    it decodes a file's bytes)."""
    limit = array_limit()
    if math.prod(shape) * ELEMENT_BYTES[dtype] > limit:
        raise too_big(op, shape, dtype, limit, _RAM)
