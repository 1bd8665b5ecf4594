"""``mx.random``: seeded random numbers (``seed``, ``uniform``, ``normal``, ``randint``).

Read alongside: mlx/random.cpp (``uniform``, ``normal``, ``randint``) and
python/src/random.cpp (signatures, the global key sequence).

The draws themselves come from Python's ``random.Random`` (Mersenne Twister),
so the *values* differ from MLX's (which hashes a key with Threefry); the
shapes, dtypes, errors and the arithmetic around the draws are MLX's:

- The draws are a materialised array, a leaf of the graph: random bits have no
  gradient. What MLX computes from them is composed with ordinary ops, so
  ``uniform`` is ``low + (high - low) * u`` and ``normal`` is
  ``loc + scale * z``, and gradients reach ``low``, ``high``, ``loc`` and
  ``scale`` exactly as in MLX.
- Without ``key``, draws come from one module-level generator that ``seed``
  resets: the same seed gives the same sequence of results.
- With ``key``, a fresh generator is seeded from it, so the same key always
  gives the same values. MLX's keys are uint32 arrays from ``mx.random.key``;
  mlxref accepts any integer-valued array or a plain Python int as a key.
"""

import random as _random

from . import dtypes as _dt
from .array import _fmt_shape, array
from .ops.common import astype, broadcast_shapes, incompatible_arguments, to_shape
from .ops.creation import check_dtype, scalar_or_array
from .ops.elementwise import add, floor, maximum, minimum, multiply, subtract

__all__ = ["seed", "uniform", "normal", "randint"]

_SIGNATURES = {
    "seed": "seed(seed: int) -> None",
    "uniform": "uniform(low: scalar | array = 0, high: scalar | array = 1, "
    "shape: Sequence[int] = [], dtype: Dtype | None = float32, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
    "normal": "normal(shape: Sequence[int] = [], dtype: Dtype | None = float32, "
    "loc: scalar | array | None = None, scale: scalar | array | None = None, "
    "key: array | None = None, stream: StreamOrDevice = None) -> array",
    "randint": "randint(low: scalar | array, high: scalar | array, shape: Sequence[int] = [], "
    "dtype: Dtype | None = int32, key: array | None = None, "
    "stream: StreamOrDevice = None) -> array",
}

_generator = _random.Random()  # the global state; seeded from the OS until seed() is called


def seed(seed):
    """``mx.random.seed``: reset the global generator (``seed`` is an int in [0, 2**64))."""
    if not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise incompatible_arguments(_SIGNATURES["seed"], (seed,))
    _generator.seed(int(seed))


def _generator_for(key):
    """The global generator, or a fresh one seeded deterministically from ``key``."""
    if key is None:
        return _generator
    if isinstance(key, array):
        words = [int(v) for v in key.tolist()] if key.ndim else [int(key.item())]
    elif isinstance(key, int):
        words = [int(key)]
    else:
        raise TypeError(f"[random] key must be an array or an int, got {key!r}.")
    # A string seed is hashed with SHA-512: the same on every run and platform.
    return _random.Random("key:" + ",".join(str(w) for w in words))


def _draws(shape, dtype, key, draw):
    """A materialised array of ``shape``: one ``draw(generator)`` per element."""
    if any(d < 0 for d in shape):
        raise ValueError("[bits] Negative dimensions not allowed.")
    generator = _generator_for(key)
    size = 1
    for d in shape:
        size *= d
    # Stored as the dtype holds them, like every other array's elements.
    return array._from_data(dtype.store([draw(generator) for _ in range(size)]), shape, dtype)


def _to_dtype(value, dtype):
    """A ``scalar | array`` argument as an array of ``dtype``."""
    return astype(scalar_or_array(value), dtype)


def uniform(low=0, high=1, shape=(), dtype=_dt.float32, key=None, stream=None):
    """``mx.random.uniform``: numbers uniformly distributed in ``[low, high)``.

    ``low`` and ``high`` may be arrays; they must broadcast to ``shape``.
    """
    sig = _SIGNATURES["uniform"]
    args = (low, high, shape, dtype)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.float32
    if not dtype.is_float:
        raise ValueError(
            "[uniform] Can only generate uniform numbers with real floating point type."
        )
    lo, hi = _to_dtype(low, dtype), _to_dtype(high, dtype)
    span = subtract(hi, lo)
    out_shape = broadcast_shapes(shape, span.shape)
    if out_shape != shape:
        raise ValueError(
            f"[uniform] Cannot generate random values of shape {_fmt_shape(shape)} "
            f"from broadcasted shape {_fmt_shape(out_shape)}."
        )
    if dtype is not _dt.float32:
        raise RuntimeError("[uniform] Unsupported type.")  # MLX: float32 (and halves) only
    # As MLX makes a float32 in [0, 1) from random bits: 23 of them, so
    # every draw is a multiple of 2**-23 and none rounds up to 1.
    u = _draws(shape, dtype, key, lambda g: g.getrandbits(23) * 2.0**-23)
    return add(multiply(span, u), lo)


def normal(shape=(), dtype=_dt.float32, loc=None, scale=None, key=None, stream=None):
    """``mx.random.normal``: normally distributed numbers, ``loc + scale * z``.

    Without ``loc`` and ``scale`` the standard normal (mean 0, std 1). The
    result has the shape of ``shape``, ``loc`` and ``scale`` broadcast together.
    """
    sig = _SIGNATURES["normal"]
    args = (shape, dtype, loc, scale)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.float32
    if not dtype.is_float:
        raise ValueError("[normal] Only floating point and complex64 types are supported.")
    z = _draws(shape, dtype, key, lambda g: g.gauss(0.0, 1.0))
    if scale is not None:
        z = multiply(astype(scalar_or_array(scale, dtype), dtype), z)
    if loc is not None:
        z = add(astype(scalar_or_array(loc, dtype), dtype), z)
    return z


def randint(low, high, shape=(), dtype=_dt.int32, key=None, stream=None):
    """``mx.random.randint``: integers uniformly distributed in ``[low, high)``.

    Composed as in MLX: ``floor(uniform(low, high))`` cast to ``dtype``, then
    clamped to ``[low, high - 1]`` (so ``high <= low`` gives ``low``).
    """
    sig = _SIGNATURES["randint"]
    args = (low, high, shape, dtype)
    shape = to_shape(shape, sig, args)
    check_dtype(dtype, sig, args)
    dtype = dtype or _dt.int32
    if dtype.is_float:
        raise ValueError("[randint] randint only accepts integer dtypes and bool.")
    u = uniform(low, high, shape, _dt.float32, key)
    out = astype(floor(u), dtype)
    high, low = scalar_or_array(high), scalar_or_array(low)
    top = astype(subtract(high, array(1, high.dtype)), dtype)
    return maximum(minimum(out, top), astype(low, dtype))
