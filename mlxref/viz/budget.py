"""The limits that keep a drawing within what a lecture machine can do: work, nodes, time, pixels.

A formula typed in a lecture can ask for a billion multiplications
(``sum(x @ x)`` on 1000 x 1000), a graph Graphviz lays out for minutes, or a
PNG of fifty million pixels. Every drawing path (``viz.draw``/``viz.trace``
and their ``render``, and ``mlxref graph``) runs under four limits, each
refused or shrunk with one line that says which limit and how to raise it:

- ``max_work``: element operations spent evaluating what is drawn, its
  inputs included. The engine hands each evaluation's nodes to ``_Work``
  before it computes any (``mlxref.core.transforms.eval.charging``): their
  shapes say what they cost (``cost``: an element per element read or
  written; a matmul element costs k multiply-adds, an integer power a step
  per bit of its type, a factorization n per element), so work over the
  limit is refused before it starts.
- ``max_nodes``: nodes handed to ``dot``. A larger drawing is rendered
  collapsed (``shrink.fit``: a model folded by module, a summary node for
  the rest), with a ``LimitWarning``; the text listing and the DOT text stay
  whole. Nodes are what ``dot`` pays for, edges that climb back up the
  drawing most: the summary node takes no edges in, so that a collapsed
  50-term ``x ** x`` grad is laid out in a quarter of a second, not one.
- ``timeout``: seconds one ``dot`` run may take; then its process group is
  killed (``render.run_dot``).
- ``max_pixels``: pixels in a PNG. ``dot`` lays the graph out first
  (``-Tjson0``), and a larger image is drawn at a lower dpi, with a warning.

The defaults answer a refused drawing in under 5 s and 500 MB. Raise them for
a block with ``viz.limits(max_work=10**8, timeout=60)``; ``max_nodes`` on
``draw``/``trace`` also raises the node limit of that drawing. Read next:
``shrink.py`` (how a graph is collapsed to the node limit), ``render.py``.
"""

import contextlib
import contextvars
import dataclasses
import math

from ..core.primitives.conv import Convolution
from ..core.primitives.elementwise import Power
from ..core.primitives.factorizations import QRF, SVD, Eig, Eigh
from ..core.primitives.linalg import AddMM, Inverse, Matmul
from ..core.primitives.masked_mm import BlockMaskedMM, GatherMM, SegmentedMM
from ..core.transforms.eval import charging, current_charge
from ..core.primitives.quantized import QuantizedProduct
from ..core.primitives.solvers import LUF, Cholesky
from .record import op_name

__all__ = ["Limits", "LimitExceeded", "LimitWarning", "current", "limits", "cost", "counting_work"]


@dataclasses.dataclass(frozen=True)
class Limits:
    max_work: int = 3_000_000  # element operations (1 to 3 s of pure-Python arithmetic)
    max_nodes: int = 80  # nodes given to dot (a 90-node grad: about 1 s on a loaded machine)
    timeout: float = 4.0  # seconds for the dot runs of one image
    max_pixels: int = 16_000_000  # a 4000 x 4000 PNG


_NAMES = {  # how each limit is raised, for the messages
    "max_work": "max_work=N (mlxref graph --max-work N)",
    "max_nodes": "max_nodes=N (mlxref graph --max-nodes N)",
    "timeout": "timeout=SECONDS (mlxref graph --timeout SECONDS)",
    "max_pixels": "max_pixels=N (mlxref graph --max-pixels N)",
}

_current = contextvars.ContextVar("mlxref_viz_limits", default=Limits())


class LimitExceeded(RuntimeError):
    """A drawing was refused: it would need more work or time than its limit."""


class LimitWarning(UserWarning):
    """A drawing was shrunk to fit a limit (fewer nodes, fewer pixels)."""


def current():
    """The limits in force (the defaults outside any ``limits`` block)."""
    return _current.get()


@contextlib.contextmanager
def limits(max_work=None, max_nodes=None, timeout=None, max_pixels=None):
    """``with viz.limits(max_work=10**8): ...``: other limits inside the block (None keeps one)."""
    changes = {"max_work": max_work, "max_nodes": max_nodes, "timeout": timeout,
               "max_pixels": max_pixels}
    changes = {k: v for k, v in changes.items() if v is not None}
    for name, value in changes.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not value > 0 or (name != "timeout" and value != int(value)):
            kind = "a positive number of seconds" if name == "timeout" else "a positive integer"
            raise ValueError(f"[viz.limits] {name} must be {kind}, not {value!r}")
    token = _current.set(dataclasses.replace(current(), **changes))
    try:
        yield current()
    finally:
        _current.reset(token)


def raise_with(name):
    """How to raise limit ``name``, for a message."""
    return f"raise it with {_NAMES[name]}"


# --- work ------------------------------------------------------------------------

# Products: each output element is a sum of k products, k the last axis of the
# first input. Factorizations and solvers: about n operations per element of an
# n x n matrix (n**3 in all).
_PRODUCTS = (Matmul, AddMM, GatherMM, SegmentedMM, BlockMaskedMM, QuantizedProduct)
_CUBIC = (Inverse, QRF, SVD, Eigh, Eig, LUF, Cholesky)


def cost(primitive, inputs, outputs):
    """Element operations to compute ``outputs`` from ``inputs``: at least one per element
    read or written, times what one output element costs."""
    elements = max(sum(a.size for a in inputs), sum(a.size for a in outputs), 1)
    if isinstance(primitive, _PRODUCTS) and inputs and inputs[0].ndim:
        return max(elements, sum(a.size for a in outputs) * inputs[0].shape[-1])
    if isinstance(primitive, _CUBIC) and inputs and inputs[0].ndim:
        return elements * inputs[0].shape[-1]
    if isinstance(primitive, Convolution) and len(inputs) > 1 and inputs[1].shape[0]:
        weight = inputs[1]  # (C_out, *kernel, C_in): each output element reads one filter
        return max(elements, outputs[0].size * (weight.size // weight.shape[0]))
    if isinstance(primitive, Power) and inputs[0].dtype.is_integer:
        # Repeated squaring: a square and a multiply per bit of the exponent's type.
        return elements * 2 * 8 * inputs[0].dtype.size
    return elements


class _Work:
    """The ``charge`` the engine calls with the nodes it is about to compute: refuses
    them all when they would bring the total over ``limit``."""

    def __init__(self, limit):
        self.limit = limit
        self.spent = 0

    def __call__(self, nodes):
        spent, seen, largest = self.spent, set(), (0, None)
        for node in nodes:
            primitive = node.primitive()
            if primitive is None or id(primitive) in seen:  # siblings share one primitive
                continue
            seen.add(id(primitive))
            work = cost(primitive, node.inputs(), node.outputs())
            spent += work
            largest = max(largest, (work, node), key=lambda pair: pair[0])
        if spent > self.limit:
            work, node = largest
            raise LimitExceeded(
                f"[viz] evaluating what is drawn takes {spent:,} element operations, more "
                f"than max_work={self.limit:,} (the largest: {op_name(node.primitive())} of "
                f"shape {tuple(node.shape)}, {work:,}); {raise_with('max_work')}")
        self.spent = spent


def counting_work():
    """``with counting_work() as work: ...``: every evaluation inside counts against
    ``max_work`` (one budget for the whole block, shared with an enclosing block:
    a drawing made inside a drawn function spends its budget)."""
    active = current_charge()
    return charging(active if isinstance(active, _Work) else _Work(current().max_work))


def pixels_of(bb, dpi, size):
    """The PNG's (width, height) in pixels for a layout's bounding box (points), as dot
    draws it: 4 points of padding each side, ``size`` (inches; ``"!"`` also scales up)."""
    width, height = bb[2] - bb[0], bb[3] - bb[1]
    scale = 1.0
    if size:
        up = size.endswith("!")
        parts = size.rstrip("!").split(",")
        box_w = float(parts[0]) * 72
        box_h = float(parts[1]) * 72 if len(parts) > 1 else box_w
        if width > 0 and height > 0:
            fit = min(box_w / width, box_h / height)
            scale = fit if up or fit < 1 else 1.0
    return (math.ceil((width * scale + 8) * dpi / 72), math.ceil((height * scale + 8) * dpi / 72))
