"""vmap's batched tensors: one sample's view of a tensor that holds the whole batch.

A `BatchedTensor` wraps an ordinary minigrad Tensor, `_value`, whose leading dims are the batch dims of the vmap
levels it is batched at (`_levels`, outermost first); the dims after them are what the function sees (the
"logical" tensor). Every op the function calls on it reaches `dispatch` through PyTorch's override protocol
(`__torch_function__`, and the Tensor methods and operators _rules.py gives the class). `dispatch` runs the
op ONCE on the whole batch through the op's batching rule (`_rules.py`), and the result is batched again. Since
`_value` is an ordinary tensor, autograd records the batched computation as usual: `grad` inside `vmap`
differentiates every sample at once. An op with no rule runs once per sample, with PyTorch's performance warning.
"""

from __future__ import annotations

import inspect
import itertools
import warnings

from .._state import DUAL, FUNC_LEVELS
from .._tensor import Size, Tensor
from ..ops import dual
from ..ops.registry import REGISTRY

# The running vmap levels, outermost first: [level id, batch size, randomness]
LEVELS: list = FUNC_LEVELS  # (one list: ops read it from _state)
VMAP_LEVELS: set = set()  # the ids of the user's vmap levels (not jacrev's / jacfwd's private ones)
TANGENT_LEVELS: set = set()  # jacfwd's levels, which batch only its tangents (PyTorch's primals are not batched)
REVERSE_COPIES: set = set()  # jacrev's private levels: PyTorch runs that forward once, unbatched (no loop warnings)
_ids = itertools.count(1)

ITEM_ERROR = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
              "a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
              "somewhere inside PyTorch internals, please file a bug report.")
CONTROL_FLOW_ERROR = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't support "
    "that yet, please shout over at https://github.com/pytorch/functorch/issues/257 .")


class BatchedTensor:
    """One sample's view (what the vmapped function sees) of `_value`, a tensor holding the batch in its leading
    dims, one per level of `_levels`."""

    __slots__ = ("_value", "_levels")
    __array_ufunc__ = None  # NumPy hands `np.int64(2) / batched` to the reflected operators, as for a Tensor
    __array_priority__ = 1000

    def __init__(self, value: Tensor, levels: tuple):
        self._value = value
        self._levels = levels

    # -- what the function sees: the logical tensor -----------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._value.shape[len(self._levels):])

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[_wrap(dim, self.dim())]

    def dim(self) -> int:
        return self._value.dim() - len(self._levels)

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    dtype = property(lambda self: self._value.dtype)
    device = property(lambda self: self._value.device)
    requires_grad = property(lambda self: self._value.requires_grad)
    is_leaf = property(lambda self: self._value.is_leaf)
    grad_fn = property(lambda self: self._value.grad_fn)

    def is_floating_point(self) -> bool:
        return self._value.is_floating_point()

    def item(self):
        raise RuntimeError(ITEM_ERROR)

    tolist = numpy = item

    def __bool__(self):
        raise RuntimeError(CONTROL_FLOW_ERROR)

    __float__ = __int__ = __index__ = __bool__

    def detach(self) -> BatchedTensor:
        return BatchedTensor(self._value.detach(), self._levels)

    def requires_grad_(self, requires_grad: bool = True) -> BatchedTensor:
        self._value.requires_grad_(requires_grad)
        return self

    def __iter__(self):
        return iter(self.unbind(0))

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._levels[-1]}, bdim=0, value=\n    {self._value!r})"



def push_level(entry: list, user: bool = True, hand_over: bool = True) -> None:
    """Start a vmap level (`[id, batch size, randomness]`; `user`: the user's vmap, not jacrev's private copies).
    With `hand_over`, Tensor's methods give way to a batched argument from now on (`_give_way`), unless they do
    already; jacrev's level asks for it only when its function needs it (`hand_over()`)."""
    LEVELS.append(entry)
    if user:
        VMAP_LEVELS.add(entry[0])
    if hand_over and not HANDED_OVER[0]:
        _give_way(DUAL[0] is not None)


def hand_over() -> None:
    """Make Tensor's methods give way to a batched argument, if a level runs and they do not yet."""
    if not HANDED_OVER[0]:
        _give_way(DUAL[0] is not None)


def pop_level() -> None:
    VMAP_LEVELS.discard(LEVELS.pop()[0])
    if not LEVELS and HANDED_OVER[0]:  # the methods without the check again
        k = 1 if DUAL[0] is not None else 0
        for name in _GIVING_WAY.get(k == 1, ()):
            setattr(Tensor, name, dual.TENSOR_METHODS[name][k])
        HANDED_OVER[0] = False


HANDED_OVER = [False]  # are Tensor's methods the giving-way ones now?


def _give_way(active: bool) -> None:
    """While a vmap level runs (vmap's, jacfwd's, or jacrev's when its function needs it), a plain tensor's method
    called with a BatchedTensor argument (`w.mv(batched)`) dispatches to the batching rules, as PyTorch's methods
    check every argument for `__torch_function__`; outside the levels they skip the check, so they cost nothing
    more. Only the methods that can take a tensor argument are swapped (`_takes_tensors`): each swap costs a setattr
    on Tensor. (Also after a dual level's install, which replaces them.)"""
    HANDED_OVER[0] = bool(LEVELS)
    if not LEVELS:
        return
    methods = _GIVING_WAY.get(active)
    if methods is None:  # made once (the binary operators give way already)
        methods = _GIVING_WAY[active] = {name: _giving_way(pair[1] if active else pair[0])
                                         for name, pair in dual.TENSOR_METHODS.items() if _takes_tensors(name)}
    for name, method in methods.items():
        setattr(Tensor, name, method)


# parameters that are never tensors: a method whose every parameter is one of them cannot be given a batched one
_NOT_TENSORS = {
    "dim", "keepdim", "dtype", "memory_format", "dims", "diagonal", "dim0", "dim1", "source", "destination",
    "start_dim", "end_dim", "descending", "stable", "sorted", "unbiased", "correction", "decimals", "as_tuple",
    "split_size_or_sections", "chunks", "k", "largest", "generator", "non_blocking", "axis", "return_inverse",
    "return_counts", "shape", "size", "sizes", "shifts", "output_size", "minlength", "density", "rtol", "atol",
    "equal_nan", "rounding_mode", "sparse_grad", "reduce", "named"}


def _takes_tensors(name: str) -> bool:
    """Can Tensor.<name> be given a tensor argument? (Not the operators, which give way already; not x.exp_(),
    an in-place twin of a method of `self` alone, whose wrapper takes *args.)"""
    if name.startswith("__"):
        return False
    if name.endswith("_") and name[:-1] in dual.TENSOR_METHODS and not _takes_tensors(name[:-1]):
        return False
    params = list(inspect.signature(dual.TENSOR_METHODS[name][0]).parameters.values())[1:]
    return not all(p.name in _NOT_TENSORS for p in params)


_GIVING_WAY: dict = {}  # active dual level? -> {method name: its giving-way version}


def _giving_way(fn):
    def method(self, *args, **kwargs):
        for a in (*args, *kwargs.values()):
            if a.__class__ is BatchedTensor:
                return BatchedTensor.__torch_function__(fn, (BatchedTensor,), (self, *args), kwargs)
        return fn(self, *args, **kwargs)

    method.__name__, method.__qualname__, method.__wrapped__ = fn.__name__, fn.__qualname__, fn
    return method


dual.INSTALL_HOOKS.append(_give_way)


def _wrap(dim: int, n: int) -> int:
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], but "
                         f"got {dim})")
    return dim % max(n, 1)


def levels_of(args) -> tuple:
    """The sorted union of the levels of the batched tensors among `args` (one level deep in lists)."""
    found: set = set()
    for a in args:
        if a.__class__ is BatchedTensor:
            found.update(a._levels)
        elif a.__class__ in (list, tuple):
            for b in a:
                if b.__class__ is BatchedTensor:
                    found.update(b._levels)
    return tuple(sorted(found))


def physical(x, levels: tuple, rank: int | None = None):
    """`x`'s batch tensor with a dim for each of `levels` (size 1 where `x` is not batched at one), and its
    logical dims padded with size-1 dims in front to `rank`: ready to broadcast against the others'. A plain
    tensor is returned as it is (it broadcasts on the right) unless `rank` asks for its batch dims."""
    if x.__class__ is not BatchedTensor:
        if rank is None or not isinstance(x, Tensor):
            return x
        v, have = x, ()
    else:
        v, have = x._value, x._levels
    logical = v.dim() - len(have)
    shape = list(v.shape)
    out = []
    i = 0
    for lv in levels:
        if i < len(have) and have[i] == lv:
            out.append(shape[i])
            i += 1
        else:
            out.append(1)
    pad = 0 if rank is None else max(rank - logical, 0)
    new = tuple(out) + (1,) * pad + tuple(shape[len(have):])
    return v if new == tuple(shape) else v.reshape(new)


def in_level_order(value: Tensor, levels: tuple):
    """A tensor whose leading dims are batched at `levels` (in any order), as a BatchedTensor (levels sorted)."""
    order = sorted(range(len(levels)), key=lambda k: levels[k])
    if order != list(range(len(levels))):
        value = value.permute(tuple(order) + tuple(range(len(levels), value.dim())))
    return BatchedTensor(value, tuple(levels[k] for k in order)) if levels else value


def full(x, levels: tuple) -> Tensor:
    """`x`'s batch tensor with every one of `levels`' batch dims at its full size (copied along the levels `x` is
    not batched at): (sizes of levels..., logical shape)."""
    sizes = {lv: size for lv, size, _ in LEVELS}
    p = physical(x if x.__class__ is BatchedTensor else BatchedTensor(x, ()), levels, 0)
    want = tuple(sizes[lv] for lv in levels) + tuple(p.shape[len(levels):])
    return p if tuple(p.shape) == want else p.expand(want)


def wrap(value, levels: tuple):
    """The result of an op on batch tensors, batched at `levels` (tensors inside tuples and lists too)."""
    if isinstance(value, Tensor):
        return BatchedTensor(value, levels) if levels else value
    if isinstance(value, (tuple, list)):
        items = [wrap(v, levels) for v in value]
        return type(value)(items) if type(value) in (tuple, list) else type(value)(*items)
    return value


def stack(tensors: list) -> Tensor:
    """torch.stack as the library's users call it: forward-aware, so the rows' tangents are stacked too (the raw
    ops.joining.stack drops them: jacfwd through the per-sample loop gave a zero Jacobian)."""
    return REGISTRY["stack"].function(tensors)


def _loop_warning(name: str) -> None:
    warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                  f"aten::{name}. Please file us an issue on GitHub so that we can prioritize its implementation.",
                  UserWarning, stacklevel=5)


def fallback(name: str, func, args: tuple, kwargs: dict, warn: bool = True):
    """An op with no batching rule: run it once per sample and stack the results, with PyTorch's warning."""
    if warn:
        _loop_warning(name)
    levels = levels_of(tuple(args) + tuple(kwargs.values()))
    sizes = [size for lv, size, _ in LEVELS if lv in levels]
    if 0 in sizes:  # an empty batch: one run on a stand-in sample gives the results' shapes
        return _empty_batch(func, args, kwargs, levels, sizes)
    rows = []
    for index in itertools.product(*(range(s) for s in sizes)):
        a = [_sample(x, levels, index) for x in args]
        k = {key: _sample(x, levels, index) for key, x in kwargs.items()}
        rows.append(func(*a, **k))
    if isinstance(rows[0], Tensor):
        out = stack(rows).reshape(tuple(sizes) + tuple(rows[0].shape))
        return BatchedTensor(out, levels)
    if isinstance(rows[0], (tuple, list)):
        parts = [stack(list(p)).reshape(tuple(sizes) + tuple(p[0].shape)) for p in zip(*rows)]
        return wrap(type(rows[0])(parts) if type(rows[0]) in (tuple, list) else type(rows[0])(*parts), levels)
    raise RuntimeError(f"vmap: the fallback for {name} returned {type(rows[0])}, not tensors")


def _empty_batch(func, args: tuple, kwargs: dict, levels: tuple, sizes: list):
    """The loop over a batch of no samples (jacfwd of an empty input): the op runs once on a stand-in sample (the
    batch summed away: zeros, still in the graph), and its results are copied along the batch, zero times."""
    a = [_summed(x, levels) for x in args]
    k = {key: _summed(x, levels) for key, x in kwargs.items()}
    return wrap(_along(func(*a, **k), tuple(sizes)), levels)


def _summed(x, levels: tuple):
    if x.__class__ in (list, tuple):
        return type(x)(_summed(y, levels) for y in x)
    if x.__class__ is not BatchedTensor:
        return x
    v = physical(x, levels)
    return v.sum(tuple(range(len(levels)))).to(v.dtype)


def _along(out, sizes: tuple):
    if isinstance(out, Tensor):
        return out.reshape((1,) * len(sizes) + tuple(out.shape)).expand(sizes + tuple(out.shape))
    if isinstance(out, (tuple, list)):
        items = [_along(o, sizes) for o in out]
        return type(out)(items) if type(out) in (tuple, list) else type(out)(*items)
    return out


def _sample(x, levels: tuple, index: tuple):
    if x.__class__ in (list, tuple):
        return type(x)(_sample(y, levels, index) for y in x)
    if x.__class__ is not BatchedTensor:
        return x
    v = physical(x, levels)
    return v[tuple(i if v.shape[k] != 1 else 0 for k, i in enumerate(index))]
