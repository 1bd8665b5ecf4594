"""``Compiled``: a chain of elementwise primitives fused into one, by ``mx.compile``.

Read alongside: mlx/compile.cpp (``Compiled``'s constructor, which names the
kernel after its tape, ``is_equivalent``, ``output_shapes``, and the vjp,
jvp and vmap that throw: a compiled function called on tracers runs the
original function, so no transform meets the node).
Read next: mlxref/core/backend/cpu/compiled.py (the generated loop, and why
it gives the unfused bits); mlxref/core/transforms/compile.py (what is fused).
"""

import functools
import math

from .. import dtypes as _dt
from ..array import elements
from ..scalar import is_symbolic
from ..backend.cpu.compiled import Step, compile_kernel, eval_cpu, list_step
from ..backend.cpu.unary import FLOAT32_KERNEL_DTYPES
from .base import Primitive, make_arrays
from .elementwise import Binary, Unary
from .shape import Broadcast


class Compiled(Primitive):
    """The fused steps: ``tape`` is a list of ``(primitive, refs, dtype)``, where
    a ref below ``n_inputs`` (the number of ``input_dtypes``) is an input of
    the node and a ref ``n_inputs + j`` is step ``j``'s result; ``outputs``
    are the steps whose results are the node's outputs, in order;
    ``input_sizes`` say which inputs hold one element (read once)."""

    moves_elements = True  # each step rounds its own results in the loop
    donates = True  # MLX's compiled kernels reuse a donatable input (allocator.donate)

    def __init__(self, tape, input_dtypes, outputs, input_sizes):
        self.tape = list(tape)
        self.input_dtypes = list(input_dtypes)
        self.n_inputs = len(self.input_dtypes)
        self.outputs = list(outputs)
        self.input_sizes = list(input_sizes)
        self._kernels = {}

    @property
    def source(self):
        """The generated loop for inputs of the traced sizes (written at first use:
        a compiled function's program runs the steps on whole lists instead)."""
        return self._kernel(tuple(n == 1 for n in self.input_sizes))[0]

    @property
    def name(self):
        # MLX's Compiled::name(): "Compiled" then the fused primitives' names.
        return "Compiled" + "".join(p.name for p, _, _ in self.tape)

    def params(self):
        return {"kernel": self.name}  # (how a drawing tells one fused chain from another)

    def is_equivalent(self, other):
        """MLX's rule: the same primitives, equivalent one by one, fed the same way."""
        return (
            type(other) is Compiled
            and self.input_dtypes == other.input_dtypes
            and self.outputs == other.outputs
            and len(self.tape) == len(other.tape)
            and all(
                r1 == r2 and d1 is d2 and p1.is_equivalent(p2)
                for (p1, r1, d1), (p2, r2, d2) in zip(self.tape, other.tape)
            )
        )

    def output_shapes(self, inputs):
        # MLX's: the broadcast of the inputs' shapes; mlxref also counts the
        # targets of the fused broadcasts (a chain may start with one).
        shapes = [x.shape for x in inputs]
        # (A broadcast with several inputs, from a shapeless trace, takes its
        # shape from them: they are among the inputs.)
        shapes += [p.shape for p, refs, _ in self.tape if type(p) is Broadcast and len(refs) == 1]
        nd = max((len(s) for s in shapes), default=0)
        out = [0] * nd
        for s in shapes:
            for i, n in enumerate(s):
                k = nd - len(s) + i
                out[k] = max(out[k], n)
        return [tuple(out)] * len(self.outputs)

    def output_dtypes(self, inputs):
        return [self.tape[o][2] for o in self.outputs]

    # MLX's Compiled has no rules: mx.compile calls the function itself on
    # tracers, so a transform never meets a Compiled node it made.

    def vjp(self, primals, cotangents, argnums, outputs):
        raise RuntimeError("[Compiled] Cannot vjp primitive.")

    def jvp(self, primals, tangents, argnums):
        raise RuntimeError("[Compiled] Cannot jvp primitive.")

    def vmap(self, inputs, axes):
        raise RuntimeError("[Compiled] Cannot vmap primitive.")

    # --- evaluation ------------------------------------------------------------

    def eval(self, inputs):
        if any(x.size and is_symbolic(x.data()[0]) for x in inputs):
            return self.eval_unfused(inputs)  # SymPy elements: no loop rounds them
        _, kernel = self._kernel(tuple(x.size == 1 for x in inputs))
        shape = self.output_shapes(inputs)[0]
        return eval_cpu(kernel, shape, [(x.data(), x.shape) for x in inputs])

    def eval_unfused(self, inputs):
        """The chain evaluated step by step with each primitive's own ``eval``
        (SymPy elements, and the check that the generated code is exact)."""
        outputs = make_arrays(self, inputs)  # a throwaway node: only its shape is used
        shape = outputs[0].shape
        values = list(inputs)
        for primitive, refs, dtype in self.tape:
            args = [values[r] for r in refs]
            if type(primitive) is Broadcast:
                primitive = Broadcast(shape)
            (value,) = make_arrays(primitive, args)
            elements(value)  # evaluates it
            values.append(value)
        return [values[self.n_inputs + o].data() for o in self.outputs]

    def _kernel(self, scalars):
        """``(source, kernel)`` for inputs of one element where ``scalars`` says."""
        if scalars not in self._kernels:
            steps = [self._step(primitive, refs, dtype) for primitive, refs, dtype in self.tape]
            self._kernels[scalars] = compile_kernel(self.name, self.n_inputs, steps, self.outputs,
                                                    scalars)
        return self._kernels[scalars]

    def _step(self, primitive, refs, dtype):
        """A fused step as the kernel reads it: the primitive's scalar rule
        (its ``numeric``, or ``numeric_complex`` on complex64, and the
        ``expression`` it is written as) where the step runs in the loop;
        otherwise its ``eval`` on whole lists."""
        if type(primitive) is Broadcast:
            return Step(refs, dtype, alias=True)
        rule = _scalar_rule(primitive, self._dtype_of(refs[0]))
        if rule is None:
            arg_dtypes = [self._dtype_of(r) for r in refs]
            return Step(refs, dtype, evaluate=functools.partial(
                list_step, primitive.eval, primitive.moves_elements, dtype, arg_dtypes))
        return Step(
            refs, dtype, rule=rule,
            expression=primitive.expression if rule is primitive.numeric else None,
            expression_raises=primitive.expression_raises,
            moves_elements=primitive.moves_elements)

    def _dtype_of(self, r):
        """The dtype of value ``r``: an input's or a step's."""
        if r < self.n_inputs:
            return self.input_dtypes[r]
        return self.tape[r - self.n_inputs][2]


def _scalar_rule(primitive, dtype_in):
    """The per-element rule of a fused step, or None when it runs on whole lists."""
    if not isinstance(primitive, (Unary, Binary)):
        return None
    if dtype_in is _dt.complex64:
        return primitive.numeric_complex  # None: the list step raises MLX's error
    if primitive.float32_kernel is not None and dtype_in in FLOAT32_KERNEL_DTYPES:
        return None
    return primitive.numeric


# --- the program of a compiled function --------------------------------------------------


class CompiledProgram:
    """A compiled function's whole tape as one node: mlxref's own, not MLX's.

    MLX's ``compile_replace`` rebuilds every node of the tape at each call,
    which costs C++ nanoseconds; an mlxref node costs microseconds (its
    descriptor, and evaluation's walk, memory counters and detach). So
    ``mx.compile`` writes the tape, once per cache entry, as the source of
    one Python function (mlxref/core/transforms/program.py), and a call
    builds one node with this as its primitive over the arrays the tape
    reads. ``eval`` runs that function on their element lists: each tape
    node's own ``eval`` in tape order, on ``Evaluated`` operands, its
    results stored as their dtype holds them, as evaluating the nodes one by
    one does.

    ``source`` is the generated text and ``tape`` the nodes it runs, in
    order: ``(primitive, operands, results)``, each value ``("input", i)``,
    ``("output", j)`` or ``("value", k)`` (a fused node's steps run in its
    place; ``mx.export_to_dot`` draws these nodes, as MLX draws the tape's);
    ``nodes`` their primitives. Its outputs' shapes and dtypes are the
    traced ones.

    It is not a ``Primitive``: it has no math and no rules of its own (it
    runs primitives), so the rules' checks (``mlxref check-rules``), which
    cover every primitive, have nothing to check in it; it has the
    interface a node's primitive needs (``eval``, ``output_shapes``...). Like
    ``Compiled``, it refuses the transforms: a compiled function called on
    tracers runs the function itself, so no transform meets it.
    """

    moves_elements = True  # the program stores each node's results itself
    donates = False  # its outputs are new lists
    view = False
    mlx_has_vjp = False

    def __init__(self, run, source, tape, shapes, dtypes):
        self.run, self.source, self.tape = run, source, list(tape)
        self.shapes, self.dtypes = list(shapes), list(dtypes)

    @property
    def nodes(self):
        return [primitive for primitive, _, _ in self.tape]

    name = "CompiledProgram"

    def params(self):
        return {"nodes": len(self.nodes)}

    def __repr__(self):
        return f"CompiledProgram(nodes={len(self.nodes)})"

    def output_shapes(self, inputs):
        return list(self.shapes)

    def output_dtypes(self, inputs):
        return list(self.dtypes)

    def eval(self, inputs):
        return self.run(*[x.data() for x in inputs])

    def is_equivalent(self, other):
        return other is self  # one program per cache entry

    vjp, jvp, vmap = Compiled.vjp, Compiled.jvp, Compiled.vmap  # MLX's refusals

    def mlx_state(self):
        raise ValueError("[export_function] Unable to serialize primitive CompiledProgram")


class Evaluated:
    """An evaluated operand as a primitive's ``eval`` reads an array: its
    elements (``data()``), shape and dtype, with nothing of a node (no
    descriptor, no memory counting). The program passes these between the
    nodes it runs."""

    __slots__ = ("_data", "shape", "dtype")

    def __init__(self, data, shape, dtype):
        self._data, self.shape, self.dtype = data, shape, dtype

    def data(self):
        return self._data

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return self.dtype.size

    @property
    def nbytes(self):
        return self.size * self.dtype.size
