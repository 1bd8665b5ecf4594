"""Each elementwise rule builds MLX's graph, node for node.

The same derivative can be written in forms that round differently: tan's
``t / cos(x)²`` is not ``t * (1 / cos(x)²)`` in float32, and tanh's ``1 -
tanh(x)²`` is 0 at x = 10 where MLX's ``1 / cosh(x)²`` is 8e-9. So the vjp
and the jvp of every elementwise op (and of a binary op, the jvp of each input
alone) are traced by ``export_function`` in both libraries, with the
cotangent or tangents as inputs, and each output is
written as an expression of the inputs (``Divide(in1, Square(Cos(in0)))``);
mlxref's must be MLX 0.32.4's. Constants read ``const``; the operands of
Multiply and Add are sorted (the order does not change a bit).

A few rules still differ (``DIFFERENT``): those the course asks students to
write as "the cotangent times the derivative" (tanh's from its output,
divide's, and reciprocal, which is a divide in both), those the course's
tests of that task take as their examples (arctan, sqrt, log, square: a
rule in MLX's form would pass them with the task left undone), and
remainder's, another graph with the same bits. The test checks that they
still differ, so the list stays true.
"""

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx

pytestmark = needs_mlx

UNARY = ("abs arccos arccosh arcsin arcsinh arctan arctanh ceil cos cosh degrees erf erfinv "
         "exp expm1 floor log log10 log1p log2 negative radians reciprocal round rsqrt "
         "sigmoid sign sin sinh sqrt square tan tanh").split()
BINARY = "add subtract multiply divide power maximum minimum logaddexp arctan2 remainder".split()

DIFFERENT = {
    # course tasks 2.3 and 2.4: the cotangent times the derivative
    "tanh": "1 - tanh(x)², from the output (MLX: t / cosh(x)²)",
    "divide": "u (1 / b) and u (-(a / b) / b) (MLX: u / b and -(u a) / b²)",
    "reciprocal": "a divide in both (see divide)",
    # the course's examples of tasks 2.1 and 3.1 (the base class's rule)
    "arctan": "u (1 / (1 + x²)) (MLX: u / (1 + x²))",
    "sqrt": "u (0.5 / out) (MLX: (0.5 u) / out)",
    "log": "u (1 / (x ln b)) (MLX: u / x, times 1 / ln b as a float32)",
    "log2": "the class of log (see log)",
    "log10": "the class of log (see log)",
    "square": "u (2 x) (MLX: x (2 u))",
    # the same bits, another graph
    "remainder": "u times 1 for a, u times -floor(a / b) for b (MLX: u, and -(floor(a / b) u))",
}

_COMMUTATIVE = {"Multiply", "Add"}


def expressions(records):
    """The outputs of an exported trace (``export_function``'s callback
    records) as expressions of its inputs."""
    made = {}
    (inputs,) = [r["inputs"] for r in records if r["type"] == "inputs"]
    (outputs,) = [r["outputs"] for r in records if r["type"] == "outputs"]
    for k, (name, *_) in enumerate(inputs):
        made[name] = f"in{k}"
    for r in records:
        if r["type"] != "primitive":
            continue
        name, args = r["name"], list(r["arguments"])
        kids = [made.get(x[0], "const") for x in r["inputs"]]
        if name in _COMMUTATIVE:
            kids.sort()
        if name in ("Broadcast", "Full") and kids == ["const"]:
            expression = "const"
        elif name == "Broadcast":
            expression = kids[0]
        else:
            expression = f"{name}{args if args else ''}({', '.join(kids)})"
        for x in r["outputs"]:
            made[x[0]] = expression
    return [made.get(x[0], "const") for x in outputs]


def rule_graph(m, op, kind):
    """The expressions of ``op``'s rule ``kind``: "vjp", "jvp" (a tangent per
    input), or for a binary op "jvp a" / "jvp b" (a tangent of one input)."""
    fn = getattr(m, op)
    n = 1 if op in UNARY else 2
    if kind == "vjp":
        def f(*xs):
            return m.vjp(fn, list(xs[:n]), [xs[n]])[1]
        count = n + 1
    elif kind == "jvp":
        def f(*xs):
            return m.jvp(fn, list(xs[:n]), list(xs[n:]))[1]
        count = 2 * n
    else:  # one input's tangent (argnums of one), the other input held
        def f(a, b, t):
            if kind == "jvp a":
                return m.jvp(lambda x: fn(x, b), [a], [t])[1]
            return m.jvp(lambda y: fn(a, y), [b], [t])[1]
        count = 3
    records = []
    m.export_function(records.append, f, *[m.array([0.3, 0.6]) for _ in range(count)])
    return expressions(records)


@pytest.mark.parametrize("op, kind", [(op, kind) for op in UNARY for kind in ("vjp", "jvp")]
                         + [(op, kind) for op in BINARY
                            for kind in ("vjp", "jvp", "jvp a", "jvp b")])
def test_the_rule_builds_mlxs_graph(op, kind):
    ours, theirs = rule_graph(mx, op, kind), rule_graph(real_mx, op, kind)
    if op in DIFFERENT:
        assert ours != theirs, f"{op}'s {kind} is MLX's now: take it out of DIFFERENT"
    else:
        assert ours == theirs


def test_the_expressions_tell_forms_apart():
    # The comparison itself: two forms of one derivative read differently.
    def records(m, f):
        got = []
        m.export_function(got.append, f, m.array([0.3]), m.array([2.0]))
        return expressions(got)

    divided = records(mx, lambda x, t: mx.divide(t, mx.square(mx.cos(x))))
    multiplied = records(mx, lambda x, t: mx.multiply(t, mx.reciprocal(mx.square(mx.cos(x)))))
    assert divided == ["Divide(in1, Square(Cos(in0)))"]
    assert divided != multiplied
    assert records(mx, lambda x, t: t * x) == records(mx, lambda x, t: x * t)

