"""The runner for MLX's distributed pages and examples (``python -m
mlxref.manual.mlx_distributed``): it finds the commands a page shows and what
it shows below them, tells apart what can run on this machine, compares
launchers' interleaved output fairly, and catches a program that prints
something else on mlxref."""

import subprocess
import sys

import pytest

from support import needs_mlx

from mlxref.manual import mlx_distributed as md

PAGE = """
Getting started
===============

.. code:: python

    import mlx.core as mx

    world = mx.distributed.init()
    print(world.rank(), mx.distributed.all_sum(mx.array([1.0, 2.0]) * (world.rank() + 1)))

.. code:: shell

    $ mlx.launch -n 2 my_script.py
    1 array([3, 6], dtype=float32)
    0 array([3, 6], dtype=float32)

.. code:: shell

    $ mlx.launch --hosts ip1,ip2 my_script.py
    $ mlx.launch --backend jaccl -n 2 my_script.py

.. code-block::

   mlx.launch --verbose \\
        -n 2 my_script.py  # a comment

.. code:: json

    [{"ssh": "hostname1", "ips": ["123.123.123.1"]}]

.. code:: python

    model = ...
    for x in model:
        pass
"""


def test_a_page_s_commands_what_it_shows_and_what_cannot_run_here():
    runs, skipped = md.page_runs([("page", PAGE)])
    commands = [r for r in runs if r.argv is not None]
    assert [r.argv for r in commands] == [["mlx.launch", "-n", "2", "my_script.py"],
                                          ["mlx.launch", "--verbose", "-n", "2", "my_script.py"]]
    assert commands[0].shown == ["1 array([3, 6], dtype=float32)", "0 array([3, 6], dtype=float32)"]
    assert commands[1].shown is None
    # The script a command names is the page's first program.
    assert commands[0].files == {"my_script.py": md.code_blocks(PAGE)[0]["code"][0]}
    assert [(page, why) for page, _, why in skipped] == [
        ("page", "needs the hosts it names"), ("page", "needs a Thunderbolt RDMA mesh or CUDA")]
    programs = [r for r in runs if r.program is not None]
    assert [r.ranks for r in programs] == [2, 2]
    assert all(r.program.startswith(md.PRELUDE) for r in programs)


def test_the_local_ranks_a_command_asks_for():
    # One reading for "can it run here" and for MLX's mpirun stand-in.
    assert [md.local_ranks(a.split()) for a in (
        "mlx.launch -n 4 s.py", "mlx.launch -n4 s.py", "mlx.launch --repeat-hosts 3 s.py",
        "mpirun -np 2 python s.py", "mlx.launch --verbose s.py")] == ["4", "4", "3", "2", None]
    assert md.why_not_here("mlx.launch --verbose s.py".split()) == "names no local ranks"


def test_launchers_interleaved_output_compares_as_the_same_and_a_change_does_not():
    lines = "0 array([2, 2], dtype=float32)\n1 array([2, 2], dtype=float32)\n"
    assert md.same_output(lines, "1 array([2, 2], dtype=float32)\n0 array([2, 2], dtype=float32)\n")
    # Two ranks' writes met inside a line.
    assert md.same_output(lines, "0 1array([2, 2], dtype=float32)\n array([2, 2], dtype=float32)\n")
    assert not md.same_output(lines, lines.replace("2, 2", "2, 3", 1))
    assert not md.same_output(lines, lines + "2 array([2, 2], dtype=float32)\n")


def test_times_and_rates_are_masked_and_nothing_else():
    line = "Loss 0.017638, Throughput 21.86 (it/s) over 2 rank(s), took 0.5 s, 3e-05 ms"
    assert md.comparable(line) == \
        "Loss 0.017638, Throughput <time> (it/s) over 2 rank(s), took <time> s, <time> ms"


def test_a_fragment_is_counted_apart_and_a_difference_is_shown_per_rank():
    program = md.Run("p", program="print(1)", ranks=2)
    verdict, _ = md.compare(program, (["TypeError: 'ellipsis' object is not iterable\n"] * 2, None),
                            (["TypeError: 'ellipsis' object is not iterable\n"] * 2, None))
    assert verdict == "fragment"
    verdict, lines = md.compare(program, (["a\n", "b\n"], None), (["a\n", "c\n"], None))
    assert verdict == "different"
    assert lines == ["    rank 1 MLX:    b", "    rank 1 mlxref: c"]


@needs_mlx
def test_a_page_s_command_and_block_run_on_both_libraries(tmp_path):
    runs, _ = md.page_runs([("page", PAGE)])
    command, block = runs[1], runs[0]
    assert command.argv == ["mlx.launch", "-n", "2", "my_script.py"]
    theirs, ours = md.run(command, "mlx"), md.run(command, "mlxref")
    verdict, lines = md.compare(command, theirs, ours)
    assert verdict == "same"
    # Real MLX 0.32 cannot run a bare script: the runner says how it ran it.
    assert "    (MLX: MLX's launcher runs a bare script as a program (not found); run after -- python)" in lines
    assert "    the page shows it: MLX yes, mlxref yes" in lines
    # A program's ranks each write their own output.
    assert md.run(block, "mlxref")[0] == ["0 array([3, 6], dtype=float32)\n",
                                          "1 array([3, 6], dtype=float32)\n"]


@needs_mlx
def test_a_program_printing_something_else_on_mlxref_is_different():
    program = md.Run("names", program=md.PRELUDE + "print(mx.__name__, mx.distributed.init().rank())",
                     ranks=2)
    verdict, lines = md.compare(program, md.run(program, "mlx"), md.run(program, "mlxref"))
    assert verdict == "different"
    assert "    rank 1 mlxref: mlxref.core 1" in lines


@pytest.mark.parametrize("args, words", [
    (["--ranks", "0"], "--ranks takes rank counts"),
    ([], "mlx-docs: no docs/src/usage/distributed.rst"),
])
def test_the_command_says_what_is_wrong_in_one_line(tmp_path, args, words):
    done = subprocess.run([sys.executable, "-m", "mlxref.manual.mlx_distributed", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert words in done.stderr and "Traceback" not in done.stderr
