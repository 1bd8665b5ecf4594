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

from ..ops.common import incompatible_arguments
from ..primitives.custom import depends
from . import trees
from .custom_function import custom_transforms, flatten_call
from .vjp import vjp


def checkpoint(fun):
    """Return ``fun`` checkpointed: its backward pass recomputes it.

    Gradients reach every array in the arguments, keyword arguments included;
    other leaves pass through, in the inputs and in the outputs.

    >>> import mlxref.core as mx
    >>> f = mx.checkpoint(lambda x: mx.sin(x) * x)
    >>> mx.grad(lambda x: f(x).sum())(mx.array([0.5]))
    array([0.918217], dtype=float32)
    """
    if not callable(fun):
        raise incompatible_arguments("checkpoint(fun: Callable[P, R]) -> Callable[P, R]", [fun])

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        inputs, flat_fun, last_output = flatten_call(
            fun, args, kwargs, "checkpoint", strict_outputs=False
        )
        fun_vjp = functools.partial(checkpoint_vjp, flat_fun)
        outputs = custom_transforms(flat_fun, fun_vjp, name="checkpoint")(*inputs)
        return trees.replace_arrays(last_output(), outputs)

    return checkpointed


def checkpoint_vjp(fun, primals, cotangents, outputs):
    """The vjp of a checkpointed ``fun``: ``fun`` run again under ``vjp``, on
    primals that wait for the forward ``outputs``."""
    # BEGIN TASK 6.2: checkpoint: recompute in the backward pass
    return vjp(fun, depends(primals, outputs), cotangents)[1]
    # END TASK 6.2
