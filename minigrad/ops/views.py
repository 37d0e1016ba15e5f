"""Shape ops and views. A view shares its base's array and version counter, so an in-place
change through either is seen by both (and by autograd's version checks)."""

from __future__ import annotations

import builtins
import math
import weakref

import numpy as np

from .. import _dtypes
from .._device import device as device_cls
from .._layout import torch_layout
from .._stacklevel import warn_once
from .._state import GRAD
from .._tensor import Tensor, _wrap_dim, make
from ..autograd.graph import forward_op_name
from . import xp
from .dual import forward_aware
from .recording import record, record_multi, rule
from .registry import Sample, declare
from .xp import broadcast_view

# == derivative rows, and the helpers their formulas use ======================================================
# -- shape and views ----------------------------------------------------------------------------------
ViewBackward0 = rule("ViewBackward0", "self", saves="self_sym_sizes", text="grad_self = grad.reshape(self's shape)",
                     forward="linear",
                     self=lambda grad, self_sym_sizes: xp.reshape(grad, self_sym_sizes))
ReshapeAliasBackward0 = rule("ReshapeAliasBackward0", "self", saves="self_sym_sizes",
                             forward="linear", text="grad_self = grad.reshape(self's shape)",
                             self=lambda grad, self_sym_sizes: xp.reshape(grad, self_sym_sizes))
UnsafeViewBackward0 = rule("UnsafeViewBackward0", "self", saves="self_sym_sizes",
                           forward="linear", text="grad_self = grad.reshape(self's shape)",
                           self=lambda grad, self_sym_sizes: xp.reshape(grad, self_sym_sizes))
TBackward0 = rule("TBackward0", "self", forward="linear", text="grad_self = gradᵀ", self=lambda grad: xp.t(grad))
TransposeBackward0 = rule("TransposeBackward0", "self", saves="dim0 dim1",
                          forward="linear", text="grad_self = grad.transpose(dim0, dim1)",
                          self=lambda grad, dim0, dim1: xp.transpose(grad, dim0, dim1))
PermuteBackward0 = rule("PermuteBackward0", "self", saves="dims", text="grad_self = grad.permute(inverse of dims)",
                        forward="linear",
                        self=lambda grad, dims: xp.permute(grad, _inverse_perm(dims)))
ExpandBackward0 = rule("ExpandBackward0", "self", saves="self_sym_sizes",
                       forward="linear", text="grad_self = grad summed over the expanded dims",
                       self=lambda grad, self_sym_sizes: xp.sum_to(grad, self_sym_sizes))
UnsqueezeBackward0 = rule("UnsqueezeBackward0", "self", saves="dim", text="grad_self = grad.squeeze(dim)",
                          forward="linear",
                          self=lambda grad, dim: xp.squeeze_dims(grad, (dim,)))
SqueezeBackward0 = rule("SqueezeBackward0", "self", saves="self_sym_sizes",
                        forward="linear", text="grad_self = grad.unsqueeze(d) for each size-1 dim d of self",
                        self=lambda grad, self_sym_sizes: xp.unsqueeze_to(grad, self_sym_sizes))
SqueezeBackward1 = rule("SqueezeBackward1", "self", saves="dim self_sym_sizes", text="grad_self = grad.unsqueeze(dim)",
                        forward="linear",
                        self=lambda grad, dim, self_sym_sizes: xp.unsqueeze_to(grad, self_sym_sizes, (dim,)))
SqueezeBackward2 = rule("SqueezeBackward2", "self", saves="dim self_sym_sizes", text="grad_self = grad.unsqueeze(dims)",
                        forward="linear",
                        self=lambda grad, dim, self_sym_sizes: xp.unsqueeze_to(grad, self_sym_sizes, dim))
UnbindBackward0 = rule("UnbindBackward0", "self", saves="dim",
                       forward="linear", text="grad_self = stack(grads, dim)  (missing pieces count as 0)", multi=True,
                       self=lambda grads, dim: xp.stack(grads, dim))
CloneBackward0 = rule("CloneBackward0", "self", forward="linear", text="grad_self = grad", self=lambda grad: grad)
AliasBackward0 = rule("AliasBackward0", "self", forward="linear", text="grad_self = grad", self=lambda grad: grad)
ToCopyBackward0 = rule("ToCopyBackward0", "self", saves="self_dtype", text="grad_self = grad cast back to self's dtype",
                       forward="linear",
                       self=lambda grad, self_dtype: _cast(grad, self_dtype))


def _inverse_perm(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)



def _cast(g, np_dtype):
    return g.to(np_dtype) if xp.is_t(g) else g.astype(np_dtype)


class ViewChain:
    """The recipes from a root base to a view, as a linked list: a view of a view points to its base's chain
    instead of copying it, so a chain of n views costs O(n), not O(n²) (`y = y.view(1)[0]` in a loop).
    `meta` is the latest creation meta along the chain ("no_grad" / "multi", or None)."""

    __slots__ = ("prev", "recipe", "meta", "_recipes", "index", "plan")

    def __init__(self, prev: ViewChain | None, recipe, meta=None):
        self.prev, self.recipe = prev, recipe
        self.meta = meta if meta is not None else (prev.meta if prev is not None else None)
        self._recipes = None
        self.index = None  # (root shape, flat positions in the root, repeats?): inplace.view_index_map
        self.plan = None  # (root layout, the nodes' classes, arguments, metadata): inplace.rebuild_view_node

    def recipes(self) -> tuple:
        """The recipes, root first (walked once, then kept)."""
        if self._recipes is None:
            out, node = [], self
            while node is not None and node._recipes is None:
                if node.recipe is not None:
                    out.append(node.recipe)
                node = node.prev
            self._recipes = (node._recipes if node is not None else ()) + tuple(reversed(out))
        return self._recipes


def as_view(t: Tensor, base: Tensor, recipe, multi: bool = False) -> Tensor:
    """Mark `t` as a view of `base`: same version counter; `recipe` rebuilds it from the base.

    The recipes from the root base to the view are kept in `view_fn` (a ViewChain), with the creation meta
    for views PyTorch will not let you write into with autograd on (PyTorch's CreationMeta): views made
    in no_grad mode, and the outputs of ops returning several views (split, chunk, unbind).
    Views that require grad are remembered (weakly) so an in-place write into their base marks them stale.
    """
    if REGENERATING[0]:  # a step of rebuilding a view's node (inplace.rebuild_view_node): only its node is kept
        t._base = base._base if base._base is not None else base
        return t
    root = base._base
    if root is None:
        root = base
        prev = None
        if base._data.__class__ is not np.ndarray:  # a NumPy scalar (a 0-d result): views must share a real array
            base._data = np.array(base._data)
            t._data = apply_recipe(base._data, recipe)
    else:
        extras = base._extras
        prev = extras.view_fn if extras is not None else None
    t._base = root
    t._version_counter = base._shared_counter()
    mode = GRAD.mode
    extras = t._get_extras()
    extras.attr_version = t._version_counter.value  # a write after this changes its node (or, with meta, forbids it)
    meta = None
    if mode == 0 or multi:
        meta = "no_grad" if mode == 0 else "multi"
        if mode == 0 and base._requires_grad:  # PyTorch: a view made in no_grad mode still requires grad (a leaf)
            t._requires_grad = True
    extras.view_fn = ViewChain(prev, recipe, meta)
    if ((mode > 0 and t._requires_grad) or (mode == 0 and root._requires_grad)
            or (not root._requires_grad and root._data.dtype.kind == "f")):
        register_view(root, t)  # (a view of a float leaf follows it if it comes to require grad: views_follow)
    return t


REGENERATING = [False]  # set while in-place ops rebuild view nodes (those temporaries are not remembered)


class ViewRefs:
    """The views of one storage, held weakly by its version counter: every tensor that shares the counter (the
    root, its views, what `detach()` made of any of them) reaches them, as PyTorch's shared counter does."""

    __slots__ = ("refs", "prune_at")

    def __init__(self):
        self.refs: list = []
        self.prune_at = 16  # drop dead references when the list grows this long

    def add(self, view: Tensor) -> None:
        self.refs.append(weakref.ref(view))
        if len(self.refs) >= self.prune_at:
            self.refs[:] = [r for r in self.refs if r() is not None]
            self.prune_at = builtins.max(16, 2 * len(self.refs))

    def alive(self) -> list:
        """The live views (the references to dead ones are dropped)."""
        out = [v for v in (r() for r in self.refs) if v is not None]
        if len(out) != len(self.refs):
            self.refs[:] = [weakref.ref(v) for v in out]
        return out


def register_view(root: Tensor, view: Tensor) -> None:
    view._extras.watched = True
    counter = root._shared_counter()
    if counter.views is None:
        counter.views = ViewRefs()
    counter.views.add(view)


def live_views(root: Tensor) -> list:
    """The live views of `root` (the views whose base is `root`)."""
    counter = root._version_counter
    if counter is None or counter.views is None:
        return []
    return [v for v in counter.views.alive() if v._base is root]


def views_of_other_roots(t: Tensor) -> list:
    """The live views of tensors that share `t`'s memory and version counter but are not `t`'s root (`t` came
    from `detach()` of one of them, or they from `t`'s), as (root, its views) pairs."""
    counter = t._version_counter
    if counter is None or counter.views is None:
        return []
    root = t._base if t._base is not None else t
    out: dict = {}
    for v in counter.views.alive():
        if v._base is not root:
            out.setdefault(id(v._base), (v._base, []))[1].append(v)
    return list(out.values())


def view_recipes(t: Tensor) -> tuple:
    """The recipes that rebuild view `t` from its root base."""
    chain = t._extras.view_fn if t._extras is not None else None
    return chain.recipes() if chain is not None else ()


def creation_meta(t: Tensor):
    """"no_grad" / "multi" when PyTorch forbids in-place writes into this view with autograd on, else None."""
    chain = t._extras.view_fn if t._extras is not None else None
    return chain.meta if chain is not None else None


def view_rebase_message(t: Tensor, meta: str, indirect: bool) -> str:
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = t._grad_fn
    if meta == "no_grad" or fn is None:
        prefix = (f"Output {t._output_nr} of {forward_op_name(fn)} is a view of a view which was created in" if fn
                  else "A view was created in")
        msg = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        msg = f"Output {t._output_nr} of {forward_op_name(fn)} is a view and {modified} modified inplace."
    if meta == "multi":
        return msg + (" This view is the output of a function that returns multiple views. Such functions do not "
                      "allow the output views to be modified inplace. You should replace the inplace operation by "
                      "an out-of-place one.")
    return msg + (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                  "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
                  "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def invalidate(v: Tensor, meta: str) -> None:
    """A view PyTorch refuses to use once its memory was written (made in no_grad mode or by a multi-output op):
    reading its grad_fn (any op recording a node does) raises; an in-place write into it names its old node."""
    extras = v._get_extras()
    if extras.invalid:  # already: its messages keep naming the node it had then
        return
    extras.invalid = view_rebase_message(v, meta, indirect=True)
    extras.invalid_inplace = view_rebase_message(v, meta, indirect=False)
    extras.invalid_had_node = v._grad_fn is not None
    v._grad_fn = None


def named_varargs(values: tuple, named: dict, name: str, op: str) -> tuple:
    """An op's sizes or dims as given: `x.view(2, 3)`, `x.view((2, 3))` or, as PyTorch's parser also accepts,
    by keyword under PyTorch's name (`x.view(size=(2, 3))`, `x.permute(dims=(1, 0))`)."""
    if not named:
        return values
    if values or set(named) != {name}:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(set(named) - {name}), name)}'")
    return (named[name],)


def _shape_arg(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if s.__class__ is not builtins.int:
            return tuple(builtins.int(s) for s in size)  # Size, NumPy or tensor integers
    return size  # a tuple of plain ints already (the common case)


def infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one -1 in `shape`, with PyTorch's error when the sizes cannot work."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _record_view(cls, self: Tensor, res: np.ndarray, args: dict, recipe) -> Tensor:
    if self._requires_grad and GRAD.mode > 0:
        out = record(cls, res, (self,), **args)
    else:
        out = make(res)
    return as_view(out, self, recipe)


def view(self, *size, **named):
    size = named_varargs(size, named, "size", "view")
    if len(size) == 1 and isinstance(size[0], _dtypes.dtype):
        raise RuntimeError("minigrad does not support view(dtype); use .to(dtype) instead")
    shape = infer_shape(_shape_arg(size), self._data.size)
    try:
        res = np.reshape(self._data, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return _record_view(ViewBackward0, self, res, {"self_sym_sizes": self._data.shape}, ("reshape", shape))


def reshape(self, *shape, **named):
    shape = named_varargs(shape, named, "shape", "reshape")
    shape = infer_shape(_shape_arg(shape), self._data.size)
    try:
        res = np.reshape(self._data, shape, copy=False)
    except ValueError:
        # not expressible as a view: PyTorch copies (clone) and then views the copy
        return _unsafe_view(clone(self), shape)
    # PyTorch: a contiguous input is view()ed; a strided one that can still be viewed goes through _reshape_alias
    node = ViewBackward0 if self._data.flags.c_contiguous else ReshapeAliasBackward0
    return _record_view(node, self, res, {"self_sym_sizes": self._data.shape}, ("reshape", shape))


def _unsafe_view(self, shape):
    shape = infer_shape(tuple(shape), self._data.size)
    res = self._data.reshape(shape)
    if self._requires_grad and GRAD.mode > 0:
        return record(UnsafeViewBackward0, res, (self,), self_sym_sizes=self._data.shape)
    return make(res)


_unsafe_view = forward_aware(_unsafe_view, (UnsafeViewBackward0,), "_unsafe_view")  # (matmul's last step)


def flatten(self, start_dim: int = 0, end_dim: int = -1):
    nd = self._data.ndim
    if nd == 0:
        return reshape(self, (1,))
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    shape = self._data.shape
    return reshape(self, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])  # (not -1: an empty tensor)


def view_as(self, other):
    return view(self, other._data.shape)


def reshape_as(self, other):
    return reshape(self, other._data.shape)


def t(self):
    if self._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return _record_view(TBackward0, self, self._data.T, {}, ("T",))


def transpose(self, dim0: int, dim1: int):
    nd = self._data.ndim
    d0, d1 = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    res = np.swapaxes(self._data, d0, d1) if nd else self._data
    return _record_view(TransposeBackward0, self, res, {"dim0": dim0, "dim1": dim1}, ("swapaxes", d0, d1))


def permute(self, *dims, **named):
    dims = named_varargs(dims, named, "dims", "permute")
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    dims = _shape_arg(dims)
    nd = self._data.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal to "
                           f"len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, nd) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    res = np.transpose(self._data, wrapped)
    return _record_view(PermuteBackward0, self, res, {"dims": wrapped}, ("transpose", wrapped))


def movedim(self, source, destination):
    """The dims `source` moved to the places `destination` (the rest keep their order): a permute, recorded as
    PyTorch records it (PermuteBackward0), so its gradient is the inverse permutation."""
    nd = self._data.ndim
    src = tuple(source) if isinstance(source, (list, tuple)) else (source,)
    dst = tuple(destination) if isinstance(destination, (list, tuple)) else (destination,)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src = tuple(_wrap_dim(d, nd) for d in src)
    dst = tuple(_wrap_dim(d, nd) for d in dst)
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if nd == 0:  # PyTorch's movedim returns an alias of a 0-d tensor
        return _record_view(AliasBackward0, self, self._data[...], {}, ("getitem", (Ellipsis,)))
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = tuple(next(rest) if o is None else o for o in order)
    return permute(self, order)


def T(self):
    """`.T`: all dims reversed (PermuteBackward0, as PyTorch), with PyTorch's warnings (each once per process)
    when the tensor is not a matrix."""
    nd = self._data.ndim
    if nd == 0:
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    elif nd != 2:
        warn_once("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                   "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                   "matrices or `x.permute(*minigrad.arange(x.ndim - 1, -1, -1))` to reverse the dimensions "
                   "of a tensor.")
    return permute(self, tuple(range(nd - 1, -1, -1)))


def mT(self):
    """The last two dims swapped; a 0-d tensor is returned as it is, with PyTorch's deprecation warning."""
    if self._data.ndim == 0:
        warn_once("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.")
        return self
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self._data.ndim}-D "
                           "tensor.")
    return transpose(self, -2, -1)


def unsqueeze(self, dim: int):
    d = _wrap_dim(dim, self._data.ndim + 1)
    res = np.expand_dims(self._data, d)
    return _record_view(UnsqueezeBackward0, self, res, {"dim": d}, ("expand_dims", d))


def squeeze(self, dim=None):
    shape = self._data.shape
    if dim is None:
        res = self._data.reshape(tuple(s for s in shape if s != 1))
        return _record_view(SqueezeBackward0, self, res, {"self_sym_sizes": shape}, ("reshape", res.shape))
    if isinstance(dim, (tuple, list)):
        dims = tuple(_wrap_dim(d, len(shape)) for d in dim)
        keep = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
        res = self._data.reshape(keep)
        return _record_view(SqueezeBackward2, self, res, {"dim": tuple(dim), "self_sym_sizes": shape},
                            ("reshape", keep))
    d = _wrap_dim(dim, len(shape))
    keep = tuple(s for i, s in enumerate(shape) if not (i == d and s == 1))
    res = self._data.reshape(keep)
    return _record_view(SqueezeBackward1, self, res, {"dim": dim, "self_sym_sizes": shape}, ("reshape", keep))


def expand(self, *sizes, **named):
    sizes = named_varargs(sizes, named, "size", "expand")
    sizes = _shape_arg(sizes)
    shape = self._data.shape
    if len(sizes) < len(shape):
        kind = _dtypes.FROM_NP[self._data.dtype]._legacy
        raise RuntimeError(f"expand(minigrad.{kind}{{[{', '.join(map(str, shape))}]}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided ({len(sizes)}) must "
                           f"be greater or equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = sizes if sizes[lead:] == shape and (not sizes or builtins.min(sizes) >= 0) else _expand_target(
        sizes, shape, lead)  # new leading dims only (the common case): nothing to check
    if builtins.all(n == 1 for n in target[:lead]) and target[lead:] == shape:
        res = self._data.reshape(target)  # only size-1 dims added: a plain view, which can be written to
    else:
        res = broadcast_view(self._data, target)  # read-only: several elements share one memory location
    return _record_view(ExpandBackward0, self, res, {"self_sym_sizes": shape}, ("broadcast_to", target))


def _expand_target(sizes: tuple, shape: tuple, lead: int) -> tuple:
    """The shape `expand(*sizes)` gives (-1 keeps a size), with PyTorch's errors."""
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            target.append(s)
        else:
            cur = shape[i - lead]
            if s == -1:
                target.append(cur)
            elif cur != s and cur != 1:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                                   f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                                   f"Tensor sizes: [{', '.join(map(str, shape))}]")
            else:
                target.append(s)
    return tuple(target)


def expand_as(self, other):
    return expand(self, other._data.shape)


def clone(self, *, memory_format=None):
    """A copy laid out as the original is (PyTorch's default, preserve_format: its dims in the same order), or
    row-major with `memory_format=contiguous_format`."""
    return _copy(self, "C" if str(memory_format) == "torch.contiguous_format" else "K")


def contiguous(self, memory_format=None):
    if self._data.flags.c_contiguous:
        return self
    return _copy(self, "C")  # (PyTorch: clone(memory_format=torch.contiguous_format))


def _copy(self, order: str) -> Tensor:
    res = self._data.copy(order=order)
    if order == "K" and not res.flags.c_contiguous:  # an expanded tensor's copy: its dims in PyTorch's order
        res = torch_layout(res, self._data)
    if self._requires_grad and GRAD.mode > 0:
        return record(CloneBackward0, res, (self,))
    return make(res)


def parse_to(args: tuple, kwargs: dict) -> tuple:
    """The (dtype, copy) a `.to(...)` call asks for (Tensor.to and Module.to read it the same way);
    a device other than the CPU is a clear error here."""

    dtype = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (_dtypes.dtype, np.dtype, type)):
            dtype = a
        elif isinstance(a, (str, device_cls)):
            dev = a
        elif not isinstance(a, builtins.bool):
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__})")
    if dev is not None:
        device_cls(dev)  # only the CPU exists: anything else is a clear error
    return dtype, copy


def to(self, *args, **kwargs):
    """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(other)`; no node when nothing changes."""
    dtype, copy = parse_to(args, kwargs)
    if dtype is None:
        return clone(self) if copy else self
    target = _dtypes.to_np(dtype)
    if target == self._data.dtype and not copy:
        return self
    res = GRAD.quiet.run(self._data.astype, target)  # nan and inf cast to integers silently, as in PyTorch
    if self._requires_grad and GRAD.mode > 0:
        if target.kind != "f":
            return make(res)
        return record(ToCopyBackward0, res, (self,), self_dtype=self._data.dtype)
    return make(res)


def _caster(np_name: str):
    def cast(self, memory_format=None):
        return to(self, np.dtype(np_name))
    cast.__name__ = np_name
    return cast


float = _caster("float32")
double = _caster("float64")
half = _caster("float16")
long = _caster("int64")
int = _caster("int32")
bool = _caster("bool")
byte = _caster("uint8")
short = _caster("int16")


def type_as(self, other):
    return to(self, other._data.dtype)


def unbind(self, dim: int = 0):
    """Split along `dim` into a tuple of views (one UnbindBackward0 node with several outputs)."""
    nd = self._data.ndim
    if nd == 0:
        _wrap_dim(dim, 0)  # PyTorch's "Dimension out of range" for a dim other than 0 or -1
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, nd)
    parts = [self._data[(slice(None),) * d + (i, Ellipsis)] for i in range(self._data.shape[d])]
    if self._requires_grad and GRAD.mode > 0 and parts:
        outs = record_multi(UnbindBackward0, parts, (self,), dim=d)
    else:
        outs = [make(p) for p in parts]
    return tuple(as_view(o, self, ("getitem", (slice(None),) * d + (i,)), multi=True) for i, o in enumerate(outs))


# == declarations ===============================================================================================
def _on(shape: tuple, *calls, domain: str = "real") -> tuple:
    """Samples of a shape op on a tensor of `shape`: each call is (args, kwargs)."""
    return tuple(Sample(((shape, domain),), args, kwargs) for args, kwargs in calls)


declare("view", view, namespace="Tensor", nodes=(ViewBackward0,), samples=_on((3, 4), ((12,), {}), ((2, -1), {})))
declare("reshape", reshape, nodes=(ViewBackward0, ReshapeAliasBackward0, UnsafeViewBackward0),
        samples=_on((3, 4), (((12,),), {}), (((4, 3),), {})))
declare("flatten", flatten, nodes=(ViewBackward0,), samples=_on((2, 3, 2), ((), {}), ((1,), {})))
declare("view_as", view_as, namespace="Tensor", shape_only="other")
declare("reshape_as", reshape_as, namespace="Tensor", shape_only="other")
declare("t", t, nodes=(TBackward0,), samples=_on((3, 4), ((), {})))
declare("transpose", transpose, aliases=("swapaxes",), nodes=(TransposeBackward0,),
        samples=_on((2, 3, 4), ((0, 2), {}), ((-1, 1), {})))
declare("permute", permute, nodes=(PermuteBackward0,), samples=_on((2, 3, 4), (((2, 0, 1),), {})))
declare("movedim", movedim, aliases=("moveaxis",), nodes=(PermuteBackward0,),
        samples=_on((2, 3, 4), ((0, 2), {}), (((0, 1), (2, 0)), {}), ((-1, 0), {})))
declare("unsqueeze", unsqueeze, nodes=(UnsqueezeBackward0,), samples=_on((3, 4), ((1,), {}), ((-1,), {})))
declare("squeeze", squeeze, nodes=(SqueezeBackward0, SqueezeBackward1, SqueezeBackward2),
        samples=_on((3, 1, 4, 1), ((), {}), ((1,), {}), (((1, 3),), {})))
declare("expand", expand, namespace="Tensor", nodes=(ExpandBackward0,), samples=_on((3, 1), ((3, 4), {}),
                                                                                     ((2, 3, 4), {})))
declare("expand_as", expand_as, namespace="Tensor", shape_only="other")
declare("clone", clone, nodes=(CloneBackward0,), samples=_on((3, 4), ((), {})))
declare("contiguous", contiguous, namespace="Tensor", samples=_on((3, 4), ((), {})))
declare("to", to, namespace="Tensor", nodes=(ToCopyBackward0,))
declare("type_as", type_as, namespace="Tensor", shape_only="other")
declare("unbind", unbind, nodes=(UnbindBackward0,), samples=_on((3, 4), ((), {}), ((1,), {})))
for _name, _cast_fn in (("float", float), ("double", double), ("half", half), ("long", long), ("int", int),
                        ("bool", bool), ("byte", byte), ("short", short)):
    declare(_name, _cast_fn, namespace="Tensor", nodes=(ToCopyBackward0,))


def apply_recipe(a: np.ndarray, r: tuple):
    """One step of a view's recipe (how it was made from its base) applied to an array."""
    kind = r[0]
    if kind == "getitem":
        return a[r[1]]
    if kind == "reshape":
        return a.reshape(r[1])
    if kind == "T":
        return a.T
    if kind == "swapaxes":
        return np.swapaxes(a, r[1], r[2]) if a.ndim else a  # a 0-d tensor's transpose(0, -1) keeps it as it is
    if kind == "transpose":
        return np.transpose(a, r[1])
    if kind == "expand_dims":
        return np.expand_dims(a, r[1])
    if kind == "broadcast_to":
        return np.broadcast_to(a, r[1])
    raise ValueError(f"unknown view recipe {r!r}")


def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Give this tensor a new shape in place, keeping its first elements (new ones are zeros here; PyTorch leaves
    them uninitialised). A tensor that requires grad refuses, as PyTorch's."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _shape_arg(sizes)
    flat = self._data.reshape(-1)
    n = builtins.int(np.prod(shape, dtype=np.int64))
    kept = flat[:n] if n <= flat.size else np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])
    self._data = np.ascontiguousarray(kept).reshape(shape)
    self._bump_version()
    return self


def ravel(self: Tensor) -> Tensor:
    """The elements as one dim, in order: a view when the tensor is contiguous, else a contiguous copy's view
    (PyTorch's contiguous().view(-1))."""
    return self.contiguous().view(-1)


declare("ravel", ravel, samples=_on((3, 4), ((), {})))
Tensor.resize_ = resize_  # (not an op: no node, no derivative; it refuses a tensor that requires grad)
