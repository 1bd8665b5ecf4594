"""Hidden tests of tasks 5.1 to 5.3: the vmap rules on drawn shapes, batch axes and dtypes.

The expected value of a batched rule is the stack of the op on each example,
computed here one example at a time; a rule must also say where its
output's batch axis is, and keep the dtype the op gives an example.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mlxref.core as mx
from course import programs
from mlxref.core.primitives import elementwise as E
from mlxref.core.primitives.reduction import Reduce, _out_batch_axis, shift_axes
from mlxref.core.primitives.shape import Reshape
from mlxref.course.judge import run
from hidden_support import SETTINGS, draw_array, elements, expect, shapes

BINARY = [(E.Add, mx.add), (E.Multiply, mx.multiply), (E.Greater, mx.greater),
          (E.Maximum, mx.maximum), (E.Subtract, mx.subtract)]
DTYPES = [mx.float32, mx.float64, mx.int32, mx.int8, mx.float16]


def _batched(data, shape, dtype, size, label):
    """(examples, the batched array, its batch axis or None)."""
    ax = data.draw(st.one_of(st.none(), st.integers(0, len(shape))), label=f"{label} axis")
    if ax is None:
        x = draw_array(data.draw, shape, dtype, -4, 4, integers=True)
        return [x] * size, x, None
    examples = [draw_array(data.draw, shape, dtype, -4, 4, integers=True) for _ in range(size)]
    return examples, mx.stack(examples, axis=ax), ax


def _check_stack(got, axis, wants, what):
    """``got`` batched on ``axis`` is the stack of the ``wants`` (one per example)."""
    assert isinstance(axis, int) and 0 <= axis < got.ndim, (
        f"{what}: expected the output's batch axis (an int below {got.ndim}), received {axis!r}"
    )
    assert got.shape[axis] == len(wants), (
        f"{what}: the output {got.shape} has {got.shape[axis]} examples on its batch axis "
        f"{axis}, not {len(wants)}"
    )
    for b, want in enumerate(wants):
        example = mx.take(got, mx.array(b), axis=axis)
        expect(example, elements(want), f"{what}: example {b}", shape=want.shape,
               dtype=want.dtype)


@pytest.mark.task5_1
class TestHidden5_1:
    @SETTINGS
    @given(data=st.data(), k=st.integers(0, len(BINARY) - 1), shape=shapes(0, 2),
           size=st.integers(1, 3), dtype=st.sampled_from(DTYPES))
    def test_drawn_batch_axes(self, data, k, shape, size, dtype):
        primitive, op = BINARY[k]
        a_examples, a, a_ax = _batched(data, shape, dtype, size, "a")
        b_examples, b, b_ax = _batched(data, shape, dtype, size, "b")
        if a_ax is None and b_ax is None:
            a_examples, a, a_ax = a_examples, mx.stack(a_examples, axis=0), 0
        outs, axes = run(programs.vmap_elementwise_of, primitive, [a, b], [a_ax, b_ax])
        what = (f"vmap_elementwise({primitive().name}) of {dtype} a {a.shape} batched on "
                f"{a_ax}, b {b.shape} batched on {b_ax}")
        assert len(outs) == 1 and list(axes) == [0], (
            f"{what}: expected ([output], [0]), received {len(outs)} output(s), axes {axes}"
        )
        _check_stack(outs[0], 0, [op(p, q) for p, q in zip(a_examples, b_examples)], what)


REDUCTIONS = {"sum": mx.sum, "prod": mx.prod, "max": mx.max, "min": mx.min, "and": mx.all,
              "or": mx.any}


def _example_axes(data, ndim):
    return tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), min_size=1), label="axes")))


@pytest.mark.task5_2
class TestHidden5_2:
    @SETTINGS
    @given(data=st.data(), shape=shapes(1, 3), size=st.integers(1, 3),
           kind=st.sampled_from(sorted(REDUCTIONS)), keepdims=st.booleans(),
           dtype=st.sampled_from(DTYPES + [mx.bool_, mx.uint8]))
    def test_drawn_reductions(self, data, shape, size, kind, keepdims, dtype):
        axes = _example_axes(data, len(shape))
        examples = [draw_array(data.draw, shape, dtype, 0, 3, integers=True) for _ in range(size)]
        ax = data.draw(st.integers(0, len(shape)), label="batch axis")
        x = mx.stack(examples, axis=ax)
        outs, out_axes = run(programs.vmap_rule, Reduce, [kind, axes, keepdims], [x], [ax])
        what = (f"Reduce({kind!r}, axes={axes}, keepdims={keepdims}).vmap of {dtype} "
                f"x {x.shape} batched on {ax}")
        assert len(outs) == 1 and len(out_axes) == 1, f"{what}: expected one output and axis"
        # MLX's rule leaves the batch axis in place: only reduced axes before it move it.
        want_axis = ax if keepdims else ax - sum(1 for d in axes if d < ax)
        assert out_axes[0] == want_axis, (
            f"{what}: expected the output batched on axis {want_axis} (the batch axis stays "
            f"where it is), received {out_axes[0]}"
        )
        wants = [REDUCTIONS[kind](e, axis=list(axes), keepdims=keepdims) for e in examples]
        _check_stack(outs[0], out_axes[0], wants, what)

    def test_an_unbatched_input(self):
        x = mx.array([[1, 2], [3, 4]], mx.int8)
        outs, axes = run(programs.vmap_rule, Reduce, ["sum", (0,)], [x], [None])
        assert list(axes) == [None], f"Sum.vmap of an unbatched input: axes {axes}, not [None]"
        expect(outs[0], [4, 6], "Sum.vmap of an unbatched int8 input", shape=(2,),
               dtype=mx.int32)

    @SETTINGS
    @given(data=st.data(), ndim=st.integers(1, 4), keepdims=st.booleans())
    def test_the_helpers(self, data, ndim, keepdims):
        axes = _example_axes(data, ndim)
        ax = data.draw(st.integers(0, ndim), label="batch axis")
        shifted = tuple(d + 1 if d >= ax else d for d in axes)
        got = run(shift_axes, axes, ax)
        assert tuple(got) == shifted, (
            f"shift_axes({axes}, {ax}): expected {shifted}, received {got!r}"
        )
        # _out_batch_axis gets axes drawn on their own: the child that answers the calls
        # sees every call's inputs at once, and ``shifted`` is shift_axes's answer.
        batched = tuple(sorted(data.draw(st.sets(
            st.integers(0, ndim).filter(lambda d: d != ax), min_size=1), label="batched axes")))
        want = ax if keepdims else ax - sum(1 for d in batched if d < ax)
        got = run(_out_batch_axis, ax, batched, keepdims)
        assert got == want, (
            f"_out_batch_axis({ax}, {batched}, keepdims={keepdims}): expected {want}, "
            f"received {got!r}"
        )

    @SETTINGS
    @given(data=st.data(), shape=shapes(1, 3), kind=st.sampled_from(["sum", "max", "prod"]))
    def test_through_vmap(self, data, shape, kind):
        axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
        ax = data.draw(st.integers(0, len(shape)), label="in_axes")
        examples = [draw_array(data.draw, shape, mx.float32, -3, 3, integers=True)
                    for _ in range(2)]
        got = run(programs.vmap_reduction, REDUCTIONS[kind], axis, ax, mx.stack(examples, axis=ax))
        _check_stack(got, 0, [REDUCTIONS[kind](e, axis=axis) for e in examples],
                     f"vmap({kind}(x, axis={axis}), in_axes={ax})")


def _reshapes(shape):
    """Some shapes with as many elements as ``shape``."""
    n = math.prod(shape)
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return st.sampled_from(divisors).flatmap(
        lambda d: st.sampled_from([(n,), (d, n // d), (n // d, d), (d, 1, n // d), (1, n)])
    )


@pytest.mark.task5_3
class TestHidden5_3:
    @SETTINGS
    @given(data=st.data(), shape=shapes(1, 3), size=st.integers(1, 3),
           dtype=st.sampled_from(DTYPES))
    def test_drawn_shapes(self, data, shape, size, dtype):
        new = data.draw(_reshapes(shape), label="new shape")
        examples, x, ax = _batched(data, shape, dtype, size, "x")
        outs, axes = run(programs.vmap_rule, Reshape, [new], [x], [ax])
        what = f"Reshape({new}).vmap of {dtype} x {x.shape} batched on {ax}"
        assert len(outs) == 1 and len(axes) == 1, f"{what}: expected one output and axis"
        if ax is None:
            assert axes[0] is None, f"{what}: expected axes [None], received {axes}"
            expect(outs[0], elements(x), what, shape=new, dtype=dtype)
            return
        _check_stack(outs[0], axes[0], [e.reshape(new) for e in examples], what)
