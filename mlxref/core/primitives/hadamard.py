"""The Walsh-Hadamard transform along the last axis: ``Hadamard``.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``Hadamard`` and its
rules), mlx/backend/cpu/hadamard.cpp (the CPU kernel) and
mlx/backend/common/hadamard.h (``decompose_hadamard``, and the 12, 20 and
28 point Hadamard matrices, from N. J. A. Sloane's library, that MLX uses:
the same matrices are written here as one hexadecimal number per row, a set
bit for +1, the first column the highest bit).
"""

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.rounding import rounding
from .base import Primitive

_MATRIX_ROWS = {
    12: "bff 2aa ec3 896 fb0 a25 cec 989 c3b 962 f0e a58",
    20: "84336 4238b 211d5 108fa 0866d 7c139 ba29c d914e e88a7 f0653 "
        "35a0f 1ad17 8d49b c685d 6343e 49a10 a0d08 54484 2e042 93021",
    28: "818694c 41c14a6 20e2a13 1071549 0838ae4 041e532 030d299 3d019d2 1e82ca9 "
        "8e43654 c621b2a e210d95 f00a6ca 7807325 5b3201e ac9900f 564c847 ab24463 "
        "d590271 6ac8178 b4640bc 66b70c0 b35b820 d8adc10 6d54e08 37a8704 9ad4382 "
        "cd6a181",
}


def hadamard_matrix(m):
    """MLX's m-point Hadamard matrix (m in 12, 20, 28), rows of +1 and -1."""
    rows = [int(h, 16) for h in _MATRIX_ROWS[m].split()]
    return [[1 if r >> (m - 1 - j) & 1 else -1 for j in range(m)] for r in rows]


def decompose(size):
    """MLX's ``decompose_hadamard``: ``size = m * n`` with n a power of two and
    m in (1, 12, 20, 28), or its errors. Where MLX's kernel accepts a size
    whose n is not a power of two (36 = 12 * 3) its result is wrong: an
    error here."""
    n, m = size, 1
    if n & (n - 1):
        for factor in (12, 20, 28):
            if n % factor == 0:
                m, n = factor, n // factor
                break
        if m == 1:
            raise ValueError("[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).")
        if n & (n - 1):
            raise ValueError(
                f"[hadamard] The size {size} is {m}*{n}, which is not m*2^k: MLX's kernel "
                "accepts it but its result is not a Hadamard transform.")
    if n > 1 << 26:
        raise ValueError("[hadamard] Only supports n = m*2^k where k <= 26")
    return n, m


class Hadamard(Primitive):
    """``scale * H @ x`` along the last axis, H the size's Hadamard matrix
    (Sylvester's for a power of two; MLX's 12, 20 or 28 point matrix times a
    power of two otherwise). ``scale`` is a float32.

    How MLX's CPU kernel computes it: the in-place butterflies of the
    power-of-two part, in float, each result stored in the dtype (the last
    stage's scaled); then, for m > 1, each strided m-vector's signed sums in
    float32, times the scale, stored. mlxref follows those roundings.

    MLX's rules: jvp and vjp are the transform of the tangent or cotangent
    (the vjp is exact for symmetric H: powers of two and 12; for 20 and 28,
    whose matrices are not symmetric, MLX's vjp is wrong and mlxref applies
    Hᵀ); vmap transforms the batch in place, moving it to the front if it is
    the last axis.
    """

    def __init__(self, scale):
        self.scale = _dt.float32.cast(float(scale))

    def params(self):
        return {"scale": self.scale}

    def eval(self, inputs):
        (x,) = inputs
        dtype = x.dtype
        if dtype not in (_dt.float32, _dt.float16, _dt.bfloat16):
            raise ValueError("[hadamard] Unsupported type.")
        size = x.shape[-1]
        n, m = decompose(size)
        f32 = rounding(_dt.float32)
        store = rounding(dtype)  # (float32: the same rounding again, harmless)
        data = list(x.data())
        n_scale = 1.0 if m > 1 else self.scale
        for start in range(0, len(data), n):
            block = data[start:start + n]
            h = 1
            while h < n:
                last = h == n // 2
                for i in range(n // 2):
                    k = i & (h - 1)
                    j = ((i - k) << 1) + k
                    u, v = block[j], block[j + h]
                    block[j], block[j + h] = store(f32(u + v)), store(f32(u - v))
                    if last and n_scale != 1:
                        block[j] = store(f32(block[j] * n_scale))
                        block[j + h] = store(f32(block[j + h] * n_scale))
                h <<= 1
            data[start:start + n] = block
        if m > 1:
            matrix = hadamard_matrix(m)
            for start in range(0, len(data), m * n):
                for i in range(n):
                    column = [data[start + i + k * n] for k in range(m)]
                    for j, row in enumerate(matrix):
                        acc = 0.0
                        for sign, v in zip(row, column):
                            acc = f32(acc + v if sign > 0 else acc - v)
                        data[start + i + j * n] = store(f32(acc * self.scale))
        return [data]

    def jvp(self, primals, tangents, argnums):
        return [ops.hadamard_transform(tangents[0], self.scale)]

    def vjp(self, primals, cotangents, argnums, outputs):
        (cot,) = cotangents
        n, m = decompose(cot.shape[-1])
        if m in (1, 12):  # H is symmetric: MLX's rule
            return [ops.hadamard_transform(cot, self.scale)]
        # (H_m ⊗ H_n)ᵀ: H_n (symmetric) on the fast axis, then H_mᵀ, then the scale
        y = ops.reshape(cot, cot.shape[:-1] + (m, n))
        if n > 1:
            y = ops.hadamard_transform(y, 1.0)
        y = ops.matmul(ops.swapaxes(y, -1, -2), array(hadamard_matrix(m), y.dtype))
        y = ops.reshape(ops.swapaxes(y, -1, -2), cot.shape)
        return [ops.multiply(y, array(self.scale, y.dtype))]

    def vmap(self, inputs, axes):
        (x,), (ax,) = inputs, axes
        if ax == x.ndim - 1:
            return [ops.hadamard_transform(ops.moveaxis(x, ax, 0), self.scale)], [0]
        return [ops.hadamard_transform(x, self.scale)], [ax]
