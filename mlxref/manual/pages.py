"""The manual's generated pages, written as MyST Markdown into the Sphinx source tree.

- ``families/<family>.md``: one page per op family (``catalogue.families``):
  each op's signature, docstring, MLX link, the primitives it builds and a
  drawing of the vjp walk of a small call of it (``op_walk``: the call is
  ``catalogue.sample``'s, drawn by ``mlxref.viz``), or the one line saying
  why it has none, and, where MLX has no vjp for a primitive the walk runs
  (``own_rules``), a line saying so; then each primitive's docstring, check-rules verdict and
  method, the formulas of its rules (``rules.py``: written once, per element
  or in matrix or convolution form, where that holds for every element,
  otherwise the elements; every case of a factorization), links to its code
  (``links.py``), and its vjp walk: a link
  to the op drawing that shows it, or, for a primitive no op drawing shows,
  the walk of its check case (``draw_walks``).
- ``transforms/<module>.md``: a transform's module docstring (the
  algorithm's steps), links to the MLX functions it mirrors (``TRANSFORMS``)
  and to its own source, a drawing (``TRANSFORM_DRAWINGS``: the seed
  example under the transform, or the README's figure of it) or why it has
  none (``NO_DRAWING``), and each public function or class in source order.
- ``api/<package>.md``: ``nn``, ``optimizers``, ``utils``, ``testing``: the
  package docstring, then each public name's signature and docstring.
- ``cli.md``: the ``--help`` of every command, from ``cli.build_parser()``.
- ``differs.md``: the README's "Where mlxref differs from MLX", taken from
  the README when the manual is built.

Docstrings are shown as prose (``_prose``: Markdown, their ``code`` kept).
Raw HTML (formulas, links) sits in MyST HTML blocks: one block per line run,
no blank line inside. Every page's second line says what it was built from
(``stamp``).

Read next: ``notebooks.py``.
"""

import ast
import html
import importlib
import inspect
import math
import pathlib
import re
import types
from dataclasses import dataclass

from .. import __version__
from .. import core as mx
from ..core.primitives.base import StopGradient
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
    "program": ("mx.compile's call: the tape as one generated Python function; MLX "
                "rebuilds the nodes", {"mlx/compile.cpp": ["compile_replace"]}),
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
    return (f"*Built from mlxref {__version__}, compared with MLX {links.MLX_VERSION} "
            f"(MLX's source at its commit {links.MLX_COMMIT[:12]}).*")


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


def html_block(markup):
    """One MyST HTML block (its lines must not be blank)."""
    return "\n".join(line for line in markup.splitlines() if line.strip()) + "\n"


def _doc(obj):
    return inspect.getdoc(obj) or ""


def _signature(name, function):
    """``name(parameters)``, a default that is a function written as its name
    (its repr holds a memory address, which changes from run to run)."""
    try:
        text = f"{name}{inspect.signature(function)}"
    except (TypeError, ValueError):
        return name
    text = re.sub(r"<(?:built-in )?function ([\w.<>]+) at 0x[0-9a-f]+>", r"\1", text)
    return re.sub(r" at 0x[0-9a-f]+>", ">", text)


def op_label(name):
    return "op-" + name.replace(".", "-").replace("_", "-").lower()


def prim_label(prim):
    return "prim-" + prim.__name__.lower()


# --- op families -------------------------------------------------------------------------


@dataclass
class Walk:
    """What an entry shows of a vjp walk: a drawing (``image``, relative to the
    page, and the ``call`` drawn), or the ``reason`` there is none, or, for a
    primitive, the op whose drawing shows it (``shown_at``)."""

    image: str = None
    call: str = ""
    reason: str = None
    shown_at: str = None
    own_rules: tuple = ()  # primitives drawn whose vjp MLX does not have (own_rules)


def family_page(family, ops, prims, verdicts, mlx_lines, walks, known):
    """The page of one family. ``verdicts``: {name: symbolic.Result};
    ``walks``: {op name or primitive: Walk};
    ``known``: the labels of the entries in the manual (links go to those)."""
    parts = [summary(family, ops, prims) + "\n"]
    if ops:
        parts.append(_op_table(ops, known))
        parts.append("## Ops\n")
        for op in ops:
            parts.append(_op_entry(op, known, walks.get(op.name)))
    if prims:
        parts.append("## Primitives\n")
        by_case = rules.cases_by_primitive()
        for prim in prims:
            parts.append(_prim_entry(prim, by_case.get(prim, []), verdicts.get(prim.__name__),
                                     mlx_lines, walks.get(prim)))
    return _page(f"The {family} family", "\n".join(parts))


def summary(family, ops=(), prims=()):
    """What a family holds, in one paragraph: its ops' module docstring's first
    paragraph, or its primitives' (a family of primitives only)."""
    modules = sorted({op.function.__module__ for op in ops}) or sorted(
        {p.__module__ for p in prims})
    doc = inspect.getdoc(importlib.import_module(modules[0])) if modules else ""
    first = " ".join((doc or f"The {family} family.").split("\n\n")[0].split())
    return _escaped([first])[0]


def one_line(op):
    """An op's description in one sentence: the first sentence of its docstring,
    without the leading "``mx.name``:" (empty when it has no docstring)."""
    first = " ".join(_doc(op.function).split("\n\n")[0].split())
    first = re.sub(r"^``[^`]+``(?: \([^)]*\))?: ", "", first)
    sentence = re.match(r".+?[.!?](?=\s|$)", first)
    return sentence.group(0) if sentence else first


def _op_table(ops, known):
    """The table at the top of a family page: each op, what it computes, the
    primitives it builds (or "composes"), and MLX's page for it."""
    rows = ["| Op | What it computes | Builds | MLX |", "|---|---|---|---|"]
    for op in ops:
        builds = (", ".join(_ref(p.__name__, prim_label(p), known) for p in op.primitives)
                  or ("composes " + ", ".join(f"`{n}`" for n in op.composes) if op.composes
                      else "no node"))
        text = _escaped([one_line(op)])[0].replace("|", "\\|") or "(no description)"
        rows.append(f"| [`{op.name}`](#{op_label(op.name)}) | {text} | {builds} "
                    f"| [page]({op.mlx_url}) |")
    return "\n".join(rows) + "\n"


def family_index(families):
    """The Op families page: a table of the families ({family: (ops, primitives)}),
    each with what it holds and its numbers of ops and primitives, and the
    (hidden) tree the sidebar shows."""
    rows = ["| Family | What it holds | Ops | Primitives |", "|---|---|---|---|"]
    for family, (ops, prims) in sorted(families.items()):
        rows.append(f"| [{family}]({family}.md) | {summary(family, ops, prims)} "
                    f"| {len(ops)} | {len(prims)} |")
    toc = "\n".join(sorted(families))
    return _page("Op families", "Each page lists a family's ops (what each computes, its "
                 "arguments, an example, the primitives it builds, a drawing of its vjp "
                 "walk), then its primitives with their rules as formulas.\n\n"
                 + "\n".join(rows) + f"\n\n```{{toctree}}\n:hidden:\n:maxdepth: 1\n\n{toc}\n```")


def _ref(text, label, known):
    return f"[{text}](#{label})" if label in known else f"`{text}`"


def _op_entry(op, known, walk=None):
    out = [f"({op_label(op.name)})=", f"### `{op.name}`\n",
           _code_block(_signature("mx." + op.name, op.function))]
    doc = _doc(op.function)
    out.append(_prose(doc))  # check_coverage: every op has one, with an example
    out.append(f"MLX's documentation: <{op.mlx_url}>\n")
    if op.primitives:
        out.append("Builds: " + ", ".join(_ref(p.__name__, prim_label(p), known)
                                          for p in op.primitives) + "\n")
    elif op.composes:
        out.append("Builds no primitive of its own; composes: "
                   + ", ".join(_ref(n, op_label(n), known) for n in op.composes) + "\n")
    else:
        out.append("Builds no node (it returns or converts its input as it is).\n")
    if walk is not None and walk.image:
        out.append(f"The vjp walk of `{walk.call}` (cotangents 1, 2, 3...; drawn by "
                   f"`mlxref.viz.trace`):\n\n![The vjp walk of {op.name}]({walk.image})\n")
        if walk.own_rules:
            names = ", ".join(_ref(p.__name__, prim_label(p), known) for p in walk.own_rules)
            out.append(f"MLX has no vjp for {names}: this walk runs mlxref's own rule "
                       "(the primitive's entry says which), where MLX raises "
                       "\"Not implemented\".\n")
    elif walk is not None and walk.reason:
        out.append(f"No vjp walk is drawn: `mx.{op.name}` {walk.reason}.\n")
    return "\n".join(out)


def _prim_entry(prim, cases, verdict, mlx_lines, walk):
    out = [f"({prim_label(prim)})=", f"### {prim.__name__}\n"]
    doc = inspect.getdoc(prim) if "__doc__" in vars(prim) and prim.__doc__ else ""
    if doc:
        out.append(_prose(doc))
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
    out.append(html_block(f"<p>The rules in mlxref:</p><ul>{source}</ul>"
                     f"<p>In MLX (primitives.cpp): {mlx}</p>"))
    if cases and cases[0].points and prim in rules.NAMED:
        out.append(html_block(
            f'<p class="named">An iterative algorithm cannot run on symbols: in the formulas '
            f"below the outputs of {prim.__name__} are <em>named, not computed</em>: "
            f"{rules.NAMED[prim][1]}. The vjp, jvp and vmap rules are mlxref's code run on "
            "those names, so the formulas are the rules written in terms of the "
            "factorization's outputs (check-rules checks them at high-precision points).</p>"))
    # A factorization's cases each show other outputs (S only; U, S, Vt...): all are
    # shown. Otherwise the first case's formulas, after the programs of all of them.
    shown = cases if cases and cases[0].points else cases[:1]
    if len(cases) > len(shown):
        out.append(f"check-rules runs {len(cases)} programs:\n")
        out.append(_code_block("\n".join(_case_source(c, shapes=True) for c in cases)))
        out.append("The formulas of the first, run on symbols:\n")
        out.append(_formulas(cases[0]))
        shown = []
    for case in shown:
        out.append("The check case's program, on inputs of shapes "
                   f"{', '.join(str(tuple(s)) for s in case.shapes)} ({case.domain}):\n")
        out.append(_code_block(_case_source(case)))
        out.append(_formulas(case))
    if walk is not None and walk.image:
        out.append(f"![The vjp walk of the check case's program]({walk.image})\n")
    elif walk is not None and walk.shown_at:
        out.append(f"Its vjp walk in a call: the drawing of "
                   f"[{walk.shown_at}](#{op_label(walk.shown_at)}).\n")
    elif walk is not None and walk.reason:
        out.append(f"No drawing of the check case's vjp walk ({walk.reason}).\n")
    return "\n".join(out)


def _case_source(case, shapes=False):
    """The case's program as written: the text of its lambda (not the whole
    line that holds it), or the public op it is (``mx.sin``); its note, and
    with ``shapes`` its inputs' shapes, as a comment."""
    said = ([case.note] if case.note else []) + (
        [f"inputs {', '.join(str(tuple(x)) for x in case.shapes)}"
         + ("" if case.domain == "real" else f" ({case.domain})")] if shapes else [])
    build, note = case.build, (f"  # {'; '.join(said)}" if said else "")
    if build.__name__ != "<lambda>":
        names = {op.function: op.name for op in catalogue.public_ops()}
        return (f"mx.{names[build]}" if build in names else build.__qualname__) + note
    node = catalogue.lambda_node(build)
    if node is None:  # two lambdas alike on one line: the line itself
        return inspect.getsource(build).strip() + note
    return ast.unparse(node) + note


def _sub(name, index="i"):
    return f"{html.escape(name)}<sub>{index}</sub>"


def _listed(words):
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def rule_titles(f):
    """What each of ``rules.formulas``' rules shows, and its symbols, naming only
    the inputs the case has, under the names its program gives them
    (``rules.shown_name`` prints them so): [(rule, title HTML)]."""
    names, kind = f["names"], f["kind"]
    elements = _listed([_sub(n) for n in names])
    of = _listed([f"{_sub(n)} of {html.escape(n)}" for n in names])
    if kind == "per element":
        (_, shape, _), = f["forward"]
        broadcast = any(tuple(s) != tuple(shape) for _, s, _ in f["inputs"])
        forward = (f"forward, once for every element: f<sub>i</sub> is f's element i, "
                   f"{elements} the element{'s' if len(names) > 1 else ''} it reads"
                   + (" (the inputs broadcast to f's shape)" if broadcast else ""))
    elif kind == "stated":
        forward = "forward"
    else:
        forward = f"forward: f of the elements {of} (row-major order)"
        if f["complex"]:
            forward += (f"; a complex {_sub(names[0], 0)} is x<sub>{names[0]}0</sub> + "
                        f"i y<sub>{names[0]}0</sub>")
    vjp = "vjp: u<sub>i</sub> is the cotangent of f's element i"
    if any(c and "&#8721;" in c for c in f["compact"]["vjp"]):
        vjp += ("; &#8721;<sub>i&#8594;j</sub> adds over the elements i of f that read "
                "element j of a broadcast input")
    tangents = _listed([_sub("d" + n) for n in names])
    jvp = (f"jvp: {tangents} {'is the tangent' if len(names) == 1 else 'are the tangents'}"
           f" of {elements}")
    if f["compact"]["vmap"][0]:
        e = rules.example_letter(names)
        vmap = (f"vmap over a batch of examples stacked on axis 0: <sup>({e})</sup> marks "
                f"example {e} ({html.escape(names[0])}<sub>i</sub><sup>({e})</sup> is "
                f"{_sub(names[0])} in example {e})")
    else:
        vmap = (f"vmap over a batch of two examples, {_sub(names[0])}<sup>(0)</sup> and "
                f"{_sub(names[0])}<sup>(1)</sup>, stacked on axis 0")
    return [("forward", forward), ("vjp", vjp), ("jvp", jvp), ("vmap", vmap)]


def _formulas(case):
    """The rules of a case as formulas: each written once as a reader writes it
    (per element, or in matrix or convolution form) where that form holds for
    every element the engine computed, otherwise those elements."""
    f = rules.formulas(case)
    if f is None:
        return ("An iterative algorithm: its rules cannot run on symbols, so "
                "check-rules checks them at high-precision points and no formula is shown.\n")
    blocks = ['<div class="formulas">']
    if f["kind"] == "stated":
        blocks.append(f'<p class="legend">Written as a reader writes them, each checked '
                      f"against the elements the engine computes on symbols: {f['legend']}.</p>")
    for key, title in rule_titles(f):
        blocks.append(f'<p class="rule">{title}</p>')
        blocks.extend(compact or rules.math_block(*item, names=f["names"])
                      for item, compact in zip(f[key], f["compact"][key]))
    blocks.append("</div>")
    return html_block("\n".join(blocks))


# The look of every drawing in the manual: small arrays shown whole, larger ones
# summarised (values=4); at most 40 nodes (a larger walk is drawn collapsed);
# at most 8 inches wide and 12 high (half the op drawings are 6 x 4 as they are).
LOOK = {"values": 4, "max_nodes": 40, "size": (8, 12)}
NO_VJP = "[Primitive::vjp] Not implemented"  # MLX's message for a rule it lacks


def op_walk(op):
    """``(drawing, None)``: the vjp walk of ``op``'s sample call
    (``catalogue.sample``) as a ``viz.Drawing``; or ``(None, reason)``: why
    it has none (``catalogue.NOT_DRAWN``, integer inputs, a result that is not
    floating, a vjp MLX does not have). Raises NoSample (or the error of the
    drawing) for an op with neither: the build must not skip it silently."""
    from .. import viz

    if op.name in catalogue.NOT_DRAWN:
        return None, catalogue.NOT_DRAWN[op.name]
    sample = catalogue.sample(op)
    inputs = sample.inputs(mx)
    if sample.integers or not inputs:
        return None, "takes integer arrays only, so there is nothing to differentiate"
    outputs = viz.flatten_arrays(sample.call(mx, *inputs))
    if not any(mx.issubdtype(o.dtype, mx.inexact) for o in outputs):
        kinds = ", ".join(sorted({str(o.dtype).rsplit(".", 1)[-1] for o in outputs}))
        return None, f"returns {kinds}, which is not differentiable"
    # Cotangents 1, 2, 3...: a sort or a matmul shows where each one goes; one for
    # each output that is not a stop_gradient, as viz.trace takes them.
    cotangents = catalogue.counting(
        mx, [o for o in outputs if not isinstance(o.primitive(), StopGradient)])
    try:
        drawing = viz.trace(lambda *xs: sample.call(mx, *xs), inputs, transform="vjp",
                            cotangents=cotangents, names=sample.input_names(),
                            title=f"vjp of mx.{op.name}", **LOOK)
    except ValueError as e:
        if NO_VJP not in str(e):
            raise
        return None, f"has no vjp, as in MLX ({e})"
    return drawing, None


def draw_walks(ops, prims, directory):
    """{op name or primitive: Walk}, the drawings written into ``directory``
    (the page's ``walks/``): each op's vjp walk (``op_walk``). A primitive
    that some op's drawing shows points to one (of its own family first, then
    the smallest); another gets the vjp walk of its first check case."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    walks, showing = {}, {}
    for op in ops:
        drawing, reason = op_walk(op)
        if drawing is None:
            walks[op.name] = Walk(reason=reason)
            continue
        name = f"{op_label(op.name)}.svg"
        image = f"{directory.name}/{name}" if _render(drawing, directory / name) else None
        walks[op.name] = Walk(image, catalogue.sample(op).text(op.name),
                              own_rules=own_rules(drawing))
        for p in drawn_primitives(drawing, prims):
            showing.setdefault(p, []).append((len(drawing.graph.nodes), op))
    by_case = rules.cases_by_primitive()
    for p in prims:
        if p in showing:
            _, op = min(showing[p], key=lambda c: (c[1].family != catalogue.family_of(p), c[0],
                                                   c[1].name))
            walks[p] = Walk(shown_at=op.name)
        elif p in by_case:
            name = f"{p.__name__}.svg"
            reason = walk_drawing(by_case[p][0], directory / name)
            walks[p] = Walk(reason=reason) if reason else Walk(f"{directory.name}/{name}")
    return walks


def _render(drawing, path):
    """Write the drawing as SVG; False without Graphviz's ``dot``."""
    from .. import viz

    try:
        drawing.render(str(path), "svg")
    except viz.GraphvizMissing:
        return False
    return True


def own_rules(drawing):
    """The primitive classes the drawing's walk runs whose vjp MLX does
    not have (``Primitive.mlx_has_vjp``): the walk runs mlxref's own rule."""
    return tuple(sorted((p for p in drawn_primitives(drawing, catalogue.primitives())
                         if not p.mlx_has_vjp), key=lambda p: p.__name__))


def drawn_primitives(drawing, prims):
    """Those of ``prims`` whose nodes the forward graph of ``drawing`` shows
    (a node is named by its primitive's class, as ``viz`` names it; a class
    that names its instances otherwise is not found, and keeps its own drawing)."""
    from ..viz import record

    shown = {n.op for n in drawing.graph.nodes if n.kind == "op" and n.part == "forward"}
    return {p for p in prims if record.op_name(types.SimpleNamespace(name=p.__name__)) in shown}


def walk_drawing(case, path):
    """Draw the vjp walk of ``case``'s program on numbers into ``path`` (SVG);
    None, or the reason it has none (its error: MLX's "Not implemented")."""
    from .. import viz

    lo, hi = (0.25, 0.75) if case.domain != "above_one" else (1.25, 1.75)
    dtype = mx.complex64 if case.domain == "complex" else mx.float32
    inputs = [mx.array(catalogue.spread(math.prod(shape), k, lo, hi), dtype).reshape(shape)
              for k, shape in enumerate(case.shapes)]
    try:
        drawing = viz.trace(case.build, inputs, transform="vjp", **LOOK)
    except (ValueError, RuntimeError) as e:  # no vjp (MLX's "Not implemented", Compiled's)
        return str(e)
    return None if _render(drawing, path) else "no Graphviz here"


# --- transforms, packages, CLI, differences ----------------------------------------------


# The drawing on each transform's page: the seed example the README and the
# tutorials draw (viz.figures.seed, sin(x) * exp(x), at SEED_AT) under the
# transform, or, where the seed has nothing to show, the README's figure of it
# (viz.figures.FIGURES): {name: (how it is drawn, what the caption says)}.
SEED_AT = 0.5  # the README's figures of the seed are drawn there (seed_vjp, seed_jvp)
SEED = "the seed example, <code>sin(x) * exp(x)</code>"
TRANSFORM_DRAWINGS = {
    "vjp": (("seed", "vjp"), f"The vjp walk of {SEED} at x = 0.5 (the README's "
            "<code>diagrams/seed_vjp.svg</code>): the forward graph, then the reverse walk's "
            "steps in order, each with the cotangent it sends to a node's inputs"),
    "jvp": (("seed", "jvp"), f"The jvp walk of {SEED} at x = 0.5 (the README's "
            "<code>diagrams/seed_jvp.svg</code>): the tangent of every node, in the forward "
            "order the walk takes"),
    "grad": (("seed", "grad"), f"<code>mx.grad</code> of {SEED} at x = 0.5: the forward "
             "graph, and the backward graph its vjp walk built, which computes the gradient"),
    "vmap": (("seed", "vmap"), f"<code>mx.vmap</code> of {SEED} over the batch x = [0.5, 1.0]: "
             "the replay of the graph traced for one example, with the batch axis of every "
             "node"),
    "custom_function": (("figure", "custom_function"), "A <code>custom_function</code> with "
                        "its own vjp (a clipped sin) inside a loss, under <code>grad</code> "
                        "(the README's <code>diagrams/custom_function.svg</code>; the seed "
                        "example has no rule of its own to show)"),
    "checkpoint": (("figure", "checkpoint"), "<code>checkpoint</code> of two blocks "
                   "<code>sin(x) * x</code> under <code>grad</code>: the region the backward "
                   "graph recomputes (the README's <code>diagrams/checkpoint.svg</code>)"),
    "compile": (("figure", "compile_tanh"), "<code>compile</code> of tanh written from its "
                "definition: traced, simplified (the repeated exps merged), fused (the README's "
                "<code>diagrams/compile_tanh.svg</code>; the seed example has nothing to merge)"),
    "eval": (("seed", "graph"), f"The graph <code>mx.eval</code> computes for {SEED} at "
             "x = 0.5, each node with its value: eval runs every node once, after its inputs"),
}
# The transforms' pages with no drawing, and why.
NO_DRAWING = {
    "program": "the program is compile's tape written as Python source, text rather than a "
               "walk: the compile page draws the stages it is made from",
    "export": "exporting saves a traced graph to a file and loads it back, and walks nothing "
              "of its own: the graph it saves is compile's trace (the compile page draws "
              "one), and <code>mx.export_to_dot</code> writes it as DOT",
    "tape": "the tape search is the first step of every walk: the drawing on the vjp page "
            "shows the tape it found for the seed example (a node off the tape is greyed)",
    "trees": "it flattens and rebuilds the nested lists, tuples and dicts the transforms take; "
             "it builds no graph",
    "events": "the events are how a walk tells the drawings what it does: every drawing on "
              "these pages is made from them",
}


def transform_drawing(name):
    """``(drawing, caption)`` for a transform's page (``TRANSFORM_DRAWINGS``),
    or ``(None, reason)`` (``NO_DRAWING``); KeyError for a transform with
    neither, so a new transform cannot be left out silently."""
    from .. import viz
    from ..viz import figures

    if name in NO_DRAWING:
        return None, NO_DRAWING[name]
    (how, what), caption = TRANSFORM_DRAWINGS[name]
    if how == "figure":
        return figures.FIGURES[what](), caption
    at = mx.array([SEED_AT, 1.0]) if what == "vmap" else mx.array(SEED_AT)
    return viz.trace(figures.seed, [at], transform=what), caption


def draw_transform_walks(directory):
    """{transform: (image, caption)} for every transform of ``TRANSFORMS``, the
    drawings written into ``directory`` (the transforms' ``walks/``) as SVG;
    (None, reason) for one with none."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    drawn = {}
    for name in TRANSFORMS:
        drawing, said = transform_drawing(name)
        if drawing is None:
            drawn[name] = (None, said)
        elif _render(drawing, directory / f"{name}.svg"):
            drawn[name] = (f"{directory.name}/{name}.svg", said)
        else:
            drawn[name] = (None, "Graphviz's dot is not installed where the manual was built")
    return drawn


def transform_page(name, module, mlx_src=None, drawn=None):
    """A transform's module: its docstring (the algorithm's steps), the MLX
    functions it mirrors, its drawing or why it has none (``drawn``: an item
    of ``draw_transform_walks``), and each public function or class in source
    order, linked to its lines."""
    public, mirrors = TRANSFORMS[name]
    path, _, _ = links.source_lines(module)
    mlx = ", ".join(f'<a href="{html.escape(url)}">{html.escape(label)}</a>'
                    for file, names in mirrors.items()
                    for label, url in links.mlx_definitions(file, names, mlx_src))
    body = [html_block(f"<p>The module <code>{module.__name__}</code> ({html.escape(public)}): "
                  f'<a class="source" href="../{links.source_page(path)}">{path}</a>. '
                  f"In MLX: {mlx or 'none'}.</p>"),
            _prose(_doc(module))]
    if drawn is not None:
        image, said = drawn
        body.append("## Drawn\n")
        if image:
            body.append(html_block(f'<p class="drawing">{said} (drawn by '
                                   "<code>mlxref.viz.trace</code>):</p>"))
            body.append(f"![{name}, drawn]({image})\n")
        else:
            body.append(html_block(f'<p class="drawing">No drawing: {said}.</p>'))
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
        html_block(f'<p><a class="source" href="../{links.source_page(path)}#L{start}">'
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
