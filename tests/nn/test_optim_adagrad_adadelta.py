"""Adagrad and Adadelta against PyTorch 2.13, step by step (float64: rtol 1e-9, atol 1e-12), with their
state (keys, values), param_groups and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(12)
X = RNG.standard_normal((8, 4))
Y = RNG.standard_normal((8, 2))
RTOL, ATOL = 1e-9, 1e-12

CASES = {
    "Adagrad": {"default": {}, "lr_decay": {"lr": 0.05, "lr_decay": 0.1},
                "weight_decay": {"lr": 0.05, "weight_decay": 0.1}, "initial": {"initial_accumulator_value": 0.5},
                "all": {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.2, "initial_accumulator_value": 0.1,
                        "eps": 1e-6, "maximize": True}},
    "Adadelta": {"default": {}, "lr_rho": {"lr": 0.5, "rho": 0.8},
                 "weight_decay": {"weight_decay": 0.1}, "maximize": {"lr": 0.1, "maximize": True},
                 "all": {"lr": 2.0, "rho": 0.95, "eps": 1e-5, "weight_decay": 0.05, "maximize": True}},
}
PARAMS = [(n, c, kw) for n, cs in CASES.items() for c, kw in cs.items()]


def _model(lib):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)).double()
    m.unused = nn.Parameter(lib.ones(2, dtype=lib.float64))  # never has a gradient: step() skips it
    return m


def _step(lib, model, opt):
    opt.zero_grad()
    loss = lib.nn.functional.mse_loss(model(lib.tensor(X)), lib.tensor(Y))
    loss.backward()
    opt.step()
    return loss.item()


@pytest.mark.parametrize("name,case,kwargs", PARAMS, ids=[f"{n}-{c}" for n, c, _ in PARAMS])
def test_update_rule_matches_torch_step_by_step(torch, sync, name, case, kwargs):
    tmodel, mmodel = _model(torch), _model(minigrad)
    sync(tmodel, mmodel)
    topt = getattr(torch.optim, name)(tmodel.parameters(), **kwargs)
    mopt = getattr(minigrad.optim, name)(mmodel.parameters(), **kwargs)
    for step in range(12):
        tl, ml = _step(torch, tmodel, topt), _step(minigrad, mmodel, mopt)
        np.testing.assert_allclose(ml, tl, rtol=RTOL, atol=ATOL, err_msg=f"loss at step {step}")
        for (n, tp), mp in zip(tmodel.named_parameters(), mmodel.parameters()):
            np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=RTOL, atol=ATOL,
                                       err_msg=f"{n} after step {step}")
    tstate, mstate = topt.state_dict(), mopt.state_dict()
    assert mstate["param_groups"] == tstate["param_groups"]
    assert sorted(mstate["state"]) == sorted(tstate["state"])
    for k, ts in tstate["state"].items():
        assert list(mstate["state"][k]) == list(ts), "state keys and their order"
        for key, tv in ts.items():
            mv = mstate["state"][k][key]
            assert str(mv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
            np.testing.assert_allclose(mv.numpy(), tv.numpy(), rtol=RTOL, atol=ATOL, err_msg=key)
    assert repr(mopt) == repr(topt)


BAD = [("Adagrad", {"lr": -1}), ("Adagrad", {"lr_decay": -0.1}), ("Adagrad", {"weight_decay": -1}),
       ("Adagrad", {"initial_accumulator_value": -1}), ("Adagrad", {"eps": -1}), ("Adadelta", {"lr": -1}),
       ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1}), ("Adadelta", {"weight_decay": -1})]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[f"{n}-{next(iter(k))}" for n, k in BAD])
def test_bad_arguments_raise_torchs_error(torch, name, kwargs):
    with pytest.raises(ValueError) as t:
        getattr(torch.optim, name)(torch.nn.Linear(2, 1).parameters(), **kwargs)
    with pytest.raises(ValueError) as m:
        getattr(minigrad.optim, name)(minigrad.nn.Linear(2, 1).parameters(), **kwargs)
    assert str(m.value) == str(t.value)


def test_adagrad_makes_its_state_when_constructed(torch):
    """PyTorch fills Adagrad's state in __init__ (a step count of 0 and the initial sums), before any step."""
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
        opt = lib.optim.Adagrad([p], initial_accumulator_value=0.25)
        assert list(opt.state[p]) == ["step", "sum"]
        assert opt.state[p]["step"].item() == 0.0 and opt.state[p]["sum"].tolist() == [0.25] * 3
