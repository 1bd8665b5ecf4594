"""The array: a shape, a dtype, and either its elements or how to compute them.

Read alongside: mlx/array.h and mlx/array.cpp (``ArrayDesc``: primitive, inputs,
siblings, ``is_tracer``, ``detach``).

Elements live in one flat Python list in row-major order; a 0-d array holds a
one-element list. There is no global graph: a node simply refers to its
primitive and its input arrays. Operators and methods call the functions in
``mlxref.core.ops``.
"""

import gc
import itertools
import sys

from . import dtypes as _dt
from . import graph

_creation_order = itertools.count(1)


_PLAIN = (float, int, bool)


def _is_symbolic(value):
    if type(value) in _PLAIN:
        return False
    sympy = sys.modules.get("sympy")
    return sympy is not None and isinstance(value, sympy.Basic)


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
            kinds.add(_dt.int32 if -(2**31) <= v < 2**31 else _dt.int64)
        elif isinstance(v, float) or _is_symbolic(v):
            kinds.add(_dt.float32)
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


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class array:
    """``mx.array(val, dtype=None)``: an array from a scalar, nested lists or an array."""

    __slots__ = (
        "_shape",
        "_dtype",
        "_data",
        "_primitive",
        "_inputs",
        "_siblings",
        "_position",
        "_tracer",
        "_uid",
        "__weakref__",
    )

    def __init__(self, val, dtype=None):
        self._data = None
        if dtype is not None and not isinstance(dtype, _dt.Dtype):
            raise TypeError(f"[array] dtype must be an mlx.core.Dtype, got {dtype!r}.")
        self._primitive = None
        self._inputs = ()
        self._siblings = None
        self._position = 0
        self._tracer = False
        self._uid = next(_creation_order)
        if isinstance(val, array):
            # mx.array(a) is a lazy copy (or cast) of a, as in MLX.
            from .primitives.base import AsType, Copy

            self._shape, self._dtype = val._shape, dtype or val._dtype
            prim = Copy() if self._dtype is val._dtype else AsType(self._dtype)
            self._attach(prim, (val,))
            return
        if isinstance(val, (list, tuple)) and any(isinstance(v, array) for v in val):
            # MLX stacks a list of arrays (lazily).
            from .primitives.base import Copy

            parts = [v if isinstance(v, array) else array(v) for v in val]
            stacked = ops.stack(parts) if dtype is None else ops.stack(parts).astype(dtype)
            self._shape, self._dtype = stacked._shape, stacked._dtype
            self._attach(Copy(), (stacked,))
            return
        if val is None or isinstance(val, (str, bytes, dict, set)):
            raise TypeError(
                f"Invalid type {type(val).__name__} received in array initialization: {val!r}."
            )
        flat, shape, inferred = _parse_nested(val)
        dtype = dtype or inferred
        self._shape, self._dtype = shape, dtype
        self._set_data([v if _is_symbolic(v) else dtype.cast(v) for v in flat])

    # --- construction used by ops (not part of MLX's API) ---------------------

    @classmethod
    def _from_data(cls, data, shape, dtype):
        """A materialised array from a flat list (trusted: no checks)."""
        a = cls.__new__(cls)
        a._shape, a._dtype = tuple(shape), dtype
        a._data = None
        a._primitive, a._inputs, a._siblings, a._position = None, (), None, 0
        a._tracer = False
        a._uid = next(_creation_order)
        a._set_data(data)
        return a

    @classmethod
    def _node(cls, shape, dtype, primitive, inputs):
        """An unevaluated array: ``primitive`` applied to ``inputs``."""
        a = cls.__new__(cls)
        a._shape, a._dtype = tuple(shape), dtype
        a._data = None
        a._siblings, a._position, a._tracer = None, 0, False
        a._uid = next(_creation_order)
        a._attach(primitive, tuple(inputs))
        return a

    @classmethod
    def _nodes(cls, shapes, dtypes, primitive, inputs):
        """The sibling outputs of one multi-output primitive (e.g. Split)."""
        outs = [cls._node(s, d, primitive, inputs) for s, d in zip(shapes, dtypes)]
        siblings = tuple(outs)
        for i, o in enumerate(outs):
            o._siblings, o._position = siblings, i
        return outs

    @classmethod
    def _placeholder(cls, shape, dtype):
        """An array with neither data nor primitive (vmap's traced inputs)."""
        a = cls.__new__(cls)
        a._shape, a._dtype = tuple(shape), dtype
        a._data, a._primitive, a._inputs = None, None, ()
        a._siblings, a._position, a._tracer = None, 0, True
        a._uid = next(_creation_order)
        return a

    def _attach(self, primitive, inputs):
        self._primitive = primitive
        self._inputs = inputs
        tracer = False  # a node built from a tracer is a tracer (MLX's ArrayDesc::init)
        for x in inputs:
            tracer = tracer or x._tracer
        self._tracer = tracer

    def _set_data(self, data):
        self._data = data
        graph._allocate(data, len(data) * self._dtype.size)

    def _detach(self):
        """Drop the graph behind an evaluated array (MLX's ``array::detach``)."""
        self._primitive = None
        self._inputs = ()
        self._siblings = None

    def __del__(self):
        if self._data is not None:
            graph._free(self._data)

    # --- the node, as mlx/array.h exposes it -----------------------------------

    def id(self):
        """A number unique to this array's node, increasing in creation order."""
        return self._uid

    def data(self):
        """The elements as stored (a flat list; never mutate it), or None before eval."""
        return self._data

    def primitive(self):
        """The primitive that computes this array, or None (data, or a vmap placeholder)."""
        return self._primitive

    def has_primitive(self):
        return self._primitive is not None

    def inputs(self):
        """The arrays this array's primitive reads, in argument order."""
        return self._inputs

    def siblings(self):
        """The other outputs of this array's primitive (MLX's ``siblings()``)."""
        if self._siblings is None:
            return ()
        return tuple(s for s in self._siblings if s is not self)

    def outputs(self):
        """All outputs of this array's primitive, in order (itself included)."""
        return self._siblings if self._siblings is not None else (self,)

    def is_available(self):
        """Has this array been evaluated (MLX's name: its data is available)?"""
        return self._data is not None

    def set_tracer(self, is_tracer):
        self._tracer = is_tracer

    def is_tracer(self):
        return (self._tracer and graph.in_tracing()) or graph.retain_graph()

    def _eval(self):
        if self._data is None:
            graph.eval_arrays([self])
        return self._data

    # --- attributes -----------------------------------------------------------

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        return _prod(self._shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def itemsize(self):
        return self._dtype.size

    @property
    def nbytes(self):
        return self.size * self._dtype.size

    # --- conversions (these evaluate) -------------------------------------------

    def item(self):
        if self.size != 1:
            raise ValueError("[convert] Only length-1 arrays can be converted to Python scalars.")
        return self._eval()[0]

    def tolist(self):
        data = self._eval()
        if not self._shape:
            return data[0]
        return _nest(data, self._shape)

    def astype(self, dtype, stream=None):
        from . import ops

        return ops.astype(self, dtype)

    def __bool__(self):
        return bool(self.item())

    def __len__(self):
        if not self._shape:
            raise TypeError("len() 0-dimensional array.")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iter() 0-dimensional array.")
        return (self[i] for i in range(self._shape[0]))

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __index__(self):
        if self.ndim != 0 or self._dtype.is_float:
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
        # MLX: the array becomes a new lazy node; no element is mutated in place.
        # MLX swaps the array's descriptor, so nodes that already read the array
        # keep its old value. An mlxref array is its own descriptor, so its old
        # state moves to a new object and those nodes are re-pointed at it.
        old = self._moved()
        self._become(ops.setitem(old, index, value))

    def _moved(self):
        """A new array object holding this array's state; consumers re-pointed to it."""
        old = array.__new__(array)
        old._shape, old._dtype, old._data = self._shape, self._dtype, self._data
        old._primitive, old._inputs, old._tracer = self._primitive, self._inputs, self._tracer
        old._siblings, old._position, old._uid = self._siblings, self._position, self._uid
        if self._siblings is not None:
            old._siblings = tuple(old if s is self else s for s in self._siblings)
            for s in old._siblings:
                s._siblings = old._siblings
        self._data = None  # the data now belongs to ``old`` (counted once)
        for holder in gc.get_referrers(self):
            if not isinstance(holder, tuple) or holder is old._siblings:
                continue
            for node in gc.get_referrers(holder):
                if isinstance(node, array) and node._inputs is holder:
                    node._inputs = tuple(old if x is self else x for x in holder)
        return old

    def _become(self, other):
        """Make this array object stand for ``other``'s computation."""
        from .primitives.base import Copy

        self._shape, self._dtype = other._shape, other._dtype
        self._data = None
        self._siblings, self._position = None, 0
        self._attach(Copy(), (other,))
        self._uid = next(_creation_order)

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
        return ops.round(self, decimals)

    def split(self, indices_or_sections, axis=0, stream=None):
        return ops.split(self, indices_or_sections, axis)


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
    step = _prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


# --- printing, as MLX prints ------------------------------------------------------

_EDGE = 3  # MLX shows 3 elements at each end of any axis longer than 6


def _format_scalar(v, dtype):
    if dtype is _dt.bool_:
        return "True" if v else "False"
    if _is_symbolic(v):
        return str(v)
    if dtype.is_float:
        return "%g" % v
    return str(v)


def _format_array(a):
    data = a._eval()
    shape = a._shape
    body = _format_block(data, shape, a._dtype)
    return f"array({body}, dtype={a._dtype.name})"


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
