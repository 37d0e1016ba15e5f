"""Folding big models by module: one box per module, '×N' for repeated blocks, expand=[...]."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from viz.animate import trace_backward
from viz.trace import record_backward


def _blocks(nn, T):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x)) + x

    T.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), *[Block() for _ in range(4)], nn.Linear(8, 3))


def titles(graph):
    return [n.title for n in graph.model.nodes]


def test_minigrad_model_folds_by_module_with_repeats(mg, pgv):
    model = _blocks(mg.nn, mg)
    loss = model(mg.randn(5, 4)).sum()
    full = viz.draw(loss, params=model)
    folded = viz.draw(loss, params=model, fold="module")
    assert titles(folded) == ["output", "SumBackward0", "5 · Linear(8→3)", "1–4 · Block ×4", "0 · Linear(4→8)"]
    box = folded.model.nodes[3]
    assert box.role == "module" and box.rows[0] == ("note", "24 nodes in 4 blocks")
    # one edge between consecutive boxes, carrying the activation's shape and the input it feeds
    edges = {(e.src, e.dst): e for e in folded.model.edges}
    assert edges[("module:5", "module:1..4")].shape == (5, 8)
    assert edges[("module:5", "module:1..4")].name == "mat1"
    assert len(full.model.nodes) > 30 and folded.svg() is not None
    assert "1–4 · Block ×4" in folded.source and "5 · Linear(8→3)" in folded.source


def test_expand_opens_a_module_and_its_siblings_stay_folded(mg, pgv):
    model = _blocks(mg.nn, mg)
    loss = model(mg.randn(5, 4)).sum()
    opened = viz.draw(loss, params=model, fold="module", expand=["1"])
    assert "2–4 · Block ×3" in titles(opened)
    assert {"1.fc · Linear(8→8)", "1.act · ReLU", "AddBackward0"} <= set(titles(opened))
    assert 'label=<1 · Block>' in opened.source  # the open module is a cluster named after what it is
    everything = viz.draw(loss, params=model, fold="module", expand=["1", "1.fc", "1.act"])
    assert "AddmmBackward0" in titles(everything) and "1.fc · Linear(8→8)" not in titles(everything)
    with pytest.raises(ValueError, match="fold"):
        viz.draw(loss, fold="layer")


def test_without_module_types_boxes_are_named_by_scope(mg, pgv):
    model = _blocks(mg.nn, mg)
    loss = model(mg.randn(5, 4)).sum()
    folded = viz.draw(loss, params=dict(model.named_parameters()), fold="module")
    assert titles(folded)[2:] == ["5", "1–4 ×4", "0"]
    leaves = viz.draw(loss, params=dict(model.named_parameters()))
    assert {"0.weight", "5.bias"} <= set(titles(leaves))  # parameters fold into their module's box


def test_folded_player_maps_each_step_onto_its_box(mg, pgv):
    model = _blocks(mg.nn, mg)
    x = mg.randn(5, 4)
    plain = model(x).sum()
    plain.backward()
    expected = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    model.zero_grad()
    recording = record_backward(model(x).sum(), params=model, fold="module")
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), expected[name], rtol=1e-6)
    ids = {n.id: n.title for n in recording.graph.model.nodes}
    ran = [ids[f.node] for f in recording.frames if f.kind in ("run", "accumulate")]
    assert ran.count("1–4 · Block ×4") == 24 and ran.count("5 · Linear(8→3)") == 4
    opened = recording.redraw.folded(("1",))
    assert len(opened.frames) == len(recording.frames)  # the same run, told on another picture
    ids = {n.id: n.title for n in opened.graph.model.nodes}
    assert [ids[f.node] for f in opened.frames if f.kind == "run"].count("1.fc · Linear(8→8)") == 2
    frames = trace_backward(model(x).sum(), params=model, fold="module", expand=["1"])
    assert len(frames) == len(recording.frames)


def test_tag_modules_folds_a_pytorch_transformer(torch, pgv):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                             batch_first=True)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16),
                                torch.nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False),
                                torch.nn.Linear(16, 2))
    with viz.tag_modules(model):
        loss = model(torch.randn(2, 3, 8)).sum()
    tagged = [fn for fn in _nodes(loss) if "module" in fn.metadata]
    assert tagged and {fn.metadata["module"] for fn in tagged} >= {"0", "2"}
    assert any(fn.metadata["module"].startswith("1.layers.2.") for fn in tagged)
    assert {fn.metadata["module_type"] for fn in tagged if fn.metadata["module"] == "0"} == {"Linear(8→16)"}
    folded = viz.draw(loss, fold="module")
    assert titles(folded)[2:] == ["2 · Linear(16→2)", "1", "0 · Linear(8→16)"]
    layers = viz.draw(loss, params=model, fold="module", expand=["1", "1.layers"])
    assert "1.layers.0–2 · TransformerEncoderLayer ×3" in titles(layers)
    # removed: the next forward pass is not tagged
    again = model(torch.randn(2, 3, 8)).sum()
    assert not any("module" in fn.metadata for fn in _nodes(again))


def test_tag_modules_keeps_a_tag_you_set(torch):
    lin = torch.nn.Linear(2, 2)
    mine = {}

    def keep(mod, args, out):
        out.grad_fn.metadata["module"] = "mine"
        mine["fn"] = out.grad_fn

    handle = lin.register_forward_hook(keep)
    with viz.tag_modules(torch.nn.Sequential(lin)):
        lin(torch.ones(1, 2))
    handle.remove()
    assert mine["fn"].metadata["module"] == "mine"


def _nodes(t):
    seen, stack, out = set(), [t.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append(fn)
        stack.extend(c for c, _ in fn.next_functions)
    return out
