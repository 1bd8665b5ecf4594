"""How MLX's kernels keep a value as its dtype holds it at every step.

Read alongside: mlx/backend/cpu/reduce.cpp and scan.cpp (accumulators of the
input's dtype), mlx/types/half_types.h (float16 and bfloat16 in float).

A primitive's results are stored as their dtype holds them once, at the end
(``Dtype.store``); a kernel whose running values MLX keeps in the dtype (a
scan's sums, a half-precision softmax) rounds each step with ``rounding``.
``in_double`` (with ``FLOAT32_SAFE`` and ``norm``) says when a float32 sum
may be formed in double and rounded once instead: the last bits may differ
from MLX's, never overflow; ``MLXREF_FLOAT32_STEPS=1`` turns that off.
Read next: mlxref/core/dtypes.py (``Dtype.store``, ``Dtype.cast``).
"""

import array as _pyarray
import math
import os

from ... import dtypes as _dt


# Below this, no partial sum of float32 numbers can reach float32's largest
# value (2**128 less half an ulp), whatever the roundings on the way. Sums and
# matrix products whose partial sums are bounded below it may be formed in
# double and rounded once; the others follow MLX's float32 accumulator.
FLOAT32_SAFE = 2.0**127

# MLXREF_FLOAT32_STEPS=1 in the environment: every float32 sum and matrix
# product follows MLX's float32 accumulator step by step, and exp (so
# sigmoid) MLX's polynomial, so they give MLX's bits too, about five times
# slower (read once, when mlxref is imported).
FLOAT32_STEPS = os.environ.get("MLXREF_FLOAT32_STEPS", "") not in ("", "0")


def in_double(bound):
    """Whether a float32 sum may be formed in double and rounded once: its
    partial sums stay below ``FLOAT32_SAFE`` (``bound()`` bounds them; not
    called when MLXREF_FLOAT32_STEPS is set) and MLXREF_FLOAT32_STEPS is not
    set."""
    return not FLOAT32_STEPS and bound() < FLOAT32_SAFE


def norm(data, remember=False):
    """The Euclidean norm of a list of numbers (``math.hypot``: one pass in C),
    which bounds its partial sums; inf or nan when an element is. 0.0 for
    SymPy elements, which have no size and are never rounded.

    ``remember``: look the norm up among the last long lists' (``_known``)
    and remember this one's. A training loop multiplies by the same data
    matrix every step (and by its transpose, a new list of the same element
    objects): comparing two lists costs a pointer comparison per element, a
    tenth of the norm."""
    global _known
    if not remember or len(data) < _REMEMBER_FROM:
        try:
            return math.hypot(*data)
        except TypeError:
            return 0.0
    for entry in _known:
        # Equal elements (the same objects, or equal values: -0.0 == 0.0
        # has the same square) give the same norm, bit for bit. A list of
        # another length is unequal at once.
        elements, value = entry
        if elements == data:
            if elements[0] is not data[0] or elements[-1] is not data[-1]:
                # Equal values in other objects (an array made again from
                # the same numbers): the next lookup compares the objects
                # themselves, a tenth of comparing their values.
                elements = data[:]
            _known = ((elements, value),) + tuple(e for e in _known if e is not entry)
            return value
    try:
        value = math.hypot(*data)
    except TypeError:
        return 0.0
    # A copy, never ``data`` itself: a reference to an array's list would
    # stop its buffer from being donated (``array.is_donatable``).
    _known = ((data[:], value),) + _known[: _REMEMBERED - 1]
    return value


# What ``norm`` remembers: (a copy of a list, its norm), the last used first;
# only of lists long enough for the lookup to pay, and only a few (the
# copies keep their elements alive). A tuple, replaced whole, so that threads
# evaluating at once never see it half changed.
_known = ()
_REMEMBER_FROM = 4096
_REMEMBERED = 2


def rounding(dtype):
    """A function rounding one number as ``dtype`` holds it, for results that
    MLX's kernels keep in ``dtype`` at every step (a scan's running sums, a
    scatter's additions, a half-precision softmax); None where no rounding is
    needed (float64 is Python's float; integers wrap the same way at the end,
    in the store). float32 goes through a one-element ``array('f')`` (C's
    cast, cheaper than ``dtype.cast``); SymPy expressions stay as they are."""
    if dtype is _dt.float32:
        cell = _pyarray.array("f", (0.0,))

        def rounded(v):
            try:
                cell[0] = v
            except TypeError:  # a SymPy expression
                return v
            return cell[0]

        return rounded
    if dtype in (_dt.float16, _dt.bfloat16):
        return dtype.cast
    return None


def unrounded(v):
    """What ``rounding(dtype) or unrounded`` gives where nothing is rounded:
    the value (one number, or a list of them) as it is."""
    return v
