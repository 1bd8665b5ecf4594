"""The Walsh-Hadamard transform's kernel, in MLX's steps and roundings.

Read alongside: mlx/backend/cpu/hadamard.cpp (``hadamard_n``, ``hadamard_m``)
and mlx/backend/common/hadamard.h (``decompose_hadamard``, and the 12, 20
and 28 point Hadamard matrices, from N. J. A. Sloane's library, that MLX
uses: the same matrices are written here as one hexadecimal number per row,
a set bit for +1, the first column the highest bit).

A size is ``m * n``, n a power of two. MLX's kernel first runs the in-place
butterflies of the power-of-two part, in float, each result stored in the
dtype (the last stage's scaled when m is 1); then, for m > 1, each strided
m-vector's signed sums in float32, times the scale, stored.
Read next: mlxref/core/primitives/hadamard.py (the Hadamard primitive and its rules).
"""

from ... import dtypes as _dt
from .rounding import rounding

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


def decompose_hadamard(size):
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


def hadamard_n(data, n, scale, f32, store):
    """MLX's ``hadamard_n``: Sylvester's transform of each run of n elements,
    in place, by butterflies; the last stage's results times ``scale``."""
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
                if last and scale != 1:
                    block[j] = store(f32(block[j] * scale))
                    block[j + h] = store(f32(block[j + h] * scale))
            h <<= 1
        data[start:start + n] = block


def hadamard_m(data, n, m, scale, f32, store):
    """MLX's ``hadamard_m``: the m-point matrix applied, in place, to each
    m-vector of elements n apart, summed in float32 and scaled."""
    matrix = hadamard_matrix(m)
    for start in range(0, len(data), m * n):
        for i in range(n):
            column = [data[start + i + k * n] for k in range(m)]
            for j, row in enumerate(matrix):
                acc = 0.0
                for sign, v in zip(row, column):
                    acc = f32(acc + v if sign > 0 else acc - v)
                data[start + i + j * n] = store(f32(acc * scale))


def hadamard(data, size, dtype, scale):
    """``scale * H @ x`` for each run of ``size`` elements of ``data``, as
    MLX's ``Hadamard::eval_cpu`` computes it (float32, float16, bfloat16)."""
    if dtype not in (_dt.float32, _dt.float16, _dt.bfloat16):
        raise ValueError("[hadamard] Unsupported type.")
    n, m = decompose_hadamard(size)
    f32 = rounding(_dt.float32)
    store = rounding(dtype)  # (float32: the same rounding again, harmless)
    data = list(data)
    hadamard_n(data, n, 1.0 if m > 1 else scale, f32, store)
    if m > 1:
        hadamard_m(data, n, m, scale, f32, store)
    return data
