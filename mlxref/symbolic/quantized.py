"""Symbolic cases for the quantization family (ToFP8, FromFP8)."""

from .. import core as mx
from ..core.primitives import quantized as Q

from . import Case

_NOTE = "MLX defines no vjp or jvp for it; symbols go through as to_fp8(x), compared at a point"


CASES = [
    Case(Q.ToFP8, lambda x: mx.to_fp8(x.astype(mx.float32)).astype(mx.float32), ((3,),),
         raises=True, note=_NOTE),
    Case(Q.FromFP8, lambda x: mx.from_fp8(x.astype(mx.uint8), mx.float32), ((3,),),
         raises=True, note=_NOTE.replace("to_fp8", "from_fp8")),
]
