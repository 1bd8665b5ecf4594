"""Workload "charlm": one training step of chapter 12's character-level language model.

The model, its optimizer and its batches come from
``tutorials/examples/char_lm.py`` (the code the chapter runs), with the
chapter's configuration; the size ``n`` of a row is the batch size. A timed
step is ``char_lm.train_step``: ``nn.value_and_grad`` of the mean cross
entropy, ``AdamW.update`` and ``mx.eval`` of the loss, the gradients, the
parameters and the optimizer's state, as ``char_lm.train`` does per batch. Every repeat starts from a model freshly
built from the seed (untimed), so every column times the same step.

Columns: ``mlxref``, and ``MLX (<device>)`` when real MLX is installed. There
is no hand-written reference for a transformer: mlxref's own loss and
gradients are the reference, which the mlxref column must reproduce exactly
(the run is deterministic) and MLX's must match to ``FLOAT32_TOLERANCE``.
"""

import importlib.util
import pathlib
import sys

from mlxref.backends import metal

from . import harness

SIZES = (4, 8)
QUICK_SIZES = (2,)
REPEATS = 5
QUICK_REPEATS = 2
FLOAT32_TOLERANCE = 1e-5

_PATH = pathlib.Path(__file__).resolve().parent.parent / "tutorials" / "examples" / "char_lm.py"


def _load():
    spec = importlib.util.spec_from_file_location("char_lm", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


char_lm = _load()
CONFIG = char_lm.CHAPTER  # the benchmark's smoke test replaces it with char_lm.TINY


def make_input(batch):
    """``(vocabulary size, inputs, targets)``: the first batch of the chapter's run, ``batch`` rows."""
    text = char_lm.read_text()
    vocab = char_lm.Vocabulary(text)
    inputs, targets = char_lm.batches(vocab.encode(text), CONFIG._replace(batch=batch))[0]
    return len(vocab), inputs, targets


def step_on(libs):
    """``prepare`` and ``step`` of the column on ``libs`` (``char_lm.libraries(...)``)."""
    mx, nn = libs.mx, libs.nn

    def prepare(problem):
        vocab_size, inputs, targets = problem
        model, optimizer = char_lm.build(libs, vocab_size, CONFIG)
        x, y = mx.array(inputs), mx.array(targets)
        mx.eval(x, y)
        return model, optimizer, x, y

    def step(model, optimizer, x, y):
        loss_and_grad = nn.value_and_grad(model, char_lm.loss_function(libs, model))
        return char_lm.train_step(libs, model, optimizer, loss_and_grad, x, y)

    return prepare, step


def result(out):
    """The loss and every gradient, flattened in the model's parameter order: nested lists."""
    from mlxref.utils import tree_flatten

    loss, grads = out
    return [loss.item()] + [g.tolist() for _, g in tree_flatten(grads)]


def reference(problem):
    prepare, step = step_on(char_lm.libraries("mlxref"))
    return result(step(*prepare(problem)))


def implementations():
    prepare, step = step_on(char_lm.libraries("mlxref"))
    out = [harness.Column("mlxref", prepare, step, result, tol=0.0)]
    if metal.available():
        prepare, step = step_on(char_lm.libraries("mlx"))
        out.append(harness.Column(metal.label(), prepare, step, result, tol=FLOAT32_TOLERANCE))
    return out


def run(quick=False, repeats=None, sizes=None):
    """Median time of a step per column and batch size, interleaved (``harness.run_workload``)."""
    res = harness.run_workload("charlm step", sys.modules[__name__], make_input, reference,
                               quick, repeats, sizes)
    res["config"] = dict(CONFIG._asdict())
    return res


def table(res):
    return harness.columns_table(res, size_header="batch")
