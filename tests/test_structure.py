"""The shape of the code that makes it read like MLX, checked so it stays that way.

- Nodes are built in one place: ``array._node`` is called only by
  ``make_arrays`` (mlxref/core/primitives/base.py), MLX's ``array::make_arrays``.
- The transforms, the drawings and the symbolic checks read an array's node
  through its public methods (``inputs()``, ``primitive()``...), never through
  the handle's descriptor.
- One helper per idea: no private element-count helper beside ``math.prod``,
  no second tree walker, no search of the garbage collector's referrers.
- Imports sit at the top of the transforms' modules.
- Arrows point down (DESIGN.md, "The layers"): the core imports no drawing,
  course tooling, manual or cli; a primitive imports no transform; a kernel
  (``backend/``) imports no primitive, op or transform; no two modules import
  each other (but the ops and the primitives, and the array and its conversion).
- A private name (``_foo``) is used only in its own module: a helper another
  module uses has a public name.
- The seed example, ``mx.grad(lambda x: mx.sin(x) * mx.exp(x))(mx.array(0.5))``,
  calls functions in at most 13 files of mlxref (``SEED_FILES``): what a reader
  follows to see a gradient built stays a short walk.
Each import rule is a function over source texts, run on the package and, by a
self-test, on a small tree with one deliberate violation.
"""

import ast
import math
import os
import pathlib
import re
import sys

import pytest

import mlxref.core as mx
from mlxref.core import printing
from mlxref.core.transforms import trees

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "mlxref"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _relative(path):
    return path.relative_to(PACKAGE.parent).as_posix()


def _calls_to(tree, attribute):
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == attribute]


def _attribute_reads(tree, names):
    return [(n.lineno, n.attr) for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr in names
            and not (isinstance(n.value, ast.Name) and n.value.id == "self")]


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_nodes_are_built_only_by_make_arrays(path):
    calls = _calls_to(ast.parse(path.read_text()), "_node")
    if _relative(path) == "mlxref/core/primitives/base.py":
        assert len(calls) == 1  # make_arrays
    else:
        assert calls == [], f"{_relative(path)} builds nodes by hand at lines {calls}"


LAYERS = [p for p in SOURCES if _relative(p).startswith(
    ("mlxref/core/transforms/", "mlxref/viz/", "mlxref/symbolic/"))]


@pytest.mark.parametrize("path", LAYERS, ids=_relative)
def test_transforms_viz_and_symbolic_use_the_public_node_methods(path):
    private = {"_desc", "_data", "_inputs", "_primitive", "_siblings", "_node", "_eval",
               "_set_data", "_handle"}
    reads = _attribute_reads(ast.parse(path.read_text()), private)
    assert reads == [], f"{_relative(path)} reads an array's internals: {reads}"


def test_one_helper_per_idea():
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not names & {"_prod", "_count", "_batch_size", "_to_front", "_at_axis",
                            "_array_leaves", "flatten_arrays", "_is_expression",
                            "normalize_axes", "_broadcast_to"}, _relative(path)
        assert "get_referrers" not in path.read_text(), _relative(path)


@pytest.mark.parametrize("path", sorted((PACKAGE / "core" / "transforms").glob("*.py")),
                         ids=_relative)
def test_imports_are_at_the_top_of_the_transforms(path):
    tree = ast.parse(path.read_text())
    nested = [n.lineno for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
              for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert nested == [], f"{_relative(path)} imports inside functions at lines {nested}"


# --- the import rules ----------------------------------------------------------------
# Each rule is a function over {path relative to the repository: source}, so the
# same function checks the package and, in the self-tests below, a small tree with
# one deliberate violation: a broken checker cannot pass silently.


def _package_sources():
    return {_relative(p): p.read_text() for p in SOURCES}


def _module_name(path):
    """``mlxref/core/ops/common.py`` -> ``mlxref.core.ops.common``; a package's
    ``__init__.py`` is the package."""
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, tree, modules):
    """``(line, module, name)`` for every import in ``tree`` (top level and inside
    functions), ``module`` absolute. ``from P import n`` gives ``P.n`` when that is
    a module of ``modules`` (``name`` None), else ``P`` and the name ``n``."""
    package = _module_name(path)
    if not path.endswith("__init__.py"):
        package = package.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    found.append((node.lineno, f"{source}.{alias.name}", None))
                else:
                    found.append((node.lineno, source, alias.name))
    return found


def _within(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def _parsed(sources):
    modules = {_module_name(path) for path in sources}
    return [(path, _imports(path, ast.parse(source), modules)) for path, source in sources.items()]


def forbidden_imports(sources, under, forbidden, skip=()):
    """``file:line imports X`` for each module below ``under`` that imports a module
    within one of ``forbidden`` (the packages themselves and everything in them)."""
    return [f"{path}:{line} imports {module}"
            for path, found in _parsed(sources)
            if _within(_module_name(path), under) and path not in skip
            for line, module, _ in found
            if any(_within(module, f) for f in forbidden)]


def import_cycles(sources, allowed):
    """Each pair of modules that import each other, as ``{"a <-> b": "a.py:line <->
    b.py:line"}``; ``allowed`` holds (prefix, prefix) pairs whose modules may."""
    edges = {}
    for path, found in _parsed(sources):
        for line, module, _ in found:
            edges.setdefault((_module_name(path), module), f"{path}:{line}")
    cycles = {}
    for (a, b), where in sorted(edges.items()):
        if a < b and (b, a) in edges and not any(
                (_within(a, p) and _within(b, q)) or (_within(a, q) and _within(b, p))
                for p, q in allowed):
            cycles[f"{a} <-> {b}"] = f"{where} <-> {edges[(b, a)]}"
    return cycles


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def private_imports(sources, allowed=()):
    """Each private name (one leading underscore) of an mlxref module that another
    module imports (``from m import _y``) or reads through an imported name
    (``m._y``, ``cls._y`` of an imported class), as ``{"file name": "file:line
    name"}``; ``allowed`` holds ``file name`` exceptions."""
    found = {}
    modules = {_module_name(path) for path in sources}
    for path, source in sources.items():
        tree = ast.parse(source)
        imported = set()  # the names this module binds by importing mlxref modules or names
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias, (line, module, name) in zip(node.names, _imports(path, node, modules)):
                    if not _within(module, "mlxref"):
                        continue
                    if name is not None and _private(name):
                        found.setdefault(f"{path} {name}", f"{path}:{line} {name}")
                    imported.add(alias.asname or alias.name.partition(".")[0])
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in imported):
                name = f"{node.value.id}.{node.attr}"
                found.setdefault(f"{path} {name}", f"{path}:{node.lineno} {name}")
    return {key: where for key, where in found.items() if key not in allowed}


COURSE_AND_TOOLS = ["mlxref.viz", "mlxref.nn", "mlxref.symbolic", "mlxref.course",
                    "mlxref.manual", "mlxref.cli"]

# Module pairs that import each other by design: the ops build primitives and the
# primitives' rules call the ops (primitives/base.py's docstring); the array class
# is both MLX's handle and its Python binding, whose constructor is convert.py's
# create_array, which makes arrays. mx.distributed's ops and primitives likewise.
ALLOWED_CYCLES = [("mlxref.core.ops", "mlxref.core.primitives"),
                  ("mlxref.core.distributed.ops", "mlxref.core.distributed.primitives"),
                  ("mlxref.core.array", "mlxref.core.convert")]

# ``array._node`` is MLX's ``array::make_arrays``'s one way into the handle.
ALLOWED_PRIVATE = {"mlxref/core/primitives/base.py array._node"}

def test_the_core_imports_no_course_tooling_drawing_or_manual():
    found = forbidden_imports(_package_sources(), "mlxref.core", COURSE_AND_TOOLS)
    assert found == [], "the core reaches up: " + "; ".join(found)


@pytest.mark.parametrize("path", sorted((PACKAGE / "core" / "primitives").glob("*.py")),
                         ids=_relative)
def test_primitives_import_no_transform(path):
    found = forbidden_imports({_relative(path): path.read_text()}, "mlxref.core.primitives",
                              ["mlxref.core.transforms"])
    assert found == [], "a primitive reaches up to a transform: " + "; ".join(found)


def test_kernels_import_no_primitive_op_or_transform():
    found = forbidden_imports(_package_sources(), "mlxref.core.backend", [
        "mlxref.core.primitives", "mlxref.core.ops", "mlxref.core.transforms"])
    assert found == [], "a kernel reaches up: " + "; ".join(found)


def test_no_two_modules_import_each_other():
    found = import_cycles(_package_sources(), ALLOWED_CYCLES)
    assert found == {}, "modules that import each other: " + "; ".join(found.values())


def test_private_names_stay_in_their_module():
    found = private_imports(_package_sources(), ALLOWED_PRIVATE)
    assert found == {}, ("private names used by another module (make them public): "
                         + "; ".join(found.values()))


# --- the seed example's path ---------------------------------------------------------

# Files of mlxref the seed example enters before issue 28's restructuring. (Lazy: the
# gradient is built, nothing is evaluated.)
SEED_FILES = 13


def files_entered(fun):
    """The files of mlxref (paths below the package, such as ``core/array.py``) in which
    a function is called while ``fun()`` runs."""
    root = str(PACKAGE) + os.sep
    files = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(root):
            files.add(frame.f_code.co_filename[len(root):].replace(os.sep, "/"))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fun()
    finally:
        sys.setprofile(previous)
    return files


def seed_files():
    """The files the seed example enters. A thread's first op also makes its default
    stream (core/device.py), once per thread: that is made first, not part of the walk."""
    mx.default_stream(mx.default_device())
    return files_entered(lambda: mx.grad(lambda x: mx.sin(x) * mx.exp(x))(mx.array(0.5)))


def test_the_seed_example_enters_few_files():
    files = seed_files()
    assert len(files) <= SEED_FILES, (
        f"the seed example enters {len(files)} files of mlxref, more than {SEED_FILES}: "
        + ", ".join(sorted(files)))


README = PACKAGE.parent / "README.md"
START_ROW = re.compile(r"^\|\s*(●?)\s*\|\s*\[`mlxref/([^`]+)`\]\([^)]*\) \| (\d+) \|", re.MULTILINE)


def start_here_rows(text):
    """The rows of the README's "Start here" table: (seed mark, file below mlxref/, lines)."""
    section = text.split("## Start here", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1) == "●", m.group(2), int(m.group(3))) for m in START_ROW.finditer(section)]


def test_start_here_lists_the_seed_files_with_their_sizes():
    rows = start_here_rows(README.read_text(encoding="utf-8"))
    seed = seed_files()
    assert {name for marked, name, _ in rows if marked} == seed
    for _, name, stated in rows:
        lines = len((PACKAGE / name).read_text(encoding="utf-8").splitlines())
        assert abs(lines - stated) <= max(10, stated // 10), (
            f"README's Start here says {name} has {stated} lines; it has {lines}")


# --- the rules catch what they are written for ---------------------------------------


def test_self_check_start_here_rows_are_read():
    text = ("## Start here\n| | file | lines |\n|---|---|---|\n"
            "| ● | [`mlxref/core/array.py`](mlxref/core/array.py) | 600 | the array |\n"
            "| | [`mlxref/core/transforms/jvp.py`](x) | 60 | jvp |\n"
            "## Next\n| ● | [`mlxref/core/dtypes.py`](x) | 1 | not in the section |\n")
    assert start_here_rows(text) == [(True, "core/array.py", 600),
                                     (False, "core/transforms/jvp.py", 60)]


def test_self_check_files_entered_counts_each_file_called():
    assert files_entered(lambda: (printing.format_shape((2, 3)), trees.is_container([]))) == {
        "core/printing.py", "core/transforms/trees.py"}
    assert files_entered(lambda: math.prod((2, 3))) == set()


def test_self_check_the_core_importing_up_is_caught():
    tree = {
        "mlxref/__init__.py": "",
        "mlxref/viz/__init__.py": "",
        "mlxref/core/__init__.py": "",
        "mlxref/core/fine.py": "import math\nfrom . import dtypes\n",
        "mlxref/core/dtypes.py": "",
        "mlxref/core/ops/a.py": "def f():\n    from ...viz import draw\n",
        "mlxref/core/b.py": "from .. import viz\n",
        "mlxref/core/c.py": "import mlxref.viz.dot as d\n",
        "mlxref/core/d.py": "from mlxref.cli import main\n",
    }
    assert forbidden_imports(tree, "mlxref.core", COURSE_AND_TOOLS) == [
        "mlxref/core/ops/a.py:2 imports mlxref.viz", "mlxref/core/b.py:1 imports mlxref.viz",
        "mlxref/core/c.py:1 imports mlxref.viz.dot", "mlxref/core/d.py:1 imports mlxref.cli"]


def test_self_check_a_primitive_importing_a_transform_is_caught():
    tree = {"mlxref/core/primitives/x.py": "def f():\n    from ..transforms import compile\n",
            "mlxref/core/primitives/y.py": "from .. import ops\n"}
    assert forbidden_imports(tree, "mlxref.core.primitives", ["mlxref.core.transforms"]) == [
        "mlxref/core/primitives/x.py:2 imports mlxref.core.transforms"]


def test_self_check_a_kernel_importing_a_primitive_is_caught():
    tree = {
        "mlxref/core/backend/cpu/unary.py": "from ... import dtypes\nfrom ...ops import common\n",
        "mlxref/core/backend/cpu/fft.py": "from ...primitives.fft import FFT\n",
    }
    assert forbidden_imports(tree, "mlxref.core.backend", [
        "mlxref.core.primitives", "mlxref.core.ops", "mlxref.core.transforms"]) == [
        "mlxref/core/backend/cpu/unary.py:2 imports mlxref.core.ops",
        "mlxref/core/backend/cpu/fft.py:1 imports mlxref.core.primitives.fft"]


def test_self_check_two_modules_importing_each_other_are_caught():
    tree = {"mlxref/core/a.py": "from . import b\n",
            "mlxref/core/b.py": "def f():\n    from .a import g\n",
            "mlxref/core/ops/x.py": "from ..primitives import y\n",
            "mlxref/core/primitives/y.py": "from ..ops import x\n"}
    assert import_cycles(tree, ALLOWED_CYCLES) == {
        "mlxref.core.a <-> mlxref.core.b": "mlxref/core/a.py:1 <-> mlxref/core/b.py:2"}


def test_self_check_a_private_name_used_elsewhere_is_caught():
    tree = {"mlxref/core/a.py": "def _helper(): pass\nclass A:\n    def _m(self): self._n = 1\n",
            "mlxref/core/b.py": "from .a import _helper\n",
            "mlxref/core/c.py": "from . import a\nfrom .a import A\na._helper()\nA._m(None)\n",
            "mlxref/core/d.py": "from . import a\na.__name__\nimport os\nos._exit\n"}
    assert list(private_imports(tree).values()) == [
        "mlxref/core/b.py:1 _helper", "mlxref/core/c.py:3 a._helper", "mlxref/core/c.py:4 A._m"]
    assert private_imports(tree, {"mlxref/core/c.py A._m"}) == {
        "mlxref/core/b.py _helper": "mlxref/core/b.py:1 _helper",
        "mlxref/core/c.py a._helper": "mlxref/core/c.py:3 a._helper"}
