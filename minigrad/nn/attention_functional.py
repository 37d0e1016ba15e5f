"""Multi-head attention, the function: `F.multi_head_attention_forward`, as torch.nn.functional's
(nn.MultiheadAttention, in nn/attention.py, holds the weights and calls it).

Inputs are (sequence, batch, embed) (or (batch, sequence, embed) with `batch_first=True`, or unbatched
(sequence, embed)). One packed projection `in_proj_weight` (3E, E) makes the queries, keys and values; each is
split into `num_heads` heads of E / num_heads features; every head attends on its own; the heads are joined
again and `out_proj` mixes them:

    q, k, v = linear(query, W_q, b_q), linear(key, W_k, b_k), linear(value, W_v, b_v)
    head_i  = softmax(q_i k_iᵀ / sqrt(head_dim) + mask) v_i
    output  = out_proj(concat(head_1, ..., head_h))

The steps are PyTorch's, in its order, so the graph has its nodes: with `need_weights=True` (the default) the
scores are an explicit `bmm` (`baddbmm` with a mask), then `softmax`; with `need_weights=False` they go through
`F.scaled_dot_product_attention`. Masks follow PyTorch's convention here, the opposite of
scaled_dot_product_attention's: a boolean `attn_mask` or `key_padding_mask` is True where attention is NOT
allowed; a float mask is added to the scores.

Not here: PyTorch's fused inference path (`torch._native_multi_head_attention`, taken in eval mode when nothing
requires grad); minigrad always runs the steps above, which give the same values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _creation, _dtypes
from .._tensor import Tensor, make
from ..ops.arrange import pad
from ..ops.attention import dropout_weights, scaled_dot_product_attention
from ..ops.joining import cat
from ..ops.linalg import linear


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask, attn_mask, num_heads: int) -> bool:
    """Is the call batched (3-D query) or not (2-D); PyTorch's AssertionErrors for the other shapes."""
    q, k, v = query.dim(), key.dim(), value.dim()
    if q not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {q}-D query tensor")
    batched = q == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if k != q or v != q:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {q}-D but found {k}-D and "
                             f"{v}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != q - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {q - 1}-D but found "
                             f"{key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _canonical_mask(mask: Tensor | None, name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """A boolean mask as a float one: -inf where True (not allowed), 0 elsewhere; a float mask as it is."""
    if mask is None:
        return None
    floating = mask.is_floating_point()
    if mask.dtype != _dtypes.bool and not floating:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      "instead.", UserWarning, stacklevel=2)
    if floating:
        return mask
    return make(np.where(mask._data, -np.inf, 0.0).astype(_dtypes.to_np(target_type)))


def _dtype_of(mask: Tensor | None):
    return None if mask is None else mask.dtype


def _split_heads_packed(proj: Tensor, parts: int, embed_dim: int) -> tuple:
    """(..., parts * E) -> `parts` tensors (..., E), as PyTorch splits a packed projection."""
    proj = proj.unflatten(-1, (parts, embed_dim)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
    return tuple(proj[i] for i in range(parts))


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None) -> tuple:
    """q, k, v projected by the packed weight: one product for self-attention (q is k is v), two when k is v."""
    e = q.shape[-1]
    if k is v:
        if q is k:
            return _split_heads_packed(linear(q, w, b), 3, e)
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        return (linear(q, w_q, b_q),) + _split_heads_packed(linear(k, w_kv, b_kv), 2, e)
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Tensor | None, in_proj_bias: Tensor | None,
                                 bias_k: Tensor | None, bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple:
    """Multi-head attention over (L, N, E) query and (S, N, E) key/value (see the module docstring); returns
    (output (L, N, E), weights (N, L, S) averaged over heads, or per head (N, heads, L, S), or None)."""
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:  # a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _canonical_masks(query, key_padding_mask, attn_mask, is_causal,
                                                              need_weights)
    head_dim = _check_dims(query, key, value, embed_dim_to_check, num_heads, use_separate_proj_weight)
    # 1. the projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        q, k, v = _in_projection_separate((query, key, value), (q_proj_weight, k_proj_weight, v_proj_weight),
                                          in_proj_bias)
    # 2. the masks, one per (batch, head) or one for all; learnt extra keys and values (bias_k, bias_v)
    attn_mask = _attn_mask_3d(attn_mask, tgt_len, key.shape[0], bsz * num_heads)
    masks = [attn_mask, key_padding_mask]
    if bias_k is not None and bias_v is not None:  # one more key and value, learnt
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k, v, masks = cat([k, bias_k.repeat(1, bsz, 1)]), cat([v, bias_v.repeat(1, bsz, 1)]), _one_more_key(masks)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    # 3. heads: (L, N, E) -> (N * heads, L, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:  # one more key and value, zeros
        zeros = (bsz * num_heads, 1, head_dim)
        k = cat([k, _creation.zeros(zeros, dtype=k.dtype)], dim=1)
        v = cat([v, _creation.zeros(zeros, dtype=v.dtype)], dim=1)
        masks = _one_more_key(masks)
    attn_mask = _with_padding(masks, bsz, num_heads, k.shape[1])
    # 4. attention, then the output projection
    attend = _attention_with_weights if need_weights else _attention_fused
    out, weights = attend(q, k, v, attn_mask, (dropout_p if training else 0.0, is_causal), (bsz, num_heads))
    out = linear(out.reshape(tgt_len * bsz, embed_dim), out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if weights is not None:
        weights = weights.view(bsz, num_heads, tgt_len, weights.shape[-1])
        if average_attn_weights:
            weights = weights.mean(dim=1)
    if not batched:
        out, weights = out.squeeze(1), None if weights is None else weights.squeeze(0)
    return out, weights


def _canonical_masks(query: Tensor, key_padding_mask, attn_mask, is_causal: bool, need_weights: bool) -> tuple:
    """The masks as floats to add (PyTorch's _canonical_mask), and whether attention is still causal: the causal
    hint needs the mask, and is dropped beside a padding mask (scaled_dot_product_attention makes the causal mask
    itself when nothing else is to be added)."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _dtype_of(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    return key_padding_mask, attn_mask, is_causal


def _check_dims(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                separate: bool) -> int:
    """PyTorch's assertions on the sizes; returns the size of a head."""
    embed_dim = query.shape[2]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if separate:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return head_dim


def _in_projection_separate(inputs: tuple, weights: tuple, bias: Tensor | None) -> tuple:
    """q, k, v with a weight each (`use_separate_proj_weight=True`), the packed bias split in three."""
    for name, w in zip("qkv", weights):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    biases = (None, None, None) if bias is None else bias.chunk(3)
    return tuple(linear(x, w, b) for x, w, b in zip(inputs, weights, biases))


def _attn_mask_3d(attn_mask: Tensor | None, tgt_len: int, src_len: int, batch_heads: int) -> Tensor | None:
    """A 2-D mask becomes (1, L, S), for every batch and head; a 3-D one must be (N * heads, L, S)."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
        raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                           f"{(batch_heads, tgt_len, src_len)}.")
    return attn_mask


def _one_more_key(masks: list) -> list:
    """The masks after a key and value were added (bias_k/bias_v, add_zero_attn): one more column, not masked."""
    return [None if m is None else pad(m, (0, 1)) for m in masks]


def _with_padding(masks: list, bsz: int, num_heads: int, src_len: int) -> Tensor | None:
    """The attention mask with the key padding mask added in, per batch and head."""
    attn_mask, key_padding_mask = masks
    if key_padding_mask is None:
        return attn_mask
    if tuple(key_padding_mask.shape) != (bsz, src_len):
        which, want, got = ((0, bsz, key_padding_mask.shape[0]) if key_padding_mask.shape[0] != bsz
                            else (1, src_len, key_padding_mask.shape[1]))
        raise AssertionError(f"Expected key_padded_mask.shape[{which}] to be {want}, but got {got}")
    key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                        .reshape(bsz * num_heads, 1, src_len))
    return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask


def _attention_with_weights(q: Tensor, k: Tensor, v: Tensor, attn_mask, options: tuple, sizes: tuple) -> tuple:
    """Attention written out (`need_weights=True`), so the weights can be returned: ((L, N * heads, head_dim),
    weights (N * heads, L, S)). `options`: (dropout_p, is_causal); `sizes` (N, heads), as the fused path takes."""
    dropout_p, is_causal = options
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    if attn_mask is not None:
        weights = attn_mask.baddbmm(q_scaled, k.transpose(-2, -1))
    else:
        weights = q_scaled.bmm(k.transpose(-2, -1))
    weights = weights.softmax(dim=-1)
    if dropout_p > 0.0:
        weights = dropout_weights(weights, dropout_p)
    return weights.bmm(v).transpose(0, 1), weights


def _attention_fused(q: Tensor, k: Tensor, v: Tensor, attn_mask, options: tuple, sizes: tuple) -> tuple:
    """Attention by scaled_dot_product_attention (`need_weights=False`): ((L, N, heads, head_dim), None)."""
    dropout_p, is_causal = options
    bsz, num_heads = sizes
    tgt_len, src_len, head_dim = q.shape[1], k.shape[1], q.shape[2]
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3), None
