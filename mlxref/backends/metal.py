"""Real MLX as a timing comparison for the benchmarks: never mlxref's own engine.

When ``mlx`` is importable, this module runs the benchmark programs (the seed
gradient, the MLP step, the deep chain, per-example gradients) on real MLX so
that ``make bench`` (``python -m benchmarks``) can show what the pure-Python
reference costs next to it. MLX uses the Metal GPU where
``mx.metal.is_available()``, elsewhere its CPU build; ``device()`` is the label
every report prints. Install it with ``pip install -e '.[metal]'``.

Nothing in mlxref imports this module to compute its results: it exists only
for benchmarks and for comparing against mlxref in tests.

Each timing function returns ``(seconds, result)``: the wall time
(``time.perf_counter``) of the transform call plus ``mx.eval`` of its outputs
(inputs are converted to MLX arrays before the clock starts), and the result
as Python floats / nested lists so callers can check it.
"""

import math
import time

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


def device():
    """A label for the device MLX runs on: "Metal GPU" or "MLX CPU build"."""
    _require()
    try:
        metal = _mx.metal.is_available()
    except Exception:  # noqa: BLE001
        metal = False
    return "Metal GPU" if metal else "MLX CPU build"


def label():
    """The column name used in benchmark tables: ``"MLX (<device>)"``."""
    return f"MLX ({device()})"


def _require():
    if _mx is None:
        raise RuntimeError(f"mlx is not installed; {INSTALL_HINT}")
    return _mx


def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


# --- the seed function: grad of sum(sin(x) * exp(x)) --------------------------------


def seed_input(n):
    """The benchmark's input vector: n points evenly spaced in [-2, 2] (Python floats)."""
    if n == 1:
        return [0.5]
    return [-2.0 + 4.0 * i / (n - 1) for i in range(n)]


def _seed_loss(x):
    return _mx.sum(_mx.sin(x) * _mx.exp(x))


def seed_grad_prepare(x):
    """The input list as an MLX array, evaluated (outside the timing)."""
    _require()
    a = _mx.array(x, dtype=_mx.float32)
    _mx.eval(a)
    return (a,)


def seed_grad_run(x):
    """``grad(sum(sin(x) * exp(x)))`` at the MLX array ``x``, evaluated."""
    g = _mx.grad(_seed_loss)(x)
    _mx.eval(g)
    return g


def seed_grad(n, x=None):
    """``(seconds, gradient list)`` of the seed function over a vector of ``n`` elements."""
    args = seed_grad_prepare(seed_input(n) if x is None else x)
    t, g = _timed(seed_grad_run, *args)
    return t, g.tolist()


# --- the MLP step of benchmarks/mlp.py ------------------------------------------------


def _mlp_loss(params, X, Y):
    h = X
    last = len(params) // 2
    for layer in range(1, last + 1):
        h = h @ params[f"W{layer}"] + params[f"b{layer}"]
        if layer < last:
            h = _mx.maximum(h, 0)
    d = h - Y
    return _mx.mean(d * d)


def mlp_prepare(params, X, Y):
    """Nested-list params and data as evaluated MLX arrays: ``(params, X, Y)``."""
    _require()
    p = {k: _mx.array(v, dtype=_mx.float32) for k, v in params.items()}
    Xa, Ya = _mx.array(X, dtype=_mx.float32), _mx.array(Y, dtype=_mx.float32)
    _mx.eval(p, Xa, Ya)
    return p, Xa, Ya


def mlp_run(params, X, Y):
    """``value_and_grad`` of the MLP's MSE, evaluated: ``(loss array, {name: grad})``."""
    loss, grads = _mx.value_and_grad(_mlp_loss)(params, X, Y)
    _mx.eval(loss, grads)
    return loss, grads


def mlp_result(out):
    loss, grads = out
    return loss.item(), {k: v.tolist() for k, v in grads.items()}


def mlp_step(params, X, Y):
    """``(seconds, (loss float, {name: nested-list gradient}))`` of one MLP step."""
    args = mlp_prepare(params, X, Y)
    t, out = _timed(mlp_run, *args)
    return t, mlp_result(out)


# --- the deep chain of benchmarks/deep_chain.py -----------------------------------------

CHAIN_OPS_PER_STEP = 4
CHAIN_SCALE = 0.01
CHAIN_SHIFT = 0.05
CHAIN_X0 = 0.3


def _chain(x, n_ops):
    for _ in range(n_ops // CHAIN_OPS_PER_STEP):
        x = x + _mx.sin(x) * CHAIN_SCALE + CHAIN_SHIFT
    return x


def chain_run(n_ops, x0=CHAIN_X0):
    """``value_and_grad`` of the chain on a 0-d MLX array, evaluated."""
    value, grad = _mx.value_and_grad(_chain)(_mx.array(x0, dtype=_mx.float32), n_ops)
    _mx.eval(value, grad)
    return value, grad


def chain_grad(n_ops, x0=CHAIN_X0):
    """``(seconds, (value, gradient))`` of the deep chain of ``n_ops`` scalar ops.

    The graph is built inside the timing, as in mlxref's measurement.
    """
    _require()
    if n_ops <= 0 or n_ops % CHAIN_OPS_PER_STEP:
        raise ValueError(f"the chain length must be a positive multiple of {CHAIN_OPS_PER_STEP}")
    t, (value, grad) = _timed(chain_run, n_ops, x0)
    return t, (value.item(), grad.item())


# --- per-example gradients: vmap(grad) --------------------------------------------------


def vmap_input(batch=32, dim=8):
    """``(w, X, y)`` as Python lists: a deterministic per-example regression problem."""
    w = [math.sin(1.0 + j) * 0.5 for j in range(dim)]
    X = [[math.cos(0.7 * i + 0.3 * j) for j in range(dim)] for i in range(batch)]
    y = [math.sin(0.5 * i) * 0.5 for i in range(batch)]
    return w, X, y


def _example_loss(w, x, y):
    d = _mx.tanh(_mx.sum(x * w)) - y
    return d * d


def vmap_grad_prepare(w, X, y):
    _require()
    args = tuple(_mx.array(v, dtype=_mx.float32) for v in (w, X, y))
    _mx.eval(*args)
    return args


def vmap_grad_run(w, X, y):
    """Per-example gradients ``vmap(grad(loss), in_axes=(None, 0, 0))``, evaluated."""
    g = _mx.vmap(_mx.grad(_example_loss), in_axes=(None, 0, 0))(w, X, y)
    _mx.eval(g)
    return g


def vmap_grad(w=None, X=None, y=None, batch=32, dim=8):
    """``(seconds, per-example gradients (batch x dim nested list))``.

    The loss of one example is ``(tanh(sum(x * w)) - y) ** 2``; the gradient
    is taken with respect to ``w`` for every row of ``X``.
    """
    if w is None:
        w, X, y = vmap_input(batch, dim)
    args = vmap_grad_prepare(w, X, y)
    t, g = _timed(vmap_grad_run, *args)
    return t, g.tolist()


# --- checkpoint peak memory of benchmarks/checkpoint_memory.py ---------------------------


def _tanh_block(h, weights):
    for w in weights:
        h = _mx.tanh(h @ w)
    return h


def checkpoint_peaks(x, weights, block):
    """MLX's peak memory for the gradient of ``sum(tanh layers)``, without and with checkpoint.

    ``x`` and ``weights`` are nested lists; the checkpointed loss wraps every
    ``block`` layers in ``mx.checkpoint``. Each figure is ``mx.get_peak_memory()``
    over the gradient's evaluation minus the memory active before it (after
    ``mx.reset_peak_memory()``), as in mlxref's measurement. Returns
    ``{"plain": (bytes, gradient list), "checkpoint": (bytes, gradient list)}``.
    MLX counts its allocator's buffers, so its figures include allocation
    granularity that mlxref's element-byte count does not.
    """
    _require()
    xa = _mx.array(x, dtype=_mx.float32)
    ws = [_mx.array(w, dtype=_mx.float32) for w in weights]
    _mx.eval(xa, ws)

    def plain(x, ws):
        return _tanh_block(x, ws).sum()

    def checkpointed(x, ws):
        step = _mx.checkpoint(_tanh_block)
        h = x
        for i in range(0, len(ws), block):
            h = step(h, ws[i : i + block])
        return h.sum()

    out = {}
    for key, loss in (("plain", plain), ("checkpoint", checkpointed)):
        g = _mx.grad(loss)(xa, ws)
        base = _mx.get_active_memory()
        _mx.reset_peak_memory()
        _mx.eval(g)
        out[key] = (_mx.get_peak_memory() - base, g.tolist())
        del g
    return out
