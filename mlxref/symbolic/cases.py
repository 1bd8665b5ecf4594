"""All symbolic cases, gathered from the family modules."""

from . import custom, elementwise, reduction, shape

CASES = list(elementwise.CASES) + shape.CASES + reduction.CASES + custom.CASES
