"""Adagrad and Adadelta: PyTorch's single-tensor updates (per-element step sizes from past gradients)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .._tensor import make
from .optimizer import Optimizer


def _check(**values: float) -> None:
    """PyTorch's argument checks, in its order and with its wording ("Invalid learning rate: -1")."""
    for label, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {label}: {value}")


def _bump(p, state: dict) -> None:
    for t in state.values():
        t._bump_version()
    p._bump_version()


class Adagrad(Optimizer):
    """Divide each step by the root of the sum of all past squared gradients: p -= clr · g / (sqrt(Σg²) + eps),
    with clr = lr / (1 + (step - 1) · lr_decay). Rarely-updated coordinates keep large steps."""

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None) -> None:
        _check(**{"learning rate": lr, "lr_decay value": lr_decay, "weight_decay value": weight_decay,
                  "initial_accumulator_value value": initial_accumulator_value, "epsilon value": eps})
        if differentiable or fused:
            raise NotImplementedError("minigrad does not implement Adagrad(differentiable=True) or fused=True.")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:  # PyTorch makes the state at construction, not at the first step
            for p in group["params"]:
                state = self.state[p]
                state["step"] = make(np.zeros((), np.float32))
                state["sum"] = make(np.full_like(p._data, group["initial_accumulator_value"]))

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                state["step"]._data += 1
                g = -p._grad._data if group["maximize"] else p._grad._data
                if group["weight_decay"] != 0:
                    g = g + group["weight_decay"] * p._data
                clr = group["lr"] / (1 + (float(state["step"]._data) - 1) * group["lr_decay"])
                total = state["sum"]._data
                total += g * g
                p._data += -clr * g / (np.sqrt(total) + group["eps"])
                _bump(p, state)
        return loss


class Adadelta(Optimizer):
    """Scale each step by the ratio of two running roots: of past updates and of past squared gradients,
    p -= lr · sqrt(E[Δ²] + eps) / sqrt(E[g²] + eps) · g. The units of the update match the parameter's."""

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check(**{"learning rate": lr})
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check(**{"epsilon value": eps, "weight_decay value": weight_decay})
        if differentiable:
            raise NotImplementedError("minigrad does not implement Adadelta(differentiable=True).")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:  # PyTorch's keys, in its order
                    state["step"] = make(np.zeros((), np.float32))
                    state["square_avg"] = make(np.zeros_like(p._data))
                    state["acc_delta"] = make(np.zeros_like(p._data))
                state["step"]._data += 1
                g = -p._grad._data if group["maximize"] else p._grad._data
                if group["weight_decay"] != 0:
                    g = g + group["weight_decay"] * p._data
                square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
                square_avg *= rho
                square_avg += (1 - rho) * g * g
                delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * g
                acc_delta *= rho
                acc_delta += (1 - rho) * delta * delta
                p._data += -lr * delta
                _bump(p, state)
        return loss
