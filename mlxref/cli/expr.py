"""Formulas for ``mlxref graph``: parse ``sum(tanh(x @ w))`` safely, then evaluate it.

The command line takes a formula typed by a user and must run nothing but
mlxref ops. So the text is parsed with ``ast`` (mode "eval"), every node of the
tree is checked against a whitelist before anything runs, and ``Expression``
walks the checked tree itself: Python's ``eval``, ``exec`` and ``compile`` never
see the text.

Allowed, and nothing else:

- calls of the ops in ``OPS`` by name (``sin(x)``, ``sum(x, axis=0)``), with
  positional arguments that are expressions, ``None``, dtype names
  (``float32``...) or lists and tuples of those, and keyword arguments whose
  values are literals (numbers, ``True``/``False``/``None``, dtype names,
  lists and tuples of those);
- variables: every other name (``x``, ``w``), which get their values from the
  caller;
- ``+ - * / // % ** @``, unary ``-`` and ``+``, and one comparison
  (``== != < <= > >=``) at a time;
- int and float literals (``True``/``False`` too), and list and tuple displays;
- indexing with int literals, slices of int literals, ``None`` and ``...``
  (``x[0]``, ``x[:, 1:3]``, ``x[..., ::-1]``).

Refused, with a message naming the construct: attribute access, names that
start with ``_``, calls of anything not in ``OPS``, lambdas, comprehensions,
strings and f-strings, complex numbers, starred and ``**`` arguments, ``:=``,
``and``/``or``/``not``, conditional expressions, chained comparisons, ``is``
and ``in``, bitwise operators, dicts, sets, and indexing with anything but the
literals above.

Two limits keep a formula from exhausting the machine: arithmetic on plain
numbers (``10 ** 10 ** 10``) is refused when its result would be huge, and no
array may have more than ``MAX_ELEMENTS`` elements. mlxref arrays are lazy, so
the second check runs on the shape of each new node, before any element
exists.

Read next: tests/cli/test_cli.py (each refusal, and the drawings of formulas).
"""

import ast
import math
import operator
import re

import mlxref.core as mx

__all__ = [
    "Expression", "ExpressionError", "OPS", "DTYPES", "MAX_ELEMENTS",
    "parse", "parse_value", "parse_shape",
]

MAX_ELEMENTS = 1_000_000
_MAX_SOURCE = 10_000  # characters
_MAX_POWER_BITS = 4096  # bits in the result of int ** int on plain numbers


class ExpressionError(ValueError):
    """A formula that is refused, or that cannot be evaluated."""


# The functions a formula may call: mlxref.core ops that only compute. Not
# here: eval and async_eval, the transforms (grad, vmap, ...), random, the
# memory counters, and everything else in mlxref.core that is not an op.
_OP_NAMES = (
    # elementwise
    "abs", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "ceil", "clip", "cos", "cosh", "divide", "equal", "erf", "erfinv", "exp", "expm1",
    "floor", "floor_divide", "greater", "greater_equal", "less", "less_equal", "log",
    "log10", "log1p", "log2", "logaddexp", "logical_and", "logical_not", "logical_or",
    "maximum", "minimum", "multiply", "negative", "not_equal", "power", "reciprocal",
    "remainder", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square",
    "stop_gradient", "subtract", "tan", "tanh", "where",
    # reductions
    "all", "any", "argmax", "argmin", "cumsum", "logsumexp", "max", "mean", "min", "prod",
    "softmax", "std", "sum", "var",
    # shapes
    "broadcast_to", "concatenate", "expand_dims", "flatten", "moveaxis", "pad", "repeat",
    "reshape", "split", "squeeze", "stack", "swapaxes", "tile", "transpose",
    # linear algebra and indexing
    "matmul", "inner", "outer", "take", "take_along_axis",
    # creation and conversion
    "arange", "array", "astype", "eye", "full", "identity", "linspace", "ones",
    "ones_like", "zeros", "zeros_like",
)
OPS = {name: getattr(mx, name) for name in _OP_NAMES}

DTYPES = {
    "bool_": mx.bool_,
    "int32": mx.int32,
    "int64": mx.int64,
    "float32": mx.float32,
    "float64": mx.float64,
}

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
}
_REFUSED_BINARY = {
    ast.BitAnd: "& (use logical_and)",
    ast.BitOr: "| (use logical_or)",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

# What to call a refused node in the error message.
_CONSTRUCTS = {
    ast.Attribute: "attribute access",
    ast.Lambda: "a lambda",
    ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension",
    ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.IfExp: "a conditional expression (use where(condition, a, b))",
    ast.BoolOp: "'and' / 'or' (use logical_and / logical_or)",
    ast.NamedExpr: "an assignment expression (:=)",
    ast.JoinedStr: "an f-string",
    ast.FormattedValue: "an f-string",
    ast.Starred: "unpacking with *",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.Slice: "a slice outside an index",
}


def _is_number(value):
    return isinstance(value, (bool, int, float))


class _Checker:
    """Walks a parsed formula and raises ``ExpressionError`` at the first node not allowed.

    Four positions, four sets of rules: ``value`` (anything that computes),
    ``argument`` (a positional argument of an op: a value, or None, a dtype,
    or a list or tuple of arguments), ``literal`` (a keyword argument's value)
    and ``index`` (inside ``x[...]``).
    """

    def __init__(self, source):
        self.source = source
        self.variables = []  # (line, column, name), in the order met

    def segment(self, node):
        text = ast.get_source_segment(self.source, node)
        return _short(text if text is not None else ast.dump(node))

    def refuse(self, what, node):
        raise ExpressionError(f"{what} is not allowed in an expression: {self.segment(node)}")

    def name(self, node):
        if node.id.startswith("_"):
            self.refuse(f"the name {node.id!r} (names starting with '_')", node)

    def value(self, node):
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str):
                self.refuse("a string", node)
            if isinstance(value, bytes):
                self.refuse("a bytes literal", node)
            if isinstance(value, complex):
                self.refuse("a complex number", node)
            if not _is_number(value):  # None, ...
                self.refuse(f"{value!r} as a value", node)
        elif isinstance(node, ast.Name):
            self.name(node)
            if node.id in OPS:
                raise ExpressionError(
                    f"{node.id!r} is a function: call it, as in {node.id}(...)"
                )
            if node.id in DTYPES:
                raise ExpressionError(
                    f"the dtype {node.id!r} can only be an argument, as in astype(x, {node.id})"
                )
            self.variables.append((node.lineno, node.col_offset, node.id))
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                what = _REFUSED_BINARY.get(type(node.op), type(node.op).__name__)
                self.refuse(f"the operator {what}", node)
            self.value(node.left)
            self.value(node.right)
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                self.refuse("'not' (use logical_not)", node)
            if isinstance(node.op, ast.Invert):
                self.refuse("the operator ~ (use logical_not)", node)
            self.value(node.operand)
        elif isinstance(node, ast.Compare):
            if len(node.ops) > 1:
                self.refuse("a chained comparison (use logical_and(a < b, b < c))", node)
            if type(node.ops[0]) not in _COMPARE:
                what = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
                self.refuse(f"the operator '{what[type(node.ops[0])]}'", node)
            self.value(node.left)
            self.value(node.comparators[0])
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                self.value(element)
        elif isinstance(node, ast.Subscript):
            self.value(node.value)
            self.index(node.slice, top=True)
        else:
            self.refuse(_CONSTRUCTS.get(type(node), type(node).__name__), node)

    def call(self, node):
        function = node.func
        if isinstance(function, ast.Name):
            self.name(function)
            if function.id not in OPS:
                raise ExpressionError(
                    f"unknown function {function.id!r}: an expression can call mlxref ops "
                    "only (the list is in 'mlxref graph --help')"
                )
        elif isinstance(function, ast.Attribute):
            self.refuse("attribute access", function)
        else:
            self.value(function)  # a lambda, say, is refused as such
            self.refuse("calling the result of an expression", node)
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                self.refuse("a starred argument (*)", argument)
            self.argument(argument)
        for keyword in node.keywords:
            if keyword.arg is None:
                self.refuse("keyword unpacking (**)", keyword.value)
            if keyword.arg.startswith("_"):
                self.refuse(f"the keyword {keyword.arg!r} (names starting with '_')", node)
            self.literal(keyword.value, keyword.arg)

    def argument(self, node):
        if isinstance(node, ast.Constant) and node.value is None:
            return
        if isinstance(node, ast.Name) and node.id in DTYPES:
            return
        if isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                self.argument(element)
            return
        self.value(node)

    def literal(self, node, keyword):
        if isinstance(node, ast.Constant) and (_is_number(node.value) or node.value is None):
            return
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            if isinstance(node.operand, ast.Constant) and _is_number(node.operand.value):
                return
        elif isinstance(node, ast.Name) and node.id in DTYPES:
            return
        elif isinstance(node, (ast.List, ast.Tuple)):
            for element in node.elts:
                self.literal(element, keyword)
            return
        raise ExpressionError(
            f"keyword argument {keyword}= must be a literal (a number, True, False, None, "
            f"a dtype, or a list or tuple of them), not {self.segment(node)}"
        )

    def index(self, node, top=False):
        if isinstance(node, ast.Constant) and (
            node.value is None or node.value is Ellipsis or type(node.value) is int
        ):
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            if isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
                return
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    if isinstance(part, ast.Constant) and part.value is None:
                        continue
                    self.index(part)
                    if isinstance(part, ast.Constant) and part.value is Ellipsis:
                        self.refuse("... inside a slice", part)
            return
        if top and isinstance(node, ast.Tuple):
            for element in node.elts:
                self.index(element)
            return
        raise ExpressionError(
            "an index must be int literals, slices of int literals, None or ..., "
            f"not {self.segment(node)}"
        )


def parse(source):
    """Parse and check ``source``; an ``Expression``, or ``ExpressionError`` naming what is refused."""
    if not isinstance(source, str):
        raise ExpressionError(f"an expression must be a string, not {type(source).__name__}")
    text = source.strip()
    if not text:
        raise ExpressionError("the expression is empty")
    if len(text) > _MAX_SOURCE:
        raise ExpressionError(f"the expression is longer than {_MAX_SOURCE} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f" (column {exc.offset})" if exc.offset else ""
        raise ExpressionError(f"invalid expression {_short(text)!r}: {exc.msg}{where}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ExpressionError(f"invalid expression: {_one_line(exc) or 'too deeply nested'}") from None
    checker = _Checker(text)
    try:
        checker.value(tree.body)
    except RecursionError:
        raise ExpressionError("the expression is too deeply nested") from None
    variables = []
    for _, _, name in sorted(checker.variables):
        if name not in variables:
            variables.append(name)
    return Expression(text, tree.body, tuple(variables))


def _one_line(exc):
    return " ".join(str(exc).split())


def _short(text, limit=80):
    """``text`` on one line, cut to ``limit`` characters for an error message."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Expression:
    """A checked formula. ``variables`` are its free names, in order of first appearance.

    ``expression(*values)`` evaluates it with the values in that order (arrays,
    normally); ``evaluate(env)`` takes a dict.
    """

    def __init__(self, source, body, variables):
        self.source = source
        self.body = body
        self.variables = variables

    def __repr__(self):
        return f"Expression({self.source!r})"

    def __call__(self, *values):
        if len(values) != len(self.variables):
            raise TypeError(
                f"the expression takes {len(self.variables)} values "
                f"({', '.join(self.variables)}), got {len(values)}"
            )
        return self.evaluate(dict(zip(self.variables, values)))

    def evaluate(self, env):
        try:
            return _Evaluator(self.source, env).value(self.body)
        except RecursionError:
            raise ExpressionError("the expression is too deeply nested") from None


class _Evaluator:
    """Computes a checked tree. It handles exactly the nodes ``_Checker`` lets through."""

    def __init__(self, source, env):
        self.source = source
        self.env = env

    def segment(self, node):
        text = ast.get_source_segment(self.source, node)
        return _short(text if text is not None else ast.dump(node))

    def value(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in DTYPES:
                return DTYPES[node.id]
            if node.id not in self.env:
                raise ExpressionError(f"no value for {node.id!r}")
            return self.env[node.id]
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left), self.value(node.right)
            return self.apply(node, _BINARY[type(node.op)], left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            if _is_number(operand):
                return -operand
            return self.checked(node, -_as_array(operand))
        if isinstance(node, ast.Compare):
            left, right = self.value(node.left), self.value(node.comparators[0])
            return self.apply(node, _COMPARE[type(node.ops[0])], left, right)
        if isinstance(node, ast.Call):
            function = OPS[node.func.id]
            args = [self.value(argument) for argument in node.args]
            kwargs = {keyword.arg: self.value(keyword.value) for keyword in node.keywords}
            return self.checked(node, function(*args, **kwargs))
        if isinstance(node, ast.List):
            return [self.value(element) for element in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.value(element) for element in node.elts)
        if isinstance(node, ast.Subscript):
            # A list (split's result, or a list display) is indexed like a Python list.
            target = self.value(node.value)
            return self.checked(node, target[self.value(node.slice)])
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*(None if part is None else self.value(part) for part in parts))
        raise ExpressionError(f"cannot evaluate {self.segment(node)}")  # unreachable once checked

    def apply(self, node, op, left, right):
        """``left op right``: folded in Python for two numbers, else an mlxref op."""
        if _is_number(left) and _is_number(right):
            return self.fold(node, op, left, right)
        return self.checked(node, op(_as_array(left), _as_array(right)))

    def fold(self, node, op, left, right):
        if op is operator.pow and isinstance(left, int) and isinstance(right, int):
            if abs(right) * max(abs(left).bit_length(), 1) > _MAX_POWER_BITS:
                raise ExpressionError(f"{self.segment(node)} is too large a number")
        try:
            result = op(left, right)
        except ZeroDivisionError:
            raise ExpressionError(f"division by zero in {self.segment(node)}") from None
        except OverflowError:
            raise ExpressionError(f"{self.segment(node)} is too large a number") from None
        except TypeError as exc:
            raise ExpressionError(f"{self.segment(node)}: {_one_line(exc)}") from None
        if isinstance(result, complex):
            raise ExpressionError(f"{self.segment(node)} is a complex number")
        return result

    def checked(self, node, result):
        """``result``, unless it (or an array in it) is larger than ``MAX_ELEMENTS``."""
        for item in result if isinstance(result, (list, tuple)) else (result,):
            if isinstance(item, mx.array):
                size = math.prod(item.shape)
                if size > MAX_ELEMENTS:
                    raise ExpressionError(
                        f"{self.segment(node)} would have shape {tuple(item.shape)}, "
                        f"{size} elements; the limit is {MAX_ELEMENTS}"
                    )
        return result


def _as_array(value):
    """An operand of an operator: lists and tuples become arrays, as ``mx.array`` reads them."""
    if isinstance(value, (list, tuple)):
        return mx.array(list(value))
    return value


# --- values for the variables --------------------------------------------------------


def parse_value(text):
    """``--at`` values: a number or a nested list of numbers (``0.5``, ``[[1, 2], [3, 4]]``), as an array.

    Read with ``ast.literal_eval``, which builds Python literals and runs
    nothing, then checked to hold ints and floats only (no bools, strings,
    complex numbers or None). The array is ``mx.array(value)``: ints give
    int32, anything with a float gives float32.
    """
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ExpressionError(f"not a number or a list of numbers: {text!r}") from None
    pending = [value]
    while pending:  # iterative: a deeply nested list cannot exhaust the stack here
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, bool) or not isinstance(item, (int, float)):
            raise ExpressionError(f"not a number or a list of numbers: {text!r}")
    try:
        result = mx.array(value)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise ExpressionError(f"{text!r}: {_one_line(exc)}") from None
    if result.size > MAX_ELEMENTS:
        raise ExpressionError(f"{result.size} elements; the limit is {MAX_ELEMENTS}")
    return result


def parse_shape(text):
    """``--shape`` dimensions: ``2,3`` (also ``(2, 3)``, ``[2, 3]``, ``5``; empty for a scalar) as a tuple."""
    body = text.strip()
    if body[:1] + body[-1:] in ("()", "[]"):
        body = body[1:-1].strip()
    if not body:
        return ()
    parts = [part.strip() for part in body.split(",")]
    if len(parts) > 1 and parts[-1] == "":  # "3," is the tuple (3,)
        parts.pop()
    shape = []
    for part in parts:
        if not re.fullmatch(r"[+-]?[0-9]+", part):
            raise ExpressionError(f"bad shape {text!r}: {part!r} is not an integer")
        if int(part) < 0:
            raise ExpressionError(f"bad shape {text!r}: negative dimension {int(part)}")
        shape.append(int(part))
    if math.prod(shape) > MAX_ELEMENTS:
        raise ExpressionError(
            f"shape {tuple(shape)} has {math.prod(shape)} elements; the limit is {MAX_ELEMENTS}"
        )
    return tuple(shape)
