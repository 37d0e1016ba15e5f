"""`node._raw_saved_<name>` and its `register_hooks(pack_hook, unpack_hook)` (the "Autograd mechanics" note's
saved tensors on disk), against PyTorch: when each hook runs, what backward and `_saved_<name>` then read, and
the errors of a second registration, of a freed or None value, of hooks that are not callable and of an unpack
hook that gives back something other than a tensor."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad


def _story(m):
    log = []
    x = m.tensor([1.5, -2.0, 0.5], dtype=m.float64, requires_grad=True)
    y = x.pow(2)
    handle = y.grad_fn._raw_saved_self
    handle.register_hooks(lambda t: (log.append(("pack", t.tolist())), t.detach() * 1.0)[1],
                          lambda p: (log.append(("unpack", p.tolist())), p)[1])
    log.append(("saved", y.grad_fn._saved_self.tolist()))
    z = x.exp()
    z.grad_fn._raw_saved_result.register_hooks(lambda t: t.detach().numpy().copy(),
                                               lambda arr: m.tensor(arr * 2.0))  # a doubled result: visible
    (y.sum() + z.sum()).backward()
    log.append(("grad", np.round(x.grad.numpy(), 10).tolist()))
    return log


def test_hooks_run_when_registered_and_when_backward_reads(torch):
    assert _story(minigrad) == _story(torch)


def _error(m, case: str):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    try:
        if case == "twice":
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        elif case == "freed":
            y.sum().backward()
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        elif case == "none":  # x * y saves `self` only when `other` needs a gradient
            (m.ones(2, requires_grad=True) * x.detach()).grad_fn._raw_saved_self.register_hooks(lambda t: t,
                                                                                                lambda t: t)
        elif case == "not callable":
            y.grad_fn._raw_saved_self.register_hooks(1, 2)
        elif case == "unpack gives a number":
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 5)
            y.sum().backward()
    except Exception as e:  # noqa: BLE001 (compared below)
        return type(e).__name__, str(e).replace("torch", "minigrad").splitlines()[0]
    return None


@pytest.mark.parametrize("case", ["twice", "freed", "none", "not callable", "unpack gives a number"])
def test_register_hooks_errors(torch, case):
    got = _error(minigrad, case)
    assert got is not None and got == _error(torch, case)


@pytest.mark.parametrize("pack", ["identity", "detached-copy"])
@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_unpacked_tensors_take_the_saved_tensors_place_in_the_graph(torch, pack, leaf):
    """PyTorch unpacks into a new tensor on the hook's data with the saved tensor's node or leaf accumulator: a
    hook that hands back a detached copy (as one saving to disk does) still differentiates under create_graph."""
    def run(t):
        packs = {"identity": lambda v: v, "detached-copy": lambda v: v.detach().clone()}
        x = t.tensor([1.0, 2.0, -3.0], requires_grad=True)
        with t.autograd.graph.saved_tensors_hooks(packs[pack], lambda v: v):
            base = x if leaf else x * 1.5
            y = (base * base.exp()).sum()
        saved = y.grad_fn.next_functions[0][0]._saved_self
        g = t.autograd.grad(y, x, create_graph=True)[0]
        h = t.autograd.grad(g.sum(), x)[0]
        return (saved is x, saved.requires_grad, saved.is_leaf, saved.grad_fn is not None,
                g.detach().numpy().tolist(), h.numpy().tolist())

    want, got = run(torch), run(minigrad)
    assert want[:4] == got[:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-6)
    np.testing.assert_allclose(got[5], want[5], rtol=1e-6)
