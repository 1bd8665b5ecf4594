"""mlxref's benchmark suite: ``python -m benchmarks`` (or ``make bench``).

Workloads, each checked against a hand-written pure-Python reference
before any number is reported (``--only costs|seed|chain|mlp|lsq|vmap|checkpoint|drawing|charlm|gelu|grading|examples``):

- ``costs``: one step of the deep chain, the MLP and MLX's linear-regression
  example under ``cProfile``, its time and calls split by what they pay for
  (the descriptor, conversion, the node, the memory counters, the store,
  the kernels, the transform's walk);
- ``seed_grad``: the gradient of ``sum(sin(x) * exp(x))`` over n = 10 to
  10,000 elements: mlxref, hand-written lists, a micrograd-style Value graph
  and real MLX, with a scaling table;
- ``deep_chain``: value and gradient through a chain of N scalar elementwise
  ops (N = 10k, 20k, 40k, 100k), to show the cost grows linearly and nothing
  recurses, with hand-written floats, micrograd-style Value and MLX columns;
- ``mlp``: one ``value_and_grad`` step of a 2-16-16-1 ReLU MLP (batch 32, MSE),
  against a hand-written list-based forward/backward (the floor for pure
  Python) and against a micrograd-style scalar ``Value`` graph
  (``scalar_graph``);
- ``lsq``: one gradient step of least squares on 1000 x 100 float32 data
  (MLX's linear-regression example), against the same update by hand in two
  ``sum(map(mul, ...))`` passes over lists (the pure-Python floor) and real MLX;
- ``per_example``: per-example gradients with ``vmap(grad)`` over batches of
  10 to 1,000, against ``grad`` in a Python loop, hand-written lists, a
  micrograd-style Value graph per example and MLX's ``vmap(grad)``;
- ``checkpoint_memory``: peak memory of a gradient with and without
  checkpoint, in mlxref and in MLX;
- ``compile_gelu``: ``value_and_grad`` of ``sum(gelu(x))`` over 100k
  elements, uncompiled and under ``mx.compile`` (which must agree bit for
  bit), and real MLX compiled, with the speedup compile gives;
- ``examples``: MLX's ``linear_regression.py`` and ``logistic_regression.py``
  run unchanged from a clone of MLX (``MLX_GIT_DIR``; skipped without one),
  on mlxref and real MLX: CPU seconds, and the same printed results;
- ``grading``: ``mlxref assignment grade`` of an honest submission (this
  checkout), three tasks, against its target of 2.5 s per task.

The seed, chain, mlp, vmap and gelu workloads also time ``mlxref compile``:
the mlxref step under ``mx.compile``, which must equal the uncompiled
column bit for bit (``harness.check_exact``) before any time is taken.

Each table of times has ratios to mlxref and a scaling table (how each
column's time grows from one size to the next); ``--json PATH`` writes the
same results as JSON, and progress goes to stderr.

Each workload's program is written once, as a function of the array module
it runs on (``def loss(mx, x)``): mlxref's column passes it ``mlxref.core``.
Where ``mlx`` is installed (``pip install -e '.[metal]'``), real MLX gets a
column labelled with its device, which runs the same program on ``mlx.core``
with MLX's own transforms (``mlxref.backends.metal`` supplies the module, the
device and the arrays); it is only timed and checked, never used for mlxref's
own results.

Timings never appear in the unit tests: ``tests/test_benchmarks.py``
runs each workload once at a tiny size and checks only the results.
"""
