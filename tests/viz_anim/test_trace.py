"""The recorded backward pass (viz.trace via viz.animate.trace_backward) on minigrad graphs.

Each test builds the same computation twice: one copy is traced, the other runs a plain
``backward()`` with ``retain_grad()`` on every intermediate, and the frames are compared
with what that engine produced.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from viz.animate import trace_backward
from viz.trace import state_at
from viz.walk import walk


def run_frames(frames):
    return [f for f in frames if f.kind in ("run", "accumulate")]


def node_grads(built):
    """walk index -> the gradient the engine gave that node's output (plain backward)."""
    w = walk((built.loss,))
    index = {id(raw.fn): raw.index for raw in w.nodes}
    out = {index[id(built.loss.grad_fn)]: np.ones(())}
    for t in built.inter.values():
        out[index[id(t.grad_fn)]] = t.grad.numpy()
    return out


@pytest.mark.parametrize("name", ["small", "mlp"])
def test_order_is_the_engines_and_topological(mg, graphs, name, pgv):
    built = graphs[name](mg)
    w = walk((built.loss,))
    seen = []
    handles = [raw.fn.register_prehook(lambda g, i=raw.index: seen.append(i)) for raw in w.nodes]
    frames = trace_backward(built.loss, params=built.leaves)
    for h in handles:
        h.remove()
    order = [f.index for f in run_frames(frames)]
    assert order == seen  # the frames are the engine's own run order (our prehooks saw it too)
    assert sorted(order) == list(range(len(w.nodes)))  # every node ran once
    position = {i: k for k, i in enumerate(order)}
    for raw in w.nodes:
        for child, _ in raw.edges:
            if child is not None:
                assert position[raw.index] < position[child], "a node ran before a node feeding it"
    assert frames[0].kind == "start" and frames[-1].kind == "done"
    assert [f.step for f in frames] == list(range(len(frames)))


@pytest.mark.parametrize("name", ["small", "mlp"])
def test_every_gradient_equals_a_plain_backward(mg, graphs, name, pgv):
    traced = graphs[name](mg)
    plain = graphs[name](mg, retain=True)
    plain.loss.backward()
    expected = node_grads(plain)
    frames = trace_backward(traced.loss, params=traced.leaves)
    checked = 0
    for f in run_frames(frames):
        (arrival,) = f.grads_in
        if f.kind == "run":
            np.testing.assert_allclose(arrival.consumed, expected[f.index], rtol=1e-12, atol=0)
            checked += 1
        # what arrived is the sum of what was sent to this node
        sent = [s.grad for g in frames for s in g.grads_out if s.to == f.node]
        np.testing.assert_allclose(sum(sent), arrival.consumed, rtol=1e-12, atol=0)
        np.testing.assert_allclose(arrival.total, arrival.consumed, rtol=1e-12, atol=0)
    assert checked == len(traced.inter) + 1
    for leaf, t in traced.leaves.items():
        np.testing.assert_array_equal(t.grad.numpy(), plain.leaves[leaf].grad.numpy())
        (acc,) = [f for f in frames if f.kind == "accumulate" and f.name == f"AccumulateGrad ({leaf})"]
        assert acc.grad_before is None
        np.testing.assert_array_equal(acc.grad_after, t.grad.numpy())


def test_sums_where_gradients_meet(mg, graphs, pgv):
    built = graphs["small"](mg)
    frames = trace_backward(built.loss, params=built.leaves)
    acc_a = next(f for f in frames if f.name == "AccumulateGrad (a)")
    (arrival,) = acc_a.grads_in
    assert len(arrival.parts) == 2  # a is used twice: c = a * b and d = c * a
    np.testing.assert_array_equal(arrival.parts[0][1] + arrival.parts[1][1], arrival.total)
    assert "2 gradients met here and were summed" in acc_a.text
    assert "[9, 20]" in acc_a.text


def test_accumulation_across_two_backward_calls(mg, graphs, pgv):
    built = graphs["small"](mg)
    first = trace_backward(built.loss, params=built.leaves, retain_graph=True)
    once = {k: t.grad.numpy().copy() for k, t in built.leaves.items()}
    second = trace_backward(built.loss, params=built.leaves, retain_graph=True)
    for frames, factor in ((first, 1), (second, 2)):
        for leaf in built.leaves:
            (acc,) = [f for f in frames if f.name == f"AccumulateGrad ({leaf})"]
            np.testing.assert_array_equal(acc.grad_after, once[leaf] * factor)
            if factor == 1:
                assert acc.grad_before is None
            else:
                np.testing.assert_array_equal(acc.grad_before, once[leaf])
                assert "+=" in acc.text and "across backward calls" in acc.text
    np.testing.assert_array_equal(built.leaves["a"].grad.numpy(), once["a"] * 2)


def test_frees_are_reported_and_real(mg, graphs, pgv):
    built = graphs["small"](mg)
    mul = built.inter["c"].grad_fn
    frames = trace_backward(built.loss, params=built.leaves)
    freed = {f.index: f.freed for f in frames if f.freed}
    w = walk((built.loss,))
    mul_index = next(raw.index for raw in w.nodes if raw.fn is mul)
    assert sorted(freed[mul_index]) == ["other", "self"]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        mul._saved_self
    assert any("freed" in text for kind, text in frames[-1].lines if kind == "free")
    assert state_at(frames, len(frames) - 1).freed >= set(f.node for f in frames if f.freed)


def test_retain_graph_keeps_saved_values(mg, graphs, pgv):
    built = graphs["small"](mg)
    mul = built.inter["c"].grad_fn
    frames = trace_backward(built.loss, params=built.leaves, retain_graph=True)
    assert not any(f.freed for f in frames)
    np.testing.assert_array_equal(mul._saved_self.detach().numpy(), built.leaves["a"].detach().numpy())


def test_user_hooks_fire_and_their_replacements_take_effect(mg, pgv):
    def build():
        a = mg.tensor([1.0, 2.0], requires_grad=True)
        b = mg.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        loss = (c * 2).sum()
        calls = []
        c.register_hook(lambda g: (calls.append("tensor c"), g * 10)[1])
        c.grad_fn.register_prehook(lambda grads: (calls.append("pre mul"), None)[1])
        c.grad_fn.register_hook(lambda gi, go: (calls.append("hook mul"), (gi[0], gi[1] + 1))[1])
        a.register_hook(lambda g: (calls.append("tensor a"), None)[1])
        a.register_post_accumulate_grad_hook(lambda t: calls.append("post a"))
        return a, b, c, loss, calls

    a1, b1, c1, loss1, calls1 = build()
    loss1.backward()
    a2, b2, c2, loss2, calls2 = build()
    frames = trace_backward(loss2, params={"a": a2, "b": b2})
    assert calls2 == calls1 == ["tensor c", "pre mul", "hook mul", "tensor a", "post a"]
    np.testing.assert_array_equal(a2.grad.numpy(), a1.grad.numpy())
    np.testing.assert_array_equal(b2.grad.numpy(), b1.grad.numpy())
    np.testing.assert_array_equal(b2.grad.numpy(), [21.0, 41.0])  # tensor hook ×10, then the node hook's +1
    mul = next(f for f in frames if f.index is not None and f.name == "MulBackward0" and f.hooks)
    kinds = {h.kind: h for h in mul.hooks}
    assert kinds["tensor hook"].replaced and kinds["tensor hook"].count == 1
    np.testing.assert_array_equal(kinds["tensor hook"].before, [2.0, 2.0])
    np.testing.assert_array_equal(kinds["tensor hook"].after, [20.0, 20.0])
    assert not kinds["prehook"].replaced and "returned None" in kinds["prehook"].text
    assert kinds["hook"].replaced
    np.testing.assert_array_equal(kinds["hook"].before[1], [20.0, 40.0])
    np.testing.assert_array_equal(kinds["hook"].after[1], [21.0, 41.0])
    assert "replacing" in mul.text
    acc_a = next(f for f in frames if f.name == "AccumulateGrad (a)")
    assert {h.kind for h in acc_a.hooks} == {"tensor hook", "post-accumulate hook"}


def hook_counts(built):
    out = []
    w = walk((built.loss,))  # keep the Walk: it releases its nodes when it goes
    for raw in w.nodes:
        out.append((len(raw.fn.hooks), len(raw.fn.prehooks)))
        if raw.leaf is not None:
            out.append((len(raw.leaf.hooks), len(raw.leaf.post_accumulate_hooks)))
        elif raw.fn.output_tensor is not None:
            out.append((len(raw.fn.output_tensor.hooks), 0))
    return out


def test_recorder_hooks_are_removed(mg, graphs, pgv):
    built = graphs["mlp"](mg)
    built.inter["u"].register_hook(lambda g: None)
    before = hook_counts(built)
    trace_backward(built.loss, params=built.leaves, retain_graph=True)
    assert hook_counts(built) == before


def test_recorder_hooks_are_removed_on_error(mg, graphs, pgv):
    built = graphs["small"](mg)
    built.loss.backward()  # frees the saved values
    before = hook_counts(built)
    with pytest.raises(RuntimeError, match="second time"):
        trace_backward(built.loss, params=built.leaves)
    assert hook_counts(built) == before


def test_a_hook_that_raises_removes_ours_too(mg, graphs, pgv):
    built = graphs["small"](mg)

    def boom(grad):
        raise ValueError("boom")

    built.inter["c"].register_hook(boom)
    before = hook_counts(built)
    with pytest.raises(ValueError, match="boom"):
        trace_backward(built.loss, params=built.leaves)
    assert hook_counts(built) == before


def test_inputs_runs_only_what_leads_to_them(mg, graphs, pgv):
    traced, plain = graphs["mlp"](mg), graphs["mlp"](mg)
    plain.loss.backward(inputs=[plain.leaves["b"]])
    frames = trace_backward(traced.loss, params=traced.leaves, inputs=[traced.leaves["b"]])
    accs = [f.name for f in frames if f.kind == "accumulate"]
    assert accs == ["AccumulateGrad (b)"]
    assert traced.leaves["w"].grad is None and traced.leaves["s"].grad is None
    np.testing.assert_array_equal(traced.leaves["b"].grad.numpy(), plain.leaves["b"].grad.numpy())


def test_explicit_gradient_and_create_graph(mg, pgv):
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_graph's reference-cycle warning (once per process, as PyTorch)
        frames = trace_backward(y, params={"x": x}, gradient=mg.tensor([1.0, 0.5, 2.0]), create_graph=True)
    np.testing.assert_array_equal(x.grad.detach().numpy(), [2.0, 2.0, 12.0])
    assert x.grad.grad_fn is not None  # create_graph: the gradient is itself differentiable
    assert "The gradient you passed" in frames[0].text
    np.testing.assert_array_equal(frames[0].grads_out[0].grad, [1.0, 0.5, 2.0])
    acc = next(f for f in frames if f.kind == "accumulate")
    np.testing.assert_array_equal(acc.grad_after, [2.0, 2.0, 12.0])
    assert not any(f.freed for f in frames)  # create_graph implies retain_graph


def test_broadcast_gradients_are_summed_to_the_input_shape(mg, graphs, pgv):
    built = graphs["mlp"](mg)
    frames = trace_backward(built.loss, params=built.leaves)
    into_b = [s for f in frames for s in f.grads_out if s.to_name == "AccumulateGrad (b)"]
    assert len(into_b) == 1 and into_b[0].grad.shape == (2,)
    np.testing.assert_allclose(into_b[0].grad, built.leaves["b"].grad.numpy(), rtol=1e-12)


def test_frames_carry_the_drawn_ids(mg, graphs, pgv):
    import viz

    built = graphs["small"](mg)
    drawn = viz.draw(built.loss, params=built.leaves, show_saved=True)
    frames = trace_backward(built.loss, params=built.leaves)
    ids = {n.id: n for n in drawn.model.nodes}
    for f in run_frames(frames):
        node = ids[f.node]
        assert node.title == f.name or f.name.endswith(f"({node.title})")
        for s in f.grads_out:
            edge = drawn.model.edges[s.edge]
            assert ids[s.to].key == edge.dst and f.node == ids_of(drawn, edge.src)


def ids_of(drawn, key):
    return next(n.id for n in drawn.model.nodes if n.key == key)


def test_side_panel_words(mg, graphs, pgv):
    built = graphs["small"](mg)
    frames = trace_backward(built.loss, params=built.leaves)
    mul = next(f for f in frames if f.name == "MulBackward0")
    assert mul.rule == "MulBackward0: grad_self = grad * other, grad_other = grad * self"
    assert ("rule", mul.rule) in mul.lines
    assert any(text.startswith("grad_self = ") for kind, text in mul.lines if kind == "out")
    assert "seed" in frames[0].text
    assert frames[-1].text.splitlines()[0] == "Backward done"


def test_state_at_follows_the_run(mg, graphs, pgv):
    built = graphs["small"](mg)
    frames = trace_backward(built.loss, params=built.leaves)
    first = state_at(frames, 0)
    assert first.nodes[frames[0].node] == "current"
    assert first.nodes[frames[1].node] == "waiting"  # the seed has arrived there
    for k in range(1, len(frames) - 1):
        st = state_at(frames, k)
        assert st.nodes[frames[k].node] == "current"
        assert all(st.nodes[frames[j].node] == "done" for j in range(k))
        assert {s.edge for s in frames[k].grads_out} == st.current_edges
    last = state_at(frames, len(frames) - 1)
    assert set(last.nodes.values()) == {"done"}
    assert last.notes  # .grad rows of the leaves


def test_leaf_used_many_times_is_drawn_as_ghosts(mg, pgv):
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    for k in range(5):
        y = y + x * float(k)
    loss = y.sum()
    frames = trace_backward(loss, params={"x": x})
    acc = next(f for f in frames if f.kind == "accumulate")
    assert len(acc.nodes) == 6  # one dashed copy per use
    sends = [s for f in frames for s in f.grads_out if s.to_name == "AccumulateGrad (x)"]
    assert len(sends) == 6 and all(s.edge is not None for s in sends)
    np.testing.assert_array_equal(acc.grad_after, x.grad.numpy())


def test_collapsed_graphs_still_trace(mg, pgv):
    x = mg.tensor([0.5, -0.5], requires_grad=True)
    y = x
    for _ in range(40):
        y = (y * 1.01).tanh()
    loss = y.sum()
    frames = trace_backward(loss, params={"x": x}, max_nodes=20)
    assert len(run_frames(frames)) == 82
    assert any(f.node and f.node.startswith("n") for f in run_frames(frames))
    np.testing.assert_array_equal(frames[-2].grad_after, x.grad.numpy())


def test_nodes_with_several_output_slots(mg, pgv):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    first, second = x.unbind(0)
    loss = (first * 2).sum() + (second * 3).sum()
    frames = trace_backward(loss, params={"x": x})
    unbind = next(f for f in frames if f.name == "UnbindBackward0")
    assert [a.slot for a in unbind.grads_in] == [0, 1]
    np.testing.assert_array_equal(unbind.grads_in[0].consumed, [2.0, 2.0])
    np.testing.assert_array_equal(unbind.grads_in[1].consumed, [3.0, 3.0])
    assert "on slot 1" in unbind.text
    np.testing.assert_array_equal(x.grad.numpy(), [[2.0, 2.0], [3.0, 3.0]])


def test_backward_from_a_leaf(mg, pgv):
    x = mg.tensor(2.0, requires_grad=True)
    frames = trace_backward(x, params={"x": x})
    assert [f.kind for f in frames] == ["start", "done"]
    assert x.grad.item() == 1.0  # the engine still ran: a leaf's gradient is the seed


def test_not_a_tensor(pgv):
    with pytest.raises(TypeError, match="expected a tensor"):
        trace_backward([1.0, 2.0])
