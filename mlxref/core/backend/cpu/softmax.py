"""The softmax kernel, and the exp that MLX's softmax and logsumexp take.

Read alongside: mlx/backend/cpu/softmax.cpp (the kernel: the max taken out,
the exps, their sum, then a multiplication by its inverse), mlx/ops.cpp
(``softmax`` and ``logsumexp`` over any axes but the last one, composed of
ops) and mlx/backend/cpu/simd/math.h (``exp``).

MLX composes logsumexp and softmax over any axes but the last one from ops
(mlx/ops.cpp), each rounding its result to the input's dtype (a precise
softmax: to float32, even for float64), and its softmax kernel keeps a
half-precision input in that type unless ``precise`` (softmax.cpp). Those
roundings show in float16 and bfloat16 results (and in a float64 precise
softmax), so ``softmax`` follows them, and so does ``logsumexp`` (the
primitive's ``_logsumexp``, given its three steps). Elsewhere the roundings
are float32's last bit, as the exp's.
Read next: reduce.py (the runs), mlxref/core/primitives/reduction.py
(``Softmax`` and ``LogSumExp``: their rules and their plain formulas).
"""

import functools
import math

from ... import dtypes as _dt
from ... import scalar as _scalar
from .arg_reduce import argmax
from .reduce import groups, sum_float32, ungroup
from .rounding import rounding


def simd_exp(d):
    """exp of ``d = x - max`` (at most 0) as MLX's softmax kernel and its exp
    op compute it (mlx/backend/cpu/simd/math.h ``exp``): 0 below -88, where
    the true value is a float32 subnormal; so ``softmax([0, -100])`` is
    exactly ``[1, 0]``, in float64 too. (MLX's exp is a float32 polynomial
    for every dtype; mlxref's is Python's, which can differ in the last bit of
    a float32 result and from the 8th digit of a float64 one.)"""
    return 0.0 if d < -88.0 else math.exp(d)


def _softmax(group):
    """exp(group) / sum(exp(group)), stable the same way (a -inf or +inf max gives nan)."""
    m = group[argmax(group)]
    e = [simd_exp(v - m) for v in group]
    total = sum(e)
    return [v / total for v in e]


def _softmax_rounded(group, rounded, composed):
    """Softmax with each result rounded: composed, ``e / sum(e)`` with the sum
    in float32 (a Reduce); in the kernel, a running sum in the dtype itself,
    then ``e * (1 / sum)``."""
    m = group[argmax(group)]
    e = [rounded(simd_exp(rounded(v - m))) for v in group]
    if composed:
        total = rounded(sum_float32(e))
        return [rounded(v / total) for v in e]
    total = 0.0
    for v in e:
        total = rounded(total + v)
    scale = rounded(1 / total)
    return [rounded(v * scale) for v in e]


def softmax(data, shape, axes, dtype, precise, composed, symbolic):
    """The softmax of the elements ``data`` (of an array of ``shape`` and
    ``dtype``) over ``axes``, as MLX's kernel computes it (``composed``:
    as its ops do). ``symbolic`` is the plain formula, for SymPy elements.

    With ``precise``, MLX accumulates a half-precision input in float32
    (and casts to float32 first on the composed path, float64 too);
    otherwise the kernel keeps a float16 or bfloat16 softmax in that type
    at every step. Where nothing rounds on the way, the kernel computes in
    float32 (or float64) and rounds once, as the double here does.
    """
    numeric = _softmax
    if composed:
        working = _dt.float32 if precise else dtype
        rounds = working in (_dt.float16, _dt.bfloat16) or working is not dtype
    else:
        working = dtype
        rounds = not precise and working in (_dt.float16, _dt.bfloat16)
    if rounds:
        numeric = functools.partial(_softmax_rounded, rounded=rounding(working), composed=composed)
    runs = _scalar.apply(numeric, symbolic, groups(data, shape, axes))
    return ungroup(runs, shape, axes)


def logsumexp(data, shape, axes, dtype, composed, numeric, symbolic):
    """The logsumexp of the elements ``data`` (of an array of ``shape`` and
    ``dtype``) over ``axes``: ``numeric(run, rounded, exp, total)`` on each
    run of numbers (the primitive's ``_logsumexp``), ``symbolic(run)`` on
    SymPy ones. On MLX's ``composed`` path a float16 or bfloat16 result is
    rounded at each op, its exp is ``simd_exp`` and its sum a Reduce's
    (float32); elsewhere the kernel computes in float32 and rounds once,
    as the double here does. An empty array raises MLX's error."""
    if not data:
        raise ValueError("[logsumexp] Received empty array.")
    if composed and dtype in (_dt.float16, _dt.bfloat16):
        numeric = functools.partial(numeric, rounded=dtype.cast, exp=simd_exp, total=sum_float32)
    # scalar.apply maps over the runs: each "element" it passes is one run.
    return _scalar.apply(numeric, symbolic, groups(data, shape, axes))
