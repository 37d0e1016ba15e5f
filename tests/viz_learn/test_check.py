"""viz.gradcheck_graph and viz.animate(check=True): a custom Function with a buggy backward is found,
with the input that is off and by how much; right ones pass; nothing of the user's changes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import viz
from viz.check import CHECK_FILL, MAX_ELEMENTS


def _functions(lib):
    F = lib.autograd.Function

    class GoodExp(F):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return g * r

    class BadExp(F):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            (r,) = ctx.saved_tensors
            return 2 * g * r  # the planted bug: a stray factor 2

    class ScaledMatmul(F):
        @staticmethod
        def forward(ctx, x, w, scale):
            ctx.save_for_backward(x, w)
            ctx.scale = scale
            return (x @ w) * scale

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.T * ctx.scale, x.T @ g, None  # w's gradient forgets the scale

    class WrongShape(F):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return (g * 3).sum()

    return GoodExp, BadExp, ScaledMatmul, WrongShape


def _leaf(lib, shape, seed, dtype=None):
    arr = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(arr, dtype=dtype or lib.float32, requires_grad=True)


def test_a_stray_factor_is_found_with_its_input_and_size(lib):
    _, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (2, 3), 0)
    loss = (BadExp.apply(x) * 0.5).sum()
    result = viz.gradcheck_graph(loss)
    assert not result.passed and [n.name for n in result.wrong] == ["BadExpBackward"]
    (bad,) = result.wrong[0].wrong_inputs
    assert bad.name == "x" and bad.position == 0
    assert bad.scale == pytest.approx(2.0, rel=1e-4)
    np.testing.assert_allclose(bad.analytic, 2 * bad.numeric, rtol=1e-4, atol=1e-6)
    assert bad.max_diff == pytest.approx(np.abs(bad.numeric).max(), rel=1e-4)
    assert "backward gives 2 × the right gradient" in repr(result)
    assert result.builtin == 2  # MulBackward0 and SumBackward0


def test_right_functions_pass(lib):
    GoodExp, _, _, _ = _functions(lib)
    x = _leaf(lib, (4,), 1)
    result = viz.gradcheck_graph(GoodExp.apply(x).sum())
    assert result.passed and [n.verdict for n in result.nodes] == ["ok"]
    assert all(i.verdict == "ok" and i.max_diff < 1e-6 for i in result.nodes[0].inputs)


def test_only_the_wrong_input_is_named(mg):
    _, _, ScaledMatmul, _ = _functions(mg)
    x, w = _leaf(mg, (3, 2), 2), _leaf(mg, (2, 2), 3)
    h = x.tanh()  # an intermediate input: minigrad's node.forward_args reaches it
    loss = ScaledMatmul.apply(h, w, 3.0).sum()
    (node,) = viz.gradcheck_graph(loss).nodes
    assert node.verdict == "wrong"
    assert {i.name: i.verdict for i in node.inputs} == {"x": "ok", "w": "wrong"}
    assert node.wrong_inputs[0].scale == pytest.approx(1 / 3, rel=1e-4)


def test_pytorch_function_on_intermediates_is_skipped_with_the_reason(torch):
    _, _, ScaledMatmul, _ = _functions(torch)
    x, w = _leaf(torch, (3, 2), 2), _leaf(torch, (2, 2), 3)
    (node,) = viz.gradcheck_graph(ScaledMatmul.apply(x.tanh(), w, 3.0).sum()).nodes
    assert node.verdict == "skipped" and "PyTorch keeps no record of its inputs" in node.reason


def test_wrong_shape_from_backward_is_wrong(lib):
    _, _, _, WrongShape = _functions(lib)
    x = _leaf(lib, (3,), 4)
    (node,) = viz.gradcheck_graph(WrongShape.apply(x).sum()).nodes
    assert node.verdict == "wrong"
    assert node.reason.startswith("backward failed") or math.isinf(node.inputs[0].max_diff)


def test_large_inputs_are_checked_along_directions(lib):
    _, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (MAX_ELEMENTS + 1,), 5, dtype=lib.float64)
    (node,) = viz.gradcheck_graph(BadExp.apply(x).sum()).nodes
    (bad,) = node.wrong_inputs
    assert bad.numeric is None and bad.scale == pytest.approx(2.0, rel=1e-4)


def test_nothing_of_the_users_changes(lib):
    _, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (3,), 6)
    loss = BadExp.apply(x).sum()
    viz.gradcheck_graph(loss)
    assert x.grad is None and x.requires_grad
    loss.backward()  # the graph was not used
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()), rtol=1e-6)


def test_picture_marks_the_wrong_node_and_escapes_names(lib, pgv):
    GoodExp, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (3,), 7)
    loss = (BadExp.apply(x) + GoodExp.apply(x)).sum()
    result = viz.gradcheck_graph(loss, params={"<x&>": x})
    dot = result.graph.source
    assert CHECK_FILL["wrong"] in dot and CHECK_FILL["ok"] in dot
    assert "&lt;x&amp;&gt;: off by" in dot and "<x&>" not in dot
    assert result.wrong[0].node in dot and result.graph.svg() is not None


def test_animate_check_puts_the_verdict_in_the_frames(lib, pgv):
    GoodExp, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (3,), 8)
    loss = (GoodExp.apply(x) * BadExp.apply(x)).sum()  # both on a leaf: PyTorch reaches leaves only
    frames = viz.trace_backward(loss, check=True)
    checked = {f.name: f.check for f in frames if f.check is not None}
    assert set(checked) == {"GoodExpBackward", "BadExpBackward"}
    assert checked["GoodExpBackward"].verdict == "ok" and checked["BadExpBackward"].verdict == "wrong"
    bad_frame = next(f for f in frames if f.name == "BadExpBackward")
    assert ("check", checked["BadExpBackward"].text) in bad_frame.lines
    assert np.isfinite(x.grad.numpy()).all()  # the real backward ran


def test_animate_check_marks_the_player_picture(lib, pgv):
    _, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (3,), 9)
    player = viz.animate(BadExp.apply(x).sum(), check=True)
    assert CHECK_FILL["wrong"] in player.scene.dot
    (step,) = [f for f in player.frames if f.check is not None]
    assert step.check.verdict == "wrong" and step.check.node == step.node
    payload_lines = [line for s in player.scene.payload["steps"] for line in s["lines"]]
    assert ["check", step.check.text] in payload_lines


def test_without_check_nothing_is_checked(lib):
    _, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (3,), 10)
    frames = viz.trace_backward(BadExp.apply(x).sum())
    assert all(f.check is None for f in frames)
    assert not any(kind == "check" for f in frames for kind, _ in f.lines)


def test_integer_inputs_keep_their_dtype(lib):
    F = lib.autograd.Function

    class Pick(F):
        @staticmethod
        def forward(ctx, x, index):
            ctx.save_for_backward(index)
            ctx.shape = x.shape
            return x[index] * 3

        @staticmethod
        def backward(ctx, g):
            (index,) = ctx.saved_tensors
            out = lib.zeros(ctx.shape, dtype=g.dtype)
            out[index] = g * 2  # should be * 3
            return out, None

    x = _leaf(lib, (5,), 11)
    index = lib.tensor([0, 3])
    loss = Pick.apply(x, index).sum()
    if lib.__name__ == "torch":  # PyTorch reaches only leaves that require grad: index is neither
        assert viz.gradcheck_graph(loss).nodes[0].verdict == "skipped"
        return
    (node,) = viz.gradcheck_graph(loss).nodes
    (bad,) = node.wrong_inputs
    assert bad.name == "x" and bad.scale == pytest.approx(2 / 3, rel=1e-4)


def test_opening_a_folded_module_keeps_the_checks_and_the_comparison(mg, pgv):
    """Opening a folded module in the player makes its steps again: the verdicts of check=True and of
    compare= go with them (they were lost, as the source lines were; PyTorch's nodes carry no module)."""
    _, BadExp, _, _ = _functions(mg)
    nn = mg.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return BadExp.apply(self.fc(x))

    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), Block()).double()

    class Widget:  # what Player._on_msg sets on the page's widget
        svg = svg_alt = ""
        data: dict = {}

    def opened(player):
        player._on_msg(Widget(), {"type": "expand", "scope": "1"}, [])
        return player

    x = mg.randn(1, 2, dtype=mg.float64)
    checked = opened(viz.animate(model(x).sum(), params=model, fold="module", check=True))
    (bad,) = [f for f in checked.frames if f.check is not None]
    assert bad.name == "BadExpBackward" and bad.check.verdict == "wrong"
    assert ("check", bad.check.text) in bad.lines and CHECK_FILL["wrong"] in checked.scene.dot

    loss = model(x).sum()
    params = dict(model.named_parameters())
    cmp = viz.compare(loss, mine={"0.weight": np.zeros((2, 2))}, params=params)
    compared = opened(viz.animate(model(x).sum(), params=params, fold="module", compare=cmp))
    said = [text for f in compared.frames for kind, text in f.lines if kind == "check"]
    assert said == ["your gradient: " + e.text for e in cmp.entries], said


def test_the_verdict_says_which_output_gradient_its_difference_was_measured_on(lib):
    """animate(check=True) multiplies by the gradient the node received, gradcheck_graph by a random one: the
    same wrong input shows two different max |Δ| (lesson 12: 6.7e-02 and 3.8e-01), so each verdict says which."""
    _, BadExp, _, _ = _functions(lib)
    x = _leaf(lib, (3,), 8)
    loss = BadExp.apply(x).sum()
    report = viz.gradcheck_graph(loss, draw=False)
    frames = viz.trace_backward(BadExp.apply(x).sum(), check=True)
    (played,) = [f.check for f in frames if f.check is not None]
    assert report.wrong[0].text.endswith("[on a random output gradient]")
    assert played.text.endswith("[on the gradient it received]")
