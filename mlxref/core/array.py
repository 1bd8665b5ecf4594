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
nodes are built by ``make_arrays`` in ``primitives/base.py``. An array's
elements are counted by the allocator when it gets them (``set_data``:
backend/cpu/allocator.py) and returned when its descriptor goes.

Operators and methods are MLX's Python binding's (python/src/array.cpp): each
calls the op of the same name in ``mlxref.core.ops``. Python values come in
and go out through convert.py (python/src/convert.cpp and utils.cpp: an
operator's other operand is checked there too); an array prints through
printing.py (python/src/print.cpp).

Read next: mlxref/core/transforms/eval.py (``eval_arrays``), mlxref/core/convert.py.
"""

import itertools
import math
import sys
import weakref

from . import dtypes as _dt
from .backend.cpu import allocator

creation_order = itertools.count(1)  # every array's id, and viz's names, in one sequence


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
            handle = array.__new__(array)  # (x._handle(), without a call per input)
            handle._desc = desc = x._desc
            handles.append(handle)
            is_tracer = is_tracer or desc.is_tracer
        self.inputs = tuple(handles)
        self.is_tracer, self.detached = is_tracer, False
        self.siblings, self.position = (), 0
        self.id = next(creation_order)

    def __del__(self):
        if self.data is not None:
            allocator.free(self.data)


class array:
    """``mx.array(val, dtype=None)``: an array from a scalar, nested lists or an array."""

    __slots__ = ("_desc", "__weakref__")

    def __init__(self, val, dtype=None):
        self._desc = convert.create_array(val, dtype, self)._desc

    # --- construction inside the engine (not MLX's Python API) -------------------

    def _handle(self):
        """A new handle to this array's descriptor (MLX copies an ``array``)."""
        a = array.__new__(array)
        a._desc = self._desc
        return a

    @classmethod
    def _node(cls, shapes, dtypes, primitive, inputs):
        """The unevaluated outputs of ``primitive`` on ``inputs``; called by ``make_arrays``."""
        if not thread_streams.defaults:  # a thread's first op makes its default stream (device.py)
            make_default_stream()
        if len(shapes) == 1:
            out = array.__new__(array)  # (_handle_of, without the call: it runs for every node)
            out._desc = _ArrayDesc(shapes[0], dtypes[0], primitive, inputs)
            return [out]
        outputs = [_handle_of(_ArrayDesc(s, d, primitive, inputs))
                   for s, d in zip(shapes, dtypes)]
        refs = [weakref.ref(o._desc) for o in outputs]
        for i, o in enumerate(outputs):
            o._desc.siblings = tuple(refs[:i] + refs[i + 1:])
            o._desc.position = i
        return outputs

    def set_data(self, data, view_of=None):
        """Give this array its elements (MLX's ``array::set_data``), counted by the
        allocator; a view (``Primitive.view``) shares the buffer of ``view_of``."""
        self._desc.data = data
        allocator.allocate(data, len(data) * self._desc.dtype.size, view_of)

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
        return (self._desc.is_tracer and in_tracing()) or retain_graph()

    def is_detached(self):
        """Did a primitive compute this array before evaluation dropped its graph?
        (mlxref's own: drawings use it to say why there is nothing to draw.)"""
        return self._desc.detached

    def is_donatable(self):
        """May a kernel write its output into this array's buffer? (MLX's
        ``array::is_donatable``: nothing but this handle refers to the descriptor,
        nothing but the descriptor to its elements, and no view shares them.)"""
        d = self._desc
        data = d.data
        return (data is not None
                and sys.getrefcount(d) == allocator.SOLE_REFCOUNT  # held by this handle alone
                and sys.getrefcount(data) == allocator.SOLE_REFCOUNT  # held by d alone
                and not allocator.shares_buffer(data))

    def release_data(self):
        """Drop the elements and return them: a donor's buffer passes to the
        output (``allocator.donate``), and the donor goes when its node is detached."""
        d = self._desc
        data, d.data = d.data, None
        return data

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
        return (elements(self), self.shape, self.dtype.name)

    def __setstate__(self, state):
        data, shape, name = state
        self._desc = _ArrayDesc(shape, getattr(_dt, name))
        self.set_data(list(data))  # counted by the memory model, like any new array

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
        return elements(self)[0]

    def tolist(self):
        data = elements(self)
        if not self.shape:
            return data[0]
        return convert.nested(data, self.shape)

    def __array__(self, dtype=None, copy=None):
        """``np.array(a)``, ``np.asarray(a)``: a new ndarray (see ``convert.to_numpy``)."""
        return convert.to_numpy(self, dtype, copy)

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
        return printing.format_array(elements(self), self.shape, self.dtype)

    __str__ = __repr__

    # --- operators (python/src/array.cpp) -------------------------------------------
    # Each checks its other operand as MLX's binding does (``convert.operand``:
    # a string, list, dict... is refused with MLX's message) and calls the op of
    # the same name in mlxref.core.ops, which converts it.

    def __add__(self, other): return ops.add(self, convert.operand("addition", other))
    def __radd__(self, other): return ops.add(convert.operand("addition", other), self)
    def __sub__(self, other): return ops.subtract(self, convert.operand("subtraction", other))
    def __rsub__(self, other): return ops.subtract(convert.operand("subtraction", other), self)
    def __mul__(self, other): return ops.multiply(self, convert.operand("multiplication", other))
    def __rmul__(self, other): return ops.multiply(convert.operand("multiplication", other), self)
    def __truediv__(self, other): return ops.divide(self, convert.operand("division", other))
    def __rtruediv__(self, other): return ops.divide(convert.operand("division", other), self)
    def __floordiv__(self, other):
        return ops.floor_divide(self, convert.operand("floor division", other))
    def __rfloordiv__(self, other):
        return ops.floor_divide(convert.operand("floor division", other), self)
    def __mod__(self, other): return ops.remainder(self, convert.operand("modulus", other))
    def __rmod__(self, other): return ops.remainder(convert.operand("modulus", other), self)
    def __pow__(self, other): return ops.power(self, convert.operand("power", other))
    def __rpow__(self, other): return ops.power(convert.operand("power", other), self)
    def __matmul__(self, other): return ops.matmul(self, other)
    def __rmatmul__(self, other): return ops.matmul(other, self)
    __div__, __rdiv__ = __truediv__, __rtruediv__  # MLX's Python 2 names, kept

    # Comparisons. ``==`` and ``!=`` with what is not comparable with an array
    # (a list, a string...) are plain False and True, as in MLX (None is a TypeError).
    def __eq__(self, other):
        if other is None or convert.is_comparable_with_array(other):
            return ops.equal(self, other)
        return False

    def __ne__(self, other):
        if other is None or convert.is_comparable_with_array(other):
            return ops.not_equal(self, other)
        return True

    def __lt__(self, other): return ops.less(self, convert.operand("less than", other))
    def __le__(self, other):
        return ops.less_equal(self, convert.operand("less than or equal", other))
    def __gt__(self, other): return ops.greater(self, convert.operand("greater than", other))
    def __ge__(self, other):
        return ops.greater_equal(self, convert.operand("greater than or equal", other))

    # Bitwise: MLX's operators refuse floats with their own message (before the
    # op's: ``convert.bitwise_operand``), take ~ of a bool as logical not, and
    # have no reflected forms (``1 & a`` is Python's TypeError).
    def __and__(self, other):
        return ops.bitwise_and(self, convert.bitwise_operand("bitwise and", self, other))

    def __or__(self, other):
        return ops.bitwise_or(self, convert.bitwise_operand("bitwise or", self, other))

    def __xor__(self, other):
        return ops.bitwise_xor(self, convert.bitwise_operand("bitwise xor", self, other))

    def __lshift__(self, other):
        return ops.left_shift(self, convert.bitwise_operand("left shift", self, other))

    def __rshift__(self, other):
        return ops.right_shift(self, convert.bitwise_operand("right shift", self, other))

    def __invert__(self):
        if self.dtype.is_inexact:
            raise ValueError("Floating point types not allowed with bitwise inversion.")
        return ops.bitwise_invert(self)

    def __pos__(self): return self._handle()
    def __neg__(self): return ops.negative(self)
    def __abs__(self): return ops.abs(self)

    # In place: MLX's ``a += b`` points ``a`` at the new result's descriptor
    # (``overwrite_descriptor``, as ``a[i] = v``) and returns ``a`` itself: every
    # name bound to this Python object sees the new value; arrays built from
    # ``a`` before keep the old one. The dtype is the result's (an int32
    # ``a += 0.5`` makes ``a`` float32).
    def _in_place(self, what, op, other):
        self.overwrite_descriptor(op(self, convert.operand("inplace " + what, other)))
        return self

    def __iadd__(self, other): return self._in_place("addition", ops.add, other)
    def __isub__(self, other): return self._in_place("subtraction", ops.subtract, other)
    def __imul__(self, other): return self._in_place("multiplication", ops.multiply, other)
    def __ifloordiv__(self, other):
        return self._in_place("floor division", ops.floor_divide, other)
    def __imod__(self, other): return self._in_place("modulus", ops.remainder, other)
    def __ipow__(self, other): return self._in_place("power", ops.power, other)
    def __iand__(self, other): return self._in_place("bitwise and", array.__and__, other)
    def __ior__(self, other): return self._in_place("bitwise or", array.__or__, other)
    def __ixor__(self, other): return self._in_place("bitwise xor", array.__xor__, other)
    def __ilshift__(self, other): return self._in_place("left shift", array.__lshift__, other)
    def __irshift__(self, other): return self._in_place("right shift", array.__rshift__, other)

    def __itruediv__(self, other):
        convert.operand("inplace division", other)
        if not self.dtype.is_inexact:  # MLX refuses it, where ``a /= 2`` would make a float
            raise ValueError("In place division cannot cast to non-floating point type.")
        return self._in_place("division", ops.divide, other)

    def __imatmul__(self, other):
        self.overwrite_descriptor(ops.matmul(self, other))
        return self

    def __getitem__(self, index):
        return ops.getitem(self, index)

    def __setitem__(self, index, value):
        # MLX: the array becomes a new lazy node; no element is mutated in place,
        # and arrays built from this one earlier keep their own handle of its old
        # descriptor, so they keep its old value.
        self.overwrite_descriptor(ops.setitem(self, index, value))

    # --- methods: each is the op of the same name on the array (python/src/array.cpp) ---
    # (``stream=`` is accepted and changes nothing: mlxref/core/device.py.)

    def reshape(self, *shape, stream=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return ops.reshape(self, tuple(shape))

    def transpose(self, *axes, stream=None):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        return ops.transpose(self, tuple(axes) if axes else None)

    def flatten(self, start_axis=0, end_axis=-1, *, stream=None):
        return ops.flatten(self, start_axis, end_axis)

    def swapaxes(self, axis1, axis2, *, stream=None): return ops.swapaxes(self, axis1, axis2)
    def moveaxis(self, source, destination, *, stream=None):
        return ops.moveaxis(self, source, destination)
    def squeeze(self, axis=None, *, stream=None): return ops.squeeze(self, axis)
    def split(self, indices_or_sections, axis=0, *, stream=None):
        return ops.split(self, indices_or_sections, axis)
    def diag(self, k=0, *, stream=None): return ops.diag(self, k)
    def diagonal(self, offset=0, axis1=0, axis2=1, stream=None):
        return ops.diagonal(self, offset, axis1, axis2)
    def view(self, dtype, *, stream=None): return ops.view(self, dtype)  # the same bytes as dtype
    def conj(self, *, stream=None): return ops.conjugate(self)

    def round(self, decimals=0, *, stream=None):
        return ops.elementwise.rounded(self, decimals, _ROUND_METHOD)

    # Reductions: ``a.sum(axis, keepdims)`` is ``mx.sum(a, axis, keepdims)``.
    def sum(self, axis=None, keepdims=False, *, stream=None): return ops.sum(self, axis, keepdims)
    def prod(self, axis=None, keepdims=False, *, stream=None):
        return ops.prod(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False, *, stream=None):
        return ops.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False, *, stream=None): return ops.max(self, axis, keepdims)
    def min(self, axis=None, keepdims=False, *, stream=None): return ops.min(self, axis, keepdims)
    def all(self, axis=None, keepdims=False, *, stream=None): return ops.all(self, axis, keepdims)
    def any(self, axis=None, keepdims=False, *, stream=None): return ops.any(self, axis, keepdims)
    def argmax(self, axis=None, keepdims=False, *, stream=None):
        return ops.argmax(self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False, *, stream=None):
        return ops.argmin(self, axis, keepdims)
    def logsumexp(self, axis=None, keepdims=False, *, stream=None):
        return ops.logsumexp(self, axis, keepdims)
    def var(self, axis=None, keepdims=False, ddof=0, *, correction=None, stream=None):
        return ops.var(self, axis, keepdims, ddof, correction=correction)
    def std(self, axis=None, keepdims=False, ddof=0, *, correction=None, stream=None):
        return ops.std(self, axis, keepdims, ddof, correction=correction)

    # Scans: ``a.cumsum(axis, reverse=, inclusive=)`` is ``mx.cumsum(a, ...)``.
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

    # Element-wise math: ``a.exp()`` is ``mx.exp(a)``.
    def abs(self, *, stream=None): return ops.abs(self)
    def square(self, *, stream=None): return ops.square(self)
    def sqrt(self, *, stream=None): return ops.sqrt(self)
    def rsqrt(self, *, stream=None): return ops.rsqrt(self)
    def reciprocal(self, *, stream=None): return ops.reciprocal(self)
    def exp(self, *, stream=None): return ops.exp(self)
    def log(self, *, stream=None): return ops.log(self)
    def log1p(self, *, stream=None): return ops.log1p(self)
    def log2(self, *, stream=None): return ops.log2(self)
    def log10(self, *, stream=None): return ops.log10(self)
    def sin(self, *, stream=None): return ops.sin(self)
    def cos(self, *, stream=None): return ops.cos(self)

    @property
    def T(self):
        return ops.transpose(self)

    @property
    def mT(self):
        """The last two axes swapped (MLX's ``matrix_transpose``)."""
        return ops.matrix_transpose(self)

    @property
    def real(self):
        """The real part (``mx.real``): float32 for complex64, else the array itself."""
        return ops.real(self)

    @property
    def imag(self):
        """The imaginary part (``mx.imag``): float32 for complex64, else zeros."""
        return ops.imag(self)

    @property
    def at(self):
        """MLX's ``x.at[index].add(v)`` and friends: updates where a repeated
        index applies every time (``ops.ArrayAt``)."""
        return ops.ArrayAt(self)

    # --- the Python protocols MLX's array binds ------------------------------------

    def __bytes__(self):
        """The elements' bytes as MLX stores them (row-major, little-endian)."""
        return _dt.to_bytes(elements(self), self.dtype)

    def __format__(self, spec):
        """A 0-d array formats as its Python scalar (``f"{x:.3f}"``); any other
        prints as ``repr`` and takes no format spec."""
        if spec and self.ndim > 0:
            raise TypeError("unsupported format string passed to mx.array.__format__")
        if self.ndim == 0:
            return format(self.item(), spec)
        return repr(self)

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


def from_data(data, shape, dtype):
    """An evaluated array holding the flat list ``data`` (trusted: no checks),
    as MLX's C++ ``array(data, shape, dtype)`` constructor."""
    a = array.__new__(array)  # (_handle_of, without the call: every scalar operand comes here)
    a._desc = _ArrayDesc(shape, dtype)
    a.set_data(data)
    return a


def placeholder(shape, dtype):
    """An array with neither data nor primitive (vmap's traced inputs, MLX's
    ``array(shape, dtype, nullptr, {})``)."""
    a = _handle_of(_ArrayDesc(shape, dtype))
    a._desc.is_tracer = True
    return a


def elements(a):
    """The flat element list of ``a``, evaluating it first (MLX's ``a.eval()``
    then ``a.data<T>()``)."""
    if a._desc.data is None:
        eval_arrays([a])
    return a._desc.data


_ROUND_METHOD = (
    "round(self, decimals: int = 0, *, stream: mlx.core.Stream | mlx.core.ThreadLocalStream | "
    "mlx.core.Device | mlx.core.DeviceType | None = None) -> mlx.core.array"
)


from . import convert, ops, printing  # noqa: E402  (they need the array class defined above)
# The tracing state and evaluation, as mlx/array.cpp includes transforms_impl.h and
# transforms.h; their modules build on the array class too.
from .transforms.eval import eval_arrays  # noqa: E402
from .transforms.tape import in_tracing, retain_graph  # noqa: E402
from .device import make_default_stream, thread_streams  # noqa: E402
