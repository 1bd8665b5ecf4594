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
Nothing runs there.

Each op's drawing is the vjp walk of a small call of it: ``sample(op)``
finds one from its signature (float32 arrays of a few small shapes for its
required parameters, the first that the op takes; integer arrays when it
refuses floats), or takes it from ``SAMPLES``, the one table of calls
written by hand (convolutions, indices, axes, keys...). ``NOT_DRAWN`` says
why an op gets no drawing where no call could say it: it takes no array
(creation from a shape, random keys) or needs MLX's GPU kernels. The other
reasons (integer inputs, a bool or integer result, a vjp MLX does not have)
are found by ``pages.op_walk`` from the sample call itself.

Read next: ``rules.py`` (the formulas of each primitive).
"""

import ast
import functools
import inspect
import math
import re
import textwrap
import types
import warnings
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
    return [p.__name__ for p in prims if p not in covered and p.__name__ not in symbolic.SKIPPED]


# --- sample calls: what each op's drawing differentiates ---------------------------------


@dataclass(frozen=True)
class Sample:
    """``call(m, *inputs)`` calls the op in ``m`` (mlxref.core, or mlx.core in
    the tests) on inputs of ``shapes`` (float32, or int32 when ``integers``)
    named ``names`` (by default ``call``'s parameters after ``m``)."""

    shapes: tuple
    call: object
    integers: bool = False
    names: tuple = ()

    def input_names(self):
        return list(self.names) or list(inspect.signature(self.call).parameters)[1:]

    def text(self, name):
        """The call as a reader writes it: ``mx.conv2d(x, w)``."""
        if self.call.__name__ == "<lambda>":
            body = ast.unparse(lambda_node(self.call).body)
        elif self.names:  # sample's own call
            body = f"m.{name}({', '.join(self.names)})"
        else:  # a function of this module: its body
            lines = inspect.getsource(self.call).splitlines()[1:]
            body = "; ".join(line.strip() for line in lines)
        for helper, text in HELPERS.items():
            body = body.replace(helper, text)
        return re.sub(r"\bm\.", "mx.", body)

    def inputs(self, m):
        """The inputs, the same numbers in any ``m``: 0.25..0.75, or 1, 2, 3..."""
        out = []
        for k, shape in enumerate(self.shapes):
            n = math.prod(shape)
            if self.integers:
                values, dtype = [1 + (i + k) % 7 for i in range(n)], m.int32
            else:
                values, dtype = spread(n, k), m.float32
            out.append(m.array(values, dtype).reshape(shape))
        return out


def spread(n, k, lo=0.25, hi=0.75):
    """``n`` numbers between ``lo`` and ``hi`` for the ``k``-th input of a drawing:
    distinct in a short array, and different from input to input."""
    return [lo + (hi - lo) * ((7 * i + 3 * k) % 11) / 10 for i in range(n)]


def counting(m, outputs):
    """Cotangents 1, 2, 3... for ``outputs`` (not ones: a drawing shows where each goes)."""
    return [m.array([1 + i for i in range(o.size)], o.dtype).reshape(o.shape) for o in outputs]


SHAPES = ((2, 2), (3,), (2, 3))  # what ``sample`` tries, in order
NO_ARRAY = ("makes a new array from numbers (a shape, a size, a seed), so there is no "
            "array input to differentiate")
GPU_ONLY = "runs MLX's GPU kernels, which mlxref does not have, so there is nothing to draw"
NOT_DRAWN = {
    **{name: NO_ARRAY for name in (
        "arange", "bartlett", "blackman", "empty", "eye", "fft.fftfreq", "fft.rfftfreq",
        "hamming", "hanning", "identity", "linspace", "ones", "random.bits", "random.gumbel",
        "random.key", "random.laplace", "random.seed", "random.split", "tri", "zeros")},
    **{name: GPU_ONLY for name in ("fast.cuda_kernel", "fast.metal_kernel",
                                   "fast.precompiled_cuda_kernel")},
    "broadcast_shapes": "takes shapes and returns a shape, not an array",
    "einsum_path": "returns a contraction order (a path and its text), not an array",
    "random.randint": "returns random integers from integer bounds, which is not differentiable",
    "qqmm": ("needs for its vjp a qqmm of unquantized operands, which MLX's CPU build does "
             "not compute (\"[QQMatmul] NYI for the general case\"), and neither does mlxref"),
    "gather_qqmm": ("is not computed by MLX's CPU build (\"[GatherQQMM] NYI\") and has no "
                    "vjp (\"[Primitive::vjp] Not implemented for GatherQQMM\")"),
}


# How the samples' helpers read in the manual.
HELPERS = {"_key(m)": "m.random.key(7)",
           "_packed(m)": "m.quantize(W, group_size=32, bits=4)"}  # W: (2, 32)


def _key(m):
    return m.random.key(7)


def _packed(m):
    """A (2, 32) matrix quantized to 4 bits in groups of 32: (w, scales, biases)."""
    w = m.array([((5 * i) % 17) / 16 - 0.5 for i in range(64)], m.float32).reshape(2, 32)
    return m.quantize(w, group_size=32, bits=4)


def _setitem(m, a, v):
    a[m.array([0, 2])] = v
    return a


# Calls for the ops the signature says too little about: (input shapes, call).
SAMPLES = {
    "argpartition": Sample(((4,),), lambda m, a: m.argpartition(a, 1)),
    "astype": Sample(((2, 2),), lambda m, a: m.astype(a, m.float16)),
    "block_masked_mm": Sample(((32, 32), (32, 32)),
                              lambda m, a, b: m.block_masked_mm(a, b, block_size=32)),
    "broadcast_to": Sample(((2,),), lambda m, a: m.broadcast_to(a, (3, 2))),
    "concat": Sample(((2,), (3,)), lambda m, a, b: m.concat([a, b])),
    "concatenate": Sample(((2,), (3,)), lambda m, a, b: m.concatenate([a, b])),
    "conv1d": Sample(((1, 4, 1), (1, 2, 1)), lambda m, x, w: m.conv1d(x, w)),
    "conv2d": Sample(((1, 3, 3, 1), (1, 2, 2, 1)), lambda m, x, w: m.conv2d(x, w)),
    "conv3d": Sample(((1, 2, 2, 2, 1), (1, 2, 2, 2, 1)), lambda m, x, w: m.conv3d(x, w)),
    "conv_general": Sample(((1, 3, 3, 1), (1, 2, 2, 1)),
                           lambda m, x, w: m.conv_general(x, w, stride=1, padding=1)),
    "conv_transpose1d": Sample(((1, 2, 1), (1, 2, 1)), lambda m, x, w: m.conv_transpose1d(x, w)),
    "conv_transpose2d": Sample(((1, 2, 2, 1), (1, 2, 2, 1)),
                               lambda m, x, w: m.conv_transpose2d(x, w)),
    "conv_transpose3d": Sample(((1, 1, 2, 2, 1), (1, 1, 2, 2, 1)),
                               lambda m, x, w: m.conv_transpose3d(x, w)),
    "dequantize": Sample(((2, 1), (2, 1)), lambda m, scales, biases: m.dequantize(
        _packed(m)[0], scales, biases, group_size=32, bits=4)),
    "dynamic_slice": Sample(((4,),), lambda m, a: m.dynamic_slice(a, m.array([1]), (0,), (2,))),
    "dynamic_slice_update": Sample(((4,), (2,)), lambda m, a, update: m.dynamic_slice_update(
        a, update, m.array([1]), (0,))),
    "einsum": Sample(((2, 2), (2, 2)), lambda m, a, b: m.einsum("ij,jk->ik", a, b)),
    "expand_dims": Sample(((2,),), lambda m, a: m.expand_dims(a, 0)),
    "fast.cross_entropy": Sample(((2, 3),), lambda m, logits: m.fast.cross_entropy(
        logits, m.array([0, 2]))),
    "fast.gated_delta_update": Sample(
        ((1, 1, 1, 2), (1, 1, 1, 2), (1, 1, 1, 2), (1, 1, 1), (1, 1, 1)),
        lambda m, q, k, v, gamma, beta: m.fast.gated_delta_update(q, k, v, gamma, beta)),
    "fast.layer_norm": Sample(((2, 3), (3,), (3,)), lambda m, x, weight, bias: m.fast.layer_norm(
        x, weight, bias, 1e-5)),
    "fast.rms_norm": Sample(((2, 3), (3,)), lambda m, x, weight: m.fast.rms_norm(x, weight, 1e-5)),
    "fast.rope": Sample(((1, 2, 4),), lambda m, a: m.fast.rope(
        a, 4, traditional=False, base=10000.0, scale=1.0, offset=0)),
    "fast.scaled_dot_product_attention": Sample(
        ((1, 1, 2, 2), (1, 1, 2, 2), (1, 1, 2, 2)),
        lambda m, q, k, v: m.fast.scaled_dot_product_attention(q, k, v, scale=0.5)),
    "fft.istft": Sample(((3, 3),), lambda m, z: m.fft.istft(z, n_fft=4, hop_length=2)),
    "fft.stft": Sample(((8,),), lambda m, x: m.fft.stft(x, n_fft=4, hop_length=2)),
    "from_fp8": Sample((), lambda m: m.from_fp8(m.array([56, 64], m.uint8))),
    "full": Sample(((2,),), lambda m, vals: m.full((3, 2), vals)),
    "gather_qmm": Sample(((1, 32),), lambda m, x: m.gather_qmm(
        x, *_packed(m), group_size=32, bits=4)),
    "getitem": Sample(((3,),), lambda m, a: a[m.array([2, 0])]),
    "moveaxis": Sample(((2, 3),), lambda m, a: m.moveaxis(a, 0, 1)),
    "pad": Sample(((2,),), lambda m, a: m.pad(a, 1)),
    "partition": Sample(((4,),), lambda m, a: m.partition(a, 1)),
    "put_along_axis": Sample(((3,), (1,)), lambda m, a, values: m.put_along_axis(
        a, m.array([1]), values, axis=0)),
    "quantize": Sample(((2, 32),), lambda m, w: m.quantize(w, group_size=32, bits=4)),
    "quantized_matmul": Sample(((1, 32),), lambda m, x: m.quantized_matmul(
        x, *_packed(m), group_size=32, bits=4)),
    "random.bernoulli": Sample(((2,),), lambda m, p: m.random.bernoulli(p, key=_key(m))),
    "random.categorical": Sample(((3,),), lambda m, logits: m.random.categorical(
        logits, key=_key(m))),
    "random.multivariate_normal": Sample(((2,),), lambda m, mean: m.random.multivariate_normal(
        mean, m.array([[1.0, 0.5], [0.5, 1.0]]), key=_key(m))),
    "random.normal": Sample(((2,), (2,)), lambda m, loc, scale: m.random.normal(
        (2,), loc=loc, scale=scale, key=_key(m))),
    "random.permutation": Sample(((3,),), lambda m, x: m.random.permutation(x, key=_key(m))),
    "random.truncated_normal": Sample(((2,), (2,)), lambda m, lower, upper:
                                      m.random.truncated_normal(lower, upper, key=_key(m))),
    "random.uniform": Sample(((2,), (2,)), lambda m, low, high: m.random.uniform(
        low, high, (2,), key=_key(m))),
    "repeat": Sample(((2,),), lambda m, a: m.repeat(a, 2)),
    "reshape": Sample(((2, 2),), lambda m, a: m.reshape(a, (4,))),
    "roll": Sample(((3,),), lambda m, a: m.roll(a, 1)),
    "segmented_mm": Sample(((2, 4), (4, 2)), lambda m, a, b: m.segmented_mm(
        a, b, m.array([[0, 2], [2, 4]]))),
    "setitem": Sample(((3,), (2,)), _setitem),
    "slice": Sample(((4,),), lambda m, a: m.slice(a, m.array([1]), (0,), (2,))),
    "slice_update": Sample(((4,), (2,)), lambda m, a, update: m.slice_update(
        a, update, m.array([1]), (0,))),
    "sort": Sample(((4,),), lambda m, a: m.sort(a)),  # (2, 2)'s rows are sorted already
    "split": Sample(((4,),), lambda m, a: m.split(a, 2)),
    "stack": Sample(((2,), (2,)), lambda m, a, b: m.stack([a, b])),
    "swapaxes": Sample(((2, 3),), lambda m, a: m.swapaxes(a, 0, 1)),
    "take": Sample(((3,),), lambda m, a: m.take(a, m.array([2, 0]))),
    "take_along_axis": Sample(((2, 2),), lambda m, a: m.take_along_axis(
        a, m.array([[1], [0]]), axis=1)),
    "tile": Sample(((2,),), lambda m, a: m.tile(a, 2)),
    "topk": Sample(((4,),), lambda m, a: m.topk(a, 2)),
    "unflatten": Sample(((4,),), lambda m, a: m.unflatten(a, 0, (2, 2))),
    "unique": Sample(((4,),), lambda m, a: m.unique(a, 3)),
    "view": Sample(((2,),), lambda m, a: m.view(a, m.float16)),
}


def lambda_node(function):
    """The ``ast.Lambda`` of a lambda, found in its file: the one on its first
    line with its parameters; None where two alike share the line."""
    code = function.__code__
    found = [node for node in ast.walk(_parsed(inspect.getsourcefile(function)))
             if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and tuple(a.arg for a in node.args.args) == code.co_varnames[:code.co_argcount]]
    return found[0] if len(found) == 1 else None


@functools.lru_cache(maxsize=None)
def _parsed(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


class NoSample(ValueError):
    pass


def resolve(m, name):
    """The function ``name`` ("linalg.svd") in the module ``m``."""
    for part in name.split("."):
        m = getattr(m, part)
    return m


def sample(op):
    """The call the drawing of ``op`` makes: ``SAMPLES``' or, else, the first
    of float32 arrays of the ``SHAPES`` for its required positional parameters
    (two for ``*arrays``) that ``op`` takes, then int32 arrays of (2, 2).
    Raises NoSample naming the op when nothing works (it needs a ``SAMPLES`` entry)."""
    return SAMPLES.get(op.name) or _sample(op.name, op.function)


@functools.lru_cache(maxsize=None)
def _sample(name, function):
    names = _required(function)
    call = _calling(name)
    error = None
    for shapes, integers in [(tuple([s] * len(names)), False) for s in SHAPES] + [
            (tuple([(2, 2)] * len(names)), True)]:
        found = Sample(shapes, call, integers, tuple(names))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mx.eval(call(mx, *found.inputs(mx)))
        except Exception as e:  # noqa: BLE001 - the op refuses these: try the next
            error = e
            continue
        return found
    raise NoSample(f"op {name}: no sample call works ({type(error).__name__}: {error}); "
                   "add one to catalogue.SAMPLES or a reason to NOT_DRAWN")


def _required(function):
    """The names of ``function``'s required positional parameters (``a``, ``b``
    for ``*arrays``)."""
    params = inspect.signature(function).parameters.values()
    names = [p.name for p in params if p.default is p.empty
             and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not names and any(p.kind is p.VAR_POSITIONAL for p in params):
        return ["a", "b"]
    return names


def _calling(name):
    """``lambda m, *inputs: m.<name>(*inputs)``."""
    def call(m, *inputs):
        return resolve(m, name)(*inputs)
    return call
