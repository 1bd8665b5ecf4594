"""tensordot and kron (mlxref/core/ops/products.py; MLX's mlx/ops.cpp), with real MLX as the
oracle: each case is run on both libraries, with the same shape, dtype and values (float
sums to a tolerance), or the same error type and message; gradients (grad) and vmap are
compared the same way.
"""

import pytest

from support import case_x, check_case_against_mlx, dtype_cases, needs_mlx

cases = {}

X = case_x  # the (2, 3) float32 input of the cases: 0.25, 0.5, ..., 1.5

A3 = lambda m: m.arange(24.).reshape(2, 3, 4)
B2 = lambda m: m.arange(12.).reshape(3, 4) / 3
cases['td'] = lambda m: m.tensordot(A3(m), B2(m))
cases['tdneg'] = lambda m: m.tensordot(A3(m), B2(m), -1)
cases['td3'] = lambda m: m.tensordot(A3(m), B2(m), 3)
cases['tdl'] = lambda m: m.tensordot(A3(m), B2(m), [[1], [0]])
cases['tdsz'] = lambda m: m.tensordot(A3(m), B2(m), [[1, 2], [0]])
cases['tdsh'] = lambda m: m.tensordot(A3(m), B2(m), [[1], [1]])
cases['td3l'] = lambda m: m.tensordot(A3(m), B2(m), [[1], [0], [1]])
cases['tdn'] = lambda m: m.tensordot(A3(m), B2(m), [[-2, -1], [-2, -1]])
cases['tdswap'] = lambda m: m.tensordot(A3(m), B2(m), ((2, 1), (1, 0)))
cases['td0'] = lambda m: m.tensordot(A3(m), B2(m), 0)
cases['tdint'] = lambda m: m.tensordot(m.arange(3), m.arange(3), 1)
cases['tdf'] = lambda m: m.tensordot(A3(m), B2(m), 1.0)
cases['tdempty'] = lambda m: m.tensordot(m.zeros((2, 0)), m.zeros((0, 3)), 1)
cases['kron'] = lambda m: m.kron(m.arange(3), B2(m))
cases['kron2'] = lambda m: m.kron(A3(m), m.array([[1, -1]], m.int32))
cases['kron0d'] = lambda m: m.kron(m.array(2), B2(m))
cases['kronempty'] = lambda m: m.kron(m.zeros(0), B2(m))
cases['g_td'] = lambda m: m.grad(lambda a, b: (m.tensordot(a, b, [[0], [1]]) ** 2).sum(), argnums=(0, 1))(X(m), X(m).T + 1)
cases['g_kron'] = lambda m: m.grad(lambda a, b: (m.kron(a, b) ** 2).sum(), argnums=(0, 1))(X(m), X(m)[0] - 1)
cases['v_td'] = lambda m: m.vmap(lambda a: m.tensordot(a, X(m), 1))(m.stack([X(m).T, X(m).T * 2]))
cases['v_kron'] = lambda m: m.vmap(lambda a: m.kron(a, X(m)), in_axes=1)(X(m))

A6 = lambda m: m.arange(6.).reshape(2, 3)
cases['kron0'] = lambda m: m.kron(m.array(2), m.array(3.5))
cases['td0d'] = lambda m: m.tensordot(m.array(2.), m.array(3.), 0)
cases['tdneg'] = lambda m: m.tensordot(A6(m), A6(m), [[-1, 0], [1, 0]])

DTYPED = {
    'kron': lambda m, x: m.kron(x, m.array([1, 2], m.int8)),
}
cases.update(dtype_cases(DTYPED))


@needs_mlx
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_mlx(name):
    check_case_against_mlx(cases[name])
