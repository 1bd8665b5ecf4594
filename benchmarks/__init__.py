"""mlxref's benchmark suite: ``python -m benchmarks`` (or ``make bench``).

Workloads, each checked against a hand-written pure-Python reference
before any number is reported (``--only seed|chain|mlp|checkpoint``):

- ``seed_grad``: the gradient of ``sum(sin(x) * exp(x))`` over n = 10 to
  10,000 elements: mlxref, hand-written lists, a micrograd-style Value graph
  and real MLX, with a scaling table;
- ``deep_chain``: value and gradient through a chain of N scalar elementwise
  ops (N = 25k, 50k, 100k), to show the cost grows linearly and nothing
  recurses;
- ``mlp``: one ``value_and_grad`` step of a 2-16-16-1 ReLU MLP (batch 32, MSE),
  against a hand-written list-based forward/backward (the floor for pure
  Python) and against a micrograd-style scalar ``Value`` graph
  (``scalar_graph``);
- ``checkpoint_memory``: peak memory of a gradient with and without checkpoint.

Where ``mlx`` is installed (``pip install -e '.[metal]'``), real MLX
(``mlxref.backends.metal``) gets a column labelled with its device; it is
only timed and checked, never used for mlxref's own results.

Timings never appear in the unit tests: ``tests/test_benchmarks_smoke.py``
runs each workload once at a tiny size and checks only the results.
"""
