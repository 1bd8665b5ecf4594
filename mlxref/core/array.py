"""The array: a handle to a descriptor holding a shape, a dtype, and either its
elements or how to compute them.

Read alongside: mlx/array.h and mlx/array.cpp. As in MLX, an ``array`` is a
small handle that points at an ``ArrayDesc``: the shape, the dtype, the data
or the node (primitive, inputs, siblings) and the tracer flag. Copying a handle
(``copy.copy(a)``, a node keeping its input) shares the descriptor; ``a[i] = v``
points ``a`` at a new descriptor (``overwrite_descriptor``), so arrays built
from ``a`` earlier keep its old value.

Elements live in one flat Python list in row-major order; a 0-d array holds a
one-element list. There is no global graph: a node simply refers to its
primitive and its input arrays. The node is read through MLX's public methods
(``inputs()``, ``primitive()``, ``siblings()``, ``outputs()``, ``id()``...);
nodes are built by ``make_arrays`` in ``primitives/base.py``. Operators and
methods call the functions in ``mlxref.core.ops``.
"""

import itertools
import math

from . import dtypes as _dt
from . import graph
from .scalar import is_symbolic

_creation_order = itertools.count(1)


def _parse_nested(value):
    """Flatten a nested list/tuple of Python scalars: (flat, shape, dtype)."""
    if isinstance(value, (list, tuple)):
        flat = []
        shape = _shape_of(value, (), flat)
    else:
        flat, shape = [value], ()
    kinds = set()
    for v in flat:
        if isinstance(v, bool):
            kinds.add(_dt.bool_)
        elif isinstance(v, int):
            kinds.add(_dt.int32 if -(2**31) <= v < 2**31 else _int64_dtype(v))
        elif isinstance(v, float) or is_symbolic(v):
            kinds.add(_dt.float32)
        elif isinstance(v, complex):
            kinds.add(_dt.complex64)
        else:
            raise TypeError(
                f"Invalid type {type(v).__name__} received in array initialization: {v!r}."
            )
    if not kinds:  # an empty list is float32, as in MLX
        return flat, shape, _dt.float32
    dtype = _dt.bool_
    for k in kinds:
        dtype = _dt.promote_types(dtype, k)
    return flat, shape, dtype


def _int64_dtype(v, op="array"):
    """int64 for a Python int that fits in it; else a clear error (MLX: std::bad_cast)."""
    if not -(2**63) <= v < 2**63:
        shown = v if v.bit_length() <= 128 else f"of {v.bit_length()} bits"
        raise RuntimeError(
            f"[{op}] The Python integer {shown} does not fit in int64, the widest "
            "integer MLX converts a Python int through (MLX itself raises "
            "RuntimeError: std::bad_cast)."
        )
    return _dt.int64


def _check_list_ints(flat, dtype):
    """MLX converts each Python int of a *list* to a C type before the dtype's
    own (wrapping) conversion: uint32 and the 64-bit types to their own range,
    the narrower types and bool to int32's. A scalar only has to fit int64."""
    low, high = {_dt.uint32: (0, 2**32), _dt.uint64: (0, 2**63),
                 _dt.int64: (-(2**63), 2**63)}.get(dtype, (-(2**31), 2**31))
    for v in flat:
        if type(v) is int and not low <= v < high:
            raise RuntimeError(
                f"[array] The Python integer {v} in the list is out of the range "
                f"[{low}, {high}) that MLX converts a list element of an {dtype.name} "
                "array through (MLX itself raises RuntimeError: std::bad_cast)."
            )


def _shape_of(value, where, flat):
    """Shape of a nested list, appending its scalars to ``flat``; checks raggedness."""
    first = ()
    for i, v in enumerate(value):
        if isinstance(v, (list, tuple)):
            s = _shape_of(v, where + (i,), flat)
        else:
            flat.append(v)
            s = ()
        if i == 0:
            first = s
        elif s != first:
            here = "".join(f"[{j}]" for j in where + (i,))
            there = "".join(f"[{j}]" for j in where + (0,))
            raise ValueError(
                "Initialization encountered non-uniform length: "
                f"element {here} has shape {_fmt_shape(s)} but element "
                f"{there} has shape {_fmt_shape(first)}."
            )
    return (len(value),) + first


def _fmt_shape(shape):
    """MLX writes shapes as (2,3) and (4)."""
    return "(" + ",".join(str(d) for d in shape) + ")"


class _ArrayDesc:
    """MLX's ``ArrayDesc``: what one or more array handles point at.

    ``data`` is the flat element list once evaluated; until then ``primitive``
    and ``inputs`` say how to compute it. The outputs of one multi-output
    primitive are ``siblings`` of each other, at their ``position``.
    """

    __slots__ = ("shape", "dtype", "data", "primitive", "inputs", "siblings",
                 "position", "is_tracer", "id")

    def __init__(self, shape, dtype, primitive=None, inputs=()):
        self.shape, self.dtype = tuple(shape), dtype
        self.data = None
        self.primitive = primitive
        # A node keeps its own handle of each input, as MLX keeps arrays by
        # value, and a node built from a tracer is a tracer (MLX's
        # ArrayDesc::init). One plain loop: it runs for every node built.
        handles, is_tracer = [], False
        for x in inputs:
            handles.append(x._handle())
            is_tracer = is_tracer or x._desc.is_tracer
        self.inputs = tuple(handles)
        self.is_tracer = is_tracer
        self.siblings, self.position = (), 0
        self.id = next(_creation_order)

    def __del__(self):
        if self.data is not None:
            graph.free(self.data)


class array:
    """``mx.array(val, dtype=None)``: an array from a scalar, nested lists or an array."""

    __slots__ = ("_desc", "__weakref__")

    def __init__(self, val, dtype=None):
        if dtype is not None and not isinstance(dtype, _dt.Dtype):
            raise TypeError(f"[array] dtype must be an mlx.core.Dtype, got {dtype!r}.")
        if isinstance(val, (list, tuple)) and any(isinstance(v, array) for v in val):
            # MLX stacks a list of arrays (lazily).
            val = ops.stack([v if isinstance(v, array) else array(v) for v in val])
        if isinstance(val, array):
            # MLX's mx.array(a) is astype(a, dtype): a's own descriptor when the
            # dtype does not change, else a lazy cast.
            self._desc = ops.astype(val, dtype or val.dtype)._desc
            return
        if val is None or isinstance(val, (str, bytes, dict, set)):
            raise TypeError(
                f"Invalid type {type(val).__name__} received in array initialization: {val!r}."
            )
        flat, shape, inferred = _parse_nested(val)
        if dtype is not None and shape and (dtype.is_integer or dtype is _dt.bool_):
            _check_list_ints(flat, dtype)
        dtype = dtype or inferred
        self._desc = _ArrayDesc(shape, dtype)
        self._set_data(dtype.store(_dt.convert(flat, None, dtype)))

    # --- construction inside the engine (not MLX's Python API) -------------------

    def _handle(self):
        """A new handle to this array's descriptor (MLX copies an ``array``)."""
        a = array.__new__(array)
        a._desc = self._desc
        return a

    @classmethod
    def _from_data(cls, data, shape, dtype):
        """A materialised array from a flat list (trusted: no checks)."""
        a = _handle_of(_ArrayDesc(shape, dtype))
        a._set_data(data)
        return a

    @classmethod
    def _node(cls, shapes, dtypes, primitive, inputs):
        """The unevaluated outputs of ``primitive`` on ``inputs``; called by ``make_arrays``."""
        if len(shapes) == 1:
            return [_handle_of(_ArrayDesc(shapes[0], dtypes[0], primitive, inputs))]
        outputs = [_handle_of(_ArrayDesc(s, d, primitive, inputs))
                   for s, d in zip(shapes, dtypes)]
        for i, o in enumerate(outputs):
            o._desc.siblings = tuple(outputs[:i] + outputs[i + 1:])
            o._desc.position = i
        return outputs

    @classmethod
    def _placeholder(cls, shape, dtype):
        """An array with neither data nor primitive (vmap's traced inputs, MLX's
        ``array(shape, dtype, nullptr, {})``)."""
        a = _handle_of(_ArrayDesc(shape, dtype))
        a._desc.is_tracer = True
        return a

    def _set_data(self, data):
        self._desc.data = data
        graph.allocate(data, len(data) * self._desc.dtype.size)

    # --- the node, as mlx/array.h exposes it -----------------------------------

    def id(self):
        """A number unique to this array's descriptor, increasing in creation order."""
        return self._desc.id

    def data(self):
        """The elements as stored (a flat list; never mutate it), or None before eval."""
        return self._desc.data

    def primitive(self):
        """The primitive that computes this array, or None (data, or a vmap placeholder)."""
        return self._desc.primitive

    def has_primitive(self):
        return self._desc.primitive is not None

    def inputs(self):
        """The arrays this array's primitive reads, in argument order."""
        return self._desc.inputs

    def siblings(self):
        """The other outputs of this array's primitive (MLX's ``siblings()``)."""
        return self._desc.siblings

    def outputs(self):
        """All outputs of this array's primitive in order, this one among them."""
        d = self._desc
        if not d.siblings:
            return (self,)
        return d.siblings[: d.position] + (self,) + d.siblings[d.position :]

    def is_available(self):
        """Has this array been evaluated (MLX's name: its data is available)?"""
        return self._desc.data is not None

    def is_tracer(self):
        """Is the array being traced by a transform (so evaluation keeps its graph)?"""
        return (self._desc.is_tracer and graph.in_tracing()) or graph.retain_graph()

    def set_tracer(self, is_tracer):
        self._desc.is_tracer = is_tracer

    def detach(self):
        """Drop the graph behind an evaluated array (MLX's ``array::detach``)."""
        d = self._desc
        d.primitive, d.inputs, d.siblings, d.position = None, (), (), 0

    def overwrite_descriptor(self, other):
        """Point this handle at ``other``'s descriptor (what ``a[i] = v`` does)."""
        self._desc = other._desc

    def __copy__(self):
        return self._handle()  # as in MLX: the same descriptor, lazily shared

    def __deepcopy__(self, memo):
        return self._handle()

    def _eval(self):
        if self._desc.data is None:
            graph.eval_arrays([self])
        return self._desc.data

    @property
    def shape(self):
        return self._desc.shape

    @property
    def ndim(self):
        return len(self._desc.shape)

    @property
    def size(self):
        return math.prod(self._desc.shape)

    @property
    def dtype(self):
        return self._desc.dtype

    @property
    def itemsize(self):
        return self._desc.dtype.size

    @property
    def nbytes(self):
        return self.size * self._desc.dtype.size

    # --- conversions (these evaluate) -------------------------------------------

    def item(self):
        if self.size != 1:
            raise ValueError("[convert] Only length-1 arrays can be converted to Python scalars.")
        return self._eval()[0]

    def tolist(self):
        data = self._eval()
        if not self.shape:
            return data[0]
        return _nest(data, self.shape)

    def astype(self, dtype, stream=None):
        return ops.astype(self, dtype)

    def __bool__(self):
        return bool(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() 0-dimensional array.")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iter() 0-dimensional array.")
        return (self[i] for i in range(self.shape[0]))

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __index__(self):
        if self.ndim != 0 or self.dtype.is_float:
            raise TypeError("Only 0-dimensional integer arrays can be converted to an index.")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self):
        return _format_array(self)

    __str__ = __repr__

    # --- operators ------------------------------------------------------------------
    # Each forwards to the op of the same name in mlxref.core.ops.

    def __add__(self, other):
        return ops.add(self, other)

    def __radd__(self, other):
        return ops.add(other, self)

    def __sub__(self, other):
        return ops.subtract(self, other)

    def __rsub__(self, other):
        return ops.subtract(other, self)

    def __mul__(self, other):
        return ops.multiply(self, other)

    def __rmul__(self, other):
        return ops.multiply(other, self)

    def __truediv__(self, other):
        return ops.divide(self, other)

    def __rtruediv__(self, other):
        return ops.divide(other, self)

    def __floordiv__(self, other):
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return ops.floor_divide(other, self)

    def __mod__(self, other):
        return ops.remainder(self, other)

    def __rmod__(self, other):
        return ops.remainder(other, self)

    def __pow__(self, other):
        return ops.power(self, other)

    def __rpow__(self, other):
        return ops.power(other, self)

    def __matmul__(self, other):
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        return ops.matmul(other, self)

    def __neg__(self):
        return ops.negative(self)

    def __abs__(self):
        return ops.abs(self)

    # In MLX, ~ & | are bitwise. On bool arrays that is logical not/and/or, which
    # mlxref has; integer bitwise ops are not part of mlxref, so they raise.
    def __invert__(self):
        _bool_only("inversion", self)
        return ops.logical_not(self)

    def __and__(self, other):
        _bool_only("and", self, other)
        return ops.logical_and(self, other)

    def __rand__(self, other):
        _bool_only("and", other, self)
        return ops.logical_and(other, self)

    def __or__(self, other):
        _bool_only("or", self, other)
        return ops.logical_or(self, other)

    def __ror__(self, other):
        _bool_only("or", other, self)
        return ops.logical_or(other, self)

    def __eq__(self, other):
        return ops.equal(self, other)

    def __ne__(self, other):
        return ops.not_equal(self, other)

    def __lt__(self, other):
        return ops.less(self, other)

    def __le__(self, other):
        return ops.less_equal(self, other)

    def __gt__(self, other):
        return ops.greater(self, other)

    def __ge__(self, other):
        return ops.greater_equal(self, other)

    def __getitem__(self, index):
        return ops.getitem(self, index)

    def __setitem__(self, index, value):
        # MLX: the array becomes a new lazy node; no element is mutated in place,
        # and arrays built from this one earlier keep their own handle of its old
        # descriptor, so they keep its old value.
        self.overwrite_descriptor(ops.setitem(self, index, value))

    # --- a few methods MLX's array has ---------------------------------------

    def reshape(self, *shape, stream=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return ops.reshape(self, tuple(shape))

    def flatten(self, start_axis=0, end_axis=-1, stream=None):
        return ops.flatten(self, start_axis, end_axis)

    def transpose(self, *axes, stream=None):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return ops.transpose(self, tuple(axes) if axes else None)

    def swapaxes(self, axis1, axis2, stream=None):
        return ops.swapaxes(self, axis1, axis2)

    def moveaxis(self, source, destination, stream=None):
        return ops.moveaxis(self, source, destination)

    def squeeze(self, axis=None, stream=None):
        return ops.squeeze(self, axis)

    @property
    def T(self):
        return ops.transpose(self)

    def sum(self, axis=None, keepdims=False, stream=None):
        return ops.sum(self, axis, keepdims)

    def prod(self, axis=None, keepdims=False, stream=None):
        return ops.prod(self, axis, keepdims)

    def mean(self, axis=None, keepdims=False, stream=None):
        return ops.mean(self, axis, keepdims)

    def var(self, axis=None, keepdims=False, ddof=0, stream=None):
        return ops.var(self, axis, keepdims, ddof)

    def std(self, axis=None, keepdims=False, ddof=0, stream=None):
        return ops.std(self, axis, keepdims, ddof)

    def max(self, axis=None, keepdims=False, stream=None):
        return ops.max(self, axis, keepdims)

    def min(self, axis=None, keepdims=False, stream=None):
        return ops.min(self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False, stream=None):
        return ops.argmax(self, axis, keepdims)

    def argmin(self, axis=None, keepdims=False, stream=None):
        return ops.argmin(self, axis, keepdims)

    def all(self, axis=None, keepdims=False, stream=None):
        return ops.all(self, axis, keepdims)

    def any(self, axis=None, keepdims=False, stream=None):
        return ops.any(self, axis, keepdims)

    def logsumexp(self, axis=None, keepdims=False, stream=None):
        return ops.logsumexp(self, axis, keepdims)

    def cumsum(self, axis=None, *, reverse=False, inclusive=True, stream=None):
        return ops.cumsum(self, axis, reverse=reverse, inclusive=inclusive)

    def abs(self, stream=None):
        return ops.abs(self)

    def square(self, stream=None):
        return ops.square(self)

    def sqrt(self, stream=None):
        return ops.sqrt(self)

    def rsqrt(self, stream=None):
        return ops.rsqrt(self)

    def reciprocal(self, stream=None):
        return ops.reciprocal(self)

    def exp(self, stream=None):
        return ops.exp(self)

    def log(self, stream=None):
        return ops.log(self)

    def sin(self, stream=None):
        return ops.sin(self)

    def cos(self, stream=None):
        return ops.cos(self)

    def round(self, decimals=0, stream=None):
        return ops.elementwise.rounded(self, decimals, _ROUND_METHOD)

    def split(self, indices_or_sections, axis=0, stream=None):
        return ops.split(self, indices_or_sections, axis)


def _handle_of(desc):
    """A new array handle pointing at ``desc`` (a plain function: it runs for every node)."""
    a = array.__new__(array)
    a._desc = desc
    return a


_ROUND_METHOD = (
    "round(self, decimals: int = 0, *, stream: mlx.core.Stream | mlx.core.ThreadLocalStream | "
    "mlx.core.Device | mlx.core.DeviceType | None = None) -> mlx.core.array"
)


def _bool_only(what, *operands):
    dts = [o.dtype if isinstance(o, array) else _dt.default_dtype_of_scalar(o) for o in operands]
    if any(d.is_float for d in dts):
        raise ValueError(f"Floating point types not allowed with bitwise {what}.")
    if any(d is not _dt.bool_ for d in dts):
        raise TypeError(
            f"[bitwise {what}] mlxref implements ~, & and | for bool arrays only; "
            f"got {', '.join(d.name for d in dts)} (MLX also has integer bitwise ops)."
        )


def _nest(flat, shape):
    """A flat row-major list as nested lists of the given shape."""
    if len(shape) == 1:
        return list(flat)
    step = math.prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


# --- printing, as MLX prints ------------------------------------------------------

_EDGE = 3  # MLX shows 3 elements at each end of any axis longer than 6


def _format_scalar(v, dtype):
    if dtype is _dt.bool_:
        return "True" if v else "False"
    if is_symbolic(v):
        return str(v)
    if dtype.is_float:
        return "%g" % v
    return str(v)


def _format_array(a):
    data = a._eval()
    body = _format_block(data, a.shape, a.dtype)
    return f"array({body}, dtype={a.dtype.name})"


def _format_block(data, shape, dtype):
    if not shape:
        return _format_scalar(data[0], dtype)

    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]

    def shown(n):
        if n > 2 * _EDGE:
            return list(range(_EDGE)) + [None] + list(range(n - _EDGE, n))
        return list(range(n))

    def block(offset, dim):
        if dim == len(shape) - 1:
            parts = [
                "..." if i is None else _format_scalar(data[offset + i], dtype)
                for i in shown(shape[dim])
            ]
            return "[" + ", ".join(parts) + "]"
        indent = " " * (len("array(") + dim + 1)
        parts = [
            "..." if i is None else block(offset + i * strides[dim], dim + 1)
            for i in shown(shape[dim])
        ]
        return "[" + (",\n" + indent).join(parts) + "]"

    return block(0, 0)


from . import ops  # noqa: E402  (ops needs the array class defined above)
