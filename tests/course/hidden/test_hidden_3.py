"""Hidden tests of tasks 3.1 and 3.2: the jvp rules, on drawn shapes, dtypes and values,
with the derivatives of functions built on them at fixed points in forward mode
(``programs.derivatives``, judged against the reference's)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from mlxref.core.primitives.reduction import Reduce
from mlxref.course.judge import run
from course import programs
from hidden_support import (
    FLOATS, SETTINGS, WIDE, draw_array, elements, expect, indices, shapes, derivatives_at
)
from test_hidden_2 import BINARY, PIECEWISE, UNARY, _reduce_case, _runs


@pytest.mark.task3_1
class TestHidden3_1:
    @SETTINGS
    @given(data=st.data(), k=st.integers(0, len(UNARY) - 1))
    def test_unary_on_drawn_inputs(self, data, k):
        primitive, op, d, (lo, hi) = UNARY[k]
        shape = data.draw(shapes(0, 3), label="shape")
        dtype = data.draw(st.sampled_from(FLOATS), label="dtype")
        x = draw_array(data.draw, shape, dtype, lo, hi)
        t = draw_array(data.draw, shape, dtype, -2, 2)
        got = run(programs.primitive_jvp, primitive, [x], [t], [0])
        assert isinstance(got, list) and len(got) == 1, (
            f"{primitive.__name__}.jvp: expected a list of one tangent, received {got!r}"
        )
        expect(got[0], [d(v) * s for v, s in zip(elements(x), elements(t))],
               f"{primitive.__name__}.jvp at {dtype} x={x.tolist()}, tangent={t.tolist()}",
               shape=shape, dtype=dtype)

    def test_piecewise_constant(self):
        x, t = mx.array([[0.5, -1.5], [2.5, 3.0]]), mx.array([[1.0, 2.0], [3.0, 4.0]])
        for primitive, op in PIECEWISE:
            (got,) = run(programs.primitive_jvp, primitive, [x], [t], [0])
            expect(got, [0.0] * 4, f"{primitive.__name__}.jvp", shape=(2, 2), dtype=mx.float32)

    @SETTINGS
    @given(data=st.data(), k=st.integers(0, len(BINARY) - 1),
           argnums=st.sampled_from([[0], [1], [0, 1]]))
    def test_binary_sums_the_tangents_given(self, data, k, argnums):
        primitive, op, da, db, (lo, hi) = BINARY[k]
        shape = data.draw(shapes(0, 3), label="shape")
        dtype = data.draw(st.sampled_from(WIDE), label="dtype")
        a = draw_array(data.draw, shape, dtype, lo, hi)
        b = draw_array(data.draw, shape, dtype, lo, hi)
        tangents = [draw_array(data.draw, shape, dtype, -2, 2) for _ in argnums]
        got = run(programs.primitive_jvp, primitive, [a, b], tangents, argnums, tol=1e-6)
        assert isinstance(got, list) and len(got) == 1, (
            f"{primitive.__name__}.jvp: expected a list of one tangent, received {got!r}"
        )
        want = [0.0] * a.size
        for i, t in zip(argnums, tangents):
            d = (da, db)[i]
            want = [w + s * d(p, q) for w, s, p, q in
                    zip(want, elements(t), elements(a), elements(b))]
        expect(got[0], want, f"{primitive.__name__}.jvp with tangents for argnums {argnums} at "
               f"a={a.tolist()}, b={b.tolist()}, tangents={[t.tolist() for t in tangents]}",
               shape=shape, dtype=dtype, tol=1e-6)

    def test_second_order(self):
        # The output the rule uses is a node of the graph: second order works.
        run(programs.derivatives, programs.exp_tanh_ratio, [[0.3, -0.8], [1.2, 0.4]], order=2,
            modes="fwd", tol=1e-4)
        derivatives_at(mx.tanh, ((2, 2),), "jvp")
        derivatives_at(mx.divide, ((3,), (3,)), "jvp", domain="positive")


def _reduce_jvp(kind, x, axes, t):
    runs = _runs(x, axes)
    tangents = dict(zip(indices(x.shape), elements(t)))
    out = []
    for key in sorted(runs):
        entries = runs[key]
        values = [v for _, v in entries]
        if kind == "sum":
            out.append(sum(tangents[i] for i, _ in entries))
        elif kind == "prod":
            out.append(sum(tangents[i] * math.prod(values[:k] + values[k + 1 :])
                           for k, (i, _) in enumerate(entries)))
        elif kind in ("max", "min"):
            best = values.index(max(values) if kind == "max" else min(values))  # the first
            out.append(tangents[entries[best][0]])
        else:
            out.append(0.0)
    return out


@pytest.mark.task3_2
class TestHidden3_2:
    @SETTINGS
    @given(data=st.data())
    def test_drawn_reductions(self, data):
        shape, axes, keepdims, kind, dtype, x = _reduce_case(data)
        t = draw_array(data.draw, shape, dtype, -3, 3)
        got = run(programs.primitive_jvp, Reduce, [x], [t], [0], params=(kind, axes, keepdims))
        assert isinstance(got, list) and len(got) == 1, (
            f"Reduce({kind!r}).jvp: expected a list of one tangent, received {got!r}"
        )
        out_shape = tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims or
                          d not in axes)
        expect(got[0], _reduce_jvp(kind, x, axes, t),
               f"Reduce({kind!r}, axes={axes}, keepdims={keepdims}).jvp at {dtype} "
               f"x={x.tolist()}, tangent={t.tolist()}", shape=out_shape, dtype=dtype)

    def test_derivatives_at_fixed_points(self):
        run(programs.derivatives, programs.prod_times_min, [[[0.5, 2.0], [1.5, -0.3]]], order=1,
            modes="fwd", tol=1e-4)  # first, as in TestHidden3_1
        derivatives_at(programs.prod_over_axis_1, ((2, 3),), "jvp")
        derivatives_at(programs.sum_over_axes_0_2_kept, ((2, 1, 2),), "jvp")
