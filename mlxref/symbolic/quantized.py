"""Symbolic cases for the quantization family (ToFP8, FromFP8) and for
``Load``, the node a .npy file loaded by path is until it is evaluated."""

import os
import tempfile

from .. import core as mx
from ..core.primitives import creation as C
from ..core.primitives import quantized as Q

from . import Case

_NOTE = "MLX defines no vjp or jvp for it; symbols go through as to_fp8(x), compared at a point"
_FOLDER = []  # one temporary folder per process, removed at exit by its finalizer


def _loaded():
    """Three constants, as a lazy ``Load`` node of a .npy file."""
    if not _FOLDER:
        _FOLDER.append(tempfile.TemporaryDirectory(prefix="mlxref-symbolic-"))
    path = os.path.join(_FOLDER[0].name, "constants.npy")
    mx.save(path, mx.array([0.5, -2.0, 3.0]))
    return mx.load(path)


CASES = [
    Case(C.Load, lambda x: x * _loaded(), ((3,),),
         note="no inputs: never on a tape, so its own rules never run"),
    Case(Q.ToFP8, lambda x: mx.to_fp8(x.astype(mx.float32)).astype(mx.float32), ((3,),),
         raises=True, note=_NOTE),
    Case(Q.FromFP8, lambda x: mx.from_fp8(x.astype(mx.uint8), mx.float32), ((3,),),
         raises=True, note=_NOTE.replace("to_fp8", "from_fp8")),
]
