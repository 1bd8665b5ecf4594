"""Files: calling Graphviz's ``dot`` binary, writing what it makes.

``dot`` and ``text`` never need Graphviz. ``svg``, ``png`` and ``pdf`` run the
``dot`` binary (``dot -Tsvg``, fed the DOT text on stdin). When it is not
installed, the DOT text is written next to the requested file (same name,
``.dot`` suffix) and ``GraphvizMissing`` says, in one line, what to install.

Every ``dot`` run is bounded (``budget.py``): it runs in a process group of
its own, killed after ``timeout`` seconds (``LimitExceeded``), and a PNG is
laid out first (``dot -Tjson0``) so that one larger than ``max_pixels`` is
drawn at a lower dpi, with a ``LimitWarning`` saying so.

``inline_svg`` is SVG for embedding in a page: the HTML stepper's frames.

Read next: ``stepper.py`` (the HTML stepper).
"""

import json
import math
import os
import signal
import shutil
import subprocess
import time
import warnings

from . import budget as _budget

FORMATS = ("dot", "text", "svg", "png", "pdf", "html")
INSTALL = "install Graphviz (the 'dot' binary): apt-get install graphviz / brew install graphviz"


class GraphvizMissing(RuntimeError):
    """The ``dot`` binary is not on PATH."""

    def __init__(self, message=INSTALL):
        super().__init__(message)


def dot_binary():
    return shutil.which("dot")


def run_dot(dot_text, fmt, *, timeout=None, max_pixels=None):
    """``dot -T<fmt>`` on the text; the output bytes. Raises GraphvizMissing.

    ``timeout`` (seconds, for all the runs of one image) and ``max_pixels``
    (png only) default to ``budget.current()``'s. Past the timeout ``dot`` is
    killed and ``LimitExceeded`` raised; a png over ``max_pixels`` is drawn at
    the dpi that fits, with a ``LimitWarning``.
    """
    binary = dot_binary()
    if binary is None:
        raise GraphvizMissing()
    limits = _budget.current()
    timeout = limits.timeout if timeout is None else timeout
    max_pixels = limits.max_pixels if max_pixels is None else max_pixels
    deadline = time.monotonic() + timeout
    options = []
    if fmt == "png":
        layout = json.loads(_dot([binary, "-Tjson0"], dot_text, deadline, timeout))
        bb = [float(v) for v in layout.get("bb", "0,0,0,0").split(",")]
        dpi = float(layout.get("dpi") or layout.get("resolution") or 96)
        width, height = _budget.pixels_of(bb, dpi, layout.get("size"))
        if width * height > max_pixels:
            scaled = dpi * math.sqrt(max_pixels / (width * height)) * 0.99
            new_width, new_height = _budget.pixels_of(bb, scaled, layout.get("size"))
            warnings.warn(
                f"[viz] the PNG would be {width:,} x {height:,} = {width * height:,} pixels, "
                f"over max_pixels={max_pixels:,}: drawn smaller, {new_width:,} x "
                f"{new_height:,} pixels ({scaled:.4g} dpi); {_budget.raise_with('max_pixels')}",
                _budget.LimitWarning, stacklevel=2)
            options.append(f"-Gdpi={scaled:.6g}")
    return _dot([binary, *options, f"-T{fmt}"], dot_text, deadline, timeout)


def _dot(command, dot_text, deadline, timeout):
    """Run ``command`` on the DOT text, in a process group of its own, until ``deadline``."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(dot_text.encode("utf-8"),
                                       timeout=max(deadline - time.monotonic(), 0.001))
    except subprocess.TimeoutExpired:
        _kill(process)
        raise _budget.LimitExceeded(
            f"[viz] dot {command[-1]} took longer than the timeout, "
            f"{timeout:g} s, and was stopped; draw fewer nodes (max_nodes) or "
            f"{_budget.raise_with('timeout')}") from None
    except BaseException:  # KeyboardInterrupt: dot must not outlive us
        _kill(process)
        raise
    if process.returncode != 0:
        first = err.decode("utf-8", "replace").strip().splitlines()[:1]
        raise RuntimeError(f"[viz] dot {command[-1]} failed: "
                           f"{first[0] if first else process.returncode}")
    return out


def _kill(process):
    """Kill ``process`` and whatever it started (its process group), and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (AttributeError, ProcessLookupError, PermissionError):  # no process groups here
        process.kill()
    process.communicate()


def inline_svg(dot_text):
    """SVG for embedding in HTML: without the XML declaration and doctype."""
    svg = run_dot(dot_text, "svg").decode("utf-8")
    return svg[svg.index("<svg"):]


def format_of(path):
    """The format the suffix of ``path`` names ("txt" is text; none, svg)."""
    format = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "svg"
    return "text" if format == "txt" else format


def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8", "newline": "\n"})) as f:
        f.write(data)


def dot_fallback(path, dot_text):
    """Write the DOT text next to ``path`` and raise GraphvizMissing."""
    target = os.path.splitext(os.fspath(path))[0] + ".dot"
    write(target, dot_text)
    raise GraphvizMissing()
