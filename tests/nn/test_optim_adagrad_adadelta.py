"""Adagrad and Adadelta against PyTorch 2.13, step by step (float64: rtol 1e-9, atol 1e-12), with their
state (keys, values), param_groups and argument errors."""

from __future__ import annotations

import pytest

import minigrad

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


@pytest.mark.parametrize("name,case,kwargs", PARAMS, ids=[f"{n}-{c}" for n, c, _ in PARAMS])
def test_update_rule_matches_torch_step_by_step(optimizer_steps, name, case, kwargs):
    optimizer_steps(12).check_update_rule(name, kwargs, steps=12)


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
