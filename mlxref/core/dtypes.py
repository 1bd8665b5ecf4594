"""The five dtypes mlxref knows, and MLX's type-promotion rules.

Read alongside: mlx/dtype.h and mlx/dtype.cpp (``promote_types``), and
python/src/convert.cpp for how Python scalars are "weakly" typed.

Elements are always stored as Python ``bool``, ``int`` or ``float`` (a double),
whatever the dtype says: the dtype decides the *type* of a result and its
``itemsize`` for memory accounting, not the precision of the arithmetic.
"""


class Dtype:
    """A dtype: its name, its size in bytes and its category."""

    __slots__ = ("name", "size", "category", "cast")

    def __init__(self, name, size, category):
        self.name = name
        self.size = size
        self.category = category  # "bool", "int" or "float"
        # cast(value): one Python scalar as this dtype's Python type
        self.cast = {"float": float, "int": int, "bool": bool}[category]

    def __repr__(self):
        return f"mlx.core.{self.name}"

    __str__ = __repr__

    @property
    def is_float(self):
        return self.category == "float"

    @property
    def is_integer(self):
        return self.category == "int"

bool_ = Dtype("bool", 1, "bool")
int32 = Dtype("int32", 4, "int")
int64 = Dtype("int64", 8, "int")
float32 = Dtype("float32", 4, "float")
float64 = Dtype("float64", 8, "float")

ALL = (bool_, int32, int64, float32, float64)

# MLX's promotion lattice for these five types: bool < int32 < int64 < float32 < float64.
# An integer meets a float in the float (int64 + float32 is float32, as in MLX).
_RANK = {bool_: 0, int32: 1, int64: 2, float32: 3, float64: 4}


def promote_types(a, b):
    """``mx.promote_types``: the smallest dtype both ``a`` and ``b`` convert to."""
    return a if _RANK[a] >= _RANK[b] else b


def default_dtype_of_scalar(value):
    """The dtype ``mx.array(value)`` gives a Python scalar."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32
    return float32


def weak_scalar_dtype(value, other):
    """The dtype a Python scalar takes when it meets an array of dtype ``other``.

    Python scalars are weakly typed (python/src/convert.cpp): they adopt the
    array's dtype when they fit its category, so ``int32 array * 2`` stays int32
    and ``float64 array * 2.5`` stays float64, but ``int32 array * 2.5`` is
    float32 and ``bool array + 1`` is int32.
    """
    if isinstance(value, bool):
        return other
    if isinstance(value, int):
        return other if other.category != "bool" else int32
    return other if other.is_float else float32


# MLX's category tree (mlx/dtype.h ``Dtype::Category``): each category's parent.
_CATEGORY_PARENT = {
    "floating": "inexact",
    "inexact": "number",
    "signedinteger": "integer",
    "integer": "number",
    "number": "generic",
    "generic": None,
}
_LEAF_CATEGORY = {"bool": "generic", "int": "signedinteger", "float": "floating"}


def issubdtype(a, b):
    """``mx.issubdtype(a, b)``: ``a`` (a Dtype or category) lies under ``b``.

    A dtype is under itself and under the categories above it: float32 is
    floating, inexact, number and generic; a category is never under a Dtype.
    """
    if isinstance(b, Dtype):
        return a is b
    category = _LEAF_CATEGORY[a.category] if isinstance(a, Dtype) else a
    while category is not None:
        if category == b:
            return True
        category = _CATEGORY_PARENT[category]
    return False


# Category markers, as in mx.floating / mx.integer (used with issubdtype).
floating = "floating"
inexact = "inexact"
integer = "integer"
signedinteger = "signedinteger"
number = "number"
generic = "generic"
