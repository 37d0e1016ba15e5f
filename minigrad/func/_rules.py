"""Batching rules: how each op runs once on a whole batch (see _batched.py).

A rule takes the op's function and its arguments (some of them BatchedTensors) and returns the batched result.
Most ops need no rule of their own, only their family's:

- elementwise ops (the families of ops/elementwise.py, arithmetic.py, comparison.py, selection.py): every batched
  argument gets a dim for each level and its logical dims padded to the widest, then the op broadcasts;
- ops with a `dim` argument (reductions, softmax, cat, unbind, ...): the logical dim is checked, then shifted past
  the batch dims; `dim=None` becomes every logical dim;
- views and matmul-like ops: their shape arguments are given the batch dims in front.

`RULES` names the ops with a rule of their own; an op in no family and without a rule falls back to a loop.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from .. import _dtypes, ops
from .._creation import RANDOM_HOOK, bernoulli, multinomial, ones, rand, randn, zeros
from .._state import DUAL, FUNC_DEPTH, FUNC_FORWARD
from .._tensor import Tensor
from ..ops.registry import REGISTRY
from ._batched import (
    LEVELS,
    REVERSE_COPIES,
    TANGENT_LEVELS,
    VMAP_LEVELS,
    BatchedTensor,
    _loop_warning,
    _wrap,
    fallback,
    full,
    levels_of,
    physical,
    wrap,
)

# -- which op a function is ------------------------------------------------------------------------------------
NAMES: dict = {}
for _op in REGISTRY.values():
    for _fn in (_op.function, *_op.operators.values(), *(_op.named(a) for a in _op.aliases)):
        NAMES.setdefault(_fn, _op.name)
        if hasattr(_fn, "forward_of"):  # the op's own function, behind its forward-AD wrapper (ops/dual.py)
            NAMES.setdefault(_fn.forward_of[0], _op.name)
    for _key, _fn in (("", _op.inplace), *_op.operators.items()):
        if _fn is not None and (_key == "" or _key.startswith("__i")):  # the in-place function, behind its wrapper
            NAMES[_fn] = _op.name + "_"
            if hasattr(_fn, "forward_of"):
                NAMES[_fn.forward_of[0]] = _op.name + "_"

ELEMENTWISE = {op.name for op in REGISTRY.values() if op.function.__module__ in (
    "minigrad.ops.elementwise", "minigrad.ops.arithmetic", "minigrad.ops.selection")} | {
    "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not",
    "logical_and", "logical_or", "isclose", "isnan", "isinf", "isfinite", "clone", "contiguous", "to",
    "float", "double", "half", "long", "int", "bool", "relu", "sigmoid", "tanh", "silu", "zero_", "fill_", "copy_"}
ELEMENTWISE |= {name + "_" for name in ELEMENTWISE}

# ops whose `dim` argument is shifted past the batch dims; the value is what `dim=None` means
DIM_OPS = {"sum": "all", "mean": "all", "amax": "all", "amin": "all", "logsumexp": None, "softmax": None,
           "log_softmax": None, "cumsum": None, "cumprod": None, "unbind": None, "var": "all", "std": "all",
           "all": "all", "any": "all", "prod": "flat", "argmax": "flat", "argmin": "flat", "max": "flat",
           "min": "flat", "norm": "all", "split": None, "chunk": None, "narrow": None, "roll": None,
           "flip": None, "sort": None, "argsort": None, "topk": None, "unflatten": None, "index_select": None,
           "_safe_softmax": None, "squeeze": None, "count_nonzero": "all", "diff": None}

# dim ops that refuse a 0-d tensor ("chunk expects at least a 1-dimensional tensor")
NO_0D = {"split", "chunk", "narrow", "roll", "unbind", "diff"}
_SIGNATURES: dict = {}


def dispatch(func, args: tuple, kwargs: dict):
    """The override protocol's entry (`minigrad.<op>(batched, ...)`, `F.<op>(...)`, an operator on a Tensor)."""
    public = func
    while func not in NAMES and hasattr(func, "__wrapped__"):  # the public wrapper of a declared op's function
        func = func.__wrapped__
    try:
        return run(NAMES.get(func, getattr(func, "__name__", "op")), func, args, kwargs)
    except TypeError as error:
        raise _call_error(error, public) from None


def _call_error(error: TypeError, called) -> TypeError:
    """A rule binds the arguments with inspect, whose message lacks Python's (and PyTorch's) `name() got `."""
    if str(error).startswith("multiple values for argument"):
        return TypeError(f"{getattr(called, '__qualname__', 'op')}() got {error}")
    return error


def run(name: str, func, args: tuple, kwargs: dict):
    """Run the op `name` (function `func`) once on the batch: its rule, its family's, else the loop."""
    if name[-1] == "_" and name[0] != "_" and args:
        check_inplace(name, args, levels_of(tuple(args) + tuple(kwargs.values())))
    rule = RULES.get(name)
    if rule is not None:
        out = rule(func, args, kwargs)
        if out is not NotImplemented:
            return out
    elif name in ELEMENTWISE:
        return elementwise(func, args, kwargs)
    elif name in DIM_OPS:
        return dim_op(name, func, args, kwargs)
    return fallback(name, func, args, kwargs)


def _logical_dim(x) -> int:
    if x.__class__ is BatchedTensor:
        return x.dim()
    return x.dim() if isinstance(x, Tensor) else 0


INPLACE_ERROR = ("vmap: {}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
                 "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
                 "being vmapped over {}. Please try to use out-of-place operators instead of {}. If said operator is "
                 "being called inside the PyTorch framework, please file a bug report instead.")
# in-place ops whose refusal PyTorch words as "inplace arithmetic" (the others name the aten op and the level)
ARITHMETIC = {"mul_", "div_", "sub_", "copy_", "true_divide_", "multiply_", "divide_", "subtract_"}


def check_inplace(name: str, args: tuple, levels: tuple) -> None:
    """An in-place op writes into `args[0]`: refused, as PyTorch's, when another argument is batched at a level it
    is not (the result would not fit in it). (add_ gives the broadcast error, the batch dims in front.)"""
    self = args[0]
    have = self._levels if self.__class__ is BatchedTensor else ()
    missing = [lv for lv in levels if lv not in have]
    if not missing:
        return
    if name == "add_":
        sizes = {lv: size for lv, size, _ in LEVELS}
        shapes = [tuple(a.shape) for a in args if isinstance(a, (Tensor, BatchedTensor))]
        try:
            wide = [sizes[lv] for lv in levels] + list(np.broadcast_shapes(*shapes))
        except ValueError:  # the op's own error says so
            return
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {wide}")
    if name in ARITHMETIC:
        raise RuntimeError(INPLACE_ERROR.format("inplace arithmetic", "in a vmap", "inplace arithmetic"))
    depth = next(i for i, (lv, _, _) in enumerate(LEVELS) if lv == missing[0]) + 1
    raise RuntimeError(INPLACE_ERROR.format(f"aten::{name}", f"at level {depth}", f"aten::{name}"))


def elementwise(func, args: tuple, kwargs: dict):
    """Broadcasting ops: line up the batch dims, pad every batched argument's logical dims to the widest."""
    if func.__name__ in PROMOTING_BINARY and len(args) >= 2:
        _promote_first_sample(func.__name__, args[0], args[1])
    every = tuple(args) + tuple(kwargs.values())
    levels = levels_of(every)
    rank = max(_logical_dim(a) for a in every)
    a = [physical(x, levels, rank) for x in args]
    k = {key: physical(x, levels, rank) for key, x in kwargs.items()}
    dtype = _samples_float_dtype(every, func.__name__)
    if dtype is not None:
        a = [x.to(dtype) if _is_float(x) else x for x in a]
        k = {key: x.to(dtype) if _is_float(x) else x for key, x in k.items()}
    return wrap(func(*a, **k), levels)


# PyTorch's binary rules that promote a 0-d sample with the other operand by reading the first sample (its
# handleScalarTypePromotion: `logical_scalar[0]`); a number counts as an operand for the first ones only (the others
# take it by their Scalar overloads, which have no such step)
PROMOTING_BINARY = {"add", "sub", "mul", "div", "true_divide", "floor_divide"} | {
    "fmod", "remainder", "xlogy", "copysign", "pow", "logaddexp", "logaddexp2", "hypot", "fmax", "fmin", "maximum",
    "minimum", "atan2", "nextafter", "ldexp", "heaviside"}
_NUMBER_TOO = ("add", "sub", "mul", "div", "true_divide", "floor_divide")


def _promote_first_sample(name: str, a, b) -> None:
    """A 0-d sample with an operand that is not one (a tensor, or a number for add/sub/mul/div): PyTorch reads the
    first sample to promote, so an empty batch at the innermost level is an IndexError, as PyTorch's select."""
    if not isinstance(b, (Tensor, BatchedTensor)) and name not in _NUMBER_TOO:
        return
    scalar_a, scalar_b = (x.__class__ is BatchedTensor and not x.dim() for x in (a, b))
    if scalar_a == scalar_b:
        return
    v = (a if scalar_a else b)._value
    if not v.shape[-1]:
        raise IndexError(f"select(): index 0 out of range for tensor of size {list(v.shape)} at dimension "
                         f"{v.dim() - 1}")


def _is_float(x) -> bool:
    return isinstance(x, Tensor) and x._data.dtype.kind == "f"


def _samples_float_dtype(every: tuple, name: str):
    """PyTorch's binary ops promote a 0-d sample as a 0-d tensor, a tier below dimensioned tensors (a float64 0-d
    sample with a float32 vector gives float32), while its batch tensor is dimensioned. The floating dtype the
    samples promote to when the batch tensors would promote to another; else None. (PyTorch's rules of three
    tensors, addcmul's, promote the batch tensors: left so, unless the batch is only jacfwd's tangents,
    `TANGENT_LEVELS`, where PyTorch's primal is a plain tensor; where and clamp with tensor bounds: always so.)"""
    batched = [x for x in every if x.__class__ is BatchedTensor]
    if not any(not x.dim() for x in batched):
        return None
    tangents_only = all(lv in TANGENT_LEVELS for x in batched for lv in x._levels)
    if name.startswith(("clamp", "clip", "where")) or not tangents_only and sum(
            isinstance(x, (Tensor, BatchedTensor)) for x in every) != 2:
        return None
    floats = [(x._value if x.__class__ is BatchedTensor else x, x.dim(), x.__class__ is BatchedTensor) for x in every
              if _is_float(x._value if x.__class__ is BatchedTensor else x)]
    logical = [v._data.dtype for v, n, _ in floats if n] or [v._data.dtype for v, _, _ in floats]
    batch = [v._data.dtype for v, n, b in floats if n or b] or [v._data.dtype for v, _, _ in floats]
    if not floats or np.result_type(*logical) == np.result_type(*batch):
        return None
    return np.result_type(*logical)


def _bind(func, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    sig = _SIGNATURES.get(func)
    if sig is None:
        sig = _SIGNATURES[func] = inspect.signature(func)
    return sig.bind(*args, **kwargs)


def _shift(dim, n: int, nb: int):
    if isinstance(dim, (tuple, list)) and len(dim) == 1 and isinstance(dim[0], (tuple, list)):
        dim = dim[0]  # `*dims` given one sequence: flip(x, (0, 2))
    if isinstance(dim, (tuple, list)):
        return tuple(_wrap(d, n) + nb for d in dim)
    return _wrap(dim, n) + nb


def dim_op(name: str, func, args: tuple, kwargs: dict):
    """An op of one tensor with a `dim` argument: the dim shifted past the batch dims. (max/min of two tensors,
    `torch.max(x, other)`, are maximum/minimum: elementwise.)"""
    if name in ("max", "min") and any(isinstance(a, (Tensor, BatchedTensor)) for a in (*args[1:2], *kwargs.values())):
        return elementwise(func, args, kwargs)
    x = args[0]
    if x.__class__ is not BatchedTensor or levels_of(args[1:]) or levels_of(tuple(kwargs.values())):
        return fallback(name, func, args, kwargs)
    bound = _bind(func, args, kwargs)
    params = bound.signature.parameters
    key = "dim" if "dim" in params else "dims" if "dims" in params else None
    nb, n, v = len(x._levels), x.dim(), x._value
    if key is None:
        return fallback(name, func, args, kwargs)
    dim = bound.arguments.get(key, params[key].default)
    if dim is None or dim is inspect.Parameter.empty or (dim == () and DIM_OPS[name] == "all"):  # (amax: dim=())
        if name == "squeeze":
            dims = tuple(i + nb for i, s in enumerate(x.shape) if s == 1)
            return BatchedTensor(v.reshape(v.shape[:nb] + tuple(s for s in x.shape if s != 1)), x._levels) \
                if dims else BatchedTensor(v.view_as(v), x._levels)
        how = DIM_OPS[name]
        if how == "all" and not n:  # a 0-d sample: reduced along a size-1 dim of its own (dim=() reduces all)
            bound.arguments[key] = -1
            bound.arguments[next(iter(params))] = v.unsqueeze(-1)
            return wrap(_squeezed(func(*bound.args, **bound.kwargs), tuple(v.shape)), x._levels)
        if how == "all":
            bound.arguments[key] = tuple(range(nb, nb + n))
        elif how == "flat":  # reduce the flattened sample
            if name in ("max", "min") and x.numel():  # max(): ties share the gradient, as amax's (max(dim) picks one)
                return wrap(_extreme(name, v.reshape(v.shape[:nb] + (x.numel(),))), x._levels)
            if name in _EXTENT_CHECKED and not x.numel():
                _refuse_empty(name, func, x)
            bound.arguments["input" if "input" in params else "self"] = v.reshape(v.shape[:nb] + (-1,))
            bound.arguments[key] = nb
            return wrap(_values(name, func(*bound.args, **bound.kwargs)), x._levels)
        else:
            return fallback(name, func, args, kwargs)
    else:
        if name in _EXTENT_CHECKED and n:
            _check_extent(name, x, dim)
        bound.arguments[key] = _shift(dim, n, nb)
        if not n and name in NO_0D:  # refused (the physical value has the batch dims: its own check would pass)
            _refuse_0d(name, func, args, kwargs, x._levels)
        if not n:  # a 0-d sample (its dim 0 or -1): the op runs along a size-1 dim of its own, then the dim goes
            bound.arguments[next(iter(params))] = v.unsqueeze(-1)
            return wrap(_squeezed(func(*bound.args, **bound.kwargs), tuple(v.shape)), x._levels)
    first = next(iter(params))
    bound.arguments[first] = v
    return wrap(func(*bound.args, **bound.kwargs), x._levels)


def _extreme(name: str, flat: Tensor) -> Tensor:
    """max()/min() of every row of `flat`: amax/amin (ties share the gradient, as PyTorch's evenly_distribute),
    except that a row holding NaN gives its gradient to its NaNs, shared (PyTorch's mask is `isnan(self)` when the
    result is NaN; amax's `self == result` holds nowhere, a NaN gradient). Under a dual level amax stays: PyTorch's
    forward rule (evenly_read_jvp) reads the mask `self == result`, a NaN tangent there."""
    nans = flat.detach().isnan()
    if DUAL[0] is not None or not bool(nans.any()):
        return flat.amax(-1) if name == "max" else flat.amin(-1)
    row_nan = nans.any(-1)
    finite = flat.masked_fill(row_nan.unsqueeze(-1), 0.0)  # (rows with NaN take the other branch)
    best = finite.amax(-1) if name == "max" else finite.amin(-1)
    count = nans.sum(-1).clamp(min=1).to(flat.dtype)
    shared = flat.masked_fill(nans.logical_not(), 0.0).sum(-1) / count  # NaN, its gradient shared among the NaNs
    return shared.where(row_nan, best)


_EXTENT_CHECKED = ("amax", "amin", "max", "min", "argmax", "argmin")


def _check_extent(name: str, x: BatchedTensor, dim) -> None:
    """A max or min over an empty dim of the samples: PyTorch's IndexError naming the dim as PyTorch's rule passes
    it: shifted past the user's vmap dims only (jacrev's and jacfwd's forward runs unbatched in PyTorch), and as
    written (amax's -1) where no user's vmap runs."""
    users = sum(lv in VMAP_LEVELS for lv in x._levels)
    for given in dim if isinstance(dim, (tuple, list)) else (dim,):
        k = _wrap(given, x.dim())
        if not x.shape[k]:
            shown = k + users if users or name not in ("amax", "amin") else given
            raise IndexError(f"{name}(): Expected reduction dim {shown} to have non-zero size.")


def _refuse_empty(name: str, func, x: BatchedTensor) -> None:
    """max()/argmax() of empty samples: under the user's vmap PyTorch's rule reduces the flattened sample (dim 1 past
    the user's dims, empty); jacrev's and jacfwd's forward runs unbatched in PyTorch: the plain op's own error."""
    users = sum(lv in VMAP_LEVELS for lv in x._levels)
    if users:
        raise IndexError(f"{name}(): Expected reduction dim {users} to have non-zero size.")
    func(zeros(tuple(x.shape), dtype=x.dtype))


def _refuse_0d(name: str, func, args: tuple, kwargs: dict, levels: tuple) -> None:
    """A dim op that refuses a 0-d tensor, on 0-d samples: under the user's vmap, PyTorch's rules for split, roll
    and unbind run the op on the physical 1-d value with the dim shifted past its batch dim (out of range); the
    others, and jacrev/jacfwd's batches (the forward of PyTorch's runs unbatched), as outside vmap."""
    if name in ("split", "roll", "unbind") and VMAP_LEVELS.intersection(levels):
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    func(ones(()), *args[1:], **kwargs)


def _squeezed(out, batch: tuple):
    """The results of an op on 0-d samples made 1-d: each back to one value per sample."""
    if isinstance(out, Tensor):
        return out.reshape(batch) if out.numel() == _numel(batch) else out
    if isinstance(out, (tuple, list)):
        items = [_squeezed(o, batch) for o in out]
        return type(out)(items) if type(out) in (tuple, list) else type(out)(*items)
    return out


def _values(name: str, out):
    return out[0] if name in ("max", "min") else out


# -- views -------------------------------------------------------------------------------------------------------
def _one(rule):
    """A rule for an op of one batched tensor (else the loop): rule(value, batch shape, logical rank, *args)."""
    def run_rule(func, args, kwargs):
        x = args[0]
        if x.__class__ is not BatchedTensor or levels_of(args[1:]) or levels_of(tuple(kwargs.values())):
            return NotImplemented
        nb = len(x._levels)
        return wrap(rule(x._value, tuple(x._value.shape[:nb]), x.dim(), *args[1:], **kwargs), x._levels)
    return run_rule


def _shape_arg(shape: tuple) -> tuple:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)


def _reshape(v, b, n, *shape):
    return v.reshape(b + _shape_arg(shape))


def _view(v, b, n, *shape):
    return v.view(b + _shape_arg(shape))


def _flatten(v, b, n, start_dim=0, end_dim=-1):
    if n == 0:
        return v.reshape(b + (1,))
    return v.flatten(_shift(start_dim, n, len(b)), _shift(end_dim, n, len(b)))


def _unsqueeze(v, b, n, dim):
    return v.unsqueeze(_wrap(dim, n + 1) + len(b))


def _transpose(v, b, n, dim0, dim1):
    return v.transpose(_shift(dim0, n, len(b)), _shift(dim1, n, len(b))) if n else v.view_as(v)


def _permute(v, b, n, *dims):
    return v.permute(tuple(range(len(b))) + _shift(_shape_arg(dims), n, len(b)))


def _movedim(v, b, n, source, destination):
    source, destination = _shift(source, n, len(b)), _shift(destination, n, len(b))  # (checked against the sample)
    return v.movedim(source, destination) if n else v.view_as(v)  # (a 0-d sample's dim 0 or -1: itself)


def _t(v, b, n):
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return v.transpose(-1, -2) if n == 2 else v.view_as(v)


def _mT(v, b, n):
    """x.mT of a sample: its last two dims swapped; a 1-d sample refused and a 0-d one returned with the warning, as
    for a tensor of the sample's shape (the batch dims are not the sample's to swap)."""
    if n < 2:
        ops.views.mT(zeros(tuple(v.shape[len(b):]), dtype=v.dtype))
        return v.view_as(v)
    return v.transpose(-1, -2)


def _T(v, b, n):
    """x.T of a sample: its dims reversed, with the warnings of a tensor of the sample's rank (0-d, or not 2-d)."""
    if n != 2:
        ops.views.T(zeros((0,) * n, dtype=v.dtype))
    return v.permute(tuple(range(len(b))) + tuple(range(len(b) + n - 1, len(b) - 1, -1)))


def _expand(v, b, n, *sizes):
    sizes = _shape_arg(sizes)
    if len(sizes) > n:
        v = v.reshape(b + (1,) * (len(sizes) - n) + tuple(v.shape[len(b):]))
    return v.expand(b + sizes)


def _size_of(other) -> tuple:
    return tuple(other.shape)


def _getitem(func, args, kwargs):
    x, key = args
    if x.__class__ is not BatchedTensor or levels_of(key if isinstance(key, tuple) else (key,)):
        return NotImplemented
    key = key if isinstance(key, tuple) else (key,)
    advanced = [i for i, k in enumerate(key) if isinstance(k, (Tensor, list)) or k is Ellipsis]
    if sum(1 for k in key if isinstance(k, (Tensor, list))) > 1 and advanced != list(
            range(advanced[0], advanced[-1] + 1)):
        return NotImplemented  # separated advanced indices move their dims to the front: the loop keeps it right
    nb = len(x._levels)
    return BatchedTensor(x._value[(slice(None),) * nb + key], x._levels)


def _list_dim(func, args, kwargs):
    """cat/stack: every tensor of the list lined up at the same levels, the dim shifted."""
    bound = _bind(func, args, kwargs)
    tensors = list(bound.arguments["tensors"])
    levels = levels_of(tensors)
    rank = max(_logical_dim(t) for t in tensors)
    if func.__name__ == "cat" and not VMAP_LEVELS.intersection(levels):  # (jacrev/jacfwd: as outside vmap)
        flat = [i for i, t in enumerate(tensors) if not _logical_dim(t)]
        if flat:
            raise RuntimeError(f"zero-dimensional tensor (at position {flat[0]}) cannot be concatenated")
    sizes = {lv: size for lv, size, _ in LEVELS}
    phys = []
    for t in tensors:
        p = physical(t if t.__class__ is BatchedTensor else BatchedTensor(t, ()), levels, 0)
        phys.append(p.expand(tuple(sizes[lv] for lv in levels) + tuple(p.shape[len(levels):])))
    n = rank + (1 if func.__name__ == "stack" else 0)
    bound.arguments["tensors"] = phys
    bound.arguments["dim"] = _wrap(bound.arguments.get("dim", 0), n) + len(levels)
    return wrap(func(*bound.args, **bound.kwargs), levels)


# -- matmul-like -------------------------------------------------------------------------------------------------
def _matmul(func, args, kwargs):
    """a @ b: a batched vector gets a matrix dim (taken away after), the batch dims are lined up in front."""
    a, b = args[0], args[1]
    levels = levels_of((a, b))
    ra, rb = _logical_dim(a), _logical_dim(b)
    if ra == 0 or rb == 0:
        return NotImplemented
    if b.__class__ is not BatchedTensor and rb == 2:  # (batch and rows folded) @ matrix: one 2-d product
        pa = a._value
        out = ops.linalg.matmul(pa.reshape((_numel(pa.shape[:-1]), pa.shape[-1])), b)
        return BatchedTensor(out.reshape(tuple(pa.shape[:-1]) + (b.shape[-1],)), a._levels)
    if a.__class__ is not BatchedTensor and ra == 2 and rb == 1:  # matrix @ batch of vectors = vectors @ matrix.T
        return BatchedTensor(ops.linalg.matmul(b._value, a.transpose(0, 1)), b._levels)
    pa = physical(a, levels, 0) if a.__class__ is BatchedTensor else a
    pb = physical(b, levels, 0) if b.__class__ is BatchedTensor else b
    if ra == 1 and a.__class__ is BatchedTensor:
        pa = pa.unsqueeze(-2)
    if rb == 1 and b.__class__ is BatchedTensor:
        pb = pb.unsqueeze(-1)
    rank = max(ra, 2) if a.__class__ is BatchedTensor else 0
    rank = max(rank, max(rb, 2) if b.__class__ is BatchedTensor else 0)
    rank = max(rank, ra if a.__class__ is not BatchedTensor else 0, rb if b.__class__ is not BatchedTensor else 0)
    pa = _pad(pa, levels, rank) if a.__class__ is BatchedTensor else pa
    pb = _pad(pb, levels, rank) if b.__class__ is BatchedTensor else pb
    out = ops.linalg.matmul(pa, pb)
    if rb == 1 and b.__class__ is BatchedTensor:
        out = out.squeeze(-1)
    if ra == 1 and a.__class__ is BatchedTensor:
        out = out.squeeze(-2 if rb != 1 or b.__class__ is not BatchedTensor else -1)
    return BatchedTensor(out, levels)


def _pad(p, levels, rank):
    logical = p.dim() - len(levels)
    if logical >= rank:
        return p
    return p.reshape(tuple(p.shape[:len(levels)]) + (1,) * (rank - logical) + tuple(p.shape[len(levels):]))


def _linear(func, args, kwargs):
    bound = _bind(func, args, kwargs)
    x, w, b = bound.arguments["input"], bound.arguments["weight"], bound.arguments.get("bias")
    if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
        return BatchedTensor(func(x._value, w, b), x._levels)
    wt = w.mT if w.__class__ is BatchedTensor else w.t()
    out = _matmul(None, (x, wt), {}) if BatchedTensor in (x.__class__, wt.__class__) else ops.linalg.matmul(x, wt)
    return out if b is None else out + b  # (only the bias batched: a plain product, then the batched sum)


# -- losses ------------------------------------------------------------------------------------------------------
def _loss(func, args, kwargs):
    """A loss with `reduction`: the loss per element (reduction='none', elementwise), then the sample's mean/sum."""
    bound = _bind(func, args, kwargs)
    name = func.__name__
    reduction = bound.arguments.get("reduction", "mean")
    if name in ("nll_loss", "cross_entropy"):
        return _class_loss(func, bound, reduction)
    if any(bound.arguments.get(k) is not None for k in ("weight", "pos_weight", "size_average", "reduce")):
        return NotImplemented
    x, target = bound.arguments["input"], bound.arguments["target"]
    _empty_mean(name, reduction, x, target)
    if not isinstance(target, (Tensor, BatchedTensor)) or tuple(x.shape) != tuple(target.shape):
        return quiet_loop(name, func, args, kwargs)  # the loss's own error or warning, about the samples' sizes
    levels = levels_of((x, target))
    bound.arguments.update(input=full(x, levels), target=full(target, levels), reduction="none")
    return _reduce(wrap(func(*bound.args, **bound.kwargs), levels), reduction)


def _empty_mean(name: str, reduction: str, x, target) -> None:
    """The mean of an empty mse/smooth_l1 loss, differentiated by a reverse transform (jacrev, vmap(grad)): PyTorch
    runs the batched backward's decomposition, whose `2.0 / input.numel()` is Python's ZeroDivisionError."""
    if name not in ("mse_loss", "smooth_l1_loss") or reduction != "mean" or FUNC_DEPTH[0] <= FUNC_FORWARD[0]:
        return
    shapes = [tuple(t.shape) for t in (x, target) if isinstance(t, (Tensor, BatchedTensor))]
    try:
        empty = 0 in np.broadcast_shapes(*shapes)
    except ValueError:  # (the loss's own error follows)
        return
    if empty:
        raise ZeroDivisionError("float division by zero")


def quiet_loop(name: str, func, args: tuple, kwargs: dict):
    """The per-sample loop without the performance warning (PyTorch has a rule), each warning given once."""
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            return fallback(name, func, args, kwargs, warn=False)
    finally:
        seen = set()
        for w in caught:
            if str(w.message) not in seen:
                seen.add(str(w.message))
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _reduce(out, reduction: str):
    if reduction == "none":
        return out
    return out.mean() if reduction == "mean" else out.sum()


def _class_loss(func, bound, reduction: str):
    """nll_loss / cross_entropy: the batch folded into the loss's own batch dim N (input (N, C, ...) or (C))."""
    x, target = bound.arguments["input"], bound.arguments["target"]
    if any(bound.arguments.get(k) not in (None, 0.0) for k in ("weight", "size_average", "reduce",
                                                               "label_smoothing")) or reduction == "mean" and \
            bound.arguments.get("ignore_index", -100) != -100:
        return NotImplemented
    levels = levels_of((x, target))
    sizes = {lv: size for lv, size, _ in LEVELS}
    b = tuple(sizes[lv] for lv in levels)
    px = physical(x if x.__class__ is BatchedTensor else BatchedTensor(x, ()), levels, 0)
    pt = physical(target if target.__class__ is BatchedTensor else BatchedTensor(target, ()), levels, 0)
    px, pt = px.expand(b + tuple(px.shape[len(b):])), pt.expand(b + tuple(pt.shape[len(b):]))
    logical = x.dim() if x.__class__ is BatchedTensor else x.dim()
    if logical == 1:  # one sample of C classes: the batch is N
        fx, ft = px.reshape((_numel(b), px.shape[-1])), pt.reshape(_numel(b))
    else:  # (explicit sizes: -1 is ambiguous for an empty batch)
        n = _numel(b) * px.shape[len(b)]
        fx, ft = px.reshape((n,) + tuple(px.shape[len(b) + 1:])), pt.reshape((n,) + tuple(pt.shape[len(b) + 1:]))
    ft = _gather_target(ft, levels)
    bound.arguments["input"], bound.arguments["target"], bound.arguments["reduction"] = fx, ft, "none"
    out = BatchedTensor(func(*bound.args, **bound.kwargs).reshape(b + tuple(pt.shape[len(b):])), levels)
    if reduction == "mean" and bound.arguments.get("ignore_index", -100) == -100:
        return out.mean()
    return _reduce(out, reduction)


def _gather_target(target: Tensor, levels: tuple) -> Tensor:
    """Under the user's vmap PyTorch's rule for nll_loss is a gather along the classes: the target is an index,
    int32 or int64 (the loss's own check wants int64 or uint8), refused otherwise when it holds any element.
    jacrev's and jacfwd's own batches run the loss as outside vmap (PyTorch's forward runs unbatched, so its check
    comes first), then a uint8 target meets the batched backward's scatter (jacrev) or the tangent's gather."""
    if target.dtype is _dtypes.int64:
        return target
    if not VMAP_LEVELS.intersection(levels):
        if target.dtype is _dtypes.uint8 and target.numel():
            op = "gather" if TANGENT_LEVELS.intersection(levels) else "scatter"
            raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
        return target
    if target.dtype is not _dtypes.int32 and target.numel():
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    return target.long()


# -- convolutions and pooling: the batch folded into the op's own batch dim N ------------------------------------
def _folded(func, args, kwargs):
    """conv/pool of a batched input with unbatched weights: (levels..., N, C, ...) runs as (levels*N, C, ...)."""
    x = args[0]
    if x.__class__ is not BatchedTensor or levels_of(args[1:]) or levels_of(tuple(kwargs.values())):
        return NotImplemented
    v, nb = x._value, len(x._levels)
    b = tuple(v.shape[:nb])
    spatial = {"conv2d": 2, "max_pool2d": 2, "avg_pool2d": 2, "adaptive_avg_pool2d": 2, "conv1d": 1,
               "max_pool1d": 1, "avg_pool1d": 1, "adaptive_avg_pool1d": 1}[func.__name__]
    unbatched = x.dim() == spatial + 1  # (C, ...): the batch is N
    n = _numel(b) * (1 if unbatched else v.shape[nb])  # (not -1: ambiguous for an empty batch)
    folded = v.reshape((n,) + tuple(v.shape[nb + (0 if unbatched else 1):]))
    out = func(folded, *args[1:], **kwargs)
    if isinstance(out, tuple):
        return NotImplemented
    return BatchedTensor(out.reshape(b + (() if unbatched else (v.shape[nb],)) + tuple(out.shape[1:])), x._levels)


def _conv(func, args, kwargs):
    """conv1d/conv2d: unbatched weights fold the batch into N (`_folded`); batched weights (a model ensemble, per-
    sample gradients) run as ONE grouped convolution, the batch folded into the channels: groups * batch."""
    bound = _bind(func, args, kwargs)
    x, w, b = bound.arguments["input"], bound.arguments["weight"], bound.arguments.get("bias")
    if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
        return _folded(func, args, kwargs)
    levels = levels_of((x, w, b))
    sizes = {lv: size for lv, size, _ in LEVELS}
    lead = tuple(sizes[lv] for lv in levels)
    k = _numel(lead)
    spatial = w.dim() - 2
    px = physical(x if x.__class__ is BatchedTensor else BatchedTensor(x, ()), levels, spatial + 2)
    px = px.expand(lead + tuple(px.shape[len(lead):]))  # (lead..., N, C, *spatial)
    n = px.shape[len(lead)]
    px = px.reshape((k, n) + tuple(px.shape[len(lead) + 1:])).movedim(0, 1)  # (N, k, C, ...)
    px = px.reshape((n, k * px.shape[2]) + tuple(px.shape[3:]))
    pw = physical(w if w.__class__ is BatchedTensor else BatchedTensor(w, ()), levels, 0)
    pw = pw.expand(lead + tuple(pw.shape[len(lead):])).reshape((k * w.shape[0],) + tuple(w.shape[1:]))
    pb = None
    if b is not None:
        pb = physical(b if b.__class__ is BatchedTensor else BatchedTensor(b, ()), levels, 0)
        pb = pb.expand(lead + tuple(pb.shape[len(lead):])).reshape(-1)
    bound.arguments.update(input=px, weight=pw, bias=pb, groups=bound.arguments.get("groups", 1) * k)
    out = func(*bound.args, **bound.kwargs)  # (N, k * O, ...)
    out = out.reshape((n, k, w.shape[0]) + tuple(out.shape[2:])).movedim(1, 0)
    out = out.reshape(lead + tuple(out.shape[1:]))
    if x.dim() == spatial + 1:  # an unbatched sample (C, ...): N was 1
        out = out.squeeze(len(lead))
    return BatchedTensor(out, levels)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                "'different' randomness flags on vmap or perform the randomness operation out of vmap")
_DRAWING = [False]


def draw_in_vmap(draw, shape: tuple):
    """A random value drawn inside vmap, as the running levels' `randomness` says: "error" (at any level) refuses
    it, "different" draws one per sample (the draw is batched at those levels), "same" draws once. `draw(shape)`
    makes the tensor; NotImplemented outside vmap (or while drawing)."""
    if not LEVELS or _DRAWING[0]:
        return NotImplemented
    if any(randomness == "error" for _, _, randomness in LEVELS):
        raise RuntimeError(RANDOM_ERROR)
    levels = tuple(lv for lv, _, randomness in LEVELS if randomness == "different")
    sizes = tuple(size for _, size, randomness in LEVELS if randomness == "different")
    _DRAWING[0] = True
    try:
        value = draw(sizes + tuple(shape))
    finally:
        _DRAWING[0] = False
    return BatchedTensor(value, levels) if levels else value


def _dropout(func, args, kwargs):
    """dropout: the input times a mask drawn as vmap's randomness says (one per sample, or one for all)."""
    names = ("input", "p", "training", "inplace")
    bound = dict(zip(names, args), **kwargs)
    x, p = bound["input"], bound.get("p", 0.5)
    if not bound.get("training", True) or p == 0:
        return func(*args, **kwargs) if x.__class__ is not BatchedTensor else x
    mask = draw_in_vmap(lambda s: func(ones(s, dtype=x.dtype), p, True), tuple(x.shape))
    if mask is NotImplemented:
        return elementwise(func, args, kwargs)
    return x.mul_(mask) if bound.get("inplace", False) else x * mask


SAME_ERROR = ("Vmap does not currently support same randomness with a batched tensor input. Please file an issue "
              "with functorch")


def _drawn_levels() -> tuple:
    """The levels a draw from a batched tensor's values is made at, as vmap's randomness says ("different")."""
    if any(randomness == "error" for _, _, randomness in LEVELS):
        raise RuntimeError(RANDOM_ERROR)
    if any(randomness == "same" for _, _, randomness in LEVELS):
        raise RuntimeError(SAME_ERROR)
    return tuple(lv for lv, _, _ in LEVELS)


def _draw_from(func, args, kwargs):
    """bernoulli(p), normal(mean, std), multinomial(probs, n) of batched tensors: one draw per sample (each
    sample's values are drawn independently, so one draw on the batch tensor is the batch of draws)."""
    levels = _drawn_levels()
    first = full(args[0], levels)
    rank = max(_logical_dim(a) for a in (*args, *kwargs.values()))
    rest = [physical(a, levels, rank) for a in args[1:]]
    k = {key: physical(a, levels, rank) for key, a in kwargs.items()}
    if func.__name__ == "multinomial":  # at most 2-d: the batch folded into its rows
        rows = first.reshape((_numel(first.shape[:-1]), first.shape[-1]))
        out = func(rows, *rest, **k)
        return BatchedTensor(out.reshape(tuple(first.shape[:-1]) + (out.shape[-1],)), levels)
    if args[0].__class__ is not BatchedTensor or args[0].dim() < rank:
        first = physical(BatchedTensor(first, levels), levels, rank)
    return wrap(func(first, *rest, **k), levels)


def _dropout2d(func, args, kwargs):
    """dropout2d: whole channels zeroed, the mask (N, C, 1, 1) drawn as vmap's randomness says."""
    names = ("input", "p", "training", "inplace")
    bound = dict(zip(names, args), **kwargs)
    x, p = bound["input"], bound.get("p", 0.5)
    if not bound.get("training", True) or p == 0 or x.numel() == 0:
        return x
    shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2)
    mask = draw_in_vmap(lambda s: (rand(*s) < 1 - p).to(x.dtype) / (1 - p), shape)
    return x.mul_(mask) if bound.get("inplace", False) else x * mask


def _like(func, args, kwargs):
    """zeros_like(x) and its kin: the factory on the batch tensor; a random one draws as vmap's randomness says."""
    x = args[0]
    if func.__name__ in ("rand_like", "randn_like"):
        factory = rand if func.__name__ == "rand_like" else randn
        dtype = kwargs.get("dtype") or x.dtype
        return draw_in_vmap(lambda s: factory(*s, dtype=dtype), tuple(x.shape))
    return BatchedTensor(func(x._value, *args[1:], **kwargs), x._levels)


def _dot(func, args, kwargs):
    """dot / outer of batched vectors: their products, elementwise."""
    a, b = args[0], args[1]
    if func.__name__ == "dot":
        return (a * b).sum(-1)
    return a.unsqueeze(-1) * b.unsqueeze(-2)


def _index_fill(func, args, kwargs):
    """index_fill(x, dim, index, value) of a batched `x`: its dim shifted past the batch dims (the index and value
    are not the elementwise family's operands); a batched index or value, or a 0-d sample, takes the loop."""
    x, rest = args[0], [*args[1:], *(kwargs[k] for k in ("dim", "index", "value")[len(args) - 1:] if k in kwargs)]
    if x.__class__ is not BatchedTensor or not x.dim() or len(rest) != 3 or levels_of(rest):
        return NotImplemented
    out = func(x._value, _shift(rest[0], x.dim(), len(x._levels)), rest[1], rest[2])
    return x if out is x._value else BatchedTensor(out, x._levels)


def _masked_fill(func, args, kwargs):
    """masked_fill(x, mask, value): the value is a 0-d tensor of each sample, not an operand to pad to x's rank."""
    bound = _bind(func, args, kwargs)
    x, mask, value = (bound.arguments[k] for k in bound.signature.parameters)
    levels = levels_of((x, mask, value))
    rank = max(_logical_dim(x), _logical_dim(mask))
    px, pm = physical(x, levels, rank), physical(mask, levels, rank)
    if value.__class__ is not BatchedTensor:
        if isinstance(value, Tensor) and not REVERSE_COPIES.issuperset(levels):
            _loop_warning("masked_fill.Tensor")  # (PyTorch has no rule for a tensor value: it loops and says so)
        return wrap(func(px, pm, value), levels)
    return fallback(func.__name__ + ".Tensor", func, args, kwargs)  # a batched value: PyTorch loops too


def _batch_norm(func, args, kwargs):
    """batch_norm has a batching rule in PyTorch (no performance warning): each sample normalized on its own, as
    the loop computes; training statistics written in place into running ones that are not batched are refused."""
    bound = _bind(func, args, kwargs)
    x, stats = bound.arguments["input"], (bound.arguments.get("running_mean"), bound.arguments.get("running_var"))
    if bound.arguments.get("training", False) and x.__class__ is BatchedTensor and any(s is not None for s in stats):
        vmapped = VMAP_LEVELS.intersection(x._levels)  # (jacrev's and jacfwd's private copies are no batch)
        if any(not vmapped.issubset(getattr(s, "_levels", ())) for s in stats):
            raise RuntimeError(BATCH_NORM_STATS)
    return fallback("batch_norm", func, args, kwargs, warn=False)


BATCH_NORM_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in "
    "place, were not batched.\nIf you are using a module and do not need eval mode, please set "
    "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please see the "
    "functorch website for resources on how to patch your module to work with vmap")


def _type_as(func, args, kwargs):
    """x.type_as(other): x in other's dtype (other is no operand: its shape does not broadcast into x's)."""
    x, other = args[0], args[1] if len(args) > 1 else kwargs["other"]
    return x.to(other.dtype)


RULES = {
    "reshape": _one(_reshape), "view": _one(_view), "flatten": _one(_flatten), "unsqueeze": _one(_unsqueeze),
    "transpose": _one(_transpose), "swapaxes": _one(_transpose), "permute": _one(_permute),
    "movedim": _one(_movedim), "t": _one(_t), "T": _one(_T), "mT": _one(_mT),
    "expand": _one(_expand), "expand_as": _one(lambda v, b, n, other: _expand(v, b, n, _size_of(other))),
    "view_as": _one(lambda v, b, n, other: v.view(b + _size_of(other))),
    "reshape_as": _one(lambda v, b, n, other: v.reshape(b + _size_of(other))),
    "__getitem__": _getitem, "cat": _list_dim, "stack": _list_dim,
    "matmul": _matmul, "mm": _matmul, "mv": _matmul, "linear": _linear,
    "mse_loss": _loss, "l1_loss": _loss, "binary_cross_entropy": _loss, "binary_cross_entropy_with_logits": _loss,
    "nll_loss": _loss, "cross_entropy": _loss,
    "conv2d": _conv, "conv1d": _conv, "max_pool2d": _folded, "max_pool1d": _folded, "avg_pool2d": _folded,
    "avg_pool1d": _folded, "adaptive_avg_pool2d": _folded, "adaptive_avg_pool1d": _folded,
    "index_fill": _index_fill, "index_fill_": _index_fill, "masked_fill": _masked_fill, "masked_fill_": _masked_fill,
    "type_as": _type_as, "bernoulli": _draw_from, "normal": _draw_from, "multinomial": _draw_from,
    "dropout2d": _dropout2d, "batch_norm": _batch_norm,
    "dropout": _dropout, "dot": _dot, "outer": _dot, "empty_like": _like, "full_like": _like, "ones_like": _like,
    "zeros_like": _like, "rand_like": _like, "randn_like": _like, "like": _like,  # (ones/zeros/empty_like's name)
}


# -- BatchedTensor's methods: every op reaches its rule -------------------------------------------------------
def _method(function, name: str):
    def method(self, *args, **kwargs):
        try:
            return run(name, function, (self, *args), kwargs)
        except TypeError as error:
            raise _call_error(error, getattr(Tensor, name, function)) from None

    method.__name__ = method.__qualname__ = name
    return method


def _attach_methods() -> None:
    """BatchedTensor.<name> for every Tensor method and operator of a declared op, each dispatching to the rule."""
    for op in REGISTRY.values():
        if not op.public:
            continue
        if op.method or op.namespace == "Tensor":
            for name in (op.name, *op.aliases):
                setattr(BatchedTensor, name, _method(op.function, op.name))
        if op.inplace is not None:
            for name in (op.name, *op.aliases):
                setattr(BatchedTensor, name + "_", _method(op.inplace, op.name + "_"))
        for name, fn in op.operators.items():
            setattr(BatchedTensor, name, _method(fn, op.name if not name.startswith("__i") else op.name + "_"))
    BatchedTensor.__pos__ = lambda self: self
    BatchedTensor.__abs__ = _method(REGISTRY["abs"].function, "abs")  # (forward-aware, as the other methods)
    for name, fn in (("bernoulli", bernoulli), ("multinomial", multinomial)):  # (methods set outside the registry)
        setattr(BatchedTensor, name, _method(fn, name))
    BatchedTensor.where = lambda self, condition, other: run(
        "where", Tensor.where, (self, condition, other), {})


_attach_methods()
BatchedTensor.__torch_function__ = classmethod(lambda cls, func, types, args=(), kwargs=None: dispatch(
    func, args, kwargs or {}))
BatchedTensor.T = property(lambda self: run("T", None, (self,), {}))
BatchedTensor.mT = property(lambda self: run("mT", None, (self,), {}))

RANDOM_HOOK[0] = draw_in_vmap
