"""Chapter 08's training, data-parallel: each rank trains on its share of the batch.

    python -m mlxref.launch -n 4 tutorials/examples/data_parallel.py [--steps S] [--save FILE]

Every rank builds chapter 08's data and model (the examples of
tutorials/08-training.md above its training loop, read from that file by
tutorials/plots.py, so this is exactly the chapter's program), keeps its
quarter of the 64 points (rank r: points 16r to 16r + 15), and trains with the same Adam step
everywhere: the gradients of its quarter's mean loss, averaged over the ranks
by ``nn.average_gradients``. Each rank prints the fingerprint of its weights;
``--save`` makes rank 0 write them to a ``.safetensors`` file.

Chapter 15 (tutorials/15-distributed.md) also imports this file in one
process, to train the same model on the whole batch (``train_whole_batch``)
and on the four quarters summed in the ring's order (``train_in_ring_order``).

Read next: tensor_parallel.py and ring_steps.py, the chapter's other scripts.
"""

import argparse
import hashlib
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for path in (ROOT, HERE.parent):  # this checkout's mlxref, and tutorials/plots.py
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import mlxref.core as mx  # noqa: E402
import mlxref.nn as nn  # noqa: E402
import mlxref.optimizers as optim  # noqa: E402
import plots  # noqa: E402
from mlxref.utils import tree_flatten, tree_unflatten  # noqa: E402

CHAPTER_08 = ROOT / "tutorials" / "08-training.md"
STEPS = 20


def chapter_08():
    """The namespace of chapter 08's examples above its training loop: the data
    (``X``, ``y``), the seeded ``model``, ``loss_fn`` and ``loss_and_grad``
    (``tutorials/plots.py:run_chapter``, which also draws that chapter's figures)."""
    return plots.run_chapter(CHAPTER_08, until="## Training")


def train(model, gradients, steps=STEPS):
    """Chapter 08's loop: ``steps`` Adam steps, each on ``gradients()``."""
    optimizer = optim.Adam(learning_rate=0.05)
    for _ in range(steps):
        optimizer.update(model, gradients())
        mx.eval(model.parameters(), optimizer.state)
    return model


def fingerprint(parameters):
    """The first 16 hex digits of the SHA-256 of the float32 bits of every
    parameter, in ``tree_flatten`` order: equal fingerprints, equal bits."""
    digest = hashlib.sha256()
    for _, p in tree_flatten(parameters):
        values = p.reshape(-1).tolist()
        digest.update(struct.pack(f"<{len(values)}f", *values))
    return digest.hexdigest()[:16]


def quarters(X, y, n):
    """The ``n`` equal shares of the batch, in rank order."""
    share = X.shape[0] // n
    return [(X[r * share:(r + 1) * share], y[r * share:(r + 1) * share]) for r in range(n)]


# --- in one process ---------------------------------------------------------------------


def train_whole_batch(steps=STEPS):
    """One process, the whole batch: chapter 08's step."""
    ns = chapter_08()
    return train(ns["model"], lambda: ns["loss_and_grad"](ns["X"], ns["y"])[1], steps)


def ring_all_sum(flats):
    """The elementwise sum of the ranks' flat float32 arrays, added as the ring
    all-reduce of ``len(flats)`` ranks adds them (mlxref/core/distributed/ring.py):
    the array is cut into one segment per rank, and segment ``s`` starts as rank
    ``s``'s piece and travels against the ranks, each rank adding its own piece in
    front: ``x[s+1] + (... + (x[s-1] + x[s]))``, ranks counted modulo n."""
    n = len(flats)
    segment = -(-flats[0].size // n)
    parts = []
    for s in range(n):
        total = flats[s][s * segment:(s + 1) * segment]
        for k in range(1, n):
            total = flats[(s - k) % n][s * segment:(s + 1) * segment] + total
        parts.append(total)
    return mx.concatenate(parts)


def average_in_ring_order(grads_per_rank):
    """What ``nn.average_gradients`` gives every rank, computed in one process: each
    rank's gradients flattened into one array, the arrays summed in the ring's
    order, divided by the number of ranks, and cut back into the tree."""
    flat = [tree_flatten(g) for g in grads_per_rank]
    keys = [k for k, _ in flat[0]]
    shapes = [g.shape for _, g in flat[0]]
    total = ring_all_sum([mx.concatenate([g.reshape(-1) for _, g in f]) for f in flat])
    average = total / len(grads_per_rank)
    sizes = [g.size for _, g in flat[0]]
    offsets = [sum(sizes[:i]) for i in range(1, len(sizes))]
    return tree_unflatten([(k, part.reshape(shape)) for k, shape, part
                           in zip(keys, shapes, mx.split(average, offsets))])


def train_in_ring_order(n=4, steps=STEPS):
    """One process: each step, the gradients of the ``n`` quarters, averaged as the
    ring of ``n`` ranks averages them."""
    ns = chapter_08()
    shares = quarters(ns["X"], ns["y"], n)
    return train(ns["model"], lambda: average_in_ring_order(
        [ns["loss_and_grad"](Xr, yr)[1] for Xr, yr in shares]), steps)


# --- on every rank ------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--save", help="rank 0 writes the final weights to this file")
    args = parser.parse_args()

    group = mx.distributed.init()
    rank, size = group.rank(), group.size()
    ns = chapter_08()
    X, y = quarters(ns["X"], ns["y"], size)[rank]

    def gradients():
        return nn.average_gradients(ns["loss_and_grad"](X, y)[1])

    model = train(ns["model"], gradients, args.steps)
    print(f"rank {rank} of {size}: points {rank * X.shape[0]}..{(rank + 1) * X.shape[0] - 1}, "
          f"weights {fingerprint(model.parameters())}")
    if args.save and rank == 0:
        mx.save_safetensors(args.save, dict(tree_flatten(model.parameters())))


if __name__ == "__main__":
    main()
