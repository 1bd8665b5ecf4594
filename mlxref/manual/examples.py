"""Run each op's example, the ``>>>`` lines of its docstring, on mlxref or on real MLX.

    python -m mlxref.manual.examples [--mlx] [OP ...]

Every public op (``catalogue.public_ops``) says in its docstring what it
computes and ends with an example: one to three ``>>>`` statements, with
``mx`` already bound, each followed by what the interpreter prints for it.
That output is MLX 0.32.4's, so the example checks mlxref as well as
teaching. ``check`` runs the statements with doctest, ``mx`` bound to
``mlxref.core`` or to a library given (real ``mlx.core``: ``--mlx``), and
compares what each prints with its expected output after collapsing runs of
whitespace (doctest's NORMALIZE_WHITESPACE: an array's repr wraps by width).
It returns one ``Failure`` (op, statement, expected, got) per statement that
prints something else or raises an exception it does not expect; an op the
library lacks (``random.bits`` is mlxref's own) is skipped. ``missing``
names the ops with no docstring or no example. Aliases that are one function
(``acos`` and ``arccos``) share their docstring, and each name runs it.

The command prints one line per failure and one per op missing its
description or example, then a summary,
``examples: P of N ops' examples pass on mlxref (F fail); M of T ops have no
description or no example``. Its exit status is 1 when anything failed or is
missing. OP names ops (``sin``, ``linalg.qr``) to run only those.

Read next: tests/manual/test_op_examples.py, and ``pages.py`` (``_prose``
shows an example as a code block of the op's entry).
"""

import argparse
import doctest
import inspect
import sys
import traceback
from dataclasses import dataclass

from . import catalogue

_FLAGS = doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Failure:
    """A statement of an op's example that printed ``got`` instead of ``expected``."""

    op: str
    statement: str
    expected: str
    got: str

    def __str__(self):
        def flat(text):
            return " ".join(text.split()) or "(nothing)"

        return (f"{self.op}: >>> {flat(self.statement)}  expected {flat(self.expected)}"
                f"  got {flat(self.got)}")


class _Collector(doctest.DocTestRunner):
    """A doctest runner that keeps its failures as ``Failure``s instead of printing them."""

    def __init__(self):
        super().__init__(verbose=False, optionflags=_FLAGS)
        self.found = []

    def report_failure(self, out, test, example, got):
        self.found.append(Failure(test.name, example.source.strip(), example.want.strip(),
                                     got.strip()))

    def report_unexpected_exception(self, out, test, example, exc_info):
        got = "".join(traceback.format_exception_only(*exc_info[:2])).strip()
        self.found.append(Failure(test.name, example.source.strip(), example.want.strip(), got))


def _examples(op, library):
    """``op``'s docstring as a doctest whose ``mx`` is ``library``."""
    doc = inspect.getdoc(op.function) or ""
    return doctest.DocTestParser().get_doctest(doc, {"mx": library}, op.name, None, 0)


def check(ops, library=None):
    """The failures of the examples of ``ops`` (``catalogue.Op``s, or anything
    with ``name`` and ``function``), run with ``mx`` bound to ``library``
    (default: ``mlxref.core``), in the order of ``ops``."""
    if library is None:
        from .. import core as library
    runner = _Collector()
    for op in ops:
        if runs_on(library, op):
            runner.run(_examples(op, library), out=lambda text: None)
    return runner.found


def runs_on(library, op):
    """Whether ``op``'s example can run on ``library``: it can unless it calls
    ``mx.<name>`` and the library has no such op ("random.bits", which MLX has
    in C++ only; the aliases ``dynamic_slice`` and ``getitem`` are mlxref's
    names, but their examples call ``mx.slice`` and ``a[...]``, and run)."""
    found = library
    for part in op.name.split("."):
        found = getattr(found, part, None)
    return found is not None or f"mx.{op.name}(" not in (inspect.getdoc(op.function) or "")


def lacks(op):
    """What ``op``'s docstring lacks: "description" (there is none),
    "example" (no ``>>>`` statement), or None."""
    doc = inspect.getdoc(op.function)
    if not doc or not doc.strip():
        return "description"
    if not doctest.DocTestParser().get_examples(doc):
        return "example"
    return None


def missing(ops):
    """The names of the ops with no description (no docstring) or no example."""
    return [op.name for op in ops if lacks(op)]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mlxref.manual.examples",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--mlx", action="store_true",
                        help="run the examples on real MLX (mlx.core) instead of mlxref")
    parser.add_argument("ops", nargs="*", metavar="OP", help="only these ops (default: every public op)")
    args = parser.parse_args(argv)
    ops = catalogue.public_ops()
    if args.ops:
        unknown = sorted(set(args.ops) - {op.name for op in ops})
        if unknown:
            parser.error(f"no public op named {', '.join(unknown)}")
        ops = [op for op in ops if op.name in args.ops]
    library, name = None, "mlxref"
    if args.mlx:
        try:
            import mlx.core as library
        except ImportError:
            raise SystemExit("examples: --mlx needs real MLX: pip install -e '.[metal]'")
        name = "MLX " + library.__version__
    failures = check(ops, library)
    for failure in failures:
        print(failure)
    if library is not None:
        for op in ops:
            if not runs_on(library, op):
                print(f"{op.name}: not in {name} (mlxref's own): its example runs on mlxref only")
    absent = [(op.name, lacks(op)) for op in ops if lacks(op)]
    for op_name, what in absent:
        print(f"{op_name}: no {what}")
    with_example = [op for op in ops if lacks(op) is None and (library is None
                                                               or runs_on(library, op))]
    failed = {f.op for f in failures}
    print(f"examples: {len(with_example) - len(failed)} of {len(with_example)} ops' examples pass"
          f" on {name} ({len(failed)} fail); {len(absent)} of {len(ops)} ops have no"
          " description or no example")
    return 1 if failures or absent else 0


if __name__ == "__main__":
    sys.exit(main())
