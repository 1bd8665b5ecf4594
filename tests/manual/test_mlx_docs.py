"""The runner for MLX's documentation pages (``python -m mlxref.manual.mlx_docs``):
it reads a page's code blocks as a reader types them, and tells apart a block
that prints what MLX prints, one that does not, and one that cannot run on MLX."""

import subprocess
import sys

from support import needs_mlx

from mlxref.manual import mlx_docs

PAGE = """
A page
======

.. code-block:: shell

  >>> x = mx.array([1.0, 2.0])
  >>> x * 2
  array([2, 4], dtype=float32)
  >>> for v in [1, 2]:
  ...     print(v)

Some prose between the blocks.

.. code-block:: python
  :caption: ignored option

  def f(x):
      return (x * x).sum()

  print(mx.grad(f)(x))

.. code-block:: python

  print(mx.__name__)

.. code-block:: python

  model = Model()

.. code-block:: python

  import timeit
  print(timeit.timeit(lambda: mx.eval(x + 1), number=3))
"""


def test_code_blocks_keeps_prompts_statements_and_whole_programs():
    blocks = mlx_docs.code_blocks(PAGE)
    assert [b["prompts"] for b in blocks] == [True, False, False, False, False]
    assert blocks[0]["code"] == ["x = mx.array([1.0, 2.0])", "x * 2", "for v in [1, 2]:\n    print(v)"]
    assert blocks[1]["code"][0].startswith("def f(x):") and "caption" not in blocks[1]["code"][0]
    assert blocks[1]["code"][0].endswith("print(mx.grad(f)(x))")


def test_run_blocks_shows_values_as_the_interpreter_does():
    blocks = mlx_docs.code_blocks(PAGE)[:3] + [{"prompts": True, "code": ["1 / 0"]}]
    out = mlx_docs._run_in_process("mlxref", blocks)  # mlx.core mapped to mlxref.core
    assert out[0] == "array([2, 4], dtype=float32)\n1\n2\n"
    assert out[1] == "array([2, 4], dtype=float32)\n"
    assert out[2] == "mlxref.core\n"
    assert out[3] == "ZeroDivisionError: division by zero\n"


@needs_mlx
def test_compare_sorts_blocks_into_same_different_and_not_runnable():
    lines, same, different, not_runnable = mlx_docs.compare("page", PAGE)
    # Blocks 1, 2 and the timing block print what MLX prints (the timing's
    # numbers masked); mx.__name__ differs; Model is never defined.
    assert (same, different, not_runnable) == (3, 1, 1)
    assert any("block 3 differs" in ln for ln in lines)
    assert any("mlxref: mlxref.core" in ln for ln in lines)
    assert any("block 4 does not run on MLX here (NameError" in ln for ln in lines)


def test_command_needs_a_clone_and_says_so(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mlxref.manual.mlx_docs", str(tmp_path), "indexing"], capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "mlx-docs:" in done.stderr and "Traceback" not in done.stderr
