"""Hidden tests of tasks 1.1 to 1.3: the forward rules, on drawn inputs."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from mlxref.core.primitives.elementwise import Sigmoid
from course import programs
from mlxref.core.primitives.reduction import _logsumexp
from mlxref.course.judge import run
from hidden_support import (
    FEW, SETTINGS, call, draw_array, elements, expect, expect_float, flat, shapes
)

wide = st.floats(-1e6, 1e6, allow_nan=False)


def _sigmoid(v):
    # Exact to the last digits: 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below.
    return 1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v))


@pytest.mark.task1_1
class TestHidden1_1:
    @SETTINGS
    @given(v=st.one_of(wide, st.floats(-800, 800), st.sampled_from([-745.0, 745.0, -1e308])))
    def test_any_float(self, v):
        what, want = f"sigmoid({v!r})", _sigmoid(v)
        got = call(Sigmoid.numeric, v, what=what, expected=want)
        expect_float(got, want, what)
        assert 0.0 <= got <= 1.0, f"sigmoid({v!r}): expected a value in [0, 1], received {got!r}"

    @FEW
    @given(data=st.data(), shape=shapes(1, 2, max_side=4))
    def test_an_array(self, data, shape):
        x = draw_array(data.draw, shape, mx.float64, -60.0, 60.0)
        expect(run(mx.sigmoid, x), [_sigmoid(v) for v in elements(x)], f"mx.sigmoid of float64 {x}",
               shape=shape, dtype=mx.float64, tol=1e-13)


def _stable_logsumexp(values):
    m = max(values)
    if math.isinf(m) or math.isnan(m):
        return m
    return m + math.log(math.fsum(math.exp(v - m) for v in values))


@pytest.mark.task1_2
class TestHidden1_2:
    @SETTINGS
    @given(values=st.lists(wide, min_size=1, max_size=8))
    def test_any_finite_run(self, values):
        what, want = f"_logsumexp({values})", _stable_logsumexp(values)
        expect_float(call(_logsumexp, values, what=what, expected=want), want, what)

    @FEW
    @given(values=st.lists(st.sampled_from([-math.inf, math.inf, math.nan, 0.0, -3.5, 700.0]),
                           min_size=1, max_size=5))
    def test_infinities_and_nan(self, values):
        want = math.nan if any(v != v for v in values) else _stable_logsumexp(values)
        if math.inf in values and want == want:
            want = math.inf
        what = f"_logsumexp({values})"
        expect_float(call(_logsumexp, values, what=what, expected=want), want, what)

    @FEW
    @given(data=st.data(), shape=shapes(1, 3, max_side=3))
    def test_over_drawn_axes(self, data, shape):
        x = draw_array(data.draw, shape, mx.float64, -800.0, 800.0)
        axis = data.draw(st.integers(0, len(shape) - 1))
        rows = mx.moveaxis(x, axis, -1).tolist()

        def reduce(r):
            return _stable_logsumexp(r) if not isinstance(r[0], list) else [reduce(q) for q in r]

        want = reduce(rows)
        want = want if isinstance(want, list) else [want]
        expect(run(mx.logsumexp, x, axis=axis), flat(want), f"logsumexp({x}, axis={axis})",
               shape=tuple(n for d, n in enumerate(shape) if d != axis), dtype=mx.float64)


def _scan(row, zero, add, reverse, inclusive):
    row = row[::-1] if reverse else list(row)
    out, total = [], None
    for v in row:
        if inclusive:
            total = v if total is None else add(total, v)
            out.append(total)
        else:
            out.append(zero if total is None else total)
            total = add(zero if total is None else total, v)
    return out[::-1] if reverse else out


@pytest.mark.task1_3
class TestHidden1_3:
    @SETTINGS
    @given(row=st.lists(st.sampled_from("abcdefg"), min_size=0, max_size=6),
           reverse=st.booleans(), inclusive=st.booleans())
    def test_the_order_of_the_combinations(self, row, reverse, inclusive):
        # add(total, v) as a string shows which elements were combined, and in what order.
        def add(total, v):
            return f"({total}+{v})"

        got = run(programs.scan_order, row, reverse, inclusive)
        want = _scan(row, "0", add, reverse, inclusive)
        assert got == want, (
            f"Scan(reverse={reverse}, inclusive={inclusive})._scan({row}, zero='0', add): "
            f"expected {want}, received {got}"
        )

    @SETTINGS
    @given(data=st.data(), shape=shapes(1, 3, max_side=4), reverse=st.booleans(),
           inclusive=st.booleans(), dtype=st.sampled_from([mx.int32, mx.float32, mx.float64]))
    def test_cumsum_along_drawn_axes(self, data, shape, reverse, inclusive, dtype):
        x = draw_array(data.draw, shape, dtype, -9, 9, integers=True)
        axis = data.draw(st.integers(0, len(shape) - 1))
        runs = mx.moveaxis(x, axis, -1)
        flat_runs = [elements(runs)[k : k + shape[axis]]
                     for k in range(0, x.size, shape[axis])]
        scanned = [_scan(r, 0, lambda a, b: a + b, reverse, inclusive) for r in flat_runs]
        want = mx.moveaxis(mx.array([v for r in scanned for v in r], dtype).reshape(runs.shape),
                           -1, axis)
        got = run(mx.cumsum, x, axis=axis, reverse=reverse, inclusive=inclusive)
        expect(got, elements(want),
               f"cumsum of {dtype} {x.tolist()}, axis={axis}, reverse={reverse}, "
               f"inclusive={inclusive}", shape=shape, dtype=dtype)
