"""The Fourier transforms ``mx.fft`` offers, composed as MLX composes them.

Read alongside: mlx/fft.cpp (``fft_impl``, ``fftshift``, ``fftfreq``,
``stft``, ``istft``) and python/src/fft.cpp (the bindings: their defaults,
``norm`` and the checks on ``s`` and ``axes``).

Every transform is ``fft_impl``: check the axes and sizes, crop the input to
the sizes asked for (a slice) or zero-pad it (a slice update into zeros),
cast it (float32 for rfft, complex64 otherwise), build one ``FFT`` node and
multiply by the ``norm`` scale. ``mx.fft`` (mlxref/core/fft.py) names these
functions; they are not in ``mx`` itself.
"""

import copy
import math
import operator

from .. import dtypes as _dt
from ..array import array
from ..primitives.base import make_array
from ..primitives.fft import FFT
from .common import astype, broadcast_to, check_dims, incompatible_arguments
from .creation import ones, typed_arange, zeros
from .docs import shared_doc
from .elementwise import add, divide, maximum, multiply, real, square
from .shape import (as_strided, concatenate, pad, reshape, roll, strided_slice,
                    strided_slice_update, swapaxes)

# The functions are mx.fft's (mlxref/core/fft.py), not mx's.
__all__ = []

_STREAM = ("stream: mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
           "mlx.core.DeviceType | None = None) -> mlx.core.array")
_ONE = ("(a: mlx.core.array, n: int | None = None, axis: int = -1, norm: str = 'backward', "
        + _STREAM)
_TWO = ("(a: mlx.core.array, s: tuple[int, ...] | None = None, axes: "
        "collections.abc.Sequence[int] | None = [-2, -1], norm: str = 'backward', " + _STREAM)
_N = ("(a: mlx.core.array, s: tuple[int, ...] | None = None, axes: "
      "collections.abc.Sequence[int] | None = None, norm: str = 'backward', " + _STREAM)
_SHIFT = ("(a: mlx.core.array, axes: int | collections.abc.Sequence[int] | None = None, "
          + _STREAM)
_FREQ = "(n: int, d: float = 1.0, " + _STREAM
_STFT = ("stft(x: mlx.core.array, n_fft: int = 2048, hop_length: int | None = None, "
         "win_length: int | None = None, window: mlx.core.array | None = None, "
         "center: bool = True, pad_mode: str = 'reflect', norm: str = 'backward', "
         "onesided: bool | None = None, " + _STREAM)
_ISTFT = ("istft(stft_matrix: mlx.core.array, n_fft: int | None = None, hop_length: int | "
          "None = None, win_length: int | None = None, window: mlx.core.array | None = None, "
          "center: bool = True, norm: str = 'backward', onesided: bool | None = None, "
          "length: int | None = None, " + _STREAM)

_NORMS = ("backward", "ortho", "forward")


def _fmt(values):
    """A list of ints as MLX prints a vector: ``(0,2)``."""
    return "(" + ",".join(str(v) for v in values) + ")"


def _is_int(x, bits=32):
    """What nanobind reads as a C int: a Python int (a bool too) in 32 bits
    (or ``bits``)."""
    return isinstance(x, int) and -(2**(bits - 1)) <= x < 2**(bits - 1)


def _given(args):
    """The keyword arguments a binding's TypeError lists: those that differ
    from their default (``{name: (value, default)}``)."""
    return {k: v for k, (v, d) in args.items()
            if not (v is d or (type(v) is type(d) and v == d))} or None


def _ints(x, bits=32):
    return isinstance(x, (list, tuple)) and all(_is_int(v, bits) for v in x)


def _index(x):
    """An int from what nanobind's int caster converts (NumPy's integers,
    anything with ``__index__``); anything else unchanged, for the checks to refuse."""
    if x is None or isinstance(x, (int, float, str)):
        return x
    try:
        return operator.index(x)
    except TypeError:
        return x


def _indices(x):
    """``_index`` of each element of a list or tuple (as a list); anything else unchanged."""
    return [_index(v) for v in x] if isinstance(x, (list, tuple)) else _index(x)


def _scale(n, norm, inverse):
    """MLX's ``fft_scale_factor``: what ``norm`` multiplies the unnormalized
    forward (or 1/n-scaled inverse) transform by."""
    if not n or norm == "backward":
        return 1.0
    count = math.prod(float(v) for v in n)
    if norm == "ortho":
        return math.sqrt(count) if inverse else 1.0 / math.sqrt(count)
    return count if inverse else 1.0 / count


def fft_impl(a, n, axes, real, inverse, norm="backward", name="fftn"):
    """MLX's ``fft_impl``: the transform of ``a`` over ``axes``, the input
    cropped or zero-padded to the sizes ``n`` (None: ``a``'s own, except
    ``2 (m - 1)`` on an irfft's last axis)."""
    if n is None:
        n = []
        for ax in axes:
            if not -a.ndim <= ax < a.ndim:  # MLX reads past the shape ("SmallVector out of range.")
                raise IndexError(f"[{name}] Invalid axis {ax} for array with {a.ndim} "
                                 "dimensions.")
            n.append(a.shape[ax])
        if real and inverse and a.ndim > 0 and n:
            n[-1] = (n[-1] - 1) * 2
    n = list(n)
    if a.ndim < 1:
        raise ValueError("[fftn] Requires array with at least one dimension.")
    if len(n) != len(axes):
        raise ValueError("[fftn] Shape and axes have different sizes.")
    if not axes:
        return copy.copy(a)
    valid = [ax + a.ndim if ax < 0 else ax for ax in axes]
    if len(set(valid)) != len(axes):
        raise ValueError(f"[fftn] Duplicated axis received {_fmt(axes)}")
    if min(valid) < 0 or max(valid) >= a.ndim:
        raise IndexError(f"[fftn] Invalid axis received for array with {a.ndim} dimensions.")
    if any(v <= 0 for v in n):
        raise ValueError(f"[fftn] Invalid FFT output size requested {_fmt(n)}")

    in_shape = list(a.shape)
    for ax, size in zip(valid, n):
        in_shape[ax] = size
    if real and inverse:
        in_shape[valid[-1]] = n[-1] // 2 + 1
    x = a
    if any(m < d for m, d in zip(in_shape, a.shape)):  # crop
        x = strided_slice(x, [0] * x.ndim, [min(m, d) for m, d in zip(in_shape, a.shape)],
                          [1] * x.ndim)
    if any(m > d for m, d in zip(in_shape, a.shape)):  # zero-pad
        x = strided_slice_update(zeros(tuple(in_shape), a.dtype), x, [0] * x.ndim, x.shape,
                                 [1] * x.ndim)
    in_type = _dt.float32 if real and not inverse else _dt.complex64
    out = make_array(FFT(valid, inverse, real, n[-1]), [astype(x, in_type)])
    scale = _scale(n, norm, inverse)
    if scale != 1.0:
        return multiply(out, array(scale, out.dtype))
    return out


def _norm(norm, name):
    if norm not in _NORMS:
        raise ValueError(f"[{name}] Invalid norm. Expected one of {{'backward', 'ortho', "
                         "'forward'}.")
    return norm


def _one_axis(name, a, n, axis, norm, real, inverse):
    """The bindings of fft, ifft, rfft and irfft."""
    size, ax = _index(n), _index(axis)
    if (not isinstance(a, array) or (size is not None and not _is_int(size)) or not _is_int(ax)
            or not isinstance(norm, str)):
        given = _given({"n": (n, None), "axis": (axis, -1), "norm": (norm, "backward")})
        raise incompatible_arguments(name + _ONE, (a,), given)
    _norm(norm, name)
    return fft_impl(a, None if size is None else [size], [ax], real, inverse, norm, name)


def _many_axes(name, a, s, axes, norm, real, inverse, default_axes):
    """The bindings of the 2-D and n-D transforms: ``s`` needs ``axes``;
    neither: every axis."""
    sizes, ax = _indices(s), _indices(axes)
    if (not isinstance(a, array) or (sizes is not None and not _ints(sizes, bits=64))
            or (ax is not None and not _ints(ax)) or not isinstance(norm, str)):
        default = axes if isinstance(axes, (list, tuple)) and list(axes) == default_axes else None
        given = _given({"s": (s, None), "axes": (axes, default), "norm": (norm, "backward")})
        raise incompatible_arguments(name + (_TWO if default_axes else _N), (a,), given)
    if sizes is not None:  # MLX's sizes are 32-bit (past that its process aborts)
        check_dims(name, sizes)
    _norm(norm, name)
    if ax is None:
        if sizes is not None:
            raise ValueError(f"[{name}] `axes` should not be `None` if `s` is not `None`.")
        ax = list(range(a.ndim))
    return fft_impl(a, sizes, ax, real, inverse, norm, name)


@shared_doc
def fft(a, n=None, axis=-1, norm="backward", stream=None):
    """``mx.fft.fft``: the discrete Fourier transform along ``axis``, ``X[k] = sum_j x[j] exp(-2 pi i j k / n)``.

    The result is complex64 (a real input is cast). With ``n`` the input is
    first cropped or zero-padded to ``n`` points along ``axis``. ``norm``
    scales it: "backward" (the default) not at all, "ortho" by ``1/sqrt(n)``,
    "forward" by ``1/n``. One ``FFT`` node (mlx/fft.cpp ``fft_impl``).

    Arguments:
    {fft_arguments}

    Errors: {fft_errors}.

    >>> mx.fft.fft(mx.array([1.0, 2.0, 3.0, 4.0]))
    array([10+0j, -2+2j, -2+0j, -2-2j], dtype=complex64)
    >>> mx.fft.fft(mx.array([1.0, 2.0, 3.0, 4.0]), n=2)
    array([3+0j, -1+0j], dtype=complex64)
    """
    return _one_axis("fft", a, n, axis, norm, False, False)


@shared_doc
def ifft(a, n=None, axis=-1, norm="backward", stream=None):
    """``mx.fft.ifft``: the inverse discrete Fourier transform along ``axis``, ``x[j] = (1/n) sum_k X[k] exp(2 pi i j k / n)``.

    The result is complex64. With ``n`` the input is first cropped or
    zero-padded to ``n`` points along ``axis``. ``norm`` says where the ``1/n``
    goes: "backward" (the default) here, "ortho" ``1/sqrt(n)`` here and in
    ``fft``, "forward" none here (``fft`` has it). One ``FFT`` node.

    Arguments:
    {fft_arguments}

    Errors: {fft_errors}.

    >>> mx.fft.ifft(mx.array([8, 2, 0, 2]))
    array([3+0j, 2+0j, 1+0j, 2+0j], dtype=complex64)
    """
    return _one_axis("ifft", a, n, axis, norm, False, True)


@shared_doc
def rfft(a, n=None, axis=-1, norm="backward", stream=None):
    """``mx.fft.rfft``: the discrete Fourier transform of a real signal along ``axis``, its ``n // 2 + 1`` non-negative frequencies.

    The other frequencies of a real signal are the complex conjugates of these,
    so they are left out. A complex input counts as its real part (it is cast to
    float32); the result is complex64. ``n`` crops or zero-pads the input, and
    ``norm`` scales as in ``fft``. One ``FFT`` node.

    Arguments:
    {fft_arguments}

    Errors: {fft_errors}.

    >>> mx.fft.rfft(mx.array([1.0, 2.0, 3.0, 4.0]))
    array([10+0j, -2+2j, -2+0j], dtype=complex64)
    """
    return _one_axis("rfft", a, n, axis, norm, True, False)


@shared_doc
def irfft(a, n=None, axis=-1, norm="backward", stream=None):
    """``mx.fft.irfft``: the real signal of ``n`` points whose ``rfft`` is ``a``, the inverse of ``rfft`` along ``axis``.

    ``n`` defaults to ``2 (m - 1)`` for ``m`` frequencies; the input is
    cropped or zero-padded to ``n // 2 + 1`` frequencies. The result is float32,
    scaled by ``1/n`` under the default ``norm`` (see ``ifft``). One ``FFT``
    node.

    Arguments:
    - ``a``: the non-negative frequencies (at least 1-D).
    - ``n``: the number of output points (default ``2 (m - 1)``).
    {fft_axis_norm}

    Errors: {fft_errors}.

    >>> mx.fft.irfft(mx.array([10, -2 + 2j, -2]))
    array([1, 2, 3, 4], dtype=float32)
    """
    return _one_axis("irfft", a, n, axis, norm, True, True)


@shared_doc
def fft2(a, s=None, axes=(-2, -1), norm="backward", stream=None):
    """``mx.fft.fft2``: the two-dimensional discrete Fourier transform, ``fftn`` over ``axes`` (default the last two).

    The one-dimensional ``fft`` along each of the two axes; the result is complex64,
    and ``norm`` counts the points of both axes.

    Arguments:
    - ``a``: the input array.
    {fft2_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.fft2(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[10+0j, -2+0j],
           [-4+0j, 0+0j]], dtype=complex64)
    """
    return _many_axes("fft2", a, s, axes, norm, False, False, [-2, -1])


@shared_doc
def ifft2(a, s=None, axes=(-2, -1), norm="backward", stream=None):
    """``mx.fft.ifft2``: the two-dimensional inverse discrete Fourier transform, ``ifftn`` over ``axes`` (default the last two).

    Under the default ``norm`` it divides by the number of points of both axes, so
    ``ifft2(fft2(a))`` gives ``a`` back (as complex64).

    Arguments:
    - ``a``: the input array.
    {fft2_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.ifft2(mx.array([[10.0, -2.0], [-4.0, 0.0]]))
    array([[1+0j, 2+0j],
           [3+0j, 4+0j]], dtype=complex64)
    """
    return _many_axes("ifft2", a, s, axes, norm, False, True, [-2, -1])


@shared_doc
def rfft2(a, s=None, axes=(-2, -1), norm="backward", stream=None):
    """``mx.fft.rfft2``: the two-dimensional discrete Fourier transform of a real input, ``rfftn`` over ``axes`` (default the last two).

    The last of ``axes`` keeps its ``n // 2 + 1`` non-negative frequencies.

    Arguments:
    - ``a``: the input array; its real part is transformed (as float32).
    {fft2_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.rfft2(mx.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[10+0j, -2+0j],
           [-4+0j, 0+0j]], dtype=complex64)
    """
    return _many_axes("rfft2", a, s, axes, norm, True, False, [-2, -1])


@shared_doc
def irfft2(a, s=None, axes=(-2, -1), norm="backward", stream=None):
    """``mx.fft.irfft2``: the real inverse of ``rfft2``, ``irfftn`` over ``axes`` (default the last two).

    The last of ``axes`` becomes ``s[-1]`` points (default ``2 (m - 1)``).

    Arguments:
    - ``a``: the input array.
    {irfft2_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.irfft2(mx.array([[10.0, -2.0], [-4.0, 0.0]]))
    array([[1, 2],
           [3, 4]], dtype=float32)
    """
    return _many_axes("irfft2", a, s, axes, norm, True, True, [-2, -1])


@shared_doc
def fftn(a, s=None, axes=None, norm="backward", stream=None):
    """``mx.fft.fftn``: the n-dimensional discrete Fourier transform over ``axes`` (default all of them).

    The one-dimensional ``fft`` applied along each of ``axes``; each is first
    cropped or zero-padded to its size in ``s`` (which needs ``axes``). The
    result is complex64; ``norm`` counts all the points transformed. One
    ``FFT`` node (mlx/fft.cpp ``fft_impl``).

    Arguments:
    - ``a``: the input array.
    {fftn_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.fftn(mx.ones((2, 2, 2)))
    array([[[8+0j, 0+0j],
            [0+0j, 0+0j]],
           [[0+0j, 0+0j],
            [0+0j, 0+0j]]], dtype=complex64)
    """
    return _many_axes("fftn", a, s, axes, norm, False, False, None)


@shared_doc
def ifftn(a, s=None, axes=None, norm="backward", stream=None):
    """``mx.fft.ifftn``: the n-dimensional inverse discrete Fourier transform over ``axes`` (default all of them).

    The one-dimensional ``ifft`` applied along each of ``axes``, with ``s``
    and ``norm`` as in ``fftn``; the result is complex64.

    Arguments:
    - ``a``: the input array.
    {fftn_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.ifftn(mx.ones((2, 2)))
    array([[1+0j, 0+0j],
           [0+0j, 0+0j]], dtype=complex64)
    """
    return _many_axes("ifftn", a, s, axes, norm, False, True, None)


@shared_doc
def rfftn(a, s=None, axes=None, norm="backward", stream=None):
    """``mx.fft.rfftn``: the n-dimensional discrete Fourier transform of a real input over ``axes`` (default all of them).

    The last of ``axes`` keeps ``s[-1] // 2 + 1`` non-negative frequencies, the
    others all of theirs. The input counts as its real part (float32).

    Arguments:
    - ``a``: the input array.
    {fftn_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.rfftn(mx.ones((2, 4)))
    array([[8+0j, 0+0j, 0+0j],
           [0+0j, 0+0j, 0+0j]], dtype=complex64)
    """
    return _many_axes("rfftn", a, s, axes, norm, True, False, None)


@shared_doc
def irfftn(a, s=None, axes=None, norm="backward", stream=None):
    """``mx.fft.irfftn``: the real inverse of ``rfftn`` over ``axes`` (default all of them).

    The last of ``axes`` becomes ``s[-1]`` points long (default ``2 (m - 1)``);
    the result is float32.

    Arguments:
    - ``a``: the input array.
    {irfftn_arguments}

    Errors: {fftn_errors}.

    >>> mx.fft.irfftn(mx.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    array([[1, 1, 1, 1],
           [1, 1, 1, 1]], dtype=float32)
    """
    return _many_axes("irfftn", a, s, axes, norm, True, True, None)


def _shift(name, a, axes, inverse):
    """MLX's ``fftshift`` / ``ifftshift``: a roll by half of each axis."""
    given, axes = axes, _indices(axes)
    if not isinstance(a, array) or not (axes is None or _is_int(axes) or _ints(axes)):
        raise incompatible_arguments(name + _SHIFT, (a,),
                                     None if given is None else {"axes": given})
    if axes is None:
        if a.ndim < 1:
            return copy.copy(a)
        axes = list(range(a.ndim))
    elif _is_int(axes):
        axes = [axes]
    if not axes:
        return copy.copy(a)
    shifts = []
    for ax in axes:
        d = ax + a.ndim if ax < 0 else ax
        if d < 0 or d >= a.ndim:
            raise IndexError(f"[{name}] Invalid axis {ax} for array with {a.ndim} dimensions.")
        shifts.append(-(a.shape[d] // 2) if inverse else a.shape[d] // 2)
    return roll(a, tuple(shifts), tuple(axes))


@shared_doc
def fftshift(a, axes=None, stream=None):
    """``mx.fft.fftshift``: the zero frequency moved to the middle: a roll by ``n // 2`` along each of ``axes``.

    After it, the frequencies of an ``fft`` run from the most negative to the
    most positive. Composed of ``roll``, as MLX does; any dtype.

    Arguments:
    {shift_arguments}

    Errors: {shift_error}.

    >>> mx.fft.fftshift(mx.arange(5))
    array([3, 4, 0, 1, 2], dtype=int32)
    """
    return _shift("fftshift", a, axes, False)


@shared_doc
def ifftshift(a, axes=None, stream=None):
    """``mx.fft.ifftshift``: the inverse of ``fftshift``: a roll by ``-(n // 2)`` along each of ``axes``.

    It puts the zero frequency back first; for odd sizes it differs from
    ``fftshift``. Composed of ``roll``, as MLX does; any dtype.

    Arguments:
    {shift_arguments}

    Errors: {shift_error}.

    >>> mx.fft.ifftshift(mx.arange(5))
    array([2, 3, 4, 0, 1], dtype=int32)
    """
    return _shift("ifftshift", a, axes, True)


def _freq_args(name, n, d):
    """The checks of fftfreq and rfftfreq; ``n`` may be anything with
    ``__index__`` (a one-element integer array) and ``d`` anything with
    ``__float__``, as nanobind converts them."""
    try:
        size = operator.index(n)
        spacing = None if isinstance(d, (str, bytes)) else float(d)
    except (TypeError, ValueError):
        size = spacing = None
    if not _is_int(size) or spacing is None:
        raise incompatible_arguments(name + _FREQ, (n,), None if d == 1.0 else {"d": d})
    n, d = size, spacing
    if n <= 0:
        raise ValueError(f"[{name}] `n` must be greater than 0.")
    if d == 0.0:
        raise ValueError(f"[{name}] `d` must be non-zero.")
    # MLX's float32 scale: 1 / (n d) formed in double, then rounded.
    return n, array(1.0 / (float(n) * d), _dt.float32)


@shared_doc
def fftfreq(n, d=1.0, stream=None):
    """``mx.fft.fftfreq``: the frequency of each point of an ``n``-point DFT with sample spacing ``d``, ``[0, 1, ..., -(n // 2), ..., -1] / (n d)``.

    float32; the scale ``1 / (n d)`` is formed in double and rounded once, as
    in MLX.

    Arguments:
    {freq_arguments}

    Errors: {freq_errors}.

    >>> mx.fft.fftfreq(5)
    array([0, 0.2, 0.4, -0.4, -0.2], dtype=float32)
    """
    n, scale = _freq_args("fftfreq", n, d)
    freqs = concatenate([typed_arange(0, (n + 1) // 2, 1, _dt.float32),
                         typed_arange(-(n // 2), 0, 1, _dt.float32)])
    return multiply(freqs, scale)


@shared_doc
def rfftfreq(n, d=1.0, stream=None):
    """``mx.fft.rfftfreq``: the ``n // 2 + 1`` non-negative frequencies of an ``n``-point real DFT with sample spacing ``d``, ``[0, 1, ..., n // 2] / (n d)``.

    float32, the frequencies of ``rfft``'s outputs.

    Arguments:
    {freq_arguments}

    Errors: {freq_errors}.

    >>> mx.fft.rfftfreq(5, d=0.5)
    array([0, 0.4, 0.8], dtype=float32)
    """
    n, scale = _freq_args("rfftfreq", n, d)
    return multiply(typed_arange(0, n // 2 + 1, 1, _dt.float32), scale)


# --- the short-time transforms ---------------------------------------------------------


def _prepare_window(window, win_length, n_fft, op):
    """MLX's ``prepare_window``: ``window`` (default ``win_length`` ones)
    centred in ``n_fft`` points with zeros."""
    win = ones((win_length,), _dt.float32) if window is None else window
    if win.ndim != 1:
        raise ValueError(f"[{op}] window must be a one-dimensional array.")
    wl = win.shape[0]
    if wl > n_fft:
        raise ValueError(f"[{op}] window length must not exceed n_fft.")
    if wl < n_fft:
        left = (n_fft - wl) // 2
        win = pad(win, [(left, n_fft - wl - left)])
    return win


def _optional_int(x):
    return x is None or _is_int(x)


@shared_doc
def stft(x, n_fft=2048, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", norm="backward", onesided=None, stream=None):
    """``mx.fft.stft``: the short-time Fourier transform: the DFT of overlapping windowed frames of the last axis, shaped ``(..., n_freq, n_frames)``.

    As MLX composes it: the leading axes flattened into one, the ends padded
    by ``n_fft // 2`` when ``center`` (``pad`` with ``pad_mode``), frames of
    ``n_fft`` samples cut by ``as_strided`` every ``hop_length`` samples,
    multiplied by the window (centred in ``n_fft`` points with zeros), then
    ``rfftn`` (``onesided``: ``n_fft // 2 + 1`` frequencies) or ``fftn`` of
    each frame, and the last two axes swapped.

    Arguments:
    - ``x``: the signal, at least 1-D (the last axis is time).
    - ``n_fft``: the frame length and DFT size (default 2048).
    - ``hop_length``: samples between frame starts (default ``n_fft // 4``).
    - ``win_length``: the window length when ``window`` is None: that many ones
      (default ``n_fft``).
    - ``window``: a 1-D array of at most ``n_fft`` points (default None).
    - ``center``: pad both ends by ``n_fft // 2`` first (default True).
    - ``pad_mode``: ``pad``'s mode for that padding (default "reflect").
    - ``norm``: "backward", "ortho" or "forward", as in ``fft`` (default
      "backward").
    - ``onesided``: keep only the non-negative frequencies (default None: True
      for a real input, False for complex64).

    Errors: ``ValueError`` for ``n_fft`` or ``hop_length`` below 1 (MLX:
    "[stft] n_fft must be positive.", "[stft] hop_length must be positive."), a
    window longer than ``n_fft`` (MLX: "[stft] window length must not exceed
    n_fft."), a 0-d input (MLX: "[stft] Input must have at least one
    dimension.") or an input shorter than a frame (MLX: "[stft] Input is too
    short for the given n_fft.").

    >>> x = mx.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    >>> mx.fft.stft(x, n_fft=4, hop_length=2, center=False)
    array([[10+0j, 18+0j],
           [-2+2j, -2+2j],
           [-2+0j, -2+0j]], dtype=complex64)
    """
    args = {"n_fft": (n_fft, 2048), "hop_length": (hop_length, None),
            "win_length": (win_length, None), "window": (window, None),
            "center": (center, True), "pad_mode": (pad_mode, "reflect"),
            "norm": (norm, "backward"), "onesided": (onesided, None)}
    n_fft, hop_length, win_length = _index(n_fft), _index(hop_length), _index(win_length)
    if (not isinstance(x, array) or not _is_int(n_fft) or not _optional_int(hop_length)
            or not _optional_int(win_length) or not (window is None or isinstance(window, array))
            or not isinstance(center, bool) or not isinstance(pad_mode, str)
            or not isinstance(norm, str) or not (onesided is None or isinstance(onesided, bool))):
        raise incompatible_arguments(_STFT, (x,), _given(args))
    _norm(norm, "stft")
    if n_fft <= 0:
        raise ValueError("[stft] n_fft must be positive.")
    if x.ndim < 1:
        raise ValueError("[stft] Input must have at least one dimension.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_len = n_fft if win_length is None else win_length
    if hop <= 0:
        raise ValueError("[stft] hop_length must be positive.")
    sided = x.dtype is not _dt.complex64 if onesided is None else onesided
    win = _prepare_window(window, win_len, n_fft, "stft")

    lead = x.shape[:-1]
    t = x.shape[-1]
    flat = reshape(x, (-1, t))
    if center:
        flat = pad(flat, [(0, 0), (n_fft // 2, n_fft // 2)], pad_mode)
    tp = flat.shape[-1]
    if tp < n_fft:
        raise ValueError("[stft] Input is too short for the given n_fft.")
    n_frames = 1 + (tp - n_fft) // hop
    b = flat.shape[0]
    frames = multiply(as_strided(flat, (b, n_frames, n_fft), (tp, hop, 1), 0), win)
    spec = fft_impl(frames, [n_fft], [-1], sided, False, norm)
    spec = swapaxes(spec, -1, -2)
    return reshape(spec, lead + (spec.shape[-2], n_frames))


@shared_doc
def istft(stft_matrix, n_fft=None, hop_length=None, win_length=None, window=None, center=True,
          norm="backward", onesided=None, length=None, stream=None):
    """``mx.fft.istft``: the inverse short-time Fourier transform: the signal whose ``stft`` is ``stft_matrix``.

    As MLX composes it: the inverse transform of every frame (``irfftn`` when
    ``onesided``, the default, else the real part of ``ifftn``) times the
    window, overlap-added, divided by the overlap-added squared window (at
    least 1e-8), the centring pad dropped and the result cut or zero-padded to
    ``length``. The overlap-add sums ``ceil(n_fft / hop)`` shifted copies.

    Arguments:
    - ``stft_matrix``: ``(..., n_freq, n_frames)``, as ``stft`` returns.
    - ``n_fft``: the frame length (default ``2 (n_freq - 1)`` when onesided,
      else ``n_freq``).
    - ``hop_length``: samples between frame starts (default ``n_fft // 4``).
    - ``win_length``: the window length when ``window`` is None (default
      ``n_fft``).
    - ``window``: the window ``stft`` used (default None: ones).
    - ``center``: ``stft`` padded the ends; drop ``n_fft // 2`` samples there
      (default True).
    - ``norm``: "backward", "ortho" or "forward", as ``stft``'s (default
      "backward").
    - ``onesided``: the frames hold only non-negative frequencies (default None:
      True).
    - ``length``: the output length (default: all the samples the frames
      cover).

    Errors: ``ValueError`` for an input of fewer than two dimensions (MLX:
    "[istft] Input must have at least two dimensions (freq, frames)."), and as
    ``stft``'s for ``n_fft``, ``hop_length`` and the window.

    >>> x = mx.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    >>> S = mx.fft.stft(x, n_fft=4, hop_length=2, center=False)
    >>> mx.fft.istft(S, hop_length=2, center=False)
    array([1, 2, 3, 4, 5, 6], dtype=float32)
    """
    args = {"n_fft": (n_fft, None), "hop_length": (hop_length, None),
            "win_length": (win_length, None), "window": (window, None),
            "center": (center, True), "norm": (norm, "backward"),
            "onesided": (onesided, None), "length": (length, None)}
    n_fft, hop_length, win_length, length = map(_index, (n_fft, hop_length, win_length, length))
    if (not isinstance(stft_matrix, array) or not _optional_int(n_fft)
            or not _optional_int(hop_length) or not _optional_int(win_length)
            or not (window is None or isinstance(window, array))
            or not isinstance(center, bool) or not isinstance(norm, str)
            or not (onesided is None or isinstance(onesided, bool))
            or not _optional_int(length)):
        raise incompatible_arguments(_ISTFT, (stft_matrix,), _given(args))
    _norm(norm, "istft")
    if stft_matrix.ndim < 2:
        raise ValueError("[istft] Input must have at least two dimensions (freq, frames).")
    sided = True if onesided is None else onesided
    n_freq = stft_matrix.shape[-2]
    if n_fft is None:
        n_fft = (n_freq - 1) * 2 if sided else n_freq
    if n_fft <= 0:
        raise ValueError("[istft] n_fft must be positive.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_len = n_fft if win_length is None else win_length
    if hop <= 0:
        raise ValueError("[istft] hop_length must be positive.")
    win = _prepare_window(window, win_len, n_fft, "istft")

    lead = stft_matrix.shape[:-2]
    n_frames = stft_matrix.shape[-1]
    z = swapaxes(reshape(stft_matrix, (-1, n_freq, n_frames)), -1, -2)
    b = z.shape[0]
    if sided:
        frames = fft_impl(z, [n_fft], [-1], True, True, norm)
    else:
        frames = real(fft_impl(z, [n_fft], [-1], False, True, norm))
    frames = multiply(frames, win)

    # Overlap-add: block k of frame i lands on output block i + k.
    seg = -(-n_fft // hop)
    wp = seg * hop
    win_sq = square(win)
    if wp > n_fft:
        frames = pad(frames, [(0, 0), (0, 0), (0, wp - n_fft)])
        win_sq = pad(win_sq, [(0, wp - n_fft)])
    blocks = reshape(frames, (b, n_frames, seg, hop))
    win_blocks = broadcast_to(reshape(win_sq, (1, 1, seg, hop)), (1, n_frames, seg, hop))
    out_len = (n_frames + seg - 1) * hop
    signal = zeros((b, out_len), frames.dtype)
    envelope = zeros((1, out_len), frames.dtype)
    for k in range(seg):
        ck = reshape(strided_slice(blocks, [0, 0, k, 0], [b, n_frames, k + 1, hop],
                                   [1, 1, 1, 1]), (b, n_frames, hop))
        ck = pad(ck, [(0, 0), (k, seg - 1 - k), (0, 0)])
        signal = add(signal, reshape(ck, (b, out_len)))
        wk = reshape(strided_slice(win_blocks, [0, 0, k, 0], [1, n_frames, k + 1, hop],
                                   [1, 1, 1, 1]), (1, n_frames, hop))
        wk = pad(wk, [(0, 0), (k, seg - 1 - k), (0, 0)])
        envelope = add(envelope, reshape(wk, (1, out_len)))
    signal = divide(signal, maximum(envelope, array(1e-8, envelope.dtype)))

    sig_len = n_fft + (n_frames - 1) * hop
    start = n_fft // 2 if center else 0
    if length is not None:
        stop = min(sig_len, start + length)
        signal = strided_slice(signal, [0, start], [b, stop], [1, 1])
        if signal.shape[-1] < length:
            signal = pad(signal, [(0, 0), (0, length - signal.shape[-1])])
    else:
        stop = sig_len - n_fft // 2 if center else sig_len
        signal = strided_slice(signal, [0, start], [b, stop], [1, 1])
    return reshape(signal, lead + (signal.shape[-1],))
