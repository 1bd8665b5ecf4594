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
# (programs of test_hidden_2.py go here)


# --- task 3.x: tests/course/hidden/test_hidden_3.py ----------------------------------

import mlxref.core as mx  # noqa: E402 (each section imports what it uses)
from mlxref.symbolic import Case, check_case  # noqa: E402


def primitive_jvp(primitive, primals, tangents, argnums, params=()):
    """``primitive(*params).jvp(primals, tangents, argnums)``: a jvp rule on its own."""
    return primitive(*params).jvp(primals, tangents, argnums)


def symbolic_check(primitive, build, shapes, mode, domain="real", note=""):
    """The SymPy check (mlxref.symbolic) of ``build`` on inputs of ``shapes``,
    which uses ``primitive``: whether it passes in ``mode`` ("vjp", "jvp"...),
    and what differs when it fails."""
    result = check_case(Case(primitive, build, shapes, domain, note=note))
    ok = getattr(result, mode)
    return ok, "" if ok else result.detail


def exp_tanh_ratio(a, b):
    """exp(a) tanh(b) / (b^2 + 1): a function for ``check_grads`` in forward mode."""
    return mx.exp(a) * mx.tanh(b) / (b * b + 1)


def prod_over_axis_1(x):
    """The product over axis 1: a program for the SymPy check of Reduce."""
    return mx.prod(x, axis=1)


def sum_over_axes_0_2_kept(x):
    """The sum over axes 0 and 2, kept: a program for the SymPy check of Reduce."""
    return mx.sum(x, axis=(0, 2), keepdims=True)


def prod_times_min(x):
    """prod(x, axis=0) * min(x, axis=0): a function for ``check_grads``."""
    return mx.prod(x, axis=0) * mx.min(x, axis=0)


# --- task 4.x: tests/course/hidden/test_hidden_4.py ----------------------------------

from mlxref.core.primitives.shape import Broadcast  # noqa: E402
from mlxref.core.transforms import events  # noqa: E402


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
    """(a + b) - (a - b) * b: a function for ``check_grads``."""
    return (a + b) - (a - b) * b


def broadcast_vjp(target, x, cotangent):
    """``Broadcast(target).vjp`` of ``x`` broadcast to ``target``: unbroadcasting
    ``cotangent``."""
    return Broadcast(target).vjp([x], [cotangent], [0], [mx.broadcast_to(x, target)])


def broadcast_times_arange(x):
    """broadcast_to(x, (2, 3, 2)) * arange(12).reshape(2, 3, 2): a function for
    ``check_grads``."""
    return mx.broadcast_to(x, (2, 3, 2)) * mx.arange(12.0).reshape(2, 3, 2)


# --- task 5.x: tests/course/hidden/test_hidden_5.py ----------------------------------
# (programs of test_hidden_5.py go here)


# --- task 6.x: tests/course/hidden/test_hidden_6.py ----------------------------------
# (programs of test_hidden_6.py go here)
