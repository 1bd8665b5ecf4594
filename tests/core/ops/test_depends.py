"""depends (mlxref/core/ops/depends.py and the Depends primitive in primitives/custom.py;
MLX's mlx/ops.cpp depends), compared with real MLX: the outputs, their gradients (the
dependencies get zero cotangents) and the argument errors.
"""

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx


@needs_mlx
def test_depends_matches_mlx():
    def run(m):
        a = m.array([1.0, 2.0, 3.0])
        one = m.depends(m.exp(a), m.log(a))
        listed = m.depends([m.exp(a), a], [m.log(a)])
        # the dependencies get zero cotangents, the inputs their own
        g = m.grad(lambda x: m.depends(x * 2, m.log(x)).sum())(a)
        vjp = m.vjp(lambda x: m.depends([x, x * 2], [x]), [a], [a, a])[1][0]
        return [one, *listed, g, vjp]

    ours, theirs = both(run)
    for x, y in zip(ours, theirs):
        assert_same_as_mlx(x, y)
    assert type(mx.depends([mx.ones(2)], mx.ones(1))) is list
    assert isinstance(mx.depends(mx.ones(2), [mx.ones(1)]), mx.array)


@needs_mlx
def test_depends_argument_errors_match_mlx():
    assert_same_error(lambda m: m.depends(1, m.ones(2)))
    assert_same_error(lambda m: m.depends(m.ones(2), [1]))


def test_depends_with_no_inputs_is_refused():
    # MLX crashes the process here
    with pytest.raises(ValueError, match=r"\[depends\]"):
        mx.depends([], [mx.ones(2)])
