"""cumprod, cummax, cummin, logcumsumexp (the Scan primitive's reduce types), with real MLX
as the oracle.

Values, dtypes and errors are compared with MLX on every direction
(``reverse``, ``inclusive``) and axis; gradients through zeros (cumprod) and
ties (cummax, cummin) against MLX's vjp, and every jvp against the Jacobian
the vjp gives (MLX 0.32.4 has no jvp for cumprod, cummax and cummin).
"""

import itertools
import math

import pytest

import mlxref.core as mx
from mlxref.core.primitives.reduction import Scan
from support import assert_same_as_mlx, assert_same_error, both, close, needs_mlx, real_mx

SCANS = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
DIRECTIONS = list(itertools.product([False, True], [False, True]))  # (reverse, inclusive)
ROWS = [[1.0, 0.0, 2.0, 3.0], [-1.0, 2.0, 2.0, 0.5]]


def _scan(lib, name, x, **kw):
    return getattr(lib, name)(x, **kw)


# --- forward: values and dtypes --------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
def test_every_direction_and_axis_matches_mlx(name, axis):
    for reverse, inclusive in DIRECTIONS:
        def build(lib):
            return _scan(lib, name, lib.array(ROWS), axis=axis, reverse=reverse,
                         inclusive=inclusive)

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("dtype", ["bool_", "int8", "uint8", "int16", "uint32", "int64",
                                   "uint64", "float16", "bfloat16", "float64", "complex64"])
def test_result_dtypes_and_exclusive_starts_match_mlx(name, dtype):
    """cumprod of bool stays bool, logcumsumexp of integers is float32, and an
    exclusive cummax of uint8 starts from 0, of int8 from -128, of floats from -inf."""
    values = [3, 0, 2, 5, 1]
    for reverse, inclusive in DIRECTIONS:
        def build(lib):
            x = lib.array(values).astype(getattr(lib, dtype))
            return _scan(lib, name, x, reverse=reverse, inclusive=inclusive)

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs, rtol=1e-2 if dtype == "bfloat16" else 1e-5)


@needs_mlx
def test_integer_products_wrap_as_mlx():
    ours, theirs = both(lambda lib: lib.cumprod(lib.array([200, 2, 3, 7, 255], lib.uint8)))
    assert ours.tolist() == theirs.tolist() == [200, 144, 176, 208, 48]
    ours, theirs = both(lambda lib: lib.cumprod(lib.array([2**20, 2**15, 3], lib.int32)))
    assert ours.tolist() == theirs.tolist()


@needs_mlx
def test_cumprod_dtype_casts_first():
    ours, theirs = both(lambda lib: lib.cumprod(lib.array([True, True, False]), dtype=lib.int32))
    assert_same_as_mlx(ours, theirs)
    assert ours.dtype is mx.int32


@needs_mlx
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_nan_and_signed_zero_in_float32(name):
    """A nan makes every later output nan; a tie keeps the newer element
    (so -0.0 and 0.0 come out as MLX's)."""
    for values in ([1.0, math.nan, 3.0, -2.0], [0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]):
        for reverse, inclusive in DIRECTIONS:
            ours, theirs = both(lambda lib: _scan(lib, name, lib.array(values), reverse=reverse,
                                                  inclusive=inclusive))
            got, want = ours.tolist(), theirs.tolist()
            assert close(got, want)
            assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in want]


@needs_mlx
def test_logcumsumexp_is_stable_and_handles_infinities():
    for values in ([1000.0, 1000.0, -5.0], [1.0, -math.inf, 3.0, math.inf, 2.0],
                   [-math.inf, -math.inf]):
        for reverse, inclusive in DIRECTIONS:
            ours, theirs = both(lambda lib: lib.logcumsumexp(
                lib.array(values), reverse=reverse, inclusive=inclusive))
            assert_same_as_mlx(ours, theirs)


@needs_mlx
def test_complex_scans_order_as_mlx():
    values = [1 + 2j, 1 + 3j, 0 + 5j, 2 - 1j]
    for name in ("cumprod", "cummax", "cummin"):
        ours, theirs = both(lambda lib: _scan(lib, name, lib.array(values), inclusive=False))
        assert_same_as_mlx(ours, theirs)


def test_a_scalar_scans_as_one_element_and_empty_stays_empty():
    assert mx.cummin(mx.array(3.0)).shape == (1,)
    out = mx.cumprod(mx.zeros((0, 3)), axis=0, inclusive=False)
    assert out.shape == (0, 3) and out.tolist() == []


def test_methods_and_aliases():
    x = mx.array([[2.0, 1.0], [3.0, 0.5]])
    for name in ("cumprod", "cummax", "cummin", "logcumsumexp"):
        method = getattr(x, name)(axis=0, reverse=True)
        assert method.tolist() == getattr(mx, name)(x, axis=0, reverse=True).tolist()
    assert mx.cumulative_sum is mx.cumsum and mx.cumulative_prod is mx.cumprod
    if real_mx is not None:
        assert hasattr(real_mx, "cumulative_sum") and hasattr(real_mx, "cumulative_prod")


def test_primitive_names_are_mlxs():
    x = mx.array([1.0, 2.0])
    names = [_scan(mx, n, x).primitive().name for n in SCANS]
    assert names == ["CumSum", "CumProd", "CumMax", "CumMin", "CumLogAddExp"]
    with pytest.raises(ValueError, match="Unknown reduce type"):
        Scan(0, reduce_type="mean")


# --- bad arguments ---------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
def test_bad_axes_and_argument_types_give_mlxs_errors(name):
    assert_same_error(lambda lib: _scan(lib, name, lib.array([[1.0, 2.0]]), axis=2))
    assert_same_error(lambda lib: _scan(lib, name, lib.array([[1.0, 2.0]]), axis=-3))
    assert_same_error(lambda lib: _scan(lib, name, lib.array(1.0), axis=0))
    # TypeErrors: MLX's first two lines (its last, "Invoked with types", depends
    # on how the call was spelled).
    for a, bad in (([1.0, 2.0], {}), ([1.0], {"axis": 1.0}), ([1.0], {"reverse": 1}),
                   ([1.0], {"inclusive": None})):
        ours = str(pytest.raises(TypeError, _scan, mx, name,
                                 mx.array(a) if bad else a, **bad).value)
        theirs = str(pytest.raises(TypeError, _scan, real_mx, name,
                                   real_mx.array(a) if bad else a, **bad).value)
        assert theirs.startswith(ours.split("\n\n")[0]) and "supported:" in ours


# --- gradients -------------------------------------------------------------------------

GRAD_INPUTS = [
    [2.0, 0.0, 3.0, 0.0, 5.0],  # two zeros
    [2.0, 1.0, 0.0, 4.0, 5.0],  # one zero
    [1.0, 3.0, 3.0, 2.0, 3.0],  # ties
    [0.5, -1.0, 2.0, 1.5, 0.25],
]
COT = [1.0, -2.0, 0.5, 3.0, 1.5]


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
def test_vjp_matches_mlx_through_zeros_and_ties(name):
    for values in GRAD_INPUTS:
        for reverse, inclusive in DIRECTIONS:
            def build(lib):
                f = lambda a: _scan(lib, name, a, reverse=reverse, inclusive=inclusive)  # noqa: E731
                return lib.vjp(f, [lib.array(values)], [lib.array(COT)])[1][0]

            ours, theirs = both(build)
            assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5)


@needs_mlx
def test_vjp_along_an_inner_axis_and_of_the_flattened_array():
    x = [[1.0, 3.0, 3.0], [4.0, 0.0, 4.0]]
    for name in ("cumprod", "cummax", "cummin", "logcumsumexp"):
        for axis in (None, 0, 1):
            def build(lib):
                f = lambda a: _scan(lib, name, a, axis=axis, reverse=True).sum()  # noqa: E731
                return lib.grad(f)(lib.array(x))

            ours, theirs = both(build)
            assert_same_as_mlx(ours, theirs)


def test_cummax_ties_go_to_the_latest_element_in_scan_order():
    x = mx.array([3.0, 3.0, 1.0, 5.0, 5.0])
    cot = mx.array([10.0, 1.0, 1.0, 100.0, 1000.0])
    assert mx.vjp(mx.cummax, [x], [cot])[1][0].tolist() == [10.0, 2.0, 0.0, 100.0, 1000.0]
    # From the end: element 3 ties element 4 and comes later in scan order, so
    # outputs 0 to 3 are all taken from it.
    back = mx.vjp(lambda a: mx.cummax(a, reverse=True), [x], [cot])[1][0]
    assert back.tolist() == [0.0, 0.0, 0.0, 112.0, 1000.0]


def test_logcumsumexp_vjp_is_stable():
    """Exponents of 1000 would overflow a direct exp; MLX's sign split does not."""
    g = mx.vjp(mx.logcumsumexp, [mx.array([1000.0, -1000.0, 5.0])],
               [mx.array([1.0, -1.0, 2.0])])[1][0]
    assert close(g.tolist(), [2.0, 0.0, 0.0], atol=1e-4)


def _jacobian_times(f, x, t):
    """J t from the vjp's rows: what every jvp must agree with."""
    n = x.size
    rows = [mx.vjp(f, [x], [mx.array([1.0 if k == j else 0.0 for k in range(n)])])[1][0]
            for j in range(n)]
    tl = t.tolist()
    return [sum(r.tolist()[i] * tl[i] for i in range(n)) for r in rows]


@pytest.mark.parametrize("name", SCANS)
def test_jvp_agrees_with_the_vjp(name):
    t = mx.array([0.3, -1.0, 2.0, 0.7, 1.1])
    for values in GRAD_INPUTS:
        for reverse, inclusive in DIRECTIONS:
            f = lambda a: _scan(mx, name, a, reverse=reverse, inclusive=inclusive)  # noqa: E731
            x = mx.array(values)
            got = mx.jvp(f, [x], [t])[1][0].tolist()
            assert close(got, _jacobian_times(f, x, t), rtol=1e-5, atol=1e-5), (name, values)


@needs_mlx
def test_logcumsumexp_jvp_matches_mlx():
    for reverse, inclusive in DIRECTIONS:
        def build(lib):
            f = lambda a: lib.logcumsumexp(a, reverse=reverse, inclusive=inclusive)  # noqa: E731
            return lib.jvp(f, [lib.array(GRAD_INPUTS[0])], [lib.array(COT)])[1][0]

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
def test_complex_cumprod_vjp_conjugates_and_logcumsumexp_refuses():
    """MLX's Scan::vjp forgets the conjugate for complex64 (its Reduce::vjp does
    not); mlxref's is the convention's: cot times conj(d out / d x)."""
    x, c = [1 + 2j, 0.5 - 1j, 2 + 0.5j], [1 + 0j, 1j, 0.5 + 0.5j]
    ours = mx.vjp(mx.cumprod, [mx.array(x)], [mx.array(c)])[1][0].tolist()
    others = [[math.prod(x[k] for k in range(j + 1) if k != i) if i <= j else 0
               for i in range(3)] for j in range(3)]
    want = [sum(c[j] * others[j][i].conjugate() for j in range(3)) for i in range(3)]
    assert close(ours, want)
    theirs = real_mx.vjp(real_mx.cumprod, [real_mx.array(x)], [real_mx.array(c)])[1][0]
    assert not close(theirs.tolist(), want)
    with pytest.raises(ValueError, match="VJP is not supported for complex"):
        mx.vjp(mx.logcumsumexp, [mx.array(x)], [mx.array(c)])
    assert_same_error(lambda lib: lib.jvp(lib.logcumsumexp, [lib.array(x)], [lib.array(c)]))


@needs_mlx
def test_second_order_cumprod_and_cummax():
    for name in ("cumprod", "cummax"):
        def build(lib):
            f = lambda a: (_scan(lib, name, a) * lib.array([1.0, 2.0, 3.0])).sum()  # noqa: E731
            return lib.grad(lambda a: (lib.grad(f)(a) ** 2).sum())(lib.array([2.0, 3.0, 0.5]))

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("name", SCANS)
def test_vmap_matches_mlx(name):
    x = [[1.0, 2.0, 0.0], [3.0, 3.0, -1.0]]
    for in_axes, axis in ((0, 0), (1, 0), (1, None), (0, -1)):
        def build(lib):
            f = lambda a: _scan(lib, name, a, axis=axis, inclusive=False)  # noqa: E731
            return lib.vmap(f, in_axes=in_axes)(lib.array(x))

        ours, theirs = both(build)
        assert_same_as_mlx(ours, theirs)
