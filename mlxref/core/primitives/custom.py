"""The primitives behind custom_function and checkpoint: CustomTransforms and Depends.

Read alongside: mlx/primitives.h (``CustomTransforms``, ``Depends``) and
mlx/transforms.cpp (``custom_function``, ``checkpoint``).
"""

from .. import ops
from ..array import array
from .base import Primitive


class CustomTransforms(Primitive):
    """Outputs of a function whose transforms are given by rules, not by its graph.

    Its inputs are the function's array arguments followed by its outputs,
    each already behind stop_gradient; its outputs share those outputs'
    elements, so the forward pass is the function's own graph and this node
    costs nothing. The transforms call the stored rules instead of
    differentiating the graph, which the stop_gradients hide from them.

    ``rules`` holds three functions of flat lists (see custom_function.py):
    ``vjp(primals, cotangents, outputs) -> one cotangent per primal``,
    ``jvp(primals, tangents) -> one tangent per output`` (tangents hold None
    where an input has none) and ``vmap(inputs, axes) -> (outputs, out_axes)``.
    """

    def __init__(self, num_inputs, rules, name="CustomTransforms"):
        self.num_inputs = num_inputs
        self.rules = rules
        self._name = name

    @property
    def name(self):
        return self._name

    def output_shapes(self, inputs):
        return [x.shape for x in inputs[self.num_inputs :]]

    def eval(self, inputs):
        return [x._data for x in inputs[self.num_inputs :]]

    def vjp(self, primals, cotangents, argnums, outputs):
        # BEGIN TASK 6.1: custom_function: the CustomTransforms node calls the rules
        n = self.num_inputs
        results = self.rules.vjp(primals[:n], cotangents, primals[n:])
        return [results[i] if i < n else ops.zeros_like(primals[i]) for i in argnums]
        # END TASK 6.1

    def jvp(self, primals, tangents, argnums):
        # BEGIN TASK 6.1: custom_function: the CustomTransforms node calls the rules
        n = self.num_inputs
        padded = [None] * n
        for i, t in zip(argnums, tangents):
            if i < n:
                padded[i] = t
        return self.rules.jvp(primals[:n], padded)
        # END TASK 6.1

    def vmap(self, inputs, axes):
        n = self.num_inputs
        return self.rules.vmap(inputs[:n], axes[:n])


def depends(inputs, dependencies):
    """``inputs`` again, as outputs that cannot be computed before ``dependencies``.

    checkpoint uses it so that the recomputation in the backward pass waits
    for the forward pass's outputs (mlx/ops.cpp ``depends``).
    """
    return array._nodes(
        [x.shape for x in inputs], [x.dtype for x in inputs], Depends(len(inputs)),
        list(inputs) + list(dependencies),
    )


class Depends(Primitive):
    """Outputs that alias the first ``num_inputs`` inputs; the rest only order evaluation.

    MLX gives it a vjp only; mlxref also gives it a jvp and a vmap rule, so
    ``jvp(grad(checkpoint(f)))`` and ``vmap(grad(checkpoint(f)))`` work.
    """

    def __init__(self, num_inputs):
        self.num_inputs = num_inputs

    def output_shapes(self, inputs):
        return [x.shape for x in inputs[: self.num_inputs]]

    def eval(self, inputs):
        return [x._data for x in inputs[: self.num_inputs]]

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[i] if i < self.num_inputs else ops.zeros_like(primals[i])
                for i in argnums]

    def jvp(self, primals, tangents, argnums):
        given = dict(zip(argnums, tangents))
        return [given[i] if i in given else ops.zeros_like(primals[i])
                for i in range(self.num_inputs)]

    def vmap(self, inputs, axes):
        n = self.num_inputs
        return depends(inputs[:n], inputs[n:]), list(axes[:n])
