"""`F.embedding`: rows of a weight table picked by integer indices (EmbeddingBackward0).

The forward is indexing (`weight[input]`); the backward adds each incoming gradient row into the row it was
read from (indices repeat, so the rows are summed), except the `padding_idx` row, which never learns. Under
`create_graph=True` the same scatter is the differentiable index-put of indexing's backward.
"""

from __future__ import annotations

import numpy as np

from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .recording import SavedArg, record, rule
from .registry import Sample, declare


def _embedding_grad(grad, indices: np.ndarray, weight_sym_argsize_0: int, padding_idx: int,
                    scale_grad_by_freq: bool):
    """zeros(num_weights, dim) with every gradient row added into the row its index names."""
    dim = grad.shape[-1]
    flat = indices.reshape(-1)
    scale = None
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=weight_sym_argsize_0)
        scale = 1.0 / counts[flat]
    if padding_idx >= 0:
        keep = (flat != padding_idx).astype(np.float64)
        scale = keep if scale is None else scale * keep
    if xp.is_t(grad):
        rows = grad.reshape(-1, dim)
        if scale is not None:
            rows = rows * make(scale.astype(grad._data.dtype)[:, None])
        return xp.scatter_into(rows, (weight_sym_argsize_0, dim), (flat,), True, "IndexPutImplBackward0")
    rows = grad.reshape(-1, dim)
    if scale is not None:
        rows = rows * scale.astype(grad.dtype)[:, None]
    out = np.zeros((weight_sym_argsize_0, dim), grad.dtype)
    np.add.at(out, flat, rows)
    return out


EmbeddingBackward0 = rule(
    "EmbeddingBackward0", "weight", saves="indices padding_idx scale_grad_by_freq sparse weight_sym_argsize_0",
    tensor_args="indices",
    text="grad_weight = zeros(num_embeddings, dim) with each grad row added at its index (padding_idx: 0)",
    forward="linear",
    shown={"indices": lambda node, v: make(v), "padding_idx": lambda node, v: v % (1 << 64)},
    weight=lambda grad, indices, padding_idx, scale_grad_by_freq, weight_sym_argsize_0: _embedding_grad(
        grad, indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq))


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """`weight[input]`: the rows of `weight` named by the integer tensor `input`, shape `input.shape + (dim,)`.

    `max_norm` renormalises the rows read to at most that norm, in place (as PyTorch, outside autograd)."""
    idx = input._data
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if idx.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got minigrad.{input.type().split('.')[-1]} instead (while checking "
                           "arguments for embedding)")
    w = weight._data
    num = w.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= num
    if sparse:
        raise NotImplementedError("minigrad: sparse gradients (embedding(sparse=True)) are not implemented.")
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        rows = np.unique(idx)
        norms = np.linalg.norm(w[rows], ord=norm_type, axis=1, keepdims=True)
        factor = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
        w[rows] *= factor
    res = np.take(w, idx, axis=0)
    if weight._requires_grad and GRAD.mode > 0:
        return record(EmbeddingBackward0, res, (weight,), indices=SavedArg(idx.astype(np.int64, copy=False), (input,)),
                      padding_idx=-1 if padding_idx is None else padding_idx, scale_grad_by_freq=scale_grad_by_freq,
                      sparse=sparse, weight_sym_argsize_0=num)
    return make(res)


# == declarations ===============================================================================================
# The weight comes first in the samples, so that the indices (domain "index": below the first tensor's last dim)
# are rows of it. padding_idx and scale_grad_by_freq change the gradient on purpose (it is no longer the
# derivative gradcheck measures): tests/ops/test_teaching_ops.py compares them with PyTorch.
declare("embedding", embedding, namespace="nn.functional", method=False, nodes=(EmbeddingBackward0,),
        samples=(Sample((((4, 4), "real"), ((2, 3), "index")), keywords=("weight", "input")),
                 Sample((((5, 4), "real"), ((6,), "index")), keywords=("weight", "input"))))
