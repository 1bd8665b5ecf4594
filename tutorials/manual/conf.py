"""Sphinx's settings for the mlxref manual (``make docs``; see mlxref/manual/__init__.py).

This directory holds the hand-written pages; ``python -m mlxref.manual``
copies it beside the generated pages into build/manual-src and builds from
there. The theme is the Sphinx Book Theme (the ``docs`` extra): the site's
tree on the left, "On this page" on the right, search at the top. Nothing
is fetched when a page is viewed: no MathJax (formulas are MathML), no web
fonts or CDN (the theme's fonts and scripts are copied into the build).
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
html_theme = "sphinx_book_theme"
html_theme_options = {
    "show_navbar_depth": 1,  # the left tree opens at the top level; the page's branch opens
    "max_navbar_depth": 3,
    "show_toc_level": 2,  # "On this page": sections and each op's entry
    "home_page_in_toc": True,
    "use_download_button": False,  # no print-to-PDF script or download menu
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
    "footer_content_items": [],  # no "By <author>" line
}
html_sidebars = {"**": ["navbar-logo", "sbt-sidebar-nav.html"]}  # search: in the header
html_static_path = ["_static"]
html_css_files = ["manual.css"]
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
templates_path = []
html_show_copyright = False  # no "©." line under every page
