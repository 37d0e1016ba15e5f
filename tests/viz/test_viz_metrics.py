"""Room for text (viz/metrics.py): Graphviz's boxes and edge labels hold the text at the browser's widths.

Graphviz measures with hinted whole-pixel widths, narrower than the font's own advances that the browser draws
with; ``room`` reserves the latter. The browser side is measured in tests/browser/test_text_fits.py."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import viz
from viz import metrics, render

S = "{http://www.w3.org/2000/svg}"
NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _graph(mg, names):
    x = mg.tensor(np.array([1.5, -1.0, -4.0]), requires_grad=True)
    w = mg.tensor(np.array([0.25, 2.0, 3.0]), requires_grad=True)
    return viz.draw(((x ** 2) * w + x).sum(), params=dict(zip(names, (x, w))), show_saved=True)


def _xs(el):
    nums = [float(v) for v in NUM.findall(el.get("points") or el.get("d") or "")]
    return nums[0::2]


def _nodes(svg: bytes):
    """(texts with their size and weight, the node's left and right edge) for each node."""
    root = ET.fromstring(svg)
    for g in root.iter(f"{S}g"):
        if g.get("class") != "node":
            continue
        xs = [x for el in g.iter() if el.tag in (f"{S}polygon", f"{S}path") for x in _xs(el)]
        texts = [(t.text, float(t.get("font-size")), t.get("font-weight") == "bold") for t in g.iter(f"{S}text")]
        yield texts, min(xs), max(xs)


def test_widths_are_the_fonts_own_advances():
    assert metrics.text_width("0123456789", 10) == pytest.approx(55.6)  # Graphviz measures 52.5 (whole pixels)
    assert metrics.text_width("AccumulateGrad · (3,) float32", 10) == pytest.approx(130.63, abs=0.05)  # Chromium too
    assert metrics.text_width("MulBackward0", 12, bold=True) == pytest.approx(84.0, abs=0.05)  # Chromium: 84.0
    assert metrics.text_width("保存的张量", 10) == 50.0  # a CJK character is a whole em


@pytest.mark.parametrize("names", [("x", "w"), ("输入向量", "权重参数")])
def test_every_row_fits_its_box_at_the_browsers_widths(mg, pgv, names):
    graph = _graph(mg, names)
    for source in (graph.source, viz.player.with_rankdir(graph.source, "LR")):
        nodes = list(_nodes(render.render(source, "svg")))
        assert len(nodes) >= 5
        for texts, left, right in nodes:
            for text, size, bold in texts:
                # the row's width, a 3 px highlight's inner half and a point each side
                assert metrics.text_width(text, size, bold) + 2 * (1.5 + 1) <= right - left, (text, right - left)


def test_without_room_graphviz_boxes_are_too_narrow(mg, pgv):
    """What the room is for: Graphviz alone sizes the leaf's row narrower than the browser draws it."""
    graph = _graph(mg, ("x", "w"))
    svg = render._render_pygraphviz(graph.source, "svg")
    short = [text for texts, left, right in _nodes(svg) for text, size, bold in texts
             if metrics.text_width(text, size, bold) + 2 * 1.5 > right - left]
    assert "AccumulateGrad · (3,) float64" in short


def test_parallel_edge_labels_have_room_between_them(mg, pgv):
    x = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    root = ET.fromstring(render.render(viz.draw((x * x).sin().sum()).source, "svg"))
    spans = []
    for g in root.iter(f"{S}g"):
        if g.get("class") == "edge" and g.find(f"{S}title").text == "n3->n4":
            for t in g.iter(f"{S}text"):  # start-anchored at Graphviz's place, drawn at the font's width
                spans.append((float(t.get("x")), float(t.get("x")) + metrics.text_width(t.text, 10)))
    assert len(spans) == 2
    (a0, a1), (b0, b1) = sorted(spans)
    assert b0 - a1 >= 2, spans


def test_room_changes_geometry_only(mg, pgv):
    """The same texts (the labels' strings are viz's label code's), and ``room`` of its own output is itself."""
    graph = _graph(mg, ("输入向量", "w"))
    texts = lambda svg: [t.text for t in ET.fromstring(svg).iter(f"{S}text")]  # noqa: E731
    assert texts(render.render(graph.source, "svg")) == texts(render._render_pygraphviz(graph.source, "svg"))
    once = metrics.room(graph.source)
    assert once != graph.source and metrics.room(once) == once
    assert re.sub(r' WIDTH="\d+"', "", once).count("<TD") == graph.source.count("<TD") + graph.source.count("->")
