"""RMSprop, AdamW and lr_scheduler (StepLR, CosineAnnealingLR, LambdaLR) against PyTorch 2.13, step by step.

Same float64 weights and data in both libraries; after every step the loss, every parameter and
(at the end) every optimizer state tensor agree within conventions.md's float64 tolerance
(rtol 1e-9, atol 1e-12). Scheduler learning rates are compared exactly: minigrad uses PyTorch's
chainable formulas, so the floats are the same.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import minigrad

RTOL, ATOL = 1e-9, 1e-12


RMSPROP_CASES = {
    "default": {},
    "lr_alpha_eps": {"lr": 0.03, "alpha": 0.9, "eps": 1e-6},
    "momentum": {"lr": 0.01, "momentum": 0.9},
    "centered": {"lr": 0.01, "centered": True},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "maximize": {"lr": 0.005, "maximize": True},
    "all": {"lr": 0.01, "alpha": 0.95, "momentum": 0.5, "centered": True, "weight_decay": 0.05, "maximize": True},
}
ADAMW_CASES = {
    "default": {},
    "weight_decay": {"lr": 0.02, "weight_decay": 0.3},
    "amsgrad": {"lr": 0.02, "amsgrad": True},
    "maximize": {"lr": 0.01, "maximize": True},
    "no_decay": {"lr": 0.01, "weight_decay": 0.0},
    "all": {"lr": 0.03, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.2, "amsgrad": True, "maximize": True},
}
CASES = [("RMSprop", k, v) for k, v in RMSPROP_CASES.items()] + [("AdamW", k, v) for k, v in ADAMW_CASES.items()]


@pytest.mark.parametrize("name,case,kwargs", CASES, ids=[f"{n}-{c}" for n, c, _ in CASES])
def test_update_rule_matches_torch_step_by_step(optimizer_steps, name, case, kwargs):
    optimizer_steps(11).check_update_rule(name, kwargs, steps=15)


def test_rmsprop_errors_match_torch(torch):
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(2))
        for kwargs, phrase in [({"lr": -1}, "Invalid learning rate: -1"), ({"eps": -1}, "Invalid epsilon value"),
                               ({"momentum": -1}, "Invalid momentum value"),
                               ({"weight_decay": -1}, "Invalid weight_decay value"),
                               ({"alpha": -1}, "Invalid alpha value")]:
            with pytest.raises(ValueError, match=phrase):
                lib.optim.RMSprop([p], **kwargs)


def test_rmsprop_bumps_versions_like_torch(torch):
    versions = []
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(3, dtype=lib.float64))
        opt = lib.optim.RMSprop([p], lr=0.1, momentum=0.9, centered=True)
        (p * p).sum().backward()
        opt.step()
        versions.append((p._version, {k: v._version for k, v in opt.state[p].items()}))
    assert versions[1][0] == versions[0][0]
    assert set(versions[1][1]) == set(versions[0][1])


# -- lr_scheduler ------------------------------------------------------------------------------------------
SCHEDULERS = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "StepLR-default-gamma": lambda s, o: s.StepLR(o, 2),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=5),
    "CosineAnnealingLR-eta_min": lambda s, o: s.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda epoch: 0.95**epoch),
    "LambdaLR-per-group": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: min(1.0, (e + 1) / 4)]),
}


def _two_groups(lib, model, name="SGD", **kwargs):
    return getattr(lib.optim, name)([{"params": model[0].parameters()},
                                     {"params": model[2].parameters(), "lr": 0.05}], lr=0.1, **kwargs)


@pytest.mark.parametrize("case", list(SCHEDULERS))
def test_scheduler_matches_torch_epoch_by_epoch(torch, optimizer_steps, case):
    steps = optimizer_steps(11)
    tmodel, mmodel = steps.models()
    topt, mopt = _two_groups(torch, tmodel, momentum=0.9), _two_groups(minigrad, mmodel, momentum=0.9)
    tsched = SCHEDULERS[case](torch.optim.lr_scheduler, topt)
    msched = SCHEDULERS[case](minigrad.optim.lr_scheduler, mopt)
    assert msched.get_last_lr() == tsched.get_last_lr()
    assert [g["initial_lr"] for g in mopt.param_groups] == [g["initial_lr"] for g in topt.param_groups]
    for epoch in range(14):  # past T_max twice: the cosine goes down and back up
        tl, ml = steps.step(torch, tmodel, topt), steps.step(minigrad, mmodel, mopt)
        np.testing.assert_allclose(ml, tl, rtol=RTOL, atol=ATOL, err_msg=f"epoch {epoch}")
        tsched.step()
        msched.step()
        assert msched.get_last_lr() == tsched.get_last_lr(), epoch
        assert [g["lr"] for g in mopt.param_groups] == [g["lr"] for g in topt.param_groups]
        assert msched.last_epoch == tsched.last_epoch == epoch + 1
    for tp, mp in zip(tmodel.parameters(), mmodel.parameters()):
        np.testing.assert_allclose(mp.detach().numpy(), tp.detach().numpy(), rtol=RTOL, atol=ATOL)
    tsd, msd = tsched.state_dict(), msched.state_dict()
    assert list(msd) == list(tsd)
    assert msd == tsd


def test_cosine_values_are_the_closed_form(torch):
    """A check that does not lean on torch: the chainable cosine follows eta_min + (lr0-eta_min)(1+cos(pi t/T))/2."""
    p = minigrad.nn.Parameter(minigrad.ones(1))
    opt = minigrad.optim.SGD([p], lr=1.0)
    sched = minigrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.1)
    for t in range(1, 11):
        opt.step()
        sched.step()
        assert sched.get_last_lr()[0] == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi * t / 10)) / 2, rel=1e-12)
    assert sched.get_last_lr()[0] == pytest.approx(0.1)


def test_step_lr_halves_every_step_size():
    p = minigrad.nn.Parameter(minigrad.ones(1))
    opt = minigrad.optim.SGD([p], lr=0.8)
    sched = minigrad.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    seen = []
    for _ in range(6):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == [0.8, 0.8, 0.4, 0.4, 0.2, 0.2]


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


def test_warning_when_scheduler_steps_before_optimizer(torch):
    got = []
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1)

        def wrong_order(sched=sched):
            sched.step()
            sched.step()  # warns once, on the first call only

        got.append(_record(wrong_order))
    assert got[1] == got[0]
    assert len(got[0]) == 1 and "Detected call of `lr_scheduler.step()` before `optimizer.step()`" in got[0][0][1]


def test_warning_points_at_the_callers_line():
    p = minigrad.nn.Parameter(minigrad.ones(1))
    sched = minigrad.optim.lr_scheduler.StepLR(minigrad.optim.SGD([p], lr=0.1), 1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`") as record:
        sched.step()
    assert record[0].filename == __file__


def test_right_order_does_not_warn_and_overridden_step_warns(torch):
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)
        p.grad = lib.ones(1)
        assert _record(lambda opt=opt, sched=sched: (opt.step(), sched.step())) == []
        opt2 = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        sched2 = lib.optim.lr_scheduler.StepLR(opt2, 1)
        opt2.step = lambda: None
        msgs = _record(sched2.step)
        assert len(msgs) == 1 and "Seems like `optimizer.step()` has been overridden" in msgs[0][1]


def test_get_lr_outside_step_and_epoch_argument_warn_like_torch(torch):
    got = []
    for lib in (torch, minigrad):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        opt.step()
        direct = _record(sched.get_lr)
        with_epoch = _record(lambda sched=sched: sched.step(5))  # closed form: 0.1 * 0.5 ** (5 // 2)
        got.append((direct, with_epoch, sched.get_last_lr(), sched.last_epoch))
    assert got[1] == got[0]
    assert got[0][2] == [0.025] and got[0][3] == 5


def test_state_dict_round_trip_resumes_the_schedule(torch):
    def run(lib, resume_at=None):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
        lrs = []
        for epoch in range(9):
            if epoch == resume_at:
                saved_opt, saved = pickle.dumps(opt.state_dict()), pickle.dumps(sched.state_dict())
                opt = lib.optim.SGD([p], lr=0.1)
                opt.load_state_dict(pickle.loads(saved_opt))
                sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, last_epoch=epoch - 1)
                sched.load_state_dict(pickle.loads(saved))
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        return lrs

    straight = run(minigrad)
    assert run(minigrad, resume_at=4) == straight
    assert straight == run(torch)


def test_resume_without_initial_lr_raises_key_error_like_torch(torch):
    for lib in (torch, minigrad):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
            lib.optim.lr_scheduler.StepLR(opt, 2, last_epoch=3)
        with pytest.raises(TypeError, match="list is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR([], 2)
        with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
            lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1, lambda e: 2])


def test_lambda_state_dict_keeps_callable_objects_state(torch):
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, epoch):
            return min(1.0, (epoch + 1) / self.n)

    dicts = []
    for lib in (torch, minigrad):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [Warmup(4)])
        sd = sched.state_dict()
        dicts.append(sd)
        other = lib.optim.lr_scheduler.LambdaLR(opt, [Warmup(9)])
        other.load_state_dict(sd)
        assert other.lr_lambdas[0].n == 4 and "lr_lambdas" in sd
    assert dicts[1] == dicts[0]
