"""Joining and splitting: cat, stack, split, chunk, narrow, gather, repeat.

cat and stack take any number of inputs, so their node classes are made per input count
(all named CatBackward0 / StackBackward0, as PyTorch names them), cached after first use.
"""

from __future__ import annotations

import functools

import numpy as np

from .._tensor import Tensor, _wrap_dim, make
from ..autograd.grad_mode import STATE
from . import _dual as D
from . import derivatives as R
from ._record import record, record_multi, rule
from .pointwise import _tier_dtypes
from .shape import as_view


def _narrow_grad(i: int):
    return lambda grad, dim, _sizes: _cat_piece(grad, dim, _sizes, i)


def _cat_piece(grad, dim: int, sizes: tuple, i: int):
    """Input i's share of cat's gradient; `sizes[i]` is None for a skipped legacy empty (0,) input."""
    if sizes[i] is None:
        return D.zeros_like(grad).reshape(-1)[:0] if D.is_t(grad) else np.zeros((0,), grad.dtype)
    d = dim % len(grad.shape)
    start = sum(s for s in sizes[:i] if s is not None)
    return D.narrow(grad, d, start, sizes[i])


def _select_grad(i: int):
    return lambda grad, dim: D.select(grad, dim, i)


@functools.cache
def _cat_node(n: int):
    names = " ".join(f"t{i}" for i in range(n))
    return rule("CatBackward0", names, "dim _sizes", **{f"t{i}": _narrow_grad(i) for i in range(n)})


@functools.cache
def _stack_node(n: int):
    names = " ".join(f"t{i}" for i in range(n))
    return rule("StackBackward0", names, "dim", **{f"t{i}": _select_grad(i) for i in range(n)})


def _tensors(tensors, what: str) -> list:
    ts = list(tensors)
    if not ts:
        raise RuntimeError(f"{what}(): expected a non-empty list of Tensors")
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {ts.index(t)} in argument 0, but got {type(t).__name__}")
    return ts


def _recording(ts) -> bool:
    return STATE.mode > 0 and any(t._requires_grad for t in ts)


def cat(tensors, dim: int = 0):
    ts = _tensors(tensors, "cat")
    ref = next((t for t in ts if t._data.ndim), ts[0])
    if ref._data.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, ref._data.ndim)
    parts = [t for t in ts if not (t._data.ndim == 1 and t._data.shape[0] == 0)] or ts
    for i, t in enumerate(parts):
        if t._data.ndim != ref._data.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref._data.ndim} and {t._data.ndim}")
        for ax in range(ref._data.ndim):
            if ax != d and t._data.shape[ax] != ref._data.shape[ax]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref._data.shape[ax]} but got size {t._data.shape[ax]} for tensor number {i} in "
                                   "the list.")
    dt = _tier_dtypes(ts)
    res = np.concatenate([t._data.astype(dt, copy=False) for t in parts], axis=d)
    if _recording(ts):
        skipped = len(parts) < len(ts)
        sizes = tuple(None if skipped and t._data.shape == (0,) else t._data.shape[d] for t in ts)
        return record(_cat_node(len(ts)), res, tuple(ts), (dim, sizes))
    return make(res)


concat = concatenate = cat


def stack(tensors, dim: int = 0):
    ts = _tensors(tensors, "stack")
    shape = ts[0]._data.shape
    for i, t in enumerate(ts):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1)
    dt = _tier_dtypes(ts)
    res = np.stack([t._data.astype(dt, copy=False) for t in ts], axis=d)
    if _recording(ts):
        return record(_stack_node(len(ts)), res, tuple(ts), (d,))
    return make(res)


def split(self, split_size_or_sections, dim: int = 0):
    """Views of consecutive pieces (one SplitBackward0 node, one output per piece)."""
    d = _wrap_dim(dim, self._data.ndim)
    n = self._data.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(step, n - s) for s in range(0, n, step)] if n else [0]
        name = R.SplitBackward0
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
        name = R.SplitWithSizesBackward0
    starts = np.cumsum([0] + sizes[:-1])
    keys = [(slice(None),) * d + (slice(int(s), int(s) + sz),) for s, sz in zip(starts, sizes)]
    parts = [self._data[k] for k in keys]
    if self._requires_grad and STATE.mode > 0:
        split = split_size_or_sections if name is R.SplitBackward0 else tuple(sizes)
        outs = record_multi(name, parts, (self,), (dim, self._data.shape, split))
    else:
        outs = [make(p) for p in parts]
    return tuple(as_view(o, self, ("getitem", k), multi=True) for o, k in zip(outs, keys))


def chunk(self, chunks: int, dim: int = 0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = self._data.shape[_wrap_dim(dim, self._data.ndim)]
    size = -(-n // chunks) if n else 1
    return split(self, size, dim)


def narrow(self, dim: int, start: int, length: int):
    from .index import getitem

    d = _wrap_dim(dim, self._data.ndim)
    n = self._data.shape[d]
    if start < 0:
        start += n
    if not (0 <= start and start + length <= n):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return getitem(self, (slice(None),) * d + (slice(start, start + length),))


def gather(self, dim: int, index, *, sparse_grad: bool = False):
    d = _wrap_dim(dim, self._data.ndim)
    idx = index._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.ndim != self._data.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    res = np.take_along_axis(self._data, idx, axis=d)
    if self._requires_grad and STATE.mode > 0:
        return record(R.GatherBackward0, res, (self,), (d, idx, sparse_grad))
    return make(res)


def scatter_add(self, dim: int, index, src):
    d = _wrap_dim(dim, self._data.ndim)
    out = self._data.copy()
    _scatter_add_into(out, d, index._data, src._data)
    if STATE.mode > 0 and (self._requires_grad or src._requires_grad):
        return record(R.ScatterAddBackward0, out, (self, src), (d, index._data))
    return make(out)


def _scatter_add_into(out: np.ndarray, dim: int, idx: np.ndarray, src: np.ndarray) -> None:
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    np.add.at(out, tuple(grid), src[tuple(slice(0, s) for s in idx.shape)])


def repeat(self, *sizes):
    reps = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    res = np.tile(self._data, reps)
    if self._requires_grad and STATE.mode > 0:
        return record(R.RepeatBackward0, res, (self,), (reps, self._data.shape))
    return make(res)
