"""``python -m benchmarks.drawing_limits [--cap SECONDS]``: the drawings a lecturer
found too slow, timed with the default limits and with the limits raised.

Each case is one ``mlxref graph`` command, run in a child process; the table
gives its wall time, its peak memory (max RSS, from ``resource``) and its exit
status, first as it runs today (the limits: ``mlxref/viz/budget.py``) and then
with every limit raised out of the way ("no limits", as before they existed),
stopped after ``--cap`` seconds. ``make bench`` runs the first column alone
(``measure``: the defaults' targets are under 5 s and under 500 MB for each);
the "no limits" column takes minutes, so only this module's command runs it.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

RAISED = ["--max-work", str(10**12), "--timeout", "100000", "--max-pixels", str(10**12),
          "--max-nodes", "100000"]


def cases(directory):
    def out(name):
        return ["-o", os.path.join(directory, name)]
    terms = lambda n: " * ".join(["x ** x"] * n)  # noqa: E731
    chain = "sum(" + "sin(" * 30 + "x" + ")" * 30 + ")"
    return [
        ("50-term x**x grad, svg", [terms(50), "--at", "x=0.5", "--transform", "grad", *out("a.svg")]),
        ("30-step chain vjp, png", ["x" + " + sin(x)" * 30, "--at", "x=0.5", "--transform", "vjp",
                                    *out("b.png")]),
        ("sum(x@x), x 1000x1000", ["sum(x @ x)", "--shape", "x=1000,1000"]),
        ("30 nested sin, 1M elements", [chain, "--shape", "x=1000,1000"]),
        ("x ** 2147483647", ["x ** 2147483647", "--at", "x=3"]),
        ("power(x, 99999999)", ["power(x, 99999999)", "--at", "x=3"]),
    ]


def run(argv, cap):
    """(seconds, peak MB, exit status or 'killed') of ``mlxref graph argv``."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "mlxref", "graph", *argv],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    status = "killed"
    while True:  # os.wait4: this child's own peak memory (ru_maxrss, KB on Linux)
        pid, code, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            status = os.waitstatus_to_exitcode(code) if status != "killed-sent" else "killed"
            break
        if time.perf_counter() - start > cap and status == "killed":
            os.killpg(process.pid, 9)
            status = "killed-sent"
        time.sleep(0.05)
    process.returncode = status  # reaped here, not by Popen
    return time.perf_counter() - start, usage.ru_maxrss / 1024, status


SECONDS, MEGABYTES = 5.0, 500.0  # what a lecture machine should see, with the default limits


def measure(cap=60.0):
    """The default-limits column: ``{"rows": [(case, seconds, MB, exit status)]}``."""
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for title, case in cases(directory):
            seconds, mb, status = run(case, cap)
            rows.append((title, seconds, mb, status))
    return {"rows": rows, "load": os.getloadavg()[0], "cpus": os.cpu_count()}


def table(result):
    lines = ["| case | seconds | peak MB | exit | within 5 s and 500 MB |", "|---|---|---|---|---|"]
    for title, seconds, mb, status in result["rows"]:
        ok = "yes" if seconds < SECONDS and mb < MEGABYTES else "**no**"
        lines.append(f"| {title} | {seconds:.1f} | {mb:.0f} | {status} | {ok} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.drawing_limits")
    parser.add_argument("--cap", type=float, default=120.0,
                        help="stop a 'no limits' run after this many seconds (default: 120)")
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; cap {args.cap:g} s")
    print("| case | limits (default): s, MB, exit | no limits: s, MB, exit |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as directory:
        for title, case in cases(directory):
            cells = []
            for extra in ([], RAISED):
                seconds, mb, status = run(case + extra, args.cap)
                cells.append(f"{seconds:.1f} s, {mb:.0f} MB, {status}")
            print(f"| {title} | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
