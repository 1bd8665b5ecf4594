"""Recurrent layers, mirroring python/mlx/nn/layers/recurrent.py.

Each layer runs over the time axis of ``x`` ``(..., L, input_size)`` in a
Python loop, one step per position, and returns every step's hidden state
``(..., L, hidden_size)`` (``LSTM`` also its cells). The input projection
of all steps is one matmul up front. A missing initial ``hidden`` (or
``cell``) is zero; the step formulas are written with it anyway.
"""

import math

from ... import core as mx
from .activations import tanh
from .base import Module

__all__ = ["RNN", "GRU", "LSTM"]


def _uniform(scale, *shape):
    return mx.random.uniform(low=-scale, high=scale, shape=shape)


def _project(x, weight, bias):
    """``x @ weight.T + bias`` for every step at once."""
    return x @ weight.T if bias is None else mx.addmm(bias, x, weight.T)


def _zeros_for(x, hidden_size):
    return mx.zeros((*x.shape[:-2], hidden_size), dtype=x.dtype)


class RNN(Module):
    """``h_t = nonlinearity(W_xh x_t + b + W_hh h_{t-1})`` (``tanh`` by default)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity=None):
        super().__init__()
        self.nonlinearity = nonlinearity or tanh
        if not callable(self.nonlinearity):
            raise ValueError(f"Nonlinearity must be callable. Current value: {nonlinearity}.")
        k = 1.0 / math.sqrt(hidden_size)
        self.hidden_size = hidden_size
        self.Wxh = _uniform(k, hidden_size, input_size)
        self.Whh = _uniform(k, hidden_size, hidden_size)
        self.bias = _uniform(k, hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wxh.shape[1]}, hidden_size={self.hidden_size}, "
            f"nonlinearity={self.nonlinearity}, bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None):
        x = _project(x, self.Wxh, self.bias)
        h = _zeros_for(x, self.hidden_size) if hidden is None else hidden
        states = []
        for t in range(x.shape[-2]):
            h = self.nonlinearity(mx.addmm(x[..., t, :], h, self.Whh.T))
            states.append(h)
        return mx.stack(states, axis=-2)


class GRU(Module):
    """Gated recurrent unit; with ``W_x = [W_r; W_z; W_n]`` (and ``W_h`` alike)::

        r = sigmoid(W_r x + b_r + U_r h)        reset gate
        z = sigmoid(W_z x + b_z + U_z h)        update gate
        n = tanh(W_n x + b_n + r * (U_n h + b_hn))
        h' = (1 - z) * n + z * h
    """

    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__()
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(k, 3 * hidden_size, input_size)
        self.Wh = _uniform(k, 3 * hidden_size, hidden_size)
        self.b = _uniform(k, 3 * hidden_size) if bias else None
        self.bhn = _uniform(k, hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.b is not None}"
        )

    def __call__(self, x, hidden=None):
        x = _project(x, self.Wx, self.b)
        H = self.hidden_size
        h = _zeros_for(x, H) if hidden is None else hidden
        states = []
        for t in range(x.shape[-2]):
            x_rz, x_n = x[..., t, :-H], x[..., t, -H:]
            h_proj = h @ self.Wh.T
            h_rz, h_n = h_proj[..., :-H], h_proj[..., -H:]
            if self.bhn is not None:
                h_n = h_n + self.bhn
            r, z = mx.split(mx.sigmoid(x_rz + h_rz), 2, axis=-1)
            n = mx.tanh(x_n + r * h_n)
            h = (1 - z) * n + z * h
            states.append(h)
        return mx.stack(states, axis=-2)


class LSTM(Module):
    """Long short-term memory; with ``W_x = [W_i; W_f; W_g; W_o]`` (and ``W_h`` alike)::

        i, f, o = sigmoid(W_{i,f,o} x + b + U_{i,f,o} h)   input, forget, output gates
        g = tanh(W_g x + b_g + U_g h)
        c' = f * c + i * g
        h' = o * tanh(c')

    Returns ``(hidden states, cells)``, both ``(..., L, hidden_size)``.
    """

    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__()
        self.hidden_size = hidden_size
        k = 1.0 / math.sqrt(hidden_size)
        self.Wx = _uniform(k, 4 * hidden_size, input_size)
        self.Wh = _uniform(k, 4 * hidden_size, hidden_size)
        self.bias = _uniform(k, 4 * hidden_size) if bias else None

    def _extra_repr(self):
        return (
            f"input_dims={self.Wx.shape[1]}, hidden_size={self.hidden_size}, "
            f"bias={self.bias is not None}"
        )

    def __call__(self, x, hidden=None, cell=None):
        x = _project(x, self.Wx, self.bias)
        h = _zeros_for(x, self.hidden_size) if hidden is None else hidden
        c = _zeros_for(x, self.hidden_size) if cell is None else cell
        states, cells = [], []
        for t in range(x.shape[-2]):
            i, f, g, o = mx.split(mx.addmm(x[..., t, :], h, self.Wh.T), 4, axis=-1)
            c = mx.sigmoid(f) * c + mx.sigmoid(i) * mx.tanh(g)
            h = mx.sigmoid(o) * mx.tanh(c)
            states.append(h)
            cells.append(c)
        return mx.stack(states, axis=-2), mx.stack(cells, axis=-2)
