"""All symbolic cases, gathered from the family modules."""

from . import custom, elementwise, quantized, reduction, shape

CASES = list(elementwise.CASES) + shape.CASES + reduction.CASES + custom.CASES + quantized.CASES
