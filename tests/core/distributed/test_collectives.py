"""``mx.distributed`` on groups of 2 to 4 ranks, through the in-process back-end
of fake.py: the values of every collective, the nodes they build, MLX's rules
(mlx/distributed/primitives.cpp) and MLX's errors for larger groups.

The errors and rule results for a group of two were read from real MLX 0.32.4
under ``mlx.launch -n 2`` (a throwaway script printing each call's result or
error on every rank); they are written here as it printed them.
"""

import pytest

import mlxref.core as mx
from mlxref.core.distributed.primitives import AllGather, AllReduce, ReduceScatter, Recv, Send

from .fake import groups, run_ranks

D = mx.distributed
DTYPES = (mx.int8, mx.uint8, mx.int16, mx.uint16, mx.int32, mx.uint32, mx.int64,
          mx.float16, mx.bfloat16, mx.float32, mx.complex64, mx.bool_)


def _rank_value(rank, shape, dtype):
    """Small values, different per rank, exact in every dtype."""
    size = 1
    for n in shape:
        size *= n
    values = [(3 * rank + 5 * i) % 7 - (0 if dtype in (mx.uint8, mx.uint16, mx.uint32) else 3)
              for i in range(size)]
    return mx.array(values).reshape(shape).astype(dtype)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
def test_all_reduce_values_are_the_reductions_over_the_ranks(n, shape):
    for dtype in DTYPES:
        stacked = mx.stack([_rank_value(r, shape, dtype) for r in range(n)])
        expected = {"all_sum": stacked.sum(0).astype(dtype) if dtype != mx.bool_ else stacked.any(0),
                    "all_max": stacked.max(0), "all_min": stacked.min(0)}
        if dtype == mx.complex64:
            del expected["all_max"], expected["all_min"]
        for name, want in expected.items():
            got = run_ranks(n, lambda g: getattr(D, name)(_rank_value(g.rank(), shape, dtype),
                                                          group=g))
            for y in got:
                assert (y.shape, y.dtype) == (shape, dtype)
                assert y.tolist() == want.tolist(), (name, dtype)


@pytest.mark.parametrize("n", [2, 3])
def test_all_gather_concatenates_in_rank_order(n):
    for shape in [(), (1,), (2, 3)]:
        for dtype in (mx.int8, mx.float16, mx.float32, mx.complex64, mx.bool_):
            got = run_ranks(n, lambda g: D.all_gather(_rank_value(g.rank(), shape, dtype),
                                                      group=g))
            parts = [_rank_value(r, shape, dtype) for r in range(n)]
            want = mx.stack(parts) if shape == () else mx.concatenate(parts)
            for y in got:
                assert (y.shape, y.dtype) == (want.shape, dtype)
                assert y.tolist() == want.tolist()


def test_sum_scatter_gives_each_rank_its_block_of_the_sum():
    n = 2
    got = run_ranks(n, lambda g: D.sum_scatter(_rank_value(g.rank(), (4, 3), mx.int32),
                                               group=g))
    total = _rank_value(0, (4, 3), mx.int32) + _rank_value(1, (4, 3), mx.int32)
    assert [y.tolist() for y in got] == [total[:2].tolist(), total[2:].tolist()]
    assert got[0].shape == (2, 3)


def test_send_and_recv():
    def program(g):
        r = g.rank()
        if r == 0:
            s = D.send(mx.array([1.5, 2.5]) * 2, 1, group=g)
            mx.eval(s)
            return s, D.recv((2,), mx.int32, 1, group=g)
        received = D.recv_like(mx.array([0.0, 0.0]), 0, group=g)
        s = D.send(mx.array([7, 8], mx.int32), 0, group=g)
        mx.eval(s)
        return s, received
    (s0, r0), (s1, r1) = run_ranks(2, program)
    # what real MLX printed under mlx.launch -n 2: a send's output is its input
    assert repr(s0) == "array([3, 5], dtype=float32)" and repr(r1) == repr(s0)
    assert repr(s1) == "array([7, 8], dtype=int32)" and repr(r0) == repr(s1)


def test_the_nodes_built():
    g0, g1 = groups(2)
    x = mx.array([[1.0, 2.0]])
    for name, cls, label in (("all_sum", AllReduce, "Sum AllReduce"),
                             ("all_max", AllReduce, "Max AllReduce"),
                             ("all_min", AllReduce, "Min AllReduce"),
                             ("all_gather", AllGather, "AllGather")):
        y = getattr(D, name)(x, group=g0)
        assert isinstance(y.primitive(), cls) and y.primitive().name == label
        assert y.inputs()[0] is not None and y.primitive().group is g0
    assert D.all_gather(x, group=g0).shape == (2, 2)
    assert D.all_gather(mx.array(1), group=g0).shape == (2,)
    y = D.sum_scatter(mx.zeros((4, 3)), group=g1)
    assert isinstance(y.primitive(), ReduceScatter) and y.primitive().name == "Sum ReduceScatter"
    assert y.shape == (2, 3)
    s = D.send(x, 1, group=g0)
    assert isinstance(s.primitive(), Send) and (s.shape, s.dtype) == (x.shape, x.dtype)
    r = D.recv([3, 1], mx.int16, 0, group=g1)
    assert isinstance(r.primitive(), Recv) and len(r.inputs()) == 0
    assert (r.shape, r.dtype) == ((3, 1), mx.int16)


def test_errors_of_larger_groups():
    # messages as real MLX 0.32.4 printed them under mlx.launch -n 2
    g, _ = groups(2)
    cases = [
        (lambda: D.send(mx.array([1.0]), 5, group=g),
         "Invalid destination=5 for a group of size 2"),
        (lambda: D.send(mx.array([1.0]), -1, group=g),
         "Invalid destination=-1 for a group of size 2"),
        (lambda: D.recv((2,), mx.float32, 2, group=g), "Invalid source=2 for a group of size 2"),
        (lambda: D.recv_like(mx.array([1]), -3, group=g),
         "Invalid source=-3 for a group of size 2"),
    ]
    tail = (" for a group of size 2. The first dimension (axis 0) must be divisible by the "
            "group size and input mst have at least one.")
    for x, shape in ((mx.array(1.0), "()"), (mx.array([1.0, 2, 3]), "(3)"),
                     (mx.zeros((3, 2)), "(3,2)")):
        cases.append((lambda x=x: D.sum_scatter(x, group=g),
                      f"[sum_scatter] Invalid shape={shape}{tail}"))
    for call, message in cases:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == message


def test_rules_as_mlx_gives_them():
    """Each rank's results as real MLX printed them on 2 processes."""
    def program(g):
        r = g.rank()

        def ag(x):
            return D.all_gather(x, group=g)
        out = {
            "vjp ag": mx.vjp(ag, [mx.array([1.0, 2.0])], [mx.array([1.0, 2, 3, 4])])[1][0],
            "vjp ag scalar": mx.vjp(ag, [mx.array(1.0)], [mx.array([1.0, 2])])[1][0],
            "vjp sum": mx.vjp(lambda x: D.all_sum(x, group=g), [mx.array([1.0, 2.0])],
                              [mx.array([1.0, 3])])[1][0],
            "vjp max": mx.vjp(lambda x: D.all_max(x, group=g), [mx.array([1.0, 2.0])],
                              [mx.array([1.0, 3])])[1][0],
            "jvp max": mx.jvp(lambda x: D.all_max(x, group=g), [mx.array([1.0 * r, 2.0])],
                              [mx.array([1.0 + r, 3])])[1][0],
            "jvp ag": mx.jvp(ag, [mx.array([1.0])], [mx.array([1.0 + r])])[1][0],
            "vmap sum": mx.vmap(lambda x: D.all_sum(x, group=g), in_axes=1)(
                mx.array([[1.0, r], [3, 4]])),
            "vmap ag": mx.vmap(ag, in_axes=1)(mx.array([[1.0, r], [3, 4]])),
            "vmap ag0": mx.vmap(ag, in_axes=0)(mx.array([[1.0, r], [3, 4]])),
        }
        return {k: v.tolist() for k, v in out.items()}
    r0, r1 = run_ranks(2, program)
    assert r0["vjp ag"] == [1, 2] and r1["vjp ag"] == [3, 4]
    assert r0["vjp ag scalar"] == 1 and r1["vjp ag scalar"] == 2
    for r in (r0, r1):
        assert r["vjp sum"] == r["vjp max"] == [1, 3]
        assert r["jvp max"] == [2, 3] and r["jvp ag"] == [1, 2]
        assert r["vmap sum"] == [[2, 6], [1, 8]]
        assert r["vmap ag"] == [[1, 3, 1, 3], [0, 4, 1, 4]]
        assert r["vmap ag0"] == [[1, 0], [3, 4], [1, 1], [3, 4]]


def test_rule_graphs():
    g, _ = groups(2)
    x = mx.array([1.0, 2.0])
    # the vjp of an all-gather is a slice, no communication
    _, (c,) = mx.vjp(lambda y: D.all_gather(y, group=g), [x], [mx.array([1.0, 2, 3, 4])])
    assert not isinstance(c.primitive(), (AllGather, AllReduce))
    # the jvp of an all-reduce reduces the tangent, on the same group
    _, (t,) = mx.jvp(lambda y: D.all_sum(y, group=g), [x], [x])
    assert isinstance(t.primitive(), AllReduce) and t.primitive().group is g


def test_rules_mlx_does_not_have():
    g, _ = groups(2)
    x, c = mx.array([1.0, 2.0]), mx.array([1.0])
    for mode, call in (
            ("vjp", lambda: mx.vjp(lambda y: D.sum_scatter(y, group=g), [x], [c])),
            ("jvp", lambda: mx.jvp(lambda y: D.sum_scatter(y, group=g), [x], [x])),
            ("vmap", lambda: mx.vmap(lambda y: D.sum_scatter(y, group=g))(mx.array([[1.0, 2]])))):
        with pytest.raises(ValueError, match=rf"^\[Primitive::{mode}\] Not implemented for "
                                             r"Sum ReduceScatter\.$"):
            call()
    for mode, call in (("vjp", lambda: mx.vjp(lambda y: D.send(y, 1, group=g), [x], [x])),
                       ("jvp", lambda: mx.jvp(lambda y: D.send(y, 1, group=g), [x], [x]))):
        with pytest.raises(ValueError, match=rf"^\[Primitive::{mode}\] Not implemented for Send\.$"):
            call()
    # a Recv has no inputs, so no transform reaches it: these build without error
    mx.vmap(lambda y: D.recv_like(y, 1, group=g) + y)(mx.array([[1.0, 2.0]]))
    mx.vjp(lambda y: D.recv_like(y, 1, group=g) * y, [x], [x])
    s = mx.vmap(lambda y: D.send(y, 1, group=g))(mx.array([[1.0, 2.0]]))
    assert isinstance(s.primitive(), Send)


def test_an_all_sum_takes_over_its_input_buffer():
    """MLX's test_donation: an all_sum and an all_sum times a scalar peak alike."""
    def program(g):
        x = mx.random.normal((1024,), key=mx.random.key(g.rank()))
        mx.eval(x)
        mx.reset_peak_memory()
        scale = mx.array(2.0)
        mx.eval(D.all_sum(x, group=g))
        alone = mx.get_peak_memory()
        mx.eval(D.all_sum(x, group=g) * scale)
        return alone, mx.get_peak_memory()
    for alone, with_binary in run_ranks(2, program):
        assert alone == with_binary
