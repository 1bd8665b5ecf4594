"""Which arguments each public function takes by keyword, by position, or not at all,
checked by calling real MLX (issue 33).

MLX's bindings print a signature for each function, written by hand beside the
binding, and it is not always what the binding takes: ``help(mx.roll)`` prints
``roll(a, shift, axis=None, /, *, stream=None)``, yet ``mx.roll(a, 1, axis=1)``
runs. So no expected table is written here, and the printed ``/`` and ``*``
are not read: the printed signature gives the names, their order and their
defaults, and MLX's answer to each of these calls gives the rest. Starting
from a sample call of the function, each parameter is given

- by keyword (``shift: keyword``): the sample's positional arguments after it
  by keyword too, or, for one the sample gives by keyword, the same call with it
  added by keyword;
- by position (``axis: position``), those between it and the sample's
  positional ones filled in by position (their defaults, where the sample
  gives none) when MLX took each of them so;
- left out (``shift: left out``), where the sample gives it;

and the sample is called as it is and with a keyword no function has
(``not_a_parameter=``). Each call is made the same in both libraries, and a
binding refuses arguments with ``TypeError``: the test asserts that mlxref
refuses (``TypeError``) exactly the calls MLX refuses, and lets through (to a
result, or to another error) the others.

The functions are every public function of ``mlx.core`` and of its namespaces
``linalg``, ``fft``, ``random``, ``fast`` and ``distributed``, the constructors
of its classes that print a signature, and the methods of ``array``, where
mlxref has them too. Their sample calls are ``catalogue.sample``'s for the ops
(the manual draws the same calls), ``CALLS`` below for the others, and a
method's is the one of the op of its name. Besides its printed parameters, a
function is asked those its twin prints (``mx.var`` and ``a.var``: MLX 0.32.4's
``var`` takes ``correction`` although only the method prints it) and those of
mlxref's signature.

Read next: mlxref/manual/catalogue.py (the sample calls of the ops).
"""

import ast
import functools
import inspect
import re
from dataclasses import dataclass

import numpy
import pytest

import mlxref.core as mx
from mlxref.manual import catalogue
from support import assert_same_as_mlx, real_mx

pytestmark = pytest.mark.skipif(real_mx is None, reason="needs real MLX to ask")

NAMESPACES = ("linalg", "fft", "random", "fast", "distributed")
UNKNOWN = "not_a_parameter"
NO_DEFAULT = inspect.Parameter.empty


# --- the names, order and defaults MLX prints ----------------------------------------


class Printed(str):
    """A default as MLX's signature prints it (``float32``, ``'affine'``), not a value."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str = ""  # "" a named parameter, "*" ``*args``, "**" ``**kwargs``, "self"
    default: object = NO_DEFAULT  # MLX's: a value, or the text it prints ("float32")


def printed_params(function):
    """The parameters of ``function``'s printed signatures (several for an
    overloaded binding, in the order they first appear), without ``self``, ``/``
    and ``*``: what the probes name. Their kinds and defaults are read too, not
    the markers."""
    found = {}
    for text, _doc, *defaults in function.__nb_signature__:
        defaults = defaults[0] if defaults else None
        inside = text[text.index("(") + 1:_closing(text, text.index("("))]
        for piece in _split(inside):
            name = re.match(r"\*{0,2}\w*", piece).group()
            if name in ("", "*", "/", "self"):
                continue
            default = NO_DEFAULT
            if "=" in _top_level(piece):
                default = Printed(piece[_top_level(piece).rindex("=") + 1:].strip())
                if re.fullmatch(r"\\\d+", default):
                    default = defaults[int(default[1:])]
            kind = "**" if name.startswith("**") else "*" if name.startswith("*") else ""
            found.setdefault(name.lstrip("*"), Param(name.lstrip("*"), kind, default))
    return list(found.values())


def _closing(text, start):
    """The index of the bracket that closes the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError(f"unbalanced signature: {text}")


def _top_level(piece):
    """``piece`` with whatever sits inside brackets or quotes blanked out."""
    out, depth, quote = [], 0, None
    for ch in piece:
        if quote:
            quote = None if ch == quote else quote
            out.append(" ")
        elif ch in "'\"":
            quote = ch
            out.append(" ")
        else:
            depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
            out.append(ch if depth == 0 and ch not in ")]" else " ")
    return "".join(out)


def _split(inside):
    """The comma-separated pieces of a parameter list, commas in brackets kept."""
    blanked, pieces, start = _top_level(inside), [], 0
    for i, ch in enumerate(blanked):
        if ch == ",":
            pieces.append(inside[start:i].strip())
            start = i + 1
    pieces.append(inside[start:].strip())
    return [p for p in pieces if p]


def default_in(m, default):
    """MLX's printed default as a value of the library ``m`` (``float32`` -> ``m.float32``)."""
    if isinstance(default, Printed):
        try:
            return ast.literal_eval(default)
        except (ValueError, SyntaxError):
            return getattr(m, default.rsplit(".", 1)[-1])
    if real_mx is not None and isinstance(default, real_mx.Dtype):
        return getattr(m, str(default).rsplit(".", 1)[-1])
    return default


# --- the functions and their sample calls -------------------------------------------


def _key(m):
    return m.random.key(3)


def _exported(m, tmp):
    path = str(tmp / "double.mlxfn")
    m.export_function(path, lambda x: x * 2, m.array([1.0]))
    return path


def _saved(m, tmp):
    path = str(tmp / "a.npy")
    m.save(path, m.array([1.0, 2.0]))
    return path


# Calls for the functions that are not ops of the manual, or whose drawing has no
# sample: ``CALLS[name](m, tmp)`` calls ``m.<name>`` (``tmp``: a folder for files).
CALLS = {
    "arange": lambda m, tmp: m.arange(0, 4, 1),
    "array": lambda m, tmp: m.array([1.0, 2.0]),
    "async_eval": lambda m, tmp: m.async_eval(m.array([1.0]) + 1),
    "bartlett": lambda m, tmp: m.bartlett(4),
    "blackman": lambda m, tmp: m.blackman(4),
    "broadcast_shapes": lambda m, tmp: m.broadcast_shapes((2, 1), (3,)),
    "can_cast": lambda m, tmp: m.can_cast(m.int8, m.int32),
    "checkpoint": lambda m, tmp: m.checkpoint(m.sin),
    "compile": lambda m, tmp: m.compile(m.sin),
    "custom_function": lambda m, tmp: m.custom_function(m.sin),
    "default_stream": lambda m, tmp: m.default_stream(m.cpu),
    "Device": lambda m, tmp: m.Device(m.cpu, 0),
    "device_count": lambda m, tmp: m.device_count(m.cpu),
    "device_info": lambda m, tmp: m.device_info(m.cpu),
    "distributed.all_gather": lambda m, tmp: m.distributed.all_gather(m.array([1.0])),
    "distributed.all_max": lambda m, tmp: m.distributed.all_max(m.array([1.0])),
    "distributed.all_min": lambda m, tmp: m.distributed.all_min(m.array([1.0])),
    "distributed.all_sum": lambda m, tmp: m.distributed.all_sum(m.array([1.0])),
    "distributed.init": lambda m, tmp: m.distributed.init(False, "any"),
    "distributed.is_available": lambda m, tmp: m.distributed.is_available("any"),
    # A group of one cannot send or receive: both libraries raise ValueError
    # after binding the arguments, a TypeError before.
    "distributed.recv": lambda m, tmp: m.distributed.recv((1,), m.float32, 0),
    "distributed.recv_like": lambda m, tmp: m.distributed.recv_like(m.array([1.0]), 0),
    "distributed.send": lambda m, tmp: m.distributed.send(m.array([1.0]), 0),
    "distributed.sum_scatter": lambda m, tmp: m.distributed.sum_scatter(m.array([1.0])),
    "einsum_path": lambda m, tmp: m.einsum_path("ij,jk", m.ones((2, 2)), m.ones((2, 2))),
    "empty": lambda m, tmp: m.empty((2,)),
    "eval": lambda m, tmp: m.eval(m.array([1.0]) + 1),
    "export_function": lambda m, tmp: m.export_function(
        str(tmp / "f.mlxfn"), lambda x: x * 2, m.array([1.0])),
    "export_to_dot": lambda m, tmp: m.export_to_dot(str(tmp / "g.dot"), m.array([1.0]) + 1),
    "exporter": lambda m, tmp: m.exporter(str(tmp / "e.mlxfn"), lambda x: x * 2),
    "eye": lambda m, tmp: m.eye(2),
    # Both libraries build CUDA kernels only where there is CUDA: RuntimeError
    # after binding.
    "fast.cuda_kernel": lambda m, tmp: m.fast.cuda_kernel("k", ["a"], ["b"], "b[0] = a[0];"),
    "fast.metal_kernel": lambda m, tmp: m.fast.metal_kernel("k", ["a"], ["b"], "b[0] = a[0];"),
    "fast.precompiled_cuda_kernel": lambda m, tmp: m.fast.precompiled_cuda_kernel(
        name="k", compiled_source=b"", inputs=[m.array([1.0])], output_shapes=[(1,)],
        output_dtypes=[m.float32], scalars=[], grid=(1, 1, 1), threadgroup=(1, 1, 1)),
    "fft.fftfreq": lambda m, tmp: m.fft.fftfreq(4),
    "fft.rfftfreq": lambda m, tmp: m.fft.rfftfreq(4),
    "from_dlpack": lambda m, tmp: m.from_dlpack(numpy.ones(2, numpy.float32)),
    "finfo": lambda m, tmp: m.finfo(m.float32),
    "gather_qqmm": lambda m, tmp: m.gather_qqmm(m.ones((1, 32)), m.ones((2, 32))),
    "grad": lambda m, tmp: m.grad(m.sin),
    "hamming": lambda m, tmp: m.hamming(4),
    "hanning": lambda m, tmp: m.hanning(4),
    "identity": lambda m, tmp: m.identity(2),
    "iinfo": lambda m, tmp: m.iinfo(m.int32),
    "import_function": lambda m, tmp: m.import_function(_exported(m, tmp)),
    "is_available": lambda m, tmp: m.is_available(m.cpu),
    "isdtype": lambda m, tmp: m.isdtype(m.float32, "real floating"),
    "issubdtype": lambda m, tmp: m.issubdtype(m.float32, m.floating),
    "jvp": lambda m, tmp: m.jvp(m.sin, [m.array(1.0)], [m.array(1.0)]),
    "linspace": lambda m, tmp: m.linspace(0, 1, 3),
    "load": lambda m, tmp: m.load(_saved(m, tmp)),
    "new_stream": lambda m, tmp: m.new_stream(m.cpu),
    "new_thread_local_stream": lambda m, tmp: m.new_thread_local_stream(m.cpu),
    "new_thread_unsafe_stream": lambda m, tmp: m.new_thread_unsafe_stream(m.cpu),
    "ones": lambda m, tmp: m.ones((2,)),
    "printoptions": lambda m, tmp: m.printoptions(m.get_printoptions().precision),
    "PrintOptions": lambda m, tmp: m.PrintOptions(m.get_printoptions().precision),
    "qqmm": lambda m, tmp: m.qqmm(m.ones((1, 32)), m.ones((2, 32))),
    "random.key": lambda m, tmp: m.random.key(3),
    "random.randint": lambda m, tmp: m.random.randint(0, 5, (2,), key=_key(m)),
    "random.seed": lambda m, tmp: m.random.seed(3),
    "random.split": lambda m, tmp: m.random.split(_key(m)),
    "result_type": lambda m, tmp: m.result_type(m.array([1]), m.float32),
    "save": lambda m, tmp: m.save(str(tmp / "s.npy"), m.array([1.0])),
    "save_gguf": lambda m, tmp: m.save_gguf(str(tmp / "s.gguf"), {"a": m.array([1.0])}, {}),
    "save_safetensors": lambda m, tmp: m.save_safetensors(
        str(tmp / "s.safetensors"), {"a": m.array([1.0])}),
    "savez": lambda m, tmp: m.savez(str(tmp / "s.npz"), m.array([1.0])),
    "savez_compressed": lambda m, tmp: m.savez_compressed(str(tmp / "c.npz"), m.array([1.0])),
    # The limits are set to what they are: each call answers the previous value.
    "set_cache_limit": lambda m, tmp: m.set_cache_limit(m.set_cache_limit(0)),
    "set_default_device": lambda m, tmp: m.set_default_device(m.default_device()),
    "set_default_stream": lambda m, tmp: m.set_default_stream(m.default_stream(m.cpu)),
    "set_memory_limit": lambda m, tmp: m.set_memory_limit(m.get_memory_limit()),
    "set_printoptions": lambda m, tmp: m.set_printoptions(m.get_printoptions().precision),
    "set_wired_limit": lambda m, tmp: m.set_wired_limit(m.set_wired_limit(0)),
    "stream": lambda m, tmp: m.stream(m.cpu),
    "StreamContext": lambda m, tmp: m.StreamContext(m.cpu),
    "synchronize": lambda m, tmp: m.synchronize(m.default_stream(m.cpu)),
    "tri": lambda m, tmp: m.tri(2),
    "value_and_grad": lambda m, tmp: m.value_and_grad(m.sin),
    "vjp": lambda m, tmp: m.vjp(m.sin, [m.array(1.0)], [m.array(1.0)]),
    "vmap": lambda m, tmp: m.vmap(m.sin),
    "zeros": lambda m, tmp: m.zeros((2,)),
}

# Functions that take no argument and whose call would change what other tests
# see: they are asked only the calls that fail before they run.
NOT_RUN = {"clear_cache", "clear_streams", "disable_compile", "enable_compile",
           "reset_peak_memory"}


def resolve(m, name):
    """``m.<name>``: a function of ``m`` or a namespace, a class, or (``array.sum``)
    a method as a function of the array."""
    if name.startswith("array."):
        method = name.split(".", 1)[1]
        return lambda self, *args, **kwargs: getattr(self, method)(*args, **kwargs)
    return catalogue.resolve(m, name)


def printed(name):
    """The function whose printed signature names ``name``'s parameters."""
    target = catalogue.resolve(real_mx, name)
    return target.__init__ if inspect.isclass(target) else target


def functions():
    """Every public function, class and array method of MLX that prints a
    signature and that mlxref has too, by name."""
    if real_mx is None:
        return []
    names = []
    for space in ("",) + NAMESPACES:
        module = getattr(real_mx, space) if space else real_mx
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or not callable(value):
                continue
            full = f"{space}.{name}" if space else name
            if inspect.isclass(value) and not hasattr(value.__init__, "__nb_signature__"):
                continue
            names.append(full)
    names += [f"array.{name}" for name in sorted(dir(real_mx.array))
              if not name.startswith("_") and hasattr(getattr(real_mx.array, name),
                                                      "__nb_signature__")]
    return [n for n in names if _in_mlxref(n)]


def _in_mlxref(name):
    try:
        catalogue.resolve(mx, name)
    except AttributeError:
        return False
    return True


class _Recording:
    """``m`` (a library, or one of its namespaces) with every name passed
    through, except that the calls to ``target`` also record their arguments."""

    def __init__(self, module, target, calls, path=""):
        self._module, self._target, self._calls, self._path = module, target, calls, path

    def __getattr__(self, attr):
        value = getattr(self._module, attr)
        full = f"{self._path}.{attr}" if self._path else attr
        if full == self._target:
            def record(*args, **kwargs):
                self._calls.append((args, kwargs))
                return value(*args, **kwargs)
            return record
        if self._target.startswith(full + "."):
            return _Recording(value, self._target, self._calls, full)
        return value


def sample_arguments(m, name, tmp):
    """The (args, kwargs) of ``name``'s sample call in the library ``m``; a
    method's are its op's (the array first)."""
    if name.startswith("array."):
        op = name.split(".", 1)[1]
        if op not in CALLS and op not in _ops():  # item, tolist: the array alone
            return (m.array([1.0, 2.0]),), {}
        return sample_arguments(m, op, tmp)
    if not printed_params(printed(name)):
        return (), {}
    calls = []
    recording = _Recording(m, name, calls)
    try:
        if name in CALLS:
            CALLS[name](recording, tmp)
        else:
            sample = catalogue.sample(_ops()[name])
            sample.call(recording, *sample.inputs(recording))
    except Exception:  # noqa: BLE001 - a GPU kernel, a group of one: recorded all the same
        if not calls:
            raise
    return calls[-1]


@functools.lru_cache(maxsize=None)
def _ops():
    return {op.name: op for op in catalogue.public_ops()}


# --- the probes ------------------------------------------------------------------------


def outcome(call):
    """"ok", or the name of the exception ``call()`` raises."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the exception's type is the answer
        return type(e).__name__
    return "ok"


def accepted(result):
    """A binding refuses its arguments with TypeError; any other outcome got past it."""
    return result != "TypeError"


def parameters(name):
    """The parameters to probe: MLX's printed ones (``self`` first for a method),
    then those its twin prints (the op of a method's name, or the method of an
    op's: MLX 0.32.4's ``var`` takes ``correction`` although only the method
    prints it), then any mlxref's signature adds."""
    params = printed_params(printed(name))
    method = name.startswith("array.")
    twin = name.split(".", 1)[1] if method else f"array.{name}"
    if _in_mlx(twin):
        twins = printed_params(printed(twin))
        params += twins[1:] if method else twins  # not the op's array
    ours = getattr(mx.array, twin) if method else resolve(mx, name)
    try:
        extra = inspect.signature(ours).parameters.values()
    except (TypeError, ValueError):
        extra = []
    kinds = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    params += [Param(p.name, kinds.get(p.kind, ""), p.default) for p in extra
               if p.name != "self"]
    unique = {}
    for p in params:
        unique.setdefault(p.name, p)
    return ([Param("self", "self")] if method else []) + list(unique.values())


def _in_mlx(name):
    """Whether MLX has ``name`` as a function that prints a signature (not a property)."""
    try:
        return hasattr(catalogue.resolve(real_mx, name), "__nb_signature__")
    except AttributeError:
        return False


@dataclass
class Library:
    """One library's side of the probes: its function and the sample's arguments."""
    m: object
    function: object
    params: list  # ``parameters(name)``
    values: dict  # parameter name -> the sample's value
    positional: list  # the parameters the sample gives by position
    varargs: tuple  # the sample's arguments beyond the named ones (``*args``)
    extras: dict  # the sample's keywords that name no parameter (``**kwargs``)

    def value(self, param):
        return self.values[param.name] if param.name in self.values else default_in(
            self.m, param.default)

    def call(self, positional, keywords, more=None):
        """Call the function with ``positional`` (parameters) by position, then,
        if they are all those before ``*args``, the sample's extra arguments;
        ``keywords`` by name, and the sample's extra keywords and ``more``."""
        args = [self.value(p) for p in positional]
        if positional == leading(self.params):
            args += self.varargs
        kwargs = {p.name: self.value(p) for p in keywords}
        kwargs.update(self.extras)
        kwargs.update(more or {})
        return outcome(lambda: self.function(*args, **kwargs))


def leading(params):
    """The named parameters before ``*args`` (all of them without one)."""
    star = next((i for i, p in enumerate(params) if p.kind == "*"), len(params))
    return [p for p in params[:star] if p.kind in ("", "self")]


def library(m, name, params, tmp):
    """``name``'s side in the library ``m``, its sample call's arguments sorted
    out by ``params``."""
    args, kwargs = sample_arguments(m, name, tmp)
    before = leading(params)
    if len(args) > len(before) and not any(p.kind == "*" for p in params):
        raise AssertionError(f"{name}: the sample passes more arguments than MLX prints")
    positional = before[:len(args)]
    named = {p.name for p in params if p.kind in ("", "self")}
    values = {p.name: v for p, v in zip(positional, args)}
    values.update((k, v) for k, v in kwargs.items() if k in named)
    return Library(m, resolve(m, name), params, values, positional,
                   tuple(args[len(before):]),
                   {k: v for k, v in kwargs.items() if k not in named})


def probe(name, tmp):
    """[(probe, MLX's outcome, mlxref's outcome)] for every probe of ``name``.

    The probes start from the sample call, which gives some parameters by
    position (the first ones) and some by keyword. A parameter it gives by
    position is asked by keyword with the later ones by keyword too; one it
    gives by keyword, or not at all, is asked by position with the parameters
    between filled in (by position, so only when MLX took each of them so).
    """
    params = parameters(name)
    (tmp / "mlx").mkdir()
    (tmp / "mlxref").mkdir()
    theirs = library(real_mx, name, params, tmp / "mlx")
    ours = library(mx, name, params, tmp / "mlxref")
    assert (ours.positional, sorted(ours.values)) == (theirs.positional, sorted(theirs.values))
    before = leading(params)
    positional = theirs.positional
    keywords = [p for p in params if p.name in theirs.values and p not in positional]
    rows, by_position = [], {p.name: True for p in positional}

    def ask(label, positional, keywords, more=None):
        result = (theirs.call(positional, keywords, more),
                  ours.call(positional, keywords, more))
        rows.append((label, *result))
        return result[0]

    if name not in NOT_RUN:
        ask("sample", positional, keywords)
    ask(f"{UNKNOWN}=", positional, keywords, {UNKNOWN: 1})
    for param in params:
        if param.kind != "" or (param.name not in theirs.values
                                and param.default is NO_DEFAULT):
            continue
        # With extra positional arguments (``*args``) in the sample, the
        # parameters before them can only be given by position, as it does.
        if param in positional:
            if not theirs.varargs:
                k = positional.index(param)
                later = positional[k + 1:] + keywords
                ask(f"{param.name}: keyword", positional[:k], later + [param])
                ask(f"{param.name}: left out", positional[:k], later)
            continue
        others = [p for p in keywords if p is not param]
        ask(f"{param.name}: keyword", positional, others + [param])
        if param in keywords:
            ask(f"{param.name}: left out", positional, others)
        between = before[len(positional):before.index(param)] if param in before else None
        if between is not None and all(by_position.get(p.name) for p in between):
            by_position[param.name] = accepted(ask(
                f"{param.name}: position", positional + between + [param],
                [p for p in others if p not in between]))
    return rows


@pytest.mark.parametrize("name", functions())
def test_mlxref_takes_the_arguments_mlx_takes(name, tmp_path):
    rows = probe(name, tmp_path)
    assert all(accepted(theirs) for label, theirs, _ in rows if label == "sample"), (
        f"{name}: MLX refuses the sample call, so the probes would ask nothing")
    differ = [f"  {label}: MLX {theirs}, mlxref {ours}" for label, theirs, ours in rows
              if accepted(theirs) != accepted(ours)]
    assert not differ, f"{name}:\n" + "\n".join(differ)


# MLX 0.32.4's ``var`` and ``std`` (and the methods) take ``correction``, an int
# that replaces ``ddof`` when given (``a.var(correction=2, ddof=1)`` divides by n - 2).
CORRECTIONS = [{"correction": 1}, {"correction": 0, "ddof": 1}, {"correction": 2, "ddof": 1},
               {"correction": True}, {"correction": None, "ddof": 1}, {"correction": 1.5}]


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("given", CORRECTIONS, ids=str)
def test_correction_is_the_count_subtracted_as_in_mlx(given, op, method):
    outcomes, arrays = [], []
    for m in (mx, real_mx):
        a = m.array([[1.0, 2.0, 4.0, 7.0], [0.5, 3.0, 3.5, 9.0]])
        function = getattr(a, op) if method else functools.partial(getattr(m, op), a)
        outcomes.append(outcome(lambda: arrays.append(function(axis=1, **given))))
    assert outcomes[0] == outcomes[1]
    if outcomes[1] == "ok":
        assert_same_as_mlx(*arrays)
