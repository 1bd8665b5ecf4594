"""The judge: graded code's results as data, and every verdict outside the sandbox.

A programming contest's judge runs the contestant's program in a sandbox and
compares what it printed with the expected answer in a process that never
loads the contestant's code. The course's tests are graded that way:

1. **Record** (a trusted process, the reference only). The tests, visible
   and hidden, run on the instructor's reference, drawing their inputs
   (hypothesis) there. Each test reaches the graded code only through
   ``run(program, *args)``; ``run`` calls the program and records the call,
   its inputs as data, and the reference's result as data. The test's own
   assertions check the reference (which must pass them).
2. **Answer** (the sandbox, the student's code). A child under OS isolation
   gets the recorded calls, one at a time (the next once it has answered),
   and nothing else of the tests: a program's name and its inputs. It runs
   each one on the spliced copy and sends back each result as data, or the
   exception it raised with the student's lines it passed through
   (``answer``), through the grader's schema-checked channel.
3. **Judge** (processes that never run graded code). A hidden test passes
   when every one of its calls got back the reference's result, to the
   call's tolerance (``same``), decided in the grader's own process. A
   visible test is replayed (``Replayer``): it runs again on the reference,
   ``run`` giving back the student's answers (``answered``) instead of
   calling anything, so its own assertions decide and say what differs.

So the tests' source, their expected values and the comparisons never reach
the sandbox, and nothing the student's code does there can change a verdict
except its results. Outside grading (``make test``, ``make task``), ``run``
calls the program in the test's own process and returns its result as
grading would see it: through ``to_data`` and ``from_data``.

Data is JSON with tags for what JSON lacks: ``{"array": dtype, "shape",
"elements"}``, ``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``,
``{"dtype": name}``, ``{"complex": [re, im]}``, ``{"ref": "module:name"}``
(a function or class of mlxref or of the programs module, an argument only)
and ``{"error": type name, "message": text}`` (a result only).

Read next: tests/course/programs.py (the programs the tests call),
mlxref/course/grader.py (``_trusted``, ``_record``, ``_answer``, ``_answer_and_judge``,
``_replay``, ``_whole``).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import json
import math
import os
import sys
import time

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


def from_data(data, answer=False):
    """The value ``to_data`` gave ``data`` for, built with this process's
    mlxref. An ``answer`` (the sandbox's data, in a trusted process) holds no
    function or class, and its strings are printable text on one line."""
    import mlxref.core as mx
    from mlxref.core.dtypes import by_name

    if isinstance(data, list):
        return [from_data(x, answer) for x in data]
    if isinstance(data, str) and answer:
        return printable(data)
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
        return tuple(from_data(x, answer) for x in data["tuple"])
    if tag == "dict":
        return {_key(from_data(k, answer)): from_data(x, answer) for k, x in data["dict"]}
    if tag == "complex":
        return complex(*data["complex"])
    if tag == "dtype":
        return by_name(data["dtype"])
    if tag == "ref" and not answer:
        return resolve(data["ref"])
    raise NotData(f"judge: no {'answer' if answer else 'value'} is tagged {tag!r}")


def printable(text):
    """``text`` with every character that is not printable (a line break, an
    escape) a space: a student's string in a message is one line of text."""
    return "".join(c if c.isprintable() else " " for c in str(text))


def bounded(data):
    """Is ``data`` (JSON from the sandbox) within ``to_data``'s limits: nested
    at most ``DEPTH`` + 3 deep, at most twice ``ITEMS`` items? Walked without
    recursion, so a deeper value costs no stack."""
    stack, count = [(data, 0)], 0
    while stack:
        value, depth = stack.pop()
        count += 1
        if depth > DEPTH + 3 or count > 2 * ITEMS:
            return False
        if isinstance(value, dict):
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
    return True


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


# --- the tests' side: record, answer, replay ---------------------------------------------

_RECORDER = []  # the Recorder of a recording run (step 1), if this is one
_REPLAYER = []  # the Replayer of a replaying run (the visible tests' step 3), if this is one


def run(program, *args, tol=None, **kwargs):
    """``program(*args, **kwargs)`` as the graded code computes it: the one way a
    test reaches the student's code.

    ``program`` is a function or class of mlxref or of tests/course/programs.py,
    and every argument is data (numbers, strings, lists, tuples, dicts, arrays,
    dtypes, functions and classes of those modules). The result comes back as
    grading sees it, rebuilt from data: arrays as fresh arrays of the same
    dtype, shape and elements. An exception the program raises is raised here.
    ``tol`` is the relative tolerance the student's result is held to (at
    least 16 units in the last place of its dtype).

    In a recording run the call and the reference's result are recorded; the
    student's code answers the same call in the sandbox. In a replaying run
    (the visible tests' verdicts) nothing is called: the student's answer to
    the call comes back, or the exception it raised is raised again.
    """
    call = {"program": name_of(program), "args": to_data(list(args)),
            "kwargs": to_data(kwargs), "tol": tol}
    if _REPLAYER:
        return _REPLAYER[0].answer(call)
    recorder = _RECORDER[0] if _RECORDER else None
    try:
        if recorder is not None:
            recorder.entered.watch()
        result = program(*args, **kwargs)
        data = json.loads(dumps(to_data(result)))  # a lazy result evaluated here
    except Exception as exc:
        if recorder is not None:
            recorder.add(call, error(exc))
        raise
    finally:
        if recorder is not None:
            recorder.entered.unwatch()
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


def answer(call, where=None):
    """Step 2, in the sandbox: the data of one recorded call's result on the
    graded code, or of the exception it raised, with ``where(exc)``'s keys
    (the student's lines it passed through: ``stub``, ``where``, ``inside``).
    An exception raised while the result is read (a lazy array evaluated) is
    the graded code's too. Never raises."""
    try:
        program = resolve(call["program"])
        args = from_data(call["args"])
        kwargs = {k: v for k, v in from_data(call["kwargs"]).items()}
        return to_data(program(*args, **kwargs))
    except NotData as exc:
        return {"error": "NotData", "message": f"the result is not data: {str(exc)[:300]}"}
    except Exception as exc:
        data = error(exc)
        try:
            data.update(where(exc) if where is not None else {})
        except Exception:  # noqa: BLE001 (the error is the answer, its lines a bonus)
            pass
        return data


class Answered(Exception):
    """An exception of the graded code's own class, raised again in a replay
    (``kind`` is its class's name)."""


class Unanswered(Exception):
    """A replayed call the graded code's run ended before answering."""


def answered(data):
    """The value the graded code's answer ``data`` (from the sandbox: never
    trusted) stands for, rebuilt with this process's mlxref; or the exception it
    raised, raised again: one of Python's as its own class, any other as
    ``Answered``, each with ``answer`` holding ``data``. ``NotData`` when the
    answer cannot be read."""
    if isinstance(data, dict) and "error" in data:
        why = _malformed_error(data)
        if why:
            raise NotData(f"your code's answer is not well-formed: {why}")
        kind = vars(builtins).get(data["error"])
        exc = None
        if isinstance(kind, type) and issubclass(kind, Exception):
            try:
                exc = kind(data["message"])
            except Exception:  # noqa: BLE001 (UnicodeError's arguments, say)
                exc = None
        if exc is None:
            exc = Answered(data["message"])
        exc.kind, exc.answer = data["error"], data
        raise exc
    try:
        return from_data(data, answer=True)
    except Exception as exc:  # noqa: BLE001 (RecursionError, a bad dtype, a bad shape)
        raise NotData(f"your code's result could not be read: {type(exc).__name__}: "
                      f"{str(exc)[:200]}") from None


def _malformed_error(data):
    """Why an error's data is not what ``answer`` sends, or None."""
    def text(x, limit=TEXT):
        return isinstance(x, str) and len(x) <= limit

    if not set(data) <= {"error", "message", "stub", "where", "inside"}:
        return "unknown keys"
    if not text(data["error"], 200) or not text(data.get("message")):
        return "an error needs a type name and a message"
    stub, where, inside = data.get("stub"), data.get("where", []), data.get("inside")
    if stub is not None and not (isinstance(stub, list) and len(stub) == 2 and text(stub[0], 300)
                                 and type(stub[1]) is int):
        return "a bad stub line"
    if not (isinstance(where, list) and len(where) <= 50 and all(
            isinstance(w, list) and len(w) == 4 and type(w[1]) is int and text(w[0], 300)
            and text(w[2], 300) and text(w[3], 300) for w in where)):
        return "bad lines of your code"
    if inside is not None and not (isinstance(inside, list) and len(inside) == 2 and all(
            text(x, 300) for x in inside)):
        return "a bad place of the error"
    return None


def describe(exc, tb, item):
    """A replayed test's failure in a few lines: the student's exception, with
    the lines of their code it passed through, or the test's own message, and
    the values in the test where they say more."""
    answer = getattr(exc, "answer", None)
    lines = []
    if isinstance(exc, Unanswered):
        return f"your code's run ended before it answered this test's call: {exc}"
    if answer is not None:
        if answer.get("stub"):
            return "not done yet: %s, line %d still raises the stub's NotImplementedError" % (
                printable(answer["stub"][0]), answer["stub"][1])
        # the student's words, each on one line of its own: none can pass for
        # a line of the grader's
        kind, text = printable(answer["error"]), printable(answer["message"])
        where = [[printable(x) if isinstance(x, str) else x for x in w]
                 for w in answer.get("where", [])]
        inside = [printable(x) for x in answer.get("inside") or []]
        lines.append(f"{kind}: {text}" if text else kind)
        if where:
            lines.append("in your code:")
            lines += ["  %s, line %d, in %s: %s" % tuple(w) for w in where]
            if inside:
                lines.append("  raised inside %s (%s), called from your line above" % tuple(
                    inside))
        elif inside:
            lines.append("raised in %s (%s)" % tuple(inside))
    elif isinstance(exc, AssertionError):
        text = str(exc)
        if "\nassert " in text and not text.startswith("assert "):
            text = text.split("\nassert ")[0]  # the test's message, not pytest's rewriting
        lines.append(text.strip() or "AssertionError")
    else:
        text = str(exc)
        lines.append(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    tests = [f for f in frames if f.f_code.co_filename == str(item.path)]
    if tests and (not isinstance(exc, AssertionError) or "expected" not in str(exc)):
        names = [(k, v) for k, v in tests[-1].f_locals.items()
                 if k != "self" and not k.startswith("@")
                 and not callable(v) and type(v).__name__ != "module"]
        if names:
            lines.append("the values in the test:")
        lines += [f"  {k} = {_show(v, 300)}" for k, v in names[:8]]
    return "\n".join(lines)[:TEXT]


class Entered:
    """The tasks whose regions run while it watches: a profile hook on the
    calls of ``functions`` (``{(file, qualified name): task id}``, the
    functions that hold the regions). The recording notes it for each call on
    the reference, the answering child for each call on the student's code."""

    def __init__(self, functions):
        self.functions, self.tasks, self.previous = functions, set(), None

    def watch(self):
        self.tasks, self.previous = set(), sys.getprofile()
        sys.setprofile(self._profile)

    def unwatch(self):
        sys.setprofile(self.previous)
        return sorted(self.tasks)

    def _profile(self, frame, event, arg):
        if event == "call":
            task = self.functions.get((frame.f_code.co_filename, frame.f_code.co_qualname))
            if task is not None:
                self.tasks.add(task)


class Recorder:
    """Step 1's pytest plugin: each test's calls and outcome, and the test files
    that could not be collected, written as JSON to ``path`` when the session
    ends: ``{"tests": {test id: {"markers", "passed", "message", "calls":
    [[call, result], ...], "entered": [[task id, ...], ...]}}, "errors": [file,
    ...]}``. ``entered`` lists, for each call, the tasks whose regions' functions
    it ran on the reference (the grader checks the calls that ran only their
    own task's against the whole submission)."""

    def __init__(self, path):
        from .regions import find_regions, project_root

        self.path, self.tests, self.current, self.errors = path, {}, None, []
        root = project_root()
        self.entered = Entered({(str(root / r.path), r.function): r.task
                                for r in find_regions(root)})

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(report.nodeid or ".")

    def add(self, call, result):
        if self.current is not None:
            self.current["calls"].append([call, result])
            self.current["entered"].append(sorted(self.entered.tasks))

    def pytest_runtest_setup(self, item):
        markers = sorted({m.name for m in item.iter_markers() if m.name.startswith("task")})
        self.current = self.tests.setdefault(item.nodeid, {
            "markers": markers, "passed": True, "message": None, "calls": [], "entered": []})

    def pytest_runtest_logreport(self, report):
        entry = self.tests.get(report.nodeid)
        if entry is not None and (report.failed or report.skipped):
            entry["passed"] = False
            lines = str(report.longrepr).strip().splitlines()
            entry["message"] = entry["message"] or (lines[-1][:TEXT] if lines else report.when)

    def pytest_runtest_teardown(self, item):
        self.current = None

    def pytest_sessionfinish(self, session):
        with open(self.path + ".part", "w", encoding="utf-8") as f:
            f.write(dumps({"tests": self.tests, "errors": self.errors}))
        os.replace(self.path + ".part", self.path)  # whole, for a reader that waits for it


class Replayer:
    """The visible tests' step 3, a pytest plugin in a trusted process: each
    test of ``answers`` (``{test id: {"calls": [[call, answer or None], ...],
    "why": why a call has no answer}}``) runs again, its ``run`` calls
    returning the graded code's answers, so that its own assertions give the
    verdict and the message. ``{test id: {"passed", "message"}}`` is written as
    JSON to ``path`` when the session ends."""

    def __init__(self, answers, path):
        self.answers, self.path, self.results = answers, path, {}  # answers: or a file's path
        self.current, self.next = None, 0

    def answer(self, call):
        entry, k = self.current, self.next
        self.next += 1
        if entry is None:
            raise NotData("judge.run: no replayed test is running")
        if k >= len(entry["calls"]) or dumps(entry["calls"][k][0]) != dumps(call):
            raise NotData("judge.run: this call is not the one the reference's run made here "
                          "(a test's calls must not depend on earlier results)")
        got = entry["calls"][k][1]
        if got is None:
            raise Unanswered(entry["why"])
        return answered(got)

    def pytest_collection_modifyitems(self, session, config, items):
        if not isinstance(self.answers, dict):  # a file's path: wait for it (trusted_main)
            while not os.path.exists(self.answers):
                time.sleep(0.02)
            with open(self.answers, encoding="utf-8") as f:
                self.answers = json.load(f)
        items[:] = [item for item in items if item.nodeid in self.answers]

    def pytest_runtest_setup(self, item):
        self.current, self.next = self.answers[item.nodeid], 0

    def pytest_runtest_teardown(self, item):
        self.current = None

    def pytest_runtest_logreport(self, report):
        entry = self.results.setdefault(report.nodeid, {"passed": True, "message": None})
        if (report.failed or report.skipped) and entry["passed"]:
            entry["passed"] = False
            lines = str(report.longrepr).strip().splitlines()
            entry["message"] = lines[-1][:TEXT] if lines else f"it failed in its {report.when}"
            entry["when"] = report.when

    def pytest_exception_interact(self, node, call, report):
        entry = self.results.get(getattr(node, "nodeid", None))
        if entry is not None and entry.get("when") == call.when:
            message = describe(call.excinfo.value, call.excinfo.tb, node)
            entry["message"] = message if call.when == "call" else \
                f"in the test's {call.when}: {message}"
            entry["when"] = None

    def pytest_sessionfinish(self, session):
        for entry in self.results.values():
            entry.pop("when", None)
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(dumps(self.results))


def trusted_main(spec):
    """The grade's trusted process, which loads the tests once for its three
    runs, as the JSON file ``spec`` says: the visible tests recorded (their
    calls to the file ``spec["visible"]["calls"]``), the hidden tests recorded
    (to ``spec["hidden"]["calls"]``), then, once the grader has written the
    file ``spec["answers"]``, the visible tests replayed on them (their
    verdicts to ``spec["verdicts"]``). A part without pytest ``args`` is
    skipped."""
    import pytest

    with open(spec, encoding="utf-8") as f:
        spec = json.load(f)
    for part in ("visible", "hidden"):
        if spec[part]["args"]:
            _RECORDER.append(Recorder(spec[part]["calls"]))
            pytest.main(spec[part]["args"], plugins=[_RECORDER[0]])
            _RECORDER.clear()
    if not spec["visible"]["args"]:
        return 0
    _REPLAYER.append(Replayer(spec["answers"], spec["verdicts"]))
    return pytest.main(spec["visible"]["args"], plugins=[_REPLAYER[0]])
