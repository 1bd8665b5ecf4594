"""Real MLX for the benchmarks' MLX column: whether it is installed, its device, its arrays.

The benchmark programs are written once, in ``benchmarks/``, as functions of
the array module they run on (``def loss(mx, x)``): mlxref's column passes
``mlxref.core``, the MLX column passes ``core()`` (``mlx.core``) and uses
MLX's own transforms. This module holds only what is about MLX itself: whether
``mlx`` is importable and how to install it (``pip install -e '.[metal]'``),
the device label every report prints (MLX uses the Metal GPU where
``mx.metal.is_available()``, elsewhere its CPU build), and ``array``, which
turns the benchmarks' nested Python lists into evaluated float32 MLX arrays
before the clock starts.

Nothing in mlxref imports this module to compute its results: it exists only
for the benchmarks and for comparing them with mlxref in tests.
"""

INSTALL_HINT = "pip install -e '.[metal]'"

try:  # pragma: no cover - depends on the environment
    import mlx.core as _mx
except Exception:  # noqa: BLE001 - any import failure means "not available"
    _mx = None


def available():
    """True when ``mlx.core`` is importable."""
    return _mx is not None


def install_hint():
    """One line: how to install the real-MLX column."""
    return INSTALL_HINT


def core():
    """The ``mlx.core`` module; a ``RuntimeError`` saying how to install it when it is missing."""
    if _mx is None:
        raise RuntimeError(f"mlx is not installed; {INSTALL_HINT}")
    return _mx


def device():
    """A label for the device MLX runs on: "Metal GPU" or "MLX CPU build"."""
    mx = core()
    try:
        metal = mx.metal.is_available()
    except Exception:  # noqa: BLE001
        metal = False
    return "Metal GPU" if metal else "MLX CPU build"


def label():
    """The column name used in benchmark tables: ``"MLX (<device>)"``."""
    return f"MLX ({device()})"


def array(values):
    """A nested list of floats as an evaluated float32 MLX array."""
    a = core().array(values, dtype=_mx.float32)
    _mx.eval(a)
    return a
