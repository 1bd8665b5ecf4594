"""Symbolic cases for sorting and selection (Sort, ArgSort, Partition,
ArgPartition, SearchSorted).

As for max and argmax (see reduction.py), the elements are ``x_i + c`` for
constant offsets ``c``, so SymPy can order them while the outputs still
depend on the symbols: the vjp must send each cotangent back to the element
that landed there, the jvp must gather the tangents the same way, and the
indices get MLX's zero rule.
"""

from .. import core as mx
from ..core.primitives import sort as S
from . import Case
from .reduction import offsets

CASES = [
    # Sort: a permutation of the input, ties (equal offsets) kept in order
    Case(S.Sort, lambda x: mx.sort(offsets(x, [0.0, 1.0, -1.0])), ((2,),),
         note="sort of the last axis"),
    Case(S.Sort, lambda x: mx.sort(offsets(x, [[0.0, 2.0], [1.0, 0.0]]), axis=1), ((2,),),
         note="sort of a middle axis, with a tie"),
    Case(S.Sort, lambda x: mx.sort(offsets(x, [[1.0, -1.0], [0.0, 2.0]]), axis=None), ((1,),),
         note="sort of the flattened array"),
    # ArgSort (indices: zero rule)
    Case(S.ArgSort,
         lambda x: mx.argsort(offsets(x, [0.0, 1.0, -1.0])).astype(x.dtype), ((2,),),
         zero=True, note="argsort of the last axis"),
    Case(S.ArgSort,
         lambda x: mx.argsort(offsets(x, [[0.0, 2.0], [1.0, -1.0]]), axis=1).astype(x.dtype),
         ((2,),), zero=True, note="argsort of a middle axis"),
    # Partition, directly and as topk builds it
    Case(S.Partition, lambda x: mx.partition(offsets(x, [2.0, 0.0, 3.0, 1.0, -1.0]), 2),
         ((2,),), note="partition of the last axis"),
    Case(S.Partition,
         lambda x: mx.partition(offsets(x, [[1.0, 0.0], [-1.0, 1.0]]), -1, axis=1), ((2,),),
         note="partition of a middle axis at kth=-1, with a tie"),
    Case(S.Partition, lambda x: mx.topk(offsets(x, [0.5, 3.0, -2.0, 1.0]), 2), ((2,),),
         note="topk: a partition and a slice"),
    # ArgPartition (indices: zero rule)
    Case(S.ArgPartition,
         lambda x: mx.argpartition(offsets(x, [2.0, 0.0, 3.0, 1.0]), 1).astype(x.dtype),
         ((2,),), zero=True, note="argpartition"),
    # SearchSorted (indices: zero rule). The sequence is a constant, since MLX
    # cannot vmap over it, and the values are ``0 * x + c``, which SymPy
    # compares with it; they still hang from ``x`` in the graph, so the rules
    # run and vmap batches them.
    Case(S.SearchSorted,
         lambda x: mx.searchsorted(mx.array([0.0, 1.0, 1.0, 2.0]),
                                   offsets(0 * x, [1.0, -1.0, 0.5, 3.0])).astype(x.dtype),
         ((2,),), zero=True, note="searchsorted, side left, at a tie"),
    Case(S.SearchSorted,
         lambda x: mx.searchsorted(mx.array([0.0, 1.0, 1.0, 2.0]),
                                   offsets(0 * x, [[1.0, -1.0], [0.5, 2.0]]),
                                   side="right").astype(x.dtype),
         ((2,),), zero=True, note="searchsorted, side right, values of two dimensions"),
]
