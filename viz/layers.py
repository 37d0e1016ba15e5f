"""The graph of the backward pass: with ``create_graph=True`` backward's own formulas record nodes.

Where does a second derivative or a Hessian-vector product come from? Each node made while backward ran
a node keeps that node in ``metadata["parent_"]`` (PyTorch's public anomaly-mode name, mirrored by
minigrad; nodes are only tagged in anomaly mode, so build the graph and run the first backward inside
``viz.source_lines()`` or ``viz.session(source=True)``). ``viz.draw(..., layers=True)`` draws those nodes as
a second layer in another colour, each with a dashed link to the first-order node whose rule made it;
the first-order graph is drawn too even when the roots do not reach it. ``viz.animate(..., layers=True)``
colours the same layer while the player steps through the second backward.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import probe, style
from .model import Model, VEdge

__all__ = ["Layers", "parents_of", "roots_with_parents", "mark_layers", "draw_layers"]



@dataclass
class Layers:
    """For each walked node: the walk index of its parent (None: first layer, or a parent not walked)
    and whether it belongs to the second layer."""

    parent: list[int | None]
    second: list[bool]
    parent_names: list[str | None]
    parent_layers: list[int | None] = field(default_factory=list)  # 1, or 2 when the parent was itself made

    @property
    def count(self) -> int:
        return sum(self.second)


def _parent(fn: Any) -> Any:
    parent = probe.metadata(fn).get("parent_")
    return parent if probe.is_node(parent) else None


def roots_with_parents(walked: Any, roots: tuple) -> tuple:
    """``roots`` plus the parents of second-layer nodes that the walk did not reach (as nodes), so that
    the first-order graph they belong to is drawn too."""
    seen = {id(raw.fn) for raw in walked.nodes}
    extra = []
    for raw in walked.nodes:
        parent = _parent(raw.fn)
        if parent is not None and id(parent) not in seen:
            seen.add(id(parent))
            extra.append(parent)
    return tuple(roots) + tuple(extra)


def parents_of(walked: Any) -> Layers:
    """Which walked nodes backward made, and the node that made each."""
    index = {id(raw.fn): raw.index for raw in walked.nodes}
    parent: list[int | None] = []
    second: list[bool] = []
    names: list[str | None] = []
    layers: list[int | None] = []
    for raw in walked.nodes:
        p = _parent(raw.fn)
        second.append(p is not None)
        parent.append(index.get(id(p)) if p is not None else None)
        names.append(probe.node_name(p) if p is not None else None)
        layers.append((2 if _parent(p) is not None else 1) if p is not None else None)
    return Layers(parent, second, names, layers)


def parent_label(layers: Layers, i: int) -> str:
    """The node whose backward made walked node ``i``, with its layer ("layer 1's PowBackward0"): a node of
    the second layer can share its parent's name, and "PowBackward0 made by PowBackward0" says nothing."""
    name = layers.parent_names[i]
    layer = layers.parent_layers[i] if i < len(layers.parent_layers) else None
    return f"layer {layer}'s {name}" if layer is not None else str(name)


def mark_layers(model: Model, layers: Layers, ids_of: Any, links: bool = True) -> None:
    """Colour the second layer's drawn nodes, caption each with its parent, and (``links``) add a dashed
    link to the parent's box. ``ids_of(raw index)`` gives the drawn ids of a walked node."""
    by_id = {n.id: n for n in model.nodes}
    for i, second in enumerate(layers.second):
        if not second:
            continue
        for node_id in ids_of(i):
            node = by_id.get(node_id)
            if node is None or node.role not in ("fn", "leaf"):
                continue
            node.fill = style.LAYER2_FILL
            node.caption = f"layer 2: made by the backward of {parent_label(layers, i)}"
            node.layer = 2
            parent = layers.parent[i]
            if links and parent is not None:
                for parent_id in ids_of(parent)[:1]:
                    target = by_id.get(parent_id)
                    if target is not None and target.key != node.key:
                        model.edges.append(VEdge(node.key, target.key, faint=True,
                                                 color=style.LAYER2_LINK))
                        node.parent = parent_id


def draw_layers(roots: tuple, params: Any = None, show_saved: bool = False, show_attrs: bool = False,
                show_values: bool = False, show_grads: bool = False, rankdir: str = "TB",
                max_nodes: int | None = None, legend: bool = False, source: bool = False) -> Any:
    """``viz.draw(*roots, layers=True)``: the picture with the backward pass's own graph as a second layer."""
    from .dot import to_dot
    from .graph import Graph
    from .model import build
    from .trace import map_graph
    from .walk import paused_gc
    from .walk import walk as _walk

    with paused_gc():
        walked = _walk(roots)
        every = roots_with_parents(walked, roots)
        if len(every) > len(roots):
            walked.release()
            walked = _walk(every)
        try:
            model = build(walked, view="backward", params=params, show_saved=show_saved, show_attrs=show_attrs,
                          show_values=show_values, show_grads=show_grads, max_nodes=max_nodes, source=source)
            gmap = map_graph(walked, model)
            mark_layers(model, parents_of(walked), lambda i: gmap.node_ids[i])
        finally:
            walked.release()
    return Graph(model, to_dot(model, rankdir=rankdir, legend=legend))
