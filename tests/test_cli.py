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


def test_bench_without_a_benchmarks_directory_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    import mlxref

    fake = tmp_path / "site" / "mlxref" / "__init__.py"
    monkeypatch.setattr(mlxref, "__file__", str(fake))
    assert main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "benchmarks/" in err and "Traceback" not in err


def test_bench_runs_the_benchmark_suite(tmp_path, monkeypatch, capsys):
    # The same report as `python -m benchmarks`, on a tiny seed workload; times unchecked.
    import json
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks import seed_grad

    monkeypatch.setattr(seed_grad, "QUICK_SIZES", (3, 30))
    path = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--only", "seed", "--repeats", "1", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "## Seed gradient" in out and "| mlxref " in out and "## MLP" not in out
    assert [r["n"] for r in json.loads(path.read_text())["seed_grad"]["rows"]] == [3, 30]
