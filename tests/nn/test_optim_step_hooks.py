"""Optimizer step hooks against PyTorch 2.13: the global `register_optimizer_step_{pre,post}_hook` and each
optimizer's `register_step_{pre,post}_hook` run in the same order with the same arguments, a pre hook may
replace the arguments, a wrong return value is the same error, and removed hooks stay silent."""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest


def _run(lib, make_opt):
    p = lib.nn.Parameter(lib.tensor(np.array([1.0, -2.0])))
    opt = make_opt(lib, [p])
    log = []
    optimizer_module = importlib.import_module(f"{lib.__name__}.optim.optimizer")
    handles = [
        optimizer_module.register_optimizer_step_pre_hook(
            lambda o, a, k: log.append(("global pre", o is opt, len(a), dict(k)))),
        optimizer_module.register_optimizer_step_post_hook(
            lambda o, a, k: log.append(("global post", o is opt, p.detach().numpy().tolist()))),
        opt.register_step_pre_hook(lambda o, a, k: log.append(("own pre", p.detach().numpy().tolist()))),
        opt.register_step_post_hook(lambda o, a, k: log.append(("own post", len(a)))),
    ]
    try:
        p.grad = lib.tensor(np.array([0.5, 0.25]))
        opt.step()
        handles[2].remove()
        opt.step(closure=None)
    finally:
        for h in handles:
            h.remove()
    opt.step()
    log.append(("after removal", p.detach().numpy().tolist()))
    return log


@pytest.mark.parametrize("make_opt", [lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
                                      lambda lib, ps: lib.optim.Adam(ps, lr=0.1)], ids=["SGD", "Adam"])
def test_hooks_order_and_arguments_match_torch(torch, make_opt):
    import minigrad

    mine, theirs = _run(minigrad, make_opt), _run(torch, make_opt)
    assert [e[:2] for e in mine] == [e[:2] for e in theirs]
    for a, b in zip(mine, theirs):
        for x, y in zip(a[1:], b[1:]):
            if isinstance(x, list):
                np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)
            else:
                assert x == y


def _replaced_args(lib):
    p = lib.nn.Parameter(lib.tensor(np.array([1.0])))
    p.grad = lib.tensor(np.array([1.0]))
    opt = lib.optim.SGD([p], lr=1.0)
    calls = []

    def closure():
        calls.append("closure")
        return lib.tensor(np.array(3.0))

    handle = opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": closure}))
    loss = opt.step()
    handle.remove()
    bad = opt.register_step_pre_hook(lambda o, a, k: "nonsense")
    with pytest.raises(RuntimeError) as err:
        opt.step()
    bad.remove()
    return calls, float(loss), p.detach().numpy().tolist(), str(err.value)


def test_pre_hook_may_replace_arguments_and_must_return_a_pair(torch):
    import minigrad

    mine, theirs = _replaced_args(minigrad), _replaced_args(torch)
    assert mine[:3] == theirs[:3]
    for phrase in ("must return None or a tuple of (new_args, new_kwargs), but got nonsense",):
        assert phrase in mine[3] and phrase in theirs[3]


def test_hooks_survive_pickling_and_are_not_pickled():
    import minigrad

    p = minigrad.nn.Parameter(minigrad.tensor(np.array([1.0])))
    opt = minigrad.optim.SGD([p], lr=0.5)
    opt.register_step_post_hook(print)
    clone = pickle.loads(pickle.dumps(opt))
    assert len(clone._optimizer_step_post_hooks) == 0
    seen = []
    clone.register_step_post_hook(lambda o, a, k: seen.append(o is clone))
    clone.param_groups[0]["params"][0].grad = minigrad.tensor(np.array([1.0]))
    clone.step()
    assert seen == [True]
