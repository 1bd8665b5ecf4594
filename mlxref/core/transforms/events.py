"""Traversal events: how a transform's walk tells listeners what it is doing.

The vjp walk (reverse) and the jvp walk (forward) call ``announce`` once per
step. Listeners are held in a context variable, so a drawing recorded in one
thread never sees another thread's transforms. With no listener, the cost of
a step is one check of ``active()``.
"""

import contextlib
import contextvars
from dataclasses import dataclass, field

_listeners = contextvars.ContextVar("mlxref_listeners", default=())


@dataclass
class Step:
    """One step of a walk over the tape.

    ``kind`` is "vjp", "jvp" or "vmap"; ``position`` counts from 0 in the order
    the walk visits; ``node`` is the array whose primitive ran (its siblings
    are ``node.outputs()``). For vjp and jvp, ``incoming`` are the cotangents
    (vjp) or tangents (jvp) it received, ``argnums`` the inputs that get a
    result, and ``produced`` the cotangents of those inputs (vjp) or the
    tangents of its outputs (jvp). For vmap, ``incoming`` are the batch axes of
    its inputs (None: not batched), ``argnums`` the batched inputs, and
    ``produced`` the batch axes of its outputs.
    """

    kind: str
    position: int
    node: object
    argnums: list
    incoming: list
    produced: list = field(default_factory=list)


@dataclass
class Begin:
    """A walk starts: its ``primals`` (tracers), ``outputs`` and the ``tape``."""

    kind: str
    primals: list
    outputs: list
    tape: list


def active():
    return bool(_listeners.get())


def announce(event):
    for listener in _listeners.get():
        listener(event)


@contextlib.contextmanager
def listen(callback):
    """Call ``callback(event)`` for every Begin and Step inside this block."""
    token = _listeners.set(_listeners.get() + (callback,))
    try:
        yield callback
    finally:
        _listeners.reset(token)
