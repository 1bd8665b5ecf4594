"""Arrays whose element lists would not fit in memory are refused when evaluated (issue 33).

mlxref/core/backend/cpu/allocator.py (``array_limit``, ``check_lists``) and
list_memory.py (``ELEMENT_BYTES``, the message). Building stays lazy, as in
MLX; evaluation checks every list it is about to make before it makes any,
so the refusal comes at once and allocates nothing: these tests watch
tracemalloc's peak and the kernels (never called), not the clock.

The limit is set through ``MLXREF_MAX_ARRAY_BYTES``, the documented override,
so no test depends on the machine's RAM.
"""

import gc
import io
import math
import os
import re
import struct
import tracemalloc

import numpy as np
import pytest

import mlxref.core as mx
from mlxref.core.backend.cpu import allocator
from mlxref.core.backend.cpu.list_memory import ELEMENT_BYTES
from mlxref.core.primitives.creation import Arange, Full

VARIABLE = "MLXREF_MAX_ARRAY_BYTES"


@pytest.fixture
def limit(monkeypatch):
    """Set the limit (bytes) for the rest of the test."""
    def set_limit(nbytes):
        monkeypatch.setenv(VARIABLE, str(nbytes))
    monkeypatch.delenv(VARIABLE, raising=False)
    return set_limit


def refusal(make):
    """The RuntimeError evaluating ``make()`` raises, and tracemalloc's peak
    (bytes) while it was built, evaluated and refused."""
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError) as info:
            mx.eval(make())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(info.value), peak


def measured_element_bytes(make):
    """Bytes per element of the list of the array ``make()``, evaluated, as
    tracemalloc counts them (the bytes asked for, before the allocator's
    rounding; the intermediates are freed by then)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        a = make()
        mx.eval(a)
        gc.collect()
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return used / a.size


# --- the issue's examples ------------------------------------------------------


@pytest.mark.parametrize("make, primitive, shape", [
    (lambda: mx.arange(0, 1, 1e-9), "Arange", (10**9,)),
    (lambda: mx.arange(0.0, 1.0, 1e-9), "Arange", (10**9,)),
    (lambda: mx.zeros((40000, 40000)), "Full", (40000, 40000)),
])
def test_the_issue_examples_are_refused_at_once_with_sizes_and_limit(limit, make, primitive, shape):
    limit(8 * 10**9)
    message, peak = refusal(make)
    size = math.prod(shape)
    assert message.startswith(f"[eval] Cannot hold the {primitive} array of shape "
                              f"({','.join(map(str, shape))}) and dtype float32")
    assert f"its {size:,} elements" in message
    # 8 bytes a slot + a 24-byte float in a 32-byte block: 40 bytes an element.
    assert f"would take {size * 40 / 1e9:.1f} GB (40 bytes each" in message
    assert f"MLX allocates {size * 4 / 1e9:.1f} GB" in message
    assert f"more than the 8.0 GB mlxref lets one array take (set by {VARIABLE})" in message
    assert peak < 200_000  # nothing near a list of that size was made


def test_no_kernel_runs_and_nothing_is_counted_before_the_refusal(limit, monkeypatch):
    calls = []
    monkeypatch.setattr(Arange, "eval", lambda self, inputs: calls.append(self))
    monkeypatch.setattr(Full, "eval", lambda self, inputs: calls.append(self))
    limit(10**6)
    a = mx.arange(30000)  # 1.2 MB as a list: refused
    b = mx.zeros(10)  # fits, but is evaluated with a in one mx.eval
    active = mx.get_active_memory()
    with pytest.raises(RuntimeError, match=r"\[eval\] Cannot hold the Arange array"):
        mx.eval(b, a)
    assert calls == []  # neither kernel ran: the check comes before every node
    assert mx.get_active_memory() == active
    assert not a.is_available() and not b.is_available()


def test_building_stays_lazy_as_in_mlx(limit):
    # MLX's test_shape_overflow_error builds mx.zeros(2**30) and only looks at
    # shapes; mlxref refuses nothing until it is evaluated.
    limit(1000)
    big = mx.zeros(2**30)
    assert big.shape == (2**30,) and big.nbytes == 4 * 2**30
    with pytest.raises(OverflowError, match=str(3 * 2**30)):
        mx.concatenate([big] * 3)
    with pytest.raises(RuntimeError, match=r"shape \(1073741824\)"):
        mx.eval(big)


# --- the limit and the override ------------------------------------------------


def test_the_override_lowered_refuses_a_moderate_array_and_allows_a_smaller(limit):
    limit(40_000)  # bytes: 1,000 float32 elements of 40 bytes
    assert mx.zeros(1000).tolist() == [0.0] * 1000
    assert mx.sum(mx.ones(1000)).item() == 1000
    message, _ = refusal(lambda: mx.zeros(1001))
    assert "its 1,001 elements would take 40,040 bytes (40 bytes each" in message
    assert f"more than the 40,000 bytes mlxref lets one array take (set by {VARIABLE})" in message
    with pytest.raises(RuntimeError, match="1,001 elements"):
        mx.ones(1001).tolist()  # the same through any way of evaluating
    limit(40_040)
    assert mx.ones(1001).sum().item() == 1001


def test_the_limit_by_dtype(limit):
    limit(80_000)
    assert mx.zeros(10_000, mx.bool_).size == 10_000 and mx.zeros(10_000, mx.uint8).sum().item() == 0
    mx.eval(mx.zeros(1428, mx.int64))  # 1,428 x 56 bytes fits
    with pytest.raises(RuntimeError, match="dtype int64: as a Python list its 1,429 elements "
                                           r"would take 80,024 bytes \(56 bytes each"):
        mx.eval(mx.zeros(1429, mx.int64))
    with pytest.raises(RuntimeError, match="dtype bool: .* 10,001 elements would take 80,008 bytes"):
        mx.eval(mx.zeros(10_001, mx.bool_))


def test_without_the_override_the_limit_is_half_the_ram(limit):
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert allocator.array_limit() == ram // 2
    # MLX's own tests (test_all_reduce) evaluate 8M-element float32 arrays.
    assert 2**23 * ELEMENT_BYTES[mx.float32] <= ram // 2 or ram < 2**30


def test_a_malformed_override_is_named(limit):
    limit("lots")
    with pytest.raises(ValueError, match=f"{VARIABLE} must be a whole number of bytes, not 'lots'"):
        mx.eval(mx.zeros(3))


N = 100_000


@pytest.mark.parametrize("dtype, make", [
    (mx.float32, lambda: mx.arange(N, dtype=mx.float32) * 1.5 + 0.25),
    (mx.float16, lambda: mx.arange(N, dtype=mx.float16) * 0.5),
    (mx.complex64, lambda: mx.arange(N, dtype=mx.float32) * mx.array(1 + 1j, mx.complex64)),
    (mx.int32, lambda: mx.arange(N, dtype=mx.int32) + 2**30),
    (mx.uint32, lambda: mx.arange(N, dtype=mx.uint32) + (2**32 - N - 1)),
    (mx.int64, lambda: mx.arange(N, dtype=mx.int64) + 2**62),
    (mx.uint64, lambda: mx.array(0, mx.uint64) - mx.arange(1, N + 1, dtype=mx.uint64)),  # wraps
    (mx.int8, lambda: mx.arange(N, dtype=mx.int8) % 100 - 127),  # not ints Python shares
    (mx.uint8, lambda: mx.arange(N, dtype=mx.uint8)),  # always shared
    (mx.bool_, lambda: mx.arange(N) % 2 == 0),
], ids=lambda v: getattr(v, "name", ""))
def test_element_bytes_agree_with_tracemalloc(dtype, make):
    # tracemalloc counts the bytes asked for; CPython's allocator rounds each
    # object up to a 16-byte block, so the table may be up to 15 bytes more.
    measured = math.floor(measured_element_bytes(make))
    assert measured <= ELEMENT_BYTES[dtype] < measured + 16


# --- every family of ops -------------------------------------------------------

# (name, make(n): an array of about n x n float32 elements)
FAMILIES = [
    ("zeros", lambda n: mx.zeros((n, n))),
    ("ones", lambda n: mx.ones((n, n))),
    ("full", lambda n: mx.full((n, n), 2.5)),
    ("arange", lambda n: mx.arange(n * n, dtype=mx.float32)),
    ("linspace", lambda n: mx.linspace(0, 1, n * n)),
    ("eye", lambda n: mx.eye(n)),
    ("tri", lambda n: mx.tri(n)),
    ("random.uniform", lambda n: mx.random.uniform(shape=(n, n), key=mx.random.key(0))),
    ("random.normal", lambda n: mx.random.normal((n, n), key=mx.random.key(0))),
    ("random.randint", lambda n: mx.random.randint(0, 9, (n, n), key=mx.random.key(0))),
    ("random.bernoulli", lambda n: mx.random.bernoulli(0.5, (n, n), key=mx.random.key(0))),
    ("broadcast_to", lambda n: mx.broadcast_to(mx.ones(n), (n, n))),
    ("tile", lambda n: mx.tile(mx.ones(n), (n, 1))),
    ("repeat", lambda n: mx.repeat(mx.ones(n), n)),
    ("pad", lambda n: mx.pad(mx.ones((n // 2, n)), ((0, n - n // 2), (0, 0)))),
    ("concatenate", lambda n: mx.concatenate([mx.ones((n // 2, n)), mx.ones((n - n // 2, n))])),
    ("matmul", lambda n: mx.ones((n, 1)) @ mx.ones((1, n))),
    ("outer", lambda n: mx.outer(mx.ones(n), mx.ones(n))),
    ("reshape", lambda n: mx.reshape(mx.ones((n, n)), (-1,))),
]


REFUSAL = re.compile(r"\[eval\] Cannot hold the (\w+) array of shape \(([\d,]*)\) and dtype "
                     r"(\w+): as a Python list its ([\d,]+) elements would take ([\d.]+) MB ")


def unevaluated_nodes(out):
    """(primitive name, shape, dtype) of every unevaluated node behind ``out``."""
    found, stack, seen = set(), [out], set()
    while stack:
        a = stack.pop()
        if a.id() in seen or a.is_available():
            continue
        seen.add(a.id())
        found.add((a.primitive().name, a.shape, a.dtype.name))
        stack.extend(a.inputs())
    return found


@pytest.mark.parametrize("name, make", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_family_is_refused_above_the_limit_and_runs_below(limit, name, make):
    limit(1_000_000)  # 25,000 float32 elements
    small = make(20)
    mx.eval(small)
    assert small.size == 400
    out = make(200)  # 40,000 elements: 1.6 MB or more
    over = {(p, shape, d) for p, shape, d in unevaluated_nodes(out)
            if math.prod(shape) * ELEMENT_BYTES[getattr(mx, d if d != "bool" else "bool_")] > 10**6}
    message, peak = refusal(lambda: out)
    primitive, shape, dtype, count, amount = REFUSAL.match(message).groups()
    shape = tuple(int(d) for d in shape.split(","))
    assert (primitive, shape, dtype) in over  # a node of the graph that does not fit
    assert int(count.replace(",", "")) == math.prod(shape) == 40_000
    dtype = getattr(mx, dtype if dtype != "bool" else "bool_")
    assert amount == f"{40_000 * ELEMENT_BYTES[dtype] / 1e6:.1f}"
    assert peak < 200_000


# --- files ---------------------------------------------------------------------


def _npy(shape, body):
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + body


def test_a_file_declaring_a_huge_shape_is_refused_at_once(limit, tmp_path):
    limit(8 * 10**9)
    path = tmp_path / "huge.npy"
    path.write_bytes(_npy((100_000, 100_000), b"\0" * 64))  # 40 GB declared, 64 bytes held
    a = mx.load(str(path))
    assert a.shape == (100_000, 100_000)
    message, peak = refusal(lambda: a)
    assert "[eval] Cannot hold the Load array of shape (100000,100000)" in message
    assert "would take 400.0 GB" in message and peak < 200_000


def test_load_from_a_file_object_checks_before_decoding(limit):
    limit(1_000_000)
    buffer = io.BytesIO()
    np.save(buffer, np.arange(30_000, dtype=np.float32))
    with pytest.raises(RuntimeError, match=r"\[load\] Cannot hold an array of shape \(30000\)"
                                           r" and dtype float32: .* 30,000 elements would take 1.2 MB"):
        mx.load(io.BytesIO(buffer.getvalue()), format="npy")
    buffer = io.BytesIO()
    np.save(buffer, np.arange(300, dtype=np.float32))
    assert mx.load(io.BytesIO(buffer.getvalue()), format="npy").tolist() == list(range(300))
