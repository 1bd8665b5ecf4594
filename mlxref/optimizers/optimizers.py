"""``Optimizer``, ``SGD`` and ``Adam``, mirroring mlx.optimizers.

Read alongside: python/mlx/optimizers/optimizers.py.

An optimizer works one parameter at a time: ``init_single`` creates that
parameter's state (a dict of arrays) and ``apply_single`` returns the updated
parameter from its gradient. The base class maps these over trees and keeps
the state in ``optimizer.state``: ``"step"`` (the number of updates so far),
the hyperparameters that are arrays (``"learning_rate"``), and a tree of
per-parameter state dicts with the parameters' structure.

Differences from MLX: ``"step"`` is an int64 array (mlxref has no uint64);
everything else, including the order of operations in the update formulas,
follows MLX so that the float32 results agree.

>>> import mlxref.core as mx
>>> import mlxref.nn as nn
>>> opt = SGD(learning_rate=0.1, momentum=0.9)
>>> opt.init(nn.Linear(2, 2).trainable_parameters())
>>> list(opt.state.keys())
['step', 'learning_rate', 'weight', 'bias']
>>> opt.state["bias"]
{'v': array([0, 0], dtype=float32)}
"""

from .. import core as mx
from ..utils import tree_map

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer:
    """Base class: applies ``apply_single`` to every parameter of a tree."""

    def __init__(self, schedulers=None):
        self._initialized = False
        self._state = {"step": mx.array(0, mx.int64)}
        self._schedulers = dict(schedulers or {})

    def update(self, model, gradients):
        """Apply ``gradients`` to ``model``'s parameters and put the results in the model."""
        model.update(self.apply_gradients(gradients, model))

    def init(self, parameters):
        """Create the state of every parameter in ``parameters`` that has none yet.

        Optional: the first ``update`` does it. Calling it earlier gives access
        to ``state`` before the first step. Existing state is kept.
        """
        _merge_structure(parameters, self._state)
        tree_map(lambda p, s: s or self.init_single(p, s), parameters, self._state)
        self._initialized = True

    def init_single(self, parameter, state):
        """Fill ``state`` (an empty dict) for one parameter. Subclasses implement it."""
        raise NotImplementedError()

    def apply_gradients(self, gradients, parameters):
        """The updated parameters, in the structure of ``gradients``.

        ``parameters`` may be a superset of ``gradients`` (a model, say); only
        the locations that have a gradient are updated and returned. Increments
        ``state["step"]`` first, so the first update sees step 1.
        """
        if not self._initialized:
            self.init(gradients)
        for name, schedule in self._schedulers.items():
            self.state[name] = schedule(self.step)
        self.state["step"] = self.step + 1
        return tree_map(self.apply_single, gradients, parameters, self.state)

    def apply_single(self, gradient, parameter, state):
        """The updated ``parameter``; may update ``state``. Subclasses implement it."""
        raise NotImplementedError()

    @property
    def state(self):
        """The optimizer's state dict (assigning one makes the next update re-``init``)."""
        return self._state

    @state.setter
    def state(self, state):
        self._initialized = False
        self._state = state

    @property
    def step(self):
        return self.state["step"]

    @property
    def learning_rate(self):
        return self.state["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        self.state["learning_rate"] = mx.array(learning_rate)

    def _maybe_schedule(self, name, value):
        """Store hyperparameter ``name`` in the state; a callable is a schedule of the step."""
        if callable(value):
            self._schedulers[name] = value
            value = value(self.step)
        else:
            value = mx.array(value)
        self.state[name] = value


def _merge_structure(params, state):
    """Give ``state`` a (possibly empty) dict for every parameter leaf of ``params``, in place."""
    if isinstance(params, (list, tuple)):
        state = list(state)
        for i in range(len(state)):
            state[i] = _merge_structure(params[i], state[i])
        state.extend(tree_map(lambda _: {}, list(params[len(state) :])))
        return type(params)(state)
    if isinstance(params, dict):
        for k, v in params.items():
            state[k] = _merge_structure(v, state[k]) if k in state else tree_map(lambda _: {}, v)
        return state
    return state


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, dampening, Nesterov and weight decay.

    With ``g`` the gradient plus ``weight_decay * w``::

        v = momentum * v + (1 - dampening) * g      # v starts at 0
        w = w - learning_rate * (g + momentum * v if nesterov else v)

    and without momentum simply ``w = w - learning_rate * g``. Unlike PyTorch,
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

        v = self.momentum * state.get("v")
        if self.dampening > 0:
            v = v + (1 - self.dampening) * gradient
        else:
            v = v + gradient
        step = gradient + self.momentum * v if self.nesterov else v
        state["v"] = v
        return parameter - lr * step


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015). By default, as in MLX, *without* bias correction::

        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        w = w - lr * m / (sqrt(v) + eps)

    With ``bias_correction=True`` and ``t`` the step (1 on the first update)::

        w = w - (lr / (1 - b1**t)) * m / (sqrt(v) * rsqrt(1 - b2**t) + eps)
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
