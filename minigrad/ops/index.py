"""Indexing. Basic indexing (ints, slices, None, Ellipsis) makes views through a chain of
Select/Slice/Unsqueeze nodes, as PyTorch does; advanced indexing (bool masks, integer tensors
or lists) copies, through one IndexBackward0 whose backward adds into the repeated indices."""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtypes
from .._tensor import Tensor, make
from ..autograd.grad_mode import STATE
from . import derivatives as R
from ._record import record, rule
from .shape import as_view

_BASIC = (builtins.int, slice, type(None), type(Ellipsis), np.integer)


def _is_advanced(k) -> bool:
    if isinstance(k, Tensor):
        return k._data.ndim > 0 or k._data.dtype.kind == "b"
    return isinstance(k, (list, np.ndarray)) or isinstance(k, builtins.bool)


def _np_key(k):
    if isinstance(k, Tensor):
        if k._data.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k._data if k._data.ndim or k._data.dtype.kind == "b" else builtins.int(k._data)
    if isinstance(k, list):
        return np.asarray([_np_key(x) if isinstance(x, Tensor) else x for x in k])
    return k


def normalize_key(key) -> tuple:
    key = key if isinstance(key, tuple) else (key,)
    return tuple(_np_key(k) for k in key)


def _check_bounds(key: tuple, shape: tuple) -> None:
    dim = 0
    n_real = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - n_real
            continue
        if k is None:
            continue
        if isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool):
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if not -shape[dim] <= k < shape[dim]:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {shape[dim]}")
        elif isinstance(k, slice) and k.step is not None and k.step <= 0:
            raise ValueError("step must be greater than zero")
        dim += 1
    if dim > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")


def getitem(self, key):
    raw = key
    key = normalize_key(key)
    if builtins.any(_is_advanced(k) for k in (raw if isinstance(raw, tuple) else (raw,))):
        try:
            res = self._data[key]
        except IndexError as e:
            raise IndexError(str(e).replace("array", "tensor")) from None
        res = np.array(res, copy=True)
        if self._requires_grad and STATE.mode > 0:
            return record(R.IndexBackward0, res, (self,), (key, self._data.shape))
        return make(res)
    _check_bounds(key, self._data.shape)
    if not (self._requires_grad and STATE.mode > 0):
        return as_view(make(self._data[key]), self, ("getitem", key))
    return _basic_chain(self, key)


def _basic_chain(t: Tensor, key: tuple) -> Tensor:
    """Apply a basic index one component at a time, recording PyTorch's chain of view nodes."""
    from .shape import unsqueeze

    nd = t._data.ndim
    n_real = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    dim = 0
    out = t
    for k in key:
        if k is Ellipsis:
            dim += nd - n_real
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            size = out._data.shape[dim]
            start, stop, step = k.indices(size)
            if (start, stop, step) != (0, size, 1):
                sub = (slice(None),) * dim + (slice(start, stop, step),)
                res = out._data[sub]
                node_out = record(R.SliceBackward0, res, (out,), (dim, start, stop, step, out._data.shape))
                out = as_view(node_out, out, ("getitem", sub))
            dim += 1
        else:
            idx = builtins.int(k)
            sub = (slice(None),) * dim + (idx,)
            res = out._data[sub]
            node_out = record(R.SelectBackward0, res, (out,), (dim, idx, out._data.shape))
            out = as_view(node_out, out, ("getitem", sub))
    return out


def index_backward_op(g: Tensor, shape: tuple, key, accumulate: bool, name: str) -> Tensor:
    """Differentiable `zeros(shape)[key] (+)= g`: the backward of indexing, for create_graph."""
    out = np.zeros(shape, dtype=g._data.dtype)
    if accumulate:
        np.add.at(out, key, g._data)
    else:
        out[key] = g._data
    if g._requires_grad and STATE.mode > 0:
        return record(_SCATTER_NODES[name], out, (g,), (key,))
    return make(out)


_SCATTER_NODES = {
    n: rule(n, "grad", "key", grad=lambda grad, key: grad[key])
    for n in ("SelectBackwardBackward0", "SliceBackwardBackward0", "IndexPutBackward0")
}


# -- writing: __setitem__ ------------------------------------------------------------------------------
def _masked_out(grad, key):
    """The gradient of the overwritten tensor: zero where the write happened."""
    if isinstance(grad, Tensor):
        g = grad.clone()
        g[key] = 0.0
        return g
    g = grad.copy()
    g[key] = 0
    return g


def _sum_like(grad, key, shape):
    from ._dual import sum_to

    return sum_to(grad[key], shape)


CopySlices = rule("CopySlices", "self src", "key src_sym_sizes",
                  self=lambda grad, key: _masked_out(grad, key),
                  src=lambda grad, key, src_sym_sizes: _sum_like(grad, key, src_sym_sizes))
IndexPutBackward0 = rule("IndexPutBackward0", "self values", "indices values_sym_sizes",
                         self=lambda grad, indices: _masked_out(grad, indices),
                         values=lambda grad, indices, values_sym_sizes: _sum_like(grad, indices, values_sym_sizes))
CopySlices.name = lambda self: "minigrad::autograd::CopySlices"


def check_inplace(t: Tensor) -> None:
    """PyTorch's refusal to modify a leaf that requires grad (or a view of one) in place."""
    if STATE.mode <= 0:
        return
    if t._grad_fn is None and t._requires_grad:
        if t._base is not None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def setitem(self, key, value):
    from .pointwise import as_operand

    advanced = builtins.any(_is_advanced(k) for k in (key if isinstance(key, tuple) else (key,)))
    if not advanced and STATE.mode > 0 and self._grad_fn is None and self._requires_grad:
        # PyTorch writes a basic index through a view: `x[0] = v` is `x[0].copy_(v)`
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    check_inplace(self)
    nkey = normalize_key(key)
    if not advanced:
        _check_bounds(nkey, self._data.shape)
    value = as_operand(value)
    vdata = value._data if isinstance(value, Tensor) else value
    tracked = STATE.mode > 0 and (self._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if self._data.dtype.kind != "f" and isinstance(value, Tensor) and value._data.dtype.kind == "f":
        vdata = vdata.astype(self._data.dtype)
    if not tracked:
        _write(self, nkey, vdata)
        self._bump()
        return
    if self._base is not None:
        raise RuntimeError("minigrad does not yet support writing into a view of a tensor that requires grad.\n"
                           "hint: write into the base tensor itself, or clone() the view first.")
    old = make(self._data.copy(), self._grad_fn, self._requires_grad)
    old._out_nr = self._out_nr
    new = self._data.copy()
    _write_arr(new, nkey, vdata)
    src = value if isinstance(value, Tensor) else value
    shape = np.shape(vdata)
    cls = IndexPutBackward0 if advanced else CopySlices
    out = record(cls, new, (old, src), (nkey, shape))
    self._data[...] = new
    _adopt(self, out)


def _write_arr(arr: np.ndarray, key, vdata) -> None:
    try:
        arr[key] = vdata
    except ValueError as e:
        raise RuntimeError(str(e).replace("array", "tensor")) from None


def _write(t: Tensor, key, vdata) -> None:
    if not t._data.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    _write_arr(t._data, key, vdata)


def _adopt(t: Tensor, out: Tensor) -> None:
    """After an in-place op: `t` keeps its identity and storage, takes the new node, bumps its version."""
    import weakref

    node = out._grad_fn
    t._grad_fn = node
    t._requires_grad = True
    t._out_nr = 0
    node._out = weakref.ref(t)
    if node._res is not None:
        arr, _, _ = node._res
        t._bump()
        node._res = (t._data, t._box(), t._version)
    else:
        t._bump()


_ = _dtypes
