"""Comparisons, logical and bitwise ops, and tests on values: bool (or integer) results, never differentiable."""

from __future__ import annotations

import builtins

import numpy as np

from .._layout import laid_out
from .._state import GRAD
from .._tensor import Tensor, make
from ..autograd.graph import check_usable
from .operands import as_operand, broadcast_error, kind_name, promoted
from .registry import Sample, declare

_PAIRS = (Sample((((3, 4), "real"), ((3, 4), "real"))), Sample((((3, 1), "real"), ((4,), "real"))),
          Sample((((3,), "real"),), (0.5,)))


def _compare(np_fn, name: str, operator: str):
    def op(self, other):
        other = as_operand(other)
        ad, bd = promoted(self, other)
        try:
            return make(laid_out(np.asarray(np_fn(ad, bd)), self, other))
        except ValueError:
            raise broadcast_error(self, other) from None

    op.__name__ = op.__qualname__ = name
    declare(name, op, operators={operator: op}, samples=_PAIRS, differentiable=False)
    return op


eq = _compare(np.equal, "eq", "__eq__")
ne = _compare(np.not_equal, "ne", "__ne__")
lt = _compare(np.less, "lt", "__lt__")
le = _compare(np.less_equal, "le", "__le__")
gt = _compare(np.greater, "gt", "__gt__")
ge = _compare(np.greater_equal, "ge", "__ge__")


def _bitwise(np_fn, name: str, symbol: str, operator: str):
    def op(self, other):
        other = as_operand(other)
        ad, bd = promoted(self, other)
        if np.asarray(ad).dtype.kind == "f" or np.asarray(bd).dtype.kind == "f":
            raise TypeError(f"unsupported operand type(s) for {symbol}: float tensors (use a bool or integer "
                            "tensor)")
        return make(laid_out(np.asarray(np_fn(ad, bd)), self, other))

    op.__name__ = op.__qualname__ = name
    declare(name, op, operators={f"__{operator}__": op, f"__r{operator}__": op},
            samples=(Sample((((4,), "bool"), ((4,), "bool"))),), differentiable=False)
    return op


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and", "&", "and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or", "|", "or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor", "^", "xor")


def bitwise_not(self):
    if self._data.dtype.kind == "f":  # PyTorch's kernel has no float version
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{kind_name(self._data.dtype)}'")
    return make(np.invert(self._data))


def _invert(self):
    """`~t`: Python's operator refuses a float tensor before the kernel is reached, with its own TypeError."""
    if self._data.dtype.kind == "f":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def logical_not(self):
    return make(np.logical_not(self._data))


def logical_and(self, other):
    other = as_operand(other)
    return make(laid_out(np.logical_and(self._data, other._data), self, other))


def logical_or(self, other):
    other = as_operand(other)
    return make(laid_out(np.logical_or(self._data, other._data), self, other))


def _same_dtype(self: Tensor, other) -> None:
    """isclose and allclose compare tensors of one dtype only (PyTorch's check)."""
    if isinstance(other, Tensor) and other._data.dtype != self._data.dtype:
        raise RuntimeError(f"{kind_name(self._data.dtype)} did not match {kind_name(other._data.dtype)}")


def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    _same_dtype(self, other)
    if GRAD.mode > 0:  # PyTorch's isclose is made of differentiable ops (self - other): they read each grad_fn
        for t in (self, other):
            if isinstance(t, Tensor) and t._requires_grad:
                check_usable(t)
    other = as_operand(other)
    ad, bd = promoted(self, other)
    out = make(laid_out(np.asarray(np.isclose(ad, bd, rtol=rtol, atol=atol, equal_nan=equal_nan)), self, other))
    out._bump_version()  # PyTorch builds the result with in-place ops: its version is 1
    return out


def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    _same_dtype(self, other)
    ad, bd = promoted(self, as_operand(other))
    try:
        return builtins.bool(np.allclose(ad, bd, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:
        raise broadcast_error(self, other) from None


def equal(self, other) -> bool:
    return self._data.shape == other._data.shape and builtins.bool(np.array_equal(self._data, other._data))


def isnan(self):
    return make(np.isnan(self._data))


def isinf(self):
    return make(np.isinf(self._data))


def isfinite(self):
    return make(np.isfinite(self._data))


def all(self, dim=None, keepdim: bool = False):
    return make(np.asarray(np.all(self._data, axis=dim, keepdims=keepdim)))


def any(self, dim=None, keepdim: bool = False):
    return make(np.asarray(np.any(self._data, axis=dim, keepdims=keepdim)))


_ONE = (Sample((((3, 4), "real"),)),)
declare("bitwise_not", bitwise_not, operators={"__invert__": _invert}, samples=(Sample((((4,), "bool"),)),),
        differentiable=False)
declare("logical_not", logical_not, samples=(Sample((((4,), "bool"),)),), differentiable=False)
declare("logical_and", logical_and, samples=(Sample((((4,), "bool"), ((4,), "bool"))),), differentiable=False)
declare("logical_or", logical_or, samples=(Sample((((4,), "bool"), ((4,), "bool"))),), differentiable=False)
declare("isclose", isclose, samples=_PAIRS[:2], differentiable=False)
declare("allclose", allclose, samples=_PAIRS[:2], differentiable=False)
declare("equal", equal, samples=_PAIRS[:1], differentiable=False)
declare("isnan", isnan, samples=_ONE, differentiable=False)
declare("isinf", isinf, samples=_ONE, differentiable=False)
declare("isfinite", isfinite, samples=_ONE, differentiable=False)
declare("all", all, samples=(Sample((((3, 4), "bool"),)), Sample((((3, 4), "bool"),), (1,))), differentiable=False)
declare("any", any, samples=(Sample((((3, 4), "bool"),)), Sample((((3, 4), "bool"),), (0,))), differentiable=False)
