"""The masked and gathered matrix products (mlxref/core/primitives/masked_mm.py,
backend/cpu/masked_mm.py; MLX's mlx/backend/cpu/masked_mm.cpp): gather_mm,
block_masked_mm and segmented_mm, with real MLX as the oracle.

The half types' products are MLX's CPU results bit for bit; the float32 BLAS
products are formed as mlxref's matmul forms them (in double, rounded once:
the last bits may differ); gradients agree to a tolerance. Transform rules MLX
lacks raise its messages; where MLX is silently wrong or crashes, mlxref raises
a clear error instead.
"""

import math
import random

import pytest

import mlxref.core as mx
from support import (assert_array, assert_same_array, assert_same_as_mlx, assert_same_error, both,
                     check_rule_mlx_lacks, needs_mlx, random_rows, real_mx)


def assert_sgemm(ours, theirs):
    """A BLAS product: float32 ones to the last bits (formed in double here),
    the half types' bit for bit."""
    if ours.dtype is mx.float32:
        assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5)
    else:
        assert_same_array(ours, theirs)


# --- gather_mm -------------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("a_shape,b_shape,lhs,rhs", [
    ((3, 4, 5), (2, 5, 6), [0, 2, 1], [1, 0, 1]),
    ((3, 4, 5), (2, 5, 6), [[0], [2]], [1, 0, 1]),
    ((2, 4, 5), (2, 5, 6), None, [1, 0]),
    ((3, 4, 5), (1, 5, 6), [1, 0], None),
    ((5,), (2, 5, 6), None, [1, 0]),
    ((3, 4, 5), (5,), [2, 0], None),
    ((2, 3, 0), (2, 0, 4), [0, 1], [1, 1]),
])
def test_gather_mm_is_mlx(a_shape, b_shape, lhs, rhs):
    def build(lib):
        a = lib.array(random_rows((math.prod(a_shape) or 1,), 1))[:math.prod(a_shape)].reshape(
            a_shape)
        b = lib.array(random_rows((math.prod(b_shape) or 1,), 2))[:math.prod(b_shape)].reshape(
            b_shape)
        return lib.gather_mm(a, b, None if lhs is None else lib.array(lhs),
                             None if rhs is None else lib.array(rhs))

    assert_sgemm(*both(build))


@needs_mlx
def test_sgemm_products_follow_mlx_float32_sums_where_they_overflow():
    # [3e38, 3e38, -3e38] . [1, 1, 1]: MLX's float32 accumulator reaches inf
    def build(lib):
        a = lib.array([[[3e38, 3e38, -3e38]]])
        b = lib.ones((1, 3, 1))
        idx = lib.array([0])
        return [lib.gather_mm(a, b, idx, idx),
                lib.block_masked_mm(a, b, 32, lib.array([[True]])),
                lib.segmented_mm(a[0], b[0], lib.array([[0, 3]]))]

    for ours, theirs in zip(*both(build)):
        assert_same_array(ours, theirs)
        assert ours.reshape(-1).tolist() == [math.inf]


@needs_mlx
@pytest.mark.parametrize("lhs,rhs,batch,is_sorted", [
    ([0, 1, 3, 3], [2, 0, 1, 1], 4, False),
    ([[0], [1]], [2, 0, 1], 4, False),
    (None, [0, 1, 1, 2], 4, True),
    (None, [0, 0, 1, 2, 2, 2], 6, True),
])
def test_gather_mm_vjp_is_mlx(lhs, rhs, batch, is_sorted):
    def build(lib):
        a, b = lib.array(random_rows((batch, 3, 5), 1)), lib.array(random_rows((3, 5, 6), 2))
        lhs_ = None if lhs is None else lib.array(lhs)
        out_shape = lib.gather_mm(a, b, lhs_, lib.array(rhs)).shape
        weights = lib.array(random_rows(out_shape, 3))

        def loss(a, b):
            return (lib.gather_mm(a, b, lhs_, lib.array(rhs), sorted_indices=is_sorted)
                    * weights).sum()

        return lib.grad(loss, (0, 1))(a, b)

    for ours, theirs in zip(*both(build)):
        assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5)


@needs_mlx
def test_gather_mm_errors_and_missing_rules_are_mlx():
    def ab(lib, dtype="float32"):
        return (lib.ones((3, 4, 5), getattr(lib, dtype)), lib.ones((2, 5, 6), getattr(lib, dtype)))

    idx = (lambda lib: lib.array([0, 1]))
    programs = [
        lambda lib: lib.eval(lib.gather_mm(*ab(lib, "float16"), idx(lib), idx(lib))),
        lambda lib: lib.gather_mm(*ab(lib, "int32"), idx(lib), idx(lib)),
        lambda lib: lib.gather_mm(*ab(lib), idx(lib).astype(lib.float32), idx(lib)),
        lambda lib: lib.gather_mm(ab(lib)[0], ab(lib)[0], idx(lib), idx(lib)),
        lambda lib: lib.gather_mm(lib.array(1.0), ab(lib)[1], idx(lib), idx(lib)),
        lambda lib: lib.gather_mm(*ab(lib), idx(lib), lib.array([0, 1, 1])),
        lambda lib: lib.gather_mm(*ab(lib), idx(lib), idx(lib), sorted_indices=1),
        lambda lib: lib.grad(lambda i: lib.gather_mm(*ab(lib), i, idx(lib)).sum())(idx(lib)),
    ]
    for i, program in enumerate(programs):
        assert_same_error(program), i


def test_gather_mm_indices_out_of_range_are_a_clear_error():
    # MLX's kernel reads past its buffers
    with pytest.raises(IndexError, match=r"\[gather_mm\] Index \(1, 7\) out of range"):
        mx.eval(mx.gather_mm(mx.ones((3, 4, 5)), mx.ones((2, 5, 6)), mx.array([0, 1]),
                             mx.array([1, 7])))


# --- block_masked_mm ------------------------------------------------------------------


def _block_inputs(lib, kind):
    a, b = lib.array(random_rows((2, 40, 70), 1)), lib.array(random_rows((70, 50), 2))
    rng = random.Random(9)
    if kind == "bool":  # (b is shared by the batch: its mask must be too, see below)
        masks = [lib.array([[[rng.random() > 0.4 for _ in range(c)] for _ in range(r)]
                            for _ in range(n)]) for r, c, n in ((2, 2, 2), (2, 3, 2), (3, 2, 1))]
    else:
        masks = [lib.array(random_rows(shape, s)) for s, shape in
                 ((3, (2, 2, 2)), (4, (2, 2, 3)), (5, (3, 2)))]
    return a, b, masks


@needs_mlx
@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("which", ["out", "operands", "all", "lhs"])
def test_block_masked_mm_is_mlx(kind, which):
    def build(lib):
        a, b, (mo, ml, mr) = _block_inputs(lib, kind)
        masks = {"out": (mo, None, None), "operands": (None, ml, mr), "all": (mo, ml, mr),
                 "lhs": (None, ml, None)}[which]
        return lib.block_masked_mm(a, b, 32, *masks)

    assert_sgemm(*both(build))


@needs_mlx
def test_block_masked_mm_vectors_nans_and_block_64_are_mlx():
    def build(lib):
        a, b, (mo, ml, mr) = _block_inputs(lib, "bool")
        return [lib.block_masked_mm(a[0, 0], b, 32, lib.array([True, False]),
                                    lib.array([True, False, True]), mr[0]),
                lib.block_masked_mm(a * float("nan"), b, 32, mo, ml, mr),
                lib.block_masked_mm(a, b, 64, lib.array([[False]]))]

    for ours, theirs in zip(*both(build)):
        assert_sgemm(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("argnums", [(0, 1), (0, 1, 2, 3, 4), (0, 1, 3), (2, 4)])
def test_block_masked_mm_vjp_is_mlx(argnums):
    def build(lib):
        a, b, masks = _block_inputs(lib, "float")
        weights = lib.array(random_rows((2, 40, 50), 8))

        def loss(*args):
            return (lib.block_masked_mm(args[0], args[1], 32, *args[2:]) * weights).sum()

        return lib.grad(loss, argnums)(a, b, *masks)

    mask_out = _block_inputs(real_mx, "float")[2][0]
    for i, ours, theirs in zip(argnums, *both(build)):
        if i == 2:  # MLX's is the gradient times the mask (it uses the masked product)
            ours = ours * mx.array(mask_out.tolist())
        assert_same_as_mlx(ours, theirs, rtol=1e-4, atol=1e-3)


def test_block_masked_mm_out_mask_gradient_is_the_unmasked_product():
    a, b, (mo, ml, mr) = _block_inputs(mx, "float")
    grad = mx.grad(lambda o: mx.block_masked_mm(a, b, 32, o, ml, mr).sum())(mo)
    product = mx.pad(mx.block_masked_mm(a, b, 32, None, ml, mr), [(0, 0), (0, 24), (0, 14)])
    want = product.reshape(2, 2, 32, 2, 32).sum((2, 4))
    assert_array(grad, want.tolist(), rtol=1e-4, atol=1e-3)


@needs_mlx
def test_block_masked_mm_bool_mask_vjp_and_errors_are_mlx():
    def build(lib):
        a, b, (mo, ml, mr) = _block_inputs(lib, "bool")
        return lib.grad(lambda a, b: lib.block_masked_mm(a, b, 32, mo, ml, mr).sum(),
                        (0, 1))(a, b)

    for ours, theirs in zip(*both(build)):
        assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-4)

    def inputs(lib):
        return _block_inputs(lib, "bool")

    programs = [
        lambda lib: lib.block_masked_mm(*inputs(lib)[:2], 16, inputs(lib)[2][0]),
        lambda lib: lib.block_masked_mm(*inputs(lib)[:2], 32, lib.ones((3, 3), lib.bool_)),
        lambda lib: lib.block_masked_mm(lib.array(1.0), inputs(lib)[1], 32, inputs(lib)[2][0]),
        lambda lib: lib.block_masked_mm(inputs(lib)[0], inputs(lib)[0], 32, inputs(lib)[2][0]),
        lambda lib: lib.block_masked_mm(lib.ones((4, 4), lib.int32), lib.ones((4, 4), lib.int32),
                                        32, lib.array([[True]])),
        lambda lib: lib.eval(lib.block_masked_mm(inputs(lib)[0].astype(lib.float16),
                                                 inputs(lib)[1].astype(lib.float16), 32,
                                                 inputs(lib)[2][0])),
        lambda lib: lib.grad(lambda m: lib.block_masked_mm(
            *inputs(lib)[:2], 32, None, m, inputs(lib)[2][2]).sum())(inputs(lib)[2][1]),
    ]
    for i, program in enumerate(programs):
        assert_same_error(program), i


@needs_mlx
def test_block_masked_mm_bool_masks_of_a_broadcast_operand_are_a_clear_error():
    # MLX masks the one buffer a broadcast b shares, once per batch: the
    # second batch sees both batches' masks
    def build(lib, materialize):
        a, b, (mo, ml, _) = _block_inputs(lib, "bool")
        mr = lib.array([[[False, True], [True, True], [True, True]],
                        [[True, True], [True, True], [True, True]]])
        b = b * lib.ones((2, 1, 1)) if materialize else b
        return lib.block_masked_mm(a, b, 32, None, ml, mr)

    ours, right = build(mx, False), build(real_mx, True)
    assert_sgemm(build(mx, True), right)
    assert build(real_mx, False)[0].tolist() == right[0].tolist()  # batch 0 is right
    assert build(real_mx, False)[1].tolist() != right[1].tolist()  # batch 1 is not
    with pytest.raises(ValueError, match=r"boolean mask_rhs differs along a batch that b"):
        mx.eval(ours)


# --- segmented_mm --------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_segmented_mm_is_mlx(dtype):
    def build(lib):
        a = lib.array(random_rows((3, 10), 1)).astype(getattr(lib, dtype))
        b = lib.array(random_rows((10, 4), 2)).astype(getattr(lib, dtype))
        if dtype != "float32":  # one row, or segments spanning K: where MLX's half kernel is right
            return [lib.segmented_mm(a[:1], b, lib.array([[0, 3], [3, 10], [5, 5], [6, 2]])),
                    lib.segmented_mm(a, b, lib.array([[0, 10], [4, 4]]))]
        return [lib.segmented_mm(a, b, lib.array([[0, 3], [3, 10], [5, 5], [6, 2]])),
                lib.segmented_mm(a, b, lib.array([[[0, 1], [1, 3]], [[3, 9], [0, 10]]]))]

    for ours, theirs in zip(*both(build)):
        assert_sgemm(ours, theirs)


@needs_mlx
def test_segmented_mm_float64_and_errors_are_mlx():
    def build(lib):
        a = lib.array(random_rows((3, 10), 1), lib.float64)
        b = lib.array(random_rows((10, 4), 2), lib.float64)
        return lib.segmented_mm(a, b, lib.array([[0, 3], [3, 10]]), stream=lib.cpu)

    assert_same_as_mlx(*both(build), rtol=1e-12, atol=1e-12)
    ab = (lambda lib: (lib.ones((3, 10)), lib.ones((10, 4))))
    programs = [
        lambda lib: lib.segmented_mm(*ab(lib), lib.array([0, 3, 3, 10])),
        lambda lib: lib.segmented_mm(*ab(lib), lib.array([[0.0, 3.0]])),
        lambda lib: lib.segmented_mm(ab(lib)[0][None], ab(lib)[1], lib.array([[0, 3]])),
        lambda lib: lib.segmented_mm(*(x.astype(lib.int32) for x in ab(lib)), lib.array([[0, 3]])),
    ]
    for i, program in enumerate(programs):
        assert_same_error(program), i


def test_where_mlx_segmented_mm_is_wrong_it_raises_a_clear_error():
    a, b = mx.ones((3, 10), mx.float16), mx.ones((10, 4), mx.float16)
    with pytest.raises(ValueError, match=r"\[segmented_mm\] float16 segments shorter"):
        mx.eval(mx.segmented_mm(a, b, mx.array([[0, 3]])))
    with pytest.raises(ValueError, match=r"\[segmented_mm\] Segment \(2, 12\) is out of range"):
        mx.eval(mx.segmented_mm(a.astype(mx.float32), b.astype(mx.float32), mx.array([[2, 12]])))


# --- the rules MLX lacks ------------------------------------------------------------------
#
# MLX has no jvp for GatherMM, BlockMaskedMM and SegmentedMM, no vjp for
# SegmentedMM, and no vmap for any of them. mlxref's rules (checked
# symbolically by mlxref check-rules) must give what the same program computes
# without the transform.


def _ab(lib):
    return lib.array(random_rows((3, 2, 5), 1)), lib.array(random_rows((2, 5, 4), 2))


def _pairs(lib):
    return lib.array([2, 0, 1]), lib.array([1, 1, 0])


def _segments(lib):
    return lib.array([[0, 2], [1, 5], [3, 3]])


RULES_MLX_LACKS = {
    "gather_mm jvp": (
        lambda lib: lib.jvp(lambda a, b: lib.gather_mm(a, b, *_pairs(lib)), list(_ab(lib)),
                            [lib.ones((3, 2, 5)), lib.full((2, 5, 4), 2.0)])[1][0],
        lambda lib: lib.gather_mm(lib.ones((3, 2, 5)), _ab(lib)[1], *_pairs(lib))
        + lib.gather_mm(_ab(lib)[0], lib.full((2, 5, 4), 2.0), *_pairs(lib))),
    "gather_mm vmap": (
        lambda lib: lib.vmap(lambda b: lib.gather_mm(_ab(lib)[0], b, *_pairs(lib)), in_axes=2)(
            lib.array(random_rows((2, 5, 2, 4), 4))),
        lambda lib: lib.stack([lib.gather_mm(_ab(lib)[0], lib.array(random_rows((2, 5, 2, 4), 4))[
            :, :, i], *_pairs(lib)) for i in range(2)])),
    "block_masked_mm jvp": (
        lambda lib: lib.jvp(lambda a, o: lib.block_masked_mm(a, _block_inputs(lib, "float")[1],
                                                             32, o),
                            [_block_inputs(lib, "float")[0], _block_inputs(lib, "float")[2][0]],
                            [lib.ones((2, 40, 70)), lib.ones((2, 2, 2))])[1][0],
        lambda lib: lib.block_masked_mm(lib.ones((2, 40, 70)), _block_inputs(lib, "float")[1],
                                        32, _block_inputs(lib, "float")[2][0])
        + lib.block_masked_mm(*_block_inputs(lib, "float")[:2], 32, lib.ones((2, 2, 2)))),
    "block_masked_mm vmap": (
        lambda lib: lib.vmap(lambda a: lib.block_masked_mm(a, _block_inputs(lib, "float")[1], 32,
                                                           lib.array([[True, False]])))(
            _block_inputs(lib, "float")[0]),
        lambda lib: lib.stack([lib.block_masked_mm(_block_inputs(lib, "float")[0][i],
                                                   _block_inputs(lib, "float")[1], 32,
                                                   lib.array([[True, False]]))
                               for i in range(2)])),
    "segmented_mm vjp": (
        lambda lib: lib.grad(lambda a, b: (lib.segmented_mm(a, b, _segments(lib))
                                           * lib.arange(24).reshape(3, 2, 4)).sum(), (0, 1))(
            lib.array(random_rows((2, 5), 1)), lib.array(random_rows((5, 4), 2))),
        lambda lib: lib.grad(lambda a, b: (lib.stack([
            a[:, s:e] @ b[s:e] for s, e in _segments(lib).tolist()])
            * lib.arange(24).reshape(3, 2, 4)).sum(), (0, 1))(
            lib.array(random_rows((2, 5), 1)), lib.array(random_rows((5, 4), 2)))),
    "segmented_mm jvp": (
        lambda lib: lib.jvp(lambda a: lib.segmented_mm(a, lib.array(random_rows((5, 4), 2)),
                                                       _segments(lib)),
                            [lib.array(random_rows((2, 5), 1))], [lib.ones((2, 5))])[1][0],
        lambda lib: lib.segmented_mm(lib.ones((2, 5)), lib.array(random_rows((5, 4), 2)),
                                     _segments(lib))),
    "segmented_mm vmap": (
        lambda lib: lib.vmap(lambda a: lib.segmented_mm(a, lib.array(random_rows((5, 4), 2)),
                                                        _segments(lib)))(
            lib.array(random_rows((2, 2, 5), 1))),
        lambda lib: lib.stack([lib.segmented_mm(lib.array(random_rows((2, 2, 5), 1))[i],
                                                lib.array(random_rows((5, 4), 2)), _segments(lib))
                               for i in range(2)])),
}


@pytest.mark.parametrize("name", list(RULES_MLX_LACKS))
def test_rules_mlx_lacks_give_what_the_program_computes(name):
    check_rule_mlx_lacks(*RULES_MLX_LACKS[name])
