"""Workload: ``mlxref assignment grade`` of an honest submission, three tasks.

The submission is this checkout itself, graded against itself for tasks 1.1,
2.3 and 4.1 (``TASKS``) by ``mlxref assignment grade`` in a child process, as
an instructor or Gradescope runs it: the tests recorded on the reference, their
calls answered in sandboxed children (under bubblewrap where it is installed),
the hidden tests judged in the grader's process and the visible ones replayed,
and every call answered again by the whole submission
(mlxref/course/judge.py). Every task must pass (full points) before a time is
reported. Target: at most ``SECONDS_PER_TASK`` of wall time per task.
"""

import os
import resource
import statistics
import subprocess
import sys
import time

from mlxref.course import sandbox
from mlxref.course.regions import project_root

from . import harness

TASKS = ("1.1", "2.3", "4.1")
SECONDS_PER_TASK = 2.5
REPEATS = 3
QUICK_REPEATS = 1


def grade_once(root):
    """(wall seconds, CPU seconds of the grade and its children) of one grade."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mlxref", "assignment", "grade", "--tasks", ",".join(TASKS),
         str(root)], capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise harness.Mismatch(f"grading the reference did not give full points "
                               f"(exit {done.returncode}):\n{done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def run(quick=False, repeats=None):
    root = project_root()
    repeats = repeats or (QUICK_REPEATS if quick else REPEATS)
    if not quick:
        grade_once(root)  # warm-up: compiled files, the page cache
    times = [grade_once(root) for _ in range(repeats)]
    wall = statistics.median(t[0] for t in times)
    cpu = statistics.median(t[1] for t in times)
    return {"tasks": list(TASKS), "repeats": repeats, "wall": wall, "cpu": cpu,
            "per_task": wall / len(TASKS), "target": SECONDS_PER_TASK,
            "isolated": sandbox.isolation() is None, "cpus": os.cpu_count(),
            "load": os.getloadavg()[0]}


def table(res):
    met = "met" if res["per_task"] <= res["target"] else "**missed**"
    return "\n".join([
        "| tasks | wall | per task | CPU (all processes) | bubblewrap | target |",
        "|---|---:|---:|---:|---|---|",
        f"| {', '.join(res['tasks'])} | {res['wall']:.2f} s | {res['per_task']:.2f} s | "
        f"{res['cpu']:.2f} s | {'yes' if res['isolated'] else 'no'} | "
        f"≤ {res['target']:g} s per task: {met} |",
    ])
