"""Run a program written for MLX on mlxref: ``import mlx.X`` imports ``mlxref.X``.

``python -m mlxref.as_mlx script.py [args...]`` runs a script, and
``python -m mlxref.as_mlx -m module [args...]`` a module (``-m pytest``), with
every ``mlx`` module name mapped to mlxref's module of the same name:
``mlx.core`` is ``mlxref.core``, ``mlx.nn.layers.distributed`` is
``mlxref.nn.layers.distributed``, each one module object under both names,
so a class imported through either name is the same class. A name mlxref
does not have raises ``ModuleNotFoundError`` naming the mlxref module that is
missing. ``install()`` does the same in a running interpreter.

MLX's own test files, its documentation's examples and its distributed
examples run this way (mlxref.manual.mlx_docs, benchmarks/examples.py,
``python -m mlxref.launch -n 4 python -m mlxref.as_mlx -m pytest ...``).
"""

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The finder and loader of ``mlx`` and its submodules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "mlx" and not fullname.startswith("mlx."):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        if spec.name == "mlx":  # the package: its submodules are set on it as imported
            package = types.ModuleType("mlx", "MLX's names for mlxref's modules (mlxref.as_mlx).")
            package.__path__ = []
            return package
        return importlib.import_module("mlxref" + spec.name[len("mlx"):])

    def exec_module(self, module):
        pass  # mlxref's module ran when it was imported


_FINDER = _Alias()


def install():
    """Map ``mlx`` and its submodules to mlxref's from now on (idempotent).

    Refused where real MLX was imported already: its modules would mix with mlxref's."""
    if _FINDER in sys.meta_path:
        return
    if any(name == "mlx" or name.startswith("mlx.") for name in sys.modules):
        raise RuntimeError("mlxref.as_mlx: real MLX is imported already in this process")
    sys.meta_path.insert(0, _FINDER)


_USAGE = "usage: python -m mlxref.as_mlx script.py [args...] | -m module [args...]"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(_USAGE)
        return 0
    if not argv or argv == ["-m"]:
        print(_USAGE, file=sys.stderr)
        return 2
    install()
    if argv[0] == "-m":
        if not _module_exists(argv[1]):  # Python's own words and exit code
            print(f"{sys.executable}: No module named {argv[1]}", file=sys.stderr)
            return 1
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        if not os.path.isfile(argv[0]):
            print(f"{sys.executable}: can't open file {os.path.abspath(argv[0])!r}: "
                  f"[Errno 2] No such file or directory", file=sys.stderr)
            return 2
        # As ``python script.py``: the script's folder first on the path.
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


def _module_exists(name):
    if name == "mlx" or name.startswith("mlx."):  # the alias finds every name: ask mlxref
        name = "mlxref" + name[len("mlx"):]
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


if __name__ == "__main__":
    sys.exit(main())
