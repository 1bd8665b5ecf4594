"""``Compiled``: a chain of elementwise primitives fused into one, by ``mx.compile``.

Read alongside: mlx/compile.cpp (``Compiled``'s constructor, which names the
kernel after its tape, ``is_equivalent`` and ``output_shapes``) and
mlx/backend/common/compiled.cpp (the source of the kernel MLX generates).
Read before: mlxref/core/transforms/compile.py, which decides what is fused.

MLX writes the source of one C++ or Metal kernel that computes the whole
chain in a single loop over the elements. mlxref writes the source of one
Python function (``Compiled.source``) that computes the chain step by step,
one pass over the elements per step: a list comprehension of the fused
primitive's own scalar rule (``numeric``, written inline where the primitive
gives it as an ``expression``, such as ``x0 * x1``; ``numeric_complex`` for
complex64), whose list the dtype's store rounds in C (``Dtype.store``), as
the unfused ``eval`` followed by ``Dtype.store`` does, so the results are the
same bits. A step whose float32 result comes from a list kernel
(``float32_kernel``), and any other fused primitive (AsType, Select, ...),
runs its own ``eval`` on the lists. Broadcasts are not steps: every input is
read at the output's shape (an input of one element is read once, as a
name). Each step's list is let go after its last reader. The source names
only the fused primitives' rules, never any user text, and is the same text
for the same chain.

Why passes rather than one loop: a float32 result must be rounded after
every step, and rounding floats one at a time (``Dtype.cast``) costs over
ten times what rounding them as a list does (``struct`` packs a whole list
at once), so one loop rounding per element ran slower than the unfused
ops. What fusion saves in Python is the graph's work per node and a call
per element where a rule is written inline: benchmarks/compile_gelu.py
measures how little that is next to the passes themselves.

MLX's ``Compiled`` throws for vjp, jvp and vmap (compile steps aside when
its inputs are tracers, so the rules are never needed there). mlxref's
unfolds the chain into its primitives' nodes (``unfold``) and applies the
transform to them, so a ``Compiled`` node composes with every transform.
"""

import functools

from .. import dtypes as _dt
from ..scalar import is_symbolic
from .base import Primitive, gather_strided, make_arrays, row_major_strides
from .elementwise import FLOAT32_KERNEL_DTYPES, Binary, Unary
from .shape import Broadcast


class Compiled(Primitive):
    """The fused steps: ``tape`` is a list of ``(primitive, refs, dtype)``, where
    a ref below ``n_inputs`` (the number of ``input_dtypes``) is an input of
    the node and a ref ``n_inputs + j`` is step ``j``'s result; ``outputs``
    are the steps whose results are the node's outputs, in order;
    ``input_sizes`` say which inputs hold one element (read once)."""

    moves_elements = True  # each step rounds its own results in its pass

    def __init__(self, tape, input_dtypes, outputs, input_sizes):
        self.tape = list(tape)
        self.input_dtypes = list(input_dtypes)
        self.n_inputs = len(self.input_dtypes)
        self.outputs = list(outputs)
        self._kernels = {}
        self.source = self._kernel(tuple(n == 1 for n in input_sizes))[0]

    @property
    def name(self):
        # MLX's Compiled::name(): "Compiled" then the fused primitives' names.
        return "Compiled" + "".join(p.name for p, _, _ in self.tape)

    def params(self):
        return {}

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
        shapes += [p.shape for p, _, _ in self.tape if type(p) is Broadcast]
        nd = max((len(s) for s in shapes), default=0)
        out = [0] * nd
        for s in shapes:
            for i, n in enumerate(s):
                k = nd - len(s) + i
                out[k] = max(out[k], n)
        return [tuple(out)] * len(self.outputs)

    def output_dtypes(self, inputs):
        return [self.tape[o][2] for o in self.outputs]

    # --- evaluation ------------------------------------------------------------

    def eval(self, inputs):
        shape = self.output_shapes(inputs)[0]
        size = 1
        for n in shape:
            size *= n
        datas = []
        for x in inputs:
            data = x.data()
            if x.size == 1:
                datas.append(data[0])
            elif x.shape == shape:
                datas.append(data)
            else:  # broadcast to the output's shape (stride 0 on new or size-1 axes)
                strides = [0] * (len(shape) - x.ndim) + [
                    0 if n == 1 else s for n, s in zip(x.shape, row_major_strides(x.shape))
                ]
                datas.append(gather_strided(data, shape, strides))
        if any(d and is_symbolic(d[0] if isinstance(d, list) else d) for d in datas):
            return self.eval_unfused(inputs)
        _, function = self._kernel(tuple(x.size == 1 for x in inputs))
        return function(size, *datas)

    def eval_unfused(self, inputs):
        """The chain evaluated step by step with each primitive's own ``eval``
        (SymPy elements, and the check that the generated code is exact)."""
        from .. import graph

        outputs = make_arrays(self, inputs)  # a throwaway node: only its shape is used
        shape = outputs[0].shape
        values = list(inputs)
        for primitive, refs, dtype in self.tape:
            args = [values[r] for r in refs]
            if type(primitive) is Broadcast:
                primitive = Broadcast(shape)
            (value,) = make_arrays(primitive, args)
            graph.eval_arrays([value])
            values.append(value)
        return [values[self.n_inputs + o].data() for o in self.outputs]

    def _kernel(self, scalars):
        """``(source, function)`` for inputs of one element where ``scalars`` says."""
        if scalars not in self._kernels:
            source, namespace = _generate(self, scalars)
            code = compile(source, f"<mlxref {self.name}>", "exec")
            exec(code, namespace)  # noqa: S102 (mlxref's own generated text)
            self._kernels[scalars] = (source, namespace["kernel"])
        return self._kernels[scalars]

    # --- transforms, by unfolding ------------------------------------------------

    def unfold(self, inputs):
        """The fused chain rebuilt on ``inputs`` as nodes of its own primitives."""
        shape = self.output_shapes(inputs)[0]
        values = list(inputs)
        for primitive, refs, _ in self.tape:
            if type(primitive) is Broadcast:
                primitive = Broadcast(shape)
            (value,) = make_arrays(primitive, [values[r] for r in refs])
            values.append(value)
        return [values[self.n_inputs + o] for o in self.outputs]

    def vjp(self, primals, cotangents, argnums, outputs):
        from ..transforms.vjp import vjp

        def chain(*xs):
            return self.unfold([xs[argnums.index(i)] if i in argnums else p
                                for i, p in enumerate(primals)])

        _, vjps = vjp(chain, [primals[i] for i in argnums], cotangents)
        return vjps

    def jvp(self, primals, tangents, argnums):
        from ..transforms.jvp import jvp

        def chain(*xs):
            return self.unfold([xs[argnums.index(i)] if i in argnums else p
                                for i, p in enumerate(primals)])

        _, jvps = jvp(chain, [primals[i] for i in argnums], tangents)
        return jvps

    def vmap(self, inputs, axes):
        from ..transforms.vmap import vmap

        outs = vmap(lambda *xs: self.unfold(list(xs)), in_axes=tuple(axes))(*inputs)
        return list(outs), [0] * len(outs)


# --- the generated source ----------------------------------------------------------------


def _scalar_rule(primitive, dtype_in):
    """The per-element rule of a fused step, or None when it runs on whole lists."""
    if not isinstance(primitive, (Unary, Binary)):
        return None
    if dtype_in is _dt.complex64:
        return primitive.numeric_complex  # None: the list step raises MLX's error
    if primitive.float32_kernel is not None and dtype_in in FLOAT32_KERNEL_DTYPES:
        return None
    return primitive.numeric


def _list_step(primitive, dtype, arg_dtypes, *datas):
    """One fused step on whole lists, through the primitive's own ``eval``."""
    args = [_Elements(d, t) for d, t in zip(datas, arg_dtypes)]
    (data,) = primitive.eval(args)
    return data if primitive.moves_elements else dtype.store(data)


class _Elements:
    """An evaluated operand as ``eval`` reads it: elements and a dtype."""

    __slots__ = ("_data", "dtype")

    def __init__(self, data, dtype):
        self._data, self.dtype = data, dtype

    def data(self):
        return self._data

    @property
    def size(self):
        return len(self._data)


def _generate(compiled, scalars):
    """The source of ``kernel(n, *inputs)`` and the namespace it runs in.

    ``in<k>`` is input k: a list, or its one element when ``scalars[k]``.
    Each step j makes ``t<j>``, the list of its results, in one pass over
    its operands' lists, whose current elements are ``x<k>`` (input k) and
    ``v<i>`` (step i): a list comprehension of the step's rule (inlined as
    ``expression`` where the primitive gives one, else a call of ``f<j>``),
    which the dtype's store (``r<j>``) rounds as a whole list, in C. A step
    without a scalar rule runs its primitive's ``eval`` on the lists
    (``s<j>``). A step's list is let go (``del``) after its last reader.
    """
    n_inputs, tape = compiled.n_inputs, compiled.tape

    def root(r):  # through the broadcasts, which alias their input
        while r >= n_inputs and type(tape[r - n_inputs][0]) is Broadcast:
            r = tape[r - n_inputs][1][0]
        return r

    def list_name(r):
        r = root(r)
        if r < n_inputs:
            return f"[in{r}] * n" if scalars[r] else f"in{r}"
        return f"t{r - n_inputs}"

    def element_name(r):
        r = root(r)
        if r < n_inputs:
            return f"in{r}" if scalars[r] else f"x{r}"
        return f"v{r - n_inputs}"

    last_reader = {}  # a step's value -> the last step that reads it
    for j, (primitive, refs, _) in enumerate(tape):
        if type(primitive) is not Broadcast:
            for r in refs:
                last_reader[root(r)] = j
    outputs = {root(n_inputs + o) for o in compiled.outputs}

    namespace = {}
    lines = [f"def kernel(n, {', '.join(f'in{k}' for k in range(n_inputs))}):",
             f'    """{compiled.name}: {len(tape)} steps."""']
    for j, (primitive, refs, dtype) in enumerate(tape):
        if type(primitive) is Broadcast:
            continue
        dtype_in = _dtype_of(compiled, refs[0])
        rule = _scalar_rule(primitive, dtype_in)
        if rule is None:
            namespace[f"s{j}"] = functools.partial(
                _list_step, primitive, dtype, [_dtype_of(compiled, r) for r in refs])
            lines.append(f"    t{j} = s{j}({', '.join(list_name(r) for r in refs)})")
        else:
            namespace[f"f{j}"] = rule
            if not primitive.moves_elements:
                namespace[f"r{j}"] = dtype.store
            args = [element_name(r) for r in refs]
            walked = list(dict.fromkeys(root(r) for r in refs
                                        if not (root(r) < n_inputs and scalars[root(r)])))
            call = f"f{j}({', '.join(args)})"
            inline = primitive.expression if rule is primitive.numeric else None
            if inline is None:
                lines.append(f"    t{j} = {_pass(primitive, j, call, walked, element_name, list_name)}")
            elif primitive.expression_raises:
                lines += [
                    "    try:",
                    f"        t{j} = "
                    f"{_pass(primitive, j, inline.format(*args), walked, element_name, list_name)}",
                    "    except ZeroDivisionError:  # the rule's IEEE result instead",
                    f"        t{j} = {_pass(primitive, j, call, walked, element_name, list_name)}",
                ]
            else:
                lines.append(
                    f"    t{j} = {_pass(primitive, j, inline.format(*args), walked, element_name, list_name)}")
        dead = [f"t{r - n_inputs}" for r, last in sorted(last_reader.items())
                if last == j and r >= n_inputs and r not in outputs]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    results = ", ".join(list_name(n_inputs + o) for o in compiled.outputs)
    lines.append(f"    return [{results}]")
    return "\n".join(lines) + "\n", namespace


def _pass(primitive, j, expression, walked, element_name, list_name):
    """One step's pass: ``expression`` over the ``walked`` lists, stored as its dtype holds it."""
    if not walked:  # every operand is one element: one result, repeated
        comprehension = f"[{expression}] * n"
    elif len(walked) == 1:
        comprehension = f"[{expression} for {element_name(walked[0])} in {list_name(walked[0])}]"
    else:
        targets = ", ".join(element_name(r) for r in walked)
        lists = ", ".join(list_name(r) for r in walked)
        comprehension = f"[{expression} for {targets} in zip({lists})]"
    return comprehension if primitive.moves_elements else f"r{j}({comprehension})"


def _dtype_of(compiled, r):
    """The dtype of value ``r`` of ``compiled``: an input's or a step's."""
    if r < compiled.n_inputs:
        return compiled.input_dtypes[r]
    return compiled.tape[r - compiled.n_inputs][2]
