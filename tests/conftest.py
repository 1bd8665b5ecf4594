"""pytest's assertion messages show mlxref arrays by their values.

pytest prints the operands of a failing ``assert`` with ``reprlib``, which
picks a method by the type's name: ``repr_array``, written for the standard
library's ``array.array``. mlxref's array is called ``array`` too, as MLX's
is, so without this the message reads ``<[ValueError(...) raised in repr()]
array object at 0x...>`` and hides the values a student needs. Here
``repr_array`` keeps its job for ``array.array`` and hands any other
``array`` to its own ``repr``. This file ships in student copies, and the
grader's child loads it from its copy of the reference (mlxref/course/sandbox.py).
"""

import array as _stdlib_array

from _pytest._io import saferepr as _saferepr

_stdlib_repr_array = _saferepr.SafeRepr.repr_array


def _repr_array(self, x, level):
    if isinstance(x, _stdlib_array.array):
        return _stdlib_repr_array(self, x, level)
    return self.repr_instance(x, level)


_saferepr.SafeRepr.repr_array = _repr_array
