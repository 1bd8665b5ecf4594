"""The program of a compiled function: its tape written as one Python function.

Read alongside: mlx/compile.cpp (``compile_replace``, which this stands in
for at a call) and mlxref/core/transforms/compile.py (steps 1 to 5 make the
tape this writes out).

MLX's compiled function, called, rebuilds its tape's nodes on the real
inputs (``compile_replace``), and ``eval`` then runs them: in C++ a node
costs nanoseconds, so what a compiled function costs is its kernels. An
mlxref node costs microseconds (a descriptor and its handles, then the
evaluation's walk, memory counters, donation and detach), which on a small
graph is most of the time. So, once per cache entry, ``compile_program``
writes the tape as the source of one function over element lists
(``CompiledProgram.source``); a call builds one ``CompiledProgram`` node
over the arrays the tape reads, so the call stays lazy, and evaluating any
of its outputs runs the function: no array nodes, no promotion and no
bookkeeping between the kernels. ``mx.compile(mx.grad(lambda x: mx.sum(mx.sin(x) * 2)))``
on a vector of 3 runs (``CompiledProgram.source``)::

    def program(in0, in1, in2):
        x0 = Evaluated(in0, (3,), float32)
        x1 = Evaluated(in1, (), float32)  # a constant
        x2 = Evaluated(in2, (), float32)  # a constant
        v0 = Evaluated(p0.eval([x1])[0], (1,), float32)  # ExpandDims
        # CompiledBroadcastBroadcastMultiplyCosMultiply: its steps, one pass over whole lists each
        v1 = Evaluated(p1.eval([v0])[0], (3,), float32)  # Broadcast
        del v0
        ...
        v5 = Evaluated(float32.store(p5.eval([v3, v4])[0]), (3,), float32)  # Multiply
        del v3, v4
        return [v5.data()]

The function runs each node's own ``eval`` in tape order, on ``Evaluated``
operands (elements, and the shape and dtype known at trace time), and
stores its results as evaluation does (``Dtype.store``, unless the
primitive ``moves_elements``): the same kernels on the same lists, so the
same bits, with less Python around them than evaluating the nodes one by
one. A fused node (``Compiled``) runs its steps one after the other, each
its primitive's ``eval`` on whole lists (as ``Compiled.eval_unfused`` does,
without its nodes): in Python a pass in C per step costs less than the
fused loop's Python per element, and each step rounds each element either
way, so the bits are the loop's. A value is let go (``del``) after its last
reader. The text names primitives, shapes and dtypes, never user text, and
is the same for the same tape.

What stays nodes, replayed by ``compile_replace`` as before:

- an entry whose tape (but for the views below) has fewer than two nodes
  (nothing to save), and every shapeless entry, whose nodes read their
  shapes from the inputs again at each call;
- the views that end the tape (a transpose, a broadcast or a slice whose
  result is an output, or is read only by such views): MLX's view shares
  its input's buffer, and the memory counters count it so
  (``Primitive.view``) only for a node of its own.

What the one node changes: the program's intermediates are its own lists,
never counted by the memory counters (as a fused kernel's temporaries are
not), so the peak while it runs counts its inputs and outputs only; its
outputs are counted when it is evaluated, as any node's. A kernel's error
(a singular matrix's inverse) is raised when the node is evaluated, with the
message the tape's node gives, and leaves every output unevaluated.
Read next: mlxref/core/primitives/compiled.py (``CompiledProgram``, ``Evaluated``).
"""

from ..primitives.compiled import Compiled, CompiledProgram, Evaluated

MIN_NODES = 2  # a tape of one node is replayed as that node


class ProgramNode:
    """The program as a node of the tape: ``primitive`` (its
    ``CompiledProgram``) reads ``inputs`` (the entry's inputs it uses, then
    its constants: TapeValues) and gives ``outputs`` (TapeValues), as a
    TapeNode does, so ``compile_replace`` builds it as it builds those."""

    __slots__ = ("primitive", "inputs", "outputs")

    def __init__(self, primitive, inputs, outputs):
        self.primitive, self.inputs, self.outputs = primitive, inputs, outputs


def compile_program(entry):
    """The nodes a call of a traced (simplified, fused) cache entry builds in
    place of its tape's: its ``ProgramNode``, then the views that end the
    tape; or None where the tape stays nodes (see the module's docstring)."""
    if entry.shapeless:
        return None
    tail = _tail_views(entry)
    body = [node for node in entry.tape if id(node) not in tail]
    if len(body) < MIN_NODES:
        return None
    computed = {id(v) for node in body for v in node.outputs}
    inputs = sorted({id(x): x for node in body for x in node.inputs
                     if x.index is not None}.values(), key=lambda v: v.index)
    inputs += list({id(x): x for node in body for x in node.inputs
                    if x.array is not None}.values())
    wanted = list(entry.outputs) + [x for node in entry.tape if id(node) in tail
                                    for x in node.inputs]
    outputs = list({id(v): v for v in wanted if id(v) in computed}.values())
    run, source = _write(body, inputs, outputs)
    primitive = CompiledProgram(run, source, _tape(body, inputs, outputs),
                                [v.shape for v in outputs],
                                [v.dtype for v in outputs])
    return [ProgramNode(primitive, inputs, outputs)] + [node for node in entry.tape
                                                        if id(node) in tail]


def _tape(body, inputs, outputs):
    """The body's nodes as ``CompiledProgram.tape`` has them: ``(primitive,
    operands, results)``, each value a reference ``("input", i)`` (the
    program's i-th input), ``("output", j)`` or ``("value", k)`` (one of its
    own, numbered in the order they are made)."""
    refs = {id(v): ("input", i) for i, v in enumerate(inputs)}
    refs.update((id(v), ("output", j)) for j, v in enumerate(outputs))
    own = (v for node in body for v in node.outputs if id(v) not in refs)
    refs.update((id(v), ("value", k)) for k, v in enumerate(own))
    return [(node.primitive, [refs[id(v)] for v in node.inputs],
             [refs[id(v)] for v in node.outputs]) for node in body]


def _tail_views(entry):
    """ids of the view nodes whose outputs (each an output of the entry, or
    read) are read only by such nodes (walking back from the end of the tape)."""
    readers = {}
    for node in entry.tape:
        for x in node.inputs:
            readers.setdefault(id(x), []).append(node)
    tail = set()
    for node in reversed(entry.tape):
        if node.primitive.view and all(id(r) in tail for v in node.outputs
                                       for r in readers.get(id(v), ())):
            tail.add(id(node))
    return tail


# --- the source --------------------------------------------------------------------------


def _steps(body):
    """The body's nodes as the program runs them: ``(primitive, operands,
    results, fused)``, operands and results TapeValues (or, inside a fused
    node, ``_StepValue``s); a fused node's steps in its place, ``fused``
    naming it (None for the other nodes)."""
    steps = []
    for node in body:
        p = node.primitive
        if type(p) is not Compiled:
            steps.append((p, node.inputs, node.outputs, None))
            continue
        values = list(node.inputs)
        output_of = dict(zip(p.outputs, node.outputs))
        for j, (step, refs, dtype) in enumerate(p.tape):
            args = [values[r] for r in refs]
            out = output_of.get(j)
            if out is None:
                (shape,) = step.output_shapes([Evaluated(None, x.shape, x.dtype) for x in args])
                out = _StepValue(shape, dtype)
            values.append(out)
            steps.append((step, args, [out], node))
    return steps


class _StepValue:
    """A value inside a fused node: its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _dtype_name(dtype):
    return "bool_" if dtype.name == "bool" else dtype.name


def _write(body, inputs, outputs):
    """``(function, source)`` of the program."""
    steps = _steps(body)
    names = {id(v): f"x{k}" for k, v in enumerate(inputs)}
    namespace = {"Evaluated": Evaluated}
    lines = [f"def program({', '.join(f'in{k}' for k in range(len(inputs)))}):"]
    for k, v in enumerate(inputs):
        dtype = _dtype_name(v.dtype)
        namespace[dtype] = v.dtype
        note = "  # a constant" if v.array is not None else ""
        lines.append(f"    x{k} = Evaluated(in{k}, {v.shape!r}, {dtype}){note}")
    last = {}  # id of a value -> the last step that reads it
    for i, (_, args, _, _) in enumerate(steps):
        for x in args:
            last[id(x)] = i
    kept = {id(v) for v in outputs}
    group = None
    for i, (primitive, args, results, fused) in enumerate(steps):
        namespace[f"p{i}"] = primitive
        if fused is not None and fused is not group:
            lines.append(f"    # {fused.primitive.name}: its steps, one pass over whole lists each")
        group = fused
        call = f"p{i}.eval([{', '.join(names[id(x)] for x in args)}])"
        comment = f"  # {primitive.name}"
        if len(results) > 1:
            lines.append(f"    r = {call}{comment}")
        for k, v in enumerate(results):
            names[id(v)] = f"v{len(names) - len(inputs)}"
            dtype = _dtype_name(v.dtype)
            namespace[dtype] = v.dtype
            data = f"r[{k}]" if len(results) > 1 else f"{call}[0]"
            if not primitive.moves_elements:
                data = f"{dtype}.store({data})"
            lines.append(f"    {names[id(v)]} = Evaluated({data}, {v.shape!r}, {dtype})"
                         + (comment if len(results) == 1 else ""))
        dead = [names[id(x)] for x in dict.fromkeys(args)
                if last[id(x)] == i and id(x) not in kept and names[id(x)][0] == "v"]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    lines.append(f"    return [{', '.join(names[id(v)] + '.data()' for v in outputs)}]")
    source = "\n".join(lines) + "\n"
    code = compile(source, "<mlxref compiled program>", "exec")
    exec(code, namespace)  # noqa: S102 (mlxref's own generated text)
    return namespace["program"], source
