"""``viz.forward_vs_reverse(f, x)``: one Jacobian computed both ways, side by side.

Forward mode (``jacfwd``) makes one pass per input: it seeds the tangent of one input direction and
carries it forward through the graph, op by op in the order the ops ran, giving one *column* of the
Jacobian. Reverse mode (``jacrev``) runs the function once for its values, then one backward pass per
output: it seeds one output's gradient and sends it back, node by node, giving one *row*. For a tall
Jacobian (few inputs, many outputs) forward mode needs fewer passes; for a wide one (a loss of many
inputs), reverse mode does. The player shows both at once with the running counts.

Everything shown is what the passes did when they ran, never a formula:

- forward pass k runs ``f`` on ``make_dual(x, e_k)`` (the library's ``autograd.forward_ad``) with
  ``x`` requiring grad, so the pass also records its ops as nodes: the nodes of that graph are the ops
  that ran (one value each); a tangent rule ran where the node's output carries a tangent (read through
  minigrad's ``node.output_tensor`` while the output is alive; PyTorch keeps no handle on a node's
  output, so there, and for outputs already freed, where an input did: the node is on a path from x);
- reverse mode runs ``f`` once (its nodes are the values it computed), then for each output
  ``autograd.grad(y, x, grad_outputs=e_i, retain_graph=True)`` with a hook on every node (public
  ``register_hook``): each hook that fires is one backward rule that ran, in the engine's order.

Columns and rows are the tangents and gradients those passes returned; ``jacobian_forward`` and
``jacobian_reverse`` keep them (tests compare them with ``torch.func.jacfwd`` / ``jacrev``).
viz imports neither library: it uses the one ``x`` comes from.
"""

from __future__ import annotations

import heapq
import html
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import probe
from .dot import clean
from .files import write_atomic
from .i18n import language, page_data, tr
from .walk import Walk, paused_gc
from .walk import walk as _walk

MAX_PASSES = 48  # inputs or outputs: more passes than this would not be watched (and the matrix would not fit)
HERE = Path(__file__).resolve().parent
# the page's words in the player's language: viz/i18n.js's mgI18n, run by render() when the payload has a catalog
ESM = (HERE / "jacobian.js").read_text(encoding="utf-8") + "\n" + (HERE / "i18n.js").read_text(encoding="utf-8")
CSS = (HERE / "jacobian.css").read_text(encoding="utf-8")
PLAY_NOTE = "Run the cell to play: forward mode (one pass per input) beside reverse mode (one pass per output)"


@dataclass
class Step:
    """One step of one side: a seed, an op (forward) or a backward rule (reverse), or a pass's result.

    ``values`` and ``rules`` are the running counts of op evaluations (values computed, derivative
    rules run) after this step; ``passes`` the passes finished; ``fill`` the column (forward) or row
    (reverse) this step completes, with its numbers in ``numbers``."""

    side: str  # "forward" | "reverse"
    pass_no: int  # 0: reverse mode's forward pass for the values; 1..n (or m): the derivative passes
    kind: str  # "seed" | "op" | "value" | "result"
    ids: list[str]
    text: str
    values: int = 0
    rules: int = 0
    passes: int = 0
    fill: int | None = None
    numbers: list[float] = field(default_factory=list)

    @property
    def evaluations(self) -> int:
        return self.values + self.rules


def _library(x: Any) -> Any:
    """The library ``x`` comes from (minigrad or torch), imported by its tensor's module name."""
    return importlib.import_module(type(x).__module__.split(".", 1)[0])


def _array(t: Any) -> np.ndarray:
    t = t.detach() if hasattr(t, "detach") else t
    return np.array(t.cpu().numpy() if hasattr(t, "cpu") else t.numpy(), dtype=np.float64, copy=True)


def _numbers(arr: np.ndarray, limit: int = 6) -> str:
    flat = arr.ravel()
    if flat.size == 1 and arr.ndim == 0:
        return probe.format_number(float(flat[0]))
    if flat.size <= limit:
        return "[" + ", ".join(probe.format_number(float(v)) for v in flat) + "]"
    return f"{probe.format_shape(arr.shape)} ‖·‖={probe.format_number(float(np.linalg.norm(flat)))}"


def _names(prefix: str, shape: tuple[int, ...]) -> list[str]:
    """'x[0]', 'x[1]', ... (or 'x[0, 1]' for a matrix; 'x' for a scalar), one per element in order."""
    if not shape:
        return [prefix]
    return [f"{prefix}[{', '.join(map(str, idx))}]" for idx in np.ndindex(*shape)]


def _unit(lib: Any, like: Any, k: int) -> Any:
    arr = np.zeros(int(np.prod(tuple(like.shape), dtype=np.int64)), dtype=np.float64)
    arr[k] = 1.0
    return lib.tensor(arr.reshape(tuple(like.shape)), dtype=like.dtype)


def _forward_order(walk: Walk) -> list[int]:
    """The op nodes (not leaves) in an order they can have run in: every input before its user, ties
    by the order the library numbered them as they were made (``_sequence_nr``, when it has one)."""
    inputs_left = [sum(1 for c, _ in node.edges if c is not None) for node in walk.nodes]
    parents = walk.parents()  # one entry per edge
    ready = [(_seq(node.fn), node.index) for node in walk.nodes if inputs_left[node.index] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for p in parents[i]:
            inputs_left[p] -= 1
            if inputs_left[p] == 0:
                heapq.heappush(ready, (_seq(walk.nodes[p].fn), p))
    return [i for i in order if not walk.nodes[i].is_accumulate]


def _reaching(walk: Walk, targets: list[int]) -> set[int]:
    """The nodes with a path to one of ``targets`` (following next_functions): those whose inputs depend on x."""
    parents = walk.parents()
    seen, todo = set(targets), list(targets)
    while todo:
        for p in parents[todo.pop()]:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def _seq(fn: Any) -> int:
    try:
        return int(fn._sequence_nr())
    except Exception:
        return 0


class _Drawn:
    """The drawn graph (``viz.draw`` of the reference run) and where each walked node is in it."""

    def __init__(self, y: Any, x_leaf: Any, rankdir: str) -> None:
        from . import draw

        self.graph = draw(y, params={"x": x_leaf}, rankdir=rankdir)
        ids: dict[str, list[str]] = {}
        for node in self.graph.model.nodes:
            ids.setdefault(node.key.split("#", 1)[0], []).append(node.id)
        self.ids = ids
        self.output = ids.get("out:0", [])
        self.walk = _walk((y,))
        self.names = [probe.short_name(n.name) for n in self.walk.nodes]
        self.order = _forward_order(self.walk)
        leaves = [n.index for n in self.walk.nodes if n.is_accumulate and probe.same_tensor(n.leaf, x_leaf)]
        self.input = [i for k in leaves for i in ids.get(f"fn:{k}", [])]
        self.on_path = _reaching(self.walk, leaves)

    def of(self, index: int) -> list[str]:
        return self.ids.get(f"fn:{index}", [])


def _check(f: Any, x: Any) -> None:
    if not callable(f):
        raise TypeError(f"forward_vs_reverse(): f must be a function of one tensor, got {type(f).__name__}")
    if not probe.is_tensor(x) or not hasattr(x, "detach"):
        raise TypeError(f"forward_vs_reverse(): x must be a tensor, got {type(x).__name__}")
    if not getattr(x, "dtype", None) or not getattr(x.dtype, "is_floating_point", True):
        raise TypeError("forward_vs_reverse(): x must be a floating point tensor (derivatives need one)")


def _output(y: Any) -> Any:
    if not probe.is_tensor(y):
        raise TypeError(f"forward_vs_reverse(): f must return a tensor, got {type(y).__name__}")
    if getattr(y, "grad_fn", None) is None:
        raise ValueError("forward_vs_reverse(): f's output does not depend on x (it has no grad_fn), "
                         "so there is no graph to run the passes through")
    return y


def _too_many(n: int, m: int) -> None:
    if max(n, m) > MAX_PASSES:
        raise ValueError(f"forward_vs_reverse(): {n} inputs and {m} outputs: the player shows at most {MAX_PASSES} "
                         "passes a side\nhint: a smaller x, or a slice of f's output, shows the same race")


def forward_vs_reverse(f: Any, x: Any, *, rankdir: str = "TB", title: str | None = None) -> ForwardVsReverse:
    """Compute the Jacobian of ``f`` at ``x`` both ways and play them side by side.

    Forward mode (``jacfwd``): one forward pass per element of ``x``, the tangent travelling up the
    graph op by op, each pass filling a column. Reverse mode (``jacrev``): one forward pass for the
    values, then one backward pass per element of ``f(x)``, each filling a row. The counts of passes and
    of op evaluations are those of the passes as they ran. Works on minigrad and PyTorch tensors; ``f``
    takes one tensor and returns one. The result shows as a widget (with a PNG of the graph beside it),
    ``print(result)`` gives the counts, ``save_html(path)`` a page that plays offline.
    """
    _check(f, x)
    lib = _library(x)
    x0 = x.detach().clone()
    with paused_gc():
        leaf = x0.clone().requires_grad_(True)
        y = _output(f(leaf))
        n, m = probe.numel(x0), probe.numel(y)
        _too_many(n, m)
        drawn = _Drawn(y, leaf, rankdir)
        try:
            forward, columns = _forward_passes(lib, f, x0, drawn, n)
            reverse, rows = _reverse_passes(lib, y, leaf, drawn, m)
        finally:
            drawn.walk.release()
    jf = np.stack(columns, axis=1) if columns else np.zeros((m, 0))
    jr = np.stack(rows, axis=0) if rows else np.zeros((0, n))
    return ForwardVsReverse(drawn.graph, forward, reverse, jf, jr, _names("x", tuple(x0.shape)),
                            _names("y", tuple(y.shape)), title)


def _forward_passes(lib: Any, f: Any, x0: Any, drawn: _Drawn, n: int) -> tuple[list[Step], list[np.ndarray]]:
    """n passes of f on dual numbers: x + ε e_k. Each returns column k (the output's tangent)."""
    fwad = lib.autograd.forward_ad
    steps: list[Step] = []
    columns: list[np.ndarray] = []
    count = {"values": 0, "rules": 0}
    names = _names("x", tuple(x0.shape))
    for k in range(n):
        add = _adder(steps, "forward", k + 1, count)
        add("seed", drawn.input, f"Pass {k + 1} of {n}: seed the tangent of {names[k]} (x gets ẋ = e{k + 1}: "
                                 f"1 at {names[k]}, 0 elsewhere)")
        with fwad.dual_level():
            xd = fwad.make_dual(x0.clone(), _unit(lib, x0, k)).requires_grad_(True)
            yk = _output(f(xd))
            walked = _walk((yk,))
            try:
                _same_graph(walked, drawn)
                for i in drawn.order:
                    out = probe.output_tensor(walked.nodes[i].fn)
                    tangent = fwad.unpack_dual(out).tangent if out is not None else None
                    count["values"] += 1
                    # a tangent rule ran where the output carries a tangent (seen where the library keeps the
                    # output, minigrad's output_tensor), else where an input did: the node is on a path from x
                    ran = tangent is not None if out is not None else i in drawn.on_path
                    count["rules"] += 1 if ran else 0
                    what = (f"its value and its tangent {_numbers(_array(tangent))}" if tangent is not None
                            else "its value and its tangent" if ran else "its value (no tangent: not on x's path)")
                    add("op", drawn.of(i), f"{drawn.names[i]} computes {what}")
                tangent = fwad.unpack_dual(yk).tangent
            finally:
                walked.release()
            column = (_array(tangent) if tangent is not None else np.zeros(tuple(yk.shape))).ravel()
        columns.append(column)
        add("result", drawn.output, f"Pass {k + 1} done: the output's tangent is column {k + 1} of the Jacobian "
                                    f"(∂y/∂{names[k]}) = {_numbers(column)}", fill=k, numbers=column)
    return steps, columns


def _reverse_passes(lib: Any, y: Any, leaf: Any, drawn: _Drawn, m: int) -> tuple[list[Step], list[np.ndarray]]:
    """One forward pass (the graph we already have: its nodes are the values it computed), then m
    backward passes, each seeded with e_i at the output. Node hooks record what ran, in order."""
    steps: list[Step] = []
    count = {"values": 0, "rules": 0}
    add = _adder(steps, "reverse", 0, count)
    for i in drawn.order:
        count["values"] += 1
        add("value", drawn.of(i), f"Forward pass (once, for the values the backward rules need): {drawn.names[i]}")
    fired: list[tuple[int, Any]] = []
    handles = [node.fn.register_hook(_recorder(fired, node.index)) for node in drawn.walk.nodes
               if not node.is_accumulate]
    names = _names("y", tuple(y.shape))
    rows: list[np.ndarray] = []
    try:
        for r in range(m):
            add = _adder(steps, "reverse", r + 1, count)
            add("seed", drawn.output, f"Pass {r + 1} of {m}: seed the gradient of {names[r]} (ȳ = e{r + 1}: "
                                      f"1 at {names[r]}, 0 elsewhere)")
            fired.clear()
            (grad,) = lib.autograd.grad(y, leaf, grad_outputs=_unit(lib, y, r), retain_graph=True, allow_unused=True)
            for i, arrived in fired:
                count["rules"] += 1
                add("op", drawn.of(i), f"{drawn.names[i]} runs its backward rule on the gradient {arrived}")
            row = (_array(grad) if grad is not None else np.zeros(tuple(leaf.shape))).ravel()
            rows.append(row)
            add("result", drawn.input, f"Pass {r + 1} done: x's gradient is row {r + 1} of the Jacobian "
                                       f"(∂{names[r]}/∂x) = {_numbers(row)}", fill=r, numbers=row)
    finally:
        for handle in handles:
            handle.remove()
    return steps, rows


def _passes(k: int, kind: str = "") -> str:
    return f"{k} {kind}pass" + ("" if k == 1 else "es")


def _recorder(fired: list, index: int) -> Any:
    def hook(grad_inputs: Any, grad_outputs: Any) -> None:
        arrived = grad_outputs[0] if grad_outputs else None
        fired.append((index, _numbers(_array(arrived)) if arrived is not None else "None"))

    return hook


def _adder(steps: list[Step], side: str, pass_no: int, count: dict[str, int]) -> Any:
    """A function adding a step of this pass with the running counts; a result step finishes the pass."""

    def add(kind: str, ids: list[str], text: str, fill: int | None = None, numbers: Any = ()) -> None:
        done = pass_no if kind == "result" else pass_no - 1 if pass_no else 0
        steps.append(Step(side, pass_no, kind, list(ids), clean(text), count["values"], count["rules"], done, fill,
                          [float(v) for v in numbers]))

    return add


def _same_graph(walked: Walk, drawn: _Drawn) -> None:
    if [probe.short_name(n.name) for n in walked.nodes] != drawn.names:
        raise ValueError("forward_vs_reverse(): f ran different ops in a forward-mode pass than in its first "
                         "run (does it branch on x's values?), so its passes cannot be drawn on one graph")


class ForwardVsReverse:
    """What ``viz.forward_vs_reverse`` returns: both computations of the Jacobian, as steps to play.

    ``forward`` / ``reverse``: the steps (``Step``) of each side; ``jacobian_forward`` /
    ``jacobian_reverse``: the (outputs × inputs) matrices the passes filled; ``counts``: passes and
    op evaluations of each side; ``graph``: the drawn graph (``viz.Graph``)."""

    def __init__(self, graph: Any, forward: list[Step], reverse: list[Step], jf: np.ndarray, jr: np.ndarray,
                 inputs: list[str], outputs: list[str], title: str | None = None) -> None:
        self.graph = graph
        self.forward = forward
        self.reverse = reverse
        self.jacobian_forward = jf
        self.jacobian_reverse = jr
        self.inputs = [clean(s) for s in inputs]
        self.outputs = [clean(s) for s in outputs]
        self.title = clean(title) if title else None
        self._widget: Any = None
        self._frame = 0
        self.lang = language()  # the player keeps the language it was made in (viz.i18n)

    @property
    def n(self) -> int:
        return len(self.inputs)

    @property
    def m(self) -> int:
        return len(self.outputs)

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """{"forward": {"passes", "values", "rules", "evaluations"}, "reverse": {...}} at the end."""
        out = {}
        for side, steps in (("forward", self.forward), ("reverse", self.reverse)):
            last = steps[-1]
            out[side] = {"passes": last.passes, "values": last.values, "rules": last.rules,
                         "evaluations": last.evaluations}
        return out

    @property
    def winner(self) -> str:
        """"forward", "reverse" or "tie": the side with fewer op evaluations."""
        f, r = self.counts["forward"]["evaluations"], self.counts["reverse"]["evaluations"]
        return "forward" if f < r else "reverse" if r < f else "tie"

    @property
    def num_steps(self) -> int:
        """Steps of the shared clock: both sides advance together; the shorter one waits, done."""
        return max(len(self.forward), len(self.reverse))

    def verdict(self) -> str:
        c = self.counts
        shape = "tall" if self.m > self.n else "wide" if self.m < self.n else "square"
        who = {"forward": "Forward mode wins", "reverse": "Reverse mode wins", "tie": "A tie"}[self.winner]
        return (f"{who} for this {shape} Jacobian ({self.m}×{self.n}): {c['forward']['evaluations']} op evaluations "
                f"forward ({_passes(c['forward']['passes'])}) against {c['reverse']['evaluations']} reverse "
                f"({_passes(c['reverse']['passes'], 'backward ')} after 1 forward pass).")

    def summary(self) -> str:
        """The text twin of the player: counts, verdict and the Jacobian (deterministic)."""
        c = self.counts
        width = max(8, *(len(s) for s in self.outputs))
        lines = [f"Jacobian of f at x: {self.m} outputs × {self.n} inputs",
                 f"forward mode (jacfwd): {_passes(c['forward']['passes'])} (one per input), "
                 f"{c['forward']['evaluations']} op evaluations ({c['forward']['values']} values + "
                 f"{c['forward']['rules']} tangent rules)",
                 f"reverse mode (jacrev): 1 forward pass + {_passes(c['reverse']['passes'], 'backward ')} "
                 "(one per output), "
                 f"{c['reverse']['evaluations']} op evaluations ({c['reverse']['values']} values + "
                 f"{c['reverse']['rules']} backward rules)",
                 self.verdict(), "",
                 " " * width + "".join(f"{s:>10}" for s in self.inputs)]
        for name, row in zip(self.outputs, self.jacobian_forward):
            lines.append(f"{name:<{width}}" + "".join(f"{probe.format_number(float(v)):>10}" for v in row))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    # -- the player -------------------------------------------------------------------------------------------
    def payload(self) -> dict:
        """What the page plays: both sides' steps, the labels, the verdict (all text, escaped by the page)."""
        def side(steps: list[Step]) -> list[dict]:
            return [{"pass": s.pass_no, "kind": s.kind, "ids": s.ids, "text": tr(s.text, self.lang),
                     "values": s.values, "rules": s.rules, "passes": s.passes, "fill": s.fill,
                     "numbers": [probe.format_number(v) for v in s.numbers]} for s in steps]

        out = {"inputs": self.inputs, "outputs": self.outputs, "forward": side(self.forward),
               "reverse": side(self.reverse), "verdict": tr(self.verdict(), self.lang), "winner": self.winner,
               "counts": self.counts, "title": self.title or ""}
        i18n = page_data(self.lang)
        if i18n:  # the page's own words (viz/i18n.js, inlined after jacobian.js)
            out["i18n"] = i18n
        return out

    def _state(self) -> dict:
        return {"svg": self.graph.svg() or "", "data": self.payload(), "frame": self._frame}

    @property
    def widget(self) -> Any:
        """The anywidget widget (made on first use), or None without anywidget; ``close()`` releases it."""
        if self._widget is None:
            cls = widget_class()
            if cls is not None:
                self._widget = cls(**self._state())
        return self._widget

    @property
    def frame(self) -> int:
        """The clock tick shown (synced with the page once the widget exists): both sides' step at that tick."""
        return int(self._widget.frame) if self._widget is not None else self._frame

    @frame.setter
    def frame(self, value: int) -> None:
        self._frame = max(0, min(int(value), self.num_steps - 1))
        if self._widget is not None:
            self._widget.frame = self._frame

    def close(self) -> None:
        if self._widget is not None:
            self._widget.close()
            self._widget = None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        from .player import widget_view

        data: dict[str, Any] = {"text/plain": self.summary()}
        meta: dict[str, Any] = {}
        widget = self.widget
        if widget is not None:
            view, view_meta = widget_view(widget)
            data.update(view)
            meta.update(view_meta)
        png = self.png()
        if png is not None:
            png_data, png_meta = png.mimebundle()
            data.update(png_data)
            meta.update(png_meta)
        return data, meta

    def still_dot(self) -> str:
        """DOT of the still picture: above the graph, the race's end as text (the verdict, the counts, the
        Jacobian), which is what shows where the widget cannot run."""
        source = self.graph.source.rstrip().rstrip("}")
        out = next((n.id for n in self.graph.model.nodes if n.key == "out:0"), None)
        card, matrix = _card(self)
        chain = "  mgj_card -> mgj_matrix [style=invis];\n" + (f"  mgj_matrix -> {out} [style=invis];\n" if out else "")
        return (f"{source}  mgj_card [shape=plain label=<{card}>];\n  mgj_matrix [shape=plain label=<{matrix}>];\n"
                f"{chain}}}\n")

    def png(self) -> Any:
        """The still picture as a PNG at 2x (cached), or None without a renderer that makes PNGs."""
        if not hasattr(self, "_png"):
            from . import render

            dot = self.still_dot()
            svg = render.render(dot, "svg")
            self._png = render.render_png(dot, render.svg_css_size(svg.decode("utf-8")) if svg else None)
        return self._png

    def save_html(self, path: Any, title: str | None = None) -> Path:
        """One self-contained HTML file that plays both sides without a kernel or network."""
        target = Path(path)
        if target.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"viz: save_html() needs a .html path, got {str(path)!r}")
        return write_atomic(target, page(self, title))


MAX_CARD_CELLS = 12  # rows or columns of the Jacobian the still picture shows


def _card(race: ForwardVsReverse) -> tuple[str, str]:
    """The still picture's two HTML-like Graphviz labels, the counts and the Jacobian (every text escaped by
    html_text; two nodes, as Graphviz would stretch a table nested in a wider one)."""
    from . import style
    from .dot import html_text

    c = race.counts
    lang = race.lang
    head = re.split(r": |：", tr(race.verdict(), lang), maxsplit=1)
    colon = "：" if lang == "zh" else ":"
    rows = [f'<TR><TD COLSPAN="2"><B>{html_text(head[0] + colon)}</B></TD></TR>',
            f'<TR><TD COLSPAN="2">{html_text(head[-1])}</TD></TR>']
    sides = [("Forward mode · jacfwd", "#0072B2", f"{_passes(c['forward']['passes'])}, one per input"),
             ("Reverse mode · jacrev", "#B34E00",
              f"1 forward + {_passes(c['reverse']['passes'], 'backward ')}, one per output")]
    rows.append("<TR>" + "".join(f'<TD><FONT COLOR="{color}"><B>{html_text(tr(name, lang))}</B></FONT></TD>'
                                 for name, color, _ in sides) + "</TR>")
    rows.append("<TR>" + "".join(f"<TD>{html_text(tr(text, lang))}</TD>" for _, _, text in sides) + "</TR>")
    counts = [tr(f"{c[side]['evaluations']} op evaluations", lang) for side in ("forward", "reverse")]
    rows.append("<TR>" + "".join(f"<TD><B>{html_text(text)}</B></TD>" for text in counts) + "</TR>")
    tail = ("The Jacobian, both ways (its first 12 rows and columns):" if max(race.m, race.n) > MAX_CARD_CELLS
            else "The Jacobian, both ways:")
    note = tr(PLAY_NOTE, lang) + ("。" if lang == "zh" else ". ") + tr(tail, lang)
    rows.append(f'<TR><TD COLSPAN="2"><FONT POINT-SIZE="10" COLOR="{style.MUTED_TEXT}">'
                f"{html_text(note)}</FONT></TD></TR>")
    card = (f'<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" COLOR="{style.BORDER}" '
            f'BGCOLOR="#FFFFFF">{"".join(rows)}</TABLE>')
    cell = '<TD ALIGN="RIGHT">{}</TD>'
    grid = ["<TR><TD><B>J</B></TD>" + "".join(cell.format(html_text(n)) for n in race.inputs[:MAX_CARD_CELLS])
            + "</TR>"]
    for name, values in zip(race.outputs[:MAX_CARD_CELLS], race.jacobian_forward):
        grid.append(f"<TR><TD>{html_text(name)}</TD>"
                    + "".join(cell.format(probe.format_number(float(v))) for v in values[:MAX_CARD_CELLS]) + "</TR>")
    matrix = (f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="{style.BORDER}" '
              f'BGCOLOR="#FFFFFF">{"".join(grid)}</TABLE>')
    return card, matrix


def page(race: ForwardVsReverse, title: str | None = None) -> str:
    """The standalone page: export.py's template with this player's script and style inlined."""
    from . import style
    from .export import _PAGE, _json_for_html, standalone_js

    title = title or race.title or tr("viz: a Jacobian by forward mode and by reverse mode", race.lang)
    state = dict(race._state(), standalone=True)
    note = tr("Play, or step with ← and → (click the player first). Made with viz.forward_vs_reverse; "
              "this page needs no kernel and no network.", race.lang)
    return _PAGE.format(title=html.escape(title), font=style.FONT.replace(",", ", "), muted=style.MUTED_TEXT,
                        lang="zh-CN" if race.lang == "zh" else race.lang, css=CSS, note=html.escape(note),
                        state=_json_for_html(state), js=standalone_js(ESM), engine="")


_WIDGET: list[Any] = []


def widget_class() -> type | None:
    """The players' anywidget class (viz.player) with this player's front end instead of player.js (made on
    first use), or None without anywidget. It syncs ``svg``, ``data`` and ``frame``; the rest goes unused."""
    if not _WIDGET:
        from .player import widget_class as player_widget

        base = player_widget()
        _WIDGET.append(None if base is None else type("JacobianWidget", (base,), {
            "_esm": ESM, "_css": CSS, "__module__": __name__,
            "__doc__": "Forward mode beside reverse mode in the browser: the graph's SVG, both sides' steps."}))
    return _WIDGET[0]
