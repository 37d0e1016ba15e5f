"""Reductions: sum and mean over all elements or over `dim` (int or tuple), with `keepdim`."""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._state import GRAD
from .._tensor import Tensor, _wrap_dim, make
from . import derivatives as R
from ._record import record


def norm_dims(dim, ndim: int) -> tuple:
    """`dim` as a tuple of non-negative axes; accepts an int, a tuple or a list (PyTorch's checks)."""
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = tuple(_wrap_dim(int(d), ndim) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out


def _saved_dim(dim) -> tuple:
    return (int(dim),) if isinstance(dim, (int, np.integer)) else tuple(int(d) for d in dim)


def _sum_dtype(d: np.ndarray, dtype) -> np.dtype | None:
    if dtype is not None:
        return _dtypes.to_np(dtype)
    return np.dtype("int64") if d.dtype.kind in "biu" else None


def sum(self, dim=None, keepdim: bool = False, *, dtype=None, axis=None):
    """Sum of all elements (SumBackward0) or over `dim` (SumBackward1)."""
    d = self._data
    if dim is None and axis is None and dtype is None and not keepdim and d.dtype.kind == "f":
        res = GRAD.quiet.run(np.add.reduce, d, None)  # `x.sum()` of floats: ndarray.sum wraps this in Python
        if self._requires_grad and GRAD.mode > 0:
            return record(R.SumBackward0, res, (self,), self_sym_sizes=d.shape)
        return make(res)
    if axis is not None:
        dim = axis
    acc = _sum_dtype(d, dtype)
    if dim is None:
        res = np.asarray(d.sum(dtype=acc))
        if keepdim:
            res = res.reshape((1,) * d.ndim)
        if self._requires_grad and GRAD.mode > 0:
            if keepdim:
                return record(R.SumBackward1, res, (self,), dim=tuple(range(d.ndim)), keepdim=True,
                              self_sym_sizes=d.shape)
            return record(R.SumBackward0, res, (self,), self_sym_sizes=d.shape)
        return make(res)
    axes = norm_dims(dim, d.ndim)
    res = np.asarray(d.sum(axis=axes if d.ndim else None, keepdims=keepdim, dtype=acc))
    if self._requires_grad and GRAD.mode > 0:
        return record(R.SumBackward1, res, (self,), dim=_saved_dim(dim), keepdim=keepdim, self_sym_sizes=d.shape)
    return make(res)


def mean(self, dim=None, keepdim: bool = False, *, dtype=None):
    d = self._data
    if dtype is not None:
        d = d.astype(_dtypes.to_np(dtype))
    if d.dtype.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtypes.FROM_NP[d.dtype]._legacy[:-6]}")
    if dim is None:
        res = GRAD.quiet.run(_mean_all, d) if d.size else np.asarray(np.nan, d.dtype)
        if keepdim:
            res = np.reshape(res, (1,) * d.ndim)
        if self._requires_grad and GRAD.mode > 0:
            if keepdim:
                return record(R.MeanBackward1, res, (self,), dim=tuple(range(d.ndim)), keepdim=True,
                              self_sym_numel=d.size, self_sym_sizes=d.shape)
            return record(R.MeanBackward0, res, (self,), self_sym_numel=d.size, self_sym_sizes=d.shape)
        return make(res)
    axes = norm_dims(dim, d.ndim)
    if d.size:
        res = GRAD.quiet.run(d.mean, axes if d.ndim else None, None, None, keepdim)
    else:  # the mean over nothing is nan; NumPy would also warn about it
        res = np.full(np.sum(d, axis=axes if d.ndim else None, keepdims=keepdim).shape, np.nan, d.dtype)
    if self._requires_grad and GRAD.mode > 0:
        return record(R.MeanBackward1, res, (self,), dim=_saved_dim(dim), keepdim=keepdim, self_sym_numel=d.size,
                      self_sym_sizes=d.shape)
    return make(res)


def _mean_all(d: np.ndarray):
    """`d.mean()` without NumPy's Python-level wrapper (the same sum, then the same division)."""
    if d.dtype.itemsize < 4:  # float16 sums in float32, as NumPy's mean does
        return d.mean()
    return np.add.reduce(d, axis=None) / d.size


def sum_to_size(self, *size):
    """Sum this tensor down to `size` (the reverse of broadcasting), as PyTorch's sum_to_size."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    from ._dual import _sum_dims, expandable

    shape = self._data.shape
    if not expandable(size, shape):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    if shape == size:
        return self
    dims = _sum_dims(size, shape)
    out = sum(self, dims, keepdim=True) if dims else self
    lead = len(shape) - len(size)
    if lead:
        from .shape import view

        out = view(out, size)
    return out


_ = Tensor  # the module binds methods onto Tensor in ops/__init__.py


# -- the rest of the reductions ------------------------------------------------------------------------
class _ReturnType(tuple):
    """`minigrad.return_types.max(values=..., indices=...)`: a named pair, printed as PyTorch does."""

    _kind = "max"

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self) -> str:
        return f"minigrad.return_types.{self._kind}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _return_type(kind: str):
    return type(kind, (_ReturnType,), {"_kind": kind, "__module__": "minigrad.return_types"})


MaxResult, MinResult = _return_type("max"), _return_type("min")
_tracked = lambda t: t._requires_grad and GRAD.mode > 0  # noqa: E731


def prod(self, dim=None, keepdim: bool = False, *, dtype=None):
    d = self._data
    acc = _sum_dtype(d, dtype)
    if dim is None:
        res = np.asarray(d.prod(dtype=acc))
        if _tracked(self):
            return record(R.ProdBackward0, res, (self,))
        return make(res)
    axis = norm_dims(dim, d.ndim)[0]
    res = np.asarray(d.prod(axis=axis if d.ndim else None, keepdims=keepdim, dtype=acc))
    if _tracked(self):
        return record(R.ProdBackward1, res, (self,), dim=int(dim), keepdim=keepdim)
    return make(res)


def _extreme(self, dim, keepdim, other, np_red, np_arg, full_node, dim_node, result_cls, pairwise):
    if isinstance(dim, Tensor):  # max(a, b): the elementwise maximum
        other, dim = dim, None
    if other is not None:
        return pairwise(self, other)
    d = self._data
    if dim is None:
        if d.size == 0:
            raise RuntimeError(f"{np_red.__name__[1:] if np_red.__name__.startswith('a') else np_red.__name__}(): "
                               "Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                               "dim with the 'dim' argument.")
        res = np.asarray(np_red(d))
        if _tracked(self):
            return record(full_node, res, (self,))
        return make(res)
    ax = _wrap_dim(int(dim), d.ndim)
    src = d if d.ndim else d.reshape(1)
    idx = np_arg(src, axis=ax, keepdims=True)
    vals = np.take_along_axis(src, idx, axis=ax)
    if not keepdim or not d.ndim:
        idx, vals = np.squeeze(idx, ax), np.squeeze(vals, ax)
    if not d.ndim:
        idx, vals = idx.reshape(()), vals.reshape(())
    indices = make(np.asarray(idx, np.int64))
    if _tracked(self):
        values = record(dim_node, np.asarray(vals), (self,), dim=int(dim), keepdim=keepdim, indices=np.asarray(idx),
                        self_sym_sizes=d.shape)
    else:
        values = make(np.asarray(vals))
    return result_cls(values, indices)


def max(self, dim=None, keepdim: bool = False, *, other=None):
    from .pointwise import maximum

    return _extreme(self, dim, keepdim, other, np.max, np.argmax, R.MaxBackward1, R.MaxBackward0, MaxResult, maximum)


def min(self, dim=None, keepdim: bool = False, *, other=None):
    from .pointwise import minimum

    return _extreme(self, dim, keepdim, other, np.min, np.argmin, R.MinBackward1, R.MinBackward0, MinResult, minimum)


def _amax_like(np_red, node):
    def op(self, dim=(), keepdim: bool = False):
        d = self._data
        dims = tuple(range(d.ndim)) if dim in ((), None) else norm_dims(dim, d.ndim)
        res = np.asarray(np_red(d, axis=dims if d.ndim else None, keepdims=keepdim))
        if _tracked(self):
            return record(node, res, (self,), dim=dims if dim not in ((), None) else tuple(range(d.ndim)),
                          keepdim=keepdim)
        return make(res)
    return op


amax = _amax_like(np.max, R.AmaxBackward0)
amin = _amax_like(np.min, R.AminBackward0)


def argmax(self, dim=None, keepdim: bool = False):
    d = self._data
    if dim is None:
        return make(np.asarray(np.argmax(d), np.int64).reshape((1,) * d.ndim if keepdim else ()))
    return make(np.asarray(np.argmax(d, axis=_wrap_dim(dim, d.ndim), keepdims=keepdim), np.int64))


def argmin(self, dim=None, keepdim: bool = False):
    d = self._data
    if dim is None:
        return make(np.asarray(np.argmin(d), np.int64).reshape((1,) * d.ndim if keepdim else ()))
    return make(np.asarray(np.argmin(d, axis=_wrap_dim(dim, d.ndim), keepdims=keepdim), np.int64))


def _correction(unbiased, correction) -> float:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    if isinstance(dim, bool):  # var(unbiased) positional form
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    d = self._data
    dims = None if dim is None else norm_dims(dim, d.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = np.asarray(np.var(d, axis=dims, ddof=c, keepdims=keepdim))
    if _tracked(self):
        return record(R.VarBackward0, res.astype(d.dtype), (self,), correction=c, dim=dims, keepdim=keepdim)
    return make(res.astype(d.dtype))


def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    c = _correction(unbiased, correction)
    d = self._data
    dims = None if dim is None else norm_dims(dim, d.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = np.asarray(np.std(d, axis=dims, ddof=c, keepdims=keepdim))
    if _tracked(self):
        return record(R.StdBackward0, res.astype(d.dtype), (self,), correction=c, dim=dims, keepdim=keepdim)
    return make(res.astype(d.dtype))


def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """Vector norm (p=2 by default) over all elements or `dim` (LinalgVectorNormBackward0)."""
    ord = 2.0 if p in ("fro", None) else float("inf") if p == "inf" else float(p)
    d = self._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dtypes.FROM_NP[d.dtype]._legacy[:-6]}")
    dims = None if dim is None else norm_dims(dim, d.ndim)
    a = np.abs(d)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if ord == float("inf"):
            res = a.max(axis=dims, keepdims=keepdim) if a.size else np.zeros(())
        elif ord == float("-inf"):
            res = a.min(axis=dims, keepdims=keepdim)
        elif ord == 0:
            res = (a != 0).sum(axis=dims, keepdims=keepdim).astype(d.dtype)
        elif ord == 2:
            res = np.sqrt((a * a).sum(axis=dims, keepdims=keepdim))
        else:
            res = (a ** ord).sum(axis=dims, keepdims=keepdim) ** (1 / ord)
    res = np.asarray(res, d.dtype)
    if _tracked(self):
        return record(R.LinalgVectorNormBackward0, res, (self,), ord=ord, dim=dims, keepdim=keepdim)
    return make(res)


def logsumexp(self, dim, keepdim: bool = False):
    d = self._data if self._data.dtype.kind == "f" else self._data.astype(_dtypes.default_np())
    dims = norm_dims(dim, d.ndim)
    with np.errstate(invalid="ignore", over="ignore"):
        m = np.max(d, axis=dims, keepdims=True) if d.size else np.zeros((1,) * d.ndim, d.dtype)
        m = np.where(np.isfinite(m), m, 0)
        res = np.log(np.sum(np.exp(d - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        res = np.squeeze(res, axis=dims)
    res = np.asarray(res, d.dtype)
    if _tracked(self):
        return record(R.LogsumexpBackward0, res, (self,), dim=_saved_dim(dim), keepdim=keepdim)
    return make(res)


def _softmax_dim(dim, ndim: int) -> int:
    if dim is None:
        import warnings

        warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                      "as an argument.", UserWarning, stacklevel=3)
        dim = 0 if ndim in (0, 1, 3) else 1
    return _wrap_dim(dim, ndim)


def softmax(self, dim=None, dtype=None):
    d = self._data if dtype is None else self._data.astype(_dtypes.to_np(dtype))
    ax = _softmax_dim(dim, d.ndim)
    e = np.exp(d - d.max(axis=ax, keepdims=True)) if d.size else d.copy()
    res = e / e.sum(axis=ax, keepdims=True) if d.size else e
    if _tracked(self):
        return record(R.SoftmaxBackward0, res, (self,), dim=ax)
    return make(res)


def log_softmax(self, dim=None, dtype=None):
    d = self._data if dtype is None else self._data.astype(_dtypes.to_np(dtype))
    ax = _softmax_dim(dim, d.ndim)
    if d.size:
        shifted = d - d.max(axis=ax, keepdims=True)
        res = shifted - np.log(np.exp(shifted).sum(axis=ax, keepdims=True))
    else:
        res = d.copy()
    if _tracked(self):
        return record(R.LogSoftmaxBackward0, res, (self,), dim=ax)
    return make(res)


def cumsum(self, dim, *, dtype=None):
    d = self._data
    ax = _wrap_dim(dim, d.ndim)
    res = np.cumsum(d, axis=ax if d.ndim else None, dtype=_sum_dtype(d, dtype)).reshape(d.shape)
    if _tracked(self):
        return record(R.CumsumBackward0, res, (self,), dim=ax)
    return make(res)
