"""Players outside a kernel: one self-contained HTML file, and a filmstrip of the steps.

``save_html`` writes a page that plays offline: the player's own runtime (player.js, a few
KB, with a stand-in for the widget model) and its CSS are inlined, the SVG and the payload
travel as JSON in the page, and nothing is fetched — no CDN, no fonts, no ``<script src>``.
(ipywidgets' embed helpers load their manager from a CDN, so they are not used.)

``filmstrip`` draws the steps as small multiples in one static SVG, for slides, PDFs and
README files where no script runs; ``Filmstrip.save("x.png")`` writes PNGs instead, one
per step, through pygraphviz's bundled Graphviz with the layout fixed (``neato -n2``).
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from . import style
from .dot import html_text
from .files import write_atomic
from .i18n import CJK_FONT_HINT, cjk_font, has_cjk, hint_once, tr
from .metrics import room
from .player import ESM, SVG_NS, XLINK_NS, Scene, front_end, front_ends, other_layout, to_text

MAX_FILMSTRIP_STEPS = 24
_EXPORT = "export default { render };"

_PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ margin: 16px; background: #ffffff; color: #1a1a1a; font: 14px/1.4 {font}; }}
h1 {{ font-size: 16px; font-weight: 600; margin: 0 0 10px; }}
.mg-page-note {{ color: {muted}; font-size: 12px; margin-top: 8px; }}
</style>
<style>
{css}
</style>
</head>
<body>
<h1>{title}</h1>
<div id="mg-root"></div>
<p class="mg-page-note">{note}</p>
<script type="application/json" id="mg-state">{state}</script>
{engine}<script>
(function () {{
"use strict";
{js}
var state = JSON.parse(document.getElementById("mg-state").textContent);
var listeners = {{}};
var model = {{
  get: function (key) {{ return state[key]; }},
  set: function (key, value) {{
    state[key] = value;
    (listeners["change:" + key] || []).slice().forEach(function (fn) {{ fn(); }});
  }},
  save_changes: function () {{}},
  send: function () {{}},
  on: function (name, fn) {{ (listeners[name] = listeners[name] || []).push(fn); }},
  off: function (name, fn) {{
    listeners[name] = (listeners[name] || []).filter(function (f) {{ return f !== fn; }});
  }}
}};
__mgModule.render({{ model: model, el: document.getElementById("mg-root") }});
if (window.parent !== window && window.ResizeObserver) {{  // framed (the course's website): tell the page our height
  new ResizeObserver(function () {{
    window.parent.postMessage({{ mgHeight: document.documentElement.scrollHeight }}, "*");
  }}).observe(document.body);
}}
}})();
</script>
</body>
</html>
"""


def standalone_js(esm: str = ESM) -> str:
    """player.js as a classic script: its one ``export`` becomes a local constant."""
    if esm.count(_EXPORT) != 1:
        raise RuntimeError("viz: player.js must end with exactly one `export default { render };`")
    return esm.replace(_EXPORT, "const __mgModule = { render };")


def _json_for_html(value: Any) -> str:
    """JSON that is safe inside a <script> element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/").replace("<!--", "\\u003c!--")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def page(scene: Scene, title: str | None = None, frame: int = 0) -> str:
    """The standalone HTML text of a player: both layout directions when Python has Graphviz (up to
    ``ALT_LAYOUT_NODES`` nodes), else the WebAssembly Graphviz inline, so that it lays the graph out
    itself. Nothing is fetched."""
    title = title or ("viz: forward mode, step by step" if scene.payload.get("legend") == "tangent"
                      else "viz: backward pass, step by step" if scene.mode == "backward"
                      else "viz: the graph, built op by op")
    state = {"svg": scene.svg(html=True), "svg_alt": other_layout(scene), "data": scene.payload, "frame": int(frame),
             "speed": 1.0, "standalone": True}
    engine = "" if scene.root is not None else inline_graphviz()
    esm, css = front_end(front_ends(scene.payload))  # the quiz's and the story's front ends where they are used
    note = ("Play, or step with ← and → (click the player first). Made with viz.animate; "
            "this page needs no kernel and no network.")
    lang = (scene.payload.get("i18n") or {}).get("lang", "en")
    return _PAGE.format(title=html.escape(tr(title, lang)), font=style.FONT.replace(",", ", "),
                        muted=style.MUTED_TEXT, css=css, note=html.escape(tr(note, lang)), state=_json_for_html(state),
                        js=standalone_js(esm), engine=engine, lang="zh-CN" if lang == "zh" else lang)


def inline_graphviz() -> str:
    """The WebAssembly Graphviz as an inert script element player.js imports from (no network)."""
    from .player import graphviz_source

    source = graphviz_source().decode("utf-8")
    if re.search(r"</?script", source, re.IGNORECASE):
        raise RuntimeError("viz: the vendored Graphviz cannot be inlined in a page (it contains a script tag)")
    return f'<script type="text/plain" id="mg-graphviz">{source}</script>\n'



def save_html(scene: Scene, path: Any, title: str | None = None) -> Path:
    target = Path(path)
    if target.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"viz: save_html() needs a .html path, got {str(path)!r}")
    return write_atomic(target, page(scene, title))


# -- the filmstrip ----------------------------------------------------------------------------------------------------


class Filmstrip:
    """Small multiples of a player's steps: shows as SVG in Jupyter, ``save`` writes files."""

    def __init__(self, scene: Scene, steps: list[int], svg: str, scale: float = 2.0) -> None:
        self.scene = scene
        self.steps = steps
        self.svg = svg
        self.scale = scale

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"Filmstrip(steps={len(self.steps)})"

    def save(self, path: Any) -> Path | list[Path]:
        """``.svg`` (the strip), ``.html`` (the strip in a page), or ``.png``: one PNG per
        step at the strip's scale, each with its caption, ``name-00.png``, ``name-01.png``, ...
        (returns their paths)."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".svg":
            return write_atomic(target, self.svg)
        if suffix in (".html", ".htm"):
            return write_atomic(target, "<!DOCTYPE html><meta charset='utf-8'><body style='background:#fff'>"
                                + self.svg)
        if suffix == ".png":
            return save_pngs(self.scene, self.steps, target, self.scale)
        raise ValueError(f"viz: Filmstrip.save() needs a .svg, .html or .png path, got {str(path)!r}")


def pick_steps(count: int, steps: Any = None, limit: int = MAX_FILMSTRIP_STEPS) -> list[int]:
    if steps is not None:
        return [s for s in (int(s) for s in steps) if 0 <= s < count]
    if count <= limit:
        return list(range(count))
    picked = {round(i * (count - 1) / (limit - 1)) for i in range(limit)}
    return sorted(picked)


def filmstrip(scene: Scene, columns: int = 4, steps: Any = None, width: float = 260.0,
              scale: float = 2.0) -> Filmstrip:
    if scene.root is None:
        raise RuntimeError(scene.hint or "viz: no Graphviz renderer: nothing to draw")
    if not scale > 0:
        raise ValueError(f"viz: filmstrip() needs a positive scale, got {scale!r}")
    chosen = pick_steps(scene.num_steps, steps)
    columns = max(1, int(columns))
    view = [float(v) for v in (scene.root.get("viewBox") or "0 0 100 100").split()]
    vw, vh = max(view[2], 1.0), max(view[3], 1.0)
    cell_w = float(width)
    cell_h = cell_w * vh / vw
    caption_h, gap = 30.0, 14.0
    rows = (len(chosen) + columns - 1) // columns
    total_w = columns * cell_w + (columns + 1) * gap
    total_h = rows * (cell_h + caption_h) + (rows + 1) * gap
    out = ET.Element(f"{{{SVG_NS}}}svg", {"width": f"{total_w:.0f}", "height": f"{total_h:.0f}",
                                          "viewBox": f"0 0 {total_w:.1f} {total_h:.1f}"})
    ET.SubElement(out, f"{{{SVG_NS}}}rect", {"width": "100%", "height": "100%", "fill": "#ffffff"})
    for n, k in enumerate(chosen):
        r, c = divmod(n, columns)
        x = gap + c * (cell_w + gap)
        y = gap + r * (cell_h + caption_h + gap)
        cell = ET.SubElement(out, f"{{{SVG_NS}}}g", {"transform": f"translate({x:.1f},{y:.1f})"})
        ET.SubElement(cell, f"{{{SVG_NS}}}rect", {"width": f"{cell_w:.1f}", "height": f"{cell_h + caption_h:.1f}",
                                                  "fill": "none", "stroke": "#E0E0E0", "rx": "4"})
        frame = ET.fromstring(scene.static_svg(k))
        inner = ET.SubElement(cell, f"{{{SVG_NS}}}svg", {"width": f"{cell_w:.1f}", "height": f"{cell_h:.1f}",
                                                         "viewBox": frame.get("viewBox", "")})
        for child in list(frame):
            inner.append(child)
        for el in inner.iter():
            el.attrib.pop("id", None)
        step = scene.payload["steps"][k]
        for i, text in enumerate(_caption(k, step.get("title", ""), cell_w)):
            t = ET.SubElement(cell, f"{{{SVG_NS}}}text", {
                "x": f"{cell_w / 2:.1f}", "y": f"{cell_h + 12 + 12 * i:.1f}", "text-anchor": "middle",
                "font-family": style.FONT, "font-size": "10" if i == 0 else "9",
                "fill": style.TEXT if i == 0 else style.MUTED_TEXT})
            t.text = text
    text = to_text(out)
    if "xmlns:xlink" not in text.split(">", 1)[0]:
        text = text.replace(f'<svg xmlns="{SVG_NS}"', f'<svg xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}"', 1)
    return Filmstrip(scene, chosen, text, float(scale))


def _caption(k: int, title: str, width: float) -> list[str]:
    chars = max(int(width / 5.2), 12)
    first = f"{tr('step')} {k}"
    rest = title if len(title) <= chars else title[: chars - 1] + "…"
    return [first, rest] if rest else [first]


# -- PNG: one Graphviz render per step ---------------------------------------------------------------------------

_TABLE_COLOR = re.compile(r'^(<TABLE[^>]*?\bCOLOR=")([^"]*)(")')
_LAST_BOLD = re.compile(r"<B>((?:(?!<B>).)*?)</B>((?:(?!<B>).)*)$", re.S)
_CLEAR = "#FFFFFF00"


def step_caption(scene: Scene, k: int) -> str:
    """'Step 3 / 7: MulBackward0 runs': what a picture of one step says under it."""
    title = scene.payload["steps"][k].get("title", "")
    head = f"Step {k} / {scene.num_steps - 1}"
    return tr(f"{head}: {title}" if title else head)  # the title is in the scene's language already


def save_pngs(scene: Scene, steps: list[int], target: Path, scale: float = 2.0) -> list[Path]:
    """One PNG per step with its caption, ``scale`` device pixels per CSS pixel, rendered by
    pygraphviz's bundled Graphviz (cairo).

    Every step is the same DOT — the same labels, so dot gives the same layout — with the
    state written as colours: reserved value lines are transparent until their value is
    there. (A drawn edge that carried several different gradients, which only happens
    around nodes hidden by ``max_nodes``, shows none; the SVG filmstrip shows them all.)
    All files are made before the first is written, so a failure writes none.
    """
    from .render import SAVE_MAX_PIXELS

    pictures = []
    for k in steps:
        png = frame_png(scene, k, step_caption(scene, k), scale, SAVE_MAX_PIXELS)
        if png is None:
            raise RuntimeError("viz: PNG pictures of a player need pygraphviz (pip install pygraphviz)")
        pictures.append((target.with_name(f"{target.stem}-{k:02d}.png"), png.data))
    return [write_atomic(path, data) for path, data in pictures]


GIF_CAPTION_PT = 12


def save_gif(scene: Scene, path: Any, fps: float = 1.0, steps: Any = None, scale: float = 2.0) -> Path:
    """The steps as an animated GIF for slides: every frame the same size (the layout never
    moves), a caption band under each, ``fps`` steps per second, looping. Needs Pillow (in
    the ``lab`` extra) and pygraphviz; the same player always gives the same bytes."""
    target = Path(path)
    if target.suffix.lower() != ".gif":
        raise ValueError(f"viz: save_gif() needs a .gif path, got {str(path)!r}")
    if not fps > 0 or not scale > 0:
        raise ValueError(f"viz: save_gif() needs a positive fps and scale, got fps={fps!r}, scale={scale!r}")
    try:
        from PIL import Image
    except ImportError as exc:
        raise RuntimeError("viz: save_gif() needs Pillow (pip install pillow, part of minigrad-lab[lab])") from exc
    import io

    chosen = pick_steps(scene.num_steps, steps, limit=scene.num_steps)
    pictures = []
    for k in chosen:
        png = frame_png(scene, k, None, scale)
        if png is None:
            raise RuntimeError("viz: save_gif() needs pygraphviz to draw the steps (pip install pygraphviz)")
        with Image.open(io.BytesIO(png.data)) as picture:
            pictures.append((picture.convert("RGB"), step_caption(scene, k), png.scale))
    captions = _Captions(pictures[0][0].width, pictures[0][2], [caption for _, caption, _ in pictures])
    frames = [captions.under(picture, caption) for picture, caption, _ in pictures]
    # one palette for every frame, made from all of them: colours do not flicker between steps
    sheet = Image.new("RGB", (frames[0].width, frames[0].height * len(frames)), "white")
    for n, frame in enumerate(frames):
        sheet.paste(frame, (0, frame.height * n))
    palette = sheet.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    indexed = [frame.quantize(palette=palette, dither=Image.Dither.NONE) for frame in frames]
    out = io.BytesIO()
    indexed[0].save(out, format="GIF", save_all=True, append_images=indexed[1:], duration=round(1000 / fps),
                    loop=0, optimize=False, disposal=1)
    return write_atomic(target, out.getvalue())


class _Captions:
    """Caption bands of one height for every frame (a GIF's frames must all be one size)."""

    def __init__(self, width: int, scale: float, captions: list[str]) -> None:
        from PIL import ImageFont

        size = max(round(GIF_CAPTION_PT * 4 / 3 * scale), 8)
        cjk = cjk_font() if any(has_cjk(c) for c in captions) else None
        if any(has_cjk(c) for c in captions) and cjk is None:
            hint_once(CJK_FONT_HINT)
        self.font = ImageFont.truetype(cjk, size=size) if cjk else ImageFont.load_default(size=size)
        self.pad = size // 2
        self.width = max(width, 1)
        self.line_height = round(size * 1.35)
        self.lines = {c: _wrap(c, self.font.getlength, self.width - 2 * self.pad)[:3] for c in captions}
        self.band = self.pad * 2 + max(len(lines) for lines in self.lines.values()) * self.line_height

    def under(self, picture: Any, caption: str) -> Any:
        """The picture with a white band under it holding ``caption``, centred."""
        from PIL import Image, ImageDraw

        out = Image.new("RGB", (self.width, picture.height + self.band), "white")
        out.paste(picture, (0, 0))
        draw = ImageDraw.Draw(out)
        for i, line in enumerate(self.lines[caption]):
            x = (self.width - self.font.getlength(line)) / 2
            y = picture.height + self.pad + i * self.line_height
            draw.text((x, y), line, fill=style.TEXT, font=self.font, anchor="la")
        return out


_CJK_CHARS = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
_TOKEN = re.compile(rf"(\s*)([{_CJK_CHARS}][，。：；、）」]?|[^\s{_CJK_CHARS}]+[，。：；、）」]?)")


def _wrap(text: str, measure: Any, width: float) -> list[str]:
    """Greedy word wrap by measured width; a word wider than the line stands alone. Chinese has no spaces:
    a line may break after any CJK character (not before its closing punctuation)."""
    lines: list[str] = []
    line = ""
    for space, word in _TOKEN.findall(text):
        candidate = f"{line}{' ' if space else ''}{word}" if line else word
        if line and measure(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    return lines + ([line] if line else [])


def frame_agraph(scene: Scene, k: int, note: str | None = None) -> Any:
    """Step ``k`` as a pygraphviz AGraph on white, with ``note`` as a line under the picture.
    RuntimeError without pygraphviz."""
    import warnings

    from .render import quiet_stderr

    try:
        with quiet_stderr():
            import pygraphviz
    except Exception as exc:
        raise RuntimeError("viz: PNG pictures of a player need pygraphviz (pip install pygraphviz)") from exc
    with quiet_stderr(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = pygraphviz.AGraph(string=room(scene.dot))
    graph.graph_attr["bgcolor"] = "white"
    _module_labels(graph)
    _png_state(graph, scene, k)
    if note:
        # the root graph's label sits under the drawing; clusters keep their own labels
        graph.graph_attr["label"] = (f'<<FONT POINT-SIZE="{NOTE_SIZE}" COLOR="{style.MUTED_TEXT}">'
                                     f"{html_text(note)}</FONT>>")
    return graph


NOTE_SIZE = 12


def _module_labels(graph: Any) -> None:
    """The modules' labels back on their frames (the player's layout keeps them in the frames' tooltips,
    ``player.reserve``, and draws them in the page): a PNG is laid out again, with room for them."""
    from .player import _CLUSTER_TIP

    for sub in graph.subgraphs():
        tip = sub.graph_attr.get("tooltip") or ""
        if tip.startswith(_CLUSTER_TIP) and not sub.graph_attr.get("label"):
            sub.graph_attr["label"] = "<" + html_text(tip[len(_CLUSTER_TIP):]) + ">"
        _module_labels(sub)


def frame_png(scene: Scene, k: int, note: str | None = None, scale: float = 2.0,
              max_pixels: int | None = None) -> Any:
    """Step ``k`` as a ``viz.render.Png`` at ``scale`` (shown at the SVG's size), or None without
    pygraphviz."""
    from .render import MAX_PNG_PIXELS, draw_png

    note = tr(note, (scene.payload.get("i18n") or {}).get("lang", "en")) if note else note  # the scene's language
    if note and has_cjk(note) and cjk_font() is None:  # Graphviz finds a CJK font through fontconfig
        hint_once(CJK_FONT_HINT)
    try:
        graph = frame_agraph(scene, max(0, min(int(k), scene.num_steps - 1)), note)
    except RuntimeError:
        return None
    view = [float(v) for v in (scene.root.get("viewBox") or "").split()] if scene.root is not None else []
    css_size = (view[2] * 4 / 3, view[3] * 4 / 3) if len(view) == 4 else None
    return draw_png(graph, css_size, scale, max_pixels or MAX_PNG_PIXELS)


def _set_html(item: Any, html_label: str) -> None:
    item.attr["label"] = "<" + html_label + ">"  # pygraphviz reads HTML labels without the outer <>


def _last_line(label: str, visible: bool, color: str = style.TEXT) -> str:
    """Colour the reserved (last bold) line of a label, or make it transparent."""
    fill = color if visible else _CLEAR
    return _LAST_BOLD.sub(lambda m: f'<FONT COLOR="{fill}"><B>{m.group(1)}</B></FONT>{m.group(2)}', label, count=1)


def _png_state(graph: Any, scene: Scene, k: int) -> None:
    blue = style.OKABE_ITO["blue"]
    if scene.mode == "backward":
        from .trace import frame_note, state_at

        st = state_at(scene.frames, k)
        reserved = {}
        for f in scene.frames:
            for n in f.nodes if frame_note(f) else ():
                reserved[n] = frame_note(f)
        for node in graph.nodes():
            n = str(node)
            label = node.attr.get("label") or ""
            if not label.startswith("<TABLE"):
                continue
            state = st.nodes.get(n)
            color = {"current": blue, "waiting": blue, "pending": "#C8C8C8"}.get(state)
            if color:
                label = _TABLE_COLOR.sub(lambda m, c=color: m.group(1) + c + m.group(3), label, count=1)
            if n in reserved:
                label = _last_line(label, st.notes.get(n) is not None and st.notes.get(n) == reserved[n])
            _set_html(node, label)
        for edge in graph.edges():
            key = edge.attr.get("mgk")
            label = edge.attr.get("label") or ""
            if key is None or not str(key).isdigit():
                continue
            e = int(key)
            now = e in st.current_edges
            if "<B>" in label:
                shown = _LAST_BOLD.search(label)
                same = shown is not None and e in st.labels and html.unescape(shown.group(1)) == st.labels[e]
                _set_html(edge, _last_line(label, same, blue if now else style.TEXT))
            if e in st.labels:
                edge.attr["color"] = blue if now else style.BORDER
                edge.attr["penwidth"] = "2.2" if now else "1.3"
    else:
        from .player import forward_state

        appear, new = forward_state(scene, k)
        for node in graph.nodes():
            if appear.get(str(node), 0) > k:
                node.attr["style"] = "invis"
            elif str(node) in new:
                label = node.attr.get("label") or ""
                if label.startswith("<TABLE"):
                    green = style.OKABE_ITO["bluish_green"]
                    _set_html(node, _TABLE_COLOR.sub(lambda m, c=green: m.group(1) + c + m.group(3), label, count=1))
        for edge in graph.edges():
            if max(appear.get(str(edge[0]), 0), appear.get(str(edge[1]), 0)) > k:
                edge.attr["style"] = "invis"
