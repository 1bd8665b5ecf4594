"""mlxref: a pure-Python reference implementation of MLX's autodiff engine."""

__version__ = "0.1.0"
