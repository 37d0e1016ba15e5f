"""Graph model -> DOT text.

Every label is an HTML-like label built from escaped text (``html_text``) and every other
string attribute goes through ``quote``: a grad_fn or parameter name can be anything
(``<script>``, quotes, braces, newlines, backslashes, ``&``) and must come out as text,
never as markup, and never break the DOT. Output is deterministic: ids ``n0, n1, ...``
come from traversal order and nothing depends on memory addresses.
"""

from __future__ import annotations

import html
import re

from . import probe, style
from .i18n import language, saved_label, tr, words_on_node
from .model import Model, VEdge, VNode


def scope_label(scope: str, types: dict[str, str]) -> str:
    """'2 · Linear(8→3)' when the module's type is known, else its name."""
    kind = types.get(scope)
    return f"{scope} · {kind}" if kind else scope

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TITLE_LIMIT = 48
ROW_LIMIT = 64
TOOLTIP_LIMIT = 300


def clean(text: object) -> str:
    """Plain text safe to encode: no lone surrogates, control characters made visible."""
    s = str(text).encode("utf-8", "replace").decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s)


def html_text(text: object, limit: int | None = None) -> str:
    """Text for inside an HTML-like label: entities escaped, backslashes doubled (Graphviz
    would expand ``\\N`` and friends even here), newlines as line breaks."""
    s = clean(text).replace("\t", " ")
    if limit is not None:
        s = probe.truncate(s, limit)
    s = html.escape(s, quote=True).replace("\\", "\\\\")
    return s.replace("\r\n", "\n").replace("\r", "\n").replace("\n", '<BR ALIGN="CENTER"/>')


def quote(text: object) -> str:
    """A double-quoted DOT string for plain attributes (ids, colours, tooltips)."""
    s = clean(text).replace("\n", " ").replace("\r", " ").replace("\t", " ")
    # Graphviz copies an existing entity (``&amp;``) into SVG as is, so escape ``&`` first;
    # and it expands escapes in tooltips twice: a literal backslash needs four.
    s = s.replace("&", "&amp;").replace("\\", "\\\\\\\\").replace('"', '\\"')
    return f'"{s}"'


class Html(str):
    """An HTML-like label, already built from escaped text: written as ``<...>``, unquoted."""


def _attrs(attrs: dict[str, str]) -> str:
    return " ".join(f"{k}={v if isinstance(v, Html) else quote(v)}" for k, v in attrs.items())


def _row(text: str, fill: str | None = None, size: int = style.SMALL_PT, color: str | None = None,
         bold: bool = False) -> str:
    bg = f' BGCOLOR="{fill}"' if fill else ""
    body = f"<B>{text}</B>" if bold else text
    font_color = f' COLOR="{color}"' if color else ""
    return f'<TR><TD{bg} CELLPADDING="1"><FONT POINT-SIZE="{size}"{font_color}>{body}</FONT></TD></TR>'


def node_label(node: VNode, show_values: bool, show_grads: bool, lang: str = "en") -> Html:
    """A node's box. Its words (``saved self``, ``leaf``, ``tensor hooks ×1``) are in ``lang``; node names, shapes,
    dtypes and values stay as PyTorch prints them."""
    node = words_on_node(node, lang)
    rows: list[str] = []
    # a caption and a subtitle share one muted row under the title ("AccumulateGrad · (8, 4) float32"):
    # a row less in every leaf keeps a network's graph short enough to show whole on a projector
    merged = bool(node.caption and node.subtitle and node.title)
    if node.caption and not merged:
        rows.append(_row(html_text(node.caption, TITLE_LIMIT), color=style.MUTED_TEXT))
    if node.title:
        rows.append(_row(html_text(node.title, TITLE_LIMIT), size=style.TITLE_PT, bold=node.role != "none"))
    if merged:
        rows.append(_row(html_text(node.caption, TITLE_LIMIT) + " · " + html_text(node.subtitle, ROW_LIMIT),
                         color=style.MUTED_TEXT))
    elif node.subtitle:
        rows.append(_row(html_text(node.subtitle, ROW_LIMIT), color=style.MUTED_TEXT))
    if (show_values or node.tangent is not None) and node.data is not None:
        rows.append(_row(tr("data", lang) + " " + html_text(node.data, ROW_LIMIT)))
    if node.tangent is not None:  # a dual tensor: its tangent beside its value
        rows.append(_row(tr("tangent", lang) + " " + html_text(node.tangent, ROW_LIMIT),
                         fill=style.ROW_FILL["tangent"]))
    if show_grads and node.grad is not None:
        rows.append(_row(tr("grad", lang) + " " + html_text(node.grad, ROW_LIMIT)))
    for kind, text in node.rows:
        shown = saved_label(text, lang) if kind == "saved" else text
        rows.append(_row(html_text(shown, ROW_LIMIT), fill=style.ROW_FILL.get(kind)))
    for badge in node.badges:
        rows.append(_row(html_text(badge, ROW_LIMIT), fill=style.ROW_FILL["badge"]))
    styles = []
    if node.role in style.ROUNDED_ROLES:
        styles.append("rounded")
    if node.ghost or node.role in style.DASHED_ROLES:
        styles.append("dashed")
    table_style = f' STYLE="{",".join(styles)}"' if styles else ""
    fill = node.fill or style.FILL.get(node.role, "#FFFFFF")
    color = style.MUTED_TEXT if node.role == "none" else style.BORDER
    return Html(
        f'<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" COLOR="{color}" '
        f'BGCOLOR="{fill}"{table_style}>{"".join(rows)}</TABLE>>'
    )


def _tooltip(node: VNode, lang: str = "en") -> str:
    node = words_on_node(node, lang)
    parts = [p for p in (node.caption, node.title, node.subtitle) if p]
    what = tr(style.TOOLTIPS.get(node.role, ""), lang)
    return probe.truncate(" · ".join(parts + ([what] if what else [])), TOOLTIP_LIMIT)


def edge_label(edge: VEdge, view: str, rankdir: str = "TB", lang: str = "en") -> Html | None:
    parts = []
    if edge.shape is not None and view == "backward":
        parts.append(html_text(probe.format_shape(edge.shape)))
    if view == "backward" and not edge.faint:
        if edge.name:  # the input it feeds, by name; the slot of the node it enters only when not 0
            slot = " → " + tr(f"slot {edge.slot}", lang) if edge.slot else ""
            parts.append(html_text(edge.name) + slot)
        elif edge.slot is not None:
            parts.append(tr(f"slot {edge.slot}", lang))
    elif view == "backward" and edge.name:
        parts.append(html_text(edge.name))
    if edge.count > 1:
        parts.append(f"×{edge.count:,}")
    if not parts:
        return None
    # top to bottom, one line ("(5, 8) · mat1"): a label line less between every two ranks; left to right,
    # stacked lines, which keep the label short along the edge
    return Html(f'<{label_joiner(rankdir).join(parts)}>')


def label_joiner(rankdir: str) -> str:
    """What separates the parts of an edge label in a layout direction."""
    return "<BR/>" if rankdir in ("LR", "RL") else " · "


def _clusters(nodes: list[VNode]) -> tuple[dict[str, list[VNode]], list[str]]:
    """Nodes per module scope; scopes in first-seen order, parents before children."""
    members: dict[str, list[VNode]] = {}
    order: list[str] = []
    for node in nodes:
        if not node.module:
            continue
        parts = node.module.split(".")
        for i in range(1, len(parts) + 1):
            scope = ".".join(parts[:i])
            if scope not in members:
                members[scope] = []
                order.append(scope)
        members[node.module].append(node)
    return members, order


def to_dot(model: Model, rankdir: str = "TB", legend: bool = False) -> str:
    """DOT text for a model: the same model always gives the same bytes."""
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"viz: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    graph = dict(style.GRAPH_ATTRS, rankdir=rankdir)
    if len(model.nodes) >= style.GUARD_FROM_NODES:
        graph.update(style.GUARD_ATTRS)
    if len(model.nodes) >= style.STRAIGHT_FROM_NODES or model.crossings >= style.STRAIGHT_FROM_CROSSINGS:
        graph.update(style.STRAIGHT_ATTRS)
    lang = language()  # the picture keeps the language it was drawn in
    lines = ["digraph autograd {"]
    lines.append(f"  graph [{_attrs(graph)}];")
    lines.append(f"  node [{_attrs(style.NODE_ATTRS)}];")
    lines.append(f"  edge [{_attrs(style.EDGE_ATTRS)}];")
    ids = {node.key: node.id for node in model.nodes}
    members, order = _clusters(model.nodes)
    for node in model.nodes:
        if not node.module:
            lines.append("  " + _node_line(model, node))
    cluster_ids = {scope: f"cluster_m{i}" for i, scope in enumerate(order)}
    for scope in order:
        if "." not in scope:
            lines.extend(_cluster_lines(model, scope, members, order, cluster_ids, "  "))
    for edge in model.edges:
        attrs: dict[str, str] = {}
        label = edge_label(edge, model.view, rankdir, lang)
        if label:
            attrs["label"] = label
        if edge.faint:
            attrs.update(style="dashed", color=style.FAINT_EDGE)
        if edge.color:
            attrs.update(color=edge.color, constraint="false")
        tail = f" [{_attrs(attrs)}]" if attrs else ""
        lines.append(f"  {ids[edge.src]} -> {ids[edge.dst]}{tail};")
    if legend:
        lines.extend(_legend_lines(model, lang))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_line(model: Model, node: VNode, lang: str | None = None) -> str:
    lang = lang or language()
    attrs = {"label": node_label(node, model.show_values, model.show_grads, lang), "tooltip": _tooltip(node, lang)}
    return f"{node.id} [{_attrs(attrs)}];"


def _cluster_lines(model: Model, scope: str, members: dict[str, list[VNode]], order: list[str],
                   cluster_ids: dict[str, str], indent: str) -> list[str]:
    lines = [f"{indent}subgraph {cluster_ids[scope]} {{"]
    label = Html(f"<{html_text(scope_label(scope, model.types), TITLE_LIMIT)}>")
    attrs = dict(style.CLUSTER_ATTRS, label=label, tooltip=tr(f"module {scope}"), labeljust="l")
    lines.append(f"{indent}  graph [{_attrs(attrs)}];")
    for node in members[scope]:
        lines.append(f"{indent}  " + _node_line(model, node))
    for child in order:
        if child.rsplit(".", 1)[0] == scope and "." in child:
            lines.extend(_cluster_lines(model, child, members, order, cluster_ids, indent + "  "))
    lines.append(f"{indent}}}")
    return lines


def _legend_lines(model: Model, lang: str = "en") -> list[str]:
    """One compact node listing only the kinds of box this picture shows (one rank tall: it never
    stretches along the graph)."""
    present = {node.role for node in model.nodes} | {"ghost" for node in model.nodes if node.ghost}
    rows = []
    for role, title, meaning in style.LEGEND:
        if role not in present:
            continue
        dashed = ' STYLE="dashed"' if role in style.DASHED_ROLES or role == "ghost" else ""
        fill = style.FILL.get(role, "#FFFFFF")
        rows.append(f'<TR><TD BGCOLOR="{fill}" BORDER="1" COLOR="{style.BORDER}"{dashed} CELLPADDING="2">'
                    f'<FONT POINT-SIZE="{style.SMALL_PT}">{html_text(tr(title, lang))}</FONT></TD>'
                    f'<TD ALIGN="LEFT" CELLPADDING="2"><FONT POINT-SIZE="{style.SMALL_PT}" COLOR="{style.MUTED_TEXT}">'
                    f'{html_text(tr(meaning, lang))}</FONT></TD></TR>')
    if not rows:
        return []
    label = Html(f'<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="2" COLOR="{style.EDGE}" BGCOLOR="#FFFFFF" '
                 f'STYLE="rounded,dashed"><TR><TD COLSPAN="2"><FONT POINT-SIZE="{style.SMALL_PT}" '
                 f'COLOR="{style.MUTED_TEXT}">{tr("legend", lang)}</FONT></TD></TR>{"".join(rows)}</TABLE>>')
    return [f"  legend [{_attrs({'label': label, 'tooltip': tr('what the boxes mean', lang)})}];"]
