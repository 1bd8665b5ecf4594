"""``mx.distributed``'s operations: MLX's checks, then a node of the collective.

Read alongside: mlx/distributed/ops.cpp (``all_sum``... ``sum_scatter``: the
checks, the output shapes, the node) and python/src/distributed.cpp (the
bindings: which arguments are converted, the signatures MLX prints in its
TypeErrors).

``group=None`` means the group ``init()`` gives. On a group of one, MLX's
``all_sum``, ``all_max``, ``all_min``, ``all_gather`` and ``sum_scatter`` build
no node: they return their input (``if (group.size() == 1) return x;``), so
their gradients, tangents and batching are the identity's, and so they are here
(a new handle of the input, as every op in mlxref that returns its input
unchanged); ``send``, ``recv`` and ``recv_like`` raise. On a larger group each
builds a lazy node of its primitive (primitives.py); the communication happens
when it is evaluated, on every rank, so every rank must evaluate the same
collectives in the same order. ``stream=`` is accepted and changes nothing
(mlxref/core/device.py).

Read next: mlxref/core/distributed/primitives.py (the primitives and their rules).
"""

import copy

from .. import device as _device
from ..array import array
from ..convert import is_scalar, not_an_operand, to_array
from ..dtypes import Dtype
from ..ops.common import incompatible_arguments, is_int, to_shape
from ..primitives.base import make_array
from .distributed import Group, init
from .primitives import AllGather, AllReduce, ReduceScatter, Recv, Send

_GROUP = "Group | None = None, stream: StreamOrDevice = None) -> array"


def _check(signature, args, group, stream):
    """MLX's TypeError for a ``group=`` or ``stream=`` of the wrong type."""
    kwargs = {k: v for k, v in (("group", group), ("stream", stream)) if v is not None}
    if group is not None and not isinstance(group, Group) or stream is not None and \
            not _device.is_stream_or_device(stream):
        raise incompatible_arguments(signature, args, kwargs)


def _input(x):
    """``x`` as an array, as MLX's binding converts it (scalars yes, lists no)."""
    if isinstance(x, array):
        return copy.copy(x)
    if is_scalar(x):
        return to_array(x)
    raise not_an_operand(x)


def _to_group(group):
    """MLX's ``to_group``: the group given, or the one ``init()`` gives."""
    return init() if group is None else group


def _all_reduce(name, reduce_type, x, group, stream):
    _check(f"{name}(x: array, *, group: {_GROUP}", (x,), group, stream)
    x, group = _input(x), _to_group(group)
    if group.size() == 1:
        return x
    return make_array(AllReduce(group, reduce_type), [x])


def all_sum(x, *, group=None, stream=None):
    """``mx.distributed.all_sum``: the elementwise sum of ``x`` over the group's
    processes (on one process, ``x`` itself: MLX builds no node then)."""
    return _all_reduce("all_sum", "sum", x, group, stream)


def all_max(x, *, group=None, stream=None):
    """``mx.distributed.all_max``: the elementwise maximum over the group."""
    return _all_reduce("all_max", "max", x, group, stream)


def all_min(x, *, group=None, stream=None):
    """``mx.distributed.all_min``: the elementwise minimum over the group."""
    return _all_reduce("all_min", "min", x, group, stream)


def all_gather(x, *, group=None, stream=None):
    """``mx.distributed.all_gather``: the processes' ``x`` concatenated along
    axis 0 in rank order (scalars make a vector); on one process ``x`` itself,
    a scalar staying a scalar, as in MLX."""
    _check(f"all_gather(x: array, *, group: {_GROUP}", (x,), group, stream)
    x, group = _input(x), _to_group(group)
    if group.size() == 1:
        return x
    return make_array(AllGather(group), [x])


def sum_scatter(x, *, group=None, stream=None):
    """``mx.distributed.sum_scatter``: this process's block along axis 0 of the
    sum over the group; on one process ``x`` itself, whatever its shape (MLX
    checks the shape only for larger groups)."""
    _check(f"sum_scatter(x: array, *, group: {_GROUP}", (x,), group, stream)
    x, group = _input(x), _to_group(group)
    if group.size() == 1:
        return x
    if x.ndim == 0 or x.shape[0] % group.size() != 0:
        shape = ",".join(str(n) for n in x.shape)
        raise ValueError(
            f"[sum_scatter] Invalid shape=({shape}) for a group of size {group.size()}. "
            "The first dimension (axis 0) must be divisible by the group size and input "
            "mst have at least one.")
    return make_array(ReduceScatter(group, "sum"), [x])


def _kwargs(group, stream):
    return {k: v for k, v in (("group", group), ("stream", stream)) if v is not None}


def send(x, dst, *, group=None, stream=None):
    """``mx.distributed.send``: send ``x`` to the process of rank ``dst``. Returns
    an array equal to ``x``; evaluating it sends."""
    sig = f"send(x: array, dst: int, *, group: {_GROUP}"
    if not is_int(dst):
        raise incompatible_arguments(sig, (x, dst), _kwargs(group, stream))
    _check(sig, (x, dst), group, stream)
    x, group = _input(x), _to_group(group)
    if group.size() == 1:
        raise ValueError("Cannot send to a singleton group")
    if not 0 <= dst < group.size():
        raise ValueError(f"Invalid destination={dst} for a group of size {group.size()}")
    return make_array(Send(group, dst), [x])


_RECV = f"recv(shape: Sequence[int], dtype: Dtype, src: int, *, group: {_GROUP}"


def _recv(shape, dtype, src, group):
    group = _to_group(group)
    if group.size() == 1:
        raise ValueError("Cannot recv from a singleton group")
    if not 0 <= src < group.size():
        raise ValueError(f"Invalid source={src} for a group of size {group.size()}")
    return make_array(Recv(group, src, shape, dtype), [])


def recv(shape, dtype, src, *, group=None, stream=None):
    """``mx.distributed.recv``: the array of ``shape`` and ``dtype`` the process
    of rank ``src`` sends."""
    if (not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) for d in shape)
            or not isinstance(dtype, Dtype) or not is_int(src)):
        raise incompatible_arguments(_RECV, (shape, dtype, src), _kwargs(group, stream))
    _check(_RECV, (shape, dtype, src), group, stream)
    shape = to_shape(shape, _RECV, (shape, dtype, src))  # MLX's OverflowError past 32 bits
    return _recv(shape, dtype, src, group)


def recv_like(x, src, *, group=None, stream=None):
    """``mx.distributed.recv_like``: ``recv`` of ``x``'s shape and dtype."""
    sig = f"recv_like(x: array, src: int, *, group: {_GROUP}"
    if not is_int(src):
        raise incompatible_arguments(sig, (x, src), _kwargs(group, stream))
    _check(sig, (x, src), group, stream)
    x = _input(x)
    return _recv(x.shape, x.dtype, src, group)
