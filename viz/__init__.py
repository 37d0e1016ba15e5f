"""viz: draw any autograd graph (PyTorch's or minigrad's) with Graphviz.

    import viz
    viz.draw(loss, params=dict(model.named_parameters()))        # shows as SVG in Jupyter
    print(viz.summary(loss))                                     # the same graph as text

viz reads graphs only through their public attributes (and minigrad's introspection names
when present), so it never imports torch or minigrad. The layers: ``walk`` (roots ->
nodes, iteratively), ``model`` (views, summarising, ghosts), ``dot`` (model -> DOT text),
``render`` (DOT -> SVG/PNG/PDF), ``summary`` (model -> text table); ``style`` documents
the visual language. The story of a program: ``source`` (the line behind each node),
``session`` (several calls as steps), ``layers`` (the graph of the backward pass). Forward mode:
``tangent`` (``viz.animate(f, dual_x)``: the tangent moving forward with the values). Languages: ``i18n``
(``viz.set_language("zh")``, else ``MINIGRAD_LANG``, else the locale, else English).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import dot as _dot
from .fold import fold as _fold
from .fold import tag_modules
from .graph import Graph
from .i18n import set_language
from .model import DEFAULT_MAX_NODES, GHOST_THRESHOLD, build
from .summary import Summary
from .walk import WALK_LIMIT, paused_gc
from .walk import walk as _walk

__all__ = ["draw", "summary", "animate", "record", "trace_backward", "tag_modules", "compare", "gradcheck_graph",
           "source_lines", "session", "forward_vs_reverse", "set_language",
           "Graph", "Summary", "DEFAULT_MAX_NODES", "GHOST_THRESHOLD"]


def draw(
    *roots: Any,
    params: Any = None,
    view: str = "backward",
    show_saved: bool = False,
    show_attrs: bool = False,
    show_values: bool = False,
    show_grads: bool = False,
    rankdir: str = "TB",
    max_nodes: int | None = None,
    legend: bool = False,
    fold: str | None = None,
    expand: Iterable[str] = (),
    source: bool = False,
    layers: bool = False,
) -> Graph:
    """Draw the autograd graph behind ``roots`` (tensors, or grad_fn nodes).

    ``params`` names leaves (a dict, ``model.named_parameters()``, or the model itself, which
    also names its modules: ``2 · Linear(8→3)``); ``view`` is "backward" (grad_fn nodes, as
    PyTorch builds them) or "values" (tensors and the ops between them). ``fold="module"``
    draws each module (``node.metadata["module"]``; ``viz.tag_modules`` for PyTorch) as one
    box, repeated blocks as one "×N" box; ``expand=["encoder", ...]`` opens those modules.
    Past ``max_nodes`` (default ``DEFAULT_MAX_NODES``) the middle of the graph is collapsed
    into nodes that say how many they hide. ``source=True`` adds the line of code that made each
    node (nodes made inside ``viz.source_lines()`` or ``viz.record(source=True)``; see viz.source).
    ``layers=True`` draws the nodes backward made under ``create_graph=True`` as a second layer in
    another colour, each linked to the node whose rule made it (see viz.layers).
    """
    if isinstance(expand, str):
        expand = [expand]
    if layers:
        from .layers import draw_layers

        return draw_layers(roots, params=params, show_saved=show_saved, show_attrs=show_attrs,
                           show_values=show_values, show_grads=show_grads, rankdir=rankdir, max_nodes=max_nodes,
                           legend=legend, source=source)
    with paused_gc():
        walked = _walk(roots)
        try:
            # folding needs every node, so that no module's nodes hide in a max_nodes summary
            model = build(walked, view=view, params=params, show_saved=show_saved, show_attrs=show_attrs,
                          show_values=show_values, show_grads=show_grads,
                          max_nodes=max_nodes if fold is None else max_nodes or WALK_LIMIT,
                          limit=None if fold is None else WALK_LIMIT, source=source)
        finally:
            walked.release()
        model = _fold(model, fold, expand).model
        return Graph(model, _dot.to_dot(model, rankdir=rankdir, legend=legend))


def summary(
    *roots: Any,
    params: Any = None,
    view: str = "backward",
    show_saved: bool = False,
    show_attrs: bool = False,
    max_nodes: int | None = None,
) -> Summary:
    """The text twin of ``draw``: a deterministic table of nodes, shapes, values and grads."""
    with paused_gc():
        walked = _walk(roots)
        try:
            model = build(walked, view=view, params=params, show_saved=show_saved, show_attrs=show_attrs,
                          show_values=True, show_grads=True, max_nodes=max_nodes)
        finally:
            walked.release()
        return Summary(model)


from .animate import animate, record, trace_backward  # noqa: E402  (animate builds on draw)
from .check import gradcheck_graph  # noqa: E402
from .compare import compare  # noqa: E402
from .jacobian import forward_vs_reverse  # noqa: E402
from .session import session  # noqa: E402
from .source import source_lines  # noqa: E402
