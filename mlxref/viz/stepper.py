"""The HTML stepper: one self-contained page that steps through a walk, frame by frame.

Every frame is inline SVG made by ``dot`` (``render.inline_svg``); one is shown
at a time. The page needs nothing but itself: no network, no other file, and
the same drawing always gives the same bytes.

The page follows the walk. In each frame the node the step visits has the SVG
class ``visiting`` (``dot.py`` writes it next to the thick border); at every
step, zoom and window resize, the page scrolls so that node is in view.

- next step: → PageDown space (a presentation clicker sends PageDown, or space);
- previous step: ← PageUp Backspace shift+space;
- Home / End: the first / last step, its node in view;
- ↑ ↓ scroll the page (they do not step); + and − zoom; f fits;
- buttons: previous, next, zoom out, fit (the whole graph in the window, both
  ways), zoom in, and "steps", which shows or hides the step list on the left
  (one entry per step, its caption; click one to go there);
- ``page.html#3`` opens at step 3, ``page.html#last`` at the last one; the
  address follows the step, so a reload stays where it was.

The page opens fitted to the window, but never below 75% of the drawing's size
nor above 100%: a big graph (a two-layer MLP's grad) opens at 75%, readable,
and the page scrolls to each node.

A model's drawing folded by module (``shrink.fold_scopes``) steps a box at a
time: one frame per run of steps through one module call ("steps 21–22 of
43: the vjp walk visits layers.3"), so a lecturer walks the backward pass
module by module; unfolded, each step's caption says whose call made the
node it visits ("..., in layers.3").

Under the drawing, the page shows the generated source of each Compiled node
of a compile drawing, in a ``<pre>``.

This is the last module; ``__init__.py`` puts them together as ``Drawing``.
"""

import html

from .render import inline_svg

STYLE = """\
html, body { margin: 0; }
body { font-family: Helvetica, Arial, sans-serif; }
#controls { position: fixed; top: 0; left: 0; right: 0; z-index: 2; background: #fff;
  border-bottom: 1px solid #cfd8dc; padding: 0.4em 0.6em; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
#controls button { font-size: 1em; padding: 0.2em 0.7em; }
#zoom { display: inline-block; min-width: 3.5em; text-align: center; }
#caption { margin-left: 1em; }
#steps { position: fixed; left: 0; bottom: 0; top: 2.6em; width: 17em; overflow-y: auto;
  z-index: 1; background: #fafafa; border-right: 1px solid #cfd8dc; font-size: 0.9em; }
#steps ol { margin: 0; padding: 0.5em 0.5em 0.5em 2.6em; }
#steps button { border: 0; background: none; font: inherit; text-align: left; width: 100%;
  padding: 0.25em 0.3em; cursor: pointer; }
#steps li.current button { background: #e8eaf6; font-weight: bold; }
body.no-steps #steps { display: none; }
#view { width: max-content; padding: 3em 16px 16px 18em; }
.frame { display: none; }
.frame.current { display: block; }
.frame svg { display: block; }
.source h2 { font-size: 1em; margin: 1.5em 0 0.4em; }
.source pre { background: #f5f7f8; border: 1px solid #cfd8dc; padding: 0.6em; margin: 0; }
"""

SCRIPT = """\
(function () {
  "use strict";
  var MARGIN = 16, START_MIN = 0.75, START_MAX = 1, STEP = 1.25, MIN = 0.05, MAX = 8;
  var frames = document.querySelectorAll(".frame");
  var entries = document.querySelectorAll("#steps button");
  var header = document.getElementById("controls");
  var list = document.getElementById("steps");
  var view = document.getElementById("view");
  var current = 0, zoom = 1, mode = "start";  // mode: how to zoom again on resize

  function listShown() { return !document.body.classList.contains("no-steps"); }
  // The drawing's own size in CSS pixels (dot writes it in points).
  function drawingSize() {
    var svg = frames[current].querySelector("svg");
    return {width: svg.width.baseVal.value, height: svg.height.baseVal.value};
  }
  // Where the graph shows: below the controls, right of the step list.
  function area() {
    return {left: listShown() ? list.getBoundingClientRect().right : 0,
            top: header.getBoundingClientRect().bottom,
            right: document.documentElement.clientWidth,
            bottom: document.documentElement.clientHeight};
  }
  function layout() {
    var top = header.offsetHeight;
    list.style.top = top + "px";
    view.style.paddingTop = (top + MARGIN) + "px";
    view.style.paddingLeft = ((listShown() ? list.offsetWidth : 0) + MARGIN) + "px";
  }
  // The zoom that shows the whole drawing (the window without scroll bars).
  function fitZoom() {
    var size = drawingSize();
    var width = window.innerWidth - (listShown() ? list.offsetWidth : 0) - 2 * MARGIN - 1;
    var height = window.innerHeight - header.offsetHeight - 2 * MARGIN - 1;
    return Math.min(width / size.width, height / size.height);
  }
  function modeZoom() {
    if (mode === "fit") { return fitZoom(); }
    if (mode === "start") { return Math.max(START_MIN, Math.min(START_MAX, fitZoom())); }
    return zoom;
  }
  function setZoom(z) {
    zoom = Math.max(MIN, Math.min(MAX, z));
    for (var k = 0; k < frames.length; k++) {
      var svg = frames[k].querySelector("svg");
      svg.style.width = (svg.width.baseVal.value * zoom) + "px";
      svg.style.height = (svg.height.baseVal.value * zoom) + "px";
    }
    document.getElementById("zoom").textContent = Math.round(zoom * 100) + "%";
  }
  // Scroll so the node this step visits is in view, centred when it was not.
  function follow() {
    var nodes = frames[current].querySelectorAll(".visiting");
    if (!nodes.length) { return; }
    var box = nodes[0].getBoundingClientRect();
    var r = {left: box.left, top: box.top, right: box.right, bottom: box.bottom};
    for (var k = 1; k < nodes.length; k++) {
      box = nodes[k].getBoundingClientRect();
      r.left = Math.min(r.left, box.left); r.top = Math.min(r.top, box.top);
      r.right = Math.max(r.right, box.right); r.bottom = Math.max(r.bottom, box.bottom);
    }
    var a = area();
    function shift(low, high, from, to) {
      if (low >= from + MARGIN && high <= to - MARGIN) { return 0; }
      if (high - low > to - from - 2 * MARGIN) { return low - from - MARGIN; }
      return (low + high) / 2 - (from + to) / 2;
    }
    window.scrollBy(shift(r.left, r.right, a.left, a.right),
                    shift(r.top, r.bottom, a.top, a.bottom));
  }
  function show(i) {
    current = Math.max(0, Math.min(frames.length - 1, i));
    for (var k = 0; k < frames.length; k++) {
      frames[k].className = k === current ? "frame current" : "frame";
      entries[k].parentNode.className = k === current ? "current" : "";
    }
    document.getElementById("counter").textContent = (current + 1) + " / " + frames.length;
    document.getElementById("caption").textContent = frames[current].getAttribute("data-caption");
    var entry = entries[current];
    if (entry.offsetTop < list.scrollTop ||
        entry.offsetTop + entry.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = entry.offsetTop - list.clientHeight / 2;
    }
    try { history.replaceState(null, "", "#" + (current + 1)); } catch (e) { /* no history */ }
    follow();
  }
  function zoomTo(z, newMode) { mode = newMode; setZoom(z); follow(); }
  function toggleSteps() {
    document.body.classList.toggle("no-steps");
    layout(); setZoom(modeZoom()); follow();
  }
  var actions = {
    next: function () { show(current + 1); },
    previous: function () { show(current - 1); },
    first: function () { show(0); },
    last: function () { show(frames.length - 1); },
    zoomIn: function () { zoomTo(zoom * STEP, "manual"); },
    zoomOut: function () { zoomTo(zoom / STEP, "manual"); },
    fit: function () { zoomTo(fitZoom(), "fit"); }
  };
  var keys = {ArrowRight: "next", PageDown: "next", ArrowLeft: "previous", PageUp: "previous",
              Backspace: "previous", Home: "first", End: "last", "+": "zoomIn", "=": "zoomIn",
              "-": "zoomOut", f: "fit"};
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }  // the browser's own
    var target = event.target;
    if ((event.key === " " || event.key === "Enter") && target && target.tagName === "BUTTON") {
      return;  // a button with the keyboard focus: the browser presses it
    }
    var name = event.key === " " ? (event.shiftKey ? "previous" : "next")
      : Object.prototype.hasOwnProperty.call(keys, event.key) ? keys[event.key] : null;
    if (!name) { return; }  // ArrowUp, ArrowDown and the rest keep their default: scrolling
    event.preventDefault();
    actions[name]();
  });
  // A click does not leave the focus on the button, so space goes on stepping.
  function clickable(b, action) {
    b.addEventListener("mousedown", function (event) { event.preventDefault(); });
    b.addEventListener("click", action);
  }
  clickable(document.getElementById("previous"), actions.previous);
  clickable(document.getElementById("next"), actions.next);
  clickable(document.getElementById("zoom-out"), actions.zoomOut);
  clickable(document.getElementById("fit"), actions.fit);
  clickable(document.getElementById("zoom-in"), actions.zoomIn);
  clickable(document.getElementById("toggle-steps"), toggleSteps);
  Array.prototype.forEach.call(entries, function (entry, k) {
    clickable(entry, function () { show(k); });
  });
  window.addEventListener("resize", function () { layout(); setZoom(modeZoom()); follow(); });

  layout();
  var hash = window.location.hash.slice(1);
  current = hash === "last" ? frames.length - 1 : Math.max(0, (parseInt(hash, 10) || 1) - 1);
  current = Math.min(frames.length - 1, current);
  setZoom(modeZoom());
  show(current);
})();
"""

CONTROLS = """\
<header id="controls">
<button id="previous" type="button"
 title="previous step (left arrow, PageUp, Backspace, shift+space)">&#9664; previous</button>
<span id="counter"></span>
<button id="next" type="button"
 title="next step (right arrow, PageDown, space)">next &#9654;</button>
<button id="zoom-out" type="button" title="zoom out (-)">&minus;</button>
<span id="zoom"></span>
<button id="zoom-in" type="button" title="zoom in (+)">+</button>
<button id="fit" type="button" title="the whole graph in the window (f)">fit</button>
<button id="toggle-steps" type="button" title="show or hide the list of steps">steps</button>
<span id="caption"></span>
</header>"""


def html_page(title, frames, captions, sources=()):
    """The stepper page; ``frames`` are DOT texts, one per step, ``captions`` one line each;
    ``sources`` ``(heading, text)`` pairs shown under the drawing (compile's generated code)."""
    entries = "\n".join(f'<li><button type="button">{html.escape(caption)}</button></li>'
                        for caption in captions)
    shown = "\n".join(f'<div class="frame" id="frame-{i}" data-caption="{html.escape(caption)}">\n'
                      f"{inline_svg(dot_text)}</div>"
                      for i, (dot_text, caption) in enumerate(zip(frames, captions)))
    shown += "".join(f'\n<section class="source">\n<h2>{html.escape(heading)}</h2>\n'
                     f"<pre><code>{html.escape(text)}</code></pre>\n</section>"
                     for heading, text in sources)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n"
            f'{CONTROLS}\n<nav id="steps" aria-label="steps">\n<ol>\n{entries}\n</ol>\n</nav>\n'
            f'<main id="view">\n{shown}\n</main>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n')
