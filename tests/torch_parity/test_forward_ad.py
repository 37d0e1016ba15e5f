"""minigrad.autograd.forward_ad against torch.autograd.forward_ad (2.13): levels, make_dual / unpack_dual, their
errors, tangents through views and in-place ops, and no node recorded for dual tensors that do not require
grad. Inputs are built with NumPy and handed to both libraries."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad
import minigrad.autograd.forward_ad as fwAD

X = np.array([0.5, -1.25, 2.0])
V = np.array([1.0, 0.25, -0.5])


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the test compares exception types
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["nested", "size", "int_tangent", "int_primal", "twice", "no_level"])
def test_errors_as_torch(torch, case):
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor(X)
        if case == "no_level":
            return _error(lambda: fw.make_dual(x, lib.tensor(V)))
        with fw.dual_level():
            if case == "nested":
                return _error(fw.enter_dual_level)
            if case == "size":
                return _error(lambda: fw.make_dual(x, lib.tensor(V[:2])))
            if case == "int_tangent":
                return _error(lambda: fw.make_dual(x, lib.tensor([1, 2, 3])))
            if case == "int_primal":
                return _error(lambda: fw.make_dual(lib.tensor([1, 2, 3]), lib.tensor(V)))
            d = fw.make_dual(x, lib.tensor(V))
            return _error(lambda: fw.make_dual(d, lib.tensor(V)))
    ours, theirs = run(minigrad), run(torch)
    assert ours is not None and ours[0] == theirs[0]
    assert ours[1] == theirs[1].replace("torch.", "minigrad.")


def test_make_dual_is_a_view_and_unpack_gives_the_tangent_as_is(torch):
    for lib in (minigrad, torch):
        fw = lib.autograd.forward_ad
        x, v = lib.tensor(X), lib.tensor(V)
        with fw.dual_level() as level:
            assert level == 0
            d = fw.make_dual(x, v)
            assert d._base is x and d.grad_fn is None and not d.requires_grad
            primal, tangent = fw.unpack_dual(d)
            assert tangent is v and primal._base is x
            assert fw.unpack_dual(x).tangent is None
        assert fw.unpack_dual(d).tangent is None  # the level's tangents are gone with it


def test_no_node_for_dual_tensors_that_do_not_require_grad():
    with fwAD.dual_level():
        d = fwAD.make_dual(minigrad.tensor(X), minigrad.tensor(V))
        y = (d.sin() * d).exp().sum()
        assert y.grad_fn is None and not y.requires_grad
        assert fwAD.unpack_dual(y).tangent.grad_fn is None


def test_tangent_computed_in_the_forward_pass_matches_torch(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            y = (d.tanh() * d[[2, 0, 1]] / (1 + d * d)).softmax(0).log()
            return fw.unpack_dual(y).tangent.numpy()
    np.testing.assert_allclose(run(minigrad), run(torch), rtol=1e-9, atol=1e-12)


def test_views_and_in_place_ops_as_torch(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            base = lib.zeros(2, 3, dtype=lib.float64)
            row = base[1]
            row.copy_(fw.make_dual(lib.tensor(X), lib.tensor(V)))  # the view's tangent writes into the base's
            base.mul_(2.0)
            col = base[:, 0]
            col.exp_()
            t_base = fw.unpack_dual(base).tangent
            t_row = fw.unpack_dual(base[1]).tangent
            return base.numpy(), t_base.numpy(), t_row.numpy()
    for ours, theirs in zip(run(minigrad), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_repr_shows_the_tangent(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(X), lib.tensor(V))
            return repr(d), repr(d.sum()), repr(d * 2)
    assert [r.replace("minigrad.", "torch.") for r in run(minigrad)] == list(run(torch))


def test_dual_level_returns_and_forward_over_requires_grad(torch):
    def run(lib):
        fw = lib.autograd.forward_ad
        x = lib.tensor(X, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(V))
            y = (d * d.sin()).sum()
            tangent = fw.unpack_dual(y).tangent
            (g,) = lib.autograd.grad(tangent, x)  # reverse over forward: the tangent's own graph
            return type(d.grad_fn).__name__ if lib is torch else d.grad_fn.name(), tangent.item(), g.numpy()
    ours, theirs = run(minigrad), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-9, atol=1e-12)


def test_op_without_forward_rule_raises_pytorchs_error(torch):
    """PyTorch's text, first line and second, for an op with no forward rule (multi_margin_loss in torch, which
    minigrad lacks; max_pool1d in minigrad, which has no forward rule yet)."""
    messages = []
    for lib, f in ((torch, lambda d: torch.nn.functional.multi_margin_loss(d, torch.tensor([0, 1]))),
                   (minigrad, lambda d: minigrad.nn.functional.max_pool1d(d[None], 2))):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(np.ones((2, 4))), lib.tensor(np.ones((2, 4))))
            with pytest.raises(NotImplementedError) as info:
                f(d)
        messages.append(str(info.value).replace("multi_margin_loss", "OP").replace("max_pool1d", "OP"))
    assert messages[0] == messages[1]
