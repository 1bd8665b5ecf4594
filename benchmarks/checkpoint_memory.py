"""Workload 3: the peak memory of a gradient with and without ``mx.checkpoint``.

A chain of 32 layers ``h = tanh(h @ W_l)`` (batch 16, width 32); the loss is
the sum of the output and the gradient is taken with respect to the input.
The checkpointed version wraps every block of 4 layers in ``mx.checkpoint``.
For each, the gradient is built, then evaluated after ``reset_peak_memory``;
the figure is the peak of ``mx.get_peak_memory()`` above the memory alive
before the evaluation (the weights and the input), i.e. what the evaluation
itself needed. Target: at most half the peak with checkpoint. The program
(``block``, the two losses, ``peak_of_gradient``) is written once, on the array
module ``mx`` it is given; where ``mlx`` is installed, ``mlx_peaks`` runs it on
``mlx.core`` with the same weights (``mlxref.backends.metal``).

Why it works: ``eval`` computes each node in a depth-first post-order from
the outputs, visiting inputs in argument order, so an intermediate is computed
just before its first consumer and its elements are released (the node is
detached) once its last consumer has run. Without checkpoint, the backward
pass needs all 32 activations, so all are alive at once. With checkpoint, the
forward pass keeps only the 8 block outputs; each block's 4 activations are
recomputed when the backward walk reaches that block (``Depends`` keeps the
recomputation from running before the forward pass) and freed after it.
"""

from functools import partial

import mlxref.core as mx
from mlxref.backends import metal

from . import harness

LAYERS, BATCH, WIDTH, BLOCK = 32, 16, 32, 4
TARGET_RATIO = 0.5
FLOAT32_TOLERANCE = 1e-4  # real MLX's float32 gradient against mlxref's


def make_problem(layers=LAYERS, batch=BATCH, width=WIDTH, seed=0):
    mx.random.seed(seed)
    weights = [mx.random.normal((width, width)) * (width**-0.5) for _ in range(layers)]
    x = mx.random.normal((batch, width))
    mx.eval(weights, x)
    return weights, x


def block(mx, h, weights):
    """The tanh layers on the array module ``mx`` (``mlxref.core`` or ``mlx.core``)."""
    for w in weights:
        h = mx.tanh(h @ w)
    return h


def loss_plain(mx, x, weights):
    return block(mx, x, weights).sum()


def loss_checkpointed(mx, x, weights, size=BLOCK):
    step = mx.checkpoint(partial(block, mx))
    h = x
    for i in range(0, len(weights), size):
        h = step(h, weights[i : i + size])
    return h.sum()


def peak_of_gradient(mx, loss, x, weights):
    """Bytes the evaluation of ``grad(loss)(x, weights)`` needed at its peak, and the gradient.

    ``loss(mx, x, weights)`` runs on the array module ``mx`` (mlxref's or MLX's).
    """
    g = mx.grad(partial(loss, mx))(x, weights)
    base = mx.get_active_memory()
    mx.reset_peak_memory()
    mx.eval(g)
    return mx.get_peak_memory() - base, g


def peaks(mx, x, weights):
    """``{"plain": (bytes, gradient list), "checkpoint": (bytes, gradient list)}`` on ``mx``."""
    out = {}
    for key, loss in (("plain", loss_plain), ("checkpoint", loss_checkpointed)):
        peak, g = peak_of_gradient(mx, loss, x, weights)
        out[key] = (peak, g.tolist())
    return out


def mlx_peaks(x, weights):
    """``peaks`` on real MLX, from mlxref's input and weights as float32 MLX arrays."""
    mlx_weights = [metal.array(w.tolist()) for w in weights]
    return peaks(metal.core(), metal.array(x.tolist()), mlx_weights)


def run(quick=False, **_):
    """mlxref's two peaks and their ratio; real MLX's too, when installed (``res["mlx"]``)."""
    weights, x = make_problem()
    mine = peaks(mx, x, weights)
    (plain, g_plain), (ckpt, g_ckpt) = mine["plain"], mine["checkpoint"]
    res = {
        "layers": LAYERS, "batch": BATCH, "width": WIDTH, "block": BLOCK,
        "peak_plain_bytes": plain, "peak_checkpoint_bytes": ckpt,
        "ratio": ckpt / plain, "target_ratio": TARGET_RATIO,
        "max_gradient_difference": harness.max_error(g_ckpt, g_plain),
        "mlx": None,
    }
    if metal.available():
        harness.progress("checkpoint memory: real MLX")
        theirs = mlx_peaks(x, weights)
        for key, (_, grad) in theirs.items():
            harness.check_close(f"checkpoint gradient ({metal.label()}, {key})", grad, g_plain,
                                FLOAT32_TOLERANCE)
        res["mlx"] = {
            "device": metal.device(),
            "peak_plain_bytes": theirs["plain"][0],
            "peak_checkpoint_bytes": theirs["checkpoint"][0],
            "ratio": theirs["checkpoint"][0] / theirs["plain"][0],
        }
    return res


def table(res):
    met = "yes" if res["ratio"] <= res["target_ratio"] else "**no**"
    mlx = res.get("mlx")
    headers = ["gradient evaluation", "mlxref peak above baseline"]
    rows = [
        ["without checkpoint", f"{res['peak_plain_bytes']:,} B"],
        [f"checkpoint every {res['block']} layers", f"{res['peak_checkpoint_bytes']:,} B"],
        ["ratio", f"{res['ratio']:.2f}"],
    ]
    if mlx:
        headers.append(f"MLX ({mlx['device']}) peak above baseline")
        rows[0].append(f"{mlx['peak_plain_bytes']:,} B")
        rows[1].append(f"{mlx['peak_checkpoint_bytes']:,} B")
        rows[2].append(f"{mlx['ratio']:.2f}")
    return "\n".join([
        harness.markdown_table(headers, rows),
        "",
        f"mlxref's ratio {res['ratio']:.2f} (target ≤ {res['target_ratio']}: {met}); its two "
        f"gradients differ by at most {res['max_gradient_difference']:.2g}."
        + (" MLX counts its allocator's buffers (float32), so its bytes are not directly "
           "comparable with mlxref's element bytes; the ratio is." if mlx else ""),
    ])
