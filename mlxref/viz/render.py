"""Files: calling Graphviz's ``dot`` binary, writing what it makes.

``dot`` and ``text`` never need Graphviz. ``svg``, ``png`` and ``pdf`` run the
``dot`` binary (``dot -Tsvg``, fed the DOT text on stdin). When it is not
installed, the DOT text is written next to the requested file (same name,
``.dot`` suffix) and ``GraphvizMissing`` says, in one line, what to install.

``inline_svg`` is SVG for embedding in a page: the HTML stepper's frames.

Read next: ``stepper.py`` (the HTML stepper).
"""

import os
import shutil
import subprocess

FORMATS = ("dot", "text", "svg", "png", "pdf", "html")
INSTALL = "install Graphviz (the 'dot' binary): apt-get install graphviz / brew install graphviz"


class GraphvizMissing(RuntimeError):
    """The ``dot`` binary is not on PATH."""

    def __init__(self, message=INSTALL):
        super().__init__(message)


def dot_binary():
    return shutil.which("dot")


def run_dot(dot_text, fmt):
    """``dot -T<fmt>`` on the text; the output bytes. Raises GraphvizMissing."""
    binary = dot_binary()
    if binary is None:
        raise GraphvizMissing()
    done = subprocess.run([binary, f"-T{fmt}"], input=dot_text.encode("utf-8"),
                          capture_output=True, check=False)
    if done.returncode != 0:
        first = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise RuntimeError(f"[viz] dot -T{fmt} failed: {first[0] if first else done.returncode}")
    return done.stdout


def inline_svg(dot_text):
    """SVG for embedding in HTML: without the XML declaration and doctype."""
    svg = run_dot(dot_text, "svg").decode("utf-8")
    return svg[svg.index("<svg"):]


def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8", "newline": "\n"})) as f:
        f.write(data)


def dot_fallback(path, dot_text):
    """Write the DOT text next to ``path`` and raise GraphvizMissing."""
    target = os.path.splitext(os.fspath(path))[0] + ".dot"
    write(target, dot_text)
    raise GraphvizMissing()
