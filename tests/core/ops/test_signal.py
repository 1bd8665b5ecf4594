"""The window functions (bartlett, blackman, hamming, hanning) and convolve
(mlxref/core/ops/signal.py; MLX's mlx/ops.cpp), with real MLX as the oracle: each case is
run on both libraries, with the same shape, dtype and values (float sums to a tolerance),
or the same error type and message; gradients (grad) and vmap are compared the same way.
"""

import pytest

import mlxref.core as mx
from support import case_x, check_case_against_mlx, needs_mlx

cases = {}

X = case_x  # the (2, 3) float32 input of the cases: 0.25, 0.5, ..., 1.5

for NW in [-2, 0, 1, 2, 5, 8]:
    for w in ['bartlett', 'blackman', 'hamming', 'hanning']:
        cases[f"{w}{NW}"] = lambda m, w=w, NW=NW: m.round(getattr(m, w)(NW), 5)
cases['barf'] = lambda m: m.bartlett(2.0)
cases['hamf'] = lambda m: m.hamming(True)
for mode in ['full', 'same', 'valid']:
    for la, lv in [(5, 4), (4, 5), (5, 3), (1, 1), (2, 6), (6, 1), (3, 3)]:
        cases[f'conv{mode}{la}{lv}'] = lambda m, mode=mode, la=la, lv=lv: m.convolve(m.arange(1., la + 1) ** 2 / 7, m.arange(lv) - 1.5, mode)
cases['convint'] = lambda m: m.convolve(m.arange(3), m.arange(2))
cases['convmix'] = lambda m: m.convolve(m.arange(3), m.arange(2.0))
cases['convbad'] = lambda m: m.convolve(m.arange(3.), m.arange(2.), 'bad')
cases['convempty'] = lambda m: m.convolve(m.arange(3.), m.zeros(0))
cases['conv2d'] = lambda m: m.convolve(m.arange(3.), m.zeros((1, 1)))
cases['conv16'] = lambda m: m.convolve(m.arange(3, dtype=m.float16), m.arange(2.))
cases['convbf'] = lambda m: m.convolve(m.arange(3, dtype=m.bfloat16), m.arange(2, dtype=m.bfloat16)).astype(m.float32)
cases['convc'] = lambda m: m.convolve(m.arange(3.) + 1j, m.arange(2.))
cases['g_conv'] = lambda m: m.grad(lambda a, b: (m.convolve(a, b, 'same') ** 2).sum(), argnums=(0, 1))(X(m).reshape(-1), X(m)[0] - 1)
cases['g_convv'] = lambda m: m.grad(lambda a, b: (m.convolve(a, b, 'valid') ** 3).sum(), argnums=(0, 1))(X(m)[0] - 1, X(m).reshape(-1))
cases['v_conv'] = lambda m: m.vmap(lambda a: m.convolve(a, X(m)[0]))(X(m))
cases['j_conv'] = lambda m: m.jvp(lambda a: m.convolve(a, X(m)[0], 'full'), [X(m)[1]], [X(m)[0]])[1]

A6 = lambda m: m.arange(6.).reshape(2, 3)
cases['vwin'] = lambda m: m.vmap(lambda x: x * m.hanning(3))(A6(m))

# MLX has no jvp for Convolution: mlxref has one (tested below against the vjp
# results instead).
del cases["j_conv"]


@needs_mlx
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_mlx(name):
    check_case_against_mlx(cases[name])


def test_convolve_jvp_agrees_with_its_vjp():
    a, v = mx.array([1.0, -2.0, 0.5, 3.0]), mx.array([0.25, 2.0])
    t = mx.array([1.0, 0.0, -1.0, 2.0])
    (jvp,) = mx.jvp(lambda x: mx.convolve(x, v), [a], [t])[1]
    for k in range(jvp.size):
        (row,) = mx.vjp(lambda x: mx.convolve(x, v), [a], [mx.eye(jvp.size)[k]])[1]
        assert abs(jvp[k].item() - (row * t).sum().item()) < 1e-6
