"""Every label is text, never markup: nasty names and values in DOT and SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import viz

NASTY = [
    '<script>alert("x")</script>',
    "quote\"s and 'single'",
    "{braces}|<ports>[brackets]",
    "back\\slash \\N \\G \\L \\\\ end\\",
    "amp & &amp; &lt; &#60;",
    "]]> --> <!-- <![CDATA[",
]
# Shown as visible escapes or replacements, but must never break anything either.
WEIRD = ["line1\nline2", "ctl\x00\x1b\x7f\x85", "lone\ud800surrogate", "tab\there"]

XLINK = "{http://www.w3.org/1999/xlink}title"


def nasty_graph(fakes, name):
    x = fakes.FakeTensor([1, 2, 3])
    acc = fakes.FakeAccumulateGrad(x, metadata={"module": name})
    fn = fakes.FakeNode(name, [(acc, 0), (None, 0)], _saved_mode=name, _saved_self=x,
                        metadata={"module": name + ".inner"})
    return fn, {name: x}


@pytest.mark.parametrize("name", NASTY + WEIRD)
def test_nasty_strings_stay_text_in_dot(fakes, parse_dot, label_text, name):
    fn, params = nasty_graph(fakes, name)
    graph = viz.draw(fn, params=params, show_saved=True, show_attrs=True)
    agraph = parse_dot(graph.source)  # parses: the DOT is not broken
    assert sorted(agraph.nodes()) == ["n0", "n1", "n2"]
    assert agraph.number_of_edges() == 2
    if name in NASTY:
        texts = [label_text(agraph.get_node(n).attr["label"]) for n in ("n0", "n1", "n2")]
        fn_text = texts[0].split("\n")
        assert fn_text[0] == name  # the node name, verbatim
        assert f"mode = {name}" in fn_text  # an attribute value, verbatim
        assert f"saved self = {name} (3,)" in fn_text  # a params name, verbatim
        assert texts[2].split("\n")[0] == name  # the leaf: its name first, then "AccumulateGrad · shape"
        labels = sorted(label_text(sg.graph_attr["label"]) for sg in agraph.subgraphs())
        assert labels == [name]


@pytest.mark.parametrize("name", NASTY + WEIRD)
def test_nasty_strings_never_become_svg_markup(fakes, pgv, svg_texts, name):
    fn, params = nasty_graph(fakes, name)
    svg = viz.draw(fn, params=params, show_saved=True, show_attrs=True).svg()
    root = ET.fromstring(svg)  # well-formed XML
    assert "<script" not in svg
    assert not any(el.tag.endswith("script") for el in root.iter())
    texts = svg_texts(svg)
    if name in NASTY:
        assert texts["n0"].split("\n")[0] == name
        tooltips = [el.get(XLINK) for el in root.iter() if el.get(XLINK)]
        assert any(t.startswith(name) for t in tooltips)  # tooltips keep backslashes too
    if name == "line1\nline2":
        assert texts["n0"].split("\n")[:2] == ["line1", "line2"]


def test_custom_function_with_a_nasty_class_name(torch, pgv, svg_texts):
    def forward(ctx, x):
        return x * 2

    def backward(ctx, g):
        return g * 2

    name = '<img src=x onerror="alert(1)">{\\N}'
    Nasty = type(name, (torch.autograd.Function,), {"forward": staticmethod(forward),
                                                   "backward": staticmethod(backward)})
    x = torch.ones(2, requires_grad=True)
    graph = viz.draw(Nasty.apply(x), params={"<b>x</b>": x})
    svg = graph.svg()
    assert "<img" not in svg and "<b>" not in svg
    texts = svg_texts(svg)
    assert texts["n1"] == name + "Backward"
    assert "<b>x</b>" in texts["n2"].split("\n")
