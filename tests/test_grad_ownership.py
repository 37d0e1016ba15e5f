"""The engine's ownership rule: a gradient array a formula made in this backward, that nothing else refers to,
becomes a leaf's first `.grad` without a copy; every other array is copied, so a `.grad` never shares memory
with a seed, a saved value, a hook's array, another leaf's `.grad` or a view."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import Function, engine, graph


@pytest.fixture
def owned_flags(monkeypatch):
    """Each first accumulation's `owned` flag, by leaf."""
    seen = {}
    real = graph.accumulate_grad

    def spy(var, g, create_graph, owned=False):
        if var._grad is None:
            seen[id(var)] = owned
        return real(var, g, create_graph, owned=owned)

    monkeypatch.setattr(graph, "accumulate_grad", spy)
    return seen


def leaf(shape, dtype=mg.float32, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32 if dtype is mg.float32
                                                                               else np.float64), requires_grad=True)


def test_an_mlps_weights_and_biases_take_their_gradients_without_a_copy(owned_flags):
    x = mg.tensor(np.random.default_rng(1).standard_normal((16, 8)).astype(np.float32))
    W1, b1, W2, b2 = leaf((8, 32)), leaf(32, seed=1), leaf((32, 4), seed=2), leaf(4, seed=3)
    logits = (x @ W1 + b1).relu() @ W2 + b2
    (logits.logsumexp(1) - logits.sum(1)).mean().backward()
    assert [owned_flags[id(p)] for p in (W1, b1, W2, b2)] == [True] * 4
    for p in (W1, b1, W2, b2):
        assert p.grad.dtype == p.dtype and p.grad.is_contiguous() and p.grad._data.flags.writeable


def test_what_the_engine_does_not_own_is_copied(owned_flags):
    a, b = leaf(3), leaf(3, seed=1)
    (a + b).sum().backward()  # AddBackward0 sends one array to both: neither owns it
    assert owned_flags[id(a)] is False and owned_flags[id(b)] is False
    assert not np.shares_memory(a.grad._data, b.grad._data)
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3, np.float32))


def test_a_sum_the_engine_made_is_owned(owned_flags):
    a = leaf(3)
    (a * 2 + a * 3).sum().backward()
    assert owned_flags[id(a)] is True
    np.testing.assert_allclose(a.grad.numpy(), 5)


def test_a_seed_gradient_is_never_taken():
    x = leaf(4)
    seed = mg.ones(4)
    x.backward(seed)  # the root is the leaf itself: its gradient is the caller's array
    assert not np.shares_memory(x.grad._data, seed._data)
    y = leaf(4, seed=1)
    (y * 1).backward(seed)
    assert not np.shares_memory(y.grad._data, seed._data)


def test_a_custom_functions_returned_tensors_are_copied():
    kept = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            out = g * 2
            kept.append(out)
            return out

    x = leaf(3)
    Keep.apply(x).sum().backward()
    assert not np.shares_memory(x.grad._data, kept[0]._data)


def test_arrays_a_hook_saw_are_copied():
    seen = []
    x = leaf(3)
    y = x.exp()
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_inputs[0]))
    y.sum().backward()
    assert not np.shares_memory(x.grad._data, seen[0]._data)
    z = leaf(3, seed=1)
    z.register_hook(lambda g: seen.append(g))
    (z * 3).sum().backward()
    assert not np.shares_memory(z.grad._data, seen[-1]._data)


def test_a_second_backward_accumulates_in_place_into_the_owned_array():
    W = leaf((3, 2))
    x = mg.ones((4, 3))
    (x @ W).sum().backward(retain_graph=True)
    first = W.grad._data
    (x @ W).sum().backward()
    assert W.grad._data is first
    np.testing.assert_allclose(W.grad.numpy(), 8)


def test_a_non_contiguous_leaf_still_gets_its_layout():
    base = leaf((4, 3))
    W = base.detach().t().requires_grad_()  # a leaf with transposed strides
    (mg.ones((2, 3)) @ W).sum().backward()
    assert W.grad.stride() == W.stride()


def test_the_rule():
    g = np.ones(3)
    assert engine.owned_gradient(g, 0, [np.ones(3)], [g])
    assert not engine.owned_gradient(g, 0, [g], [g])  # passed on as it came
    assert not engine.owned_gradient(g, 1, [np.ones(3)], [g, g])  # sent to two inputs
    assert engine.owned_gradient(g.sum(0), 1, [np.ones(3)], [g, g])  # what fit summed back is new
    part = g[:2]
    assert not engine.owned_gradient(part, 0, [np.ones(3)], [part])  # a view
    view = np.broadcast_to(np.float64(1.0), (3,))
    assert not engine.owned_gradient(view, 0, [np.ones(3)], [view])
