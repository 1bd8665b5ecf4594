"""Loss functions, mirroring mlx.nn.losses (python/mlx/nn/losses.py).

Each loss computes one value per example (or per element) from its formula
and hands it to ``_reduce`` (``reduction`` ``"none"``, ``"mean"`` or
``"sum"``). Note the defaults, which are MLX's: the regression losses
``mse_loss``, ``l1_loss``, ``smooth_l1_loss``, ``gaussian_nll_loss`` and
``binary_cross_entropy`` reduce with ``"mean"``; the others with ``"none"``.

>>> import mlxref.core as mx
>>> logits = mx.array([[2.0, -1.0], [-1.0, 2.0]])
>>> cross_entropy(logits, mx.array([0, 1]))  # MLX's float32 logsumexp: 0.0485873
array([0.0485874, 0.0485874], dtype=float32)
>>> cross_entropy(logits, mx.array([[0.9, 0.1], [0.1, 0.9]]))
array([0.348587, 0.348587], dtype=float32)
>>> mse_loss(mx.array([1.0, 2.0]), mx.array([0.0, 0.0]))
array(2.5, dtype=float32)
"""

import math

from .. import core as mx

__all__ = [
    "cross_entropy", "binary_cross_entropy", "l1_loss", "mse_loss", "nll_loss",
    "gaussian_nll_loss", "kl_div_loss", "smooth_l1_loss", "triplet_loss", "hinge_loss",
    "huber_loss", "log_cosh_loss", "cosine_similarity_loss", "margin_ranking_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss, reduction="none"):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid reduction. Must be one of {_REDUCTIONS}.")
    if reduction == "mean":
        return mx.mean(loss)
    if reduction == "sum":
        return mx.sum(loss)
    return loss


def cross_entropy(logits, targets, weights=None, axis=-1, label_smoothing=0.0, reduction="none"):
    """The cross entropy of ``softmax(logits)`` along ``axis`` against ``targets``.

    ``targets`` are class indices (``logits``' shape without ``axis``) or
    probabilities (``logits``' shape), told apart by their number of
    dimensions. ``weights`` (the loss's shape) scale each loss before the
    reduction. With ``label_smoothing`` s, the loss is
    ``logsumexp - (1 - s) * score - s * mean(logits)``.
    """
    if label_smoothing < 0 or label_smoothing >= 1:
        raise ValueError(f"Label smoothing must be in [0, 1), got {label_smoothing}.")
    as_probs = targets.ndim == logits.ndim
    expected = list(logits.shape)
    if not as_probs:
        expected.pop(axis)
    if tuple(targets.shape) != tuple(expected):
        raise ValueError(
            f"Targets shape {targets.shape} does not match logits shape {logits.shape}."
        )

    # Shift by the (constant) max for stability; it cancels out of the loss.
    logits = logits - mx.stop_gradient(mx.max(logits, axis=axis, keepdims=True))
    if as_probs:
        score = mx.sum(logits * targets, axis=axis)
    else:
        score = mx.take_along_axis(logits, mx.expand_dims(targets, axis), axis).squeeze(axis)
    normalizer = mx.logsumexp(logits, axis=axis)
    if label_smoothing > 0:
        smoothing = -logits.mean(axis=axis) * label_smoothing
        loss = normalizer - (1 - label_smoothing) * score + smoothing
    else:
        loss = normalizer - score

    return _reduce(_weighted(loss, weights), reduction)


def _weighted(loss, weights):
    if weights is None:
        return loss
    if weights.shape != loss.shape:
        raise ValueError(
            f"Weights with shape {weights.shape} is not the same as "
            f"output loss with shape {loss.shape}."
        )
    return loss * weights


def _check_same_shape(predictions, targets, first="Predictions", second="targets"):
    if predictions.shape != targets.shape:
        raise ValueError(
            f"{first} shape {predictions.shape} does not match "
            f"{second} shape {targets.shape}."
        )


def binary_cross_entropy(inputs, targets, weights=None, with_logits=True, reduction="mean"):
    """``-(t log p + (1 - t) log(1 - p))`` for probabilities ``p``.

    With ``with_logits`` (the default) ``inputs`` are logits ``z``, ``p =
    sigmoid(z)``, and the loss is computed stably as ``log(1 + e^z) - t z``;
    otherwise ``inputs`` are ``p`` and each log is clipped at -100.
    """
    _check_same_shape(inputs, targets, "Inputs")
    if with_logits:
        loss = mx.logaddexp(0.0, inputs) - inputs * targets
    else:
        log_p = mx.clip(mx.log(inputs), a_min=-100, a_max=None)
        log_not_p = mx.clip(mx.log(1 - inputs), a_min=-100, a_max=None)
        loss = -(targets * log_p + (1 - targets) * log_not_p)
    return _reduce(_weighted(loss, weights), reduction)


def l1_loss(predictions, targets, reduction="mean"):
    """``|predictions - targets|``, by default averaged."""
    _check_same_shape(predictions, targets)
    return _reduce(mx.abs(predictions - targets), reduction)


def mse_loss(predictions, targets, reduction="mean"):
    """``(predictions - targets) ** 2``, by default averaged."""
    _check_same_shape(predictions, targets)
    return _reduce(mx.square(predictions - targets), reduction)


def nll_loss(inputs, targets, axis=-1, reduction="none"):
    """``-inputs[target]`` along ``axis``: ``inputs`` are log-probabilities, ``targets`` indices."""
    loss = -mx.take_along_axis(inputs, mx.expand_dims(targets, axis), axis).squeeze(axis)
    return _reduce(loss, reduction)


def gaussian_nll_loss(inputs, targets, vars, full=False, eps=1e-6, reduction="mean"):
    """``(log v + (t - mu)^2 / v) / 2`` for the Gaussian ``N(mu=inputs, v=vars)``.

    ``vars`` is clamped below at ``eps``; ``full`` adds the constant ``log(2 pi) / 2``.
    """
    _check_same_shape(inputs, targets, "Inputs")
    _check_same_shape(inputs, vars, "Inputs", "vars")
    vars = mx.maximum(vars, eps)
    loss = 0.5 * (mx.log(vars) + mx.square(targets - inputs) / vars)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div_loss(inputs, targets, axis=-1, reduction="none"):
    """``KL(q || p) = sum q (log q - log p)`` along ``axis``, with ``inputs = log p`` and
    ``targets = log q`` (both log-probabilities)."""
    loss = mx.sum(mx.exp(targets) * (targets - inputs), axis)
    return _reduce(loss, reduction)


def smooth_l1_loss(predictions, targets, beta=1.0, reduction="mean"):
    """With ``d = |predictions - targets|``: ``d^2 / (2 beta)`` if ``d < beta``, else
    ``d - beta / 2``."""
    _check_same_shape(predictions, targets)
    diff = mx.abs(predictions - targets)
    loss = mx.where(diff < beta, 0.5 * mx.square(diff) / beta, diff - 0.5 * beta)
    return _reduce(loss, reduction)


def triplet_loss(anchors, positives, negatives, axis=-1, p=2, margin=1.0, eps=1e-6,
                 reduction="none"):
    """``max(|a - pos|_p - |a - neg|_p + margin, 0)``, the p-norms taken along ``axis``
    as ``(sum |.|^p + eps)^(1/p)``."""

    def distance(x, y):
        return mx.power(mx.power(mx.abs(x - y), p).sum(axis) + eps, 1.0 / p)

    loss = mx.maximum(distance(anchors, positives) - distance(anchors, negatives) + margin, 0)
    return _reduce(loss, reduction)


def hinge_loss(inputs, targets, reduction="none"):
    """``max(1 - inputs * targets, 0)``, the targets being -1 or 1."""
    return _reduce(mx.maximum(1 - inputs * targets, 0), reduction)


def huber_loss(inputs, targets, delta=1.0, reduction="none"):
    """With ``e = |inputs - targets|``: ``e^2 / 2`` if ``e <= delta``, else
    ``delta (e - delta / 2)``; written as ``q^2 / 2 + delta (e - q)``, ``q = min(e, delta)``."""
    errors = mx.abs(inputs - targets)
    quadratic = mx.minimum(errors, delta)
    loss = 0.5 * quadratic**2 + delta * (errors - quadratic)
    return _reduce(loss, reduction)


def log_cosh_loss(inputs, targets, reduction="none"):
    """``log(cosh(inputs - targets))``, as ``logaddexp(e, -e) - log 2`` so large ``e`` stays finite."""
    errors = inputs - targets
    return _reduce(mx.logaddexp(errors, -errors) - math.log(2), reduction)


def cosine_similarity_loss(x1, x2, axis=1, eps=1e-8, reduction="none"):
    """``x1 . x2 / max(|x1| |x2|, eps)`` along ``axis``."""
    norms = mx.linalg.norm(x1, axis=axis) * mx.linalg.norm(x2, axis=axis)
    loss = mx.sum(x1 * x2, axis=axis) / mx.maximum(norms, eps)
    return _reduce(loss, reduction)


def margin_ranking_loss(inputs1, inputs2, targets, margin=0.0, reduction="none"):
    """``max(0, -targets * (inputs1 - inputs2) + margin)``, the targets being -1 or 1."""
    if not (inputs1.shape == inputs2.shape == targets.shape):
        raise ValueError(
            f"The shapes of the arguments do not match. The provided shapes are "
            f"inputs1.shape={inputs1.shape}, inputs2.shape={inputs2.shape}, and "
            f"targets.shape={targets.shape}."
        )
    loss = mx.maximum(0, -targets * (inputs1 - inputs2) + margin)
    return _reduce(loss, reduction)
