"""The memory layout of an elementwise result, as PyTorch's TensorIterator chooses it.

NumPy's ufuncs (order 'K') follow their operands' layout only while the operands agree, and fall back to
C order when they do not; PyTorch's TensorIterator lets the first operand that tells two dims apart decide.
So `a.t() * b` is laid out like `a.t()` in PyTorch: `.stride()` is `(1, 2)`, `.is_contiguous()` is False and
`.view(-1)` raises. `torch_layout` gives NumPy's result that layout (a copy, only when the two differ).

TensorIterator (aten/src/ATen/TensorIterator.cpp), for the inputs in order:
- all of the result's shape and all contiguous: a contiguous result (`fast_set_up`); all channels-last (4-d):
  a channels-last result; all non-overlapping and dense with equal strides: the result takes those strides;
- otherwise `reorder_dimensions` sorts the dims, fastest first, by an insertion sort whose comparison asks each
  input in turn: a broadcast dim (stride 0) tells nothing, a smaller stride comes first, equal strides put the
  smaller size first (else the next input is asked); when no input decides the dims keep their order;
- the result is dense in that order (`allocate_or_resize_outputs`).
A 0-d operand (or a Python number, which PyTorch wraps in a 0-d tensor) is broadcast everywhere: it never decides,
but it is not of the result's shape, so it turns `fast_set_up` off (which changes only a size-1 dim's stride).
"""

from __future__ import annotations

import math

import numpy as np

from ._tensor import Tensor


def laid_out(res, *operands):
    """NumPy's result `res` of an elementwise op on `operands` (Tensors, arrays, numbers or None, in PyTorch's
    operand order), laid out as PyTorch lays it out. While every operand is C-contiguous NumPy's layout is
    PyTorch's (C order), so that costs one check per operand."""
    for o in operands:
        d = o._data if isinstance(o, Tensor) else o
        if d.__class__ is np.ndarray and not d.flags.c_contiguous:
            return torch_layout(res, *[o._data if isinstance(o, Tensor) else o for o in operands if o is not None])
    return res


def torch_layout(res, *operands):
    """`res` (NumPy's result of an elementwise op on `operands`, arrays or numbers, in the op's argument order)
    laid out as PyTorch lays out that op's result. Callers skip this when every operand is C-contiguous: the
    result is then in C order in both libraries (only a size-1 dim's stride may differ)."""
    if res.__class__ is not np.ndarray or res.ndim < 2 or res.size == 0:
        return res  # one dim has one layout; NumPy's empty arrays have strides of their own (all 0)
    shape = res.shape
    arrays = [a for a in operands if a.__class__ is np.ndarray and a.ndim]
    if len(arrays) == len(operands):  # every operand may be of the result's shape: TensorIterator's fast_set_up
        strides = _fast_set_up(arrays, shape)
        if strides is not None:
            return _with_strides(res, strides)
    strides, step = [0] * len(shape), 1
    for d in _fastest_first(shape, arrays):  # dense in that order (allocate_or_resize_outputs)
        strides[d] = step
        step *= shape[d]
    return _with_strides(res, tuple(strides))


def _fast_set_up(arrays: list, shape: tuple) -> tuple | None:
    """The result's strides when every operand has its shape and all are contiguous, all channels-last, or all
    non-overlapping and dense with the same strides; else None."""
    for a in arrays:
        if a.shape != shape:
            return None
    if all(a.flags.c_contiguous for a in arrays):
        return _c_strides(shape)
    if len(shape) == 4 and all(_channels_last(a) for a in arrays):
        return _channels_last_strides(shape)
    first = _elements(arrays[0])
    for a in arrays[1:]:
        if _elements(a) != first:
            return None
    return first if _dense(arrays[0]) else None


def _fastest_first(shape: tuple, arrays: list) -> list:
    """TensorIterator's `reorder_dimensions`: the dims from fastest to slowest."""
    n = len(shape)
    strides = []
    for a in arrays:  # as compute_strides: a dim the operand broadcasts has stride 0
        st = [0] * n
        lead = n - a.ndim
        for i, size in enumerate(a.shape):
            if size == shape[lead + i]:
                st[lead + i] = a.strides[i]
        strides.append(st)

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:  # equal strides: the smaller size first, or the next operand decides
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):  # an insertion sort that steps over ambiguous comparisons
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _elements(a: np.ndarray) -> tuple:
    """Strides in elements, as PyTorch counts them."""
    size = a.itemsize
    return tuple([s // size for s in a.strides])


def _dense(a: np.ndarray) -> bool:
    """PyTorch's is_non_overlapping_and_dense: the elements fill a block of memory, in some order of the dims."""
    step = a.itemsize
    for st, size in sorted((st, size) for st, size in zip(a.strides, a.shape) if size != 1):  # (no negatives)
        if st != step:
            return False
        step *= size
    return True


def _c_strides(shape: tuple) -> tuple:
    """PyTorch's contiguous strides (a size-1 dim gets the stride of the dims after it, as in NumPy)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _channels_last(a: np.ndarray) -> bool:
    """PyTorch's is_contiguous(memory_format=torch.channels_last) for a 4-d array: dense in the order C, W, H, N
    (size-1 dims may have any stride)."""
    step = a.itemsize
    for d in (1, 3, 2, 0):
        if a.shape[d] != 1:
            if a.strides[d] != step:
                return False
            step *= a.shape[d]
    return True


def _channels_last_strides(shape: tuple) -> tuple:
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def _with_strides(res: np.ndarray, strides: tuple) -> np.ndarray:
    """`res` with these element strides (a dense layout): itself when it has them, else a copy."""
    if res.strides == tuple(s * res.itemsize for s in strides):
        return res
    out = _empty_strided(res.shape, res.dtype, strides)
    np.copyto(out, res)
    return out


def _empty_strided(shape: tuple, dtype, strides: tuple) -> np.ndarray:
    """A new array with these element strides (a dense layout), as PyTorch's empty_strided."""
    dtype = np.dtype(dtype)
    return np.ndarray(shape, dtype, np.empty(math.prod(shape), dtype), 0, tuple(s * dtype.itemsize for s in strides))


def empty_like_leaf(leaf: np.ndarray, dtype=None) -> np.ndarray:
    """An empty array for a leaf's first `.grad`, laid out as PyTorch's gradient layout contract asks: the leaf's
    strides when the leaf is non-overlapping and dense, else C order (AccumulateGrad's clone_obey_contract)."""
    dtype = leaf.dtype if dtype is None else dtype
    if leaf.flags.c_contiguous or leaf.ndim < 2 or min(leaf.strides) < 0 or not _dense(leaf):
        return np.empty(leaf.shape, dtype)
    return _empty_strided(leaf.shape, dtype, _elements(leaf))


def c_order(a: np.ndarray) -> np.ndarray:
    """`a` in C order (a copy only when it is not). PyTorch's reductions, scans and softmax give contiguous
    results whatever their input's layout; NumPy's follow the input's."""
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


class memory_format:
    """How a copy lays out its elements (`x.clone(memory_format=torch.preserve_format)`): PyTorch's names;
    minigrad's tensors have no channels-last layouts."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"  # as PyTorch prints it


preserve_format, contiguous_format = memory_format("preserve_format"), memory_format("contiguous_format")
