"""What one ``optimizer.step()`` did to a parameter: its update rule with this step's numbers.

    Adam: p ← p − lr·m̂/(√v̂ + eps)  with  m̂ = m/(1 − β1^t), v̂ = v/(1 − β2^t)

A learner sees a weight move; the rule says why it moved by that much. ``explain`` reads what it needs the
way PyTorch keeps it, so real torch optimizers are explained too: the hyperparameters from
``optimizer.param_groups`` and the state after the step from ``optimizer.state[p]`` (``exp_avg``,
``exp_avg_sq``, ``step``, ``momentum_buffer``, ``square_avg``, ...), with the state before the step (a
snapshot the session takes in its pre-step hook) for the buffers a rule updates. It then computes the new
parameter from those terms: that is the number shown, and tests hold it against the optimizer's own update.
Known: SGD (momentum, dampening, Nesterov, weight decay, maximize), Adam and AdamW (amsgrad, maximize,
weight decay), RMSprop (centered, momentum, weight decay, maximize) and Adagrad (lr_decay, weight decay);
for any other optimizer ``explain`` returns None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import probe
from .trace import to_numpy

__all__ = ["Update", "explain", "snapshot", "FORMULAS"]

SHOWN = 3  # entries of a parameter shown in the rule when it has more than SMALL
SMALL = 6

FORMULAS = {
    "SGD": "p ← p − lr·g",
    "SGD momentum": "buf ← μ·buf + (1 − dampening)·g;  p ← p − lr·buf",
    "SGD nesterov": "buf ← μ·buf + g;  p ← p − lr·(g + μ·buf)",
    "Adam": "m̂ = m/(1 − β1^t), v̂ = v/(1 − β2^t);  p ← p − lr·m̂/(√v̂ + eps)",
    "AdamW": "m̂ = m/(1 − β1^t), v̂ = v/(1 − β2^t);  p ← p·(1 − lr·wd) − lr·m̂/(√v̂ + eps)",
    "RMSprop": "v ← α·v + (1 − α)·g²;  p ← p − lr·g/(√v + eps)",
    "RMSprop centered": "v ← α·v + (1 − α)·g², ḡ ← α·ḡ + (1 − α)·g;  p ← p − lr·g/(√(v − ḡ²) + eps)",
    "RMSprop momentum": "v ← α·v + (1 − α)·g², buf ← μ·buf + g/(√v + eps);  p ← p − lr·buf",
    "Adagrad": "s ← s + g²;  p ← p − lr/(1 + (t − 1)·lr_decay)·g/(√s + eps)",
}


@dataclass
class Update:
    """One parameter's update: the rule (``formula``), the rule with its numbers (``text``), the terms it
    used (full arrays: ``g``, ``m_hat``, ``v_hat``, ``buf``, ...; ``after``: the parameter they give)."""

    formula: str
    text: str
    terms: dict[str, Any] = field(default_factory=dict)

    @property
    def after(self) -> np.ndarray | None:
        return self.terms.get("after")


def snapshot(optimizer: Any) -> dict[int, tuple[np.ndarray | None, dict[str, Any]]]:
    """Before a step: every parameter's value and its state's tensors (id(p) -> (value, {key: array}))."""
    out = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            state = optimizer.state.get(p, {}) if hasattr(optimizer.state, "get") else {}
            out[id(p)] = (to_numpy(p), {k: to_numpy(v) for k, v in state.items() if probe.is_tensor(v)})
    return out


def explain(optimizer: Any, group: dict, p: Any, before: np.ndarray, state_before: dict[str, Any]) -> Update | None:
    """The update ``optimizer`` just made to ``p`` (value ``before``, state ``state_before`` before the step),
    or None for an optimizer whose rule viz does not know or a parameter without a gradient."""
    grad = to_numpy(probe.grad_of(p))
    if grad is None or before is None:
        return None
    state = {k: to_numpy(v) if probe.is_tensor(v) else v for k, v in optimizer.state.get(p, {}).items()}
    kinds = [c.__name__ for c in type(optimizer).__mro__]
    for kind in ("AdamW", "Adam", "SGD", "RMSprop", "Adagrad"):
        if kind in kinds:
            try:
                return _RULES[kind](group, before.astype(np.float64), grad.astype(np.float64), state, state_before)
            except (KeyError, TypeError, ValueError):
                return None  # a state or an option this version of the rule does not know
    return None


def _num(value: Any) -> float:
    return float(to_numpy(value)) if probe.is_tensor(value) else float(value)


def _g(group: dict, p: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The gradient a rule uses: negated under maximize, plus weight decay (L2) when set."""
    g, said = (-grad if group.get("maximize") else grad), []
    if group.get("maximize"):
        said.append(f"g = −p.grad = {_show(g)}")
    wd = _num(group.get("weight_decay", 0) or 0)
    if wd:
        g = g + wd * p
        said.append(f"g = {'−' if group.get('maximize') else ''}p.grad + wd·p = {_show(g)} (wd = {_n(wd)})")
    return g, said


def _sgd(group: dict, p: np.ndarray, grad: np.ndarray, state: dict, before: dict) -> Update:
    lr, mu = _num(group["lr"]), _num(group.get("momentum", 0) or 0)
    g, said = _g(group, p, grad)
    terms: dict[str, Any] = {"g": g}
    if not mu:
        after = p - lr * g
        plain = not said
        text = f"{_show(p)} - {_n(lr)} × {_show(g)} = {_show(after)}" if plain else \
            "; ".join(said + [f"p ← p − lr·g = {_show(p)} − {_n(lr)} × {_show(g)} = {_show(after)}"])
        return Update(FORMULAS["SGD"], text, {**terms, "after": after})
    buf = np.asarray(state["momentum_buffer"], dtype=np.float64)
    old = before.get("momentum_buffer")
    damp = _num(group.get("dampening", 0) or 0)
    if old is None:
        said.append(f"buf = g = {_show(buf)} (the first step)")
    else:
        said.append(f"buf ← {_n(mu)} × {_show(old)} + {_n(1 - damp)} × {_show(g)} = {_show(buf)}")
    terms["buf"] = buf
    if group.get("nesterov"):
        d = g + mu * buf
        after = p - lr * d
        terms["d"] = d
        said.append(f"p ← p − lr·(g + μ·buf) = {_show(p)} − {_n(lr)} × {_show(d)} = {_show(after)}")
        return Update(FORMULAS["SGD nesterov"], "; ".join(said), {**terms, "after": after})
    after = p - lr * buf
    said.append(f"p ← p − lr·buf = {_show(p)} − {_n(lr)} × {_show(buf)} = {_show(after)}")
    return Update(FORMULAS["SGD momentum"], "; ".join(said), {**terms, "after": after})


def _adam(group: dict, p: np.ndarray, grad: np.ndarray, state: dict, before: dict, decoupled: bool = False) -> Update:
    lr, (beta1, beta2), eps = _num(group["lr"]), (_num(b) for b in group["betas"]), _num(group["eps"])
    decoupled = decoupled or bool(group.get("decoupled_weight_decay"))
    wd = _num(group.get("weight_decay", 0) or 0)
    t = _num(state["step"])
    m = np.asarray(state["exp_avg"], dtype=np.float64)
    v = np.asarray(state["max_exp_avg_sq" if group.get("amsgrad") else "exp_avg_sq"], dtype=np.float64)
    m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
    g, said = _g({**group, "weight_decay": 0} if decoupled else group, p, grad)  # AdamW: wd is not in g
    shrunk = p * (1 - lr * wd) if decoupled and wd else p
    step = lr * m_hat / (np.sqrt(v_hat) + eps)
    after = shrunk - step
    terms = {"g": g, "m_hat": m_hat, "v_hat": v_hat, "step": step}
    said.append(f"t = {_n(t)}, m̂ = {_show(m_hat)}, v̂ = {_show(v_hat)}" + (" (v: its running max, amsgrad)"
                                                                            if group.get("amsgrad") else ""))
    start = f"{_show(p)} × {_n(1 - lr * wd)}" if decoupled and wd else _show(p)
    rule = "p·(1 − lr·wd) − lr·m̂/(√v̂ + eps)" if decoupled and wd else "p − lr·m̂/(√v̂ + eps)"
    said.append(f"p ← {rule} = {start} − {_n(lr)} × {_show(m_hat)}/(√{_show(v_hat)} + {_n(eps)}) = {_show(after)}")
    return Update(FORMULAS["AdamW" if decoupled and wd else "Adam"], "; ".join(said), {**terms, "after": after})


def _adamw(group: dict, p: np.ndarray, grad: np.ndarray, state: dict, before: dict) -> Update:
    return _adam(group, p, grad, state, before, decoupled=True)


def _rmsprop(group: dict, p: np.ndarray, grad: np.ndarray, state: dict, before: dict) -> Update:
    lr, alpha, eps, mu = _num(group["lr"]), _num(group["alpha"]), _num(group["eps"]), _num(group.get("momentum", 0))
    g, said = _g(group, p, grad)
    v = np.asarray(state["square_avg"], dtype=np.float64)
    terms: dict[str, Any] = {"g": g, "v": v}
    said.append(f"v ← {_n(alpha)} × {_show(before.get('square_avg', np.zeros_like(v)))} + {_n(1 - alpha)} × "
                f"{_show(g)}² = {_show(v)}")
    if group.get("centered"):
        gbar = np.asarray(state["grad_avg"], dtype=np.float64)
        denom = np.sqrt(v - gbar * gbar) + eps
        terms["grad_avg"] = gbar
        said.append(f"ḡ = {_show(gbar)}, √(v − ḡ²) + eps = {_show(denom)}")
    else:
        denom = np.sqrt(v) + eps
    terms["denom"] = denom
    if mu:
        buf = np.asarray(state["momentum_buffer"], dtype=np.float64)
        after = p - lr * buf
        terms["buf"] = buf
        said.append(f"buf ← {_n(mu)} × {_show(before.get('momentum_buffer', np.zeros_like(buf)))} + g/"
                    f"{_show(denom)} = {_show(buf)}")
        said.append(f"p ← p − lr·buf = {_show(p)} − {_n(lr)} × {_show(buf)} = {_show(after)}")
        return Update(FORMULAS["RMSprop momentum"], "; ".join(said), {**terms, "after": after})
    after = p - lr * g / denom
    said.append(f"p ← p − lr·g/(√v + eps) = {_show(p)} − {_n(lr)} × {_show(g)}/{_show(denom)} = {_show(after)}")
    return Update(FORMULAS["RMSprop centered" if group.get("centered") else "RMSprop"], "; ".join(said),
                  {**terms, "after": after})


def _adagrad(group: dict, p: np.ndarray, grad: np.ndarray, state: dict, before: dict) -> Update:
    lr, eps, decay = _num(group["lr"]), _num(group["eps"]), _num(group.get("lr_decay", 0) or 0)
    g, said = _g(group, p, grad)
    t = _num(state["step"])
    s = np.asarray(state["sum"], dtype=np.float64)
    clr = lr / (1 + (t - 1) * decay)
    after = p - clr * g / (np.sqrt(s) + eps)
    said.append(f"t = {_n(t)}, s ← s + g² = {_show(s)}")
    said.append(f"p ← p − {_n(clr)} × g/(√s + eps) = {_show(p)} − {_n(clr)} × {_show(g)}/(√{_show(s)} + "
                f"{_n(eps)}) = {_show(after)}")
    return Update(FORMULAS["Adagrad"], "; ".join(said), {"g": g, "sum": s, "clr": clr, "after": after})


_RULES = {"SGD": _sgd, "Adam": _adam, "AdamW": _adamw, "RMSprop": _rmsprop, "Adagrad": _adagrad}


def _n(value: float) -> str:
    return probe.format_number(float(value))


def _show(values: Any) -> str:
    """Small tensors in full; a larger one's first entries ("[0.1, 0.2, 0.3, … 6 more]")."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        return _n(arr)
    flat = arr.ravel()
    if flat.size <= SMALL and arr.ndim == 1:
        return "[" + ", ".join(_n(x) for x in flat) + "]"
    if flat.size <= SMALL:
        return _nested(arr.tolist())
    return "[" + ", ".join(_n(x) for x in flat[:SHOWN]) + f", … {flat.size - SHOWN} more]"


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return _n(values)
