"""Sphinx's settings for the mlxref manual (``make docs``; see mlxref/manual/__init__.py).

This directory holds the hand-written pages; ``python -m mlxref.manual``
copies it beside the generated pages into build/manual-src and builds from
there. Nothing is fetched when a page is viewed: no MathJax (formulas are
MathML), no web fonts, no CDN.
"""

import mlxref
from mlxref.manual import links

project = "mlxref"
release = version = mlxref.__version__
# Every page's title, Sphinx's own (index, search) included, names both versions.
html_title = f"mlxref {version} manual (against MLX {links.MLX_VERSION})"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
myst_heading_anchors = 3
exclude_patterns = ["_extra"]
html_extra_path = ["_extra"]
html_theme = "alabaster"
html_theme_options = {"font_family": "Georgia, serif", "head_font_family": "Georgia, serif",
                      "code_font_family": "monospace", "page_width": "1100px"}
html_static_path = ["_static"]
html_css_files = ["manual.css"]
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
templates_path = []
html_show_copyright = False  # no "©." line under every page
