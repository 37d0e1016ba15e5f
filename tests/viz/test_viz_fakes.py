"""viz on a duck-typed graph that has minigrad's introspection names (no torch needed)."""

from __future__ import annotations

import viz
from viz import probe
from viz.model import build
from viz.walk import WALK_LIMIT, walk


def labels(model):
    return [(n.role, n.title) for n in model.nodes]


def test_backward_view_nodes_and_edges(fakes):
    g = fakes.mul_graph()
    model = build(walk((g["y"],)))
    # traversal order: a node's (None, 0) inputs come right after it
    assert labels(model) == [("output", "output"), ("fn", "MulBackward0"), ("none", "None"),
                             ("fn", "MulBackward0"), ("leaf", "leaf")]
    ids = {n.key: n.id for n in model.nodes}
    edges = [(ids[e.src], ids[e.dst], e.slot, e.shape, e.faint) for e in model.edges]
    assert edges == [
        ("n0", "n1", 0, (3,), False),
        ("n1", "n3", 0, (3,), False),
        ("n1", "n2", 0, None, True),
        ("n3", "n4", 0, (3,), False),  # x * x: two edges into the same AccumulateGrad
        ("n3", "n4", 0, (3,), False),
    ]
    assert [n.id for n in model.nodes] == ["n0", "n1", "n2", "n3", "n4"]


def test_edge_shape_comes_from_input_metadata(fakes):
    x = fakes.FakeTensor([1, 2, 3, 4, 5, 6], shape=(2, 3))
    acc = fakes.FakeAccumulateGrad(x)
    mid = fakes.FakeNode("ViewBackward0", [(acc, 0)], input_metadata=(((6,), "float32"),))
    two = fakes.FakeNode("SplitBackward0", [(mid, 0)], input_metadata=(((2,), "float32"), ((4,), "float32")))
    top = fakes.FakeNode("CatBackward0", [(two, 1), (two, 0)], input_metadata=(((6,), "float64"),))
    model = build(walk((top,)))
    shapes = [(e.slot, e.shape) for e in model.edges]
    assert shapes == [(1, (4,)), (0, (2,)), (0, (6,)), (0, (2, 3))]


def test_values_view_uses_output_tensor_for_every_intermediate(fakes):
    g = fakes.mul_graph()
    g["x"].grad = fakes.FakeTensor([4, 8, 12])
    model = build(walk((g["y"],)), view="values", params={"x": g["x"]})
    tensors = {n.title or n.key: n.data for n in model.nodes if n.role in ("tensor", "output", "leaf")}
    assert tensors["output"] == "[2, 8, 18]"
    assert tensors["x"] == "[1, 2, 3]"
    assert "[1, 4, 9]" in tensors.values()  # x * x, reachable only through output_tensor
    leaf = next(n for n in model.nodes if n.role == "leaf")
    assert leaf.grad == "[4, 8, 12]"
    ops = [n.title for n in model.nodes if n.role == "op"]
    assert ops == ["*", "*"]
    assert any(n.role == "none" and n.title == "constant" for n in model.nodes)


def test_hook_and_retain_grad_badges_from_minigrad_names(fakes):
    g = fakes.mul_graph()
    g["xx"].retains_grad = True
    g["xx"].hooks = (print,)
    g["sq"].hooks = (print, print)
    g["sq"].prehooks = (print,)
    g["x"].hooks = (print,)
    model = build(walk((g["y"],)))
    sq = next(n for n in model.nodes if n.title == "MulBackward0" and n.badges)
    # in the order backward runs them: tensor hooks, then the node's prehooks, then its hooks
    assert sq.badges == ["retain_grad", "tensor hooks ×1", "prehooks ×1", "hooks ×2"]
    leaf = next(n for n in model.nodes if n.role == "leaf")
    assert leaf.badges == ["tensor hooks ×1"]
    source = viz.draw(g["y"]).source
    assert "retain_grad" in source and "prehooks ×1" in source


def test_module_scopes_become_nested_clusters(fakes, parse_dot):
    x = fakes.FakeTensor([1, 2, 3])
    acc = fakes.FakeAccumulateGrad(x)
    a = fakes.FakeNode("ReluBackward0", [(acc, 0)], metadata={"module": "encoder.0"})
    b = fakes.FakeNode("AddmmBackward0", [(a, 0)], metadata={"module": "encoder.1"})
    c = fakes.FakeNode("SumBackward0", [(b, 0)], metadata={"module": "head"})
    graph = parse_dot(viz.draw(c).source)
    top = sorted(sg.graph_attr["label"] for sg in graph.subgraphs())
    assert top == ["encoder", "head"]  # the nested scopes live inside "encoder"
    encoder = next(sg for sg in graph.subgraphs() if sg.graph_attr["label"] == "encoder")
    nested = sorted(sg.graph_attr["label"] for sg in encoder.subgraphs())
    assert nested == ["encoder.0", "encoder.1"]


def test_saved_values_attrs_signed_and_internal_hidden(fakes):
    x = fakes.FakeTensor([1, 2, 3])
    acc = fakes.FakeAccumulateGrad(x)
    fn = fakes.FakeNode("SumBackward1", [(acc, 0)], _saved_dim=(2**64 - 1,), _saved_keepdim=False,
                  _saved_self_sym_sizes=(3,), _saved_self=x)
    fn._raw_saved_self = object()
    model = build(walk((fn,)), show_saved=True, show_attrs=True, params={"x": x})
    rows = model.nodes[0].rows
    assert ("attr", "dim = (-1,)") in rows
    assert ("attr", "keepdim = False") in rows
    assert ("saved", "self = x (3,)") in rows
    assert not any("sym" in text or "raw" in text for _, text in rows)


def test_freed_saved_value_is_shown_not_raised(fakes):
    class Freed(fakes.FakeNode):
        @property
        def _saved_self(self):
            raise RuntimeError("Trying to backward through the graph a second time")

    fn = Freed("ExpBackward0")
    model = build(walk((fn,)), show_saved=True)
    assert ("saved", "self = freed (after backward)") in model.nodes[0].rows


def test_deep_fake_chain_is_iterative(fakes):
    x = fakes.FakeTensor([1.0])
    node = fakes.FakeAccumulateGrad(x)
    for _ in range(20_000):
        node = fakes.FakeNode("AddBackward0", [(node, 0), (None, 0)])
    graph = viz.draw(node, max_nodes=40)
    assert graph.model.truncated  # the walk stops at WALK_LIMIT nodes
    assert graph.model.hidden == WALK_LIMIT - 40
    assert "graph continues" in graph.source
    text = str(viz.summary(node, max_nodes=40))
    assert "nodes hidden" in text and "walk stopped at" in text
    small = viz.draw(fakes.FakeNode("AddBackward0", [(node, 0)]), max_nodes=40)
    assert small.num_nodes < 100


def test_probe_signed():
    assert probe.signed(2**64 - 1) == -1
    assert probe.signed((2**64 - 2, 3)) == (-2, 3)
    assert probe.signed(True) is True


def test_long_edges_are_cut_into_references(fakes, pgv):
    # node i feeds on node i - 1 and on node i // 2: long edges everywhere, no hub
    from viz import shrink

    x = fakes.FakeTensor([1.0])
    nodes = [fakes.FakeAccumulateGrad(x)]
    for i in range(1, 220):
        nodes.append(fakes.FakeNode("MulBackward0", [(nodes[i - 1], 0), (nodes[i // 2], 0)]))
    graph = viz.draw(nodes[-1], max_nodes=300)
    model = graph.model
    refs = [n for n in model.nodes if "#far" in n.key]
    assert refs and all(n.ghost and n.caption.startswith("same node as n") for n in refs)
    ranks = shrink.ranks(model.nodes, model.edges)
    crossings = sum(max(ranks[e.dst] - ranks[e.src] - 1, 0) for e in model.edges)
    assert crossings <= shrink.SPAN_BUDGET
    assert graph.svg().startswith("<?xml")
