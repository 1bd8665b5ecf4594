"""Seeing collectives: the collective nodes and their rules in viz's drawings,
``mlxref graph --ranks``, and the ring all-reduce's figure.

The drawings are checked on ranks that are threads (tests/core/distributed/
fake.py) and on ranks that are processes (``mlxref graph --ranks 2``, through
mlxref.launch); the figure's steps are checked against what the ring's
processes report under ``mlxref.launch`` and its results against real MLX
under ``mlx.launch``.
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import mlxref.core as mx
from mlxref import viz
from mlxref.core.distributed import ring as ring_backend
from mlxref.launch import free_local_ports
from mlxref.viz import ring as viz_ring
from tests.core.distributed.fake import run_ranks

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MLXREF_RING_TIMEOUT": "8"}
PROGRAM = textwrap.dedent('''
    import mlxref.core as mx


    def f(x):
        g = mx.distributed.init()
        return mx.distributed.all_sum(mx.sin(x) * (g.rank() + 1))


    def h(x):
        return mx.sum(mx.distributed.all_gather(x * 2) ** 2)


    def bad(x):
        if mx.distributed.init().rank() == 1:
            raise ValueError("rank one is unhappy")
        return mx.distributed.all_sum(x)
''')


def mlxref_cli(*args, cwd, timeout=30):
    return subprocess.run([sys.executable, "-m", "mlxref", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def program(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path


# --- 1. collectives in drawings (ranks as threads) ------------------------------------


def _drawings(transform, fun, x):
    return run_ranks(2, lambda g: viz.trace(lambda x: fun(x, g), [x], transform=transform))


def test_all_sum_node_and_its_vjp_passing_the_cotangent_through():
    x = mx.array([0.5, 1.0])
    drawings = _drawings("vjp", lambda x, g: mx.distributed.all_sum(x * 2, group=g), x)
    for rank, d in enumerate(drawings):
        text = d.to_text()
        assert f"all_sum_4 = all_sum[group=rank {rank} of 2] mul_3" in text
        assert f"collective: the sum over 2 ranks; drawn on rank {rank}" in text
        assert "(2,) float32: [2, 4]; output, collective" in text  # each rank's x * 2, summed
        step = next(line for line in text.splitlines() if line.strip().startswith("1."))
        assert "all_sum_4  cotangent [1, 1]  ->  [0] mul_3 += [1, 1]" in step
        assert "all_sum's vjp: the cotangent passes through unchanged" in step
        dot = d.to_dot()
        assert "light blue, bold: collectives" in dot  # (an output: drawn orange)
        assert "drawn on rank" in dot and 'COLOR="#01579b"' in dot
        assert "the cotangent passes through unchanged" in dot


def test_a_collective_inside_the_graph_is_light_blue():
    x = mx.array([0.5, 1.0])
    (d, _) = _drawings("vjp", lambda x, g: mx.distributed.all_max(x, group=g) * 3, x)
    assert 'all_max_1 [label=' in d.to_dot()
    line = next(li for li in d.to_dot().splitlines() if li.strip().startswith("all_max_1"))
    assert 'fillcolor="#e1f5fe" color="#01579b"' in line and "the maximum over 2 ranks" in line


def test_all_gather_vjp_takes_this_ranks_slice():
    x = mx.array([1.0, 2.0, 3.0])
    drawings = _drawings("grad", lambda x, g: mx.sum(mx.distributed.all_gather(x, group=g)
                                                     * mx.arange(6)), x)
    for rank, d in enumerate(drawings):
        text = d.to_text()
        assert f"all_gather[group=rank {rank} of 2]" in text
        assert f"slice [{3 * rank}:{3 * rank + 3}] on axis 0 (rank {rank}'s block" in text
        # the backward graph holds the slice, and the gradient is this rank's block
        assert f"start_indices=({3 * rank},)" in text
        gradient = [3.0 * rank + k for k in range(3)]
        assert f"gradient x: [{', '.join('%g' % v for v in gradient)}]" in text


@pytest.mark.parametrize("transform, words", [
    ("jvp", "all_sum's jvp: the tangent goes through all_sum too"),
    ("vmap", "all_sum's vmap: the batched input goes through all_sum"),
])
def test_jvp_and_vmap_say_the_collective_communicates(transform, words):
    x = mx.array([[1.0, 2.0], [3.0, 4.0]])
    drawings = _drawings(transform, lambda x, g: mx.distributed.all_sum(x, group=g), x)
    assert all(words in d.to_text() for d in drawings)


def test_one_process_draws_no_collective():
    d = viz.trace(lambda x: mx.distributed.all_sum(x * 2), [mx.array([1.0])], transform="vjp")
    assert "all_sum" not in d.to_text() and "collective" not in d.to_dot()


# --- 2. mlxref graph --ranks -----------------------------------------------------------


def test_graph_ranks_draws_rank_0_and_is_deterministic(program):
    args = ["graph", "prog.py:f", "--shape", "x=3", "--transform", "vjp", "--ranks", "2"]
    first = mlxref_cli(*args, cwd=program)
    assert first.returncode == 0, first.stderr
    assert "all_sum_5 = all_sum[group=rank 0 of 2] mul_4" in first.stdout
    assert "the cotangent passes through unchanged" in first.stdout
    assert first.stderr == ""
    again = mlxref_cli(*args, cwd=program)
    assert again.stdout == first.stdout


def test_graph_ranks_writes_the_rank_asked_for(program):
    out = program / "h.dot"
    run = mlxref_cli("graph", "prog.py:h", "--shape", "x=2", "--transform", "grad",
                     "--ranks", "2", "--rank", "1", "-o", str(out), cwd=program)
    assert run.returncode == 0, run.stderr
    dot = out.read_text()
    assert "all_gather (group=rank 1 of 2)" in dot
    assert "slice [2:4] on axis 0" in dot


def test_graph_ranks_failure_is_one_line_naming_the_rank(program):
    run = mlxref_cli("graph", "prog.py:bad", "--shape", "x=2", "--ranks", "2", cwd=program)
    assert run.returncode == 2
    assert run.stderr == "mlxref: error: rank 1: rank one is unhappy\n"


def test_graph_on_one_process_says_why_there_is_no_collective(program):
    run = mlxref_cli("graph", "prog.py:f", "--shape", "x=2", cwd=program)
    assert run.returncode == 0 and "all_sum" not in run.stdout
    assert run.stderr.startswith("mlxref: note: prog.py uses mx.distributed, but this "
                                 "process is a group of one")
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (["graph", "sin(x)", "--at", "x=1", "--ranks", "2"], "an expression has no collectives"),
    (["graph", "prog.py:f", "--shape", "x=2", "--ranks", "1"], "--ranks must be from 2 to 8"),
    (["graph", "prog.py:f", "--shape", "x=2", "--ranks", "2", "--rank", "2"],
     "--rank must be from 0 to 1, not 2"),
    (["ring-allreduce", "9"], "ranks must be an integer from 2 to 8, not 9"),
    (["ring-allreduce", "3", "--values", "[[1, 2]]"], "values must be 3 lists"),
    (["ring-allreduce", "3", "--values", "x"], "--values takes one list of numbers per rank"),
    (["ring-allreduce", "3", "--format", "png"], "--format png needs an output file"),
    (["ring-allreduce", "2", "--split", "--size", "3"], "split needs at least 4 elements"),
])
def test_cli_errors_are_one_line(program, args, message):
    run = mlxref_cli(*args, cwd=program)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("mlxref: error: ") and run.stderr.count("\n") == 1
    assert message in run.stderr


# --- 3. the ring all-reduce's figure ------------------------------------------------------

RING_SCRIPT = textwrap.dedent('''
    import json, sys
    import mlxref.core as mx
    impl = mx.distributed.init(strict=True).impl()
    reports = []
    impl.observer = lambda **step: reports.append(step)
    values = json.loads(sys.argv[1])[impl.rank()]
    result = impl.all_sum(mx.float32.store(values), mx.float32)
    print(json.dumps({"rank": impl.rank(), "reports": reports, "result": result}))
''')


def _ring_processes(tmp_path, values):
    """Every rank's reports and result from ring.py's all_sum on real processes."""
    script = tmp_path / "ring_steps.py"
    script.write_text(RING_SCRIPT)
    run = subprocess.run([sys.executable, "-m", "mlxref.launch", "-n", str(len(values)),
                          str(script), json.dumps(values)], env=ENV, capture_output=True,
                         text=True, timeout=30)
    ranks = sorted((json.loads(line) for line in run.stdout.splitlines()),
                   key=lambda r: r["rank"])
    assert len(ranks) == len(values), run.stderr
    return ranks


def _plain(report):
    return {k: list(v) if isinstance(v, tuple) else v for k, v in report.items()}


@pytest.mark.parametrize("n", [2, 3, 4])
def test_figure_steps_are_a_real_runs(tmp_path, n):
    values = [[0.1 * (r + 1) + k * 1e7 for k in range(n + 1)] for r in range(n)]
    figure = viz.ring_allreduce(n, values=values)
    ranks = _ring_processes(tmp_path, values)
    assert len(figure.steps) == 2 * (n - 1)
    for rank in ranks:
        mine = [_plain(step[rank["rank"]]) for step in figure.steps]
        assert mine == rank["reports"]
        assert figure.results[rank["rank"]] == rank["result"]


def test_figure_results_are_mlxs(tmp_path):
    pytest.importorskip("mlx.core")
    launcher = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    if not os.path.exists(launcher):
        pytest.skip("mlx.launch is not installed")
    values = [[0.1, 1e8, 3.0, -2.5], [0.2, 3.0, 1e-8, 7.0], [0.3, 1.0, 5.0, 0.5]]
    script = tmp_path / "mlx_sum.py"
    script.write_text(textwrap.dedent('''
        import json, sys
        import mlx.core as mx
        g = mx.distributed.init(strict=True)
        x = mx.array(json.loads(sys.argv[1])[g.rank()], dtype=mx.float32)
        print(json.dumps(mx.distributed.all_sum(x).tolist()))
    '''))
    port = free_local_ports(1)[0]
    run = subprocess.run([launcher, "-n", "3", "-p", str(port), "--", sys.executable,
                          str(script), json.dumps(values)], env=ENV, capture_output=True,
                         text=True, timeout=60)
    lines = run.stdout.splitlines()
    assert len(lines) == 3, run.stderr
    figure = viz.ring_allreduce(3, values=values)
    assert all(json.loads(line) == figure.results[0] for line in lines)


def test_figure_text_follows_the_ring():
    figure = viz.ring_allreduce(3)
    text = figure.to_text()
    assert "elements [0:6] go round to the left: rank r sends to rank r - 1" in text
    assert ("rank 0 sends x[0:2] = [1, 2] to rank 2, receives x[2:4] = [13, 14] from rank 1:"
            " [3, 4] + [13, 14] = [16, 18]") in text
    assert "rank 0 sends x[2:4] = [16, 18] to rank 2" in text  # its partial sum goes on
    assert "[4:6] now every rank" in text and "and keeps it" in text
    assert text.rstrip().endswith("rank 2: 33, 36, 39, 42, 45, 48")


def test_figure_both_directions_and_padding():
    split = viz.ring_allreduce(2, split=True)
    assert [step[0]["direction"] for step in split.steps] == [1, 1, -1, -1]
    assert "part 2 of 2: elements [2:4] go round to the right" in split.to_text()
    padded = viz.ring_allreduce(4, size=3)
    assert {step[0]["direction"] for step in padded.steps} == {-1}
    assert "padded with zeros to 4" in padded.to_text()
    assert padded.results[0] == [64.0, 68.0, 72.0]


def test_figure_max_and_dtype():
    figure = viz.ring_allreduce(2, values=[[1, 5], [4, 2]], dtype=mx.int32, op="max")
    assert figure.results == [[4, 5], [4, 5]]
    assert "max([1], [4]) = [4]" in figure.to_text() or "max([5], [2]) = [5]" in figure.to_text()


def test_figure_is_deterministic_and_the_cli_writes_it(tmp_path):
    first, second = viz.ring_allreduce(4), viz.ring_allreduce(4)
    assert first.to_dot() == second.to_dot() and first.to_text() == second.to_text()
    dot = first.to_dot()
    assert dot.count("->") >= 4 * 6  # every rank sends at each of the 6 steps
    assert "reduce-scatter step 3 of 3" in dot and "all-gather step 1 of 3" in dot
    run = mlxref_cli("ring-allreduce", "4", "-o", str(tmp_path / "ring.dot"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "ring.dot").read_text() == dot + "\n"
    text = mlxref_cli("ring-allreduce", "4", cwd=tmp_path).stdout
    assert text == first.to_text()


def test_observer_unset_costs_nothing_and_is_off_by_default():
    assert ring_backend.RingGroup.observer is None
    assert ring_backend.RingGroup.min_send_size == ring_backend.MIN_SEND_SIZE
    assert viz_ring.default_values(2, 2) == [[1, 2], [11, 12]]
