"""hadamard_transform (mlxref/core/primitives/hadamard.py, backend/cpu/hadamard.py; MLX's
mlx/backend/cpu/hadamard.cpp), with real MLX as the oracle: values bit for bit (the
butterflies in float32, float16 and bfloat16), dtypes, errors, vjp, jvp and vmap; where
MLX's vjp is wrong, mlxref's is the transform's transpose.
"""

import math

import pytest

import mlxref.core as mx
from support import (assert_same_array, assert_same_as_mlx, assert_same_error, both, needs_mlx,
                     random_rows)

FLOATS = ["float32", "float16", "bfloat16"]


@needs_mlx
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [2, 8, 12, 20, 28, 24, 40, 56, 1])
def test_hadamard_transform_is_mlx_bit_for_bit(dtype, n):
    def build(lib):
        x = lib.array(random_rows((3, n), n, scale=3.0)).astype(getattr(lib, dtype))
        return [lib.hadamard_transform(x), lib.hadamard_transform(x, 0.3),
                lib.hadamard_transform(x, scale=1.0)]

    for ours, theirs in zip(*both(build)):
        assert_same_array(ours, theirs)


@needs_mlx
def test_hadamard_transform_dtypes_scalars_and_errors_are_mlx():
    def build(lib):
        return [lib.hadamard_transform(lib.array([[1, 2, 3, 4]])),
                lib.hadamard_transform(lib.array(3)),
                lib.hadamard_transform(lib.array(3), scale=2.0),
                lib.hadamard_transform(lib.array([1.5], lib.float16), 2.0),
                lib.hadamard_transform(lib.array([1 + 2j, 3, 0, 1]))]

    for ours, theirs in zip(*both(build)):
        assert_same_array(ours, theirs)
    programs = [
        lambda lib: lib.eval(lib.hadamard_transform(lib.ones((2, 6)))),
        lambda lib: lib.eval(lib.hadamard_transform(lib.ones((4,), lib.float64))),
        lambda lib: lib.hadamard_transform(lib.zeros((0, 4))),
        lambda lib: lib.hadamard_transform(lib.ones((4,)), scale="2"),
        lambda lib: lib.eval(lib.vmap(lib.hadamard_transform)(lib.ones((4, 6)))),
    ]
    for i, program in enumerate(programs):
        assert_same_error(program), i


def test_hadamard_transform_of_m_times_a_non_power_of_two_is_a_clear_error():
    # MLX splits 36 into 12 * 3 and runs its butterflies on 3: not a transform
    with pytest.raises(ValueError, match=r"The size 36 is 12\*3"):
        mx.eval(mx.hadamard_transform(mx.ones((36,))))


@needs_mlx
@pytest.mark.parametrize("n", [8, 12, 24])
def test_hadamard_transform_vjp_and_jvp_are_mlx(n):
    def build(lib):
        x, c = lib.array(random_rows((2, n), 1)), lib.array(random_rows((2, n), 2))
        return [lib.vjp(lambda v: lib.hadamard_transform(v, 0.5), [x], [c])[1][0],
                lib.jvp(lambda v: lib.hadamard_transform(v), [x], [c])[1][0]]

    for ours, theirs in zip(*both(build)):
        assert_same_as_mlx(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [20, 28, 40])
def test_hadamard_transform_vjp_is_the_transpose_where_mlx_is_wrong(n):
    # H_20 and H_28 are not symmetric: MLX's vjp applies H, the adjoint is Hᵀ,
    # so <vjp(c), t> must equal <c, jvp(t)>
    x, t, c = (mx.array(random_rows((2, n), s)) for s in (1, 2, 3))
    _, (jt,) = mx.jvp(lambda v: mx.hadamard_transform(v, 0.25), [x], [t])
    _, (vc,) = mx.vjp(lambda v: mx.hadamard_transform(v, 0.25), [x], [c])
    assert math.isclose((jt * c).sum().item(), (vc * t).sum().item(), rel_tol=1e-5)


@needs_mlx
@pytest.mark.parametrize("in_axis,shape", [(0, (3, 2, 8)), (1, (3, 4, 8)), (2, (3, 4, 2))])
def test_hadamard_transform_vmap_is_mlx(in_axis, shape):
    def build(lib):
        x = lib.array(random_rows(shape, 4))
        return lib.vmap(lib.hadamard_transform, in_axes=in_axis)(x)

    assert_same_array(*both(build))
