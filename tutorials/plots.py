"""Draw the pictures of chapter 08 (the training loss and the decision boundary) and 12.

    pip install matplotlib
    python tutorials/plots.py [--out DIR] [--char-lm]

Runs the examples of tutorials/08-training.md, read from that file, so the
pictures are of exactly the code the chapter shows and its doctests check;
then writes DIR/training_loss.svg and DIR/decision_boundary.svg (DIR is
diagrams/ by default). With ``--char-lm`` it instead trains chapter 12's
longer run (``char_lm.LONG``, minutes on mlxref) on mlxref and, when it is
installed, on real MLX, prints each one's time per step, last loss and
sample, and writes DIR/char_lm_loss.svg with both loss curves.

matplotlib is optional: nothing else in mlxref needs it, and the doctests
run without it. Without it this script says how to install it and exits
with status 1.
"""

import argparse
import contextlib
import doctest
import io
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
CHAPTER = HERE / "08-training.md"

# The region drawn, and how finely the network's prediction is sampled in it.
X_RANGE, Y_RANGE = (-1.6, 2.6), (-1.1, 1.6)
GRID = 81


def run_chapter(path=CHAPTER, until=None):
    """Execute every example of the chapter, in order (with ``until``, a heading
    such as ``"## Training"``, only those above it); return their namespace.

    What the examples print is discarded, and they run as a module's statements,
    so no value is shown (not even in a notebook's kernel); the namespace holds
    the data (``train_points``...), the trained ``model`` and the ``losses``.
    """
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    text = path.read_text(encoding="utf-8")
    if until is not None:
        text = text.partition(f"\n{until}\n")[0]
    namespace = {"__name__": "__tutorial__"}
    for example in doctest.DocTestParser().get_examples(text, name=path.name):
        code = compile(example.source, f"{path.name}:{example.lineno + 1}", "exec")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, namespace)  # noqa: S102 (our own tutorial's examples)
    return namespace


def class1_probability(model, xs, ys):
    """P(class 1) from ``model`` at every point of the grid ``xs`` by ``ys``, row by row."""
    import mlxref.core as mx

    points = mx.array([[x, y] for y in ys for x in xs])
    p = mx.softmax(model(points), axis=1)[:, 1].tolist()
    return [p[i * len(xs) : (i + 1) * len(xs)] for i in range(len(ys))]


def linspace(lo, hi, n):
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def draw(namespace, out, plt):
    """Write the two SVGs into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    colors = ("#1f77b4", "#e6550d")  # class 0, class 1

    # 1. The loss curve.
    losses = namespace["losses"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(range(len(losses)), losses, color="#5e35b1", linewidth=1.8)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("mean cross entropy (log scale)")
    ax.set_title("Training loss: 2-16-16-2 MLP, Adam(learning_rate=0.05), 64 points")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    written.append(_save(fig, out / "training_loss.svg", plt))

    # 2. The decision boundary, with the training and test points.
    xs, ys = linspace(*X_RANGE, GRID), linspace(*Y_RANGE, GRID)
    prob = class1_probability(namespace["model"], xs, ys)
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    filled = ax.contourf(xs, ys, prob, levels=[i / 10 for i in range(11)], cmap="RdBu_r",
                         alpha=0.55)
    ax.contour(xs, ys, prob, levels=[0.5], colors="black", linewidths=1.5)
    fig.colorbar(filled, ax=ax, label="P(class 1)")
    for label in (0, 1):
        test = [p for p, t in zip(namespace["test_points"], namespace["test_labels"]) if t == label]
        ax.scatter([p[0] for p in test], [p[1] for p in test], s=9, color=colors[label],
                   alpha=0.35, linewidths=0, label=f"test, class {label}")
    for label in (0, 1):
        train = [p for p, t in zip(namespace["train_points"], namespace["train_labels"])
                 if t == label]
        ax.scatter([p[0] for p in train], [p[1] for p in train], s=28, color=colors[label],
                   edgecolors="black", linewidths=0.6, label=f"train, class {label}")
    ax.set_xlim(*X_RANGE)
    ax.set_ylim(*Y_RANGE)
    ax.set_aspect("equal")
    ax.set_title("Decision boundary (black: P = 0.5) after 100 steps")
    ax.legend(loc="lower left", fontsize=7, ncol=2, framealpha=0.85)
    fig.tight_layout()
    written.append(_save(fig, out / "decision_boundary.svg", plt))
    return written


def draw_char_lm(out, plt):
    """Chapter 12's longer run on each library; write the loss curves; return the path."""
    sys.path.insert(0, str(HERE / "examples"))
    import char_lm

    runs = {}
    for backend in ("mlxref", "mlx"):
        try:
            libs = char_lm.libraries(backend)
        except ImportError:
            print(f"{backend} is not installed: no curve for it", file=sys.stderr)
            continue
        model, vocab, losses, per_step = char_lm.run(backend, char_lm.LONG)
        sample = char_lm.generate(libs, model, vocab, "the ", 60)
        print(f"{backend}: {per_step * 1000:.1f} ms per step, last loss {losses[-1]:.4f}, "
              f"sample {sample!r}")
        runs[backend] = losses
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    styles = {"mlxref": dict(color="#5e35b1", linewidth=2.6),
              "mlx": dict(color="#e6550d", linewidth=1.0, linestyle="--")}
    for backend, losses in runs.items():
        ax.plot(range(len(losses)), losses, label=backend, **styles[backend])
    ax.set_xlabel("step")
    ax.set_ylabel("mean cross entropy")
    c = char_lm.LONG
    ax.set_title(f"Character LM: {c.dims} dims, context {c.context}, batch {c.batch}, "
                 "AdamW, warm-up then cosine", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return _save(fig, out / "char_lm_loss.svg", plt)


def _save(fig, path, plt):
    # No date and fixed ids, so that redrawing the same figure gives the same file.
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "diagrams",
                        help="directory for the SVGs (default: diagrams/)")
    parser.add_argument("--char-lm", action="store_true",
                        help="draw chapter 12's loss curves instead of chapter 08's figures")
    args = parser.parse_args(argv)
    try:
        import matplotlib
    except ImportError:
        print("tutorials/plots.py needs matplotlib: pip install matplotlib", file=sys.stderr)
        return 1
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "mlxref"
    import matplotlib.pyplot as plt

    if args.char_lm:
        print(f"wrote {draw_char_lm(args.out, plt)}")
        return 0
    namespace = run_chapter()
    for path in draw(namespace, args.out, plt):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
