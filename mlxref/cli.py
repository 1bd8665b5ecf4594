"""The ``mlxref`` command line.

One function per subcommand (``_cmd_<name>(args) -> int``), all registered in
``_build_parser()``.  ``main`` turns a ``ValueError``/``TypeError`` caused by the
user's input into one line on stderr and exit status 2, like argparse does for
bad arguments.
"""

from __future__ import annotations

import argparse
import sys

PROG = "mlxref"


def _cmd_demo(args: argparse.Namespace) -> int:
    """The seed example: f(x) = sin(x) * exp(x) and its derivative at x."""
    import mlxref.core as mx

    def f(x):
        return mx.sin(x) * mx.exp(x)

    x = mx.array(args.x)
    print(f"f(x) = sin(x) * exp(x) at x = {args.x}")
    print(f"f(x)  = {f(x)!r}")
    print(f"f'(x) = {mx.grad(f)(x)!r}   (mx.grad(f)(x); analytically exp(x) * (sin(x) + cos(x)))")
    return 0


def _cmd_check_rules(args: argparse.Namespace) -> int:
    """Check every primitive's vjp and jvp against SymPy; exit 1 on any failure."""
    from mlxref import symbolic

    results = symbolic.check_all(seed=args.seed)
    print(symbolic.format_table(results))
    failed = [r.primitive for r in results if not r.ok]
    print()
    if failed:
        print(f"{len(failed)} of {len(results)} primitives FAILED: {', '.join(failed)}")
        return 1
    print(f"all {len(results)} primitives pass")
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="mlxref: a pure-Python reference implementation of MLX's autodiff engine.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    demo = sub.add_parser("demo", help="print the seed example: d/dx sin(x)*exp(x)")
    demo.add_argument(
        "--x", type=float, default=0.5, help="the point to evaluate at (default: 0.5)"
    )
    demo.set_defaults(func=_cmd_demo)

    check = sub.add_parser(
        "check-rules", help="check every primitive's vjp and jvp rules exactly with SymPy"
    )
    check.add_argument("--seed", type=int, default=0, help="seed for the random points")
    check.set_defaults(func=_cmd_check_rules)

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args.func(args)
    except (ValueError, TypeError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
