"""The ``mlxref`` command line (``mlxref`` and ``python -m mlxref`` run ``main``).

One function per subcommand (``_cmd_<name>(args) -> int``), all registered in
``build_parser()``.  ``main`` turns a ``ValueError``/``TypeError`` caused by the
user's input into one line on stderr and exit status 2, like argparse does for
bad arguments, and Ctrl-C into one line and exit status 130. ``mlxref graph``
reads its formulas with ``expr.py``, beside this file; ``mlxref assignment``
calls the course tooling (mlxref/course/).

Read next: ``expr.py`` (the formula language of ``mlxref graph``).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
import zlib

import mlxref.core as mx
from mlxref import nn, viz
from mlxref.course import assignment, grader, leaks, sandbox
from mlxref.viz import GraphvizMissing, figures

from . import expr

PROG = "mlxref"


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit status 2), like every other user error."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def _cmd_demo(args: argparse.Namespace) -> int:
    """The seed example: f(x) = sin(x) * exp(x), its derivative, and its drawings."""
    x = mx.array(args.x)
    print(f"f(x) = sin(x) * exp(x) at x = {args.x}")
    print(f"f(x)  = {figures.seed(x)!r}")
    print(f"f'(x) = {mx.grad(figures.seed)(x)!r}   (mx.grad(f)(x); analytically exp(x) * (sin(x) + cos(x)))")
    if args.out is None:
        return 0
    try:
        paths = figures.write_figures(args.out, ["seed_graph", "seed_vjp", "seed_jvp"])
    except GraphvizMissing as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print("drawings: " + " ".join(str(p) for p in paths))
    return 0


def _cmd_diagrams(args: argparse.Namespace) -> int:
    """Regenerate the canonical figures (.dot, .svg, and the HTML steppers)."""
    try:
        paths = figures.write_figures(args.out)
    except GraphvizMissing as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(paths)} files to {args.out}")
    return 0


def _cmd_check_rules(args: argparse.Namespace) -> int:
    """Check every primitive's (or the NAMEd ones') rules against SymPy; exit 1 on any
    failure, each failure saying which rule failed on which case, expected and received."""
    from mlxref import (
        symbolic,  # imports SymPy (half a second): only this command needs it
    )

    chosen = None
    if args.names:
        known = {p.__name__: p for p in symbolic.all_primitives()}
        lower = {name.lower(): name for name in known}
        chosen = []
        for name in args.names:
            found = known.get(name) or known.get(lower.get(name.lower(), ""))
            if found is None:
                close = difflib.get_close_matches(name, list(known), n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise ValueError(f"check-rules: no primitive named {name!r}{hint}; "
                                 "`mlxref check-rules` lists them all")
            chosen.append(found)
    results = symbolic.check_all(seed=args.seed, primitives=chosen)
    print(symbolic.format_table(results))
    failed = [r for r in results if not r.ok]
    print()
    if failed:
        for r in failed:
            print(f"{r.primitive} FAILED:")
            # one line per failing case (check_all starts each with "case K (...)")
            cases = (r.detail or "(no detail)").replace("; case ", "\ncase ")
            for line in cases.splitlines():
                print("  " + line)
        print()
        names = ", ".join(r.primitive for r in failed)
        print(f"{len(failed)} of {len(results)} primitives FAILED: {names}")
        return 1
    print(f"all {len(results)} primitives pass")
    return 0


# --- mlxref assignment -------------------------------------------------------------------


def _cmd_assignment(args: argparse.Namespace) -> int:
    """Course assignments: list the tasks, make a student copy, grade a copy."""
    if args.action == "list":
        print("\n".join(assignment.list_lines()))
        return 0
    if args.action == "make" and args.check_leaks:
        if args.tasks is not None:
            raise ValueError("--check-leaks checks the copy in --out, which exists; "
                             "drop --tasks (make checks what it writes anyway)")
        status = _report_leaks(args.out, lambda: leaks.refuse_leaks(args.out))
        if status == 0:
            print(f"no leaks found in {args.out}")
        return status
    if args.action == "make":
        if args.tasks is None:
            raise ValueError("make needs --tasks IDS (or --check-leaks to check a copy)")
        result = []
        status = _report_leaks(args.out, lambda: result.append(assignment.make(
            args.tasks, args.out, classroom=args.classroom,
            check_leaks=not args.no_check_leaks)))
        if status:
            return status
        ((chosen, stubbed),) = result
        print(f"wrote a student copy to {args.out}, with {len(chosen)} task(s) to implement:")
        for region in stubbed:
            print(f"  {region.task}  {region.place}")
        for task_id, needs in assignment.waiting(chosen).items():
            print(f"note: task {task_id}'s tests also need {', '.join(needs)}: "
                  f"they fail in this copy until {', '.join(needs)} is done")
        print(f"the student's instructions: {os.path.join(args.out, 'ASSIGNMENT.md')}")
        if args.classroom:
            print("GitHub Classroom's autograding: "
                  f"{os.path.join(args.out, '.github', 'classroom', 'autograding.json')}")
        return 0
    if args.memory is not None and args.memory <= 0:
        raise ValueError("[assignment grade] --memory must be a positive number of MB.")
    results, collect_errors = grader.grade(
        args.dir, args.tasks, args.timeout, reference=args.reference, jobs=args.jobs,
        memory=grader.MEMORY if args.memory is None else int(args.memory * (1 << 20)),
        exam=args.exam,
    )
    unisolated = sandbox.isolation()
    if unisolated is not None:
        print(f"[assignment grade] not isolated: {unisolated}; graded code ran with the "
              "grader's own checks only (fine for a student checking their work, not for "
              "marks: use --exam where it matters)", file=sys.stderr)
    if args.gradescope:
        with open(args.gradescope, "w", encoding="utf-8") as f:
            json.dump(grader.gradescope(results, args.hidden_visibility), f, indent=2)
    if args.json:
        print(grader.grades_json(results))
    else:
        print(grader.format_grades(args.dir, results, collect_errors))
    return 0 if all(r["passed"] for r in results.values()) else 1


def _report_leaks(copy, run):
    """Run ``run()``; on ``leaks.Leaks``, print one line per leak and return 2."""
    try:
        run()
    except leaks.Leaks as exc:
        print(f"{PROG}: error: {copy} leaks answers ({len(exc.findings)}):", file=sys.stderr)
        for finding in exc.findings:
            print(f"  {finding}", file=sys.stderr)
        return 2
    return 0


# --- mlxref graph ------------------------------------------------------------------------

GRAPH_TRANSFORMS = ("graph", "vjp", "jvp", "grad", "value_and_grad", "vmap", "checkpoint",
                    "compile")
GRAPH_FORMATS = ("text", "dot", "svg", "png", "pdf", "html")
# -o's suffix, when --format is not given: each format's own, and these two.
_SUFFIXES = {**{f: f for f in GRAPH_FORMATS}, "txt": "text", "gv": "dot"}
_NEEDS_FILE = ("svg", "png", "pdf", "html")  # binary, or a whole page: only with -o


class _FunctionFailed(Exception):
    """The user's function (or formula) raised while viz traced it."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


def _cmd_graph(args: argparse.Namespace) -> int:
    """Draw the graph of a formula or of FILE.py:FUNC, or of one transform of it."""
    output_format = _graph_format(args)
    _graph_check_options(args)
    writer = _graph_writer(args)
    if args.ranks is not None and writer is None:  # we are the launcher, not a rank
        return _graph_on_ranks(args)
    function, parameters = _graph_target(args.target)  # refuses a bad formula before anything runs
    values = _graph_values(args, parameters)
    names = list(values)
    inputs = list(values.values())
    model = getattr(function, "model", None)  # a model factory's forward (_graph_model)
    if model is not None and args.tangent and not args.wrt:
        raise ValueError("--tangent with a model goes with --wrt (its parameters' tangents are ones)")

    options = {"transform": args.transform, "collapse": args.collapse,
               # a model's parameters: inputs named by their path alone
               "names": names + [""] if model is not None else names}
    options.update(_graph_look(args))
    if args.expand:
        options["expand"] = list(args.expand)
    if args.max_nodes is not None:
        options["max_nodes"] = args.max_nodes
    argnums = _graph_argnums(args.wrt, names) if args.wrt else None
    if argnums is not None:
        options["argnums"] = argnums[0] if len(argnums) == 1 else tuple(argnums)
    if args.cotangent is not None:
        # As a Python value, so that viz gives it the output's dtype.
        options["cotangents"] = [_graph_value(args.cotangent, "--cotangent").tolist()]
    if args.tangent:
        options["tangents"] = _graph_tangents(args.tangent, names, argnums)
    if args.in_axes is not None:
        options["in_axes"] = _graph_in_axes(args.in_axes)

    def traced(*arrays):
        try:
            return function(*arrays)
        except (Exception, SystemExit) as exc:  # sys.exit() in the function: one line too
            raise _FunctionFailed(exc) from exc

    traced.__name__ = traced.__qualname__ = getattr(function, "__name__", "f")
    limits = {"max_work": args.max_work, "timeout": args.timeout, "max_pixels": args.max_pixels,
              "max_nodes": args.max_nodes}
    if model is not None:
        inputs.append(model)  # its parameters: inputs named by their path
    # Shrinking to fit a limit is said on stderr, one line each, as is drawing an
    # array that was evaluated already; refusals are errors.
    with viz.limits(**limits), warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", viz.LimitWarning)
        warnings.simplefilter("always", viz.DrawingWarning)
        try:
            return _graph_draw(args, traced, inputs, options, output_format,
                               write=writer in (None, True))
        finally:
            if writer is None and _uses_distributed(args.target):
                print(f"{PROG}: note: {args.target.rpartition(':')[0]} uses mx.distributed, "
                      "but this process is a group of one, so its "
                      "collectives returned their input and built no node (as in MLX); give "
                      "--ranks N to run the function on N processes and draw them",
                      file=sys.stderr)
            for warning in said:
                if issubclass(warning.category, viz.LimitWarning):
                    print(f"{PROG}: note: {_one_line(warning.message)}", file=sys.stderr)
                elif issubclass(warning.category, viz.DrawingWarning):
                    print(f"{PROG}: warning: {warning.message}", file=sys.stderr)
                else:
                    warnings.showwarning(warning.message, warning.category, warning.filename,
                                         warning.lineno)


def _graph_draw(args, traced, inputs, options, output_format, write=True):
    """Trace, then write the drawing in ``output_format`` (unless not ``write``:
    a rank of ``--ranks`` other than the one drawn); the exit status."""
    try:
        drawing = viz.trace(traced, inputs, **options)
    except _FunctionFailed as failed:
        exc = failed.exc
        if isinstance(exc, (ValueError, TypeError, IndexError, RuntimeError)):
            raise ValueError(_one_line(exc)) from None  # mlxref's (MLX's) own message
        who = traced.__name__ if args.target.endswith(f":{traced.__name__}") else "the expression"
        if isinstance(exc, SystemExit):
            raise ValueError(f"{who} called sys.exit({exc.code!r}); mlxref graph needs it to "
                             "return") from None
        raise ValueError(f"{who} raised {type(exc).__name__}: {_one_line(exc)}") from None
    except (IndexError, RuntimeError, ArithmeticError) as exc:
        raise ValueError(_one_line(exc)) from None
    if not write:
        return 0

    written = None  # where the DOT text went, if Graphviz turns out to be missing
    try:
        if output_format in ("text", "dot"):
            text = drawing.to_text() if output_format == "text" else drawing.to_dot()
            if not text.endswith("\n"):
                text += "\n"
            if args.output in (None, "-"):
                sys.stdout.write(text)
            else:
                with open(args.output, "w", encoding="utf-8") as file:
                    file.write(text)
        else:
            written = os.path.splitext(args.output)[0] + ".dot"
            drawing.render(args.output, output_format)
        if args.steps:
            written = os.path.join(args.steps, "000.dot")
            drawing.write_steps(args.steps)
    except viz.GraphvizMissing as exc:
        message = _one_line(exc)
        if not message.startswith(f"{PROG}:"):
            message = f"{PROG}: error: {message}"
        print(f"{message} (the DOT text is in {written}{', ...' if args.steps else ''})",
              file=sys.stderr)
        return 2
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        raise ValueError(f"cannot write{where}: {exc.strerror or exc}") from None
    except RuntimeError as exc:  # dot itself failed
        raise ValueError(_one_line(exc)) from None
    return 0


def _one_line(exc):
    return " ".join(str(exc).split())


# --- mlxref graph --ranks N: the function on N processes, one rank's drawing -------------

# Set by ``--ranks`` for the ranks it starts: the rank whose drawing is written.
_DRAWN_RANK = "MLXREF_GRAPH_DRAWN_RANK"
MAX_RANKS = 8
_ERROR = re.compile(r"\[rank (\d+)\] " + PROG + r": error: (.*)")
_EXITED = re.compile(r"Node with rank (\d+) exited with code (-?\d+)")


def _graph_writer(args):
    """None in the process the user started; in a rank that ``--ranks`` started,
    True for the rank whose drawing is written and False for the others."""
    drawn = os.environ.get(_DRAWN_RANK)
    if drawn is None or args.ranks is None:
        return None
    return os.environ.get("MLX_RANK") == drawn


def _uses_distributed(target):
    """Whether FILE.py of FILE.py:FUNC mentions mx.distributed (an expression cannot)."""
    path = target.rpartition(":")[0]
    if not path.endswith(".py"):
        return False
    try:
        with open(path, encoding="utf-8") as file:
            return "distributed" in file.read()
    except (OSError, UnicodeDecodeError):
        return False


def _graph_on_ranks(args):
    """Run this same ``mlxref graph`` on ``--ranks`` local processes through
    ``mlxref.launch`` and pass on rank ``--rank``'s drawing and notes; any
    failure is one line, the first rank's own error before a ring error it caused."""
    if not 2 <= args.ranks <= MAX_RANKS:
        raise ValueError(f"--ranks must be from 2 to {MAX_RANKS}, not {args.ranks}")
    if not 0 <= args.rank < args.ranks:
        raise ValueError(f"--rank must be from 0 to {args.ranks - 1}, not {args.rank}")
    if not re.fullmatch(r".+\.py:[^:]*", args.target):
        raise ValueError("--ranks draws FILE.py:FUNC, a function that calls mx.distributed; "
                         "an expression has no collectives")
    command = [sys.executable, "-m", "mlxref.launch", "--prefix", "-n", str(args.ranks),
               sys.executable, "-m", "mlxref", *args.argv]
    env = {**os.environ, _DRAWN_RANK: str(args.rank)}
    run = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    tag = f"[rank {args.rank}] ".encode()
    for line in run.stdout.splitlines(keepends=True):
        if line.startswith(tag):
            sys.stdout.buffer.write(line[len(tag):])
    sys.stdout.flush()
    errors, exits = {}, {}
    for line in run.stderr.decode("utf-8", "replace").splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        found = _ERROR.fullmatch(line)
        if found:
            errors.setdefault(int(found[1]), found[2])
            continue
        found = _EXITED.search(line)
        if found:
            exits[int(found[1])] = int(found[2])
        elif line.startswith(f"[rank {args.rank}] {PROG}: "):  # the drawn rank's notes
            print(line[len(f"[rank {args.rank}] "):], file=sys.stderr)
    if not errors and not exits and run.returncode == 0:
        return 0
    own = [r for r in sorted(errors) if not errors[r].startswith("[ring]")]
    if own or errors:
        rank = (own or sorted(errors))[0]
        raise ValueError(f"rank {rank}: {errors[rank]}")
    rank, code = min(exits.items()) if exits else (None, run.returncode)
    raise ValueError(f"rank {rank} exited with code {code}" if rank is not None
                     else f"mlxref.launch exited with code {code}")


def _graph_format(args):
    """--format, else the suffix of -o when it names a format, else text."""
    output_format = args.format
    if output_format is None and args.output not in (None, "-"):
        suffix = os.path.splitext(args.output)[1].lstrip(".").lower()
        output_format = _SUFFIXES.get(suffix)
        if output_format is None:
            known = ", ".join("." + s for s in _SUFFIXES)
            what = f"has an unknown suffix '.{suffix}'" if suffix else "has no suffix"
            raise ValueError(f"-o {args.output} {what}: use one of {known}, or give --format")
    output_format = output_format or "text"
    if output_format in _NEEDS_FILE and args.output in (None, "-"):
        raise ValueError(f"--format {output_format} needs an output file: add -o FILE.{output_format}")
    return output_format


def _graph_check_options(args):
    """Each transform's own options go with that transform only."""
    own = [
        ("--wrt", args.wrt, ("grad", "value_and_grad", "vjp", "jvp", "checkpoint")),
        ("--cotangent", args.cotangent, ("vjp",)),
        ("--tangent", args.tangent, ("jvp",)),
        ("--in-axes", args.in_axes, ("vmap",)),
    ]
    for option, given, transforms in own:
        if given and args.transform not in transforms:
            allowed = " and ".join(transforms) if len(transforms) < 3 else (
                ", ".join(transforms[:-1]) + " or " + transforms[-1])
            raise ValueError(f"{option} goes with --transform {allowed}, not {args.transform}")
    if args.max_nodes is not None and args.max_nodes < 1:
        raise ValueError(f"--max-nodes must be at least 1, not {args.max_nodes}")
    for option, value in (("--max-work", args.max_work), ("--timeout", args.timeout),
                          ("--max-pixels", args.max_pixels)):
        if value is not None and not value > 0:  # (not >: nan too)
            raise ValueError(f"{option} must be positive, not {value}")


def _graph_look(args):
    """--values, --rankdir, --size and --dpi as viz.trace's options, each checked."""
    look = {"rankdir": args.rankdir.upper()}
    if look["rankdir"] not in ("TB", "LR"):
        raise ValueError(f"--rankdir must be TB or LR, not {args.rankdir!r}")
    numbers = {}
    for option, text, kind in (("--values", args.values, int), ("--dpi", args.dpi, float)):
        if text is None:
            continue
        try:
            numbers[option] = kind(text)
        except ValueError:
            numbers[option] = None
        if numbers[option] is None or not 0 < numbers[option] < float("inf"):
            raise ValueError(f"{option} must be a {'whole ' if kind is int else ''}number "
                             f"above 0, not {text!r}")
    if "--values" in numbers:
        look["values"] = numbers["--values"]
    if "--dpi" in numbers:
        look["dpi"] = numbers["--dpi"]
    if args.size is not None:
        try:
            size = tuple(float(v) for v in args.size.split(","))
        except ValueError:
            size = ()
        if len(size) != 2 or not all(0 < v < float("inf") for v in size):
            raise ValueError(f"--size must be W,H in inches, both above 0, not {args.size!r}")
        look["size"] = size
    return look


def _graph_target(target):
    """The function to draw and its parameters: [(name, has_default)], in order."""
    match = re.fullmatch(r"(?P<file>.+\.py):(?P<function>[^:]*)", target)
    if match:
        return _graph_load_function(match["file"], match["function"])
    if target.endswith(".py"):
        raise ValueError(f"name the function in {target} to draw, as in {target}:f")
    expression = expr.parse(target)
    if not expression.variables:
        raise ValueError("the expression has no variables: give it one, as in sin(x) --at x=0.5")
    return expression, [(name, False) for name in expression.variables]


def _package_of(path):
    """For a file inside a package (folders with ``__init__.py``): the folder
    above the package and the file's dotted module name; else (None, None)."""
    folder, module = os.path.split(os.path.abspath(path))
    parts = [os.path.splitext(module)[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    if len(parts) == 1 or not all(p.isidentifier() for p in parts):
        return None, None
    return folder, ".".join(parts)


def _graph_load_function(path, name):
    """Import the file at ``path`` and take its function ``name``."""
    if not name.isidentifier():
        raise ValueError(f"{path}:{name}: {name!r} is not a function name")
    if not os.path.isfile(path):
        raise ValueError(f"no such file: {path}")
    root, dotted = _package_of(path)
    folder = root if dotted else os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)  # as when the file runs as a script: its neighbours import
    try:
        if dotted:  # a module of a package: imported as one, so its relative imports work
            module = importlib.import_module(dotted)
        else:
            module_name = "_mlxref_graph_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise ValueError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
    except ValueError:
        raise
    except SyntaxError as exc:
        raise ValueError(f"cannot import {path}: SyntaxError: {exc.msg} (line {exc.lineno})") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the file raises, one line
        raise ValueError(f"cannot import {path}: {type(exc).__name__}: {_one_line(exc)}") from None
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    function = getattr(module, name, None)
    if function is None:
        raise ValueError(f"{path} has no function {name!r}")
    if not callable(function):
        raise ValueError(f"{path}:{name} is not a function")
    if inspect.isclass(function):
        if not issubclass(function, nn.Module):
            raise ValueError(f"{path}:{name} is a class but not an nn.Module")
        return _graph_model(f"{path}:{name}", function)
    parameters = _graph_parameters(function, f"{path}:{name}", name)
    if not any(has_default is False for _, has_default in parameters):  # maybe a model factory
        model = _graph_model(f"{path}:{name}", function, required=not parameters)
        if model is not None:
            return model
    if not parameters:
        raise ValueError(f"{path}:{name} takes no parameters and returns no nn.Module")
    return function, parameters


def _graph_parameters(function, where, name):
    """[(name, has_default)] of ``function``'s positional parameters."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise ValueError(f"cannot read the parameters of {where}") from None
    parameters = []
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            raise ValueError(f"{name} takes *{parameter.name}; mlxref graph needs named parameters")
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            parameters.append((parameter.name, parameter.default is not parameter.empty))
        elif parameter.kind is parameter.KEYWORD_ONLY and parameter.default is parameter.empty:
            raise ValueError(f"{name} has a keyword-only parameter {parameter.name!r} with no default")
    return parameters


def _graph_model(where, factory, required=True):
    """A model factory (an nn.Module class, or a function of no required
    arguments that returns one) as the function to draw: the model's forward,
    whose parameters (``x``...) take --at/--shape, and the model itself as a
    last argument, whose parameters viz draws as inputs named by their path.
    The model is built once, after ``mx.random.seed(0)``: the same weights on
    every run. Not ``required``: ``factory`` may be an ordinary function with
    defaults; None unless it returns a model without raising."""
    mx.random.seed(0)
    try:
        model = factory()
    except Exception as exc:  # noqa: BLE001 - whatever the factory raises, one line
        if required:
            raise ValueError(f"{where} raised {type(exc).__name__}: {_one_line(exc)}") from None
        return None
    if not isinstance(model, nn.Module):
        return None
    name = where.rsplit(":", 1)[1]
    parameters = _graph_parameters(model.__call__, f"the forward of {where}", name)
    if not parameters:
        raise ValueError(f"the forward of {where} takes no inputs")

    def forward(*arrays):
        return arrays[-1](*arrays[:-1])

    forward.__name__ = forward.__qualname__ = name
    forward.model = model
    return forward, parameters


def _graph_split(text, option):
    """``NAME=VALUE`` -> (NAME, VALUE)."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals or not name.isidentifier():
        raise ValueError(f"{option} takes NAME=VALUE, not {text!r}")
    return name, value


def _graph_value(text, option):
    try:
        return expr.parse_value(text)
    except expr.ExpressionError as exc:
        raise ValueError(f"{option}: {exc}") from None


def _graph_values(args, parameters):
    """{name: array} for the inputs, in parameter order, from --at and --shape."""
    known = [name for name, _ in parameters]
    given = {}
    for option, texts in (("--at", args.at), ("--shape", args.shape)):
        for text in texts:
            name, value = _graph_split(text, option)
            if name not in known:
                raise ValueError(
                    f"{option} {name}=...: there is no input {name!r} (the inputs are "
                    f"{', '.join(known)})"
                )
            if name in given:
                raise ValueError(f"{name} is given twice (--at and --shape, or twice)")
            if option == "--at":
                given[name] = _graph_value(value, f"--at {name}")
            else:
                try:
                    shape = expr.parse_shape(value)
                except expr.ExpressionError as exc:
                    raise ValueError(f"--shape {name}: {exc}") from None
                # Seeded by the name: the same values on every run, whatever the other inputs.
                seed = mx.random.key(zlib.crc32(name.encode()))
                given[name] = mx.random.normal(shape, key=seed)
    values = {}
    for position, (name, has_default) in enumerate(parameters):
        if name in given:
            values[name] = given[name]
        elif has_default and not any(later in given for later, _ in parameters[position:]):
            break  # this and the rest keep their defaults
        else:
            raise ValueError(f"no value for {name!r}: give --at {name}=VALUE or --shape {name}=2,3")
    return values


def _graph_argnums(wrt, names):
    argnums = []
    for name in wrt:
        if name not in names:
            raise ValueError(f"--wrt {name}: there is no input {name!r} (the inputs are {', '.join(names)})")
        if names.index(name) in argnums:
            raise ValueError(f"--wrt {name} is given twice")
        argnums.append(names.index(name))
    return sorted(argnums)


def _graph_tangents(texts, names, argnums):
    """One tangent per differentiated input; viz's default, ones, for those without --tangent."""
    tangents = {}
    for text in texts:
        name, value = _graph_split(text, "--tangent")
        if name not in names:
            raise ValueError(
                f"--tangent {name}=...: there is no input {name!r} (the inputs are {', '.join(names)})"
            )
        if argnums is not None and names.index(name) not in argnums:
            raise ValueError(f"--tangent {name}=...: {name} is not one of the --wrt inputs")
        # As a Python value: viz makes it an array of the input's dtype (and fills
        # the input's shape with a single number).
        tangents[name] = _graph_value(value, f"--tangent {name}").tolist()
    wrt = range(len(names)) if argnums is None else argnums
    return [tangents.get(names[i], 1) for i in wrt]


def _graph_in_axes(text):
    """--in-axes: ``0``, ``None``, ``0,None``, ``(0, None)``: ints and None, nested in tuples."""
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = text

    def axes(item):
        if item is None or (isinstance(item, int) and not isinstance(item, bool)):
            return item
        if isinstance(item, (list, tuple)):
            return tuple(axes(element) for element in item)
        raise ValueError(f"--in-axes takes ints and None, as in 0 or 0,None; not {text!r}")

    return axes(value)


# --- mlxref ring-allreduce --------------------------------------------------------------

RING_DTYPES = ("float32", "float16", "bfloat16", "float64", "int32", "int64")
RING_FORMATS = ("text", "dot", "svg", "png", "pdf")


def _cmd_ring_allreduce(args: argparse.Namespace) -> int:
    """The ring all-reduce's steps on N ranks, as text or a Graphviz figure."""
    output_format = args.format
    if output_format is None and args.output not in (None, "-"):
        suffix = os.path.splitext(args.output)[1].lstrip(".").lower()
        output_format = {"txt": "text", "gv": "dot"}.get(suffix, suffix)
        if output_format not in RING_FORMATS:
            raise ValueError(f"-o {args.output}: use a suffix .txt, .dot, .svg, .png or "
                             ".pdf, or give --format")
    output_format = output_format or "text"
    if output_format in ("svg", "png", "pdf") and args.output in (None, "-"):
        raise ValueError(f"--format {output_format} needs an output file: add -o "
                         f"FILE.{output_format}")
    values = None
    if args.values is not None:
        try:
            values = ast.literal_eval(args.values)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            values = None
        if not (isinstance(values, (list, tuple)) and all(
                isinstance(v, (list, tuple)) and all(
                    isinstance(e, (int, float)) and not isinstance(e, bool) for e in v)
                for v in values)):
            raise ValueError(f"--values takes one list of numbers per rank, as in "
                             f"'[[1, 2], [3, 4]]'; not {args.values!r}")
    try:
        figure = viz.ring_allreduce(args.ranks, values=values, size=args.size,
                                    dtype=getattr(mx, args.dtype), op=args.op, split=args.split)
    except ValueError as exc:  # viz's message names its function: the options here
        raise ValueError(re.sub(r"^\[viz\.ring_allreduce\] ", "", str(exc))) from None
    except RuntimeError as exc:
        raise ValueError(_one_line(exc)) from None
    if output_format in ("text", "dot"):
        text = figure.to_text() if output_format == "text" else figure.to_dot() + "\n"
        if args.output in (None, "-"):
            sys.stdout.write(text)
            return 0
    try:
        if output_format in ("text", "dot"):
            with open(args.output, "w", encoding="utf-8") as file:
                file.write(text)
        else:
            figure.render(args.output, output_format)
    except viz.GraphvizMissing as exc:
        print(f"{PROG}: error: {_one_line(exc)} (the DOT text is in "
              f"{os.path.splitext(args.output)[0]}.dot)", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        raise ValueError(f"cannot write{where}: {exc.strerror or exc}") from None
    return 0


def _graph_epilog():
    functions = textwrap.fill(", ".join(expr.OPS), width=78, initial_indent="  ",
                              subsequent_indent="  ")
    return (
        "An expression may use its variables, numbers, lists and tuples, + - * / // % ** @,\n"
        "unary -, one comparison at a time (== != < <= > >=), indexing with int literals,\n"
        "slices, None and ..., keyword arguments with literal values, the dtypes\n"
        f"{', '.join(expr.DTYPES)}, and calls of these mlxref ops:\n{functions}\n"
        "Anything else (attribute access, lambdas, strings, other functions...) is refused\n"
        "before anything runs. An expression that starts with '-' goes after '--', as in\n"
        "mlxref graph --at x=1 -- '-x'.\n\n"
        "FILE.py:NAME may name a model factory: an nn.Module class, or a function that takes\n"
        "no arguments (or only ones with defaults) and returns an nn.Module. The model is built\n"
        "once, after mx.random.seed(0), and the drawn function is its forward, model(x):\n"
        "--at/--shape give the inputs of its __call__, and its parameters are further inputs\n"
        "named by their path in model.parameters() (layers.0.weight), holding their initial\n"
        "values. --wrt names the forward's inputs; vjp and jvp without --wrt also\n"
        "differentiate the parameters. A model is drawn by module: a box per call of a\n"
        "submodule (layers.3) or of an nn function (gelu#1), each folded into one node\n"
        "when the drawing is over --max-nodes (--expand PATH keeps one open).\n\n"
        "examples:\n"
        "  mlxref graph 'sin(x) * exp(x)' --at x=0.5 --transform vjp\n"
        "  mlxref graph 'sum(tanh(x @ w))' --shape x=2,3 --shape w=3,1 --transform grad --wrt w\n"
        "  mlxref graph tutorials/examples/model.py:loss --shape w=3,1 --shape x=8,3 --shape y=8,1\n"
        "  mlxref graph tutorials/examples/model.py:mlp --shape x=4,2 --transform vjp\n"
        "  mlxref graph mlxref/viz/figures.py:DeepMLP --shape x=2,4 --transform grad "
        "--expand layers.3 -o deep.png"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog=PROG,
        description="mlxref: a pure-Python reference implementation of MLX's autodiff engine.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    sub.required = True

    demo = sub.add_parser(
        "demo", help="the seed example d/dx sin(x)*exp(x): values, and its drawings with --out"
    )
    demo.add_argument(
        "--x", type=float, default=0.5, help="the point to evaluate at (default: 0.5)"
    )
    demo.add_argument(
        "--out", metavar="DIR", help="also draw the graph, vjp and jvp walks (SVG, HTML) into DIR"
    )
    demo.set_defaults(func=_cmd_demo)

    diagrams = sub.add_parser("diagrams", help="regenerate the canonical figures")
    diagrams.add_argument("-o", "--out", metavar="DIR", default="diagrams")
    diagrams.set_defaults(func=_cmd_diagrams)

    check = sub.add_parser(
        "check-rules", help="check every primitive's (or NAME's) vjp, jvp and vmap rules "
        "exactly with SymPy",
        description="Check the rules of every primitive, or of the primitives NAMEd (class "
        "names: Sin, Multiply, Reduce...), exactly with SymPy. A failure says which rule "
        "(forward, vjp, jvp, vmap) failed on which case, with the expected and received values.",
    )
    check.add_argument("names", nargs="*", metavar="NAME",
                       help="a primitive's class name (default: every primitive)")
    check.add_argument("--seed", type=int, default=0, help="seed for the random points")
    check.set_defaults(func=_cmd_check_rules)

    graph = sub.add_parser(
        "graph",
        help="draw the graph of an expression or a function, or of a transform of it",
        description="Draw the graph of EXPR (a formula such as 'sin(x) * exp(x)') or of the\n"
        "function FUNC in FILE.py, or the walk of one of its transforms. The inputs are the\n"
        "formula's variables, in order of first appearance, or the function's parameters.",
        epilog=_graph_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    graph.add_argument("target", metavar="EXPR|FILE.py:FUNC", help="a formula, or a function in a file")
    graph.add_argument("--at", action="append", default=[], metavar="NAME=VALUE",
                       help="an input's value: a number or a nested list, e.g. x=0.5 or w=[[1,2],[3,4]]")
    graph.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                       help="an input of random normal values (seeded: the same on every run), e.g. x=2,3")
    graph.add_argument("--transform", choices=GRAPH_TRANSFORMS, default="graph",
                       help="what to draw (default: graph, the function's own graph; "
                       "compile: the graph mx.compile traced, simplified and fused)")
    graph.add_argument("--wrt", action="append", default=[], metavar="NAME",
                       help="the input to differentiate; repeat for several (default: the first "
                       "for grad and value_and_grad, all of them for vjp, jvp and checkpoint)")
    graph.add_argument("--cotangent", metavar="VALUE",
                       help="vjp: the cotangent of the output; a number fills its shape "
                       "(default: ones)")
    graph.add_argument("--tangent", action="append", default=[], metavar="NAME=VALUE",
                       help="jvp: an input's tangent; a number fills the input's shape "
                       "(default: ones)")
    graph.add_argument("--in-axes", metavar="AXES",
                       help="vmap: the mapped axis of each input, e.g. 0 or 0,None (default: 0)")
    graph.add_argument("--format", choices=GRAPH_FORMATS,
                       help="text or dot (to stdout unless -o), svg, png, pdf or html (need -o); "
                       "default: from the -o suffix, else text")
    graph.add_argument("-o", "--output", metavar="OUT", help="the file to write")
    graph.add_argument("--steps", metavar="DIR", help="also write one SVG frame per step into DIR")
    graph.add_argument("--collapse", action="store_true",
                       help="fold custom functions, checkpoints and Compiled boxes into one "
                       "node each, and each innermost module call of a model into one box")
    graph.add_argument("--expand", action="append", default=[], metavar="PATH",
                       help="a model's module call (layers.3, gelu#1) to draw node by node "
                       "when the drawing is folded by module (repeatable)")
    defaults = viz.Limits()
    graph.add_argument("--max-nodes", type=int, metavar="N",
                       help="draw at most N nodes, with a summary node for the rest (default: "
                       f"text and dot whole; svg, png, pdf and html collapsed past "
                       f"{defaults.max_nodes}, with a note on stderr)")
    graph.add_argument("--max-work", type=int, metavar="N",
                       help="refuse to evaluate more than N element operations (a matmul "
                       f"element costs k; default: {defaults.max_work:_})")
    graph.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="stop Graphviz's dot after SECONDS for one image (default: "
                       f"{defaults.timeout:g})")
    graph.add_argument("--max-pixels", type=int, metavar="N",
                       help="draw a png larger than N pixels at a lower dpi (default: "
                       f"{defaults.max_pixels:_})")
    graph.add_argument("--values", metavar="N",
                       help="show arrays of up to N elements whole (default 12); "
                            "larger ones are summarised as MLX prints them")
    graph.add_argument("--rankdir", default="TB", metavar="TB|LR",
                       help="lay the graph out top to bottom (TB, the default) or left to right")
    graph.add_argument("--size", metavar="W,H",
                       help="the largest drawing, in inches (Graphviz's size)")
    graph.add_argument("--dpi", metavar="N", help="resolution of png output (Graphviz's dpi)")
    graph.add_argument("--ranks", type=int, metavar="N",
                       help="run FILE.py:FUNC on N local processes (mlxref.launch, the ring "
                       "back-end), so its mx.distributed collectives are nodes, and draw rank "
                       "--rank's graph (on one process they build none, as in MLX)")
    graph.add_argument("--rank", type=int, default=0, metavar="R",
                       help="with --ranks: whose drawing to write (default: 0)")
    graph.set_defaults(func=_cmd_graph)

    ring = sub.add_parser(
        "ring-allreduce", help="the ring all-reduce's steps on N ranks: which segment moves "
        "where, with the values",
        description="Run the ring back-end's all-reduce (mlxref/core/distributed/ring.py) on\n"
        "N ranks in this process and draw its steps: the reduce-scatter, then the\n"
        "all-gather, each rank's list cut into segments, each segment sent with its values.\n"
        "Rank r holds 10r+1, 10r+2, ... unless --values gives the lists.",
        epilog="examples:\n"
        "  mlxref ring-allreduce 4\n"
        "  mlxref ring-allreduce 3 --values '[[0.1, 0.2, 0.3], [1, 2, 3], [1e8, 0, 0]]'\n"
        "  mlxref ring-allreduce 4 --split -o ring.svg",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ring.add_argument("ranks", type=int, metavar="N", help="how many ranks (2 to 8)")
    ring.add_argument("--size", type=int, metavar="L",
                      help="elements per rank (default: 2N; fewer than N are padded, as the "
                      "ring pads them)")
    ring.add_argument("--values", metavar="LISTS",
                      help="each rank's list, e.g. '[[1, 2], [3, 4]]' for 2 ranks")
    ring.add_argument("--dtype", default="float32", choices=RING_DTYPES,
                      help="the elements' dtype (default: float32)")
    ring.add_argument("--op", default="sum", choices=viz.ring.OPS,
                      help="all_sum, all_max or all_min (default: sum)")
    ring.add_argument("--split", action="store_true",
                      help="cut the list in two parts going round in opposite directions, as "
                      "the ring does with an array of at least 2N x 256 KiB")
    ring.add_argument("--format", choices=RING_FORMATS,
                      help="text or dot (to stdout unless -o), svg, png or pdf (need -o); "
                      "default: from the -o suffix, else text")
    ring.add_argument("-o", "--output", metavar="OUT", help="the file to write")
    ring.set_defaults(func=_cmd_ring_allreduce)

    assignment = sub.add_parser(
        "assignment",
        help="course assignments: list the tasks, make a student copy, grade it",
        description="Course assignments generated from the reference source: each task is a\n"
        "region marked '# BEGIN TASK <id>' ... '# END TASK <id>', with tests marked task<id>.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = assignment.add_subparsers(
        dest="action", metavar="ACTION", parser_class=_OneLineParser
    )
    actions.required = True
    actions.add_parser("list", help="one task per line: id, title, the functions involved")
    make = actions.add_parser(
        "make", help="write a student copy of the project with the chosen tasks stubbed out"
    )
    make.add_argument("--tasks", metavar="IDS",
                      help="comma-separated task ids, e.g. 2.1,2.3, or ALL")
    make.add_argument("--out", required=True, metavar="DIR",
                      help="the directory to write (new, or empty)")
    make.add_argument("--classroom", action="store_true",
                      help="also write GitHub Classroom's .github/classroom/autograding.json "
                      "(one test per task)")
    make.add_argument("--check-leaks", action="store_true",
                      help="write nothing: scan the existing copy DIR for its stubbed tasks' "
                      "answers, hints that spell them out, helpers doing their work and hidden "
                      "tests; exit 2 with one line per leak (make runs this on what it writes)")
    make.add_argument("--no-check-leaks", action="store_true",
                      help="do not scan the copy written for leaks")
    grade = actions.add_parser(
        "grade", help="grade each task on its own: its regions spliced into a clean copy of the "
        "reference, its visible and hidden tests run in a child process with limits",
        epilog="The child process is not a container. For untrusted code at scale, run the "
        "grader in one, e.g.: " + sandbox.CONTAINER,
    )
    grade.add_argument("dir", nargs="?", default=".", metavar="DIR",
                       help="the project to grade (default: the current directory)")
    grade.add_argument("--json", action="store_true",
                       help='print {"score", "max_score", "tasks": {"2.3": {"passed", "points", '
                       '"max_points", "tests", "failures", "messages", "results"}}} for '
                       'autograders')
    grade.add_argument("--gradescope", metavar="FILE",
                       help="also write Gradescope's results.json to FILE")
    grade.add_argument("--hidden-visibility", default="after_published",
                       choices=("after_published", "hidden", "after_due_date", "visible"),
                       help="the Gradescope visibility of hidden tests (default: after_published)")
    grade.add_argument("--reference", metavar="DIR",
                       help="the instructor's checkout (default: the one mlxref is installed "
                       "from)")
    grade.add_argument("--tasks", default="ALL", metavar="IDS",
                       help="grade only these tasks, e.g. 2.1,2.3 (default: ALL)")
    grade.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                       help="the wall-clock limit of each task's run (default: 60)")
    grade.add_argument("--memory", type=float, metavar="MB",
                       help="the address-space limit of each task's run (default: 4096)")
    grade.add_argument("--jobs", type=int, metavar="N",
                       help="tasks graded at once (default: the number of CPUs)")
    grade.add_argument("--exam", action="store_true",
                       help="refuse to grade where the OS cannot isolate graded code "
                            "(bubblewrap on Linux)")
    assignment.set_defaults(func=_cmd_assignment)

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    args.argv = argv  # what --ranks hands on to each rank
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the shell's status for SIGINT, and no traceback
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
