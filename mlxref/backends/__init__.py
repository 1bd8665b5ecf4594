"""Optional backends that run the *benchmark programs* on other engines, for timing only.

``mlxref.backends.metal`` runs them on real MLX (``pip install -e '.[metal]'``).
Nothing in this package is ever used to compute mlxref's own results.
"""
