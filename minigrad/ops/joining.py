"""Joining and splitting: cat, stack, split, chunk, narrow, gather, repeat.

cat and stack take a list of tensors: their nodes have one edge per tensor, and one formula gives
the gradients of them all.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import _dtypes
from .._stacklevel import user_stacklevel
from .._state import GRAD
from .._tensor import Tensor, _wrap_dim, make
from . import xp
from .dual import forward_aware
from .indexing import SliceBackward0, getitem, slice_view
from .inplace import check_overlap, inplace_of
from .operands import broadcast_error, check_tensor, result_dtype
from .recording import SavedArg, record, record_multi, rule
from .registry import Sample, declare
from .views import as_view

# == derivative rows, and the helpers their formulas use ======================================================
# -- joining, splitting, gathering (cat/stack rows are made per input count in join.py) -------------------
SplitBackward0 = rule("SplitBackward0", "self", saves="dim self_sym_sizes split_size",
                      forward="linear", text="grad_self = cat(grads, dim)  (missing pieces count as 0)", multi=True,
                      self=lambda grads, dim: xp.cat(grads, dim))
SplitWithSizesBackward0 = rule("SplitWithSizesBackward0", "self", saves="dim self_sym_sizes split_sizes",
                               text="grad_self = cat(grads, dim)  (missing pieces count as 0)", multi=True,
                               forward="linear",
                               self=lambda grads, dim: xp.cat(grads, dim))
GatherBackward0 = rule("GatherBackward0", "self", saves="self dim index sparse_grad", tensor_args="index",
                       text="grad_self = zeros(self's shape) with grad scatter-added at index along dim",
                       forward="linear",
                       self=lambda grad, self, dim, index: xp.scatter_add_zeros(grad, dim, index, tuple(self.shape)))
TakeBackward0 = rule("TakeBackward0", "self", saves="self index", tensor_args="index", forward="linear",
                     text="grad_self = zeros(self's shape) with grad added at the flat positions index",
                     self=lambda grad, self, index: xp.reshape(
                         xp.scatter_add_zeros(xp.reshape(grad, (-1,)), 0, index, (int(np.prod(self.shape)),)),
                         tuple(self.shape)))


def _masked_select_grad(grad, self, mask):
    """PyTorch's masked_select_backward: grad placed where the (broadcast) mask is true, 0 elsewhere, summed back
    to self's shape."""
    full = np.broadcast_to(mask, np.broadcast_shapes(tuple(self.shape), mask.shape))
    if not xp.is_t(grad):
        out = np.zeros(full.shape, grad.dtype)
        out[full] = grad
        return xp.sum_to(out, tuple(self.shape))
    if not full.any():  # nothing selected: zeros, still on grad's graph (as PyTorch's masked_scatter)
        return xp.sum_to(xp.where(full, grad.sum(), 0.0), tuple(self.shape))
    positions = np.maximum(np.cumsum(full.reshape(-1)) - 1, 0).reshape(full.shape)
    return xp.sum_to(xp.where(full, take(grad, make(positions)), 0.0), tuple(self.shape))


MaskedSelectBackward0 = rule("MaskedSelectBackward0", "self", saves="self mask", tensor_args="mask",
                             forward="linear", text="grad_self = zeros with grad where mask, summed to self's shape",
                             self=_masked_select_grad)
ScatterAddBackward0 = rule("ScatterAddBackward0", "self src", saves="dim index", tensor_args="index",
                           forward="linear", text="grad_self = grad, grad_src = grad.gather(dim, index)",
                           self=lambda grad: grad,
                           src=lambda grad, dim, index: xp.gather(grad, dim, index))
ScatterBackward0 = rule("ScatterBackward0", "self src", saves="dim index", tensor_args="index",
                        text="grad_self = grad with 0 at index along dim, grad_src = grad.gather(dim, index)",
                        forward="linear",
                        self=lambda grad, dim, index: xp.scatter(grad, dim, index, 0.0),
                        src=lambda grad, dim, index: xp.gather(grad, dim, index))
ScatterBackward1 = rule("ScatterBackward1", "self", saves="dim index", tensor_args="index",
                        forward="derived", text="grad_self = grad with 0 at index along dim  (value is a number)",
                        self=lambda grad, dim, index: xp.scatter(grad, dim, index, 0.0))
RepeatBackward0 = rule("RepeatBackward0", "self", saves="repeats self_sym_sizes",
                       forward="linear", text="grad_self = grad summed over the repeated copies",
                       self=lambda grad, repeats, self_sym_sizes: _repeat_grad(grad, repeats, self_sym_sizes))


def _repeat_grad(grad, repeats, sizes):
    """PyTorch's repeat_backward: sum away the new leading dims one at a time, then view each repeated dim as
    (repeat, size) and sum over all the repeat axes at once (no view, no sum where nothing was repeated)."""
    if 0 in repeats:
        return xp.zeros(sizes, grad)
    lead = len(repeats) - len(sizes)
    for _ in range(lead):
        grad = grad.sum(0) if xp.is_t(grad) else grad.sum(axis=0)
    split, axes = [], []
    for r, s in zip(repeats[lead:], sizes):
        if r != 1:
            axes.append(len(split))
            split.append(r)
        split.append(s)
    if not axes:
        return grad
    g = xp.reshape(grad, split)
    return g.sum(tuple(axes)) if xp.is_t(g) else g.sum(axis=tuple(axes))


def _cat_pieces(grad, dim: int, sizes: tuple) -> list:
    """Each input's share of cat's gradient; `sizes[i]` is None for a skipped legacy empty (0,) input."""
    d = dim % len(grad.shape)
    pieces, start = [], 0
    for size in sizes:
        if size is None:
            pieces.append(xp.zeros_like(grad).reshape(-1)[:0] if xp.is_t(grad) else np.zeros((0,), grad.dtype))
        else:
            pieces.append(xp.narrow(grad, d, start, size))
            start += size
    return pieces


CatBackward0 = rule("CatBackward0", "tensors[]", saves="dim _sizes",
                    forward="linear", text="grad_tensors[i] = the slice of grad that came from tensors[i]",
                    tensors=lambda grad, dim, _sizes: _cat_pieces(grad, dim, _sizes))
StackBackward0 = rule("StackBackward0", "tensors[]", saves="dim", text="grad_tensors[i] = grad.select(dim, i)",
                      forward="linear",
                      tensors=lambda grad, dim: [xp.select(grad, dim, i) for i in range(grad.shape[dim])])


def _tensors(tensors, what: str) -> list:
    ts = list(tensors)
    if not ts:
        raise RuntimeError(f"{what}(): expected a non-empty list of Tensors")
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {ts.index(t)} in argument 0, but got {type(t).__name__}")
    return ts


def _recording(ts) -> bool:
    return GRAD.mode > 0 and any(t._requires_grad for t in ts)


def cat(tensors, dim: int = 0):
    ts = _tensors(tensors, "cat")
    flat = next((i for i, t in enumerate(ts) if t._data.ndim == 0), None)
    if flat is not None:  # (checked before the ranks, as PyTorch's)
        raise RuntimeError(f"zero-dimensional tensor (at position {flat}) cannot be concatenated")
    ref = next((t for t in ts if t._data.ndim), ts[0])
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
    dt = result_dtype(ts)
    res = np.concatenate([t._data.astype(dt, copy=False) for t in parts], axis=d)
    if _recording(ts):
        skipped = len(parts) < len(ts)
        sizes = tuple(None if skipped and t._data.shape == (0,) else t._data.shape[d] for t in ts)
        return record(CatBackward0, res, tuple(ts), dim=dim, _sizes=sizes)
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
    dt = result_dtype(ts)
    res = np.stack([t._data.astype(dt, copy=False) for t in ts], axis=d)
    if _recording(ts):
        return record(StackBackward0, res, tuple(ts), dim=d)
    return make(res)


def split(self, split_size_or_sections, dim: int = 0):
    """Views of consecutive pieces (one SplitBackward0 node, one output per piece)."""
    if self._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, self._data.ndim)
    n = self._data.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(step, n - s) for s in range(0, n, step)] if n else [0]
        name = SplitBackward0
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {dim}), but got split_sizes={sizes}")
        name = SplitWithSizesBackward0
    starts = np.cumsum([0] + sizes[:-1])
    keys = [(slice(None),) * d + (slice(int(s), int(s) + sz),) for s, sz in zip(starts, sizes)]
    parts = [self._data[k] for k in keys]
    if self._requires_grad and GRAD.mode > 0:
        split = split_size_or_sections if name is SplitBackward0 else tuple(sizes)
        outs = record_multi(name, parts, (self,), dim=dim, self_sym_sizes=self._data.shape,
                            **{"split_size" if name is SplitBackward0 else "split_sizes": split})
    else:
        outs = [make(p) for p in parts]
    return tuple(as_view(o, self, ("getitem", k), multi=True) for o, k in zip(outs, keys))


def chunk(self, chunks: int, dim: int = 0):
    if self._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = self._data.shape[_wrap_dim(dim, self._data.ndim)]
    if n == 0:  # PyTorch: `chunks` empty pieces (split_with_sizes)
        return split(self, [0] * chunks, dim)
    return split(self, -(-n // chunks), dim)


def _narrow_slice(self: Tensor, dim: int, k: slice) -> Tensor:
    """narrow's SliceBackward0 view, recorded only where a graph is (narrow's tangent is this op run on the tangent,
    which requires grad only in forward over reverse)."""
    if self._requires_grad and GRAD.mode > 0:
        return slice_view(self, dim, k)
    return getitem(self, (slice(None),) * dim + (k,))


_slice_view = forward_aware(_narrow_slice, (SliceBackward0,), "narrow")  # (its tangent: the same slice of the tangent)


def narrow(self, dim: int, start: int, length: int):
    if self._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:  # (PyTorch's order of checks: the length's before the dim's)
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, self._data.ndim)
    n = self._data.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    if self._requires_grad and GRAD.mode > 0:  # always a SliceBackward0, even over the whole dim
        return _slice_view(self, d, slice(start, start + length))
    return getitem(self, (slice(None),) * d + (slice(start, start + length),))


def _index_of(name: str, self: Tensor, dim: int, index: Tensor, called: str) -> tuple:
    """gather's and scatter's first checks, with PyTorch's texts: the wrapped dim and the index's array."""
    d = _wrap_dim(dim, self._data.ndim)
    idx = index._data
    if not idx.size:  # PyTorch checks nothing more for an empty index (its dtype, dims and sizes may be any)
        return d, idx
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if idx.ndim != self._data.ndim:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {called} tensor")
    return d, idx


def gather(self, dim: int, index, *, sparse_grad: bool = False):
    d, idx = _index_of("gather", self, dim, index, "input")
    x = self._data
    if not idx.size:  # nothing gathered: an empty result of the index's shape, checked against nothing
        return _gathered(self, np.zeros(idx.shape, x.dtype), d, index, sparse_grad)
    if x.ndim == 0:  # a 0-d input is gathered as a 1-element one
        x, idx = x.reshape(1), idx.reshape(1)
    for i, (n, m) in enumerate(zip(idx.shape, x.shape)):
        if i != d and n > m:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(idx.shape)} to be no "
                               f"larger than self {list(x.shape)} apart from dimension {d}")
    bad = (idx < 0) | (idx >= x.shape[d])
    if bad.any():
        raise RuntimeError(f"index {int(idx[bad].flat[0])} is out of bounds for dimension {d} with size {x.shape[d]}")
    return _gathered(self, xp.gather_array(x, d, idx).reshape(index._data.shape), d, index, sparse_grad)


def _gathered(self: Tensor, res: np.ndarray, d: int, index: Tensor, sparse_grad: bool) -> Tensor:
    if self._requires_grad and GRAD.mode > 0:
        saved = SavedArg(index._data, (index,))
        return record(GatherBackward0, res, (self,), dim=d, index=saved, sparse_grad=sparse_grad)
    return make(res)


def take(self, index):
    """self as if flattened, read at `index` (negative positions count from the end): TakeBackward0."""
    check_tensor(index, "take", 1 if isinstance(self, Tensor) else 2, "index")
    if index._data.dtype != np.int64:
        names = {"f": "Float", "d": "Double", "e": "Half", "i": "Int", "h": "Short", "b": "Char", "B": "Byte",
                 "?": "Bool"}
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {names.get(index._data.dtype.char)}")
    n = self._data.size
    idx = index._data
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad].flat[0])} on a tensor of {n} elements.")
    flat = np.where(idx < 0, idx + n, idx).reshape(-1)
    res = self._data.reshape(-1)[flat].reshape(idx.shape)
    if self._requires_grad and GRAD.mode > 0:
        return record(TakeBackward0, res, (self,), index=SavedArg(flat, (index,)))
    return make(res)


def masked_select(self, mask):
    """The elements of self where the (broadcast) boolean mask is true, as a 1-D tensor: MaskedSelectBackward0."""
    check_tensor(mask, "masked_select", 1 if isinstance(self, Tensor) else 2, "mask")
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        shape = np.broadcast_shapes(mask._data.shape, self._data.shape)
    except ValueError:
        raise broadcast_error(mask, self) from None
    res = np.broadcast_to(self._data, shape)[np.broadcast_to(mask._data, shape)]
    if self._requires_grad and GRAD.mode > 0:
        return record(MaskedSelectBackward0, res, (self,), mask=SavedArg(mask._data, (mask,)))
    return make(res)


def scatter_add(self, dim: int, index, src):
    d = _wrap_dim(dim, self._data.ndim)
    out = self._data.copy()
    xp.scatter_add_into(out, d, index._data, src._data)
    if GRAD.mode > 0 and (self._requires_grad or src._requires_grad):
        return record(ScatterAddBackward0, out, (self, src), dim=d, index=SavedArg(index._data, (index,)))
    return make(out)


def scatter(self, dim: int, index, src=None, *, value=None, reduce=None):
    """A copy of self with `src[i][j]` (or the number `value`) written at `index[i][j]` along `dim` (for dim 0:
    `out[index[i][j]][j] = src[i][j]`); only the index's extent of `src` is read. The one-hot idiom:
    `zeros(n, C).scatter_(1, y.unsqueeze(1), 1.0)`."""
    if reduce is not None:
        raise NotImplementedError("minigrad: scatter(reduce=...) is not implemented; use scatter_add for 'add'.")
    if src is None:
        src = value
    d, idx = _index_of("scatter", self, dim, index, "self")
    x = self._data
    is_src = isinstance(src, Tensor)
    if not idx.size:  # nothing written: only the dtypes are checked
        if is_src and src._data.dtype != x.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        return _scattered(self, src, x.copy(), d, index)
    if is_src:
        if src._data.ndim != idx.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        if src._data.dtype != x.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    for i, n in enumerate(idx.shape):
        if (i != d and n > (x.shape[i] if x.ndim else 1)) or (is_src and n > src._data.shape[i]):
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(x.shape)} apart "
                               f"from dimension {d}" + (f" and to be no larger size than src "
                                                        f"{list(src._data.shape)}" if is_src else ""))
    bad = (idx < 0) | (idx >= (x.shape[d] if x.ndim else 1))
    if bad.any():
        raise RuntimeError(f"index {int(idx[bad].flat[0])} is out of bounds for dimension {d} with size "
                           f"{x.shape[d] if x.ndim else 1}")
    out = xp.scatter(x, d, idx, src._data if is_src else _dtypes.checked(src, x.dtype))
    return _scattered(self, src, out, d, index)


def _scattered(self: Tensor, src, out: np.ndarray, d: int, index: Tensor) -> Tensor:
    saved = SavedArg(index._data, (index,))
    if isinstance(src, Tensor) and GRAD.mode > 0 and (self._requires_grad or src._requires_grad):
        return record(ScatterBackward0, out, (self, src), dim=d, index=saved)
    if not isinstance(src, Tensor) and self._requires_grad and GRAD.mode > 0:
        return record(ScatterBackward1, out, (self,), dim=d, index=saved)
    return make(out)


def _scatter_reads_other_memory(self, dim, index, src=None, **kwargs) -> None:
    """PyTorch's assert_no_overlap for scatter_: the source may not share any memory with self, not even all of it."""
    check_overlap(self._data, (src,), full_too=True)


scatter_ = inplace_of(scatter, "scatter_", check=_scatter_reads_other_memory)


def repeat(self, *sizes):
    reps = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    res = np.tile(self._data, reps)
    if not res.flags.writeable:  # an empty result can be NumPy's view of an (expanded, read-only) input
        res = res.copy()
    if self._requires_grad and GRAD.mode > 0:
        return record(RepeatBackward0, res, (self,), repeats=reps, self_sym_sizes=self._data.shape)
    return make(res)


# == declarations ===============================================================================================
_TWO = (((2, 3), "real"), ((2, 3), "real"))
declare("cat", cat, aliases=("concat", "concatenate"), method=False, nodes=(CatBackward0,),
        samples=(Sample(_TWO, as_list=True), Sample(_TWO, (1,), as_list=True)))
declare("stack", stack, method=False, nodes=(StackBackward0,),
        samples=(Sample(_TWO, as_list=True), Sample(_TWO, (1,), as_list=True)))
declare("split", split, nodes=(SplitBackward0, SplitWithSizesBackward0), numpy_names=False,
        samples=(Sample((((5, 2), "real"),), (2,)), Sample((((5, 2), "real"),), ([2, 3],))))
declare("chunk", chunk, nodes=(SplitBackward0,), samples=(Sample((((5, 2), "real"),), (2,)),))
declare("narrow", narrow, samples=(Sample((((5, 2), "real"),), (0, 1, 3)),))
declare("gather", gather, nodes=(GatherBackward0,))
declare("masked_select", masked_select, nodes=(MaskedSelectBackward0,),
        samples=(Sample((((3, 4), "real"), ((3, 4), "bool")), second_order=False),
                 Sample((((3, 4), "real"), ((4,), "bool")), second_order=False)))
declare("take", take, nodes=(TakeBackward0,),
        samples=(Sample((((3, 4), "real"), ((2, 3), "index")), second_order=False),))
declare("scatter_add", scatter_add, nodes=(ScatterAddBackward0,))
declare("scatter", scatter, inplace=scatter_, nodes=(ScatterBackward0, ScatterBackward1))
declare("repeat", repeat, namespace="Tensor", nodes=(RepeatBackward0,),
        samples=(Sample((((2, 3), "real"),), (2, 1)), Sample((((3,), "real"),), (2, 2))))


# -- meshgrid ----------------------------------------------------------------------------------------------------
MESHGRID_WARNING = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 0-D or 1-D tensors: each one viewed with size-1 dims and expanded to the grid's
    shape, as PyTorch builds them (ViewBackward0 then ExpandBackward0; the grids share their inputs' memory).
    `indexing="ij"` (the default, with PyTorch's warning) puts input i along dim i; "xy" swaps the first two."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(MESHGRID_WARNING, UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a "
                               f"{t._data.ndim}-D tensor")
    if builtins.any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(tensors)
    for t, a in zip(tensors, axes):
        shape[a] = t._data.size
    return tuple(t.view(*[-1 if i == a else 1 for i in range(len(shape))]).expand(*shape)
                 for t, a in zip(tensors, axes))


declare("meshgrid", meshgrid, method=False, nodes=(),
        samples=(Sample((((3,), "real"), ((4,), "real")), kwargs={"indexing": "ij"}, as_list=True),
                 Sample((((3,), "real"), ((4,), "real"), ((2,), "real")), kwargs={"indexing": "xy"}, as_list=True)))


# -- select, tile: written with indexing and repeat, whose nodes PyTorch records too -------------------------------
def select(self: Tensor, dim: int, index: int) -> Tensor:
    """`x.select(dim, i)`: the slice at position `i` along `dim` (`x.select(1, i)` is `x[:, i]`), a view
    recorded as SelectBackward0."""
    d = _wrap_dim(dim, self._data.ndim)
    size = self._data.shape[d] if self._data.ndim else 1
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self._data.shape)} at "
                         f"dimension {d}")
    return getitem(self, (slice(None),) * d + (index,))


def tile(self: Tensor, dims) -> Tensor:
    """`x.tile(dims)`: `x` repeated `dims[i]` times along each dim; a `dims` shorter than `x.dim()` is padded with
    ones in front (PyTorch's tile calls repeat, so the node is RepeatBackward0)."""
    if not isinstance(dims, (tuple, list)) or not all(isinstance(n, builtins.int) for n in dims):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    return repeat(self, (1,) * (self._data.ndim - len(dims)) + tuple(dims))


declare("select", select, samples=(Sample((((3, 4), "real"),), (1, 2)), Sample((((3, 4), "real"),), (0, -1))))
declare("tile", tile, samples=(Sample((((3, 4), "real"),), ((2, 1),)), Sample((((3,), "real"),), ((2, 2),))))
