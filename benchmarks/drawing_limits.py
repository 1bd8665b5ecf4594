"""``python -m benchmarks.drawing_limits [--cap SECONDS]``: the drawings a lecturer
found too slow, timed with the default limits and with the limits raised.

Issue 32's are the PNGs: the collapsed 50-term power tower (``dot`` once took
over its 4 s there), the grad of a six-layer Linear+gelu model
(``mlxref/viz/figures.py:DeepMLP``, 227 nodes) and chapter 12's transformer's
forward (tutorials/examples/char_lm.py, the chapter's configuration and first
batch), both drawn folded by module.

Each case is one ``mlxref graph`` command, run in a child process; the table
gives its wall time, its peak memory (max RSS, from ``resource``) and its exit
status, first as it runs today (the limits: ``mlxref/viz/budget.py``) and then
with every limit raised out of the way ("no limits", as before they existed),
stopped after ``--cap`` seconds. ``make bench`` runs the first column alone
(``measure``: the defaults' targets are under 5 s and under 500 MB for each);
the "no limits" column takes minutes, so only this module's command runs it.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

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
        ("50-term x**x grad, png", [terms(50), "--at", "x=0.5", "--transform", "grad",
                                    *out("c.png")]),
        ("6-layer Linear+gelu grad, png", [f"{ROOT / 'mlxref' / 'viz' / 'figures.py'}:DeepMLP",
                                           "--shape", "x=2,4", "--transform", "grad",
                                           *out("d.png")]),
        ("chapter 12 transformer, png", [*transformer(directory), *out("e.png")]),
    ]


def transformer(directory):
    """``mlxref graph`` arguments drawing chapter 12's model on its first batch: a
    factory file in ``directory`` (the chapter's configuration, seed 0), and ``--at x``."""
    examples = ROOT / "tutorials" / "examples"
    sys.path.insert(0, str(examples))
    try:
        import char_lm
    finally:
        sys.path.remove(str(examples))
    text = char_lm.read_text()
    inputs, _ = char_lm.batches(char_lm.Vocabulary(text).encode(text), char_lm.CHAPTER)[0]
    source = os.path.join(directory, "chapter12.py")
    with open(source, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(f"""\
            import sys
            sys.path.insert(0, {str(examples)!r})
            import char_lm


            def transformer():
                libs = char_lm.libraries("mlxref")
                vocab = char_lm.Vocabulary(char_lm.read_text())
                return char_lm.build(libs, len(vocab), char_lm.CHAPTER)[0]
            """))
    return [f"{source}:transformer", "--at", f"x={json.dumps(inputs)}"]


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
