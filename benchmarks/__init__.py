"""mlxref's benchmark suite: ``python -m benchmarks`` (or ``make bench``).

Two workloads, each checked against a hand-written pure-Python reference
before any number is reported:

- ``deep_chain``: value and gradient through a chain of N scalar elementwise
  ops (N = 25k, 50k, 100k), to show the cost grows linearly and nothing
  recurses;
- ``mlp``: one ``value_and_grad`` step of a 2-16-16-1 ReLU MLP (batch 32, MSE),
  against a hand-written list-based forward/backward (the floor for pure
  Python) and against a micrograd-style scalar ``Value`` graph
  (``scalar_graph``).

Timings never appear in the unit tests: ``tests/test_benchmarks_smoke.py``
runs each workload once at a tiny size and checks only the results.
"""
