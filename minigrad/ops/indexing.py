"""Indexing, as PyTorch indexes.

Reading (`x[key]`): the basic parts of the key (ints, slices, None, Ellipsis) are applied first,
one at a time, as views (SelectBackward0 / SliceBackward0 / UnsqueezeBackward0 nodes; a key that
changes nothing gives AliasBackward0); the advanced parts (bool masks, integer tensors or lists)
then index that view, through one IndexBackward0 whose backward adds into repeated indices. This
is also how PyTorch's values differ from NumPy's: `x[0, :, [0, 1]]` has shape (n1, 2), not (2, n1).

Writing (`x[key] = v`) goes through the same view: with a basic key, PyTorch copies `v` into the
view (`copy_` / `fill_`, broadcasting by `expand`), so the base's node becomes CopySlices; with an
advanced key it calls `index_put_` (IndexPutBackward0, or CopySlices around it when the key also
had basic parts). In-place writes into views are implemented in `inplace.py`.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import _dtypes
from .._stacklevel import user_stacklevel
from .._state import GRAD
from .._tensor import Tensor, make
from . import inplace, xp
from .dual import forward_aware
from .inplace import copy_, fill_, kind_name, run_inplace, writable
from .recording import SavedArg, record, rule
from .registry import Sample, declare
from .selection import masked_fill_
from .views import AliasBackward0, as_view, expand, unsqueeze, view

# == derivative rows, and the helpers their formulas use ======================================================
# -- indexing -----------------------------------------------------------------------------------------
SelectBackward0 = rule("SelectBackward0", "self", saves="dim index self_sym_sizes",
                       forward="linear", text="grad_self = zeros(self's shape) with grad written at [index] along dim",
                       self=lambda grad, dim, index, self_sym_sizes: xp.scatter_into(
                           grad, self_sym_sizes, _select_key(dim, index), False, "SelectBackwardBackward0"))
SliceBackward0 = rule("SliceBackward0", "self", saves="dim start end step self_sym_sizes",
                      text="grad_self = zeros(self's shape) with grad written at [start:end:step] along dim",
                      forward="linear",
                      self=lambda grad, dim, start, end, step, self_sym_sizes: xp.scatter_into(
                          grad, self_sym_sizes, _slice_key(dim, start, end, step), False, "SliceBackwardBackward0"))
IndexBackward0 = rule("IndexBackward0", "self", saves="indices self_sym_sizes", tensor_args="indices",
                      forward="linear", text="grad_self = zeros(self's shape) with grad added at the indexed places",
                      self=lambda grad, indices, self_sym_sizes: xp.scatter_into(
                          grad, self_sym_sizes, indices, True, "IndexPutImplBackward0"))



def _select_key(dim: int, index: int):
    return (slice(None),) * dim + (index,)


def _slice_key(dim: int, start: int, end: int, step: int):
    return (slice(None),) * dim + (slice(start, end, step),)


_BASIC = (builtins.int, slice, type(None), type(Ellipsis), np.integer)
_FULL = slice(None)


def _is_advanced(k) -> bool:
    if isinstance(k, Tensor):
        return k._data.ndim > 0 or k._data.dtype.kind == "b"
    return isinstance(k, (list, range, np.ndarray)) or isinstance(k, builtins.bool)


def _np_key(k):
    if isinstance(k, Tensor):
        if k._data.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k._data if k._data.ndim or k._data.dtype.kind == "b" else builtins.int(k._data)
    if isinstance(k, list):
        if not k:  # x[[]]: an empty integer index
            return np.zeros(0, np.int64)
        return np.asarray([_np_key(x) if isinstance(x, Tensor) else x for x in k])
    if isinstance(k, range):  # `logits[range(n), ys]`: a sequence of indices, as a list is
        return np.asarray(k, dtype=np.int64)
    if isinstance(k, np.ndarray) and k.dtype.kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if not isinstance(k, _BASIC + (np.ndarray, builtins.bool)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         "indices (got " + type(k).__name__ + ")")
    return k


def normalize_key(key) -> tuple:
    key = key if isinstance(key, tuple) else (key,)
    return tuple(_np_key(k) for k in key)


def split_key(key: tuple, ndim: int):
    """PyTorch's applySlicing: a NumPy basic key (advanced parts replaced by full slices) and the advanced key
    to apply to its result (None when the key is all basic)."""
    specified = 0
    for k in key:
        if isinstance(k, np.ndarray) and k.dtype.kind == "b":
            specified += k.ndim
        elif isinstance(k, builtins.bool):
            continue
        elif k is not None and k is not Ellipsis:
            specified += 1
    basic = []
    adv = {}
    dim = 0
    for k in key:
        if k is Ellipsis:
            basic.append(Ellipsis)
            dim += builtins.max(ndim - specified, 0)
        elif k is None:
            basic.append(None)
            dim += 1
        elif isinstance(k, builtins.bool):  # x[True]: a new dim indexed by a mask
            basic.append(None)
            adv[dim] = np.array([k])
            dim += 1
        elif isinstance(k, np.ndarray):
            n = k.ndim if k.dtype.kind == "b" else 1
            if k.dtype.kind == "b" and k.ndim == 0:
                basic.append(None)
                adv[dim] = k.reshape(1)
                dim += 1
                continue
            basic.extend([_FULL] * n)
            adv[dim] = k
            dim += n
        elif isinstance(k, slice):
            basic.append(k)
            dim += 1
        else:
            basic.append(builtins.int(k))
    if not adv:
        return tuple(basic), None
    last = builtins.max(adv)
    akey = []
    d = 0
    while d <= last:
        if d in adv:
            a = adv[d]
            akey.append(a)
            d += a.ndim if a.dtype.kind == "b" else 1
        else:
            akey.append(_FULL)
            d += 1
    return tuple(basic), tuple(akey)


def _view_key(basic: tuple) -> tuple:
    """A basic key that always gives a NumPy view (all-int keys would give a scalar copy)."""
    return basic if any(k is Ellipsis for k in basic) else basic + (Ellipsis,)


def _check_bounds(key: tuple, shape: tuple) -> None:
    dim = 0
    n_real = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            dim += builtins.max(len(shape) - n_real, 0)
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


def _check_masks(akey: tuple, shape: tuple) -> None:
    d = 0
    for k in akey:
        if k.__class__ is slice:
            d += 1
            continue
        if isinstance(k, np.ndarray) and k.dtype.kind == "b":
            for j, n in enumerate(k.shape):
                if d + j < len(shape) and shape[d + j] != n:
                    raise IndexError(f"The shape of the mask [{', '.join(map(str, k.shape))}] at index {j} does not "
                                     f"match the shape of the indexed tensor [{', '.join(map(str, shape))}] at index "
                                     f"{d + j}")
            d += k.ndim
        else:
            d += 1


def _advanced(arr: np.ndarray, akey: tuple) -> np.ndarray:
    _check_masks(akey, arr.shape)
    try:
        return np.asarray(arr[akey])  # advanced indexing always copies
    except IndexError as e:
        raise _index_error(e) from None


def _zero_dim_error(key) -> IndexError:
    """A lone int or slice into a 0-d tensor: PyTorch's own messages (a tuple key says "too many indices")."""
    if key.__class__ is slice:
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    if key != 0:
        return IndexError(f"index {key} is out of bounds for dimension 0 with size 0")
    return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                      "to convert a 0-dim tensor to a number")


def getitem(self, key):
    kc = key.__class__
    if kc is builtins.int or kc is slice:  # the common single int / slice, without the general machinery
        d = self._data
        if d.ndim:
            n = d.shape[0]
            if kc is builtins.int:
                if -n <= key < n:
                    if self._requires_grad and GRAD.mode > 0:
                        out = record(SelectBackward0, d[key, ...], (self,), dim=0, index=key, self_sym_sizes=d.shape)
                        return as_view(out, self, ("getitem", (key,)))
                    return as_view(make(d[key, ...]), self, ("getitem", (key,)))
            elif key.step is None or key.step > 0:
                if self._requires_grad and GRAD.mode > 0:
                    return slice_view(self, 0, key)
                return as_view(make(d[key]), self, ("getitem", (key,)))
        else:
            raise _zero_dim_error(key)
    elif kc is list or kc is Tensor or kc is np.ndarray or kc is range:  # a lone advanced index
        k = _np_key(key)
        if k.__class__ is np.ndarray and k.ndim and self._data.ndim:
            akey = (k,)
            res = _advanced(self._data, akey)
            if self._requires_grad and GRAD.mode > 0:
                return record(IndexBackward0, res, (self,), indices=SavedArg(akey, (key,)),
                              self_sym_sizes=self._data.shape)
            return make(res)
    single = not isinstance(key, tuple)
    nkey = normalize_key(key)
    basic, akey = split_key(nkey, self._data.ndim)
    _check_bounds(basic, self._data.shape)
    if not (self._requires_grad and GRAD.mode > 0):
        view = self._data[_view_key(basic)]
        if akey is None:
            return as_view(make(view), self, ("getitem", basic))
        return make(_advanced(view, akey))
    if single and akey is None:
        k = basic[0]
        if isinstance(k, slice):  # a lone slice always makes a SliceBackward0, even `x[:]`
            return slice_view(self, 0, k)
        if k is Ellipsis:
            return alias(self)
    sliced = _basic_chain(self, basic)
    if akey is None:
        return alias(self) if sliced is self else sliced
    res = _advanced(sliced._data, akey)
    return record(IndexBackward0, res, (sliced,), indices=SavedArg(akey, key if isinstance(key, tuple) else (key,)),
                  self_sym_sizes=sliced._data.shape)


def alias(t: Tensor) -> Tensor:
    """`x[...]`: a new tensor object viewing all of `x` (AliasBackward0)."""
    if t._requires_grad and GRAD.mode > 0:
        out = record(AliasBackward0, t._data[...], (t,))
    else:
        out = make(t._data[...])
    return as_view(out, t, ("getitem", (Ellipsis,)))


def slice_view(out: Tensor, dim: int, k: slice) -> Tensor:
    start, stop, step = k.indices(out._data.shape[dim])
    sub = (_FULL,) * dim + (slice(start, stop, step),)
    node_out = record(SliceBackward0, out._data[sub], (out,), dim=dim, start=start, end=stop, step=step,
                      self_sym_sizes=out._data.shape)
    return as_view(node_out, out, ("getitem", sub))


def keeps_all(k: slice, n: int) -> bool:
    """Does PyTorch skip this slice as one that keeps a whole dim of size `n`? Only as written from 0 with step 1:
    `x[0:]` and `x[:99]` are skipped, `x[-n:]` is not (it becomes a SliceBackward0, or a CopySlices when written)."""
    return (k.start is None or k.start == 0) and (k.step is None or k.step == 1) and (k.stop is None or k.stop >= n)


def _basic_chain(t: Tensor, key: tuple) -> Tensor:
    """Apply a basic key one component at a time, recording PyTorch's chain of view nodes (slices that keep
    everything are skipped, as PyTorch's applySlicing does)."""

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
            if not keeps_all(k, out._data.shape[dim]):
                out = slice_view(out, dim, k)
            dim += 1
        else:
            idx = builtins.int(k)
            sub = (_FULL,) * dim + (idx,)
            node_out = record(SelectBackward0, out._data[sub + (Ellipsis,)], (out,), dim=dim, index=idx,
                              self_sym_sizes=out._data.shape)
            out = as_view(node_out, out, ("getitem", sub))
    return out


def _replay_key(t: Tensor, key: tuple) -> Tensor:
    """`t[key]` for the basic, already checked key a view recorded (`as_view`'s "getitem" recipe), without
    parsing it again: what a view's node is rebuilt from after an in-place write (inplace.rebuild_view_node)."""
    if not (t._requires_grad and GRAD.mode > 0):
        return getitem(t, key)
    sliced = _basic_chain(t, key)
    return alias(t) if sliced is t else sliced


inplace.REPLAY_KEY[0] = _replay_key


def _index_backward_op(g: Tensor, shape: tuple, key, accumulate: bool, name: str) -> Tensor:
    """Differentiable `zeros(shape)[key] (+)= g`: the backward of indexing, for create_graph."""
    out = np.zeros(shape, dtype=g._data.dtype)
    if accumulate:
        with np.errstate(invalid="ignore", over="ignore"):  # (inf + -inf: nan, silently)
            np.add.at(out, key, g._data)
    else:
        out[key] = g._data
    if g._requires_grad and GRAD.mode > 0:
        if name == "IndexPutImplBackward0":  # PyTorch's _index_put_impl_ into new zeros: edges (zeros, values)
            return record(IndexPutImplBackward0, out, (make(np.zeros(shape, g._data.dtype)), g), key=key)
        return record(_SCATTER_NODES[name], out, (g,), key=key)
    return make(out)


_SCATTER_NODES = {
    n: rule(n, "grad", saves="key", text="grad_grad = grad[key]  (the places the gradient was written to)",
            forward="linear", grad=lambda grad, key: grad[key])
    for n in ("SelectBackwardBackward0", "SliceBackwardBackward0", "IndexPutBackward0")
}
IndexPutImplBackward0 = rule("IndexPutImplBackward0", "self values", saves="key", forward="linear",
                             text="grad_self = grad, grad_values = grad[key]  (the places the values were added to)",
                             self=lambda grad: grad, values=lambda grad, key: grad[key])
# the backward of indexing carries tangents too (forward-over-reverse: a Hessian by forward AD over a gradient)
index_backward_op = forward_aware(_index_backward_op, (*_SCATTER_NODES.values(), IndexPutImplBackward0),
                                  "index_backward")


# -- writing: __setitem__ ------------------------------------------------------------------------------
def _masked_out(grad, key):
    """The gradient of the overwritten tensor: zero where the write happened."""
    if isinstance(grad, Tensor):  # PyTorch: grad.index_put(indices, zeros_like(values)); a product with a 0/1 mask
        res = np.array(grad._data, copy=True)  # would turn an inf or nan gradient into nan where it was written
        res[key] = 0
        if grad._requires_grad and GRAD.mode > 0:
            zeros = make(np.zeros(np.shape(res[key]), res.dtype))
            return record(IndexPutBackward0, res, (grad, zeros), indices=key, accumulate=False)
        return make(res)
    g = np.array(grad, copy=True)
    g[key] = 0
    return g


def _values_grad(grad, key):
    return grad[key]


IndexPutBackward0 = rule("IndexPutBackward0", "self values", saves="indices accumulate", tensor_args="indices",
                         text="grad_self = grad with the written places zeroed, grad_values = grad[indices]",
                         self=lambda grad, indices: _masked_out(grad, indices),
                         values=lambda grad, indices: _values_grad(grad, indices))


def _strip_leading_ones(shape: tuple) -> tuple:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return tuple(shape[i:])


def _value_tensor(self: Tensor, value) -> Tensor:
    """A number written into a tensor becomes a 0-d tensor of the tensor's dtype (PyTorch's valueToTensor);
    minigrad also accepts lists and NumPy arrays, taken in the tensor's dtype."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (builtins.int, builtins.float)):  # (a bool is an int)
        value = _dtypes.checked(value, self._data.dtype)
    return make(np.array(_as_data(value)).astype(self._data.dtype, copy=False))


def _as_data(value):
    if isinstance(value, (list, tuple)):
        return [_as_data(v) for v in value]
    return value._data if isinstance(value, Tensor) else value


def _expand_error(vshape: tuple, dshape: tuple) -> RuntimeError:

    try:
        expand(make(np.empty(vshape)), dshape)
    except RuntimeError as e:
        return e
    return RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to {list(dshape)}")


def _put_error(vshape: tuple, rshape: tuple) -> RuntimeError:
    return RuntimeError(f"shape mismatch: value tensor of shape [{', '.join(map(str, vshape))}] cannot be broadcast "
                        f"to indexing result of shape [{', '.join(map(str, rshape))}]")


def setitem(self, key, value):
    if isinstance(value, np.generic) and not isinstance(value, (builtins.float, np.integer)):
        # PyTorch takes a NumPy scalar only as a Python number (np.float64 is a float) or an index (np.int64)
        kind = type(value)
        raise TypeError(f"can't assign a {kind.__module__}.{kind.__name__} to a "
                        f"minigrad.{_dtypes.FROM_NP[self._data.dtype]._legacy}")
    if (key.__class__ is builtins.int or key.__class__ is slice) and self._data.ndim == 0:
        raise _zero_dim_error(key)
    nkey = normalize_key(key)
    basic, akey = split_key(nkey, self._data.ndim)
    _check_bounds(basic, self._data.shape)
    value = _value_tensor(self, value)
    inplace.own_array(self)
    tracked = GRAD.mode > 0 and (self._requires_grad or (value._requires_grad and self._data.dtype.kind == "f"))
    if not tracked:
        if GRAD.mode > 0 and value._requires_grad and self._data.dtype.kind == "f":  # autograd's check first
            inplace.check_inplace(self, True)  # (copy_ into an integer or bool tensor records nothing: no check)
        inplace.check_inference(self)
        _write_untracked(self, basic, akey, value)
        inplace.renew_view_nodes(self)
        self._bump_version()
        return
    dst = _write_target(self, basic)
    if akey is None:
        _copy_to(dst, value)
        return
    one_mask = len(akey) == 1 and akey[0].dtype.kind == "b" and value._data.ndim == 0  # PyTorch's masked_fill_ path
    inplace.check_inplace(dst, True)  # PyTorch's order: autograd's check, the overlap, then the dtypes
    expanded = inplace.internal_overlap(dst._data)
    if expanded:  # PyTorch warns, then writes into the shared memory (masked_fill_ warns once more)
        warnings.warn(INDEX_PUT_EXPANDED, UserWarning, stacklevel=user_stacklevel())
        if one_mask:
            mask = akey[0]
            return masked_fill_(dst, make(mask.reshape(mask.shape + (1,) * (dst._data.ndim - mask.ndim))),
                                value)  # (the 0-d value tensor itself: MaskedFillBackward1, value gets a gradient)
    if not one_mask:
        inplace.check_overlap(dst._data, (value,), full_too=True)
        if _converted(akey, value._data, dst._data.dtype):
            value = value.to(_dtypes.FROM_NP[dst._data.dtype])
        if value._data.dtype != dst._data.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{inplace.kind_name(dst._data.dtype)} for the destination and "
                               f"{inplace.kind_name(value._data.dtype)} for the source.")
    stripped = _strip_leading_ones(value._data.shape)
    if stripped != value._data.shape:

        value = view(value, stripped)
    index_put_(dst, akey, value, expanded, key if isinstance(key, tuple) else (key,))


def _write_target(self: Tensor, basic: tuple) -> Tensor:
    """The view a write goes through (PyTorch's setitem: slices that keep everything are skipped, and a key
    that selects everything writes into the tensor itself)."""
    if _is_noop(basic, self._data.shape):
        return self
    if self._requires_grad:
        return _basic_chain(self, basic)
    return as_view(make(self._data[_view_key(basic)]), self, ("getitem", basic))


def _is_noop(basic: tuple, shape: tuple) -> bool:
    n_real = builtins.sum(1 for k in basic if k is not None and k is not Ellipsis)
    dim = 0
    for k in basic:
        if k is Ellipsis:
            dim += len(shape) - n_real
        elif isinstance(k, slice) and keeps_all(k, shape[dim]):
            dim += 1
        else:
            return False
    return True


def _index_error(e: IndexError) -> IndexError:
    """NumPy's out-of-bounds message in PyTorch's words (which name no index or dim when the dim is empty)."""
    text = str(e).replace("array", "tensor").replace("axis", "dimension")
    if text.endswith("with size 0"):
        text = "index is out of bounds for dimension with size 0"
    return IndexError(text)


INDEX_PUT_EXPANDED = ("Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor")


def _converted(akey: tuple, vdata: np.ndarray, dtype: np.dtype) -> bool:
    """PyTorch converts a one-element value of another dtype written through one bool mask (else it refuses)."""
    return vdata.dtype != dtype and vdata.size == 1 and len(akey) == 1 and akey[0].dtype.kind == "b"


def _write_untracked(self: Tensor, basic: tuple, akey, value: Tensor) -> None:

    vkey = _view_key(basic)
    target = self._data[vkey]
    vdata = value._data
    if akey is None:  # PyTorch's copy_to: the value itself when the shapes agree, else stripped and expanded
        if vdata.shape == target.shape:
            b = vdata
        else:
            stripped = vdata.reshape(_strip_leading_ones(vdata.shape)) if vdata.ndim else vdata
            try:
                b = xp.broadcast_view(stripped, target.shape)  # (a size-1 dim keeps its stride, as PyTorch's)
            except ValueError:
                raise _expand_error(stripped.shape, target.shape) from None
        if inplace.same_data(target, b):  # copy_ of a tensor into itself writes nothing, checks nothing
            return
        writable(self, target)
        if inplace.overlap_status(target, b) == "partial":
            raise RuntimeError(inplace.OVERLAP)
        inplace.write_into(self, vkey, b)
        return
    one_mask = len(akey) == 1 and akey[0].dtype.kind == "b" and vdata.ndim == 0  # PyTorch's masked_fill_ path
    if inplace.internal_overlap(target):  # an expanded tensor: PyTorch warns, then writes into the shared memory
        warnings.warn(INDEX_PUT_EXPANDED, UserWarning, stacklevel=user_stacklevel())
        if one_mask:  # PyTorch's index_put_ hands this case on to masked_fill_, which warns too
            warnings.warn(inplace.MASKED_FILL_EXPANDED, UserWarning, stacklevel=user_stacklevel())
    if not one_mask:
        inplace.check_overlap(target, (value,), full_too=True)
        if _converted(akey, vdata, target.dtype):
            vdata = vdata.astype(target.dtype)
        if vdata.dtype != target.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{kind_name(target.dtype)} for the destination and {kind_name(vdata.dtype)} for "
                               "the source.")
    _check_masks(akey, target.shape)
    try:
        inplace.write_into(self, vkey, vdata.reshape(_strip_leading_ones(vdata.shape)) if vdata.ndim else vdata,
                           then=akey)
    except IndexError as e:
        raise _index_error(e) from None
    except ValueError:
        raise _put_error(vdata.shape, np.shape(target[akey])) from None


def _copy_to(dst: Tensor, value: Tensor) -> None:
    """PyTorch's copy_to: same shape -> copy_; a 0-d value -> fill_; else view, expand, copy_."""

    if value._data.shape == dst._data.shape:
        copy_(dst, value)
        return
    if value._data.ndim == 0:
        fill_(dst, value)
        return
    src = view(value, _strip_leading_ones(value._data.shape))
    if src._data.shape != dst._data.shape:
        src = expand(src, dst._data.shape)
    copy_(dst, src)


def index_put_(self: Tensor, indices: tuple, values: Tensor, expanded: bool = False, sources: tuple = ()) -> Tensor:
    """`self[indices] = values` in place (IndexPutBackward0; through a view: CopySlices). `expanded`: elements of
    `self` share memory, and each shared element takes the last value written to any of its places."""
    strides = self._data.strides  # (the stand-in `compute` gets for self is a copy: its strides are its own)

    def compute(src: Tensor) -> Tensor:
        res = np.array(src._data, copy=True)
        _check_masks(indices, res.shape)
        try:
            res[indices] = values._data
        except IndexError as e:
            raise _index_error(e) from None
        except ValueError:
            raise _put_error(values._data.shape, np.shape(src._data[indices])) from None
        if expanded:
            res = _shared_writes(res, indices, strides)
        if GRAD.mode > 0 and (src._requires_grad or values._requires_grad):
            return record(IndexPutBackward0, res, (src, values), indices=SavedArg(indices, sources), accumulate=False)
        return make(res)

    return run_inplace(self, compute, (values,), overlap_ok=expanded)


def _shared_writes(res: np.ndarray, indices: tuple, strides: tuple) -> np.ndarray:
    """`res` after a write at `indices` into memory laid out by `strides` (some 0): every place of a written
    element takes the value last written to one of them (in order of the places)."""
    place = np.zeros(res.shape, np.intp)  # each element's memory offset
    for k, (n, st) in enumerate(zip(res.shape, strides)):
        place = place + (np.arange(n) * st).reshape((n,) + (1,) * (res.ndim - k - 1))
    written = np.zeros(res.shape, bool)
    written[indices] = True
    offsets, first = np.unique(place, return_inverse=True)
    last = np.zeros(offsets.size, res.dtype)
    last[first[written]] = res[written]  # repeated places: NumPy keeps the last
    hit = np.zeros(offsets.size, bool)
    hit[first[written]] = True
    return np.where(hit[first], last[first], res)


# == declarations ===============================================================================================
declare("__getitem__", getitem, namespace="Tensor",
        nodes=(SelectBackward0, SliceBackward0, IndexBackward0, AliasBackward0),
        samples=(Sample((((3, 4), "real"),), (1,)), Sample((((3, 4), "real"),), ((slice(1, None), slice(None, 2)),)),
                 Sample((((3, 4), "real"),), (([0, 2],),)), Sample((((3, 4), "real"),), ((Ellipsis, 0),))))
declare("__setitem__", setitem, namespace="Tensor", nodes=(IndexPutBackward0,))
# what formulas (xp.scatter_into) and the view machinery (inplace.py) call, found by name: they sit below this module
declare("index_backward", index_backward_op, method=False, public=False)
declare("alias", alias, method=False, public=False)
