"""The ring back-end (mlxref/core/distributed/ring.py) and its wire format (wire.py).

Rings of 2-4 ranks run here in threads of this process (each rank its own
RingGroup and sockets) or, for the comparisons with real MLX and the faults, as
processes. Every wait is bounded by MLXREF_RING_TIMEOUT, set short here.
"""

import json
import math
import os
import random
import re
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from mlxref.core import dtypes as dt
from mlxref.core.distributed import ring, wire
from mlxref.launch import free_local_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TIMEOUT = "4"


@pytest.fixture(autouse=True)
def short_timeout(monkeypatch):
    monkeypatch.setenv(ring.TIMEOUT_VARIABLE, TIMEOUT)


def hostfile(tmp_path, n, connections=1):
    ports = iter(free_local_ports(n * connections))
    nodes = [[f"127.0.0.1:{next(ports)}" for _ in range(connections)] for _ in range(n)]
    path = tmp_path / "hosts.json"
    path.write_text(json.dumps(nodes))
    return str(path)


def on_every_rank(n, fn, path):
    """fn(group) on each rank of an ``n``-rank ring made in threads: the results
    (or exceptions) in rank order."""
    nodes = ring.load_nodes(path)
    results = [None] * n

    def run(rank):
        group = None
        try:
            group = ring.RingGroup(rank, nodes, False)
            results[rank] = fn(group)
        except Exception as e:  # noqa: BLE001 - the test looks at it
            results[rank] = e
        finally:
            if group is not None:
                group.close()

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    return results


def inputs(dtype, size, rank):
    rng = random.Random(f"{dtype.name}-{size}-{rank}")
    if dtype is dt.bool_:
        return [rng.random() < 0.3 for _ in range(size)]
    if dtype.is_integer:
        info = dt.iinfo(dtype)
        return [rng.randrange(int(info.min), int(info.max) + 1) for _ in range(size)]
    if dtype is dt.complex64:
        return dtype.store([complex(rng.uniform(-9, 9), rng.choice([0.0, rng.uniform(-1, 1)]))
                            for _ in range(size)])
    return dtype.store([rng.uniform(-1, 1) * 2.0 ** rng.randrange(-12, 12)
                        for _ in range(size)])


def ring_order(xs, op, dtype):
    """What the ring gives, computed from its definition: segment s is folded
    starting at rank s, against the direction of travel (+1 for a list of at least
    one element per rank, -1 for the zero-padded short list)."""
    n, size = len(xs), len(xs[0])
    reduce_op = wire.REDUCE_OPS[op]
    if size < n:
        padded = [x + dtype.store([0] * (n - size)) for x in xs]
        return ring_order_direction(padded, reduce_op, dtype, -1)[:size]
    return ring_order_direction(xs, reduce_op, dtype, +1)


def ring_order_direction(xs, reduce_op, dtype, direction):
    n, size = len(xs), len(xs[0])
    segment = math.ceil(size / n)
    out = []
    for k in range(size):
        s = k // segment
        acc = [xs[s][k]]
        for t in range(1, n):
            acc = reduce_op(acc, [xs[(s - direction * t) % n][k]], dtype)
        out += acc
    return out


# --- wire.py -------------------------------------------------------------------------

ALL = [dt.bool_, dt.uint8, dt.uint16, dt.uint32, dt.uint64, dt.int8, dt.int16, dt.int32,
       dt.int64, dt.float16, dt.bfloat16, dt.float32, dt.float64, dt.complex64]


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_wire_round_trip(dtype):
    data = inputs(dtype, 9, 0)
    raw = wire.to_wire(data, dtype)
    assert len(raw) == 9 * dtype.size
    assert wire.from_wire(raw, dtype, 9) == data
    with pytest.raises(ValueError, match="malformed message of 8 bytes"):
        wire.from_wire(raw[:8], dtype, 9 if dtype.size != 1 else 8 + 1)


def test_wire_bytes_are_mlx_memory():
    assert wire.to_wire([1.0, -2.0], dt.bfloat16) == bytes([0x80, 0x3F, 0x00, 0xC0])
    assert wire.to_wire([1.5], dt.float16) == struct.pack("<e", 1.5)
    assert wire.to_wire([1 + 2j], dt.complex64) == struct.pack("<2f", 1, 2)


def test_header_is_checked():
    payload = b"x" * 8
    assert wire.read_header(wire.frame(payload), 8) == 8
    with pytest.raises(ValueError, match="malformed message of 8 bytes where 4"):
        wire.read_header(wire.frame(payload), 4)
    with pytest.raises(ValueError, match="not an mlxref ring header"):
        wire.read_header(b"GET / HTTP/1", 4)


def test_reductions_in_the_dtype():
    # float16: 2048 + 1 rounds to 2048 at each addition, so the order shows.
    assert wire.sum_op([1.0], [2048.0], dt.float16) == [2048.0]
    assert wire.sum_op([1.0], wire.sum_op([1.0], [2048.0], dt.float16), dt.float16) == [2048.0]
    assert wire.sum_op([2.0**-9], [1.0], dt.bfloat16) == [1.0]
    assert wire.sum_op([100], [100], dt.int8) == [-56]
    assert wire.sum_op([255], [1], dt.uint8) == [0]
    assert wire.sum_op([True, False], [True, False], dt.bool_) == [True, False]
    assert wire.sum_op([1 + 2j], [0.1 + 0j], dt.complex64) == dt.complex64.store([1.1 + 2j])
    # std::max(out, in) keeps out unless out < in: nan only from the rank reduced into.
    nan = float("nan")
    assert math.isnan(wire.max_op([1.0], [nan], dt.float32)[0])
    assert wire.max_op([nan], [1.0], dt.float32) == [1.0]
    assert math.copysign(1, wire.max_op([0.0], [-0.0], dt.float32)[0]) == -1
    assert wire.min_op([-1.0], [0.0], dt.float32) == [-1.0]
    assert wire.max_op([1 + 5j, 2 + 0j], [1 + 1j, 1 + 9j], dt.complex64) == [1 + 5j, 2 + 0j]
    assert wire.min_op([True], [False], dt.bool_) == [False]


@pytest.mark.parametrize("dtype", [dt.float16, dt.bfloat16, dt.float32, dt.int8, dt.uint16,
                                   dt.complex64, dt.bool_], ids=lambda d: d.name)
def test_reductions_match_mlx_elementwise(dtype):
    mx = pytest.importorskip("mlx.core")
    a, b = inputs(dtype, 200, 1), inputs(dtype, 200, 2)
    mdt = getattr(mx, "bool_" if dtype is dt.bool_ else dtype.name)
    ma, mb = mx.array(a, dtype=mdt), mx.array(b, dtype=mdt)
    if dtype is not dt.bool_:
        assert wire.sum_op(b, a, dtype) == (ma + mb).tolist()
    assert wire.max_op(b, a, dtype) == mx.maximum(ma, mb).tolist()
    assert wire.min_op(b, a, dtype) == mx.minimum(ma, mb).tolist()


# --- collectives in a ring of threads ---------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("size", [1, 3, 7, 100])
def test_all_reduce_order(tmp_path, n, size):
    path = hostfile(tmp_path, n)
    cases = [(dt.float16, "all_sum"), (dt.bfloat16, "all_sum"), (dt.int8, "all_sum"),
             (dt.float32, "all_max"), (dt.complex64, "all_min")]
    xs = {case: [inputs(case[0], size, r) for r in range(n)] for case in cases}
    results = on_every_rank(n, lambda g: [getattr(g, op)(xs[(dtype, op)][g.rank()], dtype)
                                          for dtype, op in cases], path)
    for rank in range(n):
        assert not isinstance(results[rank], Exception), results[rank]
        for (dtype, op), got in zip(cases, results[rank]):
            assert got == ring_order(xs[(dtype, op)], op, dtype), (dtype, op, rank)


def test_float16_sum_order_is_the_rings(tmp_path):
    # The same 4 numbers summed in another order give other bits: the ring's order matters.
    xs = [[2048.0], [1.0], [1.0], [1.0]]
    res = on_every_rank(4, lambda g: g.all_sum(dt.float16.store(xs[g.rank()] * 4), dt.float16),
                        hostfile(tmp_path, 4))
    assert res[0] == res[3] == ring_order([x * 4 for x in xs], "all_sum", dt.float16)
    assert res[0] == [2048.0, 2048.0, 2052.0, 2052.0]  # 2048 + 1 is 2048, 1 + 1 + 2048 is 2052


def test_packets_and_two_connections(tmp_path):
    # 2 x 2 sockets: 65540 float32 elements per segment, so two packets per segment.
    n, size = 2, 131080
    xs = [inputs(dt.float32, size, r) for r in range(n)]
    res = on_every_rank(n, lambda g: g.all_sum(xs[g.rank()], dt.float32),
                        hostfile(tmp_path, n, connections=2))
    assert res[0] == res[1] == dt.float32.store([a + b for a, b in zip(*xs)])


def test_parts_in_both_directions(tmp_path):
    # 1.6 MB on 2 ranks with 2 sockets each: 3 parts (directions +1, -1, +1), as MLX splits.
    n, size = 2, 200003
    xs = [inputs(dt.float64, size, r) for r in range(n)]
    res = on_every_rank(n, lambda g: g.all_min(xs[g.rank()], dt.float64),
                        hostfile(tmp_path, n, connections=2))
    assert res[0] == res[1] == [min(a, b) for a, b in zip(*xs)]


def test_all_gather_send_recv(tmp_path):
    xs = [inputs(dt.int16, 5, r) for r in range(3)]

    def fn(g):
        r, n = g.rank(), g.size()
        gathered = g.all_gather(xs[r], dt.int16)
        g.send(xs[r], dt.int16, (r + 1) % n)
        received = g.recv(5, dt.int16, (r - 1) % n)
        return gathered, received

    res = on_every_rank(3, fn, hostfile(tmp_path, 3))
    for r in range(3):
        assert res[r] == (xs[0] + xs[1] + xs[2], xs[(r - 1) % 3])


def test_refusals(tmp_path):
    def fn(g):
        errors = []
        for call in (lambda: g.split(0), lambda: g.sum_scatter([1.0] * 4, dt.float32),
                     lambda: g.send([1.0], dt.float32, 2), lambda: g.recv(1, dt.float32, 2)):
            try:
                call()
            except RuntimeError as e:
                errors.append(str(e))
        return errors

    res = on_every_rank(4, fn, hostfile(tmp_path, 4))
    assert res[0] == ["[ring] Group split not supported.", "[ring] sum_scatter not supported.",
                      "[ring] Send only supported to direct neighbors but tried to send to 2 "
                      "from 0\n",
                      "[ring] Recv only supported from direct neighbors but tried to recv from "
                      "2 to 0\n"]


# --- init and the hostfile ---------------------------------------------------------------


def test_init_needs_rank_and_hostfile(monkeypatch):
    monkeypatch.delenv("MLX_RANK", raising=False)
    monkeypatch.setenv("MLX_HOSTFILE", "h.json")
    assert ring.init(False) is None
    with pytest.raises(RuntimeError) as e:
        ring.init(True)
    assert str(e.value) == (
        '[ring] You need to provide via environment variables both a rank (MLX_RANK) and a '
        'hostfile (MLX_HOSTFILE) but provided MLX_RANK="" and MLX_HOSTFILE="h.json"')


@pytest.mark.parametrize("text, message", [
    (None, "Couldn't read the hostfile"),
    ("[[", "is not valid JSON"),
    ('{"a": 1}', 'should hold a list with one list of "ip:port" strings per rank'),
    ("[[1]]", 'should hold a list'),
    ('[["127.0.0.1"], ["127.0.0.1:1"]]', "Can't parse address 127.0.0.1"),
    ('[["nosuchhost.invalid:1"], ["127.0.0.1:1"]]', "Can't parse address nosuchhost.invalid:1"),
    ('[["127.0.0.1:1"], ["127.0.0.1:2"]]', "Rank cannot be larger than the size of the group"),
])
def test_bad_hostfile(tmp_path, monkeypatch, text, message):
    path = tmp_path / "hosts.json"
    if text is not None:
        path.write_text(text)
    monkeypatch.setenv("MLX_HOSTFILE", str(path))
    monkeypatch.setenv("MLX_RANK", "5")
    with pytest.raises(RuntimeError, match=message.replace("[", r"\[").replace("(", r"\(")):
        ring.init(True)


def test_timeout_variable(monkeypatch):
    monkeypatch.setenv(ring.TIMEOUT_VARIABLE, "soon")
    with pytest.raises(RuntimeError, match="MLXREF_RING_TIMEOUT should be a number"):
        ring.timeout_seconds()
    monkeypatch.delenv(ring.TIMEOUT_VARIABLE)
    assert ring.timeout_seconds() == ring.DEFAULT_TIMEOUT


# --- faults: a peer that never connects, dies, or sends garbage ----------------------------

WORKER = textwrap.dedent("""
    import os, sys, time
    from mlxref.core import dtypes
    from mlxref.core.distributed import ring
    rank = int(os.environ["MLX_RANK"])
    try:
        g = ring.init(True)
        print("connected", flush=True)
        if rank == int(os.environ.get("DIE", "-1")):
            os._exit(7)
        for _ in range(3):
            g.all_sum([1.0] * 3000, dtypes.float32)
        print("finished", flush=True)
    except RuntimeError as e:
        print("ERROR", e, flush=True)
""")


def start_rank(tmp_path, path, rank, **env):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    environment = dict(os.environ, MLX_HOSTFILE=path, MLX_RANK=str(rank), PYTHONPATH=ROOT,
                       **{ring.TIMEOUT_VARIABLE: TIMEOUT}, **env)
    return subprocess.Popen([sys.executable, str(script)], env=environment, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish(procs):
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=30)[0])
        finally:
            p.kill()
            p.wait()
    return outs


@pytest.mark.parametrize("rank, message", [
    (0, "[ring] Accept failed: rank 1 (the left neighbour) did not connect to 127.0.0.1:"),
    (1, "[ring] Couldn't connect to rank 0 (the right neighbour) at 127.0.0.1:"),
])
def test_peer_never_connects(tmp_path, rank, message):
    start = time.monotonic()
    [out] = finish([start_rank(tmp_path, hostfile(tmp_path, 2), rank)])
    assert time.monotonic() - start < 15
    assert out.startswith("ERROR " + message), out


def test_rank_dies_mid_run(tmp_path):
    path = hostfile(tmp_path, 4)
    start = time.monotonic()
    outs = finish([start_rank(tmp_path, path, r, DIE="3") for r in range(4)])
    assert time.monotonic() - start < 20
    # Each rank names the neighbour it lost; which one depends on timing (rank 1, no
    # neighbour of rank 3, learns of it when rank 0 or 2 closes), but the first to
    # notice is a neighbour of rank 3, so someone names rank 3.
    named = set()
    for rank in range(3):
        match = re.search(r"ERROR \[ring\] connection to a peer was lost: rank (\d) during "
                          r"all_sum", outs[rank])
        assert match, outs
        named.add(int(match.group(1)))
        assert int(match.group(1)) in ((rank - 1) % 4, (rank + 1) % 4)
    assert 3 in named


@pytest.mark.parametrize("garbage, message", [
    (b"\x00" * 64, "all_sum: malformed message (header"),
    (wire.HEADER.pack(wire.MAGIC, 7), "all_sum: malformed message of 7 bytes where"),
    (wire.HEADER.pack(wire.MAGIC, 6000) + b"\x00" * 100,
     "connection to a peer was lost: rank 1 during all_sum (closed after 100 of 6000 bytes)"),
])
def test_malformed_message(tmp_path, garbage, message):
    path = hostfile(tmp_path, 2)
    nodes = json.loads(open(path).read())
    proc = start_rank(tmp_path, path, 0)
    host, port = nodes[0][0].split(":")
    # Play rank 1: it connects first to rank 0, then accepts rank 0's connection.
    deadline = time.monotonic() + 10
    while True:
        try:
            right = socket.create_connection((host, int(port)), timeout=5)
            break
        except OSError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    host, port = nodes[1][0].split(":")
    with socket.create_server((host, int(port))) as server:
        server.settimeout(10)
        left, _ = server.accept()
    # 3000 float32 elements on 2 ranks: each message rank 0 expects is 6000 bytes.
    with right, left:
        left.sendall(garbage)
        right.sendall(garbage)
        left.shutdown(socket.SHUT_WR)
        right.shutdown(socket.SHUT_WR)
        [out] = finish([proc])
    assert "ERROR [ring] " in out and message in out, out


# --- the same bits as real MLX --------------------------------------------------------------

BITS = textwrap.dedent("""
    import os, random, struct
    if os.environ.get("USE_MLX"):
        import mlx.core as mx
        g = mx.distributed.init(strict=True, backend="ring")
    else:
        from mlxref.core import dtypes
        from mlxref.core.distributed import ring
        g = ring.init(True)
    r = g.rank()
    # A file per rank: a launcher may cut the ranks' long stdout lines into each other.
    out = open(os.path.join(os.environ["OUT"], f"rank{r}"), "w")
    for name in ("float16", "bfloat16", "float32", "int8"):
        for size in (1, 7, 1000):
            rng = random.Random(f"{name}-{size}-{r}")
            if name == "int8":
                vals = [rng.randrange(-128, 128) for _ in range(size)]
            else:
                vals = [rng.uniform(-1, 1) * 2.0 ** rng.randrange(-12, 12) for _ in range(size)]
            for op in ("all_sum", "all_max", "all_min"):
                if os.environ.get("USE_MLX"):
                    y = getattr(mx.distributed, op)(mx.array(vals, dtype=getattr(mx, name)))
                    y_ = y.astype(mx.float32).tolist() if name != "int8" else y.tolist()
                else:
                    dtype = getattr(dtypes, name)
                    y_ = getattr(g, op)(dtype.store(vals), dtype)
                print(r, op, name, size, struct.pack(f"<{size}d", *y_).hex()[:4000], file=out)
    out.close()
""")


def test_same_bits_as_mlx(tmp_path):
    pytest.importorskip("mlx.core")
    launcher = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    if not os.path.exists(launcher):
        pytest.skip("mlx.launch is not installed")
    script = tmp_path / "bits.py"
    script.write_text(BITS)
    port = free_local_ports(1)[0]
    env = dict(os.environ, PYTHONPATH=ROOT)
    theirs_dir, ours_dir = tmp_path / "mlx", tmp_path / "mlxref"
    theirs_dir.mkdir()
    ours_dir.mkdir()
    mlx_run = subprocess.run([launcher, "-n", "3", "-p", str(port), "--", sys.executable,
                              str(script), ], env=dict(env, USE_MLX="1", OUT=str(theirs_dir)),
                             capture_output=True, text=True, timeout=60)
    ours = subprocess.run([sys.executable, "-m", "mlxref.launch", "-n", "3", str(script)],
                          env=dict(env, OUT=str(ours_dir)), capture_output=True, text=True,
                          timeout=60)
    assert ours.stderr == ""
    for r in range(3):
        lines = (ours_dir / f"rank{r}").read_text().splitlines()
        assert len(lines) == 4 * 3 * 3
        assert lines == (theirs_dir / f"rank{r}").read_text().splitlines(), mlx_run.stderr
