"""``python -m mlxref.manual``: build the manual (see ``mlxref/manual/__init__.py``)."""

from . import main

raise SystemExit(main())
