"""The function transforms, one module each, read top to bottom."""

from .grad import grad, value_and_grad  # noqa: F401
from .jvp import jvp  # noqa: F401
from .vjp import vjp  # noqa: F401
