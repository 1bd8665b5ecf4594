"""Hidden tests of tasks 6.1 and 6.2: custom rules and checkpoints, on drawn
numbers of inputs, argnums and graphs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from mlxref.core.primitives.custom import Depends
from mlxref.core.transforms.custom_function import custom_transforms
from hidden_support import SETTINGS, draw_array, elements, expect, shapes
from test_hidden_4 import describe, expected_vjps, programs, run


def _custom(n, shape, calls):
    """A custom function of ``n`` inputs (their sum) whose rules give recognisable
    values: the vjp for input i is (i + 2) times the cotangent, the jvp 10 + the
    sum of (i + 1) times each given tangent."""

    def fun(*xs):
        total = xs[0]
        for x in xs[1:]:
            total = total + x
        return [total]

    def fun_vjp(primals, cotangents, outputs):
        calls.append(("vjp", len(primals), len(cotangents), len(outputs)))
        return [cotangents[0] * (i + 2) for i in range(len(primals))]

    def fun_jvp(primals, tangents, argnums):
        calls.append(("jvp", len(primals), list(argnums)))
        total = mx.full(shape, 10.0)
        for i, t in zip(argnums, tangents):
            total = total + t * (i + 1)
        return [total]

    return custom_transforms(fun, fun_vjp, fun_jvp)


@pytest.mark.task6_1
class TestHidden6_1:
    @SETTINGS
    @given(data=st.data(), n=st.integers(1, 3), shape=shapes(0, 2))
    def test_vjp_with_drawn_argnums(self, data, n, shape):
        calls = []
        xs = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True) for _ in range(n)]
        (out,) = _custom(n, shape, calls)(*xs)
        node, inputs = out.primitive(), out.inputs()  # the inputs, then the hidden output
        argnums = sorted(data.draw(st.sets(st.integers(0, n), min_size=1), label="argnums"))
        cot = draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
        got = node.vjp(inputs, [cot], argnums, [out])
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
        calls = []
        xs = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True) for _ in range(n)]
        (out,) = _custom(n, shape, calls)(*xs)
        node, inputs = out.primitive(), out.inputs()
        argnums = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1), label="argnums"))
        tangents = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
                    for _ in argnums]
        got = node.jvp(inputs, tangents, argnums)
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
        calls = []
        f = _custom(2, (2,), calls)
        a, b = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
        ga, gb = mx.grad(lambda a, b: f(a, b)[0].sum(), argnums=(0, 1))(a, b)
        expect(ga, [2.0, 2.0], "grad of the custom function wrt a (its rule: 2 x cotangent)")
        expect(gb, [3.0, 3.0], "grad of the custom function wrt b (its rule: 3 x cotangent)")
        _, (t,) = mx.jvp(lambda a, b: f(a, b), [a, b], [mx.ones((2,)), mx.ones((2,))])
        expect(t, [13.0, 13.0], "jvp of the custom function (its rule: 10 + t_a + 2 t_b)")


def _reaches_depends(arrays, outputs):
    """Does the graph of ``arrays`` hold a Depends node that waits for ``outputs``?"""
    wanted = {o.id() for o in outputs}
    seen, stack = set(), list(arrays)
    while stack:
        a = stack.pop()
        if a.id() in seen:
            continue
        seen.add(a.id())
        if a.has_primitive():
            if isinstance(a.primitive(), Depends) and wanted & {x.id() for x in a.inputs()}:
                return True
            stack.extend(a.inputs())
    return False


@pytest.mark.task6_2
class TestHidden6_2:
    @SETTINGS
    @given(data=st.data(), program=programs())
    def test_drawn_functions(self, data, program):
        n = program[0]
        shape = data.draw(shapes(0, 2), label="shape")
        xs = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True) for _ in range(n)]
        calls = []

        def f(*xs):
            calls.append(xs)
            return run(program, xs)

        outs = mx.checkpoint(f)(*xs)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        node = outs[0].primitive()
        cotangents = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
                      for _ in outs]
        inputs = outs[0].inputs()[: len(outs[0].inputs()) - node.num_outputs]
        vjps = node.vjp_fun(inputs, cotangents, outs[0].outputs())
        what = f"the checkpoint's vjp of {describe(program)}"
        assert len(calls) == 2, (
            f"{what}: the backward pass ran the function {len(calls) - 1} times, not once"
        )
        assert len(vjps) == n, f"{what}: expected {n} vjps, received {len(vjps)}"
        for i, (v, want) in enumerate(zip(vjps, expected_vjps(program, cotangents))):
            expect(v, want, f"{what}: the vjp of x{i}", shape=shape)
        assert _reaches_depends(calls[1], outs[0].outputs()), (
            f"{what}: the recomputation does not wait for the forward outputs (its inputs "
            f"do not come from a depends on them)"
        )

    def test_through_grad(self):
        calls = []

        def f(x):
            calls.append(1)
            return mx.sin(x) * x

        x = mx.array([0.5, -1.0])
        g = mx.grad(lambda x: mx.checkpoint(f)(x).sum())(x)
        want = [float(mx.cos(v) * v + mx.sin(v)) for v in (mx.array(0.5), mx.array(-1.0))]
        expect(g, want, "grad of sum(checkpoint(sin(x) * x))")
        assert len(calls) == 2, f"the function ran {len(calls)} times under grad, not twice"
