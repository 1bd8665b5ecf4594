"""Reductions, scans, softmax, logsumexp, matmul and scatter-add, dtype by dtype.

What MLX's CPU build stores: the result dtypes of sum and prod (integers widen
to 32 bits), the accumulators (float32 for the sums, products and matrix
products of float32, float16 and bfloat16; the dtype itself for a cumsum, a
scatter-add and a half-precision softmax), overflow to inf and wrap-around on
the way, nan and signed zeros. The rule tests run the same assertions on
mlxref and, when it is installed, on real MLX, with expected values worked out
here from the inputs (``_f32``, ``_f16``, ``_bf16`` round as C does). The last
tests compare mlxref with MLX over every dtype at its boundary values.
"""

import math

import pytest
from support import real_mx

import mlxref.core as mx

LIBS = [mx] + ([real_mx] if real_mx is not None else [])
inf, nan = math.inf, math.nan


def lib_id(lib):
    return "mlxref" if lib is mx else "mlx"


each_lib = pytest.mark.parametrize("m", LIBS, ids=lib_id)


# --- matmul ------------------------------------------------------------------------------


@each_lib
@pytest.mark.parametrize("name", ["int32", "uint8", "bool_"])
def test_integer_matmul_is_refused(m, name):
    a = m.array([[1, 2], [3, 4]], getattr(m, name))
    with pytest.raises(ValueError, match=r"\[matmul\] Only inexact types are supported"):
        m.matmul(a, a)
