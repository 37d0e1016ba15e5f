"""Ops that pick values elementwise: clamp, maximum, minimum, where, masked_fill."""

from __future__ import annotations

import builtins

import numpy as np

from .._state import GRAD
from .._tensor import Tensor, make
from . import xp
from .inplace import inplace_of
from .operands import as_operand, broadcast_error, kind_name, promoted, result_dtype
from .recording import record, rule
from .registry import Sample, declare


def _in_bounds(x, lo, hi):
    """PyTorch's clamp gradient mask: 1 where min <= x <= max (so clamp(min=0)'(0) = 1)."""
    ok = np.ones(np.shape(x), bool)
    if lo is not None:
        ok &= x >= lo
    if hi is not None:
        ok &= x <= hi
    return ok


def _clamp_min_mask(x, lo, hi):
    """Where the lower bound wins (PyTorch: x < min, and min < max when both bounds are given)."""
    return (x < lo) if hi is None else (x < lo) & (lo < hi)


def _clamp_max_mask(x, lo, hi):
    """Where the upper bound wins (PyTorch: x > max, or max < min when both bounds are given)."""
    return (x > hi) if lo is None else (x > hi) | (hi < lo)


def _pick_weight(mine, other):
    """maximum's gradient: 1 where this input wins, 1/2 on ties (PyTorch splits ties evenly)."""
    return np.where(mine > other, 1.0, np.where(mine == other, 0.5, 0.0)).astype(np.result_type(mine, other))


ClampBackward1 = rule("ClampBackward1", "self", saves="self min max", text="grad_self = grad * (min <= self <= max)",
                      self=lambda grad, self, min, max: grad * _in_bounds(xp.data(self), min, max))
ClampBackward0 = rule(
    "ClampBackward0", "self min max", saves="self min max",
    text="grad_self = grad * (min <= self <= max), grad_min = grad * (self < min), grad_max = grad * (self > max)",
    self=lambda grad, self, min, max: grad * _in_bounds(xp.data(self), xp.data(min), xp.data(max)),
    min=lambda grad, self, min, max: grad * _clamp_min_mask(xp.data(self), xp.data(min), xp.data(max)),
    max=lambda grad, self, min, max: grad * _clamp_max_mask(xp.data(self), xp.data(min), xp.data(max)))
ClampMinBackward0 = rule("ClampMinBackward0", "self", saves="self min", text="grad_self = grad * (self >= min)",
                         self=lambda grad, self, min: grad * _in_bounds(xp.data(self), min, None))
ClampMaxBackward0 = rule("ClampMaxBackward0", "self", saves="self max", text="grad_self = grad * (self <= max)",
                         self=lambda grad, self, max: grad * _in_bounds(xp.data(self), None, max))
ClampMinBackward1 = rule("ClampMinBackward1", "self min", saves="self min",
                         text="grad_self = grad * (self >= min), grad_min = grad * (self < min)",
                         self=lambda grad, self, min: grad * (xp.data(self) >= xp.data(min)),
                         min=lambda grad, self, min: grad * (xp.data(self) < xp.data(min)))
ClampMaxBackward1 = rule("ClampMaxBackward1", "self max", saves="self max",
                         text="grad_self = grad * (self <= max), grad_max = grad * (self > max)",
                         self=lambda grad, self, max: grad * (xp.data(self) <= xp.data(max)),
                         max=lambda grad, self, max: grad * (xp.data(self) > xp.data(max)))
MaximumBackward0 = rule("MaximumBackward0", "self other", saves="self other",
                        text="grad_self = grad * (self > other) (ties: half), grad_other = grad * (other > self)",
                        self=lambda grad, self, other: grad * _pick_weight(xp.data(self), xp.data(other)),
                        other=lambda grad, self, other: grad * _pick_weight(xp.data(other), xp.data(self)))
MinimumBackward0 = rule("MinimumBackward0", "self other", saves="self other",
                        text="grad_self = grad * (self < other) (ties: half), grad_other = grad * (other < self)",
                        self=lambda grad, self, other: grad * _pick_weight(-xp.data(self), -xp.data(other)),
                        other=lambda grad, self, other: grad * _pick_weight(-xp.data(other), -xp.data(self)))
WhereBackward0 = rule("WhereBackward0", "self other", saves="condition",
                      text="grad_self = where(condition, grad, 0), grad_other = where(condition, 0, grad)",
                      self=lambda grad, condition: grad * condition,
                      other=lambda grad, condition: grad * ~condition)
MaskedFillBackward0 = rule("MaskedFillBackward0", "self", saves="mask", text="grad_self = grad * ~mask",
                           self=lambda grad, mask: grad * ~mask)
MaskedFillBackward1 = rule("MaskedFillBackward1", "self value", saves="mask",
                           text="grad_self = grad * ~mask, grad_value = sum(grad * mask)",
                           self=lambda grad, mask: grad * ~mask,
                           value=lambda grad, mask: (grad * mask).sum())


def _recording(*operands) -> bool:
    return GRAD.mode > 0 and builtins.any(isinstance(t, Tensor) and t._requires_grad for t in operands)


def clamp(self, min=None, max=None):
    """Clamp to [min, max]: number bounds record ClampBackward1, tensor bounds ClampBackward0."""
    if min is None and max is None:
        raise RuntimeError("minigrad.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = as_operand(min) if min is not None else None
        hi = as_operand(max) if max is not None else None
        res = self._data
        if lo is not None:
            res = np.maximum(res, lo._data if isinstance(lo, Tensor) else lo)
        if hi is not None:
            res = np.minimum(res, hi._data if isinstance(hi, Tensor) else hi)
        res = np.asarray(res).astype(result_dtype([t for t in (self, lo, hi) if t is not None]), copy=False)
        if _recording(self, lo, hi):
            return record(ClampBackward0, res, (self, lo, hi))
        return make(res)
    res = np.clip(self._data, min, max)
    if res.dtype != self._data.dtype and self._data.dtype.kind != "f":
        res = res.astype(result_dtype([self] + [v for v in (min, max) if v is not None]))
    if self._requires_grad and GRAD.mode > 0:
        return record(ClampBackward1, res, (self,), min=min, max=max)
    return make(np.asarray(res))


def _clamp_one(self, bound, np_fn, name: str, number_node, tensor_node):
    bound = as_operand(bound)
    if isinstance(bound, Tensor):
        try:
            res = np.asarray(np_fn(self._data, bound._data)).astype(result_dtype([self, bound]), copy=False)
        except ValueError:
            raise broadcast_error(self, bound) from None
        if _recording(self, bound):
            return record(tensor_node, res, (self, bound))
        return make(res)
    res = np.asarray(np_fn(self._data, bound))
    if res.dtype != self._data.dtype:
        res = res.astype(result_dtype([self, bound]))
    if self._requires_grad and GRAD.mode > 0:
        return record(number_node, res, (self,), **{name: bound})
    return make(res)


def clamp_min(self, min):
    """max(self, min): ClampMinBackward0 (a number bound) / ClampMinBackward1 (a tensor bound)."""
    return _clamp_one(self, min, np.maximum, "min", ClampMinBackward0, ClampMinBackward1)


def clamp_max(self, max):
    """min(self, max): ClampMaxBackward0 (a number bound) / ClampMaxBackward1 (a tensor bound)."""
    return _clamp_one(self, max, np.minimum, "max", ClampMaxBackward0, ClampMaxBackward1)


def maximum(self, other):
    ad, bd = promoted(self, other)
    try:
        res = np.maximum(ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _recording(self, other):
        return record(MaximumBackward0, res, (self, other))
    return make(res)


def minimum(self, other):
    ad, bd = promoted(self, other)
    try:
        res = np.minimum(ad, bd)
    except ValueError:
        raise broadcast_error(self, other) from None
    if _recording(self, other):
        return record(MinimumBackward0, res, (self, other))
    return make(res)


def where(condition, input, other):
    """input where condition, else other; the condition carries no gradient."""
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{kind_name(cond.dtype)}")
    input, other = as_operand(input), as_operand(other)
    ad, bd = promoted(input, other)
    res = np.where(cond, ad, bd)
    if _recording(input, other):
        return record(WhereBackward0, res, (input, other), condition=cond)
    return make(res)


def masked_fill(self, mask, value):
    """value where mask, else self."""
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_kind_word(m.dtype)}")
    value = as_operand(value)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    v = value._data if isinstance(value, Tensor) else value
    try:
        res = np.where(m, np.asarray(v, self._data.dtype), self._data)
    except ValueError:
        raise broadcast_error(self, make(m)) from None
    if res.shape != self._data.shape:
        raise RuntimeError(f"The size of tensor a ({self._data.shape[-1]}) must match the size of tensor b "
                           f"({m.shape[-1]}) at non-singleton dimension {len(res.shape) - 1}")
    if isinstance(value, Tensor) and value._requires_grad and GRAD.mode > 0:
        return record(MaskedFillBackward1, res, (self, value), mask=m)
    if self._requires_grad and GRAD.mode > 0:
        return record(MaskedFillBackward0, res, (self,), mask=m)
    return make(res)


def _kind_word(d: np.dtype) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}.get(d.name, d.name)


_ONE = Sample((((3, 4), "real"),))
declare("clamp", clamp, aliases=("clip",), inplace=inplace_of(clamp, "clamp_"), nodes=(ClampBackward0, ClampBackward1),
        samples=(Sample((((3, 4), "real"),), (-0.5, 0.5)), Sample((((3, 4), "real"),), kwargs={"min": 0.1}),
                 Sample((((3, 4), "real"), ((3, 4), "real"), ((4,), "real")))))
declare("clamp_min", clamp_min, inplace=inplace_of(clamp_min, "clamp_min_"),
        nodes=(ClampMinBackward0, ClampMinBackward1), samples=(Sample((((3, 4), "real"),), (0.1,)),))
declare("clamp_max", clamp_max, inplace=inplace_of(clamp_max, "clamp_max_"),
        nodes=(ClampMaxBackward0, ClampMaxBackward1), samples=(Sample((((3, 4), "real"),), (0.1,)),))
declare("maximum", maximum, nodes=(MaximumBackward0,),
        samples=(Sample((((3, 4), "distinct"), ((3, 4), "distinct"))),))
declare("minimum", minimum, nodes=(MinimumBackward0,),
        samples=(Sample((((3, 4), "distinct"), ((3, 4), "distinct"))),))
declare("where", where, method=False, nodes=(WhereBackward0,),
        samples=(Sample((((3, 4), "bool"), ((3, 4), "real"), ((3, 4), "real"))),))
declare("masked_fill", masked_fill, inplace=inplace_of(masked_fill, "masked_fill_"),
        nodes=(MaskedFillBackward0, MaskedFillBackward1), samples=(Sample((((3, 4), "real"), ((3, 4), "bool")),
                                                                          (0.5,)),))
