"""Groups of processes: the back-end interface, the group of one, ``init`` and
``is_available``.

Read alongside: mlx/distributed/distributed_impl.h (``GroupImpl``, the interface
every back-end implements), mlx/distributed/distributed.cpp (``EmptyGroup``,
``init``, ``is_available``, the cache of initialised back-ends) and the
``Group`` class and ``init`` of python/src/distributed.cpp.

A back-end is a class of ``GroupImpl``: it knows this process's rank, the
group's size, and moves element lists between the processes. ``Group`` is the
handle users hold (MLX's Python ``Group``) and wraps one. ``init`` starts a
back-end once and keeps it: later calls for the same back-end, or for "any"
once one has started, return it. When no back-end can start it returns the
group of one (``EmptyGroup``), on which the collectives build no node (ops.py),
or, with ``strict=True``, raises the back-end's error.

Read next: mlxref/core/distributed/ops.py (the collectives), then ring.py (the
ring back-end over TCP).
"""

import importlib

from ..ops.common import incompatible_arguments

# --- the back-end interface (mlx/distributed/distributed_impl.h) -------------


class GroupImpl:
    """What a back-end implements: MLX's ``GroupImpl`` on element lists.

    ``data`` is a flat list of elements as ``dtype`` (an ``mlxref.core.dtypes``
    Dtype) holds them (mlxref/core/dtypes.py); every method returns a new list
    and never changes ``data``. A collective is called by every rank of the
    group with lists of the same length, in the same order on every rank.
    """

    def rank(self):
        """This process's rank in the group, 0 to ``size() - 1``."""
        raise NotImplementedError("GroupImpl.rank")

    def size(self):
        """How many processes the group has."""
        raise NotImplementedError("GroupImpl.size")

    def split(self, color, key):
        """The group of the ranks that passed the same ``color``, ordered by
        ``key`` (this rank's rank when ``key`` is negative)."""
        raise NotImplementedError("GroupImpl.split")

    def all_sum(self, data, dtype):
        """The elementwise sum over the ranks, added as the back-end adds
        (its order, each step rounded to ``dtype``)."""
        return self.all_reduce(data, dtype, "all_sum")

    def all_max(self, data, dtype):
        """The elementwise maximum over the ranks."""
        return self.all_reduce(data, dtype, "all_max")

    def all_min(self, data, dtype):
        """The elementwise minimum over the ranks."""
        return self.all_reduce(data, dtype, "all_min")

    def all_reduce(self, data, dtype, op):
        """The three above in one, ``op`` naming which ("all_sum", "all_max",
        "all_min"; wire.py's ``REDUCE_OPS``), as a back-end's templated
        ``all_reduce`` serves them in MLX; a back-end overrides either."""
        raise NotImplementedError(f"GroupImpl.{op}")

    def all_gather(self, data, dtype):
        """The ranks' lists concatenated in rank order."""
        raise NotImplementedError("GroupImpl.all_gather")

    def sum_scatter(self, data, dtype):
        """This rank's block (``len(data) // size()`` elements, block ``rank()``)
        of the elementwise sum over the ranks."""
        raise NotImplementedError("GroupImpl.sum_scatter")

    def send(self, data, dtype, dst):
        """Send ``data`` to rank ``dst``; returns None."""
        raise NotImplementedError("GroupImpl.send")

    def recv(self, count, dtype, src):
        """The ``count`` elements of ``dtype`` that rank ``src`` sends."""
        raise NotImplementedError("GroupImpl.recv")


class EmptyGroup(GroupImpl):
    """The group of one process, what ``init`` gives when no back-end starts.

    Nothing ever communicates on it: the ops return their input or raise
    before a node is built (ops.py), so its collectives only say so.
    """

    def rank(self):
        return 0

    def size(self):
        return 1

    def split(self, color, key):
        raise RuntimeError("Cannot split the distributed group further.")

    def _none(self, *args):
        raise RuntimeError("Communication not implemented in an empty distributed group.")

    all_sum = all_max = all_min = all_gather = sum_scatter = send = recv = _none


# --- the handle users hold (python/src/distributed.cpp's Group) ---------------


class Group:
    """``mx.distributed.Group``: the processes taking part in a collective.

    Made by ``init`` or ``Group.split``, never by its constructor (MLX's has
    none). ``impl()`` is the back-end's ``GroupImpl``, which the kernels call.
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("mlx.core.distributed.Group: no constructor defined!")

    @classmethod
    def wrapping(cls, impl):
        """The handle of the back-end group ``impl`` (one handle per ``impl``,
        so ``init()`` returns the same object each time)."""
        group = _HANDLES.get(id(impl))
        if group is None or group.impl() is not impl:
            group = object.__new__(cls)
            group._impl = impl
            _HANDLES[id(impl)] = group
        return group

    def impl(self):
        """The back-end's group (a ``GroupImpl``)."""
        return self._impl

    def rank(self):
        """This process's rank in the group."""
        return self._impl.rank()

    def size(self):
        """How many processes the group has."""
        return self._impl.size()

    def split(self, color, key=-1):
        """``group.split(color, key=-1)``: the subgroup of the ranks that pass the
        same ``color``, ranked by ``key`` (by the rank here when negative)."""
        for v in (color, key):
            if not isinstance(v, int):
                args = (self, color) if key == -1 else (self, color, key)
                raise incompatible_arguments(
                    "split(self, color: int, key: int = -1) -> Group", args)
        return Group.wrapping(self._impl.split(color, key))


Group.__module__ = "mlxref.core.distributed"
_HANDLES = {}  # id(GroupImpl) -> its Group
_EMPTY = EmptyGroup()  # one is enough: every group of one behaves the same


# --- the back-ends (distributed.cpp's is_available and init) ------------------

_BACKENDS = ("any", "mpi", "nccl", "jaccl", "ring")

# A back-end module of this package (ring.py, mpi.py) provides ``init(strict)``,
# returning its GroupImpl or None; "nccl" (CUDA) and "jaccl" (RDMA over
# Thunderbolt) have none here, as in MLX's CPU build on Linux.
_MODULES = {"ring": "ring", "mpi": "mpi"}

# What each back-end's ``init(strict=True)`` raises when it cannot start and no
# module of this package says otherwise (mlx/distributed/*/no_*.cpp and
# ring.cpp's check of the environment).
_CANNOT_START = {
    "mpi": "Cannot initialize MPI",
    "nccl": "Cannot initialize nccl distributed backend.",
    "jaccl": "Cannot initialize jaccl distributed backend.",
    "ring": "[ring] You need to provide via environment variables both a rank "
            '(MLX_RANK) and a hostfile (MLX_HOSTFILE) but provided MLX_RANK="" '
            'and MLX_HOSTFILE=""',
}

# The back-ends that have started, by name, and under "any" the first of them.
# A group of one is never kept, so a later ``init`` tries again (as MLX 0.32.4).
_STARTED = {}


def _module(backend):
    """The module of this package implementing ``backend``, or None."""
    name = _MODULES.get(backend)
    if name is None:
        return None
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None


def _backend_available(backend):
    module = _module(backend)
    if module is None:
        return False
    # mpi.py can only tell by looking for mpi4py and an MPI library
    check = getattr(module, "is_available", None)
    return True if check is None else bool(check())


def _start(backend, strict):
    """``<backend>::init(strict)``: its GroupImpl, or None, or its error."""
    module = _module(backend)
    if module is not None:
        return module.init(strict)
    if strict:
        raise RuntimeError(_CANNOT_START[backend])
    return None


def is_available(backend="any"):
    """``mx.distributed.is_available(backend="any")``: whether mlxref can start
    ``backend`` at all ("any": one of them), not whether this process was
    launched so that it can; ``init(strict=True)`` tells that."""
    if not isinstance(backend, str):
        raise incompatible_arguments("is_available(backend: str = 'any') -> bool", (backend,))
    if backend == "any":
        return any(_backend_available(b) for b in ("ring", "mpi"))
    return _backend_available(backend)


_INIT = ("init(strict: bool = False, backend: str = 'any', *, all_gather_factory: "
         "Callable[[int, int], Callable[[bytes, int], bytes]] | None = None) -> Group")


def init(strict=False, backend="any", *, all_gather_factory=None):
    """``mx.distributed.init(strict=False, backend="any")``: the group of every
    launched process, from ``backend`` or ("any") the first of ring, MPI that
    starts; the group of one when none does, or with ``strict=True`` the error.

    ``all_gather_factory`` is for the "jaccl" back-end only, which mlxref does
    not have.
    """
    given = {k: v for k, v in (("strict", strict), ("backend", backend)) if
             (k == "strict" and v is not False) or (k == "backend" and v != "any")}
    if not isinstance(strict, bool) or not isinstance(backend, str):
        raise incompatible_arguments(_INIT, (), given)
    if all_gather_factory is not None:
        if not callable(all_gather_factory):
            raise incompatible_arguments(_INIT, (), {**given,
                                                     "all_gather_factory": all_gather_factory})
        if backend != "jaccl":
            raise ValueError("all_gather_factory is only supported with backend='jaccl'.")
    if backend in _STARTED:
        return Group.wrapping(_STARTED[backend])
    if backend not in _BACKENDS:
        raise ValueError(
            "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', "
            f"'jaccl' and 'ring' but '{backend}' was provided.")
    impl, started = None, backend
    if backend == "any":
        # nccl first only on CUDA, which mlxref never has; jaccl never starts here
        for started in ("ring", "mpi"):
            impl = _start(started, False)
            if impl is not None:
                break
        if impl is None and strict:
            raise RuntimeError("[distributed] Couldn't initialize any backend")
    else:
        impl = _start(backend, strict)
    if impl is None:
        return Group.wrapping(_EMPTY)
    _STARTED.setdefault("any", impl)
    _STARTED.setdefault(started, impl)
    return Group.wrapping(impl)
