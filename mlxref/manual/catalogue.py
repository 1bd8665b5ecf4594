"""What the manual lists: every public op, every primitive, and which builds which.

An op's family is the module it is defined in (``mlxref/core/ops/sort.py``
-> ``sort``; ``mx.fast``'s own functions -> ``fast``), and a primitive's is
the module of ``mlxref/core/primitives/`` it is defined in; a family's page
holds both. The ops are those of ``mlxref.core`` (defined in its ``ops``
package) and of
its namespaces ``linalg``, ``fft``, ``fast`` and ``random`` (their
``__all__``), each under its public name (``linalg.svd``).

Which primitives an op builds is read from its source with ``ast``: the
primitive classes it names (``P.Sin()``, ``Sort(axis)``), and those named by
the helpers of mlxref.core it calls that are not public ops themselves
(``_float_unary``...), four calls deep. An op that names none composes
other ops; ``composes`` lists the public ops it (or those helpers) calls.
Nothing runs.

Read next: ``rules.py`` (the formulas of each primitive).
"""

import ast
import functools
import inspect
import textwrap
import types
from dataclasses import dataclass, field

from .. import core as mx
from .. import symbolic
from ..core import ops as _ops
from ..core.primitives.base import Primitive

NAMESPACES = ("linalg", "fft", "fast", "random")
MLX_DOCS = "https://ml-explore.github.io/mlx/build/html/python/_autosummary/mlx.core.{}.html"


@dataclass
class Op:
    name: str  # the public name: "sin", "linalg.svd"
    function: object
    primitives: list = field(default_factory=list)  # Primitive classes it builds
    composes: list = field(default_factory=list)  # public ops it calls instead

    @property
    def family(self):
        return family_of(self.function)

    @property
    def mlx_url(self):
        return MLX_DOCS.format(self.name)


def family_of(obj):
    return obj.__module__.rsplit(".", 1)[-1]


def public_ops():
    """Every public op, sorted by name: mlxref.core's and its namespaces'."""
    found = {}
    for module in (_ops, mx):  # mx also re-exports a few (matrix_norm)
        for name in dir(module):
            value = getattr(module, name)
            if (not name.startswith("_") and inspect.isfunction(value)
                    and value.__module__.startswith(_ops.__name__)):
                found[name] = value
    for space in NAMESPACES:
        module = getattr(mx, space)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                found[f"{space}.{name}"] = value
    public = {id(f): n for n, f in found.items()}
    ops = []
    for name in sorted(found):
        op = Op(name, found[name])
        op.primitives, calls = _named(found[name], public, depth=4)
        if not op.primitives:
            op.composes = sorted({public[id(f)] for f in calls} - {name})
        ops.append(op)
    return ops


def primitives():
    """Every concrete primitive (``symbolic.all_primitives``), by family then name."""
    return sorted(symbolic.all_primitives(), key=lambda p: (family_of(p), p.__name__))


def _named(function, public, depth):
    """(Primitive classes, public ops) that ``function``'s source names,
    following the helpers of mlxref.core that are not in ``public`` (ids of
    the public ops) ``depth`` calls deep."""
    prims, calls = [], []
    seen, frontier = {function}, [function]
    for level in range(depth + 1):
        following = []
        for f in frontier:
            named_prims, functions = _direct(f)
            prims.extend(p for p in named_prims if p not in prims)
            for g in functions:
                if id(g) in public:
                    calls.append(g)
                elif g not in seen and g.__module__.startswith("mlxref.core"):
                    seen.add(g)
                    following.append(g)
        frontier = following
    return sorted(prims, key=lambda p: p.__name__), calls


@functools.lru_cache(maxsize=None)
def _direct(function):
    """(concrete Primitive classes, functions) that ``function``'s own source names."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return (), ()
    scope = function.__globals__
    prims, functions = [], []
    for node in ast.walk(tree):
        value = None
        if isinstance(node, ast.Name):
            value = scope.get(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = scope.get(node.value.id)
            if isinstance(module, types.ModuleType):
                value = getattr(module, node.attr, None)
        if inspect.isclass(value) and issubclass(value, Primitive):
            if not value.__dict__.get("abstract", False) and value not in prims:
                prims.append(value)
        elif inspect.isfunction(value) and value is not function and value not in functions:
            functions.append(value)
    return tuple(prims), tuple(functions)


def families(ops, prims):
    """{family: (ops, primitives)}, families sorted by name."""
    out = {}
    for op in ops:
        out.setdefault(op.family, ([], []))[0].append(op)
    for p in prims:
        out.setdefault(family_of(p), ([], []))[1].append(p)
    return dict(sorted(out.items()))


def missing_cases(prims):
    """The primitives no symbolic case uses: their rules cannot be shown."""
    covered = {case.primitive for case in symbolic.all_cases()}
    return [p.__name__ for p in prims if p not in covered]
