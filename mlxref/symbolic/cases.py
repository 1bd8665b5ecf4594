"""All symbolic cases, gathered from the family modules."""

from . import (conv, custom, elementwise, factorizations, fft, quantized, reduction, shape,
               solvers, sort)

CASES = (list(elementwise.CASES) + shape.CASES + reduction.CASES + sort.CASES + custom.CASES
         + quantized.CASES + conv.CASES + factorizations.CASES + solvers.CASES + fft.CASES)
