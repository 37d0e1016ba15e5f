"""The graph of the backward pass (viz.layers): nodes made by backward under create_graph are the second
layer, linked to the node whose rule made them; the same for minigrad and PyTorch."""

from __future__ import annotations

import numpy as np

import viz
from viz import style


def _second_order(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    v = lib.tensor(np.array([0.5, -1.0]))
    with viz.source_lines():
        y = (x * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
    return x, v, y, g


def _structure(graph):
    by_id = {n.id: n for n in graph.model.nodes}
    layer2 = sorted((n.title, n.caption, by_id[n.parent].title if n.parent else None)
                    for n in graph.model.nodes if n.layer == 2)
    links = sorted((by_id[graph.model.node(e.src).id].title, graph.model.node(e.dst).title)
                   for e in graph.model.edges if e.color)
    return layer2, links


def test_layers_match_parent_metadata(lib):
    _, _, y, g = _second_order(lib)
    graph = viz.draw(g, y, layers=True)
    layer2, links = _structure(graph)
    assert [t for t, _, _ in layer2] == ["AddBackward0", "AddBackward0", "MulBackward0", "MulBackward0",
                                         "MulBackward0", "MulBackward0"]
    assert all(c == "layer 2: made by the backward of layer 1's MulBackward0" and p == "MulBackward0"
               for _, c, p in layer2)
    assert len(links) == 6 and all(dst == "MulBackward0" for _, dst in links)
    first = [n for n in graph.model.nodes if n.role == "fn" and n.layer == 1]
    assert sorted(n.title for n in first) == ["MulBackward0", "MulBackward0", "SumBackward0"]
    assert all(n.fill == style.LAYER2_FILL for n in graph.model.nodes if n.layer == 2)
    assert graph.source.count(f'color="{style.LAYER2_LINK}"') == 6
    plain = viz.draw(g, y)  # off: the same graph, one colour, no links
    assert all(n.layer == 1 for n in plain.model.nodes) and not any(e.color for e in plain.model.edges)


def test_layers_same_for_torch_and_minigrad(torch):
    import minigrad

    assert _structure(viz.draw(*_second_order(minigrad)[3:1:-1], layers=True)) == \
        _structure(viz.draw(*_second_order(torch)[3:1:-1], layers=True))


def test_parents_reached_when_roots_do_not(lib):
    _, _, _, g = _second_order(lib)
    graph = viz.draw(g, layers=True)  # y's graph is drawn through the parents of g's nodes
    assert sum(n.title == "MulBackward0" and n.layer == 1 for n in graph.model.nodes) == 2


def test_animate_second_backward_on_the_layer(lib):
    x, v, _, g = _second_order(lib)
    hvp = (g * v).sum()
    frames = viz.trace_backward(hvp)
    plain_names = [f.name for f in frames]
    x.grad = None
    x2, v2, _, g2 = _second_order(lib)
    player = viz.animate((g2 * v2).sum(), layers=True)
    frames = player.frames
    assert [f.name for f in frames] == plain_names
    np.testing.assert_allclose(np.asarray(x2.grad.tolist()), 6 * np.array([1.0, 2.0]) * np.array([0.5, -1.0]),
                               rtol=1e-9)  # the Hessian-vector product: H = diag(6x)
    layer_steps = [f for f in frames if any(k == "layer" for k, _ in f.lines)]
    assert {f.name for f in layer_steps} == {"AddBackward0", "MulBackward0"}
    assert all("the backward of layer 1's MulBackward0 made it" in t for f in layer_steps for k, t in f.lines
               if k == "layer")
    assert style.LAYER2_FILL in player.scene.dot


def test_no_layer_without_anomaly_mode(lib):
    x = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
    (g,) = lib.autograd.grad((x * x).sum(), x, create_graph=True)
    graph = viz.draw(g, layers=True)
    assert all(n.layer == 1 for n in graph.model.nodes)


def test_caption_escaped():
    from viz.dot import node_label
    from viz.model import VNode

    label = node_label(VNode("k", "fn", "T", caption="made by <b>\"x\"&'s backward", fill=style.LAYER2_FILL),
                       False, False)
    assert "made by &lt;b&gt;&quot;x&quot;&amp;&#x27;s backward" in label and "<b>" not in label


def test_a_second_layer_node_named_as_its_parent_reads_apart_from_it(lib):
    """Lesson 8: y = x**3, dy = grad(y, x, create_graph=True) holds a PowBackward0 made by the first layer's
    PowBackward0; the words say which is which by layer ("PowBackward0 ... PowBackward0's backward made it" did
    not), and the picture's text twin (Graph.summary) carries the captions without reading model internals."""
    x = lib.tensor(2.0, requires_grad=True)
    with viz.source_lines():
        y = x**3
        (dy,) = lib.autograd.grad(y, x, create_graph=True)
    graph = viz.draw(dy, y, params={"x": x, "dy": dy, "y": y}, layers=True)
    text = str(graph.summary())
    assert "layer 2: made by the backward of layer 1's PowBackward0" in text
    player = viz.animate(dy, params={"x": x}, layers=True)
    lines = [t for f in player.frames if f.name == "PowBackward0" for k, t in f.lines if k == "layer"]
    assert lines == ["This PowBackward0 is in layer 2, the graph of the backward pass: the backward of layer 1's "
                     "PowBackward0 made it (that backward ran with create_graph=True), so this second backward "
                     "differentiates the first one's formula."]
