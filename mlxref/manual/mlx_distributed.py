"""Run MLX's distributed documentation and examples, unchanged, on several
processes, with real MLX and with mlxref.

    python -m mlxref.manual.mlx_distributed MLX_GIT_DIR [--ranks 1,2,4] [--only WHAT]

MLX_GIT_DIR is a clone of github.com/ml-explore/mlx (a bare one will do); its
files are read when the command runs. Each run below is made twice in a fresh
scratch folder, once with real MLX and once with mlxref, and compared:

- **The pages' commands** (docs/src/usage/distributed.rst and
  launching_distributed.rst): every ``mlx.launch`` or ``mpirun`` line that
  can run on this machine, on local ranks (``-n N``; not ``--hosts``,
  ``--hostfile``, JACCL or NCCL). The script a command names is the page's
  first program, the "minimal example" the page says its commands run. They
  run as written: ``python`` and ``mlx.launch`` are found on a PATH that
  leads to this interpreter, to ``mlx.launch`` or to ``mlxref.launch`` (with
  ``mlx`` mapped to mlxref, ``mlxref.as_mlx``). Where real MLX 0.32 cannot
  run a command as written, it is run as MLX's page says elsewhere and the
  report says so: a script after ``-- python`` (its launcher runs a bare
  ``script.py`` as a program: "not found"), and ``--backend mpi`` through
  ``mpirun -np N`` (its launcher asks every ``mpirun`` for Open MPI 5's
  ``--output``). What the page shows below a command is compared too.
- **The pages' Python blocks** (those pages, and docs/src/examples/
  data_parallelism.rst, tensor_parallelism.rst): each block as one program on
  2 local ranks, after the imports the pages take for granted (``mx``,
  ``nn``). A block that fails on MLX with a name it never defines, or with a
  placeholder (``model = ...``) it uses, is a fragment and is counted apart.
- **The examples** (examples/python/distributed_data_parallel.py and
  distributed_tensor_parallel.py) on 1, 2 and 4 local ranks.

Ranks print at the same time and a launcher passes their output on as it
comes, so one line can hold parts of two ranks' lines: a command's output is
compared as the multiset of its words (or, where two ranks' writes met
inside a line, of its characters other than blanks). A block or an example prints each
rank's output to its own file (the program itself unchanged), compared rank
by rank. A number given as a rate or a time (``21.86 (it/s)``, ``0.3 s``)
is masked. The last line reads ``mlx-distributed: S same, D different of N
runs (F do not run on MLX here)``.

mlxref's float32 sums and matrix products are formed in double and rounded
once, so a number that measures rounding (the tensor-parallel example's
``Max |sharded - full|``) differs from MLX's; with ``MLXREF_FLOAT32_STEPS=1``
in the environment they follow MLX's float32 steps (README.md, "Where
mlxref differs").

Needs real MLX (the ``metal`` extra); ``--backend mpi`` and ``mpirun`` lines
need Open MPI or MPICH (``make mpi``) and are not run without. Open MPI
refuses to run as root unless told: the runs are given
``OMPI_ALLOW_RUN_AS_ROOT=1`` and ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``.
Read next: tests/manual/test_mlx_distributed.py, and README.md's "Distributed:
several processes" (today's counts).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

from .mlx_docs import code_blocks, read_file

PAGES = ["docs/src/usage/distributed.rst", "docs/src/usage/launching_distributed.rst"]
EXAMPLE_PAGES = ["docs/src/examples/data_parallelism.rst", "docs/src/examples/tensor_parallelism.rst"]
EXAMPLES = ["examples/python/distributed_data_parallel.py", "examples/python/distributed_tensor_parallel.py"]
RANKS = (1, 2, 4)  # the examples' rank counts
BLOCK_RANKS = 2
TIMEOUT = 900  # seconds a run may take (pure Python trains the examples' MLP slowly)

# What the pages' blocks take for granted, as mlx_docs does for ``mx``.
PRELUDE = "import mlx.core as mx\nimport mlx.nn as nn\n"


# --- what runs --------------------------------------------------------------------------


class Run:
    """One thing to run with each library: a command line (``argv``, run in
    the scratch folder with ``files`` written there), or a program on
    ``ranks`` local ranks whose output each rank writes to its own file."""

    def __init__(self, name, argv=None, program=None, ranks=None, files=None, shown=None):
        self.name, self.argv, self.program, self.ranks = name, argv, program, ranks
        self.files = files or {}
        self.shown = shown  # what the page shows below the command, if anything


def launch_commands(block):
    """A shell block's commands and what the page shows after each: ``[(argv,
    shown lines)]``. When any line starts with ``$ ``, those lines are the
    commands; a line ending in a backslash goes on in the next."""
    lines = block["code"][0].splitlines()
    prompted = any(ln.startswith("$ ") for ln in lines)
    commands, continued = [], False
    for ln in lines:
        if continued:
            commands[-1][0] += " " + ln.strip()
        elif prompted and not ln.startswith("$ "):
            if commands:
                commands[-1][1].append(ln)
            continue
        else:
            commands.append([ln[2:] if prompted else ln, []])
        continued = commands[-1][0].endswith("\\")
        commands[-1][0] = commands[-1][0].rstrip("\\")
    return [(argv, shown) for argv, shown in
            ((shlex.split(line, comments=True), shown) for line, shown in commands) if argv]


def why_not_here(argv):
    """Why a command cannot run on this machine, or None when it can."""
    if argv[0] == "mlx.distributed_config":
        return "configures Thunderbolt networks of Macs"
    words = set(argv)
    if words & {"--hosts", "--hostfile"}:
        return "needs the hosts it names"
    if "jaccl" in words or "nccl" in words:
        return "needs a Thunderbolt RDMA mesh or CUDA"
    if argv[0] == "mlx.launch" and local_ranks(argv) is None:
        return "names no local ranks"
    if ("mpi" in words or argv[0] == "mpirun") and shutil.which("mpirun") is None:
        return "needs MPI (make mpi)"
    return None


def local_ranks(argv):
    """The number of local ranks a command asks for (``-n 4``, ``-n4``,
    ``--repeat-hosts 4``, ``-np 4`` for mpirun), as text; None when it names none."""
    for i, word in enumerate(argv):
        if word in ("-n", "--repeat-hosts", "-np") and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("-n") and word[2:].isdigit():
            return word[2:]
    return None


def script_name(argv):
    """The ``.py`` file a command runs (None when it names none)."""
    return next((w for w in reversed(argv) if w.endswith(".py")), None)


def read_pages(git_dir, paths=PAGES + EXAMPLE_PAGES):
    """``[(short name, text)]`` of the pages at ``paths`` in MLX's clone."""
    return [(path.rsplit("/", 1)[1][: -len(".rst")], read_file(git_dir, path)) for path in paths]


def page_runs(pages):
    """The runs of the pages' commands and Python blocks (``pages`` as
    ``read_pages`` gives them), and the commands that cannot run here:
    ``(runs, [(page, command, why)])``."""
    runs, skipped, minimal = [], [], None
    for short, text in pages:
        for n, block in enumerate(code_blocks(text), 1):
            if block["language"] == "python":
                minimal = minimal or block["code"][0]
                runs.append(Run(f"{short} block {n}", program=PRELUDE + block["code"][0],
                                ranks=BLOCK_RANKS))
                continue
            if block["language"] not in ("shell", "bash", ""):
                continue
            for argv, shown in launch_commands(block):
                if argv[0] not in ("mlx.launch", "mpirun", "mlx.distributed_config"):
                    continue
                why = why_not_here(argv)
                if why is not None:
                    skipped.append((short, shlex.join(argv), why))
                    continue
                files = {script_name(argv): minimal} if script_name(argv) else {}
                runs.append(Run(f"{short}: {shlex.join(argv)}", argv=argv, files=files,
                                shown=shown or None))
    return runs, skipped


def example_runs(git_dir, ranks=RANKS, names=None):
    """The examples' runs (those whose file ``names`` lists, default all)."""
    return [Run(f"{path.rsplit('/', 1)[1]} on {n} rank{'s' if n > 1 else ''}",
                program=read_file(git_dir, path), ranks=n)
            for path in EXAMPLES if names is None or path.rsplit("/", 1)[1] in names
            for n in ranks]


# --- how it runs ------------------------------------------------------------------------

# Each rank of a program runs this, with the program's path: its output goes
# to out.RANK (MLX_RANK under a launcher, OMPI_COMM_WORLD_RANK under mpirun),
# an exception as ``Type: message`` after what it printed.
_RANK_RUNNER = """\
import os, runpy, sys
library, program = sys.argv[1], sys.argv[2]
rank = os.environ.get("MLX_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
out = open(f"out.{rank}", "w")
sys.stdout = out
if library == "mlxref":
    from mlxref import as_mlx
    as_mlx.install()
sys.argv = [program]
try:
    runpy.run_path(program, run_name="__main__")
except BaseException as e:
    print(f"{type(e).__name__}: {e}")
finally:
    out.flush()
    os._exit(0)
"""


def _shims(folder, library):
    """``bin/`` with ``python`` and ``mlx.launch`` leading to ``library``."""
    here = os.path.join(folder, "bin")
    os.makedirs(here)
    launcher = shutil.which("mlx.launch", path=os.path.dirname(sys.executable)) or "mlx.launch"
    if library == "mlxref":
        python = f'exec "{sys.executable}" -m mlxref.as_mlx "$@"'
        launch = f'exec "{sys.executable}" -m mlxref.launch --python "{here}/python" "$@"'
    else:
        python = f'exec "{sys.executable}" "$@"'
        launch = f'exec "{launcher}" "$@"'
    for name, line in (("python", python), ("mlx.launch", launch)):
        with open(os.path.join(here, name), "w") as f:
            f.write(f"#!/bin/sh\n{line}\n")
        os.chmod(os.path.join(here, name), 0o755)
    return here


def _environment(bin_dir):
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join(sys.path),
            "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _execute(argv, cwd, env):
    """What ``argv`` writes, stdout and stderr together; every process it
    started is stopped after TIMEOUT."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        out += f"\n<timed out after {TIMEOUT} s>\n"
    return out


# How real MLX 0.32 is made to run a page's command it cannot run as written.
def _as_mlx_runs_it(argv, out):
    """The command MLX runs instead, and why; None when there is none."""
    script = script_name(argv)
    if "--backend" in argv and argv[argv.index("--backend") + 1] == "mpi" and "--output" in out:
        return (["mpirun", "-np", local_ranks(argv), "python", script],
                "MLX's launcher passes mpirun Open MPI 5's --output; run as mpirun -np N python")
    if script and "not found" in out and argv[0] == "mlx.launch" and "--" not in argv:
        i = argv.index(script)
        return (argv[:i] + ["--", "python"] + argv[i:],
                "MLX's launcher runs a bare script as a program (not found); run after -- python")
    return None


def run(item, library):
    """What ``item`` prints with ``library``: ``(output, note)`` — the output
    as one text (a command) or one text per rank (a program)."""
    with tempfile.TemporaryDirectory() as scratch:
        env = _environment(_shims(scratch, library))
        for name, text in item.files.items():
            with open(os.path.join(scratch, name), "w") as f:
                f.write(text)
        if item.argv is not None:
            out = _execute(item.argv, scratch, env)
            instead = _as_mlx_runs_it(item.argv, out) if library == "mlx" else None
            if instead is None:
                return out, None
            out = _execute(instead[0], scratch, env)
            return out, instead[1]
        with open(os.path.join(scratch, "program.py"), "w") as f:
            f.write(item.program)
        with open(os.path.join(scratch, "rank_runner.py"), "w") as f:
            f.write(_RANK_RUNNER)
        command = ["python", "rank_runner.py", library, "program.py"]
        if item.ranks > 1:
            command = ["mlx.launch", "-n", str(item.ranks), "--", sys.executable, *command[1:]]
        out = _execute(command, scratch, env)
        per_rank = []
        for r in range(item.ranks):
            try:
                with open(os.path.join(scratch, f"out.{r}")) as f:
                    per_rank.append(f.read())
            except FileNotFoundError:  # the rank never ran: what the launcher said
                per_rank.append(f"<no output: {out.strip()[-200:]}>")
        return per_rank, None


# --- comparing ---------------------------------------------------------------------------

_TIMES = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?(?=\s*\(?(?:it/s|s|ms|sec|seconds)\b)")


def comparable(text):
    """``text`` with its times and rates masked."""
    return _TIMES.sub("<time>", text)


def same_output(a, b):
    """Whether two launchers' outputs hold the same: the same words, or, where
    the ranks' writes were interleaved inside a line (``0 1array(...)``), the
    same characters other than blanks. (The ranks print at once; any order of
    their writes is one a launcher may pass on.)"""
    a, b = comparable(a), comparable(b)
    return collections.Counter(a.split()) == collections.Counter(b.split()) or \
        collections.Counter("".join(a.split())) == collections.Counter("".join(b.split()))


# What makes a block a fragment: a name it never defines, a placeholder
# (``...``) used as a value, a module not installed, a GPU.
_FRAGMENT = re.compile(r"^(NameError|ModuleNotFoundError|ImportError): .*|.*\bellipsis\b.*"
                       r"|.*without gpu backend.*|.*: No module named .*", re.M)


def compare(item, theirs, ours):
    """``("same" | "different" | "fragment", report lines)``."""
    (real, note), (mine, _) = theirs, ours
    lines = [f"    (MLX: {note})"] if note else []
    real, mine = ([real], [mine]) if item.argv is not None else (real, mine)
    fragment = next((m.group(0) for r in real for m in [_FRAGMENT.search(r)] if m), None)
    if fragment is not None:
        return "fragment", [f"    {fragment.strip()[:90]}"]
    if item.argv is not None:
        same = same_output(real[0], mine[0])
        if item.shown is not None:
            shown = "\n".join(item.shown)
            lines.append(f"    the page shows it: MLX {'yes' if same_output(shown, real[0]) else 'no'},"
                         f" mlxref {'yes' if same_output(shown, mine[0]) else 'no'}")
    else:
        same = [comparable(r) for r in real] == [comparable(m) for m in mine]
    if not same:
        for r, (t, m) in enumerate(zip(real, mine)):
            if comparable(t) != comparable(m):
                lines += [f"    rank {r} MLX:    {ln}" for ln in t.splitlines()[:6]]
                lines += [f"    rank {r} mlxref: {ln}" for ln in m.splitlines()[:6]]
    return ("same" if same else "different"), lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mlxref.manual.mlx_distributed",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", help="a clone of github.com/ml-explore/mlx")
    parser.add_argument("--ranks", default=",".join(map(str, RANKS)),
                        help="the examples' rank counts (default: 1,2,4)")
    parser.add_argument("--only", choices=["pages", "examples"] + [p.rsplit("/", 1)[1] for p in EXAMPLES],
                        help="run only the pages, the examples, or one example")
    args = parser.parse_args(argv)
    try:
        ranks = [int(r) for r in args.ranks.split(",")]
        if not ranks or min(ranks) < 1:
            raise ValueError
    except ValueError:
        parser.error(f"--ranks takes rank counts such as 1,2,4, not {args.ranks!r}")
    try:
        import mlx.core  # noqa: F401  (the reference run needs real MLX)
    except ImportError:
        raise SystemExit("mlx-distributed: needs real MLX: pip install -e '.[metal]'")
    runs, skipped = [], []
    if args.only in (None, "pages"):
        runs, skipped = page_runs(read_pages(args.git_dir))
    if args.only != "pages":
        runs += example_runs(args.git_dir, ranks, None if args.only in (None, "examples") else [args.only])
    counts = collections.Counter()
    for page, command, why in skipped:
        print(f"{page}: {command}: not run here ({why})")
    for item in runs:
        verdict, lines = compare(item, run(item, "mlx"), run(item, "mlxref"))
        counts[verdict] += 1
        print(f"{item.name}: {verdict}", *lines, sep="\n", flush=True)
    same, different, fragments = counts["same"], counts["different"], counts["fragment"]
    print(f"mlx-distributed: {same} same, {different} different of {same + different} runs"
          f" ({fragments} do not run on MLX here; {len(skipped)} commands need other machines)")
    return 0 if different == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
