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
# (programs of test_hidden_5.py go here)


# --- task 6.x: tests/course/hidden/test_hidden_6.py ----------------------------------
# (programs of test_hidden_6.py go here)
