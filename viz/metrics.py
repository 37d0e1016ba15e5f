"""Room for text: Graphviz and the browser measure text differently, so viz reserves the browser's widths.

Graphviz (pygraphviz's wheel and a system ``dot``) measures text through pango at 96 dpi with hinted metrics,
whole pixels per glyph: at 10 pt a digit is 5.25 pt wide where the font's own advance is 5.56 pt, so a row of
numbers comes out up to 6 % narrower than the browser draws it (the browser lays SVG text out with the font's
linear advances, at any zoom). Boxes sized by Graphviz then clip their longest row ("…(8,) float3"), and the
labels of two edges between the same nodes, which Graphviz packs side by side, run into each other.

``room(dot)`` gives every table cell of a node a minimum WIDTH from the font's true advances (Helvetica's, which
Arial and Liberation Sans share; a CJK character a whole em, as the CJK fonts draw it) plus the room the player's
thick highlight borders take, and puts every edge label in a borderless one-cell table whose WIDTH holds it with
a gap to its neighbour. It changes geometry only: the label strings stay as the DOT has them. The player then
centres each row in its box (``fitTexts`` in viz/player.js, ``centreTexts`` in viz/jacobian.js), since Graphviz
placed each row by its own, narrower, width."""

from __future__ import annotations

import html
import math
import re
import unicodedata

_HELV = (
    "278,278,355,556,556,889,667,191,333,333,389,584,278,333,278,278,556,556,556,556,556,556,556,556,556,556,"
    "278,278,584,584,584,556,1015,667,667,722,722,667,611,778,722,278,500,667,556,833,722,778,667,778,722,667,"
    "611,722,667,944,667,667,611,278,278,278,469,556,333,556,556,500,556,556,278,556,556,222,222,500,222,833,"
    "556,556,556,556,333,500,278,556,500,722,500,500,500,334,260,334,584"
)
_HELV_BOLD = (
    "278,333,474,556,556,889,722,238,333,333,389,584,278,333,278,278,556,556,556,556,556,556,556,556,556,556,"
    "333,333,584,584,584,611,975,722,722,722,722,667,611,778,722,278,556,722,611,833,722,778,667,778,722,667,"
    "611,722,667,944,667,667,611,333,278,333,584,556,333,556,611,556,611,556,333,611,611,278,278,556,278,889,"
    "611,611,611,611,389,556,333,611,556,778,556,556,500,389,280,389,584"
)
_WIDTHS = {False: [int(w) for w in _HELV.split(",")], True: [int(w) for w in _HELV_BOLD.split(",")]}
# the characters outside ASCII that viz writes itself (Liberation Sans's advances, measured in Chromium)
_OTHER = {"·": 278, "×": 584, "−": 584, "→": 1000, "…": 1000, "⋯": 1000, "⊞": 1000, "∇": 713, "∂": 494,
          "²": 333, "³": 333, "°": 400, "±": 584}


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width of ``text`` in points, by Helvetica's metrics (unknown characters: a digit's; a CJK character, which
    is square, a whole em: a Chinese name must not overflow the room reserved for it)."""
    table = _WIDTHS[bold]
    total = 0
    for ch in text:
        code = ord(ch)
        if 32 <= code < 127:
            total += table[code - 32]
        elif ch in _OTHER:
            total += _OTHER[ch]
        else:
            total += 1000 if unicodedata.east_asian_width(ch) in "WF" else 556
    return total * size / 1000.0


# Room around a node's row, each side, past the cell's padding: the player's thickest border (3 px, drawn
# centred on the box's edge) covers 1.5 of it.
ROW_SLACK = 1.5
# Graphviz places an edge label's text by its own width, which may be 6 % narrower than drawn: the label's
# cell is that much wider, plus a gap to the label beside it.
EDGE_SPREAD = 1.06
EDGE_GAP = 3.0

_TD = re.compile(r"<TD\b([^>]*)>((?:(?!<TD\b|</TD>|<TABLE\b).)*?)</TD>", re.S)
_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_ATTR = re.compile(r'\b([A-Z-]+)="([^"]*)"')
_LABEL = re.compile(r"\blabel=<")
_DEFAULTS = re.compile(r'^\s*(node|edge) \[(.*)\];\s*$')
_FONTSIZE = re.compile(r'\bfontsize="?([\d.]+)"?')
_EDGE = re.compile(r"^\s*\S+ -> \S+ \[")
_TABLE = re.compile(r"<TABLE\b([^>]*)>")


def _lines_width(body: str, size: float) -> float:
    """The widest line of an HTML-like label's text (``<BR/>`` breaks lines, ``<B>`` and ``<FONT POINT-SIZE>``
    change the font)."""
    sizes, bold, widest, line = [size], 0, 0.0, 0.0
    for tok in _TOKEN.findall(body):
        if not tok.startswith("<"):
            line += text_width(html.unescape(tok), sizes[-1], bold > 0)
            continue
        name = tok[1:].split()[0].rstrip("/>").upper() if len(tok) > 2 else ""
        if name == "BR":
            widest, line = max(widest, line), 0.0
        elif name == "B":
            bold += 1
        elif name == "/B":
            bold -= 1
        elif name == "FONT":
            found = dict(_ATTR.findall(tok.upper()))
            sizes.append(float(found.get("POINT-SIZE", sizes[-1])))
        elif name == "/FONT" and len(sizes) > 1:
            sizes.pop()
    return max(widest, line)


def _cells(label: str, size: float) -> str:
    """A node's table with a minimum WIDTH on each cell that holds only text."""
    head = _TABLE.search(label)
    table = dict(_ATTR.findall(head.group(1))) if head else {}
    pad0 = float(table.get("CELLPADDING", 2))
    border0 = float(table.get("CELLBORDER", table.get("BORDER", 1)))

    def widen(m: re.Match) -> str:
        attrs, body = m.group(1), m.group(2)
        found = dict(_ATTR.findall(attrs))
        if "WIDTH" in found or "FIXEDSIZE" in found or not body.strip():
            return m.group(0)
        pad = float(found.get("CELLPADDING", pad0))
        border = float(found.get("BORDER", border0))
        need = _lines_width(body, size) + 2 * (pad + border + ROW_SLACK)
        return f'<TD{attrs} WIDTH="{math.ceil(need)}">{body}</TD>'

    return _TD.sub(widen, label)


def _label_end(line: str, start: int) -> int:
    """Index just past the ``>`` that closes the ``<...>`` label value starting at ``start``, or -1."""
    depth = 0
    for j in range(start, len(line)):
        if line[j] == "<":
            depth += 1
        elif line[j] == ">":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def _edge_cell(body: str, size: float) -> str:
    width = math.ceil(_lines_width(body, size) * EDGE_SPREAD + 2 * EDGE_GAP)
    return (f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR><TD WIDTH="{width}">'
            f"{body}</TD></TR></TABLE>")


def room(dot: str) -> str:
    """``dot`` with room for the browser's text widths (see the module docstring); lines that are not a node's
    or an edge's, and labels that are not HTML-like, stay as they are."""
    sizes = {"node": 14.0, "edge": 14.0}  # Graphviz's default fontsize
    out = []
    for line in dot.split("\n"):
        m = _DEFAULTS.match(line)
        if m:
            fs = _FONTSIZE.search(m.group(2))
            if fs:
                sizes[m.group(1)] = float(fs.group(1))
        lab = _LABEL.search(line)
        if lab and not m and not line.lstrip().startswith(("graph ", "subgraph")):
            start = lab.end() - 1
            end = _label_end(line, start)
            if end > 0:
                body = line[start + 1:end - 1]
                edge = bool(_EDGE.match(line))
                if body.lstrip().startswith("<TABLE"):
                    body = _cells(body, sizes["edge" if edge else "node"])
                elif edge:
                    body = _edge_cell(body, sizes["edge"])
                line = line[:start + 1] + body + line[end - 1:]
        out.append(line)
    return "\n".join(out)
