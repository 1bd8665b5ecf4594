"""The Primitive interface, the one node constructor, the rules several
primitives share, and the identity-like primitives every op needs.

Read alongside: mlx/primitives.h (class ``Primitive``, ``UnaryPrimitive``),
mlx/primitives.cpp (the default rules that throw ``Not implemented``) and
mlx/array.cpp (``array::make_arrays``).

A primitive is one step of a computation. Its class holds everything mlxref
knows about that step, side by side, as MLX's does:

- ``eval(inputs)``: the forward rule. ``inputs`` are evaluated arrays; it
  returns one flat Python list of elements per output.
- ``vjp(primals, cotangents, argnums, outputs)``: one cotangent array per
  position in ``argnums`` (reverse mode).
- ``jvp(primals, tangents, argnums)``: one tangent array per output, given the
  tangents of the inputs at ``argnums`` (forward mode).
- ``vmap(inputs, axes)``: ``(outputs, out_axes)`` for a batch axis per input
  (``None``: not batched; MLX writes -1).
- ``output_shapes(inputs)`` and ``output_dtypes(inputs)``: what ``make_arrays``
  builds the output nodes from, so shape errors surface when a node is built.

The transform rules are written with mlxref ops, so a gradient is itself a
lazy graph and higher-order derivatives need no extra machinery. The ops
import the primitives and the primitives' rules call the ops; the loop is
closed by importing the ``ops`` package as a module, used only at call time.
Read next: mlxref/core/primitives/elementwise.py (the first family) and
mlxref/core/backend/cpu/ (the kernels an ``eval`` calls).
"""

import inspect

from .. import dtypes as _dt
from .. import ops
from ..array import array
from ..backend.cpu.copy import astype


class Primitive:
    """Base class. A rule a subclass does not define raises MLX's message."""

    # True when the outputs only hold elements of the inputs (reshape, slice,
    # gather...), or values their dtype holds as they are (a comparison's
    # bools): ``eval_arrays`` then skips the pass that rounds a primitive's results.
    moves_elements = False

    # True when MLX's kernel may write its one output into an input's buffer
    # (elementwise and copy kernels): ``allocator.donate`` then lets the output
    # take over an input nothing else can see.
    donates = False

    # True when MLX's output is a view of the first input's buffer (a
    # broadcast, transpose or slice: strides over the same memory). mlxref
    # builds a list, and the memory counters count it as sharing that buffer
    # (``allocator.allocate``), as MLX's do.
    view = False

    # False where MLX's class has no vjp and the vjp here is mlxref's own (the
    # factorizations, Inverse, SegmentedMM: their docstrings say which rule);
    # the manual says so under the drawing of an op whose vjp walk runs one.
    mlx_has_vjp = True

    @property
    def name(self):
        return type(self).__name__

    def eval(self, inputs):
        raise NotImplementedError(f"{self.name}.eval")

    def output_shapes(self, inputs):
        return [inputs[0].shape]

    def output_dtypes(self, inputs):
        """The dtype of each output (by default: one output, of the first input's dtype)."""
        return [inputs[0].dtype]

    def vjp(self, primals, cotangents, argnums, outputs):
        raise ValueError(f"[Primitive::vjp] Not implemented for {self.name}.")

    def jvp(self, primals, tangents, argnums):
        raise ValueError(f"[Primitive::jvp] Not implemented for {self.name}.")

    def vmap(self, inputs, axes):
        raise ValueError(f"[Primitive::vmap] Not implemented for {self.name}.")

    def params(self):
        """The non-array parameters that print after the name (e.g. axes)."""
        return {}

    def state(self):
        """MLX's ``Primitive::state``: what rebuilds this primitive, as
        ``{constructor argument: value}``, read from the attributes named as
        the constructor's arguments (``type(self)(**p.state())`` is an
        equivalent primitive). ``mx.export_function`` writes it and
        ``from_state`` rebuilds from it; a class whose attributes are named
        otherwise overrides this."""
        return {name: getattr(self, name) for name in constructor_arguments(type(self))}

    @classmethod
    def from_state(cls, state):
        """The primitive with the constructor arguments ``state`` (``state()``'s inverse)."""
        return cls(**state)

    # The name MLX's export callback gives the primitive, where it is not the
    # class's (Rsqrt: MLX's Sqrt with recip = True).
    mlx_name = None

    def mlx_state(self):
        """The state as MLX's export callback lists it (``"arguments"``): the
        values of ``state()`` in order; a class whose MLX state is an enum
        overrides this."""
        return list(self.state().values())

    def is_equivalent(self, other):
        """Would ``other`` compute the same outputs from the same inputs (MLX's
        ``is_equivalent``, which compile uses to merge nodes)? By default: the
        same class and the same attributes, compared by value only when they
        are plain values (numbers, strings, dtypes, tuples of them), otherwise
        by identity, so a primitive holding a function is never merged with
        one holding another."""
        if type(other) is not type(self):
            return False
        mine, theirs = vars(self), vars(other)
        return mine.keys() == theirs.keys() and all(
            _same_parameter(mine[k], theirs[k]) for k in mine)

    def __repr__(self):
        p = self.params()
        if not p:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in p.items())})"


def constructor_arguments(cls):
    """The names of ``cls``'s constructor arguments (none when it has no ``__init__``)."""
    if cls.__init__ is object.__init__:
        return []
    return [name for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


_PLAIN = (bool, int, float, complex, str, type(None), _dt.Dtype)


def _same_parameter(a, b):
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_parameter(x, y) for x, y in zip(a, b))
    return isinstance(a, _PLAIN) and a == b


def make_arrays(primitive, inputs):
    """The outputs of ``primitive`` applied to ``inputs``, as lazy arrays.

    MLX's ``array::make_arrays``: the one way a node is built. The shapes and
    dtypes come from the primitive (``output_shapes``, ``output_dtypes``), so a
    shape error surfaces here, when the node is built, and an op and a rule
    that build the same primitive cannot disagree about its output.
    """
    shapes = primitive.output_shapes(inputs)
    dtypes = primitive.output_dtypes(inputs)
    if len(dtypes) != len(shapes):
        dtypes = dtypes * len(shapes)  # one dtype for every output
    return array._node(shapes, dtypes, primitive, inputs)


def make_array(primitive, inputs):
    """The one output of ``primitive`` applied to ``inputs`` (``make_arrays`` for one)."""
    (out,) = make_arrays(primitive, inputs)
    return out


# --- the rules several primitives share (mlx/primitives.cpp's vmap_binary_op...) -----


def batch_size(inputs, axes):
    """The size of the batch axis (read from the first batched input)."""
    return next(x.shape[ax] for x, ax in zip(inputs, axes) if ax is not None)


def move_batch_axis(x, ax, size, dest=0):
    """``x`` with its batch axis ``ax`` moved to ``dest``; an unbatched ``x``
    (``ax`` None) is broadcast along a new batch axis of ``size`` there."""
    if ax is None:
        x = ops.expand_dims(x, dest)
        return ops.broadcast_to(x, x.shape[:dest] + (size,) + x.shape[dest + 1 :])
    return ops.moveaxis(x, ax, dest)


def vmap_elementwise(primitive, inputs, axes):
    """The vmap rule of every elementwise primitive (MLX's ``vmap_binary_op``).

    The op already broadcast the per-example inputs to one shape, so: move each
    batched input's batch axis to the front, broadcast the unbatched ones
    along it, and apply the same primitive once. The output is batched on
    axis 0.
    """
    # BEGIN TASK 5.1: vmap of elementwise primitives
    size = batch_size(inputs, axes)
    front = [move_batch_axis(x, ax, size) for x, ax in zip(inputs, axes)]
    return [make_array(primitive, front)], [0]
    # END TASK 5.1


def vmap_in_place(primitive, inputs, axes):
    """The vmap rule of a primitive that maps its one input example for
    example (a unary elementwise function, a copy): the same primitive on the
    batched input, whose batch axis stays where it is (MLX's ``Abs::vmap``...)."""
    return [make_array(primitive, inputs)], list(axes)


def vmap_leading(primitive, inputs, axes):
    """The vmap rule of a primitive that works on every matrix of a batch in
    its input's last two axes (the factorizations, the inverse): the batch
    axis moved to the front, the same primitive, every output batched on
    axis 0 (MLX's ``SVD::vmap``, ``Inverse::vmap``...)."""
    (x,), (ax,) = inputs, axes
    outs = make_arrays(primitive, [ops.moveaxis(x, ax, 0)])
    return outs, [0] * len(outs)


def vmap_by_examples(primitive, inputs, axes):
    """A vmap rule MLX lacks, for any primitive: the primitive applied to
    each example (the inputs indexed along their batch axes; unbatched ones
    shared), the results stacked on a new axis 0. One node per example:
    slow for long batches, and exactly the per-example results."""
    size = batch_size(inputs, axes)
    outs = []
    for b in range(size):
        example = [x if ax is None else x[(slice(None),) * ax + (b,)]
                   for x, ax in zip(inputs, axes)]
        outs.append(make_array(primitive, example))
    return [ops.stack(outs, 0)], [0]


def no_gradient_error(op, mode, what="indices"):
    """MLX's refusal to differentiate with respect to integer indices (or a
    mask): the error a vjp (``mode`` "VJP") or jvp ("JVP") raises."""
    return ValueError(
        f"[{op}] Cannot calculate {mode} with respect to {what}. "
        f"Use stop_gradient on {what} to stop gradients from being computed."
    )


def vjp_zeros(primitive, primals, cotangents, argnums, outputs):
    """The vjp of a primitive whose outputs are piecewise constant in its
    inputs (a comparison, an index, a count): zeros like each input asked
    for, MLX's rule."""
    return [ops.zeros_like(primals[i]) for i in argnums]


def jvp_zeros(primitive, primals, tangents, argnums):
    """The jvp of such a primitive (an index, a count): zeros of each
    output's shape and dtype, MLX's rule. (A comparison's keeps the
    tangent's dtype instead: ``Comparison.jvp``.)"""
    return [ops.zeros(shape, dtype) for shape, dtype in
            zip(primitive.output_shapes(primals), primitive.output_dtypes(primals))]


def multilinear_jvp(primitive, primals, tangents, argnums):
    """The jvp of a primitive linear in each input on its own (a product of
    them; or a linear map of one input, a slice): the sum, over the inputs
    with a tangent, of the primitive with that input replaced by its tangent."""
    out = None
    for i, t in zip(argnums, tangents):
        term = make_array(primitive, [t if j == i else p for j, p in enumerate(primals)])
        out = term if out is None else ops.add(out, term)
    return [out]


class SharedBuffer(Primitive):
    """A primitive whose output is its first input's elements in the same
    row-major order (a copy, a reshape, a stop_gradient): its ``eval`` hands
    over the input's list, as MLX's evals share the input's buffer
    (``copy_shared_buffer``, ``shared_buffer_reshape`` in
    mlx/backend/common/common.cpp). Element lists are never mutated."""

    abstract = True  # a family, not a primitive of its own
    moves_elements = True

    def eval(self, inputs):
        return [inputs[0].data()]


class Copy(SharedBuffer):
    """The identity, as a new node (MLX uses it to make tracers of the primals)."""

    def vjp(self, primals, cotangents, argnums, outputs):
        return [cotangents[0]]

    def jvp(self, primals, tangents, argnums):
        return [tangents[0]]

    vmap = vmap_elementwise


class AsType(Primitive):
    """Cast to ``dtype``: ``x.astype(dtype)``."""

    donates = True  # MLX's copy kernel reuses a donatable input (allocator.donate)

    # ``eval`` stores its results itself, so that a cast from bool to a float
    # (ReLU's mask in every gradient) skips the rounding pass: 0 and 1 are exact.
    moves_elements = True

    def __init__(self, dtype):
        self.dtype = dtype

    def params(self):
        return {"dtype": self.dtype}

    def output_dtypes(self, inputs):
        return [self.dtype]

    def vjp(self, primals, cotangents, argnums, outputs):
        # Back to the input's dtype: an int input gets a (truncated) int gradient.
        return [ops.astype(cotangents[0], primals[0].dtype)]

    def jvp(self, primals, tangents, argnums):
        return [ops.astype(tangents[0], self.dtype)]

    vmap = vmap_elementwise

    def eval(self, inputs):
        (x,) = inputs
        return [astype(x.data(), x.dtype, self.dtype)]


class StopGradient(SharedBuffer):
    """The identity in the forward pass; transforms never cross it."""

    vmap = vmap_elementwise  # still a stop_gradient once batched (MLX: StopGradient::vmap)
