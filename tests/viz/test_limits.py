"""The limits every drawing runs under (mlxref/viz/budget.py): work, nodes, dot's time, pixels.

Each test reproduces a defect a lecturer met (a matmul that ran for a minute,
dot that never returned, a 50-megapixel PNG, --max-nodes losing the walk)
through a tiny limit, never through the clock.
"""

import os
import shutil
import stat
import struct
import textwrap
import time

import pytest

import mlxref.core as mx
from mlxref import viz
from mlxref.viz import budget

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def chain(n):
    def f(x):
        y = x
        for _ in range(n):
            y = mx.sin(y) + x
        return y
    return f


# --- work -------------------------------------------------------------------------------


def test_matmul_counts_m_n_k_and_is_refused_before_it_runs():
    x = mx.ones((30, 40)) * 2.0  # lazy: nothing computed yet
    w = mx.ones((40, 50))
    with viz.limits(max_work=50_000):
        with pytest.raises(viz.LimitExceeded) as caught:
            viz.trace(lambda x, w: mx.sum(x @ w), [x, w])
    message = str(caught.value)
    assert "max_work=50,000" in message
    assert f"matmul of shape (30, 50), {30 * 50 * 40:,}" in message  # m·n·k, not m·n
    assert "--max-work" in message
    # Refused before anything ran: the lazy input was never computed.
    assert not x.is_available()
    with viz.limits(max_work=200_000):
        d = viz.trace(lambda x, w: mx.sum(x @ w), [x, w])
    assert d.graph.nodes[-1].array.item() == 2.0 * 40 * 30 * 50


def test_work_is_counted_across_every_evaluation_of_one_drawing():
    f = chain(10)  # 10 sins and 10 adds on 100 elements, and the vjp's work on top
    with viz.limits(max_work=1_000):
        with pytest.raises(viz.LimitExceeded):
            viz.trace(f, [mx.ones((100,))], transform="vjp")
    spent = []
    with viz.limits(max_work=10**6):
        with budget.counting_work() as work:
            viz.trace(f, [mx.ones((100,))], transform="vjp")
            spent.append(work.spent)
    assert spent[0] > 2_000  # forward and backward each touch 100 elements per node


def test_the_budget_is_off_outside_drawings():
    with viz.limits(max_work=1):
        assert (mx.ones((10, 10)) @ mx.ones((10, 10))).sum().item() == 1000.0


def test_integer_power_is_bounded_by_the_width_and_agrees_with_mlx():
    mlx = pytest.importorskip("mlx.core")
    cases = [(lambda x: x ** 2147483647, 2147483647), (lambda x: mx.power(x, 99999999), 99999999)]
    for fun, exponent in cases:
        # Repeated squaring: 2 steps per bit of int32 for each of the 2 elements read.
        assert budget.cost(mx.array(3).__pow__(2).primitive(), [mx.array([3, 5]), mx.array(2)],
                           [mx.array([0, 0])]) == 3 * 64
        with viz.limits(max_work=1_000):
            d = viz.trace(fun, [mx.array([3, 5])])
        expected = mlx.power(mlx.array([3, 5]), exponent).tolist()
        assert d.graph.nodes[-1].array.tolist() == expected


def test_limits_are_checked():
    for bad in ({"max_work": 0}, {"timeout": -1}, {"max_pixels": 1.5}, {"max_nodes": True}):
        with pytest.raises(ValueError, match=r"\[viz.limits\]"):
            with viz.limits(**bad):
                pass
    with viz.limits(timeout=0.5):
        with viz.limits(max_work=7):
            assert (viz.limits.__name__, budget.current().timeout, budget.current().max_work) == (
                "limits", 0.5, 7)
    assert budget.current() == viz.Limits()


# --- nodes ------------------------------------------------------------------------------


@needs_dot
def test_a_large_drawing_is_rendered_collapsed_with_a_warning(tmp_path):
    d = viz.trace(chain(20), [mx.array(0.5)], transform="vjp")
    assert len(d.graph.nodes) == 41  # x, 20 sins, 20 adds
    with viz.limits(max_nodes=10), pytest.warns(viz.LimitWarning, match="41 nodes, over max_nodes=10"):
        d.render(tmp_path / "g.svg")
    svg = (tmp_path / "g.svg").read_text()
    assert "more nodes" in svg
    # The listing and the DOT text stay whole.
    assert "more nodes" not in d.to_dot() and len(d.to_text().splitlines()) > 41
    # max_nodes asked of the drawing raises its node limit.
    d = viz.trace(chain(20), [mx.array(0.5)], transform="vjp", max_nodes=50)
    with viz.limits(max_nodes=10):
        d.render(tmp_path / "h.svg")  # no warning (pytest's -W error would fail it)


def test_max_nodes_keeps_the_walk_before_the_inputs():
    def f(a, b, c, d, e):
        y = a * b * c * d * e
        for _ in range(10):
            y = mx.sin(y)
        return y

    args = [mx.array(v) for v in (0.1, 0.2, 0.3, 0.4, 0.5)]
    full = viz.trace(f, args, transform="vjp")
    small = viz.trace(f, args, transform="vjp", max_nodes=8)
    kept = [n for n in small.graph.nodes if n.kind != "summary"]
    assert len(kept) == 8
    walked = sorted((n for n in full.graph.nodes if n.notes), key=lambda n: min(s for s, _ in n.notes))
    assert [n.name for n in kept if n.kind != "input"] == sorted(
        (n.name for n in walked[:8]), key=[m.name for m in full.graph.nodes].index)
    assert all(n.notes for n in kept)


# --- dot's time and pixels --------------------------------------------------------------


@pytest.fixture
def slow_dot(tmp_path, monkeypatch):
    """A 'dot' that starts a child and both sleep: the timeout must kill the whole group."""
    pids = tmp_path / "pids"
    script = tmp_path / "bin" / "dot"
    script.parent.mkdir()
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        sleep 60 &
        echo $$ $! > {pids}
        wait
        """))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(script.parent) + os.pathsep + os.environ.get("PATH", ""))
    return pids


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead too
        return f.read().split()[2] != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_dot_past_the_timeout_is_killed_with_its_children(slow_dot):
    d = viz.trace(chain(2), [mx.array(0.5)])
    with viz.limits(timeout=0.5), pytest.raises(viz.LimitExceeded, match="timeout, 0.5 s"):
        d.render("unused.svg")
    pids = [int(p) for p in slow_dot.read_text().split()]
    for _ in range(50):  # the kill is sent; give the kernel a moment to reap
        if not any(map(_alive, pids)):
            break
        time.sleep(0.02)
    assert not any(map(_alive, pids)), pids


def _png_size(path):
    with open(path, "rb") as f:
        header = f.read(24)
    return struct.unpack(">II", header[16:24])


@needs_dot
def test_a_png_over_max_pixels_is_drawn_smaller(tmp_path):
    d = viz.trace(chain(3), [mx.array(0.5)], transform="vjp")
    d.render(tmp_path / "full.png")
    width, height = _png_size(tmp_path / "full.png")
    limit = width * height // 10
    with viz.limits(max_pixels=limit), pytest.warns(viz.LimitWarning, match="drawn smaller"):
        d.render(tmp_path / "small.png")
    small_width, small_height = _png_size(tmp_path / "small.png")
    assert small_width * small_height <= limit
    assert small_width * small_height > limit // 2  # as large as the limit lets it be
