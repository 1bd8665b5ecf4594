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
and may differ from MLX's in the last bit. The module imports nothing of
mlxref, so that the course grader's child can load it before its audit hook
(which refuses ``ctypes``) and graded code computes what every run computes.
Read next: unary.py (``erfinv_float32``, ``libm_float32``).
"""

import math
import struct

NAMES = ("logf", "log2f", "log10f", "log1pf")


def _c_functions(names):
    """``{name: a Python function calling the C library's float function}``
    for the ``names`` it has; empty where it cannot be loaded. Nothing of
    ctypes stays reachable from this module (no library handle, no function
    pointer as an attribute): graded course code may import mlxref's
    modules, and must not find a way to call arbitrary C code here."""
    try:
        import ctypes
        import ctypes.util

        library = ctypes.CDLL(ctypes.util.find_library("m") or ctypes.util.find_library("c"))
    except (ImportError, OSError, TypeError):  # (an audit hook's refusal is an OSError)
        return {}
    found = {}
    for name in names:
        try:
            function = getattr(library, name)
        except AttributeError:
            continue
        function.restype = ctypes.c_float
        function.argtypes = [ctypes.c_float]
        found[name] = _calling(function)
    return found


def _calling(function):
    def call(x):
        return function(x)

    return call


_C_FUNCTIONS = _c_functions(NAMES)
_FLOAT32 = struct.Struct("f")


def _round32(v):
    return _FLOAT32.unpack(_FLOAT32.pack(v))[0]


def _correctly_rounded(f, domain_start, at_start):
    """``f`` (a ``math`` function) rounded to float32, with C's results outside
    its domain: ``at_start`` at ``domain_start`` (-inf), nan below and at nan."""

    def stand_in(x):
        if x > domain_start:
            return _round32(f(x))
        return at_start if x == domain_start else math.nan

    return stand_in


# The stand-ins, where the C library has none: the correctly rounded float32.
STAND_INS = {
    "logf": _correctly_rounded(math.log, 0.0, -math.inf),
    "log2f": _correctly_rounded(math.log2, 0.0, -math.inf),
    "log10f": _correctly_rounded(math.log10, 0.0, -math.inf),
    "log1pf": _correctly_rounded(math.log1p, -1.0, -math.inf),
}


def function(name):
    """The float function ``name`` ("logf", "log2f", "log10f", "log1pf") as a
    Python function of one float32: the C library's, or the stand-in."""
    return _C_FUNCTIONS.get(name) or STAND_INS[name]


AVAILABLE = set(_C_FUNCTIONS) == set(NAMES)  # False: a stand-in runs
logf = function("logf")
