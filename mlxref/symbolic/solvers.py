"""Symbolic cases for the factorizations (Cholesky, LUF).

Cholesky's input is ``x xᵀ`` for a 2 x 2 of positive symbols, symmetric
positive definite at every point; its elements are square roots of the
symbols' expressions. MLX gives Cholesky no vjp or jvp: both must raise.

LU's pivoting compares magnitudes, so each case fixes the pivots by its
structure: ``[[1, 0], [1, 1]] @ x`` for positive symbols has a second row
larger than the first in the first column, which SymPy decides (a swap);
a diagonally dominant constant plus symbols in (-3/4, 3/4) stays so, and
pivoting keeps every row where it is (the comparisons SymPy cannot decide
count as "no swap", and the forward check at a point confirms it). The vjp
and jvp are mlxref's textbook rules for ``A = P L U``.
"""

from .. import core as mx
from ..core.primitives import solvers as S
from . import Case

# Diagonally dominant once symbols in (-3/4, 3/4) are added. (A 3 x 3 case
# takes SymPy minutes; tests/core/primitives/test_solvers.py checks the rules on 4 x 4
# numerically, against det's derivative det(A) A⁻ᵀ and finite differences.)
_DOMINANT = mx.array([[3.0, 1.0], [0.5, 3.0]], mx.float64)

CASES = [
    Case(S.Cholesky, lambda x: mx.linalg.cholesky(x @ x.T), ((2, 2),), domain="positive",
         raises=True, note="lower factor; MLX defines no vjp or jvp for Cholesky"),
    Case(S.Cholesky, lambda x: mx.linalg.cholesky(x @ x.T, upper=True), ((2, 2),),
         domain="positive", raises=True, note="upper factor"),
    Case(S.LUF, lambda x: mx.linalg.lu_factor(mx.array([[1.0, 0.0], [1.0, 1.0]]) @ x)[0],
         ((2, 2),), domain="positive", note="2 x 2 with a row swap"),
    Case(S.LUF, lambda x: mx.linalg.lu_factor(_DOMINANT + x)[0], ((2, 2),),
         domain="unit", note="2 x 2, diagonally dominant: no swap"),
]
