"""An in-process back-end for the tests: N ranks as N threads sharing memory.

``run_ranks(n, program)`` runs ``program(group)`` once per rank, each in its own
thread with a ``Group`` of a ``FakeGroup`` (a ``GroupImpl``,
mlxref/core/distributed/distributed.py), evaluates the arrays it returns in
that thread, and returns the ranks' results in rank order (or raises the
first rank's error). A collective is a round: each
rank puts its list in its slot, all meet at a barrier, each reads every slot,
all meet again before the slots are reused. Sums are taken in rank order, each
step stored in the dtype, which is one valid order (the ring back-end's own is
tested against real MLX in its tests).

mlxref evaluates one graph at a time (transforms/eval.py's ``_eval_lock``),
which a rank waiting for the others inside its kernel would hold: while it
waits, the fake hands the lock back (``_release_save``, then
``_acquire_restore``) so that the other ranks' threads can evaluate. Real
back-ends run one rank per process and need nothing of the kind.
"""

import queue
import threading

import mlxref.core as mx
from mlxref.core.distributed.distributed import Group, GroupImpl
from mlxref.core.transforms import eval as _eval

TIMEOUT = 10  # seconds any rank waits for the others


def _released(wait):
    """Run ``wait()`` with the evaluation lock handed back, if this thread holds it."""
    lock = _eval._eval_lock
    if not lock._is_owned():
        return wait()
    state = lock._release_save()
    try:
        return wait()
    finally:
        lock._acquire_restore(state)


class World:
    """What the ranks share: one slot per rank, the barrier, the mailboxes."""

    def __init__(self, n):
        self.n = n
        self.slots = [None] * n
        self.barrier = threading.Barrier(n, timeout=TIMEOUT)
        self.mailboxes = {(s, d): queue.Queue() for s in range(n) for d in range(n)}
        self.calls = []  # (rank, operation), in the order they were made


class FakeGroup(GroupImpl):
    def __init__(self, world, rank):
        self.world, self._rank = world, rank

    def rank(self):
        return self._rank

    def size(self):
        return self.world.n

    def split(self, color, key):
        raise RuntimeError("[fake] Group split not supported.")

    def _exchange(self, operation, data):
        """Every rank's list, in rank order."""
        w = self.world
        w.calls.append((self._rank, operation))
        w.slots[self._rank] = list(data)
        _released(w.barrier.wait)
        everyone = list(w.slots)
        _released(w.barrier.wait)
        return everyone

    def _reduce(self, operation, data, dtype, pick):
        lists = self._exchange(operation, data)
        out = lists[0]
        for other in lists[1:]:
            out = dtype.store([pick(a, b) for a, b in zip(out, other)])
        return out

    def all_sum(self, data, dtype):
        return self._reduce("all_sum", data, dtype, lambda a, b: a + b)

    def all_max(self, data, dtype):
        return self._reduce("all_max", data, dtype, max)

    def all_min(self, data, dtype):
        return self._reduce("all_min", data, dtype, min)

    def all_gather(self, data, dtype):
        return [e for part in self._exchange("all_gather", data) for e in part]

    def sum_scatter(self, data, dtype):
        total = self.all_sum(data, dtype)
        block = len(total) // self.world.n
        return total[self._rank * block:(self._rank + 1) * block]

    def send(self, data, dtype, dst):
        self.world.calls.append((self._rank, f"send to {dst}"))
        self.world.mailboxes[self._rank, dst].put(list(data))

    def recv(self, count, dtype, src):
        self.world.calls.append((self._rank, f"recv from {src}"))
        return _released(lambda: self.world.mailboxes[src, self._rank].get(timeout=TIMEOUT))


def groups(n):
    """The ``Group`` of each rank of a new world of ``n``."""
    world = World(n)
    return [Group.wrapping(FakeGroup(world, r)) for r in range(n)]


def run_ranks(n, program):
    """``[program(group) for each rank]``, the ranks running at once."""
    results, errors = [None] * n, [None] * n

    def run(rank, group):
        try:
            results[rank] = program(group)
            mx.eval(results[rank])  # here, where the rank's collectives can meet
        except BaseException as e:  # handed to the test below
            errors[rank] = e

    threads = [threading.Thread(target=run, args=(r, g), daemon=True)
               for r, g in enumerate(groups(n))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 3)
        assert not t.is_alive(), "a rank did not finish"
    # a rank's own error first: the others then only saw the barrier break
    for e in sorted((e for e in errors if e is not None),
                    key=lambda e: isinstance(e, threading.BrokenBarrierError)):
        raise e
    return results
