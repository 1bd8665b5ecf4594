"""Every public op's docstring describes it and ends with an example that
prints, on mlxref and on real MLX, what the docstring says
(``mlxref.manual.examples``); and the checker catches a wrong example.

The sentences ops share are written once (mlxref/core/ops/docs.py): every
docstring is filled, each piece stands filled where the op's source names it,
with the op's own name, and no piece is unused; the filler refuses what it
cannot fill and wraps what it fills without breaking code or Markdown."""

import ast
import inspect
import textwrap
from types import SimpleNamespace

import pytest

from mlxref.core.ops import docs
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


# --- the shared pieces (mlxref/core/ops/docs.py) -------------------------------------------


def _flat(text):
    return " ".join(text.split())


def _source_placeholders(function):
    """The placeholders the docstring of ``function``'s source names."""
    node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    return docs.PLACEHOLDER.findall(ast.get_docstring(node, clean=False) or "")


def test_every_docstring_is_filled_and_says_once_what_stream_does():
    for op in OPS:
        doc = inspect.getdoc(op.function)
        left = docs.PLACEHOLDER.search(doc)
        assert left is None, f"{op.name}: {left.group()} is not filled"
        if "stream" in inspect.signature(op.function).parameters:
            streams = [line for line in doc.splitlines() if line.startswith("- ``stream``")]
            assert streams == [f"- ``stream``: {docs.STREAM}"], op.name


def test_each_piece_stands_filled_where_the_source_names_it():
    named = 0
    for op in OPS:
        doc = _flat(inspect.getdoc(op.function))
        for key in _source_placeholders(op.function):
            piece = docs.PIECES[key].replace("{name}", op.function.__name__)
            assert _flat(piece) in doc, f"{op.name}: {{{key}}}"
            named += 1
    assert named > 300  # most ops name several


def test_every_piece_is_used_by_some_op():
    filled = [(op.function.__name__, _flat(inspect.getdoc(op.function))) for op in OPS]
    unused = [key for key, piece in docs.PIECES.items()
              if not any(_flat(piece.replace("{name}", name)) in doc for name, doc in filled)]
    assert unused == []


def test_every_binary_elementwise_op_says_how_its_operands_broadcast():
    binary = [op for op in OPS if op.family == "elementwise"
              and list(inspect.signature(op.function).parameters)[:2] == ["a", "b"]]
    assert len(binary) >= 25  # add ... right_shift, and their aliases
    for op in binary:
        assert _flat(docs.BROADCAST) in _flat(inspect.getdoc(op.function)), op.name


def test_a_piece_names_the_op_it_is_filled_into():
    # bitwise_or's errors are MLX's for bitwise_or, not for the op the piece was written for.
    for op in OPS:
        doc = inspect.getdoc(op.function)
        if "Only allowed on integer or boolean types" in doc:
            assert f"[{op.function.__name__}] Only allowed" in doc, op.name


@pytest.mark.parametrize("doc, message", [
    ("``mx.f``: {operands}.", "first line"),
    ("``mx.f``: f.\n\n    Arguments:\n    - ``a``: {no_such_piece}\n", "no piece named"),
    ("``mx.f``: f.\n\n    >>> mx.f({operands})\n    1\n", "in an example"),
])
def test_the_filler_refuses_what_it_cannot_fill(doc, message):
    with pytest.raises(ValueError, match=rf"\[shared_doc\] f: .*{message}"):
        docs.fill(doc, "f")


def test_a_stream_line_ends_the_arguments_and_needs_them():
    doc = "``mx.f``: f.\n\n    Arguments:\n    - ``a``: an array.\n\n    Errors: none.\n    "
    assert docs.fill(doc, "f", stream=True).splitlines()[2:6] == [
        "    Arguments:", "    - ``a``: an array.", f"    - ``stream``: {docs.STREAM}", ""]
    with pytest.raises(ValueError, match="takes a stream but has no Arguments"):
        docs.fill("``mx.f``: f.\n", "f", stream=True)


def test_a_list_piece_becomes_one_item_per_argument():
    doc = "``mx.f``: f.\n\n    Arguments:\n    {reduce_arguments}\n\n    Errors: none.\n    "
    lines = inspect.cleandoc(docs.fill(doc, "f")).splitlines()
    assert lines[2:6] == ["Arguments:", "- ``a``: the array.", f"- ``axis``: {docs.AXES}",
                          f"- ``keepdims``: {docs.KEEPDIMS}"]


def _filled_item(monkeypatch, text):
    """``text`` as a piece filled into an argument item, the item's lines dedented."""
    monkeypatch.setitem(docs.PIECES, "long", text)
    doc = docs.fill("``mx.f``: f.\n\n    Arguments:\n    - ``a``: {long}\n    ", "f")
    lines = inspect.cleandoc(doc).splitlines()[3:]
    assert _flat(" ".join(lines)) == _flat("- ``a``: " + text)
    assert all(len(line) <= docs.WIDTH for line in lines)
    return lines


def _plainly_wrapped(text):
    return textwrap.wrap("    - ``a``: " + text, 4 + docs.WIDTH, subsequent_indent="      ")


def test_a_filled_item_starts_no_line_as_markdown_markup(monkeypatch):
    # A text whose plain wrap starts a line with "- ", which Markdown reads as a list item.
    texts = ["word " * k + "- then more words" for k in range(1, 40)]
    text = next(t for t in texts if any(line.lstrip().startswith("- ")
                                        for line in _plainly_wrapped(t)[1:]))
    lines = _filled_item(monkeypatch, text)
    assert not any(line.lstrip().startswith("- ") for line in lines[1:])


def test_a_filled_item_never_breaks_a_code_span(monkeypatch):
    # A text whose plain wrap breaks ``int32 array + 2`` over two lines.
    span = "``int32 array + 2``"
    texts = ["word " * k + span + " and more" for k in range(1, 40)]
    text = next(t for t in texts if not any(span in line for line in _plainly_wrapped(t)))
    assert any(span in line for line in _filled_item(monkeypatch, text))
