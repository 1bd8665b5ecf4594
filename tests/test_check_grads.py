"""mlxref.testing.check_grads: passes on correct rules, fails (and says why) on wrong ones.

The wrong rules are monkeypatched into a primitive class for one test only;
pytest's ``monkeypatch`` puts the original back afterwards.
"""

import re

import pytest
from support import needs_mlx, real_mx

import mlxref.core as mx
from mlxref.core.primitives import elementwise as E
from mlxref.testing import check_grads

X2 = [0.5, -1.25]


# --- correct functions pass ---------------------------------------------------------


def sin_exp(x):
    return mx.sin(x) * mx.exp(x)


def tanh_matmul(w, x):
    return mx.tanh(w @ x)


def softmax_sum(x):
    # weighted, so the sum is not the constant 1
    return mx.sum(mx.softmax(x, axis=-1) * mx.array([1.0, -2.0, 0.5]), axis=-1)


def reductions_broadcast(x, y):
    # (3,) against (2, 3); a mean with keepdims, a logsumexp over an axis, sums
    centred = y - mx.mean(y, axis=1, keepdims=True)
    scores = mx.square(centred - x) * mx.sigmoid(x)
    return mx.logsumexp(scores, axis=0) + mx.sum(y, axis=0) * mx.sum(x * x)


def with_max(x, y):
    return mx.max(mx.sin(y) * x, axis=1) + mx.min(y, axis=0).sum()


W = [[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]
XV = [0.7, -0.4, 1.1]
XM = [[0.5, 1.0, -0.3], [0.2, -1.1, 0.9]]
CORRECT = [
    pytest.param(sin_exp, [X2], id="sin*exp"),
    pytest.param(tanh_matmul, [W, XV], id="tanh-matmul"),
    pytest.param(softmax_sum, [XM], id="softmax-sum"),
    pytest.param(reductions_broadcast, [XV, XM], id="reductions-broadcast"),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("f, args", CORRECT)
def test_passes_on_correct_functions(f, args, order):
    check_grads(f, [mx.array(a) for a in args], order=order)


@pytest.mark.parametrize(
    "f, args",
    [
        (sin_exp, [[0.3]]),
        (tanh_matmul, [[[0.3, -0.2], [0.1, 0.4]], [0.7, -0.4]]),
        (softmax_sum, [[0.5, 1.0, -0.3]]),
        (reductions_broadcast, [[0.7, -0.4, 1.1], [[0.5, 1.0, -0.3]]]),
    ],
    ids=["sin*exp", "tanh-matmul", "softmax-sum", "reductions-broadcast"],
)
def test_passes_at_third_order_on_tiny_inputs(f, args):
    check_grads(f, [mx.array(a) for a in args], order=3)


def test_max_and_min_pass_in_reverse_mode_to_second_order():
    args = [mx.array(XV), mx.array(XM)]  # no ties
    check_grads(with_max, args, order=1)
    check_grads(with_max, args, order=2, modes=("rev",))


def test_forward_over_forward_through_max_raises_as_in_mlx():
    # Reduce::jvp of max reads the tangent at argmax(x) with take_along_axis;
    # differentiating that again reaches the indices, and MLX raises (mlxref too).
    # So check_grads(order=2) with "fwd" cannot be used on max or min.
    with pytest.raises(ValueError, match=r"\[gather_axis\] Cannot calculate JVP"):
        check_grads(with_max, [mx.array(XV), mx.array(XM)], order=2, modes=("fwd",))


@needs_mlx
def test_mlx_raises_for_forward_over_forward_through_max_too():
    x = real_mx.array(XM)
    v = real_mx.ones_like(x)

    def jvp_of_max(a):
        return real_mx.jvp(lambda b: real_mx.max(b, axis=0), [a], [v])[1][0]

    with pytest.raises(ValueError, match=r"\[gather_axis\] Cannot calculate JVP"):
        real_mx.jvp(jvp_of_max, [x], [v])


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_passes_with_a_single_mode(mode):
    check_grads(sin_exp, [mx.array(X2)], order=2, modes=(mode,))


def test_accepts_lists_ints_and_float32():
    check_grads(sin_exp, [X2])  # converted to an array
    check_grads(sin_exp, [mx.array([1, 2])])  # ints are checked in float64
    check_grads(sin_exp, [mx.array(0.5)])  # a scalar argument


def test_returns_none_and_leaves_arguments_alone():
    x = mx.array(X2)
    assert check_grads(sin_exp, [x]) is None
    assert x.dtype == mx.float32 and x.tolist() == X2


# --- wrong rules fail -----------------------------------------------------------------


def _wrong_sin(monkeypatch, factor=1.01):
    monkeypatch.setattr(E.Sin, "derivative", lambda self, x, out: mx.cos(x) * factor)


def _message(f, args, **kwargs):
    with pytest.raises(AssertionError) as info:
        check_grads(f, args, **kwargs)
    return str(info.value)


def _numbers(message, label):
    return [float(v) for v in re.findall(rf"^  {label}: (\S+)$", message, re.M)]


def test_a_wrong_derivative_fails_with_a_full_message(monkeypatch):
    _wrong_sin(monkeypatch)
    msg = _message(sin_exp, [mx.array(X2)], order=1)
    assert msg.startswith("check_grads: ")
    assert "sin_exp" in msg  # the function
    assert "arguments: [[0.5, -1.25]]" in msg  # the arguments, with their values
    assert "forward mode (jvp) and finite differences" in msg
    assert "reverse mode (vjp) and finite differences" in msg
    assert "(order 1)" in msg
    expected, received = _numbers(msg, "expected"), _numbers(msg, "received")
    assert expected and len(expected) == len(received)
    # The expected value is the finite difference, the received one is off by the
    # 1% the patch put into d/dx sin.
    for e, r in zip(expected, received):
        assert e != r
        assert abs(e - r) > 1e-4 * abs(e)
        assert abs(e - r) < 0.05 * abs(e)


def test_the_expected_value_is_the_true_directional_derivative(monkeypatch):
    # With the rule right the check passes; with it wrong the "expected" value is
    # unchanged (it comes from finite differences) and "received" moves.
    _wrong_sin(monkeypatch, factor=1.5)
    wrong = _message(sin_exp, [mx.array(X2)], order=1)
    _wrong_sin(monkeypatch, factor=2.0)
    wronger = _message(sin_exp, [mx.array(X2)], order=1)
    assert _numbers(wrong, "expected") == pytest.approx(_numbers(wronger, "expected"))
    assert _numbers(wrong, "received") != pytest.approx(_numbers(wronger, "received"))


def test_a_lambda_is_named_and_every_argument_listed(monkeypatch):
    _wrong_sin(monkeypatch)
    msg = _message(lambda a, b: mx.sin(a) * b, [mx.array([0.25]), mx.array([2.0])], order=1)
    assert "of <lambda> (order 1)" in msg
    assert "arguments: [[0.25], [2.0]]" in msg


def test_a_wrong_rule_inside_a_bigger_function_is_caught(monkeypatch):
    _wrong_sin(monkeypatch)
    with pytest.raises(AssertionError, match="reductions_sin"):

        def reductions_sin(x, y):
            return reductions_broadcast(mx.sin(x), y)

        check_grads(reductions_sin, [mx.array(XV), mx.array(XM)], order=1)


def _wrong_sin_jvp(monkeypatch):
    """Forward mode only: the tangent is scaled by 1.01 * cos, the vjp stays right."""

    def jvp(self, primals, tangents, argnums):
        return [tangents[0] * mx.cos(primals[0]) * 1.01]

    monkeypatch.setattr(E.Sin, "jvp", jvp)


def _wrong_sin_vjp(monkeypatch):
    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0] * mx.cos(primals[0]) * 1.01]

    monkeypatch.setattr(E.Sin, "vjp", vjp)


def test_a_wrong_jvp_rule_is_caught_by_forward_mode_only(monkeypatch):
    _wrong_sin_jvp(monkeypatch)
    args = [mx.array(X2)]
    check_grads(sin_exp, args, order=2, modes=("rev",))  # reverse mode never sees it
    msg = _message(sin_exp, args, order=1, modes=("fwd",))
    assert "forward mode (jvp) and finite differences of sin_exp (order 1)" in msg
    assert "reverse mode" not in msg


def test_a_wrong_jvp_rule_is_caught_by_the_fwd_rev_consistency_check(monkeypatch):
    _wrong_sin_jvp(monkeypatch)
    msg = _message(sin_exp, [mx.array(X2)], order=1)
    # Both checks that involve the jvp fail; the vjp against differences does not.
    assert "forward mode (jvp) and finite differences of sin_exp" in msg
    assert "<u, J v> (jvp) and <J^T u, v> (vjp) of sin_exp (order 1) disagree" in msg
    assert "reverse mode (vjp) and finite differences" not in msg
    # In the consistency block, "expected" is <u, J v> (wrong) and "received"
    # <J^T u, v> (right, so equal to the finite difference of the first block).
    (fd, jv_first), (jv, vjp) = zip(_numbers(msg, "expected"), _numbers(msg, "received"))
    assert jv == jv_first and vjp == pytest.approx(fd, rel=1e-7)
    assert jv != pytest.approx(vjp, rel=1e-4)


def test_a_wrong_vjp_rule_is_caught_by_reverse_mode_only(monkeypatch):
    _wrong_sin_vjp(monkeypatch)
    args = [mx.array(X2)]
    check_grads(sin_exp, args, order=2, modes=("fwd",))
    msg = _message(sin_exp, args, order=1, modes=("rev",))
    assert "reverse mode (vjp) and finite differences of sin_exp (order 1)" in msg
    msg = _message(sin_exp, args, order=1)
    assert "reverse mode (vjp) and finite differences" in msg
    assert "<u, J v> (jvp) and <J^T u, v> (vjp)" in msg
    assert "forward mode (jvp) and finite differences" not in msg


def test_a_second_order_only_error_needs_order_two(monkeypatch):
    # d/dx sin is cos, computed right; only differentiating that cos (the second
    # derivative of sin) uses Cos.derivative, patched here to +sin instead of -sin.
    monkeypatch.setattr(E.Cos, "derivative", lambda self, x, out: mx.sin(x))
    args = [mx.array(X2)]
    check_grads(mx.sin, args, order=1)
    msg = _message(mx.sin, args, order=2)
    assert "of jvp(sin) (order 2)" in msg
    assert "(order 1)" not in msg
    for modes in [("fwd",), ("rev",)]:
        with pytest.raises(AssertionError, match=r"\(order 2\)"):
            check_grads(mx.sin, args, order=2, modes=modes)
    msg = _message(mx.sin, args, order=2, modes=("rev",))
    assert "of vjp(sin) (order 2)" in msg


def test_a_third_order_only_error_needs_order_three(monkeypatch):
    # The derivatives of sin are cos, then -sin (Cos.derivative builds a Negative
    # node), then -cos: only the third differentiates through Negative, whose jvp
    # and vjp are broken here (they forget the sign).
    monkeypatch.setattr(E.Negative, "vjp", lambda self, p, c, a, o: [c[0] * 1.0])
    monkeypatch.setattr(E.Negative, "jvp", lambda self, p, t, a: [t[0] * 1.0])
    args = [mx.array([0.3])]
    # Negative's rules are not used in the first derivative of sin (cos) ...
    check_grads(mx.sin, args, order=1)
    # ... but its forward runs in the second (Cos.derivative is -sin) and its rules
    # in the third.
    check_grads(mx.sin, args, order=2)
    with pytest.raises(AssertionError, match=r"\(order 3\)"):
        check_grads(mx.sin, args, order=3)


def test_the_order_in_the_message_is_the_derivative_that_failed(monkeypatch):
    _wrong_sin(monkeypatch)
    # Asked for order 3, but the first derivative is already wrong: order 1.
    msg = _message(sin_exp, [mx.array([0.3])], order=3)
    assert "(order 1)" in msg and "(order 3)" not in msg


# --- arguments ------------------------------------------------------------------------


def test_a_single_mode_may_be_a_string(monkeypatch):
    _wrong_sin_vjp(monkeypatch)
    # "rev" is one mode, not the three characters r, e, v (which would check nothing).
    with pytest.raises(AssertionError, match="reverse mode"):
        check_grads(sin_exp, [mx.array(X2)], order=1, modes="rev")
    check_grads(sin_exp, [mx.array(X2)], order=1, modes="fwd")


@pytest.mark.parametrize("modes", [(), ("forward",), ("fwd", "reverse"), "both"])
def test_unknown_modes_are_an_error(modes):
    with pytest.raises(ValueError, match="modes"):
        check_grads(sin_exp, [mx.array(X2)], modes=modes)


def test_tolerances_decide(monkeypatch):
    _wrong_sin(monkeypatch, factor=1.001)  # 0.1% off
    args = [mx.array(X2)]
    with pytest.raises(AssertionError):
        check_grads(sin_exp, args, order=1)  # rtol 1e-4
    check_grads(sin_exp, args, order=1, rtol=1e-2)


def test_the_seed_picks_the_directions_deterministically(monkeypatch):
    _wrong_sin(monkeypatch)
    args = [mx.array(X2)]
    assert _message(sin_exp, args, order=1) == _message(sin_exp, args, order=1)
    assert _message(sin_exp, args, order=1, seed=1) != _message(sin_exp, args, order=1)
