"""Files: calling Graphviz's ``dot`` binary, the HTML stepper, numbered SVG frames.

``dot`` and ``text`` never need Graphviz. ``svg``, ``png`` and ``pdf`` run the
``dot`` binary (``dot -Tsvg``, fed the DOT text on stdin). When it is not
installed, the DOT text is written next to the requested file (same name,
``.dot`` suffix) and ``GraphvizMissing`` says, in one line, what to install.

The HTML page is self-contained: every frame is inline SVG made by ``dot``,
one shown at a time, with previous/next buttons and the arrow keys
(``page.html#3`` opens at frame 3, ``page.html#last`` at the last one).

This is the last module; ``__init__.py`` puts them together as ``Drawing``.
"""

import html
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
