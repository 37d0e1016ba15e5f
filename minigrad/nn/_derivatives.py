"""The derivative rows nn adds to minigrad's table: layers and losses, named as PyTorch names them.

Same style as `minigrad/ops/derivatives.py`: each row names the node class, its differentiable
inputs, the non-tensor values it keeps (`_saved_<name>`), and one formula per input. Formulas
use operators and the helpers below, which work on NumPy arrays (plain backward) and on Tensors
(`create_graph=True`), so second derivatives through every loss come for free.
Constant operands (targets that need no gradient, masks, class weights) are plain arrays.
"""

from __future__ import annotations

import numpy as np

from ..ops import _dual as D
from ..ops._record import rule

EPSILON = float(np.float32(1e-12))  # PyTorch floors x * (1 - x) at 1e-12 as a C++ float
MEAN, SUM, NONE = 1, 2, 0  # PyTorch's reduction enum, as `_saved_reduction` shows it


# -- helpers that work on arrays and on Tensors ----------------------------------------------------
def arr(x):
    """A constant's array (None stays None): weights and targets carry no gradient."""
    if x is None:
        return None
    return D.data(x)


def clamp_min(x, lo: float):
    return x.clamp(min=lo) if D.is_t(x) else np.maximum(x, lo)


def log_sigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): never overflows."""
    if D.is_t(x):
        return x.clamp(max=0) - (-x.abs()).exp().log1p()
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def numel(x) -> int:
    return int(np.prod(x.shape)) if len(x.shape) else 1


def scaled(g, weight, reduction: int, n: int):
    """Multiply by the class/element weight and divide by n for a mean, as PyTorch's kernels do."""
    if weight is not None:
        g = g * weight
    if reduction == MEAN:
        g = g / n
    return g


# -- layers ----------------------------------------------------------------------------------------
AddmmBackward0 = rule(
    "AddmmBackward0", "self mat1 mat2",
    saves="mat1 mat2 alpha beta mat1_sym_sizes mat1_sym_strides mat2_sym_sizes mat2_sym_strides",
    text="grad_self = grad * beta (summed to self's shape), grad_mat1 = grad @ mat2ᵀ * alpha, "
         "grad_mat2 = mat1ᵀ @ grad * alpha",
    self=lambda grad, beta: grad if beta == 1 else grad * beta,
    mat1=lambda grad, mat2, alpha: grad @ D.t(mat2) if alpha == 1 else (grad @ D.t(mat2)) * alpha,
    mat2=lambda grad, mat1, alpha: D.t(mat1) @ grad if alpha == 1 else (D.t(mat1) @ grad) * alpha)

# scalar-operand forms PyTorch's C++ losses use (a Python number on the right)
MulBackward1 = rule("MulBackward1", "self", saves="other", text="grad_self = grad * other  (other is a number)",
                    self=lambda grad, other: grad * other)
DivBackward1 = rule("DivBackward1", "self", saves="other", text="grad_self = grad / other  (other is a number)",
                    self=lambda grad, other: grad / other)


# -- losses ----------------------------------------------------------------------------------------
def _mse_grad(grad, self, target, reduction):
    norm = 2.0 / numel(self) if reduction == MEAN else 2.0
    return norm * (self - target) * grad


MseLossBackward0 = rule(
    "MseLossBackward0", "self target", saves="self target reduction",
    text="grad_self = grad * 2 * (self - target) / N, grad_target = -grad_self",
    self=lambda grad, self, target, reduction: _mse_grad(grad, self, target, reduction),
    target=lambda grad, self, target, reduction: -_mse_grad(grad, self, target, reduction))


def nll_scatter(shape: tuple, dtype, target: np.ndarray, weight, reduction: int, ignore_index: int,
                total_weight) -> np.ndarray:
    """d loss / d input for a gradient of 1: -w[target] at each target class, 0 elsewhere.

    Works for input (C,), (N, C) and (N, C, d1, ...); the class dim is 1 (0 for a 1-D input).
    """
    if len(shape) == 1:
        shape2, t = (1,) + tuple(shape), target.reshape(1)
    else:
        shape2, t = tuple(shape), target
    ignored = t == ignore_index
    safe = np.where(ignored, 0, t)
    w = np.ones(t.shape, dtype) if weight is None else np.asarray(weight, dtype)[safe]
    coef = np.where(ignored, 0, -w).astype(dtype)
    if reduction == MEAN:
        tw = float(total_weight)
        coef = coef / tw if tw != 0 else np.zeros_like(coef)
    out = np.zeros(shape2, dtype)
    np.put_along_axis(out, np.expand_dims(safe, 1), np.expand_dims(coef, 1), axis=1)
    return out.reshape(shape)


def _nll_grad(grad, self, target, weight, reduction, ignore_index, total_weight):
    x = D.data(self)
    scatter = nll_scatter(x.shape, x.dtype, arr(target), arr(weight), reduction, ignore_index, arr(total_weight))
    if reduction == NONE and x.ndim >= 2:
        grad = D.unsqueeze_dims(grad, (1,))
    return grad * scatter


def _nll_rule(name: str):
    return rule(name, "self", saves="self weight reduction ignore_index total_weight target",
                text="grad_self = -grad * weight[target] / total_weight at each target class, 0 elsewhere",
                self=lambda grad, self, target, weight, reduction, ignore_index, total_weight:
                _nll_grad(grad, self, target, weight, reduction, ignore_index, total_weight))


NllLossBackward0 = _nll_rule("NllLossBackward0")
NllLoss2DBackward0 = _nll_rule("NllLoss2DBackward0")


def _bce_grad(grad, self, target, weight, reduction):
    g = (self - target) / clamp_min((1 - self) * self, EPSILON) * grad
    return scaled(g, arr(weight), reduction, numel(self))


def _bce_target_grad(grad, self, weight, reduction):
    logit = D.log(self) - D.log(1 - self)
    return scaled(-logit * grad, arr(weight), reduction, numel(self))


BinaryCrossEntropyBackward0 = rule(
    "BinaryCrossEntropyBackward0", "self target", saves="self target weight reduction",
    text="grad_self = grad * (self - target) / (self * (1 - self)) / N",
    self=lambda grad, self, target, weight, reduction: _bce_grad(grad, self, target, weight, reduction),
    target=lambda grad, self, weight, reduction: _bce_target_grad(grad, self, weight, reduction))


def _bce_logits_grad(grad, self, target, weight, pos_weight, reduction):
    sig = D.sigmoid(self)
    if pos_weight is not None:
        t = arr(pos_weight) * target
        g = ((t + 1 - target) * sig - t) * grad
    else:
        g = (sig - target) * grad
    return scaled(g, arr(weight), reduction, numel(self))


def _bce_logits_target_grad(grad, self, weight, pos_weight, reduction):
    if pos_weight is not None:
        g = (log_sigmoid(-self) - log_sigmoid(self) * arr(pos_weight)) * grad
    else:
        g = -self * grad
    return scaled(g, arr(weight), reduction, numel(self))


BinaryCrossEntropyWithLogitsBackward0 = rule(
    "BinaryCrossEntropyWithLogitsBackward0", "self target", saves="self target weight pos_weight reduction",
    text="grad_self = grad * (sigmoid(self) - target) / N",
    self=lambda grad, self, target, weight, pos_weight, reduction:
    _bce_logits_grad(grad, self, target, weight, pos_weight, reduction),
    target=lambda grad, self, weight, pos_weight, reduction:
    _bce_logits_target_grad(grad, self, weight, pos_weight, reduction))
