"""einsum and einsum_path (mlxref/core/ops/einsum.py; MLX's mlx/einsum.cpp), with real MLX
as the oracle.

Each subscript string is evaluated by both libraries on the same random
operands: same shape, dtype and values (to float tolerance), and the same
contraction path and report from einsum_path. Gradients, jvps and vmap go
through the ops einsum is composed of; they are compared with MLX too, and
with sums written out by hand. Bad subscripts raise MLX's messages.
"""

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx, real_mx

# NumPy is not in a student copy's venv (mlxref assignment make): these tests skip there
np = pytest.importorskip("numpy")

# (subscripts, operand shapes)
CASES = [
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,i->i", [(3,), (3,)]),
    ("i,j", [(2,), (3,)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("jii,ij", [(2, 3, 3), (3, 2)]),
    ("ijij->ij", [(2, 3, 2, 3)]),
    ("iji->j", [(2, 3, 2)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("i...->...", [(2, 3, 4)]),
    ("...", [(2, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
    (" i j , j k ", [(2, 3), (3, 4)]),
    ("ij,ij->", [(2, 3), (1, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (1, 3, 4)]),
    ("ij,i", [(2, 3), (2,)]),
    ("Ab,bA", [(2, 3), (3, 2)]),
    ("i,j,k", [(2,), (3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd,ef,bc", [(2, 3), (4, 5), (6, 7), (3, 4)]),
    ("abc,cd,de,ab->e", [(2, 3, 4), (4, 2), (2, 3), (2, 3)]),
    ("ijk,ikl,ilm->im", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("ea,fb,abcd,gc,hd->efgh", [(4, 2), (5, 3), (2, 3, 4, 5), (3, 4), (2, 5)]),
    ("ij,ijk,jk->", [(2, 3), (2, 3, 4), (3, 4)]),
    ("ii,ij,jj->ij", [(3, 3), (3, 3), (3, 3)]),
    ("", [()]),
    (",", [(), ()]),
    ("i,,i", [(2,), (), (2,)]),
    ("ij,jk", [(0, 3), (3, 4)]),
    ("ij,jk", [(2, 0), (0, 4)]),
    ("ij->", [(0, 2)]),
]


def _operands(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _run(lib, subscripts, values):
    ops = [lib.array(v) for v in values]
    return lib.einsum(subscripts, *ops), lib.einsum_path(subscripts, *ops)


@needs_mlx
@pytest.mark.parametrize("subscripts,shapes", CASES, ids=[c[0] or "empty" for c in CASES])
def test_values_and_path_match_mlx(subscripts, shapes):
    values = _operands(shapes)
    (ours, our_path), (theirs, their_path) = (
        _run(mx, subscripts, values), _run(real_mx, subscripts, values))
    if any(v.size == 0 for v in values):
        # MLX 0.32.4's CPU reduce of an empty array to a scalar returns whatever
        # its output buffer held (README, "Where mlxref differs"): NumPy is the
        # oracle for the values of these cases, MLX still for the path
        assert ours.tolist() == np.einsum(subscripts, *values).tolist()
    else:
        assert_same_as_mlx(ours, theirs, atol=1e-4)
    assert our_path == their_path


def test_matrix_product_by_hand():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    b = mx.array([[5.0, 6.0], [7.0, 8.0]])
    assert mx.einsum("ij,jk->ik", a, b).tolist() == [[19.0, 22.0], [43.0, 50.0]]
    assert mx.einsum("ij,jk->ki", a, b).tolist() == [[19.0, 43.0], [22.0, 50.0]]
    assert mx.einsum("ii", a).item() == 5.0
    assert mx.einsum("ij,ij->i", a, b).tolist() == [17.0, 53.0]


def test_greedy_path_and_report():
    """Three matrices in a chain: the path contracts the last two first (it
    removes more elements), and the report gives opt_einsum's counts."""
    ops = [mx.ones((2, 3)), mx.ones((3, 4)), mx.ones((4, 5))]
    path, report = mx.einsum_path("ij,jk,kl", *ops)
    assert path == [(1, 2), (0, 1)]
    # naive: 2*3*4*5 index points, two products and a sum each: 120 * 3 = 360
    assert report.splitlines() == [
        "  Complete contraction:  ij,jk,kl",
        "         Naive scaling:  4",
        "     Optimized scaling:  3",
        "      Naive FLOP count:  360",
        "  Optimized FLOP count:  180",
    ]
    # two operands: one step, whatever they are
    assert mx.einsum_path("i,j", mx.ones(2), mx.ones(3))[0] == [(0, 1)]


@needs_mlx
@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,j->...i", [(2, 2, 3), (3,)]),
    ("ij,ij->", [(2, 3), (1, 3)]),
])
def test_gradients_match_mlx(subscripts, shapes):
    values = _operands(shapes, seed=1)

    def grads(lib):
        ops = [lib.array(v) for v in values]
        f = lambda *xs: lib.sum(lib.einsum(subscripts, *xs) ** 2)
        return lib.grad(f, argnums=list(range(len(ops))))(*ops)

    for ours, theirs in zip(*both(grads)):
        assert_same_as_mlx(ours, theirs, atol=1e-4)


def test_gradient_of_trace_and_product_by_hand():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    assert mx.grad(lambda x: mx.einsum("ii", x))(a).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    b = mx.array([[5.0, 6.0], [7.0, 8.0]])
    # d/da sum(a @ b) = ones @ b.T: row sums of b in every row
    g = mx.grad(lambda x: mx.sum(mx.einsum("ij,jk", x, b)))(a)
    assert g.tolist() == [[11.0, 15.0], [11.0, 15.0]]


@needs_mlx
def test_jvp_matches_mlx():
    a, b, t = _operands([(2, 3), (3, 4), (2, 3)], seed=2)

    def run(lib):
        f = lambda x: lib.einsum("ij,jk->ik", x, lib.array(b))
        return lib.jvp(f, [lib.array(a)], [lib.array(t)])[1][0]

    ours, theirs = both(run)
    assert_same_as_mlx(ours, theirs, atol=1e-4)


@needs_mlx
@pytest.mark.parametrize("subscripts,shapes,in_axes", [
    ("ij,jk", [(3, 2, 4), (4, 2)], (0, None)),
    ("ii->i", [(3, 3, 2)], (2,)),
    ("i,i", [(3, 2), (2, 3)], (1, 0)),
    ("ij,jk,kl", [(2, 2, 3), (3, 4), (2, 4, 2)], (0, None, 0)),
])
def test_vmap_matches_mlx(subscripts, shapes, in_axes):
    values = _operands(shapes, seed=3)

    def run(lib):
        f = lambda *xs: lib.einsum(subscripts, *xs)
        return lib.vmap(f, in_axes=in_axes)(*[lib.array(v) for v in values])

    ours, theirs = both(run)
    assert_same_as_mlx(ours, theirs, atol=1e-4)


@needs_mlx
def test_dtypes_follow_the_ops():
    """Elementwise steps promote; a contraction of integers is a matmul, which
    MLX refuses for integers."""
    for build in [
        lambda m: m.einsum("i,i->i", m.array([1, 2, 3], m.int8), m.array([1, 2, 3], m.float16)),
        lambda m: m.einsum("i->", m.array([1, 2, 3], m.int8)),
        lambda m: m.einsum("i,i->i", m.array([1, 2], m.int32), m.array([3, 4], m.int32)),
        lambda m: m.einsum("ij,jk", m.array([[1, 2]]), m.array([[1], [2]])),
        lambda m: m.einsum("ij,jk", m.ones((2, 2), m.bfloat16), m.ones((2, 2), m.float32)),
    ]:
        result = both(build)
        if result is not None:
            assert_same_as_mlx(*result)


@needs_mlx
@pytest.mark.parametrize("fn", ["einsum", "einsum_path"])
@pytest.mark.parametrize("subscripts,shapes", [
    ("ij", []),
    ("ij,jk", [(2, 3)]),
    ("", [(), ()]),
    ("i,->i", [(2,)]),
    ("i1", [(2, 3)]),
    ("i-j", [(2, 3)]),
    ("ij,jk->ik->", [(2, 3), (3, 4)]),
    ("i...j...", [(2, 3)]),
    ("i..", [(2, 3)]),
    ("i.j", [(2, 3)]),
    ("ii", [(2, 3)]),
    ("ijk", [(2, 3)]),
    ("ij->ii", [(2, 3)]),
    ("...ijk", [(2, 3)]),
    ("ij,kj", [(2, 3), (2, 4)]),
    ("i", [()]),
])
def test_errors_match_mlx(fn, subscripts, shapes):
    assert_same_error(lambda m: getattr(m, fn)(subscripts, *[m.ones(s) for s in shapes]))


@needs_mlx
def test_argument_type_errors_match_mlx():
    assert_same_error(lambda m: m.einsum(3, m.ones(2)))
    assert_same_error(lambda m: m.einsum("i,i", m.ones(2), 2))
    assert_same_error(lambda m: m.einsum("i,i", m.ones(2), [1.0, 2.0]))
    assert_same_error(lambda m: m.einsum_path("i,i", m.ones(2), np.ones(2)))


def test_output_letter_missing_from_inputs_is_named():
    """MLX fails inside a transpose it builds wrongly; mlxref names the letter.
    einsum_path reports the path all the same, as MLX does."""
    with pytest.raises(ValueError, match=r"\[einsum\] Output subscript 'k'"):
        mx.einsum("ij->ik", mx.ones((2, 3)))
    assert mx.einsum_path("ij->ik", mx.ones((2, 3)))[0] == [(0,)]


def test_non_ascii_subscript_is_named():
    with pytest.raises(ValueError, match="ASCII"):
        mx.einsum("ÿi", mx.ones((2, 3)))


def test_composed_of_existing_ops():
    """No primitive of its own: a contraction is a matmul, a repeat a gather."""
    out = mx.einsum("ij,jk", mx.ones((2, 3)), mx.ones((3, 4)))
    diagonal = mx.einsum("ii->i", mx.ones((3, 3)))
    kinds = set()

    def walk(x):
        if x.has_primitive():
            kinds.add(type(x.primitive()).__name__)
            for i in x.inputs():
                walk(i)

    walk(out)
    assert "Matmul" in kinds
    walk(diagonal)
    assert "Gather" in kinds
    assert not any("Einsum" in k for k in kinds)
