"""``Graph``: what draw() returns. Shows itself in Jupyter as SVG, saves to files, and
falls back to its DOT text with a one-line hint when no Graphviz is installed."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from . import render
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

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture; the suffix picks the format (.svg, .png, .pdf, or .dot/.gv
        for the DOT text). Without a renderer the DOT text is written next to ``path`` as
        ``.dot`` (with a warning) and that path is returned."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix in _DOT_SUFFIXES:
            target.write_text(self.source, encoding="utf-8")
            return target
        if suffix not in _SAVE_FORMATS:
            raise ValueError(f"viz: save() needs a .svg, .png, .pdf, .dot or .gv path, got {str(path)!r}")
        if suffix == ".svg":
            svg = self.svg()
            data = svg.encode("utf-8") if svg is not None else None
        else:
            data = self.pipe(_SAVE_FORMATS[suffix])
        if data is None:
            fallback = target.with_suffix(".dot")
            fallback.write_text(self.source, encoding="utf-8")
            warnings.warn(f"{render.HINT} Wrote {fallback.name}.", stacklevel=2)
            return fallback
        target.write_bytes(data)
        return target

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        svg = self.svg()
        if svg is None:
            return {"text/plain": f"{render.HINT}\n{self.source}"}
        return {"image/svg+xml": svg, "text/plain": repr(self)}

    def __repr__(self) -> str:
        extra = f", {self.model.hidden:,} hidden" if self.model.hidden else ""
        return f"<viz.Graph {self.model.view} view: {self.num_nodes} nodes, {self.num_edges} edges{extra}>"
