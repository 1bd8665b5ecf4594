"""mlxref: a pure-Python reference implementation of MLX's autodiff engine.

The library a program imports mirrors MLX's: ``mlxref.core`` (``mlx.core``),
``mlxref.nn``, ``mlxref.optimizers`` and ``mlxref.utils``. The rest is tooling
built on it, which the core never imports: ``viz`` (drawings), ``symbolic``
(the SymPy check of the rules), ``course`` (assignments and their grader),
``manual`` (the manual and the runner of MLX's documentation pages), ``cli``
(the ``mlxref`` command), ``testing`` (``check_grads``), ``as_mlx`` (a program
written for MLX run on mlxref) and ``backends`` (real MLX, for timings).

Start reading at mlxref/core/array.py; the README's "Start here" lists the
engine's files in order.
"""

__version__ = "0.1.0"
