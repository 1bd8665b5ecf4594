"""The function transforms, one module each, read top to bottom."""

from .grad import grad, value_and_grad  # noqa: F401
from .jvp import jvp  # noqa: F401
from .vjp import vjp  # noqa: F401
from .vmap import vmap  # noqa: F401
from .checkpoint import checkpoint  # noqa: F401
from .custom_function import custom_function  # noqa: F401
from .eval import async_eval, eval  # noqa: F401
from .compile import compile, disable_compile, enable_compile  # noqa: F401,A004
from .export import export_function, exporter, import_function  # noqa: F401
