"""Chapter 15's ring, step by step, is real MLX's: the same script prints the same lines.

tutorials/examples/ring_steps.py writes the ring all-reduce with send and
recv, prints every rank's steps, and checks on every rank that its sum has
``all_sum``'s bits. Here it runs under ``mlxref.launch`` and, with
``--backend mlx``, under real MLX's ``mlx.launch`` (the oracle), on 3 and 4
ranks: the sorted lines must be equal, so the steps the chapter shows and the
order of addition it explains (which its data-parallel section relies on) are
MLX's. The chapter's own doctest (tests/test_tutorials.py, or its notebook
run) checks the mlxref side's printed lines.
"""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tutorials" / "examples" / "ring_steps.py"
ENV = dict(os.environ, PYTHONPATH=str(ROOT), MLXREF_RING_TIMEOUT="5")


def run(command, timeout=40):
    """The command's stdout lines, sorted; on a timeout the launcher is stopped
    (it stops its ranks) before the test fails."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=ENV, cwd=ROOT) as launcher:
        try:
            out, err = launcher.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            launcher.terminate()
            launcher.communicate()
            pytest.fail(f"{command} took more than {timeout} s")
    assert "Traceback" not in err, err
    return sorted(out.splitlines())


@pytest.mark.parametrize("n", [3, 4])
def test_ring_steps_prints_what_real_mlx_prints(n):
    pytest.importorskip("mlx.core")
    mlx_launch = pathlib.Path(sys.executable).parent / "mlx.launch"
    if not mlx_launch.is_file():
        pytest.skip("no mlx.launch next to this Python")
    ours = run([sys.executable, "-m", "mlxref.launch", "-n", str(n), str(SCRIPT)])
    theirs = run([str(mlx_launch), "-n", str(n), "--", sys.executable, str(SCRIPT),
                  "--backend", "mlx"])
    assert len(ours) == n * (1 + 2 * (n - 1) + 1)  # start, the steps, the check
    assert all("has all_sum's bits: True" in line for line in ours if line.startswith("then"))
    assert ours == theirs
