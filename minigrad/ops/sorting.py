"""Sorting and counting: sort, argsort, topk, histogram, histc.

sort and topk pick elements, so their derivative puts each incoming gradient back where its element came
from (`indices`), zeros elsewhere: a scatter along `dim`, which under `create_graph=True` is the
differentiable `scatter` (ScatterBackward0, as PyTorch's value_selecting_reduction_backward). argsort and the histograms
return counts or positions: no gradient flows.
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes, _linspace
from .._state import GRAD
from .._tensor import Tensor, _wrap_dim, make
from . import xp
from .recording import SavedArg, record, record_multi, rule
from .reductions import StructSeq, _return_type
from .registry import Sample, declare


def _scatter_back(grad, dim: int, indices: np.ndarray, sizes: tuple):
    """zeros(sizes) with grad[i] written at indices[i] along dim (PyTorch's value_selecting_reduction_backward)."""
    if not sizes:  # a 0-d input: its one element was picked
        return grad
    if xp.is_t(grad):  # (written, not added to +0: a -0. gradient stays -0.)
        return xp.scatter(make(np.zeros(sizes, grad._data.dtype)), dim, indices, grad)
    out = np.zeros(sizes, grad.dtype)
    np.put_along_axis(out, indices, grad, axis=dim)
    return out


def _picked(self_t, dim: int, indices: np.ndarray):
    """The tangent of sort's and topk's values: the input's tangent at the picked elements (a 0-d input: itself)."""
    if not len(self_t.shape):
        return self_t
    return xp.gather(self_t, dim % len(self_t.shape), indices)


SortBackward0 = rule("SortBackward0", "self", saves="dim indices self_sym_sizes", tensor_args="indices",
                     text="grad_self = grad put back at the sorted elements' places (indices) along dim",
                     forward=lambda self_t, dim, indices: _picked(self_t, dim, indices),
                     self=lambda grad, dim, indices, self_sym_sizes: _scatter_back(grad, dim, indices, self_sym_sizes))
# `sort(..., stable=...)` is PyTorch's other overload (sort.stable), recorded as SortBackward1.
SortBackward1 = rule("SortBackward1", "self", saves="dim indices self_sym_sizes", tensor_args="indices",
                     text="grad_self = grad put back at the sorted elements' places (indices) along dim",
                     forward=lambda self_t, dim, indices: _picked(self_t, dim, indices),
                     self=lambda grad, dim, indices, self_sym_sizes: _scatter_back(grad, dim, indices, self_sym_sizes))
TopkBackward0 = rule("TopkBackward0", "self", saves="dim indices self_sym_sizes", tensor_args="indices",
                     text="grad_self = grad at the k picked elements' places (indices), 0 elsewhere",
                     forward=lambda self_t, dim, indices: _picked(self_t, dim, indices),
                     self=lambda grad, dim, indices, self_sym_sizes: _scatter_back(grad, dim, indices, self_sym_sizes))

SortResult, TopkResult = _return_type("sort"), _return_type("topk")


def _order(d: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sorting indices along axis (ties keep their order); NaN counts as the largest value, as in PyTorch.

    Descending: a stable ascending sort of the reversed tensor, read backwards, keeps ties in their order."""
    if not descending:
        return np.argsort(d, axis=axis, kind="stable")
    n = d.shape[axis]
    return np.flip(n - 1 - np.argsort(np.flip(d, axis), axis=axis, kind="stable"), axis)


_UNSET = object()


def sort(self: Tensor, dim: int = -1, descending: bool = False, *, stable=_UNSET):
    """(values, indices) sorted along `dim`; ties keep their order (a stable sort, whatever `stable` says)."""
    if isinstance(dim, bool):  # sort(descending) positionally is not PyTorch's signature, but sort(x, True) is
        dim, descending = -1, dim
    d = self._data
    ax = _wrap_dim(dim, d.ndim)
    src = d.reshape(1) if d.ndim == 0 else d
    idx = _order(src, ax, descending)
    values = np.take_along_axis(src, idx, axis=ax).reshape(d.shape)
    idx = idx.reshape(d.shape).astype(np.int64)
    indices = make(idx)
    if self._requires_grad and GRAD.mode > 0:
        node = SortBackward0 if stable is _UNSET else SortBackward1
        out = record(node, values, (self,), dim=ax, indices=SavedArg(idx, (indices,)), self_sym_sizes=d.shape)
    else:
        out = make(values)
    return SortResult(out, indices)


def argsort(self: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort the tensor along `dim` (`sort(...).indices`)."""
    d = self._data
    ax = _wrap_dim(dim, d.ndim)
    src = d.reshape(1) if d.ndim == 0 else d
    return make(_order(src, ax, descending).reshape(d.shape).astype(np.int64))


def msort(self: Tensor) -> Tensor:
    """Sorted along the first dim."""
    return sort(self, 0).values


def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """(values, indices) of the k largest (or smallest) elements along `dim`, largest first."""
    d = self._data
    ax = _wrap_dim(dim, d.ndim)
    n = d.shape[ax] if d.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    src = d.reshape(1) if d.ndim == 0 else d
    k = 1 if d.ndim == 0 else k  # (PyTorch's k=0 of a 0-d tensor gives its element too)
    idx = np.take(_order(src, ax, largest), np.arange(k), axis=ax)
    values = np.take_along_axis(src, idx, axis=ax)
    if d.ndim == 0:
        idx, values = idx.reshape(()), values.reshape(())
    idx = idx.astype(np.int64)
    indices = make(idx)
    if self._requires_grad and GRAD.mode > 0:
        out = record(TopkBackward0, values, (self,), dim=dim, indices=SavedArg(idx, (indices,)), self_sym_sizes=d.shape)
    else:
        out = make(values)
    return TopkResult(out, indices)


# -- histograms ----------------------------------------------------------------------------------------------
class HistogramResult(StructSeq):
    """`minigrad.return_types.histogram(hist=..., bin_edges=...)`, printed as PyTorch prints it."""

    __module__ = "minigrad.return_types"

    def __new__(cls, hist, bin_edges):
        return tuple.__new__(cls, (hist, bin_edges))

    @property
    def hist(self):
        return self[0]

    @property
    def bin_edges(self):
        return self[1]

    def __repr__(self) -> str:
        return f"minigrad.return_types.histogram(\nhist={self[0]!r},\nbin_edges={self[1]!r})"


HistogramResult.__name__ = HistogramResult.__qualname__ = "histogram"


def _no_derivative(grads):
    raise RuntimeError("derivative for aten::histogram is not implemented")


# PyTorch records histogram with its placeholder node, which fails only when backward reaches it.
HistogramNotImplemented = rule("NotImplemented", "self", multi=True, text="no derivative: histogram counts elements",
                               self=_no_derivative)
HistogramNotImplemented.name = lambda self: "minigrad::autograd::NotImplemented"


def _float_input(self: Tensor, what: str) -> np.ndarray:
    d = self._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f"\"{what}\" not implemented for '{_dtypes.FROM_NP[d.dtype]._legacy[:-6]}'")
    return d


def histogram(self: Tensor, bins=100, *, range=None, weight=None, density: bool = False) -> HistogramResult:
    """(hist, bin_edges): counts of the elements in `bins` equal-width bins over `range` (default: the data's
    min and max), or between the given edges (a 1-d tensor); the last bin includes its right edge."""
    d = _float_input(self, "histogramdd")
    w = None if weight is None else weight._data
    edges = bins._data if isinstance(bins, Tensor) else int(bins)
    if range is None and not isinstance(bins, Tensor) and d.size:  # the data's range: PyTorch's error when not finite
        lo, hi = float(d.min()), float(d.max())
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"minigrad.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
    if not isinstance(bins, Tensor) and edges > 0:  # PyTorch's edges: its linspace kernel over the outer edges
        edges = _linspace.kernel(*_outer_edges(d, range), edges + 1, d.dtype)
    hist, bin_edges = np.histogram(d.reshape(-1), bins=edges, range=range,
                                   weights=None if w is None else w.reshape(-1), density=density)
    outs = [hist.astype(d.dtype), np.asarray(bin_edges, d.dtype)]
    if self._requires_grad and GRAD.mode > 0:
        return HistogramResult(*record_multi(HistogramNotImplemented, outs, (self,)))
    return HistogramResult(*(make(o) for o in outs))


def _outer_edges(d: np.ndarray, range) -> tuple[float, float]:
    """The first and last bin edges: the range, or the data's min and max (0 and 1 when empty), an empty span
    widened by 0.5 on each side (NumPy's rule, which PyTorch follows)."""
    lo, hi = (float(range[0]), float(range[1])) if range is not None else (
        (float(d.min()), float(d.max())) if d.size else (0.0, 1.0))
    return (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)


def _c_text(v: float) -> str:
    """A double as C++'s stream writes it (6 significant digits, as %g; a NaN with its sign bit is "-nan")."""
    return "-nan" if np.isnan(v) and np.signbit(v) else f"{v:g}"


def _extremes(d: np.ndarray) -> tuple[float, float]:
    """PyTorch's aminmax as histc reads it: with a NaN among two or more elements, both are its default NaN
    (sign bit set); one element is itself."""
    if d.size > 1 and np.isnan(d).any():
        return -np.nan, -np.nan
    return float(d.min()), float(d.max())


def _widened(dtype: np.dtype, lo: float, hi: float) -> tuple[float, float]:
    """PyTorch's bins_edges_correction of an empty range: for float32/64 the farther of one step of the dtype
    and 1 on each side, else 1."""
    if dtype in (np.float32, np.float64):
        top = np.finfo(dtype).max
        with np.errstate(all="ignore"):
            down, up = (float(np.nextafter(dtype.type(v), dtype.type(t))) for v, t in ((lo, -top), (hi, top)))
        return min(down, lo - 1.0), max(up, hi + 1.0)
    return lo - 1.0, hi + 1.0


def _histc_range(d: np.ndarray, bins: int, lo: float, hi: float) -> tuple[float, float]:
    """PyTorch's checks of histc, in its order: bins, the range (the data's extremes when min == max, widened
    when empty), then the edges' dtype."""
    if bins <= 0:
        raise RuntimeError(f"minigrad.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if lo == hi and d.size:
        lo, hi = _extremes(d)
    if lo == hi:
        lo, hi = _widened(d.dtype, lo, hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"minigrad.histc: range of [{_c_text(lo)}, {_c_text(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("minigrad.histc: max must be larger than min")
    if d.dtype.kind == "b":
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    _linspace.check_fits(d.dtype, lo)  # linspace's conversion of the edges (doubles) to the input's dtype
    _linspace.check_fits(d.dtype, hi)
    return lo, hi


def histc(self: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts in `bins` equal-width bins between min and max (both 0: the data's extremes); elements outside
    are ignored."""
    d = self._data
    lo, hi = _histc_range(d, int(bins), float(min), float(max))
    d = _float_input(self, "histogram_cpu")
    return make(_histc_counts(d.reshape(-1), int(bins), lo, hi))


def _histc_counts(x: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """PyTorch's linear binning, in the input's dtype: the outer edges as linspace makes them (start + step * 0,
    so NaN when the step overflows, and nothing is counted), then bin (x - left) * bins / (right - left),
    the last bin closed. Where that overflows (inf, or NaN), C++'s conversion to int64 gives INT64_MIN, which
    times the element size wraps to offset 0: PyTorch counts the element in the first bin."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        step = (t(hi) - t(lo)) / t(bins)
        left, right = t(lo) + step * t(0), t(hi) - step * t(0)
        x = x[(x >= left) & (x <= right)]
        pos = (x - left) * t(bins) / (right - left)
    pos = np.minimum(np.where(np.isfinite(pos), pos, 0).astype(np.int64), bins - 1)
    return np.bincount(pos, minlength=bins).astype(x.dtype)


# == declarations ===============================================================================================
_D = (((3, 4), "distinct"),)
declare("sort", sort, nodes=(SortBackward0, SortBackward1),
        samples=(Sample(_D), Sample(_D, (0,)), Sample(_D, (1, True)), Sample((((5,), "distinct"),)),
                 Sample(_D, kwargs={"stable": True, "descending": True})))
declare("argsort", argsort, differentiable=False, samples=(Sample(_D), Sample(_D, (0, True))))
declare("msort", msort, nodes=(SortBackward0,), samples=(Sample(_D),))
declare("topk", topk, nodes=(TopkBackward0,),
        samples=(Sample(_D, (2,)), Sample(_D, (2, 0)), Sample(_D, (3,), {"largest": False}),
                 Sample((((5,), "distinct"),), (5,))))
declare("histogram", histogram, differentiable=False, nodes=(HistogramNotImplemented,),
        samples=(Sample((((20,), "real"),), (4,)), Sample((((3, 5), "real"),), (3,), {"range": (-1.0, 1.0)})))
declare("histc", histc, differentiable=False,
        samples=(Sample((((20,), "real"),), (4,)), Sample((((3, 5), "real"),), (5, -1.0, 1.5))))


# -- unique ------------------------------------------------------------------------------------------------------
def _no_unique_derivative(op: str):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{op}' is not implemented.")
    return formula


Unique2Backward0 = rule("Unique2Backward0", "self", text="no derivative: backward through unique raises",
                        self=_no_unique_derivative("_unique2"))
UniqueDimBackward0 = rule("UniqueDimBackward0", "self", text="no derivative: backward through unique raises",
                          self=_no_unique_derivative("unique_dim"))


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None):
    """The distinct values (sorted), or the distinct slices along `dim`; with `return_inverse` where each
    element (slice) went, with `return_counts` how often each occurs. Its node has no derivative, as PyTorch's."""
    x = input._data
    if dim is None:
        vals, inv, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
        node = Unique2Backward0
    else:
        d = _wrap_dim(dim, x.ndim)
        vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
        node = UniqueDimBackward0
    out = record(node, vals, (input,)) if input._requires_grad and GRAD.mode > 0 else make(vals)
    extra = ((make(inv.astype(np.int64)),) if return_inverse else ()) + \
        ((make(counts.astype(np.int64)),) if return_counts else ())
    return (out, *extra) if extra else out


declare("unique", unique, differentiable=False, numpy_names=False, nodes=(Unique2Backward0, UniqueDimBackward0),
        samples=(Sample((((3, 4), "int"),)), Sample((((3, 4), "int"),), kwargs={"return_inverse": True,
                                                                               "return_counts": True}),
                 Sample((((3, 2), "int"),), kwargs={"dim": 0, "return_inverse": True})))
