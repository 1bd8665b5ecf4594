"""A primitive's rules as formulas: its check case run on SymPy symbols, as MathML.

The formulas come out of the code that runs, the way ``mlxref check-rules``
gets them (``mlxref.symbolic``): the first case of the primitive fills its
inputs with symbols (``a0, a1, ...`` for the first input, ``b0...`` for the
second), runs the case's program, then ``mx.vjp`` with cotangent symbols
``ua0, ua1...`` and ``mx.jvp`` with tangent symbols ``ta0, ta1...``, and
``mx.vmap`` over a batch of two examples (symbols ``v0a0...`` and
``v1a0...``, every input batched on axis 0). The results are the element
lists the engine computed, printed by ``sympy.printing.mathml`` in
presentation markup: browsers draw it with no script, font or network.
The symbols are printed under a reader's names (``shown_name``): u₀ for a
cotangent, da₀ for a tangent, a₀⁽¹⁾ for the second example of a batch.

A case of an iterative algorithm ("high-precision points": a factorization)
cannot run on symbols. For the manual's display only, ``named_outputs()``
replaces the forward of each factorization by one that names its outputs
with fresh symbols (``U00, s0, V00...``; ``NAMED`` says which): the vjp, jvp
and vmap rules that then run on them are the real ones, so the formulas are
the rules written in terms of the factors. A primitive missing from
``NAMED`` shows no formulas (``formulas`` returns None).

Read next: ``links.py`` (where the rules' code is).
"""

import contextlib
import html
import math
import re

import sympy
from sympy.printing.mathml import mathml

from .. import core as mx
from .. import symbolic
from ..core.primitives import factorizations as F

SHOWN = 6  # elements shown of a longer list
LONGEST = 600  # characters of an expression's text beyond which it is not typeset


def cases_by_primitive():
    out = {}
    for case in symbolic.all_cases():
        out.setdefault(case.primitive, []).append(case)
    return out


# --- the factorizations' outputs, named --------------------------------------------------


def _matrix(name, rows, cols, prefix, transpose=False, keep=lambda i, j: True, **assume):
    """The elements of a rows x cols matrix of symbols ``name{i}{j}`` (``{j}{i}``
    when ``transpose``: Vt's elements are V's), zero where ``keep`` says."""
    return [sympy.Symbol(f"{prefix}{name}{j}{i}" if transpose else f"{prefix}{name}{i}{j}",
                         **assume) if keep(i, j) else 0
            for i in range(rows) for j in range(cols)]


def _vector(name, n, prefix, **assume):
    return [sympy.Symbol(f"{prefix}{name}{i}", **assume) for i in range(n)]


def _named_svd(p, m, n, prefix):
    s = _vector("s", min(m, n), prefix, positive=True)
    if not p.compute_uv:
        return [s]
    return [_matrix("U", m, m, prefix, real=True), s,
            _matrix("V", n, n, prefix, transpose=True, real=True)]


def _named_qr(p, m, n, prefix):
    k = min(m, n)
    return [_matrix("Q", m, k, prefix, real=True),
            _matrix("R", k, n, prefix, keep=lambda i, j: j >= i, real=True)]


def _named_eigh(p, m, n, prefix):
    w = _vector("w", n, prefix, real=True)
    return [w, _matrix("V", n, n, prefix, real=True)] if p.compute_eigenvectors else [w]


def _named_eig(p, m, n, prefix):
    w = _vector("w", n, prefix)
    return [w, _matrix("V", n, n, prefix)] if p.compute_eigenvectors else [w]


# primitive: (its outputs as symbols for one m x n matrix, what the symbols are)
NAMED = {
    F.SVD: (_named_svd, "U<sub>ij</sub> the elements of U, s<sub>i</sub> the singular "
                        "values, V<sub>ij</sub> those of V (Vt's element [i, j] is "
                        "V<sub>ji</sub>)"),
    F.QRF: (_named_qr, "Q<sub>ij</sub> the elements of Q, R<sub>ij</sub> those of R "
                       "(zero below its diagonal)"),
    F.Eigh: (_named_eigh, "w<sub>i</sub> the eigenvalues, V<sub>ij</sub> the elements of "
                          "the eigenvectors' matrix V (column j: the eigenvector of "
                          "w<sub>j</sub>)"),
    F.Eig: (_named_eig, "w<sub>i</sub> the (complex) eigenvalues, V<sub>ij</sub> the "
                        "eigenvectors' elements"),
}


@contextlib.contextmanager
def named_outputs():
    """Within it, the primitives of ``NAMED`` compute nothing: each output
    element is a fresh symbol (``U01``; ``v1U01`` for the second matrix of a
    batch). For the manual's display only: the rules' code is untouched."""
    def named_eval(self, inputs):
        (a,) = inputs
        m, n = a.shape[-2:]
        count = math.prod(a.shape[:-2])
        outputs = None
        for b in range(count):
            parts = NAMED[type(self)][0](self, m, n, f"v{b}" if count > 1 else "")
            outputs = parts if outputs is None else [o + x for o, x in zip(outputs, parts)]
        return outputs

    saved = {p: p.__dict__["eval"] for p in NAMED}
    try:
        for p in NAMED:
            p.eval = named_eval
        yield
    finally:
        for p, evaluate in saved.items():
            p.eval = evaluate


def formulas(case):
    """{"inputs", "forward", "vjp", "jvp", "vmap"} for a case, each a list of
    (label, shape, elements); a "high-precision points" case runs on its
    primitive's named outputs (``named_outputs``), and is ``None`` when
    ``NAMED`` does not have it. A rule MLX does not have is (label, None, message)."""
    if case.points:
        if case.primitive not in NAMED:
            return None
        with named_outputs():
            return _formulas(case, exact=True)
    return _formulas(case)


def _formulas(case, exact=False):
    dtype = symbolic.input_dtype(case.domain)
    xs, parts = symbolic.case_inputs("", case.shapes, case.domain)
    inputs = [symbolic.sym_array(s, shape, dtype) for s, shape in zip(xs, case.shapes)]
    names = "abcdefgh"
    out = case.build(*inputs)
    result = {
        "inputs": [(names[k], shape, xs[k]) for k, shape in enumerate(case.shapes)],
        "forward": [("f", out.shape, _elements(out, exact))],
    }
    complex_out = out.dtype is mx.complex64
    (cot,) = symbolic.symbol_lists("u", [out.shape], {"real": True})
    if complex_out:
        (w,) = symbolic.symbol_lists("w", [out.shape], {"real": True})
        cot = [u + sympy.I * v for u, v in zip(cot, w)]
    cotangent = symbolic.sym_array(cot, out.shape, out.dtype if complex_out else None)
    tangents = [symbolic.sym_array([sympy.Symbol(f"t{x}", real=True) for x in group]
                                    if dtype is not mx.complex64 else
                                    [sympy.Symbol(f"t{x}") for x in group], shape, dtype)
                for group, shape in zip(xs, case.shapes)]
    result["vjp"] = _rule(lambda: mx.vjp(case.build, inputs, [cotangent])[1],
                          [f"vjp {names[k]}" for k in range(len(inputs))], exact)
    result["jvp"] = _rule(lambda: mx.jvp(case.build, inputs, tangents)[1], ["jvp f"], exact)
    result["vmap"] = _vmap(case, dtype, exact)
    return result


def _rule(run, labels, exact):
    try:
        arrays = run()
    except (ValueError, RuntimeError) as e:  # MLX has no such rule: its message
        return [(labels[0], None, str(e))]
    return [(label, a.shape, _elements(a, exact)) for label, a in zip(labels, arrays)]


def _vmap(case, dtype, exact):
    examples = [[symbolic.sym_array(s, shape, dtype) for s, shape in
                 zip(symbolic.case_inputs(f"v{b}", case.shapes, case.domain)[0], case.shapes)]
                for b in range(2)]
    batched = [mx.stack([examples[0][j], examples[1][j]]) for j in range(len(case.shapes))]
    try:
        out = mx.vmap(case.build)(*batched)
    except (ValueError, RuntimeError) as e:  # MLX has no such rule: its message
        return [("vmap f", None, str(e))]
    return [("vmap f", out.shape, _elements(out, exact))]


def _elements(a, exact=False):
    """The elements the engine computed, as they are; ``exact``: with float
    constants made exact (check-rules' ``exact_elements``: ``1.0*U00`` reads ``U00``),
    which is slow on the many elements of other cases and changes little there."""
    if exact:
        return symbolic.exact_elements(a)
    mx.eval(a)
    return [sympy.sympify(symbolic.as_number(v)) for v in a.data()]


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


def shown_name(name):
    """The name a symbol is printed under: the engine's names are made for
    check-rules (``ua0``, ``ta0``, ``v1a0``); the page writes the cotangent of
    f's element i as u_i, the tangent of a_i as da_i, and a_i of a batch's
    example b as a_i^(b)."""
    m = re.fullmatch(r"v(\d)(.+)", name)
    if m:
        return f"{shown_name(m.group(2))}__({m.group(1)})"
    m = re.fullmatch(r"([uw])[a-h](\d+)", name)
    if m:
        return m.group(1) + m.group(2)
    m = re.fullmatch(r"t(.+)", name)
    return "d" + m.group(1) if m else name


def _shown(expr):
    renames = {s: sympy.Symbol(shown_name(s.name), **s.assumptions0) for s in expr.free_symbols}
    if len({r.name for r in renames.values()}) < len(renames):
        return expr  # two names would print alike: keep the engine's
    return expr.xreplace(renames)


def _mathml(expr):
    expr = _shown(sympy.sympify(expr))
    text = str(expr)
    if len(text) > LONGEST:
        ops = sympy.count_ops(expr)
        return f"<mtext>(an expression of {ops} operations)</mtext>"
    if isinstance(expr, sympy.Float) and not math.isfinite(float(expr)):
        return f"<mi>{'-' if float(expr) < 0 else ''}∞</mi>"
    return mathml(expr, printer="presentation")
