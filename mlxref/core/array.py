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
import numbers
import sys
import weakref

from . import dtypes as _dt
from . import graph
from . import interop
from .scalar import is_symbolic

_creation_order = itertools.count(1)


def _scalars_dtype(flat):
    """The dtype MLX infers for Python scalars (``flat``, normalised in place:
    int and float subclasses become plain ints and floats)."""
    kinds = set()
    for i, v in enumerate(flat):
        if isinstance(v, bool):
            kinds.add(_dt.bool_)
        elif isinstance(v, int):
            kinds.add(_dt.int32 if -(2**31) <= v < 2**31 else _int64_dtype(v))
            flat[i] = int(v)  # a subclass (IntEnum...) as a plain int
        elif isinstance(v, float) or is_symbolic(v):
            kinds.add(_dt.float32)
            if isinstance(v, float):
                flat[i] = float(v)  # a subclass (NumPy's float64...) as a plain float
        elif isinstance(v, complex):
            kinds.add(_dt.complex64)
        else:
            raise _invalid_type(v)
    dtype = _dt.bool_ if kinds else _dt.float32  # an empty list is float32, as in MLX
    for k in kinds:
        dtype = _dt.promote_types(dtype, k)
    return dtype


def _invalid_type(v):
    """MLX's ValueError for an element it cannot read (python/src/convert.cpp)."""
    return ValueError(
        f"Invalid type {ops.common._type_name(v)} received in array initialization.")


def _is_element(v):
    return isinstance(v, (bool, int, float, complex)) or is_symbolic(v)


def _list_shape(value):
    """MLX's ``get_shape`` (python/src/convert.cpp): the lengths down the first
    elements, and then the shape of an array met there."""
    shape = []
    while True:
        shape.append(len(value))
        if not value:
            return tuple(shape)
        first = value[0]
        if isinstance(first, (list, tuple)):
            value = first
            continue
        if isinstance(first, array):
            shape.extend(first.shape)
        return tuple(shape)


_NON_UNIFORM = "Initialization encountered non-uniform length."


def _validate_list(value, shape, depth, flat):
    """MLX's ``validate_shape``: every element agrees with ``shape``; Python
    scalars are appended to ``flat``. True when an mx.array is met.

    As MLX: a tuple among lists is an element of an invalid type, and a list
    whose first element is a tuple reads its other elements as tuples too.
    """
    if depth >= len(shape):
        raise ValueError("Initialization encountered extra dimension.")
    if len(value) != shape[depth]:
        raise ValueError(_NON_UNIFORM)
    if not value:
        return False
    has_array = False
    tuples = isinstance(value[0], tuple)
    for v in value:
        if isinstance(v, list) or (tuples and isinstance(v, tuple)):
            has_array = _validate_list(v, shape, depth + 1, flat) or has_array
        elif tuples:
            raise RuntimeError(
                "[array] A sequence whose first element is a tuple holds an element "
                f"of type {type(v).__name__}; MLX reads each of its elements as a tuple "
                "(MLX itself raises RuntimeError: std::bad_cast)."
            )
        elif isinstance(v, array):
            if v.shape != shape[depth + 1:]:
                raise ValueError(_NON_UNIFORM)
            has_array = True
        else:
            if not _is_element(v):
                raise _invalid_type(v)
            if depth + 1 != len(shape):
                raise ValueError(_NON_UNIFORM)
            flat.append(v)
    return has_array


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
    """MLX reads the ints of a list given a ``dtype`` through one C type
    (python/src/convert.cpp ``array_from_list``): uint32 for uint32, uint64
    for uint64, a 32-bit int for the narrower types and bool (which then wrap,
    ``[300]`` as uint8 is ``[44]``); an int outside it is its
    ``std::bad_cast``. (A scalar goes through int64: ``mx.array(-1, uint32)``
    wraps.)"""
    if dtype is _dt.int64 or dtype.is_inexact:
        return
    if dtype.is_unsigned and dtype.size >= 4:
        low, high, ctype = 0, 2 ** (8 * dtype.size), dtype.name
    else:
        low, high, ctype = -(2**31), 2**31, "a 32-bit int"
    for v in flat:
        if type(v) is int and not low <= v < high:
            raise RuntimeError(
                f"[array] The Python integer {v} in a list does not fit in {ctype}, "
                f"which MLX reads a list's ints through for {dtype.name} (MLX itself "
                "raises RuntimeError: std::bad_cast)."
            )


def _fmt_shape(shape):
    """MLX writes shapes as (2,3) and (4)."""
    return "(" + ",".join(str(d) for d in shape) + ")"


class _ArrayDesc:
    """MLX's ``ArrayDesc``: what one or more array handles point at.

    ``data`` is the flat element list once evaluated; until then ``primitive``
    and ``inputs`` say how to compute it. The outputs of one multi-output
    primitive are ``siblings`` of each other, at their ``position``.
    ``detached`` marks an array a primitive computed and evaluation then cut
    from its graph (mlxref's own mark, so that a drawing can say why there is
    nothing to draw; MLX keeps none).
    """

    __slots__ = ("shape", "dtype", "data", "primitive", "inputs", "siblings",
                 "position", "is_tracer", "detached", "id", "__weakref__")

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
        self.is_tracer, self.detached = is_tracer, False
        self.siblings, self.position = (), 0
        self.id = next(_creation_order)

    def __del__(self):
        if self.data is not None:
            graph.free(self.data)


_INIT = ("__init__(self: array, val: scalar | list | tuple | DLPackCompatible | array, "
         "dtype: Dtype | None = None)")


class array:
    """``mx.array(val, dtype=None)``: an array from a scalar, nested lists or an array."""

    __slots__ = ("_desc", "__weakref__")

    def __init__(self, val, dtype=None):
        if dtype is not None and not isinstance(dtype, _dt.Dtype):
            raise TypeError(f"[array] dtype must be an mlx.core.Dtype, got {dtype!r}.")
        flat, shape = None, ()
        if isinstance(val, (list, tuple)):
            flat, shape = [], _list_shape(val)
            if _validate_list(val, shape, 0, flat):
                # A list holding mx.arrays (at any depth): MLX makes each element an
                # array of its own and stacks them, lazily (python/src/convert.cpp).
                val = ops.stack([array(v, dtype) for v in val])
        if isinstance(val, array):
            # MLX's mx.array(a) is astype(a, dtype): a's own descriptor when the
            # dtype does not change, else a lazy cast.
            self._desc = ops.astype(val, dtype or val.dtype)._desc
            return
        if interop.is_numpy(val):
            flat, shape, dtype = interop.from_numpy(val, dtype)
            self._desc = _ArrayDesc(shape, dtype)
            self._set_data(flat)
            return
        if val is None:
            raise ops.common.incompatible_arguments(_INIT, (self, val))
        if flat is None and not _is_element(val):
            buffer = interop.from_buffer(val, dtype)
            if buffer is None:
                raise _invalid_type(val)
            flat, shape, dtype = buffer
            self._desc = _ArrayDesc(shape, dtype)
            self._set_data(flat)
            return
        if flat is None:
            flat = [val]
        inferred = _scalars_dtype(flat)
        if dtype is not None and shape and inferred in (_dt.int32, _dt.int64):
            _check_list_ints(flat, dtype)
        dtype = dtype or inferred
        if dtype.is_inexact and dtype is not _dt.float64 and isinstance(val, (list, tuple)):
            # MLX reads a list's ints as C floats, through double: above 2**53
            # they round twice, where a scalar rounds once (python/src/convert.cpp).
            flat = [float(v) if type(v) is int else v for v in flat]
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
        refs = [weakref.ref(o._desc) for o in outputs]
        for i, o in enumerate(outputs):
            o._desc.siblings = tuple(refs[:i] + refs[i + 1:])
            o._desc.position = i
        return outputs

    @classmethod
    def _placeholder(cls, shape, dtype):
        """An array with neither data nor primitive (vmap's traced inputs, MLX's
        ``array(shape, dtype, nullptr, {})``)."""
        a = _handle_of(_ArrayDesc(shape, dtype))
        a._desc.is_tracer = True
        return a

    def _set_data(self, data, view_of=None):
        self._desc.data = data
        graph.allocate(data, len(data) * self._desc.dtype.size, view_of)

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
        d = self._desc
        return tuple(_handle_of(_sibling(d, k)) for k in range(len(d.siblings)))

    def outputs(self):
        """All outputs of this array's primitive in order, this one among them."""
        d = self._desc
        if not d.siblings:
            return (self,)
        others = self.siblings()
        return others[: d.position] + (self,) + others[d.position :]

    def is_available(self):
        """Has this array been evaluated (MLX's name: its data is available)?"""
        return self._desc.data is not None

    def is_tracer(self):
        """Is the array being traced by a transform (so evaluation keeps its graph)?"""
        return (self._desc.is_tracer and graph.in_tracing()) or graph.retain_graph()

    def is_detached(self):
        """Did a primitive compute this array before evaluation dropped its graph?
        (mlxref's own: drawings use it to say why there is nothing to draw.)"""
        return self._desc.detached

    def set_tracer(self, is_tracer):
        self._desc.is_tracer = is_tracer

    def detach(self):
        """Drop the graph behind an evaluated array (MLX's ``array::detach``)."""
        d = self._desc
        d.detached = d.detached or d.primitive is not None
        d.primitive, d.inputs, d.siblings, d.position = None, (), (), 0

    def overwrite_descriptor(self, other):
        """Point this handle at ``other``'s descriptor (what ``a[i] = v`` does)."""
        self._desc = other._desc

    def __copy__(self):
        return self._handle()  # as in MLX: the same descriptor, lazily shared

    def __deepcopy__(self, memo):
        return self._handle()

    def __getstate__(self):
        """What pickle keeps: the evaluated elements, the shape and the dtype's
        name (MLX keeps a NumPy array and the dtype: mlxref stays list-only)."""
        return (self._eval(), self.shape, self.dtype.name)

    def __setstate__(self, state):
        data, shape, name = state
        self._desc = _ArrayDesc(shape, getattr(_dt, name))
        self._set_data(list(data))  # counted by the memory model, like any new array

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

    def __array__(self, dtype=None, copy=None):
        """``np.array(a)``, ``np.asarray(a)``: a new ndarray (see ``interop.to_numpy``)."""
        return interop.to_numpy(self, dtype, copy)

    def astype(self, dtype, stream=None):
        if not isinstance(dtype, _dt.Dtype):
            raise ops.common.incompatible_arguments(
                "astype(self, dtype: mlx.core.Dtype, stream: mlx.core.Stream | "
                "mlx.core.ThreadLocalStream | mlx.core.Device | mlx.core.DeviceType | "
                "None = None) -> mlx.core.array", (self, dtype))
        return ops.astype(self, dtype, stream=stream)

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

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.ndim != 0 or self.dtype.is_inexact:
            raise TypeError("Only 0-dimensional integer arrays can be converted to an index.")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self):
        return _format_array(self)

    __str__ = __repr__

    # --- operators ------------------------------------------------------------------
    # Each forwards to the op of the same name in mlxref.core.ops.

    def __add__(self, other):
        _check_operand("addition", other)
        return ops.add(self, other)

    def __radd__(self, other):
        _check_operand("addition", other)
        return ops.add(other, self)

    def __sub__(self, other):
        _check_operand("subtraction", other)
        return ops.subtract(self, other)

    def __rsub__(self, other):
        _check_operand("subtraction", other)
        return ops.subtract(other, self)

    def __mul__(self, other):
        _check_operand("multiplication", other)
        return ops.multiply(self, other)

    def __rmul__(self, other):
        _check_operand("multiplication", other)
        return ops.multiply(other, self)

    def __truediv__(self, other):
        _check_operand("division", other)
        return ops.divide(self, other)

    def __rtruediv__(self, other):
        _check_operand("division", other)
        return ops.divide(other, self)

    def __floordiv__(self, other):
        _check_operand("floor division", other)
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other):
        _check_operand("floor division", other)
        return ops.floor_divide(other, self)

    def __mod__(self, other):
        _check_operand("modulus", other)
        return ops.remainder(self, other)

    def __rmod__(self, other):
        _check_operand("modulus", other)
        return ops.remainder(other, self)

    def __pow__(self, other):
        _check_operand("power", other)
        return ops.power(self, other)

    def __rpow__(self, other):
        _check_operand("power", other)
        return ops.power(other, self)

    def __matmul__(self, other):
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        return ops.matmul(other, self)

    __div__, __rdiv__ = __truediv__, __rtruediv__  # MLX's Python 2 names, kept

    # In place: MLX's ``a += b`` points ``a`` at the new result's descriptor
    # (``overwrite_descriptor``, as ``a[i] = v``) and returns ``a`` itself: every
    # name bound to this Python object sees the new value; arrays built from
    # ``a`` before keep the old one. The dtype is the result's (an int32
    # ``a += 0.5`` makes ``a`` float32).
    def _in_place(self, what, op, other):
        _check_operand("inplace " + what, other)
        self.overwrite_descriptor(op(self, other))
        return self

    def __iadd__(self, other):
        return self._in_place("addition", ops.add, other)

    def __isub__(self, other):
        return self._in_place("subtraction", ops.subtract, other)

    def __imul__(self, other):
        return self._in_place("multiplication", ops.multiply, other)

    def __itruediv__(self, other):
        _check_operand("inplace division", other)
        if not self.dtype.is_inexact:  # MLX refuses it, where ``a /= 2`` would make a float
            raise ValueError("In place division cannot cast to non-floating point type.")
        return self._in_place("division", ops.divide, other)

    def __ifloordiv__(self, other):
        return self._in_place("floor division", ops.floor_divide, other)

    def __imod__(self, other):
        return self._in_place("modulus", ops.remainder, other)

    def __ipow__(self, other):
        return self._in_place("power", ops.power, other)

    def __imatmul__(self, other):
        self.overwrite_descriptor(ops.matmul(self, other))
        return self

    def __iand__(self, other):
        return self._in_place("bitwise and", _bitwise_op("bitwise and", ops.bitwise_and), other)

    def __ior__(self, other):
        return self._in_place("bitwise or", _bitwise_op("bitwise or", ops.bitwise_or), other)

    def __ixor__(self, other):
        return self._in_place("bitwise xor", _bitwise_op("bitwise xor", ops.bitwise_xor), other)

    def __ilshift__(self, other):
        return self._in_place("left shift", _bitwise_op("left shift", ops.left_shift), other)

    def __irshift__(self, other):
        return self._in_place("right shift", _bitwise_op("right shift", ops.right_shift), other)

    def __pos__(self):
        return self._handle()

    def __neg__(self):
        return ops.negative(self)

    def __abs__(self):
        return ops.abs(self)

    # Bitwise: MLX's operators refuse floats with their own message (before the
    # op's), take ~ of a bool as logical not, and have no reflected forms
    # (``1 & a`` is Python's TypeError).
    def __invert__(self):
        if self.dtype.is_inexact:
            raise ValueError("Floating point types not allowed with bitwise inversion.")
        return ops.bitwise_invert(self)

    def __and__(self, other):
        return ops.bitwise_and(self, _bitwise_operand("bitwise and", self, other))

    def __or__(self, other):
        return ops.bitwise_or(self, _bitwise_operand("bitwise or", self, other))

    def __xor__(self, other):
        return ops.bitwise_xor(self, _bitwise_operand("bitwise xor", self, other))

    def __lshift__(self, other):
        return ops.left_shift(self, _bitwise_operand("left shift", self, other))

    def __rshift__(self, other):
        return ops.right_shift(self, _bitwise_operand("right shift", self, other))

    # ``==`` and ``!=`` with what is not comparable with an array (a list, a
    # string...) are plain False and True, as in MLX (None is a TypeError).
    def __eq__(self, other):
        return ops.equal(self, other) if other is None or _comparable(other) else False

    def __ne__(self, other):
        return ops.not_equal(self, other) if other is None or _comparable(other) else True

    def __lt__(self, other):
        _check_operand("less than", other)
        return ops.less(self, other)

    def __le__(self, other):
        _check_operand("less than or equal", other)
        return ops.less_equal(self, other)

    def __gt__(self, other):
        _check_operand("greater than", other)
        return ops.greater(self, other)

    def __ge__(self, other):
        _check_operand("greater than or equal", other)
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
    def at(self):
        """MLX's ``x.at[index].add(v)`` and friends: updates where a repeated
        index applies every time (``ops.ArrayAt``)."""
        return ops.ArrayAt(self)

    @property
    def T(self):
        return ops.transpose(self)

    @property
    def real(self):
        """The real part (``mx.real``): float32 for complex64, else the array itself."""
        return ops.real(self)

    @property
    def imag(self):
        """The imaginary part (``mx.imag``): float32 for complex64, else zeros."""
        return ops.imag(self)

    def conj(self, *, stream=None):
        return ops.conjugate(self)

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

    def cumprod(self, axis=None, *, reverse=False, inclusive=True, stream=None):
        return ops.cumprod(self, axis, reverse=reverse, inclusive=inclusive)

    def cummax(self, axis=None, *, reverse=False, inclusive=True, stream=None):
        return ops.cummax(self, axis, reverse=reverse, inclusive=inclusive)

    def cummin(self, axis=None, *, reverse=False, inclusive=True, stream=None):
        return ops.cummin(self, axis, reverse=reverse, inclusive=inclusive)

    def logcumsumexp(self, axis=None, *, reverse=False, inclusive=True, stream=None):
        return ops.logcumsumexp(self, axis, reverse=reverse, inclusive=inclusive)

    def diag(self, k=0, *, stream=None):
        return ops.diag(self, k)

    def diagonal(self, offset=0, axis1=0, axis2=1, stream=None):
        return ops.diagonal(self, offset, axis1, axis2)

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

    def log1p(self, stream=None):
        return ops.log1p(self)

    def log2(self, stream=None):
        return ops.log2(self)

    def log10(self, stream=None):
        return ops.log10(self)

    def view(self, dtype, *, stream=None):
        """The same bytes read as ``dtype`` (``mx.view``)."""
        return ops.view(self, dtype)

    @property
    def mT(self):
        """The last two axes swapped (MLX's ``matrix_transpose``)."""
        if self.ndim < 2:
            raise ValueError("[matrix_transpose] Input array must have at least 2 dimensions.")
        return ops.swapaxes(self, -1, -2)

    def __array_namespace__(self, api_version=None):
        """The module with the array API's functions: ``mlxref.core``."""
        if api_version is not None:
            raise ValueError("Explicitly specifying api_version is not yet implemented.")
        return sys.modules[__package__]

    def __dlpack_device__(self):
        """``(1, 0)``: DLPack's CPU device, as MLX's CPU build reports."""
        return (1, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Refused: a DLPack capsule points at the elements in memory, and
        mlxref's live in a Python list (MLX shares its buffer here)."""
        raise BufferError(
            "[array.__dlpack__] mlxref cannot export an array through DLPack: its "
            "elements live in a Python list, not in memory another library can share. "
            "Copy it instead: np.array(a), or a.tolist()."
        )

    def __bytes__(self):
        """The elements' bytes as MLX stores them (row-major, little-endian)."""
        return _dt.to_bytes(self._eval(), self.dtype)

    def __format__(self, spec):
        """A 0-d array formats as its Python scalar (``f"{x:.3f}"``); any other
        prints as ``repr`` and takes no format spec."""
        if spec and self.ndim > 0:
            raise TypeError("unsupported format string passed to mx.array.__format__")
        if self.ndim == 0:
            return format(self.item(), spec)
        return repr(self)

    def round(self, decimals=0, stream=None):
        return ops.elementwise.rounded(self, decimals, _ROUND_METHOD)

    def split(self, indices_or_sections, axis=0, stream=None):
        return ops.split(self, indices_or_sections, axis)


def _sibling(desc, k):
    """The descriptor of ``desc``'s ``k``-th sibling.

    Siblings refer to each other weakly: two outputs of one node would
    otherwise form a reference cycle that keeps the node and its inputs alive
    (until Python's cycle collector runs) when neither is ever evaluated, as
    MLX's array destructor breaks such cycles. A sibling nobody holds any
    more is made again, as an unevaluated output of the same node.
    """
    sibling = desc.siblings[k]()
    if sibling is None:
        position = k if k < desc.position else k + 1
        shape = desc.primitive.output_shapes(desc.inputs)[position]
        dtypes = desc.primitive.output_dtypes(desc.inputs)
        dtype = dtypes[position] if len(dtypes) > 1 else dtypes[0]
        sibling = _ArrayDesc(shape, dtype, desc.primitive, desc.inputs)
        sibling.siblings = tuple(
            weakref.ref(desc) if j == desc.position else desc.siblings[j if j < desc.position else j - 1]
            for j in range(len(desc.siblings) + 1) if j != position)
        sibling.position = position
        desc.siblings = desc.siblings[:k] + (weakref.ref(sibling),) + desc.siblings[k + 1:]
    return sibling


def _handle_of(desc):
    """A new array handle pointing at ``desc`` (a plain function: it runs for every node)."""
    a = array.__new__(array)
    a._desc = desc
    return a


_ROUND_METHOD = (
    "round(self, decimals: int = 0, *, stream: mlx.core.Stream | mlx.core.ThreadLocalStream | "
    "mlx.core.Device | mlx.core.DeviceType | None = None) -> mlx.core.array"
)


def _comparable(other):
    """MLX's ``is_comparable_with_array``: an array, a number, or what converts to one."""
    return (isinstance(other, (array, numbers.Number)) or is_symbolic(other)
            or hasattr(other, "__mlx_array__") or hasattr(other, "__array__"))


def _check_operand(what, other):
    """MLX's ``is_comparable_with_array`` for an operator's other operand: a
    string, list, tuple, dict... is refused with MLX's message (None is left
    to the op, whose TypeError MLX's binding also raises)."""
    if other is None or _comparable(other):
        return
    kind = type(other)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    raise ValueError(f"Cannot perform {what} on an mlx.core.array and {name}")


def _bitwise_op(what, op):
    """``op(a, b)`` after the check MLX's bitwise operators make (``_bitwise_operand``)."""
    return lambda a, b: op(a, _bitwise_operand(what, a, b))


def _bitwise_operand(what, a, other):
    """``other``, checked for one of MLX's bitwise operators on ``a``: a float
    on either side (a Python int is weakly typed by ``a``, so ``float array &
    1`` is one) is refused with the operator's own message, before the op's."""
    _check_operand(what, other)
    if isinstance(other, array):
        dtype = other.dtype
    elif type(other) in (bool, int, float, complex):
        dtype = _dt.weak_scalar_dtype(other, a.dtype)
    else:
        return other  # the op converts it, or says why it cannot
    if a.dtype.is_inexact or dtype.is_inexact:
        raise ValueError(f"Floating point types not allowed with {what}.")
    return other


def _nest(flat, shape):
    """A flat row-major list as nested lists of the given shape."""
    if len(shape) == 1:
        return list(flat)
    step = math.prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


# --- printing, as MLX prints ------------------------------------------------------

_EDGE = 3  # MLX shows 3 elements at each end of any axis longer than 6

_INT32 = range(-(2**31), 2**31)


class PrintOptions:
    """``mx.PrintOptions(precision=-1)``: how arrays print (mlx/utils.h).

    ``precision`` is the one option MLX 0.32.4 has: -1 prints floats as C++'s
    default stream does (%g), any other value in fixed notation with that
    many decimals (a negative one other than -1: 6 decimals, as C++'s
    ``std::fixed`` with a negative precision)."""

    __slots__ = ("_precision",)

    def __init__(self, precision=-1):
        if not isinstance(precision, int) or precision not in _INT32:
            raise TypeError(
                "__init__(): incompatible function arguments. The following argument types "
                "are supported:\n    1. __init__(self, precision: int = -1) -> None\n\n"
                f"Invoked with types: mlx.core.PrintOptions, {type(precision).__name__}"
            )
        self._precision = int(precision)

    @property
    def precision(self):
        return self._precision

    @precision.setter
    def precision(self, value):
        if not isinstance(value, int) or value not in _INT32:
            raise TypeError(
                "(): incompatible function arguments. The following argument types are "
                "supported:\n    1. (self, arg: int, /) -> None\n\nInvoked with types: "
                f"mlx.core.PrintOptions, {type(value).__name__}"
            )
        self._precision = int(value)


_print_options = PrintOptions()  # MLX's global formatter's options

_PRINTOPTIONS_SIGNATURES = {
    name: f"{name}(precision: int = -1) -> {result}"
    for name, result in (("set_printoptions", "None"),
                         ("printoptions", "mlx.core._PrintOptionsContext"))
}


def _precision_arg(name, args, kwargs):
    """The ``precision`` argument of set_printoptions / printoptions, checked
    as MLX's binding checks it (a C int; a bool is one)."""
    if len(args) + len(kwargs) > 1 or set(kwargs) - {"precision"}:
        raise _print_arguments_error(name, args, kwargs)
    value = args[0] if args else kwargs.get("precision", -1)
    if not isinstance(value, int) or value not in _INT32:
        raise _print_arguments_error(name, args, kwargs)
    return int(value)


def _print_arguments_error(name, args, kwargs):
    types = [type(a).__name__ for a in args]
    if kwargs:
        types.append("kwargs = { " + ", ".join(f"{k}: {type(v).__name__}"
                                               for k, v in kwargs.items()) + " }")
    return TypeError(
        f"{name}(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. {_PRINTOPTIONS_SIGNATURES[name]}\n\nInvoked with types: "
        + ", ".join(types)
    )


def set_printoptions(*args, **kwargs):
    """``mx.set_printoptions(precision=-1)``: the precision every array prints
    with from now on (-1, the default, restores MLX's %g printing)."""
    _print_options.precision = _precision_arg("set_printoptions", args, kwargs)


def get_printoptions():
    """``mx.get_printoptions()``: a copy of the current PrintOptions."""
    return PrintOptions(_print_options.precision)


class _PrintOptionsContext:
    """What ``mx.printoptions`` returns: sets the options on enter, restores
    the ones it found there on exit (python/src/print.cpp)."""

    def __init__(self, options):
        self._new, self._old = options, None

    def __enter__(self):
        self._old = get_printoptions()
        _print_options.precision = self._new.precision
        return self

    def __exit__(self, *exc):
        _print_options.precision = self._old.precision


def printoptions(*args, **kwargs):
    """``with mx.printoptions(precision=3): ...``: the options for a block."""
    return _PrintOptionsContext(PrintOptions(_precision_arg("printoptions", args, kwargs)))


def _format_float(v):
    """A float as C++'s ``std::ostream`` writes it (MLX's printer): %g, or
    fixed with the precision set by ``set_printoptions``; a nan with its sign
    bit set as -nan."""
    if v != v:
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    precision = _print_options.precision
    if precision == -1:
        return "%g" % v
    return "%.*f" % (precision if precision >= 0 else 6, v)


def _format_scalar(v, dtype):
    if dtype is _dt.bool_:
        return "True" if v else "False"
    if is_symbolic(v):
        return str(v)
    if dtype.is_float:
        return _format_float(v)
    if dtype.is_complex:
        # MLX (mlx/utils.cpp): real part, then "+" and the imaginary part when
        # it is >= 0 (so -0 prints as +-0) or nan, else "-" and its magnitude.
        im = v.imag
        sign, im = ("+", im) if im >= 0 or im != im else ("-", -im)
        return f"{_format_float(v.real)}{sign}{_format_float(im)}j"
    return str(v)


def _format_array(a):
    data = a._eval()
    body = format_elements(data, a.shape, lambda v: _format_scalar(v, a.dtype),
                           indent=len("array("))
    return f"array({body}, dtype={a.dtype.name})"


def format_elements(data, shape, format_scalar, edge=_EDGE, whole=False, indent=0):
    """The elements ``data`` (flat, row-major) of an array of ``shape`` as MLX
    prints them: nested brackets, one line per row of the last two axes, and
    every axis longer than ``2 * edge`` cut to its first and last ``edge``
    items around "..." (unless ``whole``). Lines after the first are indented
    by ``indent`` plus one space per open bracket. The drawings (viz/record.py)
    lay out values with it too."""
    if not shape:
        return format_scalar(data[0])

    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]

    def shown(n):
        if whole or n <= 2 * edge:
            return list(range(n))
        return list(range(edge)) + [None] + list(range(n - edge, n))

    def block(offset, dim):  # the lines of the sub-array at ``offset``, from axis ``dim`` on
        if dim == len(shape) - 1:
            parts = ["..." if i is None else format_scalar(data[offset + i])
                     for i in shown(shape[dim])]
            return ["[" + ", ".join(parts) + "]"]
        lines = []
        for i in shown(shape[dim]):
            if lines:
                lines[-1] += ","
            lines += ["..."] if i is None else block(offset + i * strides[dim], dim + 1)
        lines[-1] += "]"
        return ["[" + lines[0]] + [" " + line for line in lines[1:]]

    lines = block(0, 0)
    return "\n".join(lines[:1] + [" " * indent + line for line in lines[1:]])


from . import ops  # noqa: E402  (ops needs the array class defined above)
