"""mlxref.nn's distributed layers and utilities (layers/distributed.py, utils.py).

On a group of one (mlxref's own ``mx.distributed``) each layer is compared
with real MLX in this process: parameters, reprs, outputs and gradients, bit
for bit where MLX's arithmetic is the same.

On larger groups the sharding arithmetic is checked by simulating N ranks in
one process (``Ranks``): each rank's program runs in turn with
``mx.distributed.init`` and the collectives replaced by fakes, and the k-th
collective of a rank returns the combination of all ranks' k-th inputs. The
shards must reassemble what the unsharded layer gives (outputs, gradients),
and the collectives must be called as MLX calls them (how many, which).
What real processes add (the ring's order of summation, the transport) is
tested with mx.distributed itself, in tests/core/distributed/.
"""

import functools
import json
import math
import os
import socket
import subprocess
import sys

import pytest
from support import close, needs_mlx, real_mx

import mlxref.core as mx
import mlxref.nn as nn
from mlxref.nn.layers.distributed import shard_inplace, shard_linear, sum_gradients
from mlxref.nn.utils import average_gradients, clip_grad_norm_sharded
from mlxref.utils import tree_flatten, tree_map

if real_mx is not None:
    import mlx.nn as real_nn
    import mlx.nn.layers.distributed as real_distributed
    import mlx.nn.utils as real_utils


# ----------------------------------------------------------------------
# N ranks in one process


class FakeGroup:
    """Rank ``r`` of a group of ``n``: all a layer asks of a group."""

    def __init__(self, r, n):
        self._rank, self._size = r, n

    def rank(self):
        return self._rank

    def size(self):
        return self._size


class Ranks:
    """Run one program as each of N ranks in turn, with simulated collectives.

    ``run(program)`` calls ``program()`` as rank 0, 1, ..., N-1, round after
    round. In a round, the k-th collective a rank calls records its input and
    returns the combination of all ranks' k-th inputs of the round before (in
    the first round, a value of the right shape). Input k depends only on the
    results of collectives before k, so the inputs settle; once a round's
    inputs equal the previous round's, every collective returned what a real
    group would have, and that round's outputs (one per rank) are returned.
    The fakes are graph nodes with MLX's vjp rules (AllReduce passes the
    cotangent through, AllGather slices this rank's rows).
    """

    def __init__(self, monkeypatch, n):
        self.n = n
        monkeypatch.setattr(mx.distributed, "init", lambda *args, **kwargs: self.group)
        for name in ("all_sum", "all_gather", "sum_scatter"):
            monkeypatch.setattr(mx.distributed, name, functools.partial(self._collective, name))

    def run(self, program, rounds=10):
        results, previous = {}, None
        for _ in range(rounds):
            self.recorded, outputs = [], []
            for r in range(self.n):
                self.rank, self.group, self.calls = r, FakeGroup(r, self.n), []
                self.results = results
                out = program()
                mx.eval(out)
                outputs.append(out)
                self.recorded.append(self.calls)
            if self.recorded == previous:
                return outputs
            previous = self.recorded
            results = {k: self._combine([calls[k] for calls in self.recorded])
                       for k in range(len(self.recorded[0]))}
        raise AssertionError("the simulated collectives did not settle")

    def names(self, rank=0):
        """The collectives rank ``rank`` called in the last round, in order."""
        return [call[0] for call in self.recorded[rank]]

    def _collective(self, name, x, *, group=None, stream=None):
        assert group is None or group is self.group, "a collective on another rank's group"
        if not isinstance(x, mx.array):
            x = mx.array(x)
        k = len(self.calls)
        self.calls.append((name, x.shape, x.dtype.name, x.tolist(), stream))
        settled = self.results.get(k)
        if settled is not None and settled[0] == (name, x.shape):
            value = settled[1][self.rank]
        elif name == "all_sum":  # not known yet: any value of the right shape
            value = x
        elif name == "all_gather":
            value = mx.concatenate([x] * self.n)
        else:
            value = mx.split(x, self.n)[self.rank]
        fake = mx.custom_function(lambda x: value)
        rank, rows = self.rank, (x.shape[0] if x.ndim else 1)

        @fake.vjp
        def fake_vjp(x, cotangent, output):
            if name == "all_sum":
                return cotangent
            if name == "all_gather":
                return cotangent[rank * rows:(rank + 1) * rows]
            raise AssertionError(f"no vjp of {name} is used here")

        return fake(x)

    def _combine(self, calls):
        """Every rank's result of one collective, from every rank's input to it."""
        name, shape, dtype = calls[0][:3]
        assert all(c[:3] == (name, shape, dtype) for c in calls), calls
        inputs = [mx.array(c[3], dtype=getattr(mx, dtype)) for c in calls]
        if name == "all_gather":
            return (name, shape), [mx.concatenate(inputs)] * self.n
        total = inputs[0]
        for a in inputs[1:]:
            total = total + a
        if name == "all_sum":
            return (name, shape), [total] * self.n
        return (name, shape), mx.split(total, self.n)


def rank_and_size():
    world = mx.distributed.init()
    return world.rank(), world.size()


def part(n_items, r, n):
    return slice(r * n_items // n, (r + 1) * n_items // n)


def assert_close(a, b, atol=1e-6, rtol=1e-4):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert close(a.tolist(), b.tolist(), rtol, atol), (a, b)


def assert_same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    assert a.tolist() == b.tolist(), (a, b)


# ----------------------------------------------------------------------
# The tensor-parallel linear layers on N ranks


@pytest.mark.parametrize("n", [2, 4])
def test_sharded_linear_layers_reassemble_the_linear_layer(monkeypatch, n):
    ranks = Ranks(monkeypatch, n)

    def program():
        mx.random.seed(7)
        r, n = rank_and_size()
        lin = nn.Linear(8, 12)
        x = mx.random.normal((3, 8))
        a2s, s2a = shard_linear(lin, "all-to-sharded"), shard_linear(lin, "sharded-to-all")
        return lin, a2s, s2a, lin(x), a2s(x), s2a(x[:, part(8, r, n)])

    outputs = ranks.run(program)
    assert ranks.names() == ["all_sum"]  # the sharded-to-all layer's, forward
    for r, (lin, a2s, s2a, y, y1, y2) in enumerate(outputs):
        rows, cols = part(12, r, n), part(8, r, n)
        assert_same(a2s.weight, lin.weight[rows])
        assert_same(a2s.bias, lin.bias[rows])
        assert_same(s2a.weight, lin.weight[:, cols])
        assert_same(s2a.bias, lin.bias)
        assert_close(y1, y[:, rows])
        assert_close(y2, y)
        assert repr(a2s) == "AllToShardedLinear(input_dims=8, output_dims=12, bias=True)"
        assert repr(s2a) == "ShardedToAllLinear(input_dims=8, output_dims=12, bias=True)"
    whole = mx.concatenate([out[4] for out in outputs], axis=1)
    assert_close(whole, outputs[0][3])


@pytest.mark.parametrize("n", [2, 4])
def test_megatron_mlp_gradients_are_the_shards_of_the_full_gradients(monkeypatch, n):
    """MLX's test_shard_linear backward check, at 8 features: loss and gradients."""
    ranks = Ranks(monkeypatch, n)

    def loss(model, x, y):
        return (model(x) * y).sum()

    def program():
        mx.random.seed(11)
        mod = nn.Sequential(*(nn.Linear(8, 8) for _ in range(4)))
        smod = nn.Sequential(*(shard_linear(layer, s) for layer, s in zip(
            mod.layers, ["all-to-sharded", "sharded-to-all"] * 2)))
        x, y = mx.random.normal((4, 8)), mx.random.normal((4, 8))
        l1, g1 = nn.value_and_grad(mod, loss)(mod, x, y)
        l2, g2 = nn.value_and_grad(smod, loss)(smod, x, y)
        return l1, g1, l2, g2

    outputs = ranks.run(program)
    # Forward: one all_sum per sharded-to-all layer. Backward: the sum_gradients
    # of layer 2 (layer 0's input is a constant: no cotangent reaches it).
    assert ranks.names() == ["all_sum"] * 3
    for r, (l1, g1, l2, g2) in enumerate(outputs):
        p = part(8, r, n)
        assert_close(l1, l2)
        for i in (0, 2):
            assert_close(g2["layers"][i]["weight"], g1["layers"][i]["weight"][p])
            assert_close(g2["layers"][i]["bias"], g1["layers"][i]["bias"][p])
        for i in (1, 3):
            assert_close(g2["layers"][i]["weight"], g1["layers"][i]["weight"][:, p])
            assert_close(g2["layers"][i]["bias"], g1["layers"][i]["bias"])


def test_all_to_sharded_input_gradient_is_summed_over_the_ranks(monkeypatch):
    """Each rank's dx is its rows' share; sum_gradients all-sums it into the full dx."""
    ranks = Ranks(monkeypatch, 3)

    def program():
        mx.random.seed(5)
        r, n = rank_and_size()
        lin = nn.Linear(4, 6, bias=False)
        a2s = shard_linear(lin, "all-to-sharded")
        x, w = mx.random.normal((2, 4)), mx.random.normal((2, 6))
        full = mx.grad(lambda x: (lin(x) * w).sum())(x)
        mine = mx.grad(lambda x: (a2s(x) * w[:, part(6, r, n)]).sum())(x)
        return full, mine

    for full, mine in ranks.run(program):
        assert_close(mine, full)
    assert ranks.names() == ["all_sum"]  # the backward's, of dx


@pytest.mark.parametrize("mode, group_size, bits", [("affine", 32, 4), ("mxfp8", 32, 8)])
def test_quantized_sharded_layers_reassemble_the_quantized_layer(monkeypatch, mode, group_size,
                                                                 bits):
    n = 2
    ranks = Ranks(monkeypatch, n)

    def program():
        mx.random.seed(3)
        r, n = rank_and_size()
        qlin = nn.Linear(128, 8).to_quantized(group_size=group_size, bits=bits, mode=mode)
        x = mx.random.normal((2, 128))
        a2s, s2a = shard_linear(qlin, "all-to-sharded"), shard_linear(qlin, "sharded-to-all")
        return qlin, a2s, s2a, qlin(x), a2s(x), s2a(x[:, part(128, r, n)])

    outputs = ranks.run(program)
    for r, (qlin, a2s, s2a, y, y1, y2) in enumerate(outputs):
        assert isinstance(a2s, nn.QuantizedAllToShardedLinear)
        assert isinstance(s2a, nn.QuantizedShardedToAllLinear)
        assert a2s.mode == s2a.mode == mode
        for layer in (a2s, s2a):
            assert (layer.get("biases") is None) == (mode != "affine")
            assert list(tree_flatten(layer.trainable_parameters())) == [] or \
                [k for k, _ in tree_flatten(layer.trainable_parameters())] == ["bias"]
        rows = part(8, r, n)
        assert_same(a2s.weight, qlin.weight[rows])
        assert_same(a2s.scales, qlin.scales[rows])
        assert_same(s2a.scales, qlin.scales[:, part(qlin.scales.shape[1], r, n)])
        assert_close(y1, y[:, rows])
        assert_close(y2, y)
        tail = f"bias=True, group_size={group_size}, bits={bits}, mode={mode})"
        assert repr(a2s) == f"QuantizedAllToShardedLinear(input_dims=128, output_dims=8, {tail}"
        assert repr(s2a) == f"QuantizedShardedToAllLinear(input_dims=128, output_dims=8, {tail}"


@pytest.mark.parametrize("segments, cuts", [(3, [4, 8]), ([4, 8], [4, 8]),
                                            ([0.5], [6])])
def test_segments_shard_each_part_of_a_fused_weight(monkeypatch, segments, cuts):
    """A fused QKV weight: every rank keeps its rows of each of Q, K and V."""
    n = 2
    ranks = Ranks(monkeypatch, n)

    def program():
        mx.random.seed(1)
        lin = nn.Linear(2, 12)
        return lin, shard_linear(lin, "all-to-sharded", segments=segments)

    for r, (lin, sharded) in enumerate(ranks.run(program)):
        bounds = [0, *cuts, 12]
        rows = [i for lo, hi in zip(bounds, bounds[1:])
                for i in range(lo, hi)[part(hi - lo, r, n)]]
        assert_same(sharded.weight, lin.weight[mx.array(rows)])
        assert_same(sharded.bias, lin.bias[mx.array(rows)])


def test_shard_inplace_with_a_predicate(monkeypatch):
    """MLX's test_shard_predicate at 4 channels: even convolutions split their output
    channels, odd ones their input channels and all-sum their outputs."""
    ranks = Ranks(monkeypatch, 2)

    class MyConv(nn.Module):
        def __init__(self, *args, aggregate=False, **kwargs):
            super().__init__()
            self.aggregate = aggregate
            self.conv = nn.Conv2d(*args, **kwargs)

        def __call__(self, x):
            x = self.conv(x)
            return mx.distributed.all_sum(x) if self.aggregate else x

    def sharding(path, weight):
        parts = path.split(".")
        if int(parts[1]) % 2 == 0:
            return 0
        return -1 if parts[-1] != "bias" else None

    def program():
        mx.random.seed(2)
        mod = nn.Sequential(MyConv(3, 4, kernel_size=3), MyConv(4, 3, kernel_size=3))
        smod = nn.Sequential(MyConv(3, 4, kernel_size=3),
                             MyConv(4, 3, kernel_size=3, aggregate=True))
        smod.update(mod.parameters())
        shard_inplace(smod, sharding)
        x = mx.random.normal((1, 6, 6, 3))
        return mod(x), smod(x), smod

    for r, (y1, y2, smod) in enumerate(ranks.run(program)):
        assert_close(y2, y1)
        assert smod.layers[0].conv.weight.shape == (2, 3, 3, 3)
        assert smod.layers[1].conv.weight.shape == (3, 3, 3, 2)
        assert smod.layers[1].conv.bias.shape == (3,)


def test_shard_inplace_strings_use_the_linear_predicates(monkeypatch):
    ranks = Ranks(monkeypatch, 2)

    def program():
        mx.random.seed(4)
        lin, a, b = nn.Linear(4, 6), nn.Linear(4, 6), nn.Linear(4, 6)
        a.update(lin.parameters())
        b.update(lin.parameters())
        shard_inplace(a, "all-to-sharded")
        shard_inplace(b, "sharded-to-all")
        return lin, a, b

    for r, (lin, a, b) in enumerate(ranks.run(program)):
        assert type(a) is type(b) is nn.Linear  # the module itself is unchanged
        assert_same(a.weight, lin.weight[part(6, r, 2)])
        assert_same(a.bias, lin.bias[part(6, r, 2)])
        assert_same(b.weight, lin.weight[:, part(4, r, 2)])
        assert_same(b.bias, lin.bias)


def test_sizes_that_do_not_divide_raise_mlx_errors(monkeypatch):
    ranks = Ranks(monkeypatch, 4)
    ranks.group = FakeGroup(0, 4)
    for cls in (nn.AllToShardedLinear, nn.QuantizedAllToShardedLinear):
        with pytest.raises(ValueError, match=r"^Cannot shard the output of size 6 across 4 "
                                             r"devices\.$"):
            cls(4, 6)
    for cls in (nn.ShardedToAllLinear, nn.QuantizedShardedToAllLinear):
        with pytest.raises(ValueError, match=r"^The input of size 6 cannot be sharded across "
                                             r"4 devices\.$"):
            cls(6, 4)
    with pytest.raises(ValueError, match=r"^Cannot shard parameter 'weight' with shape \(3, 4\) "
                                         r"across 4 devices: axis 0 must be divisible by 4\.$"):
        nn.fully_shard(nn.Linear(4, 3))


def test_reprs_and_shapes_on_a_group_of_two(monkeypatch):
    ranks = Ranks(monkeypatch, 2)
    ranks.group = FakeGroup(1, 2)
    a2s, s2a = nn.AllToShardedLinear(4, 6, bias=False), nn.ShardedToAllLinear(4, 6)
    assert a2s.weight.shape == (3, 4) and "bias" not in a2s
    assert s2a.weight.shape == (6, 2) and s2a.bias.shape == (6,)
    assert repr(a2s) == "AllToShardedLinear(input_dims=4, output_dims=6, bias=False)"
    assert repr(s2a) == "ShardedToAllLinear(input_dims=4, output_dims=6, bias=True)"
    q = nn.QuantizedShardedToAllLinear(128, 4, group_size=32)
    assert q.weight.shape == (4, 8) and q.bias.tolist() == [0.0] * 4
    assert repr(q) == ("QuantizedShardedToAllLinear(input_dims=128, output_dims=4, bias=True, "
                       "group_size=32, bits=4, mode=affine)")
    q.unfreeze()
    assert tree_flatten(q.trainable_parameters()) == []  # its own parameters stay frozen
    # One sum_gradients per group: MLX caches it.
    assert sum_gradients(ranks.group) is sum_gradients(ranks.group)


# ----------------------------------------------------------------------
# average_gradients and clip_grad_norm_sharded on N ranks


def test_average_gradients_batches_small_gradients_as_mlx(monkeypatch):
    """MLX's test_average_gradients on 3 ranks, with each rank's own gradients."""
    n = 3
    ranks = Ranks(monkeypatch, n)

    def averaged(**kwargs):
        r, _ = rank_and_size()
        return average_gradients([mx.ones(10) * (r + 1) for _ in range(10)], **kwargs)

    for kwargs, calls in [({}, 1), ({"all_reduce_size": 4 * 50}, 2),
                          ({"all_reduce_size": 0}, 10), ({"all_reduce_size": -1}, 10),
                          ({"all_reduce_size": 4 * 10}, 10), ({"all_reduce_size": 4 * 11}, 5)]:
        for grads in ranks.run(lambda: averaged(**kwargs)):
            assert isinstance(grads, list) and len(grads) == 10
            assert all(g.shape == (10,) and g.tolist() == [2.0] * 10 for g in grads)
        assert ranks.names() == ["all_sum"] * calls, kwargs


def test_average_gradients_keeps_the_tree_and_dtypes(monkeypatch):
    ranks = Ranks(monkeypatch, 2)

    def program():
        r, _ = rank_and_size()
        return average_gradients({"w": mx.full((2, 3), r + 1.0), "b": [mx.array([2.0 * r])]},
                                 communication_stream=mx.cpu)

    for grads in ranks.run(program):
        assert grads["w"].tolist() == [[1.5] * 3] * 2 and grads["b"][0].tolist() == [1.0]
    assert ranks.recorded[0][0][4] == mx.cpu  # the stream is passed on

    def mixed():
        r, _ = rank_and_size()
        return average_gradients([mx.ones(3, dtype=mx.float16) * (r + 1), mx.ones(2) * r],
                                 communication_stream=mx.cpu)

    for grads in ranks.run(mixed):
        assert [g.dtype for g in grads] == [mx.float16, mx.float32]
        assert grads[0].tolist() == [1.5] * 3 and grads[1].tolist() == [0.5] * 2
    # One all_sum per gradient; as in MLX, the stream is not passed on then.
    assert [(c[0], c[4]) for c in ranks.recorded[0]] == [("all_sum", None)] * 2

    def half():  # float16's itemsize: 3 gradients of 20 bytes reach 50 bytes
        return average_gradients([mx.ones(10, dtype=mx.float16)] * 7, all_reduce_size=50)

    ranks.run(half)
    assert ranks.names() == ["all_sum"] * 3
    assert [c[1] for c in ranks.recorded[0]] == [(30,), (30,), (10,)]
    assert ranks.run(lambda: average_gradients({})) == [{}, {}]


@pytest.mark.parametrize("n", [1, 3])
def test_clip_grad_norm_sharded_uses_the_global_norm(monkeypatch, n):
    """MLX's test_clip_grad_norm_sharded on n ranks."""
    ranks = Ranks(monkeypatch, n)
    grads = {"a": mx.ones((4, 3)) * 3.0, "b": mx.ones((5,)) * 3.0}
    expected = math.sqrt(n * 17) * 3.0

    for clipped, norm in ranks.run(lambda: clip_grad_norm_sharded(grads, max_norm=1e9)):
        assert close(norm.item(), expected, 1e-6, 1e-6)
        assert all(clipped[k].tolist() == grads[k].tolist() for k in grads)
    for clipped, norm in ranks.run(lambda: clip_grad_norm_sharded(grads, max_norm=1.0)):
        scale = 1.0 / (expected + 1e-6)
        assert all(close(clipped[k].tolist(), (grads[k] * scale).tolist(), 1e-6, 1e-6)
                   for k in grads)
    assert ranks.names() == ["all_sum"]


# ----------------------------------------------------------------------
# fully_shard on N ranks


def _mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))


@pytest.mark.parametrize("n", [2, 4])
def test_fully_shard_gathers_forward_and_averages_gradients(monkeypatch, n):
    ranks = Ranks(monkeypatch, n)

    def loss(model, x):
        return (model(x) ** 2).sum()

    def program():
        r, _ = rank_and_size()
        mx.random.seed(9)
        model, ref = _mlp(), _mlp()
        ref.update(model.parameters())
        x = mx.random.normal((3, 4)) + r  # each rank its own batch
        fs = nn.fully_shard(model)
        (l1, g1), (l2, g2) = (nn.value_and_grad(m, loss)(m, x) for m in (ref, fs))
        return ref, fs, l1, g1, l2, g2, ref(x), fs(x)

    outputs = ranks.run(program)
    mean = tree_map(lambda *gs: sum(gs[1:], gs[0]) / n, *(out[3] for out in outputs))
    for r, (ref, fs, l1, g1, l2, g2, y1, y2) in enumerate(outputs):
        assert isinstance(fs, nn.FullyShardedModule) and repr(fs).startswith(
            "FullyShardedModule(num_sharded_params=4\n  (module): Sequential(\n")
        assert_same(y2, y1)  # gathering is exact
        assert_same(l2, l1)
        assert list(g2) == ["module"]
        for (path, shard), (_, full) in zip(tree_flatten(g2["module"]), tree_flatten(mean)):
            assert_close(shard, full[part(full.shape[0], r, n)])
        # Between calls the module holds the shards.
        for (_, shard), (_, full) in zip(tree_flatten(fs.module.parameters()),
                                         tree_flatten(ref.parameters())):
            assert_same(shard, full[part(full.shape[0], r, n)])
    # The gradient call: one all_gather forward, one sum_scatter backward; then fs(x).
    assert ranks.names() == ["all_gather", "sum_scatter", "all_gather"]


def test_fully_shard_compute_dtype_nesting_and_as_linear(monkeypatch):
    ranks = Ranks(monkeypatch, 2)

    def program():
        mx.random.seed(6)
        inner, emb = nn.Linear(4, 4), nn.Embedding(6, 4)
        ref = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
        model = nn.Sequential(nn.fully_shard(inner), nn.Linear(4, 4))
        model.layers[1].update(ref.layers[1].parameters())
        ref.layers[0].update(dict(weight=inner.weight, bias=inner.bias))  # inner is sharded
        fs = nn.fully_shard(model)
        fs16 = nn.fully_shard(nn.Linear(4, 2), compute_dtype=mx.float16)
        femb_ref = nn.Embedding(6, 4)
        femb_ref.update(emb.parameters())
        femb = nn.fully_shard(emb)
        x, x16 = mx.ones((1, 4)), mx.ones((1, 4), dtype=mx.float16)
        g16 = nn.value_and_grad(fs16, lambda x: fs16(x).sum())(x16)[1]
        return fs, fs16(x16), g16, femb.as_linear(x), femb_ref.as_linear(x)

    for fs, y16, g16, e1, e2 in ranks.run(program):
        assert fs._paths == ["layers.1.weight", "layers.1.bias"]  # not the inner's
        assert nn.fully_shard(fs) is fs
        assert y16.dtype == mx.float16  # float32 parameters would promote it
        assert [g.dtype for _, g in tree_flatten(g16)] == [mx.float32, mx.float32]
        assert_same(e1, e2)
    relu = nn.ReLU()
    assert nn.fully_shard(relu) is relu  # nothing to shard


# ----------------------------------------------------------------------
# The same program under real MLX's mlx.launch


def _free_ports(count):
    """A first port with ``count`` free ones from it (mlx.launch's ring uses one per rank)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + count > 65535:
            continue
        try:
            for port in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
    raise RuntimeError("no free ports")


@needs_mlx
def test_simulated_ranks_give_what_mlx_launch_gives(monkeypatch):
    """sharded_program.py on 2 processes of real MLX and on 2 simulated ranks of mlxref:
    the same losses, gradients, averages, norms and collectives."""
    launcher = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    if not os.path.exists(launcher):
        pytest.skip("mlx.launch is not installed next to this Python")
    here = os.path.dirname(os.path.abspath(__file__))
    ran = subprocess.run(
        [launcher, "-n", "2", "--starting-port", str(_free_ports(2)), "--python",
         sys.executable, os.path.join(here, "sharded_program.py")],
        capture_output=True, text=True, timeout=60, cwd=here)
    assert ran.returncode == 0, ran.stderr
    theirs = sorted((json.loads(line) for line in ran.stdout.splitlines()
                     if line.startswith("{")), key=lambda d: d["rank"])
    assert len(theirs) == 2, ran.stdout

    sys.path.insert(0, here)
    try:
        from sharded_program import program
    finally:
        sys.path.remove(here)
    ranks = Ranks(monkeypatch, 2)
    ours = ranks.run(lambda: program(mx, nn, nn.layers.distributed, nn.utils))
    for r in range(2):
        assert theirs[r].pop("calls") == ranks.names(r)
        assert list(ours[r]) == list(theirs[r])
        for key in ours[r]:
            assert close(ours[r][key], theirs[r][key], 1e-5, 1e-6), (r, key)


# ----------------------------------------------------------------------
# A group of one, against real MLX


def _twin_layers(lib_nn, build, seed=0):
    (mx if lib_nn is nn else real_mx).random.seed(seed)
    return build(lib_nn)


def _assert_same_params(ours, theirs):
    a, b = tree_flatten(ours.parameters()), tree_flatten(theirs.parameters())
    assert [k for k, _ in a] == [k for k, _ in b]
    for (k, x), (_, y) in zip(a, b):
        assert x.shape == tuple(y.shape) and x.dtype.name == str(y.dtype).split(".")[-1], k
        assert x.tolist() == y.tolist(), k
    assert ([k for k, _ in tree_flatten(ours.trainable_parameters())]
            == [k for k, _ in tree_flatten(theirs.trainable_parameters())])
    assert repr(ours) == repr(theirs)


def _float_layers(lib_nn, sharding, bias):
    lin = lib_nn.Linear(8, 6, bias=bias)
    module = real_distributed if lib_nn is not nn else nn.layers.distributed
    return module.shard_linear(lin, sharding)


@needs_mlx
@pytest.mark.parametrize("sharding", ["all-to-sharded", "sharded-to-all"])
@pytest.mark.parametrize("bias", [True, False])
def test_sharded_linear_on_one_process_is_mlx_s(sharding, bias):
    build = functools.partial(_float_layers, sharding=sharding, bias=bias)
    ours, theirs = _twin_layers(nn, build), _twin_layers(real_nn, build)
    _assert_same_params(ours, theirs)
    x = [[math.sin(i + 3 * j) for i in range(8)] for j in range(3)]

    def loss(lib, layer):
        return lambda x: (layer(x) * lib.arange(6)).sum()

    # mlxref's matmul is not MLX's (its order of summation), so values are close.
    y1, y2 = ours(mx.array(x)), theirs(real_mx.array(x))
    assert close(y1.tolist(), y2.tolist(), 1e-6, 1e-6)
    (l1, g1), (l2, g2) = (nn.value_and_grad(ours, loss(mx, ours))(mx.array(x)),
                          real_nn.value_and_grad(theirs, loss(real_mx, theirs))(real_mx.array(x)))
    assert close(l1.item(), l2.item(), 1e-6, 1e-6)
    for (k, a), (_, b) in zip(tree_flatten(g1), tree_flatten(g2), strict=True):
        assert close(a.tolist(), b.tolist(), 1e-6, 1e-6), k
    dx1 = mx.grad(loss(mx, ours))(mx.array(x))
    dx2 = real_mx.grad(loss(real_mx, theirs))(real_mx.array(x))
    assert close(dx1.tolist(), dx2.tolist(), 1e-6, 1e-6)


@needs_mlx
@pytest.mark.parametrize("sharding", ["all-to-sharded", "sharded-to-all"])
@pytest.mark.parametrize("mode, group_size, bits", [("affine", 32, 4), ("affine", 64, 8),
                                                    ("mxfp8", 32, 8), ("mxfp4", 32, 4)])
def test_quantized_sharded_linear_on_one_process_is_mlx_s(sharding, mode, group_size, bits):
    def build(lib_nn):
        qlin = lib_nn.Linear(64, 4).to_quantized(group_size=group_size, bits=bits, mode=mode)
        module = real_distributed if lib_nn is not nn else nn.layers.distributed
        return module.shard_linear(qlin, sharding)

    ours, theirs = _twin_layers(nn, build, 1), _twin_layers(real_nn, build, 1)
    _assert_same_params(ours, theirs)
    assert (ours.get("biases") is None) == (theirs.get("biases") is None)
    x = [[math.cos(i * j) for i in range(64)] for j in range(2)]
    assert close(ours(mx.array(x)).tolist(), theirs(real_mx.array(x)).tolist(), 1e-5, 1e-6)
    ours.unfreeze()
    theirs.unfreeze()
    _assert_same_params(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("name", ["AllToShardedLinear", "ShardedToAllLinear"])
@pytest.mark.parametrize("kwargs", [{}, {"bias": False}])
def test_constructors_on_one_process_draw_as_mlx(name, kwargs):
    ours = _twin_layers(nn, lambda lib: getattr(lib, name)(8, 6, **kwargs), 5)
    theirs = _twin_layers(real_nn, lambda lib: getattr(lib, name)(8, 6, **kwargs), 5)
    _assert_same_params(ours, theirs)
    quantized = "Quantized" + name
    ours = _twin_layers(nn, lambda lib: getattr(lib, quantized)(64, 2, **kwargs), 5)
    theirs = _twin_layers(real_nn, lambda lib: getattr(lib, quantized)(64, 2, **kwargs), 5)
    _assert_same_params(ours, theirs)
    # The draws consumed the same random numbers.
    assert mx.random.uniform(shape=(2,)).tolist() == real_mx.random.uniform(shape=(2,)).tolist()


@needs_mlx
def test_fully_sharded_module_on_one_process_is_mlx_s():
    def build(lib_nn):
        model = lib_nn.Sequential(lib_nn.Linear(3, 4), lib_nn.Linear(4, 2))
        assert lib_nn.fully_shard(model) is model
        return lib_nn.FullyShardedModule(model)

    ours, theirs = _twin_layers(nn, build, 8), _twin_layers(real_nn, build, 8)
    _assert_same_params(ours, theirs)
    x = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    (l1, g1) = nn.value_and_grad(ours, lambda x: ours(x).sum())(mx.array(x))
    (l2, g2) = real_nn.value_and_grad(theirs, lambda x: theirs(x).sum())(real_mx.array(x))
    assert close(l1.item(), l2.item(), 1e-6, 1e-6)
    for (k, a), (_, b) in zip(tree_flatten(g1), tree_flatten(g2), strict=True):
        assert close(a.tolist(), b.tolist(), 1e-6, 1e-6), k


@needs_mlx
def test_errors_on_one_process_are_mlx_s():
    def message(lib_nn, dist, utils, which):
        class Scalar(lib_nn.Module):
            def __init__(self):
                super().__init__()
                self.s = (mx if lib_nn is nn else real_mx).array(1.0)

        actions = {
            "sharding": lambda: dist.shard_linear(lib_nn.Linear(2, 2), "all-to-all"),
            "inplace": lambda: dist.shard_inplace(lib_nn.Linear(2, 2), "sideways"),
            "predicate": lambda: dist.shard_inplace(lib_nn.Linear(2, 2), lambda p, w: "0"),
            "scalar": lambda: lib_nn.FullyShardedModule(Scalar()),
        }
        with pytest.raises(ValueError) as info:
            actions[which]()
        return str(info.value)

    for which in ("sharding", "inplace", "predicate", "scalar"):
        assert (message(nn, nn.layers.distributed, nn.utils, which)
                == message(real_nn, real_distributed, real_utils, which))


@needs_mlx
def test_utilities_on_one_process_are_mlx_s():
    grads = {"a": mx.array([[3.0, -4.0]]), "b": [mx.array([12.0])]}
    assert average_gradients(grads) is grads
    assert nn.average_gradients is average_gradients
    for max_norm in (1.0, 100.0):
        ours = clip_grad_norm_sharded(grads, max_norm)
        theirs = real_utils.clip_grad_norm_sharded(
            {"a": real_mx.array([[3.0, -4.0]]), "b": [real_mx.array([12.0])]}, max_norm)
        assert repr(ours) == repr(theirs).replace("mlx.core", "mlxref.core")
    x = mx.array([1.0, 2.0])
    assert sum_gradients(mx.distributed.init())(x) is x


@needs_mlx
def test_names_are_mlx_s():
    assert {n for n in dir(real_nn) if not n.startswith("_")} - set(dir(nn)) <= {
        "convolution_transpose"}  # mlxref keeps the transposed convolutions in convolution.py
    public = {n for n in dir(real_utils) if not n.startswith("_") and n[0].islower()}
    assert public - set(dir(nn.utils)) <= {"reduce", "wraps", "tree_flatten", "tree_map",
                                           "tree_reduce", "tree_unflatten"}
    for name in ("shard_inplace", "shard_linear", "sum_gradients", "fully_shard",
                 "FullyShardedModule"):
        assert hasattr(nn.layers.distributed, name) and hasattr(real_distributed, name)
