"""The judge: graded code's results as data, and the hidden tests' verdicts outside the sandbox.

A programming contest's judge runs the contestant's program in a sandbox and
compares what it printed with the expected answer in a process that never
loads the contestant's code. The hidden tests are graded that way:

1. **Record** (a trusted process, the reference only). The hidden tests run
   on the instructor's reference, drawing their inputs (hypothesis) there.
   Each test reaches the graded code only through ``run(program, *args)``;
   ``run`` calls the program and records the call, its inputs as data, and
   the reference's result as data. The test's own assertions check the
   reference (which must pass them).
2. **Answer** (the sandbox, the student's code). A child under OS isolation
   gets the recorded calls, one at a time (the next once it has answered),
   and nothing else of the hidden tests: a program's name and its inputs. It runs each one on the spliced copy and sends back
   each result as data (``answer``), through the grader's schema-checked
   channel.
3. **Judge** (the grader's own process, which never runs graded code). A
   hidden test passes when every one of its calls got back the reference's
   result, to the call's tolerance (``same``).

So the hidden tests' source, their expected values and the comparison never
reach the sandbox, and nothing the student's code does there can change a
verdict except its results. Outside grading (``make test``), ``run`` calls
the program in the test's own process and returns its result as grading
would see it: through ``to_data`` and ``from_data``.

Data is JSON with tags for what JSON lacks: ``{"array": dtype, "shape",
"elements"}``, ``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``,
``{"dtype": name}``, ``{"complex": [re, im]}``, ``{"ref": "module:name"}``
(a function or class of mlxref or of the programs module, an argument only)
and ``{"error": type name, "message": text}`` (a result only).

Read next: tests/course/programs.py (the programs the hidden tests call),
mlxref/course/grader.py (``_record``, ``_answer``, ``_judge``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import sys

DEPTH = 32  # nesting of one value
ITEMS = 1 << 16  # numbers, strings and containers in one value (about 1 MB of JSON)
TEXT = 4000  # characters of one string (an error's message is cut to it)

# Where a program or a ``ref`` may come from: mlxref, and the instructor's programs
PROGRAMS = "course.programs"
_ORIGINS = ("mlxref.", PROGRAMS)


class NotData(ValueError):
    """A value that cannot cross between the sandbox and the judge."""


# --- data -----------------------------------------------------------------------------


def name_of(program):
    """``"module:qualified.name"`` of a function or class that ``resolve``
    finds again in another process, or ``NotData``."""
    module = getattr(program, "__module__", None)
    qualname = getattr(program, "__qualname__", None)
    bound = inspect.ismethod(program) and not isinstance(program.__self__, type)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname or bound:
        raise NotData(f"judge.run: {program!r} has no importable name (a lambda, a nested "
                      f"function or a bound method); name a function of mlxref or of "
                      f"{PROGRAMS}")
    name = f"{module}:{qualname}"
    if not (module + ".").startswith(_ORIGINS) or resolve(name) is not program:
        raise NotData(f"judge.run: {name} is not a function or class of mlxref or of "
                      f"{PROGRAMS}")
    return name


def resolve(name):
    """The function or class ``name_of`` named."""
    module, _, qualname = name.partition(":")
    if not (module + ".").startswith(_ORIGINS) or not qualname:
        raise NotData(f"judge: {name[:200]!r} names nothing of mlxref or of {PROGRAMS}")
    value = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def to_data(value):
    """``value`` as data (see the module's docstring), or ``NotData``."""
    count = [0]

    def walk(v, depth):
        count[0] += 1
        if depth > DEPTH or count[0] > ITEMS:
            raise NotData(f"the value is nested deeper than {DEPTH} or holds more than "
                          f"{ITEMS} items")
        if v is None or isinstance(v, (bool, int, float)):
            return v
        if isinstance(v, str):
            if len(v) > TEXT:
                raise NotData(f"a string of {len(v)} characters (at most {TEXT})")
            return v
        if isinstance(v, complex):
            return {"complex": [v.real, v.imag]}
        if isinstance(v, list):
            return [walk(x, depth + 1) for x in v]
        if isinstance(v, tuple):
            return {"tuple": [walk(x, depth + 1) for x in v]}
        if isinstance(v, dict):
            return {"dict": [[walk(k, depth + 1), walk(x, depth + 1)] for k, x in v.items()]}
        mx = sys.modules.get("mlxref.core")
        if mx is not None and isinstance(v, mx.array):
            from mlxref.core.array import elements

            count[0] += v.size
            if count[0] > ITEMS:
                raise NotData(f"an array of {v.size} elements (at most {ITEMS} in all)")
            flat = list(elements(v))  # row-major, as tolist reads them
            if v.dtype == mx.complex64:
                flat = [[x.real, x.imag] for x in flat]
            return {"array": v.dtype.name, "shape": list(v.shape), "elements": flat}
        if mx is not None and isinstance(v, mx.Dtype):
            return {"dtype": v.name}
        if callable(v):
            return {"ref": name_of(v)}
        raise NotData(f"a {type(v).__name__} is not data (numbers, strings, lists, tuples, "
                      f"dicts, arrays and dtypes are)")

    return walk(value, 0)


def from_data(data):
    """The value ``to_data`` gave ``data`` for, built with this process's mlxref."""
    import mlxref.core as mx
    from mlxref.core.dtypes import by_name

    if isinstance(data, list):
        return [from_data(x) for x in data]
    if not isinstance(data, dict):
        return data
    tag = next(iter(data))
    if tag == "array":
        dtype = by_name(data["array"])
        flat = data["elements"]
        if dtype == mx.complex64:
            flat = [complex(re, im) for re, im in flat]
        return mx.array(flat, dtype).reshape(data["shape"])
    if tag == "tuple":
        return tuple(from_data(x) for x in data["tuple"])
    if tag == "dict":
        return {_key(from_data(k)): from_data(x) for k, x in data["dict"]}
    if tag == "complex":
        return complex(*data["complex"])
    if tag == "dtype":
        return by_name(data["dtype"])
    if tag == "ref":
        return resolve(data["ref"])
    raise NotData(f"judge: no value is tagged {tag!r}")


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def error(exc):
    """The data of a raised exception: its type's name and its message."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 (a message that cannot be read is still an error)
        text = "(its message could not be read)"
    return {"error": type(exc).__name__, "message": text[:TEXT]}


def dumps(data):
    """The one text form of data: JSON with NaN and Infinity, keys in order."""
    return json.dumps(data, allow_nan=True, separators=(",", ":"))


# --- comparing ------------------------------------------------------------------------

# The default tolerance of a float result: 16 units in the last place of its dtype
# (float64 for a Python float), relative to 1 + |expected|: the hidden tests'
# own tolerance, so an answer the tests accept is one the judge accepts.
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
        "float64": 2.0 ** -52, "complex64": 2.0 ** -23}


def tolerance(dtype_name, tol=None):
    eps = _EPS.get(dtype_name)
    if eps is None:
        return 0.0
    return max(tol or 0.0, 16 * eps)


def same(got, want, tol=None):
    """``None`` when the data ``got`` (the graded code's) is the data ``want``
    (the reference's) to ``tol``, else why not, in one line. Numbers of an
    inexact dtype compare to ``tolerance``; everything else exactly (NaN equals
    NaN, ``True`` is not ``1``). ``got`` may be anything JSON gave: it is never
    trusted."""
    try:
        return _same(got, want, tol, "the result", 0)
    except RecursionError:
        return "the result is nested too deeply"
    except Exception as exc:  # noqa: BLE001 (10**400 from the sandbox: OverflowError)
        return f"the result could not be compared: {type(exc).__name__}"


def _same(got, want, tol, where, depth):
    if depth > DEPTH + 1:
        return f"{where} is nested too deeply"
    if isinstance(want, dict) and "error" in want:
        if not (isinstance(got, dict) and got.get("error") == want["error"]):
            return f"{where}: expected {want['error']} to be raised, received {_show(got)}"
        return None
    if isinstance(got, dict) and "error" in got:
        return f"{where}: raised {str(got.get('error'))[:100]}: {_show(got.get('message'))}"
    if want is None or isinstance(want, (bool, int, str)):
        if type(got) is not type(want) or got != want:
            return f"{where}: expected {_show(want)}, received {_show(got)}"
        return None
    if isinstance(want, float):
        return _close(got, want, tolerance("float64", tol), where)
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{where}: expected a list of {len(want)}, received {_show(got)}"
        for k, (g, w) in enumerate(zip(got, want)):
            why = _same(g, w, tol, f"{where}[{k}]", depth + 1)
            if why:
                return why
        return None
    tag = next(iter(want))
    if not isinstance(got, dict) or set(got) != set(want):
        return f"{where}: expected {_kind(want)}, received {_show(got)}"
    if tag == "array":
        if got["array"] != want["array"] or got["shape"] != want["shape"]:
            return (f"{where}: expected a {want['array']} array of shape {want['shape']}, "
                    f"received {_show(got['array'])} of shape {_show(got['shape'])}")
        g, w = got["elements"], want["elements"]
        if not isinstance(g, list) or len(g) != len(w):
            return f"{where}: the elements are not {len(w)} numbers"
        t = tolerance(want["array"], tol)
        for k, (a, b) in enumerate(zip(g, w)):
            pairs = zip(a, b) if isinstance(b, list) and isinstance(a, list) and \
                len(a) == 2 else [(a, b)]
            for x, y in pairs:
                why = _close(x, y, t, f"{where}, element {k}") if t else (
                    None if type(x) is type(y) and x == y else
                    f"{where}, element {k}: expected {_show(y)}, received {_show(x)}")
                if why:
                    return why
        return None
    if tag in ("tuple", "complex"):
        return _same(got[tag], want[tag], tol, where, depth + 1)
    if tag == "dict":
        return _same(got["dict"], want["dict"], tol, where, depth + 1)
    if got != want:  # dtype
        return f"{where}: expected {_show(want)}, received {_show(got)}"
    return None


def _close(x, y, tol, where):
    if isinstance(y, bool) or not isinstance(x, (int, float)) or isinstance(x, bool):
        return None if type(x) is type(y) and x == y else \
            f"{where}: expected {_show(y)}, received {_show(x)}"
    x, y = float(x), float(y)
    if math.isnan(y) or math.isnan(x):
        ok = math.isnan(x) and math.isnan(y)
    elif math.isinf(y) or math.isinf(x):
        ok = x == y
    else:
        ok = abs(x - y) <= tol * (1 + abs(y))
    return None if ok else f"{where}: expected {y!r}, received {x!r}"


def _kind(data):
    return f"a {next(iter(data))}" if isinstance(data, dict) else f"a {type(data).__name__}"


def _show(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the hidden tests' side -----------------------------------------------------------

_RECORDER = []  # the Recorder of a recording run (step 1), if this is one


def run(program, *args, tol=None, **kwargs):
    """``program(*args, **kwargs)`` as the graded code computes it: the one way a
    hidden test reaches the student's code.

    ``program`` is a function or class of mlxref or of tests/course/programs.py,
    and every argument is data (numbers, strings, lists, tuples, dicts, arrays,
    dtypes, functions and classes of those modules). The result comes back as
    grading sees it, rebuilt from data: arrays as fresh arrays of the same
    dtype, shape and elements. An exception the program raises is raised here.
    ``tol`` is the relative tolerance the student's result is held to (at
    least 16 units in the last place of its dtype).

    In a recording run the call and the reference's result are recorded; the
    student's code answers the same call in the sandbox.
    """
    call = {"program": name_of(program), "args": to_data(list(args)),
            "kwargs": to_data(kwargs), "tol": tol}
    try:
        result = program(*args, **kwargs)
    except Exception as exc:
        if _RECORDER:
            _RECORDER[0].add(call, error(exc))
        raise
    data = json.loads(dumps(to_data(result)))
    if _verdict(data):
        raise NotData(f"judge.run: {call['program']} returned {data!r}, a verdict: computed "
                      f"next to the graded code, a pass or fail is no evidence (the graded "
                      f"code can patch what computes it). Return the numbers it would check")
    if _RECORDER:
        _RECORDER[0].add(call, data)
    return from_data(data)


def _verdict(data):
    """Is ``data`` only a pass or a fail: None, booleans, bool arrays of one
    element (``array_equal``'s) and empty strings?"""
    if data is None or isinstance(data, bool) or data == "":
        return True
    if isinstance(data, dict) and data.get("array") == "bool" and len(data["elements"]) <= 1:
        return True
    if isinstance(data, dict) and "tuple" in data:
        data = data["tuple"]
    return isinstance(data, list) and bool(data) and all(_verdict(x) for x in data)


def answer(call):
    """Step 2, in the sandbox: the data of one recorded call's result on the
    graded code, or of the exception it raised. Never raises."""
    try:
        program = resolve(call["program"])
        args = from_data(call["args"])
        kwargs = {k: v for k, v in from_data(call["kwargs"]).items()}
        result = program(*args, **kwargs)
    except Exception as exc:
        return error(exc)
    try:
        return to_data(result)
    except Exception as exc:  # noqa: BLE001 (a result that cannot be read is the answer)
        return {"error": "NotData", "message": f"the result is not data: {str(exc)[:300]}"}


class Recorder:
    """Step 1's pytest plugin: each hidden test's calls and outcome, written as
    JSON to ``path`` when the session ends: ``{test id: {"markers", "passed",
    "message", "calls": [[call, result], ...]}}``."""

    def __init__(self, path):
        self.path, self.tests, self.current = path, {}, None

    def add(self, call, result):
        if self.current is not None:
            self.current["calls"].append([call, result])

    def pytest_runtest_setup(self, item):
        markers = sorted({m.name for m in item.iter_markers() if m.name.startswith("task")})
        self.current = self.tests.setdefault(item.nodeid, {
            "markers": markers, "passed": True, "message": None, "calls": []})

    def pytest_runtest_logreport(self, report):
        entry = self.tests.get(report.nodeid)
        if entry is not None and (report.failed or report.skipped):
            entry["passed"] = False
            lines = str(report.longrepr).strip().splitlines()
            entry["message"] = entry["message"] or (lines[-1][:TEXT] if lines else report.when)

    def pytest_runtest_teardown(self, item):
        self.current = None

    def pytest_sessionfinish(self, session):
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(dumps(self.tests))


def record_main(path, args):
    """The recording run's program: pytest ``args`` with the ``Recorder``."""
    import pytest

    recorder = Recorder(path)
    _RECORDER.append(recorder)
    return pytest.main(args, plugins=[recorder])
