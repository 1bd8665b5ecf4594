"""complex64: construction, printing, the ops MLX allows on it (and its errors
for the others), promotion, reductions, matmul, and gradients in MLX's
convention for complex numbers.

MLX's convention: the jvp multiplies the tangent by f'(z), the vjp multiplies
the cotangent by conj(f'(z)); so the gradient of a real-valued L(z) is
dL/dx + i dL/dy (``grad(|z|^2) = 2 z``). Real MLX is the oracle where it is
installed (``_both`` runs the same program on both libraries, errors
included); the tests that need no MLX compute their expected values from the
inputs with ``cmath``.
"""

import math


import mlxref.core as mx

from support import assert_both, close, needs_mlx, real_mx

inf, nan = math.inf, math.nan
LIBS = [mx] + ([real_mx] if real_mx is not None else [])

Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j, -1.5 - 2.5j]
W = [0.5 - 1j, 2 + 0.5j, -1 + 1j, 0.75 + 0.125j]


# --- reductions and matmul ----------------------------------------------------------


@needs_mlx
def test_softmax_matmul_and_friends_match_mlx():
    a = [[1 + 2j, 1 - 1j], [3 + 0j, 0j]]
    for build in [
        lambda m: m.softmax(m.array(a), axis=1),
        lambda m: m.softmax(m.array(a), axis=0),
        lambda m: m.logsumexp(m.array(a), axis=0, keepdims=True),
        lambda m: m.var(m.array(a), axis=1, ddof=1),
        lambda m: m.array(a) @ m.array([[0.5 - 1j], [2 + 0.5j]]),
        lambda m: m.array(a) @ m.array([[1.5, 2.0], [-1.0, 0.5]]),
        lambda m: m.inner(m.array(Z), m.array(W)),
        lambda m: m.outer(m.array(Z[:2]), m.array([1.0, 2.0])),
        lambda m: m.clip(m.array([1 + 2j, -1 + 0j, 5 + 5j]), 0, 3),
        lambda m: m.where(m.array([True, False]), m.array([1 + 1j, 2 + 2j]), 0.5),
    ]:
        assert_both(build, rtol=3e-6, atol=1e-6)


# --- gradients: MLX's convention ----------------------------------------------------------


def test_vjp_of_matmul_and_prod_conjugate():
    a, b = mx.array([[1 + 2j, 1j]]), mx.array([[0.5 - 1j], [2 + 0j]])
    cot = mx.array([[1 - 1j]])
    _, (va, vb) = mx.vjp(mx.matmul, [a, b], [cot])
    assert close(va.tolist(), [[(1 - 1j) * (0.5 + 1j), (1 - 1j) * 2]])
    assert close(vb.tolist(), [[(1 - 2j) * (1 - 1j)], [-1j * (1 - 1j)]])
    _, (vp,) = mx.vjp(lambda z: z.prod(), [mx.array(Z[:3])], [mx.array(1 - 1j)])
    others = [Z[1] * Z[2], Z[0] * Z[2], Z[0] * Z[1]]
    assert close(vp.tolist(), [(1 - 1j) * o.conjugate() for o in others], rtol=1e-5)
