"""The programs the hidden tests run on a submission (mlxref/course/judge.py).

A hidden test reaches the graded code only through ``judge.run(program,
*inputs)``. Where that is one call of mlxref (``mx.cumsum``,
``Sigmoid.numeric``), the test names it; where it needs a few lines (a
function to differentiate, a primitive built from its arguments), they are
here, as functions of data. The grader runs these in the sandbox on the
inputs the hidden tests drew; the tests, their inputs and their expected
values stay with the judge. So this file is no secret: it ships in student
copies, and says only which code the hidden tests call.
"""

from mlxref.core.primitives.reduction import Scan


def scan_order(row, reverse, inclusive):
    """``Scan._scan`` of ``row`` with a combining function that shows its work:
    ``(a+b)`` for each combination, so the order of the combinations is the
    result."""
    return Scan(0, reverse, inclusive)._scan(row, "0", lambda total, v: f"({total}+{v})")


# --- tasks 2.x: tests/course/hidden/test_hidden_2.py ---------------------------------

import mlxref.core as mx  # noqa: E402 (each section imports what it uses)


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


def symbolic_check(primitive, build, shapes, mode, domain="real", note=""):
    """Whether mlxref.symbolic's check of ``Case(primitive, build, shapes,
    domain, note=note)`` passes in ``mode`` ("forward", "vjp", "jvp" or
    "vmap"), with its detail when it does not: ``[passed, detail]``."""
    from mlxref.symbolic import Case, check_case  # SymPy: only for the calls that need it

    result = check_case(Case(primitive, build, shapes, domain, note=note))
    passed = bool(getattr(result, mode))
    return [passed, "" if passed else result.detail]


# The functions the hidden tests of tasks 2.x differentiate (symbolic_check, check_grads)


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
# (programs of test_hidden_3.py go here)


# --- task 4.x: tests/course/hidden/test_hidden_4.py ----------------------------------
# (programs of test_hidden_4.py go here)


# --- task 5.x: tests/course/hidden/test_hidden_5.py ----------------------------------

import mlxref.core as mx  # noqa: E402 (each section imports what it uses)
from mlxref.core.primitives.base import vmap_elementwise  # noqa: E402


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

from mlxref.core.primitives.custom import Depends  # noqa: E402
from mlxref.core.transforms.custom_function import custom_transforms  # noqa: E402


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


def _graph(graph, xs):
    """The outputs of ``graph`` on ``xs``: ``graph`` is (number of inputs, steps,
    outputs), a step (op, i, j) adds a value (op add, subtract or negative of
    earlier values i and j), outputs are the sorted indices of the values
    returned."""
    n, steps, outputs = graph
    pool = list(xs)
    for op, i, j in steps:
        pool.append(mx.add(pool[i], pool[j]) if op == "add" else
                    mx.subtract(pool[i], pool[j]) if op == "subtract" else mx.negative(pool[i]))
    return [value for k, value in enumerate(pool) if k in outputs]


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
        return _graph(graph, xs)

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
