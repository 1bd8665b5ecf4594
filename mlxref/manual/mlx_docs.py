"""Run the code on MLX's documentation pages, unchanged, on real MLX and on mlxref.

    python -m mlxref.manual.mlx_docs MLX_GIT_DIR [PAGE...]

MLX_GIT_DIR is a git clone of github.com/ml-explore/mlx (a bare one will do);
PAGE names a page under ``docs/src/usage`` (``indexing``, ``numpy``...; default:
the pages of issue 13's list). Nothing of MLX is copied into mlxref: the pages
are read from that clone when the command runs.

Each page is one session, as a reader would type it: every ``.. code-block::``
runs in order in one namespace, in a fresh scratch folder, after the import
every page takes for granted (``import mlx.core as mx``). A block written with
``>>>`` prompts runs statement by statement, showing each expression's value as
the interpreter does; any other block runs as a whole. What a block prints (or
the exception it raises) is recorded twice, once by real MLX and once by mlxref
(``mlx.core`` mapped to ``mlxref.core``), each in its own process, and the two
records are compared block by block. A block that fails on real MLX as well
(a fragment naming a ``model`` it never defines, torch not installed) is not
MLX code that runs, and is counted apart.

Needs real MLX (the ``metal`` extra). The last line reads
``mlx-docs: S same, D different of N blocks that run on MLX (F do not run on MLX here)``.
A block that times itself (``timeit``) is compared with its numbers masked.
MLX seeds its random generator from the clock; the runner seeds it (and
mlxref's) with 0 before each page, so the pages' random numbers compare.

Read next: tests/manual/test_mlx_docs.py, and README.md's "MLX's own tests and documentation"
(today's counts).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap

PAGES = ["indexing", "numpy", "saving_and_loading", "lazy_evaluation", "unified_memory", "function_transforms"]
TIMEOUT = 600  # seconds a block may run (pure Python is slow on MLX's big examples)

_DIRECTIVE = re.compile(r"^(\s*)\.\. code(?:-block)?::\s*(\S*)")


def code_blocks(text):
    """The page's code blocks (``.. code-block::`` and ``.. code::``), in
    order: each a list of statements (``>>>`` style) or one whole program, as
    ``{"prompts": bool, "code": [source...], "language": "python"|"shell"|""...}``."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        i += 1
        if not m:
            continue
        indent, language, body = len(m.group(1)), m.group(2), []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        body = [ln for ln in textwrap.dedent("\n".join(body)).splitlines() if not ln.startswith(":")]
        if any(ln.startswith(">>>") for ln in body):
            statements = []
            for ln in body:
                if ln.startswith(">>>"):
                    statements.append(ln[4:])
                elif ln.startswith("...") and statements:
                    statements[-1] += "\n" + ln[4:]
            blocks.append({"prompts": True, "code": statements, "language": language})
        elif "".join(body).strip():
            blocks.append({"prompts": False, "code": ["\n".join(body).strip("\n")],
                           "language": language})
    return blocks


def read_page(git_dir, page):
    """A page's text (``docs/src/usage/PAGE.rst``) from a clone of MLX's repository."""
    return read_file(git_dir, f"docs/src/usage/{page}.rst")


def read_file(git_dir, path):
    """A file's text from a clone (bare or not) of MLX's repository."""
    if os.path.isfile(os.path.join(git_dir, path)):
        with open(os.path.join(git_dir, path), encoding="utf-8") as f:
            return f.read()
    done = subprocess.run(["git", "-C", git_dir, "show", f"HEAD:{path}"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mlx-docs: no {path} in {git_dir}: {done.stderr.strip()}")
    return done.stdout


class _Timeout(BaseException):  # not an Exception: nothing on the way may catch it
    pass


def _on_alarm(signum, frame):
    raise _Timeout(f"took more than {TIMEOUT} s")


def _run_one(source, mode, namespace):
    """What running ``source`` prints, with an exception as ``Type: message``."""
    out = io.StringIO()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(TIMEOUT)
    try:
        with contextlib.redirect_stdout(out):
            sys.displayhook = lambda value: None if value is None else print(repr(value))
            exec(compile(source, "<doc>", mode), namespace)
    except _Timeout as e:
        out.write(f"<timed out: {e}>\n")
    except BaseException as e:  # the reader sees the error: so do we
        out.write(f"{type(e).__name__}: {e}\n")
    finally:
        signal.alarm(0)
        sys.displayhook = sys.__displayhook__
    return out.getvalue()


def run_blocks(blocks):
    """Each block's output, running them in order in one namespace."""
    namespace = {"__name__": "__main__"}
    exec("import mlx.core as mx", namespace)  # the docs' convention, from the quick start on
    # MLX seeds its generator from the clock: both runs start from one seed,
    # so a page's random numbers can be compared.
    exec("mx.random.seed(0)", namespace)
    return [
        "".join(_run_one(s, "single" if b["prompts"] else "exec", namespace) for s in b["code"])
        for b in blocks
    ]


# The child runs this file as a script: ``-m mlxref.manual.mlx_docs`` would import
# the manual's package, SymPy with it, into the run being compared. Under ``-c`` the
# scratch folder is first on sys.path, as it is under ``-m``.
_CHILD = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"


def _run_in_process(library, blocks):
    """``run_blocks`` in a fresh interpreter using ``library`` ("mlx" or "mlxref"), in a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, os.path.abspath(__file__), "--child", library],
            input=json.dumps(blocks), capture_output=True, text=True, cwd=scratch,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    if done.returncode != 0:
        raise SystemExit(f"mlx-docs: the {library} run stopped: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


# What makes a block not MLX code that runs here: a fragment of a page (a name
# it never defines), a library that is not installed, or a GPU.
_NOT_RUNNABLE = re.compile(r"^(NameError|ModuleNotFoundError|ImportError): |without gpu backend", re.M)


def _comparable(block, output):
    """The output to compare: a block that times itself prints different numbers on every run."""
    if any("timeit" in s or "time.perf_counter" in s for s in block["code"]):
        return re.sub(r"\d+(\.\d+)?(e-?\d+)?", "<number>", output)
    return output


def compare(page, text):
    """(report lines, same, different, fail on MLX too) for one page."""
    blocks = code_blocks(text)
    real, ours = _run_in_process("mlx", blocks), _run_in_process("mlxref", blocks)
    lines, same, different, mlx_fails = [f"== {page}: {len(blocks)} blocks"], 0, 0, 0
    for n, (block, theirs, mine) in enumerate(zip(blocks, real, ours), 1):
        first = block["code"][0].splitlines()[0][:60]
        if _NOT_RUNNABLE.search(theirs):
            mlx_fails += 1
            lines.append(f"  block {n} does not run on MLX here ({theirs.strip().splitlines()[-1][:70]}): {first}")
        elif _comparable(block, theirs) == _comparable(block, mine):
            same += 1
        else:
            different += 1
            lines.append(f"  block {n} differs: {first}")
            lines += [f"    MLX:    {ln}" for ln in theirs.splitlines()[:6]]
            lines += [f"    mlxref: {ln}" for ln in mine.splitlines()[:6]]
    return lines, same, different, mlx_fails


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mlxref.manual.mlx_docs", description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", nargs="?", help="a clone of github.com/ml-explore/mlx")
    parser.add_argument("pages", nargs="*", default=PAGES)
    parser.add_argument("--child", choices=["mlx", "mlxref"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        if args.child == "mlxref":
            from mlxref import as_mlx  # (absolute: the child runs this file as a script)

            as_mlx.install()
        json.dump(run_blocks(json.load(sys.stdin)), sys.stdout)
        return 0
    if args.git_dir is None:
        parser.error("give MLX_GIT_DIR, a clone of github.com/ml-explore/mlx")
    try:
        import mlx.core  # noqa: F401  (the reference run needs real MLX)
    except ImportError:
        raise SystemExit("mlx-docs: needs real MLX: pip install -e '.[metal]'")
    totals = [0, 0, 0]
    for page in args.pages:
        lines, *counts = compare(page, read_page(args.git_dir, page))
        print("\n".join(lines))
        totals = [t + c for t, c in zip(totals, counts)]
    same, different, mlx_fails = totals
    print(f"mlx-docs: {same} same, {different} different of {same + different} blocks"
          f" that run on MLX ({mlx_fails} do not run on MLX here)")
    return 0 if different == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
