"""Chapter 12's character-level language model trains to MLX's numbers.

tutorials/examples/char_lm.py is written once with the array library as a
parameter. Here the same model is built in mlxref and in real MLX (the
oracle) from the same seed: its initial weights must be equal, and after
training on the same batches its losses, step by step, and its final
weights must agree to float32 tolerance. The losses the chapter prints
(from mlxref, checked by its doctest) are compared with MLX's on the
chapter's own configuration, so the curve the reader sees is also MLX's.
"""

import doctest
import math
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tutorials" / "examples"))

import char_lm  # noqa: E402
from mlxref.utils import tree_flatten  # noqa: E402

CHAPTER_MD = ROOT / "tutorials" / "12-char-lm.md"
STEP_LINE = re.compile(r"^step +(\d+) +loss (\d+\.\d+)$", re.MULTILINE)


def flat(model):
    return {k: v.tolist() for k, v in tree_flatten(model.parameters())}


def max_difference(a, b):
    """The largest ``|a - b| / max(1, |b|)`` over two nested lists of the same shape."""
    if isinstance(a, list):
        assert len(a) == len(b)
        return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b) / max(1.0, abs(b))


def test_libraries_names_the_two_backends_and_rejects_others():
    libs = char_lm.libraries("mlxref")
    assert libs.mx.__name__ == "mlxref.core" and libs.optim.__name__ == "mlxref.optimizers"
    with pytest.raises(ValueError, match="char_lm.libraries: name must be 'mlxref' or 'mlx', got 'torch'"):
        char_lm.libraries("torch")


def test_libraries_says_how_to_get_mlx_when_it_is_missing(monkeypatch, capsys):
    real = char_lm.importlib.import_module

    def without_mlx(name):
        if name.split(".")[0] == "mlx":
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name)

    monkeypatch.setattr(char_lm.importlib, "import_module", without_mlx)
    with pytest.raises(ImportError, match=r"mlx is not installed \(real MLX: pip install"):
        char_lm.libraries("mlx")
    with pytest.raises(SystemExit) as exit_info:  # the script: one line, status 2
        char_lm.main(["--backend", "mlx"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("char_lm.libraries: mlx is not installed")


def test_batches_are_windows_and_their_next_characters():
    text = char_lm.read_text()
    vocab = char_lm.Vocabulary(text)
    tokens = vocab.encode(text)
    assert vocab.decode(tokens) == text and len(vocab) == len(set(text))
    data = char_lm.batches(tokens, char_lm.TINY)
    assert len(data) == char_lm.TINY.steps
    for inputs, targets in data:
        assert len(inputs) == char_lm.TINY.batch
        for x, y in zip(inputs, targets):
            assert len(x) == char_lm.TINY.context and x[1:] == y[:-1]
    assert data == char_lm.batches(tokens, char_lm.TINY)  # the seed fixes them


def test_mlxref_trains_to_mlx_numbers():
    """Same seed, same batches: equal initial weights, then equal losses and weights."""
    pytest.importorskip("mlx.core")
    config = char_lm.TINY
    text = char_lm.read_text()
    vocab = char_lm.Vocabulary(text)
    data = char_lm.batches(vocab.encode(text), config)
    runs = {}
    for name in ("mlxref", "mlx"):
        libs = char_lm.libraries(name)
        model, optimizer = char_lm.build(libs, len(vocab), config)
        initial = flat(model)
        losses = char_lm.train(libs, model, optimizer, data)
        runs[name] = initial, losses, flat(model)
    (init, losses, final), (mlx_init, mlx_losses, mlx_final) = runs["mlxref"], runs["mlx"]
    assert sorted(init) == sorted(mlx_init)
    assert "blocks.0.attention.query_proj.weight" in init
    # mx.random follows MLX's bits: uniform draws (the Linear layers) are equal bit
    # for bit; normal ones (the embeddings) go through erfinv, one rounding apart.
    for k in init:
        if k.endswith(("tokens.weight", "positions.weight")):
            assert max_difference(init[k], mlx_init[k]) <= 2e-7, k
        else:
            assert init[k] == mlx_init[k], k
    assert len(losses) == config.steps
    for step, (a, b) in enumerate(zip(losses, mlx_losses)):
        assert abs(a - b) <= 1e-5 * max(1.0, abs(b)), (step, a, b)
    for k in final:
        assert max_difference(final[k], mlx_final[k]) <= 1e-4, k
    # The weights moved, and the loss is that of a model starting from chance.
    assert max(max_difference(final[k], init[k]) for k in init) > 1e-3
    assert abs(losses[0] - math.log(len(vocab))) < 0.5


def test_the_chapter_prints_mlx_loss_curve():
    """The chapter's loss lines (mlxref's, doctested) are MLX's on the same run, to 4 decimals."""
    pytest.importorskip("mlx.core")
    outputs = "".join(example.want for example in doctest.DocTestParser().get_examples(
        CHAPTER_MD.read_text(encoding="utf-8")))  # what the doctests check, nothing else
    printed = [(int(s), float(v)) for s, v in STEP_LINE.findall(outputs)]
    assert [s for s, _ in printed] == list(range(char_lm.CHAPTER.steps))
    _, _, mlx_losses, _ = char_lm.run("mlx", char_lm.CHAPTER)
    for step, value in printed:
        assert abs(mlx_losses[step] - value) <= 0.5e-4 + 1e-5, (step, mlx_losses[step], value)
