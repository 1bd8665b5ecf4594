"""Where mlxref once differed from MLX 0.32, and where it still does on purpose.

Each behaviour is checked on mlxref and, where MLX is installed, on real MLX:
most tests run the same assertions on both libraries (the ``m`` parameter), so
the test says what MLX does as well as what mlxref does. Where mlxref
deliberately differs (README, "Where mlxref differs from MLX"), the test
asserts both behaviours. Expected values are computed from the inputs; the few
literals are MLX's exact results and messages.
"""

import collections
import copy
import gc
import math
import re
import struct
import threading
import time

import pytest

import mlxref.core as mx
from mlxref.core.transforms.tape import cycle_collector_paused
from mlxref.core.primitives.elementwise import Unary
from support import (assert_array, assert_same_as_mlx, assert_same_error, error_of, needs_mlx,
                     real_mx)
from support import frozen_heap  # noqa: F401  (the fixture)

BOTH = [pytest.param(mx, id="mlxref"), pytest.param(real_mx, id="mlx", marks=needs_mlx)]


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


@pytest.fixture
def gc_paused(frozen_heap):
    """Keep the cycle collector from freeing other tests' arrays mid-measurement
    (frozen_heap: the collection before it walks only this file's objects)."""
    gc.collect()
    with cycle_collector_paused():
        yield


# --- 1. assigning into the function's own input cuts the gradient there ------------


XS = [1.0, 2.0, 3.0]


def assign_then_sum(x, idx, value=2.0):
    x[idx] = value
    return x.sum()


def assign_then_square(x):
    x[1] = 5.0
    return x * x


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("idx", [0, 1, 2])
def test_grad_through_an_assignment_into_the_input(m, idx):
    x = m.array(XS)
    g = m.grad(assign_then_sum)(x, idx)
    # The overwritten element no longer reaches the output: MLX gives [1, 0, 1] at idx 1.
    assert g.tolist() == [0.0 if i == idx else 1.0 for i in range(len(XS))]
    assert x.tolist() == XS  # the caller's array is untouched


@pytest.mark.parametrize("m", BOTH)
def test_value_and_grad_returns_the_value_computed_with_the_update(m):
    idx, value = 1, 5.0
    x = m.array(XS)
    v, g = m.value_and_grad(lambda x: assign_then_sum(x, idx, value))(x)
    assert v.item() == sum(XS) - XS[idx] + value
    assert g.tolist() == [float(i != idx) for i in range(len(XS))]
    assert x.tolist() == XS


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("transform", ["vjp", "jvp"])
def test_vjp_and_jvp_of_an_assignment_into_the_input(m, transform):
    x, seed = m.array(XS), [1.0, 2.0, 3.0]
    (out,), (derivative,) = getattr(m, transform)(assign_then_square, [x], [m.array(seed)])
    assert out.tolist() == [v * v for v in XS[:1] + [5.0] + XS[2:]]
    assert derivative.tolist() == [0.0 if i == 1 else 2 * v * s for i, (v, s) in
                                   enumerate(zip(XS, seed))]
    assert x.tolist() == XS


# --- 2. an op that returns its input unchanged returns a new array --------------------


SAME = {
    "a[:]": lambda m, a: a[:],
    "a[...]": lambda m, a: a[...],
    "a[()]": lambda m, a: a[()],
    "array(a)": lambda m, a: m.array(a),
    "copy.copy": lambda m, a: copy.copy(a),
    "reshape": lambda m, a: m.reshape(a, a.shape),
    "astype": lambda m, a: a.astype(a.dtype),
    "broadcast_to": lambda m, a: m.broadcast_to(a, a.shape),
    "squeeze()": lambda m, a: m.squeeze(a, ()),
    "expand_dims()": lambda m, a: m.expand_dims(a, ()),
    "moveaxis": lambda m, a: m.moveaxis(a, 0, 0),
    "concatenate([a])": lambda m, a: m.concatenate([a]),
}


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("lazy", [False, True], ids=["evaluated", "lazy"])
@pytest.mark.parametrize("op", list(SAME))
def test_assigning_into_the_result_leaves_the_input_alone(m, lazy, op):
    values = [1.0, 2.0, 3.0, 4.0]
    a = m.array(values) * 1.0 if lazy else m.array(values)
    b = SAME[op](m, a)
    b[2] = 0
    assert a.tolist() == values
    assert b.tolist() == values[:2] + [0.0] + values[3:]


@pytest.mark.parametrize("m", BOTH)
def test_arrays_built_before_an_assignment_keep_the_old_value(m):
    values = [1.0, 2.0, 3.0]
    a = m.array(values)
    before, alias = a + 1, a[:]
    a[0] = 9
    after = a + 1
    assert before.tolist() == [v + 1 for v in values]
    assert alias.tolist() == values
    assert after.tolist() == [9 + 1] + [v + 1 for v in values[1:]]


# --- 3. stop_gradient: a zero gradient, not an error ------------------------------------


STOPPED = {
    "grad": lambda m, x: m.grad(lambda x: m.stop_gradient(x))(x),
    "value_and_grad": lambda m, x: m.value_and_grad(lambda x: m.stop_gradient(x))(x)[1],
    "grad of sum": lambda m, x: m.grad(lambda x: m.stop_gradient(x).sum())(x),
    "vjp": lambda m, x: m.vjp(lambda x: m.stop_gradient(x), [x], [x * 2])[1][0],
}


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("transform", list(STOPPED))
def test_gradient_through_stop_gradient_is_zero(m, transform):
    x = m.array(XS)
    g = STOPPED[transform](m, x)
    assert g.shape == x.shape and g.dtype == x.dtype
    assert g.tolist() == [0.0] * len(XS)


def test_more_cotangents_than_outputs_raise_in_mlxref_and_are_ignored_by_mlx():
    def program(m):
        x = m.array(XS)
        return m.vjp(lambda x: m.stop_gradient(x), [x], [x, x])

    with raises(ValueError, "[vjp] Number of outputs to compute gradients for (1) does not "
                "match number of cotangents (2)."):
        program(mx)
    if real_mx is not None:
        (out,), (g,) = program(real_mx)
        assert out.tolist() == XS and g.tolist() == [0.0] * len(XS)


# --- 4. a custom vjp rule returning None ------------------------------------------------


def sine_with_rule(m, result):
    """sin with a vjp rule that returns ``result(cotangent)`` (None: no gradient)."""

    @m.custom_function
    def f(x):
        return m.sin(x)

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return result(cotangent)

    return f


def scaled_sine_with_rule(m):
    """sin(x) * y whose vjp rule gives y's cotangent and None for x."""

    @m.custom_function
    def f(x, y):
        return m.sin(x) * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return None, cotangent * m.sin(primals[0])

    return f


NONE_MESSAGE = "[custom vjp] The vjp function returned NoneType where an array was expected."


def test_a_vjp_rule_returning_none_raises_in_mlxref_where_mlx_is_silently_wrong():
    with raises(ValueError, NONE_MESSAGE):
        mx.grad(sine_with_rule(mx, lambda c: None))(mx.array(1.0))
    # The same rule returning the cotangent is accepted: the check is about None.
    assert mx.grad(sine_with_rule(mx, lambda c: c))(mx.array(1.0)).item() == 1.0
    if real_mx is not None:
        theirs = real_mx.grad(sine_with_rule(real_mx, lambda c: None))(real_mx.array(1.0))
        # MLX hands back the seed cotangent, 1, as if the rule had returned it.
        assert theirs.item() == 1.0 and theirs.item() != pytest.approx(math.cos(1.0))


def test_none_for_one_of_two_arguments_raises_in_mlxref():
    x, y = 1.0, 2.0
    with raises(ValueError, NONE_MESSAGE):
        mx.grad(scaled_sine_with_rule(mx), argnums=(0, 1))(mx.array(x), mx.array(y))
    if real_mx is not None:
        gx, gy = real_mx.grad(scaled_sine_with_rule(real_mx), argnums=(0, 1))(
            real_mx.array(x), real_mx.array(y))
        # MLX's gradients are misplaced: x gets y's, y gets the seed.
        assert gx.item() == pytest.approx(math.sin(x)) and gy.item() == 1.0


# --- 5. float to int and bool casts (x86 CPU) ---------------------------------------------


CAST_INPUTS = [0.7, -0.7, 2.5, -2.5, math.nan, math.inf, -math.inf, 3e9, -3e9, 1e19]


def float32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def c_cast(v, bits):
    """x86's float-to-int: truncation toward zero; nan, inf and out of range give the minimum."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    v = float32(v)
    return math.trunc(v) if math.isfinite(v) and low <= math.trunc(v) <= high else low


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("dtype, bits", [("int32", 32), ("int64", 64)])
def test_float_to_int_casts_truncate_and_send_the_rest_to_the_minimum(m, dtype, bits):
    got = m.array(CAST_INPUTS).astype(getattr(m, dtype)).tolist()
    assert got == [c_cast(v, bits) for v in CAST_INPUTS]


@pytest.mark.parametrize("m", BOTH)
def test_float_to_bool_is_nonzero_so_nan_is_true(m):
    inputs = CAST_INPUTS + [0.0, -0.0]
    assert m.array(inputs).astype(m.bool_).tolist() == [v != 0 for v in inputs]


@needs_mlx
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool_"])
def test_float_casts_as_in_mlx(dtype):
    ours = mx.array(CAST_INPUTS).astype(getattr(mx, dtype))
    theirs = real_mx.array(CAST_INPUTS).astype(getattr(real_mx, dtype))
    assert ours.tolist() == theirs.tolist()


# --- 6. threads evaluating one graph ------------------------------------------------------


def chain(m, x, primitives=None):
    """300 elementwise steps on ``x``; each node's primitive is added to ``primitives``."""
    for i in range(300):
        x = (m.sin, m.cos, m.tanh)[i % 3](x)
        if primitives is not None:
            primitives.append(x.primitive())
    return x


def test_threads_evaluating_one_graph_compute_each_node_once(monkeypatch, gc_paused):
    runs = collections.Counter()
    original = Unary.eval

    def counting_eval(self, inputs):
        runs[id(self)] += 1
        return original(self, inputs)

    x = mx.array([0.001 * i for i in range(1000)])
    expected = chain(mx, x).tolist()  # one evaluation, before counting starts
    monkeypatch.setattr(Unary, "eval", counting_eval)
    primitives = []  # the nodes' primitives, not their arrays, which eval frees
    y = chain(mx, x, primitives)
    base = mx.get_active_memory()  # lazy nodes hold no bytes yet
    start, errors = threading.Barrier(4), []

    def work():
        start.wait()
        try:
            mx.eval(y)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert set(runs) == {id(p) for p in primitives}
    assert set(runs.values()) == {1}, "a node was computed more than once"
    # Only y's elements are new: every intermediate was computed and freed once.
    assert mx.get_active_memory() - base == y.size * y.dtype.size
    assert y.tolist() == expected


@needs_mlx
def test_the_evaluated_chain_and_its_memory_are_mlxs(gc_paused):
    values = [0.001 * i for i in range(1000)]
    results = []
    for m in (mx, real_mx):
        x = m.array(values)
        m.eval(x)
        y = chain(m, x)
        base = m.get_active_memory()
        m.eval(y)
        results.append((y, m.get_active_memory() - base))
    (ours, ours_bytes), (theirs, theirs_bytes) = results
    assert_same_as_mlx(ours, theirs)
    # mlxref counts the result's element bytes; MLX's allocator may round its
    # buffer up (4096 bytes in one process, 4000 in another), never down.
    assert ours_bytes == ours.size * ours.itemsize <= theirs_bytes


# --- Part 2: bad arguments get MLX's error --------------------------------------------------


def _split_invocation(message):
    """A binding's TypeError: (the supported signatures, the "Invoked with" line)."""
    head, _, invoked = message.partition("\n\nInvoked with types: ")
    return head, invoked


ROUND_SIGNATURE = "round(a: array, /, decimals: int = 0, stream: StreamOrDevice = None) -> array"


@pytest.mark.parametrize("decimals", [1.5, -1.0, None, "1", 2**31, -(2**31) - 1])
def test_round_with_decimals_that_are_not_a_c_int(decimals):
    kind, message = assert_same_error(lambda m: m.round(m.array([1.234]), decimals=decimals))
    assert (kind, message) == (TypeError, (
        "round(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. {ROUND_SIGNATURE}\n\nInvoked with types: mlx.core.array, "
        f"kwargs = {{ decimals: {type(decimals).__name__} }}"
    ))
    # Given positionally, MLX lists decimals without its name; mlxref cannot
    # tell the two spellings apart and lists it as a keyword (incompatible_arguments).
    kind, positional = error_of(lambda: mx.round(mx.array([1.234]), decimals))
    assert (kind, positional) == (TypeError, message)
    if real_mx is not None:
        theirs = error_of(lambda: real_mx.round(real_mx.array([1.234]), decimals))[1]
        assert _split_invocation(theirs) == (
            _split_invocation(message)[0], f"mlx.core.array, {type(decimals).__name__}")


def test_the_round_method_names_its_own_signature():
    kind, message = error_of(lambda: mx.array([1.25]).round(1.5))
    assert kind is TypeError
    assert message.startswith("round(): incompatible function arguments.")
    assert "1. round(self, decimals: int = 0, *, stream: " in message
    if real_mx is not None:
        theirs = error_of(lambda: real_mx.array([1.25]).round(1.5))
        assert _split_invocation(message)[0] == _split_invocation(theirs[1])[0]


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("decimals", [True, False, 1, -1])
def test_round_takes_int_and_bool_decimals(m, decimals):
    values = [15.0, 1.234, -2.5]
    got = m.round(m.array(values), decimals).tolist()
    assert got == pytest.approx([round(v, int(decimals)) for v in values], abs=1e-5)


# pad's constant_values


@pytest.mark.parametrize("m", BOTH)
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_pad_with_a_one_element_array_pads_with_that_element(m, shape):
    value = m.full(shape, 7.0)
    assert m.pad(m.array([1.0, 2.0]), 1, constant_values=value).tolist() == [7.0, 1.0, 2.0, 7.0]


@pytest.mark.parametrize("shape", [(2,), (2, 2), (0,)])
def test_pad_with_a_larger_array_raises_in_mlxref(shape):
    fill = [7.0 + i for i in range(math.prod(shape))]
    dims = ",".join(map(str, shape))
    with raises(ValueError, "[pad] constant_values must be a scalar or an array of one element, "
                f"but got an array of shape ({dims})."):
        mx.pad(mx.array([1.0, 2.0]), 1, constant_values=mx.array(fill).reshape(shape))
    if real_mx is not None and fill:
        values = real_mx.array(fill).reshape(shape)
        padded = real_mx.pad(real_mx.array([1.0, 2.0]), 1, constant_values=values)
        assert padded.tolist() == [fill[0], 1.0, 2.0, fill[0]]  # MLX: silently the first


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric"])
def test_other_pad_modes_ignore_constant_values_as_in_mlx(mode):
    def program(m):
        return m.pad(m.array([1.0, 2.0, 3.0]), 2, mode, m.array([7.0, 8.0]))

    ours = program(mx)
    assert ours.shape == (7,)
    if real_mx is not None:
        assert_same_as_mlx(ours, program(real_mx))


@pytest.mark.parametrize("value", [None, [7.0], (7.0,), "a"])
def test_pad_with_a_value_that_is_not_a_scalar_or_an_array(value):
    kind, message = assert_same_error(
        lambda m: m.pad(m.array([1.0, 2.0]), 1, constant_values=value))
    if value is None:
        assert kind is TypeError and message.startswith("pad(): incompatible function arguments.")
    else:
        assert (kind, message) == (
            ValueError, f"Invalid type {type(value).__name__} received in array initialization.")


@pytest.mark.parametrize("m", BOTH)
def test_pad_casts_the_value_to_the_array_dtype_as_mlx_does(m):
    ints = m.array([1, 2], m.int32)
    assert m.pad(ints, 1, constant_values=2.5).tolist() == [2, 1, 2, 2]
    assert m.pad(ints, 1, constant_values=3e9).tolist()[0] == c_cast(3e9, 32)
    with raises(ValueError, "Converting 1099511627776 to int32 would result in overflow."):
        m.pad(ints, 1, constant_values=2**40)


# huge shapes


TOO_BIG = 2**31
OUT_OF_RANGE = "is outside the supported range [-2147483648, 2147483647]."
AN_INT = (OverflowError, (f"Shape dimension {TOO_BIG} {OUT_OF_RANGE} MLX currently uses "
                          "32-bit integers for shape dimensions."))
IN_A_SEQUENCE = (OverflowError, f"Integer value {TOO_BIG} {OUT_OF_RANGE}")
HUGE_SHAPES = {  # a call, and the start of the error MLX and mlxref give
    "zeros(n)": (lambda m: m.zeros(TOO_BIG), AN_INT),
    "ones(n)": (lambda m: m.ones(TOO_BIG), AN_INT),
    "full(n)": (lambda m: m.full(TOO_BIG, 1.0), AN_INT),
    "zeros(-n)": (lambda m: m.zeros(-TOO_BIG - 1), (OverflowError, "Shape dimension -2147483649")),
    "zeros((n,))": (lambda m: m.zeros((TOO_BIG,)), IN_A_SEQUENCE),
    "ones((2, n))": (lambda m: m.ones((2, TOO_BIG)), IN_A_SEQUENCE),
    "full((n,))": (lambda m: m.full((TOO_BIG,), 1.0), IN_A_SEQUENCE),
    "broadcast_to": (lambda m: m.broadcast_to(m.array([1.0]), (TOO_BIG,)), IN_A_SEQUENCE),
    "reshape": (lambda m: m.reshape(m.array([1.0]), (TOO_BIG,)), IN_A_SEQUENCE),
    "uniform": (lambda m: m.random.uniform(shape=(TOO_BIG,)), IN_A_SEQUENCE),
    "normal": (lambda m: m.random.normal((TOO_BIG,)), IN_A_SEQUENCE),
    "randint": (lambda m: m.random.randint(0, 2, (2, TOO_BIG)), IN_A_SEQUENCE),
    "reshape(-n)": (lambda m: m.reshape(m.array([1.0]), (-TOO_BIG - 1,)),
                    (OverflowError, "Integer value -2147483649")),
    "arange": (lambda m: m.arange(TOO_BIG), (ValueError, "[arange] Maximum size exceeded.")),
    # beyond int64, and shapes of the wrong type
    "zeros(2**63)": (lambda m: m.zeros(2**63), (RuntimeError, "std::bad_cast")),
    "zeros((2**63,))": (lambda m: m.zeros((2**63,)), (RuntimeError, "std::bad_cast")),
    "broadcast_to((2**63,))": (lambda m: m.broadcast_to(m.array([1.0]), (2**63,)),
                               (TypeError, "broadcast_to(): incompatible function arguments.")),
    "broadcast_to(2)": (lambda m: m.broadcast_to(m.array([1.0]), 2),
                        (TypeError, "broadcast_to(): incompatible function arguments.")),
    "reshape(None)": (lambda m: m.reshape(m.array([1.0]), None),
                      (TypeError, "reshape(): incompatible function arguments.")),
}


@pytest.mark.parametrize("name", list(HUGE_SHAPES))
def test_shapes_outside_int32_fail_at_once_with_mlxs_error(name):
    program, (exception, start) = HUGE_SHAPES[name]
    started = time.perf_counter()
    kind, message = assert_same_error(program)
    assert time.perf_counter() - started < 2.0
    assert kind is exception and message.startswith(start), message


ELEMENTS = (2**16, 2**16)  # each dimension fits int32; 4294967296 elements do not fit a list
TOO_MANY = {
    "zeros": lambda m: m.zeros(ELEMENTS),
    "ones": lambda m: m.ones(ELEMENTS, m.int32),
    "full": lambda m: m.full(ELEMENTS, 2.0),
    "broadcast_to": lambda m: m.broadcast_to(m.array(1.0), ELEMENTS),
    "uniform": lambda m: m.random.uniform(shape=ELEMENTS),
    "normal": lambda m: m.random.normal(ELEMENTS),
    "randint": lambda m: m.random.randint(0, 2, ELEMENTS),
}


@pytest.mark.parametrize("op", list(TOO_MANY))
def test_more_elements_than_a_list_holds_raise_in_mlxref(op):
    started = time.perf_counter()
    size = math.prod(ELEMENTS)
    with raises(ValueError, f"[{op}] Shape (65536,65536) has {size} elements; mlxref holds an "
                "array's elements in one Python list and stops at 2147483647."):
        TOO_MANY[op](mx)
    assert time.perf_counter() - started < 2.0
    if real_mx is not None:
        assert TOO_MANY[op](real_mx).shape == ELEMENTS  # MLX allocates it lazily


@pytest.mark.parametrize("m", BOTH)
def test_large_shapes_within_the_limits_are_fine(m):
    assert m.zeros((0, TOO_BIG - 1, TOO_BIG - 1)).shape == (0, TOO_BIG - 1, TOO_BIG - 1)
    assert m.reshape(m.zeros((0,)), ELEMENTS + (0,)).shape == ELEMENTS + (0,)
    assert m.zeros((TOO_BIG - 1,)).shape == (TOO_BIG - 1,)  # lazy: never evaluated here
    assert m.reshape(m.array([1.0, 2.0]), (True, 2)).shape == (1, 2)  # a bool is a dimension


def test_an_array_keyword_argument_of_a_custom_function_gets_the_functions_own_gradient():
    # The vjp rule returns the positional argument's gradient only; the keyword
    # array's is the function's automatic vjp, d(sum(sin(x) * w))/dw = sin(x).
    @mx.custom_function
    def f(x, w=None):
        return mx.sin(x) * w

    @f.vjp
    def f_vjp(primals, cotangent, output, w=None):
        return cotangent * mx.cos(primals) * w * 10.0  # deliberately not the true rule

    x, w = mx.array([0.5, 1.0]), mx.array([2.0, 3.0])
    assert_array(mx.grad(lambda w: f(x, w=w).sum())(w), mx.sin(x).tolist())
    assert_array(mx.grad(lambda x: f(x, w=w).sum())(x), (mx.cos(x) * w * 10.0).tolist())
