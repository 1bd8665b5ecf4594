"""The back-ends: how primitives are computed (mlx/backend/).

mlxref has one, ``cpu``: pure Python that gives MLX's CPU build's results.
"""
