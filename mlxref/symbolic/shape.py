"""Symbolic cases for the shape and indexing primitives.

Every concrete class of ``mlxref.core.primitives.shape`` and ``.indexing`` has
at least one case here. Indices are constants captured by the programs (only
the data is differentiated). Scatter's "none" mode is checked with distinct
indices only: where updates overlap, MLX's rule (mirrored) gives every update
the cotangent, which is not the derivative of "the last one wins".
"""

from .. import core as mx
from ..core.primitives import indexing as I
from ..core.primitives import shape as S
from ..core.transforms.tape import InTracing
from . import Case


def _set(x, index, v):
    """``x`` with ``x[index] = v``, leaving the input array itself alone."""
    y = mx.array(x)
    y[index] = v
    return y


def _split_three(x):
    # Uses all three pieces of one Split node, one of them twice.
    a, b, c = mx.split(x, [1, 3])
    return mx.concatenate([c * b, a * a])


def shapeless(f):
    """``f`` with its graph built as ``compile(..., shapeless=True)`` traces it
    (the broadcasts then read their shapes from the other operands)."""
    def traced(*args):
        with InTracing(dynamic=True):
            return f(*args)
    return traced


def _take_vjp(x):
    # A Scatter with reduce "sum": gather's vjp, made with x as the cotangent.
    idx = mx.array([1, 0, 1])
    base = mx.zeros((3, 2), x.dtype)
    return mx.vjp(lambda a: mx.take(a, idx, axis=0), [base], [x])[1][0]


CASES = [
    # --- shape.py ---------------------------------------------------------------
    Case(S.Broadcast, lambda x: mx.broadcast_to(x, (2, 3, 2)), ((3, 1),),
         note="a new leading axis and a stretched size-1 axis"),
    Case(S.Broadcast, lambda a, b: a * b, ((2, 1), (3,))),
    Case(S.Broadcast, shapeless(lambda a, b: a * b), ((2, 1), (3,)),
         note="shapeless compile's form: each operand's shape from the other"),
    Case(S.BroadcastAxes, shapeless(lambda a, b: a @ b), ((2, 1, 2, 2), (3, 2, 1)),
         note="matmul's batch axes under shapeless compile"),
    Case(S.Reshape, lambda x: mx.reshape(x, (3, 2)), ((2, 3),)),
    Case(S.Flatten, lambda x: mx.flatten(x, -2, -1), ((2, 2, 2),)),
    Case(S.Unflatten, lambda x: mx.unflatten(x, 1, (2, -1)), ((2, 4),)),
    Case(S.Transpose, lambda x: mx.transpose(x, (1, 2, 0)), ((2, 3, 2),)),
    Case(S.Transpose, lambda x: mx.swapaxes(x, 0, -1), ((2, 3),)),
    Case(S.ExpandDims, lambda x: mx.expand_dims(x, (0, -1)), ((2,),)),
    Case(S.Squeeze, lambda x: mx.squeeze(x, (0, -1)), ((1, 3, 1),)),
    Case(S.Concatenate, lambda a, b: mx.concatenate([a, b], axis=-1), ((2, 1), (2, 2))),
    Case(S.Concatenate, lambda a, b: mx.stack([a, b * b], axis=1), ((2,), (2,))),
    Case(S.Split, _split_three, ((5,),), note="several outputs of one Split"),
    Case(S.Split, lambda x: mx.split(x, 3, axis=1)[1] * 2, ((2, 3),),
         note="the other pieces get zero cotangents"),
    Case(S.Pad, lambda x: mx.pad(x, ((1, 0), (0, 2))), ((2, 2),)),
    Case(S.Pad, lambda x, v: mx.pad(x, 1, constant_values=v), ((2,), ()),
         note="with respect to the pad value too"),
    # --- indexing.py ------------------------------------------------------------
    Case(I.Slice, lambda x: x[1:3], ((4,),)),
    Case(I.Slice, lambda x: x[3:0:-2, ::-1], ((4, 3),), note="negative steps"),
    Case(I.Slice, lambda x: x[..., None, 1], ((2, 3),), note="ellipsis, None and an int"),
    Case(I.SliceUpdate, lambda x, v: _set(x, slice(1, 3), v), ((4,), (2,))),
    Case(I.SliceUpdate, lambda x, v: _set(x, (slice(None, None, -1), 1), v), ((3, 2), (3,)),
         note="a negative step"),
    Case(I.Gather, lambda x: mx.take(x, mx.array([0, 2, 0]), axis=1), ((2, 3),),
         note="a repeated index"),
    Case(I.Gather, lambda x: x[mx.array([1, 1, 0]), 1:], ((2, 3),)),
    Case(I.GatherAxis, lambda x: mx.take_along_axis(x, mx.array([[0, 2], [0, 0]]), axis=0),
         ((3, 2),)),
    Case(I.GatherAxis, lambda x: mx.take_along_axis(x, mx.array([[-1], [0]]), axis=-1),
         ((2, 3),), note="a negative index"),
    Case(I.Scatter, lambda x, v: _set(x, mx.array([3, 0]), v), ((4,), (2,))),
    Case(I.Scatter, lambda x, v: _set(x, (mx.array([2, 0]), slice(0, 2)), v), ((3, 3), (2, 2)),
         note="an update window that spans a slice"),
    Case(I.Scatter, _take_vjp, ((3, 2),), note="reduce sum, as gather's vjp makes it"),
    # x.at[...]: Scatter and SliceUpdate with every reduce type. Repeated
    # indices make "prod" need the product of the *other* updates at an
    # element, and "max"/"min" compare several updates there.
    Case(I.Scatter, lambda x, v: x.at[mx.array([2, 0, 2])].add(v), ((3,), (3,)),
         note="reduce sum with a repeated index"),
    Case(I.Scatter, lambda x, v: x.at[mx.array([2, 0, 2])].multiply(v), ((3,), (3,)),
         note="reduce prod with a repeated index (MLX has no vjp or jvp)"),
    Case(I.Scatter, lambda x, v: x.at[(mx.array([1, 1]), slice(0, 2))].divide(v),
         ((2, 3), (2, 2)), domain="positive",
         note="reduce prod of reciprocals over a window (divide)"),
    Case(I.Scatter, lambda x, v: x.at[mx.array([0, 0])].maximum(v), ((1,), (2,)),
         note="reduce max with a repeated index (MLX has no jvp)"),
    Case(I.Scatter, lambda x, v: x.at[mx.array([1, 1])].minimum(v), ((2,), (2,)),
         note="reduce min with a repeated index (MLX has no jvp)"),
    Case(I.SliceUpdate, lambda x, v: x.at[1:3].add(v), ((4,), (2,)), note="reduce sum"),
    Case(I.SliceUpdate, lambda x, v: x.at[::2, 1].multiply(v), ((3, 2), (2,)),
         note="reduce prod (MLX has no jvp)"),
    Case(I.SliceUpdate, lambda x, v: x.at[:1].maximum(v), ((2,), (1,)),
         note="reduce max (MLX has no jvp)"),
    Case(I.SliceUpdate, lambda x, v: x.at[1:].minimum(v), ((2,), ()),
         note="reduce min (MLX has no jvp)"),
    Case(I.Scatter, lambda x, v: mx.put_along_axis(x, mx.array([[1], [0]]), v, axis=1),
         ((2, 3), (2, 1)), note="put_along_axis"),
    Case(I.DynamicSlice, lambda x: mx.slice(x, mx.array([1, 0]), (0, 1), (2, 2)), ((3, 3),)),
    Case(I.DynamicSliceUpdate, lambda x, v: mx.slice_update(x, v, mx.array(1), (1,)),
         ((2, 3), (2, 2))),
    Case(I.MaskedScatter, lambda x, v: _set(x, mx.array([True, False, True]), v), ((3,), (2,))),
    Case(I.MaskedScatter, lambda x, v: _set(x, mx.array([False, True]), v), ((2, 2), (2,)),
         note="a mask over the leading axis"),
    Case(S.AsStrided, lambda x: mx.as_strided(x, (3, 2), (1, 1), 1), ((2, 3),),
         note="overlapping windows: an element read twice gets both cotangents"),
    Case(S.AsStrided, lambda x: mx.as_strided(x.T, (2, 2), (-1, 1), 2), ((2, 2),),
         note="a negative stride"),
    Case(S.Contiguous, lambda x: mx.contiguous(x.T), ((2, 3),)),
    Case(S.View, lambda x: mx.view(mx.view(x, mx.int64), x.dtype), ((2, 3),), raises=True,
         note="MLX defines no vjp or jvp for it; symbols keep their names through "
              "same-size views, so a view and its inverse give x back"),
]
