"""Traversal events: how a transform's walk tells listeners what it is doing.

The vjp walk (reverse), the jvp walk (forward) and vmap's replay announce
``Begin`` once, then one step per node. Listeners are held in a context
variable, so a drawing recorded in one thread never sees another thread's
transforms. With no listener, the cost of a step is one check of ``active()``.
The drawings in ``mlxref.viz`` are built from these events.
"""

import contextlib
import contextvars
from dataclasses import dataclass

_listeners = contextvars.ContextVar("mlxref_listeners", default=())


@dataclass
class Begin:
    """A walk starts: ``kind`` ("vjp", "jvp" or "vmap"), its ``primals``
    (tracers or vmap placeholders), the function's ``outputs`` and the ``tape``."""

    kind: str
    primals: list
    outputs: list
    tape: list


@dataclass
class VjpStep:
    """``node``'s primitive turned ``cotangents`` (one per output of the node)
    into ``vjps``, one per input position in ``argnums``. ``position`` counts
    the steps of the walk from 0."""

    position: int
    node: object
    argnums: list
    cotangents: list
    vjps: list


@dataclass
class JvpStep:
    """``node``'s primitive turned ``tangents`` (of its inputs at ``argnums``)
    into ``jvps``, one per output of the node."""

    position: int
    node: object
    argnums: list
    tangents: list
    jvps: list


@dataclass
class VmapStep:
    """``node``'s primitive ran batched: ``in_axes`` are its inputs' batch axes
    (None: not batched), ``out_axes`` its outputs'."""

    position: int
    node: object
    in_axes: list
    out_axes: list


def active():
    return bool(_listeners.get())


def announce(event):
    for listener in _listeners.get():
        listener(event)


@contextlib.contextmanager
def listen(callback):
    """Call ``callback(event)`` for every event announced inside this block."""
    token = _listeners.set(_listeners.get() + (callback,))
    try:
        yield callback
    finally:
        _listeners.reset(token)
