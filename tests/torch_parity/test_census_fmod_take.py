"""`torch.fmod` (C's remainder: the sign of the dividend), `Tensor.take` (a flat read, negative positions from the
end), as PyTorch 2.13: names of the census's lecture code (tests/teaching_code/CENSUS.md) minigrad lacked. Values,
gradients and node names in float64; errors with PyTorch's type and message."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(28)
A = RNG.uniform(-5, 5, (3, 4))
B = RNG.uniform(0.5, 2, (3, 4)) * RNG.choice([-1, 1], (3, 4))


def _fmod(lib, divisor_is_tensor: bool):
    a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
    b = lib.tensor(B[0], dtype=lib.float64, requires_grad=True)  # broadcast over the rows
    out = lib.fmod(a, b) if divisor_is_tensor else a.fmod(-1.5)
    (out * lib.tensor(A, dtype=lib.float64)).sum().backward()
    return out, a.grad, b.grad


@pytest.mark.parametrize("divisor_is_tensor", [True, False])
def test_fmod_as_pytorchs(torch, divisor_is_tensor):
    mine, theirs = _fmod(minigrad, divisor_is_tensor), _fmod(torch, divisor_is_tensor)
    assert type(mine[0].grad_fn).__name__ == type(theirs[0].grad_fn).__name__
    assert type(mine[0].grad_fn).__name__ == ("FmodBackward1" if divisor_is_tensor else "FmodBackward0")
    for m, t in zip(mine, theirs):
        if t is None:
            assert m is None
        else:
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_fmod_signs_integers_and_specials(torch):
    a, b = [-0.0, 5.0, -3.0, 1.0, -7.5, 7.5], [1.0, -2.0, 0.0, float("inf"), 2.0, -2.0]
    mine = minigrad.fmod(minigrad.tensor(a, dtype=minigrad.float64), minigrad.tensor(b, dtype=minigrad.float64))
    theirs = torch.fmod(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    np.testing.assert_array_equal(np.signbit(mine.numpy()), np.signbit(theirs.numpy()))
    mine, theirs = minigrad.tensor([5, -5, 3]).fmod(2), torch.tensor([5, -5, 3]).fmod(2)
    assert str(mine.dtype) == "minigrad.int64" and mine.tolist() == theirs.tolist()
    assert str(minigrad.tensor([5]).fmod(2.5).dtype) == "minigrad.float32"
    assert str(torch.tensor([5]).fmod(2.5).dtype) == "torch.float32"


@pytest.mark.parametrize(("call", "kind"), [
    (lambda lib: lib.fmod(lib.tensor([5, 3]), 0), RuntimeError),
    (lambda lib: lib.fmod(lib.tensor([True]), lib.tensor([True])), NotImplementedError),
    (lambda lib: lib.fmod(2.0, lib.tensor([1.0])), TypeError),
    (lambda lib: lib.fmod(lib.ones(2), lib.ones(3)), RuntimeError),
])
def test_fmod_errors_as_pytorchs(torch, call, kind):
    with pytest.raises(kind) as theirs:
        call(torch)
    with pytest.raises(kind) as mine:
        call(minigrad)
    assert str(mine.value).splitlines()[0] == str(theirs.value).splitlines()[0]


def _take(lib, index):
    x = lib.tensor(A, dtype=lib.float64, requires_grad=True)
    out = x.take(lib.tensor(index))
    (out * out).sum().backward()
    return out, x.grad


@pytest.mark.parametrize("index", [[[0, -1], [5, 5]], [11, -12, 3], 7], ids=str)
def test_take_as_pytorchs(torch, index):
    (mine, my_grad), (theirs, their_grad) = _take(minigrad, index), _take(torch, index)
    assert type(mine.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "TakeBackward0"
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(my_grad.numpy(), their_grad.numpy(), rtol=1e-9, atol=1e-12)
    assert minigrad.take(minigrad.tensor(A), minigrad.tensor(index)).tolist() == theirs.tolist()


@pytest.mark.parametrize(("index", "kind"), [
    ([12], IndexError), ([-13], IndexError), ([[1.0]], RuntimeError), ([], RuntimeError), ([1], TypeError)], ids=str)
def test_take_errors_as_pytorchs(torch, index, kind):
    with pytest.raises(kind) as theirs:
        torch.arange(12.0).take(index if kind is TypeError else torch.tensor(index))
    with pytest.raises(kind) as mine:
        minigrad.arange(12.0).take(index if kind is TypeError else minigrad.tensor(index))
    assert str(mine.value) == str(theirs.value)


MASKS = [RNG.random((3, 4)) > 0.5, RNG.random(4) > 0.5, np.zeros((3, 4), bool)]


@pytest.mark.parametrize("mask", MASKS, ids=["full", "broadcast", "none"])
def test_masked_select_as_pytorchs(torch, mask):
    """Values, node name, gradient, and the gradient of the gradient (create_graph)."""
    outs = []
    for lib in (minigrad, torch):
        x = lib.tensor(A, dtype=lib.float64, requires_grad=True)
        y = x.masked_select(lib.tensor(mask))
        (g,) = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        outs.append((type(y.grad_fn).__name__, y.detach().numpy(), g.detach().numpy(), gg.numpy()))
    assert outs[0][0] == outs[1][0] == "MaskedSelectBackward0"
    for m, t in zip(outs[0][1:], outs[1][1:]):
        assert m.shape == t.shape
        np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("mask", "kind"), [
    ([1, 0, 1], RuntimeError), ([True, False], RuntimeError), (True, TypeError)], ids=str)
def test_masked_select_errors_as_pytorchs(torch, mask, kind):
    with pytest.raises(kind) as theirs:
        torch.ones(2, 3).masked_select(mask if kind is TypeError else torch.tensor(mask))
    with pytest.raises(kind) as mine:
        minigrad.ones(2, 3).masked_select(mask if kind is TypeError else minigrad.tensor(mask))
    assert str(mine.value) == str(theirs.value)
