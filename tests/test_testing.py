"""mlxref.testing (check_grads): correct rules pass, wrong ones fail and say why; random
compositions of ops pass to second order, and (a few) match real MLX's ``grad``.

The wrong rules are monkeypatched into a primitive class for one test only;
pytest's ``monkeypatch`` puts the original back afterwards.

In the random compositions, an expression is a tree of tuples with a known
shape at every node, drawn by ``exprs(shape, depth)`` over three inputs ``x``
(3,), ``y`` (2, 3) and ``s`` ().
``render(e, m, env)`` builds it with the ops of module ``m``, either
``mlxref.core`` or ``mlx.core``, so the same tree runs on both.

Inputs are in [-2, 2]. Domain-restricted functions are wrapped so any real
input is inside their domain (``log(1 + a*a)``, ``arcsin(0.9 * tanh(a))``...).
The points where a composition is not differentiable (ties of ``max`` and
``maximum``, ``where``'s condition switching) are avoided: an example is
rejected (``assume``) unless every such choice is decided by a margin.

Forward-over-forward differentiation through ``max`` / ``min`` reductions
raises in MLX (the jvp's ``take_along_axis`` index is not behind
``stop_gradient``), and mlxref mirrors that; expressions using them get the
second-order check in reverse mode only (see
test_forward_over_forward_through_max_raises_as_in_mlx).
"""

import math
import re

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from support import close, needs_mlx, real_mx

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


# === random compositions of ops, differentiated by check_grads =================

SHAPES = {"x": (3,), "y": (2, 3), "s": ()}

# --- the ops, each written once against a module m ------------------------------------

UNARY = {
    "sin": lambda m, a: m.sin(a),
    "cos": lambda m, a: m.cos(a),
    "tanh": lambda m, a: m.tanh(a),
    "sigmoid": lambda m, a: m.sigmoid(a),
    "arctan": lambda m, a: m.arctan(a),
    "erf": lambda m, a: m.erf(a),
    "arcsinh": lambda m, a: m.arcsinh(a),
    "square": lambda m, a: m.square(a),
    "negative": lambda m, a: -a,
    "exp_tanh": lambda m, a: m.exp(m.tanh(a)),
    "expm1_tanh": lambda m, a: m.expm1(m.tanh(a)),
    "log_1_sq": lambda m, a: m.log(1 + a * a),
    "log1p_sq": lambda m, a: m.log1p(a * a),
    "log2_1_sq": lambda m, a: m.log2(1.5 + m.sin(a)),
    "sqrt_1_sq": lambda m, a: m.sqrt(1 + a * a),
    "rsqrt_1_sq": lambda m, a: m.rsqrt(1 + m.square(a)),
    "arcsin_tanh": lambda m, a: m.arcsin(m.tanh(a) * 0.9),
    "arccos_tanh": lambda m, a: m.arccos(m.tanh(a) * 0.9),
    "arctanh_tanh": lambda m, a: m.arctanh(m.tanh(a) * 0.9),
    "arccosh_1_sq": lambda m, a: m.arccosh(1.5 + a * a),
    "cosh_tanh": lambda m, a: m.cosh(m.tanh(a)),
    "sinh_tanh": lambda m, a: m.sinh(m.tanh(a)),
    "tan_tanh": lambda m, a: m.tan(m.tanh(a)),
    "reciprocal_1_sq": lambda m, a: m.reciprocal(1 + a * a),
    "scale": lambda m, a: a * 0.5 - 0.25,
}

BINARY = {
    "add": lambda m, a, b: a + b,
    "subtract": lambda m, a, b: m.subtract(a, b),
    "multiply": lambda m, a, b: a * b,
    "divide_safe": lambda m, a, b: a / (1 + b * b),
    "power_safe": lambda m, a, b: m.power(1 + a * a, m.tanh(b)),
    "logaddexp": lambda m, a, b: m.logaddexp(a, b),
    "arctan2_safe": lambda m, a, b: m.arctan2(a, 1.5 + m.sin(b)),
    "maximum": lambda m, a, b: m.maximum(a, b),  # kink at a == b: guarded
    "minimum": lambda m, a, b: m.minimum(a, b),
}
KINKED_BINARY = {"maximum", "minimum"}

REDUCE = {
    "sum": lambda m, a, axis, keepdims: m.sum(a, axis=axis, keepdims=keepdims),
    "mean": lambda m, a, axis, keepdims: m.mean(a, axis=axis, keepdims=keepdims),
    "logsumexp": lambda m, a, axis, keepdims: m.logsumexp(a, axis=axis, keepdims=keepdims),
    "max": lambda m, a, axis, keepdims: m.max(a, axis=axis, keepdims=keepdims),
    "min": lambda m, a, axis, keepdims: m.min(a, axis=axis, keepdims=keepdims),
}
KINKED_REDUCE = {"max", "min"}

# Pairs of operand shapes that broadcast to each result shape.
BROADCASTS = {
    (): [((), ())],
    (2,): [((2,), (2,)), ((2,), ())],
    (3,): [((3,), (3,)), ((3,), ()), ((), (3,))],
    (2, 1): [((2, 1), (2, 1)), ((2, 1), ())],
    (2, 3): [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 3), ()),
             ((2, 1), (3,)), ((2, 1), (2, 3)), ((2, 3), (2, 1))],
    (3, 2): [((3, 2), (3, 2)), ((3, 2), (2,)), ((), (3, 2))],
}
# (source shape, axis, keepdims) for each reduced shape.
REDUCTIONS = {
    (): [((3,), None, False), ((2, 3), None, False), ((2,), 0, False), ((3, 2), (0, 1), False)],
    (2,): [((2, 3), 1, False), ((2, 3), -1, False), ((3, 2), 0, False)],
    (3,): [((2, 3), 0, False), ((3, 2), 1, False), ((3, 2), -1, False)],
    (2, 1): [((2, 3), 1, True), ((2, 3), -1, True)],
    (2, 3): [],
    (3, 2): [],
}
MATMULS = {
    (): [((3,), (3,)), ((2,), (2,))],
    (2,): [((2, 3), (3,))],
    (3,): [((2,), (2, 3)), ((3, 2), (2,))],
    (2, 1): [((2, 3), (3, 1))],
    (2, 3): [((2, 1), (1, 3))],
    (3, 2): [],
}
# Leaves and index / shape ops: (source shape, key) or named moves.
SLICES = {
    (): [((3,), 1), ((3,), -1), ((2, 3), (1, 2)), ((2,), 0)],
    (2,): [((3,), slice(None, 2)), ((3,), slice(None, None, 2)), ((2, 3), (slice(None), 0)),
           ((2, 3), (slice(None), -1))],
    (3,): [((3,), slice(None, None, -1)), ((2, 3), 1), ((2, 3), (0, slice(None)))],
    (2, 1): [((2, 3), (slice(None), slice(1, 2)))],
    (2, 3): [((2, 3), (slice(None, None, -1), slice(None)))],
    (3, 2): [((3, 2), (slice(None), slice(None, None, -1)))],
}
RESHAPES = {  # result shape: source shapes of the same size
    (2,): [(2, 1)],
    (2, 1): [(2,)],
    (2, 3): [(3, 2)],
    (3, 2): [(2, 3)],
    (3,): [],
    (): [],
}
# (1, 3) and (3, 1) appear only as matmul operands
LEAVES = {
    (): [("var", "s"), ("index", ("var", "x"), 0), ("reduce", "sum", ("var", "x"), None, False)],
    (3,): [("var", "x")],
    (2, 3): [("var", "y")],
    (2,): [("index", ("var", "y"), (slice(None), 1))],
    (2, 1): [("index", ("var", "y"), (slice(None), slice(2, 3)))],
    (3, 2): [("transpose", ("var", "y"))],
    (1, 3): [("reshape", ("var", "x"), (1, 3))],
    (3, 1): [("reshape", ("var", "x"), (3, 1))],
}


# --- the strategy ---------------------------------------------------------------------


@st.composite
def exprs(draw, shape=(), depth=3):
    """An expression tree whose value has ``shape``."""
    if depth <= 0 or shape in ((1, 3), (3, 1)):
        return draw(st.sampled_from(LEAVES[shape]))
    # weights: mostly math, with the shape moves mixed in
    kinds = ["leaf"] + ["unary"] * 3 + ["binary"] * 4 + ["where"]
    if REDUCTIONS[shape]:
        kinds += ["reduce"] * 3
    if MATMULS[shape]:
        kinds.append("matmul")
    if SLICES[shape]:
        kinds.append("index")
    if RESHAPES[shape]:
        kinds.append("reshape")
    if shape in ((2, 3), (3, 2)):
        kinds.append("transpose")
    if len(shape) >= 1:
        kinds.append("softmax")
    kind = draw(st.sampled_from(kinds))
    sub = lambda s: exprs(s, depth - 1)  # noqa: E731
    if kind == "leaf":
        return draw(st.sampled_from(LEAVES[shape]))
    if kind == "unary":
        return ("unary", draw(st.sampled_from(sorted(UNARY))), draw(sub(shape)))
    if kind == "binary":
        sa, sb = draw(st.sampled_from(BROADCASTS[shape]))
        return ("binary", draw(st.sampled_from(sorted(BINARY))), draw(sub(sa)), draw(sub(sb)))
    if kind == "where":
        sa, sb = draw(st.sampled_from(BROADCASTS[shape]))
        cmp = draw(st.sampled_from(["greater", "less"]))
        return ("where", cmp, draw(sub(sa)), draw(sub(sb)), draw(sub(shape)), draw(sub(shape)))
    if kind == "reduce":
        source, axis, keepdims = draw(st.sampled_from(REDUCTIONS[shape]))
        op = draw(st.sampled_from(sorted(REDUCE)))
        return ("reduce", op, draw(sub(source)), axis, keepdims)
    if kind == "matmul":
        sa, sb = draw(st.sampled_from(MATMULS[shape]))
        return ("matmul", draw(sub(sa)), draw(sub(sb)))
    if kind == "index":
        source, key = draw(st.sampled_from(SLICES[shape]))
        return ("index", draw(sub(source)), key)
    if kind == "reshape":
        source = draw(st.sampled_from(RESHAPES[shape]))
        return ("reshape", draw(sub(source)), shape)
    if kind == "transpose":
        return ("transpose", draw(sub(shape[::-1])))
    assert kind == "softmax"
    return ("softmax", draw(sub(shape)))


def _values(n):
    return st.lists(
        st.floats(-2, 2, allow_nan=False, allow_subnormal=False), min_size=n, max_size=n
    )


inputs = st.fixed_dictionaries({"x": _values(3), "y": _values(6), "s": _values(1)})


# --- rendering ------------------------------------------------------------------------


def render(e, m, env, kinks=None):
    """``e`` built with module ``m`` on the arrays ``env``; with a list ``kinks``,
    also the arrays whose distance from a non-differentiable choice matters."""
    op = e[0]
    r = lambda child: render(child, m, env, kinks)  # noqa: E731
    if op == "var":
        return env[e[1]]
    if op == "unary":
        return UNARY[e[1]](m, r(e[2]))
    if op == "binary":
        a, b = r(e[2]), r(e[3])
        if kinks is not None and e[1] in KINKED_BINARY:
            kinks.append(("gap", a - b))
        return BINARY[e[1]](m, a, b)
    if op == "where":
        a, b = r(e[2]), r(e[3])
        if kinks is not None:
            kinks.append(("gap", a - b))
        cond = m.greater(a, b) if e[1] == "greater" else m.less(a, b)
        return m.where(cond, r(e[4]), r(e[5]))
    if op == "reduce":
        a = r(e[2])
        if kinks is not None and e[1] in KINKED_REDUCE:
            kinks.append(("top2", a, e[3]))
        return REDUCE[e[1]](m, a, e[3], e[4])
    if op == "matmul":
        return m.matmul(r(e[1]), r(e[2]))
    if op == "index":
        return r(e[1])[e[2]]
    if op == "reshape":
        return m.reshape(r(e[1]), e[2])
    if op == "transpose":
        return m.transpose(r(e[1]))
    if op == "softmax":
        return m.softmax(r(e[1]), axis=-1)
    raise AssertionError(f"unknown node {op}")


def show(e):
    """A readable form of an expression, for hypothesis' failure report."""
    op = e[0]
    if op == "var":
        return e[1]
    if op == "unary":
        return f"{e[1]}({show(e[2])})"
    if op == "binary":
        return f"{e[1]}({show(e[2])}, {show(e[3])})"
    if op == "where":
        return f"where({e[1]}({show(e[2])}, {show(e[3])}), {show(e[4])}, {show(e[5])})"
    if op == "reduce":
        return f"{e[1]}({show(e[2])}, axis={e[3]}, keepdims={e[4]})"
    if op == "matmul":
        return f"({show(e[1])} @ {show(e[2])})"
    if op == "index":
        return f"{show(e[1])}[{_key(e[2])}]"
    if op == "reshape":
        return f"reshape({show(e[1])}, {e[2]})"
    if op == "transpose":
        return f"transpose({show(e[1])})"
    return f"softmax({show(e[1])}, axis=-1)"


def _key(key):
    def one(k):
        if isinstance(k, slice):
            parts = ["" if v is None else str(v) for v in (k.start, k.stop, k.step)]
            return ":".join(parts).rstrip(":") or ":"
        return str(k)

    return ", ".join(one(k) for k in key) if isinstance(key, tuple) else one(key)


def nodes(e):
    """Every node of ``e`` (children are the tuple arguments that are nodes)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in node[1:] if isinstance(c, tuple) and c and isinstance(c[0], str))


def uses(e, names):
    """Whether ``e`` applies one of the unary / binary / reduce ops ``names``."""
    return any(n[0] in ("unary", "binary", "reduce") and n[1] in names for n in nodes(e))


def _env(values, m=mx, dtype=None):
    dtype = mx.float64 if dtype is None else dtype
    return {k: m.array(v, dtype=dtype).reshape(SHAPES[k]) for k, v in values.items()}


def elements_of(a):
    return a.reshape(-1).tolist() if a.ndim else [a.item()]


def margin(e, env):
    """How far the point is from the nearest non-differentiable choice."""
    kinks = []
    render(e, mx, env, kinks)
    best = math.inf
    for kind, a, *axis in kinks:
        if kind == "gap":
            best = min([best] + [abs(v) for v in elements_of(a)])
        else:
            best = min(best, _top2_gap(a, axis[0]))
    return best


def _top2_gap(a, axis):
    """The smallest gap between the largest two (and the smallest two) elements of
    every run reduced over ``axis``."""
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(d % a.ndim for d in (axis if isinstance(axis, tuple) else (axis,)))
    kept = [d for d in range(a.ndim) if d not in axes]
    runs = mx.transpose(a, kept + list(axes)) if a.ndim else a
    n = 1
    for d in axes:
        n *= a.shape[d]
    rows = elements_of(runs)
    gap = math.inf
    for i in range(0, len(rows), n):
        run = sorted(rows[i : i + n])
        if len(run) > 1:
            gap = min(gap, run[-1] - run[-2], run[1] - run[0])
    return gap


ARGS = ("x", "y", "s")


def _as_function(e):
    def f(x, y, s):
        return render(e, mx, {"x": x, "y": y, "s": s})

    f.__name__ = show(e)
    return f


MARGIN = 1e-2


# --- the tests ------------------------------------------------------------------------


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(e=st.sampled_from([(), (2,), (3,), (2, 1), (2, 3), (3, 2)]).flatmap(exprs), values=inputs)
def test_random_compositions_pass_check_grads(e, values):
    note(show(e))
    env = _env(values)
    assume(margin(e, env) > MARGIN)
    f = _as_function(e)
    args = [env[k] for k in ARGS]
    if uses(e, KINKED_REDUCE):
        # forward over forward through max / min raises, in MLX as in mlxref
        check_grads(f, args, order=1)
        check_grads(f, args, order=2, modes=("rev",))
    else:
        check_grads(f, args, order=2)


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(e=exprs((), 4), values=inputs)
def test_deeper_scalar_compositions_pass_check_grads(e, values):
    note(show(e))
    env = _env(values)
    assume(margin(e, env) > MARGIN)
    modes = ("rev",) if uses(e, KINKED_REDUCE) else ("fwd", "rev")
    check_grads(_as_function(e), [env[k] for k in ARGS], order=2, modes=modes)


def test_the_generator_reaches_every_kind_of_node():
    # A fixed sample of trees (hypothesis' own deterministic draws) covers the grammar.
    seen = set()

    @settings(max_examples=150, deadline=None, derandomize=True, database=None)
    @given(e=st.sampled_from([(), (2,), (3,), (2, 1), (2, 3), (3, 2)]).flatmap(exprs))
    def collect(e):
        for node in nodes(e):
            seen.add(node[0])
            if node[0] in ("unary", "binary", "reduce"):
                seen.add(node[1])

    collect()
    kinds = {"var", "unary", "binary", "where", "reduce", "matmul", "index", "reshape",
             "transpose", "softmax"}
    assert kinds <= seen
    assert {"sum", "mean", "max", "logsumexp"} <= seen
    assert {"add", "multiply", "maximum"} <= seen


def test_render_is_the_same_tree_on_both_sides():
    e = ("binary", "add", ("unary", "sin", ("var", "x")),
         ("reduce", "logsumexp", ("var", "y"), 0, False))
    assert show(e) == "add(sin(x), logsumexp(y, axis=0, keepdims=False))"
    out = render(e, mx, _env({"x": [0.1, 0.2, 0.3], "y": [0.0] * 6, "s": [1.0]}))
    expected = [math.sin(v) + math.log(2.0) for v in (0.1, 0.2, 0.3)]
    assert close(out.tolist(), expected, rtol=1e-12, atol=1e-12)


def test_margin_sees_ties():
    y_tied = {"x": [0.1, 0.2, 0.3], "y": [1.0, 1.0, 0.5, 0.25, 0.0, -1.0], "s": [0.0]}
    env = _env(y_tied)
    assert margin(("reduce", "max", ("var", "y"), 1, False), env) == 0.0
    assert margin(("reduce", "max", ("var", "y"), 0, False), env) == 0.75
    assert margin(("binary", "maximum", ("var", "x"), ("var", "x")), env) == 0.0
    assert margin(("unary", "sin", ("var", "x")), env) == math.inf


# --- against real MLX -----------------------------------------------------------------


@needs_mlx
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(e=exprs((), 3), values=inputs)
def test_grad_matches_real_mlx(e, values):
    note(show(e))
    ours_env = _env(values)
    assume(margin(e, ours_env) > MARGIN)

    def ours(x, y, s):
        return render(e, mx, {"x": x, "y": y, "s": s})

    def theirs(x, y, s):
        return render(e, real_mx, {"x": x, "y": y, "s": s})

    grads = mx.grad(ours, argnums=(0, 1, 2))(*[ours_env[k] for k in ARGS])
    # float64 on MLX's CPU, so the comparison measures the rules, not rounding
    with real_mx.stream(real_mx.cpu):
        their_env = _env(values, real_mx, real_mx.float64)
        expected = real_mx.grad(theirs, argnums=(0, 1, 2))(*[their_env[k] for k in ARGS])
        expected = [g.tolist() for g in expected]
    for name, g, want in zip(ARGS, grads, expected):
        assert g.shape == SHAPES[name]
        assert close(g.tolist(), want, rtol=1e-4, atol=1e-9), (name, g.tolist(), want)
