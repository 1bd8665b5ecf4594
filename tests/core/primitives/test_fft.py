"""Tests of ``mx.fft``: the FFT primitive and the transforms composed of it.

Values are checked against the DFT written out from its definition and
against real MLX (values, dtypes, shapes), and so are the vjp, jvp and vmap
rules, over real and complex inputs, several shapes, negative axes and
sizes ``n`` above and below the axis's. Errors are MLX's. The kernel follows
MLX's pocketfft plans in float32, so its results are compared bit for bit
with MLX's: every length up to 64, Bluestein lengths, every axes and norm
case, and impulses whose exact quarter-turn roots show in the last bit.
"""

import cmath
import math
import random
import re
import struct

import pytest

import mlxref.core as mx
from mlxref.core.backend.cpu import pocketfft
from mlxref.core.primitives.fft import FFT
from support import assert_array, assert_same_as_mlx, needs_mlx, real_mx

RNG = random.Random(0)


def raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def reals(shape):
    return [RNG.uniform(-2, 2) for _ in range(math.prod(shape))], shape


def complexes(shape):
    return [complex(RNG.uniform(-2, 2), RNG.uniform(-2, 2))
            for _ in range(math.prod(shape))], shape


def both(data, dtype=None):
    """The same input as an mlxref array and a real-MLX array."""
    values, shape = data
    ours = mx.array(values, dtype).reshape(shape)
    name = {"bool": "bool_"}.get(dtype.name, dtype.name) if dtype else None
    theirs = real_mx.array(values, getattr(real_mx, name) if dtype else None)
    return ours, theirs.reshape(shape)


def dft(x, sign=-1):
    """The DFT from its definition: X_k = sum_j x_j exp(sign 2 pi i j k / n)."""
    n = len(x)
    return [sum(x[j] * cmath.exp(sign * 2j * math.pi * j * k / n) for j in range(n))
            for k in range(n)]


# --- the transform of one line -------------------------------------------------------


def close_to(ours, want, x):
    """Within float32's rounding of an n-point transform of ``x``."""
    bound = 1e-5 * (1 + sum(abs(v) for v in x))
    return len(ours) == len(want) and all(abs(a - b) < bound for a, b in zip(ours, want))


# lengths: powers of two (radix 8, 4, 2), 3 5 7 11 (their own butterflies), 13 and 17
# (the generic prime step), mixed, and 89, 191 (Bluestein: complex, then real too)
PLAN_LENGTHS = [1, 2, 3, 4, 5, 7, 8, 11, 12, 13, 16, 17, 30, 64, 77, 89, 100, 191]


@pytest.mark.parametrize("n", PLAN_LENGTHS)
def test_the_float32_plans_agree_with_the_definition(n):
    x = complexes((n,))[0]
    for forward, sign in ((True, -1), (False, 1)):
        assert close_to(pocketfft.complex_line(x, forward), dft(x, sign), x)
    r = reals((n,))[0]
    spectrum = dft(r)
    halfcomplex = [spectrum[0].real] + [part for v in spectrum[1:n // 2 + 1]
                                        for part in (v.real, v.imag)][: n - 1]
    assert close_to(pocketfft.real_line(r, True), halfcomplex, r)
    # backward: the halfcomplex spectrum of r back to n * r
    assert close_to(pocketfft.real_line(halfcomplex, False), [n * v for v in r], halfcomplex)
    assert pocketfft.uses_bluestein(n, False) == (n in (89, 191))
    assert pocketfft.uses_bluestein(n, True) == (n == 191)


def test_the_roots_of_unity_are_exact_at_the_eighth_turns():
    # pocketfft folds each angle into the first eighth of a turn: the roots on
    # the axes are exactly 1, i, -1, -i (cmath.exp(2j * pi / 4) is 6e-17 + 1j),
    # and the eighth-turn roots have equal parts
    for n in (4, 8, 12, 16, 24, 40, 64, 96):
        table = pocketfft.roots(n)
        assert table[0] == 1 and table[n // 4] == 1j and table[n // 2] == -1
        assert table[3 * n // 4] == -1j
        if n % 8 == 0:
            for k in (n // 8, 3 * n // 8, 5 * n // 8, 7 * n // 8):
                assert abs(table[k].real) == abs(table[k].imag)
    # every root is a float32 value within float32's rounding of exp(2 pi i k / n)
    for n in (7, 13, 64, 100):
        for k, w in enumerate(pocketfft.roots(n)):
            assert abs(w - cmath.exp(2j * math.pi * k / n)) < 1e-7
            assert struct.unpack("f", struct.pack("f", w.real))[0] == w.real


def test_fft_values_from_the_definition():
    x = [1.0, 2.0, 3.0, -1.0, 0.5]
    assert_array(mx.fft.fft(mx.array(x)), dft(x), mx.complex64, (5,))
    # ifft divides by n; rfft keeps n // 2 + 1 frequencies
    assert_array(mx.fft.ifft(mx.array(x)), [v / 5 for v in dft(x, 1)], mx.complex64, (5,))
    assert_array(mx.fft.rfft(mx.array(x)), dft(x)[:3], mx.complex64, (3,))
    # n pads with zeros or crops
    assert_array(mx.fft.fft(mx.array(x), n=8), dft(x + [0.0] * 3), mx.complex64, (8,))
    assert_array(mx.fft.fft(mx.array(x), n=3), dft(x[:3]), mx.complex64, (3,))


def test_irfft_reads_half_a_hermitian_spectrum():
    half = [1 + 1j, 2 + 3j, 4 - 1j]
    # n = 4: X3 = conj(X1); only the real parts of X0 and X2 are read
    full = [1, 2 + 3j, 4, 2 - 3j]
    want = [v.real / 4 for v in dft(full, 1)]
    assert_array(mx.fft.irfft(mx.array(half)), want, mx.float32, (4,))
    # n = 5 (odd): X3 = conj(X2), X4 = conj(X1), X2's imaginary part is read
    full = [1, 2 + 3j, 4 - 1j, 4 + 1j, 2 - 3j]
    want = [v.real / 5 for v in dft(full, 1)]
    assert_array(mx.fft.irfft(mx.array(half), n=5), want, mx.float32, (5,))


def test_one_node_with_mlx_parameters():
    x = mx.ones((2, 3))
    out = mx.fft.rfft(x, axis=0)
    assert isinstance(out.primitive(), FFT)
    assert out.primitive().params() == {"axes": (0,), "inverse": False, "real": True}
    inv = mx.fft.irfft(mx.fft.rfft(x), n=3)
    assert inv.primitive().params() == {"axes": (1,), "inverse": True, "real": True, "n": 3}
    # norm is a multiply after the node
    assert isinstance(mx.fft.fft(x, norm="ortho").inputs()[0].primitive(), FFT)
    # no axes: the input itself (as MLX: no cast)
    same = mx.fft.fftn(x, axes=[])
    assert same.dtype is mx.float32 and same.shape == (2, 3)


# --- against real MLX --------------------------------------------------------------


ONE_AXIS = [
    ("fft", (7,), {}), ("fft", (3, 4), {"axis": 0}), ("fft", (2, 5), {"n": 8}),
    ("fft", (2, 5), {"n": 3, "axis": -1, "norm": "ortho"}),
    ("ifft", (4, 3), {"axis": -2, "norm": "forward"}), ("ifft", (6,), {"n": 9}),
    ("rfft", (8,), {}), ("rfft", (3, 5), {"axis": 0, "norm": "ortho"}),
    ("rfft", (2, 5), {"n": 4}), ("rfft", (2, 3), {"n": 7}),
    ("irfft", (5,), {}), ("irfft", (3, 4), {"n": 5}), ("irfft", (4, 2), {"n": 3, "axis": 0}),
    ("irfft", (2, 3), {"n": 8, "norm": "forward"}),
]
MANY_AXES = [
    ("fft2", (3, 4), {}), ("fft2", (2, 3, 4), {"s": (2, 6), "axes": (0, 2)}),
    ("ifft2", (3, 4), {"norm": "ortho"}), ("fftn", (2, 3, 2), {}),
    ("fftn", (2, 3, 4), {"s": [3, 2], "axes": [-1, 0]}), ("ifftn", (3, 2, 2), {"axes": [1]}),
    ("rfft2", (4, 6), {}), ("rfft2", (2, 3, 5), {"s": (3, 4), "axes": (-3, -1)}),
    ("rfftn", (2, 3, 4), {}), ("rfftn", (3, 5), {"axes": [1, 0], "norm": "forward"}),
    ("irfft2", (3, 4), {}), ("irfft2", (2, 3, 3), {"s": (4, 5), "axes": (0, 1)}),
    ("irfftn", (2, 2, 3), {}), ("irfftn", (3, 4), {"s": [2, 7], "axes": [0, 1]}),
    ("fft2", (2, 3), {"axes": None}),
]


@needs_mlx
@pytest.mark.parametrize("name,shape,kwargs", ONE_AXIS + MANY_AXES)
@pytest.mark.parametrize("kind", ["float32", "complex64"])
def test_values_dtypes_and_shapes_match_mlx(name, shape, kwargs, kind):
    data = reals(shape) if kind == "float32" else complexes(shape)
    ours, theirs = both(data)
    assert_same_as_mlx(getattr(mx.fft, name)(ours, **kwargs),
                       getattr(real_mx.fft, name)(theirs, **kwargs), rtol=1e-4, atol=1e-4)


# --- MLX's bits: pocketfft's float32 steps, followed one by one ------------------------


def bits(a):
    """The float32 bit patterns of an array's elements (real, then imaginary part)."""
    flat = a.reshape(-1).tolist()
    parts = [part for v in flat for part in ((v.real, v.imag) if isinstance(v, complex) else (v,))]
    return struct.unpack(f"{len(parts)}I", struct.pack(f"{len(parts)}f", *parts))


def assert_same_bits(ours, theirs):
    assert ours.shape == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).split(".")[-1]
    assert bits(ours) == bits(theirs), f"mlxref: {ours.tolist()}\nMLX:    {theirs.tolist()}"


@pytest.mark.mlx
@needs_mlx
def test_quarter_turns_are_exact_as_in_mlx():
    # the transform of a unit impulse at 1 is the roots of unity themselves:
    # exactly 1, -+i, -1, +-i, with no 6e-17 left where cos(pi / 2) was computed
    for name, values, exact in [("ifft", [0, 4, 0, 0], [1, 1j, -1, -1j]),
                                ("fft", [0.0, 1, 0, 0], [1, -1j, -1, 1j]),
                                ("rfft", [0.0, 1, 0, 0], [1, -1j, -1]),
                                ("fft", [0.0, 0, 1, 0, 0, 0, 0, 0], [1, -1j, -1, 1j] * 2)]:
        ours, theirs = both((values, (len(values),)))
        out = getattr(mx.fft, name)(ours)
        assert out.tolist() == exact
        assert_same_bits(out, getattr(real_mx.fft, name)(theirs))
    ours, theirs = both(([1.0, 2.0, 3.0, 4.0], (4,)))
    assert_same_bits(mx.fft.ifft(mx.fft.fft(ours)), real_mx.fft.ifft(real_mx.fft.fft(theirs)))
    # impulses of lengths whose plans multiply by twiddle factors at the quarter
    # turns (not only by a butterfly's exact rotation): a root with a stray 6e-17
    # shows in the last bit of some of these
    for n in (12, 16):
        for position in range(n):
            ours, theirs = both(([float(k == position) for k in range(n)], (n,)))
            for name in ("fft", "ifft", "rfft"):
                assert_same_bits(getattr(mx.fft, name)(ours), getattr(real_mx.fft, name)(theirs))


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("n", list(range(1, 65)) + [89, 127, 191])
def test_every_length_up_to_64_gives_mlxs_bits(n):
    # 89 and 127: Bluestein for complex lines; 191: for real lines too
    x, r = both(complexes((3, n))), both(reals((3, n)))
    half = both(complexes((3, n // 2 + 1)))
    for name, (ours, theirs), kwargs in [("fft", x, {}), ("ifft", x, {}), ("rfft", r, {}),
                                         ("irfft", half, {"n": n})]:
        assert_same_bits(getattr(mx.fft, name)(ours, **kwargs),
                         getattr(real_mx.fft, name)(theirs, **kwargs))


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("name,shape,kwargs", ONE_AXIS + MANY_AXES)
@pytest.mark.parametrize("kind", ["float32", "complex64"])
def test_every_axis_and_norm_gives_mlxs_bits(name, shape, kwargs, kind):
    # the axes in MLX's order, the 1/n scale rounded to float32 and multiplied
    # in by the first axis's transforms, float32 between the axes
    data = reals(shape) if kind == "float32" else complexes(shape)
    ours, theirs = both(data)
    assert_same_bits(getattr(mx.fft, name)(ours, **kwargs),
                     getattr(real_mx.fft, name)(theirs, **kwargs))


@needs_mlx
@pytest.mark.parametrize("dtype", [mx.int32, mx.bool_, mx.float16, mx.bfloat16, mx.float64,
                                   mx.uint8])
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "ifft"])
def test_input_dtypes_become_complex64_or_float32_as_in_mlx(dtype, name):
    ours, theirs = both(([1, 0, 1, 1], (4,)), dtype)
    assert_same_as_mlx(getattr(mx.fft, name)(ours), getattr(real_mx.fft, name)(theirs))


@needs_mlx
def test_rfft_of_a_complex_input_reads_its_real_part():
    ours, theirs = both(complexes((5,)))
    assert_same_as_mlx(mx.fft.rfft(ours), real_mx.fft.rfft(theirs))
    assert_same_as_mlx(mx.fft.rfft(ours), mx.fft.rfft(mx.real(ours)))


@needs_mlx
@pytest.mark.parametrize("shape,kwargs", [((0, 4), {}), ((0, 4), {"n": 2}), ((2, 0, 3), {})])
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft"])
def test_empty_inputs(shape, kwargs, name):
    ours, theirs = both(([], shape))
    assert_same_as_mlx(getattr(mx.fft, name)(ours, **kwargs),
                       getattr(real_mx.fft, name)(theirs, **kwargs))


@needs_mlx
@pytest.mark.parametrize("shape,axes", [((5,), None), ((4,), 0), ((2, 5), None), ((3, 4), [1]),
                                        ((3, 5, 2), (-1, 0)), ((), None), ((3,), [])])
def test_fftshift_and_ifftshift_match_mlx(shape, axes):
    ours, theirs = both(reals(shape))
    for name in ("fftshift", "ifftshift"):
        assert_same_as_mlx(getattr(mx.fft, name)(ours, axes),
                           getattr(real_mx.fft, name)(theirs, axes))
    assert_same_as_mlx(mx.fft.ifftshift(mx.fft.fftshift(ours, axes), axes), theirs)


@needs_mlx
@pytest.mark.parametrize("n,d", [(1, 1.0), (4, 1.0), (5, 0.1), (8, 2), (7, -0.5), (3, True)])
def test_fftfreq_and_rfftfreq_match_mlx(n, d):
    assert_same_as_mlx(mx.fft.fftfreq(n, d), real_mx.fft.fftfreq(n, d))
    assert_same_as_mlx(mx.fft.rfftfreq(n, d), real_mx.fft.rfftfreq(n, d))
    assert_same_as_mlx(mx.fft.fftfreq(n), real_mx.fft.fftfreq(n))


# --- rules ---------------------------------------------------------------------------


RULES = [
    ("fft", (3, 5), {"n": 7, "axis": 0}, "complex"), ("fft", (3, 5), {"n": 4}, "real"),
    ("ifft", (3, 5), {"norm": "ortho"}, "complex"), ("rfft", (3, 5), {}, "real"),
    ("rfft", (3, 4), {"n": 6, "axis": 1}, "real"), ("rfft", (3, 5), {"axis": 0}, "real"),
    ("irfft", (3, 5), {}, "complex"), ("irfft", (3, 5), {"n": 5}, "complex"),
    ("irfft", (3, 5), {"n": 3, "axis": 0, "norm": "forward"}, "complex"),
    ("irfft", (3, 5), {}, "real"),
    ("rfft2", (3, 5), {"s": [4, 6]}, "real"), ("irfft2", (3, 5), {}, "complex"),
    ("irfftn", (3, 5), {"s": [2, 7], "axes": [0, 1]}, "complex"),
    ("fft2", (3, 5), {}, "complex"), ("fftn", (2, 3, 2), {"axes": [-1, 0]}, "real"),
]


def _rule_inputs(shape, kind):
    data = reals(shape) if kind == "real" else complexes(shape)
    return both(data)


def _like(out, values_out):
    """Random values (real or complex, as ``out``) for both libraries."""
    shape = tuple(out.shape)
    data = complexes(shape) if out.dtype == real_mx.complex64 else reals(shape)
    return both(data)


@needs_mlx
@pytest.mark.parametrize("name,shape,kwargs,kind", RULES)
def test_vjp_matches_mlx(name, shape, kwargs, kind):
    ours, theirs = _rule_inputs(shape, kind)
    f_ours = lambda a: getattr(mx.fft, name)(a, **kwargs)  # noqa: E731
    f_theirs = lambda a: getattr(real_mx.fft, name)(a, **kwargs)  # noqa: E731
    cot_ours, cot_theirs = _like(f_theirs(theirs), None)
    _, (g_ours,) = mx.vjp(f_ours, [ours], [cot_ours])
    _, (g_theirs,) = real_mx.vjp(f_theirs, [theirs], [cot_theirs])
    assert_same_as_mlx(g_ours, g_theirs, rtol=1e-4, atol=1e-4)


@needs_mlx
@pytest.mark.parametrize("name,shape,kwargs,kind", RULES)
def test_jvp_is_the_transform_of_the_tangent(name, shape, kwargs, kind):
    ours, theirs = _rule_inputs(shape, kind)
    t_ours, t_theirs = _rule_inputs(shape, kind)
    f_ours = lambda a: getattr(mx.fft, name)(a, **kwargs)  # noqa: E731
    f_theirs = lambda a: getattr(real_mx.fft, name)(a, **kwargs)  # noqa: E731
    _, (j_ours,) = mx.jvp(f_ours, [ours], [t_ours])
    assert_same_as_mlx(j_ours, f_theirs(t_theirs), rtol=1e-4, atol=1e-4)
    odd_irfft = name.startswith("irfft") and (kwargs.get("n") or kwargs.get("s", [4])[-1]) % 2
    if not odd_irfft:
        _, (j_theirs,) = real_mx.jvp(f_theirs, [theirs], [t_theirs])
        assert_same_as_mlx(j_ours, j_theirs, rtol=1e-4, atol=1e-4)


@needs_mlx
def test_mlx_jvp_of_an_odd_irfft_loses_a_point():
    # MLX's FFT::jvp recomputes the size from the tangent: 2 (m - 1), even.
    ours, theirs = _rule_inputs((3,), "complex")
    _, (j_theirs,) = real_mx.jvp(lambda a: real_mx.fft.irfft(a, n=5), [theirs], [theirs])
    _, (j_ours,) = mx.jvp(lambda a: mx.fft.irfft(a, n=5), [ours], [ours])
    assert j_theirs.shape == (4,) and j_ours.shape == (5,)


def test_grad_through_a_real_input_is_real():
    x = mx.array([1.0, 2.0, 3.0])
    # sum_k Re X_k = n x_0: the gradient is (n, 0, 0)
    assert_array(mx.grad(lambda a: mx.real(mx.fft.fft(a)).sum())(x), [3.0, 0.0, 0.0],
                 mx.float32)


@needs_mlx
@pytest.mark.parametrize("name,shape,kwargs,kind", RULES)
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_vmap_matches_mlx_and_a_loop(name, shape, kwargs, kind, in_axis):
    batch = 3
    ours, theirs = _rule_inputs(shape[:in_axis] + (batch,) + shape[in_axis:] if in_axis >= 0
                                else shape + (batch,), kind)
    f_ours = lambda a: getattr(mx.fft, name)(a, **kwargs)  # noqa: E731
    f_theirs = lambda a: getattr(real_mx.fft, name)(a, **kwargs)  # noqa: E731
    got = mx.vmap(f_ours, in_axes=in_axis)(ours)
    assert_same_as_mlx(got, real_mx.vmap(f_theirs, in_axes=in_axis)(theirs), rtol=1e-4,
                       atol=1e-4)
    loop = mx.stack([f_ours(mx.take(ours, i, axis=in_axis)) for i in range(batch)], 0)
    assert_array(got, loop.tolist(), rtol=1e-5, atol=1e-5)


def test_vmap_of_an_odd_irfft_keeps_n():
    x = mx.array([[1 + 1j, 2.0, 3 - 1j], [0.5, 1j, 2.0]])
    got = mx.vmap(lambda a: mx.fft.irfft(a, n=5))(x)
    assert got.shape == (2, 5)
    assert_array(got, [mx.fft.irfft(x[i], n=5).tolist() for i in range(2)])


@needs_mlx
def test_second_derivative_and_grad_of_stft_and_istft():
    x_ours, x_theirs = both(reals((12,)))

    def loss(m, a):
        return m.abs(m.fft.stft(a, n_fft=4, hop_length=2)).sum()

    g = mx.grad(lambda a: loss(mx, a))(x_ours)
    assert_same_as_mlx(g, real_mx.grad(lambda a: loss(real_mx, a))(x_theirs), 1e-4, 1e-4)
    s_ours = mx.fft.stft(x_ours, n_fft=4, hop_length=2)
    s_theirs = real_mx.fft.stft(x_theirs, n_fft=4, hop_length=2)

    def back(m, z):
        return (m.fft.istft(z, hop_length=2) * m.arange(12)).sum()

    assert_same_as_mlx(mx.grad(lambda z: back(mx, z))(s_ours),
                       real_mx.grad(lambda z: back(real_mx, z))(s_theirs), 1e-4, 1e-4)
    # the fft's vjp is itself differentiable: grad of grad of a quadratic form
    f = lambda m: lambda a: m.grad(lambda b: (m.abs(m.fft.rfft(b)) ** 2).sum())(a).sum()  # noqa: E731
    assert_same_as_mlx(mx.grad(f(mx))(x_ours), real_mx.grad(f(real_mx))(x_theirs), 1e-4, 1e-3)


# --- stft and istft ------------------------------------------------------------------


STFT = [
    ((20,), {"n_fft": 8}), ((2, 20), {"n_fft": 8, "hop_length": 3, "window": "hann"}),
    ((2, 20), {"n_fft": 7, "hop_length": 2, "win_length": 5, "pad_mode": "edge"}),
    ((20,), {"n_fft": 6, "center": False, "norm": "ortho"}),
    ((3, 1, 16), {"n_fft": 6, "pad_mode": "constant", "onesided": False}),
    ((4,), {"n_fft": 8}),  # a reflect padding as long as the input
]


def _window(kwargs, m):
    kwargs = dict(kwargs)
    if kwargs.get("window") == "hann":
        kwargs["window"] = m.array([0.0, 0.35, 0.9, 0.9, 0.35, 0.0])
    return kwargs


@needs_mlx
@pytest.mark.parametrize("shape,kwargs", STFT)
def test_stft_and_istft_match_mlx(shape, kwargs):
    ours, theirs = both(reals(shape))
    s_ours = mx.fft.stft(ours, **_window(kwargs, mx))
    s_theirs = real_mx.fft.stft(theirs, **_window(kwargs, real_mx))
    assert_same_as_mlx(s_ours, s_theirs, 1e-4, 1e-4)
    inverse = {k: v for k, v in _window(kwargs, mx).items() if k != "pad_mode"}
    inverse_theirs = {k: v for k, v in _window(kwargs, real_mx).items() if k != "pad_mode"}
    assert_same_as_mlx(mx.fft.istft(s_ours, **inverse, length=shape[-1]),
                       real_mx.fft.istft(s_theirs, **inverse_theirs, length=shape[-1]),
                       1e-4, 1e-4)
    assert_same_as_mlx(mx.fft.istft(s_ours, **inverse), real_mx.fft.istft(s_theirs,
                                                                          **inverse_theirs),
                       1e-4, 1e-4)


@needs_mlx
def test_stft_of_a_complex_signal_is_two_sided():
    ours, theirs = both(complexes((19,)))
    s_ours = mx.fft.stft(ours, n_fft=5, hop_length=2)
    assert_same_as_mlx(s_ours, real_mx.fft.stft(theirs, n_fft=5, hop_length=2), 1e-4, 1e-4)
    assert s_ours.shape == (5, 10)
    assert_same_as_mlx(mx.fft.istft(s_ours, n_fft=5, hop_length=2, onesided=False),
                       real_mx.fft.istft(real_mx.fft.stft(theirs, n_fft=5, hop_length=2),
                                         n_fft=5, hop_length=2, onesided=False), 1e-4, 1e-4)


# --- errors --------------------------------------------------------------------------


ERRORS = [
    lambda m: m.fft.fft(m.array([1.0, 2.0]), n=0),
    lambda m: m.fft.rfft(m.ones((2, 3)), n=-2, axis=0),
    lambda m: m.fft.fft(m.array(1.0), n=2),
    lambda m: m.fft.fftn(m.array(1.0)),
    lambda m: m.fft.rfft(m.array([1.0]), n=2, axis=-2),
    lambda m: m.fft.fftn(m.ones((2, 2)), axes=[0, -2]),
    lambda m: m.fft.fftn(m.ones((2, 2)), s=[2, 2], axes=[1, 3]),
    lambda m: m.fft.fftn(m.ones((2, 2)), s=[2], axes=[0, 1]),
    lambda m: m.fft.rfftn(m.ones((2, 2)), s=[0, 2], axes=[0, 1]),
    lambda m: m.fft.fftn(m.ones((2, 2)), s=[2]),
    lambda m: m.fft.irfft2(m.ones((2, 2)), s=[2, 2], axes=None),
    lambda m: m.fft.ifft(m.ones((2,)), norm="bad"),
    lambda m: m.fft.irfftn(m.ones((2, 2)), norm="Ortho"),
    lambda m: m.fft.fft([1.0, 2.0]),
    lambda m: m.fft.fft(m.ones((2,)), n=2.0),
    lambda m: m.fft.fft(m.ones((2,)), n=2**40),
    lambda m: m.fft.rfft(m.ones((2,)), axis=None),
    lambda m: m.fft.fft2(m.ones((2, 2)), s=2),
    lambda m: m.fft.fftn(m.ones((2, 2)), axes=0),
    lambda m: m.fft.rfftn(m.ones((2, 2)), norm=None),
    lambda m: m.fft.fftshift(m.ones((2,)), axes=[0, 5]),
    lambda m: m.fft.ifftshift(m.ones((2, 2)), axes=-3),
    lambda m: m.fft.fftshift(m.ones((2,)), axes="a"),
    lambda m: m.fft.fftfreq(0),
    lambda m: m.fft.rfftfreq(-3),
    lambda m: m.fft.fftfreq(3, 0.0),
    lambda m: m.fft.rfftfreq(2, d=0),
    lambda m: m.fft.fftfreq(2.5),
    lambda m: m.fft.rfftfreq(4, d="a"),
    lambda m: m.fft.stft(m.ones((2, 3)), n_fft=8, center=False),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=8, pad_mode="wrap"),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=0),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=4, hop_length=0),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=4, window=m.ones((2, 2))),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=4, window=m.ones((5,))),
    lambda m: m.fft.stft(m.array(1.0), n_fft=4),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=4, norm="bad"),
    lambda m: m.fft.stft(m.ones((20,)), n_fft=4.0),
    lambda m: m.fft.istft(m.ones((3,))),
    lambda m: m.fft.istft(m.ones((1, 3))),
    lambda m: m.fft.istft(m.ones((5, 3)), hop_length=0),
    lambda m: m.fft.istft(m.ones((5, 3)), window=m.ones((9,))),
    lambda m: m.fft.istft(m.ones((5, 3)), center=1),
]


def _error(f, m):
    with pytest.raises(Exception) as info:
        m.eval(f(m))
    return type(info.value), str(info.value)


@needs_mlx
@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_mlx(case):
    assert _error(ERRORS[case], mx) == _error(ERRORS[case], real_mx)


@needs_mlx
@pytest.mark.parametrize("f", [lambda m: m.fft.fft(m.array(1.0)),
                               lambda m: m.fft.ifft(m.ones((2,)), axis=1),
                               lambda m: m.fft.fft2(m.ones((3,)))])
def test_an_axis_outside_the_array_names_it(f):
    # MLX reads past the shape ("SmallVector out of range."); mlxref says which axis.
    kind, message = _error(f, mx)
    assert kind is _error(f, real_mx)[0] is IndexError
    assert re.fullmatch(r"\[i?fft2?\] Invalid axis -?\d for array with \d dimensions\.", message)


@needs_mlx
def test_numpy_integers_are_ints_as_in_mlx():
    np = pytest.importorskip("numpy")
    for m in (mx, real_mx):
        assert m.fft.irfft(m.ones((4,)), n=np.int64(5)).shape == (5,)
        assert m.fft.fftn(m.ones((4, 3)), s=(np.int32(2), 3), axes=[np.int64(0), -1]).shape \
            == (2, 3)
        assert m.fft.fftshift(m.arange(4), axes=np.int64(0)).tolist() == [2, 3, 0, 1]
    assert _error(lambda m: m.fft.fft(m.ones((2,)), n=np.float32(2)), mx) == _error(
        lambda m: m.fft.fft(m.ones((2,)), n=np.float32(2)), real_mx)
