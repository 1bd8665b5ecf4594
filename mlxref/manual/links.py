"""Where a rule's code is: mlxref's source lines, and MLX's function of the same name.

mlxref's side: each rule of a primitive (``eval``, ``vjp``, ``jvp``,
``vmap``, and the methods its own class defines, such as a ``Unary``'s
``derivative``) is found with ``inspect.getsourcelines`` in the class of
its MRO that defines it. The manual carries a page per source file of
mlxref (``source/mlxref.core.primitives.elementwise.html``), one anchor per
line (``#L663``), so the links work offline.

MLX's side: ``primitives.cpp`` at ``MLX_COMMIT``, the snapshot the reference
notes (/work/shared/reference/mlx-transforms.md) were written against. Where
a git clone of MLX is at hand (``MLXREF_MLX_SRC``, default the project's
mirror), the link goes to the line of ``Name::vjp`` (``jvp``, ``vmap``);
without one, to the file.

Read next: ``pages.py``.
"""

import html
import inspect
import os
import pathlib
import re
import subprocess

from ..core.primitives.base import Primitive

MLX_COMMIT = "846d176227a0ac13d2667e58d2bb68b322109ab0"
MLX_VERSION = "0.32.4"  # what the tests compare with (real MLX, the metal extra)
MLX_BLOB = "https://github.com/ml-explore/mlx/blob/{}/{}"
MLX_FILE = MLX_BLOB.format(MLX_COMMIT, "mlx/primitives.cpp")
DEFAULT_MLX_SRC = "/work/.mirror/ml-explore+mlx/repo"
RULES = ("eval", "vjp", "jvp", "vmap")
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def rule_sources(prim):
    """[(method, defining class, path relative to the checkout, first line, last line)]:
    the four rules, then the other methods the class itself defines. A rule
    the class takes from a shared helper (``vmap = vmap_leading``) links to
    the helper, and the class is named with it ("SVD: vmap_leading")."""
    own = [name for name, v in vars(prim).items()
           if inspect.isfunction(v) and name not in RULES and not name.startswith("__")]
    out = []
    for name in RULES + tuple(own):
        owner = next(c for c in prim.__mro__ if name in vars(c))
        function = vars(owner)[name]
        if isinstance(function, (staticmethod, classmethod)):
            function = function.__func__
        label = owner.__name__
        if function.__name__ != name:
            label += f": {function.__name__}"
        out.append((name, label, *source_lines(function), owner is Primitive))
    return out


def source_lines(obj):
    """(path relative to the checkout, first line, last line) of a function or class."""
    obj = inspect.unwrap(obj)
    lines, start = inspect.getsourcelines(obj)
    path = pathlib.Path(inspect.getsourcefile(obj)).resolve().relative_to(ROOT)
    return path.as_posix(), start, start + len(lines) - 1


def source_page(path):
    """The manual's page for a source file: ``source/mlxref.core.ops.sort.html``."""
    return "source/" + path[:-len(".py")].replace("/", ".") + ".html"


def write_source_pages(out_dir, paths, title):
    """One HTML page per source file, each line anchored ``L<n>``."""
    for path in sorted(set(paths)):
        lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
        width = len(str(len(lines)))
        body = "\n".join(
            f'<span id="L{n}"><a class="n" href="#L{n}">{n:>{width}}</a>  {html.escape(line)}</span>'
            for n, line in enumerate(lines, 1))
        target = pathlib.Path(out_dir) / source_page(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(path)}"
            "</title><style>body{font-family:monospace}a.n{color:#999;text-decoration:none}"
            "span:target{background:#ffd}</style></head><body>\n"
            f"<p>{html.escape(path)} &#183; {html.escape(title)} &#183; "
            "<a href=\"../index.html\">the manual</a></p>\n"
            f"<pre>{body}</pre>\n</body></html>\n", encoding="utf-8")


def mlx_file(path, src=None):
    """The text of MLX's ``path`` at MLX_COMMIT, or None without a clone."""
    src = src or os.environ.get("MLXREF_MLX_SRC", DEFAULT_MLX_SRC)
    try:
        return subprocess.run(["git", "-C", src, "show", f"{MLX_COMMIT}:{path}"],
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def mlx_lines(src=None):
    """{"Sin::vjp": line} from MLX's primitives.cpp at MLX_COMMIT, or {} without a clone."""
    found = {}
    for n, line in enumerate((mlx_file("mlx/primitives.cpp", src) or "").splitlines(), 1):
        m = re.match(r"^[\w:<>, ]*?\b(\w+)::(vjp|jvp|vmap)\(", line)
        if m:
            found.setdefault(f"{m.group(1)}::{m.group(2)}", n)
    return found


def mlx_definitions(path, names, src=None):
    """[(label, url)]: where each of ``names`` is first defined in MLX's ``path``
    (a line at column 0 that opens its parameter list); the file without a clone."""
    url = MLX_BLOB.format(MLX_COMMIT, path)
    text = mlx_file(path, src)
    if text is None:
        return [(f"{path} {', '.join(names)}", url)]
    lines = text.splitlines()
    out = []
    for name in names:
        pattern = re.compile(rf"^(?:[^\s/#].*?[\s:*&>])?{re.escape(name)}\(")
        n = next((n for n, line in enumerate(lines, 1)
                  if pattern.match(line) and not line.rstrip().endswith(";")), None)
        if n is None:
            raise ValueError(f"the manual: {name} is not defined in MLX's {path}")
        out.append((f"{path} {name}", f"{url}#L{n}"))
    return out


def mlx_links(name, lines):
    """[(label, url)] for MLX's ``name::vjp``, ``::jvp``, ``::vmap``."""
    if not lines:
        return [(f"{name} (primitives.cpp)", MLX_FILE)]
    return [(f"{name}::{rule}", f"{MLX_FILE}#L{lines[f'{name}::{rule}']}")
            for rule in ("vjp", "jvp", "vmap") if f"{name}::{rule}" in lines]
