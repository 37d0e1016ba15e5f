"""The text twin of a picture: one plain, deterministic table row per drawn node.

Notebooks check this text with nbval (the SVG beside it is ignored), and graders compare
it, so it has no addresses, no timings and no trailing spaces.
"""

from __future__ import annotations

from typing import Any

from . import dot, probe
from .i18n import language, ljust, saved_label, tr, width, words_on_node
from .model import Model
from .walk import WALK_LIMIT

_COLUMNS = ("id", "kind", "name", "shape", "to", "data", "grad", "notes")
_WIDTH_LIMIT = {"name": 40, "to": 36, "data": 40, "grad": 40}


def _text(value: Any, limit: int | None = None) -> str:
    s = dot.clean(value).replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")
    return probe.truncate(s, limit) if limit else s


def model_rows(model: Model) -> list[dict[str, str]]:
    """One dict per node, keyed by the table's columns."""
    ids = {node.key: node.id for node in model.nodes}
    out_edges: dict[str, list[str]] = {node.key: [] for node in model.nodes}
    for edge in model.edges:
        target = ids[edge.dst]
        if edge.slot is not None and model.view == "backward" and not edge.faint:
            target += f":{edge.slot}"
        if edge.count > 1:
            target += f"×{edge.count}"
        out_edges[edge.src].append(target)
    rows = []
    for node in model.nodes:
        notes = []
        if node.caption:
            notes.append(node.caption)
        if node.ghost:
            notes.append("ghost")
        if node.module:
            notes.append(f"module {node.module}")
        notes.extend(probe.saved_label(text) if kind == "saved" else text for kind, text in node.rows)
        notes.extend(node.badges)
        rows.append({
            "id": node.id,
            "kind": node.role,
            "name": _text(node.title, _WIDTH_LIMIT["name"]),
            "shape": probe.format_shape(node.shape) if node.shape is not None else "",
            "to": " ".join(out_edges[node.key]),
            "data": _text(node.data, _WIDTH_LIMIT["data"]) if node.data is not None else "",
            "grad": _text(node.grad, _WIDTH_LIMIT["grad"]) if node.grad is not None else "",
            "notes": _text("; ".join(notes)),
        })
    return rows


class Summary:
    """A table that prints cleanly: ``print(viz.summary(y))`` or just ``viz.summary(y)``."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.rows = model_rows(model)
        self.text = _format(model, self.rows)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Summary):
            return self.text == other.text
        if isinstance(other, str):
            return self.text == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)


def _in_language(model: Model, node: Any, row: dict[str, str]) -> dict[str, str]:
    """A row as printed in viz's language: the kind and viz's own words in the name and notes; node names,
    shapes, values and code stay as they are (``rows`` keep the English kinds, for code that reads them)."""
    lang = language()
    if lang == "en":
        return row
    shown = words_on_node(node, lang)
    notes = [shown.caption] if shown.caption else []
    notes += [tr("ghost", lang)] if node.ghost else []
    notes += [tr(f"module {node.module}", lang)] if node.module else []
    notes += [saved_label(text, lang) if kind == "saved" else text for kind, text in shown.rows] + shown.badges
    return dict(row, kind=tr(row["kind"], lang), name=_text(shown.title, _WIDTH_LIMIT["name"]),
                notes=_text("; ".join(notes)))


def _format(model: Model, rows: list[dict[str, str]]) -> str:
    head = f"{model.view} view: {len(model.nodes)} nodes, {len(model.edges)} edges"
    if model.hidden:
        head += f" ({model.hidden:,} more hidden)"
    if model.truncated:
        head += f" (walk stopped at {WALK_LIMIT:,} nodes: the graph goes on)"
    rows = [_in_language(model, node, row) for node, row in zip(model.nodes, rows)]
    columns = [c for c in _COLUMNS if c in ("id", "kind", "name") or any(r[c] for r in rows)]
    names = {c: tr(c) for c in columns}  # the header in viz's language; the cells are names, shapes, values
    widths = {c: max([width(names[c])] + [width(r[c]) for r in rows]) for c in columns}
    lines = [tr(head), "  ".join(ljust(names[c], widths[c]) for c in columns).rstrip()]
    for row in rows:
        lines.append("  ".join(ljust(row[c], widths[c]) for c in columns).rstrip())
    return "\n".join(lines)
