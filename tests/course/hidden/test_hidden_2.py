"""Hidden tests of tasks 2.1 to 2.5: the vjp rules, on drawn shapes, dtypes and values,
with the derivatives of functions built on them at fixed points (``programs.derivatives``,
the numbers ``check_grads`` and the SymPy check would test, judged against the reference's).

The rules run on the graded code only through ``run`` and the programs of
tests/course/programs.py (section "tasks 2.x"); the outputs handed to a rule
are computed here, with the reference.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from mlxref.core.primitives import elementwise as E
from mlxref.core.primitives.reduction import Reduce, _exclusive_prod
from mlxref.course.judge import run
from course import programs
from hidden_support import (
    FEW, FLOATS, SETTINGS, WIDE, draw_array, elements, expect, indices, shapes, derivatives_at
)

# (primitive, op, derivative from x, domain (lo, hi))
UNARY = [
    (E.Sin, mx.sin, math.cos, (-3, 3)),
    (E.Exp, mx.exp, math.exp, (-2, 2)),
    (E.ArcTan, mx.arctan, lambda v: 1 / (1 + v * v), (-3, 3)),
    (E.Sqrt, mx.sqrt, lambda v: 0.5 / math.sqrt(v), (0.25, 4)),
    (E.Log, mx.log, lambda v: 1 / v, (0.25, 4)),
    (E.Tanh, mx.tanh, lambda v: 1 - math.tanh(v) ** 2, (-2, 2)),
    (E.Square, mx.square, lambda v: 2 * v, (-3, 3)),
]
PIECEWISE = [(E.Sign, mx.sign), (E.Floor, mx.floor), (E.Round, mx.round)]

# (primitive, op, d/da, d/db, domain of b)
BINARY = [
    (E.Multiply, mx.multiply, lambda a, b: b, lambda a, b: a, (-3, 3)),
    (E.Divide, mx.divide, lambda a, b: 1 / b, lambda a, b: -a / b**2, (0.5, 3)),
    (E.Subtract, mx.subtract, lambda a, b: 1.0, lambda a, b: -1.0, (-3, 3)),
    (E.Power, mx.power, lambda a, b: b * a ** (b - 1), lambda a, b: math.log(a) * a**b, (0.5, 2)),
]

ARGNUMS = st.sampled_from([[0], [1], [0, 1]])

# The tolerance of ``expect`` (hidden_support.py): a right answer computed
# another way matches the reference's to it too.
TOL = 1e-9


def _unary_inputs(data, lo, hi, dtypes=FLOATS):
    shape = data.draw(shapes(0, 3), label="shape")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    x = draw_array(data.draw, shape, dtype, lo, hi)
    cot = draw_array(data.draw, shape, dtype, -2, 2)
    return shape, dtype, x, cot


@pytest.mark.task2_1
class TestHidden2_1:
    @SETTINGS
    @given(data=st.data(), k=st.integers(0, len(UNARY) - 1))
    def test_unary_on_drawn_inputs(self, data, k):
        primitive, op, d, (lo, hi) = UNARY[k]
        shape, dtype, x, cot = _unary_inputs(data, lo, hi)
        got = run(programs.vjp, primitive, (), [x], [cot], [0], [op(x)], tol=TOL)
        assert isinstance(got, list) and len(got) == 1, (
            f"{primitive.__name__}.vjp: expected a list of one cotangent, received {got!r}"
        )
        want = [c * d(v) for v, c in zip(elements(x), elements(cot))]
        expect(got[0], want, f"{primitive.__name__}.vjp of {dtype} x={x.tolist()}, "
               f"cotangent={cot.tolist()}", shape=shape, dtype=dtype)

    @FEW
    @given(data=st.data(), k=st.integers(0, len(PIECEWISE) - 1))
    def test_piecewise_constant(self, data, k):
        primitive, op = PIECEWISE[k]
        shape, dtype, x, cot = _unary_inputs(data, -3, 3)
        (got,) = run(programs.vjp, primitive, (), [x], [cot], [0], [op(x)])
        expect(got, [0.0] * x.size, f"{primitive.__name__}.vjp of {x.tolist()}", shape=shape,
               dtype=dtype)

    @SETTINGS
    @given(data=st.data(), k=st.integers(0, len(BINARY) - 1), argnums=ARGNUMS)
    def test_binary_argnums(self, data, k, argnums):
        primitive, op, da, db, (lo, hi) = BINARY[k]
        shape = data.draw(shapes(0, 3), label="shape")
        dtype = data.draw(st.sampled_from(WIDE), label="dtype")
        a = draw_array(data.draw, shape, dtype, lo, hi)
        b = draw_array(data.draw, shape, dtype, lo, hi)
        cot = draw_array(data.draw, shape, dtype, -2, 2)
        got = run(programs.vjp, primitive, (), [a, b], [cot], argnums, [op(a, b)], tol=1e-6)
        assert isinstance(got, list) and len(got) == len(argnums), (
            f"{primitive.__name__}.vjp with argnums {argnums}: expected {len(argnums)} "
            f"cotangent(s), received {len(got) if isinstance(got, list) else got!r}"
        )
        for i, g in zip(argnums, got):
            d = (da, db)[i]
            want = [c * d(p, q) for p, q, c in zip(elements(a), elements(b), elements(cot))]
            expect(g, want, f"{primitive.__name__}.vjp, the cotangent of input {i} (argnums "
                   f"{argnums}) at a={a.tolist()}, b={b.tolist()}, cotangent={cot.tolist()}",
                   shape=shape, dtype=dtype, tol=1e-6)

    def test_derivatives_at_fixed_points(self):
        run(programs.derivatives, programs.sin_a_times_b_over, [[0.5, -1.0], [2.0, 0.3]], order=1,
            modes="rev", tol=1e-4)
        derivatives_at(mx.arctan, ((2, 3),), "vjp")
        derivatives_at(mx.power, ((2,), (2,)), "vjp", "positive")


@pytest.mark.task2_2
class TestHidden2_2:
    @SETTINGS
    @given(data=st.data(), which=st.sampled_from(["sin", "cos"]))
    def test_drawn_inputs(self, data, which):
        shape, dtype, x, _ = _unary_inputs(data, -6, 6)
        primitive, op, d = ((E.Sin, mx.sin, math.cos) if which == "sin"
                            else (E.Cos, mx.cos, lambda v: -math.sin(v)))
        got = run(programs.derivative, primitive, x, op(x), tol=TOL)
        expect(got, [d(v) for v in elements(x)], f"{primitive.__name__}.derivative at {dtype} "
               f"x={x.tolist()}", shape=shape, dtype=dtype)

    def test_second_derivatives(self):
        # The derivative is a graph of mlxref ops, so it differentiates again.
        x = mx.array([0.3, -1.2, 2.0])
        for primitive, op, d2 in ((E.Sin, mx.sin, lambda v: -math.sin(v)),
                                  (E.Cos, mx.cos, lambda v: -math.cos(v))):
            got = run(programs.grad_of_derivative, primitive, op, x, tol=TOL)
            expect(got, [d2(v) for v in elements(x)],
                   f"grad of {primitive.__name__}.derivative at {x.tolist()}")
            derivatives_at(op, ((3,),), "vjp")
        run(programs.derivatives, programs.sin_times_cos, [[0.4, 1.1]], order=2, modes="rev", tol=1e-4)


@pytest.mark.task2_3
class TestHidden2_3:
    @SETTINGS
    @given(data=st.data(), which=st.sampled_from(["multiply", "divide"]), i=st.sampled_from([0, 1]))
    def test_drawn_inputs(self, data, which, i):
        shape = data.draw(shapes(0, 3), label="shape")
        dtype = data.draw(st.sampled_from(FLOATS), label="dtype")
        a = draw_array(data.draw, shape, dtype, -3, 3)
        b = draw_array(data.draw, shape, dtype, 0.5, 3) * data.draw(st.sampled_from([1, -1]))
        b = b.astype(dtype)
        if which == "multiply":
            primitive, out = E.Multiply, mx.multiply(a, b)
            d = (lambda p, q: q) if i == 0 else (lambda p, q: p)
        else:
            primitive, out = E.Divide, mx.divide(a, b)
            d = (lambda p, q: 1 / q) if i == 0 else (lambda p, q: -p / q**2)
        got = run(programs.partial, primitive, i, a, b, out, tol=TOL)
        expect(got, [d(p, q) for p, q in zip(elements(a), elements(b))],
               f"{primitive.__name__}.partial({i}) at {dtype} a={a.tolist()}, b={b.tolist()}",
               shape=shape, dtype=dtype)

    def test_derivatives_at_fixed_points(self):
        run(programs.derivatives, programs.a_over_b_times_a, [[0.5, -1.5], [2.0, 0.7]], order=2,
            modes="rev", tol=1e-4)
        derivatives_at(mx.multiply, ((2, 2), (2, 2)), "vjp")
        derivatives_at(mx.divide, ((3,), (3,)), "vjp", "positive")


def _sigmoid(v):
    return 1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v))


@pytest.mark.task2_4
class TestHidden2_4:
    # The output handed to the rule is not f(x): only a rule that reads the
    # output, as the stub asks, gives these values.
    RULES = {
        "exp": (E.Exp, lambda o: o),
        "tanh": (E.Tanh, lambda o: 1 - o * o),
        "sigmoid": (E.Sigmoid, lambda o: o * (1 - o)),
    }

    @SETTINGS
    @given(data=st.data(), which=st.sampled_from(sorted(RULES)))
    def test_from_the_output(self, data, which):
        primitive, d = self.RULES[which]
        shape, dtype, x, _ = _unary_inputs(data, -3, 3)
        out = draw_array(data.draw, shape, dtype, 0.05, 0.95)
        got = run(programs.derivative, primitive, x, out, tol=TOL)
        expect(got, [d(o) for o in elements(out)],
               f"{primitive.__name__}.derivative at {dtype} x={x.tolist()} with the output "
               f"out={out.tolist()} (the rule must use out)", shape=shape, dtype=dtype)

    def test_true_outputs(self):
        x = mx.array([-4.0, -0.5, 0.0, 2.5], mx.float64)
        for primitive, op, d in ((E.Exp, mx.exp, math.exp),
                                 (E.Tanh, mx.tanh, lambda v: 1 - math.tanh(v) ** 2),
                                 (E.Sigmoid, mx.sigmoid,
                                  lambda v: _sigmoid(v) * (1 - _sigmoid(v)))):
            expect(run(programs.derivative, primitive, x, op(x), tol=TOL),
                   [d(v) for v in elements(x)],
                   f"{primitive.__name__}.derivative at {x.tolist()}", dtype=mx.float64)
            derivatives_at(op, ((3,),), "vjp")


def _runs(x, axes):
    """{kept index: [(full index, value), ...]} of a reduction over ``axes``."""
    runs = {}
    for index, v in zip(indices(x.shape), elements(x)):
        key = tuple(i for d, i in enumerate(index) if d not in axes)
        runs.setdefault(key, []).append((index, v))
    return runs


def _reduce_vjp(kind, x, axes, cot):
    """The expected cotangent of x, from the inputs."""
    runs = _runs(x, axes)
    cots = dict(zip(sorted(runs), elements(cot)))
    out = {}
    for key, group in runs.items():
        values = [v for _, v in group]
        c = cots[key]
        for k, (index, v) in enumerate(group):
            if kind == "sum":
                out[index] = c
            elif kind == "prod":
                out[index] = c * math.prod(values[:k] + values[k + 1 :])
            elif kind in ("max", "min"):
                best = max(values) if kind == "max" else min(values)
                out[index] = c / values.count(best) if v == best else 0.0
            else:
                out[index] = 0.0
    return [out[index] for index in indices(x.shape)]


def _reduce_case(data, kinds=("sum", "prod", "max", "min", "and", "or")):
    shape = data.draw(shapes(1, 3, max_side=3), label="shape")
    ndim = len(shape)
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), min_size=1), label="axes")))
    keepdims = data.draw(st.booleans(), label="keepdims")
    kind = data.draw(st.sampled_from(kinds), label="kind")
    dtype = data.draw(st.sampled_from(WIDE), label="dtype")
    # Small integers: ties for max and min, zeros for prod.
    x = draw_array(data.draw, shape, dtype, -2, 2, integers=True)
    return shape, axes, keepdims, kind, dtype, x


def _check_reduce_vjp(data, kind, axes, keepdims, x):
    """Reduce's vjp of ``x`` with a drawn cotangent, against ``_reduce_vjp``."""
    shape, dtype = x.shape, x.dtype
    op = {"sum": mx.sum, "prod": mx.prod, "max": mx.max, "min": mx.min, "and": mx.all,
          "or": mx.any}[kind]
    out = op(x, axis=list(axes), keepdims=keepdims)
    cot = (draw_array(data.draw, out.shape, dtype, -3, 3) if kind not in ("and", "or")
           else mx.zeros(out.shape, mx.bool_))
    got = run(programs.vjp, Reduce, (kind, axes, keepdims), [x], [cot], [0], [out], tol=TOL)
    assert isinstance(got, list) and len(got) == 1, (
        f"Reduce({kind!r}).vjp: expected a list of one cotangent, received {got!r}"
    )
    expect(got[0], _reduce_vjp(kind, x, axes, cot),
           f"Reduce({kind!r}, axes={axes}, keepdims={keepdims}).vjp at {dtype} "
           f"x={x.tolist()}, cotangent={cot.tolist()}", shape=shape,
           dtype=dtype if kind not in ("and", "or") else None)


@pytest.mark.task2_5
class TestHidden2_5:
    @SETTINGS
    @given(data=st.data())
    def test_drawn_reductions(self, data):
        _, axes, keepdims, kind, _, x = _reduce_case(data)
        _check_reduce_vjp(data, kind, axes, keepdims, x)

    @FEW
    @given(data=st.data(), kind=st.sampled_from(["max", "min"]))
    def test_ties_of_max_and_min(self, data, kind):
        # Each run holds each of its values twice, so its max and min are tied:
        # the tied positions share the cotangent evenly.
        _, axes, keepdims, _, _, half = _reduce_case(data, (kind,))
        x = mx.concatenate([half, half], axis=axes[0])
        _check_reduce_vjp(data, kind, axes, keepdims, x)

    @SETTINGS
    @given(data=st.data())
    def test_exclusive_products(self, data):
        shape, axes, _, _, dtype, x = _reduce_case(data)
        runs = _runs(x, axes)
        want = {}
        for group in runs.values():
            values = [v for _, v in group]
            for k, (index, _) in enumerate(group):
                want[index] = math.prod(values[:k] + values[k + 1 :])
        expect(run(_exclusive_prod, x, axes, tol=TOL), [want[i] for i in indices(shape)],
               f"_exclusive_prod({x.tolist()}, axes={axes})", shape=shape, dtype=dtype)

    def test_derivatives_at_fixed_points(self):
        run(programs.derivatives, programs.prods_of_rows_plus_maxes, [[[0.5, 2.0, -1.0], [1.5, -0.3, 0.8]]],
            order=1, modes="rev", tol=1e-4)
        derivatives_at(programs.prod_over_0_2, ((2, 2, 2),), "vjp")
        derivatives_at(programs.sum_of_squares_over_1, ((2, 3),), "vjp")
