"""quantize and dequantize in all four of MLX's modes, with real MLX as the oracle.

The packed words, scales and biases must be MLX's bit for bit: "affine" for
every bits value (1-6, 8) and group size (32, 64, 128), float32, float16 and
bfloat16 inputs, constant groups, nans and infs; "mxfp4", "mxfp8" and "nvfp4"
(with and without a global scale). dequantize must give MLX's values and
dtype for every mode, with its argument checks and messages; gradients,
jvps and vmaps are those of the compositions MLX differentiates.
"""

import math
import random

import pytest

import mlxref.core as mx
from support import assert_same_as_mlx, assert_same_error, both, needs_mlx, real_mx

AFFINE_BITS = [1, 2, 3, 4, 5, 6, 8]
FLOATS = ["float32", "float16", "bfloat16"]


def _rows(shape, seed, scale=1.0):
    """Nested lists of random floats (the same for both libraries)."""
    rng = random.Random(seed)
    if len(shape) == 1:
        return [rng.gauss(0.0, scale) for _ in range(shape[0])]
    return [_rows(shape[1:], seed * 31 + i, scale) for i in range(shape[0])]


def _same_values(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_values(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def assert_exact(ours, theirs):
    """Same shape, dtype and elements (nan equal to nan): bit-exact for these."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
    assert _same_values(ours.tolist(), theirs.tolist()), (ours.tolist(), theirs.tolist())


def _assert_all_exact(ours, theirs):
    assert len(ours) == len(theirs)
    for x, y in zip(ours, theirs):
        assert_exact(x, y)


def _matrix(lib, rows, dtype):
    return lib.array(rows).astype(getattr(lib, dtype))


# --- affine: quantize bit for bit, and the round trip --------------------------------


@needs_mlx
@pytest.mark.parametrize("bits", AFFINE_BITS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_affine_quantize_and_round_trip_are_mlx_bit_for_bit(bits, dtype):
    rows = _rows((3, 256), bits, scale=2.5)
    rows[0][:32] = [1.5] * 32  # a constant group: the scale is ±1e-7 or the bias the value
    rows[1][:32] = [0.0] * 32  # a group of zeros
    rows[2][32:64] = [-7.25] * 31 + [0.5]  # the min's magnitude decides
    for group_size in (32, 64, 128):
        def build(lib):
            q = lib.quantize(_matrix(lib, rows, dtype), group_size, bits)
            return list(q) + [lib.dequantize(*q, group_size, bits)]

        ours, theirs = both(build)
        assert ours[0].dtype.name == "uint32" and ours[1].dtype.name == dtype
        assert ours[0].shape == (3, 256 * bits // 32)
        _assert_all_exact(ours, theirs)


@needs_mlx
def test_affine_defaults_batches_of_matrices_and_keywords():
    rows = _rows((2, 3, 128), 7)
    ours, theirs = both(lambda lib: lib.quantize(lib.array(rows)))  # 64 and 4
    _assert_all_exact(ours, theirs)
    assert ours[0].shape == (2, 3, 16) and ours[1].shape == (2, 3, 2)
    ours, theirs = both(lambda lib: lib.dequantize(
        *lib.quantize(lib.array(rows), bits=6, group_size=32), bits=6, group_size=32,
        dtype=lib.float16))
    assert_exact(ours, theirs)


@needs_mlx
def test_nans_and_infs_are_skipped_as_mlx_kernel_skips_them():
    """MLX's CPU kernel takes a group's max and min with std::max / std::min,
    which pass over nans; an inf makes its group's scale inf."""
    rows = _rows((4, 64), 3)
    rows[0][0] = math.inf
    rows[1][5] = math.nan
    rows[2][:32] = [math.nan] * 32
    rows[3][:] = [1e30] * 64
    ours, theirs = both(lambda lib: lib.quantize(lib.array(rows), 32, 4))
    _assert_all_exact(ours, theirs)


@needs_mlx
def test_dequantize_of_given_words_for_any_bits_mlx_unpacks():
    """dequantize checks only bits > 0: 7 and 16 and 32 unpack as MLX's fallback
    does; scales and biases may differ in dtype (their result type wins) and a
    biases' last axis of 1 broadcasts."""
    words = [[(i * 2654435761 + j * 40503) % 2**32 for j in range(16)] for i in range(2)]
    for bits, group_size in [(7, 32), (16, 32), (32, 16), (3, 32), (1, 32), (5, 8)]:
        n = 16 * 32 // bits // group_size

        def build(lib):
            w = lib.array(words, lib.uint32)
            s = lib.array(_rows((2, n), bits)).astype(lib.float16)
            b = lib.array(_rows((2, n), bits + 1))
            return lib.dequantize(w, s, b, group_size, bits)

        out = both(build)
        if out is not None:
            assert_exact(*out)
    ours, theirs = both(lambda lib: lib.dequantize(
        lib.array(words, lib.uint32), lib.ones((2, 4)), lib.array([[0.5], [2.0]]), 32, 4))
    assert_exact(ours, theirs)


# --- the fp modes ---------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("mode", ["mxfp4", "mxfp8", "nvfp4"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_fp_modes_quantize_and_dequantize_as_mlx(mode, dtype):
    rows = _rows((4, 64), 11, scale=3.0)
    rows[0][:32] = [0.0] * 32  # a zero scale
    rows[1][:16] = [448.0 * 6] + [1e-3] * 15

    def build(lib):
        q = lib.quantize(_matrix(lib, rows, dtype), mode=mode)
        outs = [lib.dequantize(*q, mode=mode)]  # bfloat16 by default
        outs += [lib.dequantize(*q, mode=mode, dtype=getattr(lib, t))
                 for t in ("float32", "float16")]
        return list(q) + outs

    ours, theirs = both(build)
    assert [x.dtype.name for x in ours] == ["uint32", "uint8", "bfloat16", "float32", "float16"]
    _assert_all_exact(ours, theirs)


@needs_mlx
def test_nvfp4_global_scale():
    rows = _rows((2, 32), 5, scale=4.0)

    def build(lib):
        g = lib.array(0.75)
        q = lib.quantize(lib.array(rows), mode="nvfp4", global_scale=g)
        return list(q) + [lib.dequantize(*q, mode="nvfp4", global_scale=g,
                                         dtype=lib.float32)]

    _assert_all_exact(*both(build))


# --- errors -----------------------------------------------------------------------------


W = _rows((2, 64), 1)
QUANTIZE_ERRORS = [
    lambda m: m.quantize(m.array(W), 16),
    lambda m: m.quantize(m.array(W), 32, 7),
    lambda m: m.quantize(m.array(W), 32, 9),
    lambda m: m.quantize(m.array(W), True),  # a bool is an int: group size 1
    lambda m: m.quantize(m.array(W), mode="int4"),
    lambda m: m.quantize(m.array(W).astype(m.int32)),
    lambda m: m.quantize(m.array(W[0])),
    lambda m: m.quantize(m.array(W)[:, :40], 32),
    lambda m: m.quantize(m.array(W), group_size=32.0),
    lambda m: m.quantize(m.array(W), global_scale=m.array(1.0)),
    lambda m: m.quantize(m.array(W), mode="nvfp4", global_scale=m.array([1.0, 2.0])),
    lambda m: m.quantize(m.array(W), mode="nvfp4", global_scale=m.array(1.0, m.float16)),
    lambda m: m.quantize(m.array(W), mode="mxfp4", group_size=64),
    lambda m: m.quantize(m.array(W), mode="mxfp8", bits=4),
    lambda m: m.quantize(m.array(W), mode="nvfp4", group_size=32),
    lambda m: m.eval(m.quantize(m.array(W, m.float64), 32, 4)),
]


def _q(m):
    return m.quantize(m.array(W), 32, 4)


DEQUANTIZE_ERRORS = [
    lambda m: m.dequantize(_q(m)[0], _q(m)[1]),
    lambda m: m.dequantize(*_q(m), bits=0),
    lambda m: m.dequantize(*_q(m), group_size=-32),
    lambda m: m.dequantize(*_q(m), 16, 4),
    lambda m: m.dequantize(*_q(m), 32, 7),
    lambda m: m.dequantize(_q(m)[0].astype(m.int32), *_q(m)[1:], 32, 4),
    lambda m: m.dequantize(_q(m)[0][0], _q(m)[1][0], _q(m)[2][0], 32, 4),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1][None], _q(m)[2], 32, 4),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1], _q(m)[2][:1], 32, 4),
    lambda m: m.dequantize(_q(m)[0], *(x.astype(m.int32) for x in _q(m)[1:]), 32, 4),
    lambda m: m.dequantize(*_q(m), 32, 4, dtype=m.int32),
    lambda m: m.dequantize(*_q(m), 32, 4, mode="fp4"),
    lambda m: m.dequantize(*_q(m), mode="mxfp4"),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1], mode="mxfp4"),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1].astype(m.uint8), mode="mxfp4", bits=8),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1].astype(m.uint8), mode="mxfp4", group_size=16),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1][None].astype(m.uint8), mode="mxfp8"),
    lambda m: m.dequantize(*_q(m), global_scale=m.array(2.0)),
    lambda m: m.dequantize(_q(m)[0], 1.0),
    lambda m: m.dequantize(_q(m)[0], _q(m)[1], biases=_q(m)[2], bits=2.0),
]


@needs_mlx
@pytest.mark.parametrize("program", QUANTIZE_ERRORS + DEQUANTIZE_ERRORS)
def test_errors_are_mlx_messages(program):
    assert assert_same_error(program) is not None


def test_dequantize_refuses_more_than_32_bits():
    q = mx.zeros((2, 4), mx.uint32)
    with pytest.raises(ValueError, match="bits=64 does not fit"):
        mx.dequantize(q, mx.ones((2, 1)), mx.zeros((2, 1)), 2, 64)


# --- transforms -------------------------------------------------------------------------


@needs_mlx
def test_gradients_through_quantize_and_dequantize_match_mlx():
    rows = _rows((2, 64), 9)

    def quant_grad(lib):
        def f(w):
            _, s, b = lib.quantize(w, 32, 4)
            return (3 * s + b * b).sum()
        return lib.grad(f)(lib.array(rows))

    assert_same_as_mlx(*both(quant_grad))

    def deq_grads(lib):
        q, s, b = lib.quantize(lib.array(rows), 32, 3)
        def f(s, b):
            return (lib.dequantize(q, s, b, 32, 3) ** 2).sum()
        return lib.grad(f, argnums=(0, 1))(s, b)

    ours, theirs = both(deq_grads)
    for x, y in zip(ours, theirs):
        assert_same_as_mlx(x, y, rtol=1e-5, atol=1e-3)

    def w_grad(lib):  # the words' cotangent: zeros of uint32
        q, s, b = lib.quantize(lib.array(rows), 32, 4)
        return lib.grad(lambda q: lib.dequantize(q, s, b, 32, 4).sum())(q)

    assert_exact(*both(w_grad))

    def fp_grad(lib):  # MLX: from_fp8 has no vjp
        f = lambda w: lib.dequantize(*lib.quantize(w, mode="mxfp8"), mode="mxfp8",  # noqa: E731
                                     dtype=lib.float32).sum()
        return lib.grad(f)(lib.array(rows))

    assert assert_same_error(fp_grad)[1] == "[Primitive::vjp] Not implemented for FromFP8."


@needs_mlx
def test_jvp_and_vmap_match_mlx():
    rows = _rows((2, 3, 64), 4)

    def jvp(lib):
        q, s, b = lib.quantize(lib.array(rows), 32, 5)
        t = lib.array(_rows((2, 3, 2), 8))
        return lib.jvp(lambda s: lib.dequantize(q, s, b, 32, 5), [s], [t])[1][0]

    assert_same_as_mlx(*both(jvp))
    ours, theirs = both(lambda lib: lib.vmap(
        lambda w: lib.quantize(w, 32, 6), in_axes=1)(lib.array(rows)))
    _assert_all_exact(ours, theirs)
    ours, theirs = both(lambda lib: lib.vmap(
        lambda q, s, b: lib.dequantize(q, s, b, 32, 6))(*lib.quantize(lib.array(rows), 32, 6)))
    assert_exact(ours, theirs)


def test_packing_is_a_little_endian_stream_of_fields():
    """Without MLX: 3-bit levels fill the words from the lowest bit up, fields
    straddling words, and dequantize inverts it. The max (7) has the larger
    magnitude, so it is the bias and the scale is -1: level = 7 - value."""
    values = list(range(8)) * 4  # one group of 32
    w = mx.array([values], mx.float32)
    q, s, b = mx.quantize(w, 32, 3)
    assert s.tolist() == [[-1.0]] and b.tolist() == [[7.0]]
    stream = sum((7 - v) << (3 * i) for i, v in enumerate(values))
    assert q.tolist() == [[(stream >> (32 * k)) & 0xFFFFFFFF for k in range(3)]]
    assert mx.dequantize(q, s, b, 32, 3).tolist() == [[float(v) for v in values]]

