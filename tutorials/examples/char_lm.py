"""A small character-level language model, written once for mlxref and for real MLX.

Chapter 12 (tutorials/12-char-lm.md) trains it, tests/test_char_lm.py checks
that mlxref and MLX train it to the same numbers, and ``python -m benchmarks
--only charlm`` times a step of each. All three use this file: the array
library is a parameter, ``libraries("mlxref")`` (``mlxref.core``,
``mlxref.nn``, ``mlxref.optimizers``) or ``libraries("mlx")`` (the same
names in ``mlx``), never a copy of the code.

The model reads ``context`` characters and predicts, at every position, the
character that comes next: token and position embeddings, ``layers``
transformer blocks (causal self-attention, then an MLP, each added back to
its input), a final LayerNorm and a linear layer to one score per character.
It trains with the mean cross entropy and AdamW, whose learning rate warms up
linearly and then follows half a cosine down. The text it learns is
``char_lm_text.txt``, written for mlxref and free to redistribute.

Run it as a script to train and time it (the chapter's numbers)::

    python tutorials/examples/char_lm.py [--backend mlxref|mlx] [--config chapter|long|tiny]
"""

import argparse
import collections
import importlib
import pathlib
import random
import time

TEXT_PATH = pathlib.Path(__file__).with_name("char_lm_text.txt")

Libraries = collections.namedtuple("Libraries", "name mx nn optim")

Config = collections.namedtuple(
    "Config", "context dims heads layers batch steps warmup learning_rate weight_decay seed")
# The run the chapter's doctests make (a few seconds on mlxref)...
CHAPTER = Config(context=16, dims=16, heads=2, layers=1, batch=4, steps=30, warmup=5,
                 learning_rate=1e-2, weight_decay=0.01, seed=0)
# ...the longer one it reports (minutes on mlxref)...
LONG = CHAPTER._replace(context=32, dims=32, batch=8, steps=300, warmup=20)
# ...and the tiny one the test and the benchmark's smoke test use.
TINY = CHAPTER._replace(context=6, dims=8, heads=2, batch=3, steps=4, warmup=2)
CONFIGS = {"chapter": CHAPTER, "long": LONG, "tiny": TINY}


def libraries(name="mlxref"):
    """``Libraries(name, mx, nn, optim)`` for ``"mlxref"`` or ``"mlx"``."""
    if name not in ("mlxref", "mlx"):
        raise ValueError(f"char_lm.libraries: name must be 'mlxref' or 'mlx', got {name!r}")
    try:
        modules = [importlib.import_module(f"{name}.{m}") for m in ("core", "nn", "optimizers")]
    except ImportError as exc:
        raise ImportError(f"char_lm.libraries: {name} is not installed "
                          "(real MLX: pip install -e '.[metal]')") from exc
    return Libraries(name, *modules)


# --- the text, as numbers ------------------------------------------------------------


def read_text(path=TEXT_PATH):
    return pathlib.Path(path).read_text(encoding="utf-8")


class Vocabulary:
    """The characters of a text, sorted; a character's number is its position."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        return [self._index[c] for c in text]

    def decode(self, tokens):
        return "".join(self.chars[t] for t in tokens)


def batches(tokens, config):
    """``config.steps`` batches ``(inputs, targets)`` of nested lists, drawn with ``random.Random(seed)``.

    Each row is ``context`` consecutive tokens from a random place in the
    text; its targets are the same window moved one character on. Plain
    lists, so that mlxref and MLX get exactly the same batches.
    """
    rng = random.Random(config.seed)
    out = []
    for _ in range(config.steps):
        starts = [rng.randrange(len(tokens) - config.context) for _ in range(config.batch)]
        out.append(([tokens[s:s + config.context] for s in starts],
                     [tokens[s + 1:s + config.context + 1] for s in starts]))
    return out


# --- the model -----------------------------------------------------------------------

_CLASSES = {}


def model_classes(nn):
    """``(Block, CharLM)``, subclasses of ``nn.Module`` for this ``nn`` (made once per library)."""
    if nn in _CLASSES:
        return _CLASSES[nn]

    class Block(nn.Module):
        """x + attention(norm(x)), then x + mlp(norm(x))."""

        def __init__(self, dims, heads):
            super().__init__()
            self.norm1 = nn.LayerNorm(dims)
            self.attention = nn.MultiHeadAttention(dims, heads)
            self.norm2 = nn.LayerNorm(dims)
            self.mlp = nn.Sequential(nn.Linear(dims, 4 * dims), nn.ReLU(),
                                     nn.Linear(4 * dims, dims))

        def __call__(self, x, mask):
            h = self.norm1(x)
            x = x + self.attention(h, h, h, mask)
            return x + self.mlp(self.norm2(x))

    class CharLM(nn.Module):
        """Scores for the next character at every position of a (batch, context) input."""

        def __init__(self, vocab_size, context, dims, heads, layers):
            super().__init__()
            self.tokens = nn.Embedding(vocab_size, dims)
            self.positions = nn.Embedding(context, dims)
            self.blocks = [Block(dims, heads) for _ in range(layers)]
            self.norm = nn.LayerNorm(dims)
            self.out = nn.Linear(dims, vocab_size)

        def __call__(self, x):
            length = x.shape[1]
            mask = nn.MultiHeadAttention.create_additive_causal_mask(length)
            h = self.tokens(x) + self.positions.weight[:length]
            for block in self.blocks:
                h = block(h, mask)
            return self.out(self.norm(h))

    _CLASSES[nn] = Block, CharLM
    return _CLASSES[nn]


def build(libs, vocab_size, config):
    """The model and its optimizer, drawn from ``mx.random.seed(config.seed)``."""
    libs.mx.random.seed(config.seed)
    _, CharLM = model_classes(libs.nn)
    model = CharLM(vocab_size, config.context, config.dims, config.heads, config.layers)
    libs.mx.eval(model.parameters())
    return model, optimizer(libs, config)


def schedule(libs, config):
    """The learning rate of each step: from 0 up to ``learning_rate`` in ``warmup`` steps, then half a cosine down to 0."""
    optim = libs.optim
    return optim.join_schedules(
        [optim.linear_schedule(0.0, config.learning_rate, config.warmup),
         optim.cosine_decay(config.learning_rate, max(1, config.steps - config.warmup))],
        [config.warmup])


def optimizer(libs, config):
    """AdamW with ``schedule`` as its learning rate and ``config.weight_decay``."""
    return libs.optim.AdamW(learning_rate=schedule(libs, config),
                            weight_decay=config.weight_decay)


# --- training and generating -----------------------------------------------------------


def loss_function(libs, model):
    """``loss_fn(inputs, targets)``: the mean cross entropy of ``model``'s scores for the next characters."""

    def loss_fn(inputs, targets):
        return libs.nn.losses.cross_entropy(model(inputs), targets, reduction="mean")

    return loss_fn


def train_step(libs, model, optimizer, loss_and_grad, inputs, targets):
    """One update: the loss and gradients, AdamW's step, then ``mx.eval`` of it all."""
    loss, grads = loss_and_grad(inputs, targets)
    optimizer.update(model, grads)
    libs.mx.eval(loss, grads, model.parameters(), optimizer.state)
    return loss, grads


def train(libs, model, optimizer, batches, on_step=None):
    """One ``train_step`` per batch; returns the losses (each measured before its step's update).

    ``on_step(step, loss)`` is called after each step, if given.
    """
    loss_and_grad = libs.nn.value_and_grad(model, loss_function(libs, model))
    losses = []
    for step, (inputs, targets) in enumerate(batches):
        loss, _ = train_step(libs, model, optimizer, loss_and_grad,
                             libs.mx.array(inputs), libs.mx.array(targets))
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, losses[-1])
    return losses


def generate(libs, model, vocab, prompt, length):
    """``prompt`` followed by ``length`` characters, each the model's most likely next one."""
    mx = libs.mx
    context = model.positions.weight.shape[0]
    tokens = vocab.encode(prompt)
    for _ in range(length):
        logits = model(mx.array([tokens[-context:]]))
        tokens.append(mx.argmax(logits[0, -1]).item())
    return vocab.decode(tokens)


def run(backend="mlxref", config=CHAPTER, on_step=None):
    """Train on the text with ``config``: ``(model, vocab, losses, seconds per step)``."""
    libs = libraries(backend)
    text = read_text()
    vocab = Vocabulary(text)
    model, opt = build(libs, len(vocab), config)
    data = batches(vocab.encode(text), config)
    start = time.perf_counter()
    losses = train(libs, model, opt, data, on_step)
    return model, vocab, losses, (time.perf_counter() - start) / config.steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("mlxref", "mlx"), default="mlxref")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="chapter")
    parser.add_argument("--steps", type=int, help="override the config's number of steps")
    args = parser.parse_args(argv)
    try:
        libraries(args.backend)
    except ImportError as exc:
        parser.exit(2, f"{exc}\n")
    config = CONFIGS[args.config]
    if args.steps:
        config = config._replace(steps=args.steps)
    model, vocab, losses, per_step = run(
        args.backend, config, lambda step, loss: print(f"step {step:3}  loss {loss:.4f}"))
    print(f"{per_step * 1000:.1f} ms per step ({args.backend})")
    print(repr(generate(libraries(args.backend), model, vocab, "the ", 60)))


if __name__ == "__main__":
    main()
