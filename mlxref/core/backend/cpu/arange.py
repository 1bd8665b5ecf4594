"""``arange``'s elements, as MLX's CPU kernel steps them.

Read alongside: mlx/backend/cpu/arange.h (``arange``: the first element, then
steps of ``next - start``) and ``Arange::eval_cpu`` in
mlx/backend/cpu/primitives.cpp.
Read next: mlxref/core/primitives/creation.py (``Arange``, its shape rule).
"""


def arange(start, step, size, dtype):
    """The ``size`` elements ``start, start + step, ...`` of ``dtype``.

    A float dtype takes ``start + i * step`` in double, rounded once when the
    result is stored. An integer dtype follows MLX's kernel: it casts start
    and start + step to the integer type first (truncating), then steps by
    their difference, so arange(0, 3, 0.5, dtype=int32) is six zeros.
    """
    if dtype.is_inexact:
        start, step = float(start), float(step)
        return [start + i * step for i in range(size)]
    first = int(start)
    step = int(start + step) - first
    return [first + i * step for i in range(size)]
