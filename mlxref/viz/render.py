"""Files: calling Graphviz's ``dot`` binary, the HTML stepper, numbered SVG frames.

``dot`` and ``text`` never need Graphviz. ``svg``, ``png`` and ``pdf`` run the
``dot`` binary (``dot -Tsvg``, fed the DOT text on stdin). When it is not
installed, the DOT text is written next to the requested file (same name,
``.dot`` suffix) and ``GraphvizMissing`` says, in one line, what to install.

Every ``dot`` run is bounded (``budget.py``): it runs in a process group of
its own, killed after ``timeout`` seconds (``LimitExceeded``), and a PNG is
laid out first (``dot -Tjson0``) so that one larger than ``max_pixels`` is
drawn at a lower dpi, with a ``LimitWarning`` saying so.

The HTML page is self-contained: every frame is inline SVG made by ``dot``,
one shown at a time, with previous/next buttons and the arrow keys
(``page.html#3`` opens at frame 3, ``page.html#last`` at the last one).

This is the last module; ``__init__.py`` puts them together as ``Drawing``.
"""

import html
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


def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"encoding": "utf-8", "newline": "\n"})) as f:
        f.write(data)


def dot_fallback(path, dot_text):
    """Write the DOT text next to ``path`` and raise GraphvizMissing."""
    target = os.path.splitext(os.fspath(path))[0] + ".dot"
    write(target, dot_text)
    raise GraphvizMissing()


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 1em; }}
#controls {{ position: sticky; top: 0; background: #fff; padding: 0.4em 0; }}
#controls button {{ font-size: 1em; padding: 0.2em 0.8em; }}
#caption {{ margin-left: 1em; }}
.frame {{ display: none; }}
.frame.current {{ display: block; }}
.frame svg {{ max-width: 100%; height: auto; }}
</style>
</head>
<body>
<div id="controls">
<button id="previous" type="button" title="previous step (left arrow)">&#9664; previous</button>
<span id="counter"></span>
<button id="next" type="button" title="next step (right arrow)">next &#9654;</button>
<span id="caption"></span>
</div>
{frames}
<script>
(function () {{
  var frames = document.querySelectorAll(".frame");
  var current = 0;
  function show(i) {{
    current = Math.max(0, Math.min(frames.length - 1, i));
    for (var k = 0; k < frames.length; k++) {{
      frames[k].className = k === current ? "frame current" : "frame";
    }}
    document.getElementById("counter").textContent = (current + 1) + " / " + frames.length;
    document.getElementById("caption").textContent = frames[current].getAttribute("data-caption");
  }}
  document.getElementById("previous").onclick = function () {{ show(current - 1); }};
  document.getElementById("next").onclick = function () {{ show(current + 1); }};
  document.addEventListener("keydown", function (event) {{
    if (event.key === "ArrowRight" || event.key === "ArrowDown") {{ show(current + 1); }}
    if (event.key === "ArrowLeft" || event.key === "ArrowUp") {{ show(current - 1); }}
    if (event.key === "Home") {{ show(0); }}
    if (event.key === "End") {{ show(frames.length - 1); }}
  }});
  // Open at a frame from the address: page.html#3 (1-based) or page.html#last.
  var hash = window.location.hash.slice(1);
  show(hash === "last" ? frames.length - 1 : (parseInt(hash, 10) || 1) - 1);
}})();
</script>
</body>
</html>
"""


def html_page(title, frames, captions):
    """The stepper page; ``frames`` are DOT texts, one per step."""
    parts = []
    for i, (dot_text, caption) in enumerate(zip(frames, captions)):
        parts.append(f'<div class="frame" id="frame-{i}" data-caption="{html.escape(caption)}">\n'
                     f"{inline_svg(dot_text)}</div>")
    return PAGE.format(title=html.escape(title), frames="\n".join(parts))
