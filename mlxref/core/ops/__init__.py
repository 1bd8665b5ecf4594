"""The user-facing ops of mlxref.core, one module per family.

Each op validates its arguments with MLX's messages, converts and promotes,
broadcasts, and builds one lazy node (or composes other ops where MLX does).
Its docstring says so, with an example; the sentences many ops share are
written once, in docs.py (``@shared_doc``).

Each ``def`` line takes its arguments as MLX's binding does (which by position
only, which by keyword only), and that is not always what MLX prints: its
signatures are written by hand beside each binding, and ``help(mx.roll)`` marks
``shift`` and ``axis`` positional-only while ``mx.roll(a, 1, axis=1)`` runs.
mlxref follows what MLX takes; tests/test_keywords.py asks MLX by calling it.
"""

from .common import astype, broadcast_shapes, broadcast_to  # noqa: F401
from .comparison import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .diagonal import *  # noqa: F401,F403
from .depends import *  # noqa: F401,F403
from .einsum import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .hadamard import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .masked_mm import *  # noqa: F401,F403
from .quantized import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .signal import *  # noqa: F401,F403
from .sort import *  # noqa: F401,F403

# MLX's ``slice`` / ``slice_update`` with array starts; named so here, since a
# module-level ``slice`` would hide Python's own in the modules that index.
slice = dynamic_slice  # noqa: F405
slice_update = dynamic_slice_update  # noqa: F405
