"""Shared helpers for the test suite: comparing against values and against real MLX."""

import gc
import importlib.util
import math
import re
from fractions import Fraction

import pytest

import mlxref.core as mlxref_core

try:  # the `metal` extra; CI installs it on Linux x86_64
    import mlx.core as real_mx
except ImportError:  # pragma: no cover - only where MLX has no wheel
    real_mx = None

needs_mlx = pytest.mark.skipif(
    real_mx is None, reason="mlx is not installed here (pip install -e '.[metal]')"
)


def ids(arrays):
    """The descriptors' ids of some arrays: what says two handles are one array."""
    return [a.id() for a in arrays]


def assert_new_handle(b, a):
    """``b`` is a new array object sharing ``a``'s descriptor, as MLX returns for
    an op that leaves its input unchanged (so ``b[i] = v`` leaves ``a`` alone)."""
    assert b is not a and b.id() == a.id()


def _flat(x):
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(_flat(v))
        return out
    return [x]


def close(a, b, rtol=1e-5, atol=1e-6):
    """Elementwise closeness of two (nested) lists or scalars; nan equals nan.
    Complex numbers are close when their real and imaginary parts are."""
    fa, fb = _flat(a), _flat(b)
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
    """Whether the docs extra is here, so tests/test_manual.py runs each numbered chapter
    as a notebook and checks its outputs as doctest does: that run is the chapter's
    doctest, and tests/test_tutorials.py runs doctest on the other files only."""
    return all(importlib.util.find_spec(m) for m in
               ("sphinx", "myst_parser", "jupytext", "nbclient", "ipykernel", "nbconvert"))
