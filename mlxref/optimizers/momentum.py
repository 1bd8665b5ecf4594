"""``SGD``, ``Lion`` and ``Muon``: a momentum buffer and a step along it.

Read alongside: python/mlx/optimizers/optimizers.py; the base class is in
optimizers.py. All three keep one buffer per parameter (``"v"``, or ``"m"``
for Lion); they differ in what they do with it: SGD steps along it, Lion along
its sign, Muon along its nearest orthogonal matrix.

Each ``apply_single`` follows MLX's order of operations, so float32 results
agree with MLX's (tests/optimizers/test_optimizers.py checks it). ``g`` is the
gradient, ``w`` the parameter, ``lr`` the learning rate at this step.
"""

from .. import core as mx
from .optimizers import Optimizer

__all__ = ["SGD", "Lion", "Muon"]


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, dampening, Nesterov and weight decay.

    With ``g`` the gradient plus ``weight_decay * w``::

        v = momentum * v + (1 - dampening) * g      # v starts at 0
        w = w - lr * (g + momentum * v if nesterov else v)

    and without momentum simply ``w = w - lr * g``. Unlike PyTorch,
    dampening also applies to the first step.
    """

    def __init__(self, learning_rate, momentum=0.0, weight_decay=0.0, dampening=0.0,
                 nesterov=False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        lr = self.learning_rate.astype(gradient.dtype)
        if self.momentum <= 0:
            return parameter - lr * gradient

        v = self.momentum * state["v"]
        if self.dampening > 0:
            v = v + (1 - self.dampening) * gradient
        else:
            v = v + gradient
        step = gradient + self.momentum * v if self.nesterov else v
        state["v"] = v
        return parameter - lr * step


class Lion(Optimizer):
    """Lion (Chen et al., 2023): step by the *sign* of an interpolated momentum::

        c = b1 * m + (1 - b1) * g
        m = b2 * m + (1 - b2) * g
        w = (1 - lr * weight_decay) * w - lr * sign(c)

    Every coordinate moves by exactly ``lr``, so Lion wants a smaller learning
    rate (and a larger weight decay) than Adam.
    """

    def __init__(self, learning_rate, betas=[0.9, 0.99], weight_decay=0.0):  # noqa: B006 (MLX's)
        super().__init__()
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Lion beta{i + 1} should be in [0, 1), {beta} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter, state):
        state["m"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = state["m"]
        c = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(c)


class Muon(Optimizer):
    """Muon (Jordan et al., 2024): momentum, then orthogonalised for matrices.

    With ``g`` the gradient plus ``weight_decay * w`` and ``mu`` the momentum::

        v = mu * v + (1 - mu) * g
        u = (1 - mu) * g + mu * v if nesterov else v
        w = w - lr * scale * orthogonalize(u)     # for a matrix (or more dims)
        w = w - lr * u                            # for a vector or a scalar

    ``orthogonalize`` replaces ``u = U S V^T`` by about ``U V^T`` with a few
    Newton-Schulz steps (no SVD): see ``_newton_schulz``. An array with more
    than two dimensions is treated as a matrix of its first axis by the rest
    (a convolution filter: out channels by everything else), and
    ``scale = sqrt(max(1, rows / cols))`` with rows and cols the last two
    axes of the parameter's own shape (as in MLX, not of that matrix).
    Meant for hidden layers; embeddings, heads and vectors are usually given
    to another optimizer (see ``MultiOptimizer``).
    """

    def __init__(self, learning_rate, momentum=0.95, weight_decay=0.01, nesterov=True,
                 ns_steps=5):
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter, state):
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient, parameter, state):
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        mu = self.momentum
        v = mu * state["v"]
        v = v + (1 - mu) * gradient
        state["v"] = v
        update = gradient * (1 - mu) + v * mu if self.nesterov else v

        lr = self.learning_rate.astype(gradient.dtype)
        if update.ndim >= 2:
            shape = update.shape
            matrix = mx.reshape(update, (shape[0], -1)) if update.ndim > 2 else update
            update = mx.reshape(_newton_schulz(matrix, self.ns_steps), shape)
            lr = lr * max(1, update.shape[-2] / update.shape[-1]) ** 0.5
        return parameter - lr * update


# The quintic's coefficients, chosen by Muon's authors so that the singular
# values converge fast towards (roughly) 1 from anywhere in (0, 1].
_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _newton_schulz(x, steps):
    """About ``U V^T`` for the matrix ``x = U S V^T``, by ``steps`` quintic iterations.

    After scaling ``x`` so its singular values are at most 1, each step maps
    ``x`` to ``a x + b (x x^T) x + c (x x^T)^2 x``, which acts on every singular
    value ``s`` alone as ``a s + b s^3 + c s^5``. A wide matrix keeps ``x x^T``
    small, so a tall one is transposed first (and back at the end).
    """
    a, b, c = _NS_COEFFICIENTS
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = x.T
    x = x / (mx.linalg.norm(x, keepdims=True) + 1e-7)
    for _ in range(steps):
        gram = x @ x.T
        poly = mx.addmm(b * gram, gram, gram, beta=1.0, alpha=c)  # b A + c A^2
        x = mx.addmm(a * x, poly, x, beta=1.0, alpha=1.0)  # a x + (b A + c A^2) x
    return x.T if tall else x
