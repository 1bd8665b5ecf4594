"""Laziness, ``eval`` / ``async_eval`` and ``synchronize`` (mlxref/core/transforms/eval.py;
MLX's mlx/transforms.cpp eval), graph release after evaluation, memory counters and
buffer donation (mlxref/core/memory.py, backend/cpu/allocator.py).

Memory expectations are counted by hand (elements x itemsize) and match what
real MLX reports for the same programs (``mx.array([1.0] * 1000)`` is 4000 bytes
there too). The ``gc_paused`` fixture keeps the garbage collector from freeing
other tests' arrays in the middle of a measurement.

Buffer donation: a chain of elementwise ops on an array nothing else holds
never holds two buffers (get_peak_memory does not grow), as in MLX.
"""

import gc
import re
import weakref

import pytest

import mlxref.core as mx
from mlxref.core.transforms.tape import InTracing, RetainGraph
from mlxref.core.primitives import elementwise as P
from mlxref.core.primitives.base import AsType
from support import frozen_heap, ids, needs_mlx, real_mx  # noqa: F401  (the fixture)

# gc_paused collects before each measurement: frozen_heap keeps that collection to
# what this file made.
pytestmark = pytest.mark.usefixtures("frozen_heap")


@pytest.fixture
def gc_paused():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# --- laziness -----------------------------------------------------------------------


def test_ops_build_nodes_without_computing():
    a = mx.array([1.0, 2.0])
    b = mx.array([3.0, 4.0])
    c = a + b
    assert c.data() is None
    assert isinstance(c.primitive(), P.Add) and ids(c.inputs()) == ids([a, b])
    d = mx.exp(c)
    assert d.data() is None and isinstance(d.primitive(), P.Exp) and ids(d.inputs()) == ids([c])
    e = mx.exp(mx.array([1, 2]))  # the int input is cast first, also lazily
    assert isinstance(e.inputs()[0].primitive(), AsType) and e.inputs()[0].data() is None
    f = mx.where(a > 1, a, b)
    assert isinstance(f.primitive(), P.Select) and f.data() is None
    assert c.data() is None  # building on c did not evaluate it


@pytest.mark.parametrize(
    "trigger",
    [
        lambda x: mx.eval(x),
        lambda x: x.item(),
        lambda x: x.tolist(),
        lambda x: repr(x),
        lambda x: str(x),
        lambda x: bool(x),
        lambda x: float(x),
        lambda x: int(x),
    ],
    ids=["eval", "item", "tolist", "repr", "str", "bool", "float", "int"],
)
def test_evaluation_happens_on_demand(trigger):
    x = mx.array(2.0) * 3 + 1
    assert x.data() is None
    trigger(x)
    assert x.data() == [7.0]


def test_eval_of_nested_trees_returns_none_and_evaluates_every_array():
    a = mx.array(1) + 1
    b = mx.array([2.0]) * 2
    c = mx.array(True) & False
    d = mx.array([3]) - 1
    tree = [a, ("str", None, 3, {"b": b, "nested": [{"c": c}]}), 4.5]
    assert mx.eval(tree, d, "x", None, 7) is None
    assert [a.data(), b.data(), c.data(), d.data()] == [[2], [4.0], [False], [2]]
    assert mx.eval() is None
    assert mx.eval([], {}, (), 1, "s", None) is None  # no arrays at all is fine


def test_async_eval_returns_none_and_evaluates():
    a = mx.array([1, 2]) * 3
    b = mx.exp(mx.array(0.0))
    assert mx.async_eval(a, {"k": [b]}, None) is None
    assert a.data() == [3, 6] and b.data() == [1.0]


def test_async_eval_inside_a_transform_raises():
    with InTracing():
        with pytest.raises(ValueError, match=re.escape("[async_eval] Not allowed inside a graph transformation.")):
            mx.async_eval(mx.array(1) + 1)


def test_evaluated_arrays_drop_their_inputs():
    a = mx.array([1.0, 2.0])
    b = a * 2
    c = mx.sin(b) + b
    mx.eval(c)
    for x in (b, c):
        assert x.inputs() == () and x.primitive() is None and x.data() is not None
    assert c.tolist() == pytest.approx([2.909297426825682, 3.2431975046920716])


def test_intermediates_are_freed_after_eval(gc_paused):
    a = mx.array([1.0, 2.0])
    b = mx.exp(a)
    c = b * b
    del b  # only c holds exp(a) now
    base = mx.get_active_memory()
    mx.reset_peak_memory()
    mx.eval(c)
    # exp(a) was computed for c (8 bytes) and freed once c had dropped its inputs.
    assert mx.get_peak_memory() == base + 16
    assert mx.get_active_memory() == base + 8


def test_retain_graph_keeps_inputs():
    a = mx.array([1.0])
    b = a * 2
    with RetainGraph():
        mx.eval(b)
    assert b.data() == [2.0] and isinstance(b.primitive(), P.Multiply)
    assert len(b.inputs()) == 2 and b.inputs()[0].id() == a.id()


def test_each_node_is_computed_once(monkeypatch):
    calls = []
    original = P.Exp.eval

    def counting_eval(self, inputs):
        calls.append(self)
        return original(self, inputs)

    monkeypatch.setattr(P.Exp, "eval", counting_eval)
    e = mx.exp(mx.array([0.0, 1.0]))
    f = e + e
    g = f * e + mx.sin(e)
    mx.eval(g, f)
    mx.eval(g)  # already evaluated: nothing runs again
    assert g.tolist()[0] == pytest.approx(2.0 + 0.8414709848078965)
    assert len(calls) == 1


def test_a_chain_of_100k_ops_evaluates_without_recursion():
    x = mx.array(0)
    for _ in range(100_000):
        x = x + 1
    assert x.data() is None
    assert x.item() == 100_000
    assert x.inputs() == ()


def test_an_unevaluated_100k_chain_is_freed_without_recursion():
    x = mx.array(1.0)
    for _ in range(100_000):
        x = mx.negative(x)
    ref = weakref.ref(x)
    del x  # deallocating the chain must not overflow the C stack
    assert ref() is None


# --- memory -------------------------------------------------------------------------


def test_memory_counters_exist_and_are_ints():
    for f in (mx.get_active_memory, mx.get_peak_memory):
        assert isinstance(f(), int) and f() >= 0
    assert mx.reset_peak_memory() is None


@pytest.mark.parametrize(
    "dtype, nbytes",
    [(mx.float32, 4000), (mx.float64, 8000), (mx.int32, 4000), (mx.int64, 8000), (mx.bool_, 1000)],
)
def test_materialised_array_counts_its_bytes(gc_paused, dtype, nbytes):
    base = mx.get_active_memory()
    a = mx.array([1] * 1000, dtype)
    assert mx.get_active_memory() - base == nbytes
    assert a.nbytes == nbytes
    del a
    gc.collect()
    assert mx.get_active_memory() == base


def test_an_unevaluated_node_holds_no_bytes(gc_paused):
    a = mx.array([1.0] * 1000)
    b = mx.array([2.0] * 1000)
    base = mx.get_active_memory()
    c = mx.exp(a * b + a)
    assert mx.get_active_memory() == base
    mx.eval(c)
    # a and b stay alive (we hold them); the intermediates are gone; c holds 4000.
    assert mx.get_active_memory() - base == 4000
    del c
    gc.collect()
    assert mx.get_active_memory() == base


def test_peak_memory(gc_paused):
    mx.reset_peak_memory()
    base = mx.get_active_memory()
    assert mx.get_peak_memory() == 0  # MLX: reset sets the peak to 0
    a = mx.array([0.5] * 1000)
    b = mx.array([0.5] * 2000)
    assert mx.get_peak_memory() - base >= 12000
    del a, b
    gc.collect()
    assert mx.get_active_memory() == base
    assert mx.get_peak_memory() - base >= 12000  # the peak remembers
    mx.reset_peak_memory()
    assert mx.get_peak_memory() < base + 12000


def test_reset_peak_memory_sets_zero(gc_paused):
    keep = mx.array([1.0] * 100)
    mx.reset_peak_memory()
    assert mx.get_peak_memory() == 0
    del keep


def test_a_long_chain_releases_intermediates(gc_paused):
    x = mx.array([0.5] * 1000)
    base = mx.get_active_memory()
    y = x
    for i in range(200):
        # unary and binary steps, and broadcast Python scalars
        y = mx.sin(y) if i % 3 == 0 else (y * 0.5 + 0.25 if i % 3 == 1 else mx.exp(-y))
    scalars = mx.get_active_memory() - base  # the 0-d arrays made from 0.5 and 0.25
    assert scalars < 4000
    mx.reset_peak_memory()
    mx.eval(y)
    # Each step needs its input, at most one broadcast scalar and its output:
    # a few arrays at once, never the 200+ intermediates of the chain.
    assert mx.get_peak_memory() - base <= 4 * 4000 + scalars
    assert mx.get_active_memory() - base == 4000  # only y is left (x is ours)
    assert y.inputs() == ()


_VIEWS = {
    "broadcast": lambda m, x: m.broadcast_to(x[:1], (64, 64)),
    "transpose": lambda m, x: x.T,
    "slice": lambda m, x: x[::2, 1:],
    "reshape": lambda m, x: m.reshape(x, (16, 256)),
    "as_strided": lambda m, x: m.as_strided(x, (60, 8), (1, 1)),
}


@pytest.mark.parametrize("name", sorted(_VIEWS))
@needs_mlx
def test_views_share_their_inputs_buffer_as_in_mlx(name, gc_paused):
    """A view costs no bytes, and keeps its input's buffer alive after the
    input is gone; the buffer's bytes return when the view goes too."""

    def run(m):
        x = m.zeros((64, 64))
        m.eval(x)
        base = m.get_active_memory()
        v = _VIEWS[name](m, x)
        m.eval(v)
        costs = m.get_active_memory() - base
        del x
        kept = m.get_active_memory() - base
        del v
        return costs, kept, m.get_active_memory() - base

    ours, theirs = run(mx), run(real_mx)
    assert ours == theirs
    assert ours == (0, 0, -64 * 64 * 4)


# --- async_eval and synchronize --------------------------------------------------


def test_async_eval_error_surfaces_at_synchronize():
    a = mx.linalg.inv(mx.array([[1.0, 2.0], [2.0, 4.0]]), stream=mx.cpu)
    mx.async_eval(a)  # MLX 0.32 raised here; later MLX raises at synchronize
    with pytest.raises(RuntimeError, match=r"\[Inverse::eval_cpu\] LU factorization failed"):
        mx.synchronize(mx.cpu)
    mx.synchronize()  # raised once
    with pytest.raises(RuntimeError):
        mx.eval(a)  # still unevaluated: evaluating it fails again


# --- buffer donation ----------------------------------------------------------------


def _peak_grows(m, program, n=4096):
    """Does evaluating ``program(x, y)`` (x and y deleted first) raise the peak
    above what it was with x and y alone?"""
    x, y = m.zeros((n,)), m.ones((n,))
    m.eval(x, y)
    m.reset_peak_memory()
    m.eval(m.abs(m.zeros((1,))))  # the peak now includes x and y
    pre = m.get_peak_memory()
    out = program(x, y)
    del x, y
    m.eval(out)
    return m.get_peak_memory() > pre


_CHAINS = {
    "unary_and_views": lambda m, x, y: m.abs(m.stop_gradient(m.reshape(m.abs(x), (-1,)).T.T)),
    "slices": lambda m, x, y: m.abs(m.abs(x)[:-1])[1:],
    "binary": lambda m, x, y: m.exp(x) * y + y,
    "where": lambda m, x, y: m.where(x > 0, m.abs(y), m.abs(x)),
    "compiled": lambda m, x, y: m.compile(lambda a, b: m.sin(a) * b + 1)(x, y),
    # no donation: the input is used twice, the item size changes, a slice
    # much smaller than its buffer, a reduction
    "used_twice": lambda m, x, y: (lambda z: z + z)(m.exp(x)),
    "to_float16": lambda m, x, y: m.abs(x).astype(m.float16),
    "small_slice": lambda m, x, y: m.abs(m.abs(x)[: x.size // 2]),
    "sum": lambda m, x, y: m.sum(m.abs(x)),
}


@pytest.mark.parametrize("name", sorted(_CHAINS))
@needs_mlx
def test_donation_matches_mlx(name):
    program = _CHAINS[name]
    ours = _peak_grows(mx, lambda x, y: program(mx, x, y))
    theirs = _peak_grows(real_mx, lambda x, y: program(real_mx, x, y))
    assert ours == theirs


def test_no_donation_while_the_caller_holds_the_input():
    x = mx.zeros((1024,))
    mx.eval(x)
    pre = mx.get_active_memory()
    y = mx.abs(x)
    mx.eval(y)
    assert mx.get_active_memory() == pre + 4 * 1024
    assert x.tolist() == [0.0] * 1024  # x's elements are untouched


def test_no_donation_inside_a_transform():
    def f(x):
        y = mx.exp(x)
        mx.eval(y)  # evaluated inside grad: the graph is kept, nothing donated
        return (y * y).sum()

    g = mx.grad(f)(mx.array([0.0, 1.0]))
    assert mx.allclose(g, 2 * mx.exp(2 * mx.array([0.0, 1.0]))).item()


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "vmap", "checkpoint"])
def test_no_transform_keeps_its_arguments_alive(transform):
    # (compile: tests/core/transforms/test_compile.py, through its trace and its cache)
    # The cycle collector is paused while mlxref evaluates, so a reference
    # cycle made by a transform (a recursive closure over its arguments)
    # would keep the caller's arrays, and their buffers, alive: no donation,
    # and a peak memory MLX does not have.
    import gc
    import weakref

    def f(a):
        return (mx.sin(a) * 2).sum()

    run = {
        "grad": lambda x: mx.grad(f)(x),
        "vjp": lambda x: mx.vjp(f, [x], [mx.array(1.0)])[1][0],
        "jvp": lambda x: mx.jvp(f, [x], [mx.ones_like(x)])[1][0],
        "vmap": lambda x: mx.vmap(f)(x),
        "checkpoint": lambda x: mx.grad(mx.checkpoint(f))(x),
    }[transform]
    was = gc.isenabled()
    gc.disable()
    try:
        x = mx.ones((3, 2))
        ref = weakref.ref(x)
        out = run(x)
        mx.eval(out)
        del x, out
        assert ref() is None
    finally:
        if was:
            gc.enable()

