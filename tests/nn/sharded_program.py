"""One small tensor-parallel training step, written for either library: real MLX runs
it under ``mlx.launch -n 2`` and tests/nn/test_distributed.py runs it with mlxref
on simulated ranks, and the two must print the same (see ``main``)."""

import json
import sys


def program(mx, nn, distributed, utils):
    """Rank r's results: the loss and gradients of four sharded linear layers,
    their average and global norm, and a quantized sharded-to-all product."""
    world = mx.distributed.init()
    r, n = world.rank(), world.size()
    mx.random.seed(11)
    layers = [nn.Linear(8, 8) for _ in range(4)]
    model = nn.Sequential(*(distributed.shard_linear(layer, s) for layer, s in zip(
        layers, ["all-to-sharded", "sharded-to-all"] * 2)))
    x, y = mx.random.normal((4, 8)), mx.random.normal((4, 8)) + r
    loss, grads = nn.value_and_grad(model, lambda x, y: (model(x) * y).sum())(x, y)
    averaged = utils.average_gradients(grads, all_reduce_size=4 * 40)
    clipped, norm = utils.clip_grad_norm_sharded(grads, 1.0)
    qlin = distributed.shard_linear(nn.Linear(64, 4).to_quantized(group_size=32),
                                    "sharded-to-all")
    q = qlin(mx.arange(64 // n, dtype=mx.float32).reshape(1, -1) / 64 + r)

    def leaves(tree):
        return [a.flatten().tolist() for _, a in sorted(flatten(tree))]

    def flatten(tree, prefix=""):
        if isinstance(tree, dict):
            return [kv for k, v in tree.items() for kv in flatten(v, f"{prefix}{k}.")]
        if isinstance(tree, list):
            return [kv for i, v in enumerate(tree) for kv in flatten(v, f"{prefix}{i}.")]
        return [(prefix, tree)]

    return {"rank": r, "loss": loss.item(), "grads": leaves(grads),
            "averaged": leaves(averaged), "norm": norm.item(), "clipped": leaves(clipped),
            "q": q.tolist()}


def main():
    """Under ``mlx.launch``: rank r prints one JSON line, with the collectives it called."""
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.nn.layers.distributed as distributed
    import mlx.nn.utils as utils

    calls = []

    def counting(name, collective):
        def call(x, **kwargs):
            calls.append(name)
            return collective(x, **kwargs)
        return call

    for name in ("all_sum", "all_gather", "sum_scatter"):
        setattr(mx.distributed, name, counting(name, getattr(mx.distributed, name)))
    results = program(mx, nn, distributed, utils)
    print(json.dumps({**results, "calls": calls}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
