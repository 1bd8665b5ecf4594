"""Symbolic cases for the reductions (Reduce, ArgReduce, Scan, LogSumExp,
Softmax), the matrix product and the creation primitives (Full, Arange,
RandomBits).

SymPy cannot order two independent symbols, and max, min, argmax and argmin
must pick an element. Their cases therefore compare ``x_i + c`` for constant
offsets ``c``: the order is decided, yet the result still depends on the
symbols, so the routing of the cotangent (split evenly between ties in the
vjp, the first arg max in the jvp) is checked exactly.
"""

from .. import core as mx
from ..core.primitives import creation as C
from ..core.primitives import linalg as L
from ..core.primitives import reduction as R
from . import Case
from .shape import shapeless


def offsets(x, values):
    """Each element of ``x`` beside shifted copies of itself: ``x[..., None] +
    values`` (``x[..., None, None] + values`` for a table of offsets)."""
    values = mx.array(values)
    return mx.expand_dims(x, list(range(-values.ndim, 0))) + values


CASES = [
    # Reduce: sum
    Case(R.Reduce, lambda x: mx.sum(x, axis=1), ((2, 3),), note="sum"),
    Case(R.Reduce, lambda x: mx.sum(x, axis=(0, -1), keepdims=True), ((2, 1, 2),),
         note="sum over two axes, keepdims"),
    # Reduce: prod (and a product with a zero factor, which must not divide)
    Case(R.Reduce, lambda x: mx.prod(x, axis=-1), ((2, 3),), note="prod"),
    Case(R.Reduce, lambda x: mx.prod(x, axis=(0, 2), keepdims=True), ((2, 1, 2),),
         note="prod over two axes, keepdims"),
    Case(R.Reduce, lambda x: mx.prod(x * mx.array([1.0, 0.0, 1.0]), axis=0), ((3,),),
         note="prod with a zero factor"),
    # Reduce: max and min (ordered by constant offsets; ties in the second ones)
    Case(R.Reduce, lambda x: mx.max(offsets(x, [0.0, 1.0, -1.0]), axis=-1), ((2,),),
         note="max"),
    Case(R.Reduce, lambda x: mx.max(offsets(x, [0.0, 1.0, 1.0]), axis=-1, keepdims=True),
         ((2,),), note="max with a tie"),
    Case(R.Reduce,
         lambda x: mx.min(offsets(x, [[0.0, 1.0], [-1.0, -1.0]]), axis=(-2, -1)),
         ((2,),), note="min over two axes, with a tie"),
    Case(R.Reduce, lambda x: mx.min(offsets(x, [2.0, 0.5, 3.0]), axis=(0, 1)), ((1,),),
         note="min over every axis"),
    # Reduce: all, any (bool results: MLX's zero rule)
    Case(R.Reduce, lambda x: mx.all(x, axis=0).astype(x.dtype), ((2, 2),), "positive",
         zero=True, note="all"),
    Case(R.Reduce, lambda x: mx.any(x, keepdims=True).astype(x.dtype), ((3,),), "positive",
         zero=True, note="any"),
    # ArgReduce (an index: zero rule)
    Case(R.ArgReduce,
         lambda x: mx.argmax(offsets(x, [0.0, 1.0, -1.0]), axis=-1).astype(x.dtype), ((2,),),
         zero=True, note="argmax"),
    Case(R.ArgReduce,
         lambda x: mx.argmin(offsets(x, [0.0, 1.0, -1.0]), keepdims=True).astype(x.dtype),
         ((1,),), zero=True, note="argmin of the flattened array"),
    # Scan: cumsum, every direction
    Case(R.NumberOfElements, shapeless(lambda x: mx.mean(x, axis=-1) * mx.var(x)), ((2, 3),),
         note="mean and var under shapeless compile: 1/n and n as nodes"),
    Case(R.Scan, lambda x: mx.cumsum(x, axis=1), ((2, 3),), note="cumsum"),
    Case(R.Scan, lambda x: mx.cumsum(x, axis=0, reverse=True), ((3, 2),),
         note="reverse cumsum"),
    Case(R.Scan, lambda x: mx.cumsum(x, axis=-1, inclusive=False), ((2, 3),),
         note="exclusive cumsum"),
    Case(R.Scan, lambda x: mx.cumsum(x, reverse=True, inclusive=False), ((2, 2),),
         note="reverse exclusive cumsum of the flattened array"),
    # Scan: cumprod (through zeros: one zero, then two, must not divide), cummax and
    # cummin (ordered by constant offsets; ties go to the latest element in scan
    # order), logcumsumexp
    Case(R.Scan, lambda x: mx.cumprod(x, axis=1), ((2, 3),), "positive", note="cumprod"),
    Case(R.Scan, lambda x: mx.cumprod(x * mx.array([1.0, 0.0, 1.0, 1.0]), reverse=True),
         ((4,),), "positive", note="reverse cumprod through a zero"),
    Case(R.Scan, lambda x: mx.cumprod(x * mx.array([1.0, 0.0, 1.0, 0.0, 1.0]), inclusive=False),
         ((5,),), "positive", note="exclusive cumprod through two zeros"),
    Case(R.Scan, lambda x: mx.cumprod(x * mx.array([1.0, 0.0, 1.0, 1.0]), reverse=True,
                                      inclusive=False), ((4,),), "positive",
         note="reverse exclusive cumprod through a zero"),
    Case(R.Scan, lambda x: mx.cummax(offsets(x, [0.0, 1.0, 1.0, -1.0, 2.0]), axis=-1),
         ((2,),), note="cummax with a tie"),
    Case(R.Scan, lambda x: mx.cummax(offsets(x, [1.0, 0.0, 1.0, 2.0]), reverse=True,
                                     inclusive=False), ((1,),),
         note="reverse exclusive cummax with a tie"),
    Case(R.Scan, lambda x: mx.cummin(offsets(x, [0.0, -1.0, -1.0, 1.0]), axis=1,
                                     inclusive=False), ((2,),),
         note="exclusive cummin with a tie"),
    Case(R.Scan, lambda x: mx.cummin(offsets(x, [[0.0, -1.0], [-1.0, 2.0]]), axis=-2,
                                     reverse=True), ((1,),),
         note="reverse cummin over a middle axis"),
    Case(R.Scan, lambda x: mx.logcumsumexp(x, axis=0), ((2, 2),), note="logcumsumexp"),
    Case(R.Scan, lambda x: mx.logcumsumexp(x, reverse=True, inclusive=False), ((3,),),
         note="reverse exclusive logcumsumexp"),
    # LogSumExp and Softmax
    Case(R.LogSumExp, lambda x: mx.logsumexp(x, axis=-1), ((2, 2),)),
    Case(R.LogSumExp, lambda x: mx.logsumexp(x, axis=0, keepdims=True), ((3, 1),),
         note="keepdims, not the last axis"),
    Case(R.LogSumExp, lambda x: mx.logsumexp(x), ((2, 2),), note="every axis"),
    Case(R.Softmax, lambda x: mx.softmax(x, axis=-1), ((2, 2),)),
    Case(R.Softmax, lambda x: mx.softmax(x, axis=0), ((3, 1),), note="not the last axis"),
    Case(R.Softmax, lambda x: mx.softmax(x, axis=(0, 1)), ((2, 2),), note="two axes"),
    # Matmul
    Case(L.Matmul, lambda a, b: a @ b, ((2, 2), (2, 3)), note="matrix . matrix"),
    Case(L.Matmul, lambda a, b: a @ b, ((3,), (3,)), note="vector . vector"),
    Case(L.Matmul, lambda a, b: a @ b, ((2, 3), (3,)), note="matrix . vector"),
    Case(L.Matmul, lambda a, b: a @ b, ((2, 1, 2), (1, 2, 2)),
         note="batched, batch dims broadcast"),
    Case(L.Matmul, lambda a, b: a @ b, ((2, 2, 2), (2, 1)), note="a stack times one matrix"),
    # AddMM: c + a @ b, with alpha and beta
    Case(L.AddMM, lambda c, a, b: mx.addmm(c, a, b), ((2, 2), (2, 3), (3, 2))),
    Case(L.AddMM, lambda c, a, b: mx.addmm(c, a, b, 2.0, 0.5), ((2,), (2, 2), (2, 2)),
         note="alpha and beta; c broadcast"),
    Case(L.AddMM, lambda c, a, b: mx.addmm(c, a, b, -1.0, 0.0), ((2, 1), (2, 2, 2), (2, 1)),
         note="batched, matrix . vector; beta 0 leaves c out"),
    # Inverse (linalg.inv, linalg.tri_inv)
    Case(L.Inverse, lambda a: mx.linalg.inv(a), ((2, 2),)),
    Case(L.Inverse, lambda a: mx.linalg.inv(a), ((2, 2, 2),), note="a stack of matrices"),
    Case(L.Inverse, lambda a: mx.linalg.tri_inv(a), ((2, 2),), note="tri_inv reads the lower triangle"),
    Case(L.Inverse, lambda a: mx.linalg.tri_inv(a, upper=True), ((3, 3),),
         note="tri_inv reads the upper triangle"),
    # complex64 inputs (MLX's convention: the vjp of prod and matmul conjugates)
    Case(R.Reduce, lambda z: mx.sum(z, axis=0), ((2, 1),), "complex", note="complex sum"),
    Case(R.Reduce, lambda z: mx.prod(z, axis=-1), ((1, 2),), "complex", note="complex prod"),
    Case(L.Matmul, lambda a, b: a @ b, ((1, 2), (2, 1)), "complex", note="complex"),
    Case(R.Scan, lambda z: mx.cumsum(z), ((2,),), "complex", note="complex cumsum"),
    Case(R.Scan, lambda z: mx.cumprod(z, reverse=True), ((2,),), "complex",
         note="complex cumprod (MLX's vjp does not conjugate; mlxref's does)"),
    # Creation
    Case(C.Full, lambda x: mx.full((2, 3), x), ((3,),), note="full of a broadcast row"),
    Case(C.Full, lambda x: mx.full((2,), x), ((),), note="full of a scalar"),
    Case(C.Arange, lambda x: x * mx.arange(3), ((3,),),
         note="no inputs: never on a tape, so its own rules never run"),
    Case(C.RandomBits, lambda x: x * mx.random.uniform(shape=(3,), key=mx.random.key(7)),
         ((3,),), note="a constant key: the bits are constants (the key's rules never run)"),
]
