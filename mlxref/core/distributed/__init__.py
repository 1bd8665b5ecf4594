"""``mx.distributed`` with no back-end configured: one process, rank 0, size 1.

Read alongside: mlx/distributed/distributed.cpp (``init``, ``Group``),
mlx/distributed/ops.cpp and mlx/distributed/primitives.cpp, and
python/src/distributed.cpp.

On a group of one, MLX's ``all_sum``, ``all_max``, ``all_min``, ``all_gather``
and ``sum_scatter`` build no node: they return their input (ops.cpp, ``if
(group.size() == 1) return x;``), so their gradients, tangents and batching are
the identity's, and so they are here (a new handle of the input, as every op in
mlxref that returns its input unchanged). No ``AllReduce``/``AllGather``/
``ReduceScatter`` primitive is ever made on a group of one, so mlxref has none:
the rules would never run. ``send``, ``recv`` and ``recv_like`` raise MLX's
singleton-group errors. Multi-process training needs real MLX.
"""

import copy

from .. import device as _device
from ..array import array
from ..dtypes import Dtype
from ..convert import is_scalar, to_array
from ..ops.common import incompatible_arguments

_BACKENDS = ("any", "mpi", "nccl", "jaccl", "ring")
_GROUP = "Group | None = None, stream: StreamOrDevice = None) -> array"


class Group:
    """``mx.distributed.Group``: the processes taking part (here: this one)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("mlx.core.distributed.Group: no constructor defined!")

    def rank(self):
        """This process's rank in the group: 0."""
        return 0

    def size(self):
        """How many processes the group has: 1."""
        return 1

    def split(self, color, key=-1):
        """``group.split(color, key=-1)``: MLX's singleton group cannot be split."""
        for v in (color, key):
            if not isinstance(v, int):
                args = (self, color) if key == -1 else (self, color, key)
                raise incompatible_arguments(
                    "split(self, color: int, key: int = -1) -> Group", args)
        raise RuntimeError("Cannot split the distributed group further.")


Group.__module__ = "mlxref.core.distributed"
_WORLD = object.__new__(Group)  # the one group: ``Group()`` refuses, as MLX's has no constructor


def is_available(backend="any"):
    """``mx.distributed.is_available(backend="any")``: False for every back-end:
    mlxref can make no communication group but the singleton one. (MLX's CPU build
    on Linux says True for "any" and "ring", the back-end compiled into it.)"""
    if not isinstance(backend, str):
        raise incompatible_arguments("is_available(backend: str = 'any') -> bool", (backend,))
    return False


_INIT = ("init(strict: bool = False, backend: str = 'any', *, all_gather_factory: "
         "Callable[[int, int], Callable[[bytes, int], bytes]] | None = None) -> Group")


def init(strict=False, backend="any", *, all_gather_factory=None):
    """``mx.distributed.init(strict=False, backend="any")``: the singleton group
    (always the same object), or with ``strict=True`` the error MLX gives when no
    back-end can start."""
    given = {k: v for k, v in (("strict", strict), ("backend", backend)) if
             (k == "strict" and v is not False) or (k == "backend" and v != "any")}
    if not isinstance(strict, bool) or not isinstance(backend, str):
        raise incompatible_arguments(_INIT, (), given)
    if all_gather_factory is not None and not callable(all_gather_factory):
        raise incompatible_arguments(_INIT, (), {**given,
                                                 "all_gather_factory": all_gather_factory})
    if backend not in _BACKENDS:
        raise ValueError(
            "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', "
            f"'jaccl' and 'ring' but '{backend}' was provided.")
    if strict:
        raise RuntimeError({
            "any": "[distributed] Couldn't initialize any backend",
            "mpi": "Cannot initialize MPI",
            "nccl": "Cannot initialize nccl distributed backend.",
            "jaccl": "Cannot initialize jaccl distributed backend.",
            "ring": "[ring] You need to provide via environment variables both a rank "
                    '(MLX_RANK) and a hostfile (MLX_HOSTFILE) but provided MLX_RANK="" '
                    'and MLX_HOSTFILE=""',
        }[backend])
    return _WORLD


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
    raise ValueError(f"Invalid type {type(x).__name__} received in array initialization.")


def _collective(name, x, group, stream):
    _check(f"{name}(x: array, *, group: {_GROUP}", (x,), group, stream)
    return _input(x)


def all_sum(x, *, group=None, stream=None):
    """``mx.distributed.all_sum``: the sum over the group, which on one process is
    ``x`` itself (MLX builds no node then)."""
    return _collective("all_sum", x, group, stream)


def all_max(x, *, group=None, stream=None):
    """``mx.distributed.all_max``: on one process, ``x`` itself."""
    return _collective("all_max", x, group, stream)


def all_min(x, *, group=None, stream=None):
    """``mx.distributed.all_min``: on one process, ``x`` itself."""
    return _collective("all_min", x, group, stream)


def all_gather(x, *, group=None, stream=None):
    """``mx.distributed.all_gather``: the inputs concatenated along axis 0, which on
    one process is ``x`` itself (a scalar stays a scalar, as in MLX)."""
    return _collective("all_gather", x, group, stream)


def sum_scatter(x, *, group=None, stream=None):
    """``mx.distributed.sum_scatter``: the sum over the group, split along axis 0;
    on one process ``x`` itself, whatever its shape (MLX checks the shape only
    for larger groups)."""
    return _collective("sum_scatter", x, group, stream)


def send(x, dst, *, group=None, stream=None):
    """``mx.distributed.send``: MLX's error, there being no one to send to."""
    sig = f"send(x: array, dst: int, *, group: {_GROUP}"
    if not isinstance(dst, int):
        raise incompatible_arguments(sig, (x, dst), {k: v for k, v in
                                     (("group", group), ("stream", stream)) if v is not None})
    _check(sig, (x, dst), group, stream)
    _input(x)
    raise ValueError("Cannot send to a singleton group")


_RECV = f"recv(shape: Sequence[int], dtype: Dtype, src: int, *, group: {_GROUP}"


def recv(shape, dtype, src, *, group=None, stream=None):
    """``mx.distributed.recv``: MLX's error, there being no one to receive from."""
    kwargs = {k: v for k, v in (("group", group), ("stream", stream)) if v is not None}
    if (not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) for d in shape)
            or not isinstance(dtype, Dtype) or not isinstance(src, int)):
        raise incompatible_arguments(_RECV, (shape, dtype, src), kwargs)
    _check(_RECV, (shape, dtype, src), group, stream)
    raise ValueError("Cannot recv from a singleton group")


def recv_like(x, src, *, group=None, stream=None):
    """``mx.distributed.recv_like``: ``recv`` of ``x``'s shape and dtype; MLX's error."""
    sig = f"recv_like(x: array, src: int, *, group: {_GROUP}"
    kwargs = {k: v for k, v in (("group", group), ("stream", stream)) if v is not None}
    if not isinstance(src, int):
        raise incompatible_arguments(sig, (x, src), kwargs)
    _check(sig, (x, src), group, stream)
    _input(x)
    raise ValueError("Cannot recv from a singleton group")
