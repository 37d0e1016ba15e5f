"""Attention: `F.scaled_dot_product_attention` and the softmax it uses, `torch._safe_softmax` (SafeSoftmaxBackward0).

scaled_dot_product_attention(q, k, v) = softmax(q kᵀ · scale + mask) v, with scale = 1 / sqrt(E) by default.
On the CPU, with inputs that require grad, PyTorch runs its "math" path, a composition of ordinary ops, and
this file writes the same composition, so the graph has PyTorch's nodes (MulBackward1, UnsafeViewBackward0,
BmmBackward0, AddBackward0, SafeSoftmaxBackward0, ...) and the values its rounding:

    q' = q * sqrt(scale)              k' = kᵀ * sqrt(scale)      (both scaled before the product, for range)
    scores = q' @ k' (+ mask)         a boolean mask becomes 0 where True, -inf where False; is_causal: tril
    weights = _safe_softmax(scores)   a row masked everywhere gives zeros, not NaN
    out = dropout(weights) @ v

`_safe_softmax` is softmax with that one difference; its derivative is softmax's.

When the inputs are 4-D (batch, heads, sequence, head dim) with one head dim for all three, no dropout and a
mask that does not require grad (a Transformer's attention), PyTorch runs its fused CPU kernel instead, one
node (ScaledDotProductFlashAttentionForCpuBackward0) that saves the output and the log-sum-exp of each row of
scores; so does minigrad, with the attention's gradients written out (P the attention weights, O the output):

    grad_value = Pᵀ grad      grad_scores = P * (grad Vᵀ - rowsum(grad * O))
    grad_query = grad_scores K * scale      grad_key = grad_scoresᵀ Q * scale
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _dtypes
from .._random import default_generator
from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .losses import MulBackward1, _scalar_node
from .recording import record, rule
from .reductions import softmax_backward_data
from .registry import Sample, declare

SafeSoftmaxBackward0 = rule(
    "SafeSoftmaxBackward0", "self", saves="result dim",
    text="grad_self = result * (grad - sum(grad * result, dim))  (rows that were all -inf: result 0, grad 0)",
    forward=lambda self_t, result, dim: result * (self_t - xp.sum_keep(self_t * result, dim)),
    shown={"dim": lambda node, v: v % (1 << 64)},
    self=lambda grad, result, dim: softmax_backward_data(grad, result, dim))  # (PyTorch's: its fused op)


def _safe_softmax(self: Tensor, dim: int, dtype=None) -> Tensor:
    """softmax(self, dim), except that a slice whose elements are all -inf gives zeros (softmax: NaN)."""
    d = self._data if dtype is None else self._data.astype(_dtypes.to_np(dtype))
    ndim = max(d.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    if d.size:
        masked = np.all(d == -np.inf, axis=dim, keepdims=True)
        with np.errstate(all="ignore"):  # (inf - inf is nan, silently as in PyTorch)
            e = np.exp(d - np.where(masked, 0, d.max(axis=dim, keepdims=True)))
            res = np.where(masked, 0, e / e.sum(axis=dim, keepdims=True)).astype(d.dtype, copy=False)
    else:
        res = d.copy()
    if self._requires_grad and GRAD.mode > 0:
        return record(SafeSoftmaxBackward0, res, (self,), dim=dim)
    return make(res)


# -- the fused kernel's node ---------------------------------------------------------------------------------------
def _factor(query, scale) -> float:
    return 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale


class _Scores(NamedTuple):
    """How the fused kernel made its scores (what its node saves), and each row's log-sum-exp."""

    attn_mask: np.ndarray | None  # additive
    is_causal: bool
    scale: float | None
    logsumexp: np.ndarray


def _scores(query, key, how: _Scores):
    """q kᵀ * scale + mask (arrays, or Tensors under create_graph); 1e300² is inf, silently as in PyTorch."""
    with np.errstate(all="ignore"):
        s = (query @ xp.transpose(key, -2, -1)) * _factor(query, how.scale)
        mask = how.attn_mask
        if how.is_causal:
            mask = np.where(np.tri(query.shape[-2], key.shape[-2], dtype=bool), 0, -np.inf).astype(xp.data(s).dtype)
        if mask is not None:
            s = s + (make(mask) if xp.is_t(s) else mask)
    return s


def _weights(query, key, how: _Scores):
    """The attention weights P: exp(scores - logsumexp) from the saved log-sum-exp; under create_graph the
    softmax of the scores again, so that second derivatives see how P depends on query and key."""
    s = _scores(query, key, how)
    if xp.is_t(s):
        return _safe_softmax(s, -1)
    return np.exp(s - how.logsumexp[..., None])  # a row masked everywhere: exp(-inf - 0), weights 0


def _grad_scores(grad, query, key, value, result, how: _Scores):
    p = _weights(query, key, how)
    return p * (grad @ xp.transpose(value, -2, -1) - xp.sum_keep(grad * result, -1))


ScaledDotProductFlashAttentionForCpuBackward0 = rule(
    "ScaledDotProductFlashAttentionForCpuBackward0", "query key value",
    saves="query key value result logsumexp dropout_p is_causal attn_mask scale _how",
    text="P = softmax(query keyᵀ * scale + mask);  grad_value = Pᵀ grad;  "
         "grad_scores = P * (grad valueᵀ - rowsum(grad * result));  grad_query = grad_scores key * scale;  "
         "grad_key = grad_scoresᵀ query * scale",
    shown={"logsumexp": lambda node, v: make(v), "attn_mask": lambda node, v: None if v is None else make(v)},
    query=lambda grad, query, key, value, result, _how:
    _grad_scores(grad, query, key, value, result, _how) @ key * _factor(query, _how.scale),
    key=lambda grad, query, key, value, result, _how:
    xp.transpose(_grad_scores(grad, query, key, value, result, _how), -2, -1) @ query * _factor(query, _how.scale),
    value=lambda grad, query, key, _how: xp.transpose(_weights(query, key, _how), -2, -1) @ grad)


# PyTorch calls the saved output `output`: the node shows `_saved_output`, not `_saved_result`
_flash = ScaledDotProductFlashAttentionForCpuBackward0
_flash._saved_output, _flash._raw_saved_output = _flash._saved_result, _flash._raw_saved_result
del _flash._saved_result, _flash._raw_saved_result
_flash._exposed = _flash._exposed - {"result"} | {"output"}


def _fused_arrays(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask, is_causal: bool, scale) -> tuple:
    """(output, log-sum-exp) on arrays (run quietly: inf - inf and overflows are nan and inf, as in PyTorch)."""
    s = _scores(q, k, _Scores(mask, is_causal, scale, None))
    top = s.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0, top)
    e = np.exp(s - top)
    total = e.sum(axis=-1, keepdims=True)
    masked = total == 0  # rows masked everywhere: output 0 and, as PyTorch saves it, log-sum-exp 0
    with np.errstate(divide="ignore", invalid="ignore"):
        logsumexp = np.where(masked, 0, np.log(total) + top)[..., 0]
        out = np.where(masked, 0, e / total) @ v
    return out, logsumexp


def _fused(query: Tensor, key: Tensor, value: Tensor, mask, is_causal: bool, scale) -> Tensor:
    """The fused kernel: the same attention in NumPy, its node saving the output and each row's log-sum-exp."""
    mask = None if mask is None else mask._data
    out, logsumexp = GRAD.quiet.run(_fused_arrays, query._data, key._data, value._data, mask, is_causal, scale)
    out = _laid_out_like(query._data, out)
    if GRAD.mode > 0 and (query._requires_grad or key._requires_grad or value._requires_grad):
        return record(ScaledDotProductFlashAttentionForCpuBackward0, out, (query, key, value), logsumexp=logsumexp,
                      dropout_p=0.0, is_causal=bool(is_causal), attn_mask=mask, scale=scale,
                      _how=_Scores(mask, bool(is_causal), scale, logsumexp))
    return make(out)


def _laid_out_like(query: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The output in the query's memory layout, as PyTorch's kernel writes it: in a multi-head layer the heads are
    a transposed view of (sequence, batch, heads, head dim), and a later reshape is then a view, not a copy."""
    if query.flags.c_contiguous:
        return out
    laid_out = np.empty_like(query)  # (order "K": the query's strides)
    laid_out[...] = out
    return laid_out


def _fusable(query: Tensor, key: Tensor, value: Tensor, mask, dropout_p: float) -> bool:
    """Does PyTorch pick its fused CPU kernel: 4-D inputs with equal batch, heads and head dims, no dropout,
    a mask that needs no gradient, non-empty sequences."""
    q, k, v = query.shape, key.shape, value.shape
    return (len(q) == len(k) == len(v) == 4 and q[:2] == k[:2] == v[:2] and q[-1] == k[-1] == v[-1]
            and dropout_p <= 0.0 and (mask is None or not mask._requires_grad) and q[2] > 0 and k[2] > 0)


def _check(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None) -> None:
    """PyTorch's argument checks (sdp::check_tensor_shapes and the dtype checks), with its messages."""
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_c_name(query)} key.dtype: {_c_name(key)} and value.dtype: {_c_name(value)} instead.")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtypes.bool, _dtypes.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {_c_name(attn_mask)} and  query.dtype: {_c_name(query)} instead.")
    if not query.is_floating_point():
        raise RuntimeError(f"expected scalar type Float but found {_c_name(query).split()[-1].capitalize()}")


def _c_name(t: Tensor) -> str:
    """The C++ name PyTorch's messages give a dtype (float, double, long int, ...)."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}[t._data.dtype.name]


def _additive_mask(attn_mask: Tensor | None, is_causal: bool, query: Tensor, key: Tensor) -> Tensor | None:
    """The mask as a tensor to add to the scores: a boolean mask (True: attend) becomes 0 / -inf."""
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        attn_mask = make(np.tril(np.ones((query.shape[-2], key.shape[-2]), bool)))
    if attn_mask is None or attn_mask.dtype != _dtypes.bool:
        return attn_mask
    return make(np.where(attn_mask._data, 0, -np.inf).astype(query._data.dtype))


def dropout_weights(weights: Tensor, p: float) -> Tensor:
    """at::dropout(weights, p, train=True) on attention weights: `weights * keep / (1 - p)` (MulBackward0), keep ~
    Bernoulli(1 - p) from minigrad's generator (PyTorch's draws differ); p = 1 drops everything."""
    d = weights._data
    if p >= 1:
        return weights * make(np.zeros(d.shape, d.dtype))
    keep = default_generator._np.random(d.shape) < (1 - p)
    return weights * make(keep.astype(d.dtype) / np.asarray(1 - p, d.dtype))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ keyᵀ * scale + mask) @ value over the last two dims (query (..., L, E), key (..., S, E),
    value (..., S, Ev) -> (..., L, Ev)); `attn_mask` is boolean (True: attend) or added as is; `is_causal`
    lets position i attend to positions <= i only; `dropout_p` drops attention weights (always, as PyTorch:
    pass 0.0 in evaluation)."""
    if enable_gqa:
        raise NotImplementedError("minigrad: scaled_dot_product_attention(enable_gqa=True) is not implemented.")
    _check(query, key, value, attn_mask)
    if _fusable(query, key, value, attn_mask, dropout_p):
        mask = None if is_causal else _additive_mask(attn_mask, False, query, key)
        return _fused(query, key, value, mask, is_causal, scale)
    mask = _additive_mask(attn_mask, is_causal, query, key)
    factor = math.sqrt(1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)
    q = _scalar_node(MulBackward1, query, factor, query._data * factor)
    kt = key.transpose(-2, -1)  # (Tensor's methods and operators: under forward AD they carry tangents)
    k = _scalar_node(MulBackward1, kt, factor, kt._data * factor)
    scores = q @ k
    if mask is not None:
        shape = np.broadcast_shapes(scores._data.shape, mask._data.shape)
        if shape != scores._data.shape:  # PyTorch adds the mask in place: it may not grow the scores
            raise RuntimeError(f"output with shape [{', '.join(map(str, scores.shape))}] doesn't match the "
                               f"broadcast shape [{', '.join(map(str, shape))}]")
        scores = scores + mask
    weights = xp._tensor_op("_safe_softmax")(scores, -1)
    if dropout_p > 0.0:
        weights = dropout_weights(weights, dropout_p)
    return weights @ value


# == declarations ===============================================================================================
_QKV = (((2, 3, 4), "real"), ((2, 5, 4), "real"), ((2, 5, 3), "real"))
declare("_safe_softmax", _safe_softmax, method=False, nodes=(SafeSoftmaxBackward0,),
        samples=(Sample((((3, 4), "real"),), (-1,)), Sample((((2, 3, 4), "real"),), (1,))))
_HEADS = (((2, 2, 3, 4), "real"), ((2, 2, 5, 4), "real"), ((2, 2, 5, 4), "real"))
# PyTorch's fused kernel has no forward rule: under forward AD it raises PyTorch's error, naming the kernel
declare("_scaled_dot_product_flash_attention_for_cpu", _fused, method=False, public=False, register=False,
        nodes=(ScaledDotProductFlashAttentionForCpuBackward0,))
declare("scaled_dot_product_attention", scaled_dot_product_attention, namespace="nn.functional", method=False,
        nodes=(ScaledDotProductFlashAttentionForCpuBackward0,), forward_nodes=(),
        samples=(Sample(_QKV), Sample(_QKV, kwargs={"is_causal": True}), Sample(_QKV, kwargs={"scale": 0.3}),
                 Sample(_HEADS), Sample(_HEADS, kwargs={"is_causal": True, "scale": 0.7}),
                 Sample(_HEADS + (((3, 5), "bool"),), keywords=("attn_mask",)),
                 Sample(_HEADS + (((3, 5), "const"),), keywords=("attn_mask",)),
                 Sample((((3, 4), "real"), ((5, 4), "real"), ((5, 2), "real"), ((3, 5), "real")),
                        keywords=("attn_mask",))))
