"""Ops that pick values elementwise: clamp, maximum, minimum, where, masked_fill."""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from .. import _dtypes
from .._layout import laid_out
from .._stacklevel import user_stacklevel
from .._state import GRAD
from .._tensor import Tensor, _wrap_dim, make
from . import inplace, xp
from .elementwise import binary
from .inplace import inplace_of
from .operands import as_operand, broadcast_error, kind_name, promoted, result_dtype
from .recording import SavedArg, exact_zeros, record, rule
from .registry import Sample, declare


def _in_bounds(x, lo, hi):
    """Where clamp passes the gradient on: min <= x <= max (so clamp(min=0)'(0) = 1, and never at NaN)."""
    if lo is None:
        return x <= hi
    if hi is None:
        return x >= lo
    return _combined_in_place(x >= lo, x <= hi, np.logical_and)


def _clamp_min_mask(x, lo, hi):
    """Where the lower bound wins (PyTorch: x < min, and min < max when both bounds are given)."""
    return (x < lo) if hi is None else _combined_in_place(x < lo, lo < hi, np.logical_and)


def _clamp_max_mask(x, lo, hi):
    """Where the upper bound wins (PyTorch: x > max, or max < min when both bounds are given)."""
    return (x > hi) if lo is None else _combined_in_place(x > hi, hi < lo, np.logical_or)


def _combined_in_place(a, b, how):
    """`how(a, b)` as PyTorch's clamp backward computes it, in place into `a` (`logical_and_`): when `b` would
    broadcast `a` larger (bounds shaped unlike self), it refuses as an in-place op does."""
    a, b = np.asarray(a), np.asarray(b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    if shape != a.shape:
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast shape {list(shape)}")
    return how(a, b)


def _pick_grad(grad, mine, other, loses):
    """maximum's (minimum's) gradient for `mine`: grad where it wins, grad / 2 on ties, 0 where it `loses`
    (PyTorch's `where(self == other, grad / 2, grad).masked_fill_(self < other, 0)`: with a NaN operand,
    neither ties nor loses, so both operands get the gradient)."""
    tie = mine == other
    if xp.is_t(grad):  # under create_graph, PyTorch's formula node for node (WhereBackward0, MaskedFillBackward0)
        return xp.masked_fill(xp.where(tie, grad / 2, grad), loses, 0.0)
    if tie.any():
        grad = xp.where(tie, grad / 2, grad)
    return xp.zero_where(loses, grad)


def _masked_zero(grad, mask):
    """`grad.masked_fill(mask, 0)`, as PyTorch's formula writes it (MaskedFillBackward0 under create_graph)."""
    return xp.masked_fill(grad, mask, 0.0) if xp.is_t(grad) else xp.zero_where(mask, grad)


ClampBackward1 = rule("ClampBackward1", "self", saves="self min max", text="grad_self = grad where min <= self <= max",
                      forward="derived",
                      self=lambda grad, self, min, max: xp.keep_where(_in_bounds(xp.data(self), min, max), grad))
def _clamp_tangent(self_t, min_t, max_t, self, min, max):
    """PyTorch's clamp_jvp: the tangent of whichever of self, min, max the value is (min where self < min, self at a
    tie); not the backward rule's masks, which refuse bounds that broadcast self larger (as PyTorch's do)."""
    s = np.asarray(xp.data(self))
    lo, hi = (None if b is None else np.asarray(xp.data(b)) for b in (min, max))
    if lo is not None and hi is not None:
        return xp.where(lo > hi, max_t, xp.where(s < lo, min_t, xp.where(s > hi, max_t, self_t)))
    if lo is not None:
        return xp.where(s > lo, self_t, min_t)
    return self_t if hi is None else xp.where(s < hi, self_t, max_t)


ClampBackward0 = rule(
    "ClampBackward0", "self min max", saves="self min max",
    forward=lambda self_t, min_t, max_t, self, min, max: _clamp_tangent(self_t, min_t, max_t, self, min, max),
    text="grad_self = grad where min <= self <= max, grad_min = grad where self < min, "
         "grad_max = grad where self > max",
    self=lambda grad, self, min, max: xp.keep_where(_in_bounds(xp.data(self), xp.data(min), xp.data(max)), grad),
    min=lambda grad, self, min, max:
    xp.keep_where(_clamp_min_mask(xp.data(self), xp.data(min), xp.data(max)), grad),
    max=lambda grad, self, min, max:
    xp.keep_where(_clamp_max_mask(xp.data(self), xp.data(min), xp.data(max)), grad))
ClampMinBackward0 = rule("ClampMinBackward0", "self", saves="self min", text="grad_self = grad where self >= min",
                         forward="derived",
                         self=lambda grad, self, min: xp.keep_where(xp.data(self) >= min, grad))
ClampMaxBackward0 = rule("ClampMaxBackward0", "self", saves="self max", text="grad_self = grad where self <= max",
                         forward="derived",
                         self=lambda grad, self, max: xp.keep_where(xp.data(self) <= max, grad))
# PyTorch's forward formulas pick one tangent (a NaN compares false: the bound's), where the backward rules' masks
# sum both (0 at NaN, +0. for a -0. tangent)
ClampMinBackward1 = rule("ClampMinBackward1", "self min", saves="self min",
                         forward=lambda self_t, min_t, self, min: xp.where(self >= min, self_t, min_t),
                         text="grad_self = grad where self >= min, grad_min = grad where self < min",
                         self=lambda grad, self, min: xp.keep_where(xp.data(self) >= xp.data(min), grad),
                         min=lambda grad, self, min: xp.keep_where(xp.data(self) < xp.data(min), grad))
ClampMaxBackward1 = rule("ClampMaxBackward1", "self max", saves="self max",
                         forward=lambda self_t, max_t, self, max: xp.where(self <= max, self_t, max_t),
                         text="grad_self = grad where self <= max, grad_max = grad where self > max",
                         self=lambda grad, self, max: xp.keep_where(xp.data(self) <= xp.data(max), grad),
                         max=lambda grad, self, max: xp.keep_where(xp.data(self) > xp.data(max), grad))
WhereBackward0 = rule("WhereBackward0", "self other", saves="condition", tensor_args="condition",
                      text="grad_self = where(condition, grad, 0), grad_other = where(condition, 0, grad)",
                      forward=lambda self_t, other_t, condition: xp.where(condition, self_t, other_t),  # (one pick)
                      self=lambda grad, condition: xp.keep_where(condition, grad),
                      other=lambda grad, condition: xp.zero_where(condition, grad))
MaskedFillBackward0 = rule("MaskedFillBackward0", "self", saves="mask", tensor_args="mask",
                           forward="derived", text="grad_self = grad.masked_fill(mask, 0)",
                           self=lambda grad, mask: _masked_zero(grad, mask))
MaskedFillBackward1 = rule("MaskedFillBackward1", "self value", saves="mask", tensor_args="mask",
                           text="grad_self = grad.masked_fill(mask, 0), grad_value = sum(grad where mask)",
                           forward="linear",
                           self=lambda grad, mask: _masked_zero(grad, mask),
                           value=lambda grad, mask: xp.keep_where(mask, grad).sum())


def _recording(*operands) -> bool:
    return GRAD.mode > 0 and builtins.any(isinstance(t, Tensor) and t._requires_grad for t in operands)


def pick_max(a, b):
    """PyTorch's maximum of two arrays (or numbers): NaN if either is NaN, else the larger, and `a` on ties, so
    `maximum(-0., 0.)` is -0. (NumPy's may give either zero)."""
    takes_b = a < b
    if np.asarray(b).dtype.kind == "f":
        takes_b = takes_b | (b != b)
    return np.where(takes_b, b, a)


def pick_min(a, b):
    """PyTorch's minimum: NaN if either is NaN, else the smaller, and `a` on ties."""
    takes_b = a > b
    if np.asarray(b).dtype.kind == "f":
        takes_b = takes_b | (b != b)
    return np.where(takes_b, b, a)


def _clamp_array(x, lo, hi):
    """clamp on arrays, as PyTorch computes it: min(max(x, lo), hi)."""
    if lo is not None:
        x = pick_max(x, lo)
    if hi is not None:
        x = pick_min(x, hi)
    return np.asarray(x)


def _number(bound):
    """A clamp bound as PyTorch's argument parser reads it: a 0-d tensor passes for a number."""
    return bound._data.item() if isinstance(bound, Tensor) and bound._data.ndim == 0 else bound


def clamp(self, min=None, max=None):
    """Clamp to [min, max]: number bounds record ClampBackward1, tensor bounds ClampBackward0."""
    if min is None and max is None:
        raise RuntimeError("minigrad.clamp: At least one of 'min' or 'max' must not be None")
    min, max = (None if v is None else as_operand(v) for v in (min, max))
    if isinstance(min, Tensor) != isinstance(max, Tensor) and min is not None and max is not None:
        min, max = _number(min), _number(max)  # clamp(0-d tensor, number) is clamp(number, number)
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (min, max))
            raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), but expected one "
                            "of:\n * (Tensor min = None, Tensor max = None)\n * (Number min = None, Number max = None)")
    operands = [self] + [v for v in (min, max) if v is not None]
    rt = result_dtype([as_operand(v) for v in operands])
    x = self._data.astype(rt, copy=False)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = as_operand(min) if min is not None else None
        hi = as_operand(max) if max is not None else None
        if rt.kind == "b" and lo is not None and hi is not None:
            raise NotImplementedError("\"clamp_cpu\" not implemented for 'Bool'")
        try:
            res = _clamp_array(x, None if lo is None else lo._data.astype(rt, copy=False),
                               None if hi is None else hi._data.astype(rt, copy=False))
        except ValueError:
            shape = self._data.shape  # PyTorch broadcasts the operands in turn: the first that does not fit is named
            for v in (lo, hi):
                if v is not None:
                    try:
                        shape = np.broadcast_shapes(shape, v._data.shape)
                    except ValueError:
                        raise broadcast_error(np.broadcast_to(False, shape), v) from None
            raise
        res = laid_out(res, self, lo, hi)
        if _recording(self, lo, hi):
            return record(ClampBackward0, res, (self, lo, hi))
        return make(res)
    res = _clamp_array(x, *(None if v is None else _dtypes.checked(v, rt) for v in (min, max)))
    if self._requires_grad and GRAD.mode > 0:
        return record(ClampBackward1, res, (self,), min=min, max=max)
    return make(res)


def _clamp_one(self, bound, pick, name: str, number_node, tensor_node):
    bound = as_operand(bound)
    rt = result_dtype([self, bound])
    if isinstance(bound, Tensor):
        try:
            res = np.asarray(pick(self._data.astype(rt, copy=False), bound._data.astype(rt, copy=False)))
        except ValueError:
            raise broadcast_error(self, bound) from None
        res = laid_out(res, self, bound)
        if _recording(self, bound):
            return record(tensor_node, res, (self, bound))
        return make(res)
    res = np.asarray(pick(self._data.astype(rt, copy=False), bound))
    if self._requires_grad and GRAD.mode > 0:
        return record(number_node, res, (self,), **{name: bound})
    return make(res)


def clamp_min(self, min):
    """max(self, min): ClampMinBackward0 (a number bound) / ClampMinBackward1 (a tensor bound)."""
    return _clamp_one(self, min, pick_max, "min", ClampMinBackward0, ClampMinBackward1)


def clamp_max(self, max):
    """min(self, max): ClampMaxBackward0 (a number bound) / ClampMaxBackward1 (a tensor bound)."""
    return _clamp_one(self, max, pick_min, "max", ClampMaxBackward0, ClampMaxBackward1)


# PyTorch's forward formula, not the derived one: at NaN it takes other's tangent (where the backward rule passes
# the gradient to both), and an absent tangent's term drops out exactly (minimum(d, zeros) picking the zeros: 0 · ḋ,
# so -0. where ḋ < 0)
maximum = binary("maximum", pick_max, "MaximumBackward0", integers="keep", inplace=False,
                 domains=("distinct", "distinct"),
                 forward=exact_zeros(lambda self_t, other_t, self, other:
                                     other_t + xp.where(self == other, 0.5, self > other) * (self_t - other_t)),
                 text="grad_self = grad where self > other (ties: half), grad_other = grad where other > self",
                 self=lambda grad, self, other: _pick_grad(grad, xp.data(self), xp.data(other),
                                                           xp.data(self) < xp.data(other)),
                 other=lambda grad, self, other: _pick_grad(grad, xp.data(other), xp.data(self),
                                                            xp.data(self) > xp.data(other)))
minimum = binary("minimum", pick_min, "MinimumBackward0", integers="keep", inplace=False,
                 domains=("distinct", "distinct"),
                 forward=exact_zeros(lambda self_t, other_t, self, other:
                                     other_t + xp.where(self == other, 0.5, self < other) * (self_t - other_t)),
                 text="grad_self = grad where self < other (ties: half), grad_other = grad where other < self",
                 self=lambda grad, self, other: _pick_grad(grad, xp.data(self), xp.data(other),
                                                           xp.data(self) > xp.data(other)),
                 other=lambda grad, self, other: _pick_grad(grad, xp.data(other), xp.data(self),
                                                            xp.data(self) < xp.data(other)))


def where(condition, input, other):
    """input where condition, else other; the condition carries no gradient."""
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{kind_name(cond.dtype)}")
    input, other = as_operand(input), as_operand(other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # two numbers: a result of cond's shape
        rt = result_dtype((input, other))
        return make(np.where(cond, np.asarray(input, rt), np.asarray(other, rt)))
    ad, bd = promoted(input, other)
    _check_broadcast(cond, ad, bd)
    rt = np.result_type(ad, bd)
    res = laid_out(np.where(cond, _dtypes.checked(ad, rt), _dtypes.checked(bd, rt)), cond, input, other)
    if _recording(input, other):
        return record(WhereBackward0, res, (input, other), condition=SavedArg(cond, (condition,)))
    return make(res)


def _check_broadcast(*arrays) -> None:
    """PyTorch's message for shapes that do not broadcast (before NumPy's ValueError): the shape so far (a) against
    the next operand's (b), in order."""
    shape: tuple = ()
    for a in arrays:
        try:
            shape = np.broadcast_shapes(shape, np.shape(a))
        except ValueError:
            raise broadcast_error(np.broadcast_to(np.empty(()), shape), a) from None


def masked_fill(self, mask, value):
    """value where mask, else self."""
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtypes.CPP_NAMES[m.dtype.name]}")
    value = as_operand(value)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    v = value._data if isinstance(value, Tensor) else _dtypes.checked(value, self._data.dtype)
    try:
        res = np.where(m, np.asarray(v, self._data.dtype), self._data)  # the mask may broadcast self larger
    except ValueError:
        raise broadcast_error(make(m), self) from None
    if not res.flags.c_contiguous:  # PyTorch fills a contiguous clone of (expanded) self, whatever its layout
        res = np.ascontiguousarray(res)
    if isinstance(value, Tensor) and _recording(self, value):  # a 0-d tensor value: MaskedFillBackward1
        return record(MaskedFillBackward1, res, (self, value), mask=SavedArg(m, (mask,)))
    if self._requires_grad and GRAD.mode > 0:
        return record(MaskedFillBackward0, res, (self,), mask=SavedArg(m, (mask,)))
    return make(res)


def masked_fill_(self, mask, value):
    """In place: the same, with PyTorch's in-place message when the mask does not broadcast."""
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    try:
        np.broadcast_shapes(self._data.shape, m.shape)
    except ValueError:
        raise broadcast_error(self, make(m)) from None
    if not inplace.internal_overlap(self._data):
        return _masked_fill_inplace(self, mask, value)
    # an expanded tensor: after autograd's check, PyTorch warns, then fills the shared memory (an element
    # shared by several places takes the value when any of them is masked)
    recording = _recording(self, value)
    inplace.check_inplace(self, recording)
    warnings.warn(inplace.MASKED_FILL_EXPANDED, UserWarning, stacklevel=user_stacklevel())
    m = np.broadcast_to(m, self._data.shape)
    if not recording:
        return inplace.fill_where(self, m, value)
    shared = tuple(d for d, (n, st) in enumerate(zip(self._data.shape, self._data.strides)) if n > 1 and st == 0)
    m = np.broadcast_to(m.any(axis=shared, keepdims=True), m.shape)
    return inplace.run_inplace(self, lambda src: masked_fill(src, m, value), (value,), overlap_ok=True)


_masked_fill_inplace = inplace_of(masked_fill, "masked_fill_")




def _clamp_inplace(inplace):
    """clamp_ (clip_): PyTorch's check of Python-number bounds against an integer or bool tensor comes first,
    with its own wording of the dtype."""
    def clamp_(self, min=None, max=None):
        kind = self._data.dtype.kind
        bounds = (min, max)
        if kind in "iub" and builtins.any(isinstance(b, builtins.float) for b in bounds):
            raise RuntimeError("result type Float can't be cast to the desired output type "
                               f"{_dtypes.CPP_NAMES[self._data.dtype.name]}")
        if kind == "b" and builtins.any(isinstance(b, builtins.int) and not isinstance(b, builtins.bool)
                                        for b in bounds):
            raise RuntimeError("result type Long can't be cast to the desired output type bool")
        return inplace(self, min, max)

    return clamp_


_ONE = Sample((((3, 4), "real"),))
declare("clamp", clamp, aliases=("clip",), inplace=_clamp_inplace(inplace_of(clamp, "clamp_")),
        nodes=(ClampBackward0, ClampBackward1),
        samples=(Sample((((3, 4), "real"),), (-0.5, 0.5)), Sample((((3, 4), "real"),), kwargs={"min": 0.1}),
                 Sample((((3, 4), "real"), ((3, 4), "real"), ((4,), "real")))))
declare("clamp_min", clamp_min, inplace=inplace_of(clamp_min, "clamp_min_"),
        nodes=(ClampMinBackward0, ClampMinBackward1), samples=(Sample((((3, 4), "real"),), (0.1,)),))
declare("clamp_max", clamp_max, inplace=inplace_of(clamp_max, "clamp_max_"),
        nodes=(ClampMaxBackward0, ClampMaxBackward1), samples=(Sample((((3, 4), "real"),), (0.1,)),))
declare("where", where, method=False, nodes=(WhereBackward0,),
        samples=(Sample((((3, 4), "bool"), ((3, 4), "real"), ((3, 4), "real"))),))
declare("masked_fill", masked_fill, inplace=masked_fill_,
        nodes=(MaskedFillBackward0, MaskedFillBackward1), samples=(Sample((((3, 4), "real"), ((3, 4), "bool")),
                                                                          (0.5,)),))


# -- nonzero, argwhere, index_fill -----------------------------------------------------------------------------
def nonzero(self: Tensor, *, as_tuple: bool = False):
    """The indices of the non-zero elements: an (n, ndim) int64 tensor, or with `as_tuple` one 1-D tensor per
    dim (a 0-d input counts as one element, as PyTorch's)."""
    d = self._data
    if d.ndim == 0:
        n = int(d != 0)
        return (make(np.zeros(n, np.int64)),) if as_tuple else make(np.zeros((n, 0), np.int64))
    idx = tuple(i.astype(np.int64) for i in np.nonzero(d))
    return tuple(make(i) for i in idx) if as_tuple else make(np.stack(idx, axis=1))


def argwhere(self: Tensor) -> Tensor:
    """nonzero(self): the (n, ndim) indices of the non-zero elements."""
    return nonzero(self)


IndexFillBackward0 = rule("IndexFillBackward0", "self", saves="dim index", tensor_args="index",
                          text="grad_self = grad with the filled slices set to 0",
                          forward=lambda self_t, dim, index: _fill_slices(self_t, dim, index, 0),
                          self=lambda grad, dim, index: _fill_slices(grad, dim, index, 0))
IndexFillBackward1 = rule("IndexFillBackward1", "self value", saves="dim index", tensor_args="index",
                          text="grad_self = grad with the filled slices set to 0, grad_value = sum of those slices",
                          forward=lambda self_t, value_t, dim, index: _fill_slices(self_t, dim, index, value_t),
                          self=lambda grad, dim, index: _fill_slices(grad, dim, index, 0),
                          value=lambda grad, dim, index: _filled_sum(grad, dim, index))


def _fill_slices(x, dim: int, index: np.ndarray, value):
    """x (an array or a Tensor) with its slices at `index` along `dim` set to `value`."""
    if xp.is_t(x):
        return index_fill(x, dim, make(index), value)
    out = np.array(x, copy=True)
    out[(slice(None),) * dim + (index,)] = value
    return out


def _filled_sum(grad, dim: int, index: np.ndarray):
    """The sum of grad's slices at the (distinct) positions `index` along `dim`: what the fill value received."""
    index = np.unique(index)
    if xp.is_t(grad):
        return (grad if grad.ndim else grad.reshape(1)).index_select(dim, make(index)).sum()
    return np.take(grad.reshape(grad.shape or (1,)), index, axis=dim).sum()


def index_fill(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of `self` whose slices along `dim` at the positions `index` are all `value` (a number or a 0-d
    tensor, which then gets the sum of those slices' gradients)."""
    idx = index._data
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = _wrap_dim(dim, max(self._data.ndim, 1))
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    value = as_operand(value)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    n = self._data.shape[d] if self._data.ndim else 1
    flat = idx.reshape(-1)
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise IndexError(f"index {bad[0]} is out of bounds for dimension {d} with size {n}")
    flat = flat % max(n, 1)
    v = value._data if isinstance(value, Tensor) else _dtypes.checked(value, self._data.dtype)
    data = self._data if self._data.ndim else self._data.reshape(1)
    res = _fill_slices(data, d, flat, np.asarray(v).astype(self._data.dtype)).reshape(self._data.shape)
    saved = {"dim": d, "index": SavedArg(flat, (index,))}
    if isinstance(value, Tensor) and _recording(self, value):
        return record(IndexFillBackward1, res, (self, value), **saved)
    if self._requires_grad and GRAD.mode > 0:
        return record(IndexFillBackward0, res, (self,), **saved)
    return make(res)


_FILL = Sample((((3, 4), "real"), ((2,), "index")), kwargs={"dim": 1, "value": 0.5}, keywords=("index",))
declare("nonzero", nonzero, samples=(Sample((((3, 4), "bool"),)), Sample((((3, 4), "bool"),),
                                                                       kwargs={"as_tuple": True})),
        differentiable=False)
declare("argwhere", argwhere, samples=(Sample((((3, 4), "bool"),)),), differentiable=False)
declare("index_fill", index_fill, inplace=inplace_of(index_fill, "index_fill_"),
        nodes=(IndexFillBackward0, IndexFillBackward1), samples=(_FILL,))
