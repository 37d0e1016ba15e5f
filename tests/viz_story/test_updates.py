"""viz.session's optimizer steps: each parameter's update rule with this step's numbers (viz.updates), for
every optimizer minigrad has (and Adagrad, which only torch has), held against the optimizer's own update
and against the rules computed here from the gradients, with minigrad and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import viz
from viz.updates import FORMULAS

CASES = [
    ("SGD", {"lr": 0.1}, "SGD"),
    ("SGD", {"lr": 0.1, "momentum": 0.9}, "SGD momentum"),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.01, "maximize": True}, "SGD momentum"),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}, "SGD nesterov"),
    ("Adam", {"lr": 0.1}, "Adam"),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1, "amsgrad": True, "maximize": True}, "Adam"),
    ("AdamW", {"lr": 0.1}, "AdamW"),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.0}, "Adam"),
    ("RMSprop", {"lr": 0.01}, "RMSprop"),
    ("RMSprop", {"lr": 0.01, "centered": True, "weight_decay": 0.1}, "RMSprop centered"),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}, "RMSprop momentum"),
]
ADAGRAD = ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}, "Adagrad")  # torch only
W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # 6 entries: shown in full
BIG0 = np.linspace(-1.0, 1.0, 12)  # 12 entries: the rule shows the first 3
DATA = [np.array([1.0, -2.0, 0.5]), np.array([-0.5, 1.0, 3.0]), np.array([2.0, 0.5, -1.0])]


def _run(lib, name, options):
    w = lib.nn.Parameter(lib.tensor(W0.copy()))
    big = lib.nn.Parameter(lib.tensor(BIG0.copy()))
    opt = getattr(lib.optim, name)([w, big], **options)
    grads = []
    with viz.session(params={"w": w, "big": big}) as s:
        for x in DATA:
            opt.zero_grad()
            ((w @ lib.tensor(x)) ** 2).sum().backward()
            (big * big * float(x[0])).sum().backward()
            grads.append((w.grad.detach().numpy().copy(), big.grad.detach().numpy().copy()))
            opt.step()
    return s, grads


def _fmt(a):
    return "[" + ", ".join(_fmt(x) for x in a) + "]" if np.ndim(a) else f"{a:.4g}"


def _reference(name, options, p0, grads):
    """The optimizer written out here (PyTorch's documented algorithms): each step's terms and parameter."""
    lr, eps = options["lr"], options.get("eps", 1e-8 if name != "Adagrad" else 1e-10)
    wd, sign = options.get("weight_decay", 0.01 if name == "AdamW" else 0.0), -1.0 if options.get("maximize") else 1.0
    p, out = p0.copy(), []
    m = v = vmax = buf = gbar = None
    for t, grad in enumerate(grads, start=1):
        g = sign * grad + (0.0 if name == "AdamW" else wd) * p
        terms = {}
        if name == "SGD":
            mu, damp = options.get("momentum", 0.0), options.get("dampening", 0.0)
            if mu:
                buf = g.copy() if buf is None else mu * buf + (1 - damp) * g
                terms["buf"] = buf
                g = g + mu * buf if options.get("nesterov") else buf
            p = p - lr * g
        elif name in ("Adam", "AdamW"):
            b1, b2 = 0.9, 0.999
            m = (1 - b1) * g if m is None else b1 * m + (1 - b1) * g
            v = (1 - b2) * g * g if v is None else b2 * v + (1 - b2) * g * g
            vmax = v if vmax is None else np.maximum(vmax, v)
            terms["m_hat"] = m / (1 - b1**t)
            terms["v_hat"] = (vmax if options.get("amsgrad") else v) / (1 - b2**t)
            p = p * (1 - lr * wd if name == "AdamW" else 1.0) - lr * terms["m_hat"] / (np.sqrt(terms["v_hat"]) + eps)
        elif name == "RMSprop":
            a, mu = 0.99, options.get("momentum", 0.0)
            v = (1 - a) * g * g if v is None else a * v + (1 - a) * g * g
            terms["v"] = v
            denom = np.sqrt(v) + eps
            if options.get("centered"):
                gbar = (1 - a) * g if gbar is None else a * gbar + (1 - a) * g
                denom = np.sqrt(v - gbar * gbar) + eps
            if mu:
                buf = g / denom if buf is None else mu * buf + g / denom
                terms["buf"] = buf
                p = p - lr * buf
            else:
                p = p - lr * g / denom
        elif name == "Adagrad":
            v = g * g if v is None else v + g * g
            terms["sum"] = v
            p = p - lr / (1 + (t - 1) * options["lr_decay"]) * g / (np.sqrt(v) + eps)
        out.append((terms, p.copy()))
    return out


@pytest.mark.parametrize("name,options,formula", CASES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(CASES)])
def test_update_rules_with_their_numbers(lib, name, options, formula):
    _check_rules(lib, name, options, formula)


def test_adagrad_of_torch(torch):
    _check_rules(torch, *ADAGRAD)


def _check_rules(lib, name, options, formula):
    s, grads = _run(lib, name, options)
    steps = [st for st in s.steps if st.kind == "step"]
    assert len(steps) == 3
    assert steps[0].lines[-1][1].startswith(f"{name}: {FORMULAS[formula]} (lr = {options['lr']:g}")
    for k, (param, p0) in enumerate((("w", W0), ("big", BIG0))):
        expected = _reference(name, options, p0, [g[k] for g in grads])
        for step, (terms, p_after) in zip(steps, expected):
            (change,) = [c for c in step.changes if c.name == param]
            # the optimizer's own update, the rule's result and the update written out here agree
            np.testing.assert_allclose(change.after, p_after, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(change.terms["after"], change.after, rtol=1e-9, atol=1e-12)
            for key, value in terms.items():
                np.testing.assert_allclose(change.terms[key], value, rtol=1e-9, atol=1e-12)
            shown = change.rule.rsplit(" = ", 1)[-1]
            if param == "w":  # small: every entry of the result, to 4 significant digits
                assert shown == _fmt(change.after)
            else:  # large: its first entries
                assert shown == "[" + ", ".join(f"{x:.4g}" for x in change.after[:3]) + ", … 9 more]"
    if name in ("Adam", "AdamW"):
        w_change = next(c for c in steps[1].changes if c.name == "w")
        m_hat = _reference(name, options, W0, [g[0] for g in grads])[1][0]["m_hat"]
        assert f"m̂ = {_fmt(m_hat)}, v̂ = " in w_change.rule


def test_an_optimizer_viz_does_not_know_says_how_much_it_moved(lib):
    class Halve(lib.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        def step(self, closure=None):
            with lib.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        p.mul_(0.5)

    w = lib.nn.Parameter(lib.tensor(np.array([1.0, 2.0])))
    opt = Halve([w])
    with viz.session(params={"w": w}) as s:
        (w * 2.0).sum().backward()
        opt.step()
    (change,) = s.steps[2].changes
    assert change.rule == "changed by [-0.5, -1]" and change.terms == {}
    assert s.steps[2].lines[-1][1] == "Halve updates each parameter in place from its .grad and its state."
