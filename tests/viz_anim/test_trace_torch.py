"""The recorder on real PyTorch graphs: only the public hooks, the same frames."""

from __future__ import annotations

import numpy as np
import pytest

from viz.animate import animate, trace_backward
from viz.walk import walk


def _copy(torch, graphs, name, retain=False):
    return graphs[name](torch, retain=retain)


@pytest.mark.parametrize("name", ["small", "mlp"])
def test_torch_frames_equal_torchs_gradients(torch, graphs, name, pgv):
    traced = graphs[name](torch)
    plain = graphs[name](torch, retain=True)
    plain.loss.backward()
    w_plain = walk((plain.loss,))
    index = {id(raw.fn): raw.index for raw in w_plain.nodes}
    expected = {index[id(t.grad_fn)]: t.grad.numpy() for t in plain.inter.values()}
    frames = trace_backward(traced.loss, params=traced.leaves)
    runs = [f for f in frames if f.kind in ("run", "accumulate")]
    assert len(runs) == len(w_plain.nodes)
    position = {f.index: k for k, f in enumerate(runs)}
    for raw in w_plain.nodes:
        for child, _ in raw.edges:
            if child is not None:
                assert position[raw.index] < position[child]
    for f in runs:
        if f.index in expected:
            np.testing.assert_allclose(f.grads_in[0].consumed, expected[f.index], rtol=1e-12, atol=0)
    for leaf, t in traced.leaves.items():
        np.testing.assert_allclose(t.grad.numpy(), plain.leaves[leaf].grad.numpy(), rtol=1e-12, atol=0)
        (acc,) = [f for f in frames if f.name == f"AccumulateGrad ({leaf})"]
        np.testing.assert_allclose(acc.grad_after, t.grad.numpy(), rtol=1e-12, atol=0)


def test_torch_frees_and_accumulation(torch, graphs, pgv):
    built = graphs["small"](torch)
    first = trace_backward(built.loss, params=built.leaves, retain_graph=True)
    assert not any(f.freed for f in first)
    second = trace_backward(built.loss, params=built.leaves)
    acc = next(f for f in second if f.name == "AccumulateGrad (a)")
    np.testing.assert_array_equal(acc.grad_after, acc.grad_before * 2)
    freed = [f for f in second if f.freed]
    assert freed and all(sorted(f.freed) == ["other", "self"] for f in freed)
    with pytest.raises(RuntimeError, match="second time"):
        built.inter["c"].grad_fn._saved_self


def test_torch_user_hooks_still_work_and_ours_are_removed(torch, pgv):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    c = a * 3
    loss = c.sum()
    calls = []
    a.register_hook(lambda g: (calls.append("tensor a"), g * 2)[1])
    before = (len(a._backward_hooks or {}), len(a._post_accumulate_grad_hooks or {}))
    frames = trace_backward(loss, params={"a": a})
    assert calls == ["tensor a"]
    np.testing.assert_array_equal(a.grad.numpy(), [6.0, 6.0])
    assert (len(a._backward_hooks or {}), len(a._post_accumulate_grad_hooks or {})) == before
    acc = next(f for f in frames if f.kind == "accumulate")
    (hook,) = acc.hooks
    assert hook.kind == "tensor hook" and hook.replaced
    np.testing.assert_array_equal(hook.after, [6.0, 6.0])
    # the recorder's node hooks are gone: a second backward records nothing new and still works
    loss2 = (a * 3).sum()
    loss2.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [12.0, 12.0])


def test_torch_player(torch, graphs, pgv):
    built = graphs["mlp"](torch)
    player = animate(built.loss, params=built.leaves)
    assert repr(player) == f"BackwardPlayer(nodes={player.scene.num_nodes}, steps={len(player.frames)})"
    svg = player.scene.svg()
    assert 'data-n="n0"' in svg and "MmBackward0" in svg and "mg-glabel" in svg
    assert player.frames[-1].kind == "done"
