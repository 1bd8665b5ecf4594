"""The kernels: everything whose job is to reproduce MLX's exact results.

Read alongside: mlx/backend/cpu/. A primitive class (mlxref/core/primitives/)
holds its shapes, its math once in its plainest form and its vjp, jvp and
vmap rules, as mlx/primitives.cpp does; its ``eval`` is one call into a
module here, as ``Primitive::eval_cpu`` is a call into mlx/backend/cpu/.
Here are the float32, float16 and bfloat16 steps MLX's kernels take, the
complex edge cases, the algorithms of the LAPACK routines MLX calls, and the
element loops, written as fast as pure Python allows without changing a bit.

A kernel takes element lists and Python values and returns element lists: it
imports no primitive, op or transform.
"""
