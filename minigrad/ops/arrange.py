"""Ops that keep a tensor's shape and move or mask its elements: tril, triu, roll, flip; and constant padding.
Also unflatten, a view (split one dim into several), index_select and repeat_interleave.

Each is linear in its input, so its derivative is the same kind of op on the gradient (tril's is tril,
roll's is the opposite roll, flip's is flip, pad's is the matching crop); the formulas call the op itself
on Tensors (`create_graph=True`) and NumPy on arrays, so second order comes free.
"""

from __future__ import annotations

import numpy as np

from .._state import GRAD
from .._tensor import Tensor, _wrap_dim, make
from . import xp
from .inplace import run_inplace
from .recording import SavedArg, record, rule
from .registry import Sample, declare
from .views import named_varargs


def _on(kernel, op_name: str):
    """`kernel(array, ...)` on an array, the declared op `op_name` (which records its node) on a Tensor."""

    def call(g, *args):
        return xp._tensor_op(op_name)(g, *args) if xp.is_t(g) else kernel(g, *args)

    return call


def _tril(a: np.ndarray, diagonal: int) -> np.ndarray:
    return np.tril(a, diagonal)


def _triu(a: np.ndarray, diagonal: int) -> np.ndarray:
    return np.triu(a, diagonal)


def _roll(a: np.ndarray, shifts: tuple, dims: tuple) -> np.ndarray:
    if not dims:  # roll the flattened tensor
        return np.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return np.roll(a, shifts, dims)


def _flip(a: np.ndarray, dims: tuple) -> np.ndarray:
    return np.flip(a, dims).copy() if dims and np.ndim(a) else np.array(a, copy=True)  # (0-d: dim 0 is itself)


_tril_of = _on(_tril, "tril")
_triu_of = _on(_triu, "triu")
_roll_of = _on(_roll, "roll")
_flip_of = _on(_flip, "flip")

TrilBackward0 = rule("TrilBackward0", "self", saves="diagonal", text="grad_self = tril(grad, diagonal)",
                     forward="linear",
                     self=lambda grad, diagonal: _tril_of(grad, diagonal))
TriuBackward0 = rule("TriuBackward0", "self", saves="diagonal", text="grad_self = triu(grad, diagonal)",
                     forward="linear",
                     self=lambda grad, diagonal: _triu_of(grad, diagonal))
RollBackward0 = rule("RollBackward0", "self", saves="shifts dims",
                     forward="linear", text="grad_self = roll(grad, -shifts, dims)  (rolled back)",
                     self=lambda grad, shifts, dims: _roll_of(grad, tuple(-s for s in shifts), dims))
FlipBackward0 = rule("FlipBackward0", "self", saves="dims",
                     forward="linear", text="grad_self = flip(grad, dims)  (flipping twice restores the order)",
                     self=lambda grad, dims: _flip_of(grad, dims))


def _triangle(self: Tensor, diagonal: int, kernel, node, name: str, layout: np.ndarray | None = None) -> Tensor:
    """tril or triu; `layout`: the memory the result is written into (tril_/triu_), whose positions may share it."""
    d = self._data
    if d.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    res = kernel(d, int(diagonal))
    if layout is not None:
        zeroed = kernel(np.ones(d.shape[-2:], bool), int(diagonal)) == 0
        res = np.where(_sharing(layout, np.broadcast_to(zeroed, d.shape)), d.dtype.type(0), d)
    if self._requires_grad and GRAD.mode > 0:
        return record(node, res, (self,), diagonal=int(diagonal))
    return make(res)


def _sharing(arr: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """`mask` widened to every position of `arr` that shares its memory with a masked one (through a stride 0)."""
    where = np.zeros(arr.shape, np.int64)
    for k, (n, st) in enumerate(zip(arr.shape, arr.strides)):
        where = where + np.arange(n).reshape((n,) + (1,) * (arr.ndim - 1 - k)) * (st // arr.itemsize)
    where -= where.min()
    hit = np.zeros(int(where.max()) + 1, bool)
    hit[where[mask]] = True
    return hit[where]


def _writes_through_strides(arr: np.ndarray) -> bool:
    """Does PyTorch's tril_/triu_ write its zeros straight into the tensor's memory (checkTrilTriuBatchContiguous:
    up to 3 dims, or the batch dims laid out as contiguous matrices, the first dim may be expanded)? Elsewhere it
    computes a contiguous result and copy_()s it back, which refuses an expanded tensor."""
    if arr.flags.c_contiguous or arr.ndim <= 3:
        return True
    expected = arr.shape[-1] * arr.shape[-2]
    for i in range(arr.ndim - 3, -1, -1):
        stride = arr.strides[i] // arr.itemsize
        if i == 0 and (stride == 0 or arr.shape[0] == 1):
            continue
        if stride != expected:
            return False
        expected *= arr.shape[i]
    return True


def _triangle_(kernel, node, name: str):
    """tril_/triu_ as PyTorch's kernel runs them: where it writes only the zeros through the strides, an expanded
    tensor is allowed, and a memory location any of whose positions is zeroed reads 0 at all of them (the
    base is written too); elsewhere, the overlap check of its copy_."""
    def method(self: Tensor, diagonal: int = 0) -> Tensor:
        arr = self._data
        through = arr.size > 0 and _writes_through_strides(arr)
        layout = arr if through and 0 in arr.strides else None
        return run_inplace(self, lambda src: _triangle(src, diagonal, kernel, node, name[:-1], layout), (diagonal,),
                           overlap_ok=through)

    method.__name__ = method.__qualname__ = name
    return method


def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements above `diagonal` set to 0): a causal mask's shape."""
    return _triangle(self, diagonal, _tril, TrilBackward0, "tril")


def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements below `diagonal` set to 0)."""
    return _triangle(self, diagonal, _triu, TriuBackward0, "triu")


def _as_tuple(x) -> tuple:
    return (int(x),) if isinstance(x, (int, np.integer)) else tuple(int(v) for v in x)


def roll(self: Tensor, shifts, dims=None) -> Tensor:
    """Shift elements along `dims` by `shifts`, wrapping around; without dims, over the flattened tensor."""
    d = self._data
    shifts = _as_tuple(shifts)
    dims = () if dims is None else _as_tuple(dims)
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"`shifts` required to be of size 1 when `dims` is empty, got {len(shifts)}")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = tuple(_wrap_dim(k, d.ndim) for k in dims)
    res = _roll(d, shifts, dims)
    if self._requires_grad and GRAD.mode > 0:
        return record(RollBackward0, res, (self,), shifts=shifts, dims=dims)
    return make(res)


def flip(self: Tensor, *dims, **named) -> Tensor:
    """Reverse the order of elements along `dims` (a copy, as PyTorch's)."""
    dims = named_varargs(dims, named, "dims", "flip")
    dims = _as_tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else _as_tuple(dims)
    d = self._data
    dims = tuple(_wrap_dim(k, d.ndim) for k in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    res = _flip(d, dims)
    if self._requires_grad and GRAD.mode > 0:
        return record(FlipBackward0, res, (self,), dims=dims)
    return make(res)


# -- constant padding (F.pad) ------------------------------------------------------------------------------
def _zero_pad(g, pad: tuple):
    """`g` padded with zeros by `pad` (PyTorch's order: last dim first, (left, right) pairs; a negative pad crops):
    the tangent of a padding, whatever its value (the border is constant). On Tensors a `constant_pad_nd`."""
    if xp.is_t(g):
        return constant_pad_nd(g, pad)
    return _pad_array(g, pad, 0.0)


def _crop(g, pad: tuple):
    """The inverse of padding by `pad`: a slice, or a negative pad's zero border."""
    return _zero_pad(g, tuple(-p for p in pad))


ConstantPadNdBackward0 = rule("ConstantPadNdBackward0", "self", saves="pad",
                              text="grad_self = grad with the padded border cut off",
                              forward=lambda self_t, pad: _zero_pad(self_t, pad),
                              self=lambda grad, pad: _crop(grad, pad))


def _pad_array(a: np.ndarray, pad: tuple, value: float) -> np.ndarray:
    """Pad (positive) or crop (negative) the last len(pad)//2 dims of `a`, PyTorch's pad order."""
    n = len(pad) // 2
    widths = [(0, 0)] * (a.ndim - n) + [(0, 0)] * n
    crop = [slice(None)] * a.ndim
    for i in range(n):
        axis = a.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        widths[axis] = (max(left, 0), max(right, 0))
        crop[axis] = slice(max(-left, 0), a.shape[axis] - max(-right, 0))
    a = a[tuple(crop)]
    if any(w != (0, 0) for w in widths):
        a = np.pad(a, widths, constant_values=value)
    return np.ascontiguousarray(a)


def constant_pad_nd(input: Tensor, pad, value: float = 0.0) -> Tensor:
    """Pad the last dims with `value`: `pad` is (left, right) of the last dim, then of the one before, ..."""
    pad = tuple(int(p) for p in pad)
    d = input._data
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > d.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {d.ndim} dimensions.")
    res = _pad_array(d, pad, value)
    if input._requires_grad and GRAD.mode > 0:
        return record(ConstantPadNdBackward0, res, (input,), pad=pad)
    return make(res)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """`F.pad`: constant padding (other modes are not implemented)."""
    if mode != "constant":
        raise NotImplementedError(f"minigrad: F.pad(mode={mode!r}) is not implemented; only mode='constant'.")
    return constant_pad_nd(input, pad, 0.0 if value is None else value)


def unflatten(self: Tensor, dim: int, sizes) -> Tensor:
    """Split dim `dim` into `sizes` (one of them may be -1): a view (ViewBackward0), as PyTorch writes it."""
    sizes = tuple(int(n) for n in sizes)
    d = _wrap_dim(dim, self._data.ndim)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = self._data.shape[d]
    if -1 not in sizes and int(np.prod(sizes)) != n:
        raise RuntimeError(f"unflatten: Provided sizes [{', '.join(map(str, sizes))}] don't multiply up to the size "
                           f"of dim {dim} ({n}) in the input tensor")
    return self.view(self._data.shape[:d] + sizes + self._data.shape[d + 1:])


# -- index_select and repeat_interleave -----------------------------------------------------------------------
IndexAddBackward0 = rule(
    "IndexAddBackward0", "self source", saves="dim index",
    forward="linear", text="grad_self = grad;  grad_source = grad.index_select(dim, index)",
    self=lambda grad: grad,
    source=lambda grad, dim, index:
    index_select(grad, dim, make(index)) if xp.is_t(grad) else np.take(grad, index, dim))


def _zeros_index_add(grad, shape: tuple, dim: int, index: np.ndarray):
    """zeros(shape).index_add(dim, index, grad): each slice of grad added at its index (repeats add up)."""
    key = (slice(None),) * dim + (index,)
    out = np.zeros(shape, xp.data(grad).dtype)
    np.add.at(out, key, xp.data(grad))
    if xp.is_t(grad) and grad._requires_grad and GRAD.mode > 0:
        return record(IndexAddBackward0, out, (make(np.zeros(shape, out.dtype)), grad), dim=dim, index=index)
    return make(out) if xp.is_t(grad) else out


IndexSelectBackward0 = rule(
    "IndexSelectBackward0", "self", saves="dim index self_sym_sizes", tensor_args="index",
    forward="linear", text="grad_self = zeros(self's shape) with each grad slice added at its index along dim",
    shown={"index": lambda node, v: make(v)},
    self=lambda grad, dim, index, self_sym_sizes: _zeros_index_add(grad, self_sym_sizes, dim, index))


def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of `self` along `dim` at the positions `index` (a 1-D integer tensor), in that order."""
    idx = index._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, max(self._data.ndim, 1))
    idx = idx.reshape(-1).astype(np.int64)
    n = self._data.shape[d] if self._data.ndim else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range in self")
    res = np.take(self._data, idx, axis=d) if self._data.ndim else self._data.reshape(1)[idx].reshape(())
    if self._requires_grad and GRAD.mode > 0:
        return record(IndexSelectBackward0, res, (self,), dim=d, index=SavedArg(idx % max(n, 1), (index,)),
                      self_sym_sizes=self._data.shape)
    return make(res)


def repeat_interleave(self: Tensor, repeats=None, dim: int | None = None, *, output_size: int | None = None):
    """Each element (or each slice along `dim`) repeated `repeats` times in place: [a, b] -> [a, a, b, b].
    `repeats` is a number or a tensor (one count per slice); `torch.repeat_interleave(counts)` alone gives
    arange(len(counts)) repeated by the counts. Written as PyTorch writes it: with a number, unsqueeze, expand,
    clone and view (their nodes); with a tensor of counts, index_select."""
    if repeats is None:  # torch.repeat_interleave(repeats): the indices each repeated by its count
        counts = self._data
        if counts.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return make(np.repeat(np.arange(counts.size), counts.reshape(-1)))
    if dim is None:
        return repeat_interleave(self.flatten(), repeats, 0, output_size=output_size)
    d = _wrap_dim(dim, max(self._data.ndim, 1))
    if isinstance(repeats, Tensor):
        counts = repeats._data.reshape(-1)
        if counts.dtype.kind not in "iu":
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                      f"'{repeats.dtype.__repr__().split('.')[-1].capitalize()}'")
        n = self._data.shape[d]
        if counts.size == 1:
            counts = np.repeat(counts, n)
        elif counts.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.size} and input.size({dim}) = {n}")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return index_select(self, d, make(np.repeat(np.arange(n), counts)))
    repeats = int(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = self._data.shape
    wide = self.unsqueeze(d + 1).expand(shape[:d + 1] + (repeats,) + shape[d + 1:]).clone()
    return wide.view(shape[:d] + (shape[d] * repeats,) + shape[d + 1:])


# == declarations ===============================================================================================
_M = (((3, 4), "real"),)
_B = (((2, 3, 3), "real"),)
declare("tril", tril, inplace=_triangle_(_tril, TrilBackward0, "tril_"), nodes=(TrilBackward0,),
        samples=(Sample(_M), Sample(_M, (1,)), Sample(_M, (-1,)), Sample(_B)))
declare("triu", triu, inplace=_triangle_(_triu, TriuBackward0, "triu_"), nodes=(TriuBackward0,),
        samples=(Sample(_M), Sample(_M, (1,)), Sample(_B, (-1,))))
declare("roll", roll, nodes=(RollBackward0,),
        samples=(Sample(_M, (1, 1)), Sample(_M, (5,)), Sample(_M, ((1, -2), (0, 1))), Sample(_B, (-1, 2))))
declare("flip", flip, nodes=(FlipBackward0,), samples=(Sample(_M, ((0,),)), Sample(_B, ((0, 2),))))
declare("constant_pad_nd", constant_pad_nd, method=False, nodes=(ConstantPadNdBackward0,),
        samples=(Sample(_M, ((1, 2),)), Sample(_B, ((1, 0, 2, 1),)), Sample(_M, ((-1, 1, 1, -1),))))
declare("pad", pad, namespace="nn.functional", method=False, nodes=(ConstantPadNdBackward0,), forward_nodes=(),
        samples=(Sample(_M, ((1, 2),)), Sample(_B, ((0, 1, 1, 1),), {"value": 2.0})))
declare("unflatten", unflatten, numpy_names=False,
        samples=(Sample(_M, (1, (2, 2))), Sample((((2, 12), "real"),), (-1, (-1, 3))), Sample(_B, (0, (1, 2)))))
declare("index_select", index_select, numpy_names=False, nodes=(IndexSelectBackward0, IndexAddBackward0),
        samples=(Sample((((3, 4), "real"), ((5,), "index")), (1,), keywords=("index",)),
                 Sample((((2, 3, 4), "real"), ((2,), "index")), (-1,), keywords=("index",))))
declare("repeat_interleave", repeat_interleave, numpy_names=False,
        samples=(Sample(_M, (2,)), Sample(_M, (2, 1)), Sample(_B, (3, -1)), Sample(_M, (1, 0)),
                 Sample((((3, 4), "real"), ((4,), "index")), kwargs={"dim": 1}, keywords=("repeats",))))
