"""Normalization: layer_norm and batch_norm (torch.nn.functional), each one node as in PyTorch.

Both standardise the input over some dims, `x̂ = (x - mean) * rstd` with `rstd = 1 / sqrt(var + eps)`, then
scale and shift it (`y = x̂ * weight + bias`): layer_norm over the trailing `normalized_shape` dims of each
sample, batch_norm over the batch and spatial dims of each channel (dim 1). So their gradients share one
formula (`_input_grad`): `grad_x = rstd * (g - mean(g) - x̂ * mean(g * x̂))` with `g = grad * weight`, the
means over the normalized dims.

The plain backward reads the mean and rstd saved at forward time (PyTorch's `result1`, `result2`); under
`create_graph=True` they are recomputed from the input with Tensor ops, so the second derivative sees how
they depend on it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _dtypes, _linspace, _moments
from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .fused import joining_rule, joins
from .recording import record, rule
from .registry import Sample, declare


# -- the shared formulas (arrays on the plain path, Tensors under create_graph) ----------------------------------
class _Over(NamedTuple):
    """What an input was standardised over: the dims, eps, and the mean and rstd saved at forward time."""

    dims: tuple
    eps: float
    mean: object
    rstd: object


def _mean(a, dims: tuple):
    return a.mean(dims, keepdim=True) if xp.is_t(a) else a.mean(axis=dims, keepdims=True)


def _sum(a, dims: tuple):
    return a.sum(dims) if xp.is_t(a) else a.sum(axis=dims)


def _stats(input, over: _Over):
    """(mean, rstd): the saved arrays, or recomputed from a Tensor input (so they are differentiable)."""
    if not xp.is_t(input):
        return over.mean, over.rstd
    mu = _mean(input, over.dims)
    centered = input - mu
    r = (_mean(centered * centered, over.dims) + over.eps).rsqrt()
    saved = np.asarray(over.rstd)
    return mu, (xp.where(np.isnan(saved), np.nan, r) if np.isnan(saved).any() else r)  # (see _ln_moments)


def _input_grad(grad, input, weight, over: _Over):
    """d loss / d input of `(input - mean) * rstd * weight`, mean and rstd taken over `over.dims`."""
    mu, r = _stats(input, over)
    xhat = (input - mu) * r
    g = grad if weight is None else grad * weight
    return r * (g - _mean(g, over.dims) - xhat * _mean(g * xhat, over.dims))


def _weight_grad(grad, input, over: _Over, keep: tuple):
    """sum of grad * x̂ over the dims `keep` (the ones the weight does not have)."""
    mu, r = _stats(input, over)
    return _sum(grad * ((input - mu) * r), keep)


def _tangent(input_t, input, over: _Over, affine: tuple):
    """The tangent of `x̂ * weight + bias`: x̂'s Jacobian is symmetric, so x̂_t is the input gradient's formula
    applied to input_t (no weight); then the product rule. `affine`: (weight, weight_t, bias_t), weight None or
    shaped to broadcast (an absent weight or bias has a zero tangent)."""
    weight, weight_t, bias_t = affine
    xhat_t = _input_grad(input_t, input, None, over)
    if weight is None:
        return xhat_t + bias_t
    mu, r = _stats(input, over)
    return xhat_t * weight + (input - mu) * r * weight_t + bias_t


# -- layer_norm ------------------------------------------------------------------------------------------------
def _ln_dims(input, normalized_shape) -> tuple:
    return tuple(range(len(input.shape) - len(normalized_shape), len(input.shape)))


def _ln_lead(input, normalized_shape) -> tuple:
    return tuple(range(len(input.shape) - len(normalized_shape)))


def _ln_over(input, normalized_shape, _eps, result1, result2) -> _Over:
    return _Over(_ln_dims(input, normalized_shape), _eps, result1, result2)


NativeLayerNormBackwardBackward0 = joining_rule("NativeLayerNormBackwardBackward0",
                                               "grad_output input weight bias")
NativeLayerNormBackward0 = rule(
    "NativeLayerNormBackward0", "input weight bias", saves="input normalized_shape weight bias result1 result2 _eps",
    text="grad_input = rstd * (g - mean(g) - x̂ * mean(g * x̂)), g = grad * weight;  grad_weight = Σ grad * x̂;  "
         "grad_bias = Σ grad",
    shown={"result1": lambda node, v: make(v), "result2": lambda node, v: make(v)},
    forward=lambda input_t, weight_t, bias_t, input, weight, normalized_shape, result1, result2, _eps: _tangent(
        input_t, input, _Over(_ln_dims(input, normalized_shape), _eps, result1, result2), (weight, weight_t, bias_t)),
    # (`joins`: under create_graph each gradient requires grad when grad, input, weight or bias does, as PyTorch's
    # native_layer_norm_backward's, which takes them all)
    input=joins(NativeLayerNormBackwardBackward0, lambda grad, input, weight, bias, normalized_shape, result1, result2,
                _eps: (_input_grad if xp.is_t(grad) else _ln_kernel_input_grad)(
                    grad, input, weight, _ln_over(input, normalized_shape, _eps, result1, result2))),
    weight=joins(NativeLayerNormBackwardBackward0, lambda grad, input, weight, bias, normalized_shape, result1, result2,
                 _eps: _weight_grad(grad, input, _ln_over(input, normalized_shape, _eps, result1, result2),
                                    _ln_lead(input, normalized_shape))),
    bias=joins(NativeLayerNormBackwardBackward0, lambda grad, input, weight, bias, normalized_shape:
               _sum(grad, tuple(range(len(grad.shape) - len(normalized_shape))))))


def _ln_kernel_input_grad(grad: np.ndarray, input: np.ndarray, weight, over: _Over) -> np.ndarray:
    """layer_norm's input gradient arranged as PyTorch's CPU kernel (`LayerNormBackwardKernelImpl`), whose order of
    operations decides the signs of zeros (a zero grad times a negative weight): per row ds = Σ dy·x·w and
    db = Σ dy·w, then dx = a·dy·w + b·x + c with a = rstd, b = (db·mean - ds)·a³/N, c = -b·mean - db·a/N."""
    a, mean = over.rstd, over.mean
    scale = input.dtype.type(1 / math.prod(input.shape[d] for d in over.dims))
    with np.errstate(all="ignore"):
        dyx, dyw = (grad * input, grad) if weight is None else (grad * input * weight, grad * weight)
        ds = dyx.sum(axis=over.dims, keepdims=True, initial=-0.0)  # (its sums start from the first term: -0.s
        db = dyw.sum(axis=over.dims, keepdims=True, initial=-0.0)  # sum to -0., where NumPy starts from +0.)
        b = (db * mean - ds) * a * a * a * scale
        c = -b * mean - db * a * scale
        return (a * grad if weight is None else a * grad * weight) + b * input + c


def _ln_moments(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """mean and rstd of each row. float64: as PyTorch's CPU kernel rounds them (its Welford and cascade order,
    `_moments.row_moments`, so a row like [1e-300, 1e300] has a nan variance there too). float32 and float16: NumPy's
    mean and a two-pass variance, an ulp or so away: the kernel's order costs a float32 GPT step 22% (W9)."""
    keep = x.shape[:x.ndim - len(dims)] + (1,) * len(dims)
    if x.dtype == np.float64 and x.size:
        mean, var = _moments.row_moments(np.ascontiguousarray(x).reshape(math.prod(keep), -1))
        mean, var = mean.reshape(keep), var.reshape(keep)
    else:
        mean = x.mean(axis=dims, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axis=dims, keepdims=True)
        var[np.isinf(mean * mean)] = np.nan
    return mean, 1 / np.sqrt(var + np.asarray(eps, x.dtype))


def _check_dtypes(x: np.ndarray, *params) -> None:
    """The dtypes PyTorch's CPU kernels accept: the parameters (weight, bias, running statistics, in this order)
    of the input's dtype; or, when the first given one differs ("mixed"), all float32 with a float16 input.
    Without it NumPy would promote silently (a float64 bias made a float32 layer's output float64)."""
    given = [p._data.dtype for p in params if p is not None]
    if not given:
        return
    if given[0] == x.dtype:
        for d in given:
            if d != x.dtype:
                raise RuntimeError(f"expected scalar type {_type_name(x.dtype)} but found {_type_name(d)}")
        return
    if any(d != np.float32 for d in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if x.dtype != np.float16:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _type_name(d: np.dtype) -> str:
    return _dtypes.FROM_NP[d]._legacy[:-6]


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Standardise each sample over its last len(normalized_shape) dims, then `* weight + bias`."""
    shape = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(
        int(s) for s in normalized_shape)
    x = input._data
    if x.shape[x.ndim - len(shape):] != shape or len(shape) > x.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(map(str, shape))}], but got input of size{list(x.shape)}")
    _check_dtypes(x, weight, bias)
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    mean, rstd = GRAD.quiet.run(_ln_moments, x, dims, eps)
    normalised = GRAD.quiet.run(lambda: (x - mean) * rstd)
    res = normalised.copy()
    if weight is not None:  # (an inf weight times a zero: nan, with no NumPy warning)
        GRAD.quiet.run(np.multiply, res, weight._data, res)
    if bias is not None:
        GRAD.quiet.run(np.add, res, bias._data, res)
    else:  # PyTorch's kernel adds a zero bias in one fused multiply-add: an exact zero product becomes +0., one that
        exact = normalised == 0 if weight is None else (normalised == 0) | (weight._data == 0)  # underflows keeps
        res[(res == 0) & exact] = 0.0  # its sign
    if GRAD.mode > 0 and any(t is not None and t._requires_grad for t in (input, weight, bias)):
        return record(NativeLayerNormBackward0, res, (input, weight, bias), normalized_shape=shape, result1=mean,
                      result2=rstd, _eps=eps)
    return make(res)


# -- batch_norm ------------------------------------------------------------------------------------------------
def _channel_dims(input) -> tuple:
    """Every dim but the channels (dim 1): what batch_norm averages over."""
    return (0,) + tuple(range(2, len(input.shape)))


def _per_channel(a, ndim: int):
    """A (C,) vector shaped to broadcast against an (N, C, ...) input."""
    return None if a is None else xp.reshape(a, (1, -1) + (1,) * (ndim - 2))


def _bn_kernel_grads(grad, x, w, training: bool, stats: tuple):
    """d input as PyTorch's CPU kernel computes it, step by step (its order of operations decides the signs of
    zeros): per channel, sum = Σ dy and dotp = Σ (x - mean)·dy (accumulated from +0.); training:
    dx = (dy - sum / N - (x - mean)·k)·invstd·w with k = dotp·invstd²/N; eval: dx = dy·invstd·w.
    Arrays, or Tensors under create_graph (then mean and invstd are recomputed from the input, differentiable)."""
    mean, invstd = stats
    w = 1.0 if w is None else w
    if not training:
        return grad * invstd * w
    dims = _channel_dims(x)
    n = math.prod(x.shape) // x.shape[1]
    dx = (x - mean) * (_channel_sum((x - mean) * grad, dims) * invstd * invstd / n)
    return (grad - _channel_sum(grad, dims) / n - dx) * invstd * w


def _channel_sum(a, dims: tuple):
    """A per-channel sum kept broadcastable; on arrays from +0. (PyTorch's accumulator: a sum of -0.s is +0.)."""
    return a.sum(dims, keepdim=True) if xp.is_t(a) else a.sum(axis=dims, keepdims=True) + 0.0


def _bn_input_grad(grad, input, weight, training, eps, _stats):
    return _bn_grad(grad, input, weight, training, eps, _stats)


def _bn_grad(grad, input, weight, training: bool, eps: float, saved: tuple):
    """batch_norm's input gradient; in training its mean and invstd recomputed from a Tensor input (create_graph)."""
    stats = _stats(input, _Over(_channel_dims(input), eps, *saved)) if training else saved
    w = _per_channel(weight, len(input.shape))
    if xp.is_t(grad):  # (Tensor ops run quietly by themselves)
        return _bn_kernel_grads(grad, input, w, training, stats)
    return GRAD.quiet.run(_bn_kernel_grads, grad, input, w, training, stats)


def _bn_tangent(tangents: tuple, input, weight, training, eps, _stats):
    """batch_norm's tangent: with the batch's statistics as layer_norm's (per channel); in eval, with the running
    ones, a per-channel affine map of the input."""
    input_t, weight_t, bias_t = tangents
    nd = len(input.shape)
    affine = (_per_channel(weight, nd), _per_channel(weight_t, nd), _per_channel(bias_t, nd))
    mean, invstd = _stats
    if training:
        return _tangent(input_t, input, _Over(_channel_dims(input), eps, mean, invstd), affine)
    w, w_t, b_t = affine
    scale = invstd if w is None else w * invstd
    return input_t * scale + (input - mean) * invstd * w_t + b_t


def _bn_weight_grad(grad, input, weight, training, eps, _stats):
    mean, invstd = _stats
    dims = _channel_dims(input)
    if not training:
        return _sum(grad * ((input - mean) * invstd), dims)
    return _weight_grad(grad, input, _Over(dims, eps, mean, invstd), dims)


NativeBatchNormBackwardBackward0 = joining_rule("NativeBatchNormBackwardBackward0", "grad_output input weight")
NativeBatchNormBackward0 = rule(
    "NativeBatchNormBackward0", "input weight bias",
    saves="input weight running_mean running_var result1 result2 training eps _stats",
    text="training: grad_input = rstd * (g - mean(g) - x̂ * mean(g * x̂)), g = grad * weight (means per channel); "
         "eval: grad_input = grad * weight * rstd;  grad_weight = Σ grad * x̂;  grad_bias = Σ grad",
    shown={"result1": lambda node, v: make(v), "result2": lambda node, v: make(v)},
    forward=lambda input_t, weight_t, bias_t, input, weight, training, eps, _stats:
    _bn_tangent((input_t, weight_t, bias_t), input, weight, training, eps, _stats),
    # (`joins`: under create_graph each gradient requires grad when grad, input or weight does, as PyTorch's
    # native_batch_norm_backward's, which takes them (not the bias))
    input=joins(NativeBatchNormBackwardBackward0, _bn_input_grad),
    weight=joins(NativeBatchNormBackwardBackward0, _bn_weight_grad),
    bias=joins(NativeBatchNormBackwardBackward0, lambda grad, input, weight: _sum(grad, _channel_dims(grad))))


def _check_batch(x: np.ndarray) -> None:
    size = x.shape[0] * math.prod(x.shape[2:])
    if size == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"minigrad.Size([{', '.join(map(str, x.shape))}])")


def _affine(x: np.ndarray, mean: np.ndarray, invstd: np.ndarray, weight, bias, bshape: tuple) -> np.ndarray:
    """PyTorch's CPU kernel: x·alpha + beta per channel, alpha = invstd·weight, beta = bias - mean·alpha (float16 in
    float32, its opmath type, rounded once at the end). Its compiled float32 kernel fuses x·alpha + beta into one FMA
    (one rounding): an x·alpha past float32's range comes back with beta (make sweep-extremes: batch_norm at ±3e38).
    float64's FMA is not emulated (an exact one costs ten times the plain sum): its last bit may differ."""
    ct = np.dtype(np.float32) if x.dtype == np.float16 else x.dtype
    mean, invstd = mean.astype(ct, copy=False), invstd.astype(ct, copy=False)
    alpha = invstd if weight is None else invstd * weight._data.reshape(bshape).astype(ct, copy=False)
    bias = np.zeros((), ct) if bias is None else bias._data.reshape(bshape).astype(ct, copy=False)
    beta = bias - mean * alpha  # (from +0 without a bias: 0 - 0 is +0., where -(0) was -0.)
    plain = x.astype(ct, copy=False) * alpha + beta
    if x.dtype == np.float16 or not x.size:
        return plain.astype(x.dtype, copy=False)
    wide = np.float64  # float32 and float64: one fused multiply-add, as the vectorised kernel (x·alpha is not rounded)
    fused = _linspace.fma(x.astype(wide), alpha.astype(wide), beta.astype(wide), x.dtype)
    # (a zero is exact either way, and the unfused sum has IEEE's sign of it; inf and nan: the plain sum's)
    return np.where(np.isfinite(fused) & (fused != 0), fused, plain).astype(x.dtype, copy=False)


def _batch_stats(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """(mean, biased var, invstd, Σ (x - mean)²) per channel. With spatial dims (the contiguous kernel,
    `batch_norm_cpu_collect_stats_contiguous_impl`), as PyTorch rounds them: each channel's sum accumulated in
    order in double, the mean rounded to the dtype, Σ (x - mean)² in order in double and stored in the dtype, var
    that over N in the dtype, invstd = 1 / sqrt(var + eps) in double. (N, C) inputs (PyTorch's channels-last
    kernel, per-thread partial sums) and float16: NumPy's mean and var."""
    if x.ndim < 3 or x.shape[2:] == (1,) * (x.ndim - 2) or x.dtype not in (np.float32, np.float64):
        var = x.var(axis=dims)
        return x.mean(axis=dims), var, 1 / np.sqrt(var + np.asarray(eps, x.dtype)), var * (x.size // x.shape[1])
    rows = np.moveaxis(x, 1, 0).reshape(x.shape[1], -1)  # each channel's values in memory order
    n = rows.shape[1]
    mean = (np.cumsum(rows, axis=1, dtype=np.float64)[:, -1] / n).astype(x.dtype)
    centered = rows - mean[:, None]
    var_sum = np.cumsum(centered * centered, axis=1, dtype=np.float64)[:, -1].astype(x.dtype)
    var = var_sum / x.dtype.type(n)
    return mean, var, (1 / np.sqrt(var.astype(np.float64) + eps)).astype(x.dtype), var_sum


def _update_running(rm: np.ndarray, rv: np.ndarray, stats: tuple, momentum: float, n: int) -> None:
    """running = momentum * batch + (1 - momentum) * running, in place, as PyTorch's kernel rounds it: momentum in
    the statistics' dtype, the unbiased variance Σ (x - mean)² / (n - 1) in it too, and the variance's update summed
    in double (the kernel's accumulate type meets a float product there)."""
    mean, var_sum = stats
    t = rm.dtype.type
    m = t(momentum)
    rm[...] = m * mean.astype(t) + (t(1) - m) * rm
    unbiased = var_sum.astype(t) / t(max(n - 1, 1))
    rv[...] = np.float64(m) * unbiased.astype(np.float64) + ((t(1) - m) * rv).astype(np.float64)


def _empty_batch(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """PyTorch's batch_norm of an empty input: no statistics (none to take, the running ones untouched), a clone
    times weight[0] plus bias[0], so the gradient still reaches weight and bias (CloneBackward0, MulBackward0,
    AddBackward0)."""
    out = input.clone()
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Standardise each channel (dim 1) over the batch and spatial dims, then `* weight + bias`.

    training: with the batch's statistics, and the running ones (if given) move towards them in place:
    `running = (1 - momentum) * running + momentum * batch` (the unbiased variance); eval: with the running
    statistics."""
    x = input._data
    if x.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {x.ndim}D input)")
    if x.size == 0:
        return _empty_batch(input, weight, bias)
    if training:
        _check_batch(x)
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None and not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t._data.size != x.shape[1]:  # PyTorch's order of checks
            raise RuntimeError(f"{name} should contain {x.shape[1]} elements not {t._data.size}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _check_dtypes(x, weight, bias, running_mean, running_var)
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if training or running_mean is None:
        with np.errstate(all="ignore"):  # (inf - inf is nan, 1e300² is inf: silently, as in PyTorch)
            mean, var, invstd, var_sum = _batch_stats(x, dims, eps)
        if training and running_mean is not None:
            _update_running(running_mean._data, running_var._data, (mean, var_sum), momentum, x.size // x.shape[1])
        result1, result2 = mean, invstd
    else:
        mean = running_mean._data.astype(x.dtype, copy=False)
        invstd = 1 / np.sqrt(running_var._data.astype(x.dtype, copy=False) + np.asarray(eps, x.dtype))
        result1 = result2 = np.zeros(0, x.dtype)
    res = GRAD.quiet.run(_affine, x, mean.reshape(bshape), invstd.reshape(bshape), weight, bias, bshape)
    if GRAD.mode > 0 and any(t is not None and t._requires_grad for t in (input, weight, bias)):
        return record(NativeBatchNormBackward0, res, (input, weight, bias), running_mean=running_mean,
                      running_var=running_var, result1=result1, result2=result2, training=bool(training), eps=eps,
                      _stats=(mean.reshape(bshape), invstd.reshape(bshape)))
    return make(res)


# == declarations ===============================================================================================
_AFFINE = ("weight", "bias")
declare("layer_norm", layer_norm, namespace="nn.functional", method=False, nodes=(NativeLayerNormBackward0,),
        samples=(Sample((((2, 5), "real"),), ((5,),)),
                 Sample((((2, 5), "real"), ((5,), "real"), ((5,), "real")), ((5,),), keywords=_AFFINE),
                 Sample((((2, 3, 4), "real"), ((3, 4), "real"), ((3, 4), "real")), ((3, 4),), keywords=_AFFINE),
                 Sample((((3, 4), "real"), ((4,), "real")), ((4,),), {"eps": 0.1}, keywords=("weight",))))
_STATS = (((3,), "const"), ((3,), "positive_const"))
declare("batch_norm", batch_norm, namespace="nn.functional", method=False, nodes=(NativeBatchNormBackward0,),
        samples=(Sample((((4, 3), "real"), *_STATS, ((3,), "real"), ((3,), "real")), kwargs={"training": True},
                        keywords=("running_mean", "running_var", "weight", "bias")),
                 Sample((((4, 3), "real"), *_STATS), kwargs={"training": True},
                        keywords=("running_mean", "running_var")),
                 Sample((((2, 3, 2, 2), "real"), *_STATS, ((3,), "real"), ((3,), "real")),
                        kwargs={"training": True, "momentum": 0.3}, keywords=("running_mean", "running_var", "weight",
                                                                              "bias")),
                 Sample((((4, 3, 2), "real"), *_STATS, ((3,), "real"), ((3,), "real")),
                        keywords=("running_mean", "running_var", "weight", "bias")),
                 Sample((((4, 3), "real"),), (None, None), {"training": True})))
