"""The mlxref command: demo, and exit statuses."""

import math
import re
import subprocess
import sys

from mlxref.cli import main


def test_demo_prints_the_seed_gradient(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    value = float(re.search(r"f'\(x\) = array\(([-0-9.e]+), dtype=float32\)", out).group(1))
    assert abs(value - math.exp(0.5) * (math.sin(0.5) + math.cos(0.5))) < 1e-5
    assert "2.23733" in out and "-0.352" not in out


def test_demo_at_another_point(capsys):
    assert main(["demo", "--x", "1.0"]) == 0
    out = capsys.readouterr().out
    assert "{:g}".format(math.exp(1) * (math.sin(1) + math.cos(1)))[:6] in out


def test_bad_arguments_exit_2_without_traceback():
    r = subprocess.run([sys.executable, "-m", "mlxref", "demo", "--x", "abc"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "invalid float value" in r.stderr
    r = subprocess.run([sys.executable, "-m", "mlxref", "nonsense"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_demo_draws_the_seed_example(tmp_path, capsys):
    import shutil

    import pytest

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0.790439" in out and "2.23733" in out
    for name in ("seed_graph.svg", "seed_vjp.svg", "seed_jvp.svg", "seed_vjp.html", "seed_jvp.html"):
        assert (tmp_path / name).stat().st_size > 1000, name
    assert "gradient 2.2373" in (tmp_path / "seed_vjp.svg").read_text()


