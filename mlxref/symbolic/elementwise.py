"""Symbolic cases for the elementwise primitives (and Copy, AsType, StopGradient)."""

import importlib

from .. import core as mx
from ..core.primitives import base as B
from ..core.primitives import elementwise as E
from ..core.primitives.compiled import Compiled

# (the package's ``compile`` is the function; the module is reached by name)
compile_module = importlib.import_module("..core.transforms.compile", __package__)
from . import Case

V = ((3,),)  # one input, a vector
VV = ((2, 1), (3,))  # two inputs that broadcast, so Broadcast's rules run too


def _bitwise(op):
    """``op`` on the inputs cast to int32, as a float again. On symbols the
    cast leaves ``x`` as it is, and the bitwise function takes the integer
    part of a number as the cast does, so the forward check still compares."""
    return lambda *xs: op(*(x.astype(mx.int32) for x in xs)).astype(xs[0].dtype)


def _divmod_both(a, b):
    # Uses both outputs of one DivMod node.
    q, r = mx.divmod(a, b)
    return q + r * r


def _fused(f):
    """``f``'s graph as ``mx.compile`` fuses it (compile's own trace, simplify
    and fuse), replayed on the case's arrays, tracers included, where a
    compiled function would step aside and call ``f``: so the transforms
    meet the Compiled node, and raise MLX's error."""
    entries = {}

    def replay(*xs):
        key = tuple((x.shape, x.dtype) for x in xs)
        if key not in entries:
            entries[key] = compile_module.trace_entry(f, xs)
        return compile_module.compile_replace(entries[key], list(xs))[0]

    return replay


def _compiled(x, y):
    """sin(x) * y + x as one Compiled node (what mx.compile fuses it into)."""
    tape = [(E.Sin(), [0], x.dtype), (E.Multiply(), [2, 1], x.dtype), (E.Add(), [3, 0], x.dtype)]
    return B.make_array(Compiled(tape, [x.dtype, y.dtype], [2], [x.size, y.size]), [x, y])


# MLX's Compiled has no vjp, jvp or vmap (a compiled function called on
# tracers runs the function itself): its cases check the fused forward, and
# that each transform raises this.
COMPILED_ERROR = (RuntimeError, "[Compiled] Cannot {mode} primitive")

CASES = [
    Case(Compiled, _compiled, ((3,), (3,)), note="a fused chain, as mx.compile builds it",
         raises=True, no_vmap=True, error=COMPILED_ERROR),
    Case(Compiled, _fused(lambda x, y: mx.exp(-x) * y + mx.tanh(y) / (x * x + 1)), VV,
         note="mx.compile's fusion: broadcasts, a shared subexpression",
         raises=True, no_vmap=True, error=COMPILED_ERROR),
    Case(Compiled, _fused(lambda x: (lambda e: e * mx.log1p(e) - mx.sigmoid(x))(mx.exp(x))),
         V, note="mx.compile's fusion: sigmoid, a step on whole lists",
         raises=True, no_vmap=True, error=COMPILED_ERROR),
    Case(B.Copy, lambda x: B.make_array(B.Copy(), [x]), V,
         note="only a transform's tracers are Copy nodes"),
    Case(B.AsType, lambda x: x.astype(mx.float32), V),
    Case(B.StopGradient, lambda x: mx.stop_gradient(x) + 0, V, zero=True,
         note="the transforms never cross it"),
    Case(E.Abs, mx.abs, V),
    Case(E.Negative, mx.negative, V),
    Case(E.Sign, mx.sign, V, zero=True),
    Case(E.Square, mx.square, V),
    Case(E.Sqrt, mx.sqrt, V, "positive"),
    Case(E.Rsqrt, mx.rsqrt, V, "positive"),
    Case(E.Exp, mx.exp, V),
    Case(E.Expm1, mx.expm1, V),
    Case(E.Log, mx.log, V, "positive"),
    Case(E.Log, mx.log2, V, "positive"),
    Case(E.Log, mx.log10, V, "positive"),
    Case(E.Log1p, mx.log1p, V, "positive"),
    Case(E.Sin, mx.sin, V),
    Case(E.Cos, mx.cos, V),
    Case(E.Tan, mx.tan, V, "unit"),
    Case(E.ArcSin, mx.arcsin, V, "unit"),
    Case(E.ArcCos, mx.arccos, V, "unit"),
    Case(E.ArcTan, mx.arctan, V),
    Case(E.Sinh, mx.sinh, V),
    Case(E.Cosh, mx.cosh, V),
    Case(E.Tanh, mx.tanh, V),
    Case(E.ArcSinh, mx.arcsinh, V),
    Case(E.ArcCosh, mx.arccosh, V, "above_one"),
    Case(E.ArcTanh, mx.arctanh, V, "unit"),
    Case(E.Sigmoid, mx.sigmoid, V),
    Case(E.Erf, mx.erf, V),
    Case(E.ErfInv, mx.erfinv, V, "unit"),
    Case(E.Floor, mx.floor, V, zero=True),
    Case(E.Ceil, mx.ceil, V, zero=True),
    Case(E.Round, mx.round, V, zero=True),
    Case(E.LogicalNot, lambda x: mx.logical_not(x).astype(x.dtype), V, zero=True),
    Case(E.Add, mx.add, VV),
    Case(E.Subtract, mx.subtract, VV),
    Case(E.Multiply, mx.multiply, VV),
    Case(E.Divide, mx.divide, VV, "positive"),
    Case(E.FloorDivide, mx.floor_divide, VV, "positive", zero=True),
    Case(E.Remainder, mx.remainder, VV, "positive"),
    Case(E.DivMod, lambda a, b: _divmod_both(a, b), VV, "positive",
         note="both outputs; the quotient's rules are zero"),
    Case(E.Power, mx.power, VV, "positive"),
    Case(E.Maximum, mx.maximum, VV),
    Case(E.Minimum, mx.minimum, VV),
    Case(E.ArcTan2, mx.arctan2, VV, "positive"),
    Case(E.LogAddExp, mx.logaddexp, VV),
    Case(E.Equal, lambda a, b: mx.equal(a, b).astype(a.dtype), VV, zero=True),
    Case(E.NotEqual, lambda a, b: mx.not_equal(a, b).astype(a.dtype), VV, zero=True),
    Case(E.Less, lambda a, b: mx.less(a, b).astype(a.dtype), VV, zero=True),
    Case(E.LessEqual, lambda a, b: mx.less_equal(a, b).astype(a.dtype), VV, zero=True),
    Case(E.Greater, lambda a, b: mx.greater(a, b).astype(a.dtype), VV, zero=True),
    Case(E.GreaterEqual, lambda a, b: mx.greater_equal(a, b).astype(a.dtype), VV, zero=True),
    Case(E.LogicalAnd, lambda a, b: mx.logical_and(a, b).astype(a.dtype), VV, zero=True),
    Case(E.LogicalOr, lambda a, b: mx.logical_or(a, b).astype(a.dtype), VV, zero=True),
    Case(E.Select, lambda x, y: mx.where(mx.array([[True], [False]]), x, y), VV),
    Case(E.BitwiseBinary, _bitwise(mx.bitwise_and), VV, zero=True, note="and"),
    Case(E.BitwiseBinary, _bitwise(mx.bitwise_or), VV, zero=True, note="or"),
    Case(E.BitwiseBinary, _bitwise(mx.bitwise_xor), VV, zero=True, note="xor"),
    Case(E.BitwiseBinary, _bitwise(mx.left_shift), VV, "positive", zero=True, note="left_shift"),
    Case(E.BitwiseBinary, _bitwise(mx.right_shift), VV, "positive", zero=True,
         note="right_shift"),
    Case(E.BitwiseInvert, _bitwise(mx.bitwise_invert), V, raises=True,
         note="MLX defines no vjp or jvp for it"),
]

# complex64 inputs x + I y: MLX's convention (the vjp conjugates the jvp's
# multiplier) for the holomorphic functions, and the rules of its own for each
# non-holomorphic one (abs, real, imag, conj). See mlxref/symbolic/__init__.py.
C = ((2,),)  # one complex input
CC = ((2, 1), (2,))  # two complex inputs that broadcast

CASES += [
    Case(E.Real, mx.real, C, "complex", note="complex: a real output"),
    Case(E.Imag, mx.imag, C, "complex", note="complex: a real output"),
    Case(E.Conjugate, mx.conj, C, "complex", note="complex: not holomorphic"),
    Case(E.Abs, mx.abs, ((1,),), "complex", note="complex: |z| as float32"),
    Case(E.Real, lambda z: mx.real(z * mx.conj(z)), C, "complex",
         note="complex: |z|^2, whose gradient is 2 z"),
    Case(E.Imag, lambda z: mx.imag(mx.log(z)), C, "complex", note="complex: arg z"),
    Case(E.Sign, mx.sign, C, "complex", zero=True, note="complex: z / |z|"),
    Case(E.Negative, mx.negative, C, "complex", note="complex"),
    Case(E.Square, mx.square, C, "complex", note="complex"),
    Case(E.Sqrt, mx.sqrt, C, "complex", note="complex"),
    Case(E.Rsqrt, mx.rsqrt, C, "complex", note="complex"),
    Case(E.Exp, mx.exp, C, "complex", note="complex"),
    Case(E.Log, mx.log, C, "complex", note="complex"),
    Case(E.Log, mx.log10, ((1,),), "complex", note="complex"),
    Case(E.Log1p, mx.log1p, C, "complex", note="complex"),
    Case(E.Sin, mx.sin, C, "complex", note="complex"),
    Case(E.Cos, mx.cos, C, "complex", note="complex"),
    Case(E.Tan, mx.tan, ((1,),), "complex", note="complex"),
    Case(E.ArcSin, mx.arcsin, C, "complex", note="complex"),
    Case(E.ArcCos, mx.arccos, C, "complex", note="complex"),
    Case(E.ArcTan, mx.arctan, C, "complex", note="complex"),
    Case(E.Sinh, mx.sinh, C, "complex", note="complex"),
    Case(E.Cosh, mx.cosh, C, "complex", note="complex"),
    Case(E.Tanh, mx.tanh, C, "complex", note="complex"),
    Case(E.ArcSinh, mx.arcsinh, C, "complex", note="complex"),
    Case(E.ArcCosh, mx.arccosh, C, "complex", note="complex: Re z < 0 too"),
    Case(E.ArcTanh, mx.arctanh, C, "complex", note="complex"),
    Case(E.Add, mx.add, CC, "complex", note="complex"),
    Case(E.Subtract, mx.subtract, CC, "complex", note="complex"),
    Case(E.Multiply, mx.multiply, CC, "complex", note="complex"),
    Case(E.Divide, mx.divide, CC, "complex", note="complex"),
    Case(E.Power, mx.power, ((1,), (1,)), "complex", note="complex"),
    Case(E.Select, lambda x, y: mx.where(mx.array([[True], [False]]), x, y), CC, "complex",
         note="complex"),
    Case(B.AsType, lambda z: mx.abs(z), ((1,),), "complex",
         note="complex: the cast of |z| + 0j to float32"),
]
