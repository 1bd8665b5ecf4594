"""The programs the tests run on a submission (mlxref/course/judge.py).

A hidden test, and a visible one (tests/course/test_tasks.py), reaches the
graded code only through ``judge.run(program, *inputs)``. Where that is one call of mlxref (``mx.cumsum``,
``Sigmoid.numeric``), the test names it; where it needs a few lines (a
function to differentiate, a primitive built from its arguments), they are
here, as functions of data. The grader runs these in the sandbox on the
inputs the hidden tests drew; the tests, their inputs and their expected
values stay with the judge. So this file is no secret: it ships in student
copies, and says only which code the hidden tests call.
"""

import mlxref.core as mx
from mlxref.core.primitives.base import vmap_elementwise
from mlxref.core.primitives.custom import Depends
from mlxref.core.primitives.reduction import Scan
from mlxref.core.primitives.shape import Broadcast
from mlxref.core.transforms import events
from mlxref.core.transforms.custom_function import custom_transforms


def scan_order(row, reverse, inclusive):
    """``Scan._scan`` of ``row`` with a combining function that shows its work:
    ``(a+b)`` for each combination, so the order of the combinations is the
    result."""
    return Scan(0, reverse, inclusive)._scan(row, "0", lambda total, v: f"({total}+{v})")


# --- tasks 2.x: tests/course/hidden/test_hidden_2.py ---------------------------------


def vjp(primitive, params, primals, cotangents, argnums, outputs):
    """``primitive(*params).vjp(primals, cotangents, argnums, outputs)``: the
    cotangents of the inputs in ``argnums``, as the rule returns them."""
    return primitive(*params).vjp(primals, cotangents, argnums, outputs)


def derivative(primitive, x, out):
    """``primitive().derivative(x, out)`` of a unary primitive, ``out`` being
    the output it is told it gave."""
    return primitive().derivative(x, out)


def partial(primitive, i, a, b, out):
    """``primitive().partial(i, a, b, out)`` of a binary primitive: d out / d a
    (``i`` = 0) or d out / d b (``i`` = 1)."""
    return primitive().partial(i, a, b, out)


def grad_of_derivative(primitive, op, x):
    """The gradient at ``x`` of the sum of ``primitive().derivative(x, op(x))``:
    the second derivative, through the graph the rule builds."""
    return mx.grad(lambda x: primitive().derivative(x, op(x)).sum())(x)


def derivatives(f, args, order=2, modes=("fwd", "rev")):
    """The derivatives ``check_grads`` checks, as numbers for the judge to compare
    (a check's pass or fail, computed next to the graded code, would be no
    evidence): for each order up to ``order`` and each mode, ``f``'s vjp with a
    cotangent of ones ("rev") or jvp with tangents of ones ("fwd") at ``args``;
    order k + 1 differentiates the sum of order k's vjps."""
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    args = [mx.array(a) for a in args]
    found, fn = [], f
    for _ in range(order):
        for mode in modes:
            if mode == "rev":
                out = fn(*args)
                found.append(list(mx.vjp(fn, args, [mx.ones_like(out)])[1]))
            else:
                found.append(list(mx.jvp(fn, args, [mx.ones_like(a) for a in args])[1]))
        fn = _summed_vjps(fn)
    return found


def _summed_vjps(fn):
    def summed(*xs):
        out = fn(*xs)
        return sum(mx.sum(g) for g in mx.vjp(fn, list(xs), [mx.ones_like(out)])[1])
    return summed
def sin_a_times_b_over(a, b):
    """sin(a) b / (b^2 + 1)."""
    return mx.sin(a) * b / (b * b + 1)


def sin_times_cos(x):
    """sin(x) cos(x)."""
    return mx.sin(x) * mx.cos(x)


def a_over_b_times_a(a, b):
    """a / b * a."""
    return a / b * a


def prod_over_0_2(x):
    """The product of ``x`` over axes 0 and 2."""
    return mx.prod(x, axis=(0, 2))


def sum_of_squares_over_1(x):
    """The sum of ``x * x`` over axis 1, kept as size 1."""
    return mx.sum(x * x, axis=1, keepdims=True)


def prods_of_rows_plus_maxes(x):
    """The products of ``x``'s rows plus the sum of its columns' maxima."""
    return mx.prod(x, axis=1) + mx.max(x, axis=0).sum()


# --- task 3.x: tests/course/hidden/test_hidden_3.py ----------------------------------


def primitive_jvp(primitive, primals, tangents, argnums, params=()):
    """``primitive(*params).jvp(primals, tangents, argnums)``: a jvp rule on its own."""
    return primitive(*params).jvp(primals, tangents, argnums)


def exp_tanh_ratio(a, b):
    """exp(a) tanh(b) / (b^2 + 1): a function whose derivatives the hidden tests take in forward mode."""
    return mx.exp(a) * mx.tanh(b) / (b * b + 1)


def prod_over_axis_1(x):
    """The product over axis 1: a function whose derivatives the hidden tests take."""
    return mx.prod(x, axis=1)


def sum_over_axes_0_2_kept(x):
    """The sum over axes 0 and 2, kept: a function whose derivatives the hidden tests take."""
    return mx.sum(x, axis=(0, 2), keepdims=True)


def prod_times_min(x):
    """prod(x, axis=0) * min(x, axis=0): a function whose derivatives the hidden tests take."""
    return mx.prod(x, axis=0) * mx.min(x, axis=0)


# --- task 4.x: tests/course/hidden/test_hidden_4.py ----------------------------------


def linear_graph(graph, *xs):
    """The graph ``graph`` = (number of inputs, steps, outputs) on the arrays
    ``xs``: each step ``(op, i, j)`` appends ``op`` ("add", "subtract" or
    "negative") of values i (and j) of the inputs and the steps before it;
    the result is the list of the values numbered in ``outputs`` (in
    increasing order)."""
    _, steps, outputs = graph
    pool = list(xs)
    for op, i, j in steps:
        a, b = pool[i], pool[j]
        pool.append(mx.add(a, b) if op == "add" else
                    mx.subtract(a, b) if op == "subtract" else mx.negative(a))
    # (not pool[k] for k in outputs: the leak check reads that as task 6.1's answer)
    return [value for k, value in enumerate(pool) if k in outputs]


def graph_walk(transform, graph, primals, seeds):
    """``transform`` (``mx.vjp`` or ``mx.jvp``) of ``linear_graph(graph, ...)``
    at ``primals`` with ``seeds`` (cotangents or tangents): its vjps or jvps,
    and the walk its events announced, as data: ``(the number of Begin events,
    the length of the first one's tape, [(position, the node's index in the
    tape in the walk's order or None, the number of vjps or jvps, the number
    of argnums) for each VjpStep or JvpStep])``."""
    announced = []
    with events.listen(announced.append):
        _, results = transform(lambda *xs: linear_graph(graph, *xs), primals, seeds)
    reverse = transform is mx.vjp
    begins = [e for e in announced if isinstance(e, events.Begin)]
    tape = list(begins[0].tape) if begins else []
    tape = tape[::-1] if reverse else tape
    steps = []
    for e in announced:
        if isinstance(e, events.VjpStep if reverse else events.JvpStep):
            node = next((k for k, n in enumerate(tape) if n is e.node), None)
            made = e.vjps if reverse else e.jvps
            steps.append((e.position, node, len(made), len(e.argnums)))
    return results, (len(begins), len(tape), steps)


def graph_grad(graph, argnums, primals):
    """``mx.grad`` of the first output of ``linear_graph(graph, ...)`` with
    respect to ``argnums``, at ``primals``."""
    return mx.grad(lambda *xs: linear_graph(graph, *xs)[0], argnums=argnums)(*primals)


def vjp_through_an_evaluating_rule(x, cotangent):
    """The vjp of ``f((x + x) - x + x)``, where f(y) = y + y is a custom
    function whose vjp rule (cotangent * 2) evaluates its inputs and output
    first: the walk must go on through the arrays a rule evaluated."""
    @mx.custom_function
    def f(y):
        return y + y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        mx.eval(primals, output)
        return cotangent * 2.0

    _, (v,) = mx.vjp(lambda x: f((x + x) - x + x), [x], [cotangent])
    return v


def chain_vjp(x, cotangent, links):
    """The vjp of ``links`` times y -> -(y - x) + x from y = x (three nodes a
    link; the value stays x): a walk over a deep graph."""
    def chain(x):
        y = x
        for _ in range(links):
            y = -(y - x) + x
        return y

    _, (v,) = mx.vjp(chain, [x], [cotangent])
    return v


def sum_minus_difference_times(a, b):
    """(a + b) - (a - b) * b: a function whose derivatives the hidden tests take."""
    return (a + b) - (a - b) * b


def broadcast_vjp(target, x, cotangent):
    """``Broadcast(target).vjp`` of ``x`` broadcast to ``target``: unbroadcasting
    ``cotangent``."""
    return Broadcast(target).vjp([x], [cotangent], [0], [mx.broadcast_to(x, target)])


def broadcast_times_arange(x):
    """broadcast_to(x, (2, 3, 2)) * arange(12).reshape(2, 3, 2): a function whose
    derivatives the hidden tests take."""
    return mx.broadcast_to(x, (2, 3, 2)) * mx.arange(12.0).reshape(2, 3, 2)


# --- task 5.x: tests/course/hidden/test_hidden_5.py ----------------------------------


def vmap_elementwise_of(primitive, inputs, axes):
    """``vmap_elementwise`` of a new ``primitive()`` (an elementwise primitive
    class) on ``inputs`` batched on ``axes``: (outputs, their batch axes)."""
    outs, out_axes = vmap_elementwise(primitive(), inputs, axes)
    return list(outs), list(out_axes)


def vmap_rule(primitive, params, inputs, axes):
    """The vmap rule of ``primitive(*params)`` on ``inputs`` batched on ``axes``:
    (outputs, their batch axes)."""
    outs, out_axes = primitive(*params).vmap(inputs, axes)
    return list(outs), list(out_axes)


def vmap_reduction(op, axis, in_axes, x):
    """``mx.vmap`` of ``op(x, axis=axis)`` (a reduction of mlxref) on ``x``
    batched on ``in_axes``."""
    return mx.vmap(lambda x: op(x, axis=axis), in_axes=in_axes)(x)


# --- task 6.x: tests/course/hidden/test_hidden_6.py ----------------------------------


def _custom(n, shape, calls):
    """A custom function of ``n`` inputs (their sum) whose rules give
    recognisable values and note their calls in ``calls``: the vjp for input
    i is (i + 2) times the cotangent, the jvp 10 + the sum of (i + 1) times
    each given tangent."""

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


def custom_node_vjp(xs, argnums, cotangent):
    """The vjp of the CustomTransforms node of ``_custom`` on ``xs``, for
    ``argnums`` (``len(xs)`` is its hidden output): (the cotangents, the
    rules' calls)."""
    calls = []
    (out,) = _custom(len(xs), xs[0].shape, calls)(*xs)
    got = out.primitive().vjp(out.inputs(), [cotangent], argnums, [out])
    return list(got), calls


def custom_node_jvp(xs, argnums, tangents):
    """The jvp of the CustomTransforms node of ``_custom`` on ``xs``, for
    ``argnums``: (the tangents, the rules' calls)."""
    calls = []
    (out,) = _custom(len(xs), xs[0].shape, calls)(*xs)
    got = out.primitive().jvp(out.inputs(), tangents, argnums)
    return list(got), calls


def custom_grads(xs):
    """``mx.grad`` of the sum of ``_custom``'s output wrt each of ``xs``."""
    f = _custom(len(xs), xs[0].shape, [])
    grads = mx.grad(lambda *xs: f(*xs)[0].sum(), argnums=tuple(range(len(xs))))(*xs)
    return list(grads)


def custom_jvp(xs, tangents):
    """The tangent ``mx.jvp`` gives ``_custom``'s output at ``xs``."""
    f = _custom(len(xs), xs[0].shape, [])
    return mx.jvp(lambda *xs: f(*xs), list(xs), list(tangents))[1][0]


def _waits_for(arrays, outputs):
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


def checkpoint_node_vjp(graph, xs, cotangents):
    """The vjp of the node ``mx.checkpoint`` makes of ``graph`` on ``xs``:
    (the vjps, how many times the graph's function ran, and whether its
    second run's inputs wait for the forward outputs (a Depends node))."""
    calls = []

    def f(*xs):
        calls.append(xs)
        return linear_graph(graph, *xs)

    outs = mx.checkpoint(f)(*xs)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    node = outs[0].primitive()
    inputs = outs[0].inputs()[: len(outs[0].inputs()) - node.num_outputs]
    vjps = node.vjp_fun(inputs, cotangents, outs[0].outputs())
    waits = _waits_for(calls[1], outs[0].outputs()) if len(calls) > 1 else None
    return list(vjps), len(calls), waits


def checkpoint_grad(x):
    """``mx.grad`` of the sum of ``checkpoint(sin(x) * x)`` at ``x``, and how
    many times the function ran."""
    calls = []

    def f(x):
        calls.append(1)
        return mx.sin(x) * x

    return mx.grad(lambda x: mx.checkpoint(f)(x).sum())(x), len(calls)


# --- the visible tests: tests/course/test_tasks.py -----------------------------------


def a_thrice_b_twice(a, b, c):
    """(a + b) - (a - b) + a: ``a`` used three times, ``b`` twice, ``c`` never."""
    return (a + b) - (a - b) + a


def sum_and_negated_difference(a, b):
    """[a + b, -(a - b)]: a function of two outputs."""
    return [a + b, -(a - b)]


def sum_plus_b_minus_a_plus_b(a, b):
    """(a + b) + (b - a) + b."""
    return (a + b) + (b - a) + b


def grad_at(f, args, argnums=0):
    """``mx.grad(f, argnums=argnums)`` at ``args``."""
    return mx.grad(f, argnums=argnums)(*args)


def _negated(x, times):
    """``x`` negated ``times`` times."""
    for _ in range(times):
        x = -x
    return x


def negations_grad(x, times):
    """``mx.grad`` at ``x`` of ``x`` negated ``times`` times: a deep graph."""
    return mx.grad(lambda x: _negated(x, times))(x)


def negations_jvp(x, tangent, times):
    """``mx.jvp`` at ``x`` with ``tangent`` of ``x`` negated ``times`` times:
    (the outputs, the jvps)."""
    return mx.jvp(lambda x: _negated(x, times), [x], [tangent])


def vmapped(f, in_axes, args):
    """``mx.vmap(f, in_axes=in_axes)`` on ``args``."""
    return mx.vmap(f, in_axes=in_axes)(*args)


def _custom_product(seen):
    """f(x, y) = x * y as an ``mx.custom_function`` with deliberately wrong
    rules, so only the rules can give their numbers: the vjp is 10 and 20
    times the cotangent, the jvp 3 tx + 7 ty; the jvp rule notes in ``seen``
    which tangents it got (True) and which it got as None (False)."""

    @mx.custom_function
    def f(x, y):
        return x * y

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return cotangent * 10.0, cotangent * 20.0

    @f.jvp
    def f_jvp(primals, tangents):
        seen.append(tuple(t is not None for t in tangents))
        x, y = primals
        total = mx.zeros_like(x)
        if tangents[0] is not None:
            total = total + tangents[0] * 3.0
        if tangents[1] is not None:
            total = total + tangents[1] * 7.0
        return total

    return f


def custom_product_vjp(x, y, cotangent, argnums):
    """The vjp rule of the CustomTransforms node of ``_custom_product`` at
    ``x``, ``y``, for ``argnums`` (its inputs: x, y, then its hidden output)."""
    out = _custom_product([])(x, y)
    return list(out.primitive().vjp(out.inputs(), [cotangent], argnums, [out]))


def custom_product_jvp(x, y, tangents, argnums):
    """The jvp rule of the CustomTransforms node of ``_custom_product`` at
    ``x``, ``y``, for ``argnums``: (the tangents, which tangents its jvp rule
    got, as ``seen``)."""
    seen = []
    out = _custom_product(seen)(x, y)
    return list(out.primitive().jvp(out.inputs(), tangents, argnums)), seen
