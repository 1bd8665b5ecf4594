"""The course tasks' tests: one class per task, marked ``task<id>``.

``mlxref assignment grade`` runs these by marker in a student copy (see
mlxref/course/assignment.py and tutorials/ASSIGNMENTS.md). Each class tests exactly
its task's regions, and, where it can, calls them directly instead of through
the transforms, so that a task is graded on its own code: the rule tests call
``Sin().derivative(...)`` rather than ``grad(sin)``, which would also need the
vjp walk (4.1) and the elementwise vjp (2.1). The walks are tested on graphs
of ``+``, ``-`` and negation only, whose rules are not tasks. The one task
that cannot avoid another is 6.2: the checkpoint's recomputation is a vjp
walk.

The tests reach the graded code only through ``run(program, *inputs)``
(mlxref/course/judge.py; the programs longer than one call of mlxref are in
tests/course/programs.py), as the hidden tests do. In grading, the submission's
code answers those calls as data in the sandbox and the tests run in a trusted
process, where ``run`` returns those answers, so that no code of the submission
runs next to the asserts that decide its grade (here, ``run`` calls the program).

A failed check says what was computed, from which input, the expected and the
received value, as MiniTorch's do.
"""

import math

import pytest
import sympy

import mlxref.core as mx
from mlxref.core.primitives.elementwise import (
    Add,
    ArcTan,
    Cos,
    Divide,
    Exp,
    Greater,
    Multiply,
    Power,
    Sigmoid,
    Sign,
    Sin,
    Sqrt,
    Tanh,
)
from mlxref.core.primitives.reduction import Reduce
from mlxref.core.primitives.shape import Reshape
from mlxref.course.judge import run
from course import programs
from support import close  # noqa: E402


def expect(got, expected, what, shape=None, tol=1e-9):
    """``got`` (an mlxref array or a number) has the values ``expected``."""
    if shape is not None:
        assert isinstance(got, mx.array), f"{what}: expected an mlxref array, received {got!r}"
        assert got.shape == tuple(shape), (
            f"{what}: expected shape {tuple(shape)}, received {got.shape}"
        )
    values = got.tolist() if isinstance(got, mx.array) else got
    if isinstance(got, mx.array) and got.dtype.is_inexact:
        tol = max(tol, 8 * mx.finfo(got.dtype).eps)  # a float32 result is rounded to float32
    assert close(values, expected, rtol=tol, atol=tol), (
        f"{what}: expected {expected}, received {values}"
    )


def column(x, k):
    return [row[k] for row in x]


# --- 1.x forward rules ----------------------------------------------------------------
# ``what`` and the expected value are named before the call, so that an exception
# the call raises shows them with the test's other values.


def _sigmoid(v):
    """sigmoid(v) to the last digit, from SymPy's 50-digit arithmetic (no overflow there)."""
    x = sympy.Float(v, 50)
    return float(1 / (1 + sympy.exp(-x)))


@pytest.mark.task1_1
class TestTask1_1:
    xs = [-3.0, -0.5, 0.0, 0.5, 3.0]

    def test_values(self):
        for v in self.xs:
            expect(run(Sigmoid.numeric, v), _sigmoid(v), f"sigmoid({v})")
        what, expected = f"mx.sigmoid({self.xs})", [_sigmoid(v) for v in self.xs]
        expect(run(mx.sigmoid, mx.array(self.xs)), expected, what, shape=(5,))

    def test_no_overflow(self):
        for v, want in [(-1000.0, 0.0), (1000.0, 1.0), (-40.0, _sigmoid(-40.0))]:
            expect(run(Sigmoid.numeric, v), want, f"sigmoid({v})", tol=1e-12)


@pytest.mark.task1_2
class TestTask1_2:
    def test_values(self):
        x = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]
        expected = [math.log(sum(math.exp(v) for v in row)) for row in x]
        what = f"logsumexp({x}, axis=1)"
        expect(run(mx.logsumexp, mx.array(x), axis=1), expected, what, shape=(2,))

    def test_large_values_do_not_overflow(self):
        x = [[1000.0, 1000.0], [-1000.0, -1000.0]]
        what, expected = f"logsumexp({x}, axis=1)", [1000 + math.log(2), -1000 + math.log(2)]
        expect(run(mx.logsumexp, mx.array(x), axis=1), expected, what)

    def test_infinities(self):
        inf = math.inf
        x = [[-inf, -inf], [1.0, inf]]
        what, expected = f"logsumexp({x}, axis=1)", [-inf, inf]
        expect(run(mx.logsumexp, mx.array(x), axis=1), expected, what)


@pytest.mark.task1_3
class TestTask1_3:
    x = [1.0, 2.0, 3.0, 4.0]

    @pytest.mark.parametrize(
        "reverse, inclusive, want",
        [
            (False, True, [1.0, 3.0, 6.0, 10.0]),
            (True, True, [10.0, 9.0, 7.0, 4.0]),
            (False, False, [0.0, 1.0, 3.0, 6.0]),
            (True, False, [9.0, 7.0, 4.0, 0.0]),
        ],
    )
    def test_one_run(self, reverse, inclusive, want):
        what = f"cumsum({self.x}, reverse={reverse}, inclusive={inclusive})"
        got = run(mx.cumsum, mx.array(self.x), reverse=reverse, inclusive=inclusive)
        expect(got, want, what)

    def test_along_an_axis(self):
        x = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
        what, expected = f"cumsum({x}, axis=0)", [[1.0, 2.0], [4.0, 6.0], [9.0, 12.0]]
        expect(run(mx.cumsum, mx.array(x), axis=0), expected, what, shape=(3, 2))


# --- 2.x vjp rules --------------------------------------------------------------------
# The rules are called directly: primitive.vjp(primals, cotangents, argnums, outputs)
# (programs.vjp builds the primitive from its class and parameters).


@pytest.mark.task2_1
class TestTask2_1:
    x = [0.5, -1.0, 2.0]
    cot = [1.0, 2.0, -3.0]

    def test_unary_scales_the_cotangent_by_the_derivative(self):
        x, cot = mx.array(self.x), mx.array(self.cot)
        got = run(programs.vjp, ArcTan, (), [x], [cot], [0], [mx.arctan(x)])
        assert len(got) == 1, f"ArcTan.vjp: expected one cotangent, received {len(got)}"
        expect(got[0], [c / (1 + v * v) for v, c in zip(self.x, self.cot)],
               f"ArcTan.vjp at x={self.x}, cotangent={self.cot}", shape=(3,))

    def test_unary_passes_the_output(self):
        xs = [0.25, 4.0]
        x, cot = mx.array(xs), mx.array([1.0, 2.0])
        (got,) = run(programs.vjp, Sqrt, (), [x], [cot], [0], [mx.sqrt(x)])
        expect(got, [1.0 * 0.5 / 0.5, 2.0 * 0.5 / 2.0], f"Sqrt.vjp at x={xs}")

    def test_piecewise_constant_gives_zeros(self):
        x = mx.array(self.x)
        (got,) = run(programs.vjp, Sign, (), [x], [mx.array(self.cot)], [0], [mx.sign(x)])
        expect(got, [0.0, 0.0, 0.0], f"Sign.vjp at x={self.x}", shape=(3,))

    def test_binary_one_cotangent_per_argnum(self):
        av, bv, cv = [1.5, 2.0], [2.0, 0.5], [1.0, -2.0]
        a, b, cot = mx.array(av), mx.array(bv), mx.array(cv)
        out = mx.power(a, b)
        da = [c * q * p ** (q - 1) for p, q, c in zip(av, bv, cv)]
        db = [c * math.log(p) * p**q for p, q, c in zip(av, bv, cv)]
        got = run(programs.vjp, Power, (), [a, b], [cot], [0, 1], [out])
        assert len(got) == 2, f"Power.vjp, argnums [0, 1]: expected 2 cotangents, got {len(got)}"
        expect(got[0], da, f"Power.vjp d/da at a={av}, b={bv}")
        expect(got[1], db, f"Power.vjp d/db at a={av}, b={bv}")
        got = run(programs.vjp, Power, (), [a, b], [cot], [1], [out])
        assert len(got) == 1, f"Power.vjp, argnums [1]: expected 1 cotangent, got {len(got)}"
        expect(got[0], db, f"Power.vjp with argnums [1] at a={av}, b={bv}")


@pytest.mark.task2_2
class TestTask2_2:
    xs = [[0.0, 0.5], [-1.0, 2.5]]

    def test_sin(self):
        x = mx.array(self.xs)
        got = run(programs.derivative, Sin, x, mx.sin(x))
        expect(got, [[math.cos(v) for v in row] for row in self.xs],
               f"Sin.derivative at x={self.xs}", shape=(2, 2))

    def test_cos(self):
        x = mx.array(self.xs)
        got = run(programs.derivative, Cos, x, mx.cos(x))
        expect(got, [[-math.sin(v) for v in row] for row in self.xs],
               f"Cos.derivative at x={self.xs}", shape=(2, 2))


@pytest.mark.task2_3
class TestTask2_3:
    av, bv = [1.5, -2.0, 3.0], [0.5, 4.0, -1.5]

    def test_multiply(self):
        a, b = mx.array(self.av), mx.array(self.bv)
        out = mx.multiply(a, b)
        expect(run(programs.partial, Multiply, 0, a, b, out), self.bv, f"d(a*b)/da at a={self.av}, b={self.bv}",
               shape=(3,))
        expect(run(programs.partial, Multiply, 1, a, b, out), self.av, f"d(a*b)/db at a={self.av}, b={self.bv}",
               shape=(3,))

    def test_divide(self):
        a, b = mx.array(self.av), mx.array(self.bv)
        out = mx.divide(a, b)
        expect(run(programs.partial, Divide, 0, a, b, out), [1 / q for q in self.bv],
               f"d(a/b)/da at a={self.av}, b={self.bv}", shape=(3,))
        expect(run(programs.partial, Divide, 1, a, b, out), [-p / q**2 for p, q in zip(self.av, self.bv)],
               f"d(a/b)/db at a={self.av}, b={self.bv}", shape=(3,))


@pytest.mark.task2_4
class TestTask2_4:
    # The outputs are computed here with math, so these tests need no forward rule.
    xs = [-2.0, -0.5, 0.0, 1.0, 3.0]

    def _check(self, primitive, f, df):
        x, out = mx.array(self.xs), mx.array([f(v) for v in self.xs])
        got = run(programs.derivative, primitive, x, out)
        expect(got, [df(v) for v in self.xs], f"{primitive.__name__}.derivative at x={self.xs}",
               shape=(5,))

    def test_exp(self):
        self._check(Exp, math.exp, math.exp)

    def test_tanh(self):
        self._check(Tanh, math.tanh, lambda v: 1 - math.tanh(v) ** 2)

    def test_sigmoid(self):
        self._check(Sigmoid, _sigmoid, lambda v: _sigmoid(v) * (1 - _sigmoid(v)))


@pytest.mark.task2_5
class TestTask2_5:
    def test_sum(self):
        xv = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        x = mx.array(xv)
        (got,) = run(programs.vjp, Reduce, ("sum", (1,)), [x], [mx.array([10.0, 20.0])], [0],
                     [mx.sum(x, axis=1)])
        expect(got, [[10.0] * 3, [20.0] * 3], "Sum(axes=(1,)).vjp, cotangent [10, 20]",
               shape=(2, 3))
        out = mx.sum(x, axis=0, keepdims=True)
        cot = mx.array([[1.0, 2.0, 3.0]])
        (got,) = run(programs.vjp, Reduce, ("sum", (0,), True), [x], [cot], [0], [out])
        expect(got, [[1.0, 2.0, 3.0]] * 2, "Sum(axes=(0,), keepdims=True).vjp", shape=(2, 3))

    def test_prod_with_a_zero(self):
        xv = [[2.0, 3.0, 4.0], [0.0, 5.0, 6.0]]
        x = mx.array(xv)
        (got,) = run(programs.vjp, Reduce, ("prod", (1,)), [x], [mx.array([1.0, 2.0])], [0],
                     [mx.prod(x, axis=1)])
        expect(got, [[12.0, 8.0, 6.0], [60.0, 0.0, 0.0]], f"Prod(axes=(1,)).vjp at x={xv}",
               shape=(2, 3))

    def test_max_and_min_split_ties(self):
        xv = [[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]]
        x = mx.array(xv)
        (got,) = run(programs.vjp, Reduce, ("max", (1,)), [x], [mx.array([1.0, 4.0])], [0],
                     [mx.max(x, axis=1)])
        expect(got, [[0.0, 0.5, 0.5], [4.0, 0.0, 0.0]], f"Max(axes=(1,)).vjp at x={xv}",
               shape=(2, 3))
        (got,) = run(programs.vjp, Reduce, ("min", (1,)), [x], [mx.array([1.0, 4.0])], [0],
                     [mx.min(x, axis=1)])
        expect(got, [[1.0, 0.0, 0.0], [0.0, 2.0, 2.0]], f"Min(axes=(1,)).vjp at x={xv}",
               shape=(2, 3))

    def test_all_and_any_give_zeros(self):
        x = mx.array([[1.0, 0.0], [2.0, 3.0]])
        for kind, op in (("and", mx.all), ("or", mx.any)):
            (got,) = run(programs.vjp, Reduce, (kind, (1,)), [x], [mx.array([True, False])], [0],
                         [op(x, axis=1)])
            expect(got, [[0.0, 0.0], [0.0, 0.0]], f"Reduce({kind!r}).vjp", shape=(2, 2))


# --- 3.x jvp rules --------------------------------------------------------------------
# primitive.jvp(primals, tangents, argnums): the tangents of the inputs in argnums
# (programs.primitive_jvp builds the primitive from its class and parameters).


@pytest.mark.task3_1
class TestTask3_1:
    def test_unary(self):
        xs, ts = [0.5, -1.0, 2.0], [1.0, 2.0, -3.0]
        got = run(programs.primitive_jvp, ArcTan, [mx.array(xs)], [mx.array(ts)], [0])
        assert len(got) == 1, f"ArcTan.jvp: expected one tangent, received {len(got)}"
        expect(got[0], [t / (1 + v * v) for v, t in zip(xs, ts)], f"ArcTan.jvp at x={xs}, t={ts}",
               shape=(3,))

    def test_unary_from_the_output(self):
        xs = [0.25, 4.0]
        (got,) = run(programs.primitive_jvp, Sqrt, [mx.array(xs)], [mx.array([1.0, 2.0])], [0])
        expect(got, [1.0, 0.5], f"Sqrt.jvp at x={xs}, t=[1, 2]")

    def test_piecewise_constant_gives_zeros(self):
        (got,) = run(programs.primitive_jvp, Sign, [mx.array([1.0, -2.0])],
                     [mx.array([5.0, 6.0])], [0])
        expect(got, [0.0, 0.0], "Sign.jvp", shape=(2,))

    def test_binary_sums_over_the_inputs(self):
        av, bv, ta, tb = [1.5, 2.0], [2.0, 0.5], [1.0, -1.0], [0.5, 3.0]
        a, b = mx.array(av), mx.array(bv)
        da = [t * q * p ** (q - 1) for p, q, t in zip(av, bv, ta)]
        db = [t * math.log(p) * p**q for p, q, t in zip(av, bv, tb)]
        (got,) = run(programs.primitive_jvp, Power, [a, b], [mx.array(ta), mx.array(tb)], [0, 1])
        expect(got, [x + y for x, y in zip(da, db)],
               f"Power.jvp at a={av}, b={bv}, ta={ta}, tb={tb}")
        (got,) = run(programs.primitive_jvp, Power, [a, b], [mx.array(tb)], [1])
        expect(got, db, f"Power.jvp with only b's tangent {tb}")


@pytest.mark.task3_2
class TestTask3_2:
    xv = [[2.0, 3.0, 3.0], [5.0, 1.0, 4.0]]
    tv = [[1.0, 10.0, 100.0], [2.0, 20.0, 200.0]]

    def _jvp(self, kind, keepdims=False):
        (got,) = run(programs.primitive_jvp, Reduce, [mx.array(self.xv)], [mx.array(self.tv)],
                     [0], params=(kind, (1,), keepdims))
        return got

    def test_sum(self):
        expect(self._jvp("sum"), [111.0, 222.0], "Sum(axes=(1,)).jvp", shape=(2,))
        expect(self._jvp("sum", True), [[111.0], [222.0]], "Sum(axes=(1,), keepdims=True).jvp",
               shape=(2, 1))

    def test_prod(self):
        # d(x0 x1 x2) = t0 x1 x2 + x0 t1 x2 + x0 x1 t2
        want = [1 * 9 + 2 * 10 * 3 + 2 * 3 * 100, 2 * 4 + 5 * 20 * 4 + 5 * 1 * 200]
        expect(self._jvp("prod"), want, f"Prod(axes=(1,)).jvp at x={self.xv}, t={self.tv}")

    def test_max_and_min_read_the_first_arg_extremum(self):
        expect(self._jvp("max"), [10.0, 2.0], f"Max(axes=(1,)).jvp at x={self.xv}", shape=(2,))
        expect(self._jvp("min"), [1.0, 20.0], f"Min(axes=(1,)).jvp at x={self.xv}", shape=(2,))

    def test_all_and_any_give_zeros(self):
        expect(self._jvp("and"), [0.0, 0.0], "Reduce('and').jvp", shape=(2,))
        expect(self._jvp("or"), [0.0, 0.0], "Reduce('or').jvp", shape=(2,))


# --- 4.x the walks and unbroadcasting -------------------------------------------------
# The graphs use only +, - and negation: their rules are not tasks. The
# functions to differentiate are programs (tests/course/programs.py).


@pytest.mark.task4_1
class TestTask4_1:
    def test_cotangents_add_up_over_every_use(self):
        a, b, c = mx.array([1.0, 2.0]), mx.array([3.0, 4.0]), mx.array([5.0, 6.0])
        outputs, vjps = run(mx.vjp, programs.a_thrice_b_twice, [a, b, c],
                            [mx.array([1.0, 10.0])])
        expect(outputs[0], [1 + 3 - (1 - 3) + 1, 2 + 4 - (2 - 4) + 2], "the output")
        assert len(vjps) == 3, f"expected one vjp per primal, received {len(vjps)}"
        expect(vjps[0], [1.0, 10.0], "d/da of (a + b) - (a - b) + a, cotangent [1, 10]")
        expect(vjps[1], [2.0, 20.0], "d/db of (a + b) - (a - b) + a, cotangent [1, 10]")
        expect(vjps[2], [0.0, 0.0], "d/dc of (a + b) - (a - b) + a (c is not used)")

    def test_two_outputs(self):
        a, b = mx.array(1.0), mx.array(2.0)
        _, vjps = run(mx.vjp, programs.sum_and_negated_difference, [a, b],
                      [mx.array(3.0), mx.array(5.0)])
        expect(vjps, [3.0 - 5.0, 3.0 + 5.0], "vjp of [a + b, -(a - b)] with cotangents [3, 5]")

    def test_argnums(self):
        got = run(programs.grad_at, programs.sum_plus_b_minus_a_plus_b,
                  [mx.array(1.0), mx.array(2.0)], 1)
        expect(got, 3.0, "grad of (a + b) + (b - a) + b wrt b")

    def test_a_long_chain(self):
        expect(run(programs.negations_grad, mx.array(0.5), 300), 1.0,
               "grad of x negated 300 times")


@pytest.mark.task4_2
class TestTask4_2:
    def test_tangents_flow_forwards(self):
        a, b, c = mx.array([1.0, 2.0]), mx.array([3.0, 4.0]), mx.array([5.0, 6.0])
        ts = [mx.array([1.0, 10.0]), mx.array([100.0, 1000.0]), mx.array([7.0, 7.0])]
        outputs, jvps = run(mx.jvp, programs.a_thrice_b_twice, [a, b, c], ts)
        assert len(jvps) == 1, f"expected one jvp per output, received {len(jvps)}"
        expect(jvps[0], [1 + 2 * 100, 10 + 2 * 1000],
               "jvp of (a + b) - (a - b) + a with ta=[1, 10], tb=[100, 1000]")

    def test_two_outputs(self):
        a, b = mx.array(1.0), mx.array(2.0)
        _, jvps = run(mx.jvp, programs.sum_and_negated_difference, [a, b],
                      [mx.array(3.0), mx.array(5.0)])
        expect(jvps, [8.0, 2.0], "jvp of [a + b, -(a - b)] with tangents [3, 5]")

    def test_a_long_chain(self):
        _, (t,) = run(programs.negations_jvp, mx.array(0.5), mx.array(2.0), 301)
        expect(t, -2.0, "jvp of x negated 301 times, tangent 2")


@pytest.mark.task4_3
class TestTask4_3:
    def _vjp(self, x, shape, cot):
        return run(programs.broadcast_vjp, shape, mx.array(x), mx.array(cot))[0]

    def test_new_and_stretched_axes(self):
        # x of shape (3, 1) broadcast to (2, 3, 4): a new axis in front, the last stretched.
        cot = [[[100 * i + 10 * j + k for k in range(4)] for j in range(3)] for i in range(2)]
        want = [[sum(cot[i][j][k] for i in range(2) for k in range(4))] for j in range(3)]
        got = self._vjp([[1.0], [2.0], [3.0]], (2, 3, 4), cot)
        expect(got, want, "Broadcast((2, 3, 4)).vjp for x of shape (3, 1)", shape=(3, 1))

    def test_a_scalar(self):
        got = self._vjp(7.0, (2, 3), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        expect(got, 21.0, "Broadcast((2, 3)).vjp for a scalar x", shape=())

    def test_a_middle_axis(self):
        cot = [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]]
        got = self._vjp([[[1.0, 2.0]], [[3.0, 4.0]]], (2, 3, 2), cot)
        expect(got, [[[9.0, 12.0]], [[3.0, 3.0]]],
               "Broadcast((2, 3, 2)).vjp for x of shape (2, 1, 2)", shape=(2, 1, 2))


# --- 5.x vmap rules -------------------------------------------------------------------
# primitive.vmap(inputs, axes) -> (outputs, out_axes); axes[i] is None when
# input i is not batched (programs.vmap_rule builds the primitive from its class and
# parameters).


@pytest.mark.task5_1
class TestTask5_1:
    av = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]  # batched on axis 1: 2 examples of shape (3,)
    bv = [10.0, 20.0, 30.0]

    def test_an_unbatched_input_is_broadcast(self):
        outs, axes = run(programs.vmap_rule, Add, (), [mx.array(self.av), mx.array(self.bv)],
                         [1, None])
        assert len(outs) == 1 and list(axes) == [0], f"expected ([output], [0]), got axes {axes}"
        want = [[self.av[i][k] + self.bv[i] for i in range(3)] for k in range(2)]
        expect(outs[0], want, "Add.vmap with axes (1, None)", shape=(2, 3))

    def test_two_batch_axes(self):
        cv = [[1.0, 1.5, 2.0], [2.5, 3.0, 3.5]]  # batched on axis 0
        outs, axes = run(programs.vmap_rule, Multiply, (), [mx.array(self.av), mx.array(cv)],
                         [1, 0])
        want = [[self.av[i][k] * cv[k][i] for i in range(3)] for k in range(2)]
        expect(outs[0], want, "Multiply.vmap with axes (1, 0)", shape=(2, 3))
        assert list(axes) == [0]

    def test_a_bool_result(self):
        outs, _ = run(programs.vmap_rule, Greater, (),
                      [mx.array(self.av), mx.array([2.5, 2.5, 2.5])], [1, None])
        assert outs[0].dtype == mx.bool_, f"Greater.vmap: expected bool, received {outs[0].dtype}"
        expect(outs[0], [[False, True, True], [False, True, True]], "Greater.vmap", shape=(2, 3))

    def test_through_vmap(self):
        got = run(programs.vmapped, mx.multiply, (1, None), [mx.array(self.av), mx.array(self.bv)])
        expect(got, [[10.0, 60.0, 150.0], [20.0, 80.0, 180.0]], "vmap(a * b, in_axes=(1, None))")


@pytest.mark.task5_2
class TestTask5_2:
    xv = [[1.0, 2.0], [3.0, 4.0], [5.0, 0.0]]  # batched on axis 1: 2 examples of shape (3,)

    def test_reduce_each_example(self):
        outs, axes = run(programs.vmap_rule, Reduce, ("sum", (0,)), [mx.array(self.xv)], [1])
        assert len(outs) == 1 and list(axes) == [0], f"Sum.vmap: expected out axes [0], got {axes}"
        expect(outs[0], [9.0, 6.0], "Sum(axes=(0,)).vmap, batch axis 1", shape=(2,))

    def test_keepdims_keeps_the_batch_axis_in_place(self):
        outs, axes = run(programs.vmap_rule, Reduce, ("max", (0,), True), [mx.array(self.xv)], [1])
        assert list(axes) == [1], f"Max(keepdims).vmap: expected out axes [1], received {axes}"
        expect(outs[0], [[5.0, 4.0]], "Max(axes=(0,), keepdims=True).vmap", shape=(1, 2))

    def test_axes_after_the_batch_axis_shift(self):
        x = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[0.0, 1.0, 0.0], [2.0, 2.0, 2.0]]]  # batch axis 0
        outs, axes = run(programs.vmap_rule, Reduce, ("sum", (1,)), [mx.array(x)], [0])
        assert list(axes) == [0]
        expect(outs[0], [[6.0, 15.0], [1.0, 6.0]], "Sum(axes=(1,)).vmap, batch axis 0",
               shape=(2, 2))

    def test_an_unbatched_input(self):
        outs, axes = run(programs.vmap_rule, Reduce, ("sum", (0,)), [mx.array([1.0, 2.0])], [None])
        assert list(axes) == [None], f"expected out axes [None], received {axes}"
        expect(outs[0], 3.0, "Sum.vmap of an unbatched input", shape=())

    def test_through_vmap(self):
        got = run(programs.vmap_reduction, mx.sum, 0, 1, mx.array(self.xv))
        expect(got, [9.0, 6.0], "vmap(sum(x, axis=0), in_axes=1)")


@pytest.mark.task5_3
class TestTask5_3:
    def test_batch_axis_moves_to_the_front(self):
        xv = [[float(10 * i + k) for k in range(2)] for i in range(6)]  # (6, 2): batch axis 1
        outs, axes = run(programs.vmap_rule, Reshape, ((2, 3),), [mx.array(xv)], [1])
        want = [[[xv[3 * r + c][k] for c in range(3)] for r in range(2)] for k in range(2)]
        expect(outs[0], want, "Reshape((2, 3)).vmap, batch axis 1", shape=(2, 2, 3))
        assert list(axes) == [0], f"expected out axes [0], received {axes}"

    def test_an_unbatched_input(self):
        outs, axes = run(programs.vmap_rule, Reshape, ((3, 2),),
                         [mx.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])], [None])
        assert list(axes) == [None], f"expected out axes [None], received {axes}"
        expect(outs[0], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "Reshape((3, 2)).vmap", shape=(3, 2))


# --- 6.x custom_function and checkpoint -------------------------------------------------
# programs.custom_product_vjp and _jvp: f(x, y) = x * y with deliberately wrong rules
# (vjp: 10 and 20 times the cotangent; jvp: 3 tx + 7 ty), so only the rules can give
# these numbers. The node's inputs are x, y, then the hidden output.


@pytest.mark.task6_1
class TestTask6_1:
    x, y = [1.0, 2.0], [3.0, 4.0]

    def test_vjp_calls_the_rule(self):
        x, y, cot = mx.array(self.x), mx.array(self.y), mx.array([1.0, -1.0])
        got = run(programs.custom_product_vjp, x, y, cot, [0, 1, 2])
        assert len(got) == 3, f"expected one cotangent per argnum, received {len(got)}"
        expect(got[0], [10.0, -10.0], "the custom vjp's cotangent for x")
        expect(got[1], [20.0, -20.0], "the custom vjp's cotangent for y")
        # The hidden output (an input of the node) gets its own cotangent, as in MLX.
        expect(got[2], [1.0, -1.0], "the cotangent for the hidden output (an input of the node)")
        got = run(programs.custom_product_vjp, x, y, cot, [1])
        assert len(got) == 1
        expect(got[0], [20.0, -20.0], "the custom vjp with argnums [1]")

    def test_jvp_calls_the_rule_with_none_for_missing_tangents(self):
        x, y = mx.array(self.x), mx.array(self.y)
        got, seen = run(programs.custom_product_jvp, x, y, [mx.array([1.0, 2.0])], [0])
        expect(got[0], [3.0, 6.0], "the custom jvp with only x's tangent")
        assert seen[-1] == (True, False), f"the rule received tangents present as {seen[-1]}"
        got, seen = run(programs.custom_product_jvp, x, y,
                        [mx.array([1.0, 1.0]), mx.array([5.0, 5.0])], [1, 2])
        expect(got[0], [7.0, 7.0], "the custom jvp with y's tangent (and the hidden output's)")
        assert seen[-1] == (False, True), f"the rule received tangents present as {seen[-1]}"


# (x + y) - x - x as programs.linear_graph reads it: (number of inputs, steps, outputs);
# value 2 is x + y, 3 is value 2 - x, 4 is value 3 - x.
_X_PLUS_Y_MINUS_X_TWICE = (2, [("add", 0, 1), ("subtract", 2, 0), ("subtract", 3, 0)], [4])


@pytest.mark.task6_2
class TestTask6_2:
    def test_vjp_runs_the_function_again(self):
        x, y = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
        # The vjps, and how many times the function ran: once forwards, once backwards.
        vjps, calls, _ = run(programs.checkpoint_node_vjp, _X_PLUS_Y_MINUS_X_TWICE, [x, y],
                             [mx.array([1.0, 5.0])])
        assert calls == 2, f"the backward pass ran the function {calls - 1} times, not once"
        expect(vjps[0], [-1.0, -5.0], "checkpoint's vjp for x of (x + y) - x - x")
        expect(vjps[1], [1.0, 5.0], "checkpoint's vjp for y of (x + y) - x - x")
