"""``mx.export_function``, ``mx.exporter`` and ``mx.import_function``.

Read alongside: mlx/export.cpp (``FunctionExporter``, ``FunctionTable``,
``ImportedFunction``, ``PrimitiveFactory``: the same steps under the same
names), mlx/export.h (the callback's dictionaries) and python/src/export.cpp
(``validate_and_extract_inputs``: how the arrays may be passed);
``mx.export_to_dot`` is in ../graph_utils.py, as in MLX. Tracing is
compile's (compile.py): ``compile_trace`` (placeholders for the inputs,
``compile_dfs`` for the tape), ``compile_simplify`` (no fusion, as in MLX), and an imported trace is
replayed with ``compile_replace``. A primitive is written as its class name
and ``Primitive.state()`` (primitives/base.py) and rebuilt by that class's
``from_state``. What MLX hands Python from its C++ hash maps comes in their
order (../unordered_map.py): the callback's records, the keyword arrays the
traced function receives (from a map MLX fills in sorted order), the keyword
arrays an import error lists, and the traces it lists (a map from their
number of inputs).

The file: mlxref's own format, not MLX's binary one (a file written by MLX
is refused with an error saying so). It is one JSON document, written with a
fixed key order and one node per line, so exporting the same function twice
gives byte-identical files:

    {"format": "mlxref.export", "version": 1, "mlxref_version": "0.1.0",
     "shapeless": false, "metadata": "",
     "constants": [{"shape": [2], "dtype": "float32", "elements": [1.0, 2.0]},
                   {"shape": [16, 2048], "dtype": "float32", "runs": [[0.0, 32768]]}],
     "functions": [
      {"kwarg_keys": ["z"],
       "inputs": [{"shape": [3], "dtype": "int32"}, {"shape": [3], "dtype": "int32"}],
       "nodes": [
        {"primitive": "Add", "state": {}, "inputs": [["input", 0], ["input", 1]],
         "outputs": [{"shape": [3], "dtype": "int32"}]}],
       "outputs": [["node", 0, 0]]}]}

- ``constants`` are shared by the functions (a large weight is stored once);
  their elements are listed in row-major order, or as ``runs`` of
  ``[value, count]`` when that is less than half as long.
- a function's ``inputs`` are its positional inputs, then its keyword inputs
  in the order of ``kwarg_keys`` (sorted, as MLX sorts them).
- a reference is ``["input", k]``, ``["constant", k]`` or
  ``["node", n, position]`` (output ``position`` of node ``n``); a node only
  refers to nodes before it.
- a value (a state's or an element) is JSON's null, bool, int, float or
  string, a list for a tuple, ``{"dtype": "float32"}`` for a dtype,
  ``{"float": "nan"}`` (or ``"inf"``, ``"-inf"``) and ``{"complex": [re, im]}``.

``version`` changes whenever a file of the previous version would be read
differently; ``import_function`` refuses any other version.
"""

import json
import os

from ... import __version__
from .. import dtypes as _dt
from ..array import array, from_data
from ..graph_utils import node_name
from ..ops.common import check_callable, incompatible_argument
from ..primitives.base import Primitive
from ..unordered_map import int_hash, iteration_order, reordered
from .compile import (
    CacheEntry,
    TapeNode,
    TapeValue,
    compile_replace,
    compile_simplify,
    compile_trace,
)
from .tape import InExportTracing

FORMAT = "mlxref.export"
VERSION = 1

# Primitives that hold Python functions or other primitives: no state to write.
_NOT_EXPORTABLE = ("Compiled", "CustomTransforms", "Load", "AllGather", "AllReduce",
                   "ReduceScatter", "Recv", "Send")  # MLX's export knows no collective


# --- the arguments (python/src/export.cpp) ---------------------------------------------


def _is_arrays(obj):
    return isinstance(obj, (list, tuple)) and all(isinstance(x, array) for x in obj)


def _is_keyword_arrays(obj):
    return isinstance(obj, dict) and all(
        isinstance(k, str) and isinstance(v, array) for k, v in obj.items())


def validate_and_extract_inputs(args, kwargs, prefix):
    """``(positional arrays, keyword arrays)`` from ``*args, **kwargs`` given either
    as arrays or as one tuple/list of arrays and/or one dict of arrays."""
    if not args:
        ok = _is_keyword_arrays(kwargs)
        args_, kwargs_ = [], kwargs
    elif isinstance(args[0], array):
        ok = _is_arrays(args) and _is_keyword_arrays(kwargs)
        args_, kwargs_ = list(args), kwargs
    elif len(args) == 1:
        ok = not kwargs and (_is_arrays(args[0]) or _is_keyword_arrays(args[0]))
        args_, kwargs_ = (list(args[0]), {}) if _is_arrays(args[0]) else ([], args[0])
    elif len(args) == 2:
        ok = not kwargs and _is_arrays(args[0]) and _is_keyword_arrays(args[1])
        args_, kwargs_ = list(args[0]) if ok else [], args[1]
    else:
        ok = False
    if not ok:
        raise ValueError(f"{prefix} Inputs can either be a variable number of positional and "
                         "keyword arrays or a single tuple and/or dictionary of arrays.")
    return args_, dict(kwargs_)


def _check_outputs(outputs):
    if not (isinstance(outputs, array) or _is_arrays(outputs)):
        raise ValueError("[export_function] Outputs can be either a single array, "
                     "a tuple, or a list of arrays.")


# --- the function table --------------------------------------------------------------------


class _Function:
    """One trace: MLX's ``FunctionTable::Function`` (inputs are a CacheEntry's)."""

    def __init__(self, kwarg_keys, entry):
        self.kwarg_keys, self.entry = kwarg_keys, entry


class FunctionTable:
    """The traces of one function, found by their inputs (MLX's ``FunctionTable``)."""

    def __init__(self, shapeless=False):
        self.shapeless = shapeless
        self.functions = []  # in the order they were traced

    def find(self, args, kwargs):
        return next((f for f in self.functions if self._match(args, kwargs, f)), None)

    def _match(self, args, kwargs, fun):
        if len(args) + len(kwargs) != len(fun.entry.shapes):
            return False
        if any(k not in kwargs for k in fun.kwarg_keys):
            return False
        given = list(args) + [kwargs[k] for k in sorted(kwargs)]
        return all(x.dtype is d and x.ndim == len(s) and (self.shapeless or x.shape == s)
                   for x, s, d in zip(given, fun.entry.shapes, fun.entry.dtypes))

    def describe(self):
        # MLX keeps the traces in a map from their number of inputs to a list,
        # and lists them in that map's order (mlxref/core/unordered_map.py).
        sizes = iteration_order([len(f.entry.shapes) for f in self.functions], hash=int_hash)
        listed = [f for size in sizes for f in self.functions if len(f.entry.shapes) == size]
        lines = []
        for n, fun in enumerate(listed, 1):
            npos = len(fun.entry.shapes) - len(fun.kwarg_keys)
            lines.append(f" {n}. Function with {npos} positional inputs and "
                         f"{len(fun.kwarg_keys)} keyword inputs:")
            for j, (s, d) in enumerate(zip(fun.entry.shapes, fun.entry.dtypes)):
                label = f"{j + 1}" if j < npos else f'"{fun.kwarg_keys[j - npos]}"'
                lines.append(f"   {label}: {_shape_text(s)} {d.name}")
        return "\n".join(lines)


def _shape_text(shape):
    return "(" + ",".join(str(n) for n in shape) + ")"


# --- export -----------------------------------------------------------------------------------


class FunctionExporter:
    """Export several traces of one function to one file (``mx.exporter``), or
    give each to a callback (``mx.export_function(callback, ...)``)."""

    def __init__(self, file_or_callback, fun, shapeless=False, metadata=""):
        self._file, self._callback = None, None
        if isinstance(file_or_callback, (str, os.PathLike)):
            self._file = os.fspath(file_or_callback)
        else:
            self._callback = file_or_callback
        self._fun = fun
        self._table = FunctionTable(shapeless)
        self._metadata = metadata
        self._constants = {}  # array id -> (index, array): shared by the traces
        self._closed = False
        self._traces = []
        if self._file is not None:
            self._write()

    def close(self):
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type=None, exc_value=None, traceback=None):
        self.close()

    def __call__(self, *args, **kwargs):
        args, kwargs = validate_and_extract_inputs(args, kwargs, "[export_function]")
        self.export_function(args, kwargs)

    def export_function(self, args, kwargs):
        if self._closed:
            raise RuntimeError("[export_function] Attempting to write after exporting is closed.")
        if self._table.find(args, kwargs) is not None:
            raise RuntimeError("[export_function] Attempting to export a function twice with "
                               "the same signature is not allowed.")
        keys = sorted(kwargs)
        # compile's trace (keyword arrays after the positional ones, by name),
        # simplified but not fused, as MLX's export. MLX passes the keyword
        # arrays to the function from a map it fills in that sorted order, so
        # the function sees them in the map's order.
        fun = self._fun

        def call(*args, **kwargs):
            return fun(*args, **reordered(kwargs))

        with InExportTracing():  # a Metal kernel is recorded, not refused (fast.py)
            entry = compile_trace(call, tuple(args), {k: kwargs[k] for k in keys},
                                  self._table.shapeless)
        _check_outputs(entry.structure)
        compile_simplify(entry)
        self._table.functions.append(_Function(keys, entry))
        if self._callback is not None:
            self._export_with_callback(entry, keys)
            return
        self._traces.append(self._describe(entry, keys))
        self._write()

    # the file

    def _constant(self, a):
        """The index of constant ``a`` in the file's table (added once)."""
        if a.id() not in self._constants:
            self._constants[a.id()] = (len(self._constants), a)
        return self._constants[a.id()][0]

    def _describe(self, entry, keys):
        refs = {id(v): ["input", k] for k, v in enumerate(entry.inputs)}

        def ref(v):
            if v.array is not None:
                return ["constant", self._constant(v.array)]
            return refs[id(v)]

        nodes = []
        for n, node in enumerate(entry.tape):
            nodes.append({"primitive": _primitive_name(node.primitive),
                          "state": {k: encode(v) for k, v in node.primitive.state().items()},
                          "inputs": [ref(x) for x in node.inputs],
                          "outputs": [_aval(o) for o in node.outputs]})
            for i, o in enumerate(node.outputs):
                refs[id(o)] = ["node", n, i]
        return {"kwarg_keys": keys, "inputs": [_aval(v) for v in entry.inputs],
                "nodes": nodes, "outputs": [ref(v) for v in entry.outputs]}

    def _write(self):
        header = {"format": FORMAT, "version": VERSION, "mlxref_version": __version__,
                  "shapeless": self._table.shapeless, "metadata": self._metadata}
        constants = [_constant_json(a) for _, a in self._constants.values()]
        text = _dumps(header, constants, self._traces)
        try:
            with open(self._file, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise RuntimeError(f"[export_function] Failed to open {self._file}") from e

    # the callback (MLX's export_with_callback)

    def _export_with_callback(self, entry, keys):
        # Each record is a C++ map, filled "type" first: the callback gets its
        # keys in the map's order (mlxref/core/unordered_map.py).
        def record(**fields):
            self._callback(reordered(fields))

        names = {}

        def name(v):
            return names.setdefault(id(v), node_name(len(names)))

        def data(values):
            return [(name(v), v.shape, v.dtype) for v in values]

        inputs = entry.inputs
        record(type="inputs", inputs=data(inputs))
        npos = len(inputs) - len(keys)
        record(type="keyword_inputs",
               keywords=[(k, name(v)) for k, v in zip(keys, inputs[npos:])])
        record(type="outputs", outputs=data(entry.outputs))
        constants = []
        for node in entry.tape:
            for v in node.inputs:
                if v.array is not None and v.array.id() not in self._constants:
                    self._constant(v.array)
                    constants.append((name(v), v.array))
        record(type="constants", constants=constants)
        for node in entry.tape:
            record(type="primitive", inputs=data(node.inputs), outputs=data(node.outputs),
                   name=node.primitive.mlx_name or _primitive_name(node.primitive),
                   arguments=node.primitive.mlx_state())


def _primitive_name(primitive):
    name = type(primitive).__name__
    if name in _NOT_EXPORTABLE:
        raise ValueError(f"[export_function] Unable to serialize primitive {name}")
    return name


def _aval(v):
    return {"shape": list(v.shape), "dtype": v.dtype.name}


def _check_metadata(metadata):
    if metadata is not None and not isinstance(metadata, str):
        raise TypeError("[export_function] metadata must be a string or None, "
                        f"not {type(metadata).__name__}.")
    return metadata or ""


def exporter(file, fun, *, shapeless=False, metadata=None):
    """An object that exports each call's trace of ``fun`` to ``file``:

    >>> import os, tempfile
    >>> import mlxref.core as mx
    >>> path = os.path.join(tempfile.mkdtemp(), "sum.mlxfn")
    >>> with mx.exporter(path, lambda *xs: sum(xs)) as ex:
    ...     ex(mx.array(1))
    ...     ex(mx.array(1), mx.array(2))
    >>> mx.import_function(path)(mx.array(3), mx.array(4))[0].item()
    7
    """
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"[exporter] file must be a path, not {type(file).__name__}.")
    check_callable(fun, "exporter")
    return FunctionExporter(file, fun, shapeless, _check_metadata(metadata))


def export_function(file_or_callback, fun, *args, shapeless=False, metadata=None, **kwargs):
    """Trace ``fun`` on the example arrays and write the trace to a file (or give
    it to a callback); ``import_function`` loads it back."""
    check_callable(fun, "export_function")
    metadata = _check_metadata(metadata)
    args_, kwargs_ = validate_and_extract_inputs(args, kwargs, "[export_function]")
    if not isinstance(file_or_callback, (str, os.PathLike)):
        if file_or_callback is None:
            raise incompatible_argument("export_function", "file_or_callback",
                                        "a path or a callable", None)
        if not callable(file_or_callback):  # MLX: a bare "std::bad_cast"
            raise RuntimeError("[export_function] file_or_callback must be a path or a "
                               f"callable, not {type(file_or_callback).__name__}.")
        if metadata:
            raise ValueError("[export_function] The metadata argument is only supported when "
                             "exporting to a file, not when using a callback.")
    FunctionExporter(file_or_callback, fun, shapeless, metadata).export_function(args_, kwargs_)


# --- values and the file's text ---------------------------------------------------------------


def encode(value):
    """A state value or an element as JSON (the module docstring lists the forms)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value - value == 0 else {"float": repr(value)}
    if isinstance(value, complex):
        return {"complex": [encode(value.real), encode(value.imag)]}
    if isinstance(value, _dt.Dtype):
        return {"dtype": value.name}
    if isinstance(value, tuple):
        return [encode(x) for x in value]
    raise ValueError(f"[export_function] Cannot write the value {value!r} "
                     f"of type {type(value).__name__}.")


def decode(obj):
    """``encode``'s inverse (lists become tuples)."""
    if isinstance(obj, list):
        return tuple(decode(x) for x in obj)
    if isinstance(obj, dict):
        (kind, v), = obj.items()
        if kind == "float":
            return float(v)
        if kind == "complex":
            return complex(decode(v[0]), decode(v[1]))
        if kind == "dtype":
            return _dt.by_name(v)
        raise ValueError(f"unknown value {obj!r}")
    return obj


def _constant_json(a):
    elements = [encode(x) for x in a.data()]
    runs = []
    for x in elements:
        if runs and runs[-1][0] == x and type(runs[-1][0]) is type(x):
            runs[-1][1] += 1
        else:
            runs.append([x, 1])
    body = {"runs": runs} if 2 * len(runs) < len(elements) else {"elements": elements}
    return {"shape": list(a.shape), "dtype": a.dtype.name, **body}


def _dumps(header, constants, functions):
    def one(obj):
        return json.dumps(obj, ensure_ascii=False, allow_nan=False)

    lines = ["{" + one(header)[1:-1] + ","]
    lines.append(' "constants": [' + ",\n  ".join(one(c) for c in constants) + "],")
    lines.append(' "functions": [')
    for k, f in enumerate(functions):
        lines.append('  {"kwarg_keys": ' + one(f["kwarg_keys"]) + ",")
        lines.append('   "inputs": ' + one(f["inputs"]) + ",")
        lines.append('   "nodes": [' + ",\n    ".join(one(n) for n in f["nodes"]) + "],")
        lines.append('   "outputs": ' + one(f["outputs"]) + "}"
                     + ("," if k + 1 < len(functions) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


# --- import ------------------------------------------------------------------------------------


class ImportedFunction:
    """A function loaded by ``import_function``: call it with arrays as the
    exported function was called; it returns a tuple of arrays."""

    def __init__(self, table, metadata, file):
        self._table, self.metadata, self.file = table, metadata, file

    def __repr__(self):
        return f"<imported function from {self.file!r}>"

    def __call__(self, *args, **kwargs):
        args, kwargs = validate_and_extract_inputs(args, kwargs, "[import_function::call]")
        fun = self._table.find(args, kwargs)
        if fun is None:
            given = [f"  {i + 1}: {_shape_text(x.shape)} {x.dtype.name}"
                     for i, x in enumerate(args)]
            given += [f'  "{k}": {_shape_text(x.shape)} {x.dtype.name}'
                      for k, x in reordered(kwargs).items()]  # MLX's map of them
            raise ValueError(
                "[import_function::call] No imported function found which matches the given "
                "positional and keyword arguments. Possible functions include:\n"
                + self._table.describe() + f"\n\nCalled with {len(args)} positional inputs "
                f"and {len(kwargs)} keyword inputs:\n" + "".join(g + "\n" for g in given))
        inputs = list(args) + [kwargs[k] for k in sorted(kwargs)]
        return tuple(compile_replace(fun.entry, inputs))


def import_function(file, return_metadata=False):
    """Load a function written by ``export_function`` (or ``exporter``); with
    ``return_metadata``, ``(function, metadata string)``."""
    if not isinstance(file, (str, os.PathLike)):
        raise incompatible_argument("import_function", "file", "a path", file)
    path = os.fspath(file)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise RuntimeError(f"[import_function] Failed to open {path}") from e
    version = _mlx_binary_version(raw)
    if version is not None:
        raise ValueError(f"[import_function] {path} was written by MLX {version} in MLX's "
                         "binary format, which mlxref does not read; mlxref reads the JSON "
                         "files its own export_function writes.")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"[import_function] {path} is not an mlxref export (a JSON file "
                         f"of format {FORMAT!r}; files in MLX's binary format cannot be "
                         f"read): {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"[import_function] {path} is not an mlxref export: its format "
                         f"is not {FORMAT!r}.")
    if doc.get("version") != VERSION:
        raise ValueError(f"[import_function] {path} has format version "
                         f"{doc.get('version')!r}; this mlxref reads version {VERSION}.")
    try:
        table = _read(doc)
        metadata = doc["metadata"]
        if not isinstance(metadata, str):
            raise TypeError("metadata is not a string")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise ValueError(f"[import_function] {path} is damaged: "
                         f"{type(e).__name__}: {e}") from None
    fun = ImportedFunction(table, metadata, path)
    return (fun, metadata) if return_metadata else fun


def _mlx_binary_version(raw):
    """The MLX version heading a file in MLX's binary format (a little-endian
    64-bit length, then the version string), or None."""
    if len(raw) < 8:
        return None
    n = int.from_bytes(raw[:8], "little")
    version = raw[8:8 + n].decode("ascii", "replace") if 0 < n < 64 else ""
    parts = version.split(".")
    if len(parts) >= 3 and all(part[:1].isdigit() for part in parts):
        return version
    return None


def _read(doc):
    constants = [_constant_array(c) for c in doc["constants"]]
    table = FunctionTable(bool(doc["shapeless"]))
    for f in doc["functions"]:
        avals = [(tuple(x["shape"]), _dt.by_name(x["dtype"])) for x in f["inputs"]]
        entry = CacheEntry(table.shapeless, [_Aval(s, d) for s, d in avals], ())
        entry.inputs = [TapeValue(s, d, index=k) for k, (s, d) in enumerate(avals)]
        entry.tape = []
        for n in f["nodes"]:
            cls = _primitive_class(n["primitive"])
            primitive = cls.from_state({k: decode(v) for k, v in n["state"].items()})
            entry.tape.append(TapeNode(primitive,
                                       [_value(r, entry, constants) for r in n["inputs"]],
                                       [tuple(o["shape"]) for o in n["outputs"]],
                                       [_dt.by_name(o["dtype"]) for o in n["outputs"]]))
        entry.outputs = [_value(r, entry, constants) for r in f["outputs"]]
        keys = list(f["kwarg_keys"])
        if len(keys) > len(avals) or not all(isinstance(k, str) for k in keys):
            raise ValueError("bad kwarg_keys")
        table.functions.append(_Function(keys, entry))
    return table


def _value(ref, entry, constants):
    """The TapeValue a reference names, in the trace read so far."""
    kind = ref[0]
    if kind == "input":
        return entry.inputs[ref[1]]
    if kind == "constant":
        a = constants[ref[1]]
        return TapeValue(a.shape, a.dtype, array=a)
    if kind == "node" and 0 <= ref[1] < len(entry.tape):
        return entry.tape[ref[1]].outputs[ref[2]]
    raise ValueError(f"bad reference {ref!r}")


class _Aval:
    """A shape and a dtype (what ``CacheEntry`` reads of its inputs)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _constant_array(c):
    shape, dtype = tuple(c["shape"]), _dt.by_name(c["dtype"])
    if "runs" in c:
        elements = [decode(x) for x, n in c["runs"] for _ in range(n)]
    else:
        elements = [decode(x) for x in c["elements"]]
    size = 1
    for n in shape:
        size *= n
    if len(elements) != size:
        raise ValueError(f"a constant of shape {shape} has {len(elements)} elements")
    return from_data(dtype.store(elements), shape, dtype)


def primitive_classes():
    """Every Primitive subclass by class name (the names are unique)."""
    found, stack = {}, [Primitive]
    while stack:
        for sub in stack.pop().__subclasses__():
            found[sub.__name__] = sub
            stack.append(sub)
    return found


def _primitive_class(name):
    cls = primitive_classes().get(name)
    if cls is None or name in _NOT_EXPORTABLE:
        raise ValueError(f"[import_function] Unable to deserialize primitive {name}")
    return cls
