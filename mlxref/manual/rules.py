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
The symbols are printed under a reader's names (``shown_name``): an input
under the name the case's program gives it (``input_names``: x for
``lambda x, w:``, a for ``mx.sin``), u₀ for a cotangent, dx₀ for a tangent,
x₀⁽¹⁾ for the second example of a batch; a matrix is shown as a matrix.

Where it holds for every element, a rule is written once, as a reader
writes it (``compact_forms``), and the element lists are not shown:

- per element, for an op whose output element i reads only the inputs'
  elements at i (after broadcasting): f_i = sin(a_i), vjp a_i = u_i cos(a_i).
  The form is derived from element 0 and every other element must be it at
  its own i (``per_element``); a broadcast input's vjp is a sum over the
  positions that read it.
- stated, for Matmul, AddMM and a plain Convolution (``STATED``): the
  matrix form (f = A B, vjp a = U Bᵀ, vjp b = Aᵀ U) or a convolution's
  (f = x ⋆ w, vjp x = pad(u) ⋆ flip(w), vjp w = x ⋆ u), written as a
  ``Term`` that SymPy evaluates from the same symbols on its own; it is
  shown only if that equals the engine's elements (``holds``).

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
import inspect
import itertools
import math
import re
from dataclasses import dataclass

import sympy
from sympy.printing.mathml import mathml

from .. import core as mx
from .. import symbolic
from ..core.primitives import conv as C
from ..core.primitives import factorizations as F
from ..core.primitives import linalg as L

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


def input_names(case):
    """The names of a case's inputs as its program writes them (``lambda x, w:``
    is x and w, ``mx.sin`` is a), or a, b, c... where it gives none (``*xs``),
    where one would read as another symbol of the page (u, a cotangent; d..., a
    tangent; f, the output), or in a complex domain (whose elements print as
    x<sub>a0</sub> + i y<sub>a0</sub>)."""
    letters = list(LETTERS[:len(case.shapes)])
    if case.domain in symbolic.COMPLEX_DOMAINS:
        return letters
    try:
        parameters = list(inspect.signature(case.build).parameters.values())
    except (TypeError, ValueError):
        return letters
    positional = [q.name for q in parameters if q.kind in (q.POSITIONAL_ONLY,
                                                           q.POSITIONAL_OR_KEYWORD)]
    names = positional[:len(case.shapes)]
    if (len(names) < len(case.shapes) or len(set(names)) < len(names)
            or any(not re.fullmatch(r"[A-Za-z]+", n) or n in ("u", "f", "i", "j")
                   or n.startswith("d") for n in names)):
        return letters
    return names


def formulas(case):
    """What ``pages`` shows of a case's rules, a dict:

    - "forward", "vjp", "jvp", "vmap": each a list of (label, shape, elements),
      the elements the engine computed on symbols; a rule MLX does not have is
      (label, None, message);
    - "inputs": (name, shape, symbols) of each input; "names": the inputs'
      names (``input_names``); "complex": whether they are complex;
    - "compact": {rule: [MathML or None, one per item]}: the item stated once,
      as a reader writes it, where that statement holds for every element
      (``compact_forms``); "kind": "per element", "stated" or None; "legend":
      what the names and operators of a stated form are (HTML), or "".

    A "high-precision points" case runs on its primitive's named outputs
    (``named_outputs``), and is ``None`` when ``NAMED`` does not have it."""
    if case.points:
        if case.primitive not in NAMED:
            return None
        with named_outputs():
            return _formulas(case, exact=True)
    return _formulas(case)


LETTERS = "abcdefgh"  # the engine's letters for the inputs (symbolic.symbol_lists)


@dataclass
class Symbols:
    """The symbols a case ran on: each input's elements (``xs``: one list per
    input), the cotangent's (``cotangent``), the tangents' (one list per
    input), and the two examples of the vmap batch (``batch[b][k]``); the
    output's shape, the names the page gives the inputs, and the node of the
    case's primitive (``Node``; None if the program has none)."""

    xs: list
    out_shape: tuple
    cotangent: list
    tangents: list
    batch: list
    names: list
    node: object


@dataclass
class Node:
    """The primitive (with its parameters) of the first node of the case's
    primitive class, seen back from the output, and for each of its inputs
    which of the case's inputs it is (None: another array)."""

    primitive: object
    roles: list


def _node(out, arrays, primitive):
    """The ``Node`` of ``primitive`` in the graph of ``out`` (before it is
    evaluated: evaluating lets go of the graph), or None."""
    stack, seen = [out], set()
    ids = {a.id(): k for k, a in enumerate(arrays)}
    while stack:
        a = stack.pop()
        if a.id() in seen:
            continue
        seen.add(a.id())
        if isinstance(a.primitive(), primitive):
            return Node(a.primitive(), [ids.get(x.id()) for x in a.inputs()])
        stack.extend(a.inputs())
    return None


def _formulas(case, exact=False):
    dtype = symbolic.input_dtype(case.domain)
    xs, parts = symbolic.case_inputs("", case.shapes, case.domain)
    inputs = [symbolic.sym_array(s, shape, dtype) for s, shape in zip(xs, case.shapes)]
    names = input_names(case)
    out = case.build(*inputs)
    node = _node(out, inputs, case.primitive)
    result = {
        "inputs": [(names[k], shape, xs[k]) for k, shape in enumerate(case.shapes)],
        "names": names,
        "complex": case.domain in symbolic.COMPLEX_DOMAINS,
        "forward": [("f", out.shape, _elements(out, exact))],
    }
    complex_out = out.dtype is mx.complex64
    (cot,) = symbolic.symbol_lists("u", [out.shape], {"real": True})
    if complex_out:
        (w,) = symbolic.symbol_lists("w", [out.shape], {"real": True})
        cot = [u + sympy.I * v for u, v in zip(cot, w)]
    cotangent = symbolic.sym_array(cot, out.shape, out.dtype if complex_out else None)
    # the tangent of a_i is da_i, named ta0... (complex where the inputs are)
    tangent_symbols = symbolic.symbol_lists(
        "t", case.shapes, {} if dtype is mx.complex64 else {"real": True})
    tangents = [symbolic.sym_array(group, shape, dtype)
                for group, shape in zip(tangent_symbols, case.shapes)]
    result["vjp"] = _rule(lambda: mx.vjp(case.build, inputs, [cotangent])[1],
                          [f"vjp {names[k]}" for k in range(len(inputs))], exact)
    result["jvp"] = _rule(lambda: mx.jvp(case.build, inputs, tangents)[1], ["jvp f"], exact)
    result["vmap"], batch = _vmap(case, dtype, exact)
    symbols = Symbols(xs, tuple(out.shape), cot, tangent_symbols, batch, names, node)
    result.update(compact_forms(case, symbols, result))
    return result


def _rule(run, labels, exact):
    try:
        arrays = run()
    except (ValueError, RuntimeError) as e:  # MLX has no such rule: its message
        return [(labels[0], None, str(e))]
    return [(label, a.shape, _elements(a, exact)) for label, a in zip(labels, arrays)]


def _vmap(case, dtype, exact):
    """The vmap item, and the symbols of the batch's two examples."""
    groups = [symbolic.case_inputs(f"v{b}", case.shapes, case.domain)[0] for b in range(2)]
    examples = [[symbolic.sym_array(s, shape, dtype) for s, shape in zip(group, case.shapes)]
                for group in groups]
    batched = [mx.stack([examples[0][j], examples[1][j]]) for j in range(len(case.shapes))]
    try:
        out = mx.vmap(case.build)(*batched)
    except (ValueError, RuntimeError) as e:  # MLX has no such rule: its message
        return [("vmap f", None, str(e))], groups
    return [("vmap f", out.shape, _elements(out, exact))], groups


def _elements(a, exact=False):
    """The elements the engine computed, as they are; ``exact``: with float
    constants made exact (check-rules' ``exact_elements``: ``1.0*U00`` reads ``U00``),
    which is slow on the many elements of other cases and changes little there."""
    if exact:
        return symbolic.exact_elements(a)
    mx.eval(a)
    return [sympy.sympify(symbolic.as_number(v)) for v in a.data()]


# --- the rules as a reader writes them ---------------------------------------------------
#
# Two kinds, both checked against the elements the engine computed, and shown
# only where every element agrees (otherwise the page shows the elements):
#
# - "per element": an op whose output element i reads only the inputs'
#   elements at i (after broadcasting) is written once, for one i, and the
#   form is *derived*: element 0 with its symbols renamed a0 -> a_i is the
#   candidate, and every element must be that candidate at its own i.
# - "stated": a linear-algebra rule in matrix form (``A B``, ``U Bᵀ``) or a
#   convolution's in the notation of a convolution, written in ``STATED`` as
#   a ``Term`` that SymPy evaluates from the same symbols on its own (not
#   with the engine); it is shown only if that evaluation equals the engine's
#   elements (``holds``).


def compact_forms(case, symbols, result):
    """{"compact", "kind", "legend"} for ``formulas``: the per-element form
    where the case is elementwise, else the stated forms that hold."""
    compact = {key: [None] * len(result[key]) for key in RULE_KEYS}
    none = {"compact": compact, "kind": None, "legend": ""}
    complex_out = any(not isinstance(u, sympy.Symbol) for u in symbols.cotangent)  # u + I w
    if case.points or case.domain in symbolic.COMPLEX_DOMAINS or complex_out:
        return none
    if per_element(case, symbols, result, compact):
        return {"compact": compact, "kind": "per element", "legend": ""}
    stated = STATED.get(case.primitive)
    terms = stated(case, symbols) if stated else None
    if not terms:
        return none
    used = []
    for key, items in terms.items():
        for k, term in enumerate(items):
            label, shape, elements = result[key][k]
            if term is not None and shape is not None and holds(term, shape, elements):
                shown = (_symbol_label("vmap", f"f__({example_letter(symbols.names)})")
                         if key == "vmap" else _word_label(label))
                compact[key][k] = _block(shown, term.mathml())
                used.append(term)
    if not used:
        return none
    return {"compact": compact, "kind": "stated", "legend": legend(used)}


RULE_KEYS = ("forward", "vjp", "jvp", "vmap")


def _same(x, y):
    return x == y or sympy.expand(x - y) == 0


# --- per element

def _reads(shape, out_shape):
    """For each element of an output of ``out_shape`` (row-major), the index of
    the element of an input of ``shape`` it reads once the input is broadcast;
    None if the input does not broadcast to that shape."""
    if len(shape) > len(out_shape):
        return None
    lead = len(out_shape) - len(shape)
    if any(s not in (1, o) for s, o in zip(shape, out_shape[lead:])):
        return None
    reads = []
    for position in itertools.product(*(range(n) for n in out_shape)):
        index = 0
        for s, p in zip(shape, position[lead:]):
            index = index * s + (p if s > 1 else 0)
        reads.append(index)
    return reads


def _generic(name, suffix, like):
    """The symbol ``name_suffix`` (a_i, da_j, a_i^(b)), with ``like``'s assumptions."""
    return sympy.Symbol(f"{name}_{suffix}", **like.assumptions0)


def _one_form(elements, renames, allowed):
    """The expression every element becomes under its renames, or None: an
    element using a symbol not among its own (``allowed``), or two elements
    that differ once renamed."""
    form = None
    for element, rename, own in zip(elements, renames, allowed):
        if not element.free_symbols <= own:
            return None
        candidate = element.xreplace(rename)
        if form is None:
            form = candidate
        elif not _same(form, candidate):
            return None
    return form


def per_element(case, symbols, result, compact):
    """Fill ``compact`` with each rule written once for one element i, and say
    whether the case is elementwise: its forward (every element f_i the same
    function of the a_i, b_i it reads) decides. Each other rule is written so
    only where all its elements agree; a vjp of a broadcast input is a sum
    over the positions that read one of its elements (``Σ_{i→j}``)."""
    (_, out_shape, forward), = result["forward"]
    out = tuple(out_shape)
    reads = [_reads(tuple(s), out) for s in case.shapes]
    # one element is trivially "per element": a 1 x 1 product is still a product
    if len(forward) < 2 or any(r is None for r in reads) or any(
            not group for group in symbols.xs):
        return False
    names, xs = symbols.names, symbols.xs
    n = len(forward)
    own = [{xs[k][reads[k][i]]: _generic(names[k], "i", xs[k][0]) for k in range(len(xs))}
           for i in range(n)]
    form = _one_form(forward, own, [set(r) for r in own])
    if form is None:
        return False
    compact["forward"][0] = _block(_symbol_label("", "f_i"), _mathml(form, rename=False))
    # jvp: the tangents da_i of the elements read
    jvp = result["jvp"][0]
    if jvp[1] is not None:
        tangent = [{**own[i], **{symbols.tangents[k][reads[k][i]]:
                                 _generic("d" + names[k], "i", symbols.tangents[k][0])
                                 for k in range(len(xs))}} for i in range(n)]
        form = _one_form(jvp[2], tangent, [set(r) for r in tangent])
        if form is not None:
            compact["jvp"][0] = _block(_symbol_label("jvp", "f_i"), _mathml(form, rename=False))
    for k, (label, shape, elements) in enumerate(result["vjp"]):
        if shape is not None:
            compact["vjp"][k] = _per_element_vjp(k, symbols, reads, own, elements)
    vmap = result["vmap"][0]
    if vmap[1] is not None and tuple(vmap[1]) == (2,) + out:
        e = example_letter(names)
        batch = [{symbols.batch[b][k][reads[k][i]]:
                  _generic(names[k], f"i__({e})", symbols.batch[b][k][0])
                  for k in range(len(xs))} for b in range(2) for i in range(n)]
        form = _one_form(vmap[2], batch, [set(r) for r in batch])
        if form is not None:
            compact["vmap"][0] = _block(_symbol_label("vmap", f"f_i__({e})"),
                                        _mathml(form, rename=False))
    return True


def example_letter(names):
    """The letter that numbers a batch's examples (a_i^(n)): one no input is named."""
    return next(c for c in "nmek" if c not in names)


def _per_element_vjp(k, symbols, reads, own, elements):
    """vjp of input k for one element: the vjp is linear in the cotangent, so
    output position i contributes u_i times d(vjp)/du_i to the element it
    read; those contributions, renamed, must agree, and add up to each element."""
    cot, names = symbols.cotangent, symbols.names
    n = len(cot)
    broadcast = len(set(reads[k])) < n
    # the input's own element is a_j where it was broadcast, a_i where it was not
    index = "j" if broadcast else "i"
    parts, renames = [], []
    for i in range(n):
        part = cot[i] * sympy.diff(elements[reads[k][i]], cot[i])
        rename = {**own[i], cot[i]: _generic("u", "i", cot[i])}
        rename[symbols.xs[k][reads[k][i]]] = _generic(names[k], index, symbols.xs[k][0])
        parts.append(part)
        renames.append(rename)
    form = _one_form(parts, renames, [set(r) for r in renames])
    if form is None:
        return None
    sums = [0] * len(elements)
    for i, part in enumerate(parts):
        sums[reads[k][i]] += part
    if not all(_same(s, e) for s, e in zip(sums, elements)):
        return None
    body = _mathml(form, rename=False)
    if broadcast and form != 0:
        body = ('<munder><mo movablelimits="false">&#8721;</mo>'
                "<mrow><mi>i</mi><mo>&#8594;</mo><mi>j</mi></mrow></munder>"
                f"<mrow>{body}</mrow>")
    return _block(_symbol_label("vjp", f"{names[k]}_{index}"), body)


# --- stated forms: terms SymPy evaluates on its own

class Term:
    """A statement's right side: names of arrays and operations on them.
    ``value()`` computes it with SymPy matrices (a vector is a column; a 1-D
    convolution's signal too), ``mathml()`` prints it. ``says``: what the
    operation is, for the legend."""

    says = ""
    atomic = False

    def parts(self):
        return ()

    def _wrapped(self):
        m = self.mathml()
        return m if self.atomic else f"<mrow><mo>(</mo>{m}<mo>)</mo></mrow>"


@dataclass(frozen=True, eq=False)
class Name(Term):
    """An array given a name: ``text`` as printed, its elements as a SymPy
    matrix, ``what`` it is (for the legend); ``scalar`` for a 1 x 1 one,
    which multiplies as a number does; ``differential``: the tangent of the
    array ``text`` names (printed dA); ``mark``: the example of a batch it is
    (printed A⁽ⁿ⁾)."""

    text: str
    matrix: object
    what: str
    scalar: bool = False
    differential: bool = False
    mark: str = ""
    atomic = True

    def value(self):
        return self.matrix

    @property
    def shown(self):
        """The name as the legend writes it (dA, A⁽ⁿ⁾ as A(n))."""
        return ("d" if self.differential else "") + self.text + (
            f"({self.mark})" if self.mark else "")

    def mathml(self):
        m = f"<mi>{html.escape(self.text)}</mi>"
        if self.mark:
            mark = f"<mo>(</mo><mi>{html.escape(self.mark)}</mi><mo>)</mo>"
            m = f"<msup>{m}<mrow>{mark}</mrow></msup>"
        return f'<mrow><mi mathvariant="normal">d</mi>{m}</mrow>' if self.differential else m


@dataclass(frozen=True, eq=False)
class PerExample(Term):
    """A vmap's statement: the same term for each example of the batch (its
    names marked with the example, A⁽ⁿ⁾), printed once; its value holds one
    example's elements per row."""

    terms: tuple
    atomic = True

    def parts(self):
        return self.terms[:1]

    def value(self):
        rows = [list(t.value()) for t in self.terms]
        return sympy.Matrix(len(rows), len(rows[0]), [e for r in rows for e in r])

    def mathml(self):
        return self.terms[0].mathml()


@dataclass(frozen=True, eq=False)
class Transposed(Term):
    x: Term
    atomic = True

    def parts(self):
        return (self.x,)

    def value(self):
        return self.x.value().T

    def mathml(self):
        return f"<msup>{self.x._wrapped()}<mi>T</mi></msup>"


@dataclass(frozen=True, eq=False)
class Product(Term):
    x: Term
    y: Term

    def parts(self):
        return (self.x, self.y)

    def value(self):
        x, y = self.x.value(), self.y.value()
        if getattr(self.x, "scalar", False):
            return x[0, 0] * y
        return x * y

    def mathml(self):
        return "<mo>&InvisibleTimes;</mo>".join(
            t.mathml() if isinstance(t, (Name, Transposed, Product, Scaled)) else t._wrapped()
            for t in (self.x, self.y))


@dataclass(frozen=True, eq=False)
class Scaled(Term):
    factor: float
    x: Term

    def parts(self):
        return (self.x,)

    def value(self):
        return self.factor * self.x.value()

    def mathml(self):
        inner = self.x.mathml() if isinstance(self.x, (Name, Transposed, Product)) else (
            self.x._wrapped())
        return f"<mn>{_number(self.factor)}</mn><mo>&InvisibleTimes;</mo>{inner}"


@dataclass(frozen=True, eq=False)
class Sum(Term):
    terms: tuple

    def parts(self):
        return self.terms

    def value(self):
        total = self.terms[0].value()
        for t in self.terms[1:]:
            total = total + t.value()
        return total

    def mathml(self):
        return "<mo>+</mo>".join(t.mathml() for t in self.terms)


@dataclass(frozen=True, eq=False)
class Correlated(Term):
    """x ⋆ k: the sliding sum of products a convolution op computes."""

    x: Term
    k: Term
    says = ("&#8902; is what mx.conv computes, a sliding sum of products: "
            "(x &#8902; k)<sub>j</sub> = &#8721;<sub>m</sub> x<sub>j+m</sub> k<sub>m</sub> "
            "(in 2-D, j and m are pairs of indices)")

    def parts(self):
        return (self.x, self.k)

    def value(self):
        x, k = self.x.value(), self.k.value()
        rows, cols = x.rows - k.rows + 1, x.cols - k.cols + 1
        return sympy.Matrix(rows, cols, lambda r, c: sum(
            x[r + p, c + q] * k[p, q] for p in range(k.rows) for q in range(k.cols)))

    def mathml(self):
        side = [t.mathml() if t.atomic else t._wrapped() for t in (self.x, self.k)]
        return f"{side[0]}<mo>&#8902;</mo>{side[1]}"


@dataclass(frozen=True, eq=False)
class Flipped(Term):
    x: Term
    atomic = True

    @property
    def says(self):
        x = html.escape(self.x.text)
        return f"flip(<i>{x}</i>) is <i>{x}</i> reversed along each of its axes"

    def parts(self):
        return (self.x,)

    def value(self):
        x = self.x.value()
        return sympy.Matrix(x.rows, x.cols, lambda r, c: x[x.rows - 1 - r, x.cols - 1 - c])

    def mathml(self):
        return f"<mi>flip</mi><mrow><mo>(</mo>{self.x.mathml()}<mo>)</mo></mrow>"


@dataclass(frozen=True, eq=False)
class Padded(Term):
    """x with as many zeros on each side as ``k`` is long less one (the
    positions where k still overlaps x)."""

    x: Term
    k: Term
    atomic = True

    @property
    def says(self):
        x, k = html.escape(self.x.text), html.escape(self.k.text)
        return (f"pad(<i>{x}</i>) is <i>{x}</i> with as many zeros on each side as "
                f"<i>{k}</i> is long less one, along each axis")

    def parts(self):
        return (self.x,)

    def value(self):
        x, k = self.x.value(), self.k.value()
        pr, pc = k.rows - 1, k.cols - 1
        return sympy.Matrix(x.rows + 2 * pr, x.cols + 2 * pc, lambda r, c: (
            x[r - pr, c - pc] if pr <= r < pr + x.rows and pc <= c < pc + x.cols else 0))

    def mathml(self):
        return f"<mi>pad</mi><mrow><mo>(</mo>{self.x.mathml()}<mo>)</mo></mrow>"


def transposed(x):
    """xᵀ, written simply: (xᵀ)ᵀ is x, a scalar is its own transpose, (x y)ᵀ is yᵀ xᵀ."""
    if isinstance(x, Transposed):
        return x.x
    if getattr(x, "scalar", False):
        return x
    if isinstance(x, Product):
        return product(transposed(x.y), transposed(x.x))
    return Transposed(x)


def product(x, y):
    """x y, a scalar factor written first."""
    if getattr(y, "scalar", False) and not getattr(x, "scalar", False):
        x, y = y, x
    return Product(x, y)


def scaled(factor, x):
    return x if factor == 1 else Scaled(factor, x)


def holds(term, shape, elements):
    """Whether ``term``, evaluated by SymPy, is exactly the engine's
    ``elements`` of an array of ``shape`` (row-major): a matrix's shape must be
    the term's, and every element the same once expanded."""
    value = term.value()
    if len(shape) == 2 and tuple(value.shape) != tuple(shape):
        return False
    flat = list(value)
    return len(flat) == len(elements) and all(_same(a, e) for a, e in zip(flat, elements))


def legend(terms):
    """What the names and operations of ``terms`` are, in order of first use (HTML)."""
    said, seen = [], set()

    def walk(t):
        text = (f"<i>{html.escape(t.shown)}</i> {t.what}" if isinstance(t, Name) and not t.mark
                else t.says)
        if text and text not in seen:
            seen.add(text)
            said.append((not isinstance(t, Name), text))
        for p in t.parts():
            walk(p)

    for t in terms:
        walk(t)
    return "; ".join(text for _, text in sorted(said, key=lambda s: s[0]))


def _matrix_of(elements, shape):
    """The elements of an array of ``shape`` as a SymPy matrix: a matrix as it
    is, a vector as a column, a scalar as 1 x 1."""
    if len(shape) == 2:
        return sympy.Matrix(shape[0], shape[1], list(elements))
    return sympy.Matrix(len(elements), 1, list(elements))


def _operand(name, elements, shape, what, mark="", d=False):
    """A matrix is named in capitals (a -> A), a vector or scalar as it is;
    ``d``: the tangent of that name (dA), ``mark``: an example's (A⁽ⁿ⁾)."""
    text = name.upper() if len(shape) == 2 and len(name) == 1 else name
    what = f"the tangent of {text}" if d else what
    return Name(text, _matrix_of(elements, shape), what, scalar=len(shape) == 0,
                differential=d, mark=mark)


def _matmul(case, symbols):
    """Matmul of a matrix or vector by a matrix or vector: f = A B, the vjps
    U Bᵀ and Aᵀ U, the jvp dA B + A dB (a first vector is a row: aᵀ B)."""
    if len(case.shapes) != 2 or any(len(s) not in (1, 2) for s in case.shapes):
        return None
    return _product_statements(symbols, (0, 1), case.shapes, alpha=1, beta=None)


def _addmm(case, symbols):
    """AddMM: f = α A B + β C, the vjps α U Bᵀ, α Aᵀ U and β U, the jvp
    α (dA B + A dB) + β dC, for the roles the node gives the case's inputs."""
    node = symbols.node
    if node is None or None in node.roles or len(set(node.roles)) != 3:
        return None
    roles, p = node.roles, node.primitive
    shapes = [tuple(case.shapes[k]) for k in roles]
    if any(len(s) != 2 for s in shapes) or shapes[2] != symbols.out_shape:
        return None
    return _product_statements(symbols, roles, [case.shapes[k] for k in roles[:2]],
                               alpha=p.alpha, beta=(p.beta, roles[2]))


def _product_statements(symbols, roles, shapes, alpha, beta):
    """The stated forms of ``alpha * (a @ b) [+ beta * c]``; ``roles``: the
    case's inputs that are a, b (and c); ``beta``: None or (beta, c's input).
    A vector is a column, and a first vector a row (aᵀ B)."""
    names, out_shape = symbols.names, symbols.out_shape
    ka, kb = roles[0], roles[1]
    kc = beta[1] if beta else None
    first_vector = len(shapes[0]) == 1
    row = transposed if first_vector else (lambda t: t)
    what = {ka: f"the {_kind(shapes[0])} {names[ka]}", kb: f"the {_kind(shapes[1])} {names[kb]}",
            kc: f"the matrix {names[kc]}" if kc is not None else ""}
    shape_of = {ka: shapes[0], kb: shapes[1], kc: out_shape}

    def forward_of(groups, mark="", d=False):
        """The forward, for the elements ``groups`` (the inputs' or the tangents')."""
        a, b = (_operand(names[k], groups[k], shape_of[k], what[k], mark, d) for k in (ka, kb))
        term = scaled(alpha, product(row(a), b))
        if beta:
            c = _operand(names[kc], groups[kc], out_shape, what[kc], mark, d)
            term = Sum((term, scaled(beta[0], c)))
        return term, row(a), b

    forward, A, b = forward_of(symbols.xs)
    _, dA, db = forward_of(symbols.tangents, d=True)
    tangent = scaled(alpha, Sum((product(dA, b), product(A, db))))
    # the cotangent: a matrix U, or a vector u (a row when a is a vector), or a scalar u
    u = _operand("u", symbols.cotangent, out_shape, "the cotangent (its elements u<sub>i</sub>)")
    U = row(u) if len(out_shape) == 1 else u
    vjp = [None] * len(symbols.xs)
    # d(A B) with respect to A is U Bᵀ, to B is Aᵀ U; a vector a gets (U Bᵀ)ᵀ
    t = product(U, transposed(b))
    vjp[ka] = scaled(alpha, transposed(t) if first_vector else t)
    vjp[kb] = scaled(alpha, product(transposed(A), U))
    if beta:
        dc = _operand(names[kc], symbols.tangents[kc], out_shape, "", d=True)
        tangent = Sum((tangent, scaled(beta[0], dc)))
        vjp[kc] = scaled(beta[0], U)
    e = example_letter(names)
    batch = PerExample(tuple(forward_of(group, e)[0] for group in symbols.batch))
    if beta and beta[0] == 0:  # c is not read: nothing reaches it
        forward, tangent, vjp[kc] = forward.terms[0], tangent.terms[0], None
        batch = PerExample(tuple(t.terms[0] for t in batch.terms))
    return {"forward": [forward], "vjp": vjp, "jvp": [tangent], "vmap": [batch]}


def _kind(shape):
    return {0: "scalar", 1: "vector", 2: "matrix"}[len(shape)]


def _convolution(case, symbols):
    """A plain convolution (stride 1, no padding, dilation or groups, no flip)
    of one example with one channel in and out, in one or two dimensions:
    f = x ⋆ w; the vjp of x, pad(u) ⋆ flip(w) (the cotangent, padded where w
    still overlaps x, by the flipped kernel); of w, x ⋆ u (the input by the
    cotangent); the jvp dx ⋆ w + x ⋆ dw."""
    node = symbols.node
    if node is None:
        return None
    roles, p = node.roles, node.primitive
    if (roles != [0, 1] or set(p.stride) | set(p.kernel_dilation) | set(p.input_dilation) != {1}
            or set(p.padding_lo) | set(p.padding_hi) != {0} or p.groups != 1 or p.flip):
        return None
    xs, ws = (tuple(case.shapes[k]) for k in roles)
    if xs[0] != 1 or xs[-1] != 1 or ws[0] != 1 or ws[-1] != 1 or len(xs) not in (3, 4):
        return None

    def named(name, elements, shape, what, mark="", d=False):
        spatial = shape[1:-1]
        cols = spatial[1] if len(spatial) == 2 else 1
        return Name(name, sympy.Matrix(spatial[0], cols, list(elements)),
                    f"the tangent of {name}" if d else what, mark=mark, differential=d)

    nx, nw = symbols.names[0], symbols.names[1]

    def operands(groups, mark="", d=False):
        return (named(nx, groups[0], xs, "the input", mark, d),
                named(nw, groups[1], ws, "the kernel", mark, d))

    x, w = operands(symbols.xs)
    dx, dw = operands(symbols.tangents, d=True)
    u = named("u", symbols.cotangent, symbols.out_shape,
              "the cotangent (its elements u<sub>i</sub>)")
    e = example_letter(symbols.names)
    return {"forward": [Correlated(x, w)],
            "vjp": [Correlated(Padded(u, w), Flipped(w)), Correlated(x, u)],
            "jvp": [Sum((Correlated(dx, w), Correlated(x, dw)))],
            "vmap": [PerExample(tuple(Correlated(*operands(group, e)) for group in symbols.batch))]}


# primitive: its rules stated as Terms, {rule: [Term or None, one per item]}, or None
# where the case is not one the statement covers. Shown only where ``holds``.
STATED = {
    L.Matmul: _matmul,
    L.AddMM: _addmm,
    C.Convolution: _convolution,
}


# --- MathML ------------------------------------------------------------------------------


def math_block(label, shape, elements, names=None):
    """``label = elements`` as one ``<math display="block">`` element: a
    scalar as it is, a vector as [e0, e1, ...], a matrix as a matrix, an
    array of more axes as its matrices with its shape; at most ``SHOWN``
    of each. ``names``: the inputs' names (``shown_name``)."""
    if shape is None:  # no rule: MLX's message
        return f'<p class="no-rule"><code>{html.escape(elements)}</code></p>'
    shape = tuple(shape)
    if len(shape) == 0:
        body = _mathml(elements[0], names)
    elif len(shape) == 1:
        body = _bracketed(_row(elements, names))
    elif len(shape) == 2:
        body = _table(elements, shape, names)
    else:
        size = shape[-2] * shape[-1]
        count = len(elements) // size if size else 0
        tables = [_table(elements[m * size:(m + 1) * size], shape[-2:], names)
                  for m in range(min(count, 2))]
        if count > 2:
            tables.append(f"<mi>…</mi><mtext>&#160;({count} matrices)</mtext>")
        body = (_bracketed("<mo>,</mo>".join(tables))
                + f"<mtext>&#160;&#160;shape {html.escape(str(shape))}</mtext>")
    return _block(_word_label(label), body)


def _block(label, body):
    return f'<math display="block"><mrow>{label}<mo>=</mo>{body}</mrow></math>'


def _word_label(label):
    return f"<mi>{html.escape(label)}</mi>"


def _symbol_label(word, name):
    """``jvp f_i``: a word, then a symbol printed as SymPy prints it (f_i is f with i below)."""
    symbol = mathml(sympy.Symbol(name), printer="presentation")
    return f"<mi>{html.escape(word)}</mi><mspace width=\"0.3em\"/>{symbol}" if word else symbol


def _bracketed(body):
    return f"<mrow><mo>[</mo>{body}<mo>]</mo></mrow>"


def _row(elements, names):
    body = "<mo>,</mo>".join(_mathml(e, names) for e in elements[:SHOWN])
    if len(elements) > SHOWN:
        body += f"<mo>,</mo><mi>…</mi><mtext>&#160;({len(elements)} elements)</mtext>"
    return body


def _table(elements, shape, names):
    """A matrix of ``shape`` (row-major ``elements``), its first ``SHOWN`` rows
    and columns, with ⋮ and ⋯ where it has more."""
    rows, cols = shape
    shown_cols = min(cols, SHOWN)
    lines = []
    for r in range(min(rows, SHOWN)):
        cells = [_mathml(elements[r * cols + c], names) for c in range(shown_cols)]
        if cols > SHOWN:
            cells.append("<mi>⋯</mi>")
        lines.append("<mtr>" + "".join(f"<mtd>{c}</mtd>" for c in cells) + "</mtr>")
    if rows > SHOWN:
        lines.append("<mtr>" + "<mtd><mi>⋮</mi></mtd>" * len(cells) + "</mtr>")
    return _bracketed("<mtable>" + "".join(lines) + "</mtable>")


def shown_name(name, names=None):
    """The name a symbol is printed under: the engine's names are made for
    check-rules (``a0``, ``ua0``, ``ta0``, ``v1a0``); the page writes the
    element i of the k-th input under the input's name (``names``, by default
    a, b, c...: x_i for ``lambda x, w:``), the cotangent of f's element i as
    u_i, the tangent of a_i as da_i, and a_i of a batch's example b as a_i^(b)."""
    m = re.fullmatch(r"v(\d)(.+)", name)
    if m:
        return f"{shown_name(m.group(2), names)}__({m.group(1)})"
    m = re.fullmatch(r"([uw])[a-h](\d+)", name)
    if m:
        return m.group(1) + m.group(2)
    m = re.fullmatch(r"t(.+)", name)
    if m:
        return "d" + shown_name(m.group(1), names)
    m = re.fullmatch(r"([a-h])(\d+)", name)
    if m and names:
        return names[LETTERS.index(m.group(1))] + m.group(2)
    return name


def _shown(expr, names=None):
    renames = {s: sympy.Symbol(shown_name(s.name, names), **s.assumptions0)
               for s in expr.free_symbols}
    if len({r.name for r in renames.values()}) < len(renames):
        return expr  # two names would print alike: keep the engine's
    return expr.xreplace(renames)


def _mathml(expr, names=None, rename=True):
    """An expression in presentation MathML, its symbols under the page's
    names (``rename``: they are the engine's; a per-element form's are not)."""
    expr = sympy.sympify(expr)
    # a whole float constant the rule used reads as the integer it is (1.0*da: da)
    expr = expr.xreplace({c: sympy.Integer(int(c)) for c in expr.atoms(sympy.Float)
                          if math.isfinite(float(c)) and float(c).is_integer()})
    if rename:
        expr = _shown(expr, names)
    text = str(expr)
    if len(text) > LONGEST:
        ops = sympy.count_ops(expr)
        return f"<mtext>(an expression of {ops} operations)</mtext>"
    if isinstance(expr, sympy.Float) and not math.isfinite(float(expr)):
        return f"<mi>{'-' if float(expr) < 0 else ''}∞</mi>"
    return mathml(expr, printer="presentation")


def _number(x):
    """A factor as a reader writes it: 2 rather than 2.0."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))
