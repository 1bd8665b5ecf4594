"""``Adafactor`` (Shazeer and Stern, 2018): Adam's second moment in sublinear memory.

Read alongside: python/mlx/optimizers/optimizers.py; the base class is in
optimizers.py, the rest of the family in adaptive.py.

For a matrix gradient (or a stack of them: two or more dimensions) Adafactor
does not keep a running mean of ``g**2`` per element but one per row
(``"exp_avg_sq_row"``, the mean over the last axis) and one per column
(``"exp_avg_sq_col"``, the mean over the second-to-last axis), and rebuilds
the per-element estimate as their outer product divided by the mean row
value: ``m + n`` numbers for an ``m x n`` matrix instead of ``m * n``. A vector
keeps the plain running mean (``"exp_avg_sq"``). ``beta_1`` adds Adam's first
moment (``"exp_avg"``).

With ``t`` the step (1 on the first update) and ``g`` the gradient::

    beta_2 = 1 - t ** decay_rate                 # decay_rate < 0: beta_2 grows towards 1
    v      = beta_2 * v + (1 - beta_2) * (g**2 + eps[0])   # or its row and column means
    u      = g / sqrt(v)                         # v rebuilt from rows and columns
    u      = u / max(1, rms(u) / clip_threshold)
    u      = step_size * u                       # see _step_size
    u      = beta_1 * m + (1 - beta_1) * u       # only with beta_1 (then m = u)
    w      = w - step_size * weight_decay * w - u

Each step follows MLX's order of operations, so float32 results agree with
MLX's (tests/optimizers/test_optimizers.py checks it).
"""

from .. import core as mx
from .optimizers import Optimizer

__all__ = ["Adafactor"]


def _rms(x):
    return mx.sqrt(mx.mean(mx.square(x)))


class Adafactor(Optimizer):
    """Adafactor. By default the learning rate is *relative*: see ``_step_size``.

    ``eps = (eps1, eps2)``: ``eps1`` is added to ``g**2``; ``eps2`` is the
    smallest parameter scale. ``learning_rate`` is used only with
    ``relative_step=False``.
    """

    def __init__(self, learning_rate=None, eps=(1e-30, 1e-3), clip_threshold=1.0,
                 decay_rate=-0.8, beta_1=None, weight_decay=0.0, scale_parameter=True,
                 relative_step=True, warmup_init=False):
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter, state):
        shape, dtype = parameter.shape, parameter.dtype
        if parameter.ndim >= 2:
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _step_size(self, step, parameter_rms):
        """The learning rate of this step for a parameter of RMS ``parameter_rms``.

        Relative (the default): ``min(1e-2, 1/sqrt(t))``, or ``min(1e-6 * t,
        1/sqrt(t))`` with ``warmup_init``; else ``learning_rate``. With
        ``scale_parameter`` it is multiplied by ``max(eps2, parameter_rms)``,
        so a step moves a parameter by a fraction of its own size.
        """
        if self.relative_step:
            smallest = 1e-6 * step if self.warmup_init else 1e-2
            size = mx.minimum(smallest, mx.rsqrt(step))
        else:
            size = self.learning_rate
        size = size.astype(parameter_rms.dtype)
        if self.scale_parameter:
            return mx.maximum(self.eps[1], parameter_rms) * size
        return size

    def _approximate_exp_moving_avg(self, exp_avg_sq_row, exp_avg_sq_col):
        """``1 / sqrt(v)`` rebuilt from the row and column means: a separable outer product.

        ``v[i, j] ~ row[i] * col[j] / mean(row)``, so its inverse root is
        ``rsqrt(row[i] / mean(row)) * rsqrt(col[j])`` (per matrix of a stack).
        """
        row_factor = mx.rsqrt(exp_avg_sq_row / mx.mean(exp_avg_sq_row, axis=-1, keepdims=True))
        col_factor = mx.rsqrt(exp_avg_sq_col)
        return mx.expand_dims(row_factor, axis=-1) * mx.expand_dims(col_factor, axis=-2)

    def apply_single(self, gradient, parameter, state):
        step = self.step
        parameter_rms = _rms(parameter)
        step_size = self._step_size(step, parameter_rms)
        beta_2 = 1.0 - (step**self.decay_rate).astype(parameter_rms.dtype)
        squared = mx.square(gradient) + self.eps[0]

        if gradient.ndim >= 2:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(squared, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(squared, axis=-2)
            state["exp_avg_sq_row"], state["exp_avg_sq_col"] = row, col
            update = self._approximate_exp_moving_avg(row, col) * gradient
        else:
            v = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * squared
            state["exp_avg_sq"] = v
            update = mx.rsqrt(v) * gradient

        update = update / mx.maximum(1.0, _rms(update) / self.clip_threshold)
        update = step_size * update
        if self.beta_1 is not None:
            update = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * update
            state["exp_avg"] = update
        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * step_size)
        return parameter - update
