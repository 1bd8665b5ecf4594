"""mx.compile: tracing and its cache, simplification, fusion into generated
Python, composition with the other transforms, captured state, errors.

Values are compared with the uncompiled function bit for bit (``tolist``),
and with real MLX where it is installed."""

import importlib
import itertools
import math
import threading

import pytest

import mlxref.core as mx
from mlxref.core.primitives.base import make_arrays
from mlxref.core.primitives.compiled import Compiled, CompiledProgram
from support import needs_mlx, printed_in_fresh_process, real_mx, same_value

# (the package's ``compile`` is the function; the module is reached by name)
compile_module = importlib.import_module("mlxref.core.transforms.compile")


def _nodes(outputs):
    """The primitives of the unevaluated graph behind ``outputs`` (each node
    once), a compiled function's program's own in its place."""
    seen, found, stack = set(), [], list(outputs)
    while stack:
        a = stack.pop()
        if a.id() in seen or not a.has_primitive():
            continue
        seen.add(a.id())
        for o in a.outputs():
            seen.add(o.id())
        p = a.primitive()
        found.extend(p.nodes if isinstance(p, CompiledProgram) else [p])
        stack.extend(a.inputs())
    return found


@pytest.fixture
def mode():
    yield compile_module.set_compile_mode
    compile_module.set_compile_mode("enabled")


def chain(x, y):
    return mx.exp(-x) * 2 + mx.sin(y) * mx.exp(-x)


X = [0.0, 1.0, 2.5, -3.25, 1e-3, 40.0]
Y = [1.0, -2.0, 3.0, 0.5, -0.0, 7.0]


def test_results_equal_uncompiled_and_mlx_bit_for_bit():
    x, y = mx.array(X), mx.array(Y)
    got = mx.compile(chain)(x, y)
    assert isinstance(got.primitive(), Compiled)
    assert got.tolist() == chain(x, y).tolist()
    mlx = pytest.importorskip("mlx.core")
    want = mlx.compile(lambda a, b: mlx.exp(-a) * 2 + mlx.sin(b) * mlx.exp(-a))(
        mlx.array(X), mlx.array(Y))
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32"])
def test_fused_loop_rounds_as_the_unfused_ops(dtype):
    dt = getattr(mx, dtype)
    if dt is mx.int32:
        def f(a, b):
            return mx.maximum(a * b - 7, a // 3) + mx.abs(b)
        x, y = mx.array([1, -5, 2**30, 7]), mx.array([3, 9, 4, -2])
    else:
        def f(a, b):
            return mx.sigmoid(a * 3.1 + b) / (mx.sqrt(mx.abs(b)) + 1e-3) - mx.tanh(a)
        x, y = mx.array(X, dt), mx.array(Y, dt)
    got = mx.compile(f)(x, y)
    assert any(isinstance(p, Compiled) for p in _nodes([got]))
    assert got.tolist() == f(x, y).tolist()
    assert got.dtype is f(x, y).dtype


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_fused_loop_rounds_extremes_as_the_unfused_ops(dtype):
    # Overflow to inf, subnormals, nan and -0.0 through the float32 slot
    # (and each other dtype's cast), bit for bit as unfused.
    def f(x):
        return (x * x) * 10 - x / 3 + mx.sin(x)

    x = mx.array([1e30, -1e30, 3e38, 1e-40, -0.0, math.nan, 1.5, 7e-46], getattr(mx, dtype))
    assert repr(mx.compile(f)(x).tolist()) == repr(f(x).tolist())


def test_fused_primitives_and_source_are_deterministic():
    x, y = mx.array(X), mx.array(Y)
    first = mx.compile(chain)(x, y).primitive()
    second = mx.compile(chain)(x, y).primitive()
    assert [p.name for p, _, _ in first.tape] == [
        "Negative", "Exp", "Broadcast", "Multiply", "Sin", "Multiply", "Add"]
    assert first.name == "CompiledNegativeExpBroadcastMultiplySinMultiplyAdd"
    assert first.source == second.source
    assert "for " in first.source and "def kernel(" in first.source
    assert first.is_equivalent(second)


def test_generated_source_is_one_loop_with_rules_inline():
    x, y = mx.array(X), mx.array(Y)
    lines = mx.compile(chain)(x, y).primitive().source.splitlines()
    # Exp runs on whole lists (its float32 kernel), so it ends the first loop;
    # the second loop walks its list (w1) beside y's elements (x2).
    assert "    t1 = s1(t0)" in lines
    assert "    for w1, x2 in zip(t1, in2):" in lines
    # Negative, Multiply and Add written out, Sin called; each result rounded
    # to float32 through the slot; the 2 (one element) read as it is.
    for line in ["        f32[0] = -x0", "        f32[0] = w1 * in1", "        f32[0] = f4(x2)",
                 "        f32[0] = v3 + v5", "        v6 = f32[0]"]:
        assert line in lines
    # Only what a later loop or the caller reads becomes a list; lists are
    # let go after their last reader.
    assert [ln for ln in lines if ln.endswith(" = []")] == ["    t0 = []", "    t6 = []"]
    let_go = [name for line in lines if line.startswith("    del ")
              for name in line[8:].split(", ")]
    assert sorted(let_go) == ["t0", "t1"]


def _expression_value(primitive, *args):
    names = [f"a{i}" for i in range(len(args))]
    return eval(primitive.expression.format(*names), dict(zip(names, args)))


@pytest.mark.parametrize("name", ["Negative", "Square", "Add", "Subtract", "Multiply", "Divide"])
def test_inline_expressions_give_the_numeric_rules_results(name):
    from mlxref.core.primitives import elementwise

    primitive = getattr(elementwise, name)()
    assert primitive.expression is not None
    values = [0.0, -0.0, 1.5, -3.25, 1e-45, 3.4e38, math.inf, -math.inf, math.nan,
              0, 7, -2**31, 2**63, True, False]
    arity = 1 if isinstance(primitive, elementwise.Unary) else 2
    raised = False
    for args in itertools.product(values, repeat=arity):
        want = primitive.numeric(*args)
        try:
            got = _expression_value(primitive, *args)
        except ZeroDivisionError:
            raised = True
            continue
        assert same_value(got, want), (name, args, got, want)
    assert raised == primitive.expression_raises


def test_division_by_zero_in_a_fused_chain_gives_ieee_results():
    def f(a, b):
        return (a / b + 1) * (b / a)

    a = [1.0, 0.0, -1.0, 3.0, -0.0, 2.5]
    b = [0.0, 0.0, -0.0, -0.0, 2.0, 0.5]
    got = mx.compile(f)(mx.array(a), mx.array(b))
    assert any(isinstance(p, Compiled) for p in _nodes([got]))
    assert "except ZeroDivisionError" in _nodes([got])[0].source
    want = f(mx.array(a), mx.array(b)).tolist()
    assert repr(got.tolist()) == repr(want)
    mlx = pytest.importorskip("mlx.core")
    assert repr(got.tolist()) == repr(mlx.compile(f)(mlx.array(a), mlx.array(b)).tolist())


def test_complex_chain_with_zero_divisors_equals_unfused_and_mlx():
    def f(a, b):
        return a * b + a / b - a

    a, b = [1 + 2j, 0j, 3 - 1j], [0j, 0j, 2 + 0.5j]
    got = mx.compile(f)(mx.array(a), mx.array(b))
    assert repr(got.tolist()) == repr(f(mx.array(a), mx.array(b)).tolist())
    mlx = pytest.importorskip("mlx.core")
    assert repr(got.tolist()) == repr(mlx.compile(f)(mlx.array(a), mlx.array(b)).tolist())


def test_a_step_of_one_element_inputs_is_computed_once_and_repeated():
    def f(a, b, c, lib=mx):
        return lib.sqrt(a * b) + c / a

    a, b, c = mx.array(2.0), mx.array(0.75), mx.array([1.0, 0.0, -1.0, 3.0])
    got = mx.compile(f)(a, b, c)
    lines = got.primitive().source.splitlines()
    # a * b and its sqrt come before the loop, which reads them as names.
    assert lines.index("    f32[0] = in0 * in1") < lines.index("    for x2 in in2:")
    assert "        f32[0] = v1 + v4" in lines
    assert got.tolist() == f(a, b, c).tolist()
    mlx = pytest.importorskip("mlx.core")
    want = mlx.compile(lambda *xs: f(*xs, lib=mlx))(
        mlx.array(2.0), mlx.array(0.75), mlx.array([1.0, 0.0, -1.0, 3.0]))
    assert got.tolist() == want.tolist()


def test_gelu_value_and_grad_compiled_equals_uncompiled():
    # The benchmark's workload (benchmarks/compile_gelu.py), small: erf's
    # float32 kernel runs on lists between the fused steps.
    def loss(x):
        return mx.sum(x * (1 + mx.erf(x / math.sqrt(2))) / 2)

    x = mx.array([-4.0 + 8.0 * i / 200 for i in range(201)])
    fn = mx.value_and_grad(loss)
    value, grad = mx.compile(fn)(x)
    assert any(isinstance(p, Compiled) for p in _nodes([grad]))
    want_value, want_grad = fn(x)
    assert value.item() == want_value.item() and grad.tolist() == want_grad.tolist()
    mlx = pytest.importorskip("mlx.core")
    gelu = mlx.compile(lambda v: v * (1 + mlx.erf(v / math.sqrt(2))) / 2)
    assert mx.compile(lambda v: v * (1 + mx.erf(v / math.sqrt(2))) / 2)(x).tolist() \
        == gelu(mlx.array(x.tolist())).tolist()


def test_unfused_step_by_step_equals_fused_loop():
    x, y = mx.array(X), mx.array(Y)
    out = mx.compile(chain)(x, y)
    node = out.primitive()
    inputs = out.inputs()
    mx.eval(*inputs)
    assert node.eval(inputs) == node.eval_unfused(inputs)


def test_simplify_merges_common_subexpressions_and_scalars(mode):
    def f(x):
        a = mx.exp(x) + 1.5
        b = mx.exp(x) + 1.5
        return mx.log(a) * mx.log(b) + mx.array(1.5)

    x = mx.array([0.5, 2.0])
    mode("no_simplify")
    raw = _nodes([mx.compile(f)(x)])
    mode("no_fuse")
    simple = _nodes([mx.compile(f)(x)])
    # exp, add, log each once; the three 1.5s one constant, broadcast once.
    assert len(raw) > len(simple)
    assert sorted(p.name for p in simple) == [
        "Add", "Add", "Broadcast", "Exp", "Log", "Multiply"]
    mode("enabled")
    fused = _nodes([mx.compile(f)(x)])
    assert [p.name for p in fused] == ["CompiledExpBroadcastAddLogMultiplyAdd"]
    assert mx.compile(f)(x).tolist() == f(x).tolist()


def test_noops_removed_and_non_elementwise_split_chains():
    def f(x):
        y = mx.stop_gradient(mx.exp(x)) * 2
        return mx.sum(y * y, axis=0) + 1

    x = mx.array([[1.0, 2.0], [3.0, 4.0]])
    out = mx.compile(f)(x)
    names = sorted(p.name for p in _nodes([out]))
    assert names == ["CompiledBroadcastAdd", "CompiledExpBroadcastMultiplyMultiply", "Sum"] \
        or names == ["Add", "CompiledExpBroadcastMultiplyMultiply", "Sum"]
    assert "StopGradient" not in names
    assert out.tolist() == f(x).tolist()


def test_traced_once_per_signature():
    calls = []

    def f(x, scale, opts):
        calls.append(1)
        return x * scale + (1 if opts["shift"] else 0)

    cf = mx.compile(f)
    x = mx.array([1.0, 2.0])
    for _ in range(3):
        cf(x, 2.0, {"shift": True})
    assert len(calls) == 1
    cf(mx.array([5.0, 6.0]), 2.0, {"shift": True})  # same shape and dtype: cached
    assert len(calls) == 1
    cf(x, 3.0, {"shift": True})  # a new constant
    cf(x, 2.0, {"shift": False})
    cf(mx.array([1.0, 2.0, 3.0]), 2.0, {"shift": True})  # a new shape
    cf(mx.array([1, 2]), 2.0, {"shift": True})  # a new dtype
    assert len(calls) == 5
    assert cf(mx.array([1.0, 2.0, 3.0]), 2.0, {"shift": True}).tolist() == [3.0, 5.0, 7.0]


def test_shapeless_does_not_retrace_and_shape_errors_surface():
    calls = []

    def f(x):
        calls.append(1)
        return mx.exp(x) * 2

    cf = mx.compile(f, shapeless=True)
    cf(mx.array([1.0, 2.0]))
    out = cf(mx.array([1.0, 2.0, 3.0]))
    assert len(calls) == 1
    assert out.shape == (3,)
    assert out.tolist() == f(mx.array([1.0, 2.0, 3.0])).tolist()
    cf(mx.array([[1.0]]))  # a new rank retraces
    assert len(calls) == 3

    g = mx.compile(lambda x: x.reshape(2, 2), shapeless=True)
    g(mx.array([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(ValueError, match=r"\[reshape\] Cannot reshape array of size 3"):
        g(mx.array([1.0, 2.0, 3.0]))


def test_disable_enable_and_environment(monkeypatch):
    calls = []

    def f(x):
        calls.append(1)
        return mx.exp(x) + 1

    cf = mx.compile(f)
    x = mx.array([1.0])
    mx.disable_compile()
    try:
        cf(x)
        cf(x)
        assert len(calls) == 2
        assert not isinstance(cf(x).primitive(), Compiled)
    finally:
        mx.enable_compile()
    cf(x)
    cf(x)
    assert len(calls) == 4


def test_composes_with_every_transform():
    def f(x):
        return mx.sum(mx.sin(x) * mx.exp(x) + x * x)

    x = mx.array([0.5, -1.0, 2.0])
    cf = mx.compile(f)
    g = mx.grad(f)(x).tolist()
    assert mx.grad(cf)(x).tolist() == g
    assert mx.compile(mx.grad(f))(x).tolist() == g
    assert mx.compile(mx.grad(cf))(x).tolist() == g
    xs = mx.array([[0.5, -1.0, 2.0], [1.0, 2.0, 3.0]])
    assert mx.vmap(cf)(xs).tolist() == mx.vmap(f)(xs).tolist()
    assert mx.compile(mx.vmap(f))(xs).tolist() == mx.vmap(f)(xs).tolist()
    t = mx.array([1.0, 0.0, -2.0])
    assert mx.jvp(cf, [x], [t])[1][0].tolist() == mx.jvp(f, [x], [t])[1][0].tolist()
    assert mx.compile(lambda a, b: mx.jvp(f, [a], [b])[1][0])(x, t).tolist() == \
        mx.jvp(f, [x], [t])[1][0].tolist()
    assert mx.grad(mx.checkpoint(cf))(x).tolist() == g

    @mx.custom_function
    def h(a):
        return mx.compile(lambda b: mx.exp(b) * 3)(a)

    @h.vjp
    def h_vjp(primals, cotangent, output):
        return cotangent * 5

    assert mx.vjp(h, [x], [mx.ones_like(x)])[1][0].tolist() == [5.0, 5.0, 5.0]
    assert h(x).tolist() == (mx.exp(x) * 3).tolist()


def test_compiled_primitive_has_no_rules_as_in_mlx():
    # MLX's Compiled::vjp, jvp and vmap throw: a transform never meets the
    # node, since a compiled function called on tracers runs the function.
    x, y = mx.array(X[:3]), mx.array(Y[:3])
    out = mx.compile(lambda a, b: mx.sin(a) * mx.exp(b) + a)(x, y)
    node, inputs = out.primitive(), out.inputs()
    assert isinstance(node, Compiled)
    cot = mx.array([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"^\[Compiled\] Cannot vjp primitive\.$"):
        node.vjp(inputs, [cot], [0, 1], [out])
    with pytest.raises(RuntimeError, match=r"^\[Compiled\] Cannot jvp primitive\.$"):
        node.jvp(inputs, [cot], [0])
    with pytest.raises(RuntimeError, match=r"^\[Compiled\] Cannot vmap primitive\.$"):
        node.vmap([mx.stack([x, y]), y], [0, None])

    def replayed(a):  # the node itself on a tracer: what compile never builds
        return mx.sum(make_arrays(node, [a, y])[0])

    with pytest.raises(RuntimeError, match="Cannot vjp primitive"):
        mx.grad(replayed)(x)
    with pytest.raises(RuntimeError, match="Cannot jvp primitive"):
        mx.jvp(replayed, [x], [cot])
    with pytest.raises(RuntimeError, match="Cannot vmap primitive"):
        mx.vmap(replayed)(mx.stack([x, y]))


def test_transforms_of_a_compiled_function_run_the_function():
    calls = []

    def f(a, b):
        calls.append(a.is_tracer())
        return mx.sin(a) * mx.exp(b) + a

    x, y, cot = mx.array(X[:3]), mx.array(Y[:3]), mx.array([1.0, 2.0, 3.0])
    cf = mx.compile(f)
    outs, vjps = mx.vjp(cf, [x, y], [cot])
    assert not any(isinstance(p, Compiled) for p in _nodes(outs + vjps))
    assert calls == [True]  # called on the tracers, not traced for the cache
    want = mx.vjp(f, [x, y], [cot])
    assert [a.tolist() for a in outs + vjps] == [a.tolist() for a in want[0] + want[1]]
    assert mx.jvp(lambda a: cf(a, y), [x], [cot])[1][0].tolist() == \
        mx.jvp(lambda a: f(a, y), [x], [cot])[1][0].tolist()
    batched = mx.stack([x, y])
    assert mx.vmap(cf, in_axes=(0, None))(batched, y).tolist() == \
        mx.vmap(f, in_axes=(0, None))(batched, y).tolist()


def test_captured_state_inputs_and_outputs():
    state = {"w": mx.array([1.0, 2.0]), "step": mx.array(0)}

    def step(x):
        state["w"] = state["w"] - 0.5 * x
        state["step"] = state["step"] + 1
        return mx.sum(state["w"] * state["w"])

    x = mx.array([1.0, 1.0])
    plain = [step(x).item() for _ in range(3)] + [state["w"].tolist()]
    state.update(w=mx.array([1.0, 2.0]), step=mx.array(0))
    calls = []
    cf = mx.compile(lambda x: calls.append(1) or step(x), inputs=state, outputs=state)
    losses = [cf(x).item() for _ in range(3)] + [state["w"].tolist()]
    assert state["step"].item() == 3
    assert losses == plain
    assert len(calls) == 1


def test_randomness_with_captured_state_matches_uncompiled():
    def f(x):
        return x + mx.random.uniform(shape=x.shape)

    x = mx.zeros((3,))
    mx.random.seed(7)
    plain = [f(x).tolist() for _ in range(2)]
    mx.random.seed(7)
    cf = mx.compile(f, inputs=mx.random.state, outputs=mx.random.state)
    assert [cf(x).tolist() for _ in range(2)] == plain


def test_errors_with_mlx_messages():
    with pytest.raises(ValueError, match=r"\[compile\] Function arguments must be trees of "
                       r"arrays or constants \(floats, ints, strings, or None\), but received "
                       r"type object\."):
        mx.compile(lambda x, o: x)(mx.array(1.0), object())
    with pytest.raises(ValueError, match=r"\[eval\] Attempting to eval an array during "
                       "function transformations like compile or vmap is not allowed."):
        mx.compile(lambda x: mx.array(x.item()))(mx.array(1.0))
    y = mx.array([1.0, 2.0])
    with pytest.raises(ValueError, match="uncaptured inputs is not allowed"):
        mx.compile(lambda x: x + y)(y)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mx.compile(3)


LIBS = [mx] + ([real_mx] if real_mx else [])


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_a_replaced_global_array_is_read_again_only_by_a_new_trace(lib):
    """A global array is a constant of the trace (MLX's compile page: "Still
    prints array(2)"); the cache is keyed by the default stream too, so a call
    under another stream traces again and reads the array then."""
    lib.eval(lib.array(1.0) + 1)  # this thread has a default stream (see the next test)
    state = [lib.array(1.0)]
    traces = []
    f = lib.compile(lambda x: traces.append(1) or x + state[0])
    got = [f(lib.array(1.0)).item()]
    state[0] = lib.array(5.0)
    got.append(f(lib.array(1.0)).item())
    with lib.stream(lib.new_stream(lib.cpu)):
        got.append(f(lib.array(1.0)).item())
    state[0] = lib.array(7.0)
    got.append(f(lib.array(1.0)).item())
    assert got == [2.0, 2.0, 6.0, 2.0] and len(traces) == 2


# MLX's compile page's example of a replaced global array, in a program of its own.
REPLACED_GLOBAL = """
state = [mx.array(1.0)]
traces = []
f = mx.compile(lambda x: traces.append(1) or x + state[0])
got = [f(mx.array(1.0)).item()]
state[0] = mx.array(5.0)
got += [f(mx.array(1.0)).item(), f(mx.array(1.0)).item()]
print(got, len(traces), mx.default_stream(mx.cpu))
"""


@pytest.mark.mlx
@needs_mlx
@pytest.mark.parametrize("first", ["", "mx.eval(mx.array(1.0) + 1)\n"], ids=["fresh", "after an op"])
def test_a_fresh_program_traces_twice_as_mlx_does(first):
    """README, compile: a cache entry is keyed by the thread's default stream as
    the call finds it. In a program whose first op is the compiled call there is
    none yet: the trace makes it, so the second call misses and traces again,
    reading the replaced array (MLX prints 6 where its page says "Still prints
    array(2)"); after an op, both trace once and keep 2."""
    program = first + REPLACED_GLOBAL
    ours = printed_in_fresh_process("mlxref.core", program)
    assert ours == printed_in_fresh_process("mlx.core", program)


@pytest.mark.mlx
@needs_mlx
def test_each_thread_traces_twice_when_its_first_op_is_the_compiled_call():
    """As the test above, on a new thread of this process (whose default stream
    is per thread), and for a function compiled on another thread: each thread
    has its own cache entries, as in MLX."""
    def run(f, lib, state, out):
        first = f(lib.array(1.0)).item()
        state[0] = lib.array(5.0)
        out.append((first, f(lib.array(1.0)).item(), f(lib.array(1.0)).item()))

    results = {}
    for lib in (mx, real_mx):
        state, traces, out = [lib.array(1.0)], [], []
        f = lib.compile(lambda x: traces.append(1) or x + state[0])
        for _ in range(2):  # a second thread finds the first one's entries not its own
            state[0] = lib.array(1.0)
            thread = threading.Thread(target=run, args=(f, lib, state, out))
            thread.start()
            thread.join()
        results[lib] = out, len(traces)
    assert results[mx] == results[real_mx]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_an_array_a_compiled_function_leaked_raises_mlxs_runtime_error(lib):
    """MLX's "Pure Functions" example: the list holds a placeholder of the
    trace; evaluating it afterwards is MLX's RuntimeError (during a trace, it
    would be the ValueError of test_errors_with_mlx_messages)."""
    state = []

    @lib.compile
    def fun(x, y):
        z = x + y
        state.append(z)
        return lib.exp(z)

    assert fun(lib.array(1.0), lib.array(2.0)).item() == pytest.approx(math.exp(3.0))
    for use in (lambda: repr(state), lambda: lib.eval(state[0]), lambda: state[0].item()):
        with pytest.raises(RuntimeError, match=r"^\[eval\] Attempting to eval an array without a "
                           r"primitive\.\nIf you are compiling a function, make sure all the "
                           r"inputs and outputs are captured:\n"):
            use()
    assert state[0].shape == () and state[0].dtype == lib.float32


# --- shapeless: nodes whose shapes follow the inputs at each replay ----------------------


def _replay_on(f, first, later, mlx_f=None):
    """``f`` compiled shapeless, traced on ``first`` and replayed on each of
    ``later``: every result equals the uncompiled ``f`` (and real MLX's)."""
    calls = []
    cf = mx.compile(lambda *a: calls.append(1) or f(*a), shapeless=True)
    cf(*first)
    for args in later:
        got, want = cf(*args), f(*args)
        assert got.shape == want.shape
        assert got.tolist() == want.tolist()
        if mlx_f is not None:
            mlx = pytest.importorskip("mlx.core")
            real = mlx.compile(mlx_f(mlx), shapeless=True)(*[mlx.array(a.tolist()) for a in args])
            assert got.tolist() == real.tolist()
    assert len(calls) == 1  # one trace served every shape of the same ranks


def test_shapeless_mean_counts_the_elements_at_each_replay():
    _replay_on(lambda x: mx.mean(x, axis=-1, keepdims=True),
               [mx.ones((1, 2))], [[mx.arange(6, dtype=mx.float32).reshape(2, 3)]],
               lambda m: lambda x: m.mean(x, axis=-1, keepdims=True))
    _replay_on(lambda x: mx.var(x), [mx.array([1.0, 2.0])], [[mx.array([1.0, 2.0, 4.0])]],
               lambda m: lambda x: m.var(x))
    # The count is a node of its own, behind stop_gradient.
    graph_ = mx.compile(lambda x: mx.mean(x), shapeless=True)(mx.ones((3,)))
    names = [p.name for p in _nodes([graph_])]
    assert "NumberOfElements" in "".join(names)


def test_shapeless_broadcasts_read_the_other_operands_shapes():
    # x * its row sums: the sums (n, 1) broadcast against x, whatever n is.
    _replay_on(lambda x: x * x.sum(-1, keepdims=True),
               [mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])], [[mx.array([[1.0, 2.0]])]],
               lambda m: lambda x: x * x.sum(-1, keepdims=True))
    _replay_on(lambda x: mx.zeros_like(x) + mx.ones_like(x) * 3,
               [mx.ones((1, 1, 4))], [[mx.ones((2, 3, 2))]])
    # Batched matmul broadcasts its batch axes against each other's only.
    a, b = mx.ones((2, 1, 4, 2)), mx.ones((3, 2, 5))
    _replay_on(lambda a, b: a @ b, [a, b], [[mx.ones((3, 1, 4, 2)), mx.ones((2, 2, 5))]])


def test_a_shapeless_replay_that_breaks_a_matmul_raises():
    # x.size is read in Python: the ones keep the traced length. MLX's
    # replay reads past the end of the shorter operand; mlxref refuses.
    f = mx.compile(lambda x: x.reshape(-1) @ mx.ones((x.size,)), shapeless=True)
    assert f(mx.ones((2, 3))).item() == 6.0
    with pytest.raises(ValueError, match=r"\[matmul\] Last dimension of first input with "
                       r"shape \(1,20\) must match second to last dimension of second input "
                       r"with shape \(6,1\)\."):
        f(mx.ones((4, 5)))


def test_shapeless_reshape_infers_its_minus_one_again():
    f = mx.compile(lambda x: x.reshape(x.shape[0] * x.shape[1], -1), shapeless=True)
    assert f(mx.zeros((2, 3, 4))).shape == (6, 4)
    assert f(mx.zeros((2, 3, 8))).shape == (6, 8)
    with pytest.raises(ValueError, match=r"\[reshape\] Cannot reshape array of size 125 "
                       r"into shape \(6,20\)\."):
        f(mx.zeros((5, 5, 5)))


def test_shapeless_gradient_follows_the_new_shapes():
    def loss(a, b):
        return ((a @ b) * (a @ b)).sum()

    g = mx.compile(mx.grad(loss, argnums=(0, 1)), shapeless=True)
    for sa, sb in [((2, 1, 4, 2), (3, 2, 5)), ((3, 1, 4, 2), (2, 2, 5))]:
        a = mx.random.normal(sa, key=mx.random.key(1))
        b = mx.random.normal(sb, key=mx.random.key(2))
        got, want = g(a, b), mx.grad(loss, argnums=(0, 1))(a, b)
        assert [x.shape for x in got] == [sa, sb]
        assert [x.tolist() for x in got] == [x.tolist() for x in want]


def test_a_shared_broadcast_is_split_into_the_chain():
    # yy is read by the fused chain and by a sum outside it: the chain gets
    # its own copy of the broadcast, the sum keeps the original.
    def f(x, y, z):
        yy = mx.broadcast_to(y, z.shape)
        return x + yy * z, yy.sum()

    x, y, z = mx.ones((4, 4)), mx.array(0.5), mx.arange(16, dtype=mx.float32).reshape(4, 4)
    tape = compile_module.trace_entry(f, (x, y, z)).tape  # what a call's program runs
    (chain,) = [n for n in tape if n.primitive.name == "CompiledBroadcastMultiplyAdd"]
    assert [v.shape for v in chain.inputs] == [(4, 4), (), (4, 4)]
    (sum_node,) = [n for n in tape if n.primitive.name == "Sum"]
    assert sum_node.inputs[0].node.primitive.name == "Broadcast"
    fused, total = mx.compile(f)(x, y, z)
    want = f(x, y, z)
    assert [fused.tolist(), total.item()] == [want[0].tolist(), want[1].item()]


def test_outputs_may_be_captured_inputs_updated_in_place():
    state = [mx.array(1.0)]

    def step(y):
        if y.dtype == mx.float32:
            state[0] = 2 * y
        else:
            state[0] *= 3  # the captured placeholder itself now points at a new node
        return y

    cf = mx.compile(step, inputs=state, outputs=state)
    for _ in range(3):
        cf(mx.array(1.0))
        assert state[0].item() == 2.0
        cf(mx.array(1))
        assert state[0].item() == 6.0


def test_constants_of_the_trace_outlive_the_graph_they_came_from():
    # w is lazy: its graph (a key, scalar bounds) is traced into the entry.
    # Evaluating w afterwards must not let a kernel donate those constants'
    # buffers, which the entry replays at every call.
    w = mx.random.uniform(low=-1.0, high=1.0, shape=(4,), key=mx.random.key(0))
    f = mx.compile(lambda x: mx.sin(x @ w) * 2 + 1)
    x = mx.ones((2, 4))
    first = f(x).tolist()
    want = (mx.sin(x @ w) * 2 + 1).tolist()  # evaluates w's own graph
    assert [f(x).tolist() for _ in range(2)] == [first, first] == [want, want]


def test_a_compiled_call_lets_go_of_its_arguments_at_once():
    # Without the cycle collector (paused while mlxref evaluates), nothing of
    # a call may keep the caller's arrays alive: else their buffers could not
    # be donated, as they are in MLX.
    import gc
    import weakref

    f = mx.compile(lambda a, b: mx.sin(a) * b + 1)
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(2):  # the trace, then the cached entry
            x, y = mx.ones((8,)), mx.ones((8,))
            refs = [weakref.ref(x), weakref.ref(y)]
            out = f(x, y)
            del x, y, out
            assert [r() for r in refs] == [None, None]
    finally:
        if was:
            gc.enable()
