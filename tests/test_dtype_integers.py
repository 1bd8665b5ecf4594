"""Integers as MLX computes them: wrapping, power, division, bitwise ops, argmax.

Every test that takes ``m`` runs its assertions twice: on mlxref and, when it
is installed, on MLX itself. Expected values come from the inputs, through
``wrap`` (C's two's-complement store) and Python's unbounded ints. Where MLX
kills the process (SIGFPE) or gives a layout-dependent result, the MLX side
runs in a subprocess or documents both of its answers, and mlxref raises.
"""

import array as pyarray
import itertools
import math
import re

import pytest

import mlxref.core as mx
from support import needs_mlx, real_mx


INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.fixture(params=[pytest.param("mlxref"), pytest.param("mlx", marks=needs_mlx)])
def m(request):
    """The library under test: mlxref, then real MLX."""
    return mx if request.param == "mlxref" else real_mx


# --- values and what a C integer stores ---------------------------------------------------


def bits(name):
    return int(name.lstrip("uint"))


def unsigned(name):
    return name.startswith("u")


def limits(name):
    b = bits(name)
    return (0, 2**b - 1) if unsigned(name) else (-(2 ** (b - 1)), 2 ** (b - 1) - 1)


def wrap(v, name):
    """``v`` as the dtype ``name`` stores it: modulo 2**bits, two's complement."""
    if name == "bool_":
        return bool(v)
    b = bits(name)
    v &= (1 << b) - 1
    return v - (1 << b) if not unsigned(name) and v >= 1 << (b - 1) else v


def edges(name):
    """The boundary values of a dtype: its limits, around them, and around 0."""
    if name == "bool_":
        return [False, True]
    lo, hi = limits(name)
    return sorted(v for v in {lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi} if lo <= v <= hi)


def make(m, values, name):
    """An array of ``values`` as dtype ``name``, built through int64 (MLX takes
    no Python int above 2**63 - 1, so uint64's top half comes in negative)."""
    if name == "bool_":
        return m.array(values, m.bool_)
    return m.array([v - 2**64 if v >= 2**63 else v for v in values], m.int64).astype(
        getattr(m, name)
    )


def dtype_name(a):
    return str(a.dtype).split(".")[-1]


# --- add, subtract, multiply, negative, abs, square, sign: they wrap -----------------------


def f32(v):
    return pyarray.array("f", [v])[0]


def _accumulator(name):
    """MLX's sum and prod dtype: the integers narrower than 64 bits become
    int32 or uint32; bool counts as int32."""
    if name == "bool_":
        return "int32"
    if bits(name) == 64:
        return name
    return "uint32" if unsigned(name) else "int32"


@pytest.mark.parametrize("name", INTS + ["bool_"])
def test_reductions_accumulate_and_wrap_as_mlx(m, name):
    vals = edges(name)
    nonzero = [v for v in vals if v] * 3  # a product worth wrapping
    x, nz = make(m, vals, name), make(m, nonzero, name)
    out = _accumulator(name)
    checks = [
        (m.sum(x), out, wrap(sum(vals), out)),
        (m.sum(m.reshape(x, (1, -1)), axis=1), out, [wrap(sum(vals), out)]),
        (m.prod(nz), out, wrap(math.prod(nonzero), out)),
        (m.mean(x), "float32", f32(f32(wrap(sum(vals), out)) * f32(1 / len(vals)))),
    ]
    if name != "bool_":
        running = list(itertools.accumulate(vals))
        checks += [
            (m.cumsum(x), name, [wrap(v, name) for v in running]),
            (m.max(x), name, max(vals)),
            (m.min(x), name, min(vals)),
        ]
    for got, dtype, want in checks:
        assert dtype_name(got) == dtype
        assert got.tolist() == want


# --- argmax and argmin are uint32 -------------------------------------------------------------


def test_argmax_and_argmin_are_uint32_and_index(m):
    x = m.array([[1, 3, 2], [5, 0, 1]])
    rows = m.argmax(x, axis=1)
    assert dtype_name(rows) == "uint32" and rows.tolist() == [1, 0]
    assert dtype_name(m.argmin(x)) == "uint32" and m.argmin(x).item() == 4
    assert dtype_name(x.argmax()) == "uint32"
    v = m.array([10, 20, 30])
    assert v[m.argmax(m.array([1, 3, 2]))].item() == 20
    assert v[m.array([2, 0], m.uint32)].tolist() == [30, 10]
    assert v[m.array([2, 0], m.uint64)].tolist() == [30, 10]
    assert m.take(v, m.array([2, 0], m.uint8)).tolist() == [30, 10]
    best = m.take_along_axis(x, m.argmax(x, axis=1, keepdims=True), axis=1)
    assert best.tolist() == [[3], [5]]
    w = m.array([1, 2, 3])
    w[m.array([1], m.uint32)] = 7
    assert w.tolist() == [1, 7, 3]


def test_batched_and_differentiated_argmax(m):
    x = m.array([[1, 3, 2], [5, 0, 1]])
    batched = m.vmap(m.argmax)(x)
    assert dtype_name(batched) == "uint32" and batched.tolist() == [1, 0]
    kept = m.vmap(lambda r: m.argmin(r, keepdims=True), in_axes=1)(x)
    assert dtype_name(kept) == "uint32" and kept.tolist() == [[0], [1], [1]]
    _, tangent = m.jvp(m.argmax, [m.array([1.0, 3.0, 2.0])], [m.array([1.0, 1.0, 1.0])])
    assert dtype_name(tangent[0]) == "uint32" and tangent[0].item() == 0
    # max's jvp reads the tangent at the argmax
    _, (t,) = m.jvp(lambda a: m.max(a, axis=1), [m.array([[1.0, 3.0, 2.0]])],
                    [m.array([[10.0, 20.0, 30.0]])])
    assert t.tolist() == [20.0]


def test_arithmetic_on_argmax_is_uint32_arithmetic(m):
    i = m.argmax(m.array([1, 3, 2]))
    assert dtype_name(i + 1) == "uint32" and (i + 1).item() == 2
    assert (i - 5).item() == wrap(1 - 5, "uint32")
    assert dtype_name(i + m.array(1)) == "int64"  # uint32 meets int32 in int64
    assert dtype_name(i + 0.5) == "float32"
    assert dtype_name(m.mean(m.argmax(m.array([[1, 3], [5, 0]]), axis=1))) == "float32"
    with pytest.raises(ValueError, match=re.escape("Converting -1 to uint32 would result in overflow.")):
        i * -1
