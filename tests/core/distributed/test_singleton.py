"""``mx.distributed`` on one process (mlxref/core/distributed.py; MLX's mlx/distributed/),
against real MLX with no back-end configured.

On a group of one MLX's collectives return their input and build no node, so their
values, gradients, tangents and batching are the identity's; point-to-point
operations raise. mlxref's ``is_available`` is False where MLX's CPU build says True.
"""

import importlib.util

import pytest

import mlxref.core as mx
from support import assert_new_handle, assert_same_error, needs_mlx, real_mx

COLLECTIVES = ("all_sum", "all_max", "all_min", "all_gather", "sum_scatter")


@needs_mlx
def test_init_gives_the_one_process_group():
    for lib in (mx, real_mx):
        g = lib.distributed.init()
        assert (g.rank(), g.size()) == (0, 1)
        assert isinstance(g, lib.distributed.Group)
        for backend in ("any", "ring", "mpi", "nccl", "jaccl"):
            h = lib.distributed.init(False, backend)
            assert (h.rank(), h.size()) == (0, 1)
    assert mx.distributed.init() is mx.distributed.init(backend="ring")


@needs_mlx
def test_init_errors():
    for backend in ("any", "ring", "mpi", "nccl", "jaccl"):
        assert_same_error(lambda m: m.distributed.init(strict=True, backend=backend))
    assert_same_error(lambda m: m.distributed.init(backend="bogus"))
    assert_same_error(lambda m: m.distributed.init(strict=1))
    assert_same_error(lambda m: m.distributed.init(backend=3))
    assert_same_error(lambda m: m.distributed.Group())


@needs_mlx
def test_is_available_says_which_backends_mlxref_has():
    # ring.py is the ring back-end; MLX's CPU build has it compiled in
    ring = importlib.util.find_spec("mlxref.core.distributed.ring") is not None
    assert mx.distributed.is_available("ring") is ring
    assert real_mx.distributed.is_available("ring") is True
    assert mx.distributed.is_available() is (ring or mx.distributed.is_available("mpi"))
    for backend in ("nccl", "jaccl", "bogus"):
        assert mx.distributed.is_available(backend) is False
        assert real_mx.distributed.is_available(backend) is False


@needs_mlx
def test_all_gather_factory_errors():
    def factory(rank, size):
        return lambda src, n_bytes: b""
    for backend in ("ring", "any", "bogus"):
        assert_same_error(lambda m: m.distributed.init(backend=backend,
                                                       all_gather_factory=factory))
    assert_same_error(lambda m: m.distributed.init(backend="jaccl",
                                                   all_gather_factory="not_callable"))
    assert_same_error(lambda m: m.distributed.init(strict=True, backend="jaccl",
                                                   all_gather_factory=factory))


@needs_mlx
def test_the_singleton_group_cannot_be_split():
    for args in ((0,), (1, 5), (-1,)):
        assert_same_error(lambda m: m.distributed.init().split(*args))
    assert_same_error(lambda m: m.distributed.init().split("a"))


@needs_mlx
@pytest.mark.parametrize("name", COLLECTIVES)
def test_collectives_return_their_input(name):
    for value in ([1.0, -2.0, 3.5], [[1, 2], [3, 4]], 2.5, [True, False]):
        x = mx.array(value)
        out = getattr(mx.distributed, name)(x)
        expected = getattr(real_mx.distributed, name)(real_mx.array(value))
        assert_new_handle(out, x)
        assert repr(out) == repr(expected)
    g = mx.distributed.init()
    for kwargs in ({"group": g}, {"stream": mx.cpu}, {"stream": mx.gpu},
                   {"stream": mx.new_stream(mx.cpu)}):
        assert getattr(mx.distributed, name)(mx.array([1, 2]), **kwargs).tolist() == [1, 2]
        rkw = {k: (real_mx.distributed.init() if k == "group" else
                   real_mx.gpu if v is mx.gpu else real_mx.cpu) for k, v in kwargs.items()}
        assert getattr(real_mx.distributed, name)(real_mx.array([1, 2]), **rkw).tolist() == [1, 2]
    # a Python scalar becomes an array as MLX converts it
    for v in (3, 3.0, True):
        assert repr(getattr(mx.distributed, name)(v)) == repr(getattr(real_mx.distributed, name)(v))


@needs_mlx
@pytest.mark.parametrize("name", COLLECTIVES)
def test_collective_argument_errors(name):
    assert_same_error(lambda m: getattr(m.distributed, name)([1, 2]))
    assert_same_error(lambda m: getattr(m.distributed, name)("a"))
    assert_same_error(lambda m: getattr(m.distributed, name)(m.array(1), group=5))
    assert_same_error(lambda m: getattr(m.distributed, name)(m.array(1), stream="cpu"))


@needs_mlx
@pytest.mark.parametrize("name", COLLECTIVES)
def test_collective_gradients_tangents_and_batching(name):
    values = [[1.0, 2.0, -3.0], [0.5, 4.0, 2.0]]
    for lib in (mx, real_mx):
        f = getattr(lib.distributed, name)
        x = lib.array(values)
        w = lib.array([[1.0, -1.0, 2.0], [3.0, 0.5, 1.0]])
        g = lib.grad(lambda y: (f(y * y) * w).sum())(x)
        assert g.tolist() == (2 * x * w).tolist()
        _, (t,) = lib.jvp(lambda y: f(lib.sin(y)), [x], [w])
        assert t.tolist() == (lib.cos(x) * w).tolist()
        _, (c,) = lib.vjp(f, [x], [w])
        assert c.tolist() == w.tolist()
        assert lib.vmap(f, in_axes=1)(x).tolist() == lib.transpose(x).tolist()


@needs_mlx
def test_point_to_point_needs_another_process():
    for stream in (None, "gpu"):
        def kw(m):
            return {} if stream is None else {"stream": m.gpu}
        assert_same_error(lambda m: m.distributed.send(m.array([1.0]), 0, **kw(m)))
        assert_same_error(lambda m: m.distributed.send(m.array([1.0]), 1, **kw(m)))
        assert_same_error(lambda m: m.distributed.recv((2,), m.float32, 0, **kw(m)))
        assert_same_error(lambda m: m.distributed.recv([2, 3], m.int32, 5, **kw(m)))
        assert_same_error(lambda m: m.distributed.recv_like(m.array([1.0]), 0, **kw(m)))
    assert_same_error(lambda m: m.distributed.send(1, 0))
    assert_same_error(lambda m: m.distributed.send(m.array(1), "a"))
    assert_same_error(lambda m: m.distributed.send(m.array(1), 0, group=1))
    assert_same_error(lambda m: m.distributed.recv((2,), "f", 0))
    assert_same_error(lambda m: m.distributed.recv("ab", m.float32, 0))
    assert_same_error(lambda m: m.distributed.recv((2,), m.float32, "a"))
    assert_same_error(lambda m: m.distributed.recv((2,), m.float32, 0, stream="x"))
    assert_same_error(lambda m: m.distributed.recv_like(m.array(1), "a"))


@needs_mlx
def test_namespace_has_mlx_names():
    ours = {n for n in dir(mx.distributed) if not n.startswith("_")}
    theirs = {n for n in dir(real_mx.distributed) if not n.startswith("_")}
    assert theirs <= ours
