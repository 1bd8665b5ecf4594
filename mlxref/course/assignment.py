"""Course assignments generated from the reference: ``mlxref assignment list|make``.

The reference source is the solution: each task is one or more regions
between ``# BEGIN TASK 2.2: ...`` and ``# END TASK 2.2`` lines, found by
mlxref/course/regions.py. ``make`` copies the project and replaces every
region of the chosen tasks by one ``raise NotImplementedError("Task 2.2: ...")``
(``stub``, with the region's text from ``HINTS``), so the student copy and
the reference are never two codebases kept by hand (MiniTorch keeps its
student repositories by hand). The markers stay in the copy: they show the
student where to write.

Each task's tests are the tests marked ``@pytest.mark.task2_2`` (in
tests/course/test_tasks.py, registered in setup.cfg), plus the instructor's
hidden tests in tests/course/hidden/ with the same marker, which ``make``
never copies.
``mlxref assignment grade`` is mlxref/course/grader.py: each task's regions
from a submission, spliced into a clean copy of the reference, run in a
child process with limits (mlxref/course/sandbox.py).

Read next: tutorials/ASSIGNMENTS.md (the instructor's guide) and
tests/course/test_assignment.py (make, then grade, checked end to end).
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

from . import grader, leaks
from .regions import HIDDEN, NEEDS, choose, find_regions, marker, project_root, tasks

# What the stub of each region asks for: (task, function) -> text after "Task 2.2: ".
# One visible table; a region without an entry gets "implement <the task's title>".
HINTS = {
    ("1.1", "Sigmoid.numeric"):
        "return the logistic sigmoid of the Python float x as a float, correct to the last "
        "digits and with no OverflowError for any x (sigmoid(-1000.0) is 0.0)",
    ("1.2", "_logsumexp"):
        "return log(sum of exp(v)) over the list of floats group as a float, with no "
        "overflow or underflow for any finite values (what can you take out of every "
        "exponent first?); an infinite or nan element gives what MLX gives (inf, -inf "
        "or nan); the parameters exp, total and rounded are the dtype's own steps: "
        "compute with them, as the docstring says",
    ("1.3", "Scan._scan"):
        "return the list of running totals of the list row, each combined with "
        "add(total, v): inclusive or exclusive (self.inclusive; an exclusive scan starts "
        "from zero), from the end when self.reverse; the same length as row",
    ("2.1", "Unary.vjp"):
        "return a list holding the cotangent of the input: an array of its shape and "
        "dtype, from the cotangent of the output and the derivative rule of this family "
        "(self.derivative(x, out), which is None for a piecewise-constant function)",
    ("2.1", "Binary.vjp"):
        "return a list with one cotangent per input position in argnums, in that order, "
        "each an array of the inputs' shape, from the cotangent of the output and the "
        "partial derivative rule self.partial(i, a, b, out)",
    ("2.2", "Sin.derivative"):
        "return d sin(x) / dx, an array of x's shape and dtype, written with mlxref ops "
        "(so that it can be differentiated again)",
    ("2.2", "Cos.derivative"):
        "return d cos(x) / dx, an array of x's shape and dtype, written with mlxref ops "
        "(so that it can be differentiated again)",
    ("2.3", "Multiply.partial"):
        "return d (a * b) / da for i = 0 or d (a * b) / db for i = 1: an array of the "
        "inputs' shape and dtype, written with mlxref ops",
    ("2.3", "Divide.partial"):
        "return d (a / b) / da for i = 0 or d (a / b) / db for i = 1: an array of the "
        "inputs' shape and dtype, written with mlxref ops; out is a / b, already computed",
    ("2.4", "Exp.derivative"):
        "return d exp(x) / dx, an array of x's shape and dtype, reusing the output "
        "out = exp(x) instead of computing anything from x",
    ("2.4", "Tanh.derivative"):
        "return d tanh(x) / dx, an array of x's shape and dtype, reusing the output "
        "out = tanh(x) instead of computing anything from x",
    ("2.4", "Sigmoid.derivative"):
        "return d sigmoid(x) / dx, an array of x's shape and dtype, reusing the output "
        "out = sigmoid(x) instead of computing anything from x",
    ("2.5", "_exclusive_prod"):
        "return an array of x's shape and dtype holding, at each element, the product of "
        "the other elements of its run over axes, without dividing (exact where x has "
        "zeros); the docstring says what MLX gives",
    ("2.5", "Reduce.vjp"):
        "return [the cotangent of x] (x's shape) for sum, prod (with _exclusive_prod), "
        "max and min (tied maxima share the cotangent equally), and zeros for all and "
        "any; self.axes were reduced, kept as size 1 if self.keepdims",
    ("3.1", "Unary.jvp"):
        "return a list holding the tangent of the output (x's shape and dtype) from the "
        "tangent of the input and self.derivative(x, out) (None: a piecewise-constant "
        "function); out must be a new node of this primitive so it differentiates again",
    ("3.1", "Binary.jvp"):
        "return a list holding the tangent of the output, from the tangents of the inputs "
        "at the positions in argnums (only those inputs have one) and the partial "
        "derivative rule self.partial; the output it needs must be a new node of this "
        "primitive on the primals, so the tangent differentiates again",
    ("3.2", "Reduce.jvp"):
        "return [the tangent of the output] (the output's shape) for sum, prod, max and min "
        "(MLX reads the tangent at the first arg max or arg min) and zeros in the tangent's "
        "dtype for all and any; see the docstring",
    ("4.1", "vjp"):
        "walk tape (topological order) backwards: a node whose outputs have cotangents "
        "in cotan_map (keyed by id(); an output without one counts as zeros) passes them "
        "through its primitive's vjp rule to the inputs in calc_grad, and the cotangents "
        "reaching one array add up; cotan_map must end holding those sums. A rule may "
        "evaluate arrays, so run it where the graph survives that (see RetainGraph), and "
        "when listening, announce each rule run as an events.VjpStep "
        "(mlxref/core/transforms/events.py says what it holds)",
    ("4.2", "jvp"):
        "walk tape (topological order) forwards: each node's primitive turns the tangents "
        "of its inputs (those in tan_map, keyed by id()) into its outputs' tangents with "
        "its jvp rule, and tan_map must end holding every output's tangent. A rule may "
        "evaluate arrays, so run it where the graph survives that (see RetainGraph), and "
        "when listening, announce each node as an events.JvpStep "
        "(mlxref/core/transforms/events.py says what it holds)",
    ("4.3", "Broadcast.vjp"):
        "return [the cotangent of x]: an array of x's shape (x was broadcast to the "
        "cotangent's shape) holding, for each element of x, the total cotangent of its copies",
    ("5.1", "vmap_elementwise"):
        "return ([one output of primitive], [0]): the output batched on axis 0, for inputs "
        "batched on axes (None: not batched; at least one is), using batch_size and "
        "move_batch_axis above",
    ("5.2", "shift_axes"):
        "return, as a sorted tuple, the axes of the batched array (batch axis ax) that are "
        "the per-example axes in axes",
    ("5.2", "_out_batch_axis"):
        "return the index of the batch axis in the result of reducing the batched array "
        "(batch axis ax) over its axes, with or without keepdims",
    ("5.2", "Reduce.vmap"):
        "return ([output], [its batch axis]) from one Reduce of the batched x that leaves the "
        "batch axis where it is, as MLX does; ([output], [None]) if x is not batched",
    ("5.3", "Reshape.vmap"):
        "return ([output], [its batch axis]): each example reshaped to self.shape in "
        "row-major order; ([output], [None]) if x is not batched",
    ("6.1", "CustomTransforms.vjp"):
        "return one cotangent per position in argnums, from self.vjp_fun(the function's "
        "inputs, cotangents, outputs); primals ends with the function's outputs "
        "(self.num_outputs of them), which get their own cotangents",
    ("6.1", "CustomTransforms.jvp"):
        "return the list of the outputs' tangents from self.jvp_fun(the function's inputs, "
        "tangents, argnums); primals ends with the function's outputs "
        "(self.num_outputs of them)",
    ("6.2", "checkpoint_vjp"):
        "return the vjps of fun at primals for the cotangents, recomputing fun's graph now; "
        "the recomputation must not be scheduled before the forward outputs exist "
        "(see depends in mlxref/core/primitives/custom.py)",
}


def stub(region):
    """The line that replaces ``region`` in a student copy: its hint, at its indentation."""
    hint = HINTS.get((region.task, region.function), f"implement {region.title}")
    return f'{region.indent}raise NotImplementedError("Task {region.task}: {hint}")'


# --- list ---------------------------------------------------------------------------


def list_lines():
    """One line per task: id, title, the functions involved, and any prerequisite."""
    table = tasks()
    width = max(len(title) for title, _ in table.values())
    lines = []
    for task_id, (title, regions) in table.items():
        line = f"{task_id:<4} {title:<{width}}  {', '.join(r.place for r in regions)}"
        if task_id in NEEDS:
            line += f"  (tests also need {', '.join(NEEDS[task_id])})"
        lines.append(line)
    return lines


# --- make ---------------------------------------------------------------------------

_SKIPPED_DIRS = {"__pycache__", "build", "dist", "node_modules"}


def make(spec, out, classroom=False, timeout=60.0, check_leaks=True):
    """Write a student copy of the project to ``out`` with the tasks in ``spec`` stubbed.

    The instructor's hidden tests (tests/course/hidden/) are not copied. With
    ``classroom``, also write GitHub Classroom's
    ``.github/classroom/autograding.json`` (one test per task). With
    ``check_leaks`` the copy is then scanned for its tasks' answers
    (mlxref/course/leaks.py), and ``leaks.Leaks`` is raised if it holds any.
    Returns ``(chosen task ids, stubbed regions)``.
    """
    root = project_root()
    table = tasks(find_regions(root))
    chosen = choose(spec, list(table), "make")
    out = Path(out).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"[assignment make] {out} already exists and is not an empty directory.")

    shutil.copytree(root, out, ignore=_copy_filter(out, root / HIDDEN),
                    dirs_exist_ok=True)

    table = tasks(find_regions(out))  # the regions as copied
    stubbed = [r for task_id in chosen for r in table[task_id][1]]
    by_file = {}
    for r in stubbed:
        by_file.setdefault(r.path, []).append(r)
    for relative, regions in by_file.items():
        path = out / relative
        lines = path.read_text(encoding="utf-8").split("\n")
        for r in sorted(regions, key=lambda r: r.begin, reverse=True):
            lines[r.begin : r.end - 1] = [stub(r)]
        text = "\n".join(lines)
        ast.parse(text, filename=str(path))  # a region that cannot be stubbed fails here
        path.write_text(text, encoding="utf-8")
    (out / "ASSIGNMENT.md").write_text(_handout(table, chosen), encoding="utf-8")
    if classroom:
        config = out / ".github" / "classroom" / "autograding.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps(grader.classroom(chosen, table, timeout), indent=2) + "\n",
                          encoding="utf-8")
    if check_leaks:
        leaks.refuse_leaks(out, root)
    return chosen, stubbed


def waiting(chosen):
    """Tasks left implemented whose tests also need a chosen task: {task: [chosen tasks]}."""
    return {
        task_id: [t for t in needs if t in chosen]
        for task_id, needs in NEEDS.items()
        if task_id not in chosen and any(t in chosen for t in needs)
    }


def _copy_filter(out, hidden):
    """What a student copy leaves out: VCS and tool directories, caches, virtual
    environments, build output, nested projects (earlier copies), the hidden
    tests and ``out`` itself."""

    def ignore(directory, names):
        skipped = set()
        for name in names:
            path = Path(directory, name)
            if path.is_dir() or name == ".git":  # in a git worktree, .git is a file
                if (
                    name.startswith(".")
                    or name in _SKIPPED_DIRS
                    or name.endswith(".egg-info")
                    or (path / "pyvenv.cfg").exists()
                    or (path / "setup.cfg").exists()
                    or (path / "pyproject.toml").exists()
                    or path.resolve() in (out, hidden.resolve())
                ):
                    skipped.add(name)
            elif name.endswith((".pyc", ".pyo")):
                skipped.add(name)
        return skipped

    return ignore


def _handout(table, chosen):
    rows = []
    for task_id in chosen:
        title, regions = table[task_id]
        places = "<br>".join(f"`{r.place}`" for r in regions)
        rows.append(f"| {task_id} | {title} | {places} | `make task T={task_id}` |")
    return (
        "# Your assignment\n\n"
        "Each task below is one or more regions of the source between `# BEGIN TASK <id>` and\n"
        "`# END TASK <id>` that now raise `NotImplementedError(\"Task <id>: ...\")`: the message\n"
        "says what to implement. Replace the `raise` line with your code and keep the markers.\n"
        "Do not edit the tests.\n\n"
        "| task | title | functions | its tests |\n|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "The chapters in tutorials/ explain each piece; start with tutorials/README.md.\n\n"
        "Set up once (`make venv`: SymPy, graphviz, pytest and Hypothesis, under 100 MB),\n"
        "then check one task (its tests alone, in a few seconds), or all of yours:\n\n"
        "```sh\nmake venv\n"
        f"make task T={chosen[0]}\n"
        f".venv/bin/mlxref assignment grade --tasks {','.join(chosen)}\n```\n\n"
        f"`make task T={chosen[0]}` runs `.venv/bin/python -m pytest tests/course/test_tasks.py "
        f"-m {marker(chosen[0])}`.\n"
        "`mlxref check-rules NAME` checks one primitive's rules (`Sin`, `Multiply`...) exactly\n"
        "with SymPy and says which rule failed on which case, with the expected and received\n"
        "values.\n"
        "`make test` runs the whole suite (no browser, no docs needed: those tests skip); most\n"
        "of it needs the functions you are writing, so expect failures there until every task\n"
        "is done.\n"
        + "".join(
            f"\nTask {t} is not yours, but its tests also use your {', '.join(needs)}: they pass "
            f"once {', '.join(needs)} does.\n"
            for t, needs in waiting(chosen).items()
        )
    )
