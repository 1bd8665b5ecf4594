"""Hidden tests of tasks 4.1 to 4.3: the walks on drawn graphs, and unbroadcasting.

The drawn graphs are made of ``+``, ``-`` and negation, whose rules are not
tasks, so the expected vjps and jvps follow from counting: each value of the
graph is a linear combination of the inputs, with integer coefficients.
The walks must also announce their steps (the drawings replay them).
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from mlxref.course.judge import run
from course.programs import (
    broadcast_times_arange, broadcast_vjp, chain_vjp, derivatives, graph_grad, graph_walk,
    sum_minus_difference_times, vjp_through_an_evaluating_rule
)
from hidden_support import SETTINGS, draw_array, elements, expect, indices, shapes


@st.composite
def programs(draw):
    """(number of inputs, steps, outputs): a step is (op, i, j) on earlier values."""
    n = draw(st.integers(1, 3))
    steps = []
    for k in range(draw(st.integers(1, 8))):
        size = n + k
        op = draw(st.sampled_from(["add", "subtract", "negative"]))
        steps.append((op, draw(st.integers(0, size - 1)), draw(st.integers(0, size - 1))))
    total = n + len(steps)
    outputs = sorted(draw(st.sets(st.integers(n, total - 1), min_size=1, max_size=2)))
    return n, steps, outputs


def combine(program, vectors):
    """The program on coefficient vectors (lists of ints), one per input: the
    outputs' coefficients. On arrays, it is ``course.programs.linear_graph``."""
    n, steps, outputs = program
    pool = list(vectors)
    for op, i, j in steps:
        a, b = pool[i], pool[j]
        pool.append([p + q for p, q in zip(a, b)] if op == "add" else
                    [p - q for p, q in zip(a, b)] if op == "subtract" else [-p for p in a])
    return [pool[k] for k in outputs]


def describe(program):
    n, steps, outputs = program
    names = [f"x{i}" for i in range(n)]
    for op, i, j in steps:
        names.append({"add": f"({names[i]} + {names[j]})", "subtract":
                      f"({names[i]} - {names[j]})", "negative": f"-{names[i]}"}[op])
    return "[" + ", ".join(names[k] for k in outputs) + "]"


def _inputs(data, n):
    shape = data.draw(shapes(0, 2), label="shape")
    dtype = data.draw(st.sampled_from([mx.float16, mx.float32, mx.float64]), label="dtype")
    return shape, dtype, [draw_array(data.draw, shape, dtype, -4, 4, integers=True)
                          for _ in range(n)]


def _coefficients(program):
    n = program[0]
    return combine(program, [[int(i == k) for i in range(n)] for k in range(n)])


def expected_vjps(program, cotangents):
    """The flat vjp of each input: its coefficients in the outputs times their cotangents."""
    coefficients = _coefficients(program)
    return [[sum(coef[i] * c for coef, c in zip(coefficients, cs))
             for cs in zip(*(elements(c) for c in cotangents))] for i in range(program[0])]


@pytest.mark.task4_1
class TestHidden4_1:
    @SETTINGS
    @given(data=st.data(), program=programs())
    def test_drawn_graphs(self, data, program):
        n = program[0]
        shape, dtype, primals = _inputs(data, n)
        coefficients = _coefficients(program)
        cotangents = [draw_array(data.draw, shape, dtype, -3, 3, integers=True)
                      for _ in coefficients]
        # The walk as data: Begin events, the tape's length, and per VjpStep its
        # position, its node's index in the reversed tape, and its vjps and argnums.
        vjps, (begins, length, done) = run(graph_walk, mx.vjp, program, primals, cotangents)
        what = f"vjp of {describe(program)} with cotangents {[c.tolist() for c in cotangents]}"
        assert len(vjps) == n, f"{what}: expected {n} vjps, received {len(vjps)}"
        for i, (v, want) in enumerate(zip(vjps, expected_vjps(program, cotangents))):
            expect(v, want, f"{what}: the vjp of x{i}", shape=shape, dtype=dtype)
        assert begins == 1, f"{what}: the walk announced {begins} Begin events"
        assert [position for position, *_ in done] == list(range(length)), (
            f"{what}: expected one VjpStep per node of the tape, positions "
            f"{list(range(length))}, received {[position for position, *_ in done]}"
        )
        for position, node, results, argnums in done:
            assert node == position, f"{what}: VjpStep {position} names another node"
            assert results == argnums, f"{what}: VjpStep {position}'s vjps"

    @SETTINGS
    @given(data=st.data(), program=programs())
    def test_grad_argnums(self, data, program):
        n = program[0]
        _, _, primals = _inputs(data, n)
        primals = [p.reshape(()) if p.ndim == 0 else p.sum() for p in primals]
        argnums = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1), label="argnums"))
        coefficients = _coefficients(program)[0]
        got = run(graph_grad, program, argnums, primals)
        got = got if isinstance(got, (list, tuple)) else [got]
        assert len(got) == len(argnums), f"grad with argnums {argnums}: received {len(got)}"
        for i, g in zip(argnums, got):
            expect(g, [coefficients[i]], f"grad of {describe(program)}[0] wrt x{i} "
                   f"(argnums {argnums})", shape=())

    def test_a_rule_that_evaluates(self):
        # A rule may evaluate arrays of the graph; the walk goes on through them.
        what = "vjp of f((x + x) - x + x), f's rule evaluating its input, cotangent [1, 3]"
        try:
            v = run(vjp_through_an_evaluating_rule, mx.array([1.0, 2.0]),
                    mx.array([1.0, 3.0]))
        except Exception as e:  # noqa: BLE001 - the message says what went wrong
            raise AssertionError(f"{what}: expected [4.0, 12.0], received {type(e).__name__}: "
                                 f"{e} (the stub's contract: rules run in graph.RetainGraph())")
        expect(v, [4.0, 12.0], what)

    def test_a_deep_graph_and_its_derivatives(self):
        v = run(chain_vjp, mx.array([1.0, 2.0]), mx.array([3.0, 4.0]), 400)
        expect(v, [3.0, 4.0], "vjp of x through a 1200-node chain (the value stays x)")
        run(derivatives, sum_minus_difference_times, [[0.5, 1.0], [2.0, -1.0]],
            order=1, modes="rev", tol=1e-4)


@pytest.mark.task4_2
class TestHidden4_2:
    @SETTINGS
    @given(data=st.data(), program=programs())
    def test_drawn_graphs(self, data, program):
        n = program[0]
        shape, dtype, primals = _inputs(data, n)
        tangents = [draw_array(data.draw, shape, dtype, -3, 3, integers=True) for _ in range(n)]
        coefficients = _coefficients(program)
        # The walk as data, as in TestHidden4_1 (the tape in its own order).
        jvps, (begins, length, done) = run(graph_walk, mx.jvp, program, primals, tangents)
        what = f"jvp of {describe(program)} with tangents {[t.tolist() for t in tangents]}"
        assert len(jvps) == len(coefficients), (
            f"{what}: expected {len(coefficients)} jvps, received {len(jvps)}"
        )
        for k, (j, coef) in enumerate(zip(jvps, coefficients)):
            want = [sum(c * t for c, t in zip(coef, ts))
                    for ts in zip(*(elements(t) for t in tangents))]
            expect(j, want, f"{what}: the jvp of output {k}", shape=shape, dtype=dtype)
        assert begins == 1, f"{what}: the walk announced {begins} Begin events"
        assert [position for position, *_ in done] == list(range(length)), (
            f"{what}: expected one JvpStep per node of the tape, positions "
            f"{list(range(length))}, received {[position for position, *_ in done]}"
        )
        assert all(node == position for position, node, *_ in done), (
            f"{what}: a JvpStep names another node"
        )

    def test_derivatives_at_fixed_points(self):
        run(derivatives, sum_minus_difference_times, [[0.5, 1.0], [2.0, -1.0]],
            order=1, modes="fwd", tol=1e-4)


def _broadcast_case(data):
    shape = data.draw(shapes(0, 3), label="x shape")
    lead = data.draw(shapes(0, 2), label="new leading axes")
    target = lead + tuple(data.draw(st.integers(1, 3)) if n == 1 else n for n in shape)
    return shape, target


@pytest.mark.task4_3
class TestHidden4_3:
    @SETTINGS
    @given(data=st.data(), dtype=st.sampled_from([mx.float16, mx.float32, mx.float64, mx.int32]))
    def test_drawn_shapes(self, data, dtype):
        shape, target = _broadcast_case(data)
        x = draw_array(data.draw, shape, dtype, -3, 3, integers=True)
        cot = draw_array(data.draw, target, dtype, -9, 9, integers=True)
        got = run(broadcast_vjp, target, x, cot)
        assert isinstance(got, list) and len(got) == 1, (
            f"Broadcast.vjp: expected a list of one cotangent, received {got!r}"
        )
        lead = len(target) - len(shape)
        want = {i: 0 for i in indices(shape)}
        for index, c in zip(indices(target), elements(cot)):
            source = tuple(0 if n == 1 else i for i, n in zip(index[lead:], shape))
            want[source] += c
        expect(got[0], [want[i] for i in indices(shape)],
               f"Broadcast({target}).vjp for x of shape {shape}, {dtype} cotangent "
               f"{cot.tolist()}", shape=shape, dtype=dtype)

    def test_derivatives_at_fixed_points(self):
        run(derivatives, broadcast_times_arange, [[[0.5], [1.0], [2.0]]], order=1,
            modes="rev", tol=1e-4)
