"""mlxref.launch (mlxref/launch.py), the counterpart of mlx.launch: ranks'
output passed through, a failing rank stopping the others, Ctrl-C, and
argparse's errors as MLX's launcher gives them."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT, MLXREF_RING_TIMEOUT="5")

SCRIPT = textwrap.dedent("""
    import os, sys, time
    from mlxref.core import dtypes
    from mlxref.core.distributed import ring
    g = ring.init(False)
    rank, size = (g.rank(), g.size()) if g is not None else (0, 1)
    with open(os.path.join(sys.argv[1], f"pid{rank}"), "w") as f:
        f.write(str(os.getpid()))
    print("hello from", rank, "of", size, sys.argv[2:], flush=True)
    print("stderr of", rank, file=sys.stderr, flush=True)
    if g is not None:
        print("sum", rank, g.all_sum([float(rank)] * 3, dtypes.float32), flush=True)
    if os.environ.get("MODE") == "fail" and rank == 1:
        sys.exit(3)
    if os.environ.get("MODE") in ("fail", "sleep"):
        time.sleep(60)
""")


def launch(tmp_path, *args, mode="", timeout=40):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, "-m", "mlxref.launch", *args, str(script),
                           str(tmp_path), "extra"], env=dict(ENV, MODE=mode),
                          capture_output=True, text=True, timeout=timeout)


def assert_all_gone(tmp_path):
    pids = [int((tmp_path / name).read_text()) for name in os.listdir(tmp_path)
            if name.startswith("pid")]
    assert pids
    for pid in pids:
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{pid}") and "zombie" not in _state(pid):
            assert time.monotonic() < deadline, f"rank process {pid} still running"
            time.sleep(0.05)


def _state(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return f.read().lower()
    except OSError:
        return "zombie"


def test_output_passes_through_unprefixed(tmp_path):
    run = launch(tmp_path, "-n", "3")
    assert run.returncode == 0
    assert sorted(run.stdout.splitlines()) == sorted(
        [f"hello from {r} of 3 ['extra']" for r in range(3)]
        + [f"sum {r} [3.0, 3.0, 3.0]" for r in range(3)])
    assert sorted(run.stderr.splitlines()) == [f"stderr of {r}" for r in range(3)]
    assert_all_gone(tmp_path)


def test_prefix_starts_each_line_with_its_rank(tmp_path):
    run = launch(tmp_path, "-n", "2", "--prefix")
    assert run.returncode == 0
    assert sorted(run.stdout.splitlines()) == sorted(
        [f"[rank {r}] hello from {r} of 2 ['extra']" for r in range(2)]
        + [f"[rank {r}] sum {r} [1.0, 1.0, 1.0]" for r in range(2)])
    assert sorted(run.stderr.splitlines()) == [f"[rank {r}] stderr of {r}" for r in range(2)]


def test_one_rank_is_a_group_of_one(tmp_path):
    run = launch(tmp_path)
    assert (run.returncode, run.stdout) == (0, "hello from 0 of 1 ['extra']\n")


def test_verbose_logs_the_ring(tmp_path):
    run = launch(tmp_path, "-n", "2", "--verbose")
    assert "[ring] Rank 0 accepting" in run.stderr
    assert "[ring] Rank 1 connecting to 0" in run.stderr
    assert "Node with rank 1 completed" in run.stderr


def test_a_failing_rank_stops_the_others(tmp_path):
    start = time.monotonic()
    run = launch(tmp_path, "-n", "3", mode="fail")
    assert time.monotonic() - start < 25
    # As mlx.launch: the launcher itself exits 0 and warns for each rank.
    assert run.returncode == 0
    warnings = [line for line in run.stderr.splitlines() if "[WARN]" in line]
    assert warnings == ["\033[33m[WARN] Node with rank 0 exited with code -15 \033[0m",
                        "\033[33m[WARN] Node with rank 1 exited with code 3 \033[0m",
                        "\033[33m[WARN] Node with rank 2 exited with code -15 \033[0m"]
    assert_all_gone(tmp_path)


def test_ctrl_c_stops_every_rank(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    launcher = subprocess.Popen([sys.executable, "-m", "mlxref.launch", "-n", "2", str(script),
                                 str(tmp_path)], env=dict(ENV, MODE="sleep"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        while len(seen) < 2:
            line = launcher.stdout.readline()
            assert line, "the launcher ended early"
            seen += [line] if line.startswith("sum") else []
        launcher.send_signal(signal.SIGINT)
        out, err = launcher.communicate(timeout=15)
    finally:
        launcher.kill()
        launcher.wait()
    assert "Node with rank 0 exited with code -15" in err
    assert "Node with rank 1 exited with code -15" in err
    assert_all_gone(tmp_path)


@pytest.mark.parametrize("args, message", [
    (["-n", "0", "x.py"], "argument --repeat-hosts/-n: invalid positive_number value: '0'"),
    (["-n", "abc", "x.py"], "argument --repeat-hosts/-n: invalid positive_number value: 'abc'"),
    ([], "No script is provided"),
    (["--hostfile", "/nonexistent/hosts.json", "x.py"],
     "Hostfile /nonexistent/hosts.json doesn't exist"),
    (["--hosts", "a,,b", "x.py"], "Hostname cannot be empty"),
    (["--hosts", "somehost", "x.py"],
     "The ring backend requires IPs to be provided instead of hostnames"),
])
def test_bad_arguments(args, message):
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", *args], env=ENV,
                         capture_output=True, text=True, timeout=20)
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == f"mlxref.launch: error: {message}"
    assert "Traceback" not in run.stderr
    mlx_launch = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    if os.path.exists(mlx_launch):  # the same words as MLX's launcher
        theirs = subprocess.run([mlx_launch, *args], capture_output=True, text=True,
                                timeout=20)
        assert theirs.stderr.splitlines()[-1] == f"mlx.launch: error: {message}"


def test_bad_hostfile_and_backend(tmp_path):
    hosts = tmp_path / "hosts.json"
    hosts.write_text("[{")
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", "--hostfile", str(hosts),
                          "x.py"], env=ENV, capture_output=True, text=True, timeout=20)
    assert f"error: Failed to parse hostfile {hosts} (" in run.stderr
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", "--backend", "nccl", "x.py"],
                         env=ENV, capture_output=True, text=True, timeout=20)
    assert run.stderr.splitlines()[-1] == (
        "mlxref.launch: error: The backend should be one of {'ring', 'mpi'}")


def test_mpi_without_mpirun(tmp_path):
    env = dict(ENV, PATH=str(tmp_path))
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", "--backend", "mpi", "x.py"],
                         env=env, capture_output=True, text=True, timeout=20)
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == (
        "mlxref.launch: error: The mpi backend needs mpirun, which is not on PATH "
        "(install Open MPI or MPICH)")


def test_remote_hosts_go_through_ssh(tmp_path):
    # A stand-in for ssh that runs the remote command here; 127.0.0.2 and 127.0.0.3
    # are this machine's loopback too, so the ring still connects.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text('#!/bin/bash\necho "$4" >> "$(dirname "$0")/calls"\n'
                                 'exec bash -c "$5"\n')
    (bin_dir / "ssh").chmod(0o755)
    from mlxref.launch import free_local_ports
    port = free_local_ports(1)[0]
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", "--hosts",
                          "127.0.0.2,127.0.0.3", "-p", str(port), str(script), str(tmp_path)],
                         env=dict(ENV, PATH=f"{bin_dir}:{os.environ['PATH']}"),
                         capture_output=True, text=True, timeout=40)
    assert sorted(run.stdout.splitlines()) == [
        "hello from 0 of 2 []", "hello from 1 of 2 []",
        "sum 0 [1.0, 1.0, 1.0]", "sum 1 [1.0, 1.0, 1.0]"], run.stderr
    # One ssh per host (the two start at once: in either order).
    assert sorted((bin_dir / "calls").read_text().split()) == ["127.0.0.2", "127.0.0.3"]
    assert_all_gone(tmp_path)
