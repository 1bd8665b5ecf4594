"""``mx.random``: MLX's counter-based random numbers, value for value.

Read alongside: mlx/random.cpp (every sampler), mlx/backend/cpu/threefry.cpp
and ``RandomBits::eval_cpu`` in mlx/backend/cpu/primitives.cpp (the bits),
and python/src/random.cpp (signatures, the global key sequence).

A key is a uint32 array of shape ``(2,)``. ``bits`` hashes counters under a
key with Threefry 2x32 (the ``RandomBits`` primitive, in
mlxref/core/primitives/creation.py; its kernel in
mlxref/core/backend/cpu/threefry.py), and every sampler turns those bits into
its distribution with ordinary ops in MLX's order, so the same key gives
MLX's numbers, and gradients reach ``low``, ``high``, ``loc``, ``scale``,
``mean`` and ``logits`` through those ops as they do in MLX.

Without ``key``, a sampler takes the next key of the global sequence:
``split`` the state key in two, keep the first half as the new state and
use the second. ``seed(s)`` sets the state to ``key(s)``; before any
``seed`` it is ``key`` of the time in milliseconds, as in MLX. ``state`` is
a one-element list holding the state key (MLX's ``mx.random.state``). mlxref
keeps that key evaluated (its words are computed at once, not as a growing
chain of lazy splits).
"""

import builtins
import math
import time

from . import dtypes as _dt
from .array import array
from .printing import format_shape
from .ops.common import astype, broadcast_shapes, incompatible_arguments, is_int, to_shape
from .convert import scalar_or_array
from .ops.creation import check_dtype
from .ops.docs import shared_doc
from .ops.elementwise import (
    abs,
    add,
    divide,
    equal,
    erf,
    erfinv,
    exp,
    floor,
    less,
    less_equal,
    log,
    log1p,
    maximum,
    minimum,
    multiply,
    negative,
    sign,
    subtract,
    where,
)
from .ops.indexing import take
from .ops.linalg import matmul
from .ops.reduction import argmax, cumsum, max, sum
from .ops.shape import expand_dims, reshape, squeeze
from .ops.sort import argsort
from .backend.cpu.threefry import random_words
from .primitives.base import make_array
from .primitives.creation import RandomBits

__all__ = [
    "seed", "key", "split", "bits", "uniform", "normal", "randint", "bernoulli",
    "truncated_normal", "gumbel", "categorical", "laplace", "permutation",
    "multivariate_normal", "state",
]

_KEY = "key: array | None = None, stream: StreamOrDevice = None"
_SIGNATURES = {
    "seed": "seed(seed: int) -> None",
    "key": "key(seed: int) -> mlx.core.array",
    "split": "split(key: array, num: int = 2, stream: StreamOrDevice = None) -> array",
    "bits": f"bits(shape: Sequence[int] = [], width: int = 4, {_KEY}) -> array",
    "uniform": "uniform(low: scalar | array = 0, high: scalar | array = 1, "
    f"shape: Sequence[int] = [], dtype: Dtype | None = float32, {_KEY}) -> array",
    "normal": "normal(shape: Sequence[int] = [], dtype: Dtype | None = float32, "
    f"loc: scalar | array | None = None, scale: scalar | array | None = None, {_KEY}) -> array",
    "multivariate_normal": "multivariate_normal(mean: array, cov: array, "
    f"shape: Sequence[int] = [], dtype: Dtype | None = float32, {_KEY}) -> array",
    "randint": "randint(low: scalar | array, high: scalar | array, shape: Sequence[int] = [], "
    f"dtype: Dtype | None = int32, {_KEY}) -> array",
    "bernoulli": "bernoulli(p: scalar | array = 0.5, shape: Sequence[int] | None = None, "
    f"{_KEY}) -> array",
    "truncated_normal": "truncated_normal(lower: scalar | array, upper: scalar | array, "
    f"shape: Sequence[int] | None = None, dtype: Dtype | None = float32, {_KEY}) -> array",
    "gumbel": f"gumbel(shape: Sequence[int] = [], dtype: Dtype | None = float32, {_KEY}) -> array",
    "categorical": "categorical(logits: array, axis: int = -1, shape: Sequence[int] | None = None, "
    f"num_samples: int | None = None, {_KEY}) -> array",
    "laplace": "laplace(shape: Sequence[int] = [], dtype: Dtype | None = float32, "
    f"loc: float = 0.0, scale: float = 1.0, {_KEY}) -> array",
    "permutation": f"permutation(x: int | array, axis: int = 0, {_KEY}) -> array",
}

_UINT32_MAX = 2**32 - 1
_BELOW_ONE = {  # the largest value below 1 of each dtype uniform supports, as a float32
    _dt.float32: 1 - 2.0**-24,
    _dt.float16: 1 - 2.0**-11,
    _dt.bfloat16: 1 - 2.0**-8,
}


# --- keys and the global sequence ---------------------------------------------------


def _key_words(seed):
    return [seed >> 32, seed & 0xFFFFFFFF]


def key(seed):
    """``mx.random.key``: the random key of a 64-bit ``seed``: a uint32 array of shape ``(2,)`` holding its high and low 32-bit words.

    Every sampler of ``mx.random`` takes such a key; the same key always gives
    the same numbers, MLX's numbers (Threefry 2x32, as MLX's CPU computes it).

    Arguments:
    - ``seed``: an int in ``[0, 2**64)``.

    Errors: ``TypeError`` for anything else, a negative int included (MLX's
    "incompatible function arguments" message, with the signature).

    >>> mx.random.key(0)
    array([0, 0], dtype=uint32)
    >>> mx.random.key(2**32 + 5)
    array([1, 5], dtype=uint32)
    """
    if not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise incompatible_arguments(_SIGNATURES["key"], (seed,))
    return array(_key_words(seed), _dt.uint32)


state = [key(int(time.time() * 1000))]


def seed(seed):
    """``mx.random.seed``: restart the global key sequence from ``key(seed)``.

    A sampler called without ``key`` takes the next key of that sequence: it
    splits the state key in two, keeps the first half as the new state and uses
    the second. So after ``seed(s)`` the first draw equals the same draw with
    ``key=split(key(s))[1]``, as the example shows. Before any ``seed`` the
    state is ``key`` of the time in milliseconds, as in MLX. Returns None.

    Arguments:
    - ``seed``: an int in ``[0, 2**64)``.

    Errors: ``TypeError`` for anything else (MLX's "incompatible function
    arguments" message, with the signature).

    >>> mx.random.seed(0)
    >>> mx.random.uniform(shape=(2,))
    array([0.576551, 0.299172], dtype=float32)
    >>> mx.random.uniform(shape=(2,), key=mx.random.split(mx.random.key(0))[1])
    array([0.576551, 0.299172], dtype=float32)
    """
    if not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise incompatible_arguments(_SIGNATURES["seed"], (seed,))
    state[0] = key(seed)


def _next_key():
    """MLX's ``KeySequence::next``: split the state key; keep one half, return the other."""
    if not state[0].is_available():  # a placeholder of mx.compile: split lazily, as MLX
        keys = split(state[0])
        state[0] = keys[0]
        return keys[1]
    words = random_words(tuple(state[0].tolist()), 4)  # split(state, 2), computed now
    state[0] = array(words[:2], _dt.uint32)
    return array(words[2:], _dt.uint32)


def _key_arg(key, name, args):
    """The key a sampler uses: ``key`` (an array), or the next of the global sequence."""
    if key is None:
        return _next_key()
    if not isinstance(key, array):
        raise incompatible_arguments(_SIGNATURES[name], args, {"key": key})
    return key


def _check_key(key):
    if key.dtype is not _dt.uint32:
        raise ValueError(f"[bits] Expected key type uint32 but received {key.dtype.name}.")
    if key.shape != (2,):
        raise ValueError(f"[bits] Expected key shape (2) but received {format_shape(key.shape)}.")


@shared_doc
def bits(shape=(), width=4, key=None, stream=None):
    """``mx.random.bits``: random unsigned integers of ``width`` bytes (4: uint32, 2: uint16, 1: uint8) of the given ``shape``.

    Threefry 2x32 counters hashed under ``key`` (one ``RandomBits`` node):
    every sampler of ``mx.random`` starts from these bits. It is MLX's C++
    ``random::bits``, which MLX's Python module does not export, so this
    example runs on mlxref only.

    Arguments:
    - ``shape``: {random_shape}
    - ``width``: 4, 2 or 1 bytes per number (default 4).
    - ``key``: {key}

    Errors: ``ValueError`` for a negative dimension ("[bits] Negative dimensions
    not allowed."), a bad key (as ``split``'s) or another width ("[bits] Bit
    width must be in {1, 2, 4} but got 3.").

    >>> mx.random.bits((3,), key=mx.random.key(0))
    array([4146024105, 1351547692, 2718843009], dtype=uint32)
    """
    args = (shape, width)
    shape = to_shape(shape, _SIGNATURES["bits"], args)
    if any(d < 0 for d in shape):
        raise ValueError("[bits] Negative dimensions not allowed.")
    key = _key_arg(key, "bits", args)
    _check_key(key)
    if width not in (1, 2, 4):
        raise ValueError(f"[bits] Bit width must be in {{1, 2, 4}} but got {width}.")
    return make_array(RandomBits(shape, width), [key])


@shared_doc
def split(key, num=2, stream=None):
    """``mx.random.split``: ``num`` new keys made from ``key``, a uint32 array of shape ``(num, 2)``.

    The new keys are the random bits of shape ``(num, 2)`` under ``key``, so
    they share bits with other draws made with ``key`` itself: split a key,
    then use each new key for one draw (and never ``key`` again).

    Arguments:
    - ``key``: a key (uint32, shape ``(2,)``).
    - ``num``: how many keys, an int (default 2).

    Errors: ``ValueError`` for a key of another dtype (MLX: "[bits] Expected key
    type uint32 but received int32.") or shape (MLX: "[bits] Expected key shape
    (2) but received (3).").

    >>> mx.random.split(mx.random.key(0))
    array([[4146024105, 967050713],
           [2718843009, 1272950319]], dtype=uint32)
    """
    if not isinstance(key, array) or not is_int(num):
        raise incompatible_arguments(_SIGNATURES["split"], (key,), {"num": num})
    return bits((num, 2), 4, key)


# --- uniform and normal ---------------------------------------------------------------


def _uniform(low, high, shape, dtype, key):
    """MLX's ``random::uniform`` on arrays: bits / (2**32 - 1), below 1, then scaled."""
    if not dtype.is_float:
        raise ValueError(
            "[uniform] Can only generate uniform numbers with real floating point type."
        )
    lo, hi = astype(low, dtype), astype(high, dtype)
    span = subtract(hi, lo)
    out_shape = broadcast_shapes(shape, span.shape)
    if out_shape != shape:
        raise ValueError(
            f"[uniform] Cannot generate random values of shape {format_shape(shape)} "
            f"from broadcasted shape {format_shape(out_shape)}."
        )
    if dtype not in _BELOW_ONE:
        raise RuntimeError("[uniform] Unsupported type.")
    upper = array(_BELOW_ONE[dtype], _dt.float32)
    u = divide(bits(shape, 4, key), array(float(_UINT32_MAX), _dt.float32))
    u = astype(minimum(u, upper), dtype)
    return add(multiply(span, u), lo)


def _unit_uniform(shape, dtype, key):
    """``uniform(shape, dtype)``: on [0, 1)."""
    return _uniform(array(0.0, dtype), array(1.0, dtype), shape, dtype, key)


def _symmetric_uniform(shape, key):
    """float32 numbers in (-1, 1): what normal and laplace transform."""
    low = array(-1.0 + 2.0**-24, _dt.float32)  # nextafter(-1.0f, 0.0f)
    return _uniform(low, array(1.0, _dt.float32), shape, _dt.float32, key)


@shared_doc
def uniform(low=0, high=1, shape=(), dtype=_dt.float32, key=None, stream=None):
    """``mx.random.uniform``: numbers drawn uniformly from ``[low, high)``, of the given ``shape`` and ``dtype``.

    As MLX: random uint32 bits divided by ``2**32 - 1``, capped just below 1,
    cast to ``dtype``, then ``low + (high - low) * u``. ``low`` and ``high`` may
    be arrays; they must broadcast to ``shape``. Gradients reach ``low`` and
    ``high`` through those ops.

    Arguments:
    - ``low``: the lower bound, a scalar or an array (default 0).
    - ``high``: the upper bound, a scalar or an array (default 1).
    - ``shape``: {random_shape}
    - ``dtype``: float32 (default), float16 or bfloat16.
    - ``key``: {key}

    Errors: ``ValueError`` for a dtype that is not a real float (MLX:
    "[uniform] Can only generate uniform numbers with real floating point
    type.") or bounds that do not broadcast to ``shape``; ``RuntimeError`` for
    float64 (MLX: "[uniform] Unsupported type.").

    >>> mx.random.uniform(shape=(3,), key=mx.random.key(0))
    array([0.965321, 0.314682, 0.63303], dtype=float32)
    >>> mx.random.uniform(-1, 1, (2, 2), key=mx.random.key(0))
    array([[0.930643, -0.549682],
           [0.26606, -0.407236]], dtype=float32)
    """
    sig = _SIGNATURES["uniform"]
    args = (low, high, shape, dtype)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    key = _key_arg(key, "uniform", args)
    return _uniform(scalar_or_array(low), scalar_or_array(high), shape,
                    dtype or _dt.float32, key)


def _complex_normal(shape, loc, scale, key):
    """MLX's ``complex_normal``: real and imaginary parts erfinv of a uniform,
    so each has variance 1/2. MLX views the float32 pairs as complex64;
    mlxref composes ``re + im * 1j``, the same numbers."""
    pairs = erfinv(_symmetric_uniform(shape + (2,), key))
    re = astype(take(pairs, 0, axis=-1), _dt.complex64)
    im = astype(take(pairs, 1, axis=-1), _dt.complex64)
    z = add(re, multiply(im, array(1j, _dt.complex64)))
    if scale is not None:
        z = multiply(scale, z)
    if loc is not None:
        z = add(loc, z)
    return z


@shared_doc
def normal(shape=(), dtype=_dt.float32, loc=None, scale=None, key=None, stream=None):
    """``mx.random.normal``: numbers drawn from the normal distribution with mean ``loc`` and standard deviation ``scale``.

    Computed as MLX does, by the inverse CDF: ``loc + scale * sqrt(2) *
    erfinv(u)`` with ``u`` uniform in (-1, 1). Without ``loc`` and ``scale``
    the standard normal (mean 0, standard deviation 1). The result has the
    shape of ``shape``, ``loc`` and ``scale`` broadcast together. complex64
    gives real and imaginary parts of variance 1/2 each.

    Arguments:
    - ``shape``: {random_shape}
    - ``dtype``: a floating type or complex64 (default float32).
    - ``loc``: the mean, a scalar or an array (default None: 0).
    - ``scale``: the standard deviation, a scalar or an array (default None: 1).
    - ``key``: {key}

    Errors: ``ValueError`` for another dtype (MLX: "[normal] Only floating point
    and complex64 types are supported.").

    >>> mx.random.normal((3,), key=mx.random.key(0))
    array([1.81609, -0.482623, 0.339889], dtype=float32)
    >>> mx.random.normal((3,), loc=10.0, scale=2.0, key=mx.random.key(0))
    array([13.6322, 9.03475, 10.6798], dtype=float32)
    """
    sig = _SIGNATURES["normal"]
    args = (shape, dtype, loc, scale)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.float32
    key = _key_arg(key, "normal", args)
    loc = None if loc is None else scalar_or_array(loc, dtype)
    scale = None if scale is None else scalar_or_array(scale, dtype)
    if dtype is _dt.complex64:
        return _complex_normal(shape, loc, scale, key)
    if not dtype.is_float:
        raise ValueError("[normal] Only floating point and complex64 types are supported.")
    samples = _symmetric_uniform(shape, key)
    applied_scale = array(math.sqrt(2.0), dtype)
    if scale is not None:
        applied_scale = multiply(applied_scale, astype(scale, dtype))
    samples = multiply(applied_scale, astype(erfinv(samples), dtype))
    if loc is not None:
        samples = add(astype(loc, dtype), samples)
    return samples


def _psd_sqrt(matrix, n):
    """The symmetric square root of a symmetric positive semi-definite ``n x n``
    matrix (a flat list), by Jacobi's eigenvalue method in double precision.

    MLX takes ``U sqrt(S) Vt`` from an SVD; for a positive semi-definite
    matrix that is this same unique square root.
    """
    a = [[float(matrix[i * n + j]) for j in range(n)] for i in range(n)]
    v = [[float(i == j) for j in range(n)] for i in range(n)]
    for _ in range(100):
        off = math.fsum(a[i][j] ** 2 for i in range(n) for j in range(n) if i != j)
        if off <= 1e-30 * (1 + math.fsum(a[i][i] ** 2 for i in range(n))):
            break
        for p in range(n):
            for q in range(p + 1, n):
                if a[p][q] == 0.0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
                t = math.copysign(1.0, theta) / (builtins.abs(theta) + math.sqrt(theta * theta + 1))
                c = 1 / math.sqrt(t * t + 1)
                s = t * c
                for k in range(n):  # A <- A J, then J^T A; V <- V J
                    akp, akq = a[k][p], a[k][q]
                    a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
                for k in range(n):
                    apk, aqk = a[p][k], a[q][k]
                    a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
                for k in range(n):
                    vkp, vkq = v[k][p], v[k][q]
                    v[k][p], v[k][q] = c * vkp - s * vkq, s * vkp + c * vkq
    roots = [math.sqrt(builtins.max(a[k][k], 0.0)) for k in range(n)]
    return [math.fsum(v[i][k] * roots[k] * v[j][k] for k in range(n))
            for i in range(n) for j in range(n)]


@shared_doc
def multivariate_normal(mean, cov, shape=(), dtype=_dt.float32, key=None, stream=None):
    """``mx.random.multivariate_normal``: vectors drawn from the normal distribution with mean ``mean`` and covariance ``cov``, ``mean + z @ sqrt(cov)`` with ``z`` standard normal.

    The result's shape is ``shape`` broadcast with the batch shapes of ``mean``
    and ``cov``, then the vector length ``n``. MLX computes the square root of
    ``cov`` from its SVD, as a graph. mlxref evaluates ``cov`` and takes its
    symmetric square root in double precision (Jacobi's method), rounded to
    float32, as a constant of the graph. So the samples equal MLX's to float32
    rounding, gradients reach ``mean`` but not ``cov``, and ``cov`` cannot be a
    vmapped input.

    Arguments:
    - ``mean``: ``(..., n)``.
    - ``cov``: ``(..., n, n)``, symmetric positive semi-definite.
    - ``shape``: the batch shape of the samples (default ``()``).
    - ``dtype``: must be float32 (the default).
    - ``key``: {key}

    Errors: ``ValueError`` for another dtype (MLX: "[multivariate_normal] dtype
    must be float32."), a 0-d ``mean``, a ``cov`` of fewer than two dimensions
    or not square, or sizes that do not match (MLX: "[multivariate_normal] mean
    and cov must have compatible shapes.").

    >>> mean, cov = mx.array([0.0, 10.0]), mx.array([[4.0, 0.0], [0.0, 1.0]])
    >>> mx.random.multivariate_normal(mean, cov, key=mx.random.key(0))
    array([-1.56953, 10.8564], dtype=float32)
    """
    sig = _SIGNATURES["multivariate_normal"]
    args = (mean, cov, shape, dtype)
    if not isinstance(mean, array) or not isinstance(cov, array):
        raise incompatible_arguments(sig, args)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.float32
    key = _key_arg(key, "multivariate_normal", args)
    if dtype is not _dt.float32:
        raise ValueError("[multivariate_normal] dtype must be float32.")
    if mean.ndim < 1:
        raise ValueError("[multivariate_normal] mean must have at least one dimension.")
    if cov.ndim < 2:
        raise ValueError("[multivariate_normal] cov must have at least two dimensions.")
    n = mean.shape[-1]
    if cov.shape[-1] != cov.shape[-2]:
        raise ValueError("[multivariate_normal] last two dimensions of cov must be equal.")
    if n != cov.shape[-1]:
        raise ValueError("[multivariate_normal] mean and cov must have compatible shapes.")
    out_shape = broadcast_shapes(cov.shape[:-2], mean.shape[:-1])
    out_shape = broadcast_shapes(out_shape, shape) + (n,)
    flat = reshape(astype(cov, _dt.float32), (-1,)).tolist()
    roots = []
    for b in range(len(flat) // (n * n) if n else 0):
        roots += _psd_sqrt(flat[b * n * n : (b + 1) * n * n], n)
    std = array(_dt.float32.store(roots), _dt.float32).reshape(cov.shape)
    z = normal(out_shape, dtype, 0.0, 1.0, key)
    scaled = squeeze(matmul(expand_dims(z, -2), std), -2)
    return add(mean, scaled)


# --- integers, booleans, other distributions ----------------------------------------------


@shared_doc
def randint(low, high, shape=(), dtype=_dt.int32, key=None, stream=None):
    """``mx.random.randint``: integers drawn uniformly from ``[low, high)``, of the given ``shape`` and ``dtype``.

    Composed as in MLX: ``floor(uniform(low, high))`` cast to ``dtype``, then
    clamped to ``[low, high - 1]`` (so ``high <= low`` gives ``low``). The
    bounds may be arrays that broadcast to ``shape``.

    Arguments:
    - ``low``: the lower bound (included), a scalar or an array.
    - ``high``: the upper bound (excluded), a scalar or an array.
    - ``shape``: {random_shape}
    - ``dtype``: an integer type or bool (default int32).
    - ``key``: {key}

    Errors: ``ValueError`` for a floating dtype (MLX: "[randint] randint only
    accepts integer dtypes and bool.").

    >>> mx.random.randint(0, 10, (5,), key=mx.random.key(0))
    array([5, 0, 3, 8, 5], dtype=int32)
    """
    sig = _SIGNATURES["randint"]
    args = (low, high, shape, dtype)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.int32
    key = _key_arg(key, "randint", args)
    if dtype.is_inexact:
        raise ValueError("[randint] randint only accepts integer dtypes and bool.")
    high, low = scalar_or_array(high), scalar_or_array(low)
    u = _uniform(low, high, shape, _dt.float32, key)
    out = astype(floor(u), dtype)
    top = astype(subtract(high, array(1, high.dtype)), dtype)
    return maximum(minimum(out, top), astype(low, dtype))


@shared_doc
def bernoulli(p=0.5, shape=None, key=None, stream=None):
    """``mx.random.bernoulli``: booleans that are True with probability ``p``.

    MLX compares random uint32 bits with ``p`` times the float32 just above
    ``2**32 - 1``, so ``p >= 1`` is always True and ``p <= 0`` always False.
    The shape is ``p``'s unless ``shape`` is given (``p`` must broadcast to it).

    Arguments:
    - ``p``: the probability, a float or a floating array (default 0.5).
    - ``shape``: the output shape (default None: ``p``'s).
    - ``key``: {key}

    Errors: ``ValueError`` for an integer ``p`` (MLX: "[bernoulli] bernoulli
    probability `p` must be a float type.") or a ``p`` that does not broadcast
    to ``shape``.

    >>> mx.random.bernoulli(0.5, (5,), key=mx.random.key(0))
    array([False, True, True, False, False], dtype=bool)
    >>> mx.random.bernoulli(mx.array([0.0, 1.0, 0.5]), key=mx.random.key(0))
    array([False, True, False], dtype=bool)
    """
    sig = _SIGNATURES["bernoulli"]
    args = (p,)
    if shape is not None:
        shape = to_shape(shape, sig, args, {"shape": shape})
    key = _key_arg(key, "bernoulli", args)
    p = scalar_or_array(p)
    if not p.dtype.is_float:
        raise ValueError("[bernoulli] bernoulli probability `p` must be a float type.")
    if shape is None:
        shape = p.shape
    upper = array(2.0**32 + 2.0**9, _dt.float32)  # nextafter(float(UINT32_MAX), inf)
    res = less(bits(shape, 4, key), multiply(p, upper))
    if res.shape != shape:
        raise ValueError("[bernoulli] shape of `p` is incompatible with argument `shape`.")
    return res


@shared_doc
def truncated_normal(lower, upper, shape=None, dtype=_dt.float32, key=None, stream=None):
    """``mx.random.truncated_normal``: numbers drawn from the standard normal distribution restricted to ``(lower, upper)``.

    As MLX (after JAX): ``sqrt(2) * erfinv(u)`` with ``u`` uniform between
    ``erf(lower / sqrt(2))`` and ``erf(upper / sqrt(2))``, clipped to the
    bounds.

    Arguments:
    - ``lower``: the lower bound, a scalar or an array.
    - ``upper``: the upper bound, a scalar or an array.
    - ``shape``: the output shape (default None: the bounds' broadcast shape).
    - ``dtype``: a floating type (default float32).
    - ``key``: {key}

    Errors: ``ValueError`` for another dtype (MLX: "[trunc_normal] trunc_normal
    only accepts floating point dtypes.").

    >>> mx.random.truncated_normal(-1, 1, (3,), key=mx.random.key(0))
    array([0.906521, -0.322637, 0.22965], dtype=float32)
    """
    sig = _SIGNATURES["truncated_normal"]
    args = (lower, upper)
    if shape is not None:
        shape = to_shape(shape, sig, args, {"shape": shape})
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.float32
    key = _key_arg(key, "truncated_normal", args)
    lower, upper = scalar_or_array(lower), scalar_or_array(upper)
    if shape is None:
        shape = broadcast_shapes(lower.shape, upper.shape)
    if not dtype.is_float:
        raise ValueError("[trunc_normal] trunc_normal only accepts floating point dtypes.")
    sqrt2 = array(math.sqrt(2.0), dtype)
    lower_t, upper_t = astype(lower, dtype), astype(upper, dtype)
    a = erf(divide(lower_t, sqrt2))
    b = erf(divide(upper_t, sqrt2))
    out = multiply(sqrt2, erfinv(_uniform(a, b, shape, dtype, key)))
    return maximum(minimum(upper_t, out), lower_t)


def _gumbel(shape, dtype, key):
    return negative(log(negative(log(_unit_uniform(shape, dtype, key)))))


@shared_doc
def gumbel(shape=(), dtype=_dt.float32, key=None, stream=None):
    """``mx.random.gumbel``: numbers drawn from the standard Gumbel distribution, ``-log(-log(u))`` with ``u`` uniform in [0, 1).

    It is the limit law of the maximum of many independent draws;
    ``categorical`` adds it to logits to sample (the Gumbel-max trick).

    Arguments:
    - ``shape``: {random_shape}
    - ``dtype``: float32 (default), float16 or bfloat16.
    - ``key``: {key}

    Errors: ``ValueError`` as ``uniform``'s (MLX: "[uniform] Can only generate
    uniform numbers with real floating point type.").

    >>> mx.random.gumbel((3,), key=mx.random.key(0))
    array([3.34404, -0.145133, 0.782552], dtype=float32)
    """
    sig = _SIGNATURES["gumbel"]
    args = (shape, dtype)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    key = _key_arg(key, "gumbel", args)
    return _gumbel(shape, dtype or _dt.float32, key)


@shared_doc
def laplace(shape=(), dtype=_dt.float32, loc=0.0, scale=1.0, key=None, stream=None):
    """``mx.random.laplace``: numbers drawn from the Laplace distribution with location ``loc`` and scale ``scale``.

    By the inverse CDF, as MLX: ``x = sign(u) * log1p(-|u|)`` with ``u``
    uniform in (-1, 1), then ``loc + scale * x``. ``loc`` and ``scale`` are C
    floats in MLX (rounded to float32).

    Arguments:
    - ``shape``: {random_shape}
    - ``dtype``: a real floating type (default float32).
    - ``loc``: the location, a float (default 0.0).
    - ``scale``: the scale, a float (default 1.0).
    - ``key``: {key}

    Errors: ``ValueError`` for another dtype (MLX: "[laplace] Only real floating
    point types are supported.").

    >>> mx.random.laplace((3,), key=mx.random.key(0))
    array([-2.66849, 0.463046, -0.309328], dtype=float32)
    """
    sig = _SIGNATURES["laplace"]
    args = (shape, dtype)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    if isinstance(loc, bool) or not isinstance(loc, (int, float)) or \
            isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise incompatible_arguments(sig, args, {"loc": loc, "scale": scale})
    dtype = dtype or _dt.float32
    key = _key_arg(key, "laplace", args)
    if not dtype.is_float:
        raise ValueError("[laplace] Only real floating point types are supported.")
    loc, scale = _dt.float32.cast(float(loc)), _dt.float32.cast(float(scale))
    u = _symmetric_uniform(shape, key)
    samples = multiply(sign(u), log1p(multiply(array(-1.0, dtype), abs(u))))
    samples = astype(samples, dtype)
    if scale != 1.0:
        samples = multiply(array(scale, dtype), samples)
    if loc != 0.0:
        samples = add(array(loc, dtype), samples)
    return samples


def _valid_axis(axis, ndim):
    ax = axis + ndim if axis < 0 else axis
    if ax < 0 or ax >= ndim:
        raise IndexError(f"[categorical] Invalid axis {axis} for logits with {ndim} dimensions.")
    return ax


def _categorical_inverse_cdf(logits, shape, key):
    """MLX's ``categorical_inverse_cdf``, for one distribution and many samples:
    the index of the first ``cdf`` step above ``u * sum(w)``. MLX finds it
    with ``searchsorted(cdf, u, "right") - 1``; mlxref counts the steps at
    or below ``u`` (the same number: ``cdf`` is sorted)."""
    dtype = _dt.promote_types(logits.dtype, _dt.float32)
    x = astype(logits, dtype)
    m = max(x)
    w = where(equal(abs(m), array(math.inf, dtype)),  # isinf(m): uniform over the maxima
              astype(equal(x, m), dtype), exp(subtract(x, m)))
    cdf = cumsum(w, 0, inclusive=False)
    u = multiply(_unit_uniform(shape, _dt.float32, key), sum(w))
    steps = sum(less_equal(cdf, expand_dims(u, -1)), axis=-1)
    return subtract(astype(steps, _dt.uint32), array(1, _dt.uint32))


def _categorical(logits, axis, shape, key):
    """MLX's ``categorical_impl``: the inverse CDF for one distribution, else the
    Gumbel-max trick, ``argmax(gumbel + logits)`` along ``axis``."""
    n = logits.shape[axis]
    if n > 0 and logits.size == n and shape:
        return _categorical_inverse_cdf(reshape(logits, (n,)), shape, key)
    offset = axis + len(shape) - logits.ndim + 1
    g = _gumbel(shape[:offset] + (n,) + shape[offset:], _dt.float32, key)
    return argmax(add(g, logits), offset)


@shared_doc
def categorical(logits, axis=-1, shape=None, num_samples=None, key=None, stream=None):
    """``mx.random.categorical``: class indices (uint32) drawn with probabilities ``softmax(logits)`` along ``axis``.

    One index per distribution by default; ``num_samples`` draws that many per
    distribution (a new last axis), ``shape`` gives the whole output shape
    (broadcast with the logits' other axes). As MLX's ``categorical_impl``:
    ``argmax(gumbel + logits)`` along ``axis`` (the Gumbel-max trick), or, for
    many samples of a single distribution, the inverse CDF.

    Arguments:
    - ``logits``: unnormalized log-probabilities.
    - ``axis``: the axis of the classes (default -1).
    - ``shape``: the output shape (default None).
    - ``num_samples``: the number of samples per distribution (default None).
    - ``key``: {key}

    Errors: ``ValueError`` for both ``shape`` and ``num_samples`` (MLX:
    "[categorical] At most one of shape or num_samples can be specified.") or a
    ``shape`` that does not broadcast; ``IndexError`` for an axis out of range
    (MLX: "[categorical] Invalid axis 1 for logits with 1 dimensions.").

    >>> logits = mx.array([[0.0, 9.0], [9.0, 0.0]])
    >>> mx.random.categorical(logits, key=mx.random.key(0))
    array([1, 0], dtype=uint32)
    >>> mx.random.categorical(mx.array([0.0, 1.0, 2.0]), num_samples=5, key=mx.random.key(0))
    array([2, 1, 2, 2, 2], dtype=uint32)
    """
    sig = _SIGNATURES["categorical"]
    args = (logits,)
    if not isinstance(logits, array) or not is_int(axis):
        raise incompatible_arguments(sig, args, {"axis": axis})
    if shape is not None:
        shape = to_shape(shape, sig, args, {"shape": shape})
    if num_samples is not None and not is_int(num_samples):
        raise incompatible_arguments(sig, args, {"num_samples": num_samples})
    key = _key_arg(key, "categorical", args)
    if shape is not None and num_samples is not None:
        raise ValueError("[categorical] At most one of shape or num_samples can be specified.")
    axis = _valid_axis(axis, logits.ndim)
    if shape is not None:
        reduced = logits.shape[:axis] + logits.shape[axis + 1 :]
        if broadcast_shapes(shape, reduced) != shape:
            raise ValueError(
                f"[categorical] Requested shape {format_shape(shape)} is not broadcast "
                f"compatible with reduced logits shape{format_shape(reduced)}."
            )
        return _categorical(logits, axis, shape, key)
    if num_samples is not None:
        logits = expand_dims(logits, -1)
        shape = logits.shape[:axis] + logits.shape[axis + 1 : -1] + (num_samples,)
        return _categorical(logits, axis, shape, key)
    return _categorical(logits, axis, logits.shape[:axis] + logits.shape[axis + 1 :], key)


@shared_doc
def permutation(x, axis=0, key=None, stream=None):
    """``mx.random.permutation``: a random order of ``range(x)``, or of the entries of the array ``x`` along ``axis``.

    As MLX: the ``argsort`` of random bits gives the order (uint32 indices for
    an int ``x``); an array's entries are then taken in that order.

    Arguments:
    - ``x``: an int (permute ``0 .. x - 1``) or an array.
    - ``axis``: the axis of the array permuted (default 0).
    - ``key``: {key}

    Errors: ``IndexError`` for an axis out of range (mlxref: "[permutation] Axis
    2 is out of bounds for array with 1 dimensions."; MLX: "SmallVector out of
    range.").

    >>> mx.random.permutation(5, key=mx.random.key(0))
    array([1, 2, 0, 4, 3], dtype=uint32)
    >>> mx.random.permutation(mx.array([10, 20, 30]), key=mx.random.key(0))
    array([20, 30, 10], dtype=int32)
    """
    sig = _SIGNATURES["permutation"]
    if isinstance(x, bool) or not isinstance(x, (int, array)) or not is_int(axis):
        raise incompatible_arguments(sig, (x,), {"axis": axis})
    key = _key_arg(key, "permutation", (x,))
    if isinstance(x, int):
        return argsort(bits((x,), 4, key))
    if not -x.ndim <= axis < x.ndim:
        # MLX reads x.shape(axis) unchecked (C++'s "SmallVector out of range.").
        raise IndexError(
            f"[permutation] Axis {axis} is out of bounds for array with {x.ndim} dimensions."
        )
    return take(x, argsort(bits((x.shape[axis],), 4, key)), axis)
