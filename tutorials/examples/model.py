"""The example file of the README's ``mlxref graph`` commands.

``loss(w, x, y)`` is a function of arrays: its parameters are the drawing's
inputs (give them with --shape or --at). ``mlp`` is a model factory: it takes
no arguments and returns an ``nn.Module``, so ``mlxref graph`` draws the
model's forward on its input ``x``, with the weights as inputs named by their
path (``layers.0.weight``)::

    mlxref graph tutorials/examples/model.py:loss --shape w=3,1 --shape x=8,3 --shape y=8,1
    mlxref graph tutorials/examples/model.py:mlp --shape x=4,2
"""

import mlxref.core as mx
import mlxref.nn as nn


def loss(w, x, y):
    """Mean squared error of the linear model ``x @ w`` against ``y``."""
    return mx.mean((x @ w - y) ** 2)


def mlp():
    """A two-layer perceptron: 2 inputs, 3 hidden units with tanh, 1 output."""
    return nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
