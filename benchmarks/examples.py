"""Workload "examples": MLX's own linear and logistic regression examples, unchanged (issue 30).

``examples/python/linear_regression.py`` and ``logistic_regression.py``
(10,000 gradient steps on 1000 x 100 float32 data each) are read from a git
clone of MLX's repository (``MLX_GIT_DIR``; nothing of MLX is copied into
mlxref) and run as scripts, each in a fresh interpreter: once with
``mlx.core`` mapped to ``mlxref.core`` and once on real MLX (when it is
installed). Both generators are seeded with 0 first (MLX seeds from the
clock otherwise; ``mlxref.manual.mlx_docs`` does the same), so the two runs
print the same loss, distance or accuracy: the report requires it, apart
from the throughput each prints. The time is the child's CPU time (user and
system), and issue 30's target is ``TARGET_CPU_S`` for mlxref.

``--quick`` runs ``QUICK_ITERATIONS`` steps instead: the only change made to
the scripts (their ``num_iters = 10_000`` line). That far from convergence
the two float32 matrix products' roundings (BLAS's order, and mlxref's
double sums rounded once) can still show in the fifth decimal, so a quick
run's numbers need only agree to ``QUICK_TOLERANCE``.
"""

import os
import re
import resource
import subprocess
import sys

from mlxref.backends import metal

from . import harness

EXAMPLES = ("linear_regression", "logistic_regression")
ITERATIONS = 10_000
QUICK_ITERATIONS = 100
QUICK_TOLERANCE = 1e-4  # relative, on each printed number of a quick run
TARGET_CPU_S = 120.0  # issue 30: each example at its size, mlxref's CPU seconds at most
GIT_DIR_HINT = ("set MLX_GIT_DIR to a clone of MLX's repository "
                "(git clone --bare https://github.com/ml-explore/mlx)")

_ITERATIONS_LINE = re.compile(r"^num_iters = [\d_]+$", re.M)
_THROUGHPUT = re.compile(r"Throughput [\d.]+")
_NUMBER = re.compile(r"-?\d+\.\d+")

# The child: ``mlx.core`` as mlxref's when asked, both generators seeded with 0,
# then the script as ``__main__``.
_CHILD = """
import sys
if sys.argv[1] == "mlxref":
    from mlxref import as_mlx
    as_mlx.install()
import mlx.core as mx
mx.random.seed(0)
source = sys.stdin.read()
exec(compile(source, sys.argv[2], "exec"), {"__name__": "__main__"})
"""


def read_example(git_dir, name):
    """The script ``examples/python/<name>.py`` from a clone (bare or not) of MLX."""
    path = f"examples/python/{name}.py"
    if os.path.isfile(os.path.join(git_dir, path)):
        with open(os.path.join(git_dir, path), encoding="utf-8") as f:
            return f.read()
    done = subprocess.run(["git", "-C", git_dir, "show", f"HEAD:{path}"], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise RuntimeError(f"no {path} in {git_dir}: {done.stderr.strip()}")
    return done.stdout


def with_iterations(source, iterations):
    """The script with its ``num_iters`` line set to ``iterations``."""
    if len(_ITERATIONS_LINE.findall(source)) != 1:
        raise RuntimeError("the example no longer has one 'num_iters = ...' line")
    return _ITERATIONS_LINE.sub(f"num_iters = {iterations}", source)


def run_script(library, source, name):
    """``(CPU seconds, stdout)`` of ``source`` run in a fresh interpreter on
    ``library`` ("mlxref" or "mlx"); a RuntimeError if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", _CHILD, library, f"{name}.py"], input=source,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{name} on {library} failed: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def comparable(output):
    """What both runs must print alike: everything but the throughput."""
    return _THROUGHPUT.sub("Throughput <it/s>", output)


def agree(ours, theirs, tolerance=0.0):
    """Do two outputs print the same, apart from the throughput (and, with a
    ``tolerance``, numbers within it of each other, relatively)?"""
    ours, theirs = comparable(ours), comparable(theirs)
    if not tolerance or ours == theirs:
        return ours == theirs
    a, b = _NUMBER.findall(ours), _NUMBER.findall(theirs)
    return (_NUMBER.sub("<x>", ours) == _NUMBER.sub("<x>", theirs) and len(a) == len(b)
            and all(abs(float(u) - float(v)) <= tolerance * max(1.0, abs(float(v)))
                    for u, v in zip(a, b)))


def run(quick=False, git_dir=None, examples=EXAMPLES):
    """Each example on mlxref (and real MLX): CPU seconds and what it printed.

    Without a git dir (``git_dir`` or ``MLX_GIT_DIR``): ``{"skipped": reason}``.
    Raises ``harness.Mismatch`` when mlxref prints something else than real MLX."""
    git_dir = git_dir or os.environ.get("MLX_GIT_DIR")
    if not git_dir:
        return {"skipped": f"no MLX git dir: {GIT_DIR_HINT}"}
    iterations = QUICK_ITERATIONS if quick else ITERATIONS
    rows = []
    for name in examples:
        source = read_example(git_dir, name)
        if quick:
            source = with_iterations(source, iterations)
        row = {"example": name, "cpu_s": {}, "output": {}}
        libraries = ["mlxref"] + (["mlx"] if metal.available() else [])
        for library in libraries:
            harness.progress(f"examples: {name} ({iterations:,} iterations) on {library}")
            row["cpu_s"][library], row["output"][library] = run_script(library, source, name)
        tolerance = QUICK_TOLERANCE if quick else 0.0
        if "mlx" in row["output"] and not agree(row["output"]["mlxref"], row["output"]["mlx"], tolerance):
            raise harness.Mismatch(f"{name}: mlxref printed {row['output']['mlxref'].strip()!r}, "
                                   f"MLX {row['output']['mlx'].strip()!r}")
        rows.append(row)
    return {"iterations": iterations, "rows": rows, "target_cpu_s": TARGET_CPU_S,
            "mlx_device": metal.device() if metal.available() else None}


def table(res):
    if "skipped" in res:
        return f"Skipped: {res['skipped']}."
    mlx = "mlx" in res["rows"][0]["cpu_s"] if res["rows"] else False
    headers = ["example", "mlxref CPU"] + ([f"MLX ({res['mlx_device']}) CPU", "mlxref / MLX"] if mlx else [])
    rows = []
    for row in res["rows"]:
        cells = [row["example"], harness.fmt_time(row["cpu_s"]["mlxref"])]
        if mlx:
            cells += [harness.fmt_time(row["cpu_s"]["mlx"]),
                      harness.fmt_ratio(row["cpu_s"]["mlxref"] / row["cpu_s"]["mlx"])]
        rows.append(cells)
    lines = [harness.markdown_table(headers, rows, right=range(1, len(headers)))]
    for row in res["rows"]:
        lines += ["", f"`{row['example']}` prints: `{comparable(row['output']['mlxref']).strip()}`"]
    if res["iterations"] == ITERATIONS:
        slowest = max(row["cpu_s"]["mlxref"] for row in res["rows"])
        met = "met" if slowest <= res["target_cpu_s"] else "not met"
        lines += ["", f"Target: each under {res['target_cpu_s']:g} s of CPU on mlxref: {met}."]
    return "\n".join(lines)
