"""The README and the docstrings' examples run as doctests, so no printed number can drift."""

import doctest
import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

MODULES = [
    "mlxref.utils",
    "mlxref.testing",
    "mlxref.core.transforms.vjp",
    "mlxref.core.transforms.jvp",
    "mlxref.core.transforms.grad",
    "mlxref.core.transforms.export",
    "mlxref.core.graph_utils",
]


def test_readme_examples():
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False, verbose=False)
    assert result.attempted > 10
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
