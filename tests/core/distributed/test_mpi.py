"""The MPI back-end (mlxref/core/distributed/mpi.py) under a real ``mpirun``.

Each test that needs MPI starts 2-4 ranks with ``mpirun -np N``; a rank writes
what it computed to a file of its own (the ranks' stdout would interleave). The
values are checked against the same reductions computed here from the ranks'
inputs, and, bit for bit, against real MLX's MPI back-end running the same
script. Faults (a hung peer, a killed rank) must end the job within seconds
and leave no process behind. Without mpirun or mpi4py those tests skip.
"""

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from mlxref.core import dtypes as dt
from mlxref.core.distributed import mpi, wire
from mlxref.launch import unbuffered_output_options

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MPIRUN = shutil.which("mpirun")
HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None
needs_mpi = pytest.mark.skipif(
    MPIRUN is None or not HAS_MPI4PY,
    reason="needs Open MPI and mpi4py: `make mpi` (apt-get install openmpi-bin "
           "libopenmpi-dev; pip install -e '.[mpi]')")

# What Open MPI reads instead of --oversubscribe and --allow-run-as-root (mpirun
# refuses root without them); MPICH ignores them.
MPIRUN_ENV = {"OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1",
              "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

# Every rank script starts so: mlxref's MPI group or real MLX's (USE_MLX), and a file
# of its own to write to.
PRELUDE = textwrap.dedent("""
    import os, sys, time, signal
    USE_MLX = bool(os.environ.get("USE_MLX"))
    if USE_MLX:
        import mlx.core as mx
        g = mx.distributed.init(strict=True, backend="mpi")
    else:
        from mlxref.core import dtypes
        from mlxref.core.distributed import mpi
        from mlxref.core.distributed.wire import to_wire
        g = mpi.init(True)
    r = g.rank()
    OUT = open(os.path.join(os.environ["OUT"], f"rank{r}.txt"), "w")

    def say(*words):
        print(*words, file=OUT, flush=True)
""")


def run_mpirun(tmp_path, n, body, timeout=30, **env):
    """Run ``body`` (after PRELUDE) on ``n`` ranks: mpirun's return code, stderr,
    the time it took and each rank's lines. No rank may be left running."""
    script = tmp_path / "rank.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    for old in tmp_path.glob("rank*.txt"):
        old.unlink()
    environment = dict(os.environ, PYTHONPATH=ROOT, OUT=str(tmp_path), **MPIRUN_ENV)
    environment.update({mpi.TIMEOUT_VARIABLE: "10", **env})
    start = time.monotonic()
    proc = subprocess.Popen([MPIRUN, "-np", str(n), sys.executable, str(script)],
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    took = time.monotonic() - start
    assert_none_running(str(script))
    lines = []
    for rank in range(n):
        path = tmp_path / f"rank{rank}.txt"
        lines.append(path.read_text().splitlines() if path.exists() else [])
    return proc.returncode, err, took, lines


def assert_none_running(marker):
    """No process whose command line names ``marker`` (a rank of this test) is left."""
    deadline = time.monotonic() + 5
    while True:
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        left.append(int(pid))
            except OSError:
                pass
        if not left:
            return
        if time.monotonic() > deadline:
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"ranks left running: {left}")
        time.sleep(0.1)


# --- the collectives: values, and the same bits as real MLX ----------------------------------

DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "uint32",
          "int64", "uint64", "complex64"]
OPS = ["all_sum", "all_max", "all_min", "all_gather"]

# Inputs exact in their dtype (so MLX and mlxref start from the same bits) whose sums
# round in the floating dtypes, so that the order of the additions shows.
COLLECTIVES = f"""
    DTYPES, OPS = {DTYPES!r}, {OPS!r}
    def values(name, r, n=13):
        out = []
        for i in range(n):
            k = (i * 37 + r * 101) % 255 + 1
            sign = (-1) ** (i + r)
            if name == "float16":
                out.append(sign * k * 2.0 ** ((i * 7 + r * 3) % 9 - 4))
            elif name in ("bfloat16", "float32"):
                k = k if name == "bfloat16" else k * 65521 + 1
                out.append(sign * k * 2.0 ** ((i * 7 + r * 3) % 61 - 30))
            elif name == "float64":
                out.append((k * 2 ** 40 + 12345 * r + 1) * 2.0 ** ((i * 7 + r * 3) % 61 - 30))
            elif name == "complex64":
                out.append(complex(k * 2.0 ** ((i * 7 + r * 3) % 61 - 30), (r - i % 3) * 0.75))
            else:
                out.append((k * (r + 3) * 11) % 250 - (125 if name.startswith("int") else 0))
        return out

    def collective(op, name, vals, group):
        if USE_MLX:
            x = mx.array(vals, dtype=getattr(mx, name))
            y = getattr(mx.distributed, op)(x, group=group)
            return bytes(mx.view(x, mx.uint8)).hex(), bytes(mx.view(y, mx.uint8)).hex()
        dtype = getattr(dtypes, name)
        x = dtype.store(vals)
        return to_wire(x, dtype).hex(), to_wire(getattr(group, op)(x, dtype), dtype).hex()

    for name in DTYPES:
        for op in OPS:
            say(op, name, *collective(op, name, values(name, r), g))
    # split: by parity; all ranks in one group ordered by a key; a split of a split
    half, backwards = g.split(r % 2), g.split(0, 10 - r)
    say("split", half.rank(), half.size(), backwards.rank(), backwards.size())
    say("half", *collective("all_sum", "int32", [r, 10 * r], half))
    say("backwards", *collective("all_gather", "int16", [r], backwards))
    quarter = half.split(half.rank())
    say("quarter", quarter.rank(), quarter.size())
    # send and recv round the ring (float16: one of the dtypes MPI lacks)
    right, left = (r + 1) % g.size(), (r - 1) % g.size()
    if USE_MLX:
        sent = mx.distributed.send(mx.array([r, 0.5], dtype=mx.float16), right)
        got = mx.distributed.recv_like(mx.array([0, 0], dtype=mx.float16), left)
        mx.eval(sent)
        mx.eval(got)
        say("recv", bytes(mx.view(got, mx.uint8)).hex())
    elif r % 2 == 0:
        g.send(dtypes.float16.store([r, 0.5]), dtypes.float16, right)
        say("recv", to_wire(g.recv(2, dtypes.float16, left), dtypes.float16).hex())
    else:
        received = g.recv(2, dtypes.float16, left)
        g.send(dtypes.float16.store([r, 0.5]), dtypes.float16, right)
        say("recv", to_wire(received, dtypes.float16).hex())
    # MLX frees a split group's communicator when the group goes, and aborts if that
    # is after MPI_Finalize (at exit, after the world group): let them go first.
    del half, backwards, quarter
"""


def decode(name, text):
    dtype = getattr(dt, name)
    raw = bytes.fromhex(text)
    return wire.from_wire(raw, dtype, len(raw) // dtype.size)


def fold(xs, reduce_op, dtype):
    out = xs[0]
    for x in xs[1:]:
        out = reduce_op(x, out, dtype)
    return out


def expected(op, name, inputs):
    """What the ranks' ``inputs`` reduce to; a float sum of more than two ranks
    may be any of the orders MPI's algorithms use: in rank order, backwards, or
    in pairs."""
    dtype = getattr(dt, name)
    if op == "all_gather":
        return [sum(inputs, [])]
    reduce_op = wire.REDUCE_OPS[op]
    orders = [fold(inputs, reduce_op, dtype)]
    if op == "all_sum" and dtype.category is dt.floating and len(inputs) > 2:
        orders.append(fold(inputs[::-1], reduce_op, dtype))
        if len(inputs) == 4:
            orders.append(fold([fold(inputs[:2], reduce_op, dtype),
                                fold(inputs[2:], reduce_op, dtype)], reduce_op, dtype))
    return orders


@needs_mpi
@pytest.mark.parametrize("n", [2, 3, 4])
def test_collectives_split_send_recv(tmp_path, n):
    code, err, took, lines = run_mpirun(tmp_path, n, COLLECTIVES)
    assert code == 0, err
    assert took < 10
    for op_index, (op, name) in enumerate((op, name) for name in DTYPES for op in OPS):
        rows = [rank_lines[op_index].split() for rank_lines in lines]
        assert all(row[:2] == [op, name] for row in rows)
        inputs = [decode(name, row[2]) for row in rows]
        assert len({row[3] for row in rows}) == 1, (op, name)  # every rank the same bits
        assert decode(name, rows[0][3]) in expected(op, name, inputs), (op, name)
    tail = [rank_lines[len(DTYPES) * len(OPS):] for rank_lines in lines]
    for r in range(n):
        half_size = (n - r % 2 + 1) // 2
        assert tail[r][0] == f"split {r // 2} {half_size} {n - 1 - r} {n}"
        half = [s for s in range(n) if s % 2 == r % 2]
        assert decode("int32", tail[r][1].split()[2]) == [sum(half), 10 * sum(half)]
        assert decode("int16", tail[r][2].split()[2]) == list(range(n))[::-1]
        assert tail[r][3] == "quarter 0 1"
        assert decode("float16", tail[r][4].split()[1]) == [(r - 1) % n, 0.5]


@needs_mpi
@pytest.mark.parametrize("n", [3, 4])
def test_same_bits_as_mlx(tmp_path, n):
    mx = pytest.importorskip("mlx.core")
    if not mx.distributed.is_available("mpi"):
        pytest.skip("real MLX finds no libmpi.so: apt-get install libopenmpi-dev")
    code, err, _, ours = run_mpirun(tmp_path, n, COLLECTIVES)
    assert code == 0, err
    code, err, _, theirs = run_mpirun(tmp_path, n, COLLECTIVES, USE_MLX="1")
    assert code == 0, err
    assert ours == theirs


# --- errors ------------------------------------------------------------------------------

ERRORS = """
    def attempt(label, f):
        try:
            say(label, f())
        except RuntimeError as e:
            say(label, "RuntimeError", e)

    attempt("bool", lambda: g.all_sum([True, False], dtypes.bool_))
    attempt("complex", lambda: g.all_sum([1j], dtypes.complex64))
    attempt("scatter", lambda: g.sum_scatter([1.0, 2.0], dtypes.float32))
    attempt("split", lambda: g.split(-5))
    if r == 0:
        g.send([1.0, 2.0], dtypes.float32, 1)
        g.send([1.0, 2.0, 3.0], dtypes.float32, 1)
    else:
        attempt("short", lambda: g.recv(3, dtypes.float32, 0))
        attempt("long", lambda: g.recv(2, dtypes.float32, 0))
    attempt("still", lambda: g.all_sum([r + 0.5], dtypes.float32))
"""


@needs_mpi
def test_errors_leave_the_group_working(tmp_path):
    code, err, took, lines = run_mpirun(tmp_path, 2, ERRORS)
    assert code == 0, err
    for r in range(2):
        text = "\n".join(lines[r])
        assert (f"bool RuntimeError [mpi] An error occurred in MPI_Allreduce (all_sum on rank "
                f"{r}, with the other ranks): MPI_ERR_OP: invalid reduce operation") in text
        assert "complex [2j]" in text
        assert "scatter RuntimeError [mpi] sum_scatter not yet implemented." in text
        assert "split RuntimeError MPI could not split this group" in text
        assert lines[r][-1] == "still [2.0]"
    assert ("short RuntimeError [mpi] recv from rank 0: a message of 2 elements of float32 "
            "where 3 were expected") in lines[1]
    assert re.search(r"long RuntimeError \[mpi\] An error occurred in MPI_Recv \(recv on rank 1, "
                     r"with rank 0\): MPI_ERR_TRUNCATE", "\n".join(lines[1]))


# --- faults: never a hang, no process left --------------------------------------------------

HANG = """
    say("sum", g.all_sum([1.0], dtypes.float32))
    if r == 1:
        time.sleep(60)  # never comes back to the collective
    try:
        g.all_sum([1.0], dtypes.float32)
    except RuntimeError as e:
        say(e)
    try:
        g.all_gather([1.0], dtypes.float32)
    except RuntimeError as e:
        say(e)
        raise
"""


@needs_mpi
def test_hung_peer_times_out_and_the_job_ends(tmp_path):
    code, err, took, lines = run_mpirun(tmp_path, 3, HANG, **{mpi.TIMEOUT_VARIABLE: "1.5"})
    assert code != 0 and took < 9, (code, took)
    assert lines[1] == ["sum [3.0]"]
    # The first rank to time out aborts the job at its exit; the other one may be
    # stopped by that before its own timeout (on a loaded machine): a prefix.
    complete = 0
    for r in (0, 2):
        expected_lines = [
            "sum [3.0]",
            f"[mpi] all_sum timed out: rank {r} of 3 waited 1.5 s in MPI_Allreduce for the other "
            f"ranks (set {mpi.TIMEOUT_VARIABLE} to wait longer)",
            f"[mpi] all_gather refused: MPI is broken since all_sum on rank {r} of 3 waited "
            f"1.5 s in MPI_Allreduce for the other ranks"]
        assert lines[r] and lines[r] == expected_lines[:len(lines[r])], lines[r]
        complete += lines[r] == expected_lines
    assert complete >= 1, lines
    assert "[mpi] aborting the MPI job: all_sum on rank" in err


KILLED = """
    say("sum", g.all_sum([1.0], dtypes.float32))
    if r == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    for _ in range(3):
        g.all_sum([1.0], dtypes.float32)
    say("finished")
"""


@needs_mpi
def test_killed_rank_ends_the_job(tmp_path):
    code, err, took, lines = run_mpirun(tmp_path, 3, KILLED)
    assert code != 0 and took < 9, (code, took)
    assert lines == [["sum [3.0]"]] * 3
    assert "exited on signal 9" in err or "signal 9" in err, err


# --- starting ----------------------------------------------------------------------------

ALONE = """
import os
for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"):
    os.environ.pop(name, None)
import sys
if sys.argv[1] == "mlx":
    import mlx.core as mx
    init = lambda strict: mx.distributed.init(strict=strict, backend="mpi")
    print(mx.distributed.is_available("mpi"), init(False).size())
else:
    if sys.argv[1] == "no-mpi4py":
        sys.modules["mpi4py"] = None  # as if it were not installed
    from mlxref.core.distributed import mpi
    init = mpi.init
    print(mpi.is_available(), init(False))
try:
    init(True)
except RuntimeError as e:
    print(e)
"""


def run_alone(how, **env):
    run = subprocess.run([sys.executable, "-c", ALONE, how], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ, PYTHONPATH=ROOT, **env))
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_without_mpi4py_mpi_is_not_available():
    assert run_alone("no-mpi4py") == ["False None", "Cannot initialize MPI"]
    # a launcher's environment changes nothing
    assert run_alone("no-mpi4py", OMPI_COMM_WORLD_SIZE="2") == ["False None",
                                                                "Cannot initialize MPI"]


@needs_mpi
def test_outside_mpirun_the_world_is_alone():
    single = ("[mpi] The world has a single process. Launch with mpirun to initialize the "
              "mpi backend.")
    assert run_alone("mlxref") == ["True None", single]
    if importlib.util.find_spec("mlx") is not None:  # real MLX, when it finds libmpi
        assert run_alone("mlx") in (["True 1", single], ["False 1", "Cannot initialize MPI"])


@needs_mpi
def test_launch_backend_mpi(tmp_path):
    script = tmp_path / "hello.py"
    # Each rank writes its line to a file of its own: Open MPI 4's mpirun may
    # cut the ranks' stdout lines into each other.
    script.write_text(PRELUDE + "open(os.path.join(os.environ['OUT'], f'rank{r}'), 'w').write("
                      "f'rank {r} of {g.size()} {g.all_sum([float(r)], dtypes.float32)}')\n")
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", "--backend", "mpi", "-n", "3",
                          str(script)], capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, PYTHONPATH=ROOT, OUT=str(tmp_path), **MPIRUN_ENV))
    lines = [(tmp_path / f"rank{r}").read_text() if (tmp_path / f"rank{r}").exists() else None
             for r in range(3)]
    assert lines == [f"rank {r} of 3 [3.0]" for r in range(3)], run.stderr
    assert_none_running(str(script))


# --- pieces that need no MPI -----------------------------------------------------------------

@pytest.mark.parametrize("version, options", [
    ("mpirun (Open MPI) 4.1.4\n", []),
    ("mpirun (Open MPI) 5.0.3\n", ["--output", ":raw"]),
    ("HYDRA build details:\n    Version: 4.1\n", []),
])
def test_unbuffered_output_only_for_open_mpi_5(tmp_path, version, options):
    fake = tmp_path / "mpirun"
    fake.write_text(f"#!/bin/sh\nprintf '%s' '{version}'\n")
    fake.chmod(0o755)
    assert unbuffered_output_options(str(fake)) == options
    assert unbuffered_output_options(str(tmp_path / "missing")) == []


@pytest.mark.parametrize("name, dtype", [("all_sum", dt.float16), ("all_max", dt.bfloat16),
                                         ("all_min", dt.complex64), ("all_sum", dt.bfloat16)])
def test_reductions_for_the_dtypes_mpi_lacks(name, dtype):
    # MPI calls the function with the incoming block and the accumulator, which it
    # changes in place: *acc = op(*acc, *in), as mpi.cpp's simple_sum/max/min.
    if dtype is dt.complex64:
        incoming, accumulator = [1 + 5j, 2 - 1j, 3j], [1 + 4j, 2 + 0j, -1 + 9j]
    else:
        incoming, accumulator = dtype.store([4096.0, 2.0 ** -9, -3.5]), dtype.store([2050.0, 1.0, -3.25])
    raw_acc = bytearray(wire.to_wire(accumulator, dtype))
    mpi.reduction(name, dtype)(wire.to_wire(incoming, dtype), raw_acc, None)
    assert wire.from_wire(bytes(raw_acc), dtype, 3) == wire.REDUCE_OPS[name](
        incoming, accumulator, dtype)
    assert bytes(raw_acc) != wire.to_wire(accumulator, dtype)


def test_timeout_variable(monkeypatch):
    monkeypatch.delenv(mpi.TIMEOUT_VARIABLE, raising=False)
    assert mpi.timeout_seconds() == mpi.DEFAULT_TIMEOUT
    monkeypatch.setenv(mpi.TIMEOUT_VARIABLE, "2.5")
    assert mpi.timeout_seconds() == 2.5
    for bad in ("soon", "0", "-1", "nan"):
        monkeypatch.setenv(mpi.TIMEOUT_VARIABLE, bad)
        with pytest.raises(RuntimeError, match=r"\[mpi\] MLXREF_MPI_TIMEOUT should be a "
                                               r"positive number of seconds but is"):
            mpi.timeout_seconds()
