"""Elementwise math mapped over element lists of numbers or SymPy expressions.

An array's elements are Python numbers, or SymPy expressions when
``mlxref.symbolic`` checks the rules. So every elementwise primitive gives its
math twice, side by side (``Exp.numeric`` on floats, ``Exp.symbolic`` on
expressions: read mlxref/core/primitives/elementwise.py next), and ``apply``
picks one and maps it over the element lists. SymPy is imported only when a
symbolic element is actually used.
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
