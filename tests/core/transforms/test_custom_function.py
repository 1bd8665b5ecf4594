"""``mx.custom_function`` (mlxref/core/transforms/custom_function.py, the CustomTransforms
primitive in primitives/custom.py; MLX's mlx/transforms.cpp and python/src/transforms.cpp):
semantics, rule signatures and messages.

Every decorated function is built by a factory taking the module ``m``
(``mlxref.core`` or ``mlx.core``), so the same rules run on both libraries
and real MLX 0.32.4 is the oracle for values, structures and messages.
Where MLX is wrong (a vjp rule returning too few results gives a wrong
gradient) the tests show MLX's behaviour and assert mlxref's better one.
"""

import math
import re

import pytest

import mlxref.core as mx
from support import (LIBS, assert_array, needs_mlx, real_mx, same_tree_in_both, vector_batch,
                     vector_x, vector_y)

X, Y, BATCH = vector_x, vector_y, vector_batch


# =====================================================================================
# custom_function
# =====================================================================================


def test_decorators_return_the_same_object():
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    assert isinstance(f, mx.custom_function)
    assert f.vjp(lambda p, c, o: c) is f
    assert f.jvp(lambda p, t: t) is f
    assert f.vmap(lambda i, a: (i, a)) is f

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return cotangent * 100.0

    assert f_vjp is f  # the decorator rebinds the rule's name to the function
    assert f.__name__ == "f"
    assert_array(mx.grad(f)(mx.array(0.5)), 100)


@needs_mlx
def test_mlx_decorators_return_a_custom_function_holding_the_rule():
    # MLX 0.32.4's binding returns a *copy* of the custom_function (``is`` fails), but
    # the rule is stored on ``f`` itself, so ``@f.vjp`` as documented behaves the same.
    @real_mx.custom_function
    def f(x):
        return real_mx.sin(x)

    g = f.vjp(lambda p, c, o: c * 100.0)
    assert isinstance(g, real_mx.custom_function)
    assert real_mx.grad(f)(real_mx.array(0.5)).item() == 100
    assert real_mx.grad(g)(real_mx.array(0.5)).item() == 100


def test_without_rules_it_is_the_plain_function():
    def program(m):
        f = m.custom_function(lambda x: x * x)
        return f(X(m)), m.grad(lambda x: f(x).sum())(X(m))

    value, g = same_tree_in_both(program)
    assert_array(value, [0.25, 1, 4])
    assert_array(g, [1, -2, 4])


# --- rule signatures --------------------------------------------------------------------


def _describe(tree):
    """The structure of a rule's argument: container types, None, or 'array'."""
    if isinstance(tree, dict):
        return {k: _describe(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree).__name__, [_describe(v) for v in tree]
    if tree is None:
        return None
    if isinstance(tree, (int, float, str)):
        return tree
    return "array"


def one_in_one_out(m, log):
    @m.custom_function
    def f(x):
        return m.sin(x)

    @f.vjp
    def f_vjp(primals, cotangent, output):
        log.append(("vjp", _describe(primals), _describe(cotangent), _describe(output)))
        return cotangent * 100.0

    @f.jvp
    def f_jvp(primals, tangent):
        log.append(("jvp", _describe(primals), _describe(tangent)))
        return tangent * 10.0

    @f.vmap
    def f_vmap(inputs, axes):
        log.append(("vmap", _describe(inputs), _describe(axes)))
        return m.sin(inputs) + 1000.0, axes

    return f


def two_in_two_out(m, log):
    @m.custom_function
    def f(x, y):
        return x * y, x + y

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        log.append(("vjp", _describe(primals), _describe(cotangents), _describe(outputs)))
        (x, y), (cp, cs) = primals, cotangents
        return cp * y * 10.0 + cs, cp * x + cs * 10.0

    @f.jvp
    def f_jvp(primals, tangents):
        log.append(("jvp", _describe(primals), _describe(tangents)))
        (x, y), (tx, ty) = primals, tangents
        tx = m.zeros_like(x) if tx is None else tx
        ty = m.zeros_like(y) if ty is None else ty
        return tx * 10.0, ty * 20.0

    @f.vmap
    def f_vmap(inputs, axes):
        log.append(("vmap", _describe(inputs), _describe(axes)))
        x, y = inputs
        return (x * y, x + y + 1000.0), (0, 0)

    return f


def test_vjp_rule_one_argument_one_output_gets_bare_values():
    for m in LIBS:
        log = []
        g = m.grad(lambda x: one_in_one_out(m, log)(x).sum())(X(m))
        assert g.tolist() == [100, 100, 100]
        assert log == [("vjp", "array", "array", "array")], m


def test_vjp_rule_several_arguments_and_outputs_get_tuples():
    def program(m, log):
        f = two_in_two_out(m, log)
        return m.grad(lambda x, y: sum(o.sum() for o in f(x, y)), argnums=(0, 1))(X(m), Y(m))

    for m in LIBS:
        log = []
        program(m, log)
        assert log == [("vjp", ("tuple", ["array", "array"]), ("tuple", ["array", "array"]),
                        ("tuple", ["array", "array"]))], m
    same_tree_in_both(lambda m: program(m, []))


def test_vjp_rule_unused_output_gets_zero_cotangent():
    def program(m):
        seen = []

        @m.custom_function
        def f(x):
            return x * 2.0, x * 3.0

        @f.vjp
        def f_vjp(primals, cotangents, outputs):
            seen.append(cotangents[1])
            return cotangents[0] + cotangents[1] * 7.0

        g = m.grad(lambda x: f(x)[0].sum())(X(m))
        return g, seen[0]

    g, unused = same_tree_in_both(program)
    assert_array(g, [1, 1, 1])
    assert_array(unused, [0, 0, 0])


def test_jvp_rule_gets_none_for_inputs_without_a_tangent():
    def program(m, log):
        f = two_in_two_out(m, log)
        return m.jvp(lambda x: f(x, Y(m)), [X(m)], [m.ones(3)])

    for m in LIBS:
        log = []
        program(m, log)
        assert log == [("jvp", ("tuple", ["array", "array"]), ("tuple", ["array", None]))], m
    outputs, tangents = same_tree_in_both(lambda m: program(m, []))
    assert_array(tangents[0], [10, 10, 10])
    assert_array(tangents[1], [0, 0, 0])


def test_jvp_rule_one_argument():
    for m in LIBS:
        log = []
        _, (t,) = m.jvp(one_in_one_out(m, log), [X(m)], [m.array([1.0, 2.0, 3.0])])
        assert t.tolist() == [10, 20, 30]
        assert log == [("jvp", "array", "array")], m


def test_jvp_rule_with_both_tangents():
    outputs, tangents = same_tree_in_both(
        lambda m: m.jvp(two_in_two_out(m, []), [X(m), Y(m)], [m.ones(3), m.ones(3)])
    )
    assert_array(tangents[0], [10, 10, 10])
    assert_array(tangents[1], [20, 20, 20])


def test_vmap_rule_signature_and_result():
    for m in LIBS:
        log = []
        out = m.vmap(one_in_one_out(m, log))(BATCH(m))
        assert log == [("vmap", "array", 0)], m
        assert abs(out[0, 0].item() - (math.sin(0.5) + 1000)) < 1e-3

        log = []
        m.vmap(two_in_two_out(m, log), in_axes=(0, None))(BATCH(m), Y(m))
        assert log == [("vmap", ("tuple", ["array", "array"]), ("tuple", [0, None]))], m
    same_tree_in_both(lambda m: m.vmap(two_in_two_out(m, []), in_axes=(0, None))(BATCH(m), Y(m)))
    same_tree_in_both(lambda m: m.vmap(one_in_one_out(m, []), in_axes=1)(BATCH(m)))


def test_vmap_rule_is_called_once_per_vmap():
    for m in LIBS:
        log = []
        f = one_in_one_out(m, log)
        m.eval(m.vmap(f)(BATCH(m)))
        m.eval(m.vmap(lambda x: f(x) * 2.0)(BATCH(m)))
        assert [entry[0] for entry in log] == ["vmap", "vmap"], m


def test_vmap_rule_output_axes_are_honoured():
    def program(m):
        @m.custom_function
        def f(x):
            return x * 2.0

        @f.vmap
        def f_vmap(inputs, axes):
            return m.moveaxis(inputs, axes, 1) * 2.0, 1  # batch axis on 1 now

        return m.vmap(f, in_axes=0, out_axes=0)(m.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))

    assert_array(same_tree_in_both(program), [[2, 4, 6], [8, 10, 12]])


# --- grad uses the custom vjp only --------------------------------------------------------


def test_grad_uses_the_custom_vjp_and_only_it():
    # The function's own graph (sin) is never differentiated: d/dx sin = cos would
    # give 0.877...; the rule says 100 * cotangent.
    def program(m):
        @m.custom_function
        def f(x):
            return m.sin(x) * m.exp(x)

        @f.vjp
        def f_vjp(primals, cotangent, output):
            return 100.0 * cotangent

        return m.grad(lambda x: f(x).sum())(X(m)), m.grad(lambda x: (f(x) * 3.0).sum())(X(m))

    g1, g3 = same_tree_in_both(program)
    assert_array(g1, [100, 100, 100])
    assert_array(g3, [300, 300, 300])


def test_grad_of_grad_differentiates_the_vjp_rule():
    def program(m):
        @m.custom_function
        def f(x):
            return m.sin(x)

        @f.vjp
        def f_vjp(primals, cotangent, output):
            return cotangent * primals * primals  # "derivative" x^2

        return m.grad(lambda x: m.grad(lambda y: f(y).sum())(x).sum())(X(m))

    assert_array(same_tree_in_both(program), [1.0, -2.0, 4.0])  # d/dx x^2 = 2x


def test_missing_rules_fall_back_to_the_automatic_transforms():
    def only_vjp(m):
        @m.custom_function
        def f(x):
            return m.sin(x)

        @f.vjp
        def f_vjp(primals, cotangent, output):
            return cotangent * 100.0

        return f

    def only_vmap(m, log):
        @m.custom_function
        def f(x):
            return m.exp(x)

        @f.vmap
        def f_vmap(inputs, axes):
            log.append(1)
            return m.exp(inputs), axes

        return f

    # jvp and vmap of a function with only a vjp rule: the function's own transforms.
    _, (t,) = same_tree_in_both(lambda m: m.jvp(only_vjp(m), [X(m)], [m.ones(3)]))
    assert_array(t, [math.cos(v) for v in (0.5, -1.0, 2.0)])
    v = same_tree_in_both(lambda m: m.vmap(only_vjp(m))(BATCH(m)))
    assert_array(v, [[math.sin(a) for a in row] for row in BATCH(mx).tolist()])
    # grad and jvp of a function with only a vmap rule.
    g = same_tree_in_both(lambda m: m.grad(lambda x: only_vmap(m, [])(x).sum())(X(m)))
    assert_array(g, [math.exp(v) for v in (0.5, -1.0, 2.0)])
    _, (t,) = same_tree_in_both(lambda m: m.jvp(only_vmap(m, []), [X(m)], [m.ones(3)]))
    assert_array(t, [math.exp(v) for v in (0.5, -1.0, 2.0)])


def test_default_vmap_of_a_custom_function_with_several_outputs():
    def program(m):
        @m.custom_function
        def f(x, y):
            return x * y, m.sin(x)

        @f.vjp
        def f_vjp(primals, cotangents, outputs):
            return primals

        return m.vmap(f, in_axes=(0, None))(BATCH(m), Y(m))

    prod, sin = same_tree_in_both(program)
    assert_array(prod, [[0.75, -0.3, -1.4], [4.5, 0.075, 0.14]])
    assert_array(sin, [[math.sin(v) for v in row] for row in BATCH(mx).tolist()])


# --- trees and keyword arguments ----------------------------------------------------------


def dict_function(m, log):
    @m.custom_function
    def f(d):
        return {"p": d["a"] * d["b"], "q": d["a"] + 1.0}

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        log.append((_describe(primals), _describe(cotangents), _describe(outputs)))
        return {
            "a": cotangents["p"] * primals["b"] + cotangents["q"] * 2.0,
            "b": cotangents["p"] * primals["a"],
        }

    return f


def test_dict_pytrees_in_and_out():
    def program(m, log):
        f = dict_function(m, log)
        d = {"a": X(m), "b": Y(m)}
        value = f(d)
        g = m.grad(lambda d: sum(v.sum() for v in f(d).values()))(d)
        return value, g

    for m in LIBS:
        log = []
        program(m, log)
        assert log == [({"a": "array", "b": "array"}, {"p": "array", "q": "array"},
                        {"p": "array", "q": "array"})], m
    value, g = same_tree_in_both(lambda m: program(m, []))
    assert_array(value["q"], [1.5, 0, 3])
    assert_array(g["a"], [1.5 + 2, 0.3 + 2, -0.7 + 2])
    assert_array(g["b"], [0.5, -1, 2])


def test_keyword_arguments_are_passed_to_the_vjp_rule():
    def program(m, log):
        @m.custom_function
        def f(x, scale=1.0):
            return x * scale

        @f.vjp
        def f_vjp(primals, cotangent, output, scale=1.0):
            log.append((_describe(primals), scale))
            return cotangent * scale * 1000.0

        return m.grad(lambda x: f(x, scale=3.0).sum())(X(m))

    for m in LIBS:
        log = []
        assert program(m, log).tolist() == [3000, 3000, 3000]
        assert log == [("array", 3.0)], m
    same_tree_in_both(lambda m: program(m, []))


def test_non_array_positional_arguments_get_none_cotangents():
    def program(m):
        @m.custom_function
        def f(x, n):
            return x * n

        @f.vjp
        def f_vjp(primals, cotangent, output):
            x, n = primals
            assert n == 3
            return cotangent * n, None

        return m.grad(lambda x: f(x, 3).sum())(X(m))

    assert_array(same_tree_in_both(program), [3, 3, 3])


# --- messages -----------------------------------------------------------------------------


def _vmap_rule_returns(m, result):
    @m.custom_function
    def f(x):
        return m.exp(x)

    @f.vmap
    def f_vmap(inputs, axes):
        return result(m, inputs, axes)

    return m.vmap(f)(BATCH(m))


@pytest.mark.parametrize(
    "result",
    [
        lambda m, i, a: m.exp(i),
        lambda m, i, a: (m.exp(i),),
        lambda m, i, a: (m.exp(i), a, a),
    ],
)
def test_vmap_rule_must_return_a_pair(result):
    for m in LIBS:
        with pytest.raises(ValueError) as info:
            _vmap_rule_returns(m, result)
        assert str(info.value) == "[custom vmap] Vmap function should return a tuple with 2 items."


def test_custom_jvp_refuses_keyword_arguments():
    def program(m):
        @m.custom_function
        def f(x, scale=1.0):
            return x * scale

        @f.jvp
        def f_jvp(primals, tangents):
            return tangents

        return m.jvp(lambda x: f(x, scale=3.0), [X(m)], [m.ones(3)])

    for m in LIBS:
        with pytest.raises(ValueError) as info:
            program(m)
        assert str(info.value) == "[custom jvp] Function should only accept positional arguments"


def test_custom_function_with_a_rule_must_return_arrays():
    def program(m):
        f = m.custom_function(lambda x: (x * 2.0, 3))
        f.vjp(lambda p, c, o: c[0])
        return f(X(m))

    for m in LIBS:
        with pytest.raises(ValueError) as info:
            program(m)
        assert str(info.value) == "[tree_flatten] The argument should contain only arrays"


# --- a rule returning the wrong results: MLX answers wrongly, mlxref raises ---------------


def too_few_results(m):
    @m.custom_function
    def f(x, y):
        return x * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return (cotangent * 3.0,)  # one result for two arguments

    return f


def wrong_shape_result(m):
    @m.custom_function
    def f(x, y):
        return x * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return cotangent.sum(), cotangent  # shape () for an argument of shape (3,)

    return f


@needs_mlx
def test_mlx_silently_returns_a_wrong_gradient_for_too_few_results():
    bad = too_few_results(real_mx)
    loss = lambda x, y: bad(x, y).sum()  # noqa: E731
    # argnums=1 picks the appended cotangent (ones) instead of raising.
    g = real_mx.grad(loss, argnums=1)(X(real_mx), Y(real_mx))
    assert g.tolist() == [1, 1, 1]
    # And a wrong shape goes through too: the "gradient" of a (3,) input is a scalar.
    g = real_mx.grad(lambda x, y: wrong_shape_result(real_mx)(x, y).sum())(X(real_mx), Y(real_mx))
    assert g.shape == ()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_mlxref_raises_for_too_few_results(argnums):
    bad = too_few_results(mx)
    with pytest.raises(ValueError, match=re.escape("returned 1 value(s) but there are 2")):
        mx.grad(lambda x, y: bad(x, y).sum(), argnums=argnums)(X(mx), Y(mx))


def test_mlxref_raises_for_a_result_of_the_wrong_shape():
    bad = wrong_shape_result(mx)
    message = "returned shape () for an argument of shape (3)"
    with pytest.raises(ValueError, match=re.escape(message)):
        mx.grad(lambda x, y: bad(x, y).sum())(X(mx), Y(mx))


def test_mlxref_raises_for_a_jvp_rule_returning_too_many_results():
    @mx.custom_function
    def f(x):
        return x * 2.0

    @f.jvp
    def f_jvp(primals, tangent):
        return tangent, tangent

    with pytest.raises(ValueError, match=re.escape("[custom jvp]")):
        mx.jvp(f, [X(mx)], [mx.ones(3)])


def test_mlxref_raises_for_a_vmap_rule_returning_too_many_outputs():
    @mx.custom_function
    def f(x):
        return x * 2.0

    @f.vmap
    def f_vmap(inputs, axes):
        return (inputs, inputs), (axes, axes)

    with pytest.raises(ValueError, match=re.escape("[custom vmap]")):
        mx.vmap(f)(BATCH(mx))


def test_custom_vmap_rule_with_an_unbatched_output_used_downstream():
    @mx.custom_function
    def f(x, w):
        return x * w, w * 2.0

    @f.vmap
    def f_vmap(inputs, axes):
        x, w = inputs
        return (x * w, w * 2.0), (axes[0], None)

    out = mx.vmap(lambda x, w: f(x, w)[1] + 1.0, in_axes=(0, None))(BATCH(mx), Y(mx))
    assert_array(out, [[4.0, 1.6, -0.4]] * 2)
