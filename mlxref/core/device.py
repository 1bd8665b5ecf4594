"""Devices and streams: ``mx.Device``, ``mx.Stream``, ``mx.stream(...)`` and the rest.

Read alongside: mlx/device.h, mlx/device.cpp, mlx/stream.h, mlx/stream.cpp,
mlx/utils.h (``StreamContext``, ``to_stream``), python/src/device.cpp and
python/src/stream.cpp, as MLX's CPU build on Linux has them.

mlxref computes everything in Python, at once, on the CPU. These exist so that
MLX code, which names devices and streams everywhere, runs unchanged: there is
one device, ``Device(cpu, 0)``; ``gpu`` exists as a value, and asking for a gpu
stream gives the error MLX's CPU build gives. Streams are bookkeeping only: they
number as MLX numbers them, and ``stream=`` on an op changes nothing in its result.
Each thread has its own default stream per device, which, as in MLX, does not
exist until something asks for it: the thread's first op (building its first
node calls ``make_default_stream``), ``default_stream`` or ``mx.stream``. Making
an array from data, evaluating or printing one asks for none, so a stream that
``new_stream`` makes before a thread's first op is numbered before that thread's
default stream. ``compile`` keys its cache by ``peek_default_stream``, which
makes nothing.
"""

import enum
import platform
import threading

from .ops.common import incompatible_arguments, is_c_int
from .transforms.eval import raise_deferred


class DeviceType(enum.Enum):
    """``mx.DeviceType``: ``cpu`` or ``gpu`` (MLX's ``Device::DeviceType``)."""

    cpu = 0
    gpu = 1

    def __repr__(self):
        return f"DeviceType.{self.name}"

    def __eq__(self, other):
        # python/src/device.cpp: a DeviceType equals a Device of its type, whatever
        # its index (mlx/device.h's Device == DeviceType); the reverse is not so.
        if isinstance(other, Device):
            return other._type is self
        return other is self

    __hash__ = enum.Enum.__hash__


DeviceType.__module__ = "mlxref.core"
cpu = DeviceType.cpu
gpu = DeviceType.gpu
_GPU_AVAILABLE = False


def _device_type(t):
    """A DeviceType, or None: nanobind takes the ints 0 and 1 (and bools) for one."""
    if isinstance(t, DeviceType):
        return t
    if isinstance(t, int) and t in (0, 1):
        return DeviceType(int(t))
    return None


def _device(d, signature, args=None, kwargs=None):
    """A ``Device`` from a Device or DeviceType (MLX's implicit conversion), else
    MLX's TypeError for ``signature``."""
    if isinstance(d, Device):
        return d
    if _device_type(d) is not None:
        return Device(_device_type(d))
    raise incompatible_arguments(signature, (d,) if args is None else args, kwargs)


class Device:
    """``mx.Device(type, index=0)``: a device to run operations on (mlx/device.h)."""

    __slots__ = ("_type", "_index")

    def __init__(self, *args, **kwargs):
        given = dict(zip(("type", "index"), args), **kwargs)
        t = _device_type(given.get("type"))
        index = given.get("index", 0)
        if len(args) > 2 or set(kwargs) - {"type", "index"} or (set(kwargs) & set(
                list(("type", "index"))[:len(args)])) or t is None or not _is_int(index):
            raise incompatible_arguments(
                "__init__(self, type: mlx.core.DeviceType, index: int = 0) -> None",
                (self,) + args, kwargs)
        self._type, self._index = t, int(index)

    @property
    def type(self):
        return self._type

    def __repr__(self):
        return f"Device({self._type.name}, {self._index})"

    def __eq__(self, other):
        if isinstance(other, DeviceType):
            other = Device(other)
        if not isinstance(other, Device):
            return False
        return self._type is other._type and self._index == other._index

    def __hash__(self):
        return hash((self._type.value, self._index))


Device.__module__ = "mlxref.core"


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool) and is_c_int(x)


class _StreamBase:
    """What ``Stream`` and ``ThreadLocalStream`` share: an index and a device, no
    constructor, equality of both within one class (python/src/stream.cpp)."""

    __slots__ = ("_index", "_device")

    def __init__(self, *args, **kwargs):
        raise TypeError(f"mlx.core.{type(self).__name__}: no constructor defined!")

    @classmethod
    def _make(cls, index, device):
        s = object.__new__(cls)
        s._index, s._device = index, device
        return s

    @property
    def device(self):
        return self._device

    def __repr__(self):
        return f"Stream({self._device!r}, {self._index})"

    def __eq__(self, other):
        return (type(other) is type(self)
                and (self._index, self._device) == (other._index, other._device))

    def __hash__(self):
        return hash((type(self).__name__, self._index, self._device))


class Stream(_StreamBase):
    """``mx.Stream``: a stream on a device (mlx/stream.h). Made only by
    ``new_stream``/``default_stream``; two streams are equal when their index and
    device are."""


class ThreadLocalStream(_StreamBase):
    """``mx.ThreadLocalStream``: names one stream per thread (MLX's
    ``new_thread_local_stream``); used as ``stream=``, each thread gets its own."""

    def __repr__(self):
        return f"ThreadLocalStream({self._device!r}, {self._index})"


Stream.__module__ = ThreadLocalStream.__module__ = "mlxref.core"


class _State:
    """What mlx/stream.cpp and mlx/device.cpp keep for the process: every stream
    made (their count gives the next index), the thread-local streams made and
    the default device."""

    lock = threading.Lock()
    n_streams = 0
    n_thread_local = 0
    default_device = Device(cpu)


class ThreadStreams(threading.local):
    """What each thread keeps (mlx/stream.cpp's ``thread_local`` storage): its
    default stream per device, made the first time something asks for it, and
    its stream for each ``ThreadLocalStream`` it used."""

    def __init__(self):
        self.defaults = {}  # {Device: Stream}
        self.from_tls = {}  # {ThreadLocalStream: Stream}


thread_streams = ThreadStreams()


def _new_stream(device, name):
    with _State.lock:
        index = _State.n_streams
        _State.n_streams += 1  # MLX numbers the stream before the backend refuses a gpu one
    if device.type is gpu and not _GPU_AVAILABLE:
        raise ValueError(f"[{name}] Cannot make gpu stream without gpu backend.")
    return Stream._make(index, device)


def default_device():
    """``mx.default_device()``: ``Device(cpu, 0)`` unless ``set_default_device`` changed it."""
    return _State.default_device


def set_default_device(device):
    """``mx.set_default_device(device)``. The gpu gets MLX's CPU-build error."""
    d = _device(device, "set_default_device(device: Device | DeviceType) -> None")
    if d.type is gpu and not _GPU_AVAILABLE:
        raise ValueError("[set_default_device] Cannot set gpu device without gpu backend.")
    _State.default_device = d


def default_stream(device):
    """``mx.default_stream(device)``: this thread's default stream for ``device``,
    made by ``new_stream`` the first time it is asked for."""
    d = _device(device, "default_stream(device: Device | DeviceType) -> Stream")
    if d.type is gpu and not _GPU_AVAILABLE:
        raise ValueError("[default_stream] Cannot get gpu stream without gpu backend.")
    if not 0 <= d._index < device_count(d.type):
        # MLX indexes a vector out of range here (std::out_of_range).
        raise ValueError(f"[default_stream] {d!r} does not exist: mlxref has one cpu device, "
                         "Device(cpu, 0).")
    defaults = thread_streams.defaults
    s = defaults.get(d)
    if s is None:
        s = defaults[d] = _new_stream(d, "new_stream")
    return s


def peek_default_stream(device):
    """This thread's default stream for ``device`` if something has made it, else
    None, making nothing (MLX's C++ ``peek_default_stream``; its compile cache keys
    an entry by it, transforms/compile.py)."""
    return thread_streams.defaults.get(device)


def make_default_stream():
    """Make this thread's default stream for the default device, as MLX's first op
    on a thread does: an op given no ``stream=`` runs on that stream, and asking for
    it (``to_stream``) makes it. Building a node (``array._node``) calls this while
    the thread has no default stream (``thread_streams.defaults`` is empty: mlxref
    has one device), so that check is all an op pays once the stream exists."""
    default_stream(_State.default_device)


def set_default_stream(stream):
    """``mx.set_default_stream(stream)``: make ``stream`` this thread's default for
    its device (the default device stays)."""
    if not isinstance(stream, Stream):
        raise incompatible_arguments("set_default_stream(stream: mlx.core.Stream) -> None",
                                     (stream,))
    thread_streams.defaults[stream.device] = stream


def new_stream(device):
    """``mx.new_stream(device)``: a new stream, numbered after every stream made so far."""
    d = _device(device, "new_stream(device: Device | DeviceType) -> Stream")
    return _new_stream(d, "new_stream")


def new_thread_unsafe_stream(device):
    """``mx.new_thread_unsafe_stream(device)``: as ``new_stream`` (mlxref's streams are
    bookkeeping, so any thread may use any stream)."""
    d = _device(device, "new_thread_unsafe_stream(device: Device | DeviceType) -> Stream")
    return _new_stream(d, "new_thread_unsafe_stream")


def new_thread_local_stream(device):
    """``mx.new_thread_local_stream(device)``: a ``ThreadLocalStream``, numbered
    among the thread-local streams; each thread that uses it gets a stream of its own."""
    d = _device(device, "new_thread_local_stream(device: Device | DeviceType) -> "
                        "ThreadLocalStream")
    with _State.lock:
        index = _State.n_thread_local
        _State.n_thread_local += 1
    return ThreadLocalStream._make(index, d)


def clear_streams():
    """``mx.clear_streams()``: MLX drops the thread's command encoders (and resets
    its random key); the streams themselves, and the thread's defaults, stay. mlxref's
    streams hold nothing, so there is nothing to drop."""


def is_stream_or_device(s):
    """Whether ``s`` is what MLX's ``StreamOrDevice`` arguments take (None aside)."""
    return isinstance(s, (Stream, ThreadLocalStream, Device)) or _device_type(s) is not None


_STREAM_OR_DEVICE = ("mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
                     "mlx.core.DeviceType")


def to_stream(s, signature=None, args=None, kwargs=None):
    """The stream a ``stream=`` argument names (mlx/utils.cpp ``to_stream``): None is
    the default device's default stream, a device its default stream, a
    ThreadLocalStream this thread's stream for it. Anything else is MLX's TypeError
    for ``signature``."""
    if s is None:
        return default_stream(_State.default_device)
    if isinstance(s, ThreadLocalStream):
        streams = thread_streams.from_tls
        if s not in streams:
            streams[s] = _new_stream(s.device, "new_stream")
        return streams[s]
    if isinstance(s, Stream):
        return s
    if isinstance(s, Device) or _device_type(s) is not None:
        return default_stream(s)
    raise incompatible_arguments(signature or f"to_stream(s: {_STREAM_OR_DEVICE})",
                                 (s,) if args is None else args, kwargs)


def synchronize(stream=None):
    """``mx.synchronize(stream=None)``: wait for ``stream``'s work. mlxref computes at
    ``eval`` time, so there is nothing to wait for; the argument is checked as MLX
    checks it, and a kernel's error that ``async_eval`` kept is raised."""
    to_stream(stream, f"synchronize(stream: {_STREAM_OR_DEVICE} | None = None) -> None")
    raise_deferred()  # a kernel's error from async_eval surfaces here, as in MLX


class StreamContext:
    """``mx.StreamContext(s)``, what ``mx.stream(s)`` returns (mlx/utils.h): on
    entry it makes ``s``'s device the default device and ``s`` (or the device's
    default stream) its default stream; on exit it puts back the ones it found."""

    def __init__(self, s):
        if not is_stream_or_device(s):
            raise incompatible_arguments(f"__init__(self, s: {_STREAM_OR_DEVICE}) -> None",
                                         (self, s))
        self._s = s
        self._saved = None

    def __enter__(self):
        saved = default_stream(_State.default_device)
        s = to_stream(self._s)
        set_default_device(s.device)
        set_default_stream(s)
        self._saved = saved

    def __exit__(self, exc_type=None, exc_value=None, traceback=None):
        if self._saved is not None:
            set_default_device(self._saved.device)
            set_default_stream(self._saved)
            self._saved = None


StreamContext.__module__ = "mlxref.core"


def stream(s):
    """``mx.stream(s)``: a context manager making ``s`` (a Stream or a device) the
    default while it is open."""
    if not is_stream_or_device(s):
        raise incompatible_arguments(f"stream(s: {_STREAM_OR_DEVICE}) -> mlx.core.StreamContext",
                                     (s,))
    return StreamContext(s)


def is_available(device):
    """``mx.is_available(device)``: True for ``Device(cpu, 0)``, False for any gpu."""
    d = _device(device, "is_available(device: Device | DeviceType) -> bool")
    return d._index < device_count(d.type)


def device_count(device_type):
    """``mx.device_count(device_type)``: 1 cpu, 0 gpus."""
    t = _device_type(device_type)
    if t is None:
        raise incompatible_arguments(
            "device_count(device_type: mlx.core.DeviceType) -> int", (device_type,))
    return 1 if t is cpu else 0


def _cpu_name():
    # mlx/backend/cpu/device_info.cpp: /proc/cpuinfo's first "model name", else the architecture.
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ": " in line:
                    return line.rstrip("\n").split(": ", 1)[1]
    except OSError:
        pass
    return platform.machine() or "unknown"


def device_info(d=None):
    """``mx.device_info(d=None)``: for the cpu, its ``device_name`` and
    ``architecture`` as MLX reads them; for a gpu, ``{}`` (MLX's CPU build)."""
    d = (_State.default_device if d is None else
         _device(d, "device_info(d: None | Device | DeviceType = None) -> dict[str, str | int]"))
    if d.type is gpu:
        return {}
    return {"architecture": platform.machine() or "unknown", "device_name": _cpu_name()}
