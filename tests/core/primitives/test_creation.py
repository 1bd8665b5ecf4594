"""The creation family (mlxref/core/primitives/creation.py: Arange, Full; ops/creation.py;
MLX's mlx/ops.cpp and mlx/backend/cpu/arange.h): zeros, ones, full, zeros_like,
ones_like, full_like, empty, arange, linspace, eye, identity, tri, tril and triu; the
rules of Full and Arange against MLX's, and their vmap.

Expected values are worked out by hand; the tests marked ``needs_mlx`` compare
every creation op with real MLX (values, dtypes and errors, and the transforms'
results of tri, tril, triu and full_like).
"""

import math
import re

import pytest

import mlxref.core as mx
from mlxref.core.array import from_data
from mlxref.core.primitives import creation as C
from mlxref.core.primitives.creation import Arange, Full
from mlxref.core.primitives.reduction import ArgReduce
from mlxref.testing import check_grads
from support import (BATCH, CASE_DTYPES, assert_array, assert_rules_same_as_mlx, assert_same_as_mlx,
                     check_case_against_mlx, check_unary_vmap_against_loop,
                     check_unary_vmap_against_mlx, dtype_cases, fd_matrix, needs_mlx, real_mx,
                     rule_cases, rules_in_both, spread_array)


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


# --- zeros, ones, full ---------------------------------------------------------------


def test_zeros_and_ones():
    assert_array(mx.zeros(3), [0.0, 0.0, 0.0], mx.float32, (3,))
    assert_array(mx.zeros((2, 3), mx.int32), [[0] * 3] * 2, mx.int32, (2, 3))
    assert_array(mx.zeros([2, 1], dtype=None), [[0.0], [0.0]], mx.float32, (2, 1))
    assert_array(mx.zeros(()), 0.0, mx.float32, ())
    assert_array(mx.zeros((2, 0)), [[], []], mx.float32, (2, 0))
    assert_array(mx.ones((2,), mx.bool_), [True, True], mx.bool_, (2,))
    assert_array(mx.ones([]), 1.0, mx.float32, ())
    assert_array(mx.ones((1, 2), mx.float64), [[1.0, 1.0]], mx.float64)
    assert_array(mx.ones(shape=(2,), dtype=mx.int64), [1, 1], mx.int64)
    assert mx.zeros(2).tolist()[0] is not True  # a float, not a bool
    assert isinstance(mx.ones(2, mx.int32).tolist()[0], int)


def test_full():
    assert_array(mx.full((2, 3), 2.5), [[2.5] * 3] * 2, mx.float32, (2, 3))
    assert_array(mx.full((2,), 2), [2, 2], mx.int32)
    assert_array(mx.full(3, True), [True] * 3, mx.bool_)
    assert_array(mx.full((), 7), 7, mx.int32, ())
    assert_array(mx.full((2, 0), 7), [[], []], mx.int32, (2, 0))
    # an array is broadcast to the shape
    assert_array(mx.full((2, 3), mx.array([[1], [2]])), [[1, 1, 1], [2, 2, 2]], mx.int32, (2, 3))
    assert_array(mx.full((2, 2), mx.array([1.0, 2.0])), [[1.0, 2.0], [1.0, 2.0]], mx.float32)
    assert_array(mx.full(shape=(2,), vals=1.0, dtype=mx.float64), [1.0, 1.0], mx.float64)
    assert_array(mx.full((2,), 3, mx.float32), [3.0, 3.0], mx.float32)
    assert_array(mx.full((1,), 3000000000), [3000000000], mx.int64)


def test_full_keeps_mlx_dtype_quirks():
    # MLX 0.32: the dtype comes from the converted value, so these look odd but are MLX's.
    assert_array(mx.full((2,), 2.5, mx.int32), [2.5, 2.5], mx.float32)  # a float stays float
    assert_array(mx.full((2,), 1, mx.bool_), [1, 1], mx.int32)  # an int never becomes bool
    assert_array(mx.full((2,), mx.array([1, 2]), dtype=mx.float32), [1, 2], mx.int32)


def test_full_is_a_lazy_full_node_over_a_broadcast():
    out = mx.full((2, 3), 1.5)
    assert out.data() is None and isinstance(out.primitive(), Full)
    (filled,) = out.inputs()
    assert filled.shape == (2, 3)
    assert_array(out, [[1.5] * 3] * 2)


def test_full_errors():
    with raises(ValueError, "[full] Negative dimensions not allowed."):
        mx.full((2, -1), 7)
    with raises(ValueError, "[full] Negative dimensions not allowed."):
        mx.zeros(-1)
    with raises(ValueError, "[full] Negative dimensions not allowed."):
        mx.ones((1, -3))
    with raises(ValueError, "[broadcast_shapes] Shapes (2) and (2,3) cannot be broadcast."):
        mx.full((2, 3), mx.array([1, 2]))
    with raises(ValueError, "Invalid type list received in array initialization."):
        mx.full((2, 3), [1, 2, 3])
    with raises(ValueError, "Converting 3000000000 to int32 would result in overflow."):
        mx.full((2,), 3000000000, mx.int32)
    with raises(RuntimeError, "std::bad_cast"):
        mx.full(2.0, 1)
    with raises(RuntimeError, "std::bad_cast"):
        mx.zeros((2.0,))
    with raises(TypeError, "full(): incompatible function arguments."):
        mx.full(None, 1)
    with raises(TypeError, "zeros(): incompatible function arguments. The following argument "
                "types are supported:\n    1. zeros(shape: int | Sequence[int], dtype: Dtype | "
                "None = float32, *, stream: StreamOrDevice = None) -> array\n\n"
                "Invoked with types: tuple, str"):
        mx.zeros((2,), "float32")


def test_zeros_like_and_ones_like():
    a = mx.array([[1, 2]])
    assert_array(mx.zeros_like(a), [[0, 0]], mx.int32, (1, 2))
    assert_array(mx.zeros_like(a, mx.float32), [[0.0, 0.0]], mx.float32, (1, 2))
    assert_array(mx.ones_like(a, dtype=mx.bool_), [[True, True]], mx.bool_, (1, 2))
    assert_array(mx.ones_like(mx.array(3.0)), 1.0, mx.float32, ())
    assert_array(mx.ones_like(from_data([], (0, 2), mx.float32)), [], mx.float32, (0, 2))
    # the result does not depend on a's values, so its graph does not contain a
    assert all(x is not a for x in mx.zeros_like(a).inputs())
    with raises(TypeError, "ones_like(): incompatible function arguments."):
        mx.ones_like([1, 2])
    with raises(TypeError, "zeros_like(): incompatible function arguments."):
        mx.zeros_like(3)


# --- arange ------------------------------------------------------------------------------


def test_arange_overloads_and_dtypes():
    assert_array(mx.arange(5), [0, 1, 2, 3, 4], mx.int32, (5,))
    assert_array(mx.arange(5.0), [0.0, 1.0, 2.0, 3.0, 4.0], mx.float32)
    assert_array(mx.arange(2, 5), [2, 3, 4], mx.int32)
    assert_array(mx.arange(2, 5.0), [2.0, 3.0, 4.0], mx.float32)
    assert_array(mx.arange(0, 1, 0.25), [0.0, 0.25, 0.5, 0.75], mx.float32)
    assert_array(mx.arange(5, 0, -2), [5, 3, 1], mx.int32)
    assert_array(mx.arange(0, 10, 3.5), [0.0, 3.5, 7.0], mx.float32)
    assert_array(mx.arange(10, step=3), [0, 3, 6, 9], mx.int32)
    assert_array(mx.arange(start=1, stop=4), [1, 2, 3], mx.int32)
    assert_array(mx.arange(stop=6, step=2), [0, 2, 4], mx.int32)
    assert_array(mx.arange(3, None, 2), [0, 2], mx.int32)
    assert_array(mx.arange(1, 4, None, mx.float32), [1.0, 2.0, 3.0], mx.float32)
    assert_array(mx.arange(0.0, 3, dtype=mx.float64), [0.0, 1.0, 2.0], mx.float64)
    assert_array(mx.arange(0, 3, True), [0, 1, 2], mx.int32)
    # an int that does not fit int32 makes it int64
    big = 2**31
    assert_array(mx.arange(1, big + 5, 2**30), [1, 2**30 + 1, big + 1], mx.int64)


def test_arange_empty_and_size():
    assert_array(mx.arange(5, 0), [], mx.int32, (0,))
    assert_array(mx.arange(-3), [], mx.int32, (0,))
    assert_array(mx.arange(0), [], mx.int32, (0,))
    # the size is ceil((stop - start) / step) computed in doubles, as in MLX
    assert mx.arange(0.1, 0.4, 0.1).shape == (4,)
    assert_array(mx.arange(0, 3, math.inf), [0.0], mx.float32, (1,))
    assert_array(mx.arange(0, -3, math.inf), [], mx.float32, (0,))


def test_arange_with_an_integer_dtype_truncates_start_and_step_like_mlx():
    # MLX casts start and start + step to the dtype, then steps by their difference.
    assert_array(mx.arange(0, 3, 0.5, mx.int32), [0] * 6, mx.int32, (6,))
    assert_array(mx.arange(0.5, 3, dtype=mx.int32), [0, 1, 2], mx.int32)
    assert_array(mx.arange(-2.5, 2, 1, mx.int32), [-2, -1, 0, 1, 2], mx.int32)
    assert_array(mx.arange(2.7, 5, 0.6, mx.int32), [2, 3, 4, 5], mx.int32)
    assert_array(mx.arange(1.5, dtype=mx.int32), [0, 1], mx.int32)


def test_arange_is_a_node_without_inputs():
    out = mx.arange(1, 7, 2)
    assert out.data() is None and isinstance(out.primitive(), Arange)
    assert out.inputs() == ()
    assert out.primitive().params() == {"start": 1, "stop": 7, "step": 2}
    assert_array(out, [1, 3, 5])


def test_arange_errors():
    with raises(ValueError, "[arange] step must be nonzero."):
        mx.arange(0, 5, 0)
    with raises(ValueError, "[arange] step must be nonzero."):
        mx.arange(0, 5, 0.0)
    with raises(ValueError, "bool not supported for arange."):
        mx.arange(5, dtype=mx.bool_)
    with raises(ValueError, "bool not supported for arange."):
        mx.arange(True)
    with raises(ValueError, "[arange] Cannot compute length."):
        mx.arange(math.nan)
    with raises(ValueError, "[arange] Cannot compute length."):
        mx.arange(math.inf)
    with raises(ValueError, "[arange] Maximum size exceeded."):
        mx.arange(2**31 + 5)
    with raises(ValueError, "[arange] Maximum size exceeded."):
        mx.arange(0, 1, 1e-20)
    with raises(TypeError, "arange(): incompatible function arguments."):
        mx.arange()
    with raises(TypeError, "Invoked with types: str"):
        mx.arange("a")
    with raises(TypeError, "arange(): incompatible function arguments."):
        mx.arange(mx.array(3))


# --- linspace ----------------------------------------------------------------------------


def test_linspace():
    assert_array(mx.linspace(0, 1, 5), [0.0, 0.25, 0.5, 0.75, 1.0], mx.float32, (5,))
    assert mx.linspace(0, 1).shape == (50,)
    assert_array(mx.linspace(0, 1, 3), [0.0, 0.5, 1.0], mx.float32)
    assert_array(mx.linspace(2, -2, 3), [2.0, 0.0, -2.0], mx.float32)
    assert_array(mx.linspace(0, 1, 4, endpoint=False), [0.0, 0.25, 0.5, 0.75], mx.float32)
    assert_array(mx.linspace(0, 1, 4, False), [0.0, 0.25, 0.5, 0.75], mx.float32)
    assert_array(mx.linspace(0, 1, 0), [], mx.float32, (0,))
    assert_array(mx.linspace(3, 7, 1), [3.0], mx.float32, (1,))
    # an integer dtype truncates: 0, 10/3, 20/3, 10
    assert_array(mx.linspace(0, 10, 4, dtype=mx.int32), [0, 3, 6, 10], mx.int32)
    assert_array(mx.linspace(0, 1, 3, dtype=mx.float64), [0.0, 0.5, 1.0], mx.float64)
    assert_array(mx.linspace(0, 1, 3, dtype=mx.bool_), [False, True, True], mx.bool_)
    assert_array(mx.linspace(mx.array(1.0), 2, 3), [1.0, 1.5, 2.0], mx.float32)


def test_linspace_of_fifty_has_its_endpoints_and_even_steps():
    values = mx.linspace(-1, 1).tolist()
    assert len(values) == 50
    assert values[0] == -1.0 and abs(values[-1] - 1.0) < 1e-6
    for i, v in enumerate(values):
        assert abs(v - (-1 + 2 * i / 49)) < 1e-6


def test_linspace_errors():
    with raises(ValueError, "[linspace] number of samples, -1, must be non-negative."):
        mx.linspace(0, 1, -1)
    with raises(TypeError, "linspace(): incompatible function arguments."):
        mx.linspace(0, 1, 2.5)
    with raises(TypeError, "linspace(): incompatible function arguments."):
        mx.linspace("a", 1, 3)
    with raises(TypeError, "linspace(): incompatible function arguments."):
        mx.linspace(0, 1, 3, endpoint=1)


# --- eye and identity ----------------------------------------------------------------------


def test_eye():
    assert_array(mx.eye(3), [[1, 0, 0], [0, 1, 0], [0, 0, 1]], mx.float32, (3, 3))
    assert_array(mx.eye(2, 3), [[1, 0, 0], [0, 1, 0]], mx.float32, (2, 3))
    assert_array(mx.eye(3, k=1), [[0, 1, 0], [0, 0, 1], [0, 0, 0]], mx.float32)
    assert_array(mx.eye(3, 2, -1), [[0, 0], [1, 0], [0, 1]], mx.float32, (3, 2))
    assert_array(mx.eye(3, m=None, k=-1), [[0, 0, 0], [1, 0, 0], [0, 1, 0]], mx.float32)
    assert_array(mx.eye(3, k=5), [[0] * 3] * 3, mx.float32)
    assert_array(mx.eye(3, k=-5), [[0] * 3] * 3, mx.float32)
    assert_array(mx.eye(0), [], mx.float32, (0, 0))
    assert_array(mx.eye(2, 0), [[], []], mx.float32, (2, 0))
    assert_array(mx.eye(2, dtype=mx.int32), [[1, 0], [0, 1]], mx.int32)
    assert_array(mx.eye(2, None, 0, mx.bool_), [[True, False], [False, True]], mx.bool_)
    assert_array(mx.eye(True), [[1.0]], mx.float32, (1, 1))


def test_identity():
    assert_array(mx.identity(3), [[1, 0, 0], [0, 1, 0], [0, 0, 1]], mx.float32, (3, 3))
    assert_array(mx.identity(2, mx.int32), [[1, 0], [0, 1]], mx.int32)
    assert_array(mx.identity(2, dtype=None), [[1, 0], [0, 1]], mx.float32)
    assert_array(mx.identity(0), [], mx.float32, (0, 0))


def test_eye_errors():
    with raises(ValueError, "[eye] N and M must be positive integers."):
        mx.eye(-1)
    with raises(ValueError, "[eye] N and M must be positive integers."):
        mx.eye(2, -1)
    with raises(ValueError, "[eye] N and M must be positive integers."):
        mx.identity(-2)
    with raises(TypeError, "eye(): incompatible function arguments. The following argument types "
                "are supported:\n    1. eye(n: int, m: int | None = None, k: int = 0, dtype: "
                "Dtype | None = float32, *, stream: StreamOrDevice = None) -> array\n\n"
                "Invoked with types: float"):
        mx.eye(2.5)
    with raises(TypeError, "eye(): incompatible function arguments."):
        mx.eye(2, k=1.0)
    with raises(TypeError, "identity(): incompatible function arguments."):
        mx.identity(2.0)


# --- against real MLX ----------------------------------------------------------------


@needs_mlx
def test_creation_ops_match_mlx():
    calls = [
        ("zeros", (3,), {}), ("zeros", ((2, 3), ), {"dtype": "int32"}), ("zeros", ((),), {}),
        ("zeros", ((2, 0),), {}), ("ones", ([2, 2],), {}), ("ones", ((2,),), {"dtype": "bool_"}),
        ("ones", ((2, 1),), {"dtype": "float64"}),
        ("full", ((2, 3), 2.5), {}), ("full", ((2,), 2), {}), ("full", (3, True), {}),
        ("full", ((2,), 2.5), {"dtype": "int32"}), ("full", ((2,), 1), {"dtype": "bool_"}),
        ("full", ((2,), 1), {"dtype": "float64"}),
        ("arange", (5,), {}), ("arange", (5.0,), {}), ("arange", (2, 5), {}),
        ("arange", (0, 1, 0.25), {}), ("arange", (5, 0, -1), {}), ("arange", (5, 0), {}),
        ("arange", (10,), {"step": 3}), ("arange", (), {"stop": 4}),
        ("arange", (0.5, 3), {"dtype": "int32"}), ("arange", (0, 3, 0.5), {"dtype": "int32"}),
        ("arange", (-2.5, 2, 1), {"dtype": "int32"}), ("arange", (0.1, 0.4, 0.1), {}),
        ("arange", (0, 3, math.inf), {}), ("arange", (1, 2**31 + 5, 2**30), {}),
        ("arange", (0, 3), {"dtype": "float64"}),
        ("linspace", (0, 1, 5), {}), ("linspace", (0, 1), {}), ("linspace", (0, 1, 0), {}),
        ("linspace", (0, 1, 1), {}), ("linspace", (0, 10, 4), {"dtype": "int32"}),
        ("linspace", (0, 1, 4), {"endpoint": False}), ("linspace", (1, 0, 3), {}),
        ("linspace", (0, 1, 3), {"dtype": "float64"}), ("linspace", (0, 1, 3), {"dtype": "bool_"}),
        ("linspace", (-3.5, 7.25, 9), {}),
        ("eye", (3,), {}), ("eye", (2, 3), {}), ("eye", (3,), {"k": 1}), ("eye", (3, 2, -1), {}),
        ("eye", (3,), {"k": 5}), ("eye", (3,), {"k": -5}), ("eye", (0,), {}),
        ("eye", (4, 6), {"k": 2, "dtype": "int32"}), ("eye", (2,), {"dtype": "bool_"}),
        ("identity", (3,), {}), ("identity", (0,), {}), ("identity", (2, ), {"dtype": "int32"}),
    ]
    for name, args, kwargs in calls:
        ours_kw = {k: getattr(mx, v) if k == "dtype" else v for k, v in kwargs.items()}
        theirs_kw = {k: getattr(real_mx, v) if k == "dtype" else v for k, v in kwargs.items()}
        assert_same_as_mlx(getattr(mx, name)(*args, **ours_kw),
                           getattr(real_mx, name)(*args, **theirs_kw))
    for dtype in [None, "float32", "int32", "bool_"]:
        vals = [[1, 2, 3], [4, 5, 6]]
        kw_ours = {} if dtype is None else {"dtype": getattr(mx, dtype)}
        kw_theirs = {} if dtype is None else {"dtype": getattr(real_mx, dtype)}
        for name in ["zeros_like", "ones_like"]:
            assert_same_as_mlx(getattr(mx, name)(mx.array(vals), **kw_ours),
                               getattr(real_mx, name)(real_mx.array(vals), **kw_theirs))
    assert_same_as_mlx(mx.full((2, 3), mx.array([[1], [2]])),
                       real_mx.full((2, 3), real_mx.array([[1], [2]])))
    assert_same_as_mlx(mx.full((2,), mx.array([1, 2]), mx.float32),
                       real_mx.full((2,), real_mx.array([1, 2]), real_mx.float32))


@needs_mlx
def test_creation_errors_match_mlx():
    calls = [
        ("full", ((2, -1), 7), {}), ("zeros", (-1,), {}), ("arange", (0, 5, 0), {}),
        ("arange", (math.nan,), {}), ("arange", (True,), {}), ("arange", (2**31 + 5,), {}),
        ("linspace", (0, 1, -1), {}), ("eye", (-1,), {}), ("eye", (2, -1), {}),
        ("identity", (-2,), {}),
    ]
    for name, args, kwargs in calls:
        with pytest.raises(ValueError) as theirs:
            getattr(real_mx, name)(*args, **kwargs)
        with raises(ValueError, str(theirs.value)):
            getattr(mx, name)(*args, **kwargs)


# --- tri, tril, triu, empty, full_like: each case against real MLX -------------------------

cases = {}

cases['tri'] = lambda m: m.tri(3)
cases['trik'] = lambda m: m.tri(2, 3, 1, m.int32)
cases['trineg'] = lambda m: m.tri(-1)
cases['trim'] = lambda m: m.tri(2, -1)
cases['trif'] = lambda m: m.tri(2.0)
cases['tril'] = lambda m: m.tril(m.ones((2, 2, 3), m.int32), -1)
cases['triu'] = lambda m: m.triu(m.ones((2, 3, 3)), 1)
cases['triub'] = lambda m: m.triu(m.array([[True, True], [True, True]]))
cases['tril1'] = lambda m: m.tril(m.array([1, 2]))
cases['trilu'] = lambda m: m.triu(m.array([1, 2]))
cases['tril0'] = lambda m: m.tril(m.zeros((0, 3)))
cases['empty'] = lambda m: m.empty(3)
cases['emptyl'] = lambda m: m.empty_like(m.array([1, 2]))
cases['fl'] = lambda m: m.full_like(m.array([1, 2]), 2.5)
cases['fl16'] = lambda m: m.full_like(m.array([1, 2]), 2.5, m.float16)
cases['flarr'] = lambda m: m.full_like(m.array([1, 2]), m.array([1.5, 2]))
cases['flbig'] = lambda m: m.full_like(m.array([1, 2]), m.array([1, 2, 3]))
cases['flbc'] = lambda m: m.full_like(m.array([1, 2]), m.array([[1], [2.0]]))
cases['fllist'] = lambda m: m.full_like([1, 2], 3)
cases['flb'] = lambda m: m.full_like(m.array([1, 2]), True)
cases['flbool'] = lambda m: m.full_like(m.array([1, 2]), 3, m.bool_)

RULED = {
    'tril': lambda m, x: m.tril(x, 1),
    'triu': lambda m, x: m.triu(x),
    'fl': lambda m, x: m.full_like(x, 2.0) * x,
}
cases.update(rule_cases(RULED))

A6 = lambda m: m.arange(6.).reshape(2, 3)
cases['gtri'] = lambda m: m.grad(lambda x: (m.triu(x, -1) * m.tril(x, 1)).sum())(A6(m))
cases['vtril'] = lambda m: m.vmap(lambda x: m.tril(x.reshape(1, 3)), in_axes=0)(A6(m))
cases['fl0'] = lambda m: m.full_like(m.zeros((0, 2)), 3)

DTYPED = {
    'tril': lambda m, x: m.tril(x),
    'triu': lambda m, x: m.triu(x, 1),
    'full_like': lambda m, x: m.full_like(x, 2),
}
cases.update(dtype_cases(DTYPED))
for _dtype in CASE_DTYPES:
    cases[f'dtype_tri_{_dtype}'] = lambda m, d=_dtype: m.tri(2, 3, -1, getattr(m, d))


@needs_mlx
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_mlx(name):
    check_case_against_mlx(cases[name])


def test_full_like_gradient_reaches_the_value():
    # MLX's Full vjp multiplies the cotangent by the value (it gives 0 here);
    # mlxref's Full passes the cotangent on, as mx.full's does.
    g = mx.grad(lambda x: mx.full_like(x, x[0, 0]).sum())(mx.arange(6.0).reshape(2, 3))
    assert g.tolist() == [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]]


# === the rules of Full and Arange: vjp and jvp against MLX's, and check_grads ===============

T = [  # (2, 2, 4)
    [[1.0, 3.0, 0.5, 3.0], [2.0, 0.0, -1.0, 2.0]],
    [[0.0, 0.0, 1.0, 2.0], [1.5, -2.0, -2.0, 1.0]],
]

B3 = [2.0, -0.5, 1.5]


@needs_mlx
def test_full_jvp_matches_mlx():
    (_, jvp), (_, mlx_jvp) = rules_in_both(lambda m, x: m.full((2, 3), x), [B3])
    assert_same_as_mlx(jvp, mlx_jvp)


@needs_mlx
def test_full_vjp_is_the_identity_not_mlx_cotangent_times_value():
    # A deliberate difference: MLX 0.32's Full::vjp multiplies the cotangent
    # by the filled value, so its gradient of sum(full((3,), x)) at x = 2 is 6.
    # The derivative is 3; mlxref's rule is the identity (Broadcast sums).
    theirs = real_mx.grad(lambda x: real_mx.full((3,), x).sum())(real_mx.array(2.0))
    ours = mx.grad(lambda x: mx.full((3,), x).sum())(mx.array(2.0))
    assert theirs.item() == 6.0
    assert ours.item() == 3.0 and ours.dtype is mx.float32


def test_full_vjp_sums_over_the_broadcast_axes():
    x = mx.array([1.0, 2.0, 3.0])
    cot = mx.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    _, (vjp,) = mx.vjp(lambda a: mx.full((2, 3), a), [x], [cot])
    assert vjp.tolist() == [11.0, 22.0, 33.0]
    assert isinstance(mx.full((2, 3), x).primitive(), Full)


@needs_mlx
def test_arange_in_a_graph_matches_mlx():
    assert_rules_same_as_mlx(lambda m, x: x * m.arange(3) + m.sum(m.arange(2.0, 5.0)), B3)


def test_arange_and_argreduce_rules_directly():
    # Arange has no inputs, so no tape holds it; its rules are the base class's.
    a = mx.arange(3)
    with pytest.raises(ValueError, match=r"^\[Primitive::vjp\] Not implemented for Arange\.$"):
        Arange(0, 3, 1, mx.int32).vjp([], [a], [], [a])
    with pytest.raises(ValueError, match=r"^\[Primitive::jvp\] Not implemented for Arange\.$"):
        Arange(0, 3, 1, mx.int32).jvp([], [], [])
    x = mx.array(T)
    (zero,) = ArgReduce("argmax", 1, False).jvp([x], [mx.ones_like(x)], [0])
    assert zero.shape == (2, 4) and zero.dtype is mx.uint32


# --- finite differences, to second order ------------------------------------------------------

X64 = fd_matrix()  # float64, no ties, no zeros

CHECKED = {
    "full": (lambda x: mx.full((2, 3), x), [X64[0]]),
    "arange": (lambda x: x * mx.arange(3), [X64]),
}


@pytest.mark.parametrize("name", CHECKED)
def test_check_grads_second_order(name):
    f, args = CHECKED[name]
    check_grads(f, args, order=2)


# === vmap of Full and Arange: against MLX and against a loop over the examples ===========

# (id, f(m, x) written for either module, example shape)
UNARY = [
    ("full-row", lambda m, x: m.full((2, 4), x), (4,)),
    ("full-scalar", lambda m, x: m.full((2, 4), x * 2), ()),
]


@needs_mlx
@pytest.mark.parametrize("f,shape", [c[1:] for c in UNARY], ids=[c[0] for c in UNARY])
def test_unary_ops_match_mlx(f, shape):
    check_unary_vmap_against_mlx(f, shape)


@pytest.mark.parametrize("f,shape", [c[1:] for c in UNARY], ids=[c[0] for c in UNARY])
def test_unary_ops_equal_a_loop(f, shape):
    check_unary_vmap_against_loop(f, shape)


def test_arange_has_no_rule_but_never_needs_one():
    message = "[Primitive::vmap] Not implemented for Arange."
    with pytest.raises(ValueError, match=re.escape(message)):
        C.Arange(0, 3, 1, mx.int32).vmap([], [])
    got = mx.vmap(lambda x: x * mx.arange(4))(spread_array(mx, (BATCH, 4)))
    assert got.tolist() == (spread_array(mx, (BATCH, 4)) * mx.arange(4)).tolist()
