"""``mx.export_to_dot`` and the names MLX gives a graph's arrays.

Read alongside: mlx/graph_utils.cpp (``NodeNamer``, ``export_to_dot``) and
python/src/export.cpp (``export_to_dot``: a path or an object with
``write``). The DOT text is mlxref.viz's drawing of the graph, not a second
DOT writer: this is the one place the core reaches up to ``mlxref.viz``,
imported when ``export_to_dot`` is called (viz imports the core, so it
cannot be imported while the core is).

Read next: mlxref/viz/__init__.py (``draw``), mlxref/viz/dot.py.
"""

import os


def node_name(n):
    """MLX's ``NodeNamer`` name of the ``n``-th array named: A, B, ..., Z, BA, BB, ..."""
    letters = ""
    while True:
        letters = chr(ord("A") + n % 26) + letters
        n //= 26
        if n == 0:
            return letters


def export_to_dot(file, *args, **kwargs):
    """Write the graph behind the arrays ``args`` as Graphviz DOT to ``file``
    (a path or an object with ``write``); ``kwargs`` name more arrays to draw
    (``x=x``), and those without a primitive are the graph's inputs. The text
    is mlxref.viz's drawing (``viz.draw``), byte-identical on every run.

    >>> import io
    >>> import mlxref.core as mx
    >>> x = mx.array(1.0)
    >>> out = io.StringIO()
    >>> mx.export_to_dot(out, mx.exp(x), x=x)
    >>> "x -> exp_1" in out.getvalue()
    True
    """
    from .. import viz  # the core's one reference upwards (module docstring)

    if not isinstance(file, (str, os.PathLike)) and not hasattr(file, "write"):
        raise ValueError("[export_to_dot] Accepts file-like objects or strings "
                         "to be used as filenames.")
    # As MLX's: every array given is drawn, and a named array without a
    # primitive is an input (the drawing names those).
    inputs = {k: a for k, a in kwargs.items() if not a.has_primitive()}
    outputs = list(args) + [a for a in kwargs.values() if a.has_primitive()]
    text = viz.draw(outputs, names=inputs or None).to_dot()
    if hasattr(file, "write"):
        file.write(text)
    else:
        with open(file, "w", encoding="utf-8") as f:
            f.write(text)
