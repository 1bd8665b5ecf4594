"""Devices, streams, ``mx.stream``, the memory API and the ``mx.metal``/``mx.cuda``
namespaces (mlxref/core/device.py, memory.py, metal.py, cuda.py; MLX's mlx/device.h,
mlx/stream.h, python/src/memory.cpp), against real MLX's CPU build.

Stream indices are process-wide counters in both libraries, so tests compare how
they move (a new stream is numbered one past the last) rather than their values.
"""

import io
import os
import re
import threading
from contextlib import redirect_stderr

import pytest

import mlxref.core as mx
from support import assert_same_error, needs_mlx, printed_in_fresh_process, real_mx


@pytest.fixture
def restore_defaults():
    """Put back both libraries' default device and cpu stream after a test."""
    saved = [(lib, lib.default_device(), lib.default_stream(lib.cpu)) for lib in (mx, real_mx)]
    yield
    for lib, device, stream in saved:
        lib.set_default_device(device)
        lib.set_default_stream(stream)


def _index(s):
    return int(re.fullmatch(r"\w+\(Device\(\w+, \d+\), (\d+)\)", repr(s)).group(1))


# --- devices ----------------------------------------------------------------------


@needs_mlx
def test_device_values_print_as_in_mlx():
    for build in (
        lambda m: m.cpu, lambda m: m.gpu, lambda m: m.DeviceType.gpu,
        lambda m: m.Device(m.cpu), lambda m: m.Device(m.gpu, 1),
        lambda m: m.Device(m.DeviceType.cpu, 3), lambda m: m.default_device(),
        lambda m: m.Device(m.gpu).type,
    ):
        assert repr(build(mx)) == repr(build(real_mx))
        assert str(build(mx)) == str(build(real_mx))
    assert list(mx.DeviceType.__members__) == list(real_mx.DeviceType.__members__)


@needs_mlx
def test_device_equality_follows_mlx():
    def values(m):
        return [m.cpu, m.gpu, m.Device(m.cpu), m.Device(m.cpu, 1), m.Device(m.gpu),
                m.Device(m.gpu, 1), 0, "cpu"]

    for i, (a, ra) in enumerate(zip(values(mx), values(real_mx))):
        for b, rb in zip(values(mx), values(real_mx)):
            assert (a == b) == (ra == rb), (i, a, b)
            assert (a != b) == (ra != rb), (i, a, b)
    assert len({mx.Device(mx.cpu), mx.Device(mx.cpu, 0), mx.Device(mx.gpu)}) == 2


@needs_mlx
def test_device_constructor_errors():
    assert_same_error(lambda m: m.Device())
    assert_same_error(lambda m: m.Device("cpu"))
    assert_same_error(lambda m: m.Device(m.cpu, "0"))
    assert_same_error(lambda m: m.Device(5))
    assert repr(mx.Device(1, 2)) == repr(real_mx.Device(1, 2)) == "Device(gpu, 2)"
    assert_same_error(lambda m: int(m.DeviceType.gpu))


@needs_mlx
def test_availability_counts_and_info():
    for d in ("cpu", "gpu"):
        for build in (lambda m: getattr(m, d), lambda m: m.Device(getattr(m, d)),
                      lambda m: m.Device(getattr(m, d), 1)):
            assert mx.is_available(build(mx)) == real_mx.is_available(build(real_mx))
            assert mx.device_info(build(mx)) == real_mx.device_info(build(real_mx))
        assert mx.device_count(getattr(mx, d)) == real_mx.device_count(getattr(real_mx, d))
    assert mx.device_info() == real_mx.device_info()
    assert set(mx.device_info()) == {"architecture", "device_name"}
    assert_same_error(lambda m: m.device_count(m.Device(m.cpu)))
    assert_same_error(lambda m: m.device_info("cpu"))
    assert_same_error(lambda m: m.is_available("gpu"))


@needs_mlx
def test_the_gpu_is_refused_as_mlx_cpu_build_refuses_it(restore_defaults):
    assert_same_error(lambda m: m.set_default_device(m.gpu))
    assert_same_error(lambda m: m.set_default_device(m.Device(m.gpu)))
    assert_same_error(lambda m: m.default_stream(m.gpu))
    assert_same_error(lambda m: m.new_stream(m.gpu))
    assert_same_error(lambda m: m.stream(m.gpu).__enter__())
    assert_same_error(lambda m: m.synchronize(m.gpu))
    assert mx.default_device() == mx.cpu


@needs_mlx
def test_set_default_device_accepts_a_device_or_its_type(restore_defaults):
    for lib in (mx, real_mx):
        assert lib.set_default_device(lib.Device(lib.cpu)) is None
        assert lib.set_default_device(lib.cpu) is None
        assert lib.default_device() == lib.cpu
    assert_same_error(lambda m: m.set_default_device("cpu"))


def test_an_index_past_the_one_cpu_is_named():
    # MLX accepts Device(cpu, 2) as the default and then indexes out of range.
    with pytest.raises(ValueError, match=r"Device\(cpu, 2\)"):
        mx.default_stream(mx.Device(mx.cpu, 2))


# --- streams ----------------------------------------------------------------------


@needs_mlx
def test_streams_are_numbered_and_compared_as_in_mlx():
    for lib in (mx, real_mx):
        d = lib.default_stream(lib.cpu)
        assert repr(d).startswith("Stream(Device(cpu, 0), ")
        assert d == lib.default_stream(lib.Device(lib.cpu))
        a = lib.new_stream(lib.cpu)
        b = lib.new_stream(lib.Device(lib.cpu))
        c = lib.new_thread_unsafe_stream(lib.cpu)
        assert _index(b) == _index(a) + 1 and _index(c) == _index(b) + 1
        assert a != b and a != d and a == a and a != lib.cpu and d != lib.Device(lib.cpu)
        assert a.device == lib.cpu and str(a) == repr(a)
        assert {a: 1, b: 2}[b] == 2
        t1, t2 = lib.new_thread_local_stream(lib.cpu), lib.new_thread_local_stream(lib.cpu)
        assert repr(t1).startswith("ThreadLocalStream(Device(cpu, 0), ")
        assert _index(t2) == _index(t1) + 1 and t1 != t2 and t1 == t1
        assert not isinstance(t1, lib.Stream)
    assert_same_error(lambda m: m.Stream())
    assert_same_error(lambda m: m.Stream(m.cpu))
    assert_same_error(lambda m: m.new_stream("cpu"))
    assert_same_error(lambda m: m.default_stream("cpu"))
    assert_same_error(lambda m: m.new_thread_local_stream(2))
    assert mx.new_stream(0).device == mx.cpu and repr(mx.Device(1)) == repr(real_mx.Device(1))


@needs_mlx
def test_a_refused_gpu_stream_still_takes_a_number():
    for lib in (mx, real_mx):
        first = lib.new_stream(lib.cpu)
        with pytest.raises(ValueError):
            lib.new_stream(lib.gpu)
        assert _index(lib.new_stream(lib.cpu)) == _index(first) + 2


@needs_mlx
def test_set_default_stream(restore_defaults):
    for lib in (mx, real_mx):
        s = lib.new_stream(lib.cpu)
        assert lib.set_default_stream(s) is None
        assert lib.default_stream(lib.cpu) == s
        assert lib.default_device() == lib.cpu
    assert_same_error(lambda m: m.set_default_stream(m.cpu))
    assert_same_error(lambda m: m.set_default_stream(m.new_thread_local_stream(m.cpu)))


@needs_mlx
def test_each_thread_has_its_own_default_stream(restore_defaults):
    for lib in (mx, real_mx):
        s = lib.new_stream(lib.cpu)
        lib.set_default_stream(s)
        seen = []
        t = threading.Thread(target=lambda: seen.append(lib.default_stream(lib.cpu)))
        t.start()
        t.join()
        assert seen[0] != s and _index(seen[0]) > _index(s)
        assert lib.default_stream(lib.cpu) == s


def test_clear_streams_keeps_the_default(restore_defaults):
    # Real MLX keeps the default stream too, but drops its encoder, so its next op on
    # that stream fails ("There is no Stream(cpu, 0) in current thread."): it is not
    # called here, or the rest of the suite could not use real MLX.
    before = mx.default_stream(mx.cpu)
    assert mx.clear_streams() is None
    assert mx.default_stream(mx.cpu) == before
    assert mx.add(mx.array(1), 1, stream=before).item() == 2


@needs_mlx
def test_stream_context_sets_and_restores_the_defaults(restore_defaults):
    for lib in (mx, real_mx):
        outer = lib.default_stream(lib.cpu)
        s = lib.new_stream(lib.cpu)
        ctx = lib.stream(s)
        assert isinstance(ctx, lib.StreamContext)
        with ctx as got:
            assert got is None
            assert lib.default_stream(lib.cpu) == s
        assert lib.default_stream(lib.cpu) == outer
        with pytest.raises(KeyError):
            with lib.stream(s):
                raise KeyError("out")
        assert lib.default_stream(lib.cpu) == outer
        with lib.stream(lib.cpu), lib.StreamContext(lib.Device(lib.cpu)):
            assert lib.default_stream(lib.cpu) == outer
    assert_same_error(lambda m: m.stream("cpu"))
    assert_same_error(lambda m: m.stream(None))
    assert_same_error(lambda m: m.StreamContext(None))


@needs_mlx
def test_synchronize_takes_what_mlx_takes():
    for lib in (mx, real_mx):
        for s in (None, lib.cpu, lib.Device(lib.cpu), lib.new_stream(lib.cpu),
                  lib.new_thread_local_stream(lib.cpu)):
            assert lib.synchronize(s) is None
        assert lib.synchronize() is None
    assert_same_error(lambda m: m.synchronize("x"))


# --- a thread's default stream is made by its first op ------------------------------

# Programs run in a fresh process (the default stream is made once per process and
# thread), each ending with the streams that show when the default one was made.
FIRST_OP_PROGRAMS = {
    "nothing": "",
    "arrays from data, evaluated and printed": (
        "x = mx.array([1.0, 2.0])\nmx.eval(x)\nprint(x, x.tolist(), mx.array(3).item())\n"),
    "an op": "s = mx.new_stream(mx.cpu)\ny = mx.array(1.0) * 2\n",
    "an op refused by its checks": (
        "s = mx.new_stream(mx.cpu)\n"
        "try:\n    mx.array([1, 2]) + mx.array([1, 2, 3])\nexcept ValueError:\n    pass\n"),
    "zeros and random": "s = mx.new_stream(mx.cpu)\nmx.zeros((2,))\nmx.random.normal((2,))\n",
    "default_stream": "s = mx.new_stream(mx.cpu)\nprint(mx.default_stream(mx.cpu))\n",
    "mx.stream": ("s = mx.new_stream(mx.cpu)\nwith mx.stream(s):\n"
                  "    print(mx.default_stream(mx.cpu), mx.array(1.0) + 1)\n"),
    "set_default_stream": ("s = mx.new_stream(mx.cpu)\nmx.set_default_stream(s)\n"
                           "y = mx.array(1.0) * 2\n"),
    "a compiled call": "s = mx.new_stream(mx.cpu)\nmx.compile(lambda x: x * 2)(mx.array(1.0))\n",
    "a thread's first op": (
        "import threading\n"
        "def first_op():\n"
        "    s = mx.new_stream(mx.cpu)\n"
        "    y = mx.array(1.0) + 1\n"
        "    print('thread', s, mx.default_stream(mx.cpu))\n"
        "t = threading.Thread(target=first_op)\nt.start()\nt.join()\n"),
}


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("name", FIRST_OP_PROGRAMS)
def test_the_default_stream_is_made_by_the_first_op_as_in_mlx(name):
    program = FIRST_OP_PROGRAMS[name] + "print(mx.new_stream(mx.cpu), mx.default_stream(mx.cpu))\n"
    ours = printed_in_fresh_process("mlxref.core", program)
    assert ours == printed_in_fresh_process("mlx.core", program)


# --- stream= on ops -----------------------------------------------------------------


@needs_mlx
def test_ops_take_any_stream_or_device_and_compute_the_same():
    for lib in (mx, real_mx):
        x = lib.array([[1.0, -2.0], [3.0, 4.0]])
        streams = [lib.cpu, lib.Device(lib.cpu), lib.default_stream(lib.cpu),
                   lib.new_stream(lib.cpu)]
        streams.append(lib.new_thread_local_stream(lib.cpu))
        for s in streams:
            assert lib.add(x, 1, stream=s).tolist() == [[2.0, -1.0], [4.0, 5.0]]
            assert lib.sum(lib.abs(x, stream=s), axis=0, stream=s).tolist() == [4.0, 6.0]
            assert lib.reshape(x, (4,), stream=s).shape == (4,)
            assert lib.zeros((2,), stream=s).tolist() == [0.0, 0.0]
            assert x.astype(lib.int32, stream=s).tolist() == [[1, -2], [3, 4]]
            assert x.astype(lib.int32, s).dtype == lib.int32
            assert lib.astype(x, lib.float16, stream=s).dtype == lib.float16


@needs_mlx
def test_astype_errors():
    assert_same_error(lambda m: m.astype(1, m.float32))
    assert_same_error(lambda m: m.astype(m.array(1), "f"))
    assert_same_error(lambda m: m.array(1).astype("f"))
    b = mx.array([1, 2])
    c = mx.astype(b, mx.int32, stream=mx.cpu)
    assert c is not b and c.id() == b.id()


# --- memory -------------------------------------------------------------------------


@needs_mlx
def test_cache_is_always_empty():
    for lib in (mx, real_mx):
        lib.clear_cache()
        assert lib.get_cache_memory() == 0
        assert lib.clear_cache() is None
    x = mx.ones((1000,))
    mx.eval(x)
    del x
    assert mx.get_cache_memory() == 0


@needs_mlx
def test_memory_limit_starts_as_mlx_and_returns_the_previous_one():
    start = mx.get_memory_limit()
    assert start == real_mx.get_memory_limit()
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert start == int(0.8 * ram)
    try:
        for lib in (mx, real_mx):
            assert lib.set_memory_limit(1000) == start
            assert lib.get_memory_limit() == 1000
            assert lib.set_memory_limit(0) == 1000
    finally:
        mx.set_memory_limit(start)
        real_mx.set_memory_limit(start)
    y = mx.ones((10,)) * 2
    mx.eval(y)  # recorded, not enforced, as in MLX's CPU build


@needs_mlx
def test_cache_and_wired_limits():
    start = mx.set_cache_limit(7)
    real_start = real_mx.set_cache_limit(7)
    try:
        assert start == real_start == 32 * 2**20
        for lib in (mx, real_mx):
            assert lib.set_cache_limit(8) == 7
            assert lib.set_wired_limit(123) == 0
            assert lib.set_wired_limit(5) == 0
    finally:
        mx.set_cache_limit(start)
        real_mx.set_cache_limit(real_start)
    for f in ("set_memory_limit", "set_cache_limit", "set_wired_limit"):
        for bad in (-1, 1.5, 2**64, "1"):
            assert_same_error(lambda m: getattr(m, f)(bad))


# --- mx.metal and mx.cuda ------------------------------------------------------------


@needs_mlx
def test_metal_and_cuda_namespaces_have_mlx_names():
    for ns in ("metal", "cuda"):
        ours = {n for n in dir(getattr(mx, ns)) if not n.startswith("_")}
        theirs = {n for n in dir(getattr(real_mx, ns)) if not n.startswith("_")}
        assert theirs <= ours
        assert getattr(mx, ns).is_available() is getattr(real_mx, ns).is_available() is False


@needs_mlx
def test_metal_functions_warn_once_and_do_the_core_thing():
    err = io.StringIO()
    mx.metal._warned.clear()  # once per process, as MLX: start this test afresh
    with redirect_stderr(err):
        assert mx.metal.device_info() == {}
        assert mx.metal.device_info() == {}
        assert mx.metal.get_cache_memory() == 0
        assert mx.metal.get_active_memory() == mx.get_active_memory()
        assert mx.metal.set_wired_limit(3) == 0
        assert mx.metal.start_capture("trace.gputrace") is None
        assert mx.metal.stop_capture() is None
    lines = err.getvalue().splitlines()
    assert lines.count("mx.metal.device_info is deprecated and will be removed in a future "
                       "version. Use mx.device_info instead.") == 1
    assert len(lines) == 4
    assert not any("capture" in line for line in lines)
    assert real_mx.metal.device_info() == {}
    assert_same_error(lambda m: m.metal.start_capture(3))
