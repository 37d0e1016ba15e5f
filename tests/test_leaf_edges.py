"""A leaf enters a graph through its AccumulateGrad node, made when the leaf first enters a graph and
held weakly by the leaf, as in PyTorch.

What a learner can observe: the node's identity, its `variable`, its hooks and
when they die, the order in which leaves' hooks fire, gradients that never share memory, and
that a graph keeps its leaves alive without a reference cycle. Each behaviour is compared with
PyTorch where PyTorch defines it.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np
import pytest

import minigrad as mg


def _identity_facts(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    a, b = x * w, x + 1.0
    acc_a = a.grad_fn.next_functions[0][0]
    return [
        type(acc_a).__name__,
        acc_a is a.grad_fn.next_functions[0][0],  # read twice: one node
        acc_a is b.grad_fn.next_functions[0][0],  # two consumers of x: one node
        acc_a is not a.grad_fn.next_functions[1][0],  # x and w: two nodes
        acc_a.variable is x,
        acc_a.next_functions,
        [nr for _, nr in a.grad_fn.next_functions],
    ]


def test_accumulate_grad_identity_and_variable_match_pytorch(torch):
    assert _identity_facts(mg) == _identity_facts(torch)


def _hook_order(m, node_hooks: bool):
    """Tensor, post-accumulate and (with `node_hooks`) AccumulateGrad hooks on three leaves first used in
    the order c, a, b."""
    a, b, c = (m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True) for _ in range(3))
    log = []
    for name, t in zip("abc", (a, b, c)):
        t.register_hook(lambda g, n=name: log.append(f"tensor {n}"))
        t.register_post_accumulate_grad_hook(lambda _, n=name: log.append(f"post {n}"))
    y = (c * 2.0) * a + b.exp() * a
    for fn, _ in y.grad_fn.next_functions if node_hooks else ():
        for inner, _ in fn.next_functions:
            if type(inner).__name__ == "AccumulateGrad":
                inner.register_prehook(lambda g, i=inner: log.append(f"acc pre {i.variable is a}"))
    y.sum().backward()
    return log, a.grad.tolist(), b.grad.tolist(), c.grad.tolist()


@pytest.mark.parametrize("node_hooks", [False, True])
def test_leaf_hook_order_matches_pytorch(torch, node_hooks):
    assert _hook_order(mg, node_hooks) == _hook_order(torch, node_hooks)


def _hook_lifetime(m):
    """A hook lives as long as its AccumulateGrad: on a node the learner still holds, it fires for a new
    graph; once the graph and the learner let go, it is gone with the node."""
    x = m.tensor([1.0, 2.0], requires_grad=True)
    fired = []
    held = (x * 2.0).grad_fn.next_functions[0][0]
    held.register_hook(lambda gi, go: fired.append("held"))
    (x * 3.0).sum().backward()
    del held
    (x * 2.0).grad_fn.next_functions[0][0].register_hook(lambda gi, go: fired.append("dropped"))
    (x * 4.0).sum().backward()
    return fired, x.grad.tolist()


def test_accumulate_grad_hooks_live_as_long_as_the_node(torch):
    assert _hook_lifetime(mg) == _hook_lifetime(torch)


def _aliasing(m):
    """AddBackward0 hands one gradient to both leaves: each leaf's .grad must be its own memory."""
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(10.0)
    c = m.tensor([1.0, 2.0], requires_grad=True)
    (c * c + c).sum().backward()  # one leaf, three gradients summed
    return a.grad.tolist(), b.grad.tolist(), c.grad.tolist()


def test_leaf_gradients_never_share_memory(torch):
    assert _aliasing(mg) == _aliasing(torch)


def test_parameters_and_tensor_subclasses_are_leaves_in_edges():
    class Tagged(mg.Tensor):
        pass

    p = mg.nn.Parameter(mg.tensor([1.0, 2.0]))
    t = Tagged([3.0, 4.0]).requires_grad_()
    y = p * t
    assert type(t) is Tagged and t.is_leaf
    y.sum().backward()
    assert p.grad.tolist() == [3.0, 4.0] and t.grad.tolist() == [1.0, 2.0]
    (acc_p, _), (acc_t, _) = (p * t).grad_fn.next_functions
    assert acc_p.variable is p and acc_t.variable is t


def test_graph_keeps_a_temporary_leaf_alive_without_a_cycle():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    alive = weakref.ref(x)
    y = x * 2.0
    del x
    assert alive() is not None  # the graph holds it
    acc = y.grad_fn.next_functions[0][0]
    y.sum().backward()
    assert acc.variable.grad.tolist() == [2.0, 2.0]
    del y, acc
    assert alive() is None  # freed by reference counting alone: no cycle


def test_autograd_grad_and_inputs_reach_leaves_in_edges(torch):
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([0.5, -1.0], requires_grad=True)
        y = (x * w).tanh().sum()
        (gx,) = m.autograd.grad(y, x, retain_graph=True)
        y.backward(inputs=[w])
        return gx.tolist(), x.grad, w.grad.tolist()

    got, want = run(mg), run(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1] is None and want[1] is None
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_anomaly_mode_and_create_graph_with_leaves_in_edges():
    x = mg.tensor([0.5, -1.0], requires_grad=True, dtype=mg.float64)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), mg.autograd.detect_anomaly(), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_graph's reference-cycle warning: once per process
        (x * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.detach().numpy(), [1.0, -2.0])


def _captures(m):
    """autograd.grad and backward(inputs=) over leaves in edges: pruned and unpruned graphs, a leaf
    listed twice, an unused input, a non-leaf input beside leaves."""
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0], requires_grad=True)
    c = m.tensor([0.5, 0.25], requires_grad=True)
    out = []
    y = (a * a + b.exp() * a).sum()
    out.append([g.tolist() for g in m.autograd.grad(y, [a, b, a], retain_graph=True)])
    z = (a * 2.0 + c * 3.0).sum()  # c leads nowhere near a: pruned
    out.append([g.tolist() for g in m.autograd.grad(z, a, retain_graph=True)])
    out.append([g if g is None else g.tolist() for g in m.autograd.grad(z, [a, b], allow_unused=True)])
    try:
        m.autograd.grad((a * 2.0).sum(), [a, b])
    except RuntimeError as e:
        out.append(str(e).split(".")[0])
    h = a * b
    (h * c).sum().backward(inputs=[h, c])
    out.append([a.grad, b.grad, h.grad.tolist(), c.grad.tolist()])
    (a * b).sum().backward(inputs=[b])
    out.append([a.grad, b.grad.tolist()])
    return out


def test_autograd_grad_and_inputs_capture_leaves_like_pytorch(torch):
    assert _captures(mg) == _captures(torch)
