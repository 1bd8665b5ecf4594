"""Optional backends: other engines for the *benchmark programs*, for timing only.

``mlxref.backends.metal`` gives them real MLX (``pip install -e '.[metal]'``):
the benchmarks run the same programs on ``mlx.core`` as on ``mlxref.core``.
Nothing in this package is ever used to compute mlxref's own results.
"""
