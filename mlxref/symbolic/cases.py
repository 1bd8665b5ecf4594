"""All symbolic cases, gathered from the family modules."""

from . import custom, elementwise, reduction, shape, sort

CASES = list(elementwise.CASES) + shape.CASES + reduction.CASES + sort.CASES + custom.CASES
