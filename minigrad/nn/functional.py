"""`minigrad.nn.functional` (import as F): layers and losses as plain functions.

Each function builds the same graph PyTorch builds for it (`F.linear` -> AddmmBackward0 fed by
TBackward0, `F.cross_entropy` -> NllLossBackward0 fed by LogSoftmaxBackward0, ...), so what a
learner sees in `grad_fn` and `next_functions` matches PyTorch. Forward values are computed with
NumPy; a node is recorded only when grad mode is on and an input requires grad.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._missing import missing_name
from .._random import default_generator
from .._state import GRAD
from .._tensor import Tensor, make
from ..ops import derivatives as R
from ..ops import pointwise as P
from ..ops import reduce as Rd
from ..ops._record import record
from ..ops.linalg import matmul
from . import _derivatives as N

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "dropout", "gelu", "l1_loss",
    "leaky_relu", "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu", "sigmoid", "softmax", "tanh",
]

_REDUCTIONS = {"none": N.NONE, "mean": N.MEAN, "sum": N.SUM}


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
    if reduction == N.MEAN:
        return np.asarray(arr.mean() if arr.size else np.nan, arr.dtype)
    if reduction == N.SUM:
        return np.asarray(arr.sum(), arr.dtype)
    return arr


def _kind(d: np.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "bool": "Bool", "uint8": "Byte"}.get(np.dtype(d).name, np.dtype(d).name)


def _strides(a: np.ndarray) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple:
    """torch.broadcast_tensors for a loss's (input, target): views only where shapes differ."""
    shape = np.broadcast_shapes(input._data.shape, target._data.shape)
    if input._data.shape != shape:
        input = input.expand(shape)
    if target._data.shape != shape:
        target = target.expand(shape)
    return input, target


def _size_warning(input: Tensor, target: Tensor) -> None:
    from ..autograd.engine import user_stacklevel

    warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                  "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same "
                  "size.", UserWarning, stacklevel=user_stacklevel())


def _scalar_node(cls, t: Tensor, value, res: np.ndarray) -> Tensor:
    """`t * 0.5` / `t / n` as PyTorch's C++ losses write them (MulBackward1 / DivBackward1)."""
    if _tracked(t):
        return record(cls, np.asarray(res), (t,), other=value)
    return make(np.asarray(res))


# -- layers ------------------------------------------------------------------------------------------
def _addmm(bias: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """bias + mat1 @ mat2 in one node (AddmmBackward0), as nn.Linear computes it."""
    a, b = mat1._data, mat2._data
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor" if a.ndim != 2
                           else f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_kind(a.dtype)} and {_kind(b.dtype)}")
    if bias._data.dtype != a.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_kind(bias._data.dtype)} and "
                           f"{_kind(a.dtype)}")
    res = a @ b
    try:
        np.add(res, bias._data, out=res)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({res.shape[-1]}) must match the existing size "
                           f"({bias._data.shape[-1]}) at non-singleton dimension {bias._data.ndim - 1}.  Target "
                           f"sizes: [{res.shape[0]}, {res.shape[1]}].  Tensor sizes: "
                           f"[{', '.join(map(str, bias._data.shape))}]") from None
    if _tracked(bias, mat1, mat2):
        return record(N.AddmmBackward0, res, (bias, mat1, mat2), alpha=1, beta=1, mat1_sym_sizes=a.shape,
                      mat1_sym_strides=_strides(a), mat2_sym_sizes=b.shape, mat2_sym_strides=_strides(b))
    return make(res)


def _mm_1d(input: Tensor, mat2: Tensor) -> Tensor:
    """A vector times a matrix, as at::matmul does it: unsqueeze, mm, then squeeze_ (SqueezeBackward4)."""
    out = input.unsqueeze(0).mm(mat2)
    res = out._data.reshape(out._data.shape[1:])
    if _tracked(out):
        return record(R.SqueezeBackward4, res, (out,), dim=0, self_sym_sizes=out._data.shape)
    return make(res)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, with PyTorch's graph: AddmmBackward0 (2-D input), ViewBackward0 around it otherwise."""
    nd = input._data.ndim
    if bias is not None and nd == 2:
        return _addmm(bias, input, weight.t())
    if bias is not None and nd >= 1 and input._data.flags.c_contiguous and (nd == 3 or bias._data.ndim == 1):
        lead = input._data.shape[:-1]
        rows = 1
        for s in lead:
            rows *= s
        out = _addmm(bias, input.reshape(rows, input._data.shape[-1]), weight.t())
        return out.view(*lead, out._data.shape[1])
    out = _mm_1d(input, weight.t()) if nd == 1 else matmul(input, weight.t())
    return out if bias is None else out + bias


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if inplace:
        raise NotImplementedError("minigrad: F.leaky_relu(inplace=True) is not implemented; use inplace=False.")
    return P.leaky_relu(input, negative_slope)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    if approximate != "none":
        raise NotImplementedError("minigrad: F.gelu(approximate='tanh') is not implemented; the exact (erf) form is.")
    return P.gelu(input, approximate)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return Rd.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    return Rd.log_softmax(input, dim, dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p): `input * mask/(1-p)` (MulBackward0).

    The mask comes from minigrad's generator (`manual_seed`), so it differs from PyTorch's draws.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input._data.size == 0:
        return input
    d = input._data
    if p == 1:
        noise = np.zeros(d.shape, d.dtype)
    else:
        keep = default_generator._np.random(d.shape) < (1 - p)
        noise = keep.astype(d.dtype) / np.asarray(1 - p, d.dtype)
    noise_t = make(noise)
    return input.mul_(noise_t) if inplace else input * noise_t


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    t = tensor._data
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(t.max()) + 1 if t.size else 0
    if t.size and (t.min() < 0 or t.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if t.size and t.max() >= num_classes
                           else "Class values must be non-negative.")
    return make((t[..., None] == np.arange(num_classes)).astype(np.int64))


# -- losses ----------------------------------------------------------------------------------------------
def _pointwise_loss_args(name: str, input: Tensor, target: Tensor, size_average, reduce, reduction: str, weight):
    """The checks mse_loss and l1_loss share: the reduction, no `weight`, and PyTorch's warning and
    broadcast when the target's shape differs from the input's."""
    red = _reduction(reduction, size_average, reduce)
    if weight is not None:
        raise NotImplementedError(f"minigrad: {name}(weight=...) is not implemented.")
    if target._data.shape != input._data.shape:
        _size_warning(input, target)
        input, target = _broadcast_pair(input, target)
    if target._data.dtype.kind in "iu" and input._data.dtype.kind == "f":
        # type promotion, as PyTorch: an integer target (the blitz's `torch.arange(1, 11)`) takes the input's dtype
        target = make(target._data.astype(input._data.dtype))
    return input, target, red


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight=None) -> Tensor:
    """Mean squared error (MseLossBackward0)."""
    input, target, red = _pointwise_loss_args("mse_loss", input, target, size_average, reduce, reduction, weight)
    d = input._data - target._data
    res = _reduce(d * d, red)
    if _tracked(input, target):
        return record(N.MseLossBackward0, res, (input, target), reduction=red)
    return make(res)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight=None) -> Tensor:
    """Mean absolute error: PyTorch composes it, `(input - target).abs().mean()` (MeanBackward0)."""
    input, target, red = _pointwise_loss_args("l1_loss", input, target, size_average, reduce, reduction, weight)
    diff = (input - target).abs()
    return diff.mean() if red == N.MEAN else diff.sum() if red == N.SUM else diff


def _check_target(input: Tensor, target: Tensor) -> None:
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_kind(target._data.dtype)}")
    x, t = input._data, target._data
    if x.ndim == 1:
        if t.ndim != 0:
            raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported (got a "
                               f"{t.ndim}-D target for a 1-D input)")
    elif x.ndim >= 2 and (t.ndim == 0 or t.shape[0] != x.shape[0]):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")


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
    losses = -w * picked
    total = np.asarray(w.sum() if red != N.NONE else 0, x.dtype)
    if red == N.NONE:
        res = losses.reshape(t.shape)
    elif red == N.SUM:
        res = np.asarray(losses.sum(), x.dtype)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            res = np.asarray(losses.sum() / total, x.dtype)
    if _tracked(input):
        return record(cls, res, (input,), weight=weight, reduction=red, ignore_index=ignore_index,
                      total_weight=make(total), target=target)
    return make(res)


def _nll_nd(input: Tensor, target: Tensor, weight, red: int, ignore_index: int) -> Tensor:
    """nll_loss over (C,), (N, C) or (N, C, d1, ...) inputs, dispatched as at::nll_loss_nd."""
    _check_target(input, target)
    shape = input._data.shape
    if len(shape) in (1, 2):
        return _nll(input, target, weight, red, ignore_index, N.NllLossBackward0)
    if tuple(target._data.shape[1:]) != tuple(shape[2:]):
        raise RuntimeError(f"Expected target size [{', '.join(map(str, (shape[0],) + shape[2:]))}], got "
                           f"[{', '.join(map(str, target._data.shape))}]")
    if len(shape) == 4:
        return _nll(input, target, weight, red, ignore_index, N.NllLoss2DBackward0)
    n, c = shape[0], shape[1]
    flat_in = input.contiguous().view(n, c, 1, -1)
    flat_t = target.contiguous().view(n, 1, -1)
    out = _nll(flat_in, flat_t, weight, red, ignore_index, N.NllLoss2DBackward0)
    return out if red != N.NONE else out.view((n,) + shape[2:])


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
                               f"{_kind(target._data.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(logp, target, weight, red, label_smoothing, class_dim)
    if label_smoothing > 0:
        return _cross_entropy_smoothed(logp, target, weight, red, ignore_index, label_smoothing, class_dim)
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
    if red == N.NONE:
        return -prod.sum(class_dim)
    total = -prod.sum()
    if red == N.SUM:
        return total
    n = logp._data.size // n_classes
    return _scalar_node(N.DivBackward1, total, n, total._data / n)


def _cross_entropy_smoothed(logp: Tensor, target: Tensor, weight, red: int, ignore_index: int, smoothing: float,
                            class_dim: int) -> Tensor:
    """Label smoothing, composed as PyTorch's C++ does: (1-ε)·nll + ε/C · (-Σ log p)."""
    n_classes = logp._data.shape[class_dim]
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, logp._data.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if red == N.MEAN:
        if weight is not None:
            kept = target._data[~ignore_mask._data].reshape(-1)
            ret = smooth.sum() / make(np.asarray(weight._data[kept].sum(), weight._data.dtype))
        else:
            ret = smooth.sum() / make(np.asarray((~ignore_mask._data).sum(), np.int64))
    elif red == N.SUM:
        ret = smooth.sum()
    else:
        ret = smooth
    a = 1 - smoothing
    b = smoothing / n_classes
    left = _scalar_node(N.MulBackward1, nll, a, nll._data * np.asarray(a, nll._data.dtype))
    right = _scalar_node(N.MulBackward1, ret, b, ret._data * np.asarray(b, ret._data.dtype))
    return left + right


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-w [t log x + (1-t) log(1-x)] for probabilities x (BinaryCrossEntropyBackward0); logs are floored at -100."""
    red = _reduction(reduction, size_average, reduce)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(np.broadcast_shapes(target._data.shape, weight._data.shape))
    x, t = input._data, target._data
    if ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if ((t < 0) | (t > 1)).any():
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if weight is not None:
        loss = loss * weight._data
    res = _reduce(loss.astype(x.dtype, copy=False), red)
    if _tracked(input, target):
        return record(N.BinaryCrossEntropyBackward0, res, (input, target), weight=weight, reduction=red)
    return make(res)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid and BCE in one numerically stable step (BinaryCrossEntropyWithLogitsBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    x, t = input._data, target._data
    log_sig = N.log_sigmoid(x)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight._data - 1) * t + 1)
    loss = (1 - t) * x - log_sig
    if weight is not None:
        loss = loss * weight._data
    res = _reduce(np.asarray(loss).astype(x.dtype, copy=False), red)
    if _tracked(input, target):
        return record(N.BinaryCrossEntropyWithLogitsBackward0, res, (input, target), weight=weight,
                      pos_weight=pos_weight, reduction=red)
    return make(res)


__getattr__ = missing_name(__name__, "torch.nn.functional")
