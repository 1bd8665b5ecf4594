"""The shape of the code that makes it read like MLX, checked so it stays that way.

- Nodes are built in one place: ``array._node`` is called only by
  ``make_arrays`` (mlxref/core/primitives/base.py), MLX's ``array::make_arrays``.
- The transforms, the drawings and the symbolic checks read an array's node
  through its public methods (``inputs()``, ``primitive()``...), never through
  the handle's descriptor.
- One helper per idea: no private element-count helper beside ``math.prod``,
  no second tree walker, no search of the garbage collector's referrers.
- Imports sit at the top of the transforms' modules.
"""

import ast
import pathlib

import pytest

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
