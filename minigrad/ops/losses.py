"""The losses of `torch.nn.functional` (mse_loss, nll_loss, cross_entropy, binary_cross_entropy, ...), each
declared beside its derivative rows, named as PyTorch names them.

Constant operands (targets that need no gradient, masks, class weights) are plain arrays in the formulas,
which work on NumPy arrays (plain backward) and on Tensors (`create_graph=True`), so second derivatives
through every loss come for free.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._layout import laid_out
from .._stacklevel import user_stacklevel
from .._state import DUAL, FUNC_DEPTH, FUNC_LEVELS, GRAD
from .._tensor import Tensor, make
from . import xp
from .dual import ZERO, forward_aware
from .operands import broadcast_error, kind_name
from .recording import SavedArg, exact_zeros, exact_zeros_in_transforms, record, rule
from .registry import Sample, check_recordable, declare

EPSILON = float(np.float32(1e-12))  # PyTorch floors x * (1 - x) at 1e-12 as a C++ float
MEAN, SUM, NONE = 1, 2, 0  # PyTorch's reduction enum, as `_saved_reduction` shows it


# -- helpers that work on arrays and on Tensors ----------------------------------------------------
def arr(x):
    """A constant's array (None stays None): weights and targets carry no gradient."""
    if x is None:
        return None
    return xp.data(x)


def clamp_min(x, lo: float):
    return x.clamp(min=lo) if xp.is_t(x) else np.maximum(x, lo)


def log_sigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): never overflows."""
    if xp.is_t(x):
        return x.clamp(max=0) - (-x.abs()).exp().log1p()
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def numel(x) -> int:
    return int(np.prod(x.shape)) if len(x.shape) else 1


def scaled(g, weight, reduction: int, n: int):
    """Multiply by the class/element weight and divide by n for a mean, as PyTorch's kernels do."""
    if weight is not None:
        g = g * weight
    if reduction == MEAN:
        g = g / n  # a number: DivBackward1 under create_graph, as in PyTorch
    return g


# scalar-operand forms PyTorch's C++ losses use (a Python number on the right)
from .arithmetic import DivBackward1, MulBackward1  # noqa: E402


# -- losses ----------------------------------------------------------------------------------------
def _mse_backward(grad_output, self, target, reduction):
    """PyTorch's mse_loss_backward on arrays: 2 * (self - target) * grad_output, / N for a mean."""
    n = numel(self)
    norm = (2.0 / n if n else float("inf")) if reduction == MEAN else 2.0
    return norm * (self - target) * grad_output


def _mse_double_backward(g, x, reduction):
    """PyTorch's mse_loss_double_backward: 2 * g, / N for a mean (MulBackward1, DivBackward1)."""
    out = g * 2.0
    return out / numel(x) if reduction == MEAN else out


def _mse_grad_output(grad, grad_output, self, target, reduction):
    """PyTorch's mse_loss_double_backward_grad_output."""
    if reduction == NONE:
        return mse_loss_backward(grad, self, target, reduction)
    ones = make(np.ones_like(xp.data(grad_output))) if xp.is_t(grad_output) else np.ones_like(grad_output)
    return (mse_loss_backward(ones, self, target, reduction) * grad).sum()


# PyTorch's fused backward op of mse_loss: what MseLossBackward0's formulas call, so that a create_graph backward
# records MseLossBackwardBackward0 as PyTorch does
MseLossBackwardBackward0 = rule(
    "MseLossBackwardBackward0", "grad_output self target", saves="grad_output self target reduction",
    forward=lambda grad_output_t, self_t, target_t, grad_output, self, target, reduction:  # linear in grad_output
    mse_loss_backward(grad_output_t, self, target, reduction)  # and in self - target
    + mse_loss_backward(grad_output, self_t, target_t, reduction),
    text="grad_grad_output = mse_loss_backward(grad), grad_self = 2 * grad * grad_output / N, "
         "grad_target = -grad_self",
    grad_output=lambda grad, grad_output, self, target, reduction:
    _mse_grad_output(grad, grad_output, self, target, reduction),
    self=lambda grad, grad_output, self, reduction: _mse_double_backward(grad * grad_output, self, reduction),
    target=lambda grad, grad_output, target, reduction: -_mse_double_backward(grad * grad_output, target, reduction))


def mse_loss_backward(grad_output, self, target, reduction):
    """mse_loss's backward op: on arrays the kernel, on Tensors the op that records MseLossBackwardBackward0.
    The result has self's dtype (PyTorch's kernel writes into zeros_like(self): no cast recorded after it)."""
    dtype = xp.data(self).dtype
    if not (xp.is_t(grad_output) or xp.is_t(self) or xp.is_t(target)):
        return _mse_backward(grad_output, self, target, reduction).astype(dtype, copy=False)
    ts = tuple(t if xp.is_t(t) else make(np.asarray(t)) for t in (grad_output, self, target))
    res = np.asarray(GRAD.quiet.run(_mse_backward, *(t._data for t in ts), reduction)).astype(dtype, copy=False)
    if _tracked(*ts):
        return record(MseLossBackwardBackward0, res, ts, reduction=reduction)
    return make(res)


MseLossBackward0 = rule(
    "MseLossBackward0", "self target", saves="self target reduction",
    text="grad_self = grad * 2 * (self - target) / N, grad_target = -grad_self", forward="reduction",
    self=lambda grad, self, target, reduction: mse_loss_backward(grad, self, target, reduction),
    target=lambda grad, self, target, reduction: mse_loss_backward(grad, target, self, reduction))


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
    x = xp.data(self)
    scatter = nll_scatter(x.shape, x.dtype, arr(target), arr(weight), reduction, ignore_index, arr(total_weight))
    if reduction == NONE and x.ndim >= 2:
        grad = xp.unsqueeze_dims(grad, (1,))
    g = grad * scatter
    # PyTorch's kernel writes the target places only: +0. elsewhere, where a negative gradient times 0 is -0.
    return g if xp.is_t(g) else xp.keep_where(scatter != 0, g)


def _nll_of(grad, target, weight, reduction, ignore_index):
    """nll_loss(grad, target, ...): the derivative of nll_loss_backward by its grad_output (it is linear in it)."""
    out = _nll_nd(grad if xp.is_t(grad) else make(np.asarray(grad)), target, weight, reduction, ignore_index)
    return out if xp.is_t(grad) else out._data


def _nll_backward_op(name: str, node_cls):
    """PyTorch's nll_loss_backward (nll_loss2d_backward): the kernel on arrays; on Tensors the op that records
    `node_cls` (its fused double-backward node) whenever `self` requires grad, as PyTorch does."""

    def op(grad_output, self, target, weight, reduction, ignore_index, total_weight):
        if not (xp.is_t(grad_output) or xp.is_t(self)):
            return _nll_grad(grad_output, self, target, weight, reduction, ignore_index, total_weight)
        go = grad_output if xp.is_t(grad_output) else make(np.asarray(grad_output))
        res = np.asarray(_nll_grad(go._data, xp.data(self), target, weight, reduction, ignore_index, total_weight))
        if _tracked(go, self):
            return record(node_cls, res, (go, self), target=target, weight=weight, reduction=reduction,
                          ignore_index=ignore_index)
        return make(res)

    op.__name__ = op.__qualname__ = name
    declare(name, op, method=False, public=False, nodes=(node_cls,))
    return op


def _nll_rules(name: str):
    """NllLoss(2D)Backward0 and the node of its backward op, NllLoss(2D)BackwardBackward0."""
    double = rule(name.replace("Backward0", "BackwardBackward0"), "grad_output self",
                  saves="target weight reduction ignore_index",
                  text="grad_grad_output = nll_loss(grad, target), grad_self = 0",
                  grad_output=lambda grad, target, weight, reduction, ignore_index:
                  _nll_of(grad, target, weight, reduction, ignore_index),
                  self=lambda grad: xp.zeros_like(grad))
    backward = _nll_backward_op(name.replace("Backward0", "_backward").lower().replace("nllloss", "nll_loss"), double)
    return rule(name, "self", saves="self weight reduction ignore_index total_weight target",
                text="grad_self = -grad * weight[target] / total_weight at each target class, 0 elsewhere",
                forward=lambda self_t, target, weight, reduction, ignore_index:  # (the loss is linear in self)
                _nll_of(self_t, target, weight, reduction, ignore_index),
                self=lambda grad, self, target, weight, reduction, ignore_index, total_weight:
                backward(grad, self, target, weight, reduction, ignore_index, total_weight))


NllLossBackward0 = _nll_rules("NllLossBackward0")
NllLoss2DBackward0 = _nll_rules("NllLoss2DBackward0")


def _bce_grad(grad, self, target, weight, reduction):
    """PyTorch's binary_cross_entropy_backward kernel (on arrays)."""
    g = (self - target) / np.maximum((1 - self) * self, EPSILON) * grad
    return scaled(g, arr(weight), reduction, numel(self))


def _bce_target_grad(grad, self, weight, reduction):
    logit = xp.log(self) - xp.log(1 - self)
    return scaled(-logit * grad, arr(weight), reduction, numel(self))


# PyTorch's double-backward formulas of binary_cross_entropy_backward (their eps is a C++ double, 1e-12)
_BCE_EPS = 1e-12


def _bce_double_self(grad, grad_output, self, target, weight, reduction):
    """binary_cross_entropy_double_backward: grad * grad_output * (x² - 2xt + t) / ((x + eps)² (1 - x + eps)²)."""
    x, t = self, target
    num = x * x - x * 2 * t + t
    den = (x + _BCE_EPS) ** 2 * (1 - x + _BCE_EPS) ** 2
    return scaled(num / den * (grad * grad_output), arr(weight), reduction, numel(x))


def _bce_double_grad_output(grad, self, target, weight, reduction):
    """binary_cross_entropy_double_backward_grad_output: grad * (x - t) / ((x + eps) (1 - x + eps)) (the engine
    sums it to grad_output's shape)."""
    x = self
    g = (x - target) / ((x + _BCE_EPS) * (1 - x + _BCE_EPS)) * grad
    return scaled(g, arr(weight), reduction, numel(x))


def _bce_double_target(grad, grad_output, self, weight, reduction):
    """binary_cross_entropy_double_backward_target: -grad * grad_output / max(x (1 - x), eps)."""
    g = -grad * grad_output
    if weight is not None:
        g = g * arr(weight)
    x = xp.data(self)
    g = g / np.maximum((1 - x) * x, _BCE_EPS)  # PyTorch clamps the denominator under no_grad
    return g / numel(x) if reduction == MEAN else g


# PyTorch's fused backward op of binary_cross_entropy: a create_graph backward records its node,
# BinaryCrossEntropyBackwardBackward0, with edges to grad_output, self and target
BinaryCrossEntropyBackwardBackward0 = rule(
    "BinaryCrossEntropyBackwardBackward0", "grad_output self target", saves="grad_output self target weight reduction",
    forward="derived",  # (each output element: its own self and target, and grad_output, which is unsummed here)
    text="grad_grad_output = grad * (self - target) / (self * (1 - self)) / N, "
         "grad_self = grad * grad_output * (self² - 2 self target + target) / (self² (1 - self)²) / N, "
         "grad_target = -grad * grad_output / (self * (1 - self)) / N",
    grad_output=lambda grad, self, target, weight, reduction:
    _bce_double_grad_output(grad, self, target, weight, reduction),
    self=lambda grad, grad_output, self, target, weight, reduction:
    _bce_double_self(grad, grad_output, self, target, weight, reduction),
    target=lambda grad, grad_output, self, weight, reduction:
    _bce_double_target(grad, grad_output, self, weight, reduction))


def binary_cross_entropy_backward(grad_output, self, target, weight, reduction):
    """binary_cross_entropy's backward op: on arrays the kernel, on Tensors the op that records
    BinaryCrossEntropyBackwardBackward0."""
    if not (xp.is_t(grad_output) or xp.is_t(self) or xp.is_t(target)):
        return _bce_grad(grad_output, self, target, weight, reduction)
    ts = tuple(t if xp.is_t(t) else make(np.asarray(t)) for t in (grad_output, self, target))
    res = np.asarray(GRAD.quiet.run(_bce_grad, *(t._data for t in ts), weight, reduction))
    if _tracked(*ts):
        return record(BinaryCrossEntropyBackwardBackward0, res, ts, weight=weight, reduction=reduction)
    return make(res)


def _loss_reduction(unreduced, reduction: int):
    """PyTorch's apply_loss_reduction: the mean or sum of a loss's per-element values (arrays or Tensors)."""
    if not xp.is_t(unreduced):
        with np.errstate(all="ignore"):
            return _reduce(np.asarray(unreduced), reduction)
    return unreduced.mean() if reduction == MEAN else unreduced.sum() if reduction == SUM else unreduced


def _bce_forward(self_t, target_t, self, target, weight, reduction):
    """PyTorch's formula: both backward formulas, unreduced, on the tangents, then the reduction. An absent target
    tangent is a tensor of zeros in plain forward AD (PyTorch's in-place `mul_` materializes its zero tensor: the
    term is 0 · ∞ = NaN where self is 0 or 1), but drops out exactly under torch.func (ZERO, see
    recording.exact_zeros_in_transforms); an absent self tangent is zeros in both (the backward kernel's)."""
    if self_t is ZERO:
        self_t = xp.zeros_like(self)
    return _loss_reduction(binary_cross_entropy_backward(self_t, self, target, weight, NONE)
                           + _bce_target_grad(target_t, self, weight, NONE), reduction)


BinaryCrossEntropyBackward0 = rule(
    "BinaryCrossEntropyBackward0", "self target", saves="self target weight reduction",
    text="grad_self = grad * (self - target) / (self * (1 - self)) / N",
    forward=exact_zeros_in_transforms(lambda self_t, target_t, self, target, weight, reduction: _bce_forward(
        self_t, target_t, self, target, weight, reduction)),
    self=lambda grad, self, target, weight, reduction:
    binary_cross_entropy_backward(grad, self, target, weight, reduction),
    target=lambda grad, self, weight, reduction: _bce_target_grad(grad, self, weight, reduction))


def _bce_logits_grad(grad, self, target, weight, pos_weight, reduction):
    sig = xp.sigmoid(self)
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
    # PyTorch's formula, as binary_cross_entropy's; its backward formulas return its zero tensor for a zero tangent,
    # so an absent tangent's term drops out exactly (exact_zeros)
    forward=exact_zeros(lambda self_t, target_t, self, target, weight, pos_weight, reduction: _loss_reduction(
        _bce_logits_grad(self_t, self, target, weight, pos_weight, NONE)
        + _bce_logits_target_grad(target_t, self, weight, pos_weight, NONE), reduction)),
    self=lambda grad, self, target, weight, pos_weight, reduction:
    _bce_logits_grad(grad, self, target, weight, pos_weight, reduction),
    target=lambda grad, self, weight, pos_weight, reduction:
    _bce_logits_target_grad(grad, self, weight, pos_weight, reduction))


# == the losses ==================================================================================================
_REDUCTIONS = {"none": NONE, "mean": MEAN, "sum": SUM}


def _tracked(*ts) -> bool:
    return GRAD.mode > 0 and any(isinstance(t, Tensor) and t._requires_grad for t in ts)


def _reduction(reduction: str, size_average=None, reduce=None) -> int:
    """PyTorch's reduction enum; the legacy `size_average`/`reduce` flags still work, with its warning."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                      "instead.", UserWarning, stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _reduce(arr: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == MEAN:
        return np.asarray(arr.mean() if arr.size else np.nan, arr.dtype)
    if reduction == SUM:
        return np.asarray(arr.sum(), arr.dtype)
    return arr


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple:
    """torch.broadcast_tensors for a loss's (input, target): views only where shapes differ."""
    try:
        shape = np.broadcast_shapes(input._data.shape, target._data.shape)
    except ValueError:  # (PyTorch's message, not NumPy's)
        raise broadcast_error(input, target) from None
    if input._data.shape != shape:
        input = input.expand(shape)
    if target._data.shape != shape:
        target = target.expand(shape)
    return input, target


def _size_warning(input: Tensor, target: Tensor) -> None:
    warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                  "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same "
                  "size.", UserWarning, stacklevel=user_stacklevel())


def _scalar_node(cls, t: Tensor, value, res: np.ndarray) -> Tensor:
    """`t * 0.5` / `t / n` as PyTorch's C++ losses write them (MulBackward1 / DivBackward1). Under forward AD
    the declared Scalar op, which carries the tangent."""
    if DUAL[0] is not None:
        return xp.mul_scalar(t, value) if cls is MulBackward1 else xp.div_scalar(t, value)
    if _tracked(t):
        return record(cls, np.asarray(res), (t,), other=value)
    return make(np.asarray(res))


# -- losses ----------------------------------------------------------------------------------------------
def _pointwise_loss_args(name: str, input: Tensor, target: Tensor, weight) -> tuple[Tensor, Tensor]:
    """The checks mse_loss and l1_loss share: no `weight`, and PyTorch's warning and broadcast when the
    target's shape differs from the input's."""
    if weight is not None:
        raise NotImplementedError(f"minigrad: {name}(weight=...) is not implemented.")
    if target._data.shape != input._data.shape:
        _size_warning(input, target)
        input, target = _broadcast_pair(input, target)
    if target._data.dtype.kind in "iu" and input._data.dtype.kind == "f":
        # type promotion, as PyTorch: an integer target (the blitz's `torch.arange(1, 11)`) takes the input's dtype
        target = make(target._data.astype(input._data.dtype))
    elif input._data.dtype.kind in "iu" and target._data.dtype.kind == "f":  # (and an integer input the target's)
        input = make(input._data.astype(target._data.dtype))
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight=None) -> Tensor:
    """Mean squared error (MseLossBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    return _mse(*_pointwise_loss_args("mse_loss", input, target, weight), red)


def _mse(input: Tensor, target: Tensor, red: int) -> Tensor:
    """mse_loss of operands of one shape: one MseLossBackward0 node."""
    kind = np.result_type(input._data, target._data)
    if kind.kind != "f":
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{kind_name(kind)}'")
    with np.errstate(all="ignore"):  # inf - inf is nan and 1e300² is inf, silently (as in PyTorch)
        d = laid_out(input._data - target._data, input, target)  # (reduction="none" shows PyTorch's layout)
        res = _reduce(d * d, red)
    if _tracked(input, target):
        return record(MseLossBackward0, res, (input, target), reduction=red)
    return make(res)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight=None) -> Tensor:
    """Mean absolute error: PyTorch composes it, `(input - target).abs().mean()` (MeanBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    input, target = _pointwise_loss_args("l1_loss", input, target, weight)
    diff = (input - target).abs()
    return diff.mean() if red == MEAN else diff.sum() if red == SUM else diff


KL_DIV_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the support size."
                       "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                       "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) per element, for log-probabilities `input`: target * (log target - input), as
    PyTorch composes it (xlogy, mul, sub; with `log_target`, exp(target) * (target - input)). 'batchmean'
    divides the sum by the batch size, the KL divergence's definition; 'mean' divides by every element."""
    if reduction == "batchmean":  # a sum, divided by the batch size unless 0-d (SumBackward0 there, as PyTorch)
        red = SUM
    else:
        red = _reduction(reduction, size_average, reduce)
        if red == MEAN:
            warnings.warn(KL_DIV_MEAN_WARNING, UserWarning, stacklevel=user_stacklevel())
    if log_target:
        out = target.exp() * (target - input)
    else:
        out = target.xlogy(target) - target * input
    out = out.mean() if red == MEAN else out.sum() if red == SUM else out
    return out / input.size()[0] if reduction == "batchmean" and input.dim() != 0 else out


def _check_target(input: Tensor, target: Tensor) -> None:
    if target._data.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {kind_name(target._data.dtype)}")
    x, t = input._data, target._data
    if x.ndim == 1:
        if t.ndim != 0:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported (got a "
                               f"{t.ndim}-D target for a 1-D input)")
    elif x.ndim >= 2 and (t.ndim == 0 or t.shape[0] != x.shape[0]):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")


def _saved(t: Tensor | None) -> SavedArg | None:
    """A loss's target or weight saved as PyTorch saves it: version-checked when backward reads it."""
    return None if t is None else SavedArg(t, (t,))


def _nll(input: Tensor, target: Tensor, weight: Tensor | None, red: int, ignore_index: int, cls) -> Tensor:
    """One NllLoss node: -w[t] * input[t], summed, averaged over the total weight, or per sample."""
    x, t = input._data, target._data.astype(np.int64, copy=False)
    xs, ts = (x[None], t.reshape(1)) if x.ndim == 1 else (x, t)
    n_classes = xs.shape[1]
    ignored = ts == ignore_index
    bad = (~ignored) & ((ts < 0) | (ts >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(ts[bad].flat[0])} is out of bounds.")
    if weight is not None and weight._data.shape != (n_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but "
                           f"got weight tensor of shape: [{', '.join(map(str, weight._data.shape))}]")
    safe = np.where(ignored, 0, ts)
    w = np.ones(ts.shape, x.dtype) if weight is None else weight._data.astype(x.dtype, copy=False)[safe]
    w = np.where(ignored, 0, w).astype(x.dtype, copy=False)
    picked = np.take_along_axis(xs, np.expand_dims(safe, 1), axis=1).squeeze(1)
    picked = np.where(ignored, 0, picked).astype(x.dtype, copy=False)  # PyTorch skips an ignored target's input
    losses = np.where(ignored, 0, -w * picked).astype(x.dtype, copy=False)  # (+0., not -0 * input)
    total = np.asarray(w.sum() if red != NONE else 0, x.dtype)
    if red == NONE and x.ndim > 1:
        res = losses.reshape(t.shape)
    elif red == NONE:  # a 1-D input takes PyTorch's summing loop, from 0: 0 - w * x (+0. for x = 0)
        res = np.asarray(0 - (w * picked).sum(), x.dtype)
    elif red == SUM:
        res = np.asarray(losses.sum(), x.dtype)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            res = np.asarray(losses.sum() / total, x.dtype)
    if _tracked(input):
        return record(cls, res, (input,), weight=_saved(weight),
                      reduction=red, ignore_index=ignore_index,
                      total_weight=make(total), target=_saved(target))
    return make(res)


# One NllLoss node, carrying the tangent under forward AD (nll_loss over more dims and cross_entropy run it)
_nll = forward_aware(_nll, (NllLossBackward0, NllLoss2DBackward0), "nll_loss")


def _nll_nd(input: Tensor, target: Tensor, weight, red: int, ignore_index: int) -> Tensor:
    """nll_loss over (C,), (N, C) or (N, C, d1, ...) inputs, dispatched as at::nll_loss_nd."""
    _check_target(input, target)
    shape = input._data.shape
    if len(shape) in (1, 2):
        return _nll(input, target, weight, red, ignore_index, NllLossBackward0)
    if tuple(target._data.shape[1:]) != tuple(shape[2:]):
        raise RuntimeError(f"Expected target size [{', '.join(map(str, (shape[0],) + shape[2:]))}], got "
                           f"[{', '.join(map(str, target._data.shape))}]")
    if len(shape) == 4:
        return _nll(input, target, weight, red, ignore_index, NllLoss2DBackward0)
    n, c = shape[0], shape[1]
    flat_in = input.contiguous().view(n, c, 1, -1)
    flat_t = target.contiguous().view(n, 1, -1)
    out = _nll(flat_in, flat_t, weight, red, ignore_index, NllLoss2DBackward0)
    return out if red != NONE else out.view((n,) + shape[2:])


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of the target classes (input holds log-probabilities)."""
    return _nll_nd(input, target, weight, _reduction(reduction, size_average, reduce), ignore_index)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim, then nll_loss: the graph is NllLossBackward0 <- LogSoftmaxBackward0.

    Targets are class indices, or class probabilities (a float tensor shaped like the input).
    """
    red = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input._data.ndim == 1 else 1
    logp = input.log_softmax(class_dim)
    if target._data.shape == input._data.shape:
        if target._data.dtype.kind != "f":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{kind_name(target._data.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(logp, target, weight, red, label_smoothing, class_dim)
    if label_smoothing > 0:
        return _cross_entropy_smoothed(logp, target, weight, red, ignore_index, label_smoothing)
    return _nll_nd(logp, target, weight, red, ignore_index)


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight._data.shape[0]
    return weight.view(*shape)


def _cross_entropy_probs(logp: Tensor, target: Tensor, weight, red: int, smoothing: float, class_dim: int) -> Tensor:
    """Soft targets: -(log p * target * w), reduced as PyTorch does (mean divides by N, not by numel)."""
    n_classes = logp._data.shape[class_dim]
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, logp._data.ndim, class_dim)
    if red == NONE:
        return -prod.sum(class_dim)
    total = -prod.sum()
    if red == SUM:
        return total
    n = logp._data.size // n_classes
    return _scalar_node(DivBackward1, total, n, total._data / n)


def _cross_entropy_smoothed(logp: Tensor, target: Tensor, weight, red: int, ignore_index: int,
                            smoothing: float) -> Tensor:
    """Label smoothing, composed as PyTorch's C++ does: (1-ε)·nll + ε/C · (-Σ log p)."""
    class_dim = 0 if logp._data.ndim == 1 else 1
    n_classes = logp._data.shape[class_dim]
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, logp._data.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if red == MEAN:
        if weight is not None:
            kept = target._data[~ignore_mask._data].reshape(-1)
            ret = smooth.sum() / make(np.asarray(weight._data[kept].sum(), weight._data.dtype))
        else:
            ret = smooth.sum() / make(np.asarray((~ignore_mask._data).sum(), np.int64))
    elif red == SUM:
        ret = smooth.sum()
    else:
        ret = smooth
    a = 1 - smoothing
    b = smoothing / n_classes
    left = _scalar_node(MulBackward1, nll, a, nll._data * np.asarray(a, nll._data.dtype))
    right = _scalar_node(MulBackward1, ret, b, ret._data * np.asarray(b, ret._data.dtype))
    return left + right


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-w [t log x + (1-t) log(1-x)] for probabilities x (BinaryCrossEntropyBackward0); logs are floored at -100."""
    red = _reduction(reduction, size_average, reduce)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    check_recordable((input, target))  # autograd reads their grad_fn before the kernel checks dtypes and ranges
    if target._data.dtype != input._data.dtype:
        raise RuntimeError(f"Found dtype {kind_name(target._data.dtype)} but expected {kind_name(input._data.dtype)}")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{kind_name(input._data.dtype)}'")
    if weight is not None:
        weight = weight.expand(np.broadcast_shapes(target._data.shape, weight._data.shape))
    x, t = input._data, target._data
    if not ((x >= 0) & (x <= 1)).all():  # (NaN is not between 0 and 1 either)
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if weight is not None:
        loss = loss * weight._data
    res = _reduce(laid_out(loss.astype(x.dtype, copy=False), input), red)  # PyTorch fills empty_like(input)
    if _tracked(input, target):
        return record(BinaryCrossEntropyBackward0, res, (input, target), weight=_saved(weight), reduction=red)
    return make(res)


def _refuse_in_decomposition(x_dtype, t_dtype) -> None:
    """Under torch.func PyTorch runs binary_cross_entropy_with_logits's decomposition, which negates a bool input and
    writes a float result into an integer one in place: its errors there, not the kernel's."""
    if x_dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    if t_dtype.kind == "f":
        raise RuntimeError(f"result type {kind_name(t_dtype)} can't be cast to the desired output type "
                           f"{kind_name(x_dtype)}")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid and BCE in one numerically stable step (BinaryCrossEntropyWithLogitsBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    x, t = input._data, target._data
    if x.dtype.kind in "biu" and (FUNC_DEPTH[0] or FUNC_LEVELS):
        _refuse_in_decomposition(x.dtype, t.dtype)
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{kind_name(x.dtype)}'")
    with np.errstate(all="ignore"):  # inf - inf is nan, silently (as in PyTorch)
        log_sig = log_sigmoid(x)
        if pos_weight is not None:
            log_sig = log_sig * ((pos_weight._data - 1) * t + 1)
        loss = (1 - t) * x - log_sig
        if weight is not None:
            loss = loss * weight._data
        # PyTorch computes in place on (1 - target): the loss has the target's dtype, even for a float64 input
        out_dtype = t.dtype if t.dtype.kind == "f" else x.dtype
        res = _reduce(np.asarray(loss).astype(out_dtype, copy=False), red)
    if _tracked(input, target):
        return record(BinaryCrossEntropyWithLogitsBackward0, res, (input, target), weight=_saved(weight),
                      pos_weight=_saved(pos_weight), reduction=red)
    return make(res)


# == declarations ===============================================================================================
_PAIR = (((3, 4), "real"), ((3, 4), "const"))
_F = "nn.functional"
declare("mse_loss_backward", mse_loss_backward, method=False, public=False, nodes=(MseLossBackwardBackward0,))
declare("mse_loss", mse_loss, namespace=_F, method=False, nodes=(MseLossBackward0,),
        samples=(Sample((((3, 4), "real"), ((3, 4), "real"))), Sample(_PAIR, kwargs={"reduction": "sum"}),
                 Sample(_PAIR, kwargs={"reduction": "none"})))
declare("l1_loss", l1_loss, namespace=_F, method=False, samples=(Sample((((3, 4), "away"), ((3, 4), "const"))),))
declare("nll_loss", nll_loss, namespace=_F, method=False, nodes=(NllLossBackward0, NllLoss2DBackward0),
        samples=(Sample((((3, 4), "real"), ((3,), "index"))), Sample((((3, 4), "real"), ((3,), "index")),
                                                                     kwargs={"reduction": "sum"})))
declare("cross_entropy", cross_entropy, namespace=_F, method=False, nodes=(MulBackward1, DivBackward1),
        forward_nodes=(),
        samples=(Sample((((3, 4), "real"), ((3,), "index"))), Sample((((3, 4), "real"), ((3,), "index")),
                                                                     kwargs={"label_smoothing": 0.1})))
declare("binary_cross_entropy_backward", binary_cross_entropy_backward, method=False, public=False,
        nodes=(BinaryCrossEntropyBackwardBackward0,))
declare("binary_cross_entropy", binary_cross_entropy, namespace=_F, method=False,
        nodes=(BinaryCrossEntropyBackward0,), samples=(Sample((((3, 4), "probability"), ((3, 4), "probability"))),
                                                       Sample((((3, 4), "probability"), ((3, 4), "probability")),
                                                              kwargs={"reduction": "none"})))
declare("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits, namespace=_F, method=False,
        nodes=(BinaryCrossEntropyWithLogitsBackward0,),
        samples=(Sample((((3, 4), "real"), ((3, 4), "probability"))),
                 Sample((((3, 4), "real"), ((3, 4), "probability")), kwargs={"reduction": "none"})))
declare("kl_div", kl_div, namespace=_F, method=False,  # ('mean', which warns, in test_census_names.py)
        samples=(Sample((((3, 4), "real"), ((3, 4), "positive")), kwargs={"reduction": "sum"}),
                 Sample((((3, 4), "real"), ((3, 4), "positive")), kwargs={"reduction": "batchmean"}),
                 Sample((((3, 4), "real"), ((3, 4), "real")), kwargs={"reduction": "sum", "log_target": True}),
                 Sample((((3, 4), "real"), ((3, 4), "positive")), kwargs={"reduction": "none"})))


# -- smooth_l1_loss: squared near 0, absolute beyond beta ----------------------------------------------------------
def _smooth_l1_backward(grad_output, self, target, reduction, beta):
    """PyTorch's smooth_l1_loss_backward on arrays: the slope of the loss times grad_output, / N for a mean."""
    d = self - target  # PyTorch's order of cases: beyond -beta, beyond beta, else d / beta (so nan stays nan)
    slope = np.where(d < -beta, -1.0, np.where(d > beta, 1.0, d / beta)) if beta > 0 else np.sign(d)
    return scaled(slope * grad_output, None, reduction, numel(self))


def _smooth_l1_double_backward(g, self, target, reduction, beta):
    """PyTorch's smooth_l1_loss_double_backward: g where |self - target| < beta, / beta, / N for a mean (the
    slope's own slope; zeros for beta 0, where the slope is a step)."""
    if beta == 0:
        return np.zeros_like(xp.data(g))
    inside = (np.abs(xp.data(self) - xp.data(target)) < beta).astype(xp.data(g).dtype)
    out = g * inside / beta
    return out / numel(self) if reduction == MEAN else out


# PyTorch's fused backward op of smooth_l1_loss (as mse_loss's): a create_graph backward records
# SmoothL1LossBackwardBackward0, whose own gradients are the double-backward formula above
SmoothL1LossBackwardBackward0 = rule(
    "SmoothL1LossBackwardBackward0", "grad_output self target", saves="grad_output self target reduction beta",
    forward=lambda grad_output_t, self_t, target_t, grad_output, self, target, reduction, beta:
    _smooth_l1_double_backward((self_t - target_t) * grad_output, self, target, reduction, beta)
    + smooth_l1_loss_backward(grad_output_t, self, target, reduction, beta),
    text="grad_grad_output = smooth_l1_loss_backward(grad), grad_self = grad * grad_output / beta where "
         "|self - target| < beta, / N,  grad_target = -grad_self",
    grad_output=lambda grad, grad_output, self, target, reduction, beta:
    xp.sum_to(smooth_l1_loss_backward(grad, self, target, reduction, beta), tuple(grad_output.shape)),
    self=lambda grad, grad_output, self, target, reduction, beta:
    _smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta),
    target=lambda grad, grad_output, self, target, reduction, beta:
    -_smooth_l1_double_backward(grad * grad_output, self, target, reduction, beta))


def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    """smooth_l1_loss's backward op: on arrays the kernel, on Tensors the op that records
    SmoothL1LossBackwardBackward0 (the result has self's dtype, as PyTorch's kernel writes it)."""
    dtype = xp.data(self).dtype
    if not (xp.is_t(grad_output) or xp.is_t(self) or xp.is_t(target)):
        res = GRAD.quiet.run(_smooth_l1_backward, grad_output, self, target, reduction, beta)
        return np.asarray(res).astype(dtype, copy=False)
    ts = tuple(t if xp.is_t(t) else make(np.asarray(t)) for t in (grad_output, self, target))
    res = GRAD.quiet.run(_smooth_l1_backward, *(t._data for t in ts), reduction, beta)
    res = np.asarray(res).astype(dtype, copy=False)
    if _tracked(*ts):
        return record(SmoothL1LossBackwardBackward0, res, ts, reduction=reduction, beta=beta)
    return make(res)


SmoothL1LossBackward0 = rule("SmoothL1LossBackward0", "self target", saves="self target reduction beta",
                             text="grad_self = grad * ((self - target) / beta if |self - target| < beta else "
                                  "sign(self - target)) / N,  grad_target = -grad_self", forward="reduction",
                             self=lambda grad, self, target, reduction, beta:
                             smooth_l1_loss_backward(grad, self, target, reduction, beta),
                             target=lambda grad, self, target, reduction, beta:
                             smooth_l1_loss_backward(grad, target, self, reduction, beta))  # the roles swapped


def _smooth_l1(x: np.ndarray, y: np.ndarray, beta: float) -> np.ndarray:
    d = np.abs(x - y)
    return np.where(d < beta, 0.5 * d * d / beta if beta > 0 else d, d - 0.5 * beta).astype(d.dtype)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d² / beta where |d| < beta, else |d| - 0.5 beta (d = input - target): the Huber loss scaled by 1/beta."""
    red = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:  # PyTorch's functional calls l1_loss then: its graph, (input - target).abs() reduced
        return l1_loss(input, target, size_average, reduce, reduction)
    return _smooth_l1_loss(*_pointwise_loss_args("smooth_l1_loss", input, target, None), red, beta)


def _smooth_l1_loss(input: Tensor, target: Tensor, red: int, beta: float) -> Tensor:
    """smooth_l1_loss of operands of one shape: one SmoothL1LossBackward0 node."""
    per = GRAD.quiet.run(_smooth_l1, input._data, target._data, beta)  # (inf - inf is nan, as PyTorch's)
    res = _reduce(per, red)
    if GRAD.mode > 0 and (input._requires_grad or target._requires_grad):
        return record(SmoothL1LossBackward0, res, (input, target), reduction=red, beta=beta)
    return make(res)


# the one-node cores carry tangents under forward AD, also behind a broadcast target (then the ops run as composites)
_mse = forward_aware(_mse, (MseLossBackward0,), "mse_loss")
_smooth_l1_loss = forward_aware(_smooth_l1_loss, (SmoothL1LossBackward0,), "smooth_l1_loss")
declare("smooth_l1_loss_backward", smooth_l1_loss_backward, method=False, public=False,
        nodes=(SmoothL1LossBackwardBackward0,))
declare("smooth_l1_loss", smooth_l1_loss, namespace=_F, method=False, nodes=(SmoothL1LossBackward0,),
        samples=(Sample((((3, 4), "real"), ((3, 4), "real"))),
                 Sample((((3, 4), "real"), ((3, 4), "const")), kwargs={"reduction": "sum", "beta": 0.5}),
                 Sample((((3, 4), "real"), ((3, 4), "real")), kwargs={"reduction": "none"})))
