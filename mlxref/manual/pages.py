"""The manual's generated pages, written as MyST Markdown into the Sphinx source tree.

- ``families/<family>.md``: one page per op family (``catalogue.families``):
  each op's signature, docstring, MLX link and the primitives it builds; then
  each primitive's docstring, check-rules verdict and method, the formulas of
  its rules (``rules.py``), links to its code (``links.py``), and a drawing
  of the vjp walk of its check case (``mlxref.viz``).
- ``transforms/<module>.md``: a transform's module docstring (the
  algorithm's steps), links to the MLX functions it mirrors (``TRANSFORMS``)
  and to its own source, and each public function or class in source order.
- ``api/<package>.md``: ``nn``, ``optimizers``, ``utils``, ``testing``: the
  package docstring, then each public name's signature and docstring.
- ``cli.md``: the ``--help`` of every command, from ``cli._build_parser()``.
- ``differs.md``: the README's "Where mlxref differs from MLX", taken from
  the README when the manual is built.

Docstrings are shown as prose (``_prose``: Markdown, their ``code`` kept).
Raw HTML (formulas, links) sits in MyST HTML blocks: one block per line run,
no blank line inside. Every page's second line says what it was built from
(``stamp``).

Read next: ``notebooks.py``.
"""

import ast
import functools
import html
import importlib
import inspect
import math
import pathlib
import re

from .. import __version__
from .. import core as mx
from . import catalogue, links, rules

# The transforms' modules: the public names each one defines, and the MLX
# functions it mirrors ({file: [functions]}; python/src/transforms.cpp binds
# those of mlx/transforms.cpp).
TRANSFORMS = {
    "vjp": ("mx.vjp", {"mlx/transforms.cpp": ["vjp"]}),
    "jvp": ("mx.jvp", {"mlx/transforms.cpp": ["jvp"]}),
    "grad": ("mx.grad, mx.value_and_grad", {"mlx/transforms.cpp": ["value_and_grad"]}),
    "vmap": ("mx.vmap", {"mlx/transforms.cpp": ["vmap", "vmap_trace", "vmap_replace"]}),
    "custom_function": ("mx.custom_function",
                        {"mlx/transforms.cpp": ["custom_function", "custom_vjp"]}),
    "checkpoint": ("mx.checkpoint", {"mlx/transforms.cpp": ["checkpoint"]}),
    "compile": ("mx.compile", {"mlx/compile.cpp": ["compile", "compile_trace", "compile_dfs",
                                                   "compile_simplify", "compile_fuse",
                                                   "compile_replace"]}),
    "export": ("mx.export_function, mx.exporter, mx.import_function",
               {"mlx/export.cpp": ["exporter", "export_function", "import_function"]}),
    "eval": ("mx.eval, mx.async_eval", {"mlx/transforms.cpp": ["eval_impl", "eval",
                                                               "async_eval"]}),
    "tape": ("the tape search", {"mlx/transforms.cpp": ["vjp"]}),
    "trees": ("argument trees", {"python/src/trees.cpp": ["tree_flatten", "tree_unflatten"]}),
    "events": ("announcing walk steps for the drawings; MLX has none", {}),
}
PACKAGES = ("nn", "optimizers", "utils", "testing")


def stamp():
    return (f"*Built from mlxref {__version__} against MLX {links.MLX_VERSION} "
            f"(source commit {links.MLX_COMMIT[:12]}).*")


def _page(title, body):
    return f"# {title}\n\n{stamp()}\n\n{body.rstrip()}\n"


def _text_block(text):
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text.rstrip()}\n{fence}\n"


def _code_block(text):
    return f"```python\n{text.rstrip()}\n```\n"


_CODE_SPAN = re.compile(r"(``.+?``|`[^`]+`)", re.S)
_MARKUP = re.compile(r"([\\*_<\[\]])")


def _prose(doc):
    """A docstring as MyST Markdown, so it reads as the prose it is: its
    ``code`` spans stay code, its ``>>>`` examples and indented blocks become
    code blocks, and the characters Markdown would read as markup (``*``,
    ``_``, ``<``, brackets, a leading ``#``) are escaped everywhere else."""
    out, prose, example, indented, previous = [], [], False, False, ""
    for line in doc.splitlines():
        if line.startswith(">>>") and not example:
            out.extend(_escaped(prose) + ["```python"])
            prose, example = [], True
        elif example and not line.strip():
            out.append("```")
            example = False
        indented = (line.startswith("    ") and (indented or not previous.strip())
                    or indented and not line.strip())
        if example or indented:
            out.extend(_escaped(prose) + [line])
            prose = []
        else:
            prose.append(line)
        previous = line
    out.extend(_escaped(prose) + (["```"] if example else []))
    return "\n".join(out).rstrip() + "\n"


def _escaped(lines):
    """Prose lines with Markdown's markup escaped outside their code spans
    (which may run over a line break)."""
    text = "".join(part if _CODE_SPAN.fullmatch(part) else _MARKUP.sub(r"\\\1", part)
                   for part in _CODE_SPAN.split("\n".join(lines)))
    return re.sub(r"^(\s*)#", r"\1\\#", text, flags=re.M).split("\n") if lines else []


def _html(markup):
    """One MyST HTML block (its lines must not be blank)."""
    return "\n".join(line for line in markup.splitlines() if line.strip()) + "\n"


def _doc(obj):
    return inspect.getdoc(obj) or ""


def _signature(name, function):
    try:
        return f"{name}{inspect.signature(function)}"
    except (TypeError, ValueError):
        return name


def op_label(name):
    return "op-" + name.replace(".", "-").replace("_", "-").lower()


def prim_label(prim):
    return "prim-" + prim.__name__.lower()


# --- op families -------------------------------------------------------------------------


def family_page(family, ops, prims, verdicts, mlx_lines, walks, known):
    """The page of one family. ``verdicts``: {name: symbolic.Result};
    ``walks``: {primitive: image path relative to the page, or None};
    ``known``: the labels of the entries in the manual (links go to those)."""
    parts = []
    if ops:
        parts.append("## Ops\n")
        for op in ops:
            parts.append(_op_entry(op, known))
    if prims:
        parts.append("## Primitives\n")
        by_case = rules.cases_by_primitive()
        for prim in prims:
            parts.append(_prim_entry(prim, by_case.get(prim, []), verdicts.get(prim.__name__),
                                     mlx_lines, walks.get(prim)))
    return _page(f"The {family} family", "\n".join(parts))


def _ref(text, label, known):
    return f"[{text}](#{label})" if label in known else f"`{text}`"


def _op_entry(op, known):
    out = [f"({op_label(op.name)})=", f"### `{op.name}`\n",
           _text_block(_signature("mx." + op.name, op.function))]
    doc = _doc(op.function)
    out.append(_text_block(doc) if doc else "(no docstring: MLX's page says what it does)\n")
    out.append(f"MLX's documentation: <{op.mlx_url}>\n")
    if op.primitives:
        out.append("Builds: " + ", ".join(_ref(p.__name__, prim_label(p), known)
                                          for p in op.primitives) + "\n")
    elif op.composes:
        out.append("Builds no primitive of its own; composes: "
                   + ", ".join(_ref(n, op_label(n), known) for n in op.composes) + "\n")
    else:
        out.append("Builds no node (it returns or converts its input as it is).\n")
    return "\n".join(out)


def _prim_entry(prim, cases, verdict, mlx_lines, walk):
    out = [f"({prim_label(prim)})=", f"### {prim.__name__}\n"]
    doc = inspect.getdoc(prim) if "__doc__" in vars(prim) and prim.__doc__ else ""
    if doc:
        out.append(_text_block(doc))
    if verdict is not None:
        marks = " ".join(f"{k} {'ok' if getattr(verdict, k) else 'FAIL'}"
                         for k in ("forward", "vjp", "jvp", "vmap"))
        out.append(f"check-rules: **{'pass' if verdict.ok else 'FAIL'}** ({marks}); "
                   f"method: {verdict.method}; {verdict.cases} case(s).\n")
    source = "".join(
        f'<li><code>{name}</code>: <a class="source" href="../{links.source_page(path)}#L{a}">'
        f"{html.escape(path)} lines {a}&#8211;{b}</a> ({owner}"
        f"{', the default: not implemented' if default else ''})</li>"
        for name, owner, path, a, b, default in links.rule_sources(prim))
    mlx = ", ".join(f'<a href="{html.escape(url)}">{html.escape(label)}</a>'
                    for label, url in links.mlx_links(prim.__name__, mlx_lines))
    out.append(_html(f"<p>The rules in mlxref:</p><ul>{source}</ul>"
                     f"<p>In MLX (primitives.cpp): {mlx}</p>"))
    if cases:
        case = cases[0]
        out.append("The check case's program, on inputs of shapes "
                   f"{', '.join(str(tuple(s)) for s in case.shapes)} ({case.domain}):\n")
        out.append(_code_block(_case_source(case)))
        out.append(_formulas(case))
    if walk:
        out.append(f"![The vjp walk of the check case's program]({walk})\n")
    return "\n".join(out)


def _case_source(case):
    """The case's program as written: the text of its lambda (not the whole
    line that holds it), or the public op it is (``mx.sin``)."""
    build, note = case.build, (f"  # {case.note}" if case.note else "")
    if build.__name__ != "<lambda>":
        names = {op.function: op.name for op in catalogue.public_ops()}
        return (f"mx.{names[build]}" if build in names else build.__qualname__) + note
    path, line = inspect.getsourcefile(build), build.__code__.co_firstlineno
    text, tree = _parsed(path)
    arguments = build.__code__.co_varnames[:build.__code__.co_argcount]
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)
             and node.lineno == line and tuple(a.arg for a in node.args.args) == arguments]
    if len(found) != 1:  # two lambdas alike on one line: the line itself
        return inspect.getsource(build).strip() + note
    return " ".join(ast.get_source_segment(text, found[0]).split()) + note


@functools.lru_cache(maxsize=None)
def _parsed(path):
    text = pathlib.Path(path).read_text(encoding="utf-8")
    return text, ast.parse(text)


def _formulas(case):
    f = rules.formulas(case)
    if f is None:
        return ("An iterative algorithm: its rules cannot run on symbols, so "
                "check-rules checks them at high-precision points and no formula is shown.\n")
    blocks = ['<div class="formulas">']
    for key, title in (("forward", "forward"), ("vjp", "vjp (cotangents u)"),
                       ("jvp", "jvp (tangents t)"), ("vmap", "vmap (a batch of two, axis 0)")):
        blocks.append(f'<p class="rule">{title}</p>')
        blocks.extend(rules.math_block(*item) for item in f[key])
    blocks.append("</div>")
    return _html("\n".join(blocks))


def walk_drawing(case, path):
    """Draw the vjp walk of ``case``'s program on numbers into ``path`` (SVG);
    False if the program has no vjp (MLX gives none) or cannot be drawn."""
    from .. import viz

    lo, hi = (0.25, 0.75) if case.domain != "above_one" else (1.25, 1.75)
    inputs = []
    for k, shape in enumerate(case.shapes):
        n = math.prod(shape)
        values = [lo + (hi - lo) * ((7 * i + 3 * k) % 11) / 10 for i in range(n)]
        dtype = mx.complex64 if case.domain == "complex" else mx.float32
        inputs.append(mx.array(values, dtype).reshape(shape))
    try:
        drawing = viz.trace(case.build, inputs, transform="vjp", values=4)
        drawing.render(str(path), "svg")
    except Exception:  # noqa: BLE001 - no vjp (MLX's "Not implemented"), or no Graphviz
        return False
    return True


# --- transforms, packages, CLI, differences ----------------------------------------------


def transform_page(name, module, mlx_src=None):
    """A transform's module: its docstring (the algorithm's steps), the MLX
    functions it mirrors, and each public function or class in source order,
    linked to its lines."""
    public, mirrors = TRANSFORMS[name]
    path, _, _ = links.source_lines(module)
    mlx = ", ".join(f'<a href="{html.escape(url)}">{html.escape(label)}</a>'
                    for file, names in mirrors.items()
                    for label, url in links.mlx_definitions(file, names, mlx_src))
    body = [_html(f"<p>The module <code>{module.__name__}</code> ({html.escape(public)}): "
                  f'<a class="source" href="../{links.source_page(path)}">{path}</a>. '
                  f"In MLX: {mlx or 'none'}.</p>"),
            _prose(_doc(module))]
    defined = [v for n, v in vars(module).items() if not n.startswith("_")
               and (inspect.isfunction(v) or inspect.isclass(v))
               and v.__module__ == module.__name__]
    for value in sorted(defined, key=lambda v: links.source_lines(v)[1]):
        body.append(_definition(value.__name__, value))
        if hasattr(mx, value.__name__):
            body.append(f"MLX's documentation: <{catalogue.MLX_DOCS.format(value.__name__)}>\n")
    return _page(f"The {name} transform", "\n".join(body))


def transform_sources():
    """The transforms' modules, as paths relative to the checkout (for their source pages)."""
    return [links.source_lines(importlib.import_module(f"mlxref.core.transforms.{name}"))[0]
            for name in TRANSFORMS]


def _definition(name, value):
    """A function's or class's heading, signature, source link and docstring."""
    path, start, end = links.source_lines(value)
    return "\n".join([
        f"## `{name}`\n", _code_block(_signature(name, value)),
        _html(f'<p><a class="source" href="../{links.source_page(path)}#L{start}">'
              f"{path} lines {start}&#8211;{end}</a></p>"),
        _prose(_doc(value))])


def package_page(module):
    body = [_prose(_doc(module))]
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in sorted(names):
        value = getattr(module, name)
        if not (inspect.isfunction(value) or inspect.isclass(value)):
            continue
        body.append(f"## `{name}`\n")
        body.append(_code_block(_signature(name, value)))
        body.append(_prose(_doc(value)))
    return _page(f"{module.__name__}", "\n".join(body))


def cli_page(parser):
    """Every command's help, from argparse."""
    body = []
    for path, sub in _parsers(parser, [parser.prog]):
        body.append(f"## `{' '.join(path)}`\n")
        body.append(_text_block(sub.format_help()))
    return _page("The command line", "\n".join(body))


def _parsers(parser, path):
    yield path, parser
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for name, sub in action.choices.items():
            yield from _parsers(sub, path + [name])


def differs_page(readme):
    """The README's section "Where mlxref differs from MLX", its relative links
    made plain text (they point into the checkout, not the manual)."""
    text = pathlib.Path(readme).read_text(encoding="utf-8")
    m = re.search(r"^## Where mlxref differs from MLX\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        raise ValueError("README.md has no section '## Where mlxref differs from MLX'")
    section = re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]+\)", r"\1", m.group(1))
    return _page("Where mlxref differs from MLX",
                 "Taken from the README when the manual was built.\n\n" + section)
