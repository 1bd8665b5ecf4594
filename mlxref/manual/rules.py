"""A primitive's rules as formulas: its check case run on SymPy symbols, as MathML.

The formulas come out of the code that runs, the way ``mlxref check-rules``
gets them (``mlxref.symbolic``): the first case of the primitive fills its
inputs with symbols (``a0, a1, ...`` for the first input, ``b0...`` for the
second), runs the case's program, then ``mx.vjp`` with cotangent symbols
``u0, u1...`` and ``mx.jvp`` with tangent symbols ``ta0, ta1...``, and
``mx.vmap`` over a batch of two examples (symbols ``v0a0...`` and
``v1a0...``, every input batched on axis 0). The results are the element
lists the engine computed, printed by ``sympy.printing.mathml`` in
presentation markup: browsers draw it with no script, font or network.

A case of an iterative algorithm ("high-precision points": a factorization)
cannot run on symbols; its page says so and shows no formulas.

Read next: ``links.py`` (where the rules' code is).
"""

import html
import math

import sympy
from sympy.printing.mathml import mathml

from .. import core as mx
from .. import symbolic

SHOWN = 6  # elements shown of a longer list
LONGEST = 600  # characters of an expression's text beyond which it is not typeset


def cases_by_primitive():
    out = {}
    for case in symbolic.all_cases():
        out.setdefault(case.primitive, []).append(case)
    return out


def formulas(case):
    """{"inputs", "forward", "vjp", "jvp", "vmap"} for a case, each a list of
    (label, shape, elements); ``None`` for a "high-precision points" case.
    A rule MLX does not have is (label, None, message)."""
    if case.points:
        return None
    dtype = symbolic._input_dtype(case.domain)
    xs, parts = symbolic._inputs("", case.shapes, case.domain)
    inputs = [symbolic._sym_array(s, shape, dtype) for s, shape in zip(xs, case.shapes)]
    names = "abcdefgh"
    out = case.build(*inputs)
    result = {
        "inputs": [(names[k], shape, xs[k]) for k, shape in enumerate(case.shapes)],
        "forward": [("f", out.shape, _elements(out))],
    }
    complex_out = out.dtype is mx.complex64
    (cot,) = symbolic._symbols("u", [out.shape], {"real": True})
    if complex_out:
        (w,) = symbolic._symbols("w", [out.shape], {"real": True})
        cot = [u + sympy.I * v for u, v in zip(cot, w)]
    cotangent = symbolic._sym_array(cot, out.shape, out.dtype if complex_out else None)
    tangents = [symbolic._sym_array([sympy.Symbol(f"t{x}", real=True) for x in group]
                                    if dtype is not mx.complex64 else
                                    [sympy.Symbol(f"t{x}") for x in group], shape, dtype)
                for group, shape in zip(xs, case.shapes)]
    result["vjp"] = _rule(lambda: mx.vjp(case.build, inputs, [cotangent])[1],
                          [f"vjp {names[k]}" for k in range(len(inputs))])
    result["jvp"] = _rule(lambda: mx.jvp(case.build, inputs, tangents)[1], ["jvp f"])
    result["vmap"] = _vmap(case, dtype)
    return result


def _rule(run, labels):
    try:
        arrays = run()
    except ValueError as e:  # MLX has no such rule: its message
        return [(labels[0], None, str(e))]
    return [(label, a.shape, _elements(a)) for label, a in zip(labels, arrays)]


def _vmap(case, dtype):
    examples = [[symbolic._sym_array(s, shape, dtype) for s, shape in
                 zip(symbolic._inputs(f"v{b}", case.shapes, case.domain)[0], case.shapes)]
                for b in range(2)]
    batched = [mx.stack([examples[0][j], examples[1][j]]) for j in range(len(case.shapes))]
    try:
        out = mx.vmap(case.build)(*batched)
    except ValueError as e:
        return [("vmap f", None, str(e))]
    return [("vmap f", out.shape, _elements(out))]


def _elements(a):
    """The elements the engine computed, as they are (check-rules' ``_elements``
    also makes float constants exact, which is slow and changes nothing shown)."""
    mx.eval(a)
    return [sympy.sympify(symbolic._number(v)) for v in a.data()]


# --- MathML ------------------------------------------------------------------------------


def math_block(label, shape, elements):
    """``label = [e0, e1, ...]`` as one ``<math display="block">`` element."""
    if shape is None:  # no rule: MLX's message
        return f'<p class="no-rule"><code>{html.escape(elements)}</code></p>'
    shown = [_mathml(e) for e in elements[:SHOWN]]
    body = "<mo>,</mo>".join(shown)
    if len(elements) > SHOWN:
        body += f"<mo>,</mo><mi>…</mi><mtext>&#160;({len(elements)} elements)</mtext>"
    if shape != ():
        body = f"<mo>[</mo>{body}<mo>]</mo>"
    shape_text = f"<mtext>&#160;&#160;shape {html.escape(str(tuple(shape)))}</mtext>"
    return (f'<math display="block"><mrow><mi>{html.escape(label)}</mi><mo>=</mo>'
            f"{body}{shape_text}</mrow></math>")


def _mathml(expr):
    expr = sympy.sympify(expr)
    text = str(expr)
    if len(text) > LONGEST:
        ops = sympy.count_ops(expr)
        return f"<mtext>(an expression of {ops} operations)</mtext>"
    if isinstance(expr, sympy.Float) and not math.isfinite(float(expr)):
        return f"<mi>{'-' if float(expr) < 0 else ''}∞</mi>"
    return mathml(expr, printer="presentation")
