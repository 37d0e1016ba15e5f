"""The player: one laid-out SVG plus per-step payloads, switched in the browser.

A ``Scene`` is everything a display needs, built once in Python:

- the SVG of ``viz.draw(...)``, laid out once by Graphviz. Before layout, each edge label
  gets room reserved on its line for the longest gradient that edge will carry, and each leaf a
  ``.grad`` row, so values fit without a second layout; module labels are laid out tiny (no
  row of their own between the ranks) and set beside their frame afterwards; after layout the SVG is decorated:
  ``data-n`` / ``data-e`` / ``data-src`` / ``data-dst`` attributes, classes on saved-value
  rows, hook badges, borders and labels, and two small badges per node (step number,
  gradients arrived);
- the payload: the steps in run order, each with its own texts, edge labels and notes
  (O(nodes + edges) in all). The cumulative state at a step (done, waiting, labels so far)
  is derived in the browser by ``player.js`` — and in Python by ``state_at`` for the
  static pictures — never stored per frame.

``BackwardPlayer`` / ``ForwardPlayer`` carry the scene and show it as an anywidget widget,
made when first displayed, with a PNG of the first step beside it for wherever widgets
cannot run (without anywidget: the last step, with a note).
"""

from __future__ import annotations

import copy
import html
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import dot as _dot
from . import render as _render
from . import style
from .i18n import page_data, tr
from .metrics import room, text_width
from .trace import Frame, frame_note, state_at

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_S = f"{{{SVG_NS}}}"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

HERE = Path(__file__).resolve().parent
ESM = (HERE / "player.js").read_text(encoding="utf-8")
CSS = (HERE / "player.css").read_text(encoding="utf-8")

# the player's colours: Okabe–Ito, as in viz.style
CURRENT = style.OKABE_ITO["blue"]
DONE = "#00785A"  # Okabe–Ito bluish green, darkened: white step numbers on it read at 5.5:1
HOOK = "#B34E00"  # Okabe–Ito vermillion, darkened: white text on it reads at 5.2:1
ARRIVE = style.OKABE_ITO["yellow"]
FREED_FILL = "#E6E6E6"
FREED_TEXT = "#595959"  # 5.6:1 on FREED_FILL
SENT_EDGE = style.BORDER

# -- DOT: reserve room for the values -------------------------------------------------------------------------------
_EDGE_LINE = re.compile(r"^(\s*)(n\d+) -> (n\d+)(.*);\s*$")
_NODE_LINE = re.compile(r"^(\s*)(n\d+) \[label=")
LABEL_SIZE = style.SMALL_PT
# (a tooltip's value may hold escaped quotes and backslashes: a module named 'say "hi"')
_CLUSTER_LINE = re.compile(r'^(\s*graph \[.*?)label=<([^<>]*)> (.*?)tooltip="module (?:[^"\\]|\\.)*"(.*)$')
_CLUSTER_TIP = "module "


def _label_span(attrs: str) -> tuple[int, int] | None:
    """(start, end) of the ``<...>`` value of ``label=`` in an attribute list, or None."""
    at = attrs.find("label=<")
    if at < 0:
        return None
    i = at + len("label=")
    depth = 0
    for j in range(i, len(attrs)):
        c = attrs[j]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return i, j + 1
    return None


def reserve(source: str, edge_texts: dict[int, str], node_texts: dict[str, str]) -> str | None:
    """DOT with an extra bold line on the given edges' labels and an extra row in the given
    nodes' tables, so Graphviz makes room for them. None when the DOT is not as expected."""
    lines = source.split("\n")
    k = 0
    out = []
    value_joiner = _VALUE_JOINER[_dot.label_joiner(_rankdir(source))]
    for line in lines:
        m = _EDGE_LINE.match(line)
        if m:
            text = edge_texts.get(k)
            indent, src, dst, rest = m.groups()
            rest = rest.strip()
            attrs = rest[1:-1] if rest.startswith("[") and rest.endswith("]") else ""
            if text:
                extra = f"<B>{_dot.html_text(text)}</B>"
                span = _label_span(attrs)
                if span:
                    a, b = span
                    # top to bottom, on the label's line after two spaces: no extra line between the ranks
                    attrs = attrs[: b - 1] + value_joiner + extra + attrs[b - 1:]
                else:
                    attrs = f"label=<{extra}> " + attrs
            # mgk numbers the edges for the PNG filmstrip (Graphviz ignores unknown attributes)
            attrs = f'{attrs} mgk="{k}"'.strip()
            out.append(f"{indent}{src} -> {dst} [{attrs}];")
            k += 1
            continue
        m = _CLUSTER_LINE.match(line)
        if m:
            # the module's label takes no room in the layout: it moves into the frame's tooltip
            # ("module 4 · Linear(8→3)"), and decorate() sets it as text beside the frame
            text = html.unescape(m.group(2)).replace("\\\\", "\\")
            line = f"{m.group(1)}{m.group(3)}tooltip={_dot.quote(_CLUSTER_TIP + text)}{m.group(4)}"
        m = _NODE_LINE.match(line)
        if m and m.group(2) in node_texts:
            cut = line.rfind("</TABLE>>")
            if cut > 0:
                row = (f'<TR><TD BGCOLOR="#FFFFFF" CELLPADDING="2"><FONT POINT-SIZE="{LABEL_SIZE}">'
                       f'<B>{_dot.html_text(node_texts[m.group(2)])}</B></FONT></TD></TR>')
                line = line[:cut] + row + line[cut:]
        out.append(line)
    if edge_texts and k == 0:
        return None
    return "\n".join(out)


# -- SVG decoration --------------------------------------------------------------------------------------------------
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _bbox(el: ET.Element) -> tuple[float, float, float, float] | None:
    text = el.get("points") or el.get("d") or ""
    nums = [float(x) for x in _NUM.findall(text)]
    if len(nums) < 4:
        return None
    xs, ys = nums[0::2], nums[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _add_class(el: ET.Element, cls: str) -> None:
    old = el.get("class")
    el.set("class", f"{old} {cls}" if old else cls)


def _texts(el: ET.Element) -> list[ET.Element]:
    return [t for t in el.iter(f"{_S}text")]


def decorate(svg: str, edges: list[tuple[str, str]], edge_texts: dict[int, str],
             node_texts: dict[str, str]) -> ET.Element:
    """Parse Graphviz's SVG and mark what the player switches (see the module docstring)."""
    root = ET.fromstring(svg.encode("utf-8") if isinstance(svg, str) else svg)
    saved_fill = style.ROW_FILL["saved"].lower()
    badge_fill = style.ROW_FILL["badge"].lower()
    graph = root.find(f"{_S}g")
    by_title: dict[str, list[ET.Element]] = defaultdict(list)
    clusters: list[ET.Element] = []
    for g in root.iter(f"{_S}g"):
        cls = g.get("class")
        title_el = g.find(f"{_S}title")
        title = title_el.text if title_el is not None else None
        if cls == "node" and title:
            g.set("data-n", title)
            _decorate_node(g, title, saved_fill, badge_fill, node_texts.get(title))
        elif cls == "edge" and title:
            by_title[title].append(g)
        elif cls == "cluster":
            clusters.append(g)
    # edges: Graphviz numbers them edge1, edge2, ... in DOT order, which is the model's order
    for g_list in by_title.values():
        for g in g_list:
            gid = g.get("id", "")
            k = int(gid[4:]) - 1 if gid.startswith("edge") and gid[4:].isdigit() else None
            title = g.find(f"{_S}title").text
            if k is None or k >= len(edges) or f"{edges[k][0]}->{edges[k][1]}" != title:
                k = None
            if k is None:
                continue
            g.set("data-e", str(k))
            g.set("data-src", edges[k][0])
            g.set("data-dst", edges[k][1])
            _decorate_edge(g, edge_texts.get(k))
    if graph is not None:
        graph.set("class", "graph mg-graph")
        back = graph.find(f"{_S}polygon")
        bounds = _bbox(back) if back is not None else None
        for g in clusters:
            _cluster_label(g, bounds)
    root.set("class", "mg-svg")
    _pad(root, BADGE_PAD)
    # one font-family on the root instead of one per text (a third of the bytes on big graphs)
    root.set("font-family", style.FONT)
    for t in root.iter(f"{_S}text"):
        if t.get("font-family") == style.FONT:
            del t.attrib["font-family"]
        if t.get("text-anchor") == "start":  # the default
            del t.attrib["text-anchor"]
    return root


BADGE_PAD = 14.0  # room around the drawing for the badges on the nodes at its edges


def _cluster_label(g: ET.Element, bounds: tuple[float, float, float, float] | None) -> None:
    """A module's label, laid out without one (``reserve``): a text left of the frame's top (right of it
    when the picture has no room on the left, inside its top left corner when neither side has)."""
    link = next((a for a in g.iter(f"{_S}a") if (a.get(f"{{{XLINK_NS}}}title") or "").startswith(_CLUSTER_TIP)), None)
    frame = next((el for el in g.iter() if el.tag in (f"{_S}path", f"{_S}polygon")), None)
    box = _bbox(frame) if frame is not None else None
    if link is None or box is None or _texts(g):
        return
    label = link.get(f"{{{XLINK_NS}}}title")[len(_CLUSTER_TIP):]
    size = float(style.CLUSTER_ATTRS["fontsize"])
    x0, y0, x1, _ = box
    left, right = (bounds[0] - BADGE_PAD, bounds[2] + BADGE_PAD) if bounds else (x0, x1)
    width = text_width(label, size)
    gap = 12.0  # clear of the badges (radius 9) on the corners of the boxes inside the frame
    if x0 - gap - width >= left:
        x, anchor = x0 - gap, "end"
    elif x1 + gap + width <= right:
        x, anchor = x1 + gap, "start"
    else:
        x, anchor = x0 + 4, "start"
    text = ET.SubElement(link, f"{_S}text", {"text-anchor": anchor, "x": f"{x:.2f}", "y": f"{y0 + size:.2f}",
                                             "font-size": f"{size:g}", "fill": style.EDGE_TEXT})
    text.text = label


def _pad(root: ET.Element, pad: float) -> None:
    try:
        x, y, w, h = (float(v) for v in root.get("viewBox", "").split())
    except ValueError:
        return
    root.set("viewBox", f"{x - pad:.2f} {y - pad:.2f} {w + 2 * pad:.2f} {h + 2 * pad:.2f}")
    root.set("width", f"{w + 2 * pad:.0f}pt")
    root.set("height", f"{h + 2 * pad:.0f}pt")


def _decorate_node(g: ET.Element, title: str, saved_fill: str, badge_fill: str, note: str | None) -> None:
    shapes = [el for el in g.iter() if el.tag in (f"{_S}polygon", f"{_S}path")]
    border = None
    for el in shapes:
        fill = (el.get("fill") or "").lower()
        if fill == "none" and el.get("stroke") not in (None, "none"):
            border = el
    if border is not None:
        _add_class(border, "mg-border")
    if shapes and shapes[0] is not border:
        _add_class(shapes[0], "mg-bg")
    # rows: a filled polygon followed by its text
    kids = [el for el in g.iter() if el.tag in (f"{_S}polygon", f"{_S}text")]
    mark = None
    for el in kids:
        if el.tag == f"{_S}polygon":
            fill = (el.get("fill") or "").lower()
            mark = "mg-saved" if fill == saved_fill else "mg-badge" if fill == badge_fill else None
            if mark:
                _add_class(el, mark)
        elif mark:
            _add_class(el, mark)
            mark = None
    if note:
        for t in reversed(_texts(g)):
            if t.text == note:
                _placeholder(t, "mg-note", note)
                break
    box = _bbox(border) if border is not None else None
    if box is None:
        return
    x0, y0, x1, _ = box
    # badges go on the node group itself (outside Graphviz's tooltip link)
    for cls, cx in (("mg-stepbadge", x0 - 8), ("mg-arrbadge", x1 + 8)):
        badge = ET.SubElement(g, f"{_S}g", {"class": cls})
        ET.SubElement(badge, f"{_S}circle", {"cx": f"{cx:.2f}", "cy": f"{y0 + 2:.2f}", "r": "9"})
        text = ET.SubElement(badge, f"{_S}text", {"x": f"{cx:.2f}", "y": f"{y0 + 5.5:.2f}", "text-anchor": "middle",
                                                  "font-size": str(style.SMALL_PT)})
        text.text = ""


def _placeholder(t: ET.Element, cls: str, reserved: str) -> None:
    """Turn a reserved line into an empty, centred text the player fills."""
    size = float(t.get("font-size", LABEL_SIZE))
    x = float(t.get("x", "0"))
    if t.get("text-anchor", "start") == "start":
        t.set("x", f"{x + text_width(reserved, size, bold=True) / 2:.2f}")
    t.set("text-anchor", "middle")
    t.attrib.pop("font-weight", None)
    t.text = ""
    _add_class(t, cls)


def _decorate_edge(g: ET.Element, reserved: str | None) -> None:
    texts = _texts(g)
    placeholder = None
    if reserved:
        for t in reversed(texts):
            if t.text == reserved:
                placeholder = t
                break
    for t in texts:
        if t is placeholder:
            _placeholder(t, "mg-glabel", reserved or "")
        else:
            _add_class(t, "mg-elabel")
    for el in g:
        if el.tag == f"{_S}path":
            _add_class(el, "mg-path")
        elif el.tag == f"{_S}polygon":
            _add_class(el, "mg-head")
    if placeholder is None:
        # no room was reserved (e.g. the DOT changed shape): put the label at the path's middle
        path = g.find(f"{_S}path")
        box = _bbox(path) if path is not None else None
        if box is not None:
            x = (box[0] + box[2]) / 2 + 4
            y = (box[1] + box[3]) / 2
            t = ET.SubElement(g, f"{_S}text", {"x": f"{x:.2f}", "y": f"{y:.2f}", "text-anchor": "start",
                                               "font-family": style.FONT, "font-size": str(LABEL_SIZE),
                                               "class": "mg-glabel"})
            t.text = ""


def to_text(root: ET.Element, html: bool = False) -> str:
    """Serialise; for HTML the namespace declarations go (inline SVG needs none)."""
    text = ET.tostring(root, encoding="unicode")
    if html:
        text = text.replace(f' xmlns="{SVG_NS}"', "").replace(f' xmlns:xlink="{XLINK_NS}"', "")
    return text


# -- the scene -------------------------------------------------------------------------------------------------------


@dataclass
class Scene:
    """The laid-out picture, the payload for player.js, and the frames behind them."""

    mode: str  # "backward" | "forward"
    root: ET.Element | None  # the decorated SVG (None when Graphviz is missing)
    payload: dict
    frames: list
    num_nodes: int
    dot: str = ""
    hint: str | None = None
    notes0: dict[str, str] = field(default_factory=dict)
    _pngs: dict = field(default_factory=dict, repr=False, compare=False)
    _other: dict = field(default_factory=dict, repr=False, compare=False)
    redraw: Any = field(default=None, repr=False, compare=False)  # viz.trace.Redraw, to fold it another way

    def __post_init__(self) -> None:
        """The scene speaks the language in force when it is made (viz.i18n): its steps' words now, the page's
        own words from the catalog it carries, so an exported page keeps that language."""
        data = page_data()
        if data is None or "i18n" in self.payload:
            return
        self.payload["i18n"] = data
        for step in self.payload.get("steps", []):
            if step.get("title"):
                step["title"] = tr(step["title"])
            step["lines"] = [[kind, tr(text)] for kind, text in step.get("lines", [])]

    def svg_in(self, rankdir: str) -> str:
        """The decorated picture laid out in ``rankdir`` (cached), or "" without Graphviz in Python."""
        info = self.payload.get("layout") or {}
        if rankdir == info.get("rankdir", "TB"):
            return self.svg(html=True)
        if rankdir not in self._other:
            svg = _render.render(with_rankdir(self.dot, rankdir), "svg") if self.root is not None else None
            edges = [tuple(e) for e in info.get("edges", [])]
            texts = {int(k): v for k, v in info.get("edgeTexts", {}).items()}
            root = decorate(svg.decode("utf-8"), edges, texts, info.get("nodeTexts", {})) if svg else None
            self._other[rankdir] = to_text(root, html=True) if root is not None else ""
        return self._other[rankdir]

    @property
    def num_steps(self) -> int:
        return len(self.payload.get("steps", []))

    def png(self, k: int, note: str | None = None) -> _render.Png | None:
        """Step ``k`` as a PNG at 2x with ``note`` as a line under it (cached), or None
        without pygraphviz."""
        key = (int(k), note)
        if key not in self._pngs:
            from .export import frame_png

            self._pngs[key] = frame_png(self, k, note) if self.root is not None else None
        return self._pngs[key]

    def svg(self, html: bool = True) -> str:
        return to_text(self.root, html=html) if self.root is not None else ""

    def static_svg(self, k: int | None = None, html: bool = False) -> str:
        """The picture at step ``k`` (default: the last) with the state applied inline:
        plain SVG that shows the same thing without any script."""
        if self.root is None:
            return ""
        k = self.num_steps - 1 if k is None else max(0, min(int(k), self.num_steps - 1))
        root = copy.deepcopy(self.root)
        if self.mode == "backward":
            _apply_backward(root, self, k)
        else:
            _apply_forward(root, self, k)
        for el in root.iter():  # the player's classes mean nothing without its CSS
            classes = [c for c in (el.get("class") or "").split() if not c.startswith("mg-")]
            if classes:
                el.set("class", " ".join(classes))
            else:
                el.attrib.pop("class", None)
        return to_text(root, html=html)


def backward_scene(recording: Any) -> Scene:
    """Scene for a recorded backward pass (viz.trace.record_backward)."""
    frames: list[Frame] = recording.frames
    graph = recording.graph
    gmap = recording.gmap
    edge_texts: dict[int, str] = {}
    for f in frames:
        labels = [(s.edge, s.label) for s in f.grads_out] + list(f.relabels)
        for edge, label in labels:
            if edge is not None and len(label) > len(edge_texts.get(edge, "")):
                edge_texts[edge] = label
    notes0: dict[str, str] = {}
    node_texts: dict[str, str] = {}
    for f in frames:
        after = frame_note(f)
        before = ".grad = " + _short(f.grad_before) if f.kind == "accumulate" else ""
        for n in f.nodes if after else ():
            if before:
                notes0.setdefault(n, before)
            node_texts[n] = max((node_texts.get(n, ""), before, after), key=len)
    steps = [_step_payload(f) for f in frames]
    payload = {"mode": "backward", "steps": steps, "notes0": notes0}
    if any(f.source for f in frames):  # animate(source=True): click a line, its nodes light up (viz/story.js)
        payload["sources"] = sources_payload(frames)
    root, hint, source = _layout(graph.source, gmap.edges, edge_texts, node_texts)
    boxes = {n.id: ",".join(_box_scopes(n.key)) for n in graph.model.nodes if n.role == "module"}
    payload["layout"] = layout_info(source, gmap.edges, edge_texts if root is not None or source else {},
                                    node_texts, hint, _rankdir(graph.source), boxes)
    scene = Scene("backward", root, payload, frames, len(gmap.ids), source, hint, notes0)
    scene.redraw = getattr(recording, "redraw", None)
    return scene


def sources_payload(frames: list) -> dict[str, str]:
    """Drawn node id -> the source line of the first step about it, for the player."""
    out: dict[str, str] = {}
    for f in frames:
        if f.source and f.node:
            out.setdefault(f.node, f.source)
    return out


def _box_scopes(key: str) -> list[str]:
    """'module:1..4' -> ['1', '4'] (first and last of a run of blocks); 'module:enc' -> ['enc']."""
    return key[len("module:"):].split("..")


_RANKDIR = re.compile(r'rankdir="(TB|LR|BT|RL)"')


def _rankdir(source: str) -> str:
    m = _RANKDIR.search(source)
    return m.group(1) if m else "TB"


def layout_info(dot: str, edges: list[tuple[str, str]], edge_texts: dict[int, str], node_texts: dict[str, str],
                hint: str | None, rankdir: str, boxes: dict[str, str] | None = None) -> dict:
    """What player.js needs to lay the graph out itself (another direction, or no Graphviz in Python)
    and to decorate it as ``decorate`` does: the DOT with room reserved for the values and for the browser's
    text widths (``metrics.room``), the drawn edges, the reserved texts and the fills that mark saved-value and
    badge rows."""
    return {"dot": room(dot), "edges": [list(e) for e in edges],
            "edgeTexts": {str(k): v for k, v in edge_texts.items()},
            "nodeTexts": dict(node_texts), "hint": hint, "rankdir": rankdir, "boxes": boxes or {},
            "savedFill": style.ROW_FILL["saved"], "badgeFill": style.ROW_FILL["badge"]}


_VALUE_JOINER = {" · ": "  ", "<BR/>": "<BR/>"}  # between an edge's label and the value the player reserves


def with_rankdir(dot: str, rankdir: str) -> str:
    """The same DOT laid out in another direction (edge labels on one line top to bottom, stacked left to
    right: ``dot.label_joiner``)."""
    stacked = _dot.label_joiner(rankdir) == "<BR/>"
    lines = _RANKDIR.sub(f'rankdir="{rankdir}"', dot, count=1).split("\n")
    for i, line in enumerate(lines):
        if _EDGE_LINE.match(line):
            if stacked:
                lines[i] = line.replace("  <B>", "<BR/><B>").replace(" · ", "<BR/>")
            else:
                lines[i] = line.replace("<BR/><B>", "  <B>").replace("<BR/>", " · ")
    return "\n".join(lines)


def _short(arr: Any) -> str:
    from .trace import value_text

    return value_text(arr, short=True)


def _step_payload(f: Frame) -> dict:
    step: dict[str, Any] = {"ids": list(f.nodes), "kind": f.kind, "title": f.title,
                            "lines": [[kind, text] for kind, text in f.lines]}
    sends = [[s.edge if s.edge is not None else -1, s.label, s.to or ""] for s in f.grads_out]
    if sends:
        step["sends"] = sends
    note = frame_note(f)
    if note:
        step["notes"] = [[n, note] for n in f.nodes]
    if f.freed:
        step["freed"] = list(f.nodes)
    if f.hooks:
        step["hooks"] = list(f.nodes)
    if f.relabels:  # incoming edges now show what the node consumed (after hooks changed it)
        step["relabel"] = [[e, label] for e, label in f.relabels]
    refs = [r for r in dict.fromkeys(f.refs) if r not in f.nodes]
    if refs:
        step["refs"] = refs
    return step


def _layout(source: str, edges: list[tuple[str, str]], edge_texts: dict[int, str],
            node_texts: dict[str, str]) -> tuple[ET.Element | None, str | None, str]:
    reserved = reserve(source, edge_texts, node_texts)
    if reserved is None:
        reserved, edge_texts, node_texts = source, {}, {}
    svg = _render.render(reserved, "svg")
    if svg is None:
        return None, BROWSER_HINT, reserved
    return decorate(svg.decode("utf-8"), edges, edge_texts, node_texts), None, reserved


BROWSER_HINT = ("viz: Python has no Graphviz (pip install pygraphviz), so the player lays the graph out in "
                "the browser; pictures saved from Python (PNG, filmstrip, GIF) need pygraphviz.")


# -- the state, applied inline (static pictures) ------------------------------------------------------------------


def _nodes(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("data-n"): g for g in root.iter(f"{_S}g") if g.get("data-n")}


def _edges(root: ET.Element) -> dict[int, ET.Element]:
    return {int(g.get("data-e")): g for g in root.iter(f"{_S}g") if g.get("data-e") is not None}


def _find_class(g: ET.Element, cls: str) -> list[ET.Element]:
    return [el for el in g.iter() if cls in (el.get("class") or "").split()]


def _border(g: ET.Element, color: str, width: float, dash: str | None = None) -> None:
    for el in _find_class(g, "mg-border"):
        el.set("stroke", color)
        el.set("stroke-width", str(width))
        if dash:
            el.set("stroke-dasharray", dash)


def _badge(g: ET.Element, cls: str, text: str | None, fill: str, color: str = "#FFFFFF") -> None:
    for badge in _find_class(g, cls):
        if text is None:
            g.remove(badge)
            continue
        badge.find(f"{_S}circle").set("fill", fill)
        label = badge.find(f"{_S}text")
        label.text = text
        label.set("fill", color)


def _apply_backward(root: ET.Element, scene: Scene, k: int) -> None:
    frames = scene.frames
    st = state_at(frames, k, list(_nodes(root)))
    run_step: dict[str, int] = {}
    for f in frames:
        if f.kind != "done":
            for n in f.nodes:
                run_step.setdefault(n, f.step)
    for n, g in _nodes(root).items():
        state = st.nodes.get(n, "pending")
        if state == "pending":
            g.set("opacity", "0.45")
        elif state == "current":
            _border(g, CURRENT, 3)
        elif state == "waiting":
            _border(g, CURRENT, 2, "4,2")
        done = state in ("done", "current") and n in run_step
        _badge(g, "mg-stepbadge", str(run_step[n]) if done else None, DONE if state == "done" else CURRENT)
        got, total = st.arrived.get(n, (0, 0))
        show = total > 1 and state in ("waiting", "current") and got > 0
        _badge(g, "mg-arrbadge", f"{got}/{total}" if show else None, ARRIVE, style.TEXT)
        if n in st.freed:
            for el in _find_class(g, "mg-saved"):
                if el.tag == f"{_S}polygon":
                    el.set("fill", FREED_FILL)
                else:
                    el.set("fill", FREED_TEXT)
                    el.set("text-decoration", "line-through")
        note = st.notes.get(n, scene.notes0.get(n))
        for el in _find_class(g, "mg-note"):
            el.text = note or ""
        if k < len(frames) and n in frames[k].nodes and frames[k].hooks:
            for el in _find_class(g, "mg-badge"):
                el.set("fill", HOOK if el.tag == f"{_S}polygon" else "#FFFFFF")
    for e, g in _edges(root).items():
        label = st.labels.get(e)
        for el in _find_class(g, "mg-glabel"):
            el.text = label or ""
            el.set("fill", CURRENT if e in st.current_edges else style.TEXT)
            if e in st.current_edges:
                el.set("font-weight", "bold")
        if label is not None:
            color, width = (CURRENT, "2.2") if e in st.current_edges else (SENT_EDGE, "1.3")
            for el in _find_class(g, "mg-path"):
                el.set("stroke", color)
                el.set("stroke-width", width)
            for el in _find_class(g, "mg-head"):
                el.set("stroke", color)
                el.set("fill", color)


def forward_state(scene: Scene, k: int) -> tuple[dict[str, int], set[str]]:
    """(node id -> step it appears, ids new at step k) for the forward animation."""
    appear: dict[str, int] = {}
    for i, step in enumerate(scene.payload["steps"]):
        for n in step.get("appear", []):
            appear.setdefault(n, i)
    new = {n for n, s in appear.items() if s == k}
    return appear, new


def _apply_forward(root: ET.Element, scene: Scene, k: int) -> None:
    appear, new = forward_state(scene, k)
    nodes = _nodes(root)
    graph = root.find(f"{_S}g")
    for n, g in nodes.items():
        if appear.get(n, 0) > k:
            _drop(graph, g)
        elif n in new:
            _border(g, DONE, 3)
        for cls in ("mg-stepbadge", "mg-arrbadge"):
            _badge(g, cls, None, DONE)
    for g in list(_edges(root).values()):
        if max(appear.get(g.get("data-src"), 0), appear.get(g.get("data-dst"), 0)) > k:
            _drop(graph, g)


def _drop(graph: ET.Element | None, g: ET.Element) -> None:
    if graph is None:
        return
    for parent in graph.iter():
        if g in list(parent):
            parent.remove(g)
            return


# -- the player ---------------------------------------------------------------------------------------------------

PLAY_NOTE = "Run the cell to play"
NO_WIDGET_NOTE = "The last step: the player needs anywidget to play (pip install anywidget)"


def _still_step(scene: Scene) -> int:
    """Which step the still picture shows: the first, as the player opens (for the forward
    animation, whose first step is often empty, the finished graph)."""
    return 0 if scene.mode == "backward" else scene.num_steps - 1


class Player:
    """What ``viz.animate`` and ``rec.player()`` return: the scene, shown as a widget.

    The anywidget widget is made on first display (or on ``.widget``), not with the player:
    ipywidgets keeps every widget it has made alive until it is closed, so players made in a
    loop and never shown would pile up. Each display carries a PNG beside the widget — the
    first step with one line, "Run the cell to play" — which is what shows wherever the
    widget cannot run (an untrusted notebook, GitHub, nbviewer, HTML exports).
    """

    kind = "Player"

    def __init__(self, scene: Scene, frame: int = 0, speed: float = 1.0) -> None:
        self.scene = scene
        self._frame = int(frame)
        self._speed = float(speed)
        self._widget: Any = None

    @property
    def frames(self) -> list:
        """The recorded steps as plain data (viz.trace.Frame for backward)."""
        return self.scene.frames

    @property
    def num_steps(self) -> int:
        return self.scene.num_steps

    @property
    def data(self) -> dict:
        """The payload the browser plays (the steps, without the picture)."""
        return self.scene.payload

    @property
    def widget(self) -> Any:
        """The anywidget widget (made now if needed), or None without anywidget. Use it to
        put the player inside other widgets; ``close()`` releases it."""
        if self._widget is None:
            cls = widget_class(front_ends(self.scene.payload))
            if cls is not None:
                self._widget = cls(**self._widget_state())
                self._widget.on_msg(self._on_msg)
        return self._widget

    def _widget_state(self) -> dict:
        """What a new widget starts with; inside marimo the other layout direction too (see ``in_marimo``)."""
        state = {"svg": self.scene.svg(html=True), "data": self.scene.payload, "frame": self._frame,
                 "speed": self._speed}
        if in_marimo():
            state["svg_alt"] = other_layout(self.scene)
        return state

    def _on_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        """Requests from the page: the WebAssembly Graphviz, the other layout direction, a module opened."""
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "ping":  # the page learns that a kernel answers (a page exported without one never hears)
            widget.send({"type": "pong"})
        elif kind == "graphviz":
            _answer_graphviz(widget, content, buffers)
        elif kind == "layout" and content.get("rankdir") in ("TB", "LR", "BT", "RL"):
            widget.svg_alt = self.scene.svg_in(content["rankdir"])
        elif kind == "expand" and self.scene.redraw is not None:
            scopes = [s for s in str(content.get("scope", "")).split(",") if s]
            redraw = self.scene.redraw
            opened = _opened(redraw.expand, scopes)
            self.scene = self._rescene(backward_scene(redraw.folded(opened)))
            widget.svg_alt = ""
            widget.svg = self.scene.svg(html=True)
            widget.data = self.scene.payload

    def _rescene(self, scene: Scene) -> Scene:
        """A scene made again (a module opened): what a mode adds to the payload goes in here."""
        return scene

    @property
    def frame(self) -> int:
        """The step shown (synced with the browser once the widget exists)."""
        return int(self._widget.frame) if self._widget is not None else self._frame

    @frame.setter
    def frame(self, value: int) -> None:
        self._frame = int(value)
        if self._widget is not None:
            self._widget.frame = self._frame

    @property
    def speed(self) -> float:
        return float(self._widget.speed) if self._widget is not None else self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        self._speed = float(value)
        if self._widget is not None:
            self._widget.speed = self._speed

    def close(self) -> None:
        """Close the widget, if one was made (its views in the browser go)."""
        if self._widget is not None:
            self._widget.close()
            self._widget = None

    def png(self) -> _render.Png | None:
        """The still picture (PNG at 2x, cached): the first step plus "Run the cell to play",
        or the last step plus a note when anywidget is missing. None without pygraphviz."""
        if widget_class() is None:
            return self.scene.png(self.num_steps - 1, NO_WIDGET_NOTE)
        return self.scene.png(_still_step(self.scene), PLAY_NOTE)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        data: dict[str, Any] = {}
        meta: dict[str, Any] = {}
        widget = self.widget
        if widget is not None:
            view, view_meta = widget_view(widget)
            data.update(view)
            meta.update(view_meta)
        data["text/plain"] = repr(self)
        png = self.png()
        if png is None:  # one plain line says why there is no picture
            data["text/plain"] += "\n" + (self.scene.hint or _render.PNG_HINT)
        else:
            png_data, png_meta = png.mimebundle()
            data.update(png_data)
            meta.update(png_meta)
        return data, meta

    def __repr__(self) -> str:
        return f"{self.kind}(nodes={self.scene.num_nodes}, steps={self.scene.num_steps})"

    def save_html(self, path: Any, title: str | None = None) -> Path:
        """One self-contained HTML file that plays without a kernel or network."""
        from .export import save_html

        return save_html(self.scene, path, title=title)

    def filmstrip(self, columns: int = 4, steps: Any = None, width: float = 260.0, scale: float = 2.0) -> Any:
        """Small multiples of the steps, as SVG with a caption under each (``.save(path)`` also
        writes one captioned PNG per step, ``scale`` device pixels per CSS pixel)."""
        from .export import filmstrip

        return filmstrip(self.scene, columns=columns, steps=steps, width=width, scale=scale)

    def save_gif(self, path: Any, fps: float = 1.0, steps: Any = None, scale: float = 2.0) -> Path:
        """The steps as a looping animated GIF, ``fps`` steps per second, a caption under each
        (for slides; needs Pillow). Deterministic: the same player gives the same file."""
        from .export import save_gif

        return save_gif(self.scene, path, fps=fps, steps=steps, scale=scale)

    def svg_at(self, k: int | None = None) -> str:
        """The picture at step ``k`` (default: the last) as static SVG."""
        return self.scene.static_svg(k)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


ALT_LAYOUT_NODES = 400  # up to this size a page without a kernel also carries the other layout direction


def other_layout(scene: Scene) -> str:
    """The picture in the other layout direction, for a page no kernel will answer ("" past ALT_LAYOUT_NODES
    nodes, or where Python has no Graphviz: the page then lays the graph out itself)."""
    info = scene.payload.get("layout") or {}
    other = "LR" if info.get("rankdir", "TB") != "LR" else "TB"
    return scene.svg_in(other) if scene.root is not None and scene.num_nodes <= ALT_LAYOUT_NODES else ""


def in_marimo() -> bool:
    """True inside a marimo notebook. Its page may have no kernel behind it (``marimo export html`` keeps the
    widget's state, and nothing answers), so the player takes the other layout direction along, and asks for
    nothing it cannot get (the page finds out: a kernel answers its ping)."""
    marimo = sys.modules.get("marimo")
    try:
        return marimo is not None and bool(marimo.running_in_notebook())
    except Exception:  # an older marimo
        return False


def widget_view(widget: Any) -> tuple[dict, dict]:
    """The widget's view and the metadata anywidget gives with it, every key kept: on Colab that metadata
    turns on the custom widget manager that renders third-party widgets (without it Colab shows only the PNG)."""
    out = widget._repr_mimebundle_()
    view, meta = out if isinstance(out, tuple) else (out or {}, {})
    return {k: v for k, v in view.items() if k == WIDGET_VIEW}, dict(meta or {})
GRAPHVIZ_JS = HERE / "vendor" / "viz-graphviz.js"


def graphviz_source() -> bytes:
    """The vendored WebAssembly Graphviz (viz/vendor/README.md), for pages whose Python has none."""
    return GRAPHVIZ_JS.read_bytes()


def graph_widget(graph: Any) -> Any:
    """A player widget without steps showing ``graph`` (a viz.Graph), laid out in the browser: what
    ``viz.draw`` shows in a live notebook whose Python has no Graphviz. None without anywidget."""
    cls = widget_class(("layout",))
    if cls is None:
        return None
    ids = {n.key: n.id for n in graph.model.nodes}
    edges = [(ids[e.src], ids[e.dst]) for e in graph.model.edges]
    info = layout_info(graph.source, edges, {}, {}, None, _rankdir(graph.source))
    widget = cls(svg="", data={"mode": "graph", "steps": [], "layout": info})
    widget.on_msg(_answer_graphviz)
    return widget


def _answer_graphviz(widget: Any, content: Any, buffers: Any) -> None:
    if isinstance(content, dict) and content.get("type") == "graphviz":
        widget.send({"type": "graphviz"}, buffers=[graphviz_source()])


def _opened(expand: tuple[str, ...], scopes: list[str]) -> tuple[str, ...]:
    """``expand`` plus the clicked box's modules: a run of blocks 'a.1'..'a.4' opens all four."""
    out = list(expand)
    if len(scopes) == 2:
        first, last = scopes
        stem, a = first.rsplit(".", 1) if "." in first else ("", first)
        b = last.rsplit(".", 1)[-1]
        if a.isdigit() and b.isdigit():
            scopes = [f"{stem}.{i}" if stem else str(i) for i in range(int(a), int(b) + 1)]
    for scope in scopes:
        if scope not in out:
            out.append(scope)
    return tuple(out)
STORY_KEYS = ("session", "sources", "layers")  # a payload with one of these plays the story (viz/story.js)


def front_ends(payload: dict) -> tuple[str, ...]:
    """The front-end modules a payload needs after player.js (viz/<name>.js, with viz/<name>.css where there
    is one): only the players that lay their graph out in the page, or use the story or the quiz, carry that
    code, so player.js keeps its budget."""
    names = []
    if payload.get("mode") == "graph" or (payload.get("layout") or {}).get("hint") == BROWSER_HINT:
        names.append("layout")  # Python has no Graphviz: the page lays the graph out (viz/layout.js)
    if any(k in payload for k in STORY_KEYS):
        names.append("story")
    if payload.get("legend") == "tangent":
        names.append("tangent")  # forward mode's legend and words (viz/tangent.js)
    if payload.get("quiz"):
        names.append("quiz")
    if payload.get("i18n"):
        names.append("i18n")  # the page's words in the scene's language (viz/i18n.js)
    return tuple(names)


def front_end(names: tuple[str, ...] = ()) -> tuple[str, str]:
    """player.js and player.css with the named modules appended (each extends the Player class)."""
    esm, css = ESM, CSS
    for name in names:
        esm += "\n" + (HERE / f"{name}.js").read_text(encoding="utf-8")
        if (HERE / f"{name}.css").exists():
            css += "\n" + (HERE / f"{name}.css").read_text(encoding="utf-8")
    return esm, css


_WIDGET: list[Any] = []  # [the widget class] once made, [None] without anywidget
_WITH: dict[tuple[str, ...], type] = {}  # front-end modules -> the widget class that carries them


def widget_class(names: tuple[str, ...] = ()) -> type | None:
    """The anywidget class behind every player (with the front-end modules ``names``, see ``front_ends``),
    made on first use (so ``import viz`` does not import ipywidgets), or None when anywidget is not installed."""
    if not _WIDGET:
        try:  # anywidget is in viz's [lab] extra
            import anywidget
            import traitlets
        except Exception:
            _WIDGET.append(None)
        else:

            class PlayerWidget(anywidget.AnyWidget):
                """The player in the browser: one SVG, the steps, and where it is."""

                _esm = ESM
                _css = CSS
                svg = traitlets.Unicode("").tag(sync=True)
                svg_alt = traitlets.Unicode("").tag(sync=True)  # the other layout direction, made on request
                data = traitlets.Dict().tag(sync=True)
                frame = traitlets.Int(0).tag(sync=True)
                speed = traitlets.Float(1.0).tag(sync=True)
                zoom = traitlets.Float(0.0).tag(sync=True)  # 0: fit automatically
                text_scale = traitlets.Float(1.0).tag(sync=True)

            PlayerWidget.__module__ = __name__
            _WIDGET.append(PlayerWidget)
    base = _WIDGET[0]
    if base is None or not names:
        return base
    if names not in _WITH:
        esm, css = front_end(names)
        _WITH[names] = type(base.__name__, (base,), {"_esm": esm, "_css": css, "__module__": __name__,
                                                     "__doc__": f"The player with {', '.join(names)}."})
    return _WITH[names]


class BackwardPlayer(Player):
    """The backward pass, one node per step: ``viz.animate(loss)``."""

    kind = "BackwardPlayer"


class ForwardPlayer(Player):
    """The graph growing op by op: ``with viz.record() as rec: ...; rec.player()``."""

    kind = "ForwardPlayer"


class TangentPlayer(Player):
    """Forward mode, one node per step: each op's value and tangent (``viz.animate(f, dual_x)``, viz.tangent)."""

    kind = "TangentPlayer"


_CLASSES = {"BackwardPlayer": BackwardPlayer, "ForwardPlayer": ForwardPlayer, "TangentPlayer": TangentPlayer}


def player_class(kind: str) -> type:
    """``BackwardPlayer``, ``ForwardPlayer`` or ``TangentPlayer``."""
    return _CLASSES[kind]
