"""One class per primitive, one module per family (mlx/primitives.h, primitives.cpp).

Each class holds its output shapes and dtypes, its math once in its plainest
form (what SymPy runs and the manual typesets) and its vjp, jvp and vmap
rules, written out or visibly inherited from base.py or its family's base.
Its ``eval`` is one call into a kernel in mlxref/core/backend/cpu/, where the
work of reproducing MLX's exact numbers lives. Start with base.py, then
elementwise.py.
"""
