"""``import mlxref.optimizers as optim``: mlx.optimizers' optimizers, schedules and ``clip_grad_norm``.

optimizers.py holds the base class, ``MultiOptimizer`` and ``clip_grad_norm``;
momentum.py ``SGD``, ``Lion`` and ``Muon``; adaptive.py ``RMSprop``,
``Adagrad``, ``AdaDelta``, ``Adam``, ``AdamW`` and ``Adamax``; adafactor.py
``Adafactor``; schedulers.py the learning-rate schedules. Start with
optimizers.py.
"""

from . import schedulers  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .adaptive import AdaDelta, Adagrad, Adam, Adamax, AdamW, RMSprop  # noqa: F401
from .momentum import SGD, Lion, Muon  # noqa: F401
from .optimizers import MultiOptimizer, Optimizer, clip_grad_norm  # noqa: F401
from .schedulers import (  # noqa: F401
    cosine_decay,
    exponential_decay,
    join_schedules,
    linear_schedule,
    step_decay,
)
