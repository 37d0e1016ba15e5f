"""``viz.compare``: your hand-derived gradients against autograd's, as a table and a picture.

    cmp = viz.compare(loss, mine={"h": dh, "w1": dw1}, params={"h": h, "w1": w1})
    cmp                 # the graph, each named tensor coloured exact / close / wrong
    print(cmp)          # the same as a table, the first wrong one in backward order named

It is Karpathy's ``cmp()`` from "becoming a backprop ninja", for a whole graph at once: a
learner who writes every gradient by hand sees at a glance where the chain first breaks,
and the first wrong one in *backward order* is the one to fix (those after it inherit it).

Autograd's gradients come from ``autograd.grad(loss, tensors, retain_graph=True)``: nothing
is accumulated into any ``.grad`` and no tensor's flags change (no ``retain_grad`` is left
behind), and the graph is kept so that ``viz.draw`` or ``viz.animate`` can still use it.
"""

from __future__ import annotations

import heapq
import importlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import dot as _dot
from . import probe
from .graph import Graph, picture_with_text
from .i18n import ljust, tr, width
from .model import build
from .trace import to_numpy
from .walk import paused_gc
from .walk import walk as _walk

__all__ = ["compare", "Comparison", "Entry", "VERDICT_FILL", "backward_order"]

RTOL, ATOL = 1e-5, 1e-7  # "close": within float32 rounding of a differently ordered computation

# exact / close / wrong fills (Okabe–Ito tints: text on them reads at 4.5:1 or more); the row
# inside each box says the verdict in words too, so colour is never the only cue
VERDICT_FILL = {"exact": "#80CEB9", "close": "#F7F1A0", "wrong": "#EAAE80", "missing": "#E6E6E6"}
NEUTRAL_FILL = "#FFFFFF"  # nodes nobody named: white, so the verdicts stand out
MARK = {"exact": "✓", "close": "≈", "wrong": "✗", "missing": "?"}


@dataclass
class Entry:
    """One named tensor: your gradient against autograd's."""

    name: str
    verdict: str  # "exact" | "close" | "wrong" | "missing" (autograd gives it no gradient)
    max_diff: float  # max |mine - autograd| (inf for a shape mismatch, nan when missing)
    shape: tuple[int, ...] | None  # the tensor's shape
    mine_shape: tuple[int, ...] | None
    order: int | None = None  # position of its node in backward order (0 runs first)
    node: str | None = None  # drawn id of its node in ``Comparison.graph``
    index: int | None = None  # its node's place in viz.walk order (the same in viz.animate of this loss)
    note: str = ""

    @property
    def text(self) -> str:
        """One line: '✗ h wrong, max |Δ| = 3.1e-01'."""
        diff = "" if math.isnan(self.max_diff) else f", max |Δ| = {_fmt(self.max_diff)}"
        note = f" ({self.note})" if self.note else ""
        return f"{MARK[self.verdict]} {self.name} {self.verdict}{diff}{note}"


@dataclass
class Comparison:
    """The result of ``viz.compare``: entries in backward order, a table and a picture."""

    entries: list[Entry]
    graph: Graph | None = None
    expected: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # autograd's gradients

    @property
    def first_wrong(self) -> Entry | None:
        """The first wrong gradient in backward order: fix it first, later ones may follow from it."""
        return next((e for e in self.entries if e.verdict == "wrong"), None)

    @property
    def passed(self) -> bool:
        return all(e.verdict in ("exact", "close") for e in self.entries)

    def __bool__(self) -> bool:
        return self.passed

    def __getitem__(self, name: str) -> Entry:
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def __repr__(self) -> str:
        rows = [("", tr("tensor"), tr("shape"), tr("verdict"), tr("max |mine - autograd|"))]
        for e in self.entries:
            diff = "" if math.isnan(e.max_diff) else _fmt(e.max_diff)
            rows.append((MARK[e.verdict], e.name, probe.format_shape(e.shape), tr(e.verdict), tr(diff)))
        widths = [max(width(r[k]) for r in rows) for k in range(5)]
        lines = ["  ".join(ljust(cell, w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        first = self.first_wrong
        if first is not None:
            lines.append(tr(f"first wrong in backward order: {first.name} (max |Δ| = {_fmt(first.max_diff)})"))
        elif self.entries:
            lines.append(tr("all gradients match autograd's"))
        notes = [f"{e.name}: {tr(e.note)}" for e in self.entries if e.note]
        return "\n".join(lines + notes)

    __str__ = __repr__

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return picture_with_text(self.graph, repr(self), include, exclude)


NOISE = 1e-12  # below this a difference is float64 rounding, whose digits vary between machines


def _fmt(x: float) -> str:
    """The max difference for the table; rounding noise as '< 1e-12', so stored outputs are stable."""
    if math.isinf(x):
        return "shape differs"
    if x == 0:
        return "0"
    return f"< {NOISE:.0e}" if x < NOISE else f"{x:.1e}"


def _library(tensor: Any) -> Any:
    """The autograd library a tensor belongs to (torch or minigrad), imported by name at call
    time so that viz itself imports neither."""
    return importlib.import_module(type(tensor).__module__.split(".", 1)[0])


def _named(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if hasattr(params, "named_parameters") and not hasattr(params, "items"):
        params = params.named_parameters()
    items = params.items() if hasattr(params, "items") else params
    return {str(k): v for k, v in items if probe.is_tensor(v)}


def _sequence_nr(fn: Any) -> int:
    try:
        return int(fn._sequence_nr())
    except Exception:
        return -1


def backward_order(walk: Any) -> list[int]:
    """Walk indices in the order the engine runs them: a node once every node feeding it has run,
    the ready one created last first (highest ``_sequence_nr``, as PyTorch's CPU engine picks)."""
    waiting = [0] * len(walk.nodes)
    for raw in walk.nodes:
        for child, _ in raw.edges:
            if child is not None:
                waiting[child] += 1
    ready = [(-_sequence_nr(raw.fn), raw.index) for raw in walk.nodes if waiting[raw.index] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for child, _ in walk.nodes[i].edges:
            if child is not None:
                waiting[child] -= 1
                if waiting[child] == 0:
                    heapq.heappush(ready, (-_sequence_nr(walk.nodes[child].fn), child))
    return order


def _node_of(walk: Any, tensor: Any) -> int | None:
    """The walked node that stands for ``tensor``: its grad_fn, or its AccumulateGrad for a leaf."""
    fn = getattr(tensor, "grad_fn", None)
    for raw in walk.nodes:
        if fn is not None and raw.fn is fn:
            return raw.index
        if fn is None and raw.leaf is not None and probe.same_tensor(raw.leaf, tensor):
            return raw.index
    return None


def verdict(mine: np.ndarray | None, expected: np.ndarray | None, rtol: float = RTOL,
            atol: float = ATOL) -> tuple[str, float]:
    """('exact' | 'close' | 'wrong' | 'missing', max |mine - expected|), as Karpathy's cmp()."""
    if expected is None:
        return "missing", math.nan
    if mine is None or mine.shape != expected.shape:
        return "wrong", math.inf
    if mine.size == 0:
        return "exact", 0.0
    diff = np.abs(mine.astype(np.float64) - expected.astype(np.float64))
    max_diff = float(np.nan_to_num(diff, nan=math.inf).max())
    if np.array_equal(mine, expected):
        return "exact", max_diff
    if np.allclose(mine, expected, rtol=rtol, atol=atol):
        return "close", max_diff
    return "wrong", max_diff


def _as_array(value: Any) -> np.ndarray | None:
    if value is None or value is ...:
        return None
    arr = to_numpy(value) if probe.is_tensor(value) else None
    if arr is None:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    return arr


def _autograd(loss: Any, tensors: dict[str, Any]) -> dict[str, np.ndarray | None]:
    """Autograd's gradient of ``loss`` for each tensor (None: it does not require grad, or the loss does
    not depend on it). When the graph was already freed by a backward(), the tensors' own ``.grad``
    (leaves, or intermediates that called retain_grad) are used if every one has it."""
    wanted = {k: t for k, t in tensors.items() if getattr(t, "requires_grad", False)}
    out: dict[str, np.ndarray | None] = dict.fromkeys(tensors)
    if not wanted:
        return out
    lib = _library(loss)
    try:
        grads = lib.autograd.grad(loss, list(wanted.values()), retain_graph=True, allow_unused=True)
    except RuntimeError as exc:
        if "second time" not in str(exc):
            raise
        own = {k: probe.grad_of(t) for k, t in wanted.items()}
        if any(g is None for g in own.values()):
            missing = sorted(k for k, g in own.items() if g is None)
            raise RuntimeError(f"{exc}\nhint: viz.compare runs autograd itself: call it before loss.backward() "
                               f"(or keep the graph with retain_graph=True); {missing} have no .grad to use") from None
        grads = tuple(own.values())
    out.update({k: to_numpy(g) if g is not None else None for k, g in zip(wanted, grads)})
    return out


def compare(
    loss: Any,
    mine: dict[str, Any],
    params: Any,
    *,
    rtol: float = RTOL,
    atol: float = ATOL,
    draw: bool = True,
    rankdir: str = "TB",
) -> Comparison:
    """Compare your gradients (``mine``: name -> array or tensor) with autograd's for the tensors
    ``params`` names (leaves and intermediates, as ``viz.draw`` takes them).

    Each is "exact" (equal), "close" (``allclose(rtol, atol)``) or "wrong", with the max difference;
    the entries come in backward order, so ``result.first_wrong`` is the one to fix first.
    The loss's graph is kept (``retain_graph=True``) and no ``.grad`` or flag of yours changes.
    """
    named = _named(params)
    unknown = [k for k in mine if k not in named]
    if unknown:
        raise KeyError(f"viz.compare: {unknown} not in params; name every tensor of `mine` in params "
                       f"(known: {sorted(named)})")
    expected = _autograd(loss, {k: named[k] for k in mine})

    with paused_gc():
        walked = _walk((loss,))
        try:
            order = {raw: k for k, raw in enumerate(backward_order(walked))}
            raw_of = {k: _node_of(walked, named[k]) for k in mine}
            model = build(walked, params=params, show_saved=False) if draw else None
        finally:
            walked.release()

    entries = []
    for k in mine:
        mine_arr = _as_array(mine[k])
        verdict_, max_diff = verdict(mine_arr, expected[k], rtol, atol)
        shape = probe.shape_of(named[k])
        note = ""
        if mine_arr is None:
            note = "no answer yet" if mine[k] is ... or mine[k] is None else "not an array"
        elif expected[k] is not None and mine_arr.shape != expected[k].shape:
            theirs = probe.format_shape(expected[k].shape)
            note = f"your shape {probe.format_shape(mine_arr.shape)}, autograd's {theirs}"
        elif verdict_ == "missing":
            requires = getattr(named[k], "requires_grad", False)
            note = "the loss does not depend on it" if requires else "it does not require grad"
        raw = raw_of[k]
        entries.append(Entry(k, verdict_, max_diff, shape, None if mine_arr is None else mine_arr.shape,
                             order=order.get(raw) if raw is not None else None,
                             node=f"fn:{raw}" if raw is not None else None, note=note, index=raw))
    entries.sort(key=lambda e: (e.order is None, e.order if e.order is not None else 0))
    graph = _picture(model, entries, rankdir) if model is not None else None
    return Comparison(entries, graph, {k: v for k, v in expected.items() if v is not None})


def _picture(model: Any, entries: list[Entry], rankdir: str) -> Graph:
    """The graph with every named tensor's node filled by its verdict and a row saying it."""
    by_key: dict[str, list[Entry]] = {}
    for e in entries:
        if e.node is not None:
            by_key.setdefault(e.node, []).append(e)
    first = next((e for e in entries if e.verdict == "wrong"), None)
    for node in model.nodes:
        found = by_key.get(node.key.split("#", 1)[0])
        if not found:
            node.fill = NEUTRAL_FILL
            continue
        worst = max(found, key=lambda e: ["exact", "close", "missing", "wrong"].index(e.verdict))
        node.fill = VERDICT_FILL[worst.verdict]
        for e in found:
            node.rows.append(("check", e.text))
        if first is not None and first in found:
            node.rows.append(("check", "first wrong in backward order"))
    for e in entries:  # drawn ids, as viz.draw numbers them
        e.node = next((n.id for n in model.nodes if e.node and n.key.split("#", 1)[0] == e.node), None)
    return Graph(model, _dot.to_dot(model, rankdir=rankdir))


def attach_comparison(recording: Any, comparison: Comparison, rankdir: str = "TB") -> None:
    """``animate(loss, compare=cmp)``: the player's picture coloured as ``cmp``'s, and the step of each
    named tensor's node says how your gradient compares ("✗ h wrong, max |Δ| = 3.8e-01")."""
    by_index = {e.index: e for e in comparison.entries if e.index is not None}
    for frame in recording.frames:
        entry = by_index.get(frame.index) if frame.kind in ("run", "accumulate") else None
        if entry is not None:
            frame.lines.append(("check", "your gradient: " + entry.text))
    model = recording.graph.model
    _picture(model, [Entry(e.name, e.verdict, e.max_diff, e.shape, e.mine_shape, e.order, f"fn:{e.index}")
                     for e in comparison.entries if e.index is not None], rankdir)
    recording.graph = Graph(model, _dot.to_dot(model, rankdir=rankdir))
