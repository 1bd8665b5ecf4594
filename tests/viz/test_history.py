"""Drawing after the fact (issue 16): recording, tracing without leftovers,
tree arguments and models. Each test reproduces one reported defect.

Expected node counts are not typed in: each is the count of the same
computation drawn from arrays that were never evaluated (the lazy graph the
drawing should show), or of a model whose weights are fresh evaluated leaves.
"""

import warnings

import pytest

import mlxref.core as mx
import mlxref.nn as nn
from mlxref import viz
from mlxref.utils import tree_flatten


def seed_fn(x):
    return mx.sin(x) * mx.exp(x)


def ops(drawing):
    return sorted(n.op for n in drawing.graph.nodes if n.kind == "op")


def test_draw_after_print_inside_recording_draws_the_graph(capsys):
    lazy = viz.draw(seed_fn(mx.array(0.5)))  # what drawing before evaluating shows
    with viz.recording():
        y = seed_fn(mx.array(0.5))
        print(y)
        mx.eval(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: there is a graph to draw
        d = viz.draw(y)
    assert len(d.graph.nodes) == len(lazy.graph.nodes) > 1
    assert ops(d) == ops(lazy)
    assert y.item() == pytest.approx(0.7904390)


def test_outside_recording_an_evaluated_result_warns_in_one_line():
    y = seed_fn(mx.array(0.5))
    print(y)
    with pytest.warns(viz.DrawingWarning, match=r"viz\.recording\(\)") as caught:
        d = viz.draw(y)
    assert len(d.graph.nodes) == 1
    assert "\n" not in str(caught[0].message)
    with warnings.catch_warnings():  # a literal was never computed: nothing to say
        warnings.simplefilter("error")
        viz.draw(mx.array(0.5))


def test_recording_is_mlx_outside_the_block():
    with viz.recording():
        inside = mx.exp(mx.array(1.0))
        mx.eval(inside)
    outside = mx.exp(mx.array(1.0))
    mx.eval(outside)
    assert inside.has_primitive() and len(inside.inputs()) == 1
    assert not outside.has_primitive() and outside.inputs() == ()
    assert outside.is_detached() and not inside.is_detached()
    assert not mx.array(1.0).is_detached()  # a literal was never computed


def test_trace_leaves_no_history_behind():
    def later(w):
        return mx.sum(w * 2)

    mx.random.seed(3)
    fresh = mx.random.uniform(shape=(3,))
    mx.eval(fresh)  # as mx.eval leaves it: a leaf
    expected = len(viz.draw(later(fresh)).graph.nodes)

    mx.random.seed(3)
    w = mx.random.uniform(shape=(3,))  # lazy: the trace evaluates it
    viz.trace(lambda w: mx.sum(w * w), [w], transform="grad")
    assert not w.has_primitive()
    assert len(viz.draw(later(w)).graph.nodes) == expected
    # A lazy array the traced function captured is left as mx.eval leaves it too.
    c = mx.exp(mx.array(1.0))
    viz.trace(lambda x: x * c, [mx.array(2.0)])
    assert c.is_available() and not c.has_primitive()


def test_trace_inside_recording_keeps_the_history():
    with viz.recording():
        w = mx.exp(mx.array(1.0))
        viz.trace(lambda w: w * w, [w])
    assert w.is_available() and w.has_primitive()


def test_trace_runs_the_function_so_that_printing_cuts_nothing(capsys):
    def noisy(x):
        y = mx.sin(x)
        print(y)
        return y * 2

    d = viz.trace(noisy, [mx.array(0.5)])
    assert [n.name for n in d.graph.nodes] == ["x", "sin_1", "const_2", "mul_3"]


def test_trace_takes_trees_as_the_transforms_do():
    mlx = pytest.importorskip("mlx.core")

    def f(params, pair):
        return mx.sum(params["w"] * pair[0] + params["b"][0] * pair[1])

    def g(params, pair):  # the same function for MLX
        return mlx.sum(params["w"] * pair[0] + params["b"][0] * pair[1])

    values = ({"w": [1.0, 2.0], "b": [3.0]}, ([4.0, 5.0], [6.0, 7.0]))

    def make(module, v):
        return ({"w": module.array(v[0]["w"]), "b": (module.array(v[0]["b"][0]),)},
                [module.array(v[1][0]), module.array(v[1][1])])

    d = viz.trace(f, list(make(mx, values)), transform="grad")
    text = d.to_text()
    expected = mlx.grad(g)(*make(mlx, values))
    for path, grad in tree_flatten(expected, prefix=".params"):
        inputs = [n for n in d.graph.nodes if n.name == path]
        assert len(inputs) == 1 and inputs[0].kind == "input"
        v = grad.tolist()
        shown = "%.5g" % v if not grad.shape else "[" + ", ".join("%.5g" % e for e in v) + "]"
        assert f"gradient {path}: {shown}\n" in text
    names = [n.name for n in d.graph.nodes if n.kind == "input"]
    assert names[:4] == ["params.w", "params.b.0", "pair.0", "pair.1"]

    # vmap: in_axes per argument, a tree prefix of it, as mx.vmap takes them.
    v = viz.trace(f, list(make(mx, values)), transform="vmap", in_axes=({"w": 0, "b": None}, 0))
    batched = mlx.vmap(g, in_axes=({"w": 0, "b": None}, 0))(*make(mlx, values))
    assert f"{batched.tolist()}".replace(".0", "") in v.to_text().replace(".0", "")
    with pytest.raises(ValueError, match="not a valid prefix"):
        viz.trace(f, list(make(mx, values)), transform="vmap", in_axes=(0,))


def model_and_input():
    mx.random.seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)), mx.ones((4, 2))


def fresh_leaf_count():
    """The forward drawn with every weight an evaluated leaf: what params= should give."""
    model, x = model_and_input()
    mx.eval(model.parameters(), x)
    return len(viz.draw(mx.sum(model(x) ** 2)).graph.nodes)


def test_draw_a_model_with_params_names_weights_by_path():
    expected = fresh_leaf_count()
    model, x = model_and_input()
    x = mx.ones((4, 2))
    mx.eval(x)
    loss = mx.sum(model(x) ** 2)
    assert len(viz.draw(loss).graph.nodes) > expected  # the defect: the initialisation drawn
    d = viz.draw(loss, params=model.parameters())
    assert len(d.graph.nodes) == expected
    paths = [p for p, _ in tree_flatten(model.parameters())]
    inputs = [n.name for n in d.graph.nodes if n.kind == "input"]
    assert inputs[: len(paths)] == paths == ["layers.0.weight", "layers.0.bias",
                                              "layers.2.weight", "layers.2.bias"]
    assert viz.draw(loss, params=model).to_text() == d.to_text()


def test_trace_a_model_argument():
    expected = fresh_leaf_count()
    model, x = model_and_input()

    def loss(model, x):
        return mx.sum(model(x) ** 2)

    d = viz.trace(loss, [model, x], transform="grad")
    forward = [n for n in d.graph.nodes if n.part == "forward"]
    assert len(forward) == expected
    grads = nn.value_and_grad(model, lambda x: mx.sum(model(x) ** 2))(x)[1]
    for path, g in tree_flatten(grads):
        assert f"gradient model.{path}: " in d.to_text()
        node = next(n for n in d.graph.nodes if n.gradient_of and n.gradient_of.name == f"model.{path}")
        assert node.array.tolist() == g.tolist()
    # The model keeps its own arrays, evaluated and without history.
    model2, _ = model_and_input()
    params = tree_flatten(model.parameters())
    for (_, a), (_, b) in zip(params, tree_flatten(model2.parameters())):
        assert not a.has_primitive() and a.tolist() == b.tolist()
