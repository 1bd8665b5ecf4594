"""``import mlxref.optimizers as optim``: ``Optimizer``, ``SGD`` and ``Adam``, as in mlx.optimizers.
"""

from .optimizers import SGD, Adam, Optimizer  # noqa: F401
