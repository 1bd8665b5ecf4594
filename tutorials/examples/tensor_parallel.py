"""A two-layer MLP split across the ranks: tensor parallelism with ``shard_linear``.

    python -m mlxref.launch -n 4 tutorials/examples/tensor_parallel.py

Every rank builds the same MLP from the same seed (``Linear(8, 16)``, ReLU,
``Linear(16, 4)``) and the same input, then keeps its part of each layer:
the first becomes an ``AllToShardedLinear`` (rank r of N keeps 16/N rows of
the weight, so it computes 16/N of the hidden units from the whole input), the
second a ``ShardedToAllLinear`` (it keeps the matching 16/N columns, multiplies
its hidden units by them, and one ``all_sum`` adds the ranks' partial products).
Each rank prints what it holds, and how its hidden units and its output compare
with the unsharded model's, which every rank also computes.

Read alongside: mlxref/nn/layers/distributed.py (python/mlx/nn/layers/distributed.py).
Read next: ring_steps.py, what the all_sum sends.
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:  # this checkout's mlxref, wherever the script is run from
    sys.path.insert(0, str(ROOT))

import mlxref.core as mx  # noqa: E402
import mlxref.nn as nn  # noqa: E402
from mlxref.nn.layers.distributed import shard_linear  # noqa: E402


def main():
    group = mx.distributed.init()
    rank, size = group.rank(), group.size()
    mx.random.seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = mx.random.normal((2, 8))

    first = shard_linear(model.layers[0], "all-to-sharded")
    second = shard_linear(model.layers[2], "sharded-to-all")
    hidden = nn.relu(first(x))
    output = second(hidden)

    # The unsharded layers. (mlxref's Linear is x @ W.T + b, two nodes; MLX's is one
    # fused addmm, which rounds the product before adding b: the same bits.)
    full_hidden = nn.relu(model.layers[0](x))
    full_output = model(x)
    share = 16 // size
    mine = full_hidden[:, rank * share:(rank + 1) * share]
    print(f"rank {rank}: keeps first.weight {first.weight.shape} and second.weight "
          f"{second.weight.shape}; hidden units {rank * share}..{(rank + 1) * share - 1}, "
          f"the full layer's bits: {mx.array_equal(hidden, mine).item()}")
    print(f"rank {rank}: output {output.shape}, the full model's bits: "
          f"{mx.array_equal(output, full_output).item()}, largest difference "
          f"{mx.abs(output - full_output).max().item():.3g}")

if __name__ == "__main__":
    main()
