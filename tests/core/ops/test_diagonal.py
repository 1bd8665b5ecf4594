"""diag, diagonal and trace (mlxref/core/ops/diagonal.py; MLX's mlx/ops.cpp), with real MLX
as the oracle: values, dtypes, errors, gradients and vmap; diag of a vector is one
Scatter node and diagonal one Gather.
"""

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx


A3 = lambda lib: lib.arange(24).reshape(2, 3, 4)  # noqa: E731
B2 = lambda lib: lib.arange(12).reshape(3, 4)  # noqa: E731


@needs_mlx
@pytest.mark.parametrize("k", [0, 1, -2, 7, -7])
def test_diag_builds_and_extracts_as_mlx(k):
    for build in (lambda lib: lib.diag(lib.array([1, 2, 3]), k=k),
                  lambda lib: lib.diag(B2(lib), k),
                  lambda lib: lib.diag(lib.array([], lib.float32), k=abs(k)),
                  lambda lib: lib.array([True, False]).diag(k=k)):
        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("offset, axis1, axis2", [(0, 0, 1), (1, 0, 1), (-2, 0, 1),
                                                  (0, 1, 2), (1, 2, 0), (-1, -1, -3),
                                                  (10, 0, 1)])
def test_diagonal_and_trace_match_mlx(offset, axis1, axis2):
    builds = [lambda lib: lib.diagonal(A3(lib), offset, axis1, axis2),
              lambda lib: A3(lib).diagonal(offset, axis1, axis2)]
    traces = [lambda lib: lib.trace(A3(lib), offset, axis1, axis2),
              lambda lib: lib.trace(A3(lib).astype(lib.int8), offset, axis1, axis2),
              lambda lib: lib.trace(A3(lib), offset, axis1, axis2, lib.float16)]
    empty = mx.diagonal(A3(mx), offset, axis1, axis2).size == 0
    if empty:
        # MLX 0.32.4 never returns from evaluating the trace of an empty
        # diagonal of a 3-D array; mlxref's is zeros, as NumPy's.
        for trace in traces:
            out = trace(mx)
            assert out.tolist() == [0] * out.size and out.shape == (4,)
    else:
        builds += traces
    for build in builds:
        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)
    ours, theirs = both(lambda lib: lib.diagonal(B2(lib), offset=offset))
    assert_same_as_mlx(ours, theirs)


@needs_mlx
def test_diagonal_errors_are_mlxs():
    for program in (lambda lib: lib.diag(A3(lib)),
                    lambda lib: lib.diag(lib.array(1.0)),
                    lambda lib: lib.diagonal(lib.array([1, 2])),
                    lambda lib: lib.diagonal(A3(lib), 0, 0, 0),
                    lambda lib: lib.diagonal(A3(lib), 0, 3, 0),
                    lambda lib: lib.diagonal(A3(lib), 0, 0, -4),
                    lambda lib: lib.trace(lib.array([1, 2])),
                    lambda lib: lib.trace(A3(lib), 0, -1, 2),
                    lambda lib: lib.trace(A3(lib), 0, 0, -5),
                    lambda lib: lib.diag([1, 2]),
                    lambda lib: lib.diag(B2(lib), k=1.0),
                    lambda lib: lib.diagonal(B2(lib), axis1=1.0),
                    lambda lib: lib.trace(B2(lib), axis2=2.5)):
        assert_same_error(program)


@needs_mlx
def test_diag_and_diagonal_gradients_and_vmap_match_mlx():
    programs = [
        lambda lib: lib.grad(lambda x: (lib.diag(x, 1) * lib.arange(16).reshape(4, 4)).sum())(
            lib.array([1.0, 2.0, 3.0])),
        lambda lib: lib.grad(lambda x: (lib.diagonal(x, -1, 2, 0) ** 2).sum())(
            lib.arange(24.0).reshape(2, 3, 4)),
        lambda lib: lib.grad(lambda x: lib.trace(x, 1) * 3)(lib.ones((3, 3))),
        lambda lib: lib.vmap(lambda x: lib.diag(x, -1))(lib.array([[1.0, 2.0], [3.0, 4.0]])),
        lambda lib: lib.vmap(lambda x: lib.diagonal(x), in_axes=2)(lib.arange(18.0).reshape(3, 3, 2)),
        lambda lib: lib.vmap(lib.trace)(lib.arange(8.0).reshape(2, 2, 2)),
    ]
    for program in programs:
        ours, theirs = both(program)
        assert_same_as_mlx(ours, theirs)


def test_diag_of_a_vector_is_one_scatter_and_diagonal_one_gather():
    """MLX's compositions: no primitive of their own."""
    out = mx.diag(mx.array([1.0, 2.0]))
    assert out.primitive().name == "Scatter"
    d = mx.diagonal(mx.ones((2, 3)))
    names, stack = set(), [d]
    while stack:
        a = stack.pop()
        if a.primitive() is not None:
            names.add(a.primitive().name)
            stack.extend(a.inputs())
    assert "Gather" in names
