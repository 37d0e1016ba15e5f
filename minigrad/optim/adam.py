"""Adam (and AdamW): PyTorch's single-tensor update, with amsgrad, maximize and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .._tensor import make
from .optimizer import Optimizer


def _lerp_(a: np.ndarray, b: np.ndarray, w: float) -> None:
    """a.lerp_(b, w) with PyTorch's formula (the form switches at w = 0.5 for accuracy)."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


class Adam(Optimizer):
    """Adaptive moments: p -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + eps)."""

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError(f"minigrad: {type(self).__name__}(differentiable=True) is not implemented.")
        defaults = {"lr": lr, "betas": tuple(float(b) for b in betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
            decoupled = group.get("decoupled_weight_decay", False)
            for p in group["params"]:
                if p._grad is None:
                    continue
                d = p._data
                g = p._grad._data
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = make(np.zeros((), np.float32))
                    state["exp_avg"] = make(np.zeros_like(d))
                    state["exp_avg_sq"] = make(np.zeros_like(d))
                    if amsgrad:
                        state["max_exp_avg_sq"] = make(np.zeros_like(d))
                if maximize:
                    g = -g
                step_t = state["step"]
                step_t._data += 1
                step_t._bump_version()
                if weight_decay != 0:
                    if decoupled:
                        d *= 1 - lr * weight_decay
                    else:
                        g = g + weight_decay * d
                m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
                _lerp_(m, g, 1 - beta1)
                v *= beta2
                v += (1 - beta2) * g * g
                step = float(step_t._data)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    vmax = state["max_exp_avg_sq"]._data
                    np.maximum(vmax, v, out=vmax)
                    denom = np.sqrt(vmax) / bias_correction2_sqrt + eps
                else:
                    denom = np.sqrt(v) / bias_correction2_sqrt + eps
                d += -step_size * m / denom
                for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                    if key in state:
                        state[key]._bump_version()
                p._bump_version()
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (p *= 1 - lr·wd before the Adam step); wd defaults to 0.01."""

    __module__ = "minigrad.optim"

    def __init__(self, params: Iterable, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
