"""A compiled function's program (mlxref/core/transforms/program.py): one
node per call that runs the tape as generated Python.

Every program of ``PROGRAMS`` runs compiled (its trace, then twice from the
cache) and uncompiled, and the results must be the same bits (``tolist``,
compared by ``repr``: -0.0 and nan included); where real MLX is installed
it is the oracle, exactly where mlxref's kernels are MLX's to the bit and to
a float32 tolerance where they round differently (matmul's sums)."""

import importlib
import math

import pytest

import mlxref.core as mx
from mlxref.core.primitives.compiled import Compiled, CompiledProgram
from mlxref.viz.record import collect
from support import needs_mlx, real_mx

compile_module = importlib.import_module("mlxref.core.transforms.compile")


# --- the programs, written once for either array module ---------------------------------


def mlp_loss(m, params, x, y):
    h = m.maximum(x @ params["W1"] + params["b1"], 0)
    d = h @ params["W2"] + params["b2"] - y
    return m.mean(d * d)


def mlp_step(m):
    return m.value_and_grad(lambda p, x, y: mlp_loss(m, p, x, y))


def mlp_args(m):
    w1 = [[0.5, -0.25, 0.125, 1.0], [-0.75, 0.3, 0.6, -0.2]]
    return ({"W1": m.array(w1), "b1": m.array([0.1, -0.1, 0.0, 0.2]),
             "W2": m.array([[0.3], [-0.6], [0.9], [0.05]]), "b2": m.array([0.01])},
            m.array([[0.2, -0.4], [1.0, 0.5], [-0.3, -0.9]]),
            m.array([[0.5], [-1.0], [0.25]]))


def gelu_grad(m):
    return m.value_and_grad(lambda x: m.sum(x * (1 + m.erf(x / math.sqrt(2))) / 2))


def gelu_args(m):
    return (m.array([-4.0 + 0.37 * i for i in range(23)]),)


def broadcasts_and_reductions(m):
    def f(x, y):
        a = m.exp(-x) * 2 + m.sin(y) * m.exp(-x)  # (3, 1) with (4,): broadcast to (3, 4)
        rows = m.sum(a, axis=1, keepdims=True)
        return a / rows - m.max(a, axis=0), m.mean(a * a), m.cumsum(y * 0.5)
    return f


def broadcasts_args(m):
    return m.array([[0.5], [-1.0], [2.0]]), m.array([1.0, -2.0, 0.0, 3.0])


def integers(m):
    def f(a, b):
        q = (a * b - 7) // 3
        return m.maximum(q, a % 5) + (a << 2), m.sum(q * q, axis=0), (a > b) | (b < 0)
    return f


def integer_args(m):
    return (m.array([[1, -5, 2**30], [7, 0, -2**31]], m.int32),
            m.array([3, 9, -2], m.int32))


def float16(m):
    def f(x, y):
        z = m.exp(x) * y + m.sqrt(m.abs(x))
        return z, m.sum(z, keepdims=True), (z * 1000).astype(m.bfloat16)
    return f


def float16_args(m):
    return (m.array([0.5, -3.0, 10.0, 11.5, -0.0], m.float16),
            m.array([1e-4, 2.0, 3.0, 60000.0, -1.0], m.float16))


def random_draw(m):
    def f(key, x):
        u = m.random.uniform(shape=x.shape, key=key)
        return x + u * 2, m.maximum(u, 0.5)
    return f


def random_args(m):
    return m.random.key(7), m.zeros((5,))


def multi_output(m):
    def f(a, b):
        q, r = m.divmod(a, b)
        parts = m.split(a * 2 + q, 3)
        return q * 2, r + 1, parts[0] - parts[2], parts[1]
    return f


def multi_output_args(m):
    return m.array([7.5, -3.0, 9.0, 0.5, -0.0, 100.0]), m.array([2.0, 2.0, -4.0, 0.25, 3.0, -7.0])


def views_at_the_end(m):
    def f(x):
        p = m.exp(x) @ x
        return p.T, p[1:], m.broadcast_to(m.sum(p), (2, 2)), x
    return f


def view_read_again(m):
    def f(x):
        t = x.T  # an output, and read by the program
        return t, m.sum(m.exp(t) * 2, axis=0)
    return f


def views_args(m):
    return (m.array([[0.5, -1.0], [2.0, 0.25]]),)


# name: (the function of an array module, its arguments', MLX exactly (True) or to 1e-5)
PROGRAMS = {
    "mlp step": (mlp_step, mlp_args, False),
    "gelu grad": (gelu_grad, gelu_args, False),
    "broadcasts and reductions": (broadcasts_and_reductions, broadcasts_args, True),
    "int32": (integers, integer_args, True),
    "float16 and bfloat16": (float16, float16_args, True),
    "a random draw": (random_draw, random_args, True),
    "multi-output primitives": (multi_output, multi_output_args, True),
    "views at the end": (views_at_the_end, views_args, False),
    "a view that is an output and read again": (view_read_again, views_args, False),
}


def _flat(tree):
    if isinstance(tree, dict):
        return [a for k in sorted(tree) for a in _flat(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [a for x in tree for a in _flat(x)]
    return [tree]


def _bits(tree):
    return [(a.shape, a.dtype.name if hasattr(a.dtype, "name") else str(a.dtype),
             repr(a.tolist())) for a in _flat(tree)]


def _graph_primitives(outputs):
    return list({id(a.primitive()): a.primitive() for a in collect(outputs, set())
                 if a.has_primitive()}.values())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_program_gives_the_uncompiled_bits(name):
    make, args, _ = PROGRAMS[name]
    f, inputs = make(mx), args(mx)
    want = _bits(f(*inputs))
    cf = mx.compile(f)
    calls = [cf(*inputs) for _ in range(3)]  # the trace, then the cache twice
    for got in calls:
        assert any(isinstance(p, CompiledProgram) for p in _graph_primitives(_flat(got)))
        assert _bits(got) == want


@needs_mlx
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_program_against_real_mlx(name):
    make, args, exact = PROGRAMS[name]
    got = _flat(mx.compile(make(mx))(*args(mx)))
    theirs = _flat(real_mx.compile(make(real_mx))(*args(real_mx)))
    assert len(got) == len(theirs)
    for a, b in zip(got, theirs):
        assert a.shape == tuple(b.shape)
        if exact:
            assert repr(a.tolist()) == repr(b.tolist()), name
        else:
            assert mx.allclose(a, mx.array(b.tolist(), a.dtype), rtol=1e-5, atol=1e-6).item()


def test_one_lazy_node_per_call_and_its_source():
    def secret_user_function_name(x, y):
        return mx.sum(mx.exp(x) * y, axis=0), mx.log(mx.abs(y)) + 1

    f = mx.compile(secret_user_function_name)
    x, y = mx.array([[0.5, 1.0], [2.0, -1.0]]), mx.array([3.0, -0.25])
    first, second = f(x, y)
    assert not first.is_available() and not second.is_available()  # lazy, as MLX's
    program = first.primitive()
    assert isinstance(program, CompiledProgram) and second.primitive() is program
    assert [a.id() for a in first.inputs()] == [x.id(), y.id()] + [
        a.id() for a in first.inputs()[2:]]  # the arguments, then the constants
    mx.eval(first)
    assert second.is_available()  # one node: both outputs at once
    source = program.source
    assert source == f(x, y)[0].primitive().source  # the same entry, the same text
    assert source == mx.compile(secret_user_function_name)(x, y)[0].primitive().source
    assert "secret" not in source and source.startswith("def program(in0, in1")
    assert [p.name for p in program.nodes] == [
        "CompiledExpBroadcastMultiply", "Sum", "CompiledAbsLogBroadcastAdd"]
    lines = source.splitlines()
    # a fused node's steps one list pass each, each stored as its dtype holds it
    assert "    # CompiledExpBroadcastMultiply: its steps, one pass over whole lists each" in lines
    assert "    v0 = Evaluated(float32.store(p0.eval([x0])[0]), (2, 2), float32)  # Exp" in lines
    assert "    v1 = Evaluated(p1.eval([x1])[0], (2, 2), float32)  # Broadcast" in lines
    # each value let go after its last reader; the outputs returned
    assert "    del v0, v1" in lines and lines[-1] == "    return [v3.data(), v7.data()]"


def test_the_views_that_end_the_tape_are_nodes_and_counted_as_views():
    f = views_at_the_end(mx)
    (x,) = views_args(mx)
    mx.eval(x)
    outs = mx.compile(f)(x)
    transpose, slice_, broadcast, same = outs
    assert transpose.primitive().name == "Transpose" and slice_.primitive().name == "Slice"
    assert isinstance(transpose.inputs()[0].primitive(), CompiledProgram)
    assert same is x  # an input returned as it is
    # The memory the outputs hold: the views share their inputs' buffers, as uncompiled.
    before = mx.get_active_memory()
    mx.eval(*outs)
    compiled = mx.get_active_memory() - before
    del outs, transpose, slice_, broadcast, same
    before = mx.get_active_memory()
    plain = f(x)
    mx.eval(*plain)
    assert mx.get_active_memory() - before == compiled


def test_what_stays_nodes():
    x = mx.array([1.0, 2.0])
    # one node: nothing to save
    assert isinstance(mx.compile(lambda a: mx.exp(a) * 2)(x).primitive(), Compiled)
    # shapeless: the nodes read their shapes again at each call
    out = mx.compile(lambda a: mx.sum(mx.exp(a)) * a, shapeless=True)(x)
    assert not any(isinstance(p, CompiledProgram) for p in _graph_primitives([out]))
    # switched off
    mx.disable_compile()
    try:
        out = mx.compile(lambda a: mx.sum(mx.exp(a)) * a)(x)
        assert not any(isinstance(p, (Compiled, CompiledProgram)) for p in _graph_primitives([out]))
    finally:
        mx.enable_compile()


def test_a_kernel_error_surfaces_at_eval_with_the_nodes_message():
    f = mx.compile(lambda a: mx.linalg.inv(a * 2, stream=mx.cpu) + 1)
    a = mx.array([[1.0, 2.0], [2.0, 4.0]])
    out = f(a)
    with pytest.raises(RuntimeError, match=r"\[Inverse::eval_cpu\] LU factorization failed"):
        mx.eval(out)
    with pytest.raises(RuntimeError, match=r"\[Inverse::eval_cpu\] LU factorization failed"):
        mx.eval(mx.linalg.inv(a * 2, stream=mx.cpu) + 1)
    assert not out.is_available()


def test_the_program_refuses_the_transforms_as_compiled_does():
    x = mx.array([0.5, 1.0])
    out = mx.compile(lambda a: mx.sum(mx.exp(a)) * a)(x)
    program = out.primitive()
    for rule, arguments in (("vjp", ([x], [x], [0], [out])), ("jvp", ([x], [x], [0])),
                            ("vmap", ([x], [0]))):
        with pytest.raises(RuntimeError, match=rf"^\[Compiled\] Cannot {rule} primitive\.$"):
            getattr(program, rule)(*arguments)
    # and a compiled function under a transform runs the function (no program)
    g = mx.grad(lambda a: mx.sum(mx.compile(lambda b: mx.sum(mx.exp(b)) * b)(a)))(x)
    assert g.tolist() == mx.grad(lambda a: mx.sum(mx.sum(mx.exp(a)) * a))(x).tolist()


def test_captured_state_through_the_program():
    state = {"w": mx.array([1.0, 2.0]), "step": mx.array(0)}

    def step(x):
        state["w"] = state["w"] - 0.5 * mx.exp(x) * state["w"]
        state["step"] = state["step"] + 1
        return mx.sum(state["w"] * state["w"])

    x = mx.array([0.25, -1.0])
    plain = [step(x).item() for _ in range(3)] + [state["w"].tolist()]
    state.update(w=mx.array([1.0, 2.0]), step=mx.array(0))
    cf = mx.compile(step, inputs=state, outputs=state)
    assert isinstance(cf(x).primitive(), CompiledProgram)
    state.update(w=mx.array([1.0, 2.0]), step=mx.array(0))
    assert [cf(x).item() for _ in range(3)] + [state["w"].tolist()] == plain
    assert state["step"].item() == 3
