"""Stochastic gradient descent, with PyTorch's momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .._tensor import make
from .optimizer import Optimizer


class SGD(Optimizer):
    """p -= lr * g, where g may include weight decay and momentum (PyTorch's single-tensor formulas)."""

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError("minigrad: SGD(differentiable=True) is not implemented.")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                d = p._data
                g = p._grad._data
                if maximize:
                    g = -g
                if weight_decay != 0:
                    g = g + weight_decay * d
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = make(np.array(g, copy=True))
                    else:
                        b = buf._data
                        b *= momentum
                        b += (1 - dampening) * g
                        buf._bump_version()
                    g = g + momentum * buf._data if nesterov else buf._data
                d -= lr * g
                p._bump_version()
        return loss
