"""All symbolic cases, gathered from the family modules."""

from . import elementwise

CASES = list(elementwise.CASES)

from . import shape  # noqa: E402

CASES += shape.CASES

from . import reduction  # noqa: E402

CASES += reduction.CASES
