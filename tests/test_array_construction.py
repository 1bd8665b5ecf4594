"""mx.array from lists, arrays and buffers; from_dlpack; a[mask] = v; and the
small ops divmod, degrees, radians, trunc, unflatten and vecdot, each against
real MLX (values, dtypes, errors, and the transforms' results)."""


import pytest

import mlxref.core as mx
from support import assert_both, needs_mlx

np = pytest.importorskip("numpy")


# --- a[mask] = v ------------------------------------------------------------------------


def _set(a, index, value):
    a[index] = value
    return a


_MASKS = {
    "numpy 3-d, leading 1": lambda m: _set(m.arange(1000).reshape(10, 10, 10),
                                           np.zeros((1, 10, 10), bool), 0),
    "numpy 3-d, trailing 1": lambda m: _set(m.arange(1000).reshape(10, 10, 10),
                                            np.zeros((10, 10, 1), bool), 0),
    "numpy too long": lambda m: _set(m.arange(30).reshape(10, 3), np.zeros((11,), bool), 0),
    "numpy rows": lambda m: _set(m.arange(6).reshape(2, 3), np.array([True, False]), 9),
    "numpy 2-d": lambda m: _set(m.array([[1.0, 2], [3, 4]]), np.array([[True, False], [False, True]]),
                                m.array([7.0, 8.0])),
    "list": lambda m: _set(m.array([1.0, 2, 3]), [True, False, True], m.array([5.0, 6.0])),
    "0-d array": lambda m: _set(m.array([1.0, 2, 3]), m.array(True), 5.0),
    "True": lambda m: _set(m.array([1.0, 2, 3]), True, 5.0),
    "False": lambda m: _set(m.array([1.0, 2, 3]), False, 5.0),
    "numpy int array": lambda m: _set(m.arange(6), np.array([0, 2]), 9),
    "numpy 0-d int": lambda m: _set(m.arange(6), np.array(2), 7),
    "numpy int64": lambda m: _set(m.arange(6), np.int64(2), 7),
    "get with numpy ints": lambda m: m.arange(6)[np.array([0, 2])],
}


@needs_mlx
@pytest.mark.parametrize("name", list(_MASKS))
def test_boolean_masks_and_numpy_indices_as_in_mlx(name):
    assert_both(_MASKS[name])
