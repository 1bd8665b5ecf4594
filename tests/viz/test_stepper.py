"""The HTML stepper (mlxref/viz/stepper.py): the page, and the page at work in Chromium.

The Chromium tests load the stepper of a two-layer MLP's grad into a harness
page: an iframe of exactly the screen size (1920×1080, 1280×720) whose
``srcdoc`` is the stepper. The harness presses keys (KeyboardEvents on the
stepper's document), clicks buttons, and after each action writes what the
DOM says (the current frame, the visited node's bounding rect, the controls'
and the step list's rects, the zoom) into a ``<pre>``, which
``chromium --headless --dump-dom`` prints. Headless Chromium's viewport is
smaller than ``--window-size``; the iframe makes the screen size exact.
"""

import collections
import html
import json
import pathlib
import re
import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest

import mlxref.core as mx
from mlxref import viz
from mlxref.viz import stepper
from mlxref.viz.figures import FIGURES, seed
from support import chromium_or_skip

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed")


# Without the networking flags headless Chromium waits for a network that is not there.
# Scroll bars stay: the page must keep the node in view beside them too.
CHROMIUM = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _start_chromium(tmp_path, args):
    profile = tempfile.mkdtemp(dir=tmp_path)
    return subprocess.Popen([chromium_or_skip(), *CHROMIUM, f"--user-data-dir={profile}", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def mlp_page(tmp_path_factory):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    drawing = FIGURES["mlp_grad"]()
    path = drawing.render(tmp_path_factory.mktemp("stepper") / "mlp.html")
    return drawing, pathlib.Path(path).read_text(encoding="utf-8")


# --- the page, without a browser ---------------------------------------------------


def test_each_frame_marks_the_visited_nodes_for_the_page():
    d = viz.trace(seed, [mx.array(0.5)], transform="grad")
    for frame, step in zip(d.frames(), d.graph.steps):
        marked = [m[1] for m in re.findall(r'^\s+("?)([^"\s\[]+)\1 \[.*\bclass="?visiting\b',
                                           frame, re.MULTILINE)]
        assert marked == [n.name for n in step.nodes if n is not None]
    assert "visiting" not in d.to_dot()


@needs_dot
def test_page_is_self_contained_deterministic_with_a_step_list(tmp_path):
    d = viz.trace(seed, [mx.array(0.5)], transform="vjp")
    first = pathlib.Path(d.render(tmp_path / "a.html")).read_bytes()
    again = viz.trace(seed, [mx.array(0.5)], transform="vjp")
    assert pathlib.Path(again.render(tmp_path / "b.html")).read_bytes() == first
    page = first.decode("utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)
    assert not re.search(r"https?://(?!www\.w3\.org/)", page)  # SVG namespaces only
    entries = re.findall(r"<li><button type=\"button\">(.*?)</button></li>", page)
    assert [html.unescape(e) for e in entries] == d.captions()
    assert page.count('<div class="frame"') == len(d.captions()) == 3
    assert page.count("<svg") == 3 and "<?xml" not in page
    assert page.count('class="node visiting"') == 3  # one visited node per frame
    for control in ("previous", "next", "zoom-out", "zoom-in", "fit", "toggle-steps"):
        assert f'<button id="{control}"' in page


def test_page_escapes_title_and_captions(monkeypatch):
    monkeypatch.setattr(stepper, "inline_svg", lambda dot_text: "<svg></svg>")
    page = stepper.html_page("a<b & c", ["digraph {}"], ['step 1 "x" <y>'])
    assert "<title>a&lt;b &amp; c</title>" in page
    assert '<li><button type="button">step 1 &quot;x&quot; &lt;y&gt;</button></li>' in page
    assert 'data-caption="step 1 &quot;x&quot; &lt;y&gt;"' in page


# --- the page in Chromium ----------------------------------------------------------

HARNESS = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<style>html, body { margin: 0; } iframe { border: 0; display: block; }</style></head>
<body><iframe id="stepper" width="@W@" height="@H@" srcdoc="@PAGE@"></iframe>
<pre id="results"></pre>
<script>
var ACTIONS = @ACTIONS@;
window.addEventListener("load", function () {
  var out = [];
  try {
    var w = document.getElementById("stepper").contentWindow, d = w.document;
    var snapshot = function (action, prevented) {
      var frame = d.querySelector(".frame.current"), node = null;
      Array.prototype.forEach.call(frame.querySelectorAll(".visiting"), function (g) {
        var r = g.getBoundingClientRect();
        node = node === null ? [r.left, r.top, r.right, r.bottom]
          : [Math.min(node[0], r.left), Math.min(node[1], r.top),
             Math.max(node[2], r.right), Math.max(node[3], r.bottom)];
      });
      var svg = frame.querySelector("svg").getBoundingClientRect();
      var list = d.getElementById("steps"), shown = w.getComputedStyle(list).display !== "none";
      var current = d.querySelectorAll("#steps li.current");
      return {action: action, prevented: prevented, frame: Number(frame.id.slice(6)),
              node: node, svg: [svg.left, svg.top, svg.right, svg.bottom],
              window: [w.innerWidth, w.innerHeight],
              client: [d.documentElement.clientWidth, d.documentElement.clientHeight],
              top: d.getElementById("controls").getBoundingClientRect().bottom,
              left: shown ? list.getBoundingClientRect().right : 0, list: shown,
              scroll: [w.scrollX, w.scrollY], zoom: d.getElementById("zoom").textContent,
              counter: d.getElementById("counter").textContent,
              caption: d.getElementById("caption").textContent,
              entries: Array.prototype.map.call(current, function (li) {
                return li.textContent; })};
    };
    out.push(snapshot(null, null));
    ACTIONS.forEach(function (action) {
      var prevented = null;
      if (action.key !== undefined) {
        var event = new w.KeyboardEvent("keydown", {key: action.key, shiftKey: !!action.shift,
                                                     bubbles: true, cancelable: true});
        prevented = !d.body.dispatchEvent(event);
      } else if (action.click !== undefined) {
        d.getElementById(action.click).click();
      } else {
        d.querySelectorAll("#steps button")[action.entry].click();
      }
      out.push(snapshot(action, prevented));
    });
  } catch (e) {
    out.push({error: String(e) + " " + e.stack});
  }
  document.getElementById("results").textContent = JSON.stringify(out);
});
</script></body></html>
"""


def _harness(page, width, height, actions):
    return (HARNESS.replace("@W@", str(width)).replace("@H@", str(height))
            .replace("@ACTIONS@", json.dumps(actions)).replace("@PAGE@", html.escape(page)))


def _results(run, timeout=60):
    stdout, stderr = run.communicate(timeout=timeout)
    dom = stdout.decode("utf-8", "replace")
    found = re.search(r'<pre id="results">(.*?)</pre>', dom, re.DOTALL)
    assert found and found.group(1), ("no results from Chromium: "
                                      + stderr.decode("utf-8", "replace")[-2000:])
    results = json.loads(html.unescape(found.group(1)))
    assert "error" not in results[-1], results[-1]["error"]
    return results


def _on_screen(s, what="node"):
    """The rect lies in the part of the screen the graph shows in."""
    left, top, right, bottom = s[what]
    return (left >= s["left"] and top >= s["top"] and right <= s["client"][0]
            and bottom <= s["client"][1])


def _width(s):
    return s["svg"][2] - s["svg"][0]


def _key(key, shift=False):
    return {"key": key, "shift": shift}


SIZES = [(1920, 1080), (1280, 720)]


@pytest.mark.parametrize("width,height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_stepper_follows_the_visited_node(mlp_page, tmp_path, width, height):
    """First, middle and last step (PageDown ×n, End, Home), every key, every button."""
    drawing, page = mlp_page
    captions = drawing.captions()
    last, middle = len(captions) - 1, len(captions) // 2
    actions = ([_key("PageDown")] * middle + [_key("End"), _key("Home"), _key(" "),
               _key(" ", shift=True), _key("ArrowRight"), _key("ArrowRight"), _key("Backspace"),
               _key("PageUp"), _key("ArrowLeft"), _key("ArrowUp"), _key("ArrowDown"),
               {"click": "next"}, {"click": "previous"}, {"entry": middle + 1},
               {"click": "zoom-in"}, {"click": "zoom-out"}, {"click": "fit"}, _key("End"),
               {"click": "toggle-steps"}, {"click": "toggle-steps"}])
    harness = tmp_path / "harness.html"
    harness.write_text(_harness(page, width, height, actions), encoding="utf-8")
    run = _start_chromium(tmp_path, ["--window-size=2000,1400", "--virtual-time-budget=3000",
                                     "--dump-dom", harness.as_uri()])
    shots = _results(run)
    assert len(shots) == len(actions) + 1
    for s in shots:
        assert s["window"] == [width, height] and s["client"][0] <= width
        assert s["counter"] == f"{s['frame'] + 1} / {len(captions)}"
        assert s["caption"] == captions[s["frame"]] and s["entries"] == [captions[s["frame"]]]
        assert s["node"] is not None and _on_screen(s), s  # at every step, after every action

    start = shots[0]
    assert start["frame"] == 0 and start["zoom"] == "75%"
    # The graph is bigger than the screen, and the first node is below the fold
    # without scrolling: the page had to scroll to it.
    assert start["svg"][3] - start["svg"][1] > height
    assert start["node"][1] + start["scroll"][1] > height
    assert start["scroll"][1] > 0

    walked = shots[1:middle + 1]
    assert [s["frame"] for s in walked] == list(range(1, middle + 1))
    assert all(s["prevented"] for s in walked)
    keys = shots[middle + 1:middle + 12]
    expect = [last, 0, 1, 0, 1, 2, 1, 0, 0, 0, 0]  # End Home ␣ ⇧␣ → → ⌫ PgUp ← ↑ ↓
    assert [s["frame"] for s in keys] == expect
    assert [s["prevented"] for s in keys] == [True] * 9 + [False, False]  # ↑ ↓ scroll
    assert keys[0]["scroll"] != shots[middle]["scroll"]  # End: scrolled to the last node

    clicks = shots[middle + 12:]
    nxt, previous, entry, zoom_in, zoom_out, fit, end, hidden, back = clicks
    assert (nxt["frame"], previous["frame"], entry["frame"]) == (1, 0, middle + 1)
    assert zoom_in["zoom"] == "94%" and zoom_out["zoom"] == "75%"
    assert _width(zoom_in) == pytest.approx(1.25 * _width(entry), abs=1)
    assert _width(zoom_out) == pytest.approx(_width(entry), abs=1)
    # fit: the whole graph in the window, both ways, filling it one way
    assert _on_screen(fit, "svg") and _on_screen(end, "svg") and end["frame"] == last
    room = (fit["client"][0] - fit["left"], fit["client"][1] - fit["top"])
    size = (_width(fit), fit["svg"][3] - fit["svg"][1])
    assert max(size[0] / room[0], size[1] / room[1]) > 0.9
    # hiding the step list gives the room to the graph, still fitted
    assert not hidden["list"] and hidden["left"] == 0 and _on_screen(hidden, "svg")
    assert _width(hidden) >= _width(end) and back["list"]


def _png_rows(data):
    """The pixel rows (bytes, 3 or 4 per pixel) of an 8-bit RGB or RGBA PNG, and its bpp."""
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, rows = bytes(stride), []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 2:  # up (most rows): one pass in C-speed zip
            line = bytearray((u + v) & 255 for u, v in zip(line, prev))
        elif kind in (1, 3, 4):  # sub, average, paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                if kind == 1:
                    line[i] = (line[i] + a) & 255
                elif kind == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    best = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    line[i] = (line[i] + best) & 255
        rows.append(bytes(line))
        prev = line
    return rows, bpp


def _count(rows, bpp, colours, tolerance=40):
    """How many pixels lie within ``tolerance`` (summed over r, g, b) of each colour."""
    pixels = collections.Counter()
    for row in rows:  # a screenshot has few distinct colours: count them first
        pixels.update(zip(row[0::bpp], row[1::bpp], row[2::bpp]))
    return [sum(n for (r, g, b), n in pixels.items()
                if abs(r - r0) + abs(g - g0) + abs(b - b0) <= tolerance)
            for r0, g0, b0 in colours]


@needs_dot
def test_page_opens_at_the_step_in_its_address(tmp_path):
    """page.html#1 and page.html#last, screenshot: the walk's colours where they belong."""
    page = viz.trace(seed, [mx.array(0.5)], transform="vjp").render(tmp_path / "seed.html")
    runs = {frame: _start_chromium(tmp_path, ["--window-size=720,600",
                                              f"--screenshot={tmp_path / frame}.png",
                                              f"{pathlib.Path(page).as_uri()}#{frame}"])
            for frame in ("1", "last")}  # both at once
    shots = {}
    for frame, run in runs.items():
        run.communicate(timeout=60)
        assert run.returncode == 0
        shots[frame] = _png_rows((tmp_path / f"{frame}.png").read_bytes())
    red, purple = (0xC6, 0x28, 0x28), (0x6A, 0x1B, 0x9A)
    first_red, first_purple = _count(*shots["1"], [red, purple])
    last_red, last_purple = _count(*shots["last"], [red, purple])
    # The first frame: the walk at mul_3 (red border), no gradient on x yet.
    assert first_red > 100 and first_purple == 0
    # The last frame: the walk at sin_1, and x shows its gradient (purple).
    assert last_red > 100 and last_purple > 10
