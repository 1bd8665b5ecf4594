"""Learning-rate schedules: functions of the step, as in mlx.optimizers.schedulers.

Read alongside: python/mlx/optimizers/schedulers.py. Each maker returns a
function ``schedule(step)``; an optimizer given one as its ``learning_rate``
calls it with ``optimizer.step`` just before each update (a uint64 array:
0 before the first update, so the first update uses ``schedule(0)``) and
stores the result as ``optimizer.learning_rate``. They also take plain
Python ints, and then may return Python numbers (``step_decay``,
``exponential_decay``) where an array step gives an array.

>>> from mlxref.optimizers import SGD
>>> opt = SGD(learning_rate=exponential_decay(0.1, 0.5))
>>> for _ in range(3):
...     opt.update({}, {})
>>> opt.learning_rate  # the third update used 0.1 * 0.5**2
array(0.025, dtype=float32)
"""

import math

from .. import core as mx

__all__ = ["exponential_decay", "step_decay", "cosine_decay", "join_schedules",
           "linear_schedule"]


def exponential_decay(init, decay_rate):
    """``init * decay_rate ** step``."""

    def schedule(step):
        return init * decay_rate**step

    return schedule


def step_decay(init, decay_rate, step_size):
    """``init * decay_rate ** (step // step_size)``: a staircase, one stair every ``step_size`` steps.

    >>> step_decay(1.0, 0.5, 10)(25)
    0.25
    """
    if step_size < 1:
        raise ValueError(f"step_size must be greater than 0, but got {step_size}.")

    def schedule(step):
        return init * (decay_rate ** (step // step_size))

    return schedule


def cosine_decay(init, decay_steps, end=0.0):
    """Half a cosine from ``init`` (step 0) to ``end`` (step ``decay_steps`` and after)::

        end + (init - end) * (1 + cos(pi * min(step, decay_steps) / decay_steps)) / 2
    """
    if decay_steps < 1:
        raise ValueError(f"decay_steps must be greater than 0, but got {decay_steps}.")

    def schedule(step):
        s = mx.minimum(step, decay_steps)
        decay = 0.5 * (1.0 + mx.cos((math.pi / decay_steps) * s))
        return end + decay * (init - end)

    return schedule


def linear_schedule(init, end, steps):
    """A straight line from ``init`` (step 0) to ``end`` (step ``steps`` and after)."""
    if steps < 1:
        raise ValueError(f"steps must be greater than 0, but got {steps}.")

    def schedule(step):
        s = mx.minimum(step, steps)
        return s * ((end - init) / steps) + init

    return schedule


def join_schedules(schedules, boundaries):
    """``schedules[0]`` until ``boundaries[0]``, then ``schedules[1]``, and so on.

    Schedule ``i + 1`` counts its steps from boundary ``i``: it is called with
    ``step - boundaries[i]``, so a warm-up followed by a decay reads
    ``join_schedules([linear_schedule(0, lr, 10), cosine_decay(lr, 200)], [10])``.
    Every schedule is evaluated and ``where`` picks, so the result is an array.

    >>> join_schedules([lambda s: 1.0, lambda s: 2.0 + s], [3])(5)
    array(4, dtype=float32)
    """
    if len(schedules) == 0:
        raise ValueError("Must provide at least 1 schedule to join.")
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(
            f"Received {len(boundaries)} boundaries but expected {len(schedules) - 1}.")

    def schedule(step):
        output = schedules[0](step)
        for boundary, later in zip(boundaries, schedules[1:]):
            output = mx.where(step < boundary, output, later(step - boundary))
        return output

    return schedule
