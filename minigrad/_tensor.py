"""Tensor: a NumPy array plus the autograd facts PyTorch keeps beside it.

A tensor is one `__slots__` object: its array, the node that made it (`grad_fn`), the leaf flag
`requires_grad`, `.grad`, a version counter (shared with views and `detach()`; made on first need,
since most tensors are never modified in place), the base it is a view of, and one slot for
rarely used state (hooks, retain_grad, the leaf's AccumulateGrad). Math lives in `ops/`, which
adds the operators and methods to the class; this file holds what makes a tensor an autograd tensor.
"""

from __future__ import annotations

import builtins
import warnings
import weakref

import numpy as np

from . import _dtypes
from ._device import CPU, no_cuda
from ._device import device as _device_cls
from ._hint import hint
from ._hooks import HookDict, RemovableHandle
from ._printing import format_tensor
from ._state import DUAL, GRAD, INFERENCE_MODE_USED, SEQUENCE

_new = object.__new__

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
    "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
    "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more information."
)


class Size(tuple):
    """`minigrad.Size([2, 3])`: a tuple that prints like PyTorch's."""

    __module__ = "minigrad"

    def __repr__(self) -> str:
        return f"minigrad.Size([{', '.join(str(d) for d in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


class VersionCounter:
    """How often a tensor's storage was written in place. Shared by a tensor, its views and `detach()`,
    so a node that saved any of them sees the write (PyTorch's version counter)."""

    __slots__ = ("value", "views")

    def __init__(self, value: int = 0):
        self.value = value
        self.views = None  # the views of this storage a write may have to rebuild (ops/views.py keeps them)


class TensorExtras:
    """State few tensors need: hooks, retain_grad, the leaf's AccumulateGrad, how a view was made.

    Class-level defaults instead of an `__init__`: a tensor that needs one of these sets one or two."""

    hooks = None  # HookDict of tensor hooks on a leaf (a non-leaf's hooks live on its node)
    post_hooks = None  # HookDict of post-accumulate-grad hooks
    retains_grad = False
    accumulator = None  # weak reference to the leaf's AccumulateGrad node
    inference = False
    view_fn = None  # the recipe chain that rebuilds this view from its base (ops/views.py)
    invalid = None  # why this view may no longer be used (a view its base's in-place write invalidated): the error
    invalid_inplace = None  # ... and the error an in-place write into it gives (naming its node from before)
    invalid_had_node = False  # ... and whether it had a node then (PyTorch keeps it: not a leaf for `.grad`)
    attr_version = 0  # a view: the version its node was built at (or, one PyTorch forbids writing into, made at)
    watched = False  # a view its base's writes can reach (ops/views.py's register_view)
    stale = False  # a view whose base was written since its node was built: the node is rebuilt when next read
    own_requires_grad = False  # a view's requires_grad_(): its own flag (else a view requires grad as its base does)
    detached_at = -1  # when a non-leaf was detach_()-ed (a graph-node number): nodes that saved it before refuse it
    tangent = None  # forward AD: the tangent (a Tensor) at the level `tangent_level` (autograd/forward_ad.py)
    tangent_level = None


class _LegacyTypeMeta(type):
    """`isinstance(t, FloatTensor)` checks the dtype, as PyTorch's legacy type objects do."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._data.dtype == cls._np_dtype

    def __call__(cls, *args, **kwargs):
        return Tensor._legacy(args, cls._np_dtype)

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


class Tensor:
    __slots__ = ("_data", "_node", "_requires_grad", "_grad", "_version_counter", "_base", "_output_nr",
                 "_extras", "__weakref__")
    __array_ufunc__ = None  # NumPy hands `ndarray * tensor` to our reflected operators
    __array_priority__ = 1000
    __module__ = "minigrad"

    # -- construction -----------------------------------------------------------------------
    def __new__(cls, *args, dtype=None, device=None):
        """Legacy constructor: `Tensor(3, 4)` (uninitialised float32), `Tensor([1, 2])`."""
        t = Tensor._legacy(args, _dtypes.to_np(dtype) if dtype is not None else None)
        return make(t._data, cls=cls)

    def __init__(self, *args, **kwargs):
        pass  # everything happened in __new__ (make)

    @staticmethod
    def _legacy(args, np_dtype) -> Tensor:
        np_dtype = np_dtype if np_dtype is not None else _dtypes.default_np()
        if len(args) == 1 and not isinstance(args[0], (builtins.int, np.integer)):
            src = args[0]
            if isinstance(src, Tensor):
                return make(src._data.astype(np_dtype, copy=False))
            return make(np.array(_as_array_data(src), dtype=np_dtype))
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        shape = tuple(builtins.int(a) for a in args)
        return make(np.zeros(shape, dtype=np_dtype))

    # -- autograd attributes -------------------------------------------------------------------
    @property
    def _grad_fn(self):
        """The node that made this tensor (`_node`). A view whose memory was written since its node was built
        gets a new node first, from its base's current one (PyTorch rebuilds a view's grad_fn lazily, when read
        after its base's version changed: a write costs O(1), however many views the base has)."""
        extras = self._extras
        if extras is not None and extras.stale:
            self._rebuild_view_node()
        return self._node

    @_grad_fn.setter
    def _grad_fn(self, node) -> None:
        self._node = node

    def _rebuild_view_node(self) -> None:
        """Rebuild a stale view's node (set by ops/inplace.py, which knows how)."""

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            msg = "you can only change requires_grad flags of leaf variables."
            if not value:
                msg += (" If you want to use a computed variable in a subgraph that doesn't require "
                        "differentiation use var_no_grad = var.detach().")
            raise RuntimeError(msg)
        if value and self._data.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = builtins.bool(value)
        if self._base is not None:
            self._get_extras().own_requires_grad = self._requires_grad
        self._views_follow()

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = builtins.bool(requires_grad)
        if self._base is not None:
            self._get_extras().own_requires_grad = self._requires_grad
        self._views_follow()
        return self

    def _views_follow(self) -> None:
        """Views taken earlier follow this tensor's requires_grad (set by ops/views.py, which keeps track of them)."""

    @property
    def grad_fn(self):
        if self._grad_fn is None and self._extras is not None and self._extras.invalid:
            raise RuntimeError(self._extras.invalid)
        return self._grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        extras = self._extras
        if self._grad is None and (self._grad_fn is not None or (extras is not None and extras.invalid_had_node)) \
                and not (extras is not None and extras.retains_grad):
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError("attempting to assign a gradient with dtype "
                                   f"'{_dtypes.FROM_NP[value._data.dtype]}' to a tensor with dtype "
                                   f"'{_dtypes.FROM_NP[self._data.dtype]}'. Please ensure that the gradient "
                                   "and the tensor have the same dtype")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        # set by retain_grad() on a non-leaf; PyTorch keeps it through detach_()
        return self._extras is not None and self._extras.retains_grad

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        counter = self._version_counter
        return counter.value if counter is not None else 0

    def _bump_version(self) -> None:
        """An in-place write happened: every node that saved this storage will see it."""
        self._shared_counter().value += 1

    def _shared_counter(self) -> VersionCounter:
        """The version counter, made on first need (most tensors are never written in place). The node that
        made this tensor is told, since it may have saved the tensor as its result and must see later writes."""
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = VersionCounter()
            if self._grad_fn is not None:
                self._grad_fn._counter_made(self, counter)
        return counter

    def _get_extras(self) -> TensorExtras:
        extras = self._extras
        if extras is None:
            extras = self._extras = TensorExtras()
        return extras

    def is_inference(self) -> bool:
        return self._extras is not None and self._extras.inference

    def _is_view(self) -> bool:
        return self._base is not None

    # -- autograd API (`backward` is attached by autograd/gradients.py: the engine sits above Tensor) -----------
    def register_hook(self, hook) -> RemovableHandle:
        """`hook(grad)` runs when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn  # (a view an in-place write made unusable raises here, as in PyTorch)
        if fn is None:  # a leaf: the hooks run when its AccumulateGrad does
            extras = self._get_extras()
            if extras.hooks is None:
                extras.hooks = HookDict()
            return extras.hooks.add(hook)
        table = fn._extra("tensor_hooks", dict)
        hooks = table.get(self._output_nr)
        if hooks is None:
            hooks = table[self._output_nr] = HookDict()
        return hooks.add(hook)

    def register_post_accumulate_grad_hook(self, hook):
        """`hook(tensor)` runs after the leaf's `.grad` was updated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        extras = self._get_extras()
        if extras.post_hooks is None:
            extras.post_hooks = HookDict()
        return extras.post_hooks.add(hook)

    def retain_grad(self) -> None:
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        extras = self._extras
        if extras is not None and extras.invalid:  # a view an in-place write made unusable: PyTorch reads its
            if extras.invalid_had_node:  # grad_fn (and raises) only if it had a node, else it is a leaf to it
                raise RuntimeError(extras.invalid)
            return
        if self._grad_fn is None:
            return
        extras = self._get_extras()
        if extras.retains_grad:
            return
        extras.retains_grad = True
        self._grad_fn._extra("retain", dict)[self._output_nr] = weakref.ref(self)

    @property
    def hooks(self) -> tuple:
        """minigrad introspection: the tensor hooks registered on this tensor, in order."""
        fn = self._grad_fn
        if fn is None:
            extras = self._extras
            return tuple(extras.hooks.values()) if extras is not None and extras.hooks else ()
        hooks = fn._tensor_hooks(self._output_nr)
        return tuple(hooks.values()) if hooks else ()

    @property
    def post_accumulate_hooks(self) -> tuple:
        extras = self._extras
        return tuple(extras.post_hooks.values()) if extras is not None and extras.post_hooks else ()

    def detach(self) -> Tensor:
        """A new tensor on the same storage and version counter, outside the graph."""
        t = make(self._data)
        t._version_counter = self._shared_counter()
        return t

    def detach_(self) -> Tensor:
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._shared_counter()  # made while the node is still ours: if it saved this tensor, it sees later writes
        if self._grad_fn is not None:
            self._get_extras().detached_at = next(SEQUENCE)
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        self._views_follow()  # views without a node of their own no longer require grad
        return self

    @property
    def data(self) -> Tensor:
        """The same storage with a fresh version counter: in-place changes here escape autograd."""
        return make(self._data)

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def volatile(self) -> bool:
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value) -> None:
        warnings.warn("volatile was removed and now has no effect. Use `with minigrad.no_grad():` instead.",
                      UserWarning, stacklevel=2)

    # -- shape, dtype, device ----------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtypes.dtype:
        return _dtypes.FROM_NP[self._data.dtype]

    @property
    def device(self) -> _device_cls:
        return CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (PyTorch's Tensor.itemsize, as NumPy's)."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements the tensor shows (numel * itemsize: an expanded tensor counts each view of one)."""
        return self._data.size * self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous

    def stride(self, dim: int | None = None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def storage_offset(self) -> int:
        """Where this tensor's first element sits in its base's memory, in elements (0 for a tensor that is not
        a view)."""
        base = self._base
        return 0 if base is None else (self.data_ptr() - base.data_ptr()) // self._data.itemsize

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # -- conversion ----------------------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self._requires_grad and not force and GRAD.mode > 0:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._data if dtype is None else self._data.astype(dtype)

    def _scalar(self, kind):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return kind(self._data.reshape(()).item())

    def __float__(self) -> float:
        if self._requires_grad:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                          "behavior.\nConsider using tensor.detach() first.", UserWarning, stacklevel=2)
        return self._scalar(builtins.float)

    def __int__(self) -> int:
        return self._scalar(builtins.int)

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self._data.reshape(()).item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self._data.reshape(()).item())

    def __complex__(self):
        return complex(self._scalar(builtins.float))

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    # By identity, as PyTorch's (the `__eq__` that ops/ sets is elementwise, which would unset it).
    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                               "be because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        t = make(self._data.copy(), None, self._requires_grad, cls=type(self))
        if self._grad is not None:
            t._grad = make(self._grad._data.copy())
        memo[id(self)] = t
        return t

    def type(self, dtype=None):
        if dtype is None:
            return f"minigrad.{_dtypes.FROM_NP[self._data.dtype]._legacy}"
        if isinstance(dtype, _LegacyTypeMeta):
            dtype = dtype._np_dtype
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            for d in _dtypes.ALL:
                if d._legacy == name:
                    dtype = d
                    break
            else:
                raise ValueError(f"invalid type: '{dtype}'")
        return self.to(dtype)

    # -- devices ---------------------------------------------------------------------------------------
    def cpu(self) -> Tensor:
        return self

    def eig(self, eigenvectors: bool = False):
        """Removed from PyTorch in 1.9 (old lectures still call it): PyTorch's error."""
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` "
                           "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking "
                           "complex tensors.\n" + hint("minigrad has no complex tensors and no torch.linalg.eig."))

    def lstsq(self, A):
        """Removed from PyTorch in 1.9: PyTorch's error."""
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is "
                           "deprecated in favor of `torch.linalg.lstsq`.\n" + hint(
                               "minigrad has no torch.linalg.lstsq; solve the normal equations with matmul and a "
                               "closed form, or fit by gradient descent."))

    def cuda(self, *args, **kwargs):
        raise no_cuda()  # a CPU-only PyTorch's error

    # -- printing ----------------------------------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None) -> str:
        tail = []
        fn = self._grad_fn
        if self._extras is not None and self._extras.invalid:
            tail.append("grad_fn=<Invalid>")
        elif fn is not None:
            tail.append(f"grad_fn=<{fn.name() if fn.name().isidentifier() else type(fn).__name__}>")
        elif self._requires_grad:
            tail.append("requires_grad=True")
        if DUAL[0] is not None and self._extras is not None and self._extras.tangent_level is DUAL[0]:
            tail.append(f"tangent={self._extras.tangent}")  # PyTorch's f-string: a 0-d tangent shows as a number
        return format_tensor(self._data, default_float=_dtypes.default_np(), tail=tail)

    __str__ = __repr__

    # No `__getattr__` (it would slow every attribute read): PyTorch names minigrad lacks are stubs that
    # say so (_missing.install_tensor_stubs), hidden from dir().
    _STUBS: frozenset = frozenset()

    def __dir__(self):
        return sorted(set(object.__dir__(self)) - Tensor._STUBS)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)


def ones_like_array(d: np.ndarray) -> np.ndarray:
    """The seed gradient of a one-element output."""
    seed = np.empty(d.shape, d.dtype)
    seed.fill(1)
    return seed


def make(data: np.ndarray, grad_fn=None, requires_grad: bool = False, cls: type = Tensor) -> Tensor:
    """A Tensor around `data`: every tensor is made here (no argument checking), the one place that sets
    a tensor's slots.

    NumPy returns scalars, not arrays, from some operations on 0-d arrays; a tensor always holds an
    ndarray (so `.numpy()` is one, and in-place writes work)."""
    t = _new(cls)
    t._data = data if data.__class__ is np.ndarray else np.asarray(data)
    t._node = grad_fn
    t._requires_grad = requires_grad
    t._grad = None
    t._version_counter = None
    t._base = None
    t._output_nr = 0
    t._extras = None
    if INFERENCE_MODE_USED[0] and GRAD.mode < 0:  # made under inference_mode: an inference tensor
        t._extras = TensorExtras()
        t._extras.inference = True
    return t


def _rebuild(data, requires_grad):
    return make(data, None, requires_grad)


def _as_array_data(obj):
    """Turn nested lists/tuples that may contain 0-d or 1-element tensors into plain Python data."""
    if isinstance(obj, Tensor):
        return obj._data
    if isinstance(obj, (list, tuple)):
        return [_as_array_data(o) for o in obj]
    return obj


def _wrap_dim(dim: int, ndim: int) -> int:
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n if ndim > 0 else 0


def legacy_type(name: str, np_dtype: str):
    return _LegacyTypeMeta(name, (), {"_np_dtype": np.dtype(np_dtype)})


FloatTensor = legacy_type("FloatTensor", "float32")
DoubleTensor = legacy_type("DoubleTensor", "float64")
LongTensor = legacy_type("LongTensor", "int64")
IntTensor = legacy_type("IntTensor", "int32")
BoolTensor = legacy_type("BoolTensor", "bool")
ByteTensor = legacy_type("ByteTensor", "uint8")
HalfTensor = legacy_type("HalfTensor", "float16")
