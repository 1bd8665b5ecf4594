"""``Optimizer``, ``MultiOptimizer`` and ``clip_grad_norm``: what every optimizer shares.

Read alongside: python/mlx/optimizers/optimizers.py (its first and last parts).
The optimizers themselves are in momentum.py (SGD, Lion, Muon), adaptive.py
(RMSprop, Adagrad, AdaDelta, Adam, AdamW, Adamax) and adafactor.py; the
learning-rate schedules in schedulers.py.

An optimizer works one parameter at a time: ``init_single`` creates that
parameter's state (a dict of arrays) and ``apply_single`` returns the updated
parameter from its gradient. The base class maps these over trees and keeps
the state in ``optimizer.state``: ``"step"`` (a uint64 count of the updates so
far), the hyperparameters that are arrays (``"learning_rate"``), and a tree of
per-parameter state dicts with the parameters' structure. A hyperparameter
given as a callable is a schedule: it is called with ``step`` before each
update and its value stored in the state.

>>> import mlxref.core as mx
>>> import mlxref.nn as nn
>>> from mlxref.optimizers import SGD
>>> opt = SGD(learning_rate=0.1, momentum=0.9)
>>> opt.init(nn.Linear(2, 2).trainable_parameters())
>>> list(opt.state.keys())
['step', 'learning_rate', 'weight', 'bias']
>>> opt.state["bias"]
{'v': array([0, 0], dtype=float32)}
"""

from .. import core as mx
from ..utils import tree_flatten, tree_map, tree_merge, tree_reduce, tree_unflatten

__all__ = ["Optimizer", "MultiOptimizer", "clip_grad_norm"]


class Optimizer:
    """Base class: applies ``apply_single`` to every parameter of a tree."""

    def __init__(self, schedulers=None):
        self._initialized = False
        self._state = {"step": mx.array(0, mx.uint64)}
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
        the locations that have a gradient are updated and returned. Schedules
        see the step before the update; then ``state["step"]`` is incremented,
        so the first update computes with step 1.
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


class MultiOptimizer(Optimizer):
    """Different optimizers for different parameters.

    ``filters[i](path, parameter)`` says whether ``optimizers[i]`` takes a
    parameter (``path`` is its dotted name, as in ``tree_flatten``); the first
    filter that says yes wins and the last optimizer, which has no filter,
    takes the rest. The state is ``{"states": [each optimizer's state]}``.
    """

    def __init__(self, optimizers, filters=()):
        super().__init__()
        self._state = {}
        if len(filters) != len(optimizers) - 1:
            raise ValueError(f"Given {len(filters)} filters but {len(optimizers) - 1} needed.")
        self.optimizers = optimizers
        self.filters = list(filters) + [lambda *args, **kwargs: True]

    def _split_dictionary(self, tree):
        """``tree``'s leaves split into one tree per optimizer, by the filters."""
        if len(self.optimizers) == 1:
            return [tree]
        parts = [[] for _ in self.optimizers]
        for path, leaf in tree_flatten(tree):
            i = next(i for i, keep in enumerate(self.filters) if keep(path, leaf))
            parts[i].append((path, leaf))
        # An optimizer with no parameters gets {} (tree_unflatten([]) would be []).
        return [tree_unflatten(p) if p else {} for p in parts]

    def init(self, parameters):
        for opt, part in zip(self.optimizers, self._split_dictionary(parameters)):
            opt.init(part)

    def apply_gradients(self, gradients, parameters):
        updated = {}
        for opt, part in zip(self.optimizers, self._split_dictionary(gradients)):
            updated = tree_merge(updated, opt.apply_gradients(part, parameters))
        return updated

    @property
    def state(self):
        return {"states": [opt.state for opt in self.optimizers]}

    @state.setter
    def state(self, state):
        if "states" not in state or len(state["states"]) != len(self.optimizers):
            raise ValueError("Invalid state provided")
        for opt, s in zip(self.optimizers, state["states"]):
            opt.state = s

    @property
    def learning_rate(self):
        return self.optimizers[0].learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        for opt in self.optimizers:
            opt.learning_rate = learning_rate


def clip_grad_norm(grads, max_norm):
    """Scale ``grads`` down so that their global norm is at most ``max_norm``.

    The global norm is ``sqrt(sum of g**2 over every element of every leaf)``;
    each gradient is multiplied by ``min(max_norm / (norm + 1e-6), 1)``.
    float16 squares are summed in float32 so they do not overflow, and a
    floating gradient keeps its dtype. Returns ``(clipped_grads, norm)``, the
    norm being that of the gradients before clipping.

    >>> import mlxref.core as mx
    >>> clipped, norm = clip_grad_norm({"w": mx.array([3.0, 4.0])}, max_norm=1.0)
    >>> norm, clipped["w"]
    (array(5, dtype=float32), array([0.6, 0.8], dtype=float32))
    """
    if max_norm < 0:
        raise ValueError(f"max_norm should be >=0, {max_norm} was provided instead")

    def squared_norm(g):
        return (g.astype(mx.float32) if g.dtype == mx.float16 else g).square().sum()

    def scale(g):
        if mx.issubdtype(g.dtype, mx.floating):
            return (g * normalizer).astype(g.dtype)
        return g * normalizer

    total_norm = mx.sqrt(tree_reduce(lambda acc, g: acc + squared_norm(g), grads, 0.0))
    normalizer = mx.minimum(max_norm / (total_norm + 1e-6), 1.0)
    return tree_map(scale, grads), total_norm
