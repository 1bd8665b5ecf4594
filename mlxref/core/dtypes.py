"""MLX's fourteen dtypes, what each one stores, and MLX's type promotion.

Read alongside: mlx/dtype.h and mlx/dtype.cpp (``Dtype``, ``Dtype::Category``,
the promotion table behind ``promote_types``, ``issubdtype``) and
python/src/ops.cpp (``finfo``, ``iinfo``, ``result_type``, ``can_cast``). How
Python scalars are "weakly" typed is the conversion's: mlxref/core/convert.py.

An array's elements are Python numbers holding exactly what its dtype holds:

- ``bool``: ``True``/``False``;
- the eight integer types: Python ints wrapped to the type's width (two's
  complement for the signed ones), as a C integer stores them;
- ``float16``, ``bfloat16``, ``float32``: Python floats (doubles) that are
  exactly representable in the type, rounded to nearest even, overflowing to
  ±inf and underflowing through subnormals to ±0 (float16 and bfloat16 round
  the float32 value, as MLX's types convert only from float);
- ``float64``: Python floats;
- ``complex64``: Python complex numbers whose two parts are float32 values.

``Dtype.store(elements)`` is the one place where a list of results becomes
what the dtype holds. Evaluation calls it on each primitive's outputs (see
``eval_arrays`` in mlxref/core/transforms/eval.py), and ``mx.array`` on its
input, so a primitive may compute in double or with unbounded ints and the
stored value is still the value MLX's kernel stores. SymPy expressions are never rounded, so
the symbolic checks stay exact.
"""

import array as _pyarray
import enum
import functools
import math
import struct
import sys

from .scalar import is_symbolic


# --- storing elements as a dtype holds them -------------------------------------------


_NUMBER_TYPES = frozenset((bool, int, float, complex))


def holds_symbolic(data):
    """True when ``data`` holds SymPy expressions, which are stored as they are."""
    return "sympy" in sys.modules and not set(map(type, data)) <= _NUMBER_TYPES


def _each(data, one):
    """``one`` on each number of ``data``; SymPy expressions left as they are."""
    return [v if is_symbolic(v) else one(v) for v in data]


def _store_bool(data):
    if holds_symbolic(data):
        return _each(data, bool)
    return list(map(bool, data))


def _integer_store(code, bits, signed):
    """The store of an integer type: C's range check first, wrapping only if needed."""
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)

    def wrap(v):
        v = int(v) & mask
        return v - (1 << bits) if signed and v >= half else v

    def store(data):
        try:
            _pyarray.array(code, data)  # in C: every element an int in range?
            return data
        except (OverflowError, TypeError):
            return _each(data, wrap)

    return store, wrap


def _store_float64(data):
    if holds_symbolic(data):
        return _each(data, float)
    return _pyarray.array("d", data).tolist()


# C's (float) cast, nearest even and ±inf on overflow, done by ``struct`` in
# native mode ("f", no byte-order prefix): per element it costs about half of
# ``array("f", data)``, which parses each element as a function argument.
_FLOAT32 = struct.Struct("f")


@functools.lru_cache(maxsize=256)
def _float32_struct(n):
    return struct.Struct(f"{n}f")


def _store_float32(data):
    if len(data) == 1 and type(data[0]) is float:  # a 0-d result: one rounding, no more
        return [_FLOAT32.unpack(_FLOAT32.pack(data[0]))[0]]
    if holds_symbolic(data):
        return _each(data, _round_float32)
    try:
        packed = _float32_struct(len(data)).pack(*data)
    except struct.error:  # not a real number: array raises the usual TypeError
        packed = data
    return _pyarray.array("f", packed).tolist()


def _round_float32(v):
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(v))[0]
    except struct.error:  # not a real number: array raises the usual TypeError
        return _pyarray.array("f", (v,))[0]


def _round_float16(v):
    try:
        return struct.unpack("e", struct.pack("e", _round_float32(v)))[0]
    except (OverflowError, struct.error):  # beyond 65520 (a float or an int) is infinity
        return math.copysign(math.inf, v)


def _store_float16(data):
    """float16 as MLX's CPU build rounds to it: to float32 first, then to
    float16 from there (mlx/types/fp16.h converts only from float). A double
    rounds twice, as in MLX: 1 + 2**-11 + 2**-40 gives 1.0, not 1.0009765625."""
    if holds_symbolic(data):
        return _each(data, _round_float16)
    data = _pyarray.array("f", data)
    fmt = f"{len(data)}e"
    try:
        return list(struct.unpack(fmt, struct.pack(fmt, *data)))
    except (OverflowError, struct.error):
        return list(map(_round_float16, data))


def _round_bfloat16(v):
    return _store_bfloat16([v])[0]


def _store_bfloat16(data):
    """bfloat16 is float32's top 16 bits: round the float32 to nearest even there."""
    if holds_symbolic(data):
        return _each(data, _round_bfloat16)
    bits = _pyarray.array("I", _pyarray.array("f", data).tobytes())
    for i, b in enumerate(bits):
        if b & 0x7FFFFFFF > 0x7F800000:  # NaN stays a (quiet) NaN
            bits[i] = (b | 0x00400000) & 0xFFFF0000
        else:
            bits[i] = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return _pyarray.array("f", bits.tobytes()).tolist()


def _store_complex64(data):
    if holds_symbolic(data):
        return _each(data, lambda v: _store_complex64([v])[0])
    parts = []
    for v in data:
        v = complex(v)
        parts += (v.real, v.imag)
    parts = _pyarray.array("f", parts).tolist()
    return [complex(r, i) for r, i in zip(parts[::2], parts[1::2])]


# --- the dtypes ------------------------------------------------------------------------


class DtypeCategory(enum.Enum):
    """MLX's ``Dtype::Category``: the nodes of the tree dtypes sit under."""

    complexfloating = 0
    floating = 1
    inexact = 2
    signedinteger = 3
    unsignedinteger = 4
    integer = 5
    number = 6
    generic = 7

    def __repr__(self):
        return f"DtypeCategory.{self.name}"

    __str__ = __repr__


# Each category's parent (the tree in MLX's DtypeCategory docstring).
_PARENT = {
    DtypeCategory.complexfloating: DtypeCategory.inexact,
    DtypeCategory.floating: DtypeCategory.inexact,
    DtypeCategory.inexact: DtypeCategory.number,
    DtypeCategory.signedinteger: DtypeCategory.integer,
    DtypeCategory.unsignedinteger: DtypeCategory.integer,
    DtypeCategory.integer: DtypeCategory.number,
    DtypeCategory.number: DtypeCategory.generic,
    DtypeCategory.generic: None,
}


class Dtype:
    """A dtype: its name, its size in bytes, its category and how it stores elements.

    ``kind`` is one letter, as in MLX's ``Dtype::Kind``: ``b`` bool, ``u``
    unsigned, ``i`` signed, ``f`` floating, ``V`` bfloat16, ``c`` complex.
    """

    __slots__ = ("name", "size", "kind", "category", "store", "_one")

    def __init__(self, name, size, kind, category, store, one):
        self.name, self.size, self.kind, self.category = name, size, kind, category
        self.store = store  # store(list) -> the list as this dtype holds it
        self._one = one

    def cast(self, value):
        """One Python number as this dtype holds it (``store`` for one element)."""
        if type(value) in _NUMBER_TYPES:  # the common case, without a call
            return self._one(value)
        return value if is_symbolic(value) else self._one(value)

    def __repr__(self):
        return f"mlx.core.{self.name}"

    __str__ = __repr__

    def __reduce__(self):  # pickle and copy give back the one instance
        return (by_name, (self.name,))

    # The questions mlxref's ops ask most, in MLX's words (issubdtype).
    @property
    def is_float(self):
        """Real floating: float16, bfloat16, float32, float64."""
        return self.category is DtypeCategory.floating

    @property
    def is_complex(self):
        return self.category is DtypeCategory.complexfloating

    @property
    def is_inexact(self):
        return self.category in (DtypeCategory.floating, DtypeCategory.complexfloating)

    @property
    def is_integer(self):
        return self.category in (DtypeCategory.signedinteger, DtypeCategory.unsignedinteger)

    @property
    def is_unsigned(self):
        return self.category is DtypeCategory.unsignedinteger


def _integer(name, code, size, signed):
    store, wrap = _integer_store(code, 8 * size, signed)
    category = DtypeCategory.signedinteger if signed else DtypeCategory.unsignedinteger
    return Dtype(name, size, "i" if signed else "u", category, store, wrap)


bool_ = Dtype("bool", 1, "b", DtypeCategory.generic, _store_bool, bool)
uint8 = _integer("uint8", "B", 1, False)
uint16 = _integer("uint16", "H", 2, False)
uint32 = _integer("uint32", "I", 4, False)
uint64 = _integer("uint64", "Q", 8, False)
int8 = _integer("int8", "b", 1, True)
int16 = _integer("int16", "h", 2, True)
int32 = _integer("int32", "i", 4, True)
int64 = _integer("int64", "q", 8, True)
float16 = Dtype("float16", 2, "f", DtypeCategory.floating, _store_float16, _round_float16)
bfloat16 = Dtype("bfloat16", 2, "V", DtypeCategory.floating, _store_bfloat16, _round_bfloat16)
float32 = Dtype("float32", 4, "f", DtypeCategory.floating, _store_float32, _round_float32)
float64 = Dtype("float64", 8, "f", DtypeCategory.floating, _store_float64, float)
complex64 = Dtype("complex64", 8, "c", DtypeCategory.complexfloating, _store_complex64,
                  lambda v: _store_complex64([v])[0])

# In the order of MLX's Dtype::Val, which is the order of the promotion table.
ALL = (bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64,
       float16, float32, float64, bfloat16, complex64)
_BY_NAME = {d.name: d for d in ALL}


def by_name(name):
    return _BY_NAME[name]


# --- bytes: the elements as MLX lays them out in memory (little-endian) --------------

_STRUCT_CODES = {bool_: "?", uint8: "B", uint16: "H", uint32: "I", uint64: "Q", int8: "b",
                 int16: "h", int32: "i", int64: "q", float16: "e", float32: "f",
                 float64: "d", bfloat16: "H", complex64: "f"}


def to_bytes(data, dtype):
    """The bytes of a flat list of ``dtype`` elements, as MLX stores them on
    a little-endian CPU (bfloat16: float32's top 16 bits; complex64: real
    then imaginary float32). A nan's payload beyond what a Python float
    keeps is not preserved (mlxref holds floats as Python floats)."""
    code = _STRUCT_CODES[dtype]
    if dtype is bfloat16:
        data = [b >> 16 for b in _pyarray.array("I", _pyarray.array("f", data).tobytes())]
    elif dtype is complex64:
        data = [part for z in data for part in (z.real, z.imag)]
    return struct.pack(f"<{len(data)}{code}", *data)


def from_bytes(raw, dtype):
    """The flat list of ``dtype`` elements that ``raw`` (``to_bytes``'s layout) holds."""
    code = _STRUCT_CODES[dtype]
    n = len(raw) // struct.calcsize(f"<{code}")
    values = struct.unpack(f"<{n}{code}", raw)
    if dtype is bfloat16:
        bits = _pyarray.array("I", [b << 16 for b in values])
        return _pyarray.array("f", bits.tobytes()).tolist()
    if dtype is complex64:
        return [complex(values[i], values[i + 1]) for i in range(0, n, 2)]
    return list(values)


# --- promotion -----------------------------------------------------------------------

# MLX's promotion table (mlx/dtype.cpp), row and column in ``ALL``'s order,
# each entry a dtype's index in ``ALL``. Read a row as "this dtype meets ...".
_b, _u8, _u16, _u32, _u64, _i8, _i16, _i32, _i64, _f16, _f32, _f64, _bf16, _c64 = range(14)
_PROMOTION = (
    # b     u8    u16   u32   u64   i8    i16   i32   i64   f16   f32   f64   bf16  c64
    (_b,   _u8,  _u16, _u32, _u64, _i8,  _i16, _i32, _i64, _f16, _f32, _f64, _bf16, _c64),  # b
    (_u8,  _u8,  _u16, _u32, _u64, _i16, _i16, _i32, _i64, _f16, _f32, _f64, _bf16, _c64),  # u8
    (_u16, _u16, _u16, _u32, _u64, _i32, _i32, _i32, _i64, _f16, _f32, _f64, _bf16, _c64),  # u16
    (_u32, _u32, _u32, _u32, _u64, _i64, _i64, _i64, _i64, _f16, _f32, _f64, _bf16, _c64),  # u32
    (_u64, _u64, _u64, _u64, _u64, _f32, _f32, _f32, _f32, _f16, _f32, _f64, _bf16, _c64),  # u64
    (_i8,  _i16, _i32, _i64, _f32, _i8,  _i16, _i32, _i64, _f16, _f32, _f64, _bf16, _c64),  # i8
    (_i16, _i16, _i32, _i64, _f32, _i16, _i16, _i32, _i64, _f16, _f32, _f64, _bf16, _c64),  # i16
    (_i32, _i32, _i32, _i64, _f32, _i32, _i32, _i32, _i64, _f16, _f32, _f64, _bf16, _c64),  # i32
    (_i64, _i64, _i64, _i64, _f32, _i64, _i64, _i64, _i64, _f16, _f32, _f64, _bf16, _c64),  # i64
    (_f16, _f16, _f16, _f16, _f16, _f16, _f16, _f16, _f16, _f16, _f32, _f64, _f32, _c64),  # f16
    (_f32, _f32, _f32, _f32, _f32, _f32, _f32, _f32, _f32, _f32, _f32, _f64, _f32, _c64),  # f32
    (_f64, _f64, _f64, _f64, _f64, _f64, _f64, _f64, _f64, _f64, _f64, _f64, _f64, _c64),  # f64
    (_bf16, _bf16, _bf16, _bf16, _bf16, _bf16, _bf16, _bf16, _bf16, _f32, _f32, _f64, _bf16, _c64),  # bf16
    (_c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64, _c64),  # c64
)
_INDEX = {d: i for i, d in enumerate(ALL)}


def promote_types(a, b):
    """MLX's ``promote_types`` (C++): the dtype ``a`` and ``b`` meet in."""
    return ALL[_PROMOTION[_INDEX[a]][_INDEX[b]]]


# --- casts ------------------------------------------------------------------------------

_INT32_MIN, _INT64_MIN = -(2**31), -(2**63)


def _truncate(v, bits):
    """A float to a ``bits``-wide signed integer as x86-64's ``cvttss2si`` does it:
    toward zero, and nan, ±inf or a value out of range to the type's minimum."""
    low = -(1 << (bits - 1))
    if v != v or not low <= v < -low:
        return low
    return int(v)


def _float_to(dtype):
    """How MLX's CPU build on x86-64 casts a float to the integer type ``dtype``.

    The compiler's conversion of one element: 8- and 16-bit types go through
    int32 and keep its low bits; uint32 goes through int64 and keeps its low
    32 bits; uint64 converts values below 2**63 as signed and the rest
    shifted down by 2**63 and flipped back. (Apple silicon saturates instead;
    mlxref follows the CPU build its tests run against.)

    Where a value is out of uint32's range (nan, -inf, below -2**31, or a
    double from 2**32 up), MLX's vectorized copy of a contiguous float32,
    float64 or bfloat16 run of 4 or 8 elements gives other bits
    (2147483648 or 0), so its result depends on the element's position in
    memory; mlxref gives every element the one-element result above.
    """
    if dtype.size < 4:
        return lambda v: _truncate(v, 32)
    if dtype is uint32:
        return lambda v: _truncate(v, 64)  # the store keeps the low 32 bits
    bits = 8 * dtype.size
    if not dtype.is_unsigned:
        return lambda v: _truncate(v, bits)
    top = 1 << (bits - 1)
    return lambda v: _truncate(v - top, bits) ^ top if v >= top else _truncate(v, bits)


_DOUBLE_EXACT = 2**53  # every int up to here is a double, so float(int) rounds once


def _nearest_float32(v):
    """An int beyond 2**53 rounded once to float32, to nearest even, as C's
    ``(float)`` of an int64 or uint64 rounds it. ``float(v)`` would round twice
    (to double, then to float32): 2**60 + 2**36 + 1 would become 2**60."""
    shift = abs(v).bit_length() - 24
    q, r = divmod(abs(v), 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << shift), v)


def convert(data, source, dtype):
    """Elements of dtype ``source`` cast to ``dtype`` (``astype``'s forward rule),
    ready for ``dtype.store``. ``source`` is None for Python values
    (``mx.array``): each converts the way its own type does.

    What MLX's copy kernel (mlx/backend/cpu/copy.cpp, ``static_cast``) does:
    a complex number is true when either part is nonzero, and gives its real
    part to every other real type; a float goes to an integer type as
    ``_float_to`` says; bools become 0 and 1; an int64 or uint64 rounds once
    to float32, and from there to float16 or bfloat16 (whose stores round a
    float32), as MLX's float16 and bfloat16 types convert only from float.
    """
    if holds_symbolic(data):
        return _each(data, lambda v: convert([v], source, dtype)[0])
    if dtype is bool_:
        return [v != 0 for v in data]
    if not dtype.is_complex and (source is None or source.is_complex):
        data = [v.real if type(v) is complex else v for v in data]  # the real part
    if dtype.is_integer:
        if source is None or source.is_inexact:
            to_integer = _float_to(dtype)
            data = [to_integer(v) if type(v) is float else v for v in data]
        if source is None or source is bool_:
            data = [int(v) if type(v) is bool else v for v in data]
    elif dtype.is_inexact and dtype is not float64 and source in (None, int64, uint64):
        # int64, uint64 or Python ints: round once to float32 (floats are already exact).
        data = [_nearest_float32(v) if type(v) is int and not -_DOUBLE_EXACT <= v <= _DOUBLE_EXACT
                else v for v in data]
    return data


# --- categories and queries ---------------------------------------------------------

complexfloating = DtypeCategory.complexfloating
floating = DtypeCategory.floating
inexact = DtypeCategory.inexact
signedinteger = DtypeCategory.signedinteger
unsignedinteger = DtypeCategory.unsignedinteger
integer = DtypeCategory.integer
number = DtypeCategory.number
generic = DtypeCategory.generic


def issubdtype(a, b):
    """``mx.issubdtype(a, b)``: ``a`` (a Dtype or category) lies under ``b``.

    A dtype is under itself and under the categories above it: float32 is
    floating, inexact, number and generic; bool is only generic; a category is
    never under a Dtype.
    """
    for k, arg in enumerate((a, b)):
        if arg is None:  # the binding takes no None
            raise _binding_error("issubdtype", f"arg{k + 1}", "a Dtype or a DtypeCategory", arg)
        if not isinstance(arg, (Dtype, DtypeCategory)):
            raise ValueError(f"[issubdtype] Received invalid type for {('first', 'second')[k]} "
                             "input.")
    if isinstance(b, Dtype):
        return a is b
    category = a.category if isinstance(a, Dtype) else a
    while category is not None:
        if category is b:
            return True
        category = _PARENT[category]
    return False


_KINDS = {
    "bool": lambda d: d is bool_,
    "signed integer": lambda d: d.category is signedinteger,
    "unsigned integer": lambda d: d.category is unsignedinteger,
    "integral": lambda d: d.is_integer,
    "real floating": lambda d: d.is_float,
    "complex floating": lambda d: d.is_complex,
    "numeric": lambda d: d is not bool_,
}


def isdtype(dtype, kind):
    """``mx.isdtype(dtype, kind)``: the array API's test of a dtype against kinds."""
    if not isinstance(dtype, Dtype) or kind is None:
        raise _binding_error("isdtype", "dtype" if kind is not None else "kind",
                             "a Dtype" if kind is not None else "not None",
                             dtype if kind is not None else kind)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, Dtype):
            if dtype is k:
                return True
        elif isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"[isdtype] Unknown data type kind: {k!r}.")
            if _KINDS[k](dtype):
                return True
        else:
            raise ValueError(
                "[isdtype] `kind` must be a dtype, a string, or a tuple of dtypes and strings."
            )
    return False


def result_type(*arrays_and_dtypes):
    """``mx.result_type``: the dtype the arrays and dtypes promote to."""
    if not arrays_and_dtypes:
        raise ValueError("[result_type] At least one array or dtype is required.")
    out = None
    for x in arrays_and_dtypes:
        d = x if isinstance(x, Dtype) else getattr(x, "dtype", None)
        if not isinstance(d, Dtype):
            raise ValueError("[result_type] Inputs must be arrays or dtypes.")
        out = d if out is None else promote_types(out, d)
    return out


def can_cast(from_, to):
    """``mx.can_cast``: promoting ``from_`` with ``to`` gives back ``to``."""
    if from_ is None or not isinstance(to, Dtype):
        raise _binding_error("can_cast", "from_" if from_ is None else "to",
                             "an array or a Dtype" if from_ is None else "a Dtype",
                             from_ if from_ is None else to)
    if not isinstance(from_, Dtype) and not isinstance(getattr(from_, "dtype", None), Dtype):
        raise ValueError("[can_cast] `from_` must be an array or a dtype.")
    return promote_types(result_type(from_), to) is to


def _binding_error(op, name, expected, value):
    """The TypeError MLX's binding of ``op`` raises for a value of ``name`` it
    does not take (its first words are MLX's): ops.common's
    ``incompatible_argument``, written again here because the ops import this
    module and tests/test_structure.py keeps modules from importing each other."""
    return TypeError(f"{op}(): incompatible function arguments: {name} must be {expected}, "
                     f"got {value!r}.")


class finfo:
    """``mx.finfo(dtype)``: the limits of a floating-point dtype."""

    _BITS = {float16: (16, 10, 5), bfloat16: (16, 7, 8), float32: (32, 23, 8),
             float64: (64, 52, 11), complex64: (32, 23, 8)}

    def __init__(self, dtype):
        if not isinstance(dtype, Dtype):
            raise _binding_error("finfo", "arg", "a Dtype", dtype)
        if not dtype.is_inexact:
            raise ValueError(f"[finfo] dtype {dtype.name} is not inexact.")
        self.dtype = float32 if dtype is complex64 else dtype
        self.bits, mantissa, exponent = self._BITS[dtype]
        emax = 2 ** (exponent - 1) - 1
        self.max = (2 - 2.0**-mantissa) * 2.0**emax
        self.min = -self.max
        self.eps = 2.0**-mantissa
        self.smallest_normal = 2.0 ** (1 - emax)

    def __repr__(self):
        return f"finfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype.name})"


class iinfo:
    """``mx.iinfo(dtype)``: the range of an integer dtype."""

    def __init__(self, dtype):
        if not isinstance(dtype, Dtype):
            raise _binding_error("iinfo", "arg", "a Dtype", dtype)
        if not dtype.is_integer:
            raise ValueError(
                f"[iinfo] Only integer types supported but {dtype.name} was provided"
            )
        self.dtype = dtype
        bits = 8 * dtype.size
        self.min = -(2 ** (bits - 1)) if not dtype.is_unsigned else 0
        self.max = 2 ** (bits - 1) - 1 if not dtype.is_unsigned else 2**bits - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


# --- fp8 (e4m3): the 8-bit floats MLX keeps in uint8 arrays ----------------------------


def fp8_e4m3_to_float(code):
    """The value of the fp8 (e4m3, "fn": no infinities) byte ``code``: 1 sign
    bit, 4 exponent bits (bias 7), 3 mantissa bits; 0x7F and 0xFF are nan (0xFF with its sign).
    Exact in float16, bfloat16 and float32 (mlx/backend/cpu/unary_ops.h ``FromFP8``)."""
    magnitude = code & 0x7F
    exponent, mantissa = magnitude >> 3, magnitude & 7
    if magnitude == 0x7F:
        value = math.nan
    elif exponent == 0:
        value = mantissa * 2.0**-9
    else:
        value = (8 + mantissa) * 2.0 ** (exponent - 10)
    return -value if code & 0x80 else value


def float_to_fp8_e4m3(value):
    """The fp8 (e4m3) byte MLX's CPU kernel gives for ``value`` (a float32,
    float16 or bfloat16 element), bit for bit (mlx/backend/cpu/unary_ops.h
    ``ToFP8``): round to nearest even, saturating at ±448; infinities and
    nan become ±448 too (0x7E with the sign bit)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    sign = bits & 0x80000000
    bits ^= sign
    if bits >= 543 << 21:  # |value| >= 464 (halfway to 480), inf or nan: saturate
        out = 0x7E
    elif bits < 121 << 23:  # |value| < 2**-6: subnormal in e4m3, rounded by a float32 add
        low = struct.unpack("<f", struct.pack("<I", bits))[0] + 2.0**14
        out = (struct.unpack("<I", struct.pack("<f", low))[0] - (141 << 23)) & 0xFF
    else:  # normal: rebias the exponent, round the 20 dropped bits to nearest even
        high = bits + ((7 - 127) << 23 & 0xFFFFFFFF) + 0x7FFFF + ((bits >> 20) & 1)
        out = (high & 0xFFFFFFFF) >> 20 & 0xFF
    return out | sign >> 24
