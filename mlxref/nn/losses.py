"""Loss functions, mirroring mlx.nn.losses (python/mlx/nn/losses.py).

Note the defaults, which are MLX's: ``mse_loss`` reduces with ``"mean"``,
``cross_entropy`` with ``"none"`` (one loss per example).

>>> import mlxref.core as mx
>>> logits = mx.array([[2.0, -1.0], [-1.0, 2.0]])
>>> cross_entropy(logits, mx.array([0, 1]))  # MLX's float32 logsumexp: 0.0485873
array([0.0485874, 0.0485874], dtype=float32)
>>> cross_entropy(logits, mx.array([[0.9, 0.1], [0.1, 0.9]]))
array([0.348587, 0.348587], dtype=float32)
>>> mse_loss(mx.array([1.0, 2.0]), mx.array([0.0, 0.0]))
array(2.5, dtype=float32)
"""

from .. import core as mx

__all__ = ["cross_entropy", "mse_loss"]

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

    if weights is not None:
        if weights.shape != loss.shape:
            raise ValueError(
                f"Weights with shape {weights.shape} is not the same as "
                f"output loss with shape {loss.shape}."
            )
        loss = loss * weights
    return _reduce(loss, reduction)


def mse_loss(predictions, targets, reduction="mean"):
    """``(predictions - targets) ** 2``, reduced (by default averaged over everything)."""
    if predictions.shape != targets.shape:
        raise ValueError(
            f"Predictions shape {predictions.shape} does not match "
            f"targets shape {targets.shape}."
        )
    return _reduce(mx.square(predictions - targets), reduction)
