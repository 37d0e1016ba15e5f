"""tanh and sigmoid under create_graph record PyTorch's fused nodes (TanhBackwardBackward0,
SigmoidBackwardBackward0): the same graph, saved names and values up to third order."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg


def _run(m, op: str, grad_requires: bool):
    x = m.tensor(np.linspace(-1.5, 2.0, 7), requires_grad=True)
    y = getattr(x, op)()
    seed = m.tensor(np.linspace(0.5, 1.5, 7), requires_grad=grad_requires)
    (g,) = m.autograd.grad(y, x, seed, create_graph=True)
    node = g.grad_fn
    graph = (node.name(), [(type(f).__name__ if f is not None else None, nr) for f, nr in node.next_functions],
             sorted(a for a in dir(node) if a.startswith("_saved_")))
    (h,) = m.autograd.grad(g.sum(), x, create_graph=True)
    (k,) = m.autograd.grad((h * h).sum(), x)
    extra = m.autograd.grad(g.sum(), seed, retain_graph=True)[0].tolist() if grad_requires else None
    return graph, g.tolist(), h.tolist(), k.tolist(), extra, node._saved_output.grad_fn.name()


@pytest.mark.parametrize("op", ["tanh", "sigmoid"])
@pytest.mark.parametrize("grad_requires", [False, True])
def test_fused_backward_nodes_match_pytorch(torch, op, grad_requires):
    got, want = _run(mg, op, grad_requires), _run(torch, op, grad_requires)
    assert got[0] == want[0]
    assert got[5] == want[5]
    for a, b in zip(got[1:5], want[1:5]):
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_fused_backward_gradgradcheck():
    x = mg.tensor(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    assert mg.autograd.gradgradcheck(lambda t: t.tanh() * t.sigmoid(), (x,))


@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)])
def test_mm_saves_the_strides_of_the_inputs_that_need_grad(torch, needs):
    def saved(m):
        a = m.tensor(np.ones((4, 3)), requires_grad=needs[0]).t()  # (3, 4), not contiguous
        b = m.tensor(np.ones((5, 4)), requires_grad=needs[1])
        n = (a @ b.t()).grad_fn
        return [tuple(getattr(n, f"_saved_{k}")) for k in
                ("self_sym_sizes", "self_sym_strides", "mat2_sym_sizes", "mat2_sym_strides")]
    assert saved(mg) == saved(torch)
