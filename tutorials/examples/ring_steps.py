"""The ring all-reduce written with send and recv, step by step, checked against all_sum.

    python -m mlxref.launch -n 4 tutorials/examples/ring_steps.py
    mlx.launch -n 4 -- python tutorials/examples/ring_steps.py --backend mlx   # real MLX

Each rank holds 4 numbers, rank r's number s being (s + 1) * 10**r, so the
digits of a partial sum say which ranks have added to it. ``ring_all_sum``
does what the ring back-end does for ``all_sum`` (mlxref/core/distributed/
ring.py: ``RingGroup._all_reduce_impl``, MLX's mlx/distributed/ring/ring.cpp),
with ``mx.distributed.send`` and ``recv_like``: the array is cut into one
segment per rank; in each of N - 1 reduce-scatter steps every rank sends one
segment to its left neighbour and adds the segment its right neighbour sends
into its own; in N - 1 all-gather steps the finished segments go round the
same way, replacing. Every rank prints a line per step; then every rank checks
that its ``ring_all_sum`` of 1000 float32 numbers has the bits of
``mx.distributed.all_sum``, and counts the elements where adding the ranks'
arrays in rank order, ``((x0 + x1) + x2) + x3``, gives other bits. With
``--backend mlx`` the same code runs on real MLX's ``mlx.core`` and prints the
same lines (tests/test_distributed_tutorial.py).

Read next: tutorials/15-distributed.md, the chapter that runs this.
"""

import argparse
import importlib
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:  # this checkout's mlxref, wherever the script is run from
    sys.path.insert(0, str(ROOT))

mx = None  # mlxref.core, or mlx.core with --backend mlx


def ring_all_sum(x, group, show=False):
    """The sum of ``x`` over the ranks of ``group``, as the ring adds it; with
    ``show``, print what this rank sends and receives at each step."""
    rank, n = group.rank(), group.size()
    left, right = (rank - 1) % n, (rank + 1) % n
    length = -(-x.size // n)
    segments = [x[s * length:(s + 1) * length] for s in range(n)]
    step = 0
    for phase in ("reduce-scatter", "all-gather"):
        for _ in range(n - 1):
            # At step k (from 0) rank r sends segment r + k and receives r + k + 1,
            # so the segment it received is the one it sends next.
            send, receive = (rank + step) % n, (rank + step + 1) % n
            step += 1
            mx.eval(mx.distributed.send(segments[send], left, group=group))
            received = mx.distributed.recv_like(segments[receive], right, group=group)
            if phase == "reduce-scatter":
                segments[receive] = segments[receive] + received
            else:
                segments[receive] = received
            mx.eval(segments[receive])
            if show:
                print(f"step {step} {phase:14}  rank {rank}: sends s{send} to rank {left}, "
                      f"gets s{receive} = {_show(received)} from rank {right}, "
                      f"holds {' '.join(_show(s) for s in segments)}")
    return mx.concatenate(segments)


def _show(a):
    return "/".join(f"{v:g}" for v in a.tolist())


def main():
    global mx
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--backend", choices=("mlxref", "mlx"), default="mlxref")
    mx = importlib.import_module(f"{parser.parse_args().backend}.core")
    group = mx.distributed.init()
    rank, n = group.rank(), group.size()
    x = mx.array([float((s + 1) * 10**rank) for s in range(n)])
    print(f"step 0 {'start':14}  rank {rank}: holds {' '.join(_show(v[None]) for v in x)}")
    total = ring_all_sum(x, group, show=True)
    assert mx.array_equal(total, mx.distributed.all_sum(x, group=group)).item()

    # Python's sin, not mx.random: the same float32 inputs under MLX (whose normal
    # draws can differ from mlxref's in the last bit).
    x = mx.array([math.sin(1000 * rank + i) for i in range(1000)])
    ring = ring_all_sum(x, group)
    everyone = mx.distributed.all_gather(x[None], group=group)
    in_rank_order = everyone[0]
    for r in range(1, n):
        in_rank_order = in_rank_order + everyone[r]
    print(f"then rank {rank}, on 1000 float32 numbers: ring_all_sum has all_sum's bits: "
          f"{mx.array_equal(ring, mx.distributed.all_sum(x, group=group)).item()}; "
          f"adding in rank order gives other bits in "
          f"{(in_rank_order != ring).sum().item()} elements")


if __name__ == "__main__":
    main()
