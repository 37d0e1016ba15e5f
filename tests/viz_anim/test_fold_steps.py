"""A folded model plays one module at a time: a folded module is one step (what entered it, the .grads it
filled, named, and what left it), opening it plays its inside, and a folded Transformer plays in a few steps
however deep its encoder is."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from viz.trace import frame_note, state_at


def _mlp(mg):
    nn = mg.nn
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3)).double()
    x = mg.randn(8, 4, dtype=mg.float64)
    target = mg.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    return model, lambda: nn.CrossEntropyLoss()(model(x), target)


def _encoder(torch, layers: int):
    """The issue's folded model: Linear(16, 32), a TransformerEncoder, Linear(32, 4), a mean-of-squares loss."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                             batch_first=True)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32),
                                torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False),
                                torch.nn.Linear(32, 4))
    with viz.tag_modules(model):
        loss = (model(torch.randn(2, 5, 16)) ** 2).mean()
    return loss, model


def test_a_folded_module_is_one_step_that_names_its_grads(mg, pgv):
    model, loss = _mlp(mg)
    player = viz.animate(loss(), params=model, fold="module")
    steps = [f for f in player.frames if f.kind == "module"]
    assert [f.name for f in steps] == ["4 · Linear(16→3)", "3 · ReLU", "2 · Linear(16→16)", "1 · ReLU",
                                       "0 · Linear(4→16)"], [f.name for f in steps]
    last = steps[0]
    # what entered (from the loss's node), the .grads it filled (named, with the values), what left
    assert any(kind == "in" and "from " in text for kind, text in last.lines), last.lines
    filled = [text for kind, text in last.lines if kind == "acc"]
    assert len(filled) == 2 and any(t.startswith("4.weight.grad") for t in filled) and \
        any(t.startswith("4.bias.grad") for t in filled), filled
    out = [text for kind, text in last.lines if kind == "out"]
    assert out and all("→ " in t for t in out) and last.grads_out
    assert last.note == "bias.grad, weight.grad" and frame_note(last) == last.note
    # the box's note in the picture says whose .grads they are, and the picture made room for it
    step = player.data["steps"][last.step]
    assert step["notes"] == [[last.node, "bias.grad, weight.grad"]]
    assert player.data["layout"]["nodeTexts"][last.node] == "bias.grad, weight.grad"
    assert state_at(player.frames, last.step).notes[last.node] == "bias.grad, weight.grad"
    assert "bias.grad, weight.grad" in player.scene.static_svg(last.step)  # the still pictures say it too
    assert "bias.grad, weight.grad" not in player.scene.static_svg(last.step - 1)
    # the node steps are kept inside: the linear layer's rule ran, its two leaves accumulated
    kinds = sorted(f.kind for f in last.inside)
    assert kinds.count("accumulate") == 2 and "run" in kinds
    # the whole pass: start, the loss's nodes, one step per module, done; steps numbered in order
    assert [f.step for f in player.frames] == list(range(len(player.frames)))
    assert len(player.frames) == 2 + 5 + sum(f.kind == "run" for f in player.frames)
    assert player.frames[-1].kind == "done"
    # the same .grads as an unfolded run
    grads = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    model.zero_grad()
    loss().backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(grads[name], p.grad.numpy(), rtol=1e-12)
    player.close()


def test_opening_a_module_plays_its_inside(mg, pgv):
    model, loss = _mlp(mg)
    player = viz.animate(loss(), params=model, fold="module")

    class Widget:  # what Player._on_msg sets on the page's widget
        svg = svg_alt = ""
        data: dict = {}

    folded = len(player.frames)
    widget = Widget()
    player._on_msg(widget, {"type": "expand", "scope": "4"}, [])
    names = [f.name for f in player.frames]
    assert "4 · Linear(16→3)" not in names and any(n.startswith("AccumulateGrad (4.weight)") for n in names), names
    assert "2 · Linear(16→16)" in names  # the other modules stay one step each
    assert len(player.frames) > folded and len(widget.data["steps"]) == len(player.frames)


@pytest.mark.parametrize("layers", [2, 6])
def test_the_folded_transformer_plays_in_a_few_steps(torch, pgv, layers):
    loss, model = _encoder(torch, layers)
    player = viz.animate(loss, params=model, fold="module")
    assert player.num_steps <= 30, [f.title for f in player.frames]
    modules = [f for f in player.frames if f.kind == "module"]
    assert [f.name.split(" · ")[0] for f in modules] == ["2", "1", "0"], [f.name for f in modules]
    encoder = modules[1]
    assert sum(len(f.inside) for f in modules) > 50 * layers // 2  # the nodes inside are all told, in the box
    assert encoder.note == f"{12 * layers} .grads filled"  # 12 parameters per layer
    # its panel names the first .grads it filled and counts the others; what entered and left is named
    filled = [text for kind, text in encoder.lines if kind == "acc"]
    assert len(filled) == 4 and filled[-1].startswith(f"... and {12 * layers - 3} more .grads filled"), filled
    assert filled[0].startswith(f"1.layers.{layers - 1}.")
    assert [kind for kind, _ in encoder.lines].count("in") == 1 and "in 2 · Linear(32→4)" in encoder.lines[0][1]
    assert all(" in 0 · Linear(16→32)" in text for kind, text in encoder.lines if kind == "out")
    player.close()


def test_the_quiz_asks_about_module_steps(mg, pgv):
    model, loss = _mlp(mg)
    player = viz.animate(loss(), params=model, fold="module", quiz=True, quiz_kinds=("next", "grad"))
    modules = {f.step: f for f in player.frames if f.kind == "module"}
    asked = [q for q in player.quiz.questions if q.step in modules]
    assert {q.kind for q in asked} == {"next", "grad"}, [(q.kind, q.prompt) for q in player.quiz.questions]
    for q in asked:
        frame = modules[q.step]
        if q.kind == "next":  # the box is the answer, by its id or its title
            assert q.expected == frame.node and frame.name in q.names
        else:  # what leaves the module, sent to a node named with the module it is in
            assert q.prompt.startswith(f"{frame.name} runs.") and " in " in q.prompt.split(" to ", 1)[1], q.prompt
            sent = frame.grads_out[0].grad
            assert q.expected == sent.shape if isinstance(q.expected, tuple) else np.allclose(q.expected, sent)
    player.close()
