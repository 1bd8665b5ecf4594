"""The MPI back-end: ranks started by ``mpirun``, talking through a real MPI library.

Read alongside: mlx/distributed/mpi/mpi.cpp (``MPIWrapper``, ``MPIGroup``,
``init``) and mlx/distributed/reduction_ops.h.

MLX opens ``libmpi`` at run time and calls it directly; mlxref calls the same
library through mpi4py (the optional ``mpi`` extra), which is imported only
when a group is asked for, so mlxref runs without it. The MPI calls are MLX's:
``MPI_Allreduce`` with the MPI datatype of each dtype and MPI's own sum, max
and min, ``MPI_Allgather``, ``MPI_Send``/``MPI_Recv`` with tag 0, and
``MPI_Comm_split``. MPI has no float16 or bfloat16, and no order on complex
numbers, so, as MLX does, those travel as two (or eight) opaque bytes and are
reduced by our own MPI operations, here wire.py's reductions run by MPI as
Python functions. The same library making the same reduction in the same order,
the bits are real MLX's under the same ``mpirun``.

Where mlxref differs, and why:

- MLX accepts only Open MPI (it looks up Open MPI's symbol names); mpi4py hides
  those, so any MPI that mpi4py supports works (MPICH too).
- ``init`` starts MPI only when an MPI launcher started this process (its
  environment says so). Otherwise MPI would make a world of this process alone,
  which MLX turns down anyway; not starting MPI gives the same answer without
  the cost, or the failure, of a singleton MPI start-up.
- A call into MPI that a peer never answers blocks forever in MLX. Here each
  call runs in a helper thread and the caller waits at most
  ``MLXREF_MPI_TIMEOUT`` seconds (default 600), then raises a RuntimeError
  naming the operation; MPI is then broken (the call is still pending inside
  it), later calls refuse at once, and at exit the process aborts the MPI job,
  so ``mpirun`` stops every rank. A rank that dies makes ``mpirun`` stop the
  others on its own.
- A ``recv`` checks that the message has exactly the expected size; MLX leaves
  the rest of its output uninitialised (or MPI aborts, for a longer message).

Read next: wire.py (the reductions); mlxref/launch.py's ``--backend mpi`` runs
``mpirun``.
"""

import atexit
import os
import sys
import threading

from .. import dtypes as _dt
from .wire import REDUCE_OPS, from_wire, to_wire

from .distributed import GroupImpl

MPI_TAG = "[mpi]"
TIMEOUT_VARIABLE = "MLXREF_MPI_TIMEOUT"
# As the ring's (ring.py): a rank may compute for minutes between two
# collectives, so only a peer silent for this long is taken for hung.
DEFAULT_TIMEOUT = 600.0

# Variables the launchers of Open MPI, MPICH (hydra), PMIx and Slurm's PMI set
# in each process they start: one of them says the process may have peers.
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                      "MPI_LOCALNRANKS")


def timeout_seconds():
    """How long a call into MPI may wait for the other ranks (``MLXREF_MPI_TIMEOUT``)."""
    value = os.environ.get(TIMEOUT_VARIABLE, "")
    try:
        seconds = float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise RuntimeError(f"{MPI_TAG} {TIMEOUT_VARIABLE} should be a positive number of "
                           f"seconds but is {value!r}")
    return seconds


# --- the library (mpi.cpp's MPIWrapper) -------------------------------------------------


class MPIWrapper:
    """mpi4py's MPI module, MPI started once, and the datatypes and operations of
    each dtype. ``MPI`` is None when mpi4py or its MPI library cannot be loaded."""

    def __init__(self):
        self.MPI = None
        self.initialized = False
        self.broken = None  # why MPI can no longer be used, once a call never returned
        try:
            import mpi4py
            if "mpi4py.MPI" not in sys.modules:
                # Loading the library must not start MPI (MLX only opens libmpi until
                # init); mpi4py still finalizes at exit what init_safe starts.
                mpi4py.rc.initialize = False
                mpi4py.rc.finalize = True
            from mpi4py import MPI
        except Exception:  # no mpi4py, or no MPI library it can load
            return
        self.MPI = MPI

    def is_available(self):
        return self.MPI is not None

    def init_safe(self):
        """Start MPI once; False when it cannot start."""
        if not self.is_available():
            return False
        if self.initialized:
            return True
        MPI = self.MPI
        try:
            if not MPI.Is_initialized():
                MPI.Init_thread(MPI.THREAD_MULTIPLE)  # calls come from helper threads
        except MPI.Exception:
            return False
        # The dtypes MPI lacks travel as bytes and are reduced by our operations.
        float16 = MPI.UINT8_T.Create_contiguous(2).Commit()
        bfloat16 = MPI.UINT8_T.Create_contiguous(2).Commit()
        self.datatypes = {
            _dt.bool_: MPI.C_BOOL, _dt.int8: MPI.INT8_T, _dt.uint8: MPI.UINT8_T,
            _dt.int16: MPI.INT16_T, _dt.uint16: MPI.UINT16_T, _dt.int32: MPI.INT32_T,
            _dt.uint32: MPI.UINT32_T, _dt.int64: MPI.INT64_T, _dt.uint64: MPI.UINT64_T,
            _dt.float32: MPI.FLOAT, _dt.float64: MPI.DOUBLE, _dt.complex64: MPI.C_FLOAT_COMPLEX,
            _dt.float16: float16, _dt.bfloat16: bfloat16,
        }
        builtin = {"all_sum": MPI.SUM, "all_max": MPI.MAX, "all_min": MPI.MIN}
        custom = (("all_sum", _dt.float16), ("all_sum", _dt.bfloat16),
                  ("all_max", _dt.float16), ("all_max", _dt.bfloat16), ("all_max", _dt.complex64),
                  ("all_min", _dt.float16), ("all_min", _dt.bfloat16), ("all_min", _dt.complex64))
        self.ops = {key: MPI.Op.Create(reduction(*key), commute=True) for key in custom}
        self.builtin_ops = builtin
        atexit.register(self.abort_if_broken)
        self.initialized = True
        return True

    def datatype(self, dtype):
        return self.datatypes[dtype]

    def op(self, name, dtype):
        """mpi.cpp's ``op_sum``/``op_max``/``op_min``: ours where MPI's cannot do."""
        return self.ops.get((name, dtype), self.builtin_ops[name])

    def abort_if_broken(self):
        """At exit: a call still pending inside MPI would make finalizing wait for
        ever, so end the whole job instead (mpirun then stops every rank)."""
        if self.broken is not None and not self.MPI.Is_finalized():
            print(f"{MPI_TAG} aborting the MPI job: {self.broken}", file=sys.stderr, flush=True)
            self.MPI.COMM_WORLD.Abort(1)


def reduction(name, dtype):
    """An MPI user function combining ``inbuf`` into ``inoutbuf`` as MLX's
    ``simple_sum``/``simple_max``/``simple_min`` do: ``*acc = op(*acc, *in)``
    in ``dtype`` (wire.py's reductions)."""
    reduce = REDUCE_OPS[name]

    def function(inbuf, inoutbuf, datatype):
        raw_in, raw_acc = memoryview(inbuf).cast("B"), memoryview(inoutbuf).cast("B")
        count = len(raw_acc) // dtype.size
        accumulated = reduce(from_wire(raw_in, dtype, count), from_wire(raw_acc, dtype, count),
                             dtype)
        raw_acc[:] = to_wire(accumulated, dtype)

    return function


_WRAPPER = None


def mpi():
    """The one MPIWrapper of this process, made at first use."""
    global _WRAPPER
    if _WRAPPER is None:
        _WRAPPER = MPIWrapper()
    return _WRAPPER


# --- the group --------------------------------------------------------------------------


class MPIGroup(GroupImpl):
    """The ranks of an MPI communicator (mpi.cpp's ``MPIGroup``): the world, or a
    part of it made by ``split``."""

    def __init__(self, comm):
        self._comm = comm
        self._rank, self._size = comm.Get_rank(), comm.Get_size()

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def split(self, color, key=-1):
        key = self._rank if key < 0 else key
        try:
            comm = self._call("split", "MPI_Comm_split", None, self._comm.Split, color, key)
        except RuntimeError as e:
            if mpi().broken is not None:
                raise
            raise RuntimeError("MPI could not split this group") from e
        return MPIGroup(comm)

    # --- the collectives ------------------------------------------------------------

    def all_reduce(self, data, dtype, op):
        """``MPI_Allreduce`` with ``MPI_SUM``, ``MPI_MAX`` or ``MPI_MIN``; our
        own operation for float16 and bfloat16 (and complex64's max and min)."""
        wrapper, count = mpi(), len(data)
        datatype = wrapper.datatype(dtype)
        output = bytearray(count * dtype.size)
        self._call(op, "MPI_Allreduce", None, self._comm.Allreduce,
                   [to_wire(data, dtype), count, datatype], [output, count, datatype],
                   wrapper.op(op, dtype))
        return from_wire(bytes(output), dtype, count)

    def all_gather(self, data, dtype):
        count, datatype = len(data), mpi().datatype(dtype)
        output = bytearray(count * dtype.size * self._size)
        self._call("all_gather", "MPI_Allgather", None, self._comm.Allgather,
                   [to_wire(data, dtype), count, datatype], [output, count, datatype])
        return from_wire(bytes(output), dtype, count * self._size)

    def sum_scatter(self, data, dtype):
        raise RuntimeError(f"{MPI_TAG} sum_scatter not yet implemented.")

    def send(self, data, dtype, dst):
        count = len(data)
        self._call("send", "MPI_Send", dst, self._comm.Send,
                   [to_wire(data, dtype), count, mpi().datatype(dtype)], dst, 0)

    def recv(self, count, dtype, src):
        MPI, datatype = mpi().MPI, mpi().datatype(dtype)
        output, status = bytearray(count * dtype.size), MPI.Status()
        self._call("recv", "MPI_Recv", src, self._comm.Recv,
                   [output, count, datatype], src, MPI.ANY_TAG, status)
        received = status.Get_count(datatype)
        if received != count:
            raise RuntimeError(f"{MPI_TAG} recv from rank {src}: a message of {received} "
                               f"elements of {dtype.name} where {count} were expected")
        return from_wire(bytes(output), dtype, count)

    # --- calling MPI --------------------------------------------------------------------

    def _call(self, op, mpi_function, peer, function, *args):
        """``function(*args)`` (one blocking MPI call) in a helper thread, waiting for
        it at most the timeout; MPI's errors and the timeout as RuntimeErrors naming
        ``op``, the MPI function and the rank at the other end (``peer``, None for
        a collective)."""
        wrapper = mpi()
        if wrapper.broken is not None:
            raise RuntimeError(f"{MPI_TAG} {op} refused: MPI is broken since {wrapper.broken}")
        timeout = timeout_seconds()
        outcome = []

        def run():
            try:
                outcome.append((True, function(*args)))
            except BaseException as e:  # handed to the caller's thread
                outcome.append((False, e))

        thread = threading.Thread(target=run, name=f"mlxref-mpi-{op}", daemon=True)
        thread.start()
        thread.join(timeout)
        others = "the other ranks" if peer is None else f"rank {peer}"
        if thread.is_alive():
            wrapper.broken = (f"{op} on rank {self._rank} of {self._size} waited {timeout:g} s "
                              f"in {mpi_function} for {others}")
            raise RuntimeError(f"{MPI_TAG} {op} timed out: rank {self._rank} of {self._size} "
                               f"waited {timeout:g} s in {mpi_function} for {others} "
                               f"(set {TIMEOUT_VARIABLE} to wait longer)")
        succeeded, value = outcome[0]
        if succeeded:
            return value
        if isinstance(value, wrapper.MPI.Exception):
            raise RuntimeError(f"{MPI_TAG} An error occurred in {mpi_function} ({op} on rank "
                               f"{self._rank}, with {others}): {value.Get_error_string()}"
                               ) from None
        raise value


# --- starting (mpi.cpp's is_available and init) -----------------------------------------


def is_available():
    """Whether mpi4py and an MPI library load (mpi.cpp: whether libmpi opens)."""
    return mpi().is_available()


def launched_by_mpi():
    """Whether an MPI launcher started this process (see the module's docstring)."""
    return any(name in os.environ for name in LAUNCHER_VARIABLES)


def init(strict=False):
    """The world's MPIGroup, or None when MPI cannot start or this process is alone
    in its world (``strict``: MLX's error)."""
    wrapper, alone = mpi(), not launched_by_mpi()
    if not (wrapper.is_available() if alone else wrapper.init_safe()):
        if strict:
            raise RuntimeError("Cannot initialize MPI")
        return None
    if alone or wrapper.MPI.COMM_WORLD.Get_size() <= 1:
        if strict:
            raise RuntimeError(f"{MPI_TAG} The world has a single process. Launch with mpirun "
                               "to initialize the mpi backend.")
        return None
    return MPIGroup(wrapper.MPI.COMM_WORLD)
