"""The manual's rules as a reader writes them (mlxref/manual/rules.py, pages.py).

A product's and a convolution's rules are stated in matrix form (U Bᵀ, Aᵀ U)
or in the notation of a convolution (pad(u) ⋆ flip(w)) only where the
statement, evaluated by SymPy on its own, equals what the engine's rule
computed on symbols; the tests check the engine's elements once more against
an independent SymPy computation, and that a wrong statement is refused. An
elementwise op's rules are written once, for one element, naming only the
inputs the op has. Each transform's page shows its drawing, or says why it
has none.
"""

import math
import shutil

import pytest
import sympy

import mlxref.core as mx
from mlxref.core.primitives.conv import Convolution
from mlxref.core.primitives.elementwise import Multiply, Sin
from mlxref.core.primitives.linalg import AddMM, Matmul
from mlxref.core.primitives.shape import Reshape
from mlxref.manual import pages, rules
from mlxref.symbolic import Case

CASES = rules.cases_by_primitive()


def _symbols(prefix, n):
    return [sympy.Symbol(f"{prefix}{k}", real=True) for k in range(n)]


def _elements(f, key, k=0):
    label, shape, elements = f[key][k]
    return shape, elements


def _equal(got, expected):
    return len(got) == len(expected) and all(
        sympy.expand(g - e) == 0 for g, e in zip(got, expected))


# --- matrix form -------------------------------------------------------------------------


def test_matmul_vjps_are_shown_as_u_bt_and_at_u_and_are_what_the_rule_computes():
    case = CASES[Matmul][0]  # (2, 2) @ (2, 3)
    f = rules.formulas(case)
    assert f["kind"] == "stated"
    vjp_a, vjp_b = f["compact"]["vjp"]
    assert "<mi>U</mi><mo>&InvisibleTimes;</mo><msup><mi>B</mi><mi>T</mi></msup>" in vjp_a
    assert "<msup><mi>A</mi><mi>T</mi></msup><mo>&InvisibleTimes;</mo><mi>U</mi>" in vjp_b
    assert "<mi>A</mi><mo>&InvisibleTimes;</mo><mi>B</mi>" in f["compact"]["forward"][0]
    # independently of the statement's code: the engine's vjps are U Bᵀ and Aᵀ U
    A = sympy.Matrix(2, 2, _symbols("a", 4))
    B = sympy.Matrix(2, 3, _symbols("b", 6))
    U = sympy.Matrix(2, 3, _symbols("ua", 6))
    assert _elements(f, "vjp", 0)[0] == (2, 2) and _elements(f, "vjp", 1)[0] == (2, 3)
    assert _equal(_elements(f, "vjp", 0)[1], list(U * B.T))
    assert _equal(_elements(f, "vjp", 1)[1], list(A.T * U))
    # the page shows the statement, not the element lists, and names U in its legend
    text = pages._formulas(case)
    assert vjp_a in text and "<i>U</i> the cotangent" in text
    assert "<mtable>" not in text.split('<p class="rule">vmap')[0]


def test_vectors_are_columns_and_a_first_vector_a_row():
    vector_vector, matrix_vector = CASES[Matmul][1], CASES[Matmul][2]
    f = rules.formulas(vector_vector)
    assert f["compact"]["forward"][0].endswith(
        "<msup><mi>a</mi><mi>T</mi></msup><mo>&InvisibleTimes;</mo><mi>b</mi></mrow></math>")
    # the cotangent of a scalar is a number: vjp a = u b
    u = sympy.Symbol("ua0", real=True)
    assert _equal(_elements(f, "vjp", 0)[1], [u * b for b in _symbols("b", 3)])
    assert "<mi>u</mi><mo>&InvisibleTimes;</mo><mi>b</mi>" in f["compact"]["vjp"][0]
    f = rules.formulas(matrix_vector)
    assert "<mi>u</mi><mo>&InvisibleTimes;</mo><msup><mi>b</mi><mi>T</mi></msup>" in (
        f["compact"]["vjp"][0])
    # a batched product is not stated: its elements are shown
    f = rules.formulas(CASES[Matmul][3])
    assert f["kind"] is None and f["compact"]["vjp"] == [None, None]


def test_addmm_names_its_inputs_as_the_program_does():
    case = CASES[AddMM][0]  # lambda c, a, b: mx.addmm(c, a, b)
    f = rules.formulas(case)
    assert f["names"] == ["c", "a", "b"]
    vjp_c, vjp_a, vjp_b = f["compact"]["vjp"]
    assert vjp_c.endswith("<mi>vjp c</mi><mo>=</mo><mi>U</mi></mrow></math>")
    assert "<msup><mi>B</mi><mi>T</mi></msup>" in vjp_a and "<msup><mi>A</mi><mi>T</mi>" in vjp_b
    # the second input of the program is a (2 x 3): its vjp is U Bᵀ with b (3 x 2)
    U = sympy.Matrix(2, 2, _symbols("ua", 4))
    B = sympy.Matrix(3, 2, _symbols("c", 6))  # the engine's symbols: b is the third input
    assert _equal(_elements(f, "vjp", 1)[1], list(U * B.T))
    assert _equal(_elements(f, "vjp", 0)[1], list(U))


def test_alpha_and_beta_are_the_nodes_and_a_zero_beta_leaves_c_out():
    case = Case(AddMM, lambda c, a, b: mx.addmm(c, a, b, 2.0, 0.0), ((2, 2), (2, 2), (2, 2)))
    f = rules.formulas(case)
    assert f["kind"] == "stated"
    assert "<mn>2</mn>" in f["compact"]["forward"][0]
    assert "<mi>C</mi>" not in f["compact"]["forward"][0]
    assert f["compact"]["vjp"][0] is None  # nothing reaches c: its zeros are listed


def test_a_wrong_matrix_form_is_refused():
    case = CASES[Matmul][0]
    f = rules.formulas(case)
    shape, elements = _elements(f, "vjp", 0)
    U = rules.Name("U", sympy.Matrix(2, 3, _symbols("ua", 6)), "the cotangent")
    B = rules.Name("B", sympy.Matrix(2, 3, _symbols("b", 6)), "the matrix b")
    right = rules.product(U, rules.transposed(B))
    assert rules.holds(right, shape, elements)
    # the same shape, transposed: (U Bᵀ)ᵀ = B Uᵀ is 2 x 2 too, and wrong
    assert not rules.holds(rules.transposed(right), shape, elements)
    assert not rules.holds(rules.scaled(2.0, right), shape, elements)
    # a statement of another shape (Bᵀ U is 3 x 3) is refused before its elements
    assert not rules.holds(rules.product(rules.transposed(B), U), shape, elements)


def test_a_wrong_statement_shows_the_elements_instead(monkeypatch):
    stated = rules.STATED[Matmul]

    def wrong(case, symbols):
        terms = stated(case, symbols)
        terms["vjp"][0] = rules.transposed(terms["vjp"][0])  # (U Bᵀ)ᵀ: wrong
        return terms

    monkeypatch.setitem(rules.STATED, Matmul, wrong)
    f = rules.formulas(CASES[Matmul][0])
    assert f["compact"]["vjp"][0] is None and f["compact"]["vjp"][1] is not None
    text = pages._formulas(CASES[Matmul][0])
    assert "<mi>vjp a</mi><mo>=</mo><mrow><mo>[</mo><mtable>" in text  # the elements


# --- convolution -------------------------------------------------------------------------


def test_conv_vjps_are_a_convolution_of_the_cotangent_and_a_correlation_with_it():
    case = CASES[Convolution][0]  # conv1d: x (1, 3, 1), w (1, 2, 1)
    f = rules.formulas(case)
    assert f["kind"] == "stated" and f["names"] == ["x", "w"]
    vjp_x, vjp_w = f["compact"]["vjp"]
    assert ("<mi>pad</mi><mrow><mo>(</mo><mi>u</mi><mo>)</mo></mrow><mo>&#8902;</mo>"
            "<mi>flip</mi><mrow><mo>(</mo><mi>w</mi><mo>)</mo></mrow>") in vjp_x
    assert "<mi>x</mi><mo>&#8902;</mo><mi>u</mi>" in vjp_w
    # independently: f_j = sum_k x_{j+k} w_k, so the vjp of x_i is sum_j u_j w_{i-j},
    # and that of w_k is sum_j u_j x_{j+k}
    x, w, u = _symbols("a", 3), _symbols("b", 2), _symbols("ua", 2)
    assert _equal(_elements(f, "forward")[1], [x[j] * w[0] + x[j + 1] * w[1] for j in range(2)])
    x_bar = [sum(u[j] * w[i - j] for j in range(2) if 0 <= i - j < 2) for i in range(3)]
    w_bar = [sum(u[j] * x[j + k] for j in range(2)) for k in range(2)]
    assert _equal(_elements(f, "vjp", 0)[1], x_bar)
    assert _equal(_elements(f, "vjp", 1)[1], w_bar)
    assert "flip(<i>w</i>) is <i>w</i> reversed" in f["legend"]


def test_a_2d_conv_is_stated_too_and_a_strided_one_is_not():
    f = rules.formulas(Case(Convolution, lambda x, w: mx.conv2d(x, w),
                            ((1, 3, 3, 1), (1, 2, 2, 1))))
    assert f["kind"] == "stated" and all(f["compact"][k][0] for k in rules.RULE_KEYS)
    assert all(f["compact"]["vjp"])
    strided = CASES[Convolution][1]  # stride 2, padding 1, dilation 2
    f = rules.formulas(strided)
    assert f["kind"] is None and f["compact"]["vjp"] == [None, None]


# --- one element -------------------------------------------------------------------------


def test_a_one_input_op_names_only_a_and_is_written_once():
    case = CASES[Sin][0]
    text = pages._formulas(case)
    assert "a<sub>i</sub>" in text and "b<sub>i</sub>" not in text and "db" not in text
    f = rules.formulas(case)
    assert f["kind"] == "per element"
    # one block per rule, for one element i, not one entry per element
    assert text.count("<math") == 4 and "<mi>0</mi>" not in text
    assert ("<msub><mi>u</mi><mi>i</mi></msub><mo>&InvisibleTimes;</mo><mrow><mi>cos</mi>"
            in f["compact"]["vjp"][0])
    # a program naming its input x is written with x
    text = pages._formulas(CASES[Reshape][0])  # lambda x: mx.reshape(x, (3, 2))
    assert "x<sub>i</sub>" in text and "a<sub>i</sub>" not in text


def test_a_broadcast_input_s_vjp_sums_over_the_elements_that_read_it():
    f = rules.formulas(CASES[Multiply][0])  # a (2, 1) * b (3,)
    assert f["kind"] == "per element"
    vjp_a = f["compact"]["vjp"][0]
    assert "&#8721;" in vjp_a and "<msub><mi>a</mi><mi>j</mi></msub>" in vjp_a
    assert "<msub><mi>b</mi><mi>i</mi></msub>" in vjp_a
    # and it is the engine's: a_j's vjp is the sum over the row it was broadcast along
    b, u = _symbols("b", 3), _symbols("ua", 6)
    assert _equal(_elements(f, "vjp", 0)[1],
                  [sum(u[3 * r + c] * b[c] for c in range(3)) for r in range(2)])


def test_a_program_that_is_not_elementwise_keeps_its_elements():
    # sin times constants: element 2 is 2 sin(a2), not the form of element 0
    case = Case(Sin, lambda a: mx.sin(a) * mx.array([1.0, 1.0, 2.0]), ((3,),))
    f = rules.formulas(case)
    assert f["kind"] is None and f["compact"]["forward"] == [None]


def test_a_matrix_of_elements_is_shown_as_a_matrix():
    elements = [sympy.Symbol(f"a{k}") for k in range(6)]
    block = rules.math_block("f", (2, 3), elements)
    assert block.count("<mtr>") == 2 and block.count("<mtd>") == 6 and "shape" not in block
    block = rules.math_block("f", (2, 1, 3), elements)
    assert block.count("<mtable>") == 2 and "shape (2, 1, 3)" in block
    many = [sympy.Symbol(f"a{k}") for k in range(64)]
    block = rules.math_block("f", (8, 8), many)
    assert block.count("<mtr>") == rules.SHOWN + 1 and "⋮" in block and "⋯" in block


def test_input_names_come_from_the_program_unless_they_would_mislead():
    assert rules.input_names(CASES[Convolution][0]) == ["x", "w"]
    assert rules.input_names(CASES[Sin][0]) == ["a"]  # mx.sin(a)
    assert rules.input_names(Case(Sin, lambda u: mx.sin(u), ((3,),))) == ["a"]
    assert rules.input_names(Case(Sin, lambda *xs: mx.sin(xs[0]), ((3,),))) == ["a"]
    assert rules.input_names(Case(Sin, lambda z: mx.sin(z), ((2,),), "complex")) == ["a"]


# --- the transforms' pages ---------------------------------------------------------------


def test_every_transform_page_has_its_drawing_or_says_why(tmp_path):
    from mlxref.core.transforms import vjp as vjp_module

    assert set(pages.TRANSFORM_DRAWINGS) | set(pages.NO_DRAWING) == set(pages.TRANSFORMS)
    assert not set(pages.TRANSFORM_DRAWINGS) & set(pages.NO_DRAWING)
    assert {"vjp", "jvp", "grad", "vmap"} <= set(pages.TRANSFORM_DRAWINGS)
    if not shutil.which("dot"):
        pytest.skip("no Graphviz here")
    drawn = pages.draw_transform_walks(tmp_path / "walks")
    for name in pages.TRANSFORM_DRAWINGS:
        image, _ = drawn[name]
        assert image == f"walks/{name}.svg", name
        assert (tmp_path / image).read_text().lstrip().startswith(("<?xml", "<svg"))
    page = pages.transform_page("vjp", vjp_module, None, drawn["vjp"])
    assert "## Drawn" in page and "![vjp, drawn](walks/vjp.svg)" in page
    assert "seed example" in page
    from mlxref.core.transforms import trees as trees_module

    page = pages.transform_page("trees", trees_module, None, drawn["trees"])
    assert "No drawing: it flattens" in page and "![" not in page


def test_the_seed_drawings_are_the_readme_s():
    """The vjp and jvp pages draw what diagrams/seed_vjp.svg and seed_jvp.svg show
    (the same program at the same point), and the grad page the seed's gradient."""
    from mlxref.viz import figures

    for transform in ("vjp", "jvp"):
        drawing, _ = pages.transform_drawing(transform)
        assert drawing.to_dot() == figures.FIGURES[f"seed_{transform}"]().to_dot()
    drawing, _ = pages.transform_drawing("grad")
    x = pages.SEED_AT  # d/dx sin(x) e^x = e^x (sin x + cos x)
    assert f"{math.exp(x) * (math.sin(x) + math.cos(x)):.4f}" in drawing.to_dot()
