"""viz sees forward mode (issue 26, item 5): `viz.animate(f, dual_x)` plays the tangent moving forward with the
values, one op per step in the order the program ran them, each step with its forward rule and its numbers; the
numbers are the tangents PyTorch's forward AD computes; `viz.draw` shows a dual tensor's tangent beside its value.
Run with minigrad and with PyTorch (the `lib` fixture)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import viz
from viz import probe
from viz.player import ESM, front_ends
from viz.tangent import substituted

X = np.array([0.5, -1.25, 2.0])
V = np.array([1.0, 0.5, -2.0])
W = np.array([1.5, -0.75, 0.25])


def program(x, w):
    """Mul (by a constant), sin, add, mul by a number, exp, sum: derived and linear rules."""
    h = x * w
    s = h.sin() + x
    return (s * 0.5).exp().sum()


def torch_tangents(torch):
    """Each intermediate's tangent in program order, computed by PyTorch's own forward AD."""
    fw = torch.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(torch.tensor(X), torch.tensor(V))
        w = torch.tensor(W)
        h = x * w
        sin = h.sin()
        s = sin + x
        half = s * 0.5
        e = half.exp()
        out = e.sum()
        return [fw.unpack_dual(t).tangent.numpy().copy() for t in (x, h, sin, s, half, e, out)]


def _player(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor(X), lib.tensor(V))
        return viz.animate(program, x, lib.tensor(W)), x


def test_the_steps_follow_the_program_and_carry_torchs_tangents(lib, torch, pgv):
    player, x = _player(lib)
    frames = player.frames
    assert [f.kind for f in frames] == ["start"] + ["tangent"] * 7 + ["done"]
    names = [probe.short_name(f.name) for f in frames[1:-1]]
    assert names == ["ViewBackward0", "MulBackward0", "SinBackward0", "AddBackward0", "MulBackward0", "ExpBackward0",
                     "SumBackward0"]
    expected = torch_tangents(torch)
    for f, want in zip(frames[1:-1], expected):
        sent = [s.grad for s in f.grads_out]
        assert sent, f.title
        for got in sent:  # along every edge out of the node: its tangent
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        text = viz.tangent._text(want)
        assert f.note.strip() == f"tangent {text}"
        assert [t for k, t in f.lines if k == "out"] == [f"result_t = {text} → " + ", ".join(
            dict.fromkeys(s.to_name for s in f.grads_out))]
    assert frames[-1].lines[0] == ("out", f"unpack_dual(output).tangent = {viz.tangent._text(expected[-1])}")
    assert x.grad is None and not x.requires_grad  # the user's tensors are left as they were


def test_each_step_shows_its_forward_rule_with_its_numbers(lib, pgv):
    player, _ = _player(lib)
    by_name = {}
    for f in player.frames[1:-1]:
        by_name.setdefault(probe.short_name(f.name), f)  # the first MulBackward0: x * w
    mul = dict((k, t) for k, t in by_name["MulBackward0"].lines if k == "rule" and "[" not in t)
    assert mul == {"rule": "MulBackward0: result_t = self_t * other + other_t * self"}
    calc = [t for k, t in by_name["MulBackward0"].lines if k == "rule" and "[" in t]
    assert calc == ["result_t = [1, 0.5, -2] * [1.5, -0.75, 0.25] + 0 * [0.5, -1.25, 2] = [1.5, -0.375, -0.5]"]
    lines = [t for _, t in by_name["MulBackward0"].lines]
    assert "other = [1.5, -0.75, 0.25], other_t = 0 (a constant: saved by the node)" in lines
    sin = [t for k, t in by_name["SinBackward0"].lines if k == "rule"]
    assert sin[0] == "SinBackward0: result_t = self_t * cos(self)"
    assert sin[1].startswith("result_t = [1.5, -0.375, -0.5] * cos([0.75, 0.9375, 0.5]) = ")
    assert [t for k, t in by_name["SumBackward0"].lines if k == "rule"][0] == \
        "SumBackward0: result_t = sum(self_t)   (linear: the same op on the tangents)"
    half = player.frames[5]  # s * 0.5: the number is the saved `other`
    assert [t for k, t in half.lines if k == "rule"][1].startswith("result_t = [")
    assert "make_dual" in by_name["ViewBackward0"].title


def test_duals_without_grad_and_tangents_given(lib, torch, pgv):
    """No input requires grad (no graph in PyTorch either): viz runs f again on copies that do. `tangents=` enters
    a dual level when none is active."""
    player = viz.animate(lambda a, b: (a * b).tanh(), lib.tensor(X), lib.tensor(W),
                         tangents=(lib.tensor(V), lib.tensor(-V)))
    fw = torch.autograd.forward_ad
    with fw.dual_level():
        a, b = fw.make_dual(torch.tensor(X), torch.tensor(V)), fw.make_dual(torch.tensor(W), torch.tensor(-V))
        want = fw.unpack_dual((a * b).tanh()).tangent.numpy()
    tanh = player.frames[-2]
    assert probe.short_name(tanh.name) == "TanhBackward0"
    np.testing.assert_allclose(tanh.grads_out[0].grad, want, rtol=1e-9, atol=1e-12)
    assert [probe.short_name(f.name) for f in player.frames[1:3]] == ["ViewBackward0"] * 2
    assert sys.getprofile() is None
    with pytest.raises(ValueError, match="no input carries a tangent"):
        viz.animate(lambda a: a.exp(), lib.tensor(X))


def test_animate_of_a_dual_output_reads_the_tangents_the_graph_keeps(lib, torch, pgv):
    """viz.animate(out) of a dual tensor under the level: the tangents of the tensors nodes saved (both libraries
    keep a saved tensor's tangent) and the output's; a tensor nobody saved is said to be gone."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor(X, requires_grad=True), lib.tensor(V))
        s = (x * x).sin()
        player = viz.animate((s * s).log())  # each output is saved by the next node, the last is the output
        gone = viz.animate((x * x).exp().sum())  # exp saves its result, not its input: x * x is gone
    assert player.kind == "TangentPlayer"
    tf = torch.autograd.forward_ad
    with tf.dual_level():
        tx = tf.make_dual(torch.tensor(X), torch.tensor(V))
        ts = (tx * tx).sin()
        want = [tf.unpack_dual(t).tangent.numpy() for t in (tx, tx * tx, ts, ts * ts, (ts * ts).log())]
    steps = player.frames[1:-1]
    assert [probe.short_name(f.name) for f in steps] == ["ViewBackward0", "MulBackward0", "SinBackward0",
                                                         "MulBackward0", "LogBackward0"]
    for f, w in zip(steps, want):
        np.testing.assert_allclose(f.grads_out[0].grad, w, rtol=1e-9, atol=1e-12)
    mul = gone.frames[2]
    assert probe.short_name(mul.name) == "MulBackward0" and mul.lines[0] == ("note", viz.tangent.GONE)
    assert mul.grads_out[0].label == "not kept"
    with fw.dual_level():
        plain = fw.make_dual(lib.tensor(X), lib.tensor(V))
        with pytest.raises(ValueError, match="viz.animate\\(f, x\\)"):
            viz.animate(plain.sin())


def test_draw_shows_a_dual_tensors_tangent_beside_its_value(lib, pgv):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        leaf = lib.tensor(X, requires_grad=True)
        y = (fw.make_dual(leaf, lib.tensor(V)) * 2).sum()
        source = viz.draw(y, params={"<x & y>": leaf}).source
        lone = viz.draw(fw.make_dual(lib.tensor(X), lib.tensor(V))).source
    assert "data 2.5</FONT>" in source and "tangent -1</FONT>" in source  # 2 * sum(X), 2 * sum(V)
    assert "&lt;x &amp; y&gt;" in source and "<x & y>" not in source
    assert "data [0.5, -1.25, 2]" in lone and "tangent [1, 0.5, -2]" in lone
    assert "tangent" not in viz.draw(y.detach() * leaf).source  # out of the level: no tangent


def test_front_end_legend_and_exports(mg, pgv, tmp_path):
    pytest.importorskip("anywidget")
    player, _ = _player(mg)
    assert player.data["legend"] == "tangent" and front_ends(player.data) == ("tangent",)
    assert "LEGEND.tangent" in player.widget._esm and "LEGEND.tangent" not in ESM and len(ESM) < 36_000
    page = player.save_html(tmp_path / "forward.html").read_text(encoding="utf-8")
    assert "LEGEND.tangent" in page and "result_t = " in page
    assert player.png() is not None and player.png().data.startswith(b"\x89PNG")
    gif = player.save_gif(tmp_path / "forward.gif", steps=[0, 2])
    assert gif.read_bytes()[:6] == b"GIF89a"
    json.dumps(player.data)  # the payload travels as JSON
    player.close()


def test_forward_rule_texts_come_from_the_declarations(mg):
    """Every elementwise rule's forward text is its backward text with each input's tangent for grad; every
    declared node with a forward rule has a text."""
    from minigrad.ops import node_forward_rule, node_rule
    from minigrad.ops.registry import NODES

    for name, cls in NODES.items():
        inputs, text = node_forward_rule(name)
        assert inputs == node_rule(name)[0]
        if getattr(cls, "_forward_kind", None) == "derived" and "grad_grad" not in cls._text:
            assert text.startswith("result_t = ") and "grad" not in text.replace("grad_output", ""), (name, text)
        elif getattr(cls, "_forward_kind", None) is not None:
            assert text.startswith("result_t = "), (name, text)
    assert node_forward_rule("MulBackward0")[1] == "result_t = self_t * other + other_t * self"
    assert node_forward_rule("DivBackward0")[1] == "result_t = (self_t - other_t * result) / other"  # PyTorch's
    assert node_forward_rule("MmBackward0")[1] == "result_t = mm(self_t, mat2) + mm(self, mat2_t)"
    assert node_forward_rule("SoftmaxBackward0")[1] == "result_t = result * (self_t - sum_keep(self_t * result, dim))"
    assert node_forward_rule("torch::autograd::ExpBackward0")[1] == \
        "result_t = self_t * result   (result = exp(self))"
    assert node_forward_rule("NoSuchBackward0") is None
    assert substituted("result_t = self_t * other", {"self_t": "[1]", "other": "[2]"}) == "[1] * [2]"
    assert substituted("result_t = Σ ∂result/∂self · self_t", {"self_t": "[1]"}) is None


def test_a_layer_without_tangents_in_its_weights(lib, torch, pgv):
    """nn.Linear then tanh and softmax: the weight's transpose is reached by no tangent (a 0 step, in PyTorch
    too, where F.linear's inner t() is not a function call viz sees); addmm's, tanh's (`result²` with its
    numbers) and softmax's rules; the output's tangent is PyTorch's."""
    rng = np.random.default_rng(3)
    weight, bias, xs, v = rng.normal(size=(2, 3)), rng.normal(size=2), rng.normal(size=(1, 3)), rng.normal(size=(1, 3))
    fw = lib.autograd.forward_ad
    layer = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(weight))
        layer.bias.copy_(lib.tensor(bias))
    with fw.dual_level():
        player = viz.animate(lambda x: lib.softmax(layer(x).tanh(), dim=-1), fw.make_dual(lib.tensor(xs),
                                                                                       lib.tensor(v)))
    tf = torch.autograd.forward_ad
    with tf.dual_level():
        out = torch.softmax(torch.nn.functional.linear(tf.make_dual(torch.tensor(xs), torch.tensor(v)),
                                                       torch.tensor(weight), torch.tensor(bias)).tanh(), dim=-1)
        want = tf.unpack_dual(out).tangent.numpy()
    by_name = {probe.short_name(f.name): f for f in player.frames[1:-1]}
    assert by_name["TBackward0"].title == "TBackward0 computes its value; its tangent is 0"
    assert [s.label for s in by_name["TBackward0"].grads_out] == ["0"]
    tanh = [t for k, t in by_name["TanhBackward0"].lines if k == "rule"]
    assert tanh[0] == "TanhBackward0: result_t = self_t * (1 - result²)" and "(1 - [[" in tanh[1], tanh
    assert "sum_keep(" in by_name["SoftmaxBackward0"].rule
    np.testing.assert_allclose(by_name["SoftmaxBackward0"].grads_out[0].grad, want, rtol=1e-9, atol=1e-12)


def test_an_in_place_op_shows_the_tangent_before_and_after(lib, torch, pgv):
    """y = x * 2 then y.mul_(x): the tensor's node changes with the write; the first mul step shows the tangent
    as it was then, the in-place one the tangent after (each against PyTorch's)."""
    def f(x):
        y = x * 2
        y.mul_(x)
        return y.sum()

    fw = lib.autograd.forward_ad
    with fw.dual_level():
        player = viz.animate(f, fw.make_dual(lib.tensor(X), lib.tensor(V)))
    tf = torch.autograd.forward_ad
    with tf.dual_level():
        y = tf.make_dual(torch.tensor(X), torch.tensor(V)) * 2
        before = tf.unpack_dual(y).tangent.numpy().copy()
        y.mul_(tf.make_dual(torch.tensor(X), torch.tensor(V)))
        after = tf.unpack_dual(y).tangent.numpy().copy()
    steps = player.frames[1:-1]
    assert [probe.short_name(f.name) for f in steps] == ["ViewBackward0", "MulBackward0", "MulBackward0",
                                                         "SumBackward0"]
    np.testing.assert_allclose(steps[1].grads_out[0].grad, before, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(steps[2].grads_out[0].grad, after, rtol=1e-9, atol=1e-12)
