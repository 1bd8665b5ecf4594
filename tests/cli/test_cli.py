"""The mlxref command (mlxref/cli/): ``demo``, exit statuses, and ``graph``: good paths for
every transform and format, and bad inputs.

Bad input must end with exit status 2 and one line on stderr, never a
traceback; a formula that tries to run code must be refused before anything
runs (a marker file proves nothing ran).
"""

import math
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from mlxref.cli import main

SEED = "sin(x) * exp(x)"


def run(capsys, *argv):
    """main(["graph", *argv]) in-process: (status, stdout, stderr)."""
    status = main(["graph", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_process(*argv, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "mlxref", "graph", *argv],
        capture_output=True, text=True, env=env, cwd=cwd,
    )


def assert_one_line_error(status, out, err, *fragments):
    assert status == 2, (status, out, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("mlxref: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# --- mlxref demo, and exit statuses ---------------------------------------------------


def test_demo_prints_the_seed_gradient(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    value = float(re.search(r"f'\(x\) = array\(([-0-9.e]+), dtype=float32\)", out).group(1))
    assert abs(value - math.exp(0.5) * (math.sin(0.5) + math.cos(0.5))) < 1e-5
    assert "2.23733" in out and "-0.352" not in out


def test_demo_at_another_point(capsys):
    assert main(["demo", "--x", "1.0"]) == 0
    out = capsys.readouterr().out
    assert "{:g}".format(math.exp(1) * (math.sin(1) + math.cos(1)))[:6] in out


def test_bad_arguments_exit_2_without_traceback():
    r = subprocess.run([sys.executable, "-m", "mlxref", "demo", "--x", "abc"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "invalid float value" in r.stderr
    r = subprocess.run([sys.executable, "-m", "mlxref", "nonsense"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_demo_draws_the_seed_example(tmp_path, capsys):
    import shutil

    import pytest

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "0.790439" in out and "2.23733" in out
    for name in ("seed_graph.svg", "seed_vjp.svg", "seed_jvp.svg", "seed_vjp.html", "seed_jvp.html"):
        assert (tmp_path / name).stat().st_size > 1000, name
    assert "gradient 2.2373" in (tmp_path / "seed_vjp.svg").read_text()


# --- good paths ------------------------------------------------------------------------

# Each transform with inputs that suit it, and the first line of its text listing.
TITLES = {
    "graph": "# graph of f(x)",
    "vjp": "# vjp of f(x)",
    "jvp": "# jvp of f(x)",
    "grad": "# grad of f(x) with respect to x",
    "value_and_grad": "# value_and_grad of f(x) with respect to x",
    "vmap": "# vmap of f(x)",
    "checkpoint": "# vjp of checkpoint(f)(x, w)",
}
TRANSFORM_CASES = {
    "graph": [SEED, "--at", "x=0.5"],
    "vjp": [SEED, "--at", "x=0.5"],
    "jvp": [SEED, "--at", "x=0.5"],
    "grad": [SEED, "--at", "x=0.5"],
    "value_and_grad": [SEED, "--at", "x=0.5"],
    "vmap": [SEED, "--at", "x=[0.5, 1.0, 1.5]"],
    "checkpoint": ["sum(tanh(x @ w))", "--at", "x=[[1.0, 2.0]]", "--at", "w=[[0.5], [0.25]]"],
}


@pytest.mark.parametrize("output_format", ["text", "dot"])
@pytest.mark.parametrize("transform", list(TRANSFORM_CASES))
def test_each_transform_to_stdout(capsys, transform, output_format):
    argv = TRANSFORM_CASES[transform] + ["--transform", transform, "--format", output_format]
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert err == ""
    assert out.strip()
    if output_format == "dot":
        assert out.lstrip().startswith(("digraph", "strict digraph"))
        assert out.rstrip().endswith("}")
    else:
        assert out.splitlines()[0] == TITLES[transform]
    # Byte-identical on a second run.
    assert run(capsys, *argv) == (0, out, "")


def test_text_is_the_default_on_stdout(capsys):
    assert run(capsys, SEED, "--at", "x=0.5") == run(capsys, SEED, "--at", "x=0.5", "--format", "text")


def test_seed_example_text_names_its_ops(capsys):
    status, out, _ = run(capsys, SEED, "--at", "x=0.5", "--format", "text")
    assert status == 0
    assert "sin" in out and "exp" in out and "multiply" in out


def test_vjp_shows_the_gradient(capsys):
    status, out, _ = run(capsys, SEED, "--at", "x=0.5", "--transform", "vjp")
    assert status == 0
    assert out.rstrip().endswith("gradient x: 2.2373")
    status, out, _ = run(capsys, SEED, "--at", "x=0.5", "--transform", "grad")
    assert status == 0
    assert "gradient of x" in out


def test_svg_to_a_file(capsys, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed")
    out_file = tmp_path / "seed.svg"
    status, out, err = run(capsys, SEED, "--at", "x=0.5", "--transform", "vjp", "-o", str(out_file))
    assert (status, out, err) == (0, "", "")
    svg = out_file.read_text()
    assert "<svg" in svg and "</svg>" in svg


def test_format_given_explicitly_with_o(capsys, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed")
    out_file = tmp_path / "drawing"
    status, _, err = run(capsys, SEED, "--at", "x=0.5", "--format", "svg", "-o", str(out_file))
    assert status == 0, err
    written = [p for p in tmp_path.iterdir() if p.suffix == ".svg" or p.name == "drawing"]
    assert written and any("<svg" in p.read_text() for p in written)


def test_html_stepper_to_a_file(capsys, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed")
    out_file = tmp_path / "seed.html"
    status, _, err = run(capsys, SEED, "--at", "x=0.5", "--transform", "vjp", "-o", str(out_file))
    assert status == 0, err
    assert "<html" in out_file.read_text().lower()


def test_dot_and_text_to_a_file_match_stdout(capsys, tmp_path):
    for output_format, name in (("dot", "g.dot"), ("text", "g.txt")):
        _, on_stdout, _ = run(capsys, SEED, "--at", "x=0.5", "--format", output_format)
        path = tmp_path / name
        assert run(capsys, SEED, "--at", "x=0.5", "--format", output_format, "-o", str(path)) == (0, "", "")
        assert path.read_text() == on_stdout


def test_format_from_the_output_suffix(capsys, tmp_path):
    path = tmp_path / "g.dot"
    assert run(capsys, SEED, "--at", "x=0.5", "-o", str(path)) == (0, "", "")
    assert "digraph" in path.read_text()


def test_steps_writes_frames(capsys, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed")
    frames = tmp_path / "frames"
    status, out, err = run(capsys, SEED, "--at", "x=0.5", "--transform", "vjp", "--steps", str(frames))
    assert status == 0, err
    assert out.strip()  # the drawing itself still goes to stdout
    written = sorted(p.name for p in frames.iterdir())
    assert len(written) >= 2 and all(name.endswith(".svg") for name in written)


def test_file_function(capsys, tmp_path):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""
        import mlxref.core as mx

        def loss(w, x, scale=2.0):
            return mx.sum(mx.tanh(x @ w)) * scale
    """))
    status, out, err = run(capsys, f"{source}:loss", "--shape", "w=3,1", "--shape", "x=2,3",
                           "--transform", "grad")
    assert status == 0, err
    assert out.startswith("# grad of loss(w, x) with respect to w\n")
    assert "tanh" in out
    # Given explicitly, a defaulted parameter becomes an input.
    status, out, err = run(capsys, f"{source}:loss", "--shape", "w=3,1", "--shape", "x=2,3",
                           "--at", "scale=3.0", "--transform", "value_and_grad", "--wrt", "x")
    assert status == 0, err
    assert out.startswith("# value_and_grad of loss(w, x, scale) with respect to x\n")


def test_file_function_inside_a_package(capsys, tmp_path):
    """A module that imports its package's neighbours relatively is loaded as
    part of its package (mlxref/viz/figures.py is one: chapter 11 draws it)."""
    package = tmp_path / "lectures" / "week3"
    package.mkdir(parents=True)
    (tmp_path / "lectures" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text("import mlxref.core as mx\n\n"
                                       "def act(x):\n    return mx.tanh(x)\n")
    (package / "model.py").write_text("from .layers import act\n\n"
                                      "def loss(x):\n    return act(x).sum()\n")
    status, out, err = run(capsys, f"{package / 'model.py'}:loss", "--shape", "x=3")
    assert status == 0, err
    assert out.startswith("# graph of loss(x)\n") and "tanh" in out
    status, out, err = run(capsys, "mlxref/viz/figures.py:conv_loss", "--shape", "x=1,5,1",
                           "--shape", "w=1,3,1", "--transform", "grad", "--format", "dot")
    assert status == 0, err
    assert "input_dilation=(2,), groups=1, flip=True" in out  # the drawing wraps long parameters


def test_shape_values_are_deterministic(capsys):
    argv = ["sum(tanh(x @ w))", "--shape", "x=2,3", "--shape", "w=3,2", "--transform", "grad", "--wrt", "w"]
    first = run(capsys, *argv)
    assert first[0] == 0, first[2]
    assert run(capsys, *argv) == first
    # ... and across processes.
    again = run_process(*argv)
    assert (again.returncode, again.stdout) == (0, first[1])


def test_shape_values_depend_on_the_name_not_the_position(capsys):
    import mlxref.core as mx
    from mlxref import cli

    class Args:
        at = []
        shape = ["a=3", "b=3"]

    values = cli._graph_values(Args, [("a", False), ("b", False)])
    assert values["a"].tolist() != values["b"].tolist()
    Args.shape = ["b=3"]
    assert cli._graph_values(Args, [("b", False)])["b"].tolist() == values["b"].tolist()
    assert values["a"].dtype == mx.float32


def test_inputs_in_order_of_first_appearance(monkeypatch, capsys):
    from mlxref import viz

    seen = {}
    real_trace = viz.trace

    def spy(fun, args, **kwargs):
        seen.update(kwargs, shapes=[a.shape for a in args])
        return real_trace(fun, args, **kwargs)

    monkeypatch.setattr(viz, "trace", spy)
    status, _, err = run(capsys, "w * sum(x) + w", "--at", "x=[1.0, 2.0]", "--at", "w=3.0")
    assert status == 0, err
    assert seen["names"] == ["w", "x"] and seen["shapes"] == [(), (2,)]


def test_wrt(capsys):
    status, out, err = run(capsys, "x * y", "--at", "x=2.0", "--at", "y=3.0", "--transform", "grad",
                           "--wrt", "y")
    assert status == 0, err
    assert out.startswith("# grad of f(x, y) with respect to y\n")
    assert out.rstrip().endswith("gradient y: 2")
    status, out, err = run(capsys, "x * y", "--at", "x=2.0", "--at", "y=3.0",
                           "--transform", "value_and_grad", "--wrt", "y", "--wrt", "x")
    assert status == 0, err
    assert out.startswith("# value_and_grad of f(x, y) with respect to x, y\n")


def test_tangents(capsys):
    # Inputs without --tangent get ones, as viz does when no tangents are given.
    status, out, err = run(capsys, "x * y", "--at", "x=2.0", "--at", "y=3.0", "--transform", "jvp",
                           "--tangent", "y=0.5")
    assert status == 0, err
    assert out.rstrip().endswith("jvp mul_1: 4")  # 1 * 3 + 2 * 0.5
    status, out, err = run(capsys, "x * y", "--at", "x=2.0", "--at", "y=3.0", "--transform", "jvp",
                           "--wrt", "y", "--tangent", "y=1")
    assert status == 0, err
    assert out.rstrip().endswith("jvp mul_1: 2")
    # A number fills the input's shape.
    status, out, err = run(capsys, SEED, "--at", "x=[0.5, 1.0]", "--transform", "jvp", "--tangent", "x=1")
    assert status == 0, err
    assert out.rstrip().endswith("jvp mul_3: [2.2373, 3.756]")


def test_cotangent(capsys):
    status, out, err = run(capsys, SEED, "--at", "x=[0.5, 0.5]", "--transform", "vjp",
                           "--cotangent", "[1, -1]")
    assert status == 0, err
    assert out.rstrip().endswith("gradient x: [2.2373, -2.2373]")
    status, out, err = run(capsys, SEED, "--at", "x=[0.5, 0.5]", "--transform", "vjp", "--cotangent", "2")
    assert status == 0, err
    assert out.rstrip().endswith("gradient x: [4.4747, 4.4747]")


def test_in_axes(capsys):
    status, out, err = run(capsys, "x * y", "--at", "x=[1.0, 2.0]", "--at", "y=3.0", "--transform", "vmap",
                           "--in-axes", "0,None")
    assert status == 0, err
    assert "batched output mul_1: (2,) [3, 6]" in out
    assert run(capsys, "x * y", "--at", "x=[1.0, 2.0]", "--at", "y=3.0", "--transform", "vmap",
               "--in-axes", "(0, None)") == (0, out, "")


def test_expression_features(capsys):
    for formula in ("sum(x, axis=0)", "x[0, 1:]", "where(x > 0, x, 0.0)", "softmax(x, axis=-1)",
                    "reshape(x, (4,)) @ [1.0, 2.0, 3.0, 4.0]", "stack([x, -x])", "logsumexp(x)",
                    "clip(x ** 2, 0, 1)", "stop_gradient(x) * x", "astype(x, float32) // 2 % 3"):
        status, out, err = run(capsys, formula, "--at", "x=[[1.0, -2.0], [3.0, 4.0]]")
        assert (status, err) == (0, ""), (formula, err)


def test_collapse_and_max_nodes(capsys):
    argv = ["sum(tanh(x @ w))", "--shape", "x=2,3", "--shape", "w=3,1", "--transform", "checkpoint"]
    assert run(capsys, *argv, "--collapse")[0] == 0
    status, out, err = run(capsys, *argv, "--max-nodes", "3", "--format", "dot")
    assert status == 0, err


def test_help_lists_the_functions(capsys):
    assert main(["graph", "--help"]) == 0
    out = capsys.readouterr().out
    assert "logsumexp" in out and "stop_gradient" in out and "FILE.py:FUNC" in out


def test_good_path_in_a_subprocess():
    r = run_process(SEED, "--at", "x=0.5", "--transform", "jvp", "--format", "dot")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(("digraph", "strict digraph")) and r.stderr == ""


# --- bad inputs ------------------------------------------------------------------------

BAD = [
    # (argv, fragments expected in the one line)
    (["sin(x"], ["invalid expression"]),
    (["x +* 2", "--at", "x=1.0"], ["invalid expression"]),
    (["foo(x)", "--at", "x=1.0"], ["unknown function 'foo'"]),
    (["sin"], ["'sin' is a function"]),
    (["sin(1.0)"], ["has no variables"]),
    (["x.T", "--at", "x=1.0"], ["attribute access", "x.T"]),
    (["x if x else x", "--at", "x=1.0"], ["conditional expression"]),
    (["x and x", "--at", "x=1.0"], ["'and' / 'or'"]),
    (["1 < x < 2", "--at", "x=1.0"], ["chained comparison"]),
    (["x[y]", "--at", "x=[1.0]", "--at", "y=0"], ["an index must be"]),
    (["sum(x, axis=y)", "--at", "x=[1.0]", "--at", "y=0"], ["keyword argument axis="]),
    (["x * 1j", "--at", "x=1.0"], ["complex number"]),
    (["sin(*x)", "--at", "x=[1.0]"], ["starred argument"]),
    (["10 ** 10 ** 10 * x", "--at", "x=1.0"], ["too large"]),
    (["grad(x)", "--at", "x=1.0"], ["unknown function 'grad'"]),
    (["x+" * 3000 + "x", "--at", "x=1.0"], ["invalid expression"]),
    (["(" * 300 + "x" + ")" * 300, "--at", "x=1.0"], ["invalid expression"]),
    (["x" * 10001, "--at", "x=1.0"], ["longer than"]),
    (["x ** 2 ** 2000", "--at", "x=1.0"], ["integer of 2001 bits does not fit in int64"]),
    (["1 / 0 + x", "--at", "x=1.0"], ["division by zero in 1 / 0"]),
    (["(-8) ** 0.5 + x", "--at", "x=1.0"], ["complex number"]),
    (["zeros((2000, 2000)) + x", "--at", "x=1.0"], ["limit is"]),
    # values
    ([SEED], ["no value for 'x'", "--at x="]),
    (["x * y", "--at", "x=1.0"], ["no value for 'y'"]),
    ([SEED, "--shape", "x=2,a"], ["bad shape", "'a'"]),
    ([SEED, "--shape", "x=-1,2"], ["negative dimension"]),
    ([SEED, "--shape", "x=2.5"], ["bad shape"]),
    ([SEED, "--shape", "x=100000,100000"], ["limit is"]),
    ([SEED, "--at", "x=[1, 2"], ["not a number or a list of numbers"]),
    ([SEED, "--at", "x='a'"], ["not a number or a list of numbers"]),
    ([SEED, "--at", "x=True"], ["not a number or a list of numbers"]),
    ([SEED, "--at", "x=1+2j"], ["not a number or a list of numbers"]),
    ([SEED, "--at", "x=__import__('os')"], ["not a number or a list of numbers"]),
    ([SEED, "--at", "x=[[1], [1, 2]]"], ["non-uniform length"]),
    ([SEED, "--at", "x"], ["--at takes NAME=VALUE"]),
    ([SEED, "--at", "z=1.0"], ["no input 'z'", "the inputs are x"]),
    ([SEED, "--at", "x=1.0", "--shape", "x=2"], ["given twice"]),
    # inside the function
    (["x + y", "--at", "x=[1.0, 2.0]", "--at", "y=[1.0, 2.0, 3.0]"],
     ["[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."]),
    (["x @ y", "--at", "x=[[1.0, 2.0]]", "--at", "y=[[1.0, 2.0]]"], ["[matmul]"]),
    (["x[5]", "--at", "x=[1.0, 2.0]"], ["out of bounds"]),
    (["sum(x, axis=3)", "--at", "x=[1.0, 2.0]"], ["Invalid axis 3"]),
    # transforms and their options
    ([SEED, "--at", "x=[1.0, 2.0]", "--transform", "grad"], ["[vjp]"]),
    ([SEED, "--at", "x=0.5", "--transform", "hessian"], ["invalid choice: 'hessian'"]),
    ([SEED, "--at", "x=0.5", "--transform", "grad", "--wrt", "y"], ["--wrt y", "no input 'y'"]),
    ([SEED, "--at", "x=[0.5]", "--transform", "vmap", "--wrt", "x"], ["--wrt goes with"]),
    ([SEED, "--at", "x=0.5", "--transform", "grad", "--wrt", "x", "--wrt", "x"], ["given twice"]),
    (["x * y", "--at", "x=1.0", "--at", "y=1.0", "--transform", "jvp", "--wrt", "x",
      "--tangent", "y=1.0"], ["not one of the --wrt inputs"]),
    ([SEED, "--at", "x=0.5", "--cotangent", "1.0"], ["--cotangent goes with --transform vjp"]),
    ([SEED, "--at", "x=0.5", "--transform", "vjp", "--cotangent", "[1.0, 2.0]"], ["[vjp]"]),
    ([SEED, "--at", "x=0.5", "--transform", "jvp", "--tangent", "y=1.0"], ["no input 'y'"]),
    ([SEED, "--at", "x=[1.0]", "--transform", "vmap", "--in-axes", "a"], ["--in-axes takes"]),
    (["x * y", "--at", "x=[1.0]", "--at", "y=[2.0, 3.0]", "--transform", "vmap"], ["[vmap]"]),
    ([SEED, "--at", "x=0.5", "--max-nodes", "0"], ["--max-nodes must be at least 1"]),
    ([SEED, "--at", "x=0.5", "--max-nodes", "many"], ["invalid int value"]),
    # output
    ([SEED, "--at", "x=0.5", "--format", "svg"], ["needs an output file"]),
    ([SEED, "--at", "x=0.5", "--format", "gif"], ["invalid choice: 'gif'"]),
    ([SEED, "--at", "x=0.5", "-o", "/nonexistent-dir/g.dot"], ["cannot write"]),
    ([], ["required"]),
]


@pytest.mark.parametrize("argv, fragments", BAD, ids=[" ".join(a) or "<none>" for a, _ in BAD])
def test_bad_input(capsys, argv, fragments):
    assert_one_line_error(*run(capsys, *argv), *fragments)


# Attempts to run code through the formula. {m} is the marker file's path.
ATTACKS = [
    "__import__('os').system('touch {m}')",
    "x.__class__",
    "x.__class__.__base__.__subclasses__()",
    "(lambda: __import__('os').system('touch {m}'))()",
    "[__import__('os').system('touch {m}') for i in x]",
    "open('{m}', 'w')",
    "exec(\"open('{m}', 'w')\")",
    "eval(\"open('{m}', 'w')\")",
    "getattr(x, 'T')",
    "getattr(__import__('os'), 'system')('touch {m}')",
    "\"a\" * 3",
    "f\"{{__import__('os').system('touch {m}')}}\"",
    "sum(x, axis=__import__('os').system('touch {m}'))",
    "x[__import__('os').system('touch {m}')]",
    "(y := __import__('os'))",
    "__builtins__",
    "sin(x)(open('{m}', 'w'))",
    "x if open('{m}', 'w') else x",
    "compile('1', 'f', 'eval')",
    "breakpoint()",
    "globals()",
    "sin(**{{'a': open('{m}', 'w')}})",
    "async_eval(x)",
    "random.normal((1,))",
]


@pytest.mark.parametrize("formula", ATTACKS)
def test_formulas_cannot_run_code(capsys, tmp_path, formula):
    marker = tmp_path / "ran"
    expression = formula.format(m=marker)
    status, out, err = run(capsys, expression, "--at", "x=[1.0, 2.0]")
    assert_one_line_error(status, out, err)
    assert "not allowed" in err or "unknown function" in err or "an index must be" in err \
        or "keyword argument" in err
    assert not marker.exists()


@pytest.mark.parametrize("formula", [
    "__import__('os').system('touch {m}')",
    "open('{m}', 'w')",
    "(lambda: open('{m}', 'w'))()",
    "x.__class__",
])
def test_formulas_cannot_run_code_in_a_subprocess(tmp_path, formula):
    marker = tmp_path / "ran"
    r = run_process(formula.format(m=marker), "--at", "x=1.0")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("mlxref: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert not marker.exists()


def test_refused_before_any_op_runs(monkeypatch, capsys):
    """The whole formula is checked first: an allowed call before the refused part never runs."""
    from mlxref.cli import expr

    calls = []
    monkeypatch.setitem(expr.OPS, "sin", lambda *a, **k: calls.append(a))
    for formula in ("sin(x) + x.T", "sin(x) * open('f')", "sin(x) + [i for i in x]", "sin(x) + y[z]"):
        status, out, err = run(capsys, formula, "--at", "x=1.0", "--at", "y=[1.0]", "--at", "z=0")
        assert_one_line_error(status, out, err)
    assert calls == []


def test_expression_module_directly():
    import mlxref.core as mx
    from mlxref.cli import expr

    e = expr.parse("w @ x + b * sum(x)")
    assert e.variables == ("w", "x", "b")
    result = e(mx.array([[1.0, 2.0]]), mx.array([[3.0], [4.0]]), mx.array(0.5))
    assert result.tolist() == [[14.5]]
    assert expr.parse_shape("2,3") == (2, 3) and expr.parse_shape("(4,)") == (4,)
    assert expr.parse_shape("") == ()
    assert expr.parse_value("[[1, 2], [3, 4]]").shape == (2, 2)
    with pytest.raises(expr.ExpressionError, match="not a number"):
        expr.parse_value("[1, 'a']")
    assert "eval" not in expr.OPS and "grad" not in expr.OPS and "vmap" not in expr.OPS


def _write(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_bad_files(capsys, tmp_path):
    good = _write(tmp_path, "good.py", """
        import mlxref.core as mx
        def f(x):
            return mx.sin(x)
        def g(*xs):
            return xs[0]
        def oops(x):
            return x / undefined_name
        def mismatch(x):
            return x + mx.array([1.0, 2.0, 3.0])
        h = 3
    """)
    broken = _write(tmp_path, "broken.py", "def f(x)\n    return x\n")
    raising = _write(tmp_path, "raising.py", "raise RuntimeError('no import for you')\n")
    cases = [
        ([f"{tmp_path}/missing.py:f", "--at", "x=1.0"], ["no such file"]),
        ([f"{good}:nope", "--at", "x=1.0"], ["has no function 'nope'"]),
        ([good, "--at", "x=1.0"], ["name the function"]),
        ([f"{good}:h", "--at", "x=1.0"], ["is not a function"]),
        ([f"{good}:g", "--at", "x=1.0"], ["*xs"]),
        ([f"{good}:f"], ["no value for 'x'"]),
        ([f"{good}:f", "--at", "y=1.0"], ["no input 'y'"]),
        ([f"{good}:oops", "--at", "x=1.0"], ["NameError", "undefined_name"]),
        ([f"{good}:mismatch", "--at", "x=[1.0, 2.0]"],
         ["[broadcast_shapes] Shapes (2) and (3) cannot be broadcast."]),
        ([f"{broken}:f", "--at", "x=1.0"], ["cannot import", "SyntaxError"]),
        ([f"{raising}:f", "--at", "x=1.0"], ["cannot import", "no import for you"]),
    ]
    for argv, fragments in cases:
        assert_one_line_error(*run(capsys, *argv), *fragments)


def test_bad_inputs_in_a_subprocess(tmp_path):
    cases = [
        ["sin(x", "--at", "x=1.0"],
        [SEED],
        [SEED, "--shape", "x=2,a"],
        ["x + y", "--at", "x=[1.0, 2.0]", "--at", "y=[1.0, 2.0, 3.0]"],
        [f"{tmp_path}/missing.py:f"],
        [SEED, "--at", "x=0.5", "--transform", "hessian"],
        [SEED, "--at", "x=[1.0, 2.0]", "--transform", "grad"],
    ]
    errors = {}
    for argv in cases:
        r = run_process(*argv)
        assert r.returncode == 2, (argv, r.stderr)
        assert r.stdout == "" and "Traceback" not in r.stderr
        assert r.stderr.startswith("mlxref: error: ") and r.stderr.count("\n") == 1, r.stderr
        errors[tuple(argv)] = r.stderr
    assert "[broadcast_shapes] Shapes (2) and (3) cannot be broadcast." in errors[tuple(cases[3])]


def test_graphviz_missing_for_binary_formats(tmp_path):
    """Without `dot` on PATH: one line saying what to install, exit 2, the .dot still written."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty))
    out_file = tmp_path / "seed.svg"
    r = run_process(SEED, "--at", "x=0.5", "-o", str(out_file), env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("mlxref: error: ") and "graphviz" in r.stderr.lower()
    dot_file = tmp_path / "seed.dot"
    assert str(dot_file) in r.stderr
    assert dot_file.read_text().startswith("digraph")
    assert not out_file.exists()
    # dot and text need no binary.
    r = run_process(SEED, "--at", "x=0.5", "--format", "dot", env=env)
    assert r.returncode == 0 and "digraph" in r.stdout


def test_other_commands_still_work(capsys):
    assert main(["demo"]) == 0
    assert "2.23733" in capsys.readouterr().out
    assert main(["demo", "--x", "abc"]) == 2
    assert "invalid float value" in capsys.readouterr().err



# --- limits and hygiene (mlxref/viz/budget.py) -------------------------------------------


@pytest.mark.parametrize("name, said", [("g.jpg", "unknown suffix '.jpg'"), ("g", "has no suffix")])
def test_an_output_suffix_that_names_no_format_is_refused(capsys, tmp_path, name, said):
    path = tmp_path / name
    status, out, err = run(capsys, SEED, "--at", "x=0.5", "-o", str(path))
    assert_one_line_error(status, out, err, said, ".svg", ".png", "--format")
    assert not path.exists()


def test_work_over_max_work_is_refused(capsys):
    status, out, err = run(capsys, "sum(x @ x)", "--shape", "x=20,20", "--max-work", "1000")
    assert_one_line_error(status, out, err, "max_work=1,000", "matmul of shape (20, 20), 8,000",
                          "--max-work")
    status, out, err = run(capsys, "sum(x @ x)", "--shape", "x=20,20", "--max-work", "100000")
    assert status == 0 and err == "", err


def test_limits_must_be_positive(capsys):
    for option in ("--max-work", "--timeout", "--max-pixels"):
        status, out, err = run(capsys, SEED, "--at", "x=0.5", option, "0")
        assert_one_line_error(status, out, err, f"{option} must be positive")


def test_a_large_drawing_is_collapsed_with_a_note(capsys, tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot binary is not installed")
    formula = "x" + " + sin(x)" * 45  # 91 nodes, over the default 80
    status, out, err = run(capsys, formula, "--at", "x=0.5", "-o", str(tmp_path / "g.svg"))
    assert status == 0 and out == ""
    assert err.count("\n") == 1 and err.startswith("mlxref: note: "), err
    assert "91 nodes, over max_nodes=80" in err and "--max-nodes" in err
    assert "more nodes" in (tmp_path / "g.svg").read_text()
    # The text listing stays whole, without a note.
    status, out, err = run(capsys, formula, "--at", "x=0.5")
    assert status == 0 and err == "" and "more nodes" not in out


FUNCTIONS_THAT_LEAVE = """\
import sys

def exits(x):
    sys.exit(3)

def interrupted(x):
    raise KeyboardInterrupt
"""


def test_a_function_that_exits_or_is_interrupted_gives_one_line(tmp_path):
    path = tmp_path / "leaving.py"
    path.write_text(FUNCTIONS_THAT_LEAVE)
    r = run_process(f"{path}:exits", "--at", "x=0.5")
    assert_one_line_error(r.returncode, r.stdout, r.stderr, "exits called sys.exit(3)")
    r = run_process(f"{path}:interrupted", "--at", "x=0.5")
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "mlxref: interrupted\n")


# --- models and the README's example file (issue 16) -----------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_model_factory_draws_the_forward_with_weights_named_by_path(capsys, tmp_path):
    """A function returning an nn.Module, or a Module class: the model's forward,
    the weights inputs named by path, never their initialisation."""
    import mlxref.core as mx
    import mlxref.nn as nn
    from mlxref import viz
    from mlxref.utils import tree_flatten

    source = _write(tmp_path, "models.py", """
        import mlxref.nn as nn

        def mlp(hidden=3):
            return nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, 1))

        class Tiny(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(2, 1)

            def __call__(self, x):
                return self.lin(x)

        def nothing():
            return 3
    """)
    status, out, err = run(capsys, f"{source}:mlp", "--shape", "x=4,2")
    assert status == 0, err
    # The same drawing from Python: the model built after seed(0), x as --shape makes it.
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    import zlib
    x = mx.random.normal((4, 2), key=mx.random.key(zlib.crc32(b"x")))
    expected = viz.trace(lambda x, model: model(x), [x, model], names=["x", ""])
    assert out.splitlines()[1:] == expected.to_text().splitlines()[1:]
    assert out.startswith("# graph of mlp(x)\n")
    paths = [p for p, _ in tree_flatten(model.parameters())]
    inputs = [line.split(" = ")[0] for line in out.splitlines() if " = input " in line]
    assert inputs == ["x"] + paths
    assert "randombits" not in out and "uniform" not in out
    assert run(capsys, f"{source}:mlp", "--shape", "x=4,2")[1] == out  # the same weights each run

    status, out, err = run(capsys, f"{source}:Tiny", "--shape", "x=1,2", "--transform", "vjp")
    assert status == 0, err
    for path in ("lin.weight", "lin.bias", "x"):
        assert f"gradient {path}: " in out
    assert_one_line_error(*run(capsys, f"{source}:nothing", "--at", "x=1"),
                          "takes no parameters and returns no nn.Module")
    assert_one_line_error(*run(capsys, f"{source}:mlp", "--shape", "x=4,2", "--transform", "jvp",
                               "--tangent", "x=1"), "--tangent with a model goes with --wrt")


def test_an_evaluated_output_gets_one_line_on_stderr(capsys, tmp_path):
    source = _write(tmp_path, "done.py", """
        import mlxref.core as mx
        y = mx.exp(mx.array(1.0))
        y.item()

        def f(x):
            return y
    """)
    status, out, err = run(capsys, f"{source}:f", "--at", "x=1")
    assert status == 0
    assert err.count("\n") == 1 and err.startswith("mlxref: warning: ") and "viz.recording()" in err


def _readme_model_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as file:
        lines = [line.strip() for line in file]
    from mlxref.cli import _graph_epilog
    lines += [line.strip() for line in _graph_epilog().splitlines()]
    return [line for line in lines
            if line.startswith("mlxref graph ") and "tutorials/examples/model.py" in line]


@pytest.mark.parametrize("command", _readme_model_commands())
def test_readme_and_epilog_examples_of_the_example_file(capsys, monkeypatch, command):
    import shlex

    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[2:]
    assert "-o" not in argv  # they print to stdout, so they run anywhere
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert out and err == ""


def test_the_readme_shows_both_example_functions():
    commands = _readme_model_commands()
    assert any(":loss " in c for c in commands) and any(":mlp " in c for c in commands)
