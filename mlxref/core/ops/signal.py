"""Window functions and 1-D convolution: ``bartlett``, ``blackman``,
``hamming``, ``hanning`` and ``convolve``.

Read alongside: mlx/ops.cpp (``bartlett``, ``hanning``, ``hamming``,
``blackman``) and python/src/ops.cpp (``convolve``). The windows are composed
from ``arange`` and elementwise ops in float32 as MLX writes them (so their
float32 roundings are MLX's). ``convolve`` is built as MLX's binding builds
it: the shorter input flipped, both reshaped to one channel, ``conv1d``.
"""

import math

from .. import dtypes as _dt
from ..array import array
from .common import incompatible_arguments, is_c_int
from .conv import conv1d
from .creation import ones, typed_arange
from .docs import shared_doc
from .elementwise import abs, add, cos, multiply, sin, square, subtract
from .shape import flip, pad

__all__ = ["bartlett", "blackman", "hamming", "hanning", "convolve"]

_STREAM = ("mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
           "mlx.core.DeviceType | None = None) -> mlx.core.array")
_SIGNATURES = {
    "bartlett": f"bartlett(M: int, *, stream: {_STREAM}",
    "hanning": f"hanning(M: int, *, stream: {_STREAM}",
    "hamming": "hamming(M: int, *, stream: StreamOrDevice = None) -> array",
    "blackman": "blackman(M: int, *, stream: StreamOrDevice = None) -> array",
}


def _f32(value):
    return array(value, _dt.float32)


def _window(name, M):
    """The checks and the sizes every window shares: M < 1 gives an empty
    float32 array, M == 1 a single one; else ``n = arange(M)`` in float32."""
    if not isinstance(M, int) or not is_c_int(M):  # (a bool is accepted, as MLX's binding does)
        raise incompatible_arguments(_SIGNATURES[name], (M,))
    if M < 1:
        return array([], _dt.float32), None
    if M == 1:
        return ones((1,), _dt.float32), None
    return None, typed_arange(0, M, 1, _dt.float32)


@shared_doc
def bartlett(M, *, stream=None):
    """``mx.bartlett``: the Bartlett (triangular) window of ``M`` points, ``1 - |2n / (M - 1) - 1|`` for ``n = 0 .. M - 1``.

    It rises linearly from 0 to 1 in the middle and falls back to 0. Composed
    in float32 from ``arange`` and elementwise ops as MLX writes it, so its
    roundings are MLX's.

    Arguments:
    {window_arguments}

    Errors: {window_errors}.

    >>> mx.bartlett(5)
    array([0, 0.5, 1, 0.5, 0], dtype=float32)
    """
    done, n = _window("bartlett", M)
    if n is None:
        return done
    factor = _f32(2.0 / (M - 1))
    return subtract(_f32(1.0), abs(subtract(multiply(factor, n), _f32(1.0))))


@shared_doc
def hanning(M, *, stream=None):
    """``mx.hanning``: the Hann window of ``M`` points, computed as ``sin(pi n / (M - 1))**2`` for ``n = 0 .. M - 1``.

    That is MLX's form of ``0.5 - 0.5 cos(2 pi n / (M - 1))``, in float32, so
    the last point is the square of the sine of pi rounded to float32, a tiny
    number rather than 0 (as in MLX).

    Arguments:
    {window_arguments}

    Errors: {window_errors}.

    >>> mx.hanning(5)
    array([0, 0.5, 1, 0.5, 7.64274e-15], dtype=float32)
    """
    done, n = _window("hanning", M)
    if n is None:
        return done
    return square(sin(multiply(_f32(math.pi / (M - 1)), n)))


@shared_doc
def hamming(M, *, stream=None):
    """``mx.hamming``: the Hamming window of ``M`` points, ``0.54 - 0.46 cos(2 pi n / (M - 1))`` for ``n = 0 .. M - 1``.

    A raised cosine that stays at 0.08 at both ends. Composed in float32 as MLX
    writes it.

    Arguments:
    {window_arguments}

    Errors: {window_errors}.

    >>> mx.hamming(5)
    array([0.08, 0.54, 1, 0.54, 0.08], dtype=float32)
    """
    done, n = _window("hamming", M)
    if n is None:
        return done
    c = cos(multiply(_f32(2.0 * math.pi / (M - 1)), n))
    return subtract(_f32(0.54), multiply(_f32(0.46), c))


@shared_doc
def blackman(M, *, stream=None):
    """``mx.blackman``: the Blackman window of ``M`` points, ``0.42 - 0.5 cos x + 0.08 cos 2x`` with ``x = 2 pi n / (M - 1)``.

    MLX writes it as ``0.34 - 0.5 c + 0.16 c**2`` with ``c = cos x`` (the same
    function), in float32; mlxref composes that form, so the roundings are
    MLX's.

    Arguments:
    {window_arguments}

    Errors: {window_errors}.

    >>> mx.blackman(5)
    array([0, 0.34, 1, 0.34, 0], dtype=float32)
    """
    done, n = _window("blackman", M)
    if n is None:
        return done
    c = cos(multiply(_f32(2.0 * math.pi / (M - 1)), n))
    return add(subtract(_f32(0.34), multiply(_f32(0.5), c)), multiply(_f32(0.16), square(c)))


_CONVOLVE = ('convolve(a: array, v: array, /, mode: str = "full", *, '
             "stream: StreamOrDevice = None) -> array")


@shared_doc
def convolve(a, v, /, mode="full", *, stream=None):
    """``mx.convolve``: the discrete convolution of two 1-D arrays, ``out[k] = sum_j a[j] v[k - j]``.

    The ``mode`` picks which part of the full result is kept: "full" (every
    overlap, ``len(a) + len(v) - 1`` points), "same" (the length of the longer
    input, centred as MLX centres it: an even kernel pads one more zero on the
    left) or "valid" (only full overlaps). MLX's binding puts the longer
    array first, flips the shorter one and runs ``conv1d``; so does mlxref,
    so the inputs must be of a floating type.

    Arguments:
    - ``a``: a 1-D array.
    - ``v``: a 1-D array.
    - ``mode``: "full" (default), "same" or "valid".

    Errors: ``ValueError`` for inputs that are not 1-D (MLX: "[convolve] Inputs
    must be 1D."), an empty input (MLX: "[convolve] Inputs cannot be empty."),
    another mode (MLX: "[convolve] Invalid mode.") or integer inputs (MLX:
    "[conv] Invalid input array with type int32. Convolution currently only
    supports floating point types").

    >>> a, v = mx.array([1.0, 2.0, 3.0]), mx.array([0.0, 1.0, 0.5])
    >>> mx.convolve(a, v)
    array([0, 1, 2.5, 4, 1.5], dtype=float32)
    >>> mx.convolve(a, v, mode="same")
    array([1, 2.5, 4], dtype=float32)
    """
    if not isinstance(a, array) or not isinstance(v, array) or not isinstance(mode, str):
        raise incompatible_arguments(_CONVOLVE, (a, v, mode))
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("[convolve] Inputs must be 1D.")
    if a.size == 0 or v.size == 0:
        raise ValueError("[convolve] Inputs cannot be empty.")
    x, w = (v, a) if a.size < v.size else (a, v)
    w = flip(w, 0).reshape(1, -1, 1)
    x = x.reshape(1, -1, 1)
    k = w.size
    if mode == "full":
        padding = k - 1
    elif mode == "valid":
        padding = 0
    elif mode == "same":
        padding = k // 2
        if k % 2 == 0:  # even: one more zero on the left, as a pad of its own
            x = pad(x, [(0, 0), (padding, max(0, padding - 1)), (0, 0)], "constant",
                    array(0))
            padding = 0
    else:
        raise ValueError("[convolve] Invalid mode.")
    return conv1d(x, w, 1, padding).reshape(-1)
