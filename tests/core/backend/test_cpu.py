"""The CPU kernels themselves (mlxref/core/backend/cpu/; MLX's mlx/backend/cpu/), where a
test reads a kernel directly rather than through its primitive: the float32 dot product
(matmul.py) against the step-by-step one, and threefry (threefry.py) against Random123's
known answers.
"""

import random

from mlxref.core.backend.cpu.threefry import threefry2x32


def test_the_fast_float32_dot_rounds_as_the_step_by_step_one():
    # dot_float32 rounds in C (array("f")) what dot rounds one call at a
    # time: the same bits, overflow to inf and nan included.
    from array import array

    from mlxref.core.backend.cpu.matmul import dot, dot_float32, float32

    rng = random.Random(3)
    for n in (0, 1, 5, 300):
        for _ in range(40):
            row = array("f", [rng.uniform(-9, 9) * rng.choice([1, 1e-30, 1e25]) for _ in range(n)])
            col = array("f", [rng.uniform(-9, 9) * rng.choice([1, 1e-12, 1e16]) for _ in range(n)])
            row, col = row.tolist(), col.tolist()
            assert repr(dot_float32(row, col)) == repr(float(dot(row, col, float32)))


def test_threefry_matches_the_random123_known_answer():
    # Threefry-2x32-20 known-answer vectors from the Random123 distribution (kat_vectors):
    # counter (0, 0) under key (0, 0), all ones under all ones, and pi's digits.
    ones = 0xFFFFFFFF
    assert threefry2x32((0, 0), [0], [0]) == ([0x6B200159], [0x99BA4EFE])
    assert threefry2x32((ones, ones), [ones], [ones]) == ([0x1CB996FC], [0xBB002BE7])
    # several counters at once, each hashed on its own
    assert threefry2x32((0x13198A2E, 0x03707344), [0, 0x243F6A88], [0, 0x85A308D3]) == \
        ([threefry2x32((0x13198A2E, 0x03707344), [0], [0])[0][0], 0xC4923A9C],
         [threefry2x32((0x13198A2E, 0x03707344), [0], [0])[1][0], 0x483DF7A0])
