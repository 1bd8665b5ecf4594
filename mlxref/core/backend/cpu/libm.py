"""The C library's float functions that MLX's CPU kernels call, called here too.

Read alongside: mlx/backend/cpu/simd/base_simd.h (``log``, ``log2``,
``log10`` and ``log1p`` of a float are ``std::log``... : the C library's
``logf``, ``log2f``, ``log10f`` and ``log1pf``) and unary_ops.h.

Python's ``math`` has only the double functions. A double result rounded to
float32 is the correctly rounded float32; the C library's float function is
not always (glibc's ``logf`` differs from it for about one float in a
hundred). So for the dtypes MLX computes in float32 (float32, float16,
bfloat16), mlxref calls the same functions of the same C library, through
``ctypes``: ``log`` and its bases, and what is built on them (``erfinv``, so
every ``random.normal``; ``random.gumbel`` and ``laplace``), give MLX's bits.
Where the library cannot be loaded, the correctly rounded result stands in,
and may differ from MLX's in the last bit.
Read next: unary.py (``erfinv_float32``, ``libm_float32``).
"""

import ctypes
import ctypes.util
import math

from ... import dtypes as _dt


def _library():
    try:
        return ctypes.CDLL(ctypes.util.find_library("m") or ctypes.util.find_library("c"))
    except (OSError, TypeError):
        return None


_LIBRARY = _library()
_round32 = _dt.float32.cast


def _c_function(name):
    """The C library's float function ``name``, or None."""
    try:
        function = getattr(_LIBRARY, name)
    except AttributeError:
        return None
    function.restype = ctypes.c_float
    function.argtypes = [ctypes.c_float]
    return function


def _correctly_rounded(f, domain_start, at_start):
    """``f`` (a ``math`` function) rounded to float32, with C's results outside
    its domain: ``at_start`` at ``domain_start`` (-inf), nan below and at nan."""

    def stand_in(x):
        if x > domain_start:
            return _round32(f(x)) if x != math.inf else x
        return at_start if x == domain_start else math.nan

    return stand_in


# name: (the C function, its stand-in where the library has none)
FUNCTIONS = {
    "logf": (_c_function("logf"), _correctly_rounded(math.log, 0.0, -math.inf)),
    "log2f": (_c_function("log2f"), _correctly_rounded(math.log2, 0.0, -math.inf)),
    "log10f": (_c_function("log10f"), _correctly_rounded(math.log10, 0.0, -math.inf)),
    "log1pf": (_c_function("log1pf"), _correctly_rounded(math.log1p, -1.0, -math.inf)),
}


def function(name):
    """The float function ``name`` ("logf", "log2f", "log10f", "log1pf") as a
    Python function of one float32: the C library's, or the stand-in."""
    c_function, stand_in = FUNCTIONS[name]
    return c_function or stand_in


AVAILABLE = all(c is not None for c, _ in FUNCTIONS.values())  # False: the stand-ins run
logf = function("logf")
