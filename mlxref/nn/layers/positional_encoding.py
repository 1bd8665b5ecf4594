"""Positional encodings, mirroring python/mlx/nn/layers/positional_encoding.py.

- ``RoPE`` rotates pairs of features by angles ``position * base^(-2i/dims)``
  (``mx.fast.rope``).
- ``SinusoidalPositionalEncoding`` maps a position ``p`` to ``sin(p sigma_i)``
  and ``cos(p sigma_i)`` for geometrically spaced frequencies ``sigma_i``.
- ``ALiBi`` adds ``-slope_h * |i - j|`` to head ``h``'s attention scores.

>>> ALiBi.create_alibi_slope(4, dtype=None).reshape(-1)  # 2^(-8h/4), h = 1..4
array([0.25, 0.0625, 0.015625, 0.00390625], dtype=float32)
"""

import math

from ... import core as mx
from .base import Module

__all__ = ["RoPE", "SinusoidalPositionalEncoding", "ALiBi"]


class RoPE(Module):
    """Rotary positional encoding of the first ``dims`` features of ``x`` ``(..., L, D)``.

    Features ``(x_2i, x_2i+1)`` (``traditional``) or ``(x_i, x_i+dims/2)`` (the
    default) of position ``offset + t`` turn by ``scale * (offset + t) *
    base^(-2i/dims)``.
    """

    def __init__(self, dims, traditional=False, base=10000, scale=1.0):
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _extra_repr(self):
        return f"{self.dims}, traditional={self.traditional}"

    def __call__(self, x, offset=0):
        return mx.fast.rope(x, self.dims, traditional=self.traditional, base=self.base,
                            scale=self.scale, offset=offset)


class SinusoidalPositionalEncoding(Module):
    """``[sin(p sigma), cos(p sigma)] * scale`` (``cos_first`` swaps the halves) for the
    ``dims / 2`` frequencies ``sigma`` from ``max_freq`` down to ``min_freq``, evenly
    spaced in log; ``full_turns`` multiplies them by ``2 pi``. ``scale`` defaults to
    ``sqrt(2 / dims)``, so the encoding has unit norm."""

    def __init__(self, dims, min_freq=0.0001, max_freq=1, scale=None, cos_first=False,
                 full_turns=False):
        super().__init__()
        if dims <= 0 or dims % 2 != 0:
            raise ValueError(
                f"[SinusoidalPositionalEncoding] dims must be positive and even but got {dims}."
            )
        half = dims // 2
        # From 1 (the first frequency, max_freq) down to 0 (the last, min_freq).
        one_to_zero = mx.array([1.0]) if half == 1 else 1 - mx.arange(0, half) / (half - 1)
        log_min, log_max = math.log(min_freq), math.log(max_freq)
        self._sigmas = mx.exp(one_to_zero * (log_max - log_min) + log_min)
        if full_turns:
            self._sigmas = self._sigmas * (2 * math.pi)
        self.scale = scale if scale is not None else (2 / dims) ** 0.5
        self.cos_first = cos_first

    def __call__(self, x):
        angles = x[..., None] * self._sigmas
        halves = [mx.sin(angles), mx.cos(angles)]
        if self.cos_first:
            halves.reverse()
        y = mx.concatenate(halves, axis=-1)
        return y * self.scale if self.scale != 1 else y


class ALiBi(Module):
    """Attention with linear biases: ``scores + slope_h * -|i - j|`` (+ ``mask``), scores
    shaped ``(B, heads, L_q, L_k)`` and query ``i`` at position ``offset + i``."""

    @staticmethod
    def create_alibi_matrix(q_sequence_length, k_sequence_length, num_heads, offset,
                            dtype=mx.float32):
        """``-slope_h |i - j|`` shaped ``(1, heads, q_sequence_length - offset, k_sequence_length)``."""
        queries = mx.arange(offset, q_sequence_length)
        keys = mx.arange(0, k_sequence_length)
        distance = -mx.abs(mx.expand_dims(queries[:, None] - keys[None, :], axis=(0, 1)))
        slopes = ALiBi.create_alibi_slope(num_heads=num_heads, dtype=dtype)
        return (distance * slopes).astype(dtype)

    @staticmethod
    def create_alibi_slope(num_heads, dtype):
        """The heads' slopes shaped ``(heads, 1, 1)``: ``2^(-8h/n)`` for ``h = 1..n`` when
        ``n`` is a power of two; else those of the power below, then every other slope
        of twice that power."""

        def slopes(n):
            if math.log2(n).is_integer():
                return [2 ** (-8 * h / n) for h in range(1, n + 1)]
            below = 2 ** math.floor(math.log2(n))
            return slopes(below) + slopes(2 * below)[0::2][: n - below]

        return mx.expand_dims(mx.array(slopes(num_heads), dtype=dtype), axis=(-1, -2))

    def __call__(self, attention_scores, offset=0, mask=None):
        bias = ALiBi.create_alibi_matrix(
            q_sequence_length=attention_scores.shape[-2] + offset,
            k_sequence_length=attention_scores.shape[-1],
            num_heads=attention_scores.shape[1],
            offset=offset,
            dtype=attention_scores.dtype,
        )
        if mask is not None:
            bias = bias + mask
        return attention_scores + bias
