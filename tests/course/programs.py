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
# (programs of test_hidden_3.py go here)


# --- task 4.x: tests/course/hidden/test_hidden_4.py ----------------------------------
# (programs of test_hidden_4.py go here)


# --- task 5.x: tests/course/hidden/test_hidden_5.py ----------------------------------
# (programs of test_hidden_5.py go here)


# --- task 6.x: tests/course/hidden/test_hidden_6.py ----------------------------------
# (programs of test_hidden_6.py go here)
