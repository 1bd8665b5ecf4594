"""Hidden tests of tasks 6.1 and 6.2: custom rules and checkpoints, on drawn
numbers of inputs, argnums and graphs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from course import programs
from mlxref.course.judge import run
from hidden_support import SETTINGS, draw_array, elements, expect, shapes
from test_hidden_4 import describe, expected_vjps
from test_hidden_4 import programs as graphs

# programs._custom(n, shape) is a custom function of n inputs (their sum) whose rules give
# recognisable values: the vjp for input i is (i + 2) times the cotangent, the jvp 10 + the
# sum of (i + 1) times each given tangent.


@pytest.mark.task6_1
class TestHidden6_1:
    @SETTINGS
    @given(data=st.data(), n=st.integers(1, 3), shape=shapes(0, 2))
    def test_vjp_with_drawn_argnums(self, data, n, shape):
        xs = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True) for _ in range(n)]
        # The node's inputs are the xs, then the hidden output (argnum n).
        argnums = sorted(data.draw(st.sets(st.integers(0, n), min_size=1), label="argnums"))
        cot = draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
        got, calls = run(programs.custom_node_vjp, xs, argnums, cot)
        what = f"CustomTransforms.vjp of a function of {n} input(s), argnums {argnums}"
        assert len(got) == len(argnums), (
            f"{what}: expected {len(argnums)} cotangents, received {len(got)}"
        )
        assert calls == [("vjp", n, 1, 1)], (
            f"{what}: expected the rule called once with the {n} inputs, 1 cotangent and 1 "
            f"output; the calls were {calls}"
        )
        for i, g in zip(argnums, got):
            factor = i + 2 if i < n else 1  # the hidden output gets its own cotangent
            expect(g, [factor * c for c in elements(cot)], f"{what}: the cotangent of input {i}"
                   + (" (the hidden output)" if i == n else ""), shape=shape)

    @SETTINGS
    @given(data=st.data(), n=st.integers(1, 3), shape=shapes(0, 2))
    def test_jvp_with_drawn_argnums(self, data, n, shape):
        xs = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True) for _ in range(n)]
        argnums = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1), label="argnums"))
        tangents = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
                    for _ in argnums]
        got, calls = run(programs.custom_node_jvp, xs, argnums, tangents)
        what = f"CustomTransforms.jvp of a function of {n} input(s), argnums {argnums}"
        assert len(got) == 1, f"{what}: expected one tangent, received {len(got)}"
        assert calls == [("jvp", n, argnums)], (
            f"{what}: expected the rule called once with the {n} inputs and argnums "
            f"{argnums}; the calls were {calls}"
        )
        want = [10.0 + sum((i + 1) * v for i, v in zip(argnums, vs))
                for vs in zip(*(elements(t) for t in tangents))] or [10.0]
        expect(got[0], want, f"{what}, tangents {[t.tolist() for t in tangents]}",
               shape=shape)

    def test_through_grad_and_jvp(self):
        a, b = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
        ga, gb = run(programs.custom_grads, [a, b])
        expect(ga, [2.0, 2.0], "grad of the custom function wrt a (its rule: 2 x cotangent)")
        expect(gb, [3.0, 3.0], "grad of the custom function wrt b (its rule: 3 x cotangent)")
        t = run(programs.custom_jvp, [a, b], [mx.ones((2,)), mx.ones((2,))])
        expect(t, [13.0, 13.0], "jvp of the custom function (its rule: 10 + t_a + 2 t_b)")


@pytest.mark.task6_2
class TestHidden6_2:
    @SETTINGS
    @given(data=st.data(), program=graphs())
    def test_drawn_functions(self, data, program):
        n = program[0]
        shape = data.draw(shapes(0, 2), label="shape")
        xs = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True) for _ in range(n)]
        cotangents = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
                      for _ in program[2]]
        vjps, runs, waits = run(programs.checkpoint_node_vjp, program, xs, cotangents)
        what = f"the checkpoint's vjp of {describe(program)}"
        assert runs == 2, (
            f"{what}: the backward pass ran the function {runs - 1} times, not once"
        )
        assert len(vjps) == n, f"{what}: expected {n} vjps, received {len(vjps)}"
        for i, (v, want) in enumerate(zip(vjps, expected_vjps(program, cotangents))):
            expect(v, want, f"{what}: the vjp of x{i}", shape=shape)
        assert waits, (
            f"{what}: the recomputation does not wait for the forward outputs (its inputs "
            f"do not come from a depends on them)"
        )

    def test_through_grad(self):
        x = mx.array([0.5, -1.0])
        g, runs = run(programs.checkpoint_grad, x)
        want = [float(mx.cos(v) * v + mx.sin(v)) for v in (mx.array(0.5), mx.array(-1.0))]
        expect(g, want, "grad of sum(checkpoint(sin(x) * x))")
        assert runs == 2, f"the function ran {runs} times under grad, not twice"
