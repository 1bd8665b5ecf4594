"""``mx.checkpoint``: trade compute for memory by recomputing in the backward pass.

Read alongside: mlx/transforms.cpp ``checkpoint`` and python/src/transforms.cpp
``PyCheckpointedFun``. A checkpointed function is a custom function whose vjp
runs the function again under ``vjp``, on inputs that ``depends`` on the
forward outputs, so the recomputation cannot be scheduled before the forward
pass has produced them. Nothing is discarded by hand: the backward graph
simply holds no reference to the forward pass's intermediates, so ``eval``
frees them as soon as their last consumer has run, and the backward pass
recomputes them one checkpointed block at a time. Under ``grad`` the function
runs exactly twice.

jvp and vmap fall back to the function's own transforms; mlxref gives
``Depends`` a jvp and a vmap rule, so ``jvp(grad(checkpoint(f)))`` and
``vmap(grad(checkpoint(f)))`` work (MLX 0.32 raises "Not implemented for
Depends" for both).
"""

import functools

from ..primitives.custom import depends
from .custom_function import Custom, DefaultRules


def checkpoint(fun):
    """Return ``fun`` checkpointed: its backward pass recomputes it.

    Gradients reach every array in the arguments, keyword arguments included;
    other leaves pass through, in the inputs and in the outputs.

    >>> import mlxref.core as mx
    >>> f = mx.checkpoint(lambda x: mx.sin(x) * x)
    >>> mx.grad(lambda x: f(x).sum())(mx.array([0.5]))
    array([0.918217], dtype=float32)
    """

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        call = Custom((args, kwargs), lambda t: fun(*t[0], **t[1]), strict_outputs=False)
        return call.apply(_Recompute(call), "checkpoint")

    return checkpointed


class _Recompute(DefaultRules):
    """The vjp re-runs the function, after its forward outputs exist."""

    def vjp(self, primals, cotangents, outputs):
        from .vjp import vjp_impl

        # BEGIN TASK 6.2: checkpoint: recompute in the backward pass
        return vjp_impl(self.call.call_flat, depends(primals, outputs), cotangents)[1]
        # END TASK 6.2
