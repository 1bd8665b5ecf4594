"""``mx.cuda``: MLX's CUDA namespace (python/src/cuda.cpp). mlxref computes in
Python on the CPU, so there is no CUDA back-end."""


def is_available():
    """``mx.cuda.is_available()``: False."""
    return False
