"""complex64: construction, printing, the ops MLX allows on it (and its errors
for the others), promotion, reductions, matmul, and gradients in MLX's
convention for complex numbers.

MLX's convention: the jvp multiplies the tangent by f'(z), the vjp multiplies
the cotangent by conj(f'(z)); so the gradient of a real-valued L(z) is
dL/dx + i dL/dy (``grad(|z|^2) = 2 z``). Real MLX is the oracle where it is
installed (``_both`` runs the same program on both libraries, errors
included); the tests that need no MLX compute their expected values from the
inputs with ``cmath``.
"""

import cmath
import math
import re

import pytest

import mlxref.core as mx
from mlxref import symbolic
from mlxref.core import ops
from mlxref.core.primitives import elementwise as E

from support import assert_both, close, flat, needs_mlx, real_mx

inf, nan = math.inf, math.nan
LIBS = [mx] + ([real_mx] if real_mx is not None else [])

Z = [1 + 2j, -0.5 + 0.25j, 3 - 1j, -1.5 - 2.5j]
W = [0.5 - 1j, 2 + 0.5j, -1 + 1j, 0.75 + 0.125j]


# --- comparing with MLX (support.close compares complex numbers part by part) -----------


def _bits(x):
    """Each part's repr: == then tells signed zeros apart (any nan equals any nan)."""
    return [(repr(complex(v).real), repr(complex(v).imag)) for v in flat(x)]


# --- construction and conversion -------------------------------------------------------


def test_real_imag_conj_properties_and_ops():
    z = mx.array(Z)
    assert z.real.dtype is mx.float32 and z.real.tolist() == [v.real for v in Z]
    assert z.imag.tolist() == [v.imag for v in Z]
    assert z.conj().tolist() == [v.conjugate() for v in Z]
    assert mx.conjugate(z).tolist() == mx.conj(z).tolist()
    assert type(z.real.primitive()) is E.Real and type(z.conj().primitive()) is E.Conjugate
    x = mx.array([1.5, -2.0])
    assert mx.real(x).id() == x.id() and mx.conj(x).id() == x.id()  # no node: x itself
    assert mx.imag(x).tolist() == [0.0, 0.0] and mx.imag(x).dtype is mx.float32
    assert mx.imag(mx.array([1, 2])).dtype is mx.int32


# --- elementwise ops -------------------------------------------------------------------

UNARY = (
    "abs negative sign square sqrt rsqrt reciprocal exp log log2 log10 log1p sin cos tan "
    "arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh round stop_gradient "
    "real imag conj logical_not"
).split()
REFUSED = "expm1 sigmoid erf erfinv floor ceil".split()
# MLX's arithmetic on complex64 is reproduced to the bit (float32 products,
# libgcc's quotients); the functions of <complex> only to a few ulps.
EXACT = {"abs", "negative", "sign", "square", "reciprocal", "round", "stop_gradient",
         "real", "imag", "conj", "logical_not", "add", "subtract", "multiply", "divide",
         "floor_divide", "maximum", "minimum"}
GRID = Z + [0j, 0.25 - 0.75j, 2.5 + 0j, -3.5 + 0.5j, 0.5 + 1.5j, -0.5 - 0.5j]


def test_unary_values_from_cmath():
    z = mx.array(Z)
    expect = {
        "exp": cmath.exp, "log": cmath.log, "sqrt": cmath.sqrt, "sin": cmath.sin,
        "cos": cmath.cos, "tanh": cmath.tanh, "arcsin": cmath.asin, "arccosh": cmath.acosh,
        "square": lambda v: v * v, "reciprocal": lambda v: 1 / v, "sign": lambda v: v / abs(v),
        "log10": cmath.log10, "log1p": lambda v: cmath.log(1 + v),
    }
    for name, f in expect.items():
        out = getattr(mx, name)(z)
        assert out.dtype is mx.complex64, name
        assert close(out.tolist(), [f(v) for v in Z], rtol=1e-6), name
    assert mx.abs(z).dtype is mx.float32
    assert close(mx.abs(z).tolist(), [abs(v) for v in Z], rtol=1e-7)
    assert mx.round(mx.array([1.5 + 2.5j, -0.5 - 1.5j])).tolist() == [2 + 2j, -2j]


@needs_mlx
@pytest.mark.parametrize("op", UNARY + REFUSED)
def test_unary_matches_mlx(op):
    pair = assert_both(lambda m: getattr(m, op)(m.array(GRID)), rtol=3e-6, atol=1e-6)
    if pair and op in EXACT:
        assert _bits(pair[0].tolist()) == _bits(pair[1].tolist()), op


@pytest.mark.parametrize("op", REFUSED)
def test_refused_unary_ops_name_themselves(op):
    with pytest.raises(ValueError, match=re.escape(f"[{op}] Not supported for complex64.")):
        getattr(mx, op)(mx.array(Z))


BINARY = (
    "add subtract multiply divide floor_divide power maximum minimum logaddexp equal "
    "not_equal less less_equal greater greater_equal logical_and logical_or remainder arctan2"
).split()


@needs_mlx
@pytest.mark.parametrize("op", BINARY)
def test_binary_matches_mlx(op):
    a = [z for z in GRID for _ in range(3)]
    b = [w for _ in GRID for w in (W[0], W[1], GRID[0])]  # ties with GRID[0] included
    pair = assert_both(lambda m: getattr(m, op)(m.array(a), m.array(b)), rtol=3e-6, atol=3e-6)
    if pair and op in EXACT:
        assert _bits(pair[0].tolist()) == _bits(pair[1].tolist()), op
    # a complex array with a real one, and with Python scalars
    assert_both(lambda m: getattr(m, op)(m.array(Z), m.array([1.5, -2.0, 0.5, 3.0])),
                rtol=3e-6, atol=1e-6)
    assert_both(lambda m: getattr(m, op)(2.5, m.array(Z)), rtol=3e-6, atol=1e-6)
    assert_both(lambda m: getattr(m, op)(m.array([1.0, -2.0]), 1j), rtol=3e-6, atol=1e-6)


@needs_mlx
def test_arithmetic_is_bit_exact_on_random_values():
    import random

    rng = random.Random(0)

    def value():
        scale = 10.0 ** rng.randint(-3, 3)
        return complex(rng.gauss(0, scale), rng.gauss(0, scale))

    a = [value() for _ in range(400)]
    b = [value() for _ in range(400)]
    for op in ("multiply", "divide", "add", "subtract", "square", "abs", "sign"):
        args = (a, b) if op in ("multiply", "divide", "add", "subtract") else (a,)
        ours = getattr(mx, op)(*[mx.array(x) for x in args]).tolist()
        theirs = getattr(real_mx, op)(*[real_mx.array(x) for x in args]).tolist()
        assert _bits(ours) == _bits(theirs), op


def test_multiply_rounds_each_product_to_float32():
    # (0.1 + 0.1j) (0.1 + 0.3j): the real part 0.01 - 0.03 is the difference of
    # two float32 products, which differs from the exact difference rounded once.
    a, b = mx.array([0.1 + 0.1j]), mx.array([0.1 + 0.3j])
    (x,), (y,) = a.tolist(), b.tolist()
    f32 = mx.float32.cast
    want = complex(f32(f32(x.real * y.real) - f32(x.imag * y.imag)),
                   f32(f32(x.real * y.imag) + f32(x.imag * y.real)))
    got = (a * b).item()
    assert got == want and got.real != f32(x.real * y.real - x.imag * y.imag)


def test_complex_order_is_by_real_then_imaginary_part():
    a = mx.array([1 + 2j, 1 - 1j, 3 + 0j, 2 + 5j])
    b = mx.array([1 + 1j, 1 + 0j, 3 + 0j, 2.5 - 9j])
    assert mx.less(a, b).tolist() == [False, True, False, True]
    assert mx.greater_equal(a, b).tolist() == [True, False, True, False]
    assert mx.maximum(a, b).tolist() == [1 + 2j, 1 + 0j, 3 + 0j, 2.5 - 9j]
    assert mx.max(a).item() == 3 + 0j and mx.argmin(a).item() == 1


# --- reductions and matmul ----------------------------------------------------------

REDUCTIONS = "sum prod mean max min argmax argmin all any var std logsumexp cumsum".split()
NANS = [1 + 2j, 1 - 1j, complex(nan, 0), 3 + 0j, complex(1, nan), -2 + 5j]


@needs_mlx
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reductions_match_mlx(op):
    def build(m, values, **kw):
        out = getattr(m, op)(m.array(values), **kw)
        return out.astype(m.int32) if op in ("argmax", "argmin") else out  # MLX: uint32

    assert_both(lambda m: build(m, [[1 + 2j, -0.5 + 0.25j, 3 - 1j], [2j, 1 + 0j, -1 - 1j]]),
                rtol=1e-5, atol=1e-6)
    assert_both(lambda m: build(m, [[1 + 2j, -0.5 + 0.25j, 3 - 1j], [2j, 1 + 0j, -1 - 1j]], axis=0),
                rtol=1e-5, atol=1e-6)
    if op in ("max", "min", "argmax", "argmin"):
        # nan in either part: MLX's rules for which element (or nan + 0j) comes out
        for values in ([1 + 2j, complex(nan, 0), 3], [1 + 2j, complex(1, nan), 3],
                       [complex(1, nan), 1 + 2j, 3], [complex(2, nan), complex(nan, 2)], NANS):
            assert_both(lambda m: build(m, values), rtol=1e-5, atol=1e-6)


@needs_mlx
def test_softmax_matmul_and_friends_match_mlx():
    a = [[1 + 2j, 1 - 1j], [3 + 0j, 0j]]
    for build in [
        lambda m: m.softmax(m.array(a), axis=1),
        lambda m: m.softmax(m.array(a), axis=0),
        lambda m: m.logsumexp(m.array(a), axis=0, keepdims=True),
        lambda m: m.var(m.array(a), axis=1, ddof=1),
        lambda m: m.array(a) @ m.array([[0.5 - 1j], [2 + 0.5j]]),
        lambda m: m.array(a) @ m.array([[1.5, 2.0], [-1.0, 0.5]]),
        lambda m: m.inner(m.array(Z), m.array(W)),
        lambda m: m.outer(m.array(Z[:2]), m.array([1.0, 2.0])),
        lambda m: m.clip(m.array([1 + 2j, -1 + 0j, 5 + 5j]), 0, 3),
        lambda m: m.where(m.array([True, False]), m.array([1 + 1j, 2 + 2j]), 0.5),
    ]:
        assert_both(build, rtol=3e-6, atol=1e-6)


# --- gradients: MLX's convention ----------------------------------------------------------


def test_grad_of_a_real_valued_function_is_df_dx_plus_i_df_dy():
    z = mx.array(Z)
    # |z|^2 = x^2 + y^2: gradient 2x + 2iy = 2z, three ways
    for f in (lambda z: (mx.abs(z) ** 2).sum(),
              lambda z: mx.real(z * mx.conj(z)).sum(),
              lambda z: mx.square(mx.abs(z)).sum()):
        assert close(mx.grad(f)(z).tolist(), [2 * v for v in Z], rtol=1e-6)
    assert close(mx.grad(lambda z: mx.abs(z).sum())(z).tolist(), [v / abs(v) for v in Z])
    assert mx.grad(lambda z: mx.real(z).sum())(z).tolist() == [1 + 0j] * 4
    assert mx.grad(lambda z: mx.imag(z).sum())(z).tolist() == [1j] * 4
    # Re(z^2) = x^2 - y^2: gradient 2x - 2iy = 2 conj(z)
    assert close(mx.grad(lambda z: mx.real(z * z).sum())(z).tolist(),
                  [2 * v.conjugate() for v in Z])
    # arg z = atan2(y, x): gradient (-y + ix) / |z|^2
    assert close(mx.grad(lambda z: mx.imag(mx.log(z)).sum())(z).tolist(),
                  [complex(-v.imag, v.real) / abs(v) ** 2 for v in Z])
    # a real input, a real loss through complex values: a real gradient
    x = mx.array([1.0, 2.0])
    g = mx.grad(lambda x: mx.abs(x * (1 + 2j)).sum())(x)
    assert g.dtype is mx.float32 and close(g.tolist(), [abs(1 + 2j)] * 2)


def test_vjp_conjugates_and_jvp_does_not():
    z, c, t = mx.array(Z), mx.array(W), mx.array(W[::-1])
    rules = {
        "exp": cmath.exp, "sin": cmath.cos, "log": lambda v: 1 / v, "sqrt": lambda v: 0.5 / cmath.sqrt(v),
        "square": lambda v: 2 * v, "tanh": lambda v: 1 - cmath.tanh(v) ** 2,
        "arccosh": lambda v: 1 / (cmath.sqrt(v - 1) * cmath.sqrt(v + 1)),
        "reciprocal": lambda v: -1 / v**2, "negative": lambda v: -1,
    }
    for name, d in rules.items():
        f = getattr(mx, name)
        _, (v,) = mx.vjp(f, [z], [c])
        assert close(v.tolist(), [w * d(u).conjugate() for u, w in zip(Z, W)], rtol=1e-5), name
        _, (j,) = mx.jvp(f, [z], [t])
        assert close(j.tolist(), [w * d(u) for u, w in zip(Z, W[::-1])], rtol=1e-5), name
    # conj is not holomorphic: both modes conjugate
    assert mx.vjp(mx.conj, [z], [c])[1][0].tolist() == [w.conjugate() for w in W]
    assert mx.jvp(mx.conj, [z], [t])[1][0].tolist() == [w.conjugate() for w in W[::-1]]
    # real, imag and abs: real outputs
    assert mx.vjp(mx.real, [z], [mx.array([1.0, 2.0, 3.0, 4.0])])[1][0].tolist() == [1, 2, 3, 4]
    assert mx.vjp(mx.imag, [z], [mx.array([1.0, 2.0, 3.0, 4.0])])[1][0].tolist() == [1j, 2j, 3j, 4j]
    j = mx.jvp(mx.abs, [z], [t])[1][0]
    assert j.dtype is mx.float32
    assert close(j.tolist(), [(w * (u / abs(u)).conjugate()).real for u, w in zip(Z, W[::-1])])


def test_vjp_of_power_conjugates_both_partials():
    # MLX 0.32.4 leaves these two unconjugated (its Power::vjp); mlxref follows
    # the convention of every other op (the difference is in the report).
    a, b, c = mx.array(Z), mx.array(W), mx.array(W[::-1])
    _, (va, vb) = mx.vjp(mx.power, [a, b], [c])
    want_a = [w * (q * p ** (q - 1)).conjugate() for p, q, w in zip(Z, W, W[::-1])]
    want_b = [w * (cmath.log(p) * p**q).conjugate() for p, q, w in zip(Z, W, W[::-1])]
    assert close(va.tolist(), want_a, rtol=2e-5) and close(vb.tolist(), want_b, rtol=2e-5)


def test_vjp_of_matmul_and_prod_conjugate():
    a, b = mx.array([[1 + 2j, 1j]]), mx.array([[0.5 - 1j], [2 + 0j]])
    cot = mx.array([[1 - 1j]])
    _, (va, vb) = mx.vjp(mx.matmul, [a, b], [cot])
    assert close(va.tolist(), [[(1 - 1j) * (0.5 + 1j), (1 - 1j) * 2]])
    assert close(vb.tolist(), [[(1 - 2j) * (1 - 1j)], [-1j * (1 - 1j)]])
    _, (vp,) = mx.vjp(lambda z: z.prod(), [mx.array(Z[:3])], [mx.array(1 - 1j)])
    others = [Z[1] * Z[2], Z[0] * Z[2], Z[0] * Z[1]]
    assert close(vp.tolist(), [(1 - 1j) * o.conjugate() for o in others], rtol=1e-5)


@needs_mlx
def test_gradients_match_mlx():
    z, w = [0.8 + 0.6j, -0.5 + 0.25j], [0.5 - 1j, 1.5 + 0.5j]
    c = [1 + 2j, -0.5 + 1j]
    unary = ("exp log log2 log10 log1p sqrt rsqrt sin cos tan sinh cosh tanh arcsin arccos "
             "arctan arcsinh arccosh arctanh square reciprocal negative sign conj round").split()
    for name in unary:
        assert_both(lambda m: m.vjp(getattr(m, name), [m.array(z)], [m.array(c)])[1],
                    rtol=1e-5, atol=1e-6)
        assert_both(lambda m: m.jvp(getattr(m, name), [m.array(z)], [m.array(c)])[1],
                    rtol=1e-5, atol=1e-6)
    for name in ("abs", "real", "imag"):
        assert_both(lambda m: m.vjp(getattr(m, name), [m.array(z)], [m.array([1.0, 2.0])])[1],
                    rtol=1e-5, atol=1e-6)
        assert_both(lambda m: m.jvp(getattr(m, name), [m.array(z)], [m.array(c)])[1],
                    rtol=1e-5, atol=1e-6)
    for name in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "logaddexp"):
        assert_both(lambda m: m.vjp(getattr(m, name), [m.array(z), m.array(w)], [m.array(c)])[1],
                    rtol=1e-5, atol=1e-6)
        assert_both(lambda m: m.jvp(getattr(m, name), [m.array(z), m.array(w)],
                                    [m.array(c), m.array(w)])[1], rtol=1e-5, atol=1e-6)
    for f in [
        lambda m, x: (m.abs(x) ** 2).sum(),
        lambda m, x: m.abs(x).mean(),
        lambda m, x: m.real(x * m.conj(x)).sum(),
        lambda m, x: m.imag(m.log(x)).sum(),
        lambda m, x: m.var(x),
        lambda m, x: m.std(x),
        lambda m, x: (x * x).sum(),  # a complex output: seeded with 1
        lambda m, x: m.real(m.logsumexp(x)),
        lambda m, x: m.real(m.softmax(x)[0]),
        lambda m, x: m.real(x.prod() + x.max() + m.cumsum(x)[-1]),
        lambda m, x: m.real((x.reshape(1, 2) @ x.reshape(2, 1)).sum()),
        lambda m, x: m.abs(m.where(m.array([True, False]), x, 2 * x)).sum(),
    ]:
        assert_both(lambda m: m.grad(lambda x: f(m, x))(m.array(z)), rtol=1e-5, atol=1e-6)
    # a real input meeting complex numbers, and a complex cotangent on a real output
    assert_both(lambda m: m.vjp(lambda x: m.exp(x * 1j), [m.array([1.0])], [m.array([1 + 1j])])[1],
                rtol=1e-5, atol=1e-6)
    assert_both(lambda m: m.vjp(lambda a, b: a * b, [m.array(z), m.array([2.0, 3.0])],
                                [m.array(c)])[1], rtol=1e-5, atol=1e-6)
    assert_both(lambda m: m.vjp(m.abs, [m.array(z)], [m.array([1 + 1j, 1.0])])[1],
                rtol=1e-5, atol=1e-6)
    assert_both(lambda m: m.jvp(lambda a: a * a, [m.array(z)], [m.array([1.0, 1.0])])[1],
                rtol=1e-5, atol=1e-6)


@needs_mlx
def test_vmap_matches_mlx():
    zz = [[1 + 2j, 3j], [-1 + 0.5j, 2 + 0j]]
    for f in ("real", "imag", "conj", "abs", "exp", "sign"):
        assert_both(lambda m: m.vmap(getattr(m, f))(m.array(zz)), rtol=1e-5, atol=1e-6)
        assert_both(lambda m: m.vmap(getattr(m, f), in_axes=1)(m.array(zz)), rtol=1e-5, atol=1e-6)


# --- the SymPy check of the complex rules --------------------------------------------------


def test_symbolic_cases_cover_the_complex_primitives():
    complex_cases = {c.primitive for c in symbolic.all_cases() if c.domain == "complex"}
    assert {E.Real, E.Imag, E.Conjugate, E.Abs, E.Exp, E.Multiply, E.Divide, E.Power} <= complex_cases
    for case in symbolic.all_cases():
        if case.primitive in (E.Real, E.Imag, E.Conjugate):
            assert case.domain == "complex"


@pytest.mark.parametrize("primitive", [E.Conjugate, E.Abs, E.Divide])
def test_symbolic_check_passes_for_complex_rules(primitive):
    case = next(c for c in symbolic.all_cases()
                if c.primitive is primitive and c.domain == "complex")
    assert symbolic.check_case(case).ok


def test_symbolic_check_catches_a_vjp_without_the_conjugate():
    class UnconjugatedExp(E.Exp):
        def vjp(self, primals, cotangents, argnums, outputs):
            return [ops.multiply(cotangents[0], outputs[0])]

    build = lambda z: E.make_array(UnconjugatedExp(), [z])  # noqa: E731
    result = symbolic.check_case(symbolic.Case(UnconjugatedExp, build, ((2,),), "complex"))
    assert result.forward and result.jvp and not result.vjp
    # on real inputs the same rule is right
    assert symbolic.check_case(symbolic.Case(UnconjugatedExp, build, ((2,),))).ok


def test_symbolic_check_catches_a_holomorphic_jvp_for_abs():
    class HolomorphicAbs(E.Abs):
        def jvp(self, primals, tangents, argnums):
            return [ops.multiply(tangents[0], ops.sign(primals[0]))]

    build = lambda z: E.make_array(HolomorphicAbs(), [z]).astype(mx.float32)  # noqa: E731
    result = symbolic.check_case(symbolic.Case(HolomorphicAbs, build, ((1,),), "complex"))
    assert result.vjp and not result.jvp
