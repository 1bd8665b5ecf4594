"""The quantized family (mlxref/core/primitives/quantized.py, backend/cpu/quantized.py;
MLX's mlx/backend/cpu/quantized.cpp): quantize and dequantize in all four of MLX's modes,
the fp8 conversions, and the quantized products (quantized_matmul, gather_qmm, qqmm,
gather_qqmm), with real MLX as the oracle.

The packed words, scales and biases must be MLX's bit for bit: "affine" for
every bits value (1-6, 8) and group size (32, 64, 128), float32, float16 and
bfloat16 inputs, constant groups, nans and infs; "mxfp4", "mxfp8" and "nvfp4"
(with and without a global scale). dequantize must give MLX's values and
dtype for every mode, with its argument checks and messages; gradients,
jvps and vmaps are those of the compositions MLX differentiates.

The products' forward values are MLX's CPU results bit for bit where mlxref
follows its kernel step by step (in float32, float16 and bfloat16); gradients
agree to a tolerance. Transform rules MLX lacks raise its messages; where MLX is
silently wrong or crashes, mlxref raises a clear error instead.
"""

import math

import pytest

import mlxref.core as mx
from support import (assert_array, assert_same_array, assert_same_as_mlx, assert_same_error, both,
                     check_rule_mlx_lacks, error_of, needs_mlx, random_rows, real_mx)

AFFINE_BITS = [1, 2, 3, 4, 5, 6, 8]
FLOATS = ["float32", "float16", "bfloat16"]


def _matrix(lib, rows, dtype):
    return lib.array(rows).astype(getattr(lib, dtype))


# --- affine: quantize bit for bit, and the round trip --------------------------------


@needs_mlx
@pytest.mark.parametrize("bits", AFFINE_BITS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_affine_quantize_and_round_trip_are_mlx_bit_for_bit(bits, dtype):
    rows = random_rows((3, 256), bits, scale=2.5)
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
        assert_same_array(ours, theirs)


@needs_mlx
def test_affine_defaults_batches_of_matrices_and_keywords():
    rows = random_rows((2, 3, 128), 7)
    ours, theirs = both(lambda lib: lib.quantize(lib.array(rows)))  # 64 and 4
    assert_same_array(ours, theirs)
    assert ours[0].shape == (2, 3, 16) and ours[1].shape == (2, 3, 2)
    ours, theirs = both(lambda lib: lib.dequantize(
        *lib.quantize(lib.array(rows), bits=6, group_size=32), bits=6, group_size=32,
        dtype=lib.float16))
    assert_same_array(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("mode", ["affine", "mxfp4"])
def test_quantize_returns_a_list_as_mlx_does(mode):
    ours, theirs = both(lambda lib: lib.quantize(lib.ones((1, 32)), 32, 4, mode))
    assert type(theirs) is list and type(ours) is list
    assert len(ours) == len(theirs)


@needs_mlx
def test_nans_and_infs_are_skipped_as_mlx_kernel_skips_them():
    """MLX's CPU kernel takes a group's max and min with std::max / std::min,
    which pass over nans; an inf makes its group's scale inf."""
    rows = random_rows((4, 64), 3)
    rows[0][0] = math.inf
    rows[1][5] = math.nan
    rows[2][:32] = [math.nan] * 32
    rows[3][:] = [1e30] * 64
    ours, theirs = both(lambda lib: lib.quantize(lib.array(rows), 32, 4))
    assert_same_array(ours, theirs)


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
            s = lib.array(random_rows((2, n), bits)).astype(lib.float16)
            b = lib.array(random_rows((2, n), bits + 1))
            return lib.dequantize(w, s, b, group_size, bits)

        out = both(build)
        if out is not None:
            assert_same_array(*out)
    ours, theirs = both(lambda lib: lib.dequantize(
        lib.array(words, lib.uint32), lib.ones((2, 4)), lib.array([[0.5], [2.0]]), 32, 4))
    assert_same_array(ours, theirs)


# --- the fp modes ---------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("mode", ["mxfp4", "mxfp8", "nvfp4"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_fp_modes_quantize_and_dequantize_as_mlx(mode, dtype):
    rows = random_rows((4, 64), 11, scale=3.0)
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
    assert_same_array(ours, theirs)


@needs_mlx
def test_nvfp4_global_scale():
    rows = random_rows((2, 32), 5, scale=4.0)

    def build(lib):
        g = lib.array(0.75)
        q = lib.quantize(lib.array(rows), mode="nvfp4", global_scale=g)
        return list(q) + [lib.dequantize(*q, mode="nvfp4", global_scale=g,
                                         dtype=lib.float32)]

    assert_same_array(*both(build))


# --- errors -----------------------------------------------------------------------------


W = random_rows((2, 64), 1)
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
    rows = random_rows((2, 64), 9)

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

    assert_same_array(*both(w_grad))

    def fp_grad(lib):  # MLX: from_fp8 has no vjp
        f = lambda w: lib.dequantize(*lib.quantize(w, mode="mxfp8"), mode="mxfp8",  # noqa: E731
                                     dtype=lib.float32).sum()
        return lib.grad(f)(lib.array(rows))

    assert assert_same_error(fp_grad)[1] == "[Primitive::vjp] Not implemented for FromFP8."


@needs_mlx
def test_jvp_and_vmap_match_mlx():
    rows = random_rows((2, 3, 64), 4)

    def jvp(lib):
        q, s, b = lib.quantize(lib.array(rows), 32, 5)
        t = lib.array(random_rows((2, 3, 2), 8))
        return lib.jvp(lambda s: lib.dequantize(q, s, b, 32, 5), [s], [t])[1][0]

    assert_same_as_mlx(*both(jvp))
    ours, theirs = both(lambda lib: lib.vmap(
        lambda w: lib.quantize(w, 32, 6), in_axes=1)(lib.array(rows)))
    assert_same_array(ours, theirs)
    ours, theirs = both(lambda lib: lib.vmap(
        lambda q, s, b: lib.dequantize(q, s, b, 32, 6))(*lib.quantize(lib.array(rows), 32, 6)))
    assert_same_array(ours, theirs)


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


# --- fp8 (e4m3) codes: from_fp8 and to_fp8 ---------------------------------------------


def _e4m3(code):
    """The value of an fp8 e4m3 code, from the format's definition (0x7F, 0xFF: nan)."""
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 3) & 0xF, code & 7
    if exponent == 15 and mantissa == 7:
        return sign * math.nan
    if exponent == 0:
        return sign * mantissa / 8 * 2.0**-6
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7)


def test_from_fp8_decodes_every_code():
    codes = mx.array(list(range(256)), mx.uint8)
    assert mx.from_fp8(codes).dtype == mx.bfloat16  # MLX's default
    for dtype in (mx.float32, mx.float16, mx.bfloat16):
        got = mx.from_fp8(codes, dtype)
        assert got.dtype == dtype
        want = [_e4m3(c) for c in range(256)]
        assert repr(got.tolist()) == repr(want)
    assert mx.from_fp8(mx.array(0xFF, mx.uint8), mx.float32).item() != 0  # nan
    assert math.copysign(1, mx.from_fp8(mx.array([0xFF], mx.uint8), mx.float32).tolist()[0]) == -1


@needs_mlx
def test_fp8_conversions_are_bit_exact_with_mlx():
    codes = list(range(256))
    for dtype in ("float32", "float16", "bfloat16"):
        ours = mx.from_fp8(mx.array(codes, mx.uint8), getattr(mx, dtype))
        theirs = real_mx.from_fp8(real_mx.array(codes, real_mx.uint8), getattr(real_mx, dtype))
        assert repr(ours.tolist()) == repr(theirs.tolist())
    # every code's value, the midpoints between them (ties to even), values
    # beyond 448 (saturation), subnormals, infinities, nan and random floats
    exact = sorted({v for v in (_e4m3(c) for c in codes) if not math.isnan(v)})
    values = exact + [(a + b) / 2 for a, b in zip(exact, exact[1:])]
    values += [464.0, 463.9, 480.0, 1e6, math.inf, -math.inf, math.nan, 2.0**-10, 3 * 2.0**-10,
               2.0**-10 * 1.001, 2.0**-12, -(2.0**-7), 1e-40, -0.0]
    rng = __import__("random").Random(3)
    values += [rng.uniform(-520, 520) for _ in range(400)] + [rng.uniform(-0.03, 0.03)
                                                              for _ in range(400)]
    for dtype in ("float32", "float16", "bfloat16"):
        x = mx.array(values).astype(getattr(mx, dtype))
        y = real_mx.array(values).astype(getattr(real_mx, dtype))
        assert mx.to_fp8(x).tolist() == real_mx.to_fp8(y).tolist(), dtype
        assert mx.to_fp8(x).dtype == mx.uint8


def test_fp8_round_trip_saturation_and_transforms():
    x = mx.array([1.0, 500.0, -1e9, math.inf, math.nan, 0.3, -0.0])
    assert mx.to_fp8(x).tolist() == [0x38, 0x7E, 0xFE, 0x7E, 0x7E, 0x2A, 0x80]
    assert mx.from_fp8(mx.to_fp8(x), mx.float32).tolist()[:4] == [1.0, 448.0, -448.0, 448.0]
    with pytest.raises(ValueError, match=r"^\[Primitive::vjp\] Not implemented for FromFP8\.$"):
        mx.grad(lambda a: mx.from_fp8(mx.to_fp8(a), mx.float32).sum())(mx.array([1.0]))
    with pytest.raises(ValueError, match=r"^\[Primitive::jvp\] Not implemented for ToFP8\.$"):
        mx.jvp(mx.to_fp8, [mx.array([1.0])], [mx.array([1.0])])
    # vmap, which MLX lacks: elementwise, the batch axis stays put
    batched = mx.vmap(mx.to_fp8, in_axes=1)(mx.array([[1.0, 2.0], [0.5, 448.0]]))
    assert batched.tolist() == mx.to_fp8(mx.array([[1.0, 0.5], [2.0, 448.0]])).tolist()


def test_fp8_of_float64_is_a_clear_error():
    """MLX's CPU kernel reads float64 bytes as float32 (and writes float32 into a
    float64 output): garbage, so mlxref refuses."""
    with pytest.raises(ValueError, match=r"\[to_fp8\] float64 input is not supported"):
        mx.to_fp8(mx.array([1.0], mx.float64))
    with pytest.raises(ValueError, match=r"\[from_fp8\] dtype float64 is not supported"):
        mx.from_fp8(mx.array([56], mx.uint8), mx.float64)


# === the quantized products =========================================================

# (mode, group_size, bits) of every quantization MLX's CPU kernels multiply with
QUANTIZATIONS = [("affine", 32, 1), ("affine", 64, 2), ("affine", 32, 3), ("affine", 128, 4),
                 ("affine", 32, 5), ("affine", 64, 6), ("affine", 32, 8),
                 ("mxfp4", 32, 4), ("mxfp8", 32, 8), ("nvfp4", 16, 4)]


def _quantized(lib, shape, mode, group_size, bits, dtype="float32", seed=1):
    w = lib.array(random_rows(shape, seed)).astype(getattr(lib, dtype))
    q = lib.quantize(w, group_size, bits, mode)
    return q[0], q[1], (q[2] if mode == "affine" else None)


# --- quantized_matmul: values ------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("mode,group_size,bits", QUANTIZATIONS)
@pytest.mark.parametrize("transpose", [True, False])
def test_quantized_matmul_is_mlx_bit_for_bit(mode, group_size, bits, transpose):
    dtype = FLOATS[(bits + transpose) % 3]  # every mode meets every dtype over the bits
    k, n = (group_size * 2, 8) if transpose else (group_size, group_size * 2)

    def build(lib):
        wq, scales, biases = _quantized(lib, (n, k) if transpose else (k, n), mode,
                                        group_size, bits, dtype, seed=bits)
        x = lib.array(random_rows((3, k), 7)).astype(getattr(lib, dtype))
        return lib.quantized_matmul(x, wq, scales, biases, transpose, group_size, bits, mode)

    ours, theirs = both(build)
    assert_same_array(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("x_shape,w_batch", [
    ((64,), ()), ((2, 3, 64), ()), ((2, 3, 64), (2,)), ((4, 1, 3, 64), (2,)), ((3, 64), (2,)),
    ((0, 3, 64), ()),
])
def test_quantized_matmul_shapes_follow_mlx(x_shape, w_batch):
    def build(lib):
        wq, scales, biases = _quantized(lib, w_batch + (8, 64), "affine", 32, 4)
        x = lib.array(random_rows((max(1, math.prod(x_shape)),), 3))[:math.prod(x_shape)]
        return lib.quantized_matmul(x.reshape(x_shape), wq, scales, biases, group_size=32)

    ours, theirs = both(build)
    assert_same_array(ours, theirs)


@needs_mlx
def test_quantized_matmul_promotes_x_with_affine_scales_but_not_in_fp_modes():
    def build(lib):
        wq, scales, biases = _quantized(lib, (8, 64), "affine", 32, 4)
        x = lib.array([list(range(64))])
        fq, fs, _ = _quantized(lib, (8, 64), "mxfp4", 32, 4)
        return [lib.quantized_matmul(x.astype(lib.float16), wq, scales, biases, group_size=32),
                lib.quantized_matmul(x, wq, scales.astype(lib.float16), biases, group_size=32),
                lib.quantized_matmul(x.astype(lib.bfloat16), fq, fs, mode="mxfp4")]

    for ours, theirs in zip(*both(build)):
        assert_same_array(ours, theirs)


def _qmm_error_cases():
    def setup(lib):
        wq, scales, biases = _quantized(lib, (8, 64), "affine", 32, 4)
        return lib.array(random_rows((2, 64), 2)), wq, scales, biases

    def case(f):
        return lambda lib: f(lib, *setup(lib))

    return {
        "w not uint32": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, s, s, b)),
        "biases shape": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, w, s, b[:, :1])),
        "scales shape": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, w, s, b,
                                                                          group_size=64)),
        "inner dims": case(lambda lib, x, w, s, b: lib.quantized_matmul(x[:, :32], w, s, b,
                                                                        group_size=32)),
        "batch": case(lambda lib, x, w, s, b: lib.quantized_matmul(
            x, lib.stack([w, w]), s[None], b[None], group_size=32)),
        "no biases": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, w, s,
                                                                       group_size=32)),
        "mode": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, w, s, b, mode="fp4")),
        "fp scales": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, w, s, mode="mxfp4")),
        "fp biases": case(lambda lib, x, w, s, b: lib.quantized_matmul(
            x, w, s.astype(lib.uint8), b, mode="mxfp8")),
        "int x fp": case(lambda lib, x, w, s, b: lib.quantized_matmul(
            x.astype(lib.int32), *_quantized(lib, (8, 64), "mxfp4", 32, 4)[:2], mode="mxfp4")),
        "0-d x": case(lambda lib, x, w, s, b: lib.quantized_matmul(x[0, 0], w, s, b,
                                                                    group_size=32)),
        "bool transpose": case(lambda lib, x, w, s, b: lib.quantized_matmul(x, w, s, b, 1)),
        # raised by MLX's kernel, when evaluated
        "float64": case(lambda lib, x, w, s, b: lib.eval(lib.quantized_matmul(
            x.astype(lib.float64), w, s, b, group_size=32))),
        "group 16": case(lambda lib, x, w, s, b: lib.eval(lib.quantized_matmul(
            x, w, lib.concatenate([s, s], 1), lib.concatenate([b, b], 1), group_size=16))),
        "bits 7": case(lambda lib, x, w, s, b: lib.eval(lib.quantized_matmul(
            x[:, :32], lib.zeros((8, 7), lib.uint32), s, b, group_size=16, bits=7))),
    }


@needs_mlx
@pytest.mark.parametrize("name", list(_qmm_error_cases()))
def test_quantized_matmul_errors_are_mlx(name):
    program = _qmm_error_cases()[name]
    if name != "bool transpose":
        assert_same_error(program)
        return
    # the binding's TypeError: its list of the given types depends on how the
    # call was spelled, which mlxref cannot see; the rest is MLX's
    ours, theirs = error_of(lambda: program(mx)), error_of(lambda: program(real_mx))
    assert ours[0] is theirs[0] is TypeError
    assert ours[1].split("Invoked")[0] == theirs[1].split("Invoked")[0]


def test_where_mlx_fails_quantized_matmul_raises_a_clear_error():
    wq, scales, biases = _quantized(mx, (8, 64), "affine", 32, 4)
    with pytest.raises(ValueError, match="quantized_matmul.*no rows"):  # MLX: SIGFPE
        mx.quantized_matmul(mx.zeros((0, 64)), wq, scales, biases, group_size=32)
    fq, fs, _ = _quantized(mx, (8, 64), "mxfp4", 32, 4)
    with pytest.raises(ValueError, match="mxfp4 quantization requires group size 32 but got 64"):
        mx.quantized_matmul(mx.zeros((1, 64)), fq, fs[:, :1], group_size=64, mode="mxfp4")


# --- quantized_matmul: rules ---------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("transpose", [True, False])
def test_quantized_matmul_vjp_is_mlx_for_x_scales_and_biases(transpose):
    _assert_affine_grads_are_mlx((8, 64) if transpose else (64, 32), (2, 3, 64),
                                 lambda lib, x, w, s, b: lib.quantized_matmul(
                                     x, w, s, b, transpose, 32))


def _assert_affine_grads_are_mlx(w_shape, x_shape, product):
    """The gradients of a weighted sum of ``product(lib, x, w, scales,
    biases)`` for x, the scales and the biases are MLX's."""
    def build(lib):
        wq, scales, biases = _quantized(lib, w_shape, "affine", 32, 4)
        x = lib.array(random_rows(x_shape, 5))
        weights = lib.array(random_rows(product(lib, x, wq, scales, biases).shape, 6))

        def loss(x, s, b):
            return (product(lib, x, wq, s, b) * weights).sum()

        return lib.grad(loss, (0, 1, 2))(x, scales, biases)

    for ours, theirs in zip(*both(build)):
        assert_same_as_mlx(ours, theirs, rtol=1e-4, atol=1e-4)


@needs_mlx
def test_quantized_matmul_jvp_for_x_and_the_missing_rules_are_mlx():
    def build(lib):
        wq, scales, biases = _quantized(lib, (8, 64), "affine", 32, 4)
        x, t = lib.array(random_rows((3, 64), 1)), lib.array(random_rows((3, 64), 2))
        return lib.jvp(lambda x: lib.quantized_matmul(x, wq, scales, biases, group_size=32),
                       [x], [t])[1][0]

    assert_same_as_mlx(*both(build), rtol=1e-5, atol=1e-5)

    def rule(kind):
        def program(lib):
            wq, scales, biases = _quantized(lib, (8, 64), "affine", 32, 4)
            fq, fs, _ = _quantized(lib, (8, 64), "nvfp4", 16, 4)
            x = lib.ones((3, 64))
            if kind == "grad w":
                return lib.grad(lambda w: lib.quantized_matmul(x, w, scales, biases,
                                                               group_size=32).sum())(wq)
            if kind == "grad fp scales":
                return lib.grad(lambda s: lib.quantized_matmul(x, fq, s, mode="nvfp4").sum())(fs)
            if kind == "jvp scales":
                return lib.jvp(lambda s: lib.quantized_matmul(x, wq, s, biases, group_size=32),
                               [scales], [scales])
            return lib.vmap(lambda x: lib.quantized_matmul(x, wq, scales, biases, group_size=32))(
                lib.ones((2, 3, 64)))
        return program

    assert assert_same_error(rule("grad w"))[0] is RuntimeError
    assert assert_same_error(rule("grad fp scales"))[0] is ValueError


# --- gather_qmm ------------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("mode,group_size,bits", [QUANTIZATIONS[1], *QUANTIZATIONS[7:]])
@pytest.mark.parametrize("transpose", [True, False])
def test_gather_qmm_is_mlx_bit_for_bit(mode, group_size, bits, transpose):
    def build(lib):
        shape = (3, 16, 64) if transpose else (3, 64, 64)
        wq, scales, biases = _quantized(lib, shape, mode, group_size, bits)
        x = lib.array(random_rows((2, 5, 64), 4))
        return [lib.gather_qmm(x, wq, scales, biases, lib.array([0, 1, 1, 0]),
                               lib.array([2, 0, 1, 1]), transpose, group_size, bits, mode),
                lib.gather_qmm(x[:1], wq, scales, biases, None, lib.array([[0], [2]]),
                               transpose, group_size, bits, mode, sorted_indices=True)]

    for ours, theirs in zip(*both(build)):
        assert_same_array(ours, theirs)


@needs_mlx
@pytest.mark.parametrize("lhs,rhs,batch,is_sorted", [
    ([0, 1, 3, 3], [2, 0, 1, 1], 4, False),
    (None, [0, 1, 1, 2], 4, True),
    (None, [0, 0, 1, 2, 2, 2], 6, True),
])
def test_gather_qmm_vjp_is_mlx(lhs, rhs, batch, is_sorted):
    _assert_affine_grads_are_mlx(
        (3, 16, 64), (batch, 2, 64), lambda lib, x, w, s, b: lib.gather_qmm(
            x, w, s, b, None if lhs is None else lib.array(lhs), lib.array(rhs), group_size=32,
            sorted_indices=is_sorted))


@needs_mlx
def test_gather_qmm_errors_and_missing_rules_are_mlx():
    def setup(lib):
        wq, scales, biases = _quantized(lib, (2, 8, 64), "affine", 32, 4)
        return lib.ones((2, 1, 64)), wq, scales, biases

    programs = [
        lambda lib: lib.gather_qmm(*setup(lib), lhs_indices=lib.array([0.5])),
        lambda lib: lib.gather_qmm(lib.ones((64,)), *setup(lib)[1:], lhs_indices=lib.array([0])),
        lambda lib: lib.gather_qmm(*setup(lib), lib.array([0, 1]), lib.array([0, 1, 1])),
        lambda lib: lib.gather_qmm(*setup(lib)[:3], mode="affine", rhs_indices=lib.array([0])),
        lambda lib: lib.grad(lambda w: lib.gather_qmm(
            setup(lib)[0], w, *setup(lib)[2:], None, lib.array([1])).sum())(setup(lib)[1]),
    ]
    for i, program in enumerate(programs):
        assert_same_error(program), i
    # with no indices it is quantized_matmul
    ours, theirs = both(lambda lib: lib.gather_qmm(*setup(lib), group_size=32))
    assert_same_array(ours, theirs)


# --- qqmm and gather_qqmm ---------------------------------------------------------------


@needs_mlx
@pytest.mark.parametrize("mode", ["nvfp4", "mxfp4", "mxfp8"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_qqmm_of_one_row_is_mlx_bit_for_bit(mode, dtype):
    def build(lib):
        wq, scales, _ = _quantized(lib, (8, 64), mode, None, None)
        x = lib.array(random_rows((1, 64), 3, scale=2.0)).astype(getattr(lib, dtype))
        return [lib.qqmm(x, wq, scales, mode=mode), lib.qqmm(x[0], wq, scales, mode=mode),
                lib.qqmm(x[None], wq, scales, mode=mode)]

    for ours, theirs in zip(*both(build)):
        assert_same_array(ours, theirs)


def _qqmm_error_cases():
    def setup(lib, mode="nvfp4"):
        wq, scales, _ = _quantized(lib, (8, 64), mode, None, None)
        return lib.array(random_rows((2, 64), 3)), wq, scales

    return {
        "general case": lambda lib: lib.eval(lib.qqmm(*setup(lib))),
        "float w": lambda lib: lib.eval(lib.qqmm(setup(lib)[0][:1], lib.ones((8, 64)))),
        "no scales": lambda lib: lib.qqmm(setup(lib)[0], setup(lib)[1]),
        "mode": lambda lib: lib.qqmm(*setup(lib), mode="int4"),
        "3-D w": lambda lib: lib.qqmm(setup(lib)[0], lib.ones((2, 8, 64))),
        "float64 x": lambda lib: lib.qqmm(setup(lib)[0].astype(lib.float64), lib.ones((8, 64))),
        "int w": lambda lib: lib.qqmm(setup(lib)[0], lib.ones((8, 64), lib.int32)),
        "inner": lambda lib: lib.qqmm(setup(lib)[0], lib.ones((8, 32))),
        "one global scale": lambda lib: lib.qqmm(*setup(lib), global_scale_x=lib.array(1.0)),
        "global scale shape": lambda lib: lib.qqmm(*setup(lib), global_scale_x=lib.ones((2,)),
                                                   global_scale_w=lib.array(1.0)),
        "global scale fp": lambda lib: lib.qqmm(*setup(lib, "mxfp8"), mode="mxfp8",
                                                global_scale_x=lib.array(1.0)),
        "jvp": lambda lib: lib.jvp(lambda x: lib.qqmm(x, *setup(lib)[1:]),
                                   [lib.ones((1, 64))], [lib.ones((1, 64))]),
        "vjp": lambda lib: lib.grad(lambda x: lib.qqmm(x, *setup(lib)[1:]).sum())(
            lib.ones((1, 64))),
        "vmap": lambda lib: lib.vmap(lambda x: lib.qqmm(x, *setup(lib)[1:]))(lib.ones((2, 1, 64))),
        "gather": lambda lib: lib.eval(lib.gather_qqmm(setup(lib)[0], *setup(lib)[1:],
                                                       lib.array([0]))),
        "gather vjp": lambda lib: lib.grad(lambda x: lib.gather_qqmm(
            x, *setup(lib)[1:]).sum())(lib.ones((1, 64))),
    }


@needs_mlx
@pytest.mark.parametrize("name", list(_qqmm_error_cases()))
def test_qqmm_errors_are_mlx(name):
    assert_same_error(_qqmm_error_cases()[name])


def test_qqmm_in_affine_mode_is_a_clear_error():
    # MLX reads the affine codes as fp4 values and returns garbage
    wq, scales, _ = _quantized(mx, (8, 64), "affine", 32, 4)
    with pytest.raises(ValueError, match=r"\[qqmm\] mode 'affine' is not supported"):
        mx.qqmm(mx.ones((1, 64)), wq, scales, mode="affine", group_size=32)


# --- the rules MLX lacks ------------------------------------------------------------------
#
# MLX has no jvp for GatherQMM (nor for QuantizedMatmul's scales and biases), and
# no vmap for either. mlxref's rules (checked symbolically by mlxref check-rules)
# must give what the same program computes without the transform.


def _w(lib):
    return _quantized(lib, (2, 8, 64), "affine", 32, 4)


def _pairs(lib):
    return lib.array([2, 0, 1]), lib.array([1, 1, 0])


RULES_MLX_LACKS = {
    "quantized_matmul jvp for scales and biases": (
        lambda lib: lib.jvp(lambda s, b: lib.quantized_matmul(
            lib.array(random_rows((3, 64), 3)), _w(lib)[0][0], s, b, group_size=32),
            [_w(lib)[1][0], _w(lib)[2][0]], [lib.ones((8, 2)), lib.full((8, 2), 0.5)])[1][0],
        lambda lib: lib.quantized_matmul(lib.array(random_rows((3, 64), 3)), _w(lib)[0][0],
                                         lib.ones((8, 2)), lib.full((8, 2), 0.5), group_size=32)),
    "quantized_matmul vmap": (
        lambda lib: lib.vmap(lambda x, s: lib.quantized_matmul(
            x, _w(lib)[0][0], s, _w(lib)[2][0], group_size=32), in_axes=(1, 0))(
            lib.array(random_rows((3, 2, 64), 3)), _w(lib)[1]),
        lambda lib: lib.stack([lib.quantized_matmul(
            lib.array(random_rows((3, 2, 64), 3))[:, i], _w(lib)[0][0], _w(lib)[1][i],
            _w(lib)[2][0], group_size=32) for i in range(2)])),
    "gather_qmm jvp": (
        lambda lib: lib.jvp(lambda x: lib.gather_qmm(x, *_w(lib), *_pairs(lib), group_size=32),
                            [lib.array(random_rows((3, 1, 64), 3))],
                            [lib.ones((3, 1, 64))])[1][0],
        lambda lib: lib.gather_qmm(lib.ones((3, 1, 64)), *_w(lib), *_pairs(lib), group_size=32)),
    "gather_qmm vmap": (
        lambda lib: lib.vmap(lambda x: lib.gather_qmm(x, *_w(lib), *_pairs(lib), group_size=32))(
            lib.array(random_rows((2, 3, 1, 64), 3))),
        lambda lib: lib.stack([lib.gather_qmm(lib.array(random_rows((2, 3, 1, 64), 3))[i],
                                              *_w(lib), *_pairs(lib), group_size=32)
                               for i in range(2)])),
}


@pytest.mark.parametrize("name", list(RULES_MLX_LACKS))
def test_rules_mlx_lacks_give_what_the_program_computes(name):
    check_rule_mlx_lacks(*RULES_MLX_LACKS[name])


def test_gather_qqmm_of_one_row_is_each_pairs_qqmm():
    # MLX's CPU build raises "[GatherQQMM] NYI" for every gather_qqmm;
    # mlxref evaluates what QQMatmul's CPU kernel can: one row per matrix
    wq, scales, _ = _quantized(mx, (2, 8, 64), "nvfp4", None, None)
    x = mx.array(random_rows((3, 1, 64), 5))
    got = mx.gather_qqmm(x, wq, scales, mx.array([0, 2]), mx.array([1, 1]))
    for i, (a, b) in enumerate([(0, 1), (2, 1)]):
        assert_array(got[i], mx.qqmm(x[a], wq[b], scales[b]).tolist(), rtol=0, atol=0)
