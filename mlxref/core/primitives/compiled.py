"""``Compiled``: a chain of elementwise primitives fused into one, by ``mx.compile``.

Read alongside: mlx/compile.cpp (``Compiled``'s constructor, which names the
kernel after its tape, ``is_equivalent`` and ``output_shapes``) and
mlx/backend/common/compiled.cpp (the source of the kernel MLX generates).
Read before: mlxref/core/transforms/compile.py, which decides what is fused.

MLX writes the source of one C++ or Metal kernel that computes the whole
chain in a single loop over the elements. So does mlxref, in Python
(``Compiled.source``): one ``for`` loop over the elements in which each step
applies the fused primitive's own scalar rule (``numeric``, written inline
where the primitive gives it as an ``expression``, such as ``x0 * x1``;
``numeric_complex`` for complex64) and rounds the result as its dtype holds
it: a float32 through a one-element ``array("f")`` (storing into it is C's
float cast, which is what ``Dtype.store`` does to a whole list), any other
dtype through ``Dtype.cast``. That is what the unfused ``eval`` followed by
``Dtype.store`` does element by element, so the results are the same bits.
A step whose float32 result comes from a list kernel (``float32_kernel``),
and any other fused primitive (AsType, Select, ...), runs its own ``eval``
on whole lists between two loops. Broadcasts are not steps: every input is
read at the output's shape (an input of one element is read as a name, and
steps of such inputs are computed once, before the loop). The source names
only the fused primitives' rules, never any user text, and is the same text
for the same chain.

What the loop saves in Python is little: the graph's work per node, the
intermediate lists, and a call per element where a rule is written inline.
Every float32 step still rounds each element, which costs about what a
list pass does (benchmarks/compile_gelu.py measures it).

MLX's ``Compiled`` throws for vjp, jvp and vmap (compile steps aside when
its inputs are tracers, so the rules are never needed there). mlxref's
unfolds the chain into its primitives' nodes (``unfold``) and applies the
transform to them, so a ``Compiled`` node composes with every transform.
"""

import array as _pyarray
import functools

from .. import dtypes as _dt
from ..scalar import is_symbolic
from ..backend.cpu.copy import gather_strided, row_major_strides
from .base import Primitive, make_arrays
from .elementwise import FLOAT32_KERNEL_DTYPES, Binary, Unary
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
        self._kernels = {}
        self.source = self._kernel(tuple(n == 1 for n in input_sizes))[0]

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
    Steps with a scalar rule run in one loop over the elements: in it,
    ``x<k>`` is input k's current element and ``v<j>`` step j's, computed by
    the rule (written inline where the primitive gives its ``expression``,
    else a call of ``f<j>``) and rounded as its dtype holds it: float32
    through the one-element ``array("f")`` ``f32`` (C's float cast, what the
    dtype's store does to a list), other dtypes by ``Dtype.cast`` (``c<j>``).
    A step whose operands all have one element is computed once, before the
    loop. A step without a scalar rule ends the loop and runs its
    primitive's ``eval`` on whole lists (``s<j>``); the next loop walks its
    list (``w<j>`` is its current element). The values read after their
    loop are gathered into lists ``t<j>``, let go (``del``) after their last
    reader.
    """
    n_inputs, tape = compiled.n_inputs, compiled.tape

    def root(r):  # through the broadcasts, which alias their input
        while r >= n_inputs and type(tape[r - n_inputs][0]) is Broadcast:
            r = tape[r - n_inputs][1][0]
        return r

    # Each step: "skip" (a broadcast), "list" (eval on lists), "once" (one
    # element, before its loop) or "loop".
    kinds, once = [], {r for r in range(n_inputs) if scalars[r]}
    for primitive, refs, _ in tape:
        j = len(kinds)
        if type(primitive) is Broadcast:
            kinds.append("skip")
        elif _scalar_rule(primitive, _dtype_of(compiled, refs[0])) is None:
            kinds.append("list")
        elif all(root(r) in once for r in refs):
            kinds.append("once")
            once.add(n_inputs + j)
        else:
            kinds.append("loop")
    segments = []  # ["loop", [steps]] or ["list", [step]]
    for j, kind in enumerate(kinds):
        if kind == "skip":
            continue
        if kind in ("loop", "once") and segments and segments[-1][0] == "loop":
            segments[-1][1].append(j)
        else:
            segments.append(["loop" if kind != "list" else "list", [j]])
    seg_of = {j: k for k, (_, steps) in enumerate(segments) for j in steps}
    outputs = {root(n_inputs + o) for o in compiled.outputs}
    # A loop value outside its loop is a list (once-values stay names).
    read_later = set(outputs)
    last_reader = {}  # a list -> the segment that reads it last
    for j, kind in enumerate(kinds):
        if kind == "skip":
            continue
        for r in map(root, tape[j][1]):
            if r >= n_inputs and seg_of[r - n_inputs] != seg_of[j]:
                read_later.add(r)
            last_reader[r] = max(last_reader.get(r, -1), seg_of[j])

    def list_name(r):
        r = root(r)
        if r in once:
            return f"[{_value_name(r, n_inputs)}] * n"
        return f"in{r}" if r < n_inputs else f"t{r - n_inputs}"

    namespace = {}
    lines = [f"def kernel(n, {', '.join(f'in{k}' for k in range(n_inputs))}):",
             f'    """{compiled.name}: {len(tape)} steps."""']
    if any(dtype is _dt.float32 and not primitive.moves_elements and kinds[j] in ("loop", "once")
           for j, (primitive, _, dtype) in enumerate(tape)):
        namespace["array"] = _pyarray.array
        lines.append('    f32 = array("f", [0.0])  # a float32 slot: storing rounds, as C does')
    for k, (kind, steps) in enumerate(segments):
        if kind == "list":
            (j,) = steps
            primitive, refs, dtype = tape[j]
            namespace[f"s{j}"] = functools.partial(
                _list_step, primitive, dtype, [_dtype_of(compiled, r) for r in refs])
            lines.append(f"    t{j} = s{j}({', '.join(list_name(r) for r in refs)})")
        else:
            before = [j for j in steps if kinds[j] == "once"]
            inside = [j for j in steps if kinds[j] == "loop"]
            for j in before:
                lines += _step_lines(compiled, j, root, namespace, "    ")
            kept = [j for j in inside if n_inputs + j in read_later]
            for j in kept:
                lines.append(f"    t{j} = []")
                lines.append(f"    a{j} = t{j}.append")
            walked = list(dict.fromkeys(
                r for j in inside for r in map(root, tape[j][1])
                if r not in once and not (r >= n_inputs and seg_of[r - n_inputs] == k)))
            if inside:
                names = ", ".join(_value_name(r, n_inputs, walked=True) for r in walked)
                lists = ", ".join(list_name(r) for r in walked)
                lines.append(f"    for {names} in {lists}:" if len(walked) == 1
                             else f"    for {names} in zip({lists}):")
                for j in inside:
                    lines += _step_lines(compiled, j, root, namespace, "        ", walked)
                for j in kept:
                    lines.append(f"        a{j}(v{j})")
        dead = [f"t{r - n_inputs}" for r, last in sorted(last_reader.items())
                if last == k and r >= n_inputs and r not in outputs and r not in once
                and (kinds[r - n_inputs] == "list" or r in read_later)]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    results = ", ".join(list_name(n_inputs + o) for o in compiled.outputs)
    lines.append(f"    return [{results}]")
    return "\n".join(lines) + "\n", namespace


def _value_name(r, n_inputs, walked=False):
    """The name of value ``r``'s element: ``in<k>`` (an input of one element),
    ``x<k>`` (input k walked by a loop), ``v<j>`` (step j, in its loop or
    computed once), ``w<j>`` (step j's list, walked by a later loop)."""
    if r < n_inputs:
        return f"x{r}" if walked else f"in{r}"
    return f"w{r - n_inputs}" if walked else f"v{r - n_inputs}"


def _step_lines(compiled, j, root, namespace, indent, walked=()):
    """Step ``j`` on the current elements: ``v<j> = ...``, rounded to its dtype."""
    n_inputs = compiled.n_inputs
    primitive, refs, dtype = compiled.tape[j]
    rule = _scalar_rule(primitive, _dtype_of(compiled, refs[0]))
    namespace[f"f{j}"] = rule
    args = [_value_name(root(r), n_inputs, walked=root(r) in walked) for r in refs]
    call = f"f{j}({', '.join(args)})"
    inline = primitive.expression if rule is primitive.numeric else None
    value = call if inline is None else inline.format(*args)
    if primitive.moves_elements:
        target, rounding = f"v{j}", []
    elif dtype is _dt.float32:
        target, rounding = "f32[0]", [f"v{j} = f32[0]"]
    else:
        namespace[f"c{j}"] = dtype.cast
        target, rounding = f"v{j}", [f"v{j} = c{j}(v{j})"]
    if inline is not None and primitive.expression_raises:
        lines = ["try:", f"    {target} = {value}",
                 "except ZeroDivisionError:  # the rule's IEEE result instead",
                 f"    {target} = {call}"]
    else:
        lines = [f"{target} = {value}"]
    return [indent + line for line in lines + rounding]


def _dtype_of(compiled, r):
    """The dtype of value ``r`` of ``compiled``: an input's or a step's."""
    if r < compiled.n_inputs:
        return compiled.input_dtypes[r]
    return compiled.tape[r - compiled.n_inputs][2]
