"""``python -m mlxref.as_mlx``: a program written for MLX runs on mlxref."""

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import sys
    import mlx.core as mx
    import mlx.nn as nn
    from mlx.nn.layers.linear import Linear
    from mlx.utils import tree_flatten
    import mlxref.core, mlxref.nn.layers.linear
    assert mx is mlxref.core and Linear is mlxref.nn.layers.linear.Linear is nn.Linear
    print(sys.argv[1:], (mx.array([1.5, 2.0]) * 2).tolist(), len(tree_flatten(nn.Linear(2, 3).parameters())))
""")


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mlxref.as_mlx", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_a_script_imports_mlx_s_names_and_gets_mlxref_s_modules(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    done = _run(str(tmp_path / "prog.py"), "a", "b")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['a', 'b'] [3.0, 4.0] 2\n"


def test_a_module_runs_with_the_script_s_folder_importable(tmp_path):
    (tmp_path / "helper_mod.py").write_text(PROGRAM)
    done = _run("-m", "helper_mod", "x", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['x'] [3.0, 4.0] 2\n"


def test_a_name_mlxref_lacks_and_real_mlx_already_imported_are_refused(tmp_path):
    (tmp_path / "missing.py").write_text("import mlx.no_such_module\n")
    done = _run(str(tmp_path / "missing.py"))
    assert done.returncode == 1 and "No module named 'mlxref.no_such_module'" in done.stderr
    code = ("import sys, types; sys.modules['mlx'] = types.ModuleType('mlx')\n"
            "from mlxref import as_mlx; as_mlx.install()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "real MLX is imported already" in done.stderr


def test_usage():
    assert _run().returncode == 2 and "usage: python -m mlxref.as_mlx" in _run().stderr
    assert _run("--help").returncode == 0


def test_a_missing_module_or_script_gets_python_s_one_line(tmp_path):
    # As `python -m nosuch` and `python nosuch.py` say it (mlx.launch shows
    # each rank's line), never a traceback from the runner.
    for args in (["-m", "no_such_module_here"], ["-m", "mlx.no_such_module"],
                 [str(tmp_path / "nosuch.py")]):
        ours = _run(*args, cwd=tmp_path)
        theirs = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=tmp_path,
                                timeout=60)
        assert "Traceback" not in ours.stderr
        assert ours.returncode == theirs.returncode != 0
        if args[1:2] != ["mlx.no_such_module"]:  # (real MLX may be installed)
            assert ours.stderr == theirs.stderr
        else:
            assert ours.stderr.strip().endswith("No module named mlx.no_such_module")
