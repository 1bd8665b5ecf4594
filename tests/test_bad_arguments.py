"""A bad argument gets the exception MLX raises for it, from an argument check
(issue 33).

Each public function of ``mlx.core`` and of its namespaces that mlxref has
(the ops, the transforms, the classes that print a signature: the names
tests/test_keywords.py asks) is called as its sample call calls it, then
with one argument at a time replaced by a bad one, chosen by what the sample
passes there:

- a function: ``3``, ``None``;
- an int: ``1.0``, ``1.5``, ``None``, ``'a'``, ``99``, ``-99``, ``2**40``;
- a sequence of ints (a shape, axes): its first one replaced by ``1.5``,
  ``99``, ``-99``, ``2**40``, or the whole by ``None`` or ``'a'``;
- an array: its values as a list, an array of rank 0, one of a rank more,
  ``None``, ``'a'``;
- a list of arrays: ``None``, ``'a'``, its first array replaced by ``None``;
- a float or a bool: ``None``, ``'a'``; a string: ``3``, ``None``, another
  string; a Dtype: ``'float32'``, ``None``; anything else: ``None``, ``'a'``.

``None`` is not asked where MLX's printed default is None. A parameter the
sample leaves out whose printed type is an int or a sequence of ints (``axis:
int | None = None``) is given the int's bad values by keyword, and every call
is also made with a keyword no function has. A transform that returns a
function (``grad``, ``vmap``...) has it called on a small array (``THEN``),
and every array a call returns is evaluated, so an error MLX raises late is
asked too.

Each call is made the same way in both libraries, and nothing is written here
about what should happen: MLX's outcome is the expectation. The test asserts
that mlxref raises the exception type MLX raises, or runs where MLX runs, and
that each exception mlxref raises comes from a ``raise`` statement in mlxref
(an argument check, with its message), not from Python tripping inside it
("'int' object is not callable", an IndexError from a list).

A few calls kill MLX's process (``MLX_ABORTS``; ``python
tests/test_bad_arguments.py`` finds them by running every case in child
processes): MLX's side of those runs in a child here, and mlxref must raise
instead. A few others MLX runs, silently wrong (``MLXREF_REFUSES``: a view
past the array, a window of negative size, ranks it does not check): there
too mlxref must raise. What MLX does there is undefined (it reads past its
buffer, or makes an array of negative shape, whose evaluation hung once in a
process that had run other tests; slice_update's write past the array kills
a fresh process), so MLX's side of those runs in a child too, with a time
limit. The
README's "Where mlxref differs from MLX" says both. Three valid calls that
would keep mlxref busy for seconds are compared by their results' shapes
(``NOT_EVALUATED``).

Read next: tests/test_keywords.py (the functions, their sample calls, and
which parameters they take by keyword).
"""

import ast
import functools
import os
import pathlib
import pickle
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass

import pytest

import mlxref
import mlxref.core as mx
import test_keywords as keywords
from support import real_mx

pytestmark = pytest.mark.skipif(real_mx is None, reason="needs real MLX to ask")

MLXREF_DIR = os.path.dirname(os.path.abspath(mlxref.__file__))

# Calls that kill MLX's process (an exception thrown where C++ cannot pass it
# on, so std::terminate aborts; a write past a buffer): (function, case).
# Found by running every case in a child process (`python
# tests/test_bad_arguments.py` lists them); the test runs MLX's side of these
# in a child again.
MLX_ABORTS = {
    ("as_strided", "shape: first 2**40"),
    ("slice_update", "update: a rank more"),
    ("random.bernoulli", "shape: first 2**40"),
    ("random.categorical", "shape: first 2**40"),
    ("random.truncated_normal", "shape: first 2**40"),
    *((f"fft.{name}", "s: first 2**40") for name in (
        "fft2", "fftn", "ifft2", "ifftn", "irfft2", "irfftn", "rfft2", "rfftn")),
}

# Calls MLX runs, silently wrong, where mlxref raises a clear error instead;
# the README's "Where mlxref differs from MLX" says each: (function, case).
MLXREF_REFUSES = {
    # a view of as_strided that reaches past the array (MLX reads what lies there)
    *(("as_strided", case) for case in (
        "shape: first 99", "strides: first 99", "strides: first -99", "strides: first 2**40",
        "offset: 99", "offset: 2**40")),
    # a window or an index outside the array (MLX writes nothing, or reads garbage)
    ("slice_update", "a: a rank more"), ("take", "a: rank 0"),
    # a window of negative size (MLX makes an array of shape (-99,))
    ("slice", "slice_size: first -99"),
    # ranks MLX leaves unchecked (it broadcasts them into wrong shapes)
    *(("fast.gated_delta_update", f"{x}: a rank more") for x in ("q", "k", "v", "gamma", "beta")),
}

# Calls MLX runs that would keep mlxref busy for seconds (a 3-D convolution
# padded by 99 on each side has 8 million outputs): in both libraries their
# results' shapes are compared instead of evaluated.
NOT_EVALUATED = {("conv3d", "padding: 99"), ("conv_transpose3d", "padding: -99"),
                 ("conv_transpose3d", "output_padding: 99")}

# Transforms return functions: each is called on a small array, so that an
# argument only the returned function reads (argnums, in_axes) is asked too.
THEN = {
    "checkpoint": lambda m, f: f(m.array(1.0)),
    "compile": lambda m, f: f(m.array([1.0, 2.0])),
    "custom_function": lambda m, f: f(m.array(1.0)),
    "grad": lambda m, f: f(m.array(1.0)),
    "value_and_grad": lambda m, f: f(m.array(1.0)),
    "vmap": lambda m, f: f(m.array([1.0, 2.0])),
}

# Functions that set what later calls see: the value is put back after each case.
SETTERS = {
    "set_cache_limit": lambda m: functools.partial(m.set_cache_limit, m.set_cache_limit(0)),
    "set_default_device": lambda m: functools.partial(m.set_default_device,
                                                      m.default_device()),
    "set_default_stream": lambda m: functools.partial(m.set_default_stream,
                                                      m.default_stream(m.default_device())),
    "set_memory_limit": lambda m: functools.partial(m.set_memory_limit, m.get_memory_limit()),
    "set_printoptions": lambda m: _printoptions_back(m),
    "set_wired_limit": lambda m: functools.partial(m.set_wired_limit, m.set_wired_limit(0)),
}


def _printoptions_back(m):
    saved = m.get_printoptions()
    return lambda: m.set_printoptions(saved.precision)


# --- the bad values ----------------------------------------------------------------


def kind_of(value):
    """What a sample's argument is, for ``BAD``: "function", "int", "ints"..."""
    arrays = (mx.array, real_mx.array)
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, arrays):
        return "array"
    if isinstance(value, (mx.Dtype, real_mx.Dtype)):
        return "dtype"
    if isinstance(value, (tuple, list)) and value:
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return "ints"
        if all(isinstance(v, arrays) for v in value):
            return "arrays"
    if callable(value) and not isinstance(value, type):
        return "function"
    return "other"


def _from(bad, value):
    """``bad`` made from ``value`` whatever the sample gives."""
    return lambda m, _: bad(m, value)


def _first(value, new):
    """``value`` (a tuple or list) with its first element ``new``."""
    return type(value)([new, *value[1:]])


# kind -> [(label, bad value from the library and the sample's value)]
BAD = {
    "function": [("3", lambda m, v: 3), ("None", lambda m, v: None)],
    "int": [("1.0", lambda m, v: 1.0), ("1.5", lambda m, v: 1.5),
            ("None", lambda m, v: None), ("'a'", lambda m, v: "a"),
            ("99", lambda m, v: 99), ("-99", lambda m, v: -99),
            ("2**40", lambda m, v: 2**40)],
    "ints": [("first 1.5", lambda m, v: _first(v, 1.5)), ("first 99", lambda m, v: _first(v, 99)),
             ("first -99", lambda m, v: _first(v, -99)),
             ("first 2**40", lambda m, v: _first(v, 2**40)),
             ("None", lambda m, v: None), ("'a'", lambda m, v: "a")],
    "array": [("a list", lambda m, v: v.tolist()),
              ("rank 0", lambda m, v: m.array(1, v.dtype)),
              ("a rank more", lambda m, v: m.expand_dims(v, 0)),
              ("None", lambda m, v: None), ("'a'", lambda m, v: "a")],
    "arrays": [("None", lambda m, v: None), ("'a'", lambda m, v: "a"),
               ("first None", lambda m, v: _first(v, None))],
    "float": [("None", lambda m, v: None), ("'a'", lambda m, v: "a")],
    "bool": [("None", lambda m, v: None), ("'a'", lambda m, v: "a")],
    "str": [("3", lambda m, v: 3), ("None", lambda m, v: None),
            ("'not_a_choice'", lambda m, v: "not_a_choice")],
    "dtype": [("'float32'", lambda m, v: "float32"), ("None", lambda m, v: None)],
    "other": [("None", lambda m, v: None), ("'a'", lambda m, v: "a")],
}


def annotations(name):
    """{parameter: its type as MLX prints it} for ``name``'s printed signatures."""
    found = {}
    for text, *_ in keywords.printed(name).__nb_signature__:
        start = text.index("(")
        for piece in keywords._split(text[start + 1:keywords._closing(text, start)]):
            if ":" not in piece:
                continue
            param, annotation = piece.split(":", 1)
            cut = keywords._top_level(annotation).find("=")
            found.setdefault(param.strip(" *"),
                             (annotation[:cut] if cut >= 0 else annotation).strip())
    return found


def left_out_kinds(annotation):
    """The kinds to ask of a parameter the sample leaves out, from its printed
    type: "int" for an int, "ints" for a sequence of ints."""
    alternatives = {a.strip() for a in keywords._top_level(annotation).split("|")}
    whole = {a.strip() for a in annotation.split("|")}
    kinds = []
    if "int" in alternatives:
        kinds.append("int")
    if whole & {"Sequence[int]", "collections.abc.Sequence[int]", "tuple[int, ...]"}:
        kinds.append("ints")
    return kinds


# --- the cases -----------------------------------------------------------------------


class Call:
    """One library's call of a function: its sample's arguments, which a case
    changes in one place."""

    def __init__(self, m, name, params, tmp):
        self.m, self.name = m, name
        self.side = keywords.library(m, name, params, tmp)

    def arguments(self, where=None, bad=None, extra=None):
        """(args, kwargs) of the sample call, the argument at ``where``
        (("position", k), ("keyword", name)) made ``bad(m, value)``."""
        side = self.side
        args = [side.value(p) for p in side.positional] + list(side.varargs)
        kwargs = {p.name: side.value(p) for p in side.params
                  if p.name in side.values and p not in side.positional}
        kwargs.update(side.extras)
        if where is not None:
            place, key = where
            if place == "position":
                args[key] = bad(self.m, args[key])
            else:
                kwargs[key] = bad(self.m, kwargs.get(key))
        kwargs.update(extra or {})
        return args, kwargs

    def run(self, where=None, bad=None, extra=None, evaluate=True):
        """Make the call (and ``THEN``'s, for a transform) and evaluate what
        it returns (or, not ``evaluate``, read its shapes): "ok" (with the
        shapes), or the exception it raises."""
        m = self.m
        restore = SETTERS[self.name](m) if self.name in SETTERS else None
        try:
            args, kwargs = self.arguments(where, bad, extra)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = self.side.function(*args, **kwargs)
                if self.name in THEN:
                    result = THEN[self.name](m, result)
                if not evaluate:
                    return f"ok, shapes {[a.shape for a in arrays_in(m, result)]}"
                m.eval(*arrays_in(m, result))
        except Exception as e:  # noqa: BLE001 - the exception is the answer
            return e
        finally:
            if restore is not None:
                restore()
        return "ok"


def arrays_in(m, result):
    """The arrays in ``result`` (nested in lists, tuples and dicts)."""
    if isinstance(result, m.array):
        return [result]
    if isinstance(result, (list, tuple)):
        return [a for r in result for a in arrays_in(m, r)]
    if isinstance(result, dict):
        return [a for r in result.values() for a in arrays_in(m, r)]
    return []


def cases(name, theirs):
    """[(label, where, bad)] for ``name``, from MLX's sample arguments ``theirs``
    (a test_keywords.Library): each argument the sample gives, the first of its
    extra positional and keyword arguments, and the left-out parameters whose
    printed type is an int."""
    printed = annotations(name)
    found = []

    def add(label, where, value, default=keywords.NO_DEFAULT):
        for bad_label, bad in BAD[kind_of(value)]:
            if bad_label == "None" and default in (None, "None"):
                continue  # None is what leaving it out gives
            found.append((f"{label}: {bad_label}", where, bad))

    for k, param in enumerate(theirs.positional):
        add(param.name, ("position", k), theirs.values[param.name], param.default)
    if theirs.varargs:
        add("*args[0]", ("position", len(theirs.positional)), theirs.varargs[0])
    for param in theirs.params:
        if param.kind != "" or param in theirs.positional:
            continue
        if param.name in theirs.values:
            add(param.name, ("keyword", param.name), theirs.values[param.name], param.default)
        elif param.name in printed:
            for kind in left_out_kinds(printed[param.name]):
                for bad_label, bad in BAD[kind]:
                    if bad_label == "None":
                        continue
                    if kind == "ints":  # made from the sequence (0,)
                        bad = _from(bad, (0,))
                    found.append((f"{param.name}: {bad_label}", ("keyword", param.name), bad))
    if theirs.extras:
        key = next(iter(theirs.extras))
        add(f"{key}=", ("keyword", key), theirs.extras[key])
    found.append((f"{keywords.UNKNOWN}=1", None, None))
    return found


# --- where an exception comes from ---------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _raise_lines(path):
    """The lines of ``path`` that belong to a ``raise`` statement."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return frozenset(line for node in ast.walk(tree) if isinstance(node, ast.Raise)
                     for line in range(node.lineno, node.end_lineno + 1))


def raised_by_a_check(error):
    """Whether mlxref's ``error`` comes from an argument check: a ``raise``
    statement in mlxref (the innermost frame of its traceback is one), or
    Python's own refusal of the arguments (a TypeError whose innermost frame
    is the call made here)."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = tb.tb_frame.f_code.co_filename
    if path in (__file__, keywords.__file__):
        return isinstance(error, TypeError)
    return path.startswith(MLXREF_DIR + os.sep) and tb.tb_lineno in _raise_lines(path)


def where_raised(error):
    """``file:line`` of the innermost frame of ``error``'s traceback."""
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = os.path.relpath(tb.tb_frame.f_code.co_filename, os.path.dirname(MLXREF_DIR))
    return f"{path}:{tb.tb_lineno}"


def outcome(result):
    """``Call.run``'s result as text: "ok...", or the exception's type."""
    return result if isinstance(result, str) else type(result).__name__


# --- MLX in a child process --------------------------------------------------------------


# The child: MLX alone, the call's arguments pickled (MLX's arrays pickle).
CHILD = """
import pickle, sys
import mlx.core as mx
name, args, kwargs = pickle.load(sys.stdin.buffer)
function = mx
for part in name.split("."):
    function = getattr(function, part)
try:
    result = function(*args, **kwargs)
    mx.eval(result)
except Exception as e:
    print(type(e).__name__)
else:
    print("ok")
"""


def mlx_in_child(call, where, bad):
    """MLX's outcome of ``call`` (a ``Call`` of MLX) with the argument at
    ``where`` made bad, run in a new process: "aborts" when it dies of a
    signal, "hangs" when it has not finished in a minute."""
    args, kwargs = call.arguments(where, bad)
    try:
        done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, timeout=60,
                              input=pickle.dumps((call.name, args, kwargs)))
    except subprocess.TimeoutExpired:
        return "hangs"
    if done.returncode < 0:
        return "aborts"
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().split()[-1]


# --- the test ----------------------------------------------------------------------------------


def functions():
    return [n for n in keywords.functions() if not n.startswith("array.")
            and n not in keywords.NOT_RUN]


@dataclass
class Row:
    """One case's outcomes: "ok..." or an exception's type; the exceptions."""
    label: str
    theirs: str
    ours: str
    their_error: Exception = None
    our_error: Exception = None


def compare(name, tmp, in_child=MLX_ABORTS | MLXREF_REFUSES):
    """A ``Row`` for the sample call and each case of ``name``."""
    params = keywords.parameters(name)
    (tmp / "theirs").mkdir()
    (tmp / "ours").mkdir()
    theirs = Call(real_mx, name, params, tmp / "theirs")
    ours = Call(mx, name, params, tmp / "ours")
    rows = [row("sample", theirs.run(), ours.run())]
    for label, where, bad in cases(name, theirs.side):
        extra = {keywords.UNKNOWN: 1} if where is None else None
        evaluate = (name, label) not in NOT_EVALUATED
        if (name, label) in in_child:
            expected = mlx_in_child(theirs, where, bad)
        else:
            expected = theirs.run(where, bad, extra, evaluate)
        rows.append(row(label, expected, ours.run(where, bad, extra, evaluate)))
    return rows


def row(label, theirs, ours):
    def error(result):
        return None if isinstance(result, str) else result
    return Row(label, outcome(theirs), outcome(ours), error(theirs), error(ours))


def problems(name, rows):
    """The rows where mlxref does not do what MLX does, as lines of text."""
    lines = []
    for r in rows:
        said = "".join(f"\n      {who}: {str(e).splitlines()[0][:150]}" for who, e in (
            ("MLX", r.their_error), ("mlxref", r.our_error)) if e is not None)
        refuses = (name, r.label) in MLXREF_REFUSES
        if r.our_error is not None and not raised_by_a_check(r.our_error):
            lines.append(f"  {r.label}: MLX {r.theirs}, mlxref {r.ours} from inside "
                         f"{where_raised(r.our_error)}{said}")
        elif r.theirs == r.ours:
            continue
        elif r.theirs in ("aborts", "hangs") and r.our_error is not None:
            continue  # a clear error where MLX's process dies or hangs
        elif refuses and r.theirs.startswith("ok") and r.our_error is not None:
            continue  # a clear error where MLX is silently wrong
        else:
            lines.append(f"  {r.label}: MLX {r.theirs}, mlxref {r.ours}{said}")
    seen = {r.label: r for r in rows}
    for function, label in MLXREF_REFUSES:
        if function == name and not (
                label in seen and seen[label].theirs in ("ok", "hangs", "aborts")
                and seen[label].our_error):
            lines.append(f"  {label}: listed in MLXREF_REFUSES, but not run by MLX (or hung, "
                         "or killed its process) and refused by mlxref")
    return lines


# MLX's savez given a file without ``write`` leaves a half-made ZipFile, which
# complains when it is collected.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("name", functions())
def test_a_bad_argument_gets_mlxs_exception_from_a_check(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a bad file name writes here
    rows = compare(name, tmp_path)
    assert rows[0].theirs != "TypeError", f"{name}: MLX refuses the sample call's arguments"
    found = problems(name, rows)
    assert not found, f"{name}:\n" + "\n".join(found)


# --- finding the calls that kill MLX's process ---------------------------------------------


def find_aborts():
    """Print the cases whose MLX side kills its process, as ``MLX_ABORTS``
    entries: every case runs, one after another, in a child; when the child
    dies (or hangs), the case it was in is printed and the next child starts
    after it."""
    names, start = functions(), 0
    while start is not None:
        try:
            done = subprocess.run([sys.executable, __file__, "--child", str(start)],
                                  capture_output=True, text=True, timeout=600)
            out, died = done.stdout, done.returncode < 0
        except subprocess.TimeoutExpired as e:
            out, died = (e.stdout or b"").decode(), True
        started = [line.split(" ", 2)[1:] for line in out.splitlines() if line.startswith("case ")]
        start = None
        if died and started:
            k, label = started[-1]
            print(f"    ({names[int(k)]!r}, {label!r}),", flush=True)
            start = f"{k} {label}"


def _run_mlx_cases(start, tmp):
    """MLX's side of every case from ``start`` ("k" or "k label": the k-th
    function, after its case ``label``), each named before it runs."""
    os.chdir(tmp)
    k, _, after = start.partition(" ")
    for n, name in enumerate(functions()[int(k):], int(k)):
        (pathlib.Path(tmp) / str(n)).mkdir()
        theirs = Call(real_mx, name, keywords.parameters(name), pathlib.Path(tmp) / str(n))
        for label, where, bad in cases(name, theirs.side):
            if after:
                after = "" if label == after else after
                continue
            print("case", n, label, flush=True)
            theirs.run(where, bad, {keywords.UNKNOWN: 1} if where is None else None)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _run_mlx_cases(sys.argv[2], tempfile.mkdtemp())
    else:
        find_aborts()
