"""Leak checks for student copies: ``mlxref assignment make --check-leaks``.

A student copy (``mlxref/course/assignment.py:make``) has the chosen tasks' regions
replaced by one ``raise NotImplementedError("Task 2.2: ...")``. The answer
can still reach the student another way; this module looks for four kinds:

- **answer lines**: a statement of a stubbed task's reference answer found
  elsewhere in the copy, exactly or nearly (whitespace and local names do not
  count: ``t = a + b`` and ``s = p + q`` are the same line). Only statements
  that the reference holds nowhere but in its task regions are looked for, so
  a common idiom such as ``(x,) = primals`` is not a leak.
- **helpers doing the task's work**: a function left implemented whose body
  is (nearly) the body of a stubbed region, e.g. a sibling rule that differs
  from the answer by one line.
- **hints that spell out the code**: a stub's message, or an inline code span
  of a Markdown file, that holds an answer statement (with ``times``, ``plus``
  ... read as operators) or the answer's formula (compared with SymPy:
  ``-out/b`` is ``ops.negative(ops.divide(out, b))``).
- **hidden tests**: ``tests/course/hidden/`` in the copy, or a copy of one of the
  reference's hidden test files anywhere in it.

``check_leaks(copy)`` returns one line per finding; ``make`` runs it on what
it writes (``mlxref/course/assignment.py``), and ``mlxref assignment make`` exits 2
when there is one.

Read next: tests/course/test_leaks.py (each kind caught on a crafted copy).
"""

from __future__ import annotations

import ast
import builtins
import difflib
import hashlib
import keyword
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ..core.scalar import sympy  # imported at its first use
from .regions import HIDDEN, find_regions, project_root

BODY_RATIO = 0.9  # a function is the region's work: difflib's ratio of the tokens
HINT_COVER = 0.75  # a hint spells out a statement: this share of its tokens, in order
_MIN_TOKENS = 8  # shorter statements are too common to tell
_MIN_BODY = 16
_MIN_OPS = 2  # operations in a formula before it can be a leak (cos(x) is general knowledge)

_SKIPPED_DIRS = {"__pycache__", ".git", ".venv", "build", "dist", "node_modules"}
_TEXT_SUFFIXES = (".md", ".rst", ".txt")


# --- normalizing code -------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d*)?|\*\*|//|[-+*/%\[\](),.:=<>]")
_STRING = r"""[rbfuRBFU]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
_CODE = re.compile(
    r"(?P<comment>#[^\n]*)|(?P<string>" + _STRING + r")|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<number>\d[\w.]*)|(?P<op>\*\*=?|//=?|->|<<|>>|[-+*/%&|^@<>=!:]=|\S)"
)
_KEEP = set(dir(builtins)) | set(keyword.kwlist) | {"self", "cls"}


def code_tokens(code, keep):
    """``code`` as tokens, comments left out, with every name not in ``keep``
    (the module's own names), builtins, keywords or ``self`` renamed ``v0``,
    ``v1``... in order of appearance; attribute names stay. So ``t = a + b``
    reads as ``s = p + q``, however it is spaced."""
    names, out = {}, []
    for m in _CODE.finditer(code):
        kind, token = m.lastgroup, m.group()
        if kind == "comment":
            continue
        if kind == "name" and token not in keep and token not in _KEEP and (
            not out or out[-1] != "."
        ):
            token = names.setdefault(token, f"v{len(names)}")
        out.append(token)
    return out


def _module_names(tree):
    """The names a module defines at its top level (imports, functions, classes, globals)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For,
             ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)


def _segment(lines, node):
    """The source of ``node`` (1-based line numbers, as ast gives them)."""
    if node.lineno == node.end_lineno:
        return lines[node.lineno - 1][node.col_offset : node.end_col_offset]
    first = lines[node.lineno - 1][node.col_offset :]
    return "\n".join([first] + lines[node.lineno : node.end_lineno - 1]
                     + [lines[node.end_lineno - 1][: node.end_col_offset]])


def _statements(tree, keep, lines):
    """(normalized text, line, enclosing function) of every simple statement of a
    module (compound ones are their simple statements: an ``if`` line alone is
    too common to tell), docstrings left out."""
    out = []

    def visit(body, function):
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child.body, f"{function}.{child.name}" if function else child.name)
            elif isinstance(child, _COMPOUND):
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(child, field, []), function)
                for handler in getattr(child, "handlers", []) + getattr(child, "cases", []):
                    visit(handler.body, function)
            elif not _is_docstring(child):
                text = " ".join(code_tokens(_segment(lines, child), keep))
                out.append((text, child.lineno, function or "<module>"))

    visit(tree.body, "")
    return out


def _functions(body):
    """Every function defined in ``body``, at any depth."""
    for child in body:
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child
        if isinstance(child, _COMPOUND):
            for field in ("body", "orelse", "finalbody"):
                yield from _functions(getattr(child, field, []))
            for handler in getattr(child, "handlers", []) + getattr(child, "cases", []):
                yield from _functions(handler.body)


def _is_docstring(node):
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _body_tokens(lines, body, keep):
    """A function body (or region) as normalized tokens, read from its source
    ``lines`` (1-based line numbers in ``body``), docstring and comments left out."""
    body = [s for s in body if not _is_docstring(s)]
    if not body:
        return []
    return code_tokens("\n".join(lines[body[0].lineno - 1 : body[-1].end_lineno]), keep)


# --- reading the copy and the reference ----------------------------------------------------


def _python_files(root):
    for path in sorted(Path(root).rglob("*.py")):
        if not _SKIPPED_DIRS & set(path.relative_to(root).parts[:-1]):
            yield path


def _text_files(root):
    for path in sorted(Path(root).rglob("*")):
        if path.suffix in _TEXT_SUFFIXES and path.is_file() and not _SKIPPED_DIRS & set(
            path.relative_to(root).parts[:-1]
        ):
            yield path


@dataclass
class _Module:
    tree: ast.Module
    keep: set  # its own top-level names
    statements: list  # ``_statements(tree, keep)``
    lines: list  # the source


_PARSED = {}  # content hash -> _Module: a second check in one process reparses only what changed


def _parse(path, cache):
    """The parsed module at ``path``; one parse per distinct content (a student
    copy's files are mostly the reference's)."""
    data = path.read_bytes()
    key = hashlib.sha256(data).digest()
    if key not in cache:
        try:
            text = data.decode("utf-8")
            tree = ast.parse(text, filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            cache[key] = None
        else:
            keep = _module_names(tree)
            lines = text.split("\n")
            cache[key] = _Module(tree, keep, _statements(tree, keep, lines), lines)
    return cache[key]


def _region_lines(root, regions):
    """{relative path: set of line numbers inside the given regions (markers included)}."""
    inside = {}
    for r in regions:
        inside.setdefault(r.path, set()).update(range(r.begin, r.end + 1))
    return inside


def _stub_line(root, region, cache):
    """The region's ``raise NotImplementedError("Task ...")`` line, or None if it holds code."""
    if region.end - region.begin != 2:
        return None
    if region.path not in cache:
        cache[region.path] = (Path(root) / region.path).read_text(encoding="utf-8").split("\n")
    line = cache[region.path][region.begin].strip()
    return line if line.startswith(f'raise NotImplementedError("Task {region.task}:') else None


def _stubbed(root, copy_regions):
    """The tasks whose every region in the copy is a stub."""
    by_task, cache = {}, {}
    for r in copy_regions:
        by_task.setdefault(r.task, []).append(_stub_line(root, r, cache) is not None)
    return {t for t, stubs in by_task.items() if all(stubs)}


@dataclass
class _Answer:
    task: str
    region: object  # the reference's Region
    statements: list  # (normalized text, line in the reference)
    body: list  # the whole region, normalized tokens
    keep: set
    tree: list  # the region's statements, not normalized
    formulas: list = None  # what it returns, as SymPy (``_formulas``)


def _answers(reference, regions, tasks):
    out = []
    files = {}
    for r in regions:
        if r.task not in tasks:
            continue
        if r.path not in files:
            text = (Path(reference) / r.path).read_text(encoding="utf-8")
            files[r.path] = (text.split("\n"), _module_names(ast.parse(text)))
        lines, keep = files[r.path]
        body = textwrap.dedent("\n".join(lines[r.begin : r.end - 1]))
        tree = ast.parse(body).body
        body_lines = body.split("\n")
        statements = [(t, r.begin + line)
                      for t, line, _ in _statements(ast.Module(tree, []), keep, body_lines)]
        tokens = _body_tokens(body_lines, tree, keep)
        out.append(_Answer(r.task, r, statements, tokens, keep, tree))
    return out


# --- the checks -------------------------------------------------------------------------


class Leaks(ValueError):
    """A student copy holds answers: ``findings`` has one line per leak."""

    def __init__(self, copy, findings):
        self.copy, self.findings = copy, list(findings)
        super().__init__(f"[assignment make] {copy} leaks answers: " + "; ".join(self.findings))


def refuse_leaks(copy, reference=None):
    """Raise ``Leaks`` if ``check_leaks`` finds anything in ``copy``."""
    findings = check_leaks(copy, reference)
    if findings:
        raise Leaks(copy, findings)


def check_leaks(copy, reference=None, tasks=None):
    """Every leak of a stubbed task's answer in the student copy ``copy``: one line each.

    ``reference`` is the instructor's checkout (default: the one this mlxref
    was installed from); ``tasks`` the stubbed tasks to look at (default:
    every task whose regions in the copy are all stubs).
    """
    copy = Path(copy).resolve()
    if not (copy / "mlxref").is_dir():
        raise ValueError(f"[assignment make] {copy} is not a student copy (no mlxref/ in it).")
    reference = Path(reference or project_root()).resolve()
    findings = _hidden_tests(copy, reference)
    try:
        copy_regions = find_regions(copy)
    except (ValueError, SyntaxError) as e:
        return findings + [f"{copy}: the task markers cannot be read: {e}"]
    ref_regions = find_regions(reference)
    tasks = _stubbed(copy, copy_regions) if tasks is None else set(tasks)
    if not tasks:
        return findings
    answers = _answers(reference, ref_regions, tasks)
    cache = _PARSED if len(_PARSED) < 4000 else {}
    common = _reference_outside_regions(reference, ref_regions, cache)
    stubs = _region_lines(copy, [r for r in copy_regions if r.task in tasks])

    for path in _python_files(copy):
        relative = path.relative_to(copy).as_posix()
        module = _parse(path, cache)
        if module is None:
            continue
        skip = stubs.get(relative, set())
        findings += _answer_lines(answers, common, module, relative, skip)
        findings += _helpers(answers, module, relative, skip)
    findings += _hints(answers, copy_regions, copy)
    return findings


def _hidden_tests(copy, reference):
    findings = []
    hidden = copy / HIDDEN
    if hidden.exists():
        for path in sorted(hidden.rglob("*.py")) or [hidden]:
            findings.append(f"{path.relative_to(copy)}: hidden tests are in the student copy")
    known = {}
    for path in sorted((reference / HIDDEN).glob("*.py")):
        known[hashlib.sha256(path.read_bytes()).hexdigest()] = path.name
    if known:
        for path in _python_files(copy):
            if hidden in path.parents:
                continue
            name = known.get(hashlib.sha256(path.read_bytes()).hexdigest())
            if name and path.stat().st_size > 0:
                findings.append(
                    f"{path.relative_to(copy)}: a copy of the hidden test file {HIDDEN}/{name}"
                )
    return findings


def _reference_outside_regions(reference, regions, cache):
    """The normalized statements the reference holds outside every task region."""
    inside = _region_lines(reference, regions)
    common = set()
    for path in _python_files(reference / "mlxref"):
        module = _parse(path, cache)
        if module is None:
            continue
        skip = inside.get(path.relative_to(reference).as_posix(), set())
        common.update(t for t, line, _ in module.statements if line not in skip)
    return common


def _answer_lines(answers, common, module, relative, skip):
    findings, seen = [], set()
    candidates = {}
    for a in answers:
        for text, line in a.statements:
            if text.count(" ") + 1 >= _MIN_TOKENS and text not in common:
                candidates.setdefault(text, []).append((line, a))
    if not candidates:
        return []
    for text, line, function in module.statements:
        if line in skip or text not in candidates:
            continue
        for answer_line, a in candidates[text]:
            if (line, a.task) not in seen:
                seen.add((line, a.task))
                findings.append(
                    f"{relative}:{line}: a line of task {a.task}'s answer "
                    f"({a.region.place}:{answer_line}) in {function}"
                )
    return findings


def _helpers(answers, module, relative, skip):
    findings = []
    bodies = [a for a in answers if len(a.body) >= _MIN_BODY]
    if not bodies:
        return []
    sizes = [a.region.end - a.region.begin - 1 for a in bodies]
    keep = module.keep
    for node in _functions(module.tree.body):
        if node.lineno in skip:
            continue
        if any(n.lineno in skip for n in node.body):
            continue  # the function that holds a stub
        first = node.body[1] if _is_docstring(node.body[0]) and len(node.body) > 1 else node.body[0]
        lines = node.end_lineno - first.lineno + 1
        if not any(n / 2 - 2 <= lines <= 2 * n + 2 for n in sizes):
            continue  # far too short or too long to be a region's work
        tokens = _body_tokens(module.lines, node.body, keep)
        for a in bodies:
            if abs(len(tokens) - len(a.body)) > (1 - BODY_RATIO) * len(a.body):
                continue
            matcher = difflib.SequenceMatcher(None, tokens, a.body, autojunk=False)
            if matcher.quick_ratio() >= BODY_RATIO and matcher.ratio() >= BODY_RATIO:
                findings.append(
                    f"{relative}:{node.lineno}: function {node.name} does the work of task "
                    f"{a.task}'s {a.region.function} (its body matches the answer's "
                    f"{matcher.ratio():.0%}): move it into the region or make it differ"
                )
    return findings


# --- hints and documents ------------------------------------------------------------------

_WORDS = {"times": "*", "plus": "+", "minus": "-", "over": "/", "divided by": "/"}
_OPS = {"multiply": "*", "add": "+", "subtract": "-", "divide": "/"}


def _math_code(node):
    """Code with ``ops.multiply(a, b)`` written ``a * b`` and so on, for reading against prose."""

    class Operators(ast.NodeTransformer):
        def visit_Call(self, call):
            self.generic_visit(call)
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (
                f.value.id == "ops") else None
            if name in _OPS and len(call.args) == 2:
                return ast.BinOp(call.args[0], _binop(_OPS[name]), call.args[1])
            if name == "negative" and len(call.args) == 1:
                return ast.UnaryOp(ast.USub(), call.args[0])
            return call

    return ast.unparse(Operators().visit(ast.parse(ast.unparse(node)).body[0]))


def _binop(symbol):
    return {"*": ast.Mult(), "+": ast.Add(), "-": ast.Sub(), "/": ast.Div()}[symbol]


def _tokens(text):
    for word, symbol in _WORDS.items():
        text = re.sub(rf"\b{word}\b", f" {symbol} ", text)
    return _TOKEN.findall(text)


def spells_out(text, answer):
    """Does ``text`` (a hint, a code span) hold one of the answer's statements?"""
    words = _tokens(text)
    for node in answer.tree:
        for stmt in ast.walk(node):
            if not isinstance(stmt, ast.stmt) or hasattr(stmt, "body"):
                continue
            code = _tokens(_math_code(stmt))
            if len(code) < 8:
                continue
            matched = sum(b.size for b in difflib.SequenceMatcher(
                None, code, words, autojunk=False).get_matching_blocks())
            if matched >= HINT_COVER * len(code):
                return ast.unparse(stmt)
    formula = _same_formula(text, answer)
    return formula


_SYMPY_FUNCS = {
    "exp": lambda v: sympy.exp(v), "log": lambda v: sympy.log(v), "sin": lambda v: sympy.sin(v),
    "cos": lambda v: sympy.cos(v), "tanh": lambda v: sympy.tanh(v),
    "sqrt": lambda v: sympy.sqrt(v), "square": lambda v: v**2, "reciprocal": lambda v: 1 / v,
    "rsqrt": lambda v: 1 / sympy.sqrt(v), "negative": lambda v: -v,
    "multiply": lambda a, b: a * b, "add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
    "divide": lambda a, b: a / b,
}


def _to_sympy(node):
    """An expression of names, numbers, + - * / ** and ops' elementwise
    functions as SymPy; None for anything else."""
    if isinstance(node, ast.Name):
        return sympy.Symbol(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Rational(
            repr(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _to_sympy(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = _to_sympy(node.left), _to_sympy(node.right)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.Div: lambda: a / b, ast.Pow: lambda: a**b}
        return None if a is None or b is None or type(node.op) not in ops else ops[type(node.op)]()
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        args = [_to_sympy(a) for a in node.args]
        if name in _SYMPY_FUNCS and None not in args:
            try:
                return _SYMPY_FUNCS[name](*args)
            except TypeError:
                return None
    return None


def _formulas(answer):
    """The SymPy forms of the expressions the answer returns (both sides of an ``if``)."""
    if answer.formulas is not None:
        return answer.formulas
    out = answer.formulas = []
    for node in answer.tree:
        for n in ast.walk(node):
            value = n.value if isinstance(n, ast.Return) else None
            for e in [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]:
                f = _to_sympy(e) if e is not None else None
                if f is not None and sympy.count_ops(f) >= _MIN_OPS:
                    out.append((f, ast.unparse(e)))
    return out


_FORMULA = re.compile(r"[A-Za-z_]\w*\s*[-+*/]|[-+*/]\s*\(?[A-Za-z_]")


def _expressions(text):
    """The SymPy formulas in ``text``'s code spans (or ``text`` itself if it has none):
    each span, or the right-hand side of an ``=`` in it."""
    out = []
    spans = re.findall(r"`([^`]+)`", text)
    pieces = [p for span in spans for p in (span.split("=")[1:] or [span])] if spans else [
        p for p in re.split(r"[,;:=]|\b(?:is|are|gives|equals)\b", text) if p]
    for piece in pieces:
        if not _FORMULA.search(piece):
            continue
        words = piece.split()
        for start in range(len(words) if not spans else 1):  # prose before a formula
            try:
                e = _to_sympy(ast.parse(" ".join(words[start:]), mode="eval").body)
            except (SyntaxError, ValueError):
                continue
            if e is not None and sympy.count_ops(e) >= _MIN_OPS:
                out.append(e)
            break
    return out


def _same_formula(text, answer, expressions=None):
    formulas = _formulas(answer)
    if not formulas:
        return None
    for e in _expressions(text) if expressions is None else expressions:
        if True:
            for f, code in formulas:
                if e.free_symbols == f.free_symbols and _equal(e, f):
                    return code
    return None


def _equal(e, f):
    """Are two formulas equal? At three points of ``(0.3, 1.7)`` (fast), then exactly."""
    symbols = sorted(e.free_symbols, key=str)
    for k in range(3):
        point = {s: 0.3 + 0.7 * ((k + 1) * (i + 2) % 3) + 0.1 * i for i, s in enumerate(symbols)}
        try:
            if abs(complex(e.evalf(subs=point)) - complex(f.evalf(subs=point))) > 1e-9:
                return False
        except (TypeError, ValueError):
            return False
    return sympy.simplify(e - f) == 0


def _message(stub):
    """The text of a stub's ``raise NotImplementedError("...")``."""
    try:
        call = ast.parse(stub).body[0].exc
        return call.args[0].value
    except (SyntaxError, AttributeError, IndexError):
        return stub


def _hints(answers, copy_regions, copy):
    findings = []
    lines = {}
    for r in copy_regions:
        stub = _stub_line(copy, r, lines)
        if stub is None:
            continue
        for a in answers:
            if a.task == r.task:
                code = spells_out(_message(stub), a)
                if code:
                    findings.append(
                        f"{r.path}:{r.begin + 1}: the hint of {r.function} spells out task "
                        f"{a.task}'s answer ({code})"
                    )
    for path in _text_files(copy):
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.split("\n"), 1):
            if "`" not in line:
                continue
            expressions = _expressions(line)
            for a in answers if expressions else ():
                code = _same_formula(line, a, expressions)
                if code:
                    findings.append(
                        f"{path.relative_to(copy)}:{number}: gives task {a.task}'s answer "
                        f"({code})"
                    )
    return findings
