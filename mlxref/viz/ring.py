"""The ring all-reduce, step by step: which segment moves where, with its values.

Read alongside: mlxref/core/distributed/ring.py (``RingGroup.all_reduce`` and
``_all_reduce_impl``), itself read beside MLX's mlx/distributed/ring/ring.cpp.

``ring_allreduce(ranks)`` runs the real thing and draws what it did: it starts
``ranks`` ``RingGroup``\\ s in this process, one thread each, connected over
TCP on 127.0.0.1 (ports from the operating system), sets each group's
``observer`` and calls its ``all_sum`` (or ``all_max``/``all_min``) directly
on element lists, as the kernels do (no ``mx`` op, so nothing waits on the
evaluation lock). Each step every rank reports what it sent to whom, what it
received, and what it holds after reducing; the figure is those reports.

So the figure follows ring.py's order exactly: the list is cut into one
segment per rank; in ``ranks - 1`` reduce-scatter steps each rank sends one
segment to its neighbour, which adds it into its own copy, until each rank
holds one segment summed over every rank; then ``ranks - 1`` all-gather steps
pass the summed segments round. A small list goes round to the left (rank r
sends to rank r - 1); a list with fewer elements than ranks is padded with
zeros and goes to the right; a big one (at least ``2 * ranks *
MIN_SEND_SIZE`` bytes) is cut in two parts, the first going left and the
second right at the same time. ``split=True`` shows that on a small list, by
lowering the figure's groups' ``min_send_size``.

``RingFigure`` holds the reports and writes them as text (``to_text``) or
Graphviz DOT (``to_dot``: one row per step, one column per rank, each rank's
list as a row of segments, an arrow for each segment sent), and renders them
like a ``Drawing``. The bytes depend only on the values, never on timing.

Read next: the tutorial chapter on data-parallel training, which draws it.
"""

import threading

import graphviz

from ..core import dtypes
from ..core.distributed import ring as _ring
from ..launch import free_local_ports
from . import render as _render
from .dot import html
from .record import format_scalar
from .render import FORMATS

OPS = ("sum", "max", "min")
MAX_RANKS = 8
MAX_ELEMENTS = 64  # per rank: a figure, not a benchmark
LOCAL = "127.0.0.1"

# (fill, border) of a segment: as it started, partly reduced, reduced over every rank
CELL_LOOKS = {"own": ("#ffffff", "#90a4ae"), "partial": ("#ffe0b2", "#e65100"),
              "whole": ("#c8e6c9", "#2e7d32")}
PHASE_COLOURS = {"reduce-scatter": "#e65100", "all-gather": "#2e7d32"}
SYMBOLS = {"sum": "+", "max": "max", "min": "min"}


def default_values(ranks, size):
    """Rank r holds 10 r + 1, 10 r + 2, ...: each value says where it came from."""
    return [[10 * r + k + 1 for k in range(size)] for r in range(ranks)]


def ring_allreduce(ranks, values=None, size=None, dtype=dtypes.float32, op="sum",
                   split=False):
    """Run the ring all-reduce of ring.py on ``ranks`` ranks (2 to 8) in this
    process and return the figure of its steps (a ``RingFigure``).

    ``values``: one list per rank (default: rank r holds 10 r + 1, 10 r + 2,
    ... ``size`` of them, ``size`` default ``2 * ranks``); ``dtype`` an
    ``mx`` dtype (the values are stored as it holds them); ``op`` "sum",
    "max" or "min"; ``split``: cut the list in two parts going round in
    opposite directions, as ring.py does with a big array.
    """
    who = "viz.ring_allreduce"
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 2 <= ranks <= MAX_RANKS:
        raise ValueError(f"[{who}] ranks must be an integer from 2 to {MAX_RANKS}, "
                         f"not {ranks!r}.")
    if op not in OPS:
        raise ValueError(f"[{who}] op must be one of {', '.join(OPS)}, not {op!r}.")
    if not isinstance(dtype, dtypes.Dtype):
        raise ValueError(f"[{who}] dtype must be an mx dtype, not {dtype!r}.")
    if values is None:
        size = 2 * ranks if size is None else size
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_ELEMENTS:
            raise ValueError(f"[{who}] size must be an integer from 1 to {MAX_ELEMENTS}, "
                             f"not {size!r}.")
        values = default_values(ranks, size)
    elif size is not None:
        raise ValueError(f"[{who}] give values or size, not both.")
    values = [list(v) for v in values]
    lengths = {len(v) for v in values}
    if len(values) != ranks or len(lengths) != 1 or not 1 <= min(lengths) <= MAX_ELEMENTS:
        raise ValueError(f"[{who}] values must be {ranks} lists of the same length, "
                         f"1 to {MAX_ELEMENTS} elements each.")
    if split and min(lengths) < 2 * ranks:
        raise ValueError(f"[{who}] split needs at least {2 * ranks} elements per rank "
                         f"(a segment per rank in each part), not {min(lengths)}.")
    try:
        values = [dtype.store(v) for v in values]
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"[{who}] the values do not fit {dtype.name}: {exc}") from None
    reports, results = run_ring(values, dtype, op, split)
    return RingFigure(values, dtype, op, reports, results)


def run_ring(values, dtype, op, split=False):
    """Run ``all_<op>`` of ring.py's RingGroup on one thread per rank; returns
    (each rank's reports in the order it made them, each rank's result)."""
    ranks = len(values)
    nodes = [[(LOCAL, port)] for port in free_local_ports(ranks)]
    reports = [[] for _ in range(ranks)]
    results, errors, groups = [None] * ranks, [None] * ranks, [None] * ranks

    def rank_main(r):
        try:
            group = groups[r] = _ring.RingGroup(r, nodes, False)
            group.observer = lambda **step: reports[r].append(step)
            if split:  # any list is "big": cut in two parts, one per direction
                group.min_send_size = 1
            results[r] = getattr(group, f"all_{op}")(list(values[r]), dtype)
        except Exception as exc:  # noqa: BLE001 - reported below, by rank
            errors[r] = exc
            for g in groups:  # the others stop waiting at once
                if g is not None:
                    g.close()

    threads = [threading.Thread(target=rank_main, args=(r,), daemon=True) for r in range(ranks)]
    for t in threads:
        t.start()
    deadline = 2 * _ring.timeout_seconds() + 5  # connecting, then the steps
    for t in threads:
        t.join(deadline)
    for g in groups:
        if g is not None:
            g.close()
    for r, exc in enumerate(errors):
        if exc is not None:
            raise RuntimeError(f"[viz.ring_allreduce] rank {r} failed: {exc}") from exc
    if any(t.is_alive() for t in threads):  # pragma: no cover - the ring times out first
        raise RuntimeError("[viz.ring_allreduce] the ring did not finish in time")
    return reports, results


class RingFigure:
    """The steps of one ring all-reduce, as its ranks reported them.

    ``steps``: one list per step of the ring, each holding every rank's report
    (a dict: rank, direction, phase, sent_to, sent (start, stop), sent_values,
    received_from, received, received_values, result), in rank order.
    ``results``: what each rank's ``all_<op>`` returned.
    """

    def __init__(self, values, dtype, op, reports, results):
        self.values, self.dtype, self.op, self.results = values, dtype, op, results
        self.ranks = len(values)
        counts = {len(r) for r in reports}
        if len(counts) != 1:  # pragma: no cover - every rank takes the same steps
            raise RuntimeError("[viz.ring_allreduce] the ranks reported different step counts")
        self.steps = [list(step) for step in zip(*reports)]
        # The buffer's cells: the ranges the ring moved (a padded list is longer).
        bounds = sorted({rng for step in self.steps for rep in step
                         for rng in (rep["sent"], rep["received"]) if rng[0] < rng[1]})
        self.cells = bounds
        self.length = max([len(values[0])] + [stop for _, stop in bounds])
        self.states = self._replay()

    @property
    def title(self):
        n = len(self.values[0])
        return (f"the ring all_{self.op} of {n} {self.dtype.name} element{'s' * (n != 1)} "
                f"on {self.ranks} ranks")

    def _replay(self):
        """After each step (and before the first): each rank's list and, per cell,
        the ranks whose values it combines. The lists are the ranks' reports."""
        pad = self.length - len(self.values[0])
        buffers = [list(v) + self.dtype.store([0] * pad) for v in self.values]
        owners = [[frozenset([r]) for _ in self.cells] for r in range(self.ranks)]
        states = [([list(b) for b in buffers], [list(o) for o in owners])]
        index = {cell: k for k, cell in enumerate(self.cells)}
        for step in self.steps:
            before = [list(o) for o in owners]
            for rep in step:
                if rep["received"][0] == rep["received"][1]:
                    continue
                r, k = rep["rank"], index[rep["received"]]
                start, stop = rep["received"]
                buffers[r][start:stop] = rep["result"]
                came = before[rep["received_from"]][k]
                owners[r][k] = came | before[r][k] if rep["phase"] == "reduce-scatter" else came
            states.append(([list(b) for b in buffers], [list(o) for o in owners]))
        return states

    # --- words -----------------------------------------------------------------------

    def direction_words(self, direction):
        return ("to the left: rank r sends to rank r - 1" if direction > 0 else
                "to the right: rank r sends to rank r + 1")

    def parts(self):
        """[(first step, direction, (start, stop))]: the parts the list was cut into."""
        found = []
        for t, step in enumerate(self.steps):
            rep = step[0]
            if rep["step"] == 0:
                found.append([t, rep["direction"], [self.length, 0]])
            for r in step:
                for start, stop in (r["sent"], r["received"]):
                    if start < stop:
                        found[-1][2] = [min(found[-1][2][0], start), max(found[-1][2][1], stop)]
        return [(t, d, tuple(rng)) for t, d, rng in found]

    def _owners_text(self, owners):
        if len(owners) == self.ranks:
            return "every rank"
        return "ranks " + "+".join(map(str, sorted(owners))) if len(owners) > 1 else \
            f"rank {min(owners)}"

    def _values(self, values):
        return ", ".join(format_scalar(v) for v in values)

    def _cells_text(self, buffer):
        return " | ".join(self._values(buffer[a:b]) for a, b in self.cells)

    def _step_heading(self, t):
        rep = self.steps[t][0]
        per_phase = len([s for s in self.steps if s[0]["direction"] == rep["direction"]
                         and s[0]["phase"] == rep["phase"]]) // self._parts_with(rep["direction"])
        k = rep["step"] % per_phase + 1
        return f"{rep['phase']} step {k} of {per_phase}"

    def _parts_with(self, direction):
        return sum(1 for _, d, _ in self.parts() if d == direction)

    def _move_text(self, rep, before):
        """What rank r did at a step: what it sent to whom, what it received and
        what it made of it (its own values first, as ring.py's reduction adds)."""
        (a, b), (c, d) = rep["sent"], rep["received"]
        line = f"rank {rep['rank']} sends "
        line += (f"x[{a}:{b}] = [{self._values(rep['sent_values'])}]" if a < b else "nothing")
        line += f" to rank {rep['sent_to']}"
        if c >= d:
            return line
        got = f"[{self._values(rep['received_values'])}]"
        line += f", receives x[{c}:{d}] = {got} from rank {rep['received_from']}"
        if rep["phase"] == "all-gather":
            return line + " and keeps it"
        mine = f"[{self._values(before[rep['rank']][c:d])}]"
        symbol = SYMBOLS[self.op]
        combined = f"{mine} + {got}" if symbol == "+" else f"{symbol}({mine}, {got})"
        return f"{line}: {combined} = [{self._values(rep['result'])}]"

    def to_text(self):
        """The steps as lines: each part's direction, then per step what every rank
        sent and what it holds after, and every rank's list after the step."""
        n = len(self.values[0])
        bounds = ", ".join(f"[{a}:{b}]" for a, b in self.cells)
        lines = [f"# {self.title} (mlxref/core/distributed/ring.py)",
                 f"# cells (segments of each part): {bounds}"]
        if self.length > n:
            lines.append(f"# fewer elements than ranks: padded with zeros to {self.length}")
        lines += ["", "before:"]
        lines += [f"  rank {r}: {self._cells_text(b)}" for r, b in enumerate(self.states[0][0])]
        starts = {t: (d, rng) for t, d, rng in self.parts()}
        parts = len(starts)
        for t, step in enumerate(self.steps):
            if t in starts:
                d, (a, b) = starts[t]
                which = f"part {list(starts).index(t) + 1} of {parts}: " if parts > 1 else ""
                lines += ["", f"{which}elements [{a}:{b}] go round {self.direction_words(d)}"]
            before = self.states[t][0]
            lines += ["", f"{self._step_heading(t)}:"]
            # Each rank's sends, in the order of the ranks receiving them.
            lines += [f"  {self._move_text(rep, before)}" for rep in step]
            buffers, owners = self.states[t + 1]
            for r in range(self.ranks):
                rep = step[r]
                k = self.cells.index(rep["received"]) if rep["received"] in self.cells else None
                mark = f"   <- [{rep['received'][0]}:{rep['received'][1]}] now " \
                       f"{self._owners_text(owners[r][k])}" if k is not None else ""
                lines.append(f"    rank {r}: {self._cells_text(buffers[r])}{mark}")
        lines += ["", "after: every rank holds"
                  + (f" (the first {n})" if self.length > n else "") + ":"]
        lines += [f"  rank {r}: {self._values(res)}" for r, res in enumerate(self.results)]
        return "\n".join(lines) + "\n"

    # --- the drawing ----------------------------------------------------------------

    def _cell_label(self, buffer, owners, fresh, phase):
        cells = []
        for k, (a, b) in enumerate(self.cells):
            look = "whole" if len(owners[k]) == self.ranks else (
                "partial" if len(owners[k]) > 1 else "own")
            fill, border = CELL_LOOKS[look]
            if k == fresh:
                border = PHASE_COLOURS[phase]
            width = ' BORDER="3"' if k == fresh else ""
            sub = "all" if look == "whole" else "+".join(map(str, sorted(owners[k])))
            cells.append(f'<TD BGCOLOR="{fill}" COLOR="{border}"{width}>'
                         f'{html(self._values(buffer[a:b]))}<BR/>'
                         f'<FONT POINT-SIZE="8" COLOR="#616161">[{a}:{b}] {html(sub)}</FONT></TD>')
        return ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="3"><TR>'
                + "".join(cells) + "</TR></TABLE>>")

    def to_graphviz(self):
        """The figure as a ``graphviz.Digraph``: a row per step, a column per rank."""
        g = graphviz.Digraph("ring")
        legend = ("each rank's list, cut into segments; under each: its elements and the "
                  "ranks it combines · orange: partly reduced · green: reduced over every "
                  "rank · thick border: what arrived this step · arrows: a segment sent")
        g.attr("graph", _attributes=[
            ("label", f'<<B>{html(self.title)}</B><BR/><FONT POINT-SIZE="9" COLOR="#616161">'
                      f"{html(legend)}</FONT>>"),
            ("labelloc", "t"), ("labeljust", "l"), ("fontname", "Helvetica"),
            ("fontsize", "12"), ("rankdir", "TB"), ("newrank", "true"), ("nodesep", "0.3"),
            ("ranksep", "0.5")])
        g.attr("node", _attributes=[("fontname", "Helvetica"), ("fontsize", "10"),
                                    ("shape", "plain")])
        g.attr("edge", _attributes=[("fontname", "Helvetica"), ("fontsize", "8"),
                                    ("arrowsize", "0.6")])
        starts = {t: (d, rng) for t, d, rng in self.parts()}
        rows = [("before", None)] + [(self._step_heading(t), step)
                                     for t, step in enumerate(self.steps)]
        for i, (heading, step) in enumerate(rows):
            buffers, owners = self.states[i]
            with g.subgraph(name=f"row{i}") as row:
                row.attr(rank="same")
                words = heading
                if i and i - 1 in starts:
                    words += "\n" + self.direction_words(starts[i - 1][0]).split(":")[0]
                row.node(f"h{i}", _attributes=[("label", words.replace("\n", "\\n")),
                                               ("shape", "none"), ("fontsize", "9")])
                for r in range(self.ranks):
                    fresh, phase = None, None
                    if step is not None and step[r]["received"] in self.cells:
                        fresh = self.cells.index(step[r]["received"])
                        phase = step[r]["phase"]
                    title = f'<FONT POINT-SIZE="9"><B>rank {r}</B></FONT>'
                    label = self._cell_label(buffers[r], owners[r], fresh, phase)
                    label = (f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0"><TR><TD>'
                             f"{title}</TD></TR><TR><TD>{label[1:-1]}</TD></TR></TABLE>>")
                    row.node(f"r{i}_{r}", _attributes=[("label", label)])
            if i:  # keep the columns: each rank under itself, the heading on the left
                g.edge(f"h{i - 1}", f"h{i}", _attributes=[("style", "invis")])
                for r in range(self.ranks):
                    g.edge(f"r{i - 1}_{r}", f"r{i}_{r}",
                           _attributes=[("style", "invis"), ("weight", "10")])
                for rep in step:
                    a, b = rep["sent"]
                    if a >= b:
                        continue
                    colour = PHASE_COLOURS[rep["phase"]]
                    g.edge(f"r{i - 1}_{rep['rank']}", f"r{i}_{rep['sent_to']}", _attributes=[
                        ("label", f"[{a}:{b}] {self._values(rep['sent_values'])}"),
                        ("color", colour), ("fontcolor", colour), ("constraint", "false")])
        return g

    def to_dot(self):
        """The DOT text (byte-identical for the same values)."""
        return self.to_graphviz().source

    def render(self, path, format=None):
        """Write the figure to ``path`` as dot, text, svg, png or pdf (the last
        three need Graphviz's ``dot``; without it the DOT text goes to ``path``
        with a ``.dot`` suffix and GraphvizMissing is raised). Returns the path."""
        format = _render.format_of(path) if format is None else format
        if format not in FORMATS or format == "html":
            raise ValueError(f"[viz.ring_allreduce] Unknown format {format!r}; expected one "
                             "of dot, text, svg, png, pdf.")
        if format in ("dot", "text"):
            _render.write(path, self.to_dot() if format == "dot" else self.to_text())
        elif _render.dot_binary() is None:
            _render.dot_fallback(path, self.to_dot())
        else:
            _render.write(path, _render.run_dot(self.to_dot(), format))
        return path

    def __repr__(self):
        return f"<mlxref.viz.RingFigure {self.title!r}: {len(self.steps)} steps>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.to_text()}
        if _render.dot_binary() is not None:
            bundle["image/svg+xml"] = _render.run_dot(self.to_dot(), "svg").decode("utf-8")
        return {k: v for k, v in bundle.items()
                if (not include or k in include) and (not exclude or k not in exclude)}
