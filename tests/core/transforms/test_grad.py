"""vjp, jvp, grad and value_and_grad (mlxref/core/transforms/vjp.py, jvp.py, grad.py; MLX's
mlx/transforms.cpp): semantics, return structures and messages (MLX 0.32), and what grad
does to the caller's lists and dicts (it writes its tracers there and puts the originals
back afterwards; what the function assigned there stays)."""

import math
import re
import threading
from collections import namedtuple

import pytest
from support import assert_array, assert_same_as_mlx, needs_mlx, real_mx

import mlxref.core as mx
from mlxref.core.transforms import events


def seed_fn(x):
    return mx.sin(x) * mx.exp(x)


def test_seed_example_gradient():
    g = mx.grad(seed_fn)(mx.array(0.5))
    expected = math.exp(0.5) * (math.sin(0.5) + math.cos(0.5))
    assert_array(g, expected, dtype=mx.float32, shape=())
    assert repr(g) == "array(2.23733, dtype=float32)"


# --- vjp and jvp ------------------------------------------------------------------


def test_vjp_returns_two_lists_and_products_wrt_inputs():
    x, y = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    result = mx.vjp(lambda a, b: [a * b, a + b], [x, y], [mx.array([1.0, 1.0]), mx.array([2.0, 2.0])])
    assert isinstance(result, tuple) and len(result) == 2
    outputs, vjps = result
    assert isinstance(outputs, list) and isinstance(vjps, list)
    assert_array(outputs[0], [3, 8])
    assert_array(outputs[1], [4, 6])
    # d/da: b*1 + 1*2 ; d/db: a*1 + 1*2 -- not the cotangents passed in
    assert_array(vjps[0], [5, 6])
    assert_array(vjps[1], [3, 4])


def test_jvp_returns_one_tangent_per_output():
    x, y = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    outputs, jvps = mx.jvp(lambda a, b: (a * b, a - b), [x, y], [mx.array([1.0, 0.0]), mx.array([0.0, 1.0])])
    assert len(outputs) == 2 and len(jvps) == 2
    assert_array(jvps[0], [3, 2])  # b*ta + a*tb
    assert_array(jvps[1], [1, -1])


def test_vjp_skips_stop_gradient_outputs_when_pairing():
    x = mx.array([1.0, 2.0])
    outputs, (g,) = mx.vjp(lambda a: [mx.stop_gradient(a), 3 * a], [x], [mx.array([1.0, 1.0])])
    assert len(outputs) == 2
    assert_array(g, [3, 3])


def test_unreached_primal_gets_zeros_and_accumulation_through_shared_input():
    x, y = mx.array([1.0, 2.0]), mx.array([5.0, 6.0])
    _, (gx, gy) = mx.vjp(lambda a, b: a * a + a, [x, y], [mx.array([1.0, 1.0])])
    assert_array(gx, [3, 5])
    assert_array(gy, [0, 0], dtype=mx.float32)


def test_identity_and_constant_outputs():
    x = mx.array(2.0)
    assert_array(mx.vjp(lambda a: a, [x], [mx.array(7.0)])[1][0], 7)
    assert_array(mx.jvp(lambda a: a, [x], [mx.array(7.0)])[1][0], 7)
    assert_array(mx.jvp(lambda a: mx.array(3.0), [x], [mx.array(7.0)])[1][0], 0)


VJP_ERRORS = [
    (lambda m: m.vjp(lambda a: [a, a], [m.array([1.0, 2.0])], [m.array([1.0, 1.0])]),
     "[vjp] Number of outputs to compute gradients for (2) does not match number of cotangents (1)."),
    (lambda m: m.vjp(lambda a: a, [m.array([1.0, 2.0])], [m.array([1.0, 1.0])] * 2),
     "[vjp] Number of outputs to compute gradients for (1) does not match number of cotangents (2)."),
    (lambda m: m.vjp(lambda a: a, [m.array([1.0, 2.0])], [m.array([1.0, 1.0, 1.0])]),
     "[vjp] Output shape (2) does not match cotangent shape (3)."),
    (lambda m: m.vjp(lambda a: a.sum(), [m.array([1.0, 2.0])], [m.array([1.0, 1.0, 1.0])]),
     "[vjp] Output shape () does not match cotangent shape (3). If you are using grad your function must return a scalar."),
    (lambda m: m.jvp(lambda a: a, [m.array([1.0])], []),
     "[jvp] Number of inputs does not match number of tangents."),
    (lambda m: m.jvp(lambda a: a, [m.array([1.0])], [m.array([1.0, 2.0])]),
     "[jvp] Input shape does not match shape of tangent."),
]


@pytest.mark.parametrize("call, message", VJP_ERRORS)
def test_vjp_jvp_messages(call, message):
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        call(mx)


@needs_mlx
@pytest.mark.parametrize("call, message", VJP_ERRORS[:1] + VJP_ERRORS[2:])
def test_vjp_jvp_messages_are_mlx_messages(call, message):
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        call(real_mx)


@needs_mlx
def test_extra_cotangents_mlx_ignores_them_mlxref_raises():
    """A deliberate difference: MLX silently ignores a second cotangent here."""
    call, message = VJP_ERRORS[1]
    outputs, vjps = call(real_mx)
    assert vjps[0].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match=re.escape(message)):
        call(mx)


def test_vjp_rejects_non_array_outputs_and_trees():
    with pytest.raises(TypeError, match=r"\[vjp\] The function must return an array"):
        mx.vjp(lambda a: 1.0, [mx.array(1.0)], [mx.array(1.0)])
    with pytest.raises(TypeError, match=r"vjp\(\): primals must be a flat list of arrays"):
        mx.vjp(lambda a: a, {"a": mx.array(1.0)}, [mx.array(1.0)])


# --- grad and value_and_grad ---------------------------------------------------------


def f2(x, y):
    return (x * y + x).sum()


def test_argnums_forms():
    x, y = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    assert_array(mx.grad(f2)(x, y), [4, 5])
    assert_array(mx.grad(f2, argnums=1)(x, y), [1, 2])
    assert isinstance(mx.grad(f2, argnums=[0])(x, y), mx.array)  # bare, not a 1-tuple
    gy, gx = None, None
    g = mx.grad(f2, argnums=(1, 0))(x, y)  # sorted: (d/dx, d/dy)
    assert isinstance(g, tuple) and len(g) == 2
    gx, gy = g
    assert_array(gx, [4, 5])
    assert_array(gy, [1, 2])


def test_argnames():
    def h(x, *, w):
        return (x * w).sum()

    x, w = mx.array([1.0, 2.0]), mx.array([3.0, 4.0])
    pos, named = mx.grad(h, argnames="w")(x, w=w)
    assert pos is None and list(named) == ["w"]
    assert_array(named["w"], [1, 2])
    pos, named = mx.grad(h, argnums=0, argnames=["w"])(x, w=w)
    assert_array(pos, [3, 4])
    assert_array(named["w"], [1, 2])


Point = namedtuple("Point", "a b")


def test_trees_of_arguments_keep_their_structure():
    def loss(p):
        return (p["w"] * p["b"][0] + p["b"][1]).sum()

    p = {"w": mx.array([1.0, 2.0]), "b": [mx.array(3.0), mx.array(4.0)]}
    g = mx.grad(loss)(p)
    assert set(g) == {"w", "b"} and isinstance(g["b"], list)
    assert_array(g["w"], [3, 3])
    assert_array(g["b"][0], 3)
    assert_array(g["b"][1], 2)

    gp = mx.grad(lambda q: q.a * q.b)(Point(mx.array(2.0), mx.array(5.0)))
    assert type(gp) is Point
    assert_array(gp.a, 5)
    assert_array(gp.b, 2)


def test_undifferentiated_arguments_may_hold_anything():
    g = mx.grad(lambda x, n, s, d: (x * n).sum())(mx.array([1.0]), 3, "hi", {"k": None})
    assert_array(g, [3])


def test_value_and_grad_with_aux():
    def aux(x):
        return (x * x).sum(), {"n": x.size, "y": x * 2}

    (value, extra), g = mx.value_and_grad(aux)(mx.array([1.0, 2.0]))
    assert_array(value, 5)
    assert extra["n"] == 2
    assert_array(extra["y"], [2, 4])
    assert_array(g, [2, 4])  # the aux output is not differentiated


def test_captured_arrays_are_constants():
    w = mx.array([2.0, 3.0])
    assert_array(mx.grad(lambda x: (x * w).sum())(mx.array([1.0, 1.0])), [2, 3])


def test_same_array_twice_gets_a_gradient_per_position():
    a = mx.array(2.0)
    g = mx.grad(lambda lst: lst[0] * 3 + lst[2])([a, a, a])
    assert [v.item() for v in g] == [3.0, 0.0, 1.0]


def test_integer_input_gets_truncated_integer_gradient():
    g = mx.grad(lambda a: (a * 2.7).sum())(mx.array([1, 2]))
    assert_array(g, [2, 2], dtype=mx.int32)


GRAD_ERRORS = [
    (lambda m: m.grad(lambda x: x)(m.array([1.0, 2.0])),
     "[vjp] Output shape (2) does not match cotangent shape ()."),
    (lambda m: m.grad(lambda x: x)(m.array([1.0])),
     "[vjp] Output shape (1) does not match cotangent shape (). If you are using grad your function must return a scalar."),
    (lambda m: m.grad(lambda x: 1.0)(m.array(1.0)),
     "[grad] The return value of the function whose gradient we want to compute should be a scalar array; but float was returned."),
    (lambda m: m.grad(lambda x: (x, x))(m.array(1.0)),
     "[grad] The return value of the function whose gradient we want to compute should be a scalar array; but tuple was returned."),
    (lambda m: m.value_and_grad(lambda x: [x])(m.array(1.0)),
     "[value_and_grad] The return value of the function whose gradient we want to compute should be either a scalar array or a tuple with the first value being a scalar array (Union[array, tuple[array, Any, ...]]); but list was returned."),
    (lambda m: m.value_and_grad(lambda x: ())(m.array(1.0)),
     "[value_and_grad] The return value of the function whose gradient we want to compute should be either a scalar array or a non-empty tuple. The first value should be a scalar array and the rest can be anything. Instead, we got an empty tuple."),
    (lambda m: m.value_and_grad(lambda x: (1.0, x))(m.array(1.0)),
     "[value_and_grad] The return value of the function whose gradient we want to compute should be either a scalar array or a tuple with the first value being a scalar array (Union[array, tuple[array, Any, ...]]); but it was a tuple with the first value being of type float ."),
    (lambda m: m.grad(lambda x: x, argnums=1)(m.array(1.0)),
     "[grad] Can't compute the gradient of argument index 1 because the function is called with only 1 positional arguments."),
    (lambda m: m.grad(lambda x: x, argnums=-1),
     "[grad] Can't compute the gradient of negative argument index -1"),
    (lambda m: m.grad(lambda x, y: x, argnums=[1, 1]),
     "[grad] Duplicate argument index 1 is not allowed."),
    (lambda m: m.grad(lambda x, y: x, argnums=[0, 1, 1]),
     "[grad] Duplicate argument index 0 is not allowed."),
    (lambda m: m.grad(lambda x: x, argnums=[]),
     "[grad] Gradient wrt no argument requested"),
    (lambda m: m.grad(lambda x, b=None: x, argnames="b")(m.array(1.0)),
     "[grad] Can't compute the gradient of keyword argument 'b' because the function is called with the following keyword arguments {}"),
    (lambda m: m.grad(lambda x, b=None, c=None: x, argnames="b")(m.array(1.0), c=m.array(1.0)),
     "[grad] Can't compute the gradient of keyword argument 'b' because the function is called with the following keyword arguments {c,}"),
    (lambda m: m.grad(lambda x: x)(1.0),
     "[tree_flatten] The argument should contain only arrays"),
    (lambda m: m.grad(lambda x: x[0])([m.array(1.0), 1.0]),
     "[tree_flatten] The argument should contain only arrays"),
    (lambda m: m.value_and_grad(lambda x: x, argnums=-2),
     "[value_and_grad] Can't compute the gradient of negative argument index -2"),
]


@pytest.mark.parametrize("call, message", GRAD_ERRORS)
def test_grad_messages(call, message):
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        call(mx)


@needs_mlx
@pytest.mark.parametrize("call, message", GRAD_ERRORS)
def test_grad_messages_are_mlx_messages(call, message):
    """The same misuse on real MLX raises the same text."""
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        call(real_mx)


# --- eval inside transforms ----------------------------------------------------------


def test_eval_and_tolist_inside_grad_keep_the_graph():
    def f(x):
        y = x * x
        mx.eval(y)
        _ = y.tolist()
        return (y * x).sum()

    assert_array(mx.grad(f)(mx.array([1.0, 2.0])), [3, 12])


def test_async_eval_inside_a_transform_raises():
    def f(x):
        mx.async_eval(x)
        return x.sum()

    with pytest.raises(ValueError, match=re.escape("[async_eval] Not allowed inside a graph transformation.")):
        mx.grad(f)(mx.array([1.0]))


# --- higher order ----------------------------------------------------------------------


def test_third_order():
    x = 0.7
    g3 = mx.grad(mx.grad(mx.grad(mx.sin)))(mx.array(x))
    assert_array(g3, -math.cos(x))


def test_hessian_vector_products_agree():
    def f(x):
        return (mx.sin(x) * x * x).sum()

    x, v = mx.array([0.3, -1.2]), mx.array([1.0, 2.0])
    # forward over reverse
    _, (hvp_fwd,) = mx.jvp(mx.grad(f), [x], [v])
    # reverse over reverse: grad of <grad f, v>
    hvp_rev = mx.grad(lambda y: (mx.grad(f)(y) * v).sum())(x)
    # reverse over forward: vjp of jvp
    _, (hvp_rf,) = mx.vjp(lambda y: mx.jvp(f, [y], [v])[1][0], [x], [mx.array(1.0)])

    def f2(t):  # d²/dt² (t² sin t) = 2 sin t + 4 t cos t - t² sin t
        return 2 * math.sin(t) + 4 * t * math.cos(t) - t * t * math.sin(t)

    expected = [f2(0.3) * 1.0, f2(-1.2) * 2.0]
    for h in (hvp_fwd, hvp_rev, hvp_rf):
        assert_array(h, expected)


def test_perturbation_confusion_is_avoided():
    def outer(x):
        inner = mx.grad(lambda y: x)(mx.array(1.0))  # d/dy of a constant: zero
        return x * inner

    assert_array(mx.grad(outer)(mx.array(3.0)), 0)

    def outer2(x):  # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x
        return x * mx.grad(lambda y: x * y)(mx.array(1.0))

    assert_array(mx.grad(outer2)(mx.array(3.0)), 6)


# --- threads ---------------------------------------------------------------------------------


def test_threads_differentiate_independently():
    functions = [
        (lambda x: mx.sin(x), math.cos),
        (lambda x: mx.exp(x), math.exp),
        (lambda x: x * x * x, lambda t: 3 * t * t),
        (lambda x: mx.tanh(x), lambda t: 1 - math.tanh(t) ** 2),
        (lambda x: mx.log(x), lambda t: 1 / t),
        (lambda x: mx.sqrt(x), lambda t: 0.5 / math.sqrt(t)),
        (lambda x: mx.sigmoid(x), lambda t: math.exp(-t) / (1 + math.exp(-t)) ** 2),
        (lambda x: mx.cos(x) * x, lambda t: math.cos(t) - t * math.sin(t)),
    ]
    errors = []

    def work(k):
        f, df = functions[k]
        for i in range(50):
            t = 0.5 + 0.01 * i
            got = mx.grad(f)(mx.array(t, mx.float64)).item()
            if abs(got - df(t)) > 1e-9 * (1 + abs(df(t))):
                errors.append((k, t, got, df(t)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


# --- traversal events ----------------------------------------------------------------------


def test_vjp_and_jvp_announce_their_steps():
    seen = []
    x = mx.array([0.5, 1.0])
    with events.listen(seen.append):
        mx.vjp(seed_fn, [x], [mx.array([1.0, 1.0])])
    begin, steps = seen[0], seen[1:]
    assert isinstance(begin, events.Begin) and begin.kind == "vjp"
    names = [s.node.primitive().name for s in steps]
    assert names == ["Multiply", "Exp", "Sin", "Copy"] or names[0] == "Multiply"
    assert names[0] == "Multiply" and set(names[1:3]) == {"Sin", "Exp"}
    assert [s.position for s in steps] == sorted(s.position for s in steps)
    assert all(isinstance(s, events.VjpStep) and len(s.vjps) == len(s.argnums) for s in steps)

    seen.clear()
    with events.listen(seen.append):
        mx.jvp(seed_fn, [x], [mx.array([1.0, 1.0])])
    names = [s.node.primitive().name for s in seen[1:]]
    assert names[-1] == "Multiply" and set(names[:2]) == {"Sin", "Exp"}
    assert all(len(s.jvps) == len(s.node.outputs()) for s in seen[1:])


def test_no_listener_no_events():
    seen = []
    with events.listen(seen.append):
        pass
    mx.grad(seed_fn)(mx.array(0.5))
    assert seen == []


# --- against real MLX ------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x, y: (m.sin(x) * m.exp(y)).sum(),
        lambda m, x, y: (m.tanh(x * y) + m.sigmoid(x) / (1 + y * y)).sum(),
        lambda m, x, y: (m.maximum(x, y) * m.log1p(m.abs(x))).sum(),
        lambda m, x, y: (m.where(x > y, x * x, m.cos(y)) + m.arctan2(x, y)).sum(),
        lambda m, x, y: (m.logaddexp(x, y) - m.sqrt(m.square(y) + 1)).sum(),
    ],
)
def test_grads_match_mlx(fn):
    xs, ys = [0.3, -1.2, 2.0], [1.5, 0.25, -0.7]
    ours = mx.grad(lambda x, y: fn(mx, x, y), argnums=(0, 1))(mx.array(xs), mx.array(ys))
    theirs = real_mx.grad(lambda x, y: fn(real_mx, x, y), argnums=(0, 1))(
        real_mx.array(xs), real_mx.array(ys)
    )
    for a, b in zip(ours, theirs):
        assert_same_as_mlx(a, b, rtol=1e-5, atol=1e-6)


def test_jvp_of_a_comparison_keeps_a_float_tangent():
    _, (t,) = mx.jvp(lambda x: x > 0, [mx.array([1.0, -1.0])], [mx.array([1.0, 1.0])])
    assert_array(t, [0, 0], dtype=mx.float32)
    if real_mx is not None:  # MLX #3081: the same dtype there
        _, (theirs,) = real_mx.jvp(lambda x: x > 0, [real_mx.array([1.0, -1.0])],
                                   [real_mx.array([1.0, 1.0])])
        assert_same_as_mlx(t, theirs)


def test_vmap_announces_the_batch_axes_of_each_step():
    seen = []
    with events.listen(seen.append):
        mx.vmap(lambda x, y: mx.sin(x) * y, in_axes=(1, None))(mx.ones((2, 3)), mx.ones((2,)))
    begin, steps = seen[0], seen[1:]
    assert begin.kind == "vmap" and len(begin.primals) == 1
    names = [s.node.primitive().name for s in steps]
    assert names[0] == "Sin" and names[-1] == "Multiply"
    sin = steps[0]
    assert isinstance(sin, events.VmapStep) and sin.in_axes == [1] and sin.out_axes == [1]
    mul = steps[-1]
    assert mul.in_axes[1] is None and mul.out_axes == [0]


# --- grad and the caller's containers ---------------------------------------


def _identities(m):
    """Which of three list entries keep their object after grad of a function
    that assigns to the middle one; and the value left there."""

    def fun(arrs):
        arrs[1] = arrs[0] + arrs[1] * 2 + arrs[2]
        return arrs[1]

    arrs = [m.array(1.0), m.array(1.0), m.array(1.0)]
    before = list(arrs)
    grads = m.grad(fun)(arrs)
    return [a is b for a, b in zip(before, arrs)], arrs[1].item(), [g.item() for g in grads]


@needs_mlx
def test_grad_keeps_untouched_entries_and_leaves_assignments():
    ours, theirs = _identities(mx), _identities(real_mx)
    assert ours == theirs
    assert ours[0] == [True, False, True]
    assert ours[1] == 4.0  # what the function assigned stays in the caller's list


def _nested(m):
    def loss(model, extra):
        model["b"] = m.array(2.0)
        model["c"][0] = model["a"] * 3
        extra[0] = extra[0] * 5  # not differentiated, but written to
        return model["a"] * model["d"][0]

    model = {"a": m.array(1.5), "b": m.array(1.0), "c": [m.array(0.0)], "d": (m.array(4.0),)}
    extra = [m.array(7.0)]
    d_tuple = model["d"]
    value, grads = m.value_and_grad(loss)(model, extra)
    return (value.item(), {k: [x.item() for x in (v if isinstance(v, (list, tuple)) else [v])]
                           for k, v in grads.items()},
            {k: [x.item() for x in (v if isinstance(v, (list, tuple)) else [v])]
             for k, v in model.items()},
            extra[0].item(), model["d"] is d_tuple)


@needs_mlx
def test_grad_fills_dicts_in_place_and_rebuilds_tuples():
    ours, theirs = _nested(mx), _nested(real_mx)
    assert ours == theirs
    assert ours[2]["b"] == [2.0] and ours[2]["c"] == [4.5] and ours[3] == 35.0
    assert ours[4] is False  # tuples are rebuilt, lists and dicts are updated


@needs_mlx
def test_grad_with_inplace_update_keeps_the_new_value():
    def run(m):
        def loss_fn(model):
            model[1] = m.array(2.0)
            return model[0] * 2

        model = [m.array(0.5), m.array(1.0)]
        g = m.grad(loss_fn)(model)
        return model[1].item(), [x.item() for x in g]

    assert run(mx) == run(real_mx) == (2.0, [2.0, 0.0])
