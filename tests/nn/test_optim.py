"""SGD and Adam against PyTorch 2.13's single-tensor updates: same weights and data, 20 steps, equal to 1e-6."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(5)
X = RNG.standard_normal((8, 4))
Y = RNG.standard_normal((8, 2))
STEPS = 20


def _model(lib, sync=None, reference=None):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)).double()
    m.unused = nn.Parameter(lib.ones(2, dtype=lib.float64))  # never gets a gradient: skipped by step()
    if reference is not None:
        sync(reference, m)
    return m


def _train(lib, model, make_opt, steps=STEPS, closure=False, opt=None):
    opt = opt or make_opt(lib, model)
    x, y = lib.tensor(X), lib.tensor(Y)
    losses = []
    for _ in range(steps):
        def step_loss():
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        if closure:
            losses.append(opt.step(step_loss).item())
        else:
            losses.append(step_loss().item())
            opt.step()
    return opt, losses


SGD_CASES = {
    "plain": {"lr": 0.1},
    "momentum": {"lr": 0.05, "momentum": 0.9},
    "dampening": {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    "nesterov": {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    "weight_decay": {"lr": 0.1, "weight_decay": 0.01},
    "all": {"lr": 0.03, "momentum": 0.7, "weight_decay": 0.05, "nesterov": True},
    "maximize": {"lr": 0.01, "momentum": 0.5, "maximize": True, "weight_decay": 0.1},
}
ADAM_CASES = {
    "default": {},
    "lr": {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "amsgrad": {"lr": 0.02, "amsgrad": True},
    "maximize": {"lr": 0.01, "maximize": True},
    "all": {"lr": 0.03, "weight_decay": 0.05, "amsgrad": True, "maximize": True},
}
CASES = [("SGD", k, v) for k, v in SGD_CASES.items()] + [("Adam", k, v) for k, v in ADAM_CASES.items()] + [
    ("AdamW", "default", {}), ("AdamW", "amsgrad", {"lr": 0.02, "weight_decay": 0.1, "amsgrad": True})]


@pytest.mark.parametrize("name,case,kwargs", CASES, ids=[f"{n}-{c}" for n, c, _ in CASES])
def test_optimizer_matches_torch_for_20_steps(torch, sync, name, case, kwargs):
    tmodel = _model(torch)
    mmodel = _model(minigrad, sync, tmodel)

    def make(lib, model):
        return getattr(lib.optim, name)(model.parameters(), **kwargs)

    topt, tlosses = _train(torch, tmodel, make)
    mopt, mlosses = _train(minigrad, mmodel, make)
    np.testing.assert_allclose(mlosses, tlosses, rtol=1e-6, atol=1e-9)
    for (n, tp), mp in zip(tmodel.named_parameters(), mmodel.parameters()):
        np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-9, err_msg=n)
    tstate, mstate = topt.state_dict(), mopt.state_dict()
    assert mstate["param_groups"] == tstate["param_groups"]
    assert list(mstate["state"]) == list(tstate["state"])
    for k, tvalues in tstate["state"].items():
        assert list(mstate["state"][k]) == list(tvalues)
        for key, tv in tvalues.items():
            np.testing.assert_allclose(mstate["state"][k][key].numpy(), tv.numpy(), rtol=1e-6, atol=1e-9)
            assert mstate["state"][k][key].dtype.name == str(tv.dtype).split(".")[1]
    assert repr(mopt) == repr(topt)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.05})])
def test_step_with_closure_and_param_groups_match_torch(torch, sync, name, kwargs):
    tmodel = _model(torch)
    mmodel = _model(minigrad, sync, tmodel)

    def make(lib, model):
        return getattr(lib.optim, name)([
            {"params": model[0].parameters()},
            {"params": model[2].parameters(), "lr": kwargs["lr"] / 10},
        ], **kwargs)

    topt, tlosses = _train(torch, tmodel, make, closure=True)
    mopt, mlosses = _train(minigrad, mmodel, make, closure=True)
    np.testing.assert_allclose(mlosses, tlosses, rtol=1e-6)
    for tp, mp in zip(tmodel.parameters(), mmodel.parameters()):
        np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=1e-6, atol=1e-9)
    assert repr(mopt) == repr(topt)
    assert [g["lr"] for g in mopt.param_groups] == [g["lr"] for g in topt.param_groups]


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.05, "momentum": 0.9}), ("Adam", {"lr": 0.05,
                                                                                           "amsgrad": True})])
def test_state_dict_round_trip_resumes_training_exactly(tmp_path, name, kwargs):
    minigrad.manual_seed(0)
    straight = _model(minigrad)
    resumed = _model(minigrad)
    resumed.load_state_dict(straight.state_dict())

    def make(lib, model):
        return getattr(lib.optim, name)(model.parameters(), **kwargs)

    _train(minigrad, straight, make, steps=20)
    opt, _ = _train(minigrad, resumed, make, steps=10)
    minigrad.save({"model": resumed.state_dict(), "optim": opt.state_dict()}, tmp_path / "ckpt.pt")
    fresh = _model(minigrad)
    ckpt = minigrad.load(tmp_path / "ckpt.pt")
    fresh.load_state_dict(ckpt["model"])
    opt2 = make(minigrad, fresh)
    opt2.load_state_dict(ckpt["optim"])
    _train(minigrad, fresh, make, steps=10, opt=opt2)
    for a, b in zip(straight.parameters(), fresh.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_zero_grad_and_version_bump(torch):
    for lib in (torch, minigrad):
        w = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SGD([w], lr=0.1)
        y = (w * w).sum()  # MulBackward0 saved w
        y.backward(retain_graph=True)
        v = w._version
        opt.step()
        assert w._version == v + 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
        opt.zero_grad(set_to_none=False)
        assert w.grad is not None and w.grad.abs().sum().item() == 0
        opt.zero_grad()
        assert w.grad is None


def test_add_param_group_and_errors_match_torch(torch):
    for lib in (torch, minigrad):
        a, b = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.Adam([a], lr=0.1)
        opt.add_param_group({"params": b, "lr": 0.5})
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
        assert opt.param_groups[1]["betas"] == (0.9, 0.999)
        with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
            opt.add_param_group({"params": [a]})
        with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
            lib.optim.SGD([], lr=0.1)
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.optim.SGD([a * 2], lr=0.1)
        with pytest.raises(TypeError, match="params argument given to the optimizer should be an iterable"):
            lib.optim.SGD(a, lr=0.1)
        with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
            lib.optim.SGD([a], lr=0.1, nesterov=True)
        with pytest.raises(ValueError, match="Invalid learning rate: -1"):
            lib.optim.Adam([a], lr=-1)
        with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
            lib.optim.Adam([a]).load_state_dict(opt.state_dict())


def test_float32_training_matches_torch_closely(torch, sync):
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    mmodel = minigrad.nn.Sequential(minigrad.nn.Linear(4, 3), minigrad.nn.ReLU(), minigrad.nn.Linear(3, 2))
    sync(tmodel, mmodel)
    for lib, model in ((torch, tmodel), (minigrad, mmodel)):
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        x, y = lib.tensor(X.astype(np.float32)), lib.tensor(Y.astype(np.float32))
        for _ in range(STEPS):
            opt.zero_grad()
            lib.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    for tp, mp in zip(tmodel.parameters(), mmodel.parameters()):
        assert mp.dtype == minigrad.float32
        np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=1e-4, atol=1e-5)
