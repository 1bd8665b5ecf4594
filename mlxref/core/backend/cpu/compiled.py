"""The fused loop of a ``Compiled`` node: its Python source, written and run.

Read alongside: mlx/backend/cpu/compiled.cpp (``build_kernel``, which writes
the C++ source of the loop, ``compile``, which builds it once per kernel
name, and ``Compiled::eval_cpu``, which runs it on the inputs' buffers) and
mlx/backend/common/compiled.cpp (the inputs read at the output's shape:
``compiled_collapse_contiguous_dims``; scalars read once).

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

The primitive (mlxref/core/primitives/compiled.py) hands each step over as
a ``Step``: its rules as plain functions and text, so this module needs no
primitive. Read next: mlxref/core/transforms/compile.py (what is fused).
"""

import array as _pyarray

from ... import dtypes as _dt
from .copy import gather_strided, row_major_strides


class Step:
    """One fused step, as the loop reads it.

    ``refs``: its operands (a ref below the number of inputs is an input, a
    ref ``n_inputs + j`` step j's result); ``dtype``: the dtype its results
    are rounded to. A broadcast (``alias``) is no step: it reads as its
    input. A step with a ``rule`` (the per-element function) runs in a
    loop, written inline where ``expression`` (text of ``{0}``, ``{1}``) is
    given; ``expression_raises``: where the text raises ZeroDivisionError,
    the rule gives the result. A step without one runs ``evaluate`` (lists
    in, the stored list out) between two loops. ``moves_elements``: its
    results need no rounding.
    """

    __slots__ = ("refs", "dtype", "alias", "rule", "expression", "expression_raises",
                 "moves_elements", "evaluate")

    def __init__(self, refs, dtype, alias=False, rule=None, expression=None,
                 expression_raises=False, moves_elements=False, evaluate=None):
        self.refs, self.dtype, self.alias = refs, dtype, alias
        self.rule, self.expression, self.expression_raises = rule, expression, expression_raises
        self.moves_elements, self.evaluate = moves_elements, evaluate


def compile_kernel(name, n_inputs, steps, outputs, scalars):
    """``(source, kernel)`` for inputs of one element where ``scalars`` says:
    the generated text (``build_kernel``) and the function it defines."""
    source, namespace = build_kernel(name, n_inputs, steps, outputs, scalars)
    code = compile(source, f"<mlxref {name}>", "exec")
    exec(code, namespace)  # noqa: S102 (mlxref's own generated text)
    return source, namespace["kernel"]


def eval_cpu(kernel, shape, inputs):
    """The kernel run on ``inputs``, ``(elements, shape)`` pairs, read at the
    output's ``shape``: one list per output."""
    size = 1
    for n in shape:
        size *= n
    datas = []
    for data, x_shape in inputs:
        if len(data) == 1:
            datas.append(data[0])
        elif x_shape == shape:
            datas.append(data)
        else:  # broadcast to the output's shape (stride 0 on new or size-1 axes)
            strides = [0] * (len(shape) - len(x_shape)) + [
                0 if n == 1 else s for n, s in zip(x_shape, row_major_strides(x_shape))
            ]
            datas.append(gather_strided(data, shape, strides))
    return kernel(size, *datas)


def list_step(evaluate, moves_elements, dtype, arg_dtypes, *datas):
    """One fused step on whole lists: the primitive's ``eval`` (``evaluate``)
    on its operands' elements of ``arg_dtypes``, stored as ``dtype`` holds
    them unless the primitive ``moves_elements``."""
    (data,) = evaluate([Elements(d, t) for d, t in zip(datas, arg_dtypes)])
    return data if moves_elements else dtype.store(data)


class Elements:
    """An evaluated operand as ``eval`` reads it: elements and a dtype."""

    __slots__ = ("_data", "dtype")

    def __init__(self, data, dtype):
        self._data, self.dtype = data, dtype

    def data(self):
        return self._data

    @property
    def size(self):
        return len(self._data)


# --- the generated source ----------------------------------------------------------------


def build_kernel(name, n_inputs, steps, outputs, scalars):
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

    def root(r):  # through the broadcasts, which alias their input
        while r >= n_inputs and steps[r - n_inputs].alias:
            r = steps[r - n_inputs].refs[0]
        return r

    # Each step: "skip" (a broadcast), "list" (eval on lists), "once" (one
    # element, before its loop) or "loop".
    kinds, once = [], {r for r in range(n_inputs) if scalars[r]}
    for step in steps:
        j = len(kinds)
        if step.alias:
            kinds.append("skip")
        elif step.rule is None:
            kinds.append("list")
        elif all(root(r) in once for r in step.refs):
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
    seg_of = {j: k for k, (_, members) in enumerate(segments) for j in members}
    results = {root(n_inputs + o) for o in outputs}
    # A loop value outside its loop is a list (once-values stay names).
    read_later = set(results)
    last_reader = {}  # a list -> the segment that reads it last
    for j, kind in enumerate(kinds):
        if kind == "skip":
            continue
        for r in map(root, steps[j].refs):
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
             f'    """{name}: {len(steps)} steps."""']
    if any(step.dtype is _dt.float32 and not step.moves_elements and kinds[j] in ("loop", "once")
           for j, step in enumerate(steps)):
        namespace["array"] = _pyarray.array
        lines.append('    f32 = array("f", [0.0])  # a float32 slot: storing rounds, as C does')
    for k, (kind, members) in enumerate(segments):
        if kind == "list":
            (j,) = members
            namespace[f"s{j}"] = steps[j].evaluate
            lines.append(f"    t{j} = s{j}({', '.join(list_name(r) for r in steps[j].refs)})")
        else:
            before = [j for j in members if kinds[j] == "once"]
            inside = [j for j in members if kinds[j] == "loop"]
            for j in before:
                lines += _step_lines(steps, n_inputs, j, root, namespace, "    ")
            kept = [j for j in inside if n_inputs + j in read_later]
            for j in kept:
                lines.append(f"    t{j} = []")
                lines.append(f"    a{j} = t{j}.append")
            walked = list(dict.fromkeys(
                r for j in inside for r in map(root, steps[j].refs)
                if r not in once and not (r >= n_inputs and seg_of[r - n_inputs] == k)))
            if inside:
                names = ", ".join(_value_name(r, n_inputs, walked=True) for r in walked)
                lists = ", ".join(list_name(r) for r in walked)
                lines.append(f"    for {names} in {lists}:" if len(walked) == 1
                             else f"    for {names} in zip({lists}):")
                for j in inside:
                    lines += _step_lines(steps, n_inputs, j, root, namespace, "        ", walked)
                for j in kept:
                    lines.append(f"        a{j}(v{j})")
        dead = [f"t{r - n_inputs}" for r, last in sorted(last_reader.items())
                if last == k and r >= n_inputs and r not in results and r not in once
                and (kinds[r - n_inputs] == "list" or r in read_later)]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    returned = ", ".join(list_name(n_inputs + o) for o in outputs)
    lines.append(f"    return [{returned}]")
    return "\n".join(lines) + "\n", namespace


def _value_name(r, n_inputs, walked=False):
    """The name of value ``r``'s element: ``in<k>`` (an input of one element),
    ``x<k>`` (input k walked by a loop), ``v<j>`` (step j, in its loop or
    computed once), ``w<j>`` (step j's list, walked by a later loop)."""
    if r < n_inputs:
        return f"x{r}" if walked else f"in{r}"
    return f"w{r - n_inputs}" if walked else f"v{r - n_inputs}"


def _step_lines(steps, n_inputs, j, root, namespace, indent, walked=()):
    """Step ``j`` on the current elements: ``v<j> = ...``, rounded to its dtype."""
    step = steps[j]
    namespace[f"f{j}"] = step.rule
    args = [_value_name(root(r), n_inputs, walked=root(r) in walked) for r in step.refs]
    call = f"f{j}({', '.join(args)})"
    value = call if step.expression is None else step.expression.format(*args)
    if step.moves_elements:
        target, rounding = f"v{j}", []
    elif step.dtype is _dt.float32:
        target, rounding = "f32[0]", [f"v{j} = f32[0]"]
    else:
        namespace[f"c{j}"] = step.dtype.cast
        target, rounding = f"v{j}", [f"v{j} = c{j}(v{j})"]
    if step.expression is not None and step.expression_raises:
        lines = ["try:", f"    {target} = {value}",
                 "except ZeroDivisionError:  # the rule's IEEE result instead",
                 f"    {target} = {call}"]
    else:
        lines = [f"{target} = {value}"]
    return [indent + line for line in lines + rounding]
