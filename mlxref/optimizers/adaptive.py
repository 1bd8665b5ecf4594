"""``RMSprop``, ``Adagrad``, ``AdaDelta``, ``Adam``, ``AdamW``, ``Adamax``: a step size per coordinate.

Read alongside: python/mlx/optimizers/optimizers.py; the base class is in
optimizers.py and Adafactor, the factored member of the family, in
adafactor.py. Each keeps a running measure of the squared (or absolute)
gradient, ``"v"``, and divides the step by its root, so coordinates with large
gradients take smaller steps.

Each ``apply_single`` follows MLX's order of operations, so float32 results
agree with MLX's (tests/optimizers/test_optimizers.py checks it). ``g`` is the
gradient, ``w`` the parameter, ``lr`` the learning rate at this step and ``t``
the step (1 on the first update).
"""

from .. import core as mx
from .optimizers import Optimizer

__all__ = ["RMSprop", "Adagrad", "AdaDelta", "Adam", "AdamW", "Adamax"]


def _check(name, eps, **nonnegative):
    """MLX's checks and messages: each of ``nonnegative`` >= 0, then ``eps`` > 0."""
    for what, value in nonnegative.items():
        if value < 0.0:
            raise ValueError(f"{name} {what} should be >=0, {value} was provided instead")
    # eps == 0 would give 0 / 0 for a coordinate whose gradients are all 0.
    if eps <= 0.0:
        raise ValueError(f"{name} epsilon should be >0, {eps} was provided instead")


class RMSprop(Optimizer):
    """RMSprop (Tieleman and Hinton, 2012): divide by a running RMS of the gradient::

        v = alpha * v + (1 - alpha) * g**2
        w = w - lr * g / (sqrt(v) + eps)
    """

    def __init__(self, learning_rate, alpha=0.99, eps=1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        _check("RMSprop", eps, alpha=alpha)

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011): divide by the root of *all* squared gradients so far::

        v = v + g**2
        w = w - lr * g / (sqrt(v) + eps)
    """

    def __init__(self, learning_rate, eps=1e-8):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        _check("Adagrad", eps)

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class AdaDelta(Optimizer):
    """AdaDelta (Zeiler, 2012): the step's units come from a running average of past steps::

        v = rho * v + (1 - rho) * g**2
        d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d**2
        w = w - lr * d
    """

    def __init__(self, learning_rate, rho=0.9, eps=1e-6):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        _check("AdaDelta", eps, rho=rho)

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        rho, eps = self.rho, self.eps
        v = rho * state["v"] + (1 - rho) * mx.square(gradient)
        d = mx.sqrt(state["u"] + eps) / mx.sqrt(v + eps) * gradient
        u = rho * state["u"] + (1 - rho) * mx.square(d)
        state["v"], state["u"] = v, u
        return parameter - lr * d


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015). By default, as in MLX, *without* bias correction::

        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        w = w - lr * m / (sqrt(v) + eps)

    With ``bias_correction=True``::

        w = w - (lr / (1 - b1**t)) * m / (sqrt(v) / sqrt(1 - b2**t) + eps)
    """

    def __init__(self, learning_rate, betas=[0.9, 0.999], eps=1e-8,  # noqa: B006 (MLX's)
                 bias_correction=False):
        super().__init__()
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Adam beta{i + 1} should be in [0, 1), {beta} was provided instead"
                )
        if not 0.0 <= eps:
            raise ValueError(f"Adam epsilon should be >=0, {eps} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter, state):
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"], state["v"] = m, v
        if self.bias_correction:
            t = self.step
            c1 = (lr / (1 - b1**t)).astype(gradient.dtype)
            c2 = mx.rsqrt(1 - b2**t).astype(gradient.dtype)
            return parameter - (c1 * m) / (mx.sqrt(v) * c2 + self.eps)
        return parameter - lr * m / (mx.sqrt(v) + self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019).

    The parameter shrinks first, ``w = w * (1 - lr * weight_decay)``, and
    then takes Adam's step; the decay never enters ``m`` or ``v``. Note the
    default ``weight_decay=0.01``.
    """

    def __init__(self, learning_rate, betas=[0.9, 0.999], eps=1e-8,  # noqa: B006 (MLX's)
                 weight_decay=0.01, bias_correction=False):
        super().__init__(learning_rate=learning_rate, betas=betas, eps=eps,
                         bias_correction=bias_correction)
        self.weight_decay = weight_decay

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        return super().apply_single(gradient, parameter * (1 - lr * self.weight_decay), state)


class Adamax(Adam):
    """Adamax (Kingma and Ba, 2015): Adam with an infinity norm in place of the RMS::

        m = b1 * m + (1 - b1) * g
        v = max(b2 * v, |g|)
        w = w - lr * m / (v + eps)

    It takes Adam's arguments except ``bias_correction`` (and Adam's checks
    and messages).
    """

    def __init__(self, learning_rate, betas=[0.9, 0.999], eps=1e-8):  # noqa: B006 (MLX's)
        super().__init__(learning_rate, betas, eps)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"], state["v"] = m, v
        return parameter - lr * m / (v + self.eps)
