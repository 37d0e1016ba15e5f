"""``Graph``: what draw() returns. Shows itself in Jupyter as SVG with a PNG beside it, saves
to files, and falls back to its DOT text with a one-line hint when no Graphviz is installed.

The PNG is what untrusted JupyterLab, GitHub, nbviewer and other places that drop SVG show:
drawn at 2x for sharpness and shown at the SVG's size through the output's metadata."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from . import render
from .files import write_atomic
from .model import Model

_SAVE_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
_DOT_SUFFIXES = (".dot", ".gv")


class Graph:
    """A drawn autograd graph: ``.source`` (DOT), ``.svg()``, ``.save(path)``."""

    def __init__(self, model: Model, source: str) -> None:
        self.model = model
        self.source = source
        self.hint: str | None = None
        self._svg: str | None = None
        self._png: render.Png | None = None
        self._png_done = False

    @property
    def num_nodes(self) -> int:
        return len(self.model.nodes)

    @property
    def num_edges(self) -> int:
        return len(self.model.edges)

    def pipe(self, fmt: str = "svg") -> bytes | None:
        """Rendered bytes in ``fmt`` (svg, png, pdf), or None without a renderer."""
        out = render.render(self.source, fmt)
        self.hint = None if out is not None else render.HINT
        return out

    def svg(self) -> str | None:
        """The picture as SVG text (cached), or None when no renderer is available."""
        if self._svg is None:
            out = self.pipe("svg")
            self._svg = out.decode("utf-8") if out is not None else None
        return self._svg

    def png(self) -> render.Png | None:
        """The picture as a PNG at 2x its SVG size (less for huge graphs, see
        ``viz.render.png_scale``; cached), or None without a PNG renderer."""
        if not self._png_done:
            svg = self.svg()
            self._png = render.render_png(self.source, render.svg_css_size(svg) if svg else None)
            self._png_done = True
        return self._png

    def save(self, path: str | os.PathLike, scale: float = render.PNG_SCALE) -> Path:
        """Write the picture; the suffix picks the format (.svg, .png, .pdf, or .dot/.gv
        for the DOT text). A PNG has ``scale`` device pixels per CSS pixel (2: sharp on
        slides and HiDPI screens; vector formats need none). Without a renderer the DOT text is
        written next to ``path`` as ``.dot`` (with a warning) and that path is returned."""
        if not scale > 0:
            raise ValueError(f"viz: save() needs a positive scale, got {scale!r}")
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix in _DOT_SUFFIXES:
            return write_atomic(target, self.source)
        if suffix not in _SAVE_FORMATS:
            raise ValueError(f"viz: save() needs a .svg, .png, .pdf, .dot or .gv path, got {str(path)!r}")
        if suffix == ".svg":
            svg = self.svg()
            data = svg.encode("utf-8") if svg is not None else None
        elif suffix == ".png":
            svg = self.svg()
            png = render.render_png(self.source, render.svg_css_size(svg) if svg else None, scale,
                                    render.SAVE_MAX_PIXELS)
            data = png.data if png is not None else None
        else:
            data = self.pipe(_SAVE_FORMATS[suffix])
        if data is None:
            fallback = target.with_suffix(".dot")
            write_atomic(fallback, self.source)
            warnings.warn(f"{render.HINT} Wrote {fallback.name}.", stacklevel=2)
            return fallback
        return write_atomic(target, data)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        svg = self.svg()
        if svg is None:
            data = {"text/plain": f"{render.HINT}\n{self.source}"}
            view = self._browser_view()
            if view is None:
                return data
            data.update(view[0])  # a live notebook lays the DOT out with the WebAssembly Graphviz
            return (data, view[1]) if view[1] else data
        data: dict[str, str] = {"image/svg+xml": svg, "text/plain": repr(self)}
        png = self.png()
        if png is None:  # one plain line says why, rather than a broken image
            data["text/plain"] = f"{repr(self)}\n{render.PNG_HINT}"
            return data
        png_data, meta = png.mimebundle()
        data.update(png_data)
        return data, meta

    def _browser_view(self) -> tuple[dict, dict] | None:
        """The widget view (and anywidget's metadata) of a player without steps that lays this graph out in
        the browser (made once per Graph), or None without anywidget."""
        from .player import graph_widget, widget_view

        if getattr(self, "_widget", None) is None:
            self._widget = graph_widget(self)
        if self._widget is None:
            return None
        return widget_view(self._widget)

    def summary(self) -> Any:
        """The text twin of this very picture (the table ``viz.summary`` prints), with what the drawing
        added: ``draw(..., layers=True)``'s second layer, each node captioned with the node that made it."""
        from .summary import Summary

        return Summary(self.model)

    def __repr__(self) -> str:
        extra = f", {self.model.hidden:,} hidden" if self.model.hidden else ""
        return f"<viz.Graph {self.model.view} view: {self.num_nodes} nodes, {self.num_edges} edges{extra}>"


def picture_with_text(graph: Graph | None, text: str, include: Any = None, exclude: Any = None) -> Any:
    """A result's notebook display: its picture (SVG and PNG, as ``viz.draw`` shows it) with its own text
    as the plain-text twin, or the text alone without a picture (``viz.compare``, ``viz.gradcheck_graph``)."""
    if graph is None:
        return {"text/plain": text}
    out = graph._repr_mimebundle_(include, exclude)
    data, meta = out if isinstance(out, tuple) else (out, {})
    data = dict(data)
    data["text/plain"] = text
    return (data, meta) if meta else data
