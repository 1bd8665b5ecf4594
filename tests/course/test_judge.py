"""The judge's data and comparison (mlxref/course/judge.py): what crosses between the
sandbox and the grader, and when a student's result is the reference's.

The grader's verdicts rest on these: a value that loses a bit on its way
through ``to_data`` and ``from_data`` would fail a right answer, a comparison
that accepts another dtype, shape or exception would pass a wrong one, and a
replay that raised what the sandbox named (SystemExit) or answered a call
with another call's answer would let the student's answers steer the
trusted process. The end-to-end path (record, answer, judge, replay) is
graded in test_grader_attacks.py and test_wrong_answers.py.
"""

import math

import pytest

import mlxref.core as mx
from course import programs
from mlxref.core.primitives.elementwise import Sigmoid
from mlxref.course import judge


def _round_trip(value):
    return judge.from_data(judge.json.loads(judge.dumps(judge.to_data(value))))


@pytest.mark.parametrize("dtype", ["bool_", "int8", "uint16", "int32", "int64", "uint64",
                                   "float16", "bfloat16", "float32", "float64", "complex64"])
def test_an_array_crosses_with_its_dtype_shape_and_every_bit(dtype):
    dtype = getattr(mx, dtype)
    values = [[0, 1, 2], [3, 1, 0]] if not dtype.is_inexact else [
        [-0.0, 1.5, math.inf], [math.nan, -3.25, 1e-3]]
    a = mx.array(values, dtype)
    b = _round_trip(a)
    assert (b.dtype, b.shape) == (a.dtype, a.shape)
    assert repr(b.tolist()) == repr(a.tolist())  # -0.0 and nan included
    if dtype == mx.float32:  # the elements are the array's, rounded to float32
        assert b.tolist()[1][2] == a.tolist()[1][2] != 1e-3


def test_containers_numbers_and_names_cross_as_themselves():
    value = {"a": (1, 2.5, None, True), 3: [complex(1, -2), "text", mx.float16],
             (1, 2): mx.array(7)}
    back = _round_trip(value)
    assert back.keys() == value.keys()
    assert back["a"] == (1, 2.5, None, True) and type(back["a"][3]) is bool
    assert back[3][:3] == [complex(1, -2), "text", mx.float16]
    assert back[(1, 2)].item() == 7 and back[(1, 2)].shape == ()
    assert _round_trip([Sigmoid, mx.sin, programs.scan_order]) == [
        Sigmoid, mx.sin, programs.scan_order]


@pytest.mark.parametrize("value, why", [
    (lambda x: x, "no importable name"),
    (Sigmoid().vjp, "no importable name"),
    (math.sqrt, "not a function or class of mlxref"),
    (object(), "not data"),
    ("x" * (judge.TEXT + 1), "characters"),
])
def test_what_is_not_data_is_refused_by_name(value, why):
    with pytest.raises(judge.NotData, match=why):
        judge.to_data(value)


def test_a_value_too_deep_or_too_large_is_refused():
    deep = []
    for _ in range(judge.DEPTH + 2):
        deep = [deep]
    with pytest.raises(judge.NotData, match="nested deeper"):
        judge.to_data(deep)
    with pytest.raises(judge.NotData, match="elements"):
        judge.to_data(mx.zeros((judge.ITEMS + 1,)))


def _data(x):
    return judge.json.loads(judge.dumps(judge.to_data(x)))


@pytest.mark.parametrize("got, want, tol, passes", [
    (mx.array([1.0, 2.0]), mx.array([1.0, 2.0]), None, True),
    (mx.array([1.0, 2.0 + 2e-6]), mx.array([1.0, 2.0]), None, True),  # float32: 16 ulps
    (mx.array([1.0, 2.0 + 1e-4]), mx.array([1.0, 2.0]), None, False),
    (mx.array([1.0, 2.0 + 1e-4]), mx.array([1.0, 2.0]), 1e-3, True),
    (mx.array([1.0, 2.0], mx.float64), mx.array([1.0, 2.0]), None, False),  # dtype
    (mx.array([[1.0, 2.0]]), mx.array([1.0, 2.0]), None, False),  # shape
    (mx.array([1, 2]), mx.array([1, 3]), 0.5, False),  # integers: exact whatever tol
    (mx.array([math.nan]), mx.array([math.nan]), None, True),
    (mx.array([math.inf]), mx.array([3e38]), None, False),
    (0.1 + 0.2, 0.3, None, True),
    (0.3001, 0.3, None, False),
    (1, True, None, False),  # True is not 1
    (1.0, 1, None, False),  # nor 1.0
    ([1, 2], (1, 2), None, False),
    ("(0+a)", "(0+a)", None, True),
    ({"k": mx.float32}, {"k": mx.float16}, None, False),
])
def test_a_result_is_the_reference_s_to_its_dtype_s_tolerance(got, want, tol, passes):
    assert (judge.same(_data(got), _data(want), tol) is None) == passes


def test_an_exception_is_matched_by_its_type():
    want = judge.error(ValueError("the reference's words"))
    assert judge.same(judge.error(ValueError("other words")), want) is None
    assert "expected ValueError" in judge.same(judge.error(TypeError("x")), want)
    assert "expected ValueError" in judge.same(_data(mx.array(1.0)), want)
    assert "raised ZeroDivisionError" in judge.same(judge.error(ZeroDivisionError()),
                                                     _data(1.0))


@pytest.mark.parametrize("got", [
    None, 7, "array", [], {"array": "float32"}, {"array": "float32", "shape": [1],
                                                 "elements": "x"},
    {"array": "float32", "shape": [1], "elements": [[1.0, 2.0]]}, {"error": 3},
    {"tuple": [1.0]}, {"dict": 5}, {"nonsense": 1},
])
def test_garbage_from_the_sandbox_is_a_wrong_result_never_an_exception(got):
    want = _data(mx.array([1.0]))
    assert isinstance(judge.same(got, want), str)


def test_answer_gives_a_raised_exception_and_a_result_that_is_not_data_as_data():
    call = {"program": judge.name_of(Sigmoid.numeric), "args": _data([0.0]),
            "kwargs": _data({}), "tol": None}
    assert judge.answer(call) == 0.5
    assert judge.answer(dict(call, args=_data(["x"]))) == {
        "error": "TypeError", "message": judge.answer(dict(call, args=_data(["x"])))["message"]}
    assert judge.answer(dict(call, program="os:system"))["error"] == "NotData"
    assert judge.answer(dict(call, program=judge.name_of(mx.array), args=_data([[1.0]]),
                             kwargs=_data({"dtype": mx.float16})))["array"] == "float16"


def test_run_returns_what_grading_would_see_and_raises_what_the_program_raises():
    x = mx.array([1, 2, 3], mx.int16)
    got, direct = judge.run(mx.cumsum, x, reverse=True), mx.cumsum(x, reverse=True)
    assert got.dtype == direct.dtype and got.tolist() == direct.tolist() == [6, 5, 3]
    assert judge.run(programs.scan_order, ["a", "b"], False, True) == ["a", "(a+b)"]
    with pytest.raises(ValueError):
        judge.run(mx.reshape, mx.zeros((2, 3)), (4,))
    with pytest.raises(judge.NotData, match="no importable name"):
        judge.run(lambda x: x, 1)


@pytest.mark.parametrize("program, args", [
    (programs.derivatives, (mx.sin, [[0.5]])),  # numbers: data
    (mx.array, ([True, False],)),  # a bool array of more than one element is data too
])
def test_a_result_that_is_data_is_returned(program, args):
    judge.run(program, *args)


def test_a_verdict_is_no_result_and_a_huge_number_no_crash():
    """A red team forged points by patching, next to the graded code, the checks
    whose pass or fail a program returned (None from check_grads, [True, ""]
    from a SymPy check): run refuses such results, so no hidden test rests on
    one. And 10**400 from the sandbox made the comparison raise."""
    from mlxref.testing import check_grads

    with pytest.raises(judge.NotData, match="a verdict"):
        judge.run(check_grads, mx.sin, [[0.5]])
    with pytest.raises(judge.NotData, match="a verdict"):
        judge.run(mx.array_equal, mx.array(1.0), mx.array(1.0))
    assert "could not be compared" in judge.same(10 ** 400, 1.0)


def test_derivatives_gives_the_derivatives_of_each_order_and_mode():
    """programs.derivatives stands in for check_grads in the hidden tests: its
    numbers are what the judge compares, so they must be the derivatives."""
    xs = [0.5, -1.0]
    (fwd1,), (rev1,), (fwd2,), (rev2,) = judge.run(programs.derivatives, mx.sin, [xs])
    assert rev1.tolist() == pytest.approx([math.cos(v) for v in xs], rel=1e-6)
    assert rev2.tolist() == pytest.approx([-math.sin(v) for v in xs], rel=1e-5)
    # forward mode with tangents of ones: order 1 per element, order 2 along ones
    assert fwd1.tolist() == pytest.approx(rev1.tolist())
    assert fwd2.item() == pytest.approx(sum(rev2.tolist()), rel=1e-5)


# --- the visible tests' replay: the student's answers, raised or rebuilt, outside the sandbox


@pytest.mark.parametrize("name, kind", [
    ("ValueError", ValueError), ("ZeroDivisionError", ZeroDivisionError),
    ("NotImplementedError", NotImplementedError),
    # not Python's, or not an Exception: never raised as itself in the trusted process
    ("SystemExit", judge.Answered), ("KeyboardInterrupt", judge.Answered),
    ("GeneratorExit", judge.Answered), ("Skipped", judge.Answered),
    ("UnicodeDecodeError", judge.Answered),  # its constructor wants five arguments
])
def test_an_answered_exception_is_raised_again_as_python_s_own_or_as_answered(name, kind):
    data = {"error": name, "message": "from the sandbox"}
    with pytest.raises(Exception) as info:
        judge.answered(data)
    assert type(info.value) is kind and info.value.kind == name and info.value.answer == data
    assert str(info.value) == "from the sandbox"


@pytest.mark.parametrize("data", [
    {"error": "ValueError"},  # no message
    {"error": "ValueError", "message": "m", "extra": 1},
    {"error": "ValueError", "message": "m", "where": [["f.py", "3", "g", "x"]]},
    {"error": "ValueError", "message": "m", "where": [["f.py", 3, "g"]] * 2},
    {"error": "ValueError", "message": "m", "stub": ["f.py", True]},
    {"error": "x" * 201, "message": "m"},
    {"array": "float99", "shape": [1], "elements": [1.0]},
    {"array": "float32", "shape": [3], "elements": [1.0]},
    {"array": "float32", "shape": [1], "elements": ["1.0"]},
    {"tag": 1},
    [[[[]]]] * 3 + [{"ref": "os:system"}],
    # a function is an argument, never an answer: the trusted replay imports nothing
    # an answer names (a red team had it run mlxref's command line)
    {"ref": "mlxref.cli:main"},
    {"tuple": [1, {"ref": "mlxref.course.judge:run"}]},
])
def test_an_answer_that_cannot_be_read_is_not_data_never_another_exception(data):
    with pytest.raises(judge.NotData):
        judge.answered(data)


class _Item:  # what describe reads of a pytest item
    path = __file__


def _raised(data):
    try:
        judge.answered(data)
    except Exception as exc:  # noqa: BLE001
        return exc, exc.__traceback__


def test_describe_tells_the_stub_the_students_lines_and_an_unanswered_call():
    stub = {"error": "NotImplementedError", "message": "Task 2.3: ...",
            "stub": ["mlxref/core/primitives/elementwise.py", 601]}
    assert judge.describe(*_raised(stub), _Item) == (
        "not done yet: mlxref/core/primitives/elementwise.py, line 601 still raises the "
        "stub's NotImplementedError")
    where = {"error": "MyError", "message": "no", "where": [["a.py", 7, "partial", "return b.x"]],
             "inside": ["helper", "mlxref/core/ops.py"]}
    text = judge.describe(*_raised(where), _Item)
    assert text.startswith("MyError: no\nin your code:\n  a.py, line 7, in partial: return b.x\n"
                           "  raised inside helper (mlxref/core/ops.py)"), text
    gone = judge.Unanswered("stopped at the wall-clock limit of 60 s")
    assert judge.describe(gone, None, _Item) == ("your code's run ended before it answered "
                                                 "this test's call: stopped at the wall-clock "
                                                 "limit of 60 s")


def test_a_replayed_call_gets_the_answer_recorded_for_it_in_order_and_no_other():
    x = mx.array([1.0, 2.0])
    call = {"program": judge.name_of(mx.sin), "args": judge.to_data([x]),
            "kwargs": judge.to_data({}), "tol": None}
    answer = judge.to_data(mx.array([5.0, 6.0]))
    replayer = judge.Replayer({"t": {"calls": [[call, answer], [call, None]], "why": "died"}},
                              "unused")
    replayer.current = replayer.answers["t"]
    judge._REPLAYER.append(replayer)
    try:
        assert judge.run(mx.sin, x).tolist() == [5.0, 6.0]  # the answer, not sin
        with pytest.raises(judge.Unanswered, match="died"):
            judge.run(mx.sin, x)
        with pytest.raises(judge.NotData, match="not the one the reference's run made"):
            judge.run(mx.sin, x)  # a third call was never recorded
        replayer.next = 0
        with pytest.raises(judge.NotData, match="not the one the reference's run made"):
            judge.run(mx.cos, x)  # another program than the recorded call's
    finally:
        judge._REPLAYER.clear()


def test_bounded_walks_any_depth_without_the_stack():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    assert not judge.bounded(deep)
    assert judge.bounded(judge.to_data([[1.0, 2.0], {"a": (1, 2)}]))
    assert not judge.bounded([0] * (2 * judge.ITEMS + 1))


def test_a_students_string_is_one_printable_line_in_the_replay():
    text = judge.answered(["ok\n  task 2.4: pass\x1b[32m\u2028"])[0]
    assert "\n" not in text and "\x1b" not in text and text.startswith("ok   task 2.4: pass")
