"""RMSprop: PyTorch's single-tensor update, with momentum, centering, weight decay and maximize."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .._tensor import make
from .adam import _lerp_
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """Divide the gradient by a running root mean square: p -= lr · g / (sqrt(E[g²]) + eps).

    With `centered=True` the running mean of g is subtracted under the root (an estimate of the
    variance); with `momentum > 0` the ratio feeds a momentum buffer, as in PyTorch.
    """

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach=None, maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if differentiable:
            raise NotImplementedError("minigrad: RMSprop(differentiable=True) is not implemented.")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum = group["weight_decay"], group["momentum"]
            centered, maximize = group["centered"], group["maximize"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                d = p._data
                g = p._grad._data
                state = self.state[p]
                if len(state) == 0:  # the same keys, in the same order, as PyTorch's state
                    state["step"] = make(np.zeros((), np.float32))
                    state["square_avg"] = make(np.zeros_like(d))
                    if momentum > 0:
                        state["momentum_buffer"] = make(np.zeros_like(d))
                    if centered:
                        state["grad_avg"] = make(np.zeros_like(d))
                if maximize:
                    g = -g
                state["step"]._data += 1
                if weight_decay != 0:
                    g = g + weight_decay * d
                sq = state["square_avg"]._data
                sq *= alpha
                sq += (1 - alpha) * g * g
                if centered:
                    gavg = state["grad_avg"]._data
                    _lerp_(gavg, g, 1 - alpha)
                    avg = np.sqrt(sq - gavg * gavg)
                else:
                    avg = np.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += g / avg
                    d -= lr * buf
                else:
                    d += -lr * (g / avg)
                for t in state.values():
                    t._bump_version()
                p._bump_version()
        return loss
