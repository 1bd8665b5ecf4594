"""Shared helpers for the test suite: comparing against values and against real MLX."""

import gc
import importlib.util
import math
import os
import random
import re
import shutil
import subprocess
import sys
from fractions import Fraction

import pytest

import mlxref.core as mlxref_core
from mlxref.testing import check_grads

try:  # the `metal` extra; CI installs it on Linux x86_64
    import mlx.core as real_mx
except ImportError:  # pragma: no cover - only where MLX has no wheel
    real_mx = None

needs_mlx = pytest.mark.skipif(
    real_mx is None, reason="mlx is not installed here (pip install -e '.[metal]')"
)

# The names the Makefile's `chromium` target looks for (macOS: the apps' binaries).
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
             "/Applications/Chromium.app/Contents/MacOS/Chromium",
             "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")


def find_chromium(path=None):
    """The first of CHROMIUMS on ``path`` (default: $PATH) that runs, or None.

    One that is found but does not run does not count: Ubuntu's apt package
    installs a stub that asks for snap, which WSL and containers lack.
    """
    for name in CHROMIUMS:
        found = shutil.which(name, path=path)
        if found is None:
            continue
        try:
            ran = subprocess.run([found, "--version"], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if ran.returncode == 0:
            return found
    return None


def chromium_or_skip(path=None):
    """A Chromium to run, else this test skips with one line saying what to install.

    Under MLXREF_NEED_CHROMIUM (.ci/run sets it after installing Debian's
    chromium) a missing Chromium fails the test instead.
    """
    found = find_chromium(path)
    if found is None:
        if os.environ.get("MLXREF_NEED_CHROMIUM"):
            pytest.fail("no Chromium here, and MLXREF_NEED_CHROMIUM says this run needs one: "
                        "run `make chromium`")
        pytest.skip("no Chromium here: install Chromium or Google Chrome (`make chromium`) "
                    "to run the browser tests")
    return found


def lib_id(lib):
    return "mlxref" if lib is mlxref_core else "mlx"


def printed_in_fresh_process(library, program):
    """What ``program`` prints, run in a new interpreter after ``import
    <library> as mx`` (``library``: "mlxref.core" or "mlx.core"): for what a
    process or a thread has only until something happens, such as its default
    stream before its first op."""
    done = subprocess.run([sys.executable, "-c", f"import {library} as mx\n{program}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{library}: {done.stderr}"
    return done.stdout


# The libraries a test loops over: mlxref.core, then (where installed) real MLX.
LIBS = [mlxref_core] + ([real_mx] if real_mx is not None else [])

# A test taking ``m`` runs on mlxref.core, then (where installed) on real MLX.
each_lib = pytest.mark.parametrize(
    "m", [mlxref_core] + ([real_mx] if real_mx is not None else []), ids=lib_id)


def ids(arrays):
    """The descriptors' ids of some arrays: what says two handles are one array."""
    return [a.id() for a in arrays]


def assert_new_handle(b, a):
    """``b`` is a new array object sharing ``a``'s descriptor, as MLX returns for
    an op that leaves its input unchanged (so ``b[i] = v`` leaves ``a`` alone)."""
    assert b is not a and b.id() == a.id()


def flat(x):
    """Nested lists (and tuples) as one flat list, in row-major order; a scalar
    as a list of itself."""
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(flat(v))
        return out
    return [x]


def dtype_name(a):
    """The name of ``a``'s dtype (``"float32"``), for an mlxref array and a real-MLX one alike."""
    return str(a.dtype).split(".")[-1]


def same_value(x, y):
    """Two Python elements are equal as an array stores them: the same type and
    value, nan equal to nan, -0.0 not equal to 0.0, complex numbers part by part."""
    if type(x) is not type(y):
        return False
    if type(x) is complex:
        return same_value(x.real, y.real) and same_value(x.imag, y.imag)
    if type(x) is float:
        if x != x or y != y:
            return x != x and y != y
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
    return x == y


def close(a, b, rtol=1e-5, atol=1e-6):
    """Elementwise closeness of two (nested) lists or scalars; nan equals nan.
    Complex numbers are close when their real and imaginary parts are."""
    fa, fb = flat(a), flat(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb):
        if isinstance(x, complex) or isinstance(y, complex):
            x, y = complex(x), complex(y)
            if not close([x.real, x.imag], [y.real, y.imag], rtol, atol):
                return False
            continue
        x, y = float(x), float(y)
        if math.isnan(x) or math.isnan(y):
            if not (math.isnan(x) and math.isnan(y)):
                return False
        elif math.isinf(x) or math.isinf(y):
            if x != y:
                return False
        elif abs(x - y) > atol + rtol * abs(y):
            return False
    return True


def assert_array(ours, expected, dtype=None, shape=None, rtol=1e-5, atol=1e-6):
    """``ours`` (an mlxref array) has ``expected`` values (a nested list or scalar)."""
    got = ours.tolist()
    assert close(got, expected, rtol, atol), f"got {got}, expected {expected}"
    if dtype is not None:
        assert ours.dtype is dtype, f"dtype {ours.dtype}, expected {dtype}"
    if shape is not None:
        assert ours.shape == tuple(shape), f"shape {ours.shape}, expected {shape}"


def assert_same_as_mlx(ours, theirs, rtol=1e-5, atol=1e-5):
    """An mlxref array matches a real-MLX array: shape, dtype name and values."""
    assert tuple(ours.shape) == tuple(theirs.shape), f"shape {ours.shape} vs MLX {theirs.shape}"
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1], (
        f"dtype {ours.dtype} vs MLX {theirs.dtype}"
    )
    got, want = ours.tolist(), theirs.tolist()
    assert close(got, want, rtol, atol), f"got {got}, MLX gives {want}"


def same_array(a, b):
    """Whether ``a`` and ``b`` (arrays of mlxref or real MLX) have the same shape,
    dtype name and elements, the elements compared by ``repr``: nan equals nan,
    -0.0 differs from 0.0 and ``True`` from ``1``."""
    return (tuple(a.shape) == tuple(b.shape) and dtype_name(a) == dtype_name(b)
            and repr(a.tolist()) == repr(b.tolist()))


def assert_same_array(ours, theirs, rtol=None, atol=1e-5):
    """``ours`` and ``theirs`` (arrays of mlxref or real MLX; or lists or tuples
    of them, of one length, pair by pair) have the same shape, dtype name and
    elements: every element by ``repr``, as ``same_array`` compares them. With
    ``rtol``, the elements of a floating or complex dtype need only be
    ``close`` (within ``rtol`` and ``atol``); the others are still exact."""
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            assert_same_array(o, t, rtol, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), f"shape {ours.shape}, expected {theirs.shape}"
    assert dtype_name(ours) == dtype_name(theirs), f"dtype {ours.dtype}, expected {theirs.dtype}"
    got, want = ours.tolist(), theirs.tolist()
    if rtol is not None and dtype_name(ours).startswith(("float", "bfloat", "complex")):
        assert close(got, want, rtol, atol), f"got {got}, expected {want}"
    else:
        assert repr(got) == repr(want), f"got {got}, expected {want}"


def assert_same_tree(ours, theirs, rtol=1e-5, atol=1e-5):
    """``ours`` (mlxref's result) and ``theirs`` (real MLX's) are the same tree:
    dicts with the same keys in the same order, lists and tuples of one type
    and length, MLX arrays matched as ``assert_same_as_mlx`` does, and any
    other leaf equal."""
    if isinstance(theirs, dict):
        assert type(ours) is dict and list(ours) == list(theirs), (ours, theirs)
        for k in theirs:
            assert_same_tree(ours[k], theirs[k], rtol, atol)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for o, t in zip(ours, theirs):
            assert_same_tree(o, t, rtol, atol)
    elif real_mx is not None and isinstance(theirs, real_mx.array):
        assert_same_as_mlx(ours, theirs, rtol, atol)
    else:
        assert ours == theirs, (ours, theirs)


def same_tree_in_both(program):
    """``program(lib)`` run with mlxref.core and, where installed, with real MLX:
    the results are the same tree (``assert_same_tree``). Returns mlxref's."""
    ours = program(mlxref_core)
    if real_mx is not None:
        assert_same_tree(ours, program(real_mx))
    return ours


# --- inputs, the same for both libraries ---------------------------------------------


def random_rows(shape, seed, scale=1.0):
    """Nested lists of random floats (the same for both libraries)."""
    rng = random.Random(seed)
    if len(shape) == 1:
        return [rng.gauss(0.0, scale) for _ in range(shape[0])]
    return [random_rows(shape[1:], seed * 31 + i, scale) for i in range(shape[0])]


def vector_x(m):
    """A float32 vector of three in the library ``m``: [0.5, -1.0, 2.0]."""
    return m.array([0.5, -1.0, 2.0])


def vector_y(m):
    """A second float32 vector of three in ``m``, unlike ``vector_x``: [1.5, 0.3, -0.7]."""
    return m.array([1.5, 0.3, -0.7])


def vector_batch(m):
    """Two float32 vectors of three in ``m``, stacked on axis 0 (``vector_x`` first)."""
    return m.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.2]])


# --- integers as a C integer type stores them (a dtype by its MLX name: "int8", "uint64") ---


def int_bits(name):
    """The width of the integer dtype ``name``, in bits."""
    return int(name.lstrip("uint"))


def is_unsigned(name):
    return name.startswith("u")


def int_limits(name):
    """The smallest and the largest value the integer dtype ``name`` holds."""
    b = int_bits(name)
    return (0, 2**b - 1) if is_unsigned(name) else (-(2 ** (b - 1)), 2 ** (b - 1) - 1)


def wrap(v, name):
    """``v`` as the dtype ``name`` stores it: modulo 2**bits, two's complement."""
    if name == "bool_":
        return bool(v)
    b = int_bits(name)
    v &= (1 << b) - 1
    return v - (1 << b) if not is_unsigned(name) and v >= 1 << (b - 1) else v


def int_edges(name):
    """The boundary values of a dtype: its limits, around them, and around 0."""
    if name == "bool_":
        return [False, True]
    lo, hi = int_limits(name)
    return sorted(v for v in {lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi} if lo <= v <= hi)


def int_array(m, values, name):
    """An array of ``values`` as dtype ``name``, built through int64 (MLX takes
    no Python int above 2**63 - 1, so uint64's top half comes in negative)."""
    if name == "bool_":
        return m.array(values, m.bool_)
    return m.array([v - 2**64 if v >= 2**63 else v for v in values], m.int64).astype(
        getattr(m, name)
    )


# --- floats ---------------------------------------------------------------------------


# (mantissa bits with the hidden one, smallest normal exponent, largest exponent)
FLOAT_FORMATS = {"float16": (11, -14, 15), "bfloat16": (8, -126, 127),
                 "float32": (24, -126, 127), "float64": (53, -1022, 1023)}


def nearest(x, name):
    """``x`` (an int, float or Fraction) rounded once, to nearest even, to the
    float format ``name``: ±inf beyond its range, through its subnormals to ±0.
    Exact rational arithmetic, independent of mlxref's own rounding."""
    if isinstance(x, float) and not math.isfinite(x):
        return x
    bits, emin, emax = FLOAT_FORMATS[name]
    x = Fraction(x)
    if x == 0:
        return 0.0
    e = max(math.floor(math.log2(abs(x))), emin)
    while 2**e > abs(x) and e > emin:  # log2 of a Fraction may round up
        e -= 1
    ulp = Fraction(2) ** (e - bits + 1)
    q = round(x / ulp)  # a Fraction rounds half to even
    if abs(q * ulp) >= Fraction(2) ** (emax + 1):
        return math.copysign(math.inf, x)
    return float(q * ulp) if q else math.copysign(0.0, x)


def error_of(call):
    """The (type, message) that ``call()`` raises; the test fails if it raises nothing."""
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def assert_same_error(program):
    """``program(lib)`` raises the same exception type, with the same message,
    with ``lib`` mlxref.core and (where installed) real MLX; returns it."""
    ours = error_of(lambda: program(mlxref_core))
    if real_mx is not None:
        assert ours == error_of(lambda: program(real_mx))
    return ours


def both(build):
    """``(ours, theirs)`` from ``build(lib)`` with mlxref.core and with real MLX;
    or None when MLX raises, after checking mlxref raises the same type and message."""
    try:
        theirs = build(real_mx)
    except Exception as e:  # noqa: BLE001 - any MLX error must be ours too
        with pytest.raises(type(e), match=re.escape(str(e))):
            build(mlxref_core)
        return None
    return build(mlxref_core), theirs


def check_rule_mlx_lacks(program, reference):
    """``program(lib)`` uses a rule real MLX lacks: MLX raises (its "Not implemented" or
    "NYI", a ValueError or RuntimeError) where installed, and mlxref gives what
    ``reference(lib)`` (the same computation without that rule) gives: an array or a
    tuple of them, each with the reference's shape, within rtol 1e-5 and atol 1e-4."""
    if real_mx is not None:
        with pytest.raises((ValueError, RuntimeError)):
            real_mx.eval(program(real_mx))
    ours, want = program(mlxref_core), reference(mlxref_core)
    ours, want = (list(ours), list(want)) if isinstance(ours, tuple) else ([ours], [want])
    for o, w in zip(ours, want):
        assert_array(o, w.tolist(), rtol=1e-5, atol=1e-4, shape=w.shape)


def assert_both(build, rtol=None, atol=1e-5):
    """``build(lib)`` gives the same with mlxref.core and with real MLX: the
    same array, or list or tuple of arrays (the same container; the arrays
    compared as ``assert_same_array`` does: exactly, or with ``rtol`` and
    ``atol``), or the same error (its type, and MLX's message in ours), raised
    at the same step: when the result is built, or when it is evaluated.
    Returns ``(ours, theirs)``, or None where MLX raises."""
    pair = both(build)
    if pair is None:
        return None
    ours, theirs = pair
    try:
        real_mx.eval(theirs)
    except Exception as e:  # noqa: BLE001 - any MLX error must be ours too
        with pytest.raises(type(e), match=re.escape(str(e))):
            mlxref_core.eval(ours)
        return None
    if isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs), (
            f"got a {type(ours).__name__}, MLX a {type(theirs).__name__}")
    assert_same_array(ours, theirs, rtol, atol)
    return ours, theirs


def same_in_both(program):
    """``program(lib)`` has the same outcome with mlxref.core and with real MLX:
    the same exception (type name and message), or arrays (one, or a list or
    tuple of them) of the same shape, dtype name and elements, nan equal to
    nan and the other elements compared with ``==``. Returns our outcome:
    ``("error", type name, message)`` or ``("ok", shape, dtype name, elements)``."""
    ours, theirs = _outcome(mlxref_core, program), _outcome(real_mx, program)
    assert ours == theirs, f"mlxref: {ours}\nMLX:    {theirs}"
    return ours


def _outcome(lib, program):
    try:
        out = program(lib)
    except Exception as e:  # noqa: BLE001 - compared with MLX's
        return ("error", type(e).__name__, str(e))
    if isinstance(out, (list, tuple)):
        return tuple(_outcome(lib, lambda _, o=o: o) for o in out)
    values = out.tolist()
    return ("ok", tuple(out.shape), str(out.dtype).split(".")[-1], _canonical(values))


def _canonical(v):
    """Nested values with nan made comparable (nan == nan here)."""
    if isinstance(v, list):
        return [_canonical(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, complex):
        return (_canonical(v.real), _canonical(v.imag))
    return v


def assert_same_result(program):
    """``program(lib)`` gives the same results with mlxref and MLX (as
    ``assert_same_array`` compares them, exactly), or the same error: its type,
    and its message up to nanobind's "Invoked with" line. Returns the error
    (``binding_error``'s pair) or None."""
    theirs_error = binding_error(lambda: program(real_mx))
    if theirs_error is not None:
        assert binding_error(lambda: program(mlxref_core)) == theirs_error
        return theirs_error
    assert_same_array(program(mlxref_core), program(real_mx))
    return None


def binding_error(call):
    """The (type, message) ``call()`` raises, the message cut before nanobind's
    "Invoked with" paragraph (which lists the types of the call's arguments);
    None if it raises nothing."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e), str(e).split("\n\nInvoked with")[0]
    return None


def tied_elements(dtype_name, rng, n):
    """``n`` elements for the dtype ``dtype_name``, with ties; floats add nans, both
    zeros and infinities."""
    if dtype_name == "bool_":
        return [rng.random() < 0.5 for _ in range(n)]
    if dtype_name.startswith(("uint", "int")):
        return [rng.randint(0, 5) for _ in range(n)]
    if dtype_name == "complex64":
        return [complex(rng.choice([0.0, 1.0, -1.0]), rng.choice([0.0, 2.0])) for _ in range(n)]
    return [rng.choice([math.nan, -0.0, 0.0, 1.5, -2.0, 3.0, math.inf, float(rng.randint(-4, 4))])
            for _ in range(n)]


def typed_array(lib, data, dtype_name):
    """``data`` as an array of ``lib`` (mlxref.core or MLX) of the dtype ``dtype_name``."""
    return lib.array(data).astype(getattr(lib, dtype_name))


# --- vjp and jvp rules against MLX's ---------------------------------------------------


def rule_values(shape, start):
    """Deterministic, varied numbers for cotangents and tangents."""
    n = 1
    for d in shape:
        n *= d
    return [round(((start + 0.37 * i) % 3.0) - 1.1, 4) for i in range(n)]


def rule_arrays(lib, values, shape):
    return lib.array(values).reshape(shape) if shape else lib.array(values[0])


def rules_in_both(f, inputs):
    """vjp and jvp of ``f(lib, *xs)`` under mlxref and under MLX, same inputs
    and same cotangents / tangents: ``((vjps, jvp), (mlx_vjps, mlx_jvp))``."""
    results = []
    for lib in (mlxref_core, real_mx):
        xs = [lib.array(x) for x in inputs]
        out = f(lib, *xs)
        cot = rule_arrays(lib, rule_values(out.shape, 0.3), out.shape)
        tangents = [rule_arrays(lib, rule_values(x.shape, 0.7 + k), x.shape)
                    for k, x in enumerate(xs)]
        _, vjps = lib.vjp(lambda *a: f(lib, *a), xs, [cot])
        _, (jvp,) = lib.jvp(lambda *a: f(lib, *a), xs, tangents)
        results.append((vjps, jvp))
    return results


def assert_rules_same_as_mlx(f, *inputs):
    """The vjps and the jvp of ``f(lib, *inputs)`` (``rules_in_both``) are MLX's."""
    (vjps, jvp), (mlx_vjps, mlx_jvp) = rules_in_both(f, inputs)
    assert len(vjps) == len(mlx_vjps)
    for ours, theirs in zip(vjps, mlx_vjps):
        assert_same_as_mlx(ours, theirs)
    assert_same_as_mlx(jvp, mlx_jvp)


SECOND_ORDER_INPUT = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]


def check_second_derivative_against_mlx(f):
    """The gradient of the sum of the gradient of the scalar ``f(lib, x)`` (the second
    derivative, summed over one index) at ``SECOND_ORDER_INPUT`` is real MLX's, within
    rtol and atol 1e-4."""
    x = SECOND_ORDER_INPUT
    theirs = real_mx.grad(lambda a: real_mx.grad(lambda b: f(real_mx, b))(a).sum())(
        real_mx.array(x))
    ours = mlxref_core.grad(lambda a: mlxref_core.grad(lambda b: f(mlxref_core, b))(a).sum())(
        mlxref_core.array(x))
    assert_same_as_mlx(ours, theirs, rtol=1e-4, atol=1e-4)


def fd_matrix():
    """A new (2, 3) float64 mlxref array for ``check_grads`` (finite differences): no
    ties, no zeros."""
    return mlxref_core.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5]], mlxref_core.float64)


def fd_cube():
    """A new (2, 2, 2) float64 mlxref array for ``check_grads``: no ties, no zeros."""
    return mlxref_core.array([[[0.3, -1.2], [0.7, 1.4]], [[1.1, 0.4], [-0.5, 0.9]]],
                             mlxref_core.float64)


# --- the shape and indexing rules: inputs for programs written for either library ------


def irregular_values(shape, seed):
    """A fixed, irregular flat list of floats for ``shape``."""
    n = 1
    for d in shape:
        n *= d
    return [((k * 7 + seed * 5) % 11) / 4.0 - 1.2 + 0.1 * k for k in range(n)]


def irregular_array(m, shape, seed):
    """An array of ``shape`` in the library ``m``, of ``irregular_values``."""
    if not shape:
        return m.array(irregular_values((), seed)[0])
    return m.array(irregular_values(shape, seed)).reshape(shape)


def set_item(m, x, index, v):
    """``x`` with ``x[index] = v``, leaving the input array alone."""
    y = m.array(x)
    y[index] = v
    return y


# A rules table maps a name to ``(program(m, *xs), input shapes)``; its inputs are
# ``irregular_array``s seeded by position, its cotangent has seed 9, its tangents 3, 4, ...


def rule_inputs(m, shapes):
    """One ``irregular_array`` in the library ``m`` per shape, seeded by its position."""
    return [irregular_array(m, s, i) for i, s in enumerate(shapes)]


def rule_case(m, program, shapes):
    """``(f, xs)``: ``program`` bound to the library ``m``, and its ``rule_inputs``."""
    return (lambda *xs: program(m, *xs)), rule_inputs(m, shapes)


def check_vjp_against_mlx(program, shapes):
    """The output and every vjp of ``program`` (cotangent ``irregular_array`` of seed 9)
    are real MLX's, and there are as many vjps as MLX gives."""
    f, xs = rule_case(mlxref_core, program, shapes)
    g, ys = rule_case(real_mx, program, shapes)
    out_shape = f(*xs).shape
    outs, vjps = mlxref_core.vjp(f, xs, [irregular_array(mlxref_core, out_shape, 9)])
    touts, tvjps = real_mx.vjp(g, ys, [irregular_array(real_mx, out_shape, 9)])
    assert_same_as_mlx(outs[0], touts[0])
    assert len(vjps) == len(tvjps)
    for ours, theirs in zip(vjps, tvjps):
        assert_same_as_mlx(ours, theirs)


def check_jvp_against_mlx(program, shapes):
    """The output and the jvp of ``program`` (tangents ``irregular_array`` of seeds 3, 4,
    ...) are real MLX's."""
    f, xs = rule_case(mlxref_core, program, shapes)
    g, ys = rule_case(real_mx, program, shapes)
    tangents = [irregular_array(mlxref_core, s, 3 + i) for i, s in enumerate(shapes)]
    their_tangents = [irregular_array(real_mx, s, 3 + i) for i, s in enumerate(shapes)]
    outs, jvps = mlxref_core.jvp(f, xs, tangents)
    touts, tjvps = real_mx.jvp(g, ys, their_tangents)
    assert_same_as_mlx(outs[0], touts[0])
    assert_same_as_mlx(jvps[0], tjvps[0])


def check_rule_grads(program, shapes):
    """``check_grads`` of ``program`` on its ``rule_inputs``, to second order."""
    f, xs = rule_case(mlxref_core, program, shapes)
    check_grads(f, xs, order=2)


# --- vmap over a batch of three examples ---------------------------------------------
# Batch size 3 and example dimensions 2, 4, 5 all differ, so a batch axis put in the
# wrong place changes the result's shape.

BATCH = 3


def spread_values(n, seed=0):
    """``n`` distinct numbers of moderate size (so argmax has no ties and prod
    stays small)."""
    return [(((i + seed) * 37) % 101 - 50) / 32 for i in range(n)]


def spread_array(m, shape, seed=0):
    """An array of ``shape`` in the library ``m``, of ``spread_values``."""
    n = 1
    for d in shape:
        n *= d
    return m.array(spread_values(n, seed)).reshape(shape)


def batched_shape(shape, ax):
    """The shape of a batch of examples of ``shape`` stacked on axis ``ax``."""
    ax = ax % (len(shape) + 1)
    return shape[:ax] + (BATCH,) + shape[ax:]


def axis_positions(ndim):
    """Every position a batch axis can take in an example of ``ndim`` axes, and -1."""
    return list(range(ndim + 1)) + [-1]


def spread_examples(shape, seed=0):
    """``BATCH`` mlxref arrays of ``shape``, one per example."""
    return [spread_array(mlxref_core, shape, seed + 7 * b) for b in range(BATCH)]


def assert_stack_of(got, per_example, out_ax):
    """``got`` (a vmapped result) is the stack of ``per_example`` on axis ``out_ax``."""
    want = mlxref_core.stack(per_example, out_ax)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype is want.dtype, (got.dtype, want.dtype)
    assert close(got.tolist(), want.tolist(), rtol=1e-12, atol=1e-12), (got, want)


def check_unary_vmap_against_mlx(f, shape):
    """vmap of ``f(lib, x)`` (``x`` of example ``shape``) is real MLX's for each batch axis
    of the input (``axis_positions``) and out axes 0 and -1; a failure names the axes."""
    mx = mlxref_core
    for in_ax in axis_positions(len(shape)):
        for out_ax in (0, -1):
            x = batched_shape(shape, in_ax)
            ours = mx.vmap(lambda v: f(mx, v), in_axes=in_ax, out_axes=out_ax)(spread_array(mx, x))
            theirs = real_mx.vmap(lambda v: f(real_mx, v), in_axes=in_ax, out_axes=out_ax)(
                spread_array(real_mx, x))
            try:
                assert_same_as_mlx(ours, theirs)
            except AssertionError as e:
                raise AssertionError(f"in_axes={in_ax} out_axes={out_ax}: {e}") from None


def check_unary_vmap_against_loop(f, shape):
    """vmap of ``f(mlxref, x)`` over ``spread_examples`` stacked on each batch axis of the
    input (``axis_positions``; out axis -1 for the odd ones, else 0) is the stack of
    ``f`` on each example (``assert_stack_of``)."""
    mx = mlxref_core
    xs = spread_examples(shape)
    per_example = [f(mx, x) for x in xs]
    for in_ax in axis_positions(len(shape)):
        out_ax = -1 if in_ax % 2 else 0
        got = mx.vmap(lambda v: f(mx, v), in_axes=in_ax, out_axes=out_ax)(mx.stack(xs, in_ax))
        assert_stack_of(got, per_example, out_ax)


# --- vmap of a program: against MLX, and against a loop over five examples ------------
# A program is written once against a module ``m`` (mlxref.core or mlx.core), so the very
# same code runs on both libraries. Its inputs are specs ``(kind, example shape)``: kind
# ``"f"`` floats, ``"b"`` bools, or ``index_kind(hi, lo)`` ints in [lo, hi), so index
# arrays, masks and pad values are batched like the data.

EXAMPLES = 5  # unlike every axis size of the programs, so a mixed-up axis shows


def index_kind(hi, lo=0):
    """The kind of an input of ints in [lo, hi): indices."""
    return (lo, hi)


def kind_values(kind, shape, seed):
    """A fixed, irregular flat list for ``shape``: floats, ints in [lo, hi), or bools."""
    if kind == "f":
        return irregular_values(shape, seed)
    n = math.prod(shape)
    if kind == "b":
        return [(k * 5 + seed * 3) % 7 < 3 for k in range(n)]
    lo, hi = kind
    return [lo + (k * 5 + seed * 3 + k * k) % (hi - lo) for k in range(n)]


def kind_array(m, kind, shape, seed):
    """An array of ``shape`` in the library ``m``: float32, bool or int32 by ``kind``."""
    if kind == "f":
        dtype = m.float32
    elif kind == "b":
        dtype = m.bool_
    else:
        dtype = m.int32
    return m.array(kind_values(kind, shape, seed), dtype).reshape(shape)


def example_inputs(m, specs, in_axes, seed=0):
    """One input per spec, with a batch axis of ``EXAMPLES`` where ``in_axes`` says."""
    inputs = []
    for i, ((kind, shape), ax) in enumerate(zip(specs, in_axes)):
        if ax is not None:
            ax = ax % (len(shape) + 1)
            shape = shape[:ax] + (EXAMPLES,) + shape[ax:]
        inputs.append(kind_array(m, kind, shape, seed + 3 * i))
    return inputs


def leaves(out):
    """A program's outputs as a list: one array, or a tuple or list of them."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def vmap_configs(programs):
    """``pytest.param(name, in_axes, out_axes)`` for each program of a table
    ``name -> (program(m, *args), specs, [(in_axes, out_axes)])``."""
    return [
        pytest.param(name, in_axes, out_axes, id=f"{name}-{in_axes}-{out_axes}")
        for name, (_, _, configs) in programs.items()
        for in_axes, out_axes in configs
    ]


def outputs_differ(ours, theirs):
    return any(
        tuple(o.shape) != tuple(t.shape) or not close(o.tolist(), t.tolist())
        for o, t in zip(ours, theirs)
    )


def check_vmap_against_mlx(program, specs, in_axes, out_axes, mlx_bug=None):
    """The batched result equals real MLX's; where ``mlx_bug`` says why MLX is wrong,
    it still differs (so a fixed MLX shows up as a failure)."""
    def run(m):
        f = m.vmap(lambda *xs: program(m, *xs), in_axes=in_axes, out_axes=out_axes)
        return leaves(f(*example_inputs(m, specs, in_axes)))

    ours, theirs = run(mlxref_core), run(real_mx)
    assert len(ours) == len(theirs)
    if mlx_bug:
        assert outputs_differ(ours, theirs), f"MLX now agrees: {mlx_bug} is fixed"
        return
    for o, t in zip(ours, theirs):
        assert_same_as_mlx(o, t)


def loop_over_examples(program, xs, in_axes):
    """The program on each example, one list of outputs per example."""
    def example(x, ax, b):
        return x if ax is None else mlxref_core.take(x, b, axis=ax % x.ndim)

    return [leaves(program(mlxref_core, *[example(x, ax, b) for x, ax in zip(xs, in_axes)]))
            for b in range(EXAMPLES)]


def assert_stacked(batched, out_axes, per_example, exact=True):
    """Each output of ``batched`` is the stack of the examples' outputs on its out axis:
    bit for bit where ``exact`` (shape ops only move elements), else ``close``."""
    batched = leaves(batched)
    if not isinstance(out_axes, tuple):
        out_axes = (out_axes,) * len(batched)
    for k, (out, ax) in enumerate(zip(batched, out_axes)):
        front = mlxref_core.moveaxis(out, ax, 0)
        want = mlxref_core.stack([outs[k] for outs in per_example])
        assert front.shape == want.shape, f"shape {front.shape} vs loop {want.shape}"
        assert front.dtype == want.dtype
        if exact:
            assert front.tolist() == want.tolist(), f"{front.tolist()} vs {want.tolist()}"
        else:
            assert close(front.tolist(), want.tolist())


def check_vmap_against_loop(program, specs, in_axes, out_axes):
    xs = example_inputs(mlxref_core, specs, in_axes)
    f = mlxref_core.vmap(lambda *xs: program(mlxref_core, *xs), in_axes=in_axes,
                         out_axes=out_axes)
    assert_stacked(f(*xs), out_axes, loop_over_examples(program, xs, in_axes))


OUTER = 3  # the outer batch of a nested vmap: a third size, so the two cannot be swapped


def check_nested_vmap(program, specs, inner, outer, out_axes):
    """vmap of vmap (``inner``, ``outer`` in_axes; ``out_axes`` = (inner, outer)) equals a
    double loop, outer examples then inner ones, and real MLX's result."""
    out_in, out_out = out_axes

    def inputs(m):
        xs = []
        for k, ((kind, shape), ia, oa) in enumerate(zip(specs, inner, outer)):
            if ia is not None:
                shape = shape[:ia] + (EXAMPLES,) + shape[ia:]
            if oa is not None:
                shape = shape[:oa] + (OUTER,) + shape[oa:]
            xs.append(kind_array(m, kind, shape, 7 * k + 1))
        return xs

    def nested(m):
        f = m.vmap(lambda *xs: program(m, *xs), in_axes=inner, out_axes=out_in)
        return m.vmap(f, in_axes=outer, out_axes=out_out)

    mx = mlxref_core
    xs = inputs(mx)
    got = nested(mx)(*xs)
    per_outer = []
    for o in range(OUTER):
        ys = [x if oa is None else mx.take(x, o, axis=oa) for x, oa in zip(xs, outer)]
        per_inner = [
            program(mx, *[y if ia is None else mx.take(y, b, axis=ia) for y, ia in zip(ys, inner)])
            for b in range(EXAMPLES)
        ]
        per_outer.append(mx.moveaxis(mx.stack(per_inner), 0, out_in))
    want = mx.moveaxis(mx.stack(per_outer), 0, out_out)
    assert got.shape == want.shape and got.tolist() == want.tolist()
    if real_mx is not None:
        assert_same_as_mlx(got, nested(real_mx)(*inputs(real_mx)))


def check_vmap_of_grad(loss, specs, argnums, in_axes, mlx_bug=None):
    """Per-example gradients (vmap of grad) equal a loop of grads, and real MLX's (or,
    where ``mlx_bug`` says MLX is wrong, still differ from them)."""
    def run(m):
        return m.vmap(m.grad(lambda *xs: loss(m, *xs), argnums=argnums), in_axes=in_axes)

    xs = example_inputs(mlxref_core, specs, in_axes)
    got = run(mlxref_core)(*xs)
    g = mlxref_core.grad(lambda *xs: loss(mlxref_core, *xs), argnums=argnums)
    assert_stacked(got, 0, loop_over_examples(lambda m, *e: g(*e), xs, in_axes), exact=False)
    if real_mx is not None:
        theirs = run(real_mx)(*example_inputs(real_mx, specs, in_axes))
        if mlx_bug:
            assert outputs_differ(leaves(got), leaves(theirs)), (
                f"MLX now agrees: {mlx_bug} is fixed")
            return
        for o, t in zip(leaves(got), leaves(theirs)):
            assert_same_as_mlx(o, t)


# --- a table of programs, each against real MLX --------------------------------------
# A table ``cases`` maps a name to ``program(m)``, written once against a module ``m``;
# a test runs each entry through ``check_case_against_mlx``. ``rule_cases`` and
# ``dtype_cases`` write the entries that are the same for every op of a table.

CASE_DTYPES = ['bool_', 'uint8', 'int16', 'int64', 'float16', 'bfloat16', 'float64', 'complex64']


def case_x(m):
    """The (2, 3) float32 input of the cases, in the library ``m``: 0.25, 0.5, ..., 1.5."""
    return m.array([[0.25, 0.5, 0.75], [1.0, 1.25, 1.5]])


def weighted_loss(m, outs):
    """A weighted sum of squares of the arrays ``outs``, so that each output element gets
    its own cotangent: element ``i`` of output ``k`` weighs ``i + 1 + k``."""
    total = 0
    for k, y in enumerate(outs):
        weights = m.arange(1, y.size + 1).reshape(y.shape).astype(m.float32) + k
        total = total + (y * y * weights).sum()
    return total


def rule_cases(ops, without_vmap=()):
    """For each op ``name -> f(m, x)`` of ``ops`` (one output, or a list or tuple of
    them) three cases on ``case_x``: ``grad_<name>``, the gradient of ``weighted_loss``;
    ``jvp_<name>``, the jvp with tangent ``3 x - 1``; ``vmap_<name>``, vmap over a batch
    of ``x``, ``2 x``, ``x + 1`` stacked on axis 1 (none for the names in
    ``without_vmap``)."""
    X = case_x
    cases = {}
    for n, f in ops.items():
        cases['grad_' + n] = lambda m, f=f: m.grad(
            lambda x: weighted_loss(m, leaves(f(m, x))))(X(m))
        cases['jvp_' + n] = lambda m, f=f: m.jvp(
            lambda x: leaves(f(m, x)), [X(m)], [X(m) * 3 - 1])[1]
        if n not in without_vmap:
            cases['vmap_' + n] = lambda m, f=f: m.vmap(lambda x: leaves(f(m, x)), in_axes=1)(
                m.stack([X(m), X(m) * 2, X(m) + 1], 1))
    return cases


def dtype_cases(ops, dtypes=CASE_DTYPES):
    """``dtype_<op>_<dtype>``: each op ``f(m, x)`` of ``ops`` on [[0, 1, 2], [3, 0, 5]]
    as each dtype (by its MLX name) of ``dtypes``."""
    cases = {}
    for dtype in dtypes:
        for op, f in ops.items():
            cases[f'dtype_{op}_{dtype}'] = lambda m, f=f, d=dtype: f(
                m, m.array([[0, 1, 2], [3, 0, 5]]).astype(getattr(m, d)))
    return cases


def check_case_against_mlx(program):
    """``program(lib)`` gives the same tree (``assert_same_tree``) with mlxref.core and
    with real MLX, or, where MLX raises, the same error (``both``)."""
    result = both(program)
    if result is not None:
        assert_same_tree(*result)


# --- pytest plumbing -----------------------------------------------------------------


def computed_once(tmp_path_factory, name, compute):
    """``compute()``'s result (JSON data), computed once per test run: under
    pytest-xdist each worker sets up a module-scoped fixture of its own, so
    an expensive one (a grading run, say) would run on every worker that
    gets one of its tests. The first worker computes and writes it to the
    run's shared temporary directory, under a lock; the others wait and
    read it."""
    import fcntl
    import json
    import os

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by the workers of one run
    path = root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            path.write_text(json.dumps(compute()))
        return json.loads(path.read_text())


@pytest.fixture(scope="module")
def frozen_heap():
    """Everything the worker's earlier tests left is moved out of the cycle
    collector's reach for one test file (after a full collection, so no
    garbage is kept): a ``gc.collect()`` in that file's tests then walks only
    what the file made. Late in a pytest-xdist worker's run the heap is large
    and one full collection takes seconds: once per file, not once per test.
    A file uses it with ``pytestmark = pytest.mark.usefixtures("frozen_heap")``
    and ``from support import frozen_heap``."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def chapters_run_as_notebooks():
    """Whether the docs extra is here, so tests/manual/test_manual.py runs each numbered chapter
    as a notebook and checks its outputs as doctest does: that run is the chapter's
    doctest, and tests/test_tutorials.py runs doctest on the other files only."""
    return all(importlib.util.find_spec(m) for m in
               ("sphinx", "myst_parser", "sphinx_book_theme", "jupytext", "nbclient", "ipykernel"))
