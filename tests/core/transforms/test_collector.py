"""The cycle collector's pause (transforms/tape.py ``cycle_collector_paused``):
what a big graph leaves young is moved to the oldest generation unscanned, and
cycles among it are still collected. (Not in a file that uses the frozen_heap
fixture: the move is skipped while a program keeps objects frozen.)"""

import gc
import weakref

import mlxref.core as mx
from mlxref.core.transforms import tape


class _Cycle:
    """An object in a reference cycle that holds an array (only the collector frees it)."""

    def __init__(self, a):
        self.a, self.me = a, self


def _big_gradient():
    def chain(x):
        for _ in range(1500):  # 6,000 ops: several times the threshold's objects
            x = x + mx.sin(x) * 0.01 + 0.05
        return x

    return mx.grad(chain)(mx.array(0.3))


def test_a_big_graph_leaves_the_pause_unscanned_and_cycles_stay_collectable():
    assert gc.get_freeze_count() == 0
    gc.collect()
    ref = weakref.ref(_Cycle(mx.array(1.0)))
    g = _big_gradient()
    # No young-generation scan is pending, and nothing stayed frozen.
    assert gc.get_count()[0] < gc.get_threshold()[0] and gc.get_freeze_count() == 0
    mx.eval(g)
    assert ref() is not None  # garbage in a cycle now waits for a full collection...
    gc.collect()
    assert ref() is None  # ...which still frees it


def test_a_small_graph_leaves_the_collector_as_it_was():
    gc.collect()
    ref = weakref.ref(_Cycle(mx.array(1.0)))
    mx.eval(mx.grad(lambda x: mx.sin(x) * x)(mx.array(0.5)))
    young = [[] for _ in range(2 * gc.get_threshold()[0])]  # enough to start a scan
    assert young and ref() is None  # collected by a young-generation scan, as before


def test_the_pause_leaves_a_programs_own_frozen_objects_frozen():
    gc.collect()
    kept = [[] for _ in range(1000)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        mx.eval(_big_gradient())
        assert 1000 <= gc.get_freeze_count() <= frozen  # not unfrozen, nothing added
    finally:
        gc.unfreeze()
    assert kept


def test_the_threshold_is_above_what_small_programs_leave():
    assert tape._YOUNG_AFTER_A_BIG_GRAPH >= 10 * gc.get_threshold()[0]
