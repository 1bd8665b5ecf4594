"""The primitives behind custom_function and checkpoint: CustomTransforms and Depends.

Read alongside: mlx/primitives.h and mlx/primitives.cpp (``CustomTransforms``,
``Depends``), mlx/ops.cpp (``depends``) and mlx/transforms.cpp
(``custom_function``, ``checkpoint``).
Read next: mlxref/core/transforms/custom_function.py and checkpoint.py (what
builds these nodes).
"""

from .. import ops
from .base import Primitive, make_arrays


class CustomTransforms(Primitive):
    """The outputs of a function whose transforms are given by rules, not by its graph.

    Its inputs are the function's arrays followed by its ``num_outputs``
    outputs, each already behind stop_gradient; its outputs share those
    outputs' elements, so the forward pass is the function's own graph and
    this node costs nothing. The transforms call the rules instead of
    differentiating the graph, which the stop_gradients hide from them:

    - ``vjp_fun(primals, cotangents, outputs)``: one vjp per primal;
    - ``jvp_fun(primals, tangents, argnums)``: one tangent per output;
    - ``vmap_fun(inputs, axes)``: ``(outputs, out_axes)``.

    ``name`` is what drawings call the node ("checkpoint"), and
    ``custom_rules`` names the rules the user wrote ("vjp", ...).
    """

    moves_elements = True

    def __init__(self, num_outputs, vjp_fun, jvp_fun, vmap_fun,
                 name="CustomTransforms", custom_rules=()):
        self.num_outputs = num_outputs
        self.vjp_fun, self.jvp_fun, self.vmap_fun = vjp_fun, jvp_fun, vmap_fun
        self._name = name
        self.custom_rules = tuple(custom_rules)

    @property
    def name(self):
        return self._name

    def output_shapes(self, inputs):
        return [x.shape for x in inputs[-self.num_outputs :]]

    def output_dtypes(self, inputs):
        return [x.dtype for x in inputs[-self.num_outputs :]]

    def eval(self, inputs):
        return [x.data() for x in inputs[-self.num_outputs :]]

    def vjp(self, primals, cotangents, argnums, outputs):
        # BEGIN TASK 6.1: custom_function: the CustomTransforms node calls the rules
        inputs = primals[: -self.num_outputs]
        # The function's outputs among the inputs get their own cotangents (MLX).
        all_vjps = list(self.vjp_fun(inputs, cotangents, outputs)) + list(cotangents)
        return [all_vjps[i] for i in argnums]
        # END TASK 6.1

    def jvp(self, primals, tangents, argnums):
        # BEGIN TASK 6.1: custom_function: the CustomTransforms node calls the rules
        return self.jvp_fun(primals[: -self.num_outputs], tangents, argnums)
        # END TASK 6.1

    def vmap(self, inputs, axes):
        n = self.num_outputs
        return self.vmap_fun(inputs[:-n], axes[:-n])


def depends(inputs, dependencies):
    """``inputs`` again, as outputs that cannot be computed before ``dependencies``.

    checkpoint uses it so that the recomputation in the backward pass waits
    for the forward pass's outputs (mlx/ops.cpp ``depends``).
    """
    return make_arrays(Depends(len(inputs)), list(inputs) + list(dependencies))


class Depends(Primitive):
    """Outputs that alias the first ``num_inputs`` inputs; the rest only order evaluation.

    MLX gives it a vjp only; mlxref also gives it a jvp and a vmap rule, so
    ``jvp(grad(checkpoint(f)))`` and ``vmap(grad(checkpoint(f)))`` work.
    """

    moves_elements = True

    def __init__(self, num_inputs):
        self.num_inputs = num_inputs

    def output_shapes(self, inputs):
        return [x.shape for x in inputs[: self.num_inputs]]

    def output_dtypes(self, inputs):
        return [x.dtype for x in inputs[: self.num_inputs]]

    def eval(self, inputs):
        return [x.data() for x in inputs[: self.num_inputs]]

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
