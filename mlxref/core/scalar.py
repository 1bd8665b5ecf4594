"""Elementwise math mapped over element lists of numbers or SymPy expressions.

An array's elements are Python numbers, or SymPy expressions when
``mlxref.symbolic`` checks the rules. So every elementwise primitive gives its
math twice, side by side (``Exp.numeric`` on floats, ``Exp.symbolic`` on
expressions: read mlxref/core/primitives/elementwise.py next), and ``apply``
picks one and maps it over the element lists; ``truth``, ``indicator`` and
``condition`` give comparisons, logical ops and ``where`` their truth values on
either kind. SymPy is imported only when a symbolic element is actually used.
"""

import sys

_NUMBERS = (float, int, bool)


class _LazySympy:
    """The ``sympy`` module, imported at first use: ``import mlxref.core`` stays free of it."""

    def __getattr__(self, name):
        import sympy as module

        return getattr(module, name)


sympy = _LazySympy()


def is_symbolic(value):
    """Is ``value`` a SymPy expression? (Without SymPy imported, nothing is.)"""
    if type(value) in _NUMBERS:
        return False
    module = sys.modules.get("sympy")
    return module is not None and isinstance(value, module.Basic)


def apply(numeric, symbolic, *datas, numeric_lists=None):
    """``numeric`` mapped over equal-length element lists, or ``symbolic``.

    Lists of numbers use ``numeric`` (or ``numeric_lists``, the same math
    over whole lists: one comprehension, no Python call per element). A list
    whose first element is a SymPy expression uses ``symbolic``, and so does
    one that makes ``numeric`` raise ``TypeError`` further down (``math``
    cannot convert an expression, and an expression has no numeric truth value).
    """
    # (Without SymPy imported nothing is symbolic: the common case, checked first.)
    if "sympy" not in sys.modules or not any(d and is_symbolic(d[0]) for d in datas):
        try:
            if numeric_lists is not None:
                return numeric_lists(*datas)
            return list(map(numeric, *datas))
        except TypeError:
            pass
    return list(map(symbolic, *datas))


# Below this many elements a list takes ``numeric`` itself: the checks that
# let a C function stand in for it cost more than they save.
MAPPED_FROM = 8


def mapped(f, numeric, *datas, nan_result=False):
    """``list(map(numeric, *datas))``, formed as ``list(map(f, *datas))`` in C
    where that gives the same results, bit for bit.

    ``f`` is the C function (``math.sqrt``, ``operator.truediv``) that
    ``numeric`` applies to every ordinary input. ``numeric`` gives something
    else only where ``f`` raises (a negative root, log 0, an overflow, a zero
    divisor, a SymPy expression) or, with ``nan_result``, at a nan input:
    ``f`` returns that nan as it is (a -nan keeps its sign bit), ``numeric``
    its own ``nan``. Then the whole list takes ``numeric``, raising what it
    raises. (``sum`` is nan exactly when an element is, or when both
    infinities are there: a list that only might hold a nan takes ``numeric``
    too, which is never wrong.)
    """
    if len(datas[0]) < MAPPED_FROM:
        return list(map(numeric, *datas))
    try:
        out = list(map(f, *datas))
    except (ArithmeticError, ValueError, TypeError):
        return list(map(numeric, *datas))
    if nan_result:
        total = sum(out)
        if total != total:
            return list(map(numeric, *datas))
    return out


# --- truth values: comparisons, logical ops and ``where`` on either kind ---------------


def truth(v):
    """``bool(v)`` for a number; TypeError for anything else.

    A SymPy expression (a 0/1 ``Piecewise`` indicator) is always truthy to
    Python, so ``a if c else b`` would silently pick ``a``: raising sends the
    whole list to the symbolic function instead (``apply``).
    """
    if isinstance(v, (bool, int, float)):
        return bool(v)
    raise TypeError(f"no numeric truth value for {v!r}")


def indicator(condition):
    """A SymPy condition as a 0/1 expression: a symbolic bool that masks can multiply."""
    return sympy.Piecewise((1, condition), (0, True))


def condition(c):
    """A SymPy condition from a value: a comparison as it is, anything else as c != 0."""
    boolean = (sympy.core.relational.Relational, sympy.logic.boolalg.BooleanFunction,
               sympy.logic.boolalg.BooleanAtom)
    if isinstance(c, boolean):
        return c
    if not isinstance(c, sympy.Basic):  # a plain number: its truth value
        return sympy.true if c else sympy.false
    return sympy.Ne(c, 0)
