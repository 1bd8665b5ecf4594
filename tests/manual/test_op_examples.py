"""Every public op's docstring describes it and ends with an example that
prints, on mlxref and on real MLX, what the docstring says
(``mlxref.manual.examples``); and the checker catches a wrong example."""

from types import SimpleNamespace

import pytest

from mlxref.manual import catalogue, examples

OPS = catalogue.public_ops()


def _failures_text(failures):
    return "\n".join(str(f) for f in failures)


def test_every_op_has_a_description_and_an_example():
    assert examples.missing(OPS) == []


def test_every_example_prints_what_it_shows_on_mlxref():
    failures = examples.check(OPS)
    assert not failures, _failures_text(failures)


@pytest.mark.mlx
def test_every_example_prints_what_it_shows_on_real_mlx():
    real = pytest.importorskip("mlx.core")
    failures = examples.check(OPS, real)
    assert not failures, _failures_text(failures)


def _op(name, doc):
    def function(a, /, *, stream=None):
        pass

    function.__doc__ = doc
    return SimpleNamespace(name=name, function=function)


RIGHT = '''``mx.fake``: a test.

    >>> mx.add(mx.array([1, 2]), 3)
    array([4,
           5], dtype=int32)
'''
WRONG = '''``mx.fake``: a test.

>>> x = mx.array([1, 2])
>>> mx.add(x, 3)
array([4, 6], dtype=int32)
>>> mx.sin(mx.array(0.0))
array(0, dtype=float32)
>>> mx.reshape(x, (3,))
array([1, 2, 3], dtype=int32)
'''


def test_a_wrong_expected_output_and_an_unexpected_error_are_failures():
    assert examples.check([_op("right", RIGHT)]) == []  # whitespace is normalised
    failures = examples.check([_op("right", RIGHT), _op("wrong", WRONG)])
    assert [(f.op, f.statement, f.expected, f.got) for f in failures] == [
        ("wrong", "mx.add(x, 3)", "array([4, 6], dtype=int32)", "array([4, 5], dtype=int32)"),
        ("wrong", "mx.reshape(x, (3,))", "array([1, 2, 3], dtype=int32)",
         "ValueError: [reshape] Cannot reshape array of size 2 into shape (3)."),
    ]
    assert str(failures[0]) == ("wrong: >>> mx.add(x, 3)  expected array([4, 6], dtype=int32)"
                                "  got array([4, 5], dtype=int32)")


def test_the_library_given_is_the_one_that_runs():
    # A stand-in library whose add is off by one: the example fails on it.
    offbyone = SimpleNamespace(array=lambda v: v, add=lambda a, b: [x + b + 1 for x in a])
    doc = "``mx.fake``: a test.\n\n>>> mx.add(mx.array([1, 2]), 3)\n[4, 5]\n"
    assert examples.check([_op("fake", doc)], SimpleNamespace(
        array=lambda v: v, add=lambda a, b: [x + b for x in a])) == []
    assert [f.got for f in examples.check([_op("fake", doc)], offbyone)] == ["[5, 6]"]


def test_an_example_calling_an_op_the_library_lacks_is_skipped_there():
    # mlxref's own random.bits: MLX's Python API has no such name, so its example cannot
    # run there; an alias (getitem, dynamic_slice) whose example calls another op runs.
    library = SimpleNamespace(array=lambda v: v, add=lambda a, b: [x + b for x in a],
                              random=SimpleNamespace())
    own = _op("random.bits", "``mx.random.bits``: a test.\n\n>>> mx.random.bits(2)\n[0, 0]\n")
    alias = _op("plus", "``mx.plus``: a test.\n\n>>> mx.add(mx.array([1]), 1)\n[3]\n")
    assert not examples.runs_on(library, own) and examples.runs_on(library, alias)
    assert [f.op for f in examples.check([own, alias], library)] == ["plus"]  # it ran
    assert examples.check([own], None) != []  # on mlxref it runs (and this one is wrong)


def test_an_op_without_a_docstring_or_an_example_is_missing():
    ops = [_op("described", RIGHT), _op("bare", None),
           _op("no_example", "``mx.no_example``: says what it does, shows nothing.")]
    assert examples.missing(ops) == ["bare", "no_example"]
    assert [examples.lacks(op) for op in ops] == [None, "description", "example"]


def test_the_command_prints_a_line_per_failure_and_a_summary(monkeypatch, capsys):
    ops = [_op("right", RIGHT), _op("wrong", WRONG), _op("bare", None)]
    monkeypatch.setattr(catalogue, "public_ops", lambda: ops)
    assert examples.main([]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "wrong: >>> mx.add(x, 3)  expected array([4, 6], dtype=int32)  got array([4, 5], dtype=int32)",
        "wrong: >>> mx.reshape(x, (3,))  expected array([1, 2, 3], dtype=int32)"
        "  got ValueError: [reshape] Cannot reshape array of size 2 into shape (3).",
        "bare: no description",
        "examples: 1 of 2 ops' examples pass on mlxref (1 fail); 1 of 3 ops have no description"
        " or no example",
    ]
    assert examples.main(["right"]) == 0
    assert capsys.readouterr().out == (
        "examples: 1 of 1 ops' examples pass on mlxref (0 fail); 0 of 1 ops have no description"
        " or no example\n")
    with pytest.raises(SystemExit):
        examples.main(["no_such_op"])
    assert "no public op named no_such_op" in capsys.readouterr().err
